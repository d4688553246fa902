//===- ArenaPlan.cpp - Temporaries placed in one arena by lifetime --------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ArenaPlan.h"

#include <algorithm>
#include <numeric>

using namespace dyncc::runtime;

namespace {
/// Per block, the blocks live at some step with it (CSR).
void findMeets(const std::vector<std::pair<size_t, size_t>> &lifetimes,
               std::vector<uint32_t> &meetsBegin,
               std::vector<uint32_t> &meets) {
  size_t n = lifetimes.size();
  meetsBegin.assign(n + 1, 0);
  meets.clear();
  for (size_t i = 0; i < n; ++i) {
    meetsBegin[i] = static_cast<uint32_t>(meets.size());
    for (size_t j = 0; j < n; ++j)
      if (j != i && !(lifetimes[j].second < lifetimes[i].first ||
                      lifetimes[i].second < lifetimes[j].first))
        meets.push_back(static_cast<uint32_t>(j));
  }
  meetsBegin[n] = static_cast<uint32_t>(meets.size());
}
} // namespace

void ArenaPlanner::prepare(const std::vector<ArenaBlock> &blocks) {
  size_t n = blocks.size();
  bool same = lifetimes.size() == n;
  for (size_t i = 0; same && i < n; ++i)
    same = lifetimes[i].first == blocks[i].first &&
           lifetimes[i].second == blocks[i].last;
  if (same)
    return;
  bestOrder.clear();
  remembered.clear();
  sharedMatched = false;
  repairsFound = false;
  fruitlessRepairs = 0;
  lifetimes.resize(n);
  steps = 0;
  for (size_t i = 0; i < n; ++i) {
    lifetimes[i] = {blocks[i].first, blocks[i].last};
    steps = std::max(steps, blocks[i].last + 1);
  }
  findMeets(lifetimes, meetsBegin, meets);
}

bool ArenaPlanner::placeInOrder(const std::vector<ArenaBlock> &blocks,
                                const std::vector<size_t> &inOrder,
                                std::vector<uint64_t> &offsets,
                                uint64_t &size) {
  ++placements;
  size_t n = blocks.size();
  offsets.assign(n, 0);
  size = 0;
  isPlaced.assign(n, 0);
  auto markPlaced = [&](size_t i) {
    isPlaced[i] = 1;
    uint64_t end;
    if (__builtin_add_overflow(offsets[i], sizes[i], &end))
      return false;
    size = std::max(size, end);
    return true;
  };
  // The fixed blocks first, where they are.
  for (size_t i : inOrder) {
    if (!blocks[i].fixed)
      continue;
    offsets[i] = blocks[i].offset;
    if (!markPlaced(i))
      return false;
  }
  for (size_t i : inOrder) {
    // An empty block stays at 0: it overlaps nothing, and no block placed
    // after it has to clear it.
    if (blocks[i].fixed || sizes[i] == 0)
      continue;
    // The placed blocks live with this one, by offset: it goes in the
    // first gap that holds it.
    taken.clear();
    for (uint32_t k = meetsBegin[i]; k < meetsBegin[i + 1]; ++k) {
      uint32_t j = meets[k];
      if (isPlaced[j])
        taken.push_back({offsets[j], sizes[j]});
    }
    std::sort(taken.begin(), taken.end());
    uint64_t offset = 0;
    for (auto [at, size] : taken) {
      uint64_t end;
      if (__builtin_add_overflow(offset, sizes[i], &end))
        return false;
      if (end <= at)
        break; // Fits below this block, hence below every one after it.
      if (__builtin_add_overflow(at, size, &end))
        return false;
      offset = std::max(offset, end);
    }
    offsets[i] = offset;
    if (!markPlaced(i))
      return false;
  }
  return true;
}

void ArenaPlanner::markEmpty() {
  size_t n = sizes.size();
  emptyNow.resize(n);
  for (size_t i = 0; i < n; ++i)
    emptyNow[i] = sizes[i] == 0;
}

