//===- VectorizeMma.cpp - Warp tiles to ldmatrix + mma.sync ---------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// dyncc-tile-and-fuse gives a GEMM whose tile config has an instruction tile
// (`mma`) a product per warp: a contraction, marked `dyncc.mma`, of static
// shared-memory tiles (the warp's rows of A, its columns of B, its part of
// the f32 accumulator), inside the block's k-step loop. The host CPU runs
// that contraction as loops. On the GPU this pass turns it into tensor-core
// code:
//
//   1. vectorize it: transfer reads of the three tiles, one
//      `vector.contract` with f16 operands and an f32 accumulator,
//      a transfer write;
//   2. fold the shared tiles' subviews into the transfers' indices, and
//      hoist the accumulator's read and write out of the k-step loop: the
//      accumulator stays in registers across steps;
//   3. unroll to the instruction shape (m16n8k16);
//   4. rewrite the reads as `nvgpu.ldmatrix` (transposed for a K x N B), the
//      contractions as `nvgpu.mma.sync`, and the accumulator's read and
//      write as per-lane vector loads and stores (upstream's
//      convertVectorToNVVMCompatibleMMASync).
//
// Every lane of the warp runs the code; only after step 4 is it warp-wide.
// A contraction that is not fully converted is an error, never a silent
// fallback to per-lane scalar code.
//
//===----------------------------------------------------------------------===//

#include "Bounds.h"
#include "dyncc/Codegen/Passes.h"

#include "mlir/Conversion/VectorToGPU/VectorToGPU.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace dyncc {
#define GEN_PASS_DEF_VECTORIZEMMAPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using dyncc::kMmaAttrName;
using dyncc::kRegisterTileAttrName;

