//===- ManifestTest.cpp - Tests of the manifest -----------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/Manifest.h"

#include "gtest/gtest.h"

using namespace dyncc::runtime;
using namespace dyncc::test;

namespace {

std::string manifestError(const std::string &json,
                          bool *versionError = nullptr) {
  Manifest manifest;
  std::string error;
  EXPECT_FALSE(parseManifest(json, manifest, error, versionError));
  EXPECT_EQ(error.find('\n'), std::string::npos);
  return error;
}

TEST(ManifestTest, ParsesLinearModel) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(linearManifest(), m, error)) << error;
  EXPECT_EQ(m.format, 2);
  EXPECT_EQ(m.producer, "dyncc-tests");
  EXPECT_EQ(m.model, "linear_relu");
  EXPECT_EQ(m.targets, std::vector<std::string>{"cpu"});
  ASSERT_EQ(m.symbols.size(), 1u);
  EXPECT_EQ(m.symbols[0].name, "B");
  EXPECT_EQ(m.symbols[0].min, 1);
  EXPECT_EQ(m.symbols[0].max, 4096);
  EXPECT_EQ(m.symbols[0].bindingInput, 0u);
  EXPECT_EQ(m.symbols[0].bindingDim, 0u);
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_EQ(m.inputs[0].name, "X");
  EXPECT_EQ(m.inputs[0].dtype, DType::F32);
  EXPECT_TRUE(m.inputs[0].shape[0].isSymbol());
  EXPECT_EQ(m.inputs[0].shape[1].constantValue(), 16);
  ASSERT_EQ(m.outputs.size(), 2u);
  EXPECT_EQ(m.outputs[1].name, "t:copy");
  EXPECT_EQ(m.buffers[m.outputs[1].buffer].id, 5);
  ASSERT_EQ(m.buffers.size(), 5u);
  EXPECT_EQ(m.buffers[1].kind, BufferKind::Weight);
  EXPECT_EQ(m.buffers[1].section, "w0");
  EXPECT_EQ(m.buffers[2].kind, BufferKind::Temp);
  EXPECT_EQ(m.buffers[2].firstStep, 0u);
  EXPECT_EQ(m.buffers[2].lastStep, 2u);
  ASSERT_EQ(m.kernels.size(), 3u);
  const KernelInfo &k0 = m.kernels[0];
  EXPECT_EQ(k0.name, "matmul_small");
  EXPECT_EQ(k0.numSlots, 7u * 3 + 1);
  EXPECT_TRUE(k0.params[0].isBuffer);
  EXPECT_FALSE(k0.params[3].isBuffer);
  EXPECT_EQ(k0.grid[0].text(), "ceildiv(B, 4)");
  EXPECT_TRUE(k0.hasCpu);
  EXPECT_EQ(k0.cpuSymbol, "test_matmul");
  EXPECT_EQ(k0.config, "4 rows per block");
  ASSERT_EQ(m.kernels[1].gpu.size(), 1u);
  EXPECT_EQ(m.kernels[1].gpu[0].arch, "sm_90");
  EXPECT_EQ(m.kernels[1].gpu[0].entry, "matmul_large");
  EXPECT_EQ(m.kernels[2].block[0], 64);
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].variants.size(), 2u);
  EXPECT_EQ(m.groups[0].variants[1].when[0].min, 17);
  EXPECT_EQ(m.groups[0].keySymbols, std::vector<size_t>{0});
  EXPECT_TRUE(m.groups[1].keySymbols.empty());
  // A GEMM group's problem, in terms of the symbols.
  ASSERT_TRUE(m.groups[0].problem.present);
  const int64_t b37[] = {37};
  int64_t value = 0;
  ASSERT_EQ(m.groups[0].problem.m.evaluate(b37, value), ShapeExpr::EvalStatus::Ok);
  EXPECT_EQ(value, 37);
  ASSERT_EQ(m.groups[0].problem.n.evaluate(b37, value), ShapeExpr::EvalStatus::Ok);
  EXPECT_EQ(value, 8);
  ASSERT_EQ(m.groups[0].problem.k.evaluate(b37, value), ShapeExpr::EvalStatus::Ok);
  EXPECT_EQ(value, 4);
  EXPECT_EQ(m.groups[0].problem.operandBytes, 4);
  EXPECT_EQ(m.groups[0].problem.products, 1);
  EXPECT_FALSE(m.groups[1].problem.present);
  ASSERT_EQ(m.steps.size(), 3u);
  EXPECT_EQ(m.steps[2].op, StepInfo::Op::Copy);
  EXPECT_EQ(m.buffers[m.steps[2].src].id, 2);
  EXPECT_EQ(m.buffers[m.steps[2].dst].id, 5);
}

TEST(ManifestTest, ParsesBindingModel) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(bindingManifest(), m, error)) << error;
  EXPECT_EQ(m.symbols[1].divisor, 2);
  EXPECT_EQ(m.symbols[1].bindingInput, 1u);
  EXPECT_EQ(m.symbols[1].bindingDim, 1u);
  ASSERT_EQ(m.constraints.size(), 1u);
  EXPECT_EQ(m.constraints[0].where, "test constraint");
}

