//===- Calibration.h - Measured wave times of variants ----------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `dyncc tune` measures, on one GPU, each variant of each group with more
// than one at a set of symbol bindings, and stores the measurements in the
// artifact's `calibration` section (JSON, schema in docs/ArtifactFormat.md).
// A CUDA session on a device the section has measurements for then picks
// each such group's variant by the measured wave model of TSCompiler
// (section 6) instead of the compiler's predicted table:
//
//   time(variant, symbols) = T_wave(variant, symbols)
//                            x ceil(blocks(symbols) / blocks_per_wave)
//
// with blocks from the variant's grid, blocks_per_wave the driver's
// occupancy times the SM count, and T_wave interpolated between the
// measured samples (each sample's time over its number of waves).
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_RUNTIME_CALIBRATION_H
#define DYNCC_RUNTIME_CALIBRATION_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dyncc::runtime {

struct Manifest;

/// The section holding the measurements.
inline constexpr std::string_view kCalibrationSectionName = "calibration";
/// The calibration format version this run-time reads and writes.
inline constexpr int64_t kCalibrationFormatVersion = 1;

/// One measurement: the group's symbols' values, the blocks launched and
/// the kernel's time (median over the repeats).
struct CalibrationSample {
  std::vector<int64_t> at;
  uint64_t blocks = 0;
  double ms = 0;

  /// The time of one wave of `blocksPerWave` blocks.
  double waveTime(int64_t blocksPerWave) const;
};

struct VariantCalibration {
  /// The kernel's name, and (once resolved) the index into the group's
  /// variants.
  std::string kernel;
  size_t variant = 0;
  /// Resident blocks per SM (the driver's occupancy) times the SM count.
  int64_t blocksPerWave = 1;
  std::vector<CalibrationSample> samples;

  /// T_wave at `at` (the group's symbols' values): interpolated linearly in
  /// log(1 + value) between the two nearest samples for one symbol, the
  /// nearest sample (in log space) for several. No samples: -1.
  double waveTime(const std::vector<int64_t> &at) const;
  /// The predicted time at `at` for a grid of `blocks` blocks; -1 without
  /// samples.
  double predict(const std::vector<int64_t> &at, uint64_t blocks) const;
  /// The least and greatest wave time of the samples; false without any.
  bool waveRange(double &lo, double &hi) const;
};

struct GroupCalibration {
  /// The manifest group's name and index (names are not unique: groups
  /// whose kernels were deduplicated share one).
  std::string group;
  /// The symbols samples are taken at (names; resolved to slots).
  std::vector<std::string> symbols;
  size_t groupIndex = 0;
  std::vector<size_t> symbolSlots;
  std::vector<VariantCalibration> variants;
};

/// The measurements taken on one device.
struct DeviceCalibration {
  /// A host's `arch` begins with it ("cpu-x86_64"); a GPU's is "sm_NN".
  static constexpr const char *kHostArchPrefix = "cpu-";

  /// cuDeviceGetName's name, "sm_90", the SM count; on the host (`dyncc
  /// tune --device cpu`), the processor's name, kHostArchPrefix and its
  /// architecture, the session's threads.
  std::string device;
  std::string arch;
  int64_t sms = 0;
  /// Runs per measurement (the median is kept), and bindings measured.
  int64_t repeat = 0;
  int64_t bindings = 0;
  std::vector<GroupCalibration> groups;
  /// Per manifest group: the index into `groups`, or -1 (filled in by
  /// parseCalibration).
  std::vector<int64_t> byGroup;

  /// Measured on the host (cpu sessions read it), not a GPU.
  bool onHost() const { return arch.rfind(kHostArchPrefix, 0) == 0; }

  const GroupCalibration *group(size_t manifestGroup) const {
    if (manifestGroup >= byGroup.size() || byGroup[manifestGroup] < 0)
      return nullptr;
    return &groups[static_cast<size_t>(byGroup[manifestGroup])];
  }
};

struct Calibration {
  std::vector<DeviceCalibration> devices;

  /// The measurements taken on a device of this name, arch and SM count
  /// (another device's are not used), or null.
  const DeviceCalibration *find(const std::string &device,
                                const std::string &arch, int64_t sms) const;
  /// Replaces the entry of the same device (or adds one).
  void replace(DeviceCalibration device);
};

/// The variant of manifest group `measured.groupIndex` with the least time
/// `measured` predicts at `symbols` (a value per symbol slot), among those
/// whose conditions hold and whose grid evaluates; false if none has
/// samples. `predicted` (if given) gets each variant's time, -1 where none.
/// What a CUDA session on the measured device selects by.
bool pickMeasuredVariant(const Manifest &manifest,
                         const GroupCalibration &measured,
                         const int64_t *symbols, size_t &variant,
                         std::vector<double> *predicted = nullptr);

/// What a CUDA session selects for manifest group `group` at `symbols`:
/// pickMeasuredVariant where `measured` (its measurements on the session's
/// device, or null) has samples, else the tile search's table
/// (GroupInfo::pick); false where neither picks one.
bool pickVariant(const Manifest &manifest, const GroupCalibration *measured,
                 size_t group, const int64_t *symbols, size_t &variant);

/// Parses the calibration section and resolves its names against
/// `manifest`. On failure returns false with `error` set to one line
/// "calibration: JSON.PATH: what is wrong".
bool parseCalibration(std::string_view json, const Manifest &manifest,
                      Calibration &out, std::string &error);

/// The section's JSON text for `calibration` (what parseCalibration reads).
std::string serializeCalibration(const Calibration &calibration);

} // namespace dyncc::runtime

#endif // DYNCC_RUNTIME_CALIBRATION_H
