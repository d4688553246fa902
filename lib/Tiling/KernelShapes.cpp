//===- KernelShapes.cpp - A kernel's extents over its arguments -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/RowReductions.h"
#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace dyncc;

FailureOr<DimExpr> dyncc::getKernelDimExpr(Value tensor, int64_t d,
                                           Block &entry, unsigned depth) {
  auto type = dyn_cast<ShapedType>(tensor.getType());
  if (!type || d >= type.getRank())
    return failure();
  if (!type.isDynamicDim(d))
    return DimExpr(type.getDimSize(d));
  if (auto arg = dyn_cast<BlockArgument>(tensor)) {
    if (arg.getOwner() != &entry)
      return failure();
    return DimExpr::symbol(getGridArgName(arg.getArgNumber(), d));
  }
  Operation *def = tensor.getDefiningOp();
  if (auto empty = dyn_cast<tensor::EmptyOp>(def))
    return getKernelExtentExpr(empty.getMixedSizes()[d], entry, depth + 1);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(def))
    return getKernelDimExpr(dps.getTiedOpOperand(cast<OpResult>(tensor))->get(), d,
                      entry, depth + 1);
  if (auto pad = dyn_cast<tensor::PadOp>(def)) {
    FailureOr<DimExpr> src = getKernelDimExpr(pad.getSource(), d, entry, depth + 1);
    FailureOr<DimExpr> low =
        getKernelExtentExpr(pad.getMixedLowPad()[d], entry, depth + 1);
    FailureOr<DimExpr> high =
        getKernelExtentExpr(pad.getMixedHighPad()[d], entry, depth + 1);
    if (failed(src) || failed(low) || failed(high))
      return failure();
    return *src + *low + *high;
  }
  if (auto cast = dyn_cast<tensor::CastOp>(def))
    return getKernelDimExpr(cast.getSource(), d, entry, depth + 1);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
    return getKernelExtentExpr(expand.getMixedOutputShape()[d], entry, depth + 1);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def)) {
    // The reassociation is a temporary: keep it alive through the loop.
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    DimExpr product(1);
    for (int64_t src : groups[d]) {
      FailureOr<DimExpr> e =
          getKernelDimExpr(collapse.getSrc(), src, entry, depth + 1);
      if (failed(e))
        return failure();
      product = product * *e;
    }
    return product;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    int64_t seen = -1;
    for (auto [i, size] : llvm::enumerate(slice.getMixedSizes())) {
      if (dropped.test(i))
        continue;
      if (++seen == d)
        return getKernelExtentExpr(size, entry, depth + 1);
    }
  }
  return failure();
}

FailureOr<DimExpr> dyncc::getKernelExtentExpr(OpFoldResult ofr, Block &entry,
                                              unsigned depth) {
  if (depth > 32)
    return failure();
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return DimExpr(*c);
  Value v = cast<Value>(ofr);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != &entry || !arg.getType().isIndex())
      return failure();
    return DimExpr::symbol(getGridArgName(arg.getArgNumber(), std::nullopt));
  }
  Operation *def = v.getDefiningOp();
  if (auto dim = dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!d)
      return failure();
    return getKernelDimExpr(dim.getSource(), *d, entry, depth + 1);
  }
  if (auto apply = dyn_cast<affine::AffineApplyOp>(def)) {
    AffineMap map = apply.getAffineMap();
    SmallVector<DimExpr> operands;
    for (Value operand : apply.getOperands()) {
      FailureOr<DimExpr> e = getKernelExtentExpr(operand, entry, depth + 1);
      if (failed(e))
        return failure();
      operands.push_back(*e);
    }
    // Evaluate the affine expression over DimExprs.
    std::function<FailureOr<DimExpr>(AffineExpr)> eval =
        [&](AffineExpr e) -> FailureOr<DimExpr> {
      if (auto c = dyn_cast<AffineConstantExpr>(e))
        return DimExpr(c.getValue());
      if (auto dimE = dyn_cast<AffineDimExpr>(e))
        return operands[dimE.getPosition()];
      if (auto symE = dyn_cast<AffineSymbolExpr>(e))
        return operands[map.getNumDims() + symE.getPosition()];
      auto bin = cast<AffineBinaryOpExpr>(e);
      FailureOr<DimExpr> l = eval(bin.getLHS()), r = eval(bin.getRHS());
      if (failed(l) || failed(r))
        return failure();
      switch (e.getKind()) {
      case AffineExprKind::Add:
        return *l + *r;
      case AffineExprKind::Mul:
        return *l * *r;
      case AffineExprKind::FloorDiv:
        return DimExpr::floorDiv(*l, *r);
      case AffineExprKind::CeilDiv:
        return DimExpr::ceilDiv(*l, *r);
      case AffineExprKind::Mod:
        return DimExpr::mod(*l, *r);
      default:
        return failure();
      }
    };
    if (map.getNumResults() != 1)
      return failure();
    return eval(map.getResult(0));
  }
  auto binary = [&](Value a, Value b, auto fn) -> FailureOr<DimExpr> {
    FailureOr<DimExpr> l = getKernelExtentExpr(a, entry, depth + 1);
    FailureOr<DimExpr> r = getKernelExtentExpr(b, entry, depth + 1);
    if (failed(l) || failed(r))
      return failure();
    return fn(*l, *r);
  };
  if (auto op = dyn_cast<arith::AddIOp>(def))
    return binary(op.getLhs(), op.getRhs(),
                  [](const DimExpr &l, const DimExpr &r) { return l + r; });
  if (auto op = dyn_cast<arith::SubIOp>(def))
    return binary(op.getLhs(), op.getRhs(),
                  [](const DimExpr &l, const DimExpr &r) { return l - r; });
  if (auto op = dyn_cast<arith::MulIOp>(def))
    return binary(op.getLhs(), op.getRhs(),
                  [](const DimExpr &l, const DimExpr &r) { return l * r; });
  if (auto op = dyn_cast<arith::DivUIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::floorDiv);
  if (auto op = dyn_cast<arith::DivSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::floorDiv);
  if (auto op = dyn_cast<arith::FloorDivSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::floorDiv);
  if (auto op = dyn_cast<arith::CeilDivUIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::ceilDiv);
  if (auto op = dyn_cast<arith::CeilDivSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::ceilDiv);
  if (auto op = dyn_cast<arith::MaxSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::max);
  if (auto op = dyn_cast<arith::MinSIOp>(def))
    return binary(op.getLhs(), op.getRhs(), DimExpr::min);
  return failure();
}

