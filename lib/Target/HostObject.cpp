//===- HostObject.cpp - Host CPU shared objects from LLVM dialect ---------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Target/HostObject.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>

using namespace mlir;
using namespace dyncc;

std::string dyncc::getHostEntryName(StringRef kernel) {
  return (kernel + "_cpu").str();
}

/// Adds `void K_cpu(ptr params, i64 bx, i64 by, i64 bz)` that loads every
/// parameter of K from params[i] and calls K with the block ids appended.
static bool addEntryPoint(llvm::Module &module, StringRef name,
                          std::string &error) {
  llvm::Function *kernel = module.getFunction(name);
  if (!kernel || kernel->arg_size() < 3) {
    error = "kernel '" + name.str() + "' is missing from the host module";
    return false;
  }
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptrTy = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  auto *entryTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                          {ptrTy, i64, i64, i64}, false);
  auto *entry = llvm::Function::Create(entryTy, llvm::Function::ExternalLinkage,
                                       getHostEntryName(name), module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  SmallVector<llvm::Value *> args;
  unsigned numParams = kernel->arg_size() - 3;
  for (unsigned i = 0; i < numParams; ++i) {
    llvm::Value *slot = b.CreateLoad(
        ptrTy, b.CreateConstInBoundsGEP1_64(ptrTy, entry->getArg(0), i));
    args.push_back(b.CreateLoad(kernel->getArg(i)->getType(), slot));
  }
  for (unsigned i = 1; i <= 3; ++i)
    args.push_back(entry->getArg(i));
  b.CreateCall(kernel, args);
  b.CreateRetVoid();
  kernel->setLinkage(llvm::GlobalValue::InternalLinkage);
  return true;
}

/// True if any instruction of `module` produces or takes a bf16 value.
static bool usesBFloat16(const llvm::Module &module) {
  auto isBf16 = [](llvm::Type *type) {
    return type->getScalarType()->isBFloatTy();
  };
  for (const llvm::Function &function : module)
    for (const llvm::Instruction &inst : llvm::instructions(function)) {
      if (isBf16(inst.getType()))
        return true;
      for (const llvm::Value *operand : inst.operands())
        if (isBf16(operand->getType()))
          return true;
    }
  return false;
}

/// Defines `__truncsfbf2` (f32 to bf16, rounding to nearest even, NaN kept a
/// quiet NaN) as a hidden function of the host object. x86-64 has no bf16
/// registers before AVX512-BF16: LLVM carries a bf16 value it moves (a
/// vector through a branch) as an f32 and narrows it back with this
/// compiler-rt call, but host kernels may depend on libc and libm only.
static void addBFloat16Truncation(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *type = llvm::FunctionType::get(llvm::Type::getBFloatTy(ctx),
                                       {llvm::Type::getFloatTy(ctx)}, false);
  auto *function = llvm::Function::Create(
      type, llvm::Function::ExternalLinkage, "__truncsfbf2", module);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", function));
  llvm::Type *i32 = b.getInt32Ty();
  llvm::Value *x = function->getArg(0);
  llvm::Value *bits = b.CreateBitCast(x, i32);
  // bits + 0x7fff + (bit 16 of bits), upper half: nearest, ties to even.
  llvm::Value *odd = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(odd, b.getInt32(0x7fff))), 16);
  llvm::Value *quiet = b.CreateOr(b.CreateLShr(bits, 16), 0x40);
  llvm::Value *isNan = b.CreateFCmpUNO(x, x);
  llvm::Value *half =
      b.CreateTrunc(b.CreateSelect(isNan, quiet, rounded), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(half, llvm::Type::getBFloatTy(ctx)));
}

static std::string findLinker() {
  for (const char *name : {"ld.lld-22", "ld.lld"}) {
    auto path = llvm::sys::findProgramByName(
        name, {DYNCC_LLVM_TOOLS_DIR, "/usr/lib/llvm-22/bin"});
    if (path)
      return *path;
    path = llvm::sys::findProgramByName(name);
    if (path)
      return *path;
  }
  return "";
}

/// The most partitions the host module is split into, each optimized and
/// compiled to an object on a thread of its own, then linked into one
/// shared object; and the kernels a partition takes at least (a small
/// module compiles faster whole than split: each partition pays for a
/// pipeline, a target machine and an object). Counts from the module, not
/// the compiling machine's cores, so that the object is the same wherever
/// it is compiled (threads: at most the partitions, and the cores).
constexpr unsigned kHostPartitions = 4;
constexpr size_t kKernelsPerPartition = 8;

std::string dyncc::getPortableHostIsa() {
  return llvm::Triple(llvm::sys::getDefaultTargetTriple()).isX86() ? "x86-64-v2"
                                                                   : "generic";
}

/// The host's target machine for instruction-set level `isa` (an LLVM CPU
/// name: "x86-64-v2" is the portable SSE4.2 baseline, so the artifact runs
/// on any machine that can run the run-time, not only the one that
/// compiled it).
static std::unique_ptr<llvm::TargetMachine>
createHostMachine(StringRef isa, std::string &error) {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string lookupError;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!target) {
    error = "no LLVM target for " + triple.str() + ": " + lookupError;
    return nullptr;
  }
  llvm::TargetOptions targetOptions;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, isa, "", targetOptions, llvm::Reloc::PIC_));
}

