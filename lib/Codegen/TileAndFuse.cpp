//===- TileAndFuse.cpp - Block and thread tiling with fusion --------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Tiles the roots of a kernel function twice through TilingInterface, first
// to blocks and then to threads, fusing their producers into each level, as
// the kernel's tile configuration says.
//
// Before tiling, the kernel is simplified the way fusion into tiles needs:
// unit dimensions are dropped (so the keepdims reshapes around reductions
// cancel) and single-use elementwise producers are fused into their
// consumers (so elementwise chains need no intermediate tensors).
//
// A root is a tileable op whose result reaches a kernel result, directly or
// through reshapes and `tensor.insert_slice`s (the pieces of a concat).
// Every root gets its own block forall; consumers are tiled before their
// producers, so a root that another root reads is recomputed inside the
// reader's tiles, never read back from memory another block writes. The
// launch grid is the maximum over the roots; it is recorded on the kernel as
// `dyncc.grid`, per axis the distinct block counts of the roots, expressions
// over the kernel's arguments, which the host plan turns into symbolic
// expressions.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/RowReductions.h"
#include "dyncc/Support/DimExpr.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>
#include <numeric>
#include <set>

namespace dyncc {
#define GEN_PASS_DEF_TILEANDFUSEPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {


//===----------------------------------------------------------------------===//
// Preparation
//===----------------------------------------------------------------------===//

/// A generic of `inputs` into `inits` (results of `resultTypes`) with
/// `maps` and `iterators`, at the rewriter's insertion point, that takes
/// `op`'s body (moved, so `op` is left empty, to be replaced) and its
/// discardable attributes: what a rewrite builds that changes a generic's
/// operands or loops but not what it computes. Block arguments of the body
/// that no longer match the operands are the caller's to adjust.
static linalg::GenericOp
moveIntoGeneric(RewriterBase &rewriter, linalg::GenericOp op,
                TypeRange resultTypes, ValueRange inputs, ValueRange inits,
                ArrayRef<AffineMap> maps,
                ArrayRef<utils::IteratorType> iterators) {
  auto generic = linalg::GenericOp::create(rewriter, op.getLoc(), resultTypes,
                                           inputs, inits, maps, iterators);
  generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(op.getRegion(), generic.getRegion(),
                              generic.getRegion().end());
  return generic;
}

/// Fuses single-use elementwise producers into their generic consumers,
/// keeping each consumer's destination (upstream's pattern set would also
/// replace destinations that are not read with `tensor.empty`, which breaks
/// computing in place).
struct FuseElementwiseProducers final : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    // A contraction or convolution stays one (promotion recognizes it); its
    // producers fuse into its tiles, where they run once per element of a
    // promoted tile rather than once per read.
    if (linalg::isaContractionOpInterface(consumer) ||
        linalg::isaConvolutionOpInterface(consumer))
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!consumer.isDpsInput(&operand))
        continue;
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      // Only a producer that disappears: one whose result must be kept
      // (another use, or a payload that reads its destination in place)
      // would become a second result written from the consumer's loops.
      if (!producer || !producer->hasOneUse() ||
          !linalg::areElementwiseOpsFusable(&operand) ||
          !linalg::getPreservedProducerResults(producer, consumer, &operand)
               .empty())
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [orig, repl] : fused->replacements)
        rewriter.replaceUsesWithIf(orig, repl, [&](OpOperand &use) {
          return use.getOwner() != fused->fusedOp;
        });
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// Reads a transposed input of a contraction through the contraction's
/// indexing map instead (a Gemm's `transB` weight, a K^T in attention): the
/// product reads the transpose's input directly, whose slices are slices of
/// a kernel argument, which promotion copies in whole vectors and which pad
/// to static tiles; a transpose in between would be computed whole per
/// block behind the padding.
struct FoldTransposeIntoContraction final
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() ||
        !linalg::isaContractionOpInterface(op) || op->getNumRegions() != 1)
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs;
    bool changed = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto transpose = input->get().getDefiningOp<linalg::TransposeOp>();
      if (!transpose) {
        inputs.push_back(input->get());
        continue;
      }
      // result[j] = input[perm[j]]: the input's dimension perm[j] is indexed
      // by what indexed the result's dimension j.
      AffineMap map = maps[input->getOperandNumber()];
      ArrayRef<int64_t> perm = transpose.getPermutation();
      SmallVector<AffineExpr> results(map.getNumResults());
      for (auto [j, p] : llvm::enumerate(perm))
        results[p] = map.getResult(j);
      maps[input->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), 0, results, op.getContext());
      inputs.push_back(transpose.getInput());
      changed = true;
    }
    if (!changed)
      return failure();
    auto generic = linalg::GenericOp::create(
        rewriter, op.getLoc(), op->getResultTypes(), inputs,
        op.getDpsInits(), maps, op.getIteratorTypesArray());
    rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                               generic.getRegion().end());
    rewriter.replaceOp(op, generic->getResults());
    return success();
  }
};

/// Merges an elementwise op that computes in place into the elementwise op
/// that continues in place on its result (its destination), so a chain of
/// in-place epilogue ops becomes one op. Each of them may read the same value
/// (GELU reads the GEMM's result three times); as one op, with duplicate
/// operands removed, it reads it once, and tiling fuses the GEMM once
/// instead of once per reader.
struct MergeInPlaceChain final : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  static bool isSimpleElementwise(linalg::GenericOp op) {
    return op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
           op.getNumResults() == 1 &&
           op.getNumParallelLoops() == op.getNumLoops() &&
           op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity();
  }

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!isSimpleElementwise(consumer))
      return failure();
    OpOperand *init = consumer.getDpsInitOperand(0);
    auto producer = init->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || !producer->hasOneUse() || !isSimpleElementwise(producer) ||
        producer.getNumLoops() != consumer.getNumLoops() ||
        producer.getResultTypes() != consumer.getResultTypes())
      return failure();

    SmallVector<Value> inputs = producer.getDpsInputs();
    llvm::append_range(inputs, consumer.getDpsInputs());
    SmallVector<AffineMap> maps;
    for (OpOperand *operand : producer.getDpsInputOperands())
      maps.push_back(producer.getMatchingIndexingMap(operand));
    for (OpOperand *operand : consumer.getDpsInputOperands())
      maps.push_back(consumer.getMatchingIndexingMap(operand));
    maps.push_back(
        producer.getMatchingIndexingMap(producer.getDpsInitOperand(0)));
    auto merged = linalg::GenericOp::create(
        rewriter, consumer.getLoc(), consumer.getResultTypes(), inputs,
        producer.getDpsInits(), maps, consumer.getIteratorTypesArray());
    merged->setDiscardableAttrs(consumer->getDiscardableAttrDictionary());

    // The body: the producer's payload on its arguments and the output,
    // then the consumer's on its arguments and the producer's value.
    Block *body = rewriter.createBlock(&merged.getRegion());
    Location loc = consumer.getLoc();
    SmallVector<Value> producerArgs, consumerArgs;
    for (Value v : producer.getDpsInputs())
      producerArgs.push_back(
          body->addArgument(getElementTypeOrSelf(v.getType()), loc));
    for (Value v : consumer.getDpsInputs())
      consumerArgs.push_back(
          body->addArgument(getElementTypeOrSelf(v.getType()), loc));
    Value out = body->addArgument(
        getElementTypeOrSelf(producer.getDpsInits()[0].getType()), loc);
    producerArgs.push_back(out);
    IRMapping mapping;
    Block &producerBody = producer.getRegion().front();
    mapping.map(producerBody.getArguments(), producerArgs);
    rewriter.setInsertionPointToEnd(body);
    for (Operation &op : producerBody.without_terminator())
      rewriter.clone(op, mapping);
    Value produced = mapping.lookupOrDefault(
        cast<linalg::YieldOp>(producerBody.getTerminator()).getOperand(0));
    consumerArgs.push_back(produced);
    Block &consumerBody = consumer.getRegion().front();
    mapping.map(consumerBody.getArguments(), consumerArgs);
    for (Operation &op : consumerBody.without_terminator())
      rewriter.clone(op, mapping);
    Value result = mapping.lookupOrDefault(
        cast<linalg::YieldOp>(consumerBody.getTerminator()).getOperand(0));
    linalg::YieldOp::create(rewriter, loc, result);
    rewriter.replaceOp(consumer, merged->getResults());
    rewriter.eraseOp(producer);
    return success();
  }
};

/// Folds a collapse of an expansion that gives back the expanded value:
/// `[B, S] -> [B, 1, 1, S] -> [B, S]`, the unit dimensions of a mask put
/// back for a broadcast and dropped again with other groupings. Upstream's
/// composition gives up when the two types are equal and its folder wants
/// equal groupings. The result is the source when every dimension that is
/// not a static 1 falls in the same group of both reshapes: each result
/// dimension is then the product of the same dimensions as the source's.
struct FoldCollapseOfUnitExpansion final
    : OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::CollapseShapeOp op,
                                PatternRewriter &rewriter) const override {
    auto expand = op.getSrc().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || expand.getSrcType() != op.getResultType())
      return failure();
    SmallVector<int64_t> expandGroup(op.getSrcType().getRank());
    for (auto [group, dims] :
         llvm::enumerate(expand.getReassociationIndices()))
      for (int64_t dim : dims)
        expandGroup[dim] = group;
    ArrayRef<int64_t> shape = op.getSrcType().getShape();
    for (auto [group, dims] : llvm::enumerate(op.getReassociationIndices()))
      for (int64_t dim : dims)
        if (shape[dim] != 1 && expandGroup[dim] != static_cast<int64_t>(group))
          return failure();
    rewriter.replaceOp(op, expand.getSrc());
    return success();
  }
};

/// Reads through an expansion that only adds unit dimensions a generic
/// indexes with the constant 0: a row's statistic `[R]` expanded to `[R, 1]`
/// and broadcast along the row by `(d0, d1) -> (d0, 0)` is read as `[R]` by
/// `(d0, d1) -> (d0)`. Where unit dimensions are kept (a single row,
/// hasSingleRowReduction) nothing else removes them, and behind the
/// expansion the statistic's reduction is not a producer of the row's ops.
struct ReadThroughUnitExpansion final : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto expand = input->get().getDefiningOp<tensor::ExpandShapeOp>();
      if (!expand)
        continue;
      AffineMap map = op.getMatchingIndexingMap(input);
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      auto isUnitRead = [&](int64_t dim) {
        auto c = dyn_cast<AffineConstantExpr>(map.getResult(dim));
        return shape[dim] == 1 && c && c.getValue() == 0;
      };
      // Per group of the expansion, the one dimension it keeps: the one
      // that is not a unit read, or its last where all are.
      SmallVector<AffineExpr> kept;
      bool foldable = true;
      for (const ReassociationIndices &group :
           expand.getReassociationIndices()) {
        SmallVector<int64_t> others;
        for (int64_t dim : group)
          if (!isUnitRead(dim))
            others.push_back(dim);
        if (others.size() > 1) {
          foldable = false;
          break;
        }
        kept.push_back(map.getResult(others.empty() ? group.back()
                                                    : others.front()));
      }
      if (!foldable || kept.size() == map.getNumResults())
        continue;
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[input->getOperandNumber()] = AffineMap::get(
          map.getNumDims(), map.getNumSymbols(), kept, op.getContext());
      rewriter.modifyOpInPlace(op, [&] {
        input->set(expand.getSrc());
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};

/// Moves the reshapes between a computed value and the elementwise op that
/// continues in place on it (its destination) below that op: a conv whose
/// unit batch dimension was dropped and whose groups are split, `[4, 34, H,
/// W]`, read in place by a Relu over `[1, 136, H, W]` through a collapse and
/// an expand that do not compose. Tiling fuses a destination's producer only
/// when it is the producer itself, so the Relu now computes on `[4, 34, H,
/// W]`, its other operands reshaped the inverse way, and the reshapes follow
/// its result.
struct SinkReshapesThroughInPlaceOp final
    : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops() ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }))
      return failure();
    // The reshapes from the computed value to the destination, last first.
    SmallVector<Operation *> chain;
    Value source = op.getDpsInits()[0];
    while (Operation *def = source.getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def) ||
          !def->hasOneUse())
        break;
      chain.push_back(def);
      source = def->getOperand(0);
    }
    if (chain.empty() || !source.getDefiningOp<linalg::LinalgOp>())
      return failure();

    // The operands, reshaped from the destination's shape to the source's:
    // each reshape of the chain inverted, last first.
    Location loc = op.getLoc();
    SmallVector<Value> inputs;
    for (Value input : op.getDpsInputs()) {
      for (Operation *reshape : chain) {
        if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape)) {
          input = tensor::CollapseShapeOp::create(
              rewriter, loc, input, expand.getReassociationIndices());
          continue;
        }
        auto collapse = cast<tensor::CollapseShapeOp>(reshape);
        auto type = RankedTensorType::get(
            collapse.getSrcType().getShape(),
            getElementTypeOrSelf(input.getType()));
        input = tensor::ExpandShapeOp::create(
            rewriter, loc, type, input, collapse.getReassociationIndices(),
            tensor::getMixedSizes(rewriter, loc, collapse.getSrc()));
      }
      inputs.push_back(input);
    }
    int64_t rank = cast<RankedTensorType>(source.getType()).getRank();
    SmallVector<AffineMap> maps(
        inputs.size() + 1, rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto sunk = moveIntoGeneric(rewriter, op, source.getType(), inputs, source,
                                maps, iterators);
    // The reshapes again, now of the op's result, first to last.
    Value result = sunk.getResult(0);
    for (Operation *reshape : llvm::reverse(chain)) {
      IRMapping mapping;
      mapping.map(reshape->getOperand(0), result);
      result = rewriter.clone(*reshape, mapping)->getResult(0);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Gives a rank-0 tensor's expansion its static type: every dimension of it
/// is 1. Bubbling a slice up through such an expansion leaves its sizes as
/// values (`tensor<i64> into tensor<?xi64>`), which the expand_shape
/// canonicalizations do not fold and bufferization cannot expand.
struct StaticRankZeroExpansion final : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSrcType().getRank() != 0 || op.getResultType().hasStaticShape())
      return failure();
    auto type = RankedTensorType::get(
        SmallVector<int64_t>(op.getResultType().getRank(), 1),
        op.getResultType().getElementType());
    auto expanded = tensor::ExpandShapeOp::create(
        rewriter, op.getLoc(), type, op.getSrc(),
        op.getReassociationIndices());
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, op.getResultType(),
                                                expanded);
    return success();
  }
};

/// True when folding the reshape that `operand` feeds into its producer would
/// only move the reshape up between that producer and one of its own
/// producers that cannot take the reshape itself: an op whose indexing maps
/// are not projected permutations (a convolution's windows). The reshape
/// would then separate the two and the producer could no longer be fused
/// into its consumer's tiles (a conv whose unit batch dimension was dropped,
/// followed by its Relu).
static bool isBehindUnexpandableOp(OpOperand *operand) {
  if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(operand->getOwner()))
    return false;
  auto producer = operand->get().getDefiningOp<linalg::LinalgOp>();
  if (!producer)
    return false;
  return llvm::any_of(producer->getOperands(), [](Value value) {
    auto def = value.getDefiningOp<linalg::LinalgOp>();
    return def && !llvm::all_of(def.getIndexingMapsArray(), [](AffineMap map) {
      return map.isProjectedPermutation();
    });
  });
}

/// Puts the parallel loops of every generic op first, in their order, and
/// its reductions after them: a column reduction (`[M, N] -> [N]`, M
/// reduced) iterates `(n, m)`, so its columns are tiled over blocks and
/// threads and each thread reduces its columns along M in k-steps.
static LogicalResult moveReductionsInnermost(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  SmallVector<linalg::GenericOp> ops;
  func.walk([&](linalg::GenericOp op) { ops.push_back(op); });
  for (linalg::GenericOp op : ops) {
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> order;
    for (auto [i, t] : llvm::enumerate(iterators))
      if (t == utils::IteratorType::parallel)
        order.push_back(i);
    for (auto [i, t] : llvm::enumerate(iterators))
      if (t != utils::IteratorType::parallel)
        order.push_back(i);
    if (llvm::equal(order, llvm::seq<unsigned>(0, iterators.size())))
      continue;
    if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
      return op.emitOpError("could not move its reduction loops innermost");
  }
  return success();
}

