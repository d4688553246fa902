//===- Manifest.cpp - The artifact manifest ---------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Runtime/Manifest.h"

#include "dyncc/Runtime/Artifact.h"
#include "dyncc/Runtime/HostIsa.h"
#include "dyncc/Runtime/Json.h"

#include "ArenaPlan.h"
#include "JsonReader.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

using namespace dyncc::runtime;
namespace cost = dyncc::cost;

const char *dyncc::runtime::bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input:
    return "input";
  case BufferKind::Output:
    return "output";
  case BufferKind::Weight:
    return "weight";
  case BufferKind::Temp:
    return "temp";
  }
  return "buffer";
}

namespace {

/// "an input", "an output", "a weight" or "a temp".
std::string withArticle(BufferKind kind) {
  bool vowel = kind == BufferKind::Input || kind == BufferKind::Output;
  return std::string(vowel ? "an " : "a ") + bufferKindName(kind);
}

bool isIdentifier(std::string_view name) {
  if (name.empty())
    return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0))
      return false;
  }
  return true;
}

/// Reads typed fields out of JSON objects, reporting errors by JSON path.
class ManifestReader : public JsonReader {
public:
  ManifestReader(Manifest &manifest, std::string &error)
      : JsonReader("manifest", error), manifest(manifest) {}

  bool read(const JsonValue &root, bool &versionError);

private:
  Manifest &manifest;
  std::unordered_map<int64_t, size_t> bufferIndex;

  bool readExpr(const JsonValue &value, const std::string &path,
                ShapeExpr &out) {
    if (!value.isString())
      return typeError(path, "a string expression", value);
    std::string message;
    if (!ShapeExpr::parse(value.stringValue(), manifest.symbolNames, out,
                          message))
      return fail(path, message);
    return true;
  }

  bool getExpr(const JsonValue &object, const std::string &path,
               const char *key, ShapeExpr &out) {
    const JsonValue *value = require(object, path, key);
    return value && readExpr(*value, member(path, key), out);
  }

  bool getShape(const JsonValue &object, const std::string &path,
                std::vector<ShapeExpr> &shape) {
    const JsonValue *dims;
    if (!getArray(object, path, "shape", dims))
      return false;
    std::string shapePath = member(path, "shape");
    shape.resize(dims->size());
    for (size_t i = 0; i < dims->size(); ++i)
      if (!readExpr((*dims)[i], element(shapePath, i), shape[i]))
        return false;
    return true;
  }

  bool getDType(const JsonValue &object, const std::string &path, DType &type) {
    std::string name;
    if (!getString(object, path, "dtype", name))
      return false;
    if (parseDType(name, type))
      return true;
    std::string known;
    for (size_t i = 0; i < kNumDTypes; ++i)
      known += std::string(i ? ", " : "") + dtypeName(static_cast<DType>(i));
    return fail(member(path, "dtype"),
                "unknown dtype '" + name + "' (expected one of " + known + ")");
  }

  /// Resolves a buffer id (the value at `path`) to an index.
  bool readBufferId(const JsonValue &value, const std::string &path,
                    size_t &index) {
    int64_t id;
    if (!readInt(value, path, id))
      return false;
    auto it = bufferIndex.find(id);
    if (it == bufferIndex.end())
      return fail(path, "unknown buffer id " + std::to_string(id));
    index = it->second;
    return true;
  }

  bool readSymbols(const JsonValue &root);
  bool readConstraints(const JsonValue &root);
  bool readBuffers(const JsonValue &root);
  bool readPorts(const JsonValue &root, const char *key, BufferKind kind,
                 std::vector<TensorInfo> &ports);
  bool readKernels(const JsonValue &root);
  bool readKernel(const JsonValue &value, const std::string &path,
                  KernelInfo &kernel);
  bool readGroups(const JsonValue &root);
  bool readSelection(const JsonValue &value, const std::string &path,
                     GroupInfo &group);
  bool readNode(const JsonValue &object, const std::string &path,
                size_t depth, size_t variants, cost::DecisionTable &table);
  bool readSteps(const JsonValue &root);
  bool readHostCode(const JsonValue &root);
  bool checkLifetimes();
  bool bindSymbols();
  bool readArena(const JsonValue &root);
};

bool ManifestReader::read(const JsonValue &root, bool &versionError) {
  versionError = false;
  if (!root.isObject())
    return fail("", std::string("expected an object, got ") +
                        JsonValue::describe(root.kind()));
  if (!getInt(root, "", "format", manifest.format))
    return false;
  if (manifest.format != kManifestFormatVersion) {
    versionError = true;
    return fail("format", "unsupported manifest format " +
                              std::to_string(manifest.format) +
                              " (this run-time reads " +
                              std::to_string(kManifestFormatVersion) + ")");
  }
  if (!getString(root, "", "producer", manifest.producer) ||
      !getName(root, "", "model", manifest.model))
    return false;
  const JsonValue *targets;
  if (!getArray(root, "", "targets", targets))
    return false;
  manifest.targets.resize(targets->size());
  for (size_t i = 0; i < targets->size(); ++i)
    if (!readString((*targets)[i], element("targets", i), manifest.targets[i]))
      return false;
  if (!readSymbols(root) || !readConstraints(root) || !readBuffers(root) ||
      !readPorts(root, "inputs", BufferKind::Input, manifest.inputs) ||
      !readPorts(root, "outputs", BufferKind::Output, manifest.outputs) ||
      !readKernels(root) || !readHostCode(root) || !readGroups(root) ||
      !readSteps(root) || !checkLifetimes() || !bindSymbols())
    return false;
  return readArena(root);
}

/// The host code's builds (optional): distinct levels and sections, and
/// every kernel's CPU code in one of them. A level this run-time does not
/// know is kept: it is only never loaded.
bool ManifestReader::readHostCode(const JsonValue &root) {
  const JsonValue *builds = root.find("host_code");
  if (!builds)
    return true;
  if (!builds->isArray())
    return fail("host_code", std::string("expected an array, got ") +
                                 JsonValue::describe(builds->kind()));
  if (builds->size() == 0)
    return fail("host_code", "no build of the host code");
  for (size_t i = 0; i < builds->size(); ++i) {
    std::string path = element("host_code", i);
    const JsonValue &value = (*builds)[i];
    HostCodeInfo build;
    if (!expectObject(value, path) || !getName(value, path, "isa", build.isa) ||
        !getName(value, path, "section", build.section))
      return false;
    for (const HostCodeInfo &other : manifest.hostCode) {
      if (other.isa == build.isa)
        return fail(member(path, "isa"),
                    "level '" + build.isa + "' has two builds");
      if (other.section == build.section)
        return fail(member(path, "section"),
                    "section '" + build.section + "' holds two builds");
    }
    manifest.hostCode.push_back(std::move(build));
  }
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    const KernelInfo &kernel = manifest.kernels[k];
    if (kernel.hasCpu &&
        std::none_of(manifest.hostCode.begin(), manifest.hostCode.end(),
                     [&](const HostCodeInfo &build) {
                       return build.section == kernel.cpuSection;
                     }))
      return fail(element("kernels", k) + ".cpu.section",
                  "section '" + kernel.cpuSection +
                      "' is none of host_code's builds");
  }
  return true;
}

