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
// A then starts living after L.
//
// The buffers are then laid out by liveness (`layOut`), from the kernel's
// body down: in a block, buffers whose accesses fall in ops of the block
// that do not meet share bytes; buffers all of whose accesses lie in the
// then-block of one `scf.if` (a product under the block's guard) are laid
// out there first and take part as one, so products computed in turn take
// each other's bytes too. Where a buffer takes bytes another used before
// it, a barrier (after `cp.async.wait_group 0` where the earlier one was
// copied into asynchronously) goes before the later one's first op, so no
// thread writes it while another still reads, or copies into, the earlier.
// A block whose threads may diverge takes no barrier: the kernel is then
// left as it is.
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
#include "llvm/ADT/MapVector.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include <numeric>

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

/// The ops that access `root` through views of it (subviews, casts,
/// reshapes, the f16 aliases of bf16 tiles); false where a use is
/// something else that yields or takes the buffer (an alias this does not
/// follow, a pointer, a region's argument: its accesses are then not
/// known).
static bool collectAccesses(Value root, SmallVectorImpl<Operation *> &out) {
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::SubViewOp, memref::CastOp, memref::ExpandShapeOp,
              memref::CollapseShapeOp, memref::ReinterpretCastOp,
              memref::TransposeOp, memref::MemorySpaceCastOp,
              memref::AssumeAlignmentOp, UnrealizedConversionCastOp>(user)) {
        llvm::append_range(worklist, user->getResults());
        continue;
      }
      if (isa<memref::DimOp>(user))
        continue; // Sizes only.
      if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        worklist.push_back(metadata.getBaseBuffer());
        continue;
      }
      if (isa<memref::ViewOp, memref::ExtractAlignedPointerAsIndexOp,
              LoopLikeOpInterface, RegionBranchOpInterface,
              RegionBranchTerminatorOpInterface, CallOpInterface>(user) ||
          llvm::any_of(user->getResultTypes(),
                       [](Type type) { return isa<BaseMemRefType>(type); }))
        return false;
      out.push_back(user);
    }
  }
  return true;
}

/// Whether any of `accesses` copies into the buffer asynchronously
/// (`cp.async`, which a barrier alone does not wait for).
static bool copiesAsynchronously(ArrayRef<Operation *> accesses) {
  return llvm::any_of(accesses, [](Operation *op) {
    return isa<nvgpu::DeviceAsyncCopyOp>(op);
  });
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

/// Whether `value` may differ between the threads of a block: only
/// constants, the kernel's arguments, the block's id and the grid's and
/// block's sizes are known to be the same in every thread, and values
/// computed from those alone by ops without memory effects or regions.
static bool isPerThread(Value value, int depth = 0) {
  if (depth > 32)
    return true;
  Operation *def = value.getDefiningOp();
  if (!def)
    return !isa<gpu::GPUFuncOp>(
        cast<BlockArgument>(value).getOwner()->getParentOp());
  if (matchPattern(value, m_Constant()) ||
      isa<gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp>(def))
    return false;
  if (def->getNumOperands() == 0 || !isMemoryEffectFree(def) ||
      def->getNumRegions() != 0)
    return true;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return isPerThread(operand, depth + 1);
  });
}

/// What makes a buffer an accumulator of a k-step loop: its reads before
/// the loop, its fills, and the value they fill it with.
struct Accumulator {
  scf::ForOp loop;
  SmallVector<Operation *> reads, fills;
  Value fillValue;
};

