//===- OnnxOps.cpp - One importer per ONNX op type ------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each handler maps one ONNX op, at every opset version its node tests use,
// onto dg ops. Attributes that became inputs over the opsets (axes, pads,
// split, starts/ends, min/max, ...) are read from either place; inputs that
// structure the kernel must be constants. Results are unranked: the
// dyncc-infer-shapes pass computes their symbolic shapes.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace dyncc;
using namespace dyncc::importer;

namespace {

/// Shorthands: the boolean and i64 element types.
Type i1(NodeContext &ctx) { return ctx.builder().getI1Type(); }
Type i64(NodeContext &ctx) { return ctx.builder().getI64Type(); }

/// A one-input op whose result has the input's element type, or i64 (the
/// ops that measure their input: Size, NonZero).
template <typename OpTy, bool i64Result = false>
LogicalResult unary(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Type et = i64Result ? i64(ctx) : ctx.elementTypeOf(*x);
  ctx.setOutput(0, OpTy::create(ctx.builder(), ctx.loc, ctx.resultType(et), *x));
  return success();
}

/// A binary op; `boolResult` for comparisons. Legacy broadcasting with an
/// `axis` (opset < 7) is refused.
template <typename OpTy>
LogicalResult binary(NodeContext &ctx, bool boolResult = false) {
  if (failed(ctx.expectArity(2, 2)))
    return failure();
  if (ctx.attr("axis") && ctx.opset() < 7)
    return ctx.fail("legacy broadcasting with 'axis' (opset < 7) is not "
                    "supported");
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  if (failed(a) || failed(b))
    return failure();
  if (ctx.elementTypeOf(*a) != ctx.elementTypeOf(*b))
    return ctx.fail("inputs have different element types");
  Type et = boolResult ? i1(ctx) : ctx.elementTypeOf(*a);
  ctx.setOutput(0, OpTy::create(ctx.builder(), ctx.loc, ctx.resultType(et),
                                *a, *b));
  return success();
}

/// Min/Max/Sum/Mean: variadic, folded left.
template <typename OpTy>
LogicalResult variadic(NodeContext &ctx, bool mean = false) {
  if (failed(ctx.expectArity(1, INT32_MAX)))
    return failure();
  FailureOr<Value> acc = ctx.input(0);
  if (failed(acc))
    return failure();
  Type et = ctx.elementTypeOf(*acc);
  for (int i = 1; i < (int)ctx.numInputs(); ++i) {
    FailureOr<Value> next = ctx.input(i);
    if (failed(next))
      return failure();
    if (ctx.elementTypeOf(*next) != et)
      return ctx.fail("inputs have different element types");
    acc = OpTy::create(ctx.builder(), ctx.loc, ctx.resultType(et), *acc, *next)
              .getResult();
  }
  if (mean && ctx.numInputs() > 1)
    acc = dg::DivOp::create(ctx.builder(), ctx.loc, ctx.resultType(et), *acc,
                            ctx.scalarConstant(et, ctx.numInputs()))
              .getResult();
  ctx.setOutput(0, *acc);
  return success();
}

LogicalResult passThrough(NodeContext &ctx) {
  // Identity, and Dropout in inference (its mask output is refused).
  if (failed(ctx.expectArity(1, 3)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  ctx.setOutput(0, *x);
  return success();
}

LogicalResult importCast(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> to = ctx.intAttr("to", -1);
  if (failed(x) || failed(to))
    return failure();
  const onnx::AttributeProto *toAttr = ctx.attr("to");
  if (toAttr && toAttr->type() == onnx::AttributeProto::STRING)
    return ctx.fail("'to' as a string (opset 1) is not supported");
  FailureOr<Type> et = ctx.importer.importElementType(
      *to, "attribute 'to' of node '" + ctx.node.name() + "'");
  if (failed(et))
    return failure();
  // Constants stay constants (shape arithmetic casts between int types).
  if (std::optional<SmallVector<int64_t>> v =
          ctx.importer.constantInts(ctx.node.input(0));
      v && et->isInteger() && et->getIntOrFloatBitWidth() == 64) {
    ctx.setOutput(0, ctx.i64Constant(
                         *v, cast<RankedTensorType>(x->getType()).getRank() == 0));
    return success();
  }
  ctx.setOutput(0, dg::CastOp::create(ctx.builder(), ctx.loc,
                                      ctx.resultType(*et), *x));
  return success();
}

LogicalResult importLeakyRelu(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<float> alpha = ctx.floatAttr("alpha", 0.01f);
  if (failed(x) || failed(alpha))
    return failure();
  ctx.setOutput(0, dg::LeakyReluOp::create(
                       ctx.builder(), ctx.loc,
                       ctx.resultType(ctx.elementTypeOf(*x)), *x,
                       ctx.builder().getF32FloatAttr(*alpha)));
  return success();
}

LogicalResult importClip(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 3)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Type et = ctx.elementTypeOf(*x);
  Value lo, hi;
  if (ctx.opset() < 11) {
    // min/max were attributes.
    if (ctx.attr("min")) {
      FailureOr<float> v = ctx.floatAttr("min", 0);
      if (failed(v))
        return failure();
      lo = ctx.scalarConstant(et, *v);
    }
    if (ctx.attr("max")) {
      FailureOr<float> v = ctx.floatAttr("max", 0);
      if (failed(v))
        return failure();
      hi = ctx.scalarConstant(et, *v);
    }
  } else {
    lo = ctx.optionalInput(1);
    hi = ctx.optionalInput(2);
    if ((ctx.hasInput(1) && !lo) || (ctx.hasInput(2) && !hi))
      return failure();
  }
  ctx.setOutput(0, dg::ClipOp::create(ctx.builder(), ctx.loc,
                                      ctx.resultType(et), *x, lo, hi));
  return success();
}

LogicalResult importWhere(NodeContext &ctx) {
  if (failed(ctx.expectArity(3, 3)))
    return failure();
  FailureOr<Value> c = ctx.input(0), a = ctx.input(1), b = ctx.input(2);
  if (failed(c) || failed(a) || failed(b))
    return failure();
  if (!ctx.elementTypeOf(*c).isInteger(1))
    return ctx.fail("condition must be a bool tensor");
  if (ctx.elementTypeOf(*a) != ctx.elementTypeOf(*b))
    return ctx.fail("inputs have different element types");
  ctx.setOutput(0, dg::SelectOp::create(ctx.builder(), ctx.loc,
                                        ctx.resultType(ctx.elementTypeOf(*a)),
                                        *c, *a, *b));
  return success();
}

LogicalResult importConstant(NodeContext &ctx) {
  if (failed(ctx.expectArity(0, 0)))
    return failure();
  onnx::TensorProto tensor;
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return ctx.fail("attribute 'value' must be a TENSOR");
    tensor = a->t();
  } else if (const onnx::AttributeProto *a = ctx.attr("value_float")) {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_float_data(a->f());
  } else if (const onnx::AttributeProto *a = ctx.attr("value_floats")) {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_dims(a->floats_size());
    for (float f : a->floats())
      tensor.add_float_data(f);
  } else if (const onnx::AttributeProto *a = ctx.attr("value_int")) {
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_int64_data(a->i());
  } else if (const onnx::AttributeProto *a = ctx.attr("value_ints")) {
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_dims(a->ints_size());
    for (int64_t i : a->ints())
      tensor.add_int64_data(i);
  } else {
    return ctx.fail("needs a value, value_float(s) or value_int(s) "
                    "attribute (sparse and string values are not supported)");
  }
  tensor.set_name(ctx.node.output(0));
  ctx.importer.constants[ctx.node.output(0)] =
      &ctx.importer.ownedConstants.emplace_back(std::move(tensor));
  return success();
}

LogicalResult importConstantOfShape(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> shape = ctx.input(0);
  if (failed(shape))
    return failure();
  onnx::TensorProto value;
  if (const onnx::AttributeProto *a = ctx.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      return ctx.fail("attribute 'value' must be a TENSOR");
    value = a->t();
  } else {
    value.set_data_type(onnx::TensorProto::FLOAT);
    value.add_dims(1);
    value.add_float_data(0);
  }
  FailureOr<Value> v = ctx.importer.importTensor(value, ctx.loc);
  if (failed(v))
    return failure();
  auto attr = cast<dg::ConstantOp>(v->getDefiningOp()).getValue();
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() != 1)
    return ctx.fail("attribute 'value' must hold one element");
  auto splat = DenseElementsAttr::get(
      RankedTensorType::get({}, dense.getElementType()),
      dense.getValues<Attribute>()[0]);
  v->getDefiningOp()->erase();
  ctx.setOutput(0, dg::ConstantOfShapeOp::create(
                       ctx.builder(), ctx.loc,
                       ctx.resultType(dense.getElementType()), *shape,
                       cast<ElementsAttr>(splat)));
  return success();
}

