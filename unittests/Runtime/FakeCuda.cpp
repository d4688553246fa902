//===- FakeCuda.cpp - A CUDA driver on the host, for the tests --*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// libdyncc_fake_cuda.so exports the driver entry points the run-time
// resolves (lib/Runtime/CudaDriver.cpp), implemented on the host, so that
// the CUDA executor's logic is tested on machines with no GPU: the run-time
// loads it in place of libcuda.so.1 through $DYNCC_CUDA_DRIVER.
//
// It checks what a real driver would reject, and more:
//  - device memory is host memory, but every copy and every pointer
//    parameter of a launch (the `.ptr` parameters of the PTX entry) must lie
//    in a live allocation; frees must name one;
//  - a launch needs the context current on the calling thread, a loaded
//    function, a grid and block of at least 1, and a dynamic shared size
//    that with the function's static shared memory passes 48 KB only after
//    cuFuncSetAttribute raised the limit that far (static bytes: the PTX
//    module's `.shared` variables, or a cubin's `.nv.shared.NAME` section
//    less the system's reserved KB);
//  - a cubin must be an ELF for EM_CUDA whose architecture the device runs
//    (same major version, minor not above); PTX must target one not above
//    the device's ("compiled" at load, as the driver's JIT does);
//  - at exit from the tests, nothing may be left allocated or loaded.
//
// Built twice: libdyncc_fake_cuda_minimal.so (DYNCC_FAKE_CUDA_MINIMAL)
// lacks the optional entry points, page-locked memory and graphs, as a
// driver might, so the run-time's fallbacks without them are tested too.
//
// Launches run: where $DYNCC_FAKE_CUDA_HOST_CODE names a shared object, each
// launch calls its host entry (`ENTRY_cpu`, else `ENTRY`, with the kernel ABI
// of docs/ArtifactFormat.md) once per block, so a CUDA session computes real
// numbers. The device's architecture, count and shared memory come from
// $DYNCC_FAKE_CUDA_ARCH (default 90), $DYNCC_FAKE_CUDA_DEVICES (1) and
// $DYNCC_FAKE_CUDA_SHARED_OPTIN (232448), its SM count and resident blocks
// per SM from $DYNCC_FAKE_CUDA_SMS (132) and $DYNCC_FAKE_CUDA_OCCUPANCY (1);
// $DYNCC_FAKE_CUDA_BLOCK_US ("entry=microseconds,...") makes each block of
// those kernels that much slower; $DYNCC_FAKE_CUDA_FAIL names an entry
// point that then fails. Tests change them with fake_cuda_set().
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace {
using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kNotInitialized = 3;
constexpr CUresult kInvalidDevice = 101;
constexpr CUresult kInvalidImage = 200;
constexpr CUresult kInvalidContext = 201;
constexpr CUresult kNoBinaryForGpu = 209;
constexpr CUresult kInvalidPtx = 218;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kNotFound = 500;
constexpr CUresult kLaunchOutOfResources = 701;
constexpr CUresult kCaptureUnsupported = 900;
constexpr CUresult kCaptureInvalidated = 901;
constexpr CUresult kUnknown = 999;

struct Function {
  std::string name;
  /// Per parameter of the PTX entry, whether it is a pointer; unknown (and
  /// unchecked) for cubins.
  std::vector<bool> pointers;
  bool known = false;
  /// Static shared memory, and the dynamic bytes a launch may ask for
  /// (48 KB less the static bytes until cuFuncSetAttribute raises it).
  int staticShared = 0;
  int maxDynamicShared = 48 * 1024;
};

struct Module {
  std::vector<Function *> functions;
  std::string image; // PTX text, or the cubin's bytes
  bool ptx = false;
};

struct Event {
  std::chrono::steady_clock::time_point when;
  bool recorded = false;
};

typedef void (*HostEntry)(void **params, int64_t x, int64_t y, int64_t z);

/// A node of a captured graph: a launch (its parameters' values, 8 bytes
/// each, as dyncc's kernels take them) or a device-to-device copy.
struct Node {
  void *function = nullptr; // null: a copy
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0}, shared = 0;
  std::vector<uint64_t> params;
  uint64_t dst = 0, src = 0, bytes = 0;
};
struct Graph {
  std::vector<Node> nodes;
};
/// A stream in capture: its nodes so far, and whether a call failed.
struct Capture {
  Graph *graph = nullptr;
  bool invalid = false;
};

