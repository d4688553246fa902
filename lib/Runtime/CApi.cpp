//===- CApi.cpp - C API of the dyncc run-time -------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "dyncc/Runtime/dyncc_runtime.h"

using namespace dyncc::runtime;

struct dyncc_artifact {
  std::shared_ptr<const Model> model;
  /// dyncc_artifact_calibration_device's text.
  mutable std::string scratch;
};

struct dyncc_session {
  std::unique_ptr<Session> session;
  /// dyncc_session_device's text.
  mutable std::string device;
  /// dyncc_session_tuning_device's strings.
  mutable std::string tuningDevice, tuningArch;
};

namespace {
thread_local std::string lastError;

dyncc_status fail(dyncc_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

dyncc_status fail(const RuntimeError &error) {
  lastError = error.message;
  return error.code;
}

const Manifest *manifestOf(const dyncc_artifact *artifact) {
  return artifact ? &artifact->model->manifest() : nullptr;
}

const TensorInfo *port(const dyncc_artifact *artifact, size_t index,
                       bool input) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest)
    return nullptr;
  const std::vector<TensorInfo> &ports =
      input ? manifest->inputs : manifest->outputs;
  return index < ports.size() ? &ports[index] : nullptr;
}

dyncc_status findPort(const dyncc_artifact *artifact, const char *name,
                      size_t *index, bool input) {
  const char *what = input ? "input" : "output";
  if (!artifact || !name || !index)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                std::string("dyncc_artifact_find_") + what + ": null argument");
  const std::vector<TensorInfo> &ports =
      input ? artifact->model->manifest().inputs
            : artifact->model->manifest().outputs;
  std::string names;
  for (size_t i = 0; i < ports.size(); ++i) {
    if (ports[i].name == name) {
      *index = i;
      return DYNCC_OK;
    }
    names += (i ? ", " : "") + ports[i].name;
  }
  return fail(DYNCC_ERROR_INVALID_ARGUMENT, std::string("no ") + what +
                                                " named '" + name + "' (" +
                                                what + "s: " + names + ")");
}
} // namespace

extern "C" {

const char *dyncc_last_error(void) { return lastError.c_str(); }

const char *dyncc_status_name(dyncc_status status) {
  switch (status) {
  case DYNCC_OK:
    return "DYNCC_OK";
  case DYNCC_ERROR_IO:
    return "DYNCC_ERROR_IO";
  case DYNCC_ERROR_FORMAT:
    return "DYNCC_ERROR_FORMAT";
  case DYNCC_ERROR_VERSION:
    return "DYNCC_ERROR_VERSION";
  case DYNCC_ERROR_CHECKSUM:
    return "DYNCC_ERROR_CHECKSUM";
  case DYNCC_ERROR_INVALID_ARGUMENT:
    return "DYNCC_ERROR_INVALID_ARGUMENT";
  case DYNCC_ERROR_SHAPE:
    return "DYNCC_ERROR_SHAPE";
  case DYNCC_ERROR_UNSUPPORTED:
    return "DYNCC_ERROR_UNSUPPORTED";
  case DYNCC_ERROR_DEVICE:
    return "DYNCC_ERROR_DEVICE";
  case DYNCC_ERROR_INTERNAL:
    return "DYNCC_ERROR_INTERNAL";
  }
  return "DYNCC_ERROR_UNKNOWN";
}

const char *dyncc_runtime_version(void) { return DYNCC_RUNTIME_VERSION; }

dyncc_status dyncc_artifact_load(const char *path, dyncc_artifact **out) {
  if (!path || !out)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_artifact_load: null argument");
  *out = nullptr;
  RuntimeError error;
  std::shared_ptr<const Model> model = Model::load(path, error);
  if (!model)
    return fail(error);
  *out = new dyncc_artifact{std::move(model), {}};
  return DYNCC_OK;
}

void dyncc_artifact_free(dyncc_artifact *artifact) { delete artifact; }

const char *dyncc_artifact_model_name(const dyncc_artifact *artifact) {
  const Manifest *manifest = manifestOf(artifact);
  return manifest ? manifest->model.c_str() : nullptr;
}

const char *dyncc_artifact_producer(const dyncc_artifact *artifact) {
  const Manifest *manifest = manifestOf(artifact);
  return manifest ? manifest->producer.c_str() : nullptr;
}

const char *dyncc_artifact_host_isa(const dyncc_artifact *artifact) {
  return artifact ? artifact->model->hostIsa().c_str() : nullptr;
}

size_t dyncc_artifact_num_targets(const dyncc_artifact *artifact) {
  const Manifest *manifest = manifestOf(artifact);
  return manifest ? manifest->targets.size() : 0;
}

const char *dyncc_artifact_target(const dyncc_artifact *artifact,
                                  size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->targets.size())
    return nullptr;
  return manifest->targets[index].c_str();
}

