//===- CudaSessionTest.cpp - Tests of the CUDA executor ---------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CUDA executor on the fake driver (FakeCuda.cpp): the code it picks per
// architecture, weights, inputs, outputs and the arena in device memory,
// launches (which the fake runs with the test kernels, so the numbers are
// checked), dynamic shared memory, driver failures, threads, and that
// everything it allocates is released.
//
//===----------------------------------------------------------------------===//

#include "ArenaPlan.h"
#include "Executor.h"
#include "TestUtil.h"

#include "dyncc/Runtime/Runtime.hpp"
#include "dyncc/Runtime/dyncc_runtime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <set>
#include <thread>

using namespace dyncc::runtime;
using namespace dyncc::test;

namespace {

/// The fake driver's test controls.
struct Fake {
  void (*set)(const char *, const char *);
  long (*count)(const char *);
  const char *(*lastLaunch)();
  int (*memAlloc)(uint64_t *, size_t);
  int (*memFree)(uint64_t);
  int (*setCurrent)(void *);
  int (*retain)(void **, int);
  int (*release)(int);
};

const Fake &fake() {
  static Fake f = [] {
    Fake result{};
    void *library = dlopen(DYNCC_FAKE_CUDA_PATH, RTLD_NOW);
    EXPECT_NE(library, nullptr) << dlerror();
    if (!library)
      return result;
    auto get = [&](auto &slot, const char *name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
          dlsym(library, name));
      EXPECT_NE(slot, nullptr) << name;
    };
    get(result.set, "fake_cuda_set");
    get(result.count, "fake_cuda_count");
    get(result.lastLaunch, "fake_cuda_last_launch");
    get(result.memAlloc, "cuMemAlloc_v2");
    get(result.memFree, "cuMemFree_v2");
    get(result.setCurrent, "cuCtxSetCurrent");
    get(result.retain, "cuDevicePrimaryCtxRetain");
    get(result.release, "cuDevicePrimaryCtxRelease_v2");
    return result;
  }();
  return f;
}

/// Sets a fake driver setting for the scope.
class FakeSetting {
public:
  FakeSetting(const char *key, const char *value) : key(key) {
    fake().set(key, value);
  }
  ~FakeSetting() { fake().set(key, nullptr); }

private:
  const char *key;
};

/// A PTX entry whose parameters are the flattened kernel ABI: `memrefs`
/// buffers of rank `rank` (two pointers each) and `ints` integers.
std::string ptxEntry(const std::string &name, int memrefs, int ints,
                     int rank = 2) {
  std::string text = ".visible .entry " + name + "(\n";
  int index = 0;
  auto param = [&](bool pointer) {
    text += std::string(index ? ",\n" : "") + "\t.param .u64 " +
            (pointer ? ".ptr .align 1 " : "") + name + "_param_" +
            std::to_string(index);
    ++index;
  };
  for (int m = 0; m < memrefs; ++m)
    for (int slot = 0; slot < 3 + 2 * rank; ++slot)
      param(slot < 2);
  for (int i = 0; i < ints; ++i)
    param(false);
  return text + "\n)\n{\n\tret;\n}\n";
}

/// A PTX module of the test entries, with the one byte of static shared
/// memory dyncc's kernels declare (the dynamic region's symbol).
std::string ptxModule(int arch) {
  return "//\n.version 8.0\n.target sm_" + std::to_string(arch) +
         "\n.address_size 64\n\n.shared .align 16 .b8 __dynamic_shmem__0;\n\n" +
         ptxEntry("test_matmul", 3, 1) + ptxEntry("test_add1_relu", 2, 1) +
         ptxEntry("test_fill", 1, 1, 1) +
         // Split-K: X, W and a rank-3 workspace (9 slots) then rows per
         // block; the workspace and the rank-2 sum.
         ptxEntry("test_matmul_part", 2, 9 + 1) +
         ptxEntry("test_sum_parts", 1, 9);
}

/// An ELF for EM_CUDA of architecture `arch` (ELF ABI version 8 keeps it
/// in bits 8-15 of e_flags, as ptxas writes) naming the entries, with two
/// section headers: the names, and test_add1_relu's static shared memory
/// (`.nv.shared.test_add1_relu`, one byte, as ptxas gives dyncc's kernels).
std::string cubinModule(int arch) {
  std::string names = std::string("test_matmul") + '\0' + "test_add1_relu" +
                      '\0' + "test_fill" + '\0';
  uint32_t sharedName = names.size();
  names += std::string(".nv.shared.test_add1_relu") + '\0';
  std::string elf(64, '\0');
  std::memcpy(&elf[0], "\x7f" "ELF", 4);
  elf[4] = 2; // 64-bit
  elf[5] = 1; // little-endian
  elf[6] = 1;
  elf[8] = 8; // ABI version
  uint16_t machine = 190;
  std::memcpy(&elf[18], &machine, 2);
  uint64_t sectionHeaders = 64 + names.size();
  std::memcpy(&elf[40], &sectionHeaders, 8);
  uint32_t flags = static_cast<uint32_t>(arch) << 8;
  std::memcpy(&elf[48], &flags, 4);
  uint16_t entrySize = 64, entries = 2, namesIndex = 0;
  std::memcpy(&elf[58], &entrySize, 2);
  std::memcpy(&elf[60], &entries, 2);
  std::memcpy(&elf[62], &namesIndex, 2);
  // Section 0: the string table (sh_type 3) over `names`; section 1: the
  // shared memory (sh_type 8, NOBITS) of one byte.
  std::string headers(2 * entrySize, '\0');
  uint32_t stringTable = 3, noBits = 8;
  uint64_t namesOffset = 64, namesSize = names.size(), sharedSize = 1;
  std::memcpy(&headers[4], &stringTable, 4);
  std::memcpy(&headers[24], &namesOffset, 8);
  std::memcpy(&headers[32], &namesSize, 8);
  std::memcpy(&headers[64], &sharedName, 4);
  std::memcpy(&headers[64 + 4], &noBits, 4);
  std::memcpy(&headers[64 + 32], &sharedSize, 8);
  return elf + names + headers;
}

/// The linear model of TestUtil with GPU code: sm_90 as PTX and cubin,
/// sm_80 as PTX only. `sharedBytes`: the add kernel's dynamic shared memory.
std::string gpuManifest(int64_t sharedBytes = 0) {
  std::string gpu = R"("gpu": {
       "sm_80": {"section": "ptx.sm_80", "entry": "ENTRY"},
       "sm_90": {"section": "ptx.sm_90", "entry": "ENTRY", "cubin": "cubin.sm_90",
                 "resources": {"registers": 32, "barriers": 0, "shared_bytes": 0,
                               "stack_bytes": 0, "spill_store_bytes": 0,
                               "spill_load_bytes": 0}}})";
  auto code = [&](const std::string &entry) {
    std::string text = gpu;
    size_t at;
    while ((at = text.find("ENTRY")) != std::string::npos)
      text.replace(at, 5, entry);
    return text;
  };
  return R"json({
  "format": 2, "producer": "dyncc-tests", "model": "linear_relu",
  "targets": ["cpu", "sm_80", "sm_90"],
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
     "grid": ["ceildiv(B, 4)", "1", "1"], "block": [32, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_matmul"},
     )json" + code("test_matmul") + R"json(},
    {"name": "matmul_large",
     "params": [{"buffer": 0}, {"buffer": 1}, {"buffer": 2}, {"expr": "32"}],
     "grid": ["ceildiv(B, 32)", "1", "1"], "block": [128, 1, 1], "shared_bytes": 0,
     "cpu": {"section": "cpu.so", "symbol": "test_matmul"},
     )json" + code("test_matmul") + R"json(},
    {"name": "add1_relu",
     "params": [{"buffer": 2}, {"buffer": 3}, {"expr": "B*8"}],
     "grid": ["ceildiv(B*8, 64)", "1", "1"], "block": [64, 1, 1],
     "shared_bytes": )json" + std::to_string(sharedBytes) + R"json(,
     "cpu": {"section": "cpu.so", "symbol": "test_add1_relu"},
     )json" + code("test_add1_relu") + R"json(}
  ],
  "groups": [
    {"name": "matmul", "kind": "gemm", "variants": [
      {"kernel": 0, "when": [{"symbol": "B", "min": 1, "max": 16}]},
      {"kernel": 1, "when": [{"symbol": "B", "min": 17, "max": 4096}]}
    ]},
    {"name": "bias_relu", "kind": "elementwise", "variants": [{"kernel": 2, "when": []}]}
  ],
  "steps": [
    {"op": "launch", "group": 0},
    {"op": "launch", "group": 1},
    {"op": "copy", "src": 2, "dst": 5}
  ]
})json";
}

/// `calibration`: the text of a calibration section, if any.
std::string gpuArtifact(const std::string &manifest,
                        const std::string &calibration = "") {
  ArtifactWriter writer;
  writer.setManifest(manifest);
  if (!calibration.empty())
    writer.addSection("calibration", calibration);
  std::vector<float> w = linearWeights();
  writer.addSection("w0", w.data(), w.size() * sizeof(float));
  writer.addSection("cpu.so", kernelLibrary());
  writer.addSection("ptx.sm_80", ptxModule(80));
  writer.addSection("ptx.sm_90", ptxModule(90));
  writer.addSection("cubin.sm_90", cubinModule(90));
  std::string bytes, error;
  EXPECT_TRUE(writer.serialize(bytes, error)) << error;
  return bytes;
}

