//===- Executor.cpp - Models and sessions -----------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "dyncc/Runtime/ArenaPlanAhead.h"
#include "dyncc/Runtime/HostIsa.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sys/utsname.h>
#include <unistd.h>

using namespace dyncc::runtime;

namespace {
/// Symbol tuples whose selections are memoized before the memo is reset.
constexpr size_t kMaxSelectionMemoEntries = 1 << 14;
/// The CUDA graphs a session keeps (the least recently used goes first).
constexpr size_t kMaxGraphs = 8;
/// A run's memo entry of a group not selected yet.
constexpr uint32_t kNotSelected = UINT32_MAX;

std::string str(int64_t value) { return std::to_string(value); }

std::string quoted(const std::string &text) { return "'" + text + "'"; }
} // namespace

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

std::shared_ptr<const Model>
Model::load(const std::string &path, RuntimeError &error, bool loadCpuCode) {
  std::string message;
  ArtifactError kind = ArtifactError::None;
  std::unique_ptr<ArtifactFile> file = ArtifactFile::open(path, message, &kind);
  if (!file) {
    dyncc_status code = kind == ArtifactError::Io         ? DYNCC_ERROR_IO
                        : kind == ArtifactError::Version  ? DYNCC_ERROR_VERSION
                        : kind == ArtifactError::Checksum ? DYNCC_ERROR_CHECKSUM
                                                          : DYNCC_ERROR_FORMAT;
    error.fail(code, message);
    return nullptr;
  }
  return finish(std::move(file), error, loadCpuCode);
}

std::shared_ptr<const Model> Model::loadMemory(const void *data, size_t size,
                                               const std::string &name,
                                               RuntimeError &error,
                                               bool loadCpuCode) {
  std::string message;
  ArtifactError kind = ArtifactError::None;
  std::unique_ptr<ArtifactFile> file =
      ArtifactFile::openMemory(data, size, name, message, &kind);
  if (!file) {
    dyncc_status code = kind == ArtifactError::Io         ? DYNCC_ERROR_IO
                        : kind == ArtifactError::Version  ? DYNCC_ERROR_VERSION
                        : kind == ArtifactError::Checksum ? DYNCC_ERROR_CHECKSUM
                                                          : DYNCC_ERROR_FORMAT;
    error.fail(code, message);
    return nullptr;
  }
  return finish(std::move(file), error, loadCpuCode);
}

std::shared_ptr<const Model> Model::finish(std::unique_ptr<ArtifactFile> file,
                                           RuntimeError &error,
                                           bool loadCpuCode) {
  std::shared_ptr<Model> model(new Model());
  const std::string &name = file->name();
  std::string message;
  bool versionError = false;
  if (!parseManifest(file->manifest(), model->info, message, &versionError)) {
    error.fail(versionError ? DYNCC_ERROR_VERSION : DYNCC_ERROR_FORMAT,
               name + ": " + message);
    return nullptr;
  }
  if (!checkManifestSections(model->info, *file, message)) {
    error.fail(DYNCC_ERROR_FORMAT, name + ": " + message);
    return nullptr;
  }
  const Manifest &manifest = model->info;
  if (const ArtifactSection *section =
          file->findSection(kCalibrationSectionName))
    if (!parseCalibration(section->bytes(), manifest, model->measured,
                          message)) {
      error.fail(DYNCC_ERROR_FORMAT, name + ": " + message);
      return nullptr;
    }
  model->weights.assign(manifest.buffers.size(), nullptr);
  for (size_t b = 0; b < manifest.buffers.size(); ++b)
    if (manifest.buffers[b].kind == BufferKind::Weight)
      model->weights[b] = file->findSection(manifest.buffers[b].section)->data;

  model->kernels.assign(manifest.kernels.size(), nullptr);
  model->codeLoaded = loadCpuCode;
  // With builds of the host code for several levels, the highest this
  // processor runs (under DYNCC_HOST_ISA) stands in for every kernel's
  // section: each build holds every kernel's entry point.
  // A cap that is no level is refused whatever the artifact holds.
  std::string build;
  int cap = 0;
  if (loadCpuCode && !readHostIsaCap(cap, message)) {
    error.fail(DYNCC_ERROR_INVALID_ARGUMENT, message);
    return nullptr;
  }
  if (loadCpuCode && !manifest.hostCode.empty()) {
    int best = -1;
    for (const HostCodeInfo &code : manifest.hostCode) {
      int rank = getHostIsaRank(code.isa);
      if (rank > best && rank <= cap && hostRunsIsa(code.isa)) {
        best = rank;
        model->isa = code.isa;
        build = code.section;
      }
    }
    if (build.empty()) {
      std::string levels, runs = "none of them";
      for (const HostCodeInfo &code : manifest.hostCode)
        levels += (levels.empty() ? "" : ", ") + code.isa;
      for (const std::string &level : getHostIsaLevels())
        if (hostRunsIsa(level))
          runs = "up to " + level;
      const char *capped = std::getenv("DYNCC_HOST_ISA");
      model->missingHostCode =
          "no build of the host code runs on this processor: the artifact's "
          "are for " +
          levels + ", this processor runs " + runs +
          (capped && *capped
               ? std::string(" and DYNCC_HOST_ISA allows up to ") + capped
               : std::string());
    }
  }
  if (loadCpuCode && model->missingHostCode.empty()) {
    std::vector<std::string> moduleSections;
    for (size_t k = 0; k < manifest.kernels.size(); ++k) {
      const KernelInfo &kernel = manifest.kernels[k];
      if (!kernel.hasCpu)
        continue;
      const std::string &sectionName =
          build.empty() ? kernel.cpuSection : build;
      size_t index = 0;
      while (index < moduleSections.size() &&
             moduleSections[index] != sectionName)
        ++index;
      if (index == moduleSections.size()) {
        const ArtifactSection *section = file->findSection(sectionName);
        std::unique_ptr<CpuModule> module =
            CpuModule::load(section->data, static_cast<size_t>(section->size),
                            name + ": section " + quoted(sectionName), message);
        if (!module) {
          error.fail(DYNCC_ERROR_FORMAT, message);
          return nullptr;
        }
        moduleSections.push_back(sectionName);
        model->modules.push_back(std::move(module));
      }
      void *symbol = model->modules[index]->lookup(kernel.cpuSymbol.c_str());
      if (!symbol) {
        error.fail(DYNCC_ERROR_FORMAT,
                   name + ": kernel " + quoted(kernel.name) + ": symbol " +
                       quoted(kernel.cpuSymbol) + " not found in section " +
                       quoted(sectionName));
        return nullptr;
      }
      model->kernels[k] = reinterpret_cast<CpuKernelFn>(symbol);
    }
  }
  model->hostTiles = getHostModelledTiles(manifest);
  // Groups that select alike: the same inputs to selectVariant, bit for
  // bit, make the same signature (for the host model, also the problem
  // and the tiles).
  std::unordered_map<std::string, size_t> firstOf;
  model->classes.resize(manifest.groups.size());
  for (size_t g = 0; g < manifest.groups.size(); ++g) {
    const GroupInfo &group = manifest.groups[g];
    std::string signature;
    auto add = [&](int64_t value) {
      signature.append(reinterpret_cast<const char *>(&value), sizeof value);
    };
    auto addAll = [&](const auto &values) {
      add(static_cast<int64_t>(values.size()));
      for (auto value : values)
        add(static_cast<int64_t>(value));
    };
    add(static_cast<int64_t>(group.variants.size()));
    for (const VariantInfo &variant : group.variants) {
      add(static_cast<int64_t>(variant.when.size()));
      for (const VariantCondition &cond : variant.when) {
        add(static_cast<int64_t>(cond.symbol));
        add(cond.min);
        add(cond.max);
      }
    }
    const VariantSelection &select = group.select;
    add(select.present);
    if (select.present) {
      for (const ShapeExpr &key : select.keys)
        signature += key.text() + '\0';
      add(static_cast<int64_t>(select.table.nodes.size()));
      for (const cost::IntervalTable &node : select.table.nodes) {
        addAll(node.lower);
        addAll(node.variant);
      }
    }
    if (!model->hostTiles[g].empty()) {
      const GemmProblemInfo &problem = group.problem;
      for (const ShapeExpr *dim :
           {&problem.batch, &problem.m, &problem.n, &problem.k})
        signature += dim->text() + '\0';
      add(problem.products);
      add(problem.outputBytes);
      for (const VariantInfo &variant : group.variants)
        signature += manifest.kernels[variant.kernel].config + '\0';
    }
    model->classes[g] = firstOf.emplace(std::move(signature), g).first->second;
  }
  for (const GroupInfo &group : manifest.groups) {
    model->variantBegin.push_back(
        static_cast<uint32_t>(model->variantKernels.size()));
    for (const VariantInfo &variant : group.variants)
      model->variantKernels.push_back(static_cast<uint32_t>(variant.kernel));
  }
  for (const StepInfo &step : manifest.steps)
    model->steps.push_back({step.op, static_cast<uint32_t>(step.group)});
  // The compiler's arena placements, shared by the sessions' planners
  // (whose blocks are the temps in buffer order). An artifact from before
  // the compiler planned them gets the same plan here, at load (BERT-base's
  // 298 temps at 64 shapes: about 1.3 ms).
  std::vector<ArenaPlanInfo> plannedAtLoad;
  if (!manifest.hasArena)
    plannedAtLoad = planArenaAhead(manifest);
  const std::vector<ArenaPlanInfo> &arena =
      manifest.hasArena ? manifest.arena : plannedAtLoad;
  if (!arena.empty()) {
    SharedPlacements::Lifetimes lifetimes;
    std::vector<uint32_t> tempOf(manifest.buffers.size(), 0);
    for (size_t b = 0; b < manifest.buffers.size(); ++b)
      if (manifest.buffers[b].kind == BufferKind::Temp) {
        tempOf[b] = static_cast<uint32_t>(lifetimes.size());
        lifetimes.emplace_back(manifest.buffers[b].firstStep,
                               manifest.buffers[b].lastStep);
      }
    std::vector<RememberedPlacement> planned(arena.size());
    for (size_t p = 0; p < planned.size(); ++p) {
      planned[p].empty.assign(lifetimes.size(), 0);
      for (size_t b : arena[p].empty)
        planned[p].empty[tempOf[b]] = 1;
      for (size_t b : arena[p].order)
        planned[p].order.push_back(tempOf[b]);
    }
    model->placements->seed(lifetimes, std::move(planned));
  }
  model->artifact = std::move(file);
  return model;
}

std::shared_ptr<const CudaModel> Model::cudaModel(int ordinal,
                                                  RuntimeError &error) const {
  std::lock_guard<std::mutex> lock(cudaMutex);
  std::weak_ptr<const CudaModel> &slot = cudaModels[ordinal];
  if (std::shared_ptr<const CudaModel> existing = slot.lock())
    return existing;
  std::shared_ptr<const CudaModel> fresh =
      CudaModel::load(*this, ordinal, error);
  if (fresh)
    slot = fresh;
  return fresh;
}

