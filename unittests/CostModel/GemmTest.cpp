//===- GemmTest.cpp - GEMM candidates, constraints and the model -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Gemm.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <set>

using namespace dyncc::cost;

namespace {

GemmProblem half(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.batch = batch;
  p.operandBytes = 2;
  p.outputBytes = 2;
  return p;
}

/// A tensor-core tile: block, warp and thread tiles (M x N), k-step, stages.
GemmTile tensorCoreTile(int64_t block, int64_t warp, int64_t threadM,
                        int64_t threadN, int64_t kStep, int64_t stages) {
  GemmTile t;
  t.tensorCores = true;
  t.blockM = t.blockN = block;
  t.warpM = t.warpN = warp;
  t.threadM = threadM;
  t.threadN = threadN;
  t.kStep = kStep;
  t.stages = stages;
  return t;
}

/// The best tile of `tiles` for `problem` on `device`.
/// `tiles` and their split-K candidates for a static K of `k`.
std::vector<GemmTile> withSplitKTiles(const std::vector<GemmTile> &tiles,
                                      int64_t k) {
  std::vector<GemmTile> all = tiles;
  for (const GemmTile &tile : tiles)
    for (const GemmTile &split : getSplitKTiles(tile, k))
      all.push_back(split);
  return all;
}

const GemmTile &bestTile(const std::vector<GemmTile> &tiles,
                         const GemmProblem &problem, const Device &device) {
  size_t best = 0;
  double bestTime = predictGemm(tiles[0], problem, device).seconds;
  for (size_t i = 1; i < tiles.size(); ++i) {
    double t = predictGemm(tiles[i], problem, device).seconds;
    if (t < bestTime) {
      bestTime = t;
      best = i;
    }
  }
  return tiles[best];
}

// Every candidate of every device, for both operand widths, satisfies each
// hard constraint, checked here independently of checkConstraints.
TEST(GemmCandidates, EveryCandidateSatisfiesEveryHardConstraint) {
  for (const Device &device : getDevices())
    for (int64_t bytes : {2, 4}) {
      std::vector<GemmTile> tiles = enumerateGemmTiles(bytes, device);
      ASSERT_GT(tiles.size(), 50u) << device.name;
      bool sawTensorCores = false, sawSimt = false;
      for (const GemmTile &t : tiles) {
        SCOPED_TRACE(device.name + ": " + t.str());
        sawTensorCores |= t.tensorCores;
        sawSimt |= !t.tensorCores;
        // Each level a multiple of the one below.
        ASSERT_EQ(t.blockM % t.threadM, 0);
        ASSERT_EQ(t.blockN % t.threadN, 0);
        int64_t threads = (t.blockM / t.threadM) * (t.blockN / t.threadN);
        ASSERT_EQ(threads % 32, 0);
        ASSERT_LE(threads, device.maxThreadsPerBlock);
        if (t.tensorCores) {
          ASSERT_EQ(bytes, 2);
          ASSERT_EQ(t.blockM % t.warpM, 0);
          ASSERT_EQ(t.blockN % t.warpN, 0);
          ASSERT_EQ(t.warpM % 16, 0);
          ASSERT_EQ(t.warpN % 8, 0);
          ASSERT_EQ(t.kStep % 16, 0);
          ASSERT_EQ((t.blockM / t.warpM) * (t.blockN / t.warpN) * 32, threads);
        }
        // 16-byte rows.
        ASSERT_EQ(t.kStep * bytes % 16, 0);
        ASSERT_EQ(t.blockN * bytes % 16, 0);
        // Shared memory: stages of both operands' tiles, whose bytes the
        // f32 accumulator takes after the k-steps, within the block limit.
        int64_t shared = std::max(
            t.stages * (t.blockM * t.kStep + t.kStep * t.blockN) * bytes,
            t.blockM * t.blockN * 4);
        ASSERT_LE(shared, device.maxSharedBytesPerBlock);
        GemmResources r = estimateResources(t, bytes);
        ASSERT_GE(r.sharedBytes, shared);
        ASSERT_LE(r.registersPerThread, 255 - kRegisterHeadroom);
        ASSERT_GE(getBlocksPerSm(t, bytes, device), 1);
        ASSERT_FALSE(checkConstraints(t, bytes, device).has_value());
      }
      EXPECT_EQ(sawTensorCores, bytes == 2) << device.name;
      EXPECT_TRUE(sawSimt) << device.name;
    }
}

TEST(GemmCandidates, EachConstraintRejects) {
  const Device &h200 = *lookupDevice("h200");
  GemmTile ok = tensorCoreTile(64, 32, 4, 8, 32, 3);
  ASSERT_FALSE(checkConstraints(ok, 2, h200).has_value());
  auto rejects = [&](GemmTile t, int64_t bytes, const char *what) {
    std::optional<std::string> why = checkConstraints(t, bytes, h200);
    ASSERT_TRUE(why.has_value()) << t.str();
    EXPECT_NE(why->find(what), std::string::npos) << *why;
  };
  GemmTile t = ok;
  t.warpM = 48;
  rejects(t, 2, "warp tile does not divide");
  t = ok;
  t.kStep = 8;
  rejects(t, 2, "multiples of mma");
  rejects(ok, 4, "tensor cores take f16 or bf16");
  t = ok;
  t.threadN = 4;
  rejects(t, 2, "warps do not fill");
  t = ok;
  t.blockM = t.blockN = 256;
  t.warpM = t.warpN = 64;
  t.threadM = 8;
  t.threadN = 16;
  t.stages = 8;
  t.kStep = 64;
  rejects(t, 2, "shared memory");
  t = ok;
  t.blockM = t.blockN = 128;
  t.warpM = t.warpN = 128;
  t.threadM = 16;
  t.threadN = 32;
  rejects(t, 2, "registers per thread");
  GemmTile simt;
  simt.blockM = 32;
  simt.blockN = 64;
  simt.threadM = 4;
  simt.threadN = 4;
  simt.kStep = 16;
  ASSERT_FALSE(checkConstraints(simt, 4, h200).has_value());
  t = simt;
  t.threadN = 8;
  t.blockM = 8;
  rejects(t, 4, "whole warps");
  t = simt;
  t.kStep = 2;
  rejects(t, 4, "16-byte chunks");
  t = simt;
  t.blockM = 128;
  t.blockN = 256;
  t.threadM = 1;
  t.threadN = 1;
  rejects(t, 4, "exceed 1024");
}

TEST(GemmCandidates, TilesPrintAsTileConfigs) {
  GemmTile t = tensorCoreTile(64, 32, 4, 8, 32, 3);
  EXPECT_EQ(t.str(), "block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 3");
  GemmTile s;
  s.blockM = 32;
  s.blockN = 64;
  s.threadM = s.threadN = 4;
  s.kStep = 16;
  EXPECT_EQ(s.str(), "block 32x64 thread 4x4 k 16");
}

// Heads narrower than the usual SIMT N tiles (32): the narrow candidates
// have a block N that divides the head and is a whole number of 16-byte
// rows, satisfy every constraint, and cover every thread tile that fits;
// heads of fewer than 16 bytes, or of 32 columns or more (the usual tiles
// divide those), have none.
TEST(GemmCandidates, NarrowHeadsHaveTilesThatDivideThem) {
  for (const Device &device : getDevices())
    for (int64_t bytes : {2, 4})
      for (int64_t head : {1, 2, 4, 6, 8, 12, 16, 24, 32, 64}) {
        SCOPED_TRACE(device.name + ": head " + std::to_string(head) + " x " +
                     std::to_string(bytes) + " bytes");
        std::vector<GemmTile> tiles =
            enumerateNarrowGemmTiles(bytes, device, head);
        bool anyWidth = false;
        for (int64_t n = 1; n <= head; ++n)
          anyWidth |= head % n == 0 && (n * bytes) % 16 == 0;
        if (head >= 32 || !anyWidth) {
          EXPECT_TRUE(tiles.empty());
          continue;
        }
        ASSERT_FALSE(tiles.empty());
        std::set<int64_t> widths;
        for (const GemmTile &t : tiles) {
          SCOPED_TRACE(t.str());
          ASSERT_FALSE(t.tensorCores);
          ASSERT_EQ(head % t.blockN, 0);
          ASSERT_EQ((t.blockN * bytes) % 16, 0);
          ASSERT_FALSE(checkConstraints(t, bytes, device).has_value());
          widths.insert(t.blockN);
        }
        // The head itself where it is a whole number of rows.
        if ((head * bytes) % 16 == 0)
          EXPECT_TRUE(widths.count(head));
      }
}

// Random problems on every device: predictions are positive and finite,
// efficiencies in (0, 1], and a tile's time does not fall as M grows.
TEST(GemmModel, PredictionsAreSaneOnRandomProblems) {
  std::mt19937_64 rng(7);
  for (const Device &device : getDevices())
    for (int64_t bytes : {2, 4}) {
      std::vector<GemmTile> tiles = enumerateGemmTiles(bytes, device);
      for (int trial = 0; trial < 40; ++trial) {
        GemmProblem p = half(1 + rng() % 3000, 1 + rng() % 4096,
                             1 + rng() % 4096, 1 + rng() % 4);
        p.operandBytes = p.outputBytes = bytes;
        const GemmTile &t = tiles[rng() % tiles.size()];
        SCOPED_TRACE(device.name + ": " + t.str());
        GemmPrediction a = predictGemm(t, p, device);
        ASSERT_GT(a.seconds, 0);
        ASSERT_TRUE(std::isfinite(a.seconds));
        ASSERT_GT(a.paddingEfficiency, 0);
        ASSERT_LE(a.paddingEfficiency, 1.0 + 1e-12);
        ASSERT_GT(a.waveEfficiency, 0);
        ASSERT_LE(a.waveEfficiency, 1.0 + 1e-12);
        GemmProblem bigger = p;
        bigger.m += 1 + rng() % 1000;
        ASSERT_GE(predictGemm(t, bigger, device).seconds, a.seconds * 0.999);
      }
    }
}

// Wave quantization: one block more than a wave holds costs a second wave.
TEST(GemmModel, WaveQuantizationCliff) {
  const Device &a100 = *lookupDevice("a100");
  GemmTile t = tensorCoreTile(128, 64, 8, 16, 32, 3);
  int64_t perSm = getBlocksPerSm(t, 2, a100);
  ASSERT_GE(perSm, 1);
  int64_t slots = a100.sms * perSm;
  // 9 blocks along N and slots / 9 along M (108 SMs): exactly one wave, and
  // one row more takes a second. M, N and K large enough for compute to
  // dominate.
  ASSERT_EQ(slots % 9, 0);
  int64_t m = 128 * (slots / 9), n = 128 * 9;
  GemmPrediction full = predictGemm(t, half(m, n, 8192), a100);
  GemmPrediction over = predictGemm(t, half(m + 1, n, 8192), a100);
  EXPECT_STREQ(full.bound, "compute");
  EXPECT_EQ(full.waves, 1);
  EXPECT_EQ(over.waves, 2);
  EXPECT_GT(over.seconds, 1.5 * full.seconds);
  EXPECT_LT(over.waveEfficiency, 0.6);
}

// Small M: a tensor-core 128x128 tile wastes nearly all its rows and
// leaves SMs idle; the model prefers SIMT or small tiles.
TEST(GemmModel, SmallMPrefersSimtOrSmallTiles) {
  for (const char *name : {"a100", "h200"}) {
    const Device &device = *lookupDevice(name);
    std::vector<GemmTile> tiles = enumerateGemmTiles(2, device);
    for (int64_t m : {1, 2, 4, 8}) {
      const GemmTile &best = bestTile(tiles, half(m, 768, 768), device);
      SCOPED_TRACE(std::string(name) + " M=" + std::to_string(m) + ": " +
                   best.str());
      EXPECT_TRUE(!best.tensorCores || best.blockM <= 16);
      EXPECT_LE(best.blockM, 16);
    }
  }
}

// Large M, N and K: tensor-core tiles of 128x128 or more. (At 4096^3 the
// A100's 1024 blocks of 128x128 leave a tenth of a wave, and 64x128 tiles
// tie; the model prefers them there.) Compute-bound at the calibrated
// mma.sync rate, the stages hardly matter there: the best pipelined tile
// is within 2% of the best.
TEST(GemmModel, LargeProblemsPreferLargeTensorCoreTiles) {
  for (const char *name : {"a100", "h100", "h200"}) {
    const Device &device = *lookupDevice(name);
    std::vector<GemmTile> tiles = enumerateGemmTiles(2, device);
    GemmProblem p = half(8192, 4096, 4096);
    const GemmTile &best = bestTile(tiles, p, device);
    SCOPED_TRACE(std::string(name) + ": " + best.str());
    EXPECT_TRUE(best.tensorCores);
    EXPECT_GE(best.blockM * best.blockN, 128 * 128);
    double pipelined = 1e30;
    for (const GemmTile &t : tiles)
      if (t.stages > 1)
        pipelined = std::min(pipelined, predictGemm(t, p, device).seconds);
    EXPECT_LT(pipelined, 1.02 * predictGemm(best, p, device).seconds);
  }
}

// f32 operands never get tensor cores; a tensor-core tile beats every SIMT
// tile on a large f16 problem by more than 2x (the peak rates differ 16x;
// code generation's mma.sync kernels reach a fifth of theirs, as measured,
// kMmaSyncEfficiency).
TEST(GemmModel, TensorCoresBeatSimtWhenComputeBound) {
  const Device &a100 = *lookupDevice("a100");
  for (const GemmTile &t : enumerateGemmTiles(4, a100))
    ASSERT_FALSE(t.tensorCores);
  std::vector<GemmTile> tiles = enumerateGemmTiles(2, a100);
  GemmProblem p = half(4096, 4096, 4096);
  double bestTc = 1e30, bestSimt = 1e30;
  for (const GemmTile &t : tiles) {
    double s = predictGemm(t, p, a100).seconds;
    double &best = t.tensorCores ? bestTc : bestSimt;
    best = std::min(best, s);
  }
  EXPECT_LT(bestTc * 2, bestSimt);
  // And the best is within reach of the peak (not above it).
  EXPECT_GT(bestTc, p.flops() / a100.mmaSyncHalfFlopsPerSecond);
}

} // namespace

