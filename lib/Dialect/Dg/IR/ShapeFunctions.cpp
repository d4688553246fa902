//===- ShapeFunctions.cpp - Symbolic shape functions of dg ops ------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One shape function per op (SymbolicShapeOpInterface), over canonical
// dimension expressions. Ops that compute on small integer tensors also
// propagate their symbolic contents (`ShapeInferenceContext::resultValues`),
// which is how shape sub-graphs (Shape -> Gather -> Concat -> Reshape) give
// exact symbolic shapes. Where contents depend on data, sizes become fresh
// data-dependent symbols.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/IR/Dg.h"

#include "mlir/IR/BuiltinAttributes.h"
#include <cmath>
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

std::optional<SmallVector<int64_t>>
ShapeInferenceContext::getConstantValues(unsigned i) const {
  if (i >= operandValues.size() || !operandValues[i])
    return std::nullopt;
  SmallVector<int64_t> result;
  for (const DimExpr &e : *operandValues[i]) {
    std::optional<int64_t> c = e.getConstant();
    if (!c)
      return std::nullopt;
    result.push_back(*c);
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// Normalizes a possibly negative axis into [0, rank).
FailureOr<int64_t> normalizeAxis(Operation *op, int64_t axis, int64_t rank,
                                 StringRef what = "axis") {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return op->emitOpError(what) << " " << axis << " is out of range for rank "
                                 << rank;
  return a;
}

DimExpr product(ArrayRef<DimExpr> dims) {
  DimExpr p(1);
  for (const DimExpr &d : dims)
    p = p * d;
  return p;
}

/// The numpy broadcast of `shapes` into `result`.
LogicalResult broadcast(Operation *op, ArrayRef<SymShape> shapes,
                        ShapeConstraints &constraints, SymShape &result) {
  size_t rank = 0;
  for (const SymShape &s : shapes)
    rank = std::max(rank, s.size());
  result.assign(rank, DimExpr(1));
  for (const SymShape &s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      DimExpr &r = result[offset + i];
      const DimExpr &d = s[i];
      if (d == DimExpr(1))
        continue;
      if (r == DimExpr(1)) {
        r = d;
        continue;
      }
      if (failed(constraints.requireEqual(
              r, d, op,
              "the broadcast dimensions " + std::to_string(offset + i))))
        return failure();
      r = constraints.resolve(r);
    }
  }
  result = constraints.resolve(result);
  return success();
}

/// Elementwise arithmetic on symbolic contents (scalars broadcast).
std::optional<SymValue>
combineValues(const std::optional<SymValue> &a, const std::optional<SymValue> &b,
              function_ref<std::optional<DimExpr>(const DimExpr &, const DimExpr &)>
                  fn) {
  if (!a || !b)
    return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1))
    return std::nullopt;
  SymValue result;
  for (size_t i = 0; i < n; ++i) {
    std::optional<DimExpr> v =
        fn((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]);
    if (!v)
      return std::nullopt;
    result.push_back(*v);
  }
  return result;
}

/// Sizes given by the contents of a 1-D shape operand; fresh data-dependent
/// symbols when the contents are unknown.
FailureOr<SmallVector<DimExpr>> shapeFromOperand(ShapeInferenceContext &ctx,
                                                 Operation *op, unsigned index,
                                                 StringRef hint) {
  const SymShape &shapeOfShape = ctx.operandShapes[index];
  if (shapeOfShape.size() != 1)
    return op->emitOpError("shape operand must be 1-D, got rank ")
           << shapeOfShape.size();
  if (index < ctx.operandValues.size() && ctx.operandValues[index])
    return SmallVector<DimExpr>(ctx.operandValues[index]->begin(),
                                ctx.operandValues[index]->end());
  std::optional<int64_t> n = shapeOfShape[0].getConstant();
  if (!n)
    return op->emitOpError("the rank of the result is not known: the shape "
                           "operand has a symbolic length ")
           << shapeOfShape[0].str();
  constexpr int64_t kMaxRank = 64;
  if (*n > kMaxRank)
    return op->emitOpError("the shape operand has ")
           << *n << " entries, more than the maximum rank " << kMaxRank;
  SmallVector<DimExpr> dims;
  for (int64_t i = 0; i < *n; ++i)
    dims.push_back(ctx.freshSymbol(hint));
  ctx.dataBinding = {index, SymValue(dims.begin(), dims.end())};
  return dims;
}

/// The size of one sliced dimension, ONNX semantics, with the algebra's
/// min/max for clamping; std::nullopt when the sign of a bound (which
/// decides whether it counts from the end) is not known.
std::optional<DimExpr> sliceSize(const DimExpr &dim, DimExpr start, DimExpr end,
                                 int64_t step, const FactsMap &facts) {
  auto normalize = [&](DimExpr v, bool isEnd) -> std::optional<DimExpr> {
    // Negative values count from the end; huge ones mean "to the end".
    if (std::optional<int64_t> c = v.getConstant()) {
      if (*c >= (int64_t(1) << 40) || *c <= -(int64_t(1) << 40))
        return *c > 0 ? dim : DimExpr(isEnd && step < 0 ? -1 : 0);
      return *c < 0 ? dim + v : v;
    }
    if (proveNonNegative(v, facts))
      return v;
    if (proveLessThan(v, DimExpr(0), facts))
      return dim + v;
    return std::nullopt;
  };
  std::optional<DimExpr> s0 = normalize(start, false), e0 = normalize(end, true);
  if (!s0 || !e0)
    return std::nullopt;
  start = *s0;
  end = *e0;
  if (step > 0) {
    DimExpr s = DimExpr::min(DimExpr::max(start, 0), dim);
    DimExpr e = DimExpr::min(DimExpr::max(end, 0), dim);
    return DimExpr::max(DimExpr::ceilDiv(e - s, step), 0);
  }
  DimExpr s = DimExpr::min(DimExpr::max(start, -1), dim - DimExpr(1));
  DimExpr e = DimExpr::min(DimExpr::max(end, -1), dim - DimExpr(1));
  return DimExpr::max(DimExpr::ceilDiv(s - e, -step), 0);
}

