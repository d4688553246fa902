//===- TestUtil.cpp - Helpers shared by the run-time tests ------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <dirent.h>
#include <ftw.h>
#include <unistd.h>

using namespace dyncc::test;

namespace {
/// Every CUDA session of the tests runs on the fake driver (FakeCuda.cpp),
/// whatever the machine has: set before any test loads a driver, which the
/// run-time does once per process.
const bool usesFakeDriver =
    ::setenv("DYNCC_CUDA_DRIVER", DYNCC_FAKE_CUDA_PATH, 1) == 0 &&
    ::setenv("DYNCC_FAKE_CUDA_HOST_CODE", DYNCC_TEST_KERNEL_PATH, 1) == 0;
} // namespace

bool dyncc::test::fakeDriverSet() { return usesFakeDriver; }

TempDir::TempDir() {
  std::string base = ::testing::TempDir();
  if (base.empty() || base.back() != '/')
    base += '/';
  std::string pattern = base + "dyncc-test-XXXXXX";
  char *made = ::mkdtemp(&pattern[0]);
  EXPECT_NE(made, nullptr) << "cannot create a temporary directory";
  dir = pattern;
}

TempDir::~TempDir() {
  ::nftw(
      dir.c_str(),
      [](const char *path, const struct stat *, int, struct FTW *) {
        return ::remove(path);
      },
      16, FTW_DEPTH | FTW_PHYS);
}

std::vector<std::string> TempDir::list() const {
  std::vector<std::string> names;
  if (DIR *handle = ::opendir(dir.c_str())) {
    while (struct dirent *entry = ::readdir(handle)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..")
        names.push_back(name);
    }
    ::closedir(handle);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string dyncc::test::readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void dyncc::test::writeFile(const std::string &path,
                            const std::string &content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

const std::string &dyncc::test::kernelLibrary() {
  static const std::string bytes = readFile(DYNCC_TEST_KERNEL_PATH);
  return bytes;
}

std::vector<float> dyncc::test::linearWeights() {
  std::vector<float> w(16 * 8);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(static_cast<int>((i * 37) % 23) - 11) / 16.0f;
  return w;
}

std::string dyncc::test::linearManifest() {
  return R"json({
  "format": 2,
  "producer": "dyncc-tests",
  "model": "linear_relu",
  "targets": ["cpu"],
  "symbols": [{"name": "B", "min": 1, "max": 4096, "divisor": 1}],
  "constraints": [],
  "inputs": [{"name": "X", "dtype": "f32", "shape": ["B", "16"], "buffer": 0}],
  "outputs": [
    {"name": "Y", "dtype": "f32", "shape": ["B", "8"], "buffer": 3},
    {"name": "t:copy", "dtype": "f32", "shape": ["B", "8"], "buffer": 5}
  ],
  "buffers": [
    {"id": 0, "kind": "input", "dtype": "f32", "shape": ["B", "16"]},
    {"id": 1, "kind": "weight", "dtype": "f32", "shape": ["16", "8"], "section": "w0"},
    {"id": 2, "kind": "temp", "dtype": "f32", "shape": ["B", "8"], "live": [0, 2]},
    {"id": 3, "kind": "output", "dtype": "f32", "shape": ["B", "8"]},
    {"id": 5, "kind": "output", "dtype": "f32", "shape": ["B", "8"]}
  ],
  "kernels": [
    {"name": "matmul_small",
     "params": [{"buffer": 0}, {"buffer": 1}, {"buffer": 2}, {"expr": "4"}],
     "grid": ["ceildiv(B, 4)", "1", "1"], "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_matmul"},
     "config": "4 rows per block"},
    {"name": "matmul_large",
     "params": [{"buffer": 0}, {"buffer": 1}, {"buffer": 2}, {"expr": "32"}],
     "grid": ["ceildiv(B, 32)", "1", "1"], "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_matmul"},
     "gpu": {"sm_90": {"section": "cpu.so", "entry": "matmul_large"}},
     "config": "32 rows per block"},
    {"name": "add1_relu",
     "params": [{"buffer": 2}, {"buffer": 3}, {"expr": "B*8"}],
     "grid": ["ceildiv(B*8, 64)", "1", "1"], "block": [64, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_add1_relu"}}
  ],
  "groups": [
    {"name": "matmul", "kind": "gemm", "variants": [
      {"kernel": 0, "when": [{"symbol": "B", "min": 1, "max": 16}]},
      {"kernel": 1, "when": [{"symbol": "B", "min": 17, "max": 4096}]}
    ], "problem": {"batch": "1", "m": "B", "n": "8", "k": "4",
                   "operand_bytes": 4, "output_bytes": 4}},
    {"name": "bias_relu", "kind": "elementwise", "variants": [{"kernel": 2, "when": []}]}
  ],
  "steps": [
    {"op": "launch", "group": 0},
    {"op": "launch", "group": 1},
    {"op": "copy", "src": 2, "dst": 5}
  ]
})json";
}

std::string dyncc::test::splitManifest(const std::string &base,
                                       const std::string &partCode,
                                       const std::string &sumCode) {
  std::string manifest = base;
  auto replace = [&](const std::string &from, const std::string &to) {
    size_t at = manifest.find(from);
    if (at == std::string::npos)
      throw std::logic_error("splitManifest: '" + from + "' not found");
    manifest.replace(at, from.size(), to);
  };
  replace(R"j({"id": 5, "kind": "output", "dtype": "f32", "shape": ["B", "8"]})j",
          R"j({"id": 5, "kind": "output", "dtype": "f32", "shape": ["B", "8"]},
    {"id": 6, "kind": "workspace", "dtype": "f32", "shape": ["2", "B", "8"],
     "live": [0, 0]})j");
  replace(R"j({"name": "add1_relu",)j",
          R"j({"name": "matmul_part",
     "params": [{"buffer": 0}, {"buffer": 1}, {"buffer": 6}, {"expr": "4"}],
     "grid": ["ceildiv(B, 4)", "2", "1"], "block": [32, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_matmul_part"})j" +
              partCode + R"j(},
    {"name": "sum_parts",
     "params": [{"buffer": 6}, {"buffer": 2}],
     "grid": ["ceildiv(B*8, 64)", "1", "1"], "block": [64, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_sum_parts"})j" +
              sumCode + R"j(},
    {"name": "add1_relu",)j");
  replace(R"j({"kernel": 2, "when": []})j", R"j({"kernel": 4, "when": []})j");
  replace(R"j({"kernel": 0, "when": [{"symbol": "B", "min": 1, "max": 16}]})j",
          R"j({"kernel": 2, "then": [3],
       "when": [{"symbol": "B", "min": 1, "max": 16}]})j");
  return manifest;
}

std::string dyncc::test::probeManifest() {
  return R"json({
  "format": 2, "producer": "dyncc-tests", "model": "probe", "targets": ["cpu"],
  "symbols": [{"name": "A", "min": 0, "max": 100}, {"name": "C", "min": 0, "max": 100}],
  "constraints": [],
  "inputs": [{"name": "P", "dtype": "f32", "shape": ["A", "1", "C"], "buffer": 0}],
  "outputs": [{"name": "Q", "dtype": "i64", "shape": ["16"], "buffer": 1}],
  "buffers": [
    {"id": 0, "kind": "input", "dtype": "f32", "shape": ["A", "1", "C"]},
    {"id": 1, "kind": "output", "dtype": "i64", "shape": ["16"]}
  ],
  "kernels": [
    {"name": "zero", "params": [{"buffer": 1}], "grid": ["1", "1", "1"],
     "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_zero"}},
    {"name": "probe", "params": [{"buffer": 0}, {"buffer": 1}, {"expr": "A*1000 + C"}],
     "grid": ["2", "3", "4"], "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_probe"}},
    {"name": "count", "params": [{"buffer": 1}], "grid": ["A", "1", "1"],
     "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_count"}}
  ],
  "groups": [
    {"name": "zero", "kind": "init", "variants": [{"kernel": 0, "when": []}]},
    {"name": "probe", "kind": "probe", "variants": [{"kernel": 1, "when": []}]},
    {"name": "count", "kind": "probe", "variants": [{"kernel": 2, "when": []}]}
  ],
  "steps": [{"op": "launch", "group": 0}, {"op": "launch", "group": 1},
            {"op": "launch", "group": 2}]
})json";
}

