//===- Executor.h - Models and sessions -------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Model is a loaded artifact: the mapped file, the validated manifest, the
// weights (pointers into the mapping) and the resolved host kernels. It is
// immutable and shared by its sessions (its per-GPU state is loaded on
// demand, under a lock). Session binds inputs, evaluates the
// shapes, selects variants and runs the steps; the C API in CApi.cpp is a
// thin layer over these two classes.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_RUNTIME_EXECUTOR_H
#define DYNCC_LIB_RUNTIME_EXECUTOR_H

#include "ArenaPlan.h"
#include "CpuModule.h"
#include "CudaModel.h"
#include "ThreadPool.h"

#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/Calibration.h"
#include "dyncc/Runtime/HostModel.h"
#include "dyncc/Runtime/Manifest.h"
#include "dyncc/Runtime/dyncc_runtime.h"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace dyncc::runtime {

/// A status code and a one-line message.
struct RuntimeError {
  dyncc_status code = DYNCC_OK;
  std::string message;

  /// Records the error; returns false so that callers can `return fail(...)`.
  bool fail(dyncc_status status, std::string text) {
    code = status;
    message = std::move(text);
    return false;
  }
};

/// The CPU entry point of a kernel.
using CpuKernelFn = void (*)(void **params, int64_t blockIdxX,
                             int64_t blockIdxY, int64_t blockIdxZ);

class Model {
public:
  /// Loads the artifact at `path`. With `loadCpuCode` false the host code is
  /// not loaded (sessions then cannot run): used to check untrusted files.
  static std::shared_ptr<const Model>
  load(const std::string &path, RuntimeError &error, bool loadCpuCode = true);
  /// Loads an artifact from memory (copied).
  static std::shared_ptr<const Model> loadMemory(const void *data, size_t size,
                                                 const std::string &name,
                                                 RuntimeError &error,
                                                 bool loadCpuCode = true);

  const Manifest &manifest() const { return info; }
  const ArtifactFile &file() const { return *artifact; }
  bool cpuCodeLoaded() const { return codeLoaded; }
  /// The level of the host code loaded (a `host_code` build's `isa`;
  /// empty for artifacts without builds, and where none was loaded).
  const std::string &hostIsa() const { return isa; }
  /// Why no build of the host code was loaded although the artifact has
  /// some (none runs on this processor, or under DYNCC_HOST_ISA); empty
  /// otherwise.
  const std::string &hostCodeMissing() const { return missingHostCode; }
  /// The data of weight buffer `buffer` (null for other kinds).
  const void *weightData(size_t buffer) const { return weights[buffer]; }
  /// `dyncc tune`'s measurements (the `calibration` section; empty without
  /// one).
  const Calibration &calibration() const { return measured; }
  /// The host entry of kernel `kernel` (null without CPU code).
  CpuKernelFn cpuKernel(size_t kernel) const { return kernels[kernel]; }
  /// The first group whose variant selection is the same function of the
  /// symbols as `group`'s (the same keys, table and conditions, variant by
  /// variant): a model's repeated layers select alike.
  size_t selectionClass(size_t group) const { return classes[group]; }
  /// Group `group`'s variants' tiles as the host model reads them, or empty
  /// where it does not describe the group (getHostModelledTiles).
  const std::vector<cost::GemmTile> &hostModelledTiles(size_t group) const {
    return hostTiles[group];
  }
  /// The kernel of variant `variant` of group `group`.
  uint32_t variantKernel(size_t group, size_t variant) const {
    return variantKernels[variantBegin[group] + variant];
  }
  /// The steps' operations and groups, in a compact copy of the
  /// manifest's: what a run reads of each step.
  struct RunStep {
    StepInfo::Op op;
    uint32_t group;
  };
  const std::vector<RunStep> &runSteps() const { return steps; }
  /// The arena placements its sessions' planners share (ArenaPlanner).
  std::shared_ptr<SharedPlacements> sharedPlacements() const {
    return placements;
  }
  /// Plans the arena ahead with the selections `device`'s measurements
  /// (`dyncc tune`'s, one of calibration()'s devices) make, into the
  /// placements the sessions share: the compiler planned with the tile
  /// search's selections, and measured ones may fill split-K workspaces at
  /// other shapes. Once per device entry, whichever session (CUDA load or
  /// cpu session) selects by it first.
  void planMeasuredAhead(const DeviceCalibration &device) const;
  /// The measured devices planned for so far.
  size_t measuredDevicesPlanned() const {
    std::lock_guard<std::mutex> lock(plannedMutex);
    return plannedMeasured.size();
  }
  /// The model's code and weights on CUDA device `ordinal`, loaded by the
  /// first session there and shared while any session on it lives.
  std::shared_ptr<const CudaModel> cudaModel(int ordinal,
                                             RuntimeError &error) const;

private:
  Model() = default;
  static std::shared_ptr<const Model> finish(std::unique_ptr<ArtifactFile> file,
                                             RuntimeError &error,
                                             bool loadCpuCode);

