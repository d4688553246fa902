//===- Decompose.cpp - Compound ops into primitives before fusion ---------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Softmax, LogSoftmax, LayerNormalization and Gemm become the primitives
// fusion groups are made of: row reductions (with keepdims) and elementwise
// ops, so that the reduce-level pass keeps each one on chip as one group and
// a Gemm's alpha, beta and C join its matmul's epilogue.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_DECOMPOSEPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// Builds primitives with symbolic result types from the operands' shapes.
class Builder {
public:
  Builder(RewriterBase &rewriter, Location loc) : b(rewriter), loc(loc) {}

  static SmallVector<DimExpr> shapeOf(Value v) {
    return *sym::getSymbolicShape(v.getType());
  }

  Type typeOf(ArrayRef<DimExpr> shape, Type elementType) {
    SmallVector<int64_t> dims;
    for (const DimExpr &d : shape)
      dims.push_back(d.getConstant().value_or(ShapedType::kDynamic));
    return sym::withSymbolicShape(RankedTensorType::get(dims, elementType),
                                  shape);
  }

  /// `kind` over `axes` of `x`, keeping them.
  template <typename ReduceOpTy>
  Value reduce(Value x, ArrayRef<int64_t> axes) {
    SmallVector<DimExpr> shape = shapeOf(x);
    for (int64_t a : axes)
      shape[a] = DimExpr(1);
    return ReduceOpTy::create(b, loc,
                              typeOf(shape, getElementTypeOrSelf(x.getType())),
                              x, b.getDenseI64ArrayAttr(axes),
                              b.getBoolAttr(true));
  }

  /// The numpy broadcast of two shapes whose dims are equal or 1.
  static SmallVector<DimExpr> broadcast(ArrayRef<DimExpr> a,
                                        ArrayRef<DimExpr> b) {
    size_t rank = std::max(a.size(), b.size());
    SmallVector<DimExpr> result(rank, DimExpr(1));
    for (size_t i = 0; i < rank; ++i) {
      const DimExpr *da = i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
      const DimExpr *db = i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
      if (da && *da != DimExpr(1))
        result[i] = *da;
      else if (db)
        result[i] = *db;
    }
    return result;
  }

  template <typename BinaryOpTy> Value binary(Value x, Value y) {
    SmallVector<DimExpr> shape = broadcast(shapeOf(x), shapeOf(y));
    return BinaryOpTy::create(
        b, loc, typeOf(shape, getElementTypeOrSelf(x.getType())), x, y);
  }

  template <typename UnaryOpTy> Value unary(Value x) {
    return UnaryOpTy::create(b, loc, x.getType(), x);
  }

  /// A scalar constant of `x`'s element type.
  Value scalar(Value x, double value) {
    Type et = getElementTypeOrSelf(x.getType());
    auto type = RankedTensorType::get({}, et);
    return ConstantOp::create(b, loc, type,
                              DenseElementsAttr::get(type, b.getFloatAttr(et, value)));
  }

  RewriterBase &b;
  Location loc;
};

/// The axes a softmax-like op reduces: `axis` alone, or from `axis` to the
/// end in the opset < 13 form (coerced to 2-D).
SmallVector<int64_t> softmaxAxes(int64_t axis, bool coerce2d, int64_t rank) {
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> axes;
  for (int64_t a = axis; a < (coerce2d ? rank : axis + 1); ++a)
    axes.push_back(a);
  return axes;
}

template <typename SoftmaxOpTy>
Value decomposeSoftmax(Builder &h, SoftmaxOpTy op, bool log) {
  Value x = op.getInput();
  SmallVector<int64_t> axes =
      softmaxAxes(static_cast<int64_t>(op.getAxis()), op.getCoerce_2d(),
                  Builder::shapeOf(x).size());
  Value max = h.reduce<ReduceMaxOp>(x, axes);
  Value shifted = h.binary<SubOp>(x, max);
  Value exp = h.unary<ExpOp>(shifted);
  Value sum = h.reduce<ReduceSumOp>(exp, axes);
  if (!log)
    return h.binary<DivOp>(exp, sum);
  return h.binary<SubOp>(shifted, h.unary<LogOp>(sum));
}

