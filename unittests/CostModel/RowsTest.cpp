//===- RowsTest.cpp - Row-wise kernels: candidates and their time ---------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Partition.h"
#include "dyncc/CostModel/Rows.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace dyncc::cost;

namespace {

RowProblem rows(int64_t count, int64_t length, bool reduction,
                int64_t elementBytes = 2) {
  RowProblem p;
  p.rows = count;
  p.length = length;
  p.elementBytes = elementBytes;
  // Softmax and LayerNorm read a row and write one; elementwise ops read
  // two operands and write one.
  p.bytesPerElement = elementBytes * (reduction ? 2 : 3);
  p.reduction = reduction;
  return p;
}

const RowTile &bestRowTile(const std::vector<RowTile> &tiles,
                           const RowProblem &problem, const Device &device) {
  size_t best = 0;
  for (size_t i = 1; i < tiles.size(); ++i)
    if (predictRows(tiles[i], problem, device).seconds <
        predictRows(tiles[best], problem, device).seconds)
      best = i;
  return tiles[best];
}

TEST(RowCandidates, EveryCandidateSatisfiesEveryHardConstraint) {
  for (const Device &device : getDevices())
    for (bool reduction : {false, true})
      for (int64_t bytes : {2, 4}) {
        std::vector<RowTile> tiles = enumerateRowTiles(reduction, bytes, device);
        ASSERT_GT(tiles.size(), 10u);
        for (const RowTile &t : tiles) {
          SCOPED_TRACE(device.name + ": " + t.str());
          EXPECT_LE(t.vector * bytes, 16);
          EXPECT_LE(t.threads(), device.maxThreadsPerBlock);
          EXPECT_EQ(t.threads() % 32, 0);
          EXPECT_EQ(t.strategy != RowStrategy::Elementwise, reduction);
          if (t.strategy == RowStrategy::Warp)
            EXPECT_EQ(t.lanes, 32);
          if (t.strategy == RowStrategy::Block)
            EXPECT_EQ(t.rowsPerBlock, 1);
          EXPECT_FALSE(checkConstraints(t, bytes, device).has_value());
        }
      }
  const Device &h200 = *lookupDevice("h200");
  EXPECT_TRUE(checkConstraints({RowStrategy::Warp, 4, 64, 1}, 4, h200));
  EXPECT_TRUE(checkConstraints({RowStrategy::Block, 2, 64, 1}, 4, h200));
  EXPECT_TRUE(checkConstraints({RowStrategy::Elementwise, 1, 32, 8}, 4, h200));
  EXPECT_TRUE(checkConstraints({RowStrategy::Elementwise, 8, 256, 1}, 4, h200));
  EXPECT_EQ(RowTile({RowStrategy::Warp, 4, 32, 2}).str(),
            "block 4x64 thread 1x2 k 64 reduce warp");
  EXPECT_EQ(RowTile({RowStrategy::Block, 1, 256, 4}).str(),
            "block 1x1024 thread 1x4 k 64 reduce block");
  EXPECT_EQ(RowTile({RowStrategy::Elementwise, 4, 32, 4}).str(),
            "block 4x128 thread 1x4");
}

// Many short rows (a transformer's softmax over 64 keys): a warp per row;
// a few long rows: a block per row.
TEST(RowModel, RowLengthPicksTheStrategy) {
  for (const char *name : {"a100", "h200"}) {
    const Device &device = *lookupDevice(name);
    std::vector<RowTile> tiles = enumerateRowTiles(true, 2, device);
    EXPECT_EQ(bestRowTile(tiles, rows(1 << 16, 64, true), device).strategy,
              RowStrategy::Warp)
        << name;
    EXPECT_EQ(bestRowTile(tiles, rows(4, 1 << 16, true), device).strategy,
              RowStrategy::Block)
        << name;
  }
}

// A large elementwise kernel moves 16-byte vectors and runs near the DRAM
// bandwidth; predictions grow with the work.
TEST(RowModel, LargeElementwiseIsBandwidthBound) {
  const Device &h200 = *lookupDevice("h200");
  std::vector<RowTile> tiles = enumerateRowTiles(false, 2, h200);
  RowProblem big = rows(8192, 4096, false);
  const RowTile &best = bestRowTile(tiles, big, h200);
  EXPECT_EQ(best.vector * 2, 16) << best.str();
  RowPrediction p = predictRows(best, big, h200);
  double bytes = double(big.rows) * big.length * big.bytesPerElement;
  EXPECT_STREQ(p.bound, "dram");
  EXPECT_GT(bytes / p.seconds, 0.8 * h200.dramBytesPerSecond);
  EXPECT_LE(bytes / p.seconds, h200.dramBytesPerSecond);
  for (const RowTile &t : tiles)
    EXPECT_LE(predictRows(t, rows(100, 768, false), h200).seconds,
              predictRows(t, rows(5000, 768, false), h200).seconds)
        << t.str();
}

/// im2col's copy of a 256-channel 3x3 conv's windows over 14 x 14 images
/// at batch 64 (2304 * 64 slices of 14 rows), its planes not given.
RowProblem getIm2ColCopy() {
  RowProblem copy = rows(14, 14, false);
  copy.batch = 2304 * 64;
  copy.bytesPerElement = 4;
  return copy;
}

// Many tiny blocks are bound by the SM starting them one after another
// (kBlockIssueCycles, fitted on the H200): im2col's copy over 14-element
// rows, 147,456 independent slices of 14 rows at batch 64, runs in blocks
// of at least 8 rows (the H200 measured 8-row ones 1.6x faster than 2-row
// ones), and a 2-row tile's waves take at least 32 blocks per SM of 160
// cycles each. Without the term the search chose 2-row blocks and
// predicted them 5x faster than measured.
TEST(RowModel, ManyTinyBlocksAreBoundByTheirIssue) {
  const Device &h200 = *lookupDevice("h200");
  RowProblem copy = getIm2ColCopy();
  std::vector<RowTile> tiles = enumerateRowTiles(false, 2, h200);
  EXPECT_GE(bestRowTile(tiles, copy, h200).rowsPerBlock, 8)
      << bestRowTile(tiles, copy, h200).str();
  RowPrediction two =
      predictRows({RowStrategy::Elementwise, 2, 32, 1}, copy, h200);
  EXPECT_STREQ(two.bound, "blocks");
  EXPECT_GE(two.seconds,
            double(two.waves - 1) * two.blocksPerSm * 160 / h200.clockHz);
}

// Where the slices are the planes of an outer dimension (im2col's copy:
// [batch, C x KH x KW, 14, 14]), a block takes several of them: the best
// tile spans planes, fills at least 256 threads with rows of 14, and is
// predicted at least 2x faster than the best tile of one plane, which the
// blocks' issue bounds.
TEST(RowModel, ShortRowsFillBlocksWithPlanes) {
  const Device &h200 = *lookupDevice("h200");
  RowProblem copy = getIm2ColCopy();
  std::vector<RowTile> tiles = enumerateRowTiles(false, 2, h200);
  std::vector<RowTile> onePlane;
  for (const RowTile &t : tiles)
    if (t.planesPerBlock == 1)
      onePlane.push_back(t);
  double flat =
      predictRows(bestRowTile(onePlane, copy, h200), copy, h200).seconds;
  copy.planes = 2304;
  const RowTile &best = bestRowTile(tiles, copy, h200);
  EXPECT_GT(best.planesPerBlock, 1) << best.str();
  EXPECT_GE(best.threads(), 256) << best.str();
  EXPECT_LE(best.lanes * best.vector, 16) << best.str();
  EXPECT_LT(predictRows(best, copy, h200).seconds * 2, flat) << best.str();
  // Planes are whole: 2304 planes in blocks of 8 are 288 a batch.
  RowTile eight{RowStrategy::Elementwise, 4, 16, 1, 8};
  EXPECT_EQ(predictRows(eight, copy, h200).blocks, 64 * 288 * 4);
  // Long rows keep one plane a block.
  RowProblem wide = rows(64, 4096, false);
  wide.batch = wide.planes = 512;
  EXPECT_EQ(bestRowTile(tiles, wide, h200).planesPerBlock, 1)
      << bestRowTile(tiles, wide, h200).str();
}

// A warp's access touches whole 32-byte sectors: 8 lanes of one f16 each
// fill half a sector per row (2x); under scalar access (a gather, a
// transpose) lanes are `vector` elements apart, so 8 f16 a thread spread a
// warp's 32 loads over 8 times their sectors, and the model charges those
// bytes: the H200 ran im2col's copy of 56-element rows in such tiles (8
// lanes of 8) 1.3x slower than in 32-lane rows of one element.
TEST(RowModel, WarpsPayForTheSectorsTheyTouch) {
  RowProblem p = rows(56, 56, false);
  EXPECT_DOUBLE_EQ(getSectorInflation({RowStrategy::Elementwise, 8, 32, 1}, p),
                   1.0);
  EXPECT_DOUBLE_EQ(getSectorInflation({RowStrategy::Elementwise, 8, 8, 1}, p),
                   2.0);
  EXPECT_DOUBLE_EQ(getSectorInflation({RowStrategy::Elementwise, 8, 8, 8}, p),
                   1.0);
  p.scalarAccess = true;
  EXPECT_DOUBLE_EQ(getSectorInflation({RowStrategy::Elementwise, 8, 8, 8}, p),
                   8.0);
  EXPECT_DOUBLE_EQ(getSectorInflation({RowStrategy::Elementwise, 8, 32, 1}, p),
                   1.0);
}

// im2col's copies at batch 64 on the H200 (2026-11-29 and -30): a gather
// whose threads each wait out index arithmetic, a dependent load and a
// store, so its time followed the threads launched (a wave of 2048 an SM
// took 2200-3300 cycles), not its bytes. The model (a wave waits one
// latency, kScalarAccessLatencyCycles for gathers) puts every measured tile
// within 1.5x of its time and each copy's fastest first; with the
// old per-block latency (latency over the resident blocks) it predicted the
// 56-wide copy's one-element tile at 174 us against 805 measured.
TEST(RowModel, GatherWavesWaitTheirChain) {
  const Device &h200 = *lookupDevice("h200");
  RowProblem narrow = rows(14, 14, false);
  narrow.batch = 2304 * 64;
  narrow.planes = 2304;
  narrow.bytesPerElement = 3;
  narrow.scalarAccess = true;
  RowProblem wide = narrow;
  wide.batch = wide.planes = 576 * 64;
  wide.planes = 576;
  wide.rows = wide.length = 56;
  struct Measured {
    const RowProblem &problem;
    RowTile tile;
    double us;
  };
  std::vector<Measured> measured = {
      {narrow, {RowStrategy::Elementwise, 16, 8, 2, 4}, 94},
      {narrow, {RowStrategy::Elementwise, 16, 16, 1, 2}, 158},
      {wide, {RowStrategy::Elementwise, 8, 32, 2, 1}, 398},
      {wide, {RowStrategy::Elementwise, 8, 8, 8, 2}, 522},
      {wide, {RowStrategy::Elementwise, 8, 64, 1, 1}, 805},
      {wide, {RowStrategy::Elementwise, 8, 8, 1, 8}, 900}};
  std::vector<double> us;
  for (const Measured &m : measured) {
    us.push_back(predictRows(m.tile, m.problem, h200).seconds * 1e6);
    SCOPED_TRACE(m.tile.str());
    EXPECT_LT(us.back(), 1.5 * m.us);
    EXPECT_GT(us.back(), m.us / 1.5);
  }
  // Each copy's measured best is predicted fastest of its tiles.
  EXPECT_LT(us[0], us[1]);
  for (size_t i = 3; i < us.size(); ++i)
    EXPECT_LT(us[2], us[i]) << measured[i].tile.str();
}

// The partitioning works for these kinds too: LayerNorm rows x 768 over
// the rows' range, look-up = argmin of the chosen at every value.
TEST(RowModel, PartitionOverRows) {
  const Device &a100 = *lookupDevice("a100");
  std::vector<RowTile> tiles = enumerateRowTiles(true, 2, a100);
  auto cost = [&](size_t c, int64_t r) {
    return predictRows(tiles[c], rows(r, 768, true), a100).seconds;
  };
  Partition p = partitionRange(tiles.size(), cost, 1, 4096);
  ASSERT_FALSE(p.chosen.empty());
  for (int64_t r = 1; r <= 4096; r += 7) {
    size_t argmin = 0;
    for (size_t j = 1; j < p.chosen.size(); ++j)
      if (cost(p.chosen[j], r) < cost(p.chosen[argmin], r))
        argmin = j;
    ASSERT_EQ(cost(p.chosen[p.table.lookup(r)], r), cost(p.chosen[argmin], r))
        << r;
  }
}

} // namespace