  std::unique_ptr<ArtifactFile> artifact;
  Manifest info;
  Calibration measured;
  std::vector<std::unique_ptr<CpuModule>> modules;
  std::vector<const void *> weights;
  std::vector<CpuKernelFn> kernels;
  std::vector<size_t> classes;
  std::vector<std::vector<cost::GemmTile>> hostTiles;
  std::vector<uint32_t> variantBegin, variantKernels;
  std::vector<RunStep> steps;
  bool codeLoaded = false;
  std::string isa, missingHostCode;
  std::shared_ptr<SharedPlacements> placements =
      std::make_shared<SharedPlacements>();
  mutable std::mutex plannedMutex;
  mutable std::vector<const DeviceCalibration *> plannedMeasured;
  mutable std::mutex cudaMutex;
  mutable std::map<int, std::weak_ptr<const CudaModel>> cudaModels;
};

/// Heap memory aligned to 64 bytes that only grows.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  AlignedBuffer(AlignedBuffer &&other) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept;

  /// Makes room for `bytes` (keeping the storage if it is large enough).
  bool reserve(size_t bytes);
  void *data() const { return storage; }
  size_t capacity() const { return allocated; }

private:
  void *storage = nullptr;
  size_t allocated = 0;
};

class Session {
public:
  /// Creates a session on `device` ("cpu", "cuda", "cuda:N"; null means
  /// "cpu").
  static std::unique_ptr<Session> create(std::shared_ptr<const Model> model,
                                         const char *device,
                                         RuntimeError &error);
  ~Session();

  const Model &model() const { return *loaded; }
  /// True for a session on a CUDA device.
  bool onCuda() const { return gpu != nullptr; }
  /// The model on the session's GPU (null on the cpu).
  const CudaModel *cudaModel() const {
    return gpu ? gpu->model.get() : nullptr;
  }
  /// "cpu (N threads)", or the CUDA device and where its code came from.
  std::string deviceDescription() const;
  /// The device `dyncc tune`'s measurements are stored under and found by:
  /// a CUDA device's name, arch and SM count; on the cpu, the host
  /// processor's name, "cpu-" and its architecture (e.g. "cpu-x86_64"),
  /// and the session's threads, whose number changes the times.
  void tuningDevice(std::string &device, std::string &arch,
                    int64_t &units) const;

  /// Binds input `index`. `onDevice`: `data` is device memory of the
  /// session's GPU (CUDA sessions only); else host memory.
  bool setInput(size_t index, const void *data, const int64_t *shape,
                size_t rank, RuntimeError &error, bool onDevice = false);
  /// Runs and waits for the results.
  bool run(RuntimeError &error) { return enqueue(error) && wait(error); }
  /// Binds, selects and launches the steps. On CUDA the work is only
  /// enqueued on the session's stream: wait() or the stream's owner
  /// synchronizes. On the CPU it is the whole run.
  bool enqueue(RuntimeError &error);
  /// Waits for the enqueued work (nothing to do on the CPU).
  bool wait(RuntimeError &error);
  /// CUDA: enqueue on `stream` (a CUstream of the session's device; null:
  /// the session's own stream) from now on.
  bool setStream(void *stream, RuntimeError &error);
  /// The stream runs are enqueued on (CUDA; else null).
  void *currentStream() const { return gpu ? gpu->stream : nullptr; }
  /// The device time of the last run, from events around its steps (CUDA
  /// only; waits for it).
  bool deviceTime(double &milliseconds, RuntimeError &error);

