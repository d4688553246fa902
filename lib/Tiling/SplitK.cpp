//===- SplitK.cpp - A GEMM's K split over blocks ---------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites each GEMM variant whose tile config has `split_k S` into two
// kernels: `<variant>_part`, the contraction over each S-th of K into its
// own slice of an f32 workspace [S, ...destination's shape], a batched
// contraction with S as its outermost parallel dimension (so S blocks share
// each output tile), and `<variant>_sum`, the kernel itself with its
// contraction replaced by the sum of the S slices, its epilogue unchanged.
// The variant's function stays as the dispatch's description of the pair
// (`dyncc.split_k`) and is no longer a kernel.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/Passes.h"
#include "dyncc/Tiling/SplitK.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace dyncc {
#define GEN_PASS_DEF_SPLITKPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// What a kernel's split needs: its one contraction, the loop it reduces,
/// and how its accumulator relates to the kernel's destination.
struct SplitPlan {
  linalg::LinalgOp contraction;
  unsigned reductionDim = 0;
  int64_t k = 0;
  /// The destination argument the accumulator has the shape of, collapsed
  /// by `collapse` where that is not empty.
  BlockArgument destination;
  SmallVector<ReassociationIndices> collapse;
  /// The ops the contraction's operands come through from the arguments
  /// (isOperandPath), which the part kernel clones.
  SetVector<Operation *> operandPath;
};

/// The ops a contraction's operands may come through from the arguments:
/// reshapes (a folded batch) and what sizes them.
bool isOperandPath(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::DimOp,
             arith::ConstantOp>(op);
}

/// Whether `size` is the product of `destination`'s sizes along `group`:
/// the static one alone, `tensor.dim` of the one dynamic one, or an
/// `affine.apply` multiplying the `tensor.dim`s of the dynamic ones (each
/// once) and the static ones (a folded batch's `B*S` rows, canonicalized).
static bool isProductOfSizes(OpFoldResult size, Value destination,
                             const ReassociationIndices &group) {
  auto type = cast<RankedTensorType>(destination.getType());
  int64_t staticProduct = 1;
  SmallVector<int64_t> dynamicDims;
  for (int64_t d : group) {
    if (type.isDynamicDim(d))
      dynamicDims.push_back(d);
    else
      staticProduct *= type.getDimSize(d);
  }
  if (std::optional<int64_t> c = getConstantIntValue(size))
    return dynamicDims.empty() && *c == staticProduct;
  auto value = cast<Value>(size);
  auto isDimOf = [&](Value v, int64_t d) {
    auto dim = v.getDefiningOp<tensor::DimOp>();
    return dim && dim.getSource() == destination && dim.getConstantIndex() == d;
  };
  if (dynamicDims.size() == 1 && staticProduct == 1 &&
      isDimOf(value, dynamicDims.front()))
    return true;
  auto apply = value.getDefiningOp<affine::AffineApplyOp>();
  if (!apply || apply.getNumOperands() != dynamicDims.size())
    return false;
  // The operands are the dynamic sizes, in any order, each once.
  llvm::SmallBitVector seen(dynamicDims.size());
  for (Value operand : apply.getOperands()) {
    auto it = llvm::find_if(dynamicDims,
                            [&](int64_t d) { return isDimOf(operand, d); });
    if (it == dynamicDims.end() || seen.test(it - dynamicDims.begin()))
      return false;
    seen.set(it - dynamicDims.begin());
  }
  // The map is a product of its inputs, each once, and constants whose
  // product is the static sizes'.
  AffineMap map = apply.getAffineMap();
  llvm::SmallBitVector inputs(map.getNumInputs());
  int64_t constant = 1;
  std::function<bool(AffineExpr)> walk = [&](AffineExpr e) -> bool {
    if (auto bin = dyn_cast<AffineBinaryOpExpr>(e))
      return e.getKind() == AffineExprKind::Mul && walk(bin.getLHS()) &&
             walk(bin.getRHS());
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      constant *= c.getValue();
      return true;
    }
    unsigned position =
        isa<AffineDimExpr>(e)
            ? cast<AffineDimExpr>(e).getPosition()
            : map.getNumDims() + cast<AffineSymbolExpr>(e).getPosition();
    if (inputs.test(position))
      return false;
    inputs.set(position);
    return true;
  };
  return map.getNumResults() == 1 && walk(map.getResult(0)) && inputs.all() &&
         constant == staticProduct;
}

