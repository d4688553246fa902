//===- Waves.h - What every kind's model shares ----------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/CostModel: a grid's blocks in waves (TSCompiler's
// T_wave x waves, the last wave's blocks spread over the SMs), the DRAM
// floor and the launch, the same for GEMMs and row-wise kernels.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_WAVES_H
#define DYNCC_COSTMODEL_WAVES_H

#include "dyncc/CostModel/Device.h"

#include <algorithm>
#include <cstdint>

namespace dyncc::cost::detail {

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

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

} // namespace dyncc::cost::detail

#endif // DYNCC_COSTMODEL_WAVES_H
