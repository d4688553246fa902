//===- ConvTest.cpp - Conv tile candidates and their time -----------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Conv.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Partition.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace dyncc::cost;

namespace {

ConvProblem conv(int64_t batch, int64_t outC, int64_t outHW, int64_t inC,
                 int64_t taps, int64_t stride = 1) {
  ConvProblem p;
  p.batch = batch;
  p.outC = outC;
  p.outH = p.outW = outHW;
  p.inC = inC;
  p.kh = p.kw = taps;
  p.strideH = p.strideW = stride;
  return p;
}

/// The default conv config for a 3x3 window (TileConfig::getDefault with
/// the k-step of AssignTileConfig's getConvKStep).
ConvTile defaultTile(int64_t kStep) {
  ConvTile t;
  t.blockC = 8;
  t.blockH = 4;
  t.blockW = 32;
  t.threadC = 2;
  t.threadH = 1;
  t.threadW = 4;
  t.setKStep(kStep);
  return t;
}

/// The fastest of `tiles` (a copy: callers may pass a temporary).
ConvTile best(const std::vector<ConvTile> &tiles, const ConvProblem &problem,
              const Device &device) {
  size_t b = 0;
  for (size_t i = 1; i < tiles.size(); ++i)
    if (predictConv(tiles[i], problem, device).seconds <
        predictConv(tiles[b], problem, device).seconds)
      b = i;
  return tiles[b];
}

const Device &h200() { return *lookupDevice("h200"); }

// Property test: over random problems and every device, every candidate
// keeps every rule code generation and the hardware impose. The shared
// bytes are recomputed here from the window's geometry, not taken from the
// model's estimate.
TEST(ConvCandidates, EveryCandidateSatisfiesEveryHardConstraint) {
  std::mt19937 rng(7);
  auto pick = [&](std::initializer_list<int64_t> values) {
    std::uniform_int_distribution<size_t> d(0, values.size() - 1);
    return *(values.begin() + d(rng));
  };
  for (int trial = 0; trial < 18; ++trial) {
    ConvProblem p = conv(pick({1, 3, 8}), pick({16, 64, 256}),
                         pick({7, 28, 56}), pick({3, 16, 64, 512}),
                         pick({1, 3, 5, 7}), pick({1, 2}));
    p.dilationH = p.dilationW = pick({1, 2});
    // A third of the problems grouped: depthwise, or groups of a few
    // channels (28 output channels a group, as ShuffleNet's).
    if (trial % 3 == 1) {
      p.groups = p.outC;
      p.inC = p.outC = 1;
    } else if (trial % 3 == 2) {
      p.groups = pick({2, 4});
      p.inC = pick({1, 6, 28});
      p.outC = pick({1, 28, 64});
    }
    // A sixth of them 1-D: no rows, a longer row of columns.
    if (trial % 6 == 5 || trial % 6 == 4) {
      p.spatialDims = 1;
      p.outH = p.kh = p.strideH = p.dilationH = 1;
      p.outW *= 16;
    }
    for (const Device &device : getDevices()) {
      std::vector<ConvTile> tiles = enumerateConvTiles(p, device);
      ASSERT_GT(tiles.size(), 20u) << device.name;
      for (const ConvTile &t : tiles) {
        SCOPED_TRACE(device.name + ": " + t.str() + " for " +
                     std::to_string(p.inC) + " channels, " +
                     std::to_string(p.kh) + "x" + std::to_string(p.kw));
        ASSERT_EQ(t.blockC % t.threadC, 0);
        ASSERT_EQ(t.blockH % t.threadH, 0);
        ASSERT_EQ(t.blockW % t.threadW, 0);
        int64_t threads = t.threads();
        ASSERT_EQ(threads % 32, 0);
        ASSERT_LE(threads, device.maxThreadsPerBlock);
        ASSERT_LE(t.blockC / t.threadC, 64);
        // The loops' steps: with a unit loop dropped, the largest k-step
        // for every loop (TileConfig::getKSteps).
        int64_t kc = t.kChannels, kr = t.kRows, ks = t.kColumns;
        if (p.inC == 1 || p.kh == 1 || p.kw == 1)
          kc = kr = ks = std::max({kc, kr, ks});
        int64_t c = std::min(kc, p.inC), r = std::min(kr, p.kh),
                s = std::min(ks, p.kw);
        // No step splits a filter row or column.
        ASSERT_EQ(p.kh % r, 0);
        ASSERT_EQ(p.kw % s, 0);
        ASSERT_LE(c * r * s, kMaxUnrolledTaps);
        ASSERT_LE(c * r * s * t.threadC * t.threadH * t.threadW,
                  kMaxUnrolledProducts);
        auto round16 = [](int64_t b) { return (b + 15) / 16 * 16; };
        // A block spanning groups reads each channel's own inputs.
        int64_t channels = p.groups > 1 && p.outC == 1 ? t.blockC * c : c;
        int64_t window =
            channels *
            ((t.blockH - 1) * p.strideH + (r - 1) * p.dilationH + 1) *
            ((t.blockW - 1) * p.strideW + (s - 1) * p.dilationW + 1);
        int64_t shared = round16(window * 4) + round16(t.blockC * c * r * s * 4);
        ASSERT_EQ(shared, estimateResources(t, p).sharedBytes);
        ASSERT_LE(shared, 48 * 1024);
        ASSERT_GE(getBlocksPerSm(t, p, device), 1);
        ASSERT_FALSE(checkConstraints(t, p, device).has_value());
        std::optional<ConvTile> parsed = parseConvTile(t.str());
        ASSERT_TRUE(parsed.has_value());
        ASSERT_EQ(*parsed, t);
        // A 1-D conv's tile has no rows and three sizes a level.
        ASSERT_EQ(t.spatialDims, p.spatialDims);
        if (p.spatialDims == 1) {
          ASSERT_EQ(t.blockH, 1);
          ASSERT_EQ(t.threadH, 1);
        }
      }
    }
  }
}

TEST(ConvCandidates, ConstraintsRejectWhatCodeGenerationCannotPromote) {
  const Device &d = h200();
  ConvProblem p = conv(1, 64, 56, 64, 7);
  ConvTile t = defaultTile(2);
  // 7 taps in steps of 2: the window would be split.
  ASSERT_TRUE(checkConstraints(t, p, d).has_value());
  EXPECT_NE(checkConstraints(t, p, d)->find("splits a filter of 7"),
            std::string::npos);
  t.setKStep(1);
  EXPECT_FALSE(checkConstraints(t, p, d).has_value());
  // Two channels by one filter row by its 7 columns: nothing split.
  t.kChannels = 2;
  t.kColumns = 7;
  EXPECT_FALSE(checkConstraints(t, p, d).has_value());
  t.kColumns = 2;
  ASSERT_TRUE(checkConstraints(t, p, d).has_value());
  EXPECT_NE(checkConstraints(t, p, d)->find("splits a filter of 7"),
            std::string::npos);
  // 16 channels of a 3x3 window: 144 multiply-adds per output per step.
  p = conv(1, 64, 56, 64, 3);
  t.setKStep(16);
  ASSERT_TRUE(checkConstraints(t, p, d).has_value());
  EXPECT_NE(checkConstraints(t, p, d)->find("144"), std::string::npos);
  t.setKStep(8);
  EXPECT_FALSE(checkConstraints(t, p, d).has_value());
  // More than 64 threads along z (channels).
  t.blockC = 128;
  t.threadC = 1;
  t.blockH = 1;
  t.threadW = 32;
  ASSERT_TRUE(checkConstraints(t, p, d).has_value());
  EXPECT_NE(checkConstraints(t, p, d)->find("channels"), std::string::npos);
}

TEST(ConvCandidates, ParseRejectsWhatIsNotAConvTile) {
  EXPECT_FALSE(parseConvTile("block 8x4x32 thread 2x1x4 k 8"));
  EXPECT_FALSE(parseConvTile("block 2x8x4x32 thread 1x2x1x4 k 8"));
  EXPECT_FALSE(parseConvTile("block 1x8x4x32 thread 1x2x1x4"));
  EXPECT_FALSE(parseConvTile("block 1x8x4x32 thread 1x2x1x4 k 8 reduce warp"));
  EXPECT_FALSE(parseConvTile("block 1x8x4x32 thread 1x2x1x4 k 8x1"));
  EXPECT_FALSE(parseConvTile("block 1x8x4x32 thread 1x2x1x4 k 8x0x1"));
  EXPECT_TRUE(parseConvTile("block 1x8x4x32 thread 1x2x1x4 k 8"));
  std::optional<ConvTile> perLoop =
      parseConvTile("block 1x8x4x32 thread 1x2x1x4 k 3x1x7");
  ASSERT_TRUE(perLoop);
  EXPECT_EQ(perLoop->kChannels, 3);
  EXPECT_EQ(perLoop->kRows, 1);
  EXPECT_EQ(perLoop->kColumns, 7);
  EXPECT_EQ(perLoop->str(), "block 1x8x4x32 thread 1x2x1x4 k 3x1x7");
  // A GEMM takes one k-step.
  EXPECT_FALSE(parseGemmTile("block 64x64 thread 4x4 k 16x16"));
}

// ResNet's stem: a 7x7 window over 3 channels. One k-step for all three
// loops leaves steps of one tap (147 of them; a step of 7 would unroll 147
// multiply-adds per output); a k-step per loop takes the channels and a
// filter row's 7 columns per step (7 steps), and the model prefers it by
// far: each step pays its copies' latency and barriers.
TEST(ConvModel, StemStepsAFilterRowAtATime) {
  const Device &d = h200();
  ConvProblem p = conv(32, 64, 112, 3, 7, 2);
  std::vector<ConvTile> tiles = enumerateConvTiles(p, d);
  ConvTile b = best(tiles, p, d);
  ConvSteps s = getConvSteps(b, p);
  EXPECT_GT(s.taps(), 1) << b.str();
  EXPECT_LT(s.steps, 49) << b.str();
  std::vector<ConvTile> uniform;
  for (const ConvTile &t : tiles)
    if (t.kChannels == t.kRows && t.kRows == t.kColumns)
      uniform.push_back(t);
  ASSERT_FALSE(uniform.empty());
  ConvTile u = best(uniform, p, d);
  EXPECT_EQ(getConvSteps(u, p).steps, 147) << u.str();
  EXPECT_GT(predictConv(u, p, d).seconds / predictConv(b, p, d).seconds, 1.5)
      << b.str() << " against " << u.str();
}

// A block tile the output's edge can cut short leaves its threads' tiles
// of dynamic size, whose outputs code generation loads and stores at every
// k-step (no registers across steps): the same blocks and steps cost more
// where the tile does not divide the map, or where the map's size is a
// symbol, and the search prefers tiles that divide a static map.
TEST(ConvModel, PartialTilesAccumulateInMemory) {
  const Device &d = h200();
  ConvTile t = defaultTile(8);
  t.blockW = 64;
  t.threadW = 4;
  t.blockC = 16;
  ConvProblem whole = conv(32, 64, 64, 64, 3);
  ConvProblem cut = conv(32, 64, 56, 64, 3);
  cut.outH = 64;
  ConvProblem symbolic = whole;
  symbolic.staticW = false;
  ASSERT_FALSE(checkConstraints(t, whole, d).has_value());
  EXPECT_FALSE(t.accumulatesInMemory(whole));
  EXPECT_TRUE(t.accumulatesInMemory(cut));
  EXPECT_TRUE(t.accumulatesInMemory(symbolic));
  ConvPrediction a = predictConv(t, whole, d), b = predictConv(t, cut, d),
                 c = predictConv(t, symbolic, d);
  ASSERT_EQ(a.blocks, b.blocks);
  EXPECT_GT(b.seconds, a.seconds * 1.02);
  EXPECT_NEAR(c.seconds, b.seconds, 1e-12);

  ConvProblem map = conv(32, 64, 56, 64, 3);
  ConvTile best56 = best(enumerateConvTiles(map, d), map, d);
  EXPECT_FALSE(best56.accumulatesInMemory(map)) << best56.str();
}

// One candidate per distinct step: a 1x1 conv's per-loop forms are all its
// uniform ones, so its candidates are as many as before per-loop steps.
TEST(ConvCandidates, StepsAreDistinct) {
  const Device &d = h200();
  for (int64_t taps : {1, 3, 7}) {
    ConvProblem p = conv(1, 64, 56, 64, taps);
    std::vector<ConvTile> tiles = enumerateConvTiles(p, d);
    for (size_t i = 0; i < tiles.size(); ++i)
      for (size_t j = i + 1; j < tiles.size() && j < i + 40; ++j) {
        ConvTile a = tiles[i], b = tiles[j];
        ConvSteps sa = getConvSteps(a, p), sb = getConvSteps(b, p);
        a.setKStep(0);
        b.setKStep(0);
        if (a == b)
          EXPECT_FALSE(sa.channels == sb.channels && sa.rows == sb.rows &&
                       sa.columns == sb.columns)
              << tiles[i].str() << " and " << tiles[j].str();
      }
    if (taps == 1)
      for (const ConvTile &t : tiles)
        EXPECT_TRUE(t.kChannels == t.kRows && t.kRows == t.kColumns) << t.str();
  }
}

// The manifest's and the attribute's `window` order, both ways; a window
// of the wrong length or with a value below 1 sets nothing.
TEST(ConvCandidates, WindowRoundTrips) {
  ConvProblem p = conv(1, 64, 56, 64, 3, 2);
  p.dilationW = 2;
  std::vector<int64_t> w = p.window();
  EXPECT_EQ(w, (std::vector<int64_t>{64, 3, 3, 2, 2, 1, 2}));
  ConvProblem q;
  ASSERT_TRUE(q.setWindow(w.data(), w.size()));
  EXPECT_EQ(q.window(), w);
  std::vector<int64_t> zero = {64, 3, 3, 0, 2, 1, 2};
  EXPECT_FALSE(q.setWindow(zero.data(), zero.size()));
  EXPECT_FALSE(q.setWindow(w.data(), 6));
  EXPECT_EQ(q.window(), w);
  // Groups follow where there are several, and are 1 where not given.
  p.groups = 4;
  w = p.window();
  EXPECT_EQ(w, (std::vector<int64_t>{64, 3, 3, 2, 2, 1, 2, 4}));
  ASSERT_TRUE(q.setWindow(w.data(), w.size()));
  EXPECT_EQ(q.groups, 4);
  EXPECT_EQ(q.window(), w);
  ASSERT_TRUE(q.setWindow(w.data(), 7));
  EXPECT_EQ(q.groups, 1);
  std::vector<int64_t> nine = {64, 3, 3, 2, 2, 1, 2, 4, 1};
  EXPECT_FALSE(q.setWindow(nine.data(), nine.size()));
}

// A 1-D conv ([N, C, L] over [C_in, K]) has tiles with no rows, written
// with three sizes a level, which code generation aligns to [N, C, L] (a
// 2-D tile's four sizes would put its channels on the batch). Each kind of
// problem rejects the other's tiles.
TEST(ConvCandidates, OneDimensionalTilesHaveNoRows) {
  const Device &d = h200();
  ConvProblem p = conv(4, 32, 1, 8, 1, 1);
  p.spatialDims = 1;
  p.outW = 4000;
  p.kw = 5;
  p.strideW = 2;
  std::vector<ConvTile> tiles = enumerateConvTiles(p, d);
  ASSERT_FALSE(tiles.empty());
  // Longer runs of columns than a 2-D conv's 64.
  EXPECT_TRUE(std::any_of(tiles.begin(), tiles.end(),
                          [](const ConvTile &t) { return t.blockW == 256; }));
  for (const ConvTile &t : tiles) {
    ASSERT_EQ(t.spatialDims, 1);
    ASSERT_EQ(t.blockH, 1);
    // Two loops (input channels and taps) step alike.
    ASSERT_TRUE(t.kChannels == t.kRows && t.kRows == t.kColumns) << t.str();
  }
  ConvTile t = tiles.front();
  std::string text = t.str();
  EXPECT_EQ(text.substr(0, 6), "block ");
  EXPECT_EQ(std::count(text.begin(), text.end(), 'x'), 4) << text;
  std::optional<ConvTile> parsed = parseConvTile(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, t);
  std::optional<ConvTile> flat =
      parseConvTile("block 1x16x128 thread 1x2x4 k 8");
  ASSERT_TRUE(flat);
  EXPECT_EQ(flat->spatialDims, 1);
  EXPECT_EQ(flat->blockH, 1);
  EXPECT_EQ(flat->blockW, 128);
  EXPECT_EQ(flat->str(), "block 1x16x128 thread 1x2x4 k 8");
  EXPECT_FALSE(checkConstraints(*flat, p, d).has_value());
  // The 2-D tile of the same sizes is not one for this conv, nor the 1-D
  // tile for a 2-D conv.
  ConvTile square = *flat;
  square.spatialDims = 2;
  ASSERT_TRUE(checkConstraints(square, p, d).has_value());
  EXPECT_NE(checkConstraints(square, p, d)->find("1-D"), std::string::npos);
  ConvProblem image = conv(4, 32, 56, 8, 3);
  EXPECT_TRUE(checkConstraints(*flat, image, d).has_value());
  EXPECT_FALSE(parseConvTile("block 1x16 thread 1x2 k 8"));
}

// A depthwise conv (one channel a group): code generation drops the unit
// loops, so a block's channel tile runs over the groups, and each of its
// channels reads its own input window; a grouped conv with several
// channels a group tiles a group's output channels, one group a block,
// all of them sharing the group's window.
TEST(GroupedConvs, BlocksSpanGroupsOnlyWhereAGroupHasOneChannel) {
  const Device &d = h200();
  ConvProblem depthwise = conv(2, 1, 28, 1, 3);
  depthwise.groups = 112;
  ASSERT_TRUE(depthwise.spansGroups());
  ConvTile t = defaultTile(3);
  t.blockW = 28;
  t.threadW = 7;
  t.threadC = 1;
  ASSERT_FALSE(checkConstraints(t, depthwise, d).has_value())
      << *checkConstraints(t, depthwise, d);
  // 2 images x 112/8 channel tiles x 28/4 rows x one tile of columns.
  EXPECT_EQ(predictConv(t, depthwise, d).blocks, 2 * 14 * 7);
  // Each of the 8 channels' windows: (4-1)+3 rows by (28-1)+3 columns, and
  // its 3x3 weights.
  EXPECT_EQ(estimateResources(t, depthwise).sharedBytes,
            8 * 6 * 30 * 4 + 8 * 9 * 4);
  EXPECT_NEAR(depthwise.flops(), 2.0 * 2 * 112 * 28 * 28 * 9, 1);

  ConvProblem grouped = conv(2, 28, 28, 28, 1);
  grouped.groups = 4;
  ASSERT_FALSE(grouped.spansGroups());
  t.setKStep(28);
  t.blockC = 28;
  ASSERT_FALSE(checkConstraints(t, grouped, d).has_value())
      << *checkConstraints(t, grouped, d);
  EXPECT_FALSE(t.accumulatesInMemory(grouped));
  // 2 images x 4 groups x one tile of the group's 28 channels x 7 x 1.
  EXPECT_EQ(predictConv(t, grouped, d).blocks, 2 * 4 * 7);
  // One window of the group's 28 channels, 4 rows by 28 columns.
  EXPECT_EQ(estimateResources(t, grouped).sharedBytes,
            28 * 4 * 28 * 4 + 28 * 28 * 4);
  // A channel tile that does not divide the group's 28 is cut at every
  // group's edge.
  t.blockC = 8;
  t.setKStep(8);
  EXPECT_TRUE(t.accumulatesInMemory(grouped));
  EXPECT_EQ(predictConv(t, grouped, d).blocks, 2 * 4 * 4 * 7);
  // The group's 28 channels are a candidate channel tile; 34 input
  // channels a group (past the largest power-of-two step, 32) are a
  // candidate step.
  std::vector<ConvTile> tiles = enumerateConvTiles(grouped, d);
  EXPECT_TRUE(std::any_of(tiles.begin(), tiles.end(),
                          [](const ConvTile &c) { return c.blockC == 28; }));
  ConvProblem wider = conv(2, 34, 28, 34, 1);
  wider.groups = 4;
  tiles = enumerateConvTiles(wider, d);
  EXPECT_TRUE(std::any_of(tiles.begin(), tiles.end(), [&](const ConvTile &c) {
    return getConvSteps(c, wider).steps == 1 && c.blockC == 34;
  }));
}

// With a unit reduction loop dropped (one input channel a group, or a
// filter of one row), the loops left all step by the tile's largest
// k-step: `k 1x1x3` is one step of a depthwise conv's 3x3 window, and a
// uniform step that splits its rows is rejected. Three loops keep their
// own steps.
TEST(GroupedConvs, UnitLoopsStepAlike) {
  const Device &d = h200();
  ConvProblem depthwise = conv(1, 1, 28, 1, 3);
  depthwise.groups = 64;
  ConvTile t = defaultTile(1);
  t.threadC = 1;
  t.kColumns = 3;
  ConvSteps s = getConvSteps(t, depthwise);
  EXPECT_EQ(s.rows, 3);
  EXPECT_EQ(s.columns, 3);
  EXPECT_EQ(s.steps, 1);
  ConvProblem dense = conv(1, 64, 28, 8, 3);
  s = getConvSteps(t, dense);
  EXPECT_EQ(s.rows, 1);
  EXPECT_EQ(s.columns, 3);
  EXPECT_EQ(s.steps, 8 * 3);
  ConvProblem five = conv(1, 1, 28, 1, 5);
  five.groups = 64;
  t.setKStep(4);
  ASSERT_TRUE(checkConstraints(t, five, d).has_value());
  EXPECT_NE(checkConstraints(t, five, d)->find("splits a filter of 5"),
            std::string::npos);
  // The candidates of a depthwise conv are uniform steps only.
  for (const ConvTile &c : enumerateConvTiles(depthwise, d))
    ASSERT_TRUE(c.kChannels == c.kRows && c.kRows == c.kColumns) << c.str();
}

// A grouped conv's bytes are every group's: at one 7x7 image, 64 groups of
// 64 -> 64 channels have 9.4 MB of weights, which the model's DRAM floor
// counts whole (one group's are 147 KB), with each group's 64 channels of
// input (a 9x9 window, padded) and output. A depthwise conv over 256
// channels does a 256th of the dense conv's work on the same outputs, and
// is predicted far faster, though not 256 times: it moves as many bytes a
// channel.
TEST(GroupedConvs, TimesCountEveryGroup) {
  const Device &d = h200();
  ConvProblem grouped = conv(1, 64, 7, 64, 3);
  grouped.groups = 64;
  double bytes = 4.0 * 64 * (64 * 64 * 9 + 64 * 9 * 9 + 64 * 7 * 7);
  for (const ConvTile &t : enumerateConvTiles(grouped, d)) {
    ConvPrediction p = predictConv(t, grouped, d);
    ASSERT_DOUBLE_EQ(p.uniqueBytes, bytes) << t.str();
    ASSERT_GE(p.seconds, bytes / d.dramBytesPerSecond) << t.str();
  }
  ConvProblem depthwise = conv(32, 1, 56, 1, 3);
  depthwise.groups = 256;
  ConvProblem dense = conv(32, 256, 56, 256, 3);
  double a = predictConv(best(enumerateConvTiles(depthwise, d), depthwise, d),
                         depthwise, d)
                 .seconds;
  double b = predictConv(best(enumerateConvTiles(dense, d), dense, d), dense, d)
                 .seconds;
  EXPECT_GT(b / a, 16);
  EXPECT_LT(b / a, 256);
}

// A 7x7 feature map (ResNet-50's last stage): the default's 4x32 positions
// per block compute 3.7x the outputs there are; the search's best tile fits
// the map and is predicted well ahead (the k-steps' fixed cost, alike for
// both, keeps it from the 3.7x).
TEST(ConvModel, SmallFeatureMapsPreferSmallSpatialTiles) {
  const Device &d = h200();
  ConvProblem p = conv(1, 512, 7, 512, 3);
  std::vector<ConvTile> tiles = enumerateConvTiles(p, d);
  ConvTile b = best(tiles, p, d);
  EXPECT_LE(b.blockH * b.blockW, 64) << b.str();
  ConvPrediction fast = predictConv(b, p, d);
  ConvPrediction slow = predictConv(defaultTile(8), p, d);
  EXPECT_LT(slow.paddingEfficiency, 0.3);
  EXPECT_GT(fast.paddingEfficiency, slow.paddingEfficiency);
  EXPECT_GT(slow.seconds / fast.seconds, 1.3);
}

// Large maps and batches: the best tile reuses each loaded value over
// several outputs per thread (a register tile), and is compute- or
// shared-bound, not L2-bound.
TEST(ConvModel, LargeProblemsPreferRegisterTiles) {
  const Device &d = h200();
  ConvProblem p = conv(32, 256, 56, 256, 3);
  std::vector<ConvTile> tiles = enumerateConvTiles(p, d);
  ConvTile b = best(tiles, p, d);
  EXPECT_GE(b.threadC * b.threadH * b.threadW, 4) << b.str();
  EXPECT_GE(b.blockC * b.blockH * b.blockW, 512) << b.str();
  std::string bound = predictConv(b, p, d).bound;
  EXPECT_TRUE(bound == "compute" || bound == "shared") << bound;
}

// Wave quantization: with one block per SM (a 512-thread tile of 32
// outputs per thread), one block more than a wave costs a second wave;
// one block more within a wave costs nothing.
TEST(ConvModel, WaveQuantizationCliff) {
  const Device &d = h200();
  ConvTile t;
  t.blockC = 64;
  t.blockH = 8;
  t.blockW = 32;
  t.threadC = 4;
  t.threadH = 2;
  t.threadW = 4;
  t.setKStep(16);
  // One block per image: batch = blocks. A 1x1 conv over 256 channels.
  ConvProblem p = conv(1, t.blockC, t.blockH, 256, 1);
  p.outW = t.blockW;
  ASSERT_FALSE(checkConstraints(t, p, d).has_value());
  ASSERT_EQ(getBlocksPerSm(t, p, d), 1);
  auto at = [&](int64_t batch) {
    p.batch = batch;
    return predictConv(t, p, d);
  };
  EXPECT_EQ(at(d.sms).waves, 1);
  EXPECT_EQ(at(d.sms + 1).waves, 2);
  EXPECT_GT(at(d.sms + 1).seconds / at(d.sms).seconds, 1.5);
  EXPECT_LT(at(d.sms).seconds / at(d.sms - 1).seconds, 1.05);
}

// Partial steps: 3 input channels (a stem) in steps of 16 compute no more
// than the 3 there are (the step covers min(k-step, channels)), while 20
// channels in steps of 16 compute 32.
TEST(ConvModel, StepsCoverTheChannelsThereAre) {
  ConvTile t = defaultTile(16);
  ConvProblem stem = conv(1, 64, 112, 3, 1);
  ConvSteps s = getConvSteps(t, stem);
  EXPECT_EQ(s.channels, 3);
  EXPECT_EQ(s.steps, 1);
  ConvProblem odd = conv(1, 64, 112, 20, 1);
  s = getConvSteps(t, odd);
  EXPECT_EQ(s.channels, 16);
  EXPECT_EQ(s.steps, 2);
  t.blockC = 64;
  t.blockH = 4;
  t.blockW = 28;
  t.threadW = 4;
  ConvProblem exact = conv(1, 64, 112, 32, 1);
  EXPECT_NEAR(predictConv(t, exact, *lookupDevice("h200")).paddingEfficiency,
              1.0, 1e-12);
  EXPECT_NEAR(predictConv(t, odd, *lookupDevice("h200")).paddingEfficiency,
              20.0 / 32.0, 1e-12);
}

// Over a batch range, partitioning picks a small set whose table returns
// the brute-force argmin over the set at every point.
TEST(ConvModel, PartitionedBatchRangeLooksUpTheArgmin) {
  const Device &d = h200();
  ConvProblem p = conv(1, 128, 28, 128, 3);
  std::vector<ConvTile> tiles = enumerateConvTiles(p, d);
  auto predict = [&](size_t c, int64_t batch) {
    ConvProblem q = p;
    q.batch = batch;
    return predictConv(tiles[c], q, d).seconds;
  };
  PartitionOptions options;
  Partition part = partitionRange(tiles.size(), predict, 1, 64, options);
  ASSERT_GE(part.chosen.size(), 2u);
  ASSERT_LE(part.chosen.size(), options.cap);
  for (int64_t batch = 1; batch <= 64; ++batch) {
    size_t best = 0;
    for (size_t i = 1; i < part.chosen.size(); ++i)
      if (predict(part.chosen[i], batch) < predict(part.chosen[best], batch))
        best = i;
    EXPECT_EQ(part.table.lookup(batch), best) << batch;
  }
}

} // namespace