  /// True after a successful run (until the next failing one).
  bool hasRun() const { return ran; }
  /// CUDA graphs: whether this session replays a run's launches as one
  /// graph (the second run of the same launches captures it, later ones
  /// replay it), and if not, why ("" when it does; "not CUDA" on the CPU).
  const std::string &graphsOff() const { return graphsOffReason; }
  /// Why host inputs are copied to the device from the caller's memory
  /// rather than through page-locked memory ("" where they are not; "not a
  /// CUDA session" on the CPU).
  const std::string &pinnedOff() const { return pinnedOffReason; }
  /// The copies of host inputs made through page-locked memory.
  uint64_t pinnedCopies() const { return gpu ? gpu->pinnedCopies : 0; }
  /// The runs that replayed a graph, and the graphs captured.
  uint64_t graphReplays() const { return gpu ? gpu->replays : 0; }
  uint64_t graphCaptures() const { return gpu ? gpu->captures : 0; }
  std::vector<int64_t> outputShape(size_t index) const {
    size_t b = loaded->manifest().outputs[index].buffer;
    return std::vector<int64_t>(bufferShape(b), bufferShape(b + 1));
  }
  size_t outputBytes(size_t index) const {
    return bufferBytes[loaded->manifest().outputs[index].buffer];
  }
  /// The host data of output `index`: CPU sessions' own; for CUDA sessions
  /// the copy hostOutput() made.
  const void *outputData(size_t index) const { return outputs[index].data(); }
  /// The host data of output `index`, copied from the device first on CUDA
  /// (once per run); null with `error` set if the copy fails.
  const void *hostOutput(size_t index, RuntimeError &error);
  /// The device address of output `index` (CUDA sessions; else 0).
  uint64_t deviceOutput(size_t index) const;
  int64_t symbolValue(size_t index) const { return symbols[index]; }
  /// The name of the kernel that last ran for `group`, or null.
  const char *groupVariant(size_t group) const;
  /// Why that kernel ran, at the last run's symbols: the tile search's
  /// table (each key's value and interval), the variant's conditions, or
  /// the group's one variant; null where the group has not run. Valid
  /// until the next call.
  const char *groupReason(size_t group) const;

  /// Runs variant `variant` of `group` from the next run on wherever its
  /// conditions hold (-1: select as usual). For `dyncc tune`.
  bool forceVariant(size_t group, int64_t variant, RuntimeError &error);
  /// Times each launch of the following runs (events around each on CUDA).
  bool setProfiling(bool enable, RuntimeError &error);
  /// Times the host's calls into the CUDA driver from the next run on
  /// (CUDA only), so that a run's host time splits into the run-time's own
  /// work and the driver's. Each call then costs two clock reads more.
  bool setDriverTiming(bool enable, RuntimeError &error);
  /// The last enqueue's host time inside driver calls (launches, copies,
  /// allocations, event records) and their count; 0 without driver timing.
  void lastDriverTime(double &microseconds, uint64_t &calls) const {
    microseconds = driverMicroseconds;
    calls = driverCalls;
  }
  /// The last enqueue's host time copying host inputs into page-locked
  /// memory, and the bytes copied: data the caller handed over rather than
  /// the run-time's own work; 0 without driver timing.
  void lastInputCopyTime(double &microseconds, uint64_t &bytes) const {
    microseconds = inputCopyMicroseconds;
    bytes = inputCopyBytes;
  }
  /// The last profiled run's time of `group`'s launches (milliseconds) and
  /// the blocks they launched (waits for the run on CUDA).
  bool groupProfile(size_t group, double &milliseconds, uint64_t &blocks,
                    RuntimeError &error);
  /// The blocks of variant `variant` of `group` resident at once on the
  /// session's GPU; on the cpu, the session's threads (each runs a block
  /// at a time).
  bool blocksPerWave(size_t group, size_t variant, int64_t &blocks,
                     RuntimeError &error) const;

