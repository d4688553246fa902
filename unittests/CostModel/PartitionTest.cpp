//===- PartitionTest.cpp - Variant sets over a symbol's range -------------===//
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
#include <functional>

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

/// The brute-force argmin of `cost` over `p`'s chosen set at `values`.
template <typename Cost>
size_t getArgmin(const PartitionGrid &p, const Cost &cost,
                 const int64_t *values) {
  size_t argmin = 0;
  for (size_t j = 1; j < p.chosen.size(); ++j)
    if (cost(p.chosen[j], values) < cost(p.chosen[argmin], values))
      argmin = j;
  return argmin;
}

/// Calls `f(values)` at every point of `p`'s grid.
template <typename F> void forEachGridPoint(const PartitionGrid &p, F f) {
  std::vector<size_t> index(p.points.size(), 0);
  std::vector<int64_t> values(p.points.size());
  while (true) {
    for (size_t d = 0; d < p.points.size(); ++d)
      values[d] = p.points[d][index[d]];
    f(values.data());
    size_t d = p.points.size();
    while (d > 0 && ++index[d - 1] == p.points[d - 1].size())
      index[--d] = 0;
    if (d == 0)
      return;
  }
}

/// Checks `p`'s tree: every path has `keys` levels, bounds ascend, leaves
/// name chosen variants, inner nodes existing nodes.
void expectWellFormed(const PartitionGrid &p, size_t keys) {
  ASSERT_EQ(p.table.keys, keys);
  ASSERT_FALSE(p.table.nodes.empty());
  std::function<void(uint32_t, size_t)> visit = [&](uint32_t n, size_t d) {
    ASSERT_LT(n, p.table.nodes.size());
    const IntervalTable &node = p.table.nodes[n];
    ASSERT_FALSE(node.lower.empty());
    ASSERT_EQ(node.lower.size(), node.variant.size());
    ASSERT_TRUE(std::is_sorted(node.lower.begin(), node.lower.end()));
    for (uint32_t next : node.variant) {
      if (d + 1 == keys)
        ASSERT_LT(next, p.chosen.size());
      else
        visit(next, d + 1);
    }
  };
  visit(0, 0);
}

/// Attention's scores on the H200, Q K^T per head ([S x 64] x [64 x S],
/// f16), partitioned over the batch B x 12 heads (12..384) and the
/// sequence S (1..512), 24 grid points per dimension.
struct AttentionScores {
  std::vector<GemmTile> tiles = enumerateGemmTiles(2, *lookupDevice("h200"));
  double cost(size_t c, const int64_t *v) const {
    GemmProblem p;
    p.batch = v[0];
    p.m = v[1];
    p.n = v[1];
    p.k = 64;
    p.batchedB = true;
    p.operandBytes = p.outputBytes = 2;
    return predictGemm(tiles[c], p, *lookupDevice("h200")).seconds;
  }
  PartitionGrid partition() const {
    return partitionGrid(
        tiles.size(), [&](size_t c, const int64_t *v) { return cost(c, v); },
        {{12, 12 * 32}, {1, 512}}, {}, 24);
  }
};

// Attention's batched products: two dynamic dimensions, the batch (B x 12
// heads) and the sequence S; Q K^T is [S x 64] x [64 x S] per head. The
// decision table returns the brute-force argmin of the chosen set at every
// grid point, with several variants.
TEST(PartitionGrid, AttentionScoresOverBatchAndSequence) {
  AttentionScores scores;
  auto cost = [&](size_t c, const int64_t *v) { return scores.cost(c, v); };
  PartitionGrid p = scores.partition();
  ASSERT_GE(p.chosen.size(), 2u);
  ASSERT_LE(p.chosen.size(), 8u);
  expectWellFormed(p, 2);
  bool differs = false;
  forEachGridPoint(p, [&](const int64_t *v) {
    size_t argmin = getArgmin(p, cost, v);
    // The argmin, or a variant predicted exactly as fast (a tie).
    uint32_t picked = p.table.lookup(v);
    ASSERT_EQ(cost(p.chosen[picked], v), cost(p.chosen[argmin], v))
        << v[0] << " x " << v[1];
    int64_t first[2] = {p.points[0].front(), v[1]};
    differs |= picked != p.table.lookup(first);
  });
  // The batch changes the choice somewhere: a decision on both dimensions.
  EXPECT_TRUE(differs);
  EXPECT_GE(p.table.nodes[0].lower.size(), 2u);
}