/// Output size of a conv/pool window along one dimension.
DimExpr windowOutput(const DimExpr &in, const DimExpr &kernel, int64_t stride,
                     int64_t padBegin, int64_t padEnd, int64_t dilation,
                     bool ceilMode, StringRef autoPad) {
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    return DimExpr::ceilDiv(in, stride);
  DimExpr extent = DimExpr(dilation) * (kernel - DimExpr(1)) + DimExpr(1);
  DimExpr span = in + DimExpr(padBegin) + DimExpr(padEnd) - extent;
  if (autoPad == "VALID")
    span = in - extent;
  return (ceilMode ? DimExpr::ceilDiv(span, stride)
                   : DimExpr::floorDiv(span, stride)) +
         DimExpr(1);
}

LogicalResult sameShape(ShapeInferenceContext &ctx,
                        SmallVectorImpl<SymShape> &results) {
  results.push_back(ctx.constraints.resolve(ctx.operandShapes[0]));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

std::pair<DimExpr, DimExpr>
dg::getSamePadding(const DimExpr &in, const DimExpr &out, const DimExpr &kernel,
                   int64_t stride, int64_t dilation, bool upper) {
  // The extent the windows read: (out-1)*stride + (kernel-1)*dilation + 1.
  DimExpr reach = (out - DimExpr(1)) * DimExpr(stride) +
                  (kernel - DimExpr(1)) * DimExpr(dilation) + DimExpr(1);
  DimExpr total = DimExpr::max(DimExpr(0), reach - in);
  DimExpr low = upper ? DimExpr::floorDiv(total, DimExpr(2))
                      : total - DimExpr::floorDiv(total, DimExpr(2));
  return {low, total - low};
}

LogicalResult dg::verifyBroadcastingOp(Operation *op) {
  unsigned n = op->getNumOperands();
  Type a = getElementTypeOrSelf(op->getOperand(n - 2).getType());
  Type b = getElementTypeOrSelf(op->getOperand(n - 1).getType());
  if (a != b)
    return op->emitOpError("expects one element type, got ")
           << a << " and " << b;
  // Ranks and sizes are checked once known (after shape propagation).
  auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType || llvm::any_of(op->getOperandTypes(), [](Type t) {
        return !isa<RankedTensorType>(t);
      }))
    return success();
  int64_t rank = 0;
  for (Value v : op->getOperands())
    rank = std::max(rank, cast<RankedTensorType>(v.getType()).getRank());
  if (resultType.getRank() != rank)
    return op->emitOpError("expects a result of rank ")
           << rank << ", got " << resultType.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t size = 1;
    for (Value v : op->getOperands()) {
      auto t = cast<RankedTensorType>(v.getType());
      int64_t offset = rank - t.getRank();
      if (i < offset)
        continue;
      int64_t d = t.getDimSize(i - offset);
      if (ShapedType::isDynamic(d) || d == 1)
        continue;
      if (size != 1 && size != d)
        return op->emitOpError("operands do not broadcast: dimension ")
               << i << " is " << size << " and " << d;
      size = d;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult DimValuesOp::inferSymbolicShapes(
    ShapeInferenceContext &ctx, SmallVectorImpl<SymShape> &results) {
  SymShape shape;
  for (int64_t size : getType().getShape())
    shape.push_back(DimExpr(size));
  results.push_back(shape);
  SmallVector<DimExpr> values = getValues().getExprs();
  ctx.resultValues[0] = SymValue(values.begin(), values.end());
  return success();
}

LogicalResult ConstantOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                              SmallVectorImpl<SymShape> &results) {
  SymShape shape;
  for (int64_t size : getType().getShape())
    shape.push_back(DimExpr(size));
  results.push_back(shape);
  // Small integer constants carry their contents.
  auto elements = dyn_cast<DenseElementsAttr>(getValue());
  if (elements && elements.getNumElements() <= kMaxTrackedValues) {
    SymValue values;
    Type et = elements.getElementType();
    if (et.isInteger() && et.getIntOrFloatBitWidth() > 1) {
      for (const APInt &v : elements.getValues<APInt>())
        values.push_back(DimExpr(v.getSExtValue()));
      ctx.resultValues[0] = values;
    } else if (isa<FloatType>(et)) {
      bool integral = true;
      for (const APFloat &v : elements.getValues<APFloat>()) {
        double d = v.convertToDouble();
        if (!std::isfinite(d) || std::abs(d) >= 9.2e18 ||
            d != (double)(int64_t)d) {
          integral = false;
          break;
        }
        values.push_back(DimExpr((int64_t)d));
      }
      if (integral)
        ctx.resultValues[0] = values;
    }
  }
  return success();
}

LogicalResult
ConstantOfShapeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                       SmallVectorImpl<SymShape> &results) {
  FailureOr<SmallVector<DimExpr>> dims =
      shapeFromOperand(ctx, getOperation(), 0, "constant_of_shape");
  if (failed(dims))
    return failure();
  results.push_back(ctx.constraints.resolve(*dims));
  // A small integer fill is trackable when the size is constant.
  if (auto value = dyn_cast<DenseElementsAttr>(getValue())) {
    std::optional<int64_t> count = product(results.back()).getConstant();
    if (count && *count <= kMaxTrackedValues &&
        value.getElementType().isInteger() &&
        value.getElementType().getIntOrFloatBitWidth() > 1)
      ctx.resultValues[0] = SymValue(
          *count, DimExpr(value.getSplatValue<APInt>().getSExtValue()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define DYNCC_SAME_SHAPE(OP)                                                   \
  LogicalResult OP::inferSymbolicShapes(ShapeInferenceContext &ctx,            \
                                        SmallVectorImpl<SymShape> &results) {  \
    return sameShape(ctx, results);                                            \
  }
DYNCC_SAME_SHAPE(ExpOp)
DYNCC_SAME_SHAPE(LogOp)
DYNCC_SAME_SHAPE(SqrtOp)
DYNCC_SAME_SHAPE(ReciprocalOp)
DYNCC_SAME_SHAPE(ErfOp)
DYNCC_SAME_SHAPE(TanhOp)
DYNCC_SAME_SHAPE(SigmoidOp)
DYNCC_SAME_SHAPE(ReluOp)
DYNCC_SAME_SHAPE(NotOp)
DYNCC_SAME_SHAPE(LeakyReluOp)
DYNCC_SAME_SHAPE(ClipOp)

#undef DYNCC_SAME_SHAPE

LogicalResult TriluOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                           SmallVectorImpl<SymShape> &results) {
  if (ctx.operandShapes[0].size() < 2)
    return emitOpError("expects rank >= 2, got ") << ctx.operandShapes[0].size();
  return sameShape(ctx, results);
}

LogicalResult SoftmaxOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  if (failed(normalizeAxis(getOperation(), getAxis(),
                           ctx.operandShapes[0].size())))
    return failure();
  return sameShape(ctx, results);
}

LogicalResult
LogSoftmaxOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                  SmallVectorImpl<SymShape> &results) {
  if (failed(normalizeAxis(getOperation(), getAxis(),
                           ctx.operandShapes[0].size())))
    return failure();
  return sameShape(ctx, results);
}

LogicalResult CumSumOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                            SmallVectorImpl<SymShape> &results) {
  if (failed(normalizeAxis(getOperation(), getAxis(),
                           ctx.operandShapes[0].size())))
    return failure();
  return sameShape(ctx, results);
}

