//===- ApproximateMath.cpp - Polynomial approximations in kernels ---------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Math functions with no LLVM intrinsic (erf, erfc: GELU) would become calls
// to libm on the CPU and need libdevice on the GPU. Both targets get the same
// polynomial approximation instead (upstream's, accurate to a few ulp in f32),
// so the CPU numerics CI checks are the GPU's too. A half-precision erf is
// computed in f32: approximated in f16, its fused multiply-adds would be f16
// `fma` calls, which the host lowers to libm's double `fma` and libgcc's
// half conversions.
//
// Host kernels (the `host` option, in the CPU lowering) also approximate
// exp, tanh and log, which LLVM would leave as calls to libm's expf, tanhf
// and logf: scalar, and through libm's error handling (errno) on every
// underflow. The approximations' fused multiply-adds become a multiply and
// an add LLVM may contract, since the portable x86-64-v2 build has no FMA
// instruction and would call libm's fmaf for each; the wider builds fuse
// them again.
//
// A float power by a constant small integer (`Pow(x, 3)`) is
// multiplications on both targets rather than a pow call per element.
//
// Integer powers (`math.ipowi`, ONNX Pow on integers) have no intrinsic
// either, and upstream's software version (convert-math-to-funcs) is a
// function in a `ModuleOp`, which a `gpu.module` kernel cannot call. Both
// targets get the same loop in place instead.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

namespace dyncc {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;

namespace {
/// `op` on f16 or bf16 (scalars or vectors) as the same op on f32 between an
/// extension and a truncation.
template <typename OpTy> struct ComputeHalfInF32 final : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    Type element = getElementTypeOrSelf(type);
    if (!element.isF16() && !element.isBF16())
      return failure();
    Type wide = rewriter.getF32Type();
    if (auto vector = dyn_cast<VectorType>(type))
      wide = vector.clone(wide);
    Location loc = op.getLoc();
    Value x = arith::ExtFOp::create(rewriter, loc, wide, op.getOperand());
    Value y = OpTy::create(rewriter, loc, x);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, type, y);
    return success();
  }
};

/// `math.ipowi` on scalars as exponentiation by squaring: while the
/// exponent is not 0, its low bit multiplies the result by the base, and the
/// base is squared. A negative exponent gives the integer part of 1 / a^-e:
/// 1 for a base of 1, -1 or 1 for -1 by the exponent's parity, and 0 for
/// every other base, 0 included (ONNX leaves 0 to a negative power
/// undefined; upstream's version divides by zero there).
struct ExpandIntegerPower final : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::IPowIOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isa<IntegerType>(type))
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(rewriter, loc, type, value);
    };
    Value zero = constant(0), one = constant(1), minusOne = constant(-1);
    Value base = op.getLhs(), exponent = op.getRhs();
    Value negative = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, exponent, zero);
    Value start = arith::SelectOp::create(rewriter, loc, negative, zero,
                                          exponent);
    auto loop = scf::WhileOp::create(
        rewriter, loc, TypeRange{type, type, type},
        ValueRange{one, base, start},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value more = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                             args[2], zero);
          scf::ConditionOp::create(b, l, more, args);
        },
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value bit = arith::AndIOp::create(b, l, args[2], one);
          Value odd = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                            bit, zero);
          Value times = arith::MulIOp::create(b, l, args[0], args[1]);
          Value result = arith::SelectOp::create(b, l, odd, times, args[0]);
          Value square = arith::MulIOp::create(b, l, args[1], args[1]);
          Value rest = arith::ShRUIOp::create(b, l, args[2], one);
          scf::YieldOp::create(b, l, ValueRange{result, square, rest});
        });
    // A negative exponent: 1 / a^-e truncated.
    Value odd = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(rewriter, loc, exponent, one), zero);
    Value isOne = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        base, one);
    Value isMinusOne = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq, base, minusOne);
    Value signOfMinusOne =
        arith::SelectOp::create(rewriter, loc, odd, minusOne, one);
    Value reciprocal = arith::SelectOp::create(
        rewriter, loc, isOne, one,
        arith::SelectOp::create(rewriter, loc, isMinusOne, signOfMinusOne,
                                zero));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, reciprocal,
                                                 loop.getResult(0));
    return success();
  }
};