TEST(ManifestTest, RejectsOtherFormat) {
  bool versionError = false;
  EXPECT_EQ(manifestError(
                replaceOnce(linearManifest(), "\"format\": 2", "\"format\": 1"),
                &versionError),
            "manifest: format: unsupported manifest format 1 (this run-time "
            "reads 2)");
  EXPECT_TRUE(versionError);
  manifestError(replaceOnce(linearManifest(), "\"format\": 2", "\"format\": 3"),
                nullptr);
}

TEST(ManifestTest, RejectsInvalidJson) {
  bool versionError = true;
  EXPECT_EQ(manifestError("{\"format\": 1,", &versionError),
            "manifest: invalid JSON at byte 13: expected a string member name");
  EXPECT_FALSE(versionError);
  EXPECT_EQ(manifestError("[]"), "manifest: expected an object, got an array");
}

struct MutationCase {
  const char *from;
  const char *to;
  const char *error;
};

TEST(ManifestTest, ReportsJsonPaths) {
  const MutationCase cases[] = {
      {"\"format\": 2,", "", "manifest: missing field 'format'"},
      {"\"format\": 2", "\"format\": \"2\"",
       "manifest: format: expected an integer, got a string"},
      {"\"producer\": \"dyncc-tests\",", "",
       "manifest: missing field 'producer'"},
      {"\"targets\": [\"cpu\"]", "\"targets\": [1]",
       "manifest: targets[0]: expected a string, got an integer"},
      {"\"targets\": [\"cpu\"]", "\"targets\": \"cpu\"",
       "manifest: targets: expected an array, got a string"},
      {"\"min\": 1, \"max\": 4096, \"divisor\": 1",
       "\"min\": 1, \"max\": 4096, \"divisor\": 0",
       "manifest: symbols[0].divisor: divisor 0 is not positive"},
      {"\"min\": 1, \"max\": 4096, \"divisor\": 1",
       "\"min\": 10, \"max\": 4, \"divisor\": 1",
       "manifest: symbols[0]: empty range [10, 4]"},
      {"{\"name\": \"B\", \"min\": 1", "{\"name\": \"2B\", \"min\": 1",
       "manifest: symbols[0].name: '2B' is not a valid symbol name"},
      {"\"max\": 4096, \"divisor\": 1", "\"max\": 4096.5, \"divisor\": 1",
       "manifest: symbols[0].max: expected an integer, got a number"},
      {"\"shape\": [\"B\", \"16\"], \"buffer\": 0",
       "\"shape\": [\"B\", 16], \"buffer\": 0",
       "manifest: inputs[0].shape[1]: expected a string expression, got an "
       "integer"},
      {"\"shape\": [\"B\", \"16\"], \"buffer\": 0",
       "\"shape\": [\"B\", \"16\"], \"buffer\": 7",
       "manifest: inputs[0].buffer: unknown buffer id 7"},
      {"\"shape\": [\"B\", \"16\"], \"buffer\": 0",
       "\"shape\": [\"B\", \"16\"], \"buffer\": 3",
       "manifest: inputs[0].buffer: buffer 3 is an output buffer, expected an "
       "input buffer"},
      {"\"shape\": [\"B\", \"16\"], \"buffer\": 0",
       "\"shape\": [\"B\"], \"buffer\": 0",
       "manifest: inputs[0].shape: rank 1 does not match buffer 0's rank 2"},
      {"{\"name\": \"X\", \"dtype\": \"f32\"",
       "{\"name\": \"X\", \"dtype\": \"f8\"",
       "manifest: inputs[0].dtype: unknown dtype 'f8' (expected one of f16, "
       "bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool)"},
      {"{\"name\": \"X\", \"dtype\": \"f32\"",
       "{\"name\": \"X\", \"dtype\": \"i32\"",
       "manifest: inputs[0].dtype: i32 does not match buffer 0's f32"},
      {"{\"name\": \"t:copy\"", "{\"name\": \"Y\"",
       "manifest: outputs[1].name: duplicate name 'Y'"},
      {"{\"id\": 5, \"kind\": \"output\"", "{\"id\": 3, \"kind\": \"output\"",
       "manifest: buffers[4].id: duplicate buffer id 3"},
      {"\"kind\": \"temp\"", "\"kind\": \"scratch\"",
       "manifest: buffers[2].kind: unknown buffer kind 'scratch' (expected "
       "input, output, weight, temp or workspace)"},
      {"\"live\": [0, 2]", "\"live\": [0]",
       "manifest: buffers[2].live: expected [first step, last step], got 1 "
       "elements"},
      {"\"live\": [0, 2]", "\"live\": [2, 1]",
       "manifest: buffers[2].live: [2, 1] is not a range of steps"},
      {"\"live\": [0, 2]", "\"live\": [0, \"2\"]",
       "manifest: buffers[2].live[1]: expected an integer, got a string"},
      {"\"live\": [0, 2]", "\"live\": [0, 3]",
       "manifest: buffers[2].live: last step 3 is out of range (3 steps)"},
      {"\"live\": [0, 2]", "\"live\": [0, 1]",
       "manifest: steps[2]: uses temp buffer 2 outside its lifetime [0, 1]"},
      {"\"live\": [0, 2]", "\"live\": [1, 2]",
       "manifest: steps[0]: uses temp buffer 2 outside its lifetime [1, 2]"},
      {", \"live\": [0, 2]", "", "manifest: buffers[2]: missing field 'live'"},
      {", \"section\": \"w0\"", "",
       "manifest: buffers[1]: missing field 'section'"},
      {"\"shape\": [\"16\", \"8\"], \"section\"",
       "\"shape\": [\"B\", \"8\"], \"section\"",
       "manifest: buffers[1].shape[0]: a weight's shape must be static, got "
       "'B'"},
      {"\"grid\": [\"ceildiv(B, 4)\", \"1\", \"1\"]",
       "\"grid\": [\"ceildiv(B, 4)\", 1, \"1\"]",
       "manifest: kernels[0].grid[1]: expected a string expression, got an "
       "integer"},
      {"\"grid\": [\"ceildiv(B, 4)\", \"1\", \"1\"]",
       "\"grid\": [\"ceildiv(B, 4)\", \"1\"]",
       "manifest: kernels[0].grid: expected 3 expressions, got 2"},
      {"\"grid\": [\"ceildiv(B, 4)\", \"1\", \"1\"], \"block\": [1, 1, 1]",
       "\"grid\": [\"ceildiv(B, 4)\", \"1\", \"1\"], \"block\": [1, 0, 1]",
       "manifest: kernels[0].block[1]: block size 0 is not positive"},
      {"\"grid\": [\"ceildiv(B, 4)\", \"1\", \"1\"], \"block\"",
       "\"grid\": [\"ceildiv(B, 4)\", \"1\", \"1\"], \"linear_grid\": 1, "
       "\"block\"",
       "manifest: kernels[0].linear_grid: expected a boolean, got an integer"},
      {"[{\"buffer\": 0}, {\"buffer\": 1}, {\"buffer\": 2}, {\"expr\": \"4\"}]",
       "[{\"buffer\": 0}, {\"buffer\": 9}, {\"buffer\": 2}, {\"expr\": \"4\"}]",
       "manifest: kernels[0].params[1].buffer: unknown buffer id 9"},
      {"[{\"buffer\": 0}, {\"buffer\": 1}, {\"buffer\": 2}, {\"expr\": \"4\"}]",
       "[{\"buffer\": 0}, {\"buffer\": 1}, {\"buffer\": 2}, {\"expr\": 4}]",
       "manifest: kernels[0].params[3].expr: expected a string expression, "
       "got an integer"},
      {"[{\"buffer\": 0}, {\"buffer\": 1}, {\"buffer\": 2}, {\"expr\": \"4\"}]",
       "[{\"buffer\": 0}, {\"buffer\": 1}, {\"buffer\": 2}, {\"expr\": \"4\", "
       "\"buffer\": 1}]",
       "manifest: kernels[0].params[3]: expected exactly one of 'buffer' and "
       "'expr'"},
      {"\"cpu\": {\"section\": \"cpu.so\", \"symbol\": \"test_add1_relu\"}",
       "\"cpu\": {\"section\": \"cpu.so\"}",
       "manifest: kernels[2].cpu: missing field 'symbol'"},
      {",\n     \"cpu\": {\"section\": \"cpu.so\", \"symbol\": "
       "\"test_add1_relu\"}",
       "",
       "manifest: kernels[2]: kernel 'add1_relu' has neither CPU nor GPU code"},
      {"\"gpu\": {\"sm_90\": {\"section\": \"cpu.so\", \"entry\": "
       "\"matmul_large\"}}",
       "\"gpu\": {\"sm_90\": {\"section\": \"cpu.so\"}}",
       "manifest: kernels[1].gpu.sm_90: missing field 'entry'"},
      {"{\"kernel\": 1, \"when\"", "{\"kernel\": 3, \"when\"",
       "manifest: groups[0].variants[1].kernel: kernel index 3 is out of range "
       "(3 kernels)"},
      {"{\"symbol\": \"B\", \"min\": 17", "{\"symbol\": \"Z\", \"min\": 17",
       "manifest: groups[0].variants[1].when[0].symbol: unknown symbol 'Z'"},
      {"\"min\": 17, \"max\": 4096}", "\"min\": 17, \"max\": 16}",
       "manifest: groups[0].variants[1].when[0]: empty range [17, 16]"},
      {"\"variants\": [{\"kernel\": 2, \"when\": []}]", "\"variants\": []",
       "manifest: groups[1].variants: a group needs at least one variant"},
      {"\"m\": \"B\"", "\"m\": \"Q\"",
       "manifest: groups[0].problem.m: expression 'Q' at position 0: unknown "
       "symbol 'Q'"},
      {"\"k\": \"4\",", "", "manifest: groups[0].problem: missing field 'k'"},
      {"\"operand_bytes\": 4", "\"operand_bytes\": 3",
       "manifest: groups[0].problem.operand_bytes: element size 3 is not 1, "
       "2, 4 or 8 bytes"},
      {"\"operand_bytes\": 4", "\"operand_bytes\": 4, \"products\": 0",
       "manifest: groups[0].problem.products: needs at least 1 product, not "
       "0"},
      {"\"operand_bytes\": 4", "\"operand_bytes\": 4, \"products\": \"3\"",
       "manifest: groups[0].problem.products: expected an integer, got a "
       "string"},
      {"{\"op\": \"launch\", \"group\": 1}",
       "{\"op\": \"launch\", \"group\": 2}",
       "manifest: steps[1].group: group index 2 is out of range (2 groups)"},
      {"{\"op\": \"launch\", \"group\": 1}", "{\"op\": \"jump\", \"group\": 1}",
       "manifest: steps[1].op: unknown step 'jump' (expected launch, copy or "
       "bind)"},
      {"{\"op\": \"copy\", \"src\": 2, \"dst\": 5}",
       "{\"op\": \"copy\", \"src\": 2, \"dst\": 0}",
       "manifest: steps[2].dst: buffer 0 is an input buffer and cannot be "
       "written"},
      {"{\"op\": \"copy\", \"src\": 2, \"dst\": 5}",
       "{\"op\": \"copy\", \"src\": 2}",
       "manifest: steps[2]: missing field 'dst'"},
      {"{\"id\": 5, \"kind\": \"output\", \"dtype\": \"f32\"",
       "{\"id\": 5, \"kind\": \"output\", \"dtype\": \"f16\"",
       "manifest: outputs[1].dtype: f32 does not match buffer 5's f16"},
      {"\"entry\": \"matmul_large\"}",
       "\"entry\": \"matmul_large\", \"cubin\": \"cpu.so\"}",
       "manifest: kernels[1].gpu.sm_90: missing field 'resources'"},
      {"\"entry\": \"matmul_large\"}",
       "\"entry\": \"matmul_large\", \"cubin\": \"cpu.so\", "
       "\"resources\": {\"registers\": 40}}",
       "manifest: kernels[1].gpu.sm_90.resources: missing field 'barriers'"},
      {"\"entry\": \"matmul_large\"}",
       "\"entry\": \"matmul_large\", \"cubin\": \"cpu.so\", "
       "\"resources\": {\"registers\": 40, \"barriers\": 0, "
       "\"shared_bytes\": 0, \"stack_bytes\": -8, \"spill_store_bytes\": "
       "0, \"spill_load_bytes\": 0}}",
       "manifest: kernels[1].gpu.sm_90.resources.stack_bytes: negative count"},
  };
  for (const MutationCase &c : cases) {
    std::string json = replaceOnce(linearManifest(), c.from, c.to);
    EXPECT_EQ(manifestError(json), c.error) << "replacing " << c.from;
  }
}

