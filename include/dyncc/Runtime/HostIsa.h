//===- HostIsa.h - Instruction-set levels of the host code ------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// An artifact's host code may come in several builds of the same kernels,
// each for an instruction-set level: the portable one (x86-64-v2: SSE4.2,
// on any x86-64 the run-time supports) and, where the compile was asked
// for them, x86-64-v3 (AVX2, FMA, F16C) and x86-64-v4 (AVX-512 F, BW, CD,
// DQ, VL), the levels of the x86-64 psABI that glibc's hwcaps directories
// and GCC's -march use. The run-time loads the highest level this
// processor runs (docs/Runtime.md, "Host code levels"), as glibc loads a
// library from the highest glibc-hwcaps directory it may.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_HOSTISA_H
#define DYNCC_RUNTIME_HOSTISA_H

#include <string>
#include <vector>

namespace dyncc::runtime {

/// The levels, lowest first: "generic" (code for any processor of the
/// compiling host's architecture; what a non-x86 compile writes), then
/// "x86-64-v2", "x86-64-v3", "x86-64-v4".
const std::vector<std::string> &getHostIsaLevels();

/// `isa`'s place in getHostIsaLevels(), or -1 for a name not there.
int getHostIsaRank(const std::string &isa);

/// Whether this processor, and its operating system's saved register
/// state, run code of level `isa`. False for unknown names.
bool hostRunsIsa(const std::string &isa);

/// The highest level DYNCC_HOST_ISA lets the run-time load: unset or
/// empty, the highest of all; else one of getHostIsaLevels(). False with
/// `error` set for any other value.
bool readHostIsaCap(int &rank, std::string &error);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_HOSTISA_H
