//===- MapForallToGrid.cpp - Map block/thread foralls to a grid -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Maps the dynamically sized `scf.forall`s of a tiled, bufferized kernel to
// the launch grid. The grid is ceil(extent / block tile) per dimension and is
// computed by the run-time from the same symbolic shapes, so each block
// forall iteration is one block; thread foralls are strided by the block
// size, so a partial tile (a tail) simply has idle threads.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <numeric>

namespace dyncc {
#define GEN_PASS_DEF_MAPFORALLTOGRIDPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// The static lower bound, step and iteration count of dimension `i` of
/// `forall`, if all are constants and the step is positive.
struct StaticBounds {
  int64_t lb, step, count;
};
static std::optional<StaticBounds> getStaticBounds(scf::ForallOp forall,
                                                   unsigned i) {
  std::optional<int64_t> lb =
      getConstantIntValue(forall.getMixedLowerBound()[i]);
  std::optional<int64_t> ub =
      getConstantIntValue(forall.getMixedUpperBound()[i]);
  std::optional<int64_t> step = getConstantIntValue(forall.getMixedStep()[i]);
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return StaticBounds{*lb, *step,
                      *ub > *lb ? llvm::divideCeilSigned(*ub - *lb, *step)
                                : 0};
}

enum class Level { Block, Warp, Thread };

/// The mapping id of `#gpu.thread<linear_dim_0>`.
constexpr uint64_t kLinearThreads =
    static_cast<uint64_t>(gpu::MappingId::LinearDim0);

/// The mapping of a forall: its level and, per dimension, the mapping id
/// (0..2 for x, y, z; 3 and up for the linear dimensions folded into z).
static FailureOr<std::pair<Level, SmallVector<uint64_t>>>
getMapping(scf::ForallOp forall) {
  std::optional<ArrayAttr> mapping = forall.getMapping();
  if (!mapping || mapping->empty())
    return forall.emitOpError("has no block or thread mapping");
  SmallVector<uint64_t> dims;
  std::optional<Level> level;
  for (Attribute attr : *mapping) {
    uint64_t id;
    Level l;
    if (auto block = dyn_cast<gpu::GPUBlockMappingAttr>(attr)) {
      id = static_cast<uint64_t>(block.getBlock());
      l = Level::Block;
    } else if (auto thread = dyn_cast<gpu::GPUThreadMappingAttr>(attr)) {
      id = static_cast<uint64_t>(thread.getThread());
      l = Level::Thread;
    } else if (auto warp = dyn_cast<gpu::GPUWarpMappingAttr>(attr)) {
      id = static_cast<uint64_t>(warp.getWarp());
      l = Level::Warp;
    } else {
      return forall.emitOpError("has an unsupported mapping ") << attr;
    }
    // Threads may also be linear dimensions (all of the block's threads
    // as one index, x fastest, the forall's dimensions delinearized from
    // it, linear_dim_0 fastest): the chunks of a copy into shared memory,
    // a shared tile's elements.
    bool linearThreads = l == Level::Thread && id >= kLinearThreads &&
                         id < kLinearThreads + mapping->size();
    if ((l != Level::Block && id > 2 && !linearThreads) ||
        (level && *level != l) || llvm::is_contained(dims, id))
      return forall.emitOpError("mapping must be distinct x/y/z (and linear "
                                "block dimensions) of one level, got ")
             << *mapping;
    level = l;
    dims.push_back(id);
  }
  if (*level == Level::Thread &&
      llvm::any_of(dims, [](uint64_t id) { return id >= kLinearThreads; }) &&
      llvm::any_of(dims, [](uint64_t id) { return id < kLinearThreads; }))
    return forall.emitOpError("mixes linear and x/y/z thread dimensions: ")
           << *mapping;
  return std::make_pair(*level, dims);
}

/// Moves the body of `forall` to just before `dest`, with `ivs` for its
/// induction variables, and drops its (empty) terminator.
static void inlineForallBody(RewriterBase &rewriter, scf::ForallOp forall,
                             Operation *dest, ValueRange ivs) {
  Operation *terminator = forall.getBody()->getTerminator();
  rewriter.inlineBlockBefore(forall.getBody(), dest, ivs);
  rewriter.eraseOp(terminator);
}

/// The lower bound, upper bound and step of dimension `i` of `forall`.
static std::tuple<Value, Value, Value>
getBounds(RewriterBase &rewriter, scf::ForallOp forall, unsigned i) {
  Location loc = forall.getLoc();
  return {
      getValueOrCreateConstantIndexOp(rewriter, loc,
                                      forall.getMixedLowerBound()[i]),
      getValueOrCreateConstantIndexOp(rewriter, loc,
                                      forall.getMixedUpperBound()[i]),
      getValueOrCreateConstantIndexOp(rewriter, loc, forall.getMixedStep()[i])};
}

/// The thread's linear id in its block (x fastest) and the block's thread
/// count.
static std::pair<Value, Value> getLinearThreadId(RewriterBase &rewriter,
                                                 Location loc) {
  Value id, count;
  for (gpu::Dimension dim :
       {gpu::Dimension::z, gpu::Dimension::y, gpu::Dimension::x}) {
    Value tid = gpu::ThreadIdOp::create(rewriter, loc, dim);
    Value bdim = gpu::BlockDimOp::create(rewriter, loc, dim);
    id = id ? arith::AddIOp::create(
                  rewriter, loc, arith::MulIOp::create(rewriter, loc, id, bdim),
                  tid)
            : tid;
    count = count ? arith::MulIOp::create(rewriter, loc, count, bdim) : bdim;
  }
  return {id, count};
}

/// How a thread forall, or a region holding some, uses workgroup memory.
struct SharedAccess {
  bool reads = false;
  bool writes = false;
  bool any() const { return reads || writes; }
  SharedAccess &operator|=(const SharedAccess &o) {
    reads |= o.reads;
    writes |= o.writes;
    return *this;
  }
};

/// The workgroup-memory reads and writes of `op` itself.
static SharedAccess getOwnSharedAccess(MemoryEffectOpInterface op) {
  SharedAccess access;
  SmallVector<MemoryEffects::EffectInstance> effects;
  op.getEffects(effects);
  for (const MemoryEffects::EffectInstance &effect : effects) {
    Value value = effect.getValue();
    auto type = value ? dyn_cast<MemRefType>(value.getType()) : MemRefType();
    if (!type || !isWorkgroupMemory(type))
      continue;
    access.reads |= isa<MemoryEffects::Read>(effect.getEffect());
    access.writes |= isa<MemoryEffects::Write>(effect.getEffect());
  }
  return access;
}

/// The workgroup-memory reads and writes of the ops in `forall`.
static SharedAccess getSharedAccess(scf::ForallOp forall) {
  SharedAccess access;
  forall.getBody()->walk(
      [&](MemoryEffectOpInterface op) { access |= getOwnSharedAccess(op); });
  return access;
}

/// True if `op` is a forall whose mapping is of kind `MappingAttr`.
template <typename MappingAttr> static bool isMappedForall(Operation *op) {
  auto forall = dyn_cast<scf::ForallOp>(op);
  std::optional<ArrayAttr> mapping =
      forall ? forall.getMapping() : std::nullopt;
  return mapping && !mapping->empty() && isa<MappingAttr>((*mapping)[0]);
}

/// A forall of the block's threads, directly or as warps.
static bool isThreadForall(Operation *op) {
  return isMappedForall<gpu::GPUThreadMappingAttr>(op) ||
         isMappedForall<gpu::GPUWarpMappingAttr>(op);
}

/// True if threads must synchronize between `before` and `after`: one writes
/// what the other reads or writes. Two foralls that only write are the
/// copies and fills of promotion and the initialization of a block
/// temporary, which write disjoint elements by construction.
static bool conflicts(const SharedAccess &before, const SharedAccess &after) {
  if (!before.writes && !after.writes)
    return false;
  if (before.writes && after.writes && !before.reads && !after.reads)
    return false;
  return true;
}

/// Places `gpu.barrier`s in `block` (recursively) so that every pair of
/// thread foralls touching shared memory in a conflicting way is separated,
/// in program order and, for a loop body, from one iteration to the next.
/// A region op holding such foralls (a k-step loop) counts as one access,
/// the union of its body's. Returns the union of the block's accesses.
static FailureOr<SharedAccess> placeBarriers(RewriterBase &rewriter,
                                             Block &block, bool loopBody) {
  SmallVector<std::pair<Operation *, SharedAccess>> accesses;
  for (Operation &op : block) {
    SharedAccess access;
    if (isThreadForall(&op)) {
      access = getSharedAccess(cast<scf::ForallOp>(op));
    } else {
      // An op of the whole block (every thread runs it whole) that reads or
      // writes shared memory is ordered like a thread forall.
      if (auto effects = dyn_cast<MemoryEffectOpInterface>(&op))
        access = getOwnSharedAccess(effects);
      // A region op counts as the accesses of the thread foralls it holds.
      SharedAccess regions;
      for (Region &region : op.getRegions())
        for (Block &inner : region) {
          FailureOr<SharedAccess> innerAccess =
              placeBarriers(rewriter, inner, isa<scf::ForOp, scf::WhileOp>(op));
          if (failed(innerAccess))
            return failure();
          regions |= *innerAccess;
        }
      // Only block-uniform control flow may hold barriers: the block
      // forall's body, k-step loops, and conditions outside thread foralls
      // (no thread id exists before mapping, so all threads agree on them:
      // the skipped copies of a pipeline's steps past the end).
      if (regions.any() && !isMappedForall<gpu::GPUBlockMappingAttr>(&op) &&
          !isa<scf::ForOp, scf::IfOp>(op))
        return op.emitOpError("holds shared-memory accesses of threads "
                              "under control flow that may diverge within a "
                              "block; no barrier can be placed");
      access |= regions;
    }
    if (access.any())
      accesses.push_back({&op, access});
  }
  SharedAccess all;
  for (auto [i, entry] : llvm::enumerate(accesses)) {
    auto [op, access] = entry;
    all |= access;
    // The previous access: in this block, or for the first one in a loop
    // body, the last one of the previous iteration.
    const SharedAccess *before = nullptr;
    if (i > 0)
      before = &accesses[i - 1].second;
    else if (loopBody)
      before = &accesses.back().second;
    if (!before || !conflicts(*before, access))
      continue;
    if (isa_and_nonnull<gpu::BarrierOp>(op->getPrevNode()))
      continue;
    rewriter.setInsertionPoint(op);
    gpu::BarrierOp::create(rewriter, op->getLoc());
  }
  return all;
}

/// Separates the threads' shared-memory writes from other threads' reads
/// (and reads from later writes) with `gpu.barrier`s, at block level only.
static LogicalResult insertBarriers(RewriterBase &rewriter,
                                    gpu::GPUFuncOp func) {
  for (Block &block : func.getBody())
    if (failed(placeBarriers(rewriter, block, /*loopBody=*/false)))
      return failure();
  return success();
}

class GridMapper {
public:
  GridMapper(RewriterBase &rewriter, bool gpu) : rewriter(rewriter), gpu(gpu) {}

