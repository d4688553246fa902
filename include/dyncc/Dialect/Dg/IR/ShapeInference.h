//===- ShapeInference.h - Context of the dg shape functions -----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_IR_SHAPEINFERENCE_H
#define DYNCC_DIALECT_DG_IR_SHAPEINFERENCE_H

#include "dyncc/Analysis/ShapeConstraints.h"

#include <functional>
#include <optional>

namespace dyncc::dg {

/// The symbolic contents of a small integer tensor (rank 0 or 1), one
/// expression per element, row-major: the value of a shape sub-graph.
using SymValue = SymShape;

/// What a shape function sees and produces besides its result shapes.
struct ShapeInferenceContext {
  /// The symbolic shape of each operand.
  llvm::ArrayRef<SymShape> operandShapes;
  /// The symbolic contents of each operand, when known (small integer
  /// tensors computed from shapes and constants).
  llvm::ArrayRef<std::optional<SymValue>> operandValues;
  /// The constraint store: equalities the op requires.
  ShapeConstraints &constraints;
  /// Returns a fresh symbol for a size that depends on data, bound at run
  /// time; `hint` names what it measures.
  std::function<DimExpr(llvm::StringRef hint)> freshSymbol;
  /// Filled by ops that compute shape values: one entry per result.
  llvm::SmallVector<std::optional<SymValue>> resultValues;
  /// Filled by ops whose sizes are read from an operand's data: the
  /// operand's index and its elements' expressions (fresh symbols). The
  /// run-time reads the operand back and binds them (`sym.bind`).
  std::optional<std::pair<unsigned, SymValue>> dataBinding;

  /// The contents of operand `i` if known and all constant.
  std::optional<llvm::SmallVector<int64_t>> getConstantValues(unsigned i) const;
};

/// The most elements a tensor may have for its contents to be tracked.
constexpr int64_t kMaxTrackedValues = 64;

} // namespace dyncc::dg

#endif // DYNCC_DIALECT_DG_IR_SHAPEINFERENCE_H
