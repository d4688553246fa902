//===- Passes.h - Dg transformation passes ----------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_TRANSFORMS_PASSES_H
#define DYNCC_DIALECT_DG_TRANSFORMS_PASSES_H

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace dyncc::dg {

#define GEN_PASS_DECL
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"

} // namespace dyncc::dg

#endif // DYNCC_DIALECT_DG_TRANSFORMS_PASSES_H
