//===- Conv.h - Conv tile candidates and their analytical time --*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The conv kind of the tile search: direct 2-D convolutions over NCHW, as
// code generation builds them (docs/Passes.md, "GEMM and conv blocks"). A
// block computes [channels x rows x columns] of one image's output; per
// k-step its input window (k-step channels, the rows and columns its
// outputs read, halo included) and its weights are copied to shared
// memory, then each thread multiplies its register tile. The candidates,
// the hard constraints code generation imposes, and the time at a
// concrete problem size: the GEMM model's per-level recursion, with the
// window's reuse in the loads. Pure C++.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_COSTMODEL_CONV_H
#define DYNCC_COSTMODEL_CONV_H

#include "dyncc/CostModel/Device.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dyncc::cost {

/// A 2-D convolution: input [batch, groups * inC, H, W] (padded), weights
/// [groups * outC, inC, kh, kw], output [batch, groups * outC, outH, outW],
/// elements of `elementBytes` (operands and result), an accumulator of that
/// type. `inC` and `outC` are a group's: each group's outputs read only its
/// own input channels (ONNX Conv's `group`; a depthwise conv has one input
/// and one output channel per group).
struct ConvProblem {
  int64_t batch = 1;
  int64_t outC = 1, outH = 1, outW = 1;
  int64_t inC = 1;
  int64_t groups = 1;
  /// 1 for a 1-D conv: its output is [batch, groups * outC, outW], outH
  /// and kh are 1, and its tiles have three sizes a level
  /// (ConvTile::spatialDims).
  int64_t spatialDims = 2;
  int64_t kh = 1, kw = 1;
  int64_t strideH = 1, strideW = 1;
  int64_t dilationH = 1, dilationW = 1;
  int64_t elementBytes = 4;
  /// Whether the output's rows (columns) are a compile-time constant.
  /// Code generation keeps a thread's outputs in registers across k-steps
  /// only where every block's tile is whole: the block tile divides a
  /// static size (ConvTile::accumulatesInMemory).
  bool staticH = true, staticW = true;

  double flops() const {
    return 2.0 * batch * groups * outC * outH * outW * inC * kh * kw;
  }

  /// Whether a block's channel tile runs over the groups: where a group has
  /// one output channel (a depthwise conv), code generation drops that unit
  /// loop and the output is [batch, groups, outH, outW]. Otherwise it runs
  /// over a group's output channels, and a block is in one group (its tile
  /// sizes align to the innermost loops, so the group's loop takes the
  /// batch's 1).
  bool spansGroups() const { return groups > 1 && outC == 1; }
  /// The extent a block's channel tile runs over: the groups, or a group's
  /// output channels (spansGroups).
  int64_t blockedChannels() const { return spansGroups() ? groups : outC; }

  /// The static parts in the order of dyncc.conv_problem's and the
  /// manifest's `window`: input channels (a group's), filter rows and
  /// columns, strides and dilations along rows and columns, and the groups
  /// where there are several.
  std::vector<int64_t> window() const;
  /// Sets the static parts from `values` (window()'s order); false, and
  /// nothing set, unless there are 7 or 8, all positive.
  bool setWindow(const int64_t *values, size_t size);
};

/// A block's output tile over [outC, outH, outW] (one image), each
/// thread's register tile, and the k-step: the most iterations of each
/// reduction loop (input channels, filter rows, filter columns) per step,
/// loop by loop. A step of a few channels by one filter row and all its
/// columns (`k 3x1x7`) keeps a 7x7 conv over 3 channels at 7 steps where
/// one k-step for all three loops needs 147 (7 taps split only into 1s)
/// or unrolls 147 multiply-adds per output (a step of 7).
struct ConvTile {
  int64_t blockC = 0, blockH = 0, blockW = 0;
  int64_t threadC = 0, threadH = 0, threadW = 0;
  int64_t kChannels = 0, kRows = 0, kColumns = 0;
  /// 1 for a 1-D conv's tile: no rows (blockH and threadH are 1), and its
  /// text has three sizes a level, which code generation aligns to the
  /// output's [batch, channels, columns].
  int64_t spatialDims = 2;
  /// Registers per thread as ptxas reported them for the compiled kernel;
  /// 0 until then (the model estimates them). Not part of the identity.
  int64_t registers = 0;

  int64_t threads() const {
    return (blockC / threadC) * (blockH / threadH) * (blockW / threadW);
  }
  /// One k-step for all three loops.
  void setKStep(int64_t k) { kChannels = kRows = kColumns = k; }
  /// Whether a thread's outputs go through memory at every k-step (a load
  /// and a store each) rather than stay in registers: where a block's tile
  /// can be cut short by the output's edge (a dynamic size, or a static one
  /// the block tile does not divide), its threads' tiles are of dynamic
  /// size, which dyncc-private-accumulators does not take.
  bool accumulatesInMemory(const ConvProblem &problem) const;
  /// The tile config text for an NCHW output (`block 1xCxHxW thread
  /// 1xcxhxw k K`, or `k CxRxS` where the loops' steps differ;
  /// dyncc/Tiling/TileConfig.h); for a 1-D conv's NCW output `block
  /// 1xCxW thread 1xcxw k K`.
  std::string str() const;
  bool operator==(const ConvTile &o) const;
};

