//===- TuneTool.cpp - dyncc tune: measure variants on a device -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `dyncc tune OUT.dyncc --device cuda:N` calibrates the tile search's
// choices on one GPU. At a grid of symbol bindings (log-spaced over each
// symbol's range) it runs the model once per variant index, forcing every
// group with several variants to that variant, and times each group's
// launch with events (the median of --repeat runs). Each measurement over
// its number of waves is a wave time; the blocks per wave come from the
// driver's occupancy. The measurements go into the artifact's
// `calibration` section (rewritten atomically), under the device's name,
// arch and SM count; CUDA sessions on such a device then pick variants by
// them (Calibration.h).
//
// `--device cpu` measures the host target the same way (the host clock
// around each group's launches), under the processor's name, "cpu-" and
// its architecture, and the session's threads, which are its blocks per
// wave: the variants the tile search chose for the GPU are not the CPU's
// best (a block's threads run one after another there), and cpu sessions
// on such a host then pick by these measurements.
//
// Then it checks itself: at held-out bindings between the measured ones it
// measures every variant again and reports, per group, the time of the
// variant the compiler's model picks and of the one the measurements pick,
// each over the best measured: the selection regret.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/RunTool.h"

#include "ToolSupport.h"

#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/Calibration.h"
#include "dyncc/Runtime/Manifest.h"
#include "dyncc/Runtime/Runtime.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unistd.h>

using namespace dyncc::runtime;
using namespace dyncc::runtime::tool;

namespace {

struct TuneOptions {
  std::string artifact;
  std::string output;
  std::string device = "cuda:0";
  /// Per symbol name: [lo, hi] (lo == hi holds it).
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> dims;
  int64_t points = 6;
  int64_t repeat = 5;
  int64_t maxBindings = 64;
  uint64_t seed = 0;
  bool check = true;
  bool quiet = false;
  bool help = false;
};

/// Every variant of every tuned group at one binding.
struct Measurement {
  /// Per tuned group: the kernel the artifact's selection runs there.
  std::vector<std::string> picked;
  /// Per tuned group and variant: the median time (-1: not run, its
  /// conditions do not hold) and the blocks launched.
  std::vector<std::vector<double>> ms;
  std::vector<std::vector<uint64_t>> blocks;
};

/// The cartesian product of `axes`, keeping at most `cap` points (evenly
/// spaced in the product's order).
std::vector<std::vector<int64_t>>
productOf(const std::vector<std::vector<int64_t>> &axes, int64_t cap) {
  std::vector<std::vector<int64_t>> points(1);
  for (const std::vector<int64_t> &axis : axes) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t> &point : points)
      for (int64_t value : axis) {
        next.push_back(point);
        next.back().push_back(value);
      }
    points = std::move(next);
  }
  if (static_cast<int64_t>(points.size()) <= cap)
    return points;
  std::vector<std::vector<int64_t>> kept;
  int64_t last = static_cast<int64_t>(points.size()) - 1;
  for (int64_t i = 0; i < cap; ++i)
    kept.push_back(
        points[static_cast<size_t>(i * last / std::max<int64_t>(cap - 1, 1))]);
  return kept;
}

class TuneTool {
public:
  explicit TuneTool(const char *name) : name(name) {}
  int main(const std::vector<std::string> &args);

private:
  int error(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", name, message.c_str());
    return 1;
  }
  int usageError(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", name, message.c_str());
    std::fprintf(stderr,
                 "usage: %s tune OUT.dyncc [--device cuda:N|cpu] [-o FILE] "
                 "[--dim NAME=LO:HI|NAME=VALUE ...] [--points N] "
                 "[--repeat N] [--max-bindings N] [--seed N] [--no-check] "
                 "[--quiet]\n",
                 name);
    return 2;
  }
  int parseArgs(const std::vector<std::string> &args);
  int run();
  bool bindInputs(dyncc::Session &session, const std::vector<int64_t> &point,
                  std::string &message);
  bool measure(dyncc::Session &session, const std::vector<int64_t> &point,
               Measurement &out, std::string &message);
  void progress(const std::string &text) const {
    if (showProgress)
      std::fprintf(stderr, "\r\033[K%s", text.c_str());
  }
  /// Writes the artifact to the output with `device`'s measurements added
  /// (replacing an earlier entry of the same device); with none, as it is.
  bool writeCalibration(const DeviceCalibration *device, std::string &message);
  /// False (with the run-time's message, and the status in `failure`) if
  /// `status` is an error.
  bool check(dyncc_status status, std::string &message) {
    if (status == DYNCC_OK)
      return true;
    failure = status;
    message = dyncc::lastError();
    return false;
  }

