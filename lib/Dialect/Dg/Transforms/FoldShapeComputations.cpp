//===- FoldShapeComputations.cpp - Shape sub-graphs to symbolic contents --===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Evaluates the contents of small integer tensors from the propagated
// symbolic shapes (the ops' shape functions again, reading the types), then
// replaces each computed one by a single `dg.constant` or `dg.dim_values`
// and removes what is left dead.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_FOLDSHAPECOMPUTATIONSPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// Stands for a size a shape function would make fresh (data-dependent);
/// contents that mention it are not folded. Not a valid symbol name.
constexpr llvm::StringLiteral kUnknown = "?";

bool mentionsUnknown(ArrayRef<DimExpr> exprs) {
  std::vector<std::string> names;
  for (const DimExpr &e : exprs)
    e.collectSymbols(names);
  return llvm::is_contained(names, kUnknown.str());
}

/// The symbolic contents of the small integer tensors of `func`, in program
/// order. The types already hold the propagated shapes, so every shape
/// function sees its operands' final shapes.
SmallVector<std::pair<Value, SymValue>>
evaluateContents(func::FuncOp func, ShapeConstraints &constraints) {
  DenseMap<Value, SymValue> values;
  SmallVector<std::pair<Value, SymValue>> ordered;
  // Everything here was checked by propagation; a shape function that fails
  // now only means its result's contents stay unknown.
  ScopedDiagnosticHandler quiet(func.getContext(),
                                [](Diagnostic &) { return success(); });
  for (Operation &op : func.getBody().front()) {
    auto iface = dyn_cast<SymbolicShapeOpInterface>(op);
    if (!iface)
      continue;
    SmallVector<SymShape> operandShapes;
    SmallVector<std::optional<SymValue>> operandValues;
    bool shaped = true;
    for (Value operand : op.getOperands()) {
      std::optional<SmallVector<DimExpr>> shape =
          sym::getSymbolicShape(operand.getType());
      if (!shape) {
        shaped = false;
        break;
      }
      operandShapes.emplace_back(shape->begin(), shape->end());
      auto it = values.find(operand);
      operandValues.push_back(it == values.end()
                                  ? std::nullopt
                                  : std::optional<SymValue>(it->second));
    }
    if (!shaped)
      continue;
    ShapeInferenceContext context{
        operandShapes,
        operandValues,
        constraints,
        [](StringRef) { return DimExpr::symbol(kUnknown.str()); },
        {},
        {}};
    context.resultValues.resize(op.getNumResults());
    SmallVector<SymShape> resultShapes;
    if (failed(iface.inferSymbolicShapes(context, resultShapes)))
      continue;
    for (auto [result, contents] :
         llvm::zip(op.getResults(), context.resultValues)) {
      if (!contents || mentionsUnknown(*contents))
        continue;
      values[result] = *contents;
      ordered.emplace_back(result, *contents);
    }
  }
  return ordered;
}

/// The op that materializes `contents` as a tensor of `type`, or null when
/// the type cannot hold them.
Operation *materialize(OpBuilder &builder, Location loc, Type type,
                       const SymValue &contents) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape() ||
      tensorType.getNumElements() != (int64_t)contents.size())
    return nullptr;
  auto intType = dyn_cast<IntegerType>(tensorType.getElementType());
  if (!intType || intType.getWidth() < 8)
    return nullptr;
  if (llvm::all_of(contents, [](const DimExpr &e) { return e.isConstant(); })) {
    SmallVector<APInt> ints;
    for (const DimExpr &e : contents)
      ints.push_back(APInt(intType.getWidth(), *e.getConstant(),
                           /*isSigned=*/true, /*implicitTrunc=*/true));
    return ConstantOp::create(builder, loc, tensorType,
                              DenseElementsAttr::get(tensorType, ints));
  }
  // The symbolic shape encoding is dropped: a dim_values result is static.
  return DimValuesOp::create(
      builder, loc, RankedTensorType::get(tensorType.getShape(), intType),
      sym::ShapeAttr::get(
          builder.getContext(),
          SmallVector<DimExpr>(contents.begin(), contents.end())));
}

struct FoldShapeComputations final
    : ::dyncc::dg::impl::FoldShapeComputationsPassBase<FoldShapeComputations> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ShapeConstraints constraints;
    declareSymbolFacts(module, constraints);
    OpBuilder builder(&getContext());
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func->hasAttr("dyncc.kernel"))
        continue;
      for (auto &[value, contents] : evaluateContents(func, constraints)) {
        Operation *def = value.getDefiningOp();
        if (value.use_empty() || isa<ConstantOp, DimValuesOp>(def))
          continue;
        builder.setInsertionPoint(def);
        Operation *folded =
            materialize(builder, def->getLoc(), value.getType(), contents);
        if (!folded)
          continue;
        if (folded->getResult(0).getType() != value.getType()) {
          // Keep the value's type where an encoding differs only in name.
          folded->erase();
          continue;
        }
        value.replaceAllUsesWith(folded->getResult(0));
      }
      // A constant_of_shape of a static shape is a splat constant (the
      // "light" exports build their weights this way).
      SmallVector<ConstantOfShapeOp> fills;
      func.walk([&](ConstantOfShapeOp op) { fills.push_back(op); });
      for (ConstantOfShapeOp op : fills) {
        auto type = dyn_cast<RankedTensorType>(op.getType());
        auto value = dyn_cast<DenseElementsAttr>(op.getValue());
        if (!type || !type.hasStaticShape() || type.getEncoding() || !value ||
            value.getNumElements() != 1 ||
            value.getElementType() != type.getElementType())
          continue;
        builder.setInsertionPoint(op);
        auto splat = ConstantOp::create(
            builder, op.getLoc(), type,
            DenseElementsAttr::get(type,
                                   *value.getValues<Attribute>().begin()));
        op.getResult().replaceAllUsesWith(splat.getResult());
      }
      // What fed only shape computations is dead now.
      SmallVector<Operation *> ops;
      for (Operation &op : func.getBody().front())
        ops.push_back(&op);
      for (Operation *op : llvm::reverse(ops))
        if (isOpTriviallyDead(op))
          op->erase();
    }
  }
};

} // namespace
