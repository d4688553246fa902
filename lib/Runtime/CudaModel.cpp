//===- CudaModel.cpp - A model's code and weights on one GPU ----*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "CudaModel.h"

#include "ArenaPlan.h"
#include "Executor.h"

#include <algorithm>

using namespace dyncc::runtime;
using namespace dyncc::runtime::cuda;

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::~DeviceBuffer() {
  if (pointer)
    owner->memFree(pointer);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : owner(other.owner), pointer(other.pointer), allocated(other.allocated) {
  other.pointer = 0;
  other.allocated = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (pointer)
      owner->memFree(pointer);
    owner = other.owner;
    pointer = other.pointer;
    allocated = other.allocated;
    other.pointer = 0;
    other.allocated = 0;
  }
  return *this;
}

CUresult DeviceBuffer::reserve(const Driver &driver, size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (pointer && bytes <= allocated)
    return CUDA_SUCCESS;
  if (pointer) {
    owner->memFree(pointer);
    pointer = 0;
    allocated = 0;
  }
  owner = &driver;
  if (CUresult status = driver.memAlloc(&pointer, bytes))
    return status;
  allocated = bytes;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// PinnedBuffer
//===----------------------------------------------------------------------===//

PinnedBuffer::~PinnedBuffer() {
  if (pointer)
    owner->memFreeHost(pointer);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer &&other) noexcept
    : owner(other.owner), pointer(other.pointer), allocated(other.allocated) {
  other.pointer = nullptr;
  other.allocated = 0;
}

PinnedBuffer &PinnedBuffer::operator=(PinnedBuffer &&other) noexcept {
  if (this != &other) {
    if (pointer)
      owner->memFreeHost(pointer);
    owner = other.owner;
    pointer = other.pointer;
    allocated = other.allocated;
    other.pointer = nullptr;
    other.allocated = 0;
  }
  return *this;
}

CUresult PinnedBuffer::reserve(const Driver &driver, size_t bytes) {
  bytes = std::max<size_t>(bytes, 1);
  if (pointer && bytes <= allocated)
    return CUDA_SUCCESS;
  if (pointer) {
    owner->memFreeHost(pointer);
    pointer = nullptr;
    allocated = 0;
  }
  owner = &driver;
  if (CUresult status = driver.memHostAlloc(&pointer, bytes, 0)) {
    pointer = nullptr;
    return status;
  }
  allocated = bytes;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Choosing the code for a device
//===----------------------------------------------------------------------===//

namespace {
std::string quoted(const std::string &text) { return "'" + text + "'"; }

/// "sm_90a" -> 90, arch-specific; false for anything else.
bool parseArch(const std::string &arch, int &version, bool &specific) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return false;
  size_t end = 3;
  version = 0;
  while (end < arch.size() && arch[end] >= '0' && arch[end] <= '9' &&
         end < 6)
    version = version * 10 + (arch[end++] - '0');
  specific = end + 1 == arch.size() && arch[end] == 'a';
  return end > 3 && (end == arch.size() || specific);
}

/// The code of `kernel` to load on a device of compute capability
/// `major`.`minor`: its cubin for that architecture (or an earlier one of
/// the same major version, which the hardware runs), else its PTX for the
/// newest architecture not above the device's, which the driver compiles.
/// Arch-specific code ("sm_90a") runs only on exactly that device.
const GpuCode *chooseCode(const KernelInfo &kernel, int major, int minor,
                          bool &fromCubin) {
  int device = major * 10 + minor;
  const GpuCode *best = nullptr;
  int bestRank = -1;
  for (const GpuCode &code : kernel.gpu) {
    int version;
    bool specific;
    if (!parseArch(code.arch, version, specific) || version > device ||
        (specific && version != device))
      continue;
    bool cubin = !code.cubinSection.empty() && version / 10 == major;
    // Cubins before PTX, then the newest, then arch-specific.
    int rank = (cubin ? 100000 : 0) + version * 10 + (specific ? 1 : 0);
    if (rank > bestRank) {
      best = &code;
      bestRank = rank;
      fromCubin = cubin;
    }
  }
  return best;
}
} // namespace

//===----------------------------------------------------------------------===//
// CudaModel
//===----------------------------------------------------------------------===//

bool CudaModel::makeCurrent(RuntimeError &error) const {
  if (CUresult status = api->ctxSetCurrent(ctx))
    return error.fail(DYNCC_ERROR_DEVICE,
                      "cuda:" + std::to_string(deviceOrdinal) + ": " +
                          api->failure("cuCtxSetCurrent", status));
  return true;
}

std::string CudaModel::describe() const {
  std::string text = "cuda:" + std::to_string(deviceOrdinal) + " (" + name +
                     ", " + report.arch + ", driver " + driverVersion + "): ";
  auto kernels = [](size_t count) {
    return std::to_string(count) + (count == 1 ? " kernel" : " kernels");
  };
  text += kernels(report.fromCubin) + " from cubin";
  if (report.fromPtx) {
    text += ", " + kernels(report.fromPtx) +
            " compiled by the driver at load from the PTX of ";
    for (size_t i = 0; i < report.compiledPtx.size(); ++i)
      text += (i ? ", " : "") + report.compiledPtx[i];
  }
  return text;
}

bool CudaModel::blocksPerWave(const Model &model, size_t kernel,
                              int64_t &blocks, RuntimeError &error) const {
  const KernelInfo &info = model.manifest().kernels[kernel];
  if (!functions[kernel])
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "kernel " + quoted(info.name) + " is in no variant");
  int perSm = 0;
  int threads = static_cast<int>(info.block[0] * info.block[1] * info.block[2]);
  if (CUresult status = api->occupancyMaxActiveBlocksPerMultiprocessor(
          &perSm, functions[kernel], threads,
          static_cast<size_t>(info.sharedBytes)))
    return error.fail(DYNCC_ERROR_DEVICE,
                      "cuda:" + std::to_string(deviceOrdinal) + ": " +
                          api->failure("cuOccupancyMaxActiveBlocksPer"
                                       "Multiprocessor of kernel " +
                                           quoted(info.name),
                                       status));
  blocks = std::max<int64_t>(perSm, 1) * sms;
  return true;
}