TEST(RowTiles, ParseKernelConfigsBack) {
  // Every candidate's text parses back to the same tile, also fitted to a
  // higher rank (outer sizes 1) as code generation holds it.
  for (const Device &device : getDevices())
    for (bool reduction : {false, true})
      for (const RowTile &tile : enumerateRowTiles(reduction, 2, device)) {
        std::optional<RowTile> back = parseRowTile(tile.str());
        ASSERT_TRUE(back.has_value()) << tile.str();
        EXPECT_TRUE(*back == tile) << tile.str();
      }
  std::optional<RowTile> fitted =
      parseRowTile("block 1x1x4x64 thread 1x1x1x2 k 64 reduce warp");
  ASSERT_TRUE(fitted.has_value());
  EXPECT_TRUE(*fitted == RowTile({RowStrategy::Warp, 4, 32, 2}));
  // A rank-1 output: one row per block.
  std::optional<RowTile> single = parseRowTile("block 512 thread 2 k 64 "
                                               "reduce block");
  ASSERT_TRUE(single.has_value());
  EXPECT_TRUE(*single == RowTile({RowStrategy::Block, 1, 256, 2}));
  std::optional<RowTile> planes = parseRowTile("block 1x2x4x64 thread 1x1x1x2");
  ASSERT_TRUE(planes.has_value());
  EXPECT_TRUE(*planes == RowTile({RowStrategy::Elementwise, 4, 32, 2, 2}));
  for (const char *bad :
       {"", "block 4x64", "block 2x2x4x64 thread 1x1x1x2",
        "block 4x4x64 thread 2x1x2", "block 2x4x64 thread 2x4x2",
        "block 2x4x64 thread 1x1x2 k 64 reduce "
        "warp",
        "block 4x64 thread 2x2", "block 4x64 thread 1x3",
        "block 4x64 thread 1x2 reduce thread",
        "block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16",
        "block 4x64 thread 1x2 k 64 reduce sideways"})
    EXPECT_FALSE(parseRowTile(bad).has_value()) << bad;
}

