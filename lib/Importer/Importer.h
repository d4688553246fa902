//===- Importer.h - ONNX importer internals ---------------------*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Shared by OnnxImporter.cpp (model, graph, tensors, attributes) and
// OnnxOps.cpp (one handler per ONNX op type).
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_LIB_IMPORTER_IMPORTER_H
#define DYNCC_LIB_IMPORTER_IMPORTER_H

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Importer/OnnxImporter.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>

namespace dyncc::importer {

class Importer;

/// One node being imported: its inputs, attributes and where errors go.
class NodeContext {
public:
  NodeContext(Importer &importer, const onnx::NodeProto &node,
              mlir::Location loc)
      : importer(importer), node(node), loc(loc) {}

  Importer &importer;
  const onnx::NodeProto &node;
  mlir::Location loc;

  /// Reports `message` for this node and fails.
  mlir::LogicalResult fail(const std::string &message);

  size_t numInputs() const { return node.input_size(); }
  /// Input `i`; fails if it is absent and not optional.
  mlir::FailureOr<mlir::Value> input(int i);
  /// Input `i`, or null when absent or named "".
  mlir::Value optionalInput(int i);
  /// The integer contents of constant input `i` (initializer, Constant node
  /// or frozen input); fails naming what is not constant.
  mlir::FailureOr<llvm::SmallVector<int64_t>> constantInts(int i,
                                                           llvm::StringRef what);
  bool hasInput(int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }

  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> intAttr(llvm::StringRef name, int64_t dflt);
  mlir::FailureOr<float> floatAttr(llvm::StringRef name, float dflt);
  mlir::FailureOr<std::string> stringAttr(llvm::StringRef name,
                                          llvm::StringRef dflt);
  /// Fails if the attribute is present with another type; nullopt if absent.
  mlir::FailureOr<std::optional<llvm::SmallVector<int64_t>>>
  intsAttr(llvm::StringRef name);

  /// Fails unless the node has between `min` and `max` inputs and exactly
  /// `outputs` outputs that are used (extra optional outputs must be unused).
  mlir::LogicalResult expectArity(int min, int max, int outputs = 1);

  /// Binds output `i` to `value`.
  void setOutput(int i, mlir::Value value);

  /// An unranked tensor of `elementType` (shape propagation ranks it).
  mlir::Type resultType(mlir::Type elementType);
  mlir::Type elementTypeOf(mlir::Value v);

  int64_t opset() const;
  mlir::OpBuilder &builder();
  /// A scalar or 1-D i64 constant.
  mlir::Value i64Constant(llvm::ArrayRef<int64_t> values, bool scalar = false);
  /// A scalar constant of `elementType` holding `value`.
  mlir::Value scalarConstant(mlir::Type elementType, double value);
};

using OpHandler = std::function<mlir::LogicalResult(NodeContext &)>;

/// The handlers by ONNX op type (OnnxOps.cpp).
const std::map<std::string, OpHandler> &getOpHandlers();

class Importer {
public:
  Importer(mlir::MLIRContext &context, const std::string &path,
           const ImportOptions &options, std::string &error)
      : context(context), builder(&context), path(path), options(options),
        error(error) {}

  mlir::FailureOr<ImportResult> run();

  /// Maps ONNX element types to MLIR ones; fails naming `what`.
  mlir::FailureOr<mlir::Type> importElementType(int32_t dataType,
                                                const std::string &what);
  /// Makes a dg.constant from a tensor (resource-backed when large). With
  /// `takeData`, a large `raw_data` is moved into the resource blob instead
  /// of copied (the tensor is imported once).
  mlir::FailureOr<mlir::Value> importTensor(onnx::TensorProto &tensor,
                                            mlir::Location loc,
                                            bool takeData = false);
  mlir::FailureOr<mlir::Value> lookup(const std::string &name,
                                      const onnx::NodeProto *node);
  /// Integer contents of a constant tensor by value name.
  std::optional<llvm::SmallVector<int64_t>> constantInts(const std::string &name);

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  const std::string &path;
  const ImportOptions &options;
  std::string &error;
  int64_t opsetVersion = 0;
  std::map<std::string, mlir::Value> values;
  /// Tensors known at compile time by value name: initializers (in the
  /// model), Constant node outputs and frozen inputs (in `ownedConstants`).
  std::map<std::string, onnx::TensorProto *> constants;
  std::deque<onnx::TensorProto> ownedConstants;
  /// Every value name some node or the graph output reads.
  std::set<std::string> usedNames;

private:
  struct SymbolInfo {
    int64_t min, max, divisor;
    /// The range came from --dim (not the default).
    bool fromFlag = false;
  };

  mlir::FailureOr<ImportResult> fail(const std::string &message);
  std::string getSymbol(const std::string &param, const std::string &inputName,
                        int dim, bool mayBeZero = false);
  mlir::FailureOr<mlir::Type> importInputType(const onnx::ValueInfoProto &input);
  mlir::LogicalResult sortNodes(
      llvm::SmallVectorImpl<const onnx::NodeProto *> &order);
  mlir::LogicalResult importNode(const onnx::NodeProto &node);

  /// The raw_data bytes of `tensor`: in the mapped file when detached from
  /// the protobuf (OnnxWire.h), else the message's own; nullopt when the
  /// tensor stores its values in typed fields.
  std::optional<llvm::ArrayRef<char>>
  rawData(const onnx::TensorProto &tensor) const;

  onnx::ModelProto model;
  /// The model file, mapped. Detached initializer data points into it, and
  /// the resource blobs made from that data keep it alive.
  std::shared_ptr<llvm::MemoryBuffer> file;
  llvm::DenseMap<const onnx::TensorProto *, llvm::ArrayRef<char>> detached;
  ImportResult result;
  mlir::Block *entry = nullptr;
  std::map<std::string, SymbolInfo> symbols;
  std::vector<std::string> symbolOrder;
  unsigned resourceCount = 0;
};

/// The MLIR element type of an ONNX data type, or null.
mlir::Type getElementType(mlir::MLIRContext *context, int32_t dataType);

} // namespace dyncc::importer

#endif // DYNCC_LIB_IMPORTER_IMPORTER_H
