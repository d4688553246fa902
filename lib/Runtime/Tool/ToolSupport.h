//===- ToolSupport.h - Helpers of the run and bench commands ----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What `dyncc run` (RunTool.cpp), `dyncc bench` (BenchTool.cpp) and
// `dyncc tune` (TuneTool.cpp) share: reading options, number parsing and
// formatting, the inputs' shapes, the deterministic random inputs, and
// tune's held-out bindings.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_TOOL_TOOLSUPPORT_H
#define DYNCC_LIB_RUNTIME_TOOL_TOOLSUPPORT_H

#include "dyncc/Runtime/DType.h"
#include "dyncc/Runtime/Npy.h"
#include "dyncc/Runtime/Runtime.hpp"
#include "dyncc/Runtime/ShapeExpr.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace dyncc::runtime::tool {

/// Reads option `args[i]`: "--opt=value", or "--opt" with the value in the
/// next argument (advancing `i`). False with `problem` set to the usage
/// error if the option is not one of `known` or has no value.
inline bool readOption(const std::vector<std::string> &args, size_t &i,
                       std::initializer_list<const char *> known,
                       std::string &option, std::string &value,
                       std::string &problem) {
  const std::string &arg = args[i];
  option = arg;
  value.clear();
  size_t equals = arg.find('=');
  bool inlineValue = arg.rfind("--", 0) == 0 && equals != std::string::npos;
  if (inlineValue) {
    option = arg.substr(0, equals);
    value = arg.substr(equals + 1);
  }
  if (std::none_of(known.begin(), known.end(),
                   [&](const char *name) { return option == name; })) {
    problem = "unknown option '" + option + "'";
    return false;
  }
  if (!inlineValue) {
    if (i + 1 >= args.size()) {
      problem = "option '" + option + "' needs a value";
      return false;
    }
    value = args[++i];
  }
  return true;
}

/// "a, b, c", or "none".
inline std::string listOrNone(const std::vector<std::string> &names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i)
    list += (i ? ", " : "") + names[i];
  return list.empty() ? "none" : list;
}

/// The symbol names of `artifact`, in slot order.
inline std::vector<std::string> symbolNames(const dyncc::Artifact &artifact) {
  std::vector<std::string> names;
  for (size_t s = 0; s < artifact.numSymbols(); ++s)
    names.push_back(artifact.symbolName(s));
  return names;
}

/// Parses every input's dimension expressions over `names`; false with
/// `error` set ("input 'X': ...") if one does not parse.
inline bool parseInputDims(const dyncc::Artifact &artifact,
                           const std::vector<std::string> &names,
                           std::vector<std::vector<ShapeExpr>> &dims,
                           std::string &error) {
  dims.assign(artifact.numInputs(), {});
  for (size_t i = 0; i < artifact.numInputs(); ++i) {
    for (const std::string &text : artifact.inputDims(i)) {
      ShapeExpr expr;
      std::string message;
      if (!ShapeExpr::parse(text, names, expr, message)) {
        error = "input '" + artifact.inputName(i) + "': " + message;
        return false;
      }
      dims[i].push_back(std::move(expr));
    }
  }
  return true;
}

/// The shape of input `name`, its dimensions `dims` evaluated at `symbols`,
/// and its element count. With `known`, a dimension reading a symbol that
/// is not known is an error naming it (`names`). False with `error` set
/// when a dimension cannot be evaluated or is negative, or the input has
/// more than 2^40 elements.
inline bool evaluateInputShape(const std::string &name,
                               const std::vector<ShapeExpr> &dims,
                               const std::vector<int64_t> &symbols,
                               const std::vector<bool> *known,
                               const std::vector<std::string> &names,
                               std::vector<int64_t> &shape, uint64_t &count,
                               std::string &error) {
  shape.clear();
  count = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    const ShapeExpr &expr = dims[d];
    if (known) {
      std::vector<size_t> needed;
      expr.collectSymbols(needed);
      for (size_t slot : needed) {
        if (!(*known)[slot]) {
          error = "no value for symbol '" + names[slot] + "': pass --dim " +
                  names[slot] + "=VALUE or --input";
          return false;
        }
      }
    }
    int64_t value;
    ShapeExpr::EvalStatus status = expr.evaluate(symbols.data(), value);
    std::string label = "input '" + name + "' dimension " + std::to_string(d);
    if (status != ShapeExpr::EvalStatus::Ok) {
      error = label + ": cannot evaluate '" + expr.text() +
              "': " + ShapeExpr::describe(status);
      return false;
    }
    if (value < 0) {
      error = label + ": '" + expr.text() + "' = " + std::to_string(value) +
              " is negative";
      return false;
    }
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(value), &count) ||
        count > (uint64_t(1) << 40)) {
      error = "input '" + name + "' is too large";
      return false;
    }
    shape.push_back(value);
  }
  return true;
}

