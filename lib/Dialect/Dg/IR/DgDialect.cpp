//===- DgDialect.cpp - Dyncc graph dialect --------------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/IR/Dg.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

#include "dyncc/Dialect/Dg/IR/DgDialect.cpp.inc"
#include "dyncc/Dialect/Dg/IR/DgEnums.cpp.inc"
#include "dyncc/Dialect/Dg/IR/DgInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dyncc/Dialect/Dg/IR/DgOps.cpp.inc"

void DgDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dyncc/Dialect/Dg/IR/DgOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  auto valueType = cast<ShapedType>(getValue().getType());
  auto resultType = cast<ShapedType>(getType());
  if (valueType.getShape() != resultType.getShape() ||
      valueType.getElementType() != resultType.getElementType())
    return emitOpError("value type ")
           << valueType << " does not match the result type " << resultType;
  return success();
}

void dg::declareSymbolFacts(ModuleOp module, ShapeConstraints &constraints) {
  for (auto symbol : module.getOps<sym::SymbolOp>()) {
    SymbolFacts facts;
    facts.min = symbol.getMin();
    facts.max = symbol.getMax();
    facts.divisor = symbol.getDivisor().value_or(1);
    constraints.setFacts(symbol.getSymName().str(), facts,
                         "sym.symbol @" + symbol.getSymName().str());
  }
}

//===----------------------------------------------------------------------===//
// DimValuesOp
//===----------------------------------------------------------------------===//

LogicalResult DimValuesOp::verify() {
  auto type = cast<ShapedType>(getType());
  if (!type.getElementType().isInteger() ||
      type.getElementType().getIntOrFloatBitWidth() < 8)
    return emitOpError("needs an integer element type of 8 bits or more, got ")
           << type.getElementType();
  if ((int64_t)getValues().getDims().size() != type.getNumElements())
    return emitOpError("has ")
           << getValues().getDims().size() << " values for "
           << type.getNumElements() << " elements";
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  auto lhsType = dyn_cast<RankedTensorType>(getLhs().getType());
  auto rhsType = dyn_cast<RankedTensorType>(getRhs().getType());
  auto resultType = dyn_cast<RankedTensorType>(getType());
  if (!lhsType || !rhsType)
    return success(); // Checked by shape propagation once ranked.
  if (lhsType.getRank() < 1 || rhsType.getRank() < 1)
    return emitOpError("expects operands of rank at least 1, got ranks ")
           << lhsType.getRank() << " and " << rhsType.getRank();
  if (lhsType.getElementType() != rhsType.getElementType() ||
      lhsType.getElementType() != getType().getElementType())
    return emitOpError("expects one element type, got ")
           << lhsType.getElementType() << ", " << rhsType.getElementType()
           << " -> " << getType().getElementType();
  if (!resultType)
    return success();
  int64_t k0 = lhsType.getDimSize(lhsType.getRank() - 1);
  int64_t k1 = rhsType.getDimSize(rhsType.getRank() == 1 ? 0
                                                         : rhsType.getRank() - 2);
  if (!ShapedType::isDynamic(k0) && !ShapedType::isDynamic(k1) && k0 != k1)
    return emitOpError("contraction dimensions differ: lhs has ")
           << k0 << " columns, rhs has " << k1 << " rows";
  int64_t rank = std::max(lhsType.getRank(), rhsType.getRank()) -
                 (lhsType.getRank() == 1) - (rhsType.getRank() == 1);
  if (lhsType.getRank() == 1 && rhsType.getRank() == 1)
    rank = 0;
  if (resultType.getRank() != rank)
    return emitOpError("expects a result of rank ")
           << rank << ", got " << resultType.getRank();
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  auto inputType = dyn_cast<RankedTensorType>(getInput().getType());
  if (!inputType)
    return success();
  int64_t rank = inputType.getRank();
  if ((int64_t)getPerm().size() != rank)
    return emitOpError("perm has ") << getPerm().size()
                                    << " entries for rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : getPerm()) {
    if (p < 0 || p >= rank || seen[p])
      return emitOpError("perm is not a permutation of [0, ") << rank << ")";
    seen[p] = true;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// FusionOp
//===----------------------------------------------------------------------===//

LogicalResult FusionOp::verify() {
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << yield.getValues().size()
           << " values whose types do not match the group's results";
  SmallVector<Operation *> backbones;
  for (Operation &op : getBody().front())
    if (op.hasAttr(getBackboneAttrName()))
      backbones.push_back(&op);
  FusionKind kind = getKind();
  bool needsBackbone = kind == FusionKind::Gemm || kind == FusionKind::Conv ||
                       kind == FusionKind::Reduce;
  if (needsBackbone && backbones.empty())
    return emitOpError("of kind ")
           << stringifyFusionKind(kind) << " has no backbone op";
  if (!needsBackbone && !backbones.empty())
    return emitOpError("of kind ")
           << stringifyFusionKind(kind) << " has a backbone op";
  // Several GEMM backbones in one group (horizontal fusion) are independent:
  // none reads another's result inside the group.
  if (kind == FusionKind::Gemm || kind == FusionKind::Conv) {
    llvm::SmallPtrSet<Operation *, 4> isBackbone(backbones.begin(),
                                                 backbones.end());
    for (Operation *backbone : backbones) {
      SmallVector<Operation *> stack{backbone};
      llvm::SmallPtrSet<Operation *, 16> seen;
      while (!stack.empty()) {
        Operation *op = stack.pop_back_val();
        for (Value operand : op->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def || def->getParentOp() != getOperation() ||
              !seen.insert(def).second)
            continue;
          if (isBackbone.contains(def))
            return emitOpError("has backbone '")
                   << backbone->getName()
                   << "' reading another backbone's result";
          stack.push_back(def);
        }
      }
    }
  }
  return success();
}

Operation *FusionOp::getBackbone() {
  for (Operation &op : getBody().front())
    if (op.hasAttr(getBackboneAttrName()))
      return &op;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// NonZeroOp
//===----------------------------------------------------------------------===//

bool NonZeroOp::countsEveryElement() {
  auto fill = getInput().getDefiningOp<ConstantOfShapeOp>();
  if (!fill)
    return false;
  auto value = dyn_cast<DenseElementsAttr>(fill.getValue());
  if (!value || !value.isSplat())
    return false;
  Type element = value.getElementType();
  if (isa<IntegerType>(element))
    return !value.getSplatValue<APInt>().isZero();
  if (isa<FloatType>(element))
    return !value.getSplatValue<APFloat>().isZero();
  return false;
}

//===----------------------------------------------------------------------===//
// DispatchOp
//===----------------------------------------------------------------------===//

LogicalResult
DispatchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError("callee @") << getCallee() << " is not a func.func";
  size_t expected =
      getSymbols().size() + getInputs().size() + getResults().size();
  if (callee.getNumArguments() != expected)
    return emitOpError("callee @")
           << getCallee() << " takes " << callee.getNumArguments()
           << " arguments, expected " << expected
           << " (symbols, inputs, destinations)";
  if (callee.getNumResults() != getNumResults())
    return emitOpError("callee @")
           << getCallee() << " returns " << callee.getNumResults()
           << " values, expected " << getNumResults();
  return success();
}
