//===- Calibration.cpp - Measured wave times of a model's variants -------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Calibration.h"

#include "dyncc/Runtime/Manifest.h"

#include "JsonReader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace dyncc::runtime;

double CalibrationSample::waveTime(int64_t blocksPerWave) const {
  uint64_t perWave = static_cast<uint64_t>(std::max<int64_t>(blocksPerWave, 1));
  uint64_t waves = std::max<uint64_t>((blocks + perWave - 1) / perWave, 1);
  return ms / static_cast<double>(waves);
}

namespace {
double logOf(int64_t value) {
  return std::log1p(static_cast<double>(std::max<int64_t>(value, 0)));
}
} // namespace

double VariantCalibration::waveTime(const std::vector<int64_t> &at) const {
  if (samples.empty())
    return -1;
  if (at.size() == 1) {
    // Linear in log(1 + value) between the nearest samples on each side.
    double x = logOf(at[0]);
    const CalibrationSample *below = nullptr, *above = nullptr;
    for (const CalibrationSample &sample : samples) {
      if (sample.at[0] <= at[0] && (!below || sample.at[0] > below->at[0]))
        below = &sample;
      if (sample.at[0] >= at[0] && (!above || sample.at[0] < above->at[0]))
        above = &sample;
    }
    if (!below)
      return above->waveTime(blocksPerWave);
    if (!above || above->at[0] == below->at[0])
      return below->waveTime(blocksPerWave);
    double x0 = logOf(below->at[0]), x1 = logOf(above->at[0]);
    double t = (x - x0) / (x1 - x0);
    return (1 - t) * below->waveTime(blocksPerWave) +
           t * above->waveTime(blocksPerWave);
  }
  // Several symbols: the nearest sample in log space.
  const CalibrationSample *nearest = nullptr;
  double best = 0;
  for (const CalibrationSample &sample : samples) {
    double distance = 0;
    for (size_t i = 0; i < at.size(); ++i) {
      double d = logOf(sample.at[i]) - logOf(at[i]);
      distance += d * d;
    }
    if (!nearest || distance < best) {
      nearest = &sample;
      best = distance;
    }
  }
  return nearest->waveTime(blocksPerWave);
}

double VariantCalibration::predict(const std::vector<int64_t> &at,
                                   uint64_t blocks) const {
  double wave = waveTime(at);
  if (wave < 0)
    return -1;
  uint64_t perWave = static_cast<uint64_t>(std::max<int64_t>(blocksPerWave, 1));
  return wave * static_cast<double>((blocks + perWave - 1) / perWave);
}

bool VariantCalibration::waveRange(double &lo, double &hi) const {
  for (size_t s = 0; s < samples.size(); ++s) {
    double wave = samples[s].waveTime(blocksPerWave);
    lo = s ? std::min(lo, wave) : wave;
    hi = s ? std::max(hi, wave) : wave;
  }
  return !samples.empty();
}

bool dyncc::runtime::pickMeasuredVariant(const Manifest &manifest,
                                         const GroupCalibration &measured,
                                         const int64_t *symbols,
                                         size_t &variant,
                                         std::vector<double> *predicted) {
  const GroupInfo &group = manifest.groups[measured.groupIndex];
  std::vector<int64_t> at;
  for (size_t slot : measured.symbolSlots)
    at.push_back(symbols[slot]);
  if (predicted)
    predicted->assign(group.variants.size(), -1);
  // The blocks of a kernel's grid; false if an extent cannot be evaluated
  // (or overflows).
  auto gridBlocks = [&](size_t kernel, uint64_t &blocks) {
    blocks = 1;
    for (const ShapeExpr &extent : manifest.kernels[kernel].grid) {
      int64_t value;
      if (extent.evaluate(symbols, value) != ShapeExpr::EvalStatus::Ok ||
          value < 0 ||
          __builtin_mul_overflow(blocks, static_cast<uint64_t>(value), &blocks))
        return false;
    }
    return true;
  };
  double best = -1;
  for (const VariantCalibration &entry : measured.variants) {
    const VariantInfo &info = group.variants[entry.variant];
    uint64_t blocks;
    if (!info.holds(symbols) || !gridBlocks(info.kernel, blocks))
      continue;
    double time = entry.predict(at, blocks);
    if (time < 0)
      continue;
    if (predicted)
      (*predicted)[entry.variant] = time;
    if (best < 0 || time < best) {
      best = time;
      variant = entry.variant;
    }
  }
  return best >= 0;
}

