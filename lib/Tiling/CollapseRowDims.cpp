//===- CollapseRowDims.cpp - Reductions over several axes as rows ---------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A LayerNorm over [C, H, W], an InstanceNorm's statistics over [H, W], or a
// mean over the last two axes of an intermediate reduce several trailing
// loops. The tile search and code generation know rows: one reduction loop,
// innermost, a warp or a block per row. This pass rewrites such a kernel to
// reduce rows: every op over the full space has its trailing loops
// collapsed into one, its operands collapsed alike, and the kernel's inputs
// collapsed and its results expanded back at its boundary only.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace dyncc {
#define GEN_PASS_DEF_COLLAPSEROWDIMSPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// The loops of a kernel's reductions: `kept` leading ones, then `reduced`
/// trailing ones.
struct RowLoops {
  unsigned kept = 0, reduced = 0;
};

} // namespace

/// The loops of `op` if it reduces its trailing loops only, writing the
/// others in order (a ReduceMean over the last axes, its keepdims result
/// collapsed by the lowering); nullopt otherwise.
static std::optional<RowLoops> getTrailingReduction(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  unsigned kept = llvm::count(iterators, utils::IteratorType::parallel);
  for (auto [i, type] : llvm::enumerate(iterators))
    if ((type == utils::IteratorType::parallel) != (i < kept))
      return std::nullopt;
  AffineMap init = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (init !=
      AffineMap::getMultiDimIdentityMap(iterators.size(), op->getContext())
          .getMajorSubMap(kept))
    return std::nullopt;
  return RowLoops{kept, static_cast<unsigned>(iterators.size()) - kept};
}

namespace {

/// How an operand of an op over the full space reads the reduced loops:
/// as `reduced` consecutive results, in order, from `first` (a row, which
/// collapses into one dimension), or as its last `reduced` results, unit
/// dimensions read at 0 (a statistic broadcast over the row, which
/// collapses into one unit dimension), or not at all (`first` < 0).
struct RowRead {
  int64_t first = -1;
  bool broadcast = false;
};

} // namespace

/// The RowRead of `operand`, read through `map` by an op of `rows`' loops;
/// failure where it reads them otherwise (transposed, some of them, or in
/// an expression).
static FailureOr<RowRead> getRowRead(AffineMap map, Value operand,
                                     RowLoops rows) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rank = map.getNumResults();
  int64_t reduced = rows.reduced;
  auto readsRow = [&](AffineExpr e) {
    return llvm::any_of(llvm::seq(rows.kept, rows.kept + rows.reduced),
                        [&](unsigned d) { return e.isFunctionOfDim(d); });
  };
  // A row: the k-th reduced loop at the k-th place from the first.
  RowRead read;
  int64_t dims = 0;
  bool inOrder = true;
  for (int64_t p = 0; p < rank; ++p) {
    AffineExpr e = map.getResult(p);
    if (!readsRow(e))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (dims == 0)
      read.first = p;
    inOrder = inOrder && dim && dim.getPosition() == rows.kept + dims &&
              p == read.first + dims;
    ++dims;
  }
  if (dims == reduced && inOrder)
    return read;
  // Else one value per row: its last `reduced` dimensions static units,
  // read at 0 or at a reduced loop (whose extent is then 1 too: a broadcast
  // keeps a dimension the image has as 1, `[1, C, 1, 1]` over `[1, C, 1,
  // W]`), and no other result reading the reduced loops. (A unit dimension
  // read at a kept loop is that loop's, not the row's: a statistic `[1, 1]`
  // of `[1, 1, H, W]`.)
  auto isUnitRead = [&](int64_t p) {
    if (type.getDimSize(p) != 1)
      return false;
    AffineExpr e = map.getResult(p);
    auto c = dyn_cast<AffineConstantExpr>(e);
    return (c && c.getValue() == 0) || (isa<AffineDimExpr>(e) && readsRow(e));
  };
  if (rank >= reduced &&
      llvm::all_of(llvm::seq(rank - reduced, rank), isUnitRead) &&
      llvm::none_of(llvm::seq<int64_t>(0, rank - reduced),
                    [&](int64_t p) { return readsRow(map.getResult(p)); }))
    return RowRead{rank - reduced, true};
  if (dims != 0)
    return failure();
  return RowRead{};
}

/// The reassociation collapsing `rank` dimensions' `count` from `first`.
static SmallVector<ReassociationIndices>
getRowGroups(int64_t rank, int64_t first, int64_t count) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank;) {
    if (d == first) {
      groups.push_back(llvm::to_vector(llvm::seq(first, first + count)));
      d += count;
    } else {
      groups.push_back({d++});
    }
  }
  return groups;
}

/// Whether `op`, of `rows`' loops in all, collapses its reduced loops:
/// they iterate alike, its body does not index them, and every operand
/// reads them as a RowRead.
static bool isCollapsible(linalg::LinalgOp op, RowLoops rows) {
  if (isa<linalg::FillOp>(op))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return false;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  if (llvm::any_of(
          ArrayRef(iterators).drop_front(rows.kept),
          [&](utils::IteratorType t) { return t != iterators.back(); }))
    return false;
  WalkResult indexes = generic.getRegion().walk([&](linalg::IndexOp index) {
    return index.getDim() >= rows.kept ? WalkResult::interrupt()
                                       : WalkResult::advance();
  });
  if (indexes.wasInterrupted())
    return false;
  for (OpOperand &operand : generic->getOpOperands()) {
    FailureOr<RowRead> read = getRowRead(
        generic.getMatchingIndexingMap(&operand), operand.get(), rows);
    // A destination is written along the whole space, a reduction's once
    // per row.
    bool reduction = iterators.back() == utils::IteratorType::reduction;
    if (failed(read) ||
        (generic.isDpsInit(&operand) &&
         (reduction ? read->first >= 0 : read->first < 0 || read->broadcast)))
      return false;
  }
  return true;
}

