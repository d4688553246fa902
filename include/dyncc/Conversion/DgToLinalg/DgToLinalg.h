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

/// Lowers one `dg` op to linalg on plain tensors. `operands` are the already
/// lowered operands and `init` the destination tensor of the result (its
/// type is the op's result type without the encoding).
mlir::FailureOr<mlir::Value> lowerDgOpToLinalg(mlir::OpBuilder &builder,
                                               mlir::Operation *op,
                                               mlir::ValueRange operands,
                                               mlir::Value init);

} // namespace dyncc

#endif // DYNCC_CONVERSION_DGTOLINALG_DGTOLINALG_H