// A small grid is swept whole: exact at every (a, b).
TEST(PartitionGrid, SmallRangesAreExactEverywhere) {
  // Three candidates: best for small a, for small b, and otherwise.
  // No two are ever equal at integer points.
  auto cost = [](size_t c, const int64_t *v) {
    int64_t a = v[0], b = v[1];
    if (c == 0)
      return 1.0 + a * 0.5 + b;
    if (c == 1)
      return 1.01 + a + b * 0.5;
    return 4.003 + 0.6 * (a + b);
  };
  PartitionGrid p = partitionGrid(3, cost, {{1, 20}, {1, 30}});
  ASSERT_EQ(p.points[0].size(), 20u);
  ASSERT_EQ(p.points[1].size(), 30u);
  for (int64_t a = 1; a <= 20; ++a)
    for (int64_t b = 1; b <= 30; ++b) {
      size_t want = 0;
      int64_t v[2] = {a, b};
      for (size_t c = 1; c < 3; ++c)
        if (cost(c, v) < cost(want, v))
          want = c;
      ASSERT_EQ(p.chosen[p.table.lookup(v)], want) << a << " x " << b;
    }
  EXPECT_DOUBLE_EQ(p.maxRegret, 0);
}

// Three small dimensions are swept whole: the tree is exact at every
// (a, b, c), and the choice turns on each of the three.
TEST(PartitionGrid, ThreeSmallRangesAreExactEverywhere) {
  // Four candidates: each of three best where its dimension is the
  // largest by far, the fourth where they are alike.
  auto cost = [](size_t c, const int64_t *v) {
    double a = double(v[0]), b = double(v[1]), d = double(v[2]);
    switch (c) {
    case 0:
      return 1.0 + a * 0.3 + b + d;
    case 1:
      return 1.01 + a + b * 0.3 + d;
    case 2:
      return 1.02 + a + b + d * 0.3;
    default:
      return 2.003 + 0.5 * (a + b + d);
    }
  };
  PartitionGrid p = partitionGrid(4, cost, {{1, 9}, {2, 13}, {1, 7}});
  expectWellFormed(p, 3);
  ASSERT_EQ(p.points[0].size(), 9u);
  ASSERT_EQ(p.points[1].size(), 12u);
  ASSERT_EQ(p.points[2].size(), 7u);
  EXPECT_EQ(p.chosen.size(), 4u);
  for (int64_t a = 1; a <= 9; ++a)
    for (int64_t b = 2; b <= 13; ++b)
      for (int64_t d = 1; d <= 7; ++d) {
        int64_t v[3] = {a, b, d};
        size_t want = 0;
        for (size_t c = 1; c < 4; ++c)
          if (cost(c, v) < cost(want, v))
            want = c;
        ASSERT_EQ(p.chosen[p.table.lookup(v)], want)
            << a << " x " << b << " x " << d;
      }
  EXPECT_DOUBLE_EQ(p.maxRegret, 0);
}

// Subtrees that decide alike are one node: where the first dimension does
// not matter, the root has one interval and the tree one node per distinct
// table below it.
TEST(PartitionGrid, EqualSubtreesAreOneNode) {
  auto cost = [](size_t c, const int64_t *v) {
    double b = double(v[1]), d = double(v[2]);
    return c == 0 ? 1.0 + b + 0.3 * d : 1.01 + 0.3 * b + d;
  };
  PartitionGrid p = partitionGrid(2, cost, {{1, 50}, {1, 10}, {1, 10}});
  expectWellFormed(p, 3);
  EXPECT_EQ(p.table.nodes[0].lower.size(), 1u);
  // The root, the node over b, and one table over d per distinct split of
  // d (b's intervals each have their own, and adjacent equal ones merged).
  const IntervalTable &overB = p.table.nodes[p.table.nodes[0].variant[0]];
  EXPECT_GE(overB.lower.size(), 2u);
  EXPECT_EQ(p.table.nodes.size(), 2 + overB.lower.size());
}

