//===- Compiler.cpp - ONNX model to .dyncc artifact -----------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs the stages of docs/Pipeline.md in order: import, shapes, fusion,
// outlining (graph module), then on a separate kernel module tiling and
// bufferization, and per target family GPU (NVVM -> PTX per chip) and CPU
// (LLVM -> shared object), then the host plan and the package.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Pipelines/Compiler.h"
#include "dyncc/Dialect/Dg/Transforms/FusionReport.h"

#include "dyncc/CostModel/Device.h"
#include "dyncc/CostModel/Host.h"
#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "dyncc/InitAll.h"
#include "dyncc/Pipelines/Pipelines.h"
#include "dyncc/Plan/HostPlan.h"
#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/Manifest.h"
#include "dyncc/Target/HostObject.h"
#include "dyncc/Target/Ptx.h"
#include "dyncc/Target/Ptxas.h"
#include "dyncc/Tiling/TileConfig.h"
#include "dyncc/Tiling/TileSearch.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace mlir;
using namespace dyncc;

const std::vector<std::string> &dyncc::getSupportedTargets() {
  static const std::vector<std::string> targets = {
      "cpu",   "cpu-x86-64-v3", "cpu-x86-64-v4", "sm_80",
      "sm_86", "sm_90",         "sm_90a"};
  return targets;
}

namespace {

/// `text` cut to at most `limit` characters by dropping its middle: a
/// run-time message quotes the offending expression first and says what is
/// wrong with it last.
std::string abbreviate(const std::string &text, size_t limit) {
  if (text.size() <= limit)
    return text;
  size_t half = (limit - 5) / 2;
  return text.substr(0, half) + " ... " + text.substr(text.size() - half);
}

class Compilation {
public:
  Compilation(const CompileOptions &options, llvm::raw_ostream &emitStream,
              std::string &error)
      : options(options), emitStream(emitStream), error(error) {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    // Keep the first error as the one-line message.
    handler = std::make_unique<ScopedDiagnosticHandler>(
        &context, [&](Diagnostic &diag) {
          // The message, prefixed with the ONNX node it comes from.
          auto text = [&] {
            std::string text;
            llvm::raw_string_ostream os(text);
            os << diag;
            if (auto name = getNodeName(diag.getLocation()))
              text = "node '" + *name + "': " + text;
            return text;
          };
          // Warnings (a config that does not fit) are notes to the user.
          if (diag.getSeverity() == DiagnosticSeverity::Warning)
            note(text());
          if (diag.getSeverity() == DiagnosticSeverity::Error) {
            std::lock_guard<std::mutex> lock(errorMutex);
            if (this->error.empty())
              this->error = text();
          }
          return success();
        });
  }

  /// Copies attribute `name` of every kernel in `from` (functions or GPU
  /// kernels, nested or not) to the graph's function of the same name,
  /// which the host plan reads.
  static void copyKernelAttrToGraph(ModuleOp from, ModuleOp graph,
                                    StringRef name) {
    from->walk([&](FunctionOpInterface func) {
      if (Attribute value = func->getAttr(name))
        if (auto original = graph.lookupSymbol<func::FuncOp>(func.getName()))
          original->setAttr(name, value);
    });
  }

