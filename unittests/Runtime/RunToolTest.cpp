//===- RunToolTest.cpp - Tests of the run command ---------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "Tool/ToolSupport.h"

#include "dyncc/Runtime/Npy.h"
#include "dyncc/Runtime/RunTool.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace dyncc::runtime;
using namespace dyncc::test;

namespace {

struct ToolResult {
  int status;
  std::string out;
  std::string err;
};

ToolResult runTool(const std::vector<std::string> &args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int status = runToolMain(args, "dyncc-run");
  ToolResult result;
  result.status = status;
  result.out = ::testing::internal::GetCapturedStdout();
  result.err = ::testing::internal::GetCapturedStderr();
  return result;
}

NpyArray readArray(const std::string &path) {
  NpyArray array;
  std::string error;
  EXPECT_TRUE(readNpy(path, array, error)) << error;
  return array;
}

TEST(RunToolTest, SanitizesOutputNames) {
  EXPECT_EQ(sanitizeOutputName("Y"), "Y");
  EXPECT_EQ(sanitizeOutputName("logits.0-final_v2"), "logits.0-final_v2");
  EXPECT_EQ(sanitizeOutputName("t:copy"), "t_copy");
  EXPECT_EQ(sanitizeOutputName("../../etc/passwd"), ".._.._etc_passwd");
  EXPECT_EQ(sanitizeOutputName("a b/c\\d"), "a_b_c_d");
  EXPECT_EQ(sanitizeOutputName("caf\xc3\xa9"), "caf__");
  EXPECT_EQ(sanitizeOutputName("."), "_");
  EXPECT_EQ(sanitizeOutputName(".."), "_");
  EXPECT_EQ(sanitizeOutputName(""), "_");
  EXPECT_EQ(sanitizeOutputName("..."), "...");
}

TEST(RunToolTest, RunsWithInputFile) {
  TempDir dir;
  std::string model = dir.file("linear.dyncc");
  writeArtifact(model, linearManifest());
  std::vector<float> x = randomFloats(13 * 16, 42);
  std::string error;
  ASSERT_TRUE(writeNpy(dir.file("x.npy"), DType::F32, {13, 16}, x.data(),
                       x.size() * 4, error));
  ToolResult result = runTool({model, "--input", "X=" + dir.file("x.npy"),
                               "--output-dir", dir.file("out/nested")});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_NE(result.out.find("B = 13\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("group matmul (gemm) -> kernel matmul_small\n"),
            std::string::npos);
  EXPECT_NE(
      result.out.find("group bias_relu (elementwise) -> kernel add1_relu\n"),
      std::string::npos);
  EXPECT_NE(result.out.find("\nY: f32[13, 8] mean="), std::string::npos);
  EXPECT_NE(result.out.find("\nt:copy: f32[13, 8] mean="), std::string::npos);

  std::vector<float> t, y;
  linearReference(x, 13, t, y);
  NpyArray outY = readArray(dir.file("out/nested/Y.npy"));
  NpyArray outT = readArray(dir.file("out/nested/t_copy.npy"));
  EXPECT_EQ(outY.shape, (std::vector<int64_t>{13, 8}));
  ASSERT_EQ(outY.data.size(), y.size() * 4);
  ASSERT_EQ(outT.data.size(), t.size() * 4);
  const float *yData = reinterpret_cast<const float *>(outY.data.data());
  const float *tData = reinterpret_cast<const float *>(outT.data.data());
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_NEAR(yData[i], y[i], 1e-5f);
    EXPECT_NEAR(tData[i], t[i], 1e-5f);
  }

  // The statistics line matches the data.
  double sum = 0, lo = 1e30, hi = -1e30;
  for (float v : y) {
    sum += v;
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
  }
  char expected[256];
  std::snprintf(expected, sizeof(expected),
                "Y: f32[13, 8] mean=%.6g min=%.6g max=%.6g\n", sum / y.size(),
                lo, hi);
  EXPECT_NE(result.out.find(expected), std::string::npos) << result.out;
}

TEST(RunToolTest, RandomInputsAreDeterministic) {
  TempDir dir;
  std::string model = dir.file("linear.dyncc");
  writeArtifact(model, linearManifest());
  ASSERT_EQ(runTool({model, "--dim", "B=37", "--seed", "5", "--output-dir",
                     dir.file("a"), "--quiet"})
                .status,
            0);
  ASSERT_EQ(runTool({model, "--dim=B=37", "--seed=5",
                     "--output-dir=" + dir.file("b"), "-q"})
                .status,
            0);
  ASSERT_EQ(
      runTool({model, "--dim", "B=37", "--output-dir", dir.file("c")}).status,
      0);
  std::string a = readFile(dir.file("a/Y.npy"));
  EXPECT_EQ(a, readFile(dir.file("b/Y.npy")));
  EXPECT_NE(a, readFile(dir.file("c/Y.npy")));
  // Random data is not all zero: the matmul output varies.
  NpyArray t = readArray(dir.file("a/t_copy.npy"));
  const float *values = reinterpret_cast<const float *>(t.data.data());
  EXPECT_NE(values[0], values[1]);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{37, 8}));
}