  // Introspection for tests.
  size_t numThreads() const { return pool.size(); }
  /// The number of symbol tuples whose selections are memoized.
  size_t selectionMemoSize() const { return selectionMemo.size(); }
  /// The kernels the last run launched (empty grids are not launched).
  size_t launchCount() const { return launches; }
  /// How many times a variant was chosen by scanning the conditions.
  uint64_t selectionScans() const { return scans; }
  /// The arena (a device address on CUDA).
  const void *arenaData() const;
  size_t arenaCapacity() const;
  /// The last run's arena placement: the bytes it needs and the live-set
  /// peak at that run's shapes.
  const ArenaPlacement &arenaPlacement() const { return placement; }
  /// The placements the arena planner made at the last change of sizes (0:
  /// it placed as a remembered placement; ArenaPlanner::lastPlacements).
  int arenaPlacementsMade() const { return planner.lastPlacements(); }
  /// The buffers the last run sized when its inputs were bound: every
  /// buffer whose size a symbol may change, or only the inputs and outputs
  /// where the symbols are the last sizing's (computeBuffers).
  size_t buffersSizedAtBinding() const { return sizedAtBinding; }

private:
  Session(std::shared_ptr<const Model> model, unsigned threads);

  bool bindSymbols(RuntimeError &error);
  /// Checks the constraints that become decidable after bind step
  /// `readyAfter` (kAtBinding: once the inputs are bound).
  bool checkConstraints(size_t readyAfter, RuntimeError &error);
  /// Sizes the buffers whose shapes become known after bind step
  /// `readyAfter` (kAtBinding: at the start of the run, where the others are
  /// empty until then) and places the temps.
  bool computeBuffers(size_t readyAfter, RuntimeError &error);
  /// A value a launch reads: a constant, a symbol's value, or an
  /// expression's. The first two are copied out of the manifest so that a
  /// run reads no manifest structure for them.
  struct Operand {
    /// Null for a constant (`value`) or a symbol (slot `value`).
    const ShapeExpr *expr = nullptr;
    int64_t value = 0;
    bool symbol = false;
    /// An expression's entry in `evaluated`, shared by every operand of
    /// the same text.
    uint32_t expression = 0;
  };
  /// An interned expression and its value, good while `epoch` is the
  /// session's shapeEpoch.
  struct Evaluated {
    uint64_t epoch = 0;
    int64_t value = 0;
    const ShapeExpr *expr = nullptr;
  };
  /// Parameter slots a launch writes: those whose contents a shape
  /// changes. The others (constants, the weights' addresses, constant
  /// shapes) are written once, at creation.
  /// 16 bytes: a launch's fills are read in order, cold on a shape's first
  /// run.
  struct SlotFill {
    enum class Kind : uint8_t { Symbol, Expression, Address, Shape };
    Kind kind = Kind::Symbol;
    uint32_t param = 0; // The kernel's parameter, for errors.
    uint32_t slot = 0;
    /// The symbol's slot, the expression's entry in `evaluated`, or the
    /// buffer.
    uint32_t index = 0;
  };
  /// Per kernel, its fills (fills[fillBegin, fillEnd)), those of values
  /// and shapes first and its buffers' addresses from addressBegin, grid,
  /// block, dynamic shared memory and CUDA function.
  struct LaunchPlan {
    uint32_t fillBegin = 0;
    uint32_t addressBegin = 0;
    uint32_t fillEnd = 0;
    /// The kernels launched after it in its step (thenKernels[thenBegin,
    /// thenEnd)), out of the manifest.
    uint32_t thenBegin = 0;
    uint32_t thenEnd = 0;
    Operand grid[3];
    unsigned block[3] = {1, 1, 1};
    unsigned sharedBytes = 0;
    cuda::CUfunction function = nullptr;
  };
  /// Per buffer, what sizing it reads, out of the manifest: kind, element
  /// size, and its dimensions, bufferDims[dimBegin, +rank).
  struct SizedBuffer {
    uint32_t dimBegin;
    uint32_t rank;
    uint32_t port;
    uint32_t elementBytes;
    BufferKind kind;
  };
  /// Points buffer `b` (sized) at its memory, unless it is a temp.
  bool placeBuffer(size_t b, RuntimeError &error);
  /// Sizes and places staticBuffers (at creation), then writes the slots
  /// no run changes and plans the rest (fills, launchPlans).
  bool prepare(RuntimeError &error);
  /// `expr` as an operand; an expression's is interned by its text, so
  /// that a run evaluates it once.
  Operand operandOf(const ShapeExpr &expr);
  ShapeExpr::EvalStatus evaluateExpression(uint32_t expression,
                                           int64_t &value) {
    Evaluated &known = evaluated[expression];
    if (known.epoch != shapeEpoch) {
      if (ShapeExpr::EvalStatus status =
              known.expr->evaluate(symbols.data(), known.value);
          status != ShapeExpr::EvalStatus::Ok)
        return status;
      known.epoch = shapeEpoch;
    }
    value = known.value;
    return ShapeExpr::EvalStatus::Ok;
  }
  ShapeExpr::EvalStatus evaluate(const Operand &operand, int64_t &value) {
    if (operand.expr)
      return evaluateExpression(operand.expression, value);
    value = operand.symbol ? symbols[static_cast<size_t>(operand.value)]
                           : operand.value;
    return ShapeExpr::EvalStatus::Ok;
  }
  /// Starts a new shape epoch where the symbols may differ from the
  /// epoch's (always for a plan that binds symbols from data).
  void noteSymbols();
  /// Sizes `buffer` at the bound symbols (checking an input's against the
  /// shape it was given) and places it, unless it is a temp.
  bool computeBuffer(size_t buffer, RuntimeError &error);
  /// Sizes the temps' arena blocks at this run's shapes (a workspace
  /// empty where its group's selected variant does not take it); after a
  /// bind step (`afterStep`), those written by then are fixed where they
  /// are. Returns whether any block changed through `changed`.
  bool sizeTemps(size_t afterStep, bool &changed, RuntimeError &error);
  bool placeTemps(size_t afterStep, RuntimeError &error);
  /// Finds or makes this run's entry of selectionMemo (runSelections) and
  /// starts a run number.
  void beginSelections();
  /// On a shape's first run: selects the run's memoized groups and
  /// prefetches what their launches read.
  void prefetchLaunches();
  /// A bind step: reads its buffer back, binds and checks the sizes, then
  /// sizes and places what they determine.
  bool bindFromData(const StepInfo &step, size_t stepIndex,
                    RuntimeError &error);
  /// Applies Reshape's rules (0 and -1) to the sizes a bind step read.
  bool resolveReshape(const StepInfo &step, std::vector<int64_t> &values,
                      RuntimeError &error) const;
  /// Sets the device address of buffer `buffer` at this run's size (CUDA).
  bool placeOnDevice(size_t buffer, RuntimeError &error);
  /// Launches the variant `group` selects: its kernel, then the kernels
  /// after it (`then`).
  bool launch(size_t group, RuntimeError &error);
  /// One kernel over its grid; sets launchedBlocks.
  bool launchKernel(size_t kernel, RuntimeError &error);
  bool copy(const StepInfo &step, size_t stepIndex, RuntimeError &error);
  /// Enqueues the run's recorded launches and copies: by the graph of the
  /// same ones (capturing it the second time they come), else one by one.
  bool issueRecorded(RuntimeError &error);
  bool selectVariant(size_t group, size_t &kernel, RuntimeError &error);
  /// `dyncc tune`'s measurements of `group` on this session's device, or
  /// null.
  const GroupCalibration *calibrationOf(size_t group) const {
    const DeviceCalibration *device = measuredDevice();
    return device ? device->group(group) : nullptr;
  }
  /// Whether the host model selects `group`'s variant: a cpu session with
  /// the model on (readHostSelection) and no measurements of the group.
  bool hostModelSelects(size_t group) const {
    return hostModel && !calibrationOf(group) &&
           !loaded->hostModelledTiles(group).empty();
  }
  /// `dyncc tune`'s measurements on this session's device, if any.
  const DeviceCalibration *measuredDevice() const {
    return gpu ? gpu->model->calibration() : hostMeasured;
  }
  /// The variant of `measured`'s group with the least time by `dyncc
  /// tune`'s measurements at the bound symbols (pickMeasuredVariant).
  bool calibratedChoice(const GroupCalibration &measured, size_t &variant,
                        std::vector<double> *predicted = nullptr) const {
    return pickMeasuredVariant(loaded->manifest(), measured, symbols.data(),
                               variant, predicted);
  }
  bool checkInput(size_t index, const int64_t *shape, size_t rank,
                  RuntimeError &error) const;
  std::string inputDimName(size_t input, size_t dim) const;
  /// Fails with the driver's description of `status` (CUDA sessions).
  bool deviceFailure(const std::string &what, cuda::CUresult status,
                     RuntimeError &error) const;
  /// After the session's stream was synchronized: nothing of it is in
  /// flight (the copies out of pinned memory included).
  void streamDone();