/// The extent of `op`'s loop `loop`: a dimension of an operand it indexes.
static FailureOr<DimExpr> getLoopExtent(linalg::LinalgOp op, unsigned loop,
                                        Block &entry) {
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim || dim.getPosition() != loop)
        continue;
      FailureOr<DimExpr> extent = getKernelDimExpr(operand.get(), i, entry);
      if (succeeded(extent))
        return extent;
    }
  }
  return failure();
}

/// The bytes of `type`'s elements (0 for a type without a width).
static int64_t getElementBytes(Type type) {
  Type element = getElementTypeOrSelf(type);
  return element.isIntOrFloat() ? (element.getIntOrFloatBitWidth() + 7) / 8
                                : 0;
}

/// Per output dimension of contraction `op`, its place in the GEMM view
/// (ProductLayout::viewDims): with `byOperands`, N is the innermost output
/// dimension that only B indexes, M the innermost that only A does, the
/// others the batch in order; a product whose loops cannot be told apart so
/// (no such N or M), or any without `byOperands` (a conv's, whose config is
/// its output's), takes its last two output dimensions. Empty for an output
/// map that is not a projected permutation of rank 2 or more.
static SmallVector<int64_t> getViewPlaces(linalg::LinalgOp op,
                                          bool byOperands) {
  if (op.getNumDpsInits() != 1)
    return {};
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  int64_t rank = out.getNumResults();
  if (rank < 2 || !out.isProjectedPermutation())
    return {};
  int64_t m = rank - 2, n = rank - 1;
  FailureOr<linalg::ContractionDimensions> dims =
      byOperands ? linalg::inferContractionDims(op)
                 : FailureOr<linalg::ContractionDimensions>(failure());
  if (succeeded(dims)) {
    int64_t lastM = -1, lastN = -1;
    for (int64_t r = 0; r < rank; ++r) {
      unsigned loop = out.getDimPosition(r);
      if (llvm::is_contained(dims->m, loop))
        lastM = r;
      if (llvm::is_contained(dims->n, loop))
        lastN = r;
    }
    if (lastM >= 0 && lastN >= 0) {
      m = lastM;
      n = lastN;
    }
  }
  SmallVector<int64_t> places(rank);
  int64_t next = 0;
  for (int64_t r = 0; r < rank; ++r)
    places[r] = r == m ? rank - 2 : r == n ? rank - 1 : next++;
  return places;
}

/// The problem of contraction `op` of a kernel (`entry` its entry block),
/// with no products or split yet.
static FailureOr<GemmProblemExprs> getContractionProblem(linalg::LinalgOp op,
                                                         Block &entry) {
  if (op.getNumDpsInputs() != 2)
    return failure();
  SmallVector<int64_t> places = getViewPlaces(op, /*byOperands=*/true);
  if (places.empty())
    return failure();
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  auto extentOf = [&](unsigned loop) {
    return getLoopExtent(op, loop, entry);
  };
  GemmProblemExprs problem;
  problem.batch = DimExpr(1);
  problem.k = DimExpr(1);
  int64_t rank = places.size();
  for (int64_t r = 0; r < rank; ++r) {
    FailureOr<DimExpr> extent = extentOf(out.getDimPosition(r));
    if (failed(extent))
      return failure();
    if (places[r] == rank - 2)
      problem.m = *extent;
    else if (places[r] == rank - 1)
      problem.n = *extent;
    else
      problem.batch = problem.batch * *extent;
  }
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction)
      continue;
    FailureOr<DimExpr> extent = extentOf(loop);
    if (failed(extent))
      return failure();
    problem.k = problem.k * *extent;
  }
  problem.operandBytes = getElementBytes(op.getDpsInputs()[0].getType());
  if (problem.operandBytes == 0)
    return failure();
  Type lhs = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type rhs = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  problem.tensorCores =
      lhs == rhs && isa<Float16Type, BFloat16Type>(lhs) &&
      getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32();
  return problem;
}

bool dyncc::isKernelOfKind(func::FuncOp func, StringRef kind) {
  auto attr = func->getAttrOfType<StringAttr>("dyncc.kind");
  return func->hasAttr("dyncc.kernel") && attr && attr.getValue() == kind &&
         !func.isExternal();
}

FailureOr<GemmProblemExprs> dyncc::getGemmProblem(func::FuncOp kernel) {
  if (kernel.isExternal() || kernel.getNumResults() == 0)
    return failure();
  Block &entry = kernel.getBody().front();
  SmallVector<linalg::LinalgOp> contractions;
  kernel.walk([&](linalg::LinalgOp op) {
    if (linalg::isaContractionOpInterface(op))
      contractions.push_back(op);
  });
  if (contractions.empty())
    return failure();
  // The layout of the root carrying each contraction, where one does.
  DenseMap<Operation *, ProductLayout> layouts;
  for (Value result : entry.getTerminator()->getOperands())
    if (Operation *root = getReshapedSource(result).getDefiningOp())
      if (FailureOr<ProductLayout> layout =
              getProductLayout(root, /*byOperands=*/true);
          succeeded(layout))
        layouts.try_emplace(layout->product, *layout);
  // Several products: each has a root of its own.
  if (contractions.size() > 1 &&
      !llvm::all_of(contractions, [&](linalg::LinalgOp op) {
        return layouts.count(op);
      }))
    return failure();
  std::optional<GemmProblemExprs> problem;
  for (linalg::LinalgOp op : contractions) {
    FailureOr<GemmProblemExprs> own = getContractionProblem(op, entry);
    if (failed(own))
      return failure();
    auto layout = layouts.find(op);
    own->nSplit = layout == layouts.end() ? 0 : layout->second.nSplit;
    if (!problem) {
      problem = *own;
      continue;
    }
    // Another product of the same problem, reading nothing of the others.
    SetVector<Operation *> slice;
    if (failed(getBackwardSlice(op.getOperation(), &slice)) ||
        llvm::any_of(
            contractions,
            [&](linalg::LinalgOp other) { return slice.contains(other); }) ||
        own->batch != problem->batch || own->m != problem->m ||
        own->n != problem->n || own->k != problem->k ||
        own->operandBytes != problem->operandBytes ||
        own->nSplit != problem->nSplit ||
        own->tensorCores != problem->tensorCores)
      return failure();
    ++problem->products;
  }
  problem->outputBytes = getElementBytes(kernel.getResultTypes()[0]);
  if (problem->outputBytes == 0)
    return failure();
  return *problem;
}

