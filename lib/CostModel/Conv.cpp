//===- Conv.cpp - Conv tile candidates and their analytical time ----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The model, per block and k-step, as for a GEMM (Gemm.cpp) with one
// stage (code generation pipelines only GEMM k-steps):
//   T_load  = the step's input window (channels x the rows and columns the
//             block's outputs read, halo included: the reuse of a window
//             between neighbouring outputs and filter taps) and its weights
//             over the block's share of L2 bandwidth;
//   T_inner = max(compute, shared-memory reads): the step's multiply-adds
//             at the SM's FP32 rate shared by its blocks, and what the
//             threads read of the window and weights for their register
//             tiles, plus the step's overhead;
//   T_block = n (L + T_load + T_inner) + T_store;
// where a block's tile can be cut short by the output's edge, its threads'
// outputs are loaded and stored at every step too (ConvTile::
// accumulatesInMemory);
// then waves at the occupancy, the DRAM floor of the unique bytes, and a
// launch. Partial steps (a k-step over fewer channels than it takes) and
// the grid's edges are in the tiles: a block computes its whole tile and
// every step.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Conv.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Rows.h"

#include "ConfigText.h"
#include "Waves.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

using namespace dyncc::cost;
using namespace dyncc::cost::detail;

/// Static shared memory a block may declare without opting in; conv
/// buffers stay within it.
constexpr int64_t kStaticSharedBytes = 48 * 1024;
/// The most threads along z of a block (CUDA's limit): the channels'.
constexpr int64_t kMaxThreadsZ = 64;

std::vector<int64_t> ConvProblem::window() const {
  std::vector<int64_t> values = {inC,     kh,        kw,       strideH,
                                 strideW, dilationH, dilationW};
  if (groups > 1)
    values.push_back(groups);
  return values;
}

bool ConvProblem::setWindow(const int64_t *values, size_t size) {
  if ((size != 7 && size != 8) ||
      std::any_of(values, values + size, [](int64_t v) { return v < 1; }))
    return false;
  groups = size == 8 ? values[7] : 1;
  inC = values[0];
  kh = values[1];
  kw = values[2];
  strideH = values[3];
  strideW = values[4];
  dilationH = values[5];
  dilationW = values[6];
  return true;
}

std::string ConvTile::str() const {
  auto sizes = [&](int64_t c, int64_t h, int64_t w) {
    return "1x" + std::to_string(c) + "x" +
           (spatialDims == 1 ? "" : std::to_string(h) + "x") +
           std::to_string(w);
  };
  std::string k = std::to_string(kChannels);
  if (kRows != kChannels || kColumns != kChannels)
    k += "x" + std::to_string(kRows) + "x" + std::to_string(kColumns);
  return "block " + sizes(blockC, blockH, blockW) + " thread " +
         sizes(threadC, threadH, threadW) + " k " + k;
}

bool ConvTile::operator==(const ConvTile &o) const {
  return blockC == o.blockC && blockH == o.blockH && blockW == o.blockW &&
         threadC == o.threadC && threadH == o.threadH && threadW == o.threadW &&
         kChannels == o.kChannels && kRows == o.kRows &&
         kColumns == o.kColumns && spatialDims == o.spatialDims;
}

std::optional<ConvTile> dyncc::cost::parseConvTile(const std::string &text) {
  std::optional<ConfigWords> words = parseConfigWords(text);
  if (!words || (words->block.size() != 4 && words->block.size() != 3) ||
      words->thread.size() != words->block.size() || words->block[0] != 1 ||
      words->thread[0] != 1 || words->kStep < 1 || !words->warp.empty() ||
      !words->mma.empty() || words->stages > 1 || !words->reduce.empty() ||
      (!words->kSteps.empty() && words->kSteps.size() != 3))
    return std::nullopt;
  ConvTile tile;
  // A 1-D conv's tile has no rows.
  bool rows = words->block.size() == 4;
  tile.spatialDims = rows ? 2 : 1;
  tile.blockC = words->block[1];
  tile.blockH = rows ? words->block[2] : 1;
  tile.blockW = words->block.back();
  tile.threadC = words->thread[1];
  tile.threadH = rows ? words->thread[2] : 1;
  tile.threadW = words->thread.back();
  if (words->kSteps.empty()) {
    tile.setKStep(words->kStep);
  } else {
    tile.kChannels = words->kSteps[0];
    tile.kRows = words->kSteps[1];
    tile.kColumns = words->kSteps[2];
  }
  return tile;
}

