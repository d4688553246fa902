//===- OutlineGroups.cpp - Fusion groups to kernel functions --------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Outlines every `dg.fusion` into a kernel `func.func` on plain tensors
// (linalg), called through `dg.dispatch`. The kernel's dynamic dimensions
// are `index` arguments named by symbol; results are written into
// destination arguments. Within the group, an elementwise consumer reuses
// its producer's destination when both have the same shape, so a GEMM's
// epilogue runs in place on the GEMM's output tile.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Conversion/DgToLinalg/DgToLinalg.h"
#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_OUTLINEGROUPSPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

static void collectSymbols(Type type, std::vector<std::string> &names) {
  if (std::optional<SmallVector<DimExpr>> shape = sym::getSymbolicShape(type))
    for (const DimExpr &dim : *shape)
      dim.collectSymbols(names);
}

struct OutlineGroups final : ::dyncc::dg::impl::OutlineGroupsPassBase<OutlineGroups> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbolTable(module);
    SmallVector<FusionOp> groups;
    module.walk([&](FusionOp group) { groups.push_back(group); });
    unsigned index = 0;
    for (FusionOp group : groups)
      if (failed(outline(group, index++, symbolTable)))
        return signalPassFailure();
  }

  LogicalResult outline(FusionOp group, unsigned index,
                        SymbolTable &symbolTable) {
    MLIRContext *ctx = &getContext();
    Block &body = group.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());

    llvm::SetVector<Value> inputs;
    getUsedValuesDefinedAbove(group.getBody(), inputs);

    // Every symbol any shape inside the group mentions, sorted.
    std::vector<std::string> symbolNames;
    for (Value input : inputs)
      collectSymbols(input.getType(), symbolNames);
    for (Operation &op : body)
      for (Type type : op.getResultTypes())
        collectSymbols(type, symbolNames);
    std::sort(symbolNames.begin(), symbolNames.end());

    // Kernel signature: symbols, inputs, destinations -> results.
    SmallVector<Type> argTypes(symbolNames.size(), IndexType::get(ctx));
    for (Value input : inputs)
      argTypes.push_back(sym::stripSymbolicShape(input.getType()));
    SmallVector<Type> resultTypes;
    for (Type type : group.getResultTypes())
      resultTypes.push_back(sym::stripSymbolicShape(type));
    argTypes.append(resultTypes.begin(), resultTypes.end());

    std::string name = "g" + std::to_string(index) + "_" +
                       stringifyFusionKind(group.getKind()).str();
    OpBuilder builder(ctx);
    builder.setInsertionPointToEnd(
        group->getParentOfType<ModuleOp>().getBody());
    auto kernel = func::FuncOp::create(
        builder, group.getLoc(), name,
        builder.getFunctionType(argTypes, resultTypes));
    symbolTable.insert(kernel);
    kernel->setAttr("dyncc.kernel", builder.getUnitAttr());
    kernel->setAttr("dyncc.kind",
                    builder.getStringAttr(stringifyFusionKind(group.getKind())));
    Block *entry = kernel.addEntryBlock();
    builder.setInsertionPointToStart(entry);

    llvm::StringMap<Value> symbolValues;
    for (auto [i, symbolName] : llvm::enumerate(symbolNames))
      symbolValues[symbolName] = entry->getArgument(i);
    DimMaterializer dims(builder, group.getLoc(), symbolValues);

    IRMapping mapping;
    for (auto [i, input] : llvm::enumerate(inputs))
      mapping.map(input, entry->getArgument(symbolNames.size() + i));

    // Destination slots: yielded values write into the kernel's destination
    // arguments; an op whose single user is a same-shaped elementwise op
    // shares that user's slot (processed in reverse).
    DenseMap<Operation *, int> slotOf;
    SmallVector<Value> slotValue;
    for (auto [i, value] : llvm::enumerate(yield.getValues())) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != &body || slotOf.count(def))
        return group.emitOpError("result #")
               << i << " is not produced by a distinct op of the group";
      slotOf[def] = slotValue.size();
      slotValue.push_back(
          entry->getArgument(symbolNames.size() + inputs.size() + i));
    }
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      if (slotOf.count(&op))
        continue;
      Value result = op.getResult(0);
      if (result.hasOneUse()) {
        Operation *user = *result.getUsers().begin();
        if (isElementwise(user) && slotOf.count(user) &&
            sym::stripSymbolicShape(user->getResult(0).getType()) ==
                sym::stripSymbolicShape(result.getType()) &&
            sym::getSymbolicShape(user->getResult(0).getType()) ==
                sym::getSymbolicShape(result.getType())) {
          slotOf[&op] = slotOf[user];
          continue;
        }
      }
      slotOf[&op] = slotValue.size();
      slotValue.push_back(Value());
    }

    for (Operation &op : body.without_terminator()) {
      if (op.getNumResults() != 1)
        return op.emitOpError("expected one result in a fusion group");
      int slot = slotOf[&op];
      if (!slotValue[slot]) {
        auto shape = sym::getSymbolicShape(op.getResult(0).getType());
        FailureOr<SmallVector<OpFoldResult>> sizes =
            shape ? dims.getMixedSizes(*shape)
                  : FailureOr<SmallVector<OpFoldResult>>(failure());
        if (failed(sizes))
          return op.emitOpError("result has no symbolic shape to size it");
        slotValue[slot] = tensor::EmptyOp::create(
            builder, op.getLoc(), *sizes,
            getElementTypeOrSelf(op.getResult(0).getType()));
      }
      SmallVector<Value> operands = llvm::map_to_vector(
          op.getOperands(), [&](Value v) { return mapping.lookup(v); });
      FailureOr<Value> lowered =
          lowerDgOpToLinalg(builder, &op, operands, slotValue[slot]);
      if (failed(lowered))
        return failure();
      mapping.map(op.getResult(0), *lowered);
      slotValue[slot] = *lowered;
    }
    SmallVector<Value> results = llvm::map_to_vector(
        yield.getValues(), [&](Value v) { return mapping.lookup(v); });
    func::ReturnOp::create(builder, group.getLoc(), results);

    // Replace the group by a dispatch.
    builder.setInsertionPoint(group);
    SmallVector<Attribute> symbolAttrs = llvm::map_to_vector(
        symbolNames,
        [&](const std::string &n) -> Attribute { return builder.getStringAttr(n); });
    auto dispatch = DispatchOp::create(
        builder, group.getLoc(), group.getResultTypes(),
        FlatSymbolRefAttr::get(kernel.getSymNameAttr()),
        builder.getArrayAttr(symbolAttrs), inputs.getArrayRef());
    group.replaceAllUsesWith(dispatch.getResults());
    group.erase();
    return success();
  }
};

} // namespace