  /// Block ids for the CPU entry point (the function's trailing arguments).
  SmallVector<Value, 3> cpuBlockIds;

  LogicalResult mapBlockForall(scf::ForallOp forall, ArrayRef<uint64_t> ids) {
    Location loc = forall.getLoc();
    rewriter.setInsertionPoint(forall);
    auto blockId = [&](gpu::Dimension dim) -> Value {
      return gpu ? Value(gpu::BlockIdOp::create(rewriter, loc, dim))
                 : cpuBlockIds[static_cast<unsigned>(dim)];
    };
    // The z block id is linear over z and the linear dimensions, z
    // innermost: the last of them is bounded by the grid, the others by
    // the remainder.
    SmallVector<unsigned> zGroup;
    for (auto [i, id] : llvm::enumerate(ids))
      if (id >= 2)
        zGroup.push_back(i);
    llvm::sort(zGroup, [&](unsigned a, unsigned b) { return ids[a] < ids[b]; });
    // Splits `rest` over the forall dimensions `dims`, the first innermost:
    // each but the last is `rest` modulo its block count.
    SmallVector<Value> blockIndex(ids.size());
    auto split = [&](Value rest, ArrayRef<unsigned> dims) {
      for (auto [n, i] : llvm::enumerate(dims)) {
        if (n + 1 == dims.size()) {
          blockIndex[i] = rest;
          break;
        }
        auto [lb, ub, step] = getBounds(rewriter, forall, i);
        Value extent = arith::SubIOp::create(rewriter, loc, ub, lb);
        Value count = arith::CeilDivUIOp::create(rewriter, loc, extent, step);
        blockIndex[i] = arith::RemUIOp::create(rewriter, loc, rest, count);
        rest = arith::DivUIOp::create(rewriter, loc, rest, count);
      }
    };
    if (gpu) {
      // On the GPU every dimension comes from the block's linear id,
      // x + gridDim.x * (y + gridDim.y * z), split x, y, then z innermost
      // first: the blocks are the same as the grid's own for a grid of
      // this forall's block counts, and the run-time may launch a kernel
      // of more than 65535 blocks along y or z as one of x alone
      // (`linear_grid` in the manifest).
      SmallVector<unsigned> order;
      for (uint64_t axis : {0, 1})
        for (auto [i, id] : llvm::enumerate(ids))
          if (id == axis)
            order.push_back(i);
      order.append(zGroup.begin(), zGroup.end());
      Value y = blockId(gpu::Dimension::y), z = blockId(gpu::Dimension::z);
      Value gx = gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x);
      Value gy = gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::y);
      Value yz = arith::AddIOp::create(
          rewriter, loc, y, arith::MulIOp::create(rewriter, loc, gy, z));
      Value linear = arith::AddIOp::create(
          rewriter, loc, blockId(gpu::Dimension::x),
          arith::MulIOp::create(rewriter, loc, gx, yz));
      split(linear, order);
    } else {
      if (!zGroup.empty())
        split(blockId(gpu::Dimension::z), zGroup);
      for (auto [i, id] : llvm::enumerate(ids))
        if (id < 2)
          blockIndex[i] = blockId(static_cast<gpu::Dimension>(id));
    }

