//===- InferShapes.cpp - Symbolic shape propagation -----------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Propagates symbolic shapes through each graph function in program order
// using the ops' shape functions, then rewrites every type with the resolved
// shapes and materializes the facts that remain as `sym.constraint` ops.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_INFERSHAPESPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// Shape state of one function: the symbolic shape of every tensor value.
class ShapePropagation {
public:
  explicit ShapePropagation(ShapeConstraints &constraints)
      : constraints(constraints) {}

  LogicalResult run(func::FuncOp func) {
    for (BlockArgument arg : func.getArguments()) {
      if (!isa<RankedTensorType>(arg.getType()))
        continue;
      std::optional<SmallVector<DimExpr>> shape =
          sym::getSymbolicShape(arg.getType());
      if (!shape)
        return func.emitOpError("argument ")
               << arg.getArgNumber()
               << " has a dynamic dimension with no symbol: "
               << arg.getType();
      shapes[arg] = SymShape(shape->begin(), shape->end());
    }
    for (Operation &op : func.getBody().front()) {
      if (isa<func::ReturnOp>(op))
        continue;
      auto iface = dyn_cast<SymbolicShapeOpInterface>(op);
      if (!iface)
        return op.emitOpError("has no symbolic shape function");
      SmallVector<SymShape> operandShapes;
      for (Value operand : op.getOperands()) {
        auto it = shapes.find(operand);
        if (it == shapes.end())
          return op.emitOpError("operand #")
                 << operandShapes.size() << " has no known shape";
        operandShapes.push_back(constraints.resolve(it->second));
      }
      SmallVector<SymShape> resultShapes;
      if (failed(iface.inferSymbolicShapes(operandShapes, constraints,
                                           resultShapes)))
        return failure();
      if (resultShapes.size() != op.getNumResults())
        return op.emitOpError("shape function returned ")
               << resultShapes.size() << " shapes for " << op.getNumResults()
               << " results";
      for (auto [result, shape] : llvm::zip(op.getResults(), resultShapes)) {
        auto type = cast<RankedTensorType>(result.getType());
        if (type.getRank() != (int64_t)shape.size())
          return op.emitOpError("shape function gave rank ")
                 << shape.size() << " for a result of rank "
                 << type.getRank();
        shapes[result] = shape;
      }
    }
    return success();
  }

  /// Rewrites every type of `func` with the final (fully substituted) shapes.
  void apply(func::FuncOp func) {
    auto retype = [&](Value value) {
      auto it = shapes.find(value);
      if (it == shapes.end())
        return;
      auto type = cast<RankedTensorType>(value.getType());
      value.setType(sym::withSymbolicShape(type, constraints.resolve(it->second)));
    };
    for (BlockArgument arg : func.getArguments())
      retype(arg);
    func.walk([&](Operation *op) {
      for (Value result : op->getResults())
        retype(result);
    });
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    func.setType(FunctionType::get(func.getContext(),
                                   func.getBody().front().getArgumentTypes(),
                                   ret.getOperandTypes()));
  }

private:
  ShapeConstraints &constraints;
  DenseMap<Value, SymShape> shapes;
};

struct InferShapes final : ::dyncc::dg::impl::InferShapesPassBase<InferShapes> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ShapeConstraints constraints;
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr("dyncc.kernel"))
        funcs.push_back(func);

    // Analyse first, then mutate.
    SmallVector<std::unique_ptr<ShapePropagation>> states;
    for (func::FuncOp func : funcs) {
      states.push_back(std::make_unique<ShapePropagation>(constraints));
      if (failed(states.back()->run(func)))
        return signalPassFailure();
    }
    if (failed(checkSymbols(module, constraints)))
      return signalPassFailure();
    for (auto [func, state] : llvm::zip(funcs, states))
      state->apply(func);

    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToStart(module.getBody());
    for (auto symbol : module.getOps<sym::SymbolOp>())
      builder.setInsertionPointAfter(symbol);
    for (const DeferredEquality &eq : constraints.getDeferred())
      sym::ConstraintOp::create(
          builder, module.getLoc(),
          sym::ExprAttr::get(&getContext(), constraints.resolve(eq.lhs)),
          sym::ExprAttr::get(&getContext(), constraints.resolve(eq.rhs)),
          builder.getStringAttr(eq.reason));
  }

  /// Checks refinements against the declared symbol facts and drops the
  /// symbols that were substituted away, narrowing the survivors' ranges.
  LogicalResult checkSymbols(ModuleOp module,
                             const ShapeConstraints &constraints) {
    llvm::StringMap<sym::SymbolOp> symbols;
    for (auto symbol : module.getOps<sym::SymbolOp>())
      symbols[symbol.getSymName()] = symbol;
    SmallVector<sym::SymbolOp> dead;
    for (const auto &[name, value] : constraints.getSubstitutions()) {
      auto it = symbols.find(name);
      if (it == symbols.end())
        continue;
      sym::SymbolOp symbol = it->second;
      if (std::optional<int64_t> constant = value.getConstant()) {
        int64_t lo = symbol.getMin(), hi = symbol.getMax();
        if (*constant < lo || *constant > hi)
          return symbol.emitOpError("is required to equal ")
                 << *constant << ", outside its range [" << lo << ", " << hi
                 << "]";
      } else if (std::optional<std::string> other = value.getSymbol()) {
        auto otherIt = symbols.find(*other);
        if (otherIt != symbols.end()) {
          sym::SymbolOp survivor = otherIt->second;
          int64_t lo = std::max<int64_t>(symbol.getMin(), survivor.getMin());
          int64_t hi = std::min<int64_t>(symbol.getMax(), survivor.getMax());
          if (lo > hi)
            return survivor.emitOpError("is required to equal @")
                   << name << " but their ranges do not intersect";
          survivor.setMin(lo);
          survivor.setMax(hi);
        }
      }
      dead.push_back(symbol);
    }
    for (sym::SymbolOp symbol : dead)
      symbol.erase();
    return success();
  }
};

} // namespace