void Model::planMeasuredAhead(const DeviceCalibration &device) const {
  // Held while planning: a session created meanwhile waits for the
  // placements rather than making its own at its first runs.
  std::lock_guard<std::mutex> lock(plannedMutex);
  if (std::find(plannedMeasured.begin(), plannedMeasured.end(), &device) !=
      plannedMeasured.end())
    return;
  plannedMeasured.push_back(&device);
  planArenaAheadInto(
      info,
      [&](size_t group, const int64_t *symbols, size_t &variant) {
        return pickVariant(info, device.group(group), group, symbols, variant);
      },
      placements);
}

//===----------------------------------------------------------------------===//
// AlignedBuffer
//===----------------------------------------------------------------------===//

AlignedBuffer::~AlignedBuffer() { std::free(storage); }

AlignedBuffer::AlignedBuffer(AlignedBuffer &&other) noexcept
    : storage(other.storage), allocated(other.allocated) {
  other.storage = nullptr;
  other.allocated = 0;
}

AlignedBuffer &AlignedBuffer::operator=(AlignedBuffer &&other) noexcept {
  if (this != &other) {
    std::free(storage);
    storage = other.storage;
    allocated = other.allocated;
    other.storage = nullptr;
    other.allocated = 0;
  }
  return *this;
}

bool AlignedBuffer::reserve(size_t bytes) {
  if (bytes == 0)
    bytes = 1; // Always hand out a real pointer.
  if (storage && bytes <= allocated)
    return true;
  if (bytes > std::numeric_limits<size_t>::max() - 63)
    return false;
  size_t rounded = (bytes + 63) / 64 * 64;
  void *fresh = std::aligned_alloc(64, rounded);
  if (!fresh)
    return false;
  std::free(storage);
  storage = fresh;
  allocated = rounded;
  return true;
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

size_t Session::VectorHash::operator()(const std::vector<int64_t> &key) const {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (int64_t value : key) {
    hash ^= static_cast<uint64_t>(value);
    hash *= 0x100000001b3ull;
    hash ^= hash >> 29;
  }
  return static_cast<size_t>(hash);
}

Session::Session(std::shared_ptr<const Model> model, unsigned threads)
    : loaded(std::move(model)), pool(threads) {
  const Manifest &manifest = loaded->manifest();
  inputs.resize(manifest.inputs.size());
  symbols.assign(manifest.symbols.size(), 0);
  symbolBound.assign(manifest.symbols.size(), 0);
  for (const BufferInfo &buffer : manifest.buffers) {
    shapeBegin.push_back(shapeValues.size());
    shapeValues.resize(shapeValues.size() + buffer.shape.size(), 0);
  }
  shapeBegin.push_back(shapeValues.size());
  bufferBytes.assign(manifest.buffers.size(), 0);
  bufferData.assign(manifest.buffers.size(), nullptr);
  for (size_t b = 0; b < manifest.buffers.size(); ++b) {
    const BufferInfo &buffer = manifest.buffers[b];
    sizedBuffers.push_back({static_cast<uint32_t>(bufferDims.size()),
                            static_cast<uint32_t>(buffer.shape.size()),
                            static_cast<uint32_t>(buffer.port),
                            static_cast<uint32_t>(dtypeSize(buffer.dtype)),
                            buffer.kind});
    bool constant = true;
    for (const ShapeExpr &dim : buffer.shape) {
      bufferDims.push_back(operandOf(dim));
      constant &= dim.isConstant();
    }
    if (buffer.readyAfter != kAtBinding)
      laterBuffers.push_back(b);
    else if (constant && buffer.kind != BufferKind::Input)
      staticBuffers.push_back(b);
    else {
      boundBuffers.push_back(b);
      if (buffer.kind != BufferKind::Temp)
        boundPorts.push_back(b);
    }
    if (buffer.kind == BufferKind::Temp) {
      tempBuffers.push_back(b);
      arenaBlocks.push_back({0, buffer.firstStep, buffer.lastStep});
      // A workspace takes bytes when its group selects a variant whose
      // kernels use it.
      workspaces.push_back(
          {buffer.workspaceGroup, buffer.workspaceLeads,
           buffer.workspaceGroup != SIZE_MAX &&
               isSelectable(manifest, buffer.workspaceGroup, kAtBinding)});
    }
  }
  outputs.resize(manifest.outputs.size());
  planner.share(loaded->sharedPlacements());
  planner.prepare(arenaBlocks);
  for (size_t slot = 0; slot < manifest.symbols.size(); ++slot)
    if (manifest.symbols[slot].bindingStep == kAtBinding)
      inputSymbols.push_back(slot);
  memoizedGroup.assign(manifest.groups.size(), 1);
  classPick.assign(manifest.groups.size(), 0);
  classRun.assign(manifest.groups.size(), 0);
  for (const StepInfo &step : manifest.steps) {
    bindsFromData |= step.op == StepInfo::Op::Bind;
    if (bindsFromData && step.op == StepInfo::Op::Launch)
      memoizedGroup[step.group] = 0;
  }
  lastKernel.assign(manifest.groups.size(), SIZE_MAX);
  forced.assign(manifest.groups.size(), -1);
  stepMilliseconds.assign(manifest.steps.size(), 0);
  stepBlocks.assign(manifest.steps.size(), 0);
  slots.resize(manifest.kernels.size());
  slotPointers.resize(manifest.kernels.size());
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    slots[k].assign(manifest.kernels[k].numSlots, 0);
    slotPointers[k].resize(manifest.kernels[k].numSlots);
    for (size_t i = 0; i < slots[k].size(); ++i)
      slotPointers[k][i] = &slots[k][i];
  }
}

std::unique_ptr<Session> Session::create(std::shared_ptr<const Model> model,
                                         const char *device,
                                         RuntimeError &error) {
  std::string name = device ? device : "cpu";
  const Manifest &manifest = model->manifest();
  if (name.rfind("cuda", 0) == 0) {
    // "cuda" or "cuda:N".
    int ordinal = 0;
    bool wellFormed = name.size() == 4;
    if (name.size() > 5 && name.size() < 10 && name[4] == ':') {
      wellFormed = true;
      for (size_t i = 5; i < name.size(); ++i) {
        wellFormed &= name[i] >= '0' && name[i] <= '9';
        ordinal = ordinal * 10 + (name[i] - '0');
      }
    }
    if (wellFormed) {
      std::shared_ptr<const CudaModel> gpuModel =
          model->cudaModel(ordinal, error);
      if (!gpuModel)
        return nullptr;
      std::unique_ptr<Session> session(new Session(std::move(model), 1));
      // What is created below is released by ~Session on failure.
      session->gpu = std::make_unique<CudaState>();
      CudaState &state = *session->gpu;
      state.model = std::move(gpuModel);
      state.calls = &state.model->driver();
      const cuda::Driver &driver = state.driver();
      auto check = [&](cuda::CUresult status, const char *what) {
        return status == cuda::CUDA_SUCCESS ||
               session->deviceFailure(what, status, error);
      };
      if (!state.model->makeCurrent(error) ||
          !check(driver.streamCreate(&state.ownStream,
                                     cuda::CU_STREAM_NON_BLOCKING),
                 "cuStreamCreate") ||
          !check(driver.eventCreate(&state.start, cuda::CU_EVENT_DEFAULT),
                 "cuEventCreate") ||
          !check(driver.eventCreate(&state.end, cuda::CU_EVENT_DEFAULT),
                 "cuEventCreate") ||
          !check(
              driver.eventCreate(&state.inputsCopied, cuda::CU_EVENT_DEFAULT),
              "cuEventCreate"))
        return nullptr;
      state.stream = state.ownStream;
      // Graphs replay a run's launches as one, where every run of the plan
      // launches the same kernels in the same order: not where a step
      // binds sizes read from data (the launches after it depend on them).
      const char *graphs = std::getenv("DYNCC_CUDA_GRAPHS");
      session->graphsOffReason =
          !driver.hasGraphs() ? "the CUDA driver has no graph entry points"
          : graphs && std::string(graphs) == "0" ? "DYNCC_CUDA_GRAPHS=0"
          : session->bindsFromData
              ? "the plan binds sizes from data in the middle of a run"
              : "";
      state.outputs.resize(manifest.outputs.size());
      state.staging.resize(manifest.inputs.size());
      session->pinnedOffReason =
          driver.hasPinnedMemory()
              ? ""
              : "the CUDA driver has no page-locked memory entry points";
      if (driver.hasPinnedMemory())
        state.pinned.resize(manifest.inputs.size());
      state.hostStale.assign(manifest.outputs.size(), 0);
      if (!session->prepare(error))
        return nullptr;
      // Room for the longest run's recording (graphs): its steps' largest
      // variants, so that recording reallocates nothing.
      size_t longestOps = 0, longestParams = 0;
      for (const StepInfo &step : manifest.steps) {
        size_t ops = 1, params = 0;
        if (step.op == StepInfo::Op::Launch)
          for (const VariantInfo &variant :
               manifest.groups[step.group].variants) {
            std::vector<size_t> kernels = variant.kernels();
            size_t slots = 0;
            for (size_t k : kernels)
              slots += manifest.kernels[k].numSlots;
            ops = std::max(ops, kernels.size());
            params = std::max(params, slots);
          }
        longestOps += ops;
        longestParams += params;
      }
      state.ops.reserve(longestOps);
      state.params.reserve(longestParams);
      return session;
    }
  }
  if (name != "cpu") {
    error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
               "unknown device " + quoted(name) +
                   " (expected 'cpu', 'cuda' or 'cuda:N')");
    return nullptr;
  }
  for (const GroupInfo &group : manifest.groups) {
    for (const VariantInfo &variant : group.variants) {
      for (size_t k : variant.kernels()) {
        const KernelInfo &kernel = manifest.kernels[k];
        if (!kernel.hasCpu) {
          error.fail(DYNCC_ERROR_UNSUPPORTED,
                     "kernel " + quoted(kernel.name) + " of group " +
                         quoted(group.name) + " has no CPU code");
          return nullptr;
        }
        if (!model->cpuCodeLoaded()) {
          error.fail(DYNCC_ERROR_UNSUPPORTED,
                     "the artifact was loaded without its CPU code");
          return nullptr;
        }
        if (!model->hostCodeMissing().empty()) {
          error.fail(DYNCC_ERROR_UNSUPPORTED, model->hostCodeMissing());
          return nullptr;
        }
      }
    }
  }
  std::unique_ptr<Session> session(
      new Session(std::move(model), ThreadPool::defaultSize()));
  // The host's measurements, if `dyncc tune --device cpu` took some (the
  // processor's name is read only then).
  const Calibration &calibration = session->loaded->calibration();
  if (std::any_of(calibration.devices.begin(), calibration.devices.end(),
                  [](const DeviceCalibration &d) { return d.onHost(); })) {
    std::string host, arch;
    int64_t threads;
    session->tuningDevice(host, arch, threads);
    session->hostMeasured = calibration.find(host, arch, threads);
    if (session->hostMeasured)
      session->loaded->planMeasuredAhead(*session->hostMeasured);
  }
  std::string why;
  if (!readHostSelection(session->hostModel, why)) {
    error.fail(DYNCC_ERROR_INVALID_ARGUMENT, why);
    return nullptr;
  }
  session->host = cost::getFittedHostDevice(session->loaded->hostIsa());
  session->host.threads = static_cast<int64_t>(session->pool.size());
  // The model's L1 is this processor's where it says (a share of the
  // k-step's working set beyond it is read from L2).
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE); l1 > 0)
    session->host.l1Bytes = l1;