TEST(RunToolTest, QuietPrintsNothing) {
  TempDir dir;
  std::string model = dir.file("linear.dyncc");
  writeArtifact(model, linearManifest());
  ToolResult result = runTool({model, "--dim", "B=3", "--quiet"});
  EXPECT_EQ(result.status, 0);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");
  EXPECT_TRUE(dir.list() == std::vector<std::string>{"linear.dyncc"});
}

TEST(RunToolTest, CollidingOutputNames) {
  TempDir dir;
  std::string model = dir.file("m.dyncc");
  std::string manifest =
      replaceOnce(linearManifest(), "{\"name\": \"Y\"", "{\"name\": \"a_b\"");
  manifest =
      replaceOnce(manifest, "{\"name\": \"t:copy\"", "{\"name\": \"a:b\"");
  writeArtifact(model, manifest);
  ASSERT_EQ(
      runTool({model, "--dim", "B=2", "--output-dir", dir.path(), "-q"}).status,
      0);
  EXPECT_EQ(dir.list(),
            (std::vector<std::string>{"a_b.npy", "a_b_2.npy", "m.dyncc"}));
}

TEST(RunToolTest, Errors) {
  TempDir dir;
  std::string model = dir.file("linear.dyncc");
  writeArtifact(model, linearManifest());
  std::vector<double> wrongType(4 * 16, 0.5);
  std::string error;
  ASSERT_TRUE(writeNpy(dir.file("f64.npy"), DType::F64, {4, 16},
                       wrongType.data(), wrongType.size() * 8, error));
  std::vector<float> x(4 * 16, 0.5f);
  ASSERT_TRUE(writeNpy(dir.file("x.npy"), DType::F32, {4, 16}, x.data(),
                       x.size() * 4, error));
  ASSERT_TRUE(writeNpy(dir.file("x3.npy"), DType::F32, {4, 16, 1}, x.data(),
                       x.size() * 4, error));
  writeFile(dir.file("bad.npy"), "garbage");

  struct Case {
    std::vector<std::string> args;
    int status;
    std::string message;
  } cases[] = {
      {{model},
       1,
       "dyncc-run: error: no value for symbol 'B': pass --dim B=VALUE or "
       "--input\n"},
      {{model, "--dim", "Q=3"},
       1,
       "dyncc-run: error: unknown symbol 'Q' in --dim (symbols: B)\n"},
      {{model, "--dim", "B=9000"},
       1,
       "dyncc-run: error: input 'X' dimension 0: symbol B = 9000 is outside "
       "its range [1, 4096]\n"},
      {{model, "--input", "X=" + dir.file("x.npy"), "--dim", "B=5"},
       1,
       "dyncc-run: error: input 'X' dimension 0: " + dir.file("x.npy") +
           " has B = 4, but --dim B=5\n"},
      {{model, "--input", "X=" + dir.file("f64.npy")},
       1,
       "dyncc-run: error: input 'X': " + dir.file("f64.npy") +
           " has dtype f64, expected f32\n"},
      {{model, "--input", "X=" + dir.file("x3.npy")},
       1,
       "dyncc-run: error: input 'X': " + dir.file("x3.npy") +
           " has rank 3, expected rank 2\n"},
      {{model, "--input", "X=" + dir.file("bad.npy")},
       1,
       "dyncc-run: error: " + dir.file("bad.npy") +
           ": not a .npy file (bad magic)\n"},
      {{model, "--input", "Z=" + dir.file("x.npy")},
       1,
       "dyncc-run: error: unknown input 'Z' in --input (inputs: X)\n"},
      {{model, "--dim", "B=2", "--device", "cuda:0"},
       1,
       "dyncc-run: error: cuda:0: kernel 'matmul_small' has no code for "
       "sm_90 (the artifact's targets: cpu)\n"},
      {{dir.file("none.dyncc")},
       1,
       "dyncc-run: error: " + dir.file("none.dyncc") +
           ": cannot open: No such file or directory\n"},
      {{model, "--dim", "B=2", "--output-dir", dir.file("linear.dyncc/sub")},
       1,
       "dyncc-run: error: " + dir.file("linear.dyncc") + ": not a directory\n"},
  };
  for (const Case &c : cases) {
    ToolResult result = runTool(c.args);
    EXPECT_EQ(result.status, c.status) << c.message;
    EXPECT_EQ(result.err, c.message);
    EXPECT_EQ(result.out, "");
  }
}

