//===- NpyFuzzer.cpp - Fuzz the .npy decoder --------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Decodes the input; whatever decodes must survive an encode/decode round
// trip unchanged.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Npy.h"

#include <cstdint>
#include <string>

using namespace dyncc::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  NpyArray array;
  std::string error;
  if (!decodeNpy(data, size, "fuzz.npy", array, error)) {
    if (error.empty() || error.find('\n') != std::string::npos)
      __builtin_trap();
    return 0;
  }
  std::string encoded =
      encodeNpy(array.dtype, array.shape, array.data.data(), array.data.size());
  NpyArray again;
  if (!decodeNpy(encoded.data(), encoded.size(), "again.npy", again, error))
    __builtin_trap();
  if (again.dtype != array.dtype || again.shape != array.shape ||
      again.data != array.data)
    __builtin_trap();
  return 0;
}