void ArenaPlanner::remember(const std::vector<uint64_t> &offsets) {
  size_t n = offsets.size();
  auto made = std::make_shared<RememberedPlacement>();
  RememberedPlacement &r = *made;
  r.empty = emptyNow;
  for (size_t i = 0; i < n; ++i)
    if (sizes[i] != 0)
      r.order.push_back(static_cast<uint32_t>(i));
  std::sort(r.order.begin(), r.order.end(),
            [&](uint32_t a, uint32_t b) { return offsets[a] < offsets[b]; });
  // Two non-empty blocks live together never share an offset, so the
  // lower one is below the other.
  r.belowBegin.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    r.belowBegin[i] = static_cast<uint32_t>(r.below.size());
    if (sizes[i] == 0)
      continue;
    for (uint32_t k = meetsBegin[i]; k < meetsBegin[i + 1]; ++k) {
      uint32_t j = meets[k];
      if (sizes[j] != 0 && offsets[j] < offsets[i])
        r.below.push_back(j);
    }
  }
  r.belowBegin[n] = static_cast<uint32_t>(r.below.size());
  if (shared)
    shared->add(lifetimes, made, &sharedMatched);
  keep(std::move(made));
}

void ArenaPlanner::keep(std::shared_ptr<const RememberedPlacement> placement) {
  // One per set of empty blocks: a new one replaces the old.
  Remembered *slot = nullptr;
  for (Remembered &r : remembered)
    if (r.placement->empty == placement->empty)
      slot = &r;
  if (!slot && remembered.size() < kRememberedPlacements)
    slot = &remembered.emplace_back();
  if (!slot)
    slot = &*std::min_element(remembered.begin(), remembered.end(),
                              [](const Remembered &a, const Remembered &b) {
                                return a.lastUse < b.lastUse;
                              });
  slot->placement = std::move(placement);
  slot->lastUse = ++calls;
}

bool ArenaPlanner::placeAsRemembered(ArenaPlacement &out) {
  for (size_t k = 0; k < remembered.size(); ++k)
    if (remembered[k].placement->empty == emptyNow) {
      if (!placeAs(*remembered[k].placement, out))
        return false;
      remembered[k].lastUse = ++calls;
      return true;
    }
  // One where the blocks empty then are empty now, if any: the blocks
  // empty only now keep their place and take no bytes.
  for (size_t k = 0; k < remembered.size(); ++k) {
    const std::vector<uint8_t> &empty = remembered[k].placement->empty;
    bool holds = true;
    for (size_t i = 0; i < emptyNow.size() && holds; ++i)
      holds = !empty[i] || emptyNow[i];
    if (holds && placeAs(*remembered[k].placement, out)) {
      remembered[k].lastUse = ++calls;
      return true;
    }
  }
  return false;
}

bool ArenaPlanner::placeAs(const RememberedPlacement &r, ArenaPlacement &out) {
  if (r.empty.size() != sizes.size())
    return false;
  std::fill(out.offsets.begin(), out.offsets.end(), 0);
  // By the remembered offsets, lowest first: each block just above the
  // blocks it meets that were below it. Any two non-empty blocks live
  // together were one below the other, so they stay apart whatever the
  // sizes; what can change is the arena.
  uint64_t top = 0;
  for (uint32_t i : r.order) {
    uint64_t offset = 0;
    for (uint32_t k = r.belowBegin[i]; k < r.belowBegin[i + 1]; ++k) {
      uint32_t j = r.below[k];
      offset = std::max(offset, out.offsets[j] + sizes[j]);
    }
    uint64_t end;
    if (__builtin_add_overflow(offset, sizes[i], &end))
      return false;
    out.offsets[i] = offset;
    top = std::max(top, end);
    // Above the peak, the full placement may find a smaller arena.
    if (top > out.livePeak)
      return false;
  }
  out.size = top;
  return true;
}

void ArenaPlanner::share(std::shared_ptr<SharedPlacements> placements) {
  shared = std::move(placements);
  sharedMatched = false;
}

bool SharedPlacements::holdsFor(const Lifetimes &lifetimes,
                                bool *matched) const {
  if (matched && *matched)
    return true;
  if (lifetimes != forLifetimes)
    return false;
  if (matched)
    *matched = true;
  return true;
}