// SIMT products of 2-byte operands run at half the FP32 rate (each half is
// converted to f32 first; kSimtHalfOperandEfficiency, measured on the
// H200): compute-bound, a SIMT tile takes at least 1.5x longer in f16 than
// in f32, though it moves half the bytes. Without the factor f16 was
// predicted no slower.
TEST(GemmModel, SimtHalfOperandsRunAtHalfRate) {
  const Device &h200 = *lookupDevice("h200");
  GemmTile simt;
  simt.blockM = simt.blockN = 64;
  simt.threadM = simt.threadN = 8;
  simt.kStep = 32;
  simt.stages = 2;
  GemmProblem f16 = half(4096, 4096, 4096);
  GemmProblem f32 = f16;
  f32.operandBytes = f32.outputBytes = 4;
  ASSERT_FALSE(checkConstraints(simt, 2, h200).has_value());
  ASSERT_FALSE(checkConstraints(simt, 4, h200).has_value());
  EXPECT_GE(predictGemm(simt, f16, h200).seconds,
            1.5 * predictGemm(simt, f32, h200).seconds);
}

TEST(GemmTest, ParsesKernelConfigsBack) {
  // Every candidate's text parses back to the same tile, and a batched
  // kernel's config (a leading batch tile of 1) to its innermost two.
  for (const Device &device : getDevices())
    for (int64_t bytes : {2, 4})
      for (const GemmTile &tile : enumerateGemmTiles(bytes, device)) {
        std::optional<GemmTile> back = parseGemmTile(tile.str());
        ASSERT_TRUE(back.has_value()) << tile.str();
        EXPECT_TRUE(*back == tile) << tile.str();
      }
  std::optional<GemmTile> batched = parseGemmTile(
      "block 1x1x64x128 warp 1x1x32x64 thread 1x1x8x8 k 32 mma 16x8x16 "
      "stages 3");
  ASSERT_TRUE(batched.has_value());
  EXPECT_TRUE(batched->tensorCores);
  EXPECT_EQ(batched->blockM, 64);
  EXPECT_EQ(batched->blockN, 128);
  EXPECT_EQ(batched->warpN, 64);
  EXPECT_EQ(batched->stages, 3);
  for (const char *bad :
       {"", "block 32x64", "block 32x64 thread 4x4 k x", "block 0x64 thread "
        "4x4 k 16", "block 1x4x32 thread 1x1x1 k 64 reduce warp",
        "block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x8", "block 32"})
    EXPECT_FALSE(parseGemmTile(bad).has_value()) << bad;
}

