//===- FuseGemmEpilogue.cpp - GEMM-level fusion ---------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Grows a fusion group from each matmul backbone along its chain of
// elementwise consumers. Legality is decided on symbolic shapes: a consumer
// joins only when its result has exactly the backbone's symbolic shape (its
// index space is the backbone's output tile space) and the other operands
// are defined before the backbone.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_FUSEGEMMEPILOGUEPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// Returns true when `consumer` can join the group of `backbone`, whose
/// current last value is `value`.
static bool canAbsorb(Operation *backbone, Value value, Operation *consumer) {
  if (!isElementwise(consumer) || consumer->getNumResults() != 1 ||
      consumer->getBlock() != backbone->getBlock())
    return false;
  // Same symbolic index space as the backbone's output.
  std::optional<SmallVector<DimExpr>> outShape =
      sym::getSymbolicShape(backbone->getResult(0).getType());
  std::optional<SmallVector<DimExpr>> consumerShape =
      sym::getSymbolicShape(consumer->getResult(0).getType());
  if (!outShape || !consumerShape || *outShape != *consumerShape)
    return false;
  // Side operands must be available before the backbone.
  for (Value operand : consumer->getOperands()) {
    if (operand == value)
      continue;
    Operation *def = operand.getDefiningOp();
    if (def && def->getBlock() == backbone->getBlock() &&
        !def->isBeforeInBlock(backbone))
      return false;
  }
  return true;
}

struct FuseGemmEpilogue final
    : ::dyncc::dg::impl::FuseGemmEpiloguePassBase<FuseGemmEpilogue> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<SmallVector<Operation *>> groups;
    getOperation().walk([&](MatMulOp matmul) {
      if (matmul->getParentOfType<FusionOp>())
        return;
      SmallVector<Operation *> group{matmul};
      Value value = matmul.getResult();
      while (group.size() < maxGroupSize && value.hasOneUse()) {
        Operation *user = *value.getUsers().begin();
        if (!canAbsorb(matmul, value, user))
          break;
        group.push_back(user);
        value = user->getResult(0);
      }
      groups.push_back(std::move(group));
    });

    IRRewriter rewriter(&getContext());
    for (ArrayRef<Operation *> group : groups)
      createFusionGroup(rewriter, group, FusionKind::Gemm, group.front());
  }
};

} // namespace
