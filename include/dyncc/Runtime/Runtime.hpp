//===- Runtime.hpp - C++ RAII wrapper of the C API --------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Header-only owning wrappers of dyncc_artifact and dyncc_session. They do
// not throw: fallible calls return dyncc_status, and lastError() gives the
// message. Usage:
//
//   dyncc::Artifact artifact;
//   if (artifact.load("model.dyncc") != DYNCC_OK) report(dyncc::lastError());
//   dyncc::Session session;
//   session.create(artifact, "cpu");
//   session.setInput(0, x.data(), {batch, 64});
//   session.run();
//   const float *y = static_cast<const float *>(session.outputData(0));
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_RUNTIME_HPP
#define DYNCC_RUNTIME_RUNTIME_HPP

#include "dyncc/Runtime/dyncc_runtime.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dyncc {

/// The message of the last failed call on this thread.
inline std::string lastError() { return dyncc_last_error(); }

/// A loaded artifact (move-only).
class Artifact {
public:
  Artifact() = default;
  ~Artifact() { dyncc_artifact_free(handle); }
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;
  Artifact(Artifact &&other) noexcept
      : handle(std::exchange(other.handle, nullptr)) {}
  Artifact &operator=(Artifact &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }

  /// Loads `path`, replacing what this object held.
  dyncc_status load(const std::string &path) {
    dyncc_artifact *fresh = nullptr;
    dyncc_status status = dyncc_artifact_load(path.c_str(), &fresh);
    if (status == DYNCC_OK) {
      dyncc_artifact_free(handle);
      handle = fresh;
    }
    return status;
  }

  explicit operator bool() const { return handle != nullptr; }
  dyncc_artifact *get() const { return handle; }

  std::string modelName() const {
    return text(dyncc_artifact_model_name(handle));
  }
  std::string producer() const { return text(dyncc_artifact_producer(handle)); }
  /// The level of the host code loaded (dyncc_artifact_host_isa).
  std::string hostIsa() const { return text(dyncc_artifact_host_isa(handle)); }
  std::vector<std::string> targets() const {
    std::vector<std::string> result;
    for (size_t i = 0, e = dyncc_artifact_num_targets(handle); i < e; ++i)
      result.push_back(dyncc_artifact_target(handle, i));
    return result;
  }

  size_t numInputs() const { return dyncc_artifact_num_inputs(handle); }
  std::string inputName(size_t i) const {
    return text(dyncc_artifact_input_name(handle, i));
  }
  std::string inputDType(size_t i) const {
    return text(dyncc_artifact_input_dtype(handle, i));
  }
  /// The dimension expressions of input `i`.
  std::vector<std::string> inputDims(size_t i) const {
    std::vector<std::string> dims;
    for (size_t d = 0, e = dyncc_artifact_input_rank(handle, i); d < e; ++d)
      dims.push_back(dyncc_artifact_input_dim(handle, i, d));
    return dims;
  }

  size_t numOutputs() const { return dyncc_artifact_num_outputs(handle); }
  std::string outputName(size_t i) const {
    return text(dyncc_artifact_output_name(handle, i));
  }
  std::string outputDType(size_t i) const {
    return text(dyncc_artifact_output_dtype(handle, i));
  }
  std::vector<std::string> outputDims(size_t i) const {
    std::vector<std::string> dims;
    for (size_t d = 0, e = dyncc_artifact_output_rank(handle, i); d < e; ++d)
      dims.push_back(dyncc_artifact_output_dim(handle, i, d));
    return dims;
  }

  size_t numSymbols() const { return dyncc_artifact_num_symbols(handle); }
  std::string symbolName(size_t i) const {
    return text(dyncc_artifact_symbol_name(handle, i));
  }
  int64_t symbolMin(size_t i) const {
    return dyncc_artifact_symbol_min(handle, i);
  }
  int64_t symbolMax(size_t i) const {
    return dyncc_artifact_symbol_max(handle, i);
  }

