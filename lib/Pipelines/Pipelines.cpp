//===- Pipelines.cpp - dyncc's pass pipelines, stage by stage -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream passes are added by their registered textual names (the same
// strings a user passes to dyncc-opt to reproduce a stage); dyncc's own passes
// through their generated constructors.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Pipelines/Pipelines.h"

#include "dyncc/Codegen/Passes.h"
#include "dyncc/Dialect/Dg/Transforms/Passes.h"
#include "dyncc/Target/Ptx.h"
#include "dyncc/Target/Ptxas.h"
#include "dyncc/Tiling/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace dyncc;

static const StageInfo stages[] = {
    {"import", "the dg graph as imported from ONNX"},
    {"shapes", "after symbolic shape propagation"},
    {"fused", "after fusion: dg.fusion groups"},
    {"fusion-report", "per group: kind, ops, shapes, bytes moved vs unfused"},
    {"outlined",
     "groups outlined to linalg kernel functions, with tile configs"},
    {"searched", "GEMM and row-wise kernels cloned per variant the tile "
                 "search chose, each dispatch with its variant table"},
    {"tiled", "kernels tiled to blocks and threads, producers fused"},
    {"bufferized", "kernels bufferized in place"},
    {"gpu", "kernels mapped onto the GPU grid (gpu.module)"},
    {"nvvm", "GPU kernels lowered to NVVM/LLVM dialect"},
    {"ptx", "the PTX text, every GPU target"},
    {"cpu", "kernels mapped to per-block CPU entry points"},
    {"llvm", "CPU kernels lowered to the LLVM dialect"},
    {"plan", "the artifact manifest: host plan, buffers, kernels (JSON)"},
};

ArrayRef<StageInfo> dyncc::getCompileStages() { return stages; }

static LogicalResult addPipeline(OpPassManager &pm, StringRef text) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(text, pm, os))) {
    llvm::errs() << "internal error: bad pass pipeline '" << text
                 << "': " << errors << "\n";
    return failure();
  }
  return success();
}

// buildShapePipeline and buildFusionPipeline: Graph/GraphPipelines.cpp.

LogicalResult dyncc::buildOutlinePipeline(OpPassManager &pm,
                                          ArrayRef<std::string> tileConfigs) {
  pm.addPass(dg::createOutlineGroupsPass());
  pm.addPass(createPointwiseConvAsGemmPass());
  pm.addPass(createUnfoldGemmRowsPass());
  pm.addPass(createFoldGemmBatchPass());
  pm.addPass(createCollapseRowDimsPass());
  AssignTileConfigPassOptions options;
  options.overrides.assign(tileConfigs.begin(), tileConfigs.end());
  pm.addPass(createAssignTileConfigPass(options));
  // Configs are part of what makes kernels identical: merge after them.
  pm.addPass(dg::createDedupKernelsPass());
  return success();
}

LogicalResult dyncc::buildSearchPipeline(OpPassManager &pm,
                                         const std::string &device, int64_t cap,
                                         double targetRegret,
                                         ArrayRef<std::string> givenKinds,
                                         int64_t sharedBytes,
                                         ArrayRef<std::string> hostLevels) {
  SearchTilesPassOptions options;
  options.device = device;
  options.hostLevels = llvm::to_vector(hostLevels);
  options.cap = cap;
  options.targetRegret = targetRegret;
  options.givenKinds = llvm::to_vector(givenKinds);
  options.sharedBytes = sharedBytes;
  pm.addPass(createSearchTilesPass(options));
  pm.addPass(createSplitKPass());
  return success();
}

LogicalResult dyncc::buildTilingPipeline(OpPassManager &pm,
                                         int64_t sharedBytes) {
  TileAndFusePassOptions options;
  options.sharedBytes = sharedBytes;
  pm.addNestedPass<func::FuncOp>(createTileAndFusePass(options));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return success();
}

LogicalResult dyncc::buildBufferizationPipeline(OpPassManager &pm,
                                                int64_t sharedBytes) {
  // Function boundaries with identity layouts: kernels take plain memrefs,
  // whose descriptors the run-time builds. CSE then canonicalize again: CSE
  // makes the self-copies of in-place results visible, and they fold away.
  // Tile temporaries then become static local buffers.
  if (failed(addPipeline(
          pm, "one-shot-bufferize{bufferize-function-boundaries "
              "function-boundary-type-conversion=identity-layout-map},"
              "drop-equivalent-buffer-results,canonicalize,cse,canonicalize")))
    return failure();
  BoundLocalBuffersPassOptions options;
  options.sharedBytes = sharedBytes;
  pm.addNestedPass<func::FuncOp>(createBoundLocalBuffersPass(options));
  pm.addPass(createApproximateMathPass());
  return success();
}