// The two forms of a windowed conv (dyncc-conv-im2col decides by them): a
// wide 3x3 conv in f16 runs on tensor cores after the copy, several times
// faster than on SIMT threads even with the copy's traffic, at every
// batch; a narrow one in f32 (8 -> 4 channels) has little arithmetic for
// the GEMM to win back and the copy writes 9 times its input, so it stays
// direct. The copy grows with the window: its time over the input's size
// is about the taps plus one, each written once and the input read.
TEST(ConvForms, TensorCoresPayForTheCopyOfWideConvs) {
  const Device &d = h200();
  std::vector<ConvProblem> wide;
  for (int64_t batch : {1, 8, 32}) {
    ConvProblem p = conv(batch, 256, 14, 256, 3);
    p.elementBytes = 2;
    wide.push_back(p);
  }
  std::vector<ConvFormTimes> times = predictConvForms(wide, d);
  ASSERT_EQ(times.size(), wide.size());
  for (const ConvFormTimes &t : times) {
    EXPECT_GT(t.copy, 0);
    EXPECT_GT(t.gemm, 0);
    EXPECT_DOUBLE_EQ(t.im2col(false), t.copy + t.gemm);
    EXPECT_LT(t.im2col(false), t.direct);
  }
  EXPECT_LT(getIm2ColRatio(times, false), 0.8);

  ConvProblem narrow = conv(1, 4, 56, 8, 3);
  narrow.elementBytes = 4;
  std::vector<ConvFormTimes> small = predictConvForms({narrow}, d);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_GT(getIm2ColRatio(small, false), 1.2);
}

