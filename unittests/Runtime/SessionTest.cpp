//===- SessionTest.cpp - Tests of CPU execution -----------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Executor.h"
#include "TestUtil.h"

#include "dyncc/Runtime/ArenaPlanAhead.h"
#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/HostIsa.h"
#include "dyncc/Runtime/Manifest.h"
#include "dyncc/Runtime/Runtime.hpp"
#include "dyncc/Runtime/dyncc_runtime.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

using namespace dyncc::runtime;
using namespace dyncc::test;

extern "C" const char *dyncc_test_c_api_version(void);

namespace {

/// Loads `manifest` (with the test kernels) through the internal API.
std::shared_ptr<const Model> loadModel(const std::string &manifest) {
  std::string bytes = buildArtifact(manifest);
  RuntimeError error;
  auto model =
      Model::loadMemory(bytes.data(), bytes.size(), "test.dyncc", error);
  EXPECT_NE(model, nullptr) << error.message;
  return model;
}

std::unique_ptr<Session> makeSession(std::shared_ptr<const Model> model) {
  RuntimeError error;
  auto session = Session::create(std::move(model), "cpu", error);
  EXPECT_NE(session, nullptr) << error.message;
  return session;
}

/// The environment's `name` set to `value` (unset where null) while it
/// lives, and as it was after.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name(name) {
    if (const char *old = std::getenv(name))
      saved = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved)
      ::setenv(name, saved->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name;
  std::optional<std::string> saved;
};

/// Session::create on the cpu with the environment's `name` set to `value`
/// for the call, and as it was after.
std::unique_ptr<Session> createWithEnv(std::shared_ptr<const Model> model,
                                       const char *name, const char *value,
                                       RuntimeError &error) {
  ScopedEnv env(name, value);
  return Session::create(std::move(model), "cpu", error);
}

/// makeSession with `name` set to `value` (createWithEnv).
std::unique_ptr<Session> makeSessionWithEnv(std::shared_ptr<const Model> model,
                                            const char *name,
                                            const char *value) {
  RuntimeError error;
  auto session = createWithEnv(std::move(model), name, value, error);
  EXPECT_NE(session, nullptr) << error.message;
  return session;
}

void expectNear(const float *actual, const std::vector<float> &expected,
                const char *what, int64_t rows) {
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-5f + 1e-5f * std::fabs(expected[i]))
        << what << " element " << i << " at B = " << rows;
  }
}

/// Runs the linear model at `rows` on random data and checks both outputs.
void runLinear(Session &session, int64_t rows, uint64_t seed) {
  std::vector<float> x = randomFloats(rows * 16, seed);
  int64_t shape[2] = {rows, 16};
  RuntimeError error;
  ASSERT_TRUE(session.setInput(0, x.data(), shape, 2, error)) << error.message;
  ASSERT_TRUE(session.run(error)) << error.message;
  std::vector<float> t, y;
  linearReference(x, rows, t, y);
  EXPECT_EQ(session.outputShape(0), (std::vector<int64_t>{rows, 8}));
  EXPECT_EQ(session.outputBytes(0), static_cast<size_t>(rows * 8 * 4));
  expectNear(static_cast<const float *>(session.outputData(0)), y, "Y", rows);
  expectNear(static_cast<const float *>(session.outputData(1)), t, "t:copy",
             rows);
}

TEST(SessionTest, LinearModelEndToEnd) {
  auto model = loadModel(linearManifest());
  ASSERT_NE(model, nullptr);
  auto session = makeSession(model);
  ASSERT_NE(session, nullptr);
  for (int64_t rows : {1, 7, 64, 1000, 16, 17, 4096, 3}) {
    SCOPED_TRACE(rows);
    runLinear(*session, rows, static_cast<uint64_t>(rows));
    EXPECT_STREQ(session->groupVariant(0),
                 rows <= 16 ? "matmul_small" : "matmul_large");
    EXPECT_STREQ(session->groupVariant(1), "add1_relu");
    EXPECT_EQ(session->symbolValue(0), rows);
  }
}

TEST(SessionTest, OutputsAndArenaAreAligned) {
  auto session = makeSession(loadModel(linearManifest()));
  ASSERT_NE(session, nullptr);
  runLinear(*session, 5, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(session->outputData(0)) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(session->arenaData()) % 64, 0u);
}

TEST(SessionTest, ArenaIsReusedAndGrowsOnlyWhenNeeded) {
  auto session = makeSession(loadModel(linearManifest()));
  ASSERT_NE(session, nullptr);
  runLinear(*session, 1000, 1);
  const void *arena = session->arenaData();
  size_t capacity = session->arenaCapacity();
  // One temp, [B, 8] f32, placed alone: the arena is the live-set peak.
  EXPECT_EQ(session->arenaPlacement().size, 1000u * 32);
  EXPECT_EQ(session->arenaPlacement().livePeak, 1000u * 32);
  EXPECT_GE(capacity, 1000u * 32);
  const void *output = session->outputData(0);
  runLinear(*session, 7, 2);
  EXPECT_EQ(session->arenaData(), arena);
  EXPECT_EQ(session->arenaCapacity(), capacity);
  EXPECT_EQ(session->outputData(0), output);
  runLinear(*session, 1000, 3);
  EXPECT_EQ(session->arenaData(), arena);
  runLinear(*session, 2000, 4);
  EXPECT_GE(session->arenaCapacity(), 2000u * 32);
  EXPECT_EQ(session->arenaPlacement().size, 2000u * 32);
}

// A run at the symbols of the run before keeps its temps' sizes and places
// and sizes only the inputs and outputs (new data each run); another shape
// sizes everything again. The numbers are right either way. (A plan that
// binds symbols from data starts a shape epoch every run, so it always
// sizes everything: test_data_sizes.py runs such plans at one input shape
// with different data.)
TEST(SessionTest, RunsAtTheLastSymbolsSizeOnlyTheirPorts) {
  auto session = makeSession(loadModel(splitManifest()));
  ASSERT_NE(session, nullptr);
  // X, Y and t:copy; the temp and the workspace.
  runLinear(*session, 7, 1);
  EXPECT_EQ(session->buffersSizedAtBinding(), 5u);
  const void *arena = session->arenaData();
  runLinear(*session, 7, 2);
  EXPECT_EQ(session->buffersSizedAtBinding(), 3u);
  EXPECT_EQ(session->arenaData(), arena);
  runLinear(*session, 700, 3);
  EXPECT_EQ(session->buffersSizedAtBinding(), 5u);
  runLinear(*session, 700, 4);
  EXPECT_EQ(session->buffersSizedAtBinding(), 3u);
  runLinear(*session, 7, 5);
  EXPECT_EQ(session->buffersSizedAtBinding(), 5u);
  EXPECT_STREQ(session->groupVariant(0), "matmul_part");
  runLinear(*session, 7, 6);
  EXPECT_EQ(session->buffersSizedAtBinding(), 3u);
}

// A workspace's bytes follow its group's variant, so forcing another
// variant (`dyncc tune` does, at one shape) sizes and places the temps
// again at the same symbols: forced to the unsplit variant, the workspace
// takes no bytes; back to the table's split variant, it must get its [2,
// B, 8] again (kept from the forced run, the split kernel would write
// into a 0-byte block).
TEST(SessionTest, ForcingAVariantSizesTheTempsAgain) {
  std::string manifest = splitManifest();
  // Both variants' conditions hold at any B: the first (split) is chosen.
  manifest =
      replaceOnce(manifest, R"j({"symbol": "B", "min": 17, "max": 4096})j", "");
  auto session = makeSession(loadModel(manifest));
  ASSERT_NE(session, nullptr);
  uint64_t temp = (7u * 32 + 63) / 64 * 64, workspace = 7u * 64;
  RuntimeError error;
  ASSERT_TRUE(session->forceVariant(0, 1, error)) << error.message;
  runLinear(*session, 7, 1);
  EXPECT_STREQ(session->groupVariant(0), "matmul_large");
  EXPECT_EQ(session->arenaPlacement().livePeak, temp);
  ASSERT_TRUE(session->forceVariant(0, -1, error)) << error.message;
  runLinear(*session, 7, 2);
  EXPECT_STREQ(session->groupVariant(0), "matmul_part");
  EXPECT_EQ(session->buffersSizedAtBinding(), 5u);
  EXPECT_EQ(session->arenaPlacement().livePeak, temp + workspace);
  // Forced to what it runs already: nothing to size but the ports.
  ASSERT_TRUE(session->forceVariant(0, -1, error)) << error.message;
  runLinear(*session, 7, 3);
  EXPECT_EQ(session->buffersSizedAtBinding(), 3u);
}