inline bool parseInt64(const std::string &text, int64_t &value) {
  const char *first = text.data();
  const char *last = first + text.size();
  auto result = std::from_chars(first, last, value);
  return !text.empty() && result.ec == std::errc() && result.ptr == last;
}

inline bool parseUInt64(const std::string &text, uint64_t &value) {
  const char *first = text.data();
  const char *last = first + text.size();
  auto result = std::from_chars(first, last, value);
  return !text.empty() && result.ec == std::errc() && result.ptr == last;
}

/// SplitMix64: small, fast and good enough for test data.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [-1, 1).
  float nextFloat() {
    return static_cast<float>(next() >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }

private:
  uint64_t state;
};

template <typename T>
inline void store(std::vector<uint8_t> &data, size_t index, T value) {
  std::memcpy(data.data() + index * sizeof(T), &value, sizeof(T));
}

/// The random source of input `input`'s data under `seed`.
inline Random inputRandom(uint64_t seed, size_t input) {
  return Random(seed * 0x2545f4914f6cdd1dull +
                0x9e3779b97f4a7c15ull * (input + 1));
}

inline void fillRandom(DType type, size_t count, Random &random,
                std::vector<uint8_t> &data) {
  data.assign(count * dtypeSize(type), 0);
  for (size_t i = 0; i < count; ++i) {
    switch (type) {
    case DType::F16:
      store<uint16_t>(data, i, floatToHalf(random.nextFloat()));
      break;
    case DType::BF16:
      store<uint16_t>(data, i, floatToBFloat16(random.nextFloat()));
      break;
    case DType::F32:
      store<float>(data, i, random.nextFloat());
      break;
    case DType::F64:
      store<double>(data, i, static_cast<double>(random.nextFloat()));
      break;
    case DType::Bool:
      store<uint8_t>(data, i, static_cast<uint8_t>(random.next() & 1));
      break;
    default: {
      // Integers in [0, 10).
      uint64_t value = random.next() % 10;
      size_t size = dtypeSize(type);
      std::memcpy(data.data() + i * size, &value, size); // Little-endian.
      break;
    }
    }
  }
}

