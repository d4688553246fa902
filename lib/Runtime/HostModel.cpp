//===- HostModel.cpp - Variant selection by the host CPU model ------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/HostModel.h"

#include "dyncc/Runtime/Manifest.h"

#include <cstdlib>
#include <cstring>
#include <optional>

using namespace dyncc::runtime;

std::vector<std::vector<dyncc::cost::GemmTile>>
dyncc::runtime::getHostModelledTiles(const Manifest &manifest) {
  std::vector<std::vector<cost::GemmTile>> tiles(manifest.groups.size());
  for (size_t g = 0; g < manifest.groups.size(); ++g) {
    const GroupInfo &group = manifest.groups[g];
    const GemmProblemInfo &problem = group.problem;
    if (group.kind != "gemm" || !problem.present || problem.operandBytes != 4 ||
        group.variants.size() < 2)
      continue;
    std::vector<cost::GemmTile> &out = tiles[g];
    for (const VariantInfo &variant : group.variants) {
      std::optional<cost::GemmTile> tile =
          cost::parseGemmTile(manifest.kernels[variant.kernel].config);
      if (!tile || !cost::isHostModelled(*tile)) {
        out.clear();
        break;
      }
      out.push_back(*tile);
    }
  }
  return tiles;
}

bool dyncc::runtime::pickHostVariant(const Manifest &manifest, size_t group,
                                     const std::vector<cost::GemmTile> &tiles,
                                     const cost::HostDevice &host,
                                     const int64_t *symbols, size_t &variant,
                                     std::vector<double> *predicted) {
  const GroupInfo &info = manifest.groups[group];
  const GemmProblemInfo &problem = info.problem;
  cost::GemmProblem p;
  p.operandBytes = problem.operandBytes;
  p.outputBytes = problem.outputBytes;
  p.products = problem.products;
  int64_t *dims[] = {&p.batch, &p.m, &p.n, &p.k};
  const ShapeExpr *exprs[] = {&problem.batch, &problem.m, &problem.n,
                              &problem.k};
  for (size_t d = 0; d < 4; ++d)
    if (exprs[d]->evaluate(symbols, *dims[d]) != ShapeExpr::EvalStatus::Ok ||
        *dims[d] < 0)
      return false;
  if (predicted)
    predicted->assign(info.variants.size(), -1);
  double best = -1;
  for (size_t v = 0; v < info.variants.size() && v < tiles.size(); ++v) {
    if (!info.variants[v].holds(symbols))
      continue;
    double seconds = cost::predictHostGemm(tiles[v], p, host).seconds;
    if (predicted)
      (*predicted)[v] = seconds * 1e3;
    if (best < 0 || seconds < best) {
      best = seconds;
      variant = v;
    }
  }
  return best >= 0;
}

bool dyncc::runtime::readHostSelection(bool &model, std::string &error) {
  const char *value = std::getenv("DYNCC_HOST_SELECTION");
  if (!value || !*value || std::strcmp(value, "model") == 0) {
    model = true;
    return true;
  }
  if (std::strcmp(value, "table") == 0) {
    model = false;
    return true;
  }
  error = std::string("DYNCC_HOST_SELECTION: expected 'model' or 'table', "
                      "got '") +
          value + "'";
  return false;
}
