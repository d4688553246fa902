//===- CpuModule.h - Host code from an artifact -----------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host kernels of an artifact are one shared object stored in a section
// (normally `cpu.so`). It is handed to the dynamic loader without touching
// the file system where possible: written to a memfd and dlopen'ed as
// /proc/self/fd/N; if memfd_create is unavailable, written to a mkstemp file
// in $TMPDIR that is unlinked right after dlopen.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_CPUMODULE_H
#define DYNCC_LIB_RUNTIME_CPUMODULE_H

#include <cstddef>
#include <memory>
#include <string>

namespace dyncc::runtime {

class CpuModule {
public:
  /// Loads `size` bytes of shared object. `label` names it in errors.
  static std::unique_ptr<CpuModule> load(const void *data, size_t size,
                                         const std::string &label,
                                         std::string &error);
  ~CpuModule();
  CpuModule(const CpuModule &) = delete;
  CpuModule &operator=(const CpuModule &) = delete;

  /// The address of `symbol`, or null.
  void *lookup(const char *symbol) const;

private:
  CpuModule() = default;
  void *handle = nullptr;
  /// The memfd backing the module, kept open while it is loaded so that no
  /// other module is opened under the same /proc/self/fd/N name.
  int fd = -1;
};

} // namespace dyncc::runtime

#endif // DYNCC_LIB_RUNTIME_CPUMODULE_H
