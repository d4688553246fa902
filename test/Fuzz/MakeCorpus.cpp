//===- MakeCorpus.cpp - Seed inputs for the fuzzers -------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `dyncc-fuzz-corpus DIR` writes DIR/artifact/* (valid artifacts and their
// manifests) and DIR/npy/* (one .npy per dtype and a few shapes):
//
//   dyncc-fuzz-corpus seeds
//   dyncc-fuzz-artifact -max_total_time=30 corpus-artifact seeds/artifact
//   dyncc-fuzz-npy -max_total_time=30 corpus-npy seeds/npy
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/Npy.h"

#include <cstdio>
#include <string>
#include <vector>

#include <sys/stat.h>

using namespace dyncc::runtime;

namespace {
const char *kManifest = R"json({
  "format": 2,
  "producer": "dyncc 0.1.0",
  "model": "linear_relu",
  "targets": ["cpu", "sm_90"],
  "symbols": [{"name": "B", "min": 1, "max": 8192, "divisor": 1},
              {"name": "S", "min": 2, "max": 64, "divisor": 2}],
  "constraints": [{"lhs": "S", "rhs": "min(S, 32)", "where": "reshape"}],
  "inputs": [{"name": "X", "dtype": "f32", "shape": ["B", "64"], "buffer": 0},
             {"name": "M", "dtype": "i64", "shape": ["B", "S"], "buffer": 5},
             {"name": "Z", "dtype": "bf16", "shape": ["2*S"], "buffer": 6}],
  "outputs": [{"name": "Y", "dtype": "f32", "shape": ["B", "64"], "buffer": 3}],
  "buffers": [
    {"id": 0, "kind": "input", "dtype": "f32", "shape": ["B", "64"]},
    {"id": 1, "kind": "weight", "dtype": "f32", "shape": ["64", "64"], "section": "w0"},
    {"id": 4, "kind": "temp", "dtype": "f32", "shape": ["B", "64"], "live": [0, 1]},
    {"id": 3, "kind": "output", "dtype": "f32", "shape": ["B", "64"]},
    {"id": 5, "kind": "input", "dtype": "i64", "shape": ["B", "S"]},
    {"id": 6, "kind": "input", "dtype": "bf16", "shape": ["2*S"]},
    {"id": 7, "kind": "workspace", "dtype": "f32", "shape": ["2", "B", "64"], "live": [0, 0]}
  ],
  "kernels": [
    {"name": "g0_v0", "params": [{"buffer": 0}, {"buffer": 1}, {"buffer": 4}, {"expr": "B"}],
     "grid": ["ceildiv(B,32)", "2", "1"], "block": [32, 8, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "g0_v0_cpu"},
     "gpu": {"sm_90": {"section": "ptx.sm_90", "entry": "g0_v0"}},
     "config": "tile 32x64"},
    {"name": "g0_v1", "params": [{"buffer": 0}, {"buffer": 1}, {"buffer": 4}, {"expr": "floordiv(B, 2) + mod(B, 3)*max(S, 1)"}],
     "grid": ["ceildiv(B,128)", "min(S, 4)", "1"], "block": [128, 1, 1], "shared_bytes": 4096,
     "cpu": {"section": "cpu.so", "symbol": "g0_v1_cpu"}},
    {"name": "g0_v2_part", "params": [{"buffer": 0}, {"buffer": 1}, {"buffer": 7}],
     "grid": ["ceildiv(B,32)", "2", "2"], "block": [32, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "g0_v2_part_cpu"}, "config": "split_k 2"},
    {"name": "g0_v2_sum", "params": [{"buffer": 7}, {"buffer": 4}],
     "grid": ["ceildiv(B*64,128)", "1", "1"], "block": [128, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "g0_v2_sum_cpu"}}
  ],
  "groups": [{"name": "fused_matmul_add_relu", "kind": "gemm",
              "variants": [{"kernel": 0, "when": [{"symbol": "B", "min": 1, "max": 64}]},
                           {"kernel": 1, "when": [{"symbol": "B", "min": 65, "max": 8192},
                                                  {"symbol": "S", "min": 2, "max": 64}]},
                           {"kernel": 2, "then": [3], "when": [{"symbol": "B", "min": 1, "max": 16}]}]}],
  "steps": [{"op": "launch", "group": 0}, {"op": "copy", "src": 4, "dst": 3}]
})json";

bool writeFile(const std::string &path, const std::string &content) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return false;
  bool ok =
      std::fwrite(content.data(), 1, content.size(), file) == content.size();
  return std::fclose(file) == 0 && ok;
}
} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  ::mkdir(dir.c_str(), 0755);
  ::mkdir((dir + "/artifact").c_str(), 0755);
  ::mkdir((dir + "/npy").c_str(), 0755);
  bool ok = true;

  std::vector<float> weights(64 * 64, 0.25f);
  ArtifactWriter writer;
  writer.setManifest(kManifest);
  writer.addSection("w0", weights.data(), weights.size() * sizeof(float));
  writer.addSection("cpu.so", std::string("\x7f"
                                          "ELF not really",
                                          15));
  writer.addSection("ptx.sm_90", std::string(".version 8.0\n"));
  std::string bytes, error;
  ok &= writer.serialize(bytes, error);
  ok &= writeFile(dir + "/artifact/full.dyncc", bytes);
  ok &= writeFile(dir + "/artifact/manifest.json", kManifest);

  ArtifactWriter small;
  small.setManifest("{}");
  small.addSection("a", std::string("x"));
  ok &= small.serialize(bytes, error);
  ok &= writeFile(dir + "/artifact/small.dyncc", bytes);

  for (size_t t = 0; t < kNumDTypes; ++t) {
    DType type = static_cast<DType>(t);
    std::vector<int64_t> shape = {2, 3};
    std::string data(6 * dtypeSize(type), '\1');
    ok &= writeFile(dir + "/npy/" + dtypeName(type) + ".npy",
                    encodeNpy(type, shape, data.data(), data.size()));
  }
  ok &= writeFile(dir + "/npy/scalar.npy",
                  encodeNpy(DType::F64, {}, "\0\0\0\0\0\0\0\0", 8));
  ok &= writeFile(dir + "/npy/empty.npy", encodeNpy(DType::F32, {0, 5}, "", 0));
  if (!ok) {
    std::fprintf(stderr,
                 "dyncc-fuzz-corpus: error: cannot write the corpus in %s\n",
                 dir.c_str());
    return 1;
  }
  return 0;
}
