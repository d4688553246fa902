//===- PipelineKSteps.cpp - Multi-stage k-step copies (cp.async) ----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// dyncc-tile-and-fuse copies the operands of a tensor-core k-step that come
// straight from global memory into shared memory in chunks: an `scf.forall`
// over all the block's threads (`#gpu.thread<linear_dim_0>`) of one
// `vector.transfer_read` of whole vectors, which reads zeros past the
// problem's extents, and one `vector.transfer_write` into the shared tile.
// On a bufferized kernel, before grid mapping, this pass
//
//   1. (GPU) turns each such pair into one `nvgpu.device_async_copy`
//      (cp.async) whose source-element count is what the read would have
//      read in bounds, so the tails are zero-filled by the copy itself;
//   2. with a config of `stages` > 1, multi-buffers the chunked shared
//      tiles: one tile per stage, the k-step `i` using tile `i mod stages`;
//   3. software-pipelines the k-step loop: the copies of the first
//      `stages - 1` steps are issued before the loop, and step `i` issues
//      the copies of step `i + stages - 1` before computing on its own
//      tile; copies for steps past the end are skipped (an `scf.if` on
//      block-uniform values);
//   4. (GPU) commits each step's copies as one cp.async group and waits,
//      before the step computes, until at most `stages - 1` groups (the
//      steps still ahead) are in flight; after the loop, until none are.
//
// Grid mapping then places the barriers as for any shared-memory access:
// before a step's copies (the tile they overwrite was read a step ago) and
// between the wait and the product. On the host CPU the same copies,
// buffers, prologue and predicates run as synchronous vector code, so CI
// checks the stage arithmetic and the tails.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace dyncc {
#define GEN_PASS_DEF_PIPELINEKSTEPSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using dyncc::isChunkedCopy;
using dyncc::kMmaAttrName;
using dyncc::kRegisterTileAttrName;

namespace {

/// The allocation `value` (a view of it) is a view of, or null.
static memref::AllocOp getAlloc(Value value) {
  while (auto view = value.getDefiningOp<memref::SubViewOp>())
    value = view.getSource();
  return value.getDefiningOp<memref::AllocOp>();
}

/// Rewrites the transfer pairs of a chunked copy as cp.async: the
/// destination element count is the vector's; the source element count is
/// what the read reads in bounds (0 for a row past the source's extents),
/// and where it is 0 the source address is the source's first element, so
/// no address leaves the tile.
static LogicalResult convertToAsyncCopies(RewriterBase &rewriter,
                                          scf::ForallOp copy) {
  SmallVector<vector::TransferWriteOp> writes;
  copy.getBody()->walk(
      [&](vector::TransferWriteOp write) { writes.push_back(write); });
  for (vector::TransferWriteOp write : writes) {
    auto read = write.getVector().getDefiningOp<vector::TransferReadOp>();
    VectorType vectorType = read.getVectorType();
    auto source = dyn_cast<MemRefType>(read.getBase().getType());
    int64_t rank = vectorType.getRank();
    int64_t n = vectorType.getShape().back();
    int64_t bytes =
        n * static_cast<int64_t>(vectorType.getElementTypeBitWidth()) / 8;
    if (!source || source.getRank() != rank ||
        !read.getPermutationMap().isMinorIdentity() ||
        !write.getPermutationMap().isMinorIdentity() || read.getMask() ||
        write.getMask() ||
        llvm::any_of(vectorType.getShape().drop_back(),
                     [](int64_t d) { return d != 1; }) ||
        !llvm::is_contained({4, 8, 16}, bytes) ||
        !(matchPattern(read.getPadding(), m_AnyZeroFloat()) ||
          matchPattern(read.getPadding(), m_Zero())) ||
        llvm::is_contained(write.getInBoundsValues(), false))
      return write.emitOpError("is not a copy of one vector of 4, 8 or 16 "
                               "bytes padded with zeros: no cp.async");
    Location loc = write.getLoc();
    rewriter.setInsertionPoint(write);
    ValueRange indices = read.getIndices();
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value count = arith::ConstantIndexOp::create(rewriter, loc, n);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (read.isDimInBounds(d))
        continue;
      Value extent = memref::DimOp::create(rewriter, loc, read.getBase(), d);
      if (d == rank - 1) {
        // The elements left in the row, between 0 and n.
        Value left = arith::SubIOp::create(rewriter, loc, extent, indices[d]);
        count = arith::MaxSIOp::create(
            rewriter, loc, arith::MinSIOp::create(rewriter, loc, left, count),
            zero);
      } else {
        Value inside = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::ult, indices[d], extent);
        count = arith::SelectOp::create(rewriter, loc, inside, count, zero);
      }
    }
    Value any = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt,
                                      count, zero);
    SmallVector<Value> sourceIndices;
    for (Value index : indices)
      sourceIndices.push_back(
          arith::SelectOp::create(rewriter, loc, any, index, zero));
    nvgpu::DeviceAsyncCopyOp::create(
        rewriter, loc, nvgpu::DeviceAsyncTokenType::get(rewriter.getContext()),
        write.getBase(), write.getIndices(), read.getBase(), sourceIndices,
        rewriter.getIndexAttr(n), count,
        bytes == 16 ? rewriter.getUnitAttr() : UnitAttr());
    rewriter.eraseOp(write);
    if (read->use_empty())
      rewriter.eraseOp(read);
  }
  return success();
}

