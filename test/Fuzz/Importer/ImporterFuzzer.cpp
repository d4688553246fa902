//===- ImporterFuzzer.cpp - Fuzz the ONNX importer and shape pipeline -----===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The input is the bytes of an ONNX model. Each run imports it as
// `dyncc compile` does (importOnnxModel, verify) and, when that succeeds,
// runs buildShapePipeline, then buildFusionPipeline, on the module, in a
// fresh MLIRContext.
//
// Besides crashes, sanitizer reports, timeouts and leaks, these are findings
// (the run aborts naming them):
//  * an import that fails with an empty error string, or one that spans
//    lines when no name in the model does;
//  * verification, the shape pipeline or the fusion pipeline failing
//    without an error diagnostic (a silent failure).
//
// The importer reads a path, so the bytes go to a memfd first. A custom
// mutator edits the parsed ModelProto (attributes, dims, op types, edges,
// initializers, opset) half of the time, byte-level mutation the other half.
//
// Environment: DYNCC_FUZZ_VERBOSE=1 prints every error and diagnostic.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "dyncc/Importer/OnnxImporter.h"
#include "dyncc/Pipelines/Pipelines.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"
#include <google/protobuf/stubs/logging.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace {

/// Process-wide state set up once in LLVMFuzzerInitialize.
struct FuzzState {
  DialectRegistry registry;
  int fd = -1;
  std::string path;
  bool verbose = false;
  std::vector<std::string> opTypes;
  /// Outcome counts, printed at exit.
  uint64_t runs = 0, imported = 0, verified = 0, shaped = 0, fused = 0;
};

FuzzState *state = nullptr;

[[noreturn]] void finding(const char *what, const std::string &detail) {
  fprintf(stderr, "==dyncc-fuzz-importer== FINDING: %s\n  %s\n", what,
          detail.c_str());
  fflush(stderr);
  abort();
}

void printStats() {
  if (state)
    fprintf(
        stderr,
        "dyncc-fuzz-importer: %llu runs, %llu imported, %llu verified, "
        "%llu through the shape pipeline, %llu through fusion\n",
        (unsigned long long)state->runs, (unsigned long long)state->imported,
        (unsigned long long)state->verified, (unsigned long long)state->shaped,
        (unsigned long long)state->fused);
}

/// True if a name in `data` (a model) holds a newline: then an error that
/// quotes it spans lines through no fault of the importer.
bool modelNamesHaveNewline(const uint8_t *data, size_t size) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, (int)size))
    return false;
  auto nl = [](const std::string &s) {
    return s.find('\n') != std::string::npos ||
           s.find('\r') != std::string::npos;
  };
  const onnx::GraphProto &g = model.graph();
  if (nl(g.name()) || nl(model.domain()))
    return true;
  auto valueInfos = [&](const auto &list) {
    for (const onnx::ValueInfoProto &v : list) {
      if (nl(v.name()))
        return true;
      for (const auto &d : v.type().tensor_type().shape().dim())
        if (nl(d.dim_param()))
          return true;
    }
    return false;
  };
  if (valueInfos(g.input()) || valueInfos(g.output()))
    return true;
  for (const onnx::TensorProto &t : g.initializer())
    if (nl(t.name()))
      return true;
  for (const onnx::NodeProto &n : g.node()) {
    if (nl(n.name()) || nl(n.op_type()) || nl(n.domain()))
      return true;
    for (const std::string &s : n.input())
      if (nl(s))
        return true;
    for (const std::string &s : n.output())
      if (nl(s))
        return true;
    for (const onnx::AttributeProto &a : n.attribute())
      if (nl(a.name()) || nl(a.s()) || nl(a.t().name()))
        return true;
  }
  for (const auto &o : model.opset_import())
    if (nl(o.domain()))
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Structure-aware mutation
//===----------------------------------------------------------------------===//

using Rng = std::minstd_rand;

size_t pick(Rng &rng, size_t n) { return n ? rng() % n : 0; }

int64_t interestingInt(Rng &rng) {
  static const int64_t values[] = {0,
                                   1,
                                   -1,
                                   2,
                                   -2,
                                   3,
                                   4,
                                   7,
                                   8,
                                   16,
                                   64,
                                   255,
                                   65536,
                                   INT32_MAX,
                                   INT32_MIN,
                                   (int64_t)1 << 32,
                                   INT64_MAX,
                                   INT64_MIN,
                                   INT64_MAX / 2,
                                   INT64_MIN + 1};
  if (rng() % 3 == 0)
    return (int64_t)pick(rng, 17) - 8; // Axes and small sizes.
  return values[pick(rng, sizeof(values) / sizeof(values[0]))];
}

