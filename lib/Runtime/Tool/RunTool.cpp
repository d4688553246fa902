//===- RunTool.cpp - The run command ----------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/RunTool.h"

#include "ToolSupport.h"

#include "dyncc/Runtime/DType.h"
#include "dyncc/Runtime/Npy.h"
#include "dyncc/Runtime/Runtime.hpp"
#include "dyncc/Runtime/ShapeExpr.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include <sys/stat.h>

using namespace dyncc::runtime;
using namespace dyncc::runtime::tool;

namespace {

struct Options {
  std::string artifact;
  std::vector<std::pair<std::string, int64_t>> dims;
  std::vector<std::pair<std::string, std::string>> inputs;
  uint64_t seed = 0;
  std::string outputDir;
  std::string device = "cpu";
  /// Runs timed after the first, warm one (0: just the one).
  int64_t repeat = 0;
  bool quiet = false;
  bool verbose = false;
  bool help = false;
};

class Tool {
public:
  explicit Tool(const char *name) : name(name) {}

  int main(const std::vector<std::string> &args);

private:
  const char *name;

  int error(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", name, message.c_str());
    return 1;
  }
  int usageError(const std::string &message) {
    std::fprintf(stderr, "%s: error: %s\n", name, message.c_str());
    std::fprintf(stderr,
                 "usage: %s OUT.dyncc [--dim NAME=VALUE ...] "
                 "[--input NAME=FILE.npy ...] [--seed N] "
                 "[--output-dir DIR] [--device cpu|cuda:N] [--repeat N] [-v] "
                 "[--quiet]\n",
                 name);
    return 2;
  }
  void printHelp() {
    std::printf(
        "usage: %s OUT.dyncc [options]\n"
        "Runs a compiled model on .npy or random inputs.\n"
        "  --dim NAME=VALUE       value of shape symbol NAME (repeatable)\n"
        "  --input NAME=FILE.npy  data of input NAME (repeatable); other\n"
        "                         inputs are random, shaped by --dim values\n"
        "  --seed N               seed of the random inputs (default 0)\n"
        "  --output-dir DIR       write each output to DIR/NAME.npy\n"
        "  --device DEVICE        cpu (default), cuda or cuda:N\n"
        "  --repeat N             run N more times and report the median,\n"
        "                         minimum and maximum wall time of a run\n"
        "  -v, --verbose          also say why each group's variant was\n"
        "                         chosen (the tile search's table)\n"
        "  --quiet                print nothing on success\n",
        name);
  }