    SmallVector<Value> ivs;
    Value inBounds;
    for (unsigned i = 0; i < ids.size(); ++i) {
      auto [lb, ub, step] = getBounds(rewriter, forall, i);
      Value offset = arith::MulIOp::create(rewriter, loc, blockIndex[i], step);
      Value iv = arith::AddIOp::create(rewriter, loc, lb, offset);
      Value cond = arith::CmpIOp::create(rewriter, loc,
                                         arith::CmpIPredicate::slt, iv, ub);
      inBounds = inBounds ? arith::AndIOp::create(rewriter, loc, inBounds, cond)
                          : cond;
      ivs.push_back(iv);
    }
    auto guard = scf::IfOp::create(rewriter, loc, inBounds,
                                   /*withElseRegion=*/false);
    inlineForallBody(rewriter, forall,
                     guard.getThenRegion().front().getTerminator(), ivs);
    rewriter.eraseOp(forall);
    return success();
  }

  LogicalResult mapThreadForall(scf::ForallOp forall, ArrayRef<uint64_t> ids) {
    Location loc = forall.getLoc();
    rewriter.setInsertionPoint(forall);
    SmallVector<Value> ivs;
    Operation *insertBefore = forall;
    if (ids.size() == 1 && ids[0] == kLinearThreads) {
      // Thread t (linear, x fastest) handles iterations t, t + threads, ...
      auto [lb, ub, step] = getBounds(rewriter, forall, 0);
      Value start = lb, stride = step;
      if (gpu) {
        auto [id, count] = getLinearThreadId(rewriter, loc);
        start = arith::AddIOp::create(
            rewriter, loc, lb, arith::MulIOp::create(rewriter, loc, id, step));
        stride = arith::MulIOp::create(rewriter, loc, count, step);
      }
      auto loop = scf::ForOp::create(rewriter, loc, start, ub, stride);
      inlineForallBody(rewriter, forall, loop.getBody()->getTerminator(),
                       loop.getInductionVar());
      rewriter.eraseOp(forall);
      return success();
    }
    if (ids.front() >= kLinearThreads) {
      // Several linear dimensions: thread t handles the linear indices t,
      // t + threads, ... of the forall's iterations, each delinearized
      // over the dimensions' trip counts, linear_dim_0 fastest.
      unsigned n = ids.size();
      SmallVector<unsigned> slowFirst(n);
      std::iota(slowFirst.begin(), slowFirst.end(), 0);
      llvm::sort(slowFirst,
                 [&](unsigned a, unsigned b) { return ids[a] > ids[b]; });
      AffineExpr s0 = rewriter.getAffineSymbolExpr(0),
                 s1 = rewriter.getAffineSymbolExpr(1),
                 s2 = rewriter.getAffineSymbolExpr(2);
      SmallVector<OpFoldResult> trips(n), lbs(n), steps(n);
      for (unsigned i = 0; i < n; ++i) {
        lbs[i] = forall.getMixedLowerBound()[i];
        steps[i] = forall.getMixedStep()[i];
        trips[i] = affine::makeComposedFoldedAffineApply(
            rewriter, loc, AffineMap::get(0, 3, (s1 - s0).ceilDiv(s2)),
            {lbs[i], forall.getMixedUpperBound()[i], steps[i]});
      }
      SmallVector<OpFoldResult> basis;
      OpFoldResult total = rewriter.getIndexAttr(1);
      for (unsigned i : slowFirst) {
        basis.push_back(trips[i]);
        total = affine::makeComposedFoldedAffineApply(
            rewriter, loc, AffineMap::get(0, 2, s0 * s1), {total, trips[i]});
      }
      Value start = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value stride = arith::ConstantIndexOp::create(rewriter, loc, 1);
      if (gpu) {
        auto [id, count] = getLinearThreadId(rewriter, loc);
        start = id;
        stride = count;
      }
      auto loop = scf::ForOp::create(
          rewriter, loc, start,
          getValueOrCreateConstantIndexOp(rewriter, loc, total), stride);
      rewriter.setInsertionPointToStart(loop.getBody());
      auto delinearize = affine::AffineDelinearizeIndexOp::create(
          rewriter, loc, loop.getInductionVar(), basis, /*hasOuterBound=*/true);
      SmallVector<Value> ivs(n);
      for (auto [k, i] : llvm::enumerate(slowFirst))
        ivs[i] = getValueOrCreateConstantIndexOp(
            rewriter, loc,
            affine::makeComposedFoldedAffineApply(
                rewriter, loc, AffineMap::get(0, 3, s0 + s1 * s2),
                {lbs[i], delinearize.getResult(k), steps[i]}));
      inlineForallBody(rewriter, forall, loop.getBody()->getTerminator(), ivs);
      rewriter.eraseOp(forall);
      return success();
    }
    if (gpu) {
      // Threads along a block dimension this forall does not distribute
      // over would repeat its work (and race on accumulators): only the
      // first of them runs it. Dimensions an enclosing or nested thread
      // forall distributes over are not repeats: a row forall over y holds
      // the lanes' foralls over x (a warp per row).
      Value first;
      SmallVector<uint64_t> nested = relatedThreadDims.lookup(forall);
      for (uint64_t id = 0; id < 3; ++id) {
        if (llvm::is_contained(ids, id) || llvm::is_contained(nested, id) ||
            (blockThreads && (*blockThreads)[id] == 1))
          continue;
        Value tid = gpu::ThreadIdOp::create(rewriter, loc,
                                            static_cast<gpu::Dimension>(id));
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        Value isFirst = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, tid, zero);
        first = first ? arith::AndIOp::create(rewriter, loc, first, isFirst)
                      : isFirst;
      }
      if (first) {
        auto guard = scf::IfOp::create(rewriter, loc, first,
                                       /*withElseRegion=*/false);
        insertBefore = guard.getThenRegion().front().getTerminator();
        rewriter.setInsertionPoint(insertBefore);
      }
    }
    for (auto [i, id] : llvm::enumerate(ids)) {
      auto dim = static_cast<gpu::Dimension>(id);
      if (gpu && blockThreads && id < 3) {
        // Static bounds with no more iterations than the block's threads
        // along `dim` (a padded thread tile): thread t runs iteration t
        // alone, and no loop carries its index, so a per-thread value
        // (an accumulator) is invariant in the loops around it.
        std::optional<StaticBounds> bounds = getStaticBounds(forall, i);
        int64_t threads = (*blockThreads)[id];
        int64_t count = bounds ? bounds->count : 0;
        if (count > 0 && count <= threads) {
          Value tid = gpu::ThreadIdOp::create(rewriter, loc, dim);
          if (count < threads) {
            Value bound = arith::ConstantIndexOp::create(rewriter, loc, count);
            auto guard = scf::IfOp::create(
                rewriter, loc,
                arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                      tid, bound),
                /*withElseRegion=*/false);
            insertBefore = guard.getThenRegion().front().getTerminator();
            rewriter.setInsertionPoint(insertBefore);
          }
          AffineExpr t = rewriter.getAffineSymbolExpr(0);
          ivs.push_back(affine::AffineApplyOp::create(
              rewriter, loc,
              AffineMap::get(0, 1, t * bounds->step + bounds->lb,
                             rewriter.getContext()),
              ValueRange{tid}));
          continue;
        }
      }
      auto [lb, ub, step] = getBounds(rewriter, forall, i);
      Value start = lb, stride = step;
      if (gpu) {
        // Thread t handles iterations t, t + blockDim, ...
        Value tid = gpu::ThreadIdOp::create(rewriter, loc, dim);
        Value bdim = gpu::BlockDimOp::create(rewriter, loc, dim);
        start = arith::AddIOp::create(
            rewriter, loc, lb, arith::MulIOp::create(rewriter, loc, tid, step));
        stride = arith::MulIOp::create(rewriter, loc, bdim, step);
      }
      auto loop = scf::ForOp::create(rewriter, loc, start, ub, stride);
      ivs.push_back(loop.getInductionVar());
      insertBefore = loop.getBody()->getTerminator();
      rewriter.setInsertionPoint(insertBefore);
    }
    inlineForallBody(rewriter, forall, insertBefore, ivs);
    rewriter.eraseOp(forall);
    return success();
  }

  /// Threads per block along x, y, z (the kernel's tile config), if it has
  /// one: warp foralls need it.
  std::optional<std::array<int64_t, 3>> blockThreads;

  /// A warp forall on the GPU: each warp (a linear thread id / 32) runs one
  /// iteration, its coordinates delinearized x innermost. Its iteration
  /// counts are static and the warps at least as many; the rest idle. The
  /// index arithmetic is affine.apply throughout (upstream's conversion to
  /// mma.sync walks arith ops on the way to the fragments' indices and
  /// rejects them).
  LogicalResult mapWarpForall(scf::ForallOp forall, ArrayRef<uint64_t> ids) {
    Location loc = forall.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    if (!blockThreads)
      return forall.emitOpError("warp forall in a kernel without a tile "
                                "config giving its threads");
    auto [threadsX, threadsY, threadsZ] = *blockThreads;
    int64_t warps = threadsX * threadsY * threadsZ / 32;
    SmallVector<int64_t> lbs, steps, counts;
    int64_t total = 1;
    for (unsigned i = 0; i < ids.size(); ++i) {
      std::optional<StaticBounds> bounds = getStaticBounds(forall, i);
      if (!bounds)
        return forall.emitOpError("warp forall must have static bounds");
      lbs.push_back(bounds->lb);
      steps.push_back(bounds->step);
      counts.push_back(bounds->count);
      total *= counts.back();
    }
    if (total > warps)
      return forall.emitOpError("has ")
             << total << " warp tiles but the block has " << warps << " warps";
    rewriter.setInsertionPoint(forall);
    AffineExpr tx = getAffineSymbolExpr(0, ctx),
               ty = getAffineSymbolExpr(1, ctx),
               tz = getAffineSymbolExpr(2, ctx);
    AffineExpr warp =
        (tx + ty * threadsX + tz * (threadsX * threadsY)).floorDiv(32);
    SmallVector<Value> tids;
    for (gpu::Dimension dim :
         {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z})
      tids.push_back(gpu::ThreadIdOp::create(rewriter, loc, dim));
    Operation *insertBefore = forall;
    if (total < warps) {
      Value id = affine::AffineApplyOp::create(
          rewriter, loc, AffineMap::get(0, 3, warp), tids);
      Value count = arith::ConstantIndexOp::create(rewriter, loc, total);
      auto guard = scf::IfOp::create(
          rewriter, loc,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, id,
                                count),
          /*withElseRegion=*/false);
      insertBefore = guard.getThenRegion().front().getTerminator();
      rewriter.setInsertionPoint(insertBefore);
    }
    // Dimensions innermost first: x, y, z.
    SmallVector<Value> ivs(ids.size());
    int64_t stride = 1;
    for (uint64_t axis = 0; axis < 3; ++axis) {
      auto it = llvm::find(ids, axis);
      if (it == ids.end())
        continue;
      unsigned i = it - ids.begin();
      AffineExpr index = warp.floorDiv(stride) % counts[i];
      ivs[i] = affine::AffineApplyOp::create(
          rewriter, loc, AffineMap::get(0, 3, index * steps[i] + lbs[i]), tids);
      stride *= counts[i];
    }
    inlineForallBody(rewriter, forall, insertBefore, ivs);
    rewriter.eraseOp(forall);
    return success();
  }

  LogicalResult mapFunction(Operation *funcOp) {
    SmallVector<scf::ForallOp> foralls;
    funcOp->walk([&](scf::ForallOp forall) { foralls.push_back(forall); });
    // The thread dimensions of the thread foralls enclosing or nested in
    // each thread forall, gathered before any is mapped.
    relatedThreadDims.clear();
    for (scf::ForallOp forall : foralls) {
      auto mapping = getMapping(forall);
      if (failed(mapping) || mapping->first != Level::Thread)
        continue;
      for (auto parent = forall->getParentOfType<scf::ForallOp>(); parent;
           parent = parent->getParentOfType<scf::ForallOp>()) {
        auto outer = getMapping(parent);
        if (failed(outer) || outer->first != Level::Thread)
          continue;
        relatedThreadDims[parent].append(mapping->second.begin(),
                                         mapping->second.end());
        relatedThreadDims[forall].append(outer->second.begin(),
                                         outer->second.end());
      }
    }
    // Innermost first: thread foralls sit inside block foralls.
    for (scf::ForallOp forall : llvm::reverse(foralls)) {
      if (forall.getNumResults() != 0)
        return forall.emitOpError("must be bufferized before grid mapping");
      auto mapping = getMapping(forall);
      if (failed(mapping))
        return failure();
      if (mapping->first == Level::Block) {
        if (forall->getParentOfType<scf::ForallOp>())
          return forall.emitOpError("block forall nested in another forall");
        if (failed(mapBlockForall(forall, mapping->second)))
          return failure();
      } else if (mapping->first == Level::Warp && gpu) {
        if (failed(mapWarpForall(forall, mapping->second)))
          return failure();
      } else if (failed(mapThreadForall(forall, mapping->second))) {
        // On the CPU a warp forall, like a thread forall, is a loop.
        return failure();
      }
    }
    return success();
  }

