//===- Partition.cpp - Variant sets that cover a symbol's range -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// 1. A coarse log-spaced sweep drops the candidates that are far from the
//    best everywhere (pruneFactor).
// 2. The survivors are evaluated at every point of the range (or of a dense
//    log sweep for large ranges).
// 3. Greedy cover: repeatedly add the candidate that most lowers the
//    regret above the target, summed over the points (then the whole
//    regret), until every point is within the target or the cap is
//    reached; at the cap, swap chosen variants for others while that
//    lowers the excess. Still above the target at the cap, minimize the
//    worst point's regret instead: the least threshold a greedy set cover
//    meets within the cap (bisection), then swaps; the better set is kept.
//    The cap wins; the achieved regret is reported.
// 4. The table takes, at each point, the fastest chosen variant, and merges
//    runs of the same one into intervals. Variants no point picks are
//    dropped. Where neighbouring points of a sparse sweep (and of a grid's
//    last dimension) pick different variants, the values between are
//    looked at too (refineGap): every one in a gap of up to kScannedGap,
//    by bisection in a wider one. So a bound is where the pick changes
//    rather than the next point: a split-K variant stops applying where its
//    blocks pass two waves, which no sweep point needs to fall on.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Partition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>

using namespace dyncc::cost;

size_t dyncc::cost::findInterval(const std::vector<int64_t> &lower,
                                 int64_t value) {
  auto it = std::upper_bound(lower.begin(), lower.end(), value);
  return it == lower.begin() ? 0 : size_t(it - lower.begin()) - 1;
}

uint32_t IntervalTable::lookup(int64_t value) const {
  return variant[findInterval(lower, value)];
}

int64_t dyncc::cost::getLogSpacedValue(int64_t lo, int64_t hi, int64_t i,
                                       int64_t count) {
  double a = std::log(double(std::max<int64_t>(lo, 1)));
  double b = std::log(double(std::max<int64_t>(hi, 1)));
  return std::clamp<int64_t>(
      std::llround(std::exp(a + (b - a) * double(i) / double(count - 1))), lo,
      hi);
}