/// Same shape, contents mapped elementwise.
static LogicalResult
unaryWithValues(ShapeInferenceContext &ctx, SmallVectorImpl<SymShape> &results,
                function_ref<DimExpr(const DimExpr &)> fn) {
  results.push_back(ctx.constraints.resolve(ctx.operandShapes[0]));
  if (ctx.operandValues[0]) {
    SymValue v;
    for (const DimExpr &e : *ctx.operandValues[0])
      v.push_back(fn(e));
    ctx.resultValues[0] = v;
  }
  return success();
}

LogicalResult NegOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  return unaryWithValues(ctx, results,
                         [](const DimExpr &e) { return DimExpr(0) - e; });
}

LogicalResult AbsOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  return unaryWithValues(ctx, results, [](const DimExpr &e) {
    return DimExpr::max(e, DimExpr(0) - e);
  });
}

LogicalResult CastOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                          SmallVectorImpl<SymShape> &results) {
  // Integer contents survive casts between numeric types (shape arithmetic
  // detours through float in some exports); bool drops them.
  if (getElementTypeOrSelf(getType()).isInteger(1)) {
    results.push_back(ctx.constraints.resolve(ctx.operandShapes[0]));
    return success();
  }
  return unaryWithValues(ctx, results, [](const DimExpr &e) { return e; });
}

/// A binary broadcast op whose contents follow `fn` (or are dropped).
static LogicalResult binaryOp(
    Operation *op, ShapeInferenceContext &ctx, SmallVectorImpl<SymShape> &results,
    function_ref<std::optional<DimExpr>(const DimExpr &, const DimExpr &)> fn =
        nullptr) {
  SymShape result;
  if (failed(broadcast(op, ctx.operandShapes, ctx.constraints, result)))
    return failure();
  results.push_back(result);
  if (fn)
    ctx.resultValues[0] =
        combineValues(ctx.operandValues[0], ctx.operandValues[1], fn);
  return success();
}

LogicalResult AddOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  return binaryOp(getOperation(), ctx, results,
                  [](const DimExpr &a, const DimExpr &b) -> std::optional<DimExpr> {
                    return a + b;
                  });
}
LogicalResult SubOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  return binaryOp(getOperation(), ctx, results,
                  [](const DimExpr &a, const DimExpr &b) -> std::optional<DimExpr> {
                    return a - b;
                  });
}
LogicalResult MulOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  return binaryOp(getOperation(), ctx, results,
                  [](const DimExpr &a, const DimExpr &b) -> std::optional<DimExpr> {
                    return a * b;
                  });
}
LogicalResult DivOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  // Integer division truncates; shape values are non-negative, where that
  // is floor division. Float contents are tracked only when integral.
  bool integer = getElementTypeOrSelf(getType()).isInteger();
  const FactsMap &facts = ctx.constraints.getFactsMap();
  return binaryOp(getOperation(), ctx, results,
                  [&](const DimExpr &a, const DimExpr &b) -> std::optional<DimExpr> {
                    if (b.getConstant() == 0)
                      return std::nullopt;
                    // Integer division truncates: floor only when the
                    // signs are known to agree.
                    std::optional<int64_t> ca = a.getConstant(),
                                           cb = b.getConstant();
                    if (ca && cb)
                      return DimExpr(*ca / *cb);
                    if (!proveNonNegative(a, facts) ||
                        !proveLessThan(DimExpr(0), b, facts))
                      return std::nullopt;
                    DimExpr q = DimExpr::floorDiv(a, b);
                    if (!integer && q * b != a)
                      return std::nullopt;
                    return q;
                  });
}
LogicalResult MinOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  return binaryOp(getOperation(), ctx, results,
                  [](const DimExpr &a, const DimExpr &b) -> std::optional<DimExpr> {
                    return DimExpr::min(a, b);
                  });
}
LogicalResult MaxOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  return binaryOp(getOperation(), ctx, results,
                  [](const DimExpr &a, const DimExpr &b) -> std::optional<DimExpr> {
                    return DimExpr::max(a, b);
                  });
}

#define DYNCC_BINARY_SHAPE(OP)                                                 \
  LogicalResult OP::inferSymbolicShapes(ShapeInferenceContext &ctx,            \
                                        SmallVectorImpl<SymShape> &results) {  \
    return binaryOp(getOperation(), ctx, results);                             \
  }
DYNCC_BINARY_SHAPE(PowOp)
DYNCC_BINARY_SHAPE(AndOp)
DYNCC_BINARY_SHAPE(OrOp)
DYNCC_BINARY_SHAPE(LessOp)
DYNCC_BINARY_SHAPE(GreaterOp)
DYNCC_BINARY_SHAPE(LessEqualOp)
DYNCC_BINARY_SHAPE(GreaterEqualOp)
#undef DYNCC_BINARY_SHAPE

LogicalResult EqualOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                           SmallVectorImpl<SymShape> &results) {
  // Decided where the facts prove it (torch's expand(-1) export compares a
  // shape with -1: symbols are never negative).
  const FactsMap &facts = ctx.constraints.getFactsMap();
  return binaryOp(getOperation(), ctx, results,
                  [&](const DimExpr &a, const DimExpr &b) -> std::optional<DimExpr> {
                    if (proveEqual(a, b, facts))
                      return DimExpr(1);
                    if (proveNotEqual(a, b, facts))
                      return DimExpr(0);
                    return std::nullopt;
                  });
}