TEST(RowModel, BatchesMultiplyBlocksAndRegistersOccupancy) {
  const Device &h100 = *lookupDevice("h100");
  RowTile tile{RowStrategy::Warp, 4, 32, 1};
  // Blocks do not span batches: 6 rows per batch are 2 blocks of 4 rows
  // each, 3 rows 1 block.
  RowProblem p = rows(6, 64, true);
  p.batch = 5;
  EXPECT_EQ(predictRows(tile, p, h100).blocks, 10);
  RowProblem flat = rows(30, 64, true);
  EXPECT_EQ(predictRows(tile, flat, h100).blocks, 8);
  EXPECT_GT(predictRows(tile, p, h100).seconds, 0);
  // ptxas' registers set the blocks per SM: 255 registers per thread of
  // 128 threads leave 2 blocks on a 64K-register SM.
  RowProblem big = rows(1 << 16, 1024, true);
  int64_t estimated = predictRows(tile, big, h100).blocksPerSm;
  tile.registers = 255;
  EXPECT_EQ(predictRows(tile, big, h100).blocksPerSm,
            h100.registersPerSm / (255 * 128));
  EXPECT_LT(predictRows(tile, big, h100).blocksPerSm, estimated);
}

TEST(ColumnTiles, TextPlacesTheColumnAndParsesBack) {
  // The reduced axis whole, at its place from the result's end: the
  // channels of [N, C, H, W] (3), of [N, C, L] (2, before the rows' N), of
  // [N, C, D, H, W] (4).
  RowTile tile{RowStrategy::Elementwise, 4, 32, 2};
  tile.columnSize = 16;
  tile.columnPlace = 3;
  EXPECT_EQ(tile.str(), "block 16x4x64 thread 16x1x2");
  tile.columnPlace = 2;
  EXPECT_EQ(tile.str(), "block 4x16x64 thread 1x16x2");
  tile.columnPlace = 4;
  EXPECT_EQ(tile.str(), "block 16x1x4x64 thread 16x1x1x2");
  for (const Device &device : getDevices())
    for (int64_t place : {0, 2, 3, 4})
      for (int64_t size : {2, 16, 2048}) {
        std::vector<RowTile> tiles =
            enumerateColumnTiles(4, device, size, place);
        ASSERT_GT(tiles.size(), 10u);
        for (const RowTile &t : tiles) {
          SCOPED_TRACE(device.name + ": " + t.str());
          EXPECT_EQ(t.strategy, RowStrategy::Elementwise);
          EXPECT_EQ(t.planesPerBlock, 1);
          EXPECT_EQ(t.columnSize, place ? size : 0);
          EXPECT_FALSE(checkConstraints(t, 4, device).has_value());
          std::optional<RowTile> back = parseRowTile(t.str());
          ASSERT_TRUE(back.has_value());
          EXPECT_TRUE(*back == t);
        }
      }
  // Fitted to a higher rank, as code generation holds it.
  std::optional<RowTile> fitted = parseRowTile("block 1x1x16x4x64 thread "
                                               "1x1x16x1x2");
  ASSERT_TRUE(fitted.has_value());
  EXPECT_EQ(fitted->columnSize, 16);
  EXPECT_EQ(fitted->columnPlace, 3);
  EXPECT_EQ(fitted->rowsPerBlock, 4);
}