/// Whether `buffer` is an accumulator of a k-step loop (see the file
/// comment); fills in `acc`.
static bool matchAccumulator(const SharedBuffer &buffer, Accumulator &acc,
                             DominanceInfo &dominance) {
  // The loop: one whose initial iteration arguments a read gives (in the
  // read's block, after it).
  scf::ForOp loop;
  for (Operation *op : buffer.accesses) {
    if (!isReplaceableRead(op))
      continue;
    for (Operation &candidate : *op->getBlock())
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
  Block *block = loop->getBlock();
  Accumulator match;
  match.loop = loop;
  bool feedsLoop = false;
  for (Operation *op : buffer.accesses) {
    Operation *ancestor = block->findAncestorOpInBlock(*op);
    if (!ancestor || ancestor == loop.getOperation())
      return false;
    if (loop->isBeforeInBlock(ancestor))
      continue; // After the loop: the write-back and the epilogue.
    if (isReplaceableRead(op)) {
      match.reads.push_back(op);
      feedsLoop |= reachesInit(op->getResult(0), loop);
      continue;
    }
    auto fill = dyn_cast<linalg::FillOp>(op);
    if (!fill || !fill.hasPureBufferSemantics())
      return false;
    Value value = fill.getInputs()[0];
    if (match.fillValue && value != match.fillValue)
      return false;
    match.fillValue = value;
    match.fills.push_back(op);
  }
  if (!feedsLoop || !match.fillValue ||
      match.fillValue.getType() !=
          cast<MemRefType>(buffer.view->getResult(0).getType())
              .getElementType())
    return false;
  // The fill value replaces every read: it must be there before them, and
  // the same in every thread (a thread reads what others filled).
  for (Operation *read : match.reads)
    if (!dominance.properlyDominates(match.fillValue, read))
      return false;
  if (isPerThread(match.fillValue))
    return false;
  // Run once: inside another loop, a later iteration's reads would see the
  // last one's write-back, not the fill.
  for (Operation *parent = loop->getParentOp();
       parent && !isa<gpu::GPUFuncOp>(parent); parent = parent->getParentOp())
    if (isa<LoopLikeOpInterface>(parent))
      return false;
  acc = std::move(match);
  return true;
}

/// Whether every thread of a block runs `block`'s ops together, so that a
/// barrier may go there: it is the kernel's body or nested only in
/// conditions and loops whose operands are the same for every thread.
static bool isBlockUniform(Block *block) {
  for (Operation *parent = block->getParentOp();
       parent && !isa<gpu::GPUFuncOp>(parent); parent = parent->getParentOp()) {
    if (!isa<scf::IfOp, scf::ForOp>(parent))
      return false;
    if (llvm::any_of(parent->getOperands(),
                     [](Value v) { return isPerThread(v); }))
      return false;
  }
  return true;
}

/// A layout of some buffers, relative to a base: their offsets, the bytes
/// they take together, and the barriers (with a `cp.async.wait_group 0`
/// where asked) to insert before ops so that no buffer is written before
/// every thread is done with the one whose bytes it takes.
struct Layout {
  SmallVector<std::pair<size_t, int64_t>> offsets;
  int64_t bytes = 0;
  SmallVector<std::pair<Operation *, bool>> barriers;
  bool copies = false;
};

/// Lays out `which` of `buffers` (their accesses, `accesses`, as they
/// will be) within `block`, which holds them all: buffers whose accesses
/// fall in different ops of the block, with no op between them touching
/// both, share bytes. Buffers all of whose accesses lie in the then-block
/// of one `scf.if` of the block are laid out there first and take part as
/// one. Fails where an access is not in `block`, or a barrier would be
/// needed where threads may diverge.
static FailureOr<Layout> layOut(Block *block, ArrayRef<size_t> which,
                                ArrayRef<SmallVector<Operation *>> accesses,
                                ArrayRef<SharedBuffer> buffers) {
  DenseMap<Operation *, int64_t> position;
  SmallVector<Operation *> ops;
  for (Operation &op : *block) {
    position[&op] = static_cast<int64_t>(ops.size());
    ops.push_back(&op);
  }
  // One item per buffer, or per group laid out inside an scf.if.
  struct Item {
    Layout layout;
    int64_t first = INT64_MAX, last = -1;
  };
  SmallVector<Item> items;
  llvm::MapVector<Operation *, SmallVector<size_t>> byIf;
  for (size_t b : which) {
    Item item;
    for (Operation *op : accesses[b]) {
      Operation *ancestor = block->findAncestorOpInBlock(*op);
      if (!ancestor)
        return failure();
      int64_t at = position.lookup(ancestor);
      item.first = std::min(item.first, at);
      item.last = std::max(item.last, at);
    }
    if (item.first == item.last) {
      if (auto ifOp = dyn_cast<scf::IfOp>(ops[item.first]);
          ifOp && llvm::all_of(accesses[b], [&](Operation *op) {
            return ifOp.getThenRegion().isAncestor(op->getParentRegion());
          })) {
        byIf[ifOp].push_back(b);
        continue;
      }
    }
    item.layout.offsets.push_back({b, 0});
    item.layout.bytes = buffers[b].bytes;
    item.layout.copies = copiesAsynchronously(accesses[b]);
    items.push_back(std::move(item));
  }
  for (auto &[op, group] : byIf) {
    auto ifOp = cast<scf::IfOp>(op);
    Item item;
    item.first = item.last = position.lookup(op);
    FailureOr<Layout> inner =
        group.size() > 1 ? layOut(ifOp.thenBlock(), group, accesses, buffers)
                         : FailureOr<Layout>(failure());
    if (succeeded(inner)) {
      item.layout = std::move(*inner);
    } else {
      // Side by side.
      for (size_t b : group) {
        item.layout.offsets.push_back({b, item.layout.bytes});
        item.layout.bytes += buffers[b].bytes;
        item.layout.copies |= copiesAsynchronously(accesses[b]);
      }
    }
    items.push_back(std::move(item));
  }

  // Largest first, each at the lowest offset clear of the items placed
  // whose ops meet its own.
  SmallVector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::sort(order, [&](size_t a, size_t b) {
    if (items[a].layout.bytes != items[b].layout.bytes)
      return items[a].layout.bytes > items[b].layout.bytes;
    return a < b;
  });
  SmallVector<int64_t> at(items.size(), -1);
  auto meet = [&](size_t a, size_t b) {
    return !(items[a].last < items[b].first || items[b].last < items[a].first);
  };
  Layout result;
  for (size_t i : order) {
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (size_t j = 0; j < items.size(); ++j)
      if (at[j] >= 0 && meet(i, j))
        taken.push_back({at[j], items[j].layout.bytes});
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [start, bytes] : taken) {
      if (offset + items[i].layout.bytes <= start)
        break;
      offset = std::max(offset, start + bytes);
    }
    at[i] = offset;
    result.bytes = std::max(result.bytes, offset + items[i].layout.bytes);
  }

  // Where two items share bytes, the later's first op waits for every
  // thread to be done with the earlier (a barrier between them, unless
  // one is already there).
  DenseMap<Operation *, bool> barriers;
  for (size_t i = 0; i < items.size(); ++i)
    for (size_t j = 0; j < items.size(); ++j) {
      const Item &early = items[i], &late = items[j];
      // A buffer nothing touches needs no barrier either way.
      if (i == j || early.last < 0 || late.last < 0 ||
          early.last >= late.first ||
          at[i] + early.layout.bytes <= at[j] ||
          at[j] + late.layout.bytes <= at[i])
        continue;
      // A barrier there already will do, unless copies into the earlier
      // may still be in flight.
      bool present = false;
      for (int64_t k = early.last + 1; k < late.first && !present; ++k)
        present = isa<gpu::BarrierOp>(ops[k]);
      if (present && !early.layout.copies)
        continue;
      barriers[ops[late.first]] |= early.layout.copies;
    }
  if (!barriers.empty() && !isBlockUniform(block))
    return failure();
  for (auto [i, item] : llvm::enumerate(items)) {
    for (auto [b, offset] : item.layout.offsets)
      result.offsets.push_back({b, at[i] + offset});
    llvm::append_range(result.barriers, item.layout.barriers);
    result.copies |= item.layout.copies;
  }
  for (auto [op, wait] : barriers)
    result.barriers.push_back({op, wait});
  return result;
}

