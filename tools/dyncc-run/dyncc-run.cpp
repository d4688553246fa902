//===- dyncc-run.cpp - Run a compiled model ---------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `dyncc-run OUT.dyncc [options]` is `dyncc run OUT.dyncc [options]` without
// the compiler: it links only the run-time, so it works on machines that
// have no LLVM (see docs/Runtime.md). `dyncc-run bench ...` and
// `dyncc-run tune ...` are `dyncc bench` and `dyncc tune`.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/RunTool.h"

#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "bench" || args[0] == "tune")) {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    return args[0] == "bench"
               ? dyncc::runtime::benchToolMain(rest, "dyncc-run")
               : dyncc::runtime::tuneToolMain(rest, "dyncc-run");
  }
  return dyncc::runtime::runToolMain(args, "dyncc-run");
}