LogicalResult importShape(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> start = ctx.intAttr("start", 0);
  if (failed(x) || failed(start))
    return failure();
  IntegerAttr end;
  if (ctx.attr("end")) {
    FailureOr<int64_t> e = ctx.intAttr("end", 0);
    if (failed(e))
      return failure();
    end = ctx.builder().getI64IntegerAttr(*e);
  }
  ctx.setOutput(0, dg::ShapeOfOp::create(ctx.builder(), ctx.loc,
                                         ctx.resultType(i64(ctx)), *x,
                                         ctx.builder().getI64IntegerAttr(*start),
                                         end));
  return success();
}

LogicalResult importReshape(NodeContext &ctx) {
  Value shape;
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  if (ctx.opset() < 5) {
    if (failed(ctx.expectArity(1, 1)))
      return failure();
    auto attr = ctx.intsAttr("shape");
    if (failed(attr) || !*attr)
      return failed(attr) ? failure() : ctx.fail("needs a 'shape' attribute");
    shape = ctx.i64Constant(**attr);
  } else {
    if (failed(ctx.expectArity(2, 2)))
      return failure();
    FailureOr<Value> s = ctx.input(1);
    if (failed(s))
      return failure();
    shape = *s;
  }
  FailureOr<int64_t> allowZero = ctx.intAttr("allowzero", 0);
  if (failed(allowZero))
    return failure();
  ctx.setOutput(0, dg::ReshapeOp::create(ctx.builder(), ctx.loc,
                                         ctx.resultType(ctx.elementTypeOf(*x)),
                                         *x, shape, *allowZero != 0));
  return success();
}

