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

HostDevice dyncc::cost::getFittedHostDevice(const std::string &isa) {
  // Fitted like the portable build's defaults (docs/CostModel.md, "The
  // host CPU target"): the same BERT-base groups and bindings, measured
  // under DYNCC_HOST_ISA on an artifact with every build. LLVM vectorizes
  // both levels' thread tiles in 32-byte vectors (x86-64-v4 prefers
  // 256-bit vectors to 512-bit ones). Split-K's sum keeps the portable
  // build's cost: a read of memory, which the fit left at zero (its
  // samples do not tell it from the launches).
  HostDevice host;
  if (isa == "x86-64-v4") {
    host.vectorBytes = 32;
    host.threadStepSeconds = 2.209e-9;
    host.vectorOpSeconds = 0.3407e-9;
    host.copyElementSeconds = 0.2688e-9;
    host.storeElementSeconds = 0.6236e-9;
    host.launchSeconds = 9.518e-6;
  } else if (isa == "x86-64-v3") {
    host.vectorBytes = 32;
    host.threadStepSeconds = 1.764e-9;
    host.vectorOpSeconds = 0.3456e-9;
    host.copyElementSeconds = 0.3406e-9;
    host.storeElementSeconds = 0.5389e-9;
    host.launchSeconds = 8.289e-6;
  }
  return host;
}
