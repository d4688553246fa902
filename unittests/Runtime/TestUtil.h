//===- TestUtil.h - Helpers shared by the run-time tests --------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Temporary directories, file helpers, the test kernel library and the
// manifests of the small models the tests build artifacts from.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_UNITTESTS_RUNTIME_TESTUTIL_H
#define DYNCC_UNITTESTS_RUNTIME_TESTUTIL_H

#include "dyncc/Runtime/Artifact.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dyncc::test {

/// A fresh directory, removed with its contents on destruction.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }
  /// The names of the entries in the directory, sorted.
  std::vector<std::string> list() const;

private:
  std::string dir;
};

/// True: $DYNCC_CUDA_DRIVER names the fake driver, which runs launches
/// with the test kernels.
bool fakeDriverSet();

std::string readFile(const std::string &path);
void writeFile(const std::string &path, const std::string &content);

/// The bytes of the test kernel shared object (TestKernels.c).
const std::string &kernelLibrary();

/// The 16x8 f32 weights of the linear model.
std::vector<float> linearWeights();

/// A model computing Y = relu(X * W + 1) and `t:copy` = X * W for
/// X: f32[B, 16], with two matmul variants (B <= 16, B >= 17).
std::string linearManifest();

/// `base` (linearManifest or its GPU version) with a split-K variant for
/// B <= 16: matmul_part over two halves of K into a workspace, then
/// sum_parts into the temp. `partCode` and `sumCode` are added to the two
/// kernels' objects (`, "gpu": {...}`).
std::string splitManifest(const std::string &base = linearManifest(),
                          const std::string &partCode = "",
                          const std::string &sumCode = "");
/// A model whose kernels record the ABI they see; input P: f32[A, 1, C],
/// output Q: i64[16].
std::string probeManifest();
/// A model with three inputs sharing symbols B and S (S even, S <= 32);
/// output O: f32[B] filled with S.
std::string bindingManifest();
/// A model whose size K is read from input X: i64[2] (X[0] binds K, X[1]
/// must be 3; K <= 50000 is a constraint): output O: f32[K] filled with K
/// through a temp sized after the bind, and P: f32[4] filled with 7
/// through a temp written before it.
std::string dataSizeManifest();
/// dataSizeManifest() with group fillk in three variants by K, the first for
/// K = 1 alone: fillk_one, fillk (2-100), fillk_large (101 and up).
std::string dataSizeVariantsManifest();

/// Serializes an artifact with `manifest`, the kernel library as `cpu.so`
/// (unless `withKernels` is false) and the linear weights as `w0`.
std::string buildArtifact(const std::string &manifest, bool withKernels = true);

/// Writes buildArtifact(...) to `path` via ArtifactWriter::write.
void writeArtifact(const std::string &path, const std::string &manifest,
                   bool withKernels = true);

/// Replaces the single occurrence of `from` in `text` (fails the test if it
/// does not occur exactly once).
std::string replaceOnce(const std::string &text, const std::string &from,
                        const std::string &to);

/// Deterministic pseudo-random floats in [-1, 1).
std::vector<float> randomFloats(size_t count, uint64_t seed);

/// Reference of the linear model.
void linearReference(const std::vector<float> &x, int64_t rows,
                     std::vector<float> &t, std::vector<float> &y);

} // namespace dyncc::test

#endif // DYNCC_UNITTESTS_RUNTIME_TESTUTIL_H
