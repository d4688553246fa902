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
// so the CPU numerics CI checks are the GPU's too.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Codegen/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dyncc {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;

namespace {
struct ApproximateMath final
    : ::dyncc::impl::ApproximateMathPassBase<ApproximateMath> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateErfcPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
