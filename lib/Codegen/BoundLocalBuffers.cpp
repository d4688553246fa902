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
// A temporary inside a thread's (or warp's) loop is that thread's, whatever
// memory space bufferization gave it: an out-of-place copy of a shared tile
// (an epilogue reading the block's accumulator) comes out of one-shot
// bufferization in workgroup memory, and one workgroup buffer for every
// thread would be a race on the GPU. Such temporaries become private, and
// the views of them lose the workgroup space.
//
// A result computed into its destination through a collapse and an
// expansion along the same groups returns the destination itself.
//
// Copies become linalg copies, which lower to loops: a non-contiguous
// `memref.copy` would call into MLIR's run-time library. Reshapes of
// contiguous buffers become reinterpretations (expand-strided-metadata crashes
// on some of them in LLVM 22).
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace dyncc {
#define GEN_PASS_DEF_BOUNDLOCALBUFFERSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// A kernel result that is its destination argument collapsed and expanded
/// back along the same groups (a GEMM whose batch was folded into M computes
/// into [B*S, N]) is that argument's buffer: return the argument itself, as
/// grid mapping expects. (Canonicalization does not fold the pair where
/// several sizes are dynamic, and the expansion's sizes come from an input.)
static void returnDestinations(RewriterBase &rewriter, Block &entry) {
  Operation *ret = entry.getTerminator();
  for (OpOperand &operand : ret->getOpOperands()) {
    auto expand = operand.get().getDefiningOp<memref::ExpandShapeOp>();
    if (!expand)
      continue;
    auto collapse = expand.getSrc().getDefiningOp<memref::CollapseShapeOp>();
    if (!collapse || !isa<BlockArgument>(collapse.getSrc()) ||
        collapse.getSrc().getType() != expand.getType() ||
        collapse.getReassociationIndices() !=
            expand.getReassociationIndices())
      continue;
    rewriter.modifyOpInPlace(ret, [&] { operand.set(collapse.getSrc()); });
    if (expand->use_empty())
      rewriter.eraseOp(expand);
    if (collapse->use_empty())
      rewriter.eraseOp(collapse);
  }
}

/// True inside an `scf.forall` over threads or warps: code each thread (or
/// warp) runs on its own.
static bool isInThreadLoop(Operation *op) {
  for (auto forall = op->getParentOfType<scf::ForallOp>(); forall;
       forall = forall->getParentOfType<scf::ForallOp>()) {
    std::optional<ArrayAttr> mapping = forall.getMapping();
    if (mapping && !mapping->empty() &&
        isa<gpu::GPUThreadMappingAttr, gpu::GPUWarpMappingAttr>(
            (*mapping)[0]))
      return true;
  }
  return false;
}

/// `type` in the default (private) memory space.
static MemRefType getPrivateType(MemRefType type) {
  return MemRefType::Builder(type).setMemorySpace(Attribute());
}

/// Makes a workgroup temporary allocated inside a thread's loop private: a
/// new alloc in the default memory space, and every view of it (subviews,
/// reshapes, casts, transitively) retyped to match. Fails on a user that
/// needs the workgroup type (none of the ops bufferization emits does).
static LogicalResult makePrivate(RewriterBase &rewriter,
                                 memref::AllocOp alloc) {
  rewriter.setInsertionPoint(alloc);
  auto replacement = memref::AllocOp::create(
      rewriter, alloc.getLoc(), getPrivateType(alloc.getType()),
      alloc.getDynamicSizes(), alloc.getSymbolOperands(),
      alloc.getAlignmentAttr());
  rewriter.replaceOp(alloc, replacement);
  SmallVector<Value> worklist = {replacement.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (!isa<ViewLikeOpInterface, memref::CastOp>(user))
        continue;
      for (OpResult result : user->getResults()) {
        auto type = dyn_cast<MemRefType>(result.getType());
        if (!type || !isWorkgroupMemory(type))
          continue;
        rewriter.modifyOpInPlace(
            user, [&] { result.setType(getPrivateType(type)); });
        worklist.push_back(result);
      }
    }
  }
  for (Operation *user : replacement->getUsers())
    if (failed(mlir::verify(user)))
      return user->emitOpError("uses a thread's temporary that was in "
                               "workgroup memory and could not be made "
                               "private");
  return success();
}

/// Whether `op` writes `target` and reads nothing through it: a linalg op
/// with `target` among its inits only, or a copy into it.
static bool onlyWrites(Operation *op, Value target) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return copy.getTarget() == target && copy.getSource() != target;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      llvm::is_contained(linalgOp.getDpsInputs(), target))
    return false;
  for (OpOperand &init : linalgOp.getDpsInitsMutable())
    if (init.get() == target && linalgOp.payloadUsesValueFromOperand(&init))
      return false;
  return true;
}

