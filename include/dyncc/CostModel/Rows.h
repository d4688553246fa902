//===- Rows.h - Row-wise kernels: candidates and their time -----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The memory-bound kinds of the tile search: elementwise kernels over a
// [rows x length] view, and row reductions (softmax, LayerNorm, a reduction
// over the last axis) by a warp or a block per row. Candidates are the
// strategies of code generation (TileConfig's `reduce warp|block`) with
// vector widths of up to 16 bytes; the model is the bytes' time at the
// block's share of bandwidth, or the loads' latency where too few are in
// flight, in waves, with a launch. Pure C++.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_ROWS_H
#define DYNCC_COSTMODEL_ROWS_H

#include "dyncc/CostModel/Device.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dyncc::cost {

/// `rows` rows of `length` elements of `elementBytes`; each element moves
/// `bytesPerElement` to or from memory (reads plus writes).
struct RowProblem {
  /// Independent [rows x length] slices: the product of the outer
  /// dimensions.
  int64_t batch = 1;
  int64_t rows = 1;
  int64_t length = 1;
  /// The extent of the outer dimension next to the rows (a factor of
  /// `batch`; 1 where there is none), which an elementwise block may span
  /// (`RowTile::planesPerBlock`); code generation tiles the others by 1.
  int64_t planes = 1;
  int64_t elementBytes = 4;
  int64_t bytesPerElement = 8;
  /// A reduction along the row (else elementwise).
  bool reduction = false;
  /// The kernel reads element by element (a gather, a transpose: code
  /// generation does not vectorize them): a thread's `vector` elements are
  /// that many loads, and a warp's lanes are `vector` elements apart.
  bool scalarAccess = false;
  /// A column reduction (a softmax over the channels of [N, C, H, W], a
  /// mean over a sequence's positions): each output folds this many
  /// elements along an outer axis, which its thread walks, the warp's
  /// lanes side by side along the row; 0 for none. The space above is the
  /// outputs' without that axis, and `bytesPerElement` counts per element
  /// of the whole space (an output of `columnLength` elements moves that
  /// many times as much).
  int64_t columnLength = 0;
};

enum class RowStrategy {
  /// Elementwise: a block is `planesPerBlock` slices of `rowsPerBlock`
  /// rows of `lanes x vector` elements, one vector per thread.
  Elementwise,
  /// A warp per row: 32 lanes walk the row, `rowsPerBlock` warps a block.
  Warp,
  /// A block per row: `lanes` threads (whole warps) walk the row, then
  /// combine across warps through shared memory.
  Block,
  /// A column reduction split over lanes: `lanes` threads along x (a power
  /// of two, 2 to 32, or a block of 64 to 1024 on one output, combining
  /// across warps through shared memory) per output take its reduced
  /// axis' elements cyclically and combine with shuffles within their group;
  /// `rowsPerBlock` outputs along the result's last dimension over y, so a
  /// warp's lanes read 32 / `lanes` neighbouring outputs at `lanes`
  /// positions of the axis. For a long column over few outputs (a mean
  /// over 512 positions at batch 1: 768 outputs), which a thread per output
  /// walks alone.
  Column,
};

struct RowTile {
  RowStrategy strategy = RowStrategy::Elementwise;
  int64_t rowsPerBlock = 1;
  /// Threads along the row.
  int64_t lanes = 32;
  /// Elements per thread and access.
  int64_t vector = 1;
  /// Slices of the outer dimension next to the rows a block takes
  /// (elementwise only): what fills a block where rows are short and few
  /// (a 14 x 14 image's planes).
  int64_t planesPerBlock = 1;
  /// ptxas' registers per thread, once known (0: an estimate of 32).
  int64_t registers = 0;
  /// A column reduction whose result spans the reduced axis (a softmax
  /// over channels): the block and thread tiles take that axis whole, a
  /// size of `columnSize` (its extent or bound) at dimension `columnPlace`
  /// from the result's end (2 or more); each thread folds its columns'
  /// statistics once and writes them all. 0: none (the rows and length are
  /// the result's last two dimensions).
  int64_t columnSize = 0;
  int64_t columnPlace = 0;

  int64_t threads() const { return planesPerBlock * rowsPerBlock * lanes; }
  /// The tile config text (dyncc/Tiling/TileConfig.h).
  std::string str() const;
};

inline bool operator==(const RowTile &a, const RowTile &b) {
  return a.strategy == b.strategy && a.rowsPerBlock == b.rowsPerBlock &&
         a.lanes == b.lanes && a.vector == b.vector &&
         a.planesPerBlock == b.planesPerBlock && a.columnSize == b.columnSize &&
         a.columnPlace == b.columnPlace;
}

/// The most bytes a thread's tile holds of a column taken whole
/// (`RowTile::columnSize` x `vector` elements, each counted as 4 bytes: an
/// f16 kernel's body widens them). Code generation gives each producer fused
/// into the thread tile a temporary of that size, 65536 bytes a thread in
/// all at most (a norm written out fuses five); beyond, a column reduction
/// keeps the fixed tiles.
constexpr int64_t kMaxColumnTileBytes = 8192;

/// The row tile of tile config text (`RowTile::str`'s form, with outer
/// sizes of 1 for a higher rank, and a column taken whole: a dimension
/// before the last whose block and thread sizes are equal and above 1),
/// or nullopt for a config that is not one.
std::optional<RowTile> parseRowTile(const std::string &text);

/// Why `tile` cannot run on `device` for elements of `elementBytes`
/// (threads, whole warps for the row strategies, vectors of at most 16
/// bytes), or nullopt.
std::optional<std::string> checkConstraints(const RowTile &tile,
                                            int64_t elementBytes,
                                            const Device &device);

/// Every valid tile of the elementwise strategy, or of the two row
/// reduction strategies. Elementwise tiles of at most 32 lanes (short
/// rows) also take 16 rows and several planes a block.
std::vector<RowTile> enumerateRowTiles(bool reduction, int64_t elementBytes,
                                       const Device &device);

/// The tiles of a column reduction: elementwise tiles of one plane over its
/// outputs without the reduced axis, each thread walking that axis; where
/// the result spans it (`columnPlace` >= 2), taking it whole at that place
/// with `columnSize` elements (its extent or bound). With `lanes` (code
/// generation can split the axis: RowProblemExprs::columnLanes), also the
/// `Column` strategy's tiles: 2 to 32 lanes an output, 32 to 256 threads,
/// and blocks of 64 to 1024 lanes on one output (a spanning result's
/// lanes then take its channels, not the whole column).
std::vector<RowTile> enumerateColumnTiles(int64_t elementBytes,
                                          const Device &device,
                                          int64_t columnSize,
                                          int64_t columnPlace,
                                          bool lanes = false);

struct RowPrediction {
  double seconds = 0;
  int64_t blocks = 0;
  int64_t blocksPerSm = 0;
  int64_t waves = 0;
  /// "dram", "latency" or "launch".
  const char *bound = "";
};

RowPrediction predictRows(const RowTile &tile, const RowProblem &problem,
                          const Device &device);

/// The sectors a warp's access of `tile` touches over those its useful
/// bytes fill (at least 1): rows shorter than a 32-byte sector, and under
/// scalar access lanes `vector` elements apart, each load spreading a
/// warp's 32 elements over `vector` times the sectors. A `Column` tile's
/// warp reads 32 / `lanes` neighbouring outputs at each of `lanes`
/// positions of the axis.
double getSectorInflation(const RowTile &tile, const RowProblem &problem);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_ROWS_H
