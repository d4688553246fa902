//===- RowReductions.cpp - Kernels whose reductions run along rows -------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/RowReductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/TilingInterface.h"

using namespace mlir;

/// True when `op` has reduction loops.
bool dyncc::hasReductionLoops(Operation *op) {
  auto tileable = dyn_cast<TilingInterface>(op);
  return tileable && llvm::is_contained(tileable.getLoopIteratorTypes(),
                                        utils::IteratorType::reduction);
}

/// The number of leading parallel loops of `op`, at most its first
/// destination's rank.
int64_t dyncc::getParallelRank(Operation *op) {
  int64_t rank = 0;
  for (utils::IteratorType t :
       cast<TilingInterface>(op).getLoopIteratorTypes()) {
    if (t != utils::IteratorType::parallel)
      break;
    ++rank;
  }
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    if (dps.getNumDpsInits() > 0)
      rank = std::min<int64_t>(
          rank, cast<ShapedType>(dps.getDpsInits()[0].getType()).getRank());
  return rank;
}

/// The op of a single-result reduction's body that folds each element into
/// the accumulator, if it is one op with a neutral element (add, mul, max,
/// min, and, or, xor); null otherwise.
Operation *dyncc::getReductionCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return nullptr;
  SmallVector<Operation *, 4> combiners;
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1 || !arith::getNeutralElement(combiners[0]))
    return nullptr;
  return combiners[0];
}

/// The map of `n` loops to the first `n - 1`: a row reduction's result, or
/// one value per row read by an op whose last loop walks the row.
AffineMap dyncc::getRowsMap(unsigned n, MLIRContext *ctx) {
  SmallVector<AffineExpr> dims;
  for (unsigned i = 0; i + 1 < n; ++i)
    dims.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(n, 0, dims, ctx);
}

/// True if `op` reduces along rows: a generic whose only reduction loop is
/// its last, writing the other loops in order, with a combiner.
bool dyncc::isRowReduction(Operation *op, bool columns) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !getReductionCombiner(generic))
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  unsigned n = iterators.size();
  if (n < 2 || iterators.back() != utils::IteratorType::reduction ||
      llvm::count(iterators, utils::IteratorType::reduction) != 1)
    return false;
  // The row is contiguous: an operand that walks the reduction walks its
  // innermost dimension, so a warp's lanes read neighbouring elements. A
  // column reduction, whose reduced dimension is an outer one, keeps the
  // tile levels instead (a thread per column, neighbouring columns in
  // neighbouring threads), unless `columns`: a group of lanes per column,
  // neighbouring columns in neighbouring groups.
  AffineExpr row = getAffineDimExpr(n - 1, op->getContext());
  if (!columns)
    for (OpOperand *input : generic.getDpsInputOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(input);
      if (map.isFunctionOfDim(n - 1) &&
          (map.getNumResults() == 0 || map.getResults().back() != row))
        return false;
    }
  return generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)) ==
         getRowsMap(n, op->getContext());
}

/// True if `v` is computed from a linalg op of the kernel (an intermediate),
/// not only from its arguments and constants.
bool dyncc::dependsOnLinalg(Value v, unsigned depth) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return def != nullptr;
  if (isa<linalg::LinalgOp>(def))
    return true;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOnLinalg(operand, depth + 1);
  });
}

/// True if `root`'s kernel can take a warp or a block per row, setting
/// `rowRank` to the number of `root`'s loops that are rows: the kernel has
/// reductions, every one along rows (isRowReduction), and every value passed
/// from one op of the kernel to another keeps rows as rows (read whole by an
/// op of the same loops, or as one value per row by an op whose last loop
/// walks the row), so that tiled to single rows each reduction makes one
/// value. The reductions have as many loops as `root`, which is one of them,
/// whose accumulator starts at its combiner's neutral element, or an op of
/// parallel loops only; or one more loop (the row), and `root` is an
/// `epilogue` of parallel loops on the reduced shape (a mean's division).
bool dyncc::isRowReductionKernel(func::FuncOp func, Operation *root,
                                 int64_t &rowRank, bool &epilogue,
                                 bool columns) {
  auto rootOp = dyn_cast<linalg::LinalgOp>(root);
  if (!rootOp || root->getNumResults() != 1)
    return false;
  bool any = false;
  std::optional<unsigned> reductionLoops;
  for (Operation &op : func.getBody().front()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || isa<linalg::FillOp>(op))
      continue;
    bool reduces = hasReductionLoops(&op);
    // The reductions walk the root's loops, or the root is an epilogue on
    // the reduced shape (a mean's division): one more loop, the row.
    if (reduces) {
      unsigned loops = linalgOp.getNumLoops();
      if (!isRowReduction(&op, columns) ||
          (reductionLoops && *reductionLoops != loops) ||
          (loops != rootOp.getNumLoops() && loops != rootOp.getNumLoops() + 1))
        return false;
      reductionLoops = loops;
    }
    any |= reduces;
    unsigned n = linalgOp.getNumLoops();
    AffineMap identity = AffineMap::getMultiDimIdentityMap(n, op.getContext());
    AffineMap rows = getRowsMap(n, op.getContext());
    for (OpOperand &operand : op.getOpOperands()) {
      if (!dependsOnLinalg(operand.get()))
        continue;
      Operation *def = operand.get().getDefiningOp();
      if (!isa<linalg::LinalgOp>(def))
        return false;
      if (isa<linalg::FillOp>(def) && linalgOp.isDpsInit(&operand))
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      // A column kernel's whole-space values keep the reduced axis where
      // the tensors have it: its ops read them through a permutation (the
      // root's loops with the column moved last, TileAndFuse), each element
      // still its own row's.
      if (map != identity && map != rows && !(columns && map.isPermutation()))
        return false;
    }
  }
  if (!any)
    return false;
  int64_t parallel = getParallelRank(root);
  epilogue = *reductionLoops == rootOp.getNumLoops() + 1;
  if (epilogue) {
    // One value per row, from the rows' reductions.
    if (hasReductionLoops(root) ||
        parallel != static_cast<int64_t>(rootOp.getNumLoops()))
      return false;
    rowRank = parallel;
  } else if (hasReductionLoops(root)) {
    // Its lanes' partials are merged with nothing else.
    auto fill =
        rootOp.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    Operation *combiner = getReductionCombiner(cast<linalg::GenericOp>(root));
    std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
    Attribute value;
    if (!fill || !neutral ||
        !matchPattern(fill.getInputs()[0], m_Constant(&value)) ||
        value != *neutral)
      return false;
    rowRank = parallel;
  } else {
    if (parallel != static_cast<int64_t>(rootOp.getNumLoops()))
      return false;
    rowRank = parallel - 1;
  }
  return rowRank >= 1;
}