TEST(GemmTest, MeasuredRegistersSetOccupancy) {
  // ptxas' count replaces the estimate: more registers, fewer blocks per SM
  // and a slower prediction where the grid is larger than one wave.
  const Device &h100 = *lookupDevice("h100");
  std::optional<GemmTile> tile = parseGemmTile("block 64x64 thread 4x4 k 16");
  ASSERT_TRUE(tile.has_value());
  GemmProblem problem;
  problem.m = 8192;
  problem.n = 4096;
  problem.k = 1024;
  int64_t estimated = getBlocksPerSm(*tile, 4, h100);
  double before = predictGemm(*tile, problem, h100).seconds;
  tile->registers = 255;
  EXPECT_LT(getBlocksPerSm(*tile, 4, h100), estimated);
  EXPECT_GT(predictGemm(*tile, problem, h100).seconds, before);
  // Measured counts need no headroom, but may not exceed the limit.
  EXPECT_FALSE(checkConstraints(*tile, 4, h100).has_value());
  tile->registers = 256;
  EXPECT_TRUE(checkConstraints(*tile, 4, h100).has_value());
}


TEST(GemmTest, MeasuredSharedMemorySetsOccupancy) {
  // A known shared size (ptxas' report of the compiled kernel) replaces the
  // estimate: fewer blocks per SM, and a block too large no longer fits.
  const Device &h200 = *lookupDevice("h200");
  std::optional<GemmTile> tile =
      parseGemmTile("block 64x64 thread 4x4 k 16 stages 3");
  ASSERT_TRUE(tile.has_value());
  int64_t estimated = estimateResources(*tile, 4).sharedBytes;
  int64_t blocks = getBlocksPerSm(*tile, 4, h200);
  tile->sharedBytes = 3 * estimated;
  EXPECT_EQ(estimateResources(*tile, 4).sharedBytes, 3 * estimated);
  EXPECT_LT(getBlocksPerSm(*tile, 4, h200), blocks);
  tile->sharedBytes = h200.maxSharedBytesPerBlock;
  EXPECT_TRUE(checkConstraints(*tile, 4, h200).has_value());
}