LogicalResult SelectOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                            SmallVectorImpl<SymShape> &results) {
  if (failed(binaryOp(getOperation(), ctx, results)))
    return failure();
  // Contents when the condition is known element by element.
  const auto &c = ctx.operandValues[0], &a = ctx.operandValues[1],
             &b = ctx.operandValues[2];
  if (c && a && b && results.front().size() <= 1) {
    size_t n = std::max({c->size(), a->size(), b->size()});
    auto at = [&](const SymValue &v, size_t i) { return v[v.size() == 1 ? 0 : i]; };
    SymValue values;
    for (size_t i = 0; i < n; ++i) {
      std::optional<int64_t> cond = at(*c, i).getConstant();
      if (!cond)
        return success();
      values.push_back(*cond ? at(*a, i) : at(*b, i));
    }
    ctx.resultValues[0] = values;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

LogicalResult ShapeOfOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  int64_t rank = in.size();
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clamp(getStart());
  int64_t end = getEnd() ? clamp(*getEnd()) : rank;
  SymValue values;
  for (int64_t i = start; i < end; ++i)
    values.push_back(ctx.constraints.resolve(in[i]));
  results.push_back(SymShape{DimExpr((int64_t)values.size())});
  ctx.resultValues[0] = values;
  return success();
}

LogicalResult SizeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                          SmallVectorImpl<SymShape> &results) {
  results.push_back(SymShape{});
  ctx.resultValues[0] =
      SymValue{ctx.constraints.resolve(product(ctx.operandShapes[0]))};
  return success();
}

/// Reshape semantics shared by Reshape and the shape-preserving views.
static LogicalResult reshapeTo(Operation *op, ShapeInferenceContext &ctx,
                               const SymShape &in, SmallVector<DimExpr> target,
                               bool allowZero, SymShape &result) {
  int64_t inferred = -1;
  for (auto [i, d] : llvm::enumerate(target)) {
    std::optional<int64_t> c = d.getConstant();
    if (c == 0 && !allowZero) {
      if (i >= in.size())
        return op->emitOpError("shape entry ")
               << i << " is 0 (copy) but the input has rank " << in.size();
      d = in[i];
    } else if (c == -1) {
      if (inferred >= 0)
        return op->emitOpError("shape has more than one -1 entry");
      inferred = i;
    } else if (c && *c < -1) {
      return op->emitOpError("shape entry ") << i << " is " << *c;
    }
  }
  DimExpr total = product(in);
  if (inferred >= 0) {
    DimExpr known(1);
    for (auto [i, d] : llvm::enumerate(target))
      if ((int64_t)i != inferred)
        known = known * d;
    DimExpr q = DimExpr::floorDiv(total, known);
    if (q * known != total) {
      // Not provably exact: record the requirement, keep the quotient.
      if (failed(ctx.constraints.requireEqual(q * known, total, op,
                                              "the element counts")))
        return failure();
    }
    target[inferred] = q;
  } else if (failed(ctx.constraints.requireEqual(product(target), total, op,
                                                 "the element counts"))) {
    return failure();
  }
  result = ctx.constraints.resolve(target);
  return success();
}

LogicalResult ReshapeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  FailureOr<SmallVector<DimExpr>> target =
      shapeFromOperand(ctx, getOperation(), 1, "reshape");
  if (failed(target))
    return failure();
  SymShape result;
  if (failed(reshapeTo(getOperation(), ctx, ctx.operandShapes[0], *target,
                       getAllowzero(), result)))
    return failure();
  results.push_back(result);
  ctx.resultValues[0] = ctx.operandValues[0];
  return success();
}

LogicalResult FlattenOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  int64_t rank = in.size();
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return emitOpError("axis ") << static_cast<int64_t>(getAxis())
                                << " is out of range for rank " << rank;
  results.push_back(ctx.constraints.resolve(
      SymShape{product(ArrayRef(in).take_front(axis)),
               product(ArrayRef(in).drop_front(axis))}));
  ctx.resultValues[0] = ctx.operandValues[0];
  return success();
}

LogicalResult SqueezeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  int64_t rank = in.size();
  SmallVector<bool> drop(rank, false);
  if (std::optional<ArrayRef<int64_t>> axes = getAxes()) {
    for (int64_t axis : *axes) {
      FailureOr<int64_t> a = normalizeAxis(getOperation(), axis, rank);
      if (failed(a))
        return failure();
      if (failed(ctx.constraints.requireEqual(
              in[*a], DimExpr(1), getOperation(),
              "squeezed dimension " + std::to_string(*a) + " and 1")))
        return failure();
      drop[*a] = true;
    }
  } else {
    for (int64_t i = 0; i < rank; ++i)
      drop[i] = in[i] == DimExpr(1);
  }
  SymShape result;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i])
      result.push_back(in[i]);
  results.push_back(ctx.constraints.resolve(result));
  ctx.resultValues[0] = ctx.operandValues[0];
  return success();
}

LogicalResult UnsqueezeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                               SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  int64_t rank = in.size() + getAxes().size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t axis : getAxes()) {
    FailureOr<int64_t> a = normalizeAxis(getOperation(), axis, rank);
    if (failed(a))
      return failure();
    if (inserted[*a])
      return emitOpError("axis ") << axis << " is repeated";
    inserted[*a] = true;
  }
  SymShape result;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    result.push_back(inserted[i] ? DimExpr(1) : in[next++]);
  results.push_back(ctx.constraints.resolve(result));
  ctx.resultValues[0] = ctx.operandValues[0];
  return success();
}

LogicalResult TransposeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                               SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  int64_t rank = in.size();
  if ((int64_t)getPerm().size() != rank)
    return emitOpError("perm has ") << getPerm().size()
                                    << " entries for rank " << rank;
  SmallVector<bool> seen(rank, false);
  SymShape result;
  for (int64_t p : getPerm()) {
    if (p < 0 || p >= rank || seen[p])
      return emitOpError("perm is not a permutation of [0, ") << rank << ")";
    seen[p] = true;
    result.push_back(in[p]);
  }
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

