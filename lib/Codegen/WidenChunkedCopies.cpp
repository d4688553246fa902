//===- WidenChunkedCopies.cpp - Host copies in whole cache lines ----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// dyncc-tile-and-fuse copies a k-step's operand tiles in chunks of at most
// 16 bytes, one chunk per GPU thread: what one cp.async moves. The host runs
// a copy's chunks one after another, and each 16-byte chunk paid for its
// index arithmetic and the mask of a read that may leave its tile. On a
// BERT-base layer (block 32x256, k-step 32) the copy of B's tile was 23% of
// the kernel's time in a profile: 2048 chunks a step, each a masked 16-byte
// load and store and ten instructions of arithmetic around them. This pass
// makes each iteration of a host copy move a run of consecutive chunks:
//
//   scf.forall (%t) in (2048) {            scf.forall (%t) in (512) {
//     %r = affine.apply #rows(%t)            %t4 = affine.apply (d0 * 4)(%t)
//     %c = affine.apply #cols(%t)     ->     %r = affine.apply #rows(%t4)
//     %v = transfer_read %tile[%r, %c]       %c = affine.apply #cols(%t4)
//          : vector<1x4xf32>                 %v = transfer_read %tile[%r, %c]
//     transfer_write %v, %shared[...]             {in_bounds = [true, true]}
//   }                                             : vector<1x16xf32>
//                                            transfer_write %v, ...
//                                          }
//
// A run is as many chunks as fit in `bytes` (64: a cache line, one AVX-512
// register) that the copy's index maps put side by side in one row of both
// the source and the buffer: the maps are evaluated at every chunk (their
// only operand is the chunk index, so that is exact), and chunk t0 + j of a
// run must read and write j vectors past chunk t0, in the same rows. A
// transfer's elements past its source's extents read the padding whatever
// their vector, so a wider read reads the same values.
//
// Each read also becomes in bounds in every dimension where its indices
// provably keep it inside a static extent (the same evaluation gives the
// largest index; indices from outside the copy are bounded by getBounds), so
// a static tile's copy (B's rows of a static K and N) has no mask at all.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace dyncc {
#define GEN_PASS_DEF_WIDENCHUNKEDCOPIESPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using dyncc::getBounds;
using dyncc::Interval;
using dyncc::kNoHi;
using dyncc::kNoLo;

namespace {

/// The value of `e` at dimension values `dims` (no symbols), or nullopt
/// for a division by zero or a symbol.
static std::optional<int64_t> evaluate(AffineExpr e, ArrayRef<int64_t> dims) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return c.getValue();
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return d.getPosition() < dims.size()
               ? std::optional<int64_t>(dims[d.getPosition()])
               : std::nullopt;
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  std::optional<int64_t> l = evaluate(bin.getLHS(), dims);
  std::optional<int64_t> r = evaluate(bin.getRHS(), dims);
  if (!l || !r)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return *l + *r;
  case AffineExprKind::Mul:
    return *l * *r;
  case AffineExprKind::Mod:
    return *r > 0 ? std::optional<int64_t>(llvm::mod(*l, *r)) : std::nullopt;
  case AffineExprKind::FloorDiv:
    return *r != 0 ? std::optional<int64_t>(llvm::divideFloorSigned(*l, *r))
                   : std::nullopt;
  case AffineExprKind::CeilDiv:
    return *r != 0 ? std::optional<int64_t>(llvm::divideCeilSigned(*l, *r))
                   : std::nullopt;
  default:
    return std::nullopt;
  }
}

/// One index of a copy's read or write: a value from outside the copy, or
/// a function of the chunk index alone (its value at every chunk).
struct ChunkIndex {
  Value value;
  std::vector<int64_t> atChunk; // empty where the value is from outside
};

/// A read and the write of its vector into a buffer, with the indices of
/// both: the read's, and the write's into its buffer (through the view
/// the write goes through, if it writes a view at zeros).
struct ChunkPair {
  vector::TransferReadOp read;
  vector::TransferWriteOp write;
  memref::SubViewOp view; // the written view, or null
  SmallVector<ChunkIndex> readIndices, writeIndices;
};

/// `index` as a ChunkIndex of a copy over `chunks` chunks with induction
/// variable `iv`, or nullopt where it depends on the chunk otherwise than
/// through one affine.apply of it alone.
static std::optional<ChunkIndex>
getChunkIndex(OpFoldResult ofr, scf::ForallOp copy, int64_t chunks) {
  auto index = dyn_cast<Value>(ofr);
  ChunkIndex out{index, {}};
  if (!index || getConstantIntValue(index) ||
      !copy->isAncestor(index.getParentRegion()->getParentOp()))
    return out;
  auto apply = index.getDefiningOp<affine::AffineApplyOp>();
  Value iv = copy.getInductionVar(0);
  if (!apply || apply.getMapOperands().size() != 1 ||
      apply.getMapOperands()[0] != iv || apply.getAffineMap().getNumDims() != 1)
    return std::nullopt;
  AffineExpr e = apply.getAffineMap().getResult(0);
  out.atChunk.reserve(chunks);
  for (int64_t t = 0; t < chunks; ++t) {
    std::optional<int64_t> v = evaluate(e, {t});
    if (!v)
      return std::nullopt;
    out.atChunk.push_back(*v);
  }
  return out;
}

