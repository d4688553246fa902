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
// docs/CostModel.md, "The host CPU target" and "The host's own search"),
// with constants measured on a host; a cpu session without `dyncc tune`
// measurements selects by it, and an artifact with no GPU target chooses
// its f32 GEMMs' variants among enumerateHostGemmTiles' by it. Pure C++,
// like the GPU model: the run-time links it.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_HOST_H
#define DYNCC_COSTMODEL_HOST_H

#include "dyncc/CostModel/Gemm.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dyncc::cost {

/// The host's costs, per unit of the work a GEMM tile's CPU code does.
/// A GPU thread's turn in a k-step runs, per k, one broadcast of A per
/// thread row and one load of B per vector of the row, and a vector
/// multiply-add per row and vector; the vectors are as wide as the thread
/// row, up to the build's widest (`vectorBytes`). Defaults: the portable
/// x86-64-v2 build's (16-byte vectors, no FMA instruction), fitted by
/// benchmarks/host_model_fit.py to benchmarks/host_tile_sweep.py's
/// measurements (benchmarks/data/host_tiles_xeon, sweeps 1 to 3: 103
/// tiles, the host's own and the GPU search's kinds, on BERT-base's three
/// dense layers at five M; an Intel Xeon with AVX-512, 2 threads);
/// getFittedHostDevice has the other builds'. docs/CostModel.md has the
/// fits and their held-out selection regret. Which tile is fastest turns
/// on their ratios, not their scale.
struct HostDevice {
  /// Pool threads that run blocks side by side.
  int64_t threads = 1;
  /// The widest vector register the build computes a thread row in.
  int64_t vectorBytes = 16;
  /// Vector registers: a thread tile whose accumulator, B's row and a
  /// broadcast need more spills the rest to the stack.
  int64_t vectorRegisters = 16;
  /// The L1 data cache of a core: a k-step's A and B tiles and the thread
  /// row's broadcasts beyond it are read from L2. The run-time sets the
  /// processor's.
  int64_t l1Bytes = 48 * 1024;
  /// A GPU thread's turn in one k-step: restoring its accumulator and
  /// indices, the loop around its products (0 on this build: the fits put
  /// a turn's cost in its vectors).
  double threadStepSeconds = 0;
  /// A vector multiply-add instruction of the thread tile (0.21 ns).
  double vectorOpSeconds = 0.2073e-9;
  /// Four f32 lanes of the thread tile's multiply-adds: with
  /// vectorOpSeconds, what a wider vector costs over a narrower one (0 on
  /// this build, whose vectors are four lanes).
  double laneOpSeconds = 0;
  /// A broadcast of one element of A to a vector, per row and k.
  double broadcastSeconds = 0;
  /// A load of one vector of B's row, per vector and k.
  double rowLoadSeconds = 0;
  /// A turn's k-step is one unrolled body of k x (its vectors and
  /// loads): per k, what each more k of that body costs (the longer
  /// bodies of large k-steps run slower per k than short ones; 1.7 ps).
  double unrollSeconds = 0.001699e-9;
  /// Restoring and saving one vector of the accumulator, per turn.
  double accumulatorSeconds = 0;
  /// One vector the thread tile spills, per k (0.072 ns).
  double spillSeconds = 0.07164e-9;
  /// A broadcast or a row's load missing L1, per k: the loads times the
  /// share of the k-step's working set beyond l1Bytes (0.14 ns).
  double l1MissSeconds = 0.1355e-9;
  /// One element of a k-step's A and B tiles copied to the block's shared
  /// buffers (0.20 ns).
  double copyElementSeconds = 0.1955e-9;
  /// One element of the block's output tile written, epilogue included
  /// (0 on this build).
  double storeElementSeconds = 0;
  /// One f32 partial sum that split-K's second kernel reads (0.17 ns).
  double sumElementSeconds = 0.1675e-9;
  /// A kernel's launch: waking the pool's threads and waiting for them
  /// (4.2 us).
  double launchSeconds = 4.186e-6;
};

/// The constants fitted for the build of the host code of instruction-set
/// level `isa` (dyncc/Runtime/HostIsa.h): "x86-64-v3" (32-byte vectors,
/// FMA instructions) and "x86-64-v4" (64-byte vectors, 32 registers) have
/// their own; any other name, the portable build's, HostDevice's defaults.
/// `threads` is 1.
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
/// of `host.threads`, each block's k-steps (its threads' turns, their
/// broadcasts, loads, multiply-adds and spills, and the copy of its A and
/// B tiles) and its output tile's stores, split-K's sum, and a launch per
/// kernel. Infinite for tiles the model does not describe.
HostPrediction predictHostGemm(const GemmTile &tile, const GemmProblem &problem,
                               const HostDevice &host);

/// What one turn of a thread of `tile` holds on `host`: the vectors of a
/// thread row, and the vector registers its accumulator, a row of B and a
/// broadcast take beyond the build's.
struct HostThreadTile {
  int64_t rowVectors = 0;
  int64_t spilled = 0;
};
HostThreadTile getHostThreadTile(const GemmTile &tile, const HostDevice &host);

/// The device name the host tile search records (its table is for build
/// `level`): `host-LEVEL`.
std::string getHostSearchDevice(const std::string &level);
/// The build a host search's device name is for; empty for any other name
/// (a GPU's).
std::string getHostSearchLevel(const std::string &device);

/// The host tile search's candidates for f32 GEMMs whose block N tile
/// divides `nSplit` (0: any): SIMT tiles of thread rows of 4 to 64 f32
/// (whole 16-byte vectors), whose accumulator fits the widest build's
/// registers (x86-64-v4's 32; the model charges the narrower builds'
/// spills), single-stage, no split-K.
std::vector<GemmTile> enumerateHostGemmTiles(int64_t nSplit = 0);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_HOST_H