struct State {
  std::mutex mutex;
  bool initialized = false;
  std::map<std::string, std::string> settings;
  std::map<uintptr_t, size_t> allocations;
  /// Page-locked host memory (cuMemHostAlloc), by address.
  std::map<uintptr_t, size_t> pinned;
  std::set<Module *> modules;
  std::set<void *> streams;
  std::set<Event *> events;
  std::map<int, int> retained; // device -> count
  void *hostCode = nullptr;
  std::string hostCodePath;
  std::map<void *, Capture> captures; // by stream
  std::set<Graph *> graphs, execs;

  // Counters, read by the tests.
  long launches = 0, blocks = 0, cubinLoads = 0, ptxLoads = 0,
       sharedRaises = 0, copiesIn = 0, copiesOut = 0, copiesOnDevice = 0,
       graphLaunches = 0, graphsInstantiated = 0, copiesInPinned = 0,
       pinnedAllocations = 0;
  std::string lastLaunch;
};

State &state() {
  static State s;
  return s;
}

thread_local void *currentContext = nullptr;

/// The contexts are the addresses of these, one per device.
char contexts[16];

std::string setting(const char *key, const char *fallback) {
  State &s = state();
  auto it = s.settings.find(key);
  if (it != s.settings.end())
    return it->second;
  const char *env = std::getenv(key);
  return env ? env : fallback;
}

int deviceArch() {
  return std::atoi(setting("DYNCC_FAKE_CUDA_ARCH", "90").c_str());
}
int sharedOptIn() {
  return std::atoi(setting("DYNCC_FAKE_CUDA_SHARED_OPTIN", "232448").c_str());
}
int deviceCount() {
  return std::atoi(setting("DYNCC_FAKE_CUDA_DEVICES", "1").c_str());
}
int smCount() {
  return std::atoi(setting("DYNCC_FAKE_CUDA_SMS", "132").c_str());
}
int occupancy() {
  return std::atoi(setting("DYNCC_FAKE_CUDA_OCCUPANCY", "1").c_str());
}

/// The extra time each block of `entry` takes, from
/// $DYNCC_FAKE_CUDA_BLOCK_US ("entry=microseconds,..."): a slower kernel.
long blockDelay(const std::string &entry) {
  std::string list = setting("DYNCC_FAKE_CUDA_BLOCK_US", "");
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos)
      end = list.size();
    std::string item = list.substr(at, end - at);
    size_t equals = item.find('=');
    if (equals != std::string::npos && item.substr(0, equals) == entry)
      return std::atol(item.c_str() + equals + 1);
    at = end + 1;
  }
  return 0;
}

/// True where $DYNCC_FAKE_CUDA_FAIL names `entry`.
bool failing(const char *entry) {
  return setting("DYNCC_FAKE_CUDA_FAIL", "") == entry;
}

/// Whether [address, address + bytes) lies in one live allocation.
bool inAllocation(uintptr_t address, size_t bytes) {
  State &s = state();
  auto it = s.allocations.upper_bound(address);
  if (it == s.allocations.begin())
    return false;
  --it;
  return address >= it->first && address - it->first <= it->second &&
         bytes <= it->second - (address - it->first);
}

/// Whether host pointer `address` points into a device allocation: a byte
/// there is one (an allocation's end is not: a host block may start there).
bool isDevicePointer(uintptr_t address) { return inAllocation(address, 1); }

/// Parses the parameters of `.entry NAME(` in `ptx`.
bool parsePtxEntry(const std::string &ptx, const std::string &name,
                   std::vector<bool> &pointers) {
  std::string key = ".entry " + name + "(";
  size_t at = ptx.find(key);
  if (at == std::string::npos)
    return false;
  size_t end = ptx.find(')', at);
  std::string params = ptx.substr(at + key.size(), end - at - key.size());
  size_t pos = 0;
  while ((pos = params.find(".param", pos)) != std::string::npos) {
    size_t next = params.find(',', pos);
    std::string one = params.substr(pos, next == std::string::npos
                                             ? std::string::npos
                                             : next - pos);
    pointers.push_back(one.find(".ptr") != std::string::npos);
    pos += 6;
  }
  return true;
}