bool ManifestReader::readSymbols(const JsonValue &root) {
  const JsonValue *symbols;
  if (!getArray(root, "", "symbols", symbols))
    return false;
  manifest.symbols.resize(symbols->size());
  for (size_t i = 0; i < symbols->size(); ++i) {
    std::string path = element("symbols", i);
    const JsonValue &value = (*symbols)[i];
    SymbolInfo &symbol = manifest.symbols[i];
    if (!expectObject(value, path) ||
        !getString(value, path, "name", symbol.name) ||
        !getInt(value, path, "min", symbol.min) ||
        !getInt(value, path, "max", symbol.max))
      return false;
    if (value.find("divisor") &&
        !getInt(value, path, "divisor", symbol.divisor))
      return false;
    if (!isIdentifier(symbol.name))
      return fail(member(path, "name"),
                  "'" + symbol.name + "' is not a valid symbol name");
    for (size_t j = 0; j < i; ++j)
      if (manifest.symbols[j].name == symbol.name)
        return fail(member(path, "name"),
                    "duplicate symbol '" + symbol.name + "'");
    if (symbol.min < 0)
      return fail(member(path, "min"),
                  "minimum " + std::to_string(symbol.min) + " is negative");
    if (symbol.max < symbol.min)
      return fail(path, "empty range [" + std::to_string(symbol.min) + ", " +
                            std::to_string(symbol.max) + "]");
    if (symbol.divisor < 1)
      return fail(member(path, "divisor"), "divisor " +
                                               std::to_string(symbol.divisor) +
                                               " is not positive");
    manifest.symbolNames.push_back(symbol.name);
  }
  return true;
}

bool ManifestReader::readConstraints(const JsonValue &root) {
  const JsonValue *constraints;
  if (!getArray(root, "", "constraints", constraints))
    return false;
  manifest.constraints.resize(constraints->size());
  for (size_t i = 0; i < constraints->size(); ++i) {
    std::string path = element("constraints", i);
    const JsonValue &value = (*constraints)[i];
    ConstraintInfo &constraint = manifest.constraints[i];
    if (!expectObject(value, path) ||
        !getExpr(value, path, "lhs", constraint.lhs) ||
        !getExpr(value, path, "rhs", constraint.rhs) ||
        !getOptionalString(value, path, "where", constraint.where))
      return false;
    if (!isPrintable(constraint.where))
      return fail(member(path, "where"), "text contains a control character");
  }
  return true;
}

bool ManifestReader::readBuffers(const JsonValue &root) {
  const JsonValue *buffers;
  if (!getArray(root, "", "buffers", buffers))
    return false;
  manifest.buffers.resize(buffers->size());
  for (size_t i = 0; i < buffers->size(); ++i) {
    std::string path = element("buffers", i);
    const JsonValue &value = (*buffers)[i];
    BufferInfo &buffer = manifest.buffers[i];
    std::string kind;
    if (!expectObject(value, path) || !getInt(value, path, "id", buffer.id) ||
        !getString(value, path, "kind", kind) ||
        !getDType(value, path, buffer.dtype) ||
        !getShape(value, path, buffer.shape))
      return false;
    if (!bufferIndex.emplace(buffer.id, i).second)
      return fail(member(path, "id"),
                  "duplicate buffer id " + std::to_string(buffer.id));
    if (kind == "input") {
      buffer.kind = BufferKind::Input;
    } else if (kind == "output") {
      buffer.kind = BufferKind::Output;
    } else if (kind == "weight") {
      buffer.kind = BufferKind::Weight;
      if (!getName(value, path, "section", buffer.section))
        return false;
      for (size_t d = 0; d < buffer.shape.size(); ++d)
        if (!buffer.shape[d].isConstant())
          return fail(element(member(path, "shape"), d),
                      "a weight's shape must be static, got '" +
                          buffer.shape[d].text() + "'");
    } else if (kind == "temp" || kind == "workspace") {
      buffer.kind = BufferKind::Temp;
      buffer.workspace = kind == "workspace";
      const JsonValue *live;
      if (!getArray(value, path, "live", live))
        return false;
      std::string livePath = member(path, "live");
      int64_t first, last;
      if (live->size() != 2)
        return fail(livePath, "expected [first step, last step], got " +
                                  std::to_string(live->size()) + " elements");
      if (!readInt((*live)[0], element(livePath, 0), first) ||
          !readInt((*live)[1], element(livePath, 1), last))
        return false;
      if (first < 0 || last < first)
        return fail(livePath, "[" + std::to_string(first) + ", " +
                                  std::to_string(last) +
                                  "] is not a range of steps");
      buffer.firstStep = static_cast<size_t>(first);
      buffer.lastStep = static_cast<size_t>(last);
    } else {
      return fail(member(path, "kind"),
                  "unknown buffer kind '" + kind +
                      "' (expected input, output, weight, temp or "
                      "workspace)");
    }
  }
  return true;
}

