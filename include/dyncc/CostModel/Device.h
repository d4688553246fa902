//===- Device.h - GPU hardware descriptions as data -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the tile search and its analytical model know of a GPU: plain data,
// one table (Device.cpp), each number with its source. Pure C++ with no
// LLVM or MLIR dependency: the run-time links the same selection code.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_DEVICE_H
#define DYNCC_COSTMODEL_DEVICE_H

#include <cstdint>
#include <string>
#include <vector>

namespace dyncc::cost {

struct Device {
  /// The table's key: "a100", "rtx3090", "h100", "h200".
  std::string name;
  /// The PTX target the compiler emits for it: sm_80, sm_86, sm_90.
  std::string arch;
  int64_t sms = 0;
  /// The clock the peak rates below are quoted at, Hz.
  double clockHz = 0;
  int64_t warpSize = 32;
  int64_t maxThreadsPerBlock = 1024;
  int64_t maxThreadsPerSm = 0;
  int64_t maxBlocksPerSm = 0;
  int64_t registersPerSm = 65536;
  int64_t maxRegistersPerThread = 255;
  /// Shared memory per SM usable by blocks, and the most one block may use
  /// once it opts in (above 48 KB).
  int64_t sharedBytesPerSm = 0;
  int64_t maxSharedBytesPerBlock = 0;
  /// Shared memory the driver reserves per resident block.
  int64_t reservedSharedBytesPerBlock = 1024;
  int64_t l2Bytes = 0;
  /// Bandwidths, bytes per second: device memory, L2 (all slices), shared
  /// memory (all SMs), and what one SM can pull from L2.
  double dramBytesPerSecond = 0;
  double l2BytesPerSecond = 0;
  double sharedBytesPerSecond = 0;
  double l2BytesPerSecondPerSm = 0;
  /// Peak rates, FLOP/s (a multiply-add is 2): FP32 FMA on the SIMT cores,
  /// f16/bf16 mma.sync with f32 accumulation, and wgmma (0 where absent).
  double simtFp32FlopsPerSecond = 0;
  double mmaSyncHalfFlopsPerSecond = 0;
  double wgmmaHalfFlopsPerSecond = 0;
  /// The latency of a load from global memory (an L2 hit), seconds: what a
  /// k-step pipeline's stages must cover.
  double memoryLatencySeconds = 0;
  /// The time a kernel launch costs at least, seconds.
  double launchSeconds = 0;
};

/// Registers per thread the search leaves unused below the limit where it
/// estimates a tile's count (the estimate's error).
constexpr int64_t kRegisterHeadroom = 24;

/// Every device of the table.
const std::vector<Device> &getDevices();

/// The device named `name` (a table key, or an arch: "sm_80" is the A100,
/// "sm_86" the RTX 3090, "sm_90" the H100), or nullptr.
const Device *lookupDevice(const std::string &name);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_DEVICE_H