size_t dyncc_artifact_num_inputs(const dyncc_artifact *artifact) {
  const Manifest *manifest = manifestOf(artifact);
  return manifest ? manifest->inputs.size() : 0;
}

const char *dyncc_artifact_input_name(const dyncc_artifact *artifact,
                                      size_t index) {
  const TensorInfo *info = port(artifact, index, true);
  return info ? info->name.c_str() : nullptr;
}

const char *dyncc_artifact_input_dtype(const dyncc_artifact *artifact,
                                       size_t index) {
  const TensorInfo *info = port(artifact, index, true);
  return info ? dtypeName(info->dtype) : nullptr;
}

size_t dyncc_artifact_input_rank(const dyncc_artifact *artifact, size_t index) {
  const TensorInfo *info = port(artifact, index, true);
  return info ? info->shape.size() : 0;
}

const char *dyncc_artifact_input_dim(const dyncc_artifact *artifact,
                                     size_t index, size_t dim) {
  const TensorInfo *info = port(artifact, index, true);
  if (!info || dim >= info->shape.size())
    return nullptr;
  return info->shape[dim].text().c_str();
}

dyncc_status dyncc_artifact_find_input(const dyncc_artifact *artifact,
                                       const char *name, size_t *index) {
  return findPort(artifact, name, index, true);
}

size_t dyncc_artifact_num_outputs(const dyncc_artifact *artifact) {
  const Manifest *manifest = manifestOf(artifact);
  return manifest ? manifest->outputs.size() : 0;
}

const char *dyncc_artifact_output_name(const dyncc_artifact *artifact,
                                       size_t index) {
  const TensorInfo *info = port(artifact, index, false);
  return info ? info->name.c_str() : nullptr;
}

const char *dyncc_artifact_output_dtype(const dyncc_artifact *artifact,
                                        size_t index) {
  const TensorInfo *info = port(artifact, index, false);
  return info ? dtypeName(info->dtype) : nullptr;
}

size_t dyncc_artifact_output_rank(const dyncc_artifact *artifact,
                                  size_t index) {
  const TensorInfo *info = port(artifact, index, false);
  return info ? info->shape.size() : 0;
}

const char *dyncc_artifact_output_dim(const dyncc_artifact *artifact,
                                      size_t index, size_t dim) {
  const TensorInfo *info = port(artifact, index, false);
  if (!info || dim >= info->shape.size())
    return nullptr;
  return info->shape[dim].text().c_str();
}

dyncc_status dyncc_artifact_find_output(const dyncc_artifact *artifact,
                                        const char *name, size_t *index) {
  return findPort(artifact, name, index, false);
}

size_t dyncc_artifact_num_symbols(const dyncc_artifact *artifact) {
  const Manifest *manifest = manifestOf(artifact);
  return manifest ? manifest->symbols.size() : 0;
}

const char *dyncc_artifact_symbol_name(const dyncc_artifact *artifact,
                                       size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->symbols.size())
    return nullptr;
  return manifest->symbols[index].name.c_str();
}

int64_t dyncc_artifact_symbol_min(const dyncc_artifact *artifact,
                                  size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->symbols.size())
    return 0;
  return manifest->symbols[index].min;
}

int64_t dyncc_artifact_symbol_max(const dyncc_artifact *artifact,
                                  size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->symbols.size())
    return 0;
  return manifest->symbols[index].max;
}

int64_t dyncc_artifact_symbol_divisor(const dyncc_artifact *artifact,
                                      size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->symbols.size())
    return 0;
  return manifest->symbols[index].divisor;
}