LogicalResult importFlatten(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> axis = ctx.intAttr("axis", 1);
  if (failed(x) || failed(axis))
    return failure();
  ctx.setOutput(0, dg::FlattenOp::create(ctx.builder(), ctx.loc,
                                         ctx.resultType(ctx.elementTypeOf(*x)),
                                         *x, *axis));
  return success();
}

/// Axes from the attribute (before `inputSince`) or the input #1.
FailureOr<std::optional<SmallVector<int64_t>>> axesOf(NodeContext &ctx,
                                                      int64_t inputSince) {
  if (ctx.opset() < inputSince)
    return ctx.intsAttr("axes");
  if (!ctx.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(1, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

LogicalResult importSqueeze(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 2)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  auto axes = axesOf(ctx, 13);
  if (failed(x) || failed(axes))
    return failure();
  DenseI64ArrayAttr attr;
  if (*axes)
    attr = ctx.builder().getDenseI64ArrayAttr(**axes);
  ctx.setOutput(0, dg::SqueezeOp::create(ctx.builder(), ctx.loc,
                                         ctx.resultType(ctx.elementTypeOf(*x)),
                                         *x, attr));
  return success();
}

LogicalResult importUnsqueeze(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 2)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  auto axes = axesOf(ctx, 13);
  if (failed(x) || failed(axes))
    return failure();
  if (!*axes)
    return ctx.fail("needs axes");
  ctx.setOutput(0, dg::UnsqueezeOp::create(
                       ctx.builder(), ctx.loc,
                       ctx.resultType(ctx.elementTypeOf(*x)), *x,
                       ctx.builder().getDenseI64ArrayAttr(**axes)));
  return success();
}

LogicalResult importTranspose(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  auto perm = ctx.intsAttr("perm");
  if (failed(x) || failed(perm))
    return failure();
  SmallVector<int64_t> p;
  if (*perm) {
    p = **perm;
  } else if (auto ranked = dyn_cast<RankedTensorType>(x->getType())) {
    for (int64_t i = ranked.getRank() - 1; i >= 0; --i)
      p.push_back(i);
  } else {
    return ctx.fail("a transpose without 'perm' needs an input of known rank");
  }
  ctx.setOutput(0, dg::TransposeOp::create(
                       ctx.builder(), ctx.loc,
                       ctx.resultType(ctx.elementTypeOf(*x)), *x,
                       ctx.builder().getDenseI64ArrayAttr(p)));
  return success();
}

LogicalResult importConcat(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, INT32_MAX)))
    return failure();
  FailureOr<int64_t> axis = ctx.intAttr("axis", ctx.opset() < 4 ? 1 : INT64_MIN);
  if (failed(axis))
    return failure();
  if (*axis == INT64_MIN)
    return ctx.fail("needs an 'axis' attribute");
  SmallVector<Value> inputs;
  for (int i = 0; i < (int)ctx.numInputs(); ++i) {
    // Real exports (shrunk by ORT's tiny-model scripts) concatenate scalar
    // constants with 1-D shape pieces; read those as one-element vectors,
    // as ONNX Runtime does.
    auto c = ctx.importer.constants.find(ctx.node.input(i));
    if (c != ctx.importer.constants.end() && c->second->dims_size() == 0) {
      onnx::TensorProto vector = *c->second;
      vector.add_dims(1);
      FailureOr<Value> v = ctx.importer.importTensor(vector, ctx.loc);
      if (failed(v))
        return failure();
      inputs.push_back(*v);
      continue;
    }
    FailureOr<Value> v = ctx.input(i);
    if (failed(v))
      return failure();
    if (ctx.elementTypeOf(*v) !=
        ctx.elementTypeOf(inputs.empty() ? *v : inputs[0]))
      return ctx.fail("inputs have different element types");
    inputs.push_back(*v);
  }
  ctx.setOutput(0, dg::ConcatOp::create(ctx.builder(), ctx.loc,
                                        ctx.resultType(ctx.elementTypeOf(inputs[0])),
                                        inputs, *axis));
  return success();
}

LogicalResult importSplit(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 2, ctx.node.output_size())))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> axis = ctx.intAttr("axis", 0);
  if (failed(x) || failed(axis))
    return failure();
  std::optional<SmallVector<int64_t>> sizes;
  if (ctx.opset() < 13) {
    auto attr = ctx.intsAttr("split");
    if (failed(attr))
      return failure();
    sizes = *attr;
  } else if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  int n = ctx.node.output_size();
  SmallVector<Type> types(n, ctx.resultType(ctx.elementTypeOf(*x)));
  auto split = dg::SplitOp::create(
      ctx.builder(), ctx.loc, types, *x, *axis,
      sizes ? ctx.builder().getDenseI64ArrayAttr(*sizes) : DenseI64ArrayAttr());
  for (int i = 0; i < n; ++i)
    ctx.setOutput(i, split.getResult(i));
  return success();
}

