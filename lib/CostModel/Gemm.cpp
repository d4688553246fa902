//===- Gemm.cpp - GEMM tile candidates and their analytical time ----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The model, per block and k-step (docs/CostModel.md has the derivation):
//   T_load  = the step's A and B tiles over the block's share of L2
//             bandwidth (the device's L2 split among the resident blocks,
//             and at most what one SM pulls, split among its blocks);
//   T_inner = max(compute, shared-memory reads): the step's multiply-adds at
//             the SM's tensor-core or FMA rate shared by its blocks (scaled
//             down with fewer than 4 warps per SM to feed its 4 partitions),
//             and the fragments or register rows the warps read;
//   T_block = L + T_load + (n-1) T_step + T_inner + T_store with a pipeline
//             (stages > 1; Vortex's recursion with a latency L that the
//             stages cover: T_step = max(T_load, T_inner,
//             (L + T_load) / (stages - 1))), n (L + T_load + T_inner) +
//             T_store without;
// then full waves at the occupancy's blocks per SM and a last, partial wave
// (TSCompiler's T_wave x waves, with the tail's blocks spread over the
// SMs), at least the DRAM time of the unique bytes, plus a launch. Padding
// is in the tiles: a block computes its whole tile and every k-step.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Gemm.h"

#include "ConfigText.h"
#include "Waves.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

using namespace dyncc::cost;
using namespace dyncc::cost::detail;


std::string GemmTile::str() const {
  auto pair = [](int64_t a, int64_t b) {
    return std::to_string(a) + "x" + std::to_string(b);
  };
  std::string s = "block " + pair(blockM, blockN);
  if (tensorCores)
    s += " warp " + pair(warpM, warpN);
  s += " thread " + pair(threadM, threadN) + " k " + std::to_string(kStep);
  if (tensorCores)
    s += " mma 16x8x16";
  if (stages > 1)
    s += " stages " + std::to_string(stages);
  if (splitK > 1)
    s += " split_k " + std::to_string(splitK);
  return s;
}

bool GemmTile::operator==(const GemmTile &o) const {
  return tensorCores == o.tensorCores && blockM == o.blockM &&
         blockN == o.blockN && warpM == o.warpM && warpN == o.warpN &&
         threadM == o.threadM && threadN == o.threadN && kStep == o.kStep &&
         stages == o.stages && splitK == o.splitK;
}

std::optional<GemmTile> dyncc::cost::parseGemmTile(const std::string &text) {
  // Of each `AxBxC` size, the last two count.
  std::optional<detail::ConfigWords> words = detail::parseConfigWords(text);
  if (!words || !words->reduce.empty() || words->block.size() < 2 ||
      words->thread.size() < 2 || words->kStep < 1 || !words->kSteps.empty() ||
      (!words->warp.empty() && words->warp.size() < 2) ||
      (!words->mma.empty() && words->mma != std::vector<int64_t>{16, 8, 16}))
    return std::nullopt;
  auto last2 = [](const std::vector<int64_t> &s) {
    return std::make_pair(s[s.size() - 2], s.back());
  };
  GemmTile tile;
  std::tie(tile.blockM, tile.blockN) = last2(words->block);
  std::tie(tile.threadM, tile.threadN) = last2(words->thread);
  if (!words->warp.empty()) {
    std::tie(tile.warpM, tile.warpN) = last2(words->warp);
    tile.tensorCores = true;
  }
  tile.kStep = words->kStep;
  if (words->stages)
    tile.stages = words->stages;
  if (words->splitK)
    tile.splitK = words->splitK;
  return tile;
}

int64_t dyncc::cost::estimateSharedBytes(const GemmTile &tile,
                                         int64_t operandBytes,
                                         bool overlapAccumulator) {
  // Tensor-core operands' rows are padded (kMmaRowPaddingBytes).
  int64_t pad = tile.tensorCores ? kMmaRowPaddingBytes : 0;
  int64_t operands =
      std::max<int64_t>(1, tile.stages) *
      (sharedBufferBytes(tile.blockM * (tile.kStep * operandBytes + pad)) +
       sharedBufferBytes(tile.kStep * (tile.blockN * operandBytes + pad)));
  int64_t accumulator = sharedBufferBytes(tile.blockM * tile.blockN * 4);
  return overlapAccumulator ? std::max(operands, accumulator)
                            : operands + accumulator;
}