std::shared_ptr<const Model> loadGpuModel(int64_t sharedBytes = 0) {
  std::string bytes = gpuArtifact(gpuManifest(sharedBytes));
  RuntimeError error;
  auto model =
      Model::loadMemory(bytes.data(), bytes.size(), "gpu.dyncc", error);
  EXPECT_NE(model, nullptr) << error.message;
  return model;
}

std::unique_ptr<Session> cudaSession(std::shared_ptr<const Model> model,
                                     const char *device = "cuda:0") {
  RuntimeError error;
  auto session = Session::create(std::move(model), device, error);
  EXPECT_NE(session, nullptr) << error.message;
  return session;
}

/// A session that launches kernel by kernel (DYNCC_CUDA_GRAPHS=0), so that
/// runs of one shape make the same driver calls.
std::unique_ptr<Session> kernelByKernelSession() {
  setenv("DYNCC_CUDA_GRAPHS", "0", 1);
  auto session = cudaSession(loadGpuModel());
  unsetenv("DYNCC_CUDA_GRAPHS");
  return session;
}

/// Runs the linear model at `rows` from host memory; checks both outputs.
void runLinear(Session &session, int64_t rows, uint64_t seed) {
  std::vector<float> x = randomFloats(rows * 16, seed);
  int64_t shape[2] = {rows, 16};
  RuntimeError error;
  ASSERT_TRUE(session.setInput(0, x.data(), shape, 2, error)) << error.message;
  ASSERT_TRUE(session.run(error)) << error.message;
  std::vector<float> t, y;
  linearReference(x, rows, t, y);
  for (size_t output = 0; output < 2; ++output) {
    const std::vector<float> &expected = output == 0 ? y : t;
    auto *actual =
        static_cast<const float *>(session.hostOutput(output, error));
    ASSERT_NE(actual, nullptr) << error.message;
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_NEAR(actual[i], expected[i],
                  1e-5f + 1e-5f * std::fabs(expected[i]))
          << "output " << output << " element " << i << " at B = " << rows;
  }
}

/// Checks that the fake holds nothing of the run-time's.
void expectNothingHeld() {
  for (const char *what :
       {"live_allocations", "live_pinned", "live_modules", "live_streams",
        "live_events", "live_graphs", "retained_contexts"})
    EXPECT_EQ(fake().count(what), 0) << what;
}

TEST(CudaSessionTest, LinearModelMatchesReference) {
  ASSERT_TRUE(fakeDriverSet());
  long cubins = fake().count("cubin_loads");
  {
    auto session = cudaSession(loadGpuModel());
    ASSERT_NE(session, nullptr);
    EXPECT_TRUE(session->onCuda());
    EXPECT_EQ(session->deviceDescription(),
              "cuda:0 (Fake GPU 0 (sm_90), sm_90, driver 13.0): 3 kernels "
              "from cubin");
    EXPECT_EQ(fake().count("cubin_loads"), cubins + 1); // one module
    for (int64_t rows : {1, 7, 64, 1000, 16, 17, 4096, 3}) {
      SCOPED_TRACE(rows);
      long launches = fake().count("launches");
      long copies = fake().count("copies_on_device");
      long inputs = fake().count("copies_in");
      runLinear(*session, rows, static_cast<uint64_t>(rows));
      EXPECT_STREQ(session->groupVariant(0),
                   rows <= 16 ? "matmul_small" : "matmul_large");
      EXPECT_EQ(fake().count("launches"), launches + 2);
      EXPECT_EQ(session->launchCount(), 2u);
      EXPECT_EQ(fake().count("copies_on_device"), copies + 1);
      EXPECT_EQ(fake().count("copies_in"), inputs + 1);
      // The last launch: the add kernel, grid ceil(B*8/64) of 64 threads.
      EXPECT_EQ(std::string(fake().lastLaunch()),
                "test_add1_relu grid " + std::to_string((rows * 8 + 63) / 64) +
                    " 1 1 block 64 1 1 shared 0");
    }
    // The arena is device memory, the live-set peak at the last shape.
    EXPECT_EQ(session->arenaPlacement().size, 128u); // 3 x 32, aligned to 64
    EXPECT_GE(session->arenaCapacity(), 4096u * 32);
  }
  expectNothingHeld();
}

// A split-K variant on the device: both kernels launch in its step, are
// captured into the graph together, and its workspace is in the arena only
// at the sizes that choose it.
TEST(CudaSessionTest, SplitVariantLaunchesBothKernels) {
  FakeSetting arch("DYNCC_FAKE_CUDA_ARCH", "86"); // PTX: capturable
  auto code = [](const std::string &entry) {
    return R"(, "gpu": {"sm_80": {"section": "ptx.sm_80", "entry": ")" +
           entry + R"("}})";
  };
  std::string manifest = splitManifest(
      gpuManifest(), code("test_matmul_part"), code("test_sum_parts"));
  std::string bytes = gpuArtifact(manifest);
  RuntimeError error;
  auto model = Model::loadMemory(bytes.data(), bytes.size(), "split.dyncc",
                                 error);
  ASSERT_NE(model, nullptr) << error.message;
  {
    auto session = cudaSession(model);
    ASSERT_NE(session, nullptr);
    for (int64_t rows : {5, 5, 5, 40, 40, 40, 13}) {
      SCOPED_TRACE(rows);
      long launches = fake().count("launches");
      runLinear(*session, rows, static_cast<uint64_t>(rows) + 3);
      bool split = rows <= 16;
      EXPECT_STREQ(session->groupVariant(0),
                   split ? "matmul_part" : "matmul_large");
      EXPECT_EQ(session->launchCount(), split ? 3u : 2u);
      EXPECT_EQ(fake().count("launches"), launches + (split ? 3 : 2));
      uint64_t temp = (static_cast<uint64_t>(rows) * 32 + 63) / 64 * 64;
      EXPECT_EQ(session->arenaPlacement().size,
                temp + (split ? static_cast<uint64_t>(rows) * 64 : 0));
    }
    // 5 rows: direct, then captured and replayed, then replayed; 40 rows
    // likewise.
    EXPECT_EQ(session->graphCaptures(), 2u);
    EXPECT_EQ(session->graphReplays(), 4u);
  }
  expectNothingHeld();
}

TEST(CudaSessionTest, OutputsAreCopiedToTheHostOncePerRun) {
  auto session = cudaSession(loadGpuModel());
  ASSERT_NE(session, nullptr);
  runLinear(*session, 5, 1);
  long copies = fake().count("copies_out");
  RuntimeError error;
  EXPECT_NE(session->hostOutput(0, error), nullptr);
  EXPECT_NE(session->hostOutput(1, error), nullptr);
  EXPECT_EQ(fake().count("copies_out"), copies);
  runLinear(*session, 6, 2);
  EXPECT_EQ(fake().count("copies_out"), copies + 2);
}

TEST(CudaSessionTest, CodeIsChosenForTheDevicesArchitecture) {
  {
    // An sm_86 runs neither the sm_90 cubin nor its PTX: the driver
    // compiles the sm_80 PTX, once, and the session says so.
    FakeSetting arch("DYNCC_FAKE_CUDA_ARCH", "86");
    long ptx = fake().count("ptx_loads");
    auto model = loadGpuModel();
    auto session = cudaSession(model);
    ASSERT_NE(session, nullptr);
    auto second = cudaSession(model);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(fake().count("ptx_loads"), ptx + 1);
    EXPECT_EQ(session->deviceDescription(),
              "cuda:0 (Fake GPU 0 (sm_86), sm_86, driver 13.0): 0 kernels "
              "from cubin, 3 kernels compiled by the driver at load from the "
              "PTX of sm_80");
    runLinear(*session, 33, 4);
    runLinear(*second, 2, 5);
  }
  {
    FakeSetting arch("DYNCC_FAKE_CUDA_ARCH", "75");
    RuntimeError error;
    EXPECT_EQ(Session::create(loadGpuModel(), "cuda", error), nullptr);
    EXPECT_EQ(error.code, DYNCC_ERROR_UNSUPPORTED);
    EXPECT_EQ(error.message,
              "cuda:0: kernel 'matmul_small' has no code for sm_75 (the "
              "artifact's targets: cpu, sm_80, sm_90)");
  }
  expectNothingHeld();
}