LogicalResult importSlice(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  if (failed(x))
    return failure();
  Value starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    if (failed(ctx.expectArity(1, 1)))
      return failure();
    auto s = ctx.intsAttr("starts"), e = ctx.intsAttr("ends"),
         a = ctx.intsAttr("axes");
    if (failed(s) || failed(e) || failed(a))
      return failure();
    if (!*s || !*e)
      return ctx.fail("needs 'starts' and 'ends'");
    starts = ctx.i64Constant(**s);
    ends = ctx.i64Constant(**e);
    if (*a)
      axes = ctx.i64Constant(**a);
  } else {
    if (failed(ctx.expectArity(3, 5)))
      return failure();
    FailureOr<Value> s = ctx.input(1), e = ctx.input(2);
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    axes = ctx.optionalInput(3);
    steps = ctx.optionalInput(4);
  }
  ctx.setOutput(0, dg::SliceOp::create(ctx.builder(), ctx.loc,
                                       ctx.resultType(ctx.elementTypeOf(*x)),
                                       *x, starts, ends, axes, steps));
  return success();
}

LogicalResult importGather(NodeContext &ctx) {
  if (failed(ctx.expectArity(2, 2)))
    return failure();
  FailureOr<Value> data = ctx.input(0), indices = ctx.input(1);
  FailureOr<int64_t> axis = ctx.intAttr("axis", 0);
  if (failed(data) || failed(indices) || failed(axis))
    return failure();
  if (!ctx.elementTypeOf(*indices).isSignlessInteger(32) &&
      !ctx.elementTypeOf(*indices).isSignlessInteger(64))
    return ctx.fail("indices must be int32 or int64");
  ctx.setOutput(0, dg::GatherOp::create(
                       ctx.builder(), ctx.loc,
                       ctx.resultType(ctx.elementTypeOf(*data)), *data,
                       *indices, ctx.builder().getI64IntegerAttr(*axis)));
  return success();
}

template <typename OpTy>
LogicalResult withShapeOperand(NodeContext &ctx) {
  if (failed(ctx.expectArity(2, 2)))
    return failure();
  FailureOr<Value> x = ctx.input(0), s = ctx.input(1);
  if (failed(x) || failed(s))
    return failure();
  ctx.setOutput(0, OpTy::create(ctx.builder(), ctx.loc,
                                ctx.resultType(ctx.elementTypeOf(*x)), *x, *s));
  return success();
}

LogicalResult importRange(NodeContext &ctx) {
  if (failed(ctx.expectArity(3, 3)))
    return failure();
  FailureOr<Value> s = ctx.input(0), l = ctx.input(1), d = ctx.input(2);
  if (failed(s) || failed(l) || failed(d))
    return failure();
  ctx.setOutput(0, dg::RangeOp::create(ctx.builder(), ctx.loc,
                                       ctx.resultType(ctx.elementTypeOf(*s)),
                                       *s, *l, *d));
  return success();
}

LogicalResult importTrilu(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 2)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> upper = ctx.intAttr("upper", 1);
  if (failed(x) || failed(upper))
    return failure();
  Value k = ctx.optionalInput(1);
  ctx.setOutput(0, dg::TriluOp::create(ctx.builder(), ctx.loc,
                                       ctx.resultType(ctx.elementTypeOf(*x)),
                                       *x, k, *upper != 0));
  return success();
}

LogicalResult importPad(NodeContext &ctx) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<std::string> mode = ctx.stringAttr("mode", "constant");
  if (failed(x) || failed(mode))
    return failure();
  if (*mode != "constant" && *mode != "edge" && *mode != "reflect")
    return ctx.fail("unsupported mode '" + *mode + "'");
  Value pads, value;
  if (ctx.opset() < 11) {
    if (failed(ctx.expectArity(1, 1)))
      return failure();
    auto p = ctx.intsAttr(ctx.opset() < 2 ? "paddings" : "pads");
    FailureOr<float> v = ctx.floatAttr("value", 0);
    if (failed(p) || failed(v))
      return failure();
    if (!*p)
      return ctx.fail("needs 'pads'");
    pads = ctx.i64Constant(**p);
    value = ctx.scalarConstant(ctx.elementTypeOf(*x), *v);
  } else {
    if (failed(ctx.expectArity(2, 3)))
      return failure();
    if (ctx.hasInput(3))
      return ctx.fail("the 'axes' input (opset 18) is not supported");
    FailureOr<Value> p = ctx.input(1);
    if (failed(p))
      return failure();
    pads = *p;
    value = ctx.optionalInput(2);
  }
  ctx.setOutput(0, dg::PadOp::create(ctx.builder(), ctx.loc,
                                     ctx.resultType(ctx.elementTypeOf(*x)), *x,
                                     pads, value, *mode));
  return success();
}

LogicalResult importDepthToSpace(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> b = ctx.intAttr("blocksize", 0);
  FailureOr<std::string> mode = ctx.stringAttr("mode", "DCR");
  if (failed(x) || failed(b) || failed(mode))
    return failure();
  if (*mode != "DCR" && *mode != "CRD")
    return ctx.fail("unsupported mode '" + *mode + "'");
  ctx.setOutput(0, dg::DepthToSpaceOp::create(
                       ctx.builder(), ctx.loc,
                       ctx.resultType(ctx.elementTypeOf(*x)), *x, *b, *mode));
  return success();
}

