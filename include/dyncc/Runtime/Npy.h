//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The .npy format (versions 1.0, 2.0 and 3.0), restricted to what the run
// tool exchanges: little-endian (or byte-order-free) C-order arrays of the
// run-time's element types. NumPy has no bfloat16, so bf16 data is written
// as '<u2' (the raw bits) and a '<u2' file is accepted for a bf16 input.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_NPY_H
#define DYNCC_RUNTIME_NPY_H

#include "dyncc/Runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dyncc::runtime {

/// A decoded .npy array.
struct NpyArray {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// The .npy descr of `type` ("<f4", "|b1", bf16 -> "<u2").
const char *npyDescr(DType type);

/// Decodes a whole .npy file held in memory. `name` names it in errors
/// ("NAME: what is wrong").
bool decodeNpy(const void *bytes, size_t size, const std::string &name,
               NpyArray &out, std::string &error);

/// Reads and decodes `path`.
bool readNpy(const std::string &path, NpyArray &out, std::string &error);

/// Encodes an array as a version 1.0 .npy (2.0 if the header needs it).
std::string encodeNpy(DType type, const std::vector<int64_t> &shape,
                      const void *data, size_t bytes);

/// Writes an array to `path`.
bool writeNpy(const std::string &path, DType type,
              const std::vector<int64_t> &shape, const void *data, size_t bytes,
              std::string &error);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_NPY_H
