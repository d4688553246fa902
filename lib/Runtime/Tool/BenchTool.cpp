//===- BenchTool.cpp - The bench command: a shape sweep ---------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `dyncc bench OUT.dyncc` runs a compiled model over a sweep of shapes in one
// session and prints, per point, the kernels launched, the first (cold) run
// at that shape, the median and minimum of warm runs, on CUDA the device
// time between events, and the host's time per launch: the enqueue of a
// warm run (bind, check, select, plan, launch calls) divided by its
// launches; and on CUDA the host's time to enqueue the cold run (the same
// work at a shape seen for the first time: selections looked up, the arena
// placed, buffers grown). On CUDA each is also given without the time
// spent inside driver calls and copying host inputs into page-locked memory
// (`own`): the run-time's own work; the warm runs' input copy time is a
// column of its own. `--plot`
// draws the median against the swept symbol, one colour per set of
// variants chosen. `--sessions N` then runs the points once each in N
// fresh sessions (random orders, the first session keeping the model
// loaded): the run-time's own time of a session's first run and of shapes
// new to a session, over many sessions rather than one.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/RunTool.h"

#include "ToolSupport.h"

#include "dyncc/CostModel/Plot.h"
#include "dyncc/Runtime/Runtime.hpp"
#include "dyncc/Runtime/ShapeExpr.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

using namespace dyncc::runtime;
using namespace dyncc::runtime::tool;

namespace {

struct SymbolSweep {
  bool swept = false;
  int64_t lo = 0, hi = 0;
};

struct BenchOptions {
  std::string artifact;
  /// Per symbol name: a value (lo == hi) or a range to sweep.
  std::vector<std::pair<std::string, SymbolSweep>> dims;
  /// Inputs held at a file's data at every point (NAME, FILE.npy): sizes
  /// read from data, token ids.
  std::vector<std::pair<std::string, std::string>> inputs;
  int64_t points = 6;
  int64_t repeat = 20;
  uint64_t seed = 0;
  std::string device = "cpu";
  std::string plot;
  bool quiet = false;
  bool help = false;
  /// Largest shape first: the later shapes are new to the session but
  /// need no larger buffers (a server's steady state).
  bool descending = false;
  /// Fresh sessions that each run the sweep's shapes once, in a random
  /// order, for the run-time's own time of shapes new to a session (CUDA).
  int64_t sessions = 0;
};

class BenchTool {
public:
  explicit BenchTool(const char *name) : name(name) {}
  int main(const std::vector<std::string> &args);

private:
  int error(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", name, message.c_str());
    return 1;
  }
  int usageError(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", name, message.c_str());
    std::fprintf(stderr,
                 "usage: %s bench OUT.dyncc [--dim NAME=LO:HI|NAME=VALUE ...] "
                 "[--input NAME=FILE.npy ...] [--points N] [--repeat N] "
                 "[--seed N] [--device cpu|cuda:N] [--plot FILE.svg] "
                 "[--sessions N] [--quiet]\n",
                 name);
    return 2;
  }
  int parseArgs(const std::vector<std::string> &args, BenchOptions &options);
  int run(const BenchOptions &options);