TEST(GemmTest, AccumulatorTakesTheOperandTilesBytes) {
  // The block's f32 accumulator lives after the k-steps, its operand tiles
  // during them: one block needs the larger (a block's only product), and
  // products in turn the sum of each's.
  const Device &h200 = *lookupDevice("h200");
  std::optional<GemmTile> tile = parseGemmTile(
      "block 128x256 warp 64x64 thread 16x8 k 64 mma 16x8x16 stages 3");
  ASSERT_TRUE(tile.has_value());
  // Rows padded by 16 bytes: 128 x 144 and 64 x 528 bytes per stage.
  int64_t operands = 3 * (128 * 144 + 64 * 528);
  int64_t accumulator = 128 * 256 * 4;
  EXPECT_EQ(estimateSharedBytes(*tile, 2, /*overlapAccumulator=*/false),
            operands + accumulator);
  EXPECT_EQ(estimateSharedBytes(*tile, 2, /*overlapAccumulator=*/true),
            operands);
  EXPECT_EQ(estimateResources(*tile, 2).sharedBytes, operands);
  // 153 KB fits an H200 block, where the two side by side (281 KB) did not.
  EXPECT_FALSE(checkConstraints(*tile, 2, h200).has_value());
  tile->stages = 1;
  EXPECT_EQ(estimateResources(*tile, 2).sharedBytes, accumulator);
}

