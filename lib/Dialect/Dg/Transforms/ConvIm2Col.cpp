//===- ConvIm2Col.cpp - Windowed convolutions as a copy and a GEMM --------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A 2-D convolution of one group whose window is wider than a pixel (a
// ResNet's 3x3s and its 7x7 stem) runs as a direct conv: SIMT threads, no
// tensor cores. Copying its windows into channels (`dg.im2col`, the
// [N, C*KH*KW, OH, OW] tensor of every pixel's window) makes it a 1x1 conv
// of that copy with the same weights viewed as [F, C*KH*KW, 1, 1], which
// dyncc-pointwise-conv-as-gemm turns into a GEMM (register tiles, tensor
// cores in f16 and bf16). The copy costs a pass over KH*KW times the input.
// Which form is faster depends on the conv and the device, so the cost
// model decides, conv by conv: the direct conv's best predicted time
// against the copy's plus the GEMM's at five sizes log-spaced over the
// symbols' ranges, im2col where its time over the direct conv's is below 1
// in geometric mean (every size weighing alike).
//
//===----------------------------------------------------------------------===//

#include "dyncc/Analysis/ShapeConstraints.h"
#include "dyncc/CostModel/Conv.h"
#include "dyncc/CostModel/Device.h"
#include "dyncc/CostModel/Partition.h"
#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_CONVIM2COLPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// The largest value a symbol takes in the comparison (an unbounded one's
/// range is cut here, as the tile search's keys are).
constexpr int64_t kLargestValue = 1 << 16;

/// A conv im2col can take: 2-D, NCHW, one group, a window of more than one
/// pixel, explicit padding, constant weights, symbolic shapes, one float
/// element type.
struct WindowedConv {
  ConvOp conv;
  ConstantOp weight;
  SmallVector<DimExpr> input, output;
  int64_t outC, inC, kh, kw;
};

std::optional<WindowedConv> matchWindowedConv(ConvOp conv) {
  auto wType = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  auto inType = dyn_cast<RankedTensorType>(conv.getInput().getType());
  auto outType = dyn_cast<RankedTensorType>(conv.getType());
  auto weight = conv.getWeight().getDefiningOp<ConstantOp>();
  std::optional<SmallVector<DimExpr>> in =
      sym::getSymbolicShape(conv.getInput().getType());
  std::optional<SmallVector<DimExpr>> out =
      sym::getSymbolicShape(conv.getType());
  if (!wType || !inType || !outType || !weight || !in || !out ||
      conv.getGroup() != 1 || wType.getRank() != 4 || inType.getRank() != 4 ||
      !wType.hasStaticShape() || !isa<FloatType>(wType.getElementType()) ||
      wType.getElementType() != inType.getElementType() ||
      wType.getElementType() != outType.getElementType() ||
      (conv.getAutoPad() != "NOTSET" && conv.getAutoPad() != "VALID" &&
       !conv.getAutoPad().starts_with("SAME")) ||
      conv.getStrides().size() != 2 || conv.getDilations().size() != 2 ||
      conv.getPads().size() != 4 || !isa<ElementsAttr>(weight.getValue()))
    return std::nullopt;
  ArrayRef<int64_t> w = wType.getShape();
  if (w[2] * w[3] <= 1)
    return std::nullopt;
  // SAME padding is explicit where the image's size is static.
  if (conv.getAutoPad().starts_with("SAME") &&
      !llvm::all_of(ArrayRef<DimExpr>{(*in)[2], (*in)[3], (*out)[2], (*out)[3]},
                    [](const DimExpr &d) { return d.isConstant(); }))
    return std::nullopt;
  return WindowedConv{conv, weight, *in, *out, w[0], w[1], w[2], w[3]};
}

/// The pads the conv reads, [top, left, bottom, right]: none for VALID,
/// SAME's from the static sizes (getSamePadding, the conv lowering's rule),
/// else its pads.
SmallVector<int64_t> getPads(const WindowedConv &c) {
  ConvOp conv = c.conv;
  if (conv.getAutoPad() == "VALID")
    return SmallVector<int64_t>(4, 0);
  if (!conv.getAutoPad().starts_with("SAME"))
    return SmallVector<int64_t>(conv.getPads());
  SmallVector<int64_t> pads(4, 0);
  int64_t window[2] = {c.kh, c.kw};
  for (int d = 0; d < 2; ++d) {
    auto [low, high] =
        getSamePadding(c.input[2 + d], c.output[2 + d], DimExpr(window[d]),
                       conv.getStrides()[d], conv.getDilations()[d],
                       conv.getAutoPad() == "SAME_UPPER");
    pads[d] = *low.getConstant();
    pads[d + 2] = *high.getConstant();
  }
  return pads;
}

