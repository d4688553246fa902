//===- HostPlan.h - Host plan and artifact manifest -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builds the host plan of an outlined graph module: the buffers (inputs,
// weights, outputs, and temporaries placed in one arena by liveness, with
// offsets as symbolic expressions), the kernels with their parameter lists,
// grids and block shapes as expressions of the symbols, the groups with their
// variant tables, and the steps. The result is the artifact's manifest
// (docs/ArtifactFormat.md) plus the weight sections.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_PLAN_HOSTPLAN_H
#define DYNCC_PLAN_HOSTPLAN_H

#include "dyncc/Target/Ptxas.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>

#include <string>
#include <vector>

namespace dyncc {

struct PlanOptions {
  /// Targets as given to --target (cpu, sm_80, ...), the host's levels
  /// as one `cpu`.
  std::vector<std::string> targets;
  /// With the cpu target, the instruction-set levels its host code is
  /// built for, the portable one first (the manifest's `host_code`).
  std::vector<std::string> hostIsas;
  std::string producer = "dyncc";
  /// Per GPU target assembled by ptxas: the cubin's section and each
  /// kernel's resources.
  struct Cubin {
    std::string section;
    std::map<std::string, KernelResources> resources;
  };
  std::map<std::string, Cubin> cubins;
  /// Per GPU target, the chip whose PTX section (`ptx.CHIP`) holds its code
  /// (getPtxChip: the oldest chip's, which the others assemble). A target
  /// missing here has its own.
  std::map<std::string, std::string> ptxChips;
};

/// The artifact section of the host code built for level `isas[index]`:
/// `cpu.so` for the portable build (the first), `cpu.LEVEL.so` for the
/// others.
std::string getHostCodeSection(const std::vector<std::string> &isas,
                               size_t index);

struct HostPlan {
  /// The manifest, JSON.
  std::string manifest;
  /// Weight sections: name and raw little-endian bytes.
  std::vector<std::pair<std::string, std::string>> weights;
};

/// Builds the plan of `module` (after outlining: `func.func @main` of
/// `dg.dispatch`es plus the kernel functions with their tile configs).
mlir::FailureOr<HostPlan> buildHostPlan(mlir::ModuleOp module,
                                        const PlanOptions &options);

} // namespace dyncc

#endif // DYNCC_PLAN_HOSTPLAN_H