/// A temporary whose last use copies it whole into a destination of the
/// same sizes, and whose other uses only write it (a padded piece of a
/// conv's window: zeros, then the part inside the input, then the copy into
/// the shared tile), is computed in its destination: the writes go there,
/// and the temporary and its copy go away. On the GPU the temporary was a
/// private buffer of dynamic size, so in local memory: two stores and a
/// load an element. Nothing else in the block may touch memory between the
/// first write and the copy, the destination must be a view of an
/// allocation (a shared tile, not a kernel argument) that the writes do not
/// read, and its view must be available (or be rebuilt) before the first
/// write. Returns whether it forwarded.
static bool forwardToDestination(RewriterBase &rewriter,
                                 memref::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Value temp = alloc.getResult();
  SmallVector<Operation *> writers;
  SmallVector<memref::SubViewOp> pieces;
  Operation *finalCopy = nullptr;
  SmallVector<Operation *> deallocs;
  Value destination;
  for (Operation *user : temp.getUsers()) {
    if (user->getBlock() != block)
      return false;
    if (isa<memref::DeallocOp>(user)) {
      deallocs.push_back(user);
    } else if (auto piece = dyn_cast<memref::SubViewOp>(user)) {
      if (piece.getType().getRank() != alloc.getType().getRank())
        return false;
      for (Operation *pieceUser : piece->getUsers())
        if (pieceUser->getBlock() != block ||
            !onlyWrites(pieceUser, piece.getResult()))
          return false;
        else
          writers.push_back(pieceUser);
      pieces.push_back(piece);
    } else if (auto copy = dyn_cast<linalg::CopyOp>(user);
               copy && copy.getInputs()[0] == temp &&
               copy.getOutputs()[0] != temp && copy.hasPureBufferSemantics()) {
      if (finalCopy)
        return false;
      finalCopy = copy;
      destination = copy.getOutputs()[0];
    } else if (auto copy = dyn_cast<memref::CopyOp>(user);
               copy && copy.getSource() == temp && copy.getTarget() != temp) {
      if (finalCopy)
        return false;
      finalCopy = copy;
      destination = copy.getTarget();
    } else if (onlyWrites(user, temp)) {
      writers.push_back(user);
    } else {
      return false;
    }
  }
  if (!finalCopy || writers.empty())
    return false;
  for (Operation *dealloc : deallocs)
    if (dealloc->isBeforeInBlock(finalCopy))
      return false;
  // The same static sizes and element type.
  auto tempType = alloc.getType();
  auto destType = dyn_cast<MemRefType>(destination.getType());
  if (!destType || destType.getElementType() != tempType.getElementType() ||
      destType.getShape() != tempType.getShape())
    return false;
  auto destView = destination.getDefiningOp<memref::SubViewOp>();
  if (!destView || destView.getType().getRank() != tempType.getRank())
    return false;
  // Their dynamic sizes are equal wherever the copy runs (a copy takes
  // operands of one shape), however they are computed: a padded window
  // piece is sized as its low padding plus its rows in bounds, its shared
  // tile by the tile's clamp.

  // A view of an allocation, read by none of the writes.
  Value destRoot = memref::skipViewLikeOps(cast<MemrefValue>(destination));
  if (!destRoot.getDefiningOp<memref::AllocOp>())
    return false;
  for (Operation *writer : writers)
    for (Value operand : writer->getOperands())
      if (isa<MemRefType>(operand.getType()) &&
          memref::skipViewLikeOps(cast<MemrefValue>(operand)) == destRoot)
        return false;
  // Between the first write and the copy, nothing but the writes and the
  // pieces touches memory.
  Operation *first = writers.front();
  for (Operation *writer : writers)
    if (writer->isBeforeInBlock(first))
      first = writer;
  for (Operation *writer : writers)
    if (!writer->isBeforeInBlock(finalCopy))
      return false;
  for (Operation *op = first; op != finalCopy; op = op->getNextNode())
    if (!llvm::is_contained(writers, op) && !isMemoryEffectFree(op))
      return false;
  // The destination's view before the first write (and before the pieces).
  Operation *start = first;
  for (memref::SubViewOp piece : pieces)
    if (piece->isBeforeInBlock(start))
      start = piece;
  Value target = destination;
  if (destView->getBlock() == block && !destView->isBeforeInBlock(start)) {
    for (Value operand : destView->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() == block && !def->isBeforeInBlock(start))
        return false;
    }
    rewriter.setInsertionPoint(start);
    target = rewriter.clone(*destView)->getResult(0);
  }
  for (memref::SubViewOp piece : pieces) {
    rewriter.setInsertionPoint(piece);
    Value moved = memref::SubViewOp::create(
        rewriter, piece.getLoc(), target, piece.getMixedOffsets(),
        piece.getMixedSizes(), piece.getMixedStrides());
    rewriter.replaceOp(piece, moved);
  }
  for (Operation *writer : writers)
    rewriter.modifyOpInPlace(writer, [&] {
      for (OpOperand &operand : writer->getOpOperands())
        if (operand.get() == temp)
          operand.set(target);
    });
  rewriter.eraseOp(finalCopy);
  for (Operation *dealloc : deallocs)
    rewriter.eraseOp(dealloc);
  rewriter.eraseOp(alloc);
  return true;
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
    returnDestinations(rewriter, entry);

    SmallVector<memref::AllocOp> allocs;
    SmallVector<memref::CopyOp> copies;
    SmallVector<Operation *> reshapes;
    auto isIdentity = [](Value v) {
      return cast<MemRefType>(v.getType()).getLayout().isIdentity();
    };
    SmallVector<memref::AllocOp> threadShared;
    func.walk([&](memref::AllocOp alloc) {
      if (isWorkgroupMemory(alloc.getType()) && isInThreadLoop(alloc))
        threadShared.push_back(alloc);
    });
    for (memref::AllocOp alloc : threadShared)
      if (failed(makePrivate(rewriter, alloc)))
        return signalPassFailure();
    SmallVector<memref::AllocOp> temporaries;
    func.walk([&](memref::AllocOp alloc) {
      if (!isWorkgroupMemory(alloc.getType()))
        temporaries.push_back(alloc);
    });
    for (memref::AllocOp alloc : temporaries)
      forwardToDestination(rewriter, alloc);
    func.walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocs.push_back(alloc);
      else if (auto copy = dyn_cast<memref::CopyOp>(op))
        copies.push_back(copy);
      else if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(op) &&
               isIdentity(op->getOperand(0)) && isIdentity(op->getResult(0)))
        reshapes.push_back(op);
    });

    // A GEMM accumulator that is to share its operand tiles' bytes
    // (dyncc-overlap-shared-accumulators) counts only beyond them.
    int64_t overlapped = 0;
    if (auto attr =
            func->getAttrOfType<IntegerAttr>(kOverlappedSharedBytesAttrName))
      overlapped = attr.getInt();
    int64_t totalBytes = 0, sharedTotal = -overlapped;
    for (memref::AllocOp alloc : allocs) {
      MemRefType type = alloc.getType();
      int64_t elementBytes = getElementBytes(type.getElementType());
      bool shared = isWorkgroupMemory(type);
      if (!type.getLayout().isIdentity() || elementBytes == 0 ||
          (!shared && type.getMemorySpace())) {
        alloc.emitOpError("temporary of type ")
            << type << " cannot be a local buffer";
        return signalPassFailure();
      }
      // Static upper bound of every size. A temporary with a static zero
      // dimension has no elements, whatever its other sizes (a copy of an
      // empty slice).
      bool empty = llvm::is_contained(type.getShape(), 0);
      int64_t elements = 1;
      unsigned dynamic = 0;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        int64_t bound = type.getDimSize(d);
        if (ShapedType::isDynamic(bound)) {
          Value size = alloc.getDynamicSizes()[dynamic++];
          int64_t ub = empty ? 0 : getBounds(size).hi;
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
      int64_t bytes = shared ? getSharedBufferBytes(elements, elementBytes)
                             : std::max<int64_t>(elements * elementBytes, 1);
      if (shared) {
        sharedTotal += bytes;
        if (sharedTotal > sharedBytes) {
          alloc.emitOpError("shared-memory buffers need ")
              << sharedTotal << " bytes per block, more than the "
              << static_cast<int64_t>(sharedBytes)
              << " a block may use on the targets";
          return signalPassFailure();
        }
      } else {
        totalBytes += bytes;
        if (totalBytes > maxBytes) {
          alloc.emitOpError("tile temporaries need ")
              << totalBytes << " bytes per thread, more than the limit of "
              << static_cast<int64_t>(maxBytes) << "; the tile is too large";
          return signalPassFailure();
        }
      }

      // Shared buffers are allocations in workgroup memory at the entry,
      // which grid mapping turns into the kernel's workgroup attributions
      // (GPU) or the block task's stack (CPU); private ones are allocas.
      Location loc = alloc.getLoc();
      rewriter.setInsertionPointToStart(&entry);
      auto allocate = [&](MemRefType bufferType,
                          IntegerAttr alignment) -> Value {
        if (shared)
          return memref::AllocOp::create(rewriter, loc, bufferType,
                                         rewriter.getI64IntegerAttr(16));
        return memref::AllocaOp::create(rewriter, loc, bufferType, alignment);
      };
      Value replacement;
      if (type.hasStaticShape()) {
        replacement = allocate(type, alloc.getAlignmentAttr());
        rewriter.setInsertionPoint(alloc);
      } else {
        auto bufferType =
            MemRefType::get({bytes}, rewriter.getI8Type(),
                            MemRefLayoutAttrInterface(), type.getMemorySpace());
        Value buffer = allocate(bufferType, rewriter.getI64IntegerAttr(16));
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