/// The static shared memory of a PTX module's kernels: the bytes of its
/// module-scope `.shared` variables (not `.extern` ones), each counted for
/// every kernel, as a kernel using them all would have.
int ptxStaticShared(const std::string &ptx) {
  int bytes = 0;
  size_t at = 0;
  while ((at = ptx.find("\n.shared ", at)) != std::string::npos) {
    size_t end = ptx.find(';', at);
    std::string decl = ptx.substr(at + 1, end - at - 1);
    at = end;
    size_t width = decl.find(" .b");
    if (width == std::string::npos)
      continue;
    int elementBytes = std::atoi(decl.c_str() + width + 3) / 8;
    size_t open = decl.find('[');
    bytes +=
        elementBytes *
        (open == std::string::npos ? 1 : std::atoi(decl.c_str() + open + 1));
  }
  return bytes;
}

/// A cubin kernel's static shared memory: the size of its `.nv.shared.NAME`
/// section, less the 1 KB the system reserves in every block where the
/// cubin has a `.nv.shared.reserved.*` section (ptxas for sm_80 and later
/// counts that KB in each kernel's section); 0 where it has none.
int cubinStaticShared(const std::string &elf, const std::string &name) {
  uint64_t headers;
  uint16_t entrySize, entries, names;
  std::memcpy(&headers, &elf[40], 8);
  std::memcpy(&entrySize, &elf[58], 2);
  std::memcpy(&entries, &elf[60], 2);
  std::memcpy(&names, &elf[62], 2);
  if (entries == 0 || names >= entries || entrySize < 40 ||
      headers + uint64_t(entries) * entrySize > elf.size())
    return 0;
  auto header = [&](unsigned i) { return &elf[headers + i * entrySize]; };
  uint64_t table;
  std::memcpy(&table, header(names) + 24, 8);
  auto named = [&](uint32_t at, const std::string &prefix, bool whole) {
    size_t length = prefix.size() + (whole ? 1 : 0);
    return table + at + length <= elf.size() &&
           elf.compare(table + at, length, prefix.c_str(), length) == 0;
  };
  std::string wanted = ".nv.shared." + name;
  int64_t bytes = 0;
  bool reserved = false;
  for (unsigned i = 0; i < entries; ++i) {
    uint32_t nameAt;
    uint64_t size;
    std::memcpy(&nameAt, header(i), 4);
    std::memcpy(&size, header(i) + 32, 8);
    if (named(nameAt, wanted, true))
      bytes = static_cast<int64_t>(size);
    reserved |= named(nameAt, ".nv.shared.reserved", false);
  }
  return static_cast<int>(reserved ? std::max<int64_t>(bytes - 1024, 0)
                                   : bytes);
}

/// The architecture a PTX text targets (`.target sm_80` -> 80), or -1.
int ptxTarget(const std::string &ptx) {
  size_t at = ptx.find(".target sm_");
  if (at == std::string::npos)
    return -1;
  return std::atoi(ptx.c_str() + at + 11);
}

void writeLog(unsigned count, int *options, void **values,
              const std::string &text) {
  char *buffer = nullptr;
  size_t size = 0;
  for (unsigned i = 0; i < count; ++i) {
    if (options[i] == 5)
      buffer = static_cast<char *>(values[i]);
    if (options[i] == 6)
      size = reinterpret_cast<uintptr_t>(values[i]);
  }
  if (buffer && size) {
    std::strncpy(buffer, text.c_str(), size - 1);
    buffer[size - 1] = 0;
  }
}
} // namespace

extern "C" {

//===----------------------------------------------------------------------===//
// Test control
//===----------------------------------------------------------------------===//

/// Overrides a DYNCC_FAKE_CUDA_* setting (null `value`: back to the
/// environment's).
void fake_cuda_set(const char *key, const char *value) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (value)
    s.settings[key] = value;
  else
    s.settings.erase(key);
}