// A split-K variant: two kernels in one step, the partial sums in a
// workspace that takes arena bytes only in the runs that choose it.
TEST(SessionTest, SplitVariantLaunchesItsKernelsAndSizesItsWorkspace) {
  auto session = makeSession(loadModel(splitManifest()));
  ASSERT_NE(session, nullptr);
  for (int64_t rows : {1, 16, 17, 5, 1000, 3, 16}) {
    SCOPED_TRACE(rows);
    runLinear(*session, rows, static_cast<uint64_t>(rows) + 11);
    bool split = rows <= 16;
    EXPECT_STREQ(session->groupVariant(0),
                 split ? "matmul_part" : "matmul_large");
    // The temp [B, 8] (live in steps 0-2) and, when split, the workspace
    // [2, B, 8] beside it in step 0.
    uint64_t temp = (static_cast<uint64_t>(rows) * 32 + 63) / 64 * 64;
    uint64_t workspace = split ? static_cast<uint64_t>(rows) * 64 : 0;
    EXPECT_EQ(session->arenaPlacement().livePeak, temp + workspace);
    EXPECT_EQ(session->arenaPlacement().size, temp + workspace);
  }
}

/// `manifest` with the arena the compiler plans ahead (planArenaAhead) as
/// its `arena`, as the compiler writes it; `plans` gets the placements.
/// `manifest` with the field `"arena": [placements]` added.
std::string withArena(const std::string &manifest,
                      const std::string &placements) {
  size_t end = manifest.rfind('}');
  return manifest.substr(0, end) + ", \"arena\": [" + placements + "]}";
}

std::string withPlannedArena(const std::string &manifest, size_t &plans) {
  Manifest parsed;
  std::string error;
  EXPECT_TRUE(parseManifest(manifest, parsed, error)) << error;
  std::string arena;
  auto ids = [&](const std::vector<size_t> &buffers) {
    std::string list;
    for (size_t b : buffers)
      list += (list.empty() ? "" : ", ") + std::to_string(parsed.buffers[b].id);
    return "[" + list + "]";
  };
  std::vector<ArenaPlanInfo> planned = planArenaAhead(parsed);
  plans = planned.size();
  for (const ArenaPlanInfo &plan : planned)
    arena += std::string(arena.empty() ? "" : ", ") +
             "{\"empty\": " + ids(plan.empty) +
             ", \"order\": " + ids(plan.order) + "}";
  return withArena(manifest, arena);
}

// The compiler plans the arena ahead: the temps placed at shapes over B's
// range, split (a workspace) and unsplit (none). One placement, made with
// the workspace, holds where it is empty too, so every session's first
// runs place as then (no placement made), and correctly. A manifest with
// no `arena` (an older artifact) gets the same plan at load; with an empty
// one, a session's first run places the temps itself.
TEST(SessionTest, SessionsPlaceAsTheCompilerPlanned) {
  size_t plans = 0;
  std::string manifest = withPlannedArena(splitManifest(), plans);
  EXPECT_EQ(plans, 1u);
  auto model = loadModel(manifest);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->manifest().arena.size(), 1u);
  auto first = makeSession(model);
  auto second = makeSession(model);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  for (Session *session : {first.get(), second.get()})
    for (int64_t rows : {5, 1000, 3, 999}) {
      SCOPED_TRACE(rows);
      runLinear(*session, rows, static_cast<uint64_t>(rows) + 5);
      EXPECT_STREQ(session->groupVariant(0),
                   rows <= 16 ? "matmul_part" : "matmul_large");
      EXPECT_EQ(session->arenaPlacementsMade(), 0);
      EXPECT_EQ(session->arenaPlacement().size,
                session->arenaPlacement().livePeak);
    }
  // An artifact from before the compiler planned the arena (no `arena`)
  // gets the same plan when it loads.
  auto older = makeSession(loadModel(splitManifest()));
  ASSERT_NE(older, nullptr);
  for (int64_t rows : {5, 1000}) {
    runLinear(*older, rows, static_cast<uint64_t>(rows) + 5);
    EXPECT_EQ(older->arenaPlacementsMade(), 0);
  }
  // A plan with no placements: the session places the temps itself.
  auto unplanned = makeSession(loadModel(withArena(splitManifest(), "")));
  ASSERT_NE(unplanned, nullptr);
  runLinear(*unplanned, 5, 10);
  EXPECT_GE(unplanned->arenaPlacementsMade(), 1);
}

TEST(SessionTest, PlannedArenaErrors) {
  size_t plans = 0;
  std::string manifest = withPlannedArena(splitManifest(), plans);
  std::string arena = R"("arena": [{"empty": [], "order": [2, 6]}])";
  ASSERT_NE(manifest.find(arena), std::string::npos) << manifest;
  auto expectError = [&](const std::string &to, const std::string &message) {
    Manifest parsed;
    std::string error;
    EXPECT_FALSE(
        parseManifest(replaceOnce(manifest, arena, to), parsed, error));
    EXPECT_EQ(error, message);
  };
  expectError(R"("arena": {})",
              "manifest: arena: expected an array, got an object");
  expectError(R"("arena": [{"order": [2, 6]}])",
              "manifest: arena[0]: missing field 'empty'");
  expectError(R"("arena": [{"empty": [], "order": [2, 0]}])",
              "manifest: arena[0].order[1]: buffer 0 is an input, not a temp");
  expectError(R"("arena": [{"empty": [6], "order": [2, 6]}])",
              "manifest: arena[0].order[1]: temp buffer 6 is listed twice");
  expectError(R"("arena": [{"empty": [], "order": [2]}])",
              "manifest: arena[0]: places 1 of the 2 temps");
  expectError(R"("arena": [{"empty": [], "order": [2, 99]}])",
              "manifest: arena[0].order[1]: unknown buffer id 99");
  std::string many;
  for (int i = 0; i < 17; ++i)
    many += std::string(i ? ", " : "") + R"({"empty": [], "order": [2, 6]})";
  expectError(R"("arena": [)" + many + "]",
              "manifest: arena: has 17 placements, more than the 16 a model "
              "keeps");
}

// A placement the file gives is used only where its empty temps are empty:
// one that says the workspace is empty is no placement for a split run,
// which places its temps itself, and correctly.
TEST(SessionTest, PlannedArenaIsUsedOnlyWhereItHolds) {
  size_t plans = 0;
  std::string manifest =
      replaceOnce(withPlannedArena(splitManifest(), plans),
                  R"("arena": [{"empty": [], "order": [2, 6]}])",
                  R"("arena": [{"empty": [6], "order": [2]}])");
  auto session = makeSession(loadModel(manifest));
  ASSERT_NE(session, nullptr);
  runLinear(*session, 1000, 3);
  EXPECT_STREQ(session->groupVariant(0), "matmul_large");
  EXPECT_EQ(session->arenaPlacementsMade(), 0);
  runLinear(*session, 5, 4);
  EXPECT_STREQ(session->groupVariant(0), "matmul_part");
  EXPECT_GE(session->arenaPlacementsMade(), 1);
  EXPECT_EQ(session->arenaPlacement().size, session->arenaPlacement().livePeak);
}