bool dyncc::runtime::pickVariant(const Manifest &manifest,
                                 const GroupCalibration *measured, size_t group,
                                 const int64_t *symbols, size_t &variant) {
  return (measured &&
          pickMeasuredVariant(manifest, *measured, symbols, variant)) ||
         manifest.groups[group].pick(symbols, variant);
}

const DeviceCalibration *Calibration::find(const std::string &device,
                                           const std::string &arch,
                                           int64_t sms) const {
  for (const DeviceCalibration &entry : devices)
    if (entry.device == device && entry.arch == arch && entry.sms == sms)
      return &entry;
  return nullptr;
}

void Calibration::replace(DeviceCalibration device) {
  for (DeviceCalibration &entry : devices)
    if (entry.device == device.device && entry.arch == device.arch &&
        entry.sms == device.sms) {
      entry = std::move(device);
      return;
    }
  devices.push_back(std::move(device));
}

namespace {

class CalibrationReader : public JsonReader {
public:
  CalibrationReader(const Manifest &manifest, std::string &error)
      : JsonReader("calibration", error), manifest(manifest) {}

  bool read(const JsonValue &root, Calibration &out);

private:
  const Manifest &manifest;

  bool readDevice(const JsonValue &value, const std::string &path,
                  DeviceCalibration &device);
  bool readGroup(const JsonValue &value, const std::string &path,
                 GroupCalibration &group);
  bool readVariant(const JsonValue &value, const std::string &path,
                   const GroupCalibration &group, VariantCalibration &variant);
  bool readNumber(const JsonValue &object, const std::string &path,
                  const char *key, double &out) {
    const JsonValue *value = require(object, path, key);
    if (!value)
      return false;
    if (!value->isNumber())
      return typeError(member(path, key), "a number", *value);
    out = value->doubleValue();
    if (!std::isfinite(out) || out < 0)
      return fail(member(path, key), "must be a finite time, at least 0");
    return true;
  }
};

bool CalibrationReader::read(const JsonValue &root, Calibration &out) {
  if (!expectObject(root, ""))
    return false;
  int64_t format;
  if (!getInt(root, "", "format", format))
    return false;
  if (format != kCalibrationFormatVersion)
    return fail("format", "version " + std::to_string(format) +
                              " is not supported (this run-time reads " +
                              std::to_string(kCalibrationFormatVersion) + ")");
  const JsonValue *devices;
  if (!getArray(root, "", "devices", devices))
    return false;
  out.devices.resize(devices->size());
  for (size_t d = 0; d < devices->size(); ++d)
    if (!readDevice((*devices)[d], element("devices", d), out.devices[d]))
      return false;
  return true;
}

bool CalibrationReader::readDevice(const JsonValue &value,
                                   const std::string &path,
                                   DeviceCalibration &device) {
  const JsonValue *groups;
  if (!expectObject(value, path) ||
      !getName(value, path, "device", device.device) ||
      !getName(value, path, "arch", device.arch) ||
      !getInt(value, path, "sms", device.sms) ||
      !getInt(value, path, "repeat", device.repeat) ||
      !getInt(value, path, "bindings", device.bindings) ||
      !getArray(value, path, "groups", groups))
    return false;
  if (device.sms < 1)
    return fail(member(path, "sms"), "must be at least 1");
  device.byGroup.assign(manifest.groups.size(), -1);
  device.groups.resize(groups->size());
  for (size_t g = 0; g < groups->size(); ++g) {
    std::string groupPath = element(member(path, "groups"), g);
    GroupCalibration &group = device.groups[g];
    if (!readGroup((*groups)[g], groupPath, group))
      return false;
    if (device.byGroup[group.groupIndex] >= 0)
      return fail(groupPath, "group " + std::to_string(group.groupIndex) +
                                 " ('" + group.group + "') appears twice");
    device.byGroup[group.groupIndex] = static_cast<int64_t>(g);
  }
  return true;
}

bool CalibrationReader::readGroup(const JsonValue &value,
                                  const std::string &path,
                                  GroupCalibration &group) {
  const JsonValue *symbols, *variants;
  if (!expectObject(value, path) ||
      !getName(value, path, "group", group.group) ||
      !getArray(value, path, "symbols", symbols) ||
      !getArray(value, path, "variants", variants))
    return false;
  // Groups whose kernels were deduplicated share a name (a transformer's
  // layers), so an entry names its group by `index` as well; without one
  // (calibrations written before it), the name must be one group's.
  if (const JsonValue *index = value.find("index")) {
    int64_t at;
    if (!readInt(*index, member(path, "index"), at))
      return false;
    if (at < 0 || at >= static_cast<int64_t>(manifest.groups.size()))
      return fail(member(path, "index"),
                  "no group " + std::to_string(at) +
                      " in the manifest (it has " +
                      std::to_string(manifest.groups.size()) + ")");
    if (manifest.groups[static_cast<size_t>(at)].name != group.group)
      return fail(member(path, "index"),
                  "group " + std::to_string(at) + " is '" +
                      manifest.groups[static_cast<size_t>(at)].name +
                      "', not '" + group.group + "'");
    group.groupIndex = static_cast<size_t>(at);
  } else {
    size_t named = 0;
    for (size_t g = 0; g < manifest.groups.size(); ++g)
      if (manifest.groups[g].name == group.group && named++ == 0)
        group.groupIndex = g;
    if (named == 0)
      return fail(member(path, "group"),
                  "no group '" + group.group + "' in the manifest");
    if (named > 1)
      return fail(path, std::to_string(named) + " groups are named '" +
                            group.group + "': give the entry's 'index'");
  }
  std::string symbolsPath = member(path, "symbols");
  for (size_t i = 0; i < symbols->size(); ++i) {
    std::string name;
    if (!readString((*symbols)[i], element(symbolsPath, i), name))
      return false;
    auto slot = std::find(manifest.symbolNames.begin(),
                          manifest.symbolNames.end(), name);
    if (slot == manifest.symbolNames.end())
      return fail(element(symbolsPath, i), "no symbol '" + name + "'");
    group.symbols.push_back(name);
    group.symbolSlots.push_back(
        static_cast<size_t>(slot - manifest.symbolNames.begin()));
  }
  group.variants.resize(variants->size());
  for (size_t v = 0; v < variants->size(); ++v)
    if (!readVariant((*variants)[v], element(member(path, "variants"), v),
                     group, group.variants[v]))
      return false;
  return true;
}

bool CalibrationReader::readVariant(const JsonValue &value,
                                    const std::string &path,
                                    const GroupCalibration &group,
                                    VariantCalibration &variant) {
  const JsonValue *samples;
  if (!expectObject(value, path) ||
      !getName(value, path, "kernel", variant.kernel) ||
      !getInt(value, path, "blocks_per_wave", variant.blocksPerWave) ||
      !getArray(value, path, "samples", samples))
    return false;
  if (variant.blocksPerWave < 1)
    return fail(member(path, "blocks_per_wave"), "must be at least 1");
  const GroupInfo &info = manifest.groups[group.groupIndex];
  size_t v = 0;
  while (v < info.variants.size() &&
         manifest.kernels[info.variants[v].kernel].name != variant.kernel)
    ++v;
  if (v == info.variants.size())
    return fail(member(path, "kernel"), "kernel '" + variant.kernel +
                                            "' is not a variant of group '" +
                                            group.group + "'");
  variant.variant = v;
  std::string samplesPath = member(path, "samples");
  variant.samples.resize(samples->size());
  for (size_t s = 0; s < samples->size(); ++s) {
    std::string samplePath = element(samplesPath, s);
    const JsonValue &object = (*samples)[s];
    CalibrationSample &sample = variant.samples[s];
    const JsonValue *at;
    int64_t blocks;
    if (!expectObject(object, samplePath) ||
        !getArray(object, samplePath, "at", at) ||
        !getInt(object, samplePath, "blocks", blocks) ||
        !readNumber(object, samplePath, "ms", sample.ms))
      return false;
    if (at->size() != group.symbols.size())
      return fail(member(samplePath, "at"),
                  "needs one value per symbol of the group (" +
                      std::to_string(group.symbols.size()) + ")");
    if (blocks < 0)
      return fail(member(samplePath, "blocks"), "must be at least 0");
    sample.blocks = static_cast<uint64_t>(blocks);
    sample.at.resize(at->size());
    for (size_t i = 0; i < at->size(); ++i)
      if (!readInt((*at)[i], element(member(samplePath, "at"), i),
                   sample.at[i]))
        return false;
  }
  return true;
}

void appendString(std::string &out, const std::string &text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  out += '"';
}

} // namespace