GemmResources dyncc::cost::estimateResources(const GemmTile &tile,
                                             int64_t operandBytes) {
  GemmResources r;
  r.threads = tile.threads();
  r.sharedBytes = estimateSharedBytes(tile, operandBytes,
                                      /*overlapAccumulator=*/true);
  if (tile.tensorCores) {
    // The warp's f32 fragments over its 32 lanes, one k16 slice of A
    // (4 registers per 16 rows) and B (2 per 8 columns), and addressing.
    int64_t accumulators = tile.warpM * tile.warpN / 32;
    int64_t fragments = tile.warpM / 16 * 4 + tile.warpN / 8 * 2;
    r.registersPerThread = accumulators + fragments + 48;
  } else {
    // The register tile, a column of A and a row of B per k, addressing
    // (measured: 4x4 takes 56-58 on sm_80/sm_90).
    r.registersPerThread =
        tile.threadM * tile.threadN + tile.threadM + tile.threadN + 32;
  }
  if (tile.registers > 0)
    r.registersPerThread = tile.registers;
  if (tile.sharedBytes > 0)
    r.sharedBytes = tile.sharedBytes;
  return r;
}

std::optional<std::string>
dyncc::cost::checkConstraints(const GemmTile &tile, int64_t operandBytes,
                              const Device &device) {
  auto positive = [](int64_t v) { return v > 0; };
  if (!positive(tile.blockM) || !positive(tile.blockN) ||
      !positive(tile.threadM) || !positive(tile.threadN) ||
      !positive(tile.kStep))
    return std::string("tile sizes and the k-step must be positive");
  if (tile.blockM % tile.threadM || tile.blockN % tile.threadN)
    return std::string("the thread tile does not divide the block tile");
  if (tile.stages < 1 || tile.stages > 8)
    return std::string("stages must be 1 to 8");
  if (tile.splitK < 1 || tile.splitK > 64)
    return std::string("split_k must be 1 to 64");
  int64_t threads = tile.threads();
  if (std::optional<std::string> why = checkThreads(threads, device))
    return why;
  if (tile.tensorCores) {
    if (operandBytes != 2)
      return std::string("tensor cores take f16 or bf16 operands");
    if (!positive(tile.warpM) || !positive(tile.warpN) ||
        tile.blockM % tile.warpM || tile.blockN % tile.warpN)
      return std::string("the warp tile does not divide the block tile");
    if (tile.warpM % 16 || tile.warpN % 8 || tile.kStep % 16)
      return std::string("the warp tile and k-step are not multiples of "
                         "mma 16x8x16");
    int64_t warps = (tile.blockM / tile.warpM) * (tile.blockN / tile.warpN);
    if (warps * device.warpSize != threads)
      return std::string("the warps do not fill the block's threads");
  } else if (tile.warpM || tile.warpN) {
    return std::string("a SIMT tile has no warp tile");
  }
  // Whole 16-byte chunks per row of each k-step's tiles: vector and
  // cp.async copies, and 16-byte aligned shared rows.
  if ((tile.kStep * operandBytes) % 16 || (tile.blockN * operandBytes) % 16)
    return std::string("k-step and block N rows are not whole 16-byte chunks");
  GemmResources r = estimateResources(tile, operandBytes);
  // The dynamic-shared symbol takes 16 bytes of static shared memory.
  if (r.sharedBytes + 16 > device.maxSharedBytesPerBlock)
    return "shared memory (" + std::to_string(r.sharedBytes) +
           " bytes) exceeds the " +
           std::to_string(device.maxSharedBytesPerBlock) + " a block may use";
  if (std::optional<std::string> why =
          checkRegisters(tile.registers, r.registersPerThread, device))
    return why;
  if (getBlocksPerSm(tile, operandBytes, device) < 1)
    return std::string("no block fits on an SM");
  return std::nullopt;
}

int64_t dyncc::cost::getBlocksPerSm(const GemmTile &tile, int64_t operandBytes,
                                    const Device &device) {
  GemmResources r = estimateResources(tile, operandBytes);
  return getOccupancy(r.threads, r.sharedBytes, r.registersPerThread, device);
}