/// `math.powf` whose exponent is a constant small integer (ONNX Pow with an
/// initializer exponent: LayerNorm's `Pow(x, 2)`, GELU's `Pow(x, 3)` in
/// GPT-2's exports) as multiplications: x^0 = 1, x^1 = x, x^2 = x * x,
/// x^3 = x^2 * x, x^4 = x^2 * x^2, and a negative exponent the reciprocal.
/// Otherwise a libm `powf` call on the host and libdevice's `__nv_powf` on
/// the GPU, per element. Up to three roundings where pow rounds once (x^-4:
/// two squarings and a division; measured 1.2e-7 relative for x^3 and
/// x^-2, 2.1e-7 for x^4 in f32), and the same special values:
/// NaN stays NaN (x^0 is 1, as pow's), infinities and signed zeros follow
/// the products (pow(-0, 3) = -0, pow(-0, -2) = +inf); where x^n overflows
/// x^-n is 0, where pow gives a subnormal (pow(1e10, -4) = 1e-40), and where
/// x^n is subnormal x^-n keeps its few bits. Half-precision
/// powers are left as they are (each product would round to 11 bits); on
/// the host, half-precision math is widened to f32 before the host run of
/// this pass, which then rewrites them in f32.
struct PowerByMultiplying final : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::PowFOp op,
                                PatternRewriter &rewriter) const override {
    Type element = getElementTypeOrSelf(op.getType());
    if (!element.isF32() && !element.isF64())
      return failure();
    Attribute attr;
    if (!matchPattern(op.getRhs(), m_Constant(&attr)))
      return failure();
    if (auto splat = dyn_cast<SplatElementsAttr>(attr))
      attr = splat.getSplatValue<Attribute>();
    auto exponent = dyn_cast<FloatAttr>(attr);
    if (!exponent)
      return failure();
    double value = exponent.getValueAsDouble();
    if (value != std::trunc(value) || std::abs(value) > 4)
      return failure();
    int64_t n = static_cast<int64_t>(std::abs(value));
    Location loc = op.getLoc();
    Value x = op.getLhs();
    Value one = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getOneAttr(op.getType()));
    Value power = one;
    if (n >= 1)
      power = x;
    if (n >= 2) {
      Value square = arith::MulFOp::create(rewriter, loc, x, x);
      power = square;
      if (n == 3)
        power = arith::MulFOp::create(rewriter, loc, square, x);
      if (n == 4)
        power = arith::MulFOp::create(rewriter, loc, square, square);
    }
    // A negative exponent: the power's reciprocal (one rounding more; the
    // reciprocal's power would double the reciprocal's rounding at each
    // squaring).
    if (value < 0)
      power = arith::DivFOp::create(rewriter, loc, one, power);
    rewriter.replaceOp(op, power);
    return success();
  }
};

/// `math.fma` as `arith.mulf` and `arith.addf` marked `contract`: LLVM
/// fuses them where the processor has FMA and keeps two roundings where it
/// has none, instead of calling libm's correctly rounded `fmaf`.
struct ContractFma final : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    auto contract = arith::FastMathFlagsAttr::get(
        rewriter.getContext(), arith::FastMathFlags::contract);
    Value product = arith::MulFOp::create(rewriter, op.getLoc(), op.getA(),
                                          op.getB(), contract);
    rewriter.replaceOpWithNewOp<arith::AddFOp>(op, product, op.getC(),
                                               contract);
    return success();
  }
};

/// Upstream's log approximation clamps its input to the smallest normal
/// f32 (log(x) = -87.3 for every positive subnormal x, where it is down to
/// -103.3): a subnormal is scaled by 2^24 first, exactly, and 24 ln 2 taken
/// off the result. Zero, negative and NaN inputs keep their results (-inf,
/// NaN).
static void scaleSubnormalLogs(Operation *root) {
  SmallVector<math::LogOp> logs;
  root->walk([&](math::LogOp op) {
    if (getElementTypeOrSelf(op.getType()).isF32())
      logs.push_back(op);
  });
  for (math::LogOp op : logs) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type type = op.getType();
    auto constant = [&](float value) {
      return createScalarOrSplatConstant(b, loc, type, APFloat(value));
    };
    Value x = op.getOperand();
    Value subnormal =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                              constant(std::numeric_limits<float>::min()));
    Value scaled = arith::MulFOp::create(b, loc, x, constant(0x1p24f));
    Value input = arith::SelectOp::create(b, loc, subnormal, scaled, x);
    Value log = math::LogOp::create(b, loc, input);
    Value shifted = arith::SubFOp::create(
        b, loc, log, constant(static_cast<float>(24 * llvm::numbers::ln2)));
    op.replaceAllUsesWith(
        arith::SelectOp::create(b, loc, subnormal, shifted, log).getResult());
    op.erase();
  }
}

/// Upstream's erf approximation takes the sign from `x < 0`, so erf(-0) is
/// +0 where C's erf (and onnxruntime's) is -0: the result takes the input's
/// sign (`math.copysign`, bit operations on both targets; erf is odd, and
/// erf(x) is 0 only at zero).
static void keepErfSigns(Operation *root) {
  SmallVector<math::ErfOp> erfs;
  root->walk([&](math::ErfOp op) { erfs.push_back(op); });
  for (math::ErfOp op : erfs) {
    OpBuilder b(op);
    Value erf = math::ErfOp::create(b, op.getLoc(), op.getOperand());
    op.replaceAllUsesWith(
        math::CopySignOp::create(b, op.getLoc(), erf, op.getOperand())
            .getResult());
    op.erase();
  }
}

struct ApproximateMath final
    : ::dyncc::impl::ApproximateMathPassBase<ApproximateMath> {
  using Base::Base;
  void runOnOperation() override {
    keepErfSigns(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns.add<ComputeHalfInF32<math::ErfOp>, ComputeHalfInF32<math::ErfcOp>,
                 ExpandIntegerPower, PowerByMultiplying>(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateErfcPattern(patterns);
    if (host) {
      scaleSubnormalLogs(getOperation());
      // f32 only (upstream's patterns): the host pipeline widens half
      // precision math to f32 before this runs.
      populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
        return name == math::ExpOp::getOperationName() ||
               name == math::TanhOp::getOperationName() ||
               name == math::LogOp::getOperationName();
      });
      patterns.add<ContractFma>(&getContext());
    }
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
