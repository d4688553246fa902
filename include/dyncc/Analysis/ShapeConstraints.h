//===- ShapeConstraints.h - Constraint store for symbolic shapes -*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Records what a program implies about its symbolic dimensions while shapes
// are propagated. An equality between a bare symbol and another expression
// becomes a substitution (the symbol is refined away everywhere); an equality
// between two constants that differ is a compile error naming the op; any
// other equality is kept and checked by the run-time after binding.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_ANALYSIS_SHAPECONSTRAINTS_H
#define DYNCC_ANALYSIS_SHAPECONSTRAINTS_H

#include "dyncc/Support/DimExpr.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <string>

namespace dyncc {

/// The symbolic shape of one tensor: one expression per dimension.
using SymShape = llvm::SmallVector<DimExpr, 4>;

/// An equality the compiler could not discharge, checked at run time.
struct DeferredEquality {
  DimExpr lhs;
  DimExpr rhs;
  std::string reason;
};

class ShapeConstraints {
public:
  /// Requires `lhs == rhs`. `op` is the op that implies it and `what` names
  /// the dimensions, for the error and the recorded reason.
  mlir::LogicalResult requireEqual(const DimExpr &lhs, const DimExpr &rhs,
                                   mlir::Operation *op,
                                   const llvm::Twine &what);

  /// Applies every substitution recorded so far.
  DimExpr resolve(const DimExpr &expr) const;
  SymShape resolve(llvm::ArrayRef<DimExpr> shape) const;

  /// Symbol -> expression it was refined to.
  const std::map<std::string, DimExpr> &getSubstitutions() const {
    return substitutions;
  }
  llvm::ArrayRef<DeferredEquality> getDeferred() const { return deferred; }

private:
  void addSubstitution(const std::string &name, const DimExpr &value);

  std::map<std::string, DimExpr> substitutions;
  llvm::SmallVector<DeferredEquality> deferred;
};

} // namespace dyncc

#endif // DYNCC_ANALYSIS_SHAPECONSTRAINTS_H