  struct VectorHash {
    size_t operator()(const std::vector<int64_t> &key) const;
  };

  struct InputBinding {
    const void *data = nullptr;
    std::vector<int64_t> shape;
    bool set = false;
    bool onDevice = false;
  };

  /// A CUDA session's device state.
  struct CudaState {
    std::shared_ptr<const CudaModel> model;
    /// The driver the session calls: the model's, or with driver timing on
    /// the same entry points timed (cuda::Driver::getTimed).
    const cuda::Driver *calls = nullptr;
    const cuda::Driver &driver() const { return *calls; }
    cuda::CUstream ownStream = nullptr;
    cuda::CUstream stream = nullptr;
    cuda::CUevent start = nullptr;
    cuda::CUevent end = nullptr;
    DeviceBuffer arena;
    std::vector<DeviceBuffer> outputs;
    /// Device copies of the inputs bound to host memory.
    std::vector<DeviceBuffer> staging;
    /// Their page-locked host copies: an input bound to host memory is
    /// copied there, then to the device asynchronously (DMA at the bus's
    /// rate; a copy from pageable memory goes through the driver's own
    /// buffers, mostly synchronously). Empty where the driver has no pinned
    /// memory or an allocation of it failed (`pinnedOffReason`); the
    /// inputs are then copied from the caller's memory.
    std::vector<PinnedBuffer> pinned;
    /// Recorded after each copy out of pinned memory; a later run's first
    /// write to pinned memory waits for it (`inputsInFlight`, recorded in
    /// run `inFlightRun`).
    cuda::CUevent inputsCopied = nullptr;
    /// The input copies made out of pinned memory, all runs together.
    uint64_t pinnedCopies = 0;
    bool inputsInFlight = false;
    uint64_t inFlightRun = 0;
    cuda::CUstream inFlightStream = nullptr;
    /// Per output: whether its host copy is older than the last run.
    std::vector<uint8_t> hostStale;
    /// Profiling: an event before and after each step.
    std::vector<cuda::CUevent> stepEvents;