TEST(CudaSessionTest, DriverRejectingTheCodeIsAnError) {
  // A cubin the device cannot run (the manifest claims sm_90; the ELF is an
  // sm_100 one) is the driver's error, with the section named.
  ArtifactWriter writer;
  RuntimeError error;
  std::string bytes, message;
  writer.setManifest(gpuManifest());
  std::vector<float> w = linearWeights();
  writer.addSection("w0", w.data(), w.size() * sizeof(float));
  writer.addSection("cpu.so", kernelLibrary());
  writer.addSection("ptx.sm_80", ptxModule(80));
  writer.addSection("ptx.sm_90", ptxModule(90));
  writer.addSection("cubin.sm_90", cubinModule(100));
  ASSERT_TRUE(writer.serialize(bytes, message)) << message;
  auto model =
      Model::loadMemory(bytes.data(), bytes.size(), "bad.dyncc", error);
  ASSERT_NE(model, nullptr) << error.message;
  EXPECT_EQ(Session::create(model, "cuda:0", error), nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
  EXPECT_EQ(error.message,
            "cuda:0: loading section 'cubin.sm_90' for sm_90: "
            "cuModuleLoadDataEx failed: CUDA_ERROR_NO_BINARY_FOR_GPU (fake "
            "driver error)");
  expectNothingHeld();
}

TEST(CudaSessionTest, DynamicSharedMemoryAbove48KBIsOptedInto) {
  long raises = fake().count("shared_raises");
  {
    auto session = cudaSession(loadGpuModel(100 * 1024));
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(fake().count("shared_raises"), raises + 1);
    // The fake rejects a launch above the function's limit.
    runLinear(*session, 9, 3);
    EXPECT_EQ(std::string(fake().lastLaunch()),
              "test_add1_relu grid 2 1 1 block 64 1 1 shared 102400");
  }
  FakeSetting limit("DYNCC_FAKE_CUDA_SHARED_OPTIN", "65536");
  RuntimeError error;
  EXPECT_EQ(Session::create(loadGpuModel(100 * 1024), "cuda:0", error),
            nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(error.message,
            "cuda:0: kernel 'add1_relu' needs 102401 bytes of shared memory "
            "per block (1 static, 102400 dynamic); sm_90 allows 65536");
  expectNothingHeld();
}

// A kernel's static shared memory counts toward the 48 KB a block gets
// without opting in: 48 KB of dynamic shared memory beside dyncc's one
// static byte needs the limit raised, from the cubin (sm_90) and from the
// PTX (sm_80) alike. (On the H200 such kernels failed to launch with
// CUDA_ERROR_INVALID_VALUE when only the dynamic bytes were compared.)
TEST(CudaSessionTest, StaticSharedMemoryCountsTowards48KB) {
  for (const char *arch : {"90", "80"}) {
    SCOPED_TRACE(arch);
    FakeSetting device("DYNCC_FAKE_CUDA_ARCH", arch);
    long raises = fake().count("shared_raises");
    auto session = cudaSession(loadGpuModel(48 * 1024));
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(fake().count("shared_raises"), raises + 1);
    runLinear(*session, 9, 3);
    EXPECT_EQ(std::string(fake().lastLaunch()),
              "test_add1_relu grid 2 1 1 block 64 1 1 shared 49152");
  }
  expectNothingHeld();
}

TEST(CudaSessionTest, DeviceInputsAndOutputs) {
  // An sm_86 loads PTX, whose pointer parameters the fake checks.
  FakeSetting arch("DYNCC_FAKE_CUDA_ARCH", "86");
  auto model = loadGpuModel();
  auto session = cudaSession(model);
  ASSERT_NE(session, nullptr);
  // Device memory of the fake is host memory: fill it directly.
  void *context = nullptr;
  ASSERT_EQ(fake().retain(&context, 0), 0);
  ASSERT_EQ(fake().setCurrent(context), 0);
  const int64_t rows = 23;
  uint64_t input = 0;
  ASSERT_EQ(fake().memAlloc(&input, rows * 16 * 4), 0);
  std::vector<float> x = randomFloats(rows * 16, 7);
  std::memcpy(reinterpret_cast<void *>(input), x.data(), x.size() * 4);

  long copiesIn = fake().count("copies_in");
  int64_t shape[2] = {rows, 16};
  RuntimeError error;
  ASSERT_TRUE(session->setInput(0, reinterpret_cast<const void *>(input),
                                shape, 2, error, /*onDevice=*/true))
      << error.message;
  ASSERT_TRUE(session->run(error)) << error.message;
  EXPECT_EQ(fake().count("copies_in"), copiesIn); // used in place
  std::vector<float> t, y;
  linearReference(x, rows, t, y);
  uint64_t output = session->deviceOutput(0);
  ASSERT_NE(output, 0u);
  auto *device = reinterpret_cast<const float *>(output);
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(device[i], y[i], 1e-5f + 1e-5f * std::fabs(y[i])) << i;
  double milliseconds = -1;
  EXPECT_TRUE(session->deviceTime(milliseconds, error)) << error.message;
  EXPECT_GE(milliseconds, 0.0);

  // A device pointer the fake did not allocate is caught by the driver.
  uint64_t bogus = input + (1u << 30);
  ASSERT_TRUE(session->setInput(0, reinterpret_cast<const void *>(bogus),
                                shape, 2, error, true));
  EXPECT_FALSE(session->run(error));
  EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
  EXPECT_EQ(error.message.rfind("cuda:0: cuLaunchKernel of kernel "
                                "'matmul_large' failed: "
                                "CUDA_ERROR_INVALID_VALUE",
                                0),
            0u)
      << error.message;
  EXPECT_EQ(session->deviceOutput(0), 0u); // no results after a failure
  fake().setCurrent(context);
  EXPECT_EQ(fake().memFree(input), 0);
  EXPECT_EQ(fake().release(0), 0);

  // Device memory and streams need a CUDA session.
  RuntimeError cpuError;
  auto cpu = Session::create(model, "cpu", cpuError);
  ASSERT_NE(cpu, nullptr);
  EXPECT_FALSE(cpu->setInput(0, x.data(), shape, 2, cpuError, true));
  EXPECT_EQ(cpuError.message, "input 'X': device memory needs a CUDA session "
                              "(this one is on the cpu)");
  EXPECT_FALSE(cpu->setStream(nullptr, cpuError));
  EXPECT_FALSE(cpu->deviceTime(milliseconds, cpuError));
  EXPECT_EQ(cpuError.code, DYNCC_ERROR_UNSUPPORTED);
}

TEST(CudaSessionTest, BindsSizesFromDeviceData) {
  // TestUtil's data-size model with sm_90 code: the sizes are copied back
  // from the device at the bind step, and the arena grows on the device
  // with the temp written before it kept.
  std::string manifest = dataSizeManifest();
  manifest = replaceOnce(manifest, "\"targets\": [\"cpu\"]",
                         "\"targets\": [\"cpu\", \"sm_90\"]");
  const std::string cpu = "\"cpu\": {\"section\": \"cpu.so\", \"symbol\": "
                          "\"test_fill\"}";
  const std::string gpu =
      cpu + ", \"gpu\": {\"sm_90\": {\"section\": \"ptx.sm_90\", \"entry\": "
            "\"test_fill\"}}";
  for (size_t at = manifest.find(cpu); at != std::string::npos;
       at = manifest.find(cpu, at + gpu.size()))
    manifest.replace(at, cpu.size(), gpu);
  std::string bytes = gpuArtifact(manifest);
  RuntimeError error;
  auto model = Model::loadMemory(bytes.data(), bytes.size(), "sizes.dyncc",
                                 error);
  ASSERT_NE(model, nullptr) << error.message;
  auto session = cudaSession(model);
  ASSERT_NE(session, nullptr);
  // The input stays bound after the loop: it outlives it.
  int64_t x[2] = {0, 3};
  int64_t shape[1] = {2};
  for (int64_t k : {1, 3000, 7, 40000}) {
    x[0] = k;
    ASSERT_TRUE(session->setInput(0, x, shape, 1, error)) << error.message;
    ASSERT_TRUE(session->run(error)) << error.message;
    EXPECT_EQ(session->outputShape(0), std::vector<int64_t>{k});
    auto *o = static_cast<const float *>(session->hostOutput(0, error));
    ASSERT_NE(o, nullptr) << error.message;
    for (int64_t i = 0; i < k; ++i)
      ASSERT_EQ(o[i], static_cast<float>(k)) << i;
    auto *p = static_cast<const float *>(session->hostOutput(1, error));
    ASSERT_NE(p, nullptr) << error.message;
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(p[i], 7.0f) << "k = " << k;
    EXPECT_LE(session->arenaPlacement().size, session->arenaCapacity());
  }
  // The launches after the bind step depend on the sizes read: no graph
  // replays them, however often the same input comes.
  EXPECT_EQ(session->graphsOff(),
            "the plan binds sizes from data in the middle of a run");
  ASSERT_TRUE(session->run(error)) << error.message;
  ASSERT_TRUE(session->run(error)) << error.message;
  EXPECT_EQ(session->graphCaptures(), 0u);
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuMemcpyDtoHAsync_v2");
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.message,
              "cuda:0: steps[1]: cuMemcpyDtoHAsync of sizes failed: "
              "CUDA_ERROR_UNKNOWN (fake driver error)");
  }
  // A fresh session whose buffers grow at the bind step: the allocations
  // (the output, sized first, fails first) and the copy of the temps written
  // before the bind into the grown arena are checked.
  auto grow = [&](const char *entry) {
    auto fresh = cudaSession(model);
    x[0] = 1;
    EXPECT_TRUE(fresh->setInput(0, x, shape, 1, error) && fresh->run(error))
        << error.message;
    x[0] = 40000;
    EXPECT_TRUE(fresh->setInput(0, x, shape, 1, error)) << error.message;
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", entry);
    EXPECT_FALSE(fresh->run(error));
    return error.message;
  };
  EXPECT_EQ(grow("cuMemAlloc_v2"),
            "cuda:0: cuMemAlloc of 160000 bytes for output 'O' failed: "
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  EXPECT_EQ(grow("cuMemcpyDtoDAsync_v2"),
            "cuda:0: cuMemcpyDtoDAsync of the arena failed: CUDA_ERROR_UNKNOWN "
            "(fake driver error)");
}

TEST(CudaSessionTest, PtxParametersMatchTheManifest) {
  // A kernel whose params flatten to other slots than its PTX entry takes
  // is refused at load, before any launch could read past its slots.
  std::string manifest = replaceOnce(
      gpuManifest(), "\"params\": [{\"buffer\": 2}, {\"buffer\": 3}, "
                     "{\"expr\": \"B*8\"}]",
      "\"params\": [{\"buffer\": 2}, {\"buffer\": 3}]");
  std::string bytes = gpuArtifact(manifest);
  RuntimeError error;
  EXPECT_EQ(Model::loadMemory(bytes.data(), bytes.size(), "gpu.dyncc", error),
            nullptr);
  EXPECT_EQ(error.message,
            "gpu.dyncc: manifest: kernels[2].gpu.sm_80.entry: entry "
            "'test_add1_relu' of section 'ptx.sm_80' takes 15 parameters, but "
            "the kernel's params flatten to 14");
}

TEST(CudaSessionTest, DriverFailuresAreErrors) {
  auto model = loadGpuModel();
  RuntimeError error;
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuMemAlloc_v2");
    EXPECT_EQ(Session::create(model, "cuda:0", error), nullptr);
    EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
    EXPECT_EQ(error.message,
              "cuda:0: cuMemAlloc of weight buffer 1 (512 bytes) failed: "
              "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  }
  auto session = cudaSession(model);
  ASSERT_NE(session, nullptr);
  std::vector<float> x = randomFloats(40 * 16, 1);
  int64_t shape[2] = {40, 16};
  ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuLaunchKernel");
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
    EXPECT_EQ(error.message,
              "cuda:0: cuLaunchKernel of kernel 'matmul_large' failed: "
              "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (fake driver error)");
  }
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuMemAlloc_v2");
    int64_t bigger[2] = {4000, 16};
    std::vector<float> big(4000 * 16, 0.5f);
    ASSERT_TRUE(session->setInput(0, big.data(), bigger, 2, error));
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.message,
              "cuda:0: cuMemAlloc of 256000 bytes for input 'X' failed: "
              "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
  }
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuStreamSynchronize");
    ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.message, "cuda:0: cuStreamSynchronize failed: "
                             "CUDA_ERROR_UNKNOWN (fake driver error)");
  }
  // The session recovers once the driver does.
  runLinear(*session, 40, 1);
  EXPECT_EQ(Session::create(model, "cuda:1", error), nullptr);
  EXPECT_EQ(error.message,
            "cuda:1: no such device (this machine has 1 CUDA device)");
  EXPECT_EQ(error.code, DYNCC_ERROR_INVALID_ARGUMENT);
}