namespace {

/// A transfer read's shape per instruction, recorded before unrolling.
constexpr llvm::StringLiteral kNativeAttr = "dyncc.native_shape";

/// The native shape of `op` for an instruction of `mma` (M, N, K) shape:
/// contractions unroll to the instruction, reads and writes of its operands
/// to the operand's fragment.
static std::optional<SmallVector<int64_t>>
getNativeShape(Operation *op, ArrayRef<int64_t> mma) {
  if (auto contract = dyn_cast<vector::ContractionOp>(op)) {
    SmallVector<int64_t> shape;
    // Parallel dimensions beyond M and N are unit dimensions here (a
    // batch of 1 per block); M, N, then K by position in the iterators.
    SmallVector<int64_t> parallel, reduction;
    for (auto [i, type] : llvm::enumerate(contract.getIteratorTypesArray()))
      (type == vector::IteratorType::parallel ? parallel : reduction)
          .push_back(i);
    shape.assign(contract.getIteratorTypesArray().size(), 1);
    if (parallel.size() < 2 || reduction.size() != 1)
      return std::nullopt;
    // The result's last two dimensions are M and N.
    AffineMap acc = contract.getIndexingMapsArray()[2];
    unsigned rank = acc.getNumResults();
    shape[acc.getDimPosition(rank - 2)] = mma[0];
    shape[acc.getDimPosition(rank - 1)] = mma[1];
    shape[reduction[0]] = mma[2];
    return shape;
  }
  // Reads carry the shape their contraction gave them before unrolling
  // (the unrolled reads are native already); writes are the accumulator's.
  if (auto shape = op->getAttrOfType<DenseI64ArrayAttr>(kNativeAttr))
    return SmallVector<int64_t>(shape.asArrayRef());
  if (auto write = dyn_cast<vector::TransferWriteOp>(op))
    if (write.getVectorType().getRank() == 2 &&
        write.getVectorType().getShape() !=
            ArrayRef<int64_t>(mma).take_front(2))
      return SmallVector<int64_t>{mma[0], mma[1]};
  return std::nullopt;
}

/// The contraction `user` is, or feeds through a single-use extension, and
/// the position (0: lhs, 1: rhs, 2: accumulator) of the operand that
/// `value`, which `user` uses, becomes there.
static std::optional<std::pair<vector::ContractionOp, unsigned>>
getContractionOperand(Value value, Operation *user) {
  if (isa<arith::ExtFOp>(user) && user->hasOneUse()) {
    value = user->getResult(0);
    user = *user->getUsers().begin();
  }
  auto contract = dyn_cast<vector::ContractionOp>(user);
  if (!contract)
    return std::nullopt;
  unsigned position = contract.getLhs() == value   ? 0
                      : contract.getRhs() == value ? 1
                                                   : 2;
  return std::make_pair(contract, position);
}

/// Records on each 2-D transfer read its native shape: for an operand of a
/// contraction (through an extension), the instruction's extent of each
/// dimension its map selects; for anything else (the accumulator, read
/// before the k-step loop once hoisted), the accumulator fragment.
static void markNativeReads(Operation *root, ArrayRef<int64_t> mma) {
  root->walk([&](vector::TransferReadOp read) {
    if (read.getVectorType().getRank() != 2)
      return;
    SmallVector<int64_t> shape{mma[0], mma[1]};
    for (Operation *user : read->getUsers()) {
      auto use = getContractionOperand(read.getResult(), user);
      if (!use)
        continue;
      auto [contract, position] = *use;
      std::optional<SmallVector<int64_t>> native =
          getNativeShape(contract, mma);
      if (!native)
        continue;
      AffineMap map = contract.getIndexingMapsArray()[position];
      shape.clear();
      for (AffineExpr e : map.getResults())
        shape.push_back((*native)[cast<AffineDimExpr>(e).getPosition()]);
      break;
    }
    read->setAttr(kNativeAttr,
                  DenseI64ArrayAttr::get(read.getContext(), shape));
  });
}

/// Keeps the accumulator of `loop` (a k-step loop) in registers: each pair
/// of a transfer read and a transfer write of one fragment at loop-invariant
/// indices of the same buffer becomes an iteration argument, read before
/// the loop and written after it. Only when those pairs are all the loop's
/// accesses to the buffer and no two fragments overlap; other warps touch
/// only their own fragments (warp tiles are disjoint). Upstream's
/// hoistRedundantVectorTransfers refuses here: it treats every other
/// access of the buffer, a sibling fragment included, as a conflict.
static void hoistAccumulators(RewriterBase &rewriter, scf::ForOp loop) {
  using Pair = std::pair<vector::TransferReadOp, vector::TransferWriteOp>;
  llvm::MapVector<Value, SmallVector<Pair>> byBuffer;
  for (auto write : loop.getBody()->getOps<vector::TransferWriteOp>()) {
    if (write.getMask() || !isa<MemRefType>(write.getBase().getType()))
      continue;
    for (auto read : loop.getBody()->getOps<vector::TransferReadOp>()) {
      if (read.getBase() != write.getBase() ||
          read.getIndices() != write.getIndices() || read.getMask() ||
          read.getVectorType() != write.getVectorType() ||
          read.getPermutationMap() != write.getPermutationMap() ||
          !read->isBeforeInBlock(write))
        continue;
      byBuffer[write.getBase()].push_back({read, write});
      break;
    }
  }
  for (auto &entry : byBuffer) {
    Value buffer = entry.first;
    SmallVector<Pair> &pairs = entry.second;
    // Every access of the buffer in the loop is one of the pairs.
    size_t accesses = 0;
    loop.getBody()->walk([&](Operation *op) {
      if (llvm::is_contained(op->getOperands(), buffer))
        ++accesses;
    });
    if (accesses != 2 * pairs.size())
      continue;
    bool ok = true;
    for (size_t i = 0; i < pairs.size(); ++i) {
      vector::TransferReadOp a = pairs[i].first;
      ok &= llvm::all_of(a.getIndices(), [&](Value index) {
        return loop.isDefinedOutsideOfLoop(index);
      });
      for (size_t j = i + 1; j < pairs.size(); ++j)
        ok &= vector::isDisjointTransferIndices(
            cast<VectorTransferOpInterface>(a.getOperation()),
            cast<VectorTransferOpInterface>(pairs[j].first.getOperation()),
            /*testDynamicValueUsingBounds=*/true);
    }
    if (!ok)
      continue;
    SmallVector<Value> inits;
    for (auto &[read, write] : pairs) {
      rewriter.moveOpBefore(read, loop);
      inits.push_back(read.getResult());
    }
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/true,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          SmallVector<Value> yields;
          for (auto &pair : pairs)
            yields.push_back(pair.second.getVector());
          return yields;
        }));
    unsigned first = newLoop.getNumResults() - pairs.size();
    for (unsigned i = 0; i < pairs.size(); ++i) {
      vector::TransferWriteOp write = pairs[i].second;
      rewriter.moveOpAfter(write, newLoop);
      Value result = newLoop.getResult(first + i);
      rewriter.modifyOpInPlace(
          write, [&] { write.getValueToStoreMutable().assign(result); });
    }
    loop = newLoop;
  }
}

/// hoistAccumulators on every loop in `root`, after CSE (the unrolled reads
/// and writes of one fragment or row compute their indices separately; CSE
/// makes them the same values) and loop-invariant code motion (which puts
/// a warp's or thread's indices outside the k-step loop).
static void hoistAccumulatorsInLoops(RewriterBase &rewriter, Operation *root) {
  {
    DominanceInfo dominance(root);
    eliminateCommonSubExpressions(rewriter, dominance, root);
  }
  root->walk([](LoopLikeOpInterface loop) { moveLoopInvariantCode(loop); });
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops)
    hoistAccumulators(rewriter, loop);
}

