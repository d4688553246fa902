//===- InitAll.h - Register dyncc's dialects and passes ---------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_INITALL_H
#define DYNCC_INITALL_H

#include "mlir/IR/DialectRegistry.h"

namespace dyncc {

/// Registers dyncc's dialects and the upstream dialects, interface
/// extensions and LLVM IR translations its pipelines use.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers dyncc's passes and the upstream passes.
void registerAllPasses();

} // namespace dyncc

#endif // DYNCC_INITALL_H
