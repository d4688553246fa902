//===- DedupKernels.cpp - Compile identical kernels once ------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Two kernels are identical when their printed forms, with the name left
// out, are: the same operations, types, attributes (tile configuration and
// divisibility facts included) and argument attributes. Locations are not
// printed, so the same group in different layers compares equal.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"

namespace dyncc::dg {
#define GEN_PASS_DEF_DEDUPKERNELSPASS
#include "dyncc/Dialect/Dg/Transforms/Passes.h.inc"
} // namespace dyncc::dg

using namespace mlir;
using namespace dyncc;
using namespace dyncc::dg;

namespace {

/// The printed form of `kernel` under a fixed name.
static std::string getNamelessText(func::FuncOp kernel) {
  StringAttr name = kernel.getSymNameAttr();
  kernel.setSymName("__dyncc_kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  kernel.setSymNameAttr(name);
  return text;
}

struct DedupKernels final
    : ::dyncc::dg::impl::DedupKernelsPassBase<DedupKernels> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<FlatSymbolRefAttr> first;
    DenseMap<StringAttr, FlatSymbolRefAttr> replacement;
    SmallVector<func::FuncOp> duplicates;
    for (auto kernel : module.getOps<func::FuncOp>()) {
      if (!kernel->hasAttr("dyncc.kernel"))
        continue;
      auto [it, inserted] =
          first.try_emplace(getNamelessText(kernel),
                            FlatSymbolRefAttr::get(kernel.getSymNameAttr()));
      if (inserted)
        continue;
      replacement[kernel.getSymNameAttr()] = it->second;
      duplicates.push_back(kernel);
    }
    if (duplicates.empty())
      return;
    module.walk([&](DispatchOp dispatch) {
      if (FlatSymbolRefAttr callee =
              replacement.lookup(dispatch.getCalleeAttr().getAttr()))
        dispatch.setCalleeAttr(callee);
    });
    for (func::FuncOp kernel : duplicates)
      kernel.erase();
  }
};

} // namespace