std::shared_ptr<CudaModel> CudaModel::load(const Model &model, int ordinal,
                                           RuntimeError &error) {
  std::string label = "cuda:" + std::to_string(ordinal);
  std::string message;
  const Driver *driver = Driver::get(message);
  if (!driver) {
    error.fail(DYNCC_ERROR_DEVICE, label + ": " + message);
    return nullptr;
  }
  int count = 0;
  if (CUresult status = driver->deviceGetCount(&count)) {
    error.fail(DYNCC_ERROR_DEVICE,
               label + ": " + driver->failure("cuDeviceGetCount", status));
    return nullptr;
  }
  if (ordinal >= count) {
    error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
               label + ": no such device (this machine has " +
                   std::to_string(count) + " CUDA device" +
                   (count == 1 ? "" : "s") + ")");
    return nullptr;
  }

  std::shared_ptr<CudaModel> gpu(new CudaModel());
  gpu->api = driver;
  gpu->deviceOrdinal = ordinal;
  auto check = [&](CUresult status, const char *what) {
    if (status != CUDA_SUCCESS)
      error.fail(DYNCC_ERROR_DEVICE,
                 label + ": " + driver->failure(what, status));
    return status == CUDA_SUCCESS;
  };
  char name[256] = {0};
  int major = 0, minor = 0, sms = 0, version = 0;
  if (!check(driver->driverGetVersion(&version), "cuDriverGetVersion") ||
      !check(driver->deviceGet(&gpu->device, ordinal), "cuDeviceGet") ||
      !check(driver->deviceGetName(name, sizeof(name) - 1, gpu->device),
             "cuDeviceGetName") ||
      !check(driver->deviceGetAttribute(
                 &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                 gpu->device),
             "cuDeviceGetAttribute") ||
      !check(driver->deviceGetAttribute(
                 &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                 gpu->device),
             "cuDeviceGetAttribute") ||
      !check(driver->deviceGetAttribute(
                 &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, gpu->device),
             "cuDeviceGetAttribute") ||
      !check(driver->primaryCtxRetain(&gpu->ctx, gpu->device),
             "cuDevicePrimaryCtxRetain"))
    return nullptr;
  gpu->retained = true;
  gpu->name = name;
  gpu->sms = sms;
  // 13000 is 13.0.
  gpu->driverVersion = std::to_string(version / 1000) + "." +
                       std::to_string(version % 1000 / 10);
  gpu->report.arch = "sm_" + std::to_string(major * 10 + minor);
  gpu->calibrated =
      model.calibration().find(gpu->name, gpu->report.arch, gpu->sms);
  if (!gpu->makeCurrent(error) || !gpu->loadCode(model, major, minor, error))
    return nullptr;

  // Weights: copied once, shared by the sessions.
  const Manifest &manifest = model.manifest();
  gpu->weights.resize(manifest.buffers.size());
  for (size_t b = 0; b < manifest.buffers.size(); ++b) {
    const BufferInfo &buffer = manifest.buffers[b];
    if (buffer.kind != BufferKind::Weight)
      continue;
    const ArtifactSection *section = model.file().findSection(buffer.section);
    std::string what = "weight buffer " + std::to_string(buffer.id) + " (" +
                       std::to_string(section->size) + " bytes)";
    size_t bytes = static_cast<size_t>(section->size);
    if (CUresult status = gpu->weights[b].reserve(*driver, bytes)) {
      error.fail(DYNCC_ERROR_DEVICE, label + ": " +
                                         driver->failure("cuMemAlloc of " + what,
                                                         status));
      return nullptr;
    }
    if (section->size != 0 &&
        !check(driver->memcpyHtoDAsync(gpu->weights[b].data(), section->data,
                                       section->size, nullptr),
               "cuMemcpyHtoDAsync"))
      return nullptr;
  }
  if (!check(driver->streamSynchronize(nullptr), "cuStreamSynchronize"))
    return nullptr;
  // Measured selections may fill split-K workspaces the compiler's plan
  // has empty: plan those too (about 1.3 ms for BERT-base's 298 temps).
  if (const DeviceCalibration *device = gpu->calibrated)
    model.planMeasuredAhead(*device);
  return gpu;
}