float interestingFloat(Rng &rng) {
  static const float values[] = {0.0f,   -0.0f,    1.0f,      -1.0f,
                                 0.5f,   2.0f,     1e-12f,    1e30f,
                                 -1e30f, INFINITY, -INFINITY, NAN};
  return values[pick(rng, sizeof(values) / sizeof(values[0]))];
}

const char *attrNames[] = {"axis",
                           "axes",
                           "perm",
                           "keepdims",
                           "transA",
                           "transB",
                           "alpha",
                           "beta",
                           "kernel_shape",
                           "pads",
                           "strides",
                           "dilations",
                           "group",
                           "auto_pad",
                           "to",
                           "mode",
                           "upper",
                           "blocksize",
                           "ceil_mode",
                           "count_include_pad",
                           "exclusive",
                           "reverse",
                           "epsilon",
                           "allowzero",
                           "noop_with_empty_axes",
                           "split",
                           "value",
                           "coordinate_transformation_mode",
                           "nearest_mode",
                           "scales",
                           "sizes",
                           "min",
                           "max",
                           "stash_type",
                           "num_outputs"};

const char *attrStrings[] = {
    "NOTSET",     "SAME_UPPER",    "SAME_LOWER", "VALID", "nearest",
    "linear",     "cubic",         "DCR",        "CRD",   "asymmetric",
    "half_pixel", "align_corners", "floor",      "",      "constant",
    "reflect",    "edge"};

void mutateTensor(onnx::TensorProto &t, Rng &rng) {
  switch (rng() % 5) {
  case 0:
    if (t.dims_size())
      t.set_dims(pick(rng, t.dims_size()), interestingInt(rng));
    else
      t.add_dims(interestingInt(rng));
    break;
  case 1:
    if (t.dims_size() && rng() % 2)
      t.mutable_dims()->RemoveLast();
    else
      t.add_dims(1 + pick(rng, 4));
    break;
  case 2: {
    static const int types[] = {1, 2, 3, 5, 6, 7, 9, 10, 11, 16, 8, 0, 100};
    t.set_data_type(types[pick(rng, sizeof(types) / sizeof(types[0]))]);
    break;
  }
  case 3:
    if (t.int64_data_size())
      t.set_int64_data(pick(rng, t.int64_data_size()), interestingInt(rng));
    else if (t.has_raw_data() && t.raw_data().size() >= 8) {
      int64_t v = interestingInt(rng);
      size_t at = pick(rng, t.raw_data().size() / 8) * 8;
      std::memcpy(&(*t.mutable_raw_data())[at], &v, 8);
    } else
      t.add_int64_data(interestingInt(rng));
    break;
  default:
    if (t.has_raw_data() && !t.raw_data().empty() && rng() % 2)
      t.mutable_raw_data()->resize(pick(rng, t.raw_data().size()));
    else
      t.add_float_data(interestingFloat(rng));
    break;
  }
}

void mutateAttribute(onnx::AttributeProto &a, Rng &rng) {
  if (rng() % 8 == 0) {
    // Change the type tag, keeping the payload: type confusion.
    a.set_type((onnx::AttributeProto::AttributeType)(1 + pick(rng, 8)));
    return;
  }
  switch (a.type()) {
  case onnx::AttributeProto::INT:
    a.set_i(interestingInt(rng));
    break;
  case onnx::AttributeProto::FLOAT:
    a.set_f(interestingFloat(rng));
    break;
  case onnx::AttributeProto::STRING:
    a.set_s(attrStrings[pick(rng, sizeof(attrStrings) / sizeof(char *))]);
    break;
  case onnx::AttributeProto::TENSOR:
    mutateTensor(*a.mutable_t(), rng);
    break;
  case onnx::AttributeProto::FLOATS:
    if (a.floats_size() && rng() % 2)
      a.set_floats(pick(rng, a.floats_size()), interestingFloat(rng));
    else
      a.add_floats(interestingFloat(rng));
    break;
  default: // INTS and anything else.
    a.set_type(onnx::AttributeProto::INTS);
    switch (rng() % 3) {
    case 0:
      if (a.ints_size()) {
        a.set_ints(pick(rng, a.ints_size()), interestingInt(rng));
        break;
      }
      [[fallthrough]];
    case 1:
      a.add_ints(interestingInt(rng));
      break;
    default:
      if (a.ints_size())
        a.mutable_ints()->RemoveLast();
      break;
    }
  }
}

/// Every value name a node may read: graph inputs, initializers, outputs.
std::vector<std::string> valueNames(const onnx::GraphProto &g) {
  std::vector<std::string> names;
  for (const auto &v : g.input())
    names.push_back(v.name());
  for (const auto &t : g.initializer())
    names.push_back(t.name());
  for (const auto &n : g.node())
    for (const std::string &o : n.output())
      names.push_back(o);
  return names;
}