  int64_t symbolDivisor(size_t i) const {
    return dyncc_artifact_symbol_divisor(handle, i);
  }
  /// Empty for a symbol an input dimension binds; else the op whose sizes,
  /// read from data in the middle of a run, bind it.
  std::string symbolSource(size_t i) const {
    return text(dyncc_artifact_symbol_source(handle, i));
  }
  size_t numGroups() const { return dyncc_artifact_num_groups(handle); }
  std::string groupName(size_t i) const {
    return text(dyncc_artifact_group_name(handle, i));
  }
  std::string groupKind(size_t i) const {
    return text(dyncc_artifact_group_kind(handle, i));
  }
  /// The symbols `group`'s selection reads.
  std::vector<size_t> groupSymbols(size_t group) const {
    std::vector<size_t> indices(
        dyncc_artifact_group_symbols(handle, group, nullptr, 0));
    dyncc_artifact_group_symbols(handle, group, indices.data(), indices.size());
    return indices;
  }
  size_t numVariants(size_t group) const {
    return dyncc_artifact_group_num_variants(handle, group);
  }
  /// The kernel of variant `variant` of `group`.
  std::string variantKernel(size_t group, size_t variant) const {
    return text(dyncc_artifact_group_variant(handle, group, variant));
  }
  /// The devices `dyncc tune` measured the variants on.
  size_t numCalibrations() const {
    return dyncc_artifact_num_calibrations(handle);
  }
  std::string calibrationDevice(size_t i) const {
    return text(dyncc_artifact_calibration_device(handle, i));
  }

private:
  static std::string text(const char *s) { return s ? s : ""; }
  dyncc_artifact *handle = nullptr;
};

/// An execution session (move-only).
class Session {
public:
  Session() = default;
  ~Session() { dyncc_session_free(handle); }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  Session(Session &&other) noexcept
      : handle(std::exchange(other.handle, nullptr)) {}
  Session &operator=(Session &&other) noexcept {
    std::swap(handle, other.handle);
    return *this;
  }

  dyncc_status create(const Artifact &artifact,
                      const std::string &device = "cpu") {
    dyncc_session *fresh = nullptr;
    dyncc_status status =
        dyncc_session_create(artifact.get(), device.c_str(), &fresh);
    if (status == DYNCC_OK) {
      dyncc_session_free(handle);
      handle = fresh;
    }
    return status;
  }

  explicit operator bool() const { return handle != nullptr; }
  dyncc_session *get() const { return handle; }

  /// Binds input `index` (no copy: `data` must outlive the next run).
  dyncc_status setInput(size_t index, const void *data,
                        const std::vector<int64_t> &shape) {
    return dyncc_session_set_input(handle, index, data, shape.data(),
                                   shape.size());
  }
  dyncc_status setInput(const std::string &name, const void *data,
                        const std::vector<int64_t> &shape) {
    return dyncc_session_set_input_by_name(handle, name.c_str(), data,
                                           shape.data(), shape.size());
  }
  /// Binds input `index` to device memory (CUDA sessions).
  dyncc_status setInputDevice(size_t index, uint64_t address,
                              const std::vector<int64_t> &shape) {
    return dyncc_session_set_input_device(handle, index, address,
                                          shape.data(), shape.size());
  }
  dyncc_status run() { return dyncc_session_run(handle); }
  /// CUDA: enqueue on the session's stream without waiting.
  dyncc_status enqueue() { return dyncc_session_enqueue(handle); }
  dyncc_status synchronize() { return dyncc_session_synchronize(handle); }
  dyncc_status setStream(void *stream) {
    return dyncc_session_set_stream(handle, stream);
  }
  /// CUDA: the last run's device time in milliseconds.
  dyncc_status deviceTime(double &milliseconds) const {
    return dyncc_session_device_time(handle, &milliseconds);
  }
  /// The session's device, and on CUDA where its code came from.
  std::string device() const {
    const char *text = dyncc_session_device(handle);
    return text ? text : "";
  }

