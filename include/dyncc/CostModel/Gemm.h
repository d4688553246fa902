//===- Gemm.h - GEMM tile candidates and their analytical time --*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The GEMM kind of the tile search: hierarchical, hardware-aligned
// candidates (block, warp, instruction; Roller's rTiles), the hard
// constraints that prune them, and a model of their time at a concrete
// problem size (Vortex's per-level load/compute recursion, FTuner's padding
// and wave efficiency, TSCompiler's wave time with occupancy, plus an L2
// level and a launch floor). Pure C++: the run-time can link it.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_GEMM_H
#define DYNCC_COSTMODEL_GEMM_H

#include "dyncc/CostModel/Device.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dyncc::cost {

/// What a GEMM group computes: batch x [M x K] x [K x N], with operands of
/// `operandBytes` per element (2 for f16/bf16, 4 for f32), an f32
/// accumulator, and an output of `outputBytes` per element.
struct GemmProblem {
  int64_t batch = 1;
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
  int64_t operandBytes = 4;
  int64_t outputBytes = 4;
  /// B has a batch dimension of its own (attention), not one shared weight.
  bool batchedB = false;
  /// Products of this shape, of one A and their own B, that each block
  /// computes in turn, a tile of each (fused Q, K and V projections).
  int64_t products = 1;
  /// f16/bf16 operands: tensor cores are possible.
  bool halfOperands() const { return operandBytes == 2; }
  double flops() const { return 2.0 * products * batch * m * n * k; }
};

/// A hierarchical tile: the block's output tile, its warps' (tensor cores)
/// or threads' (SIMT) tiles, the k-step and the pipeline's stages. Each
/// level is a multiple of the one below; the instruction is mma.sync
/// m16n8k16 or, for SIMT, one FMA per element of the thread tile.
/// Each row of a tensor-core operand's shared tile (copied in chunks, read
/// by ldmatrix eight 16-byte rows at a time) is padded by this much, so
/// that rows a multiple of 128 bytes apart do not fall in the same banks
/// (an 8-way conflict; measured on an H100: 82% of the shared wavefronts
/// of an unpadded 128x128 f16 GEMM were conflicts).
constexpr int64_t kMmaRowPaddingBytes = 16;

/// The K of the tensor-core instruction (mma.sync m16n8k16).
constexpr int64_t kMmaK = 16;

/// Whether code generation takes a product whose K is static, `k`, to
/// tensor cores with k-steps of `kStep` and an instruction K of `mmaK`: a K
/// of at most one k-step is one chunk of exactly K, not padded, which the
/// instruction's K must then divide (a tiny model's heads of 4 or 8 stay on
/// SIMT threads). The tile search and the default config follow the same
/// rule, so that no tensor-core config is one code generation runs on SIMT.
inline bool tensorCoresTakeStaticK(int64_t k, int64_t kStep, int64_t mmaK) {
  return k > kStep || k % mmaK == 0;
}

struct GemmTile {
  bool tensorCores = false;
  int64_t blockM = 0, blockN = 0;
  /// Tensor cores: the warp tile. SIMT: unused (0).
  int64_t warpM = 0, warpN = 0;
  /// Every thread's output elements (SIMT: its register tile; tensor
  /// cores: its share of the epilogue and copies).
  int64_t threadM = 0, threadN = 0;
  int64_t kStep = 0;
  int64_t stages = 1;
  /// Parts of K computed by separate blocks into an f32 workspace, which a
  /// second kernel sums before the epilogue (split-K); 1: none.
  int64_t splitK = 1;
  /// Registers per thread as ptxas reported them for the compiled kernel;
  /// 0 until then (the model estimates them). Not part of the tile's
  /// identity.
  int64_t registers = 0;
  /// Shared memory per block where it is known better than the estimate:
  /// ptxas' static bytes plus the kernel's dynamic ones once compiled; 0:
  /// estimateResources' (also for products a block computes in turn, which
  /// share their buffers' bytes). Not part of the identity.
  int64_t sharedBytes = 0;

  int64_t threads() const { return (blockM / threadM) * (blockN / threadN); }
  /// The tile config text code generation parses (dyncc/Tiling/TileConfig.h).
  std::string str() const;
  bool operator==(const GemmTile &o) const;
};

