//===- dyncc-opt.cpp - dyncc's mlir-opt -----------------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with dyncc's dialects and passes plus the upstream ones they need.
//
//===----------------------------------------------------------------------===//

#include "dyncc/InitAll.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dyncc::registerAllDialects(registry);
  dyncc::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "dyncc optimizer driver\n", registry));
}