bool ManifestReader::readPorts(const JsonValue &root, const char *key,
                               BufferKind kind,
                               std::vector<TensorInfo> &ports) {
  const JsonValue *array;
  if (!getArray(root, "", key, array))
    return false;
  std::vector<bool> claimed(manifest.buffers.size(), false);
  ports.resize(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    std::string path = element(key, i);
    const JsonValue &value = (*array)[i];
    TensorInfo &port = ports[i];
    if (!expectObject(value, path) ||
        !getName(value, path, "name", port.name) ||
        !getDType(value, path, port.dtype) ||
        !getShape(value, path, port.shape))
      return false;
    for (size_t j = 0; j < i; ++j)
      if (ports[j].name == port.name)
        return fail(member(path, "name"), "duplicate name '" + port.name + "'");
    const JsonValue *id = require(value, path, "buffer");
    if (!id || !readBufferId(*id, member(path, "buffer"), port.buffer))
      return false;
    BufferInfo &buffer = manifest.buffers[port.buffer];
    std::string bufferName = "buffer " + std::to_string(buffer.id);
    if (buffer.kind != kind)
      return fail(member(path, "buffer"),
                  bufferName + " is " + withArticle(buffer.kind) +
                      " buffer, expected " + withArticle(kind) + " buffer");
    if (claimed[port.buffer])
      return fail(member(path, "buffer"), bufferName +
                                              " already belongs to another " +
                                              bufferKindName(kind));
    claimed[port.buffer] = true;
    buffer.port = i;
    if (buffer.dtype != port.dtype)
      return fail(member(path, "dtype"), std::string(dtypeName(port.dtype)) +
                                             " does not match " + bufferName +
                                             "'s " + dtypeName(buffer.dtype));
    if (buffer.shape.size() != port.shape.size())
      return fail(member(path, "shape"),
                  "rank " + std::to_string(port.shape.size()) +
                      " does not match " + bufferName + "'s rank " +
                      std::to_string(buffer.shape.size()));
  }
  for (size_t i = 0; i < manifest.buffers.size(); ++i)
    if (manifest.buffers[i].kind == kind && !claimed[i])
      return fail(element("buffers", i),
                  std::string(bufferKindName(kind)) + " buffer " +
                      std::to_string(manifest.buffers[i].id) +
                      " is not listed in '" + key + "'");
  return true;
}

bool ManifestReader::readKernel(const JsonValue &value, const std::string &path,
                                KernelInfo &kernel) {
  if (!expectObject(value, path) || !getName(value, path, "name", kernel.name))
    return false;
  const JsonValue *params;
  if (!getArray(value, path, "params", params))
    return false;
  kernel.params.resize(params->size());
  kernel.numSlots = 0;
  for (size_t i = 0; i < params->size(); ++i) {
    std::string paramPath = element(member(path, "params"), i);
    const JsonValue &param = (*params)[i];
    if (!expectObject(param, paramPath))
      return false;
    const JsonValue *buffer = param.find("buffer");
    const JsonValue *expr = param.find("expr");
    if ((buffer != nullptr) == (expr != nullptr))
      return fail(paramPath, "expected exactly one of 'buffer' and 'expr'");
    KernelParam &out = kernel.params[i];
    if (buffer) {
      out.isBuffer = true;
      if (!readBufferId(*buffer, member(paramPath, "buffer"), out.buffer))
        return false;
      kernel.numSlots += 3 + 2 * manifest.buffers[out.buffer].shape.size();
    } else {
      out.isBuffer = false;
      if (!readExpr(*expr, member(paramPath, "expr"), out.expr))
        return false;
      kernel.numSlots += 1;
    }
  }
  const JsonValue *grid;
  const JsonValue *block;
  if (!getArray(value, path, "grid", grid))
    return false;
  if (grid->size() != 3)
    return fail(member(path, "grid"),
                "expected 3 expressions, got " + std::to_string(grid->size()));
  for (size_t i = 0; i < 3; ++i)
    if (!readExpr((*grid)[i], element(member(path, "grid"), i), kernel.grid[i]))
      return false;
  if (const JsonValue *linear = value.find("linear_grid")) {
    if (!linear->isBool())
      return typeError(member(path, "linear_grid"), "a boolean", *linear);
    kernel.linearGrid = linear->boolValue();
  }
  if (!getArray(value, path, "block", block))
    return false;
  if (block->size() != 3)
    return fail(member(path, "block"),
                "expected 3 integers, got " + std::to_string(block->size()));
  for (size_t i = 0; i < 3; ++i) {
    std::string blockPath = element(member(path, "block"), i);
    if (!readInt((*block)[i], blockPath, kernel.block[i]))
      return false;
    if (kernel.block[i] < 1)
      return fail(blockPath, "block size " + std::to_string(kernel.block[i]) +
                                 " is not positive");
  }
  if (!getInt(value, path, "shared_bytes", kernel.sharedBytes))
    return false;
  if (kernel.sharedBytes < 0)
    return fail(member(path, "shared_bytes"), "negative size");
  if (const JsonValue *cpu = value.find("cpu")) {
    std::string cpuPath = member(path, "cpu");
    if (!expectObject(*cpu, cpuPath) ||
        !getName(*cpu, cpuPath, "section", kernel.cpuSection) ||
        !getName(*cpu, cpuPath, "symbol", kernel.cpuSymbol))
      return false;
    kernel.hasCpu = true;
  }
  if (const JsonValue *gpu = value.find("gpu")) {
    std::string gpuPath = member(path, "gpu");
    if (!expectObject(*gpu, gpuPath))
      return false;
    for (size_t i = 0; i < gpu->size(); ++i) {
      GpuCode code;
      code.arch = gpu->keys()[i];
      std::string archPath = gpuPath + "." + code.arch;
      if (!isPrintable(code.arch))
        return fail(gpuPath, "architecture name '" + code.arch +
                                 "' contains a control character");
      const JsonValue &entry = (*gpu)[i];
      if (!expectObject(entry, archPath) ||
          !getName(entry, archPath, "section", code.section) ||
          !getName(entry, archPath, "entry", code.entry))
        return false;
      if (entry.find("cubin")) {
        std::string resPath = member(archPath, "resources");
        const JsonValue *res;
        if (!getName(entry, archPath, "cubin", code.cubinSection) ||
            !(res = require(entry, archPath, "resources")) ||
            !expectObject(*res, resPath))
          return false;
        std::pair<const char *, int64_t *> fields[] = {
            {"registers", &code.resources.registers},
            {"barriers", &code.resources.barriers},
            {"shared_bytes", &code.resources.sharedBytes},
            {"stack_bytes", &code.resources.stackBytes},
            {"spill_store_bytes", &code.resources.spillStoreBytes},
            {"spill_load_bytes", &code.resources.spillLoadBytes}};
        for (auto [key, out] : fields) {
          if (!getInt(*res, resPath, key, *out))
            return false;
          if (*out < 0)
            return fail(member(resPath, key), "negative count");
        }
      }
      kernel.gpu.push_back(std::move(code));
    }
  }
  if (!kernel.hasCpu && kernel.gpu.empty())
    return fail(path,
                "kernel '" + kernel.name + "' has neither CPU nor GPU code");
  return getOptionalString(value, path, "config", kernel.config);
}

bool ManifestReader::readKernels(const JsonValue &root) {
  const JsonValue *kernels;
  if (!getArray(root, "", "kernels", kernels))
    return false;
  manifest.kernels.resize(kernels->size());
  for (size_t i = 0; i < kernels->size(); ++i)
    if (!readKernel((*kernels)[i], element("kernels", i), manifest.kernels[i]))
      return false;
  return true;
}