/// The tensor-core tile of `warpsM x warpsN` warps of `warpM x warpN`, its
/// threads laid out with as many along N as the block is wide (up to all).
static std::optional<GemmTile> makeTensorCoreTile(int64_t warpsM,
                                                  int64_t warpsN,
                                                  int64_t warpM, int64_t warpN,
                                                  int64_t kStep,
                                                  int64_t stages) {
  GemmTile t;
  t.tensorCores = true;
  t.warpM = warpM;
  t.warpN = warpN;
  t.blockM = warpsM * warpM;
  t.blockN = warpsN * warpN;
  t.kStep = kStep;
  t.stages = stages;
  // Eight outputs per thread along N (16 bytes of f16), the rest along M.
  int64_t threads = 32 * warpsM * warpsN;
  int64_t alongN = std::min(threads, std::max<int64_t>(1, t.blockN / 8));
  while (alongN > 1 && (t.blockN % alongN || threads % alongN))
    alongN /= 2;
  int64_t alongM = threads / alongN;
  if (t.blockM % alongM)
    return std::nullopt;
  t.threadM = t.blockM / alongM;
  t.threadN = t.blockN / alongN;
  return t;
}

/// The block N sizes of the SIMT candidates.
static const std::vector<int64_t> kSimtBlockN = {32, 64, 128, 256};

/// Passes `add` every SIMT tile of a block N in `blockNs`: each M tile,
/// thread tile, k-step and stage count of the SIMT candidates, in that
/// order (M tiles outermost: the search keeps the first of equal times).
template <typename Add>
static void addSimtTiles(const std::vector<int64_t> &blockNs, Add &&add) {
  for (int64_t blockM : {1, 2, 4, 8, 16, 32, 64, 128})
    for (int64_t blockN : blockNs)
      for (int64_t threadM : {1, 2, 4, 8})
        for (int64_t threadN : {1, 2, 4, 8})
          for (int64_t kStep : {8, 16, 32})
            for (int64_t stages : {1, 2, 3}) {
              if (blockM % threadM)
                continue;
              GemmTile t;
              t.blockM = blockM;
              t.blockN = blockN;
              t.threadM = threadM;
              t.threadN = threadN;
              t.kStep = kStep;
              t.stages = stages;
              add(t);
            }
}

std::vector<GemmTile> dyncc::cost::enumerateGemmTiles(int64_t operandBytes,
                                                      const Device &device) {
  std::vector<GemmTile> tiles;
  auto add = [&](const GemmTile &t) {
    if (!checkConstraints(t, operandBytes, device))
      tiles.push_back(t);
  };
  if (operandBytes == 2)
    for (int64_t warpM : {16, 32, 64})
      for (int64_t warpN : {16, 32, 64})
        for (int64_t warpsM : {1, 2, 4})
          for (int64_t warpsN : {1, 2, 4})
            for (int64_t kStep : {16, 32, 64})
              for (int64_t stages : {1, 2, 3, 4})
                if (auto t = makeTensorCoreTile(warpsM, warpsN, warpM, warpN,
                                                kStep, stages))
                  add(*t);
  addSimtTiles(kSimtBlockN, add);
  return tiles;
}

std::vector<GemmTile>
dyncc::cost::enumerateNarrowGemmTiles(int64_t operandBytes,
                                      const Device &device, int64_t headSize) {
  std::vector<GemmTile> tiles;
  if (headSize <= 0 || headSize >= kSimtBlockN.front() || operandBytes <= 0)
    return tiles;
  auto add = [&](const GemmTile &t) {
    if (!checkConstraints(t, operandBytes, device))
      tiles.push_back(t);
  };
  std::vector<int64_t> blockNs;
  for (int64_t blockN = headSize; blockN * operandBytes >= 16; --blockN)
    if (headSize % blockN == 0 && (blockN * operandBytes) % 16 == 0)
      blockNs.push_back(blockN);
  addSimtTiles(blockNs, add);
  return tiles;
}

std::vector<GemmTile> dyncc::cost::getSplitKTiles(const GemmTile &tile,
                                                  int64_t k) {
  std::vector<GemmTile> split;
  if (tile.splitK != 1)
    return split;
  for (int64_t parts : kSplitKParts) {
    if (k % (parts * tile.kStep) != 0)
      continue;
    GemmTile t = tile;
    t.splitK = parts;
    split.push_back(t);
  }
  return split;
}

