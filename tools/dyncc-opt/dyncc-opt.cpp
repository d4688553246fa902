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
#include "dyncc/Pipelines/Pipelines.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace {
struct NvvmLoweringOptions
    : public mlir::PassPipelineOptions<NvvmLoweringOptions> {
  ListOption<std::string> chips{*this, "chips",
                                llvm::cl::desc("GPU targets (sm_80, ...)")};
};
} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  dyncc::registerAllDialects(registry);
  dyncc::registerAllPasses();
  // The compiler's GPU back end as one pipeline, so that hand-written GPU
  // kernels (probes) take exactly the route generated ones do.
  mlir::PassPipelineRegistration<NvvmLoweringOptions>(
      "dyncc-lower-to-ptx",
      "the nvvm and ptx stages of dyncc compile: gpu.module kernels to "
      "NVVM per chip, then PTX (gpu.binary)",
      [](mlir::OpPassManager &pm, const NvvmLoweringOptions &options) {
        std::vector<std::string> chips(options.chips.begin(),
                                       options.chips.end());
        if (chips.empty())
          chips = {"sm_90"};
        (void)dyncc::buildNvvmLoweringPipeline(pm, chips);
        (void)dyncc::buildPtxPipeline(pm);
      });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dyncc optimizer driver\n", registry));
}
