//===- Rows.cpp - Row-wise kernels: candidates and their time -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Per block: `steps` accesses per thread (1 for elementwise, the row over
// the lanes' vectors for reductions), each a load whose latency the SM's
// resident blocks wait out together; so a step of a wave takes the longer
// of its bytes at the block's share of bandwidth and one latency (a
// gather's longer chain for kernels that read element by element), and
// each block a fixed overhead (its launch, indices, predicates). An SM starts
// and retires its blocks one after another, so a wave takes at least its blocks
// per SM times the issue cost of one (what bounds many tiny blocks). A warp's
// reduction adds five shuffle rounds; a block's also a barrier and a pass
// through shared memory. Then waves, a DRAM floor of all the bytes, and a
// launch. A column reduction's thread takes a step per element of its
// reduced axis; split over a group of lanes (`reduce column`), a step per
// `lanes` elements, then log2(lanes) shuffle rounds (a block's combination
// beyond a warp).
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Rows.h"

#include "ConfigText.h"
#include "Waves.h"

#include <algorithm>
#include <cmath>

using namespace dyncc::cost;
using namespace dyncc::cost::detail;

/// Cycles of a warp's shuffle tree (5 rounds) and of a block's combination
/// across warps (a barrier, shared memory, a second tree). Estimates.
/// Cycles a block costs beyond its accesses: its launch on the SM, index
/// arithmetic and tail predicates, and retiring. An estimate.
constexpr double kBlockOverheadCycles = 300;
/// Cycles of an SM's throughput each block takes, serialized over its
/// resident blocks: fitted on the H200 (2026-11-29), where im2col's copy ran
/// 1,032,192 blocks of 64 threads (28-112 elements each) in 623 us at any
/// size of element row: 2.55 us a wave of 32 blocks per SM, 158 cycles a
/// block at 1.98 GHz. The model without it predicted 84-126 us.
constexpr double kBlockIssueCycles = 160;
/// Cycles from a thread's start to its last store in kernels that read
/// element by element (RowProblem::scalarAccess): a gather's index
/// arithmetic (divisions by the window, clamps, selects), its dependent
/// load and the store. Fitted on the H200 (2026-11-30): im2col's copies ran
/// a wave of 2048 resident threads an SM in 2200-3300 cycles whatever the
/// tile (1 or 2 elements a thread, 256- or 512-thread blocks), so the
/// copy's time followed the threads launched, not its bytes.
constexpr double kScalarAccessLatencyCycles = 2700;
constexpr double kShuffleRoundCycles = 30;
constexpr double kWarpReduceCycles = 5 * kShuffleRoundCycles;
constexpr double kBlockReduceCycles = kWarpReduceCycles + 120;

std::string RowTile::str() const {
  // Sizes from the result's last dimension outwards.
  std::vector<int64_t> block = {lanes * vector, rowsPerBlock};
  std::vector<int64_t> thread = {vector, 1};
  if (planesPerBlock > 1) {
    block.push_back(planesPerBlock);
    thread.push_back(1);
  }
  if (columnSize > 0 && columnPlace >= 2) {
    size_t at = static_cast<size_t>(columnPlace) - 1;
    if (block.size() < at) {
      block.resize(at, 1);
      thread.resize(at, 1);
    }
    block.insert(block.begin() + at, columnSize);
    thread.insert(thread.begin() + at, columnSize);
  }
  auto join = [](const std::vector<int64_t> &sizes) {
    std::string text;
    for (auto it = sizes.rbegin(); it != sizes.rend(); ++it)
      text += (text.empty() ? "" : "x") + std::to_string(*it);
    return text;
  };
  std::string s = "block " + join(block) + " thread " + join(thread);
  if (strategy == RowStrategy::Warp)
    s += " k 64 reduce warp";
  else if (strategy == RowStrategy::Block)
    s += " k 64 reduce block";
  else if (strategy == RowStrategy::Column)
    s += " k 64 reduce column";
  return s;
}