void mutateModel(onnx::ModelProto &model, Rng &rng) {
  onnx::GraphProto &g = *model.mutable_graph();
  std::vector<std::string> names = valueNames(g);
  auto anyName = [&]() -> std::string {
    if (names.empty() || rng() % 16 == 0)
      return rng() % 2 ? "" : "fuzz_value";
    return names[pick(rng, names.size())];
  };
  onnx::NodeProto *node =
      g.node_size() ? g.mutable_node(pick(rng, g.node_size())) : nullptr;
  switch (rng() % 12) {
  case 0: // An attribute's value.
  case 1:
    if (node && node->attribute_size()) {
      mutateAttribute(
          *node->mutable_attribute(pick(rng, node->attribute_size())), rng);
      break;
    }
    [[fallthrough]];
  case 2: // A new attribute, or one removed.
    if (node) {
      if (node->attribute_size() && rng() % 3 == 0) {
        node->mutable_attribute()->DeleteSubrange(
            pick(rng, node->attribute_size()), 1);
        break;
      }
      onnx::AttributeProto *a = node->add_attribute();
      a->set_name(attrNames[pick(rng, sizeof(attrNames) / sizeof(char *))]);
      a->set_type(rng() % 2 ? onnx::AttributeProto::INT
                            : onnx::AttributeProto::INTS);
      mutateAttribute(*a, rng);
    }
    break;
  case 3: // Another op type.
    if (node && !state->opTypes.empty())
      node->set_op_type(state->opTypes[pick(rng, state->opTypes.size())]);
    break;
  case 4: // Rewire, add or drop an input.
    if (node) {
      if (node->input_size() && rng() % 3)
        node->set_input(pick(rng, node->input_size()), anyName());
      else if (rng() % 2)
        node->add_input(anyName());
      else if (node->input_size())
        node->mutable_input()->RemoveLast();
    }
    break;
  case 5: // Add, drop or rename an output.
    if (node) {
      if (node->output_size() && rng() % 2)
        node->set_output(pick(rng, node->output_size()), anyName());
      else if (rng() % 2)
        node->add_output("fuzz_out" + std::to_string(pick(rng, 4)));
      else if (node->output_size())
        node->mutable_output()->RemoveLast();
    }
    break;
  case 6: // A graph input's shape or element type.
  case 7:
    if (g.input_size()) {
      auto *t = g.mutable_input(pick(rng, g.input_size()))
                    ->mutable_type()
                    ->mutable_tensor_type();
      auto *shape = t->mutable_shape();
      switch (rng() % 5) {
      case 0:
        t->set_elem_type(1 + pick(rng, 16));
        break;
      case 1:
        if (shape->dim_size() && rng() % 2)
          shape->mutable_dim()->RemoveLast();
        else
          shape->add_dim()->set_dim_value(1 + pick(rng, 8));
        break;
      case 2:
        if (shape->dim_size()) {
          static const char *params[] = {"B",   "S",  "N", "batch", "x",
                                         "f32", "0d", "",  "unk__1"};
          shape->mutable_dim(pick(rng, shape->dim_size()))
              ->set_dim_param(params[pick(rng, 9)]);
        }
        break;
      case 3:
        if (shape->dim_size())
          shape->mutable_dim(pick(rng, shape->dim_size()))->clear_value();
        break;
      default:
        if (shape->dim_size())
          shape->mutable_dim(pick(rng, shape->dim_size()))
              ->set_dim_value(interestingInt(rng));
        break;
      }
    }
    break;
  case 8: // An initializer.
    if (g.initializer_size()) {
      mutateTensor(*g.mutable_initializer(pick(rng, g.initializer_size())),
                   rng);
      break;
    }
    [[fallthrough]];
  case 9: // The opset.
    if (model.opset_import_size())
      model.mutable_opset_import(0)->set_version(1 + pick(rng, 22));
    else
      model.add_opset_import()->set_version(1 + pick(rng, 22));
    break;
  case 10: // Graph outputs.
    if (g.output_size() && rng() % 2)
      g.mutable_output(pick(rng, g.output_size()))->set_name(anyName());
    else if (rng() % 2)
      g.add_output()->set_name(anyName());
    else if (g.output_size())
      g.mutable_output()->RemoveLast();
    break;
  default: // Node order, or a node duplicated or dropped.
    if (g.node_size() >= 2) {
      int i = pick(rng, g.node_size()), j = pick(rng, g.node_size());
      switch (rng() % 3) {
      case 0:
        g.mutable_node()->SwapElements(i, j);
        break;
      case 1:
        *g.add_node() = g.node(i);
        break;
      default:
        g.mutable_node()->DeleteSubrange(i, 1);
        break;
      }
    }
    break;
  }
}

} // namespace