struct OverlapSharedAccumulators final
    : ::dyncc::impl::OverlapSharedAccumulatorsPassBase<
          OverlapSharedAccumulators> {
  using Base::Base;

  void runOnOperation() override {
    auto func = dyn_cast<gpu::GPUFuncOp>(getOperation());
    if (!func || !func.isKernel())
      return;
    overlap(func);
    auto bytes = func->getAttrOfType<IntegerAttr>(
        dyncc::getDynamicSharedBytesAttrName());
    auto overlapped =
        func->getAttrOfType<IntegerAttr>(kOverlappedSharedBytesAttrName);
    if (sharedBytes > 0 && bytes && bytes.getInt() > sharedBytes) {
      func.emitOpError("needs ")
          << bytes.getInt() << " bytes of shared memory per block, more than "
          << static_cast<int64_t>(sharedBytes)
          << " a block may use on the targets"
          << (overlapped && overlapped.getInt() > 0
                  ? ": its accumulator could not share the operand tiles' "
                    "bytes"
                  : "");
      return signalPassFailure();
    }
  }

  void overlap(gpu::GPUFuncOp func) {
    SmallVector<gpu::DynamicSharedMemoryOp> memories;
    func.walk([&](gpu::DynamicSharedMemoryOp op) { memories.push_back(op); });
    if (memories.size() != 1)
      return;
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
        return;
      SharedBuffer buffer;
      buffer.view = view;
      buffer.offset = *shift;
      buffer.bytes = getSharedBufferBytes(
          type.getNumElements(), getElementBytes(type.getElementType()));
      if (!collectAccesses(view.getResult(), buffer.accesses))
        return;
      buffers.push_back(std::move(buffer));
    }
    llvm::sort(buffers, [](const SharedBuffer &a, const SharedBuffer &b) {
      return a.offset < b.offset;
    });
    // Views that already share bytes (one buffer seen as two types) are
    // left where they are.
    for (size_t i = 1; i < buffers.size(); ++i)
      if (buffers[i - 1].offset + buffers[i - 1].bytes > buffers[i].offset)
        return;
    // The write-back after an accumulator's loop covers the whole tile
    // only where dyncc-tile-and-fuse made the product (its warps or threads
    // cover the block's tile), which it records on the kernel; elsewhere a
    // read after the loop could need the fill, and the fill stays.
    bool staticProducts = func->hasAttr(kOverlappedSharedBytesAttrName);

    // The accumulators, and every buffer's accesses as they will be once
    // the accumulators' reads before their loops are the fill value.
    DominanceInfo dominance(func);
    SmallVector<Accumulator> accumulators;
    SmallVector<SmallVector<Operation *>> accesses;
    int64_t before = 0;
    for (const SharedBuffer &buffer : buffers) {
      before = std::max(before, buffer.offset + buffer.bytes);
      Accumulator acc;
      accesses.emplace_back();
      if (staticProducts && matchAccumulator(buffer, acc, dominance)) {
        for (Operation *op : buffer.accesses)
          if (!llvm::is_contained(acc.reads, op) &&
              !llvm::is_contained(acc.fills, op))
            accesses.back().push_back(op);
        accumulators.push_back(std::move(acc));
      } else {
        accesses.back() = buffer.accesses;
      }
    }
    SmallVector<size_t> all(buffers.size());
    std::iota(all.begin(), all.end(), 0);
    FailureOr<Layout> layout =
        layOut(&func.getBody().front(), all, accesses, buffers);
    if (failed(layout) || layout->bytes >= before)
      return;

    IRRewriter rewriter(func.getContext());
    for (Accumulator &acc : accumulators) {
      for (Operation *read : acc.reads) {
        rewriter.setInsertionPoint(read);
        Type type = read->getResult(0).getType();
        Value value = acc.fillValue;
        if (isa<VectorType>(type))
          value = vector::BroadcastOp::create(rewriter, read->getLoc(), type,
                                              value);
        rewriter.replaceOp(read, value);
      }
      for (Operation *fill : acc.fills)
        rewriter.eraseOp(fill);
    }
    for (auto [b, offset] : layout->offsets) {
      memref::ViewOp view = buffers[b].view;
      rewriter.setInsertionPoint(view);
      Value at =
          arith::ConstantIndexOp::create(rewriter, view.getLoc(), offset);
      rewriter.modifyOpInPlace(view,
                               [&] { view.getByteShiftMutable().assign(at); });
    }
    for (auto [op, wait] : layout->barriers) {
      rewriter.setInsertionPoint(op);
      if (wait) {
        // Every copy this thread issued, committed or not.
        NVVM::CpAsyncCommitGroupOp::create(rewriter, op->getLoc());
        NVVM::CpAsyncWaitGroupOp::create(rewriter, op->getLoc(), 0);
      }
      gpu::BarrierOp::create(rewriter, op->getLoc());
    }
    func->setAttr(dyncc::getDynamicSharedBytesAttrName(),
                  rewriter.getI64IntegerAttr(layout->bytes));
  }
};

} // namespace
