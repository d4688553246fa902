//===- PrivateAccumulators.cpp - Threads' output tiles in registers -------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A conv's k-steps accumulate into the output: after bufferization each
// thread's product reads and writes its tile of the output argument, in
// global memory, at every step. In the ResNet-50 stem's 7x7 conv that is a
// global load and store around every multiply-add, 147 steps over: the
// kernel is bound by its load/store unit, not its FMA pipe. (A GEMM's
// products accumulate in a static shared tile that dyncc-vectorize-mma
// keeps in registers; a conv's window is no contraction of plain loop
// dimensions, so it takes no part of that.)
//
// After grid mapping a thread's tile of an output is a static subview
// whose offsets are the thread's. Where every access to the output
// argument goes through that one subview, nothing else in the kernel can
// see it between its first and last access, so the tile is computed in a
// private buffer instead: allocated at the kernel's entry (where LLVM's
// SROA promotes it to registers once the unrolled products index it with
// constants), copied in before the first access unless that access writes
// all of it without reading it (the bias or zero it starts from), and
// copied out once, after the last one (the epilogue). The first access must
// be an op of the tile's own block that writes all of the tile (not one
// under a guard or a loop), so the copies touch only elements the kernel
// did. Only tiles with an access inside a loop nested below them are worth
// it.
//
// The run-time's plan never gives a kernel's output the memory of one of
// its inputs (buffers that meet at a step do not share the arena), so the
// output argument aliases no other argument.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Builders.h"