bool ProductLayout::isIdentity() const {
  for (auto [i, d] : llvm::enumerate(viewDims))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

SmallVector<int64_t> ProductLayout::toRoot(ArrayRef<int64_t> viewSizes) const {
  SmallVector<int64_t> sizes;
  for (int64_t d : viewDims)
    sizes.push_back(viewSizes[d]);
  return sizes;
}

FailureOr<ProductLayout> dyncc::getProductLayout(Operation *root,
                                                  bool byOperands) {
  if (!root || root->getNumResults() != 1)
    return failure();
  Value value = root->getResult(0);
  auto rootType = dyn_cast<RankedTensorType>(value.getType());
  if (!rootType)
    return failure();
  int64_t rank = rootType.getRank();
  // dims[i]: what dimension i of `value` runs along: a root dimension, or,
  // below the expand, a reassociation group of the expand.
  SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  tensor::ExpandShapeOp expand;
  SmallVector<int64_t> expandedDims;
  auto carried = [&](linalg::LinalgOp op) -> OpOperand * {
    OpOperand *found = nullptr;
    for (OpOperand &operand : op->getOpOperands()) {
      if (op.isDpsInit(&operand) && !op.payloadUsesValueFromOperand(&operand))
        continue;
      Operation *def = operand.get().getDefiningOp();
      if (!isa_and_nonnull<linalg::LinalgOp, tensor::ExpandShapeOp>(def) ||
          isa<linalg::FillOp>(def) ||
          !op.getMatchingIndexingMap(&operand).isPermutation())
        continue;
      if (found)
        return nullptr;
      found = &operand;
    }
    return found;
  };
  Operation *op = root;
  while (true) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (linalgOp && linalg::isaContractionOpInterface(linalgOp)) {
      if (linalgOp.getNumDpsInits() != 1 ||
          linalgOp.getNumParallelLoops() != static_cast<unsigned>(dims.size()))
        return failure();
      break;
    }
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      // value[j] = input[perm[j]].
      SmallVector<int64_t> next(dims.size());
      for (auto [j, p] : llvm::enumerate(transpose.getPermutation()))
        next[p] = dims[j];
      dims = next;
      op = transpose.getInput().getDefiningOp();
    } else if (auto reshape = dyn_cast<tensor::ExpandShapeOp>(op)) {
      if (expand)
        return failure();
      expand = reshape;
      expandedDims = dims;
      dims = llvm::to_vector(llvm::seq<int64_t>(0, reshape.getSrcType().getRank()));
      op = reshape.getSrc().getDefiningOp();
    } else if (linalgOp && linalgOp.getNumReductionLoops() == 0 &&
               linalgOp.getNumDpsInits() == 1 &&
               linalgOp.getNumLoops() == dims.size() &&
               linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0))
                   .isIdentity()) {
      OpOperand *operand = carried(linalgOp);
      if (!operand)
        return failure();
      AffineMap map = linalgOp.getMatchingIndexingMap(operand);
      SmallVector<int64_t> next(dims.size());
      for (size_t i = 0; i < dims.size(); ++i)
        next[i] = dims[map.getDimPosition(i)];
      dims = next;
      op = operand->get().getDefiningOp();
    } else {
      return failure();
    }
    if (!op)
      return failure();
  }
  ProductLayout layout;
  layout.product = op;
  SmallVector<int64_t> places =
      getViewPlaces(cast<linalg::LinalgOp>(op), byOperands);
  int64_t r = dims.size();
  if (places.size() != dims.size())
    return failure();
  layout.viewDims.assign(rank, 0);
  if (!expand) {
    for (int64_t i = 0; i < r; ++i)
      layout.viewDims[dims[i]] = places[i];
    return layout;
  }
  // The product's dimension i is the expand's group dims[i]: M's and N's
  // last parts take the view's last two places, every other part (of
  // either, or of a batch group) a batch place, in order.
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  int64_t m = llvm::find(places, r - 2) - places.begin();
  int64_t n = llvm::find(places, r - 1) - places.begin();
  int64_t mLast = groups[dims[m]].back();
  int64_t nLast = groups[dims[n]].back();
  int64_t next = 0;
  for (int64_t e = 0; e < rank; ++e) {
    int64_t place = e == mLast ? rank - 2 : e == nLast ? rank - 1 : next++;
    layout.viewDims[expandedDims[e]] = place;
  }
  if (groups[dims[n]].size() > 1) {
    int64_t extent = expand.getResultType().getDimSize(nLast);
    if (ShapedType::isDynamic(extent))
      return failure();
    layout.nSplit = extent;
  }
  return layout;
}

Value dyncc::getReshapedSource(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto op = dyn_cast<tensor::ExpandShapeOp>(def))
      value = op.getSrc();
    else if (auto op = dyn_cast<tensor::CollapseShapeOp>(def))
      value = op.getSrc();
    else if (auto op = dyn_cast<tensor::CastOp>(def))
      value = op.getSource();
    else
      break;
  }
  return value;
}

