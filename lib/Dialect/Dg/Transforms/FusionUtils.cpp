//===- FusionUtils.cpp - Building fusion groups ---------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/FusionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

bool dg::isElementwise(Operation *op) {
  return op->hasTrait<dg::Elementwise>();
}

FusionOp dg::createFusionGroup(RewriterBase &rewriter, ArrayRef<Operation *> ops,
                               FusionKind kind, Operation *backbone) {
  llvm::SmallPtrSet<Operation *, 8> inGroup(ops.begin(), ops.end());
  SmallVector<Value> escaping;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !inGroup.contains(user);
          }))
        escaping.push_back(result);

  Operation *last = ops.back();
  rewriter.setInsertionPoint(last);
  auto fusion = FusionOp::create(rewriter, last->getLoc(),
                                 ValueRange(escaping).getTypes(), kind);
  Block *body = rewriter.createBlock(&fusion.getBody());
  for (Operation *op : ops)
    rewriter.moveOpBefore(op, body, body->end());
  rewriter.setInsertionPointToEnd(body);
  YieldOp::create(rewriter, last->getLoc(), escaping);
  if (backbone)
    backbone->setAttr(FusionOp::getBackboneAttrName(), rewriter.getUnitAttr());
  for (auto [value, result] : llvm::zip(escaping, fusion.getResults()))
    rewriter.replaceUsesWithIf(value, result, [&](OpOperand &use) {
      return !fusion->isProperAncestor(use.getOwner());
    });
  return fusion;
}
