//===- RowReductions.h - Kernels whose reductions run along rows -*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The test code generation applies before it gives a kernel a warp or a
// block per row (TileConfig's `reduce warp|block`), shared with the tile
// search, which must know which kernels are row reductions to model them.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_ROWREDUCTIONS_H
#define DYNCC_TILING_ROWREDUCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"

namespace dyncc {

/// True when `op` has reduction loops.
bool hasReductionLoops(mlir::Operation *op);

/// The number of leading parallel loops of `op`, at most its first
/// destination's rank.
int64_t getParallelRank(mlir::Operation *op);

/// The op of a single-result reduction's body that folds each element into
/// the accumulator, if it is one op with a neutral element (add, mul, max,
/// min, and, or, xor); null otherwise.
mlir::Operation *getReductionCombiner(mlir::linalg::GenericOp op);

/// The map of `n` loops to the first `n - 1`: a row reduction's result, or
/// one value per row read by an op whose last loop walks the row.
mlir::AffineMap getRowsMap(unsigned n, mlir::MLIRContext *ctx);

/// True if `v` is computed from a linalg op of its kernel (an
/// intermediate), not only from the kernel's arguments and constants (a
/// search depth of 16 ops; deeper counts as computed).
bool dependsOnLinalg(mlir::Value v, unsigned depth = 0);

/// True if `op` reduces along rows: a generic whose only reduction loop is
/// its last, writing the other loops in order, with a combiner, and whose
/// operands walk the row along their innermost dimension. With `columns`,
/// operands may walk it along any dimension (a column reduction whose
/// reduced loop was moved innermost, split over lanes by `reduce column`).
bool isRowReduction(mlir::Operation *op, bool columns = false);

/// True if `root`'s kernel can take a warp or a block per row, setting
/// `rowRank` to the number of `root`'s loops that are rows and `epilogue`
/// when `root` is an op of parallel loops on the reduced shape (a mean's
/// division). With `columns`, its reductions are isRowReduction's with
/// `columns` (a group of lanes per column), and its ops may read values over
/// the whole space through a permutation (the tensors keep the reduced axis
/// where the model has it). See RowReductions.cpp.
bool isRowReductionKernel(mlir::func::FuncOp func, mlir::Operation *root,
                          int64_t &rowRank, bool &epilogue,
                          bool columns = false);

} // namespace dyncc

#endif // DYNCC_TILING_ROWREDUCTIONS_H
