//===- FusionUtils.h - Building fusion groups -------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_TRANSFORMS_FUSIONUTILS_H
#define DYNCC_DIALECT_DG_TRANSFORMS_FUSIONUTILS_H

#include "dyncc/Dialect/Dg/IR/Dg.h"

namespace dyncc::dg {

/// Returns true for the ops the fusion passes treat as elementwise.
bool isElementwise(mlir::Operation *op);

/// Moves `ops` (in one block, in program order) into a new `dg.fusion` of
/// `kind` placed at the last op. Values used outside the group become its
/// results. `backbone`, when given, is marked `dg.backbone`.
FusionOp createFusionGroup(mlir::RewriterBase &rewriter,
                           llvm::ArrayRef<mlir::Operation *> ops,
                           FusionKind kind, mlir::Operation *backbone);

} // namespace dyncc::dg

#endif // DYNCC_DIALECT_DG_TRANSFORMS_FUSIONUTILS_H
