//===- BoundLocalBuffers.cpp - Static local buffers for tile temporaries --===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Bufferization leaves a `memref.alloc` for every temporary of a tile (a
// reduction's accumulator, a producer fused into a tile that is read twice).
// On the GPU an alloc lowers to `malloc`, and on the CPU it would need the
// allocator in every block; neither is acceptable in a kernel. Tile
// temporaries are bounded by the tile sizes, so each one becomes a buffer of
// its static upper bound (from ValueBoundsOpInterface), allocated once at the
// kernel's entry, and viewed at the dynamic size where the alloc was. Both
// targets see the same buffers: thread-private on the GPU, the stack of the
// block's task on the CPU.
//
// Copies become linalg copies, which lower to loops: a non-contiguous
// `memref.copy` would call into MLIR's run-time library. Reshapes of
// contiguous buffers become reinterpretations (expand-strided-metadata crashes
// on some of them in LLVM 22).
//
//===----------------------------------------------------------------------===//

#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace dyncc {
#define GEN_PASS_DEF_BOUNDLOCALBUFFERSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// Bytes per element in memory, or 0 for a type a kernel cannot hold.
static int64_t getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
  return 0;
}

/// A closed range of index values; INT64_MIN / INT64_MAX stand for no bound.
struct Interval {
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
};

constexpr int64_t kNoLo = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoHi = std::numeric_limits<int64_t>::max();

/// `a * c`, or `fallback` when `a` is unbounded or the product overflows.
static int64_t mulOr(int64_t a, int64_t c, int64_t fallback) {
  int64_t out;
  if (a == kNoLo || a == kNoHi || llvm::MulOverflow(a, c, out))
    return fallback;
  return out;
}

static Interval add(Interval a, Interval b) {
  Interval r;
  if (a.lo == kNoLo || b.lo == kNoLo || llvm::AddOverflow(a.lo, b.lo, r.lo))
    r.lo = kNoLo;
  if (a.hi == kNoHi || b.hi == kNoHi || llvm::AddOverflow(a.hi, b.hi, r.hi))
    r.hi = kNoHi;
  return r;
}

static Interval scale(Interval a, int64_t c) {
  if (c >= 0)
    return {mulOr(a.lo, c, kNoLo), mulOr(a.hi, c, kNoHi)};
  return {mulOr(a.hi, c, kNoLo), mulOr(a.lo, c, kNoHi)};
}

/// Interval of affine expression `e` over the intervals of its dims and
/// symbols.
static Interval evaluate(AffineExpr e, ArrayRef<Interval> dims,
                         ArrayRef<Interval> symbols) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return {c.getValue(), c.getValue()};
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return dims[d.getPosition()];
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return symbols[s.getPosition()];
  auto bin = cast<AffineBinaryOpExpr>(e);
  Interval l = evaluate(bin.getLHS(), dims, symbols);
  auto rhsConst = dyn_cast<AffineConstantExpr>(bin.getRHS());
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return add(l, evaluate(bin.getRHS(), dims, symbols));
  case AffineExprKind::Mul:
    if (rhsConst)
      return scale(l, rhsConst.getValue());
    return {};
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    if (!rhsConst || rhsConst.getValue() <= 0)
      return {};
    int64_t c = rhsConst.getValue();
    bool ceil = e.getKind() == AffineExprKind::CeilDiv;
    auto div = [&](int64_t v) -> int64_t {
      if (v == kNoLo || v == kNoHi)
        return v;
      return ceil ? llvm::divideCeilSigned(v, c)
                  : llvm::divideFloorSigned(v, c);
    };
    return {div(l.lo), div(l.hi)};
  }
  case AffineExprKind::Mod:
    if (rhsConst && rhsConst.getValue() > 0)
      return {0, rhsConst.getValue() - 1};
    return {};
  default:
    return {};
  }
}

/// Bounds of index value `v`: ValueBoundsOpInterface's, or, where it has
/// none, interval arithmetic through affine.apply/min/max (the interface
/// states no upper bound for an affine.max, whose bound is the largest of
/// its results' bounds; tiled pads clamp their windows with them).
static Interval getBounds(Value v, int depth = 0) {
  Interval r;
  if (FailureOr<int64_t> lo = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::LB, v, /*stopCondition=*/nullptr);
      succeeded(lo))
    r.lo = *lo;
  if (FailureOr<int64_t> hi = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB, v, /*stopCondition=*/nullptr,
          /*closedUB=*/true);
      succeeded(hi))
    r.hi = *hi;
  if ((r.lo != kNoLo && r.hi != kNoHi) || depth > 16)
    return r;
  Operation *def = v.getDefiningOp();
  AffineMap map;
  if (auto op = dyn_cast_or_null<affine::AffineApplyOp>(def))
    map = op.getAffineMap();
  else if (auto op = dyn_cast_or_null<affine::AffineMinOp>(def))
    map = op.getAffineMap();
  else if (auto op = dyn_cast_or_null<affine::AffineMaxOp>(def))
    map = op.getAffineMap();
  else
    return r;
  SmallVector<Interval> operands;
  for (Value operand : def->getOperands())
    operands.push_back(getBounds(operand, depth + 1));
  ArrayRef<Interval> all(operands);
  ArrayRef<Interval> dims = all.take_front(map.getNumDims());
  ArrayRef<Interval> symbols = all.drop_front(map.getNumDims());
  SmallVector<Interval> results;
  for (AffineExpr e : map.getResults())
    results.push_back(evaluate(e, dims, symbols));
  Interval combined = results.front();
  for (const Interval &x : ArrayRef(results).drop_front()) {
    if (isa<affine::AffineMinOp>(def)) {
      // min: below the smallest lower bound, above no more than any bound.
      combined.lo = (combined.lo == kNoLo || x.lo == kNoLo)
                        ? kNoLo
                        : std::min(combined.lo, x.lo);
      combined.hi = std::min(combined.hi, x.hi);
    } else {
      combined.lo = std::max(combined.lo, x.lo);
      combined.hi = (combined.hi == kNoHi || x.hi == kNoHi)
                        ? kNoHi
                        : std::max(combined.hi, x.hi);
    }
  }
  // Keep the tighter of the two analyses on each side.
  r.lo = std::max(r.lo, combined.lo);
  r.hi = std::min(r.hi, combined.hi);
  return r;
}

