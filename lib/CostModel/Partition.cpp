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

uint32_t IntervalTable::lookup(int64_t value) const {
  // The last interval whose lower bound is <= value.
  auto it = std::upper_bound(lower.begin(), lower.end(), value);
  size_t index = it == lower.begin() ? 0 : size_t(it - lower.begin()) - 1;
  return variant[index];
}

std::vector<int64_t> dyncc::cost::getSweepPoints(int64_t lo, int64_t hi,
                                                 int64_t exhaustiveLimit) {
  std::vector<int64_t> points;
  if (hi < lo)
    return points;
  if (hi - lo + 1 <= exhaustiveLimit) {
    for (int64_t v = lo; v <= hi; ++v)
      points.push_back(v);
    return points;
  }
  // Log-spaced, plus every value up to 64 and the multiples of 64 up to
  // 4096 (where tiles' edges fall), deduplicated.
  double a = std::log(double(std::max<int64_t>(lo, 1)));
  double b = std::log(double(hi));
  for (int64_t i = 0; i < exhaustiveLimit; ++i) {
    int64_t v = int64_t(std::llround(
        std::exp(a + (b - a) * double(i) / double(exhaustiveLimit - 1))));
    points.push_back(std::clamp(v, lo, hi));
  }
  for (int64_t v = lo; v <= std::min<int64_t>(hi, 64); ++v)
    points.push_back(v);
  for (int64_t v = 64; v <= std::min<int64_t>(hi, 4096); v += 64)
    if (v >= lo)
      points.push_back(v);
  points.push_back(lo);
  points.push_back(hi);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

Partition dyncc::cost::partitionRange(
    size_t count, const std::function<double(size_t, int64_t)> &cost,
    int64_t lo, int64_t hi, const PartitionOptions &options) {
  Partition result;
  result.points = getSweepPoints(lo, hi, options.exhaustiveLimit);
  if (count == 0 || result.points.empty())
    return result;

  // 1. Coarse sweep.
  std::vector<int64_t> coarse = getSweepPoints(lo, hi, 128);
  std::vector<size_t> kept;
  {
    std::vector<std::vector<double>> times(count,
                                           std::vector<double>(coarse.size()));
    std::vector<double> best(coarse.size(),
                             std::numeric_limits<double>::infinity());
    for (size_t c = 0; c < count; ++c)
      for (size_t p = 0; p < coarse.size(); ++p) {
        times[c][p] = cost(c, coarse[p]);
        best[p] = std::min(best[p], times[c][p]);
      }
    for (size_t c = 0; c < count; ++c)
      for (size_t p = 0; p < coarse.size(); ++p)
        if (times[c][p] <= options.pruneFactor * best[p]) {
          kept.push_back(c);
          break;
        }
  }
  result.considered = kept.size();

  // 2. Every point.
  size_t points = result.points.size();
  std::vector<std::vector<double>> times(kept.size(),
                                         std::vector<double>(points));
  result.best.assign(points, std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < kept.size(); ++i)
    for (size_t p = 0; p < points; ++p) {
      times[i][p] = cost(kept[i], result.points[p]);
      result.best[p] = std::min(result.best[p], times[i][p]);
    }

  // 3. Greedy cover.
  std::vector<double> current(points, std::numeric_limits<double>::infinity());
  std::vector<size_t> chosen;
  auto maxRegret = [&](const std::vector<double> &at) {
    double worst = 0;
    for (size_t p = 0; p < points; ++p)
      worst = std::max(worst, at[p] / result.best[p] - 1);
    return worst;
  };
  double target = std::log1p(options.targetRegret);
  while (chosen.size() < options.cap &&
         (chosen.empty() || maxRegret(current) > options.targetRegret)) {
    size_t pick = kept.size();
    double pickScore = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < kept.size(); ++i) {
      if (std::find(chosen.begin(), chosen.end(), i) != chosen.end())
        continue;
      // The regret above the target, summed over the points (a hinge on
      // the log of the ratio), then the whole regret to break ties.
      double score = 0, excess = 0;
      for (size_t p = 0; p < points; ++p) {
        double regret =
            std::log(std::min(current[p], times[i][p]) / result.best[p]);
        excess += std::max(0.0, regret - target);
        score += regret;
      }
      score += excess * 1e6;
      if (score < pickScore) {
        pickScore = score;
        pick = i;
      }
    }
    if (pick == kept.size())
      break;
    chosen.push_back(pick);
    for (size_t p = 0; p < points; ++p)
      current[p] = std::min(current[p], times[pick][p]);
  }

  // 3b. At the cap with points still above the target: swap a chosen
  // variant for another candidate where that lowers the excess.
  auto excessOf = [&](const std::vector<double> &at) {
    double excess = 0;
    for (size_t p = 0; p < points; ++p)
      excess += std::max(0.0, std::log(at[p] / result.best[p]) - target);
    return excess;
  };
  for (int pass = 0; pass < 3 && chosen.size() == options.cap &&
                     maxRegret(current) > options.targetRegret;
       ++pass) {
    bool improved = false;
    for (size_t j = 0; j < chosen.size(); ++j) {
      std::vector<double> others(points,
                                 std::numeric_limits<double>::infinity());
      for (size_t o = 0; o < chosen.size(); ++o)
        if (o != j)
          for (size_t p = 0; p < points; ++p)
            others[p] = std::min(others[p], times[chosen[o]][p]);
      double bestExcess = excessOf(current);
      size_t bestSwap = kept.size();
      std::vector<double> trial(points);
      for (size_t i = 0; i < kept.size(); ++i) {
        if (std::find(chosen.begin(), chosen.end(), i) != chosen.end())
          continue;
        for (size_t p = 0; p < points; ++p)
          trial[p] = std::min(others[p], times[i][p]);
        double excess = excessOf(trial);
        if (excess < bestExcess * (1 - 1e-9)) {
          bestExcess = excess;
          bestSwap = i;
        }
      }
      if (bestSwap == kept.size())
        continue;
      chosen[j] = bestSwap;
      for (size_t p = 0; p < points; ++p)
        current[p] = std::min(others[p], times[bestSwap][p]);
      improved = true;
    }
    if (!improved)
      break;
  }

  // 4. The table, over the variants some point picks.
  std::vector<size_t> argmin(points);
  for (size_t p = 0; p < points; ++p) {
    size_t bestChosen = 0;
    for (size_t j = 1; j < chosen.size(); ++j)
      if (times[chosen[j]][p] < times[chosen[bestChosen]][p])
        bestChosen = j;
    argmin[p] = bestChosen;
  }
  std::vector<int64_t> number(chosen.size(), -1);
  result.picked.resize(points);
  for (size_t p = 0; p < points; ++p) {
    size_t j = argmin[p];
    if (number[j] < 0) {
      number[j] = int64_t(result.chosen.size());
      result.chosen.push_back(kept[chosen[j]]);
    }
    uint32_t variant = uint32_t(number[j]);
    result.picked[p] = times[chosen[j]][p];
    if (result.table.variant.empty() || result.table.variant.back() != variant) {
      result.table.lower.push_back(result.points[p]);
      result.table.variant.push_back(variant);
    }
  }
  result.maxRegret = maxRegret(result.picked);
  return result;
}