TEST(ManifestTest, ReadsProductsOfAGemmProblem) {
  // Fused Q, K and V projections: one problem, three products.
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(replaceOnce(linearManifest(),
                                        "\"operand_bytes\": 4",
                                        "\"operand_bytes\": 4, \"products\": 3"),
                            m, error))
      << error;
  EXPECT_EQ(m.groups[0].problem.products, 3);
}

/// The linear model's matmul group with the tile search's table: variant 1
/// for B in [1, 8] and [33, 4096], variant 0 for [9, 32], both valid over
/// all of B.
std::string selectManifest(const std::string &select) {
  std::string json = replaceOnce(
      linearManifest(), "{\"symbol\": \"B\", \"min\": 1, \"max\": 16}",
      "{\"symbol\": \"B\", \"min\": 1, \"max\": 4096}");
  json = replaceOnce(json, "{\"symbol\": \"B\", \"min\": 17, \"max\": 4096}",
                     "{\"symbol\": \"B\", \"min\": 1, \"max\": 4096}");
  return replaceOnce(json, "\"operand_bytes\": 4, \"output_bytes\": 4}",
                     "\"operand_bytes\": 4, \"output_bytes\": 4}, "
                     "\"select\": " + select);
}

const char *kOneKeySelect =
    "{\"keys\": [\"2*B\"], \"lower\": [2, 18, 66], \"variant\": [1, 0, 1], "
    "\"device\": \"h200\", \"candidates\": 300, \"considered\": 40, "
    "\"cap\": 8, \"max_regret\": 0.02, \"target\": 0.03, "
    "\"key_ranges\": [2, 8192], \"dim_keys\": [-1, 0, -1, -1], "
    "\"dim_values\": [1, 0, 8, 4]}";

