//===- Bounds.cpp - Static bounds of tile sizes ---------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace dyncc {

int64_t getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
  return 0;
}

bool isChunkedCopy(Operation *op) {
  auto forall = dyn_cast<scf::ForallOp>(op);
  std::optional<ArrayAttr> mapping =
      forall ? forall.getMapping() : std::nullopt;
  if (!mapping || mapping->size() != 1)
    return false;
  auto thread = dyn_cast<gpu::GPUThreadMappingAttr>((*mapping)[0]);
  if (!thread || thread.getThread() != gpu::MappingId::LinearDim0)
    return false;
  bool writes = false;
  WalkResult result = forall.getBody()->walk([&](Operation *inner) {
    if (auto write = dyn_cast<vector::TransferWriteOp>(inner)) {
      auto type = dyn_cast<MemRefType>(write.getBase().getType());
      if (!type || !isWorkgroupMemory(type) ||
          !write.getVector().getDefiningOp<vector::TransferReadOp>())
        return WalkResult::interrupt();
      writes = true;
    }
    return WalkResult::advance();
  });
  return writes && !result.wasInterrupted();
}

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
Interval getBounds(Value v, int depth) {
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

} // namespace dyncc

mlir::FrozenRewritePatternSet
dyncc::getAllCanonicalizationPatterns(mlir::MLIRContext *ctx) {
  mlir::RewritePatternSet patterns(ctx);
  for (mlir::Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (mlir::RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  return mlir::FrozenRewritePatternSet(std::move(patterns));
}

void dyncc::replaceWithAlignedAccess(RewriterBase &rewriter,
                                     VectorTransferOpInterface op,
                                     int64_t alignment) {
  rewriter.setInsertionPoint(op);
  llvm::MaybeAlign align(alignment);
  if (auto read = dyn_cast<vector::TransferReadOp>(op.getOperation())) {
    rewriter.replaceOpWithNewOp<vector::LoadOp>(
        read, read.getVectorType(), read.getBase(), read.getIndices(),
        /*nontemporal=*/false, align);
    return;
  }
  auto write = cast<vector::TransferWriteOp>(op.getOperation());
  rewriter.replaceOpWithNewOp<vector::StoreOp>(
      write, write.getVector(), write.getBase(), write.getIndices(),
      /*nontemporal=*/false, align);
}

mlir::LogicalResult dyncc::verifyTargetOption(mlir::Operation *op,
                                              llvm::StringRef target) {
  if (target == "gpu" || target == "cpu")
    return mlir::success();
  return op->emitError("unknown target '")
         << target << "', expected gpu or cpu";
}
