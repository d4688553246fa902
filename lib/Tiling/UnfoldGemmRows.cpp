//===- UnfoldGemmRows.cpp - A product's split rows as its batch -----------===//
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
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

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

/// Unfolds kernel `func`'s split products where that gives it a GEMM
/// problem; otherwise leaves it as it was. Fails only where the rewrite did
/// not converge.
static LogicalResult unfoldRows(func::FuncOp func) {
  if (succeeded(getGemmProblem(func)))
    return success();
  // The products and the elementwise ops between each and its split (an op
  // on two chains' values is taken once), then the splits: the folding
  // starts from each split and goes up its chain.
  llvm::SetVector<Operation *> steps;
  SmallVector<Operation *> seeds;
  func.walk([&](linalg::LinalgOp op) {
    if (!linalg::isaContractionOpInterface(op))
      return;
    SmallVector<Operation *> chain;
    if (tensor::ExpandShapeOp split = getRowSplit(op, chain)) {
      steps.insert(chain.begin(), chain.end());
      seeds.push_back(split);
    }
  });
  if (steps.empty())
    return success();
  seeds.append(steps.begin(), steps.end());

  // The kernel as it was, restored where the unfolded one has no problem
  // either (a broadcast the expansion does not take, products that still
  // differ).
  OwningOpRef<func::FuncOp> original = func.clone();
  // The steps are marked, so that the folding expands only splits of their
  // results (the split, then the expands the folding puts on each step's
  // operands); the op that replaces a step is not marked, nor reached
  // again. Only the seeds and the ops the rewrite creates are rewritten.
  MLIRContext *ctx = func.getContext();
  StringAttr mark = StringAttr::get(ctx, "dyncc.unfold_step");
  for (Operation *step : steps)
    step->setAttr(mark, UnitAttr::get(ctx));
  RewritePatternSet patterns(ctx);
  linalg::populateFoldReshapeOpsByExpansionPatterns(
      patterns, [&](OpOperand *fused) {
        Operation *producer = fused->get().getDefiningOp();
        return isa<tensor::ExpandShapeOp>(fused->getOwner()) && producer &&
               producer->hasAttr(mark);
      });
  // The accumulator's fill, expanded with the product, becomes a fill of
  // an empty tensor of the expanded shape.
  linalg::FillOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  if (failed(applyOpPatternsGreedily(seeds, std::move(patterns), config)))
    return func.emitError("unfolding a product's rows did not converge");
  func.walk([&](Operation *op) { op->removeAttr(mark); });
  if (failed(getGemmProblem(func)))
    func.getFunctionBody().takeBody(original->getFunctionBody());
  return success();
}

struct UnfoldGemmRows final
    : ::dyncc::impl::UnfoldGemmRowsPassBase<UnfoldGemmRows> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernelOfKind(func, "gemm"))
        continue;
      if (failed(unfoldRows(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