#endif
  if (!session->prepare(error))
    return nullptr;
  return session;
}

Session::~Session() {
  if (!gpu)
    return;
  const cuda::Driver &driver = gpu->driver();
  RuntimeError ignored;
  if (!gpu->model->makeCurrent(ignored))
    return;
  // Nothing may still use the memory freed below.
  if (gpu->stream)
    driver.streamSynchronize(gpu->stream);
  gpu->arena = DeviceBuffer();
  gpu->outputs.clear();
  gpu->staging.clear();
  gpu->pinned.clear();
  if (gpu->inputsCopied)
    driver.eventDestroy(gpu->inputsCopied);
  if (gpu->start)
    driver.eventDestroy(gpu->start);
  if (gpu->end)
    driver.eventDestroy(gpu->end);
  for (cuda::CUevent event : gpu->stepEvents)
    driver.eventDestroy(event);
  for (CudaState::Graph &graph : gpu->graphs)
    if (graph.exec)
      driver.graphExecDestroy(graph.exec);
  if (gpu->ownStream)
    driver.streamDestroy(gpu->ownStream);
}

std::string Session::deviceDescription() const {
  if (gpu)
    return gpu->model->describe();
  return "cpu (" + std::to_string(pool.size()) + " threads)";
}

namespace {
/// The host processor's name: /proc/cpuinfo's first "model name" (x86
/// Linux), else "cpu".
const std::string &hostProcessorName() {
  static const std::string name = [] {
    std::string found;
    if (FILE *file = std::fopen("/proc/cpuinfo", "r")) {
      char line[512];
      while (found.empty() && std::fgets(line, sizeof line, file)) {
        const char *colon = std::strchr(line, ':');
        if (std::strncmp(line, "model name", 10) != 0 || !colon)
          continue;
        found = colon + 1;
        size_t begin = found.find_first_not_of(" \t");
        size_t end = found.find_last_not_of(" \t\r\n");
        found = begin == std::string::npos
                    ? std::string()
                    : found.substr(begin, end - begin + 1);
      }
      std::fclose(file);
    }
    return found.empty() ? std::string("cpu") : found;
  }();
  return name;
}

/// "cpu-" and the host's architecture (uname's machine).
const std::string &hostArch() {
  static const std::string arch = [] {
    struct utsname host;
    return DeviceCalibration::kHostArchPrefix +
           std::string(uname(&host) == 0 ? host.machine : "unknown");
  }();
  return arch;
}
} // namespace

void Session::tuningDevice(std::string &device, std::string &arch,
                           int64_t &units) const {
  if (gpu) {
    device = gpu->model->deviceName();
    arch = gpu->model->code().arch;
    units = gpu->model->smCount();
    return;
  }
  device = hostProcessorName();
  // Measurements of one build of the host code say little of another's.
  const std::string &isa = loaded->hostIsa();
  arch = isa.empty() || getHostIsaRank(isa) <= getHostIsaRank("x86-64-v2")
             ? hostArch()
             : DeviceCalibration::kHostArchPrefix + isa;
  units = static_cast<int64_t>(pool.size());
}

bool Session::deviceFailure(const std::string &what, cuda::CUresult status,
                            RuntimeError &error) const {
  return error.fail(DYNCC_ERROR_DEVICE,
                    "cuda:" + std::to_string(gpu->model->ordinal()) + ": " +
                        gpu->driver().failure(what, status));
}

std::string Session::inputDimName(size_t input, size_t dim) const {
  return "input " + quoted(loaded->manifest().inputs[input].name) +
         " dimension " + std::to_string(dim);
}

const char *Session::groupVariant(size_t group) const {
  size_t kernel = lastKernel[group];
  if (kernel == SIZE_MAX)
    return nullptr;
  return loaded->manifest().kernels[kernel].name.c_str();
}

namespace {
std::string formatMilliseconds(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", value);
  return buffer;
}

/// "predicted T ms, vI T ms, ...": the chosen variant's predicted time, then
/// each other's that has one (at least 0).
std::string formatPredictions(const std::vector<double> &predicted,
                              size_t chosen) {
  std::string text =
      "predicted " + formatMilliseconds(predicted[chosen]) + " ms";
  for (size_t v = 0; v < predicted.size(); ++v)
    if (v != chosen && predicted[v] >= 0)
      text += ", v" + str(static_cast<int64_t>(v)) + " " +
              formatMilliseconds(predicted[v]) + " ms";
  return text;
}
} // namespace

const char *Session::groupReason(size_t groupIndex) const {
  size_t kernel = lastKernel[groupIndex];
  if (kernel == SIZE_MAX)
    return nullptr;
  const Manifest &manifest = loaded->manifest();
  const GroupInfo &group = manifest.groups[groupIndex];
  size_t chosen = 0;
  while (chosen < group.variants.size() &&
         group.variants[chosen].kernel != kernel)
    ++chosen;
  const VariantSelection &select = group.select;
  // The interval of bounds `lower` holding `value` of key `k`, the last up
  // to the key's searched range.
  auto interval = [&](const std::vector<int64_t> &lower, size_t k,
                      int64_t value) {
    size_t i = dyncc::cost::findInterval(lower, value);
    if (i + 1 < lower.size())
      return str(lower[i]) + "-" + str(lower[i + 1] - 1);
    if (select.keyRanges.size() > 2 * k + 1 &&
        select.keyRanges[2 * k + 1] >= lower[i])
      return str(lower[i]) + "-" + str(select.keyRanges[2 * k + 1]);
    return str(lower[i]) + " and up";
  };
  size_t picked;
  std::vector<double> predicted;
  const GroupCalibration *measured = calibrationOf(groupIndex);
  if (forced[groupIndex] == static_cast<int64_t>(chosen)) {
    reason = "force (dyncc_session_force_variant)";
  } else if (measured && calibratedChoice(*measured, picked, &predicted) &&
             picked == chosen) {
    const DeviceCalibration &device = *measuredDevice();
    reason = "dyncc tune's measurements on " + device.device + ": " +
             formatPredictions(predicted, chosen);
  } else if (hostModelSelects(groupIndex) &&
             pickHostVariant(manifest, groupIndex,
                             loaded->hostModelledTiles(groupIndex), host,
                             symbols.data(), picked, &predicted) &&
             picked == chosen) {
    reason = "the host model (" + str(host.threads) + " thread" +
             (host.threads == 1 ? "" : "s") +
             "): " + formatPredictions(predicted, chosen);
  } else if (select.present && select.lookup(symbols.data(), picked) &&
             picked == chosen) {
    int64_t values[dyncc::cost::DecisionTable::kMaxKeys];
    select.evaluateKeys(symbols.data(), values);
    reason = "the tile search's table";
    if (select.keys.empty())
      reason += " (a static problem)";
    for (size_t k = 0; k < select.keys.size(); ++k)
      reason += (k ? ", " : ": ") + select.keyTexts[k] + " = " +
                str(values[k]) + " in " +
                interval(select.table.getNode(values, k).lower, k, values[k]);
  } else if (group.variants.size() == 1) {
    reason = "the group's one variant";
  } else {
    reason = "the first variant whose conditions hold";
    const VariantInfo &variant = group.variants[chosen];
    for (size_t c = 0; c < variant.when.size(); ++c) {
      const VariantCondition &cond = variant.when[c];
      reason += (c ? ", " : ": ") + manifest.symbols[cond.symbol].name +
                " = " + str(symbols[cond.symbol]) + " in " + str(cond.min) +
                "-" + str(cond.max);
    }
  }
  reason = "v" + str(static_cast<int64_t>(chosen)) + ", by " + reason;
  return reason.c_str();
}

bool Session::checkInput(size_t index, const int64_t *shape, size_t rank,
                         RuntimeError &error) const {
  const Manifest &manifest = loaded->manifest();
  const TensorInfo &port = manifest.inputs[index];
  if (rank != port.shape.size())
    return error.fail(DYNCC_ERROR_SHAPE, "input " + quoted(port.name) +
                                             ": expected rank " +
                                             std::to_string(port.shape.size()) +
                                             ", got " + std::to_string(rank));
  uint64_t bytes = dtypeSize(port.dtype);
  bool overflow = false;
  for (size_t d = 0; d < rank; ++d) {
    int64_t value = shape[d];
    const ShapeExpr &expr = port.shape[d];
    if (value < 0)
      return error.fail(DYNCC_ERROR_SHAPE, inputDimName(index, d) +
                                               ": negative size " + str(value));
    if (expr.isConstant() && expr.constantValue() != value)
      return error.fail(DYNCC_ERROR_SHAPE,
                        inputDimName(index, d) + ": expected " +
                            str(expr.constantValue()) + ", got " + str(value));
    if (expr.isSymbol()) {
      const SymbolInfo &symbol = manifest.symbols[expr.symbolSlot()];
      if (value < symbol.min || value > symbol.max)
        return error.fail(DYNCC_ERROR_SHAPE,
                          inputDimName(index, d) + ": symbol " + symbol.name +
                              " = " + str(value) + " is outside its range [" +
                              str(symbol.min) + ", " + str(symbol.max) + "]");
      if (value % symbol.divisor != 0)
        return error.fail(DYNCC_ERROR_SHAPE,
                          inputDimName(index, d) + ": symbol " + symbol.name +
                              " = " + str(value) + " is not a multiple of " +
                              str(symbol.divisor));
    }
    overflow |=
        __builtin_mul_overflow(bytes, static_cast<uint64_t>(value), &bytes);
  }
  if (overflow ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return error.fail(DYNCC_ERROR_SHAPE,
                      "input " + quoted(port.name) + ": size overflows");
  return true;
}

bool Session::setInput(size_t index, const void *data, const int64_t *shape,
                       size_t rank, RuntimeError &error, bool onDevice) {
  const Manifest &manifest = loaded->manifest();
  if (index >= manifest.inputs.size())
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "input index " + std::to_string(index) +
                          " is out of range (" +
                          std::to_string(manifest.inputs.size()) + " inputs)");
  InputBinding &binding = inputs[index];
  binding.set = false;
  if (onDevice && !gpu)
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "input " + quoted(manifest.inputs[index].name) +
                          ": device memory needs a CUDA session (this one "
                          "is on the cpu)");
  if (rank != 0 && !shape)
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "input " + quoted(manifest.inputs[index].name) +
                          ": shape is null");
  if (!checkInput(index, shape, rank, error))
    return false;
  bool empty = false;
  for (size_t d = 0; d < rank; ++d)
    empty |= shape[d] == 0;
  if (!data && !empty)
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "input " + quoted(manifest.inputs[index].name) +
                          ": data is null");
  binding.data = data;
  binding.shape.assign(shape, shape + rank);
  binding.onDevice = onDevice;
  binding.set = true;
  return true;
}