static bool getLinearTerms(AffineExpr e, SmallVectorImpl<int64_t> &terms);

/// The most elements a window reduction's window may have (a pool's): each
/// thread folds its window alone.
static constexpr int64_t kLargestWindow = 4096;

/// True if `op` reduces sliding windows: a generic of one result whose
/// leading loops are parallel and write its result in order, and whose
/// reduction loops, the last ones, have static extents of at most
/// kLargestWindow elements in all and each slide with an output loop in
/// the first input's indexing (MaxPool's and AveragePool's). Sets `strides` to
/// the coefficient of each parallel loop where the first input's indexing adds
/// it to a reduction loop (a pool's strides), else 1.
static bool isWindowReduction(Operation *op,
                              SmallVectorImpl<int64_t> &strides) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return false;
  int64_t parallel = getParallelRank(op);
  unsigned n = generic.getNumLoops();
  if (parallel == 0 || generic.getNumReductionLoops() != n - parallel)
    return false;
  AffineMap result =
      generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (result.getNumResults() != parallel)
    return false;
  for (int64_t i = 0; i < parallel; ++i)
    if (result.getResult(i) != getAffineDimExpr(i, op->getContext()))
      return false;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  int64_t window = 1;
  for (unsigned loop = parallel; loop < n; ++loop) {
    if (ShapedType::isDynamic(ranges[loop]))
      return false;
    window *= ranges[loop];
    if (window > kLargestWindow)
      return false;
  }
  // Each window loop slides with an output loop: the first input is read
  // at `stride * output + dilation * window` along some dimension. A
  // reduction whose loops index dimensions of their own (a global pool, a
  // softmax over channels) reads a whole dimension per output instead.
  // The other inputs only give the window its shape (a pool's `tensor.
  // empty` of the window): their values are not read, so a weighted sum
  // over a window (a conv's filter) is not a pool.
  strides.assign(parallel, 1);
  if (generic.getNumDpsInputs() == 0 ||
      llvm::any_of(
          llvm::drop_begin(generic.getDpsInputOperands()),
          [&](OpOperand *input) {
            return !generic.getMatchingBlockArgument(input).use_empty();
          }))
    return false;
  AffineMap map = generic.getMatchingIndexingMap(generic.getDpsInputOperand(0));
  SmallVector<bool> slides(n, false);
  for (AffineExpr e : map.getResults()) {
    SmallVector<int64_t> terms(n, 0);
    if (!getLinearTerms(e, terms))
      continue;
    auto nonzero = [](int64_t t) { return t != 0; };
    if (llvm::none_of(ArrayRef(terms).take_front(parallel), nonzero) ||
        llvm::none_of(ArrayRef(terms).drop_front(parallel), nonzero))
      continue;
    for (unsigned loop = 0; loop < n; ++loop)
      slides[loop] = slides[loop] || terms[loop] != 0;
    for (int64_t loop = 0; loop < parallel; ++loop)
      if (terms[loop] > 1)
        strides[loop] = terms[loop];
  }
  return llvm::all_of(ArrayRef(slides).drop_front(parallel),
                      [](bool s) { return s; });
}

/// Whether `kernel` reads element by element: a gather (an extract in a
/// linalg op's body) or a permuted operand (a transpose).
static bool readsElementByElement(func::FuncOp kernel) {
  bool scalar = false;
  kernel.walk([&](Operation *op) {
    if (isa<tensor::ExtractOp>(op) && op->getParentOfType<linalg::LinalgOp>())
      scalar = true;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      scalar |=
          isa<linalg::TransposeOp>(op) ||
          llvm::any_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
            return map.isPermutation() && !map.isIdentity();
          });
  });
  return scalar;
}

/// Whether a tensor of `type` spans a problem's space, moving bytes per
/// element of it: a rank of at least `rank` and an innermost dimension that
/// is not 1 (broadcast vectors, a LayerNorm's scale, and one value per row
/// are cached or negligible).
static bool spansSpace(Type type, int64_t rank) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  return shaped && shaped.getRank() >= rank && shaped.getShape().back() != 1;
}

namespace {
/// The loops of a column reduction: `kept` leading parallel loops,
/// `reduced` reduction loops, then `columns` parallel loops.
struct ColumnLoops {
  unsigned kept = 0, reduced = 0, columns = 0;
  unsigned size() const { return kept + reduced + columns; }
};
} // namespace

/// The ColumnLoops of `op` if it is a reduction of one result folding
/// consecutive loops with parallel loops after them, and writes the others
/// in order (a ReduceMean over the channels of [N, C, H, W]).
static std::optional<ColumnLoops> getColumnLoops(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = generic.getIteratorTypesArray();
  ColumnLoops loops;
  auto parallel = [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  };
  auto it = iterators.begin();
  for (; it != iterators.end() && parallel(*it); ++it)
    ++loops.kept;
  for (; it != iterators.end() && !parallel(*it); ++it)
    ++loops.reduced;
  for (; it != iterators.end() && parallel(*it); ++it)
    ++loops.columns;
  if (it != iterators.end() || loops.reduced == 0 || loops.columns == 0)
    return std::nullopt;
  AffineMap init = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (init.getNumResults() != loops.kept + loops.columns)
    return std::nullopt;
  for (auto [i, e] : llvm::enumerate(init.getResults())) {
    unsigned loop = i < loops.kept ? i : i + loops.reduced;
    if (e != getAffineDimExpr(loop, op->getContext()))
      return std::nullopt;
  }
  return loops;
}

