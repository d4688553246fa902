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

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace dyncc {
#define GEN_PASS_DEF_MAPFORALLTOGRIDPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

enum class Level { Block, Thread };

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
    } else {
      return forall.emitOpError("has an unsupported mapping ") << attr;
    }
    if ((l == Level::Thread && id > 2) || (level && *level != l) ||
        llvm::is_contained(dims, id))
      return forall.emitOpError("mapping must be distinct x/y/z (and linear "
                                "block dimensions) of one level, got ")
             << *mapping;
    level = l;
    dims.push_back(id);
  }
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

/// True if `forall` (a thread forall) writes workgroup memory: it fills a
/// promoted operand or a block-level temporary that other threads read.
static bool writesSharedMemory(scf::ForallOp forall) {
  WalkResult result = forall.getBody()->walk([](Operation *op) {
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::advance();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &effect : list) {
      Value value = effect.getValue();
      if (!value || !isa<MemoryEffects::Write>(effect.getEffect()))
        continue;
      if (auto type = dyn_cast<MemRefType>(value.getType());
          type && isWorkgroupMemory(type))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// The nearest op before (`forward` false) or after `op` in its block that
/// touches memory or has regions; null at the block's end.
static Operation *getSignificantNeighbour(Operation *op, bool forward) {
  for (Operation *n = forward ? op->getNextNode() : op->getPrevNode(); n;
       n = forward ? n->getNextNode() : n->getPrevNode())
    if (n->getNumRegions() != 0 || !isMemoryEffectFree(n))
      return n;
  return nullptr;
}

/// Separates the threads' writes to shared memory from the reads of other
/// threads with `gpu.barrier`s: before a run of writing thread foralls (the
/// readers of the previous k-step must be done) and after it (the writes
/// must be visible to the readers that follow). Barriers are only placed at
/// block level, outside thread foralls, where control flow is uniform
/// across the block (block guards, k-step loops); anything else is refused.
static LogicalResult insertBarriers(RewriterBase &rewriter, Operation *func) {
  SmallVector<scf::ForallOp> writers;
  func->walk([&](scf::ForallOp forall) {
    auto mapping = forall.getMapping();
    if (mapping && !mapping->empty() &&
        isa<gpu::GPUThreadMappingAttr>((*mapping)[0]) &&
        writesSharedMemory(forall))
      writers.push_back(forall);
  });
  auto isWriter = [&](Operation *op) {
    return op && llvm::is_contained(writers, op);
  };
  for (scf::ForallOp forall : writers) {
    for (Operation *parent = forall->getParentOp(); parent != func;
         parent = parent->getParentOp()) {
      auto loop = dyn_cast<scf::ForallOp>(parent);
      bool blockForall = loop && loop.getMapping() &&
                         !loop.getMapping()->empty() &&
                         isa<gpu::GPUBlockMappingAttr>((*loop.getMapping())[0]);
      if (!blockForall && !isa<scf::ForOp>(parent))
        return forall.emitOpError(
            "writes shared memory under control flow that may diverge "
            "within a block; no barrier can be placed");
    }
    Operation *prev = getSignificantNeighbour(forall, /*forward=*/false);
    if (!isWriter(prev) && !isa_and_nonnull<gpu::BarrierOp>(prev)) {
      rewriter.setInsertionPoint(forall);
      gpu::BarrierOp::create(rewriter, forall.getLoc());
    }
    Operation *next = getSignificantNeighbour(forall, /*forward=*/true);
    if (!isWriter(next) && !isa_and_nonnull<gpu::BarrierOp>(next)) {
      rewriter.setInsertionPointAfter(forall);
      gpu::BarrierOp::create(rewriter, forall.getLoc());
    }
  }
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
    SmallVector<Value> blockIndex(ids.size());
    Value rest = zGroup.empty() ? Value() : blockId(gpu::Dimension::z);
    for (auto [n, i] : llvm::enumerate(zGroup)) {
      if (n + 1 == zGroup.size()) {
        blockIndex[i] = rest;
        break;
      }
      auto [lb, ub, step] = getBounds(rewriter, forall, i);
      Value extent = arith::SubIOp::create(rewriter, loc, ub, lb);
      Value count = arith::CeilDivUIOp::create(rewriter, loc, extent, step);
      blockIndex[i] = arith::RemUIOp::create(rewriter, loc, rest, count);
      rest = arith::DivUIOp::create(rewriter, loc, rest, count);
    }
    for (auto [i, id] : llvm::enumerate(ids))
      if (id < 2)
        blockIndex[i] = blockId(static_cast<gpu::Dimension>(id));

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
    if (gpu) {
      // Threads along a block dimension this forall does not distribute
      // over would repeat its work (and race on accumulators): only the
      // first of them runs it.
      Value first;
      for (uint64_t id = 0; id < 3; ++id) {
        if (llvm::is_contained(ids, id))
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

  LogicalResult mapFunction(Operation *funcOp) {
    SmallVector<scf::ForallOp> foralls;
    funcOp->walk([&](scf::ForallOp forall) { foralls.push_back(forall); });
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
      } else if (failed(mapThreadForall(forall, mapping->second))) {
        return failure();
      }
    }
    return success();
  }

private:
  RewriterBase &rewriter;
  bool gpu;
};

struct MapForallToGrid final
    : ::dyncc::impl::MapForallToGridPassBase<MapForallToGrid> {
  using Base::Base;

  void runOnOperation() override {
    if (target != "gpu" && target != "cpu") {
      getOperation().emitError("unknown target '")
          << target << "', expected gpu or cpu";
      return signalPassFailure();
    }
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
    auto ret = cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
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
    // an allocation would lower to malloc.
    SmallVector<memref::AllocOp> shared;
    for (auto alloc : gpuFunc.getBody().front().getOps<memref::AllocOp>())
      shared.push_back(alloc);
    for (memref::AllocOp alloc : shared) {
      BlockArgument buffer =
          gpuFunc.addWorkgroupAttribution(alloc.getType(), alloc.getLoc());
      gpuFunc.setWorkgroupAttributionAttr(
          gpuFunc.getNumWorkgroupAttributions() - 1, "llvm.align",
          rewriter.getI64IntegerAttr(16));
      rewriter.replaceOp(alloc, buffer);
    }
    if (failed(insertBarriers(rewriter, gpuFunc)))
      return failure();
    GridMapper mapper(rewriter, /*gpu=*/true);
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