/// Inverts ConvTile::str: four sizes per level (three for a 1-D conv's),
/// the batch's 1, one k-step or three; nullopt for text that is not a conv
/// tile.
std::optional<ConvTile> parseConvTile(const std::string &text);

/// One k-step of `tile` on `problem`: the input channels, filter rows and
/// filter columns it covers, and the steps a block takes. Code generation
/// drops the reduction loops of extent 1 (one input channel per group, a
/// filter of one row or column); where fewer than three loops remain,
/// every one of them steps by the largest of the tile's three k-steps
/// (TileConfig::getKSteps), so a depthwise conv's step is uniform over its
/// filter's rows and columns.
struct ConvSteps {
  int64_t channels = 1, rows = 1, columns = 1;
  int64_t steps = 1;
  /// Multiply-adds per output per step.
  int64_t taps() const { return channels * rows * columns; }
};

ConvSteps getConvSteps(const ConvTile &tile, const ConvProblem &problem);

struct ConvResources {
  int64_t threads = 0;
  /// The input window's and the weights' shared buffers.
  int64_t sharedBytes = 0;
  /// An estimate until ptxas reports the real count.
  int64_t registersPerThread = 0;
};

ConvResources estimateResources(const ConvTile &tile,
                                const ConvProblem &problem);

/// Multiply-adds a thread's product unrolls per step, at most: code
/// generation unrolls each step's product whole (what the default config's
/// k-step is chosen by: 16 channels of a 3x3 window over 8 outputs spilled
/// on sm_80).
constexpr int64_t kMaxUnrolledTaps = 128;
constexpr int64_t kMaxUnrolledProducts = 1024;

/// Why `tile` cannot run `problem` (its static parts: channels, window,
/// strides) on `device`, or nullopt: the multiple-of-the-level-below rule,
/// whole warps, a k-step that never splits a filter row or column (code
/// generation promotes no other), the unrolled product, shared memory
/// within 48 KB (static buffers), registers with headroom.
std::optional<std::string> checkConstraints(const ConvTile &tile,
                                            const ConvProblem &problem,
                                            const Device &device);

/// Every tile that satisfies the constraints for `problem` on `device`.
std::vector<ConvTile> enumerateConvTiles(const ConvProblem &problem,
                                         const Device &device);

struct ConvPrediction {
  double seconds = 0;
  int64_t blocks = 0;
  int64_t blocksPerSm = 0;
  int64_t waves = 0;
  /// Useful over computed multiply-adds (the grid edge, partial steps).
  double paddingEfficiency = 1;
  /// The bytes the conv moves at least once (every group's input, weights
  /// and output): the DRAM floor's.
  double uniqueBytes = 0;
  /// "compute", "shared", "l2", "dram", "launch".
  const char *bound = "";
};

/// Blocks of `tile` one SM holds at once (0 if none fits).
int64_t getBlocksPerSm(const ConvTile &tile, const ConvProblem &problem,
                       const Device &device);

ConvPrediction predictConv(const ConvTile &tile, const ConvProblem &problem,
                           const Device &device);

/// A conv's forms at one size: the direct conv's best predicted time, and
/// im2col's two:
/// - per image: the copy of the windows into [batch, inC*kh*kw, outH,
///   outW] (an elementwise kernel writing that and reading the input) plus
///   the best GEMM over it, `batch x [M outC x K inC*kh*kw] x [K x N
///   outH*outW]` (a 1x1 conv over the copy; split-K tiles included);
/// - folded: the copy into [inC*kh*kw, batch, outH, outW], one GEMM
///   `[M outC x K inC*kh*kw] x [K x N batch*outH*outW]`, and a pass that
///   transposes its [outC, batch, outH, outW] to NCHW (`unfold`).
struct ConvFormTimes {
  double direct = 0;
  double copy = 0;
  double gemm = 0;
  double foldedCopy = 0;
  double foldedGemm = 0;
  double unfold = 0;
  double perImage() const { return copy + gemm; }
  double folded() const { return foldedCopy + foldedGemm + unfold; }
  /// im2col's time in the form chosen (getFoldRatio).
  double im2col(bool fold) const { return fold ? folded() : perImage(); }
};

/// The forms' times at each of `points`, sizes of one conv (channels,
/// window, strides, dilations and element type equal; batch and image
/// sizes free), in order.
std::vector<ConvFormTimes>
predictConvForms(const std::vector<ConvProblem> &points, const Device &device);

/// The number of sizes dyncc-conv-im2col compares a conv's forms at:
/// log-spaced from every symbol at its lower bound to every one at its
/// upper bound (getLogSpacedValue).
constexpr int kConvFormPoints = 5;

/// The geometric mean over `times` of im2col's time (in the folded form,
/// or per image) over the direct conv's: below 1 where im2col is predicted
/// faster, every size weighing alike (the largest sizes would otherwise
/// decide alone).
double getIm2ColRatio(const std::vector<ConvFormTimes> &times, bool fold);

/// The geometric mean over `times` of im2col's folded time over its time
/// per image: below 1 where folding the batch into the GEMM is predicted
/// faster.
double getFoldRatio(const std::vector<ConvFormTimes> &times);

} // namespace dyncc::cost

#endif // DYNCC_COSTMODEL_CONV_H