/// Upstream's conversion (MLIR 22) starts its search for ops to convert
/// at every contraction and at every op its elementwise table lists
/// (arith.addi, mulf, extf, ...), scalar ones included, which it then
/// fails to convert: a kernel's index arithmetic or a fused epilogue's
/// `addf` aborts it. Around the conversion those scalar ops stand in as
/// an unregistered placeholder carrying their name, operands, properties
/// and attributes; `restoreScalarOps` puts them back.
constexpr llvm::StringLiteral kHiddenOp = "dyncc.hidden_scalar_op";

static void hideScalarOps(RewriterBase &rewriter, Operation *root) {
  SmallVector<Operation *> seeds;
  root->walk([&](Operation *op) {
    if (isa<arith::AddFOp, arith::MulFOp, arith::SubFOp, arith::MaximumFOp,
            arith::MinimumFOp, arith::DivFOp, arith::AddIOp, arith::MulIOp,
            arith::SubIOp, arith::DivSIOp, arith::DivUIOp, arith::NegFOp,
            arith::ExtFOp>(op) &&
        llvm::none_of(op->getResultTypes(), llvm::IsaPred<VectorType>))
      seeds.push_back(op);
  });
  MLIRContext *ctx = root->getContext();
  for (Operation *op : seeds) {
    OperationState state(op->getLoc(), kHiddenOp);
    state.addOperands(op->getOperands());
    state.addTypes(op->getResultTypes());
    state.addAttribute("name",
                       StringAttr::get(ctx, op->getName().getStringRef()));
    if (Attribute props = op->getPropertiesAsAttribute())
      state.addAttribute("properties", props);
    state.addAttribute("attributes", op->getDiscardableAttrDictionary());
    rewriter.setInsertionPoint(op);
    Operation *hidden = rewriter.create(state);
    rewriter.replaceOp(op, hidden->getResults());
  }
}

static void restoreScalarOps(RewriterBase &rewriter, Operation *root) {
  SmallVector<Operation *> hidden;
  root->walk([&](Operation *op) {
    if (op->getName().getStringRef() == kHiddenOp)
      hidden.push_back(op);
  });
  for (Operation *op : hidden) {
    OperationState state(op->getLoc(),
                         op->getAttrOfType<StringAttr>("name").getValue());
    state.addOperands(op->getOperands());
    state.addTypes(op->getResultTypes());
    state.propertiesAttr = op->getAttr("properties");
    state.addAttributes(
        op->getAttrOfType<DictionaryAttr>("attributes").getValue());
    rewriter.setInsertionPoint(op);
    Operation *restored = rewriter.create(state);
    rewriter.replaceOp(op, restored->getResults());
  }
}

/// True for a copy's read of global memory: a transfer read of a view of a
/// kernel argument (not a GPU kernel's workgroup attribution, also a block
/// argument) whose only use is a transfer write.
static bool isGlobalCopyRead(Operation *op) {
  auto read = dyn_cast<vector::TransferReadOp>(op);
  auto base = read ? dyn_cast<MemrefValue>(read.getBase()) : MemrefValue();
  if (!base || !read->hasOneUse() ||
      !isa<vector::TransferWriteOp>(*read->user_begin()))
    return false;
  MemrefValue source = memref::skipViewLikeOps(base);
  auto type = dyn_cast<MemRefType>(source.getType());
  return isa<BlockArgument>(source) && type && !dyncc::isWorkgroupMemory(type);
}

/// Vectorizes each product of `ops` (transfer reads of its tiles, one
/// `vector.contract`, a transfer write), erasing it, then folds within
/// `root`: the operands' extensions into the contraction (f16 operands
/// accumulating in f32), reductions of products into contractions, and
/// subviews into the transfers' indices, so the accumulator's transfers
/// address the shared buffer itself and can be hoisted; with the patterns
/// `addPatterns` adds. `what` names the code the products are bound for in
/// the error.
static LogicalResult
vectorizeProducts(Operation *root, ArrayRef<linalg::LinalgOp> ops,
                  StringRef what,
                  function_ref<void(RewritePatternSet &)> addPatterns) {
  MLIRContext *ctx = root->getContext();
  IRRewriter rewriter(ctx);
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::vectorize(rewriter, op, {}, {},
                                 /*vectorizeNDExtract=*/false,
                                 /*flatten1DDepthwiseConv=*/false,
                                 /*assumeDynamicDimsMatchVecSizes=*/false,
                                 /*createNamedContraction=*/true)))
      return op->emitOpError("could not be vectorized for ") << what;
    rewriter.eraseOp(op);
  }
  RewritePatternSet patterns(ctx);
  vector::populateFoldArithExtensionPatterns(patterns);
  vector::populateVectorReductionToContractPatterns(patterns);
  memref::populateFoldMemRefAliasOpPatterns(patterns);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
  vector::ContractionOp::getCanonicalizationPatterns(patterns, ctx);
  addPatterns(patterns);
  // The products' tiles are block buffers; a copy's reads of the kernel's
  // arguments (a host copy's chunks of global memory) are left as they are:
  // LLVM 22's expand_shape folder for transfer reads creates the source's
  // indices before it finds that it cannot fold a read through a view that
  // splits the innermost dimension (`[B, S, 768]` as `[B, S, 12, 64]`), and
  // fails, so the driver never converges on an in-bounds copy read of one.
  SmallVector<Operation *> rewritten;
  root->walk([&](Operation *op) {
    if (!isGlobalCopyRead(op))
      rewritten.push_back(op);
  });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  return applyOpPatternsGreedily(rewritten, std::move(patterns), config);
}