  int parseArgs(const std::vector<std::string> &args, Options &options);
  int run(const Options &options);
};

int Tool::parseArgs(const std::vector<std::string> &args, Options &options) {
  bool positionalOnly = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (positionalOnly || arg.empty() || arg[0] != '-' || arg == "-") {
      if (!options.artifact.empty())
        return usageError("unexpected argument '" + arg +
                          "' (the artifact is '" + options.artifact + "')");
      options.artifact = arg;
      continue;
    }
    if (arg == "--") {
      positionalOnly = true;
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
    if (arg == "-v" || arg == "--verbose") {
      options.verbose = true;
      continue;
    }
    std::string option, value, problem;
    if (!readOption(args, i,
                    {"--dim", "--input", "--seed", "--output-dir", "--device",
                     "--repeat"},
                    option, value, problem))
      return usageError(problem);
    if (option == "--input") {
      if (!addInputOption(value, options.inputs, problem))
        return usageError(problem);
    } else if (option == "--dim") {
      size_t split = value.find('=');
      if (split == std::string::npos || split == 0)
        return usageError("--dim expects NAME=VALUE, got '" + value + "'");
      std::string key = value.substr(0, split);
      std::string rest = value.substr(split + 1);
      int64_t dim;
      if (!parseInt64(rest, dim) || dim < 0)
        return usageError("--dim " + key +
                          ": expected a non-negative integer, got '" + rest +
                          "'");
      for (const auto &[known, knownValue] : options.dims)
        if (known == key && knownValue != dim)
          return usageError("--dim " + key +
                            " given twice with different values");
      options.dims.emplace_back(key, dim);
    } else if (option == "--seed") {
      if (!parseUInt64(value, options.seed))
        return usageError("--seed: expected a non-negative integer, got '" +
                          value + "'");
    } else if (option == "--repeat") {
      if (!parseInt64(value, options.repeat) || options.repeat < 1 ||
          options.repeat > 1000000)
        return usageError("--repeat: expected a count of 1 to 1000000, got '" +
                          value + "'");
    } else if (option == "--output-dir") {
      if (value.empty())
        return usageError("--output-dir: empty directory name");
      options.outputDir = value;
    } else {
      options.device = value;
    }
  }
  if (options.help)
    return 0;
  if (options.artifact.empty())
    return usageError("no artifact given");
  return 0;
}

bool makeDirectories(const std::string &path, std::string &message) {
  std::string prefix;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos)
      slash = path.size();
    prefix = path.substr(0, slash);
    pos = slash + 1;
    if (prefix.empty())
      continue;
    struct stat info;
    if (::stat(prefix.c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) {
        message = prefix + ": not a directory";
        return false;
      }
      continue;
    }
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      message = prefix + ": cannot create directory: " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

int Tool::run(const Options &options) {
  dyncc::Artifact artifact;
  if (artifact.load(options.artifact) != DYNCC_OK)
    return error(dyncc::lastError());

  // Symbols given on the command line.
  size_t numSymbols = artifact.numSymbols();
  std::vector<std::string> symbolNames = tool::symbolNames(artifact);
  std::vector<int64_t> symbolValues(numSymbols, 0);
  std::vector<bool> fromDim(numSymbols, false), known(numSymbols, false);
  for (const auto &[symbolName, value] : options.dims) {
    size_t slot = 0;
    while (slot < numSymbols && symbolNames[slot] != symbolName)
      ++slot;
    if (slot == numSymbols)
      return error("unknown symbol '" + symbolName + "' in --dim (symbols: " +
                   listOrNone(symbolNames) + ")");
    symbolValues[slot] = value;
    fromDim[slot] = known[slot] = true;
  }

  dyncc::Session session;
  if (session.create(artifact, options.device) != DYNCC_OK)
    return error(dyncc::lastError());

  size_t numInputs = artifact.numInputs();
  std::vector<NpyArray> data(numInputs);
  std::vector<bool> fromFile(numInputs, false);
  std::vector<std::vector<ShapeExpr>> inputDims;
  std::string message;
  if (!parseInputDims(artifact, symbolNames, inputDims, message))
    return error(message);

  // Inputs read from files; their bare-symbol dimensions give values.
  for (const auto &[inputName, path] : options.inputs) {
    size_t index;
    NpyArray array;
    if (!readInputNpy(artifact, inputDims, inputName, path, index, array,
                      message))
      return error(message);
    std::string label = "input '" + inputName + "'";
    const std::vector<ShapeExpr> &dims = inputDims[index];
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!dims[d].isSymbol())
        continue;
      size_t slot = dims[d].symbolSlot();
      int64_t value = array.shape[d];
      if (fromDim[slot] && symbolValues[slot] != value)
        return error(
            label + " dimension " + std::to_string(d) + ": " + path + " has " +
            symbolNames[slot] + " = " + std::to_string(value) + ", but --dim " +
            symbolNames[slot] + "=" + std::to_string(symbolValues[slot]));
      if (!known[slot]) {
        symbolValues[slot] = value;
        known[slot] = true;
      }
    }
    data[index] = std::move(array);
    fromFile[index] = true;
  }

  // Random inputs, shaped by the symbol values.
  for (size_t i = 0; i < numInputs; ++i) {
    if (fromFile[i])
      continue;
    NpyArray &array = data[i];
    parseDType(artifact.inputDType(i), array.dtype);
    uint64_t count;
    if (!evaluateInputShape(artifact.inputName(i), inputDims[i], symbolValues,
                            &known, symbolNames, array.shape, count, message))
      return error(message);
    Random random = inputRandom(options.seed, i);
    fillRandom(array.dtype, static_cast<size_t>(count), random, array.data);
  }

  for (size_t i = 0; i < numInputs; ++i)
    if (session.setInput(i, data[i].data.data(), data[i].shape) != DYNCC_OK)
      return error(dyncc::lastError());
  if (session.run() != DYNCC_OK)
    return error(dyncc::lastError());
  // Warm runs, timed one by one: the same inputs and shapes.
  std::vector<double> times, deviceTimes;
  bool onGpu = options.device != "cpu";
  for (int64_t r = 0; r < options.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (session.run() != DYNCC_OK)
      return error(dyncc::lastError());
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
    double milliseconds = 0;
    if (onGpu) {
      if (session.deviceTime(milliseconds) != DYNCC_OK)
        return error(dyncc::lastError());
      deviceTimes.push_back(milliseconds);
    }
  }
  // Outputs on a GPU are copied to the host here, once.
  for (size_t o = 0; o < artifact.numOutputs(); ++o)
    if (session.outputSize(o) != 0 && !session.outputData(o))
      return error(dyncc::lastError());

  std::vector<std::string> written;
  if (!options.outputDir.empty()) {
    if (!makeDirectories(options.outputDir, message))
      return error(message);
    std::set<std::string> used;
    for (size_t o = 0; o < artifact.numOutputs(); ++o) {
      std::string base = sanitizeOutputName(artifact.outputName(o));
      std::string fileName = base;
      for (int n = 2; used.count(fileName); ++n)
        fileName = base + "_" + std::to_string(n);
      used.insert(fileName);
      std::string path = options.outputDir + "/" + fileName + ".npy";
      DType type;
      parseDType(artifact.outputDType(o), type);
      if (!writeNpy(path, type, session.outputShape(o), session.outputData(o),
                    session.outputSize(o), message))
        return error(message);
      written.push_back(path);
    }
  }

  if (options.quiet)
    return 0;
  if (onGpu || options.verbose)
    std::printf("device: %s\n", session.device().c_str());
  if (!onGpu && options.verbose && !artifact.hostIsa().empty())
    std::printf("host code: %s\n", artifact.hostIsa().c_str());
  for (size_t s = 0; s < numSymbols; ++s) {
    int64_t value = 0;
    session.symbolValue(s, value);
    std::printf("%s = %lld\n", symbolNames[s].c_str(),
                static_cast<long long>(value));
  }
  for (size_t g = 0; g < artifact.numGroups(); ++g) {
    std::string variant = session.groupVariant(g);
    std::printf("group %s (%s) -> %s\n", artifact.groupName(g).c_str(),
                artifact.groupKind(g).c_str(),
                variant.empty() ? "not run" : ("kernel " + variant).c_str());
    if (options.verbose && !variant.empty())
      std::printf("  %s\n", session.groupReason(g).c_str());
  }
  for (size_t o = 0; o < artifact.numOutputs(); ++o) {
    DType type;
    parseDType(artifact.outputDType(o), type);
    std::vector<int64_t> shape = session.outputShape(o);
    size_t count = session.outputSize(o) / dtypeSize(type);
    std::string line =
        artifact.outputName(o) + ": " + dtypeName(type) + formatShape(shape);
    if (count == 0) {
      line += " (empty)";
    } else {
      const void *values = session.outputData(o);
      double sum = 0, lo = std::numeric_limits<double>::infinity(),
             hi = -std::numeric_limits<double>::infinity();
      bool sawNan = false;
      for (size_t i = 0; i < count; ++i) {
        double value = loadElementAsDouble(type, values, i);
        if (std::isnan(value)) {
          sawNan = true;
          continue;
        }
        sum += value;
        lo = value < lo ? value : lo;
        hi = value > hi ? value : hi;
      }
      double mean = sawNan ? std::nan("") : sum / static_cast<double>(count);
      line += " mean=" + formatNumber(mean) + " min=" + formatNumber(lo) +
              " max=" + formatNumber(hi);
      if (sawNan)
        line += " (contains NaN)";
    }
    std::printf("%s\n", line.c_str());
  }
  auto report = [&](const char *what, std::vector<double> &values) {
    if (values.empty())
      return;
    std::sort(values.begin(), values.end());
    size_t n = values.size();
    double median =
        n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    std::printf("%s: median %s ms, min %s ms, max %s ms over %zu runs on "
                "%s\n",
                what, formatNumber(median).c_str(),
                formatNumber(values.front()).c_str(),
                formatNumber(values.back()).c_str(), n,
                options.device.c_str());
  };
  report("time", times);
  // Between events recorded around the steps on the device's stream.
  report("device time", deviceTimes);
  for (const std::string &path : written)
    std::printf("wrote %s\n", path.c_str());
  std::fflush(stdout);
  return 0;
}

int Tool::main(const std::vector<std::string> &args) {
  Options options;
  if (int status = parseArgs(args, options))
    return status;
  if (options.help) {
    printHelp();
    return 0;
  }
  return run(options);
}

} // namespace

std::string dyncc::runtime::sanitizeOutputName(const std::string &name) {
  if (name.empty() || name == "." || name == "..")
    return "_";
  std::string result = name;
  for (char &c : result) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!ok)
      c = '_';
  }
  return result;
}

int dyncc::runtime::runToolMain(const std::vector<std::string> &args,
                                const char *toolName) {
  Tool tool(toolName ? toolName : "dyncc-run");
  return tool.main(args);
}