TEST(ColumnTiles, ConstraintsKeepColumnsWholeInElementwiseTiles) {
  const Device &device = getDevices().front();
  RowTile warp{RowStrategy::Warp, 4, 32, 1};
  warp.columnSize = 16;
  warp.columnPlace = 3;
  EXPECT_TRUE(checkConstraints(warp, 4, device).has_value());
  RowTile planes{RowStrategy::Elementwise, 4, 32, 1, 2};
  planes.columnSize = 16;
  planes.columnPlace = 3;
  EXPECT_TRUE(checkConstraints(planes, 4, device).has_value());
  RowTile unit{RowStrategy::Elementwise, 4, 32, 1};
  unit.columnSize = 1;
  unit.columnPlace = 3;
  EXPECT_TRUE(checkConstraints(unit, 4, device).has_value());
  unit.columnSize = 16;
  unit.columnPlace = 0;
  EXPECT_TRUE(checkConstraints(unit, 4, device).has_value());
  // A thread's tile holds at most kMaxColumnTileBytes of its column:
  // ConvNeXt-L's 1536 channels in one element a thread, none of 8192.
  for (const Device &d : getDevices()) {
    for (const RowTile &t : enumerateColumnTiles(2, d, 1536, 3))
      EXPECT_EQ(t.vector, 1) << t.str();
    EXPECT_FALSE(enumerateColumnTiles(2, d, 1536, 3).empty());
    EXPECT_TRUE(enumerateColumnTiles(4, d, 8192, 3).empty());
    // Where the result lacks the axis, no tile holds it.
    EXPECT_FALSE(enumerateColumnTiles(4, d, 8192, 0).empty());
  }
  // Two columns, or a reduction's tile with one, are no tile.
  EXPECT_FALSE(parseRowTile("block 16x8x4x64 thread 16x8x1x2").has_value());
  EXPECT_FALSE(
      parseRowTile("block 16x4x32 thread 16x1x1 k 64 reduce warp").has_value());
}

