//===- GroupRemaining.cpp - Single-op groups for what is left -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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
    // Shape values returned as graph outputs (Shape, Size of symbolic
    // inputs) are written by a kernel like any other output: an identity
    // cast reads them, and outlining rebuilds them from the symbols inside
    // that kernel.
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](func::ReturnOp ret) {
      for (OpOperand &operand : ret->getOpOperands()) {
        auto values = operand.get().getDefiningOp<DimValuesOp>();
        if (!values)
          continue;
        rewriter.setInsertionPoint(ret);
        operand.set(CastOp::create(rewriter, values.getLoc(),
                                   values.getType(), values.getResult()));
      }
    });

    SmallVector<Operation *> ops;
    for (Operation &op : getOperation().getBody().front())
      if (isFusionCandidate(&op))
        ops.push_back(&op);

    for (Operation *op : ops) {
      FusionKind kind = FusionKind::DataMovement;
      bool backbone = true;
      if (isa<MatMulOp>(op))
        kind = FusionKind::Gemm;
      else if (isa<ConvOp>(op))
        kind = FusionKind::Conv;
      else if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
                   ReduceProdOp, MaxPoolOp, AvgPoolOp, GlobalAvgPoolOp,
                   GlobalMaxPoolOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp>(op))
        kind = FusionKind::Reduce;
      else if (isElementwise(op))
        kind = FusionKind::Elementwise, backbone = false;
      else
        backbone = false;
      createFusionGroup(rewriter, {op}, kind,
                        backbone ? ArrayRef<Operation *>(op)
                                 : ArrayRef<Operation *>());
    }
  }
};

} // namespace
