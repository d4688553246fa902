//===- ContractFloatOps.cpp - Allow fused multiply-add in GPU kernels -----===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Without a `contract` fast-math flag LLVM's NVPTX backend keeps every
// `a * b + c` a `mul.rn` and an `add.rn`: two instructions and two roundings
// where the hardware has one fused `fma.rn` at the same throughput as either.
// A GEMM's inner loop is nothing but those pairs. This pass marks the float
// multiplies, adds and subtracts of GPU kernels contractible, as cuBLAS and
// nvcc (`-fmad=true`, its default) do. The host CPU target keeps separate
// roundings; its results differ from the GPU's by the rounding of the
// intermediate product, well within every tolerance dyncc checks.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Codegen/Passes.h"

namespace dyncc {
#define GEN_PASS_DEF_CONTRACTFLOATOPSPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;

namespace {
struct ContractFloatOps final
    : ::dyncc::impl::ContractFloatOpsPassBase<ContractFloatOps> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      if (!isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(op))
        return;
      auto fastmath = cast<arith::ArithFastMathInterface>(op);
      arith::FastMathFlags flags = fastmath.getFastMathFlagsAttr().getValue() |
                                   arith::FastMathFlags::contract;
      op->setAttr(fastmath.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(op->getContext(), flags));
    });
  }
};
} // namespace
