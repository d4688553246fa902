//===- Pipelines.h - dyncc's pass pipelines, stage by stage -----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compile pipeline of ../../../docs/Pipeline.md as pass managers, one
// builder per stage, so the driver can stop after any stage (`--emit`) and
// `dyncc-opt` users can reproduce a stage alone.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_PIPELINES_PIPELINES_H
#define DYNCC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace dyncc {

/// A named stage of `dyncc compile`, in pipeline order.
struct StageInfo {
  const char *name;
  const char *description;
};

/// The stages `--emit` accepts.
llvm::ArrayRef<StageInfo> getCompileStages();

/// Graph module: symbolic shape propagation.
mlir::LogicalResult buildShapePipeline(mlir::OpPassManager &pm);
/// Graph module: clean-up, windowed convs as im2col and a GEMM where the
/// cost model predicts that faster on `device` (`im2col`: auto, always,
/// never; dyncc-conv-im2col), then prioritized fusion into `dg.fusion`
/// groups.
mlir::LogicalResult buildFusionPipeline(mlir::OpPassManager &pm,
                                        const std::string &device = "h100",
                                        const std::string &im2col = "auto");
/// Graph module: outline groups to kernel functions, give them tile configs
/// (the defaults, or `tileConfigs` entries `KIND=CONFIG` for their kinds).
mlir::LogicalResult
buildOutlinePipeline(mlir::OpPassManager &pm,
                     llvm::ArrayRef<std::string> tileConfigs = {});
/// Graph module: the tile search, cloning each GEMM and row-wise kernel per
/// variant chosen for `device` (SearchTilesPass), except kernels of the
/// `givenKinds`, whose configuration the user gave; then dyncc-split-k.
/// Candidates take at most `sharedBytes` of shared memory per block (the
/// targets' budget, getSharedBytesBudget; 0: the device's limit). With
/// `hostLevels` (an artifact with no GPU target: its host code's builds),
/// f32 GEMMs search the host's tiles by the host model.
mlir::LogicalResult buildSearchPipeline(
    mlir::OpPassManager &pm, const std::string &device, int64_t cap,
    double targetRegret, llvm::ArrayRef<std::string> givenKinds = {},
    int64_t sharedBytes = 0, llvm::ArrayRef<std::string> hostLevels = {});
/// Kernel module: block/thread tiling with producer fusion, promoting to at
/// most `sharedBytes` of shared memory per block (getSharedBytesBudget).
mlir::LogicalResult buildTilingPipeline(mlir::OpPassManager &pm,
                                        int64_t sharedBytes);
/// Kernel module: one-shot bufferization, in place into destinations; tile
/// temporaries become static buffers, at most `sharedBytes` of them shared.
mlir::LogicalResult buildBufferizationPipeline(mlir::OpPassManager &pm,
                                               int64_t sharedBytes);
/// Kernel module: map the grid onto a GPU kernel in `gpu.module`.
mlir::LogicalResult buildGpuMappingPipeline(mlir::OpPassManager &pm);
/// GPU kernel module: lower to NVVM for each chip (LLVM dialect). A kernel
/// left with more than `sharedBytes` of shared memory per block (when
/// positive) is an error.
mlir::LogicalResult
buildNvvmLoweringPipeline(mlir::OpPassManager &pm,
                          const std::vector<std::string> &chips,
                          int64_t sharedBytes = 0);
/// NVVM module: serialize to PTX (`gpu.binary` with one object per chip).
mlir::LogicalResult buildPtxPipeline(mlir::OpPassManager &pm);
/// Kernel module: map the grid onto per-block CPU entry points.
mlir::LogicalResult buildCpuMappingPipeline(mlir::OpPassManager &pm);
/// CPU kernel module: lower to the LLVM dialect.
mlir::LogicalResult buildCpuLoweringPipeline(mlir::OpPassManager &pm);

} // namespace dyncc

#endif // DYNCC_PIPELINES_PIPELINES_H