bool Session::bindSymbols(RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  std::fill(symbolBound.begin(), symbolBound.end(), 0);
  for (size_t i = 0; i < manifest.inputs.size(); ++i)
    if (!inputs[i].set)
      return error.fail(DYNCC_ERROR_SHAPE, "input " +
                                               quoted(manifest.inputs[i].name) +
                                               " was not set");

  // Bare symbols bind (first occurrence) or must agree; constants must match.
  for (size_t i = 0; i < manifest.inputs.size(); ++i) {
    const TensorInfo &port = manifest.inputs[i];
    for (size_t d = 0; d < port.shape.size(); ++d) {
      const ShapeExpr &expr = port.shape[d];
      int64_t value = inputs[i].shape[d];
      if (expr.isSymbol()) {
        size_t slot = expr.symbolSlot();
        const SymbolInfo &symbol = manifest.symbols[slot];
        if (!symbolBound[slot]) {
          if (value < symbol.min || value > symbol.max ||
              value % symbol.divisor != 0)
            return checkInput(i, inputs[i].shape.data(), inputs[i].shape.size(),
                              error);
          symbols[slot] = value;
          symbolBound[slot] = 1;
        } else if (symbols[slot] != value) {
          return error.fail(
              DYNCC_ERROR_SHAPE,
              inputDimName(i, d) + ": expected " + symbol.name +
                  " (= " + str(symbols[slot]) + " from " +
                  inputDimName(symbol.bindingInput, symbol.bindingDim) +
                  "), got " + str(value));
        }
      } else if (expr.isConstant() && expr.constantValue() != value) {
        return error.fail(DYNCC_ERROR_SHAPE, inputDimName(i, d) +
                                                 ": expected " +
                                                 str(expr.constantValue()) +
                                                 ", got " + str(value));
      }
    }
  }
  // The manifest guarantees every symbol is bound by some input dimension
  // or, for data-dependent ones, by a bind step.

  // Composite dimensions are checked once everything is bound.
  for (size_t i = 0; i < manifest.inputs.size(); ++i) {
    const TensorInfo &port = manifest.inputs[i];
    for (size_t d = 0; d < port.shape.size(); ++d) {
      const ShapeExpr &expr = port.shape[d];
      if (expr.isSymbol() || expr.isConstant())
        continue;
      int64_t expected;
      ShapeExpr::EvalStatus status = expr.evaluate(symbols.data(), expected);
      if (status != ShapeExpr::EvalStatus::Ok)
        return error.fail(DYNCC_ERROR_SHAPE, inputDimName(i, d) +
                                                 ": cannot evaluate " +
                                                 quoted(expr.text()) + ": " +
                                                 ShapeExpr::describe(status));
      if (expected != inputs[i].shape[d])
        return error.fail(DYNCC_ERROR_SHAPE,
                          inputDimName(i, d) + ": expected " + expr.text() +
                              " (= " + str(expected) + "), got " +
                              str(inputs[i].shape[d]));
    }
  }

  return checkConstraints(kAtBinding, error);
}

bool Session::checkConstraints(size_t readyAfter, RuntimeError &error) {
  for (const ConstraintInfo &constraint : loaded->manifest().constraints) {
    if (constraint.readyAfter != readyAfter)
      continue;
    int64_t lhs = 0, rhs = 0;
    ShapeExpr::EvalStatus status = constraint.lhs.evaluate(symbols.data(), lhs);
    if (status == ShapeExpr::EvalStatus::Ok)
      status = constraint.rhs.evaluate(symbols.data(), rhs);
    if (status == ShapeExpr::EvalStatus::Ok && lhs == rhs)
      continue;
    // Named only where it fails: a run builds no string.
    std::string label =
        "constraint " + constraint.lhs.text() + " == " + constraint.rhs.text();
    std::string where =
        constraint.where.empty() ? "" : " (from " + constraint.where + ")";
    if (status != ShapeExpr::EvalStatus::Ok)
      return error.fail(
          DYNCC_ERROR_SHAPE,
          label + ": cannot evaluate: " + ShapeExpr::describe(status) + where);
    return error.fail(DYNCC_ERROR_SHAPE, label + " does not hold: " + str(lhs) +
                                             " != " + str(rhs) + where);
  }
  return true;
}

Session::Operand Session::operandOf(const ShapeExpr &expr) {
  Operand operand;
  if (expr.isConstant()) {
    operand.value = expr.constantValue();
  } else if (expr.isSymbol()) {
    operand.value = static_cast<int64_t>(expr.symbolSlot());
    operand.symbol = true;
  } else {
    operand.expr = &expr;
    auto [entry, added] = expressionIndex.try_emplace(
        expr.text(), static_cast<uint32_t>(evaluated.size()));
    if (added)
      evaluated.push_back({0, 0, &expr});
    operand.expression = entry->second;
  }
  return operand;
}

void Session::noteSymbols() {
  if (bindsFromData || symbols != epochSymbols) {
    ++shapeEpoch;
    epochSymbols = symbols;
  }
}

/// Writes a memref descriptor's sizes and row-major strides (unsigned, so
/// that an empty buffer's strides cannot overflow).
static void writeShape(const int64_t *shape, size_t rank, int64_t *slots) {
  uint64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    slots[d] = shape[d];
    slots[rank + d] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(shape[d]);
  }
}

bool Session::prepare(RuntimeError &error) {
  for (size_t b : staticBuffers)
    if (!computeBuffer(b, error))
      return false;
  const Manifest &manifest = loaded->manifest();
  std::vector<uint8_t> isStatic(manifest.buffers.size(), 0);
  for (size_t b : staticBuffers)
    isStatic[b] = 1;
  launchPlans.resize(manifest.kernels.size());
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    const KernelInfo &kernel = manifest.kernels[k];
    LaunchPlan &plan = launchPlans[k];
    plan.fillBegin = static_cast<uint32_t>(fills.size());
    for (int i = 0; i < 3; ++i) {
      plan.grid[i] = operandOf(kernel.grid[i]);
      plan.block[i] = static_cast<unsigned>(kernel.block[i]);
    }
    plan.sharedBytes = static_cast<unsigned>(kernel.sharedBytes);
    if (gpu)
      plan.function = gpu->model->function(k);
    int64_t *slot = slots[k].data();
    uint32_t next = 0;
    // Values and shapes first, then addresses (kept apart below).
    std::vector<SlotFill> addresses;
    for (size_t p = 0; p < kernel.params.size(); ++p) {
      const KernelParam &param = kernel.params[p];
      SlotFill fill;
      fill.param = static_cast<uint32_t>(p);
      fill.slot = next;
      if (!param.isBuffer) {
        Operand operand = operandOf(param.expr);
        if (operand.expr) {
          fill.kind = SlotFill::Kind::Expression;
          fill.index = operand.expression;
          fills.push_back(fill);
        } else if (operand.symbol) {
          fill.kind = SlotFill::Kind::Symbol;
          fill.index = static_cast<uint32_t>(operand.value);
          fills.push_back(fill);
        } else {
          slot[next] = operand.value;
        }
        ++next;
        continue;
      }
      const BufferInfo &buffer = manifest.buffers[param.buffer];
      fill.index = static_cast<uint32_t>(param.buffer);
      // The allocated and aligned pointers, then the offset (0).
      if (buffer.kind == BufferKind::Weight) {
        void *data = bufferData[param.buffer];
        std::memcpy(&slot[next], &data, sizeof(void *));
        std::memcpy(&slot[next + 1], &data, sizeof(void *));
      } else {
        fill.kind = SlotFill::Kind::Address;
        addresses.push_back(fill);
      }
      slot[next + 2] = 0;
      next += 3;
      size_t rank = bufferRank(param.buffer);
      if (isStatic[param.buffer]) {
        writeShape(bufferShape(param.buffer), rank, &slot[next]);
      } else {
        fill.kind = SlotFill::Kind::Shape;
        fill.slot = next;
        fills.push_back(fill);
      }
      next += static_cast<uint32_t>(2 * rank);
    }
    plan.addressBegin = static_cast<uint32_t>(fills.size());
    fills.insert(fills.end(), addresses.begin(), addresses.end());
    plan.fillEnd = static_cast<uint32_t>(fills.size());
    plan.thenBegin = static_cast<uint32_t>(thenKernels.size());
    for (size_t next : kernel.then)
      thenKernels.push_back(static_cast<uint32_t>(next));
    plan.thenEnd = static_cast<uint32_t>(thenKernels.size());
  }
  launchEpochs.assign(manifest.kernels.size(), 0);
  launchGrids.assign(manifest.kernels.size(), {0, 0, 0});
  return true;
}

bool Session::computeBuffers(size_t readyAfter, RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  if (readyAfter == kAtBinding) {
    // At the symbols of the last run that sized and placed the temps (a
    // plan that binds symbols from data starts an epoch every run), they
    // keep their sizes and places: only the inputs and outputs, whose data
    // come with each run, are sized and placed again. A warm run at one
    // shape skips BERT-base's 298 temps.
    if (arenaPlanned && sizedEpoch == shapeEpoch) {
      sizedAtBinding = boundPorts.size();
      for (size_t b : boundPorts)
        if (!computeBuffer(b, error))
          return false;
      return true;
    }
    sizedAtBinding = boundBuffers.size();
    for (size_t b : boundBuffers)
      if (!computeBuffer(b, error))
        return false;
    // Sized by symbols a later bind step binds: empty until then.
    for (size_t b : laterBuffers) {
      std::fill(bufferShape(b), bufferShape(b + 1), 0);
      bufferBytes[b] = 0;
    }
    if (!placeTemps(readyAfter, error))
      return false;
    sizedEpoch = shapeEpoch;
    return true;
  }
  bool temps = false;
  for (size_t b = 0; b < manifest.buffers.size(); ++b) {
    const BufferInfo &buffer = manifest.buffers[b];
    if (buffer.readyAfter != readyAfter)
      continue;
    temps |= buffer.kind == BufferKind::Temp;
    if (!computeBuffer(b, error))
      return false;
  }
  return temps ? placeTemps(readyAfter, error) : true;
}

