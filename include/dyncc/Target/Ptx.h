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

namespace dyncc {

/// The NVVM target features for a chip (`sm_80`, `sm_90a`, ...).
std::string getNvvmFeatures(llvm::StringRef chip);

/// Collects the PTX of every `gpu.binary` object by chip. Fails when a
/// binary holds something else than PTX text.
mlir::FailureOr<std::map<std::string, std::string>>
collectPtx(mlir::ModuleOp module);

} // namespace dyncc

#endif // DYNCC_TARGET_PTX_H