  /// The shape of output `index` after a successful run (empty on error).
  std::vector<int64_t> outputShape(size_t index) const {
    size_t rank = 0;
    if (dyncc_session_output_shape(handle, index, nullptr, 0, &rank) !=
        DYNCC_OK)
      return {};
    std::vector<int64_t> shape(rank);
    if (dyncc_session_output_shape(handle, index, shape.data(), rank, &rank) !=
        DYNCC_OK)
      return {};
    return shape;
  }
  /// The host data of output `index` (copied from a GPU on first use after
  /// a run); null on error.
  const void *outputData(size_t index) const {
    return dyncc_session_output_data(handle, index);
  }
  /// The device address of output `index` (CUDA sessions; else 0).
  uint64_t outputDevice(size_t index) const {
    return dyncc_session_output_device(handle, index);
  }
  size_t outputSize(size_t index) const {
    return dyncc_session_output_size(handle, index);
  }
  dyncc_status symbolValue(size_t index, int64_t &value) const {
    return dyncc_session_symbol_value(handle, index, &value);
  }
  /// The kernel that last ran for `group`, or "" if none.
  std::string groupVariant(size_t group) const {
    const char *name = dyncc_session_group_variant(handle, group);
    return name ? name : "";
  }
  /// Why that kernel ran (dyncc_session_group_reason), or "" if none.
  std::string groupReason(size_t group) const {
    const char *reason = dyncc_session_group_reason(handle, group);
    return reason ? reason : "";
  }
  size_t numThreads() const { return dyncc_session_num_threads(handle); }
  /// The kernels the last run launched.
  size_t numLaunches() const { return dyncc_session_num_launches(handle); }

  /// Profiling and tuning (dyncc_runtime.h).
  dyncc_status setProfiling(bool enable) {
    return dyncc_session_set_profiling(handle, enable ? 1 : 0);
  }
  /// CUDA: splits each enqueue's host time into the driver's and the
  /// run-time's own (dyncc_session_set_driver_timing).
  dyncc_status setDriverTiming(bool enable) {
    return dyncc_session_set_driver_timing(handle, enable ? 1 : 0);
  }
  /// The last enqueue's host time inside driver calls, and their count.
  dyncc_status driverTime(double &microseconds, uint64_t &calls) const {
    return dyncc_session_driver_time(handle, &microseconds, &calls);
  }
  dyncc_status inputCopyTime(double &microseconds, uint64_t &bytes) const {
    return dyncc_session_input_copy_time(handle, &microseconds, &bytes);
  }
  /// CUDA graphs: replays, captures, and why they are off ("" if on).
  dyncc_status cudaGraphs(uint64_t &replays, uint64_t &captures,
                          std::string &offReason) const {
    const char *reason = nullptr;
    dyncc_status status =
        dyncc_session_cuda_graphs(handle, &replays, &captures, &reason);
    offReason = reason ? reason : "";
    return status;
  }
  /// Host inputs through page-locked memory: the copies made from it, and
  /// why inputs come from the caller's memory ("" if they do not).
  dyncc_status pinnedInputs(uint64_t &copies, std::string &offReason) const {
    const char *reason = nullptr;
    dyncc_status status = dyncc_session_pinned_inputs(handle, &copies, &reason);
    offReason = reason ? reason : "";
    return status;
  }
  dyncc_status groupTime(size_t group, double &milliseconds,
                         uint64_t &blocks) {
    return dyncc_session_group_time(handle, group, &milliseconds, &blocks);
  }
  dyncc_status forceVariant(size_t group, int64_t variant) {
    return dyncc_session_force_variant(handle, group, variant);
  }
  /// CUDA sessions: the device's name, arch and SM count.
  dyncc_status gpu(std::string &name, std::string &arch, int64_t &sms) const {
    const char *n = nullptr, *a = nullptr;
    dyncc_status status = dyncc_session_gpu(handle, &n, &a, &sms);
    if (status == DYNCC_OK) {
      name = n;
      arch = a;
    }
    return status;
  }
  /// The device `dyncc tune`'s measurements are kept under (GPU or cpu).
  dyncc_status tuningDevice(std::string &device, std::string &arch,
                            int64_t &units) const {
    const char *d = nullptr, *a = nullptr;
    dyncc_status status = dyncc_session_tuning_device(handle, &d, &a, &units);
    if (status == DYNCC_OK) {
      device = d;
      arch = a;
    }
    return status;
  }
  dyncc_status blocksPerWave(size_t group, size_t variant,
                             int64_t &blocks) const {
    return dyncc_session_blocks_per_wave(handle, group, variant, &blocks);
  }

private:
  dyncc_session *handle = nullptr;
};

} // namespace dyncc

#endif // DYNCC_RUNTIME_RUNTIME_HPP
