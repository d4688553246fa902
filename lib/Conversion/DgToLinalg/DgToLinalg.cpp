//===- DgToLinalg.cpp - Lowering dg ops to linalg on tensors --------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Conversion/DgToLinalg/DgToLinalg.h"

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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
// Types and scalars
//===----------------------------------------------------------------------===//

Type dyncc::getKernelType(Type type) {
  Type stripped = sym::stripSymbolicShape(type);
  auto tensor = dyn_cast<RankedTensorType>(stripped);
  if (!tensor)
    return stripped;
  auto integer = dyn_cast<IntegerType>(tensor.getElementType());
  if (integer && !integer.isSignless())
    return tensor.clone(
        IntegerType::get(type.getContext(), integer.getWidth()));
  return stripped;
}

static bool isUnsignedElement(Type type) {
  auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
  return integer && integer.isUnsigned();
}

static Value scalarConstant(OpBuilder &b, Location loc, Type type,
                            double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

/// The lowest (`highest` false) or highest value of `type`: the identity of
/// max (min) reductions and the fill of max pooling's padding.
static Value extremeValue(OpBuilder &b, Location loc, Type type,
                          bool isUnsigned, bool highest) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), !highest)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt value = isUnsigned ? (highest ? APInt::getMaxValue(width)
                                      : APInt::getMinValue(width))
                           : (highest ? APInt::getSignedMaxValue(width)
                                      : APInt::getSignedMinValue(width));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

/// Converts a scalar between element types with ONNX Cast semantics (to bool:
/// non-zero is true).
static Value convertScalar(OpBuilder &b, Location loc, Value v, Type to,
                           bool fromUnsigned, bool toUnsigned) {
  Type from = v.getType();
  if (from == to)
    return v;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() == toFloat.getWidth()) // f16 <-> bf16
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    if (cast<FloatType>(v.getType()).getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, v);
    return arith::TruncFOp::create(b, loc, to, v);
  }
  if (toFloat) {
    if (fromUnsigned || from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, v);
    return arith::SIToFPOp::create(b, loc, to, v);
  }
  if (to.isInteger(1)) {
    Value zero = scalarConstant(b, loc, from, 0);
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }
  if (fromFloat) {
    if (toUnsigned)
      return arith::FPToUIOp::create(b, loc, to, v);
    return arith::FPToSIOp::create(b, loc, to, v);
  }
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()) {
    if (fromUnsigned || from.isInteger(1))
      return arith::ExtUIOp::create(b, loc, to, v);
    return arith::ExtSIOp::create(b, loc, to, v);
  }
  return arith::TruncIOp::create(b, loc, to, v);
}

/// Builds the float, signed or unsigned form of a binary arith op.
template <typename FloatOp, typename SignedOp, typename UnsignedOp = SignedOp>
static Value arithBinary(OpBuilder &b, Location l, bool isFloat,
                         bool isUnsigned, Value x, Value y) {
  if (isFloat)
    return FloatOp::create(b, l, x, y);
  if (isUnsigned)
    return UnsignedOp::create(b, l, x, y);
  return SignedOp::create(b, l, x, y);
}

static Value toIndex(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isIndex())
    return v;
  if (v.getType().getIntOrFloatBitWidth() < 64)
    v = arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

static Value indexToElement(OpBuilder &b, Location loc, Value index,
                            Type element) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return convertScalar(b, loc, i64, element, false, false);
}

/// Element `flat` (row-major) of a small tensor, e.g. one of Slice's starts.
static Value extractFlat(OpBuilder &b, Location loc, Value tensor,
                         int64_t flat) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> indices;
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    int64_t size = type.getDimSize(d);
    int64_t i = ShapedType::isDynamic(size) || size == 0 ? flat : flat % size;
    indices.push_back(arith::ConstantIndexOp::create(b, loc, i));
    if (!ShapedType::isDynamic(size) && size != 0)
      flat /= size;
  }
  std::reverse(indices.begin(), indices.end());
  return tensor::ExtractOp::create(b, loc, tensor, indices);
}

static Value clampIndex(OpBuilder &b, Location loc, Value v, Value lo,
                        Value hi) {
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                hi);
}

/// `inside` (null: nothing yet) and 0 <= i < size: whether an index of a
/// padded read is in bounds in every dimension so far.
static Value andInBounds(OpBuilder &b, Location loc, Value inside, Value i,
                         Value zero, Value size) {
  Value ok = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, i, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, size));
  return inside ? Value(arith::AndIOp::create(b, loc, inside, ok)) : ok;
}

/// The constant integer contents of `v` when it is an arith.constant.
static std::optional<SmallVector<int64_t>> getConstantInts(Value v) {
  DenseIntElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &value : attr.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

//===----------------------------------------------------------------------===//
// Generic builders
//===----------------------------------------------------------------------===//

using BodyFn = function_ref<Value(OpBuilder &, Location, ValueRange)>;

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
/// The body may return a null value for an unsupported element type; the
/// generic is then erased and null returned.
static Value buildElementwise(OpBuilder &builder, Location loc,
                              ValueRange operands, Value init, BodyFn body) {
  auto resultType = cast<RankedTensorType>(init.getType());
  MLIRContext *ctx = builder.getContext();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  // Splat constants are scalars in the body, not inputs.
  DenseMap<Value, Value> splats;
  for (Value operand : operands) {
    if (operand == init)
      continue;
    SplatElementsAttr splat;
    if (matchPattern(operand, m_Constant(&splat))) {
      splats[operand] = arith::ConstantOp::create(
          builder, loc, splat.getSplatValue<TypedAttr>());
      continue;
    }
    inputs.push_back(operand);
    maps.push_back(broadcastMap(ctx, cast<RankedTensorType>(operand.getType()),
                                resultType));
  }
  maps.push_back(builder.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  bool failedBody = false;
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> scalars;
        unsigned next = 0;
        for (Value operand : operands) {
          if (operand == init)
            scalars.push_back(args.back());
          else if (Value scalar = splats.lookup(operand))
            scalars.push_back(scalar);
          else
            scalars.push_back(args[next++]);
        }
        Value result = body(b, l, scalars);
        if (!result) {
          failedBody = true;
          result = args.back();
        }
        linalg::YieldOp::create(b, l, result);
      });
  if (failedBody) {
    generic.erase();
    return Value();
  }
  return generic.getResult(0);
}

/// Builds a linalg.generic that computes each element of `init` from its
/// indices (gathers: the body reads other tensors with tensor.extract).
/// `body` gets the output indices and the current output element.
static Value buildIndexed(
    OpBuilder &builder, Location loc, Value init,
    function_ref<Value(OpBuilder &, Location, ValueRange, Value)> body) {
  auto resultType = cast<RankedTensorType>(init.getType());
  int64_t rank = resultType.getRank();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      builder, loc, TypeRange{resultType}, ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{builder.getMultiDimIdentityMap(rank)}, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> indices;
        for (int64_t d = 0; d < rank; ++d)
          indices.push_back(linalg::IndexOp::create(b, l, d));
        linalg::YieldOp::create(b, l, body(b, l, indices, args[0]));
      });
  return generic.getResult(0);
}

static Value fill(OpBuilder &b, Location loc, Value value, Value init) {
  return linalg::FillOp::create(b, loc, value, init).getResult(0);
}

/// Collapses `init` (of a reduction's keepdims shape) onto its kept
/// dimensions: each reduced (size-1) dimension joins a neighbouring group.
static SmallVector<ReassociationIndices>
getKeptReassociation(int64_t rank, ArrayRef<bool> reduced) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < rank; ++d) {
    pending.push_back(d);
    if (!reduced[d]) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return groups;
}
//===----------------------------------------------------------------------===//
// Op lowerings
//===----------------------------------------------------------------------===//

namespace {

/// Lowers one dg op. Each `lower*` method returns the op's results.
class OpLowering {
public:
  OpLowering(OpBuilder &b, Operation *op, ValueRange operands,
             DimMaterializer &dims, DestinationFn destination)
      : b(b), loc(op->getLoc()), ctx(b.getContext()), op(op),
        operands(operands.begin(), operands.end()), dims(dims),
        destination(destination) {}

  FailureOr<SmallVector<Value>> lower();

private:
  using Results = FailureOr<SmallVector<Value>>;

  Results single(Value v) {
    if (!v)
      return failure();
    return SmallVector<Value>{v};
  }
  InFlightDiagnostic fail(const Twine &message) {
    return op->emitOpError(message);
  }