// im2col's folded form is three kernels: the copy with the batch's planes,
// one GEMM over every image's pixels (batch 1, N = batch * pixels), and the
// transpose back to NCHW; per image and folded are each the sum of theirs,
// and getFoldRatio is the geometric mean of folded over per image.
TEST(ConvForms, FoldedFormIsItsThreeKernels) {
  const Device &d = h200();
  ConvProblem p = conv(16, 256, 14, 256, 3);
  p.elementBytes = 2;
  std::vector<ConvFormTimes> times = predictConvForms({p}, d);
  ASSERT_EQ(times.size(), 1u);
  const ConvFormTimes &t = times[0];
  EXPECT_GT(t.foldedCopy, 0);
  EXPECT_GT(t.foldedGemm, 0);
  EXPECT_GT(t.unfold, 0);
  EXPECT_DOUBLE_EQ(t.folded(), t.foldedCopy + t.foldedGemm + t.unfold);
  EXPECT_DOUBLE_EQ(t.im2col(true), t.folded());
  EXPECT_DOUBLE_EQ(t.im2col(false), t.perImage());
  // The folded GEMM is one GEMM of the batch's pixels: no faster than the
  // best tile of that problem, and the transpose moves the output twice.
  EXPECT_LT(t.unfold, t.foldedGemm);
  EXPECT_NEAR(getFoldRatio(times), t.folded() / t.perImage(), 1e-12);
  ConvFormTimes slow{1, 1, 1, /*foldedCopy=*/2, 2, 0};
  ConvFormTimes fast{1, 1, 1, 0.5, 0.5, 0};
  EXPECT_NEAR(getFoldRatio({slow, fast}), 1.0, 1e-12);
  EXPECT_EQ(getFoldRatio({}), 1.0);
}

