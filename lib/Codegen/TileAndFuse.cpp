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

#include "dyncc/Codegen/Passes.h"
#include "dyncc/Support/DimExpr.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <set>

namespace dyncc {
#define GEN_PASS_DEF_TILEANDFUSEPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

//===----------------------------------------------------------------------===//
// Grid expressions
//===----------------------------------------------------------------------===//

/// Expresses an extent computed inside a kernel as a DimExpr over the
/// kernel's arguments, or fails.
static FailureOr<DimExpr> getExtentExpr(OpFoldResult ofr, Block &entry,
                                        unsigned depth = 0);

static FailureOr<DimExpr> getDimExpr(Value tensor, int64_t d, Block &entry,
                                     unsigned depth) {
  auto type = dyn_cast<ShapedType>(tensor.getType());
  if (!type || d >= type.getRank())
    return failure();
  if (!type.isDynamicDim(d))
    return DimExpr(type.getDimSize(d));
  if (auto arg = dyn_cast<BlockArgument>(tensor)) {
    if (arg.getOwner() != &entry)
      return failure();
    return DimExpr::symbol(getGridArgName(arg.getArgNumber(), d));
  }
  Operation *def = tensor.getDefiningOp();
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return getExtentExpr(empty.getMixedSizes()[d], entry, depth + 1);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return getDimExpr(dps.getTiedOpOperand(cast<OpResult>(tensor))->get(), d,
                      entry, depth + 1);
  if (auto pad = dyn_cast<tensor::PadOp>(def)) {
    FailureOr<DimExpr> src = getDimExpr(pad.getSource(), d, entry, depth + 1);
    FailureOr<DimExpr> low =
        getExtentExpr(pad.getMixedLowPad()[d], entry, depth + 1);
    FailureOr<DimExpr> high =
        getExtentExpr(pad.getMixedHighPad()[d], entry, depth + 1);
    if (failed(src) || failed(low) || failed(high))
      return failure();
    return *src + *low + *high;
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return getDimExpr(cast.getSource(), d, entry, depth + 1);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
    return getExtentExpr(expand.getMixedOutputShape()[d], entry, depth + 1);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    DimExpr product(1);
    for (int64_t src : collapse.getReassociationIndices()[d]) {
      FailureOr<DimExpr> e =
          getDimExpr(collapse.getSrc(), src, entry, depth + 1);
      if (failed(e))
        return failure();
      product = product * *e;
    }
    return product;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    int64_t seen = -1;
    for (auto [i, size] : llvm::enumerate(slice.getMixedSizes())) {
      if (dropped.test(i))
        continue;
      if (++seen == d)
        return getExtentExpr(size, entry, depth + 1);
    }
  }
  return failure();
}

static FailureOr<DimExpr> getExtentExpr(OpFoldResult ofr, Block &entry,
                                        unsigned depth) {
  if (depth > 32)
    return failure();
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return DimExpr(*c);
  Value v = cast<Value>(ofr);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != &entry || !arg.getType().isIndex())
      return failure();
    return DimExpr::symbol(getGridArgName(arg.getArgNumber(), std::nullopt));
  }
  Operation *def = v.getDefiningOp();
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!d)
      return failure();
    return getDimExpr(dim.getSource(), *d, entry, depth + 1);
  }
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    AffineMap map = apply.getAffineMap();
    SmallVector<DimExpr> operands;
    for (Value operand : apply.getOperands()) {
      FailureOr<DimExpr> e = getExtentExpr(operand, entry, depth + 1);
      if (failed(e))
        return failure();
      operands.push_back(*e);
    }
    // Evaluate the affine expression over DimExprs.
    std::function<FailureOr<DimExpr>(AffineExpr)> eval =
        [&](AffineExpr e) -> FailureOr<DimExpr> {
      if (auto c = dyn_cast<AffineConstantExpr>(e))
        return DimExpr(c.getValue());
      if (auto dimE = dyn_cast<AffineDimExpr>(e))
        return operands[dimE.getPosition()];
      if (auto symE = dyn_cast<AffineSymbolExpr>(e))
        return operands[map.getNumDims() + symE.getPosition()];
      auto bin = cast<AffineBinaryOpExpr>(e);
      FailureOr<DimExpr> l = eval(bin.getLHS()), r = eval(bin.getRHS());
      if (failed(l) || failed(r))
        return failure();
      switch (e.getKind()) {
      case AffineExprKind::Add:
        return *l + *r;
      case AffineExprKind::Mul:
        return *l * *r;
      case AffineExprKind::FloorDiv:
        return DimExpr::floorDiv(*l, *r);
      case AffineExprKind::CeilDiv:
        return DimExpr::ceilDiv(*l, *r);
      case AffineExprKind::Mod:
        return DimExpr::mod(*l, *r);
      default:
        return failure();
      }
    };
    if (map.getNumResults() != 1)
      return failure();
    return eval(map.getResult(0));
  }
  auto binary = [&](Value a, Value b, auto fn) -> FailureOr<DimExpr> {
    FailureOr<DimExpr> l = getExtentExpr(a, entry, depth + 1);
    FailureOr<DimExpr> r = getExtentExpr(b, entry, depth + 1);
    if (failed(l) || failed(r))
      return failure();
    return fn(*l, *r);
  };
  if (auto op = dyn_cast<arith::AddIOp>(def))
    return binary(op.getLhs(), op.getRhs(),
                  [](const DimExpr &l, const DimExpr &r) { return l + r; });
  if (auto op = dyn_cast<arith::SubIOp>(def))
    return binary(op.getLhs(), op.getRhs(),
                  [](const DimExpr &l, const DimExpr &r) { return l - r; });
  if (auto op = dyn_cast<arith::MulIOp>(def))
    return binary(op.getLhs(), op.getRhs(),
                  [](const DimExpr &l, const DimExpr &r) { return l * r; });
  if (auto op = dyn_cast<arith::DivUIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::floorDiv);
  if (auto op = dyn_cast<arith::DivSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::floorDiv);
  if (auto op = dyn_cast<arith::CeilDivUIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::ceilDiv);
  if (auto op = dyn_cast<arith::CeilDivSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::ceilDiv);
  if (auto op = dyn_cast<arith::MaxSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::max);
  if (auto op = dyn_cast<arith::MinSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::min);
  return failure();
}