  const char *name;
  TuneOptions options;
  dyncc::Artifact artifact;
  std::vector<std::string> names;
  std::vector<std::vector<ShapeExpr>> inputDims;
  std::vector<DType> inputTypes;
  std::vector<std::vector<uint8_t>> data;
  /// The groups with more than one variant, and the most variants of any.
  std::vector<size_t> tuned;
  size_t maxVariants = 0;
  bool showProgress = false;
  std::string phase;
  dyncc_status failure = DYNCC_OK;
};

int TuneTool::parseArgs(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.empty() || arg[0] != '-') {
      if (!options.artifact.empty())
        return usageError("unexpected argument '" + arg + "'");
      options.artifact = arg;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      continue;
    }
    if (arg == "-q" || arg == "--quiet") {
      options.quiet = true;
      continue;
    }
    if (arg == "--no-check") {
      options.check = false;
      continue;
    }
    std::string option, value, problem;
    if (!readOption(args, i,
                    {"--dim", "--points", "--repeat", "--seed", "--device",
                     "-o", "--max-bindings"},
                    option, value, problem))
      return usageError(problem);
    if (option == "--dim") {
      std::string key;
      int64_t lo, hi;
      bool range;
      if (!parseDimRange(value, key, lo, hi, range, problem))
        return usageError(problem);
      for (const auto &known : options.dims)
        if (known.first == key)
          return usageError("--dim " + key + " given twice");
      options.dims.push_back({key, {lo, hi}});
    } else if (option == "--points" || option == "--repeat" ||
               option == "--max-bindings") {
      int64_t &slot = option == "--points"   ? options.points
                      : option == "--repeat" ? options.repeat
                                             : options.maxBindings;
      if (!parseInt64(value, slot) || slot < 1 || slot > 10000)
        return usageError(option + ": expected a count of 1 to 10000, got '" +
                          value + "'");
    } else if (option == "--seed") {
      if (!parseUInt64(value, options.seed))
        return usageError("--seed: expected a non-negative integer, got '" +
                          value + "'");
    } else if (option == "--device") {
      options.device = value;
    } else {
      if (value.empty())
        return usageError("-o: empty file name");
      options.output = value;
    }
  }
  if (options.help)
    return 0;
  if (options.artifact.empty())
    return usageError("no artifact given");
  if (options.device != "cpu" && options.device.rfind("cuda", 0) != 0)
    return usageError("--device " + options.device +
                      ": tuning measures on a GPU (cuda or cuda:N) or on "
                      "the host (cpu)");
  if (options.output.empty())
    options.output = options.artifact;
  return 0;
}

bool TuneTool::bindInputs(dyncc::Session &session,
                          const std::vector<int64_t> &point,
                          std::string &message) {
  failure = bindRandomInputs(session, artifact, inputDims, inputTypes, point,
                             names, options.seed, data, message);
  return failure == DYNCC_OK;
}