LogicalResult ConcatOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                            SmallVectorImpl<SymShape> &results) {
  if (ctx.operandShapes.empty())
    return emitOpError("needs at least one input");
  int64_t rank = ctx.operandShapes[0].size();
  FailureOr<int64_t> axis = normalizeAxis(getOperation(), getAxis(), rank);
  if (failed(axis))
    return failure();
  SymShape result = ctx.operandShapes[0];
  result[*axis] = DimExpr(0);
  for (auto [i, s] : llvm::enumerate(ctx.operandShapes)) {
    if ((int64_t)s.size() != rank)
      return emitOpError("input #") << i << " has rank " << s.size()
                                    << ", expected " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == *axis)
        continue;
      if (failed(ctx.constraints.requireEqual(
              result[d], s[d], getOperation(),
              "dimension " + std::to_string(d) + " of the inputs")))
        return failure();
    }
    result[*axis] = result[*axis] + s[*axis];
  }
  results.push_back(ctx.constraints.resolve(result));
  // Contents: concatenation of 1-D values.
  if (rank == 1 && llvm::all_of(ctx.operandValues,
                                [](const auto &v) { return v.has_value(); })) {
    SymValue values;
    for (const auto &v : ctx.operandValues)
      values.append(v->begin(), v->end());
    ctx.resultValues[0] = values;
  }
  return success();
}

LogicalResult SplitOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                           SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  FailureOr<int64_t> axis = normalizeAxis(getOperation(), getAxis(), in.size());
  if (failed(axis))
    return failure();
  unsigned n = getNumResults();
  SmallVector<DimExpr> sizes;
  if (std::optional<ArrayRef<int64_t>> given = getSizes()) {
    if (given->size() != n)
      return emitOpError("has ") << given->size() << " sizes for " << n
                                 << " results";
    DimExpr sum(0);
    for (int64_t s : *given) {
      sizes.push_back(DimExpr(s));
      sum = sum + DimExpr(s);
    }
    if (failed(ctx.constraints.requireEqual(sum, in[*axis], getOperation(),
                                            "the split sizes' sum and the dimension")))
      return failure();
  } else {
    // Equal pieces, the last one smaller (ONNX opset 18 rule; exact when
    // divisible, which earlier opsets require).
    DimExpr piece = DimExpr::ceilDiv(in[*axis], n);
    for (unsigned i = 0; i + 1 < n; ++i)
      sizes.push_back(piece);
    sizes.push_back(in[*axis] - DimExpr(n - 1) * piece);
  }
  for (const DimExpr &s : sizes) {
    SymShape r = in;
    r[*axis] = s;
    results.push_back(ctx.constraints.resolve(r));
  }
  return success();
}

LogicalResult SliceOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                           SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  int64_t rank = in.size();
  auto valuesOf = [&](unsigned i) -> std::optional<SymValue> {
    return i < ctx.operandValues.size() ? ctx.operandValues[i] : std::nullopt;
  };
  for (unsigned i = 1; i < ctx.operandShapes.size(); ++i)
    if (ctx.operandShapes[i].size() != 1)
      return emitOpError("starts, ends, axes and steps must be 1-D, operand #")
             << i << " has rank " << ctx.operandShapes[i].size();
  for (unsigned i = 2; i < ctx.operandShapes.size(); ++i)
    if (ctx.operandShapes[i][0] != ctx.operandShapes[1][0])
      return emitOpError("operand #")
             << i << " has " << ctx.operandShapes[i][0].str()
             << " entries but starts has " << ctx.operandShapes[1][0].str();
  std::optional<SymValue> starts = valuesOf(1), ends = valuesOf(2);
  unsigned next = 3;
  std::optional<SmallVector<int64_t>> axes, steps;
  if (getAxes())
    axes = ctx.getConstantValues(next++);
  if (getSteps())
    steps = ctx.getConstantValues(next++);
  if ((getAxes() && !axes) || (getSteps() && !steps))
    return emitOpError("axes and steps must be constants");
  SymShape result = in;
  if (!starts || !ends) {
    // Unknown bounds: every sliced dimension is data-dependent.
    int64_t count = ctx.operandShapes[1][0].getConstant().value_or(-1);
    if (count < 0)
      return emitOpError("the number of sliced axes is not known");
    for (int64_t i = 0; i < count; ++i) {
      int64_t axis = axes ? (*axes)[i] : i;
      FailureOr<int64_t> a = normalizeAxis(getOperation(), axis, rank);
      if (failed(a))
        return failure();
      result[*a] = ctx.freshSymbol("slice");
    }
    results.push_back(result);
    return success();
  }
  if (starts->size() != ends->size())
    return emitOpError("starts and ends have different lengths");
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t axis = axes ? (*axes)[i] : (int64_t)i;
    int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0)
      return emitOpError("step ") << i << " is 0";
    FailureOr<int64_t> a = normalizeAxis(getOperation(), axis, rank);
    if (failed(a))
      return failure();
    std::optional<DimExpr> size = sliceSize(
        in[*a], (*starts)[i], (*ends)[i], step, ctx.constraints.getFactsMap());
    result[*a] = size ? *size : ctx.freshSymbol("slice");
  }
  results.push_back(ctx.constraints.resolve(result));
  // Contents of a sliced 1-D value with constant bounds.
  std::optional<SmallVector<int64_t>> cs = ctx.getConstantValues(1),
                                      ce = ctx.getConstantValues(2);
  if (rank == 1 && ctx.operandValues[0] && cs && ce) {
    int64_t n = ctx.operandValues[0]->size();
    int64_t step = steps ? (*steps)[0] : 1;
    auto clampIndex = [&](int64_t v) {
      if (v < 0)
        v += n;
      return step > 0 ? std::clamp<int64_t>(v, 0, n)
                      : std::clamp<int64_t>(v, -1, n - 1);
    };
    int64_t s = clampIndex((*cs)[0]), e = clampIndex((*ce)[0]);
    SymValue values;
    for (int64_t i = s; step > 0 ? i < e : i > e; i += step)
      values.push_back((*ctx.operandValues[0])[i]);
    ctx.resultValues[0] = values;
  }
  return success();
}

