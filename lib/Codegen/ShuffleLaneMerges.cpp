//===- ShuffleLaneMerges.cpp - Row reductions' lane merges as shuffles ----===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// dyncc-tile-and-fuse splits a row's reduction over the lanes (the x
// threads) of a warp (`reduce warp`) or a block (`reduce block`): a forall
// over the lanes in which each folds its share of the row into a private
// accumulator and copies it into its slot of a buffer of partials, then a
// `dyncc.lane_merge` generic that folds the partials into the reduction's
// accumulator. On the host CPU that is what runs: the lanes are a loop and
// the buffer is on the task's stack. On the GPU each thread's buffer is its
// own, so on a bufferized kernel, before grid mapping, this pass replaces
// the copy and the merge by
//
//   1. a `gpu.subgroup_reduce` of each lane's value across its warp (then
//      lowered to a butterfly of `gpu.shuffle xor`, 5 steps for 32 lanes,
//      values narrower than 32 bits packed), folded into the accumulator by
//      every lane (the accumulator is private: each thread needs the row's
//      value);
//   2. with more lanes than a warp (`reduce block`): lane 0 of each warp
//      stores the warp's value into a shared buffer of one slot per warp,
//      and a second forall over the lanes folds the slots into each
//      thread's accumulator. Grid mapping puts a barrier between the two.
//
// With fewer lanes than a warp (`reduce column`: a group of 2 to 32 lanes
// per output of a column reduction, which are the block's x threads, so a
// group is an aligned run of a warp's lanes), the butterfly takes
// log2(lanes) steps within the group, each an `nvvm.shfl.sync bfly` whose
// member mask is the group's lanes: a warp holds several outputs, and at a
// block on the outputs' edge the groups past it skip the merge
// (`gpu.shuffle`'s lowering names the warp's first lanes instead).
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"

#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