namespace dyncc {
#define GEN_PASS_DEF_PRIVATEACCUMULATORSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;

namespace {

/// Whether `use` reads or writes no memory through the view (its sizes).
static bool isMetadataUse(Operation *user) {
  return isa<memref::DimOp, memref::ExtractStridedMetadataOp>(user);
}

/// Whether every user of `view`, transitively through views, is `only` or
/// reads nothing of its memory: the memory behind `view` is reached through
/// `only` alone.
static bool isReachedOnlyThrough(Value view, Operation *only) {
  for (Operation *user : view.getUsers()) {
    if (user == only || isMetadataUse(user))
      continue;
    return false;
  }
  return true;
}

/// Whether `op` writes every element of `tile` (an init along a
/// permutation of its loops).
static bool writesWhole(linalg::LinalgOp op, Value tile) {
  for (OpOperand &init : op.getDpsInitsMutable())
    if (init.get() == tile && op.getMatchingIndexingMap(&init).isPermutation())
      return true;
  return false;
}

/// Whether `op` writes every element of `tile` and reads none of it before
/// (the fill or bias broadcast an accumulator starts from).
static bool overwritesWhole(linalg::LinalgOp op, Value tile) {
  if (op.getNumDpsInits() != 1 || op.getDpsInits()[0] != tile)
    return false;
  if (llvm::is_contained(op.getDpsInputs(), tile))
    return false;
  if (op.getNumReductionLoops() != 0 || op.getNumLoops() == 0)
    return false;
  return writesWhole(op, tile) &&
         !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

struct PrivateAccumulatorsPass
    : public dyncc::impl::PrivateAccumulatorsPassBase<PrivateAccumulatorsPass> {
  using Base::Base;

  /// Computes `tile`'s accesses in a private buffer if it qualifies (see the
  /// file comment); returns whether it did.
  bool privatize(gpu::GPUFuncOp func, memref::SubViewOp tile) {
    auto type = tile.getType();
    if (!type.hasStaticShape() || dyncc::isWorkgroupMemory(type) ||
        !type.getElementType().isIntOrFloat() || type.getNumElements() == 0)
      return false;
    int64_t bytes = type.getNumElements() *
                    llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    if (bytes > maxBytes)
      return false;
    // The chain of views up to a kernel argument (subviews, and the
    // reshapes a unit batch dimension leaves: a reinterpret_cast, a
    // collapse or expand), each reached only through the next.
    Operation *next = tile;
    Value source = tile.getSource();
    while (true) {
      if (!isReachedOnlyThrough(source, next))
        return false;
      if (auto arg = dyn_cast<BlockArgument>(source)) {
        if (arg.getOwner() != &func.getBody().front())
          return false;
        break;
      }
      Operation *parent = source.getDefiningOp();
      if (!isa_and_nonnull<memref::SubViewOp, memref::ReinterpretCastOp,
                           memref::CollapseShapeOp, memref::ExpandShapeOp,
                           memref::CastOp>(parent))
        return false;
      next = parent;
      source = parent->getOperand(0);
    }
    // Its accesses: linalg ops taking the whole tile, each under an op of
    // the tile's block, one of them inside a loop below it.
    Block *block = tile->getBlock();
    SmallVector<linalg::LinalgOp> accesses;
    bool inLoop = false;
    for (Operation *user : tile->getUsers()) {
      if (isMetadataUse(user))
        continue;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (!linalgOp || !linalgOp.hasPureBufferSemantics())
        return false;
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return false;
      for (Operation *op = user->getParentOp();
           op && op != ancestor->getParentOp(); op = op->getParentOp())
        inLoop |= isa<LoopLikeOpInterface>(op);
      // An op taking the tile twice (as an input and its init) is one
      // access.
      if (!llvm::is_contained(accesses, linalgOp))
        accesses.push_back(linalgOp);
    }
    if (!inLoop || accesses.size() < 2)
      return false;
    // The ops of the tile's block the accesses are under, first and last.
    Operation *first = block->findAncestorOpInBlock(*accesses.front());
    Operation *last = first;
    for (linalg::LinalgOp access : accesses) {
      Operation *ancestor = block->findAncestorOpInBlock(*access);
      if (ancestor->isBeforeInBlock(first))
        first = ancestor;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }

    // The first is an access itself that writes all of the tile: the
    // thread then reads or writes every element of its tile whatever
    // happens after, so the copy in (if any) and the copy out touch no
    // element the kernel did not. (Accesses all under a guard, with the
    // tile's view above it, would otherwise be copied out unguarded, past
    // the output's end for a thread the guard left out.)
    auto firstAccess = dyn_cast<linalg::LinalgOp>(first);
    if (!firstAccess || !llvm::is_contained(accesses, firstAccess) ||
        !writesWhole(firstAccess, tile.getResult()))
      return false;

    OpBuilder builder(func.getContext());
    Location loc = tile.getLoc();
    builder.setInsertionPointToStart(&func.getBody().front());
    auto privateType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = memref::AllocaOp::create(builder, loc, privateType,
                                            builder.getI64IntegerAttr(16));
    // In: unless the first access writes all of the tile without reading
    // it, the tile's values come in first.
    SmallVector<linalg::LinalgOp> ops(accesses);
    if (!overwritesWhole(firstAccess, tile.getResult())) {
      builder.setInsertionPoint(first);
      ops.push_back(
          linalg::CopyOp::create(builder, loc, tile.getResult(), buffer));
    }
    for (linalg::LinalgOp access : accesses)
      for (OpOperand &operand : access->getOpOperands())
        if (operand.get() == tile.getResult())
          operand.set(buffer);
    // Out: once, after the last access.
    builder.setInsertionPointAfter(last);
    ops.push_back(
        linalg::CopyOp::create(builder, loc, buffer, tile.getResult()));

    // Every op on the buffer becomes loops, a product's reduction loops
    // outermost, and the loops over the buffer's elements inside them are
    // unrolled whole: every access to the buffer has constant indices, so
    // SROA takes it. Left to LLVM, a 1x1 conv's step of 32 channels into 32
    // outputs (1024 multiply-adds) or a copy of 128 outputs was more than
    // it unrolls whole, and the buffer stayed in local memory. Each output
    // still sums its reduction in the same order.
    IRRewriter rewriter(func.getContext());
    for (linalg::LinalgOp op : ops) {
      int64_t reductions = op.getNumReductionLoops();
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
          generic && reductions != 0) {
        SmallVector<unsigned> order;
        for (auto [i, type] : llvm::enumerate(generic.getIteratorTypesArray()))
          if (type == utils::IteratorType::reduction)
            order.push_back(i);
        for (auto [i, type] : llvm::enumerate(generic.getIteratorTypesArray()))
          if (type == utils::IteratorType::parallel)
            order.push_back(i);
        rewriter.setInsertionPoint(generic);
        if (failed(linalg::interchangeGenericOp(rewriter, generic, order)))
          continue;
      } else if (reductions != 0) {
        continue;
      }
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops))
        continue;
      rewriter.eraseOp(op);
      for (Operation *loop :
           llvm::reverse(ArrayRef<Operation *>(*loops).drop_front(reductions)))
        if (auto forOp = dyn_cast<scf::ForOp>(loop))
          (void)loopUnrollFull(forOp);
    }
    return true;
  }

  void runOnOperation() override {
    auto func = dyn_cast<gpu::GPUFuncOp>(getOperation());
    if (!func || !func.isKernel() || func.getBody().empty())
      return;
    SmallVector<memref::SubViewOp> tiles;
    func.walk([&](memref::SubViewOp tile) { tiles.push_back(tile); });
    for (memref::SubViewOp tile : tiles)
      privatize(func, tile);
  }
};

} // namespace