TEST(ManifestTest, ReadsVariantSelection) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(selectManifest(kOneKeySelect), m, error)) << error;
  const VariantSelection &s = m.groups[0].select;
  ASSERT_TRUE(s.present);
  EXPECT_EQ(s.keyTexts, std::vector<std::string>{"2*B"});
  EXPECT_EQ(s.device, "h200");
  EXPECT_EQ(s.candidates, 300);
  EXPECT_EQ(s.considered, 40);
  EXPECT_DOUBLE_EQ(s.maxRegret, 0.02);
  EXPECT_EQ(s.keyRanges, (std::vector<int64_t>{2, 8192}));
  EXPECT_EQ(s.dimKeys, (std::vector<int64_t>{-1, 0, -1, -1}));
  EXPECT_EQ(m.groups[0].keySymbols, std::vector<size_t>{0});
  // The look-up at every B: the key is 2*B.
  for (int64_t b = 1; b <= 100; ++b) {
    size_t variant = 99;
    ASSERT_TRUE(s.lookup(&b, variant));
    EXPECT_EQ(variant, (2 * b >= 18 && 2 * b < 66) ? 0u : 1u) << "B = " << b;
  }
  EXPECT_FALSE(m.groups[1].select.present);

  // Two keys: a table over the second per interval of the first.
  Manifest two;
  ASSERT_TRUE(parseManifest(
      selectManifest("{\"keys\": [\"B\", \"3\"], \"lower\": [1, 5], "
                     "\"inner\": [{\"lower\": [1], \"variant\": [0]}, "
                     "{\"lower\": [1, 3], \"variant\": [0, 1]}]}"),
      two, error))
      << error;
  size_t variant = 99;
  int64_t b = 4;
  ASSERT_TRUE(two.groups[0].select.lookup(&b, variant));
  EXPECT_EQ(variant, 0u);
  b = 5;
  ASSERT_TRUE(two.groups[0].select.lookup(&b, variant));
  EXPECT_EQ(variant, 1u);

  // Three keys: per interval of the first, a node over the second; per
  // interval of that, a table over the third. Key values: B, B + 1, 2*B.
  Manifest three;
  ASSERT_TRUE(parseManifest(
      selectManifest(
          "{\"keys\": [\"B\", \"B + 1\", \"2*B\"], \"lower\": [1, 10], "
          "\"inner\": [{\"lower\": [2, 5], \"inner\": [{\"lower\": [2], "
          "\"variant\": [0]}, {\"lower\": [2, 14], \"variant\": [0, 1]}]}, "
          "{\"lower\": [2], \"inner\": [{\"lower\": [2, 30], \"variant\": "
          "[1, 0]}]}]}"),
      three, error))
      << error;
  const VariantSelection &t = three.groups[0].select;
  EXPECT_EQ(t.table.keys, 3u);
  for (int64_t b = 1; b <= 40; ++b) {
    size_t want = b < 4 ? 0 : b < 7 ? 0 : b < 10 ? 1 : b < 15 ? 1 : 0;
    ASSERT_TRUE(t.lookup(&b, variant));
    EXPECT_EQ(variant, want) << "B = " << b;
  }

  // A row-wise group's record.
  Manifest rows;
  ASSERT_TRUE(parseManifest(
      selectManifest("{\"keys\": [\"B\"], \"lower\": [1], \"variant\": "
                     "[0], \"model\": \"rows\", \"element_bytes\": 2, "
                     "\"bytes_per_element\": 6, \"reduction\": 1, "
                     "\"dim_keys\": [-1, 0, -1], \"dim_values\": [1, 0, "
                     "768]}"),
      rows, error))
      << error;
  const VariantSelection &r = rows.groups[0].select;
  EXPECT_EQ(r.model, "rows");
  EXPECT_EQ(r.elementBytes, 2);
  EXPECT_EQ(r.bytesPerElement, 6);
  EXPECT_EQ(r.reduction, 1);
  EXPECT_EQ(r.dimValues, (std::vector<int64_t>{1, 0, 768}));

  // A group the search could not take says why.
  Manifest unsearched;
  ASSERT_TRUE(parseManifest(
      selectManifest("{\"reason\": \"more than two dynamic dimensions\"}"),
      unsearched, error))
      << error;
  EXPECT_FALSE(unsearched.groups[0].select.present);
  EXPECT_EQ(unsearched.groups[0].select.reason,
            "more than two dynamic dimensions");
}