  const char *name;
};

int BenchTool::parseArgs(const std::vector<std::string> &args,
                         BenchOptions &options) {
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
    if (arg == "--descending") {
      options.descending = true;
      continue;
    }
    if (arg == "-q" || arg == "--quiet") {
      options.quiet = true;
      continue;
    }
    std::string option, value, problem;
    if (!readOption(args, i,
                    {"--dim", "--input", "--points", "--repeat", "--seed",
                     "--device", "--plot", "--sessions"},
                    option, value, problem))
      return usageError(problem);
    if (option == "--dim") {
      std::string key;
      SymbolSweep sweep;
      if (!parseDimRange(value, key, sweep.lo, sweep.hi, sweep.swept, problem))
        return usageError(problem);
      for (const auto &known : options.dims)
        if (known.first == key)
          return usageError("--dim " + key + " given twice");
      options.dims.emplace_back(key, sweep);
    } else if (option == "--input") {
      if (!addInputOption(value, options.inputs, problem))
        return usageError(problem);
    } else if (option == "--sessions") {
      if (!parseInt64(value, options.sessions) || options.sessions < 1 ||
          options.sessions > 100000)
        return usageError("--sessions: expected a count of 1 to 100000, got '" +
                          value + "'");
    } else if (option == "--points" || option == "--repeat") {
      int64_t &slot = option == "--points" ? options.points : options.repeat;
      if (!parseInt64(value, slot) || slot < 1 || slot > 100000)
        return usageError(option + ": expected a count of 1 to 100000, got '" +
                          value + "'");
    } else if (option == "--seed") {
      if (!parseUInt64(value, options.seed))
        return usageError("--seed: expected a non-negative integer, got '" +
                          value + "'");
    } else if (option == "--device") {
      options.device = value;
    } else {
      if (value.empty())
        return usageError("--plot: empty file name");
      options.plot = value;
    }
  }
  if (options.help)
    return 0;
  if (options.artifact.empty())
    return usageError("no artifact given");
  if (options.sessions && options.device == "cpu")
    return usageError("--sessions needs a CUDA device (on the cpu a run's "
                      "host time is its kernels' too)");
  return 0;
}