bool TuneTool::measure(dyncc::Session &session,
                       const std::vector<int64_t> &point, Measurement &out,
                       std::string &message) {
  if (!bindInputs(session, point, message))
    return false;
  for (size_t g : tuned)
    if (!check(session.forceVariant(g, -1), message))
      return false;
  if (!check(session.run(), message))
    return false;
  out.picked.clear();
  for (size_t g : tuned)
    out.picked.push_back(session.groupVariant(g));
  out.ms.assign(tuned.size(), {});
  out.blocks.assign(tuned.size(), {});
  for (size_t t = 0; t < tuned.size(); ++t) {
    out.ms[t].assign(artifact.numVariants(tuned[t]), -1);
    out.blocks[t].assign(artifact.numVariants(tuned[t]), 0);
  }
  for (size_t v = 0; v < maxVariants; ++v) {
    progress(phase + ", variant " + std::to_string(v + 1) + "/" +
             std::to_string(maxVariants));
    for (size_t g : tuned) {
      int64_t index =
          v < artifact.numVariants(g) ? static_cast<int64_t>(v) : -1;
      if (!check(session.forceVariant(g, index), message))
        return false;
    }
    // One warm-up run, then the timed ones.
    if (!check(session.run(), message))
      return false;
    std::vector<std::vector<double>> times(tuned.size());
    for (int64_t r = 0; r < options.repeat; ++r) {
      if (!check(session.run(), message))
        return false;
      for (size_t t = 0; t < tuned.size(); ++t) {
        size_t g = tuned[t];
        if (v >= artifact.numVariants(g) ||
            session.groupVariant(g) != artifact.variantKernel(g, v))
          continue;
        double ms;
        uint64_t blocks;
        if (!check(session.groupTime(g, ms, blocks), message))
          return false;
        times[t].push_back(ms);
        out.blocks[t][v] = blocks;
      }
    }
    for (size_t t = 0; t < tuned.size(); ++t)
      if (!times[t].empty())
        out.ms[t][v] = medianOf(times[t]);
  }
  for (size_t g : tuned)
    if (!check(session.forceVariant(g, -1), message))
      return false;
  return true;
}

bool TuneTool::writeCalibration(const DeviceCalibration *device,
                                std::string &message) {
  std::unique_ptr<ArtifactFile> file =
      ArtifactFile::open(options.artifact, message);
  if (!file)
    return false;
  Manifest manifest;
  if (!parseManifest(file->manifest(), manifest, message))
    return false;
  Calibration calibration;
  const ArtifactSection *old = file->findSection(kCalibrationSectionName);
  if (old && !parseCalibration(old->bytes(), manifest, calibration, message))
    return false;
  if (device)
    calibration.replace(*device);
  ArtifactWriter writer;
  writer.setManifest(std::string(file->manifest()));
  for (const ArtifactSection &section : file->sections())
    if (section.name != kManifestSectionName &&
        section.name != kCalibrationSectionName)
      writer.addSection(section.name, section.data,
                        static_cast<size_t>(section.size));
  if (old || device)
    writer.addSection(std::string(kCalibrationSectionName),
                      serializeCalibration(calibration));
  return writer.write(options.output, message);
}