TEST(SessionTest, SplitVariantErrors) {
  auto expectError = [](const std::string &manifest,
                        const std::string &message) {
    Manifest parsed;
    std::string error;
    EXPECT_FALSE(parseManifest(manifest, parsed, error));
    EXPECT_EQ(error, message);
  };
  std::string split = splitManifest();
  auto edit = [&](const std::string &from, const std::string &to) {
    std::string text = split;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  expectError(edit(R"("then": [3])", R"("then": [9])"),
              "manifest: groups[0].variants[0].then[0]: kernel index 9 is "
              "out of range (5 kernels)");
  expectError(edit(R"("then": [3])", R"("then": 3)"),
              "manifest: groups[0].variants[0].then: expected an array of "
              "kernel indices");
  expectError(edit(R"({"kernel": 1, "when")", R"({"kernel": 2, "when")"),
              "manifest: groups[0].variants[1]: kernel 'matmul_part' leads "
              "another variant with a 'then'");
  expectError(edit(R"({"kernel": 1, "when")",
                   R"({"kernel": 2, "then": [4], "when")"),
              "manifest: groups[0].variants[1].then: kernel 'matmul_part' "
              "leads another variant with a different 'then'");
  expectError(edit(R"("live": [0, 0])", R"("live": [0, 1])"),
              "manifest: buffers[5].live: a workspace lives in one launch "
              "step, not [0, 1]");
  expectError(edit(R"("live": [0, 0])", R"("live": [2, 2])"),
              "manifest: buffers[5].live: a workspace lives in one launch "
              "step, not [2, 2]");
  expectError(edit(R"({"op": "copy", "src": 2, "dst": 5})",
                   R"({"op": "copy", "src": 6, "dst": 5})"),
              "manifest: steps[2]: uses temp buffer 6 outside its lifetime "
              "[0, 0]");
}

TEST(SessionTest, VariantSelectionIsMemoized) {
  auto session = makeSession(loadModel(linearManifest()));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->groupVariant(0), nullptr);
  runLinear(*session, 5, 1);
  EXPECT_STREQ(session->groupVariant(0), "matmul_small");
  EXPECT_EQ(session->selectionScans(), 2u); // one per group
  runLinear(*session, 5, 2);
  EXPECT_EQ(session->selectionScans(), 2u);
  // A new value of B: every group is selected again, once.
  runLinear(*session, 20, 3);
  EXPECT_STREQ(session->groupVariant(0), "matmul_large");
  EXPECT_EQ(session->selectionScans(), 4u);
  runLinear(*session, 20, 4);
  EXPECT_EQ(session->selectionScans(), 4u);
  runLinear(*session, 5, 5);
  EXPECT_STREQ(session->groupVariant(0), "matmul_small");
  EXPECT_EQ(session->selectionScans(), 4u);
  EXPECT_EQ(session->selectionMemoSize(), 2u); // B = 5 and B = 20
}

TEST(SessionTest, PicksVariantByTable) {
  // The tile search's table over 2*B: matmul_large (variant 1) for B < 9
  // and B >= 33, matmul_small (0) between; both are valid everywhere.
  std::string json = replaceOnce(
      linearManifest(), "{\"symbol\": \"B\", \"min\": 1, \"max\": 16}",
      "{\"symbol\": \"B\", \"min\": 1, \"max\": 4096}");
  json = replaceOnce(json, "{\"symbol\": \"B\", \"min\": 17, \"max\": 4096}",
                     "{\"symbol\": \"B\", \"min\": 1, \"max\": 4096}");
  json = replaceOnce(json, "\"operand_bytes\": 4, \"output_bytes\": 4}",
                     "\"operand_bytes\": 4, \"output_bytes\": 4}, "
                     "\"select\": {\"keys\": [\"2*B\"], \"lower\": [2, 18, 66], "
                     "\"variant\": [1, 0, 1]}");
  auto session = makeSession(loadModel(json));
  ASSERT_NE(session, nullptr);
  for (int64_t b : {1, 8, 9, 20, 32, 33, 100, 1}) {
    runLinear(*session, b, uint32_t(b));
    EXPECT_STREQ(session->groupVariant(0),
                 b >= 9 && b <= 32 ? "matmul_small" : "matmul_large")
        << "B = " << b;
  }
  // Why (dyncc run -v): the key's value and the interval holding it, the
  // first one for values below the table (2*B = 2 is its bound), the last
  // one open where the manifest has no key range.
  runLinear(*session, 20, 1);
  EXPECT_STREQ(session->groupReason(0),
               "v0, by the tile search's table: 2*B = 40 in 18-65");
  runLinear(*session, 100, 1);
  EXPECT_STREQ(session->groupReason(0),
               "v1, by the tile search's table: 2*B = 200 in 66 and up");
  EXPECT_STREQ(session->groupReason(1), "v0, by the group's one variant");
}

TEST(SessionTest, GroupsThatSelectAlikeLookUpOnce) {
  // Groups 2 and 3 repeat the product (into the same temp, with the same
  // numbers): group 2 with group 0's table, group 3 with another.
  std::string table = "\"select\": {\"keys\": [\"2*B\"], \"lower\": "
                      "[2, 18, 66], \"variant\": ";
  std::string variants =
      "\"variants\": [{\"kernel\": 0, \"when\": []}, "
      "{\"kernel\": 1, \"when\": []}], \"problem\": {\"batch\": \"1\", "
      "\"m\": \"B\", \"n\": \"8\", \"k\": \"4\", "
      "\"operand_bytes\": 4, \"output_bytes\": 4}, ";
  auto group = [&](const std::string &name, const std::string &picks) {
    return "{\"name\": \"" + name + "\", \"kind\": \"gemm\", " +
           variants + table + picks + "}}";
  };
  std::string json = replaceOnce(
      linearManifest(),
      "{\"name\": \"matmul\", \"kind\": \"gemm\", \"variants\": [\n"
      "      {\"kernel\": 0, \"when\": [{\"symbol\": \"B\", \"min\": 1, "
      "\"max\": 16}]},\n"
      "      {\"kernel\": 1, \"when\": [{\"symbol\": \"B\", \"min\": 17, "
      "\"max\": 4096}]}\n"
      "    ], \"problem\": {\"batch\": \"1\", \"m\": \"B\", \"n\": \"8\", "
      "\"k\": \"4\",\n"
      "                   \"operand_bytes\": 4, \"output_bytes\": 4}}",
      group("matmul", "[1, 0, 1]"));
  json = replaceOnce(json,
                     "{\"kernel\": 2, \"when\": []}]}",
                     "{\"kernel\": 2, \"when\": []}]},\n    " +
                         group("matmul_again", "[1, 0, 1]") + ",\n    " +
                         group("matmul_other", "[0, 1, 0]"));
  json = replaceOnce(json, "{\"op\": \"launch\", \"group\": 1}",
                     "{\"op\": \"launch\", \"group\": 2}, "
                     "{\"op\": \"launch\", \"group\": 3}, "
                     "{\"op\": \"launch\", \"group\": 1}");
  json = replaceOnce(json, "\"live\": [0, 2]", "\"live\": [0, 4]");
  auto model = loadModel(json);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->selectionClass(0), 0u);
  EXPECT_EQ(model->selectionClass(1), 1u);
  EXPECT_EQ(model->selectionClass(2), 0u);
  EXPECT_EQ(model->selectionClass(3), 3u);
  auto session = makeSession(model);
  ASSERT_NE(session, nullptr);
  uint64_t scans = 0;
  for (int64_t b : {20, 3, 100}) {
    runLinear(*session, b, uint32_t(b));
    bool small = b >= 9 && b <= 32;
    const char *same = small ? "matmul_small" : "matmul_large";
    const char *other = small ? "matmul_large" : "matmul_small";
    EXPECT_STREQ(session->groupVariant(0), same) << "B = " << b;
    EXPECT_STREQ(session->groupVariant(2), same) << "B = " << b;
    EXPECT_STREQ(session->groupVariant(3), other) << "B = " << b;
    // Groups 0, 1 and 3 look up; group 2 takes group 0's pick.
    scans += 3;
    EXPECT_EQ(session->selectionScans(), scans) << "B = " << b;
  }
}

