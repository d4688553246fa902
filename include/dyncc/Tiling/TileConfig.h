//===- TileConfig.h - Tile configurations as data ---------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A tile configuration is plain data: the tile search produces it and code
// generation consumes it. Sizes are per parallel dimension of the kernel's
// root op (its output), outermost first. The block tile is what one GPU block
// (one CPU task) computes; the thread tile is what one thread computes, so
// threads per block = prod(blockTile / threadTile).
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_TILECONFIG_H
#define DYNCC_TILING_TILECONFIG_H

#include "dyncc/CostModel/Gemm.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>
#include <string>

namespace dyncc {

/// How a kernel whose reductions run along the rows of its output (softmax,
/// LayerNorm, a reduction over the last axis) spreads a row over threads.
enum class RowReduction {
  /// Each thread computes its output elements alone, reducing every row
  /// it needs itself (the tile levels of every other kind).
  Thread,
  /// One warp per row: the 32 lanes (x) take the row's elements cyclically
  /// and combine their partial results with warp shuffles; the block's
  /// other threads (y, z) are rows.
  Warp,
  /// One block per row: all its threads (x) take the row's elements
  /// cyclically; partial results combine by warp shuffles, then across
  /// warps through shared memory.
  Block,
  /// A group of x lanes per output of a column reduction (a power of two,
  /// 2 to 1024: the innermost block tile over the thread tile, one element
  /// each): the lanes take the reduced axis' elements cyclically and
  /// combine with shuffles within the group; the block's other threads (y,
  /// z) are outputs, so a warp reads 32 / lanes neighbouring outputs at
  /// each of its lanes' positions along the axis. More lanes than a warp
  /// take one output per block and combine across warps through shared
  /// memory, as `Block` does.
  Column,
};

/// The name of `reduction` in text and attributes: thread, warp, block,
/// column.
llvm::StringRef stringify(RowReduction reduction);
/// Inverts stringify; nullopt for any other name.
std::optional<RowReduction> symbolizeRowReduction(llvm::StringRef name);

struct TileConfig {
  /// Elements of the output per block, per output dimension.
  llvm::SmallVector<int64_t, 4> blockTile;
  /// Elements of the output per thread, per output dimension.
  llvm::SmallVector<int64_t, 4> threadTile;
  /// Iterations of every reduction loop per step of the sequential
  /// reduction loops inside a thread's tile (0 keeps reductions whole).
  /// With `kSteps`, the largest of them.
  int64_t kStep = 0;
  /// Iterations per step of each reduction loop, outermost first, where
  /// they differ (`k 3x1x7`: a conv's 3 input channels by one filter row by
  /// its 7 columns); empty: `kStep` for every one. An op whose reduction
  /// loops are not as many takes `kStep` for each. SIMT products only.
  llvm::SmallVector<int64_t, 3> kSteps;
  /// Elements of the output per warp, per output dimension; empty when the
  /// block's product is tiled to threads (SIMT). Each divides the block
  /// tile, and the warps fill the block: 32 x warps = threads.
  llvm::SmallVector<int64_t, 4> warpTile;
  /// The instruction tile (M, N, K) of the warps' product, an mma.sync
  /// shape (16x8x16 for f16/bf16 with f32 accumulation); empty for SIMT.
  /// Needs a warp tile that is a multiple of it and a k-step that is a
  /// multiple of its K.
  llvm::SmallVector<int64_t, 3> mma;
  /// Shared-memory buffers per operand of the k-step pipeline: with more
  /// than one, the copies of the next `stages - 1` k-steps (cp.async on the
  /// GPU) are in flight while a step computes. Needs an instruction tile;
  /// 1 (the default) copies and computes each step in turn.
  int64_t stages = 1;
  /// For row reductions: `Warp` and `Block` make the innermost dimension of
  /// the block and thread tiles the row's step (threads x elements per
  /// thread and step; x is 32 threads for `Warp`), the rest rows per block
  /// (1 for `Block`). `Column` does the same for a column reduction's
  /// reduced axis (its lanes' step, 2 to 1024 threads of one element), the
  /// rest outputs per block. Kernels whose reductions are not along rows
  /// (along columns, for `Column`) keep the tile levels.
  RowReduction reduction = RowReduction::Thread;
  /// GEMMs: parts of K computed by separate blocks (split-K), each into
  /// its own slice of an f32 workspace, which a second kernel sums before
  /// the epilogue (dyncc-split-k). 1: K is walked whole by each block.
  /// Needs a k-step that divides each part.
  int64_t splitK = 1;

