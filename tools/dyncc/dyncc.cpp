//===- dyncc.cpp - The dyncc driver ---------------------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   dyncc compile MODEL.onnx -o OUT.dyncc [--target LIST] [--dim NAME=MIN:MAX]
//                 [--emit=STAGE] [--quiet]
//   dyncc run OUT.dyncc [--dim NAME=VALUE ...] [--input NAME=FILE.npy ...]
//             [--seed N] [--output-dir DIR]
//
//===----------------------------------------------------------------------===//

#include "Explain.h"
#include "dyncc/Pipelines/Compiler.h"
#include "dyncc/Pipelines/Pipelines.h"
#include "dyncc/Runtime/Npy.h"
#include "dyncc/Runtime/RunTool.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace dyncc;

static void printUsage(llvm::raw_ostream &os) {
  os << "usage:\n"
        "  dyncc compile MODEL.onnx -o OUT.dyncc [options]\n"
        "  dyncc run OUT.dyncc [--dim NAME=VALUE ...] [--input NAME=FILE.npy "
        "...]\n"
        "            [--seed N] [--output-dir DIR] [--device cpu|cuda:N]\n"
        "            [--repeat N] [-v] [--quiet]\n"
        "  dyncc bench OUT.dyncc [--dim NAME=LO:HI|NAME=VALUE ...] [--points "
        "N]\n"
        "            [--repeat N] [--device cpu|cuda:N] [--plot FILE.svg]\n"
        "            times a sweep of shapes: cold and warm runs, device "
        "time,\n"
        "            host time per launch\n"
        "  dyncc tune OUT.dyncc [--device cuda:N|cpu] [-o FILE] [--repeat N]\n"
        "            measures each variant on the GPU (or the host) and "
        "stores the\n"
        "            measurements in the artifact; sessions there then select "
        "by them\n"
        "  dyncc explain OUT.dyncc [--plot FILE.svg] [--tree]\n"
        "            per group: its tile variants and resources, and where the "
        "tile\n"
        "            search's table picks each, with predicted TFLOP/s; "
        "tables\n"
        "            of three or more keys are summarized unless --tree\n"
        "\n"
        "compile options:\n"
        "  -o FILE                 the artifact to write (atomically)\n"
        "  --target LIST           comma-separated, from cpu, cpu-x86-64-v3, "
        "cpu-x86-64-v4,\n"
        "                          sm_80, sm_86, sm_90, sm_90a (default "
        "cpu,sm_80,sm_90);\n"
        "                          cpu-LEVEL adds host code for AVX2 (v3) or "
        "AVX-512\n"
        "                          (v4) processors beside the portable "
        "cpu code\n"
        "  --dim NAME=MIN:MAX[:DIV]  range (and divisor) of a shape symbol;\n"
        "  --dim NAME=VALUE        specializes it at compile time. Symbols "
        "with no\n"
        "                          --dim get the range [1, 8192] (with a "
        "note)\n"
        "  --force-dynamic[=all]   every input dimension that is not 1 (all: "
        "every one)\n"
        "                          becomes a symbol\n"
        "  --freeze-input NAME=FILE.npy  make graph input NAME a compile-time "
        "constant\n"
        "  --dump-symbols          print the symbol table after shape "
        "propagation\n"
        "  --emit=STAGE            print the IR after STAGE instead of "
        "packaging\n"
        "  --stop-after=STAGE      stop after STAGE, printing nothing (to "
        "time stages)\n"
        "  --tile-config KIND=CONFIG  the tile configuration of every kernel "
        "of\n"
        "                          KIND (gemm, conv, reduce, elementwise,\n"
        "                          data_movement), e.g. 'gemm=block 16x8 "
        "thread 2x2 k 5',\n"
        "                          or 'gemm=default' for the kind's default;\n"
        "                          the tile search leaves KIND's kernels "
        "alone\n"
        "  --device NAME           the GPU the tile search predicts for: "
        "a100,\n"
        "                          rtx3090, h100, h200 (default: the newest "
        "GPU\n"
        "                          target's; with cpu targets only, f32 "
        "GEMMs\n"
        "                          search the host's own tiles, the rest "
        "h100)\n"
        "  --im2col=auto|always|never|per-image|folded  windowed convs as "
        "a copy of\n"
        "                          their windows and a GEMM: where the cost "
        "model\n"
        "                          predicts it faster (auto, unless "
        "--tile-config\n"
        "                          conv=... is given), always, never; the "
        "model picks\n"
        "                          the GEMM per image or over the batch "
        "folded, unless\n"
        "                          per-image or folded says\n"
        "  --max-variants N        the most tile variants per GEMM dispatch "
        "(default 8)\n"
        "  --regret-target R       the predicted regret the variants aim "
        "for at every\n"
        "                          shape (default 0.03: within 3% of the "
        "best tile)\n"
        "  --ptxas=auto|off|PATH   assemble each GPU target's PTX to a cubin "
        "and\n"
        "                          record registers, shared memory and "
        "spills per\n"
        "                          kernel (auto: when the CUDA toolkit is "
        "found)\n"
        "  --quiet                 no progress or notes\n"
        "\n"
        "stages for --emit:\n";
  for (const StageInfo &stage : getCompileStages())
    os << "  " << llvm::left_justify(stage.name, 13) << " " << stage.description
       << "\n";
  os << "\nrun writes each output to DIR/NAME.npy; characters of NAME outside "
        "[A-Za-z0-9_.-]\nbecome '_'.\n";
}

