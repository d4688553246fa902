//===- Compiler.h - ONNX model to .dyncc artifact ---------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_PIPELINES_COMPILER_H
#define DYNCC_PIPELINES_COMPILER_H

#include "dyncc/Importer/OnnxImporter.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace dyncc {

struct CompileOptions {
  std::string inputPath;
  std::string outputPath;
  /// cpu, sm_80, sm_86, sm_90, sm_90a.
  std::vector<std::string> targets = {"cpu", "sm_80", "sm_90"};
  ImportOptions import;
  /// When set, print the IR (or text) after this stage instead of packaging.
  std::string emitStage;
  /// When set, stop after this stage without printing or packaging (for
  /// measuring the stages up to it).
  std::string stopAfter;
  /// Print the symbol table (facts, data-dependent symbols, constraints)
  /// after shape propagation.
  bool dumpSymbols = false;
  /// `KIND=CONFIG` entries replacing the default tile configuration of a
  /// kernel kind (AssignTileConfigPass's `override`).
  std::vector<std::string> tileConfigs;
  /// The device the tile search predicts for (a100, rtx3090, h100, h200, or
  /// sm_80, sm_86, sm_90); empty: the newest GPU target's (h100 for a
  /// CPU-only compile, so the host runs the variants a GPU compile has).
  std::string device;
  /// Windowed convs as im2col and a GEMM: `auto` where the cost model
  /// predicts that faster on the device (except with a `conv` entry in
  /// tileConfigs, which keeps convs direct), `always`, or `never`; the
  /// model picks im2col's GEMM per image or with the batch folded, unless
  /// `per-image` or `folded` says (dyncc-conv-im2col).
  std::string im2col = "auto";
  /// The most variants per GEMM dispatch, and the predicted regret they
  /// aim for (0.03: within 3% of the best candidate at every point).
  int64_t variantCap = 8;
  double regretTarget = 0.03;
  /// `auto` assembles each GPU target's PTX to a cubin with the ptxas that
  /// findPtxas finds, if any; `off` never does; anything else is the path
  /// of the ptxas to use (an error if it cannot run).
  std::string ptxas = "auto";
  /// Called at the start and end of each stage (for progress output).
  std::function<void(const std::string &stage, bool done, double seconds,
                     const std::string &detail)>
      progress;
  /// Called with each note (defaulted symbol ranges, ...).
  std::function<void(const std::string &note)> note;
};

/// The targets `--target` accepts.
const std::vector<std::string> &getSupportedTargets();

/// Compiles. On success either writes the artifact atomically to
/// `outputPath`, or prints the `emitStage` output to `emitStream`. On failure
/// returns false with `error` set to one line; no output file is left.
bool compileModel(const CompileOptions &options, llvm::raw_ostream &emitStream,
                  std::string &error);

} // namespace dyncc

#endif // DYNCC_PIPELINES_COMPILER_H