/// `op` (of `rows`' loops, isCollapsible) on its reduced loops collapsed
/// into one: its operands collapsed per their RowRead, its results expanded
/// back.
static void collapse(RewriterBase &rewriter, linalg::LinalgOp op,
                     RowLoops rows) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = op.getContext();
  auto collapseOperand = [&](Value value, AffineMap map, RowRead read,
                             SmallVector<ReassociationIndices> &groups,
                             AffineMap &newMap) -> Value {
    int64_t rank = map.getNumResults();
    SmallVector<AffineExpr> results;
    for (int64_t p = 0; p < rank; ++p) {
      if (read.first >= 0 && p > read.first &&
          p < read.first + static_cast<int64_t>(rows.reduced))
        continue;
      AffineExpr e = map.getResult(p);
      if (read.first >= 0 && p == read.first)
        e = read.broadcast ? getAffineConstantExpr(0, ctx)
                           : getAffineDimExpr(rows.kept, ctx);
      results.push_back(e);
    }
    newMap = AffineMap::get(rows.kept + 1, 0, results, ctx);
    groups = read.first < 0 ? getRowGroups(rank, rank, 0)
                            : getRowGroups(rank, read.first, rows.reduced);
    if (read.first < 0)
      return value;
    return tensor::CollapseShapeOp::create(rewriter, loc, value, groups);
  };
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation())) {
    auto rank =
        cast<RankedTensorType>(fill.getOutputs()[0].getType()).getRank();
    collapseFill(rewriter, fill,
                 getRowGroups(rank, rank - rows.reduced, rows.reduced));
    return;
  }
  auto generic = cast<linalg::GenericOp>(op.getOperation());
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> maps;
  SmallVector<SmallVector<ReassociationIndices>> initGroups;
  for (OpOperand &operand : generic->getOpOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    RowRead read = *getRowRead(map, operand.get(), rows);
    SmallVector<ReassociationIndices> groups;
    AffineMap newMap;
    Value value = collapseOperand(operand.get(), map, read, groups, newMap);
    maps.push_back(newMap);
    if (generic.isDpsInit(&operand)) {
      inits.push_back(value);
      initGroups.push_back(groups);
    } else {
      inputs.push_back(value);
    }
  }
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  iterators.resize(rows.kept + 1);
  auto collapsed =
      linalg::GenericOp::create(rewriter, loc, ValueRange(inits).getTypes(),
                                inputs, inits, maps, iterators);
  rewriter.inlineRegionBefore(generic.getRegion(), collapsed.getRegion(),
                              collapsed.getRegion().begin());
  SmallVector<Value> results;
  for (auto [result, init, groups] :
       llvm::zip(collapsed->getResults(), generic.getDpsInits(), initGroups))
    results.push_back(result.getType() == init.getType()
                          ? Value(result)
                          : Value(tensor::ExpandShapeOp::create(
                                rewriter, loc, init.getType(), result, groups,
                                tensor::getMixedSizes(rewriter, loc, init))));
  rewriter.replaceOp(generic, results);
}

/// Collapses kernel `func`'s reduced loops where every reduction over
/// several loops has the same RowLoops and every op over the full space is
/// isCollapsible; leaves it as it is otherwise.
static void collapseRows(func::FuncOp func) {
  Block &entry = func.getBody().front();
  std::optional<RowLoops> rows;
  for (Operation &op : entry) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp.getNumReductionLoops() == 0)
      continue;
    std::optional<RowLoops> loops = getTrailingReduction(&op);
    if (!loops)
      return;
    if (loops->reduced < 2)
      continue;
    if (rows && (rows->kept != loops->kept || rows->reduced != loops->reduced))
      return;
    rows = loops;
  }
  if (!rows)
    return;
  unsigned all = rows->kept + rows->reduced;
  SmallVector<linalg::LinalgOp> ops;
  for (Operation &op : entry) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    // Ops on the reduced shape (a mean's division, `1 / sqrt(var + eps)`),
    // and rows reduced already (a kernel argument's, collapsed by the
    // lowering), stay as they are.
    if (!linalgOp || linalgOp.getNumLoops() <= rows->kept + 1)
      continue;
    if (linalgOp.getNumLoops() != all || !isCollapsible(linalgOp, *rows))
      return;
    ops.push_back(linalgOp);
  }
  IRRewriter rewriter(func.getContext());
  for (linalg::LinalgOp op : ops)
    collapse(rewriter, op, *rows);
  foldKernelReshapes(func);
  // Each op collapsed its own view of an argument: one is enough. (Only
  // those views: a CSE would also merge the ops' empty destinations, and
  // two ops writing one tensor would not bufferize in place.)
  DenseMap<std::pair<Value, Attribute>, tensor::CollapseShapeOp> views;
  for (auto view :
       llvm::make_early_inc_range(entry.getOps<tensor::CollapseShapeOp>())) {
    if (!isa<BlockArgument>(view.getSrc()))
      continue;
    auto [it, inserted] =
        views.try_emplace({view.getSrc(), view.getReassociation()}, view);
    if (!inserted)
      rewriter.replaceOp(view, it->second.getResult());
  }
  func->setAttr(getFoldedRowsAttrName(), rewriter.getUnitAttr());
}

namespace {
struct CollapseRowDims final
    : ::dyncc::impl::CollapseRowDimsPassBase<CollapseRowDims> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (isKernelOfKind(func, "reduce"))
        collapseRows(func);
  }
};

} // namespace
