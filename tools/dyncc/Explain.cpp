//===- Explain.cpp - dyncc explain: what an artifact will run, and why ----===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   dyncc explain OUT.dyncc [--plot FILE.svg]
//
// Per group of the artifact's plan (identical groups, a model's repeated
// layers, once with their count): its kind and variants (tile config and
// each GPU target's ptxas resources); for searched GEMMs also the problem,
// what the search considered and achieved, and the intervals of its keys
// where each variant is chosen, with the model's predicted TFLOP/s at both
// ends of each. --plot draws those curves, one colour per variant region.
//
//===----------------------------------------------------------------------===//

#include "Explain.h"

#include "dyncc/CostModel/Conv.h"
#include "dyncc/CostModel/Device.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Host.h"
#include "dyncc/CostModel/Partition.h"
#include "dyncc/CostModel/Plot.h"
#include "dyncc/CostModel/Rows.h"
#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/Calibration.h"
#include "dyncc/Runtime/Manifest.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <cmath>
#include <functional>
#include <map>

using namespace dyncc;
using namespace dyncc::runtime;

namespace {

int fail(const std::string &message) {
  llvm::errs() << "dyncc explain: error: " << message << "\n";
  return 1;
}

/// A group's identity for merging repeats: its name, variants' kernels and
/// table.
std::string getGroupKey(const Manifest &manifest, const GroupInfo &group) {
  std::string key = group.name + "|";
  for (const VariantInfo &v : group.variants)
    key += manifest.kernels[v.kernel].name + "," +
           manifest.kernels[v.kernel].config + ";";
  for (const std::string &k : group.select.keyTexts)
    key += k + ";";
  return key;
}

/// Key values, one per key of a group's table.
using KeyValues = std::array<int64_t, cost::DecisionTable::kMaxKeys>;

/// The problem's dimensions of a searched group at key values `keys`
/// (GEMM: batch, M, N, K; rows: batch, rows, length and, since the planes
/// were added, planes; conv: batch, output channels, rows, columns).
std::optional<std::vector<int64_t>> getDims(const VariantSelection &s,
                                            const KeyValues &keys) {
  size_t count = s.dimKeys.size();
  if ((count != 4 && !(s.model == "rows" && count == 3)) ||
      s.dimValues.size() != count)
    return std::nullopt;
  std::vector<int64_t> v;
  for (size_t d = 0; d < count; ++d) {
    if (s.dimKeys[d] >= static_cast<int64_t>(keys.size()))
      return std::nullopt;
    v.push_back(s.dimKeys[d] < 0 ? s.dimValues[d] : keys[s.dimKeys[d]]);
  }
  return v;
}

/// What explain predicts: TFLOP/s for GEMMs and convs, GB/s for row-wise
/// kernels.
const char *getRateName(const VariantSelection &s) {
  return s.model == "rows" ? "predicted GB/s" : "predicted TFLOP/s";
}

/// The model's time of variant `v` of `group` at `keys`, and its work
/// there (FLOP, or bytes moved for row-wise groups); false where the model
/// cannot say (no device, a config it does not parse).
bool predict(const Manifest &manifest, const GroupInfo &group,
             const cost::Device *device, size_t v, const KeyValues &keys,
             double &seconds, double &work) {
  const VariantSelection &s = group.select;
  std::optional<std::vector<int64_t>> dims = getDims(s, keys);
  const std::string &config = manifest.kernels[group.variants[v].kernel].config;
  // The host's search predicted with the host model.
  std::string hostLevel =
      s.model.empty() ? cost::getHostSearchLevel(s.device) : std::string();
  bool host = !hostLevel.empty();
  if ((!device && !host) || !dims)
    return false;
  if (s.model == "rows") {
    std::optional<cost::RowTile> tile = cost::parseRowTile(config);
    if (!tile || s.elementBytes < 1 || s.bytesPerElement < 1)
      return false;
    cost::RowProblem p;
    p.batch = (*dims)[0];
    p.rows = (*dims)[1];
    p.length = (*dims)[2];
    p.planes = dims->size() > 3 && !s.columns ? (*dims)[3] : 1;
    p.columnLength = dims->size() > 3 && s.columns ? (*dims)[3] : 0;
    p.elementBytes = s.elementBytes;
    p.bytesPerElement = s.bytesPerElement;
    p.reduction = s.reduction != 0;
    p.scalarAccess = s.scalarAccess != 0;
    work = double(p.batch) * double(p.rows) * double(p.length) *
           double(std::max<int64_t>(1, p.columnLength)) * p.bytesPerElement;
    seconds = cost::predictRows(*tile, p, *device).seconds;
    return true;
  }
  if (s.model == "conv") {
    std::optional<cost::ConvTile> tile = cost::parseConvTile(config);
    cost::ConvProblem p;
    if (!tile || !p.setWindow(s.window.data(), s.window.size()) ||
        s.elementBytes < 1)
      return false;
    p.batch = (*dims)[0];
    p.outC = (*dims)[1];
    p.outH = (*dims)[2];
    p.outW = (*dims)[3];
    p.staticH = s.dimKeys[2] < 0;
    p.staticW = s.dimKeys[3] < 0;
    p.elementBytes = s.elementBytes;
    // A 1-D conv's tiles have no rows.
    p.spatialDims = tile->spatialDims;
    work = p.flops();
    seconds = cost::predictConv(*tile, p, *device).seconds;
    return true;
  }
  std::optional<cost::GemmTile> tile = cost::parseGemmTile(config);
  if (!tile || !group.problem.present)
    return false;
  cost::GemmProblem p;
  p.batch = (*dims)[0];
  p.m = (*dims)[1];
  p.n = (*dims)[2];
  p.k = (*dims)[3];
  p.operandBytes = group.problem.operandBytes;
  p.outputBytes = group.problem.outputBytes;
  p.products = group.problem.products;
  work = p.flops();
  if (host) {
    cost::HostDevice described = cost::getFittedHostDevice(hostLevel);
    described.threads = std::max<int64_t>(1, s.hostThreads);
    seconds = cost::predictHostGemm(*tile, p, described).seconds;
    return std::isfinite(seconds);
  }
  seconds = cost::predictGemm(*tile, p, *device).seconds;
  return true;
}

/// predict's rate: TFLOP/s, or GB/s for row-wise groups; -1 where it has
/// none.
double predictRate(const Manifest &manifest, const GroupInfo &group,
                   const cost::Device *device, size_t v,
                   const KeyValues &keys) {
  double seconds, work;
  if (!predict(manifest, group, device, v, keys, seconds, work) ||
      !(seconds > 0))
    return -1;
  return work / seconds / (group.select.model == "rows" ? 1e9 : 1e12);
}

/// How the model compares with `measured` (dyncc tune's samples of the
/// group's variants): the geometric mean and log rms of predicted over
/// measured times, and at each binding measured, the measured time of the
/// variant the model would pick among those measured over the fastest
/// (geometric mean and worst). False where the model predicts none.
struct ModelCheck {
  size_t samples = 0, bindings = 0;
  double meanRatio = 0, logRms = 0, pickGeomean = 0, pickWorst = 0;
};
bool checkModel(const Manifest &manifest, const GroupInfo &group,
                const cost::Device *device, const GroupCalibration &measured,
                ModelCheck &check) {
  const VariantSelection &s = group.select;
  // Per binding (the symbols' values): (predicted, measured) per variant.
  std::map<std::vector<int64_t>, std::vector<std::pair<double, double>>>
      byBinding;
  double sumLog = 0, sumSquares = 0;
  std::vector<int64_t> symbols(manifest.symbols.size(), 0);
  for (const VariantCalibration &variant : measured.variants)
    for (const CalibrationSample &sample : variant.samples) {
      for (size_t i = 0; i < sample.at.size(); ++i)
        symbols[measured.symbolSlots[i]] = sample.at[i];
      KeyValues keys;
      keys.fill(1);
      bool ok = true;
      for (size_t k = 0; k < s.keys.size() && k < keys.size(); ++k)
        ok &= s.keys[k].evaluate(symbols.data(), keys[k]) ==
              ShapeExpr::EvalStatus::Ok;
      double seconds, work;
      if (!ok || !(sample.ms > 0) ||
          !predict(manifest, group, device, variant.variant, keys, seconds,
                   work) ||
          !(seconds > 0) || std::isinf(seconds))
        continue;
      double log = std::log(seconds * 1e3 / sample.ms);
      sumLog += log;
      sumSquares += log * log;
      ++check.samples;
      byBinding[sample.at].push_back({seconds, sample.ms});
    }
  if (check.samples == 0)
    return false;
  check.meanRatio = std::exp(sumLog / check.samples);
  check.logRms = std::sqrt(sumSquares / check.samples);
  double sumPick = 0;
  for (const auto &[at, times] : byBinding) {
    auto pick = std::min_element(times.begin(), times.end());
    double fastest = times[0].second;
    for (const auto &t : times)
      fastest = std::min(fastest, t.second);
    double regret = pick->second / fastest;
    sumPick += std::log(regret);
    check.pickWorst = std::max(check.pickWorst, regret);
    ++check.bindings;
  }
  check.pickGeomean = std::exp(sumPick / check.bindings);
  return true;
}

std::string formatRate(double t) {
  if (t < 0)
    return "-";
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format(t < 10 ? "%.2f" : "%.1f", t);
  return s;
}

/// The intervals [lower[i], next lower - 1] of a table, the last up to hi.
std::vector<std::pair<int64_t, int64_t>>
getIntervals(const std::vector<int64_t> &lower, int64_t hi) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (size_t i = 0; i < lower.size(); ++i)
    out.push_back({lower[i], i + 1 < lower.size() ? lower[i + 1] - 1 : hi});
  return out;
}