TEST(GemmModel, ProductsShareTheGridAndRunInTurn) {
  // Three products of one A (fused Q, K and V): the grid of one, each block
  // three tiles in turn, so about three times the time and the flops; A's
  // bytes are read once, not three times.
  const Device &h200 = *lookupDevice("h200");
  std::optional<GemmTile> tile =
      parseGemmTile("block 32x64 thread 4x4 k 16 stages 2");
  ASSERT_TRUE(tile.has_value());
  for (int64_t m : {1, 17, 384, 4096}) {
    GemmProblem one;
    one.m = m;
    one.n = 768;
    one.k = 768;
    GemmProblem three = one;
    three.products = 3;
    GemmPrediction a = predictGemm(*tile, one, h200);
    GemmPrediction b = predictGemm(*tile, three, h200);
    EXPECT_EQ(b.blocks, a.blocks) << m;
    EXPECT_DOUBLE_EQ(three.flops(), 3 * one.flops());
    EXPECT_DOUBLE_EQ(b.paddingEfficiency, a.paddingEfficiency) << m;
    EXPECT_GT(b.seconds, 2.5 * a.seconds) << m;
    EXPECT_LE(b.seconds, 3.0 * a.seconds + 1e-12) << m;
  }
}

// Split-K: small tiles only, parts of whole k-steps of K, and each split
// tile satisfies the hard constraints and prints and parses back.
TEST(GemmSplitK, CandidatesAreInWholeKSteps) {
  const Device &h100 = *lookupDevice("h100");
  size_t splits = 0, largeSplits = 0;
  for (int64_t bytes : {2, 4})
    for (const GemmTile &tile : enumerateGemmTiles(bytes, h100))
      for (int64_t k : {768, 3072, 96, 100}) {
        std::vector<GemmTile> split = getSplitKTiles(tile, k);
        if (tile.blockM > 16 || tile.blockN > 128)
          largeSplits += split.size();
        for (const GemmTile &t : split) {
          ++splits;
          SCOPED_TRACE(t.str() + " K=" + std::to_string(k));
          EXPECT_GT(t.splitK, 1);
          EXPECT_EQ(k % (t.splitK * t.kStep), 0);
          EXPECT_FALSE(checkConstraints(t, bytes, h100).has_value());
          std::optional<GemmTile> parsed = parseGemmTile(t.str());
          ASSERT_TRUE(parsed.has_value());
          EXPECT_TRUE(*parsed == t);
          EXPECT_FALSE(*parsed == tile);
        }
        if (k == 100)
          EXPECT_TRUE(split.empty()) << tile.str(); // 100 = 4 x 25
      }
  EXPECT_GT(splits, 1000u);
  // Large tiles split too (below: without them, the rate falls off a cliff
  // where small tiles' splits stop applying).
  EXPECT_GT(largeSplits, 1000u);
}