/// `value` with the views of types `Views...` that produce it looked
/// through (each reads its first operand as it is).
template <typename... Views> static Value skipViews(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<Views...>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

/// True where `func` has a reduction whose parallel loops are all of
/// extent 1 (a softmax or a mean over a single row, a global pool over
/// N = C = 1). Dropping unit dimensions would leave it with no parallel
/// loop, a value of rank 0 that a consumer reads whole, so it could not be
/// tiled with its consumers as a row.
static bool hasSingleRowReduction(func::FuncOp func) {
  return func
      .walk([](linalg::LinalgOp op) {
        if (op.getNumReductionLoops() == 0 || op.getNumParallelLoops() == 0)
          return WalkResult::advance();
        for (auto [type, extent] : llvm::zip(op.getIteratorTypesArray(),
                                             op.getStaticLoopRanges()))
          if (type == utils::IteratorType::parallel && extent != 1)
            return WalkResult::advance();
        return WalkResult::interrupt();
      })
      .wasInterrupted();
}

static LogicalResult prepareKernel(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  linalg::ControlDropUnitDims unitDims;
  // Such a kernel keeps its unit dimensions: its rows are then tiled like
  // any other number of rows.
  // The statistics' keepdims expansions are read through instead
  // (ReadThroughUnitExpansion), also where a statistic is updated in place
  // after its expansion (a log-softmax's log of the sum), once that
  // expansion is sunk below the update: left there, the expansion would be
  // folded into the statistic's reduction below, which would then no
  // longer be along the rows.
  if (hasSingleRowReduction(func)) {
    unitDims.controlFn = [](Operation *) { return SmallVector<unsigned>{}; };
    patterns.add<SinkReshapesThroughInPlaceOp>(ctx);
  }
  linalg::populateFoldUnitExtentDimsPatterns(patterns, unitDims);
  linalg::populateFoldUnitExtentDimsCanonicalizationPatterns(patterns,
                                                             unitDims);
  patterns.add<FuseElementwiseProducers, MergeInPlaceChain,
               FoldCollapseOfUnitExpansion, FoldTransposeIntoContraction,
               ReadThroughUnitExpansion>(ctx);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  if (failed(applyPatternsGreedily(func, std::move(patterns))))
    return failure();

  // Then reshapes between a producer and its consumer (the head split after
  // a QKV projection) are folded into the producer's loops, so the producer
  // fuses into the consumer's tiles instead of being computed whole. A
  // reshaped kernel argument (one whose unit dimension was dropped above) has
  // no producer to fuse: expanding its consumer would only leave a reshape
  // between that consumer and its own consumers, which then cannot fuse it.
  RewritePatternSet reshapes(ctx);
  // A flattened input of a contraction (Flatten before a classifier's Gemm)
  // is not folded by expanding the contraction, which would split its K
  // into several reduction loops (each a k-step, too large to promote);
  // the producer is collapsed instead, below.
  auto splitsReduction = [](OpOperand *operand) {
    auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
    return consumer &&
           isa<tensor::CollapseShapeOp>(operand->get().getDefiningOp()) &&
           consumer.getNumReductionLoops() > 0;
  };
  // An expansion of a result that only puts unit dimensions back (those
  // dropped above, for the kernel's result) is left to follow an op that
  // reads a value another op also reads: folded, it would expand the op
  // back, its operands with it, and that value, behind an expansion, would
  // be computed whole, outside the tiles (a softmax over [N, C, 1, 1]).
  auto putsBackUnitDims = [](Operation *op) {
    auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(op);
    if (!expand)
      return false;
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    return llvm::all_of(expand.getReassociationIndices(),
                        [&](const ReassociationIndices &group) {
                          return llvm::count_if(group, [&](int64_t d) {
                                   return shape[d] != 1;
                                 }) <= 1;
                        });
  };
  auto readsSharedValue = [](Operation *op) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    return linalgOp && llvm::any_of(linalgOp.getDpsInputs(), [](Value v) {
             return isa_and_nonnull<linalg::LinalgOp>(v.getDefiningOp()) &&
                    !v.hasOneUse();
           });
  };
  // A generic all of whose loops are of extent 1 (a single row's statistic
  // made into InvStdDev, [1, 1]) that reads a unit expansion of the
  // statistic is collapsed onto the expansion's source (below), and is not
  // expanded back here: tiled over [1, 1], it would not fuse the statistic
  // through the expansion, which would be computed whole, ahead of the
  // tiles. (A fill is still expanded, to its kernel argument.)
  auto isUnitExtent = [](Operation *op, unsigned minLoops) {
    auto linalgOp = dyn_cast_or_null<linalg::GenericOp>(op);
    return linalgOp && linalgOp.getNumLoops() >= minLoops &&
           llvm::all_of(linalgOp.getStaticLoopRanges(),
                        [](int64_t extent) { return extent == 1; });
  };
  // A GEMM whose batch was folded into M (dyncc-fold-gemm-batch), or whose
  // image was folded into N (dyncc-pointwise-conv-as-gemm), or a reduce
  // kernel whose trailing axes were collapsed into rows
  // (dyncc-collapse-row-dims), keeps its results' expansions back to
  // [B, S, N], [N, F, H, W] or [..., C, H, W] where they are, at the end:
  // folded into the epilogue, they would split M, N or the rows again.
  bool foldedBatch = func->hasAttr(getFoldedBatchAttrName()) ||
                     func->hasAttr(getFoldedImageAttrName()) ||
                     func->hasAttr(getFoldedRowsAttrName());
  // (A grouped conv's result is collapsed after: [N, G, F, H, W] back to
  // [N, G*F, H, W].)
  auto expandsResult = [](Operation *op) {
    auto returned = [](Operation *user) {
      return isa<func::ReturnOp>(user) ||
             (isa<tensor::CollapseShapeOp>(user) &&
              llvm::all_of(user->getUsers(), llvm::IsaPred<func::ReturnOp>));
    };
    return isa<tensor::ExpandShapeOp>(op) &&
           llvm::any_of(op->getUsers(), returned);
  };
  linalg::populateFoldReshapeOpsByExpansionPatterns(
      reshapes, [&](OpOperand *operand) {
        Operation *producer = operand->get().getDefiningOp();
        if (!producer || !producer->hasOneUse() || splitsReduction(operand))
          return false;
        if (foldedBatch && expandsResult(operand->getOwner()))
          return false;
        if (isUnitExtent(operand->getOwner(), 1) ||
            (putsBackUnitDims(operand->getOwner()) &&
             isUnitExtent(producer, 1)))
          return false;
        if (putsBackUnitDims(operand->getOwner()) &&
            readsSharedValue(producer))
          return false;
        if (isBehindUnexpandableOp(operand))
          return false;
        // A kernel argument's reshapes (a grouped conv's [N, G*F, H, W]
        // residual split into groups, then its image collapsed) alike.
        if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(producer))
          return !isa<BlockArgument>(
              skipViews<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
                  producer->getOperand(0)));
        return true;
      });
  // The producer of such a flattened input computes on the flattened
  // shape, so it fuses into the contraction's tiles through a slice. Only
  // a linalg producer: a pad collapsed so (a conv's padded input, flattened
  // from a transposed channel shuffle) is expanded back by the patterns
  // above, and the two would alternate without end.
  linalg::populateFoldReshapeOpsByCollapsingPatterns(
      reshapes, [&](OpOperand *operand) {
        if (isUnitExtent(operand->getOwner(), 2))
          return putsBackUnitDims(operand->get().getDefiningOp());
        auto collapse = dyn_cast<tensor::CollapseShapeOp>(operand->getOwner());
        if (!collapse || !operand->get().hasOneUse() ||
            !isa_and_nonnull<linalg::LinalgOp>(operand->get().getDefiningOp()))
          return false;
        return llvm::any_of(collapse->getUses(), [](OpOperand &use) {
          auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
          return consumer && consumer.getNumReductionLoops() > 0;
        });
      });
  reshapes.add<FuseElementwiseProducers>(ctx);
  // A collapse then an expand of one value (a unit dimension dropped above,
  // put back for a consumer) compose into one reshape, which tiling can
  // see through.
  tensor::CollapseShapeOp::getCanonicalizationPatterns(reshapes, ctx);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(reshapes, ctx);
  reshapes.add<FoldCollapseOfUnitExpansion>(ctx);
  tensor::populateFoldTensorEmptyPatterns(reshapes);
  if (failed(applyPatternsGreedily(func, std::move(reshapes))))
    return failure();

  RewritePatternSet sink(ctx);
  sink.add<SinkReshapesThroughInPlaceOp>(ctx);
  if (failed(applyPatternsGreedily(func, std::move(sink))))
    return failure();
  return moveReductionsInnermost(func);
}

//===----------------------------------------------------------------------===//
// Roots and tiling
//===----------------------------------------------------------------------===//

/// `value` with the reshapes and casts that produce it looked through.
static Value skipReshapesAndCasts(Value value) {
  return skipViews<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                   tensor::CastOp>(value);
}

/// A reduction that reads a constant-padded input (a max pool's windows
/// over an image padded with -inf) reads the input itself instead, each
/// element where it is in bounds and the padding value elsewhere. Tiled,
/// the pad was each thread's window copied into a private buffer filled
/// with the padding value, which on the GPU lives in local memory: on an
/// H200 the ResNet-50 stem block's max pool loaded 122 MB from local memory
/// at batch 17 (every window element through it) and took 102 us.
static void readPadsInPlace(func::FuncOp func) {
  SmallVector<linalg::GenericOp> generics;
  func.walk([&](linalg::GenericOp op) {
    if (op.getNumReductionLoops() > 0 && op.hasPureTensorSemantics())
      generics.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  for (linalg::GenericOp op : generics) {
    OpOperand *padded = nullptr;
    tensor::PadOp pad;
    Value padValue;
    for (OpOperand *input : op.getDpsInputOperands()) {
      pad = input->get().getDefiningOp<tensor::PadOp>();
      if (pad && pad->hasOneUse() && !pad.getNofold() &&
          (padValue = pad.getConstantPaddingValue())) {
        padded = input;
        break;
      }
    }
    if (!padded)
      continue;
    Value source = pad.getSource();
    AffineMap map = op.getMatchingIndexingMap(padded);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands())
      if (input != padded) {
        inputs.push_back(input->get());
        maps.push_back(op.getMatchingIndexingMap(input));
      }
    for (OpOperand &init : op.getDpsInitsMutable())
      maps.push_back(op.getMatchingIndexingMap(&init));
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    // Per padded dimension, its low padding and the source's size (null
    // where the dimension is not padded).
    SmallVector<Value> lows, sizes;
    for (int64_t d = 0, e = map.getNumResults(); d < e; ++d) {
      OpFoldResult low = pad.getMixedLowPad()[d];
      bool isPadded = !isConstantIntValue(low, 0) ||
                      !isConstantIntValue(pad.getMixedHighPad()[d], 0);
      lows.push_back(isPadded
                         ? getValueOrCreateConstantIndexOp(rewriter, loc, low)
                         : Value());
      sizes.push_back(
          isPadded ? Value(tensor::DimOp::create(rewriter, loc, source, d))
                   : Value());
    }
    auto reading =
        moveIntoGeneric(rewriter, op, op.getResultTypes(), inputs,
                        op.getDpsInits(), maps, op.getIteratorTypesArray());
    Block &block = reading.getRegion().front();
    rewriter.setInsertionPointToStart(&block);
    // The element read: in bounds of the source, the source's; else the
    // padding value.
    SmallVector<Value> loops;
    for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d)
      loops.push_back(linalg::IndexOp::create(rewriter, loc, d));
    Value inBounds;
    SmallVector<Value> indices;
    for (int64_t d = 0, e = map.getNumResults(); d < e; ++d) {
      Value index = affine::makeComposedAffineApply(
                        rewriter, loc, map.getSubMap({unsigned(d)}),
                        getAsOpFoldResult(loops))
                        .getResult();
      if (!lows[d]) {
        indices.push_back(index);
        continue;
      }
      Value shifted = arith::SubIOp::create(rewriter, loc, index, lows[d]);
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value above = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, shifted, zero);
      Value below = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::slt, shifted, sizes[d]);
      Value both = arith::AndIOp::create(rewriter, loc, above, below);
      inBounds = inBounds ? arith::AndIOp::create(rewriter, loc, inBounds, both)
                          : both;
      indices.push_back(shifted);
    }
    Value element;
    if (!inBounds) {
      element = tensor::ExtractOp::create(rewriter, loc, source, indices);
    } else {
      auto branch = scf::IfOp::create(rewriter, loc,
                                      TypeRange{padValue.getType()}, inBounds,
                                      /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(branch.thenBlock());
        Value read = tensor::ExtractOp::create(rewriter, loc, source, indices);
        scf::YieldOp::create(rewriter, loc, read);
        rewriter.setInsertionPointToStart(branch.elseBlock());
        scf::YieldOp::create(rewriter, loc, padValue);
      }
      element = branch.getResult(0);
    }
    unsigned argument = padded->getOperandNumber();
    rewriter.replaceAllUsesWith(block.getArgument(argument), element);
    block.eraseArgument(argument);
    rewriter.replaceOp(op, reading->getResults());
    if (pad->use_empty())
      rewriter.eraseOp(pad);
  }
}

/// Gives every kernel result computed into a `tensor.empty` its destination
/// argument instead (collapsed as the result is expanded from the value
/// computed, where unit dimensions were dropped): canonicalization erases an
/// identity copy into the destination (a Shape of a symbolic input sliced to
/// one dimension, built by a generic that writes the symbol), which leaves
/// the value computed into the empty the copy read.
static void computeResultsInPlace(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  unsigned first = func.getNumArguments() - ret.getNumOperands();
  OpBuilder builder(func.getContext());
  for (OpOperand &operand : ret->getOpOperands()) {
    Value destination = func.getArgument(first + operand.getOperandNumber());
    Value value = operand.get();
    SmallVector<tensor::ExpandShapeOp> expands;
    while (value.hasOneUse()) {
      if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>()) {
        expands.push_back(expand);
        value = expand.getSrc();
        continue;
      }
      auto dps = value.getDefiningOp<DestinationStyleOpInterface>();
      if (!dps || !isa<linalg::LinalgOp>(dps.getOperation()))
        break;
      value = dps.getTiedOpOperand(cast<OpResult>(value))->get();
    }
    auto empty = value.getDefiningOp<tensor::EmptyOp>();
    Type computed = expands.empty() ? Type(operand.get().getType())
                                    : Type(expands.back().getSrcType());
    if (!empty || !empty->hasOneUse() ||
        operand.get().getType() != destination.getType() ||
        empty.getType() != computed)
      continue;
    builder.setInsertionPoint(empty);
    Value inPlace = destination;
    for (tensor::ExpandShapeOp expand : expands)
      inPlace = tensor::CollapseShapeOp::create(
          builder, empty.getLoc(), expand.getSrcType(), inPlace,
          expand.getReassociationIndices());
    empty.getResult().replaceAllUsesWith(inPlace);
  }
}

/// Gives every slice of a kernel result that holds a kernel argument as it
/// is (a Concat of inputs) a `linalg.copy` into it: the copy is a root that
/// tiling spreads over the grid, where the insert alone would be one whole
/// copy that every block repeats.
static void copyArgumentsIntoSlices(func::FuncOp func) {
  SmallVector<tensor::InsertSliceOp> inserts;
  for (auto insert : func.getBody().front().getOps<tensor::InsertSliceOp>())
    inserts.push_back(insert);
  IRRewriter rewriter(func.getContext());
  for (tensor::InsertSliceOp insert : inserts) {
    Value source = skipReshapesAndCasts(insert.getSource());
    if (!isa<BlockArgument>(source))
      continue;
    // Copy the argument itself where it has the slice's full rank: the
    // source may be it with unit dimensions dropped (down to a scalar, which
    // would leave the copy with no loop to tile).
    Value input = insert.getSource();
    RankedTensorType full = tensor::ExtractSliceOp::inferResultType(
        insert.getDestType(), insert.getStaticSizes());
    if (source.getType() == full)
      input = source;
    rewriter.setInsertionPoint(insert);
    Location loc = insert.getLoc();
    Value slot = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(input.getType()),
        insert.getDest(), insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
    Value copy = linalg::CopyOp::create(rewriter, loc, input, slot).getResult(0);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        insert, copy, insert.getDest(), insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
  }
}

/// Gives every kernel result that is another argument as it is (an
/// identity Cast or Expand folds to its input) a `linalg.copy` into the
/// result's destination, the last arguments in result order: the kernel
/// writes its results into their destinations, and with no op to tile
/// nothing would be written.
static void copyArgumentsIntoResults(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  unsigned first = func.getNumArguments() - ret.getNumOperands();
  IRRewriter rewriter(func.getContext());
  for (OpOperand &operand : ret->getOpOperands()) {
    Value source = skipReshapesAndCasts(operand.get());
    Value destination =
        func.getArgument(first + operand.getOperandNumber());
    if (!isa<BlockArgument>(source) || source == destination ||
        operand.get().getType() != destination.getType())
      continue;
    rewriter.setInsertionPoint(ret);
    operand.set(linalg::CopyOp::create(rewriter, ret.getLoc(), operand.get(),
                                       destination)
                    .getResult(0));
  }
}

/// `value`, computed again into a destination of its own: the DPS ops that
/// compute it in place are cloned, down to the destination they start from,
/// which becomes a `tensor.empty` of its shape where it is a kernel
/// argument (or a reshape of one). Returns null where `value` is not
/// computed so.
static Value cloneIntoPrivateDestination(OpBuilder &builder, Value value,
                                         unsigned depth = 0) {
  if (depth > 16)
    return {};
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return {};
  Location loc = value.getLoc();
  if (isa<BlockArgument>(skipReshapesAndCasts(value)))
    return tensor::EmptyOp::create(builder, loc,
                                   tensor::getMixedSizes(builder, loc, value),
                                   type.getElementType());
  auto dps = value.getDefiningOp<DestinationStyleOpInterface>();
  if (!dps || !isa<linalg::LinalgOp>(dps.getOperation()) ||
      dps->getNumResults() != 1)
    return {};
  Value init = dps.getDpsInitOperand(0)->get();
  Value privateInit = cloneIntoPrivateDestination(builder, init, depth + 1);
  if (!privateInit)
    return {};
  IRMapping mapping;
  mapping.map(init, privateInit);
  return builder.clone(*dps, mapping)->getResult(0);
}

/// Gives the other readers of a kernel result (a LayerNormalization's Mean,
/// which its Y also reads) a copy computed into a destination of its own
/// (cloneIntoPrivateDestination). Fused into their tiles, the op that
/// writes the result would write it there too, from every block that reads
/// it; the result itself is written by its own root. The readers recompute
/// it, as they would any fused producer.
static void privatizeSharedResults(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder builder(func.getContext());
  for (Value result : ret.getOperands()) {
    // The chain of reshapes from the computed value to the result.
    SmallVector<Value> chain{result};
    while (Operation *def = chain.back().getDefiningOp()) {
      if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
               tensor::CastOp>(def))
        break;
      chain.push_back(def->getOperand(0));
    }
    std::reverse(chain.begin(), chain.end());
    auto root = chain.front().getDefiningOp<linalg::LinalgOp>();
    if (!root)
      continue;
    // Uses outside the chain and the return.
    SmallVector<OpOperand *> others;
    for (auto [i, value] : llvm::enumerate(chain))
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        bool next = i + 1 < chain.size() &&
                    user == chain[i + 1].getDefiningOp();
        if (!next && user != ret.getOperation())
          others.push_back(&use);
      }
    if (others.empty())
      continue;
    builder.setInsertionPointAfter(root);
    Value copy = cloneIntoPrivateDestination(builder, chain.front());
    if (!copy)
      continue;
    IRMapping mapping;
    mapping.map(chain.front(), copy);
    for (Value value : ArrayRef(chain).drop_front()) {
      Operation *reshape = value.getDefiningOp();
      builder.setInsertionPointAfter(reshape);
      mapping.map(value, builder.clone(*reshape, mapping)->getResult(0));
    }
    for (OpOperand *use : others)
      use->set(mapping.lookup(use->get()));
  }
}

/// A kernel result that a sequential loop computes (NonZero's scan, whose
/// destination has exactly the size the data gives): the loop runs whole in
/// one block of one thread, in the block and thread foralls tiling would
/// give it; the loop's users read the block forall's result.
static void runSequentially(RewriterBase &rewriter, scf::ForOp loop,
                             unsigned index) {
  Location loc = loop.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value result = loop.getResult(index);
  SmallVector<OpOperand *> uses =
      llvm::map_to_vector(result.getUses(), [](OpOperand &use) {
        return &use;
      });
  Value dest = loop.getInitArgs()[index];
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  OpFoldResult one = rewriter.getIndexAttr(1);
  auto forall = [&](Value out, Attribute mapping) {
    return scf::ForallOp::create(rewriter, loc, ArrayRef<OpFoldResult>{one},
                                 ValueRange{out},
                                 rewriter.getArrayAttr({mapping}));
  };
  // Inserts `value` whole into `loop`'s shared output, from its terminator.
  auto insertWhole = [&](scf::ForallOp loop, Value value) {
    Value into = loop.getRegionIterArgs()[0];
    rewriter.setInsertionPoint(loop.getTerminator());
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, into);
    rewriter.setInsertionPointToStart(loop.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, value, into,
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)), sizes,
        SmallVector<OpFoldResult>(rank, one));
  };
  rewriter.setInsertionPoint(loop);
  scf::ForallOp blocks =
      forall(dest, gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX));
  rewriter.setInsertionPointToStart(blocks.getBody());
  scf::ForallOp threads =
      forall(blocks.getRegionIterArgs()[0],
             gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX));
  rewriter.moveOpBefore(loop, threads.getBody()->getTerminator());
  rewriter.modifyOpInPlace(loop, [&] {
    loop.getInitArgsMutable()[index].assign(threads.getRegionIterArgs()[0]);
  });
  insertWhole(threads, result);
  insertWhole(blocks, threads.getResult(0));
  for (OpOperand *use : uses)
    rewriter.modifyOpInPlace(use->getOwner(),
                             [&] { use->set(blocks.getResult(0)); });
}