// A conv over the batch, the output's rows and its columns (ResNet's 3x3
// layers with the image size dynamic): the tree returns the brute-force
// argmin of the chosen set at every grid point, and its choice turns on
// the image's size.
TEST(PartitionGrid, ConvOverBatchRowsAndColumns) {
  const Device &h200 = *lookupDevice("h200");
  ConvProblem problem;
  problem.inC = 64;
  problem.outC = 64;
  problem.kh = problem.kw = 3;
  std::vector<ConvTile> tiles = enumerateConvTiles(problem, h200);
  ASSERT_GT(tiles.size(), 100u);
  auto cost = [&](size_t c, const int64_t *v) {
    ConvProblem at = problem;
    at.batch = v[0];
    at.outH = v[1];
    at.outW = v[2];
    return predictConv(tiles[c], at, h200).seconds;
  };
  PartitionGrid p =
      partitionGrid(tiles.size(), cost, {{1, 8}, {8, 56}, {8, 56}});
  expectWellFormed(p, 3);
  ASSERT_GE(p.chosen.size(), 2u);
  ASSERT_LE(p.chosen.size(), 8u);
  EXPECT_LE(p.points[1].size(), 16u);
  bool overImage = false;
  forEachGridPoint(p, [&](const int64_t *v) {
    size_t argmin = getArgmin(p, cost, v);
    uint32_t picked = p.table.lookup(v);
    ASSERT_EQ(cost(p.chosen[picked], v), cost(p.chosen[argmin], v))
        << v[0] << " x " << v[1] << " x " << v[2];
    int64_t smallest[3] = {v[0], p.points[1].front(), p.points[2].front()};
    overImage |= picked != p.table.lookup(smallest);
  });
  EXPECT_TRUE(overImage);
}

// More dimensions than a table takes: nothing is chosen.
TEST(PartitionGrid, TooManyDimensions) {
  auto cost = [](size_t, const int64_t *) { return 1.0; };
  PartitionGrid p = partitionGrid(
      2, cost, std::vector<std::pair<int64_t, int64_t>>(5, {1, 4}));
  EXPECT_TRUE(p.chosen.empty());
  EXPECT_TRUE(p.table.nodes.empty());
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

namespace {

// Between the points of a sparse sweep, the table's bounds are found
// (gaps of up to 256 values scanned, wider ones bisected): a split-K
// variant stops applying where its blocks pass two waves (its prediction
// is infinite there), which no sweep point needs to fall on. wav2vec2's
// 512 -> 512 conv as a GEMM (K = 3 x 512) over N = 1..40000 columns: at
// every value, the table picks the chosen set's argmin (or a variant as
// fast). Bounds at the sweep's points alone picked an inapplicable split
// at 4 values, and another than the argmin at 242 (36% slower at worst).
TEST(Partition, BoundsBetweenSweepPointsAreBisected) {
  const Device &h200 = *lookupDevice("h200");
  std::vector<GemmTile> tiles;
  for (const GemmTile &tile : enumerateGemmTiles(2, h200)) {
    tiles.push_back(tile);
    for (const GemmTile &split : getSplitKTiles(tile, 1536))
      tiles.push_back(split);
  }
  auto cost = [&](size_t c, int64_t n) {
    GemmProblem p;
    p.m = 512;
    p.n = n;
    p.k = 1536;
    p.operandBytes = p.outputBytes = 2;
    return predictGemm(tiles[c], p, h200).seconds;
  };
  Partition p = partitionRange(tiles.size(), cost, 1, 40000);
  ASSERT_LT(p.points.size(), 40000u);
  for (int64_t n = 1; n <= 40000; ++n) {
    double picked = cost(p.chosen[p.table.lookup(n)], n);
    double best = std::numeric_limits<double>::infinity();
    for (size_t c : p.chosen)
      best = std::min(best, cost(c, n));
    ASSERT_FALSE(std::isinf(picked)) << "N=" << n;
    ASSERT_EQ(picked, best) << "N=" << n;
  }
}

} // namespace

namespace {

// A decision table's last dimension alike, row by row: over attention's
// scores (batch B x 12 heads, sequence 1..512, on a grid of 24 points per
// dimension), at every sequence length of each row the table picks a
// variant predicted within 10% of the chosen set's best, and the set's
// argmin at all but a few. Bounds at the grid's points alone picked
// another at 8,179 of those 16,384 points (81% slower at worst); now 544
// (9%): what is left are regions inside gaps whose ends pick the same variant,
// which the search does not look into (refineGap).
TEST(PartitionGrid, LastDimensionBoundsAreBisected) {
  AttentionScores scores;
  auto cost = [&](size_t c, const int64_t *v) { return scores.cost(c, v); };
  PartitionGrid p = scores.partition();
  double worst = 0;
  int64_t values = 0, off = 0;
  for (int64_t batch : p.points[0])
    for (int64_t s = 1; s <= 512; ++s) {
      int64_t v[2] = {batch, s};
      double picked = cost(p.chosen[p.table.lookup(v)], v);
      double best = cost(p.chosen[getArgmin(p, cost, v)], v);
      worst = std::max(worst, picked / best - 1);
      off += picked != best;
      ++values;
    }
  EXPECT_LE(worst, 0.10);
  EXPECT_LE(off, values / 20);
}

} // namespace