  RankedTensorType resultType(unsigned i = 0) {
    return cast<RankedTensorType>(getKernelType(op->getResult(i).getType()));
  }
  Type resultElement(unsigned i = 0) { return resultType(i).getElementType(); }
  FailureOr<SmallVector<DimExpr>> resultShape(unsigned i = 0) {
    std::optional<SmallVector<DimExpr>> shape =
        sym::getSymbolicShape(op->getResult(i).getType());
    if (!shape)
      return op->emitOpError("result #") << i << " has no symbolic shape";
    return *shape;
  }
  FailureOr<SmallVector<OpFoldResult>> resultSizes(unsigned i = 0) {
    FailureOr<SmallVector<DimExpr>> shape = resultShape(i);
    if (failed(shape))
      return failure();
    FailureOr<SmallVector<OpFoldResult>> sizes = dims.getMixedSizes(*shape);
    if (failed(sizes))
      return op->emitOpError("result #")
             << i << " has a size the kernel's symbols cannot compute";
    return sizes;
  }
  Value materialize(const DimExpr &expr) {
    FailureOr<Value> v = dims.get(expr);
    return succeeded(v) ? *v : Value();
  }
  Value dimOf(Value v, int64_t d) {
    return getValueOrCreateConstantIndexOp(b, loc,
                                           tensor::getMixedSize(b, loc, v, d));
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  bool operandUnsigned(unsigned i = 0) {
    return isUnsignedElement(op->getOperand(i).getType());
  }
  int64_t normalizeAxis(int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
  }

  Results lowerElementwise();
  Value buildScalar(OpBuilder &nb, Location l, ValueRange args);
  Results lowerBatchNorm(dg::BatchNormOp bn);
  Results lowerMatMul();
  Results lowerConv(dg::ConvOp conv);
  Results lowerPool(Operation *pool, bool isMax);
  Results lowerReduce(ArrayRef<int64_t> axes, bool keepdims, StringRef kind);
  Results lowerReshape();
  Results lowerTranspose(dg::TransposeOp transpose);
  Results lowerConcat(dg::ConcatOp concat);
  Results lowerSplit(dg::SplitOp split);
  Results lowerSlice(dg::SliceOp slice);
  Results lowerGather(dg::GatherOp gather);
  Results lowerTile();
  Results lowerRange();
  Results lowerTrilu(dg::TriluOp trilu);
  Results lowerPad(dg::PadOp pad);
  Results lowerNonZero();
  Results lowerCumSum(dg::CumSumOp cumsum);
  Results lowerDepthToSpace(dg::DepthToSpaceOp d2s);
  Results lowerIm2Col(dg::Im2ColOp im2col);
  Results lowerResize(dg::ResizeOp resize);
  Results lowerShapeOf(dg::ShapeOfOp shapeOf);

  /// Window geometry of a conv or pool: per spatial dimension, the padding
  /// actually read below and above the input.
  struct Window {
    SmallVector<int64_t> strides, dilations;
    SmallVector<DimExpr> low, high;
  };
  FailureOr<Window> getWindow(ArrayRef<DimExpr> kernel,
                              ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                              ArrayRef<int64_t> dilations, StringRef autoPad,
                              Value input);
  Value padSpatial(Value input, const Window &window, Value padValue);

  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  Operation *op;
  SmallVector<Value> operands;
  DimMaterializer &dims;
  DestinationFn destination;
};

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

Value OpLowering::buildScalar(OpBuilder &nb, Location l, ValueRange args) {
  Type type = args.empty() ? Type() : args[0].getType();
  bool isFloat = type && isa<FloatType>(type);
  bool uns = op->getNumOperands() && operandUnsigned(0);
  auto floatOnly = [&](auto build) -> Value {
    return isFloat ? build() : Value();
  };
  using P = arith::CmpIPredicate;
  using F = arith::CmpFPredicate;
  auto compare = [&](F f, P s, P u) -> Value {
    if (isFloat)
      return arith::CmpFOp::create(nb, l, f, args[0], args[1]);
    return arith::CmpIOp::create(nb, l, uns ? u : s, args[0], args[1]);
  };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](dg::AddOp) {
        return arithBinary<arith::AddFOp, arith::AddIOp>(nb, l, isFloat, uns,
                                                         args[0], args[1]);
      })
      .Case([&](dg::SubOp) {
        return arithBinary<arith::SubFOp, arith::SubIOp>(nb, l, isFloat, uns,
                                                         args[0], args[1]);
      })
      .Case([&](dg::MulOp) {
        return arithBinary<arith::MulFOp, arith::MulIOp>(nb, l, isFloat, uns,
                                                         args[0], args[1]);
      })
      .Case([&](dg::DivOp) {
        return arithBinary<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(
            nb, l, isFloat, uns, args[0], args[1]);
      })
      .Case([&](dg::PowOp) -> Value {
        Type exponentType = args[1].getType();
        if (isFloat) {
          Value exponent =
              convertScalar(nb, l, args[1], type, operandUnsigned(1), false);
          return math::PowFOp::create(nb, l, args[0], exponent);
        }
        if (isa<FloatType>(exponentType)) {
          // Integer base, float exponent: computed in the exponent's type.
          Value base = convertScalar(nb, l, args[0], exponentType, uns, false);
          Value r = math::PowFOp::create(nb, l, base, args[1]);
          return convertScalar(nb, l, r, type, false, uns);
        }
        Value exponent =
            convertScalar(nb, l, args[1], type, operandUnsigned(1), uns);
        return math::IPowIOp::create(nb, l, args[0], exponent);
      })
      .Case([&](dg::MinOp) {
        return arithBinary<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(
            nb, l, isFloat, uns, args[0], args[1]);
      })
      .Case([&](dg::MaxOp) {
        return arithBinary<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>(
            nb, l, isFloat, uns, args[0], args[1]);
      })
      .Case([&](dg::AndOp) -> Value {
        return arith::AndIOp::create(nb, l, args[0], args[1]);
      })
      .Case([&](dg::OrOp) -> Value {
        return arith::OrIOp::create(nb, l, args[0], args[1]);
      })
      .Case([&](dg::EqualOp) -> Value { return compare(F::OEQ, P::eq, P::eq); })
      .Case(
          [&](dg::LessOp) -> Value { return compare(F::OLT, P::slt, P::ult); })
      .Case([&](dg::GreaterOp) -> Value {
        return compare(F::OGT, P::sgt, P::ugt);
      })
      .Case([&](dg::LessEqualOp) -> Value {
        return compare(F::OLE, P::sle, P::ule);
      })
      .Case([&](dg::GreaterEqualOp) -> Value {
        return compare(F::OGE, P::sge, P::uge);
      })
      .Case([&](dg::SelectOp) -> Value {
        return arith::SelectOp::create(nb, l, args[0], args[1], args[2]);
      })
      .Case([&](dg::NegOp) -> Value {
        if (isFloat)
          return arith::NegFOp::create(nb, l, args[0]);
        return arith::SubIOp::create(nb, l, scalarConstant(nb, l, type, 0),
                                     args[0]);
      })
      .Case([&](dg::AbsOp) -> Value {
        if (isFloat)
          return math::AbsFOp::create(nb, l, args[0]);
        if (uns)
          return args[0];
        return math::AbsIOp::create(nb, l, args[0]);
      })
      .Case([&](dg::ExpOp) {
        return floatOnly([&] { return math::ExpOp::create(nb, l, args[0]); });
      })
      .Case([&](dg::LogOp) {
        return floatOnly([&] { return math::LogOp::create(nb, l, args[0]); });
      })
      .Case([&](dg::SqrtOp) {
        return floatOnly([&] { return math::SqrtOp::create(nb, l, args[0]); });
      })
      .Case([&](dg::ErfOp) {
        return floatOnly([&] { return math::ErfOp::create(nb, l, args[0]); });
      })
      .Case([&](dg::TanhOp) {
        return floatOnly([&] { return math::TanhOp::create(nb, l, args[0]); });
      })
      .Case([&](dg::ReciprocalOp) {
        return floatOnly([&] {
          return arith::DivFOp::create(nb, l, scalarConstant(nb, l, type, 1),
                                       args[0]);
        });
      })
      .Case([&](dg::SigmoidOp) {
        return floatOnly([&] {
          Value one = scalarConstant(nb, l, type, 1);
          Value e =
              math::ExpOp::create(nb, l, arith::NegFOp::create(nb, l, args[0]));
          return arith::DivFOp::create(nb, l, one,
                                       arith::AddFOp::create(nb, l, one, e));
        });
      })
      .Case([&](dg::ReluOp) -> Value {
        Value zero = scalarConstant(nb, l, type, 0);
        if (isFloat)
          return arith::MaximumFOp::create(nb, l, args[0], zero);
        if (uns)
          return args[0];
        return arith::MaxSIOp::create(nb, l, args[0], zero);
      })
      .Case([&](dg::LeakyReluOp relu) {
        return floatOnly([&] {
          Value zero = scalarConstant(nb, l, type, 0);
          Value alpha =
              scalarConstant(nb, l, type, relu.getAlpha().convertToDouble());
          Value negative = arith::CmpFOp::create(nb, l, F::OLT, args[0], zero);
          Value scaled = arith::MulFOp::create(nb, l, alpha, args[0]);
          return arith::SelectOp::create(nb, l, negative, scaled, args[0]);
        });
      })
      .Case([&](dg::NotOp) -> Value {
        return arith::XOrIOp::create(nb, l, args[0],
                                     scalarConstant(nb, l, type, 1));
      })
      .Case([&](dg::CastOp) -> Value {
        return convertScalar(nb, l, args[0], resultElement(), uns,
                             isUnsignedElement(op->getResult(0).getType()));
      })
      .Case([&](dg::ClipOp clip) -> Value {
        Value x = args[0];
        unsigned next = 1;
        auto clamp = [&](bool lower) {
          Value bound = args[next++];
          if (lower)
            return arithBinary<arith::MaximumFOp, arith::MaxSIOp,
                               arith::MaxUIOp>(nb, l, isFloat, uns, x, bound);
          return arithBinary<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>(
              nb, l, isFloat, uns, x, bound);
        };
        if (clip.getMin())
          x = clamp(true);
        if (clip.getMax())
          x = clamp(false);
        return x;
      })
      .Default([](Operation *) { return Value(); });
}

OpLowering::Results OpLowering::lowerElementwise() {
  Value result =
      buildElementwise(b, loc, operands, destination(0),
                       [&](OpBuilder &nb, Location l, ValueRange args) {
                         return buildScalar(nb, l, args);
                       });
  if (!result)
    return fail("has no lowering for element type ")
           << getElementTypeOrSelf(op->getOperand(0).getType());
  return SmallVector<Value>{result};
}

OpLowering::Results OpLowering::lowerBatchNorm(dg::BatchNormOp bn) {
  // Inference batch norm: (x - mean) * scale / sqrt(var + eps) + bias, the
  // per-channel operands read along dimension 1.
  Value init = destination(0);
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank();
  if (rank < 2 || !isa<FloatType>(type.getElementType()))
    return fail("expects a float input of rank 2 or more");
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap channel = AffineMap::get(rank, 0, getAffineDimExpr(1, ctx));
  // An input computed in place into the destination (the op after a
  // normalization, as InstanceNormalization imports) is read through the
  // output block argument, as buildElementwise does: an input and the
  // destination both, tiling would fuse its producer twice, into two slices
  // of one buffer.
  bool inPlace = operands[0] == init;
  SmallVector<Value> inputs(operands.begin() + (inPlace ? 1 : 0),
                            operands.end());
  SmallVector<AffineMap> maps(inPlace ? 0 : 1, identity);
  maps.append(4, channel);
  maps.push_back(identity);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  double epsilon = bn.getEpsilon().convertToDouble();
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value x = inPlace ? args.back() : args[0];
        ValueRange stats = args.drop_front(inPlace ? 0 : 1);
        Type t = x.getType();
        Value var = arith::AddFOp::create(nb, l, stats[3],
                                          scalarConstant(nb, l, t, epsilon));
        Value inv = arith::DivFOp::create(nb, l, stats[0],
                                          math::SqrtOp::create(nb, l, var));
        Value centered = arith::SubFOp::create(nb, l, x, stats[2]);
        Value scaled = arith::MulFOp::create(nb, l, centered, inv);
        linalg::YieldOp::create(
            nb, l, Value(arith::AddFOp::create(nb, l, scaled, stats[1])));
      });
  return SmallVector<Value>{generic.getResult(0)};
}