/// The k-chunk a thread's product unrolls to: 4 (a 16-byte f32 vector of A
/// and of B per row), or the largest of 2 and 1 that divides the step's K.
static int64_t getRegisterKChunk(int64_t k) {
  for (int64_t chunk : {4, 2})
    if (k % chunk == 0)
      return chunk;
  return 1;
}

/// The native shape of `op` in a thread's product: the contraction keeps
/// its output whole and unrolls K one step at a time; reads and writes of
/// tiles become rows (a vector along the innermost dimension), as long as
/// a K chunk where that dimension is K. Records nothing for other ops.
static std::optional<SmallVector<int64_t>>
getRegisterNativeShape(Operation *op) {
  if (auto contract = dyn_cast<vector::ContractionOp>(op)) {
    SmallVector<int64_t> bounds;
    contract.getIterationBounds(bounds);
    // One k at a time: an outer product of a column of A and a row of B
    // (FMAs), whatever the operands' layouts (a transposed B along K would
    // otherwise become dot products).
    for (auto [i, type] : llvm::enumerate(contract.getIteratorTypesArray()))
      if (type == vector::IteratorType::reduction)
        bounds[i] = 1;
    return bounds;
  }
  if (auto shape = op->getAttrOfType<DenseI64ArrayAttr>(kNativeAttr))
    return SmallVector<int64_t>(shape.asArrayRef());
  return std::nullopt;
}

/// Records on each transfer of a thread's product its native shape (see
/// getRegisterNativeShape): rows, and K chunks along K.
static void markRegisterNativeShapes(Operation *root) {
  root->walk([&](VectorTransferOpInterface transfer) {
    VectorType type = transfer.getVectorType();
    if (type.getRank() == 0)
      return;
    SmallVector<int64_t> shape(type.getRank(), 1);
    shape.back() = type.getShape().back();
    if (auto read = dyn_cast<vector::TransferReadOp>(transfer.getOperation()))
      for (Operation *user : read->getUsers()) {
        auto use = getContractionOperand(read.getResult(), user);
        if (!use || use->second == 2)
          continue;
        auto [contract, position] = *use;
        AffineMap map = contract.getIndexingMapsArray()[position];
        unsigned dim =
            cast<AffineDimExpr>(map.getResults().back()).getPosition();
        if (contract.getIteratorTypesArray()[dim] ==
            vector::IteratorType::reduction)
          shape.back() = getRegisterKChunk(shape.back());
        break;
      }
    transfer->setAttr(kNativeAttr,
                      DenseI64ArrayAttr::get(root->getContext(), shape));
  });
}

/// The largest power of two known to divide `value`, up to 2^20: from
/// constants, sums, products and affine maps of them (a thread's offset is
/// `tid * size + constant`); 1 where nothing is known.
static int64_t getKnownDivisor(Value value, int depth = 0) {
  constexpr int64_t kMax = int64_t{1} << 20;
  auto powerOfTwo = [kMax](int64_t v) {
    return v == 0 ? kMax
                  : std::min<int64_t>(kMax, int64_t{1}
                                                << llvm::countr_zero(
                                                       static_cast<uint64_t>(
                                                           std::abs(v))));
  };
  if (std::optional<int64_t> c = getConstantIntValue(value))
    return powerOfTwo(*c);
  Operation *def = value.getDefiningOp();
  if (!def || depth > 8)
    return 1;
  if (auto add = dyn_cast<arith::AddIOp>(def))
    return std::min(getKnownDivisor(add.getLhs(), depth + 1),
                    getKnownDivisor(add.getRhs(), depth + 1));
  if (auto mul = dyn_cast<arith::MulIOp>(def))
    return std::min(kMax, getKnownDivisor(mul.getLhs(), depth + 1) *
                              getKnownDivisor(mul.getRhs(), depth + 1));
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    // Each operand as its known divisor times an unknown.
    AffineMap map = apply.getAffineMap();
    SmallVector<AffineExpr> dims, syms;
    MLIRContext *ctx = def->getContext();
    for (unsigned i = 0; i < map.getNumDims(); ++i)
      dims.push_back(getAffineDimExpr(i, ctx) *
                     getKnownDivisor(apply.getOperand(i), depth + 1));
    for (unsigned i = 0; i < map.getNumSymbols(); ++i)
      syms.push_back(
          getAffineSymbolExpr(i, ctx) *
          getKnownDivisor(apply.getOperand(map.getNumDims() + i), depth + 1));
    AffineExpr expr = map.getResult(0).replaceDimsAndSymbols(dims, syms);
    return powerOfTwo(expr.getLargestKnownDivisor());
  }
  return 1;
}