bool ManifestReader::readGroups(const JsonValue &root) {
  const JsonValue *groups;
  if (!getArray(root, "", "groups", groups))
    return false;
  manifest.groups.resize(groups->size());
  // An index into `kernels`, at `indexPath`.
  auto checkKernelIndex = [&](int64_t index, const std::string &indexPath) {
    if (index >= 0 && static_cast<uint64_t>(index) < manifest.kernels.size())
      return true;
    return fail(indexPath, "kernel index " + std::to_string(index) +
                               " is out of range (" +
                               std::to_string(manifest.kernels.size()) +
                               " kernels)");
  };
  // Whether a kernel leads a variant read so far (true the first time).
  std::vector<uint8_t> leads(manifest.kernels.size(), 0);
  auto firstLead = [&](size_t kernel) {
    bool first = !leads[kernel];
    leads[kernel] = 1;
    return first;
  };
  for (size_t i = 0; i < groups->size(); ++i) {
    std::string path = element("groups", i);
    const JsonValue &value = (*groups)[i];
    GroupInfo &group = manifest.groups[i];
    const JsonValue *variants;
    if (!expectObject(value, path) ||
        !getName(value, path, "name", group.name) ||
        !getName(value, path, "kind", group.kind) ||
        !getArray(value, path, "variants", variants))
      return false;
    if (variants->size() == 0)
      return fail(member(path, "variants"),
                  "a group needs at least one variant");
    group.variants.resize(variants->size());
    for (size_t v = 0; v < variants->size(); ++v) {
      std::string variantPath = element(member(path, "variants"), v);
      const JsonValue &variantValue = (*variants)[v];
      VariantInfo &variant = group.variants[v];
      int64_t kernel;
      const JsonValue *when;
      if (!expectObject(variantValue, variantPath) ||
          !getInt(variantValue, variantPath, "kernel", kernel) ||
          !getArray(variantValue, variantPath, "when", when))
        return false;
      if (!checkKernelIndex(kernel, member(variantPath, "kernel")))
        return false;
      variant.kernel = static_cast<size_t>(kernel);
      if (const JsonValue *then = variantValue.find("then")) {
        std::string thenPath = member(variantPath, "then");
        if (!then->isArray())
          return fail(thenPath, "expected an array of kernel indices");
        for (size_t t = 0; t < then->size(); ++t) {
          int64_t next;
          if (!readInt((*then)[t], element(thenPath, t), next) ||
              !checkKernelIndex(next, element(thenPath, t)))
            return false;
          variant.then.push_back(static_cast<size_t>(next));
        }
        // A kernel leads its variants with one `then`: the run-time
        // selects kernels, and launches what follows the one selected.
        std::vector<size_t> &follows = manifest.kernels[variant.kernel].then;
        if (!firstLead(variant.kernel) && follows != variant.then)
          return fail(thenPath, "kernel '" +
                                    manifest.kernels[variant.kernel].name +
                                    "' leads another variant with a "
                                    "different 'then'");
        follows = variant.then;
      } else if (!firstLead(variant.kernel) &&
                 !manifest.kernels[variant.kernel].then.empty()) {
        return fail(variantPath,
                    "kernel '" + manifest.kernels[variant.kernel].name +
                        "' leads another variant with a 'then'");
      }
      variant.when.resize(when->size());
      for (size_t c = 0; c < when->size(); ++c) {
        std::string condPath = element(member(variantPath, "when"), c);
        const JsonValue &condValue = (*when)[c];
        VariantCondition &cond = variant.when[c];
        std::string symbol;
        if (!expectObject(condValue, condPath) ||
            !getString(condValue, condPath, "symbol", symbol) ||
            !getInt(condValue, condPath, "min", cond.min) ||
            !getInt(condValue, condPath, "max", cond.max))
          return false;
        size_t slot = manifest.symbolNames.size();
        for (size_t s = 0; s < manifest.symbolNames.size(); ++s)
          if (manifest.symbolNames[s] == symbol)
            slot = s;
        if (slot == manifest.symbolNames.size())
          return fail(member(condPath, "symbol"),
                      "unknown symbol '" + symbol + "'");
        if (cond.max < cond.min)
          return fail(condPath, "empty range [" + std::to_string(cond.min) +
                                    ", " + std::to_string(cond.max) + "]");
        cond.symbol = slot;
        group.addKeySymbol(slot);
      }
    }
    if (const JsonValue *problem = value.find("problem")) {
      std::string problemPath = member(path, "problem");
      GemmProblemInfo &info = group.problem;
      if (!expectObject(*problem, problemPath) ||
          !getExpr(*problem, problemPath, "batch", info.batch) ||
          !getExpr(*problem, problemPath, "m", info.m) ||
          !getExpr(*problem, problemPath, "n", info.n) ||
          !getExpr(*problem, problemPath, "k", info.k) ||
          !getInt(*problem, problemPath, "operand_bytes", info.operandBytes) ||
          !getInt(*problem, problemPath, "output_bytes", info.outputBytes))
        return false;
      if (problem->find("products")) {
        if (!getInt(*problem, problemPath, "products", info.products))
          return false;
        if (info.products < 1)
          return fail(member(problemPath, "products"),
                      "needs at least 1 product, not " +
                          std::to_string(info.products));
      }
      for (auto [key, bytes] :
           {std::pair<const char *, int64_t>{"operand_bytes",
                                             info.operandBytes},
            {"output_bytes", info.outputBytes}})
        if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
          return fail(member(problemPath, key),
                      "element size " + std::to_string(bytes) +
                          " is not 1, 2, 4 or 8 bytes");
      info.present = true;
    }
    if (const JsonValue *select = value.find("select"))
      if (!readSelection(*select, member(path, "select"), group))
        return false;
  }
  return true;
}

