//===- CudaDriver.cpp - The CUDA driver, loaded at run time -----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include <chrono>
#include <cstdlib>
#include <dlfcn.h>

using namespace dyncc::runtime::cuda;

namespace {
/// The outcome of loading the driver, computed once per process.
struct Loaded {
  Driver driver{};
  bool ok = false;
  std::string error;
};

/// Resolves `names` in turn (the newest ABI version first) into `slot`.
template <typename Fn>
bool resolve(void *library, Fn &slot, std::initializer_list<const char *> names,
             std::string &error) {
  for (const char *name : names) {
    if (void *symbol = dlsym(library, name)) {
      slot = reinterpret_cast<Fn>(symbol);
      return true;
    }
  }
  error = std::string("the CUDA driver has no entry point ") + *names.begin();
  return false;
}

Loaded load() {
  Loaded result;
  const char *override = std::getenv("DYNCC_CUDA_DRIVER");
  const char *path = override && *override ? override : "libcuda.so.1";
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace.
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    result.error = std::string("cannot load the CUDA driver (") +
                   (why ? why : path) + ")";
    return result;
  }
  Driver &d = result.driver;
  std::string &error = result.error;
  // The library stays loaded for the life of the process, like the driver's
  // own state.
  bool ok =
      resolve(library, d.init, {"cuInit"}, error) &&
      resolve(library, d.driverGetVersion, {"cuDriverGetVersion"}, error) &&
      resolve(library, d.getErrorName, {"cuGetErrorName"}, error) &&
      resolve(library, d.getErrorString, {"cuGetErrorString"}, error) &&
      resolve(library, d.deviceGetCount, {"cuDeviceGetCount"}, error) &&
      resolve(library, d.deviceGet, {"cuDeviceGet"}, error) &&
      resolve(library, d.deviceGetName, {"cuDeviceGetName"}, error) &&
      resolve(library, d.deviceGetAttribute, {"cuDeviceGetAttribute"}, error) &&
      resolve(library, d.primaryCtxRetain, {"cuDevicePrimaryCtxRetain"},
              error) &&
      resolve(library, d.primaryCtxRelease,
              {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
              error) &&
      resolve(library, d.ctxSetCurrent, {"cuCtxSetCurrent"}, error) &&
      resolve(library, d.moduleLoadDataEx, {"cuModuleLoadDataEx"}, error) &&
      resolve(library, d.moduleUnload, {"cuModuleUnload"}, error) &&
      resolve(library, d.moduleGetFunction, {"cuModuleGetFunction"}, error) &&
      resolve(library, d.funcGetAttribute, {"cuFuncGetAttribute"}, error) &&
      resolve(library, d.funcSetAttribute, {"cuFuncSetAttribute"}, error) &&
      resolve(library, d.launchKernel, {"cuLaunchKernel"}, error) &&
      resolve(library, d.memAlloc, {"cuMemAlloc_v2"}, error) &&
      resolve(library, d.memFree, {"cuMemFree_v2"}, error) &&
      resolve(library, d.memcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"}, error) &&
      resolve(library, d.memcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"}, error) &&
      resolve(library, d.memcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, error) &&
      resolve(library, d.streamCreate, {"cuStreamCreate"}, error) &&
      resolve(library, d.streamDestroy,
              {"cuStreamDestroy_v2", "cuStreamDestroy"}, error) &&
      resolve(library, d.streamSynchronize, {"cuStreamSynchronize"}, error) &&
      resolve(library, d.eventCreate, {"cuEventCreate"}, error) &&
      resolve(library, d.eventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"},
              error) &&
      resolve(library, d.eventRecord, {"cuEventRecord"}, error) &&
      resolve(library, d.eventSynchronize, {"cuEventSynchronize"}, error) &&
      resolve(library, d.eventElapsedTime,
              {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, error) &&
      resolve(library, d.occupancyMaxActiveBlocksPerMultiprocessor,
              {"cuOccupancyMaxActiveBlocksPerMultiprocessor"}, error);
  if (!ok) {
    error += std::string(" (") + path + ")";
    return result;
  }
  // Graphs are optional: without all of their entry points, none.
  std::string missing;
  if (!resolve(library, d.streamBeginCapture, {"cuStreamBeginCapture_v2"},
               missing) ||
      !resolve(library, d.streamEndCapture, {"cuStreamEndCapture"},
               missing) ||
      !resolve(library, d.graphInstantiate, {"cuGraphInstantiateWithFlags"},
               missing) ||
      !resolve(library, d.graphLaunch, {"cuGraphLaunch"}, missing) ||
      !resolve(library, d.graphExecDestroy, {"cuGraphExecDestroy"},
               missing) ||
      !resolve(library, d.graphDestroy, {"cuGraphDestroy"}, missing)) {
    d.streamBeginCapture = nullptr;
    d.streamEndCapture = nullptr;
    d.graphInstantiate = nullptr;
    d.graphLaunch = nullptr;
    d.graphExecDestroy = nullptr;
    d.graphDestroy = nullptr;
  }
  std::string noPinned;
  if (!resolve(library, d.memHostAlloc, {"cuMemHostAlloc"}, noPinned) ||
      !resolve(library, d.memFreeHost, {"cuMemFreeHost"}, noPinned)) {
    d.memHostAlloc = nullptr;
    d.memFreeHost = nullptr;
  }
  if (CUresult status = d.init(0); status != CUDA_SUCCESS) {
    error = d.failure("cuInit", status);
    return result;
  }
  result.ok = true;
  return result;
}
} // namespace

const Driver *Driver::get(std::string &error) {
  static const Loaded loaded = load();
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}

DriverTime &dyncc::runtime::cuda::threadDriverTime() {
  thread_local DriverTime totals;
  return totals;
}

namespace {
/// The table the timed entry points call.
const Driver *timedTarget = nullptr;

/// Timed<decltype(&Driver::m)>::call<&Driver::m>: entry point `m` of
/// timedTarget, with the call's host time added to the thread's totals.
template <typename Member> struct Timed;
template <typename... Args> struct Timed<CUresult (*Driver::*)(Args...)> {
  template <CUresult (*Driver::*Entry)(Args...)>
  static CUresult call(Args... args) {
    auto start = std::chrono::steady_clock::now();
    CUresult result = (timedTarget->*Entry)(args...);
    auto stop = std::chrono::steady_clock::now();
    DriverTime &totals = threadDriverTime();
    totals.nanoseconds += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start)
            .count());
    ++totals.calls;
    return result;
  }
};

Driver makeTimed(const Driver &driver) {
  timedTarget = &driver;
  Driver timed = driver;
#define DYNCC_TIMED(entry)                                                     \
  timed.entry = &Timed<decltype(&Driver::entry)>::template call<&Driver::entry>
  DYNCC_TIMED(init);
  DYNCC_TIMED(driverGetVersion);
  DYNCC_TIMED(deviceGetCount);
  DYNCC_TIMED(deviceGet);
  DYNCC_TIMED(deviceGetName);
  DYNCC_TIMED(deviceGetAttribute);
  DYNCC_TIMED(primaryCtxRetain);
  DYNCC_TIMED(primaryCtxRelease);
  DYNCC_TIMED(ctxSetCurrent);
  DYNCC_TIMED(moduleLoadDataEx);
  DYNCC_TIMED(moduleUnload);
  DYNCC_TIMED(moduleGetFunction);
  DYNCC_TIMED(funcGetAttribute);
  DYNCC_TIMED(funcSetAttribute);
  DYNCC_TIMED(launchKernel);
  DYNCC_TIMED(memAlloc);
  DYNCC_TIMED(memFree);
  DYNCC_TIMED(memcpyHtoDAsync);
  DYNCC_TIMED(memcpyDtoHAsync);
  DYNCC_TIMED(memcpyDtoDAsync);
  DYNCC_TIMED(streamCreate);
  DYNCC_TIMED(streamDestroy);
  DYNCC_TIMED(streamSynchronize);
  DYNCC_TIMED(eventCreate);
  DYNCC_TIMED(eventDestroy);
  DYNCC_TIMED(eventRecord);
  DYNCC_TIMED(eventSynchronize);
  DYNCC_TIMED(eventElapsedTime);
  DYNCC_TIMED(occupancyMaxActiveBlocksPerMultiprocessor);
  if (driver.hasPinnedMemory()) {
    DYNCC_TIMED(memHostAlloc);
    DYNCC_TIMED(memFreeHost);
  }
  if (driver.hasGraphs()) {
    DYNCC_TIMED(streamBeginCapture);
    DYNCC_TIMED(streamEndCapture);
    DYNCC_TIMED(graphInstantiate);
    DYNCC_TIMED(graphLaunch);
    DYNCC_TIMED(graphExecDestroy);
    DYNCC_TIMED(graphDestroy);
  }
#undef DYNCC_TIMED
  // Error names and texts are not the driver's work on the run's behalf.
  return timed;
}
} // namespace

const Driver *Driver::getTimed(std::string &error) {
  const Driver *driver = get(error);
  if (!driver)
    return nullptr;
  static const Driver timed = makeTimed(*driver);
  return &timed;
}

std::string Driver::describe(CUresult result) const {
  const char *name = nullptr;
  const char *text = nullptr;
  if (getErrorName(result, &name) != CUDA_SUCCESS || !name)
    return "CUDA error " + std::to_string(result);
  std::string out = name;
  if (getErrorString(result, &text) == CUDA_SUCCESS && text)
    out += std::string(" (") + text + ")";
  return out;
}