LogicalResult importResize(NodeContext &ctx, bool upsample) {
  FailureOr<Value> x = ctx.input(0);
  FailureOr<std::string> mode = ctx.stringAttr("mode", "nearest");
  FailureOr<std::string> ctm =
      ctx.stringAttr("coordinate_transformation_mode",
                     ctx.opset() < 11 ? "asymmetric" : "half_pixel");
  // Upsample has no nearest_mode: its source index is floor(x / scale).
  FailureOr<std::string> nearest = ctx.stringAttr(
      "nearest_mode", upsample ? "floor" : "round_prefer_floor");
  if (failed(x) || failed(mode) || failed(ctm) || failed(nearest))
    return failure();
  Value scales, sizes;
  if (upsample && ctx.opset() < 9) {
    if (failed(ctx.expectArity(1, 1)))
      return failure();
    const onnx::AttributeProto *a = ctx.attr("scales");
    if (!a || a->type() != onnx::AttributeProto::FLOATS)
      return ctx.fail("needs FLOATS 'scales'");
    auto type = RankedTensorType::get({(int64_t)a->floats_size()},
                                      ctx.builder().getF32Type());
    SmallVector<float> f(a->floats().begin(), a->floats().end());
    scales = dg::ConstantOp::create(ctx.builder(), ctx.loc, type,
                                    DenseElementsAttr::get(type, ArrayRef(f)));
  } else if (upsample || ctx.opset() < 11) {
    if (failed(ctx.expectArity(2, 2)))
      return failure();
    scales = ctx.optionalInput(1);
  } else {
    if (failed(ctx.expectArity(1, 4)))
      return failure();
    scales = ctx.optionalInput(2);
    sizes = ctx.optionalInput(3);
    // An empty scales tensor means "use sizes".
    if (scales && sizes)
      if (auto t = dyn_cast<RankedTensorType>(scales.getType());
          t && t.hasStaticShape() && t.getNumElements() == 0)
        scales = Value();
  }
  if (!scales && !sizes)
    return ctx.fail("needs scales or sizes");
  ctx.setOutput(0, dg::ResizeOp::create(ctx.builder(), ctx.loc,
                                        ctx.resultType(ctx.elementTypeOf(*x)),
                                        *x, scales, sizes, *mode, *ctm,
                                        *nearest));
  return success();
}

LogicalResult importMatMul(NodeContext &ctx) {
  return binary<dg::MatMulOp>(ctx, false);
}

LogicalResult importGemm(NodeContext &ctx) {
  if (failed(ctx.expectArity(2, 3)))
    return failure();
  FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
  FailureOr<float> alpha = ctx.floatAttr("alpha", 1), beta = ctx.floatAttr("beta", 1);
  FailureOr<int64_t> ta = ctx.intAttr("transA", 0), tb = ctx.intAttr("transB", 0);
  if (failed(a) || failed(b) || failed(alpha) || failed(beta) || failed(ta) ||
      failed(tb))
    return failure();
  Value c = ctx.optionalInput(2);
  if (ctx.hasInput(2) && !c)
    return failure();
  auto &b_ = ctx.builder();
  ctx.setOutput(0, dg::GemmOp::create(b_, ctx.loc,
                                      ctx.resultType(ctx.elementTypeOf(*a)), *a,
                                      *b, c, b_.getF32FloatAttr(*alpha),
                                      b_.getF32FloatAttr(*beta),
                                      b_.getBoolAttr(*ta), b_.getBoolAttr(*tb)));
  return success();
}

/// Window attributes shared by Conv and the pools; `spatial` from the
/// kernel shape.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  std::string autoPad;
};

FailureOr<Window> windowAttrs(NodeContext &ctx, size_t spatial) {
  Window w;
  auto strides = ctx.intsAttr("strides"), pads = ctx.intsAttr("pads"),
       dilations = ctx.intsAttr("dilations");
  FailureOr<std::string> autoPad = ctx.stringAttr("auto_pad", "NOTSET");
  if (failed(strides) || failed(pads) || failed(dilations) || failed(autoPad))
    return failure();
  w.strides = *strides ? **strides : SmallVector<int64_t>(spatial, 1);
  w.pads = *pads ? **pads : SmallVector<int64_t>(2 * spatial, 0);
  w.dilations = *dilations ? **dilations : SmallVector<int64_t>(spatial, 1);
  w.autoPad = *autoPad;
  if (w.autoPad != "NOTSET" && w.autoPad != "VALID" &&
      w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER") {
    (void)ctx.fail("unsupported auto_pad '" + w.autoPad + "'");
    return failure();
  }
  if (w.strides.size() != spatial || w.pads.size() != 2 * spatial ||
      w.dilations.size() != spatial) {
    (void)ctx.fail("strides, pads and dilations must have " +
                   std::to_string(spatial) + ", " + std::to_string(2 * spatial) +
                   " and " + std::to_string(spatial) + " entries");
    return failure();
  }
  return w;
}