inline std::string formatNumber(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

inline double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// `points` values from lo to hi, log-spaced, ends included, multiples of
/// `divisor`, each once.
inline std::vector<int64_t> sweepValues(int64_t lo, int64_t hi,
                                        int64_t points, int64_t divisor) {
  std::vector<int64_t> values;
  double a = std::log(static_cast<double>(std::max<int64_t>(lo, 1)));
  double b = std::log(static_cast<double>(std::max<int64_t>(hi, 1)));
  for (int64_t i = 0; i < points; ++i) {
    double t = points == 1 ? 1.0 : static_cast<double>(i) / (points - 1);
    int64_t value = std::llround(std::exp(a + (b - a) * t));
    value = std::clamp(value, lo, hi);
    value = (value + divisor - 1) / divisor * divisor;
    if (value > hi)
      value = hi / divisor * divisor;
    if (value >= lo && (values.empty() || values.back() != value))
      values.push_back(value);
  }
  return values;
}

/// Reads `--dim`'s NAME=LO:HI or NAME=VALUE (then lo == hi, `range`
/// false). False with `problem` set to the usage error.
inline bool parseDimRange(const std::string &value, std::string &name,
                          int64_t &lo, int64_t &hi, bool &range,
                          std::string &problem) {
  size_t split = value.find('=');
  if (split == std::string::npos || split == 0) {
    problem = "--dim expects NAME=LO:HI or NAME=VALUE, got '" + value + "'";
    return false;
  }
  name = value.substr(0, split);
  std::string rest = value.substr(split + 1);
  size_t colon = rest.find(':');
  range = colon != std::string::npos;
  bool ok = range ? parseInt64(rest.substr(0, colon), lo) &&
                        parseInt64(rest.substr(colon + 1), hi)
                  : parseInt64(rest, lo) && parseInt64(rest, hi);
  if (!ok || lo < 0 || hi < lo) {
    problem = "--dim " + name +
              ": expected VALUE or LO:HI with 0 <= LO <= HI, got '" + rest +
              "'";
    return false;
  }
  return true;
}

/// Binds every input of `session` to random data (per input, from
/// inputRandom(seed, i), into `data[i]`) of its shape at `symbols`. On
/// failure, `error` says why and the status is DYNCC_ERROR_SHAPE where a
/// shape cannot be evaluated, else the run-time's refusal of the input.
/// Adds `--input NAME=FILE.npy`'s `value` to `inputs`; false with
/// `problem` for a malformed value or a NAME given twice.
inline bool
addInputOption(const std::string &value,
               std::vector<std::pair<std::string, std::string>> &inputs,
               std::string &problem) {
  size_t split = value.find('=');
  if (split == std::string::npos || split == 0) {
    problem = "--input expects NAME=FILE.npy, got '" + value + "'";
    return false;
  }
  std::string key = value.substr(0, split);
  std::string path = value.substr(split + 1);
  if (path.empty()) {
    problem = "--input " + key + ": empty file name";
    return false;
  }
  for (const auto &known : inputs)
    if (known.first == key) {
      problem = "--input " + key + " given twice";
      return false;
    }
  inputs.emplace_back(key, path);
  return true;
}

/// Reads `path` as the data of input `inputName` (`--input NAME=FILE.npy`):
/// sets `index` to the input's and checks the dtype (bf16 also as u16 bits)
/// and the rank against the artifact's. False with `error` otherwise.
inline bool readInputNpy(const dyncc::Artifact &artifact,
                         const std::vector<std::vector<ShapeExpr>> &dims,
                         const std::string &inputName, const std::string &path,
                         size_t &index, NpyArray &array, std::string &error) {
  size_t numInputs = artifact.numInputs();
  index = 0;
  while (index < numInputs && artifact.inputName(index) != inputName)
    ++index;
  if (index == numInputs) {
    std::string list;
    for (size_t i = 0; i < numInputs; ++i)
      list += (i ? ", " : "") + artifact.inputName(i);
    error = "unknown input '" + inputName + "' in --input (inputs: " +
            (list.empty() ? "none" : list) + ")";
    return false;
  }
  if (!readNpy(path, array, error))
    return false;
  std::string label = "input '" + inputName + "'";
  DType expected;
  parseDType(artifact.inputDType(index), expected);
  bool bitsForBf16 = expected == DType::BF16 && array.dtype == DType::U16;
  if (array.dtype != expected && !bitsForBf16) {
    error = label + ": " + path + " has dtype " + dtypeName(array.dtype) +
            ", expected " + dtypeName(expected);
    return false;
  }
  if (array.shape.size() != dims[index].size()) {
    error = label + ": " + path + " has rank " +
            std::to_string(array.shape.size()) + ", expected rank " +
            std::to_string(dims[index].size());
    return false;
  }
  return true;
}

/// Binds random data (`seed`), shaped by `symbols`, to every input of
/// `session` but those `skip` marks (bound by the caller).
inline dyncc_status bindRandomInputs(dyncc::Session &session,
                             const dyncc::Artifact &artifact,
                             const std::vector<std::vector<ShapeExpr>> &dims,
                             const std::vector<DType> &types,
                             const std::vector<int64_t> &symbols,
                             const std::vector<std::string> &names,
                             uint64_t seed,
                             std::vector<std::vector<uint8_t>> &data,
                             std::string &error,
                             const std::vector<bool> *skip = nullptr) {
  for (size_t i = 0; i < artifact.numInputs(); ++i) {
    if (skip && (*skip)[i])
      continue;
    std::vector<int64_t> shape;
    uint64_t count;
    if (!evaluateInputShape(artifact.inputName(i), dims[i], symbols, nullptr,
                            names, shape, count, error))
      return DYNCC_ERROR_SHAPE;
    Random random = inputRandom(seed, i);
    fillRandom(types[i], static_cast<size_t>(count), random, data[i]);
    if (dyncc_status status = session.setInput(i, data[i].data(), shape)) {
      error = dyncc::lastError();
      return status;
    }
  }
  return DYNCC_OK;
}

/// The geometric midpoints of consecutive `values`, as multiples of
/// `divisor` strictly between them; `values` itself where there are none
/// (`dyncc tune`'s held-out bindings).
inline std::vector<int64_t> midpoints(const std::vector<int64_t> &values,
                                      int64_t divisor) {
  std::vector<int64_t> between;
  for (size_t i = 0; i + 1 < values.size(); ++i) {
    double lo = static_cast<double>(std::max<int64_t>(values[i], 1));
    double mid = std::sqrt(lo * static_cast<double>(values[i + 1]));
    int64_t value = std::llround(mid) / divisor * divisor;
    if (value <= values[i])
      value += divisor;
    if (value > values[i] && value < values[i + 1])
      between.push_back(value);
  }
  return between.empty() ? values : between;
}

} // namespace dyncc::runtime::tool

#endif // DYNCC_LIB_RUNTIME_TOOL_TOOLSUPPORT_H
