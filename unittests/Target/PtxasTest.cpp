//===- PtxasTest.cpp - ptxas resource report parsing ----------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Target/Ptxas.h"

#include "gtest/gtest.h"

using namespace dyncc;

namespace {

// The report of CUDA 13's `ptxas -arch=sm_90 -v` for two kernels, one with
// static shared memory and a stack frame.
constexpr const char *kReport =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'g1_gemm' for 'sm_90'\n"
    "ptxas info    : Function properties for g1_gemm\n"
    "    128 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 48 registers, used 1 barriers, 4096 bytes smem, "
    "128 bytes cumulative stack size\n"
    "ptxas info    : Compile time = 44.008 ms\n"
    "ptxas info    : Compiling entry function 'g0_reduce' for 'sm_90'\n"
    "ptxas info    : Function properties for g0_reduce\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 22 registers, used 0 barriers\n";

TEST(PtxasReport, ParsesEveryEntry) {
  std::map<std::string, KernelResources> resources;
  std::string error;
  ASSERT_TRUE(parsePtxasReport(kReport, "sm_90", resources, error)) << error;
  ASSERT_EQ(resources.size(), 2u);
  const KernelResources &gemm = resources.at("g1_gemm");
  EXPECT_EQ(gemm.registers, 48);
  EXPECT_EQ(gemm.barriers, 1);
  EXPECT_EQ(gemm.sharedBytes, 4096);
  EXPECT_EQ(gemm.stackBytes, 128);
  EXPECT_EQ(gemm.spillStoreBytes, 8);
  EXPECT_EQ(gemm.spillLoadBytes, 12);
  const KernelResources &reduce = resources.at("g0_reduce");
  EXPECT_EQ(reduce.registers, 22);
  EXPECT_EQ(reduce.sharedBytes, 0);
  EXPECT_EQ(reduce.stackBytes, 0);
}

TEST(PtxasReport, RejectsAnotherArchitecture) {
  std::map<std::string, KernelResources> resources;
  std::string error;
  EXPECT_FALSE(parsePtxasReport(kReport, "sm_80", resources, error));
  EXPECT_NE(error.find("expected 'sm_80'"), std::string::npos) << error;
}

TEST(PtxasReport, RejectsATruncatedReport) {
  std::map<std::string, KernelResources> resources;
  std::string error;
  std::string truncated(kReport);
  truncated.resize(truncated.find("ptxas info    : Used 48"));
  EXPECT_FALSE(parsePtxasReport(truncated, "sm_90", resources, error));
  EXPECT_NE(error.find("g1_gemm"), std::string::npos) << error;
  resources.clear();
  EXPECT_FALSE(parsePtxasReport("ptxas info    : 0 bytes gmem\n", "sm_90",
                                resources, error));
  EXPECT_NE(error.find("no entry function"), std::string::npos) << error;
}

TEST(LibdeviceCheck, FindsAnExternMathFunction) {
  // What gpu-module-to-binary leaves when libdevice is not linked.
  EXPECT_EQ(findUnresolvedLibdeviceCall(
                ".extern .func  (.param .b32 func_retval0) vprintf\n"
                "(\n\t.param .b64 vprintf_param_0\n)\n"
                ".extern .func  (.param .b32 func_retval0) __nv_powf\n"
                "(\n\t.param .b32 __nv_powf_param_0,\n"
                "\t.param .b32 __nv_powf_param_1\n);\n"),
            std::optional<std::string>("__nv_powf"));
  // A linked (defined) libdevice function after an unrelated extern is
  // not a call left unresolved.
  EXPECT_EQ(findUnresolvedLibdeviceCall(
                ".extern .func  (.param .b32 func_retval0) vprintf\n"
                "(\n\t.param .b64 vprintf_param_0\n)\n"
                ".func  (.param .b32 func_retval0) __nv_expf(\n"
                "\t.param .b32 __nv_expf_param_0\n)\n{\n\tret;\n}\n"),
            std::nullopt);
  EXPECT_EQ(findUnresolvedLibdeviceCall(""), std::nullopt);
}

} // namespace
