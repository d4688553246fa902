//===- ArtifactFuzzer.cpp - Fuzz the artifact reader ------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each input is tried three ways:
//  1. as an artifact, exactly as given;
//  2. as an artifact whose file size and checksum fields are patched to be
//     right, so that mutations reach the section table and the manifest;
//  3. as manifest JSON, parsed and validated on its own.
// Host code is never loaded (dlopen of arbitrary bytes is out of scope).
//
//===----------------------------------------------------------------------===//

#include "Executor.h"

#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/Json.h"
#include "dyncc/Runtime/Manifest.h"

#include <cstdint>
#include <cstring>
#include <string>

using namespace dyncc::runtime;

namespace {
void tryArtifact(const uint8_t *data, size_t size) {
  RuntimeError error;
  std::shared_ptr<const Model> model =
      Model::loadMemory(data, size, "fuzz.dyncc", error, /*loadCpuCode=*/false);
  if (!model) {
    if (error.message.empty() || error.message.find('\n') != std::string::npos)
      __builtin_trap(); // Errors are one non-empty line.
    return;
  }
  // Sessions must refuse to run without host code, not crash.
  std::unique_ptr<Session> session = Session::create(model, "cpu", error);
  if (session) {
    session->run(error);
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tryArtifact(data, size);

  if (size >= kArtifactHeaderSize) {
    std::string patched(reinterpret_cast<const char *>(data), size);
    uint64_t fileSize = size;
    uint64_t checksum = artifactChecksum(static_cast<uint8_t>(patched[8]),
                                         patched.data() + kArtifactHeaderSize,
                                         size - kArtifactHeaderSize);
    for (int i = 0; i < 8; ++i) {
      patched[16 + i] = static_cast<char>(fileSize >> (8 * i));
      patched[24 + i] = static_cast<char>(checksum >> (8 * i));
    }
    tryArtifact(reinterpret_cast<const uint8_t *>(patched.data()), size);
  }

  Manifest manifest;
  std::string error;
  std::string_view json(reinterpret_cast<const char *>(data), size);
  if (!parseManifest(json, manifest, error) && error.empty())
    __builtin_trap();
  return 0;
}