static int usageError(const std::string &message) {
  llvm::errs() << "dyncc: error: " << message << "\n"
               << "run 'dyncc --help' for usage\n";
  return 2;
}

static std::string oneLine(std::string text) {
  for (char &c : text)
    if (c == '\n' || c == '\r')
      c = ' ';
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

/// Parses NAME=MIN:MAX[:DIV] or NAME=VALUE.
static bool parseDimFlag(const std::string &spec, ImportOptions &options,
                         std::string &error) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    error =
        "--dim expects NAME=MIN:MAX[:DIV] or NAME=VALUE, got '" + spec + "'";
    return false;
  }
  std::string name = spec.substr(0, eq);
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(spec).substr(eq + 1).split(parts, ':');
  llvm::SmallVector<int64_t> values;
  for (llvm::StringRef part : parts) {
    int64_t v;
    if (part.getAsInteger(10, v) || v < 0) {
      error = "--dim " + spec + ": '" + part.str() +
              "' is not a non-negative integer";
      return false;
    }
    values.push_back(v);
  }
  DimFlag flag;
  if (values.size() == 1) {
    flag.min = flag.max = values[0];
  } else if (values.size() == 2 || values.size() == 3) {
    flag.min = values[0];
    flag.max = values[1];
    if (values.size() == 3)
      flag.divisor = values[2];
  } else {
    error =
        "--dim expects NAME=MIN:MAX[:DIV] or NAME=VALUE, got '" + spec + "'";
    return false;
  }
  if (flag.min > flag.max) {
    error = "--dim " + spec + ": the range is empty (min > max)";
    return false;
  }
  if (flag.divisor < 1) {
    error = "--dim " + spec + ": the divisor must be at least 1";
    return false;
  }
  options.dims[name] = flag;
  return true;
}

/// The ONNX TensorProto data type of a run-time dtype.
static int32_t onnxDataType(runtime::DType type) {
  switch (type) {
  case runtime::DType::F16:
    return 10;
  case runtime::DType::BF16:
    return 16;
  case runtime::DType::F32:
    return 1;
  case runtime::DType::F64:
    return 11;
  case runtime::DType::I8:
    return 3;
  case runtime::DType::I16:
    return 5;
  case runtime::DType::I32:
    return 6;
  case runtime::DType::I64:
    return 7;
  case runtime::DType::U8:
    return 2;
  case runtime::DType::U16:
    return 4;
  case runtime::DType::U32:
    return 12;
  case runtime::DType::U64:
    return 13;
  case runtime::DType::Bool:
    return 9;
  }
  return 0;
}

/// Parses NAME=FILE.npy and loads the array.
static bool parseFreezeFlag(const std::string &spec, ImportOptions &options,
                            std::string &error) {
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    error = "--freeze-input expects NAME=FILE.npy, got '" + spec + "'";
    return false;
  }
  runtime::NpyArray array;
  if (!runtime::readNpy(spec.substr(eq + 1), array, error))
    return false;
  FrozenTensor tensor;
  tensor.dataType = onnxDataType(array.dtype);
  tensor.shape = array.shape;
  tensor.bytes.assign(array.data.begin(), array.data.end());
  options.frozenInputs[spec.substr(0, eq)] = std::move(tensor);
  return true;
}

