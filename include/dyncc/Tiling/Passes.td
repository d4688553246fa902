//===- Passes.td - Tiling passes ---------------------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_PASSES_TD
#define DYNCC_TILING_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignTileConfigPass : Pass<"dyncc-assign-tile-config", "mlir::ModuleOp"> {
  let summary = "Give every kernel function a tile configuration";
  let description = [{
    Stands where the tile search will stand: each `dyncc.kernel` function
    without a `dyncc.tile_config` gets the default configuration for its kind
    and output rank (dyncc/Tiling/TileConfig.h). Existing configurations are
    checked and kept.

    `override=KIND=CONFIG` replaces the default for one kind (`gemm`, `conv`,
    `reduce`, `elementwise`, `data_movement`), in the form TileConfig prints,
    for example `gemm=block 16x8 thread 2x2 k 5`. Sizes apply to the
    innermost output dimensions (outer ones get 1). The driver's
    `--tile-config` sets it: for testing variants the search will emit, and
    for trying a configuration by hand.
  }];
  let options = [
    ListOption<"overrides", "override", "std::string",
               "KIND=CONFIG: the configuration for kernels of KIND">
  ];
}

#endif // DYNCC_TILING_PASSES_TD
