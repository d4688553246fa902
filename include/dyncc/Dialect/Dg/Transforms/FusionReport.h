//===- FusionReport.h - What fusion saves, per group -----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_TRANSFORMS_FUSIONREPORT_H
#define DYNCC_DIALECT_DG_TRANSFORMS_FUSIONREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace dyncc::dg {

/// Prints, for each `dg.fusion` of `module`'s graph functions in program
/// order: its kind, its ops, its results' symbolic shapes, and the
/// device-memory bytes it moves (each input read once, each result written
/// once) against what its ops move unfused (each op reads its operands and
/// writes its results), both as symbolic expressions; then the totals.
void printFusionReport(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace dyncc::dg

#endif // DYNCC_DIALECT_DG_TRANSFORMS_FUSIONREPORT_H