LogicalResult importConv(NodeContext &ctx) {
  if (failed(ctx.expectArity(2, 3)))
    return failure();
  FailureOr<Value> x = ctx.input(0), weight = ctx.input(1);
  FailureOr<int64_t> group = ctx.intAttr("group", 1);
  auto kernel = ctx.intsAttr("kernel_shape");
  if (failed(x) || failed(weight) || failed(group) || failed(kernel))
    return failure();
  Value bias = ctx.optionalInput(2);
  size_t spatial;
  if (*kernel)
    spatial = (*kernel)->size();
  else if (auto w = dyn_cast<RankedTensorType>(weight->getType())) {
    if (w.getRank() < 3)
      return ctx.fail("weight must have rank >= 3, got " +
                      std::to_string(w.getRank()));
    spatial = w.getRank() - 2;
  }
  else
    return ctx.fail("needs kernel_shape or a weight of known rank");
  FailureOr<Window> w = windowAttrs(ctx, spatial);
  if (failed(w))
    return failure();
  auto &b = ctx.builder();
  ctx.setOutput(0, dg::ConvOp::create(
                       b, ctx.loc, ctx.resultType(ctx.elementTypeOf(*x)), *x,
                       *weight, bias, b.getDenseI64ArrayAttr(w->strides),
                       b.getDenseI64ArrayAttr(w->pads),
                       b.getDenseI64ArrayAttr(w->dilations),
                       b.getI64IntegerAttr(*group), b.getStringAttr(w->autoPad)));
  return success();
}

LogicalResult importBatchNorm(NodeContext &ctx) {
  if (failed(ctx.expectArity(5, 5)))
    return failure();
  FailureOr<int64_t> training = ctx.intAttr("training_mode", 0);
  if (failed(training))
    return failure();
  if (*training)
    return ctx.fail("training_mode is out of scope (inference only)");
  if (ctx.opset() < 9) {
    FailureOr<int64_t> spatial = ctx.intAttr("spatial", 1);
    if (failed(spatial))
      return failure();
    if (*spatial != 1)
      return ctx.fail("spatial=0 is not supported");
  }
  SmallVector<Value> in;
  for (int i = 0; i < 5; ++i) {
    FailureOr<Value> v = ctx.input(i);
    if (failed(v))
      return failure();
    in.push_back(*v);
  }
  FailureOr<float> eps = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(eps))
    return failure();
  ctx.setOutput(0, dg::BatchNormOp::create(
                       ctx.builder(), ctx.loc,
                       ctx.resultType(ctx.elementTypeOf(in[0])), in[0], in[1],
                       in[2], in[3], in[4], ctx.builder().getF32FloatAttr(*eps)));
  return success();
}