/// The split of `kernel` by `parts` (0: the structure alone), or why there
/// is none.
FailureOr<SplitPlan> analyze(func::FuncOp kernel, int64_t parts,
                             int64_t kStep, std::string &why) {
  SplitPlan plan;
  SmallVector<linalg::LinalgOp> reductions;
  kernel.walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() > 0)
      reductions.push_back(op);
  });
  if (reductions.size() != 1 ||
      !linalg::isaContractionOpInterface(reductions.front()) ||
      reductions.front().getNumReductionLoops() != 1 ||
      reductions.front().getNumDpsInits() != 1) {
    why = "it is not one contraction over one reduction loop";
    return failure();
  }
  linalg::LinalgOp op = reductions.front();
  plan.contraction = op;
  SmallVector<unsigned> reductionDims;
  op.getReductionDims(reductionDims);
  plan.reductionDim = reductionDims.front();
  int64_t k = op.getStaticLoopRanges()[plan.reductionDim];
  if (ShapedType::isDynamic(k)) {
    why = "its K is dynamic";
    return failure();
  }
  plan.k = k;
  if (parts > 0 && (k % parts != 0 || (k / parts) % kStep != 0)) {
    why = "K = " + std::to_string(k) + " is not " + std::to_string(parts) +
          " parts of whole k-steps of " + std::to_string(kStep);
    return failure();
  }
  // Each operand indexes K by the loop itself, at one position.
  AffineExpr kExpr = getAffineDimExpr(plan.reductionDim, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (llvm::count(map.getResults(), kExpr) != 1 ||
        llvm::any_of(map.getResults(), [&](AffineExpr e) {
          return e != kExpr && e.isFunctionOfDim(plan.reductionDim);
        })) {
      why = "an operand does not index K by its loop";
      return failure();
    }
    // Computed from the arguments by reshapes alone.
    SmallVector<Value> work{input->get()};
    while (!work.empty()) {
      Value value = work.pop_back_val();
      if (isa<BlockArgument>(value))
        continue;
      Operation *def = value.getDefiningOp();
      if (!isOperandPath(def)) {
        why = "an operand is computed in the kernel (by " +
              def->getName().getStringRef().str() + ")";
        return failure();
      }
      if (plan.operandPath.insert(def))
        llvm::append_range(work, def->getOperands());
    }
  }
  // The accumulator: zeros in the destination, or in its collapse, or in
  // an empty tensor of its shape (an f32 accumulator of an f16 result).
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat())) {
    why = "its accumulator does not start at zero";
    return failure();
  }
  if (kernel.getNumResults() != 1) {
    why = "it has several results";
    return failure();
  }
  Block &entry = kernel.getBody().front();
  BlockArgument destination = entry.getArguments().back();
  Value init = fill.getOutputs()[0];
  auto accumulator = cast<RankedTensorType>(init.getType());
  auto destinationType = cast<RankedTensorType>(destination.getType());
  if (init == destination) {
    plan.destination = destination;
  } else if (auto collapse = init.getDefiningOp<tensor::CollapseShapeOp>();
             collapse && collapse.getSrc() == destination) {
    plan.destination = destination;
    plan.collapse = collapse.getReassociationIndices();
  } else if (auto empty = init.getDefiningOp<tensor::EmptyOp>()) {
    // An empty tensor of the destination's shape, or of its collapse (an
    // f32 accumulator of an f16 result, whose batch may be folded into M):
    // each size the product of the destination's along its group.
    std::optional<SmallVector<ReassociationIndices>> groups;
    if (accumulator.getRank() == destinationType.getRank()) {
      if (accumulator.getShape() == destinationType.getShape())
        groups = llvm::map_to_vector(
            llvm::seq<int64_t>(0, accumulator.getRank()),
            [](int64_t d) { return ReassociationIndices{d}; });
    } else {
      groups = getReassociationIndicesForCollapse(destinationType.getShape(),
                                                  accumulator.getShape());
    }
    if (!groups || !llvm::all_of(llvm::zip(empty.getMixedSizes(), *groups),
                                 [&](auto pair) {
                                   return isProductOfSizes(std::get<0>(pair),
                                                           destination,
                                                           std::get<1>(pair));
                                 })) {
      why = "its accumulator is not of the destination's shape";
      return failure();
    }
    plan.destination = destination;
    if (accumulator.getRank() != destinationType.getRank())
      plan.collapse = *groups;
  } else {
    why = "its accumulator is not of the destination's shape";
    return failure();
  }
  if (!accumulator.getElementType().isF32()) {
    why = "its accumulator is not f32";
    return failure();
  }
  return plan;
}

/// The workspace's type: `parts` slices of the destination's shape, f32.
RankedTensorType getWorkspaceType(const SplitPlan &plan, int64_t parts) {
  auto destination = cast<RankedTensorType>(plan.destination.getType());
  SmallVector<int64_t> shape{parts};
  llvm::append_range(shape, destination.getShape());
  return RankedTensorType::get(shape, Float32Type::get(plan.destination
                                                           .getContext()));
}