const char *dyncc_artifact_symbol_source(const dyncc_artifact *artifact,
                                         size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->symbols.size())
    return nullptr;
  size_t step = manifest->symbols[index].bindingStep;
  return step == kAtBinding ? nullptr : manifest->steps[step].where.c_str();
}

size_t dyncc_artifact_num_groups(const dyncc_artifact *artifact) {
  const Manifest *manifest = manifestOf(artifact);
  return manifest ? manifest->groups.size() : 0;
}

const char *dyncc_artifact_group_name(const dyncc_artifact *artifact,
                                      size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->groups.size())
    return nullptr;
  return manifest->groups[index].name.c_str();
}

const char *dyncc_artifact_group_kind(const dyncc_artifact *artifact,
                                      size_t index) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || index >= manifest->groups.size())
    return nullptr;
  return manifest->groups[index].kind.c_str();
}

size_t dyncc_artifact_group_num_variants(const dyncc_artifact *artifact,
                                         size_t group) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || group >= manifest->groups.size())
    return 0;
  return manifest->groups[group].variants.size();
}

const char *dyncc_artifact_group_variant(const dyncc_artifact *artifact,
                                         size_t group, size_t variant) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || group >= manifest->groups.size() ||
      variant >= manifest->groups[group].variants.size())
    return nullptr;
  return manifest->kernels[manifest->groups[group].variants[variant].kernel]
      .name.c_str();
}

size_t dyncc_artifact_group_symbols(const dyncc_artifact *artifact,
                                    size_t group, size_t *indices,
                                    size_t capacity) {
  const Manifest *manifest = manifestOf(artifact);
  if (!manifest || group >= manifest->groups.size())
    return 0;
  const std::vector<size_t> &slots = manifest->groups[group].keySymbols;
  for (size_t i = 0; i < slots.size() && i < capacity && indices; ++i)
    indices[i] = slots[i];
  return slots.size();
}

size_t dyncc_artifact_num_calibrations(const dyncc_artifact *artifact) {
  return artifact ? artifact->model->calibration().devices.size() : 0;
}

const char *dyncc_artifact_calibration_device(const dyncc_artifact *artifact,
                                              size_t index) {
  if (!artifact || index >= artifact->model->calibration().devices.size())
    return nullptr;
  const DeviceCalibration &device =
      artifact->model->calibration().devices[index];
  artifact->scratch = device.device + " (" + device.arch + ", " +
                      std::to_string(device.sms) + " SMs)";
  return artifact->scratch.c_str();
}

dyncc_status dyncc_session_create(const dyncc_artifact *artifact,
                                  const char *device, dyncc_session **out) {
  if (!artifact || !out)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_create: null argument");
  *out = nullptr;
  RuntimeError error;
  std::unique_ptr<Session> session =
      Session::create(artifact->model, device, error);
  if (!session)
    return fail(error);
  *out = new dyncc_session{std::move(session), {}, {}, {}};
  return DYNCC_OK;
}

void dyncc_session_free(dyncc_session *session) { delete session; }

dyncc_status dyncc_session_set_input(dyncc_session *session, size_t index,
                                     const void *data, const int64_t *shape,
                                     size_t rank) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_set_input: null session");
  RuntimeError error;
  if (!session->session->setInput(index, data, shape, rank, error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_set_input_device(dyncc_session *session,
                                            size_t index, uint64_t address,
                                            const int64_t *shape, size_t rank) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_set_input_device: null session");
  RuntimeError error;
  const void *data =
      reinterpret_cast<const void *>(static_cast<uintptr_t>(address));
  if (!session->session->setInput(index, data, shape, rank, error,
                                  /*onDevice=*/true))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_set_input_by_name(dyncc_session *session,
                                             const char *name, const void *data,
                                             const int64_t *shape,
                                             size_t rank) {
  if (!session || !name)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_set_input_by_name: null argument");
  const std::vector<TensorInfo> &inputs =
      session->session->model().manifest().inputs;
  std::string names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name == name)
      return dyncc_session_set_input(session, i, data, shape, rank);
    names += (i ? ", " : "") + inputs[i].name;
  }
  return fail(DYNCC_ERROR_INVALID_ARGUMENT, std::string("no input named '") +
                                                name + "' (inputs: " + names +
                                                ")");
}

