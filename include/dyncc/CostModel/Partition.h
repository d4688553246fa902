//===- Partition.h - Variant sets that cover a symbol's range --*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Range partitioning: over the values a group's dynamic problem dimension
// takes (M = batch x sequence for a transformer's dense layers), or two of
// them, choose a few candidates such that at every value the best of them
// is predicted within a target of the best of all, and an interval table
// (a two-level one for two dimensions) that picks, in O(log n), the best
// of the chosen at each value.
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

/// For two dynamic dimensions (attention's batched products: the batch
/// B x H and the sequence): intervals of the first, each with an interval
/// table over the second. Look-up: two binary searches.
struct DecisionTable {
  std::vector<int64_t> lower;
  std::vector<IntervalTable> inner;
  /// The table over the second dimension where the first is `a`.
  const IntervalTable &getInner(int64_t a) const;
  uint32_t lookup(int64_t a, int64_t b) const;
};

struct Partition2D {
  std::vector<size_t> chosen;
  DecisionTable table;
  /// The grid the set was chosen on (getGridPoints per dimension).
  std::vector<int64_t> pointsA, pointsB;
  /// Over the grid.
  double maxRegret = 0;
  size_t considered = 0;
};

/// Chooses variants as partitionRange does, over [aLo, aHi] x [bLo, bHi],
/// with `cost(candidate, a, b)`.
Partition2D
partitionRange2D(size_t count,
                 const std::function<double(size_t, int64_t, int64_t)> &cost,
                 int64_t aLo, int64_t aHi, int64_t bLo, int64_t bHi,
                 const PartitionOptions &options = {},
                 int64_t pointsPerDimension = 32);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_PARTITION_H
