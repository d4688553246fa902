//===- HostModel.h - Variant selection by the host CPU model ----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The tile search's tables pick each group's variant for the GPU it was
// searched for. A cpu session runs the same variants on the host, where
// the fastest is another (docs/Runtime.md, "Selection on the host"); it
// selects the GEMM groups' variants by the host model
// (dyncc/CostModel/Host.h) instead, unless `dyncc tune --device cpu`
// measured this host or DYNCC_HOST_SELECTION=table.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_HOSTMODEL_H
#define DYNCC_RUNTIME_HOSTMODEL_H

#include "dyncc/CostModel/Host.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dyncc::runtime {

struct Manifest;

/// Per manifest group, its variants' tiles as the host model reads them
/// (the lead kernel's config), one per variant; empty for groups the model
/// does not describe: kinds other than GEMM, GEMMs without a problem or
/// with other than f32 operands (the CPU target emulates f16 arithmetic,
/// which the model's costs do not cover), a single variant, or a variant
/// that is not a SIMT tile.
std::vector<std::vector<cost::GemmTile>>
getHostModelledTiles(const Manifest &manifest);

/// The variant of manifest group `group` with the least time the host
/// model predicts at `symbols` (a value per symbol slot), among those whose
/// conditions hold; false where none does or the problem cannot be
/// evaluated. `tiles` is the group's entry of getHostModelledTiles.
/// `predicted` (if given) gets each variant's time in milliseconds, -1
/// where its conditions do not hold.
bool pickHostVariant(const Manifest &manifest, size_t group,
                     const std::vector<cost::GemmTile> &tiles,
                     const cost::HostDevice &host, const int64_t *symbols,
                     size_t &variant, std::vector<double> *predicted = nullptr);

/// How cpu sessions select, from the environment's DYNCC_HOST_SELECTION:
/// unset, empty or `model`, by the host model (`model` true); `table`, by
/// the tile search's tables, as CUDA sessions do. False, with `error` set
/// to one line, for another value.
bool readHostSelection(bool &model, std::string &error);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_HOSTMODEL_H