  /// The name of the attribute holding the config on a kernel function.
  static constexpr llvm::StringLiteral getAttrName() {
    return "dyncc.tile_config";
  }

  /// The default configuration for a kernel of `kind` whose output has
  /// `rank` dimensions: where the tile search will stand.
  /// With `tensorCore` (a GEMM of f16/bf16 operands accumulating in f32),
  /// the default has a warp tile and an mma.sync instruction tile.
  static TileConfig getDefault(llvm::StringRef kind, int64_t rank,
                               bool tensorCore = false);

  /// Threads per block along each output dimension.
  llvm::SmallVector<int64_t, 4> getThreadsPerDim() const;

  /// The k-step of each of an op's `numReductions` reduction loops,
  /// outermost first: `kSteps` where it has as many, else `kStep` for each.
  llvm::SmallVector<int64_t, 3> getKSteps(size_t numReductions) const;

  /// The launch's threads along x, y and z: the innermost three tile
  /// dimensions, x innermost (1 where the tile has fewer dimensions).
  std::array<int64_t, 3> getBlockDims() const;

  /// Checks the invariants (same rank, thread tile divides block tile,
  /// positive sizes, at most 1024 threads; warp and instruction tiles as
  /// described above); returns an error message or "".
  std::string verify() const;

  mlir::DictionaryAttr toAttr(mlir::MLIRContext *context) const;
  static mlir::FailureOr<TileConfig> fromAttr(mlir::DictionaryAttr attr);

  /// One-line description, e.g. `block 32x64 thread 4x4 k 16`,
  /// `block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 3`, or
  /// `block 4x32 thread 1x1 k 0 reduce warp`, `block 4x64 thread 2x4 k 32
  /// split_k 4`.
  std::string str() const;

  /// Parses the form `str` prints (`block 32x64 thread 4x4 k 16`; `k N` may
  /// be left out for 0, and `k AxBxC` gives each reduction loop its own;
  /// `warp`, `mma`, `stages`, `reduce thread|warp|block|column` and
  /// `split_k N` are optional). Returns nullopt and sets `error` on bad text or
  /// on a configuration `verify` rejects.
  static std::optional<TileConfig> parse(llvm::StringRef text,
                                         std::string &error);

  /// This configuration for an output of `rank` dimensions: sizes given for
  /// fewer dimensions apply to the innermost ones (outer ones get 1), sizes
  /// for more dimensions keep the innermost `rank`. A `Column` config keeps
  /// one size more, its lanes (a mean into [D] has outputs per block).
  TileConfig fitToRank(int64_t rank) const;
};

/// The static-K rule of tensor cores (dyncc/CostModel/Gemm.h), which code
/// generation, the default config and the tile search follow.
using cost::tensorCoresTakeStaticK;

/// The attribute on a tiled kernel holding its launch grid: per axis (x, y,
/// z) the block counts of its roots, whose maximum is the grid, as DimExpr
/// text over the kernel's arguments named by getGridArgName.
constexpr llvm::StringLiteral getGridAttrName() { return "dyncc.grid"; }

/// On a split-K variant's function (dyncc-split-k): `{part = @..., sum =
/// @..., parts = S}`, the two kernels that compute it.
constexpr llvm::StringLiteral getSplitKAttrName() { return "dyncc.split_k"; }

/// The attribute on a GPU kernel whose shared buffers are views of dynamic
/// shared memory (more than the 48 KB of static shared memory): the bytes
/// per block the launch passes, which the run-time opts in to.
constexpr llvm::StringLiteral getDynamicSharedBytesAttrName() {
  return "dyncc.dynamic_shared_bytes";
}

/// The name in a grid expression of index argument `arg` of a kernel, or of
/// dimension `dim` of its tensor argument `arg`.
std::string getGridArgName(unsigned arg, std::optional<int64_t> dim);

/// Inverts getGridArgName; false if `name` is not such a name.
bool parseGridArgName(llvm::StringRef name, unsigned &arg,
                      std::optional<int64_t> &dim);

} // namespace dyncc

#endif // DYNCC_TILING_TILECONFIG_H