TEST(ManifestTest, RejectsBadVariantSelection) {
  struct Case {
    const char *select;
    const char *error;
  } cases[] = {
      {"{\"keys\": [\"Q\"], \"lower\": [1], \"variant\": [0]}",
       "manifest: groups[0].select.keys[0]: expression 'Q' at position 0: "
       "unknown symbol 'Q'"},
      {"{\"keys\": [\"B\"], \"lower\": [1, 5], \"variant\": [0]}",
       "manifest: groups[0].select.variant: needs one variant per interval, "
       "and at least one interval"},
      {"{\"keys\": [\"B\"], \"lower\": [], \"variant\": []}",
       "manifest: groups[0].select.variant: needs one variant per interval, "
       "and at least one interval"},
      {"{\"keys\": [\"B\"], \"lower\": [5, 5], \"variant\": [0, 1]}",
       "manifest: groups[0].select.lower[1]: interval bounds must ascend"},
      {"{\"keys\": [\"B\"], \"lower\": [1], \"variant\": [2]}",
       "manifest: groups[0].select.variant[0]: variant 2 is out of range (2 "
       "variants)"},
      {"{\"keys\": [\"B\", \"B\", \"B\", \"B\", \"B\"], \"lower\": [1], "
       "\"variant\": [0]}",
       "manifest: groups[0].select.keys: at most 4 keys, got 5"},
      // Three keys: a node over the second key is not a leaf.
      {"{\"keys\": [\"B\", \"2\", \"3\"], \"lower\": [1], \"inner\": "
       "[{\"lower\": [1], \"variant\": [0]}]}",
       "manifest: groups[0].select.inner[0]: missing field 'inner'"},
      {"{\"keys\": [\"B\", \"2\", \"3\"], \"lower\": [1], \"inner\": "
       "[{\"lower\": [1], \"inner\": [{\"lower\": [4, 2], \"variant\": [0, "
       "1]}]}]}",
       "manifest: groups[0].select.inner[0].inner[0].lower[1]: interval "
       "bounds must ascend"},
      {"{\"keys\": [\"B\", \"2\", \"3\"], \"lower\": [1], \"inner\": "
       "[{\"lower\": [1], \"inner\": [{\"lower\": [1], \"variant\": "
       "[2]}]}]}",
       "manifest: groups[0].select.inner[0].inner[0].variant[0]: variant 2 is "
       "out of range (2 variants)"},
      {"{\"keys\": [\"B\", \"2\"], \"lower\": [1, 2], \"inner\": "
       "[{\"lower\": [1], \"variant\": [0]}]}",
       "manifest: groups[0].select.inner: needs one table per interval, and "
       "at least one interval"},
      {"{\"keys\": [\"B\", \"2\"], \"lower\": [1], \"inner\": "
       "[{\"lower\": [1], \"variant\": [-1]}]}",
       "manifest: groups[0].select.inner[0].variant[0]: variant -1 is out of "
       "range (2 variants)"},
      {"{\"keys\": [\"B\"], \"lower\": [1], \"variant\": [0], "
       "\"max_regret\": \"low\"}",
       "manifest: groups[0].select.max_regret: expected a number, got a "
       "string"},
      {"{\"keys\": [\"B\"], \"lower\": [1], \"variant\": [0], "
       "\"model\": \"winograd\"}",
       "manifest: groups[0].select.model: unknown model 'winograd' (expected "
       "gemm, rows or conv)"},
      {"{\"keys\": [\"B\"], \"lower\": [1], \"variant\": [0], "
       "\"model\": \"conv\", \"window\": [3, \"x\"]}",
       "manifest: groups[0].select.window[1]: expected an integer, got a "
       "string"},
      {"{\"keys\": [\"B\"], \"lower\": [1], \"variant\": [0], "
       "\"model\": \"rows\", \"bytes_per_element\": 1.5}",
       "manifest: groups[0].select.bytes_per_element: expected an integer, "
       "got a number"},
      // A column reduction's column is the fourth of a rows problem.
      {"{\"keys\": [\"B\"], \"lower\": [1], \"variant\": [0], "
       "\"model\": \"rows\", \"columns\": 1, \"dim_keys\": [0, -1, -1]}",
       "manifest: groups[0].select.columns: must be 0, or 1 for a rows model "
       "of four dim_keys"},
      {"{\"keys\": [\"B\"], \"lower\": [1], \"variant\": [0], "
       "\"model\": \"rows\", \"columns\": 2, \"dim_keys\": [0, -1, -1, "
       "-1]}",
       "manifest: groups[0].select.columns: must be 0, or 1 for a rows model "
       "of four dim_keys"},
  };
  for (const Case &c : cases)
    EXPECT_EQ(manifestError(selectManifest(c.select)), c.error) << c.select;
}