std::optional<RowTile> dyncc::cost::parseRowTile(const std::string &text) {
  std::optional<ConfigWords> words = parseConfigWords(text);
  if (!words || words->block.empty() ||
      words->block.size() != words->thread.size() || !words->warp.empty() ||
      !words->mma.empty())
    return std::nullopt;
  std::vector<int64_t> block = words->block, thread = words->thread;
  // A column taken whole: a dimension before the last whose block and
  // thread sizes are equal and above 1 (a row's thread size is 1).
  RowTile tile;
  for (size_t i = 0; i + 1 < block.size(); ++i) {
    if (thread[i] <= 1 || thread[i] != block[i])
      continue;
    if (tile.columnSize != 0)
      return std::nullopt;
    tile.columnSize = block[i];
    tile.columnPlace = static_cast<int64_t>(block.size() - i);
  }
  if (tile.columnSize != 0) {
    size_t at = block.size() - tile.columnPlace;
    block.erase(block.begin() + at);
    thread.erase(thread.begin() + at);
  }
  size_t rank = block.size();
  // Outer sizes 1 but the planes', a thread per row's step: block P x R x
  // (lanes x vector), thread 1 x 1 x vector.
  for (size_t i = 0; i + 2 < rank; ++i)
    if ((block[i] != 1 && i + 3 != rank) || thread[i] != 1)
      return std::nullopt;
  if ((rank >= 2 && thread[rank - 2] != 1) || block.back() % thread.back())
    return std::nullopt;
  tile.rowsPerBlock = rank >= 2 ? block[rank - 2] : 1;
  tile.planesPerBlock = rank >= 3 ? block[rank - 3] : 1;
  tile.vector = thread.back();
  tile.lanes = block.back() / thread.back();
  if (words->reduce == "warp")
    tile.strategy = RowStrategy::Warp;
  else if (words->reduce == "block")
    tile.strategy = RowStrategy::Block;
  else if (words->reduce == "column")
    tile.strategy = RowStrategy::Column;
  else if (words->reduce.empty())
    tile.strategy = RowStrategy::Elementwise;
  else
    return std::nullopt;
  if (tile.strategy != RowStrategy::Elementwise &&
      (tile.planesPerBlock != 1 || tile.columnSize != 0))
    return std::nullopt;
  return tile;
}

std::optional<std::string>
dyncc::cost::checkConstraints(const RowTile &tile, int64_t elementBytes,
                              const Device &device) {
  if (tile.rowsPerBlock < 1 || tile.lanes < 1 || tile.vector < 1 ||
      tile.planesPerBlock < 1)
    return std::string("tile sizes must be positive");
  if (tile.strategy != RowStrategy::Elementwise && tile.planesPerBlock != 1)
    return std::string("a row reduction's block takes one plane");
  if (tile.columnSize < 0 || (tile.columnSize != 0) != (tile.columnPlace != 0))
    return std::string("a column has a size and a place");
  if (tile.columnSize != 0 &&
      (tile.strategy != RowStrategy::Elementwise || tile.planesPerBlock != 1 ||
       tile.columnSize < 2 || tile.columnPlace < 2))
    return std::string("a column is taken whole by an elementwise tile of one "
                       "plane, at least 2 elements, before the last "
                       "dimension");
  if (tile.columnSize * tile.vector * 4 > kMaxColumnTileBytes)
    return "a thread's column of " +
           std::to_string(tile.columnSize * tile.vector) +
           " elements is more than " + std::to_string(kMaxColumnTileBytes) +
           " bytes";
  if (tile.vector * elementBytes > 16)
    return "a vector of " + std::to_string(tile.vector) + " elements is wider "
           "than 16 bytes";
  int64_t threads = tile.threads();
  if (threads > device.maxThreadsPerBlock)
    return "threads per block (" + std::to_string(threads) + ") exceed " +
           std::to_string(device.maxThreadsPerBlock);
  if (threads % device.warpSize)
    return "threads per block (" + std::to_string(threads) +
           ") are not whole warps";
  if (tile.strategy == RowStrategy::Warp && tile.lanes != device.warpSize)
    return std::string("a warp per row has 32 lanes");
  if (tile.strategy == RowStrategy::Block &&
      (tile.rowsPerBlock != 1 || tile.lanes % device.warpSize))
    return std::string("a block per row has one row and whole warps");
  if (tile.strategy == RowStrategy::Warp && tile.rowsPerBlock > 32)
    return std::string("a warp per row takes at most 32 rows per block");
  if (tile.strategy == RowStrategy::Column &&
      (tile.lanes < 2 || (tile.lanes & (tile.lanes - 1)) != 0 ||
       tile.vector != 1))
    return std::string("a column's lanes are a power of two from 2, one "
                       "element each");
  if (tile.strategy == RowStrategy::Column && tile.lanes > device.warpSize &&
      tile.rowsPerBlock != 1)
    return std::string("a column's lanes beyond a warp take one output per "
                       "block");
  return std::nullopt;
}