bool ConvTile::accumulatesInMemory(const ConvProblem &problem) const {
  return problem.blockedChannels() % blockC != 0 || !problem.staticH ||
         problem.outH % blockH != 0 || !problem.staticW ||
         problem.outW % blockW != 0;
}

/// Whether code generation drops one of the reduction loops (extent 1: one
/// input channel a group, a filter of one row or column), so that those
/// left step alike by the tile's largest k-step (TileConfig::getKSteps).
static bool stepsAlike(const ConvProblem &problem) {
  return problem.inC == 1 || problem.kh == 1 || problem.kw == 1;
}

ConvSteps dyncc::cost::getConvSteps(const ConvTile &tile,
                                    const ConvProblem &problem) {
  ConvSteps s;
  int64_t channels = tile.kChannels, rows = tile.kRows, columns = tile.kColumns;
  if (stepsAlike(problem))
    channels = rows = columns = std::max({channels, rows, columns});
  s.channels = std::min(std::max<int64_t>(1, channels), problem.inC);
  s.rows = std::min(std::max<int64_t>(1, rows), problem.kh);
  s.columns = std::min(std::max<int64_t>(1, columns), problem.kw);
  s.steps = ceilDiv(problem.inC, s.channels) * ceilDiv(problem.kh, s.rows) *
            ceilDiv(problem.kw, s.columns);
  return s;
}

/// The rows (columns) of input a step of `taps` filter rows reads for
/// `outputs` output rows: `(outputs - 1) * stride + (taps - 1) * dilation
/// + 1`, as code generation bounds the window's buffer.
static int64_t getWindow(int64_t outputs, int64_t taps, int64_t stride,
                         int64_t dilation) {
  return (outputs - 1) * stride + (taps - 1) * dilation + 1;
}

/// The input channels a block's step reads into its window: the step's,
/// shared by the block's output channels, or each output channel's own
/// where the block spans groups.
static int64_t getWindowChannels(const ConvTile &tile,
                                 const ConvProblem &problem,
                                 const ConvSteps &s) {
  return problem.spansGroups() ? tile.blockC * s.channels : s.channels;
}

/// The input elements a thread reads per tap for its register tile: a row
/// of positions shared by its channels, or one per channel and position
/// where the block spans groups.
static int64_t getThreadInputs(const ConvTile &tile,
                               const ConvProblem &problem) {
  int64_t positions = tile.threadH * tile.threadW;
  return problem.spansGroups() ? tile.threadC * positions : positions;
}

ConvResources dyncc::cost::estimateResources(const ConvTile &tile,
                                             const ConvProblem &problem) {
  ConvResources r;
  r.threads = tile.threads();
  ConvSteps s = getConvSteps(tile, problem);
  int64_t window =
      getWindowChannels(tile, problem, s) *
      getWindow(tile.blockH, s.rows, problem.strideH, problem.dilationH) *
      getWindow(tile.blockW, s.columns, problem.strideW, problem.dilationW);
  int64_t weights = tile.blockC * s.taps();
  r.sharedBytes = sharedBufferBytes(window * problem.elementBytes) +
                  sharedBufferBytes(weights * problem.elementBytes);
  // The register tile, a column of weights and a row of the window per
  // tap (a row per channel where each channel has its own input),
  // addressing (as a SIMT GEMM's).
  int64_t outputs = tile.threadC * tile.threadH * tile.threadW;
  r.registersPerThread =
      outputs + tile.threadC + getThreadInputs(tile, problem) + 32;
  if (tile.registers > 0)
    r.registersPerThread = tile.registers;
  return r;
}

