//===- dyncc-tile-search.cpp - The GEMM tile search on its own -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   dyncc-tile-search --device h200 --gemm NxK[,NxK...] --m LO:HI
//                     [--dtype f16|bf16|f32] [--batch B] [--cap 8]
//                     [--target 0.03] [--svg FILE] [--bench] [--split-k]
//   dyncc-tile-search --device h200 --conv IN:OUT:K:S:HW[:1d][,...] --m LO:HI
//                     [--forms] [--dtype f32|f16|bf16] [--svg FILE]
//
// Runs the search and range partitioning for GEMMs of N x K weights over
// M in [LO, HI] on a device of the table, and prints each GEMM's variants,
// the intervals of M where each is chosen, its predicted TFLOP/s there and
// the achieved regret. --svg draws the predicted curves, one colour per
// variant region. --bench also times the search and the table look-up
// against the brute-force argmin it replaces (a ratio, same process).
// --split-k adds each small tile's split-K versions for each GEMM's K, as
// the compiler's search does for a kernel dyncc-split-k can split.
//
// --conv searches 2-D f32 convs (IN input channels, OUT output channels, a
// KxK window at stride S, HW x HW outputs; with `:1d`, a 1-D conv of K taps
// and HW outputs) over the batch in [LO, HI]: per
// conv its variants, and at each power-of-two batch the predicted time of
// the best candidate with one k-step for all three reduction loops (the
// candidates before per-loop k-steps) over the best of all (a ratio, same
// process). With --forms it prints instead each conv's two forms, as
// dyncc-conv-im2col weighs them (cost::predictConvForms): at each
// power-of-two batch the best direct conv, the copy of the windows and the
// best GEMM over it (microseconds and TFLOP/s), im2col's time over the
// direct conv's, and the ratio the pass decides by (the geometric mean at
// five batches log-spaced over [LO, HI]). --dtype sets the convs' element
// type (f32 unless given); --svg draws im2col's predicted speed-up over
// the batch, a panel per conv, coloured by the faster form.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Conv.h"
#include "dyncc/CostModel/Device.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Partition.h"
#include "dyncc/CostModel/Plot.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace dyncc::cost;

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "dyncc-tile-search: error: %s\n", message.c_str());
  std::exit(1);
}

bool parseInt(const char *text, int64_t &out) {
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (!*text || *end)
    return false;
  out = v;
  return true;
}

/// `text` cut at each `separator` ("a,,b" is "a", "", "b").
std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  for (size_t at = 0;;) {
    size_t next = text.find(separator, at);
    parts.push_back(text.substr(at, next - at));
    if (next == std::string::npos)
      return parts;
    at = next + 1;
  }
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       since)
      .count();
}

/// --conv: each conv's search over the batch, and the best candidate with
/// one k-step for every loop against the best of all.
int searchConvs(const std::vector<ConvProblem> &convs, int64_t lo, int64_t hi,
                const PartitionOptions &options, const Device &device) {
  for (const ConvProblem &problem : convs) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<ConvTile> tiles = enumerateConvTiles(problem, device);
    auto predict = [&](const ConvTile &tile, int64_t batch) {
      ConvProblem p = problem;
      p.batch = batch;
      return predictConv(tile, p, device).seconds;
    };
    Partition part = partitionRange(
        tiles.size(), [&](size_t c, int64_t b) { return predict(tiles[c], b); },
        lo, hi, options);
    double took = seconds(t0);
    size_t uniform = 0;
    for (const ConvTile &t : tiles)
      uniform += t.kChannels == t.kRows && t.kRows == t.kColumns;
    std::printf("\nconv %lldx%lld s%lld, %lld -> %lld channels, %lld x %lld "
                "outputs: %zu candidates (%zu with one k-step), %zu "
                "variants, max regret %.2f%%, %.3f s\n",
                (long long)problem.kh, (long long)problem.kw,
                (long long)problem.strideH, (long long)problem.inC,
                (long long)problem.outC, (long long)problem.outH,
                (long long)problem.outW, tiles.size(), uniform,
                part.chosen.size(), 100 * part.maxRegret, took);
    for (size_t v = 0; v < part.chosen.size(); ++v)
      std::printf("  v%zu  %s\n", v, tiles[part.chosen[v]].str().c_str());
    std::printf("  %-6s %-42s %-8s %-42s %-8s %s\n", "batch", "best", "TFLOP/s",
                "best with one k-step", "TFLOP/s", "ratio");
    for (int64_t batch = lo; batch <= hi; batch *= 2) {
      const ConvTile *best = nullptr, *bestUniform = nullptr;
      double t = 0, tu = 0;
      for (const ConvTile &tile : tiles) {
        double s = predict(tile, batch);
        if (!best || s < t)
          best = &tile, t = s;
        if ((tile.kChannels == tile.kRows && tile.kRows == tile.kColumns) &&
            (!bestUniform || s < tu))
          bestUniform = &tile, tu = s;
      }
      ConvProblem p = problem;
      p.batch = batch;
      std::printf("  %-6lld %-42s %-8.2f %-42s %-8.2f %.2fx\n",
                  (long long)batch, best->str().c_str(), p.flops() / t / 1e12,
                  bestUniform ? bestUniform->str().c_str() : "(none)",
                  bestUniform ? p.flops() / tu / 1e12 : 0.0,
                  bestUniform ? tu / t : 0.0);
    }
  }
  return 0;
}

