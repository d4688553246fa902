//===- OverlapSharedAccumulators.cpp - Accumulators over operand tiles ----===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A GEMM block's static product accumulates in a shared tile of the whole
// block (dyncc-tile-and-fuse's padForStaticProducts), which
// dyncc-vectorize-mma keeps in registers across the k-steps: each warp or
// thread reads its part once before the k-step loop and writes it back once
// after, and the epilogue reads the tile from shared memory. During the
// loop the tile holds nothing anyone reads, and after it the operand tiles
// are dead, so the two can take the same bytes, as CUTLASS's epilogue
// reuses its mainloop's shared memory. A 128x256 f32 accumulator is 128 KB:
// beside the operand tiles it left a 128x256 f16 block one stage (no copy
// overlapped with the products) and one block per SM.
//
// On a kernel whose shared buffers are views of one dynamic shared memory,
// a buffer A is an accumulator of the loop L (an `scf.for`) when
//   - nothing inside L touches it,
//   - before L it is only filled with one value (`linalg.fill`) and read
//     by `vector.load`/`memref.load` (the hoisted accumulator reads),
//   - and some read before L is an initial value of one of L's iteration
//     arguments.
// Its reads before L become that value: they read elements the fill wrote,
// or elements nothing wrote, which held no value to keep. The fills go.
// A now starts living after L. Every other buffer that nothing touches
// after L (the operand tiles) is placed in one region with A over it; the
// buffers still live after L keep their own bytes. After L comes
// `cp.async.wait_group 0` (where the kernel copies asynchronously) and a
// barrier, so no thread writes the accumulator while another still reads,
// or copies into, an operand tile.
//
// dyncc-tile-and-fuse counted on this where it sized the product's tiles
// (`dyncc.overlapped_shared_bytes` on the kernel), and grid mapping made
// such a kernel's shared buffers views of dynamic shared memory. A kernel
// left above `shared-bytes` is an error.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace dyncc {
#define GEN_PASS_DEF_OVERLAPSHAREDACCUMULATORSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using dyncc::getElementBytes;
using dyncc::getSharedBufferBytes;
using dyncc::kOverlappedSharedBytesAttrName;

namespace {

/// One shared buffer: a view of the kernel's dynamic shared memory, its
/// bytes, and the ops that access it (through views of it).
struct SharedBuffer {
  memref::ViewOp view;
  int64_t offset = 0;
  int64_t bytes = 0;
  SmallVector<Operation *> accesses;
};

/// The ops that access `root` through subviews, casts and reshapes; false
/// where a use is something else that takes the buffer (its accesses are
/// then not known).
static bool collectAccesses(Value root, SmallVectorImpl<Operation *> &out) {
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::SubViewOp, memref::CastOp, memref::ExpandShapeOp,
              memref::CollapseShapeOp, memref::ReinterpretCastOp,
              memref::TransposeOp>(user)) {
        worklist.push_back(user->getResult(0));
        continue;
      }
      if (isa<memref::DimOp, memref::ExtractStridedMetadataOp>(user))
        continue; // Sizes only.
      if (isa<memref::ViewOp, LoopLikeOpInterface, RegionBranchOpInterface,
              RegionBranchTerminatorOpInterface, CallOpInterface>(user))
        return false;
      out.push_back(user);
    }
  }
  return true;
}

/// Whether `op` reads the buffer whole into a value (a hoisted
/// accumulator read) that may be replaced by the value the buffer was
/// filled with.
static bool isReplaceableRead(Operation *op) {
  return isa<vector::LoadOp, memref::LoadOp>(op);
}