/// True if runs of `run` chunks of `indices` are side by side: chunk
/// t0 + j of a run (t0 a multiple of `run`) has chunk t0's indices, the
/// innermost plus j * `width`.
static bool formsRuns(ArrayRef<ChunkIndex> indices, int64_t chunks, int64_t run,
                      int64_t width) {
  for (size_t p = 0; p < indices.size(); ++p) {
    const std::vector<int64_t> &at = indices[p].atChunk;
    bool innermost = p + 1 == indices.size();
    if (at.empty()) {
      if (innermost)
        return false;
      continue;
    }
    for (int64_t t = 0; t < chunks; ++t) {
      int64_t t0 = t - t % run;
      if (at[t] != at[t0] + (innermost ? (t - t0) * width : 0))
        return false;
    }
  }
  return true;
}

/// The chunk copies' pairs, or nullopt where `copy` is not a forall of a
/// static count of chunks, each reading and writing one vector of `width`
/// elements along the innermost dimension (the others 1) at indices that
/// getChunkIndex describes, whose body has nothing else that uses the chunk.
static std::optional<SmallVector<ChunkPair>>
getChunkPairs(scf::ForallOp copy, int64_t &chunks, int64_t &width) {
  if (copy.getRank() != 1 || !copy.isNormalized())
    return std::nullopt;
  // A static count (an attribute: the count is rewritten in place).
  int64_t count = copy.getStaticUpperBound()[0];
  if (ShapedType::isDynamic(count) || count < 1)
    return std::nullopt;
  chunks = count;
  width = 0;
  SmallVector<ChunkPair> pairs;
  for (Operation &op : copy.getBody()->without_terminator()) {
    if (isa<affine::AffineApplyOp, arith::ConstantOp, memref::SubViewOp,
            vector::TransferReadOp>(op))
      continue;
    auto write = dyn_cast<vector::TransferWriteOp>(op);
    if (!write)
      return std::nullopt;
    auto read = write.getVector().getDefiningOp<vector::TransferReadOp>();
    if (!read || read->getBlock() != copy.getBody() ||
        !read.getResult().hasOneUse() || read.getMask() || write.getMask() ||
        !read.getPermutationMap().isMinorIdentity() ||
        !write.getPermutationMap().isMinorIdentity() ||
        !isa<MemRefType>(read.getBase().getType()) ||
        copy->isAncestor(read.getBase().getParentRegion()->getParentOp()) ||
        copy->isAncestor(read.getPadding().getParentRegion()->getParentOp()))
      return std::nullopt;
    VectorType type = read.getVectorType();
    ArrayRef<int64_t> shape = type.getShape();
    if (type.isScalable() || shape.size() != read.getIndices().size() ||
        llvm::any_of(shape.drop_back(), [](int64_t s) { return s != 1; }) ||
        (width && shape.back() != width))
      return std::nullopt;
    width = shape.back();
    ChunkPair pair{read, write, nullptr, {}, {}};
    // The write's indices into its buffer: a view's offsets where it
    // writes the whole of a view at zeros.
    ValueRange writeIndices = write.getIndices();
    SmallVector<OpFoldResult> offsets(writeIndices);
    if (auto view = write.getBase().getDefiningOp<memref::SubViewOp>();
        view && view->getBlock() == copy.getBody() &&
        llvm::all_of(writeIndices, isZeroInteger) && view.hasUnitStride() &&
        view.getSourceType().getRank() == view.getType().getRank() &&
        view.getStaticSizes() == ArrayRef<int64_t>(shape) &&
        view->hasOneUse() &&
        !copy->isAncestor(view.getSource().getParentRegion()->getParentOp())) {
      pair.view = view;
      offsets = view.getMixedOffsets();
    } else if (copy->isAncestor(
                   write.getBase().getParentRegion()->getParentOp())) {
      return std::nullopt;
    }
    for (auto [indices, out] :
         {std::make_pair(SmallVector<OpFoldResult>(read.getIndices()),
                         &pair.readIndices),
          std::make_pair(offsets, &pair.writeIndices)})
      for (OpFoldResult index : indices) {
        std::optional<ChunkIndex> ci = getChunkIndex(index, copy, chunks);
        if (!ci)
          return std::nullopt;
        out->push_back(std::move(*ci));
      }
    pairs.push_back(std::move(pair));
  }
  // Nothing but the indices and the pairs may use the chunk index.
  for (OpOperand &use : copy.getInductionVar(0).getUses())
    if (!isa<affine::AffineApplyOp>(use.getOwner()))
      return std::nullopt;
  if (pairs.empty())
    return std::nullopt;
  return pairs;
}