Value decomposeLayerNorm(Builder &h, LayerNormOp op) {
  Value x = op.getInput();
  int64_t rank = Builder::shapeOf(x).size();
  // I64Attr accessors return uint64_t: read the axis as signed.
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  SmallVector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a)
    axes.push_back(a);
  Value mean = h.reduce<ReduceMeanOp>(x, axes);
  Value centered = h.binary<SubOp>(x, mean);
  Value square = h.binary<MulOp>(centered, centered);
  Value variance = h.reduce<ReduceMeanOp>(square, axes);
  Value eps = h.scalar(x, op.getEpsilon().convertToFloat());
  Value stddev = h.unary<SqrtOp>(h.binary<AddOp>(variance, eps));
  Value y = h.binary<MulOp>(h.binary<DivOp>(centered, stddev), op.getScale());
  if (op.getBias())
    y = h.binary<AddOp>(y, op.getBias());
  return y;
}

Value decomposeGemm(Builder &h, GemmOp op) {
  auto transpose = [&](Value v) -> Value {
    SmallVector<DimExpr> s = Builder::shapeOf(v);
    std::swap(s[0], s[1]);
    return TransposeOp::create(h.b, h.loc,
                               h.typeOf(s, getElementTypeOrSelf(v.getType())),
                               v, h.b.getDenseI64ArrayAttr({1, 0}));
  };
  Value a = op.getTransA() ? transpose(op.getA()) : op.getA();
  Value b = op.getTransB() ? transpose(op.getB()) : op.getB();
  SmallVector<DimExpr> sa = Builder::shapeOf(a), sb = Builder::shapeOf(b);
  Value y = MatMulOp::create(
      h.b, h.loc, h.typeOf({sa[0], sb[1]}, getElementTypeOrSelf(a.getType())),
      a, b);
  float alpha = op.getAlpha().convertToFloat();
  float beta = op.getBeta().convertToFloat();
  if (alpha != 1.0f)
    y = h.binary<MulOp>(y, h.scalar(y, alpha));
  if (Value c = op.getC(); c && beta != 0.0f) {
    if (beta != 1.0f)
      c = h.binary<MulOp>(c, h.scalar(c, beta));
    y = h.binary<AddOp>(y, c);
  }
  return y;
}

struct Decompose final : ::dyncc::dg::impl::DecomposePassBase<Decompose> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, GemmOp>(op) &&
          llvm::all_of(op->getOperandTypes(), [](Type t) {
            return sym::getSymbolicShape(t).has_value();
          }))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      // LayerNormalization's mean and inverse-stddev outputs (training) are
      // left to the compound op.
      if (auto ln = dyn_cast<LayerNormOp>(op))
        if (llvm::any_of(ln.getStatistics(),
                         [](Value v) { return !v.use_empty(); }))
          continue;
      rewriter.setInsertionPoint(op);
      Builder h(rewriter, op->getLoc());
      Value result =
          llvm::TypeSwitch<Operation *, Value>(op)
              .Case([&](SoftmaxOp o) { return decomposeSoftmax(h, o, false); })
              .Case([&](LogSoftmaxOp o) { return decomposeSoftmax(h, o, true); })
              .Case([&](LayerNormOp o) { return decomposeLayerNorm(h, o); })
              .Case([&](GemmOp o) { return decomposeGemm(h, o); });
      if (result.getType() != op->getResult(0).getType()) {
        op->emitOpError("decomposes to ")
            << result.getType() << ", not its type " << op->getResult(0).getType();
        return signalPassFailure();
      }
      rewriter.replaceAllUsesWith(op->getResult(0), result);
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