std::optional<std::string>
dyncc::cost::checkConstraints(const ConvTile &tile, const ConvProblem &problem,
                              const Device &device) {
  if (tile.blockC < 1 || tile.blockH < 1 || tile.blockW < 1 ||
      tile.threadC < 1 || tile.threadH < 1 || tile.threadW < 1 ||
      tile.kChannels < 1 || tile.kRows < 1 || tile.kColumns < 1)
    return std::string("tile sizes and the k-steps must be positive");
  if (tile.blockC % tile.threadC || tile.blockH % tile.threadH ||
      tile.blockW % tile.threadW)
    return std::string("the thread tile does not divide the block tile");
  if (tile.spatialDims != problem.spatialDims ||
      (tile.spatialDims == 1 && (tile.blockH != 1 || tile.threadH != 1)))
    return problem.spatialDims == 1
               ? std::string("a 1-D conv's tile has no rows")
               : std::string("a 2-D conv's tile has rows");
  if (std::optional<std::string> why = checkThreads(tile.threads(), device))
    return why;
  if (tile.blockC / tile.threadC > kMaxThreadsZ)
    return "threads along the channels (" +
           std::to_string(tile.blockC / tile.threadC) + ") exceed " +
           std::to_string(kMaxThreadsZ);
  // Code generation promotes a conv's operands only where no step splits a
  // filter row or column (a padded tap would meet real input).
  ConvSteps s = getConvSteps(tile, problem);
  for (auto [taps, step] :
       {std::pair(problem.kh, s.rows), std::pair(problem.kw, s.columns)})
    if (taps % step)
      return "the k-step (" + std::to_string(step) + ") splits a filter of " +
             std::to_string(taps) + " taps";
  if (s.taps() > kMaxUnrolledTaps)
    return "a step unrolls " + std::to_string(s.taps()) +
           " multiply-adds per output (at most " +
           std::to_string(kMaxUnrolledTaps) + ")";
  int64_t outputs = tile.threadC * tile.threadH * tile.threadW;
  if (outputs * s.taps() > kMaxUnrolledProducts)
    return "a step unrolls " + std::to_string(outputs * s.taps()) +
           " multiply-adds per thread (at most " +
           std::to_string(kMaxUnrolledProducts) + ")";
  ConvResources r = estimateResources(tile, problem);
  int64_t sharedLimit =
      std::min(kStaticSharedBytes, device.maxSharedBytesPerBlock);
  if (r.sharedBytes > sharedLimit)
    return "shared memory (" + std::to_string(r.sharedBytes) +
           " bytes) exceeds the " + std::to_string(sharedLimit) +
           " of static buffers";
  if (std::optional<std::string> why =
          checkRegisters(tile.registers, r.registersPerThread, device))
    return why;
  if (getBlocksPerSm(tile, problem, device) < 1)
    return std::string("no block fits on an SM");
  return std::nullopt;
}

