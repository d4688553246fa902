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
// (ArenaPlanner::place). A planner reused over a session's new shapes first
// tries the placements it made before, each block just above the blocks
// that were below it: an offset per block that is the largest end below
// it, valid at any sizes, and taken where it reaches the peak.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_ARENAPLAN_H
#define DYNCC_LIB_RUNTIME_ARENAPLAN_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace dyncc::runtime {

struct Manifest;

/// The alignment of every temporary's offset in the arena.
inline constexpr uint64_t kArenaAlignment = 64;

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

/// A placement a planner keeps for later calls (ArenaPlanner::place): which
/// blocks were empty, the others by offset, and per block the blocks it
/// meets that were below it (CSR). Not changed once made.
struct RememberedPlacement {
  std::vector<uint8_t> empty;
  std::vector<uint32_t> order, belowBegin, below;
};

/// Placements shared by the planners of one plan's sessions (a model's), so
/// that a session's first runs place as earlier sessions did: at most
/// ArenaPlanner::kRememberedPlacements, one per set of empty blocks, the
/// oldest replaced. For the lifetimes of the first planner to share; others
/// neither take nor give. Safe to use from several threads.
class SharedPlacements {
public:
  using Lifetimes = std::vector<std::pair<size_t, size_t>>;
  /// Appends to `into` the placements for `lifetimes` it does not hold.
  /// `matched`, where given, is the caller's record that its lifetimes
  /// were found to be these placements' (which do not change once set):
  /// set at the first match, it spares the comparison of the two at
  /// later calls (a session's first run read 4.7 KB, cold, to compare
  /// BERT-base's 298).
  void collect(const Lifetimes &lifetimes,
               std::vector<std::shared_ptr<const RememberedPlacement>> &into,
               bool *matched = nullptr);
  /// Adds `placement`, made for `lifetimes` (`matched` as for collect).
  void add(const Lifetimes &lifetimes,
           std::shared_ptr<const RememberedPlacement> placement,
           bool *matched = nullptr);
  /// Adds the compiler's placements (the manifest's `arena`), of which
  /// only `empty` and `order` are given: each block's `below` is the
  /// blocks it meets that come before it in `order`.
  void seed(const Lifetimes &lifetimes,
            std::vector<RememberedPlacement> placements);

private:
  /// Whether `lifetimes` are forLifetimes (the lock held): not compared
  /// where `matched` records an earlier match, and recorded there.
  bool holdsFor(const Lifetimes &lifetimes, bool *matched) const;

  std::mutex mutex;
  Lifetimes forLifetimes;
  std::vector<std::shared_ptr<const RememberedPlacement>> placements;
};

/// How a plan ahead selects the variant of group `group` at `symbols` (a
/// value per symbol slot); false where none can be.
using VariantPicker =
    std::function<bool(size_t group, const int64_t *symbols, size_t &variant)>;

/// Plans the arena ahead as planArenaAhead does (the same shapes), but
/// selecting the split-K workspaces' variants with `pick` and placing into
/// `shared`, a model's sessions' placements: where `shared` already holds a
/// placement that reaches the live-set peak at a shape it is taken, and a
/// placement made is added to it. A model loaded on a device its artifact
/// has `dyncc tune` measurements for plans the selections they make.
void planArenaAheadInto(const Manifest &manifest, const VariantPicker &pick,
                        const std::shared_ptr<SharedPlacements> &shared);

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
  /// the lifetimes change. Before all that, where no block is fixed, the
  /// placements of earlier calls (kRememberedPlacements, one per set of
  /// empty blocks, and those of the planners sharing with this one) are
  /// tried at these sizes; one that reaches the live-set peak is taken and
  /// no placement is made. Deterministic for a sequence of calls (of this
  /// planner and those it shares with).
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
  /// Shares placements with the other planners of `shared` (a model's
  /// sessions'), from the next call on.
  void share(std::shared_ptr<SharedPlacements> shared);

  /// The placements kept for later calls: BERT-base's 298 temporaries
  /// over batch 1-8 and sequence 1-512 have 13 sets of empty workspaces.
  static constexpr size_t kRememberedPlacements = 16;
  /// The calls above the peak whose repairs find nothing before they stop.
  static constexpr int kFruitlessRepairCalls = 2;

  /// The placements the last call made (1 for largest-first alone, 0
  /// where a remembered placement held at the peak).
  int lastPlacements() const { return placements; }

private:
  /// Records which blocks are empty at `sizes` (emptyNow).
  void markEmpty();

  /// Keeps `offsets`, a placement at `sizes` with no fixed block, for
  /// placeAsRemembered: per block, the blocks it meets below it.
  void remember(const std::vector<uint64_t> &offsets);

  /// Places the blocks at `sizes` largest first, then tries other orders
  /// where that is above the peak (the repairs `place` describes);
  /// `out.livePeak` is set. False on overflow.
  bool placeAnew(const std::vector<ArenaBlock> &blocks, ArenaPlacement &out);

  /// Places the blocks at `sizes` as a remembered placement: the one for
  /// the same empty blocks, else one whose empty blocks are all empty now;
  /// true where one reaches the peak (placeAs).
  bool placeAsRemembered(ArenaPlacement &out);

  /// Places each block just above the blocks it meets that were below it
  /// in `r`, at `sizes`; true where the arena is at `out.livePeak`, which
  /// no placement beats. Always valid where the blocks empty in `r` are
  /// empty now. `out.offsets` holds a 0 per block.
  bool placeAs(const RememberedPlacement &r, ArenaPlacement &out);

  /// Keeps `placement`, the least recently used one out where there are
  /// kRememberedPlacements.
  void keep(std::shared_ptr<const RememberedPlacement> placement);

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
  /// The placements kept for placeAsRemembered, each with the call that
  /// last used it; cleared when the lifetimes change.
  struct Remembered {
    std::shared_ptr<const RememberedPlacement> placement;
    uint64_t lastUse = 0;
  };
  std::vector<Remembered> remembered;
  std::vector<uint8_t> emptyNow;
  std::shared_ptr<SharedPlacements> shared;
  /// Whether `shared` was found to hold placements for these lifetimes;
  /// cleared when either changes.
  bool sharedMatched = false;
  std::vector<std::shared_ptr<const RememberedPlacement>> collected;
  uint64_t calls = 0;
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
