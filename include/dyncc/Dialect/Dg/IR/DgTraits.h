//===- DgTraits.h - Traits of dg ops ----------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_IR_DGTRAITS_H
#define DYNCC_DIALECT_DG_IR_DGTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace dyncc::dg {

/// Result element i depends only on operand elements at index i (after
/// broadcasting): the fusion passes treat these ops as elementwise.
template <typename ConcreteType>
class Elementwise
    : public mlir::OpTrait::TraitBase<ConcreteType, Elementwise> {};

/// Checks that the static sizes of `op`'s operands broadcast against each
/// other into its single result, and that the value operands (the last two)
/// have one element type.
mlir::LogicalResult verifyBroadcastingOp(mlir::Operation *op);

/// Operands broadcast against each other the numpy way.
template <typename ConcreteType>
class Broadcasting
    : public mlir::OpTrait::TraitBase<ConcreteType, Broadcasting> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyBroadcastingOp(op);
  }
};

} // namespace dyncc::dg

#endif // DYNCC_DIALECT_DG_IR_DGTRAITS_H