/// Whether each dimension of `pair`'s read stays inside its source's static
/// extent at every chunk (`run` chunks a read from now on).
static SmallVector<bool> getInBounds(const ChunkPair &pair, int64_t run,
                                     int64_t width) {
  vector::TransferReadOp read = pair.read;
  auto source = cast<MemRefType>(read.getBase().getType());
  ArrayRef<int64_t> shape = read.getVectorType().getShape();
  SmallVector<bool> inBounds(read.getInBoundsValues());
  for (size_t p = 0; p < inBounds.size(); ++p) {
    if (inBounds[p] || source.isDynamicDim(p))
      continue;
    const ChunkIndex &index = pair.readIndices[p];
    bool innermost = p + 1 == inBounds.size();
    int64_t extent = innermost ? run * width : shape[p];
    int64_t lo, hi;
    if (index.atChunk.empty()) {
      Interval bounds = getBounds(index.value);
      lo = bounds.lo;
      hi = bounds.hi;
    } else {
      // The runs' first chunks.
      lo = kNoHi;
      hi = kNoLo;
      for (size_t t = 0; t < index.atChunk.size(); t += run) {
        lo = std::min(lo, index.atChunk[t]);
        hi = std::max(hi, index.atChunk[t]);
      }
    }
    inBounds[p] = lo >= 0 && hi != kNoHi && hi <= source.getDimSize(p) - extent;
  }
  return inBounds;
}

struct WidenChunkedCopies final
    : ::dyncc::impl::WidenChunkedCopiesPassBase<WidenChunkedCopies> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForallOp> copies;
    getOperation()->walk([&](scf::ForallOp op) {
      if (dyncc::isChunkedCopy(op))
        copies.push_back(op);
    });
    for (scf::ForallOp copy : copies)
      widen(copy);
  }

  void widen(scf::ForallOp copy) {
    int64_t chunks, width;
    std::optional<SmallVector<ChunkPair>> pairs =
        getChunkPairs(copy, chunks, width);
    if (!pairs)
      return;
    // The widest element of the pairs' (all move `width` elements a chunk).
    int64_t elementBits = 0;
    for (ChunkPair &pair : *pairs)
      elementBits = std::max<int64_t>(
          elementBits, pair.read.getVectorType().getElementTypeBitWidth());
    // The longest run of chunks (a power of two) that fits in `bytes`,
    // divides the count and that every pair's indices lay side by side.
    int64_t run = 1;
    for (int64_t r = 2; r * width * elementBits <= bytes * 8; r *= 2) {
      if (chunks % r != 0 || !llvm::all_of(*pairs, [&](const ChunkPair &pair) {
            return formsRuns(pair.readIndices, chunks, r, width) &&
                   formsRuns(pair.writeIndices, chunks, r, width);
          }))
        break;
      run = r;
    }

    OpBuilder b(copy);
    if (run > 1) {
      // Chunk t of the new copy is chunk t * run of the old one.
      b.setInsertionPointToStart(copy.getBody());
      Value iv = copy.getInductionVar(0);
      Value first = affine::AffineApplyOp::create(
          b, copy.getLoc(), AffineMap::get(1, 0, b.getAffineDimExpr(0) * run),
          ValueRange{iv});
      iv.replaceAllUsesExcept(first, first.getDefiningOp());
      copy.setStaticUpperBound(ArrayRef<int64_t>{chunks / run});
    }
    for (ChunkPair &pair : *pairs) {
      SmallVector<bool> inBounds = getInBounds(pair, run, width);
      if (run == 1 && llvm::equal(inBounds, pair.read.getInBoundsValues()))
        continue;
      SmallVector<int64_t> shape(pair.read.getVectorType().getShape());
      shape.back() *= run;
      auto type =
          VectorType::get(shape, pair.read.getVectorType().getElementType());
      b.setInsertionPoint(pair.read);
      auto read = vector::TransferReadOp::create(
          b, pair.read.getLoc(), type, pair.read.getBase(),
          pair.read.getIndices(), pair.read.getPadding(), inBounds);
      Value oldBase = pair.write.getBase(), base = oldBase;
      if (pair.view && run > 1) {
        b.setInsertionPoint(pair.view);
        SmallVector<OpFoldResult> sizes =
            getAsIndexOpFoldResult(b.getContext(), ArrayRef<int64_t>(shape));
        base = memref::SubViewOp::create(
            b, pair.view.getLoc(), pair.view.getSource(),
            pair.view.getMixedOffsets(), sizes, pair.view.getMixedStrides());
      }
      b.setInsertionPoint(pair.write);
      vector::TransferWriteOp::create(b, pair.write.getLoc(), read.getResult(),
                                      base, pair.write.getIndices(),
                                      pair.write.getInBoundsValues());
      pair.write.erase();
      pair.read.erase();
      if (base != oldBase && pair.view.use_empty())
        pair.view.erase();
    }
  }
};

} // namespace
