//===- dyncc-run.cpp - Run a compiled model ---------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `dyncc-run OUT.dyncc [options]` is `dyncc run OUT.dyncc [options]` without
// the compiler: it links only the run-time, so it works on machines that
// have no LLVM (see docs/Runtime.md).
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/RunTool.h"

#include <string>
#include <vector>

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return dyncc::runtime::runToolMain(args, "dyncc-run");
}