/// Reads the decision table's node at `object`, over key `depth`, into a
/// new node of `table` (the one after those there): ascending `lower`
/// bounds and, per interval, over the last key a `variant`, over another
/// the `inner` node over the next key.
bool ManifestReader::readNode(const JsonValue &object, const std::string &path,
                              size_t depth, size_t variants,
                              cost::DecisionTable &table) {
  size_t index = table.nodes.size();
  table.nodes.emplace_back();
  bool last = depth + 1 >= table.keys;
  const char *field = last ? "variant" : "inner";
  const JsonValue *lower, *next;
  if (!getArray(object, path, "lower", lower) ||
      !getArray(object, path, field, next))
    return false;
  if (lower->size() == 0 || lower->size() != next->size())
    return fail(member(path, field),
                last ? "needs one variant per interval, and at least one "
                       "interval"
                     : "needs one table per interval, and at least one "
                       "interval");
  for (size_t i = 0; i < lower->size(); ++i) {
    std::string at = element(member(path, field), i);
    int64_t bound, variant = 0;
    if (!readInt((*lower)[i], element(member(path, "lower"), i), bound) ||
        (last && !readInt((*next)[i], at, variant)))
      return false;
    if (i && bound <= table.nodes[index].lower.back())
      return fail(element(member(path, "lower"), i),
                  "interval bounds must ascend");
    if (last && (variant < 0 || static_cast<uint64_t>(variant) >= variants))
      return fail(at, "variant " + std::to_string(variant) +
                          " is out of range (" + std::to_string(variants) +
                          " variants)");
    // Over another key: the node over the next, read after those there.
    if (!last) {
      variant = static_cast<int64_t>(table.nodes.size());
      if (!expectObject((*next)[i], at) ||
          !readNode((*next)[i], at, depth + 1, variants, table))
        return false;
    }
    table.nodes[index].lower.push_back(bound);
    table.nodes[index].variant.push_back(static_cast<uint32_t>(variant));
  }
  return true;
}

bool ManifestReader::readSelection(const JsonValue &value,
                                   const std::string &path, GroupInfo &group) {
  VariantSelection &select = group.select;
  if (!expectObject(value, path))
    return false;
  if (value.find("reason"))
    return getString(value, path, "reason", select.reason);
  const JsonValue *keys;
  if (!getArray(value, path, "keys", keys))
    return false;
  if (keys->size() > cost::DecisionTable::kMaxKeys)
    return fail(member(path, "keys"),
                "at most " + std::to_string(cost::DecisionTable::kMaxKeys) +
                    " keys, got " + std::to_string(keys->size()));
  for (size_t i = 0; i < keys->size(); ++i) {
    ShapeExpr key;
    if (!readExpr((*keys)[i], element(member(path, "keys"), i), key))
      return false;
    select.keyTexts.push_back((*keys)[i].stringValue());
    std::vector<size_t> slots;
    key.collectSymbols(slots);
    for (size_t slot : slots)
      group.addKeySymbol(slot);
    select.keys.push_back(std::move(key));
  }
  select.table.keys = std::max<size_t>(1, keys->size());
  if (!readNode(value, path, 0, group.variants.size(), select.table))
    return false;
  // What the search recorded: optional, for explain.
  auto number = [&](const char *key, double &out) {
    const JsonValue *v = value.find(key);
    if (v && !v->isNumber())
      return typeError(member(path, key), "a number", *v);
    if (v)
      out = v->doubleValue();
    return true;
  };
  auto integer = [&](const char *key, int64_t &out) {
    const JsonValue *v = value.find(key);
    return !v || readInt(*v, member(path, key), out);
  };
  if (!getOptionalString(value, path, "model", select.model) ||
      !integer("element_bytes", select.elementBytes) ||
      !integer("bytes_per_element", select.bytesPerElement) ||
      !integer("reduction", select.reduction) ||
      !integer("scalar_access", select.scalarAccess) ||
      !integer("columns", select.columns))
    return false;
  if (!select.model.empty() && select.model != "gemm" &&
      select.model != "rows" && select.model != "conv")
    return fail(member(path, "model"), "unknown model '" + select.model +
                                           "' (expected gemm, rows or conv)");
  if (!getOptionalString(value, path, "device", select.device) ||
      !getOptionalString(value, path, "registers", select.registers) ||
      !integer("candidates", select.candidates) ||
      !integer("considered", select.considered) ||
      !integer("cap", select.cap) || !integer("dropped", select.dropped) ||
      !integer("host_threads", select.hostThreads) ||
      !number("max_regret", select.maxRegret) ||
      !number("target", select.target))
    return false;
  auto ints = [&](const char *key, std::vector<int64_t> &out) {
    const JsonValue *array = value.find(key);
    if (!array)
      return true;
    if (!array->isArray())
      return typeError(member(path, key), "an array", *array);
    for (size_t i = 0; i < array->size(); ++i) {
      int64_t v;
      if (!readInt((*array)[i], element(member(path, key), i), v))
        return false;
      out.push_back(v);
    }
    return true;
  };
  if (!ints("key_ranges", select.keyRanges) ||
      !ints("key_divisors", select.keyDivisors) ||
      !ints("dim_keys", select.dimKeys) ||
      !ints("dim_values", select.dimValues) || !ints("window", select.window))
    return false;
  // A column reduction's fourth dimension is its column (explain reads it).
  if (select.columns != 0 && (select.columns != 1 || select.model != "rows" ||
                              select.dimKeys.size() != 4))
    return fail(member(path, "columns"),
                "must be 0, or 1 for a rows model of four dim_keys");
  select.present = true;
  return true;
}

