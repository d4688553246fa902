//===- Ptx.h - PTX from the NVVM-lowered kernel module ----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TARGET_PTX_H
#define DYNCC_TARGET_PTX_H

#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <string>
#include <vector>

namespace dyncc {

/// The NVVM target features for a chip (`sm_80`, `sm_90a`, ...).
std::string getNvvmFeatures(llvm::StringRef chip);

/// The most shared memory one block of a chip may use, in bytes, once the
/// kernel opts in to more than the 48 KB of static shared memory (the CUDA
/// C++ Programming Guide, "Technical Specifications per Compute
/// Capability": 163 KB on 8.0, 99 KB on 8.6, 227 KB on 9.0).
int64_t getMaxSharedBytesPerBlock(llvm::StringRef chip);

/// The shared memory per block tiling may promote to for a compile to
/// `targets`: the least any of its GPU targets gives a block that opts in,
/// less the 16 bytes of static shared memory the dynamic-shared symbol
/// takes. A CPU-only compile takes the default GPU targets' (sm_80, sm_90),
/// so its kernels are the tiles a default GPU compile runs.
int64_t getSharedBytesBudget(llvm::ArrayRef<std::string> targets);

/// The chip whose PTX the code for `chip` is assembled from, in a compile
/// to GPU targets `chips`. PTX is forward compatible: a module for
/// `.target sm_80` is valid on sm_86 and sm_90, where ptxas (or the
/// driver) compiles it to that chip's code. The kernels are lowered once for
/// every chip of the compile, so they use nothing the oldest one lacks, and
/// NVPTX's code for them differs between chips in the `.target` line only.
/// Every chip therefore takes the PTX of the oldest chip of the compile, as
/// nvcc's `-arch=compute_80 -code=sm_80,sm_90` does, and the PTX is
/// translated once. An arch-specific chip (`sm_90a`) runs only on itself and
/// takes its own PTX. Chips that are not `sm_<digits>[a]` take their own.
std::string getPtxChip(llvm::StringRef chip, llvm::ArrayRef<std::string> chips);

/// The chips of `chips` whose PTX is translated: each chip's getPtxChip,
/// once, in the order of `chips`.
std::vector<std::string> getPtxChips(llvm::ArrayRef<std::string> chips);

/// Collects the PTX of every `gpu.binary` object by chip. Fails when a
/// binary holds something else than PTX text.
mlir::FailureOr<std::map<std::string, std::string>>
collectPtx(mlir::ModuleOp module);

} // namespace dyncc

#endif // DYNCC_TARGET_PTX_H
