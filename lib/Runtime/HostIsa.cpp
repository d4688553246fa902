//===- HostIsa.cpp - Instruction-set levels of the host code --------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The levels are read from CPUID and XGETBV directly: the compilers'
// __builtin_cpu_supports learned the level names late (GCC 12, clang 18)
// and answers them from the runtime library (libgcc or compiler-rt) it
// links, which the run-time-only build cannot choose.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/HostIsa.h"

#include <cstdint>
#include <cstdlib>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

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

namespace {
/// The highest x86-64 psABI level this processor and its OS run: 1 (the
/// baseline) to 4; 0 elsewhere.
int detectLevel() {
#if defined(__x86_64__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return 1;
  const unsigned ecx1 = ecx;
  auto bit = [](unsigned reg, int n) { return (reg >> n) & 1u; };
  unsigned extEcx = 0;
  if (__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx))
    extEcx = ecx;
  unsigned ebx7 = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
    ebx7 = ebx;
  // x86-64-v2: CMPXCHG16B, LAHF/SAHF, POPCNT, SSE3, SSE4.1, SSE4.2, SSSE3.
  bool v2 = bit(ecx1, 13) && bit(extEcx, 0) && bit(ecx1, 23) && bit(ecx1, 0) &&
            bit(ecx1, 19) && bit(ecx1, 20) && bit(ecx1, 9);
  if (!v2)
    return 1;
  // The OS must save the vector registers the wider levels use (XCR0).
  uint64_t xcr0 = 0;
  if (bit(ecx1, 27)) { // OSXSAVE
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
  // x86-64-v3: AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT, MOVBE, with the
  // SSE and AVX state saved.
  bool v3 = bit(ecx1, 28) && bit(ebx7, 5) && bit(ebx7, 3) && bit(ebx7, 8) &&
            bit(ecx1, 29) && bit(ecx1, 12) && bit(extEcx, 5) && bit(ecx1, 22) &&
            (xcr0 & 0x6) == 0x6;
  if (!v3)
    return 2;
  // x86-64-v4: AVX512F, BW, CD, DQ, VL, with the opmask and both halves of
  // the ZMM state saved.
  bool v4 = bit(ebx7, 16) && bit(ebx7, 30) && bit(ebx7, 28) && bit(ebx7, 17) &&
            bit(ebx7, 31) && (xcr0 & 0xe0) == 0xe0;
  return v4 ? 4 : 3;
#else
  return 0;
#endif
}
} // namespace

bool dyncc::runtime::hostRunsIsa(const std::string &isa) {
  static const int level = detectLevel();
  // "generic" (rank 0) runs anywhere; x86-64-vN (rank N - 1) from level N.
  int rank = getHostIsaRank(isa);
  return rank == 0 || (rank > 0 && level >= rank + 1);
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
