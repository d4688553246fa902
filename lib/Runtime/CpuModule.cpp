//===- CpuModule.cpp - Host code from an artifact ---------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CpuModule.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace dyncc::runtime;

namespace {
bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

int createMemfd(const char *name) {
#if defined(SYS_memfd_create)
  return static_cast<int>(::syscall(SYS_memfd_create, name, MFD_CLOEXEC));
#else
  (void)name;
  errno = ENOSYS;
  return -1;
#endif
}

/// dlopen's `path` unless a library of that name is already loaded (the
/// loader would hand back the old one): then returns null with `stale` set.
void *openFresh(const std::string &path, bool &stale, std::string &error) {
  stale = false;
  if (void *old = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    ::dlclose(old);
    stale = true;
    return nullptr;
  }
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *message = ::dlerror();
    error = message ? message : "unknown dlopen error";
  }
  return handle;
}
} // namespace

std::unique_ptr<CpuModule> CpuModule::load(const void *data, size_t size,
                                           const std::string &label,
                                           std::string &error) {
  std::unique_ptr<CpuModule> module(new CpuModule());
  std::string loaderError;

  int memfd = createMemfd("dyncc-cpu.so");
  if (memfd >= 0) {
    if (!writeAll(memfd, data, size)) {
      error = label + ": cannot write the shared object to a memfd: " +
              std::strerror(errno);
      ::close(memfd);
      return nullptr;
    }
    // A library loaded earlier under the same fd number (since closed) would
    // be returned instead of ours: move to another number until it is fresh.
    std::vector<int> spares;
    int fd = memfd;
    void *handle = nullptr;
    for (int attempt = 0; attempt < 16; ++attempt) {
      bool stale;
      handle =
          openFresh("/proc/self/fd/" + std::to_string(fd), stale, loaderError);
      if (handle || !stale)
        break;
      spares.push_back(fd);
      fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
      if (fd < 0)
        break;
    }
    for (int spare : spares)
      ::close(spare);
    if (handle) {
      module->handle = handle;
      module->fd = fd;
      return module;
    }
    if (fd >= 0)
      ::close(fd);
    if (!loaderError.empty()) {
      error = label + ": cannot load the shared object: " + loaderError;
      return nullptr;
    }
  }

  // Fallback: a temporary file.
  const char *tmpdir = std::getenv("TMPDIR");
  std::string path =
      std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/dyncc-cpu-XXXXXX.so";
  int fd = ::mkstemps(&path[0], 3);
  if (fd < 0) {
    error = label + ": cannot create a temporary file for the shared object: " +
            std::strerror(errno);
    return nullptr;
  }
  bool written = writeAll(fd, data, size);
  int savedErrno = errno;
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    error = label + ": cannot write " + path + ": " + std::strerror(savedErrno);
    return nullptr;
  }
  bool stale;
  void *handle = openFresh(path, stale, loaderError);
  ::unlink(path.c_str());
  if (!handle) {
    error = label + ": cannot load the shared object: " +
            (stale ? "a library named " + path + " is already loaded"
                   : loaderError);
    return nullptr;
  }
  module->handle = handle;
  return module;
}

CpuModule::~CpuModule() {
  if (handle)
    ::dlclose(handle);
  if (fd >= 0)
    ::close(fd);
}

void *CpuModule::lookup(const char *symbol) const {
  return ::dlsym(handle, symbol);
}