// The H200 timed ResNet-50's 64->64 (56x56) and 256->256 (14x14) 3x3 convs
// in f16 both ways at batch 1, 8, 32 and 64 (2026-11-29 and -30): im2col
// per image ran 2.3-5.7x faster than the direct conv at every one. With the
// copy's gather chain in the row model (its predictions within 1.2x of the
// measured copies), the direct conv must charge its shared-memory loads
// beside its FMAs (BlockSteps::sharedLoadsIssue: SIMT products whose every
// operand is a shared load of its own): as the longer of the two it was
// predicted faster than im2col for the 64->64 conv.
TEST(ConvForms, MeasuredConvsAreFasterAsIm2Col) {
  const Device &d = h200();
  for (auto [channels, side] : {std::pair<int64_t, int64_t>{64, 56}, {256, 14}})
    for (int64_t batch : {1, 8, 32, 64}) {
      ConvProblem p = conv(batch, channels, side, channels, 3);
      p.elementBytes = 2;
      std::vector<ConvFormTimes> times = predictConvForms({p}, d);
      ASSERT_EQ(times.size(), 1u);
      EXPECT_LT(times[0].im2col(false), times[0].direct)
          << channels << " channels, batch " << batch;
    }
}

TEST(ConvForms, TheCopyGrowsWithTheWindow) {
  const Device &d = h200();
  ConvProblem three = conv(32, 64, 56, 64, 3);
  ConvProblem seven = conv(32, 64, 56, 64, 7);
  std::vector<ConvFormTimes> times = predictConvForms({three}, d);
  std::vector<ConvFormTimes> larger = predictConvForms({seven}, d);
  double ratio = larger[0].copy / times[0].copy;
  EXPECT_GT(ratio, 4.0);
  EXPECT_LT(ratio, 6.5);
}