/// linearManifest with its GEMM's two variants SIMT tiles that hold at
/// every B, and a table that picks the first everywhere.
std::string hostModelledManifest() {
  std::string json = replaceOnce(linearManifest(), "\"4 rows per block\"",
                                 "\"block 4x8 thread 1x1 k 4\"");
  json = replaceOnce(json, "\"32 rows per block\"",
                     "\"block 32x8 thread 4x4 k 4\"");
  json = replaceOnce(json,
                     "{\"kernel\": 0, \"when\": [{\"symbol\": \"B\", \"min\": "
                     "1, \"max\": 16}]}",
                     "{\"kernel\": 0, \"when\": []}");
  json = replaceOnce(json,
                     "{\"kernel\": 1, \"when\": [{\"symbol\": \"B\", \"min\": "
                     "17, \"max\": 4096}]}",
                     "{\"kernel\": 1, \"when\": []}");
  return replaceOnce(json, "\"operand_bytes\": 4, \"output_bytes\": 4}}",
                     "\"operand_bytes\": 4, \"output_bytes\": 4},\n"
                     "     \"select\": {\"keys\": [\"B\"], \"lower\": [1], "
                     "\"variant\": [0]}}");
}

// A cpu session picks a GEMM's variant by the host model, where the table
// (searched for a GPU) picks the first at every B; the outputs are right
// whichever runs, and the reason names the model and its predictions.
TEST(SessionTest, HostModelSelectsCpuGemmVariants) {
  auto model = loadModel(hostModelledManifest());
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->hostModelledTiles(0).size(), 2u);
  EXPECT_TRUE(model->hostModelledTiles(1).empty()); // elementwise
  auto session = makeSessionWithEnv(model, "DYNCC_NUM_THREADS", "1");
  ASSERT_NE(session, nullptr);
  dyncc::cost::HostDevice host;
  host.threads = 1;
  std::set<std::string> ran;
  for (int64_t b : {1, 3, 100, 1000}) {
    runLinear(*session, b, uint64_t(b));
    dyncc::cost::GemmProblem p;
    p.m = b;
    p.n = 8;
    p.k = 4;
    double t0 =
        predictHostGemm(model->hostModelledTiles(0)[0], p, host).seconds;
    double t1 =
        predictHostGemm(model->hostModelledTiles(0)[1], p, host).seconds;
    const char *expected = t1 < t0 ? "matmul_large" : "matmul_small";
    EXPECT_STREQ(session->groupVariant(0), expected) << "B = " << b;
    ran.insert(session->groupVariant(0));
    std::string reason = session->groupReason(0);
    EXPECT_EQ(reason.rfind(std::string(t1 < t0 ? "v1" : "v0") +
                               ", by the host model (1 thread): predicted ",
                           0),
              0u)
        << reason;
  }
  // Small B takes the block of 4 rows, large B the 32-row one.
  EXPECT_EQ(ran.size(), 2u);
}

// DYNCC_HOST_SELECTION=table selects by the table, as a GPU does; another
// value is an error at session creation.
TEST(SessionTest, HostSelectionFollowsEnvironment) {
  auto model = loadModel(hostModelledManifest());
  ASSERT_NE(model, nullptr);
  auto session = makeSessionWithEnv(model, "DYNCC_HOST_SELECTION", "table");
  ASSERT_NE(session, nullptr);
  runLinear(*session, 1000, 4);
  EXPECT_STREQ(session->groupVariant(0), "matmul_small");
  EXPECT_EQ(std::string(session->groupReason(0))
                .rfind("v0, by the tile search's table", 0),
            0u)
      << session->groupReason(0);
  RuntimeError error;
  auto refused = createWithEnv(model, "DYNCC_HOST_SELECTION", "fastest", error);
  EXPECT_EQ(refused, nullptr);
  EXPECT_EQ(error.message,
            "DYNCC_HOST_SELECTION: expected 'model' or 'table', got 'fastest'");
}

/// The linear model with its host code in builds of `levels`, each in a
/// section of its own (`cpu.LEVEL.so`; the first is cpu.so, which the
/// kernels name), loaded with DYNCC_HOST_ISA set to `cap` (unset where
/// null). Build `runnable` holds the test kernels, the others bytes no
/// loader takes: loading one of them fails the load.
std::shared_ptr<const Model> loadBuilds(const std::vector<std::string> &levels,
                                        const char *cap, RuntimeError &error,
                                        size_t runnable = SIZE_MAX) {
  std::string builds;
  ArtifactWriter writer;
  std::vector<float> w = linearWeights();
  writer.addSection("w0", w.data(), w.size() * sizeof(float));
  for (size_t i = 0; i < levels.size(); ++i) {
    std::string section = i == 0 ? "cpu.so" : "cpu." + levels[i] + ".so";
    builds += std::string(i ? ", " : "") + "{\"isa\": \"" + levels[i] +
              "\", \"section\": \"" + section + "\"}";
    writer.addSection(section, i == runnable ? kernelLibrary()
                                             : std::string("not an object"));
  }
  writer.setManifest(
      replaceOnce(linearManifest(), "\"steps\": [",
                  "\"host_code\": [" + builds + "],\n  \"steps\": ["));
  std::string bytes, message;
  EXPECT_TRUE(writer.serialize(bytes, message)) << message;
  ScopedEnv env("DYNCC_HOST_ISA", cap);
  return Model::loadMemory(bytes.data(), bytes.size(), "test.dyncc", error);
}

// The highest build the processor runs, under DYNCC_HOST_ISA; a level the
// run-time does not know is never loaded.
TEST(SessionTest, LoadsTheHighestHostCodeItRuns) {
  RuntimeError error;
  // "generic" runs anywhere; x86-64-v2 on every x86-64 the run-time runs
  // on (elsewhere the run-time falls back to generic).
  bool x86 = hostRunsIsa("x86-64-v2");
  auto model = loadBuilds({"generic", "x86-64-v2", "rva23"}, nullptr, error,
                          x86 ? 1 : 0);
  ASSERT_NE(model, nullptr) << error.message;
  EXPECT_EQ(model->hostIsa(), x86 ? "x86-64-v2" : "generic");
  auto session = makeSession(model);
  ASSERT_NE(session, nullptr);
  runLinear(*session, 7, 11);
  auto capped = loadBuilds({"generic", "x86-64-v2"}, "generic", error, 0);
  ASSERT_NE(capped, nullptr) << error.message;
  EXPECT_EQ(capped->hostIsa(), "generic");
  // Without builds (artifacts from before them): each kernel's section,
  // no level.
  auto plain = loadModel(linearManifest());
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->hostIsa(), "");
  // The build loaded is the one that runs: with the chosen build's bytes
  // not an object, the load fails naming its section.
  auto wrong = loadBuilds({"generic", "x86-64-v2"}, nullptr, error, 5);
  EXPECT_EQ(wrong, nullptr);
  EXPECT_NE(error.message.find(x86 ? "section 'cpu.x86-64-v2.so'"
                                   : "section 'cpu.so'"),
            std::string::npos)
      << error.message;
}