TEST(ManifestTest, ReadsPtxasResources) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(
      replaceOnce(linearManifest(), "\"entry\": \"matmul_large\"}",
                  "\"entry\": \"matmul_large\", \"cubin\": \"cubin.sm_90\", "
                  "\"resources\": {\"registers\": 40, \"barriers\": 1, "
                  "\"shared_bytes\": 4096, \"stack_bytes\": 16, "
                  "\"spill_store_bytes\": 4, \"spill_load_bytes\": 8}}"),
      manifest, error))
      << error;
  const GpuCode &code = manifest.kernels[1].gpu.at(0);
  EXPECT_EQ(code.cubinSection, "cubin.sm_90");
  EXPECT_EQ(code.resources.registers, 40);
  EXPECT_EQ(code.resources.barriers, 1);
  EXPECT_EQ(code.resources.sharedBytes, 4096);
  EXPECT_EQ(code.resources.stackBytes, 16);
  EXPECT_EQ(code.resources.spillStoreBytes, 4);
  EXPECT_EQ(code.resources.spillLoadBytes, 8);
  EXPECT_TRUE(manifest.kernels[0].gpu.empty());
}

TEST(ManifestTest, MessagesStayOnOneLine) {
  EXPECT_EQ(manifestError(replaceOnce(linearManifest(), "{\"name\": \"X\"",
                                      "{\"name\": \"X\\nY\"")),
            "manifest: inputs[0].name: name 'X\\x0aY' contains a control "
            "character");
  EXPECT_EQ(manifestError(replaceOnce(linearManifest(), "\"kind\": \"temp\"",
                                      "\"kind\": \"te\\rmp\"")),
            "manifest: buffers[2].kind: unknown buffer kind 'te\\x0dmp' "
            "(expected input, output, weight, temp or workspace)");
  EXPECT_EQ(manifestError(replaceOnce(
                linearManifest(), "\"name\": \"add1_relu\"", "\"name\": \"\"")),
            "manifest: kernels[2].name: empty name");
}

TEST(ManifestTest, EveryInputBufferBelongsToAnInput) {
  std::string json = replaceOnce(linearManifest(),
                                 "{\"id\": 5, \"kind\": \"output\", \"dtype\": "
                                 "\"f32\", \"shape\": [\"B\", \"8\"]}",
                                 "{\"id\": 5, \"kind\": \"output\", \"dtype\": "
                                 "\"f32\", \"shape\": [\"B\", \"8\"]},\n"
                                 "    {\"id\": 6, \"kind\": \"input\", "
                                 "\"dtype\": \"f32\", \"shape\": [\"B\"]}");
  EXPECT_EQ(manifestError(json),
            "manifest: buffers[5]: input buffer 6 is not listed in 'inputs'");
}

TEST(ManifestTest, EverySymbolMustBeBound) {
  std::string json = replaceOnce(linearManifest(),
                                 "\"symbols\": [{\"name\": \"B\", \"min\": 1, "
                                 "\"max\": 4096, \"divisor\": 1}]",
                                 "\"symbols\": [{\"name\": \"B\", \"min\": 1, "
                                 "\"max\": 4096, \"divisor\": 1}, "
                                 "{\"name\": \"S\", \"min\": 1, \"max\": 4}]");
  EXPECT_EQ(manifestError(json), "manifest: symbols[1]: symbol 'S' is not "
                                 "bound by any input dimension or bind step");
  // A symbol used only inside an expression is not bound either.
  std::string composite = replaceOnce(
      bindingManifest(),
      "{\"name\": \"Y\", \"dtype\": \"f32\", \"shape\": [\"B\", \"S\"]",
      "{\"name\": \"Y\", \"dtype\": \"f32\", \"shape\": [\"B\", \"S*1\"]");
  EXPECT_EQ(manifestError(composite),
            "manifest: inputs[1].shape[1]: reads symbol 'S', which no input "
            "dimension binds");
}

