//===- SymDialect.cpp - Symbolic shape dialect ----------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Sym/IR/Sym.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dyncc;
using namespace dyncc::sym;

#include "dyncc/Dialect/Sym/IR/SymDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dyncc/Dialect/Sym/IR/SymAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "dyncc/Dialect/Sym/IR/SymOps.cpp.inc"

void SymDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dyncc/Dialect/Sym/IR/SymOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dyncc/Dialect/Sym/IR/SymAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Expression syntax on top of the MLIR lexer
//===----------------------------------------------------------------------===//

static FailureOr<DimExpr> parseDimSum(AsmParser &parser);

static FailureOr<DimExpr> parseDimFactor(AsmParser &parser) {
  if (succeeded(parser.parseOptionalLParen())) {
    FailureOr<DimExpr> inner = parseDimSum(parser);
    if (failed(inner) || parser.parseRParen())
      return failure();
    return inner;
  }
  int64_t value;
  OptionalParseResult intResult = parser.parseOptionalInteger(value);
  if (intResult.has_value()) {
    if (failed(*intResult))
      return failure();
    return DimExpr(value);
  }
  SMLoc loc = parser.getCurrentLocation();
  StringRef name;
  if (failed(parser.parseOptionalKeyword(&name))) {
    parser.emitError(loc, "expected a dimension expression");
    return failure();
  }
  if (failed(parser.parseOptionalLParen()))
    return DimExpr::symbol(name.str());
  FailureOr<DimExpr> lhs = parseDimSum(parser);
  if (failed(lhs) || parser.parseComma())
    return failure();
  FailureOr<DimExpr> rhs = parseDimSum(parser);
  if (failed(rhs) || parser.parseRParen())
    return failure();
  if (std::optional<DimExpr> e =
          DimExpr::applyFunction(name.str(), *lhs, *rhs))
    return *e;
  parser.emitError(loc, "unknown dimension function '") << name << "'";
  return failure();
}

static FailureOr<DimExpr> parseDimProduct(AsmParser &parser) {
  FailureOr<DimExpr> lhs = parseDimFactor(parser);
  while (succeeded(lhs) && succeeded(parser.parseOptionalStar())) {
    FailureOr<DimExpr> rhs = parseDimFactor(parser);
    if (failed(rhs))
      return failure();
    lhs = *lhs * *rhs;
  }
  return lhs;
}

static FailureOr<DimExpr> parseDimSum(AsmParser &parser) {
  FailureOr<DimExpr> lhs = parseDimProduct(parser);
  while (succeeded(lhs)) {
    bool plus = succeeded(parser.parseOptionalPlus());
    if (!plus && failed(parser.parseOptionalMinus()))
      break;
    FailureOr<DimExpr> rhs = parseDimProduct(parser);
    if (failed(rhs))
      return failure();
    lhs = plus ? *lhs + *rhs : *lhs - *rhs;
  }
  return lhs;
}

//===----------------------------------------------------------------------===//
// ExprAttr
//===----------------------------------------------------------------------===//

DimExpr ExprAttr::getExpr() const {
  std::string error;
  std::optional<DimExpr> expr = DimExpr::parse(getCanonical().str(), error);
  assert(expr && "ExprAttr holds a canonical expression");
  return expr ? *expr : DimExpr();
}

Attribute ExprAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  FailureOr<DimExpr> expr = parseDimSum(parser);
  if (failed(expr) || parser.parseGreater())
    return {};
  return ExprAttr::get(parser.getContext(), *expr);
}

void ExprAttr::print(AsmPrinter &printer) const {
  printer << "<" << getCanonical() << ">";
}

//===----------------------------------------------------------------------===//
// ShapeAttr
//===----------------------------------------------------------------------===//

SmallVector<DimExpr> ShapeAttr::getExprs() const {
  return llvm::map_to_vector(getDims(),
                             [](ExprAttr dim) { return dim.getExpr(); });
}

ShapeAttr ShapeAttr::get(MLIRContext *context, ArrayRef<DimExpr> exprs) {
  SmallVector<ExprAttr> dims = llvm::map_to_vector(
      exprs, [&](const DimExpr &e) { return ExprAttr::get(context, e); });
  return get(context, dims);
}

Attribute ShapeAttr::parse(AsmParser &parser, Type) {
  SmallVector<DimExpr> exprs;
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        FailureOr<DimExpr> expr = parseDimSum(parser);
        if (failed(expr))
          return failure();
        exprs.push_back(*expr);
        return success();
      }) ||
      parser.parseGreater())
    return {};
  return ShapeAttr::get(parser.getContext(), exprs);
}

void ShapeAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getDims(), printer,
                        [&](ExprAttr dim) { printer << dim.getCanonical(); });
  printer << "]>";
}

