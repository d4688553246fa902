//===- PartitionTest.cpp - Variant sets over a symbol's range -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Partition.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace dyncc::cost;

namespace {

/// A partition of BERT's dense layer N x K over M in [1, hi] on `device`.
struct DenseLayer {
  std::vector<GemmTile> tiles;
  Partition partition;
  std::function<double(size_t, int64_t)> cost;
};

DenseLayer partitionDense(const Device &device, int64_t n, int64_t k,
                          int64_t hi, PartitionOptions options = {}) {
  DenseLayer d;
  d.tiles = enumerateGemmTiles(2, device);
  const std::vector<GemmTile> *tiles = &d.tiles;
  d.cost = [tiles, n, k, &device](size_t c, int64_t m) {
    GemmProblem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.operandBytes = p.outputBytes = 2;
    return predictGemm((*tiles)[c], p, device).seconds;
  };
  d.partition = partitionRange(d.tiles.size(), d.cost, 1, hi, options);
  return d;
}

// The table returns exactly the brute-force argmin over the chosen set at
// every value of the range, and the reported regret is the real one.
TEST(Partition, LookupIsTheArgminOfTheChosenSetEverywhere) {
  const Device &h200 = *lookupDevice("h200");
  DenseLayer d = partitionDense(h200, 768, 768, 2048);
  const Partition &p = d.partition;
  ASSERT_EQ(p.points.size(), 2048u);
  ASSERT_FALSE(p.chosen.empty());
  ASSERT_LE(p.chosen.size(), 8u);
  double worst = 0;
  for (int64_t m = 1; m <= 2048; ++m) {
    size_t argmin = 0;
    for (size_t j = 1; j < p.chosen.size(); ++j)
      if (d.cost(p.chosen[j], m) < d.cost(p.chosen[argmin], m))
        argmin = j;
    // The argmin, or a variant predicted exactly as fast (a tie).
    ASSERT_EQ(d.cost(p.chosen[p.table.lookup(m)], m),
              d.cost(p.chosen[argmin], m))
        << "M=" << m;
    double best = 1e30;
    for (size_t c = 0; c < d.tiles.size(); ++c)
      best = std::min(best, d.cost(c, m));
    worst = std::max(worst, d.cost(p.chosen[argmin], m) / best - 1);
  }
  // Against every candidate, not only the survivors of the coarse sweep:
  // the candidates it dropped are never much better.
  EXPECT_LE(p.maxRegret, worst + 1e-12);
  EXPECT_LE(worst, p.maxRegret + 0.01);
}

// BERT's dense layers on the H200 over M = 1..4096: several variant regions
// per layer; with room for 16 variants, within 3% of the best candidate
// everywhere (the default cap of 8 leaves 3-5%, reported as maxRegret).
TEST(Partition, BertDenseLayersHaveSeveralRegions) {
  const Device &h200 = *lookupDevice("h200");
  PartitionOptions roomy;
  roomy.cap = 16;
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2304, 768},
                      {768, 768}, {3072, 768}, {768, 3072}}) {
    SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k));
    DenseLayer d = partitionDense(h200, n, k, 4096);
    EXPECT_GE(d.partition.chosen.size(), 2u);
    EXPECT_LE(d.partition.chosen.size(), 8u);
    EXPECT_GE(d.partition.table.lower.size(), 2u);
    // Small M and large M take different variants.
    EXPECT_NE(d.partition.table.lookup(1), d.partition.table.lookup(4096));
    DenseLayer wide = partitionDense(h200, n, k, 4096, roomy);
    EXPECT_LE(wide.partition.maxRegret, 0.03 + 1e-9);
    EXPECT_LE(wide.partition.maxRegret, d.partition.maxRegret + 1e-12);
  }
}