bool Session::computeBuffer(size_t b, RuntimeError &error) {
  const SizedBuffer &sized = sizedBuffers[b];
  // The manifest is read only to name what is wrong.
  auto label = [&] {
    const BufferInfo &buffer = loaded->manifest().buffers[b];
    return std::string(bufferKindName(buffer.kind)) + " buffer " +
           str(buffer.id);
  };
  auto text = [&](size_t d) {
    return loaded->manifest().buffers[b].shape[d].text();
  };
  const int64_t *given = sized.kind == BufferKind::Input
                             ? inputs[sized.port].shape.data()
                             : nullptr;
  int64_t *shape = bufferShape(b);
  uint64_t bytes = sized.elementBytes;
  bool overflow = false;
  for (uint32_t d = 0; d < sized.rank; ++d) {
    int64_t value;
    ShapeExpr::EvalStatus status =
        evaluate(bufferDims[sized.dimBegin + d], value);
    if (status != ShapeExpr::EvalStatus::Ok)
      return error.fail(DYNCC_ERROR_SHAPE,
                        label() + " dimension " + std::to_string(d) +
                            ": cannot evaluate " + quoted(text(d)) + ": " +
                            ShapeExpr::describe(status));
    if (value < 0)
      return error.fail(DYNCC_ERROR_SHAPE,
                        label() + " dimension " + std::to_string(d) + ": " +
                            quoted(text(d)) + " = " + str(value) +
                            " is negative");
    if (given && value != given[d])
      return error.fail(DYNCC_ERROR_SHAPE,
                        inputDimName(sized.port, d) + ": " + label() +
                            " expects " + text(d) + " (= " + str(value) +
                            "), got " + str(given[d]));
    shape[d] = value;
    overflow |=
        __builtin_mul_overflow(bytes, static_cast<uint64_t>(value), &bytes);
  }
  if (overflow ||
      bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return error.fail(DYNCC_ERROR_SHAPE, label() + ": size overflows");
  bufferBytes[b] = static_cast<size_t>(bytes);
  // Temps are placed in the arena once every size is known.
  return sized.kind == BufferKind::Temp || placeBuffer(b, error);
}

bool Session::placeBuffer(size_t b, RuntimeError &error) {
  if (gpu)
    return placeOnDevice(b, error);
  const Manifest &manifest = loaded->manifest();
  const BufferInfo &buffer = manifest.buffers[b];
  switch (buffer.kind) {
  case BufferKind::Input:
    bufferData[b] = const_cast<void *>(inputs[buffer.port].data);
    break;
  case BufferKind::Weight:
    bufferData[b] = const_cast<void *>(loaded->weightData(b));
    break;
  case BufferKind::Output:
    if (!outputs[buffer.port].reserve(bufferBytes[b]))
      return error.fail(DYNCC_ERROR_INTERNAL,
                        "out of memory allocating " + str(bufferBytes[b]) +
                            " bytes for output " +
                            quoted(manifest.outputs[buffer.port].name));
    bufferData[b] = outputs[buffer.port].data();
    break;
  case BufferKind::Temp:
    break; // Placed in the arena once every size is known.
  }
  return true;
}

bool Session::sizeTemps(size_t afterStep, bool &changed, RuntimeError &error) {
  bool midRun = afterStep != kAtBinding;
  std::vector<ArenaBlock> &blocks = arenaBlocks;
  for (size_t t = 0; t < tempBuffers.size(); ++t) {
    ArenaBlock &block = blocks[t]; // One per temp, from the constructor.
    block.fixed = midRun && block.first <= afterStep;
    if (block.fixed)
      block.offset = placement.offsets[t];
    size_t bytes = bufferBytes[tempBuffers[t]];
    const Workspace &workspace = workspaces[t];
    if (workspace.group != SIZE_MAX && bytes != 0 &&
        (midRun ? isSelectable(loaded->manifest(), workspace.group, afterStep)
                : workspace.selectableAtBinding)) {
      size_t lead;
      if (!selectVariant(workspace.group, lead, error))
        return false;
      if (std::find(workspace.leads.begin(), workspace.leads.end(), lead) ==
          workspace.leads.end())
        bytes = 0;
    }
    changed |= block.size != bytes;
    block.size = bytes;
  }
  return true;
}

bool Session::placeTemps(size_t afterStep, RuntimeError &error) {
  // Temps: placed by lifetime at this run's sizes. The placement depends
  // only on the sizes, so a run at the sizes of the last one keeps it.
  // After a bind step, the temps written by then keep their offsets (and
  // contents) and the rest, now sized, are placed around them.
  bool midRun = afterStep != kAtBinding;
  std::vector<ArenaBlock> &blocks = arenaBlocks;
  bool changed = !arenaPlanned || midRun;
  if (!sizeTemps(afterStep, changed, error))
    return false;
  uint64_t inUse = placement.size;
  if (changed) {
    if (!planner.place(blocks, kArenaAlignment, placement))
      return error.fail(DYNCC_ERROR_SHAPE,
                        "the temporaries' sizes overflow the arena");
    arenaPlanned = !midRun;
  }
  size_t bytes = static_cast<size_t>(placement.size);
  char *base;
  if (gpu) {
    const cuda::Driver &driver = gpu->driver();
    if (midRun && bytes > gpu->arena.capacity()) {
      // Grown in the middle of a run: the temps written so far move along.
      DeviceBuffer grown;
      if (cuda::CUresult status = grown.reserve(driver, bytes))
        return deviceFailure("cuMemAlloc of a " + str(bytes) + "-byte arena",
                             status, error);
      if (inUse != 0)
        if (cuda::CUresult status = driver.memcpyDtoDAsync(
                grown.data(), gpu->arena.data(), inUse, gpu->stream))
          return deviceFailure("cuMemcpyDtoDAsync of the arena", status,
                               error);
      if (cuda::CUresult status = driver.streamSynchronize(gpu->stream))
        return deviceFailure("cuStreamSynchronize", status, error);
      gpu->arena = std::move(grown);
    } else if (cuda::CUresult status = gpu->arena.reserve(driver, bytes)) {
      return deviceFailure("cuMemAlloc of a " + str(bytes) + "-byte arena",
                           status, error);
    }
    base = reinterpret_cast<char *>(gpu->arena.data());
  } else {
    if (midRun && bytes > arena.capacity()) {
      AlignedBuffer grown;
      if (!grown.reserve(bytes))
        return error.fail(DYNCC_ERROR_INTERNAL,
                          "out of memory allocating a " + str(bytes) +
                              "-byte arena");
      if (inUse != 0)
        std::memcpy(grown.data(), arena.data(), static_cast<size_t>(inUse));
      arena = std::move(grown);
    } else if (!arena.reserve(bytes)) {
      return error.fail(DYNCC_ERROR_INTERNAL,
                        "out of memory allocating a " + str(bytes) +
                            "-byte arena");
    }
    base = static_cast<char *>(arena.data());
  }
  for (size_t t = 0; t < tempBuffers.size(); ++t)
    bufferData[tempBuffers[t]] = base + placement.offsets[t];
  return true;
}

bool Session::resolveReshape(const StepInfo &step,
                             std::vector<int64_t> &values,
                             RuntimeError &error) const {
  // Reshape's rules: 0 copies the input's dimension (unless allowzero), one
  // -1 is the input's element count over the product of the others.
  size_t count = values.size();
  size_t inferred = count;
  auto what = [&](size_t i) {
    return step.where + ": element " + std::to_string(i) +
           " of the shape read from data is " + str(values[i]);
  };
  auto input = [&](size_t d, int64_t &value) {
    if (!step.reshapeReady)
      return error.fail(DYNCC_ERROR_SHAPE,
                        step.where + ": the shape read from data has a 0 " +
                            "or -1, which needs the input's sizes, but " +
                            "they are sizes this shape gives");
    ShapeExpr::EvalStatus status =
        step.reshapeOf[d].evaluate(symbols.data(), value);
    if (status != ShapeExpr::EvalStatus::Ok)
      return error.fail(DYNCC_ERROR_SHAPE,
                        step.where + ": cannot evaluate the input's " +
                            quoted(step.reshapeOf[d].text()) + ": " +
                            ShapeExpr::describe(status));
    return true;
  };
  for (size_t i = 0; i < count; ++i) {
    if (values[i] == -1) {
      if (inferred != count)
        return error.fail(DYNCC_ERROR_SHAPE,
                          what(i) + ", and so is element " +
                              std::to_string(inferred) +
                              ": only one size may be inferred");
      inferred = i;
    } else if (values[i] == 0 && !step.allowzero) {
      if (i >= step.reshapeOf.size())
        return error.fail(DYNCC_ERROR_SHAPE,
                          what(i) + ", but the input has rank " +
                              std::to_string(step.reshapeOf.size()));
      if (!input(i, values[i]))
        return false;
    } else if (values[i] < 0) {
      return error.fail(DYNCC_ERROR_SHAPE, what(i));
    }
  }
  if (inferred == count)
    return true;
  uint64_t total = 1, known = 1;
  for (size_t d = 0; d < step.reshapeOf.size(); ++d) {
    int64_t value;
    if (!input(d, value))
      return false;
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(value), &total))
      return error.fail(DYNCC_ERROR_SHAPE,
                        step.where + ": the input's size overflows");
  }
  for (size_t i = 0; i < count; ++i)
    if (i != inferred &&
        __builtin_mul_overflow(known, static_cast<uint64_t>(values[i]), &known))
      return error.fail(DYNCC_ERROR_SHAPE,
                        step.where + ": the shape's size overflows");
  if (known == 0 || total % known != 0)
    return error.fail(DYNCC_ERROR_SHAPE,
                      what(inferred) + ", but the input's " + str(total) +
                          " elements do not divide into the other sizes' " +
                          str(known));
  values[inferred] = static_cast<int64_t>(total / known);
  return true;
}

bool Session::bindFromData(const StepInfo &step, size_t stepIndex,
                           RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  // The buffer holds exactly one i64 or i32 per element (readSteps).
  size_t count = step.dims.size();
  bool wide = manifest.buffers[step.src].dtype == DType::I64;
  size_t bytes = count * (wide ? 8 : 4);
  // Read back: the data is on the device for CUDA sessions.
  std::vector<int64_t> values(count);
  const void *host = bufferData[step.src];
  std::vector<unsigned char> staged;
  if (gpu && bytes != 0) {
    staged.resize(bytes);
    const cuda::Driver &driver = gpu->driver();
    if (cuda::CUresult status = driver.memcpyDtoHAsync(
            staged.data(),
            reinterpret_cast<uintptr_t>(bufferData[step.src]), bytes,
            gpu->stream))
      return deviceFailure("steps[" + std::to_string(stepIndex) +
                               "]: cuMemcpyDtoHAsync of sizes",
                           status, error);
    if (cuda::CUresult status = driver.streamSynchronize(gpu->stream))
      return deviceFailure("cuStreamSynchronize", status, error);
    host = staged.data();
  }
  for (size_t i = 0; i < count; ++i) {
    if (wide) {
      std::memcpy(&values[i], static_cast<const char *>(host) + 8 * i, 8);
    } else {
      int32_t narrow;
      std::memcpy(&narrow, static_cast<const char *>(host) + 4 * i, 4);
      values[i] = narrow;
    }
  }

  auto element = [&](size_t i) {
    return step.where + ": element " + std::to_string(i) + " (" +
           step.dims[i].text() + ") of the sizes read from data is " +
           str(values[i]);
  };
  if (step.reshape && !resolveReshape(step, values, error))
    return false;
  // Bind first, then check: an element may be checked against symbols
  // bound by the same step.
  for (size_t i = 0; i < count; ++i) {
    size_t slot = step.binds[i];
    if (slot == kAtBinding)
      continue;
    const SymbolInfo &symbol = manifest.symbols[slot];
    if (values[i] < symbol.min || values[i] > symbol.max ||
        values[i] % symbol.divisor != 0)
      return error.fail(DYNCC_ERROR_SHAPE,
                        element(i) + ", outside " + symbol.name + "'s range [" +
                            str(symbol.min) + ", " + str(symbol.max) + "]");
    symbols[slot] = values[i];
    symbolBound[slot] = 1;
  }
  noteSymbols();
  for (size_t i = 0; i < count; ++i) {
    if (step.binds[i] != kAtBinding)
      continue;
    int64_t expected;
    ShapeExpr::EvalStatus status =
        step.dims[i].evaluate(symbols.data(), expected);
    if (status != ShapeExpr::EvalStatus::Ok)
      return error.fail(DYNCC_ERROR_SHAPE, element(i) + ": cannot evaluate " +
                                               quoted(step.dims[i].text()) +
                                               ": " +
                                               ShapeExpr::describe(status));
    if (values[i] != expected && !(step.broadcast && values[i] == 1))
      return error.fail(DYNCC_ERROR_SHAPE,
                        element(i) + ", expected " + str(expected));
  }
  return checkConstraints(stepIndex, error) &&
         computeBuffers(stepIndex, error);
}

