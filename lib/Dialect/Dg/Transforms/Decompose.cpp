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
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace dyncc::dg {
#define GEN_PASS_DEF_DECOMPOSEPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// Builds primitives with symbolic result types from the operands' shapes.
class PrimitiveBuilder {
public:
  PrimitiveBuilder(RewriterBase &rewriter, Location loc)
      : b(rewriter), loc(loc) {}

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
  template <typename ReduceOpTy> Value reduce(Value x, ArrayRef<int64_t> axes) {
    SmallVector<DimExpr> shape = shapeOf(x);
    for (int64_t a : axes)
      shape[a] = DimExpr(1);
    return ReduceOpTy::create(
        b, loc, typeOf(shape, getElementTypeOrSelf(x.getType())), x,
        b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  }

  /// The numpy broadcast of two shapes whose dims are equal or 1.
  static SmallVector<DimExpr> broadcast(ArrayRef<DimExpr> a,
                                        ArrayRef<DimExpr> b) {
    size_t rank = std::max(a.size(), b.size());
    SmallVector<DimExpr> result(rank, DimExpr(1));
    for (size_t i = 0; i < rank; ++i) {
      const DimExpr *da =
          i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
      const DimExpr *db =
          i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
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
    return ConstantOp::create(
        b, loc, type, DenseElementsAttr::get(type, b.getFloatAttr(et, value)));
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
Value decomposeSoftmax(PrimitiveBuilder &h, SoftmaxOpTy op, bool log) {
  Value x = op.getInput();
  SmallVector<int64_t> axes =
      softmaxAxes(static_cast<int64_t>(op.getAxis()), op.getCoerce_2d(),
                  PrimitiveBuilder::shapeOf(x).size());
  Value max = h.reduce<ReduceMaxOp>(x, axes);
  Value shifted = h.binary<SubOp>(x, max);
  Value exp = h.unary<ExpOp>(shifted);
  Value sum = h.reduce<ReduceSumOp>(exp, axes);
  if (!log)
    return h.binary<DivOp>(exp, sum);
  return h.binary<SubOp>(shifted, h.unary<LogOp>(sum));
}

/// Returns the normalized result, then the mean and the inverse standard
/// deviation (ONNX's optional second and third outputs).
SmallVector<Value> decomposeLayerNorm(PrimitiveBuilder &h, LayerNormOp op) {
  Value x = op.getInput();
  Value scale = op.getScale(), bias = op.getBias();
  SmallVector<DimExpr> shape = PrimitiveBuilder::shapeOf(x);
  int64_t rank = shape.size();
  // I64Attr accessors return uint64_t: read the axis as signed.
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0)
    axis += rank;
  // Over several axes, normalize rows: [outer, inner], with the scale and
  // bias broadcast to the normalized shape and flattened the same way, and
  // the results reshaped back. The statistics then reduce one row (a row
  // kernel) instead of several loops whose centred values a kernel would
  // keep whole with no static bound. Only where the normalized size is not
  // static: the reshapes are copies outside the reduction's kernel.
  ArrayRef<DimExpr> normalized = ArrayRef(shape).drop_front(axis);
  DimExpr outer(1), inner(1);
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) = (d < axis ? outer : inner) * shape[d];
  auto fits = [&](Value v) {
    return !v || PrimitiveBuilder::shapeOf(v).size() <= normalized.size();
  };
  Type et = getElementTypeOrSelf(x.getType());
  auto dimValues = [&](ArrayRef<DimExpr> dims) -> Value {
    return DimValuesOp::create(
        h.b, h.loc,
        RankedTensorType::get({(int64_t)dims.size()}, h.b.getI64Type()),
        sym::ShapeAttr::get(h.b.getContext(), dims));
  };
  // The form InstanceNormalization imports as (from axis 2, a unit scalar
  // scale, no bias) is not flattened: its statistics over the image are
  // one kernel with its per-channel affine as the epilogue, whose axes
  // dyncc-collapse-row-dims makes rows where every op of the kernel reads
  // them whole or not at all (else the kernel keeps its loops, which it
  // can over an image's two axes).
  auto unit = scale.getDefiningOp<ConstantOp>();
  auto splat = unit ? dyn_cast<SplatElementsAttr>(unit.getValue()) : nullptr;
  bool unitScale = splat && isa<FloatType>(splat.getElementType()) &&
                   splat.getSplatValue<APFloat>().isExactlyValue(1.0);
  bool instance = axis == 2 && unitScale && !bias &&
                  PrimitiveBuilder::shapeOf(scale).empty();
  if (rank - axis > 1 && !inner.isConstant() && fits(scale) && fits(bias) &&
      !instance) {
    auto flatten = [&](Value v, int64_t at, DimExpr lead) -> Value {
      if (!v)
        return v;
      if (at == 0 && ArrayRef(PrimitiveBuilder::shapeOf(v)) != normalized)
        v = ExpandOp::create(h.b, h.loc, h.typeOf(normalized, et), v,
                             dimValues(normalized));
      return FlattenOp::create(h.b, h.loc, h.typeOf({lead, inner}, et), v,
                               static_cast<uint64_t>(at));
    };
    auto reshape = [&](Value v, ArrayRef<DimExpr> to) -> Value {
      return ReshapeOp::create(h.b, h.loc, h.typeOf(to, et), v, dimValues(to));
    };
    // The same op over rows: [outer, inner], statistics [outer, 1].
    SmallVector<Value> operands{flatten(x, axis, outer),
                                flatten(scale, 0, DimExpr(1))};
    if (bias)
      operands.push_back(flatten(bias, 0, DimExpr(1)));
    SmallVector<Type> types{h.typeOf({outer, inner}, et)};
    for (Value stat : op.getStatistics())
      types.push_back(h.typeOf({outer, DimExpr(1)},
                               getElementTypeOrSelf(stat.getType())));
    auto flat = LayerNormOp::create(h.b, h.loc, types, operands,
                                    op->getAttrs());
    flat.setAxis(1);
    SmallVector<DimExpr> keep(shape.begin(), shape.end());
    for (int64_t d = axis; d < rank; ++d)
      keep[d] = DimExpr(1);
    SmallVector<Value> flatResults = decomposeLayerNorm(h, flat);
    SmallVector<Value> results{reshape(flatResults[0], shape)};
    for (Value stat : ArrayRef(flatResults).drop_front())
      results.push_back(reshape(stat, keep));
    flat->erase();
    return results;
  }
  SmallVector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a)
    axes.push_back(a);
  Value mean = h.reduce<ReduceMeanOp>(x, axes);
  Value centered = h.binary<SubOp>(x, mean);
  Value square = h.binary<MulOp>(centered, centered);
  Value variance = h.reduce<ReduceMeanOp>(square, axes);
  Value eps = h.scalar(x, op.getEpsilon().convertToFloat());
  Value stddev = h.unary<SqrtOp>(h.binary<AddOp>(variance, eps));
  // A unit scale (an InstanceNormalization's) multiplies nothing.
  Value y = h.binary<DivOp>(centered, stddev);
  if (!unitScale || PrimitiveBuilder::shapeOf(scale).size() > shape.size())
    y = h.binary<MulOp>(y, scale);
  if (bias)
    y = h.binary<AddOp>(y, bias);
  SmallVector<Value> results{y};
  if (!op.getStatistics().empty())
    results.push_back(mean);
  if (op.getStatistics().size() > 1)
    results.push_back(h.unary<ReciprocalOp>(stddev));
  return results;
}

Value decomposeGemm(PrimitiveBuilder &h, GemmOp op) {
  auto transpose = [&](Value v) -> Value {
    SmallVector<DimExpr> s = PrimitiveBuilder::shapeOf(v);
    std::swap(s[0], s[1]);
    return TransposeOp::create(h.b, h.loc,
                               h.typeOf(s, getElementTypeOrSelf(v.getType())),
                               v, h.b.getDenseI64ArrayAttr({1, 0}));
  };
  Value a = op.getTransA() ? transpose(op.getA()) : op.getA();
  Value b = op.getTransB() ? transpose(op.getB()) : op.getB();
  SmallVector<DimExpr> sa = PrimitiveBuilder::shapeOf(a);
  SmallVector<DimExpr> sb = PrimitiveBuilder::shapeOf(b);
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

/// The most elements of a splat constant readFloats expands.
constexpr int64_t kMaxSplatValues = int64_t(1) << 24;

/// The values of a constant f32/f64 tensor, whether inline or a resource:
/// as many as its type has elements.
std::optional<std::vector<double>> readFloats(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = cast<RankedTensorType>(constant.getType());
  Type et = type.getElementType();
  if (!et.isF32() && !et.isF64() && !et.isF16() && !et.isBF16())
    return std::nullopt;
  std::vector<double> values;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    // A splat (a folded ConstantOfShape or Expand) may have any shape: one
    // of 2^40 elements would take hours to expand and terabytes to hold.
    // Folds read weights of the sizes real layers have.
    if (dense.isSplat() && type.getNumElements() > kMaxSplatValues)
      return std::nullopt;
    for (const APFloat &v : dense.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  AsmResourceBlob *blob =
      resource ? resource.getRawHandle().getBlob() : nullptr;
  if (!blob)
    return std::nullopt;
  ArrayRef<char> data = blob->getData();
  size_t width = et.getIntOrFloatBitWidth() / 8;
  // Divided, not multiplied: a product of the element count can wrap.
  if (data.size() % width != 0 ||
      data.size() / width != static_cast<size_t>(type.getNumElements()))
    return std::nullopt;
  values.resize(type.getNumElements());
  const llvm::fltSemantics &semantics = cast<FloatType>(et).getFloatSemantics();
  for (size_t i = 0; i < values.size(); ++i) {
    if (width == 4) {
      float f;
      std::memcpy(&f, data.data() + i * 4, 4);
      values[i] = f;
    } else if (width == 8) {
      std::memcpy(&values[i], data.data() + i * 8, 8);
    } else {
      uint16_t bits;
      std::memcpy(&bits, data.data() + i * 2, 2);
      values[i] = APFloat(semantics, APInt(16, bits)).convertToDouble();
    }
  }
  return values;
}

/// A constant of `type` (f32, f64, f16 or bf16) holding `values`, each
/// rounded to the nearest of the element type: inline when small, else a
/// resource blob like the importer's weights.
Value makeFloats(OpBuilder &b, Location loc, RankedTensorType type,
                 ArrayRef<double> values, StringRef name) {
  ElementsAttr attr;
  Type et = type.getElementType();
  if (et.isF16() || et.isBF16()) {
    const llvm::fltSemantics &semantics =
        cast<FloatType>(et).getFloatSemantics();
    std::vector<uint16_t> bits;
    SmallVector<APFloat> rounded;
    for (double v : values) {
      APFloat f(v);
      bool lost;
      f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      bits.push_back(static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue()));
      if ((int64_t)values.size() <= kMaxTrackedValues)
        rounded.push_back(f);
    }
    if ((int64_t)values.size() <= kMaxTrackedValues)
      attr = DenseElementsAttr::get(type, rounded);
    else
      attr = DenseResourceElementsAttr::get(
          type, name,
          HeapAsmResourceBlob::allocateAndCopyInferAlign(
              ArrayRef<uint16_t>(bits)));
    return ConstantOp::create(b, loc, type, attr);
  }
  if (et.isF32()) {
    std::vector<float> f(values.begin(), values.end());
    if ((int64_t)f.size() <= kMaxTrackedValues)
      attr = DenseElementsAttr::get(type, ArrayRef<float>(f));
    else
      attr = DenseResourceElementsAttr::get(
          type, name,
          HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(f)));
  } else if ((int64_t)values.size() <= kMaxTrackedValues) {
    attr = DenseElementsAttr::get(type, values);
  } else {
    attr = DenseResourceElementsAttr::get(
        type, name, HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
  }
  return ConstantOp::create(b, loc, type, attr);
}

/// Inference batch normalization with constant statistics as a per-channel
/// affine map y = x * s + t, s = scale / sqrt(var + eps), t = bias - mean * s.
struct ChannelAffine {
  std::vector<double> s, t;
};
std::optional<ChannelAffine> channelAffine(BatchNormOp bn, int64_t channels) {
  // The statistics are `channels` values each; checked on their types
  // before any is read.
  for (Value v : {bn.getScale(), bn.getBias(), bn.getMean(), bn.getVariance()}) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape() || type.getNumElements() != channels)
      return std::nullopt;
  }
  auto scale = readFloats(bn.getScale()), bias = readFloats(bn.getBias());
  auto mean = readFloats(bn.getMean()), var = readFloats(bn.getVariance());
  if (!scale || !bias || !mean || !var)
    return std::nullopt;
  ChannelAffine a;
  double eps = bn.getEpsilon().convertToFloat();
  for (size_t c = 0; c < scale->size(); ++c) {
    double s = (*scale)[c] / std::sqrt((*var)[c] + eps);
    a.s.push_back(s);
    a.t.push_back((*bias)[c] - (*mean)[c] * s);
  }
  return a;
}

/// Folds `bn` into the conv that produces its input when that conv's only
/// user is `bn` and its weights are constants: W' = W * s per output
/// channel, b' = b * s + t. Returns the new conv's result.
FailureOr<Value> foldIntoConv(RewriterBase &rewriter, BatchNormOp bn,
                              unsigned &counter) {
  auto conv = bn.getInput().getDefiningOp<ConvOp>();
  if (!conv || !conv->hasOneUse())
    return failure();
  auto wType = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  if (!wType || !wType.hasStaticShape() || wType.getRank() == 0 ||
      wType.getDimSize(0) == 0 ||
      wType.getElementType() != getElementTypeOrSelf(bn.getScale().getType()))
    return failure();
  int64_t out = wType.getDimSize(0);
  // Each statistic and the weight have as many values as their types say.
  std::optional<ChannelAffine> a = channelAffine(bn, out);
  if (!a)
    return failure();
  std::optional<std::vector<double>> w = readFloats(conv.getWeight());
  if (!w)
    return failure();
  std::vector<double> b(out, 0.0);
  if (conv.getBias()) {
    std::optional<std::vector<double>> cb = readFloats(conv.getBias());
    if (!cb || (int64_t)cb->size() != out)
      return failure();
    b = *cb;
  }
  size_t perChannel = w->size() / out;
  for (int64_t o = 0; o < out; ++o) {
    for (size_t i = 0; i < perChannel; ++i)
      (*w)[o * perChannel + i] *= a->s[o];
    b[o] = b[o] * a->s[o] + a->t[o];
  }
  rewriter.setInsertionPoint(conv);
  Location loc = bn.getLoc();
  std::string n = std::to_string(counter++);
  Value weight = makeFloats(rewriter, loc, wType, *w, "bn_folded_w" + n);
  Value bias = makeFloats(rewriter, loc,
                          RankedTensorType::get({out}, wType.getElementType()),
                          b, "bn_folded_b" + n);
  auto folded = ConvOp::create(
      rewriter, conv.getLoc(), bn.getType(), conv.getInput(), weight, bias,
      conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
      conv.getGroupAttr(), conv.getAutoPadAttr());
  return folded.getResult();
}

/// NonZero of a 1-D tensor with no zero (a ConstantOfShape of a non-zero
/// value: `arange` as older exporters write it) is `[0, n)` as one row:
/// a Range, which is an indexed elementwise op instead of a sequential scan
/// with a count bound from data.
Value decomposeNonZeroOfFill(RewriterBase &b, NonZeroOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<DimExpr> shape = *sym::getSymbolicShape(type);
  Location loc = op.getLoc();
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  auto scalar = [&](int64_t value) -> Value {
    return ConstantOp::create(
        b, loc, scalarType,
        DenseElementsAttr::get(
            scalarType, b.getIntegerAttr(type.getElementType(), value)));
  };
  Value limit = DimValuesOp::create(
      b, loc, scalarType, sym::ShapeAttr::get(b.getContext(), {shape[1]}));
  auto rowType = sym::withSymbolicShape(
      RankedTensorType::get({type.getDimSize(1)}, type.getElementType()),
      {shape[1]});
  Value row = RangeOp::create(b, loc, rowType, scalar(0), limit, scalar(1));
  return UnsqueezeOp::create(b, loc, type, row, b.getDenseI64ArrayAttr({0}));
}

/// A one-pixel conv with strides (a ResNet's downsampling shortcut, or its
/// first 1x1 in caffe2's blocks) is the same conv, stride 1, of the image
/// subsampled by a strided slice: the slice is a data-movement kernel and
/// the conv a GEMM over the pixels (dyncc-pointwise-conv-as-gemm), where the
/// strided conv stayed a direct one on SIMT threads. Only for one group, no
/// padding and a static 1x1 window. The slice's type takes the conv's
/// output sizes, which the rewrite keeps. Returns the new conv's result.
FailureOr<Value> splitPointwiseStride(RewriterBase &rewriter, ConvOp conv) {
  auto wType = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  auto inType = dyn_cast<RankedTensorType>(conv.getInput().getType());
  std::optional<SmallVector<DimExpr>> inShape =
      sym::getSymbolicShape(conv.getInput().getType());
  std::optional<SmallVector<DimExpr>> outShape =
      sym::getSymbolicShape(conv.getType());
  if (!wType || !inType || !inShape || !outShape || conv.getGroup() != 1 ||
      !wType.hasStaticShape() || wType.getRank() != inType.getRank() ||
      inType.getRank() < 3 || outShape->size() != inShape->size() ||
      (conv.getAutoPad() != "NOTSET" && conv.getAutoPad() != "VALID") ||
      llvm::any_of(wType.getShape().drop_front(2),
                   [](int64_t d) { return d != 1; }) ||
      llvm::any_of(conv.getPads(), [](int64_t p) { return p != 0; }) ||
      llvm::all_of(conv.getStrides(), [](int64_t s) { return s == 1; }))
    return failure();
  int64_t rank = inType.getRank(), spatial = rank - 2;
  if ((int64_t)conv.getStrides().size() != spatial)
    return failure();
  rewriter.setInsertionPoint(conv);
  Location loc = conv.getLoc();
  auto indices = [&](ArrayRef<int64_t> values) -> Value {
    auto type = RankedTensorType::get({spatial}, rewriter.getI64Type());
    return ConstantOp::create(rewriter, loc, type,
                              DenseElementsAttr::get(type, values));
  };
  SmallVector<int64_t> axes, zeros(spatial, 0),
      ends(spatial, std::numeric_limits<int64_t>::max());
  for (int64_t a = 2; a < rank; ++a)
    axes.push_back(a);
  SmallVector<DimExpr> sliced = *inShape;
  SmallVector<int64_t> dims(inType.getShape());
  for (int64_t a = 2; a < rank; ++a) {
    sliced[a] = (*outShape)[a];
    dims[a] = sliced[a].getConstant().value_or(ShapedType::kDynamic);
  }
  Type slicedType = sym::withSymbolicShape(
      RankedTensorType::get(dims, inType.getElementType()), sliced);
  Value image = SliceOp::create(rewriter, loc, slicedType, conv.getInput(),
                                indices(zeros), indices(ends), indices(axes),
                                indices(conv.getStrides()));
  auto unit = ConvOp::create(
      rewriter, loc, conv.getType(), image, conv.getWeight(), conv.getBias(),
      rewriter.getDenseI64ArrayAttr(SmallVector<int64_t>(spatial, 1)),
      conv.getPadsAttr(), conv.getDilationsAttr(), conv.getGroupAttr(),
      conv.getAutoPadAttr());
  return unit.getResult();
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
    // BatchNormalization after a conv with constant weights folds into it.
    SmallVector<BatchNormOp> norms;
    getOperation().walk([&](BatchNormOp bn) { norms.push_back(bn); });
    unsigned counter = 0;
    for (BatchNormOp bn : norms) {
      FailureOr<Value> folded = foldIntoConv(rewriter, bn, counter);
      if (failed(folded))
        continue;
      Operation *conv = bn.getInput().getDefiningOp();
      rewriter.replaceAllUsesWith(bn.getResult(), *folded);
      rewriter.eraseOp(bn);
      rewriter.eraseOp(conv);
    }
    // Strided one-pixel convs (after the folds, which take the conv as it
    // is) as a strided slice and a stride-1 conv.
    SmallVector<ConvOp> strided;
    getOperation().walk([&](ConvOp conv) { strided.push_back(conv); });
    for (ConvOp conv : strided) {
      FailureOr<Value> unit = splitPointwiseStride(rewriter, conv);
      if (failed(unit))
        continue;
      rewriter.replaceAllUsesWith(conv.getResult(), *unit);
      rewriter.eraseOp(conv);
    }
    SmallVector<NonZeroOp> ranges;
    getOperation().walk([&](NonZeroOp op) {
      auto type = dyn_cast<RankedTensorType>(op.getType());
      if (op.countsEveryElement() && type && type.getRank() == 2 &&
          type.getDimSize(0) == 1 && sym::getSymbolicShape(type))
        ranges.push_back(op);
    });
    for (NonZeroOp op : ranges) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, decomposeNonZeroOfFill(rewriter, op));
    }
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      PrimitiveBuilder h(rewriter, op->getLoc());
      SmallVector<Value> results =
          llvm::TypeSwitch<Operation *, SmallVector<Value>>(op)
              .Case([&](SoftmaxOp o) {
                return SmallVector<Value>{decomposeSoftmax(h, o, false)};
              })
              .Case([&](LogSoftmaxOp o) {
                return SmallVector<Value>{decomposeSoftmax(h, o, true)};
              })
              .Case([&](LayerNormOp o) { return decomposeLayerNorm(h, o); })
              .Case([&](GemmOp o) {
                return SmallVector<Value>{decomposeGemm(h, o)};
              });
      for (auto [result, old] : llvm::zip_equal(results, op->getResults())) {
        if (result.getType() != old.getType()) {
          op->emitOpError("decomposes to ")
              << result.getType() << ", not its type " << old.getType();
          return signalPassFailure();
        }
        rewriter.replaceAllUsesWith(old, result);
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