/// A counter by name ("launches", "blocks", "cubin_loads", "ptx_loads",
/// "shared_raises", "copies_in", "copies_out", "copies_on_device",
/// "copies_in_pinned" (copies to the device from page-locked memory),
/// "pinned_allocations", "live_allocations", "live_pinned", "live_modules",
/// "live_streams", "live_events", "retained_contexts"), or -1.
long fake_cuda_count(const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string key = name;
  if (key == "launches") return s.launches;
  if (key == "blocks") return s.blocks;
  if (key == "cubin_loads") return s.cubinLoads;
  if (key == "ptx_loads") return s.ptxLoads;
  if (key == "shared_raises") return s.sharedRaises;
  if (key == "copies_in") return s.copiesIn;
  if (key == "copies_out") return s.copiesOut;
  if (key == "copies_on_device") return s.copiesOnDevice;
  if (key == "graph_launches") return s.graphLaunches;
  if (key == "graphs_instantiated") return s.graphsInstantiated;
  if (key == "live_graphs")
    return static_cast<long>(s.graphs.size() + s.execs.size());
  if (key == "copies_in_pinned") return s.copiesInPinned;
  if (key == "pinned_allocations") return s.pinnedAllocations;
  if (key == "live_allocations") return static_cast<long>(s.allocations.size());
  if (key == "live_pinned") return static_cast<long>(s.pinned.size());
  if (key == "live_modules") return static_cast<long>(s.modules.size());
  if (key == "live_streams") return static_cast<long>(s.streams.size());
  if (key == "live_events") return static_cast<long>(s.events.size());
  if (key == "retained_contexts") {
    long total = 0;
    for (auto &entry : s.retained)
      total += entry.second;
    return total;
  }
  return -1;
}

/// "NAME grid X Y Z block X Y Z shared N" of the last launch.
const char *fake_cuda_last_launch(void) { return state().lastLaunch.c_str(); }

//===----------------------------------------------------------------------===//
// The driver API
//===----------------------------------------------------------------------===//

CUresult cuInit(unsigned flags) {
  if (flags != 0)
    return kInvalidValue;
  if (failing("cuInit"))
    return kNotInitialized;
  state().initialized = true;
  return kSuccess;
}

CUresult cuDriverGetVersion(int *version) {
  if (failing("cuDriverGetVersion"))
    return kUnknown;
  *version = 13000;
  return kSuccess;
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case kSuccess: *name = "CUDA_SUCCESS"; return kSuccess;
  case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
  case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
  case kNotInitialized: *name = "CUDA_ERROR_NOT_INITIALIZED"; return kSuccess;
  case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; return kSuccess;
  case kInvalidImage: *name = "CUDA_ERROR_INVALID_IMAGE"; return kSuccess;
  case kInvalidContext: *name = "CUDA_ERROR_INVALID_CONTEXT"; return kSuccess;
  case kNoBinaryForGpu: *name = "CUDA_ERROR_NO_BINARY_FOR_GPU"; return kSuccess;
  case kInvalidPtx: *name = "CUDA_ERROR_INVALID_PTX"; return kSuccess;
  case kInvalidHandle: *name = "CUDA_ERROR_INVALID_HANDLE"; return kSuccess;
  case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; return kSuccess;
  case kLaunchOutOfResources:
    *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    return kSuccess;
  case kCaptureUnsupported:
    *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    return kSuccess;
  case kCaptureInvalidated:
    *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    return kSuccess;
  case kUnknown: *name = "CUDA_ERROR_UNKNOWN"; return kSuccess;
  }
  return kInvalidValue;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  const char *name;
  if (cuGetErrorName(error, &name) != kSuccess)
    return kInvalidValue;
  *text = error == kOutOfMemory ? "out of memory" : "fake driver error";
  return kSuccess;
}

CUresult cuDeviceGetCount(int *count) {
  if (!state().initialized)
    return kNotInitialized;
  if (failing("cuDeviceGetCount"))
    return kUnknown;
  *count = deviceCount();
  return kSuccess;
}

CUresult cuDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount() || ordinal >= 16)
    return kInvalidDevice;
  if (failing("cuDeviceGet"))
    return kUnknown;
  *device = ordinal;
  return kSuccess;
}

