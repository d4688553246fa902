//===- TileConfigTest.cpp - Tile configurations ---------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Tiling/TileConfig.h"
#include "dyncc/CostModel/Conv.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Rows.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace dyncc;

namespace {

TEST(TileConfigTest, DefaultsAreValidForEveryRank) {
  for (const char *kind : {"gemm", "conv", "elementwise", "reduce"})
    for (int64_t rank = 1; rank <= 5; ++rank) {
      TileConfig config = TileConfig::getDefault(kind, rank);
      EXPECT_EQ((int64_t)config.blockTile.size(), rank) << kind;
      EXPECT_EQ(config.verify(), "") << kind << " rank " << rank;
    }
  TileConfig gemm = TileConfig::getDefault("gemm", 2);
  EXPECT_EQ(gemm.str(), "block 32x64 thread 4x4 k 16");
  EXPECT_EQ(TileConfig::getDefault("reduce", 2).kStep, 64);
  // Row reductions: a warp per row, 4 rows per block.
  TileConfig rows = TileConfig::getDefault("reduce", 3);
  EXPECT_EQ(rows.str(), "block 1x4x32 thread 1x1x1 k 64 reduce warp");
  EXPECT_EQ(rows.getBlockDims(), (std::array<int64_t, 3>{32, 4, 1}));
  EXPECT_EQ(TileConfig::getDefault("reduce", 1).str(),
            "block 32 thread 1 k 64 reduce warp");
  EXPECT_EQ(gemm.getThreadsPerDim(), (llvm::SmallVector<int64_t, 4>{8, 16}));
  // A conv's output [N, C, H, W]: 8 channels x 4 rows x 32 columns.
  TileConfig conv = TileConfig::getDefault("conv", 4);
  EXPECT_EQ(conv.str(), "block 1x8x4x32 thread 1x2x1x4 k 16");
  EXPECT_EQ(conv.getThreadsPerDim(),
            (llvm::SmallVector<int64_t, 4>{1, 4, 4, 8}));
}

TEST(TileConfigTest, VerifyRejectsBadConfigs) {
  TileConfig c;
  c.blockTile = {32, 64};
  c.threadTile = {3, 4};
  EXPECT_NE(c.verify().find("does not divide"), std::string::npos);
  c.threadTile = {1, 1};
  EXPECT_NE(c.verify().find("exceed 1024"), std::string::npos);
  c.threadTile = {4};
  EXPECT_NE(c.verify().find("sizes"), std::string::npos);
  c.blockTile = {0};
  c.threadTile = {1};
  EXPECT_NE(c.verify().find("positive"), std::string::npos);
  c.blockTile = {4};
  c.kStep = -1;
  EXPECT_NE(c.verify().find("k-step"), std::string::npos);
}

TEST(TileConfigTest, AttributeRoundTrip) {
  mlir::MLIRContext context;
  TileConfig config = TileConfig::getDefault("gemm", 2);
  mlir::FailureOr<TileConfig> back =
      TileConfig::fromAttr(config.toAttr(&context));
  ASSERT_TRUE(mlir::succeeded(back));
  EXPECT_EQ(back->blockTile, config.blockTile);
  EXPECT_EQ(back->threadTile, config.threadTile);
  EXPECT_TRUE(mlir::failed(TileConfig::fromAttr(mlir::DictionaryAttr())));
}

// A k-step per reduction loop (a conv's channels, filter rows and columns):
// text and attribute round trips, the largest as the k-step, ops with
// other reduction counts taking that one, and what verify rejects.
TEST(TileConfigTest, PerLoopKSteps) {
  std::string error;
  std::optional<TileConfig> config =
      TileConfig::parse("block 1x8x4x32 thread 1x2x1x4 k 3x1x7", error);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_EQ(config->kStep, 7);
  EXPECT_EQ(config->kSteps, (llvm::SmallVector<int64_t, 3>{3, 1, 7}));
  EXPECT_EQ(config->str(), "block 1x8x4x32 thread 1x2x1x4 k 3x1x7");
  EXPECT_EQ(config->getKSteps(3), (llvm::SmallVector<int64_t, 3>{3, 1, 7}));
  EXPECT_EQ(config->getKSteps(1), (llvm::SmallVector<int64_t, 3>{7}));
  mlir::MLIRContext context;
  mlir::FailureOr<TileConfig> back =
      TileConfig::fromAttr(config->toAttr(&context));
  ASSERT_TRUE(mlir::succeeded(back));
  EXPECT_EQ(back->str(), config->str());
  // One k-step again drops the per-loop ones.
  config =
      TileConfig::parse("block 1x8x4x32 thread 1x2x1x4 k 3x1x7 k 4", error);
  ASSERT_TRUE(config.has_value()) << error;
  EXPECT_TRUE(config->kSteps.empty());
  EXPECT_EQ(config->getKSteps(3), (llvm::SmallVector<int64_t, 3>{4, 4, 4}));

  EXPECT_FALSE(
      TileConfig::parse("block 1x8x4x32 thread 1x2x1x4 k 3x0x7", error));
  EXPECT_NE(error.find("positive"), std::string::npos) << error;
  EXPECT_FALSE(
      TileConfig::parse("block 1x8x4x32 thread 1x2x1x4 k 3xax7", error));
  EXPECT_NE(error.find("bad sizes '3xax7'"), std::string::npos) << error;
  EXPECT_FALSE(TileConfig::parse(
      "block 64x64 warp 32x32 thread 4x8 k 16x32 mma 16x8x16", error));
  EXPECT_NE(error.find("SIMT"), std::string::npos) << error;
  TileConfig mismatched =
      *TileConfig::parse("block 1x8x4x32 thread 1x2x1x4 k 3x1x7", error);
  mismatched.kStep = 3;
  EXPECT_NE(mismatched.verify().find("largest"), std::string::npos);
}

TEST(TileConfigTest, ParseRoundTripsAndRejects) {
  std::string error;
  for (const char *kind : {"gemm", "reduce"})
    for (int64_t rank = 1; rank <= 4; ++rank) {
      TileConfig config = TileConfig::getDefault(kind, rank);
      std::optional<TileConfig> back = TileConfig::parse(config.str(), error);
      ASSERT_TRUE(back.has_value()) << error;
      EXPECT_EQ(back->str(), config.str());
    }
  // Tensor-core GEMMs: a warp tile and an instruction tile, round-tripped
  // through text and the attribute.
  for (int64_t rank = 2; rank <= 4; ++rank) {
    TileConfig config =
        TileConfig::getDefault("gemm", rank, /*tensorCore=*/true);
    EXPECT_EQ(config.verify(), "");
    EXPECT_EQ(config.mma, (llvm::SmallVector<int64_t, 3>{16, 8, 16}));
    EXPECT_EQ(config.stages, 3);
    mlir::MLIRContext context;
    mlir::FailureOr<TileConfig> fromAttr =
        TileConfig::fromAttr(config.toAttr(&context));
    ASSERT_TRUE(mlir::succeeded(fromAttr));
    EXPECT_EQ(fromAttr->str(), config.str());
    {
      std::optional<TileConfig> back = TileConfig::parse(config.str(), error);
      ASSERT_TRUE(back.has_value()) << error;
      EXPECT_EQ(back->str(), config.str());
    }
  }
  // Stages: printed and kept in the attribute only when not 1.
  {
    std::optional<TileConfig> staged = TileConfig::parse(
        "block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 4", error);
    ASSERT_TRUE(staged.has_value()) << error;
    EXPECT_EQ(staged->stages, 4);
    EXPECT_EQ(staged->str(),
              "block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 4");
    mlir::MLIRContext context;
    mlir::FailureOr<TileConfig> fromAttr =
        TileConfig::fromAttr(staged->toAttr(&context));
    ASSERT_TRUE(mlir::succeeded(fromAttr));
    EXPECT_EQ(fromAttr->stages, 4);
    staged->stages = 1;
    EXPECT_EQ(staged->str().find("stages"), std::string::npos);
    EXPECT_FALSE(staged->toAttr(&context).contains("stages"));
  }
  // Row reduction strategies: printed and kept in the attribute unless
  // `thread` (the default).
  for (const char *text : {"block 2x128 thread 1x4 k 0 reduce warp",
                           "block 1x96 thread 1x3 k 7 reduce block",
                           "block 1x16x8 thread 1x1x1 k 64 reduce column",
                           "block 32x2 thread 1x1 k 64 reduce column",
                           "block 1x1x256 thread 1x1x1 k 64 reduce column"}) {
    std::optional<TileConfig> rows = TileConfig::parse(text, error);
    ASSERT_TRUE(rows.has_value()) << text << ": " << error;
    EXPECT_EQ(rows->str(), text);
    mlir::MLIRContext context;
    mlir::FailureOr<TileConfig> fromAttr =
        TileConfig::fromAttr(rows->toAttr(&context));
    ASSERT_TRUE(mlir::succeeded(fromAttr));
    EXPECT_EQ(fromAttr->reduction, rows->reduction);
    EXPECT_EQ(fromAttr->str(), text);
  }
  {
    std::optional<TileConfig> thread =
        TileConfig::parse("block 4x32 thread 1x1 reduce thread", error);
    ASSERT_TRUE(thread.has_value()) << error;
    EXPECT_EQ(thread->reduction, RowReduction::Thread);
    EXPECT_EQ(thread->str(), "block 4x32 thread 1x1 k 0");
    mlir::MLIRContext context;
    EXPECT_FALSE(thread->toAttr(&context).contains("reduce"));
    // An unknown strategy in an attribute is no config.
    mlir::Builder b(&context);
    llvm::SmallVector<mlir::NamedAttribute> entries(
        thread->toAttr(&context).getValue());
    entries.push_back(b.getNamedAttr("reduce", b.getStringAttr("lane")));
    EXPECT_TRUE(
        mlir::failed(TileConfig::fromAttr(b.getDictionaryAttr(entries))));
  }
  std::optional<TileConfig> noK =
      TileConfig::parse("block 3x5 thread 1x5", error);
  ASSERT_TRUE(noK.has_value()) << error;
  EXPECT_EQ(noK->kStep, 0);
  struct Bad {
    const char *text, *message;
  } bad[] = {
      {"block 4x4", "needs both"},
      {"block 4x4 thread 3x4", "does not divide"},
      {"block 4xa thread 1x1", "bad sizes"},
      {"block 4 thread 1 k", "has no value"},
      {"block 4 thread 1 warp 2", "2 warps need 64 threads"},
      {"block 4 thread 1 foo 2", "unexpected 'foo'"},
      {"block 64 warp 24 thread 1", "does not divide"},
      {"block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x8", "only mma 16x8x16"},
      {"block 64x64 thread 4x8 k 32 mma 16x8x16", "needs a warp tile"},
      {"block 64x64 warp 32x32 thread 4x8 k 32 mma 16x16x16", "only mma"},
      {"block 64x64 warp 32x32 thread 4x8 k 24 mma 16x8x16",
       "not a multiple of the instruction's K"},
      {"block 32x64 warp 8x64 thread 2x8 k 32 mma 16x8x16",
       "not a multiple of the instruction tile"},
      {"block 4 block 4 thread 1", "unexpected 'block'"},
      {"block 64x64 thread 1x1", "exceed 1024"},
      {"block 4 thread 1 k -2", "k-step"},
      {"block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 0",
       "stages must be 1 to 8"},
      {"block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 9",
       "stages must be 1 to 8"},
      {"block 64x64 thread 4x4 stages 2", "needs a k-step"},
      {"block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 2 stages 3",
       "unexpected 'stages'"},
      {"block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages x",
       "bad sizes"},
      {"block 4x64 thread 1x1 reduce warp", "needs 32 threads along the row"},
      {"block 4x32 thread 1x1 reduce lane", "unknown row reduction strategy"},
      {"block 4x32 thread 1x1 reduce warp reduce warp", "unexpected 'reduce'"},
      {"block 1x48 thread 1x1 reduce block", "a multiple of 32 threads"},
      {"block 2x64 thread 1x1 reduce block", "one row per block"},
      {"block 16x6 thread 1x1 reduce column", "a power of two, of one element"},
      {"block 16x1 thread 1x1 reduce column", "got 1 of 1"},
      {"block 1x48 thread 1x1 reduce column", "got 48 of 1"},
      {"block 2x64 thread 1x1 reduce column", "one output per block"},
      {"block 16x8 thread 1x2 reduce column", "got 4 of 2"},
      {"block 4x32 thread 2x1 reduce warp", "one row per thread"},
      {"block 2x2x2x32 thread 1x1x1x1 reduce warp", "at most two dimensions"},
      {"block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 reduce warp",
       "takes no warp or instruction tile"}};
  for (const Bad &b : bad) {
    error.clear();
    EXPECT_FALSE(TileConfig::parse(b.text, error).has_value()) << b.text;
    EXPECT_NE(error.find(b.message), std::string::npos)
        << b.text << ": " << error;
  }
}

TEST(TileConfigTest, FitToRank) {
  std::string error;
  TileConfig config = *TileConfig::parse("block 8x16 thread 2x4 k 3", error);
  EXPECT_EQ(config.fitToRank(4).str(), "block 1x1x8x16 thread 1x1x2x4 k 3");
  EXPECT_EQ(config.fitToRank(1).str(), "block 16 thread 4 k 3");
  EXPECT_EQ(config.fitToRank(2).str(), config.str());
  // A column split keeps a size beyond the outputs': its lanes. A mean into
  // [D] keeps its outputs per block.
  TileConfig column =
      *TileConfig::parse("block 16x8 thread 1x1 k 64 reduce column", error);
  EXPECT_EQ(column.fitToRank(1).str(), column.str());
  EXPECT_EQ(column.fitToRank(2).str(),
            "block 1x16x8 thread 1x1x1 k 64 reduce column");
}

TEST(TileConfigTest, GridArgNamesRoundTrip) {
  unsigned arg;
  std::optional<int64_t> dim;
  EXPECT_EQ(getGridArgName(3, std::nullopt), "__arg3");
  EXPECT_TRUE(parseGridArgName("__arg3", arg, dim));
  EXPECT_EQ(arg, 3u);
  EXPECT_FALSE(dim.has_value());
  EXPECT_EQ(getGridArgName(12, 4), "__arg12_d4");
  EXPECT_TRUE(parseGridArgName("__arg12_d4", arg, dim));
  EXPECT_EQ(arg, 12u);
  EXPECT_EQ(dim, 4);
  for (const char *bad :
       {"arg3", "__arg", "__arg3_", "__arg3_x1", "__arg3_d", "__arg3_d-1", "B"})
    EXPECT_FALSE(parseGridArgName(bad, arg, dim)) << bad;
}

} // namespace