/// The alignment in bytes of a 1-D in-bounds transfer along the innermost
/// dimension of a shared buffer (with static strides), as far as its
/// indices prove it: at most the vector's size, 16 and the buffer's own.
static std::optional<int64_t> getSharedAlignment(VectorTransferOpInterface op) {
  auto memref = dyn_cast<MemRefType>(op.getShapedType());
  VectorType vector = op.getVectorType();
  // GPU shared memory is a 16-byte aligned workgroup attribution; the host
  // CPU's is a block task's stack buffer, aligned as its alloca says.
  int64_t baseAlign = 16;
  if (memref && !dyncc::isWorkgroupMemory(memref)) {
    auto alloca = op.getBase().getDefiningOp<memref::AllocaOp>();
    baseAlign = alloca && alloca.getAlignment()
                    ? std::min<int64_t>(16, *alloca.getAlignment())
                    : 0;
  }
  if (!memref || baseAlign == 0 || vector.getRank() != 1 ||
      op.getMask() || !op.getPermutationMap().isMinorIdentity() ||
      !llvm::all_of(op.getInBoundsValues(), [](bool b) { return b; }))
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1 || ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  unsigned bits = vector.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  int64_t elementBytes = bits / 8;
  int64_t bytes = vector.getNumElements() * elementBytes;
  int64_t align = std::min<int64_t>(baseAlign, bytes);
  if (!llvm::isPowerOf2_64(align))
    align = elementBytes;
  auto fit = [&](int64_t divisorBytes) {
    while (align > elementBytes && divisorBytes % align != 0)
      align /= 2;
  };
  fit(offset == 0 ? 16 : offset * elementBytes);
  for (auto [index, stride] : llvm::zip(op.getIndices(), strides))
    fit(getKnownDivisor(index) * stride * elementBytes);
  return align;
}

/// Turns the products marked `dyncc.register_tile` (a thread's product of
/// static shared tiles, inside the block's k-step loop) into register code:
/// vectorized, the accumulator's rows iteration arguments of the k-step
/// loop, K unrolled in chunks, the contraction lowered to FMAs by outer
/// products, and the tiles' rows read and written as aligned vector loads
/// and stores of shared memory.
static LogicalResult lowerRegisterTiles(Operation *root,
                                        ArrayRef<linalg::LinalgOp> ops) {
  MLIRContext *ctx = root->getContext();
  IRRewriter rewriter(ctx);
  for (linalg::LinalgOp op : ops)
    if (!op.hasPureBufferSemantics() || op.hasDynamicShape())
      return op->emitOpError("register tile must be static and bufferized");
  // A generic's reads come broadcast into the iteration space (a
  // permutation map with broadcast dimensions): as plain reads and
  // broadcasts, which fold into the contraction's maps.
  auto lowerPermutationMaps = [](RewritePatternSet &patterns) {
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  };
  if (failed(vectorizeProducts(root, ops, "registers", lowerPermutationMaps)))
    return failure();
  // Rows and K chunks.
  markRegisterNativeShapes(root);
  {
    RewritePatternSet patterns(ctx);
    vector::populateVectorUnrollPatterns(
        patterns, vector::UnrollVectorOptions().setNativeShapeFn(
                      getRegisterNativeShape));
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return failure();
  }
  root->walk([](VectorTransferOpInterface op) {
    op->removeAttr(kNativeAttr);
  });
  // Rows of one dimension: the reads' and writes' leading unit dimension
  // dropped, so what a k-step loop carries is 1-D.
  {
    RewritePatternSet patterns(ctx);
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::ExtractOp::getCanonicalizationPatterns(patterns, ctx);
    vector::InsertOp::getCanonicalizationPatterns(patterns, ctx);
    vector::BroadcastOp::getCanonicalizationPatterns(patterns, ctx);
    vector::ShapeCastOp::getCanonicalizationPatterns(patterns, ctx);
    // Not on transfers that may be out of bounds (a chunked copy's reads of
    // global memory on the CPU): dropping a unit dimension that may be out
    // of bounds would read past the extents instead of the padding.
    SmallVector<Operation *> ops;
    root->walk([&](Operation *op) {
      auto transfer = dyn_cast<VectorTransferOpInterface>(op);
      if (!transfer || !transfer.hasOutOfBoundsDim())
        ops.push_back(op);
    });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      return failure();
  }
  // The accumulator's rows in registers across k-steps.
  hoistAccumulatorsInLoops(rewriter, root);
  // FMAs by outer products, on 1-D vectors.
  {
    RewritePatternSet patterns(ctx);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return failure();
  }
  // Shape casts between unit-dimension forms of one vector (a column of a
  // transposed B gathered for an outer product) become element moves,
  // which fold: no vector of rank 2 or more is left for the GPU's partial
  // vector-to-LLVM conversion.
  {
    RewritePatternSet patterns(ctx);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::ExtractOp::getCanonicalizationPatterns(patterns, ctx);
    vector::InsertOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return failure();
  }
  // What is left of a product is an error; its rows (and any other row of
  // a shared tile) become aligned vector loads and stores. Other transfers
  // (a chunked copy's masked reads of global memory, on the CPU) stay.
  WalkResult left = root->walk([](vector::ContractionOp op) {
    op->emitOpError("left over from a thread's product: not lowered to FMAs");
    return WalkResult::interrupt();
  });
  if (left.wasInterrupted())
    return failure();
  SmallVector<VectorTransferOpInterface> transfers;
  root->walk([&](VectorTransferOpInterface op) { transfers.push_back(op); });
  for (VectorTransferOpInterface op : transfers) {
    if (std::optional<int64_t> alignment = getSharedAlignment(op))
      dyncc::replaceWithAlignedAccess(rewriter, op, *alignment);
  }
  return success();
}

