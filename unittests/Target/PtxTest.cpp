//===- PtxTest.cpp - Per-chip limits of the GPU targets
//--------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Target/Ptx.h"

#include "gtest/gtest.h"

using namespace dyncc;

namespace {

TEST(SharedMemoryLimits, PerChip) {
  EXPECT_EQ(getMaxSharedBytesPerBlock("sm_80"), 163 * 1024);
  EXPECT_EQ(getMaxSharedBytesPerBlock("sm_86"), 99 * 1024);
  EXPECT_EQ(getMaxSharedBytesPerBlock("sm_90"), 227 * 1024);
  EXPECT_EQ(getMaxSharedBytesPerBlock("sm_90a"), 227 * 1024);
  // A chip dyncc has no figure for gets what needs no opt-in.
  EXPECT_EQ(getMaxSharedBytesPerBlock("sm_70"), 48 * 1024);
}

TEST(SharedMemoryLimits, BudgetIsTheLeastGpuTargetsLimit) {
  // Less the 16 bytes of the dynamic-shared symbol.
  EXPECT_EQ(getSharedBytesBudget({"cpu", "sm_80", "sm_90"}), 163 * 1024 - 16);
  EXPECT_EQ(getSharedBytesBudget({"sm_90"}), 227 * 1024 - 16);
  EXPECT_EQ(getSharedBytesBudget({"sm_90", "sm_86", "cpu"}), 99 * 1024 - 16);
  // The host runs the tiles of a default GPU compile (sm_80 and sm_90).
  EXPECT_EQ(getSharedBytesBudget({"cpu"}),
            getSharedBytesBudget({"sm_80", "sm_90"}));
}

TEST(PtxChips, ChipsShareTheOldestChipsPtx) {
  std::vector<std::string> defaults = {"sm_80", "sm_90"};
  EXPECT_EQ(getPtxChip("sm_80", defaults), "sm_80");
  EXPECT_EQ(getPtxChip("sm_90", defaults), "sm_80");
  EXPECT_EQ(getPtxChips(defaults), std::vector<std::string>{"sm_80"});
  // The order of --target does not matter; the oldest chip's PTX is taken.
  std::vector<std::string> reversed = {"sm_90", "sm_86"};
  EXPECT_EQ(getPtxChip("sm_90", reversed), "sm_86");
  EXPECT_EQ(getPtxChips(reversed), std::vector<std::string>{"sm_86"});
  // A chip alone takes its own.
  EXPECT_EQ(getPtxChips({"sm_90"}), std::vector<std::string>{"sm_90"});
}

TEST(PtxChips, ArchSpecificChipsTakeTheirOwn) {
  // sm_90a's PTX runs on sm_90a alone, and no chip runs it in sm_90's place.
  std::vector<std::string> chips = {"sm_80", "sm_90", "sm_90a"};
  EXPECT_EQ(getPtxChip("sm_90a", chips), "sm_90a");
  EXPECT_EQ(getPtxChip("sm_90", chips), "sm_80");
  EXPECT_EQ(getPtxChips(chips), (std::vector<std::string>{"sm_80", "sm_90a"}));
  EXPECT_EQ(getPtxChips({"sm_90a", "sm_90"}),
            (std::vector<std::string>{"sm_90a", "sm_90"}));
  // A name that is not sm_<digits> is left to itself.
  EXPECT_EQ(getPtxChip("sm_x", {"sm_80", "sm_x"}), "sm_x");
  EXPECT_EQ(getPtxChip("sm_90", {"sm_x", "sm_90"}), "sm_90");
}

} // namespace