TEST(TileConfigTest, BlockDimsAreInnermostFirst) {
  std::string error;
  TileConfig conv =
      *TileConfig::parse("block 1x8x4x32 thread 1x2x1x4 k 16", error);
  EXPECT_EQ(conv.getBlockDims(), (std::array<int64_t, 3>{8, 4, 4}));
  TileConfig row = *TileConfig::parse("block 128 thread 4", error);
  EXPECT_EQ(row.getBlockDims(), (std::array<int64_t, 3>{32, 1, 1}));
  TileConfig wide = *TileConfig::parse("block 2x3x4x8 thread 1x1x1x1", error);
  EXPECT_EQ(wide.getBlockDims(), (std::array<int64_t, 3>{8, 4, 3}));
}

// Every GEMM candidate the tile search can emit is a config code generation
// accepts: it parses, verifies, and has the search's tiles.
TEST(TileConfigTest, EverySearchCandidateIsAValidConfig) {
  for (const dyncc::cost::Device &device : dyncc::cost::getDevices())
    for (int64_t bytes : {2, 4})
      for (const dyncc::cost::GemmTile &tile :
           dyncc::cost::enumerateGemmTiles(bytes, device)) {
        std::string error;
        std::optional<TileConfig> config = TileConfig::parse(tile.str(), error);
        ASSERT_TRUE(config.has_value()) << tile.str() << ": " << error;
        EXPECT_EQ(config->verify(), "") << tile.str();
        EXPECT_EQ(config->blockTile[0], tile.blockM);
        EXPECT_EQ(config->blockTile[1], tile.blockN);
        EXPECT_EQ(config->kStep, tile.kStep);
        EXPECT_EQ(config->stages, tile.stages);
        EXPECT_EQ(config->mma.empty(), !tile.tensorCores);
        EXPECT_EQ(config->getBlockDims()[0] * config->getBlockDims()[1] *
                      config->getBlockDims()[2],
                  tile.threads());
      }
}