int TuneTool::run() {
  if (artifact.load(options.artifact) != DYNCC_OK)
    return error(dyncc::lastError());
  names = symbolNames(artifact);
  size_t numSymbols = names.size();
  std::string message;
  if (!parseInputDims(artifact, names, inputDims, message))
    return error(message);
  inputTypes.resize(artifact.numInputs());
  data.resize(artifact.numInputs());
  for (size_t i = 0; i < artifact.numInputs(); ++i)
    parseDType(artifact.inputDType(i), inputTypes[i]);

  // Each symbol's range: --dim's, else all of it.
  std::vector<std::pair<int64_t, int64_t>> ranges(numSymbols);
  for (size_t s = 0; s < numSymbols; ++s)
    ranges[s] = {artifact.symbolMin(s), artifact.symbolMax(s)};
  for (const auto &[key, range] : options.dims) {
    size_t s = std::find(names.begin(), names.end(), key) - names.begin();
    if (s == numSymbols)
      return error("unknown symbol '" + key + "' in --dim (symbols: " +
                   listOrNone(names) + ")");
    if (range.first < ranges[s].first || range.second > ranges[s].second)
      return error("--dim " + key + ": [" + std::to_string(range.first) +
                   ", " + std::to_string(range.second) +
                   "] is outside its range [" +
                   std::to_string(ranges[s].first) + ", " +
                   std::to_string(ranges[s].second) + "]");
    ranges[s] = range;
  }
  for (size_t g = 0; g < artifact.numGroups(); ++g)
    if (artifact.numVariants(g) > 1) {
      tuned.push_back(g);
      maxVariants = std::max(maxVariants, artifact.numVariants(g));
    }

  dyncc::Session session;
  if (session.create(artifact, options.device) != DYNCC_OK)
    return error(dyncc::lastError());
  DeviceCalibration device;
  if (session.tuningDevice(device.device, device.arch, device.sms) != DYNCC_OK)
    return error(dyncc::lastError());
  if (tuned.empty()) {
    // -o still gets the artifact (unchanged), so that a script's next step
    // finds it.
    bool copied = options.output != options.artifact;
    if (copied && !writeCalibration(nullptr, message))
      return error(message + " (nothing written)");
    if (!options.quiet)
      std::printf("nothing to tune: no group of %s has more than one "
                  "variant%s\n",
                  artifact.modelName().c_str(),
                  copied ? ("; wrote it unchanged to " + options.output).c_str()
                         : "");
    return 0;
  }
  if (session.setProfiling(true) != DYNCC_OK)
    return error(dyncc::lastError());

  // The bindings: log-spaced values per symbol, fewer per symbol where
  // their product would exceed --max-bindings; the held-out ones between.
  int64_t swept = 0;
  for (const auto &range : ranges)
    swept += range.first != range.second;
  int64_t perSymbol = options.points;
  while (perSymbol > 2 &&
         std::pow(static_cast<double>(perSymbol), static_cast<double>(swept)) >
             static_cast<double>(options.maxBindings))
    --perSymbol;
  std::vector<std::vector<int64_t>> axes(numSymbols), heldAxes(numSymbols);
  for (size_t s = 0; s < numSymbols; ++s) {
    int64_t divisor = std::max<int64_t>(artifact.symbolDivisor(s), 1);
    axes[s] = sweepValues(ranges[s].first, ranges[s].second, perSymbol,
                          divisor);
    if (axes[s].empty())
      return error("symbol '" + names[s] + "' has no value in [" +
                   std::to_string(ranges[s].first) + ", " +
                   std::to_string(ranges[s].second) + "] that is a multiple "
                   "of " + std::to_string(divisor));
    heldAxes[s] = midpoints(axes[s], divisor);
  }
  std::vector<std::vector<int64_t>> bindings =
      productOf(axes, options.maxBindings);
  std::vector<std::vector<int64_t>> heldOut =
      productOf(heldAxes, options.maxBindings);

  showProgress = !options.quiet && isatty(2);
  if (!options.quiet)
    std::printf("tuning %s: %zu group%s with up to %zu variants, %zu "
                "bindings, %lld timed runs each\ndevice: %s\n",
                artifact.modelName().c_str(), tuned.size(),
                tuned.size() == 1 ? "" : "s", maxVariants, bindings.size(),
                static_cast<long long>(options.repeat),
                session.device().c_str());

  std::vector<Measurement> measured(bindings.size());
  std::vector<bool> usable(bindings.size(), false);
  int skipped = 0;
  for (size_t b = 0; b < bindings.size(); ++b) {
    phase = "tune: binding " + std::to_string(b + 1) + "/" +
            std::to_string(bindings.size());
    usable[b] = measure(session, bindings[b], measured[b], message);
    if (!usable[b]) {
      // A binding the model's constraints reject (symbols tied by an
      // equality) is skipped; a device failure ends the tuning.
      ++skipped;
      std::string where;
      for (size_t s = 0; s < numSymbols; ++s)
        where += (s ? ", " : "") + names[s] + "=" +
                 std::to_string(bindings[b][s]);
      progress("");
      if (failure == DYNCC_ERROR_DEVICE)
        return error(where + ": " + message + " (nothing written)");
      if (!options.quiet)
        std::printf("skipped %s: %s\n", where.c_str(), message.c_str());
    }
  }
  progress("");
  if (skipped == static_cast<int>(bindings.size()))
    return error("no binding could be run; nothing written");

  // The measurements, per variant: one sample per distinct value of the
  // group's symbols (the median where bindings share one).
  device.repeat = options.repeat;
  device.bindings = static_cast<int64_t>(bindings.size()) - skipped;
  for (size_t t = 0; t < tuned.size(); ++t) {
    size_t g = tuned[t];
    GroupCalibration group;
    group.group = artifact.groupName(g);
    group.groupIndex = g;
    std::vector<size_t> symbols = artifact.groupSymbols(g);
    for (size_t s : symbols)
      group.symbols.push_back(names[s]);
    for (size_t v = 0; v < artifact.numVariants(g); ++v) {
      VariantCalibration variant;
      variant.kernel = artifact.variantKernel(g, v);
      if (session.blocksPerWave(g, v, variant.blocksPerWave) != DYNCC_OK)
        return error(dyncc::lastError());
      std::map<std::vector<int64_t>, std::vector<CalibrationSample>> byValue;
      for (size_t b = 0; b < bindings.size(); ++b) {
        if (!usable[b] || measured[b].ms[t][v] < 0 ||
            measured[b].blocks[t][v] == 0)
          continue;
        CalibrationSample sample;
        for (size_t s : symbols)
          sample.at.push_back(bindings[b][s]);
        sample.blocks = measured[b].blocks[t][v];
        sample.ms = measured[b].ms[t][v];
        byValue[sample.at].push_back(sample);
      }
      for (auto &[at, samples] : byValue) {
        std::sort(samples.begin(), samples.end(),
                  [](const CalibrationSample &a, const CalibrationSample &b) {
                    return a.ms < b.ms;
                  });
        variant.samples.push_back(samples[samples.size() / 2]);
      }
      group.variants.push_back(std::move(variant));
    }
    device.groups.push_back(std::move(group));
  }

  if (!options.quiet) {
    std::printf("group\tvariant\tkernel\tblocks/wave\tsamples\twave ms "
                "(min - max)\n");
    for (const GroupCalibration &group : device.groups)
      for (size_t v = 0; v < group.variants.size(); ++v) {
        const VariantCalibration &variant = group.variants[v];
        double lo, hi;
        bool sampled = variant.waveRange(lo, hi);
        std::printf("%s\tv%zu\t%s\t%lld\t%zu\t%s - %s\n", group.group.c_str(),
                    v, variant.kernel.c_str(),
                    static_cast<long long>(variant.blocksPerWave),
                    variant.samples.size(),
                    sampled ? formatNumber(lo).c_str() : "-",
                    sampled ? formatNumber(hi).c_str() : "-");
      }
  }
  if (!writeCalibration(&device, message))
    return error(message + " (nothing written)");
  if (!options.quiet)
    std::printf("wrote the measurements on %s (%s, %lld %s%s) to %s\n",
                device.device.c_str(), device.arch.c_str(),
                static_cast<long long>(device.sms),
                device.onHost() ? "thread" : "SM", device.sms == 1 ? "" : "s",
                options.output.c_str());
  if (!options.check)
    return 0;

  // The held-out check: the artifact's own pick (the model's table) and the
  // tuned artifact's pick, each against the best measured variant.
  dyncc::Artifact tunedArtifact;
  dyncc::Session tunedSession;
  if (tunedArtifact.load(options.output) != DYNCC_OK ||
      tunedSession.create(tunedArtifact, options.device) != DYNCC_OK)
    return error(dyncc::lastError());
  if (!options.quiet)
    std::printf("held-out bindings: each group's time with the variant "
                "picked, over the best measured\n");
  std::vector<double> modelRatios, tunedRatios;
  for (size_t b = 0; b < heldOut.size(); ++b) {
    phase = "check: binding " + std::to_string(b + 1) + "/" +
            std::to_string(heldOut.size());
    Measurement m;
    if (!measure(session, heldOut[b], m, message) ||
        !bindInputs(tunedSession, heldOut[b], message) ||
        !check(tunedSession.run(), message)) {
      if (failure == DYNCC_ERROR_DEVICE)
        return error(message);
      continue;
    }
    std::string where;
    for (size_t s = 0; s < numSymbols; ++s)
      where += (s ? " " : "") + names[s] + "=" + std::to_string(heldOut[b][s]);
    for (size_t t = 0; t < tuned.size(); ++t) {
      size_t g = tuned[t];
      double best = -1;
      for (double ms : m.ms[t])
        if (ms >= 0 && (best < 0 || ms < best))
          best = ms;
      auto timeOf = [&](const std::string &kernel) {
        for (size_t v = 0; v < artifact.numVariants(g); ++v)
          if (artifact.variantKernel(g, v) == kernel)
            return m.ms[t][v];
        return -1.0;
      };
      double model = timeOf(m.picked[t]);
      double tunedTime = timeOf(tunedSession.groupVariant(g));
      if (best <= 0 || model < 0 || tunedTime < 0)
        continue;
      modelRatios.push_back(model / best);
      tunedRatios.push_back(tunedTime / best);
      if (!options.quiet) {
        progress("");
        std::printf("%s\t%s\tbest %s ms\tmodel %s %.3fx\ttuned %s %.3fx\n",
                    where.c_str(), artifact.groupName(g).c_str(),
                    formatNumber(best).c_str(), m.picked[t].c_str(),
                    model / best, tunedSession.groupVariant(g).c_str(),
                    tunedTime / best);
      }
    }
  }
  progress("");
  if (modelRatios.empty())
    return error("the held-out check ran no binding");
  auto summary = [](const std::vector<double> &ratios) {
    double logSum = 0, worst = 0;
    for (double r : ratios) {
      logSum += std::log(r);
      worst = std::max(worst, r);
    }
    char text[96];
    std::snprintf(text, sizeof(text), "max %.3fx, geomean %.3fx", worst,
                  std::exp(logSum / static_cast<double>(ratios.size())));
    return std::string(text);
  };
  std::printf("selection regret over %zu held-out group runs: model %s; "
              "tuned %s\n",
              modelRatios.size(), summary(modelRatios).c_str(),
              summary(tunedRatios).c_str());
  return 0;
}