/// The divisor of every value key `depth` of `s` takes (1 if unknown).
int64_t getKeyDivisor(const VariantSelection &s, size_t depth) {
  return depth < s.keyDivisors.size()
             ? std::max<int64_t>(1, s.keyDivisors[depth])
             : 1;
}

/// `range` shrunk to the values a key of `divisor` takes: its first and
/// last multiples (an empty range, last < first, where it holds none).
std::pair<int64_t, int64_t> toMultiples(std::pair<int64_t, int64_t> range,
                                        int64_t divisor) {
  int64_t first = (range.first + divisor - 1) / divisor * divisor;
  int64_t last = range.second / divisor * divisor;
  return {first, last};
}

void printVariants(llvm::raw_ostream &os, const Manifest &manifest,
                   const GroupInfo &group) {
  for (size_t v = 0; v < group.variants.size(); ++v) {
    const KernelInfo &k = manifest.kernels[group.variants[v].kernel];
    os << "    v" << v << "  " << llvm::left_justify(k.name, 18) << " "
       << (k.config.empty() ? "(no config)" : k.config);
    auto resources = [&](const KernelInfo &kernel) {
      for (const GpuCode &code : kernel.gpu)
        if (!code.cubinSection.empty())
          os << "\n          " << code.arch << ": "
             << code.resources.registers << " registers, "
             << code.resources.sharedBytes + kernel.sharedBytes
             << " B shared, "
             << code.resources.spillStoreBytes +
                    code.resources.spillLoadBytes
             << " B spilled";
    };
    resources(k);
    // A split-K variant's sum (and epilogue) kernel, launched after it.
    for (size_t next : group.variants[v].then) {
      const KernelInfo &after = manifest.kernels[next];
      os << "\n        then " << after.name << " "
         << (after.config.empty() ? "(no config)" : after.config);
      resources(after);
    }
    os << "\n";
  }
}

