//===- ConvIm2Col.cpp - Windowed convolutions as a copy and a GEMM --------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A 2-D convolution whose window is wider than a pixel (a ResNet's 3x3s and
// its 7x7 stem), or a 1-D one (wav2vec2's and Whisper's audio front ends),
// runs as a direct conv: SIMT threads, no tensor cores. Copying its windows
// into channels (`dg.im2col`, the [N, C*KH*KW, OH, OW] tensor of every
// pixel's window) makes it a 1x1 conv of that copy with the same weights
// viewed as [F, C*KH*KW, 1, 1], which dyncc-pointwise-conv-as-gemm turns
// into a GEMM (register tiles, tensor cores in f16 and bf16). The copy costs
// a pass over KH*KW times the input. A 1-D conv is the same with one row:
// [N, C*KW, OW] and [F, C*KW, 1]. A grouped one's copy holds each group's
// windows together (a channel's are together, and so are a group's
// channels), so it is a grouped 1x1 conv of the copy with the weights viewed
// as [F, C/G*KH*KW, 1, 1]: a GEMM per image and group (ResNeXt's 32-group
// 3x3s). Which form is faster depends on the conv and the device, so the
// cost model decides, conv by conv: the direct conv's best predicted time
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

#include <cmath>

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

/// A conv im2col can take: 1-D (NCW) or 2-D (NCHW), a window of more than
/// one pixel, explicit padding, constant weights, symbolic shapes, one
/// float element type. A 1-D conv's `kh` is 1; `inC` is a group's input
/// channels, `outC` every group's output channels.
struct WindowedConv {
  ConvOp conv;
  ConstantOp weight;
  SmallVector<DimExpr> input, output;
  int64_t outC, inC, kh, kw;
  int64_t spatial;
  int64_t groups;

  /// The output's rows (1 for a 1-D conv) and columns.
  DimExpr outH() const { return spatial == 2 ? output[2] : DimExpr(1); }
  DimExpr outW() const { return output[spatial + 1]; }
  /// The window's taps, KH*KW, the copy's channels per input channel.
  int64_t taps() const { return kh * kw; }
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
      conv.getGroup() < 1 || (wType.getRank() != 3 && wType.getRank() != 4))
    return std::nullopt;
  int64_t spatial = wType.getRank() - 2;
  if (inType.getRank() != spatial + 2 || !wType.hasStaticShape() ||
      !isa<FloatType>(wType.getElementType()) ||
      wType.getElementType() != inType.getElementType() ||
      wType.getElementType() != outType.getElementType() ||
      (conv.getAutoPad() != "NOTSET" && conv.getAutoPad() != "VALID" &&
       !conv.getAutoPad().starts_with("SAME")) ||
      int64_t(conv.getStrides().size()) != spatial ||
      int64_t(conv.getDilations().size()) != spatial ||
      int64_t(conv.getPads().size()) != 2 * spatial ||
      !isa<ElementsAttr>(weight.getValue()))
    return std::nullopt;
  ArrayRef<int64_t> w = wType.getShape();
  int64_t kh = spatial == 2 ? w[2] : 1, kw = w.back();
  if (kh * kw <= 1)
    return std::nullopt;
  // SAME padding is explicit where the image's size is static.
  auto isStatic = [](const DimExpr &d) { return d.isConstant(); };
  if (conv.getAutoPad().starts_with("SAME") &&
      !(llvm::all_of(ArrayRef(*in).drop_front(2), isStatic) &&
        llvm::all_of(ArrayRef(*out).drop_front(2), isStatic)))
    return std::nullopt;
  int64_t groups = conv.getGroup();
  if (w[0] % groups != 0)
    return std::nullopt;
  return WindowedConv{conv, weight, *in, *out,    w[0],
                      w[1], kh,     kw,  spatial, groups};
}

