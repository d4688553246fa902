//===- FusionUtils.cpp - Building fusion groups ---------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

bool dg::isElementwise(Operation *op) {
  if (auto bn = dyn_cast<BatchNormOp>(op))
    return bn->getNumResults() == 1;
  return op->hasTrait<dg::Elementwise>();
}

bool dg::isReshape(Operation *op) {
  return isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op);
}

bool dg::reshapesRuns(Operation *op) {
  std::optional<SmallVector<DimExpr>> in = shapeOf(op->getOperand(0));
  std::optional<SmallVector<DimExpr>> out = shapeOf(op->getResult(0));
  if (!in || !out)
    return false;
  if (in->empty() || out->empty())
    return true; // To or from unit dimensions.
  // Static sizes always match (a 0 among them aside, which the lowering
  // makes an empty destination).
  auto isStatic = [](const DimExpr &d) { return d.isConstant(); };
  if (llvm::all_of(*in, isStatic) && llvm::all_of(*out, isStatic))
    return true;
  SmallVector<SmallVector<int64_t, 2>> inRuns, outRuns;
  return succeeded(sym::matchReshape(*in, *out, inRuns, outRuns));
}

bool dg::isElementMapping(Operation *op) {
  if (isReshape(op))
    return reshapesRuns(op);
  return isElementwise(op) || isa<TransposeOp>(op);
}

bool dg::isFusionCandidate(Operation *op) {
  return isa<SymbolicShapeOpInterface>(op) &&
         !isa<ConstantOp, DimValuesOp>(op) &&
         isa_and_nonnull<func::FuncOp>(op->getParentOp());
}

std::optional<Reduction> dg::getReduction(Operation *op) {
  return TypeSwitch<Operation *, std::optional<Reduction>>(op)
      .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp>(
          [](auto reduce) -> std::optional<Reduction> {
            Reduction r{std::nullopt, reduce.getKeepdims()};
            if (reduce.getAxes())
              r.axes = *reduce.getAxes();
            return r;
          })
      .Default([](Operation *) { return std::nullopt; });
}

bool dg::isRowReduction(Operation *op) {
  std::optional<Reduction> reduction = getReduction(op);
  return reduction && reduction->keepdims;
}

std::optional<SmallVector<DimExpr>> dg::shapeOf(Value value) {
  return sym::getSymbolicShape(value.getType());
}

/// The first and last of `ops` in their block.
static std::pair<Operation *, Operation *> span(ArrayRef<Operation *> ops) {
  Operation *first = ops.front(), *last = ops.front();
  for (Operation *op : ops) {
    if (op->isBeforeInBlock(first))
      first = op;
    if (last->isBeforeInBlock(op))
      last = op;
  }
  return {first, last};
}

/// The outside ops between the first and the last of `ops` that depend on
/// them; false through `convex` when one of `ops` depends on such an op.
static llvm::SetVector<Operation *> dependents(const OpSet &ops, bool &convex) {
  llvm::SetVector<Operation *> tainted;
  convex = true;
  auto [first, last] = span(ops.getArrayRef());
  for (Operation *op = first; op != last->getNextNode();
       op = op->getNextNode()) {
    bool inGroup = ops.contains(op);
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      if (inGroup && tainted.contains(def)) {
        convex = false;
        return tainted;
      }
      if (!inGroup && (ops.contains(def) || tainted.contains(def)))
        tainted.insert(op);
    }
  }
  return tainted;
}

bool dg::isConvex(const OpSet &ops) {
  bool convex;
  (void)dependents(ops, convex);
  return convex;
}

bool dg::tryAddToGroup(OpSet &group, Operation *op) {
  if (group.contains(op))
    return false;
  group.insert(op);
  if (isConvex(group))
    return true;
  group.pop_back();
  return false;
}

FusionOp dg::createFusionGroup(RewriterBase &rewriter,
                               ArrayRef<Operation *> ops, FusionKind kind,
                               ArrayRef<Operation *> backbones) {
  OpSet set(ops.begin(), ops.end());
  bool convex;
  llvm::SetVector<Operation *> tainted = dependents(set, convex);
  assert(convex && "a fusion group must not depend on itself");
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Value> escaping;
  for (Operation *op : ordered)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !set.contains(user); }))
        escaping.push_back(result);

  Operation *last = ordered.back();
  rewriter.setInsertionPoint(last);
  auto fusion = FusionOp::create(rewriter, last->getLoc(),
                                 ValueRange(escaping).getTypes(), kind);
  // What used the group in between now comes after it, in order.
  Operation *after = fusion;
  for (Operation *op : tainted) {
    rewriter.moveOpAfter(op, after);
    after = op;
  }
  Block *body = rewriter.createBlock(&fusion.getBody());
  for (Operation *op : ordered)
    rewriter.moveOpBefore(op, body, body->end());
  rewriter.setInsertionPointToEnd(body);
  YieldOp::create(rewriter, last->getLoc(), escaping);
  for (Operation *backbone : backbones)
    backbone->setAttr(FusionOp::getBackboneAttrName(), rewriter.getUnitAttr());
  for (auto [value, result] : llvm::zip(escaping, fusion.getResults()))
    rewriter.replaceUsesWithIf(value, result, [&](OpOperand &use) {
      return !fusion->isProperAncestor(use.getOwner());
    });
  return fusion;
}

SmallVector<Operation *> dg::dissolveFusionGroup(RewriterBase &rewriter,
                                                 FusionOp group) {
  SmallVector<Operation *> ops;
  Block &body = group.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    ops.push_back(&op);
    rewriter.moveOpBefore(&op, group);
  }
  rewriter.replaceOp(group, yield.getValues());
  return ops;
}