TEST(CudaSessionTest, MoreDriverFailuresAreErrors) {
  RuntimeError error;
  auto expectCreateFails = [&](const char *entry, const std::string &message) {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", entry);
    EXPECT_EQ(Session::create(loadGpuModel(), "cuda:0", error), nullptr)
        << entry;
    EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
    EXPECT_EQ(error.message, message);
  };
  expectCreateFails("cuDevicePrimaryCtxRetain",
                    "cuda:0: cuDevicePrimaryCtxRetain failed: "
                    "CUDA_ERROR_UNKNOWN (fake driver error)");
  expectCreateFails("cuMemcpyHtoDAsync_v2",
                    "cuda:0: cuMemcpyHtoDAsync failed: CUDA_ERROR_UNKNOWN "
                    "(fake driver error)");
  expectCreateFails("cuStreamCreate", "cuda:0: cuStreamCreate failed: "
                                      "CUDA_ERROR_UNKNOWN (fake driver error)");
  expectNothingHeld();

  // While the model is loaded (by `session`), copies in a run fail alone.
  auto session = cudaSession(loadGpuModel());
  ASSERT_NE(session, nullptr);
  double milliseconds;
  EXPECT_FALSE(session->deviceTime(milliseconds, error));
  EXPECT_EQ(error.message, "no successful run to time yet");
  std::vector<float> x = randomFloats(9 * 16, 2);
  int64_t shape[2] = {9, 16};
  ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuMemcpyHtoDAsync_v2");
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.message, "cuda:0: cuMemcpyHtoDAsync of input 'X' failed: "
                             "CUDA_ERROR_UNKNOWN (fake driver error)");
  }
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuMemcpyDtoDAsync_v2");
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.message, "cuda:0: steps[2]: cuMemcpyDtoDAsync failed: "
                             "CUDA_ERROR_UNKNOWN (fake driver error)");
  }
  ASSERT_TRUE(session->run(error)) << error.message;
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuMemcpyDtoHAsync_v2");
    EXPECT_EQ(session->hostOutput(0, error), nullptr);
    EXPECT_EQ(error.message, "cuda:0: cuMemcpyDtoHAsync of output 'Y' failed: "
                             "CUDA_ERROR_UNKNOWN (fake driver error)");
  }
  // The copy is tried again, and succeeds, on the next request.
  EXPECT_NE(session->hostOutput(0, error), nullptr) << error.message;
}

// The device queries at load: each failure is a one-line DEVICE error that
// names the call, nothing is left held, and a session loads once the driver
// answers again.
// Driver timing splits a run's host time: the calls into the driver are
// counted and timed (2 launches, the input's copy in, a copy on the device
// and the start and end events of a warm run), nothing without it, and a
// CPU session refuses it.
TEST(CudaSessionTest, DriverTimingCountsTheRunsDriverCalls) {
  // Kernel by kernel (with graphs, a warm run is one launch of its graph).
  auto session = kernelByKernelSession();
  ASSERT_NE(session, nullptr);
  RuntimeError error;
  double microseconds = -1;
  uint64_t calls = 1;
  runLinear(*session, 5, 1);
  session->lastDriverTime(microseconds, calls);
  EXPECT_EQ(microseconds, 0);
  EXPECT_EQ(calls, 0u);
  ASSERT_TRUE(session->setDriverTiming(true, error)) << error.message;
  runLinear(*session, 5, 2);
  session->lastDriverTime(microseconds, calls);
  // The enqueue's: the input's copy and the event after it, three launches
  // and the run's two events. No wait for the last run's input copy:
  // runLinear read that run's outputs, which synchronized the stream.
  EXPECT_EQ(calls, 7u);
  EXPECT_GT(microseconds, 0);
  // A shape whose buffers grow: the allocations (and the frees of the
  // smaller buffers) are driver calls too.
  runLinear(*session, 900, 3);
  session->lastDriverTime(microseconds, calls);
  EXPECT_GT(calls, 7u);
  ASSERT_TRUE(session->setDriverTiming(false, error)) << error.message;
  runLinear(*session, 5, 4);
  session->lastDriverTime(microseconds, calls);
  EXPECT_EQ(calls, 0u);

  auto cpu = Session::create(loadGpuModel(), "cpu", error);
  ASSERT_NE(cpu, nullptr) << error.message;
  EXPECT_FALSE(cpu->setDriverTiming(true, error));
  EXPECT_EQ(error.code, DYNCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(error.message,
            "driver timing needs a CUDA session; this one runs on the cpu");
}

TEST(CudaSessionTest, DeviceQueryFailuresAreErrors) {
  RuntimeError error;
  for (const char *entry :
       {"cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet",
        "cuDeviceGetName", "cuDeviceGetAttribute"}) {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", entry);
    EXPECT_EQ(Session::create(loadGpuModel(), "cuda:0", error), nullptr)
        << entry;
    EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE) << entry;
    EXPECT_EQ(error.message, std::string("cuda:0: ") + entry +
                                 " failed: CUDA_ERROR_UNKNOWN (fake driver "
                                 "error)");
  }
  {
    // The opt-in shared-memory limit, queried for a kernel above 48 KB.
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuDeviceGetAttribute:97");
    EXPECT_EQ(Session::create(loadGpuModel(100 * 1024), "cuda:0", error),
              nullptr);
    EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
    EXPECT_EQ(error.message, "cuda:0: cuDeviceGetAttribute failed: "
                             "CUDA_ERROR_UNKNOWN (fake driver error)");
  }
  expectNothingHeld();
  auto session = cudaSession(loadGpuModel());
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->deviceDescription().rfind(
                "cuda:0 (Fake GPU 0 (sm_90), sm_90, driver 13.0): ", 0),
            0u)
      << session->deviceDescription();
}

