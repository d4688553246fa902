//===- Ptxas.h - Assemble PTX with ptxas, read its resource report -*- C++
//-*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Where the CUDA toolkit is present, the PTX of each GPU target is assembled
// to a cubin by ptxas, and ptxas' report (`-v`) gives each kernel's registers,
// static shared memory, stack frame and spills. The artifact records them:
// the tile search drops variants that spill or exceed the limits, and the
// run-time computes occupancy from them.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TARGET_PTXAS_H
#define DYNCC_TARGET_PTXAS_H

#include "dyncc/Runtime/KernelResources.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace dyncc {

using runtime::KernelResources;

/// The CUDA toolkit's root: $CUDA_HOME if it is set, else the first of
/// $CUDA_ROOT, $CUDA_PATH and /usr/local/cuda, provided it holds libdevice
/// (nvvm/libdevice/libdevice.10.bc); nullopt otherwise.
std::optional<std::string> findCudaToolkit();

/// The ptxas to use: bin/ptxas of the same candidate roots as
/// findCudaToolkit, then (unless $CUDA_HOME is set) `ptxas` on PATH;
/// nullopt if there is none.
std::optional<std::string> findPtxas();

/// The first libdevice function (`__nv_*`) that `ptx` declares `.extern`,
/// i.e. calls without a definition: libdevice was not linked.
std::optional<std::string> findUnresolvedLibdeviceCall(llvm::StringRef ptx);

/// Parses the report of `ptxas -v` for architecture `arch` into resources
/// per entry function. Returns false and sets `error` on a report that is
/// not one (no entry function, or a number missing).
bool parsePtxasReport(llvm::StringRef report, llvm::StringRef arch,
                      std::map<std::string, KernelResources> &resources,
                      std::string &error);

/// Assembles `ptx` for `arch` with `ptxas`, into `cubin`, with its report
/// parsed into `resources`. On failure, `error` is one line naming ptxas'
/// first error.
bool assemblePtx(llvm::StringRef ptxas, llvm::StringRef arch,
                 llvm::StringRef ptx, std::string &cubin,
                 std::map<std::string, KernelResources> &resources,
                 std::string &error);

} // namespace dyncc

#endif // DYNCC_TARGET_PTXAS_H