LogicalResult GatherOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                            SmallVectorImpl<SymShape> &results) {
  const SymShape &data = ctx.operandShapes[0];
  const SymShape &indices = ctx.operandShapes[1];
  FailureOr<int64_t> axis = normalizeAxis(getOperation(), getAxis(), data.size());
  if (failed(axis))
    return failure();
  SymShape result(data.begin(), data.begin() + *axis);
  result.append(indices.begin(), indices.end());
  result.append(data.begin() + *axis + 1, data.end());
  results.push_back(ctx.constraints.resolve(result));
  // Contents: gathering from a 1-D value with constant indices.
  std::optional<SmallVector<int64_t>> idx = ctx.getConstantValues(1);
  if (data.size() == 1 && ctx.operandValues[0] && idx) {
    int64_t n = ctx.operandValues[0]->size();
    SymValue values;
    for (int64_t i : *idx) {
      int64_t j = i < 0 ? i + n : i;
      if (j < 0 || j >= n)
        return emitOpError("index ") << i << " is out of range for "
                                     << n << " elements";
      values.push_back((*ctx.operandValues[0])[j]);
    }
    ctx.resultValues[0] = values;
  }
  return success();
}

LogicalResult ExpandOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                            SmallVectorImpl<SymShape> &results) {
  FailureOr<SmallVector<DimExpr>> target =
      shapeFromOperand(ctx, getOperation(), 1, "expand");
  if (failed(target))
    return failure();
  SymShape result;
  if (failed(broadcast(getOperation(),
                       {ctx.operandShapes[0], SymShape(target->begin(), target->end())},
                       ctx.constraints, result)))
    return failure();
  results.push_back(result);
  return success();
}

LogicalResult TileOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                          SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  FailureOr<SmallVector<DimExpr>> repeats =
      shapeFromOperand(ctx, getOperation(), 1, "tile");
  if (failed(repeats))
    return failure();
  if (repeats->size() != in.size())
    return emitOpError("has ") << repeats->size() << " repeats for rank "
                               << in.size();
  SymShape result;
  for (auto [d, r] : llvm::zip(in, *repeats))
    result.push_back(d * r);
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

LogicalResult RangeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                           SmallVectorImpl<SymShape> &results) {
  for (unsigned i = 0; i < 3; ++i)
    if (!ctx.operandShapes[i].empty())
      return emitOpError("operand #") << i << " must be a scalar";
  std::optional<SmallVector<int64_t>> delta = ctx.getConstantValues(2);
  const auto &start = ctx.operandValues[0], &limit = ctx.operandValues[1];
  if (!start || !limit || !delta || (*delta)[0] == 0) {
    results.push_back(SymShape{ctx.freshSymbol("range")});
    return success();
  }
  int64_t d = (*delta)[0];
  DimExpr size =
      d > 0 ? DimExpr::ceilDiv((*limit)[0] - (*start)[0], d)
            : DimExpr::ceilDiv((*start)[0] - (*limit)[0], -d);
  size = DimExpr::max(size, 0);
  results.push_back(SymShape{ctx.constraints.resolve(size)});
  if (std::optional<int64_t> n = size.getConstant(); n && *n <= kMaxTrackedValues) {
    SymValue values;
    for (int64_t i = 0; i < *n; ++i)
      values.push_back((*start)[0] + DimExpr(i * d));
    ctx.resultValues[0] = values;
  }
  return success();
}

LogicalResult PadOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                         SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  std::optional<SymValue> pads = ctx.operandValues[1];
  if (!pads)
    return emitOpError("pads must be known at compile time");
  if (pads->size() != 2 * in.size())
    return emitOpError("has ") << pads->size() << " pads for rank "
                               << in.size() << ", expected " << 2 * in.size();
  SymShape result;
  for (size_t i = 0; i < in.size(); ++i)
    result.push_back(in[i] + (*pads)[i] + (*pads)[i + in.size()]);
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

LogicalResult NonZeroOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  DimExpr count(1);
  for (const DimExpr &d : in)
    count = count * d;
  results.push_back(SymShape{
      DimExpr((int64_t)in.size()),
      countsEveryElement() ? ctx.constraints.resolve(count)
                           : ctx.freshSymbol("nonzero")});
  return success();
}

LogicalResult
DepthToSpaceOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                    SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  if (in.size() != 4)
    return emitOpError("expects a rank-4 input, got rank ") << in.size();
  int64_t b = getBlocksize();
  if (b <= 0)
    return emitOpError("blocksize ") << b << " must be positive";
  int64_t area;
  if (llvm::MulOverflow(b, b, area))
    return emitOpError("blocksize ") << b << " is too large";
  DimExpr c = DimExpr::floorDiv(in[1], area);
  if (failed(ctx.constraints.requireEqual(c * DimExpr(area), in[1],
                                          getOperation(),
                                          "the channels and a multiple of blocksize^2")))
    return failure();
  results.push_back(ctx.constraints.resolve(
      SymShape{in[0], c, in[2] * DimExpr(b), in[3] * DimExpr(b)}));
  return success();
}

LogicalResult ResizeOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                            SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  if (getSizes()) {
    unsigned index = getScales() ? 2 : 1;
    FailureOr<SmallVector<DimExpr>> sizes =
        shapeFromOperand(ctx, getOperation(), index, "resize");
    if (failed(sizes))
      return failure();
    if (sizes->size() != in.size())
      return emitOpError("has ") << sizes->size() << " sizes for rank "
                                 << in.size();
    results.push_back(ctx.constraints.resolve(*sizes));
    return success();
  }
  if (!getScales())
    return emitOpError("needs scales or sizes");
  // Scales are float constants: floor(dim * p / q) with p/q exact.
  auto constant = getScales().getDefiningOp<ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue())
                        : DenseElementsAttr();
  if (!dense || !isa<FloatType>(dense.getElementType()))
    return emitOpError("scales must be a float constant");
  if ((size_t)dense.getNumElements() != in.size())
    return emitOpError("has ") << dense.getNumElements()
                               << " scales for rank " << in.size();
  SymShape result;
  for (auto [d, scale] : llvm::zip(in, dense.getValues<APFloat>())) {
    double s = scale.convertToDouble();
    if (!std::isfinite(s) || s <= 0)
      return emitOpError("scale ") << s << " is not a positive finite float";
    // A float is a dyadic fraction p / 2^k exactly: floor(dim * p / 2^k)
    // is ONNX's floor(dim * scale) with no rounding. Checked before the
    // conversion to int64_t, which is undefined out of its range.
    int64_t q = 1;
    while (q < (int64_t(1) << 40) && s * q != std::floor(s * q))
      q *= 2;
    double scaled = s * q;
    if (scaled != std::floor(scaled) || scaled >= 0x1p62)
      return emitOpError("scale ")
             << s << " is not p / 2^k with p < 2^62 and k <= 40";
    int64_t p = (int64_t)scaled;
    result.push_back(DimExpr::floorDiv(d * DimExpr(p), q));
  }
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

