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

} // namespace