std::string dyncc::test::bindingManifest() {
  return R"json({
  "format": 2, "producer": "dyncc-tests", "model": "binding", "targets": ["cpu"],
  "symbols": [{"name": "B", "min": 1, "max": 8192, "divisor": 1},
              {"name": "S", "min": 2, "max": 64, "divisor": 2}],
  "constraints": [{"lhs": "S", "rhs": "min(S, 32)", "where": "test constraint"}],
  "inputs": [
    {"name": "X", "dtype": "f32", "shape": ["B", "64"], "buffer": 0},
    {"name": "Y", "dtype": "f32", "shape": ["B", "S"], "buffer": 1},
    {"name": "Z", "dtype": "f32", "shape": ["2*S"], "buffer": 2}
  ],
  "outputs": [{"name": "O", "dtype": "f32", "shape": ["B"], "buffer": 3}],
  "buffers": [
    {"id": 0, "kind": "input", "dtype": "f32", "shape": ["B", "64"]},
    {"id": 1, "kind": "input", "dtype": "f32", "shape": ["B", "S"]},
    {"id": 2, "kind": "input", "dtype": "f32", "shape": ["2*S"]},
    {"id": 3, "kind": "output", "dtype": "f32", "shape": ["B"]}
  ],
  "kernels": [
    {"name": "fill", "params": [{"buffer": 3}, {"expr": "S"}], "grid": ["1", "1", "1"],
     "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_fill"}}
  ],
  "groups": [{"name": "fill", "kind": "elementwise",
              "variants": [{"kernel": 0, "when": [{"symbol": "B", "min": 1, "max": 8192}]}]}],
  "steps": [{"op": "launch", "group": 0}]
})json";
}

