//===- GroupRemaining.cpp - Single-op groups for what is left -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_GROUPREMAININGPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

struct GroupRemaining final : ::dyncc::dg::impl::GroupRemainingPassBase<GroupRemaining> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    for (Operation &op : getOperation().getBody().front())
      if (isa<SymbolicShapeOpInterface>(op) && !isa<ConstantOp, DimValuesOp>(op))
        ops.push_back(&op);

    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      bool gemm = isa<MatMulOp>(op);
      createFusionGroup(rewriter, {op},
                        gemm ? FusionKind::Gemm : FusionKind::Elementwise,
                        gemm ? op : nullptr);
    }
  }
};

} // namespace