std::vector<ConvTile> dyncc::cost::enumerateConvTiles(const ConvProblem &problem,
                                                      const Device &device) {
  // The k-steps: a number of channels by one tap, one filter row (its
  // columns are contiguous in the window) or the whole window; one
  // candidate per distinct step (the uniform form `k K` first, so that it
  // names its step where it can). Steps of whole filter columns, one row
  // at a time, were never chosen over the rows' on ResNet-50, and would
  // add a quarter to the candidates. A grouped conv's few channels a group
  // (ShuffleNet's 34 or 68) may also go whole into a step, which no power
  // of two does.
  std::vector<int64_t> channelSteps = {1, 2, 4, 8, 16, 32};
  if (problem.groups > 1 && problem.inC <= 64 &&
      std::find(channelSteps.begin(), channelSteps.end(), problem.inC) ==
          channelSteps.end())
    channelSteps.push_back(problem.inC);
  std::vector<std::array<int64_t, 3>> kSteps, seen;
  for (int64_t k : channelSteps)
    for (std::array<int64_t, 3> step : {std::array<int64_t, 3>{k, k, k},
                                        {k, 1, 1},
                                        {k, 1, problem.kw},
                                        {k, problem.kh, problem.kw}}) {
      ConvTile t;
      t.kChannels = step[0];
      t.kRows = step[1];
      t.kColumns = step[2];
      ConvSteps s = getConvSteps(t, problem);
      std::array<int64_t, 3> taken = {s.channels, s.rows, s.columns};
      if (std::find(seen.begin(), seen.end(), taken) != seen.end())
        continue;
      seen.push_back(taken);
      // The uniform form as given; the others as the loops take them, or
      // as one uniform step where unit loops are dropped (getConvSteps).
      bool uniform = step[0] == step[1] && step[1] == step[2];
      if (!uniform && stepsAlike(problem))
        step.fill(std::max({s.channels, s.rows, s.columns}));
      else if (!uniform)
        step = taken;
      kSteps.push_back(step);
    }
  // Block rows and columns: powers of two, and a static map's whole size
  // (at most 16 rows, 64 columns): ResNet's 7x7 and 14x14 maps have no
  // power-of-two column tile that divides them, and a block tile the map's
  // edge cannot cut keeps its threads' outputs in registers
  // (ConvTile::accumulatesInMemory).
  auto sizes = [](std::vector<int64_t> powers, int64_t size, bool isStatic,
                  int64_t most) {
    if (isStatic && size <= most &&
        std::find(powers.begin(), powers.end(), size) == powers.end())
      powers.push_back(size);
    return powers;
  };
  // A 1-D conv has no rows: one a block and a thread, and its blocks may
  // take longer runs of columns (an audio frame's thousands).
  bool oneD = problem.spatialDims == 1;
  std::vector<int64_t> blockRows =
      oneD ? std::vector<int64_t>{1}
           : sizes({1, 2, 4, 8, 16}, problem.outH, problem.staticH, 16);
  std::vector<int64_t> threadRows =
      oneD ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2, 4};
  std::vector<int64_t> blockColumns =
      oneD ? sizes({4, 8, 16, 32, 64, 128, 256}, problem.outW, problem.staticW,
                   256)
           : sizes({4, 8, 16, 32, 64}, problem.outW, problem.staticW, 64);
  // Channel tiles: powers of two, and a grouped conv's channels where
  // they are few (ShuffleNet's 28 or 34 a group), which no power of two
  // divides.
  std::vector<int64_t> blockChannels = {4, 8, 16, 32, 64};
  if (problem.groups > 1)
    blockChannels = sizes(blockChannels, problem.blockedChannels(), true, 64);
  std::vector<ConvTile> tiles;
  for (int64_t blockC : blockChannels)
    for (int64_t blockH : blockRows)
      for (int64_t blockW : blockColumns)
        for (int64_t threadC : {1, 2, 4, 8})
          for (int64_t threadH : threadRows)
            for (int64_t threadW : {1, 2, 4})
              for (const std::array<int64_t, 3> &step : kSteps) {
                ConvTile t;
                t.blockC = blockC;
                t.blockH = blockH;
                t.blockW = blockW;
                t.threadC = threadC;
                t.threadH = threadH;
                t.threadW = threadW;
                t.kChannels = step[0];
                t.kRows = step[1];
                t.kColumns = step[2];
                t.spatialDims = problem.spatialDims;
                if (!checkConstraints(t, problem, device))
                  tiles.push_back(t);
              }
  return tiles;
}

int64_t dyncc::cost::getBlocksPerSm(const ConvTile &tile,
                                    const ConvProblem &problem,
                                    const Device &device) {
  ConvResources r = estimateResources(tile, problem);
  return getOccupancy(r.threads, r.sharedBytes, r.registersPerThread, device);
}

