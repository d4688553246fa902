//===- Plot.h - Variant regions as an SVG chart -----------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A predicted-throughput curve over a dimension's range, one colour per
// variant region: what `dyncc explain --plot` and the tile-search benchmark
// draw. Plain SVG text, no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_PLOT_H
#define DYNCC_COSTMODEL_PLOT_H

#include <cstdint>
#include <string>
#include <vector>

namespace dyncc::cost {

struct PlotSeries {
  /// The x values (in any order: the chart draws the points by x), the y
  /// values, and each point's variant.
  std::vector<int64_t> x;
  std::vector<double> y;
  std::vector<uint32_t> variant;
  std::string title;
  /// This panel's y axis, where it differs from the chart's.
  std::string yName;
  /// The legend: variant i's name.
  std::vector<std::string> variantNames;
};

/// An SVG chart with a panel per series: a log x axis named `xName`, a
/// linear y axis named `yName` (or the series' own), one colour per
/// variant, and a legend.
std::string plotVariantRegions(const std::vector<PlotSeries> &series,
                               const std::string &xName,
                               const std::string &yName);

/// Writes `svg` to `path` atomically (a temporary name, then a rename), so
/// a failure leaves no partial file; false with a one-line `error`.
bool writePlotFile(const std::string &path, const std::string &svg,
                   std::string &error);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_PLOT_H
