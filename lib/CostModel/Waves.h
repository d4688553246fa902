//===- Waves.h - What every kind's model shares ----------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/CostModel: a grid's blocks in waves (TSCompiler's
// T_wave x waves, the last wave's blocks spread over the SMs), the DRAM
// floor and the launch, the same for GEMMs, convs and row-wise kernels;
// the occupancy and the k-step recursion of the GEMM and conv blocks.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_WAVES_H
#define DYNCC_COSTMODEL_WAVES_H

#include "dyncc/CostModel/Device.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace dyncc::cost::detail {

/// Cycles a block loses per k-step to its barriers (two per step), the
/// issue and wait of its copies and its address arithmetic, beside the
/// step's loads and products (GEMM and conv blocks). Measured, not
/// estimated: `dyncc tune` on an H100 (session 27, BERT-base's four dense
/// layers, 732 samples of 60 variants, docs/CostModel.md "Calibration")
/// put every small-M block of the kernels code generation emits at 0.8-1.0
/// us per k-step whatever its tile, f32 SIMT and f16 mma.sync alike, about
/// 1,500 cycles; 64 (the estimate before) under-predicted them 2.4x (f32)
/// and 5.4x (f16). Re-measure when code generation changes.
constexpr double kStepOverheadCycles = 1500;

/// The share of the mma.sync peak that code generation's tensor-core
/// kernels reach: a fifth, fitted on the same H100 measurements (with
/// kStepOverheadCycles, their log error falls from 1.70 to 0.33 rms). Not
/// a property of the GPU: ldmatrix bank conflicts, one block per SM at 200+
/// registers and mma.sync where cuBLAS uses wgmma (GpuResults.md).
constexpr double kMmaSyncEfficiency = 0.2;

/// The share of the FP32 pipe's multiply-add rate that SIMT code reaches
/// with 2-byte operands: each product's two halves are converted to f32
/// first (cvt instructions beside every FMA). Measured on the H200
/// (2026-11-29): the direct form of ResNet-50's 3x3 64 -> 64 conv over a
/// 56x56 map took 267 us in f16 at batch 8, against 142 us for the best f32
/// variant of the same conv; 0.5 is that ratio, rounded.
constexpr double kSimtHalfOperandEfficiency = 0.5;

/// SIMT's multiply-add rate for operands of `elementBytes`.
inline double getSimtPeak(const Device &device, int64_t elementBytes) {
  return device.simtFp32FlopsPerSecond *
         (elementBytes == 2 ? kSimtHalfOperandEfficiency : 1.0);
}

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

/// Bytes of a shared buffer as code generation allocates it (16-byte
/// multiples, getSharedBufferBytes).
inline int64_t sharedBufferBytes(int64_t bytes) {
  return std::max<int64_t>(16, roundUp(bytes, 16));
}

/// One block's time at a given sharing of the device, and the level that
/// bounds it.
struct BlockTime {
  double seconds = 0;
  const char *bound = "";
};

/// The waves of a grid.
struct Waves {
  int64_t waves = 0;
  /// The blocks one wave holds: SMs x blocks per SM.
  int64_t slots = 0;
  double seconds = 0;
  /// The full waves' bound, or the only wave's.
  const char *bound = "";
};

/// `blocks` blocks, `blocksPerSm` at a time per SM: full waves at that
/// occupancy, then the last wave's blocks spread over the SMs. `blockTime`
/// gives a block's time when `perSm` blocks share its SM and `resident`
/// share the device.
template <typename BlockTimeFn>
Waves runWaves(int64_t blocks, int64_t blocksPerSm, const Device &device,
               BlockTimeFn blockTime) {
  Waves w;
  int64_t perSm = std::max<int64_t>(1, blocksPerSm);
  w.slots = device.sms * perSm;
  w.waves = ceilDiv(blocks, w.slots);
  if (w.waves > 1) {
    BlockTime full = blockTime(perSm, w.slots);
    w.seconds += (w.waves - 1) * full.seconds;
    w.bound = full.bound;
  }
  int64_t tail = blocks - (w.waves - 1) * w.slots;
  BlockTime last = blockTime(
      std::max<int64_t>(1, ceilDiv(tail, device.sms)), tail);
  w.seconds += last.seconds;
  if (w.waves <= 1)
    w.bound = last.bound;
  return w;
}

/// `seconds` at least `dramSeconds` (the bytes that must cross DRAM), plus
/// a launch; `bound` becomes "dram" or "launch" where those dominate.
inline double addFloors(double seconds, double dramSeconds,
                        const Device &device, const char *&bound) {
  if (dramSeconds > seconds) {
    seconds = dramSeconds;
    bound = "dram";
  }
  if (device.launchSeconds > seconds)
    bound = "launch";
  return seconds + device.launchSeconds;
}