TEST(ColumnModel, EachOutputPaysItsColumn) {
  // A softmax over the channels of [1, C, 256, 256] in f32 (a read and a
  // write per element): DRAM-bound at this size, its time follows C; with
  // one output per column left, each thread's walk is latency-bound.
  for (const Device &device : getDevices()) {
    RowProblem p;
    p.rows = 256;
    p.length = 256;
    p.elementBytes = 4;
    p.bytesPerElement = 8;
    RowTile tile{RowStrategy::Elementwise, 4, 32, 4};
    p.columnLength = 16;
    double c16 = predictRows(tile, p, device).seconds;
    p.columnLength = 256;
    double c256 = predictRows(tile, p, device).seconds;
    EXPECT_GT(c256 / c16, 6.0) << device.name;
    EXPECT_LT(c256 / c16, 24.0) << device.name;
    // No column is one step.
    p.columnLength = 0;
    double plain = predictRows(tile, p, device).seconds;
    p.columnLength = 1;
    EXPECT_DOUBLE_EQ(predictRows(tile, p, device).seconds, plain);
    // One column of 1000 elements: a thousand dependent steps of a latency.
    RowProblem one;
    one.columnLength = 1000;
    EXPECT_GE(predictRows(tile, one, device).seconds,
              1000 * device.memoryLatencySeconds)
        << device.name;
  }
}

