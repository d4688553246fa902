//===- RunTool.h - The run command ------------------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Loads an artifact, feeds it .npy or random inputs, runs it and reports or
// saves the outputs. `dyncc-run ARGS` and the compiler driver's
// `dyncc run ARGS` both call runToolMain with ARGS (the words after `run`).
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_RUNTOOL_H
#define DYNCC_RUNTIME_RUNTOOL_H

#include <string>
#include <vector>

namespace dyncc::runtime {

/// Runs `OUT.dyncc [--dim NAME=VALUE ...] [--input NAME=FILE.npy ...]
/// [--seed N] [--output-dir DIR] [--device cpu] [--quiet]`, where `args` are
/// the arguments after the word `run`. `toolName` prefixes messages
/// ("TOOL: error: ...") and the usage line. Returns 0 on success, 1 on an
/// error, 2 on a usage error.
int runToolMain(const std::vector<std::string> &args, const char *toolName);

/// Runs `OUT.dyncc [--dim NAME=LO:HI|NAME=VALUE ...] [--points N]
/// [--repeat N] [--seed N] [--device D] [--plot FILE.svg] [--quiet]`, the
/// arguments after the word `bench`: a sweep of shapes, timed
/// (BenchTool.cpp). Returns 0, 1 if a shape failed or on an error, 2 on a
/// usage error.
int benchToolMain(const std::vector<std::string> &args, const char *toolName);

/// Runs `OUT.dyncc [--device cuda:N] [-o FILE] [--dim ...] [--points N]
/// [--repeat N] [--max-bindings N] [--seed N] [--no-check] [--quiet]`, the
/// arguments after the word `tune`: measures the variants on a GPU and
/// writes the measurements into the artifact (TuneTool.cpp). Returns 0, 1
/// on an error (the artifact then unchanged), 2 on a usage error.
int tuneToolMain(const std::vector<std::string> &args, const char *toolName);

/// The file name an output named `name` is saved under, without ".npy":
/// characters outside [A-Za-z0-9_.-] become '_', and "", "." and ".." become
/// "_".
std::string sanitizeOutputName(const std::string &name);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_RUNTOOL_H
