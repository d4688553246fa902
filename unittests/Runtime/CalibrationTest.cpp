//===- CalibrationTest.cpp - Tests of dyncc tune's measurements -*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The calibration section: the wave model over measured samples
// (interpolation, waves), its JSON round trip, and one test per error of
// the reader. Sessions selecting by it are tested in CudaSessionTest.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "dyncc/Runtime/Calibration.h"
#include "dyncc/Runtime/Manifest.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace dyncc::runtime;
using namespace dyncc::test;

namespace {

CalibrationSample sample(std::vector<int64_t> at, uint64_t blocks, double ms) {
  CalibrationSample s;
  s.at = std::move(at);
  s.blocks = blocks;
  s.ms = ms;
  return s;
}

TEST(CalibrationTest, WaveTimeIsTheTimeOverTheWaves) {
  // 300 blocks at 132 per wave: 3 waves.
  EXPECT_DOUBLE_EQ(sample({1}, 300, 0.9).waveTime(132), 0.3);
  EXPECT_DOUBLE_EQ(sample({1}, 264, 0.9).waveTime(132), 0.45);
  // Fewer blocks than a wave is one wave.
  EXPECT_DOUBLE_EQ(sample({1}, 5, 0.2).waveTime(132), 0.2);
}

TEST(CalibrationTest, OneSymbolInterpolatesInLogSpace) {
  VariantCalibration v;
  v.blocksPerWave = 10;
  v.samples = {sample({99}, 10, 3.0), sample({1}, 10, 1.0)};
  EXPECT_DOUBLE_EQ(v.waveTime({1}), 1.0);
  EXPECT_DOUBLE_EQ(v.waveTime({99}), 3.0);
  // Outside the samples: the nearest one's.
  EXPECT_DOUBLE_EQ(v.waveTime({0}), 1.0);
  EXPECT_DOUBLE_EQ(v.waveTime({5000}), 3.0);
  double t = (std::log1p(9.0) - std::log1p(1.0)) /
             (std::log1p(99.0) - std::log1p(1.0));
  EXPECT_NEAR(v.waveTime({9}), 1.0 + 2.0 * t, 1e-12);
  // The prediction: the wave time times the waves of the grid.
  EXPECT_NEAR(v.predict({9}, 25), 3 * (1.0 + 2.0 * t), 1e-12);
  EXPECT_DOUBLE_EQ(v.predict({99}, 0), 0.0);
  double lo = 0, hi = 0;
  ASSERT_TRUE(v.waveRange(lo, hi));
  EXPECT_DOUBLE_EQ(lo, 1.0);
  EXPECT_DOUBLE_EQ(hi, 3.0);
  VariantCalibration none;
  EXPECT_FALSE(none.waveRange(lo, hi));
  EXPECT_EQ(none.waveTime({3}), -1);
  EXPECT_EQ(none.predict({3}, 10), -1);
}

TEST(CalibrationTest, SeveralSymbolsTakeTheNearestSample) {
  VariantCalibration v;
  v.blocksPerWave = 1;
  v.samples = {sample({1, 512}, 1, 1.0), sample({16, 8}, 1, 2.0),
               sample({16, 512}, 1, 3.0)};
  EXPECT_DOUBLE_EQ(v.waveTime({2, 400}), 1.0);
  EXPECT_DOUBLE_EQ(v.waveTime({12, 10}), 2.0);
  EXPECT_DOUBLE_EQ(v.waveTime({12, 300}), 3.0);
}

Manifest linear() {
  Manifest manifest;
  std::string error;
  EXPECT_TRUE(parseManifest(linearManifest(), manifest, error)) << error;
  return manifest;
}

const char *kSection = R"json({"format": 1, "devices": [
 {"device": "NVIDIA H200", "arch": "sm_90", "sms": 132, "repeat": 5,
  "bindings": 6, "groups": [
  {"group": "matmul", "symbols": ["B"], "variants": [
   {"kernel": "matmul_small", "blocks_per_wave": 264,
    "samples": [{"at": [1], "blocks": 1, "ms": 0.01},
                {"at": [4096], "blocks": 1024, "ms": 0.04}]},
   {"kernel": "matmul_large", "blocks_per_wave": 132,
    "samples": [{"at": [4096], "blocks": 128, "ms": 2.5e-2}]}]}]}]})json";