bool dyncc::runtime::parseCalibration(std::string_view json,
                                      const Manifest &manifest,
                                      Calibration &out, std::string &error) {
  JsonValue root;
  std::string message;
  if (!parseJson(json, root, message)) {
    error = "calibration: " + message;
    return false;
  }
  out.devices.clear();
  return CalibrationReader(manifest, error).read(root, out);
}

std::string dyncc::runtime::serializeCalibration(const Calibration &calib) {
  std::string out = "{\"format\": " +
                    std::to_string(kCalibrationFormatVersion) +
                    ", \"devices\": [";
  char number[32];
  for (size_t d = 0; d < calib.devices.size(); ++d) {
    const DeviceCalibration &device = calib.devices[d];
    out += d ? ",\n " : "\n ";
    out += "{\"device\": ";
    appendString(out, device.device);
    out += ", \"arch\": ";
    appendString(out, device.arch);
    out += ", \"sms\": " + std::to_string(device.sms) +
           ", \"repeat\": " + std::to_string(device.repeat) +
           ", \"bindings\": " + std::to_string(device.bindings) +
           ", \"groups\": [";
    for (size_t g = 0; g < device.groups.size(); ++g) {
      const GroupCalibration &group = device.groups[g];
      out += g ? ",\n  " : "\n  ";
      out += "{\"group\": ";
      appendString(out, group.group);
      out += ", \"index\": " + std::to_string(group.groupIndex);
      out += ", \"symbols\": [";
      for (size_t i = 0; i < group.symbols.size(); ++i) {
        out += i ? ", " : "";
        appendString(out, group.symbols[i]);
      }
      out += "], \"variants\": [";
      for (size_t v = 0; v < group.variants.size(); ++v) {
        const VariantCalibration &variant = group.variants[v];
        out += v ? ",\n   " : "\n   ";
        out += "{\"kernel\": ";
        appendString(out, variant.kernel);
        out += ", \"blocks_per_wave\": " +
               std::to_string(variant.blocksPerWave) + ", \"samples\": [";
        for (size_t s = 0; s < variant.samples.size(); ++s) {
          const CalibrationSample &sample = variant.samples[s];
          out += s ? ", {\"at\": [" : "{\"at\": [";
          for (size_t i = 0; i < sample.at.size(); ++i)
            out += (i ? ", " : "") + std::to_string(sample.at[i]);
          std::snprintf(number, sizeof(number), "%.9g", sample.ms);
          out += "], \"blocks\": " + std::to_string(sample.blocks) +
                 ", \"ms\": " + number + "}";
        }
        out += "]}";
      }
      out += "]}";
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}
