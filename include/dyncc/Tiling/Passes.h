//===- Passes.h - Tiling passes ---------------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_PASSES_H
#define DYNCC_TILING_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace dyncc {

#define GEN_PASS_DECL
#include "dyncc/Tiling/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyncc/Tiling/Passes.h.inc"

} // namespace dyncc

#endif // DYNCC_TILING_PASSES_H