void SharedPlacements::collect(
    const Lifetimes &lifetimes,
    std::vector<std::shared_ptr<const RememberedPlacement>> &into,
    bool *matched) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!holdsFor(lifetimes, matched))
    return;
  for (const std::shared_ptr<const RememberedPlacement> &placement : placements)
    if (std::find(into.begin(), into.end(), placement) == into.end())
      into.push_back(placement);
}

void SharedPlacements::add(const Lifetimes &lifetimes,
                           std::shared_ptr<const RememberedPlacement> placement,
                           bool *matched) {
  std::lock_guard<std::mutex> lock(mutex);
  if (forLifetimes.empty())
    forLifetimes = lifetimes;
  if (!holdsFor(lifetimes, matched))
    return;
  for (std::shared_ptr<const RememberedPlacement> &held : placements)
    if (held->empty == placement->empty) {
      held = std::move(placement);
      return;
    }
  if (placements.size() == ArenaPlanner::kRememberedPlacements)
    placements.erase(placements.begin());
  placements.push_back(std::move(placement));
}

void SharedPlacements::seed(const Lifetimes &lifetimes,
                            std::vector<RememberedPlacement> placements) {
  size_t n = lifetimes.size();
  std::vector<uint32_t> meetsBegin, meets;
  findMeets(lifetimes, meetsBegin, meets);
  std::vector<uint32_t> position(n);
  for (RememberedPlacement &r : placements) {
    std::fill(position.begin(), position.end(), UINT32_MAX);
    for (size_t p = 0; p < r.order.size(); ++p)
      position[r.order[p]] = static_cast<uint32_t>(p);
    r.belowBegin.assign(n + 1, 0);
    r.below.clear();
    for (size_t i = 0; i < n; ++i) {
      r.belowBegin[i] = static_cast<uint32_t>(r.below.size());
      if (position[i] == UINT32_MAX)
        continue;
      for (uint32_t k = meetsBegin[i]; k < meetsBegin[i + 1]; ++k)
        if (position[meets[k]] < position[i])
          r.below.push_back(meets[k]);
    }
    r.belowBegin[n] = static_cast<uint32_t>(r.below.size());
    add(lifetimes, std::make_shared<const RememberedPlacement>(std::move(r)));
  }
}

bool ArenaPlanner::place(const std::vector<ArenaBlock> &blocks,
                         uint64_t alignment, ArenaPlacement &out) {
  size_t n = blocks.size();
  prepare(blocks);
  placements = 0;
  out.offsets.assign(n, 0);
  out.size = 0;
  out.livePeak = 0;
  sizes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    uint64_t padded;
    if (__builtin_add_overflow(blocks[i].size, alignment - 1, &padded))
      return false;
    sizes[i] = padded & ~(alignment - 1);
  }

  // The live-set peak: a sweep over the steps.
  starts.assign(steps + 1, 0);
  ends.assign(steps + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    if (__builtin_add_overflow(starts[blocks[i].first], sizes[i],
                               &starts[blocks[i].first]) ||
        __builtin_add_overflow(ends[blocks[i].last + 1], sizes[i],
                               &ends[blocks[i].last + 1]))
      return false;
  }
  uint64_t live = 0;
  for (size_t s = 0; s < steps; ++s) {
    live = live - ends[s] + starts[s];
    out.livePeak = std::max(out.livePeak, live);
  }

  // A placement remembered from an earlier call with the same blocks
  // empty, where it reaches the live-set peak here (no placement does
  // better): each block above the same blocks as then. A new shape of a
  // plan whose sizes keep their order (a transformer's, within a range of
  // its sequence) is placed by a walk over the pairs live together, with
  // no sort and no search for gaps.
  bool anyFixed = std::any_of(blocks.begin(), blocks.end(),
                              [](const ArenaBlock &b) { return b.fixed; });
  markEmpty();
  if (!anyFixed && placeAsRemembered(out))
    return true;
  // Then those other sessions made that this planner does not hold.
  if (!anyFixed && shared) {
    collected.clear();
    for (const Remembered &r : remembered)
      collected.push_back(r.placement);
    size_t held = collected.size();
    shared->collect(lifetimes, collected, &sharedMatched);
    for (size_t k = held; k < collected.size(); ++k)
      keep(collected[k]);
    if (collected.size() > held && placeAsRemembered(out))
      return true;
  }
  if (!placeAnew(blocks, out))
    return false;
  // Remembered for later calls; not with fixed blocks (a mid-run placement
  // around the temporaries already written).
  if (!anyFixed)
    remember(out.offsets);
  return true;
}

