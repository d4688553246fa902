//===- ArenaPlanAhead.cpp - The arena planned at compile time -------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/ArenaPlanAhead.h"

#include "ArenaPlan.h"

#include "dyncc/CostModel/Partition.h"

#include <algorithm>

using namespace dyncc::runtime;

namespace {

/// Sizes the temps' blocks at `symbols` as a run's start does; false where
/// a constraint fails or a size cannot be evaluated.
bool sizeTemps(const Manifest &manifest, const VariantPicker &pick,
               const std::vector<size_t> &temps, const int64_t *symbols,
               std::vector<ArenaBlock> &blocks) {
  for (const ConstraintInfo &constraint : manifest.constraints) {
    if (constraint.readyAfter != kAtBinding)
      continue;
    int64_t lhs, rhs;
    if (constraint.lhs.evaluate(symbols, lhs) != ShapeExpr::EvalStatus::Ok ||
        constraint.rhs.evaluate(symbols, rhs) != ShapeExpr::EvalStatus::Ok ||
        lhs != rhs)
      return false;
  }
  for (size_t t = 0; t < temps.size(); ++t) {
    const BufferInfo &buffer = manifest.buffers[temps[t]];
    uint64_t bytes = 0;
    // Sized by a later bind step: empty until then.
    if (buffer.readyAfter == kAtBinding) {
      bytes = dtypeSize(buffer.dtype);
      for (const ShapeExpr &dim : buffer.shape) {
        int64_t value;
        if (dim.evaluate(symbols, value) != ShapeExpr::EvalStatus::Ok ||
            value < 0 ||
            __builtin_mul_overflow(bytes, static_cast<uint64_t>(value), &bytes))
          return false;
      }
    }
    // A workspace takes bytes where its group's variant uses it, once its
    // group can select (else it keeps its bytes, as at a run's start).
    if (buffer.workspace && bytes != 0 &&
        isSelectable(manifest, buffer.workspaceGroup, kAtBinding)) {
      const GroupInfo &group = manifest.groups[buffer.workspaceGroup];
      size_t variant;
      if (pick ? !pick(buffer.workspaceGroup, symbols, variant)
               : !group.pick(symbols, variant))
        return false;
      if (std::find(buffer.workspaceLeads.begin(), buffer.workspaceLeads.end(),
                    group.variants[variant].kernel) ==
          buffer.workspaceLeads.end())
        bytes = 0;
    }
    blocks[t].size = bytes;
  }
  return true;
}

/// Sizes the temps at up to kPlanAheadShapes shapes over the declared
/// ranges of the input-bound symbols, selecting with `pick` (the table's
/// where empty), and places them with a planner sharing `shared`; false for
/// a plan with no temps or no input-bound symbols. `temps` gets the temps'
/// buffers and `lifetimes` their lifetimes.
bool planAhead(const Manifest &manifest, const VariantPicker &pick,
               const std::shared_ptr<SharedPlacements> &shared,
               std::vector<size_t> &temps,
               SharedPlacements::Lifetimes &lifetimes) {
  std::vector<ArenaBlock> blocks;
  for (size_t b = 0; b < manifest.buffers.size(); ++b) {
    const BufferInfo &buffer = manifest.buffers[b];
    if (buffer.kind != BufferKind::Temp)
      continue;
    temps.push_back(b);
    blocks.push_back({0, buffer.firstStep, buffer.lastStep});
    lifetimes.emplace_back(buffer.firstStep, buffer.lastStep);
  }
  std::vector<size_t> bound;
  for (size_t slot = 0; slot < manifest.symbols.size(); ++slot)
    if (manifest.symbols[slot].bindingStep == kAtBinding)
      bound.push_back(slot);
  if (bound.empty() || temps.empty())
    return false;
  // Per symbol, values log-spaced over its range (multiples of its
  // divisor): the most per symbol whose product over the symbols is at
  // most kPlanAheadShapes (8 each for two symbols, 4 for three), at least
  // 2.
  size_t count = bound.size();
  size_t perSymbol = 2;
  auto product = [&](size_t values) {
    size_t total = 1;
    for (size_t s = 0; s < count && total <= kPlanAheadShapes; ++s)
      total *= values;
    return total;
  };
  while (product(perSymbol + 1) <= kPlanAheadShapes)
    ++perSymbol;
  std::vector<std::vector<int64_t>> values(count);
  for (size_t s = 0; s < count; ++s) {
    const SymbolInfo &symbol = manifest.symbols[bound[s]];
    int64_t divisor = std::max<int64_t>(1, symbol.divisor);
    // From the least value above 0 (a size of 0 has nothing to place).
    int64_t low = std::max<int64_t>(symbol.min, 1);
    low = (low + divisor - 1) / divisor * divisor;
    int64_t high = symbol.max / divisor * divisor;
    if (high < low)
      return false;
    for (size_t i = 0; i < perSymbol; ++i) {
      int64_t value =
          dyncc::cost::getLogSpacedValue(low / divisor, high / divisor,
                                         static_cast<int64_t>(i),
                                         static_cast<int64_t>(perSymbol)) *
          divisor;
      if (values[s].empty() || values[s].back() != value)
        values[s].push_back(value);
    }
  }
  ArenaPlanner planner;
  planner.share(shared);
  ArenaPlacement placement;
  std::vector<int64_t> symbols(manifest.symbols.size(), 0);
  std::vector<size_t> at(count, 0);
  for (size_t shape = 0; shape < kPlanAheadShapes; ++shape) {
    for (size_t s = 0; s < count; ++s)
      symbols[bound[s]] = values[s][at[s]];
    if (sizeTemps(manifest, pick, temps, symbols.data(), blocks))
      planner.place(blocks, kArenaAlignment, placement);
    // The next shape, odometer order; done after the last.
    size_t s = 0;
    while (s < count && ++at[s] == values[s].size())
      at[s++] = 0;
    if (s == count)
      break;
  }
  return true;
}

} // namespace

std::vector<ArenaPlanInfo>
dyncc::runtime::planArenaAhead(const Manifest &manifest) {
  // The run-time's planner, sharing its placements as a model's sessions
  // do: what it keeps, one placement per set of empty temps, is the plan.
  auto shared = std::make_shared<SharedPlacements>();
  std::vector<size_t> temps;
  SharedPlacements::Lifetimes lifetimes;
  if (!planAhead(manifest, {}, shared, temps, lifetimes))
    return {};
  std::vector<std::shared_ptr<const RememberedPlacement>> kept;
  shared->collect(lifetimes, kept);
  std::vector<ArenaPlanInfo> plans;
  for (const auto &placement : kept) {
    ArenaPlanInfo &plan = plans.emplace_back();
    for (size_t t = 0; t < temps.size(); ++t)
      if (placement->empty[t])
        plan.empty.push_back(temps[t]);
    for (uint32_t t : placement->order)
      plan.order.push_back(temps[t]);
  }
  return plans;
}

void dyncc::runtime::planArenaAheadInto(
    const Manifest &manifest, const VariantPicker &pick,
    const std::shared_ptr<SharedPlacements> &shared) {
  std::vector<size_t> temps;
  SharedPlacements::Lifetimes lifetimes;
  planAhead(manifest, pick, shared, temps, lifetimes);
}
