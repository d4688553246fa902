//===- GraphPipelines.cpp - the graph-level stages: shapes and fusion -----===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The stages that work on the dg graph, in their own library
// (DynccGraphPipelines) so that what reaches them (the importer fuzzer) need
// not link, nor compile with its sanitizers, the tiling, code generation and
// target libraries the later stages (Pipelines.cpp) need.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/Transforms/Passes.h"
#include "dyncc/Pipelines/Pipelines.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace dyncc;

LogicalResult dyncc::buildShapePipeline(OpPassManager &pm) {
  pm.addPass(dg::createInferShapesPass());
  return success();
}

LogicalResult dyncc::buildFusionPipeline(OpPassManager &pm,
                                         const std::string &device,
                                         const std::string &im2col) {
  // Clean-up first: shape sub-graphs become symbolic contents, compound ops
  // primitives (and windowed convs a copy and a GEMM where predicted
  // faster), then CSE.
  pm.addPass(dg::createFoldShapeComputationsPass());
  pm.addNestedPass<func::FuncOp>(dg::createDecomposePass());
  dg::ConvIm2ColPassOptions im2colOptions;
  im2colOptions.device = device;
  im2colOptions.mode = im2col;
  pm.addPass(dg::createConvIm2ColPass(im2colOptions));
  pm.addPass(createCSEPass());
  // Prioritized fusion: backbones, row reductions, elementwise chains, then
  // horizontal merging of GEMMs that share their input.
  pm.addNestedPass<func::FuncOp>(dg::createFuseGemmPass());
  pm.addNestedPass<func::FuncOp>(dg::createFuseReductionsPass());
  pm.addNestedPass<func::FuncOp>(dg::createFuseElementwisePass());
  pm.addNestedPass<func::FuncOp>(dg::createFuseHorizontalPass());
  pm.addNestedPass<func::FuncOp>(dg::createGroupRemainingPass());
  return success();
}