TEST(CudaSessionTest, EventAndAttributeFailuresAreErrors) {
  RuntimeError error;
  auto failure = [](const char *what) {
    return std::string("cuda:0: ") + what +
           " failed: CUDA_ERROR_UNKNOWN (fake driver error)";
  };
  {
    // The session's start and end events.
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuEventCreate");
    EXPECT_EQ(Session::create(loadGpuModel(), "cuda:0", error), nullptr);
    EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
    EXPECT_EQ(error.message, failure("cuEventCreate"));
  }
  {
    // Raising a kernel's dynamic shared memory above 48 KB, at load.
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuFuncSetAttribute");
    EXPECT_EQ(Session::create(loadGpuModel(100 * 1024), "cuda:0", error),
              nullptr);
    EXPECT_EQ(error.code, DYNCC_ERROR_DEVICE);
    EXPECT_EQ(error.message,
              "cuda:0: kernel 'add1_relu': cuFuncSetAttribute failed: "
              "CUDA_ERROR_UNKNOWN (fake driver error)");
  }
  expectNothingHeld();

  auto session = cudaSession(loadGpuModel());
  ASSERT_NE(session, nullptr);
  std::vector<float> x = randomFloats(9 * 16, 3);
  int64_t shape[2] = {9, 16};
  ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
  {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuEventRecord");
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.message, failure("cuEventRecord"));
  }
  {
    // The step events profiling creates.
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuEventCreate");
    EXPECT_FALSE(session->setProfiling(true, error));
    EXPECT_EQ(error.message, failure("cuEventCreate"));
  }
  ASSERT_TRUE(session->setProfiling(true, error)) << error.message;
  ASSERT_TRUE(session->run(error)) << error.message;
  double milliseconds = 0;
  uint64_t blocks = 0;
  for (const char *entry : {"cuEventSynchronize", "cuEventElapsedTime_v2"}) {
    FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", entry);
    std::string what = std::string(entry) == "cuEventSynchronize"
                           ? "cuEventSynchronize"
                           : "cuEventElapsedTime";
    EXPECT_FALSE(session->deviceTime(milliseconds, error)) << entry;
    EXPECT_EQ(error.message, failure(what.c_str()));
    EXPECT_FALSE(session->groupProfile(0, milliseconds, blocks, error))
        << entry;
    EXPECT_EQ(error.message, failure(what.c_str()));
  }
  // Both work again once the driver does.
  EXPECT_TRUE(session->deviceTime(milliseconds, error)) << error.message;
  EXPECT_TRUE(session->groupProfile(0, milliseconds, blocks, error))
      << error.message;
}

TEST(CudaSessionTest, MissingEntryAndOversizedGrid) {
  // An sm_86 loads the sm_80 PTX; here it lacks the add kernel's entry.
  FakeSetting arch("DYNCC_FAKE_CUDA_ARCH", "86");
  std::string ptx = ptxModule(80);
  ptx = ptx.substr(0, ptx.find(".visible .entry test_add1_relu"));
  ArtifactWriter writer;
  writer.setManifest(gpuManifest());
  std::vector<float> w = linearWeights();
  writer.addSection("w0", w.data(), w.size() * sizeof(float));
  writer.addSection("cpu.so", kernelLibrary());
  writer.addSection("ptx.sm_80", ptx);
  writer.addSection("ptx.sm_90", ptxModule(90));
  writer.addSection("cubin.sm_90", cubinModule(90));
  std::string bytes, message;
  ASSERT_TRUE(writer.serialize(bytes, message)) << message;
  RuntimeError error;
  auto model = Model::loadMemory(bytes.data(), bytes.size(), "e.dyncc", error);
  ASSERT_NE(model, nullptr) << error.message;
  EXPECT_EQ(Session::create(model, "cuda:0", error), nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_FORMAT);
  EXPECT_EQ(error.message,
            "cuda:0: kernel 'add1_relu': entry 'test_add1_relu' of section "
            "'ptx.sm_80': cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND "
            "(fake driver error)");

  // A grid's y above 65535 is the run's error, not the driver's.
  std::string manifest =
      replaceOnce(gpuManifest(), R"x("grid": ["ceildiv(B*8, 64)", "1", "1"])x",
                  R"x("grid": ["1", "B*100", "1"])x");
  std::string big = gpuArtifact(manifest);
  model = Model::loadMemory(big.data(), big.size(), "g.dyncc", error);
  ASSERT_NE(model, nullptr) << error.message;
  auto session = cudaSession(model);
  ASSERT_NE(session, nullptr);
  std::vector<float> x(700 * 16, 0.25f);
  int64_t shape[2] = {700, 16};
  ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
  EXPECT_FALSE(session->run(error));
  EXPECT_EQ(error.code, DYNCC_ERROR_SHAPE);
  EXPECT_EQ(error.message, "kernel 'add1_relu': the grid 1 x 70000 x 1 "
                           "exceeds the device's limits");
  session.reset();
  model.reset();

  // A kernel that takes its block from the linear id (what dyncc compiles)
  // runs such a grid along x alone. (The fake runs no host code here: the
  // host code indexes its three block ids.)
  std::string linear = gpuArtifact(
      replaceOnce(manifest, R"x("grid": ["1", "B*100", "1"])x",
                  R"x("grid": ["1", "B*100", "1"], "linear_grid": true)x"));
  model = Model::loadMemory(linear.data(), linear.size(), "l.dyncc", error);
  ASSERT_NE(model, nullptr) << error.message;
  session = cudaSession(model);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
  {
    FakeSetting noHostCode("DYNCC_FAKE_CUDA_HOST_CODE", "");
    EXPECT_TRUE(session->run(error)) << error.message;
  }
  EXPECT_EQ(std::string(fake().lastLaunch()).substr(0, 31),
            "test_add1_relu grid 70000 1 1 b");
  // 2^31 blocks and more fit no axis.
  std::string huge = gpuArtifact(
      replaceOnce(manifest, R"x("grid": ["1", "B*100", "1"])x",
                  R"x("grid": ["65536", "B*100", "1"], "linear_grid": true)x"));
  session.reset();
  model = Model::loadMemory(huge.data(), huge.size(), "h.dyncc", error);
  ASSERT_NE(model, nullptr) << error.message;
  session = cudaSession(model);
  ASSERT_NE(session, nullptr);
  ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
  EXPECT_FALSE(session->run(error));
  EXPECT_EQ(error.message, "kernel 'add1_relu': the grid 65536 x 70000 x 1 "
                           "exceeds the device's limits");
  session.reset();
  model.reset();
  expectNothingHeld();
}

// CUDA graphs: the first run of a shape launches kernel by kernel, the
// second captures the run's launches and copies into a graph and replays
// it, later ones replay it (one driver call) with new data; each new set of
// launches (a new shape, buffers that moved) goes the same way. The
// results are the reference's throughout.
TEST(CudaSessionTest, GraphsReplayRepeatedRuns) {
  // sm_86 loads the sm_80 PTX, whose launches the fake can capture (it
  // knows a PTX entry's parameters, not a cubin's).
  FakeSetting arch("DYNCC_FAKE_CUDA_ARCH", "86");
  {
    auto session = cudaSession(loadGpuModel());
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(session->graphsOff(), "");
    long launches = fake().count("launches");
    long replays = fake().count("graph_launches");
    runLinear(*session, 5, 1);
    EXPECT_EQ(fake().count("launches"), launches + 2);
    EXPECT_EQ(session->graphCaptures(), 0u);
    EXPECT_EQ(session->graphReplays(), 0u);
    runLinear(*session, 5, 2);
    EXPECT_EQ(session->graphCaptures(), 1u);
    EXPECT_EQ(session->graphReplays(), 1u);
    EXPECT_EQ(fake().count("graph_launches"), replays + 1);
    EXPECT_EQ(fake().count("launches"), launches + 4); // the graph's two
    for (uint64_t seed = 3; seed < 6; ++seed)
      runLinear(*session, 5, seed);
    EXPECT_EQ(session->graphCaptures(), 1u);
    EXPECT_EQ(session->graphReplays(), 4u);
    EXPECT_EQ(session->launchCount(), 2u);
    // A new shape: direct, then captured.
    runLinear(*session, 17, 6);
    EXPECT_EQ(session->graphReplays(), 4u);
    runLinear(*session, 17, 7);
    EXPECT_EQ(session->graphCaptures(), 2u);
    EXPECT_EQ(session->graphReplays(), 5u);
    // Back to 5 rows: the input's device copy and the arena kept their
    // larger places, so these are new launches again (correct either way).
    runLinear(*session, 5, 8);
    runLinear(*session, 5, 9);
    EXPECT_EQ(session->graphCaptures(), 3u);
    EXPECT_EQ(fake().count("live_graphs"), 3);
  }
  expectNothingHeld();
}

