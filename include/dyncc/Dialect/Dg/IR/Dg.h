//===- Dg.h - Dyncc graph dialect -------------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_IR_DG_H
#define DYNCC_DIALECT_DG_IR_DG_H

#include "dyncc/Analysis/ShapeConstraints.h"
#include "dyncc/Dialect/Dg/IR/DgTraits.h"
#include "dyncc/Dialect/Dg/IR/ShapeInference.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dyncc/Dialect/Dg/IR/DgDialect.h.inc"
#include "dyncc/Dialect/Dg/IR/DgEnums.h.inc"
#include "dyncc/Dialect/Dg/IR/DgInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dyncc/Dialect/Dg/IR/DgOps.h.inc"

namespace dyncc::dg {

/// Declares the facts (range, divisor) of every `sym.symbol` in `module` to
/// `constraints`, each with its source for the messages.
void declareSymbolFacts(mlir::ModuleOp module, ShapeConstraints &constraints);

/// The padding SAME puts before and after a spatial dimension of `in`
/// elements whose `out` windows, `kernel` taps `dilation` apart, start
/// `stride` apart: what the windows reach beyond the input, its odd
/// element after it for SAME_UPPER (`upper`) and before it for SAME_LOWER.
/// The conv's lowering and dyncc-conv-im2col place SAME's padding by it.
std::pair<DimExpr, DimExpr>
getSamePadding(const DimExpr &in, const DimExpr &out, const DimExpr &kernel,
               int64_t stride, int64_t dilation, bool upper);

} // namespace dyncc::dg

#endif // DYNCC_DIALECT_DG_IR_DG_H