/// One table's rows, over key `depth` with the keys before it at `outer`:
/// the key's intervals, the variant, the rate at both ends.
void printTable(llvm::raw_ostream &os, const Manifest &manifest,
                const GroupInfo &group, const cost::Device *device,
                const cost::IntervalTable &table, int64_t hi,
                const KeyValues &outer, size_t depth,
                const std::string &indent) {
  const VariantSelection &s = group.select;
  std::string keyName =
      depth < s.keyTexts.size() ? s.keyTexts[depth] : "(static)";
  os << indent << llvm::left_justify(keyName, 16) << " variant  "
     << getRateName(s) << " (first - last)\n";
  int64_t divisor = getKeyDivisor(s, depth);
  for (auto [i, interval] : llvm::enumerate(getIntervals(table.lower, hi))) {
    // The values the key takes in it (multiples of its divisor).
    std::pair<int64_t, int64_t> range = toMultiples(interval, divisor);
    if (range.second < range.first)
      continue;
    uint32_t v = table.variant[i];
    auto at = [&](int64_t value) {
      KeyValues keys = outer;
      keys[depth] = value;
      return predictRate(manifest, group, device, v, keys);
    };
    std::string span = std::to_string(range.first) + "-" +
                       std::to_string(range.second);
    os << indent << llvm::left_justify(span, 16) << " v"
       << llvm::left_justify(std::to_string(v), 7) << " "
       << formatRate(at(range.first)) << " - "
       << formatRate(at(range.second)) << "\n";
  }
}