/// --conv --forms: each conv's direct and im2col forms over the batch;
/// with `svgPath`, a panel per conv of im2col's predicted speed-up over the
/// direct conv at 24 batches log-spaced over the range, coloured by the
/// faster form.
int printConvForms(const std::vector<ConvProblem> &convs, int64_t lo,
                   int64_t hi, const Device &device,
                   const std::string &svgPath) {
  std::vector<PlotSeries> series;
  for (const ConvProblem &problem : convs) {
    if (problem.spatialDims == 1)
      std::printf("\nconv1d %lld s%lld, %lld -> %lld channels, %lld outputs, "
                  "%lld-byte elements\n",
                  (long long)problem.kw, (long long)problem.strideW,
                  (long long)problem.inC, (long long)problem.outC,
                  (long long)problem.outW, (long long)problem.elementBytes);
    else
      std::printf("\nconv %lldx%lld s%lld, %lld -> %lld channels, %lld x %lld "
                  "outputs, %lld-byte elements\n",
                  (long long)problem.kh, (long long)problem.kw,
                  (long long)problem.strideH, (long long)problem.inC,
                  (long long)problem.outC, (long long)problem.outH,
                  (long long)problem.outW, (long long)problem.elementBytes);
    // `count` batches log-spaced over the range.
    auto logSpaced = [&](int64_t count) {
      std::vector<ConvProblem> points(count, problem);
      for (int64_t i = 0; i < count; ++i)
        points[i].batch = getLogSpacedValue(lo, hi, i, count);
      return points;
    };
    // The pass's points decide the form: folded where the batch is not 1
    // and the model says so.
    std::vector<ConvFormTimes> decided =
        predictConvForms(logSpaced(kConvFormPoints), device);
    bool fold = hi > 1 && getFoldRatio(decided) < 1;
    double ratio = getIm2ColRatio(decided, fold);
    std::printf("  %-6s %10s %8s %10s %10s %10s %8s %s\n", "batch", "direct us",
                "TFLOP/s", "copy us", "gemm us", "folded us", "TFLOP/s",
                "im2col/direct");
    std::vector<ConvProblem> batches;
    for (int64_t batch = lo; batch <= hi; batch *= 2) {
      batches.push_back(problem);
      batches.back().batch = batch;
    }
    std::vector<ConvFormTimes> times = predictConvForms(batches, device);
    for (size_t i = 0; i < times.size(); ++i) {
      const ConvFormTimes &t = times[i];
      double flops = batches[i].flops();
      std::printf("  %-6lld %10.2f %8.2f %10.2f %10.2f %10.2f %8.2f %.2f\n",
                  (long long)batches[i].batch, t.direct * 1e6,
                  flops / t.direct / 1e12, t.copy * 1e6, t.gemm * 1e6,
                  t.folded() * 1e6, flops / t.im2col(fold) / 1e12,
                  t.im2col(fold) / t.direct);
    }
    std::printf("  ratio over [%lld, %lld]: %.2f (%s%s)\n", (long long)lo,
                (long long)hi, ratio, ratio < 1 ? "im2col" : "direct",
                fold ? ", batch folded" : "");
    if (svgPath.empty())
      continue;
    PlotSeries ps;
    bool oneD = problem.spatialDims == 1;
    ps.title =
        (oneD ? "conv1d " + std::to_string(problem.kw)
              : std::to_string(problem.kh) + "x" + std::to_string(problem.kw)) +
        " s" + std::to_string(problem.strideW) + ", " +
        std::to_string(problem.inC) + "->" + std::to_string(problem.outC) +
        ", " +
        (oneD ? std::to_string(problem.outW)
              : std::to_string(problem.outH) + "x" +
                    std::to_string(problem.outW)) +
        " outputs, " + (problem.elementBytes == 2 ? "16-bit" : "f32") +
        " (ratio " + std::to_string(ratio).substr(0, 4) + ")";
    ps.variantNames = {"direct conv faster", "im2col faster"};
    std::vector<ConvProblem> sweep = logSpaced(24);
    sweep.erase(std::unique(sweep.begin(), sweep.end(),
                            [](const ConvProblem &a, const ConvProblem &b) {
                              return a.batch == b.batch;
                            }),
                sweep.end());
    std::vector<ConvFormTimes> swept = predictConvForms(sweep, device);
    for (size_t i = 0; i < swept.size(); ++i) {
      ps.x.push_back(sweep[i].batch);
      ps.y.push_back(swept[i].direct / swept[i].im2col(fold));
      ps.variant.push_back(swept[i].im2col(fold) < swept[i].direct ? 1 : 0);
    }
    series.push_back(ps);
  }
  if (!svgPath.empty()) {
    std::string error;
    if (!writePlotFile(
            svgPath,
            plotVariantRegions(series, "batch", "im2col's predicted speed-up"),
            error))
      fail(error);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string deviceName = "h200", dtype = "f16", svgPath;
  std::vector<std::pair<int64_t, int64_t>> gemms;
  std::vector<ConvProblem> convs;
  int64_t lo = 1, hi = 4096, batch = 1;
  PartitionOptions options;
  bool bench = false, splitK = false, forms = false, dtypeGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        fail(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--device") {
      deviceName = value();
    } else if (arg == "--dtype") {
      dtype = value();
      dtypeGiven = true;
    } else if (arg == "--gemm") {
      for (const std::string &item : split(value(), ',')) {
        size_t x = item.find('x');
        int64_t n, k;
        if (x == std::string::npos || !parseInt(item.substr(0, x).c_str(), n) ||
            !parseInt(item.substr(x + 1).c_str(), k) || n < 1 || k < 1)
          fail("--gemm expects NxK[,NxK...], got '" + item + "'");
        gemms.push_back({n, k});
      }
    } else if (arg == "--conv") {
      for (const std::string &item : split(value(), ',')) {
        std::vector<std::string> fields = split(item, ':');
        bool oneD = fields.size() == 6 && fields.back() == "1d";
        if (oneD)
          fields.pop_back();
        std::vector<int64_t> v;
        for (const std::string &field : fields) {
          int64_t n;
          if (!parseInt(field.c_str(), n) || n < 1)
            break;
          v.push_back(n);
        }
        if (v.size() != 5 || fields.size() != 5)
          fail("--conv expects IN:OUT:K:S:HW[:1d][,...] (positive integers), "
               "got '" +
               item + "'");
        ConvProblem p;
        p.inC = v[0];
        p.outC = v[1];
        p.kw = v[2];
        p.strideW = v[3];
        p.outW = v[4];
        if (oneD) {
          p.spatialDims = 1;
        } else {
          p.kh = v[2];
          p.strideH = v[3];
          p.outH = v[4];
        }
        convs.push_back(p);
      }
    } else if (arg == "--m") {
      std::string range = value();
      size_t colon = range.find(':');
      if (colon == std::string::npos ||
          !parseInt(range.substr(0, colon).c_str(), lo) ||
          !parseInt(range.substr(colon + 1).c_str(), hi) || lo < 1 || hi < lo)
        fail("--m expects LO:HI with 1 <= LO <= HI, got '" + range + "'");
    } else if (arg == "--batch") {
      if (!parseInt(value(), batch) || batch < 1)
        fail("--batch expects a positive integer");
    } else if (arg == "--cap") {
      int64_t cap;
      if (!parseInt(value(), cap) || cap < 1)
        fail("--cap expects a positive integer");
      options.cap = size_t(cap);
    } else if (arg == "--target") {
      options.targetRegret = std::atof(value());
      if (options.targetRegret < 0)
        fail("--target expects a regret >= 0 (0.03 is 3%)");
    } else if (arg == "--svg") {
      svgPath = value();
    } else if (arg == "--bench") {
      bench = true;
    } else if (arg == "--split-k") {
      splitK = true;
    } else if (arg == "--forms") {
      forms = true;
    } else {
      fail("unknown argument '" + arg + "'");
    }
  }
  const Device *device = lookupDevice(deviceName);
  if (!device)
    fail("unknown device '" + deviceName +
         "' (expected a100, rtx3090, h100, h200, sm_80, sm_86 or sm_90)");
  if (dtype != "f16" && dtype != "bf16" && dtype != "f32")
    fail("--dtype expects f16, bf16 or f32");
  int64_t bytes = dtype == "f32" ? 4 : 2;
  if (forms && convs.empty())
    fail("--forms needs --conv");
  if (!convs.empty() && forms) {
    for (ConvProblem &p : convs)
      p.elementBytes = dtypeGiven ? bytes : 4;
    return printConvForms(convs, lo, hi, *device, svgPath);
  }
  if (!convs.empty())
    return searchConvs(convs, lo, hi, options, *device);
  if (gemms.empty())
    gemms.push_back({768, 768});

  auto start = std::chrono::steady_clock::now();
  std::vector<GemmTile> tiles = enumerateGemmTiles(bytes, *device);
  double enumerateSeconds = seconds(start);
  std::printf("device %s (%s), %s operands, M in [%lld, %lld], batch %lld: "
              "%zu candidates\n",
              device->name.c_str(), device->arch.c_str(), dtype.c_str(),
              (long long)lo, (long long)hi, (long long)batch, tiles.size());
  std::vector<PlotSeries> series;
  double searchSeconds = enumerateSeconds;
  for (auto [n, k] : gemms) {
    GemmProblem problem;
    problem.batch = batch;
    problem.n = n;
    problem.k = k;
    problem.operandBytes = problem.outputBytes = bytes;
    // With --split-k, each small tile's splits of this K too (the search's
    // candidates for a kernel dyncc-split-k takes).
    std::vector<GemmTile> all = tiles;
    if (splitK)
      for (const GemmTile &tile : tiles)
        for (const GemmTile &split : getSplitKTiles(tile, k))
          all.push_back(split);
    auto cost = [&](size_t c, int64_t m) {
      GemmProblem p = problem;
      p.m = m;
      return predictGemm(all[c], p, *device).seconds;
    };
    auto t0 = std::chrono::steady_clock::now();
    Partition part = partitionRange(all.size(), cost, lo, hi, options);
    double took = seconds(t0);
    searchSeconds += took;
    std::printf("\nGEMM N=%lld K=%lld: %zu considered, %zu variants, %zu "
                "intervals, max regret %.2f%% (target %.2f%%, cap %zu), "
                "%.3f s\n",
                (long long)n, (long long)k, part.considered,
                part.chosen.size(), part.table.lower.size(),
                100 * part.maxRegret, 100 * options.targetRegret, options.cap,
                took);
    // The set's rate over the sweep: its geometric mean (each point
    // weighs alike), which the candidates' changes are compared by.
    double logRate = 0;
    for (size_t p = 0; p < part.points.size(); ++p) {
      GemmProblem at = problem;
      at.m = part.points[p];
      logRate += std::log(at.flops() / part.picked[p] / 1e12);
    }
    std::printf("  predicted TFLOP/s over the %zu points: geometric mean "
                "%.2f\n",
                part.points.size(),
                std::exp(logRate / double(part.points.size())));
    for (size_t v = 0; v < part.chosen.size(); ++v)
      std::printf("  v%zu  %s\n", v, all[part.chosen[v]].str().c_str());
    std::printf("  %-14s %-4s %-20s %s\n", "M", "var", "TFLOP/s (first-last)",
                "bound");
    for (size_t i = 0; i < part.table.lower.size(); ++i) {
      int64_t from = part.table.lower[i];
      int64_t to = i + 1 < part.table.lower.size()
                       ? part.table.lower[i + 1] - 1
                       : hi;
      GemmProblem a = problem, b = problem;
      a.m = from;
      b.m = to;
      const GemmTile &tile = all[part.chosen[part.table.variant[i]]];
      GemmPrediction pa = predictGemm(tile, a, *device);
      GemmPrediction pb = predictGemm(tile, b, *device);
      char span[32];
      std::snprintf(span, sizeof(span), "%lld-%lld", (long long)from,
                    (long long)to);
      std::printf("  %-14s v%-3u %7.1f - %-10.1f %s\n", span,
                  part.table.variant[i], a.flops() / pa.seconds / 1e12,
                  b.flops() / pb.seconds / 1e12, pb.bound);
    }
    PlotSeries ps;
    ps.title = device->name + " " + dtype + " GEMM N=" + std::to_string(n) +
               " K=" + std::to_string(k);
    // About 400 log-spaced points of the sweep, and both sides of every
    // variant change.
    const std::vector<int64_t> &points = part.points;
    auto bucket = [&](size_t p) {
      return int64_t(std::log(double(points[p]) / double(lo) + 1) * 60);
    };
    auto variantAt = [&](size_t p) { return part.table.lookup(points[p]); };
    for (size_t p = 0; p < points.size(); ++p) {
      bool last = p + 1 == points.size();
      if (p != 0 && !last && bucket(p) == bucket(p - 1) &&
          variantAt(p) == variantAt(p - 1) && variantAt(p) == variantAt(p + 1))
        continue;
      GemmProblem at = problem;
      at.m = points[p];
      ps.x.push_back(at.m);
      ps.y.push_back(at.flops() / part.picked[p] / 1e12);
      ps.variant.push_back(variantAt(p));
    }
    for (size_t v : part.chosen)
      ps.variantNames.push_back(all[v].str());
    series.push_back(std::move(ps));

    if (bench) {
      // The look-up against what it replaces: the model's argmin over the
      // chosen variants at each call.
      std::vector<int64_t> queries;
      uint64_t state = 88172645463325252ull;
      for (int i = 0; i < 1 << 16; ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        queries.push_back(lo + int64_t(state % uint64_t(hi - lo + 1)));
      }
      uint64_t sink = 0;
      auto l0 = std::chrono::steady_clock::now();
      for (int repeat = 0; repeat < 50; ++repeat)
        for (int64_t m : queries)
          sink += part.table.lookup(m);
      double lookupNs = seconds(l0) * 1e9 / (50.0 * queries.size());
      auto b0 = std::chrono::steady_clock::now();
      for (int64_t m : queries) {
        size_t best = 0;
        for (size_t v = 1; v < part.chosen.size(); ++v)
          if (cost(part.chosen[v], m) < cost(part.chosen[best], m))
            best = v;
        sink += best;
      }
      double bruteNs = seconds(b0) * 1e9 / queries.size();
      std::printf("  bench: look-up %.1f ns/call, brute-force argmin %.0f "
                  "ns/call, ratio %.4f (checksum %llu)\n",
                  lookupNs, bruteNs, lookupNs / bruteNs,
                  (unsigned long long)sink);
    }
  }
  if (bench)
    std::printf("\nbench: search and partitioning of %zu GEMMs: %.2f s\n",
                gemms.size(), searchSeconds);
  if (!svgPath.empty()) {
    std::string svg = plotVariantRegions(series, "M", "predicted TFLOP/s");
    std::string error;
    if (!writePlotFile(svgPath, svg, error))
      fail(error);
  }
  return 0;
}