/// Optimizes `module` (O3) for `isa` and writes its object code to `path`.
static bool emitObject(llvm::Module &module, StringRef isa, StringRef path,
                       std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine = createHostMachine(isa, error);
  if (!machine)
    return false;
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(machine->getTargetTriple());
  if (llvm::Error e =
          makeOptimizingTransformer(3, 0, machine.get())(&module)) {
    error = "LLVM optimization failed: " + llvm::toString(std::move(e));
    return false;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the host target cannot emit object files";
    return false;
  }
  codegen.run(module);
  return true;
}

/// Links `objects` into a shared object and returns its bytes.
static std::optional<std::string>
linkSharedObject(const std::vector<SmallString<128>> &objects,
                 std::string &error) {
  SmallString<128> sharedPath;
  if (llvm::sys::fs::createTemporaryFile("dyncc-host", "so", sharedPath)) {
    error = "cannot create temporary files for the host object";
    return std::nullopt;
  }
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove(sharedPath); });
  std::string linker = findLinker();
  if (linker.empty()) {
    error = "ld.lld not found (install lld-22)";
    return std::nullopt;
  }
  std::string errorMessage;
  SmallVector<StringRef> argv{linker, "-shared", "--no-undefined-version", "-o",
                              sharedPath};
  for (const SmallString<128> &path : objects)
    argv.push_back(path);
  int rc = llvm::sys::ExecuteAndWait(linker, argv, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc != 0) {
    error = "linking the host kernels failed (" + linker + " exit " +
            std::to_string(rc) + ")" +
            (errorMessage.empty() ? "" : ": " + errorMessage);
    return std::nullopt;
  }
  auto buffer = llvm::MemoryBuffer::getFile(sharedPath);
  if (!buffer) {
    error = "cannot read the linked host kernels";
    return std::nullopt;
  }
  return (*buffer)->getBuffer().str();
}

std::optional<std::vector<std::string>> dyncc::emitHostSharedObjects(
    ModuleOp module, const std::vector<std::string> &kernels,
    const std::vector<std::string> &isas, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "dyncc_host_kernels");
  if (!llvmModule) {
    error = "could not translate the host kernels to LLVM IR";
    return std::nullopt;
  }
  for (const std::string &kernel : kernels)
    if (!addEntryPoint(*llvmModule, kernel, error))
      return std::nullopt;
  if (usesBFloat16(*llvmModule))
    addBFloat16Truncation(*llvmModule);

  // The partitions, as bitcode: each (level, partition) job reads its own
  // into a context of its own (an LLVMContext is not shared between
  // threads, and optimizing changes a module: each level starts from the
  // same IR). Kernels are independent functions, so a partition loses
  // nothing to optimize; names a partition needs from another are linked
  // by name. With one partition (small modules, and one with no kernel:
  // an Identity, whose object is empty) the module is one part.
  unsigned partitions = unsigned(std::clamp<size_t>(
      kernels.size() / kKernelsPerPartition, 1, kHostPartitions));
  std::vector<SmallVector<char, 0>> parts;
  auto keep = [&](const llvm::Module &part) {
    SmallVector<char, 0> &bitcode = parts.emplace_back();
    llvm::raw_svector_ostream os(bitcode);
    llvm::WriteBitcodeToFile(part, os);
  };
  if (partitions > 1)
    llvm::SplitModule(*llvmModule, partitions,
                      [&](std::unique_ptr<llvm::Module> part) {
                        // Partitions the hash left without a function.
                        if (llvm::any_of(*part, [](const llvm::Function &f) {
                              return !f.isDeclaration();
                            }))
                          keep(*part);
                      });
  if (parts.empty())
    keep(*llvmModule);

  size_t jobs = isas.size() * parts.size();
  std::vector<SmallString<128>> objectPaths(jobs);
  llvm::scope_exit cleanup([&] {
    for (const SmallString<128> &path : objectPaths)
      if (!path.empty())
        llvm::sys::fs::remove(path);
  });
  for (SmallString<128> &path : objectPaths)
    if (llvm::sys::fs::createTemporaryFile("dyncc-host", "o", path)) {
      error = "cannot create temporary files for the host object";
      return std::nullopt;
    }
  std::vector<std::string> errors(jobs);
  {
    llvm::DefaultThreadPool pool(llvm::optimal_concurrency(jobs));
    for (size_t job = 0; job < jobs; ++job)
      pool.async([&, job] {
        const SmallVector<char, 0> &bitcode = parts[job % parts.size()];
        llvm::LLVMContext context;
        llvm::Expected<std::unique_ptr<llvm::Module>> part =
            llvm::parseBitcodeFile(
                llvm::MemoryBufferRef(StringRef(bitcode.data(), bitcode.size()),
                                      "part"),
                context);
        if (!part) {
          errors[job] = "cannot read a host partition back: " +
                        llvm::toString(part.takeError());
          return;
        }
        emitObject(**part, isas[job / parts.size()], objectPaths[job],
                   errors[job]);
      });
    pool.wait();
  }
  for (std::string &jobError : errors)
    if (!jobError.empty()) {
      error = std::move(jobError);
      return std::nullopt;
    }

  std::vector<std::string> objects;
  for (size_t level = 0; level < isas.size(); ++level) {
    std::vector<SmallString<128>> levelObjects(
        objectPaths.begin() + level * parts.size(),
        objectPaths.begin() + (level + 1) * parts.size());
    std::optional<std::string> object = linkSharedObject(levelObjects, error);
    if (!object)
      return std::nullopt;
    objects.push_back(std::move(*object));
  }
  return objects;
}