/// The curve of `group` along key `depth` (the last) over [lo, hi], the
/// keys before it at `outer`, about 300 log-spaced points.
cost::PlotSeries getCurve(const Manifest &manifest, const GroupInfo &group,
                          const cost::Device *device,
                          const cost::IntervalTable &table, int64_t lo,
                          int64_t hi, const KeyValues &outer, size_t depth,
                          const std::string &title) {
  cost::PlotSeries series;
  series.title = title;
  const VariantSelection &s = group.select;
  // The key's values: multiples of its divisor.
  int64_t divisor = getKeyDivisor(s, depth);
  auto [first, last] = toMultiples({lo, hi}, divisor);
  if (last < first)
    return series;
  for (int64_t m : cost::getGridPoints(first / divisor, last / divisor, 300)) {
    int64_t x = m * divisor;
    uint32_t v = table.lookup(x);
    KeyValues keys = outer;
    keys[depth] = x;
    double t = predictRate(manifest, group, device, v, keys);
    if (t < 0)
      continue;
    series.x.push_back(x);
    series.y.push_back(t);
    series.variant.push_back(v);
  }
  for (const VariantInfo &v : group.variants)
    series.variantNames.push_back(manifest.kernels[v.kernel].config);
  series.yName = getRateName(s);
  return series;
}

/// For a table of three or more keys: its size, and per variant the share
/// of the keys' box (the searched ranges, by value) where the tree picks
/// it, with its rate at the box's smallest and largest corner.
void printTreeSummary(llvm::raw_ostream &os, const Manifest &manifest,
                      const GroupInfo &group, const cost::Device *device) {
  const VariantSelection &s = group.select;
  size_t keys = s.table.keys;
  if (s.keyRanges.size() < 2 * keys)
    return;
  std::vector<double> share(group.variants.size(), 0);
  size_t leaves = 0;
  // The share of the box below node `n` over key `depth`, `weight` the
  // share of the box its interval of the keys before it holds.
  std::function<void(uint32_t, size_t, double)> visit =
      [&](uint32_t n, size_t depth, double weight) {
        const cost::IntervalTable &node = s.table.nodes[n];
        int64_t lo = s.keyRanges[2 * depth], hi = s.keyRanges[2 * depth + 1];
        double width = double(hi - lo + 1);
        for (auto [i, range] : llvm::enumerate(getIntervals(node.lower, hi))) {
          int64_t first = std::max(lo, range.first);
          int64_t last = std::min(hi, range.second);
          if (last < first)
            continue;
          double part = weight * double(last - first + 1) / width;
          if (depth + 1 < keys) {
            visit(node.variant[i], depth + 1, part);
          } else {
            ++leaves;
            if (node.variant[i] < share.size())
              share[node.variant[i]] += part;
          }
        }
      };
  visit(0, 0, 1.0);
  os << "  decision tree over " << keys << " keys: " << s.table.nodes.size()
     << " nodes, " << leaves << " intervals of " << s.keyTexts[keys - 1]
     << "\n";
  KeyValues smallest, largest;
  smallest.fill(1);
  largest.fill(1);
  for (size_t k = 0; k < keys; ++k) {
    smallest[k] = s.keyRanges[2 * k];
    largest[k] = s.keyRanges[2 * k + 1];
  }
  os << "  variant  share of the keys' box  " << getRateName(s)
     << " (smallest - largest keys)\n";
  for (size_t v = 0; v < share.size(); ++v)
    os << "  v" << llvm::left_justify(std::to_string(v), 7) << " "
       << llvm::left_justify(
              (llvm::formatv("{0:F1}%", 100 * share[v])).str(), 22)
       << " "
       << formatRate(predictRate(manifest, group, device, v, smallest))
       << " - "
       << formatRate(predictRate(manifest, group, device, v, largest))
       << "\n";
}

} // namespace

