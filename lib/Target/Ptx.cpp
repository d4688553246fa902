//===- Ptx.cpp - PTX from the NVVM-lowered kernel module ------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Target/Ptx.h"
#include "dyncc/Target/Ptxas.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

using namespace mlir;
using namespace dyncc;

std::string dyncc::getNvvmFeatures(StringRef chip) {
  // PTX ISA 8.0 (CUDA 12.0) covers sm_80..sm_90a. The default +ptx60 is
  // rejected for sm_90 (../shared/TOOLCHAIN.md).
  (void)chip;
  return "+ptx80";
}

namespace {
/// The version of chip `sm_<digits>[a]` (sm_90a: 90, arch-specific), or
/// nullopt for any other name.
std::optional<int> parseChip(StringRef chip, bool &specific) {
  StringRef digits = chip;
  if (!digits.consume_front("sm_"))
    return std::nullopt;
  specific = digits.consume_back("a");
  int version = 0;
  if (digits.empty() || digits.getAsInteger(10, version))
    return std::nullopt;
  return version;
}
} // namespace

std::string dyncc::getPtxChip(StringRef chip, ArrayRef<std::string> chips) {
  bool specific = false;
  std::optional<int> version = parseChip(chip, specific);
  if (!version || specific)
    return chip.str();
  std::string oldest = chip.str();
  for (const std::string &other : chips) {
    bool otherSpecific = false;
    std::optional<int> otherVersion = parseChip(other, otherSpecific);
    if (otherVersion && !otherSpecific && *otherVersion < *version &&
        getNvvmFeatures(other) == getNvvmFeatures(chip)) {
      version = otherVersion;
      oldest = other;
    }
  }
  return oldest;
}

std::vector<std::string> dyncc::getPtxChips(ArrayRef<std::string> chips) {
  std::vector<std::string> out;
  for (const std::string &chip : chips) {
    std::string ptxChip = getPtxChip(chip, chips);
    if (!llvm::is_contained(out, ptxChip))
      out.push_back(ptxChip);
  }
  return out;
}

int64_t dyncc::getMaxSharedBytesPerBlock(StringRef chip) {
  if (chip.starts_with("sm_90"))
    return 227 * 1024;
  if (chip == "sm_86")
    return 99 * 1024;
  if (chip == "sm_80")
    return 163 * 1024;
  // Unknown chips get what every CUDA device gives without opting in.
  return 48 * 1024;
}

int64_t dyncc::getSharedBytesBudget(ArrayRef<std::string> targets) {
  // ptxas counts `__dynamic_shmem__0` (an internal zero-size array) as one
  // byte of static shared memory, which the block's dynamic shared memory
  // follows 16-byte aligned.
  constexpr int64_t kDynamicSymbolBytes = 16;
  std::optional<int64_t> limit;
  for (const std::string &target : targets)
    if (!StringRef(target).starts_with("cpu"))
      limit = std::min(limit.value_or(INT64_MAX),
                       getMaxSharedBytesPerBlock(target));
  if (!limit)
    limit = std::min(getMaxSharedBytesPerBlock("sm_80"),
                     getMaxSharedBytesPerBlock("sm_90"));
  return *limit - kDynamicSymbolBytes;
}

FailureOr<std::map<std::string, std::string>>
dyncc::collectPtx(ModuleOp module) {
  std::map<std::string, std::string> ptx;
  WalkResult result = module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      if (!target || object.getFormat() != gpu::CompilationTarget::Assembly) {
        binary.emitOpError("holds an object that is not NVVM PTX text");
        return WalkResult::interrupt();
      }
      ptx[target.getChip().str()] += object.getObject().getValue().str();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  // A math function left external means libdevice was not linked.
  for (const auto &[chip, text] : ptx)
    if (std::optional<std::string> name = findUnresolvedLibdeviceCall(text))
      return module.emitError("the ")
             << chip << " kernels call libdevice's " << *name
             << ", but libdevice was not found: set CUDA_HOME to the CUDA "
                "toolkit";
  return ptx;
}