/// Collects the tileable ops whose results reach `value`, a kernel result,
/// through reshapes, casts and insert_slices.
static LogicalResult collectRoots(Value value, SetVector<Operation *> &roots) {
  while (true) {
    value = getReshapedSource(value);
    if (isa<BlockArgument>(value))
      return success();
    Operation *def = value.getDefiningOp();
    if (isa<TilingInterface>(def) && !isa<tensor::PadOp>(def)) {
      roots.insert(def);
      return success();
    }
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(def)) {
      if (failed(collectRoots(insert.getSource(), roots)))
        return failure();
      value = insert.getDest();
      continue;
    }
    if (isa<tensor::EmptyOp>(def))
      return success();
    return def->emitOpError("produces a kernel result but cannot be tiled");
  }
}

/// The tile sizes of `root` (one per leading parallel loop) from `sizes`,
/// which are for the kernel's first result: aligned to the innermost
/// dimension, with 1 for outer dimensions the config does not cover.
static SmallVector<int64_t> alignSizes(ArrayRef<int64_t> sizes, int64_t rank) {
  SmallVector<int64_t> out;
  int64_t offset = static_cast<int64_t>(sizes.size()) - rank;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(i + offset >= 0 ? sizes[i + offset] : 1);
  return out;
}

/// The grid mapping of tiled dimension `i` of `n`: innermost x, then y, then
/// z, and linear dimensions beyond (folded into z).
static gpu::MappingId getMappingId(size_t i, size_t n) {
  return static_cast<gpu::MappingId>(n - 1 - i);
}

/// The tiled loops (those of a non-zero size in `sizes`) in the order they
/// take the grid's dimensions (getMappingId's `i`): their own, or that of
/// `order` (a place per loop, getProductLayout's view) where given.
static SmallVector<int64_t> getGridLoops(ArrayRef<int64_t> sizes,
                                         ArrayRef<int64_t> order) {
  SmallVector<int64_t> loops;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (size != 0)
      loops.push_back(i);
  // `order` is a permutation: no ties.
  if (!order.empty())
    llvm::sort(loops,
               [&](int64_t a, int64_t b) { return order[a] < order[b]; });
  return loops;
}

/// Tiles `op` and fuses its producers as `options` say, replaces its
/// results, and erases it and the producers it made dead (adding them to
/// `erased`, if given; another root may still read a producer). Returns the
/// tiled op.
static FailureOr<Operation *>
tileAndFuse(RewriterBase &rewriter, TilingInterface op,
            const scf::SCFTileAndFuseOptions &options, StringRef error,
            DenseSet<Operation *> *erased = nullptr) {
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, op, options);
  if (failed(result))
    return op->emitOpError(error);
  for (OpResult value : op->getResults())
    rewriter.replaceAllUsesWith(value, result->replacements.lookup(value));
  SmallVector<Operation *> dead{op};
  dead.append(result->fusedProducers.begin(), result->fusedProducers.end());
  for (Operation *deadOp : dead) {
    if (!deadOp->use_empty())
      continue;
    if (erased)
      erased->insert(deadOp);
    rewriter.eraseOp(deadOp);
  }
  return result->tiledAndFusedOps.front();
}

/// Tiles `root` with `sizes` (per loop; 0 keeps a loop whole) into an
/// scf.forall with the given mapping, and fuses its producers. With
/// `deferPads`, a pad read by a reduction (a conv's padded input) is left
/// for the k-step level: fused here it would be padded whole over every
/// reduced dimension (all input channels), fused per step it is one step's
/// window. The tiled loops take the grid's dimensions as getGridLoops
/// orders them. Returns the tiled root.
static FailureOr<TilingInterface>
tileLevel(RewriterBase &rewriter, TilingInterface root, ArrayRef<int64_t> sizes,
          bool threads, bool deferPads, bool fuseDestinations = true,
          bool fusePads = true, bool warps = false,
          ArrayRef<int64_t> order = {}, bool linear = false) {
  MLIRContext *ctx = rewriter.getContext();
  size_t numLoops = root.getLoopIteratorTypes().size();
  SmallVector<int64_t> allSizes(sizes.begin(), sizes.end());
  allSizes.resize(numLoops, 0);
  size_t tiled = llvm::count_if(allSizes, [](int64_t s) { return s != 0; });
  if (tiled == 0)
    return root;
  if (tiled > 3 + 9)
    return root->emitOpError("has ") << tiled << " tiled loops, at most 12";

  // The forall's mapping, per tiled loop in loop order.
  SmallVector<int64_t> gridLoops = getGridLoops(allSizes, order);
  SmallVector<Attribute> mapping;
  if (linear && threads) {
    // One loop over all the block's threads as one linear index, the tiled
    // loops delinearized from it, the innermost fastest (linear_dim_0).
    for (size_t k = 0; k < tiled; ++k)
      mapping.push_back(gpu::GPUThreadMappingAttr::get(
          ctx, static_cast<gpu::MappingId>(
                   static_cast<uint64_t>(gpu::MappingId::LinearDim0) +
                   (tiled - 1 - k))));
  } else {
    for (int64_t loop : getGridLoops(allSizes, {})) {
      gpu::MappingId id =
          getMappingId(llvm::find(gridLoops, loop) - gridLoops.begin(), tiled);
      mapping.push_back(
          warps     ? Attribute(gpu::GPUWarpMappingAttr::get(ctx, id))
          : threads ? Attribute(gpu::GPUThreadMappingAttr::get(ctx, id))
                    : Attribute(gpu::GPUBlockMappingAttr::get(ctx, id)));
    }
  }

  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(ctx, allSizes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setMapping(mapping);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [=](tensor::ExtractSliceOp slice, OpResult producer, bool isDestination)
          -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isa<tensor::PadOp>(producer.getOwner()) &&
            (!fusePads ||
             (deferPads && llvm::any_of(slice->getUsers(), hasReductionLoops))))
          return std::nullopt;
        // An accumulator carried by a k-step loop is initialized once,
        // before the loop: fused per tile, it would be reset every step.
        if (isDestination && !fuseDestinations)
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  // A slice of a reshaped producer (a grouped conv's result expanded for a
  // channel shuffle, or a unit dimension put back) becomes a reshape of a
  // slice of the producer, so the producer still fuses into the tile.
  RewritePatternSet cleanup(ctx);
  tensor::populateBubbleUpExtractSliceOpPatterns(cleanup);
  cleanup.add<StaticRankZeroExpansion>(ctx);
  options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanup));

  FailureOr<Operation *> tiledRoot =
      tileAndFuse(rewriter, root, options, "could not be tiled and fused");
  if (failed(tiledRoot))
    return failure();
  return cast<TilingInterface>(*tiledRoot);
}

/// Merges consecutive slices in `scope` and, where `swap` (if given) says so
/// (its result is the zero-slice guard), swaps a slice of a pad with the
/// pad, so the pad covers just the slice; the cast the swap leaves is folded
/// into the pad, so the pad itself is the producer later tiling fuses.
static LogicalResult mergeSlicesOfPads(
    Operation *scope,
    const linalg::ExtractSliceOfPadTensorSwapPattern::ControlFn &swap) {
  MLIRContext *ctx = scope->getContext();
  RewritePatternSet patterns(ctx);
  tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
  if (swap)
    patterns.add<linalg::ExtractSliceOfPadTensorSwapPattern>(ctx, swap);
  tensor::PadOp::getCanonicalizationPatterns(patterns, ctx);
  return applyPatternsGreedily(scope, std::move(patterns));
}

/// The k-step of each loop of an op with `iterators` (TileConfig::getKSteps
/// over its reduction loops), 0 for a parallel one.
static SmallVector<int64_t>
getLoopKSteps(const TileConfig &config,
              ArrayRef<utils::IteratorType> iterators) {
  SmallVector<int64_t, 3> reductionSteps =
      config.getKSteps(llvm::count(iterators, utils::IteratorType::reduction));
  SmallVector<int64_t> steps;
  size_t reduction = 0;
  for (utils::IteratorType type : iterators)
    steps.push_back(type == utils::IteratorType::reduction
                        ? reductionSteps[reduction++]
                        : 0);
  return steps;
}

/// Tiles the reduction loops of every op with reductions inside `scope` (a
/// thread forall) into sequential `scf.for` loops of the config's k-step
/// iterations (TileConfig::getKSteps: per loop where it gives them),
/// fusing producers into each step: a temporary read by a reduction (the
/// prologue of a GEMM, the exponentials of a softmax) then lives one step at
/// a time, bounded by the tile sizes, however long the reduction is.
/// With `padsPerStep` false (the operands are promoted, and their copies
/// pad per thread), pads are neither swapped nor fused: each step reads a
/// slice of the whole padded input.
static LogicalResult tileReductions(RewriterBase &rewriter, Operation *scope,
                                    const TileConfig &config,
                                    bool padsPerStep = true) {
  // A pad deferred by tileLevel is read through a slice of a slice: merged
  // into one slice, then swapped with the pad, it pads just this thread's
  // window, and the k-step loops below fuse it (and its producers) per step.
  // No zero-slice guard: a window wholly in the padding reads an empty
  // slice, which the loops that pad lowers to handle.
  linalg::ExtractSliceOfPadTensorSwapPattern::ControlFn swap;
  if (padsPerStep)
    swap = [](tensor::ExtractSliceOp slice) -> std::optional<bool> {
      if (llvm::any_of(slice->getUsers(), hasReductionLoops))
        return false;
      return std::nullopt;
    };
  if (failed(mergeSlicesOfPads(scope, swap)))
    return failure();
  SmallVector<TilingInterface> reductions;
  scope->walk([&](TilingInterface op) {
    if (hasReductionLoops(op))
      reductions.push_back(op);
  });
  // Consumers first, so their producers are fused before being tiled; a
  // reduction fused into an earlier one's steps is erased, not tiled again.
  DenseSet<Operation *> erased;
  for (TilingInterface op : llvm::reverse(reductions)) {
    if (erased.contains(op))
      continue;
    SmallVector<int64_t> sizes =
        getLoopKSteps(config, op.getLoopIteratorTypes());
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // The accumulator's initialization (a fill) stays before the loop: fused
    // into it, it would reset the accumulator at every step.
    options.setFusionControlFn(
        [=](tensor::ExtractSliceOp, OpResult producer, bool isDestination)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (isDestination)
            return std::nullopt;
          if (!padsPerStep && isa<tensor::PadOp>(producer.getOwner()))
            return std::nullopt;
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        });
    if (failed(tileAndFuse(rewriter, op, options,
                           "could not tile its reduction loops", &erased)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Divisibility
//===----------------------------------------------------------------------===//

/// What the kernel's argument attributes say about divisibility
/// (OutlineGroups records `dyncc.divisor` and `dyncc.dim_divisors` from the
/// symbols' facts), as facts on the names getExtentExpr gives the arguments
/// and their dimensions.
static FactsMap getArgumentFacts(func::FuncOp func) {
  FactsMap facts;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (auto d = func.getArgAttrOfType<IntegerAttr>(i, "dyncc.divisor"))
      facts[getGridArgName(i, std::nullopt)].divisor = d.getInt();
    if (auto dims =
            func.getArgAttrOfType<DenseI64ArrayAttr>(i, "dyncc.dim_divisors"))
      for (auto [d, divisor] : llvm::enumerate(dims.asArrayRef()))
        if (divisor > 1)
          facts[getGridArgName(i, d)].divisor = divisor;
  }
  return facts;
}

/// What dropDivisibleClamps works with, made once per kernel.
struct ClampFacts {
  /// The kernel's entry block: extents are expressions over its arguments.
  Block &entry;
  /// Divisibility of those arguments (getArgumentFacts).
  FactsMap facts;
  /// The canonicalization that makes tile sizes static afterwards.
  const FrozenRewritePatternSet &canonicalization;
};

static bool isMultipleOf(Value v, int64_t n, unsigned depth);

/// True if every result of `map` over `operands` is a multiple of `n` for
/// every value of them, given which operands are (`isMultiple`): those
/// stand as n times themselves.
static bool allResultsMultipleOf(AffineMap map, ValueRange operands, int64_t n,
                                 function_ref<bool(Value)> isMultiple) {
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> dims, symbols;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    bool isDim = i < map.getNumDims();
    AffineExpr e = isDim ? getAffineDimExpr(i, ctx)
                         : getAffineSymbolExpr(i - map.getNumDims(), ctx);
    if (isMultiple(operand))
      e = e * n;
    (isDim ? dims : symbols).push_back(e);
  }
  return llvm::all_of(map.getResults(), [&](AffineExpr result) {
    return simplifyAffineExpr(result.replaceDimsAndSymbols(dims, symbols),
                              map.getNumDims(), map.getNumSymbols())
        .isMultipleOf(n);
  });
}

/// True if the loop bound `ub` is provably a multiple of `n`: an extent the
/// facts say is, or the clamp of an outer tile, `min(tile, extent - iv)`,
/// whose every term is (the tile, the extent, the outer iv).
static bool isDivisibleExtent(OpFoldResult ub, int64_t n,
                              const ClampFacts &known, unsigned depth = 0) {
  if (depth > 8)
    return false;
  FailureOr<DimExpr> expr = getKernelExtentExpr(ub, known.entry);
  if (succeeded(expr))
    return isDivisibleBy(*expr, n, known.facts);
  auto value = dyn_cast<Value>(ub);
  auto min = value ? value.getDefiningOp<affine::AffineMinOp>() : nullptr;
  if (!min)
    return false;
  return allResultsMultipleOf(
      min.getAffineMap(), min.getOperands(), n, [&](Value operand) {
        return isMultipleOf(operand, n, 0) ||
               isDivisibleExtent(operand, n, known, depth + 1);
      });
}

/// Replaces the clamp `min(step, ub - iv)` of a tile loop to `ub` (whose
/// induction variable is a multiple of `step`: from 0, or a lane's start) by
/// `step` where `ub` is known to be a multiple of `step`: every tile is then
/// full, its sizes become static, and the masked tail code disappears.
/// Returns true if any clamp was replaced.
static bool dropDivisibleClamps(RewriterBase &rewriter, Operation *scope,
                                const ClampFacts &known) {
  SmallVector<affine::AffineMinOp> clamps;
  scope->walk([&](affine::AffineMinOp op) { clamps.push_back(op); });
  bool changed = false;
  for (affine::AffineMinOp clamp : clamps) {
    AffineMap map = clamp.getAffineMap();
    if (map.getNumResults() != 2)
      continue;
    ValueRange operands = clamp.getOperands();
    auto operandExpr = [&](unsigned i) -> AffineExpr {
      return i < map.getNumDims() ? getAffineDimExpr(i, clamp.getContext())
                                  : getAffineSymbolExpr(i - map.getNumDims(),
                                                        clamp.getContext());
    };
    bool replaced = false;
    for (unsigned r = 0; r < 2 && !replaced; ++r) {
      auto step = dyn_cast<AffineConstantExpr>(map.getResult(r));
      AffineExpr rest = map.getResult(1 - r);
      if (!step || step.getValue() <= 0)
        continue;
      for (unsigned iv = 0; iv < operands.size() && !replaced; ++iv) {
        // A loop induction variable in steps of `step`.
        auto arg = dyn_cast<BlockArgument>(operands[iv]);
        if (!arg)
          continue;
        Operation *loop = arg.getOwner()->getParentOp();
        std::optional<OpFoldResult> ub;
        if (auto forall = dyn_cast<scf::ForallOp>(loop)) {
          unsigned pos = arg.getArgNumber();
          if (pos >= forall.getRank())
            continue;
          ub = forall.getMixedUpperBound()[pos];
        } else if (auto forOp = dyn_cast<scf::ForOp>(loop)) {
          if (arg != forOp.getInductionVar())
            continue;
          ub = forOp.getUpperBound();
        } else {
          continue;
        }
        // Every iv is then a multiple of `step` below `ub`, a multiple
        // too: the tile at iv is whole.
        if (!isMultipleOf(Value(arg), step.getValue(), 0))
          continue;
        FailureOr<DimExpr> ubExpr = getKernelExtentExpr(*ub, known.entry);
        if (!isDivisibleExtent(*ub, step.getValue(), known))
          continue;
        auto ubValue = dyn_cast<Value>(*ub);
        for (unsigned u = 0; u < operands.size() && !replaced; ++u) {
          // The clamp's bound is the loop's (tiling reads a dimension more
          // than once, so compare what the values are, not which they are).
          FailureOr<DimExpr> bound = getKernelExtentExpr(operands[u], known.entry);
          bool same =
              (ubValue && operands[u] == ubValue) ||
              (succeeded(ubExpr) && succeeded(bound) && *bound == *ubExpr);
          if (!same ||
              simplifyAffineExpr(rest - (operandExpr(u) - operandExpr(iv)),
                                 map.getNumDims(), map.getNumSymbols()) !=
                  getAffineConstantExpr(0, clamp.getContext()))
            continue;
          rewriter.setInsertionPoint(clamp);
          rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(clamp,
                                                              step.getValue());
          replaced = true;
        }
      }
    }
    changed |= replaced;
  }
  if (!changed)
    return false;
  // Static tile sizes propagate into the slices' types and the inner loops.
  (void)applyPatternsGreedily(scope, known.canonicalization);
  return true;
}

/// The outermost tile loop around `op` (its block forall), or null.
static Operation *getBlockLoop(Operation *op) {
  Operation *outer = nullptr;
  for (auto f = op->getParentOfType<scf::ForallOp>(); f;
       f = f->getParentOfType<scf::ForallOp>())
    outer = f;
  return outer;
}

/// dropDivisibleClamps inside the block loop of tiled `root`, returning
/// `root` as it is afterwards (the canonicalization that makes sizes static
/// may rebuild it). Nothing outside the loop changes: the roots still to be
/// tiled stay as they are.
static TilingInterface dropClampsKeeping(RewriterBase &rewriter,
                                         TilingInterface root,
                                         const ClampFacts &known) {
  Operation *scope = getBlockLoop(root);
  if (!scope)
    return root;
  constexpr StringLiteral mark = "__dyncc.tiled_root";
  root->setAttr(mark, rewriter.getUnitAttr());
  if (dropDivisibleClamps(rewriter, scope, known))
    scope->walk([&](TilingInterface op) {
      if (op->hasAttr(mark))
        root = op;
    });
  root->removeAttr(mark);
  return root;
}

//===----------------------------------------------------------------------===//
// GEMM and conv blocks: k-steps at block level, operands in shared memory
//===----------------------------------------------------------------------===//

/// The marker of the root while its block is restructured.
constexpr StringLiteral kRootMark = "__dyncc.tiled_root";

/// True if `op` sits in a thread-mapped forall.
static bool inThreadForall(Operation *op) {
  for (auto f = op->getParentOfType<scf::ForallOp>(); f;
       f = f->getParentOfType<scf::ForallOp>()) {
    std::optional<ArrayAttr> mapping = f.getMapping();
    if (mapping && !mapping->empty() &&
        isa<gpu::GPUThreadMappingAttr, gpu::GPUWarpMappingAttr>((*mapping)[0]))
      return true;
  }
  return false;
}

/// The thread tile of an op with `rank` leading parallel loops: the config's,
/// aligned to the innermost dimensions, over the innermost three only (the
/// thread foralls distribute those; each thread walks the rest).
static SmallVector<int64_t> getThreadSizes(const TileConfig &config,
                                           int64_t rank) {
  SmallVector<int64_t> sizes = alignSizes(config.threadTile, rank);
  for (int64_t i = 0; i + 3 < rank; ++i)
    sizes[i] = 0;
  return sizes;
}


/// True for an op with no parallel loops and only scalar results, on
/// tensors.
static bool isScalarOp(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && getParallelRank(op) == 0 &&
         linalgOp.hasPureTensorSemantics() &&
         llvm::all_of(linalgOp.getDpsInits(), [](Value init) {
           return cast<RankedTensorType>(init.getType()).getRank() == 0;
         });
}

static FailureOr<linalg::GenericOp>
expandScalarOp(RewriterBase &rewriter, linalg::LinalgOp linalgOp,
               unsigned depth);

/// `init`, a scalar destination, as a `[1]` one. Where it is filled, or is
/// the result of another scalar op read by nothing else (a mean's sum that
/// the division updates in place), that producer is expanded too: it then
/// stays the destination's producer, which tiling fuses into the tile; behind
/// a reshape it would stay outside the block tiles.
static FailureOr<Value> expandScalarDestination(RewriterBase &rewriter,
                                                Location loc, Value init,
                                                unsigned depth) {
  auto type = cast<RankedTensorType>(init.getType());
  auto expanded = RankedTensorType::get({1}, type.getElementType());
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    FailureOr<Value> destination =
        expandScalarDestination(rewriter, loc, fill.getOutputs()[0], depth);
    if (failed(destination))
      return failure();
    return linalg::FillOp::create(rewriter, loc, fill.getInputs()[0],
                                  *destination)
        .getResult(0);
  }
  Operation *def = init.getDefiningOp();
  if (depth < 8 && isScalarOp(def) && init.hasOneUse() &&
      def->getNumResults() == 1) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(def);
    FailureOr<linalg::GenericOp> producer =
        expandScalarOp(rewriter, cast<linalg::LinalgOp>(def), depth + 1);
    if (failed(producer))
      return failure();
    return producer->getResult(0);
  }
  return tensor::ExpandShapeOp::create(rewriter, loc, expanded, init,
                                       ArrayRef<ReassociationIndices>{})
      .getResult();
}

