//===- HostIsa.cpp - Instruction-set levels of the host code --------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/HostIsa.h"

#include <cstdlib>

using namespace dyncc::runtime;

const std::vector<std::string> &dyncc::runtime::getHostIsaLevels() {
  static const std::vector<std::string> levels = {"generic", "x86-64-v2",
                                                  "x86-64-v3", "x86-64-v4"};
  return levels;
}

int dyncc::runtime::getHostIsaRank(const std::string &isa) {
  const std::vector<std::string> &levels = getHostIsaLevels();
  for (size_t i = 0; i < levels.size(); ++i)
    if (levels[i] == isa)
      return static_cast<int>(i);
  return -1;
}

bool dyncc::runtime::hostRunsIsa(const std::string &isa) {
  if (isa == "generic")
    return true;
#if defined(__x86_64__)
  // libgcc's and compiler-rt's checks test the CPUID bits of each level
  // and, for AVX and AVX-512, that the OS saves their registers (XGETBV).
  __builtin_cpu_init();
#if (defined(__clang__) && __clang_major__ >= 16) ||                           \
    (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 12)
  if (isa == "x86-64-v2")
    return __builtin_cpu_supports("x86-64-v2");
  if (isa == "x86-64-v3")
    return __builtin_cpu_supports("x86-64-v3");
  if (isa == "x86-64-v4")
    return __builtin_cpu_supports("x86-64-v4");
#else
  // Compilers before the levels' names (the run-time-only build may meet
  // one): the features that tell the levels apart.
  bool v2 = __builtin_cpu_supports("popcnt") &&
            __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("ssse3");
  bool v3 = v2 && __builtin_cpu_supports("avx2") &&
            __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
  bool v4 = v3 && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512cd");
  if (isa == "x86-64-v2")
    return v2;
  if (isa == "x86-64-v3")
    return v3;
  if (isa == "x86-64-v4")
    return v4;
#endif
#endif
  return false;
}

bool dyncc::runtime::readHostIsaCap(int &rank, std::string &error) {
  const std::vector<std::string> &levels = getHostIsaLevels();
  const char *value = std::getenv("DYNCC_HOST_ISA");
  if (!value || !*value) {
    rank = static_cast<int>(levels.size()) - 1;
    return true;
  }
  rank = getHostIsaRank(value);
  if (rank >= 0)
    return true;
  error = "DYNCC_HOST_ISA: expected";
  for (size_t i = 0; i < levels.size(); ++i)
    error += std::string(i == 0                   ? " '"
                         : i + 1 == levels.size() ? " or '"
                                                  : ", '") +
             levels[i] + "'";
  error += ", got '" + std::string(value) + "'";
  return false;
}
