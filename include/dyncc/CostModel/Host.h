//===- Host.h - The host CPU target's time of a GEMM tile -------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU target runs the variants the tile search chose for the GPU: a
// block per pool thread at a time, and a block's threads one after
// another, between the barriers of each k-step. So the GPU's pick is not
// the host's: at M = 16 the GPU fills its SMs with small tiles, which on
// the host are thousands of blocks of a few serial threads, each paying
// its k-steps' overhead for a few multiply-adds. This model predicts a
// SIMT GEMM tile's time on the host from how that code runs (see
// docs/CostModel.md, "The host CPU target"), with constants measured on a
// host; a cpu session without `dyncc tune` measurements selects by it.
// Pure C++, like the GPU model: the run-time links it.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_HOST_H
#define DYNCC_COSTMODEL_HOST_H

#include "dyncc/CostModel/Gemm.h"

#include <cstdint>
#include <string>

namespace dyncc::cost {

/// The host's costs, per unit of the work a GEMM tile's CPU code does.
/// Defaults: fitted (benchmarks/host_model_fit.py) to `dyncc tune --device
/// cpu`'s measurements of BERT-base's 8 variants of each of its 7 GEMM
/// groups at 6 sequence lengths (an AMD EPYC, 2 threads, the portable
/// x86-64-v2 build of the host code: 16-byte vectors, no FMA instruction);
/// getFittedHostDevice has the other builds'. docs/CostModel.md has the
/// fits and their held-out error. Which tile is fastest turns on their
/// ratios, not their scale.
struct HostDevice {
  /// Pool threads that run blocks side by side.
  int64_t threads = 1;
  /// The bytes of a vector register (the accumulator's rows are vectors
  /// of this many bytes of f32).
  int64_t vectorBytes = 16;
  /// A GPU thread's turn in one k-step: restoring its accumulator and
  /// indices, the loop around its products (9.8 ns).
  double threadStepSeconds = 9.797e-9;
  /// One vector multiply-add of the thread tile: a broadcast of A times a
  /// vector of B's row, added to an accumulator row (0.28 ns).
  double vectorOpSeconds = 0.2805e-9;
  /// One element of a k-step's A and B tiles copied to the block's shared
  /// buffers (0.58 ns).
  double copyElementSeconds = 0.579e-9;
  /// One element of the block's output tile written, epilogue included
  /// (0.28 ns).
  double storeElementSeconds = 0.2811e-9;
  /// One f32 partial sum that split-K's second kernel reads (0.17 ns).
  double sumElementSeconds = 0.1675e-9;
  /// A kernel's launch: waking the pool's threads and waiting for them
  /// (4.2 us).
  double launchSeconds = 4.186e-6;
};

/// The constants fitted for the build of the host code of instruction-set
/// level `isa` (dyncc/Runtime/HostIsa.h): "x86-64-v3" and "x86-64-v4"
/// have their own (32-byte vectors, FMA instructions); any other name,
/// the portable build's, HostDevice's defaults. `threads` is 1.
HostDevice getFittedHostDevice(const std::string &isa);

struct HostPrediction {
  double seconds = 0;
  /// Blocks, and the rounds of `threads` blocks they take.
  int64_t blocks = 0;
  int64_t rounds = 0;
  /// One block's time.
  double blockSeconds = 0;
};

/// Whether the host model describes `tile`: SIMT tiles (the CPU runs a
/// tensor-core tile's warps through code this model does not describe).
bool isHostModelled(const GemmTile &tile);

/// The time of `tile` computing `problem` on the host: the blocks in rounds
/// of `host.threads`, each block's k-steps (its threads' turns and
/// multiply-adds, and the copy of its A and B tiles) and its output tile's
/// stores, split-K's sum, and a launch per kernel. Infinite for tiles the
/// model does not describe.
HostPrediction predictHostGemm(const GemmTile &tile, const GemmProblem &problem,
                               const HostDevice &host);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_HOST_H