/// The conv's problem at kConvFormPoints points of its symbols' ranges,
/// log-spaced
/// from all symbols at their lower bounds to all at their upper bounds
/// (one point where there are no symbols). Points where a size does not
/// evaluate to a positive value are skipped.
std::vector<cost::ConvProblem> getPoints(WindowedConv c,
                                         const FactsMap &facts) {
  std::vector<std::string> names;
  for (const DimExpr &d : {c.input[0], c.output[2], c.output[3]})
    d.collectSymbols(names);
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  cost::ConvProblem base;
  base.outC = c.outC;
  base.inC = c.inC;
  base.kh = c.kh;
  base.kw = c.kw;
  base.strideH = c.conv.getStrides()[0];
  base.strideW = c.conv.getStrides()[1];
  base.dilationH = c.conv.getDilations()[0];
  base.dilationW = c.conv.getDilations()[1];
  base.elementBytes =
      cast<RankedTensorType>(c.conv.getType()).getElementTypeBitWidth() / 8;
  base.staticH = c.output[2].isConstant();
  base.staticW = c.output[3].isConstant();
  std::vector<cost::ConvProblem> points;
  int count = names.empty() ? 1 : cost::kConvFormPoints;
  for (int point = 0; point < count; ++point) {
    std::map<std::string, int64_t> values;
    for (const std::string &name : names) {
      auto found = facts.find(name);
      int64_t lo = 1, hi = kLargestValue;
      if (found != facts.end()) {
        auto [min, max] = found->second.range();
        lo = std::clamp<int64_t>(min, 1, kLargestValue);
        hi = std::clamp<int64_t>(max, lo, kLargestValue);
      }
      values[name] =
          cost::getLogSpacedValue(lo, hi, point, cost::kConvFormPoints);
    }
    std::optional<int64_t> n = c.input[0].evaluate(values),
                           h = c.output[2].evaluate(values),
                           w = c.output[3].evaluate(values);
    if (!n || !h || !w || *n <= 0 || *h <= 0 || *w <= 0)
      continue;
    cost::ConvProblem p = base;
    p.batch = *n;
    p.outH = *h;
    p.outW = *w;
    points.push_back(p);
  }
  return points;
}

/// The attribute recording a conv's predicted forms: microseconds summed
/// over the points (`direct`; per image `copy` and `gemm`; `folded`, its
/// three kernels), whether the batch is folded (cost::getFoldRatio), and
/// im2col's `ratio` in that form (cost::getIm2ColRatio), which decides.
constexpr llvm::StringLiteral getConvFormsAttrName() {
  return "dyncc.conv_forms";
}

DictionaryAttr formsAttr(MLIRContext *ctx,
                         const std::vector<cost::ConvFormTimes> &times,
                         double ratio, bool fold) {
  cost::ConvFormTimes sum;
  for (const cost::ConvFormTimes &t : times) {
    sum.direct += t.direct;
    sum.copy += t.copy;
    sum.gemm += t.gemm;
    sum.foldedCopy += t.foldedCopy;
    sum.foldedGemm += t.foldedGemm;
    sum.unfold += t.unfold;
  }
  Builder b(ctx);
  auto us = [&](double seconds) { return b.getF64FloatAttr(seconds * 1e6); };
  return b.getDictionaryAttr(
      {b.getNamedAttr("direct", us(sum.direct)),
       b.getNamedAttr("copy", us(sum.copy)),
       b.getNamedAttr("gemm", us(sum.gemm)),
       b.getNamedAttr("folded", us(sum.folded())),
       b.getNamedAttr("fold", b.getBoolAttr(fold)),
       b.getNamedAttr("ratio", b.getF64FloatAttr(ratio))});
}

