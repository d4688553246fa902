//===- DeviceTest.cpp - The GPU table --------------------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Device.h"

#include "gtest/gtest.h"

using namespace dyncc::cost;

namespace {

TEST(Devices, TheTableHasTheIssuesDevicesComplete) {
  for (const char *name : {"a100", "rtx3090", "h100", "h200"}) {
    const Device *d = lookupDevice(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_GT(d->sms, 0) << name;
    EXPECT_GT(d->clockHz, 0) << name;
    EXPECT_EQ(d->warpSize, 32) << name;
    EXPECT_GT(d->maxThreadsPerSm, 0) << name;
    EXPECT_GT(d->maxBlocksPerSm, 0) << name;
    EXPECT_GT(d->sharedBytesPerSm, d->maxSharedBytesPerBlock) << name;
    EXPECT_GT(d->maxSharedBytesPerBlock, 48 * 1024) << name;
    EXPECT_GT(d->l2Bytes, 0) << name;
    EXPECT_GT(d->l2BytesPerSecond, d->dramBytesPerSecond) << name;
    EXPECT_GT(d->sharedBytesPerSecond, d->l2BytesPerSecond) << name;
    EXPECT_GT(d->mmaSyncHalfFlopsPerSecond, d->simtFp32FlopsPerSecond) << name;
  }
  // wgmma only on sm_90.
  EXPECT_EQ(lookupDevice("a100")->wgmmaHalfFlopsPerSecond, 0);
  EXPECT_GT(lookupDevice("h200")->wgmmaHalfFlopsPerSecond,
            lookupDevice("h200")->mmaSyncHalfFlopsPerSecond);
}

TEST(Devices, ArchesNameTheirDevices) {
  EXPECT_EQ(lookupDevice("sm_80")->name, "a100");
  EXPECT_EQ(lookupDevice("sm_86")->name, "rtx3090");
  EXPECT_EQ(lookupDevice("sm_90")->name, "h100");
  EXPECT_EQ(lookupDevice("sm_70"), nullptr);
  EXPECT_EQ(lookupDevice("h200")->arch, "sm_90");
  // The H200 is an H100 with more and faster memory.
  EXPECT_EQ(lookupDevice("h200")->sms, lookupDevice("h100")->sms);
  EXPECT_GT(lookupDevice("h200")->dramBytesPerSecond,
            lookupDevice("h100")->dramBytesPerSecond);
}

} // namespace