/// The problem of a column reduction: a kernel whose reductions all have
/// the same ColumnLoops and whose result is their outputs' space (a mean's
/// division, a keepdims view) or, for one reduced loop, the space they
/// reduce, written in order by an op of parallel loops (a softmax's
/// division); fails for any other kernel. Each thread walks its columns'
/// reduced axis, the warp's lanes side by side along the last dimension.
static FailureOr<RowProblemExprs> getColumnProblem(func::FuncOp kernel) {
  Block &entry = kernel.getBody().front();
  std::optional<ColumnLoops> loops;
  linalg::LinalgOp reduction;
  for (Operation &op : entry) {
    if (!hasReductionLoops(&op))
      continue;
    std::optional<ColumnLoops> own = getColumnLoops(&op);
    if (!own ||
        (loops && (own->kept != loops->kept || own->reduced != loops->reduced ||
                   own->columns != loops->columns)))
      return failure();
    if (!loops)
      reduction = cast<linalg::LinalgOp>(op);
    loops = own;
  }
  if (!loops)
    return failure();
  Value out = entry.getTerminator()->getOperand(0);
  auto outType = dyn_cast<RankedTensorType>(out.getType());
  auto root = getReshapedSource(out).getDefiningOp<linalg::LinalgOp>();
  if (!outType || !root)
    return failure();
  RowProblemExprs problem;
  problem.columns = true;
  problem.column = DimExpr(1);
  for (unsigned loop = loops->kept; loop < loops->kept + loops->reduced;
       ++loop) {
    FailureOr<DimExpr> extent = getLoopExtent(reduction, loop, entry);
    if (failed(extent))
      return failure();
    problem.column = problem.column * *extent;
  }
  // The result spans the reduced axis: an op of parallel loops over the
  // whole space, writing it in order, is the result itself.
  int64_t rank = outType.getRank();
  bool spans = root.getNumLoops() == loops->size() &&
               root.getNumLoops() == root.getNumParallelLoops();
  if (spans) {
    if (loops->reduced != 1 || root->getNumResults() != 1 ||
        root->getResult(0) != out ||
        !root.getMatchingIndexingMap(root.getDpsInitOperand(0)).isIdentity())
      return failure();
    // The result's dimension at the reduced loop's place is the reduced
    // axis: every op over the whole space reads its operands in order (a
    // transpose after the softmax would put another axis there), and that
    // dimension's extent is the reduced one (where static; a dynamic one
    // is another argument's dimension).
    for (Operation &op : entry) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (!linalgOp || linalgOp.getNumLoops() != loops->size())
        continue;
      for (AffineMap map : linalgOp.getIndexingMapsArray()) {
        int64_t last = -1;
        for (AffineExpr e : map.getResults()) {
          auto dim = dyn_cast<AffineDimExpr>(e);
          auto zero = dyn_cast<AffineConstantExpr>(e);
          if (zero && zero.getValue() == 0)
            continue;
          if (!dim || static_cast<int64_t>(dim.getPosition()) <= last)
            return failure();
          last = dim.getPosition();
        }
      }
    }
    problem.columnPlace = loops->columns + 1;
    FailureOr<DimExpr> axis =
        getKernelDimExpr(out, rank - problem.columnPlace, entry);
    if (failed(axis) || axis->getConstant() != problem.column.getConstant())
      return failure();
  } else if (!hasReductionLoops(root) &&
             !(root.getNumLoops() == loops->kept + loops->columns &&
               root.getNumLoops() == root.getNumParallelLoops())) {
    return failure();
  }
  // A group of lanes per output: one reduced loop, reductions with a
  // combiner reading the arguments, a statistic per column (a variance's
  // mean) or a value the kernel computes over the whole space (a softmax's
  // exponentials, read through a permutation), so that with that loop
  // innermost each is a row (isRowReductionKernel with `columns`; code
  // generation checks again, moving a spanning result's column loop last,
  // and keeps the tile levels where that fails).
  problem.columnLanes =
      loops->reduced == 1 && llvm::all_of(entry, [](Operation &op) {
        if (!hasReductionLoops(&op))
          return true;
        auto generic = dyn_cast<linalg::GenericOp>(op);
        if (!generic || !getReductionCombiner(generic))
          return false;
        AffineMap perColumn =
            generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
        return llvm::all_of(generic.getDpsInputOperands(), [&](OpOperand *in) {
          AffineMap map = generic.getMatchingIndexingMap(in);
          return !dependsOnLinalg(in->get()) || map == perColumn ||
                 map.isPermutation();
        });
      });
  // Between the root and the result, only views that insert unit
  // dimensions (a keepdims result): the space is the result's dimensions,
  // which code generation tiles, and those of the root in order. A
  // flattened result would tile other dimensions than the problem's.
  for (Value v = out; v != root->getResult(0);) {
    auto expand = v.getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand)
      return failure();
    for (const ReassociationIndices &group : expand.getReassociationIndices())
      if (llvm::count_if(group, [&](int64_t d) {
            return expand.getResultType().getDimSize(d) != 1;
          }) > 1)
        return failure();
    v = expand.getSrc();
  }
  // The space: the result's dimensions, but the reduced one where it spans
  // it; the last is the length, the one before the rows, the others the
  // batch.
  SmallVector<DimExpr> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (spans && d == rank - problem.columnPlace)
      continue;
    FailureOr<DimExpr> extent = getKernelDimExpr(out, d, entry);
    if (failed(extent))
      return failure();
    dims.push_back(*extent);
  }
  if (dims.empty())
    return failure();
  problem.batch = DimExpr(1);
  problem.rows = DimExpr(1);
  problem.planes = DimExpr(1);
  problem.length = dims.back();
  if (dims.size() >= 2)
    problem.rows = dims[dims.size() - 2];
  for (size_t d = 0; d + 2 < dims.size(); ++d)
    problem.batch = problem.batch * dims[d];
  // Bytes per element of the reduced space: the inputs that span it, and
  // the result where it does (one output per column otherwise).
  for (BlockArgument arg :
       entry.getArguments().drop_back(kernel.getNumResults()))
    if (spansSpace(arg.getType(), loops->size()))
      problem.bytesPerElement += getElementBytes(arg.getType());
  if (spans)
    problem.bytesPerElement += getElementBytes(outType);
  problem.elementBytes = getElementBytes(outType);
  if (problem.elementBytes == 0)
    return failure();
  problem.bytesPerElement =
      std::max(problem.bytesPerElement, problem.elementBytes);
  return problem;
}

