//===- FusionUtils.h - Building fusion groups -------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_TRANSFORMS_FUSIONUTILS_H
#define DYNCC_DIALECT_DG_TRANSFORMS_FUSIONUTILS_H

#include "dyncc/Dialect/Dg/IR/Dg.h"

#include "llvm/ADT/SetVector.h"

namespace dyncc::dg {

/// Returns true for the ops the fusion passes treat as elementwise
/// (including inference batch normalization: a per-channel affine map).
bool isElementwise(mlir::Operation *op);

/// Elementwise ops and the layout ops (transpose, reshape, flatten,
/// squeeze, unsqueeze) that move every element exactly once: the ops that
/// may sit in a backbone's prologue or epilogue. A reshape qualifies only
/// where it maps runs of dimensions to runs (sym::matchReshape): one whose
/// runs cannot be matched symbolically (`[B, 24, H, W]` to `[-1, 2400]`
/// over dynamic H and W) is a collapse of the whole tensor, which no tile
/// of the group can read through: it stays out of epilogues, and joins a
/// prologue only as its first op, a view of the kernel's argument.
bool isElementMapping(mlir::Operation *op);

/// Reshape, flatten, squeeze and unsqueeze: the ops that reshape.
bool isReshape(mlir::Operation *op);

/// Whether reshape `op` maps runs of its input's dimensions to runs of its
/// result's (sym::matchReshape); always where every size is static.
bool reshapesRuns(mlir::Operation *op);

/// A layout op with this unit attribute stays out of backbones' epilogues
/// (dyncc-fuse-gemm) and runs with its consumers: dyncc-conv-im2col marks
/// the reshape that splits a folded GEMM's columns back into images, which
/// in the GEMM's group would leave its N tiles dividing an image's pixels
/// (no tile divides a 14 x 14 image's 196).
constexpr llvm::StringLiteral getNotEpilogueAttrName() {
  return "dg.not_epilogue";
}

/// Whether `op` may join a group: a top-level graph op of a function, not
/// in a group, and not a constant (constants are group inputs).
bool isFusionCandidate(mlir::Operation *op);

/// The axes (absent: all) and keepdims flag of a reduce_* op.
struct Reduction {
  std::optional<llvm::ArrayRef<int64_t>> axes;
  bool keepdims;
};
/// The reduction `op` computes, or nullopt when it is not a reduce_* op.
std::optional<Reduction> getReduction(mlir::Operation *op);

/// The row reductions: reduce_* that keep their dims.
bool isRowReduction(mlir::Operation *op);

/// The symbolic shape of `value`'s type (static dims as constants).
std::optional<llvm::SmallVector<DimExpr>> shapeOf(mlir::Value value);

/// Ops gathered into one group, in one block.
using OpSet = llvm::SetVector<mlir::Operation *>;

/// Whether `ops` can become one group: no value leaves the set and comes
/// back into it through ops outside it (the fused op would depend on
/// itself).
bool isConvex(const OpSet &ops);

/// Adds `op` to `group` if it is not in it and the group stays convex;
/// returns whether it was added.
bool tryAddToGroup(OpSet &group, mlir::Operation *op);

/// Moves `ops` (top-level ops of one block, a convex set) into a new
/// `dg.fusion` of `kind` placed at the last of them; outside ops between the
/// first and the last that use the group move after it. Values used outside
/// the group become its results. Every op in `backbones` is marked
/// `dg.backbone`.
FusionOp createFusionGroup(mlir::RewriterBase &rewriter,
                           llvm::ArrayRef<mlir::Operation *> ops,
                           FusionKind kind,
                           llvm::ArrayRef<mlir::Operation *> backbones);

/// Moves the ops of `group` back into its block in its place and erases it;
/// returns the ops.
llvm::SmallVector<mlir::Operation *>
dissolveFusionGroup(mlir::RewriterBase &rewriter, FusionOp group);

} // namespace dyncc::dg

#endif // DYNCC_DIALECT_DG_TRANSFORMS_FUSIONUTILS_H
