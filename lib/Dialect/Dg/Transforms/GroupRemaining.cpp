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
      if (isFusionCandidate(&op))
        ops.push_back(&op);

    IRRewriter rewriter(&getContext());
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
