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

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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
    DimExpr product(1);
    for (int64_t src : collapse.getReassociationIndices()[d]) {
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

FailureOr<GemmProblemExprs> dyncc::getGemmProblem(func::FuncOp kernel) {
  if (kernel.isExternal() || kernel.getNumResults() == 0)
    return failure();
  Block &entry = kernel.getBody().front();
  SmallVector<linalg::LinalgOp> contractions;
  kernel.walk([&](linalg::LinalgOp op) {
    if (linalg::isaContractionOpInterface(op))
      contractions.push_back(op);
  });
  if (contractions.size() != 1)
    return failure();
  linalg::LinalgOp op = contractions.front();
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return failure();
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out.getNumResults() < 2 || !out.isProjectedPermutation())
    return failure();
  auto extentOf = [&](unsigned loop) {
    return getLoopExtent(op, loop, entry);
  };
  GemmProblemExprs problem;
  problem.batch = DimExpr(1);
  problem.k = DimExpr(1);
  unsigned rank = out.getNumResults();
  for (unsigned r = 0; r < rank; ++r) {
    FailureOr<DimExpr> extent = extentOf(out.getDimPosition(r));
    if (failed(extent))
      return failure();
    if (r + 2 == rank)
      problem.m = *extent;
    else if (r + 1 == rank)
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
  problem.outputBytes = getElementBytes(kernel.getResultTypes()[0]);
  if (problem.operandBytes == 0 || problem.outputBytes == 0)
    return failure();
  return problem;
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

FailureOr<RowProblemExprs> dyncc::getRowProblem(func::FuncOp kernel) {
  if (kernel.isExternal() || kernel.getNumResults() != 1)
    return failure();
  auto kind = kernel->getAttrOfType<StringAttr>("dyncc.kind");
  bool reduction = kind && kind.getValue() == "reduce";
  if (kind && !reduction && kind.getValue() != "elementwise")
    return failure();
  Block &entry = kernel.getBody().front();
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
  if (reduction) {
    loops = nullptr;
    for (Operation &op : entry) {
      if (!hasReductionLoops(&op))
        continue;
      if (!isRowReduction(&op) ||
          (loops && cast<linalg::LinalgOp>(op).getNumLoops() !=
                        loops.getNumLoops()))
        return failure();
      if (!loops)
        loops = cast<linalg::LinalgOp>(op);
    }
    if (!loops)
      return failure();
  } else if (hasReductionLoops(root) ||
             root.getNumLoops() != root.getNumParallelLoops()) {
    return failure();
  }
  unsigned n = loops.getNumLoops();
  if (n == 0)
    return failure();
  RowProblemExprs problem;
  problem.batch = DimExpr(1);
  problem.rows = DimExpr(1);
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
  }
  // Bytes moved per element of the [rows x length] space: the inputs and
  // the result that span it (rank at least 2, or 1 for a 1-D problem, and
  // an innermost dimension that is not 1); broadcast vectors (a LayerNorm's
  // scale) and one value per row are cached or negligible.
  auto spans = [&](Type type) {
    auto shaped = dyn_cast<RankedTensorType>(type);
    return shaped && shaped.getRank() >= std::min<int64_t>(n, 2) &&
           shaped.getShape().back() != 1;
  };
  unsigned destinations = kernel.getNumResults();
  for (BlockArgument arg : entry.getArguments().drop_back(destinations))
    if (spans(arg.getType()))
      problem.bytesPerElement += getElementBytes(arg.getType());
  Type result = kernel.getResultTypes()[0];
  if (spans(result))
    problem.bytesPerElement += getElementBytes(result);
  problem.elementBytes = getElementBytes(result);
  if (problem.elementBytes == 0)
    return failure();
  problem.bytesPerElement = std::max(problem.bytesPerElement,
                                     problem.elementBytes);
  return problem;
}

FailureOr<DimExpr> dyncc::resolveDispatchExpr(Operation *op,
                                              const DimExpr &expr) {
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
      if (arg < numSymbols || arg - numSymbols >= tensors.size())
        return failure();
      std::optional<SmallVector<DimExpr>> shape =
          sym::getSymbolicShape(tensors[arg - numSymbols].getType());
      if (!shape || *dim >= static_cast<int64_t>(shape->size()))
        return failure();
      value = (*shape)[*dim];
    }
    result = result.substitute(name, value);
  }
  return result;
}

FailureOr<DimExpr> dyncc::resolveDispatchExpr(Operation *dispatch,
                                              Attribute attr) {
  std::string error;
  auto text = dyn_cast_or_null<StringAttr>(attr);
  std::optional<DimExpr> expr =
      text ? DimExpr::parse(text.getValue().str(), error) : std::nullopt;
  if (!expr)
    return failure();
  return resolveDispatchExpr(dispatch, *expr);
}