bool Session::placeOnDevice(size_t b, RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  const BufferInfo &buffer = manifest.buffers[b];
  const cuda::Driver &driver = gpu->driver();
  size_t bytes = bufferBytes[b];
  auto address = [](cuda::CUdeviceptr pointer) {
    return reinterpret_cast<void *>(static_cast<uintptr_t>(pointer));
  };
  switch (buffer.kind) {
  case BufferKind::Input: {
    const InputBinding &binding = inputs[buffer.port];
    if (binding.onDevice) {
      bufferData[b] = const_cast<void *>(binding.data);
      return true;
    }
    // Host data: copied to the device on the session's stream.
    DeviceBuffer &staging = gpu->staging[buffer.port];
    auto what = [&] {
      return "input " + quoted(manifest.inputs[buffer.port].name);
    };
    if (cuda::CUresult status = staging.reserve(driver, bytes))
      return deviceFailure("cuMemAlloc of " + str(bytes) + " bytes for " +
                               what(),
                           status, error);
    if (bytes == 0) {
      bufferData[b] = address(staging.data());
      return true;
    }
    // Through page-locked memory where there is some: an earlier run's
    // copies out of it must be done before it is written again (this run's
    // are each from a buffer of their own).
    const void *source = binding.data;
    auto waitForCopies = [&]() -> bool {
      if (cuda::CUresult status = driver.eventSynchronize(gpu->inputsCopied))
        return deviceFailure("cuEventSynchronize", status, error);
      gpu->inputsInFlight = false;
      return true;
    };
    if (!gpu->pinned.empty()) {
      if (gpu->inputsInFlight && gpu->inFlightRun != runNumber &&
          !waitForCopies())
        return false;
      PinnedBuffer &pinned = gpu->pinned[buffer.port];
      if (cuda::CUresult status = pinned.reserve(driver, bytes)) {
        // Copied from the caller's memory from now on; what this run copied
        // out of pinned memory is done first.
        if (gpu->inputsInFlight && !waitForCopies())
          return false;
        pinnedOffReason = driver.failure(
            "cuMemHostAlloc of " + str(bytes) + " bytes for " + what(), status);
        gpu->pinned.clear();
      } else {
        std::chrono::steady_clock::time_point start;
        if (driverTiming)
          start = std::chrono::steady_clock::now();
        std::memcpy(pinned.data(), binding.data, bytes);
        if (driverTiming) {
          inputCopyMicroseconds += std::chrono::duration<double, std::micro>(
                                       std::chrono::steady_clock::now() - start)
                                       .count();
          inputCopyBytes += bytes;
        }
        source = pinned.data();
      }
    }
    if (cuda::CUresult status =
            driver.memcpyHtoDAsync(staging.data(), source, bytes, gpu->stream))
      return deviceFailure("cuMemcpyHtoDAsync of " + what(), status, error);
    if (source != binding.data) {
      if (cuda::CUresult status =
              driver.eventRecord(gpu->inputsCopied, gpu->stream))
        return deviceFailure("cuEventRecord", status, error);
      ++gpu->pinnedCopies;
      gpu->inputsInFlight = true;
      gpu->inFlightRun = runNumber;
      gpu->inFlightStream = gpu->stream;
    }
    bufferData[b] = address(staging.data());
    return true;
  }
  case BufferKind::Weight:
    bufferData[b] = address(gpu->model->weight(b));
    return true;
  case BufferKind::Output: {
    DeviceBuffer &output = gpu->outputs[buffer.port];
    if (cuda::CUresult status = output.reserve(driver, bytes))
      return deviceFailure("cuMemAlloc of " + str(bytes) +
                               " bytes for output " +
                               quoted(manifest.outputs[buffer.port].name),
                           status, error);
    bufferData[b] = address(output.data());
    return true;
  }
  case BufferKind::Temp:
    return true; // Placed in the arena.
  }
  return true;
}

bool Session::selectVariant(size_t groupIndex, size_t &kernel,
                            RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  const GroupInfo &group = manifest.groups[groupIndex]; // Not read if memoized.
  if (forced[groupIndex] >= 0 &&
      group.variants[static_cast<size_t>(forced[groupIndex])].holds(
          symbols.data())) {
    kernel = group.variants[static_cast<size_t>(forced[groupIndex])].kernel;
    return true;
  }
  uint32_t *memo = runSelections && memoizedGroup[groupIndex]
                       ? &(*runSelections)[groupIndex]
                       : nullptr;
  if (memo && *memo != kNotSelected) {
    kernel = *memo;
    return true;
  }
  // A memoized group without measurements selects as the first of its
  // class to select in this run did (the symbols are the same).
  const GroupCalibration *measured = calibrationOf(groupIndex);
  size_t selectionClass = memo && !measured
                              ? loaded->selectionClass(groupIndex)
                              : manifest.groups.size();
  auto choose = [&](size_t variant) {
    kernel = loaded->variantKernel(groupIndex, variant);
    if (memo)
      *memo = static_cast<uint32_t>(kernel);
    if (selectionClass != manifest.groups.size()) {
      classPick[selectionClass] = static_cast<uint32_t>(variant);
      classRun[selectionClass] = runNumber;
    }
    return true;
  };
  if (selectionClass != manifest.groups.size() &&
      classRun[selectionClass] == runNumber)
    return choose(classPick[selectionClass]);
  ++scans;
  // Measurements on this device first (`dyncc tune`), then on the host the
  // host model, then the search's table, then the first variant whose
  // conditions hold where there is none (or a key cannot be evaluated).
  size_t picked;
  if (hostModelSelects(groupIndex) &&
      pickHostVariant(manifest, groupIndex,
                      loaded->hostModelledTiles(groupIndex), host,
                      symbols.data(), picked))
    return choose(picked);
  if (pickVariant(manifest, measured, groupIndex, symbols.data(), picked))
    return choose(picked);
  std::string values;
  for (size_t slot : group.keySymbols)
    values += (values.empty() ? "" : ", ") + manifest.symbols[slot].name +
              " = " + str(symbols[slot]);
  return error.fail(DYNCC_ERROR_SHAPE, "no variant of group " +
                                           quoted(group.name) + " matches " +
                                           values);
}

namespace {
struct LaunchContext {
  CpuKernelFn fn;
  void **params;
  uint64_t gridX;
  uint64_t gridY;
};

void runBlock(void *opaque, uint64_t index) {
  const LaunchContext &ctx = *static_cast<const LaunchContext *>(opaque);
  uint64_t x = index % ctx.gridX;
  uint64_t rest = index / ctx.gridX;
  uint64_t y = rest % ctx.gridY;
  uint64_t z = rest / ctx.gridY;
  ctx.fn(ctx.params, static_cast<int64_t>(x), static_cast<int64_t>(y),
         static_cast<int64_t>(z));
}
} // namespace

bool Session::launch(size_t groupIndex, RuntimeError &error) {
  size_t kernelIndex;
  if (!selectVariant(groupIndex, kernelIndex, error))
    return false;
  lastKernel[groupIndex] = kernelIndex;
  if (!launchKernel(kernelIndex, error))
    return false;
  // The step's blocks are the leading kernel's: `dyncc tune`'s wave model
  // of a variant counts its grid (the run-time predicts with the same).
  uint64_t blocks = launchedBlocks;
  const LaunchPlan &plan = launchPlans[kernelIndex];
  for (uint32_t t = plan.thenBegin; t < plan.thenEnd; ++t)
    if (!launchKernel(thenKernels[t], error))
      return false;
  launchedBlocks = blocks;
  return true;
}