int dyncc::explainMain(llvm::ArrayRef<std::string> args) {
  std::string path, plotPath;
  bool wholeTree = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg == "--tree") {
      wholeTree = true;
    } else if (arg == "--plot" || arg.rfind("--plot=", 0) == 0) {
      if (arg == "--plot") {
        if (i + 1 >= args.size())
          return fail("--plot needs a file name (FILE.svg)");
        plotPath = args[++i];
      } else {
        plotPath = arg.substr(7);
      }
      if (plotPath.size() < 5 ||
          plotPath.substr(plotPath.size() - 4) != ".svg")
        return fail("--plot writes SVG: give a FILE.svg, got '" + plotPath +
                    "'");
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option '" + arg + "'");
    } else if (path.empty()) {
      path = arg;
    } else {
      return fail("more than one artifact given");
    }
  }
  if (path.empty())
    return fail("no artifact given (dyncc explain OUT.dyncc)");
  std::string error;
  std::unique_ptr<ArtifactFile> file = ArtifactFile::open(path, error);
  if (!file)
    return fail(error);
  Manifest manifest;
  if (!parseManifest(file->manifest(), manifest, error))
    return fail(path + ": " + error);

  llvm::raw_ostream &os = llvm::outs();
  os << "model " << manifest.model << " (" << manifest.producer
     << "), targets";
  for (const std::string &t : manifest.targets)
    os << " " << t;
  if (!manifest.hostCode.empty()) {
    // The builds of the host code; the run-time loads the highest the
    // processor runs.
    os << "\nhost code:";
    for (const HostCodeInfo &build : manifest.hostCode) {
      const ArtifactSection *section = file->findSection(build.section);
      os << " " << build.isa << " ("
         << (section ? std::to_string(section->size) + " bytes" : "missing")
         << ")";
    }
  }
  os << "\nsymbols:";
  for (const SymbolInfo &s : manifest.symbols) {
    os << " " << s.name << " in [" << s.min << ", " << s.max << "]";
    if (s.bindingStep != kAtBinding)
      os << " (from data: " << manifest.steps[s.bindingStep].where << ")";
  }
  os << "\n";

  Calibration calibration;
  if (const ArtifactSection *section =
          file->findSection(kCalibrationSectionName))
    if (!parseCalibration(section->bytes(), manifest, calibration, error))
      return fail(path + ": " + error);
  for (const DeviceCalibration &device : calibration.devices) {
    // The host's entries (dyncc tune --device cpu) have threads where a
    // GPU's have SMs.
    bool host = device.onHost();
    os << "measured by dyncc tune on " << device.device << " (" << device.arch
       << ", " << device.sms << (host ? " threads" : " SMs")
       << "): " << device.groups.size() << " groups at " << device.bindings
       << " bindings, median of " << device.repeat << " runs; "
       << (host ? "cpu" : "CUDA")
       << " sessions there select by the measurements\n";
  }

  // Groups in plan order, repeats merged.
  std::vector<size_t> order;
  std::map<std::string, std::pair<size_t, size_t>> seen; // key -> first, count
  for (size_t g = 0; g < manifest.groups.size(); ++g) {
    auto [it, inserted] =
        seen.insert({getGroupKey(manifest, manifest.groups[g]), {g, 0}});
    ++it->second.second;
    if (inserted)
      order.push_back(g);
  }
  size_t searched = 0;
  for (const GroupInfo &group : manifest.groups)
    searched += group.select.present;
  os << manifest.groups.size() << " groups (" << order.size()
     << " distinct), " << searched << " of them searched\n";

  std::vector<cost::PlotSeries> curves;
  for (size_t g : order) {
    const GroupInfo &group = manifest.groups[g];
    size_t count = seen[getGroupKey(manifest, group)].second;
    os << "\ngroup " << group.name << " (" << group.kind << ")";
    if (count > 1)
      os << " x" << count;
    os << ": " << group.variants.size() << " variant"
       << (group.variants.size() == 1 ? "" : "s") << "\n";
    const VariantSelection &s = group.select;
    auto dim = [&](int d) {
      int64_t key = s.dimKeys[d];
      return key >= 0 && size_t(key) < s.keyTexts.size()
                 ? s.keyTexts[key]
                 : std::to_string(s.dimValues[d]);
    };
    if (s.present && s.model == "rows" &&
        (s.dimKeys.size() == 3 || s.dimKeys.size() == 4) &&
        s.dimValues.size() == s.dimKeys.size())
      os << "  problem: " << dim(0) << " x [rows " << dim(1) << " x length "
         << dim(2) << "]"
         << (s.dimKeys.size() == 4 && s.columns
                 ? ", each output folding " + dim(3) + " along an outer axis"
             : s.dimKeys.size() == 4 && !s.reduction && dim(3) != "1"
                 ? " (planes " + dim(3) + ")"
                 : "")
         << ", " << s.elementBytes << "-byte elements, " << s.bytesPerElement
         << " bytes moved per element"
         << (s.reduction ? ", reduced along rows" : "") << "\n";
    else if (cost::ConvProblem conv;
             s.present && s.model == "conv" && s.dimKeys.size() == 4 &&
             s.dimValues.size() == 4 &&
             conv.setWindow(s.window.data(), s.window.size())) {
      // A grouped conv's channels are a group's; a 1-D conv's tiles have
      // no rows (nor has it).
      std::string channels = std::to_string(conv.inC) + " -> " + dim(1);
      std::optional<cost::ConvTile> first =
          group.variants.empty()
              ? std::nullopt
              : cost::parseConvTile(
                    manifest.kernels[group.variants[0].kernel].config);
      bool oneD = first && first->spatialDims == 1;
      auto pair = [&](int64_t rows, int64_t columns) {
        return oneD ? std::to_string(columns)
                    : std::to_string(rows) + "x" + std::to_string(columns);
      };
      os << "  problem: " << dim(0) << " x conv" << (oneD ? "1d " : " ")
         << pair(conv.kh, conv.kw) << " stride "
         << pair(conv.strideH, conv.strideW)
         << (conv.dilationH > 1 || conv.dilationW > 1
                 ? " dilation " + pair(conv.dilationH, conv.dilationW)
                 : std::string())
         << ", "
         << (conv.groups == 1 ? channels + " channels"
             : conv.inC == 1 && dim(1) == "1"
                 ? "depthwise over " + std::to_string(conv.groups) + " channels"
                 : std::to_string(conv.groups) + " groups of " + channels +
                       " channels")
         << ", output " << (oneD ? dim(3) : dim(2) + " x " + dim(3)) << ", "
         << s.elementBytes << "-byte elements\n";
    } else if (s.present && s.dimKeys.size() == 4 && s.dimValues.size() == 4)
      os << "  problem: " << dim(0) << " x [M " << dim(1) << " x K "
         << dim(3) << "] x [K x N " << dim(2) << "]"
         << (group.problem.products > 1
                 ? " x " + std::to_string(group.problem.products) +
                       " products"
                 : std::string())
         << ", " << group.problem.operandBytes << "-byte operands\n";
    if (!s.reason.empty())
      os << "  not searched: " << s.reason << "\n";
    const cost::Device *device =
        s.present ? cost::lookupDevice(s.device) : nullptr;
    if (s.present) {
      std::string hostLevel = cost::getHostSearchLevel(s.device);
      os << "  search: "
         << (!hostLevel.empty()
                 ? "the host model (" + hostLevel + " build, " +
                       std::to_string(s.hostThreads) +
                       " threads; the variants cover every build)"
                 : s.device)
         << ", " << s.candidates << " candidates, " << s.considered
         << " considered, " << group.variants.size() << " chosen (cap " << s.cap
         << "), max regret " << llvm::format("%.1f%%", 100 * s.maxRegret)
         << " (target " << llvm::format("%.1f%%", 100 * s.target) << ")";
      if (s.registers == "ptxas")
        os << "; redone with ptxas' registers, " << s.dropped
           << " spilling variant" << (s.dropped == 1 ? "" : "s")
           << " dropped";
      os << "\n";
    }
    os << "  variants:\n";
    printVariants(os, manifest, group);
    for (const DeviceCalibration &device : calibration.devices) {
      const GroupCalibration *measured = device.group(g);
      if (!measured)
        continue;
      os << "  measured on " << device.device << ", wave time (ms) over "
         << "the samples:\n";
      for (const VariantCalibration &variant : measured->variants) {
        double lo, hi;
        os << "    v" << variant.variant << "  " << variant.kernel << ": "
           << variant.blocksPerWave << " blocks per wave, "
           << variant.samples.size() << " samples";
        if (variant.waveRange(lo, hi))
          os << ", " << llvm::format("%.4g", lo) << " - "
             << llvm::format("%.4g", hi);
        os << "\n";
      }
      ModelCheck check;
      if (s.present &&
          checkModel(manifest, group, cost::lookupDevice(s.device),
                     *measured, check))
        os << "  the model (" << s.device << ") against them: predicted "
           << llvm::format("%.2f", check.meanRatio)
           << "x the measured time (geometric mean, log rms "
           << llvm::format("%.2f", check.logRms) << ", " << check.samples
           << " samples); its pick among the measured variants takes "
           << llvm::format("%.3f", check.pickGeomean)
           << "x the fastest's time (geometric mean), "
           << llvm::format("%.3f", check.pickWorst) << "x at worst, over "
           << check.bindings << " bindings\n";
    }
    if (!s.present)
      continue;
    auto range = [&](size_t key) -> std::pair<int64_t, int64_t> {
      if (s.keyRanges.size() >= 2 * key + 2)
        return {s.keyRanges[2 * key], s.keyRanges[2 * key + 1]};
      return {1, 1};
    };
    std::string title = group.name + (count > 1 ? " x" + std::to_string(count)
                                                : std::string()) +
                        " on " + s.device;
    KeyValues keys;
    keys.fill(1);
    size_t last = s.table.keys - 1;
    if (s.keys.size() < 2) {
      auto [lo, hi] = range(0);
      os << "  chosen by " << (s.keys.empty() ? "nothing (static)" : "key")
         << ":\n";
      printTable(os, manifest, group, device, s.table.nodes[0], hi, keys, 0,
                 "    ");
      if (!s.keys.empty())
        curves.push_back(getCurve(manifest, group, device, s.table.nodes[0],
                                  lo, hi, keys, 0,
                                  title + ", " + s.keyTexts[0]));
      continue;
    }
    // Per interval of each key but the last, the intervals of the next,
    // nested; the last key's table under each.
    std::function<void(const cost::IntervalTable &, size_t,
                       const std::string &)>
        printNode = [&](const cost::IntervalTable &node, size_t depth,
                        const std::string &indent) {
          if (depth == last) {
            printTable(os, manifest, group, device, node, range(depth).second,
                       keys, depth, indent);
            return;
          }
          auto intervals = getIntervals(node.lower, range(depth).second);
          for (size_t i = 0; i < intervals.size(); ++i) {
            os << indent << s.keyTexts[depth] << " in " << intervals[i].first
               << "-" << intervals[i].second << ":\n";
            keys[depth] = intervals[i].first;
            printNode(s.table.nodes[node.variant[i]], depth + 1,
                      indent + "  ");
          }
        };
    // Two keys: the tree (an outer interval a few lines). More: a summary,
    // unless --tree asks for the whole tree (thousands of lines for a
    // conv over the batch, rows and columns).
    if (s.keys.size() == 2 || wholeTree) {
      printNode(s.table.nodes[0], 0, "  ");
    } else {
      printTreeSummary(os, manifest, group, device);
      os << "  (the whole tree: dyncc explain --tree)\n";
    }
    // The curve along the last key where the others take their smallest
    // values, and where they take their largest.
    for (bool largest : {false, true}) {
      std::string where;
      bool fixed = true;
      for (size_t k = 0; k < last; ++k) {
        auto [lo, hi] = range(k);
        keys[k] = largest ? hi : lo;
        fixed &= lo == hi;
        where += ", " + s.keyTexts[k] + " = " + std::to_string(keys[k]);
      }
      if (largest && fixed)
        break;
      auto [lo, hi] = range(last);
      curves.push_back(getCurve(manifest, group, device,
                                s.table.getNode(keys.data(), last), lo, hi,
                                keys, last,
                                title + where + ", along " +
                                    s.keyTexts[last]));
    }
  }
  if (!plotPath.empty()) {
    if (curves.empty())
      return fail("nothing to plot: the artifact has no searched group with "
                  "a dynamic dimension");
    std::string svg =
        cost::plotVariantRegions(curves, "key", "predicted TFLOP/s");
    if (!cost::writePlotFile(plotPath, svg, error))
      return fail(error);
    os << "\nwrote " << plotPath << " (" << curves.size() << " curves)\n";
  }
  return 0;
}
