//===- LowerVectorTransfers.cpp - Aligned vector loads and stores ---------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// dyncc-tile-and-fuse vectorizes an elementwise thread tile only where every
// vector it reads or writes along the innermost dimension is aligned to its
// size (divisibility facts on the kernel's arguments: `--dim D=4:512:4`),
// and those are the only in-bounds 1-D vector transfers of a kernel before
// this pass. On a bufferized kernel this pass turns each into a
// `vector.load` or `vector.store` carrying that alignment: on the GPU a
// 16-byte `ld.global.v4.f32` / `st.global.v4.f32` instead of four scalar
// accesses (LLVM would otherwise assume the element's alignment only); on
// the CPU an aligned vector access, so a wrong proof would fault in CI.
//
// A thread tile that reads an operand broadcast along the innermost
// dimension (Expand of `[3, 1]` to `[3, 4]`) reads it by an in-bounds 1-D
// transfer whose permutation map is the constant 0. That becomes one scalar
// load and a `vector.broadcast`: the GPU lowering (vector to LLVM) has no
// pattern for a broadcasting transfer, which was left an unrealized cast.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace dyncc {
#define GEN_PASS_DEF_LOWERVECTORTRANSFERSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;

namespace {

/// The alignment of a transfer dyncc-tile-and-fuse made (the vector's size
/// in bytes), if `op` is one: in bounds, unmasked, a 1-D vector along the
/// innermost dimension of a memref whose innermost stride is 1.
static std::optional<int64_t> getAlignment(VectorTransferOpInterface op) {
  auto memref = dyn_cast<MemRefType>(op.getShapedType());
  VectorType vector = op.getVectorType();
  if (!memref || memref.getRank() == 0 || vector.getRank() != 1 ||
      vector.isScalable() || op.getMask() ||
      !op.getPermutationMap().isMinorIdentity() ||
      !llvm::all_of(op.getInBoundsValues(), [](bool b) { return b; }))
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return std::nullopt;
  unsigned bits = vector.getElementTypeBitWidth();
  int64_t bytes = vector.getNumElements() * bits / 8;
  if (bits % 8 != 0 || bytes > 16 || !llvm::isPowerOf2_64(bytes))
    return std::nullopt;
  return bytes;
}

/// True where `op` reads one element and broadcasts it to a 1-D vector: in
/// bounds, unmasked, its permutation map the constant 0.
static bool isBroadcastRead(vector::TransferReadOp op) {
  AffineMap map = op.getPermutationMap();
  VectorType vector = op.getVectorType();
  return isa<MemRefType>(op.getShapedType()) && vector.getRank() == 1 &&
         !vector.isScalable() && !op.getMask() && map.getNumResults() == 1 &&
         map.isConstant() && map.getSingleConstantResult() == 0 &&
         op.getShapedType().getElementType() == vector.getElementType() &&
         llvm::all_of(op.getInBoundsValues(), [](bool b) { return b; });
}

struct LowerVectorTransfers final
    : ::dyncc::impl::LowerVectorTransfersPassBase<LowerVectorTransfers> {
  void runOnOperation() override {
    SmallVector<VectorTransferOpInterface> transfers;
    getOperation().walk(
        [&](VectorTransferOpInterface op) { transfers.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (VectorTransferOpInterface op : transfers) {
      if (std::optional<int64_t> alignment = getAlignment(op)) {
        dyncc::replaceWithAlignedAccess(rewriter, op, *alignment);
        continue;
      }
      auto read = dyn_cast<vector::TransferReadOp>(op.getOperation());
      if (!read || !isBroadcastRead(read))
        continue;
      rewriter.setInsertionPoint(read);
      Value element = memref::LoadOp::create(
          rewriter, read.getLoc(), read.getBase(), read.getIndices());
      rewriter.replaceOpWithNewOp<vector::BroadcastOp>(
          read, read.getVectorType(), element);
    }
  }
};

} // namespace