bool Session::launchKernel(size_t kernelIndex, RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  const KernelInfo &kernel = manifest.kernels[kernelIndex];
  // Built only for an error: a launch allocates no string.
  auto label = [&] { return "kernel " + quoted(kernel.name); };
  const LaunchPlan &plan = launchPlans[kernelIndex];
  int64_t *slot = slots[kernelIndex].data();
  // Launched before in this epoch: the values, shapes and grid written
  // then hold; the addresses may have moved (a larger arena, new inputs).
  bool filled = launchEpochs[kernelIndex] == shapeEpoch;
  for (uint32_t f = filled ? plan.addressBegin : plan.fillBegin;
       f < plan.fillEnd; ++f) {
    const SlotFill &fill = fills[f];
    switch (fill.kind) {
    case SlotFill::Kind::Symbol:
      slot[fill.slot] = symbols[fill.index];
      break;
    case SlotFill::Kind::Expression:
      if (ShapeExpr::EvalStatus status =
              evaluateExpression(fill.index, slot[fill.slot]);
          status != ShapeExpr::EvalStatus::Ok) {
        const ShapeExpr &expr = kernel.params[fill.param].expr;
        return error.fail(DYNCC_ERROR_SHAPE,
                          label() + " params[" + std::to_string(fill.param) +
                              "]: cannot evaluate " + quoted(expr.text()) +
                              ": " + ShapeExpr::describe(status));
      }
      break;
    case SlotFill::Kind::Address: {
      void *data = bufferData[fill.index];
      std::memcpy(&slot[fill.slot], &data, sizeof(void *));     // allocated
      std::memcpy(&slot[fill.slot + 1], &data, sizeof(void *)); // aligned
      break;
    }
    case SlotFill::Kind::Shape: {
      writeShape(bufferShape(fill.index), bufferRank(fill.index),
                 &slot[fill.slot]);
      break;
    }
    }
  }

  uint64_t grid[3];
  std::array<uint64_t, 3> &known = launchGrids[kernelIndex];
  for (int i = 0; i < 3 && filled; ++i)
    grid[i] = known[i];
  for (int i = 0; i < 3 && !filled; ++i) {
    int64_t value;
    ShapeExpr::EvalStatus status = evaluate(plan.grid[i], value);
    auto gridLabel = [&] {
      return label() + " grid[" + std::to_string(i) + "]";
    };
    if (status != ShapeExpr::EvalStatus::Ok)
      return error.fail(DYNCC_ERROR_SHAPE, gridLabel() + ": cannot evaluate " +
                                               quoted(kernel.grid[i].text()) +
                                               ": " +
                                               ShapeExpr::describe(status));
    if (value < 0)
      return error.fail(DYNCC_ERROR_SHAPE,
                        gridLabel() + ": " + quoted(kernel.grid[i].text()) +
                            " = " + str(value) + " is negative");
    grid[i] = static_cast<uint64_t>(value);
  }
  uint64_t total;
  if (__builtin_mul_overflow(grid[0], grid[1], &total) ||
      __builtin_mul_overflow(total, grid[2], &total))
    return error.fail(DYNCC_ERROR_SHAPE,
                      label() + ": the grid size overflows");
  if (!filled) {
    std::copy(grid, grid + 3, known.begin());
    launchEpochs[kernelIndex] = shapeEpoch;
  }
  launchedBlocks = total;
  if (total == 0)
    return true;
  ++launches;
  if (gpu) {
    // The hardware's limits: x below 2^31, y and z below 2^16. A kernel
    // that takes its block from the linear id runs as well on a grid along
    // x alone.
    if ((grid[1] > 0xffffu || grid[2] > 0xffffu) && kernel.linearGrid &&
        total <= 0x7fffffffu) {
      grid[0] = total;
      grid[1] = grid[2] = 1;
    }
    if (grid[0] > 0x7fffffffu || grid[1] > 0xffffu || grid[2] > 0xffffu)
      return error.fail(DYNCC_ERROR_SHAPE,
                        label() + ": the grid " + str(grid[0]) + " x " +
                            str(grid[1]) + " x " + str(grid[2]) +
                            " exceeds the device's limits");
    if (gpu->recording) {
      CudaState::GraphOp op;
      op.function = plan.function;
      op.kernel = static_cast<uint32_t>(kernelIndex);
      for (int i = 0; i < 3; ++i) {
        op.grid[i] = static_cast<unsigned>(grid[i]);
        op.block[i] = plan.block[i];
      }
      op.sharedBytes = plan.sharedBytes;
      op.paramBegin = static_cast<uint32_t>(gpu->params.size());
      op.paramCount = static_cast<uint32_t>(slots[kernelIndex].size());
      gpu->params.insert(gpu->params.end(), slots[kernelIndex].begin(),
                         slots[kernelIndex].end());
      gpu->ops.push_back(op);
      return true;
    }
    if (cuda::CUresult status = gpu->driver().launchKernel(
            plan.function, static_cast<unsigned>(grid[0]),
            static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2]),
            plan.block[0], plan.block[1], plan.block[2], plan.sharedBytes,
            gpu->stream,
            reinterpret_cast<void **>(slotPointers[kernelIndex].data()),
            nullptr))
      return deviceFailure("cuLaunchKernel of " + label(), status, error);
    return true;
  }
  LaunchContext ctx{loaded->cpuKernel(kernelIndex),
                    slotPointers[kernelIndex].data(), grid[0], grid[1]};
  pool.parallelFor(total, runBlock, &ctx);
  return true;
}

bool Session::copy(const StepInfo &step, size_t stepIndex,
                   RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  size_t bytes = bufferBytes[step.src];
  if (bytes != bufferBytes[step.dst])
    return error.fail(DYNCC_ERROR_SHAPE,
                      "steps[" + std::to_string(stepIndex) + "]: copy from " +
                          "buffer " + str(manifest.buffers[step.src].id) +
                          " (" + std::to_string(bytes) + " bytes) to buffer " +
                          str(manifest.buffers[step.dst].id) + " (" +
                          std::to_string(bufferBytes[step.dst]) + " bytes)");
  if (bytes == 0 || bufferData[step.src] == bufferData[step.dst])
    return true;
  if (gpu && gpu->recording) {
    CudaState::GraphOp op;
    op.kernel = static_cast<uint32_t>(stepIndex);
    op.dst = reinterpret_cast<uintptr_t>(bufferData[step.dst]);
    op.src = reinterpret_cast<uintptr_t>(bufferData[step.src]);
    op.bytes = bytes;
    gpu->ops.push_back(op);
    return true;
  }
  if (gpu) {
    // Distinct buffers never overlap (the plan copies between buffers).
    if (cuda::CUresult status = gpu->driver().memcpyDtoDAsync(
            reinterpret_cast<uintptr_t>(bufferData[step.dst]),
            reinterpret_cast<uintptr_t>(bufferData[step.src]), bytes,
            gpu->stream))
      return deviceFailure("steps[" + std::to_string(stepIndex) +
                               "]: cuMemcpyDtoDAsync",
                           status, error);
    return true;
  }
  std::memmove(bufferData[step.dst], bufferData[step.src], bytes);
  return true;
}

void Session::beginSelections() {
  // Memoized per tuple of the symbols the inputs bind.
  selectionKey.clear();
  for (size_t slot : inputSymbols)
    selectionKey.push_back(symbols[slot]);
  auto memo = selectionMemo.find(selectionKey);
  newSelections = memo == selectionMemo.end();
  if (memo == selectionMemo.end()) {
    if (selectionMemo.size() >= kMaxSelectionMemoEntries)
      selectionMemo.clear();
    memo = selectionMemo
               .emplace(selectionKey,
                        std::vector<uint32_t>(loaded->manifest().groups.size(),
                                              kNotSelected))
               .first;
  }
  runSelections = &memo->second;
  ++runNumber;
}

void Session::prefetchLaunches() {
  // The run's variants first (memoized, so the launches do not select
  // again), then what their launches read, requested before it is read:
  // on a shape's first run it is cold, and the misses overlap here where
  // the launch loop would wait for them one launch at a time.
  const std::vector<Model::RunStep> &steps = loaded->runSteps();
  RuntimeError ignored; // A failure is met again, in order, at its launch.
  prefetched.clear();
  for (const Model::RunStep &step : steps) {
    size_t kernel;
    if (step.op != StepInfo::Op::Launch || !memoizedGroup[step.group] ||
        !selectVariant(step.group, kernel, ignored))
      continue;
    prefetched.push_back(static_cast<uint32_t>(kernel));
    __builtin_prefetch(&launchPlans[kernel]);
    __builtin_prefetch(&launchEpochs[kernel]);
  }
  for (uint32_t kernel : prefetched) {
    const LaunchPlan &plan = launchPlans[kernel];
    // Its first two lines of fills (4 a line), those there are.
    for (uint32_t f = plan.fillBegin;
         f < plan.fillEnd && f < plan.fillBegin + 8; f += 4)
      __builtin_prefetch(fills.data() + f);
    __builtin_prefetch(slots[kernel].data(), 1);
  }
}

bool Session::enqueue(RuntimeError &error) {
  ran = false;
  launches = 0;
  driverMicroseconds = 0;
  driverCalls = 0;
  inputCopyMicroseconds = 0;
  inputCopyBytes = 0;
  if (gpu && !gpu->model->makeCurrent(error))
    return false;
  // The driver's share of this enqueue (driver timing): the thread's
  // totals before, against those at the end.
  cuda::DriverTime before;
  if (driverTiming)
    before = cuda::threadDriverTime();
  if (!bindSymbols(error))
    return false;
  noteSymbols();
  const Manifest &manifest = loaded->manifest();
  // This run's selections, set before the buffers are sized: a workspace
  // is sized by the variant its group selects.
  beginSelections();
  if (!computeBuffers(kAtBinding, error))
    return false;
  if (gpu) {
    if (cuda::CUresult status =
            gpu->driver().eventRecord(gpu->start, gpu->stream))
      return deviceFailure("cuEventRecord", status, error);
  }
  profiled = false;
  // Graphs on the session's own stream only: a caller's stream may be in
  // a capture of its own. Per-step events (profiling) need the steps apart.
  bool record = gpu && graphsOffReason.empty() && !profiling &&
                gpu->stream == gpu->ownStream;
  if (record) {
    gpu->ops.clear();
    gpu->params.clear();
  }
  struct Recording {
    CudaState *state;
    ~Recording() {
      if (state)
        state->recording = false;
    }
  } recording{record ? gpu.get() : nullptr};
  if (record)
    gpu->recording = true;
  const std::vector<Model::RunStep> &steps = loaded->runSteps();
  if (newSelections)
    prefetchLaunches();
  for (size_t s = 0; s < steps.size(); ++s) {
    Model::RunStep step = steps[s];
    if (profiling && gpu)
      if (cuda::CUresult status = gpu->driver().eventRecord(
              gpu->stepEvents[2 * s], gpu->stream))
        return deviceFailure("cuEventRecord", status, error);
    std::chrono::steady_clock::time_point begin;
    if (profiling)
      begin = std::chrono::steady_clock::now();
    launchedBlocks = 0;
    bool ok =
        step.op == StepInfo::Op::Launch ? launch(step.group, error)
        : step.op == StepInfo::Op::Copy ? copy(manifest.steps[s], s, error)
                                        : bindFromData(manifest.steps[s], s, error);
    if (!ok)
      return false;
    if (!profiling)
      continue;
    stepBlocks[s] = launchedBlocks;
    if (gpu) {
      if (cuda::CUresult status = gpu->driver().eventRecord(
              gpu->stepEvents[2 * s + 1], gpu->stream))
        return deviceFailure("cuEventRecord", status, error);
    } else {
      stepMilliseconds[s] = std::chrono::duration<double, std::milli>(
                                std::chrono::steady_clock::now() - begin)
                                .count();
    }
  }
  profiled = profiling;
  if (record) {
    gpu->recording = false;
    if (!issueRecorded(error))
      return false;
  }
  if (gpu) {
    if (cuda::CUresult status =
            gpu->driver().eventRecord(gpu->end, gpu->stream))
      return deviceFailure("cuEventRecord", status, error);
    std::fill(gpu->hostStale.begin(), gpu->hostStale.end(), 1);
  }
  if (driverTiming) {
    const cuda::DriverTime &after = cuda::threadDriverTime();
    driverMicroseconds = (after.nanoseconds - before.nanoseconds) / 1000.0;
    driverCalls = after.calls - before.calls;
  }
  ran = true;
  return true;
}

cuda::CUresult Session::issueDirect(const std::vector<CudaState::GraphOp> &ops,
                                    const std::vector<int64_t> &params,
                                    std::string &what) {
  const cuda::Driver &driver = gpu->driver();
  for (const CudaState::GraphOp &op : ops) {
    if (!op.function) {
      if (cuda::CUresult status =
              driver.memcpyDtoDAsync(op.dst, op.src, op.bytes, gpu->stream)) {
        what = "steps[" + std::to_string(op.kernel) + "]: cuMemcpyDtoDAsync";
        return status;
      }
      continue;
    }
    gpu->paramPointers.resize(op.paramCount);
    for (uint32_t i = 0; i < op.paramCount; ++i)
      gpu->paramPointers[i] = const_cast<int64_t *>(&params[op.paramBegin + i]);
    if (cuda::CUresult status = driver.launchKernel(
            op.function, op.grid[0], op.grid[1], op.grid[2], op.block[0],
            op.block[1], op.block[2], op.sharedBytes, gpu->stream,
            gpu->paramPointers.data(), nullptr)) {
      what = "cuLaunchKernel of kernel " +
             quoted(loaded->manifest().kernels[op.kernel].name);
      return status;
    }
  }
  return cuda::CUDA_SUCCESS;
}