dyncc_status dyncc_session_run(dyncc_session *session) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_run: null session");
  RuntimeError error;
  if (!session->session->run(error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_enqueue(dyncc_session *session) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_enqueue: null session");
  RuntimeError error;
  if (!session->session->enqueue(error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_synchronize(dyncc_session *session) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_synchronize: null session");
  RuntimeError error;
  if (!session->session->wait(error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_set_stream(dyncc_session *session, void *stream) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_set_stream: null session");
  RuntimeError error;
  if (!session->session->setStream(stream, error))
    return fail(error);
  return DYNCC_OK;
}

void *dyncc_session_stream(const dyncc_session *session) {
  return session ? session->session->currentStream() : nullptr;
}

dyncc_status dyncc_session_device_time(dyncc_session *session,
                                       double *milliseconds) {
  if (!session || !milliseconds)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_device_time: null argument");
  RuntimeError error;
  if (!session->session->deviceTime(*milliseconds, error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_gpu(const dyncc_session *session,
                               const char **name, const char **arch,
                               int64_t *sms) {
  if (!session || !name || !arch || !sms)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_gpu: null argument");
  const CudaModel *gpu = session->session->cudaModel();
  if (!gpu)
    return fail(DYNCC_ERROR_UNSUPPORTED,
                "the session is on the cpu, not a CUDA device");
  *name = gpu->deviceName().c_str();
  *arch = gpu->code().arch.c_str();
  *sms = gpu->smCount();
  return DYNCC_OK;
}

dyncc_status dyncc_session_tuning_device(const dyncc_session *session,
                                         const char **device, const char **arch,
                                         int64_t *units) {
  if (!session || !device || !arch || !units)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_tuning_device: null argument");
  session->session->tuningDevice(session->tuningDevice, session->tuningArch,
                                 *units);
  *device = session->tuningDevice.c_str();
  *arch = session->tuningArch.c_str();
  return DYNCC_OK;
}

dyncc_status dyncc_session_set_profiling(dyncc_session *session,
                                         int enable) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_set_profiling: null argument");
  RuntimeError error;
  if (!session->session->setProfiling(enable != 0, error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_set_driver_timing(dyncc_session *session,
                                             int enable) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_set_driver_timing: null argument");
  RuntimeError error;
  if (!session->session->setDriverTiming(enable != 0, error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_driver_time(const dyncc_session *session,
                                       double *microseconds, uint64_t *calls) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_driver_time: null argument");
  double time = 0;
  uint64_t count = 0;
  session->session->lastDriverTime(time, count);
  if (microseconds)
    *microseconds = time;
  if (calls)
    *calls = count;
  return DYNCC_OK;
}

dyncc_status dyncc_session_input_copy_time(const dyncc_session *session,
                                           double *microseconds,
                                           uint64_t *bytes) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_input_copy_time: null argument");
  double time = 0;
  uint64_t count = 0;
  session->session->lastInputCopyTime(time, count);
  if (microseconds)
    *microseconds = time;
  if (bytes)
    *bytes = count;
  return DYNCC_OK;
}

dyncc_status dyncc_session_cuda_graphs(const dyncc_session *session,
                                       uint64_t *replays, uint64_t *captures,
                                       const char **off_reason) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_cuda_graphs: null argument");
  if (replays)
    *replays = session->session->graphReplays();
  if (captures)
    *captures = session->session->graphCaptures();
  if (off_reason)
    *off_reason = session->session->graphsOff().c_str();
  return DYNCC_OK;
}

dyncc_status dyncc_session_pinned_inputs(const dyncc_session *session,
                                         uint64_t *copies,
                                         const char **off_reason) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_pinned_inputs: null argument");
  if (copies)
    *copies = session->session->pinnedCopies();
  if (off_reason)
    *off_reason = session->session->pinnedOff().c_str();
  return DYNCC_OK;
}

dyncc_status dyncc_session_group_time(dyncc_session *session, size_t group,
                                      double *milliseconds, uint64_t *blocks) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_group_time: null argument");
  RuntimeError error;
  double time;
  uint64_t launched;
  if (!session->session->groupProfile(group, time, launched, error))
    return fail(error);
  if (milliseconds)
    *milliseconds = time;
  if (blocks)
    *blocks = launched;
  return DYNCC_OK;
}

dyncc_status dyncc_session_force_variant(dyncc_session *session, size_t group,
                                         int64_t variant) {
  if (!session)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_force_variant: null argument");
  RuntimeError error;
  if (!session->session->forceVariant(group, variant, error))
    return fail(error);
  return DYNCC_OK;
}

dyncc_status dyncc_session_blocks_per_wave(const dyncc_session *session,
                                           size_t group, size_t variant,
                                           int64_t *blocks) {
  if (!session || !blocks)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_blocks_per_wave: null argument");
  RuntimeError error;
  if (!session->session->blocksPerWave(group, variant, *blocks, error))
    return fail(error);
  return DYNCC_OK;
}

const char *dyncc_session_device(const dyncc_session *session) {
  if (!session)
    return nullptr;
  session->device = session->session->deviceDescription();
  return session->device.c_str();
}

dyncc_status dyncc_session_output_shape(const dyncc_session *session,
                                        size_t index, int64_t *shape,
                                        size_t capacity, size_t *rank) {
  if (!session || !rank || (capacity != 0 && !shape))
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_output_shape: null argument");
  const Session &s = *session->session;
  size_t numOutputs = s.model().manifest().outputs.size();
  if (index >= numOutputs)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "output index " + std::to_string(index) + " is out of range (" +
                    std::to_string(numOutputs) + " outputs)");
  if (!s.hasRun())
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "the session has no results: run it first");
  const std::vector<int64_t> &dims = s.outputShape(index);
  *rank = dims.size();
  for (size_t d = 0; d < dims.size() && d < capacity; ++d)
    shape[d] = dims[d];
  return DYNCC_OK;
}

size_t dyncc_session_output_size(const dyncc_session *session, size_t index) {
  if (!session || !session->session->hasRun() ||
      index >= session->session->model().manifest().outputs.size())
    return 0;
  return session->session->outputBytes(index);
}

const void *dyncc_session_output_data(const dyncc_session *session,
                                      size_t index) {
  if (!session || !session->session->hasRun() ||
      index >= session->session->model().manifest().outputs.size())
    return nullptr;
  RuntimeError error;
  const void *data = session->session->hostOutput(index, error);
  if (!data)
    fail(error);
  return data;
}

uint64_t dyncc_session_output_device(const dyncc_session *session,
                                     size_t index) {
  if (!session ||
      index >= session->session->model().manifest().outputs.size())
    return 0;
  return session->session->deviceOutput(index);
}

dyncc_status dyncc_session_symbol_value(const dyncc_session *session,
                                        size_t index, int64_t *value) {
  if (!session || !value)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_symbol_value: null argument");
  const Session &s = *session->session;
  size_t numSymbols = s.model().manifest().symbols.size();
  if (index >= numSymbols)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "symbol index " + std::to_string(index) + " is out of range (" +
                    std::to_string(numSymbols) + " symbols)");
  if (!s.hasRun())
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "the session has no results: run it first");
  *value = s.symbolValue(index);
  return DYNCC_OK;
}

const char *dyncc_session_group_variant(const dyncc_session *session,
                                        size_t group) {
  if (!session || group >= session->session->model().manifest().groups.size())
    return nullptr;
  return session->session->groupVariant(group);
}

const char *dyncc_session_group_reason(const dyncc_session *session,
                                       size_t group) {
  if (!session || group >= session->session->model().manifest().groups.size())
    return nullptr;
  return session->session->groupReason(group);
}

size_t dyncc_session_num_launches(const dyncc_session *session) {
  return session ? session->session->launchCount() : 0;
}

size_t dyncc_session_num_threads(const dyncc_session *session) {
  return session ? session->session->numThreads() : 0;
}

dyncc_status dyncc_session_memory(const dyncc_session *session,
                                  uint64_t *arena_bytes,
                                  uint64_t *live_peak_bytes) {
  if (!session || !arena_bytes || !live_peak_bytes)
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "dyncc_session_memory: null argument");
  const Session &s = *session->session;
  if (!s.hasRun())
    return fail(DYNCC_ERROR_INVALID_ARGUMENT,
                "the session has no results: run it first");
  *arena_bytes = s.arenaPlacement().size;
  *live_peak_bytes = s.arenaPlacement().livePeak;
  return DYNCC_OK;
}

} // extern "C"