// Graphs off: DYNCC_CUDA_GRAPHS=0, or a launch the driver cannot capture
// (the fake cannot capture a cubin's), which turns them off for the session
// with the driver's reason; runs go on kernel by kernel, right.
TEST(CudaSessionTest, GraphsOffLaunchKernelByKernel) {
  {
    auto session = kernelByKernelSession();
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(session->graphsOff(), "DYNCC_CUDA_GRAPHS=0");
    for (uint64_t seed = 1; seed < 4; ++seed)
      runLinear(*session, 5, seed);
    EXPECT_EQ(session->graphCaptures(), 0u);

    auto cubin = cudaSession(loadGpuModel());
    ASSERT_NE(cubin, nullptr);
    EXPECT_EQ(cubin->graphsOff(), "");
    long launches = fake().count("launches");
    for (uint64_t seed = 1; seed < 4; ++seed)
      runLinear(*cubin, 5, seed);
    EXPECT_EQ(cubin->graphsOff(),
              "cuLaunchKernel of kernel 'matmul_small' failed: "
              "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (fake driver error)");
    EXPECT_EQ(cubin->graphCaptures(), 0u);
    EXPECT_EQ(cubin->graphReplays(), 0u);
    EXPECT_EQ(fake().count("launches"), launches + 6);
  }
  expectNothingHeld();
  RuntimeError error;
  auto cpu = Session::create(loadGpuModel(), "cpu", error);
  ASSERT_NE(cpu, nullptr) << error.message;
  EXPECT_EQ(cpu->graphsOff(), "not a CUDA session");
}

// Inputs bound to host memory go to the device through page-locked memory,
// one buffer per input that grows with the largest input seen, freed with
// the session. Where the driver cannot allocate it, the inputs are copied
// from the caller's memory, and the session says why.
TEST(CudaSessionTest, HostInputsGoThroughPinnedMemory) {
  {
    auto session = kernelByKernelSession();
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(session->pinnedOff(), "");
    long copies = fake().count("copies_in_pinned");
    long allocations = fake().count("pinned_allocations");
    runLinear(*session, 7, 1);
    EXPECT_EQ(fake().count("copies_in_pinned"), copies + 1);
    EXPECT_EQ(fake().count("pinned_allocations"), allocations + 1);
    // Smaller: the same buffer. Larger: a new one, the old freed.
    runLinear(*session, 5, 2);
    EXPECT_EQ(fake().count("pinned_allocations"), allocations + 1);
    runLinear(*session, 4096, 3);
    EXPECT_EQ(fake().count("pinned_allocations"), allocations + 2);
    EXPECT_EQ(fake().count("live_pinned"), 1);
    EXPECT_EQ(fake().count("copies_in_pinned"), copies + 3);
    // Enqueued again before the last run was waited for: the first write
    // to pinned memory waits for the last run's copy out of it (one call
    // more, cuEventSynchronize); after a wait, it does not.
    {
      RuntimeError error;
      std::vector<float> x = randomFloats(5 * 16, 6);
      int64_t shape[2] = {5, 16};
      ASSERT_TRUE(session->setDriverTiming(true, error)) << error.message;
      ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error))
          << error.message;
      double microseconds = 0;
      uint64_t waited = 0, notWaited = 0;
      ASSERT_TRUE(session->enqueue(error)) << error.message;
      ASSERT_TRUE(session->enqueue(error)) << error.message;
      session->lastDriverTime(microseconds, waited);
      ASSERT_TRUE(session->wait(error)) << error.message;
      ASSERT_TRUE(session->enqueue(error)) << error.message;
      session->lastDriverTime(microseconds, notWaited);
      ASSERT_TRUE(session->wait(error)) << error.message;
      EXPECT_EQ(waited, notWaited + 1);
      ASSERT_TRUE(session->setDriverTiming(false, error)) << error.message;
    }

    auto pageable = cudaSession(loadGpuModel());
    ASSERT_NE(pageable, nullptr);
    {
      FakeSetting fail("DYNCC_FAKE_CUDA_FAIL", "cuMemHostAlloc");
      runLinear(*pageable, 17, 4);
    }
    EXPECT_EQ(pageable->pinnedOff(),
              "cuMemHostAlloc of 1088 bytes for input 'X' failed: "
              "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
    runLinear(*pageable, 17, 5);
    EXPECT_EQ(fake().count("copies_in_pinned"), copies + 6);
    EXPECT_EQ(fake().count("live_pinned"), 1);
  }
  expectNothingHeld();
  RuntimeError error;
  auto cpu = Session::create(loadGpuModel(), "cpu", error);
  ASSERT_NE(cpu, nullptr) << error.message;
  EXPECT_EQ(cpu->pinnedOff(), "not a CUDA session");
}

TEST(CudaSessionTest, SessionsRunConcurrentlyFromThreads) {
  auto model = loadGpuModel();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&model, t] {
      // Each thread makes the context current itself (the fake checks).
      auto session = cudaSession(model);
      ASSERT_NE(session, nullptr);
      for (int64_t rows : {1, 17, 100 + t, 5})
        runLinear(*session, rows, static_cast<uint64_t>(rows * 10 + t));
    });
  for (std::thread &thread : threads)
    thread.join();
  model.reset();
  expectNothingHeld();
}

TEST(CudaSessionTest, CApi) {
  std::string bytes = gpuArtifact(gpuManifest());
  TempDir dir;
  writeFile(dir.file("gpu.dyncc"), bytes);
  dyncc_artifact *artifact = nullptr;
  ASSERT_EQ(dyncc_artifact_load(dir.file("gpu.dyncc").c_str(), &artifact),
            DYNCC_OK)
      << dyncc_last_error();
  dyncc_session *session = nullptr;
  ASSERT_EQ(dyncc_session_create(artifact, "cuda:0", &session), DYNCC_OK)
      << dyncc_last_error();
  dyncc_artifact_free(artifact);
  EXPECT_STREQ(dyncc_session_device(session),
               "cuda:0 (Fake GPU 0 (sm_90), sm_90, driver 13.0): 3 kernels "
               "from cubin");
  std::vector<float> x = randomFloats(20 * 16, 3);
  int64_t shape[2] = {20, 16};
  ASSERT_EQ(dyncc_session_set_input(session, 0, x.data(), shape, 2), DYNCC_OK);
  EXPECT_EQ(dyncc_session_output_device(session, 0), 0u);
  ASSERT_EQ(dyncc_session_enqueue(session), DYNCC_OK) << dyncc_last_error();
  ASSERT_EQ(dyncc_session_synchronize(session), DYNCC_OK);
  EXPECT_NE(dyncc_session_output_device(session, 0), 0u);
  EXPECT_EQ(dyncc_session_output_device(session, 2), 0u);
  const char *name = nullptr, *arch = nullptr;
  int64_t sms = 0;
  ASSERT_EQ(dyncc_session_gpu(session, &name, &arch, &sms), DYNCC_OK);
  EXPECT_STREQ(arch, "sm_90");
  EXPECT_EQ(dyncc_session_gpu(session, &name, nullptr, &sms),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dyncc_session_gpu(nullptr, &name, &arch, &sms),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dyncc_session_tuning_device(session, &name, &arch, nullptr),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_last_error(),
               "dyncc_session_tuning_device: null argument");
  std::vector<float> t, y;
  linearReference(x, 20, t, y);
  auto *out = static_cast<const float *>(dyncc_session_output_data(session, 0));
  ASSERT_NE(out, nullptr) << dyncc_last_error();
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(out[i], y[i], 1e-5f + 1e-5f * std::fabs(y[i]));
  double milliseconds = -1;
  EXPECT_EQ(dyncc_session_device_time(session, &milliseconds), DYNCC_OK);
  EXPECT_GE(milliseconds, 0);
  EXPECT_EQ(dyncc_session_set_stream(session, nullptr), DYNCC_OK);
  EXPECT_EQ(dyncc_session_set_input_device(session, 0, 0, shape, 2),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_last_error(), "input 'X': data is null");
  EXPECT_EQ(dyncc_session_device_time(nullptr, &milliseconds),
            DYNCC_ERROR_INVALID_ARGUMENT);
  dyncc_session_free(session);
  expectNothingHeld();
}

} // namespace

namespace {

/// gpuManifest() with both matmul variants admissible at every B: the first
/// runs unless measurements or a forced variant say otherwise.
std::string overlappingGpuManifest() {
  return replaceOnce(replaceOnce(gpuManifest(), R"("min": 1, "max": 16)",
                                 R"("min": 1, "max": 4096)"),
                     R"("min": 17, "max": 4096)", R"("min": 1, "max": 4096)");
}

/// `manifest` loaded as `name` with measurements of group matmul on the
/// fake device (132 SMs, or `sms`): kernel `fast`'s waves of 132 blocks take
/// 0.01 ms, matmul_large's 0.05 ms, sampled at B = 1 (one block each) and
/// B = 4096 (`fastBlocks` blocks of `fast`, 128 of matmul_large).
std::shared_ptr<const Model>
loadMeasuredModel(const std::string &manifest, const std::string &fast,
                  int64_t fastBlocks, int64_t sms, const char *name,
                  const std::string &device = "Fake GPU 0 (sm_90)",
                  const std::string &arch = "sm_90") {
  double fastMs = 0.01 * static_cast<double>((fastBlocks + 131) / 132);
  std::string calibration = R"json({"format": 1, "devices": [
   {"device": ")json" + device +
                            R"json(", "arch": ")json" + arch +
                            R"json(", "sms": )json" + std::to_string(sms) +
                            R"json(, "repeat": 3,
    "bindings": 2, "groups": [
    {"group": "matmul", "symbols": ["B"], "variants": [
     {"kernel": ")json" + fast +
                            R"json(", "blocks_per_wave": 132,
      "samples": [{"at": [1], "blocks": 1, "ms": 0.01},
                  {"at": [4096], "blocks": )json" +
                            std::to_string(fastBlocks) + R"json(, "ms": )json" +
                            std::to_string(fastMs) +
                            R"json(}]},
     {"kernel": "matmul_large", "blocks_per_wave": 132,
      "samples": [{"at": [1], "blocks": 1, "ms": 0.05},
                  {"at": [4096], "blocks": 128, "ms": 0.05}]}]}]}]})json";
  std::string bytes = gpuArtifact(manifest, calibration);
  RuntimeError error;
  auto model = Model::loadMemory(bytes.data(), bytes.size(), name, error);
  EXPECT_NE(model, nullptr) << error.message;
  return model;
}