OpLowering::Results OpLowering::lowerTrilu(dg::TriluOp trilu) {
  Value init = destination(0);
  int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  if (rank < 2)
    return fail("expects rank 2 or more");
  Value k = index(0);
  if (trilu.getK())
    k = toIndex(b, loc, extractFlat(b, loc, operands[1], 0));
  bool upper = trilu.getUpper();
  Value input = operands[0];
  Type element = resultElement();
  return single(buildElementwise(
      b, loc, ValueRange{input}, init,
      [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value i = linalg::IndexOp::create(nb, l, rank - 2);
        Value j = linalg::IndexOp::create(nb, l, rank - 1);
        Value diff = arith::SubIOp::create(nb, l, j, i);
        Value keep = arith::CmpIOp::create(nb, l,
                                           upper ? arith::CmpIPredicate::sge
                                                 : arith::CmpIPredicate::sle,
                                           diff, k);
        return arith::SelectOp::create(nb, l, keep, args[0],
                                       scalarConstant(nb, l, element, 0));
      }));
}
//===----------------------------------------------------------------------===//
// Contractions and windows
//===----------------------------------------------------------------------===//

/// `acc + x * y`; float operands narrower than the accumulator (f16 or
/// bf16 into f32) are extended first.
static Value multiplyAdd(OpBuilder &b, Location l, Value acc, Value x,
                         Value y) {
  bool isFloat = isa<FloatType>(acc.getType());
  if (isFloat && x.getType() != acc.getType())
    x = arith::ExtFOp::create(b, l, acc.getType(), x);
  if (isFloat && y.getType() != acc.getType())
    y = arith::ExtFOp::create(b, l, acc.getType(), y);
  Value p =
      arithBinary<arith::MulFOp, arith::MulIOp>(b, l, isFloat, false, x, y);
  return arithBinary<arith::AddFOp, arith::AddIOp>(b, l, isFloat, false, acc,
                                                   p);
}

/// f16 and bf16 products accumulate in f32, as mma.sync does (and cuBLAS and
/// onnxruntime): the accumulator for a contraction writing `init`, an f32
/// temporary of its shape where the result is f16 or bf16, else `init`.
static Value getAccumulator(OpBuilder &b, Location loc, Value init) {
  auto type = cast<RankedTensorType>(init.getType());
  Type element = type.getElementType();
  if (!element.isF16() && !element.isBF16())
    return init;
  return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, init),
                                 b.getF32Type());
}

/// The accumulated `acc` converted into `init` (a no-op where they match).
static Value roundInto(OpBuilder &b, Location loc, Value acc, Value init) {
  if (acc.getType() == init.getType())
    return acc;
  Type element = cast<RankedTensorType>(init.getType()).getElementType();
  return buildElementwise(
      b, loc, ValueRange{acc}, init,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        return Value(arith::TruncFOp::create(nb, l, element, args[0]));
      });
}

OpLowering::Results OpLowering::lowerMatMul() {
  Value lhs = operands[0], rhs = operands[1];
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  Value init = destination(0);
  Value accInit = getAccumulator(b, loc, init);
  auto outType = cast<RankedTensorType>(accInit.getType());
  Type element = outType.getElementType();
  Value zero = fill(b, loc, scalarConstant(b, loc, element, 0), accInit);
  if (lhsType.getRank() == 2 && rhsType.getRank() == 2)
    return SmallVector<Value>{roundInto(
        b, loc,
        linalg::MatmulOp::create(b, loc, ValueRange{lhs, rhs}, ValueRange{zero})
            .getResult(0),
        init)};

  // numpy matmul as a generic contraction: [batch..., m?, n?, k], a rank-1
  // operand having no m (n) dimension, batch dimensions broadcast.
  bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
  int64_t outRank = outType.getRank();
  int64_t batch = outRank - (lhsVector ? 0 : 1) - (rhsVector ? 0 : 1);
  int64_t m = batch, n = batch + (lhsVector ? 0 : 1);
  int64_t k = n + (rhsVector ? 0 : 1);
  int64_t numDims = k + 1;
  auto batchExprs = [&](RankedTensorType type, int64_t operandBatch) {
    SmallVector<AffineExpr> exprs;
    for (int64_t j = 0; j < operandBatch; ++j) {
      int64_t dim = batch - operandBatch + j;
      if (type.getDimSize(j) == 1 && outType.getDimSize(dim) != 1)
        exprs.push_back(getAffineConstantExpr(0, ctx));
      else
        exprs.push_back(getAffineDimExpr(dim, ctx));
    }
    return exprs;
  };
  SmallVector<AffineExpr> lhsExprs, rhsExprs, outExprs;
  if (lhsVector) {
    lhsExprs.push_back(getAffineDimExpr(k, ctx));
  } else {
    lhsExprs = batchExprs(lhsType, lhsType.getRank() - 2);
    lhsExprs.push_back(getAffineDimExpr(m, ctx));
    lhsExprs.push_back(getAffineDimExpr(k, ctx));
  }
  if (rhsVector) {
    rhsExprs.push_back(getAffineDimExpr(k, ctx));
  } else {
    rhsExprs = batchExprs(rhsType, rhsType.getRank() - 2);
    rhsExprs.push_back(getAffineDimExpr(k, ctx));
    rhsExprs.push_back(getAffineDimExpr(n, ctx));
  }
  for (int64_t d = 0; d < k; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(numDims, 0, lhsExprs, ctx),
                              AffineMap::get(numDims, 0, rhsExprs, ctx),
                              AffineMap::get(numDims, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(numDims,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, ValueRange{lhs, rhs}, ValueRange{zero}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        linalg::YieldOp::create(nb, l,
                                multiplyAdd(nb, l, args[2], args[0], args[1]));
      });
  return SmallVector<Value>{roundInto(b, loc, generic.getResult(0), init)};
}

FailureOr<OpLowering::Window>
OpLowering::getWindow(ArrayRef<DimExpr> kernel, ArrayRef<int64_t> strides,
                      ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                      StringRef autoPad, Value input) {
  size_t rank = kernel.size();
  FailureOr<SmallVector<DimExpr>> out = resultShape(0);
  std::optional<SmallVector<DimExpr>> in =
      sym::getSymbolicShape(op->getOperand(0).getType());
  if (failed(out) || !in || in->size() != rank + 2)
    return op->emitOpError("has no symbolic input and output shapes");
  Window w;
  for (size_t i = 0; i < rank; ++i) {
    w.strides.push_back(i < strides.size() ? strides[i] : 1);
    w.dilations.push_back(i < dilations.size() ? dilations[i] : 1);
  }
  for (size_t i = 0; i < rank; ++i) {
    const DimExpr &inDim = (*in)[i + 2], &outDim = (*out)[i + 2];
    // The extent the windows read: (out-1)*stride + (kernel-1)*dilation + 1.
    DimExpr reach = (outDim - DimExpr(1)) * DimExpr(w.strides[i]) +
                    (kernel[i] - DimExpr(1)) * DimExpr(w.dilations[i]) +
                    DimExpr(1);
    DimExpr low(0);
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      low = dg::getSamePadding(inDim, outDim, kernel[i], w.strides[i],
                               w.dilations[i], autoPad == "SAME_UPPER")
                .first;
    } else if (autoPad != "VALID" && i < pads.size()) {
      low = DimExpr(pads[i]);
    }
    w.low.push_back(low);
    // Padding above: what the last window reads beyond the input (ceil_mode
    // windows may read past the declared end padding).
    w.high.push_back(DimExpr::max(DimExpr(0), reach - inDim - low));
  }
  return w;
}

Value OpLowering::padSpatial(Value input, const Window &window,
                             Value padValue) {
  SmallVector<OpFoldResult> low(2, b.getIndexAttr(0)),
      high(2, b.getIndexAttr(0));
  bool any = false;
  for (size_t i = 0; i < window.low.size(); ++i) {
    for (auto [expr, list] : {std::make_pair(&window.low[i], &low),
                              std::make_pair(&window.high[i], &high)}) {
      if (std::optional<int64_t> c = expr->getConstant()) {
        list->push_back(b.getIndexAttr(*c));
        any |= *c != 0;
      } else {
        Value v = materialize(*expr);
        if (!v)
          return Value();
        list->push_back(v);
        any = true;
      }
    }
  }
  if (!any)
    return input;
  return tensor::PadOp::create(b, loc, Type(), input, low, high, padValue);
}

/// Splits dimension `dim` of `value` into [groups, size/groups].
static Value expandGroups(OpBuilder &b, Location loc, Value value, int64_t dim,
                          int64_t groups) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> outputShape;
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d != dim) {
      reassociation.push_back({(int64_t)shape.size()});
      shape.push_back(type.getDimSize(d));
      outputShape.push_back(sizes[d]);
      continue;
    }
    reassociation.push_back({(int64_t)shape.size(), (int64_t)shape.size() + 1});
    shape.push_back(groups);
    outputShape.push_back(b.getIndexAttr(groups));
    int64_t size = type.getDimSize(d);
    if (ShapedType::isDynamic(size)) {
      shape.push_back(ShapedType::kDynamic);
      Value whole = getValueOrCreateConstantIndexOp(b, loc, sizes[d]);
      outputShape.push_back(Value(arith::DivUIOp::create(
          b, loc, whole, arith::ConstantIndexOp::create(b, loc, groups))));
    } else {
      shape.push_back(size / groups);
      outputShape.push_back(b.getIndexAttr(size / groups));
    }
  }
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), value,
      reassociation, outputShape);
}