bool Session::issueRecorded(RuntimeError &error) {
  const cuda::Driver &driver = gpu->driver();
  CudaState::Graph *graph = nullptr;
  for (CudaState::Graph &candidate : gpu->graphs)
    if (candidate.ops == gpu->ops && candidate.params == gpu->params) {
      graph = &candidate;
      break;
    }
  ++gpu->graphClock;
  if (!graph) {
    // The first run of these operations: remembered, launched one by one
    // (capturing costs more than a run, and most shapes come again). The
    // recording moves into the list; the next run records into the
    // storage of the graph it replaces.
    std::vector<CudaState::GraphOp> spareOps;
    std::vector<int64_t> spareParams;
    if (gpu->graphs.size() >= kMaxGraphs) {
      auto oldest = std::min_element(
          gpu->graphs.begin(), gpu->graphs.end(),
          [](const CudaState::Graph &a, const CudaState::Graph &b) {
            return a.lastUse < b.lastUse;
          });
      if (oldest->exec)
        driver.graphExecDestroy(oldest->exec);
      spareOps = std::move(oldest->ops);
      spareParams = std::move(oldest->params);
      gpu->graphs.erase(oldest);
    }
    spareOps.clear();
    spareParams.clear();
    spareOps.reserve(gpu->ops.capacity());
    spareParams.reserve(gpu->params.capacity());
    gpu->graphs.push_back({std::move(gpu->ops), std::move(gpu->params), nullptr,
                           gpu->graphClock});
    gpu->ops = std::move(spareOps);
    gpu->params = std::move(spareParams);
    graph = &gpu->graphs.back();
  } else {
    graph->lastUse = gpu->graphClock;
    if (!graph->exec) {
      // The second: captured into a graph.
      std::string what = "cuStreamBeginCapture";
      cuda::CUresult status = driver.streamBeginCapture(
          gpu->stream, cuda::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      cuda::CUgraph captured = nullptr;
      if (status == cuda::CUDA_SUCCESS) {
        status = issueDirect(graph->ops, graph->params, what);
        cuda::CUresult ended =
            driver.streamEndCapture(gpu->stream, &captured);
        if (status == cuda::CUDA_SUCCESS && ended != cuda::CUDA_SUCCESS) {
          status = ended;
          what = "cuStreamEndCapture";
        }
      }
      if (status == cuda::CUDA_SUCCESS) {
        status = driver.graphInstantiate(&graph->exec, captured, 0);
        what = "cuGraphInstantiateWithFlags";
      }
      if (captured)
        driver.graphDestroy(captured);
      if (status != cuda::CUDA_SUCCESS) {
        // Launches one by one from now on; this run too.
        graph->exec = nullptr;
        graphsOffReason = driver.failure(what, status);
      } else {
        ++gpu->captures;
      }
    }
    if (graph->exec) {
      if (cuda::CUresult status = driver.graphLaunch(graph->exec, gpu->stream))
        return deviceFailure("cuGraphLaunch", status, error);
      ++gpu->replays;
      return true;
    }
  }
  std::string what;
  if (cuda::CUresult status = issueDirect(graph->ops, graph->params, what))
    return deviceFailure(what, status, error);
  return true;
}

bool Session::setDriverTiming(bool enable, RuntimeError &error) {
  if (!gpu)
    return error.fail(DYNCC_ERROR_UNSUPPORTED,
                      "driver timing needs a CUDA session; this one runs on "
                      "the cpu");
  std::string message;
  const cuda::Driver *calls = enable ? cuda::Driver::getTimed(message)
                                     : &gpu->model->driver();
  if (!calls)
    return error.fail(DYNCC_ERROR_DEVICE, message);
  gpu->calls = calls;
  driverTiming = enable;
  return true;
}

bool Session::wait(RuntimeError &error) {
  if (!gpu)
    return true;
  if (!gpu->model->makeCurrent(error))
    return false;
  if (cuda::CUresult status =
          gpu->driver().streamSynchronize(gpu->stream)) {
    ran = false;
    return deviceFailure("cuStreamSynchronize", status, error);
  }
  streamDone();
  return true;
}

void Session::streamDone() {
  // The copies out of pinned memory were on this stream: done too.
  if (gpu->inputsInFlight && gpu->inFlightStream == gpu->stream)
    gpu->inputsInFlight = false;
}

bool Session::setStream(void *stream, RuntimeError &error) {
  if (!gpu)
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "a stream needs a CUDA session (this one is on the cpu)");
  gpu->stream =
      stream ? static_cast<cuda::CUstream>(stream) : gpu->ownStream;
  return true;
}

bool Session::forceVariant(size_t group, int64_t variant,
                           RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  if (group >= manifest.groups.size())
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "group " + str(static_cast<int64_t>(group)) +
                          " is out of range (" +
                          str(static_cast<int64_t>(manifest.groups.size())) +
                          " groups)");
  int64_t count = static_cast<int64_t>(manifest.groups[group].variants.size());
  if (variant < -1 || variant >= count)
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "group " + quoted(manifest.groups[group].name) +
                          " has no variant " + str(variant) + " (it has " +
                          str(count) + ")");
  // A workspace's bytes follow its group's variant: the next run sizes and
  // places the temps again, even at the same symbols (computeBuffers).
  if (forced[group] != variant)
    sizedEpoch = 0;
  forced[group] = variant;
  return true;
}

bool Session::setProfiling(bool enable, RuntimeError &error) {
  if (enable && gpu && gpu->stepEvents.empty()) {
    if (!gpu->model->makeCurrent(error))
      return false;
    const cuda::Driver &driver = gpu->driver();
    size_t count = 2 * loaded->manifest().steps.size();
    while (gpu->stepEvents.size() < count) {
      cuda::CUevent event;
      if (cuda::CUresult status =
              driver.eventCreate(&event, cuda::CU_EVENT_DEFAULT))
        return deviceFailure("cuEventCreate", status, error);
      gpu->stepEvents.push_back(event);
    }
  }
  profiling = enable;
  return true;
}

bool Session::groupProfile(size_t group, double &milliseconds,
                           uint64_t &blocks, RuntimeError &error) {
  const Manifest &manifest = loaded->manifest();
  if (group >= manifest.groups.size())
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "group " + str(static_cast<int64_t>(group)) +
                          " is out of range");
  if (!ran || !profiled)
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "no profiled run yet: enable profiling, then run");
  if (gpu && !gpu->model->makeCurrent(error))
    return false;
  milliseconds = 0;
  blocks = 0;
  for (size_t s = 0; s < manifest.steps.size(); ++s) {
    const StepInfo &step = manifest.steps[s];
    if (step.op != StepInfo::Op::Launch || step.group != group)
      continue;
    blocks += stepBlocks[s];
    if (!gpu) {
      milliseconds += stepMilliseconds[s];
      continue;
    }
    const cuda::Driver &driver = gpu->driver();
    float elapsed = 0;
    if (cuda::CUresult status =
            driver.eventSynchronize(gpu->stepEvents[2 * s + 1]))
      return deviceFailure("cuEventSynchronize", status, error);
    if (cuda::CUresult status = driver.eventElapsedTime(
            &elapsed, gpu->stepEvents[2 * s], gpu->stepEvents[2 * s + 1]))
      return deviceFailure("cuEventElapsedTime", status, error);
    milliseconds += elapsed;
  }
  return true;
}

bool Session::blocksPerWave(size_t group, size_t variant, int64_t &blocks,
                            RuntimeError &error) const {
  const Manifest &manifest = loaded->manifest();
  if (group >= manifest.groups.size() ||
      variant >= manifest.groups[group].variants.size())
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "no variant " + str(static_cast<int64_t>(variant)) +
                          " of group " + str(static_cast<int64_t>(group)));
  if (!gpu) {
    blocks = static_cast<int64_t>(pool.size());
    return true;
  }
  if (!gpu->model->makeCurrent(error))
    return false;
  return gpu->model->blocksPerWave(
      *loaded, manifest.groups[group].variants[variant].kernel, blocks, error);
}

bool Session::deviceTime(double &milliseconds, RuntimeError &error) {
  if (!gpu)
    return error.fail(DYNCC_ERROR_UNSUPPORTED,
                      "device time needs a CUDA session (this one is on the "
                      "cpu)");
  if (!ran)
    return error.fail(DYNCC_ERROR_INVALID_ARGUMENT,
                      "no successful run to time yet");
  if (!gpu->model->makeCurrent(error))
    return false;
  const cuda::Driver &driver = gpu->driver();
  float elapsed = 0;
  if (cuda::CUresult status = driver.eventSynchronize(gpu->end))
    return deviceFailure("cuEventSynchronize", status, error);
  if (cuda::CUresult status =
          driver.eventElapsedTime(&elapsed, gpu->start, gpu->end))
    return deviceFailure("cuEventElapsedTime", status, error);
  milliseconds = elapsed;
  return true;
}

const void *Session::hostOutput(size_t index, RuntimeError &error) {
  if (!ran) {
    error.fail(DYNCC_ERROR_INVALID_ARGUMENT, "no successful run yet");
    return nullptr;
  }
  if (!gpu || !gpu->hostStale[index])
    return outputs[index].data();
  size_t bytes = outputBytes(index);
  std::string what = "output " + quoted(loaded->manifest().outputs[index].name);
  if (!outputs[index].reserve(bytes)) {
    error.fail(DYNCC_ERROR_INTERNAL,
               "out of memory allocating " + str(bytes) + " bytes for " + what);
    return nullptr;
  }
  if (!gpu->model->makeCurrent(error))
    return nullptr;
  const cuda::Driver &driver = gpu->driver();
  if (bytes != 0) {
    if (cuda::CUresult status =
            driver.memcpyDtoHAsync(outputs[index].data(),
                                   gpu->outputs[index].data(), bytes,
                                   gpu->stream)) {
      deviceFailure("cuMemcpyDtoHAsync of " + what, status, error);
      return nullptr;
    }
    if (cuda::CUresult status = driver.streamSynchronize(gpu->stream)) {
      deviceFailure("cuStreamSynchronize", status, error);
      return nullptr;
    }
    streamDone();
  }
  gpu->hostStale[index] = 0;
  return outputs[index].data();
}

uint64_t Session::deviceOutput(size_t index) const {
  return gpu && ran ? gpu->outputs[index].data() : 0;
}

const void *Session::arenaData() const {
  if (gpu)
    return reinterpret_cast<const void *>(
        static_cast<uintptr_t>(gpu->arena.data()));
  return arena.data();
}

size_t Session::arenaCapacity() const {
  return gpu ? gpu->arena.capacity() : arena.capacity();
}