/// Rewrites scalar op `linalgOp` (isScalarOp) as a generic with one more,
/// leading, parallel loop of extent 1 and its destinations expanded to
/// `[1]` (expandScalarDestination); its uses get its results collapsed
/// back.
static FailureOr<linalg::GenericOp>
expandScalarOp(RewriterBase &rewriter, linalg::LinalgOp linalgOp,
               unsigned depth) {
  rewriter.setInsertionPoint(linalgOp);
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!op) {
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, linalgOp);
    if (failed(generic))
      return linalgOp->emitOpError(
          "has a scalar result but could not be generalized");
    op = *generic;
  }
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  unsigned numLoops = op.getNumLoops();
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(input).shiftDims(1));
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (Value init : op.getDpsInits()) {
    FailureOr<Value> expandedInit =
        expandScalarDestination(rewriter, loc, init, depth);
    if (failed(expandedInit))
      return failure();
    inits.push_back(*expandedInit);
    types.push_back(expandedInit->getType());
    maps.push_back(AffineMap::get(numLoops + 1, 0, getAffineDimExpr(0, ctx)));
  }
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
  llvm::append_range(iterators, op.getIteratorTypesArray());
  auto expanded = moveIntoGeneric(rewriter, op, types, op.getDpsInputs(), inits,
                                  maps, iterators);
  expanded.getRegion().walk([&](linalg::IndexOp index) {
    rewriter.modifyOpInPlace(index,
                             [&] { index.setDim(index.getDim() + 1); });
  });
  SmallVector<Value> results;
  for (auto [result, type] :
       llvm::zip(expanded.getResults(), op.getResultTypes()))
    results.push_back(tensor::CollapseShapeOp::create(
        rewriter, loc, type, result, ArrayRef<ReassociationIndices>{}));
  rewriter.replaceOp(op, results);
  return expanded;
}

/// Rewrites a root with no parallel loops and only scalar results (a Gather
/// of one element, a ReduceSum over every axis, a copy into one element of a
/// Concat) as a generic with one more, leading, parallel loop of extent 1
/// (expandScalarOp), so it is tiled to one block and one thread like any
/// root. Without a parallel loop it would stay at the kernel's top level,
/// where every thread of every block would write it. Any other root is
/// returned as it is.
static FailureOr<Operation *> expandScalarRoot(RewriterBase &rewriter,
                                               Operation *root) {
  if (!isScalarOp(root))
    return root;
  FailureOr<linalg::GenericOp> expanded =
      expandScalarOp(rewriter, cast<linalg::LinalgOp>(root), 0);
  if (failed(expanded))
    return failure();
  return expanded->getOperation();
}

/// The static upper bound of a tile size, or kNoHi.
static int64_t getSizeBound(OpFoldResult size) {
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return *c;
  return getBounds(cast<Value>(size)).hi;
}

/// Promotes the input operands of `op`, a contraction or convolution in a
/// block's k-step loop, to tiles in shared memory ("local padding"): each
/// operand is copied into a buffer whose reduced dimensions (those indexed
/// by a reduction loop alone) have their static bound, and the rest of those
/// dimensions is filled with 0, the identity of the sum of products. The
/// compute then runs over a static k-step with no masks; the parallel
/// dimensions keep the tile's sizes, so stores stay predicated. Returns the
/// copies and fills, which the block's threads then share, each with the
/// static bounds of the buffer it writes; fails, leaving
/// `op` as it is, when a bound is unknown or the buffers would not fit in
/// `budget` (bytes of shared memory left).
/// Static bounds of the trip counts of `op`'s loops, from every operand
/// dimension a loop indexes alone (kNoHi where none is bounded).
static SmallVector<int64_t> getLoopBounds(RewriterBase &rewriter,
                                          linalg::LinalgOp op) {
  SmallVector<int64_t> bounds(op.getNumLoops(), kNoHi);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, op.getLoc(), operand.get());
    for (auto [r, e] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        bounds[dim.getPosition()] =
            std::min(bounds[dim.getPosition()], getSizeBound(sizes[r]));
  }
  return bounds;
}

/// One more than the largest value of `e` (an operand's index, a sum of
/// non-negative multiples of loop indices) given the loops' trip-count
/// bounds: the static bound of a dimension indexed by it, e.g. a conv
/// window's `(OH - 1) * stride + (KH - 1) * dilation + 1`. kNoHi if unknown.
static int64_t getMaxIndex(AffineExpr e, ArrayRef<int64_t> loopBounds) {
  std::function<std::optional<int64_t>(AffineExpr)> max =
      [&](AffineExpr x) -> std::optional<int64_t> {
    if (auto c = dyn_cast<AffineConstantExpr>(x))
      return c.getValue();
    if (auto d = dyn_cast<AffineDimExpr>(x)) {
      int64_t b = loopBounds[d.getPosition()];
      if (b == kNoHi || b <= 0)
        return std::nullopt;
      return b - 1;
    }
    auto bin = dyn_cast<AffineBinaryOpExpr>(x);
    if (!bin)
      return std::nullopt;
    std::optional<int64_t> l = max(bin.getLHS());
    if (!l)
      return std::nullopt;
    if (x.getKind() == AffineExprKind::Add) {
      std::optional<int64_t> r = max(bin.getRHS());
      if (!r)
        return std::nullopt;
      return *l + *r;
    }
    auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
    if (x.getKind() == AffineExprKind::Mul && c && c.getValue() >= 0)
      return *l * c.getValue();
    return std::nullopt;
  };
  std::optional<int64_t> m = max(e);
  return m && *m >= 0 ? *m + 1 : kNoHi;
}

/// The bytes of shared memory promoting the operands of the reduction ops in
/// `blockLoop` (before their k-steps are tiled) would take, with reduction
/// loops of at most the config's k-step iterations (per loop where it gives
/// them); kNoHi if some tile has no bound or an op cannot be promoted.
static int64_t estimateSharedBytes(RewriterBase &rewriter, Operation *blockLoop,
                                   const TileConfig &config) {
  int64_t bytes = 0;
  WalkResult result = blockLoop->walk([&](linalg::LinalgOp op) {
    if (!hasReductionLoops(op) || inThreadForall(op))
      return WalkResult::advance();
    if (!op.hasPureTensorSemantics() ||
        !(linalg::isaContractionOpInterface(op) ||
          linalg::isaConvolutionOpInterface(op)))
      return WalkResult::interrupt();
    // A reduction loop that also indexes a window (a conv's filter taps,
    // `oh * s + kh`) must never take a partial step: a padded tap would
    // meet real input (0 x inf is not 0). Taps are static and usually
    // within one step.
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    SmallVector<int64_t> steps =
        getLoopKSteps(config, op.getIteratorTypesArray());
    for (AffineMap map : op.getIndexingMapsArray())
      for (AffineExpr e : map.getResults()) {
        if (isa<AffineDimExpr>(e))
          continue;
        for (auto [loop, step] : llvm::enumerate(steps))
          if (step != 0 && e.isFunctionOfDim(loop) &&
              (ShapedType::isDynamic(extents[loop]) ||
               (extents[loop] > step && extents[loop] % step != 0)))
            return WalkResult::interrupt();
      }
    rewriter.setInsertionPoint(op);
    SmallVector<int64_t> loops = getLoopBounds(rewriter, op);
    for (auto [bound, step] : llvm::zip(loops, steps))
      if (step != 0)
        bound = std::min(bound, step);
    for (OpOperand *operand : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand->get().getType());
      int64_t elementBytes = type ? getElementBytes(type.getElementType()) : 0;
      if (!type || elementBytes == 0)
        return WalkResult::interrupt();
      int64_t elements = 1;
      for (AffineExpr e : op.getMatchingIndexingMap(operand).getResults()) {
        int64_t bound = getMaxIndex(e, loops);
        if (bound == kNoHi)
          return WalkResult::interrupt();
        elements *= bound;
      }
      bytes += getSharedBufferBytes(elements, elementBytes);
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted() ? kNoHi : bytes;
}

//===----------------------------------------------------------------------===//
// Copies in chunks (tensor-core operands)
//===----------------------------------------------------------------------===//

/// True if `v` is provably a multiple of `n`: a constant, a loop induction
/// variable whose lower bound and step are, an affine.apply whose result is
/// for every value of its operands that are, or a sum or product of such.
static bool isMultipleOf(OpFoldResult ofr, int64_t n, unsigned depth = 0) {
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return *c % n == 0;
  return isMultipleOf(cast<Value>(ofr), n, depth);
}

static bool isMultipleOf(Value v, int64_t n, unsigned depth) {
  if (depth > 16)
    return false;
  if (std::optional<int64_t> c = getConstantIntValue(v))
    return *c % n == 0;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *parent = arg.getOwner()->getParentOp();
    if (auto forOp = dyn_cast_or_null<scf::ForOp>(parent))
      return arg == forOp.getInductionVar() &&
             isMultipleOf(forOp.getLowerBound(), n, depth + 1) &&
             isMultipleOf(forOp.getStep(), n, depth + 1);
    if (auto forall = dyn_cast_or_null<scf::ForallOp>(parent)) {
      unsigned i = arg.getArgNumber();
      return i < forall.getRank() &&
             isMultipleOf(forall.getMixedLowerBound()[i], n, depth + 1) &&
             isMultipleOf(forall.getMixedStep()[i], n, depth + 1);
    }
    return false;
  }
  if (auto apply = v.getDefiningOp<affine::AffineApplyOp>())
    return allResultsMultipleOf(
        apply.getAffineMap(), apply.getMapOperands(), n,
        [&](Value operand) { return isMultipleOf(operand, n, depth + 1); });
  // Split-K's k offset: part * (K / parts) + k, linearized. Each index
  // times its stride (the product of the basis after it) is a multiple.
  if (auto linearize = v.getDefiningOp<affine::AffineLinearizeIndexOp>()) {
    SmallVector<OpFoldResult> basis = linearize.getPaddedBasis();
    ValueRange indices = linearize.getMultiIndex();
    std::optional<int64_t> stride = 1;
    for (int64_t i = static_cast<int64_t>(indices.size()) - 1; i >= 0; --i) {
      if (!(stride && *stride % n == 0) &&
          !isMultipleOf(indices[i], n, depth + 1))
        return false;
      std::optional<int64_t> bound =
          basis[i] ? getConstantIntValue(basis[i]) : std::nullopt;
      stride = stride && bound ? std::optional<int64_t>(*stride * *bound)
                               : std::nullopt;
    }
    return true;
  }
  if (auto mul = v.getDefiningOp<arith::MulIOp>())
    return isMultipleOf(mul.getLhs(), n, depth + 1) ||
           isMultipleOf(mul.getRhs(), n, depth + 1);
  if (auto add = v.getDefiningOp<arith::AddIOp>())
    return isMultipleOf(add.getLhs(), n, depth + 1) &&
           isMultipleOf(add.getRhs(), n, depth + 1);
  return false;
}

/// The innermost dimension of `type` that is not a static 1 (the last if
/// all are): static unit dimensions after it change no element's offset,
/// so it is the innermost in memory ([F, C, 1, 1] weights are [F, C]).
static int64_t getInnermostNonUnitDim(RankedTensorType type) {
  int64_t d = type.getRank() - 1;
  while (d > 0 && type.getDimSize(d) == 1)
    --d;
  return d;
}

/// True if `tensor` is a kernel argument (global memory), or a view of one
/// (unit-stride slices, collapses, and expansions that keep its innermost
/// dimension or split it into an innermost extent that `n` divides), in
/// which every vector of `n` elements along the innermost dimension
/// starting at a multiple of `n` is aligned to its size: the argument's
/// innermost extent and every slice's innermost offset are multiples of
/// `n` (the run-time's buffers are 16-byte aligned).
static bool isAlignedArgumentSlice(Value tensor, int64_t n,
                                   const ClampFacts &known) {
  // The innermost dimension keeps its extent through the views: slices
  // that keep it (dropping unit dimensions elsewhere, and the static unit
  // dimensions after it) and reshapes that leave it a group of its own; a
  // row-major view's strides are multiples of it.
  while (Operation *def = tensor.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      int64_t last = getInnermostNonUnitDim(slice.getSourceType());
      if (!slice.hasUnitStride() || slice.getDroppedDims().test(last) ||
          !isMultipleOf(slice.getMixedOffsets()[last], n))
        return false;
      tensor = slice.getSource();
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def)) {
      // Splitting the innermost dimension (split-K's [M, K] -> [M, parts,
      // K / parts]) keeps every vector at a multiple of `n` aligned where
      // the new innermost extent is a multiple of `n`: an element's offset
      // in the source row is a sum of multiples of it.
      int64_t innermost = expand.getResultType().getShape().back();
      if (expand.getReassociationIndices().back().size() != 1 &&
          (ShapedType::isDynamic(innermost) || innermost % n != 0))
        return false;
      tensor = expand.getSrc();
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
      // Merging the innermost dimension with outer ones (a one-pixel conv's
      // [N, C, H, W] image as [N, C, H*W]) keeps every vector at a multiple
      // of `n` aligned where the source's innermost extent is a multiple of
      // `n` (the merged extent is then one too, and no vector straddles two
      // of the source's rows): the source's, which may be a slice of a
      // larger innermost extent.
      auto source = cast<RankedTensorType>(collapse.getSrcType());
      if (collapse.getReassociationIndices().back().size() != 1) {
        FailureOr<DimExpr> inner = getKernelDimExpr(
            collapse.getSrc(), getInnermostNonUnitDim(source), known.entry, 0);
        if (failed(inner) || !isDivisibleBy(*inner, n, known.facts))
          return false;
      }
      tensor = collapse.getSrc();
    } else {
      break;
    }
  }
  // A tile loop's shared output is its destination's slice, which is a
  // view of what the loop was given.
  if (auto arg = dyn_cast<BlockArgument>(tensor))
    if (auto forall = dyn_cast<scf::ForallOp>(arg.getOwner()->getParentOp());
        forall && arg.getArgNumber() >= forall.getRank())
      return isAlignedArgumentSlice(forall.getTiedOpOperand(arg)->get(), n,
                                    known);
  auto arg = dyn_cast<BlockArgument>(tensor);
  auto type = dyn_cast<RankedTensorType>(tensor.getType());
  if (!arg || arg.getOwner() != &known.entry || !type || type.getRank() == 0)
    return false;
  FailureOr<DimExpr> inner =
      getKernelDimExpr(tensor, getInnermostNonUnitDim(type), known.entry, 0);
  return succeeded(inner) && isDivisibleBy(*inner, n, known.facts);
}

/// The operand of a tensor-core k-step as a chunked copy may read it: the
/// tensor to read vectors from, where reading past its extents gives the
/// zeros the operand is padded with, and the vector length. The operand is
/// a slice of a kernel argument, or a slice of such a slice padded high
/// with zeros (padForStaticProducts); the length is the most elements of at
/// most 16 bytes (at least 4, what cp.async copies) that divide the shared
/// tile's innermost extent and keep every vector aligned.
struct ChunkSource {
  Value sliced;           // the operand itself, or the slice of a pad
  tensor::PadOp pad;      // the pad, if any
  int64_t vectorSize = 0; // elements per chunk
};

static std::optional<ChunkSource>
getChunkSource(Value operand, int64_t innerBound, const ClampFacts &known) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t elementBytes = getElementBytes(type.getElementType());
  if (elementBytes == 0 || type.getRank() == 0)
    return std::nullopt;
  ChunkSource source;
  source.sliced = operand;
  Value tensor = operand;
  if (auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>()) {
    auto pad = slice.getSource().getDefiningOp<tensor::PadOp>();
    Value padding = pad ? pad.getConstantPaddingValue() : Value();
    if (pad && padding && matchPattern(padding, m_AnyZeroFloat()) &&
        slice.hasUnitStride() &&
        slice.getSourceType().getRank() == slice.getType().getRank() &&
        llvm::all_of(pad.getMixedLowPad(), isZeroInteger)) {
      source.pad = pad;
      tensor = pad.getSource();
    }
  }
  for (int64_t n = 16 / elementBytes; n * elementBytes >= 4; n /= 2) {
    if (innerBound % n != 0 || !isAlignedArgumentSlice(tensor, n, known))
      continue;
    // Through a pad, the step's slice offsets apply to its source.
    if (source.pad &&
        !isMultipleOf(source.sliced.getDefiningOp<tensor::ExtractSliceOp>()
                          .getMixedOffsets()
                          .back(),
                      n))
      continue;
    source.vectorSize = n;
    return source;
  }
  return std::nullopt;
}