OpLowering::Results OpLowering::lowerConv(dg::ConvOp conv) {
  Value input = operands[0], weight = operands[1];
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t spatial = weightType.getRank() - 2;
  std::optional<SmallVector<DimExpr>> weightShape =
      sym::getSymbolicShape(conv.getWeight().getType());
  if (!weightShape)
    return fail("has a weight without a symbolic shape");
  SmallVector<DimExpr> kernel(weightShape->begin() + 2, weightShape->end());
  FailureOr<Window> window =
      getWindow(kernel, conv.getStrides(), conv.getPads(), conv.getDilations(),
                conv.getAutoPad(), input);
  if (failed(window))
    return failure();
  Type element = resultElement();
  Value padded = padSpatial(input, *window, scalarConstant(b, loc, element, 0));
  if (!padded)
    return fail("has padding the kernel's symbols cannot compute");

  // Accumulator: the bias broadcast along the channels, or zero.
  Value init = destination(0);
  Value accInit = getAccumulator(b, loc, init);
  auto outType = cast<RankedTensorType>(accInit.getType());
  int64_t rank = outType.getRank();
  Value acc;
  if (conv.getBias()) {
    SmallVector<AffineMap> maps{
        AffineMap::get(rank, 0, getAffineDimExpr(1, ctx)),
        b.getMultiDimIdentityMap(rank)};
    acc = linalg::GenericOp::create(
              b, loc, TypeRange{outType}, ValueRange{operands[2]},
              ValueRange{accInit}, maps,
              SmallVector<utils::IteratorType>(rank,
                                               utils::IteratorType::parallel),
              [](OpBuilder &nb, Location l, ValueRange args) {
                Value bias = args[0];
                if (bias.getType() != args[1].getType())
                  bias = arith::ExtFOp::create(nb, l, args[1].getType(), bias);
                linalg::YieldOp::create(nb, l, bias);
              })
              .getResult(0);
  } else {
    acc = fill(b, loc, scalarConstant(b, loc, outType.getElementType(), 0),
               accInit);
  }

  // Iteration space: grouped [n, g, f, o..., c, k...], else [n, f, o..., c,
  // k...]; grouped operands are expanded to expose the group dimension.
  int64_t groups = conv.getGroup();
  bool grouped = groups > 1;
  if (grouped) {
    padded = expandGroups(b, loc, padded, 1, groups);
    weight = expandGroups(b, loc, weight, 0, groups);
    acc = expandGroups(b, loc, acc, 1, groups);
  }
  int64_t lead = grouped ? 3 : 2;
  int64_t c = lead + spatial;
  int64_t numDims = c + 1 + spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inExprs{d(0)}, wExprs, outExprs{d(0)};
  if (grouped) {
    inExprs.append({d(1), d(c)});
    wExprs.append({d(1), d(2), d(c)});
    outExprs.append({d(1), d(2)});
  } else {
    inExprs.push_back(d(c));
    wExprs.append({d(1), d(c)});
    outExprs.push_back(d(1));
  }
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(d(lead + i) * window->strides[i] +
                      d(c + 1 + i) * window->dilations[i]);
    wExprs.push_back(d(c + 1 + i));
    outExprs.push_back(d(lead + i));
  }
  SmallVector<AffineMap> maps{AffineMap::get(numDims, 0, inExprs, ctx),
                              AffineMap::get(numDims, 0, wExprs, ctx),
                              AffineMap::get(numDims, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(numDims,
                                             utils::IteratorType::reduction);
  for (int64_t i = 0; i < lead + spatial; ++i)
    iterators[i] = utils::IteratorType::parallel;
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{acc.getType()}, ValueRange{padded, weight},
          ValueRange{acc}, maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb, l, multiplyAdd(nb, l, args[2], args[0], args[1]));
          })
          .getResult(0);
  if (grouped) {
    SmallVector<ReassociationIndices> reassociation{{0}, {1, 2}};
    for (int64_t i = 0; i < spatial; ++i)
      reassociation.push_back({3 + i});
    result =
        tensor::CollapseShapeOp::create(b, loc, outType, result, reassociation);
  }
  return SmallVector<Value>{roundInto(b, loc, result, init)};
}

OpLowering::Results OpLowering::lowerPool(Operation *pool, bool isMax) {
  auto kernelAttr = pool->getAttrOfType<DenseI64ArrayAttr>("kernel_shape");
  auto get = [&](StringRef name) {
    auto attr = pool->getAttrOfType<DenseI64ArrayAttr>(name);
    return attr ? attr.asArrayRef() : ArrayRef<int64_t>();
  };
  auto autoPad = pool->getAttrOfType<StringAttr>("auto_pad");
  ArrayRef<int64_t> kernel = kernelAttr.asArrayRef();
  ArrayRef<int64_t> pads = get("pads");
  SmallVector<DimExpr> kernelDims(kernel.begin(), kernel.end());
  FailureOr<Window> window =
      getWindow(kernelDims, get("strides"), pads, get("dilations"),
                autoPad ? autoPad.getValue() : "NOTSET", operands[0]);
  if (failed(window))
    return failure();
  int64_t spatial = kernel.size();
  Type element = resultElement();
  bool uns = operandUnsigned(0);
  Value padValue = isMax ? extremeValue(b, loc, element, uns, false)
                         : scalarConstant(b, loc, element, 0);
  Value input = operands[0];
  Value padded = padSpatial(input, *window, padValue);
  if (!padded)
    return fail("has padding the kernel's symbols cannot compute");

  // [n, c, o..., k...]; the window is a shape-only operand, as in linalg's
  // named pooling ops.
  int64_t numDims = 2 + 2 * spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> inExprs{d(0), d(1)}, winExprs, outExprs{d(0), d(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(d(2 + i) * window->strides[i] +
                      d(2 + spatial + i) * window->dilations[i]);
    winExprs.push_back(d(2 + spatial + i));
    outExprs.push_back(d(2 + i));
  }
  Value windowShape = tensor::EmptyOp::create(b, loc, kernel, element);
  AffineMap outMap = AffineMap::get(numDims, 0, outExprs, ctx);
  SmallVector<AffineMap> maps{AffineMap::get(numDims, 0, inExprs, ctx),
                              AffineMap::get(numDims, 0, winExprs, ctx),
                              outMap};
  SmallVector<utils::IteratorType> iterators(numDims,
                                             utils::IteratorType::reduction);
  for (int64_t i = 0; i < 2 + spatial; ++i)
    iterators[i] = utils::IteratorType::parallel;
  bool isFloat = isa<FloatType>(element);
  Value init = destination(0);
  auto outType = cast<RankedTensorType>(init.getType());

  // Input extents and padding below, for indices and counts.
  SmallVector<Value> inSizes, lows, highs;
  for (int64_t i = 0; i < spatial; ++i) {
    inSizes.push_back(dimOf(input, 2 + i));
    lows.push_back(materialize(window->low[i]));
  }

  if (isMax) {
    Value acc = fill(b, loc, padValue, init);
    bool withIndices = pool->getNumResults() == 2;
    SmallVector<Value> inits{acc};
    SmallVector<Type> types{outType};
    Value channels;
    if (withIndices) {
      Value indicesInit = destination(1);
      inits.push_back(fill(b, loc, scalarConstant(b, loc, resultElement(1), 0),
                           indicesInit));
      types.push_back(indicesInit.getType());
      maps.push_back(outMap);
      channels = dimOf(input, 1);
    }
    bool columnMajor =
        pool->getAttrOfType<BoolAttr>("column_major_indices") &&
        pool->getAttrOfType<BoolAttr>("column_major_indices").getValue();
    auto generic = linalg::GenericOp::create(
        b, loc, types, ValueRange{padded, windowShape}, inits, maps, iterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value x = args[0], best = args[2];
          Value better =
              isFloat
                  ? Value(arith::CmpFOp::create(
                        nb, l, arith::CmpFPredicate::OGT, x, best))
                  : Value(arith::CmpIOp::create(nb, l,
                                                uns ? arith::CmpIPredicate::ugt
                                                    : arith::CmpIPredicate::sgt,
                                                x, best));
          SmallVector<Value> yields{
              arith::SelectOp::create(nb, l, better, x, best)};
          if (withIndices) {
            // The flat index of the element in the unpadded input.
            SmallVector<Value> coords;
            for (int64_t i = 0; i < spatial; ++i) {
              Value o = linalg::IndexOp::create(nb, l, 2 + i);
              Value k = linalg::IndexOp::create(nb, l, 2 + spatial + i);
              Value pos = arith::AddIOp::create(
                  nb, l,
                  arith::MulIOp::create(nb, l, o,
                                        arith::ConstantIndexOp::create(
                                            nb, l, window->strides[i])),
                  arith::MulIOp::create(nb, l, k,
                                        arith::ConstantIndexOp::create(
                                            nb, l, window->dilations[i])));
              coords.push_back(arith::SubIOp::create(nb, l, pos, lows[i]));
            }
            Value flat = arith::AddIOp::create(
                nb, l,
                arith::MulIOp::create(nb, l, linalg::IndexOp::create(nb, l, 0),
                                      channels),
                linalg::IndexOp::create(nb, l, 1));
            for (int64_t j = 0; j < spatial; ++j) {
              int64_t i = columnMajor ? spatial - 1 - j : j;
              flat = arith::AddIOp::create(
                  nb, l, arith::MulIOp::create(nb, l, flat, inSizes[i]),
                  coords[i]);
            }
            Value flatValue = indexToElement(nb, l, flat, args[3].getType());
            yields.push_back(
                arith::SelectOp::create(nb, l, better, flatValue, args[3]));
          }
          linalg::YieldOp::create(nb, l, yields);
        });
    return SmallVector<Value>(generic.getResults());
  }

  // Average: sum, then divide by the number of counted positions.
  if (!isFloat)
    return fail("average pooling needs a float element type");
  Value sum =
      linalg::GenericOp::create(
          b, loc, TypeRange{outType}, ValueRange{padded, windowShape},
          ValueRange{fill(b, loc, padValue, init)}, maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(
                nb, l, Value(arith::AddFOp::create(nb, l, args[2], args[0])));
          })
          .getResult(0);
  bool includePad =
      pool->getAttrOfType<BoolAttr>("count_include_pad") &&
      pool->getAttrOfType<BoolAttr>("count_include_pad").getValue();
  // Counted positions of a window along one dimension: k in [0, K) with
  // lo <= o*s - low + k*d < hi, where [lo, hi) is the input, or the input
  // with its declared padding when padding counts.
  for (int64_t i = 0; i < spatial; ++i) {
    if (!includePad) {
      highs.push_back(inSizes[i]);
      continue;
    }
    DimExpr declaredHigh = i + spatial < (int64_t)pads.size()
                               ? DimExpr(pads[i + spatial])
                               : window->high[i];
    if (autoPad && autoPad.getValue().starts_with("SAME"))
      declaredHigh = window->high[i];
    Value high = materialize(declaredHigh);
    highs.push_back(arith::AddIOp::create(b, loc, inSizes[i], high));
  }
  Value result = buildIndexed(
      b, loc, sum, [&](OpBuilder &nb, Location l, ValueRange idx, Value s) {
        Value count = arith::ConstantIndexOp::create(nb, l, 1);
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        Value one = arith::ConstantIndexOp::create(nb, l, 1);
        for (int64_t i = 0; i < spatial; ++i) {
          Value stride =
              arith::ConstantIndexOp::create(nb, l, window->strides[i]);
          Value dil =
              arith::ConstantIndexOp::create(nb, l, window->dilations[i]);
          Value base = arith::SubIOp::create(
              nb, l, arith::MulIOp::create(nb, l, idx[2 + i], stride), lows[i]);
          Value lo = includePad
                         ? Value(arith::SubIOp::create(nb, l, zero, lows[i]))
                         : zero;
          Value kMin = arith::MaxSIOp::create(
              nb, l, zero,
              arith::CeilDivSIOp::create(
                  nb, l, arith::SubIOp::create(nb, l, lo, base), dil));
          Value last = arith::SubIOp::create(
              nb, l, arith::SubIOp::create(nb, l, highs[i], one), base);
          Value kMax = arith::MinSIOp::create(
              nb, l, arith::ConstantIndexOp::create(nb, l, kernel[i] - 1),
              arith::FloorDivSIOp::create(nb, l, last, dil));
          Value n = arith::MaxSIOp::create(
              nb, l, zero,
              arith::AddIOp::create(
                  nb, l, arith::SubIOp::create(nb, l, kMax, kMin), one));
          count = arith::MulIOp::create(nb, l, count, n);
        }
        Value divisor = indexToElement(nb, l, count, s.getType());
        return arith::DivFOp::create(nb, l, s, divisor);
      });
  return SmallVector<Value>{result};
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