/// Replaces `from` by `to` (the same elements, another layout), rebuilding
/// the subviews of it for the new layout.
static LogicalResult replaceView(RewriterBase &rewriter, Value from, Value to) {
  for (OpOperand &use : llvm::make_early_inc_range(from.getUses())) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<memref::SubViewOp>(user)) {
      rewriter.setInsertionPoint(view);
      auto type = memref::SubViewOp::inferRankReducedResultType(
          view.getType().getShape(), cast<MemRefType>(to.getType()),
          view.getMixedOffsets(), view.getMixedSizes(), view.getMixedStrides());
      auto rebuilt = memref::SubViewOp::create(
          rewriter, view.getLoc(), cast<MemRefType>(type), to,
          view.getMixedOffsets(), view.getMixedSizes(), view.getMixedStrides());
      if (failed(replaceView(rewriter, view.getResult(), rebuilt.getResult())))
        return failure();
      rewriter.eraseOp(view);
      continue;
    }
    if (isa<ViewLikeOpInterface>(user))
      return user->emitOpError("views a multi-buffered tile other than by "
                               "memref.subview");
    rewriter.modifyOpInPlace(user, [&] { use.set(to); });
  }
  return success();
}

/// Gives `alloc` (used only in `loop`) `stages` copies: one allocation with
/// a leading stage dimension, and in the loop the tile of stage
/// ((iv - lb) / step) mod stages.
static LogicalResult multiBuffer(RewriterBase &rewriter, memref::AllocOp alloc,
                                 scf::ForOp loop, int64_t stages, int64_t lb,
                                 int64_t step) {
  MemRefType type = alloc.getType();
  SmallVector<int64_t> shape{stages};
  llvm::append_range(shape, type.getShape());
  auto buffered =
      MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface(),
                      type.getMemorySpace());
  rewriter.setInsertionPoint(alloc);
  auto all = memref::AllocOp::create(rewriter, alloc.getLoc(), buffered,
                                     alloc.getAlignmentAttr());
  Location loc = loop.getLoc();
  rewriter.setInsertionPointToStart(loop.getBody());
  AffineExpr iv = rewriter.getAffineDimExpr(0);
  Value stage = affine::AffineApplyOp::create(
      rewriter, loc, AffineMap::get(1, 0, ((iv - lb).floorDiv(step)) % stages),
      loop.getInductionVar());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank + 1, rewriter.getIndexAttr(0));
  offsets[0] = stage;
  SmallVector<OpFoldResult> sizes{rewriter.getIndexAttr(1)};
  for (int64_t d : type.getShape())
    sizes.push_back(rewriter.getIndexAttr(d));
  SmallVector<OpFoldResult> strides(rank + 1, rewriter.getIndexAttr(1));
  auto tileType = memref::SubViewOp::inferRankReducedResultType(
      type.getShape(), buffered, offsets, sizes, strides);
  auto tile = memref::SubViewOp::create(
      rewriter, loc, cast<MemRefType>(tileType), all, offsets, sizes, strides);
  if (failed(replaceView(rewriter, alloc.getResult(), tile.getResult())))
    return failure();
  rewriter.eraseOp(alloc);
  return success();
}

/// The ops of `body` (direct children) that `roots` use, transitively:
/// what a clone of the roots needs. Fails if one has memory effects.
static FailureOr<SetVector<Operation *>>
getDependencies(Block *body, ArrayRef<Operation *> roots) {
  SetVector<Operation *> deps;
  SmallVector<Operation *> worklist(roots.begin(), roots.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    SetVector<Value> used;
    for (Value operand : op->getOperands())
      used.insert(operand);
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, used);
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != body || deps.contains(def) ||
          llvm::is_contained(roots, def))
        continue;
      if (!isMemoryEffectFree(def))
        return def->emitOpError(
            "is needed by a pipelined copy but has memory effects");
      deps.insert(def);
      worklist.push_back(def);
    }
  }
  return deps;
}