/// Writes `bounds` (static) of shared memory from `source` in chunks of
/// whole vectors, one chunk per thread in turn (an `scf.forall` over all
/// the block's threads, `#gpu.thread<linear_dim_0>`): each chunk is one
/// `vector.transfer_read` of the unpadded source, which reads the zeros of
/// the padding past its extents, and one `vector.transfer_write` into the
/// buffer. The GPU turns each pair into one cp.async with a source-element
/// count (dyncc-pipeline-k-steps). Returns the written buffer.
static Value copyInChunks(RewriterBase &rewriter, Location loc,
                          const ChunkSource &source, ArrayRef<int64_t> bounds,
                          Value buffer) {
  MLIRContext *ctx = rewriter.getContext();
  auto type = cast<RankedTensorType>(source.sliced.getType());
  int64_t rank = type.getRank();
  int64_t n = source.vectorSize;
  // The tensor to read from: through a pad, the part of its source under
  // the step's slice (offsets clamped to the extents; past them, nothing).
  Value read = source.sliced;
  if (source.pad) {
    auto slice = source.sliced.getDefiningOp<tensor::ExtractSliceOp>();
    tensor::PadOp pad = source.pad;
    Value padded = pad.getSource();
    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx);
    SmallVector<OpFoldResult> offsets, sizes;
    for (int64_t d = 0; d < rank; ++d) {
      OpFoldResult extent = tensor::getMixedSize(rewriter, loc, padded, d);
      OpFoldResult offset = affine::makeComposedFoldedAffineMin(
          rewriter, loc, AffineMap::get(2, 0, {d0, d1}, ctx),
          {slice.getMixedOffsets()[d], extent});
      sizes.push_back(affine::makeComposedFoldedAffineMin(
          rewriter, loc, AffineMap::get(3, 0, {d0, d1 - d2}, ctx),
          {slice.getMixedSizes()[d], extent, offset}));
      offsets.push_back(offset);
    }
    read = tensor::ExtractSliceOp::create(
        rewriter, loc, padded, offsets, sizes,
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
  }

  // Chunks in row-major order, the innermost dimension in vectors.
  SmallVector<int64_t> counts(bounds);
  counts.back() /= n;
  int64_t chunks = std::accumulate(counts.begin(), counts.end(), int64_t{1},
                                   std::multiplies<>());
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(chunks)},
      ValueRange{buffer},
      rewriter.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::LinearDim0)}));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(forall.getTerminator());
  Value chunk = forall.getInductionVar(0);
  SmallVector<OpFoldResult> indices(rank);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    AffineExpr index = (getAffineDimExpr(0, ctx).floorDiv(stride)) % counts[d];
    if (d == rank - 1)
      index = index * n;
    indices[d] = affine::makeComposedFoldedAffineApply(
        rewriter, loc, AffineMap::get(1, 0, index), {OpFoldResult(chunk)});
    stride *= counts[d];
  }
  SmallVector<int64_t> shape(rank, 1);
  shape.back() = n;
  Type elementType = type.getElementType();
  Value zero = arith::ConstantOp::create(rewriter, loc,
                                         rewriter.getZeroAttr(elementType));
  SmallVector<Value> indexValues =
      getValueOrCreateConstantIndexOp(rewriter, loc, indices);
  auto vector = vector::TransferReadOp::create(
      rewriter, loc, VectorType::get(shape, elementType), read, indexValues,
      zero, SmallVector<bool>(rank, false));
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(ctx, ArrayRef<int64_t>(shape));
  SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
  Value out = forall.getRegionIterArgs()[0];
  Value dest =
      tensor::ExtractSliceOp::create(rewriter, loc, out, indices, sizes, ones);
  Value zeroIndex = arith::ConstantIndexOp::create(rewriter, loc, 0);
  auto written = vector::TransferWriteOp::create(
      rewriter, loc, vector, dest, SmallVector<Value>(rank, zeroIndex),
      SmallVector<bool>(rank, true));
  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, written.getResult(), out,
                                        indices, sizes, ones);
  return forall.getResult(0);
}

using SharedWrite = std::pair<TilingInterface, SmallVector<int64_t>>;

/// The elements each row of a promoted operand's shared tile is padded by:
/// kMmaRowPaddingBytes for a tensor-core operand copied in chunks (read by
/// ldmatrix) of rank 2 or more, else none.
static int64_t getRowPadding(bool chunked, RankedTensorType type) {
  int64_t elementBytes = getElementBytes(type.getElementType());
  if (!chunked || type.getRank() < 2 || elementBytes == 0 ||
      cost::kMmaRowPaddingBytes % elementBytes != 0)
    return 0;
  return cost::kMmaRowPaddingBytes / elementBytes;
}

/// How the operands of a tensor-core k-step are promoted: in chunks where
/// they come straight from the kernel's arguments (getChunkSource), each
/// such buffer `stages` times over (dyncc-pipeline-k-steps multi-buffers
/// it).
struct ChunkedPromotion {
  const ClampFacts &known;
  int64_t stages;
  /// Tensor cores: ldmatrix reads the tiles, whose rows are padded.
  bool padRows;
};

static FailureOr<SmallVector<SharedWrite>>
promoteOperands(RewriterBase &rewriter, linalg::LinalgOp op, int64_t &budget,
                const ChunkedPromotion *chunked = nullptr) {
  if (!op.hasPureTensorSemantics() ||
      !(linalg::isaContractionOpInterface(op) ||
        linalg::isaConvolutionOpInterface(op))) {
    return failure();
  }
  struct Operand {
    OpOperand *operand;
    SmallVector<OpFoldResult> sizes;
    SmallVector<int64_t> bounds;
    SmallVector<bool> reduced;
    std::optional<ChunkSource> chunks;
    /// The elements each row of the shared tile is padded by, if the
    /// budget holds the padded tiles.
    int64_t pad = 0;
  };
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> loopBounds = getLoopBounds(rewriter, op);
  SmallVector<Operand> operands;
  // The bytes with the tensor-core tiles' rows padded, and without: the
  // padding only where the budget holds it (the tile search counts it, for
  // the device it searched for; a budget of other targets may be smaller).
  int64_t bytes = 0, paddedBytes = 0;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand->get().getType());
    int64_t elementBytes = type ? getElementBytes(type.getElementType()) : 0;
    if (!type || elementBytes == 0)
      return failure();
    Operand plan{operand,
                 tensor::getMixedSizes(rewriter, loc, operand->get()),
                 {},
                 {},
                 std::nullopt,
                 0};
    AffineMap map = op.getMatchingIndexingMap(operand);
    int64_t elements = 1;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
      plan.reduced.push_back(dim && iterators[dim.getPosition()] ==
                                        utils::IteratorType::reduction);
      int64_t bound = getSizeBound(plan.sizes[d]);
      if (bound != kNoHi)
        bound = std::min(bound, getMaxIndex(map.getResult(d), loopBounds));
      if (bound == kNoHi)
        bound = getMaxIndex(map.getResult(d), loopBounds);
      if (bound == kNoHi)
        return failure();
      plan.bounds.push_back(std::max<int64_t>(bound, 0));
      elements *= plan.bounds.back();
    }
    if (chunked && elements > 0)
      plan.chunks = getChunkSource(plan.operand->get(), plan.bounds.back(),
                                   chunked->known);
    int64_t copies = plan.chunks ? chunked->stages : 1;
    bytes += getSharedBufferBytes(elements, elementBytes) * copies;
    plan.pad = getRowPadding(plan.chunks && chunked->padRows, type);
    if (plan.pad)
      elements =
          elements / plan.bounds.back() * (plan.bounds.back() + plan.pad);
    paddedBytes += getSharedBufferBytes(elements, elementBytes) * copies;
    operands.push_back(std::move(plan));
  }
  if (paddedBytes <= budget)
    bytes = paddedBytes;
  else
    for (Operand &plan : operands)
      plan.pad = 0;
  if (bytes > budget)
    return failure();
  budget -= bytes;

  MLIRContext *ctx = rewriter.getContext();
  Attribute workgroup =
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  SmallVector<SharedWrite> shared;
  for (Operand &plan : operands) {
    Value source = plan.operand->get();
    auto type = cast<RankedTensorType>(source.getType());
    int64_t rank = type.getRank();
    // Static: the bounds of every dimension (the parallel ones hold the
    // tile's sizes, the reduced ones the identity past them), rows padded
    // where ldmatrix reads them.
    SmallVector<int64_t> shape = plan.bounds;
    shape.back() += plan.pad;
    auto buffer = bufferization::AllocTensorOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
        ValueRange());
    buffer.setMemorySpaceAttr(workgroup);
    SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
    if (plan.chunks) {
      Value tile = buffer.getResult();
      if (plan.pad)
        tile = tensor::ExtractSliceOp::create(
            rewriter, loc, tile, zeros,
            getAsIndexOpFoldResult(ctx, ArrayRef<int64_t>(plan.bounds)), ones);
      // Values and padding at once, in chunks of whole vectors.
      Value full =
          copyInChunks(rewriter, loc, *plan.chunks, plan.bounds, tile);
      rewriter.modifyOpInPlace(op, [&] { plan.operand->set(full); });
      continue;
    }
    // The operand's values...
    Value dest = tensor::ExtractSliceOp::create(rewriter, loc, buffer, zeros,
                                                plan.sizes, ones);
    auto copy = linalg::CopyOp::create(rewriter, loc, source, dest);
    shared.push_back({cast<TilingInterface>(copy.getOperation()), plan.bounds});
    Value full = tensor::InsertSliceOp::create(rewriter, loc, copy.getResult(0),
                                               buffer, zeros, plan.sizes, ones);
    // ... and the identity past them, one disjoint region per reduced
    // dimension (earlier reduced dimensions within the operand, later ones
    // whole), so every element is written exactly once.
    Value identity = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
    AffineExpr s0 = rewriter.getAffineSymbolExpr(0);
    for (int64_t i = 0; i < rank; ++i) {
      if (!plan.reduced[i] ||
          getConstantIntValue(plan.sizes[i]) == plan.bounds[i])
        continue;
      SmallVector<OpFoldResult> offsets(zeros), sizes;
      for (int64_t d = 0; d < rank; ++d) {
        if (d == i) {
          offsets[d] = plan.sizes[d];
          sizes.push_back(affine::makeComposedFoldedAffineApply(
              rewriter, loc, AffineMap::get(0, 1, plan.bounds[d] - s0),
              {plan.sizes[d]}));
        } else if (plan.reduced[d] && d > i) {
          sizes.push_back(rewriter.getIndexAttr(plan.bounds[d]));
        } else {
          sizes.push_back(plan.sizes[d]);
        }
      }
      Value region = tensor::ExtractSliceOp::create(rewriter, loc, full,
                                                    offsets, sizes, ones);
      auto fill = linalg::FillOp::create(rewriter, loc, identity, region);
      shared.push_back(
          {cast<TilingInterface>(fill.getOperation()), plan.bounds});
      full = tensor::InsertSliceOp::create(rewriter, loc, fill.getResult(0),
                                           full, offsets, sizes, ones);
    }
    // The product reads the reduced dimensions whole (static, no masks) and
    // the others at the tile's sizes, so its loops stay within the tile.
    SmallVector<OpFoldResult> readSizes;
    for (int64_t d = 0; d < rank; ++d)
      readSizes.push_back(
          plan.reduced[d] ? OpFoldResult(rewriter.getIndexAttr(plan.bounds[d]))
                          : plan.sizes[d]);
    Value read = tensor::ExtractSliceOp::create(rewriter, loc, full, zeros,
                                                readSizes, ones);
    rewriter.modifyOpInPlace(op, [&] { plan.operand->set(read); });
  }
  return shared;
}

/// Where the thread axes (`threads`, innermost first, along a shared tile's
/// three innermost dimensions) give a shared tile of `bounds` at most half
/// the block's threads, its elements one per iteration of a loop over all
/// the block's threads, its dimensions past 1 delinearized from one linear
/// index (`#gpu.thread<linear_dim_k>`, k = 0 innermost): a conv's filter
/// tap `[64 x 1 x 1 x 1]`, which the axes would leave to one thread, its
/// window `[1 x 1 x 7 x 31]` (a z axis of 8 threads over a dimension of 1:
/// 8 of the 64 threads busy), a 1x1 conv's filter tile `[32 x 32]` (the
/// two axes of a block of 2 x 4 x 8 threads: 8 busy, 128 elements each).
/// Consecutive threads take consecutive elements of the innermost
/// dimension, so the loads coalesce. Otherwise nothing (getSharingSizes).
static std::optional<SmallVector<int64_t>>
getLinearSharingSizes(ArrayRef<int64_t> bounds, ArrayRef<int64_t> threads) {
  int64_t rank = bounds.size();
  SmallVector<int64_t> sizes(rank, 0);
  bool wide = false;
  for (int64_t d = 0; d < rank; ++d)
    if (bounds[d] > 1) {
      sizes[d] = 1;
      wide = true;
    }
  if (!wide || rank > 9)
    return std::nullopt;
  int64_t all = std::accumulate(threads.begin(), threads.end(), int64_t{1},
                                std::multiplies<>());
  int64_t used = 1;
  for (int64_t axis = 0; axis < 3 && axis < rank; ++axis)
    if (axis < static_cast<int64_t>(threads.size()))
      used *= std::min(threads[axis],
                       std::max<int64_t>(bounds[rank - 1 - axis], 1));
  if (2 * used > all)
    return std::nullopt;
  return sizes;
}

/// Thread tile sizes for an op writing a shared tile of `bounds` (static
/// upper bounds): the innermost three dimensions are spread over the
/// block's threads along x, y and z (`threads`, innermost first).
static SmallVector<int64_t> getSharingSizes(ArrayRef<int64_t> bounds,
                                            ArrayRef<int64_t> threads) {
  int64_t rank = bounds.size();
  SmallVector<int64_t> sizes(rank, 0);
  for (int64_t axis = 0; axis < 3 && axis < rank; ++axis) {
    int64_t d = rank - 1 - axis;
    int64_t count =
        axis < static_cast<int64_t>(threads.size()) ? threads[axis] : 1;
    sizes[d] = std::max<int64_t>(
        1, llvm::divideCeil(std::max<int64_t>(bounds[d], 1), count));
  }
  return sizes;
}

/// The warp tile of the contraction `op` (its leading parallel loops are
/// the output's dimensions): the config's, aligned to them; reduction loops
/// are not tiled.
static SmallVector<int64_t> getWarpSizes(const TileConfig &config,
                                         linalg::LinalgOp op) {
  SmallVector<int64_t> sizes =
      alignSizes(config.warpTile, op.getNumParallelLoops());
  sizes.resize(op.getNumLoops(), 0);
  return sizes;
}

/// True if `value` is (a view of) a kernel argument.
static bool isKernelArgumentRead(Value value) {
  Value source = skipViews<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                           tensor::CollapseShapeOp>(value);
  auto arg = dyn_cast<BlockArgument>(source);
  return arg &&
         isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

/// True if `value` is read from a kernel argument, or computed elementwise
/// (parallel loops, an identity output, inputs along projected
/// permutations of them, no loop indices) from such reads and scalars.
static bool isReadOrElementwiseOfReads(Value value) {
  if (isKernelArgumentRead(value))
    return true;
  auto op = value.getDefiningOp<linalg::GenericOp>();
  if (!op || op.getNumReductionLoops() != 0 || op.getNumDpsInits() != 1 ||
      op.hasIndexSemantics() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return !isa<RankedTensorType>(input->get().getType()) ||
           (op.getMatchingIndexingMap(input).isProjectedPermutation() &&
            isKernelArgumentRead(input->get()));
  });
}

/// A GEMM kernel whose root is its product transposed (attention's head
/// merge: the product's [B, H, S, D] copied out as [B, S, H, D]; its head
/// split: [B, S, H*D] as [B, H, S, D] or [B, H, D, S]; see
/// getProductLayout): the config's tiles are the product's GEMM view's, so
/// the root's block and thread sizes are the view's, permuted as the root's
/// dimensions are.
/// Otherwise a block of the root would be one row of the product (S tiled by
/// 1), too thin for a static product. Leaves the sizes as they are for any
/// other root.
///
/// Returns the order in which the root's tiled loops take the grid's
/// dimensions (getGridLoops): the view's, so that every root of a kernel of
/// several products (Q, K and V, K transposed) numbers its blocks alike and
/// they share one grid; empty (the loops' own) for any other root.
static SmallVector<int64_t>
permuteForTransposedProduct(Operation *root, bool gemm,
                            SmallVectorImpl<int64_t> &blockSizes,
                            SmallVectorImpl<int64_t> &threadSizes) {
  FailureOr<ProductLayout> layout = getProductLayout(root, gemm);
  if (failed(layout) || layout->isIdentity() ||
      layout->viewDims.size() != blockSizes.size())
    return {};
  for (SmallVectorImpl<int64_t> *sizes : {&blockSizes, &threadSizes}) {
    SmallVector<int64_t> permuted = layout->toRoot(*sizes);
    sizes->assign(permuted.begin(), permuted.end());
  }
  return layout->viewDims;
}

/// In a sliceAndPadOperand target: the dimension is a unit one, dropped.
constexpr int64_t kDropDim = -2;

/// A static product's operand `value` (isReadOrElementwiseOfReads), per
/// dimension d as `target[d]` says: dropped (kDropDim, a unit dimension), as
/// it is (kDynamic), or padded high with zeros to `target[d]`. A read is
/// sliced (rank-reducing) and padded. An elementwise prologue is rebuilt
/// over its inputs sliced and padded alike, so that it stays a producer of
/// the product that the k-steps fuse and the per-step copies compute; what
/// it makes of the zeros of the padded rows and columns only reaches
/// outputs that are never stored.
static Value sliceAndPadOperand(RewriterBase &rewriter, Location loc,
                                Value value, ArrayRef<int64_t> target) {
  auto type = cast<RankedTensorType>(value.getType());
  Type element = type.getElementType();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (target[d] != kDropDim)
      shape.push_back(target[d] == ShapedType::kDynamic ? type.getDimSize(d)
                                                        : target[d]);
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (isKernelArgumentRead(value) || !generic) {
    SmallVector<int64_t> keptShape;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (target[d] != kDropDim)
        keptShape.push_back(type.getDimSize(d));
    if (static_cast<int64_t>(keptShape.size()) != type.getRank())
      value = tensor::createCanonicalRankReducingExtractSliceOp(
          rewriter, loc, value, RankedTensorType::get(keptShape, element));
    SmallVector<Value> dynamic;
    for (auto [d, size] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(size))
        dynamic.push_back(tensor::DimOp::create(rewriter, loc, value, d));
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
    return tensor::createPadHighOp(RankedTensorType::get(shape, element),
                                   value, zero, /*nofold=*/false, loc,
                                   rewriter, dynamic);
  }
  // The prologue's loops are the operand's dimensions (an identity output).
  int64_t loops = generic.getNumLoops();
  llvm::SmallBitVector droppedLoops(loops);
  for (int64_t l = 0; l < loops; ++l)
    droppedLoops[l] = target[l] == kDropDim;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!isa<RankedTensorType>(input->get().getType())) {
      inputs.push_back(input->get());
      maps.push_back(compressDims(map, droppedLoops));
      continue;
    }
    SmallVector<int64_t> inputTarget;
    SmallVector<int64_t> droppedResults;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      inputTarget.push_back(target[cast<AffineDimExpr>(e).getPosition()]);
      if (inputTarget.back() == kDropDim)
        droppedResults.push_back(i);
    }
    inputs.push_back(
        sliceAndPadOperand(rewriter, loc, input->get(), inputTarget));
    maps.push_back(
        compressDims(map.dropResults(droppedResults), droppedLoops));
  }
  Value init = generic.getDpsInits()[0];
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (target[d] == kDropDim)
      continue;
    if (target[d] == ShapedType::kDynamic)
      sizes.push_back(tensor::getMixedSize(rewriter, loc, init, d));
    else
      sizes.push_back(rewriter.getIndexAttr(target[d]));
  }
  Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, element);
  maps.push_back(rewriter.getMultiDimIdentityMap(shape.size()));
  auto rebuilt = linalg::GenericOp::create(
      rewriter, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty},
      maps,
      SmallVector<utils::IteratorType>(shape.size(),
                                       utils::IteratorType::parallel));
  rewriter.cloneRegionBefore(generic.getRegion(), rebuilt.getRegion(),
                             rebuilt.getRegion().end());
  return rebuilt.getResult(0);
}

