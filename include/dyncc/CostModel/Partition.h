//===- Partition.h - Variant sets that cover a symbol's range --*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Range partitioning: over the values a group's dynamic problem dimension
// takes (M = batch x sequence for a transformer's dense layers), or over
// several of them (a conv's batch, output rows and columns), choose a few
// candidates such that at every value the best of them is predicted within
// a target of the best of all, and an interval table (a tree of them, one
// level per dimension, for several) that picks, in O(log n) per dimension,
// the best of the chosen at each value.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_PARTITION_H
#define DYNCC_COSTMODEL_PARTITION_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace dyncc::cost {

/// Intervals [lower bound, next interval's lower bound) of a dimension,
/// each naming a variant (an index into the chosen set).
struct IntervalTable {
  /// Ascending; the first is the range's minimum.
  std::vector<int64_t> lower;
  /// Per interval, a variant (in a DecisionTable's nodes above the last
  /// dimension: the index of the node over the next).
  std::vector<uint32_t> variant;
  /// The variant of the interval holding `value` (values below the first
  /// bound take the first). Binary search: O(log intervals).
  uint32_t lookup(int64_t value) const;
};

/// The last interval of `lower` (ascending lower bounds) whose bound is <=
/// `value`; the first for values below them all. IntervalTable::lookup's and
/// DecisionTable's search.
size_t findInterval(const std::vector<int64_t> &lower, int64_t value);

struct PartitionOptions {
  /// The most variants chosen.
  size_t cap = 8;
  /// The regret the set aims for at every point: 0.03 is within 3% of the
  /// best candidate.
  double targetRegret = 0.03;
  /// Ranges with at most this many values are swept whole; larger ones at
  /// log-spaced points (about this many) plus both ends.
  int64_t exhaustiveLimit = 4096;
  /// A candidate more than this factor slower than the best at every point
  /// of a coarse sweep is not considered further; nor is one that is
  /// never among the `keepPerPoint` fastest there.
  double pruneFactor = 1.5;
  size_t keepPerPoint = 24;
};

struct Partition {
  /// Indices into the candidates, in the order the variants are numbered.
  std::vector<size_t> chosen;
  IntervalTable table;
  /// The points the set was chosen on (every value, or the sweep).
  std::vector<int64_t> points;
  /// At each point: the predicted time of the best candidate overall and of
  /// the variant the table picks.
  std::vector<double> best;
  std::vector<double> picked;
  /// max over points of picked / best - 1.
  double maxRegret = 0;
  /// Candidates left after the coarse sweep.
  size_t considered = 0;
};

/// Point `i` of `count` (at least 2) spaced evenly over [lo, hi] on a log
/// scale (lo below 1 counted as 1), rounded and clamped to [lo, hi]: lo
/// first, hi last.
int64_t getLogSpacedValue(int64_t lo, int64_t hi, int64_t i, int64_t count);

/// The values of [lo, hi] a partition is computed on.
std::vector<int64_t> getSweepPoints(int64_t lo, int64_t hi,
                                    int64_t exhaustiveLimit);

/// The values of [lo, hi] a two-dimensional partition is computed on, per
/// dimension: every value where there are at most `count`, else about
/// `count` log-spaced ones plus 1 to 8, the powers of two and three times
/// them, and both ends.
std::vector<int64_t> getGridPoints(int64_t lo, int64_t hi, int64_t count);

/// Chooses variants among `candidates` (0 .. count-1) whose predicted time
/// at a value is `cost(candidate, value)`, over [lo, hi].
Partition partitionRange(size_t count,
                         const std::function<double(size_t, int64_t)> &cost,
                         int64_t lo, int64_t hi,
                         const PartitionOptions &options = {});

/// For several dynamic dimensions (attention's batched products: the batch
/// B x H and the sequence; a conv's batch, output rows and columns): a tree
/// of interval tables, one level per dimension. A node splits its
/// dimension into intervals; at the last dimension each interval names a
/// variant, at the others the node (its index) over the next dimension.
/// Look-up: one binary search per dimension. Equal subtrees are one node.
struct DecisionTable {
  /// The most dimensions a table is keyed on (a problem's: GEMMs' batch, M,
  /// N and K; convs' batch, channels, rows and columns).
  static constexpr size_t kMaxKeys = 4;
  /// nodes[0] is the root, over the first dimension.
  std::vector<IntervalTable> nodes;
  /// Dimensions: the depth of every path (at least 1).
  size_t keys = 1;

  /// A table over one dimension.
  static DecisionTable fromIntervals(IntervalTable table);
  /// The node over dimension `depth` where the dimensions before it take
  /// `values` (its first `depth`).
  const IntervalTable &getNode(const int64_t *values, size_t depth) const;
  /// The variant at `values`, one per dimension.
  uint32_t lookup(const int64_t *values) const;
};

struct PartitionGrid {
  std::vector<size_t> chosen;
  DecisionTable table;
  /// The grid the set was chosen on, per dimension (getGridPoints).
  std::vector<std::vector<int64_t>> points;
  /// Over the grid.
  double maxRegret = 0;
  size_t considered = 0;
};

/// The grid points per dimension a partition over `dimensions` dynamic
/// dimensions uses (getGridPoints' count), and the coarse sweep's that
/// prunes the candidates: 32 and 12 for two, fewer for more, which keeps
/// a search's evaluations near those of two.
int64_t getGridPointsPerDimension(size_t dimensions);

/// Chooses variants as partitionRange does, over the box
/// [ranges[d].first, ranges[d].second] of each dimension d (at most
/// DecisionTable::kMaxKeys), with `cost(candidate, values)`, values one
/// per dimension. `pointsPerDimension` 0 takes
/// getGridPointsPerDimension's.
PartitionGrid partitionGrid(
    size_t count, const std::function<double(size_t, const int64_t *)> &cost,
    const std::vector<std::pair<int64_t, int64_t>> &ranges,
    const PartitionOptions &options = {}, int64_t pointsPerDimension = 0);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_PARTITION_H