CUresult cuDeviceGetName(char *name, int length, int device) {
  if (failing("cuDeviceGetName"))
    return kUnknown;
  std::string text = "Fake GPU " + std::to_string(device) + " (sm_" +
                     std::to_string(deviceArch()) + ")";
  std::strncpy(name, text.c_str(), static_cast<size_t>(length));
  return kSuccess;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device) {
  if (device < 0 || device >= deviceCount())
    return kInvalidDevice;
  // "cuDeviceGetAttribute" fails every query, "cuDeviceGetAttribute:97"
  // only that attribute's.
  if (failing("cuDeviceGetAttribute") ||
      failing(("cuDeviceGetAttribute:" + std::to_string(attribute)).c_str()))
    return kUnknown;
  switch (attribute) {
  case 16: *value = smCount(); return kSuccess;
  case 75: *value = deviceArch() / 10; return kSuccess;
  case 76: *value = deviceArch() % 10; return kSuccess;
  case 97:
    *value = sharedOptIn();
    return kSuccess;
  }
  return kInvalidValue;
}

CUresult cuDevicePrimaryCtxRetain(void **context, int device) {
  if (device < 0 || device >= deviceCount() || device >= 16)
    return kInvalidDevice;
  if (failing("cuDevicePrimaryCtxRetain"))
    return kUnknown;
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().retained[device];
  *context = &contexts[device];
  return kSuccess;
}

CUresult cuDevicePrimaryCtxRelease_v2(int device) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().retained.find(device);
  if (it == state().retained.end() || it->second == 0)
    return kInvalidContext;
  --it->second;
  return kSuccess;
}