/// Whether `generic`'s body is `acc + extf(a) * extf(b)` of its block
/// arguments (in either order): the body of a linalg.matmul from 16-bit
/// float operands into f32.
static bool isExtendedMulAdd(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  if (body.getNumArguments() != 3)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body.getArgument(2);
  Value product = add.getLhs() == acc   ? add.getRhs()
                  : add.getRhs() == acc ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return false;
  auto extended = [&](Value v) -> Value {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return ext ? ext.getIn() : Value();
  };
  Value lhs = extended(mul.getLhs()), rhs = extended(mul.getRhs());
  Value a = body.getArgument(0), b = body.getArgument(1);
  return lhs && rhs && ((lhs == a && rhs == b) || (lhs == b && rhs == a)) &&
         body.getOperations().size() == 5;
}

/// A warp's product `generic` over (M, N, K), its operands read along other
/// maps than a plain matmul's (attention's scores read K's rows, a B of N x
/// K), as a linalg.matmul with those maps: the named op vectorizes to one
/// vector.contract with the maps, which the conversion to ldmatrix and
/// mma.sync takes whatever the layouts; a generic's vectorization leaves
/// broadcasts and transposes it does not. linalg.matmul's A reads M and K
/// (d0, d2), its B K and N (d2, d1): where the generic's first operand is
/// the one reading N, the operands are swapped (the product commutes, bit
/// for bit). Returns `generic` where its body is not a matmul's or its maps
/// fit neither way.
static Operation *asNamedMatmul(RewriterBase &rewriter,
                                linalg::GenericOp generic) {
  if (!isExtendedMulAdd(generic) || generic.getNumLoops() != 3 ||
      generic.getNumDpsInputs() != 2)
    return generic;
  auto reads = [&](AffineMap map, unsigned a, unsigned b) {
    return llvm::all_of(map.getResults(), [&](AffineExpr e) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      return dim && (dim.getPosition() == a || dim.getPosition() == b);
    });
  };
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<Value> inputs = generic.getDpsInputs();
  if (!reads(maps[0], 0, 2) || !reads(maps[1], 2, 1)) {
    std::swap(maps[0], maps[1]);
    std::swap(inputs[0], inputs[1]);
    if (!reads(maps[0], 0, 2) || !reads(maps[1], 2, 1))
      return generic;
  }
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(generic);
  auto matmul = linalg::MatmulOp::create(rewriter, generic.getLoc(),
                                         generic.getResultTypes(), inputs,
                                         generic.getDpsInits());
  matmul.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
  rewriter.replaceOp(generic, matmul->getResults());
  return matmul;
}

/// An epilogue that updates the product's result in place (the root: a
/// bias added to a MatMul's or a 1x1 conv's result, as ONNX lowers it, with
/// what follows fused in) reads the block's part of the accumulator,
/// `accumulator`, as an input instead and writes the block's tile of the
/// output, `destination` (what the product wrote before it had a shared
/// accumulator). Left in place, the root's tile was the accumulator in
/// shared memory, and the block's insertion of it into the output became
/// one block-level copy that every thread ran whole: on an H200 each of a
/// 128x64 f32 1x1 conv's 128 threads stored all 8,192 elements of its
/// block (the ResNet-50 stem block's 1x1 convs ran at 3.4 TFLOP/s), as the
/// write-back of a product with no epilogue did before 55b3605.
static void writeEpilogueIntoDestination(RewriterBase &rewriter,
                                         Value accumulator, Value destination) {
  if (accumulator.getType() != destination.getType())
    return;
  for (OpOperand &use : llvm::make_early_inc_range(accumulator.getUses())) {
    auto root = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!root || !root->hasAttr(kRootMark) || root.getNumDpsInits() != 1 ||
        root.getDpsInitOperand(0) != &use || root.getNumReductionLoops() != 0)
      continue;
    SmallVector<Value> inputs = root.getDpsInputs();
    inputs.push_back(accumulator);
    SmallVector<AffineMap> maps = root.getIndexingMapsArray();
    maps.insert(maps.begin() + root.getNumDpsInputs(),
                root.getMatchingIndexingMap(&use));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(root);
    auto separate = moveIntoGeneric(rewriter, root, root.getResultTypes(),
                                    inputs, ValueRange{destination}, maps,
                                    root.getIteratorTypesArray());
    // The old body, its init's argument now the new input's.
    Block &block = separate.getRegion().front();
    unsigned count = root.getNumDpsInputs();
    BlockArgument out = block.getArgument(count);
    BlockArgument in = block.insertArgument(count, out.getType(), out.getLoc());
    rewriter.replaceAllUsesWith(out, in);
    rewriter.replaceOp(root, separate->getResults());
  }
}

/// Prepares the GEMM in `blockLoop` for static per-warp (tensor cores, a
/// config with an instruction tile) or per-thread (SIMT register tiles)
/// products: the accumulator becomes a static shared buffer of the whole
/// block tile, initialized whole, and the operands are padded with zeros
/// to the block tile along M and N (the copies into shared memory pad per
/// thread), so each warp's or thread's product is static and unmasked:
/// rows and columns past the problem's are zeros, computed and never
/// stored. The result the epilogue reads is the block's part of the
/// accumulator. On the GPU, dyncc-vectorize-mma keeps each warp's or
/// thread's part of it in registers across k-steps.
/// Returns false, changing nothing, where the GEMM does not qualify: a
/// product over M, N and K (after batch loops of one iteration, which it
/// drops) of operands indexed by plain loop dimensions, accumulating from
/// a fill, output loops first in order, one reduction loop, a tile that is
/// the config's block tile, operands read as they are from kernel
/// arguments, and room in `budget` for the accumulator (which it takes)
/// and the config's stages of one k-step of both operands; with `overlap`,
/// of the larger of the two: on the GPU the accumulator takes the operand
/// tiles' bytes once the k-steps are done
/// (dyncc-overlap-shared-accumulators), and the kernel records the bytes
/// they share. Where it qualifies, `accBytesOut` and `overlappedOut` get
/// the accumulator's bytes and those it is to share (left as they are
/// otherwise). Tensor cores take f16 or bf16 operands and an f32
/// accumulator; SIMT register tiles take operands of one type and an
/// accumulator of that type (or f32 for f16 and bf16 operands).
static bool padForStaticProducts(RewriterBase &rewriter, Operation *blockLoop,
                                 const TileConfig &config, int64_t &budget,
                                 bool overlap, int64_t &accBytesOut,
                                 int64_t &overlappedOut) {
  bool tensorCores = !config.mma.empty() && !config.warpTile.empty();
  if (config.kStep <= 0)
    return false;
  SmallVector<linalg::LinalgOp> contractions;
  blockLoop->walk([&](linalg::LinalgOp op) {
    if (!inThreadForall(op) && linalg::isaContractionOpInterface(op))
      contractions.push_back(op);
  });
  if (contractions.size() != 1)
    return false;
  linalg::LinalgOp op = contractions.front();
  // M, N and K, after the other parallel loops, each of one iteration per
  // block, which the product drops: upstream's conversion to mma.sync
  // takes two-dimensional tiles only. The unit loops need not lead: a
  // product fused through a head split runs over [B, S, H, D], its block
  // one batch and one head, M along S and N along D.
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op.getNumParallelLoops() < 2 ||
      !op.hasPureTensorSemantics() ||
      !linalg::isReductionIterator(op.getIteratorTypesArray().back()))
    return false;
  int64_t parallel = op.getNumParallelLoops();
  // The kept loops, in order: per operand, the innermost parallel loop that
  // it indexes and the other does not.
  SmallVector<int64_t> kept;
  {
    auto indexes = [&](OpOperand *input, int64_t loop) {
      return op.getMatchingIndexingMap(input).isFunctionOfDim(loop);
    };
    OpOperand *lhs = op.getDpsInputOperand(0), *rhs = op.getDpsInputOperand(1);
    int64_t lhsOnly = -1, rhsOnly = -1;
    for (int64_t l = 0; l < parallel; ++l) {
      if (indexes(lhs, l) && !indexes(rhs, l))
        lhsOnly = l;
      if (indexes(rhs, l) && !indexes(lhs, l))
        rhsOnly = l;
    }
    if (lhsOnly < 0 || rhsOnly < 0)
      return false;
    kept = {std::min(lhsOnly, rhsOnly), std::max(lhsOnly, rhsOnly)};
  }
  // The product's loops without the unit ones.
  llvm::SmallBitVector unitLoops(op.getNumLoops());
  unitLoops.set(0, parallel);
  for (int64_t l : kept)
    unitLoops.reset(l);
  int64_t units = unitLoops.count();
  {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    for (int64_t l : unitLoops.set_bits())
      if (ranges[l] != 1)
        return false;
    // A static K of at most one k-step is one chunk of exactly K, which is
    // not padded: the instruction's K must divide it (a head size of 4 or 8
    // in a tiny model stays on SIMT).
    int64_t k = ranges.back();
    if (tensorCores && !ShapedType::isDynamic(k) &&
        !tensorCoresTakeStaticK(k, config.kStep, config.mma[2]))
      return false;
  }
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  OpOperand *init = op.getDpsInitOperand(0);
  auto accType = cast<RankedTensorType>(init->get().getType());
  Type accElement = accType.getElementType();
  if (a != b)
    return false;
  if (tensorCores &&
      (!isa<Float16Type, BFloat16Type>(a) || !accElement.isF32()))
    return false;
  if (!tensorCores && accElement != a &&
      !(isa<Float16Type, BFloat16Type>(a) && accElement.isF32()))
    return false;
  if (!a.isIntOrFloat() || !accElement.isIntOrFloat())
    return false;
  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  int64_t rank = accType.getRank();
  if (!fill ||
      op.getMatchingIndexingMap(init) !=
          AffineMap::getMultiDimIdentityMap(op.getNumLoops(), op.getContext())
              .getMajorSubMap(rank) ||
      llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
        return !op.getMatchingIndexingMap(input).isProjectedPermutation();
      }))
    return false;
  // Each operand is read from memory (a slice or reshape of a kernel
  // argument), as it is or through an elementwise prologue of such reads
  // (a ReLU before a classifier's Gemm, attention's probabilities cast to
  // f16), which fuses into the per-step copies before the padding.
  for (OpOperand *input : op.getDpsInputOperands())
    if (!isReadOrElementwiseOfReads(input->get()))
      return false;
  // Past the unit loops, one operand is indexed by M and K, the other by
  // K and N (in either order): two-dimensional tiles.
  {
    unsigned k = op.getNumLoops() - 1;
    llvm::SmallBitVector outputDims(op.getNumLoops());
    for (OpOperand *input : op.getDpsInputOperands()) {
      SmallVector<unsigned> dims;
      for (AffineExpr e : op.getMatchingIndexingMap(input).getResults())
        if (unsigned d = cast<AffineDimExpr>(e).getPosition();
            !unitLoops.test(d))
          dims.push_back(d);
      if (dims.size() != 2 || !llvm::is_contained(dims, k))
        return false;
      unsigned other = dims[0] == k ? dims[1] : dims[0];
      if (other == k || outputDims.test(other))
        return false;
      outputDims.set(other);
    }
  }
  // The accumulator's sizes are bounded by the block tile, which it must
  // be (so the warps cover it), and sized by the tile's `min`s: M and N by
  // the config's last two sizes (the GEMM view's, in the kept loops' order:
  // the warps tile them so), the unit loops by 1.
  SmallVector<int64_t> block = alignSizes(config.blockTile, rank);
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, op.getLoc(), init->get());
  if (getSizeBound(sizes[kept[0]]) != block[rank - 2] ||
      getSizeBound(sizes[kept[1]]) != block[rank - 1] ||
      llvm::any_of(unitLoops.set_bits(),
                   [&](unsigned l) { return getSizeBound(sizes[l]) != 1; }))
    return false;
  int64_t accBytes = getSharedBufferBytes(
      std::accumulate(block.begin(), block.end(), int64_t{1},
                      std::multiplies<>()),
      getElementBytes(accElement));
  int64_t bytes = accBytes;
  int64_t mTile = block[rank - 2], nTile = block[rank - 1];
  auto dropUnits = [&](AffineMap map) {
    SmallVector<int64_t> unitResults;
    for (auto [i, e] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(e);
          dim && unitLoops.test(dim.getPosition()))
        unitResults.push_back(i);
    return compressDims(map.dropResults(unitResults), unitLoops);
  };
  int64_t operandBytes = getElementBytes(a);
  int64_t operandTiles =
      std::max<int64_t>(1, config.stages) *
      (getSharedBufferBytes(mTile * config.kStep, operandBytes) +
       getSharedBufferBytes(config.kStep * nTile, operandBytes));
  // Where the accumulator is to take the operand tiles' bytes after the
  // k-steps, the block needs the larger of the two.
  int64_t overlapped = overlap ? std::min(accBytes, operandTiles) : 0;
  bytes += operandTiles - overlapped;
  if (bytes > budget) {
    // A config that asks for tensor cores and does not fit is worth a word:
    // the product stays on SIMT threads.
    if (tensorCores)
      op->emitWarning("config '")
          << config.str() << "' needs " << bytes
          << " bytes of shared memory per block for its tensor-core product, "
             "more than the "
          << budget << " the targets leave it: the product stays SIMT";
    return false;
  }
  // The operands' tiles take theirs when they are promoted.
  budget -= accBytes - overlapped;
  accBytesOut = accBytes;
  overlappedOut = overlapped;
  // Recorded for every static product, added up over a kernel's roots: the
  // kernel's shared buffers are then laid out by liveness, which the
  // budget counts on for `overlapped` (and, across roots computed in turn,
  // for what dyncc-tile-and-fuse adds after them).
  Operation *kernel = blockLoop->getParentOfType<func::FuncOp>();
  int64_t recorded = 0;
  if (auto attr =
          kernel->getAttrOfType<IntegerAttr>(kOverlappedSharedBytesAttrName))
    recorded = attr.getInt();
  kernel->setAttr(kOverlappedSharedBytesAttrName,
                  rewriter.getI64IntegerAttr(recorded + overlapped));

  // The accumulator, whole and in shared memory.
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> accShape = {block[rank - 2], block[rank - 1]};
  auto buffer = bufferization::AllocTensorOp::create(
      rewriter, loc, RankedTensorType::get(accShape, accElement), ValueRange());
  buffer.setMemorySpaceAttr(gpu::AddressSpaceAttr::get(
      rewriter.getContext(), gpu::AddressSpace::Workgroup));
  Value acc = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0],
                                     buffer.getResult())
                  .getResult(0);
  // The operands, padded along the output's loops to the block tile.
  SmallVector<Value> operands;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    // Per dimension of the operand: dropped (a unit batch loop), padded to
    // the block tile (an output loop), or kept (K).
    SmallVector<int64_t> target;
    for (AffineExpr e : map.getResults()) {
      unsigned loop = cast<AffineDimExpr>(e).getPosition();
      if (unitLoops.test(loop))
        target.push_back(kDropDim);
      else if (loop == kept[0] || loop == kept[1])
        target.push_back(accShape[loop == kept[1]]);
      else
        target.push_back(ShapedType::kDynamic);
    }
    operands.push_back(sliceAndPadOperand(rewriter, loc, input->get(), target));
  }
  operands.push_back(acc);
  Operation *padded;
  if (units == 0) {
    padded = mlir::clone(rewriter, op, {acc.getType()}, operands);
  } else {
    // The same body over M, N and K only.
    SmallVector<AffineMap> maps;
    for (AffineMap map : op.getIndexingMapsArray())
      maps.push_back(dropUnits(map));
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (int64_t l = parallel - 1; l >= 0; --l)
      if (unitLoops.test(l))
        iterators.erase(iterators.begin() + l);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{acc.getType()},
        ValueRange(operands).drop_back(), ValueRange{acc}, maps, iterators);
    rewriter.cloneRegionBefore(op->getRegion(0), generic.getRegion(),
                               generic.getRegion().end());
    padded = generic;
    // As a named product where it is a plain one (linalg.matmul), which
    // vectorizes to vector.contract directly. Not with other maps (a
    // transposed B): MLIR 22's specialization drops them.
    MLIRContext *ctx = rewriter.getContext();
    AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
               k = getAffineDimExpr(2, ctx);
    SmallVector<AffineMap> plain = AffineMap::inferFromExprList(
        ArrayRef<ArrayRef<AffineExpr>>{{m, k}, {k, n}, {m, n}}, ctx);
    if (generic.getIndexingMapsArray() == plain)
      if (FailureOr<linalg::LinalgOp> named =
              linalg::specializeGenericOp(rewriter, generic);
          succeeded(named))
        padded = *named;
  }
  if (auto generic = dyn_cast<linalg::GenericOp>(padded);
      generic && tensorCores)
    padded = asNamedMatmul(rewriter, generic);
  if (tensorCores)
    padded->setAttr(kMmaAttrName, rewriter.getDenseI64ArrayAttr(config.mma));
  else
    padded->setAttr(kRegisterTileAttrName, rewriter.getUnitAttr());
  SmallVector<OpFoldResult> zeros(2, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> ones(2, rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> accSizes = {sizes[kept[0]], sizes[kept[1]]};
  Value result = tensor::ExtractSliceOp::create(
      rewriter, loc, padded->getResult(0), zeros, accSizes, ones);
  if (units != 0) {
    // Back to the unit dimensions: those before N's grouped with M, the
    // rest with N.
    SmallVector<ReassociationIndices> groups(2);
    for (int64_t d = 0; d < rank; ++d)
      groups[d >= kept[1]].push_back(d);
    result = tensor::ExpandShapeOp::create(rewriter, loc, accType, result,
                                           groups, sizes);
  }
  // With no epilogue (the product was the root: an f32 GEMM, a split-K
  // part), the block's part of the accumulator is written out by an
  // explicit copy into the output's tile, the new root, which the block's
  // threads share like an epilogue. Left implicit, the insertion into the
  // output became a block-level copy that every thread ran whole, after no
  // barrier: on an H200 a 128x256 f32 block spent most of its time there,
  // each thread storing all 32768 elements.
  if (op->hasAttr(kRootMark)) {
    auto copy = linalg::CopyOp::create(rewriter, loc, result,
                                       fill.getOutputs()[0]);
    copy->setAttr(kRootMark, rewriter.getUnitAttr());
    result = copy.getResult(0);
  }
  Value destination = fill.getOutputs()[0];
  rewriter.replaceOp(op, result);
  writeEpilogueIntoDestination(rewriter, result, destination);
  return true;
}

/// Restructures the block of a GEMM or conv root (`blockRoot`, tiled to
/// blocks): the reduction loops become k-steps at block level, each step's
/// operands are promoted to shared memory and written by all the block's
/// threads, and every computation in the block (the accumulator's
/// initialization, each step's product, the epilogue) is tiled to threads.
/// Block-level temporaries (an f16 GEMM's f32 accumulator) live in shared
/// memory too, as far as `budget` allows; a static product's accumulator
/// takes its operand tiles' bytes after the k-steps.
static LogicalResult tileGemmBlock(RewriterBase &rewriter,
                                   TilingInterface blockRoot,
                                   const TileConfig &config, int64_t rank,
                                   const ClampFacts &known, int64_t &budget) {
  Operation *blockLoop = getBlockLoop(blockRoot);
  if (!blockLoop)
    return blockRoot->emitOpError("has no block loop to restructure");
  blockRoot->setAttr(kRootMark, rewriter.getUnitAttr());
  // The accumulator's bytes and those it is to share with the operand
  // tiles, counting on the config's stages of both (made good below where
  // promotion copies fewer).
  int64_t accBytes = 0, overlapped = 0;
  padForStaticProducts(rewriter, blockLoop, config, budget, /*overlap=*/true,
                       accBytes, overlapped);
  if (failed(tileReductions(rewriter, blockLoop, config,
                            /*padsPerStep=*/false)))
    return failure();
  dropDivisibleClamps(rewriter, blockLoop, known);

  // Threads per axis, innermost first, as the root's thread tile has them.
  SmallVector<int64_t> threads;
  {
    SmallVector<int64_t> block = alignSizes(config.blockTile, rank);
    SmallVector<int64_t> thread = alignSizes(config.threadTile, rank);
    for (int64_t i = rank - 1; i >= 0 && rank - i <= 3; --i)
      threads.push_back(block[i] / thread[i]);
  }

  SmallVector<linalg::LinalgOp> steps;
  blockLoop->walk([&](linalg::LinalgOp op) {
    if (hasReductionLoops(op) && op->getParentOfType<scf::ForOp>() &&
        !inThreadForall(op))
      steps.push_back(op);
  });
  for (linalg::LinalgOp step : steps) {
    // A tensor-core step's operands straight from global memory are
    // copied in chunks of whole vectors (cp.async on the GPU), and
    // multi-buffered for a pipeline of the config's stages.
    ChunkedPromotion chunked{known, config.stages,
                             step->hasAttr(kMmaAttrName)};
    bool staticProduct =
        step->hasAttr(kMmaAttrName) || step->hasAttr(kRegisterTileAttrName);
    int64_t before = budget;
    FailureOr<SmallVector<SharedWrite>> shared = promoteOperands(
        rewriter, step, budget, staticProduct ? &chunked : nullptr);
    // Operands copied without chunks have one stage, not the config's: the
    // accumulator shares only the bytes they take, and the budget pays for
    // the rest it counted as shared (never more than it started with: the
    // block then needs the larger of the accumulator and those tiles).
    if (staticProduct && overlapped > 0) {
      int64_t shares = std::min(accBytes, before - budget);
      if (shares < overlapped) {
        budget -= overlapped - shares;
        func::FuncOp kernel = blockLoop->getParentOfType<func::FuncOp>();
        auto attr =
            kernel->getAttrOfType<IntegerAttr>(kOverlappedSharedBytesAttrName);
        kernel->setAttr(
            kOverlappedSharedBytesAttrName,
            rewriter.getI64IntegerAttr(attr.getInt() - overlapped + shares));
      }
      overlapped = 0;
    }
    if (succeeded(shared)) {
      for (auto &[op, bounds] : *shared) {
        std::optional<SmallVector<int64_t>> linear =
            getLinearSharingSizes(bounds, threads);
        FailureOr<TilingInterface> tiled = tileLevel(
            rewriter, op, linear ? *linear : getSharingSizes(bounds, threads),
            /*threads=*/true, /*deferPads=*/false, /*fuseDestinations=*/true,
            /*fusePads=*/false, /*warps=*/false, /*order=*/{},
            /*linear=*/linear.has_value());
        if (failed(tiled))
          return failure();
        // A padded input (a conv's) is read through a slice of a slice of
        // the whole padded tensor: merged, then swapped with the pad, each
        // thread pads just its piece of the window. No zero-slice guard: a
        // piece wholly in the padding reads an empty slice.
        if (auto forall = (*tiled)->getParentOfType<scf::ForallOp>())
          if (failed(mergeSlicesOfPads(
                  forall, [](tensor::ExtractSliceOp) -> std::optional<bool> {
                    return false;
                  })))
            return failure();
      }
    }
    if (step->hasAttr(kMmaAttrName)) {
      // Tensor cores: the product per warp, over static tiles of the
      // promoted operands and the shared accumulator.
      if (failed(shared))
        return step->emitOpError(
            "tensor-core operands do not fit in shared memory");
      if (failed(tileLevel(rewriter, cast<TilingInterface>(step.getOperation()),
                           getWarpSizes(config, step), /*threads=*/true,
                           /*deferPads=*/false, /*fuseDestinations=*/false,
                           /*fusePads=*/true, /*warps=*/true)))
        return failure();
      continue;
    }
    if (failed(shared)) {
      // Not promoted: each thread pads its own windows per step, as in the
      // per-thread structure.
      if (failed(mergeSlicesOfPads(step->getParentOp(), nullptr)))
        return failure();
    }
    // The step's product, per thread; without promotion its operands'
    // producers are fused per thread as well.
    if (failed(tileLevel(rewriter, cast<TilingInterface>(step.getOperation()),
                         getThreadSizes(config, getParallelRank(step)),
                         /*threads=*/true, /*deferPads=*/false,
                         /*fuseDestinations=*/false)))
      return failure();
  }

  // The epilogue (the root, unless the product is the root), then whatever
  // else is left at block level (the accumulator's initialization).
  // Tiling an op fuses (and erases) its producers, so the next op to tile
  // is looked up afresh each time: the root first.
  auto nextUntiled = [&]() -> TilingInterface {
    TilingInterface next;
    blockLoop->walk([&](TilingInterface op) {
      if (inThreadForall(op) || isa<tensor::PadOp>(op))
        return WalkResult::advance();
      if (!next || op->hasAttr(kRootMark))
        next = op;
      return op->hasAttr(kRootMark) ? WalkResult::interrupt()
                                    : WalkResult::advance();
    });
    return next;
  };
  auto tileRest = [&]() -> LogicalResult {
    for (TilingInterface op = nextUntiled(); op; op = nextUntiled()) {
      if (failed(tileLevel(rewriter, op,
                           getThreadSizes(config, getParallelRank(op)),
                           /*threads=*/true, /*deferPads=*/false)))
        return failure();
      // The tiled op's loop bounds read dimensions of its producers, which
      // keeps them alive; resolved, the producers fused into it are dead.
      RewritePatternSet dims(rewriter.getContext());
      memref::populateResolveRankedShapedTypeResultDimsPatterns(dims);
      memref::populateResolveShapedTypeResultDimsPatterns(dims);
      if (failed(applyPatternsGreedily(blockLoop, std::move(dims))))
        return failure();
      // Fusing through a k-step loop's result leaves a clone of the loop
      // whose results nothing reads. On tensors it computes nothing else
      // (its only effects are allocations of promoted tiles), so it goes.
      SmallVector<scf::ForOp> deadLoops;
      blockLoop->walk([&](scf::ForOp loop) {
        if (loop->use_empty() && loop.getNumResults() != 0)
          deadLoops.push_back(loop);
      });
      for (scf::ForOp loop : deadLoops)
        rewriter.eraseOp(loop);
    }
    return success();
  };
  if (failed(tileRest()))
    return failure();
  blockLoop->walk([&](Operation *op) { op->removeAttr(kRootMark); });

  // Temporaries of the whole block tile, written by all its threads: in
  // shared memory where they fit, so no thread keeps a private copy.
  // First the empties only read through a thread's slice move into the
  // thread's tile (a fused epilogue's temporaries): those are private.
  {
    RewritePatternSet patterns(rewriter.getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(blockLoop, std::move(patterns))))
      return failure();
  }
  SmallVector<tensor::EmptyOp> empties;
  blockLoop->walk([&](tensor::EmptyOp empty) {
    if (!inThreadForall(empty))
      empties.push_back(empty);
  });
  for (tensor::EmptyOp empty : empties) {
    RankedTensorType type = empty.getType();
    int64_t elementBytes = getElementBytes(type.getElementType());
    SmallVector<int64_t> bounds;
    int64_t elements = 1;
    for (OpFoldResult size : empty.getMixedSizes()) {
      bounds.push_back(getSizeBound(size));
      if (bounds.back() == kNoHi)
        break;
      elements *= std::max<int64_t>(bounds.back(), 0);
    }
    if (llvm::is_contained(bounds, kNoHi) || elementBytes == 0)
      continue;
    int64_t bytes = getSharedBufferBytes(elements, elementBytes);
    // Beyond the budget a temporary stays thread-private, a whole tile per
    // thread: still correct, since its initialization, the product and the
    // epilogue are tiled with the same thread tile over the same extents,
    // so each element has one thread.
    if (bytes > budget)
      continue;
    budget -= bytes;
    // Static, like the promoted tiles (a dynamic one would lose its memory
    // space to canonicalization), viewed at the tile's sizes.
    rewriter.setInsertionPoint(empty);
    Location loc = empty.getLoc();
    auto buffer = bufferization::AllocTensorOp::create(
        rewriter, loc, RankedTensorType::get(bounds, type.getElementType()),
        ValueRange());
    buffer.setMemorySpaceAttr(gpu::AddressSpaceAttr::get(
        rewriter.getContext(), gpu::AddressSpace::Workgroup));
    int64_t rank = type.getRank();
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        empty, type, buffer,
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)),
        empty.getMixedSizes(),
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
  }
  dropDivisibleClamps(rewriter, blockLoop, known);
  // Fusing an initialization into its threads clones the buffer it fills
  // (a shared accumulator) into each thread's tile, where nothing uses it;
  // left, it would be a second shared allocation.
  SmallVector<bufferization::AllocTensorOp> unused;
  blockLoop->walk([&](bufferization::AllocTensorOp alloc) {
    if (alloc->use_empty())
      unused.push_back(alloc);
  });
  for (bufferization::AllocTensorOp alloc : unused)
    rewriter.eraseOp(alloc);
  return success();
}