struct PipelineKSteps final
    : ::dyncc::impl::PipelineKStepsPassBase<PipelineKSteps> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(dyncc::verifyTargetOption(getOperation(), target)))
      return signalPassFailure();
    func::FuncOp func = getOperation();
    auto attr =
        func->getAttrOfType<DictionaryAttr>(dyncc::TileConfig::getAttrName());
    if (!attr)
      return;
    FailureOr<dyncc::TileConfig> config = dyncc::TileConfig::fromAttr(attr);
    if (failed(config)) {
      func.emitOpError("has an invalid ") << dyncc::TileConfig::getAttrName();
      return signalPassFailure();
    }
    SmallVector<Operation *> products;
    func.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kMmaAttrName) || op->hasAttr(kRegisterTileAttrName))
        products.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *product : products)
      if (failed(pipeline(rewriter, product, config->stages)))
        return signalPassFailure();
  }

  LogicalResult pipeline(RewriterBase &rewriter, Operation *product,
                         int64_t stages) {
    bool gpu = target == "gpu";
    // The product's warp forall, in the k-step loop (none when one step
    // covers the reduction).
    auto warps = product->getParentOfType<scf::ForallOp>();
    if (!warps)
      return product->emitOpError("is not in a warp forall");
    Block *body = warps->getBlock();
    auto loop = dyn_cast<scf::ForOp>(warps->getParentOp());
    SmallVector<Operation *> copies;
    for (Operation &op : *body)
      if (isChunkedCopy(&op))
        copies.push_back(&op);
    if (copies.empty())
      return success();
    if (gpu)
      for (Operation *copy : copies)
        if (failed(convertToAsyncCopies(rewriter, cast<scf::ForallOp>(copy))))
          return failure();

    Location loc = warps.getLoc();
    // Commits the copies issued so far as a group; waits until at most
    // `pending` groups are in flight. (NVVM's own ops: nvgpu's take the
    // copies' tokens, which live in the copy loops.)
    auto commit = [&]() { NVVM::CpAsyncCommitGroupOp::create(rewriter, loc); };
    auto wait = [&](int64_t pending) {
      NVVM::CpAsyncWaitGroupOp::create(rewriter, loc,
                                       static_cast<uint32_t>(pending));
    };

    std::optional<int64_t> lb =
        loop ? getConstantIntValue(loop.getLowerBound()) : std::nullopt;
    std::optional<int64_t> step =
        loop ? getConstantIntValue(loop.getStep()) : std::nullopt;
    if (stages == 1 || !loop || !lb || !step || *step <= 0) {
      // One stage: each step's copies complete before its product.
      if (gpu) {
        rewriter.setInsertionPointAfter(copies.back());
        commit();
        wait(0);
      }
      return success();
    }

    // One shared tile per stage.
    SetVector<memref::AllocOp> allocs;
    for (Operation *copy : copies)
      copy->walk([&](Operation *op) {
        Value dest;
        if (auto write = dyn_cast<vector::TransferWriteOp>(op))
          dest = write.getBase();
        else if (auto async = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op))
          dest = async.getDst();
        if (dest)
          allocs.insert(getAlloc(dest));
      });
    for (memref::AllocOp alloc : allocs) {
      if (!alloc)
        return copies.front()->emitOpError(
            "writes shared memory that is not a static allocation");
      for (Operation *user : alloc->getUsers())
        if (!loop->isAncestor(user))
          return alloc.emitOpError(
              "is a chunked shared tile used outside its k-step loop");
      if (failed(multiBuffer(rewriter, alloc, loop, stages, *lb, *step)))
        return failure();
    }

    // The copies of k-step `iv`, if it is a step of the loop: clones of the
    // copies and the index arithmetic they need.
    FailureOr<SetVector<Operation *>> deps = getDependencies(body, copies);
    if (failed(deps))
      return failure();
    Value ub = loop.getUpperBound();
    auto issue = [&](Value iv) {
      Value inRange = arith::CmpIOp::create(rewriter, loc,
                                            arith::CmpIPredicate::slt, iv, ub);
      auto guard = scf::IfOp::create(rewriter, loc, inRange,
                                     /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(rewriter);
      rewriter.setInsertionPoint(guard.getThenRegion().front().getTerminator());
      IRMapping mapping;
      mapping.map(loop.getInductionVar(), iv);
      for (Operation &op : *body)
        if (deps->contains(&op) || llvm::is_contained(copies, &op))
          rewriter.clone(op, mapping);
    };

    // The prologue: steps 0 .. stages - 2, a group each.
    rewriter.setInsertionPoint(loop);
    for (int64_t s = 0; s + 1 < stages; ++s) {
      issue(arith::AddIOp::create(
          rewriter, loc, loop.getLowerBound(),
          arith::ConstantIndexOp::create(rewriter, loc, s * *step)));
      if (gpu)
        commit();
    }
    // In the loop: step iv + (stages - 1) * step, then wait for step iv's
    // group.
    rewriter.setInsertionPoint(copies.front());
    issue(arith::AddIOp::create(
        rewriter, loc, loop.getInductionVar(),
        arith::ConstantIndexOp::create(rewriter, loc, (stages - 1) * *step)));
    if (gpu) {
      commit();
      wait(stages - 1);
    }
    for (Operation *copy : copies)
      rewriter.eraseOp(copy);
    // What only the copies used.
    for (Operation *dep : llvm::reverse(*deps))
      if (isOpTriviallyDead(dep))
        rewriter.eraseOp(dep);
    if (gpu) {
      rewriter.setInsertionPointAfter(loop);
      commit();
      wait(0);
    }
    return success();
  }
};

} // namespace