TEST(ManifestTest, ReadsBindSteps) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(dataSizeManifest(), manifest, error)) << error;
  const StepInfo &bind = manifest.steps[1];
  ASSERT_EQ(bind.op, StepInfo::Op::Bind);
  EXPECT_EQ(bind.src, 0u);
  EXPECT_EQ(bind.where, "test bind");
  // Element 0 binds K; element 1 is checked.
  EXPECT_EQ(bind.binds, (std::vector<size_t>{0, kAtBinding}));
  EXPECT_EQ(manifest.symbols[0].bindingStep, 1u);
  // What K sizes is known after step 1; the rest at the start.
  EXPECT_EQ(manifest.constraints[0].readyAfter, 1u);
  EXPECT_EQ(manifest.buffers[1].readyAfter, 1u);
  EXPECT_EQ(manifest.buffers[4].readyAfter, 1u);
  EXPECT_EQ(manifest.buffers[3].readyAfter, kAtBinding);
  EXPECT_FALSE(bind.reshape);
}

// A group whose variants depend on a symbol bound from data is selectable
// only after the step that binds it; one that depends on none, anywhere.
TEST(ManifestTest, GroupsKeyedOnDataAreSelectableAfterTheirBindStep) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(dataSizeVariantsManifest(), manifest, error))
      << error;
  ASSERT_EQ(manifest.groups[1].keySymbols, std::vector<size_t>{0});
  EXPECT_FALSE(isSelectable(manifest, 1, kAtBinding));
  EXPECT_FALSE(isSelectable(manifest, 1, 0));
  EXPECT_TRUE(isSelectable(manifest, 1, 1));
  EXPECT_TRUE(isSelectable(manifest, 1, 2));
  EXPECT_TRUE(isSelectable(manifest, 0, kAtBinding));
}

TEST(ManifestTest, RejectsBadBindSteps) {
  struct MutationCase {
    std::string from, to, error;
  } cases[] = {
      {"{\"op\": \"bind\", \"buffer\": 0,", "{\"op\": \"bind\", \"buffer\": 2,",
       "manifest: steps[1].buffer: buffer 2 is f32; sizes are read from i64 "
       "or i32"},
      {"\"dims\": [\"K\", \"3\"]", "\"dims\": [\"K\"]",
       "manifest: steps[1].dims: 1 sizes from buffer 0, which does not have "
       "exactly that many elements"},
      {"\"dims\": [\"K\", \"3\"]", "\"dims\": [\"2*K\", \"K\"]",
       "manifest: steps[1].dims[0]: checks '2*K' before symbol 'K' is bound"},
      {"\"where\": \"test bind\"}", "\"where\": \"test bind\", "
                                   "\"broadcast\": 1}",
       "manifest: steps[1].broadcast: expected a boolean, got an integer"},
      {"\"where\": \"test bind\"}", "\"where\": \"test bind\", "
                                   "\"reshape_of\": 3}",
       "manifest: steps[1].reshape_of: expected an array, got an integer"},
      // The launch that uses K before the step that binds it.
      {"{\"op\": \"launch\", \"group\": 0}", "{\"op\": \"launch\", \"group\": 1}",
       "manifest: steps[0]: uses temp buffer 4 outside its lifetime [2, 3]"},
      {"\"live\": [2, 3]", "\"live\": [0, 3]",
       "manifest: steps[0]: uses buffer 4 before symbol 'K' is bound"},
  };
  for (const MutationCase &c : cases) {
    std::string json = replaceOnce(dataSizeManifest(), c.from, c.to);
    if (c.to.find("\"live\": [0, 3]") != std::string::npos)
      json = replaceOnce(json, "{\"op\": \"launch\", \"group\": 0}",
                         "{\"op\": \"launch\", \"group\": 1}");
    EXPECT_EQ(manifestError(json), c.error) << "replacing " << c.from;
  }
}

/// linearManifest() with the host code in two builds: the portable one in
/// cpu.so, another for x86-64-v4 in `otherSection`.
std::string hostCodeManifest(const std::string &otherSection = "cpu.v4.so") {
  return replaceOnce(linearManifest(), "\"steps\": [",
                     "\"host_code\": [{\"isa\": \"x86-64-v2\", \"section\": "
                     "\"cpu.so\"}, {\"isa\": \"x86-64-v4\", \"section\": \"" +
                         otherSection + "\"}],\n  \"steps\": [");
}