  /// Returns true when the compilation is finished (emitted or failed).
  bool run() {
    if (!checkOptions())
      return false;
    registerAllPasses();

    // 1. Import.
    startStage("import");
    std::string importError;
    FailureOr<ImportResult> imported = importOnnxModel(
        context, options.inputPath, options.import, importError);
    if (failed(imported))
      return fail(importError);
    for (const std::string &text : imported->notes)
      note(text);
    OwningOpRef<ModuleOp> graph = std::move(imported->module);
    if (failed(verify(*graph)))
      return false;
    if (endStage("import", *graph))
      return true;

    // 2-4. Graph stages.
    if (!runStage("shapes", *graph, buildShapePipeline))
      return false;
    if (options.dumpSymbols)
      dumpSymbolTable(*graph);
    if (stopped)
      return true;
    // A conv tile config given keeps convs direct, where it applies.
    std::string im2col = options.im2col;
    if (im2col == "auto" &&
        llvm::any_of(options.tileConfigs, [](StringRef config) {
          return config.split('=').first == "conv";
        }))
      im2col = "never";
    if (!runStage("fused", *graph,
                  [&](OpPassManager &pm) {
                    return buildFusionPipeline(pm, device->name, im2col);
                  }) ||
        stopped)
      return !failedFlag;
    if (isStage("fusion-report")) {
      dg::printFusionReport(*graph, emitStream);
      return true;
    }
    if (!runStage("outlined", *graph,
                  [&](OpPassManager &pm) {
                    return buildOutlinePipeline(pm, options.tileConfigs);
                  }) ||
        stopped)
      return !failedFlag;

    // The tile search, except for the kinds whose configuration was given.
    std::vector<std::string> givenKinds;
    for (StringRef config : options.tileConfigs)
      givenKinds.push_back(config.split('=').first.str());
    // The searches of distinct problems run in parallel (parallelFor over
    // the context's threads); the other stages keep one thread.
    context.enableMultithreading(true);
    // An artifact only for the host searches its f32 GEMMs for the host's
    // builds, unless a device was asked for.
    std::vector<std::string> hostLevels;
    if (options.device.empty() &&
        llvm::all_of(targets, [](const std::string &t) { return t == "cpu"; }))
      hostLevels = hostIsas;
    bool searched = runStage("searched", *graph, [&](OpPassManager &pm) {
      return buildSearchPipeline(pm, device->name, options.variantCap,
                                 options.regretTarget, givenKinds,
                                 getSharedBytesBudget(targets), hostLevels);
    });
    context.enableMultithreading(false);
    if (!searched || stopped)
      return !failedFlag;

    // The host plan reads the graph; kernels continue in their own module.
    OwningOpRef<ModuleOp> kernels = extractKernels(*graph);
    int64_t sharedBytes = getSharedBytesBudget(targets);
    if (!runStage("tiled", *kernels,
                  [&](OpPassManager &pm) {
                    return buildTilingPipeline(pm, sharedBytes);
                  }) ||
        stopped)
      return !failedFlag;
    // Tiling decides the launch grid; the plan reads it from the graph.
    copyKernelAttrToGraph(*kernels, *graph, getGridAttrName());
    if (!runStage("bufferized", *kernels,
                  [&](OpPassManager &pm) {
                    return buildBufferizationPipeline(pm, sharedBytes);
                  }) ||
        stopped)
      return !failedFlag;

    std::vector<std::string> chips;
    bool cpu = false;
    for (const std::string &t : targets) {
      if (t == "cpu")
        cpu = true;
      else
        chips.push_back(t);
    }
    // Each GPU target's PTX chip (getPtxChip), by target: what the ptx stage
    // reports, ptxas assembles and the plan's code entries name.
    std::map<std::string, std::string> ptxChips;
    for (const std::string &chip : chips)
      ptxChips[chip] = getPtxChip(chip, chips);

    // The back end runs on several threads where no stage of it is emitted
    // or stopped after: the host path (cpu, llvm, host-object) beside the
    // GPU path, which share the kernels and the context only, and each
    // chip's PTX and cubin beside the other chips'. The context then
    // uniques under its locks; the host path's stage times are reported
    // once both paths are done.
    threaded = options.emitStage.empty() && options.stopAfter.empty() &&
               ((cpu && !chips.empty()) || chips.size() > 1);
    HostJob hostJob;
    std::thread hostThread;
    struct Joiner {
      std::thread &thread;
      MLIRContext &context;
      bool threaded;
      ~Joiner() {
        if (thread.joinable())
          thread.join();
        if (threaded)
          context.enableMultithreading(false);
      }
    } joiner{hostThread, context, threaded};
    if (threaded) {
      initializeTargets();
      context.enableMultithreading(true);
    }
    if (threaded && cpu && !chips.empty()) {
      hostJob.module = kernels->clone();
      hostThread = std::thread([this, &hostJob] {
        hostJob.ok = compileHost(*hostJob.module, hostJob.objects, &hostJob);
      });
    }

    std::map<std::string, std::string> ptx;
    if (!chips.empty() || isStage("gpu") || isStage("nvvm") || isStage("ptx")) {
      if (chips.empty())
        return fail("--emit=" + options.emitStage +
                    " needs a GPU target in --target");
      OwningOpRef<ModuleOp> gpu = kernels->clone();
      if (!runStage("gpu", *gpu, buildGpuMappingPipeline) || stopped)
        return !failedFlag;
      if (!runStage("nvvm", *gpu,
                    [&](OpPassManager &pm) {
                      return buildNvvmLoweringPipeline(pm, getPtxChips(chips),
                                                       sharedBytes);
                    }) ||
          stopped)
        return !failedFlag;
      // The dynamic shared memory a launch passes (after
      // dyncc-overlap-shared-accumulators); the plan reads it from the
      // graph.
      copyKernelAttrToGraph(*gpu, *graph, getDynamicSharedBytesAttrName());
      startStage("ptx");
      FailureOr<std::map<std::string, std::string>> collected =
          translateToPtx(*gpu);
      if (failed(collected))
        return false;
      ptx = std::move(*collected);
      if (isStage("ptx")) {
        for (const auto &[chip, text] : ptx)
          emitStream << "// ---- " << chip << " ----\n" << text;
        return true;
      }
      std::string served;
      if (ptx.size() < chips.size())
        for (const auto &[chip, text] : ptx) {
          std::string targets;
          for (const std::string &target : chips)
            if (ptxChips.at(target) == chip)
              targets += (targets.empty() ? "" : ", ") + target;
          served += ", " + chip + "'s for " + targets;
        }
      endStage("ptx", {},
               std::to_string(ptx.size()) + " PTX module" +
                   (ptx.size() == 1 ? "" : "s") +
                   (threaded && ptx.size() > 1 ? ", side by side" : "") +
                   served);
      if (stopped)
        return !failedFlag;
      if (!assemble(ptxChips, ptx))
        return false;
      if (!refineSearch(*graph))
        return false;
    }

    std::vector<std::string> hostObjects;
    if (hostThread.joinable()) {
      hostThread.join();
      for (const HostJob::Stage &stage : hostJob.stages)
        if (options.progress) {
          options.progress(stage.name, false, 0, "");
          options.progress(stage.name, true, stage.seconds, stage.detail);
        }
      if (!hostJob.ok)
        return fail(hostJob.error);
      hostObjects = std::move(hostJob.objects);
    } else if (cpu || isStage("cpu") || isStage("llvm")) {
      if (!cpu)
        return fail("--emit=" + options.emitStage +
                    " needs the cpu target in --target");
      OwningOpRef<ModuleOp> host = kernels->clone();
      if (!compileHost(*host, hostObjects, nullptr))
        return !failedFlag;
    }

    // Plan and package.
    startStage("plan");
    PlanOptions planOptions;
    planOptions.targets = targets;
    planOptions.hostIsas = hostIsas;
    planOptions.ptxChips = ptxChips;
    planOptions.producer = "dyncc 0.1.0";
    planOptions.cubins = cubinInfo;
    FailureOr<HostPlan> plan = buildHostPlan(*graph, planOptions);
    if (failed(plan))
      return fail("");
    if (isStage("plan")) {
      // Indented for reading; the artifact's is compact.
      llvm::Expected<llvm::json::Value> value =
          llvm::json::parse(plan->manifest);
      if (!value)
        return fail("the plan is not JSON (" +
                    llvm::toString(value.takeError()) + ")");
      emitStream << llvm::formatv("{0:2}", *value) << "\n";
      return true;
    }
    // Never write an artifact the run-time would refuse to load.
    {
      runtime::Manifest parsed;
      std::string manifestError;
      if (!runtime::parseManifest(plan->manifest, parsed, manifestError))
        return fail("the plan is not one the run-time can load (" +
                    abbreviate(manifestError, 400) + ")");
    }
    endStage("plan", {}, std::to_string(kernelNames.size()) + " kernels");

    startStage("package");
    runtime::ArtifactWriter writer;
    writer.setManifest(plan->manifest);
    for (auto &[name, bytes] : plan->weights)
      writer.addSection(name, std::move(bytes));
    for (size_t i = 0; i < hostObjects.size(); ++i)
      writer.addSection(getHostCodeSection(hostIsas, i),
                        std::move(hostObjects[i]));
    for (auto &[chip, text] : ptx)
      writer.addSection("ptx." + chip, std::move(text));
    for (auto &[chip, bytes] : cubins)
      writer.addSection(cubinInfo[chip].section, std::move(bytes));
    std::string writeError;
    if (!writer.write(options.outputPath, writeError))
      return fail(writeError);
    endStage("package", {}, options.outputPath);
    return true;
  }

private:
  /// The host path run on a thread of its own: its module, its results,
  /// and its stages' times for run() to report.
  struct HostJob {
    struct Stage {
      std::string name;
      double seconds;
      std::string detail;
    };
    OwningOpRef<ModuleOp> module;
    std::vector<std::string> objects;
    std::string error;
    std::vector<Stage> stages;
    bool ok = false;
  };