/// A mean over the `positions` positions of [batch, positions, 768] in f32:
/// batch x 768 outputs, each folding a column of `positions`.
static RowProblem meanOverPositions(int64_t batch, int64_t positions) {
  RowProblem p;
  p.rows = batch;
  p.length = 768;
  p.elementBytes = 4;
  p.bytesPerElement = 4;
  p.columnLength = positions;
  return p;
}

TEST(ColumnModel, FewColumnsPreferSmallBlocks) {
  // A mean over the 512 positions of [B, 512, 768] at B = 1: 768 columns.
  // Few columns give few threads; the search's pick spreads them over
  // SMs (blocks of at most 128 threads) rather than one block of 768.
  for (const Device &device : getDevices()) {
    RowProblem p = meanOverPositions(1, 512);
    std::vector<RowTile> tiles = enumerateColumnTiles(4, device, 0, 0);
    const RowTile &best = bestRowTile(tiles, p, device);
    EXPECT_LE(best.threads(), 128) << device.name << ": " << best.str();
  }
}

TEST(ColumnTiles, LanesSplitTheColumnWhereCodeGenerationCan) {
  // `reduce column`: a power of two of lanes from 2 to 1024 per output, one
  // element each, outputs along y; only where code generation can split
  // the column (`lanes`).
  for (const Device &device : getDevices()) {
    SCOPED_TRACE(device.name);
    std::vector<RowTile> plain = enumerateColumnTiles(4, device, 0, 0);
    std::vector<RowTile> split =
        enumerateColumnTiles(4, device, 0, 0, /*lanes=*/true);
    auto isColumn = [](const RowTile &t) {
      return t.strategy == RowStrategy::Column;
    };
    EXPECT_EQ(std::count_if(plain.begin(), plain.end(), isColumn), 0);
    std::set<int64_t> lanes;
    for (const RowTile &t : split) {
      if (!isColumn(t))
        continue;
      SCOPED_TRACE(t.str());
      lanes.insert(t.lanes);
      EXPECT_EQ(t.vector, 1);
      EXPECT_EQ(t.threads() % device.warpSize, 0);
      EXPECT_FALSE(checkConstraints(t, 4, device).has_value());
      std::optional<RowTile> back = parseRowTile(t.str());
      ASSERT_TRUE(back.has_value());
      EXPECT_TRUE(*back == t);
    }
    EXPECT_EQ(lanes,
              (std::set<int64_t>{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}));
    EXPECT_EQ(split.size() - plain.size(), 25u);
    // A result spanning the axis: its elementwise tiles take it whole, its
    // splits' lanes take the channels.
    std::vector<RowTile> spanning =
        enumerateColumnTiles(4, device, 16, 3, true);
    EXPECT_EQ(std::count_if(spanning.begin(), spanning.end(), isColumn), 25);
    for (const RowTile &t : spanning)
      EXPECT_EQ(t.columnSize, isColumn(t) ? 0 : 16) << t.str();
  }
  RowTile tile{RowStrategy::Column, 8, 4, 1};
  EXPECT_EQ(tile.str(), "block 8x4 thread 1x1 k 64 reduce column");
  const Device &device = getDevices().front();
  EXPECT_FALSE(checkConstraints(tile, 4, device).has_value());
  for (int64_t lanes : {1, 3, 6, 48}) {
    RowTile bad{RowStrategy::Column, 64, lanes, 1};
    EXPECT_TRUE(checkConstraints(bad, 4, device).has_value()) << lanes;
  }
  // Beyond a warp, one output per block (the lanes combine through shared
  // memory), at most the device's threads.
  EXPECT_FALSE(
      checkConstraints(RowTile{RowStrategy::Column, 1, 256, 1}, 4, device)
          .has_value());
  EXPECT_TRUE(
      checkConstraints(RowTile{RowStrategy::Column, 2, 64, 1}, 4, device)
          .has_value());
  EXPECT_TRUE(
      checkConstraints(RowTile{RowStrategy::Column, 1, 2048, 1}, 4, device)
          .has_value());
  RowTile vector{RowStrategy::Column, 8, 4, 2};
  EXPECT_TRUE(checkConstraints(vector, 4, device).has_value());
  RowTile whole{RowStrategy::Column, 8, 4, 1};
  whole.columnSize = 16;
  whole.columnPlace = 3;
  EXPECT_TRUE(checkConstraints(whole, 4, device).has_value());
}