/// `type` with `shape`, keeping a symbolic encoding where it had one.
RankedTensorType reshaped(RankedTensorType type, ArrayRef<int64_t> shape) {
  auto result = RankedTensorType::get(shape, type.getElementType());
  if (!sym::getSymbolicShape(type))
    return result;
  SmallVector<DimExpr> dims(shape.begin(), shape.end());
  return sym::withSymbolicShape(result, dims);
}

/// A tensor type of symbolic `shape` and element type `et`.
RankedTensorType typeOf(ArrayRef<DimExpr> shape, Type et) {
  SmallVector<int64_t> dims;
  for (const DimExpr &d : shape)
    dims.push_back(d.getConstant().value_or(ShapedType::kDynamic));
  return sym::withSymbolicShape(RankedTensorType::get(dims, et), shape);
}

/// `value` reshaped to `shape`.
Value reshape(RewriterBase &rewriter, Location loc, Value value,
              ArrayRef<DimExpr> shape) {
  Type et = getElementTypeOrSelf(value.getType());
  Value dims = DimValuesOp::create(
      rewriter, loc,
      RankedTensorType::get({int64_t(shape.size())}, rewriter.getI64Type()),
      sym::ShapeAttr::get(rewriter.getContext(), shape));
  return ReshapeOp::create(rewriter, loc, typeOf(shape, et), value, dims);
}

/// Rewrites `c` with the batch folded into the GEMM's columns: `col` is
/// the copy with its window channels outermost ([C*KH*KW, N, OH, OW],
/// dg.im2col's batch_inner), one GEMM [F, C*KH*KW] x [C*KH*KW, N*OH*OW]
/// with the bias along its rows, and its [F, N, OH, OW] transposed back to
/// NCHW. `weight` is the weights viewed as [F, C*KH*KW].
Value rewriteFolded(RewriterBase &rewriter, WindowedConv c, Value col,
                    Value weight) {
  ConvOp conv = c.conv;
  Location loc = conv.getLoc();
  Type et = getElementTypeOrSelf(conv.getType());
  DimExpr depth(c.inC * c.kh * c.kw), n = c.input[0];
  DimExpr oh = c.output[2], ow = c.output[3];
  DimExpr pixels = n * oh * ow;
  Value flat = FlattenOp::create(rewriter, loc, typeOf({depth, pixels}, et),
                                 col, uint64_t(1));
  Value product = MatMulOp::create(
      rewriter, loc, typeOf({DimExpr(c.outC), pixels}, et), weight, flat);
  if (Value bias = conv.getBias())
    product = AddOp::create(
        rewriter, loc, product.getType(), product,
        reshape(rewriter, loc, bias, {DimExpr(c.outC), DimExpr(1)}));
  // The GEMM writes [F, N*OH*OW]; the split into images runs with the
  // transpose, in the kernel of the conv's consumers (FuseElementwise).
  Value planes = reshape(rewriter, loc, product, {DimExpr(c.outC), n, oh, ow});
  planes.getDefiningOp()->setAttr(getNotEpilogueAttrName(),
                                  rewriter.getUnitAttr());
  return TransposeOp::create(rewriter, loc, conv.getType(), planes,
                             rewriter.getDenseI64ArrayAttr({1, 0, 2, 3}));
}