// No build at or under the cap: the artifact loads (for GPU sessions),
// a cpu session is refused, naming the builds and the cap; a cap that is
// no level is refused at load.
TEST(SessionTest, RefusesHostCodeThatCannotRun) {
  RuntimeError error;
  auto model = loadBuilds({"x86-64-v2", "x86-64-v4"}, "generic", error);
  ASSERT_NE(model, nullptr) << error.message;
  EXPECT_EQ(model->hostIsa(), "");
  auto session = Session::create(model, "cpu", error);
  EXPECT_EQ(session, nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(error.message.rfind("no build of the host code runs on this "
                                "processor: the artifact's are for x86-64-v2, "
                                "x86-64-v4, this processor runs up to ",
                                0),
            0u)
      << error.message;
  EXPECT_NE(error.message.find(" and DYNCC_HOST_ISA allows up to generic"),
            std::string::npos)
      << error.message;
  RuntimeError badCap;
  EXPECT_EQ(loadBuilds({"x86-64-v2"}, "avx512", badCap), nullptr);
  EXPECT_EQ(badCap.code, DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(badCap.message,
            "DYNCC_HOST_ISA: expected 'generic', 'x86-64-v2', 'x86-64-v3' or "
            "'x86-64-v4', got 'avx512'");
}

// The model describes f32 SIMT GEMMs of several variants only.
TEST(SessionTest, HostModelLeavesOtherGroupsToTheTable) {
  std::string base = hostModelledManifest();
  auto half = loadModel(
      replaceOnce(base, "\"operand_bytes\": 4", "\"operand_bytes\": 2"));
  ASSERT_NE(half, nullptr);
  EXPECT_TRUE(half->hostModelledTiles(0).empty());
  auto tensorCores = loadModel(
      replaceOnce(base, "\"block 32x8 thread 4x4 k 4\"",
                  "\"block 32x32 warp 16x16 thread 4x8 k 16 mma 16x8x16\""));
  ASSERT_NE(tensorCores, nullptr);
  EXPECT_TRUE(tensorCores->hostModelledTiles(0).empty());
  auto rows = loadModel(linearManifest()); // configs that are not tiles
  ASSERT_NE(rows, nullptr);
  EXPECT_TRUE(rows->hostModelledTiles(0).empty());
  auto session = makeSession(half);
  ASSERT_NE(session, nullptr);
  runLinear(*session, 1000, 5);
  EXPECT_STREQ(session->groupVariant(0), "matmul_small");
}

TEST(SessionTest, ReasonsNameConditionsOrNothing) {
  auto session = makeSession(loadModel(linearManifest()));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->groupReason(0), nullptr);
  runLinear(*session, 17, 1);
  EXPECT_STREQ(session->groupReason(0),
               "v1, by the first variant whose conditions hold: B = 17 in "
               "17-4096");
}

TEST(SessionTest, NoMatchingVariant) {
  auto session = makeSession(loadModel(replaceOnce(
      linearManifest(), "{\"symbol\": \"B\", \"min\": 17, \"max\": 4096}",
      "{\"symbol\": \"B\", \"min\": 17, \"max\": 100}")));
  ASSERT_NE(session, nullptr);
  runLinear(*session, 100, 1);
  std::vector<float> x(200 * 16, 0.5f);
  int64_t shape[2] = {200, 16};
  RuntimeError error;
  ASSERT_TRUE(session->setInput(0, x.data(), shape, 2, error));
  EXPECT_FALSE(session->run(error));
  EXPECT_EQ(error.code, DYNCC_ERROR_SHAPE);
  EXPECT_EQ(error.message, "no variant of group 'matmul' matches B = 200");
  EXPECT_FALSE(session->hasRun());
}

TEST(SessionTest, BufferSizeErrorsNameTheBuffer) {
  // The temp's or the input buffer's shape, in place of its own.
  auto attempt = [](const std::string &from, const std::string &to) {
    auto session = makeSession(loadModel(replaceOnce(linearManifest(), from,
                                                     to)));
    RuntimeError error;
    if (!session)
      return std::string("no session");
    std::vector<float> x(5 * 16, 0.5f);
    int64_t shape[2] = {5, 16};
    EXPECT_TRUE(session->setInput(0, x.data(), shape, 2, error));
    EXPECT_FALSE(session->run(error));
    EXPECT_EQ(error.code, DYNCC_ERROR_SHAPE);
    return error.message;
  };
  std::string temp = "\"kind\": \"temp\", \"dtype\": \"f32\", \"shape\": "
                     "[\"B\", \"8\"]";
  std::string input = "\"kind\": \"input\", \"dtype\": \"f32\", "
                      "\"shape\": [\"B\", \"16\"]";
  auto shaped = [](std::string text, const std::string &dims) {
    return text.replace(text.find("[\"B"), std::string::npos, dims);
  };
  EXPECT_EQ(attempt(temp, shaped(temp, "[\"B - 6\", \"8\"]")),
            "temp buffer 2 dimension 0: 'B - 6' = -1 is negative");
  EXPECT_EQ(attempt(temp, shaped(temp, "[\"8\", \"ceildiv(B, B - 5)\"]")),
            "temp buffer 2 dimension 1: cannot evaluate 'ceildiv(B, B - 5)': "
            "division by zero");
  EXPECT_EQ(
      attempt(temp, shaped(temp, "[\"B * 1000000000000\", \"10000000\"]")),
      "temp buffer 2: size overflows");
  EXPECT_EQ(attempt(input, shaped(input, "[\"B + 1\", \"16\"]")),
            "input 'X' dimension 0: input buffer 0 expects B + 1 (= 6), got 5");
}

TEST(SessionTest, LaunchErrorsNameTheKernel) {
  // A kernel parameter or grid extent that cannot be evaluated, or is
  // negative, at B = 5, in place of add1_relu's: the run fails naming it,
  // again at the same shape (nothing of the failed launch is kept), and
  // runs at a shape where it evaluates.
  auto attempt = [](const std::string &from, const std::string &to,
                    int64_t rows) {
    auto session =
        makeSession(loadModel(replaceOnce(linearManifest(), from, to)));
    if (!session)
      return std::string("no session");
    std::vector<float> x(rows * 16, 0.5f);
    int64_t shape[2] = {rows, 16};
    std::string messages;
    for (int run = 0; run < 2; ++run) {
      RuntimeError error;
      EXPECT_TRUE(session->setInput(0, x.data(), shape, 2, error));
      if (session->run(error))
        return std::string("ran");
      EXPECT_EQ(error.code, DYNCC_ERROR_SHAPE);
      messages += (run ? " | " : "") + error.message;
    }
    return messages;
  };
  std::string param = R"j({"expr": "B*8"})j";
  std::string grid = R"j("grid": ["ceildiv(B*8, 64)")j";
  EXPECT_EQ(attempt(param, R"j({"expr": "ceildiv(B*8, B - 5)"})j", 5),
            "kernel 'add1_relu' params[2]: cannot evaluate "
            "'ceildiv(B*8, B - 5)': division by zero | kernel 'add1_relu' "
            "params[2]: cannot evaluate 'ceildiv(B*8, B - 5)': division by "
            "zero");
  EXPECT_EQ(attempt(param, R"j({"expr": "ceildiv(B*8, B - 5)"})j", 6), "ran");
  EXPECT_EQ(attempt(grid, R"j("grid": ["ceildiv(B*8, B - 5)")j", 5),
            "kernel 'add1_relu' grid[0]: cannot evaluate "
            "'ceildiv(B*8, B - 5)': division by zero | kernel 'add1_relu' "
            "grid[0]: cannot evaluate 'ceildiv(B*8, B - 5)': division by "
            "zero");
  EXPECT_EQ(attempt(grid, R"j("grid": ["B - 6")j", 5),
            "kernel 'add1_relu' grid[0]: 'B - 6' = -1 is negative | kernel "
            "'add1_relu' grid[0]: 'B - 6' = -1 is negative");
}

TEST(SessionTest, KernelAbi) {
  auto session = makeSession(loadModel(probeManifest()));
  ASSERT_NE(session, nullptr);
  struct Case {
    int64_t a, c;
    std::vector<int64_t> strides;
  } cases[] = {{3, 5, {5, 5, 1}},
               {3, 0, {0, 0, 1}},
               {0, 4, {4, 4, 1}},
               {1, 1, {1, 1, 1}}};
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.a) + "x1x" + std::to_string(c.c));
    std::vector<float> p(c.a * c.c + 1, 1.0f);
    int64_t shape[3] = {c.a, 1, c.c};
    RuntimeError error;
    ASSERT_TRUE(session->setInput(0, p.data(), shape, 3, error))
        << error.message;
    ASSERT_TRUE(session->run(error)) << error.message;
    const int64_t *q = static_cast<const int64_t *>(session->outputData(0));
    EXPECT_EQ(q[0], 1) << "allocated == aligned, non-null";
    EXPECT_EQ(q[1], 0) << "offset";
    EXPECT_EQ(q[2], c.a);
    EXPECT_EQ(q[3], 1);
    EXPECT_EQ(q[4], c.c);
    EXPECT_EQ((std::vector<int64_t>{q[5], q[6], q[7]}), c.strides);
    EXPECT_EQ(q[8], c.a * 1000 + c.c) << "expression parameter";
    EXPECT_EQ(q[9], 24) << "every block of a 2x3x4 grid runs once";
    EXPECT_EQ(q[10], (int64_t(1) << 24) - 1) << "each block index once";
    EXPECT_EQ(q[11], c.a) << "a grid of A x 1 x 1 blocks (none when A = 0)";
  }
}