//===----------------------------------------------------------------------===//
// Compute and normalization
//===----------------------------------------------------------------------===//

LogicalResult
BatchNormOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                 SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  if (in.size() < 2)
    return emitOpError("expects an input of rank at least 2 (N x C x ...), "
                       "got rank ")
           << in.size();
  // Scale, bias, mean and variance: one value per channel each.
  static const char *names[] = {"scale", "bias", "mean", "variance"};
  for (unsigned i = 0; i < 4; ++i) {
    const SymShape &stat = ctx.operandShapes[1 + i];
    if (stat.size() != 1)
      return emitOpError() << names[i] << " must have rank 1 (one value per "
                           << "channel), got rank " << stat.size();
    if (failed(ctx.constraints.requireEqual(
            stat[0], in[1], getOperation(),
            llvm::Twine(names[i]) + "'s length and the channels")))
      return failure();
  }
  results.push_back(ctx.constraints.resolve(in));
  return success();
}

LogicalResult MatMulOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                            SmallVectorImpl<SymShape> &results) {
  SymShape lhs = ctx.operandShapes[0], rhs = ctx.operandShapes[1];
  if (lhs.empty() || rhs.empty())
    return emitOpError("operands must have rank at least 1");
  bool lhsVector = lhs.size() == 1, rhsVector = rhs.size() == 1;
  if (lhsVector)
    lhs.insert(lhs.begin(), DimExpr(1));
  if (rhsVector)
    rhs.push_back(DimExpr(1));
  if (failed(ctx.constraints.requireEqual(lhs.back(), rhs[rhs.size() - 2],
                                          getOperation(),
                                          "the contraction dimensions")))
    return failure();
  SymShape batch;
  if (failed(broadcast(getOperation(),
                       {SymShape(lhs.begin(), lhs.end() - 2),
                        SymShape(rhs.begin(), rhs.end() - 2)},
                       ctx.constraints, batch)))
    return failure();
  if (!lhsVector)
    batch.push_back(lhs[lhs.size() - 2]);
  if (!rhsVector)
    batch.push_back(rhs.back());
  results.push_back(ctx.constraints.resolve(batch));
  return success();
}

LogicalResult GemmOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                          SmallVectorImpl<SymShape> &results) {
  const SymShape &a = ctx.operandShapes[0], &b = ctx.operandShapes[1];
  if (a.size() != 2 || b.size() != 2)
    return emitOpError("expects rank-2 A and B, got ranks ")
           << a.size() << " and " << b.size();
  DimExpr m = getTransA() ? a[1] : a[0], k0 = getTransA() ? a[0] : a[1];
  DimExpr k1 = getTransB() ? b[1] : b[0], n = getTransB() ? b[0] : b[1];
  if (failed(ctx.constraints.requireEqual(k0, k1, getOperation(),
                                          "the contraction dimensions")))
    return failure();
  SymShape result{m, n};
  if (getC()) {
    SymShape out;
    if (failed(broadcast(getOperation(), {result, ctx.operandShapes[2]},
                         ctx.constraints, out)))
      return failure();
    if (out.size() != 2)
      return emitOpError("C does not broadcast to [M, N]");
  }
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

LogicalResult ConvOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                          SmallVectorImpl<SymShape> &results) {
  const SymShape &x = ctx.operandShapes[0], &w = ctx.operandShapes[1];
  size_t spatial = x.size() < 2 ? 0 : x.size() - 2;
  if (x.size() < 3 || w.size() != x.size())
    return emitOpError("expects input and weight of one rank >= 3, got ")
           << x.size() << " and " << w.size();
  if (getStrides().size() != spatial || getDilations().size() != spatial ||
      getPads().size() != 2 * spatial)
    return emitOpError("strides, dilations and pads must have ")
           << spatial << ", " << spatial << " and " << 2 * spatial
           << " entries";
  int64_t group = getGroup();
  if (failed(ctx.constraints.requireEqual(
          x[1], w[1] * DimExpr(group), getOperation(),
          "the input channels and weight channels x group")))
    return failure();
  SymShape result{x[0], w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    result.push_back(windowOutput(x[i + 2], w[i + 2], getStrides()[i], getPads()[i],
                                  getPads()[i + spatial], getDilations()[i],
                                  false, getAutoPad()));
  }
  if (getBias() && failed(ctx.constraints.requireEqual(
                       ctx.operandShapes[2].empty() ? DimExpr(0)
                                                    : ctx.operandShapes[2][0],
                       w[0], getOperation(), "the bias length and output channels")))
    return failure();
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

static LogicalResult poolShape(Operation *op, ShapeInferenceContext &ctx,
                               ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                               bool ceilMode, StringRef autoPad,
                               SmallVectorImpl<SymShape> &results) {
  const SymShape &x = ctx.operandShapes[0];
  size_t spatial = kernel.size();
  if (x.size() != spatial + 2)
    return op->emitOpError("kernel has ")
           << spatial << " dimensions for an input of rank " << x.size();
  if (strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    return op->emitOpError("strides, dilations and pads must have ")
           << spatial << ", " << spatial << " and " << 2 * spatial
           << " entries";
  SymShape result{x[0], x[1]};
  for (size_t i = 0; i < spatial; ++i)
    result.push_back(windowOutput(x[i + 2], DimExpr(kernel[i]), strides[i], pads[i],
                                  pads[i + spatial], dilations[i], ceilMode,
                                  autoPad));
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

LogicalResult MaxPoolOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  if (failed(poolShape(getOperation(), ctx, getKernelShape(), getStrides(),
                       getPads(), getDilations(), getCeilMode(), getAutoPad(),
                       results)))
    return failure();
  if (getIndices())
    results.push_back(results.front()); // Indices have the output's shape.
  return success();
}

LogicalResult AvgPoolOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                             SmallVectorImpl<SymShape> &results) {
  return poolShape(getOperation(), ctx, getKernelShape(), getStrides(),
                   getPads(), getDilations(), getCeilMode(), getAutoPad(),
                   results);
}

LogicalResult
Im2ColOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                              SmallVectorImpl<SymShape> &results) {
  ArrayRef<int64_t> kernel = getKernelShape();
  if (kernel.size() != 1 && kernel.size() != 2)
    return emitOpError("takes a 1-D or 2-D window, got ")
           << kernel.size() << " dimensions";
  int64_t area = 1;
  for (ArrayRef<int64_t> values : {kernel, getStrides(), getDilations()})
    for (int64_t v : values)
      if (v <= 0)
        return emitOpError("window sizes, strides and dilations must be "
                           "positive, got ")
               << v;
  for (int64_t p : getPads())
    if (p < 0)
      return emitOpError("pads must not be negative, got ") << p;
  if (kernel.size() == 2 && llvm::MulOverflow(kernel[0], kernel[1], area))
    return emitOpError("window ")
           << kernel[0] << "x" << kernel[1] << " is too large";
  if (kernel.size() == 1)
    area = kernel[0];
  if (failed(poolShape(getOperation(), ctx, kernel, getStrides(), getPads(),
                       getDilations(), false, "NOTSET", results)))
    return failure();
  results.back()[1] =
      ctx.constraints.resolve(results.back()[1] * DimExpr(area));
  if (getBatchInner())
    std::swap(results.back()[0], results.back()[1]);
  return success();
}