/// Blocks of `threads` threads, `sharedBytes` of shared memory and
/// `registersPerThread` one SM holds at once (0 if none fits): the least of
/// the thread, block, shared-memory and register limits, registers
/// allocated per warp in units of 256.
inline int64_t getOccupancy(int64_t threads, int64_t sharedBytes,
                            int64_t registersPerThread, const Device &device) {
  threads = std::max<int64_t>(1, threads);
  int64_t byThreads = device.maxThreadsPerSm / threads;
  int64_t byShared = device.sharedBytesPerSm /
                     (sharedBytes + device.reservedSharedBytesPerBlock);
  int64_t perWarp = roundUp(registersPerThread * device.warpSize, 256);
  int64_t warps = ceilDiv(threads, device.warpSize);
  int64_t byRegisters = device.registersPerSm / (perWarp * warps);
  return std::min({device.maxBlocksPerSm, byThreads, byShared, byRegisters});
}

/// What one k-step of a GEMM or conv block does: its multiply-adds (in
/// FLOP) at `peak` FLOP/s, the bytes its warps or threads read of shared
/// memory, the bytes it loads from L2; and what the block stores at the end.
struct BlockSteps {
  int64_t steps = 1;
  int64_t stages = 1;
  double flops = 0;
  double sharedBytes = 0;
  double loadBytes = 0;
  double storeBytes = 0;
  double peak = 0;
  /// The block's warps, and the warps an SM needs to run at `peak` (its
  /// four partitions each need a warp for tensor cores, two for SIMT FMAs).
  int64_t warps = 1;
  double warpsToFeed = 8;
  /// SIMT products whose every operand is a shared-memory load of its own
  /// (a direct conv's taps): the loads take issue slots beside the FMAs,
  /// so the inner step is their sum, not the longer of the two.
  bool sharedLoadsIssue = false;
};

/// The time of one block of `work` when `perSm` blocks share its SM and
/// `resident` blocks share the device, per level:
///   T_load  = the step's loads over the block's share of L2 bandwidth (the
///             device's L2 split among the resident blocks, at most what
///             one SM pulls split among its blocks);
///   T_inner = max(compute, shared-memory reads) at the SM's rates shared
///             by its blocks, plus the step's overhead;
///   T_block = Vortex's recursion `L + T_load + (n-1) T_step + T_inner +
///             T_store` with `T_step = max(T_load, T_inner, (L + T_load) /
///             (stages - 1))`, the copies issued `stages - 1` steps ahead
///             covering the latency `L`; one stage exposes both every step.
inline BlockTime getBlockTime(const BlockSteps &work, const Device &device,
                              int64_t perSm, int64_t resident) {
  double feed = std::min(1.0, work.warps * perSm / work.warpsToFeed);
  double computeRate = work.peak / device.sms * feed / perSm;
  double sharedRate = device.sharedBytesPerSecond / device.sms / perSm;
  double l2Rate = std::min(device.l2BytesPerSecond / resident,
                           device.l2BytesPerSecondPerSm / perSm);
  double storeRate = std::min(device.dramBytesPerSecond / resident,
                              device.l2BytesPerSecondPerSm / perSm);
  double tCompute = work.flops / computeRate;
  double tShared = work.sharedBytes / sharedRate;
  // Each k-step's barriers and copy issue stall the block; an estimate for
  // calibration (dyncc tune) to replace.
  double tInner = (work.sharedLoadsIssue ? tCompute + tShared
                                         : std::max(tCompute, tShared)) +
                  kStepOverheadCycles / device.clockHz;
  double tLoad = work.loadBytes / l2Rate;
  double tStore = work.storeBytes / storeRate;
  double latency = device.memoryLatencySeconds;
  BlockTime t;
  if (work.stages > 1) {
    double step =
        std::max({tLoad, tInner, (latency + tLoad) / double(work.stages - 1)});
    t.seconds = latency + tLoad + double(work.steps - 1) * step + tInner +
                tStore;
  } else {
    t.seconds = double(work.steps) * (latency + tLoad + tInner) + tStore;
  }
  t.bound = tLoad > tInner ? "l2" : tCompute >= tShared ? "compute" : "shared";
  return t;
}

/// Why a block of `threads` cannot run on `device` (not whole warps, more
/// than a block may have), or nullopt.
inline std::optional<std::string> checkThreads(int64_t threads,
                                               const Device &device) {
  if (threads % device.warpSize)
    return "threads per block (" + std::to_string(threads) +
           ") are not whole warps";
  if (threads > device.maxThreadsPerBlock)
    return "threads per block (" + std::to_string(threads) + ") exceed " +
           std::to_string(device.maxThreadsPerBlock);
  return std::nullopt;
}

/// Why a tile's registers do not fit on `device`, or nullopt: `reported`
/// (ptxas' count, 0 until known) within the limit, else `estimated` with
/// kRegisterHeadroom below it.
inline std::optional<std::string>
checkRegisters(int64_t reported, int64_t estimated, const Device &device) {
  // ptxas' count needs no headroom.
  if (reported > device.maxRegistersPerThread)
    return "registers per thread (" + std::to_string(reported) +
           ") exceed " + std::to_string(device.maxRegistersPerThread);
  if (!reported &&
      estimated > device.maxRegistersPerThread - kRegisterHeadroom)
    return "registers per thread (about " + std::to_string(estimated) +
           ") leave less than " + std::to_string(kRegisterHeadroom) +
           " of headroom";
  return std::nullopt;
}

} // namespace dyncc::cost::detail

#endif // DYNCC_COSTMODEL_WAVES_H