TEST(SessionTest, BindingErrors) {
  auto model = loadModel(bindingManifest());
  ASSERT_NE(model, nullptr);
  std::vector<float> data(1 << 16, 1.0f);
  auto attempt = [&](std::vector<int64_t> x, std::vector<int64_t> y,
                     std::vector<int64_t> z) -> RuntimeError {
    auto session = makeSession(model);
    RuntimeError error;
    if (!session->setInput(0, data.data(), x.data(), x.size(), error) ||
        !session->setInput(1, data.data(), y.data(), y.size(), error) ||
        !session->setInput(2, data.data(), z.data(), z.size(), error) ||
        !session->run(error))
      return error;
    const float *o = static_cast<const float *>(session->outputData(0));
    EXPECT_EQ(session->outputShape(0), std::vector<int64_t>{x[0]});
    for (int64_t i = 0; i < x[0]; ++i)
      EXPECT_EQ(o[i], static_cast<float>(y[1]));
    return error;
  };
  EXPECT_EQ(attempt({5, 64}, {5, 8}, {16}).code, DYNCC_OK);

  struct Case {
    std::vector<int64_t> x, y, z;
    const char *message;
  } cases[] = {
      {{5, 64, 1}, {5, 8}, {16}, "input 'X': expected rank 2, got 3"},
      {{5, 63}, {5, 8}, {16}, "input 'X' dimension 1: expected 64, got 63"},
      {{9000, 64},
       {5, 8},
       {16},
       "input 'X' dimension 0: symbol B = 9000 is outside its range [1, 8192]"},
      {{0, 64},
       {5, 8},
       {16},
       "input 'X' dimension 0: symbol B = 0 is outside its range [1, 8192]"},
      {{5, 64},
       {7, 8},
       {16},
       "input 'Y' dimension 0: expected B (= 5 from input 'X' dimension 0), "
       "got 7"},
      {{5, 64},
       {5, 7},
       {14},
       "input 'Y' dimension 1: symbol S = 7 is not a multiple of 2"},
      {{5, 64},
       {5, 8},
       {10},
       "input 'Z' dimension 0: expected 2*S (= 16), got 10"},
      {{5, 64},
       {5, 40},
       {80},
       "constraint S == min(S, 32) does not hold: 40 != 32 (from test "
       "constraint)"},
      {{-1, 64}, {5, 8}, {16}, "input 'X' dimension 0: negative size -1"},
  };
  for (const Case &c : cases) {
    RuntimeError error = attempt(c.x, c.y, c.z);
    EXPECT_EQ(error.code, DYNCC_ERROR_SHAPE) << c.message;
    EXPECT_EQ(error.message, c.message);
  }
}

TEST(SessionTest, InputNotSet) {
  auto session = makeSession(loadModel(bindingManifest()));
  ASSERT_NE(session, nullptr);
  std::vector<float> data(1024, 1.0f);
  int64_t x[2] = {2, 64};
  RuntimeError error;
  ASSERT_TRUE(session->setInput(0, data.data(), x, 2, error));
  EXPECT_FALSE(session->run(error));
  EXPECT_EQ(error.message, "input 'Y' was not set");
  // A failed setInput unsets the input.
  int64_t bad[2] = {2, 65};
  EXPECT_FALSE(session->setInput(0, data.data(), bad, 2, error));
  EXPECT_FALSE(session->run(error));
  EXPECT_EQ(error.message, "input 'X' was not set");
  EXPECT_FALSE(session->setInput(7, data.data(), x, 2, error));
  EXPECT_EQ(error.code, DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error.message, "input index 7 is out of range (3 inputs)");
  EXPECT_FALSE(session->setInput(0, nullptr, x, 2, error));
  EXPECT_EQ(error.message, "input 'X': data is null");
}

TEST(SessionTest, ConcurrentSessions) {
  auto model = loadModel(linearManifest());
  ASSERT_NE(model, nullptr);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      RuntimeError error;
      auto session = Session::create(model, "cpu", error);
      if (!session) {
        failures[t] = 1;
        return;
      }
      const int64_t sizes[4][3] = {
          {1, 64, 7}, {1000, 3, 17}, {16, 500, 2}, {33, 9, 4096}};
      for (int iteration = 0; iteration < 6; ++iteration) {
        int64_t rows = sizes[t][iteration % 3];
        std::vector<float> x = randomFloats(rows * 16, t * 100 + iteration);
        int64_t shape[2] = {rows, 16};
        if (!session->setInput(0, x.data(), shape, 2, error) ||
            !session->run(error)) {
          failures[t] = 2;
          return;
        }
        std::vector<float> ref, y;
        linearReference(x, rows, ref, y);
        const float *out = static_cast<const float *>(session->outputData(0));
        for (size_t i = 0; i < y.size(); ++i)
          if (std::fabs(out[i] - y[i]) > 1e-4f)
            failures[t] = 3;
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0, 0}));
}

TEST(SessionTest, ThreadCountFollowsEnvironment) {
  auto model = loadModel(linearManifest());
  ASSERT_NE(model, nullptr);
  auto single = makeSessionWithEnv(model, "DYNCC_NUM_THREADS", "1");
  EXPECT_EQ(single->numThreads(), 1u);
  runLinear(*single, 1000, 9);
  auto defaultSession = makeSession(model);
  unsigned hardware = std::thread::hardware_concurrency();
  EXPECT_EQ(defaultSession->numThreads(), hardware ? hardware : 1u);
}