CUresult cuCtxSetCurrent(void *context) {
  currentContext = context;
  return kSuccess;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned count,
                            int *options, void **values) {
  if (!currentContext)
    return kInvalidContext;
  if (failing("cuModuleLoadDataEx"))
    return kUnknown;
  State &s = state();
  auto *mod = new Module();
  const unsigned char *bytes = static_cast<const unsigned char *>(image);
  int device = deviceArch();
  if (std::memcmp(bytes, "\x7f" "ELF", 4) == 0) {
    uint16_t machine;
    uint32_t flags;
    std::memcpy(&machine, bytes + 18, 2);
    std::memcpy(&flags, bytes + 48, 4);
    int arch = bytes[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
    if (machine != 190) {
      delete mod;
      return kInvalidImage;
    }
    if (arch / 10 != device / 10 || arch > device) {
      delete mod;
      return kNoBinaryForGpu;
    }
    // The entry names are looked up in the whole image (its string table).
    uint64_t size;
    std::memcpy(&size, bytes + 40, 8); // e_shoff: past the section data
    uint16_t entries, entrySize;
    std::memcpy(&entrySize, bytes + 58, 2);
    std::memcpy(&entries, bytes + 60, 2);
    mod->image.assign(reinterpret_cast<const char *>(bytes),
                      size + uint64_t(entries) * entrySize);
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.cubinLoads;
  } else {
    mod->image = static_cast<const char *>(image);
    mod->ptx = true;
    int target = ptxTarget(mod->image);
    if (target < 0 || target > device) {
      writeLog(count, options, values,
               "ptxas fatal: the PTX targets sm_" + std::to_string(target) +
                   ", above the device's sm_" + std::to_string(device));
      delete mod;
      return kInvalidPtx;
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.ptxLoads;
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  s.modules.insert(mod);
  *module = mod;
  return kSuccess;
}

CUresult cuModuleUnload(void *module) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *mod = static_cast<Module *>(module);
  if (!s.modules.erase(mod))
    return kInvalidHandle;
  for (Function *function : mod->functions)
    delete function;
  delete mod;
  return kSuccess;
}

CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *mod = static_cast<Module *>(module);
  if (!s.modules.count(mod))
    return kInvalidHandle;
  auto *fn = new Function();
  fn->name = name;
  if (mod->ptx) {
    fn->known = parsePtxEntry(mod->image, name, fn->pointers);
    if (!fn->known) {
      delete fn;
      return kNotFound;
    }
    fn->staticShared = ptxStaticShared(mod->image);
  } else if (mod->image.find(std::string(name) + '\0') == std::string::npos) {
    delete fn;
    return kNotFound;
  } else {
    fn->staticShared = cubinStaticShared(mod->image, name);
  }
  fn->maxDynamicShared = 48 * 1024 - fn->staticShared;
  mod->functions.push_back(fn);
  *function = fn;
  return kSuccess;
}

CUresult cuFuncGetAttribute(int *value, int attribute, void *function) {
  auto *fn = static_cast<Function *>(function);
  if (!fn || !value)
    return kInvalidValue;
  if (attribute == 1)
    *value = fn->staticShared;
  else if (attribute == 8)
    *value = fn->maxDynamicShared;
  else
    return kInvalidValue;
  return kSuccess;
}

CUresult cuFuncSetAttribute(void *function, int attribute, int value) {
  if (failing("cuFuncSetAttribute"))
    return kUnknown;
  auto *fn = static_cast<Function *>(function);
  if (attribute != 8 || value < 0)
    return kInvalidValue;
  if (value + fn->staticShared > sharedOptIn())
    return kInvalidValue;
  fn->maxDynamicShared = value;
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().sharedRaises;
  return kSuccess;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks,
                                                     void *function,
                                                     int blockSize,
                                                     size_t sharedBytes) {
  auto *fn = static_cast<Function *>(function);
  if (!fn || blockSize < 1 || blockSize > 1024 ||
      static_cast<long>(sharedBytes) > fn->maxDynamicShared)
    return kInvalidValue;
  if (failing("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    return kUnknown;
  *blocks = occupancy();
  return kSuccess;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  (void)stream;
  if (!currentContext)
    return kInvalidContext;
  if (failing("cuLaunchKernel"))
    return kLaunchOutOfResources;
  auto *fn = static_cast<Function *>(function);
  // The hardware's grid limits: x below 2^31, y and z below 2^16.
  if (!fn || !gx || !gy || !gz || !bx || !by || !bz || extra ||
      bx * by * bz > 1024 || gx > 0x7fffffffu || gy > 0xffffu || gz > 0xffffu)
    return kInvalidValue;
  if (static_cast<int>(shared) > fn->maxDynamicShared)
    return kInvalidValue;
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (size_t i = 0; i < fn->pointers.size(); ++i) {
      if (!fn->pointers[i])
        continue;
      uintptr_t address;
      std::memcpy(&address, params[i], sizeof(address));
      if (!inAllocation(address, 0))
        return kInvalidValue;
    }
    auto capture = s.captures.find(stream);
    if (capture != s.captures.end()) {
      // Recorded, not run. The parameters' count is the PTX entry's: a
      // cubin's is unknown here, so its launches cannot be captured.
      if (!fn->known) {
        capture->second.invalid = true;
        return kCaptureUnsupported;
      }
      Node node;
      node.function = function;
      unsigned grid[3] = {gx, gy, gz}, blockDims[3] = {bx, by, bz};
      std::copy(grid, grid + 3, node.grid);
      std::copy(blockDims, blockDims + 3, node.block);
      node.shared = shared;
      node.params.resize(fn->pointers.size());
      for (size_t i = 0; i < node.params.size(); ++i)
        std::memcpy(&node.params[i], params[i], sizeof(uint64_t));
      capture->second.graph->nodes.push_back(std::move(node));
      return kSuccess;
    }
    ++s.launches;
    s.blocks += long(gx) * gy * gz;
    s.lastLaunch = fn->name + " grid " + std::to_string(gx) + " " +
                   std::to_string(gy) + " " + std::to_string(gz) + " block " +
                   std::to_string(bx) + " " + std::to_string(by) + " " +
                   std::to_string(bz) + " shared " + std::to_string(shared);
    std::string path = setting("DYNCC_FAKE_CUDA_HOST_CODE", "");
    if (path != s.hostCodePath) {
      s.hostCode = path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW);
      s.hostCodePath = path;
    }
  }
  if (!s.hostCode)
    return kSuccess;
  void *entry = dlsym(s.hostCode, (fn->name + "_cpu").c_str());
  if (!entry)
    entry = dlsym(s.hostCode, fn->name.c_str());
  if (!entry)
    return kNotFound;
  auto host = reinterpret_cast<HostEntry>(entry);
  long delay = blockDelay(fn->name);
  for (unsigned z = 0; z < gz; ++z)
    for (unsigned y = 0; y < gy; ++y)
      for (unsigned x = 0; x < gx; ++x) {
        auto until = std::chrono::steady_clock::now() +
                     std::chrono::microseconds(delay);
        host(params, x, y, z);
        while (delay && std::chrono::steady_clock::now() < until) {
        }
      }
  return kSuccess;
}

CUresult cuMemAlloc_v2(uint64_t *pointer, size_t bytes) {
  if (!currentContext)
    return kInvalidContext;
  if (bytes == 0)
    return kInvalidValue;
  if (failing("cuMemAlloc_v2"))
    return kOutOfMemory;
  void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!memory)
    return kOutOfMemory;
  std::lock_guard<std::mutex> lock(state().mutex);
  state().allocations[reinterpret_cast<uintptr_t>(memory)] = bytes;
  *pointer = reinterpret_cast<uintptr_t>(memory);
  return kSuccess;
}