int TuneTool::main(const std::vector<std::string> &args) {
  if (int status = parseArgs(args))
    return status;
  if (options.help) {
    std::printf(
        "usage: %s tune OUT.dyncc [options]\n"
        "Measures each variant of each group with several on a GPU or the "
        "host and\n"
        "stores the measurements in the artifact; sessions on that device "
        "then select by them.\n"
        "  --device DEVICE        cuda:N (default cuda:0), or cpu: the host "
        "at its threads\n"
        "  -o FILE                write the tuned artifact there (default: "
        "in place)\n"
        "  --dim NAME=LO:HI       measure NAME over [LO, HI] only (default: "
        "its range)\n"
        "  --dim NAME=VALUE       hold NAME at VALUE\n"
        "  --points N             values per symbol, log-spaced (default 6)\n"
        "  --max-bindings N       the most bindings measured (default 64)\n"
        "  --repeat N             timed runs per variant and binding "
        "(default 5)\n"
        "  --seed N               seed of the random inputs (default 0)\n"
        "  --no-check             skip the held-out regret check\n"
        "  --quiet                print only the regret summary and "
        "errors\n",
        name);
    return 0;
  }
  return run();
}

} // namespace

int dyncc::runtime::tuneToolMain(const std::vector<std::string> &args,
                                 const char *toolName) {
  return TuneTool(toolName).main(args);
}
