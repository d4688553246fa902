//===- PointwiseConvAsGemm.cpp - A one-pixel convolution as a GEMM --------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A convolution whose window is one pixel, with stride 1 and no padding
// (ResNet's bottleneck reductions and expansions, MobileNet's pointwise
// convolutions), computes out[n, f, p] = sum_c W[f, c] * X[n, c, p] over
// the image's pixels p: per image, the [F, C] filter times the [C, H*W]
// pixels. This pass rewrites such a conv kernel into a GEMM kernel that
// computes it so, before its problem is recorded: the tile search then
// builds GEMM candidates for it, and code generation gives it the static
// products (SIMT register tiles, tensor cores in f16) that direct
// convolutions do not have.
//
// A grouped one (ShuffleNet's 1x1s over 3 or 8 groups) is a batched GEMM:
// out[n, g, f, p] = sum_c W[g, f, c] * X[n, g, c, p], each group's [F, C]
// filter times each image's group of pixels. The kernel reaches here with
// the conv on [N, G, F, H, W] between reshapes of its operands and result
// to and from [N, G*F, H, W]; those are folded into its other ops first,
// so that every op runs on the groups and the result is collapsed back at
// the kernel's end only.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"

namespace dyncc {
#define GEN_PASS_DEF_POINTWISECONVASGEMMPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// A one-pixel convolution's loops: the output's [N, (G,) F, image...] in
/// order, then the input channel (and the unit window loops).
struct PointwiseConv {
  int64_t batch, outChannel, inChannel;
  SmallVector<int64_t> image;
  /// The group loop of a grouped conv.
  std::optional<int64_t> group;
  /// The loops before the image's: N, (G,) F.
  int64_t leading() const { return group ? 3 : 2; }
};

/// `op` as a one-pixel convolution of its input 0 (the image, NC... or
/// NGC...) and input 1 (the filter, FC1... or GFC1...), its output in NF...
/// or NGF... order along its leading loops, accumulating products
/// (`acc + x * w`, through casts); failure otherwise (a wider window, a
/// stride, a padded or dilated image: the image is read at the output's
/// pixel).
static FailureOr<PointwiseConv> matchPointwiseConv(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics())
    return failure();
  // Accumulating from zero with the bias added after relies on the body's
  // being a sum of products.
  if (!linalg::detail::isContractionBody(
          *op.getBlock(), [](Operation *elementwise, Operation *reduce) {
            return (isa<arith::MulFOp>(elementwise) &&
                    isa<arith::AddFOp>(reduce)) ||
                   (isa<arith::MulIOp>(elementwise) &&
                    isa<arith::AddIOp>(reduce));
          }))
    return failure();
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(op);
  // A group loop is in the image, the filter and the output: a "depth"
  // loop, as a depthwise conv's channel is.
  if (failed(dims) || dims->batch.size() != 1 ||
      dims->outputChannel.size() != 1 || dims->inputChannel.size() != 1 ||
      dims->depth.size() > 1 || dims->outputImage.empty() ||
      dims->filterLoop.size() != dims->outputImage.size())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned loop : dims->filterLoop)
    if (ranges[loop] != 1)
      return failure();
  PointwiseConv conv{
      dims->batch.front(), dims->outputChannel.front(),
      dims->inputChannel.front(),
      SmallVector<int64_t>(dims->outputImage.begin(), dims->outputImage.end()),
      std::nullopt};
  if (!dims->depth.empty())
    conv.group = dims->depth.front();
  // The maps with the window's loops at 0, against the maps of a product.
  MLIRContext *ctx = op.getContext();
  unsigned loops = op.getNumLoops();
  SmallVector<AffineExpr> dimsOrZero;
  for (unsigned l = 0; l < loops; ++l)
    dimsOrZero.push_back(llvm::is_contained(dims->filterLoop, l)
                             ? getAffineConstantExpr(0, ctx)
                             : getAffineDimExpr(l, ctx));
  auto atZero = [&](AffineMap map) {
    return simplifyAffineMap(
        map.replaceDimsAndSymbols(dimsOrZero, {}, loops, 0));
  };
  auto dim = [&](int64_t l) { return getAffineDimExpr(l, ctx); };
  SmallVector<AffineExpr> image = {dim(conv.batch), dim(conv.inChannel)};
  SmallVector<AffineExpr> filter = {dim(conv.outChannel), dim(conv.inChannel)};
  SmallVector<AffineExpr> output = {dim(conv.batch), dim(conv.outChannel)};
  if (conv.group) {
    image.insert(image.begin() + 1, dim(*conv.group));
    filter.insert(filter.begin(), dim(*conv.group));
    output.insert(output.begin() + 1, dim(*conv.group));
  }
  for (int64_t l : conv.image) {
    image.push_back(dim(l));
    filter.push_back(getAffineConstantExpr(0, ctx));
    output.push_back(dim(l));
  }
  auto expected = [&](ArrayRef<AffineExpr> results) {
    return AffineMap::get(loops, 0, results, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (atZero(maps[0]) != expected(image) ||
      atZero(maps[1]) != expected(filter) || maps[2] != expected(output))
    return failure();
  // The output's dimensions are the leading loops, in order.
  for (auto [i, e] : llvm::enumerate(output))
    if (cast<AffineDimExpr>(e).getPosition() != i)
      return failure();
  return conv;
}

/// The bias a conv's accumulator starts from: `init` computed by a generic
/// from one input alone, elementwise along it (dg.conv's bias broadcast
/// over the output, extended to an f32 accumulator for 16-bit types).
/// Null where the init is anything else.
static linalg::GenericOp getBiasBroadcast(Value init) {
  auto generic = init.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
      generic.hasIndexSemantics() ||
      !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0))
           .isIdentity() ||
      generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
    return nullptr;
  return generic;
}

