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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/TypeSwitch.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_OUTLINEGROUPSPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// Shape values a kernel writes element by element (a Shape or Size that is
/// a graph output): a linalg.generic that picks each element by its index,
/// which tiling distributes like any other, where a tensor.from_elements
/// could not be tiled.
FailureOr<Value> buildIndexedShapeValues(OpBuilder &b, Location loc,
                                         DimValuesOp op,
                                         DimMaterializer &dims) {
  auto type = cast<RankedTensorType>(op.getType());
  if (op.getValues().getExprs().empty() || type.getRank() > 1)
    return failure();
  Type element = type.getElementType();
  SmallVector<Value> values;
  for (const DimExpr &expr : op.getValues().getExprs()) {
    FailureOr<Value> v = dims.get(expr);
    if (failed(v))
      return failure();
    values.push_back(arith::IndexCastOp::create(b, loc, element, *v));
  }
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  AffineMap map = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{map}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange) {
        Value result = values.back();
        if (type.getRank() == 1) {
          Value i = linalg::IndexOp::create(nb, l, 0);
          for (int64_t k = static_cast<int64_t>(values.size()) - 2; k >= 0;
               --k) {
            Value at = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::eq, i,
                arith::ConstantIndexOp::create(nb, l, k));
            result = arith::SelectOp::create(nb, l, at, values[k], result);
          }
        }
        linalg::YieldOp::create(nb, l, result);
      });
  return generic.getResult(0);
}

static void collectSymbols(Type type, std::vector<std::string> &names) {
  if (std::optional<SmallVector<DimExpr>> shape = sym::getSymbolicShape(type))
    for (const DimExpr &dim : *shape)
      dim.collectSymbols(names);
}