//===----------------------------------------------------------------------===//
// Row reductions: a warp or a block per row
//===----------------------------------------------------------------------===//

/// The fusion control of the lane level: producers are fused per tile
/// unless they reduce (a row's reductions are computed once per row, at the
/// row level) or the tile reads their whole result (one value per row,
/// computed once before the lanes' loops).
static std::optional<scf::SCFTileAndFuseOptions::ControlFnResult>
fuseIntoLanes(tensor::ExtractSliceOp slice, OpResult producer,
              bool isDestination, bool fuseDestinations) {
  if (isDestination && !fuseDestinations)
    return std::nullopt;
  if (hasReductionLoops(producer.getOwner()))
    return std::nullopt;
  if (slice.getSourceType().hasStaticShape() &&
      slice.getSourceType() == slice.getResultType())
    return std::nullopt;
  return scf::SCFTileAndFuseOptions::ControlFnResult{};
}

/// The mapping of a forall over a row's lanes: the x threads.
static ArrayAttr getLaneMapping(MLIRContext *ctx) {
  return ArrayAttr::get(
      ctx, {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)});
}

/// A forall of one iteration over the lanes, so only lane 0 runs it: the
/// tensor `body` builds inside it (a row's value) is written into `dest`,
/// and nothing at the row level writes the output once per lane. Returns
/// the written `dest`.
static Value writeFromLaneZero(RewriterBase &rewriter, Location loc, Value dest,
                               function_ref<Value()> body) {
  auto write = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
      ValueRange{dest}, getLaneMapping(rewriter.getContext()));
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(write.getTerminator());
  Value result = body();
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, result);
  rewriter.setInsertionPointToStart(write.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      rewriter, loc, result, write.getRegionIterArgs()[0], zeros, sizes, ones);
  return write.getResult(0);
}

/// Splits `reduction`, a row reduction tiled to one row (a result of 1s),
/// over `lanes` threads along x: a forall over the lanes, each folding the
/// row's tiles of `tile` elements l, l + lanes, ... into its own accumulator
/// (an `scf.for` from l * tile in steps of lanes * tile, producers fused per
/// step), then a `dyncc.lane_merge` generic folding the lanes' partials into
/// the reduction's accumulator. On the CPU the lanes are a loop and the
/// merge reads their partials; on the GPU, dyncc-shuffle-lane-merges turns
/// the merge into warp shuffles. A reduction that is a kernel root (`root`)
/// merges into a private accumulator, and lane 0 (a forall of one iteration)
/// writes it to the output.
static LogicalResult splitOverLanes(RewriterBase &rewriter,
                                    linalg::GenericOp reduction, int64_t lanes,
                                    int64_t tile, bool root) {
  MLIRContext *ctx = rewriter.getContext();
  Location loc = reduction.getLoc();
  auto type = cast<RankedTensorType>(reduction->getResult(0).getType());
  if (!type.hasStaticShape() ||
      llvm::any_of(type.getShape(), [](int64_t d) { return d != 1; }))
    return reduction.emitOpError(
        "is not one row after tiling to rows; cannot split it over lanes");
  Operation *combiner = getReductionCombiner(reduction);
  Type elementType = type.getElementType();

  rewriter.setInsertionPoint(reduction);
  Value neutral = arith::ConstantOp::create(
      rewriter, loc, *arith::getNeutralElement(combiner));
  SmallVector<int64_t> partsShape{lanes};
  partsShape.append(type.getShape().begin(), type.getShape().end());
  Value parts = tensor::EmptyOp::create(rewriter, loc, partsShape, elementType);
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(lanes)},
      ValueRange{parts}, getLaneMapping(ctx));
  Operation *partial;
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(forall.getTerminator());
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), elementType);
    Value init =
        linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);
    partial = rewriter.clone(*reduction);
    partial->setOperand(reduction.getDpsInitOperand(0)->getOperandNumber(),
                        init);
    int64_t rank = partsShape.size();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    offsets[0] = forall.getInductionVar(0);
    SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, partial->getResult(0),
                                          forall.getRegionIterArgs()[0],
                                          offsets, ones, ones);
  }

  // The merge: the lanes' partials folded into the accumulator.
  Value accumulator = reduction.getDpsInitOperand(0)->get();
  Value output;
  if (root) {
    // The accumulator is the output's tile filled with the neutral element
    // (isRowReductionKernel): merge into a private one instead.
    auto fill = accumulator.getDefiningOp<linalg::FillOp>();
    if (!fill)
      return reduction.emitOpError(
          "is a root whose accumulator is not a fill after tiling to rows");
    output = fill.getOutputs()[0];
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), elementType);
    accumulator =
        linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);
  }
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> partsExprs{getAffineDimExpr(rank, ctx)};
  for (int64_t i = 0; i < rank; ++i)
    partsExprs.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, partsExprs, ctx),
                              getRowsMap(rank + 1, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value acc = reduction.getRegionOutputArgs()[0];
  auto merge = linalg::GenericOp::create(
      rewriter, loc, type, ValueRange{forall.getResult(0)},
      ValueRange{accumulator}, maps, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        IRMapping map;
        for (Value operand : combiner->getOperands())
          map.map(operand, operand == acc ? args[1] : args[0]);
        Operation *combined = b.clone(*combiner, map);
        linalg::YieldOp::create(b, nested, combined->getResult(0));
      });
  merge->setAttr(kLaneMergeAttrName, rewriter.getUnitAttr());
  Value result = merge.getResult(0);
  if (root) {
    // Lane 0 writes the row's value.
    Value merged = result;
    result = writeFromLaneZero(rewriter, loc, output, [&] { return merged; });
  }
  Operation *oldInit = reduction.getDpsInitOperand(0)->get().getDefiningOp();
  rewriter.replaceOp(reduction, result);
  if (root && oldInit && oldInit->use_empty())
    rewriter.eraseOp(oldInit);

  // Each lane's tiles: the row in steps of `tile`, from lane * tile in
  // steps of lanes * tile, producers fused per step.
  SmallVector<int64_t> sizes(rank, 0);
  sizes.push_back(tile);
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(ctx, sizes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp slice, OpResult producer, bool isDestination) {
        return fuseIntoLanes(slice, producer, isDestination,
                             /*fuseDestinations=*/false);
      });
  FailureOr<Operation *> tiled =
      tileAndFuse(rewriter, cast<TilingInterface>(partial), options,
                  "could not be tiled over its lanes' steps");
  if (failed(tiled))
    return failure();
  auto loop = (*tiled)->getParentOfType<scf::ForOp>();
  if (!loop || loop->getParentOp() != forall)
    return reduction.emitOpError("lost its lanes' loop in tiling");
  rewriter.setInsertionPoint(loop);
  Value start = affine::AffineApplyOp::create(
      rewriter, loc, AffineMap::get(1, 0, getAffineDimExpr(0, ctx) * tile),
      ValueRange{forall.getInductionVar(0)});
  rewriter.modifyOpInPlace(loop, [&] {
    loop.setLowerBound(start);
    loop.setStep(arith::ConstantIndexOp::create(rewriter, loc, lanes * tile));
  });
  return success();
}

/// For a column split (`reduce column`) of a kernel whose result spans the
/// reduced axis (a softmax or a LayerNorm over the channels of [N, C, H,
/// W]): moves the loop of each op of parallel loops in `func` that reads a
/// statistic (an operand computed in the kernel whose map omits one loop)
/// along which the statistic is constant to be its last, so that the row
/// tiling walks it as the row, the root's lanes taking the channels, and
/// each op reads the statistics one value per row. Returns the ops moved
/// and their interchanges, to undo with restoreLoops.
static SmallVector<std::pair<Operation *, SmallVector<unsigned>>>
moveColumnLoopsLast(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<std::pair<Operation *, SmallVector<unsigned>>> moved;
  SmallVector<linalg::GenericOp> generics;
  for (Operation &op : func.getBody().front())
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      generics.push_back(generic);
  for (linalg::GenericOp generic : generics) {
    unsigned n = generic.getNumLoops();
    if (n < 2 || generic.getNumParallelLoops() != n)
      continue;
    std::optional<unsigned> column;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(input);
      if (!dependsOnLinalg(input->get()) || !map.isProjectedPermutation() ||
          map.getNumResults() != n - 1)
        continue;
      for (unsigned d = 0; d < n; ++d)
        if (!map.isFunctionOfDim(d))
          column = d;
      break;
    }
    if (!column || *column == n - 1)
      continue;
    SmallVector<unsigned> order;
    for (unsigned d = 0; d < n; ++d)
      if (d != *column)
        order.push_back(d);
    order.push_back(*column);
    if (succeeded(linalg::interchangeGenericOp(rewriter, generic, order)))
      moved.push_back({generic, order});
  }
  return moved;
}