/// The GPU model with both matmul variants admissible at every B, and
/// measurements on the fake device (132 SMs, or `sms`): matmul_small's
/// wave of 132 blocks takes 0.01 ms, matmul_large's 0.05 ms. Small runs
/// ceil(B/4) blocks, large ceil(B/32): small wins up to B = 528 (one wave
/// each), large from B = 2641 (6 waves of small against 1 of large).
std::shared_ptr<const Model> loadCalibratedModel(int64_t sms = 132) {
  return loadMeasuredModel(overlappingGpuManifest(), "matmul_small", 1024, sms,
                           "gpu.dyncc");
}

TEST(CudaSessionTest, MeasurementsOnTheDeviceSelectTheVariant) {
  {
    auto session = cudaSession(loadCalibratedModel());
    ASSERT_NE(session, nullptr);
    for (int64_t rows : {1, 100, 528, 1000, 2641, 4096}) {
      SCOPED_TRACE(rows);
      runLinear(*session, rows, 3);
      // Small: ceil(ceil(B/4) / 132) waves of 0.01 ms; large: 0.05 ms.
      double small = 0.01 * static_cast<double>(((rows + 3) / 4 + 131) / 132);
      EXPECT_STREQ(session->groupVariant(0),
                   small <= 0.05 ? "matmul_small" : "matmul_large");
    }
    EXPECT_STREQ(session->groupReason(0),
                 "v1, by dyncc tune's measurements on Fake GPU 0 (sm_90): "
                 "predicted 0.05 ms, v0 0.08 ms");
  }
  {
    // Measured on another device (100 SMs): not used; the first variant
    // whose conditions hold runs.
    auto session = cudaSession(loadCalibratedModel(100));
    ASSERT_NE(session, nullptr);
    runLinear(*session, 4096, 3);
    EXPECT_STREQ(session->groupVariant(0), "matmul_small");
    EXPECT_STREQ(session->groupReason(0),
                 "v0, by the first variant whose conditions hold: B = 4096 "
                 "in 1-4096");
  }
  {
    // The CPU does not use a GPU's measurements.
    RuntimeError error;
    auto session = Session::create(loadCalibratedModel(), "cpu", error);
    ASSERT_NE(session, nullptr) << error.message;
    runLinear(*session, 4096, 3);
    EXPECT_STREQ(session->groupVariant(0), "matmul_small");
  }
  expectNothingHeld();
}

/// The split model with both matmul variants admissible at every B and a
/// tile search's table that picks the unsplit matmul_large at every B (the
/// workspace empty); measurements on the fake device (132 SMs, or `sms`)
/// where matmul_part's waves take 0.01 ms and matmul_large's 0.05 ms:
/// matmul_part runs 2 ceil(B/4) blocks, matmul_large ceil(B/32), so the
/// split matmul_part (its workspace full) is picked up to B = 1320.
std::shared_ptr<const Model>
loadCalibratedSplitModel(int64_t sms = 132,
                         const std::string &device = "Fake GPU 0 (sm_90)",
                         const std::string &arch = "sm_90") {
  auto code = [](const std::string &entry) {
    return R"(, "gpu": {"sm_90": {"section": "ptx.sm_90", "entry": ")" + entry +
           R"("}})";
  };
  std::string manifest = replaceOnce(
      replaceOnce(splitManifest(gpuManifest(), code("test_matmul_part"),
                                code("test_sum_parts")),
                  R"("min": 1, "max": 16)", R"("min": 1, "max": 4096)"),
      R"("min": 17, "max": 4096)", R"("min": 1, "max": 4096)");
  manifest = replaceOnce(manifest, R"("name": "matmul", "kind": "gemm", )",
                         R"("name": "matmul", "kind": "gemm",
       "select": {"keys": ["B"], "lower": [1], "variant": [1]}, )");
  return loadMeasuredModel(manifest, "matmul_part", 2048, sms, "split.dyncc",
                           device, arch);
}

/// The sets of empty temps (per temp, in buffer order) that `model`'s
/// shared arena placements are for.
std::set<std::vector<uint8_t>> plannedEmptySets(const Model &model) {
  SharedPlacements::Lifetimes lifetimes;
  for (const BufferInfo &buffer : model.manifest().buffers)
    if (buffer.kind == BufferKind::Temp)
      lifetimes.emplace_back(buffer.firstStep, buffer.lastStep);
  std::vector<std::shared_ptr<const RememberedPlacement>> held;
  model.sharedPlacements()->collect(lifetimes, held);
  std::set<std::vector<uint8_t>> sets;
  for (const auto &placement : held)
    sets.insert(placement->empty);
  return sets;
}

/// Runs `session` (of loadCalibratedSplitModel) at B = 4096, 1320, 1321
/// and 7: the measurements pick the split matmul_part up to B = 1320, and
/// every run finds a placement planned ahead for its workspace.
void expectMeasuredRunsPlannedAhead(Session &session) {
  for (int64_t rows : {4096, 1320, 1321, 7}) {
    SCOPED_TRACE(rows);
    runLinear(session, rows, 3);
    EXPECT_STREQ(session.groupVariant(0),
                 rows <= 1320 ? "matmul_part" : "matmul_large");
    EXPECT_EQ(session.arenaPlacementsMade(), 0);
  }
}

// The arena planned at load follows the tile search's table, which leaves
// the workspace (the second temp) empty everywhere, and a placement made
// with a temp empty does not serve sizes where it is full. A CUDA load on
// the measured device plans the measurements' selections too, so a
// session's runs at the shapes where they fill the workspace find a
// placement made for them.
TEST(CudaSessionTest, MeasuredSelectionsArePlannedAtLoad) {
  using Sets = std::set<std::vector<uint8_t>>;
  {
    auto model = loadCalibratedSplitModel();
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(plannedEmptySets(*model), (Sets{{0, 1}}));
    auto session = cudaSession(model);
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(plannedEmptySets(*model), (Sets{{0, 1}, {0, 0}}));
    expectMeasuredRunsPlannedAhead(*session);
  }
  {
    // Measured on another device: its selections are the table's, and so
    // is the plan.
    auto model = loadCalibratedSplitModel(100);
    ASSERT_NE(model, nullptr);
    auto session = cudaSession(model);
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(plannedEmptySets(*model), (Sets{{0, 1}}));
    runLinear(*session, 7, 3);
    EXPECT_STREQ(session->groupVariant(0), "matmul_large");
  }
  expectNothingHeld();
}

// `dyncc tune --device cpu` keys its measurements by the host's processor,
// arch and thread count; a cpu session that selects by them plans their
// selections into the shared placements as a CUDA load does, once a model.
TEST(CudaSessionTest, HostMeasuredSelectionsArePlannedAtSessionCreation) {
  using Sets = std::set<std::vector<uint8_t>>;
  RuntimeError error;
  std::string host, arch;
  int64_t threads = 0;
  {
    auto probe = Session::create(loadGpuModel(), "cpu", error);
    ASSERT_NE(probe, nullptr) << error.message;
    probe->tuningDevice(host, arch, threads);
  }
  {
    auto model = loadCalibratedSplitModel(threads, host, arch);
    ASSERT_NE(model, nullptr);
    EXPECT_EQ(plannedEmptySets(*model), (Sets{{0, 1}}));
    auto session = Session::create(model, "cpu", error);
    ASSERT_NE(session, nullptr) << error.message;
    EXPECT_EQ(plannedEmptySets(*model), (Sets{{0, 1}, {0, 0}}));
    EXPECT_EQ(model->measuredDevicesPlanned(), 1u);
    // A second session finds the plan made: the model plans once.
    auto second = Session::create(model, "cpu", error);
    ASSERT_NE(second, nullptr) << error.message;
    EXPECT_EQ(model->measuredDevicesPlanned(), 1u);
    expectMeasuredRunsPlannedAhead(*session);
    EXPECT_EQ(plannedEmptySets(*model), (Sets{{0, 1}, {0, 0}}));
  }
  {
    // Measured with another thread count: the table's selections and plan.
    auto model = loadCalibratedSplitModel(threads + 1, host, arch);
    ASSERT_NE(model, nullptr);
    auto session = Session::create(model, "cpu", error);
    ASSERT_NE(session, nullptr) << error.message;
    EXPECT_EQ(plannedEmptySets(*model), (Sets{{0, 1}}));
    EXPECT_EQ(model->measuredDevicesPlanned(), 0u);
    runLinear(*session, 7, 3);
    EXPECT_STREQ(session->groupVariant(0), "matmul_large");
  }
}