/// `op`, an elementwise linalg op over [N, G*F, ...] (every loop parallel,
/// every map a projected permutation), rebuilt over [N, G, F, ...]: its
/// operands' dimensions along loop 1 split into (G, F), each operand taken
/// from `expanded` where it was rebuilt already, else expanded in place.
/// Null where `op` is not of that form.
static Value expandChannels(RewriterBase &rewriter, linalg::GenericOp op,
                            int64_t groups, int64_t channels,
                            const DenseMap<Value, Value> &expanded) {
  if (op.getNumResults() != 1 || op.getNumReductionLoops() != 0 ||
      op.hasIndexSemantics())
    return Value();
  MLIRContext *ctx = op.getContext();
  unsigned loops = op.getNumLoops();
  auto dim = [&](unsigned l) { return getAffineDimExpr(l, ctx); };
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return Value();
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type)
      return Value();
    SmallVector<AffineExpr> results;
    SmallVector<ReassociationIndices> reassociation;
    SmallVector<int64_t> shape;
    for (auto [r, e] : llvm::enumerate(map.getResults())) {
      unsigned l = cast<AffineDimExpr>(e).getPosition();
      if (l == 1) {
        if (type.getDimSize(r) != groups * channels)
          return Value();
        reassociation.push_back(
            {int64_t(shape.size()), int64_t(shape.size()) + 1});
        shape.append({groups, channels});
        results.append({dim(1), dim(2)});
        continue;
      }
      reassociation.push_back({int64_t(shape.size())});
      shape.push_back(type.getDimSize(r));
      results.push_back(dim(l == 0 ? 0 : l + 1));
    }
    maps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
    Value value = operand.get();
    if (Value found = expanded.lookup(value)) {
      value = found;
    } else if (shape.size() != size_t(type.getRank())) {
      // Dynamic sizes from the operand itself.
      SmallVector<OpFoldResult> sizes;
      for (auto [r, group] : llvm::enumerate(reassociation))
        for (int64_t d : group)
          sizes.push_back(
              ShapedType::isDynamic(shape[d])
                  ? OpFoldResult(tensor::DimOp::create(rewriter, loc, value, r)
                                     .getResult())
                  : rewriter.getIndexAttr(shape[d]));
      value = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
          value, reassociation, sizes);
    }
    operands.push_back(value);
  }
  SmallVector<utils::IteratorType> iterators(loops + 1,
                                             utils::IteratorType::parallel);
  unsigned inputs = op.getNumDpsInputs();
  auto rebuilt = linalg::GenericOp::create(
      rewriter, loc, TypeRange{operands.back().getType()},
      ArrayRef(operands).take_front(inputs),
      ArrayRef(operands).drop_front(inputs), maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), rebuilt.getRegion(),
                             rebuilt.getRegion().begin());
  return rebuilt.getResult(0);
}