  /// The cpu, llvm and host-object stages on `host`, a shared object per
  /// level of hostIsas into `objects`. With `job` (on its own thread) the
  /// stages are timed into it and a failure's message goes to its `error`;
  /// without, they are reported as they end and may be emitted or stopped after
  /// (false with `stopped` set).
  bool compileHost(ModuleOp host, std::vector<std::string> &objects,
                   HostJob *job) {
    auto stage = [&](const std::string &name,
                     llvm::function_ref<LogicalResult(OpPassManager &)> build) {
      if (!job)
        return runStage(name, host, build) && !stopped;
      auto start = std::chrono::steady_clock::now();
      PassManager pm(&context);
      if (failed(build(pm)) || failed(pm.run(host)))
        return false;
      job->stages.push_back({name, secondsSince(start), ""});
      return true;
    };
    if (!stage("cpu", buildCpuMappingPipeline) ||
        !stage("llvm", buildCpuLoweringPipeline))
      return false;
    auto start = std::chrono::steady_clock::now();
    if (!job)
      startStage("host-object");
    std::string objectError;
    std::optional<std::vector<std::string>> emitted =
        emitHostSharedObjects(host, kernelNames, hostIsas, objectError);
    if (!emitted) {
      if (job)
        job->error = objectError;
      else
        fail(objectError);
      return false;
    }
    objects = std::move(*emitted);
    std::string detail;
    for (size_t i = 0; i < objects.size(); ++i)
      detail += (i ? ", " : "") + std::to_string(objects[i].size()) + " bytes" +
                (hostIsas.size() > 1 ? " " + hostIsas[i] : "");
    if (job)
      job->stages.push_back(
          {"host-object", secondsSince(start), detail + ", beside the GPU's"});
    else
      endStage("host-object", {}, detail);
    return true;
  }

