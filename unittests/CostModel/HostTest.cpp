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

// BERT-base's M x 768 -> 3072 layer. At M = 1 the GPU's pick, a block of one
// row of 32 threads of one output, runs 96 blocks of 32 turns per k-step
// for one multiply-add each: measured 5.3 ms on the CPU target, against
// 1.0 ms for 4 x 128 blocks of 4 x 4 threads, which compute 4x the padded
// rows. The model orders them so (1.41 against 1.14 ms: it does not see
// the first's cost of reading a 32-column slab of the 12 KB rows of B,
// docs/CostModel.md).
TEST(HostGemm, FewRowsPreferFewerTurnsOverLessPadding) {
  GemmProblem p = f32(1, 3072, 768);
  EXPECT_GT(seconds("block 1x32 thread 1x1 k 32 stages 2", p),
            1.2 * seconds("block 4x128 thread 4x4 k 32 stages 2", p));
}

// At M = 512 the 8 x 8 thread tiles (measured 76 ms) beat 2 x 2 ones
// (468 ms): 16x the multiply-adds per turn.
TEST(HostGemm, ManyRowsPreferLargeThreadTiles) {
  GemmProblem p = f32(512, 3072, 768);
  double large = seconds("block 32x128 thread 8x8 k 32 stages 2", p);
  double small = seconds("block 4x32 thread 2x2 k 32 stages 2", p);
  EXPECT_GT(small, 3 * large);
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

// A block's time, term by term: 24 k-steps of 32 turns of 32 x 1 x 1
// vector multiply-adds and a copy of (1 + 32) x 32 elements, then 32
// stores.
TEST(HostGemm, BlockTimeIsItsStepsAndStores) {
  HostDevice host;
  GemmTile t = tile("block 1x32 thread 1x1 k 32");
  HostPrediction p = predictHostGemm(t, f32(1, 32, 768), host);
  double turn = host.threadStepSeconds + 32 * host.vectorOpSeconds;
  double step = 32 * turn + 33 * 32 * host.copyElementSeconds;
  EXPECT_NEAR(p.blockSeconds, 24 * step + 32 * host.storeElementSeconds, 1e-15);
  // Thread N of 8 f32 is two 16-byte vectors per multiply-add.
  GemmTile wide = tile("block 1x32 thread 1x8 k 32");
  HostPrediction w = predictHostGemm(wide, f32(1, 32, 768), host);
  double wideTurn = host.threadStepSeconds + 32 * 2 * host.vectorOpSeconds;
  EXPECT_NEAR(w.blockSeconds,
              24 * (4 * wideTurn + 33 * 32 * host.copyElementSeconds) +
                  32 * host.storeElementSeconds,
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

// Each build of the host code has its own constants: the wider builds'
// vectors take a thread tile's 8 columns in one multiply-add, and a turn
// costs less there; any other name gets the portable build's.
TEST(HostGemm, EachBuildHasItsConstants) {
  HostDevice portable;
  for (const char *name : {"", "generic", "x86-64-v2", "rva23"}) {
    HostDevice host = getFittedHostDevice(name);
    EXPECT_EQ(host.vectorBytes, portable.vectorBytes) << name;
    EXPECT_EQ(host.threadStepSeconds, portable.threadStepSeconds) << name;
  }
  GemmTile t = tile("block 16x64 thread 4x8 k 32");
  GemmProblem p = f32(16, 768, 768);
  for (const char *name : {"x86-64-v3", "x86-64-v4"}) {
    HostDevice host = getFittedHostDevice(name);
    EXPECT_EQ(host.vectorBytes, 32) << name;
    EXPECT_EQ(host.threads, 1) << name;
    EXPECT_LT(host.threadStepSeconds, portable.threadStepSeconds / 4) << name;
    EXPECT_EQ(host.sumElementSeconds, portable.sumElementSeconds) << name;
    // One 8-lane multiply-add per thread row and k where the portable
    // build takes two 4-lane ones.
    HostDevice oneTurn = host;
    oneTurn.threadStepSeconds = 0;
    oneTurn.copyElementSeconds = oneTurn.storeElementSeconds = 0;
    oneTurn.launchSeconds = 0;
    int64_t steps = 768 / 32, turns = (16 / 4) * (64 / 8), blocks = 12;
    EXPECT_NEAR(predictHostGemm(t, p, oneTurn).seconds,
                double(blocks * steps * turns * 32 * 4) * host.vectorOpSeconds,
                1e-12)
        << name;
  }
}

} // namespace
