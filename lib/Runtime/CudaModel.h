//===- CudaModel.h - A model's code and weights on one GPU ------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// CudaModel is what the sessions of one model on one GPU share: the device's
// primary context, the kernels' modules and functions, and the weights
// copied to the device once. Loading picks, per kernel, the artifact's
// cubin for the device's architecture; where there is none, the driver
// compiles the artifact's PTX once, here, and the model says so. No kernel
// is ever compiled per shape.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_CUDAMODEL_H
#define DYNCC_LIB_RUNTIME_CUDAMODEL_H

#include "CudaDriver.h"

#include "dyncc/Runtime/Calibration.h"
#include "dyncc/Runtime/dyncc_runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace dyncc::runtime {

class Model;
struct RuntimeError;

/// Device memory that only grows (like AlignedBuffer on the host).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;

  /// Makes room for `bytes` (at least 1, so the pointer is always real);
  /// the result of the failing driver call otherwise. The owner's context
  /// must be current.
  cuda::CUresult reserve(const cuda::Driver &driver, size_t bytes);
  cuda::CUdeviceptr data() const { return pointer; }
  size_t capacity() const { return allocated; }

private:
  const cuda::Driver *owner = nullptr;
  cuda::CUdeviceptr pointer = 0;
  size_t allocated = 0;
};

/// Page-locked host memory of the driver's (cuMemHostAlloc), grown as
/// needed and freed on destruction: where a session stages host inputs, so
/// their copies to the device are asynchronous DMA.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  PinnedBuffer(PinnedBuffer &&other) noexcept;
  PinnedBuffer &operator=(PinnedBuffer &&other) noexcept;

  /// Makes room for `bytes` (at least 1); the result of the failing driver
  /// call otherwise (the driver must have pinned memory).
  cuda::CUresult reserve(const cuda::Driver &driver, size_t bytes);
  void *data() const { return pointer; }

private:
  const cuda::Driver *owner = nullptr;
  void *pointer = nullptr;
  size_t allocated = 0;
};

/// How the code of a model's kernels was obtained on a device.
struct CudaCodeReport {
  std::string arch;
  /// Kernels loaded from a cubin, and from PTX the driver compiled at load.
  size_t fromCubin = 0;
  size_t fromPtx = 0;
  /// The chips whose PTX the driver compiled ("sm_80"), each once: the
  /// section's chip, which several architectures' code may share.
  std::vector<std::string> compiledPtx;
};

class CudaModel {
public:
  /// Loads `model`'s kernels and weights onto device `ordinal`.
  static std::shared_ptr<CudaModel> load(const Model &model, int ordinal,
                                         RuntimeError &error);
  ~CudaModel();
  CudaModel(const CudaModel &) = delete;
  CudaModel &operator=(const CudaModel &) = delete;

  const cuda::Driver &driver() const { return *api; }
  cuda::CUcontext context() const { return ctx; }
  int ordinal() const { return deviceOrdinal; }
  /// "NVIDIA H200".
  const std::string &deviceName() const { return name; }
  const CudaCodeReport &code() const { return report; }
  /// The number of SMs.
  int64_t smCount() const { return sms; }
  /// `dyncc tune`'s measurements taken on this kind of device (same name,
  /// arch and SM count), or null.
  const DeviceCalibration *calibration() const { return calibrated; }
  /// The blocks of kernel `kernel` resident at once on the whole device
  /// (the driver's occupancy per SM times the SM count).
  bool blocksPerWave(const Model &model, size_t kernel, int64_t &blocks,
                     RuntimeError &error) const;
  /// One line: the device, its architecture and where the code came from.
  std::string describe() const;

  /// The function of kernel `kernel` (null: it is in no variant).
  cuda::CUfunction function(size_t kernel) const { return functions[kernel]; }
  /// The device copy of weight buffer `buffer` (0 for other kinds).
  cuda::CUdeviceptr weight(size_t buffer) const {
    return weights[buffer].data();
  }

  /// Makes the context current on the calling thread.
  bool makeCurrent(RuntimeError &error) const;

private:
  CudaModel() = default;
  bool loadCode(const Model &model, int major, int minor, RuntimeError &error);

  const cuda::Driver *api = nullptr;
  cuda::CUdevice device = 0;
  cuda::CUcontext ctx = nullptr;
  bool retained = false;
  int deviceOrdinal = 0;
  std::string name;
  /// The driver's CUDA version, "13.0".
  std::string driverVersion;
  int64_t sms = 0;
  const DeviceCalibration *calibrated = nullptr;
  CudaCodeReport report;
  std::vector<cuda::CUmodule> modules;
  std::vector<cuda::CUfunction> functions;
  std::vector<DeviceBuffer> weights;
};

} // namespace dyncc::runtime

#endif // DYNCC_LIB_RUNTIME_CUDAMODEL_H
