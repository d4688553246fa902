//===- Ptxas.cpp - Assemble PTX with ptxas, read its resource report ------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Target/Ptxas.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>
#include <mutex>

using namespace llvm;
using namespace dyncc;

/// $CUDA_HOME when it is set and not empty.
static const char *getCudaHome() {
  const char *home = std::getenv("CUDA_HOME");
  return home && *home ? home : nullptr;
}

/// Where to look for the toolkit: $CUDA_HOME alone when it is set (an
/// explicit choice is not second-guessed), else the usual places.
static SmallVector<std::string, 4> getToolkitCandidates() {
  if (const char *home = getCudaHome())
    return {home};
  SmallVector<std::string, 4> roots;
  for (const char *name : {"CUDA_ROOT", "CUDA_PATH"})
    if (const char *root = std::getenv(name); root && *root)
      roots.push_back(root);
  roots.push_back("/usr/local/cuda");
  return roots;
}

std::optional<std::string> dyncc::findCudaToolkit() {
  for (const std::string &root : getToolkitCandidates()) {
    SmallString<128> path(root);
    sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    if (sys::fs::is_regular_file(path))
      return root;
  }
  return std::nullopt;
}

std::optional<std::string> dyncc::findPtxas() {
  for (const std::string &root : getToolkitCandidates()) {
    SmallString<128> path(root);
    sys::path::append(path, "bin", "ptxas");
    if (sys::fs::can_execute(path))
      return std::string(path);
  }
  if (getCudaHome())
    return std::nullopt;
  if (ErrorOr<std::string> path = sys::findProgramByName("ptxas"))
    return *path;
  return std::nullopt;
}

std::optional<std::string> dyncc::findUnresolvedLibdeviceCall(StringRef ptx) {
  // A declaration names the function on its first line:
  // `.extern .func  (.param .b32 func_retval0) __nv_powf`.
  for (size_t at; (at = ptx.find(".extern .func")) != StringRef::npos;) {
    ptx = ptx.drop_front(at);
    StringRef line = ptx.take_until([](char c) { return c == '\n'; });
    ptx = ptx.drop_front(line.size());
    size_t call = line.find("__nv_");
    if (call != StringRef::npos)
      return line.drop_front(call)
          .take_while([](char c) { return isAlnum(c) || c == '_'; })
          .str();
  }
  return std::nullopt;
}

bool dyncc::parsePtxasReport(StringRef report, StringRef arch,
                             std::map<std::string, KernelResources> &resources,
                             std::string &error) {
  Regex entry("Compiling entry function '([^']+)' for '([^']+)'");
  Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, "
              "([0-9]+) bytes spill loads");
  Regex registers("Used ([0-9]+) registers");
  Regex barriers("used ([0-9]+) barriers");
  Regex shared("([0-9]+) bytes smem");
  auto number = [](StringRef text) {
    int64_t value = 0;
    text.getAsInteger(10, value);
    return value;
  };
  KernelResources *current = nullptr;
  std::string currentName;
  bool sawFrame = false, sawRegisters = false;
  auto finish = [&]() {
    if (current && (!sawFrame || !sawRegisters)) {
      error = "ptxas report for '" + currentName + "' (" + arch.str() +
              ") has no " + (sawFrame ? "register count" : "stack frame line");
      return false;
    }
    return true;
  };
  SmallVector<StringRef> lines;
  report.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef, 4> m;
    if (entry.match(line, &m)) {
      if (!finish())
        return false;
      if (m[2] != arch) {
        error = "ptxas compiled '" + m[1].str() + "' for '" + m[2].str() +
                "', expected '" + arch.str() + "'";
        return false;
      }
      currentName = m[1].str();
      current = &resources[currentName];
      *current = KernelResources();
      sawFrame = sawRegisters = false;
      continue;
    }
    if (!current)
      continue;
    if (frame.match(line, &m)) {
      current->stackBytes = number(m[1]);
      current->spillStoreBytes = number(m[2]);
      current->spillLoadBytes = number(m[3]);
      sawFrame = true;
    }
    if (registers.match(line, &m)) {
      current->registers = number(m[1]);
      sawRegisters = true;
      if (barriers.match(line, &m))
        current->barriers = number(m[1]);
      if (shared.match(line, &m))
        current->sharedBytes = number(m[1]);
    }
  }
  if (!finish())
    return false;
  if (resources.empty()) {
    error = "ptxas report names no entry function";
    return false;
  }
  return true;
}