OpLowering::Results OpLowering::lowerReduce(ArrayRef<int64_t> axesIn,
                                            bool keepdims, StringRef kind) {
  Value input = operands[0];
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  SmallVector<bool> reduced(rank, axesIn.empty());
  for (int64_t axis : axesIn) {
    axis = normalizeAxis(axis, rank);
    if (axis < 0 || axis >= rank)
      return fail("reduces axis ") << axis << " of a rank-" << rank << " input";
    reduced[axis] = true;
  }
  Type element = inType.getElementType();
  bool uns = operandUnsigned(0);
  bool isFloat = isa<FloatType>(element);
  Value identity;
  if (kind == "sum" || kind == "mean")
    identity = scalarConstant(b, loc, element, 0);
  else if (kind == "prod")
    identity = scalarConstant(b, loc, element, 1);
  else
    identity = extremeValue(b, loc, element, uns, /*highest=*/kind == "min");

  Value init = destination(0);
  SmallVector<ReassociationIndices> reassociation;
  Value dest = init;
  if (keepdims) {
    reassociation = getKeptReassociation(rank, reduced);
    dest = tensor::CollapseShapeOp::create(b, loc, init, reassociation);
  }
  // Reduced dimensions that are the innermost ones, after a kept one (a
  // global pool's rows and columns), are one: each kept position reduces a
  // contiguous row of their product, which the tile search and code
  // generation take as a row reduction (a warp or a block per row, its
  // loads coalesced) where they would give each thread a whole window.
  // Only for a kernel argument: a collapsed intermediate would leave the
  // kernel's other ops on the uncollapsed shape, which tiling does not
  // fuse through (a LayerNorm over two dimensions never finished tiling).
  int64_t inner = rank;
  while (inner > 0 && reduced[inner - 1])
    --inner;
  auto argument = dyn_cast<BlockArgument>(input);
  if (argument &&
      isa<FunctionOpInterface>(argument.getOwner()->getParentOp()) &&
      inner > 0 && rank - inner >= 2 &&
      llvm::none_of(ArrayRef(reduced).take_front(inner),
                    [](bool r) { return r; })) {
    SmallVector<ReassociationIndices> rows;
    for (int64_t d = 0; d < inner; ++d)
      rows.push_back({d});
    rows.push_back(llvm::to_vector(llvm::seq<int64_t>(inner, rank)));
    input = tensor::CollapseShapeOp::create(b, loc, input, rows);
    rank = inner + 1;
    reduced.assign(rank, false);
    reduced.back() = true;
  }
  auto destType = cast<RankedTensorType>(dest.getType());
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    iterators.push_back(reduced[d] ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
    if (!reduced[d])
      outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, outExprs, ctx)};
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{destType}, ValueRange{input},
          ValueRange{fill(b, loc, identity, dest)}, maps, iterators,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value x = args[0], acc = args[1], r;
            if (kind == "sum" || kind == "mean")
              r = arithBinary<arith::AddFOp, arith::AddIOp>(nb, l, isFloat, uns,
                                                            acc, x);
            else if (kind == "prod")
              r = arithBinary<arith::MulFOp, arith::MulIOp>(nb, l, isFloat, uns,
                                                            acc, x);
            else if (kind == "max")
              r = arithBinary<arith::MaximumFOp, arith::MaxSIOp,
                              arith::MaxUIOp>(nb, l, isFloat, uns, acc, x);
            else
              r = arithBinary<arith::MinimumFOp, arith::MinSIOp,
                              arith::MinUIOp>(nb, l, isFloat, uns, acc, x);
            linalg::YieldOp::create(nb, l, r);
          })
          .getResult(0);
  if (kind == "mean") {
    Value count = index(1);
    for (int64_t d = 0; d < rank; ++d)
      if (reduced[d])
        count = arith::MulIOp::create(b, loc, count, dimOf(input, d));
    result = buildIndexed(
        b, loc, result, [&](OpBuilder &nb, Location l, ValueRange, Value s) {
          Value divisor = indexToElement(nb, l, count, element);
          if (isFloat)
            return Value(arith::DivFOp::create(nb, l, s, divisor));
          return Value(arith::DivSIOp::create(nb, l, s, divisor));
        });
  }
  if (keepdims) {
    FailureOr<SmallVector<OpFoldResult>> sizes = resultSizes(0);
    if (failed(sizes))
      return failure();
    result = tensor::ExpandShapeOp::create(b, loc, init.getType(), result,
                                           reassociation, *sizes);
  }
  return SmallVector<Value>{result};
}
//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpLowering::Results OpLowering::lowerReshape() {
  // Reshape, Flatten, Squeeze and Unsqueeze: a view. Collapse matching runs
  // of dimensions, then expand them to the result's; when the runs cannot be
  // matched symbolically, collapse everything to one dimension and expand.
  Value input = operands[0];
  auto inType = cast<RankedTensorType>(input.getType());
  RankedTensorType outType = resultType();
  std::optional<SmallVector<DimExpr>> inShape =
      sym::getSymbolicShape(op->getOperand(0).getType());
  FailureOr<SmallVector<DimExpr>> outShape = resultShape();
  FailureOr<SmallVector<OpFoldResult>> outSizes = resultSizes();
  if (!inShape || failed(outShape) || failed(outSizes))
    return failure();
  if (inType == outType && *inShape == *outShape)
    return SmallVector<Value>{input};
  // No element to move (a static 0 on either side): the result is its empty
  // destination. Collapsing a static 0 with dynamic sizes would give a
  // dynamic run that memref.collapse_shape rejects once the 0 is known.
  if (llvm::is_contained(inType.getShape(), 0) ||
      llvm::is_contained(outType.getShape(), 0))
    return SmallVector<Value>{destination(0)};
  SmallVector<ReassociationIndices> inGroups, outGroups;
  if (inType.getRank() == 0 || outType.getRank() == 0) {
    // Rank 0 from or to all-unit dimensions: no groups.
  } else if (failed(
                 sym::matchReshape(*inShape, *outShape, inGroups, outGroups))) {
    inGroups.assign(1,
                    llvm::to_vector(llvm::seq<int64_t>(0, inType.getRank())));
    outGroups.assign(1,
                     llvm::to_vector(llvm::seq<int64_t>(0, outType.getRank())));
  }
  Value collapsed = input;
  if (inType.getRank() != (int64_t)inGroups.size())
    collapsed = tensor::CollapseShapeOp::create(b, loc, input, inGroups);
  // Each run is static exactly when the result's dimensions in it are.
  SmallVector<int64_t> runs;
  for (const ReassociationIndices &group : outGroups) {
    int64_t product = 1;
    for (int64_t d : group)
      product = ShapedType::isDynamic(outType.getDimSize(d)) || product < 0
                    ? ShapedType::kDynamic
                    : product * outType.getDimSize(d);
    runs.push_back(product);
  }
  auto runType = RankedTensorType::get(runs, outType.getElementType());
  if (collapsed.getType() != runType)
    collapsed = tensor::CastOp::create(b, loc, runType, collapsed);
  if (outType.getRank() == (int64_t)outGroups.size() &&
      collapsed.getType() == outType)
    return SmallVector<Value>{collapsed};
  if (outType.getRank() == (int64_t)outGroups.size()) {
    // Same number of runs on both sides, each of one dimension: a cast.
    return SmallVector<Value>{
        tensor::CastOp::create(b, loc, outType, collapsed).getResult()};
  }
  return SmallVector<Value>{tensor::ExpandShapeOp::create(b, loc, outType,
                                                          collapsed, outGroups,
                                                          *outSizes)
                                .getResult()};
}

OpLowering::Results OpLowering::lowerTranspose(dg::TransposeOp transpose) {
  return SmallVector<Value>{linalg::TransposeOp::create(b, loc, operands[0],
                                                        destination(0),
                                                        transpose.getPerm())
                                .getResult()[0]};
}

OpLowering::Results OpLowering::lowerConcat(dg::ConcatOp concat) {
  Value acc = destination(0);
  int64_t rank = cast<RankedTensorType>(acc.getType()).getRank();
  int64_t axis = normalizeAxis(concat.getAxis(), rank);
  Value offset = index(0);
  for (Value input : operands) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[axis] = getAsOpFoldResult(offset);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    acc = tensor::InsertSliceOp::create(b, loc, input, acc, offsets, sizes,
                                        strides);
    offset = arith::AddIOp::create(b, loc, offset, dimOf(input, axis));
  }
  return SmallVector<Value>{acc};
}

OpLowering::Results OpLowering::lowerSplit(dg::SplitOp split) {
  Value input = operands[0];
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  int64_t axis = normalizeAxis(split.getAxis(), rank);
  Value offset = index(0);
  SmallVector<Value> results;
  for (unsigned i = 0; i < op->getNumResults(); ++i) {
    FailureOr<SmallVector<OpFoldResult>> sizes = resultSizes(i);
    if (failed(sizes))
      return failure();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[axis] = getAsOpFoldResult(offset);
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    if (llvm::is_contained(resultType(i).getShape(), 0))
      results.push_back(
          tensor::EmptyOp::create(b, loc, *sizes, resultElement(i)));
    else
      results.push_back(tensor::ExtractSliceOp::create(
          b, loc, resultType(i), input, offsets, *sizes, strides));
    offset = arith::AddIOp::create(
        b, loc, offset,
        getValueOrCreateConstantIndexOp(b, loc, (*sizes)[axis]));
  }
  return results;
}