/// Rebuilds the ops around a grouped conv on [N, G, F, H, W] (its bias, its
/// epilogue), which the lowering leaves on [N, G*F, H, W] with reshapes
/// between, on the groups too: only reshapes of the kernel's arguments and
/// of its result remain. False where `func`'s ops are not of that form
/// (it is then left as it was); does nothing where its reduction is not a
/// grouped conv.
static bool expandGroups(func::FuncOp func) {
  Block &entry = func.getBody().front();
  linalg::GenericOp conv;
  for (auto op : entry.getOps<linalg::GenericOp>())
    if (op.getNumReductionLoops() != 0)
      conv = op;
  if (!conv || conv.getNumResults() != 1)
    return true;
  FailureOr<linalg::ConvolutionDimensions> dims =
      linalg::inferConvolutionDims(conv);
  if (failed(dims) || dims->depth.size() != 1)
    return true;
  auto outType = cast<RankedTensorType>(conv.getResult(0).getType());
  if (outType.getRank() < 4 || outType.isDynamicDim(1) ||
      outType.isDynamicDim(2))
    return false;
  int64_t groups = outType.getDimSize(1), channels = outType.getDimSize(2);
  // The conv's init and result reshaped from and to [N, G*F, ...]. (An f16
  // conv's ops are on the groups already: its bias extended to f32 there.)
  auto init = conv.getDpsInits()[0].getDefiningOp<tensor::ExpandShapeOp>();
  if (!init)
    return true;
  if (!conv->hasOneUse())
    return false;
  auto result = dyn_cast<tensor::CollapseShapeOp>(*conv->getUsers().begin());
  if (!result ||
      result.getReassociationIndices() != init.getReassociationIndices())
    return false;
  // The ops after the conv, in order, and the one producing the init.
  IRRewriter rewriter(func.getContext());
  // On every return: the ops without users, the rebuilt ones' originals
  // (or, where a rebuild stops halfway, the rebuilt ones), erased. Last
  // first, so that an op's users are gone when it is reached.
  llvm::scope_exit eraseDead([&] {
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(entry)))
      if (isOpTriviallyDead(&op))
        rewriter.eraseOp(&op);
  });
  DenseMap<Value, Value> expanded;
  expanded[result.getResult()] = conv.getResult(0);
  auto initOp = init.getSrc().getDefiningOp<linalg::GenericOp>();
  if (initOp) {
    rewriter.setInsertionPoint(init);
    Value value = expandChannels(rewriter, initOp, groups, channels, expanded);
    if (!value)
      return false;
    rewriter.modifyOpInPlace(
        conv, [&] { conv.getDpsInitsMutable()[0].assign(value); });
  }
  SmallVector<linalg::GenericOp> after;
  for (Operation *op = conv->getNextNode(); op; op = op->getNextNode())
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      after.push_back(generic);
  for (linalg::GenericOp op : after) {
    rewriter.setInsertionPoint(op);
    Value value = expandChannels(rewriter, op, groups, channels, expanded);
    if (!value)
      return false;
    expanded[op.getResult(0)] = value;
  }
  // The results collapsed back at the end.
  Operation *terminator = entry.getTerminator();
  rewriter.setInsertionPoint(terminator);
  for (OpOperand &operand : terminator->getOpOperands()) {
    Value value = expanded.lookup(operand.get());
    if (!value)
      return false;
    Value back =
        tensor::CollapseShapeOp::create(rewriter, terminator->getLoc(), value,
                                        result.getReassociationIndices());
    rewriter.modifyOpInPlace(terminator, [&] { operand.assign(back); });
  }
  return true;
}