/// The pads the conv reads, [top, left, bottom, right] ([left, right] in
/// 1-D): none for VALID, SAME's from the static sizes (getSamePadding, the
/// conv lowering's rule), else its pads.
SmallVector<int64_t> getPads(const WindowedConv &c) {
  ConvOp conv = c.conv;
  int64_t spatial = c.spatial;
  if (conv.getAutoPad() == "VALID")
    return SmallVector<int64_t>(2 * spatial, 0);
  if (!conv.getAutoPad().starts_with("SAME"))
    return SmallVector<int64_t>(conv.getPads());
  SmallVector<int64_t> pads(2 * spatial, 0);
  SmallVector<int64_t> window = {c.kh, c.kw};
  if (spatial == 1)
    window = {c.kw};
  for (int64_t d = 0; d < spatial; ++d) {
    auto [low, high] =
        getSamePadding(c.input[2 + d], c.output[2 + d], DimExpr(window[d]),
                       conv.getStrides()[d], conv.getDilations()[d],
                       conv.getAutoPad() == "SAME_UPPER");
    pads[d] = *low.getConstant();
    pads[d + spatial] = *high.getConstant();
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
  for (const DimExpr &d : {c.input[0], c.outH(), c.outW()})
    d.collectSymbols(names);
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  cost::ConvProblem base;
  base.outC = c.outC / c.groups;
  base.inC = c.inC;
  base.groups = c.groups;
  base.kh = c.kh;
  base.kw = c.kw;
  base.spatialDims = c.spatial;
  base.strideH = c.spatial == 2 ? c.conv.getStrides()[0] : 1;
  base.strideW = c.conv.getStrides().back();
  base.dilationH = c.spatial == 2 ? c.conv.getDilations()[0] : 1;
  base.dilationW = c.conv.getDilations().back();
  base.elementBytes =
      cast<RankedTensorType>(c.conv.getType()).getElementTypeBitWidth() / 8;
  base.staticH = c.outH().isConstant();
  base.staticW = c.outW().isConstant();
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
                           h = c.outH().evaluate(values),
                           w = c.outW().evaluate(values);
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
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("direct", us(sum.direct)),
      b.getNamedAttr("copy", us(sum.copy)),
      b.getNamedAttr("gemm", us(sum.gemm)),
      b.getNamedAttr("fold", b.getBoolAttr(fold)),
      b.getNamedAttr("ratio", b.getF64FloatAttr(ratio))};
  // A grouped conv has no folded form.
  if (std::isfinite(sum.folded()))
    entries.push_back(b.getNamedAttr("folded", us(sum.folded())));
  return b.getDictionaryAttr(entries);
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
/// NCHW (in 1-D, [F, N, OW] to NCW). `weight` is the weights viewed as
/// [F, C*KH*KW].
Value rewriteFolded(RewriterBase &rewriter, WindowedConv c, Value col,
                    Value weight) {
  ConvOp conv = c.conv;
  Location loc = conv.getLoc();
  Type et = getElementTypeOrSelf(conv.getType());
  DimExpr depth(c.inC * c.taps()), n = c.input[0];
  DimExpr pixels = n * c.outH() * c.outW();
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
  SmallVector<DimExpr> planeShape = {DimExpr(c.outC), n};
  planeShape.append(c.output.begin() + 2, c.output.end());
  Value planes = reshape(rewriter, loc, product, planeShape);
  planes.getDefiningOp()->setAttr(getNotEpilogueAttrName(),
                                  rewriter.getUnitAttr());
  SmallVector<int64_t> perm = {1, 0, 2, 3};
  perm.resize(c.spatial + 2);
  return TransposeOp::create(rewriter, loc, conv.getType(), planes,
                             rewriter.getDenseI64ArrayAttr(perm));
}

/// Rewrites `c` as dg.im2col and a 1x1 conv, or with `fold` as
/// rewriteFolded's GEMM; returns the new result. `views` holds the weights
/// already viewed as [F, C*KH*KW, 1, 1] ([F, C*KW, 1] in 1-D, [F, C*KH*KW]
/// folded), by constant and form, so that convs sharing weights share the
/// view.
Value rewrite(RewriterBase &rewriter, WindowedConv c, bool fold,
              DenseMap<std::pair<Operation *, unsigned>, Value> &views) {
  ConvOp conv = c.conv;
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  auto inType = cast<RankedTensorType>(conv.getInput().getType());
  // The copy's channels are every group's; the weights' a group's.
  int64_t depth = c.inC * c.taps();
  SmallVector<DimExpr> colShape = {c.input[0], DimExpr(depth * c.groups)};
  colShape.append(c.output.begin() + 2, c.output.end());
  if (fold)
    std::swap(colShape[0], colShape[1]);
  Type colType = typeOf(colShape, inType.getElementType());
  SmallVector<int64_t> window = {c.kh, c.kw};
  if (c.spatial == 1)
    window = {c.kw};
  Value col = Im2ColOp::create(
      rewriter, loc, colType, conv.getInput(),
      rewriter.getDenseI64ArrayAttr(window), conv.getStridesAttr(),
      rewriter.getDenseI64ArrayAttr(getPads(c)), conv.getDilationsAttr(),
      rewriter.getBoolAttr(fold));
  // The weights [F, C, KH, KW] are [F, C*KH*KW, 1, 1] (or [F, C*KH*KW]
  // folded) in the same order, and [F, C, KW] are [F, C*KW, 1].
  SmallVector<int64_t> ones(c.spatial, 1), zeros(2 * c.spatial, 0);
  Value &weight = views[{c.weight, unsigned(fold)}];
  if (!weight) {
    auto wType = cast<RankedTensorType>(c.weight.getType());
    SmallVector<int64_t> viewShape = {c.outC, depth};
    if (!fold)
      viewShape.append(ones);
    RankedTensorType viewType = reshaped(wType, viewShape);
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
  auto unit = ConvOp::create(
      rewriter, loc, conv.getType(), col, weight, conv.getBias(),
      rewriter.getDenseI64ArrayAttr(ones), rewriter.getDenseI64ArrayAttr(zeros),
      rewriter.getDenseI64ArrayAttr(ones), conv.getGroupAttr(),
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
      // (A grouped conv's GEMM is batched over the groups already; there is
      // no folded form of it.)
      bool batched = c.input[0] != DimExpr(1) && c.groups == 1;
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
