//===- ArenaPlanAhead.h - The arena planned at compile time -----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The compiler plans the arena of temporaries ahead, for the manifest's
// `arena`: it sizes the temps at shapes spread over the declared ranges of
// the symbols the inputs bind, selects the variants that decide which
// split-K workspaces are empty, and places them with the run-time's own
// planner (ArenaPlanner). What it keeps is one placement per set of empty
// temps, as symbolic offsets: an order, each temp just above the temps
// before it whose lifetimes meet its own. A run evaluates those at its sizes
// and takes them where they reach the live-set peak, so that most new
// shapes, a session's first run included, need no placement of their own.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_ARENAPLANAHEAD_H
#define DYNCC_RUNTIME_ARENAPLANAHEAD_H

#include "dyncc/Runtime/Manifest.h"

#include <cstddef>
#include <vector>

namespace dyncc::runtime {

/// The shapes planArenaAhead sizes at, at most: per input-bound symbol,
/// values log-spaced from its least to its greatest (multiples of its
/// divisor), fewer per symbol the more symbols there are (8 each for two).
inline constexpr size_t kPlanAheadShapes = 64;

/// The placements for `manifest.arena` (none for a plan with no temps or
/// no input-bound symbols). Temps sized by symbols that bind steps bind are
/// empty, as at a run's start; shapes where a constraint fails are skipped.
std::vector<ArenaPlanInfo> planArenaAhead(const Manifest &manifest);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_ARENAPLANAHEAD_H