OpLowering::Results OpLowering::lowerSlice(dg::SliceOp slice) {
  Value input = operands[0];
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Value starts = operands[1];
  int64_t count = cast<RankedTensorType>(starts.getType()).getNumElements();
  unsigned next = 3;
  SmallVector<int64_t> axes, steps(count, 1);
  if (slice.getAxes()) {
    std::optional<SmallVector<int64_t>> values =
        getConstantInts(operands[next++]);
    if (!values)
      return fail("needs constant axes to be lowered");
    axes = *values;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, count));
  }
  if (slice.getSteps()) {
    std::optional<SmallVector<int64_t>> values =
        getConstantInts(operands[next++]);
    if (!values)
      return fail("needs constant steps to be lowered");
    steps = *values;
  }
  if ((int64_t)axes.size() != count || (int64_t)steps.size() != count)
    return fail("has starts, axes and steps of different lengths");

  // Per sliced dimension, the first index read, with ONNX's clamping.
  SmallVector<Value> first(rank, index(0));
  SmallVector<int64_t> stride(rank, 1);
  bool anyNegative = false;
  for (int64_t i = 0; i < count; ++i) {
    int64_t axis = normalizeAxis(axes[i], rank);
    if (axis < 0 || axis >= rank || steps[i] == 0)
      return fail("has an invalid axis or a zero step");
    Value dim = dimOf(input, axis);
    Value s = toIndex(b, loc, extractFlat(b, loc, starts, i));
    Value zero = index(0);
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, s, zero);
    s = arith::SelectOp::create(b, loc, negative,
                                arith::AddIOp::create(b, loc, s, dim), s);
    Value hi = steps[i] > 0
                   ? dim
                   : Value(arith::SubIOp::create(b, loc, dim, index(1)));
    first[axis] = clampIndex(b, loc, s, zero, hi);
    stride[axis] = steps[i];
    anyNegative |= steps[i] < 0;
  }
  FailureOr<SmallVector<OpFoldResult>> sizes = resultSizes();
  if (failed(sizes))
    return failure();
  // An empty result reads nothing (a static offset into an empty dimension
  // would not verify).
  if (llvm::is_contained(resultType().getShape(), 0))
    return SmallVector<Value>{
        tensor::EmptyOp::create(b, loc, *sizes, resultElement())};
  if (!anyNegative) {
    SmallVector<OpFoldResult> offsets = getAsOpFoldResult(first);
    SmallVector<OpFoldResult> strides;
    for (int64_t s : stride)
      strides.push_back(b.getIndexAttr(s));
    return SmallVector<Value>{tensor::ExtractSliceOp::create(
        b, loc, resultType(), input, offsets, *sizes, strides)};
  }
  return single(buildIndexed(
      b, loc, destination(0),
      [&](OpBuilder &nb, Location l, ValueRange idx, Value) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(arith::AddIOp::create(
              nb, l, first[d],
              arith::MulIOp::create(
                  nb, l, idx[d],
                  arith::ConstantIndexOp::create(nb, l, stride[d]))));
        return tensor::ExtractOp::create(nb, l, input, at);
      }));
}

OpLowering::Results OpLowering::lowerGather(dg::GatherOp gather) {
  Value data = operands[0], indices = operands[1];
  int64_t dataRank = cast<RankedTensorType>(data.getType()).getRank();
  int64_t indexRank = cast<RankedTensorType>(indices.getType()).getRank();
  int64_t axis = normalizeAxis(gather.getAxis(), dataRank);
  Value init = destination(0);
  int64_t rank = cast<RankedTensorType>(init.getType()).getRank();
  Value extent = dimOf(data, axis);
  Value last = arith::SubIOp::create(b, loc, extent, index(1));
  SmallVector<AffineExpr> indexExprs;
  for (int64_t i = 0; i < indexRank; ++i)
    indexExprs.push_back(getAffineDimExpr(axis + i, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, indexExprs, ctx),
                              b.getMultiDimIdentityMap(rank)};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{indices}, ValueRange{init},
      maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        // Negative indices count from the end; out-of-range ones are clamped
        // so that bad data cannot read outside the tensor.
        Value i = toIndex(nb, l, args[0]);
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        Value negative =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, i, zero);
        i = arith::SelectOp::create(nb, l, negative,
                                    arith::AddIOp::create(nb, l, i, extent), i);
        i = clampIndex(nb, l, i, zero, last);
        SmallVector<Value> at;
        for (int64_t d = 0; d < axis; ++d)
          at.push_back(linalg::IndexOp::create(nb, l, d));
        at.push_back(i);
        for (int64_t d = axis + 1; d < dataRank; ++d)
          at.push_back(linalg::IndexOp::create(nb, l, d - 1 + indexRank));
        linalg::YieldOp::create(
            nb, l, Value(tensor::ExtractOp::create(nb, l, data, at)));
      });
  return SmallVector<Value>{generic.getResult(0)};
}

OpLowering::Results OpLowering::lowerTile() {
  Value input = operands[0];
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(dimOf(input, d));
  return single(buildIndexed(
      b, loc, destination(0),
      [&](OpBuilder &nb, Location l, ValueRange idx, Value) -> Value {
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d)
          at.push_back(arith::RemUIOp::create(nb, l, idx[d], sizes[d]));
        return tensor::ExtractOp::create(nb, l, input, at);
      }));
}

OpLowering::Results OpLowering::lowerRange() {
  Type element = resultElement();
  Value start = extractFlat(b, loc, operands[0], 0);
  Value delta = extractFlat(b, loc, operands[2], 0);
  return single(buildIndexed(
      b, loc, destination(0),
      [&](OpBuilder &nb, Location l, ValueRange idx, Value) -> Value {
        Value i = indexToElement(nb, l, idx[0], element);
        if (isa<FloatType>(element))
          return arith::AddFOp::create(nb, l, start,
                                       arith::MulFOp::create(nb, l, i, delta));
        return arith::AddIOp::create(nb, l, start,
                                     arith::MulIOp::create(nb, l, i, delta));
      }));
}

OpLowering::Results OpLowering::lowerPad(dg::PadOp pad) {
  Value input = operands[0];
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  Type element = resultElement();
  StringRef mode = pad.getMode();
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return fail("has an unknown mode '") << mode << "'";
  SmallVector<Value> low, sizes;
  for (int64_t d = 0; d < rank; ++d) {
    low.push_back(toIndex(b, loc, extractFlat(b, loc, operands[1], d)));
    sizes.push_back(dimOf(input, d));
  }
  Value padValue = pad.getValue() ? extractFlat(b, loc, operands[2], 0)
                                  : scalarConstant(b, loc, element, 0);
  return single(buildIndexed(
      b, loc, destination(0),
      [&](OpBuilder &nb, Location l, ValueRange idx, Value) -> Value {
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        Value one = arith::ConstantIndexOp::create(nb, l, 1);
        SmallVector<Value> at;
        Value inside;
        for (int64_t d = 0; d < rank; ++d) {
          Value i = arith::SubIOp::create(nb, l, idx[d], low[d]);
          Value last = arith::SubIOp::create(nb, l, sizes[d], one);
          if (mode == "constant") {
            inside = andInBounds(nb, l, inside, i, zero, sizes[d]);
          } else if (mode == "edge") {
            i = clampIndex(nb, l, i, zero, last);
          } else if (mode == "wrap") {
            Value m = arith::RemSIOp::create(nb, l, i, sizes[d]);
            Value neg = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                              m, zero);
            i = arith::SelectOp::create(
                nb, l, neg, arith::AddIOp::create(nb, l, m, sizes[d]), m);
          } else { // reflect: period 2*(n-1), mirrored in its second half
            Value period = arith::MaxSIOp::create(
                nb, l, one,
                arith::MulIOp::create(
                    nb, l, last, arith::ConstantIndexOp::create(nb, l, 2)));
            Value m = arith::RemSIOp::create(nb, l, i, period);
            Value neg = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                              m, zero);
            m = arith::SelectOp::create(
                nb, l, neg, arith::AddIOp::create(nb, l, m, period), m);
            Value mirrored = arith::SubIOp::create(nb, l, period, m);
            Value low = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                              m, last);
            i = arith::SelectOp::create(nb, l, low, m, mirrored);
            i = clampIndex(nb, l, i, zero, last);
          }
          at.push_back(i);
        }
        if (!inside)
          return tensor::ExtractOp::create(nb, l, input, at);
        auto ifOp = scf::IfOp::create(
            nb, l, inside,
            [&](OpBuilder &tb, Location tl) {
              scf::YieldOp::create(
                  tb, tl, Value(tensor::ExtractOp::create(tb, tl, input, at)));
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, padValue);
            });
        return ifOp.getResult(0);
      }));
}

OpLowering::Results OpLowering::lowerNonZero() {
  // A sequential scan: the result's second dimension is bound from the data
  // at run time, and its destination is exactly that size.
  Value input = operands[0];
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  Value init = destination(0);
  Type element = resultElement();
  SmallVector<Value> sizes;
  Value total = index(1);
  for (int64_t d = 0; d < rank; ++d) {
    sizes.push_back(dimOf(input, d));
    total = arith::MulIOp::create(b, loc, total, sizes.back());
  }
  Value zero = scalarConstant(b, loc, inType.getElementType(), 0);
  bool isFloat = isa<FloatType>(inType.getElementType());
  auto loop = scf::ForOp::create(
      b, loc, index(0), total, index(1), ValueRange{init, index(0)},
      [&](OpBuilder &nb, Location l, Value iv, ValueRange iter) {
        SmallVector<Value> coords(rank);
        Value rest = iv;
        for (int64_t d = rank - 1; d >= 0; --d) {
          coords[d] = arith::RemUIOp::create(nb, l, rest, sizes[d]);
          rest = arith::DivUIOp::create(nb, l, rest, sizes[d]);
        }
        Value x = tensor::ExtractOp::create(nb, l, input, coords);
        Value nonzero = isFloat
                            ? Value(arith::CmpFOp::create(
                                  nb, l, arith::CmpFPredicate::UNE, x, zero))
                            : Value(arith::CmpIOp::create(
                                  nb, l, arith::CmpIPredicate::ne, x, zero));
        auto ifOp = scf::IfOp::create(
            nb, l, nonzero,
            [&](OpBuilder &tb, Location tl) {
              Value acc = iter[0];
              for (int64_t d = 0; d < rank; ++d)
                acc = tensor::InsertOp::create(
                    tb, tl, indexToElement(tb, tl, coords[d], element), acc,
                    ValueRange{arith::ConstantIndexOp::create(tb, tl, d),
                               iter[1]});
              Value next = arith::AddIOp::create(
                  tb, tl, iter[1], arith::ConstantIndexOp::create(tb, tl, 1));
              scf::YieldOp::create(tb, tl, ValueRange{acc, next});
            },
            [&](OpBuilder &eb, Location el) {
              scf::YieldOp::create(eb, el, iter);
            });
        scf::YieldOp::create(nb, l, ifOp.getResults());
      });
  return SmallVector<Value>{loop.getResult(0)};
}