// So is every conv candidate, with its k-steps loop by loop.
TEST(TileConfigTest, EveryConvCandidateIsAValidConfig) {
  const dyncc::cost::Device &device = *dyncc::cost::lookupDevice("h200");
  for (int64_t taps : {1, 3, 7}) {
    dyncc::cost::ConvProblem problem;
    problem.outC = 64;
    problem.outH = problem.outW = 56;
    problem.inC = taps == 7 ? 3 : 64;
    problem.kh = problem.kw = taps;
    for (const dyncc::cost::ConvTile &tile :
         dyncc::cost::enumerateConvTiles(problem, device)) {
      std::string error;
      std::optional<TileConfig> config = TileConfig::parse(tile.str(), error);
      ASSERT_TRUE(config.has_value()) << tile.str() << ": " << error;
      EXPECT_EQ(config->getKSteps(3),
                (llvm::SmallVector<int64_t, 3>{tile.kChannels, tile.kRows,
                                               tile.kColumns}))
          << tile.str();
      EXPECT_EQ(config->str(), tile.str());
    }
  }
}

// So is every row-wise candidate (elementwise, a warp or a block per row).
TEST(TileConfigTest, EveryRowCandidateIsAValidConfig) {
  for (const dyncc::cost::Device &device : dyncc::cost::getDevices())
    for (bool reduction : {false, true})
      for (const dyncc::cost::RowTile &tile :
           dyncc::cost::enumerateRowTiles(reduction, 2, device)) {
        std::string error;
        std::optional<TileConfig> config = TileConfig::parse(tile.str(), error);
        ASSERT_TRUE(config.has_value()) << tile.str() << ": " << error;
        EXPECT_EQ(config->verify(), "") << tile.str();
        EXPECT_EQ(config->reduction != RowReduction::Thread, reduction);
        EXPECT_EQ(config->getBlockDims()[0] * config->getBlockDims()[1] *
                      config->getBlockDims()[2],
                  tile.threads())
            << tile.str();
      }
}