bool ManifestReader::readSteps(const JsonValue &root) {
  const JsonValue *steps;
  if (!getArray(root, "", "steps", steps))
    return false;
  manifest.steps.resize(steps->size());
  for (size_t i = 0; i < steps->size(); ++i) {
    std::string path = element("steps", i);
    const JsonValue &value = (*steps)[i];
    StepInfo &step = manifest.steps[i];
    std::string op;
    if (!expectObject(value, path) || !getString(value, path, "op", op))
      return false;
    if (op == "launch") {
      step.op = StepInfo::Op::Launch;
      int64_t group;
      if (!getInt(value, path, "group", group))
        return false;
      if (group < 0 || static_cast<uint64_t>(group) >= manifest.groups.size())
        return fail(member(path, "group"),
                    "group index " + std::to_string(group) +
                        " is out of range (" +
                        std::to_string(manifest.groups.size()) + " groups)");
      step.group = static_cast<size_t>(group);
    } else if (op == "copy") {
      step.op = StepInfo::Op::Copy;
      const JsonValue *src = require(value, path, "src");
      if (!src || !readBufferId(*src, member(path, "src"), step.src))
        return false;
      const JsonValue *dst = require(value, path, "dst");
      if (!dst || !readBufferId(*dst, member(path, "dst"), step.dst))
        return false;
      const BufferInfo &srcBuffer = manifest.buffers[step.src];
      const BufferInfo &dstBuffer = manifest.buffers[step.dst];
      if (dstBuffer.kind == BufferKind::Input ||
          dstBuffer.kind == BufferKind::Weight)
        return fail(member(path, "dst"),
                    "buffer " + std::to_string(dstBuffer.id) + " is " +
                        withArticle(dstBuffer.kind) +
                        " buffer and cannot be written");
      if (srcBuffer.dtype != dstBuffer.dtype)
        return fail(path, std::string("copy from ") +
                              dtypeName(srcBuffer.dtype) + " buffer " +
                              std::to_string(srcBuffer.id) + " to " +
                              dtypeName(dstBuffer.dtype) + " buffer " +
                              std::to_string(dstBuffer.id));
    } else if (op == "bind") {
      step.op = StepInfo::Op::Bind;
      const JsonValue *buffer = require(value, path, "buffer");
      if (!buffer || !readBufferId(*buffer, member(path, "buffer"), step.src))
        return false;
      const JsonValue *dims;
      if (!getArray(value, path, "dims", dims) ||
          !getString(value, path, "where", step.where))
        return false;
      step.dims.resize(dims->size());
      for (size_t d = 0; d < dims->size(); ++d)
        if (!readExpr((*dims)[d], element(member(path, "dims"), d),
                      step.dims[d]))
          return false;
      for (const char *flag : {"allowzero", "broadcast"}) {
        const JsonValue *v = value.find(flag);
        if (!v)
          continue;
        if (!v->isBool())
          return typeError(member(path, flag), "a boolean", *v);
        (flag[0] == 'a' ? step.allowzero : step.broadcast) = v->boolValue();
      }
      if (const JsonValue *input = value.find("reshape_of")) {
        std::string inputPath = member(path, "reshape_of");
        if (!input->isArray())
          return typeError(inputPath, "an array", *input);
        step.reshape = true;
        step.reshapeOf.resize(input->size());
        for (size_t d = 0; d < input->size(); ++d)
          if (!readExpr((*input)[d], element(inputPath, d),
                        step.reshapeOf[d]))
            return false;
      }
      const BufferInfo &read = manifest.buffers[step.src];
      if (read.dtype != DType::I64 && read.dtype != DType::I32)
        return fail(member(path, "buffer"),
                    "buffer " + std::to_string(read.id) + " is " +
                        dtypeName(read.dtype) + "; sizes are read from i64 " +
                        "or i32");
      if (read.shape.size() != 1 || !read.shape[0].isConstant() ||
          read.shape[0].constantValue() !=
              static_cast<int64_t>(step.dims.size()))
        return fail(member(path, "dims"),
                    std::to_string(step.dims.size()) +
                        " sizes from buffer " + std::to_string(read.id) +
                        ", which does not have exactly that many elements");
    } else {
      return fail(member(path, "op"),
                  "unknown step '" + op + "' (expected launch, copy or bind)");
    }
  }
  return true;
}

/// Every step uses a temp only within the temp's lifetime: temps whose
/// lifetimes do not overlap may share arena bytes, so a step outside one
/// would read or overwrite another temp's data.
bool ManifestReader::checkLifetimes() {
  auto check = [&](size_t step, size_t buffer) {
    const BufferInfo &info = manifest.buffers[buffer];
    if (info.kind != BufferKind::Temp ||
        (info.firstStep <= step && step <= info.lastStep))
      return true;
    return fail(element("steps", step),
                "uses temp buffer " + std::to_string(info.id) +
                    " outside its lifetime [" + std::to_string(info.firstStep) +
                    ", " + std::to_string(info.lastStep) + "]");
  };
  for (size_t b = 0; b < manifest.buffers.size(); ++b) {
    const BufferInfo &info = manifest.buffers[b];
    if (info.kind == BufferKind::Temp && info.lastStep >= manifest.steps.size())
      return fail(member(element("buffers", b), "live"),
                  "last step " + std::to_string(info.lastStep) +
                      " is out of range (" +
                      std::to_string(manifest.steps.size()) + " steps)");
  }
  // A workspace is one launch's scratch: live at that step alone.
  for (size_t b = 0; b < manifest.buffers.size(); ++b) {
    BufferInfo &info = manifest.buffers[b];
    if (!info.workspace)
      continue;
    std::string path = element("buffers", b);
    if (info.firstStep != info.lastStep ||
        manifest.steps[info.firstStep].op != StepInfo::Op::Launch)
      return fail(member(path, "live"),
                  "a workspace lives in one launch step, not [" +
                      std::to_string(info.firstStep) + ", " +
                      std::to_string(info.lastStep) + "]");
    info.workspaceGroup = manifest.steps[info.firstStep].group;
    for (const VariantInfo &variant :
         manifest.groups[info.workspaceGroup].variants)
      for (size_t k : variant.kernels())
        for (const KernelParam &param : manifest.kernels[k].params)
          if (param.isBuffer && param.buffer == b)
            info.workspaceLeads.push_back(variant.kernel);
  }
  for (size_t i = 0; i < manifest.steps.size(); ++i) {
    const StepInfo &step = manifest.steps[i];
    if (step.op == StepInfo::Op::Copy) {
      if (!check(i, step.src) || !check(i, step.dst))
        return false;
      continue;
    }
    if (step.op == StepInfo::Op::Bind) {
      if (!check(i, step.src))
        return false;
      continue;
    }
    for (const VariantInfo &variant : manifest.groups[step.group].variants)
      for (size_t k : variant.kernels())
        for (const KernelParam &param : manifest.kernels[k].params)
          if (param.isBuffer && !check(i, param.buffer))
            return false;
  }
  // A copy or bind step is never a workspace's launch step, so the
  // lifetimes keep them off every workspace.
  return true;
}