/// bf16 on tensor cores. Upstream's conversion to mma.sync knows the
/// fragment layouts of f16 but not of bf16, and nvgpu.mma.sync has no bf16
/// lowering; a bf16 fragment is laid out as an f16 one (both 16-bit, PTX's
/// m16n8k16 `.f16`/`.bf16` layouts are the same). So the contractions are
/// converted as f16 ones over f16 aliases of their bf16 tiles (an
/// unrealized cast marked with this attribute); then each load through an
/// alias loads the bf16 bits and bitcasts them, and each mma.sync becomes
/// NVVM's bf16 mma.sync on the same registers.
constexpr llvm::StringLiteral kHalfAliasAttr = "dyncc.bf16_as_f16";

static LogicalResult aliasBf16AsF16(RewriterBase &rewriter, Operation *root) {
  SmallVector<vector::ContractionOp> contracts;
  root->walk([&](vector::ContractionOp op) {
    if (getElementTypeOrSelf(op.getLhsType()).isBF16())
      contracts.push_back(op);
  });
  Type f16 = rewriter.getF16Type();
  DenseMap<Value, Value> aliases;
  DenseMap<Operation *, Value> reads;
  auto getAlias = [&](Value memref) -> Value {
    if (Value alias = aliases.lookup(memref))
      return alias;
    auto type = cast<MemRefType>(memref.getType());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfterValue(memref);
    auto cast = UnrealizedConversionCastOp::create(
        rewriter, memref.getLoc(),
        TypeRange{MemRefType::get(type.getShape(), f16, type.getLayout(),
                                  type.getMemorySpace())},
        ValueRange{memref});
    cast->setAttr(kHalfAliasAttr, rewriter.getUnitAttr());
    return aliases[memref] = cast.getResult(0);
  };
  auto getHalfRead = [&](Value operand) -> Value {
    auto read = operand.getDefiningOp<vector::TransferReadOp>();
    if (!read || !isa<MemRefType>(read.getBase().getType()))
      return Value();
    if (Value half = reads.lookup(read))
      return half;
    Value base = getAlias(read.getBase());
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(read);
    Value padding = arith::BitcastOp::create(rewriter, read.getLoc(), f16,
                                             read.getPadding());
    auto half = vector::TransferReadOp::create(
        rewriter, read.getLoc(),
        VectorType::get(read.getVectorType().getShape(), f16), base,
        read.getIndices(), read.getPermutationMapAttr(), padding,
        read.getMask(), read.getInBoundsAttr());
    return reads[read] = half.getResult();
  };
  for (vector::ContractionOp op : contracts) {
    Value lhs = getHalfRead(op.getLhs()), rhs = getHalfRead(op.getRhs());
    if (!lhs || !rhs)
      return op.emitOpError("has a bf16 operand that is not a transfer read "
                            "of a tile in memory");
    rewriter.setInsertionPoint(op);
    rewriter.replaceOpWithNewOp<vector::ContractionOp>(
        op, lhs, rhs, op.getAcc(), op.getIndexingMaps(), op.getIteratorTypes(),
        op.getKind());
  }
  for (auto &entry : reads)
    if (entry.first->use_empty())
      rewriter.eraseOp(entry.first);
  return success();
}