ConvPrediction dyncc::cost::predictConv(const ConvTile &tile,
                                        const ConvProblem &problem,
                                        const Device &device) {
  ConvPrediction p;
  ConvSteps s = getConvSteps(tile, problem);
  p.blocks = std::max<int64_t>(1, problem.batch) *
             (problem.spansGroups() ? 1 : problem.groups) *
             ceilDiv(problem.blockedChannels(), tile.blockC) *
             ceilDiv(problem.outH, tile.blockH) *
             ceilDiv(problem.outW, tile.blockW);
  p.blocksPerSm = getBlocksPerSm(tile, problem, device);
  int64_t eb = problem.elementBytes;
  int64_t outputs = tile.blockC * tile.blockH * tile.blockW;
  BlockSteps work;
  work.steps = s.steps;
  double window =
      double(getWindowChannels(tile, problem, s)) *
      getWindow(tile.blockH, s.rows, problem.strideH, problem.dilationH) *
      getWindow(tile.blockW, s.columns, problem.strideW, problem.dilationW);
  work.loadBytes = (window + double(tile.blockC) * s.taps()) * eb;
  // Outputs kept in memory across steps: each step loads and stores them
  // (through L2; ResNet's 3x3 conv over a 56x56 map with 64-column blocks
  // has 136 global stores and 115 loads a thread where whole tiles have 64
  // and 11).
  if (tile.accumulatesInMemory(problem))
    work.loadBytes += 2.0 * double(outputs) * eb;
  work.flops = 2.0 * outputs * s.taps();
  // Per tap, each thread reads its channels' weights and its positions'
  // inputs (per channel where the block spans groups).
  work.sharedBytes = double(tile.threads()) * s.taps() *
                     (tile.threadC + getThreadInputs(tile, problem)) * eb;
  work.storeBytes = double(outputs) * eb;
  work.peak = getSimtPeak(device, eb);
  work.warps = std::max<int64_t>(1, tile.threads() / device.warpSize);
  work.sharedLoadsIssue = true;
  auto blockTime = [&](int64_t perSm, int64_t resident) {
    return getBlockTime(work, device, perSm, resident);
  };
  Waves waves = runWaves(p.blocks, p.blocksPerSm, device, blockTime);
  p.waves = waves.waves;
  p.bound = waves.bound;
  p.paddingEfficiency =
      problem.flops() / (double(p.blocks) * work.flops * double(s.steps));

  double batch = std::max<int64_t>(1, problem.batch);
  double inH = getWindow(problem.outH, problem.kh, problem.strideH,
                         problem.dilationH);
  double inW = getWindow(problem.outW, problem.kw, problem.strideW,
                         problem.dilationW);
  p.uniqueBytes =
      double(eb) * double(problem.groups) *
      (batch * problem.inC * inH * inW +
       double(problem.outC) * problem.inC * problem.kh * problem.kw +
       batch * problem.outC * problem.outH * problem.outW);
  p.seconds =
      addFloors(waves.seconds, p.uniqueBytes / device.dramBytesPerSecond,
                device, p.bound);
  return p;
}