/// The workspace `workspace` as the accumulator's [parts, ...] (collapsed
/// like the destination where the accumulator is).
Value viewWorkspace(OpBuilder &b, Location loc, Value workspace,
                    const SplitPlan &plan) {
  if (plan.collapse.empty())
    return workspace;
  SmallVector<ReassociationIndices> groups{{0}};
  for (const ReassociationIndices &group : plan.collapse) {
    ReassociationIndices shifted;
    for (int64_t d : group)
      shifted.push_back(d + 1);
    groups.push_back(shifted);
  }
  return tensor::CollapseShapeOp::create(b, loc, workspace, groups);
}

/// `<kernel>_part`: the contraction over part s of K into slice s of the
/// workspace (its last argument, which it returns).
func::FuncOp buildPart(func::FuncOp kernel, const SplitPlan &plan,
                       int64_t parts, const TileConfig &config) {
  Location loc = kernel.getLoc();
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  RankedTensorType workspaceType = getWorkspaceType(plan, parts);
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  inputs.push_back(workspaceType);
  auto part = func::FuncOp::create(
      b, loc, kernel.getSymName().str() + "_part",
      b.getFunctionType(inputs, {workspaceType}));
  part->setDiscardableAttrs(kernel->getDiscardableAttrDictionary());
  Block *entry = part.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(kernel.getArguments(),
                                   entry->getArguments().drop_back()))
    mapping.map(from, to);
  Value workspace = entry->getArguments().back();

  // The operands' paths from the arguments, in the kernel's order.
  linalg::LinalgOp op = plan.contraction;
  kernel.walk([&](Operation *inner) {
    if (plan.operandPath.contains(inner))
      b.clone(*inner, mapping);
  });

  // Loops (s, the contraction's loops with K now one part of it): each
  // operand's K position becomes [s, k].
  unsigned numLoops = op.getNumLoops();
  MLIRContext *context = kernel.getContext();
  AffineExpr s = getAffineDimExpr(0, context);
  auto shift = [&](AffineExpr e) { return e.shiftDims(numLoops, 1); };
  int64_t chunk = plan.k / parts;
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    Value value = mapping.lookup(input->get());
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<ReassociationIndices> groups;
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> results;
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(b, loc, value);
    SmallVector<OpFoldResult> expandedSizes;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      int64_t next = shape.size();
      if (e == getAffineDimExpr(plan.reductionDim, context)) {
        groups.push_back({next, next + 1});
        shape.append({parts, chunk});
        expandedSizes.append({b.getIndexAttr(parts), b.getIndexAttr(chunk)});
        results.append({s, shift(e)});
        continue;
      }
      groups.push_back({next});
      shape.push_back(type.getDimSize(i));
      expandedSizes.push_back(sizes[i]);
      results.push_back(shift(e));
    }
    operands.push_back(tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), value,
        groups, expandedSizes));
    maps.push_back(AffineMap::get(numLoops + 1, 0, results, context));
  }
  AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
  SmallVector<AffineExpr> outResults{s};
  for (AffineExpr e : outMap.getResults())
    outResults.push_back(shift(e));
  maps.push_back(AffineMap::get(numLoops + 1, 0, outResults, context));

  Value view = viewWorkspace(b, loc, workspace, plan);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value init = linalg::FillOp::create(b, loc, zero, view).getResult(0);
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
  llvm::append_range(iterators, op.getIteratorTypesArray());
  auto generic = linalg::GenericOp::create(b, loc, view.getType(), operands,
                                           init, maps, iterators);
  IRMapping bodyMapping;
  op->getRegion(0).cloneInto(&generic.getRegion(), bodyMapping);
  Value result = generic.getResult(0);
  if (!plan.collapse.empty()) {
    SmallVector<ReassociationIndices> groups =
        cast<tensor::CollapseShapeOp>(view.getDefiningOp())
            .getReassociationIndices();
    result = tensor::ExpandShapeOp::create(
        b, loc, workspaceType, result, groups,
        tensor::getMixedSizes(b, loc, workspace));
  }
  func::ReturnOp::create(b, loc, result);

  // Its tiles: one part per block along the new outermost dimension.
  TileConfig partConfig = config.fitToRank(config.blockTile.size() + 1);
  part->setAttr(TileConfig::getAttrName(), partConfig.toAttr(context));
  return part;
}