namespace dyncc {
#define GEN_PASS_DEF_SHUFFLELANEMERGESPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using dyncc::kLaneMergeAttrName;

namespace {

/// `value` of the lane whose id is this lane's xor `offset` (a
/// `gpu.shuffle xor` over 32 lanes, or with `members` an `nvvm.shfl.sync
/// bfly` among the lanes of that mask; values narrower than 32 bits are
/// widened, 64-bit ones shuffled as two halves).
static Value shuffleXor(OpBuilder &b, Location loc, Value value, int32_t offset,
                        Value members = nullptr) {
  Type type = value.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  Type i32 = b.getI32Type();
  Value off = arith::ConstantIntOp::create(b, loc, i32, offset);
  // Among `members` only, with no segments (the whole warp's lane range),
  // else over the warp.
  Value width = arith::ConstantIntOp::create(b, loc, i32, members ? 31 : 32);
  auto shuffle = [&](Value v) -> Value {
    if (members)
      return NVVM::ShflOp::create(b, loc, v.getType(), members, v, off, width,
                                  NVVM::ShflKind::bfly, UnitAttr());
    return gpu::ShuffleOp::create(b, loc, v, off, width, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (bits == 32 && (type.isF32() || type.isInteger(32)))
    return shuffle(value);
  Type asInt = b.getIntegerType(bits);
  Value v = type == asInt
                ? value
                : Value(arith::BitcastOp::create(b, loc, asInt, value));
  Value result;
  if (bits < 32) {
    Value wide = arith::ExtUIOp::create(b, loc, i32, v);
    result = arith::TruncIOp::create(b, loc, asInt, shuffle(wide));
  } else {
    // 64 bits: low and high halves.
    Value lo = arith::TruncIOp::create(b, loc, i32, v);
    Value shift = arith::ConstantIntOp::create(b, loc, asInt, 32);
    Value hi = arith::TruncIOp::create(
        b, loc, i32, arith::ShRUIOp::create(b, loc, v, shift));
    Value newLo = arith::ExtUIOp::create(b, loc, asInt, shuffle(lo));
    Value newHi = arith::ExtUIOp::create(b, loc, asInt, shuffle(hi));
    result = arith::OrIOp::create(b, loc, newLo,
                                  arith::ShLIOp::create(b, loc, newHi, shift));
  }
  return type == asInt ? result
                       : Value(arith::BitcastOp::create(b, loc, type, result));
}

/// The buffer `view` is a view of (through subviews), or `view` itself.
static Value getRootBuffer(Value view) {
  while (auto subview = view.getDefiningOp<memref::SubViewOp>())
    view = subview.getSource();
  return view;
}

struct ShuffleLaneMerges final
    : ::dyncc::impl::ShuffleLaneMergesPassBase<ShuffleLaneMerges> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<linalg::GenericOp> merges;
    func.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kLaneMergeAttrName))
        merges.push_back(op);
    });
    if (merges.empty())
      return;
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp merge : merges)
      if (failed(rewrite(rewriter, func, merge)))
        return signalPassFailure();
  }

  LogicalResult rewrite(RewriterBase &rewriter, func::FuncOp func,
                        linalg::GenericOp merge) {
    Location loc = merge.getLoc();
    if (merge.getNumDpsInputs() != 1 || merge.getNumDpsInits() != 1 ||
        !merge.hasPureBufferSemantics())
      return merge.emitOpError("is not a bufferized lane merge");
    Value parts = merge.getDpsInputOperand(0)->get();
    Value accumulator = merge.getDpsInitOperand(0)->get();
    auto partsType = dyn_cast<MemRefType>(parts.getType());
    if (!partsType || !partsType.hasStaticShape() ||
        !parts.getDefiningOp<memref::AllocaOp>())
      return merge.emitOpError("merges partials that are not a private "
                               "buffer of static shape");
    if (!getRootBuffer(accumulator).getDefiningOp<memref::AllocaOp>())
      return merge.emitOpError(
          "merges into an accumulator that is not private to the thread");
    int64_t lanes = partsType.getDimSize(0);
    if (lanes < 2 || (lanes < 32 && !llvm::isPowerOf2_64(lanes)) ||
        (lanes > 32 && lanes % 32 != 0))
      return merge.emitOpError("merges ")
             << lanes
             << " lanes, neither a power of two up to the warp's 32 nor a "
                "multiple of it";
    if (lanes < 32) {
      // A group of a warp's lanes: the block's x threads, so that each
      // group is an aligned run of lanes.
      FailureOr<dyncc::TileConfig> config = failure();
      if (auto attr = func->getAttrOfType<DictionaryAttr>(
              dyncc::TileConfig::getAttrName()))
        config = dyncc::TileConfig::fromAttr(attr);
      if (failed(config) || config->getBlockDims()[0] != lanes)
        return merge.emitOpError("merges ")
               << lanes
               << " lanes, fewer than a warp, in a kernel whose blocks do "
                  "not have as many x threads";
    }
    Operation *combiner =
        merge.getBody()->getTerminator()->getOperand(0).getDefiningOp();
    Value out = merge.getRegionOutputArgs()[0];
    if (!combiner || combiner->getNumOperands() != 2 ||
        combiner->getNumResults() != 1 ||
        !llvm::is_contained(combiner->getOperands(), out) ||
        combiner->getBlock() != merge.getBody())
      return merge.emitOpError("has no combiner of two values");
    unsigned bits = out.getType().getIntOrFloatBitWidth();
    if (bits > 64 || (bits > 32 && bits != 64))
      return merge.emitOpError("merges ")
             << out.getType() << ", wider than a warp shuffle's 64 bits";

    // The lanes' copy of their partial into its slot, in the last forall
    // before the merge (bufferization may give several merges one buffer,
    // and put copies of accumulators in between).
    scf::ForallOp forall;
    for (Operation *op = merge->getPrevNode(); op && !forall;
         op = op->getPrevNode())
      forall = dyn_cast<scf::ForallOp>(op);
    linalg::LinalgOp copy;
    if (forall)
      forall.getBody()->walk([&](linalg::LinalgOp op) {
        if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1)
          return;
        Value slot = op.getDpsInitOperand(0)->get();
        if (slot.getDefiningOp<memref::SubViewOp>() &&
            getRootBuffer(slot) == parts)
          copy = op;
      });
    if (!copy)
      return merge.emitOpError("has no lanes' forall before it");
    Value partial = copy.getDpsInputOperand(0)->get();
    auto partialType = cast<MemRefType>(partial.getType());
    Type elementType = partialType.getElementType();

    // Each lane: its value, reduced across the warp.
    rewriter.setInsertionPointToStart(&func.getBody().front());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    rewriter.setInsertionPoint(copy);
    Value value =
        memref::LoadOp::create(rewriter, loc, partial,
                               SmallVector<Value>(partialType.getRank(), zero));
    auto fold = [&](OpBuilder &b, Value acc, Value next) {
      IRMapping map;
      for (Value operand : combiner->getOperands())
        map.map(operand, operand == out ? acc : next);
      return b.clone(*combiner, map)->getResult(0);
    };
    // The butterfly: after the step of offset k every lane holds the fold of
    // its group of 2k lanes; after 16, of the warp.
    Value members;
    if (lanes < 32) {
      // The group's lanes: `lanes` bits from the first lane of this one's
      // group.
      Type i32 = rewriter.getI32Type();
      Value lane = NVVM::LaneIdOp::create(rewriter, loc, i32);
      Value first = arith::AndIOp::create(
          rewriter, loc, lane,
          arith::ConstantIntOp::create(rewriter, loc, i32, ~(lanes - 1)));
      Value group = arith::ConstantIntOp::create(
          rewriter, loc, i32, static_cast<int32_t>((1u << lanes) - 1));
      members = arith::ShLIOp::create(rewriter, loc, group, first);
    }
    Value warpValue = value;
    for (int32_t offset = 1; offset < std::min<int64_t>(lanes, 32); offset *= 2)
      warpValue = fold(rewriter, warpValue,
                       shuffleXor(rewriter, loc, warpValue, offset, members));
    auto accType = cast<MemRefType>(accumulator.getType());
    SmallVector<Value> accIndices(accType.getRank(), zero);
    if (lanes <= 32) {
      // Kept in a private scalar until the merge's place (bufferization
      // may initialize the accumulator between the lanes and the merge).
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&func.getBody().front());
      Value kept = memref::AllocaOp::create(rewriter, loc,
                                            MemRefType::get({}, elementType));
      rewriter.setInsertionPoint(copy);
      memref::StoreOp::create(rewriter, loc, warpValue, kept);
      rewriter.setInsertionPoint(merge);
      Value acc =
          memref::LoadOp::create(rewriter, loc, accumulator, accIndices);
      Value row = memref::LoadOp::create(rewriter, loc, kept);
      memref::StoreOp::create(rewriter, loc, fold(rewriter, acc, row),
                              accumulator, accIndices);
    } else {
      // Across warps: a shared slot per warp, written by its lane 0.
      int64_t warps = lanes / 32;
      rewriter.setInsertionPointToStart(&func.getBody().front());
      auto slotsType = MemRefType::get(
          {warps}, elementType, MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(rewriter.getContext(),
                                     gpu::AddressSpace::Workgroup));
      Value slots = memref::AllocOp::create(rewriter, loc, slotsType,
                                            rewriter.getI64IntegerAttr(16));
      rewriter.setInsertionPoint(copy);
      Value lane = forall.getInductionVar(0);
      Value c32 = arith::ConstantIndexOp::create(rewriter, loc, 32);
      Value first = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq,
          arith::RemUIOp::create(rewriter, loc, lane, c32), zero);
      auto ifFirst = scf::IfOp::create(rewriter, loc, first,
                                       /*withElseRegion=*/false);
      rewriter.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
      memref::StoreOp::create(
          rewriter, loc, warpValue, slots,
          ValueRange{arith::DivUIOp::create(rewriter, loc, lane, c32)});
      // Every lane folds the warps' slots into its accumulator.
      rewriter.setInsertionPoint(merge);
      auto gather = scf::ForallOp::create(
          rewriter, loc, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(lanes)},
          ValueRange{}, forall.getMapping());
      rewriter.setInsertionPoint(gather.getTerminator());
      Value acc =
          memref::LoadOp::create(rewriter, loc, accumulator, accIndices);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      Value count = arith::ConstantIndexOp::create(rewriter, loc, warps);
      auto loop = scf::ForOp::create(
          rewriter, loc, zero, count, one, ValueRange{acc},
          [&](OpBuilder &b, Location nested, Value w, ValueRange iter) {
            Value slot = memref::LoadOp::create(b, nested, slots, w);
            scf::YieldOp::create(b, nested, fold(b, iter[0], slot));
          });
      memref::StoreOp::create(rewriter, loc, loop.getResult(0), accumulator,
                              accIndices);
    }
    Operation *slot = copy.getDpsInitOperand(0)->get().getDefiningOp();
    rewriter.eraseOp(copy);
    rewriter.eraseOp(merge);
    // The partials' buffer and its slots are dead now.
    if (slot->use_empty())
      rewriter.eraseOp(slot);
    if (parts.use_empty())
      rewriter.eraseOp(parts.getDefiningOp());
    return success();
  }
};

} // namespace