// The cap wins over the target, and the regret says what it cost.
TEST(Partition, TheCapWinsAndTheRegretIsReported) {
  const Device &a100 = *lookupDevice("a100");
  PartitionOptions one;
  one.cap = 1;
  DenseLayer d = partitionDense(a100, 3072, 768, 2048, one);
  ASSERT_EQ(d.partition.chosen.size(), 1u);
  EXPECT_EQ(d.partition.table.lower.size(), 1u);
  double worst = 0;
  for (size_t i = 0; i < d.partition.points.size(); ++i)
    worst = std::max(worst,
                     d.partition.picked[i] / d.partition.best[i] - 1);
  EXPECT_DOUBLE_EQ(d.partition.maxRegret, worst);
  EXPECT_GT(d.partition.maxRegret, 0.03);
}

// At the cap, the worst point decides: a candidate best at all points but
// one, where it is 50% slower, sums the least excess over the target; one
// 10% slower everywhere is the better set of one, and is chosen.
TEST(Partition, AtTheCapTheWorstPointIsMinimized) {
  auto cost = [](size_t c, int64_t v) {
    switch (c) {
    case 0: // best at 1..9, 50% slower at 10
      return v == 10 ? 1.5 : 1.0;
    case 1: // 10% slower everywhere
      return 1.1;
    default: // best at 10 only
      return v == 10 ? 1.0 : 3.0;
    }
  };
  PartitionOptions one;
  one.cap = 1;
  one.pruneFactor = 4;
  Partition p = partitionRange(3, cost, 1, 10, one);
  ASSERT_EQ(p.chosen.size(), 1u);
  EXPECT_EQ(p.chosen[0], 1u);
  EXPECT_NEAR(p.maxRegret, 0.1, 1e-9);
  // With room for two, the two best are chosen and the regret is none.
  one.cap = 2;
  Partition two = partitionRange(3, cost, 1, 10, one);
  EXPECT_EQ(two.chosen.size(), 2u);
  EXPECT_DOUBLE_EQ(two.maxRegret, 0);
}

// Two candidates that cross: the table switches where they cross.
TEST(Partition, CrossingCandidatesSplitTheRange) {
  auto cost = [](size_t c, int64_t v) {
    return c == 0 ? 10.0 + v : 60.25 + 0.5 * v; // equal at v = 100.5
  };
  Partition p = partitionRange(2, cost, 1, 300);
  ASSERT_EQ(p.chosen.size(), 2u);
  ASSERT_EQ(p.table.lower.size(), 2u);
  EXPECT_EQ(p.table.lower[0], 1);
  EXPECT_EQ(p.table.lower[1], 101);
  EXPECT_EQ(p.chosen[p.table.lookup(1)], 0u);
  EXPECT_EQ(p.chosen[p.table.lookup(100)], 0u);
  EXPECT_EQ(p.chosen[p.table.lookup(101)], 1u);
  EXPECT_EQ(p.chosen[p.table.lookup(300)], 1u);
  EXPECT_DOUBLE_EQ(p.maxRegret, 0);
}

TEST(Partition, LargeRangesAreSweptAtLogSpacedPoints) {
  std::vector<int64_t> points = getSweepPoints(1, 1 << 20, 4096);
  EXPECT_EQ(points.front(), 1);
  EXPECT_EQ(points.back(), 1 << 20);
  EXPECT_LT(points.size(), 4096u + 64 + 64 + 2);
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end()));
  // Every value up to 64 and every multiple of 64 up to 4096.
  for (int64_t v = 1; v <= 64; ++v)
    EXPECT_TRUE(std::binary_search(points.begin(), points.end(), v)) << v;
  for (int64_t v = 64; v <= 4096; v += 64)
    EXPECT_TRUE(std::binary_search(points.begin(), points.end(), v)) << v;
  EXPECT_EQ(getSweepPoints(5, 9, 4096), (std::vector<int64_t>{5, 6, 7, 8, 9}));
}

} // namespace