FailureOr<RowProblemExprs> dyncc::getRowProblem(func::FuncOp kernel) {
  if (kernel.isExternal() || kernel.getNumResults() != 1)
    return failure();
  auto kind = kernel->getAttrOfType<StringAttr>("dyncc.kind");
  bool reduction = kind && kind.getValue() == "reduce";
  bool movement = kind && kind.getValue() == "data_movement";
  if (kind && !reduction && !movement && kind.getValue() != "elementwise")
    return failure();
  Block &entry = kernel.getBody().front();
  // A data-movement kernel is row-wise where its ops are straight-line
  // code around linalg ops (a copy, a gather, im2col's windows): no loops
  // or conditions of its own (NonZero's scan, a Loop's body).
  if (movement && llvm::any_of(entry, [](Operation &op) {
        return op.getNumRegions() != 0 && !isa<linalg::LinalgOp>(op);
      }))
    return failure();
  // The root: the op computing the result, through reshapes and casts.
  auto root = getReshapedSource(entry.getTerminator()->getOperand(0))
                  .getDefiningOp<linalg::LinalgOp>();
  if (!root)
    return failure();
  // The loops: the row reductions' (every reduction of the kernel along
  // rows, isRowReduction, with the same loops), else the root's, which
  // must all be parallel. Code generation checks more after simplifying
  // the kernel (isRowReductionKernel: values between its ops keep rows as
  // rows), and takes the tile levels where that fails.
  linalg::LinalgOp loops = root;
  // A kernel of window reductions (pools) is row-wise over their results:
  // each thread folds the windows of its outputs, as an elementwise kernel
  // computes its outputs, reading its input `strides` times as much.
  SmallVector<int64_t> windowStrides;
  BlockArgument windowed;
  if (reduction) {
    loops = nullptr;
    for (Operation &op : entry) {
      if (!hasReductionLoops(&op))
        continue;
      if (!isRowReduction(&op) ||
          (loops &&
           cast<linalg::LinalgOp>(op).getNumLoops() != loops.getNumLoops())) {
        loops = nullptr;
        break;
      }
      if (!loops)
        loops = cast<linalg::LinalgOp>(op);
    }
    if (!loops)
      if (FailureOr<RowProblemExprs> columns = getColumnProblem(kernel);
          succeeded(columns)) {
        columns->scalarAccess = readsElementByElement(kernel);
        return columns;
      }
    if (!loops) {
      for (Operation &op : entry) {
        SmallVector<int64_t> strides;
        if (!hasReductionLoops(&op))
          continue;
        if (!isWindowReduction(&op, strides) ||
            (loops && strides.size() != windowStrides.size()))
          return failure();
        loops = cast<linalg::LinalgOp>(op);
        if (windowStrides.empty())
          windowStrides = strides;
        for (auto [most, stride] : llvm::zip(windowStrides, strides))
          most = std::max(most, stride);
      }
      if (!loops)
        return failure();
      reduction = false;
      // The kernel argument the windows read (through a pad, reshapes and
      // casts).
      Value read = loops.getDpsInputOperand(0)->get();
      while (true) {
        read = getReshapedSource(read);
        auto pad = read.getDefiningOp<tensor::PadOp>();
        if (!pad)
          break;
        read = pad.getSource();
      }
      windowed = dyn_cast<BlockArgument>(read);
    }
  } else if (hasReductionLoops(root) ||
             root.getNumLoops() != root.getNumParallelLoops()) {
    return failure();
  }
  unsigned n =
      windowStrides.empty() ? loops.getNumLoops() : windowStrides.size();
  if (n == 0)
    return failure();
  RowProblemExprs problem;
  problem.batch = DimExpr(1);
  problem.rows = DimExpr(1);
  problem.planes = DimExpr(1);
  problem.reduction = reduction;
  for (unsigned loop = 0; loop < n; ++loop) {
    FailureOr<DimExpr> extent = getLoopExtent(loops, loop, entry);
    if (failed(extent))
      return failure();
    if (loop + 1 == n)
      problem.length = *extent;
    else if (loop + 2 == n)
      problem.rows = *extent;
    else
      problem.batch = problem.batch * *extent;
    if (loop + 3 == n)
      problem.planes = *extent;
  }
  // Bytes moved per element of the [rows x length] space: the inputs and
  // the result that span it (rank at least 2, or 1 for a 1-D problem, and
  // an innermost dimension that is not 1); broadcast vectors (a LayerNorm's
  // scale) and one value per row are cached or negligible.
  auto spans = [&](Type type) {
    return spansSpace(type, std::min<int64_t>(n, 2));
  };
  unsigned destinations = kernel.getNumResults();
  Type result = kernel.getResultTypes()[0];
  for (BlockArgument arg : entry.getArguments().drop_back(destinations)) {
    if (!spans(arg.getType()))
      continue;
    // A pool's input is read whole, its elements per output's: per
    // dimension, the ratio of the static sizes (ResNet's 7x7 average pool
    // over a 7x7 map reads 49), else the stride.
    double reads = 1;
    auto in = cast<RankedTensorType>(arg.getType());
    auto out = dyn_cast<RankedTensorType>(result);
    if (arg == windowed && out &&
        in.getRank() == static_cast<int64_t>(windowStrides.size()) &&
        out.getRank() == in.getRank())
      for (int64_t d = 0; d < in.getRank(); ++d)
        reads *=
            in.isDynamicDim(d) || out.isDynamicDim(d) || out.getDimSize(d) == 0
                ? static_cast<double>(windowStrides[d])
                : static_cast<double>(in.getDimSize(d)) /
                      static_cast<double>(out.getDimSize(d));
    problem.bytesPerElement += std::max<int64_t>(1, std::llround(reads)) *
                               getElementBytes(arg.getType());
  }
  if (spans(result))
    problem.bytesPerElement += getElementBytes(result);
  problem.elementBytes = getElementBytes(result);
  if (problem.elementBytes == 0)
    return failure();
  problem.bytesPerElement = std::max(problem.bytesPerElement,
                                     problem.elementBytes);
  // Element by element: a gather (an extract in a linalg op's body) or a
  // permuted operand (a transpose).
  // Windows are read element by element too (their loads a thread's own,
  // strided where the pool is).
  problem.scalarAccess =
      !windowStrides.empty() || readsElementByElement(kernel);
  return problem;
}