int BenchTool::run(const BenchOptions &options) {
  dyncc::Artifact artifact;
  if (artifact.load(options.artifact) != DYNCC_OK)
    return error(dyncc::lastError());
  size_t numSymbols = artifact.numSymbols();
  std::vector<std::string> names = symbolNames(artifact);

  size_t numInputs = artifact.numInputs();
  std::vector<std::vector<ShapeExpr>> inputDims;
  std::string message;
  if (!parseInputDims(artifact, names, inputDims, message))
    return error(message);

  // Each symbol's values: --dim's, else its minimum; with no range given,
  // the symbol of the widest range is swept over all of it. An input given
  // by --input holds the symbols its dimensions are.
  std::vector<SymbolSweep> sweeps(numSymbols);
  for (size_t s = 0; s < numSymbols; ++s)
    sweeps[s].lo = sweeps[s].hi = artifact.symbolMin(s);
  std::vector<NpyArray> given(numInputs);
  std::vector<bool> fromFile(numInputs, false);
  std::vector<bool> held(numSymbols, false);
  for (const auto &[inputName, path] : options.inputs) {
    size_t index;
    NpyArray array;
    if (!readInputNpy(artifact, inputDims, inputName, path, index, array,
                      message))
      return error(message);
    for (size_t d = 0; d < inputDims[index].size(); ++d) {
      const ShapeExpr &dim = inputDims[index][d];
      if (!dim.isSymbol())
        continue;
      size_t s = dim.symbolSlot();
      for (const auto &[key, sweep] : options.dims)
        if (key == names[s] && (sweep.swept || sweep.lo != array.shape[d]))
          return error("--input " + inputName + ": " + path + " holds " +
                       key + " at " + std::to_string(array.shape[d]) +
                       ", but --dim gives " + key + "=" +
                       std::to_string(sweep.lo) +
                       (sweep.swept ? ":" + std::to_string(sweep.hi) : ""));
      sweeps[s].lo = sweeps[s].hi = array.shape[d];
      held[s] = true;
    }
    given[index] = std::move(array);
    fromFile[index] = true;
  }
  bool anySwept = false;
  for (const auto &[key, sweep] : options.dims) {
    size_t s = std::find(names.begin(), names.end(), key) - names.begin();
    if (s == numSymbols)
      return error("unknown symbol '" + key + "' in --dim (symbols: " +
                   listOrNone(names) + ")");
    if (!artifact.symbolSource(s).empty())
      return error("--dim " + key + ": the symbol is a size read from data "
                   "by " + artifact.symbolSource(s) +
                   ", not an input dimension");
    if (sweep.lo < artifact.symbolMin(s) || sweep.hi > artifact.symbolMax(s))
      return error("--dim " + key + ": " + std::to_string(sweep.lo) +
                   (sweep.swept ? ":" + std::to_string(sweep.hi) : "") +
                   " is outside its range [" +
                   std::to_string(artifact.symbolMin(s)) + ", " +
                   std::to_string(artifact.symbolMax(s)) + "]");
    sweeps[s] = sweep;
    anySwept |= sweep.swept;
  }
  if (!anySwept && numSymbols != 0) {
    size_t widest = 0;
    double widestRatio = -1;
    for (size_t s = 0; s < numSymbols; ++s) {
      bool given = false;
      for (const auto &dim : options.dims)
        given |= dim.first == names[s];
      double ratio = static_cast<double>(artifact.symbolMax(s) + 1) /
                     static_cast<double>(artifact.symbolMin(s) + 1);
      bool fromData = !artifact.symbolSource(s).empty();
      if (!given && !held[s] && !fromData && ratio > widestRatio) {
        widest = s;
        widestRatio = ratio;
      }
    }
    if (widestRatio > 0)
      sweeps[widest] = {true, artifact.symbolMin(widest),
                        artifact.symbolMax(widest)};
  }
  bool sweeping = std::any_of(sweeps.begin(), sweeps.end(),
                              [](const SymbolSweep &s) { return s.swept; });
  if (!options.plot.empty() && !sweeping)
    return error("--plot: no symbol is swept (give --dim NAME=LO:HI)");
  // The points: the product of the swept symbols' values.
  std::vector<std::vector<int64_t>> axes(numSymbols);
  for (size_t s = 0; s < numSymbols; ++s)
    axes[s] = sweeps[s].swept
                  ? sweepValues(sweeps[s].lo, sweeps[s].hi, options.points,
                                std::max<int64_t>(artifact.symbolDivisor(s), 1))
                  : std::vector<int64_t>{sweeps[s].lo};
  std::vector<std::vector<int64_t>> points(1);
  for (size_t s = 0; s < numSymbols; ++s) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t> &point : points)
      for (int64_t value : axes[s]) {
        next.push_back(point);
        next.back().push_back(value);
      }
    points = std::move(next);
  }
  if (options.descending)
    std::reverse(points.begin(), points.end());

  // A symbol has a column where it is swept, or where there are few; not
  // one read from data (its value is the run's, not the point's).
  auto column = [&](size_t s) {
    return (sweeps[s].swept || numSymbols <= 3) &&
           artifact.symbolSource(s).empty();
  };
  std::vector<DType> inputTypes(numInputs);
  for (size_t i = 0; i < numInputs; ++i)
    parseDType(artifact.inputDType(i), inputTypes[i]);

  dyncc::Session session;
  if (session.create(artifact, options.device) != DYNCC_OK)
    return error(dyncc::lastError());
  bool onGpu = options.device != "cpu";
  // The driver's share of each enqueue, so that the run-time's own host
  // time (bind, check, select, plan) is reported apart from it.
  if (onGpu && session.setDriverTiming(true) != DYNCC_OK)
    return error(dyncc::lastError());
  if (!options.quiet) {
    std::printf("%s on %s, %zu shapes, %lld warm runs each\n",
                artifact.modelName().c_str(), session.device().c_str(),
                points.size(), static_cast<long long>(options.repeat));
    std::string header;
    for (size_t s = 0; s < numSymbols; ++s)
      if (column(s))
        header += names[s] + "\t";
    header += "launches\tcold ms\tmedian ms\tmin ms\t";
    if (onGpu)
      header += "device ms\t";
    header += "host us/launch";
    if (onGpu)
      header += "\town us/launch\tinput copy us\tcold host us\tcold own us";
    std::printf("%s\n", header.c_str());
  }

  using Clock = std::chrono::steady_clock;
  auto msSince = [](Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start)
        .count();
  };
  // The plot: the last swept symbol along x (the sweep's fastest-moving
  // one), a panel per value of the other swept symbols, one colour per set
  // of variants selected.
  std::vector<dyncc::cost::PlotSeries> panels;
  std::map<std::vector<int64_t>, size_t> panelOf;
  std::vector<std::string> variantSets;
  std::map<std::string, uint32_t> selections;
  size_t xSymbol = numSymbols;
  for (size_t s = numSymbols; s-- > 0 && xSymbol == numSymbols;)
    if (sweeps[s].swept)
      xSymbol = s;
  int failures = 0;
  // The run-time's own host time of each shape's first run (CUDA).
  std::vector<double> coldOwn;
  std::vector<std::vector<uint8_t>> data(numInputs);
  // Random values are rarely valid sizes: where sizes come from data and
  // no input was given, a failure says how to give them.
  std::string dataHint;
  for (size_t s = 0; s < numSymbols && options.inputs.empty(); ++s)
    if (!artifact.symbolSource(s).empty())
      dataHint = " (sizes of this model are read from input values, which "
                 "are random here: give them with --input NAME=FILE.npy)";
  // Binds `point`'s inputs on `target`: random data of its shapes, and the
  // inputs --input holds.
  auto bindPoint = [&](dyncc::Session &target,
                       const std::vector<int64_t> &point) {
    if (bindRandomInputs(target, artifact, inputDims, inputTypes, point, names,
                         options.seed, data, message, &fromFile) != DYNCC_OK)
      return false;
    for (size_t i = 0; i < numInputs; ++i)
      if (fromFile[i] && target.setInput(i, given[i].data.data(),
                                         given[i].shape) != DYNCC_OK) {
        message = dyncc::lastError();
        return false;
      }
    return true;
  };
  // A run's own host time leaves out its driver calls and its copies of
  // host inputs into page-locked memory (the caller's data, which a large
  // input makes the larger share: 3.5 MB of weights took 0.3 ms a run).
  struct ColdRun {
    double hostMs = 0, driverUs = 0, copyUs = 0, wallMs = 0;
    double ownUs() const { return hostMs * 1000 - driverUs - copyUs; }
  };
  // A cold run on `target`: the enqueue's host time, the driver's and the
  // input copies' shares of it (CUDA), and the time to its end; false on
  // failure (the error is dyncc::lastError()).
  auto runCold = [&](dyncc::Session &target, ColdRun &run) {
    auto start = Clock::now();
    if (target.enqueue() != DYNCC_OK)
      return false;
    run.hostMs = msSince(start);
    uint64_t calls = 0, bytes = 0;
    if (onGpu) {
      target.driverTime(run.driverUs, calls);
      target.inputCopyTime(run.copyUs, bytes);
    }
    if (target.synchronize() != DYNCC_OK)
      return false;
    run.wallMs = msSince(start);
    return true;
  };
  for (const std::vector<int64_t> &point : points) {
    std::string prefix;
    for (size_t s = 0; s < numSymbols; ++s)
      if (column(s))
        prefix += std::to_string(point[s]) + "\t";
    auto fail = [&](const std::string &message) {
      ++failures;
      std::printf("%serror: %s%s\n", prefix.c_str(), message.c_str(),
                  dataHint.c_str());
    };
    if (!bindPoint(session, point)) {
      fail(message);
      continue;
    }
    bool ok = true;
    ColdRun coldRun;
    if (!runCold(session, coldRun)) {
      fail(dyncc::lastError());
      continue;
    }
    double cold = coldRun.wallMs;
    double driver = 0, copy = 0;
    uint64_t calls = 0, bytes = 0;
    std::vector<double> wall, device, host, own, copies;
    for (int64_t r = 0; r < options.repeat && ok; ++r) {
      auto start = Clock::now();
      ok = session.enqueue() == DYNCC_OK;
      double enqueued = msSince(start);
      ok = ok && session.synchronize() == DYNCC_OK;
      wall.push_back(msSince(start));
      host.push_back(enqueued);
      if (onGpu) {
        session.driverTime(driver, calls);
        session.inputCopyTime(copy, bytes);
        own.push_back(enqueued * 1000 - driver - copy);
        copies.push_back(copy);
      }
      double milliseconds = 0;
      if (ok && onGpu) {
        ok = session.deviceTime(milliseconds) == DYNCC_OK;
        device.push_back(milliseconds);
      }
    }
    if (!ok) {
      fail(dyncc::lastError());
      continue;
    }
    size_t launches = session.numLaunches();
    double median = medianOf(wall);
    double fastest = *std::min_element(wall.begin(), wall.end());
    std::string line = prefix + std::to_string(launches) + "\t" +
                       formatNumber(cold) + "\t" + formatNumber(median) +
                       "\t" + formatNumber(fastest) + "\t";
    if (onGpu)
      line += formatNumber(medianOf(device)) + "\t";
    // On the CPU the enqueue is the whole run: its kernels included.
    line += onGpu && launches ? formatNumber(medianOf(host) * 1000 / launches)
                              : std::string("-");
    if (onGpu) {
      line += "\t" +
              (launches ? formatNumber(medianOf(own) / launches)
                        : std::string("-")) +
              "\t" + formatNumber(medianOf(copies)) + "\t" +
              formatNumber(coldRun.hostMs * 1000) + "\t" +
              formatNumber(coldRun.ownUs());
      coldOwn.push_back(coldRun.ownUs());
    }
    if (!options.quiet)
      std::printf("%s\n", line.c_str());
    if (xSymbol != numSymbols) {
      std::string chosen;
      for (size_t g = 0; g < artifact.numGroups(); ++g)
        chosen += session.groupVariant(g) + ",";
      auto [it, fresh] = selections.emplace(
          chosen, static_cast<uint32_t>(selections.size()));
      if (fresh)
        variantSets.push_back("variant set " + std::to_string(it->second));
      std::vector<int64_t> others;
      std::string where;
      for (size_t s = 0; s < numSymbols; ++s)
        if (s != xSymbol && sweeps[s].swept) {
          others.push_back(point[s]);
          where += ", " + names[s] + " = " + std::to_string(point[s]);
        }
      auto [panel, added] = panelOf.emplace(others, panels.size());
      if (added) {
        panels.emplace_back();
        panels.back().title =
            artifact.modelName() + " on " + options.device + where;
      }
      dyncc::cost::PlotSeries &series = panels[panel->second];
      series.x.push_back(point[xSymbol]);
      series.y.push_back(median);
      series.variant.push_back(it->second);
    }
  }
  if (onGpu && !options.quiet && !coldOwn.empty()) {
    // The first run at a new shape: the run-time's own share of its
    // enqueue (issue 7's cold target), over the sweep; the first shape's
    // is the process's first run of the model, everything it reads cold.
    std::printf(
        "cold own us over %zu shapes: median %s, max %s, the first "
        "shape (the process's first run) %s\n",
        coldOwn.size(), formatNumber(medianOf(coldOwn)).c_str(),
        formatNumber(*std::max_element(coldOwn.begin(), coldOwn.end())).c_str(),
        formatNumber(coldOwn.front()).c_str());
  }
  if (options.sessions && !coldOwn.empty()) {
    // Shapes new to a session, over fresh sessions while `session` keeps
    // the model loaded: each runs every point once, in its own random
    // order. A session's first run and its later ones apart: the first
    // pays for the session's memory being touched the first time.
    std::vector<double> firstRuns, later;
    std::mt19937_64 rng(options.seed);
    std::vector<size_t> order(points.size());
    for (int64_t k = 0; k < options.sessions; ++k) {
      dyncc::Session fresh;
      if (fresh.create(artifact, options.device) != DYNCC_OK ||
          fresh.setDriverTiming(true) != DYNCC_OK)
        return error(dyncc::lastError());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (size_t p : order) {
        if (!bindPoint(fresh, points[p]))
          return error(message);
        ColdRun run;
        if (!runCold(fresh, run))
          return error(dyncc::lastError());
        (p == order.front() ? firstRuns : later).push_back(run.ownUs());
      }
    }
    auto p90 = [](std::vector<double> values) {
      std::sort(values.begin(), values.end());
      return values[values.size() * 9 / 10];
    };
    if (!options.quiet) {
      std::printf("cold own us over %lld sessions, each the %zu shapes once "
                  "in a random order: a session's first run median %s, "
                  "p90 %s",
                  static_cast<long long>(options.sessions), points.size(),
                  formatNumber(medianOf(firstRuns)).c_str(),
                  formatNumber(p90(firstRuns)).c_str());
      if (!later.empty())
        std::printf("; a new shape on a session median %s, p90 %s",
                    formatNumber(medianOf(later)).c_str(),
                    formatNumber(p90(later)).c_str());
      std::printf("\n");
    }
  }
  if (onGpu && !options.quiet) {
    // Warm runs after the first of a shape replay its CUDA graph.
    uint64_t replays = 0, captures = 0;
    std::string off;
    if (session.cudaGraphs(replays, captures, off) != DYNCC_OK)
      off = dyncc::lastError();
    if (off.empty())
      std::printf("CUDA graphs: %llu captured, %llu replays\n",
                  static_cast<unsigned long long>(captures),
                  static_cast<unsigned long long>(replays));
    else
      std::printf("CUDA graphs: off (%s)\n", off.c_str());
    // Host inputs go to the device through page-locked memory.
    uint64_t copies = 0;
    if (session.pinnedInputs(copies, off) != DYNCC_OK)
      off = dyncc::lastError();
    if (off.empty())
      std::printf("pinned inputs: %llu copies\n",
                  static_cast<unsigned long long>(copies));
    else
      std::printf("pinned inputs: off (%s)\n", off.c_str());
  }
  if (!options.plot.empty()) {
    for (dyncc::cost::PlotSeries &series : panels)
      series.variantNames = variantSets;
    std::string svg = dyncc::cost::plotVariantRegions(panels, names[xSymbol],
                                                      "median run time (ms)");
    if (!dyncc::cost::writePlotFile(options.plot, svg, message))
      return error(message);
    if (!options.quiet)
      std::printf("wrote %s\n", options.plot.c_str());
  }
  std::fflush(stdout);
  return failures ? 1 : 0;
}

