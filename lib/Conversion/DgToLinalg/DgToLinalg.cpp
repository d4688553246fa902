//===- DgToLinalg.cpp - Lowering dg ops to linalg on tensors --------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Conversion/DgToLinalg/DgToLinalg.h"

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dyncc;

//===----------------------------------------------------------------------===//
// DimMaterializer
//===----------------------------------------------------------------------===//

FailureOr<Value> DimMaterializer::get(const DimExpr &expr) {
  std::string key = expr.str();
  auto it = cache.find(key);
  if (it != cache.end())
    return it->second;

  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  Value sum;
  for (const auto &[mono, coeff] : expr.getTerms()) {
    Value product;
    for (const DimAtom &atom : mono) {
      Value v;
      if (atom.kind == DimAtom::Kind::Symbol) {
        auto symIt = symbols.find(atom.name);
        if (symIt == symbols.end())
          return failure();
        v = symIt->second;
      } else {
        FailureOr<Value> lhs = get(*atom.lhs), rhs = get(*atom.rhs);
        if (failed(lhs) || failed(rhs))
          return failure();
        switch (atom.kind) {
        case DimAtom::Kind::FloorDiv:
          v = arith::FloorDivSIOp::create(builder, loc, *lhs, *rhs);
          break;
        case DimAtom::Kind::CeilDiv:
          v = arith::CeilDivSIOp::create(builder, loc, *lhs, *rhs);
          break;
        case DimAtom::Kind::Mod: {
          // Floor modulo: x - floordiv(x, y) * y.
          Value q = arith::FloorDivSIOp::create(builder, loc, *lhs, *rhs);
          Value m = arith::MulIOp::create(builder, loc, q, *rhs);
          v = arith::SubIOp::create(builder, loc, *lhs, m);
          break;
        }
        case DimAtom::Kind::Min:
          v = arith::MinSIOp::create(builder, loc, *lhs, *rhs);
          break;
        case DimAtom::Kind::Max:
          v = arith::MaxSIOp::create(builder, loc, *lhs, *rhs);
          break;
        case DimAtom::Kind::Symbol:
          break;
        }
      }
      product = product ? arith::MulIOp::create(builder, loc, product, v) : v;
    }
    Value term;
    if (!product)
      term = constant(coeff);
    else if (coeff == 1)
      term = product;
    else
      term = arith::MulIOp::create(builder, loc, constant(coeff), product);
    sum = sum ? arith::AddIOp::create(builder, loc, sum, term) : term;
  }
  if (!sum)
    sum = constant(0);
  cache[key] = sum;
  return sum;
}

FailureOr<SmallVector<OpFoldResult>>
DimMaterializer::getMixedSizes(ArrayRef<DimExpr> shape) {
  SmallVector<OpFoldResult> sizes;
  for (const DimExpr &dim : shape) {
    if (std::optional<int64_t> c = dim.getConstant()) {
      sizes.push_back(builder.getIndexAttr(*c));
      continue;
    }
    FailureOr<Value> v = get(dim);
    if (failed(v))
      return failure();
    sizes.push_back(*v);
  }
  return sizes;
}

//===----------------------------------------------------------------------===//
// Op lowerings
//===----------------------------------------------------------------------===//

/// The indexing map reading `operandType` inside an iteration space of
/// `resultType`'s rank, with numpy broadcasting (leading dims dropped, static
/// size-1 dims against non-1 dims read index 0).
static AffineMap broadcastMap(MLIRContext *ctx, RankedTensorType operandType,
                              RankedTensorType resultType) {
  int64_t rank = resultType.getRank();
  int64_t offset = rank - operandType.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < operandType.getRank(); ++i) {
    if (operandType.getDimSize(i) == 1 &&
        resultType.getDimSize(i + offset) != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(i + offset, ctx));
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// Builds an elementwise linalg.generic writing into `init`. An operand that
/// is `init` itself (the producer's result, computed in place) is read
/// through the output block argument instead of being an input too, so tiling
/// sees one slice of it and fuses its producer once, through the destination.
static Value buildElementwise(
    OpBuilder &builder, Location loc, ValueRange operands, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto resultType = cast<RankedTensorType>(init.getType());
  MLIRContext *ctx = builder.getContext();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (Value operand : operands) {
    if (operand == init)
      continue;
    inputs.push_back(operand);
    maps.push_back(broadcastMap(
        ctx, cast<RankedTensorType>(operand.getType()), resultType));
  }
  maps.push_back(builder.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> scalars;
        unsigned next = 0;
        for (Value operand : operands)
          scalars.push_back(operand == init ? args.back() : args[next++]);
        Value result = body(b, l, scalars);
        linalg::YieldOp::create(b, l, result);
      });
  return generic.getResult(0);
}

FailureOr<Value> dyncc::lowerDgOpToLinalg(OpBuilder &builder, Operation *op,
                                          ValueRange operands, Value init) {
  Location loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, FailureOr<Value>>(op)
      .Case([&](dg::MatMulOp) -> FailureOr<Value> {
        Type elementType = getElementTypeOrSelf(init.getType());
        Value zero = arith::ConstantOp::create(
            builder, loc, builder.getZeroAttr(elementType));
        Value filled =
            linalg::FillOp::create(builder, loc, zero, init).getResult(0);
        return linalg::MatmulOp::create(builder, loc, operands,
                                        ValueRange{filled})
            .getResult(0);
      })
      .Case([&](dg::AddOp) -> FailureOr<Value> {
        Type elementType = getElementTypeOrSelf(init.getType());
        return buildElementwise(
            builder, loc, operands, init,
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              if (isa<FloatType>(elementType))
                return arith::AddFOp::create(b, l, args[0], args[1]);
              return arith::AddIOp::create(b, l, args[0], args[1]);
            });
      })
      .Case([&](dg::ReluOp) -> FailureOr<Value> {
        Type elementType = getElementTypeOrSelf(init.getType());
        return buildElementwise(
            builder, loc, operands, init,
            [&](OpBuilder &b, Location l, ValueRange args) -> Value {
              Value zero = arith::ConstantOp::create(
                  b, l, b.getZeroAttr(elementType));
              if (isa<FloatType>(elementType))
                return arith::MaximumFOp::create(b, l, args[0], zero);
              return arith::MaxSIOp::create(b, l, args[0], zero);
            });
      })
      .Default([&](Operation *) -> FailureOr<Value> {
        return op->emitOpError("has no lowering to linalg");
      });
}