TEST(CudaSessionTest, ForcedVariantsAndProfiles) {
  for (const char *device : {"cpu", "cuda:0"}) {
    SCOPED_TRACE(device);
    RuntimeError error;
    auto session = Session::create(loadGpuModel(), device, error);
    ASSERT_NE(session, nullptr) << error.message;
    // No profiled run yet.
    double ms;
    uint64_t blocks;
    EXPECT_FALSE(session->groupProfile(0, ms, blocks, error));
    EXPECT_EQ(error.message, "no profiled run yet: enable profiling, then run");
    ASSERT_TRUE(session->setProfiling(true, error)) << error.message;
    runLinear(*session, 100, 1);
    ASSERT_TRUE(session->groupProfile(0, ms, blocks, error)) << error.message;
    EXPECT_EQ(blocks, 4u); // matmul_large: ceil(100 / 32)
    EXPECT_GE(ms, 0);
    ASSERT_TRUE(session->groupProfile(1, ms, blocks, error)) << error.message;
    EXPECT_EQ(blocks, 13u); // ceil(800 / 64)

    // Where the forced variant's conditions (matmul_small: B <= 16) do not
    // hold, the usual selection.
    ASSERT_TRUE(session->forceVariant(0, 0, error)) << error.message;
    runLinear(*session, 100, 2);
    EXPECT_STREQ(session->groupVariant(0), "matmul_large");
    ASSERT_TRUE(session->forceVariant(0, -1, error));
    EXPECT_FALSE(session->forceVariant(0, 2, error));
    EXPECT_EQ(error.message, "group 'matmul' has no variant 2 (it has 2)");
    EXPECT_FALSE(session->forceVariant(5, 0, error));
    EXPECT_EQ(error.message, "group 5 is out of range (2 groups)");

    int64_t perWave = 0;
    if (session->onCuda()) {
      ASSERT_TRUE(session->blocksPerWave(0, 1, perWave, error))
          << error.message;
      EXPECT_EQ(perWave, 132); // the fake: 1 block per SM, 132 SMs
      FakeSetting occupancy("DYNCC_FAKE_CUDA_OCCUPANCY", "3");
      ASSERT_TRUE(session->blocksPerWave(0, 1, perWave, error));
      EXPECT_EQ(perWave, 396);
      FakeSetting failing("DYNCC_FAKE_CUDA_FAIL",
                          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
      EXPECT_FALSE(session->blocksPerWave(0, 1, perWave, error));
      EXPECT_EQ(error.message,
                "cuda:0: cuOccupancyMaxActiveBlocksPerMultiprocessor of "
                "kernel 'matmul_large' failed: CUDA_ERROR_UNKNOWN (fake "
                "driver error)");
    } else {
      // The cpu: each of the session's threads runs a block at a time, and
      // dyncc tune keeps its measurements under the host and that count.
      ASSERT_TRUE(session->blocksPerWave(0, 1, perWave, error))
          << error.message;
      EXPECT_EQ(perWave, static_cast<int64_t>(session->numThreads()));
      std::string device, arch;
      int64_t units = 0;
      session->tuningDevice(device, arch, units);
      EXPECT_FALSE(device.empty());
      // On x86 Linux, the processor's name: /proc/cpuinfo's first "model
      // name", not another of its fields.
      if (FILE *file = std::fopen("/proc/cpuinfo", "r")) {
        char line[512];
        while (std::fgets(line, sizeof line, file))
          if (std::strncmp(line, "model name", 10) == 0) {
            std::string name = std::strchr(line, ':') + 1;
            name = name.substr(name.find_first_not_of(" \t"));
            name = name.substr(0, name.find_last_not_of(" \t\r\n") + 1);
            EXPECT_EQ(device, name);
            break;
          }
        std::fclose(file);
      }
      EXPECT_EQ(arch.rfind("cpu-", 0), 0u) << arch;
      EXPECT_EQ(units, perWave);
    }
    EXPECT_FALSE(session->blocksPerWave(0, 2, perWave, error));
    EXPECT_FALSE(session->blocksPerWave(2, 0, perWave, error));
    EXPECT_EQ(error.message, "no variant 0 of group 2");
  }
  expectNothingHeld();
}

TEST(CudaSessionTest, ForcedVariantRunsWhereItsConditionsHold) {
  std::string manifest = overlappingGpuManifest();
  std::string bytes = gpuArtifact(manifest);
  RuntimeError error;
  auto model = Model::loadMemory(bytes.data(), bytes.size(), "m", error);
  ASSERT_NE(model, nullptr) << error.message;
  for (const char *device : {"cpu", "cuda:0"}) {
    SCOPED_TRACE(device);
    auto session = Session::create(model, device, error);
    ASSERT_NE(session, nullptr) << error.message;
    ASSERT_TRUE(session->setProfiling(true, error)) << error.message;
    for (int64_t variant : {-1, 1, 0, 1, -1})
      for (int64_t rows : {9, 100}) {
        SCOPED_TRACE(variant);
        ASSERT_TRUE(session->forceVariant(0, variant, error));
        runLinear(*session, rows, 5);
        bool large = variant == 1;
        EXPECT_STREQ(session->groupVariant(0),
                     large ? "matmul_large" : "matmul_small");
        std::string reason =
            variant < 0 ? "v0, by the first variant whose conditions hold: "
                          "B = " + std::to_string(rows) + " in 1-4096"
                        : std::string(large ? "v1" : "v0") +
                              ", by force (dyncc_session_force_variant)";
        EXPECT_EQ(session->groupReason(0), reason);
        double ms;
        uint64_t blocks;
        ASSERT_TRUE(session->groupProfile(0, ms, blocks, error));
        EXPECT_EQ(blocks, static_cast<uint64_t>(large ? (rows + 31) / 32
                                                      : (rows + 3) / 4));
      }
  }
  expectNothingHeld();
}

TEST(CudaSessionTest, TuningApiThroughTheCWrapper) {
  std::string bytes = gpuArtifact(gpuManifest());
  TempDir dir;
  writeFile(dir.file("m.dyncc"), bytes);
  dyncc::Artifact artifact;
  ASSERT_EQ(artifact.load(dir.file("m.dyncc")), DYNCC_OK)
      << dyncc::lastError();
  EXPECT_EQ(artifact.numVariants(0), 2u);
  EXPECT_EQ(artifact.numVariants(1), 1u);
  EXPECT_EQ(artifact.numVariants(7), 0u);
  EXPECT_EQ(artifact.variantKernel(0, 1), "matmul_large");
  EXPECT_EQ(artifact.variantKernel(0, 2), "");
  EXPECT_EQ(artifact.groupSymbols(0), std::vector<size_t>{0});
  EXPECT_EQ(artifact.groupSymbols(1), std::vector<size_t>{});
  EXPECT_EQ(artifact.numCalibrations(), 0u);

  dyncc::Session session;
  ASSERT_EQ(session.create(artifact, "cuda:0"), DYNCC_OK) << dyncc::lastError();
  std::string name, arch;
  int64_t sms = 0;
  ASSERT_EQ(session.gpu(name, arch, sms), DYNCC_OK);
  EXPECT_EQ(name, "Fake GPU 0 (sm_90)");
  EXPECT_EQ(arch, "sm_90");
  EXPECT_EQ(sms, 132);
  ASSERT_EQ(session.setProfiling(true), DYNCC_OK);
  std::vector<float> x = randomFloats(50 * 16, 1);
  ASSERT_EQ(session.setInput(0, x.data(), {50, 16}), DYNCC_OK);
  ASSERT_EQ(session.forceVariant(0, 0), DYNCC_OK);
  ASSERT_EQ(session.run(), DYNCC_OK) << dyncc::lastError();
  double ms = -1;
  uint64_t blocks = 0;
  ASSERT_EQ(session.groupTime(0, ms, blocks), DYNCC_OK);
  EXPECT_EQ(blocks, 2u); // matmul_small's conditions fail at 50: large
  EXPECT_GE(ms, 0);
  EXPECT_EQ(session.groupTime(9, ms, blocks), DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(session.forceVariant(0, -2), DYNCC_ERROR_INVALID_ARGUMENT);

  dyncc::Session cpu;
  ASSERT_EQ(cpu.create(artifact, "cpu"), DYNCC_OK);
  EXPECT_EQ(cpu.gpu(name, arch, sms), DYNCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(dyncc::lastError(), "the session is on the cpu, not a CUDA device");
}

TEST(CudaSessionTest, CorruptMeasurementsAreALoadError) {
  std::string bytes = gpuArtifact(gpuManifest(), R"({"format": 1, "devices": [
    {"device": "d", "arch": "sm_90", "sms": 1, "repeat": 1, "bindings": 1,
     "groups": [{"group": "softmax", "symbols": [], "variants": []}]}]})");
  RuntimeError error;
  EXPECT_EQ(Model::loadMemory(bytes.data(), bytes.size(), "gpu.dyncc", error),
            nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_FORMAT);
  EXPECT_EQ(error.message,
            "gpu.dyncc: calibration: devices[0].groups[0].group: no group "
            "'softmax' in the manifest");
}

} // namespace