TEST(CalibrationTest, ParsesAndRoundTrips) {
  Manifest manifest = linear();
  Calibration calibration;
  std::string error;
  ASSERT_TRUE(parseCalibration(kSection, manifest, calibration, error))
      << error;
  ASSERT_EQ(calibration.devices.size(), 1u);
  const DeviceCalibration &device = calibration.devices[0];
  EXPECT_EQ(calibration.find("NVIDIA H200", "sm_90", 132), &device);
  EXPECT_EQ(calibration.find("NVIDIA H200", "sm_90", 114), nullptr);
  EXPECT_EQ(calibration.find("NVIDIA H100", "sm_90", 132), nullptr);
  ASSERT_NE(device.group(0), nullptr);
  EXPECT_EQ(device.group(1), nullptr); // bias_relu: not measured
  const GroupCalibration &group = *device.group(0);
  EXPECT_EQ(group.symbolSlots, std::vector<size_t>{0});
  ASSERT_EQ(group.variants.size(), 2u);
  EXPECT_EQ(group.variants[1].variant, 1u);
  EXPECT_EQ(group.variants[0].samples[1].blocks, 1024u);
  EXPECT_DOUBLE_EQ(group.variants[1].samples[0].ms, 0.025);

  std::string text = serializeCalibration(calibration);
  Calibration again;
  ASSERT_TRUE(parseCalibration(text, manifest, again, error)) << error;
  EXPECT_EQ(serializeCalibration(again), text);

  // Another device is added; the same one replaced.
  DeviceCalibration other = device;
  other.sms = 114;
  calibration.replace(other);
  EXPECT_EQ(calibration.devices.size(), 2u);
  other.repeat = 9;
  calibration.replace(other);
  ASSERT_EQ(calibration.devices.size(), 2u);
  EXPECT_EQ(calibration.devices[1].repeat, 9);
}

TEST(CalibrationTest, ErrorsNameThePath) {
  Manifest manifest = linear();
  struct Case {
    const char *from, *to, *message;
  };
  const Case cases[] = {
      {R"("format": 1)", R"("format": 2)",
       "calibration: format: version 2 is not supported (this run-time reads "
       "1)"},
      {R"("sms": 132)", R"("sms": 0)",
       "calibration: devices[0].sms: must be at least 1"},
      {R"("group": "matmul")", R"("group": "nope")",
       "calibration: devices[0].groups[0].group: no group 'nope' in the "
       "manifest"},
      {R"("group": "matmul")", R"("group": "matmul", "index": 2)",
       "calibration: devices[0].groups[0].index: no group 2 in the manifest "
       "(it has 2)"},
      {R"("group": "matmul")", R"("group": "matmul", "index": 1)",
       "calibration: devices[0].groups[0].index: group 1 is 'bias_relu', not "
       "'matmul'"},
      {R"("group": "matmul")", R"("group": "matmul", "index": "0")",
       "calibration: devices[0].groups[0].index: expected an integer, got a "
       "string"},
      {R"("symbols": ["B"])", R"("symbols": ["C"])",
       "calibration: devices[0].groups[0].symbols[0]: no symbol 'C'"},
      {R"("kernel": "matmul_large")", R"("kernel": "add1_relu")",
       "calibration: devices[0].groups[0].variants[1].kernel: kernel "
       "'add1_relu' is not a variant of group 'matmul'"},
      {R"("blocks_per_wave": 132)", R"("blocks_per_wave": 0)",
       "calibration: devices[0].groups[0].variants[1].blocks_per_wave: must "
       "be at least 1"},
      {R"("at": [4096], "blocks": 128)", R"("at": [4096, 1], "blocks": 128)",
       "calibration: devices[0].groups[0].variants[1].samples[0].at: needs "
       "one value per symbol of the group (1)"},
      {R"("ms": 2.5e-2)", R"("ms": -1)",
       "calibration: devices[0].groups[0].variants[1].samples[0].ms: must be "
       "a finite time, at least 0"},
      {R"("ms": 2.5e-2)", R"("ms": "fast")",
       "calibration: devices[0].groups[0].variants[1].samples[0].ms: "
       "expected a number, got a string"},
      {R"("blocks": 128)", R"("blocks": -3)",
       "calibration: devices[0].groups[0].variants[1].samples[0].blocks: "
       "must be at least 0"},
      {R"("repeat": 5,)", "",
       "calibration: devices[0]: missing field 'repeat'"},
      {R"({"format": 1,)", "{", "calibration: missing field 'format'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.to);
    Calibration calibration;
    std::string error;
    EXPECT_FALSE(parseCalibration(replaceOnce(kSection, c.from, c.to),
                                  manifest, calibration, error));
    EXPECT_EQ(error, c.message);
  }
  // The same group twice.
  std::string twice = replaceOnce(
      kSection, R"("groups": [)",
      R"("groups": [{"group": "matmul", "symbols": [], "variants": []},)");
  Calibration calibration;
  std::string error;
  EXPECT_FALSE(parseCalibration(twice, manifest, calibration, error));
  EXPECT_EQ(error, "calibration: devices[0].groups[1]: group 0 ('matmul') "
                   "appears twice");
  // A name several groups share (deduplicated kernels: a transformer's
  // layers) needs the entry's index.
  Manifest shared = manifest;
  shared.groups[1].name = "matmul";
  EXPECT_FALSE(parseCalibration(kSection, shared, calibration, error));
  EXPECT_EQ(error, "calibration: devices[0].groups[0]: 2 groups are named "
                   "'matmul': give the entry's 'index'");
  ASSERT_TRUE(parseCalibration(replaceOnce(kSection, R"("group": "matmul")",
                                           R"("group": "matmul", "index": 0)"),
                               shared, calibration, error))
      << error;
  EXPECT_NE(calibration.devices[0].group(0), nullptr);
  EXPECT_EQ(calibration.devices[0].group(1), nullptr);
  EXPECT_FALSE(parseCalibration("{", manifest, calibration, error));
  EXPECT_EQ(error.rfind("calibration: ", 0), 0u) << error;
}

} // namespace