/// After the conversion: the loads through aliases load bf16.
static LogicalResult loadBf16ThroughAliases(RewriterBase &rewriter,
                                            Operation *root) {
  SmallVector<UnrealizedConversionCastOp> casts;
  root->walk([&](UnrealizedConversionCastOp op) {
    if (op->hasAttr(kHalfAliasAttr))
      casts.push_back(op);
  });
  for (UnrealizedConversionCastOp cast : casts) {
    Value memref = cast.getInputs().front();
    Type bf16 = getElementTypeOrSelf(memref.getType());
    for (Operation *user : llvm::make_early_inc_range(cast->getUsers())) {
      rewriter.setInsertionPoint(user);
      Location loc = user->getLoc();
      Value loaded;
      if (auto load = dyn_cast<nvgpu::LdMatrixOp>(user)) {
        loaded = nvgpu::LdMatrixOp::create(
            rewriter, loc,
            VectorType::get(load.getRes().getType().getShape(), bf16), memref,
            load.getIndices(), load.getTranspose(), load.getNumTiles());
      } else if (auto load = dyn_cast<memref::LoadOp>(user)) {
        loaded = memref::LoadOp::create(rewriter, loc, memref,
                                        load.getIndices());
      } else if (auto load = dyn_cast<vector::LoadOp>(user)) {
        loaded = vector::LoadOp::create(
            rewriter, loc,
            VectorType::get(load.getVectorType().getShape(), bf16), memref,
            load.getIndices());
      } else {
        return user->emitOpError("reads a bf16 tile as f16: not converted "
                                 "to a load of the tile");
      }
      rewriter.replaceOpWithNewOp<arith::BitcastOp>(
          user, user->getResult(0).getType(), loaded);
    }
    rewriter.eraseOp(cast);
  }
  return success();
}

/// NVVM's bf16 mma.sync for each `nvgpu.mma.sync` (whose f16 operands hold
/// bf16 bits): A and B as 32-bit registers of two elements, C and D as
/// nvgpu's f32 fragments, row by row.
static LogicalResult lowerBf16MmaSync(RewriterBase &rewriter,
                                      Operation *root) {
  SmallVector<nvgpu::MmaSyncOp> mmas;
  root->walk([&](nvgpu::MmaSyncOp op) { mmas.push_back(op); });
  for (nvgpu::MmaSyncOp op : mmas) {
    Location loc = op.getLoc();
    auto result = cast<VectorType>(op.getType());
    SmallVector<int64_t> shape = llvm::to_vector(op.getMmaShapeAsArray());
    if (shape != ArrayRef<int64_t>{16, 8, 16} ||
        result != VectorType::get({2, 2}, rewriter.getF32Type()))
      return op.emitOpError("is not an m16n8k16 product into f32: no bf16 "
                            "lowering");
    rewriter.setInsertionPoint(op);
    auto words = [&](Value fragments) {
      SmallVector<Value> regs;
      auto type = cast<VectorType>(fragments.getType());
      auto word = VectorType::get({1}, rewriter.getI32Type());
      for (int64_t i = 0; i < type.getDimSize(0); ++i) {
        Value pair = vector::ExtractOp::create(rewriter, loc, fragments, i);
        Value cast = vector::BitCastOp::create(rewriter, loc, word, pair);
        regs.push_back(vector::ExtractOp::create(rewriter, loc, cast, 0));
      }
      return regs;
    };
    SmallVector<Value> a = words(op.getMatrixA()), b = words(op.getMatrixB());
    SmallVector<Value> c;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        c.push_back(vector::ExtractOp::create(rewriter, loc, op.getMatrixC(),
                                              ArrayRef<int64_t>{i, j}));
    Type f32 = rewriter.getF32Type();
    auto structType = LLVM::LLVMStructType::getLiteral(
        rewriter.getContext(), SmallVector<Type>(4, f32));
    auto mma = NVVM::MmaOp::create(
        rewriter, loc, structType, a, b, c, shape, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> d;
    for (int64_t i = 0; i < 4; ++i)
      d.push_back(LLVM::ExtractValueOp::create(rewriter, loc, mma, i));
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, result, d);
  }
  return success();
}

struct VectorizeMma final : ::dyncc::impl::VectorizeMmaPassBase<VectorizeMma> {
  using Base::Base;