TEST(SessionTest, DeviceSelection) {
  auto model = loadModel(linearManifest());
  RuntimeError error;
  // The fake driver's device is an sm_90, which no kernel has code for.
  ASSERT_TRUE(fakeDriverSet());
  EXPECT_EQ(Session::create(model, "cuda:0", error), nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(error.message, "cuda:0: kernel 'matmul_small' has no code for "
                           "sm_90 (the artifact's targets: cpu)");
  EXPECT_EQ(Session::create(model, "tpu", error), nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(error.message,
            "unknown device 'tpu' (expected 'cpu', 'cuda' or 'cuda:N')");
  EXPECT_EQ(Session::create(model, "cuda:x", error), nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(Session::create(model, nullptr, error), nullptr);
}

TEST(SessionTest, GpuOnlyKernelCannotRunOnCpu) {
  std::string manifest = replaceOnce(
      linearManifest(),
      "\"cpu\": {\"section\": \"cpu.so\", \"symbol\": \"test_add1_relu\"}",
      "\"gpu\": {\"sm_90\": {\"section\": \"cpu.so\", \"entry\": \"x\"}}");
  auto model = loadModel(manifest);
  ASSERT_NE(model, nullptr);
  RuntimeError error;
  EXPECT_EQ(Session::create(model, "cpu", error), nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(error.message,
            "kernel 'add1_relu' of group 'bias_relu' has no CPU code");
}

TEST(SessionTest, MissingKernelSymbol) {
  std::string bytes = buildArtifact(
      replaceOnce(linearManifest(), "\"symbol\": \"test_add1_relu\"",
                  "\"symbol\": \"no_such_kernel\""));
  RuntimeError error;
  EXPECT_EQ(Model::loadMemory(bytes.data(), bytes.size(), "model.dyncc", error),
            nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_FORMAT);
  EXPECT_EQ(error.message, "model.dyncc: kernel 'add1_relu': symbol "
                           "'no_such_kernel' not found in section 'cpu.so'");
}

TEST(SessionTest, BadSharedObject) {
  dyncc::runtime::ArtifactWriter writer;
  writer.setManifest(linearManifest());
  std::vector<float> w = linearWeights();
  writer.addSection("w0", w.data(), w.size() * sizeof(float));
  writer.addSection("cpu.so", std::string("not an ELF file"));
  std::string bytes, message;
  ASSERT_TRUE(writer.serialize(bytes, message));
  RuntimeError error;
  EXPECT_EQ(Model::loadMemory(bytes.data(), bytes.size(), "model.dyncc", error),
            nullptr);
  EXPECT_EQ(error.code, DYNCC_ERROR_FORMAT);
  EXPECT_EQ(error.message.rfind("model.dyncc: section 'cpu.so': cannot load "
                                "the shared object: ",
                                0),
            0u)
      << error.message;
}

TEST(SessionTest, BindsSizesFromData) {
  // K is read from input X in the middle of the run: the temp it sizes is
  // placed then, around the temp written before, and the arena grows with
  // that temp's contents kept. fillk's variant depends on K, which the
  // inputs' shapes (the same at every run) do not bind: it is selected by
  // the value read at each run.
  auto model = loadModel(dataSizeVariantsManifest());
  ASSERT_NE(model, nullptr);
  auto session = makeSession(model);
  ASSERT_NE(session, nullptr);
  auto run = [&](int64_t k, int64_t check) {
    int64_t x[2] = {k, check};
    int64_t shape[1] = {2};
    RuntimeError error;
    if (!session->setInput(0, x, shape, 1, error) || !session->run(error))
      return error;
    EXPECT_EQ(session->outputShape(0), std::vector<int64_t>{k});
    const float *o = static_cast<const float *>(session->outputData(0));
    for (int64_t i = 0; i < k; ++i)
      EXPECT_EQ(o[i], static_cast<float>(k)) << i;
    const float *p = static_cast<const float *>(session->outputData(1));
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(p[i], 7.0f) << i;
    EXPECT_EQ(session->symbolValue(0), k);
    EXPECT_STREQ(session->groupVariant(1), k == 1     ? "fillk_one"
                                           : k <= 100 ? "fillk"
                                                      : "fillk_large");
    const ArenaPlacement &placement = session->arenaPlacement();
    EXPECT_EQ(placement.livePeak, 64u + (4 * k + 63) / 64 * 64);
    EXPECT_LE(placement.size, session->arenaCapacity());
    return error;
  };
  for (int64_t k : {1, 5000, 3, 50000, 17})
    EXPECT_EQ(run(k, 3).message, "") << k;
  // fill7's selection is memoized (the inputs bind no symbol, so one
  // tuple); fillk runs after the bind step, where its selection may read
  // K, so it is selected at each of the five runs.
  EXPECT_EQ(session->selectionScans(), 6u);
  EXPECT_EQ(session->selectionMemoSize(), 1u);
  EXPECT_EQ(run(5, 4).message, "test bind: element 1 (3) of the sizes read "
                               "from data is 4, expected 3");
  EXPECT_EQ(run(0, 3).message, "test bind: element 0 (K) of the sizes read "
                               "from data is 0, outside K's range [1, 100000]");
  EXPECT_EQ(run(50001, 3).message,
            "constraint K == min(K, 50000) does not hold: 50001 != 50000 "
            "(from test constraint)");
  EXPECT_EQ(run(9, 3).message, "");
}

TEST(SessionTest, ManyModelsLoadTheirOwnCode) {
  // Each load gets its own copy of the module, even when an earlier one was
  // freed and its /proc/self/fd/N number is reused.
  for (int i = 0; i < 5; ++i) {
    auto model = loadModel(linearManifest());
    ASSERT_NE(model, nullptr);
    auto session = makeSession(model);
    runLinear(*session, 9, i);
  }
  auto a = loadModel(linearManifest());
  auto b = loadModel(probeManifest());
  auto sessionB = makeSession(b);
  auto sessionA = makeSession(a);
  runLinear(*sessionA, 40, 1);
}

//===----------------------------------------------------------------------===//
// C API
//===----------------------------------------------------------------------===//

TEST(CApiTest, LoadQueryRun) {
  TempDir dir;
  std::string path = dir.file("linear.dyncc");
  writeArtifact(path, linearManifest());
  dyncc_artifact *artifact = nullptr;
  ASSERT_EQ(dyncc_artifact_load(path.c_str(), &artifact), DYNCC_OK)
      << dyncc_last_error();
  EXPECT_STREQ(dyncc_artifact_model_name(artifact), "linear_relu");
  EXPECT_STREQ(dyncc_artifact_producer(artifact), "dyncc-tests");
  EXPECT_EQ(dyncc_artifact_num_targets(artifact), 1u);
  EXPECT_STREQ(dyncc_artifact_target(artifact, 0), "cpu");
  EXPECT_EQ(dyncc_artifact_target(artifact, 1), nullptr);
  EXPECT_EQ(dyncc_artifact_num_inputs(artifact), 1u);
  EXPECT_STREQ(dyncc_artifact_input_name(artifact, 0), "X");
  EXPECT_STREQ(dyncc_artifact_input_dtype(artifact, 0), "f32");
  EXPECT_EQ(dyncc_artifact_input_rank(artifact, 0), 2u);
  EXPECT_STREQ(dyncc_artifact_input_dim(artifact, 0, 0), "B");
  EXPECT_STREQ(dyncc_artifact_input_dim(artifact, 0, 1), "16");
  EXPECT_EQ(dyncc_artifact_input_dim(artifact, 0, 2), nullptr);
  EXPECT_EQ(dyncc_artifact_num_outputs(artifact), 2u);
  EXPECT_STREQ(dyncc_artifact_output_name(artifact, 1), "t:copy");
  size_t index = 99;
  EXPECT_EQ(dyncc_artifact_find_output(artifact, "t:copy", &index), DYNCC_OK);
  EXPECT_EQ(index, 1u);
  EXPECT_EQ(dyncc_artifact_find_input(artifact, "Q", &index),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_last_error(), "no input named 'Q' (inputs: X)");
  for (auto [a, name, out] :
       {std::tuple(artifact, static_cast<const char *>(nullptr), &index),
        std::tuple(artifact, "X", static_cast<size_t *>(nullptr)),
        std::tuple(static_cast<dyncc_artifact *>(nullptr), "X", &index)}) {
    EXPECT_EQ(dyncc_artifact_find_input(a, name, out),
              DYNCC_ERROR_INVALID_ARGUMENT);
    EXPECT_STREQ(dyncc_last_error(),
                 "dyncc_artifact_find_input: null argument");
  }
  EXPECT_EQ(dyncc_artifact_num_symbols(artifact), 1u);
  EXPECT_STREQ(dyncc_artifact_symbol_name(artifact, 0), "B");
  EXPECT_EQ(dyncc_artifact_symbol_min(artifact, 0), 1);
  EXPECT_EQ(dyncc_artifact_symbol_max(artifact, 0), 4096);
  EXPECT_EQ(dyncc_artifact_num_groups(artifact), 2u);
  EXPECT_STREQ(dyncc_artifact_group_name(artifact, 0), "matmul");
  EXPECT_STREQ(dyncc_artifact_group_kind(artifact, 0), "gemm");

  dyncc_session *session = nullptr;
  EXPECT_EQ(dyncc_session_create(artifact, "cuda:1", &session),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_last_error(),
               "cuda:1: no such device (this machine has 1 CUDA device)");
  ASSERT_EQ(dyncc_session_create(artifact, "cpu", &session), DYNCC_OK);
  // The session keeps the model alive.
  dyncc_artifact_free(artifact);

  size_t rank = 0;
  EXPECT_EQ(dyncc_session_output_shape(session, 0, nullptr, 0, &rank),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dyncc_session_output_data(session, 0), nullptr);
  EXPECT_EQ(dyncc_session_output_data(nullptr, 0), nullptr);
  EXPECT_EQ(dyncc_session_output_size(nullptr, 0), 0u);
  uint64_t arenaBytes = 0, livePeak = 0;
  EXPECT_EQ(dyncc_session_memory(session, &arenaBytes, &livePeak),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_last_error(),
               "the session has no results: run it first");
  EXPECT_EQ(dyncc_session_memory(session, nullptr, &livePeak),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_last_error(), "dyncc_session_memory: null argument");
  // Driver timing is for CUDA sessions; with none, a CPU session reports 0.
  EXPECT_EQ(dyncc_session_set_driver_timing(session, 1),
            DYNCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(dyncc_session_set_driver_timing(nullptr, 1),
            DYNCC_ERROR_INVALID_ARGUMENT);
  double driverMicroseconds = -1;
  uint64_t driverCalls = 1;
  EXPECT_EQ(dyncc_session_driver_time(session, &driverMicroseconds,
                                      &driverCalls),
            DYNCC_OK);
  EXPECT_EQ(driverMicroseconds, 0);
  EXPECT_EQ(driverCalls, 0u);
  EXPECT_EQ(dyncc_session_driver_time(nullptr, nullptr, nullptr),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(dyncc_session_run(session), DYNCC_ERROR_SHAPE);
  EXPECT_STREQ(dyncc_last_error(), "input 'X' was not set");

  std::vector<float> x = randomFloats(7 * 16, 5);
  int64_t shape[2] = {7, 17};
  EXPECT_EQ(dyncc_session_set_input_by_name(session, "X", x.data(), shape, 2),
            DYNCC_ERROR_SHAPE);
  EXPECT_STREQ(dyncc_last_error(),
               "input 'X' dimension 1: expected 16, got 17");
  shape[1] = 16;
  EXPECT_EQ(dyncc_session_set_input_by_name(session, "W", x.data(), shape, 2),
            DYNCC_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(dyncc_session_set_input_by_name(session, "X", x.data(), shape, 2),
            DYNCC_OK);
  ASSERT_EQ(dyncc_session_run(session), DYNCC_OK) << dyncc_last_error();
  int64_t outShape[4] = {0, 0, 0, 0};
  ASSERT_EQ(dyncc_session_output_shape(session, 0, outShape, 4, &rank),
            DYNCC_OK);
  EXPECT_EQ(rank, 2u);
  EXPECT_EQ(outShape[0], 7);
  EXPECT_EQ(outShape[1], 8);
  EXPECT_EQ(dyncc_session_output_size(session, 0), 7u * 8 * 4);
  std::vector<float> t, y;
  linearReference(x, 7, t, y);
  expectNear(static_cast<const float *>(dyncc_session_output_data(session, 0)),
             y, "Y", 7);
  int64_t b = 0;
  EXPECT_EQ(dyncc_session_symbol_value(session, 0, &b), DYNCC_OK);
  EXPECT_EQ(b, 7);
  EXPECT_EQ(dyncc_session_symbol_value(session, 1, &b),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_session_group_variant(session, 0), "matmul_small");
  EXPECT_EQ(dyncc_session_group_variant(session, 2), nullptr);
  EXPECT_STREQ(dyncc_session_group_reason(session, 0),
               "v0, by the first variant whose conditions hold: B = 7 in "
               "1-16");
  EXPECT_EQ(dyncc_session_group_reason(session, 2), nullptr);
  EXPECT_EQ(dyncc_session_group_reason(nullptr, 0), nullptr);
  EXPECT_GE(dyncc_session_num_threads(session), 1u);
  // One temp, [7, 8] f32 (224 bytes), in 64-byte units: 256.
  ASSERT_EQ(dyncc_session_memory(session, &arenaBytes, &livePeak), DYNCC_OK);
  EXPECT_EQ(arenaBytes, 256u);
  EXPECT_EQ(livePeak, 256u);
  dyncc_session_free(session);
}

TEST(CApiTest, LoadErrors) {
  TempDir dir;
  dyncc_artifact *artifact = reinterpret_cast<dyncc_artifact *>(1);
  EXPECT_EQ(dyncc_artifact_load(dir.file("none.dyncc").c_str(), &artifact),
            DYNCC_ERROR_IO);
  EXPECT_EQ(artifact, nullptr);
  EXPECT_EQ(std::string(dyncc_last_error()),
            dir.file("none.dyncc") +
                ": cannot open: No such file or directory");

  std::string bytes = buildArtifact(linearManifest());
  bytes[8] = 9; // version
  writeFile(dir.file("v9.dyncc"), bytes);
  EXPECT_EQ(dyncc_artifact_load(dir.file("v9.dyncc").c_str(), &artifact),
            DYNCC_ERROR_VERSION);

  bytes = buildArtifact(linearManifest());
  bytes.back() ^= 0x40;
  writeFile(dir.file("sum.dyncc"), bytes);
  EXPECT_EQ(dyncc_artifact_load(dir.file("sum.dyncc").c_str(), &artifact),
            DYNCC_ERROR_CHECKSUM);

  writeArtifact(
      dir.file("fmt.dyncc"),
      replaceOnce(linearManifest(), "\"format\": 2", "\"format\": 1"));
  EXPECT_EQ(dyncc_artifact_load(dir.file("fmt.dyncc").c_str(), &artifact),
            DYNCC_ERROR_VERSION);
  EXPECT_EQ(std::string(dyncc_last_error()),
            dir.file("fmt.dyncc") +
                ": manifest: format: unsupported manifest format 1 (this "
                "run-time reads 2)");

  writeArtifact(dir.file("grid.dyncc"),
                replaceOnce(linearManifest(), "\"ceildiv(B, 4)\", \"1\"",
                            "\"ceildiv(B, 4)\", 1"));
  EXPECT_EQ(dyncc_artifact_load(dir.file("grid.dyncc").c_str(), &artifact),
            DYNCC_ERROR_FORMAT);
  EXPECT_EQ(std::string(dyncc_last_error()),
            dir.file("grid.dyncc") +
                ": manifest: kernels[0].grid[1]: expected a string expression, "
                "got an integer");

  EXPECT_EQ(dyncc_artifact_load(nullptr, &artifact),
            DYNCC_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(dyncc_status_name(DYNCC_ERROR_SHAPE), "DYNCC_ERROR_SHAPE");
  EXPECT_STREQ(dyncc_runtime_version(), "0.1.0");
  EXPECT_STREQ(dyncc_test_c_api_version(), "0.1.0"); // through C
}

TEST(CApiTest, LastErrorIsPerThread) {
  dyncc_artifact *artifact;
  EXPECT_NE(dyncc_artifact_load("/nonexistent/a.dyncc", &artifact), DYNCC_OK);
  std::string other;
  std::thread([&] { other = dyncc_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(dyncc_last_error()), "");
}

TEST(CApiTest, CxxWrapper) {
  TempDir dir;
  std::string path = dir.file("binding.dyncc");
  writeArtifact(path, bindingManifest());
  dyncc::Artifact artifact;
  ASSERT_EQ(artifact.load(path), DYNCC_OK) << dyncc::lastError();
  EXPECT_EQ(artifact.modelName(), "binding");
  EXPECT_EQ(artifact.inputDims(1), (std::vector<std::string>{"B", "S"}));
  EXPECT_EQ(artifact.inputDims(2), std::vector<std::string>{"2*S"});
  EXPECT_EQ(artifact.numSymbols(), 2u);
  dyncc::Session session;
  ASSERT_EQ(session.create(artifact), DYNCC_OK);
  std::vector<float> data(1024, 0.0f);
  ASSERT_EQ(session.setInput("X", data.data(), {3, 64}), DYNCC_OK);
  ASSERT_EQ(session.setInput("Y", data.data(), {3, 4}), DYNCC_OK);
  ASSERT_EQ(session.setInput(2, data.data(), {8}), DYNCC_OK);
  ASSERT_EQ(session.run(), DYNCC_OK) << dyncc::lastError();
  EXPECT_EQ(session.outputShape(0), std::vector<int64_t>{3});
  const float *o = static_cast<const float *>(session.outputData(0));
  EXPECT_EQ(o[0], 4.0f);
  EXPECT_EQ(o[2], 4.0f);
  int64_t s = 0;
  EXPECT_EQ(session.symbolValue(1, s), DYNCC_OK);
  EXPECT_EQ(s, 4);
  EXPECT_EQ(session.groupVariant(0), "fill");
  dyncc::Session moved = std::move(session);
  EXPECT_FALSE(static_cast<bool>(session));
  EXPECT_EQ(moved.outputShape(0), std::vector<int64_t>{3});
}

} // namespace
