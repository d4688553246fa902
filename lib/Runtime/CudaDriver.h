//===- CudaDriver.h - The CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The run-time links no CUDA library: the driver API comes from
// dlopen("libcuda.so.1") the first time a CUDA session is created, so the
// library builds and its CPU path runs on machines with no GPU. The types
// below are the driver API's own ABI (cuda.h, CUDA 12 and 13), declared
// here so that no toolkit header is needed to build. DYNCC_CUDA_DRIVER
// names another library to load instead (the tests' fake driver).
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_CUDADRIVER_H
#define DYNCC_LIB_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace dyncc::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

// The values of cuda.h's enumerators that the run-time uses.
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
/// Capture only the calling thread's work (another thread's sessions run
/// on as before).
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
/// The shared memory, static and dynamic together, every block may use
/// without opting in.
constexpr long long kDefaultSharedLimit = 48 * 1024;

/// The host time a thread spent in the driver's entry points through the
/// timed table (Driver::getTimed): running totals.
struct DriverTime {
  uint64_t nanoseconds = 0;
  uint64_t calls = 0;
};
/// The calling thread's totals.
DriverTime &threadDriverTime();

/// The driver entry points the run-time calls, resolved once.
struct Driver {
  CUresult (*init)(unsigned flags);
  CUresult (*driverGetVersion)(int *version);
  CUresult (*getErrorName)(CUresult error, const char **name);
  CUresult (*getErrorString)(CUresult error, const char **text);
  CUresult (*deviceGetCount)(int *count);
  CUresult (*deviceGet)(CUdevice *device, int ordinal);
  CUresult (*deviceGetName)(char *name, int length, CUdevice device);
  CUresult (*deviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*primaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*primaryCtxRelease)(CUdevice device);
  CUresult (*ctxSetCurrent)(CUcontext context);
  CUresult (*moduleLoadDataEx)(CUmodule *module, const void *image,
                               unsigned numOptions, int *options,
                               void **optionValues);
  CUresult (*moduleUnload)(CUmodule module);
  CUresult (*moduleGetFunction)(CUfunction *function, CUmodule module,
                                const char *name);
  CUresult (*funcGetAttribute)(int *value, int attribute, CUfunction function);
  CUresult (*funcSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*launchKernel)(CUfunction function, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned sharedBytes,
                           CUstream stream, void **params, void **extra);
  CUresult (*memAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*memFree)(CUdeviceptr pointer);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream stream);
  CUresult (*memcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes,
                              CUstream stream);
  CUresult (*memcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                              CUstream stream);
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*eventCreate)(CUevent *event, unsigned flags);
  CUresult (*eventDestroy)(CUevent event);
  CUresult (*eventRecord)(CUevent event, CUstream stream);
  CUresult (*eventSynchronize)(CUevent event);
  CUresult (*eventElapsedTime)(float *milliseconds, CUevent start,
                               CUevent end);
  CUresult (*occupancyMaxActiveBlocksPerMultiprocessor)(int *blocks,
                                                        CUfunction function,
                                                        int blockSize,
                                                        size_t sharedBytes);
  /// CUDA graphs (stream capture): all null where the driver lacks one of
  /// them, and sessions then launch kernel by kernel.
  CUresult (*streamBeginCapture)(CUstream stream, int mode);
  CUresult (*streamEndCapture)(CUstream stream, CUgraph *graph);
  CUresult (*graphInstantiate)(CUgraphExec *exec, CUgraph graph,
                               unsigned long long flags);
  CUresult (*graphLaunch)(CUgraphExec exec, CUstream stream);
  CUresult (*graphExecDestroy)(CUgraphExec exec);
  CUresult (*graphDestroy)(CUgraph graph);
  bool hasGraphs() const { return graphLaunch != nullptr; }
  /// Page-locked host memory: both null where the driver lacks one, and
  /// sessions then copy host inputs from the caller's memory.
  CUresult (*memHostAlloc)(void **pointer, size_t bytes, unsigned flags);
  CUresult (*memFreeHost)(void *pointer);
  bool hasPinnedMemory() const { return memHostAlloc != nullptr; }

  /// The driver, loaded and initialized on first use (thread-safe); null
  /// with `error` set when it cannot be (no library, a missing entry point,
  /// cuInit failing).
  static const Driver *get(std::string &error);
  /// The same entry points, each timed into the calling thread's
  /// DriverTime (threadDriverTime()); null where get() fails.
  static const Driver *getTimed(std::string &error);

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for `result`.
  std::string describe(CUresult result) const;
  /// `what` and the description of `result`, for an error message.
  std::string failure(const std::string &what, CUresult result) const {
    return what + " failed: " + describe(result);
  }
};

} // namespace dyncc::runtime::cuda

#endif // DYNCC_LIB_RUNTIME_CUDADRIVER_H