OpLowering::Results OpLowering::lowerCumSum(dg::CumSumOp cumsum) {
  // out[..., i, ...] = sum over j of in[..., j, ...] for j <= i (j < i when
  // exclusive; j >= i reversed): a masked reduction over an extra dimension.
  Value input = operands[0];
  Value init = destination(0);
  auto type = cast<RankedTensorType>(init.getType());
  int64_t rank = type.getRank();
  int64_t axis = normalizeAxis(cumsum.getAxis(), rank);
  Type element = type.getElementType();
  bool isFloat = isa<FloatType>(element);
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < rank; ++d)
    inExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, inExprs, ctx),
                              AffineMap::get(rank + 1, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  arith::CmpIPredicate predicate =
      cumsum.getReverse() ? (cumsum.getExclusive() ? arith::CmpIPredicate::ugt
                                                   : arith::CmpIPredicate::uge)
                          : (cumsum.getExclusive() ? arith::CmpIPredicate::ult
                                                   : arith::CmpIPredicate::ule);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{input},
      ValueRange{fill(b, loc, scalarConstant(b, loc, element, 0), init)}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value i = linalg::IndexOp::create(nb, l, axis);
        Value j = linalg::IndexOp::create(nb, l, rank);
        Value take = arith::CmpIOp::create(nb, l, predicate, j, i);
        Value zero = scalarConstant(nb, l, element, 0);
        Value x = arith::SelectOp::create(nb, l, take, args[0], zero);
        Value sum = arithBinary<arith::AddFOp, arith::AddIOp>(
            nb, l, isFloat, false, args[1], x);
        linalg::YieldOp::create(nb, l, sum);
      });
  return SmallVector<Value>{generic.getResult(0)};
}

OpLowering::Results OpLowering::lowerDepthToSpace(dg::DepthToSpaceOp d2s) {
  // out[n, c, h*bs + i, w*bs + j] = in[n, channel(c, i, j), h, w].
  Value input = operands[0];
  Value init = destination(0);
  Value channels = dimOf(init, 1);
  int64_t bs = d2s.getBlocksize();
  bool dcr = d2s.getMode() != "CRD";
  return single(buildIndexed(
      b, loc, init,
      [&](OpBuilder &nb, Location l, ValueRange idx, Value) -> Value {
        Value block = arith::ConstantIndexOp::create(nb, l, bs);
        Value h = arith::DivUIOp::create(nb, l, idx[2], block);
        Value i = arith::RemUIOp::create(nb, l, idx[2], block);
        Value w = arith::DivUIOp::create(nb, l, idx[3], block);
        Value j = arith::RemUIOp::create(nb, l, idx[3], block);
        Value offset = arith::AddIOp::create(
            nb, l, arith::MulIOp::create(nb, l, i, block), j);
        Value channel =
            dcr ? Value(arith::AddIOp::create(
                      nb, l, arith::MulIOp::create(nb, l, offset, channels),
                      idx[1]))
                : Value(arith::AddIOp::create(
                      nb, l,
                      arith::MulIOp::create(
                          nb, l, idx[1],
                          arith::ConstantIndexOp::create(nb, l, bs * bs)),
                      offset));
        return tensor::ExtractOp::create(nb, l, input,
                                         ValueRange{idx[0], channel, h, w});
      }));
}
OpLowering::Results OpLowering::lowerIm2Col(dg::Im2ColOp im2col) {
  // out[n, (c*KH + i)*KW + j, y, x] = in[n, c, y*sh + i*dh - top,
  // x*sw + j*dw - left], zero outside the input: the index is clamped into
  // it and the value selected, so every read is in bounds. A 1-D window
  // alike over [N, C, W]. With batch_inner the first two dimensions are
  // swapped.
  Value input = operands[0];
  ArrayRef<int64_t> kernel = im2col.getKernelShape();
  ArrayRef<int64_t> strides = im2col.getStrides();
  ArrayRef<int64_t> dilations = im2col.getDilations();
  ArrayRef<int64_t> pads = im2col.getPads();
  int64_t spatial = kernel.size();
  if ((spatial != 1 && spatial != 2) || int64_t(strides.size()) != spatial ||
      int64_t(dilations.size()) != spatial ||
      int64_t(pads.size()) != 2 * spatial)
    return fail("needs a 1-D or 2-D window, strides and dilations, and two "
                "pads per dimension");
  bool padded = llvm::any_of(pads, [](int64_t p) { return p != 0; });
  Type element = resultElement();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < spatial; ++d)
    sizes.push_back(dimOf(input, 2 + d));
  int64_t image = im2col.getBatchInner() ? 1 : 0;
  return single(buildIndexed(
      b, loc, destination(0),
      [&](OpBuilder &nb, Location l, ValueRange idx, Value) -> Value {
        auto constant = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v);
        };
        int64_t area = 1;
        for (int64_t k : kernel)
          area *= k;
        Value window = idx[1 - image];
        Value channel = arith::DivUIOp::create(nb, l, window, constant(area));
        // The window's taps: (i, j) of `tap` = i*KW + j in 2-D.
        Value tap = arith::RemUIOp::create(nb, l, window, constant(area));
        SmallVector<Value> taps = {tap};
        if (spatial == 2)
          taps = {arith::DivUIOp::create(nb, l, tap, constant(kernel[1])),
                  arith::RemUIOp::create(nb, l, tap, constant(kernel[1]))};
        Value zero = constant(0), one = constant(1);
        SmallVector<Value> at = {idx[image], channel};
        Value inside;
        for (int64_t d = 0; d < spatial; ++d) {
          Value pos = arith::AddIOp::create(
              nb, l,
              arith::MulIOp::create(nb, l, idx[2 + d], constant(strides[d])),
              arith::MulIOp::create(nb, l, taps[d], constant(dilations[d])));
          if (!padded) {
            at.push_back(pos);
            continue;
          }
          pos = arith::SubIOp::create(nb, l, pos, constant(pads[d]));
          inside = andInBounds(nb, l, inside, pos, zero, sizes[d]);
          at.push_back(clampIndex(nb, l, pos, zero,
                                  arith::SubIOp::create(nb, l, sizes[d], one)));
        }
        Value value = tensor::ExtractOp::create(nb, l, input, at);
        if (!inside)
          return value;
        return arith::SelectOp::create(nb, l, inside, value,
                                       scalarConstant(nb, l, element, 0));
      }));
}

OpLowering::Results OpLowering::lowerResize(dg::ResizeOp resize) {
  Value input = operands[0];
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t rank = inType.getRank();
  StringRef mode = resize.getMode();
  StringRef transform = resize.getCoordinateTransformationMode();
  StringRef nearest = resize.getNearestMode();
  if (mode != "nearest" && mode != "linear")
    return fail("mode '") << mode << "' has no lowering yet";
  if (transform != "half_pixel" && transform != "pytorch_half_pixel" &&
      transform != "align_corners" && transform != "asymmetric" &&
      transform != "tf_half_pixel_for_nn")
    return fail("coordinate transformation '")
           << transform << "' has no lowering yet";
  Type element = resultElement();
  if (mode == "linear" && !isa<FloatType>(element))
    return fail("linear resize needs a float element type");
  Value init = destination(0);
  Type f32 = b.getF32Type();

  // Per dimension: input and output extents (as f32 too) and the scale.
  std::optional<SmallVector<DimExpr>> inShape =
      sym::getSymbolicShape(op->getOperand(0).getType());
  FailureOr<SmallVector<DimExpr>> outShape = resultShape();
  if (!inShape || failed(outShape))
    return failure();
  SmallVector<bool> resized(rank);
  SmallVector<Value> inSizes, inF, outF, scales;
  for (int64_t d = 0; d < rank; ++d) {
    resized[d] = (*inShape)[d] != (*outShape)[d];
    inSizes.push_back(dimOf(input, d));
    inF.push_back(indexToElement(b, loc, inSizes.back(), f32));
    outF.push_back(indexToElement(b, loc, dimOf(init, d), f32));
    if (resize.getScales()) {
      Value s = extractFlat(b, loc, operands[1], d);
      s = convertScalar(b, loc, s, f32, false, false);
      scales.push_back(s);
    } else {
      scales.push_back(arith::DivFOp::create(b, loc, outF.back(), inF.back()));
    }
  }

  // The input coordinate of output index `x` along `d`, as f32.
  auto coordinate = [&](OpBuilder &nb, Location l, Value x, int64_t d) {
    Value xf = indexToElement(nb, l, x, f32);
    Value half = scalarConstant(nb, l, f32, 0.5);
    Value one = scalarConstant(nb, l, f32, 1);
    Value zero = scalarConstant(nb, l, f32, 0);
    if (transform == "asymmetric")
      return Value(arith::DivFOp::create(nb, l, xf, scales[d]));
    if (transform == "tf_half_pixel_for_nn")
      return Value(arith::DivFOp::create(
          nb, l, arith::AddFOp::create(nb, l, xf, half), scales[d]));
    if (transform == "align_corners") {
      // ONNX's length_resized: with scales it is length * scale, not the
      // floored output size (they differ when downsampling by 0.6).
      Value resizedLength =
          resize.getScales() ? Value(arith::MulFOp::create(nb, l, inF[d],
                                                           scales[d]))
                             : outF[d];
      Value outMinus = arith::SubFOp::create(nb, l, resizedLength, one);
      Value inMinus = arith::SubFOp::create(nb, l, inF[d], one);
      Value ratio = arith::DivFOp::create(nb, l, inMinus, outMinus);
      Value single = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE,
                                           resizedLength, one);
      return Value(arith::SelectOp::create(
          nb, l, single, zero, arith::MulFOp::create(nb, l, xf, ratio)));
    }
    Value c = arith::SubFOp::create(
        nb, l,
        arith::DivFOp::create(nb, l, arith::AddFOp::create(nb, l, xf, half),
                              scales[d]),
        half);
    if (transform == "pytorch_half_pixel") {
      Value single =
          arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLE, outF[d], one);
      return Value(arith::SelectOp::create(nb, l, single, zero, c));
    }
    return c;
  };
  auto clampTo = [&](OpBuilder &nb, Location l, Value i, int64_t d) {
    Value zero = arith::ConstantIndexOp::create(nb, l, 0);
    Value last = arith::SubIOp::create(
        nb, l, inSizes[d], arith::ConstantIndexOp::create(nb, l, 1));
    return clampIndex(nb, l, i, zero, last);
  };
  auto floorIndex = [&](OpBuilder &nb, Location l, Value f) {
    Value fl = math::FloorOp::create(nb, l, f);
    return arith::IndexCastOp::create(
        nb, l, nb.getIndexType(),
        arith::FPToSIOp::create(nb, l, nb.getI64Type(), fl));
  };

  return single(buildIndexed(
      b, loc, init,
      [&](OpBuilder &nb, Location l, ValueRange idx, Value) -> Value {
        if (mode == "nearest") {
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            if (!resized[d] && !resize.getScales()) {
              at.push_back(idx[d]);
              continue;
            }
            Value c = coordinate(nb, l, idx[d], d);
            Value half = scalarConstant(nb, l, f32, 0.5);
            Value rounded;
            if (nearest == "floor")
              rounded = math::FloorOp::create(nb, l, c);
            else if (nearest == "ceil")
              rounded = math::CeilOp::create(nb, l, c);
            else if (nearest == "round_prefer_ceil")
              rounded = math::FloorOp::create(
                  nb, l, arith::AddFOp::create(nb, l, c, half));
            else // round_prefer_floor
              rounded = math::CeilOp::create(
                  nb, l, arith::SubFOp::create(nb, l, c, half));
            Value i = arith::IndexCastOp::create(
                nb, l, nb.getIndexType(),
                arith::FPToSIOp::create(nb, l, nb.getI64Type(), rounded));
            at.push_back(clampTo(nb, l, i, d));
          }
          return tensor::ExtractOp::create(nb, l, input, at);
        }
        // Linear: blend the 2^k neighbours along the k resized dimensions.
        SmallVector<Value> lo(rank), hi(rank), weight(rank);
        SmallVector<int64_t> interpolated;
        for (int64_t d = 0; d < rank; ++d) {
          if (!resized[d]) {
            lo[d] = idx[d];
            continue;
          }
          Value c = coordinate(nb, l, idx[d], d);
          Value zero = scalarConstant(nb, l, f32, 0);
          Value maxF = arith::SubFOp::create(nb, l, inF[d],
                                             scalarConstant(nb, l, f32, 1));
          c = arith::MinimumFOp::create(
              nb, l, arith::MaximumFOp::create(nb, l, c, zero), maxF);
          Value i0 = floorIndex(nb, l, c);
          lo[d] = clampTo(nb, l, i0, d);
          hi[d] =
              clampTo(nb, l,
                      arith::AddIOp::create(
                          nb, l, i0, arith::ConstantIndexOp::create(nb, l, 1)),
                      d);
          weight[d] =
              arith::SubFOp::create(nb, l, c, math::FloorOp::create(nb, l, c));
          interpolated.push_back(d);
        }
        Value sum = scalarConstant(nb, l, f32, 0);
        for (unsigned corner = 0; corner < (1u << interpolated.size());
             ++corner) {
          SmallVector<Value> at(lo);
          Value w = scalarConstant(nb, l, f32, 1);
          for (auto [bit, d] : llvm::enumerate(interpolated)) {
            bool upper = corner & (1u << bit);
            at[d] = upper ? hi[d] : lo[d];
            Value f =
                upper ? weight[d]
                      : Value(arith::SubFOp::create(
                            nb, l, scalarConstant(nb, l, f32, 1), weight[d]));
            w = arith::MulFOp::create(nb, l, w, f);
          }
          Value x = tensor::ExtractOp::create(nb, l, input, at);
          x = convertScalar(nb, l, x, f32, false, false);
          sum = arith::AddFOp::create(nb, l, sum,
                                      arith::MulFOp::create(nb, l, w, x));
        }
        return convertScalar(nb, l, sum, element, false, false);
      }));
}

