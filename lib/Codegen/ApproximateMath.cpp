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
//===----------------------------------------------------------------------===//

#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

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

struct ApproximateMath final
    : ::dyncc::impl::ApproximateMathPassBase<ApproximateMath> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ComputeHalfInF32<math::ErfOp>, ComputeHalfInF32<math::ErfcOp>>(
        &getContext());
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateErfcPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
