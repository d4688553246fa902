//===- DType.cpp - Element types of run-time buffers ------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/DType.h"

#include <cstring>

using namespace dyncc::runtime;

namespace {
struct DTypeInfo {
  const char *name;
  size_t size;
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {"f16", 2}, {"bf16", 2}, {"f32", 4}, {"f64", 8}, {"i8", 1},
    {"i16", 2}, {"i32", 4},  {"i64", 8}, {"u8", 1},  {"u16", 2},
    {"u32", 4}, {"u64", 8},  {"bool", 1}};

template <typename T> T loadAt(const void *data, size_t index) {
  T value;
  std::memcpy(&value,
              static_cast<const unsigned char *>(data) + index * sizeof(T),
              sizeof(T));
  return value;
}
} // namespace

const char *dyncc::runtime::dtypeName(DType type) {
  return kInfo[static_cast<size_t>(type)].name;
}

size_t dyncc::runtime::dtypeSize(DType type) {
  return kInfo[static_cast<size_t>(type)].size;
}

bool dyncc::runtime::parseDType(std::string_view name, DType &type) {
  for (size_t i = 0; i < kNumDTypes; ++i) {
    if (name == kInfo[i].name) {
      type = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

bool dyncc::runtime::isFloatDType(DType type) {
  return type == DType::F16 || type == DType::BF16 || type == DType::F32 ||
         type == DType::F64;
}

bool dyncc::runtime::isSignedIntDType(DType type) {
  return type == DType::I8 || type == DType::I16 || type == DType::I32 ||
         type == DType::I64;
}

float dyncc::runtime::halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t result;
  if (exponent == 0x1f) {
    result = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    result = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    result = sign;
  } else {
    // Subnormal: normalize.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ffu;
    result =
        sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &result, sizeof(value));
  return value;
}

uint16_t dyncc::runtime::floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) // Inf or NaN.
    return sign | 0x7c00u | (mantissa ? 0x200u : 0u);
  int32_t halfExponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (halfExponent >= 0x1f)
    return sign | 0x7c00u;
  if (halfExponent <= 0) {
    if (halfExponent < -10)
      return sign;
    mantissa |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - halfExponent);
    uint32_t halfMantissa = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (halfMantissa & 1u)))
      ++halfMantissa;
    return static_cast<uint16_t>(sign | halfMantissa);
  }
  uint32_t half =
      (static_cast<uint32_t>(halfExponent) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; // May carry into the exponent, which is the right result.
  return static_cast<uint16_t>(sign | half);
}

float dyncc::runtime::bfloat16ToFloat(uint16_t bits) {
  uint32_t result = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &result, sizeof(value));
  return value;
}

uint16_t dyncc::runtime::floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x7fffffu) != 0)
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

double dyncc::runtime::loadElementAsDouble(DType type, const void *data,
                                           size_t index) {
  switch (type) {
  case DType::F16:
    return halfToFloat(loadAt<uint16_t>(data, index));
  case DType::BF16:
    return bfloat16ToFloat(loadAt<uint16_t>(data, index));
  case DType::F32:
    return loadAt<float>(data, index);
  case DType::F64:
    return loadAt<double>(data, index);
  case DType::I8:
    return loadAt<int8_t>(data, index);
  case DType::I16:
    return loadAt<int16_t>(data, index);
  case DType::I32:
    return loadAt<int32_t>(data, index);
  case DType::I64:
    return static_cast<double>(loadAt<int64_t>(data, index));
  case DType::U8:
    return loadAt<uint8_t>(data, index);
  case DType::U16:
    return loadAt<uint16_t>(data, index);
  case DType::U32:
    return loadAt<uint32_t>(data, index);
  case DType::U64:
    return static_cast<double>(loadAt<uint64_t>(data, index));
  case DType::Bool:
    return loadAt<uint8_t>(data, index) != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}
