//===- FuseReductions.cpp - Reduce-level and elementwise fusion -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// After the backbone passes: row reductions stitched with their producers
// and consumers over one row space (dyncc-fuse-reductions), then the chains
// of elementwise ops that remain (dyncc-fuse-elementwise).
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_FUSEREDUCTIONSPASS
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

struct FuseReductions final
    : ::dyncc::dg::impl::FuseReductionsPassBase<FuseReductions> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> seeds;
    getOperation().walk([&](Operation *op) {
      if (isRowReduction(op) && isFusionCandidate(op) && getReduction(op)->axes)
        seeds.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *seed : seeds) {
      if (!isFusionCandidate(seed))
        continue; // Joined an earlier seed's group.
      std::optional<SmallVector<DimExpr>> rows = shapeOf(seed->getOperand(0));
      std::optional<SmallVector<DimExpr>> reduced = shapeOf(seed->getResult(0));
      ArrayRef<int64_t> axes = *getReduction(seed)->axes;
      if (!rows || !reduced)
        continue;
      // Over the row space: the rows themselves or one value per row.
      auto inRowSpace = [&](Value v) {
        std::optional<SmallVector<DimExpr>> s = shapeOf(v);
        return s && (*s == *rows || *s == *reduced);
      };
      OpSet group;
      group.insert(seed);
      // Elementwise producers of the rows that feed only the group.
      for (Operation *def = seed->getOperand(0).getDefiningOp();
           def && group.size() < maxGroupSize && isFusionCandidate(def) &&
           isElementwise(def) && def->getNumResults() == 1 &&
           inRowSpace(def->getResult(0)) &&
           llvm::all_of(def->getResult(0).getUsers(),
                        [&](Operation *u) { return group.contains(u); });) {
        if (!tryAddToGroup(group, def))
          break;
        def = def->getOperand(0).getDefiningOp();
      }
      for (size_t i = 0; i < group.size() && group.size() < maxGroupSize; ++i) {
        for (Operation *user : group[i]->getUsers()) {
          if (group.size() >= maxGroupSize || group.contains(user) ||
              !isFusionCandidate(user) || user->getNumResults() != 1)
            continue;
          bool joins = false;
          if (isElementwise(user)) {
            joins = inRowSpace(user->getResult(0)) &&
                    llvm::all_of(user->getOperands(), [&](Value v) {
                      Operation *def = v.getDefiningOp();
                      return !def || !group.contains(def) || inRowSpace(v);
                    });
          } else if (isRowReduction(user)) {
            std::optional<ArrayRef<int64_t>> userAxes =
                getReduction(user)->axes;
            joins = userAxes && *userAxes == axes &&
                    shapeOf(user->getOperand(0)) == rows;
          }
          if (joins)
            (void)tryAddToGroup(group, user);
        }
      }
      SmallVector<Operation *> backbones;
      for (Operation *op : group)
        if (isRowReduction(op))
          backbones.push_back(op);
      createFusionGroup(rewriter, group.getArrayRef(), FusionKind::Reduce,
                        backbones);
    }
  }
};

struct FuseElementwise final
    : ::dyncc::dg::impl::FuseElementwisePassBase<FuseElementwise> {
  using Base::Base;

  /// The layout producers of `value` that feed only the group, which its
  /// kernel reads through: a transpose to the group's `space`, and the
  /// reshape before it (`belowTranspose`) where it splits dimensions (a
  /// view of the kernel's argument). im2col with the batch folded
  /// transposes its GEMM's [F, N*OH*OW] back to NCHW so: one kernel with
  /// the epilogue's elementwise ops, not a copy for each.
  void addLayoutPrologue(OpSet &group, Value value,
                         const SmallVector<DimExpr> &space,
                         bool belowTranspose = false) {
    Operation *def = value.getDefiningOp();
    if (!def || group.size() >= maxGroupSize || !isFusionCandidate(def) ||
        def->getNumResults() != 1 || def->getNumOperands() == 0)
      return;
    std::optional<SmallVector<DimExpr>> in = shapeOf(def->getOperand(0));
    std::optional<SmallVector<DimExpr>> out = shapeOf(def->getResult(0));
    if (!in || !out)
      return;
    bool transpose = isa<TransposeOp>(def) && *out == space;
    bool split = belowTranspose && isa<ReshapeOp>(def) &&
                 out->size() > in->size() && reshapesRuns(def);
    if (!transpose && !split)
      return;
    if (llvm::any_of(def->getResult(0).getUsers(),
                     [&](Operation *user) { return !group.contains(user); }))
      return;
    if (!tryAddToGroup(group, def))
      return;
    if (transpose)
      addLayoutPrologue(group, def->getOperand(0), space,
                        /*belowTranspose=*/true);
  }

  void runOnOperation() override {
    SmallVector<Operation *> seeds;
    getOperation().walk([&](Operation *op) {
      if (isFusionCandidate(op) && isElementwise(op) &&
          op->getNumResults() == 1)
        seeds.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *seed : seeds) {
      if (!isFusionCandidate(seed))
        continue;
      std::optional<SmallVector<DimExpr>> space = shapeOf(seed->getResult(0));
      if (!space)
        continue;
      auto joins = [&](Operation *op) {
        return op && isFusionCandidate(op) && isElementwise(op) &&
               op->getNumResults() == 1 && shapeOf(op->getResult(0)) == space;
      };
      OpSet group;
      group.insert(seed);
      for (size_t i = 0; i < group.size() && group.size() < maxGroupSize; ++i) {
        Operation *op = group[i];
        for (Operation *user : op->getUsers())
          if (group.size() < maxGroupSize && joins(user))
            (void)tryAddToGroup(group, user);
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp();
              group.size() < maxGroupSize && joins(def))
            (void)tryAddToGroup(group, def);
      }
      for (size_t i = 0, e = group.size(); i < e; ++i)
        for (Value operand : group[i]->getOperands())
          addLayoutPrologue(group, operand, *space);
      createFusionGroup(rewriter, group.getArrayRef(), FusionKind::Elementwise,
                        {});
    }
    // Transposes no elementwise op took: each with its split reshapes.
    SmallVector<TransposeOp> transposes;
    getOperation().walk([&](TransposeOp op) {
      if (isFusionCandidate(op))
        transposes.push_back(op);
    });
    for (TransposeOp op : transposes) {
      std::optional<SmallVector<DimExpr>> space = shapeOf(op.getResult());
      if (!space)
        continue;
      OpSet group;
      group.insert(op);
      addLayoutPrologue(group, op.getInput(), *space, /*belowTranspose=*/true);
      if (group.size() > 1)
        createFusionGroup(rewriter, group.getArrayRef(),
                          FusionKind::DataMovement, {});
    }
  }
};

} // namespace