    /// CUDA graphs. A run's launches and copies are recorded (kernel,
    /// grid, block, shared bytes and parameter values; or the copy's
    /// addresses) instead of enqueued, then enqueued together: as the
    /// graph of the same operations where one exists, else one by one.
    struct GraphOp {
      cuda::CUfunction function = nullptr; // null: a device-to-device copy
      unsigned grid[3] = {0, 0, 0};
      unsigned block[3] = {0, 0, 0};
      unsigned sharedBytes = 0;
      uint64_t dst = 0, src = 0, bytes = 0;
      uint32_t paramBegin = 0, paramCount = 0;
      /// The kernel in the manifest, or a copy's step: for messages.
      uint32_t kernel = 0;
      bool operator==(const GraphOp &other) const {
        return function == other.function && kernel == other.kernel &&
               grid[0] == other.grid[0] &&
               grid[1] == other.grid[1] && grid[2] == other.grid[2] &&
               block[0] == other.block[0] && block[1] == other.block[1] &&
               block[2] == other.block[2] &&
               sharedBytes == other.sharedBytes && dst == other.dst &&
               src == other.src && bytes == other.bytes &&
               paramBegin == other.paramBegin &&
               paramCount == other.paramCount;
      }
    };
    /// Operations seen once (no graph yet: captured when they come again)
    /// or twice (`exec`, replayed since).
    struct Graph {
      std::vector<GraphOp> ops;
      std::vector<int64_t> params;
      cuda::CUgraphExec exec = nullptr;
      uint64_t lastUse = 0;
    };
    bool recording = false;
    /// This run's recording. A first run's is kept by moving it into
    /// `graphs`, and these take the storage of the graph it replaces (or
    /// new storage of the same capacity): a run copies its parameters
    /// once, and in a session's steady state allocates nothing.
    std::vector<GraphOp> ops;
    std::vector<int64_t> params;
    std::vector<void *> paramPointers;
    std::vector<Graph> graphs;
    uint64_t graphClock = 0, replays = 0, captures = 0;
  };
  /// Enqueues recorded operations one by one on the session's stream.
  cuda::CUresult issueDirect(const std::vector<CudaState::GraphOp> &ops,
                             const std::vector<int64_t> &params,
                             std::string &what);
  /// Why graphs are off for this session ("" if on).
  std::string graphsOffReason = "not a CUDA session";
  /// Why host inputs are copied from the caller's memory ("" if through
  /// pinned memory).
  std::string pinnedOffReason = "not a CUDA session";
  /// Whether a step binds sizes read from data in the middle of a run (the
  /// launches after it are neither memoized nor replayed as a graph).
  bool bindsFromData = false;

