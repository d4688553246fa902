//===- Host.cpp - The host CPU target's time of a GEMM tile ---------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Per block (one pool thread's task), for each of its k-steps: the copy of
// the step's A and B tiles into the block's buffers, then each GPU thread
// in turn, whose accumulator rows live in memory between turns (the thread
// loop is outside the step's products), computing k-step x thread M
// vector multiply-adds of thread N f32 lanes each. Then the output tile's
// stores. The blocks run in rounds of the pool's threads; split-K adds its
// sum kernel; each kernel is a launch.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Host.h"

#include "Waves.h"

#include <limits>

using namespace dyncc::cost;
using namespace dyncc::cost::detail;

bool dyncc::cost::isHostModelled(const GemmTile &tile) {
  return !tile.tensorCores && tile.blockM > 0 && tile.blockN > 0 &&
         tile.threadM > 0 && tile.threadN > 0 && tile.kStep > 0 &&
         tile.splitK > 0;
}

HostPrediction dyncc::cost::predictHostGemm(const GemmTile &tile,
                                            const GemmProblem &problem,
                                            const HostDevice &host) {
  HostPrediction p;
  if (!isHostModelled(tile)) {
    p.seconds = std::numeric_limits<double>::infinity();
    return p;
  }
  p.blocks = problem.batch * ceilDiv(problem.m, tile.blockM) *
             ceilDiv(problem.n, tile.blockN) * tile.splitK;
  int64_t threads = std::max<int64_t>(1, host.threads);
  p.rounds = ceilDiv(p.blocks, threads);
  int64_t steps =
      ceilDiv(ceilDiv(problem.k, tile.splitK), tile.kStep) * problem.products;
  int64_t turns = (tile.blockM / tile.threadM) * (tile.blockN / tile.threadN);
  // The accumulator is f32 whatever the operands.
  int64_t vectors =
      ceilDiv(tile.threadN * 4, std::max<int64_t>(4, host.vectorBytes));
  double turn =
      host.threadStepSeconds +
      double(tile.kStep * tile.threadM * vectors) * host.vectorOpSeconds;
  double copy = double((tile.blockM + tile.blockN) * tile.kStep) *
                host.copyElementSeconds;
  p.blockSeconds = double(steps) * (double(turns) * turn + copy) +
                   double(tile.blockM * tile.blockN * problem.products) *
                       host.storeElementSeconds;
  p.seconds = double(p.rounds) * p.blockSeconds + host.launchSeconds;
  if (tile.splitK > 1)
    p.seconds += double(tile.splitK) * double(problem.batch) *
                     double(problem.m) * double(problem.n) *
                     host.sumElementSeconds / double(threads) +
                 host.launchSeconds;
  return p;
}
