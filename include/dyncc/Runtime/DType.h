//===- DType.h - Element types of run-time buffers --------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The element types a manifest may name (`f16 bf16 f32 f64 i8 ... bool`),
// their sizes, and the half-precision conversions the run tool needs to make
// random inputs and print statistics.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_DTYPE_H
#define DYNCC_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dyncc::runtime {

/// An element type, in the order of the manifest's dtype list.
enum class DType : uint8_t {
  F16,
  BF16,
  F32,
  F64,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  Bool
};

/// The number of DType values.
inline constexpr size_t kNumDTypes = 13;

/// The manifest spelling of `type` ("f32", "bool", ...).
const char *dtypeName(DType type);

/// The size of one element of `type` in bytes.
size_t dtypeSize(DType type);

/// Parses a manifest dtype name; returns false on an unknown name.
bool parseDType(std::string_view name, DType &type);

/// True for f16, bf16, f32 and f64.
bool isFloatDType(DType type);

/// True for the signed integer types i8 ... i64.
bool isSignedIntDType(DType type);

/// IEEE binary16 bits to float.
float halfToFloat(uint16_t bits);

/// Float to IEEE binary16 bits, rounding to nearest even.
uint16_t floatToHalf(float value);

/// bfloat16 bits to float.
float bfloat16ToFloat(uint16_t bits);

/// Float to bfloat16 bits, rounding to nearest even (NaN stays NaN).
uint16_t floatToBFloat16(float value);

/// Reads element `index` of a contiguous array of `type` as a double.
double loadElementAsDouble(DType type, const void *data, size_t index);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_DTYPE_H