/// Rewrites kernel `func`'s one-pixel conv, and every other op, over the
/// image's pixels collapsed into one loop, the conv as a product of the
/// [F, C] filter and the [N, C, P] image (filter first, A; the image B),
/// accumulating from zero with the bias added after. Leaves any other
/// kernel as it is; fails only where a rewrite the checks allowed did not
/// apply.
static LogicalResult rewriteKernel(func::FuncOp func) {
  // Rebuilt on the groups: the checks below then hold or leave the kernel
  // as a conv. (The rebuild is on the kernel's own IR: where it stops
  // halfway, the ops it rebuilt have no users and the kernel computes what
  // it did.)
  if (!expandGroups(func))
    return success();
  Block &entry = func.getBody().front();
  linalg::GenericOp conv;
  SmallVector<linalg::LinalgOp> others;
  for (Operation &op : entry) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (linalgOp.getNumReductionLoops() != 0) {
        auto generic = dyn_cast<linalg::GenericOp>(op);
        if (conv || !generic)
          return success();
        conv = generic;
      } else {
        others.push_back(linalgOp);
      }
      continue;
    }
    if (!isa<tensor::EmptyOp, tensor::DimOp, arith::ConstantOp, func::ReturnOp,
             tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      return success();
  }
  if (!conv)
    return success();
  FailureOr<PointwiseConv> match = matchPointwiseConv(conv);
  if (failed(match))
    return success();
  // Reshapes only of a grouped conv's kernel arguments (to and from the
  // groups), and of its result, collapsing the groups back, at the end.
  for (Operation &op : entry) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
      continue;
    bool ofArgument = isa<BlockArgument>(op.getOperand(0)) ||
                      op.getOperand(0).getDefiningOp<tensor::EmptyOp>();
    bool ofResult = isa<tensor::CollapseShapeOp>(op) && op.hasOneUse() &&
                    isa<func::ReturnOp>(*op.getUsers().begin()) &&
                    op.getOperand(0).getDefiningOp<linalg::LinalgOp>();
    if (!match->group || !(ofArgument || ofResult))
      return success();
  }
  Value init = conv.getDpsInits()[0];
  linalg::GenericOp bias = getBiasBroadcast(init);
  if (bias && !init.hasOneUse())
    return success();
  if (!bias && !init.getDefiningOp<linalg::FillOp>())
    return success();
  auto outType = cast<RankedTensorType>(init.getType());
  int64_t rank = outType.getRank();
  Type element = outType.getElementType();
  if (bias && !isa<FloatType>(element))
    return success();
  ReassociationIndices imageLoops(match->image.begin(), match->image.end());
  // The image loops follow N (G) and F (matchPointwiseConv), in order.
  int64_t leading = match->leading();
  if (imageLoops.front() != leading || imageLoops.back() != rank - 1)
    return success();
  // The image is as large as the output, so that its pixels are the
  // output's row by row. No stride and no padding make it so for every conv
  // dg.conv lowers to, whose output's shape is its image's; the conv's map
  // alone would allow a larger image, which static sizes show. (A kernel's
  // dynamic sizes are its arguments', which it cannot compare.)
  auto imageType = cast<RankedTensorType>(conv.getDpsInputs()[0].getType());
  for (int64_t d = leading; d < rank; ++d)
    if (imageType.getDimSize(d) != outType.getDimSize(d))
      return success();
  for (linalg::LinalgOp op : others)
    if (op != bias.getOperation() && !collapsesAlong(op, rank, imageLoops))
      return success();
  // An op that reads a computed value through two of its operands (an
  // unfolded f16 batch norm's `ins(%x, ...) outs(%x)`) has tiling fuse the
  // product into it twice, so it is not a static product: its tiles stay
  // per thread, where the GEMM candidates the search would choose (128x128
  // blocks) overflow a thread's temporaries. Such a kernel stays a conv,
  // whose candidates are sized for that structure.
  for (linalg::LinalgOp op : others) {
    llvm::SmallPtrSet<Value, 4> seen;
    for (Value operand : op->getOperands())
      if (operand.getDefiningOp<linalg::LinalgOp>() &&
          !seen.insert(operand).second)
        return success();
  }
  // The bias is read by the epilogue op that adds it, collapsed like the
  // others.
  if (bias) {
    AffineMap map = bias.getMatchingIndexingMap(bias.getDpsInputOperand(0));
    if (!map.isProjectedPermutation() ||
        !linalg::areDimSequencesPreserved({map}, {imageLoops}))
      return success();
  }
  for (Value result : entry.getTerminator()->getOperands()) {
    if (auto collapse = result.getDefiningOp<tensor::CollapseShapeOp>())
      result = collapse.getSrc();
    if (!isa_and_nonnull<linalg::LinalgOp>(result.getDefiningOp()))
      return success();
  }

  IRRewriter rewriter(func.getContext());
  MLIRContext *ctx = func.getContext();
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  // The filter as [F, C] ([G, F, C] grouped).
  Value filter = conv.getDpsInputs()[1];
  auto filterType = cast<RankedTensorType>(filter.getType());
  SmallVector<ReassociationIndices> filterGroups = {{0}, {}};
  if (match->group)
    filterGroups = {{0}, {1}, {}};
  for (int64_t d = filterGroups.size() - 1; d < filterType.getRank(); ++d)
    filterGroups.back().push_back(d);
  filter = tensor::CollapseShapeOp::create(rewriter, loc, filter, filterGroups);
  // Accumulating from zero; a bias is added after the product.
  Value start = init;
  if (bias) {
    Value zero =
        arith::ConstantOp::create(rewriter, loc, rewriter.getZeroAttr(element));
    start = linalg::FillOp::create(rewriter, loc, zero, bias.getDpsInits()[0])
                .getResult(0);
  }
  // The product over [N, (G,) F, image..., C]: loops N, (G,) F, the image,
  // then C.
  int64_t k = rank;
  auto dim = [&](int64_t l) { return getAffineDimExpr(l, ctx); };
  SmallVector<AffineExpr> filterResults = {dim(leading - 1), dim(k)};
  SmallVector<AffineExpr> imageResults = {dim(0), dim(k)};
  if (match->group) {
    filterResults.insert(filterResults.begin(), dim(1));
    imageResults.insert(imageResults.begin() + 1, dim(1));
  }
  for (int64_t l = leading; l < rank; ++l)
    imageResults.push_back(dim(l));
  SmallVector<AffineMap> maps = {
      AffineMap::get(rank + 1, 0, filterResults, ctx),
      AffineMap::get(rank + 1, 0, imageResults, ctx),
      AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Block &body = conv.getRegion().front();
  auto product = linalg::GenericOp::create(
      rewriter, loc, TypeRange{outType},
      ValueRange{filter, conv.getDpsInputs()[0]}, ValueRange{start}, maps,
      iterators, [&](OpBuilder &b, Location, ValueRange args) {
        // The conv's body with its operands swapped.
        IRMapping mapping;
        mapping.map(body.getArgument(0), args[1]);
        mapping.map(body.getArgument(1), args[0]);
        mapping.map(body.getArgument(2), args[2]);
        for (Operation &op : body)
          b.clone(op, mapping);
      });
  Value result = product.getResult(0);
  if (bias) {
    OpOperand *input = bias.getDpsInputOperand(0);
    auto add = linalg::GenericOp::create(
        rewriter, loc, TypeRange{outType}, ValueRange{input->get()},
        ValueRange{result},
        {bias.getMatchingIndexingMap(input),
         AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          // The broadcast's value, then the sum.
          Block &body = bias.getRegion().front();
          IRMapping mapping;
          mapping.map(body.getArgument(0), args[0]);
          for (Operation &op : body.without_terminator())
            b.clone(op, mapping);
          Value value =
              mapping.lookupOrDefault(body.getTerminator()->getOperand(0));
          Value sum = arith::AddFOp::create(b, loc, args[1], value);
          linalg::YieldOp::create(b, loc, sum);
        });
    result = add.getResult(0);
    others.push_back(cast<linalg::LinalgOp>(add.getOperation()));
  }
  rewriter.replaceOp(conv, result);
  if (bias) {
    llvm::erase(others, cast<linalg::LinalgOp>(bias.getOperation()));
    rewriter.eraseOp(bias);
  }
  if (auto fill = start.getDefiningOp<linalg::FillOp>())
    if (!llvm::is_contained(others,
                            cast<linalg::LinalgOp>(fill.getOperation())))
      others.push_back(cast<linalg::LinalgOp>(fill.getOperation()));

  func->setAttr("dyncc.kind", rewriter.getStringAttr("gemm"));
  // A 1-D image is one loop already.
  if (imageLoops.size() == 1)
    return success();
  // Each op on the image collapsed, its results expanded back; the reshapes
  // between two collapsed ops cancel below.
  SmallVector<ReassociationIndices> groups = {{0}, {1}, imageLoops};
  if (match->group)
    groups = {{0}, {1}, {2}, imageLoops};
  if (failed(collapseKernelLoops(rewriter, linalg::LinalgOp(product),
                                 imageLoops, groups,
                                 "collapse the conv's image")) ||
      failed(collapseKernelLoops(rewriter, others, imageLoops, groups,
                                 "collapse the image with the conv's")))
    return failure();
  foldKernelReshapes(func);
  func->setAttr(getFoldedImageAttrName(), rewriter.getUnitAttr());
  return success();
}

struct PointwiseConvAsGemm final
    : ::dyncc::impl::PointwiseConvAsGemmPassBase<PointwiseConvAsGemm> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!isKernelOfKind(func, "conv"))
        continue;
      if (failed(rewriteKernel(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