// The ratio is a geometric mean: each size weighs alike, so one size where
// im2col is 4x slower and one where it is 4x faster cancel, however long
// each takes.
TEST(ConvForms, RatioIsTheGeometricMean) {
  ConvFormTimes slow{/*direct=*/1e-3, /*copy=*/2e-3, /*gemm=*/2e-3};
  ConvFormTimes fast{/*direct=*/4e-6, /*copy=*/0.5e-6, /*gemm=*/0.5e-6};
  EXPECT_NEAR(getIm2ColRatio({slow, fast}, false), 1.0, 1e-12);
  EXPECT_NEAR(getIm2ColRatio({fast}, false), 0.25, 1e-12);
  EXPECT_EQ(getIm2ColRatio({}, false), 1.0);
}

// A grouped conv's copy holds every group's windows: as large as the
// ungrouped conv's over the same channels, so it takes as long. Its GEMM is
// one per image and group, a group's channels each (K = C/G*KH*KW, M =
// F/G): G times the GEMMs of a G-th of the work each; and it has no folded
// form (infinite, so getFoldRatio never folds it). AlexNet's 2-group 5x5
// conv in f16 is faster as im2col; ResNeXt's 32 groups of 4 -> 4 channels
// are not (the copy writes 9x the input for GEMMs of four channels).
TEST(ConvForms, GroupedConvsCopyEveryGroupAndBatchTheirGemms) {
  const Device &d = h200();
  ConvProblem whole = conv(8, 256, 14, 256, 3);
  whole.elementBytes = 2;
  ConvProblem grouped = whole;
  grouped.groups = 4;
  grouped.inC = 64;
  grouped.outC = 64;
  std::vector<ConvFormTimes> a = predictConvForms({whole}, d);
  std::vector<ConvFormTimes> b = predictConvForms({grouped}, d);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NEAR(b[0].copy, a[0].copy, 1e-12);
  EXPECT_LT(b[0].gemm, a[0].gemm);
  EXPECT_TRUE(std::isinf(b[0].folded()));
  EXPECT_FALSE(std::isinf(a[0].folded()));
  EXPECT_FALSE(getFoldRatio(b) < 1);

  ConvProblem alexnet = conv(16, 128, 27, 128, 5);
  alexnet.groups = 2;
  alexnet.inC = 48;
  alexnet.elementBytes = 2;
  EXPECT_LT(getIm2ColRatio(predictConvForms({alexnet}, d), false), 1);
  ConvProblem resnext = conv(16, 4, 56, 4, 3);
  resnext.groups = 32;
  resnext.elementBytes = 2;
  EXPECT_GT(getIm2ColRatio(predictConvForms({resnext}, d), false), 1);
}