static LogicalResult globalPool(Operation *op, ShapeInferenceContext &ctx,
                                SmallVectorImpl<SymShape> &results) {
  const SymShape &x = ctx.operandShapes[0];
  if (x.size() < 2)
    return op->emitOpError("expects rank >= 2, got ") << x.size();
  SymShape result{x[0], x[1]};
  result.resize(x.size(), DimExpr(1));
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

LogicalResult
GlobalAvgPoolOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                     SmallVectorImpl<SymShape> &results) {
  return globalPool(getOperation(), ctx, results);
}

LogicalResult
GlobalMaxPoolOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                     SmallVectorImpl<SymShape> &results) {
  return globalPool(getOperation(), ctx, results);
}

static LogicalResult reduceShape(Operation *op, ShapeInferenceContext &ctx,
                                 std::optional<ArrayRef<int64_t>> axes,
                                 bool keepDims,
                                 SmallVectorImpl<SymShape> &results) {
  const SymShape &in = ctx.operandShapes[0];
  int64_t rank = in.size();
  // Absent or empty axes reduce everything (ONNX).
  bool all = !axes || axes->empty();
  SmallVector<bool> reduced(rank, all);
  if (!all)
    for (int64_t axis : *axes) {
      FailureOr<int64_t> a = normalizeAxis(op, axis, rank);
      if (failed(a))
        return failure();
      reduced[*a] = true;
    }
  SymShape result;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[i])
      result.push_back(in[i]);
    else if (keepDims)
      result.push_back(DimExpr(1));
  }
  results.push_back(ctx.constraints.resolve(result));
  return success();
}

#define DYNCC_REDUCE_SHAPE(OP)                                                 \
  LogicalResult OP::inferSymbolicShapes(ShapeInferenceContext &ctx,            \
                                        SmallVectorImpl<SymShape> &results) {  \
    return reduceShape(getOperation(), ctx, getAxes(), getKeepdims(),          \
                       results);                                               \
  }
DYNCC_REDUCE_SHAPE(ReduceMeanOp)
#undef DYNCC_REDUCE_SHAPE

/// A reduction whose contents fold when it reduces a whole 1-D value (shape
/// arithmetic: the product of some dimensions, tf2onnx's Tensordot).
static LogicalResult
reduceWithValues(Operation *op, ShapeInferenceContext &ctx,
                 std::optional<ArrayRef<int64_t>> axes, bool keepDims,
                 SmallVectorImpl<SymShape> &results,
                 function_ref<DimExpr(const DimExpr &, const DimExpr &)> fn) {
  if (failed(reduceShape(op, ctx, axes, keepDims, results)))
    return failure();
  // Contents fold when the whole vector is reduced into one element.
  if (ctx.operandShapes[0].size() == 1 && ctx.operandValues[0] &&
      !ctx.operandValues[0]->empty() && results.front().size() <= 1) {
    DimExpr acc = (*ctx.operandValues[0])[0];
    for (const DimExpr &v : ArrayRef(*ctx.operandValues[0]).drop_front())
      acc = fn(acc, v);
    ctx.resultValues[0] = SymValue{acc};
  }
  return success();
}

LogicalResult ReduceSumOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                               SmallVectorImpl<SymShape> &results) {
  return reduceWithValues(getOperation(), ctx, getAxes(), getKeepdims(), results,
                          [](const DimExpr &a, const DimExpr &b) { return a + b; });
}
LogicalResult ReduceProdOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                                SmallVectorImpl<SymShape> &results) {
  return reduceWithValues(getOperation(), ctx, getAxes(), getKeepdims(), results,
                          [](const DimExpr &a, const DimExpr &b) { return a * b; });
}
LogicalResult ReduceMaxOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                               SmallVectorImpl<SymShape> &results) {
  return reduceWithValues(getOperation(), ctx, getAxes(), getKeepdims(), results,
                          [](const DimExpr &a, const DimExpr &b) {
                            return DimExpr::max(a, b);
                          });
}
LogicalResult ReduceMinOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                               SmallVectorImpl<SymShape> &results) {
  return reduceWithValues(getOperation(), ctx, getAxes(), getKeepdims(), results,
                          [](const DimExpr &a, const DimExpr &b) {
                            return DimExpr::min(a, b);
                          });
}

LogicalResult LayerNormOp::inferSymbolicShapes(ShapeInferenceContext &ctx,
                                               SmallVectorImpl<SymShape> &results) {
  const SymShape &x = ctx.operandShapes[0];
  FailureOr<int64_t> axis = normalizeAxis(getOperation(), getAxis(), x.size());
  if (failed(axis))
    return failure();
  SymShape normalized(x.begin() + *axis, x.end());
  SymShape scaleShape;
  if (failed(broadcast(getOperation(), {normalized, ctx.operandShapes[1]},
                       ctx.constraints, scaleShape)))
    return failure();
  if (failed(sameShape(ctx, results)))
    return failure();
  // Mean and inverse standard deviation: normalized dimensions kept as 1.
  SymShape stats(x.begin(), x.begin() + *axis);
  stats.resize(x.size(), DimExpr(1));
  for (unsigned i = 0; i < getStatistics().size(); ++i)
    results.push_back(ctx.constraints.resolve(stats));
  return success();
}
