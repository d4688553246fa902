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
//    lowers the excess. The cap wins; the achieved regret is reported.
// 4. The table takes, at each point, the fastest chosen variant, and merges
//    runs of the same one into intervals. Variants no point picks are
//    dropped.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Partition.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace dyncc::cost;

size_t dyncc::cost::findInterval(const std::vector<int64_t> &lower,
                                 int64_t value) {
  auto it = std::upper_bound(lower.begin(), lower.end(), value);
  return it == lower.begin() ? 0 : size_t(it - lower.begin()) - 1;
}

uint32_t IntervalTable::lookup(int64_t value) const {
  return variant[findInterval(lower, value)];
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
  double a = std::log(double(std::max<int64_t>(lo, 1)));
  double b = std::log(double(hi));
  for (int64_t i = 0; i < count; ++i)
    points.push_back(std::clamp<int64_t>(
        std::llround(std::exp(a + (b - a) * double(i) / double(count - 1))),
        lo, hi));
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

/// Steps 3 and 3b over `times` [kept][point] and each point's `best`: the
/// chosen rows of `times`. Works on each time's log regret, log(time /
/// best), computed once: the log of the faster of two is the lesser log.
static std::vector<size_t> chooseCover(const Times &times,
                                       const std::vector<double> &best,
                                       const PartitionOptions &options) {
  size_t points = best.size(), kept = times.size();
  double target = std::log1p(options.targetRegret);
  Times regrets(kept, std::vector<double>(points));
  for (size_t i = 0; i < kept; ++i)
    for (size_t p = 0; p < points; ++p)
      regrets[i][p] = std::log(times[i][p] / best[p]);
  constexpr double infinity = std::numeric_limits<double>::infinity();
  std::vector<double> current(points, infinity);
  std::vector<size_t> chosen;
  auto maxRegret = [&](const std::vector<double> &at) {
    double worst = 0;
    for (size_t p = 0; p < points; ++p)
      worst = std::max(worst, at[p]);
    return std::expm1(worst);
  };
  auto excessOf = [&](const std::vector<double> &at) {
    double excess = 0;
    for (size_t p = 0; p < points; ++p)
      excess += std::max(0.0, at[p] - target);
    return excess;
  };
  auto isChosen = [&](size_t i) {
    return std::find(chosen.begin(), chosen.end(), i) != chosen.end();
  };
  while (chosen.size() < options.cap &&
         (chosen.empty() || maxRegret(current) > options.targetRegret)) {
    size_t pick = kept;
    double pickScore = infinity;
    for (size_t i = 0; i < kept; ++i) {
      if (isChosen(i))
        continue;
      // The regret above the target, summed over the points (a hinge on
      // the log of the ratio), then the whole regret to break ties.
      const std::vector<double> &row = regrets[i];
      double score = 0, excess = 0;
      for (size_t p = 0; p < points; ++p) {
        double regret = std::min(current[p], row[p]);
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
      break;
    chosen.push_back(pick);
    for (size_t p = 0; p < points; ++p)
      current[p] = std::min(current[p], regrets[pick][p]);
  }
  // At the cap with points still above the target: swap a chosen variant
  // for another candidate where that lowers the excess.
  for (int pass = 0; pass < 3 && chosen.size() == options.cap &&
                     maxRegret(current) > options.targetRegret;
       ++pass) {
    bool improved = false;
    for (size_t j = 0; j < chosen.size(); ++j) {
      std::vector<double> others(points, infinity);
      for (size_t o = 0; o < chosen.size(); ++o)
        if (o != j)
          for (size_t p = 0; p < points; ++p)
            others[p] = std::min(others[p], regrets[chosen[o]][p]);
      double bestExcess = excessOf(current);
      size_t bestSwap = kept;
      for (size_t i = 0; i < kept; ++i) {
        if (isChosen(i))
          continue;
        double excess = 0;
        for (size_t p = 0; p < points; ++p)
          excess += std::max(0.0, std::min(others[p], regrets[i][p]) - target);
        if (excess < bestExcess * (1 - 1e-9)) {
          bestExcess = excess;
          bestSwap = i;
        }
      }
      if (bestSwap == kept)
        continue;
      chosen[j] = bestSwap;
      for (size_t p = 0; p < points; ++p)
        current[p] = std::min(others[p], regrets[bestSwap][p]);
      improved = true;
    }
    if (!improved)
      break;
  }
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

/// The fastest of `chosen` (rows of `times`) at point p.
static size_t fastestAt(const Times &times, const std::vector<size_t> &chosen,
                        size_t p) {
  size_t fastest = 0;
  for (size_t j = 1; j < chosen.size(); ++j)
    if (times[chosen[j]][p] < times[chosen[fastest]][p])
      fastest = j;
  return fastest;
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

  // The table, over the variants some point picks.
  VariantNumbers numbers(chosen.size(), result.chosen);
  result.picked.resize(result.points.size());
  for (size_t p = 0; p < result.points.size(); ++p) {
    size_t j = fastestAt(times, chosen, p);
    result.picked[p] = times[chosen[j]][p];
    appendInterval(result.table, result.points[p],
                   numbers.get(j, kept[chosen[j]]));
  }
  for (size_t p = 0; p < result.points.size(); ++p)
    result.maxRegret =
        std::max(result.maxRegret, result.picked[p] / result.best[p] - 1);
  return result;
}

const IntervalTable &DecisionTable::getInner(int64_t a) const {
  return inner[findInterval(lower, a)];
}

uint32_t DecisionTable::lookup(int64_t a, int64_t b) const {
  return getInner(a).lookup(b);
}

Partition2D dyncc::cost::partitionRange2D(
    size_t count,
    const std::function<double(size_t, int64_t, int64_t)> &cost,
    int64_t aLo, int64_t aHi, int64_t bLo, int64_t bHi,
    const PartitionOptions &options, int64_t pointsPerDimension) {
  Partition2D result;
  result.pointsA = getGridPoints(aLo, aHi, pointsPerDimension);
  result.pointsB = getGridPoints(bLo, bHi, pointsPerDimension);
  size_t na = result.pointsA.size(), nb = result.pointsB.size();
  if (count == 0 || na == 0 || nb == 0)
    return result;
  auto at = [&](size_t p) {
    return std::pair<int64_t, int64_t>{result.pointsA[p / nb],
                                       result.pointsB[p % nb]};
  };
  std::vector<int64_t> coarseA = getGridPoints(aLo, aHi, 12);
  std::vector<int64_t> coarseB = getGridPoints(bLo, bHi, 12);
  std::vector<size_t> kept = pruneCandidates(
      count, coarseA.size() * coarseB.size(),
      [&](size_t c, size_t p) {
        return cost(c, coarseA[p / coarseB.size()], coarseB[p % coarseB.size()]);
      },
      options.pruneFactor, options.keepPerPoint);
  result.considered = kept.size();
  std::vector<double> best;
  Times times = evaluate(
      kept, na * nb,
      [&](size_t c, size_t p) {
        auto [a, b] = at(p);
        return cost(c, a, b);
      },
      best);
  std::vector<size_t> chosen = chooseCover(times, best, options);

  // Per value of a, the interval table over b; equal neighbours merge.
  VariantNumbers numbers(chosen.size(), result.chosen);
  for (size_t ia = 0; ia < na; ++ia) {
    IntervalTable inner;
    for (size_t ib = 0; ib < nb; ++ib) {
      size_t p = ia * nb + ib;
      size_t j = fastestAt(times, chosen, p);
      result.maxRegret =
          std::max(result.maxRegret, times[chosen[j]][p] / best[p] - 1);
      appendInterval(inner, result.pointsB[ib],
                     numbers.get(j, kept[chosen[j]]));
    }
    DecisionTable &table = result.table;
    if (!table.inner.empty() && table.inner.back().lower == inner.lower &&
        table.inner.back().variant == inner.variant)
      continue;
    table.lower.push_back(result.pointsA[ia]);
    table.inner.push_back(std::move(inner));
  }
  return result;
}
