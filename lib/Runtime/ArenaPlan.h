//===- ArenaPlan.h - Temporaries placed in one arena by lifetime -*- C++
//-*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The manifest gives each temporary buffer a lifetime, the steps from the
// one that writes it to the last one that reads it. Once a run's shapes fix
// their sizes, placeInArena assigns byte offsets so that temporaries live at
// the same time never overlap: largest first, each at the lowest aligned
// offset clear of the temporaries already placed whose lifetimes meet its
// own (greedy by size, as TFLite's arena planner). The arena it asks for is
// close to the live-set peak, the most bytes live at any one step, which it
// also reports; where it is above the peak, a few other orders are tried
// (ArenaPlanner::place).
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_ARENAPLAN_H
#define DYNCC_LIB_RUNTIME_ARENAPLAN_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace dyncc::runtime {

/// One temporary: its byte size and its lifetime [first, last] in steps.
/// A `fixed` block keeps `offset` (a temporary already written when sizes
/// bound from data in the middle of a run place the rest).
struct ArenaBlock {
  uint64_t size = 0;
  size_t first = 0;
  size_t last = 0;
  bool fixed = false;
  uint64_t offset = 0;
};

struct ArenaPlacement {
  /// Per block, its offset (a multiple of the alignment).
  std::vector<uint64_t> offsets;
  /// The bytes the arena needs: the largest offset + size.
  uint64_t size = 0;
  /// The most bytes live at one step, each size rounded to the alignment.
  uint64_t livePeak = 0;
};

/// Places temporaries whose lifetimes do not change between runs (a
/// session's): the pairs live together are found once, so a placement looks
/// only at the blocks a block meets (a handful in a transformer's plan)
/// instead of every block placed before it, and reuses its scratch.
class ArenaPlanner {
public:
  /// Places `blocks`, the fixed ones where they are and the others around
  /// them; false when the sizes overflow 64 bits. `alignment` is a power of
  /// two, and fixed offsets are multiples of it. Largest first (ties by
  /// first use, then index), each at the lowest offset clear of the placed
  /// blocks it meets. Where that arena is above the live-set peak, the
  /// order that did best for the same lifetimes last time is tried, then
  /// repairs (the block at the top, or one it meets from the highest in
  /// the arena down, placed first), at most
  /// kRepairPlacements placements more; the smallest arena wins. Where
  /// they have found nothing in kFruitlessRepairCalls calls for these
  /// lifetimes and never anything before, they are not tried again until
  /// the lifetimes change. Deterministic for a sequence of calls.
  bool place(const std::vector<ArenaBlock> &blocks, uint64_t alignment,
             ArenaPlacement &out);

  /// Finds the pairs of `blocks` live together, unless their lifetimes are
  /// the last call's (place calls it; a session calls it once it knows its
  /// temporaries, ahead of its first run).
  void prepare(const std::vector<ArenaBlock> &blocks);

  /// The most placements a call tries beyond largest-first: the im2col
  /// ResNets' plans (light_resnet50, the generator's f16 ResNet-50) reach
  /// the peak in two.
  static constexpr int kRepairPlacements = 4;
  /// The calls above the peak whose repairs find nothing before they stop.
  static constexpr int kFruitlessRepairCalls = 2;

  /// The placements the last call made (1 for largest-first alone).
  int lastPlacements() const { return placements; }

private:
  /// Places the blocks in `inOrder` (the fixed ones where they are), each
  /// at the lowest offset clear of the placed blocks it meets; false on
  /// overflow.
  bool placeInOrder(const std::vector<ArenaBlock> &blocks,
                    const std::vector<size_t> &inOrder,
                    std::vector<uint64_t> &offsets, uint64_t &size);

  std::vector<std::pair<size_t, size_t>> lifetimes;
  /// Per block, the blocks live at some step with it (CSR).
  std::vector<uint32_t> meetsBegin, meets;
  size_t steps = 0;
  // Scratch, kept between calls.
  std::vector<uint64_t> sizes;
  std::vector<size_t> order;
  std::vector<uint8_t> isPlaced;
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  std::vector<uint64_t> starts, ends;
  std::vector<uint64_t> trialOffsets;
  std::vector<size_t> trialOrder, candidates;
  /// The order of the smallest arena the last call found (empty: none yet).
  std::vector<size_t> bestOrder;
  /// Whether an order other than largest-first ever shrank the arena for
  /// these lifetimes, and the calls whose repairs did not.
  bool repairsFound = false;
  int fruitlessRepairs = 0;
  int placements = 0;
};

/// One placement with a planner of its own.
bool placeInArena(const std::vector<ArenaBlock> &blocks, uint64_t alignment,
                  ArenaPlacement &out);

} // namespace dyncc::runtime

#endif // DYNCC_LIB_RUNTIME_ARENAPLAN_H