std::vector<RowTile> dyncc::cost::enumerateRowTiles(bool reduction,
                                                    int64_t elementBytes,
                                                    const Device &device) {
  std::vector<RowTile> tiles;
  auto add = [&](const RowTile &t) {
    if (!checkConstraints(t, elementBytes, device))
      tiles.push_back(t);
  };
  for (int64_t vector : {1, 2, 4, 8}) {
    if (!reduction) {
      // Short rows (at most 32 lanes) fill a block with more rows and
      // planes. One plane first: the search keeps the first of equals.
      for (int64_t planes : {1, 2, 4, 8})
        for (int64_t lanes : {8, 16, 32, 64, 128, 256, 512})
          for (int64_t rows : {1, 2, 4, 8, 16})
            if (lanes <= 32 || (rows < 16 && planes == 1))
              add({RowStrategy::Elementwise, rows, lanes, vector, planes});
      continue;
    }
    for (int64_t rows : {1, 2, 4, 8, 16})
      add({RowStrategy::Warp, rows, device.warpSize, vector});
    for (int64_t lanes : {64, 128, 256, 512, 1024})
      add({RowStrategy::Block, 1, lanes, vector});
  }
  return tiles;
}

std::vector<RowTile> dyncc::cost::enumerateColumnTiles(int64_t elementBytes,
                                                       const Device &device,
                                                       int64_t columnSize,
                                                       int64_t columnPlace,
                                                       bool lanes) {
  std::vector<RowTile> tiles;
  for (RowTile tile :
       enumerateRowTiles(/*reduction=*/false, elementBytes, device)) {
    if (tile.planesPerBlock != 1)
      continue;
    if (columnPlace >= 2) {
      tile.columnSize = columnSize;
      tile.columnPlace = columnPlace;
    }
    if (!checkConstraints(tile, elementBytes, device))
      tiles.push_back(tile);
  }
  if (lanes) {
    for (int64_t group : {2, 4, 8, 16, 32})
      for (int64_t warps : {1, 2, 4, 8}) {
        RowTile tile{RowStrategy::Column, device.warpSize / group * warps,
                     group, 1};
        if (!checkConstraints(tile, elementBytes, device))
          tiles.push_back(tile);
      }
    // A block per output, for few outputs over long columns.
    for (int64_t group : {64, 128, 256, 512, 1024}) {
      RowTile tile{RowStrategy::Column, 1, group, 1};
      if (!checkConstraints(tile, elementBytes, device))
        tiles.push_back(tile);
    }
  }
  return tiles;
}

/// The blocks of `tile` one SM holds (threads, and registers: ptxas' count
/// or an estimate of 32 per thread).
static int64_t rowBlocksPerSm(const RowTile &tile, const Device &device) {
  int64_t threads = tile.threads();
  int64_t byThreads = device.maxThreadsPerSm / threads;
  int64_t registers = tile.registers > 0 ? tile.registers : 32;
  int64_t byRegisters = device.registersPerSm / (registers * threads);
  return std::max<int64_t>(
      1, std::min({device.maxBlocksPerSm, byThreads, byRegisters}));
}