TEST(ManifestTest, ReadsHostCode) {
  Manifest m;
  std::string error;
  ASSERT_TRUE(parseManifest(linearManifest(), m, error)) << error;
  EXPECT_TRUE(m.hostCode.empty());
  ASSERT_TRUE(parseManifest(hostCodeManifest(), m, error)) << error;
  ASSERT_EQ(m.hostCode.size(), 2u);
  EXPECT_EQ(m.hostCode[0].isa, "x86-64-v2");
  EXPECT_EQ(m.hostCode[0].section, "cpu.so");
  EXPECT_EQ(m.hostCode[1].isa, "x86-64-v4");
  EXPECT_EQ(m.hostCode[1].section, "cpu.v4.so");
  // A level this run-time does not know is kept (and never loaded).
  ASSERT_TRUE(parseManifest(
      replaceOnce(hostCodeManifest(), "\"x86-64-v4\"", "\"rva23\""), m, error))
      << error;
  EXPECT_EQ(m.hostCode[1].isa, "rva23");
}

TEST(ManifestTest, RejectsBadHostCode) {
  struct MutationCase {
    std::string from, to, error;
  };
  const std::string builds =
      "[{\"isa\": \"x86-64-v2\", \"section\": \"cpu.so\"}, "
      "{\"isa\": \"x86-64-v4\", \"section\": \"cpu.v4.so\"}]";
  std::vector<MutationCase> cases = {
      {builds, "{}", "manifest: host_code: expected an array, got an object"},
      {builds, "[]", "manifest: host_code: no build of the host code"},
      {"\"x86-64-v4\"", "\"x86-64-v2\"",
       "manifest: host_code[1].isa: level 'x86-64-v2' has two builds"},
      {"\"cpu.v4.so\"", "\"cpu.so\"",
       "manifest: host_code[1].section: section 'cpu.so' holds two builds"},
      {"{\"isa\": \"x86-64-v2\", ", "{",
       "manifest: host_code[0]: missing field 'isa'"},
      {"\"section\": \"cpu.so\"}, {\"isa\"",
       "\"section\": \"host.so\"}, {\"isa\"",
       "manifest: kernels[0].cpu.section: section 'cpu.so' is none of "
       "host_code's builds"},
  };
  for (const MutationCase &c : cases)
    EXPECT_EQ(manifestError(replaceOnce(hostCodeManifest(), c.from, c.to)),
              c.error)
        << "replacing " << c.from;
}

TEST(ManifestTest, ChecksHostCodeSections) {
  // The artifact has cpu.so only: the second build's section is missing.
  std::string bytes = buildArtifact(hostCodeManifest());
  std::string error;
  auto file = ArtifactFile::openMemory(bytes.data(), bytes.size(), "m", error);
  ASSERT_NE(file, nullptr) << error;
  Manifest m;
  ASSERT_TRUE(parseManifest(hostCodeManifest(), m, error)) << error;
  EXPECT_FALSE(checkManifestSections(m, *file, error));
  EXPECT_EQ(error,
            "manifest: host_code[1].section: no section 'cpu.v4.so' in the "
            "artifact");
}

TEST(ManifestTest, ChecksSectionsOfArtifact) {
  std::string bytes = buildArtifact(linearManifest());
  std::string error;
  auto file = ArtifactFile::openMemory(bytes.data(), bytes.size(), "m", error);
  ASSERT_NE(file, nullptr) << error;
  Manifest m;
  ASSERT_TRUE(parseManifest(linearManifest(), m, error)) << error;
  EXPECT_TRUE(checkManifestSections(m, *file, error)) << error;

  Manifest wrongSize;
  ASSERT_TRUE(parseManifest(
      replaceOnce(linearManifest(), "\"shape\": [\"16\", \"8\"], \"section\"",
                  "\"shape\": [\"16\", \"9\"], \"section\""),
      wrongSize, error))
      << error;
  EXPECT_FALSE(checkManifestSections(wrongSize, *file, error));
  EXPECT_EQ(error, "manifest: buffers[1]: weight section 'w0' has 512 bytes, "
                   "expected 576 (f32[16, 9])");

  Manifest missingWeight;
  ASSERT_TRUE(parseManifest(replaceOnce(linearManifest(), "\"section\": \"w0\"",
                                        "\"section\": \"w7\""),
                            missingWeight, error));
  EXPECT_FALSE(checkManifestSections(missingWeight, *file, error));
  EXPECT_EQ(error,
            "manifest: buffers[1].section: no section 'w7' in the artifact");

  Manifest missingCode;
  ASSERT_TRUE(parseManifest(
      replaceOnce(
          linearManifest(),
          "\"cpu\": {\"section\": \"cpu.so\", \"symbol\": \"test_add1_relu\"}",
          "\"cpu\": {\"section\": \"host.so\", \"symbol\": "
          "\"test_add1_relu\"}"),
      missingCode, error));
  EXPECT_FALSE(checkManifestSections(missingCode, *file, error));
  EXPECT_EQ(
      error,
      "manifest: kernels[2].cpu.section: no section 'host.so' in the artifact");

  Manifest missingCubin;
  ASSERT_TRUE(parseManifest(
      replaceOnce(linearManifest(), "\"entry\": \"matmul_large\"}",
                  "\"entry\": \"matmul_large\", \"cubin\": \"cubin.sm_90\", "
                  "\"resources\": {\"registers\": 40, \"barriers\": 0, "
                  "\"shared_bytes\": 0, \"stack_bytes\": 0, "
                  "\"spill_store_bytes\": 0, \"spill_load_bytes\": 0}}"),
      missingCubin, error))
      << error;
  EXPECT_FALSE(checkManifestSections(missingCubin, *file, error));
  EXPECT_EQ(error, "manifest: kernels[1].gpu.sm_90.cubin: no section "
                   "'cubin.sm_90' in the artifact");
}

} // namespace
