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

bool dyncc::runtime::placeInArena(const std::vector<ArenaBlock> &blocks,
                                  uint64_t alignment, ArenaPlacement &out) {
  size_t n = blocks.size();
  out.offsets.assign(n, 0);
  out.size = 0;
  out.livePeak = 0;
  std::vector<uint64_t> sizes(n);
  size_t steps = 0;
  for (size_t i = 0; i < n; ++i) {
    uint64_t padded;
    if (__builtin_add_overflow(blocks[i].size, alignment - 1, &padded))
      return false;
    sizes[i] = padded & ~(alignment - 1);
    steps = std::max(steps, blocks[i].last + 1);
  }

  // Largest first; ties by first use, then by index, so a plan is the same
  // on every run and every machine.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (sizes[a] != sizes[b])
      return sizes[a] > sizes[b];
    if (blocks[a].first != blocks[b].first)
      return blocks[a].first < blocks[b].first;
    return a < b;
  });
  // The blocks placed so far, by increasing offset: the fixed ones first.
  std::vector<size_t> placed;
  placed.reserve(n);
  for (size_t i : order) {
    if (!blocks[i].fixed)
      continue;
    out.offsets[i] = blocks[i].offset;
    size_t insertAt = placed.size();
    while (insertAt > 0 && out.offsets[placed[insertAt - 1]] > out.offsets[i])
      --insertAt;
    placed.insert(placed.begin() + insertAt, i);
    uint64_t end;
    if (__builtin_add_overflow(out.offsets[i], sizes[i], &end))
      return false;
    out.size = std::max(out.size, end);
  }
  for (size_t i : order) {
    if (blocks[i].fixed)
      continue;
    uint64_t offset = 0;
    for (size_t j : placed) {
      if (blocks[j].last < blocks[i].first || blocks[i].last < blocks[j].first)
        continue; // Never live together.
      uint64_t end;
      if (__builtin_add_overflow(offset, sizes[i], &end))
        return false;
      if (end <= out.offsets[j])
        break; // Fits below j, hence below every block after it.
      if (__builtin_add_overflow(out.offsets[j], sizes[j], &end))
        return false;
      offset = std::max(offset, end);
    }
    out.offsets[i] = offset;
    size_t insertAt = placed.size();
    while (insertAt > 0 && out.offsets[placed[insertAt - 1]] > offset)
      --insertAt;
    placed.insert(placed.begin() + insertAt, i);
    uint64_t end;
    if (__builtin_add_overflow(offset, sizes[i], &end))
      return false;
    out.size = std::max(out.size, end);
  }

  // The live-set peak: a sweep over the steps.
  std::vector<uint64_t> starts(steps + 1, 0), ends(steps + 1, 0);
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
  return true;
}
