//===- UnfoldGemmRows.cpp - A product's split rows as its batch
//------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// TensorFlow exports a dense layer on [B, S, K] as a Reshape to [B*S, K], a
// MatMul and a Reshape back to [B, S, N]. Where a head split follows (a TF
// BERT's Q, K and V), the kernel's result has B as a batch while its product
// runs M across it, and no GEMM problem describes both. This pass computes
// such a product on the split rows, as PyTorch's exporter writes it: the
// Reshape back is folded into the contraction by expanding its loops.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dyncc {
#define GEN_PASS_DEF_UNFOLDGEMMROWSPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// Whether `op`, which reads `carried`, is an elementwise step between a
/// product and its split (an f16 product's cast to f16, a bias added before
/// the split): all its loops parallel, one result, and `carried` (used by it
/// alone) and its output indexed in its loops' order. Its other operands
/// may broadcast; the expansion expands them too.
static bool isElementwiseStep(linalg::LinalgOp op, Value carried) {
  if (op.getNumReductionLoops() != 0 || op.getNumDpsInits() != 1 ||
      op->getNumResults() != 1 || !carried.hasOneUse())
    return false;
  for (OpOperand *input : op.getDpsInputOperands())
    if (input->get() == carried &&
        !op.getMatchingIndexingMap(input).isIdentity())
      return false;
  return op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity();
}

/// The expand_shape that splits the M of contraction `op` alone, where `op`
/// computes one `[M, N]` output (its first loop of the output only A reads,
/// its second only B) and its result reaches the expand as the only user
/// of each value on the way, through elementwise ops of its shape
/// (`chain` gets them, `op` first); null otherwise.
static tensor::ExpandShapeOp getRowSplit(linalg::LinalgOp op,
                                         SmallVectorImpl<Operation *> &chain) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return nullptr;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (out.getNumResults() != 2 || !out.isProjectedPermutation() ||
      failed(dims) || !dims->batch.empty() || dims->m.size() != 1 ||
      dims->n.size() != 1 || out.getDimPosition(0) != dims->m.front() ||
      out.getDimPosition(1) != dims->n.front())
    return nullptr;
  chain.assign({op.getOperation()});
  Value value = op->getResult(0);
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user)) {
      SmallVector<ReassociationIndices> groups =
          expand.getReassociationIndices();
      if (groups.size() != 2 || groups[0].size() < 2 || groups[1].size() != 1)
        return nullptr;
      return expand;
    }
    auto step = dyn_cast<linalg::LinalgOp>(user);
    if (!step || !isElementwiseStep(step, value))
      return nullptr;
    chain.push_back(user);
    value = user->getResult(0);
  }
  return nullptr;
}

/// Unfolds kernel `func`'s split products. Fails only where the rewrite
/// did not converge.
static LogicalResult unfoldRows(func::FuncOp func) {
  if (succeeded(getGemmProblem(func)))
    return success();
  // The products and the elementwise ops between each and its split: the
  // split is folded into each of them in turn, from the last.
  SmallVector<Operation *> steps;
  func.walk([&](linalg::LinalgOp op) {
    if (!linalg::isaContractionOpInterface(op))
      return;
    SmallVector<Operation *> chain;
    if (getRowSplit(op, chain))
      steps.append(chain.begin(), chain.end());
  });
  if (steps.empty())
    return success();

  // The expansion patterns take linalg.generic producers only. The steps
  // are marked, so that the folding expands only splits of their results
  // (the split, then the expands the folding puts on each step's operands):
  // the generic op that replaces a step is not marked, nor reached again.
  IRRewriter rewriter(func.getContext());
  StringAttr mark = rewriter.getStringAttr("dyncc.unfold_step");
  for (Operation *step : steps) {
    Operation *generic = step;
    if (!isa<linalg::GenericOp>(step)) {
      rewriter.setInsertionPoint(step);
      FailureOr<linalg::GenericOp> general =
          linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(step));
      if (failed(general))
        return func.emitError("cannot unfold the rows of a product: ")
               << step->getName() << " has no linalg.generic form";
      generic = *general;
    }
    generic->setAttr(mark, rewriter.getUnitAttr());
  }
  RewritePatternSet patterns(func.getContext());
  linalg::populateFoldReshapeOpsByExpansionPatterns(
      patterns, [&](OpOperand *fused) {
        Operation *producer = fused->get().getDefiningOp();
        return isa<tensor::ExpandShapeOp>(fused->getOwner()) && producer &&
               producer->hasAttr(mark);
      });
  // The accumulator's fill, expanded with the product, becomes a fill of
  // an empty tensor of the expanded shape.
  linalg::FillOp::getCanonicalizationPatterns(patterns, func.getContext());
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns,
                                                     func.getContext());
  tensor::populateFoldTensorEmptyPatterns(patterns);
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return func.emitError("unfolding a product's rows did not converge");
  func.walk([&](Operation *op) { op->removeAttr(mark); });
  return success();
}

struct UnfoldGemmRows final
    : ::dyncc::impl::UnfoldGemmRowsPassBase<UnfoldGemmRows> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto kind = func->getAttrOfType<StringAttr>("dyncc.kind");
      if (!func->hasAttr("dyncc.kernel") || !kind ||
          kind.getValue() != "gemm" || func.isExternal())
        continue;
      if (failed(unfoldRows(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
