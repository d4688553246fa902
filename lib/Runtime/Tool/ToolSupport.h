//===- ToolSupport.h - Helpers of the run and bench commands ----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Number parsing and formatting, and the deterministic random inputs, that
// `dyncc run` (RunTool.cpp) and `dyncc bench` (BenchTool.cpp) share.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_TOOL_TOOLSUPPORT_H
#define DYNCC_LIB_RUNTIME_TOOL_TOOLSUPPORT_H

#include "dyncc/Runtime/DType.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace dyncc::runtime::tool {

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

} // namespace dyncc::runtime::tool

#endif // DYNCC_LIB_RUNTIME_TOOL_TOOLSUPPORT_H