/// Every value of [lo, hi] where there are at most `count`; else `count`
/// log-spaced values, those `addEdges(points)` appends (where tiles' edges
/// fall), and both ends, within [lo, hi], sorted and unique.
template <typename AddEdges>
static std::vector<int64_t> getPoints(int64_t lo, int64_t hi, int64_t count,
                                      AddEdges addEdges) {
  std::vector<int64_t> points;
  if (hi < lo)
    return points;
  if (hi - lo + 1 <= count) {
    for (int64_t v = lo; v <= hi; ++v)
      points.push_back(v);
    return points;
  }
  for (int64_t i = 0; i < count; ++i)
    points.push_back(getLogSpacedValue(lo, hi, i, count));
  addEdges(points);
  points.push_back(lo);
  points.push_back(hi);
  points.erase(std::remove_if(points.begin(), points.end(),
                              [&](int64_t v) { return v < lo || v > hi; }),
               points.end());
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

std::vector<int64_t> dyncc::cost::getSweepPoints(int64_t lo, int64_t hi,
                                                 int64_t exhaustiveLimit) {
  // Every value up to 64 and the multiples of 64 up to 4096.
  return getPoints(lo, hi, exhaustiveLimit, [&](std::vector<int64_t> &points) {
    for (int64_t v = lo; v <= std::min<int64_t>(hi, 64); ++v)
      points.push_back(v);
    for (int64_t v = 64; v <= std::min<int64_t>(hi, 4096); v += 64)
      points.push_back(v);
  });
}

std::vector<int64_t> dyncc::cost::getGridPoints(int64_t lo, int64_t hi,
                                                int64_t count) {
  // 1 to 8, and the powers of two and three times them.
  return getPoints(lo, hi, count, [&](std::vector<int64_t> &points) {
    for (int64_t v = 1; v <= 8; ++v)
      points.push_back(v);
    for (int64_t v = 1; v <= hi && v < (int64_t(1) << 40); v *= 2) {
      points.push_back(v);
      points.push_back(3 * v);
    }
  });
}

namespace {
/// Predicted times, [candidate][point].
using Times = std::vector<std::vector<double>>;
} // namespace

/// The candidates (0 .. count-1) that, at some of `points` coarse points,
/// are within `factor` of the best and among the `perPoint` fastest there,
/// where `cost(c, p)` is candidate c's time at coarse point p.
static std::vector<size_t>
pruneCandidates(size_t count, size_t points,
                const std::function<double(size_t, size_t)> &cost,
                double factor, size_t perPoint) {
  Times times(count, std::vector<double>(points));
  for (size_t c = 0; c < count; ++c)
    for (size_t p = 0; p < points; ++p)
      times[c][p] = cost(c, p);
  std::vector<char> keep(count, 0);
  std::vector<size_t> order(count);
  for (size_t p = 0; p < points; ++p) {
    for (size_t c = 0; c < count; ++c)
      order[c] = c;
    size_t n = std::min(perPoint, count);
    std::partial_sort(order.begin(), order.begin() + n, order.end(),
                      [&](size_t x, size_t y) {
                        return times[x][p] < times[y][p] ||
                               (times[x][p] == times[y][p] && x < y);
                      });
    double best = times[order[0]][p];
    for (size_t i = 0; i < n; ++i)
      if (times[order[i]][p] <= factor * best)
        keep[order[i]] = 1;
  }
  std::vector<size_t> kept;
  for (size_t c = 0; c < count; ++c)
    if (keep[c])
      kept.push_back(c);
  return kept;
}

namespace {
/// Variant sets over log regrets, log(time / best) per [candidate][point],
/// computed once: the log of the faster of two times is the lesser log, so
/// the loops have no logs.
class Cover {
public:
  Cover(const Times &times, const std::vector<double> &best,
        const PartitionOptions &options)
      : points(best.size()), kept(times.size()), cap(options.cap),
        target(std::log1p(options.targetRegret)),
        regrets(kept, std::vector<double>(points)) {
    for (size_t i = 0; i < kept; ++i)
      for (size_t p = 0; p < points; ++p)
        regrets[i][p] = std::log(times[i][p] / best[p]);
  }

  /// Each point's least regret over `set`.
  std::vector<double> regretsOf(const std::vector<size_t> &set,
                                size_t skip = SIZE_MAX) const {
    std::vector<double> at(points, infinity);
    for (size_t j = 0; j < set.size(); ++j)
      if (j != skip)
        for (size_t p = 0; p < points; ++p)
          at[p] = std::min(at[p], regrets[set[j]][p]);
    return at;
  }
  double worstOf(const std::vector<double> &at) const {
    return *std::max_element(at.begin(), at.end());
  }
  bool withinTarget(const std::vector<double> &at) const {
    return worstOf(at) <= target;
  }

  /// Adds the candidate that most lowers the regret above the target,
  /// summed over the points (a hinge on the log of the ratio), then the
  /// whole regret, until every point is within the target or the cap is
  /// reached.
  void grow(std::vector<size_t> &set) const {
    std::vector<double> at = regretsOf(set);
    while (set.size() < cap && (set.empty() || !withinTarget(at))) {
      size_t pick = kept;
      double pickScore = infinity;
      for (size_t i = 0; i < kept; ++i) {
        if (contains(set, i))
          continue;
        double score = 0, excess = 0;
        for (size_t p = 0; p < points; ++p) {
          double regret = std::min(at[p], regrets[i][p]);
          excess += std::max(0.0, regret - target);
          score += regret;
        }
        score += excess * 1e6;
        if (score < pickScore) {
          pickScore = score;
          pick = i;
        }
      }
      if (pick == kept)
        return;
      set.push_back(pick);
      for (size_t p = 0; p < points; ++p)
        at[p] = std::min(at[p], regrets[pick][p]);
    }
  }

  /// Swaps members of `set` for other candidates while that lowers the
  /// summed excess over the target or, with `minimax`, the worst point's
  /// regret and then the excess; at most `passes` rounds.
  void swap(std::vector<size_t> &set, bool minimax, int passes) const {
    for (int pass = 0; pass < passes; ++pass) {
      bool improved = false;
      for (size_t j = 0; j < set.size(); ++j) {
        std::vector<double> others = regretsOf(set, j);
        std::vector<double> at = regretsOf(set);
        double bestWorst = minimax ? worstOf(at) : 0;
        double bestExcess = excessOf(at);
        size_t bestSwap = kept;
        for (size_t i = 0; i < kept; ++i) {
          if (contains(set, i))
            continue;
          double worst = 0, excess = 0;
          for (size_t p = 0; p < points && worst <= bestWorst; ++p) {
            double regret = std::min(others[p], regrets[i][p]);
            if (minimax)
              worst = std::max(worst, regret);
            excess += std::max(0.0, regret - target);
          }
          if (worst < bestWorst * (1 - 1e-9) ||
              (worst <= bestWorst && excess < bestExcess * (1 - 1e-9))) {
            bestWorst = worst;
            bestExcess = excess;
            bestSwap = i;
          }
        }
        if (bestSwap != kept) {
          set[j] = bestSwap;
          improved = true;
        }
      }
      if (!improved)
        return;
    }
  }

  /// A greedy set cover of the points within `threshold` (log regret): the
  /// candidate within it at the most points not yet covered, repeatedly;
  /// empty where that needs more than the cap.
  std::vector<size_t> coverWithin(double threshold) const {
    size_t words = (points + 63) / 64;
    std::vector<std::vector<uint64_t>> within(kept,
                                              std::vector<uint64_t>(words));
    for (size_t i = 0; i < kept; ++i)
      for (size_t p = 0; p < points; ++p)
        if (regrets[i][p] <= threshold)
          within[i][p / 64] |= uint64_t(1) << (p % 64);
    std::vector<uint64_t> open(words, ~uint64_t(0));
    if (points % 64)
      open.back() = (uint64_t(1) << (points % 64)) - 1;
    std::vector<size_t> set;
    while (std::any_of(open.begin(), open.end(),
                       [](uint64_t w) { return w != 0; })) {
      if (set.size() == cap)
        return {};
      size_t pick = kept, pickCount = 0;
      for (size_t i = 0; i < kept; ++i) {
        size_t count = 0;
        for (size_t w = 0; w < words; ++w)
          count += __builtin_popcountll(within[i][w] & open[w]);
        if (count > pickCount) {
          pickCount = count;
          pick = i;
        }
      }
      if (pick == kept)
        return {};
      set.push_back(pick);
      for (size_t w = 0; w < words; ++w)
        open[w] &= ~within[pick][w];
    }
    return set;
  }

  const size_t points, kept, cap;
  const double target;

private:
  static constexpr double infinity = std::numeric_limits<double>::infinity();
  static bool contains(const std::vector<size_t> &set, size_t i) {
    return std::find(set.begin(), set.end(), i) != set.end();
  }
  double excessOf(const std::vector<double> &at) const {
    double excess = 0;
    for (size_t p = 0; p < points; ++p)
      excess += std::max(0.0, at[p] - target);
    return excess;
  }

  Times regrets;
};
} // namespace

/// Steps 3 and 3b over `times` [kept][point] and each point's `best`: the
/// chosen rows of `times`.
static std::vector<size_t> chooseCover(const Times &times,
                                       const std::vector<double> &best,
                                       const PartitionOptions &options) {
  Cover cover(times, best, options);
  std::vector<size_t> chosen;
  cover.grow(chosen);
  // At the cap with points still above the target: swap a chosen variant
  // for another candidate where that lowers the excess.
  auto atCapAboveTarget = [&](const std::vector<size_t> &set) {
    return set.size() == cover.cap &&
           !cover.withinTarget(cover.regretsOf(set));
  };
  if (atCapAboveTarget(chosen))
    cover.swap(chosen, /*minimax=*/false, 3);
  if (!atCapAboveTarget(chosen))
    return chosen;

  // Still above the target at the cap. The summed excess can leave one
  // point far above it (a wave cliff no chosen tile avoids) where others
  // are a little above; but the criterion is every point's regret. So
  // minimize the worst point's: the least threshold at which a greedy set
  // cover needs at most `cap` candidates, by bisection; the rest of the
  // cap filled as above; then swaps while they lower the worst point's
  // regret (then the excess). The better of that and the set above is
  // kept.
  double worst = cover.worstOf(cover.regretsOf(chosen));
  std::vector<size_t> minimax;
  double lo = cover.target, hi = worst;
  for (int step = 0; step < 24 && hi - lo > 1e-4; ++step) {
    double mid = (lo + hi) / 2;
    std::vector<size_t> set = cover.coverWithin(mid);
    if (set.empty()) {
      lo = mid;
    } else {
      hi = mid;
      minimax = std::move(set);
    }
  }
  if (minimax.empty())
    return chosen;
  cover.grow(minimax);
  cover.swap(minimax, /*minimax=*/true, 4);
  if (cover.worstOf(cover.regretsOf(minimax)) < worst * (1 - 1e-9))
    return minimax;
  return chosen;
}

/// Evaluates the `kept` candidates at `points` points (`cost(c, p)`):
/// the times and each point's best.
static Times evaluate(const std::vector<size_t> &kept, size_t points,
                      const std::function<double(size_t, size_t)> &cost,
                      std::vector<double> &best) {
  Times times(kept.size(), std::vector<double>(points));
  best.assign(points, std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < kept.size(); ++i)
    for (size_t p = 0; p < points; ++p) {
      times[i][p] = cost(kept[i], p);
      best[p] = std::min(best[p], times[i][p]);
    }
  return times;
}

/// Numbers the chosen variants in the order the points first pick them,
/// appending each one's candidate to `out` as it gets its number.
class VariantNumbers {
public:
  VariantNumbers(size_t count, std::vector<size_t> &out)
      : number(count, -1), out(out) {}
  /// The number of chosen variant `j`, candidate `candidate`.
  uint32_t get(size_t j, size_t candidate) {
    if (number[j] < 0) {
      number[j] = int64_t(out.size());
      out.push_back(candidate);
    }
    return uint32_t(number[j]);
  }

private:
  std::vector<int64_t> number;
  std::vector<size_t> &out;
};

/// Extends `table` to `lower` with `variant`, merging a run of the same.
static void appendInterval(IntervalTable &table, int64_t lower,
                           uint32_t variant) {
  if (table.variant.empty() || table.variant.back() != variant) {
    table.lower.push_back(lower);
    table.variant.push_back(variant);
  }
}

/// Gaps between sweep points of up to this many values are scanned whole.
constexpr int64_t kScannedGap = 256;

/// Appends to `table` the intervals strictly inside (a, b) where the
/// fastest chosen variant `fastest(value)` (an index into the chosen set)
/// changes, `ja` picked at a and `jb` at b, by bisection. Each bound is the
/// first value of its variant's run; a region that no bisection point
/// falls in is missed (an ordering that flips and flips back, at wave
/// cliffs).
template <typename Fastest, typename Number>
static void bisectGap(IntervalTable &table, int64_t a, size_t ja, int64_t b,
                      size_t jb, const Fastest &fastest, const Number &number) {
  if (b - a <= 1 || ja == jb)
    return;
  int64_t mid = a + (b - a) / 2;
  size_t jm = fastest(mid);
  if (jm != ja) {
    bisectGap(table, a, ja, mid, jm, fastest, number);
    appendInterval(table, mid, number(jm));
  }
  bisectGap(table, mid, jm, b, jb, fastest, number);
}

/// Between neighbouring sweep points a and b that pick different variants
/// (`ja`, `jb`): every value of a gap of up to kScannedGap, else
/// bisectGap. Gaps whose ends pick the same variant are not looked into:
/// scanning those too evaluated nearly every value of a large range's
/// sparse sweep below the gaps' limit (a Tile node's data-bound sizes,
/// four keys, took 174 s to compile instead of 4.5).
template <typename Fastest, typename Number>
static void refineGap(IntervalTable &table, int64_t a, size_t ja, int64_t b,
                      size_t jb, const Fastest &fastest, const Number &number) {
  if (ja == jb)
    return;
  if (b - a > kScannedGap)
    return bisectGap(table, a, ja, b, jb, fastest, number);
  for (int64_t v = a + 1; v < b; ++v)
    appendInterval(table, v, number(fastest(v)));
}

/// The fastest of `count` chosen variants, variant j taking `time(j)`: the
/// first of equals.
template <typename Time>
static size_t fastestOf(size_t count, const Time &time) {
  size_t fastest = 0;
  double fastestTime = time(0);
  for (size_t j = 1; j < count; ++j)
    if (double t = time(j); t < fastestTime) {
      fastest = j;
      fastestTime = t;
    }
  return fastest;
}

/// The fastest of `chosen` (rows of `times`) at point p.
static size_t fastestAt(const Times &times, const std::vector<size_t> &chosen,
                        size_t p) {
  return fastestOf(chosen.size(),
                   [&](size_t j) { return times[chosen[j]][p]; });
}

Partition dyncc::cost::partitionRange(
    size_t count, const std::function<double(size_t, int64_t)> &cost,
    int64_t lo, int64_t hi, const PartitionOptions &options) {
  Partition result;
  result.points = getSweepPoints(lo, hi, options.exhaustiveLimit);
  if (count == 0 || result.points.empty())
    return result;
  std::vector<int64_t> coarse = getSweepPoints(lo, hi, 128);
  std::vector<size_t> kept = pruneCandidates(
      count, coarse.size(),
      [&](size_t c, size_t p) { return cost(c, coarse[p]); },
      options.pruneFactor, options.keepPerPoint);
  result.considered = kept.size();
  Times times = evaluate(
      kept, result.points.size(),
      [&](size_t c, size_t p) { return cost(c, result.points[p]); },
      result.best);
  std::vector<size_t> chosen = chooseCover(times, result.best, options);

  // The table, over the variants some point picks, with the bounds
  // between sweep points bisected.
  VariantNumbers numbers(chosen.size(), result.chosen);
  auto number = [&](size_t j) { return numbers.get(j, kept[chosen[j]]); };
  auto fastest = [&](int64_t value) {
    return fastestOf(chosen.size(),
                     [&](size_t j) { return cost(kept[chosen[j]], value); });
  };
  result.picked.resize(result.points.size());
  for (size_t p = 0; p < result.points.size(); ++p) {
    size_t j = fastestAt(times, chosen, p);
    result.picked[p] = times[chosen[j]][p];
    if (p > 0)
      refineGap(result.table, result.points[p - 1],
                fastestAt(times, chosen, p - 1), result.points[p], j, fastest,
                number);
    appendInterval(result.table, result.points[p], number(j));
  }
  for (size_t p = 0; p < result.points.size(); ++p)
    result.maxRegret =
        std::max(result.maxRegret, result.picked[p] / result.best[p] - 1);
  return result;
}

DecisionTable DecisionTable::fromIntervals(IntervalTable table) {
  DecisionTable result;
  result.nodes.push_back(std::move(table));
  return result;
}

const IntervalTable &DecisionTable::getNode(const int64_t *values,
                                            size_t depth) const {
  const IntervalTable *node = &nodes[0];
  for (size_t d = 0; d < depth; ++d)
    node = &nodes[node->lookup(values[d])];
  return *node;
}

uint32_t DecisionTable::lookup(const int64_t *values) const {
  return getNode(values, keys - 1).lookup(values[keys - 1]);
}

int64_t dyncc::cost::getGridPointsPerDimension(size_t dimensions) {
  return dimensions <= 2 ? 32 : dimensions == 3 ? 16 : 8;
}

/// The coarse sweep's points per dimension (pruneCandidates'), for
/// `dimensions` dynamic dimensions.
static int64_t getCoarsePointsPerDimension(size_t dimensions) {
  return dimensions <= 2 ? 12 : dimensions == 3 ? 5 : 3;
}

/// At most `count` of `points`, evenly spaced by index, both ends kept
/// (getGridPoints adds the tiles' edges to its count; beyond two
/// dimensions the grid's product is what bounds a search's time).
static std::vector<int64_t> thin(std::vector<int64_t> points, size_t count) {
  if (points.size() <= count || count < 2)
    return points;
  std::vector<int64_t> kept;
  for (size_t i = 0; i < count; ++i)
    kept.push_back(points[(i * (points.size() - 1) + (count - 1) / 2) /
                          (count - 1)]);
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  return kept;
}

namespace {
/// A grid's points, in row-major order over the dimensions: the values of
/// point p.
class Grid {
public:
  explicit Grid(std::vector<std::vector<int64_t>> axes)
      : axes(std::move(axes)) {
    size = 1;
    for (const std::vector<int64_t> &axis : this->axes)
      size *= axis.size();
  }
  void at(size_t p, int64_t *values) const {
    for (size_t d = axes.size(); d-- > 0;) {
      values[d] = axes[d][p % axes[d].size()];
      p /= axes[d].size();
    }
  }
  std::vector<std::vector<int64_t>> axes;
  size_t size;
};
} // namespace

PartitionGrid dyncc::cost::partitionGrid(
    size_t count, const std::function<double(size_t, const int64_t *)> &cost,
    const std::vector<std::pair<int64_t, int64_t>> &ranges,
    const PartitionOptions &options, int64_t pointsPerDimension) {
  PartitionGrid result;
  size_t dims = ranges.size();
  if (dims == 0 || dims > DecisionTable::kMaxKeys)
    return result;
  if (pointsPerDimension <= 0)
    pointsPerDimension = getGridPointsPerDimension(dims);
  int64_t coarseCount = getCoarsePointsPerDimension(dims);
  std::vector<std::vector<int64_t>> fineAxes, coarseAxes;
  for (auto [lo, hi] : ranges) {
    std::vector<int64_t> fine = getGridPoints(lo, hi, pointsPerDimension);
    std::vector<int64_t> coarse = getGridPoints(lo, hi, coarseCount);
    if (dims > 2) {
      fine = thin(std::move(fine), size_t(pointsPerDimension));
      coarse = thin(std::move(coarse), size_t(coarseCount));
    }
    fineAxes.push_back(std::move(fine));
    coarseAxes.push_back(std::move(coarse));
  }
  Grid grid(fineAxes), coarse(coarseAxes);
  result.points = fineAxes;
  if (count == 0 || grid.size == 0)
    return result;
  int64_t values[DecisionTable::kMaxKeys];
  std::vector<size_t> kept = pruneCandidates(
      count, coarse.size,
      [&](size_t c, size_t p) {
        coarse.at(p, values);
        return cost(c, values);
      },
      options.pruneFactor, options.keepPerPoint);
  result.considered = kept.size();
  std::vector<double> best;
  Times times = evaluate(
      kept, grid.size,
      [&](size_t c, size_t p) {
        grid.at(p, values);
        return cost(c, values);
      },
      best);
  std::vector<size_t> chosen = chooseCover(times, best, options);

  // The tree, built depth first: a node per grid row of its dimension,
  // where runs of equal children merge into one interval and equal nodes
  // of a depth are one node. nodes[0], the root, is filled last.
  VariantNumbers numbers(chosen.size(), result.chosen);
  auto number = [&](size_t j) { return numbers.get(j, kept[chosen[j]]); };
  DecisionTable &table = result.table;
  table.keys = dims;
  table.nodes.resize(1);
  std::map<std::pair<size_t, std::vector<int64_t>>, uint32_t> byContent;
  std::function<IntervalTable(size_t, size_t)> build = [&](size_t depth,
                                                           size_t prefix) {
    IntervalTable node;
    const std::vector<int64_t> &axis = fineAxes[depth];
    for (size_t i = 0; i < axis.size(); ++i) {
      size_t p = prefix * axis.size() + i;
      if (depth + 1 == dims) {
        size_t j = fastestAt(times, chosen, p);
        result.maxRegret =
            std::max(result.maxRegret, times[chosen[j]][p] / best[p] - 1);
        // The last dimension's bounds found between grid points, at the
        // row's values of the others: over two dimensions only, where the
        // rows are a few dozen (over three or four they are hundreds, and a
        // data-bound Tile's four keys took twice as long to search).
        if (i > 0 && dims <= 2) {
          grid.at(p, values);
          auto fastest = [&](int64_t value) {
            values[depth] = value;
            return fastestOf(chosen.size(), [&](size_t j) {
              return cost(kept[chosen[j]], values);
            });
          };
          refineGap(node, axis[i - 1], fastestAt(times, chosen, p - 1), axis[i],
                    j, fastest, number);
        }
        appendInterval(node, axis[i], number(j));
        continue;
      }
      IntervalTable child = build(depth + 1, p);
      std::vector<int64_t> content = child.lower;
      content.insert(content.end(), child.variant.begin(), child.variant.end());
      auto [it, inserted] = byContent.insert(
          {{depth + 1, std::move(content)}, uint32_t(table.nodes.size())});
      if (inserted)
        table.nodes.push_back(std::move(child));
      appendInterval(node, axis[i], it->second);
    }
    return node;
  };
  table.nodes[0] = build(0, 0);
  return result;
}