  std::shared_ptr<const Model> loaded;
  ThreadPool pool;
  /// A cpu session's measurements (tuningDevice's), if the artifact has
  /// them.
  const DeviceCalibration *hostMeasured = nullptr;
  /// A cpu session selecting by the host model (HostModel.h), and the
  /// host it predicts for: the session's pool threads.
  bool hostModel = false;
  cost::HostDevice host;
  std::unique_ptr<CudaState> gpu;
  std::vector<InputBinding> inputs;
  std::vector<int64_t> symbols;
  std::vector<uint8_t> symbolBound;
  /// Per buffer b, its dimensions at the last run:
  /// shapeValues[shapeBegin[b], shapeBegin[b + 1]).
  std::vector<int64_t> shapeValues;
  std::vector<size_t> shapeBegin;
  int64_t *bufferShape(size_t b) { return shapeValues.data() + shapeBegin[b]; }
  const int64_t *bufferShape(size_t b) const {
    return shapeValues.data() + shapeBegin[b];
  }
  size_t bufferRank(size_t b) const {
    return shapeBegin[b + 1] - shapeBegin[b];
  }
  std::vector<size_t> bufferBytes;
  std::vector<void *> bufferData;
  /// The buffers whose size and place no shape changes (weights, and
  /// constant-shaped temps and outputs), sized and placed when the session
  /// is created; those computeBuffers sizes at every run, when the inputs
  /// are bound; and those a bind step sizes, emptied then.
  std::vector<size_t> staticBuffers, boundBuffers, laterBuffers;
  /// boundBuffers' inputs and outputs: their data (and an input's shape)
  /// come with each run, so they are sized and placed even at the symbols
  /// of the last run.
  std::vector<size_t> boundPorts;
  /// The shape epoch of the last run whose temps were sized and placed at
  /// binding: a run in it keeps their sizes and places (computeBuffers).
  /// 0 once a forced variant changes (a workspace's bytes may).
  uint64_t sizedEpoch = 0;
  size_t sizedAtBinding = 0;
  /// The temps, in manifest order (arenaBlocks' order).
  std::vector<size_t> tempBuffers;
  std::vector<AlignedBuffer> outputs;
  AlignedBuffer arena;
  /// The temps in manifest order, with the last run's sizes, and their
  /// placement.
  std::vector<ArenaBlock> arenaBlocks;
  ArenaPlacement placement;
  ArenaPlanner planner;
  bool arenaPlanned = false;
  /// Per tuple of the symbols the inputs bind, the kernel each group ran
  /// (kNotSelected until it has): one look-up a run, then an index a
  /// launch. Groups launched after a bind step (which may select by a
  /// symbol read from data) are selected at each launch instead.
  std::unordered_map<std::vector<int64_t>, std::vector<uint32_t>, VectorHash>
      selectionMemo;
  /// This run's entry of selectionMemo.
  std::vector<uint32_t> *runSelections = nullptr;
  /// Per selection class (Model::selectionClass), the variant picked in
  /// run `classRun` (the run of that number: one look-up a run per class).
  std::vector<uint32_t> classPick;
  std::vector<uint64_t> classRun;
  uint64_t runNumber = 0;
  std::vector<int64_t> selectionKey;
  /// Whether this run's selections are new (beginSelections), and the
  /// kernels prefetchLaunches selected.
  bool newSelections = false;
  std::vector<uint32_t> prefetched;
  /// The symbols the inputs bind (the memo's key), and per group whether
  /// its selection is memoized.
  std::vector<size_t> inputSymbols;
  std::vector<uint8_t> memoizedGroup;
  /// Per group, the index of the last kernel run, or SIZE_MAX.
  std::vector<size_t> lastKernel;
  /// Per temp (in tempBuffers' order): for a workspace, the group whose
  /// step uses it and the kernels that lead the variants taking it.
  struct Workspace {
    size_t group = SIZE_MAX;
    std::vector<size_t> leads;
    /// Whether the group selects at binding (isSelectable at kAtBinding:
    /// no key symbol is bound from data), as a run's sizing asks.
    bool selectableAtBinding = false;
  };
  std::vector<Workspace> workspaces;
  mutable std::string reason;
  /// Per kernel, the parameter slots and the pointers to them.
  std::vector<std::vector<int64_t>> slots;
  std::vector<std::vector<void *>> slotPointers;
  std::vector<SlotFill> fills;
  std::vector<uint32_t> thenKernels;
  /// The symbols' values are the same as long as shapeEpoch is: an
  /// expression is evaluated once an epoch (`evaluated`, per interned
  /// expression), and a kernel launched again in the same epoch rewrites
  /// only its buffers' addresses, its values, shapes and grid kept
  /// (launchEpochs, launchGrids).
  uint64_t shapeEpoch = 1;
  std::vector<int64_t> epochSymbols;
  std::vector<Evaluated> evaluated;
  std::unordered_map<std::string, uint32_t> expressionIndex;
  std::vector<uint64_t> launchEpochs;
  std::vector<std::array<uint64_t, 3>> launchGrids;
  std::vector<SizedBuffer> sizedBuffers;
  std::vector<Operand> bufferDims;
  std::vector<LaunchPlan> launchPlans;
  uint64_t scans = 0;
  size_t launches = 0;
  bool ran = false;
  /// Per group, the variant forceVariant set, or -1.
  std::vector<int64_t> forced;
  bool profiling = false;
  bool driverTiming = false;
  double driverMicroseconds = 0;
  uint64_t driverCalls = 0;
  double inputCopyMicroseconds = 0;
  uint64_t inputCopyBytes = 0;
  /// Whether the last run was profiled; per step, its time (CPU sessions;
  /// CUDA reads its events) and blocks launched.
  bool profiled = false;
  std::vector<double> stepMilliseconds;
  std::vector<uint64_t> stepBlocks;
  /// The blocks the last launch() launched.
  uint64_t launchedBlocks = 0;
};

} // namespace dyncc::runtime

#endif // DYNCC_LIB_RUNTIME_EXECUTOR_H