CUresult cuMemFree_v2(uint64_t pointer) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().allocations.erase(pointer))
    return kInvalidValue;
  std::free(reinterpret_cast<void *>(pointer));
  return kSuccess;
}

#ifndef DYNCC_FAKE_CUDA_MINIMAL
CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned flags) {
  (void)flags;
  if (!currentContext)
    return kInvalidContext;
  if (bytes == 0)
    return kInvalidValue;
  if (failing("cuMemHostAlloc"))
    return kOutOfMemory;
  void *memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!memory)
    return kOutOfMemory;
  std::lock_guard<std::mutex> lock(state().mutex);
  state().pinned[reinterpret_cast<uintptr_t>(memory)] = bytes;
  ++state().pinnedAllocations;
  *pointer = memory;
  return kSuccess;
}

CUresult cuMemFreeHost(void *pointer) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().pinned.erase(reinterpret_cast<uintptr_t>(pointer)))
    return kInvalidValue;
  std::free(pointer);
  return kSuccess;
}
#endif // DYNCC_FAKE_CUDA_MINIMAL

CUresult cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes,
                              void *stream) {
  (void)stream;
  if (failing("cuMemcpyHtoDAsync_v2"))
    return kUnknown;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!currentContext || !inAllocation(dst, bytes) ||
      isDevicePointer(reinterpret_cast<uintptr_t>(src)))
    return kInvalidValue;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  ++state().copiesIn;
  // From page-locked memory: wholly inside one of its allocations.
  uintptr_t from = reinterpret_cast<uintptr_t>(src);
  auto pinned = state().pinned.upper_bound(from);
  if (pinned != state().pinned.begin() &&
      from + bytes <= (--pinned)->first + pinned->second)
    ++state().copiesInPinned;
  return kSuccess;
}

CUresult cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t bytes,
                              void *stream) {
  (void)stream;
  if (failing("cuMemcpyDtoHAsync_v2"))
    return kUnknown;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!currentContext || !inAllocation(src, bytes) ||
      isDevicePointer(reinterpret_cast<uintptr_t>(dst)))
    return kInvalidValue;
  std::memcpy(dst, reinterpret_cast<void *>(src), bytes);
  ++state().copiesOut;
  return kSuccess;
}

CUresult cuMemcpyDtoDAsync_v2(uint64_t dst, uint64_t src, size_t bytes,
                              void *stream) {
  if (failing("cuMemcpyDtoDAsync_v2"))
    return kUnknown;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!currentContext || !inAllocation(dst, bytes) || !inAllocation(src, bytes))
    return kInvalidValue;
  auto capture = state().captures.find(stream);
  if (capture != state().captures.end()) {
    Node node;
    node.dst = dst;
    node.src = src;
    node.bytes = bytes;
    capture->second.graph->nodes.push_back(std::move(node));
    return kSuccess;
  }
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
               bytes);
  ++state().copiesOnDevice;
  return kSuccess;
}

CUresult cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  if (!currentContext)
    return kInvalidContext;
  if (failing("cuStreamCreate"))
    return kUnknown;
  std::lock_guard<std::mutex> lock(state().mutex);
  *stream = new char(0);
  state().streams.insert(*stream);
  return kSuccess;
}

CUresult cuStreamDestroy_v2(void *stream) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().streams.erase(stream))
    return kInvalidHandle;
  delete static_cast<char *>(stream);
  return kSuccess;
}

CUresult cuStreamSynchronize(void *stream) {
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (stream && !state().streams.count(stream))
      return kInvalidHandle;
  }
  if (failing("cuStreamSynchronize"))
    return kUnknown;
  return kSuccess;
}

