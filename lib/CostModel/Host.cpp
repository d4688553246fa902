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
// loop is outside the step's products). Per k, a turn broadcasts thread M
// elements of A, loads a thread row of B in vectors as wide as the row (up
// to the build's widest) and multiplies-and-adds each row's vectors: the
// instructions and the lanes they compute cost apart, since a wider
// vector is one instruction but not one lane's time. Vectors beyond the
// build's registers spill; the part of a k-step's working set (its A and
// B tiles, and the broadcasts LLVM keeps for a thread row's turns) beyond
// L1 makes the loads slower. Then the output tile's stores. The blocks run
// in rounds of the pool's threads; split-K adds its sum kernel; each kernel
// is a launch.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Host.h"

#include "Waves.h"

#include <algorithm>
#include <limits>

using namespace dyncc::cost;
using namespace dyncc::cost::detail;

bool dyncc::cost::isHostModelled(const GemmTile &tile) {
  return !tile.tensorCores && tile.blockM > 0 && tile.blockN > 0 &&
         tile.threadM > 0 && tile.threadN > 0 && tile.kStep > 0 &&
         tile.splitK > 0;
}

HostThreadTile dyncc::cost::getHostThreadTile(const GemmTile &tile,
                                              const HostDevice &host) {
  HostThreadTile t;
  // The accumulator is f32 whatever the operands.
  t.rowVectors =
      ceilDiv(tile.threadN * 4, std::max<int64_t>(16, host.vectorBytes));
  int64_t needed = tile.threadM * t.rowVectors + t.rowVectors + 1;
  t.spilled = std::max<int64_t>(0, needed - host.vectorRegisters);
  return t;
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
  HostThreadTile thread = getHostThreadTile(tile, host);
  int64_t vectors = tile.threadM * thread.rowVectors;
  int64_t loads = tile.threadM + thread.rowVectors;
  // A k-step's working set: its A and B tiles (f32 on the host) and a
  // thread row's broadcasts, each as wide as the row's vectors.
  int64_t rowBytes = std::min(std::max<int64_t>(16, host.vectorBytes),
                              std::max<int64_t>(16, tile.threadN * 4));
  double working = double((tile.blockM + tile.blockN) * tile.kStep * 4 +
                          tile.threadM * tile.kStep * rowBytes);
  double beyondL1 = std::max(0.0, working - double(host.l1Bytes)) / working;
  double perK =
      double(vectors) * host.vectorOpSeconds +
      double(tile.threadM * ceilDiv(tile.threadN, 4)) * host.laneOpSeconds +
      double(tile.threadM) * host.broadcastSeconds +
      double(thread.rowVectors) * host.rowLoadSeconds +
      double(thread.spilled) * host.spillSeconds +
      double(loads) * beyondL1 * host.l1MissSeconds +
      double(tile.kStep) * host.unrollSeconds;
  double turn = host.threadStepSeconds +
                double(vectors) * host.accumulatorSeconds +
                double(tile.kStep) * perK;
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

/// What a host search's device name starts with.
static constexpr char kHostSearchPrefix[] = "host-";
static constexpr size_t kHostSearchPrefixSize = sizeof(kHostSearchPrefix) - 1;

std::string dyncc::cost::getHostSearchDevice(const std::string &level) {
  return kHostSearchPrefix + level;
}

std::string dyncc::cost::getHostSearchLevel(const std::string &device) {
  return device.compare(0, kHostSearchPrefixSize, kHostSearchPrefix) == 0
             ? device.substr(kHostSearchPrefixSize)
             : std::string();
}

std::vector<GemmTile> dyncc::cost::enumerateHostGemmTiles(int64_t nSplit) {
  // The widest build's registers bound the accumulator; each candidate
  // runs on every build.
  HostDevice widest;
  widest.vectorBytes = 64;
  widest.vectorRegisters = 32;
  std::vector<int64_t> blockNs = {64, 128, 256, 512};
  if (nSplit > 0 && nSplit < 64)
    for (int64_t n = nSplit; n >= 4; --n)
      if (nSplit % n == 0 && n % 4 == 0)
        blockNs.push_back(n);
  std::vector<GemmTile> tiles;
  for (int64_t blockM : {1, 2, 4, 8, 16, 32, 48, 64, 96, 128})
    for (int64_t blockN : blockNs)
      for (int64_t threadM : {1, 2, 4, 6, 8})
        for (int64_t threadN : {4, 8, 16, 32, 64})
          for (int64_t kStep : {8, 16, 32, 64}) {
            if (blockM % threadM || blockN % threadN ||
                (nSplit > 0 && nSplit % blockN))
              continue;
            GemmTile t;
            t.blockM = blockM;
            t.blockN = blockN;
            t.threadM = threadM;
            t.threadN = threadN;
            t.kStep = kStep;
            // The family the model was fitted on: at most 512 turns (a
            // GPU block's threads) and a 128 KB accumulator a block
            // (docs/CostModel.md: beyond either, the fits' error grows
            // past what they can choose by).
            if (t.threads() > 512 || blockM * blockN * 4 > 128 * 1024 ||
                getHostThreadTile(t, widest).spilled)
              continue;
            tiles.push_back(t);
          }
  return tiles;
}

HostDevice dyncc::cost::getFittedHostDevice(const std::string &isa) {
  // Fitted like the portable build's defaults (docs/CostModel.md, "The
  // host CPU target"): the same sweep, each artifact loaded under
  // DYNCC_HOST_ISA. The sweep's runs cannot tell a kernel's launch from
  // the run's own overhead, nor measure split-K's sum, so those keep the
  // launches `dyncc tune --device cpu` measured per build, and the
  // portable build's sum.
  HostDevice host;
  if (isa == "x86-64-v4") {
    host.vectorBytes = 64;
    host.vectorRegisters = 32;
    host.vectorOpSeconds = 0.04916e-9;
    host.laneOpSeconds = 0.07889e-9;
    host.unrollSeconds = 0.005956e-9;
    host.spillSeconds = 0;
    host.l1MissSeconds = 0.3606e-9;
    host.copyElementSeconds = 0.1534e-9;
    host.storeElementSeconds = 0.2893e-9;
    host.launchSeconds = 9.518e-6;
  } else if (isa == "x86-64-v3") {
    host.vectorBytes = 32;
    host.vectorRegisters = 16;
    host.vectorOpSeconds = 0.02579e-9;
    host.laneOpSeconds = 0.1038e-9;
    host.rowLoadSeconds = 0.001869e-9;
    host.unrollSeconds = 0.005537e-9;
    host.spillSeconds = 0.1203e-9;
    host.l1MissSeconds = 0.2944e-9;
    host.copyElementSeconds = 0.1806e-9;
    host.storeElementSeconds = 0;
    host.launchSeconds = 8.289e-6;
  }
  return host;
}