int BenchTool::main(const std::vector<std::string> &args) {
  BenchOptions options;
  if (int status = parseArgs(args, options))
    return status;
  if (options.help) {
    std::printf(
        "usage: %s bench OUT.dyncc [options]\n"
        "Runs a compiled model over a sweep of shapes and prints the time of "
        "each.\n"
        "  --dim NAME=LO:HI       sweep symbol NAME over [LO, HI] (log-spaced;"
        " with\n"
        "                         several, every combination)\n"
        "  --dim NAME=VALUE       hold NAME at VALUE (others: their minimum;"
        " with\n"
        "                         no range given, the widest symbol is swept)\n"
        "  --input NAME=FILE.npy  hold input NAME at the file's data (and the\n"
        "                         symbols its shape gives) at every point;\n"
        "                         the other inputs are random\n"
        "  --points N             values per swept symbol (default 6)\n"
        "  --repeat N             warm runs per shape (default 20)\n"
        "  --seed N               seed of the random inputs (default 0)\n"
        "  --device DEVICE        cpu (default), cuda or cuda:N\n"
        "  --plot FILE.svg        draw the median against the first swept "
        "symbol\n"
        "  --descending           the largest shape first (later cold runs "
        "then\n"
        "                         need no larger buffers)\n"
        "  --sessions N           then N fresh sessions, each running the "
        "shapes\n"
        "                         once in a random order: the run-time's own "
        "time\n"
        "                         of shapes new to a session (CUDA only)\n"
        "  --quiet                print nothing but errors\n",
        name);
    return 0;
  }
  return run(options);
}

} // namespace

int dyncc::runtime::benchToolMain(const std::vector<std::string> &args,
                                  const char *toolName) {
  return BenchTool(toolName).main(args);
}