// The best candidate's time as M grows by one row never jumps: for a deep
// K and few columns (an im2col 3x3 conv's GEMM, 256 -> 256 channels), the
// unsplit grid of a large tile leaves SMs idle up to thousands of rows, and
// only a split of it fills them. With splits of small tiles alone, the best
// time rose 2.0x (f16) and 2.4x (f32: 15.3 to 6.3 TFLOP/s on an H200) from
// M = 528 to 529, where their split grids passed two waves.
TEST(GemmSplitK, BestTimeHasNoCliffBetweenRows) {
  for (int64_t bytes : {2, 4}) {
    const Device &h200 = *lookupDevice("h200");
    std::vector<GemmTile> all =
        withSplitKTiles(enumerateGemmTiles(bytes, h200), 2304);
    GemmProblem problem;
    problem.n = 256;
    problem.k = 2304;
    problem.operandBytes = problem.outputBytes = bytes;
    double last = 0;
    for (int64_t m = 1; m <= 4096; m += m < 1024 ? 1 : 7) {
      problem.m = m;
      double best =
          predictGemm(bestTile(all, problem, h200), problem, h200).seconds;
      ASSERT_TRUE(std::isfinite(best)) << m;
      // Wave quantization remains (a split of 4 one wave at M = 2,109,
      // two at 2,116: 1.5-1.6x).
      if (last != 0)
        EXPECT_LT(best, 1.75 * last) << bytes << "-byte operands, M = " << m;
      last = best;
    }
  }
}

