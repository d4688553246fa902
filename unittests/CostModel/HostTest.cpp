//===- HostTest.cpp - The host CPU target's GEMM model
//---------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Host.h"

#include "gtest/gtest.h"

#include <cmath>
#include <optional>

using namespace dyncc::cost;

namespace {

GemmProblem f32(int64_t m, int64_t n, int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

GemmTile tile(const char *text) {
  std::optional<GemmTile> t = parseGemmTile(text);
  EXPECT_TRUE(t.has_value()) << text;
  return t.value_or(GemmTile());
}

HostDevice twoThreads() {
  HostDevice host;
  host.threads = 2;
  return host;
}

double seconds(const char *text, const GemmProblem &p,
               const HostDevice &host = twoThreads()) {
  return predictHostGemm(tile(text), p, host).seconds;
}

HostDevice build(const char *isa, int64_t threads = 2) {
  HostDevice host = getFittedHostDevice(isa);
  host.threads = threads;
  return host;
}

// BERT-base's M x 768 -> 3072 layer at M = 512 (benchmarks/
// host_tile_sweep.py, an Intel Xeon with AVX-512, 2 threads): on the
// x86-64-v4 build a 4 x 64 thread tile (16 zmm accumulators) ran 156
// GFLOP/s, the GPU search's usual 8 x 8 (one ymm a row) 112; on the
// portable build the 4 x 64 tile's accumulator is 64 xmm registers of 16
// and ran 44 against 4 x 8's 63.
TEST(HostGemm, WideThreadRowsWinWhereTheyFitTheRegisters) {
  GemmProblem p = f32(512, 3072, 768);
  const char *wide = "block 64x256 thread 4x64 k 32";
  const char *narrow = "block 64x128 thread 4x8 k 32";
  EXPECT_LT(seconds(wide, p, build("x86-64-v4")),
            seconds(narrow, p, build("x86-64-v4")) / 1.2);
  EXPECT_GT(seconds(wide, p, build("x86-64-v2")),
            seconds(narrow, p, build("x86-64-v2")) * 1.2);
  EXPECT_LT(seconds(wide, p, build("x86-64-v4")),
            seconds("block 64x128 thread 8x8 k 32", p, build("x86-64-v4")) /
                1.2);
}

// A thread row is as many vectors as the build's widest register takes,
// and what the accumulator, B's row and a broadcast need beyond the
// registers spills.
TEST(HostGemm, ThreadTilesInRegisters) {
  GemmTile t = tile("block 64x256 thread 4x64 k 32");
  HostThreadTile v2 = getHostThreadTile(t, build("x86-64-v2"));
  EXPECT_EQ(v2.rowVectors, 16);
  EXPECT_EQ(v2.spilled, 4 * 16 + 16 + 1 - 16);
  HostThreadTile v3 = getHostThreadTile(t, build("x86-64-v3"));
  EXPECT_EQ(v3.rowVectors, 8);
  EXPECT_EQ(v3.spilled, 4 * 8 + 8 + 1 - 16);
  HostThreadTile v4 = getHostThreadTile(t, build("x86-64-v4"));
  EXPECT_EQ(v4.rowVectors, 4);
  EXPECT_EQ(v4.spilled, 0);
  // A row narrower than a register is one vector.
  EXPECT_EQ(
      getHostThreadTile(tile("block 8x32 thread 2x4 k 8"), build("x86-64-v4"))
          .rowVectors,
      1);
}

// A k-step of 64 makes 64 x 256's A and B tiles 80 KB, past a 48 KB L1:
// 127 GFLOP/s against 156 with k 32 (x86-64-v4, M = 512). The model's
// L1 is the processor's (the run-time sets it); with a 1 MB L1 what is
// left between the two is the longer unrolled body's.
TEST(HostGemm, KStepsBeyondL1Cost) {
  GemmProblem p = f32(512, 3072, 768);
  HostDevice host = build("x86-64-v4");
  double k32 = seconds("block 64x256 thread 4x64 k 32", p, host);
  double k64 = seconds("block 64x256 thread 4x64 k 64", p, host);
  EXPECT_GT(k64, 1.1 * k32);
  host.l1Bytes = 1 << 20;
  double gap = seconds("block 64x256 thread 4x64 k 64", p, host) -
               seconds("block 64x256 thread 4x64 k 32", p, host);
  EXPECT_GT(gap, 0);
  EXPECT_LT(gap, 0.5 * (k64 - k32));
}

// At M = 1 a block of many padded rows computes them all: a block of one
// or two rows is faster than one of 64 (measured on the 768 -> 3072
// layer, x86-64-v4: 1x256 thread 1x8 k 64 8.3 GFLOP/s, 64x128 8x8 1.9).
TEST(HostGemm, FewRowsPreferSmallBlocks) {
  GemmProblem p = f32(1, 3072, 768);
  for (const char *isa : {"x86-64-v2", "x86-64-v3", "x86-64-v4"})
    EXPECT_GT(seconds("block 64x128 thread 8x8 k 32", p, build(isa)),
              2 * seconds("block 1x256 thread 1x8 k 64", p, build(isa)))
        << isa;
}

TEST(HostGemm, TensorCoreTilesAreNotModelled) {
  GemmTile t = tile("block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16");
  EXPECT_FALSE(isHostModelled(t));
  EXPECT_TRUE(
      std::isinf(predictHostGemm(t, f32(64, 64, 64), HostDevice()).seconds));
  EXPECT_TRUE(isHostModelled(tile("block 8x32 thread 2x2 k 8")));
}

// The blocks run in rounds of the pool's threads: 48 blocks on 2 threads
// take 24 rounds, on 48 one (the launch aside).
TEST(HostGemm, BlocksRunInRoundsOfThePoolsThreads) {
  GemmProblem p = f32(8, 768, 768);
  GemmTile t = tile("block 8x16 thread 2x2 k 32");
  HostDevice host;
  host.threads = 2;
  HostPrediction two = predictHostGemm(t, p, host);
  host.threads = 48;
  HostPrediction many = predictHostGemm(t, p, host);
  EXPECT_EQ(two.blocks, 48);
  EXPECT_EQ(two.rounds, 24);
  EXPECT_EQ(many.rounds, 1);
  EXPECT_DOUBLE_EQ(two.blockSeconds, many.blockSeconds);
  EXPECT_NEAR(two.seconds - host.launchSeconds,
              24 * (many.seconds - host.launchSeconds), 1e-12);
}

// A block's time, term by term: 24 k-steps of 8 turns of 4 x 8 thread
// tiles, each k two 16-byte vectors a row on the portable build, with
// 4 + 2 loads and its share of the 32-long unrolled body; its working set (A
// and B tiles, a row's broadcasts) and the accumulator's spills; a copy of (4 +
// 32) x 32 elements; 128 stores.
TEST(HostGemm, BlockTimeIsItsStepsAndStores) {
  HostDevice host;
  host.threadStepSeconds = 1e-9;
  host.vectorOpSeconds = 2e-10;
  host.laneOpSeconds = 3e-10;
  host.broadcastSeconds = 5e-11;
  host.rowLoadSeconds = 7e-11;
  host.unrollSeconds = 1.9e-12;
  host.accumulatorSeconds = 1.1e-10;
  host.spillSeconds = 1.3e-10;
  host.l1MissSeconds = 1.7e-10;
  host.l1Bytes = 4096;
  host.vectorRegisters = 8;
  GemmTile t = tile("block 4x32 thread 4x8 k 32");
  HostPrediction p = predictHostGemm(t, f32(4, 32, 768), host);
  // 4 rows of 2 vectors, a row of B and a broadcast: 11 of 8 registers.
  double spilled = 3;
  double working = (4 + 32) * 32 * 4 + 4 * 32 * 16;
  double beyond = (working - 4096) / working;
  double perK = 8 * host.vectorOpSeconds + 4 * 2 * host.laneOpSeconds +
                4 * host.broadcastSeconds + 2 * host.rowLoadSeconds +
                32 * host.unrollSeconds + spilled * host.spillSeconds +
                (4 + 2) * beyond * host.l1MissSeconds;
  double turn =
      host.threadStepSeconds + 8 * host.accumulatorSeconds + 32 * perK;
  double step = 4 * turn + 36 * 32 * host.copyElementSeconds;
  EXPECT_NEAR(p.blockSeconds, 24 * step + 128 * host.storeElementSeconds,
              1e-15);
}

// Split-K: a part's K, and the sum kernel's partial sums and launch.
TEST(HostGemm, SplitKAddsItsSum) {
  HostDevice host = twoThreads();
  GemmProblem p = f32(4, 768, 3072);
  GemmTile whole = tile("block 4x256 thread 4x4 k 32");
  GemmTile split = tile("block 4x256 thread 4x4 k 32 split_k 4");
  HostPrediction w = predictHostGemm(whole, p, host);
  HostPrediction s = predictHostGemm(split, p, host);
  EXPECT_EQ(s.blocks, 4 * w.blocks);
  double sum = 4.0 * 4 * 768 * host.sumElementSeconds / 2 + host.launchSeconds;
  EXPECT_NEAR(s.seconds,
              double(s.rounds) * s.blockSeconds + host.launchSeconds + sum,
              1e-12);
  EXPECT_LT(s.blockSeconds, w.blockSeconds / 3.5);
}

// A block computes each of the fused products in turn.
TEST(HostGemm, ProductsRunInTurn) {
  HostDevice host;
  GemmTile t = tile("block 8x32 thread 2x4 k 16");
  GemmProblem one = f32(8, 768, 768), three = one;
  three.products = 3;
  EXPECT_NEAR(predictHostGemm(t, three, host).blockSeconds,
              3 * predictHostGemm(t, one, host).blockSeconds, 1e-15);
}

// Each build of the host code has its own constants and registers; any
// other name gets the portable build's.
TEST(HostGemm, EachBuildHasItsConstants) {
  HostDevice portable;
  for (const char *name : {"", "generic", "x86-64-v2", "rva23"}) {
    HostDevice host = getFittedHostDevice(name);
    EXPECT_EQ(host.vectorBytes, 16) << name;
    EXPECT_EQ(host.vectorRegisters, 16) << name;
    EXPECT_EQ(host.vectorOpSeconds, portable.vectorOpSeconds) << name;
  }
  HostDevice v3 = getFittedHostDevice("x86-64-v3");
  EXPECT_EQ(v3.vectorBytes, 32);
  EXPECT_EQ(v3.vectorRegisters, 16);
  HostDevice v4 = getFittedHostDevice("x86-64-v4");
  EXPECT_EQ(v4.vectorBytes, 64);
  EXPECT_EQ(v4.vectorRegisters, 32);
  for (const HostDevice &host : {v3, v4}) {
    EXPECT_EQ(host.threads, 1);
    EXPECT_EQ(host.sumElementSeconds, portable.sumElementSeconds);
  }
}

// A host search records `host-LEVEL` as its device; other names (a GPU's)
// have no build.
TEST(HostGemm, HostSearchDeviceNames) {
  EXPECT_EQ(getHostSearchDevice("x86-64-v2"), "host-x86-64-v2");
  EXPECT_EQ(getHostSearchLevel("host-x86-64-v4"), "x86-64-v4");
  EXPECT_EQ(getHostSearchLevel(getHostSearchDevice("generic")), "generic");
  for (const char *gpu : {"h100", "h200", "sm_90", "", "host"})
    EXPECT_EQ(getHostSearchLevel(gpu), "") << gpu;
}

// The host search's candidates: SIMT tiles of whole 16-byte thread rows
// whose accumulator fits the widest build's registers, each a block of at
// most 1024 GPU threads, single-stage and unsplit; with a head size, block
// N tiles that divide it.
TEST(HostGemm, HostCandidatesFitTheWidestBuild) {
  std::vector<GemmTile> tiles = enumerateHostGemmTiles();
  ASSERT_GT(tiles.size(), 1000u);
  HostDevice v4 = getFittedHostDevice("x86-64-v4");
  bool wide = false, gemv = false;
  for (const GemmTile &t : tiles) {
    EXPECT_TRUE(isHostModelled(t)) << t.str();
    EXPECT_EQ(t.blockM % t.threadM, 0) << t.str();
    EXPECT_EQ(t.blockN % t.threadN, 0) << t.str();
    EXPECT_EQ(t.threadN % 4, 0) << t.str();
    EXPECT_LE(t.threads(), 1024) << t.str();
    EXPECT_EQ(t.stages, 1) << t.str();
    EXPECT_EQ(t.splitK, 1) << t.str();
    EXPECT_EQ(getHostThreadTile(t, v4).spilled, 0) << t.str();
    wide |= t.threadM == 4 && t.threadN == 64;
    gemv |= t.blockM == 1;
  }
  EXPECT_TRUE(wide);
  EXPECT_TRUE(gemv);
  for (const GemmTile &t : enumerateHostGemmTiles(16))
    EXPECT_EQ(16 % t.blockN, 0) << t.str();
  EXPECT_FALSE(enumerateHostGemmTiles(16).empty());
  EXPECT_TRUE(enumerateHostGemmTiles(2).empty());
}

} // namespace