  /// Every canonicalization pattern, gathered once for all kernels.
  FrozenRewritePatternSet canonicalization;

  LogicalResult initialize(MLIRContext *ctx) override {
    canonicalization = dyncc::getAllCanonicalizationPatterns(ctx);
    return success();
  }

  void runOnOperation() override {
    Operation *root = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::LinalgOp> warpOps, threadOps;
    root->walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kMmaAttrName))
        warpOps.push_back(op);
      else if (op->hasAttr(kRegisterTileAttrName))
        threadOps.push_back(op);
    });
    if (failed(dyncc::verifyTargetOption(root, target)))
      return signalPassFailure();
    if (!threadOps.empty() && failed(lowerRegisterTiles(root, threadOps)))
      return signalPassFailure();
    if (warpOps.empty() || target == "cpu")
      return;
    SmallVector<int64_t> mma;
    Type operandType;
    for (linalg::LinalgOp op : warpOps) {
      auto shape = dyn_cast<DenseI64ArrayAttr>(op->getAttr(kMmaAttrName));
      if (!shape || shape.size() != 3 ||
          (!mma.empty() && mma != shape.asArrayRef())) {
        op->emitOpError("has a malformed or inconsistent ") << kMmaAttrName;
        return signalPassFailure();
      }
      mma.assign(shape.asArrayRef().begin(), shape.asArrayRef().end());
      if (!op.hasPureBufferSemantics() || op.hasDynamicShape()) {
        op->emitOpError("warp tile for mma.sync must be static and bufferized");
        return signalPassFailure();
      }
      Type operand = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
      if (!isa<Float16Type, BFloat16Type>(operand) ||
          (operandType && operand != operandType)) {
        op->emitOpError("warp tile for mma.sync takes f16 or bf16 operands, "
                        "one type per kernel");
        return signalPassFailure();
      }
      operandType = operand;
    }
    bool bf16 = operandType.isBF16();

    // 1. Vectorize: transfer reads, a vector.contract, a transfer write.
    auto castAwayUnitDims = [](RewritePatternSet &patterns) {
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    };
    if (failed(vectorizeProducts(root, warpOps, "mma.sync", castAwayUnitDims)))
      return signalPassFailure();
    IRRewriter rewriter(ctx);
    // 2. Unroll to the instruction shape.
    markNativeReads(root, mma);
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorUnrollPatterns(
          patterns,
          vector::UnrollVectorOptions().setNativeShapeFn(
              [mma](Operation *op) { return getNativeShape(op, mma); }));
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      if (failed(applyPatternsGreedily(root, std::move(patterns))))
        return signalPassFailure();
    }
    // 3. The accumulator in registers across k-steps, one
    // fragment per iteration argument.
    root->walk(
        [](vector::TransferReadOp read) { read->removeAttr(kNativeAttr); });
    hoistAccumulatorsInLoops(rewriter, root);

    // 4. nvgpu: ldmatrix, mma.sync, per-lane accumulator loads and stores.
    {
      RewritePatternSet patterns(ctx);
      populatePrepareVectorToMMAPatterns(patterns, /*useNvGpu=*/true);
      if (failed(applyPatternsGreedily(root, std::move(patterns))))
        return signalPassFailure();
    }
    // The B fragments each of a warp's M tiles reads are the same reads.
    {
      DominanceInfo dominance(root);
      eliminateCommonSubExpressions(rewriter, dominance, root);
    }
    // bf16 products convert as f16 ones over aliases of their tiles.
    if (bf16 && failed(aliasBf16AsF16(rewriter, root)))
      return signalPassFailure();
    bool allowed = ctx->allowsUnregisteredDialects();
    ctx->allowUnregisteredDialects(true);
    hideScalarOps(rewriter, root);
    LogicalResult converted =
        convertVectorToNVVMCompatibleMMASync(rewriter, root);
    restoreScalarOps(rewriter, root);
    ctx->allowUnregisteredDialects(allowed);
    if (failed(converted))
      return signalPassFailure();
    // Canonicalization drops what the conversion replaced.
    if (failed(applyPatternsGreedily(root, canonicalization)))
      return signalPassFailure();
    if (bf16 && (failed(loadBf16ThroughAliases(rewriter, root)) ||
                 failed(lowerBf16MmaSync(rewriter, root))))
      return signalPassFailure();
    WalkResult left = root->walk([](Operation *op) {
      if (!isa<vector::ContractionOp, vector::MultiDimReductionOp,
               vector::TransferReadOp, vector::TransferWriteOp>(op))
        return WalkResult::advance();
      op->emitOpError("left over from a warp's product: not converted to "
                      "ldmatrix and mma.sync");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      return signalPassFailure();
  }
};

} // namespace
