//===- Sym.h - Symbolic shape dialect ---------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_SYM_IR_SYM_H
#define DYNCC_DIALECT_SYM_IR_SYM_H

#include "dyncc/Support/DimExpr.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TensorEncoding.h"

#include "dyncc/Dialect/Sym/IR/SymDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dyncc/Dialect/Sym/IR/SymAttrs.h.inc"

#define GET_OP_CLASSES
#include "dyncc/Dialect/Sym/IR/SymOps.h.inc"

namespace dyncc::sym {

/// A unit attribute on a `sym.symbol` whose range the user gave (`dyncc
/// compile --dim`): shape inference notes where the model fixes it.
constexpr llvm::StringLiteral getDimFlagAttrName() { return "dyncc.dim_flag"; }

/// Returns the symbolic shape of `type`: the `#sym.shape` encoding when there
/// is one, else the static sizes as constants; std::nullopt when the type is
/// not ranked or has an anonymous dynamic dimension.
std::optional<llvm::SmallVector<DimExpr>> getSymbolicShape(mlir::Type type);

/// Returns `type` (a ranked tensor) with the given symbolic shape: static
/// sizes where the expression is constant, `?` elsewhere, and a `#sym.shape`
/// encoding unless every dimension is static.
mlir::RankedTensorType withSymbolicShape(mlir::RankedTensorType type,
                                         llvm::ArrayRef<DimExpr> shape);

/// Returns `type` without its `#sym.shape` encoding.
mlir::Type stripSymbolicShape(mlir::Type type);

/// Groups two shapes of equal element count into matching runs of
/// dimensions: run i of `in` has the same product as run i of `out`, so a
/// row-major reshape between them collapses and expands runs (a view that
/// keeps every run's elements apart). Fails when the products cannot be
/// matched symbolically; the reshape then mixes the runs, and only a
/// collapse of the whole tensor expresses it.
mlir::LogicalResult
matchReshape(llvm::ArrayRef<DimExpr> in, llvm::ArrayRef<DimExpr> out,
             llvm::SmallVectorImpl<llvm::SmallVector<int64_t, 2>> &inGroups,
             llvm::SmallVectorImpl<llvm::SmallVector<int64_t, 2>> &outGroups);

} // namespace dyncc::sym

#endif // DYNCC_DIALECT_SYM_IR_SYM_H