/// LLVM's BumpPtrAllocator and Recycler poison their slabs from inline
/// header code when the including file is built with ASan: a slab that
/// instrumented dyncc code starts and uninstrumented libMLIR.so then
/// allocates from reads as use-after-poison. Manual poisoning is off.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

/// Any undefined behaviour ends the run; the checks are compiled
/// recoverable only so that UBSAN_OPTIONS=suppressions=FILE can set known,
/// reported findings aside while fuzzing on (see README.md).
extern "C" const char *__ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1";
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  Rng rng(seed);
  if (rng() % 2)
    return LLVMFuzzerMutate(data, size, maxSize);
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, (int)size) || !model.has_graph())
    return LLVMFuzzerMutate(data, size, maxSize);
  for (int i = 0, n = 1 + rng() % 3; i < n; ++i)
    mutateModel(model, rng);
  std::string out;
  if (!model.SerializeToString(&out) || out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  state = new FuzzState;
  state->verbose = getenv("DYNCC_FUZZ_VERBOSE") &&
                   std::string(getenv("DYNCC_FUZZ_VERBOSE")) == "1";
  // What the importer and the shape pipeline load; the pass manager loads
  // the passes' dependent dialects itself. Not registerAllDialects: a
  // registry of every upstream dialect costs each run's context.
  state->registry.insert<func::FuncDialect, dyncc::dg::DgDialect,
                         dyncc::sym::SymDialect>();
  state->opTypes = dyncc::getSupportedOnnxOps();
  // Protobuf's errors and warnings say nothing the importer does not report
  // (parse failures); a FATAL one is a failed CHECK that aborts next, and
  // is printed so that the crash says which.
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel level,
                                     const char *file, int line,
                                     const std::string &message) {
    if (level == google::protobuf::LOGLEVEL_FATAL)
      fprintf(stderr, "==dyncc-fuzz-importer== protobuf FATAL %s:%d: %s\n",
              file, line, message.c_str());
  });

  state->fd = memfd_create("dyncc-fuzz-importer.onnx", MFD_CLOEXEC);
  if (state->fd < 0) {
    char name[] = "/tmp/dyncc-fuzz-importer-XXXXXX";
    state->fd = mkstemp(name);
    if (state->fd < 0) {
      perror("dyncc-fuzz-importer: mkstemp");
      exit(1);
    }
    unlink(name);
  }
  state->path = "/proc/self/fd/" + std::to_string(state->fd);
  atexit(printStats);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (size_t)INT32_MAX)
    return -1;
  ++state->runs;
  if (ftruncate(state->fd, 0) != 0 ||
      pwrite(state->fd, data, size, 0) != (ssize_t)size) {
    perror("dyncc-fuzz-importer: writing the input");
    abort();
  }

  MLIRContext context(state->registry, MLIRContext::Threading::DISABLED);
  std::string firstError;
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      if (errors++ == 0)
        firstError = diag.str();
    }
    if (state->verbose)
      llvm::errs() << "diagnostic: " << diag << "\n";
    return success();
  });

  std::string error;
  FailureOr<dyncc::ImportResult> imported = dyncc::importOnnxModel(
      context, state->path, dyncc::ImportOptions(), error);
  if (state->verbose)
    fprintf(stderr, "import: %s\n",
            failed(imported) ? error.c_str() : "succeeded");
  if (failed(imported)) {
    if (error.empty())
      finding("the import failed with an empty error", "");
    if (error.find('\n') != std::string::npos &&
        !modelNamesHaveNewline(data, size))
      finding("the import error spans lines", error);
    return 0;
  }
  ++state->imported;
  OwningOpRef<ModuleOp> module = std::move(imported->module);
  if (!module)
    finding("the import succeeded without a module", "");

  if (failed(verify(*module))) {
    if (errors == 0)
      finding("the imported module fails verification without a diagnostic",
              "");
    return 0;
  }
  ++state->verified;

  // Runs one compile stage's pipeline; false where it failed (with a
  // diagnostic, else that is a finding).
  auto runStage = [&](llvm::function_ref<LogicalResult(OpPassManager &)> build,
                      const char *stage, uint64_t &passed) {
    PassManager pm(&context);
    if (failed(build(pm)))
      finding("building a pipeline failed", stage);
    unsigned before = errors;
    if (failed(pm.run(*module))) {
      if (errors == before)
        finding("a pipeline failed without an error diagnostic", stage);
      return false;
    }
    ++passed;
    return true;
  };
  // Then graph optimizations and fusion, which read the model's constants
  // too (a BatchNormalization folded into a Conv reads its statistics).
  if (runStage(dyncc::buildShapePipeline, "shape pipeline", state->shaped))
    runStage([](OpPassManager &pm) { return dyncc::buildFusionPipeline(pm); },
             "fusion pipeline", state->fused);
  return 0;
}
