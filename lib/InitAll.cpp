//===- InitAll.cpp - Register dyncc's dialects and passes -----------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/InitAll.h"

#include "dyncc/Codegen/Passes.h"
#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "dyncc/Tiling/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void dyncc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<dyncc::sym::SymDialect, dyncc::dg::DgDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void dyncc::registerAllPasses() {
  mlir::registerAllPasses();
  dyncc::dg::registerDgPasses();
  dyncc::registerCodegenPasses();
  dyncc::registerTilingPasses();
}
