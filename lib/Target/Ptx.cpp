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

using namespace mlir;
using namespace dyncc;

std::string dyncc::getNvvmFeatures(StringRef chip) {
  // PTX ISA 8.0 (CUDA 12.0) covers sm_80..sm_90a. The default +ptx60 is
  // rejected for sm_90 (../shared/TOOLCHAIN.md).
  (void)chip;
  return "+ptx80";
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
    if (target != "cpu")
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