namespace {

// Attention's batched products: two dynamic dimensions, the batch (B x 12
// heads) and the sequence S; Q K^T is [S x 64] x [64 x S] per head. The
// decision table returns the brute-force argmin of the chosen set at every
// grid point, with several variants.
TEST(Partition2D, AttentionScoresOverBatchAndSequence) {
  const Device &h200 = *lookupDevice("h200");
  std::vector<GemmTile> tiles = enumerateGemmTiles(2, h200);
  auto cost = [&](size_t c, int64_t batch, int64_t seq) {
    GemmProblem p;
    p.batch = batch;
    p.m = seq;
    p.n = seq;
    p.k = 64;
    p.batchedB = true;
    p.operandBytes = p.outputBytes = 2;
    return predictGemm(tiles[c], p, h200).seconds;
  };
  Partition2D p =
      partitionRange2D(tiles.size(), cost, 12, 12 * 32, 1, 512, {}, 24);
  ASSERT_GE(p.chosen.size(), 2u);
  ASSERT_LE(p.chosen.size(), 8u);
  bool differs = false;
  for (int64_t a : p.pointsA)
    for (int64_t b : p.pointsB) {
      size_t argmin = 0;
      for (size_t j = 1; j < p.chosen.size(); ++j)
        if (cost(p.chosen[j], a, b) < cost(p.chosen[argmin], a, b))
          argmin = j;
      // The argmin, or a variant predicted exactly as fast (a tie).
      uint32_t picked = p.table.lookup(a, b);
      ASSERT_EQ(cost(p.chosen[picked], a, b), cost(p.chosen[argmin], a, b))
          << a << " x " << b;
      differs |= picked != p.table.lookup(p.pointsA.front(), b);
    }
  // The batch changes the choice somewhere: a decision on both dimensions.
  EXPECT_TRUE(differs);
  EXPECT_GE(p.table.lower.size(), 2u);
}

// A small grid is swept whole: exact at every (a, b).
TEST(Partition2D, SmallRangesAreExactEverywhere) {
  // Three candidates: best for small a, for small b, and otherwise.
  // No two are ever equal at integer points.
  auto cost = [](size_t c, int64_t a, int64_t b) {
    if (c == 0)
      return 1.0 + a * 0.5 + b;
    if (c == 1)
      return 1.01 + a + b * 0.5;
    return 4.003 + 0.6 * (a + b);
  };
  Partition2D p = partitionRange2D(3, cost, 1, 20, 1, 30);
  ASSERT_EQ(p.pointsA.size(), 20u);
  ASSERT_EQ(p.pointsB.size(), 30u);
  for (int64_t a = 1; a <= 20; ++a)
    for (int64_t b = 1; b <= 30; ++b) {
      size_t want = 0;
      for (size_t c = 1; c < 3; ++c)
        if (cost(c, a, b) < cost(want, a, b))
          want = c;
      ASSERT_EQ(p.chosen[p.table.lookup(a, b)], want) << a << " x " << b;
    }
  EXPECT_DOUBLE_EQ(p.maxRegret, 0);
}

} // namespace

TEST(PartitionTest, GridPoints) {
  // Small ranges whole; large ones log-spaced plus the tile edges (powers
  // of two and three times them) and both ends, ascending and unique.
  EXPECT_EQ(getGridPoints(3, 7, 32), (std::vector<int64_t>{3, 4, 5, 6, 7}));
  std::vector<int64_t> points = getGridPoints(1, 8192, 32);
  EXPECT_LT(points.size(), 80u);
  EXPECT_EQ(points.front(), 1);
  EXPECT_EQ(points.back(), 8192);
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end()));
  EXPECT_EQ(std::adjacent_find(points.begin(), points.end()), points.end());
  for (int64_t edge : {64, 128, 192, 384, 4096, 6144})
    EXPECT_TRUE(std::binary_search(points.begin(), points.end(), edge))
        << edge;
  for (int64_t v : getGridPoints(100, 5000, 16)) {
    EXPECT_GE(v, 100);
    EXPECT_LE(v, 5000);
  }
}