/// Whether `value` reaches an initial iteration argument of `loop`
/// through pure ops (the fragments a hoisted read assembles).
static bool reachesInit(Value value, scf::ForOp loop) {
  SmallVector<Value> worklist{value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second || seen.size() > 256)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (user == loop.getOperation() &&
          llvm::is_contained(loop.getInitArgsMutable(), use))
        return true;
      if (isPure(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// The ancestor of `op` in `block`, or null.
static Operation *ancestorIn(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

struct Overlap {
  scf::ForOp loop;
  /// Per accumulator (an index into the buffers): its reads before the
  /// loop and its fills.
  SmallVector<size_t> accumulators;
  SmallVector<Operation *> reads, fills;
  Value fillValue;
};

/// Whether `buffer` is an accumulator of a k-step loop (see the file
/// comment), filling in `overlap` (its loop must be `overlap.loop` where
/// that is set, and its fill value `overlap.fillValue`).
static bool matchAccumulator(const SharedBuffer &buffer, Overlap &overlap,
                             DominanceInfo &dominance) {
  // The loop: one whose initial iteration arguments a read gives (in the
  // read's block, after it).
  scf::ForOp loop = overlap.loop;
  if (!loop) {
    for (Operation *op : buffer.accesses) {
      if (!isReplaceableRead(op))
        continue;
      Block *block = op->getBlock();
      for (Operation &candidate : *block)
        if (auto forOp = dyn_cast<scf::ForOp>(candidate);
            forOp && op->isBeforeInBlock(forOp) &&
            reachesInit(op->getResult(0), forOp)) {
          loop = forOp;
          break;
        }
      if (loop)
        break;
    }
    if (!loop)
      return false;
  }
  Block *block = loop->getBlock();
  SmallVector<Operation *> reads, fills;
  Value fillValue = overlap.fillValue;
  bool feedsLoop = false;
  for (Operation *op : buffer.accesses) {
    Operation *ancestor = ancestorIn(block, op);
    if (!ancestor || ancestor == loop.getOperation())
      return false;
    if (loop->isBeforeInBlock(ancestor))
      continue; // After the loop: the write-back and the epilogue.
    if (isReplaceableRead(op)) {
      reads.push_back(op);
      feedsLoop |= reachesInit(op->getResult(0), loop);
      continue;
    }
    auto fill = dyn_cast<linalg::FillOp>(op);
    if (!fill || !fill.hasPureBufferSemantics())
      return false;
    Value value = fill.getInputs()[0];
    if (fillValue && value != fillValue)
      return false;
    fillValue = value;
    fills.push_back(op);
  }
  if (!feedsLoop)
    return false;
  // The fill value replaces every read: it must be there before them.
  for (Operation *read : reads)
    if (!fillValue || !dominance.properlyDominates(fillValue, read))
      return false;
  overlap.loop = loop;
  overlap.fillValue = fillValue;
  llvm::append_range(overlap.reads, reads);
  llvm::append_range(overlap.fills, fills);
  return true;
}

/// Whether nothing touches `buffer` after `loop` (every access is before
/// it or inside it, in its block).
static bool isDeadAfter(const SharedBuffer &buffer, scf::ForOp loop) {
  Block *block = loop->getBlock();
  return llvm::all_of(buffer.accesses, [&](Operation *op) {
    Operation *ancestor = ancestorIn(block, op);
    return ancestor && !loop->isBeforeInBlock(ancestor);
  });
}

struct OverlapSharedAccumulators final
    : ::dyncc::impl::OverlapSharedAccumulatorsPassBase<
          OverlapSharedAccumulators> {
  using Base::Base;

  void runOnOperation() override {
    auto func = dyn_cast<gpu::GPUFuncOp>(getOperation());
    if (!func || !func.isKernel())
      return;
    if (failed(overlap(func)))
      return signalPassFailure();
    auto bytes = func->getAttrOfType<IntegerAttr>(
        dyncc::getDynamicSharedBytesAttrName());
    if (sharedBytes > 0 && bytes && bytes.getInt() > sharedBytes) {
      func.emitOpError("needs ")
          << bytes.getInt() << " bytes of shared memory per block, more than "
          << static_cast<int64_t>(sharedBytes)
          << " a block may use on the targets"
          << (func->hasAttr(kOverlappedSharedBytesAttrName)
                  ? ": its accumulator could not share the operand tiles' "
                    "bytes"
                  : "");
      return signalPassFailure();
    }
  }

  LogicalResult overlap(gpu::GPUFuncOp func) {
    SmallVector<gpu::DynamicSharedMemoryOp> memories;
    func.walk([&](gpu::DynamicSharedMemoryOp op) { memories.push_back(op); });
    if (memories.size() != 1)
      return success();
    // The buffers: constant, 16-byte aligned views at the kernel's entry.
    SmallVector<SharedBuffer> buffers;
    for (Operation *user : memories.front()->getUsers()) {
      auto view = dyn_cast<memref::ViewOp>(user);
      std::optional<int64_t> shift =
          view ? getConstantIntValue(view.getByteShift()) : std::nullopt;
      MemRefType type = view ? view.getType() : MemRefType();
      if (!view || !shift || *shift % 16 != 0 || !type.hasStaticShape() ||
          !type.getLayout().isIdentity() ||
          getElementBytes(type.getElementType()) == 0)
        return success();
      SharedBuffer buffer;
      buffer.view = view;
      buffer.offset = *shift;
      buffer.bytes = getSharedBufferBytes(
          type.getNumElements(), getElementBytes(type.getElementType()));
      if (!collectAccesses(view.getResult(), buffer.accesses))
        return success();
      buffers.push_back(std::move(buffer));
    }
    llvm::sort(buffers, [](const SharedBuffer &a, const SharedBuffer &b) {
      return a.offset < b.offset;
    });

    // The accumulators, all of one loop.
    DominanceInfo dominance(func);
    Overlap overlap;
    for (size_t i = 0; i < buffers.size(); ++i) {
      Overlap attempt = overlap;
      if (matchAccumulator(buffers[i], attempt, dominance)) {
        overlap = std::move(attempt);
        overlap.accumulators.push_back(i);
      }
    }
    if (overlap.accumulators.empty())
      return success();

    // The layout: the buffers live after the loop first, then one region
    // holding the accumulators and, over them, the buffers dead after it.
    SmallVector<int64_t> offsets(buffers.size(), 0);
    int64_t kept = 0, accumulated = 0, dead = 0, before = 0;
    SmallVector<size_t> deadBuffers;
    for (auto [i, buffer] : llvm::enumerate(buffers)) {
      before += buffer.bytes;
      if (llvm::is_contained(overlap.accumulators, i))
        continue;
      if (isDeadAfter(buffer, overlap.loop)) {
        deadBuffers.push_back(i);
        continue;
      }
      offsets[i] = kept;
      kept += buffer.bytes;
    }
    for (size_t i : overlap.accumulators) {
      offsets[i] = kept + accumulated;
      accumulated += buffers[i].bytes;
    }
    for (size_t i : deadBuffers) {
      offsets[i] = kept + dead;
      dead += buffers[i].bytes;
    }
    int64_t total = kept + std::max(accumulated, dead);
    if (total >= before)
      return success();

    // The accumulators start living after the loop.
    IRRewriter rewriter(func.getContext());
    for (Operation *read : overlap.reads) {
      rewriter.setInsertionPoint(read);
      Type type = read->getResult(0).getType();
      Value value = overlap.fillValue;
      if (isa<VectorType>(type))
        value =
            vector::BroadcastOp::create(rewriter, read->getLoc(), type, value);
      rewriter.replaceOp(read, value);
    }
    for (Operation *fill : overlap.fills)
      rewriter.eraseOp(fill);
    for (auto [i, buffer] : llvm::enumerate(buffers)) {
      memref::ViewOp view = buffer.view;
      rewriter.setInsertionPoint(view);
      Value at =
          arith::ConstantIndexOp::create(rewriter, view.getLoc(), offsets[i]);
      rewriter.modifyOpInPlace(view,
                               [&] { view.getByteShiftMutable().assign(at); });
    }
    // No thread writes an accumulator before every thread is done with
    // (and every copy is done into) the operand tiles.
    rewriter.setInsertionPointAfter(overlap.loop);
    bool copies = false;
    func.walk([&](nvgpu::DeviceAsyncCopyOp) { copies = true; });
    if (copies)
      NVVM::CpAsyncWaitGroupOp::create(rewriter, overlap.loop.getLoc(), 0);
    gpu::BarrierOp::create(rewriter, overlap.loop.getLoc());
    func->setAttr(dyncc::getDynamicSharedBytesAttrName(),
                  rewriter.getI64IntegerAttr(total));
    return success();
  }
};

} // namespace