bool ArenaPlanner::placeAnew(const std::vector<ArenaBlock> &blocks,
                             ArenaPlacement &out) {
  size_t n = blocks.size();
  // Largest first; ties by first use, then by index, so a plan is the same
  // on every run and every machine.
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    if (blocks[a].first != blocks[b].first)
      return blocks[a].first < blocks[b].first;
    return a < b;
  });
  if (!placeInOrder(blocks, order, out.offsets, out.size))
    return false;
  if (out.size <= out.livePeak)
    return true;

  // Above the peak, largest-first can be a poor order: a stage's large,
  // short-lived temporaries (im2col's copies) all at offset 0 push the
  // long-lived ones (the residual stream) above each other. The order that
  // did best for these lifetimes before (their sizes scale together with a
  // batch), then repairs: the block reaching the top, or one it meets,
  // placed first, kept where the arena shrinks; at most kRepairPlacements
  // placements, deterministic. Where the repairs found nothing in their
  // first kFruitlessRepairCalls calls for these lifetimes (BERT-base's
  // plan, 1.16x the peak at some shapes, where 24 repairs a call found
  // nothing at any of 8,000 shapes), later calls keep largest-first: each
  // repair is a whole placement, paid again at every new shape.
  if (!repairsFound && fruitlessRepairs >= kFruitlessRepairCalls)
    return true;
  auto keepIfSmaller = [&](const std::vector<size_t> &tried) {
    uint64_t size;
    if (!placeInOrder(blocks, tried, trialOffsets, size))
      return false;
    if (size >= out.size)
      return false;
    out.size = size;
    out.offsets.swap(trialOffsets);
    return true;
  };
  std::vector<size_t> best = order;
  bool improved = false;
  if (bestOrder.size() == n && bestOrder != order && keepIfSmaller(bestOrder)) {
    best = bestOrder;
    improved = true;
  }
  int budget = kRepairPlacements;
  while (out.size > out.livePeak && budget > 0) {
    size_t top = 0;
    for (size_t i = 1; i < n; ++i)
      if (out.offsets[i] + sizes[i] > out.offsets[top] + sizes[top])
        top = i;
    // The top block, then the blocks it meets from the highest in the
    // arena down: promoting those is likeliest to lower the top (on
    // light_resnet50 with im2col, 1.03x its peak in 4 placements, where
    // taking them by index needed 8).
    candidates.assign(1, top);
    for (uint32_t k = meetsBegin[top]; k < meetsBegin[top + 1]; ++k)
      candidates.push_back(meets[k]);
    std::stable_sort(
        candidates.begin() + 1, candidates.end(), [&](size_t a, size_t b) {
          return out.offsets[a] + sizes[a] > out.offsets[b] + sizes[b];
        });
    bool shrank = false;
    for (size_t c : candidates) {
      if (blocks[c].fixed || best.front() == c || budget-- <= 0)
        continue;
      trialOrder.assign(1, c);
      for (size_t i : best)
        if (i != c)
          trialOrder.push_back(i);
      if (keepIfSmaller(trialOrder)) {
        best = trialOrder;
        shrank = true;
        break;
      }
    }
    if (!shrank)
      break;
    improved = true;
  }
  if (improved) {
    bestOrder = best;
    repairsFound = true;
  } else {
    ++fruitlessRepairs;
  }
  return true;
}

bool dyncc::runtime::placeInArena(const std::vector<ArenaBlock> &blocks,
                                  uint64_t alignment, ArenaPlacement &out) {
  ArenaPlanner planner;
  return planner.place(blocks, alignment, out);
}
