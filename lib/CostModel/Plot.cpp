//===- Plot.cpp - Variant regions as an SVG chart -------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Plot.h"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace dyncc::cost;

static std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

static std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", v);
  return buffer;
}

/// A tick's label: three significant digits, so that ticks 0.01 apart
/// (run times in ms) do not all read 0.0.
static std::string tickLabel(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", v);
  return buffer;
}

/// `series` with its points in ascending x (a stable sort: points of equal
/// x keep their order).
static dyncc::cost::PlotSeries
sortedByX(const dyncc::cost::PlotSeries &series) {
  std::vector<size_t> order(series.x.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return series.x[a] < series.x[b];
  });
  dyncc::cost::PlotSeries sorted = series;
  for (size_t i = 0; i < order.size(); ++i) {
    sorted.x[i] = series.x[order[i]];
    sorted.y[i] = series.y[order[i]];
    sorted.variant[i] = series.variant[order[i]];
  }
  return sorted;
}

std::string dyncc::cost::plotVariantRegions(
    const std::vector<PlotSeries> &series, const std::string &xName,
    const std::string &yName) {
  static const char *colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                  "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                  "#bcbd22", "#17becf", "#393b79", "#637939",
                                  "#8c6d31", "#843c39", "#7b4173", "#3182bd"};
  const int panelW = 560, panelH = 240, left = 70, gap = 80, line = 18;
  int width = left + panelW + 30;
  int height = 40;
  for (const PlotSeries &ps : series)
    height += panelH + gap + line * int(ps.variantNames.size());
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(width) + "\" height=\"" +
                    std::to_string(height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n"
                    "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  int y0 = 40;
  for (const PlotSeries &given : series) {
    if (given.x.empty())
      continue;
    const PlotSeries ps = sortedByX(given);
    double xLo = std::log(double(std::max<int64_t>(1, ps.x.front())));
    double xHi = std::log(double(std::max<int64_t>(2, ps.x.back())));
    if (xHi <= xLo)
      xHi = xLo + 1;
    double yHi = *std::max_element(ps.y.begin(), ps.y.end()) * 1.1;
    if (yHi <= 0)
      yHi = 1;
    auto px = [&](int64_t x) {
      return left + (std::log(double(std::max<int64_t>(1, x))) - xLo) /
                        (xHi - xLo) * panelW;
    };
    auto py = [&](double y) { return y0 + panelH - y / yHi * panelH; };
    svg += "<text x=\"" + std::to_string(left) + "\" y=\"" +
           std::to_string(y0 - 10) + "\" font-weight=\"bold\">" +
           escape(ps.title) + "</text>\n";
    svg += "<rect x=\"" + std::to_string(left) + "\" y=\"" +
           std::to_string(y0) + "\" width=\"" + std::to_string(panelW) +
           "\" height=\"" + std::to_string(panelH) +
           "\" fill=\"none\" stroke=\"#888\"/>\n";
    // Axes: powers of two along x, five steps along y.
    for (int64_t t = 1; t <= ps.x.back(); t *= 4)
      if (t >= ps.x.front())
        svg += "<text x=\"" + number(px(t)) + "\" y=\"" +
               std::to_string(y0 + panelH + 15) +
               "\" text-anchor=\"middle\">" + std::to_string(t) + "</text>\n";
    for (int i = 0; i <= 5; ++i) {
      double v = yHi * i / 5;
      svg += "<text x=\"" + std::to_string(left - 5) + "\" y=\"" +
             number(py(v) + 4) + "\" text-anchor=\"end\">" + tickLabel(v) +
             "</text>\n";
    }
    svg += "<text x=\"" + std::to_string(left + panelW / 2) + "\" y=\"" +
           std::to_string(y0 + panelH + 32) + "\" text-anchor=\"middle\">" +
           escape(xName) + "</text>\n";
    svg += "<text transform=\"translate(18," + std::to_string(y0 + panelH / 2) +
           ") rotate(-90)\" text-anchor=\"middle\">" +
           escape(ps.yName.empty() ? yName : ps.yName) + "</text>\n";
    // One polyline per run of a variant.
    size_t start = 0;
    for (size_t i = 1; i <= ps.x.size(); ++i) {
      if (i < ps.x.size() && ps.variant[i] == ps.variant[start])
        continue;
      std::string points;
      // Join the previous run's last point, so the curve is continuous.
      for (size_t j = start == 0 ? 0 : start - 1; j < i; ++j)
        points += number(px(ps.x[j])) + "," + number(py(ps.y[j])) + " ";
      svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" +
             std::string(colours[ps.variant[start] % 16]) + "\" points=\"" +
             points + "\"/>\n";
      start = i;
    }
    int ly = y0 + panelH + 55;
    for (size_t v = 0; v < ps.variantNames.size(); ++v) {
      int y = ly + line * int(v);
      svg += "<rect x=\"" + std::to_string(left) + "\" y=\"" +
             std::to_string(y - 9) + "\" width=\"14\" height=\"10\" fill=\"" +
             colours[v % 16] + "\"/>\n";
      svg += "<text x=\"" + std::to_string(left + 20) + "\" y=\"" +
             std::to_string(y) + "\">" + std::to_string(v) + ": " +
             escape(ps.variantNames[v]) + "</text>\n";
    }
    y0 += panelH + gap + line * int(ps.variantNames.size());
  }
  svg += "</svg>\n";
  return svg;
}

bool dyncc::cost::writePlotFile(const std::string &path,
                                const std::string &svg, std::string &error) {
  std::string temporary = path + ".tmp";
  FILE *f = std::fopen(temporary.c_str(), "w");
  if (!f) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(svg.data(), 1, svg.size(), f) == svg.size();
  ok &= std::fclose(f) == 0;
  if (!ok || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}
