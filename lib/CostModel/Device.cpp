//===- Device.cpp - The GPU table -----------------------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Sources, cited per number below:
//   [PG]    CUDA C++ Programming Guide, "Compute Capabilities", table
//           "Technical Specifications per Compute Capability" (8.0, 8.6,
//           9.0): threads, blocks, registers and shared memory per SM and
//           per block.
//   [A100]  NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020),
//           Tables 1-3 and the L2 section ("5120 bytes/clk").
//   [GA102] NVIDIA Ampere GA102 GPU Architecture whitepaper (2020), the
//           GeForce RTX 3090 column of its specification table.
//   [H100]  NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022) and
//           the H100 SXM5 datasheet.
//   [H200]  NVIDIA H200 datasheet (2024), and ../shared/BENCHMARKS.md for
//           what the lent H200 reports and measures (60 MB L2, 132 SMs).
//   [HOP]   W. Luo et al., "Benchmarking and Dissecting the Nvidia Hopper
//           GPU Architecture" (2024): mma.sync on Hopper runs at about
//           two thirds of wgmma's rate.
// The memory latency (about 300 cycles to an L2 hit), the per-SM L2
// bandwidth and the launch time are estimates for `dyncc tune` to calibrate.
// Where a figure is derived (bytes per clock times clock) or estimated,
// the comment says so.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Device.h"

using namespace dyncc::cost;

static std::vector<Device> makeDevices() {
  std::vector<Device> devices;

  Device a100;
  a100.name = "a100";
  a100.arch = "sm_80";
  a100.sms = 108;                        // [A100] Table 1, A100 SXM4 40 GB
  a100.clockHz = 1.41e9;                 // [A100] boost clock
  a100.maxThreadsPerSm = 2048;           // [PG] 8.0
  a100.maxBlocksPerSm = 32;              // [PG] 8.0
  a100.sharedBytesPerSm = 164 * 1024;    // [PG] 8.0: 164 KB per SM
  a100.maxSharedBytesPerBlock = 163 * 1024; // [PG] 8.0: 163 KB per block
  a100.l2Bytes = 40ll << 20;             // [A100] 40 MB
  a100.dramBytesPerSecond = 1555e9;      // [A100] HBM2, 1555 GB/s
  a100.l2BytesPerSecond = 5120 * 1.41e9; // [A100] 5120 B/clk, derived
  a100.sharedBytesPerSecond = 128.0 * 108 * 1.41e9; // 128 B/clk/SM, derived
  a100.l2BytesPerSecondPerSm = 64 * 1.41e9; // estimate: 64 B/clk per SM
  a100.simtFp32FlopsPerSecond = 19.5e12;    // [A100] FP32
  a100.mmaSyncHalfFlopsPerSecond = 312e12;  // [A100] FP16/BF16 tensor
  a100.wgmmaHalfFlopsPerSecond = 0;         // no wgmma before sm_90
  a100.memoryLatencySeconds = 300 / 1.41e9; // estimate: ~300 cycles
  a100.launchSeconds = 3e-6;                // estimate: launch + tail
  devices.push_back(a100);

  Device rtx;
  rtx.name = "rtx3090";
  rtx.arch = "sm_86";
  rtx.sms = 82;                           // [GA102] RTX 3090
  rtx.clockHz = 1.695e9;                  // [GA102] boost clock
  rtx.maxThreadsPerSm = 1536;             // [PG] 8.6
  rtx.maxBlocksPerSm = 16;                // [PG] 8.6
  rtx.sharedBytesPerSm = 100 * 1024;      // [PG] 8.6: 100 KB per SM
  rtx.maxSharedBytesPerBlock = 99 * 1024; // [PG] 8.6: 99 KB per block
  rtx.l2Bytes = 6ll << 20;                // [GA102] 6 MB
  rtx.dramBytesPerSecond = 936e9;         // [GA102] GDDR6X, 936 GB/s
  rtx.l2BytesPerSecond = 2048 * 1.695e9;  // estimate: 2048 B/clk
  rtx.sharedBytesPerSecond = 128.0 * 82 * 1.695e9; // 128 B/clk/SM, derived
  rtx.l2BytesPerSecondPerSm = 64 * 1.695e9; // estimate: 64 B/clk per SM
  rtx.simtFp32FlopsPerSecond = 35.6e12;     // [GA102] FP32
  rtx.mmaSyncHalfFlopsPerSecond = 71e12;    // [GA102] FP16 with FP32 acc.
  rtx.wgmmaHalfFlopsPerSecond = 0;
  rtx.memoryLatencySeconds = 300 / 1.695e9; // estimate: ~300 cycles
  rtx.launchSeconds = 3e-6;
  devices.push_back(rtx);

  Device h100;
  h100.name = "h100";
  h100.arch = "sm_90";
  h100.sms = 132;                         // [H100] SXM5
  h100.clockHz = 1.83e9;                  // [H100] SXM5 boost clock
  h100.maxThreadsPerSm = 2048;            // [PG] 9.0
  h100.maxBlocksPerSm = 32;               // [PG] 9.0
  h100.sharedBytesPerSm = 228 * 1024;     // [PG] 9.0: 228 KB per SM
  h100.maxSharedBytesPerBlock = 227 * 1024; // [PG] 9.0: 227 KB per block
  h100.l2Bytes = 50ll << 20;              // [H100] 50 MB
  h100.dramBytesPerSecond = 3.35e12;      // [H100] HBM3, 3.35 TB/s
  h100.l2BytesPerSecond = 5632 * 1.83e9;  // estimate: 5632 B/clk
  h100.sharedBytesPerSecond = 128.0 * 132 * 1.83e9; // 128 B/clk/SM
  h100.l2BytesPerSecondPerSm = 64 * 1.83e9; // estimate: 64 B/clk per SM
  h100.simtFp32FlopsPerSecond = 67e12;      // [H100] FP32
  h100.wgmmaHalfFlopsPerSecond = 989e12;    // [H100] FP16/BF16 dense
  h100.mmaSyncHalfFlopsPerSecond = 989e12 * 2 / 3; // [HOP] estimate
  h100.memoryLatencySeconds = 300 / 1.83e9; // estimate: ~300 cycles
  h100.launchSeconds = 3e-6;
  devices.push_back(h100);

  Device h200 = h100;                     // [H200] the same GH100 SMs
  h200.name = "h200";
  h200.l2Bytes = 60ll << 20;              // [H200] BENCHMARKS.md: 60 MB
  h200.dramBytesPerSecond = 4.8e12;       // [H200] HBM3e, 4.8 TB/s
  devices.push_back(h200);
  return devices;
}

const std::vector<Device> &dyncc::cost::getDevices() {
  static const std::vector<Device> devices = makeDevices();
  return devices;
}

const Device *dyncc::cost::lookupDevice(const std::string &name) {
  std::string key = name;
  if (name == "sm_80")
    key = "a100";
  else if (name == "sm_86")
    key = "rtx3090";
  else if (name == "sm_90" || name == "sm_90a")
    key = "h100";
  for (const Device &device : getDevices())
    if (device.name == key)
      return &device;
  return nullptr;
}
