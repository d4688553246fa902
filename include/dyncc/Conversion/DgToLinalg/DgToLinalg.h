//===- DgToLinalg.h - Lowering dg ops to linalg on tensors ------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers the body of a fusion group to upstream dialects (linalg, tensor,
// arith) on plain tensors, in destination-passing style, with the symbolic
// dimensions materialized from the kernel's `index` arguments.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_CONVERSION_DGTOLINALG_DGTOLINALG_H
#define DYNCC_CONVERSION_DGTOLINALG_DGTOLINALG_H

#include "dyncc/Support/DimExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace dyncc {

/// Materializes dimension expressions as `index` values, given one value per
/// symbol, memoized per expression.
class DimMaterializer {
public:
  DimMaterializer(mlir::OpBuilder &builder, mlir::Location loc,
                  llvm::StringMap<mlir::Value> symbols)
      : builder(builder), loc(loc), symbols(std::move(symbols)) {}

  /// Returns the value of `expr`; fails when a symbol has no value.
  mlir::FailureOr<mlir::Value> get(const DimExpr &expr);

  /// Returns the sizes of a tensor of the given symbolic shape as mixed
  /// static/dynamic sizes (for tensor.empty and slices).
  mlir::FailureOr<llvm::SmallVector<mlir::OpFoldResult>>
  getMixedSizes(llvm::ArrayRef<DimExpr> shape);

private:
  mlir::OpBuilder &builder;
  mlir::Location loc;
  llvm::StringMap<mlir::Value> symbols;
  std::map<std::string, mlir::Value> cache;
};

/// The type a kernel function uses for a graph value: the symbolic-shape
/// encoding dropped and integer elements made signless (arith and linalg work
/// on signless integers; the ops that care read the sign from the dg types).
mlir::Type getKernelType(mlir::Type type);

/// Returns the destination tensor of result `index` of the op being lowered,
/// made on first request. Ops that compute (linalg ops, fills, inserts) write
/// into it; view-like ops (reshapes, slices, splits) do not ask for one.
using DestinationFn = llvm::function_ref<mlir::Value(unsigned index)>;

/// Lowers one `dg` op to upstream dialects (linalg, tensor, arith, math, scf)
/// on plain tensors. `operands` are the already lowered operands; `dims`
/// materializes symbolic sizes at the builder's insertion point. Returns one
/// value per result of `op`.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
lowerDgOpToLinalg(mlir::OpBuilder &builder, mlir::Operation *op,
                  mlir::ValueRange operands, DimMaterializer &dims,
                  DestinationFn getDestination);

} // namespace dyncc

#endif // DYNCC_CONVERSION_DGTOLINALG_DGTOLINALG_H