/// The time of one block of `tile` when `perSm` blocks share its SM and
/// `resident` blocks share the device.
static BlockTime blockTime(const GemmTile &tile, const GemmProblem &problem,
                           const Device &device, int64_t perSm,
                           int64_t resident) {
  int64_t ob = problem.operandBytes;
  BlockSteps work;
  work.steps = ceilDiv(ceilDiv(problem.k, tile.splitK), tile.kStep);
  work.stages = tile.stages;
  work.flops = 2.0 * tile.blockM * tile.blockN * tile.kStep;
  work.loadBytes = double(tile.blockM + tile.blockN) * tile.kStep * ob;
  // What the warps (fragments) or threads (register rows) read of the
  // shared tiles per step.
  work.warps = std::max<int64_t>(1, tile.threads() / device.warpSize);
  if (tile.tensorCores)
    work.sharedBytes =
        double(work.warps) * (tile.warpM + tile.warpN) * tile.kStep * ob;
  else
    work.sharedBytes = double(tile.threads()) *
                       (tile.threadM + tile.threadN) * tile.kStep * ob;
  // A split's partial sums are f32.
  work.storeBytes = double(tile.blockM) * tile.blockN *
                    (tile.splitK > 1 ? 4 : problem.outputBytes);
  work.peak = tile.tensorCores
                  ? device.mmaSyncHalfFlopsPerSecond * kMmaSyncEfficiency
                  : getSimtPeak(device, ob);
  work.warpsToFeed = tile.tensorCores ? 4.0 : 8.0;
  return getBlockTime(work, device, perSm, resident);
}

GemmPrediction dyncc::cost::predictGemm(const GemmTile &tile,
                                        const GemmProblem &problem,
                                        const Device &device) {
  GemmPrediction p;
  int64_t blocksM = ceilDiv(problem.m, tile.blockM);
  int64_t blocksN = ceilDiv(problem.n, tile.blockN);
  int64_t unsplit = problem.batch * blocksM * blocksN;
  p.blocks = unsplit * tile.splitK;
  // Split-K is for grids of fewer blocks than SMs, split into at most two
  // waves of one block per SM: elsewhere the partial sums' traffic and the
  // second kernel buy nothing, and the tile does not apply.
  if (tile.splitK > 1 &&
      (unsplit >= device.sms || p.blocks > 2 * device.sms)) {
    p.seconds = std::numeric_limits<double>::infinity();
    p.bound = "split";
    return p;
  }
  p.blocksPerSm = getBlocksPerSm(tile, problem.operandBytes, device);
  Waves waves = runWaves(p.blocks, p.blocksPerSm, device,
                         [&](int64_t perSm, int64_t resident) {
                           BlockTime t = blockTime(tile, problem, device,
                                                   perSm, resident);
                           t.seconds *= problem.products;
                           return t;
                         });
  p.waves = waves.waves;
  double padded = 2.0 * problem.products * problem.batch * blocksM *
                  tile.blockM * blocksN * tile.blockN *
                  tile.splitK *
                  roundUp(ceilDiv(problem.k, tile.splitK), tile.kStep);
  p.paddingEfficiency = problem.flops() / padded;
  p.waveEfficiency = double(p.blocks) / double(p.waves * waves.slots);
  p.bound = waves.bound;

  // The unique bytes cross DRAM at least once.
  // The products share A.
  double outputs =
      double(problem.products) * problem.batch * problem.m * problem.n;
  double operands =
      double(problem.operandBytes) *
      (double(problem.batch) * problem.m * problem.k +
       double(problem.products) * (problem.batchedB ? problem.batch : 1) *
           problem.k * problem.n);
  if (tile.splitK == 1) {
    double unique = operands + double(problem.outputBytes) * outputs;
    p.seconds = addFloors(waves.seconds, unique / device.dramBytesPerSecond,
                          device, p.bound);
    return p;
  }
  // Split-K: the parts write f32 partial sums, then a second kernel reads
  // them all and writes the result (its epilogue's other operands are not
  // counted), at L2's rate where the workspace fits there, else DRAM's.
  double workspace = 4.0 * tile.splitK * outputs;
  p.seconds = addFloors(waves.seconds,
                        (operands + workspace) / device.dramBytesPerSecond,
                        device, p.bound);
  double sumBytes = workspace + double(problem.outputBytes) * outputs;
  double rate = workspace <= double(device.l2Bytes) / 2
                    ? device.l2BytesPerSecond
                    : device.dramBytesPerSecond;
  p.seconds += std::max(sumBytes / rate, device.memoryLatencySeconds) +
               device.launchSeconds;
  return p;
}