TEST(ColumnModel, LongColumnsOverFewOutputsTakeLanes) {
  // A mean over 512 positions of [1, 512, 768]: a thread per output walks
  // 512 dependent steps with 768 threads on the whole GPU; 8 or more lanes
  // an output cut the walk and fill the SMs. With a column of one element
  // the lanes are idle and the plain tiles are at least as fast.
  for (const Device &device : getDevices()) {
    SCOPED_TRACE(device.name);
    RowProblem p = meanOverPositions(1, 512);
    std::vector<RowTile> plain = enumerateColumnTiles(4, device, 0, 0);
    std::vector<RowTile> split = enumerateColumnTiles(4, device, 0, 0, true);
    const RowTile &best = bestRowTile(split, p, device);
    EXPECT_EQ(best.strategy, RowStrategy::Column) << best.str();
    EXPECT_GE(best.lanes, 8) << best.str();
    double plainTime =
        predictRows(bestRowTile(plain, p, device), p, device).seconds;
    EXPECT_GT(plainTime / predictRows(best, p, device).seconds, 4.0);
    // Each lane walks its share: 4 lanes take a quarter of the steps.
    RowTile four{RowStrategy::Column, 32, 4, 1};
    RowTile eight{RowStrategy::Column, 16, 8, 1};
    EXPECT_GT(predictRows(four, p, device).seconds,
              predictRows(eight, p, device).seconds);
    // Four outputs of a million elements each (a sum over the rows of
    // [1M, 4]): a warp each leaves the GPU idle; a block each, 8 to 32
    // warps.
    RowProblem few = p;
    few.length = 4;
    few.columnLength = 1 << 20;
    const RowTile &block = bestRowTile(split, few, device);
    EXPECT_EQ(block.strategy, RowStrategy::Column) << block.str();
    EXPECT_GE(block.lanes, 256) << block.str();
    // Many outputs of one element: nothing to split.
    p.rows = 64;
    p.length = 65536;
    p.columnLength = 1;
    const RowTile &flat = bestRowTile(split, p, device);
    EXPECT_LE(predictRows(flat, p, device).seconds,
              predictRows(bestRowTile(plain, p, device), p, device).seconds);
    EXPECT_LT(predictRows(bestRowTile(plain, p, device), p, device).seconds,
              predictRows(eight, p, device).seconds);
  }
  // A warp of 4-lane groups reads 8 neighbouring f32 outputs (one sector)
  // at each of 4 positions: no inflation; 32 lanes read one element of a
  // sector at 32 positions.
  RowProblem p;
  p.elementBytes = 4;
  p.columnLength = 64;
  EXPECT_DOUBLE_EQ(getSectorInflation(RowTile{RowStrategy::Column, 8, 4, 1}, p),
                   1.0);
  EXPECT_DOUBLE_EQ(
      getSectorInflation(RowTile{RowStrategy::Column, 8, 32, 1}, p), 8.0);
}

TEST(ColumnModel, NormsOverFewPositionsTakeLanes) {
  // ConvNeXt's channels-first LayerNorm before its last downsampling: 384
  // channels of a 14 x 14 map at batch 1 (a read and a write per element).
  // A thread per position walks all 384 channels with 196 threads on the
  // GPU; lanes per position take the channels.
  for (const Device &device : getDevices()) {
    SCOPED_TRACE(device.name);
    RowProblem p;
    p.rows = 14;
    p.length = 14;
    p.elementBytes = 4;
    p.bytesPerElement = 8;
    p.columnLength = 384;
    std::vector<RowTile> plain = enumerateColumnTiles(4, device, 384, 3);
    std::vector<RowTile> lanes =
        enumerateColumnTiles(4, device, 384, 3, /*lanes=*/true);
    const RowTile &whole = bestRowTile(plain, p, device);
    const RowTile &split = bestRowTile(lanes, p, device);
    EXPECT_EQ(split.strategy, RowStrategy::Column) << split.str();
    EXPECT_GT(predictRows(whole, p, device).seconds /
                  predictRows(split, p, device).seconds,
              4.0)
        << whole.str() << " vs " << split.str();
  }
}