// Few rows of a deep K: a split beats every unsplit tile (the unsplit grid
// leaves most SMs idle); many rows: splits apply only to the largest tiles
// and none is the best.
TEST(GemmSplitK, SplitsWinForFewRowsAndDoNotApplyForMany) {
  for (const char *name : {"a100", "h100", "h200"}) {
    const Device &device = *lookupDevice(name);
    std::vector<GemmTile> unsplit = enumerateGemmTiles(4, device);
    std::vector<GemmTile> all = withSplitKTiles(unsplit, 3072);
    GemmProblem few;
    few.m = 4;
    few.n = 768;
    few.k = 3072;
    const GemmTile &best = bestTile(all, few, device);
    SCOPED_TRACE(std::string(name) + ": " + best.str());
    EXPECT_GT(best.splitK, 1);
    double split = predictGemm(best, few, device).seconds;
    double whole =
        predictGemm(bestTile(unsplit, few, device), few, device).seconds;
    EXPECT_LT(split, whole);
    // The split's blocks: the unsplit grid's times the parts.
    GemmTile one = best;
    one.splitK = 1;
    EXPECT_EQ(predictGemm(best, few, device).blocks,
              predictGemm(one, few, device).blocks * best.splitK);

    // Many rows: a split applies only to a tile so large that its
    // unsplit grid has fewer blocks than SMs, split into at most two
    // waves of one block per SM; the best tile is unsplit.
    GemmProblem many = few;
    many.m = 4096;
    size_t applied = 0;
    for (const GemmTile &tile : all) {
      GemmPrediction p = predictGemm(tile, many, device);
      int64_t grid = ((many.m + tile.blockM - 1) / tile.blockM) *
                     ((many.n + tile.blockN - 1) / tile.blockN);
      bool applies = tile.splitK == 1 || (grid < device.sms &&
                                          grid * tile.splitK <= 2 * device.sms);
      EXPECT_EQ(std::isfinite(p.seconds), applies) << tile.str();
      if (!applies)
        EXPECT_STREQ(p.bound, "split");
      applied += applies && tile.splitK > 1;
    }
    EXPECT_GT(applied, 0u);
    EXPECT_EQ(bestTile(all, many, device).splitK, 1);
  }
}