OpLowering::Results OpLowering::lowerShapeOf(dg::ShapeOfOp shapeOf) {
  Value input = operands[0];
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  int64_t start = shapeOf.getStart();
  int64_t end =
      shapeOf.getEnd() ? static_cast<int64_t>(*shapeOf.getEnd()) : rank;
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  Type element = resultElement();
  SmallVector<Value> values;
  for (int64_t d = start; d < end; ++d)
    values.push_back(indexToElement(b, loc, dimOf(input, d), element));
  return SmallVector<Value>{
      tensor::FromElementsOp::create(b, loc, resultType(), values)};
}

FailureOr<SmallVector<Value>> OpLowering::lower() {
  if (op->hasTrait<dg::Elementwise>() &&
      !isa<dg::BatchNormOp, dg::TriluOp, dg::CumSumOp>(op))
    return lowerElementwise();
  return llvm::TypeSwitch<Operation *, Results>(op)
      .Case([&](dg::ConstantOp constant) -> Results {
        auto attr = cast<ElementsAttr>(constant.getValue());
        RankedTensorType type = resultType();
        TypedAttr value;
        if (auto dense = dyn_cast<DenseElementsAttr>(attr))
          value = DenseElementsAttr::getFromRawBuffer(type, dense.getRawData());
        else if (attr.getType() == type)
          value = cast<TypedAttr>(attr);
        else
          return fail("holds weights that cannot be retyped for a kernel");
        return SmallVector<Value>{arith::ConstantOp::create(b, loc, value)};
      })
      .Case([&](dg::DimValuesOp dimValues) -> Results {
        Type element = resultElement();
        SmallVector<Value> values;
        for (const DimExpr &expr : dimValues.getValues().getExprs()) {
          Value v = materialize(expr);
          if (!v)
            return fail("has a value the kernel's symbols cannot compute");
          values.push_back(indexToElement(b, loc, v, element));
        }
        return SmallVector<Value>{
            tensor::FromElementsOp::create(b, loc, resultType(), values)};
      })
      .Case([&](dg::ConstantOfShapeOp c) -> Results {
        auto attr = cast<ElementsAttr>(c.getValue());
        Type element = resultElement();
        Value value;
        if (isa<FloatType>(element))
          value = arith::ConstantOp::create(
              b, loc, b.getFloatAttr(element, *attr.value_begin<APFloat>()));
        else
          value = arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(element, *attr.value_begin<APInt>()));
        return SmallVector<Value>{fill(b, loc, value, destination(0))};
      })
      .Case([&](dg::ShapeOfOp s) { return lowerShapeOf(s); })
      .Case([&](dg::SizeOp) -> Results {
        Value input = operands[0];
        Value count = index(1);
        for (int64_t d = 0,
                     e = cast<RankedTensorType>(input.getType()).getRank();
             d < e; ++d)
          count = arith::MulIOp::create(b, loc, count, dimOf(input, d));
        Value v = indexToElement(b, loc, count, resultElement());
        return SmallVector<Value>{tensor::FromElementsOp::create(
            b, loc, resultType(), ValueRange{v})};
      })
      .Case<dg::ReshapeOp, dg::FlattenOp, dg::SqueezeOp, dg::UnsqueezeOp>(
          [&](Operation *) { return lowerReshape(); })
      .Case([&](dg::TransposeOp t) { return lowerTranspose(t); })
      .Case([&](dg::ConcatOp c) { return lowerConcat(c); })
      .Case([&](dg::SplitOp s) { return lowerSplit(s); })
      .Case([&](dg::SliceOp s) { return lowerSlice(s); })
      .Case([&](dg::GatherOp g) { return lowerGather(g); })
      .Case([&](dg::ExpandOp) -> Results {
        return single(buildElementwise(
            b, loc, ValueRange{operands[0]}, destination(0),
            [](OpBuilder &, Location, ValueRange args) { return args[0]; }));
      })
      .Case([&](dg::TileOp) { return lowerTile(); })
      .Case([&](dg::RangeOp) { return lowerRange(); })
      .Case([&](dg::TriluOp t) { return lowerTrilu(t); })
      .Case([&](dg::PadOp p) { return lowerPad(p); })
      .Case([&](dg::NonZeroOp) { return lowerNonZero(); })
      .Case([&](dg::CumSumOp c) { return lowerCumSum(c); })
      .Case([&](dg::DepthToSpaceOp d) { return lowerDepthToSpace(d); })
      .Case([&](dg::Im2ColOp i) { return lowerIm2Col(i); })
      .Case([&](dg::ResizeOp r) { return lowerResize(r); })
      .Case([&](dg::MatMulOp) { return lowerMatMul(); })
      .Case([&](dg::ConvOp c) { return lowerConv(c); })
      .Case([&](dg::BatchNormOp bn) { return lowerBatchNorm(bn); })
      .Case([&](dg::MaxPoolOp p) { return lowerPool(p, /*isMax=*/true); })
      .Case([&](dg::AvgPoolOp p) { return lowerPool(p, /*isMax=*/false); })
      .Case<dg::GlobalAvgPoolOp, dg::GlobalMaxPoolOp>([&](Operation *pool) {
        int64_t rank = cast<RankedTensorType>(operands[0].getType()).getRank();
        SmallVector<int64_t> axes =
            llvm::to_vector(llvm::seq<int64_t>(2, rank));
        return lowerReduce(axes, /*keepdims=*/true,
                           isa<dg::GlobalAvgPoolOp>(pool) ? "mean" : "max");
      })
      .Case<dg::ReduceSumOp, dg::ReduceMeanOp, dg::ReduceMaxOp, dg::ReduceMinOp,
            dg::ReduceProdOp>([&](Operation *reduce) {
        auto axes = reduce->getAttrOfType<DenseI64ArrayAttr>("axes");
        auto keep = reduce->getAttrOfType<BoolAttr>("keepdims");
        StringRef kind = llvm::TypeSwitch<Operation *, StringRef>(reduce)
                             .Case([](dg::ReduceSumOp) { return "sum"; })
                             .Case([](dg::ReduceMeanOp) { return "mean"; })
                             .Case([](dg::ReduceMaxOp) { return "max"; })
                             .Case([](dg::ReduceMinOp) { return "min"; })
                             .Default([](Operation *) { return "prod"; });
        return lowerReduce(axes ? axes.asArrayRef() : ArrayRef<int64_t>(),
                           !keep || keep.getValue(), kind);
      })
      .Case<dg::SoftmaxOp, dg::LogSoftmaxOp, dg::LayerNormOp, dg::GemmOp>(
          [&](Operation *) -> Results {
            return fail("is split into primitives by dyncc-decompose before "
                        "outlining; this form was not");
          })
      .Default([&](Operation *) -> Results {
        return fail("has no lowering to linalg");
      });
}

FailureOr<SmallVector<Value>>
dyncc::lowerDgOpToLinalg(OpBuilder &builder, Operation *op, ValueRange operands,
                         DimMaterializer &dims, DestinationFn getDestination) {
  return OpLowering(builder, op, operands, dims, getDestination).lower();
}
