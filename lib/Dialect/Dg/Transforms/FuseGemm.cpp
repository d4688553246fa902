//===- FuseGemm.cpp - GEMM-level and horizontal fusion --------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The backbone passes: a matmul or conv absorbs the element-mapping ops
// around it (dyncc-fuse-gemm), then GEMM groups that share their input merge
// (dyncc-fuse-horizontal).
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_FUSEGEMMPASS
#define GEN_PASS_DEF_FUSEHORIZONTALPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// Whether epilogue op `user` reads the group's values only where they were
/// produced: each group operand has exactly the user's result shape (a
/// layout op maps every element once, so its input may differ).
bool readsInPlace(Operation *user, const OpSet &group) {
  if (!isElementwise(user))
    return true; // transpose, reshape, ...: one element each
  std::optional<SmallVector<DimExpr>> result = shapeOf(user->getResult(0));
  if (!result)
    return false;
  for (Value operand : user->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (def && group.contains(def) && shapeOf(operand) != result)
      return false;
  }
  return true;
}

struct FuseGemm final : ::dyncc::dg::impl::FuseGemmPassBase<FuseGemm> {
  using Base::Base;

  /// Producers of `value` that feed only the group and map elements one to
  /// one or broadcast them (expand): an operand's layout and prologue, or a
  /// side operand read at its own, smaller size (an attention mask).
  void addPrologue(OpSet &group, Value value) {
    Operation *def = value.getDefiningOp();
    // A reshape whose runs cannot be matched (isElementMapping) joins only
    // as the first op of a prologue: its operand is then the kernel's
    // argument, which it collapses whole as a view.
    if (!def || group.size() >= maxGroupSize || !isFusionCandidate(def) ||
        !(isElementwise(def) || isa<TransposeOp, ExpandOp>(def) ||
          isReshape(def)) ||
        def->getNumResults() != 1)
      return;
    if (llvm::any_of(def->getResult(0).getUsers(),
                     [&](Operation *user) { return !group.contains(user); }))
      return;
    // The kernel reads a reshaped operand through the reshape into its
    // producer's loops where that producer is elementwise; a transpose
    // under a reshape (a channel shuffle's, [N, G, C/G, H, W] transposed
    // then flattened) would instead be computed whole, outside the tiles,
    // static shapes or not (a shuffle in an epilogue, as the shared
    // models' are, is unaffected).
    if (isa<TransposeOp>(def) &&
        llvm::any_of(def->getResult(0).getUsers(), isReshape))
      return;
    if (llvm::any_of(def->getResult(0).getUsers(), [](Operation *user) {
          return isReshape(user) && !reshapesRuns(user);
        }))
      return;
    // A prologue transforms one operand on its way in: its other operands
    // are constants (a scale, a cast's nothing). An op that combines two
    // computed tensors (softmax's division by the row sums) is the end of
    // another group, not a prologue.
    Value chain;
    for (Value operand : def->getOperands()) {
      if (isa_and_nonnull<ConstantOp, DimValuesOp>(operand.getDefiningOp()))
        continue;
      if (chain)
        return;
      chain = operand;
    }
    if (!tryAddToGroup(group, def))
      return;
    if (chain)
      addPrologue(group, chain);
  }

  void addEpilogue(OpSet &group) {
    for (size_t i = 0; i < group.size() && group.size() < maxGroupSize; ++i) {
      Operation *op = group[i];
      for (Operation *user : op->getUsers()) {
        if (group.size() >= maxGroupSize)
          return;
        if (group.contains(user) || !isFusionCandidate(user) ||
            !isElementMapping(user) || user->getNumResults() != 1 ||
            !readsInPlace(user, group) ||
            user->hasAttr(getNotEpilogueAttrName()))
          continue;
        (void)tryAddToGroup(group, user);
      }
    }
  }

  void runOnOperation() override {
    SmallVector<Operation *> backbones;
    getOperation().walk([&](Operation *op) {
      if (isa<MatMulOp, ConvOp>(op) && isFusionCandidate(op))
        backbones.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *backbone : backbones) {
      OpSet group;
      group.insert(backbone);
      for (Value operand : backbone->getOperands())
        addPrologue(group, operand);
      addEpilogue(group);
      // Side operands of the epilogue, the same way.
      for (size_t i = 0; i < group.size(); ++i)
        if (group[i] != backbone)
          for (Value operand : group[i]->getOperands())
            addPrologue(group, operand);
      createFusionGroup(rewriter, group.getArrayRef(),
                        isa<ConvOp>(backbone) ? FusionKind::Conv
                                              : FusionKind::Gemm,
                        {backbone});
    }
  }
};

struct FuseHorizontal final
    : ::dyncc::dg::impl::FuseHorizontalPassBase<FuseHorizontal> {
  using Base::Base;

  /// The matmul backbone of a GEMM group, if it has exactly one.
  static MatMulOp singleMatmul(FusionOp group) {
    MatMulOp found;
    for (Operation &op : group.getBody().front()) {
      if (!op.hasAttr(FusionOp::getBackboneAttrName()))
        continue;
      auto matmul = dyn_cast<MatMulOp>(op);
      if (!matmul || found)
        return {};
      found = matmul;
    }
    return found;
  }

  void runOnOperation() override {
    // Buckets of GEMM groups by shared left operand and result shape.
    llvm::MapVector<std::pair<Value, Type>, SmallVector<FusionOp>> buckets;
    for (auto group : getOperation().getBody().getOps<FusionOp>()) {
      if (group.getKind() != FusionKind::Gemm)
        continue;
      if (MatMulOp matmul = singleMatmul(group))
        buckets[{matmul.getLhs(), matmul.getType()}].push_back(group);
    }
    IRRewriter rewriter(&getContext());
    for (auto &[key, groups] : buckets) {
      if (groups.size() < 2)
        continue;
      // Merge greedily.
      OpSet merged;
      for (FusionOp group : groups) {
        // Independent groups only: none reads another's results.
        bool readsMerged = false;
        group.walk([&](Operation *op) {
          for (Value operand : op->getOperands())
            if (Operation *def = operand.getDefiningOp())
              readsMerged |= merged.contains(def);
        });
        if (readsMerged)
          continue;
        merged.insert(group);
        if (!isConvex(merged))
          merged.pop_back();
      }
      if (merged.size() < 2)
        continue;
      SmallVector<Operation *> ops, backbones;
      for (Operation *group : merged) {
        for (Operation &op : cast<FusionOp>(group).getBody().front())
          if (op.hasAttr(FusionOp::getBackboneAttrName()))
            backbones.push_back(&op);
        llvm::append_range(
            ops, dissolveFusionGroup(rewriter, cast<FusionOp>(group)));
      }
      createFusionGroup(rewriter, ops, FusionKind::Gemm, backbones);
    }
  }
};

} // namespace