LogicalResult dyncc::buildGpuMappingPipeline(OpPassManager &pm) {
  MapForallToGridPassOptions options;
  options.target = "gpu";
  PipelineKStepsPassOptions pipelining;
  pipelining.target = "gpu";
  pm.addNestedPass<func::FuncOp>(createPipelineKStepsPass(pipelining));
  pm.addNestedPass<func::FuncOp>(createLowerVectorTransfersPass());
  pm.addNestedPass<func::FuncOp>(createShuffleLaneMergesPass());
  pm.addPass(createMapForallToGridPass(options));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return success();
}

LogicalResult
dyncc::buildNvvmLoweringPipeline(OpPassManager &pm,
                                 const std::vector<std::string> &chips,
                                 int64_t sharedBytes) {
  if (failed(addPipeline(
          pm, "gpu.module(gpu.func(dyncc-private-accumulators,"
              "dyncc-vectorize-mma,dyncc-overlap-shared-accumulators{"
              "shared-bytes=" +
                  std::to_string(sharedBytes) +
                  "},convert-linalg-to-loops,"
                  "dyncc-contract-float-ops),lower-affine,"
                  "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
                  "canonicalize,cse)")))
    return failure();
  for (const std::string &chip : chips)
    if (failed(addPipeline(
            pm, "nvvm-attach-target{module=dyncc_kernels chip=" + chip +
                    " features=" + getNvvmFeatures(chip) + " O=3}")))
      return failure();
  // nvgpu (cp.async, ldmatrix, mma.sync) to NVVM first, then the rest.
  return addPipeline(pm, "gpu.module(convert-nvgpu-to-nvvm,"
                         "convert-gpu-to-nvvm,canonicalize,cse),"
                         "reconcile-unrealized-casts");
}

LogicalResult dyncc::buildPtxPipeline(OpPassManager &pm) {
  // Math functions (__nv_expf, ...) come from the toolkit's libdevice. Name
  // the toolkit rather than let MLIR look at the environment on its own;
  // without one, collectPtx reports the calls left unresolved.
  std::string options = "format=isa";
  if (std::optional<std::string> toolkit = findCudaToolkit())
    options += " toolkit=" + *toolkit;
  return addPipeline(pm, "gpu-module-to-binary{" + options + "}");
}

LogicalResult dyncc::buildCpuMappingPipeline(OpPassManager &pm) {
  MapForallToGridPassOptions options;
  options.target = "cpu";
  PipelineKStepsPassOptions pipelining;
  pipelining.target = "cpu";
  pm.addNestedPass<func::FuncOp>(createPipelineKStepsPass(pipelining));
  // A cache line per copy iteration where a GPU thread's cp.async moves
  // 16 bytes, and no masks where a tile's extents are static.
  pm.addNestedPass<func::FuncOp>(createWidenChunkedCopiesPass());
  // What cp.async stages do for the GPU: the next k-step's copies on the way.
  pm.addNestedPass<func::FuncOp>(createPrefetchKStepsPass());
  pm.addNestedPass<func::FuncOp>(createLowerVectorTransfersPass());
  pm.addPass(createMapForallToGridPass(options));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return success();
}

LogicalResult dyncc::buildCpuLoweringPipeline(OpPassManager &pm) {
  return addPipeline(
      pm, "func.func(dyncc-vectorize-mma{target=cpu},convert-linalg-to-loops,"
          "convert-vector-to-scf{full-unroll=true target-rank=1}),"
          "lower-affine,"
          "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
          "math-extend-to-supported-types{target-type=f32},"
          // exp, tanh and log inline rather than libm calls, fma
          // contractible.
          "dyncc-approximate-math{host=true},"
          "arith-emulate-unsupported-floats{source-types=f16,bf16 "
          "target-type=f32},arith-expand{include-bf16=true},"
          "dyncc-expand-half-conversions,"
          "canonicalize,cse,convert-vector-to-llvm,convert-ub-to-llvm,"
          // math.ipowi was expanded in place (dyncc-approximate-math, for
          // both targets); a math.fpowi would become a square-and-multiply
          // function here.
          "convert-math-to-funcs,convert-math-to-llvm,"
          "finalize-memref-to-llvm,"
          "convert-arith-to-llvm,convert-index-to-llvm,convert-func-to-llvm,"
          "convert-cf-to-llvm,reconcile-unrealized-casts");
}