template <typename OpTy>
LogicalResult importPool(NodeContext &ctx) {
  // MaxPool may also return the argmax indices.
  int outputs =
      std::is_same_v<OpTy, dg::MaxPoolOp> ? std::min(2, ctx.node.output_size()) : 1;
  if (failed(ctx.expectArity(1, 1, outputs)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  auto kernel = ctx.intsAttr("kernel_shape");
  FailureOr<int64_t> ceil = ctx.intAttr("ceil_mode", 0);
  FailureOr<int64_t> includePad = ctx.intAttr("count_include_pad", 0);
  FailureOr<int64_t> order = ctx.intAttr("storage_order", 0);
  if (failed(x) || failed(kernel) || failed(ceil) || failed(includePad) ||
      failed(order))
    return failure();
  if (!*kernel)
    return ctx.fail("needs 'kernel_shape'");
  FailureOr<Window> w = windowAttrs(ctx, (*kernel)->size());
  if (failed(w))
    return failure();
  auto &b = ctx.builder();
  SmallVector<Type> types{ctx.resultType(ctx.elementTypeOf(*x))};
  if (outputs == 2)
    types.push_back(ctx.resultType(i64(ctx)));
  Operation *op = OpTy::create(
      b, ctx.loc, types, *x, b.getDenseI64ArrayAttr(**kernel),
      b.getDenseI64ArrayAttr(w->strides), b.getDenseI64ArrayAttr(w->pads),
      b.getDenseI64ArrayAttr(w->dilations), b.getBoolAttr(*ceil),
      b.getBoolAttr(*includePad), b.getStringAttr(w->autoPad),
      b.getBoolAttr(*order != 0));
  for (int i = 0; i < outputs; ++i)
    ctx.setOutput(i, op->getResult(i));
  return success();
}

/// Reductions: axes as an attribute, or an input from `inputSince`.
template <typename OpTy>
LogicalResult importReduce(NodeContext &ctx, int64_t inputSince) {
  if (failed(ctx.expectArity(1, ctx.opset() < inputSince ? 1 : 2)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> keep = ctx.intAttr("keepdims", 1);
  FailureOr<int64_t> noop = ctx.intAttr("noop_with_empty_axes", 0);
  auto axes = axesOf(ctx, inputSince);
  if (failed(x) || failed(keep) || failed(noop) || failed(axes))
    return failure();
  bool emptyAxes = !*axes || (*axes)->empty();
  if (emptyAxes && *noop) {
    ctx.setOutput(0, *x);
    return success();
  }
  DenseI64ArrayAttr attr;
  if (!emptyAxes)
    attr = ctx.builder().getDenseI64ArrayAttr(**axes);
  ctx.setOutput(0, OpTy::create(ctx.builder(), ctx.loc,
                                ctx.resultType(ctx.elementTypeOf(*x)), *x, attr,
                                ctx.builder().getBoolAttr(*keep != 0)));
  return success();
}

template <typename OpTy>
LogicalResult importSoftmax(NodeContext &ctx) {
  if (failed(ctx.expectArity(1, 1)))
    return failure();
  bool legacy = ctx.opset() < 13;
  FailureOr<Value> x = ctx.input(0);
  FailureOr<int64_t> axis = ctx.intAttr("axis", legacy ? 1 : -1);
  if (failed(x) || failed(axis))
    return failure();
  ctx.setOutput(0, OpTy::create(ctx.builder(), ctx.loc,
                                ctx.resultType(ctx.elementTypeOf(*x)), *x,
                                *axis, legacy));
  return success();
}

LogicalResult importLayerNorm(NodeContext &ctx) {
  int outputs = std::max(1, std::min(3, ctx.node.output_size()));
  if (failed(ctx.expectArity(2, 3, outputs)))
    return failure();
  FailureOr<Value> x = ctx.input(0), scale = ctx.input(1);
  FailureOr<int64_t> axis = ctx.intAttr("axis", -1);
  FailureOr<float> eps = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(x) || failed(scale) || failed(axis) || failed(eps))
    return failure();
  Value bias = ctx.optionalInput(2);
  FailureOr<int64_t> stashType = ctx.intAttr("stash_type", 1);
  if (failed(stashType))
    return failure();
  if (*stashType != 1)
    return ctx.fail("stash_type other than float is not supported");
  // The statistics are computed in float (stash_type 1).
  SmallVector<Type> stats(outputs - 1,
                          ctx.resultType(ctx.builder().getF32Type()));
  auto op = dg::LayerNormOp::create(
      ctx.builder(), ctx.loc, ctx.resultType(ctx.elementTypeOf(*x)), stats,
      *x, *scale, bias, ctx.builder().getI64IntegerAttr(*axis),
      ctx.builder().getF32FloatAttr(*eps));
  for (int i = 0; i < outputs; ++i)
    ctx.setOutput(i, op->getResult(i));
  return success();
}

/// InstanceNormalization: each instance's channels normalized over their
/// spatial dimensions, then scaled and shifted per channel. Imported as a
/// LayerNormalization from axis 2 (the statistics over [D1, ...]) with a
/// unit scale, then an inference BatchNormalization of mean 0, variance 1
/// and epsilon 0 (`x * scale + B` along axis 1, whatever the rank), its
/// mean and variance shaped like `scale` (ConstantOfShape of its Shape,
/// which folds where the channels are static).
LogicalResult importInstanceNorm(NodeContext &ctx) {
  if (failed(ctx.expectArity(3, 3)))
    return failure();
  FailureOr<Value> x = ctx.input(0), scale = ctx.input(1), bias = ctx.input(2);
  FailureOr<float> eps = ctx.floatAttr("epsilon", 1e-5f);
  if (failed(x) || failed(scale) || failed(bias) || failed(eps))
    return failure();
  Type et = ctx.elementTypeOf(*x);
  if (!isa<FloatType>(et))
    return ctx.fail("expects a float input");
  OpBuilder &b = ctx.builder();
  auto normalized =
      dg::LayerNormOp::create(b, ctx.loc, ctx.resultType(et), TypeRange{}, *x,
                              ctx.scalarConstant(et, 1.0), Value(),
                              b.getI64IntegerAttr(2), b.getF32FloatAttr(*eps));
  Value channels =
      dg::ShapeOfOp::create(b, ctx.loc, ctx.resultType(i64(ctx)), *scale,
                            b.getI64IntegerAttr(0), IntegerAttr());
  auto filled = [&](double value) -> Value {
    auto type = RankedTensorType::get({}, et);
    return dg::ConstantOfShapeOp::create(
        b, ctx.loc, ctx.resultType(et), channels,
        cast<ElementsAttr>(
            DenseElementsAttr::get(type, b.getFloatAttr(et, value))));
  };
  ctx.setOutput(0, dg::BatchNormOp::create(b, ctx.loc, ctx.resultType(et),
                                           normalized->getResult(0), *scale,
                                           *bias, filled(0), filled(1),
                                           b.getF32FloatAttr(0)));
  return success();
}

LogicalResult importCumSum(NodeContext &ctx) {
  if (failed(ctx.expectArity(2, 2)))
    return failure();
  FailureOr<Value> x = ctx.input(0);
  FailureOr<SmallVector<int64_t>> axis = ctx.constantInts(1, "axis");
  FailureOr<int64_t> exclusive = ctx.intAttr("exclusive", 0),
                     reverse = ctx.intAttr("reverse", 0);
  if (failed(x) || failed(axis) || failed(exclusive) || failed(reverse))
    return failure();
  if (axis->size() != 1)
    return ctx.fail("axis must be a scalar");
  ctx.setOutput(0, dg::CumSumOp::create(ctx.builder(), ctx.loc,
                                        ctx.resultType(ctx.elementTypeOf(*x)),
                                        *x, (*axis)[0], *exclusive != 0,
                                        *reverse != 0));
  return success();
}

} // namespace

const std::map<std::string, OpHandler> &importer::getOpHandlers() {
  static const std::map<std::string, OpHandler> handlers = {
      // Elementwise.
      {"Add", [](NodeContext &c) { return binary<dg::AddOp>(c); }},
      {"Sub", [](NodeContext &c) { return binary<dg::SubOp>(c); }},
      {"Mul", [](NodeContext &c) { return binary<dg::MulOp>(c); }},
      {"Div", [](NodeContext &c) { return binary<dg::DivOp>(c); }},
      {"Pow",
       [](NodeContext &ctx) -> LogicalResult {
         // The exponent may have another type: cast it to the base's.
         if (failed(ctx.expectArity(2, 2)))
           return failure();
         FailureOr<Value> a = ctx.input(0), b = ctx.input(1);
         if (failed(a) || failed(b))
           return failure();
         Type et = ctx.elementTypeOf(*a);
         Value exponent = *b;
         if (ctx.elementTypeOf(*b) != et)
           exponent = dg::CastOp::create(ctx.builder(), ctx.loc,
                                         ctx.resultType(et), *b);
         ctx.setOutput(0, dg::PowOp::create(ctx.builder(), ctx.loc,
                                            ctx.resultType(et), *a, exponent));
         return success();
       }},
      {"And", [](NodeContext &c) { return binary<dg::AndOp>(c, true); }},
      {"Or", [](NodeContext &c) { return binary<dg::OrOp>(c, true); }},
      {"Equal", [](NodeContext &c) { return binary<dg::EqualOp>(c, true); }},
      {"Less", [](NodeContext &c) { return binary<dg::LessOp>(c, true); }},
      {"Greater",
       [](NodeContext &c) { return binary<dg::GreaterOp>(c, true); }},
      {"LessOrEqual",
       [](NodeContext &c) { return binary<dg::LessEqualOp>(c, true); }},
      {"GreaterOrEqual",
       [](NodeContext &c) { return binary<dg::GreaterEqualOp>(c, true); }},
      {"Min", [](NodeContext &c) { return variadic<dg::MinOp>(c); }},
      {"Max", [](NodeContext &c) { return variadic<dg::MaxOp>(c); }},
      {"Sum", [](NodeContext &c) { return variadic<dg::AddOp>(c); }},
      {"Mean", [](NodeContext &c) { return variadic<dg::AddOp>(c, true); }},
      {"Neg", unary<dg::NegOp>},
      {"Abs", unary<dg::AbsOp>},
      {"Exp", unary<dg::ExpOp>},
      {"Log", unary<dg::LogOp>},
      {"Sqrt", unary<dg::SqrtOp>},
      {"Reciprocal", unary<dg::ReciprocalOp>},
      {"Erf", unary<dg::ErfOp>},
      {"Tanh", unary<dg::TanhOp>},
      {"Sigmoid", unary<dg::SigmoidOp>},
      {"Relu", unary<dg::ReluOp>},
      {"Not", unary<dg::NotOp>},
      {"LeakyRelu", importLeakyRelu},
      {"Clip", importClip},
      {"Where", importWhere},
      {"Cast", importCast},
      {"Identity", passThrough},
      {"Dropout", passThrough},
      // Constants.
      {"Constant", importConstant},
      {"ConstantOfShape", importConstantOfShape},
      // Shapes and data movement.
      {"Shape", importShape},
      {"Size", unary<dg::SizeOp, true>},
      {"Reshape", importReshape},
      {"Flatten", importFlatten},
      {"Squeeze", importSqueeze},
      {"Unsqueeze", importUnsqueeze},
      {"Transpose", importTranspose},
      {"Concat", importConcat},
      {"Split", importSplit},
      {"Slice", importSlice},
      {"Gather", importGather},
      {"Expand", withShapeOperand<dg::ExpandOp>},
      {"Tile", withShapeOperand<dg::TileOp>},
      {"Range", importRange},
      {"Trilu", importTrilu},
      {"Pad", importPad},
      {"NonZero", unary<dg::NonZeroOp, true>},
      {"DepthToSpace", importDepthToSpace},
      {"Resize", [](NodeContext &c) { return importResize(c, false); }},
      {"Upsample", [](NodeContext &c) { return importResize(c, true); }},
      // Compute and normalization.
      {"MatMul", importMatMul},
      {"Gemm", importGemm},
      {"Conv", importConv},
      {"BatchNormalization", importBatchNorm},
      {"MaxPool", importPool<dg::MaxPoolOp>},
      {"AveragePool", importPool<dg::AvgPoolOp>},
      {"GlobalAveragePool", unary<dg::GlobalAvgPoolOp>},
      {"GlobalMaxPool", unary<dg::GlobalMaxPoolOp>},
      {"ReduceSum",
       [](NodeContext &c) { return importReduce<dg::ReduceSumOp>(c, 13); }},
      {"ReduceMean",
       [](NodeContext &c) { return importReduce<dg::ReduceMeanOp>(c, 18); }},
      {"ReduceMax",
       [](NodeContext &c) { return importReduce<dg::ReduceMaxOp>(c, 18); }},
      {"ReduceMin",
       [](NodeContext &c) { return importReduce<dg::ReduceMinOp>(c, 18); }},
      {"ReduceProd",
       [](NodeContext &c) { return importReduce<dg::ReduceProdOp>(c, 18); }},
      {"Softmax", importSoftmax<dg::SoftmaxOp>},
      {"LogSoftmax", importSoftmax<dg::LogSoftmaxOp>},
      {"LayerNormalization", importLayerNorm},
      {"InstanceNormalization", importInstanceNorm},
      {"CumSum", importCumSum},
  };
  return handlers;
}