LogicalResult ShapeAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getDims().size())
    return emitError() << "symbolic shape has " << getDims().size()
                       << " dimensions but the tensor has rank "
                       << shape.size();
  for (auto [index, size, dim] : llvm::enumerate(shape, getDims())) {
    std::optional<int64_t> constant = dim.getExpr().getConstant();
    if (ShapedType::isDynamic(size) && constant)
      return emitError() << "dimension " << index
                         << " is dynamic but its symbolic size is the constant "
                         << *constant;
    if (!ShapedType::isDynamic(size) && constant != size)
      return emitError() << "dimension " << index << " is static " << size
                         << " but its symbolic size is "
                         << dim.getCanonical();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SymbolOp
//===----------------------------------------------------------------------===//

LogicalResult SymbolOp::verify() {
  // I64Attr accessors are unsigned; the facts are signed.
  int64_t lo = getMin(), hi = getMax();
  if (lo < 0)
    return emitOpError("range minimum ") << lo << " is negative";
  if (lo > hi)
    return emitOpError("range [") << lo << ", " << hi << "] is empty";
  if (std::optional<uint64_t> divisor = getDivisor()) {
    if ((int64_t)*divisor < 1)
      return emitOpError("divisor ") << (int64_t)*divisor
                                     << " must be at least 1";
  }
  if (std::optional<uint64_t> likely = getLikely()) {
    if ((int64_t)*likely < lo || (int64_t)*likely > hi)
      return emitOpError("likely value ")
             << (int64_t)*likely << " is outside the range [" << lo << ", "
             << hi << "]";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// BindOp
//===----------------------------------------------------------------------===//

LogicalResult BindOp::verify() {
  auto type = cast<RankedTensorType>(getValues().getType());
  size_t count = getDims().getDims().size();
  if (type.isDynamicDim(0) || type.getDimSize(0) != (int64_t)count)
    return emitOpError("binds ")
           << count << " dimensions from " << type
           << ": the values need exactly one element per dimension";
  return success();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::optional<SmallVector<DimExpr>> sym::getSymbolicShape(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return std::nullopt;
  if (auto shape = dyn_cast_or_null<ShapeAttr>(ranked.getEncoding()))
    return shape.getExprs();
  SmallVector<DimExpr> result;
  for (int64_t size : ranked.getShape()) {
    if (ShapedType::isDynamic(size))
      return std::nullopt;
    result.push_back(DimExpr(size));
  }
  return result;
}

RankedTensorType sym::withSymbolicShape(RankedTensorType type,
                                        ArrayRef<DimExpr> shape) {
  SmallVector<int64_t> sizes;
  bool allStatic = true;
  for (const DimExpr &dim : shape) {
    std::optional<int64_t> constant = dim.getConstant();
    sizes.push_back(constant ? *constant : ShapedType::kDynamic);
    allStatic &= constant.has_value();
  }
  Attribute encoding;
  if (!allStatic)
    encoding = ShapeAttr::get(type.getContext(), shape);
  return RankedTensorType::get(sizes, type.getElementType(), encoding);
}

Type sym::stripSymbolicShape(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || !isa_and_nonnull<ShapeAttr>(ranked.getEncoding()))
    return type;
  return RankedTensorType::get(ranked.getShape(), ranked.getElementType());
}

LogicalResult
sym::matchReshape(ArrayRef<DimExpr> in, ArrayRef<DimExpr> out,
                  SmallVectorImpl<SmallVector<int64_t, 2>> &inGroups,
                  SmallVectorImpl<SmallVector<int64_t, 2>> &outGroups) {
  size_t i = 0, j = 0;
  while (i < in.size() && j < out.size()) {
    SmallVector<int64_t, 2> gi{(int64_t)i}, gj{(int64_t)j};
    DimExpr pi = in[i++], po = out[j++];
    while (pi != po) {
      // Extend the side whose product divides the other's.
      bool extendIn;
      std::optional<int64_t> ci = pi.getConstant(), co = po.getConstant();
      if (ci && co)
        extendIn = *ci < *co;
      else if (po.divideExactly(pi))
        extendIn = true;
      else if (pi.divideExactly(po))
        extendIn = false;
      else
        return failure();
      if (extendIn) {
        if (i == in.size())
          return failure();
        gi.push_back(i);
        pi = pi * in[i++];
      } else {
        if (j == out.size())
          return failure();
        gj.push_back(j);
        po = po * out[j++];
      }
    }
    inGroups.push_back(gi);
    outGroups.push_back(gj);
  }
  // Trailing size-1 dimensions join the last run.
  for (; i < in.size(); ++i) {
    if (in[i] != DimExpr(1) || inGroups.empty())
      return failure();
    inGroups.back().push_back(i);
  }
  for (; j < out.size(); ++j) {
    if (out[j] != DimExpr(1) || outGroups.empty())
      return failure();
    outGroups.back().push_back(j);
  }
  return success();
}