struct OutlineGroups final
    : ::dyncc::dg::impl::OutlineGroupsPassBase<OutlineGroups> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbolTable(module);
    ShapeConstraints constraints;
    declareSymbolFacts(module, constraints);
    facts = constraints.getFactsMap();
    SmallVector<FusionOp> groups;
    module.walk([&](FusionOp group) { groups.push_back(group); });
    unsigned index = 0;
    for (FusionOp group : groups)
      if (failed(outline(group, index++, symbolTable)))
        return signalPassFailure();
  }

  /// Records what the symbols' facts say about divisibility on the kernel's
  /// arguments, for code generation to drop the clamps of tiles that divide
  /// evenly: `dyncc.divisor` on a symbol argument, and per dimension of a
  /// tensor argument `dyncc.dim_divisors` (the largest known divisor of its
  /// symbolic size; 1 when none is known).
  void annotateDivisors(func::FuncOp kernel, ArrayRef<std::string> symbolNames,
                        ArrayRef<Value> inputs, TypeRange resultTypes) {
    Builder b(kernel.getContext());
    for (auto [i, name] : llvm::enumerate(symbolNames)) {
      int64_t divisor = knownDivisor(DimExpr::symbol(name), facts);
      if (divisor > 1)
        kernel.setArgAttr(i, "dyncc.divisor", b.getI64IntegerAttr(divisor));
    }
    SmallVector<Type> tensorTypes;
    for (Value input : inputs)
      tensorTypes.push_back(input.getType());
    tensorTypes.append(resultTypes.begin(), resultTypes.end());
    for (auto [i, type] : llvm::enumerate(tensorTypes)) {
      std::optional<SmallVector<DimExpr>> shape = sym::getSymbolicShape(type);
      if (!shape)
        continue;
      SmallVector<int64_t> divisors;
      bool any = false;
      for (const DimExpr &dim : *shape) {
        divisors.push_back(dim.isConstant() ? 1 : knownDivisor(dim, facts));
        any |= divisors.back() > 1;
      }
      if (any)
        kernel.setArgAttr(symbolNames.size() + i, "dyncc.dim_divisors",
                          b.getDenseI64ArrayAttr(divisors));
    }
  }

  /// Facts of the module's symbols.
  FactsMap facts;

  /// Whether `use` reads its operand only for its contents (a shape, slice
  /// bounds, pads, scales) or as a splat scalar of an elementwise op: then
  /// the value folds into the kernel's code instead of being a buffer.
  static bool foldsIntoKernel(OpOperand &use, bool splat) {
    Operation *user = use.getOwner();
    unsigned i = use.getOperandNumber();
    // A splat is read as a scalar; shape values (a handful of symbols) are
    // rebuilt as a small tensor.
    bool shapeValues = isa_and_nonnull<DimValuesOp>(use.get().getDefiningOp());
    if ((splat || shapeValues) && user->hasTrait<Elementwise>())
      return true;
    return TypeSwitch<Operation *, bool>(user)
        .Case<ReshapeOp, ExpandOp, TileOp>([&](auto) { return i == 1; })
        .Case<SliceOp, PadOp, ResizeOp, TriluOp>([&](auto) { return i >= 1; })
        .Case<RangeOp, ConstantOfShapeOp>([](auto) { return true; })
        .Default([](Operation *) { return false; });
  }

  /// Small constants and symbolic shape values that every user in `group`
  /// reads as contents or as a scalar are rebuilt inside the kernel instead of
  /// being passed in.
  static bool isRebuiltInKernel(Value value, FusionOp group) {
    Operation *def = value.getDefiningOp();
    bool splat = false;
    if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense || dense.getNumElements() > 64)
        return false;
      splat = dense.isSplat();
    } else if (!isa_and_nonnull<DimValuesOp>(def)) {
      return false;
    }
    for (OpOperand &use : value.getUses())
      if (group->isProperAncestor(use.getOwner()) &&
          !foldsIntoKernel(use, splat))
        return false;
    return true;
  }

  LogicalResult outline(FusionOp group, unsigned index,
                        SymbolTable &symbolTable) {
    MLIRContext *ctx = &getContext();
    Block &body = group.getBody().front();
    auto yield = cast<YieldOp>(body.getTerminator());

    llvm::SetVector<Value> used, inputs;
    SmallVector<Operation *> rebuilt;
    getUsedValuesDefinedAbove(group.getBody(), used);
    for (Value value : used) {
      if (isRebuiltInKernel(value, group))
        rebuilt.push_back(value.getDefiningOp());
      else
        inputs.insert(value);
    }

    // Every symbol any shape inside the group mentions, sorted.
    std::vector<std::string> symbolNames;
    for (Value input : inputs)
      collectSymbols(input.getType(), symbolNames);
    for (Operation &op : body)
      for (Type type : op.getResultTypes())
        collectSymbols(type, symbolNames);
    for (Operation *op : rebuilt)
      if (auto values = dyn_cast<DimValuesOp>(op))
        for (const DimExpr &expr : values.getValues().getExprs())
          expr.collectSymbols(symbolNames);
    std::sort(symbolNames.begin(), symbolNames.end());

    // Kernel signature: symbols, inputs, destinations -> results.
    SmallVector<Type> argTypes(symbolNames.size(), IndexType::get(ctx));
    for (Value input : inputs)
      argTypes.push_back(getKernelType(input.getType()));
    SmallVector<Type> resultTypes;
    for (Type type : group.getResultTypes())
      resultTypes.push_back(getKernelType(type));
    argTypes.append(resultTypes.begin(), resultTypes.end());

    std::string name = "g" + std::to_string(index) + "_" +
                       stringifyFusionKind(group.getKind()).str();
    OpBuilder builder(ctx);
    builder.setInsertionPointToEnd(
        group->getParentOfType<ModuleOp>().getBody());
    auto kernel =
        func::FuncOp::create(builder, group.getLoc(), name,
                             builder.getFunctionType(argTypes, resultTypes));
    symbolTable.insert(kernel);
    annotateDivisors(kernel, symbolNames, inputs.getArrayRef(),
                     group.getResultTypes());
    kernel->setAttr("dyncc.kernel", builder.getUnitAttr());
    kernel->setAttr("dyncc.kind", builder.getStringAttr(
                                      stringifyFusionKind(group.getKind())));
    Block *entry = kernel.addEntryBlock();
    builder.setInsertionPointToStart(entry);

    llvm::StringMap<Value> symbolValues;
    for (auto [i, symbolName] : llvm::enumerate(symbolNames))
      symbolValues[symbolName] = entry->getArgument(i);
    DimMaterializer dims(builder, group.getLoc(), symbolValues);

    IRMapping mapping;
    for (auto [i, input] : llvm::enumerate(inputs))
      mapping.map(input, entry->getArgument(symbolNames.size() + i));
    auto noDestination = [&](unsigned) -> Value {
      llvm_unreachable("constants and shape values need no destination");
    };
    for (Operation *op : rebuilt) {
      // Read element by element by every user in this group (other
      // groups rebuild their own copy).
      auto values = dyn_cast<DimValuesOp>(op);
      if (values && llvm::all_of(values->getUses(), [&](OpOperand &use) {
            return !group->isProperAncestor(use.getOwner()) ||
                   use.getOwner()->hasTrait<Elementwise>();
          })) {
        // Otherwise (not 0-D or 1-D, or a symbol the kernel lacks) the
        // general lowering below builds it, or says why it cannot.
        FailureOr<Value> tensor =
            buildIndexedShapeValues(builder, group.getLoc(), values, dims);
        if (succeeded(tensor)) {
          mapping.map(values.getResult(), *tensor);
          continue;
        }
      }
      FailureOr<SmallVector<Value>> lowered =
          lowerDgOpToLinalg(builder, op, {}, dims, noDestination);
      if (failed(lowered))
        return failure();
      mapping.map(op->getResult(0), lowered->front());
    }

    // Destination slots: yielded values write into the kernel's destination
    // arguments; a result whose single user is a same-shaped elementwise op
    // shares that user's slot (processed in reverse). Only one operand of a
    // user takes its slot: the slot then holds one chain of values, each
    // dead once the next is written. (Two operands sharing it would make
    // one overwrite the other while both are live: tiling then recomputes
    // the first for every reader, and bufferization copies.)
    DenseMap<Value, int> slotOf;
    llvm::SmallPtrSet<Operation *, 16> slotTaken;
    SmallVector<Value> slotValue;
    SmallVector<bool> slotIsArgument;
    for (auto [i, value] : llvm::enumerate(yield.getValues())) {
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != &body || slotOf.count(value))
        return group.emitOpError("result #")
               << i << " is not produced by a distinct op of the group";
      slotOf[value] = slotValue.size();
      slotValue.push_back(
          entry->getArgument(symbolNames.size() + inputs.size() + i));
      slotIsArgument.push_back(true);
    }
    for (Operation &op : llvm::reverse(body.without_terminator())) {
      for (Value result : op.getResults()) {
        if (slotOf.count(result))
          continue;
        if (op.getNumResults() == 1 && result.hasOneUse()) {
          Operation *user = *result.getUsers().begin();
          Value userResult =
              user->getNumResults() == 1 ? user->getResult(0) : Value();
          if (userResult && isElementwise(user) && slotOf.count(userResult) &&
              !slotTaken.contains(user) &&
              getKernelType(userResult.getType()) ==
                  getKernelType(result.getType()) &&
              sym::getSymbolicShape(userResult.getType()) ==
                  sym::getSymbolicShape(result.getType())) {
            slotOf[result] = slotOf[userResult];
            slotTaken.insert(user);
            continue;
          }
        }
        slotOf[result] = slotValue.size();
        slotValue.push_back(Value());
        slotIsArgument.push_back(false);
      }
    }

    for (Operation &op : body.without_terminator()) {
      for (auto [i, result] : llvm::enumerate(op.getResults()))
        if (!sym::getSymbolicShape(result.getType()))
          return op.emitOpError("result #")
                 << i << " has no symbolic shape to size it";
      // A destination is made on first request, sized from the symbol
      // arguments (every symbol of a result type is one).
      SmallVector<bool> requested(op.getNumResults(), false);
      auto getDestination = [&](unsigned i) -> Value {
        requested[i] = true;
        Value result = op.getResult(i);
        Value &slot = slotValue[slotOf[result]];
        if (!slot) {
          FailureOr<SmallVector<OpFoldResult>> sizes =
              dims.getMixedSizes(*sym::getSymbolicShape(result.getType()));
          assert(succeeded(sizes) && "a result's symbol is not an argument");
          slot = tensor::EmptyOp::create(
              builder, op.getLoc(), *sizes,
              getElementTypeOrSelf(getKernelType(result.getType())));
        }
        return slot;
      };
      SmallVector<Value> operands = llvm::map_to_vector(
          op.getOperands(), [&](Value v) { return mapping.lookup(v); });
      FailureOr<SmallVector<Value>> lowered =
          lowerDgOpToLinalg(builder, &op, operands, dims, getDestination);
      if (failed(lowered))
        return failure();
      for (auto [i, result] : llvm::enumerate(op.getResults())) {
        Value value = (*lowered)[i];
        int slot = slotOf[result];
        if (!requested[i] && slotIsArgument[slot]) {
          // A view (reshape, slice) that is a kernel result: copy it into
          // the destination the caller owns.
          value = linalg::CopyOp::create(builder, op.getLoc(), value,
                                         slotValue[slot])
                      .getResult(0);
        }
        mapping.map(result, value);
        if (requested[i] || slotIsArgument[slot])
          slotValue[slot] = value;
      }
    }
    SmallVector<Value> results = llvm::map_to_vector(
        yield.getValues(), [&](Value v) { return mapping.lookup(v); });
    func::ReturnOp::create(builder, group.getLoc(), results);

    // Replace the group by a dispatch.
    builder.setInsertionPoint(group);
    SmallVector<Attribute> symbolAttrs = llvm::map_to_vector(
        symbolNames, [&](const std::string &n) -> Attribute {
          return builder.getStringAttr(n);
        });
    auto dispatch = DispatchOp::create(
        builder, group.getLoc(), group.getResultTypes(),
        FlatSymbolRefAttr::get(kernel.getSymNameAttr()),
        builder.getArrayAttr(symbolAttrs), inputs.getArrayRef());
    group.replaceAllUsesWith(dispatch.getResults());
    group.erase();
    // Constants and shape values now rebuilt in every kernel may be dead.
    for (Operation *op : rebuilt)
      if (op->use_empty())
        op->erase();
    return success();
  }
};

} // namespace
