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

namespace dyncc::cost::detail {

/// Cycles a block loses per k-step to its barriers (two per step) and the
/// issue of its copies, beside the step's loads and products (GEMM and conv
/// blocks). An estimate.
constexpr double kStepOverheadCycles = 64;

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

/// A block of `steps` k-steps, each loading for `load` and computing for
/// `inner` seconds, then storing for `store`: Vortex's recursion
/// `L + T_load + (n-1) T_step + T_inner + T_store` with
/// `T_step = max(T_load, T_inner, (L + T_load) / (stages - 1))`, the copies
/// issued `stages - 1` steps ahead covering the latency `L`; one stage
/// exposes both every step.
inline double getBlockSeconds(int64_t steps, int64_t stages, double latency,
                              double load, double inner, double store) {
  if (stages > 1) {
    double step = std::max({load, inner, (latency + load) / double(stages - 1)});
    return latency + load + double(steps - 1) * step + inner + store;
  }
  return double(steps) * (latency + load + inner) + store;
}

} // namespace dyncc::cost::detail

#endif // DYNCC_COSTMODEL_WAVES_H