private:
  RewriterBase &rewriter;
  bool gpu;
  /// Per thread forall, the dimensions of the thread foralls enclosing it
  /// or nested in it.
  DenseMap<Operation *, SmallVector<uint64_t>> relatedThreadDims;
};

struct MapForallToGrid final
    : ::dyncc::impl::MapForallToGridPassBase<MapForallToGrid> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(dyncc::verifyTargetOption(getOperation(), target)))
      return signalPassFailure();
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr("dyncc.kernel"))
        kernels.push_back(func);
    IRRewriter rewriter(&getContext());
    for (func::FuncOp kernel : kernels) {
      if (failed(dropDestinationResults(kernel)))
        return signalPassFailure();
      LogicalResult result = target == "gpu" ? mapToGpu(rewriter, kernel)
                                             : mapToCpu(rewriter, kernel);
      if (failed(result))
        return signalPassFailure();
    }
  }

  /// Bufferized kernels return their destination arguments; the run-time
  /// owns those buffers, so the results are dropped. Any other result means
  /// bufferization did not work in place.
  LogicalResult dropDestinationResults(func::FuncOp kernel) {
    // An allocation would be a malloc on the GPU and a copy a call into
    // MLIR's runner utils on the CPU: dyncc-bound-local-buffers replaces
    // both.
    WalkResult leftovers = kernel.walk([&](Operation *op) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op);
          alloc && isWorkgroupMemory(alloc.getType()) &&
          alloc->getBlock() == &kernel.getBody().front() &&
          alloc.getType().hasStaticShape())
        return WalkResult::advance();
      if (isa<memref::AllocOp, memref::CopyOp>(op)) {
        op->emitOpError("left in a kernel; run dyncc-bound-local-buffers "
                        "after bufferization");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftovers.wasInterrupted())
      return failure();
    // Every block runs the kernel's code outside its foralls (and on the
    // CPU, blocks run concurrently): a write of a kernel buffer there would
    // be repeated by each block, racing with the tiles that update the same
    // buffer in place. (A write into local buffers is only redundant.)
    if (failed(verifyNoUndistributedWrites(kernel.getBody().front())))
      return failure();
    auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      // A view of a destination argument as its own type (identity layout,
      // no offset) is the argument: a grouped conv's result, computed on
      // [N, G, F, H*W] and reshaped back to [N, G*F, H, W], bufferizes to a
      // reinterpret_cast of the argument's buffer.
      if (auto cast = value.getDefiningOp<memref::ReinterpretCastOp>();
          cast && cast.getSource().getType() == cast.getType() &&
          cast.getType().getLayout().isIdentity() &&
          isa<BlockArgument>(cast.getSource()) &&
          llvm::all_of(cast.getMixedOffsets(), [](OpFoldResult offset) {
            return isConstantIntValue(offset, 0);
          }))
        value = cast.getSource();
      auto arg = dyn_cast<BlockArgument>(value);
      if (!arg || arg.getOwner() != &kernel.getBody().front())
        return kernel.emitOpError("result #")
               << i << " is not written in place into a destination argument";
    }
    ret->setOperands({});
    kernel.setType(
        FunctionType::get(&getContext(), kernel.getArgumentTypes(), {}));
    return success();
  }

  /// Fails on an op of `block`, outside every forall, that writes a kernel
  /// argument's buffer (through any views of it).
  static LogicalResult verifyNoUndistributedWrites(Block &block) {
    for (Operation &op : block) {
      if (isa<scf::ForallOp>(op) || isMemoryEffectFree(&op))
        continue;
      bool recursive = op.hasTrait<OpTrait::HasRecursiveMemoryEffects>();
      if (recursive)
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            if (failed(verifyNoUndistributedWrites(nested)))
              return failure();
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects) {
        if (recursive)
          continue;
        return op.emitOpError("has unknown memory effects outside the "
                              "block tiles");
      }
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances) {
        if (!isa<MemoryEffects::Write>(effect.getEffect()))
          continue;
        Value target = effect.getValue();
        if (auto memref = dyn_cast_if_present<MemrefValue>(target))
          target = memref::skipViewLikeOps(memref);
        if (!target || isa<BlockArgument>(target))
          return op.emitOpError("writes a kernel buffer outside the block "
                                "tiles, where every block would run it; "
                                "tiling could not fuse it into the tiles "
                                "that read it");
      }
    }
    return success();
  }

  LogicalResult mapToGpu(IRRewriter &rewriter, func::FuncOp kernel) {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>("dyncc_kernels");
    if (!gpuModule) {
      rewriter.setInsertionPointToEnd(module.getBody());
      gpuModule =
          gpu::GPUModuleOp::create(rewriter, module.getLoc(), "dyncc_kernels");
    }
    rewriter.setInsertionPointToEnd(gpuModule.getBody());
    auto gpuFunc =
        gpu::GPUFuncOp::create(rewriter, kernel.getLoc(), kernel.getSymName(),
                               kernel.getFunctionType());
    gpuFunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                     UnitAttr::get(ctx));
    for (NamedAttribute attr : kernel->getDiscardableAttrs())
      gpuFunc->setAttr(attr.getName(), attr.getValue());
    rewriter.eraseBlock(&gpuFunc.getBody().front());
    rewriter.inlineRegionBefore(kernel.getBody(), gpuFunc.getBody(),
                                gpuFunc.getBody().end());
    auto ret = cast<func::ReturnOp>(gpuFunc.getBody().front().getTerminator());
    rewriter.setInsertionPoint(ret);
    gpu::ReturnOp::create(rewriter, ret.getLoc());
    rewriter.eraseOp(ret);
    rewriter.eraseOp(kernel);
    // Shared buffers (dyncc-bound-local-buffers put them at the entry)
    // become workgroup attributions, 16-byte aligned for vector accesses;
    // an allocation would lower to malloc. Beyond the 48 KB of static
    // shared memory they are views of the kernel's dynamic shared memory
    // instead, at 16-byte aligned offsets, and the kernel records the bytes
    // its launch must pass. So are those of a GEMM kernel with a static
    // product, whose accumulator may take its operand tiles' bytes, and
    // products in turn each other's (dyncc-overlap-shared-accumulators
    // moves the views; a workgroup attribution cannot move). Not every
    // GEMM's: a fused Q, K and V projection whose products are not static
    // took 180 registers as views where it took 56 as attributions.
    SmallVector<memref::AllocOp> shared;
    // Each buffer's offset in the dynamic shared memory, were it used.
    SmallVector<int64_t> offsets;
    int64_t sharedBytes = 0;
    for (auto alloc : gpuFunc.getBody().front().getOps<memref::AllocOp>()) {
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        return alloc.emitOpError("shared buffer of type ")
               << type << " is not a static buffer of the kernel's entry";
      shared.push_back(alloc);
      offsets.push_back(sharedBytes);
      sharedBytes += getSharedBufferBytes(
          type.getNumElements(), getElementBytes(type.getElementType()));
    }
    if (sharedBytes > kMaxStaticSharedBytes ||
        (!shared.empty() && gpuFunc->hasAttr(kOverlappedSharedBytesAttrName))) {
      rewriter.setInsertionPointToStart(&gpuFunc.getBody().front());
      auto bytesType = MemRefType::get(
          {ShapedType::kDynamic}, rewriter.getI8Type(),
          MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
      Value dynamic = gpu::DynamicSharedMemoryOp::create(
          rewriter, gpuFunc.getLoc(), bytesType);
      for (auto [alloc, offset] : llvm::zip(shared, offsets)) {
        rewriter.setInsertionPoint(alloc);
        Value at =
            arith::ConstantIndexOp::create(rewriter, alloc.getLoc(), offset);
        rewriter.replaceOpWithNewOp<memref::ViewOp>(alloc, alloc.getType(),
                                                    dynamic, at, ValueRange());
      }
      gpuFunc->setAttr(getDynamicSharedBytesAttrName(),
                       rewriter.getI64IntegerAttr(sharedBytes));
    } else {
      for (memref::AllocOp alloc : shared) {
        BlockArgument buffer =
            gpuFunc.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
        gpuFunc.setWorkgroupAttributionAttr(
            gpuFunc.getNumWorkgroupAttributions() - 1, "llvm.align",
            rewriter.getI64IntegerAttr(16));
        rewriter.replaceOp(alloc, buffer);
      }
    }
    if (failed(insertBarriers(rewriter, gpuFunc)))
      return failure();
    GridMapper mapper(rewriter, /*gpu=*/true);
    if (auto attr =
            gpuFunc->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName())) {
      FailureOr<TileConfig> config = TileConfig::fromAttr(attr);
      if (failed(config))
        return gpuFunc.emitOpError("has an invalid ")
               << TileConfig::getAttrName();
      mapper.blockThreads = config->getBlockDims();
    }
    return mapper.mapFunction(gpuFunc);
  }

  LogicalResult mapToCpu(IRRewriter &rewriter, func::FuncOp kernel) {
    unsigned n = kernel.getNumArguments();
    Type index = IndexType::get(&getContext());
    if (failed(kernel.insertArguments(
            {n, n, n}, {index, index, index},
            {DictionaryAttr(), DictionaryAttr(), DictionaryAttr()},
            {kernel.getLoc(), kernel.getLoc(), kernel.getLoc()})))
      return kernel.emitOpError("could not add the block id arguments");
    GridMapper mapper(rewriter, /*gpu=*/false);
    for (unsigned i = 0; i < 3; ++i)
      mapper.cpuBlockIds.push_back(kernel.getArgument(n + i));
    kernel->setAttr("dyncc.block_entry", UnitAttr::get(&getContext()));
    // Shared buffers are the block task's: allocas on its stack, and no
    // type keeps the GPU's memory space.
    SmallVector<memref::AllocOp> shared;
    for (auto alloc : kernel.getBody().front().getOps<memref::AllocOp>())
      shared.push_back(alloc);
    for (memref::AllocOp alloc : shared) {
      rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(),
                                                    alloc.getAlignmentAttr());
    }
    AttrTypeReplacer replacer;
    replacer.addReplacement([](MemRefType type) -> std::optional<Type> {
      if (!isWorkgroupMemory(type))
        return std::nullopt;
      return MemRefType::get(type.getShape(), type.getElementType(),
                             type.getLayout());
    });
    replacer.recursivelyReplaceElementsIn(kernel, /*replaceAttrs=*/false,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    return mapper.mapFunction(kernel);
  }
};

} // namespace