/// `e` as a sum of non-negative constant multiples of loop indices, with no
/// constant term: its coefficient per loop; false for anything else.
static bool getLinearTerms(AffineExpr e, SmallVectorImpl<int64_t> &terms) {
  if (auto dim = dyn_cast<AffineDimExpr>(e)) {
    terms[dim.getPosition()] += 1;
    return true;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return false;
  if (e.getKind() == AffineExprKind::Add)
    return getLinearTerms(bin.getLHS(), terms) &&
           getLinearTerms(bin.getRHS(), terms);
  auto dim = dyn_cast<AffineDimExpr>(bin.getLHS());
  auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
  if (e.getKind() != AffineExprKind::Mul || !dim || !c || c.getValue() < 1)
    return false;
  terms[dim.getPosition()] += c.getValue();
  return true;
}

FailureOr<ConvProblemExprs> dyncc::getConvProblem(func::FuncOp kernel) {
  if (kernel.isExternal() || kernel.getNumResults() != 1)
    return failure();
  Block &entry = kernel.getBody().front();
  SmallVector<linalg::LinalgOp> convs;
  kernel.walk([&](linalg::LinalgOp op) {
    if (linalg::isaConvolutionOpInterface(op))
      convs.push_back(op);
  });
  if (convs.size() != 1)
    return failure();
  linalg::LinalgOp op = convs.front();
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return failure();
  // The loops: [n, (g,) oc, (oh,) ow] over [ic, (kh,) kw]. A 1-D conv has
  // no rows; a grouped conv has a group loop (ONNX's `group` splits the
  // channels), its operands expanded to [n, g, ic, ...] and [g, oc, ic,
  // ...].
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  AffineMap input = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap weights = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  unsigned rank = out.getNumResults();
  if (op.getNumLoops() <= rank)
    return failure();
  unsigned spatial = op.getNumLoops() - rank - 1;
  if ((spatial != 1 && spatial != 2) || rank < 2 + spatial ||
      rank > 3 + spatial || input.getNumResults() != rank ||
      weights.getNumResults() != rank || !out.isProjectedPermutation())
    return failure();
  bool grouped = rank == 3 + spatial;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto isDim = [](AffineExpr e, unsigned &loop) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (dim)
      loop = dim.getPosition();
    return bool(dim);
  };
  // Positions past the group's, where there is one.
  unsigned at = grouped ? 1 : 0;
  unsigned n, oc, ic, inN, weightOc, weightIc;
  if (!isDim(out.getResult(0), n) || !isDim(out.getResult(1 + at), oc) ||
      !isDim(input.getResult(0), inN) || !isDim(input.getResult(1 + at), ic) ||
      !isDim(weights.getResult(0 + at), weightOc) ||
      !isDim(weights.getResult(1 + at), weightIc) || inN != n ||
      weightOc != oc || weightIc != ic ||
      iterators[ic] != utils::IteratorType::reduction)
    return failure();
  std::optional<unsigned> g;
  if (grouped) {
    unsigned outG, inG, weightG;
    if (!isDim(out.getResult(1), outG) || !isDim(input.getResult(1), inG) ||
        !isDim(weights.getResult(0), weightG) || inG != outG ||
        weightG != outG || iterators[outG] != utils::IteratorType::parallel)
      return failure();
    g = outG;
  }
  // Per spatial dimension, rows then columns: the output's loop, the
  // filter's, and the input read at `o * stride + k * dilation`.
  ConvProblemExprs problem;
  problem.spatialDims = spatial;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  DimExpr *outputs[] = {&problem.outH, &problem.outW};
  int64_t *taps[] = {&problem.kh, &problem.kw};
  int64_t *strides[] = {&problem.strideH, &problem.strideW};
  int64_t *dilations[] = {&problem.dilationH, &problem.dilationW};
  problem.outH = DimExpr(1);
  problem.kh = 1;
  for (unsigned d = 0; d < spatial; ++d) {
    // A 1-D conv's one dimension is the columns.
    unsigned which = d + 2 - spatial;
    unsigned o, k;
    if (!isDim(out.getResult(2 + at + d), o) ||
        !isDim(weights.getResult(2 + at + d), k) ||
        iterators[k] != utils::IteratorType::reduction)
      return failure();
    SmallVector<int64_t> terms(op.getNumLoops(), 0);
    if (!getLinearTerms(input.getResult(2 + at + d), terms))
      return failure();
    for (auto [loop, coefficient] : llvm::enumerate(terms))
      if (coefficient != 0 && loop != o && loop != k)
        return failure();
    if (terms[o] < 1 || terms[k] < 1)
      return failure();
    *strides[which] = terms[o];
    *dilations[which] = terms[k];
    *taps[which] = ranges[k];
    FailureOr<DimExpr> extent = getLoopExtent(op, o, entry);
    if (failed(extent) || ShapedType::isDynamic(ranges[k]))
      return failure();
    *outputs[which] = *extent;
  }
  // A 2-D conv over one row (or one column), its filter and input one row
  // high too (tf2onnx's Conv1D: [N, C, 1, L] and a 1 x K filter): code
  // generation drops the unit dimensions (FoldUnitExtentDims), so it
  // builds a 1-D conv over the other, and a config's sizes align to
  // [N, C, L]. So the problem is that 1-D conv, whose tiles have three
  // sizes; with four, the image rows' size would go to the channels.
  if (spatial == 2) {
    auto inType = cast<RankedTensorType>(op.getDpsInputs()[0].getType());
    auto isLine = [&](const DimExpr &outputs, int64_t taps, unsigned d) {
      return outputs == DimExpr(1) && taps == 1 &&
             inType.getDimSize(2 + at + d) == 1;
    };
    bool row = isLine(problem.outH, problem.kh, 0);
    bool column = !row && isLine(problem.outW, problem.kw, 1);
    if (column) {
      problem.outW = problem.outH;
      problem.kw = problem.kh;
      problem.strideW = problem.strideH;
      problem.dilationW = problem.dilationH;
    }
    if (row || column) {
      problem.outH = DimExpr(1);
      problem.kh = problem.strideH = problem.dilationH = 1;
      problem.spatialDims = 1;
    }
  }
  problem.inC = ranges[ic];
  problem.groups = g ? ranges[*g] : 1;
  if (ShapedType::isDynamic(problem.inC) ||
      ShapedType::isDynamic(problem.groups))
    return failure();
  for (auto [loop, dim] :
       {std::pair(n, &problem.batch), std::pair(oc, &problem.outC)}) {
    FailureOr<DimExpr> extent = getLoopExtent(op, loop, entry);
    if (failed(extent))
      return failure();
    *dim = *extent;
  }
  // The operands and the result of one element type; f16 and bf16 convs
  // accumulate in an f32 temporary (the conv's init), rounded into the
  // result once, as their GEMMs do.
  problem.elementBytes = getElementBytes(kernel.getResultTypes()[0]);
  for (OpOperand *operand : op.getDpsInputOperands())
    if (getElementBytes(operand->get().getType()) != problem.elementBytes)
      return failure();
  Type accumulator = getElementTypeOrSelf(op.getDpsInitOperand(0)->get());
  Type element = getElementTypeOrSelf(kernel.getResultTypes()[0]);
  if (accumulator != element &&
      !(isa<Float16Type, BFloat16Type>(element) && accumulator.isF32()))
    return failure();
  auto result = dyn_cast<RankedTensorType>(kernel.getResultTypes()[0]);
  if (problem.elementBytes == 0 || !result || result.getRank() != 2 + spatial)
    return failure();
  return problem;
}

