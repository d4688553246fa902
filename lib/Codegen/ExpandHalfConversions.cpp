//===- ExpandHalfConversions.cpp - f16 <-> f32 without libcalls -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Host kernels may call libc and libm only; LLVM turns f16 conversions into
// libgcc/compiler-rt calls on x86-64 without F16C. The conversions here work
// on the bits instead. Narrowing follows F. Giesen's round-to-nearest-even
// float_to_half: a subnormal result comes from adding a magic constant in
// f32 (the FPU rounds), a normal one from rounding the mantissa by hand.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dyncc {
#define GEN_PASS_DEF_EXPANDHALFCONVERSIONSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;

namespace {

/// Builder shorthand for i32 and i16 bit arithmetic, on scalars or, for
/// the conversion of a vector (a vectorized elementwise tile), on vectors
/// of `shape` elementwise.
struct Bits {
  OpBuilder &b;
  Location loc;
  /// The vector shape, empty for scalars.
  ArrayRef<int64_t> shape;
  /// `scalar`, or a vector of it of `shape`.
  Type type(Type scalar) {
    return shape.empty() ? scalar : VectorType::get(shape, scalar);
  }
  Value constant(Type scalar, TypedAttr value) {
    if (shape.empty())
      return arith::ConstantOp::create(b, loc, value);
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(cast<ShapedType>(type(scalar)), value));
  }
  Value c32(int64_t v) {
    return constant(b.getI32Type(), b.getI32IntegerAttr(v));
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value bitAnd(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value bitOr(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value shl(Value x, int64_t s) {
    return arith::ShLIOp::create(b, loc, x, c32(s));
  }
  Value shr(Value x, int64_t s) {
    return arith::ShRUIOp::create(b, loc, x, c32(s));
  }
};

/// f16 -> f32, exactly.
struct ExpandExtF final : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn()).isF16() ||
        !getElementTypeOrSelf(op.getType()).isF32())
      return failure();
    Location loc = op.getLoc();
    auto vector = dyn_cast<VectorType>(op.getType());
    Bits k{rewriter, loc, vector ? vector.getShape() : ArrayRef<int64_t>()};
    using P = arith::CmpIPredicate;
    Value h16 = arith::BitcastOp::create(
        rewriter, loc, k.type(rewriter.getI16Type()), op.getIn());
    Value h = arith::ExtUIOp::create(rewriter, loc,
                                     k.type(rewriter.getI32Type()), h16);
    Value sign = k.shl(k.bitAnd(h, k.c32(0x8000)), 16);
    Value exp = k.bitAnd(k.shr(h, 10), k.c32(0x1f));
    Value mant = k.bitAnd(h, k.c32(0x3ff));
    // Normal: rebias the exponent (127 - 15 = 112); Inf/NaN: all ones.
    Value normal = k.bitOr(k.shl(k.add(exp, k.c32(112)), 23), k.shl(mant, 13));
    Value special = k.bitOr(k.c32(0x7f800000), k.shl(mant, 13));
    Value bits = k.select(k.cmp(P::eq, exp, k.c32(31)), special, normal);
    // Zero and subnormals: mant * 2^-24, exact in f32.
    Value tiny = arith::MulFOp::create(
        rewriter, loc,
        arith::UIToFPOp::create(rewriter, loc, k.type(rewriter.getF32Type()),
                                mant),
        k.constant(rewriter.getF32Type(), rewriter.getF32FloatAttr(0x1p-24f)));
    Value tinyBits = arith::BitcastOp::create(
        rewriter, loc, k.type(rewriter.getI32Type()), tiny);
    bits = k.select(k.cmp(P::eq, exp, k.c32(0)), tinyBits, bits);
    bits = k.bitOr(bits, sign);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bits);
    return success();
  }
};

/// f32 -> f16, rounded to nearest even.
struct ExpandTruncF final : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!getElementTypeOrSelf(op.getIn()).isF32() ||
        !getElementTypeOrSelf(op.getType()).isF16() || op.getRoundingmodeAttr())
      return failure();
    Location loc = op.getLoc();
    auto vector = dyn_cast<VectorType>(op.getType());
    Bits k{rewriter, loc, vector ? vector.getShape() : ArrayRef<int64_t>()};
    using P = arith::CmpIPredicate;
    Type i32 = k.type(rewriter.getI32Type());
    Type f32 = k.type(rewriter.getF32Type());
    Value u = arith::BitcastOp::create(rewriter, loc, i32, op.getIn());
    Value sign = k.shr(k.bitAnd(u, k.c32(0x80000000)), 16);
    Value a = k.bitAnd(u, k.c32(0x7fffffff));
    // |x| >= 2^16: infinity; NaN stays a quiet NaN.
    Value special = k.select(k.cmp(P::ugt, a, k.c32(0x7f800000)), k.c32(0x7e00),
                             k.c32(0x7c00));
    // |x| < 2^-14: subnormal or zero, rounded by the FPU in the addition.
    const int32_t magic = ((127 - 15) + (23 - 10) + 1) << 23;
    Value magicF = arith::BitcastOp::create(rewriter, loc, f32, k.c32(magic));
    Value af = arith::BitcastOp::create(rewriter, loc, f32, a);
    Value sum = arith::AddFOp::create(rewriter, loc, af, magicF);
    Value subnormal =
        k.sub(arith::BitcastOp::create(rewriter, loc, i32, sum), k.c32(magic));
    // Normal: rebias, round the 13 dropped bits to nearest even.
    Value odd = k.bitAnd(k.shr(a, 13), k.c32(1));
    Value normal = k.shr(
        k.add(k.add(a, k.c32((15 - 127) * (int64_t{1} << 23) + 0xfff)), odd),
        13);
    Value h = k.select(k.cmp(P::ult, a, k.c32(113 << 23)), subnormal, normal);
    h = k.select(k.cmp(P::uge, a, k.c32((127 + 16) << 23)), special, h);
    h = k.bitOr(h, sign);
    Value h16 = arith::TruncIOp::create(rewriter, loc,
                                        k.type(rewriter.getI16Type()), h);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), h16);
    return success();
  }
};

struct ExpandHalfConversions final
    : ::dyncc::impl::ExpandHalfConversionsPassBase<ExpandHalfConversions> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandExtF, ExpandTruncF>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