static int compileMain(llvm::ArrayRef<std::string> args) {
  CompileOptions options;
  bool quiet = false;
  auto value = [&](size_t &i, llvm::StringRef flag, std::string &out) -> bool {
    llvm::StringRef arg = args[i];
    if (arg.consume_front(flag)) {
      if (arg.consume_front("=")) {
        out = arg.str();
        return true;
      }
      if (arg.empty() && i + 1 < args.size()) {
        out = args[++i];
        return true;
      }
    }
    return false;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef arg = args[i];
    std::string v;
    if (arg == "-h" || arg == "--help") {
      printUsage(llvm::outs());
      return 0;
    }
    if (arg == "-q" || arg == "--quiet") {
      quiet = true;
    } else if (arg == "-o" || arg.starts_with("-o=") ||
               arg.starts_with("--output")) {
      if (!value(i, arg.starts_with("--output") ? "--output" : "-o", v))
        return usageError("-o needs a file name");
      options.outputPath = v;
    } else if (arg.starts_with("--target")) {
      if (!value(i, "--target", v))
        return usageError("--target needs a list");
      options.targets.clear();
      llvm::SmallVector<llvm::StringRef> parts;
      llvm::StringRef(v).split(parts, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef p : parts)
        options.targets.push_back(p.trim().str());
    } else if (arg.starts_with("--dim")) {
      std::string error;
      if (!value(i, "--dim", v))
        return usageError("--dim needs NAME=MIN:MAX or NAME=VALUE");
      if (!parseDimFlag(v, options.import, error))
        return usageError(error);
    } else if (arg == "--force-dynamic" || arg == "--force-dynamic=all") {
      options.import.forceDynamic = true;
      options.import.forceDynamicAll = arg.ends_with("=all");
    } else if (arg == "--dump-symbols") {
      options.dumpSymbols = true;
    } else if (arg.starts_with("--freeze-input")) {
      if (!value(i, "--freeze-input", v))
        return usageError("--freeze-input needs NAME=FILE.npy");
      std::string error;
      if (!parseFreezeFlag(v, options.import, error)) {
        llvm::errs() << "dyncc: error: " << error << "\n";
        return 1;
      }
    } else if (arg.starts_with("--tile-config")) {
      if (!value(i, "--tile-config", v))
        return usageError("--tile-config needs KIND=CONFIG");
      options.tileConfigs.push_back(v);
    } else if (arg.starts_with("--device")) {
      if (!value(i, "--device", v) || v.empty())
        return usageError("--device needs a device name");
      options.device = v;
    } else if (arg.starts_with("--im2col")) {
      if (!value(i, "--im2col", v) || v.empty())
        return usageError(
            "--im2col needs auto, always, never, per-image or folded");
      options.im2col = v;
    } else if (arg.starts_with("--max-variants")) {
      if (!value(i, "--max-variants", v) ||
          !llvm::to_integer(v, options.variantCap, 10))
        return usageError("--max-variants needs a positive integer");
    } else if (arg.starts_with("--regret-target")) {
      if (!value(i, "--regret-target", v) ||
          !llvm::to_float(v, options.regretTarget))
        return usageError("--regret-target needs a number (0.03 is 3%)");
    } else if (arg.starts_with("--ptxas")) {
      if (!value(i, "--ptxas", v) || v.empty())
        return usageError("--ptxas needs auto, off or a path");
      options.ptxas = v;
    } else if (arg.starts_with("--stop-after")) {
      if (!value(i, "--stop-after", v))
        return usageError("--stop-after needs a stage name");
      options.stopAfter = v;
    } else if (arg.starts_with("--emit")) {
      if (!value(i, "--emit", v))
        return usageError("--emit needs a stage name");
      options.emitStage = v;
    } else if (arg.starts_with("-") && arg != "-") {
      return usageError("unknown option '" + arg.str() + "'");
    } else if (options.inputPath.empty()) {
      options.inputPath = arg.str();
    } else {
      return usageError("more than one model given ('" + options.inputPath +
                        "' and '" + arg.str() + "')");
    }
  }
  if (options.inputPath.empty())
    return usageError("no model given");

  // Stage times on a terminal, or when DYNCC_PROGRESS=1 (benchmarks).
  const char *progressEnv = getenv("DYNCC_PROGRESS");
  bool terminal =
      isatty(STDERR_FILENO) || (progressEnv && std::string(progressEnv) == "1");
  if (!quiet)
    options.note = [](const std::string &note) {
      llvm::errs() << "dyncc: note: " << note << "\n";
    };
  if ((!quiet && isatty(STDERR_FILENO)) || (terminal && !isatty(STDERR_FILENO)))
    options.progress = [](const std::string &stage, bool done, double seconds,
                          const std::string &detail) {
      if (!done)
        return;
      llvm::errs() << llvm::format("  %-12s %7.3f s", stage.c_str(), seconds);
      if (!detail.empty())
        llvm::errs() << "  " << detail;
      llvm::errs() << "\n";
    };

  std::string error;
  if (!compileModel(options, llvm::outs(), error)) {
    llvm::errs() << "dyncc: error: " << oneLine(error) << "\n";
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    return usageError("no command given (compile, run or explain)");
  std::string command = args.front();
  llvm::ArrayRef<std::string> rest = llvm::ArrayRef(args).drop_front();
  if (command == "-h" || command == "--help" || command == "help") {
    printUsage(llvm::outs());
    return 0;
  }
  if (command == "--list-ops") {
    for (const std::string &op : getSupportedOnnxOps())
      llvm::outs() << op << "\n";
    return 0;
  }
  if (command == "compile")
    return compileMain(rest);
  if (command == "run")
    return runtime::runToolMain(rest.vec(), "dyncc");
  if (command == "bench")
    return runtime::benchToolMain(rest.vec(), "dyncc");
  if (command == "tune")
    return runtime::tuneToolMain(rest.vec(), "dyncc");
  if (command == "explain")
    return explainMain(rest);
  return usageError("unknown command '" + command +
                    "' (expected compile, run, bench, tune or explain)");
}