/// Undoes moveColumnLoopsLast's interchanges.
static void
restoreLoops(RewriterBase &rewriter,
             ArrayRef<std::pair<Operation *, SmallVector<unsigned>>> moved) {
  for (const auto &[op, order] : moved) {
    SmallVector<unsigned> inverse(order.size());
    for (auto [i, d] : llvm::enumerate(order))
      inverse[d] = i;
    (void)linalg::interchangeGenericOp(rewriter, cast<linalg::GenericOp>(op),
                                       inverse);
  }
}

/// Tiles `root` of a row-reduction kernel (isRowReductionKernel, `rowRank`
/// row loops) for a warp or a block per row, returning its block loop:
///  - a block forall over the row loops by the config's outer block tile,
///    each row whole;
///  - a thread forall over single rows (y innermost, then z) where a block
///    has more than one row along a loop: the warps of `reduce warp`;
///  - in each row, the root (unless it is the reduction) tiled over the
///    row's elements in a forall over x, the lanes, `thread` elements
///    each, cyclically (lane l takes the tiles l, l + lanes, ...): the
///    producers of those elements are fused per element, the row's
///    reductions are not (they stay at the row level, computed once);
///  - each reduction of the row split over the lanes (splitOverLanes).
static FailureOr<Operation *>
tileRows(RewriterBase &rewriter, TilingInterface root, const TileConfig &config,
         int64_t rowRank, bool epilogue, ArrayRef<int64_t> blockSizes) {
  MLIRContext *ctx = rewriter.getContext();
  bool rootReduces = hasReductionLoops(root);
  FailureOr<TilingInterface> blockRoot =
      tileLevel(rewriter, root, blockSizes, /*threads=*/false,
                /*deferPads=*/false);
  if (failed(blockRoot))
    return failure();

  // Single rows, over y and z.
  SmallVector<int64_t> rowSizes;
  SmallVector<Attribute> rowMapping;
  for (int64_t i = 0; i < rowRank; ++i)
    rowSizes.push_back(blockSizes[i] > 1 ? 1 : 0);
  int64_t tiledRows = llvm::count(rowSizes, 1);
  if (tiledRows > 2)
    return root->emitOpError("has more than one row per block along ")
           << tiledRows << " loops; a warp per row maps at most two (y, z)";
  for (int64_t i = 0; i < tiledRows; ++i)
    rowMapping.push_back(gpu::GPUThreadMappingAttr::get(
        ctx, static_cast<gpu::MappingId>(tiledRows - i)));
  TilingInterface rowRoot = *blockRoot;
  if (tiledRows > 0) {
    scf::SCFTilingOptions tiling;
    SmallVector<int64_t> sizes(rowSizes);
    sizes.resize(rowRoot.getLoopIteratorTypes().size(), 0);
    tiling.setTileSizes(getAsIndexOpFoldResult(ctx, sizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setMapping(rowMapping);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    FailureOr<Operation *> tiled = tileAndFuse(
        rewriter, rowRoot, options, "could not be tiled to single rows");
    if (failed(tiled))
      return failure();
    rowRoot = cast<TilingInterface>(*tiled);
  }
  Operation *rowScope = rowRoot->getParentOfType<scf::ForallOp>();
  if (!rowScope)
    return root->emitOpError("has no block loop after tiling to rows");
  Operation *blockLoop = getBlockLoop(rowScope);
  if (!blockLoop)
    blockLoop = rowScope;

  int64_t tile = config.threadTile.back();
  int64_t lanes = config.blockTile.back() / tile;
  if (!rootReduces && !epilogue) {
    // The row's elements over the lanes.
    SmallVector<int64_t> sizes(rowRank, 0);
    sizes.push_back(tile);
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(ctx, sizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setMapping(llvm::to_vector(getLaneMapping(ctx).getValue()));
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    options.setFusionControlFn([](tensor::ExtractSliceOp slice,
                                  OpResult producer, bool isDestination) {
      return fuseIntoLanes(slice, producer, isDestination,
                           /*fuseDestinations=*/true);
    });
    if (failed(tileAndFuse(rewriter, rowRoot, options,
                           "could not be tiled over the row's lanes")))
      return failure();
  }
  SmallVector<linalg::GenericOp> reductions;
  rowScope->walk([&](linalg::GenericOp op) {
    if (hasReductionLoops(op) && !op->getParentOfType<scf::ForOp>())
      reductions.push_back(op);
  });
  // Consumers first: a reduction's producers are fused into its lanes'
  // steps before they are split themselves.
  for (linalg::GenericOp reduction : llvm::reverse(reductions))
    if (failed(
            splitOverLanes(rewriter, reduction, lanes, tile,
                           /*root=*/rootReduces && reduction.getOperation() ==
                                                       rowRoot.getOperation())))
      return failure();
  if (epilogue) {
    // One value per row, from the merged reductions: lane 0 computes it
    // (into its private accumulator, when the epilogue continues in place
    // on a reduction's) and writes it to the row's output.
    Location loc = rowRoot.getLoc();
    Value rootResult = rowRoot->getResult(0);
    auto insert = rootResult.hasOneUse()
                      ? dyn_cast<tensor::ParallelInsertSliceOp>(
                            *rootResult.getUsers().begin())
                      : nullptr;
    if (!insert)
      return rowRoot->emitOpError(
          "is an epilogue whose row is not inserted into the output");
    rewriter.setInsertionPoint(rowRoot);
    Value output = tensor::ExtractSliceOp::create(
        rewriter, loc, cast<RankedTensorType>(rootResult.getType()),
        insert.getDest(), insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
    Value written = writeFromLaneZero(rewriter, loc, output, [&] {
      return rewriter.clone(*rowRoot)->getResult(0);
    });
    rewriter.replaceOp(rowRoot, written);
  }
  return blockLoop;
}

//===----------------------------------------------------------------------===//
// Vectors of elementwise tiles
//===----------------------------------------------------------------------===//

/// Vectorizes each elementwise op of a thread tile in `blockLoop` whose tile
/// is static with an innermost extent `n` of 2 or more elements and at most
/// 16 bytes per operand, when every operand that walks the innermost loop
/// walks it as its own innermost dimension and is a slice of a kernel
/// argument in which every vector of `n` elements is aligned to its size
/// (isAlignedArgumentSlice: divisibility facts); other operands are
/// broadcast along it. The op becomes in-bounds `vector.transfer_read`s and
/// `transfer_write`s of 1-D vectors, which dyncc-lower-vector-transfers
/// turns into `vector.load`/`store` aligned to their size (16-byte
/// `ld.global.v4.f32` on the GPU). Every in-bounds transfer of a kernel is
/// made here, under that proof: the lowering relies on it.
static void vectorizeThreadTiles(RewriterBase &rewriter, Operation *blockLoop,
                                 const ClampFacts &known) {
  SmallVector<linalg::GenericOp> candidates;
  blockLoop->walk([&](linalg::GenericOp op) {
    if (inThreadForall(op) && !op->getParentOfType<scf::ForOp>() &&
        op.hasPureTensorSemantics() &&
        op.getNumParallelLoops() == op.getNumLoops() && op.getNumLoops() > 0)
      candidates.push_back(op);
  });
  bool vectorized = false;
  for (linalg::GenericOp op : candidates) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      continue;
    int64_t n = ranges.back();
    unsigned inner = op.getNumLoops() - 1;
    // One 1-D vector per thread: the outer sizes of the tile are 1 (a conv's
    // 2x1x4 thread tile is not vectorized; its transfers would be 3-D, with
    // broadcasts, which neither target lowers to aligned accesses).
    if (n < 2 || llvm::any_of(ArrayRef(ranges).drop_back(),
                              [](int64_t r) { return r != 1; }))
      continue;
    bool ok = true;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || !type.getElementType().isIntOrFloat()) {
        ok = false;
        break;
      }
      if (!map.isFunctionOfDim(inner))
        continue; // Broadcast along the vector: one scalar.
      int64_t bits = type.getElementTypeBitWidth();
      auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
      if (!last || last.getPosition() != inner || n * bits > 128 ||
          (n * bits) % 8 != 0 ||
          !llvm::isPowerOf2_64(static_cast<uint64_t>(n * bits / 8)) ||
          !isAlignedArgumentSlice(operand.get(), n, known)) {
        ok = false;
        break;
      }
    }
    if (!ok || failed(linalg::vectorizeOpPrecondition(op)))
      continue;
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> result =
        linalg::vectorize(rewriter, op);
    if (failed(result))
      continue;
    rewriter.replaceOp(op, result->replacements);
    vectorized = true;
  }
  if (!vectorized)
    return;
  // Tiles have unit outer dimensions: 1-D vectors, 1-D transfers.
  RewritePatternSet patterns(rewriter.getContext());
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  vector::populateVectorTransferDropUnitDimsPatterns(patterns);
  vector::populateDropUnitDimWithShapeCastPatterns(patterns);
  (void)applyPatternsGreedily(blockLoop, std::move(patterns));
}

struct TileAndFuse final : ::dyncc::impl::TileAndFusePassBase<TileAndFuse> {
  using Base::Base;

  /// Every canonicalization pattern, gathered once for all kernels.
  FrozenRewritePatternSet canonicalization;

  LogicalResult initialize(MLIRContext *ctx) override {
    canonicalization = dyncc::getAllCanonicalizationPatterns(ctx);
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("dyncc.kernel"))
      return;
    FailureOr<TileConfig> config = TileConfig::fromAttr(
        func->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName()));
    if (failed(config)) {
      func.emitOpError("has no valid ") << TileConfig::getAttrName();
      return signalPassFailure();
    }
    if (failed(prepareKernel(func))) {
      func.emitOpError("could not be simplified for tiling");
      return signalPassFailure();
    }

    computeResultsInPlace(func);
    if (auto kind = func->getAttrOfType<StringAttr>("dyncc.kind");
        kind && kind.getValue() == "reduce")
      readPadsInPlace(func);
    copyArgumentsIntoSlices(func);
    copyArgumentsIntoResults(func);
    privatizeSharedResults(func);

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    IRRewriter sequential(&getContext());
    bool anySequential = false;
    for (OpOperand &operand : ret->getOpOperands()) {
      auto loop = operand.get().getDefiningOp<scf::ForOp>();
      if (!loop)
        continue;
      runSequentially(sequential, loop,
                      cast<OpResult>(operand.get()).getResultNumber());
      anySequential = true;
    }
    SetVector<Operation *> roots;
    for (Value value : ret.getOperands()) {
      if (value.getDefiningOp<scf::ForallOp>())
        continue; // Run sequentially.
      if (failed(collectRoots(value, roots)))
        return signalPassFailure();
    }
    // Consumers first: a root another root reads is fused into the reader.
    SmallVector<Operation *> order(roots.begin(), roots.end());
    llvm::sort(order, [](Operation *a, Operation *b) {
      return b->isBeforeInBlock(a);
    });

    Block &entry = func.getBody().front();
    ClampFacts known{entry, getArgumentFacts(func), canonicalization};
    IRRewriter rewriter(&getContext());
    auto kind = func->getAttrOfType<StringAttr>("dyncc.kind");
    bool gemmLike =
        kind && (kind.getValue() == "gemm" || kind.getValue() == "conv");
    int64_t sharedBudget = sharedBytes;
    // The shared bytes the GEMM roots' blocks take, in all and at most.
    int64_t usedTotal = 0, usedMost = 0;
    // Per grid axis (x, y, z), the distinct block counts of the roots; the
    // grid is their maximum.
    std::set<DimExpr> grid[3];
    if (anySequential)
      for (std::set<DimExpr> &axis : grid)
        axis.insert(DimExpr(1));
    for (Operation *op : order) {
      FailureOr<Operation *> expanded = expandScalarRoot(rewriter, op);
      if (failed(expanded))
        return signalPassFailure();
      op = *expanded;
      auto root = cast<TilingInterface>(op);
      int64_t rank = getParallelRank(op);
      // A warp or a block per row, where the kernel's reductions are along
      // rows: the block tile's last size is the lanes' step along the row,
      // which is not split over blocks (block size 0: whole).
      int64_t rowRank = 0;
      bool epilogue = false;
      bool columns = config->reduction == RowReduction::Column;
      SmallVector<std::pair<Operation *, SmallVector<unsigned>>> moved;
      if (columns)
        moved = moveColumnLoopsLast(rewriter, func);
      bool rows = config->reduction != RowReduction::Thread &&
                  isRowReductionKernel(func, op, rowRank, epilogue, columns);
      if (!rows)
        restoreLoops(rewriter, moved);
      SmallVector<int64_t> blockSizes;
      if (rows) {
        blockSizes =
            alignSizes(ArrayRef(config->blockTile).drop_back(), rowRank);
        if (!hasReductionLoops(op) && !epilogue)
          blockSizes.push_back(0);
      } else {
        blockSizes = alignSizes(config->blockTile, rank);
      }
      SmallVector<int64_t> threadSizes = getThreadSizes(*config, rank);
      SmallVector<int64_t> gridOrder;
      if (gemmLike && !rows)
        gridOrder = permuteForTransposedProduct(
            op, kind.getValue() == "gemm", blockSizes, threadSizes);

      // The grid: ceil(extent / tile) per tiled loop, innermost first.
      rewriter.setInsertionPoint(op);
      SmallVector<Range> domain = root.getIterationDomain(rewriter);
      // In the grid's order (tileLevel's mapping).
      SmallVector<DimExpr> counts;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      for (int64_t i : getGridLoops(blockSizes, gridOrder)) {
        // An output loop's extent is a dimension of the destination.
        FailureOr<DimExpr> extent = failure();
        if (linalgOp && linalgOp.getNumDpsInits() > 0) {
          OpOperand *init = linalgOp.getDpsInitOperand(0);
          AffineMap map = linalgOp.getMatchingIndexingMap(init);
          if (std::optional<unsigned> pos =
                  map.getResultPosition(getAffineDimExpr(i, op->getContext())))
            extent = getKernelDimExpr(init->get(), *pos, entry, 0);
        }
        if (failed(extent))
          extent = getKernelExtentExpr(domain[i].size, entry);
        if (failed(extent)) {
          InFlightDiagnostic diag =
              op->emitOpError("loop ")
              << i
              << " has an extent that is not an expression of the "
                 "kernel's arguments; the grid cannot be sized";
          if (auto v = dyn_cast<Value>(domain[i].size))
            diag.attachNote(v.getLoc()) << "extent: " << v;
          return signalPassFailure();
        }
        counts.push_back(DimExpr::ceilDiv(*extent, DimExpr(blockSizes[i])));
      }
      DimExpr axes[3] = {DimExpr(1), DimExpr(1), DimExpr(1)};
      int64_t tiled = counts.size();
      for (int64_t i = 0; i < tiled; ++i) {
        int64_t fromInner = tiled - 1 - i;
        if (fromInner < 2)
          axes[fromInner] = counts[i];
        else
          axes[2] = axes[2] * counts[i];
      }
      for (int a = 0; a < 3; ++a)
        grid[a].insert(axes[a]);

      if (rows) {
        FailureOr<Operation *> blockLoop =
            tileRows(rewriter, root, *config, rowRank, epilogue, blockSizes);
        if (failed(blockLoop))
          return signalPassFailure();
        dropDivisibleClamps(rewriter, *blockLoop, known);
        continue;
      }

      bool deferPads = config->kStep > 0;
      FailureOr<TilingInterface> blockRoot = tileLevel(
          rewriter, root, blockSizes, /*threads=*/false, deferPads,
          /*fuseDestinations=*/true, /*fusePads=*/true, /*warps=*/false,
          gridOrder);
      if (failed(blockRoot))
        return signalPassFailure();
      blockRoot = dropClampsKeeping(rewriter, *blockRoot, known);
      // GEMM and conv blocks share their operands through shared memory
      // where the tiles fit; otherwise each thread walks its own k-steps.
      if (gemmLike && config->kStep > 0 && getBlockLoop(*blockRoot)) {
        // Roots computed in turn (fused Q, K and V projections) share their
        // buffers' bytes where the kernel's are laid out by liveness (once
        // a root's product is static): each then has the whole budget.
        if (func->hasAttr(kOverlappedSharedBytesAttrName))
          sharedBudget = sharedBytes;
        int64_t needed =
            estimateSharedBytes(rewriter, getBlockLoop(*blockRoot), *config);
        if (needed <= sharedBudget) {
          int64_t before = sharedBudget;
          if (failed(tileGemmBlock(rewriter, *blockRoot, *config, rank, known,
                                   sharedBudget)))
            return signalPassFailure();
          usedTotal += before - sharedBudget;
          usedMost = std::max(usedMost, before - sharedBudget);
          continue;
        }
        // Tiles too large for the targets are worth a word; tiles that
        // cannot be promoted at all (kNoHi: no static bound, a window
        // split by the k-step) are the structure's, not the config's.
        if (needed != kNoHi)
          (*blockRoot)->emitWarning("config '")
              << config->str() << "' needs " << needed
              << " bytes of shared memory per block for its operand tiles, "
                 "more than the "
              << sharedBudget
              << " the targets allow: each thread walks its own k-steps";
      }
      FailureOr<TilingInterface> threadRoot = tileLevel(
          rewriter, *blockRoot, threadSizes, /*threads=*/true, deferPads);
      if (failed(threadRoot))
        return signalPassFailure();
      threadRoot = dropClampsKeeping(rewriter, *threadRoot, known);
      Operation *scope = (*threadRoot)->getParentOfType<scf::ForallOp>();
      if (config->kStep > 0 &&
          failed(tileReductions(rewriter, scope ? scope : func.getOperation(),
                                *config)))
        return signalPassFailure();
      if (Operation *blockLoop = scope ? getBlockLoop(scope) : nullptr) {
        dropDivisibleClamps(rewriter, blockLoop, known);
        vectorizeThreadTiles(rewriter, blockLoop, known);
      }
    }
    // The roots' blocks run in turn and their buffers share bytes (laid out
    // by liveness: dyncc-overlap-shared-accumulators), so the kernel needs
    // its largest root's only; the rest counts as overlapped.
    if (auto attr =
            func->getAttrOfType<IntegerAttr>(kOverlappedSharedBytesAttrName))
      func->setAttr(
          kOverlappedSharedBytesAttrName,
          rewriter.getI64IntegerAttr(attr.getInt() + usedTotal - usedMost));
    // Loop bounds read dimensions of whole tensors (a padded input's); in
    // terms of the kernel's arguments instead, so nothing outside the tile
    // loops keeps a whole intermediate alive.
    RewritePatternSet dims(&getContext());
    memref::populateResolveRankedShapedTypeResultDimsPatterns(dims);
    if (failed(applyPatternsGreedily(func, std::move(dims))))
      return signalPassFailure();
    Builder b(&getContext());
    SmallVector<Attribute> gridAttr;
    for (int a = 0; a < 3; ++a) {
      SmallVector<Attribute> terms;
      for (const DimExpr &term : grid[a])
        terms.push_back(b.getStringAttr(term.str()));
      if (terms.empty())
        terms.push_back(b.getStringAttr("1"));
      gridAttr.push_back(b.getArrayAttr(terms));
    }
    func->setAttr(getGridAttrName(), b.getArrayAttr(gridAttr));
  }
};

} // namespace
