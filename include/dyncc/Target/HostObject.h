//===- HostObject.h - Host CPU shared objects from LLVM dialect -*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Turns the CPU-lowered kernel module (LLVM dialect, one function per kernel
// taking the expanded memref descriptors, the symbol values and the block ids
// x, y, z) into a position-independent shared object for the artifact. Each
// kernel K gets an exported entry point with the run-time's uniform ABI:
//
//   void K_cpu(void **params, int64_t bx, int64_t by, int64_t bz);
//
// where params[i] points at the i-th flattened parameter, the same array a
// CUDA launch passes. The object needs only libc and libm.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TARGET_HOSTOBJECT_H
#define DYNCC_TARGET_HOSTOBJECT_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace dyncc {

/// The exported entry point name of kernel `kernel`.
std::string getHostEntryName(llvm::StringRef kernel);

/// The instruction-set level of the portable host code: "x86-64-v2"
/// (SSE4.2) where the compiler's default target is x86-64, else
/// "generic" (dyncc/Runtime/HostIsa.h).
std::string getPortableHostIsa();

/// Emits a shared object for `kernels` of `module` per level of `isas`
/// (LLVM CPU names: "x86-64-v2", "x86-64-v3", "x86-64-v4", "generic"),
/// in their order: the same kernels and entry points, each optimized and
/// compiled for its level. On failure returns std::nullopt with `error`
/// set.
std::optional<std::vector<std::string>>
emitHostSharedObjects(mlir::ModuleOp module,
                      const std::vector<std::string> &kernels,
                      const std::vector<std::string> &isas, std::string &error);

} // namespace dyncc

#endif // DYNCC_TARGET_HOSTOBJECT_H
