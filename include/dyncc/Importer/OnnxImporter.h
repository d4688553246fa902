//===- OnnxImporter.h - ONNX to the dg dialect ------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Imports an ONNX model into a module holding `sym.symbol` declarations and
// one `func.func @main` of `dg` ops. Named dynamic dimensions (`dim_param`)
// become shape symbols; inputs that share a name share the symbol; anonymous
// dynamic dimensions get fresh named symbols. Intermediate result types are
// left with anonymous dimensions: declared shapes are not trusted, the
// `dyncc-infer-shapes` pass computes them.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_IMPORTER_ONNXIMPORTER_H
#define DYNCC_IMPORTER_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace dyncc {

/// The facts given for a symbol on the command line (`--dim`).
struct DimFlag {
  int64_t min = 1;
  int64_t max = 8192;
  int64_t divisor = 1;
};

/// A graph input made a compile-time constant (`--freeze-input`).
struct FrozenTensor {
  /// ONNX TensorProto data type.
  int32_t dataType = 1;
  std::vector<int64_t> shape;
  /// Little-endian, row-major contents.
  std::string bytes;
};

struct ImportOptions {
  /// `--dim NAME=...` by symbol name (the name as written in the model).
  std::map<std::string, DimFlag> dims;
  /// `--freeze-input NAME=FILE.npy`, by input name.
  std::map<std::string, FrozenTensor> frozenInputs;
  /// `--force-dynamic`: every input dimension that is not 1 becomes a
  /// symbol; with `forceDynamicAll`, size-1 dimensions too.
  bool forceDynamic = false;
  bool forceDynamicAll = false;
  /// The default range of a symbol with no `--dim`.
  int64_t defaultMin = 1;
  int64_t defaultMax = 8192;
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Notes for the user (symbols that got the default range, ...).
  std::vector<std::string> notes;
};

/// Imports the ONNX model at `path`. On failure returns nullptr and sets
/// `error` to one line naming the problem (and the node, for node errors).
mlir::FailureOr<ImportResult> importOnnxModel(mlir::MLIRContext &context,
                                              const std::string &path,
                                              const ImportOptions &options,
                                              std::string &error);

/// The ONNX op types (default domain) the importer handles, sorted.
std::vector<std::string> getSupportedOnnxOps();

/// Turns an ONNX dimension or tensor name into a symbol name usable in the
/// IR and the manifest: `[A-Za-z_][A-Za-z0-9_]*`, not a type keyword.
std::string sanitizeSymbolName(const std::string &name);

} // namespace dyncc

#endif // DYNCC_IMPORTER_ONNXIMPORTER_H