double dyncc::cost::getSectorInflation(const RowTile &tile,
                                       const RowProblem &problem) {
  constexpr int64_t kSectorBytes = 32, kWarp = 32;
  int64_t lanes = std::min<int64_t>(tile.lanes, kWarp);
  int64_t rowsPerWarp = kWarp / lanes;
  int64_t bytes = std::max<int64_t>(1, problem.elementBytes);
  // One load instruction of the warp: per row, its lanes' span (lanes
  // `vector` elements apart under scalar access, else vectors side by
  // side), in whole sectors.
  // A column split's warp: per position of the axis, its outputs side by
  // side.
  int64_t perLoad = problem.scalarAccess ? 1 : tile.vector;
  bool column = tile.strategy == RowStrategy::Column;
  int64_t span = (column ? rowsPerWarp : lanes) * tile.vector * bytes;
  int64_t sectors = (column ? lanes : rowsPerWarp) *
                    ((span + kSectorBytes - 1) / kSectorBytes);
  double useful = double(kWarp) * perLoad * bytes;
  return std::max(1.0, double(sectors * kSectorBytes) / useful);
}

RowPrediction dyncc::cost::predictRows(const RowTile &tile,
                                       const RowProblem &problem,
                                       const Device &device) {
  RowPrediction p;
  // A column reduction's thread walks its columns' reduced axis, charged
  // once: a norm's later passes over them are taken as cache hits. Split
  // over lanes, each walks its share; a block's outputs are along the
  // length, one row of the space each.
  int64_t perRowAccess = tile.lanes * tile.vector;
  int64_t column = std::max<int64_t>(1, problem.columnLength);
  int64_t blocksPerRow = 1, steps = column, rowsPerBlock = tile.rowsPerBlock;
  switch (tile.strategy) {
  case RowStrategy::Elementwise:
    blocksPerRow = ceilDiv(problem.length, perRowAccess);
    break;
  case RowStrategy::Warp:
  case RowStrategy::Block:
    steps = ceilDiv(problem.length, perRowAccess) * column;
    break;
  case RowStrategy::Column:
    steps = ceilDiv(column, tile.lanes);
    blocksPerRow = ceilDiv(problem.length, tile.rowsPerBlock);
    rowsPerBlock = 1;
    break;
  }
  int64_t planes = std::max<int64_t>(1, problem.planes);
  p.blocks = ceilDiv(std::max<int64_t>(1, problem.batch), planes) *
             ceilDiv(planes, tile.planesPerBlock) *
             ceilDiv(problem.rows, rowsPerBlock) * blocksPerRow;
  p.blocksPerSm = rowBlocksPerSm(tile, device);

  // Sectors the warps' accesses touch beyond their bytes (short rows,
  // lanes apart under scalar access) pass through the caches all the same.
  double inflation = getSectorInflation(tile, problem);
  auto blockTime = [&](int64_t perSm, int64_t resident) {
    double stepBytes = double(tile.threads()) * tile.vector *
                       problem.bytesPerElement * inflation;
    double rate = std::min(device.dramBytesPerSecond / resident,
                           device.l2BytesPerSecondPerSm / perSm);
    // The SM's resident blocks wait for their loads together: a wave's
    // step takes at least one latency (a gather's longer chain).
    double latency = problem.scalarAccess
                         ? kScalarAccessLatencyCycles / device.clockHz
                         : device.memoryLatencySeconds;
    BlockTime t;
    t.seconds = steps * std::max(stepBytes / rate, latency) +
                kBlockOverheadCycles / device.clockHz;
    if (tile.strategy == RowStrategy::Warp)
      t.seconds += kWarpReduceCycles / device.clockHz;
    else if (tile.strategy == RowStrategy::Block)
      t.seconds += kBlockReduceCycles / device.clockHz;
    else if (tile.strategy == RowStrategy::Column)
      t.seconds += (tile.lanes > device.warpSize
                        ? kBlockReduceCycles
                        : kShuffleRoundCycles * std::log2(double(tile.lanes))) /
                   device.clockHz;
    t.bound = stepBytes / rate < latency ? "latency" : "dram";
    double issue = double(perSm) * kBlockIssueCycles / device.clockHz;
    if (issue > t.seconds) {
      t.seconds = issue;
      t.bound = "blocks";
    }
    return t;
  };
  Waves waves = runWaves(p.blocks, p.blocksPerSm, device, blockTime);
  p.waves = waves.waves;
  p.bound = waves.bound;
  double dram = double(std::max<int64_t>(1, problem.batch)) *
                double(problem.rows) * problem.length * double(column) *
                problem.bytesPerElement / device.dramBytesPerSecond;
  p.seconds = addFloors(waves.seconds, dram, device, p.bound);
  return p;
}
