//===- KernelResources.h - A GPU kernel's resources -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What ptxas reports per kernel entry: the compiler parses it
// (dyncc/Target/Ptxas.h), the manifest records it as
// `kernels[i].gpu.<arch>.resources`, and the run-time reads it back
// (dyncc/Runtime/Manifest.h). Plain data, no dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_KERNELRESOURCES_H
#define DYNCC_RUNTIME_KERNELRESOURCES_H

#include <cstdint>

namespace dyncc::runtime {

/// One kernel's resources as ptxas reports them.
struct KernelResources {
  int64_t registers = 0;
  int64_t barriers = 0;
  /// Static shared memory, bytes per block.
  int64_t sharedBytes = 0;
  /// Per-thread stack frame (local memory), bytes.
  int64_t stackBytes = 0;
  int64_t spillStoreBytes = 0;
  int64_t spillLoadBytes = 0;
};

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_KERNELRESOURCES_H