bool CudaModel::loadCode(const Model &model, int major, int minor,
                         RuntimeError &error) {
  const Manifest &manifest = model.manifest();
  std::string label = "cuda:" + std::to_string(deviceOrdinal);
  std::string targets;
  for (const std::string &target : manifest.targets)
    targets += (targets.empty() ? "" : ", ") + target;
  // One module per section: the PTX of all kernels of an architecture is one
  // section, and so is its cubin.
  std::vector<std::string> sections;
  functions.assign(manifest.kernels.size(), nullptr);
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    const KernelInfo &kernel = manifest.kernels[k];
    bool fromCubin = false;
    const GpuCode *code = chooseCode(kernel, major, minor, fromCubin);
    if (!code)
      return error.fail(DYNCC_ERROR_UNSUPPORTED,
                        label + ": kernel " + quoted(kernel.name) +
                            " has no code for " + report.arch +
                            " (the artifact's targets: " + targets + ")");
    const std::string &sectionName =
        fromCubin ? code->cubinSection : code->section;
    size_t index = std::find(sections.begin(), sections.end(), sectionName) -
                   sections.begin();
    if (index == sections.size()) {
      const ArtifactSection *section = model.file().findSection(sectionName);
      std::string text;
      const void *image = section->data;
      if (!fromCubin) {
        // The driver reads PTX as a NUL-terminated string.
        text.assign(reinterpret_cast<const char *>(section->data),
                    static_cast<size_t>(section->size));
        image = text.c_str();
      }
      char log[4096] = {0};
      int options[] = {CU_JIT_ERROR_LOG_BUFFER,
                       CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
      void *values[] = {log, reinterpret_cast<void *>(sizeof(log) - 1)};
      CUmodule module = nullptr;
      if (CUresult status =
              api->moduleLoadDataEx(&module, image, 2, options, values)) {
        std::string detail = log;
        for (char &c : detail)
          if (c == '\n' || c == '\r')
            c = ' ';
        return error.fail(
            DYNCC_ERROR_DEVICE,
            label + ": loading section " + quoted(sectionName) + " for " +
                report.arch + ": " +
                api->failure("cuModuleLoadDataEx", status) +
                (detail.empty() ? "" : ": " + detail));
      }
      modules.push_back(module);
      sections.push_back(sectionName);
      // Chips share the oldest one's PTX (`ptx.sm_80` for sm_80 and
      // sm_90): the report names the PTX's chip, which its section says.
      if (!fromCubin) {
        std::string ptxChip = sectionName.rfind("ptx.", 0) == 0
                                  ? sectionName.substr(4)
                                  : code->arch;
        if (std::find(report.compiledPtx.begin(), report.compiledPtx.end(),
                      ptxChip) == report.compiledPtx.end())
          report.compiledPtx.push_back(ptxChip);
      }
    }
    ++(fromCubin ? report.fromCubin : report.fromPtx);
    CUfunction function = nullptr;
    if (CUresult status = api->moduleGetFunction(&function, modules[index],
                                                 code->entry.c_str()))
      return error.fail(DYNCC_ERROR_FORMAT,
                        label + ": kernel " + quoted(kernel.name) + ": entry " +
                            quoted(code->entry) + " of section " +
                            quoted(sectionName) + ": " +
                            api->failure("cuModuleGetFunction", status));
    // A block's static shared memory (ptxas counts the dynamic region's
    // symbol as static bytes) and its dynamic bytes share the 48 KB every
    // block gets; past that the dynamic limit is raised, as far as the
    // device's opt-in limit less the static bytes.
    int staticBytes = 0;
    if (CUresult status = api->funcGetAttribute(
            &staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function))
      return error.fail(DYNCC_ERROR_DEVICE,
                        label + ": kernel " + quoted(kernel.name) + ": " +
                            api->failure("cuFuncGetAttribute", status));
    long long blockBytes = kernel.sharedBytes + staticBytes;
    if (blockBytes > kDefaultSharedLimit) {
      int limit = 0;
      if (CUresult status = api->deviceGetAttribute(
              &limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
              device))
        return error.fail(DYNCC_ERROR_DEVICE,
                          label + ": " + api->failure("cuDeviceGetAttribute",
                                                      status));
      if (blockBytes > limit)
        return error.fail(DYNCC_ERROR_UNSUPPORTED,
                          label + ": kernel " + quoted(kernel.name) +
                              " needs " + std::to_string(blockBytes) +
                              " bytes of shared memory per block (" +
                              std::to_string(staticBytes) + " static, " +
                              std::to_string(kernel.sharedBytes) +
                              " dynamic); " + report.arch + " allows " +
                              std::to_string(limit));
      if (CUresult status = api->funcSetAttribute(
              function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              static_cast<int>(kernel.sharedBytes)))
        return error.fail(DYNCC_ERROR_DEVICE,
                          label + ": kernel " + quoted(kernel.name) + ": " +
                              api->failure("cuFuncSetAttribute", status));
    }
    functions[k] = function;
  }
  return true;
}

CudaModel::~CudaModel() {
  if (!api)
    return;
  api->ctxSetCurrent(ctx);
  weights.clear();
  for (CUmodule module : modules)
    api->moduleUnload(module);
  if (retained)
    api->primaryCtxRelease(device);
}