std::string dyncc::test::dataSizeManifest() {
  return R"json({
  "format": 2, "producer": "dyncc-tests", "model": "data_sizes", "targets": ["cpu"],
  "symbols": [{"name": "K", "min": 1, "max": 100000, "divisor": 1}],
  "constraints": [{"lhs": "K", "rhs": "min(K, 50000)", "where": "test constraint"}],
  "inputs": [{"name": "X", "dtype": "i64", "shape": ["2"], "buffer": 0}],
  "outputs": [{"name": "O", "dtype": "f32", "shape": ["K"], "buffer": 1},
              {"name": "P", "dtype": "f32", "shape": ["4"], "buffer": 2}],
  "buffers": [
    {"id": 0, "kind": "input", "dtype": "i64", "shape": ["2"]},
    {"id": 1, "kind": "output", "dtype": "f32", "shape": ["K"]},
    {"id": 2, "kind": "output", "dtype": "f32", "shape": ["4"]},
    {"id": 3, "kind": "temp", "dtype": "f32", "shape": ["4"], "live": [0, 4]},
    {"id": 4, "kind": "temp", "dtype": "f32", "shape": ["K"], "live": [2, 3]}
  ],
  "kernels": [
    {"name": "fill7", "params": [{"buffer": 3}, {"expr": "7"}], "grid": ["1", "1", "1"],
     "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_fill"}},
    {"name": "fillk", "params": [{"buffer": 4}, {"expr": "K"}], "grid": ["1", "1", "1"],
     "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_fill"}}
  ],
  "groups": [{"name": "fill7", "kind": "elementwise", "variants": [{"kernel": 0, "when": []}]},
             {"name": "fillk", "kind": "elementwise", "variants": [{"kernel": 1, "when": []}]}],
  "steps": [{"op": "launch", "group": 0},
            {"op": "bind", "buffer": 0, "dims": ["K", "3"], "where": "test bind"},
            {"op": "launch", "group": 1},
            {"op": "copy", "src": 4, "dst": 1},
            {"op": "copy", "src": 3, "dst": 2}]
})json";
}

std::string dyncc::test::dataSizeVariantsManifest() {
  std::string kernel = R"(
     "block": [1, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_fill"}})";
  std::string fill = R"(,
    {"name": "NAME", "params": [{"buffer": 4}, {"expr": "K"}], "grid": ["1", "1", "1"],)";
  std::string one = replaceOnce(fill, "NAME", "fillk_one") + kernel;
  std::string large = replaceOnce(fill, "NAME", "fillk_large") + kernel;
  return replaceOnce(
      replaceOnce(dataSizeManifest(), kernel + "\n  ],",
                  kernel + one + large + "\n  ],"),
      R"({"kernel": 1, "when": []})",
      R"({"kernel": 2, "when": [{"symbol": "K", "min": 1, "max": 1}]},
         {"kernel": 1, "when": [{"symbol": "K", "min": 2, "max": 100}]},
         {"kernel": 3, "when": [{"symbol": "K", "min": 101, "max": 100000}]})");
}

std::string dyncc::test::buildArtifact(const std::string &manifest,
                                       bool withKernels) {
  runtime::ArtifactWriter writer;
  writer.setManifest(manifest);
  std::vector<float> w = linearWeights();
  writer.addSection("w0", w.data(), w.size() * sizeof(float));
  if (withKernels)
    writer.addSection("cpu.so", kernelLibrary());
  std::string bytes, error;
  EXPECT_TRUE(writer.serialize(bytes, error)) << error;
  return bytes;
}

void dyncc::test::writeArtifact(const std::string &path,
                                const std::string &manifest, bool withKernels) {
  runtime::ArtifactWriter writer;
  writer.setManifest(manifest);
  std::vector<float> w = linearWeights();
  writer.addSection("w0", w.data(), w.size() * sizeof(float));
  if (withKernels)
    writer.addSection("cpu.so", kernelLibrary());
  std::string error;
  EXPECT_TRUE(writer.write(path, error)) << error;
}

std::string dyncc::test::replaceOnce(const std::string &text,
                                     const std::string &from,
                                     const std::string &to) {
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "'" << from << "' not found";
  if (pos == std::string::npos)
    return text;
  EXPECT_EQ(text.find(from, pos + 1), std::string::npos)
      << "'" << from << "' occurs more than once";
  std::string result = text;
  result.replace(pos, from.size(), to);
  return result;
}

std::vector<float> dyncc::test::randomFloats(size_t count, uint64_t seed) {
  std::vector<float> values(count);
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  for (float &value : values) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    value = static_cast<float>(state >> 40) / 8388608.0f - 1.0f;
  }
  return values;
}

void dyncc::test::linearReference(const std::vector<float> &x, int64_t rows,
                                  std::vector<float> &t,
                                  std::vector<float> &y) {
  std::vector<float> w = linearWeights();
  t.assign(rows * 8, 0.0f);
  y.assign(rows * 8, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int n = 0; n < 8; ++n) {
      float sum = 0.0f;
      for (int k = 0; k < 16; ++k)
        sum += x[r * 16 + k] * w[k * 8 + n];
      t[r * 8 + n] = sum;
      float v = sum + 1.0f;
      y[r * 8 + n] = v > 0.0f ? v : 0.0f;
    }
  }
}