/// Symbols are bound by input dimensions or, for data-dependent ones, by
/// bind steps. Walks the steps in order: an element of a bind step binds a
/// bare symbol not bound yet, or is checked, and then every symbol it reads
/// must be bound; a launch or copy may only use bound symbols. Records when
/// each constraint and buffer can first be evaluated.
bool ManifestReader::bindSymbols() {
  std::vector<uint8_t> bound(manifest.symbols.size(), 0);
  for (size_t s = 0; s < manifest.symbols.size(); ++s) {
    for (size_t i = 0; i < manifest.inputs.size() && !bound[s]; ++i) {
      const std::vector<ShapeExpr> &shape = manifest.inputs[i].shape;
      for (size_t d = 0; d < shape.size() && !bound[s]; ++d) {
        if (shape[d].isSymbol() && shape[d].symbolSlot() == s) {
          manifest.symbols[s].bindingInput = i;
          manifest.symbols[s].bindingDim = d;
          bound[s] = 1;
        }
      }
    }
  }
  // The first symbol of `expr` not bound at this point, or none.
  std::vector<size_t> slots;
  auto unbound = [&](const ShapeExpr &expr) -> const SymbolInfo * {
    slots.clear();
    expr.collectSymbols(slots);
    for (size_t slot : slots)
      if (!bound[slot])
        return &manifest.symbols[slot];
    return nullptr;
  };
  // When `exprs` can be evaluated: after the latest bind step they read.
  auto readyAfter = [&](const std::vector<ShapeExpr> &exprs) {
    size_t ready = kAtBinding;
    for (const ShapeExpr &expr : exprs) {
      slots.clear();
      expr.collectSymbols(slots);
      for (size_t slot : slots) {
        size_t step = manifest.symbols[slot].bindingStep;
        if (step != kAtBinding && (ready == kAtBinding || step > ready))
          ready = step;
      }
    }
    return ready;
  };
  for (size_t i = 0; i < manifest.inputs.size(); ++i)
    for (size_t d = 0; d < manifest.inputs[i].shape.size(); ++d)
      if (const SymbolInfo *symbol = unbound(manifest.inputs[i].shape[d]))
        return fail(element(member(element("inputs", i), "shape"), d),
                    "reads symbol '" + symbol->name +
                        "', which no input dimension binds");
  auto checkBuffer = [&](size_t step, size_t buffer) {
    const BufferInfo &info = manifest.buffers[buffer];
    for (const ShapeExpr &dim : info.shape)
      if (const SymbolInfo *symbol = unbound(dim))
        return fail(element("steps", step),
                    "uses buffer " + std::to_string(info.id) +
                        " before symbol '" + symbol->name + "' is bound");
    return true;
  };
  for (size_t i = 0; i < manifest.steps.size(); ++i) {
    StepInfo &step = manifest.steps[i];
    std::string path = element("steps", i);
    switch (step.op) {
    case StepInfo::Op::Bind:
      // Its buffer has a static shape (readSteps).
      step.reshapeReady = true;
      for (const ShapeExpr &dim : step.reshapeOf)
        step.reshapeReady &= unbound(dim) == nullptr;
      step.binds.assign(step.dims.size(), kAtBinding);
      for (size_t d = 0; d < step.dims.size(); ++d) {
        const ShapeExpr &dim = step.dims[d];
        if (dim.isSymbol() && !bound[dim.symbolSlot()]) {
          size_t slot = dim.symbolSlot();
          step.binds[d] = slot;
          bound[slot] = 1;
          manifest.symbols[slot].bindingStep = i;
          continue;
        }
        if (const SymbolInfo *symbol = unbound(dim))
          return fail(element(member(path, "dims"), d),
                      "checks '" + dim.text() + "' before symbol '" +
                          symbol->name + "' is bound");
      }
      break;
    case StepInfo::Op::Copy:
      if (!checkBuffer(i, step.src) || !checkBuffer(i, step.dst))
        return false;
      break;
    case StepInfo::Op::Launch:
      for (const VariantInfo &variant : manifest.groups[step.group].variants)
        for (size_t k : variant.kernels()) {
          const KernelInfo &kernel = manifest.kernels[k];
          for (const KernelParam &param : kernel.params) {
            if (param.isBuffer) {
              if (!checkBuffer(i, param.buffer))
                return false;
            } else if (const SymbolInfo *symbol = unbound(param.expr)) {
              return fail(path, "launches kernel '" + kernel.name +
                                    "' before symbol '" + symbol->name +
                                    "' is bound");
            }
          }
          for (const ShapeExpr &extent : kernel.grid)
            if (const SymbolInfo *symbol = unbound(extent))
              return fail(path, "launches kernel '" + kernel.name +
                                    "' before symbol '" + symbol->name +
                                    "' is bound");
        }
      break;
    }
  }
  for (size_t s = 0; s < manifest.symbols.size(); ++s)
    if (!bound[s])
      return fail(element("symbols", s),
                  "symbol '" + manifest.symbols[s].name +
                      "' is not bound by any input dimension or bind step");
  for (ConstraintInfo &constraint : manifest.constraints)
    constraint.readyAfter = readyAfter({constraint.lhs, constraint.rhs});
  for (BufferInfo &buffer : manifest.buffers)
    buffer.readyAfter = readyAfter(buffer.shape);
  return true;
}

} // namespace

bool dyncc::runtime::parseManifest(std::string_view json, Manifest &out,
                                   std::string &error, bool *isVersionError) {
  out = Manifest();
  if (isVersionError)
    *isVersionError = false;
  JsonValue root;
  std::string jsonError;
  if (!parseJson(json, root, jsonError)) {
    error = "manifest: invalid JSON " + jsonError;
    return false;
  }
  bool versionError = false;
  ManifestReader reader(out, error);
  if (reader.read(root, versionError))
    return true;
  if (isVersionError)
    *isVersionError = versionError;
  out = Manifest();
  return false;
}

/// The parameter count of each `.entry` of PTX text `ptx`: the `.param`s
/// between the entry's name and the `)` that closes its list.
static std::unordered_map<std::string_view, size_t>
ptxParamCounts(std::string_view ptx) {
  std::unordered_map<std::string_view, size_t> counts;
  constexpr std::string_view kEntry = ".entry ";
  for (size_t at = ptx.find(kEntry); at != std::string_view::npos;
       at = ptx.find(kEntry, at + kEntry.size())) {
    size_t name = at + kEntry.size();
    while (name < ptx.size() && (ptx[name] == ' ' || ptx[name] == '\t'))
      ++name;
    size_t open = ptx.find('(', name);
    size_t close = open == std::string_view::npos
                       ? std::string_view::npos
                       : ptx.find(')', open);
    if (close == std::string_view::npos)
      break;
    std::string_view entry = ptx.substr(name, open - name);
    while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t' ||
                              entry.back() == '\n' || entry.back() == '\r'))
      entry.remove_suffix(1);
    std::string_view list = ptx.substr(open, close - open);
    size_t params = 0;
    for (size_t p = list.find(".param"); p != std::string_view::npos;
         p = list.find(".param", p + 6))
      ++params;
    counts[entry] = params;
  }
  return counts;
}

