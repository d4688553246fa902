//===- FoldGemmBatch.cpp - A shared-weight batch as rows of M -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A dense layer on a [B, S, K] input computes [B, S, K] x [K, N]: the weight
// is shared by every b, so the layer is one [B*S, K] x [K, N] product. This
// pass rewrites such a GEMM kernel to compute it so, before its problem is
// recorded: the tile search then sees one M = B*S instead of a batch and an
// M it would key its tables on separately, and a block's M tile runs across
// batch rows where S is small.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace dyncc {
#define GEN_PASS_DEF_FOLDGEMMBATCHPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// The loops of contraction `op` that fold into one M: the loops only A and
/// the output index (inferContractionDims's `m`: a batch B does not read is
/// one of them), where there are two or more, they are consecutive, and the
/// output runs along them then along the one N loop. Empty otherwise: a
/// batched product whose B has a batch of its own (attention's), a
/// transposed output, or a named op.
static ReassociationIndices getFoldedLoops(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return {};
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || !dims->batch.empty() || dims->m.size() < 2 ||
      dims->n.size() != 1)
    return {};
  ReassociationIndices loops(dims->m.begin(), dims->m.end());
  llvm::sort(loops);
  for (auto [i, loop] : llvm::enumerate(loops))
    if (loop != loops.front() + static_cast<int64_t>(i))
      return {};
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() != loops.size() + 1)
    return {};
  auto isDim = [&](unsigned result, int64_t loop) {
    auto dim = dyn_cast<AffineDimExpr>(out.getResult(result));
    return dim && dim.getPosition() == loop;
  };
  for (auto [i, loop] : llvm::enumerate(loops))
    if (!isDim(i, loop))
      return {};
  if (!isDim(loops.size(), dims->n.front()))
    return {};
  if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {loops}))
    return {};
  return loops;
}

/// The reassociation of a rank-`rank` value whose leading `rank - 1`
/// dimensions become one.
static SmallVector<ReassociationIndices> getOutputGroups(int64_t rank) {
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank - 1)), {rank - 1}};
}

/// Folds kernel `func`'s batch into M where it can. Fails only where a
/// rewrite the checks allowed did not apply.
static LogicalResult foldBatch(func::FuncOp func) {
  Block &entry = func.getBody().front();
  linalg::GenericOp contraction;
  SmallVector<linalg::LinalgOp> others;
  // Ops left over and unused, with what only they use (a shape tensor of
  // an exported Reshape's, built from index casts).
  llvm::SmallPtrSet<Operation *, 8> dead;
  for (Operation &op : llvm::reverse(entry))
    if (wouldOpBeTriviallyDead(&op) &&
        llvm::all_of(op.getUsers(),
                     [&](Operation *user) { return dead.contains(user); }))
      dead.insert(&op);
  for (Operation &op : entry) {
    if (dead.contains(&op))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      if (generic && linalg::isaContractionOpInterface(linalgOp)) {
        if (contraction)
          return success();
        contraction = generic;
      } else {
        others.push_back(linalgOp);
      }
      continue;
    }
    // Sizes, read off the arguments (an f16 GEMM's f32 accumulator is sized
    // from its f16 output) or computed from index arguments (ViT's tokens,
    // `h / 16 * w / 16 + 1`), stay as they are: the collapse reshapes
    // values, not the sizes they are made with.
    bool indexArith =
        isa_and_nonnull<arith::ArithDialect>(op.getDialect()) &&
        llvm::all_of(op.getResultTypes(), [](Type t) { return t.isIndex(); });
    if (!indexArith &&
        !isa<tensor::EmptyOp, tensor::DimOp, arith::ConstantOp, func::ReturnOp>(
            op))
      return success();
  }
  if (!contraction)
    return success();
  ReassociationIndices loops = getFoldedLoops(contraction);
  if (loops.empty())
    return success();
  int64_t rank = loops.size() + 1;
  SmallVector<ReassociationIndices> groups = getOutputGroups(rank);
  // The weight's ops (GPT-2's LM head reads its tied embedding table
  // through a transpose): a chain of ops, each used once, making B from the
  // kernel's arguments alone, so it has no batch; they stay as they are.
  llvm::SmallPtrSet<Operation *, 4> weightOps;
  // Whether the chain ends at the arguments; where it does not, it is not
  // the weight's alone and nothing folds (its ops stay in `others`, which
  // do not collapse).
  bool reachesArguments = false;
  for (Value b = contraction.getDpsInputs()[1];;) {
    auto op = b.getDefiningOp<linalg::LinalgOp>();
    if (!op || !llvm::is_contained(others, op) || !b.hasOneUse() ||
        op->getNumResults() != 1)
      break;
    // Its inputs: arguments, or (at most) one more op of the chain; its
    // destination an empty tensor.
    Value next;
    bool fromArguments = llvm::all_of(op.getDpsInits(), [](Value init) {
      return init.getDefiningOp<tensor::EmptyOp>() != nullptr;
    });
    for (Value input : op.getDpsInputs()) {
      if (isa<BlockArgument>(input))
        continue;
      if (next || !input.getDefiningOp<linalg::LinalgOp>())
        fromArguments = false;
      next = input;
    }
    if (!fromArguments)
      break;
    weightOps.insert(op);
    if (!next) {
      reachesArguments = true;
      break;
    }
    b = next;
  }
  if (!reachesArguments)
    weightOps.clear();
  llvm::erase_if(others, [&](linalg::LinalgOp op) {
    return weightOps.contains(op.getOperation());
  });
  if (!llvm::all_of(others, [&](linalg::LinalgOp op) {
        return collapsesAlong(op, rank, groups.front());
      }))
    return success();
  for (Value result : entry.getTerminator()->getOperands())
    if (!isa_and_nonnull<linalg::LinalgOp>(result.getDefiningOp()))
      return success();

  IRRewriter rewriter(func.getContext());
  // The contraction's loops, then each other op's: each is rewritten on the
  // collapsed operands, its results expanded back; the reshapes between
  // two folded ops cancel below.
  if (failed(collapseKernelLoops(rewriter, linalg::LinalgOp(contraction), loops,
                                 groups, "fold its batch into M")) ||
      failed(collapseKernelLoops(rewriter, others, groups.front(), groups,
                                 "fold its batch with the GEMM's")))
    return failure();
  foldKernelReshapes(func);
  func->setAttr(getFoldedBatchAttrName(), rewriter.getUnitAttr());
  return success();
}

struct FoldGemmBatch final
    : ::dyncc::impl::FoldGemmBatchPassBase<FoldGemmBatch> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernelOfKind(func, "gemm"))
        continue;
      if (failed(foldBatch(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