//===----------------------------------------------------------------------===//
// Preparation
//===----------------------------------------------------------------------===//

/// Fuses single-use elementwise producers into their generic consumers,
/// keeping each consumer's destination (upstream's pattern set would also
/// replace destinations that are not read with `tensor.empty`, which breaks
/// computing in place).
struct FuseElementwiseProducers final : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
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

static LogicalResult prepareKernel(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  linalg::ControlDropUnitDims unitDims;
  linalg::populateFoldUnitExtentDimsPatterns(patterns, unitDims);
  linalg::populateFoldUnitExtentDimsCanonicalizationPatterns(patterns,
                                                             unitDims);
  patterns.add<FuseElementwiseProducers>(ctx);
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
  linalg::populateFoldReshapeOpsByExpansionPatterns(
      reshapes, [](OpOperand *operand) {
        Operation *producer = operand->get().getDefiningOp();
        if (!producer || !producer->hasOneUse())
          return false;
        if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(producer))
          return !isa<BlockArgument>(reshape.getSrc());
        if (auto reshape = dyn_cast<tensor::ExpandShapeOp>(producer))
          return !isa<BlockArgument>(reshape.getSrc());
        return true;
      });
  reshapes.add<FuseElementwiseProducers>(ctx);
  tensor::populateFoldTensorEmptyPatterns(reshapes);
  return applyPatternsGreedily(func, std::move(reshapes));
}

//===----------------------------------------------------------------------===//
// Roots and tiling
//===----------------------------------------------------------------------===//