struct BoundLocalBuffers final
    : ::dyncc::impl::BoundLocalBuffersPassBase<BoundLocalBuffers> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("dyncc.kernel") || func.isExternal())
      return;
    IRRewriter rewriter(&getContext());
    Block &entry = func.getBody().front();

    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::CopyOp> copies;
    SmallVector<Operation *> reshapes;
    auto isIdentity = [](Value v) {
      return cast<MemRefType>(v.getType()).getLayout().isIdentity();
    };
    func.walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
      else if (auto copy = dyn_cast<memref::CopyOp>(op))
        copies.push_back(copy);
      else if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(op) &&
               isIdentity(op->getOperand(0)) && isIdentity(op->getResult(0)))
        reshapes.push_back(op);
    });

    int64_t totalBytes = 0;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      int64_t elementBytes = getElementBytes(type.getElementType());
      if (!type.getLayout().isIdentity() || elementBytes == 0) {
        alloc.emitOpError("temporary of type ")
            << type << " cannot be a local buffer";
        return signalPassFailure();
      }
      // Static upper bound of every size.
      int64_t elements = 1;
      unsigned dynamic = 0;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        int64_t bound = type.getDimSize(d);
        if (ShapedType::isDynamic(bound)) {
          Value size = alloc.getDynamicSizes()[dynamic++];
          int64_t ub = getBounds(size).hi;
          if (ub == kNoHi) {
            alloc.emitOpError("temporary dimension ")
                << d
                << " has no static bound; only tile-sized temporaries can "
                   "live in a kernel";
            return signalPassFailure();
          }
          bound = std::max<int64_t>(ub, 0);
        }
        elements *= bound;
      }
      int64_t bytes = std::max<int64_t>(elements * elementBytes, 1);
      totalBytes += bytes;
      if (totalBytes > maxBytes) {
        alloc.emitOpError("tile temporaries need ")
            << totalBytes << " bytes per thread, more than the limit of "
            << static_cast<int64_t>(maxBytes) << "; the tile is too large";
        return signalPassFailure();
      }

      Location loc = alloc.getLoc();
      rewriter.setInsertionPointToStart(&entry);
      Value replacement;
      if (type.hasStaticShape()) {
        replacement = memref::AllocaOp::create(rewriter, loc, type,
                                               alloc.getAlignmentAttr());
        rewriter.setInsertionPoint(alloc);
      } else {
        auto bufferType = MemRefType::get({bytes}, rewriter.getI8Type());
        Value buffer = memref::AllocaOp::create(rewriter, loc, bufferType,
                                                rewriter.getI64IntegerAttr(16));
        rewriter.setInsertionPoint(alloc);
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        replacement = memref::ViewOp::create(rewriter, loc, type, buffer, zero,
                                             alloc.getDynamicSizes());
      }
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          rewriter.eraseOp(user);
      rewriter.replaceOp(alloc, replacement);
    }

    // Reshapes of contiguous buffers crash expand-strided-metadata in some
    // forms (rank 0 <-> rank 1, several dynamic output sizes; LLVM 22); on
    // identity layouts they are a reinterpretation with row-major strides.
    for (Operation *op : reshapes) {
      Location loc = op->getLoc();
      Value source = op->getOperand(0);
      auto result = cast<MemRefType>(op->getResult(0).getType());
      rewriter.setInsertionPoint(op);
      SmallVector<OpFoldResult> sizes;
      if (auto expand = dyn_cast<memref::ExpandShapeOp>(op)) {
        sizes = expand.getMixedOutputShape();
      } else {
        auto collapse = cast<memref::CollapseShapeOp>(op);
        for (ReassociationIndices group : collapse.getReassociationIndices()) {
          AffineExpr product = rewriter.getAffineConstantExpr(1);
          SmallVector<OpFoldResult> dims;
          for (int64_t d : group) {
            product = product * rewriter.getAffineSymbolExpr(dims.size());
            dims.push_back(memref::getMixedSize(rewriter, loc, source, d));
          }
          sizes.push_back(affine::makeComposedFoldedAffineApply(
              rewriter, loc, AffineMap::get(0, dims.size(), product), dims));
        }
      }
      // Row-major strides. Sizes and strides fold to constants exactly where
      // the identity layout's are static, as the cast's verifier wants.
      SmallVector<OpFoldResult> strides(result.getRank());
      AffineExpr s0 = rewriter.getAffineSymbolExpr(0),
                 s1 = rewriter.getAffineSymbolExpr(1);
      for (int64_t d = result.getRank() - 1; d >= 0; --d)
        strides[d] = d + 1 == result.getRank()
                         ? OpFoldResult(rewriter.getIndexAttr(1))
                         : affine::makeComposedFoldedAffineApply(
                               rewriter, loc, AffineMap::get(0, 2, s0 * s1),
                               {strides[d + 1], sizes[d + 1]});
      rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
          op, result, source, rewriter.getIndexAttr(0), sizes, strides);
    }

    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::makeMemRefCopyOp(rewriter, copy.getLoc(), copy.getSource(),
                               copy.getTarget());
      rewriter.eraseOp(copy);
    }
  }
};

} // namespace