  /// The PTX of each chip of `gpu` (after the nvvm stage). Where the back
  /// end is threaded and targets several chips, each chip's is translated
  /// from a clone of its own that targets only it, side by side: the pass
  /// translates a module's targets one after another, and NVPTX's code
  /// generation of each is single-threaded.
  FailureOr<std::map<std::string, std::string>> translateToPtx(ModuleOp gpu) {
    std::vector<std::string> targetChips;
    gpu.walk([&](gpu::GPUModuleOp module) {
      if (ArrayAttr targets = module.getTargetsAttr())
        for (Attribute target : targets)
          if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target))
            if (!llvm::is_contained(targetChips, nvvm.getChip().str()))
              targetChips.push_back(nvvm.getChip().str());
    });
    if (!threaded || targetChips.size() < 2) {
      if (failed(runPipeline(gpu, buildPtxPipeline)))
        return failure();
      return collectPtx(gpu);
    }
    size_t count = targetChips.size();
    std::vector<OwningOpRef<ModuleOp>> clones;
    for (const std::string &chip : targetChips) {
      OwningOpRef<ModuleOp> clone = gpu.clone();
      clone->walk([&](gpu::GPUModuleOp module) {
        SmallVector<Attribute> kept;
        if (ArrayAttr targets = module.getTargetsAttr())
          for (Attribute target : targets)
            if (auto nvvm = dyn_cast<NVVM::NVVMTargetAttr>(target))
              if (nvvm.getChip() == chip)
                kept.push_back(target);
        module.setTargetsAttr(ArrayAttr::get(&context, kept));
      });
      clones.push_back(std::move(clone));
    }
    std::vector<std::optional<std::map<std::string, std::string>>> results(
        count);
    auto translate = [&](size_t i) {
      PassManager pm(&context);
      if (failed(buildPtxPipeline(pm)) || failed(pm.run(*clones[i])))
        return;
      FailureOr<std::map<std::string, std::string>> ptx =
          collectPtx(*clones[i]);
      if (succeeded(ptx))
        results[i] = std::move(*ptx);
    };
    std::vector<std::thread> threads;
    for (size_t i = 1; i < count; ++i)
      threads.emplace_back(translate, i);
    translate(0);
    for (std::thread &thread : threads)
      thread.join();
    std::map<std::string, std::string> ptx;
    for (std::optional<std::map<std::string, std::string>> &result : results) {
      if (!result) {
        fail("");
        return failure();
      }
      ptx.merge(*result);
    }
    return ptx;
  }

  static double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  }

  /// The LLVM targets both paths use, registered before they run side by
  /// side (registering one appends to LLVM's list of targets).
  static void initializeTargets() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  }

  bool checkOptions() {
    const std::vector<std::string> &supported = getSupportedTargets();
    for (const std::string &t : options.targets)
      if (!llvm::is_contained(supported, t)) {
        std::string expected;
        for (size_t i = 0; i < supported.size(); ++i)
          expected += (i == 0                      ? ""
                       : i + 1 == supported.size() ? " or "
                                                   : ", ") +
                      supported[i];
        return fail("unknown target '" + t + "' (expected " + expected + ")");
      }
    if (options.targets.empty())
      return fail("--target is empty");
    // The host targets are one `cpu` target of several levels: the
    // portable build, and one per level asked for (the run-time loads the
    // highest its processor runs).
    std::string portable = getPortableHostIsa();
    for (const std::string &t : options.targets) {
      StringRef name(t);
      if (!name.consume_front("cpu")) {
        if (!llvm::is_contained(targets, t))
          targets.push_back(t);
        continue;
      }
      if (hostIsas.empty()) {
        targets.push_back("cpu");
        hostIsas.push_back(portable);
      }
      if (name.consume_front("-")) {
        if (portable != "x86-64-v2")
          return fail("target '" + t + "' needs an x86-64 host: this " +
                      "compiler's host code is for " +
                      llvm::sys::getDefaultTargetTriple());
        if (!llvm::is_contained(hostIsas, name.str()))
          hostIsas.push_back(name.str());
      }
    }
    if (options.im2col != "auto" && options.im2col != "always" &&
        options.im2col != "never" && options.im2col != "per-image" &&
        options.im2col != "folded")
      return fail("--im2col must be auto, always, never, per-image or "
                  "folded, got '" +
                  options.im2col + "'");
    if (options.variantCap < 1)
      return fail("--max-variants must be at least 1, got " +
                  std::to_string(options.variantCap));
    if (!(options.regretTarget >= 0 && options.regretTarget < 10))
      return fail("--regret-target must be in [0, 10), got " +
                  std::to_string(options.regretTarget));
    // The search's device: the one asked for, which a GPU target must
    // run, or the newest GPU target's.
    std::string newest;
    for (const std::string &t : targets)
      if (t != "cpu" && t > newest)
        newest = t;
    std::string name = !options.device.empty() ? options.device
                       : !newest.empty()      ? newest
                                              : "h100";
    device = cost::lookupDevice(name);
    if (!device)
      return fail("unknown device '" + name +
                  "' for --device (expected a100, rtx3090, h100, h200, "
                  "sm_80, sm_86 or sm_90)");
    if (!newest.empty() && llvm::none_of(targets, [&](const std::string &t) {
          return runsDevice(t);
        }))
      return fail("--device " + name + " is " + device->arch +
                  ", which is not among --target");
    if (!options.emitStage.empty() &&
        llvm::none_of(getCompileStages(), [&](const StageInfo &s) {
          return options.emitStage == s.name;
        }))
      return fail("unknown stage '" + options.emitStage +
                  "' for --emit (see --help)");
    if (!options.stopAfter.empty() &&
        llvm::none_of(getCompileStages(), [&](const StageInfo &s) {
          return options.stopAfter == s.name;
        }))
      return fail("unknown stage '" + options.stopAfter +
                  "' for --stop-after (see --help)");
    if (options.emitStage.empty() && options.stopAfter.empty() &&
        options.outputPath.empty())
      return fail("no output file: pass -o OUT.dyncc");
    return true;
  }

  /// Assembles the PTX of each chip of `ptxChips` (its PTX chip's text in
  /// `ptx`) with ptxas (per options.ptxas) into `cubins`, recording every
  /// kernel's resources in `cubinInfo`.
  bool assemble(const std::map<std::string, std::string> &ptxChips,
                const std::map<std::string, std::string> &ptx) {
    // A model without kernels (a constant's) has no PTX to assemble.
    if (options.ptxas == "off" || ptx.empty())
      return true;
    std::optional<std::string> ptxas;
    if (options.ptxas == "auto") {
      ptxas = findPtxas();
      if (!ptxas) {
        note("ptxas not found (set CUDA_HOME): the artifact "
             "carries PTX only, without resource reports");
        return true;
      }
    } else {
      if (!llvm::sys::fs::can_execute(options.ptxas))
        return fail("--ptxas: '" + options.ptxas + "' is not an executable");
      ptxas = options.ptxas;
    }
    startStage("ptxas");
    // Each chip's ptxas is a process of its own: side by side where the back
    // end is threaded. The first chip's error (by name) is the one reported.
    // Each chip's outputs, found before the threads start.
    struct Job {
      const std::string *chip;
      const std::string *text;
      std::string *cubin;
      PlanOptions::Cubin *info;
      std::string error;
    };
    std::vector<Job> jobs;
    for (const auto &[chip, ptxChip] : ptxChips) {
      auto text = ptx.find(ptxChip);
      if (text == ptx.end())
        return fail("no PTX was translated for " + chip);
      PlanOptions::Cubin &info = cubinInfo[chip];
      info.section = "cubin." + chip;
      jobs.push_back({&chip, &text->second, &cubins[chip], &info, ""});
    }
    auto run = [&](size_t i) {
      Job &job = jobs[i];
      if (!assemblePtx(*ptxas, *job.chip, *job.text, *job.cubin,
                       job.info->resources, job.error) &&
          job.error.empty())
        job.error = "ptxas failed for " + *job.chip;
    };
    if (threaded && jobs.size() > 1) {
      std::vector<std::thread> threads;
      for (size_t i = 1; i < jobs.size(); ++i)
        threads.emplace_back(run, i);
      run(0);
      for (std::thread &thread : threads)
        thread.join();
    } else {
      for (size_t i = 0; i < jobs.size(); ++i) {
        run(i);
        if (!jobs[i].error.empty())
          break;
      }
    }
    size_t count = 0;
    for (const Job &job : jobs) {
      if (!job.error.empty())
        return fail(job.error);
      count += job.info->resources.size();
    }
    endStage("ptxas", {},
             std::to_string(count) + " kernels assembled to cubins");
    return true;
  }

  /// After ptxas: the search again with the kernels' real registers on the
  /// searched device's target, without the variants that spill there.
  bool refineSearch(ModuleOp graph) {
    std::vector<const PlanOptions::Cubin *> reports;
    for (const auto &[chip, info] : cubinInfo)
      if (runsDevice(chip))
        reports.push_back(&info);
    if (reports.empty())
      return true;
    auto compiled = [&](StringRef name) -> std::optional<CompiledKernel> {
      std::optional<CompiledKernel> result;
      for (const PlanOptions::Cubin *info : reports) {
        auto found = info->resources.find(name.str());
        if (found == info->resources.end())
          continue;
        const KernelResources &r = found->second;
        // The worst over the device's targets (sm_90 and sm_90a), each
        // resource on its own.
        if (!result)
          result = CompiledKernel{};
        result->registers = std::max(result->registers, r.registers);
        result->sharedBytes = std::max(result->sharedBytes, r.sharedBytes);
        result->spillBytes = std::max(
            result->spillBytes, r.spillStoreBytes + r.spillLoadBytes);
      }
      return result;
    };
    auto noteText = [&](const std::string &text) { note(text); };
    if (failed(refineVariantSelections(graph, compiled, noteText)))
      return fail("");
    return true;
  }

  static std::optional<std::string> getNodeName(Location loc) {
    if (auto name = dyn_cast<NameLoc>(loc))
      return name.getName().str();
    if (auto fused = dyn_cast<FusedLoc>(loc))
      for (Location l : fused.getLocations())
        if (auto name = getNodeName(l))
          return name;
    return std::nullopt;
  }

  bool isStage(StringRef name) const { return options.emitStage == name; }

  /// One line per symbol with its facts, then the run-time constraints.
  void dumpSymbolTable(ModuleOp module) {
    emitStream << "symbols:\n";
    for (auto symbol : module.getOps<sym::SymbolOp>()) {
      emitStream << "  " << symbol.getSymName() << " in ["
                 << (int64_t)symbol.getMin() << ", " << (int64_t)symbol.getMax()
                 << "]";
      if (std::optional<uint64_t> d = symbol.getDivisor())
        emitStream << " divisor " << *d;
      if (std::optional<uint64_t> l = symbol.getLikely())
        emitStream << " likely " << *l;
      if (symbol.getDataDependent()) {
        emitStream << " data-dependent";
        if (auto by = symbol->getAttrOfType<StringAttr>("defined_by"))
          emitStream << ", bound at run time by " << by.getValue();
      }
      emitStream << "\n";
    }
    emitStream << "constraints:\n";
    for (auto c : module.getOps<sym::ConstraintOp>())
      emitStream << "  " << c.getLhs().getCanonical()
                 << " == " << c.getRhs().getCanonical() << "  ("
                 << c.getReason() << ")\n";
  }

  /// Passes a note to the caller, one at a time: the back end's threads
  /// may each have one.
  void note(const std::string &text) {
    std::lock_guard<std::mutex> lock(noteMutex);
    if (options.note)
      options.note(text);
  }

  bool fail(const std::string &message) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (!message.empty() || error.empty())
      error = message.empty() ? "compilation failed" : message;
    failedFlag = true;
    return false;
  }

  LogicalResult verify(ModuleOp module) {
    if (failed(mlir::verify(module))) {
      fail("");
      return failure();
    }
    return success();
  }

  void startStage(const std::string &name) {
    stageStart = std::chrono::steady_clock::now();
    if (options.progress)
      options.progress(name, false, 0, "");
  }

  /// Ends a stage; returns true (and prints) when it is the --emit stage.
  bool endStage(const std::string &name, ModuleOp module,
                const std::string &detail = "") {
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - stageStart)
                         .count();
    if (options.progress)
      options.progress(name, true, seconds, detail);
    if (options.stopAfter == name) {
      stopped = true;
      return true;
    }
    if (isStage(name) && module) {
      // Weights are elided: the IR is for reading.
      module.print(emitStream, OpPrintingFlags()
                                   .elideLargeElementsAttrs(16)
                                   .elideLargeResourceString(64));
      emitStream << "\n";
      stopped = true;
      return true;
    }
    return false;
  }

  LogicalResult
  runPipeline(ModuleOp module,
              llvm::function_ref<LogicalResult(OpPassManager &)> build) {
    PassManager pm(&context);
    if (failed(build(pm)) || failed(pm.run(module))) {
      fail("");
      return failure();
    }
    return success();
  }

  bool runStage(const std::string &name, ModuleOp module,
                llvm::function_ref<LogicalResult(OpPassManager &)> build) {
    startStage(name);
    if (failed(runPipeline(module, build)))
      return false;
    std::string detail;
    if (name == "fused" || name == "outlined") {
      unsigned groups = 0;
      module.walk([&](Operation *op) {
        groups += op->getName().getStringRef() == "dg.fusion" ||
                  op->getName().getStringRef() == "dg.dispatch";
      });
      detail = std::to_string(groups) + " groups";
    }
    if (name == "searched") {
      std::set<std::string> gemms, hostGemms, convs, rows, variants;
      module.walk([&](dg::DispatchOp dispatch) {
        auto select = dispatch->getAttrOfType<DictionaryAttr>(
            getVariantSelectAttrName());
        auto refs = select ? select.getAs<ArrayAttr>("variants") : nullptr;
        if (!refs)
          return;
        auto model = select.getAs<StringAttr>("model");
        if (auto searched = select.getAs<StringAttr>("device");
            searched && !cost::getHostSearchLevel(searched.str()).empty())
          hostGemms.insert(dispatch.getCallee().str());
        (!model                       ? gemms
         : model.getValue() == "conv" ? convs
                                      : rows)
            .insert(dispatch.getCallee().str());
        for (Attribute ref : refs)
          variants.insert(cast<FlatSymbolRefAttr>(ref).getValue().str());
      });
      detail = std::to_string(gemms.size()) + " GEMM, " +
               std::to_string(convs.size()) + " conv and " +
               std::to_string(rows.size()) + " row-wise kernels, " +
               std::to_string(variants.size()) + " variants for " +
               (hostGemms.empty() ? device->name
                : hostGemms.size() == gemms.size()
                    ? "the host's builds (GEMMs) and " + device->name
                    : "the host's builds (" + std::to_string(hostGemms.size()) +
                          " GEMMs) and " + device->name);
    }
    endStage(name, module, detail);
    return true;
  }

  /// A module with clones of the kernel functions only.
  OwningOpRef<ModuleOp> extractKernels(ModuleOp graph) {
    OpBuilder builder(&context);
    OwningOpRef<ModuleOp> kernels = ModuleOp::create(graph.getLoc());
    builder.setInsertionPointToEnd(kernels->getBody());
    for (auto func : graph.getOps<func::FuncOp>())
      if (func->hasAttr("dyncc.kernel")) {
        builder.clone(*func);
        kernelNames.push_back(func.getSymName().str());
      }
    return kernels;
  }

  const CompileOptions &options;
  llvm::raw_ostream &emitStream;
  std::string &error;
  MLIRContext context{MLIRContext::Threading::DISABLED};
  std::unique_ptr<ScopedDiagnosticHandler> handler;
  /// Guards `error`: the host path's thread may fail beside the GPU's.
  std::mutex errorMutex;
  /// Orders the notes of the back end's threads (note()).
  std::mutex noteMutex;
  std::chrono::steady_clock::time_point stageStart;
  /// Whether target `chip` (sm_90, sm_90a, ...) is the searched device's
  /// architecture.
  bool runsDevice(StringRef chip) const {
    return chip.substr(0, 5) == device->arch;
  }

  /// The device the tile search predicts for (checkOptions).
  const cost::Device *device = nullptr;
  /// --target with the host's levels as one `cpu` (checkOptions), and
  /// those levels, the portable one first.
  std::vector<std::string> targets;
  std::vector<std::string> hostIsas;
  std::vector<std::string> kernelNames;
  std::map<std::string, std::string> cubins;
  std::map<std::string, PlanOptions::Cubin> cubinInfo;
  bool stopped = false;
  bool failedFlag = false;
  /// Whether the back end runs on several threads (run()).
  bool threaded = false;
};

} // namespace

bool dyncc::compileModel(const CompileOptions &options,
                         llvm::raw_ostream &emitStream, std::string &error) {
  error.clear();
  Compilation compilation(options, emitStream, error);
  return compilation.run();
}