TEST(RunToolTest, VerboseSaysWhyAndRepeatTimes) {
  // -v: each group's variant and why; --repeat: the median of warm runs.
  TempDir dir;
  std::string model = dir.file("linear.dyncc");
  writeArtifact(model, linearManifest());
  ToolResult result =
      runTool({model, "--dim", "B=20", "-v", "--repeat", "3"});
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("group matmul (gemm) -> kernel matmul_large\n"
                            "  v1, by the first variant whose conditions "
                            "hold: B = 20 in 17-4096\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("-> kernel add1_relu\n"
                            "  v0, by the group's one variant\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("\ntime: median "), std::string::npos);
  EXPECT_NE(result.out.find(" ms over 3 runs on cpu\n"), std::string::npos);
  // Neither without the options.
  ToolResult plain = runTool({model, "--dim", "B=20"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(plain.out.find(", by "), std::string::npos);
  EXPECT_EQ(plain.out.find("time:"), std::string::npos);
}

TEST(RunToolTest, UsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"a.dyncc", "b.dyncc"},
      {"a.dyncc", "--bogus"},
      {"a.dyncc", "--dim"},
      {"a.dyncc", "--dim", "B"},
      {"a.dyncc", "--dim", "B=x"},
      {"a.dyncc", "--dim", "B=-1"},
      {"a.dyncc", "--seed", "abc"},
      {"a.dyncc", "--input", "X="},
      {"a.dyncc", "--input", "X=a.npy", "--input", "X=b.npy"},
      {"a.dyncc", "--dim", "B=1", "--dim", "B=2"},
      {"a.dyncc", "--repeat", "0"},
      {"a.dyncc", "--repeat", "x"},
      {"a.dyncc", "--repeat"},
  };
  for (const auto &args : cases) {
    ToolResult result = runTool(args);
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_EQ(result.err.rfind("dyncc-run: error: ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find("\nusage: dyncc-run OUT.dyncc"),
              std::string::npos);
  }
  ToolResult help = runTool({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: dyncc-run OUT.dyncc", 0), 0u);
}

// dyncc tune's held-out bindings: the geometric midpoints of consecutive
// measured values, as multiples of the divisor strictly between them.
TEST(RunToolTest, HeldOutMidpoints) {
  using dyncc::runtime::tool::midpoints;
  using V = std::vector<int64_t>;
  EXPECT_EQ(midpoints({1, 100, 1000}, 1), (V{10, 316}));
  // The mean (6.9, a multiple of 4: 4) rounds onto the lower value: the
  // next multiple, 8, is still between.
  EXPECT_EQ(midpoints({4, 12}, 4), (V{8}));
  // Nothing strictly between 4 and 8 as a multiple of 4, nor 1 and 2: the
  // values themselves.
  EXPECT_EQ(midpoints({4, 8}, 4), (V{4, 8}));
  EXPECT_EQ(midpoints({1, 2}, 1), (V{1, 2}));
  // A pair with none between is skipped; the others are kept.
  EXPECT_EQ(midpoints({1, 2, 200}, 1), (V{20}));
  EXPECT_EQ(midpoints({7}, 1), (V{7}));
}

} // namespace