/// Rewrites `c` as dg.im2col and a 1x1 conv, or with `fold` as
/// rewriteFolded's GEMM; returns the new result. `views` holds the weights
/// already viewed as [F, C*KH*KW, 1, 1] (or [F, C*KH*KW] folded), by
/// constant and form, so that convs sharing weights share the view.
Value rewrite(RewriterBase &rewriter, WindowedConv c, bool fold,
              DenseMap<std::pair<Operation *, unsigned>, Value> &views) {
  ConvOp conv = c.conv;
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  auto inType = cast<RankedTensorType>(conv.getInput().getType());
  int64_t depth = c.inC * c.kh * c.kw;
  SmallVector<DimExpr> colShape = {c.input[0], DimExpr(depth), c.output[2],
                                   c.output[3]};
  if (fold)
    std::swap(colShape[0], colShape[1]);
  Type colType = typeOf(colShape, inType.getElementType());
  Value col = Im2ColOp::create(
      rewriter, loc, colType, conv.getInput(),
      rewriter.getDenseI64ArrayAttr({c.kh, c.kw}), conv.getStridesAttr(),
      rewriter.getDenseI64ArrayAttr(getPads(c)), conv.getDilationsAttr(),
      rewriter.getBoolAttr(fold));
  // The weights [F, C, KH, KW] are [F, C*KH*KW, 1, 1] (or [F, C*KH*KW]
  // folded) in the same order.
  Value &weight = views[{c.weight, unsigned(fold)}];
  if (!weight) {
    auto wType = cast<RankedTensorType>(c.weight.getType());
    RankedTensorType viewType = fold ? reshaped(wType, {c.outC, depth})
                                     : reshaped(wType, {c.outC, depth, 1, 1});
    ElementsAttr values;
    if (auto dense = dyn_cast<DenseElementsAttr>(c.weight.getValue()))
      values = dense.reshape(cast<ShapedType>(viewType));
    else if (auto resource =
                 dyn_cast<DenseResourceElementsAttr>(c.weight.getValue()))
      values =
          DenseResourceElementsAttr::get(viewType, resource.getRawHandle());
    if (!values)
      return Value();
    rewriter.setInsertionPoint(c.weight);
    weight = ConstantOp::create(rewriter, c.weight.getLoc(), viewType, values);
    rewriter.setInsertionPoint(conv);
  }
  if (fold)
    return rewriteFolded(rewriter, c, col, weight);
  auto unit =
      ConvOp::create(rewriter, loc, conv.getType(), col, weight, conv.getBias(),
                     rewriter.getDenseI64ArrayAttr({1, 1}),
                     rewriter.getDenseI64ArrayAttr({0, 0, 0, 0}),
                     rewriter.getDenseI64ArrayAttr({1, 1}), conv.getGroupAttr(),
                     rewriter.getStringAttr("NOTSET"));
  if (Attribute forms = conv->getAttr(getConvFormsAttrName()))
    unit->setAttr(getConvFormsAttrName(), forms);
  return unit.getResult();
}

struct ConvIm2Col final : dg::impl::ConvIm2ColPassBase<ConvIm2Col> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (mode != "auto" && mode != "always" && mode != "never" &&
        mode != "per-image" && mode != "folded") {
      module.emitError("dyncc-conv-im2col: unknown mode '")
          << mode << "' (expected auto, always, never, per-image or folded)";
      return signalPassFailure();
    }
    if (mode == "never")
      return;
    const cost::Device *target = cost::lookupDevice(device);
    if (!target) {
      module.emitError("dyncc-conv-im2col: unknown device '") << device << "'";
      return signalPassFailure();
    }
    ShapeConstraints constraints;
    declareSymbolFacts(module, constraints);
    const FactsMap &facts = constraints.getFactsMap();
    SmallVector<WindowedConv> convs;
    module.walk([&](ConvOp conv) {
      if (std::optional<WindowedConv> c = matchWindowedConv(conv))
        convs.push_back(*c);
    });
    IRRewriter rewriter(&getContext());
    DenseMap<std::pair<Operation *, unsigned>, Value> views;
    for (WindowedConv &c : convs) {
      // The batch folds into the GEMM where it is not the constant 1, in
      // the form the model predicts faster unless the mode says.
      bool batched = c.input[0] != DimExpr(1);
      bool fold = batched && mode == "folded";
      if (mode == "auto" || mode == "always") {
        std::vector<cost::ConvProblem> points = getPoints(c, facts);
        if (points.empty() && mode == "auto")
          continue;
        std::vector<cost::ConvFormTimes> times =
            cost::predictConvForms(points, *target);
        fold = batched && !points.empty() && cost::getFoldRatio(times) < 1;
        double ratio = cost::getIm2ColRatio(times, fold);
        // The prediction stays on the conv (`--emit=fused` shows it).
        if (!points.empty())
          c.conv->setAttr(getConvFormsAttrName(),
                          formsAttr(&getContext(), times, ratio, fold));
        if (mode == "auto" && !(ratio < 1))
          continue;
      }
      Value unit = rewrite(rewriter, c, fold, views);
      if (!unit)
        continue;
      rewriter.replaceAllUsesWith(c.conv.getResult(), unit);
      rewriter.eraseOp(c.conv);
    }
    // Weights left without a user (each conv's own, now viewed).
    llvm::SmallPtrSet<Operation *, 8> erased;
    for (WindowedConv &c : convs)
      if (c.weight->use_empty() && erased.insert(c.weight).second)
        rewriter.eraseOp(c.weight);
  }
};

} // namespace