/// Collects the tileable ops whose results reach `value`, a kernel result,
/// through reshapes, casts and insert_slices.
static LogicalResult collectRoots(Value value, SetVector<Operation *> &roots) {
  while (true) {
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
    if (auto op = dyn_cast<tensor::ExpandShapeOp>(def)) {
      value = op.getSrc();
      continue;
    }
    if (auto op = dyn_cast<tensor::CollapseShapeOp>(def)) {
      value = op.getSrc();
      continue;
    }
    if (auto op = dyn_cast<tensor::CastOp>(def)) {
      value = op.getSource();
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

/// True when `op` has reduction loops.
static bool hasReductionLoops(Operation *op) {
  auto tileable = dyn_cast<TilingInterface>(op);
  return tileable && llvm::is_contained(tileable.getLoopIteratorTypes(),
                                        utils::IteratorType::reduction);
}

/// Tiles `root` with `sizes` (per loop; 0 keeps a loop whole) into an
/// scf.forall with the given mapping, and fuses its producers. With
/// `deferPads`, a pad read by a reduction (a conv's padded input) is left
/// for the k-step level: fused here it would be padded whole over every
/// reduced dimension (all input channels), fused per step it is one step's
/// window. Returns the tiled root.
static FailureOr<TilingInterface> tileLevel(RewriterBase &rewriter,
                                            TilingInterface root,
                                            ArrayRef<int64_t> sizes,
                                            bool threads, bool deferPads) {
  MLIRContext *ctx = rewriter.getContext();
  size_t numLoops = root.getLoopIteratorTypes().size();
  SmallVector<int64_t> allSizes(sizes.begin(), sizes.end());
  allSizes.resize(numLoops, 0);
  size_t tiled = llvm::count_if(allSizes, [](int64_t s) { return s != 0; });
  if (tiled == 0)
    return root;
  if (tiled > 3 + 9)
    return root->emitOpError("has ") << tiled << " tiled loops, at most 12";

  SmallVector<Attribute> mapping;
  for (size_t i = 0; i < tiled; ++i) {
    gpu::MappingId id = getMappingId(i, tiled);
    mapping.push_back(threads
                          ? Attribute(gpu::GPUThreadMappingAttr::get(ctx, id))
                          : Attribute(gpu::GPUBlockMappingAttr::get(ctx, id)));
  }

  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(ctx, allSizes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setMapping(mapping);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  if (deferPads)
    options.setFusionControlFn(
        [](tensor::ExtractSliceOp slice, OpResult producer,
           bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (isa<tensor::PadOp>(producer.getOwner()) &&
              llvm::any_of(slice->getUsers(), hasReductionLoops))
            return std::nullopt;
          return scf::SCFTileAndFuseOptions::ControlFnResult{};
        });

  FailureOr<Operation *> tiledRoot =
      tileAndFuse(rewriter, root, options, "could not be tiled and fused");
  if (failed(tiledRoot))
    return failure();
  return cast<TilingInterface>(*tiledRoot);
}

/// Tiles the reduction loops of every op with reductions inside `scope` (a
/// thread forall) into sequential `scf.for` loops of `kStep` iterations,
/// fusing producers into each step: a temporary read by a reduction (the
/// prologue of a GEMM, the exponentials of a softmax) then lives one step at
/// a time, bounded by the tile sizes, however long the reduction is.
static LogicalResult tileReductions(RewriterBase &rewriter, Operation *scope,
                                    int64_t kStep) {
  // A pad deferred by tileLevel is read through a slice of a slice: merged
  // into one slice, then swapped with the pad, it pads just this thread's
  // window, and the k-step loops below fuse it (and its producers) per step.
  // No zero-slice guard: a window wholly in the padding reads an empty
  // slice, which the loops that pad lowers to handle.
  RewritePatternSet slices(rewriter.getContext());
  tensor::populateMergeConsecutiveInsertExtractSlicePatterns(slices);
  slices.add<linalg::ExtractSliceOfPadTensorSwapPattern>(
      rewriter.getContext(),
      [](tensor::ExtractSliceOp slice) -> std::optional<bool> {
        if (llvm::any_of(slice->getUsers(), hasReductionLoops))
          return false;
        return std::nullopt;
      });
  // The swap casts the pad to the slice's static sizes; folded into the
  // pad, so the pad itself is the producer the steps fuse.
  tensor::PadOp::getCanonicalizationPatterns(slices, rewriter.getContext());
  if (failed(applyPatternsGreedily(scope, std::move(slices))))
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
    SmallVector<int64_t> sizes;
    for (utils::IteratorType t : op.getLoopIteratorTypes())
      sizes.push_back(t == utils::IteratorType::reduction ? kStep : 0);
    scf::SCFTilingOptions tiling;
    tiling.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForOp);
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // The accumulator's initialization (a fill) stays before the loop: fused
    // into it, it would reset the accumulator at every step.
    options.setFusionControlFn(
        [](tensor::ExtractSliceOp, OpResult, bool isDestination)
            -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
          if (isDestination)
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

/// Replaces the clamp `min(step, ub - iv)` of a tile loop from 0 to `ub` by
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
        // A loop induction variable from 0 in steps of `step`.
        auto arg = dyn_cast<BlockArgument>(operands[iv]);
        if (!arg)
          continue;
        Operation *loop = arg.getOwner()->getParentOp();
        std::optional<OpFoldResult> lb, st, ub;
        if (auto forall = dyn_cast<scf::ForallOp>(loop)) {
          unsigned pos = arg.getArgNumber();
          if (pos >= forall.getRank())
            continue;
          lb = forall.getMixedLowerBound()[pos];
          st = forall.getMixedStep()[pos];
          ub = forall.getMixedUpperBound()[pos];
        } else if (auto forOp = dyn_cast<scf::ForOp>(loop)) {
          if (arg != forOp.getInductionVar())
            continue;
          lb = forOp.getLowerBound();
          st = forOp.getStep();
          ub = forOp.getUpperBound();
        } else {
          continue;
        }
        if (getConstantIntValue(*lb) != 0 ||
            getConstantIntValue(*st) != step.getValue())
          continue;
        FailureOr<DimExpr> ubExpr = getExtentExpr(*ub, known.entry);
        if (failed(ubExpr) ||
            !isDivisibleBy(*ubExpr, step.getValue(), known.facts))
          continue;
        for (unsigned u = 0; u < operands.size() && !replaced; ++u) {
          // The clamp's bound is the loop's (tiling reads a dimension more
          // than once, so compare what the values are, not which they are).
          FailureOr<DimExpr> bound = getExtentExpr(operands[u], known.entry);
          if (failed(bound) || *bound != *ubExpr ||
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

struct TileAndFuse final : ::dyncc::impl::TileAndFusePassBase<TileAndFuse> {
  using Base::Base;

  /// Every canonicalization pattern, gathered once for all kernels.
  FrozenRewritePatternSet canonicalization;

  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet patterns(ctx);
    for (Dialect *dialect : ctx->getLoadedDialects())
      dialect->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : ctx->getRegisteredOperations())
      op.getCanonicalizationPatterns(patterns, ctx);
    canonicalization = FrozenRewritePatternSet(std::move(patterns));
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

    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SetVector<Operation *> roots;
    for (Value value : ret.getOperands())
      if (failed(collectRoots(value, roots)))
        return signalPassFailure();
    // Consumers first: a root another root reads is fused into the reader.
    SmallVector<Operation *> order(roots.begin(), roots.end());
    llvm::sort(order, [](Operation *a, Operation *b) {
      return b->isBeforeInBlock(a);
    });

    Block &entry = func.getBody().front();
    ClampFacts known{entry, getArgumentFacts(func), canonicalization};
    IRRewriter rewriter(&getContext());
    // Per grid axis (x, y, z), the distinct block counts of the roots; the
    // grid is their maximum.
    std::set<DimExpr> grid[3];
    for (Operation *op : order) {
      auto root = cast<TilingInterface>(op);
      int64_t rank = 0;
      for (utils::IteratorType t : root.getLoopIteratorTypes()) {
        if (t != utils::IteratorType::parallel)
          break;
        ++rank;
      }
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
        if (dps.getNumDpsInits() > 0)
          rank = std::min<int64_t>(
              rank, cast<ShapedType>(dps.getDpsInits()[0].getType()).getRank());
      SmallVector<int64_t> blockSizes = alignSizes(config->blockTile, rank);
      SmallVector<int64_t> threadSizes = alignSizes(config->threadTile, rank);
      // Thread foralls distribute the innermost three dimensions; each
      // thread walks the rest of its block's tile.
      for (int64_t i = 0; i + 3 < rank; ++i)
        threadSizes[i] = 0;

      // The grid: ceil(extent / tile) per tiled loop, innermost first.
      rewriter.setInsertionPoint(op);
      SmallVector<Range> domain = root.getIterationDomain(rewriter);
      SmallVector<DimExpr> counts;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      for (int64_t i = 0; i < rank; ++i) {
        // An output loop's extent is a dimension of the destination.
        FailureOr<DimExpr> extent = failure();
        if (linalgOp && linalgOp.getNumDpsInits() > 0) {
          OpOperand *init = linalgOp.getDpsInitOperand(0);
          AffineMap map = linalgOp.getMatchingIndexingMap(init);
          if (std::optional<unsigned> pos =
                  map.getResultPosition(getAffineDimExpr(i, op->getContext())))
            extent = getDimExpr(init->get(), *pos, entry, 0);
        }
        if (failed(extent))
          extent = getExtentExpr(domain[i].size, entry);
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
      for (int64_t i = 0; i < rank; ++i) {
        int64_t fromInner = rank - 1 - i;
        if (fromInner < 2)
          axes[fromInner] = counts[i];
        else
          axes[2] = axes[2] * counts[i];
      }
      for (int a = 0; a < 3; ++a)
        grid[a].insert(axes[a]);

      bool deferPads = config->kStep > 0;
      FailureOr<TilingInterface> blockRoot =
          tileLevel(rewriter, root, blockSizes, /*threads=*/false, deferPads);
      if (failed(blockRoot))
        return signalPassFailure();
      blockRoot = dropClampsKeeping(rewriter, *blockRoot, known);
      FailureOr<TilingInterface> threadRoot = tileLevel(
          rewriter, *blockRoot, threadSizes, /*threads=*/true, deferPads);
      if (failed(threadRoot))
        return signalPassFailure();
      threadRoot = dropClampsKeeping(rewriter, *threadRoot, known);
      Operation *scope = (*threadRoot)->getParentOfType<scf::ForallOp>();
      if (config->kStep > 0 &&
          failed(tileReductions(rewriter, scope ? scope : func.getOperation(),
                                config->kStep)))
        return signalPassFailure();
      if (Operation *blockLoop = scope ? getBlockLoop(scope) : nullptr)
        dropDivisibleClamps(rewriter, blockLoop, known);
    }
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