/// Threads a ptxas that has `--split-compile` (CUDA 12 and later) is given:
/// a fixed count, so that the cubin does not depend on the compiling
/// machine's cores (ptxas' output does on the count, not on the cores).
constexpr const char *kPtxasThreads = "4";
/// The kernels (`.entry`s) a module has at least for ptxas to split it.
constexpr size_t kMinSplitEntries = 8;

/// Whether `ptxas` takes `--split-compile`, from its `--help` (once per
/// ptxas).
static bool hasSplitCompile(StringRef ptxas) {
  static std::mutex mutex;
  static std::map<std::string, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = known.insert({ptxas.str(), false});
  if (!inserted)
    return it->second;
  SmallString<128> helpPath;
  if (sys::fs::createTemporaryFile("dyncc-ptxas", "help", helpPath))
    return false;
  scope_exit cleanup([&] { sys::fs::remove(helpPath); });
  StringRef args[] = {ptxas, "--help"};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(helpPath),
                                          StringRef(helpPath)};
  if (sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects) != 0)
    return false;
  ErrorOr<std::unique_ptr<MemoryBuffer>> help =
      MemoryBuffer::getFile(helpPath);
  it->second = help && (*help)->getBuffer().contains("--split-compile");
  return it->second;
}

bool dyncc::assemblePtx(StringRef ptxas, StringRef arch, StringRef ptx,
                        std::string &cubin,
                        std::map<std::string, KernelResources> &resources,
                        std::string &error) {
  SmallString<128> ptxPath, cubinPath, logPath;
  scope_exit cleanup([&] {
    for (StringRef path : {ptxPath, cubinPath, logPath})
      if (!path.empty())
        sys::fs::remove(path);
  });
  for (auto [path, suffix] :
       {std::pair{&ptxPath, "ptx"}, std::pair{&cubinPath, "cubin"},
        std::pair{&logPath, "log"}})
    if (std::error_code ec =
            sys::fs::createTemporaryFile("dyncc-ptxas", suffix, *path)) {
      error = "cannot create a temporary file: " + ec.message();
      return false;
    }
  {
    std::error_code ec;
    raw_fd_ostream os(ptxPath, ec);
    if (ec) {
      error = "cannot write " + ptxPath.str().str() + ": " + ec.message();
      return false;
    }
    os << ptx;
  }
  std::string archFlag = "-arch=" + arch.str();
  SmallVector<StringRef> args = {ptxas, archFlag, "-v"};
  // Its functions compiled on several threads: BERT-base's 72 kernels for
  // sm_90 in 5.4 s instead of 7.3 s on 2 cores, the same registers. Not
  // for a few kernels, where the threads and the --help probe cost more
  // than they save (a 2-kernel module: 44 ms instead of 38).
  if (ptx.count(".entry ") >= kMinSplitEntries && hasSplitCompile(ptxas))
    args.append({"--split-compile", kPtxasThreads});
  args.append({"-o", cubinPath, ptxPath});
  std::optional<StringRef> redirects[] = {std::nullopt, logPath, logPath};
  std::string execError;
  int rc = sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                               &execError);
  ErrorOr<std::unique_ptr<MemoryBuffer>> log = MemoryBuffer::getFile(logPath);
  StringRef report = log ? (*log)->getBuffer() : StringRef();
  if (rc != 0) {
    // The first line naming an error, else the first line.
    StringRef first = report.take_until([](char c) { return c == '\n'; });
    SmallVector<StringRef> lines;
    report.split(lines, '\n');
    for (StringRef line : lines)
      if (line.contains("error")) {
        first = line;
        break;
      }
    error = "ptxas (" + arch.str() + ") failed" +
            (rc < 0 ? ": " + execError : ": " + first.trim().str());
    return false;
  }
  if (!parsePtxasReport(report, arch, resources, error))
    return false;
  ErrorOr<std::unique_ptr<MemoryBuffer>> binary =
      MemoryBuffer::getFile(cubinPath, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false);
  if (!binary) {
    error = "ptxas wrote no cubin: " + binary.getError().message();
    return false;
  }
  cubin = (*binary)->getBuffer().str();
  return true;
}
