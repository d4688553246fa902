//===- TileSearch.h - GEMM variants chosen by the cost model ----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What dyncc-search-tiles leaves on the graph, and the step after ptxas
// that revisits it with the kernels' real resources.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_TILESEARCH_H
#define DYNCC_TILING_TILESEARCH_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace dyncc {

/// The attribute on a `dg.dispatch` of a searched GEMM kernel: its
/// variants and the table that picks one (see dyncc-search-tiles).
constexpr llvm::StringLiteral getVariantSelectAttrName() {
  return "dyncc.variant_select";
}

/// What ptxas reported of one compiled kernel, for the device searched.
struct CompiledKernel {
  int64_t registers = 0;
  /// Static shared memory per block (the kernel's dynamic bytes are added
  /// from its own attribute).
  int64_t sharedBytes = 0;
  /// Bytes spilled to local memory (stores plus loads).
  int64_t spillBytes = 0;
};

/// After ptxas: for every dispatch with a `dyncc.variant_select`, drops the
/// variants whose kernels spill, then partitions the range again over the
/// rest with their real register counts (which set the occupancy), and
/// rewrites the selection (recording `dropped` and `registers =
/// "ptxas"`). Kernels `compiled` knows nothing of keep their estimates. A
/// dispatch whose variants all spill keeps them all, and `note` says so.
mlir::LogicalResult refineVariantSelections(
    mlir::ModuleOp graph,
    llvm::function_ref<std::optional<CompiledKernel>(llvm::StringRef)>
        compiled,
    llvm::function_ref<void(const std::string &)> note);

} // namespace dyncc

#endif // DYNCC_TILING_TILESEARCH_H