std::vector<ConvFormTimes>
dyncc::cost::predictConvForms(const std::vector<ConvProblem> &points,
                              const Device &device) {
  std::vector<ConvFormTimes> times;
  if (points.empty())
    return times;
  const ConvProblem &first = points.front();
  int64_t bytes = first.elementBytes;
  int64_t taps = first.kh * first.kw, k = first.inC * taps;
  // Candidates depend on the static parts alone.
  std::vector<ConvTile> direct = enumerateConvTiles(first, device);
  std::vector<GemmTile> gemm;
  for (const GemmTile &tile : enumerateGemmTiles(bytes, device)) {
    if (tile.tensorCores && !tensorCoresTakeStaticK(k, tile.kStep, kMmaK))
      continue;
    gemm.push_back(tile);
    for (const GemmTile &split : getSplitKTiles(tile, k))
      gemm.push_back(split);
  }
  std::vector<RowTile> copy = enumerateRowTiles(false, bytes, device);
  // The copy writes each window element and reads the input once (the
  // taps' reads of one pixel meet in the caches): per element written,
  // its bytes and the input's share, strides*strides/taps of them.
  int64_t readShare = (bytes * first.strideH * first.strideW + taps - 1) / taps;
  auto best = [](const auto &tiles, auto predict) {
    double seconds = std::numeric_limits<double>::infinity();
    for (const auto &tile : tiles)
      seconds = std::min(seconds, predict(tile));
    return seconds;
  };
  // A grouped conv's copy holds every group's windows, each group's
  // channels together; its GEMM is one per image and group (a grouped 1x1
  // conv: dyncc-pointwise-conv-as-gemm's batched form), and it has no
  // folded form.
  for (const ConvProblem &p : points) {
    ConvFormTimes &t = times.emplace_back();
    t.direct = best(direct, [&](const ConvTile &t) {
      return predictConv(t, p, device).seconds;
    });
    GemmProblem g;
    g.batch = p.batch * p.groups;
    g.m = p.outC;
    g.n = p.outH * p.outW;
    g.k = k;
    g.operandBytes = g.outputBytes = bytes;
    t.gemm = best(gemm, [&](const GemmTile &t) {
      return predictGemm(t, g, device).seconds;
    });
    auto bestRows = [&](const RowProblem &r) {
      return best(copy, [&](const RowTile &t) {
        return predictRows(t, r, device).seconds;
      });
    };
    // The copy's [batch, k, outH, outW]: blocks may span k's planes.
    RowProblem r;
    r.batch = p.batch * k * p.groups;
    r.planes = k * p.groups;
    r.rows = p.outH;
    r.length = p.outW;
    r.elementBytes = bytes;
    r.bytesPerElement = bytes + readShare;
    r.scalarAccess = true; // a gather
    t.copy = bestRows(r);
    // Folded: [k, batch, outH, outW], blocks spanning the batch's planes;
    // one GEMM over every image's pixels; its [outC, batch, outH, outW]
    // read and written as NCHW (the conv's epilogue, a relu or a residual
    // add, then runs in that pass rather than in the GEMM's).
    if (p.groups > 1) {
      t.foldedCopy = t.foldedGemm = t.unfold =
          std::numeric_limits<double>::infinity();
      continue;
    }
    r.planes = p.batch;
    t.foldedCopy = bestRows(r);
    GemmProblem folded = g;
    folded.batch = 1;
    folded.n = p.batch * p.outH * p.outW;
    t.foldedGemm = best(gemm, [&](const GemmTile &t) {
      return predictGemm(t, folded, device).seconds;
    });
    RowProblem unfold;
    unfold.batch = p.batch * p.outC;
    unfold.planes = p.outC;
    unfold.rows = p.outH;
    unfold.length = p.outW;
    unfold.elementBytes = bytes;
    unfold.bytesPerElement = 2 * bytes;
    unfold.scalarAccess = true; // a transpose
    t.unfold = bestRows(unfold);
  }
  return times;
}

/// The geometric mean of `ratio` over `times` (1 for none).
template <typename Ratio>
static double getGeometricMean(const std::vector<ConvFormTimes> &times,
                               Ratio ratio) {
  if (times.empty())
    return 1;
  double logs = 0;
  for (const ConvFormTimes &t : times)
    logs += std::log(ratio(t));
  return std::exp(logs / double(times.size()));
}

double dyncc::cost::getIm2ColRatio(const std::vector<ConvFormTimes> &times,
                                   bool fold) {
  return getGeometricMean(
      times, [&](const ConvFormTimes &t) { return t.im2col(fold) / t.direct; });
}

double dyncc::cost::getFoldRatio(const std::vector<ConvFormTimes> &times) {
  return getGeometricMean(
      times, [](const ConvFormTimes &t) { return t.folded() / t.perImage(); });
}