/// `<kernel>_sum`: the kernel with its contraction replaced by the sum of
/// the workspace's slices (its last argument).
func::FuncOp buildSum(func::FuncOp kernel, const SplitPlan &plan,
                      int64_t parts) {
  OpBuilder b(kernel);
  b.setInsertionPointAfter(kernel);
  IRMapping cloned;
  auto sum = cast<func::FuncOp>(b.clone(*kernel, cloned));
  sum.setSymName(kernel.getSymName().str() + "_sum");
  RankedTensorType workspaceType = getWorkspaceType(plan, parts);
  // The workspace is the last argument (with the type, the entry block and
  // the argument attributes the kernel has, such as dyncc.dim_divisors).
  unsigned last = sum.getNumArguments();
  if (failed(sum.insertArgument(last, workspaceType, DictionaryAttr(),
                                kernel.getLoc())))
    return nullptr;
  Value workspace = sum.getArgument(last);

  // The clone's contraction.
  auto op = cast<linalg::LinalgOp>(
      cloned.lookup(static_cast<Operation *>(plan.contraction)));
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  Value view = viewWorkspace(b, loc, workspace, plan);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, view);
  SmallVector<Value> slices;
  for (int64_t p = 0; p < parts; ++p) {
    SmallVector<OpFoldResult> offsets(rank + 1, b.getIndexAttr(0));
    offsets[0] = b.getIndexAttr(p);
    SmallVector<OpFoldResult> sliceSizes(sizes);
    sliceSizes[0] = b.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(rank + 1, b.getIndexAttr(1));
    slices.push_back(tensor::ExtractSliceOp::create(
        b, loc, type, view, offsets, sliceSizes, strides));
  }
  SmallVector<AffineMap> maps(parts + 1, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto added = linalg::GenericOp::create(
      b, loc, type, slices, op.getDpsInits()[0], maps, iterators,
      [&](OpBuilder &nested, Location at, ValueRange args) {
        Value total = args[0];
        for (Value next : args.drop_front().drop_back())
          total = arith::AddFOp::create(nested, at, total, next);
        linalg::YieldOp::create(nested, at, total);
      });
  op->getResult(0).replaceAllUsesWith(added.getResult(0));
  op->erase();

  // An elementwise kernel now: the default tiles of its rank.
  auto result = cast<RankedTensorType>(kernel.getResultTypes()[0]);
  sum->setAttr(TileConfig::getAttrName(),
               TileConfig::getDefault("elementwise", result.getRank())
                   .toAttr(kernel.getContext()));
  sum->setAttr("dyncc.kind", b.getStringAttr("elementwise"));
  sum->removeAttr("dyncc.gemm_problem");
  return sum;
}

struct SplitKPass final : dyncc::impl::SplitKPassBase<SplitKPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr("dyncc.kernel"))
        kernels.push_back(func);
    for (func::FuncOp kernel : kernels) {
      FailureOr<TileConfig> config = TileConfig::fromAttr(
          kernel->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName()));
      if (failed(config) || config->splitK == 1)
        continue;
      int64_t parts = config->splitK;
      std::string why;
      FailureOr<SplitPlan> plan = analyze(kernel, parts, config->kStep, why);
      if (failed(plan)) {
        kernel.emitError("kernel '")
            << kernel.getSymName() << "': cannot split K into " << parts
            << " parts (config '" << config->str() << "'): " << why;
        return signalPassFailure();
      }
      func::FuncOp sum = buildSum(kernel, *plan, parts);
      if (!sum) {
        kernel.emitError("kernel '")
            << kernel.getSymName() << "': cannot add the split-K workspace";
        return signalPassFailure();
      }
      func::FuncOp part = buildPart(kernel, *plan, parts, *config);
      // The variant's function describes the pair from now on.
      Builder b(kernel.getContext());
      kernel->removeAttr("dyncc.kernel");
      kernel->setAttr(
          getSplitKAttrName(),
          b.getDictionaryAttr(
              {b.getNamedAttr("part",
                              FlatSymbolRefAttr::get(part.getSymNameAttr())),
               b.getNamedAttr("sum",
                              FlatSymbolRefAttr::get(sum.getSymNameAttr())),
               b.getNamedAttr("parts", b.getI64IntegerAttr(parts))}));
    }
  }
};

} // namespace

std::optional<SplitKernels> dyncc::getSplitKernels(func::FuncOp variant) {
  auto split = variant->getAttrOfType<DictionaryAttr>(getSplitKAttrName());
  if (!split)
    return std::nullopt;
  auto lookup = [&](StringRef key) {
    auto ref = split.getAs<FlatSymbolRefAttr>(key);
    return ref ? SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(variant,
                                                                     ref)
               : func::FuncOp();
  };
  SplitKernels kernels{lookup("part"), lookup("sum")};
  auto parts = split.getAs<IntegerAttr>("parts");
  if (!kernels.part || !kernels.sum || !parts)
    return std::nullopt;
  kernels.parts = parts.getInt();
  return kernels;
}

std::optional<std::string> dyncc::whyNoSplitK(func::FuncOp kernel) {
  std::string why;
  if (failed(analyze(kernel, /*parts=*/0, /*kStep=*/1, why)))
    return why;
  return std::nullopt;
}