CUresult cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  if (failing("cuEventCreate"))
    return kUnknown;
  std::lock_guard<std::mutex> lock(state().mutex);
  auto *e = new Event();
  state().events.insert(e);
  *event = e;
  return kSuccess;
}

CUresult cuEventDestroy_v2(void *event) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().events.erase(static_cast<Event *>(event)))
    return kInvalidHandle;
  delete static_cast<Event *>(event);
  return kSuccess;
}

CUresult cuEventRecord(void *event, void *stream) {
  (void)stream;
  if (failing("cuEventRecord"))
    return kUnknown;
  auto *e = static_cast<Event *>(event);
  e->when = std::chrono::steady_clock::now();
  e->recorded = true;
  return kSuccess;
}

CUresult cuEventSynchronize(void *event) {
  if (failing("cuEventSynchronize"))
    return kUnknown;
  return static_cast<Event *>(event)->recorded ? kSuccess : kInvalidHandle;
}

CUresult cuEventElapsedTime_v2(float *milliseconds, void *start, void *end) {
  if (failing("cuEventElapsedTime_v2"))
    return kUnknown;
  auto *a = static_cast<Event *>(start);
  auto *b = static_cast<Event *>(end);
  if (!a->recorded || !b->recorded)
    return kInvalidHandle;
  *milliseconds =
      std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return kSuccess;
}

#ifndef DYNCC_FAKE_CUDA_MINIMAL
/// Frees `graph` if `live` (the captured graphs, or the instantiated ones)
/// holds it.
static CUresult destroyGraph(std::set<Graph *> &live, void *graph) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto *g = static_cast<Graph *>(graph);
  if (!live.erase(g))
    return kInvalidValue;
  delete g;
  return kSuccess;
}

CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)mode;
  if (failing("cuStreamBeginCapture_v2"))
    return kCaptureUnsupported;
  std::lock_guard<std::mutex> lock(state().mutex);
  State &s = state();
  if (!stream || !s.streams.count(stream) || s.captures.count(stream))
    return kInvalidValue;
  s.captures[stream].graph = new Graph;
  return kSuccess;
}

CUresult cuStreamEndCapture(void *stream, void **graph) {
  std::lock_guard<std::mutex> lock(state().mutex);
  State &s = state();
  auto capture = s.captures.find(stream);
  if (capture == s.captures.end())
    return kInvalidValue;
  Capture ended = capture->second;
  s.captures.erase(capture);
  if (ended.invalid) {
    delete ended.graph;
    *graph = nullptr;
    return kCaptureInvalidated;
  }
  s.graphs.insert(ended.graph);
  *graph = ended.graph;
  return kSuccess;
}

CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  (void)flags;
  if (failing("cuGraphInstantiateWithFlags"))
    return kUnknown;
  std::lock_guard<std::mutex> lock(state().mutex);
  State &s = state();
  auto *g = static_cast<Graph *>(graph);
  if (!s.graphs.count(g))
    return kInvalidValue;
  auto *copy = new Graph(*g);
  s.execs.insert(copy);
  ++s.graphsInstantiated;
  *exec = copy;
  return kSuccess;
}

CUresult cuGraphLaunch(void *exec, void *stream) {
  auto *g = static_cast<Graph *>(exec);
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (!state().execs.count(g))
      return kInvalidValue;
    ++state().graphLaunches;
  }
  for (const Node &node : g->nodes) {
    CUresult status;
    if (node.function) {
      std::vector<void *> pointers(node.params.size());
      for (size_t i = 0; i < pointers.size(); ++i)
        pointers[i] = const_cast<uint64_t *>(&node.params[i]);
      status = cuLaunchKernel(node.function, node.grid[0], node.grid[1],
                              node.grid[2], node.block[0], node.block[1],
                              node.block[2], node.shared, stream,
                              pointers.data(), nullptr);
    } else {
      status = cuMemcpyDtoDAsync_v2(node.dst, node.src, node.bytes, stream);
    }
    if (status != kSuccess)
      return status;
  }
  return kSuccess;
}

CUresult cuGraphExecDestroy(void *exec) {
  return destroyGraph(state().execs, exec);
}

CUresult cuGraphDestroy(void *graph) {
  return destroyGraph(state().graphs, graph);
}
#endif // DYNCC_FAKE_CUDA_MINIMAL

} // extern "C"