FailureOr<DimExpr>
dyncc::resolveDispatchExpr(Operation *op, const DimExpr &expr,
                           ArrayRef<SmallVector<DimExpr>> extra) {
  auto dispatch = dyn_cast<dg::DispatchOp>(op);
  if (!dispatch)
    return failure();
  // The kernel's arguments: the dispatch's symbols, inputs, destinations.
  SmallVector<Value> tensors(dispatch.getInputs());
  llvm::append_range(tensors, dispatch.getResults());
  size_t numSymbols = dispatch.getSymbols().size();
  std::vector<std::string> names;
  expr.collectSymbols(names);
  DimExpr result = expr;
  for (const std::string &name : names) {
    unsigned arg;
    std::optional<int64_t> dim;
    if (!parseGridArgName(name, arg, dim))
      return failure();
    DimExpr value;
    if (!dim) {
      if (arg >= numSymbols)
        return failure();
      value = DimExpr::symbol(
          cast<StringAttr>(dispatch.getSymbols()[arg]).getValue().str());
    } else {
      if (arg < numSymbols ||
          arg - numSymbols >= tensors.size() + extra.size())
        return failure();
      std::optional<SmallVector<DimExpr>> shape =
          arg - numSymbols < tensors.size()
              ? sym::getSymbolicShape(tensors[arg - numSymbols].getType())
              : extra[arg - numSymbols - tensors.size()];
      if (!shape || *dim >= static_cast<int64_t>(shape->size()))
        return failure();
      value = (*shape)[*dim];
    }
    result = result.substitute(name, value);
  }
  return result;
}

FailureOr<DimExpr>
dyncc::resolveDispatchExpr(Operation *dispatch, Attribute attr,
                           ArrayRef<SmallVector<DimExpr>> extra) {
  std::string error;
  auto text = dyn_cast_or_null<StringAttr>(attr);
  std::optional<DimExpr> expr =
      text ? DimExpr::parse(text.getValue().str(), error) : std::nullopt;
  if (!expr)
    return failure();
  return resolveDispatchExpr(dispatch, *expr, extra);
}

bool dyncc::collapsesAlong(linalg::LinalgOp op, int64_t rank,
                           const ReassociationIndices &loops) {
  if (!isa<linalg::GenericOp, linalg::FillOp>(op) ||
      op.getNumLoops() != static_cast<unsigned>(rank) ||
      op.getNumReductionLoops() != 0)
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isIdentity())
      return false;
  return llvm::all_of(
             op.getIndexingMapsArray(),
             [](AffineMap map) { return map.isProjectedPermutation(); }) &&
         linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {loops});
}

void dyncc::collapseFill(RewriterBase &rewriter, linalg::FillOp fill,
                         ArrayRef<ReassociationIndices> groups) {
  Location loc = fill.getLoc();
  Value out = fill.getOutputs()[0];
  Value target = tensor::CollapseShapeOp::create(rewriter, loc, out, groups);
  Value value = linalg::FillOp::create(rewriter, loc, fill.getInputs(), target)
                    .getResult(0);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      fill, fill.getResultTypes()[0], value, groups,
      tensor::getMixedSizes(rewriter, loc, out));
}

LogicalResult dyncc::collapseKernelLoops(
    RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> ops,
    const ReassociationIndices &loops,
    ArrayRef<ReassociationIndices> outputGroups, StringRef what) {
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation())) {
      collapseFill(rewriter, fill, outputGroups);
      continue;
    }
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(op, {loops}, rewriter);
    if (failed(collapsed))
      return op->emitOpError("could not ") << what;
    rewriter.replaceOp(op, collapsed->results);
  }
  return success();
}

void dyncc::foldKernelReshapes(func::FuncOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  RewritePatternSet patterns(ctx);
  tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  (void)applyPatternsGreedily(kernel, std::move(patterns));
}