/// Inverts GemmTile::str for a kernel's tile config text, whose sizes may
/// have more dimensions (a batch, tiled by 1): the innermost two are M and
/// N. Returns nullopt for text that is not a GEMM tile (an mma shape other
/// than 16x8x16, a row reduction, sizes that are not positive integers).
std::optional<GemmTile> parseGemmTile(const std::string &text);

/// What a tile needs of the device.
struct GemmResources {
  int64_t threads = 0;
  int64_t sharedBytes = 0;
  /// An estimate until ptxas reports the real count (GemmTile::registers).
  int64_t registersPerThread = 0;
};

GemmResources estimateResources(const GemmTile &tile, int64_t operandBytes);

/// The shared memory of `tile`'s block: one buffer per stage per operand
/// (tensor-core rows padded) and the block's f32 accumulator. With
/// `overlapAccumulator` (a block's only product) the larger of the two: the
/// accumulator takes the operand tiles' bytes once the k-steps are done
/// (dyncc-overlap-shared-accumulators); otherwise their sum.
int64_t estimateSharedBytes(const GemmTile &tile, int64_t operandBytes,
                            bool overlapAccumulator);

/// Why `tile` cannot run on `device` for operands of `operandBytes`
/// (shared memory, registers with headroom, threads, the multiple-of-the-
/// level-below rule, 16-byte rows for vector and cp.async copies), or
/// nullopt if it can.
std::optional<std::string> checkConstraints(const GemmTile &tile,
                                            int64_t operandBytes,
                                            const Device &device);

/// Every tile that satisfies the constraints for operands of
/// `operandBytes` on `device`: tensor-core tiles for f16/bf16, SIMT tiles
/// always (the small-M candidates).
std::vector<GemmTile> enumerateGemmTiles(int64_t operandBytes,
                                         const Device &device);

/// The SIMT tiles whose block N divides `headSize`, for a product whose
/// N is split into heads of fewer columns than any tile of
/// enumerateGemmTiles spans (a block's N tile must not straddle two heads:
/// GemmProblemExprs::nSplit): block N from the head size down, each a
/// whole number of 16-byte rows (4 f32 columns, 8 f16), every thread
/// tile, M tile and k-step of the usual SIMT candidates that satisfies the
/// constraints. Empty where no such block N exists (heads of 1 or 2 f32
/// columns, or fewer than 8 f16 ones) or where the usual candidates
/// already divide the head size (32 columns or more).
std::vector<GemmTile> enumerateNarrowGemmTiles(int64_t operandBytes,
                                               const Device &device,
                                               int64_t headSize);

/// Split-K candidates of `tile` for a GEMM of static depth `k`: its split
/// into each of kSplitKParts parts of whole k-steps (predictGemm takes a
/// split only where the unsplit grid has fewer blocks than SMs). Every
/// tile splits: limited to tiles of at most 16 x 128, the search had no
/// split where M grew past 16 rows a block, and a GEMM's predicted rate
/// fell 2.4x from one row to the next (f32 N = 256, K = 2304: 15.3
/// TFLOP/s at M = 528, 6.3 at 529). Splits of 2 and 8 fill grids that a
/// split of 4 or 16 takes past two waves (an im2col 512 -> 512 conv's
/// GEMM at batch 8: 64 us where 4 and 16 alone gave 98).
constexpr int64_t kSplitKParts[] = {2, 4, 8, 16};
std::vector<GemmTile> getSplitKTiles(const GemmTile &tile, int64_t k);

/// The model's account of one tile at one problem size.
struct GemmPrediction {
  double seconds = 0;
  int64_t blocks = 0;
  int64_t blocksPerSm = 0;
  int64_t waves = 0;
  /// Useful over computed multiply-adds (the grid edge's padding).
  double paddingEfficiency = 1;
  /// Blocks over the slots of the waves they take.
  double waveEfficiency = 1;
  /// Which level bounds it: "compute", "shared", "l2", "dram", "launch";
  /// "split" for a split-K tile on a grid of at least one block per SM
  /// unsplit, where it does not apply (seconds: infinity).
  const char *bound = "";
};

/// Blocks of `tile` one SM holds at once (0 if none fits).
int64_t getBlocksPerSm(const GemmTile &tile, int64_t operandBytes,
                       const Device &device);

/// The predicted time of `tile` for `problem` on `device`.
GemmPrediction predictGemm(const GemmTile &tile, const GemmProblem &problem,
                           const Device &device);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_GEMM_H