bool dyncc::runtime::checkManifestSections(const Manifest &manifest,
                                           const ArtifactFile &file,
                                           std::string &error) {
  auto fail = [&](const std::string &path, const std::string &message) {
    error = "manifest: " + path + ": " + message;
    return false;
  };
  for (size_t i = 0; i < manifest.buffers.size(); ++i) {
    const BufferInfo &buffer = manifest.buffers[i];
    if (buffer.kind != BufferKind::Weight)
      continue;
    std::string path = element("buffers", i);
    const ArtifactSection *section = file.findSection(buffer.section);
    if (!section)
      return fail(member(path, "section"),
                  "no section '" + buffer.section + "' in the artifact");
    uint64_t bytes = dtypeSize(buffer.dtype);
    std::string shapeText;
    bool overflow = false;
    for (const ShapeExpr &dim : buffer.shape) {
      int64_t extent = dim.constantValue();
      shapeText += (shapeText.empty() ? "" : ", ") + std::to_string(extent);
      if (extent < 0)
        return fail(path, "negative dimension " + std::to_string(extent));
      overflow |=
          __builtin_mul_overflow(bytes, static_cast<uint64_t>(extent), &bytes);
    }
    if (overflow)
      return fail(path, "the weight's size overflows");
    if (section->size != bytes)
      return fail(path, "weight section '" + buffer.section + "' has " +
                            std::to_string(section->size) +
                            " bytes, expected " + std::to_string(bytes) + " (" +
                            dtypeName(buffer.dtype) + "[" + shapeText + "])");
  }
  for (size_t i = 0; i < manifest.hostCode.size(); ++i)
    if (!file.findSection(manifest.hostCode[i].section))
      return fail(element("host_code", i) + ".section",
                  "no section '" + manifest.hostCode[i].section +
                      "' in the artifact");
  // Per PTX section, its entries' parameter counts (each section read once).
  std::unordered_map<std::string, std::unordered_map<std::string_view, size_t>>
      ptxParams;
  for (size_t k = 0; k < manifest.kernels.size(); ++k) {
    const KernelInfo &kernel = manifest.kernels[k];
    std::string path = element("kernels", k);
    if (kernel.hasCpu && !file.findSection(kernel.cpuSection))
      return fail(path + ".cpu.section",
                  "no section '" + kernel.cpuSection + "' in the artifact");
    for (const GpuCode &code : kernel.gpu) {
      const ArtifactSection *ptx = file.findSection(code.section);
      if (!ptx)
        return fail(path + ".gpu." + code.arch + ".section",
                    "no section '" + code.section + "' in the artifact");
      // The entry's parameters are the flattened `params` (the kernel ABI,
      // docs/ArtifactFormat.md): a launch fills exactly those slots. An
      // entry the PTX lacks is the driver's error, at load.
      auto counts = ptxParams.find(code.section);
      if (counts == ptxParams.end())
        counts = ptxParams.emplace(code.section, ptxParamCounts(ptx->bytes()))
                     .first;
      auto entry = counts->second.find(code.entry);
      if (entry != counts->second.end() && entry->second != kernel.numSlots)
        return fail(path + ".gpu." + code.arch + ".entry",
                    "entry '" + code.entry + "' of section '" + code.section +
                        "' takes " + std::to_string(entry->second) +
                        " parameters, but the kernel's params flatten to " +
                        std::to_string(kernel.numSlots));
      if (!code.cubinSection.empty() && !file.findSection(code.cubinSection))
        return fail(path + ".gpu." + code.arch + ".cubin",
                    "no section '" + code.cubinSection + "' in the artifact");
    }
  }
  return true;
}

bool dyncc::runtime::VariantSelection::evaluateKeys(
    const int64_t *symbols, int64_t (&values)[cost::DecisionTable::kMaxKeys])
    const {
  std::fill(std::begin(values), std::end(values), 0);
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i].evaluate(symbols, values[i]) != ShapeExpr::EvalStatus::Ok)
      return false;
  return true;
}

/// The compiler's arena placements (optional): per placement, every temp
/// once, either in `empty` or in `order`.
bool ManifestReader::readArena(const JsonValue &root) {
  const JsonValue *plans = root.find("arena");
  if (!plans)
    return true;
  if (!plans->isArray())
    return typeError("arena", "an array", *plans);
  manifest.hasArena = true;
  // A model's sessions keep at most that many (SharedPlacements).
  if (plans->size() > ArenaPlanner::kRememberedPlacements)
    return fail("arena",
                "has " + std::to_string(plans->size()) +
                    " placements, more than the " +
                    std::to_string(ArenaPlanner::kRememberedPlacements) +
                    " a model keeps");
  size_t temps = 0;
  for (const BufferInfo &buffer : manifest.buffers)
    temps += buffer.kind == BufferKind::Temp;
  std::vector<size_t> seen(manifest.buffers.size(), SIZE_MAX);
  manifest.arena.resize(plans->size());
  for (size_t p = 0; p < plans->size(); ++p) {
    std::string path = element("arena", p);
    const JsonValue &plan = (*plans)[p];
    if (!expectObject(plan, path))
      return false;
    ArenaPlanInfo &info = manifest.arena[p];
    for (auto [key, into] :
         {std::pair{"empty", &info.empty}, std::pair{"order", &info.order}}) {
      const JsonValue *ids;
      if (!getArray(plan, path, key, ids))
        return false;
      std::string listPath = member(path, key);
      into->resize(ids->size());
      for (size_t i = 0; i < ids->size(); ++i) {
        std::string at = element(listPath, i);
        size_t &b = (*into)[i];
        if (!readBufferId((*ids)[i], at, b))
          return false;
        const BufferInfo &buffer = manifest.buffers[b];
        if (buffer.kind != BufferKind::Temp)
          return fail(at, "buffer " + std::to_string(buffer.id) + " is " +
                              withArticle(buffer.kind) + ", not a temp");
        if (seen[b] == p)
          return fail(at, "temp buffer " + std::to_string(buffer.id) +
                              " is listed twice");
        seen[b] = p;
      }
    }
    if (info.empty.size() + info.order.size() != temps)
      return fail(path,
                  "places " +
                      std::to_string(info.empty.size() + info.order.size()) +
                      " of the " + std::to_string(temps) + " temps");
  }
  return true;
}

bool dyncc::runtime::isSelectable(const Manifest &manifest, size_t group,
                                  size_t afterStep) {
  for (size_t slot : manifest.groups[group].keySymbols) {
    size_t step = manifest.symbols[slot].bindingStep;
    if (step != kAtBinding && (afterStep == kAtBinding || step > afterStep))
      return false;
  }
  return true;
}

bool dyncc::runtime::GroupInfo::pick(const int64_t *symbols,
                                     size_t &variant) const {
  if (select.present && select.lookup(symbols, variant) &&
      variants[variant].holds(symbols))
    return true;
  for (variant = 0; variant < variants.size(); ++variant)
    if (variants[variant].holds(symbols))
      return true;
  return false;
}

bool dyncc::runtime::VariantSelection::lookup(const int64_t *symbols,
                                              size_t &variant) const {
  int64_t values[cost::DecisionTable::kMaxKeys];
  if (!evaluateKeys(symbols, values))
    return false;
  variant = table.lookup(values);
  return true;
}
