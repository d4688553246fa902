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
  auto resultType = cast<RankedTensorType>(getType());
  if (valueType.getShape() != resultType.getShape() ||
      valueType.getElementType() != resultType.getElementType())
    return emitOpError("value type ")
           << valueType << " does not match the result type " << resultType;
  return success();
}

LogicalResult
ConstantOp::inferSymbolicShapes(ArrayRef<SymShape>, ShapeConstraints &,
                                SmallVectorImpl<SymShape> &resultShapes) {
  SymShape shape;
  for (int64_t size : getType().getShape())
    shape.push_back(DimExpr(size));
  resultShapes.push_back(shape);
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulOp
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  auto lhsType = getLhs().getType(), rhsType = getRhs().getType();
  auto resultType = getResult().getType();
  if (lhsType.getRank() != 2 || rhsType.getRank() != 2 ||
      resultType.getRank() != 2)
    return emitOpError("expects rank-2 operands and result, got ranks ")
           << lhsType.getRank() << ", " << rhsType.getRank() << " -> "
           << resultType.getRank();
  if (lhsType.getElementType() != rhsType.getElementType() ||
      lhsType.getElementType() != resultType.getElementType())
    return emitOpError("expects one element type, got ")
           << lhsType.getElementType() << ", " << rhsType.getElementType()
           << " -> " << resultType.getElementType();
  int64_t k0 = lhsType.getDimSize(1), k1 = rhsType.getDimSize(0);
  if (!ShapedType::isDynamic(k0) && !ShapedType::isDynamic(k1) && k0 != k1)
    return emitOpError("contraction dimensions differ: lhs has ")
           << k0 << " columns, rhs has " << k1 << " rows";
  return success();
}

LogicalResult
MatMulOp::inferSymbolicShapes(ArrayRef<SymShape> operandShapes,
                              ShapeConstraints &constraints,
                              SmallVectorImpl<SymShape> &resultShapes) {
  const SymShape &lhs = operandShapes[0], &rhs = operandShapes[1];
  if (failed(constraints.requireEqual(lhs[1], rhs[0], getOperation(),
                                      "the contraction dimensions")))
    return failure();
  resultShapes.push_back(
      constraints.resolve(SymShape{lhs[0], rhs[1]}));
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

/// Verifies numpy broadcasting between the static sizes of two operands.
static LogicalResult verifyBroadcast(Operation *op) {
  auto lhsType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto rhsType = cast<RankedTensorType>(op->getOperand(1).getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t rank = std::max(lhsType.getRank(), rhsType.getRank());
  if (resultType.getRank() != rank)
    return op->emitOpError("expects a result of rank ")
           << rank << ", got " << resultType.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhsType.getRank()
                    ? 1
                    : lhsType.getDimSize(i - (rank - lhsType.getRank()));
    int64_t r = i < rank - rhsType.getRank()
                    ? 1
                    : rhsType.getDimSize(i - (rank - rhsType.getRank()));
    if (!ShapedType::isDynamic(l) && !ShapedType::isDynamic(r) && l != r &&
        l != 1 && r != 1)
      return op->emitOpError("operands do not broadcast: dimension ")
             << i << " is " << l << " and " << r;
  }
  if (lhsType.getElementType() != rhsType.getElementType())
    return op->emitOpError("expects one element type, got ")
           << lhsType.getElementType() << " and " << rhsType.getElementType();
  return success();
}

/// The numpy broadcast of two symbolic shapes. Symbolic dimensions broadcast
/// only against 1 or an equal expression (the equality is recorded).
static LogicalResult broadcastShapes(Operation *op, const SymShape &lhs,
                                     const SymShape &rhs,
                                     ShapeConstraints &constraints,
                                     SymShape &result) {
  size_t rank = std::max(lhs.size(), rhs.size());
  for (size_t i = 0; i < rank; ++i) {
    DimExpr l = i < rank - lhs.size() ? DimExpr(1) : lhs[i - (rank - lhs.size())];
    DimExpr r = i < rank - rhs.size() ? DimExpr(1) : rhs[i - (rank - rhs.size())];
    if (l == DimExpr(1)) {
      result.push_back(r);
      continue;
    }
    if (r == DimExpr(1)) {
      result.push_back(l);
      continue;
    }
    if (failed(constraints.requireEqual(
            l, r, op, "broadcast dimension " + std::to_string(i))))
      return failure();
    result.push_back(l);
  }
  result = constraints.resolve(result);
  return success();
}

LogicalResult AddOp::verify() { return verifyBroadcast(getOperation()); }

LogicalResult
AddOp::inferSymbolicShapes(ArrayRef<SymShape> operandShapes,
                           ShapeConstraints &constraints,
                           SmallVectorImpl<SymShape> &resultShapes) {
  SymShape result;
  if (failed(broadcastShapes(getOperation(), operandShapes[0],
                             operandShapes[1], constraints, result)))
    return failure();
  resultShapes.push_back(result);
  return success();
}

LogicalResult
ReluOp::inferSymbolicShapes(ArrayRef<SymShape> operandShapes,
                            ShapeConstraints &constraints,
                            SmallVectorImpl<SymShape> &resultShapes) {
  resultShapes.push_back(constraints.resolve(operandShapes[0]));
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
  unsigned backbones = 0;
  for (Operation &op : getBody().front())
    backbones += op.hasAttr(getBackboneAttrName());
  if (backbones > 1)
    return emitOpError("has ") << backbones << " backbone ops, expected at most 1";
  return success();
}

Operation *FusionOp::getBackbone() {
  for (Operation &op : getBody().front())
    if (op.hasAttr(getBackboneAttrName()))
      return &op;
  return nullptr;
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
