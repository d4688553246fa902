//===- OnnxImporter.cpp - ONNX to the dg dialect --------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Importer/OnnxImporter.h"

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include "onnx/onnx_pb.h"

#include <cctype>
#include <deque>
#include <set>

using namespace mlir;
using namespace dyncc;

std::string dyncc::sanitizeSymbolName(const std::string &name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum((unsigned char)c) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit((unsigned char)out[0]))
    out = "s_" + out;
  // The MLIR lexer reads these as types or keywords, not identifiers.
  static const std::set<std::string> reserved = {
      "index", "bf16", "f16", "f32", "f64", "f80", "f128", "tf32", "none",
      "floordiv", "ceildiv", "mod", "min", "max", "x"};
  bool intType = out.size() > 1 && (out[0] == 'i' || out[0] == 'f') &&
                 std::all_of(out.begin() + 1, out.end(),
                             [](char c) { return std::isdigit((unsigned char)c); });
  bool signedIntType =
      out.size() > 2 && (out.rfind("si", 0) == 0 || out.rfind("ui", 0) == 0) &&
      std::all_of(out.begin() + 2, out.end(),
                  [](char c) { return std::isdigit((unsigned char)c); });
  if (reserved.count(out) || intType || signedIntType)
    out = "s_" + out;
  return out;
}

namespace {

class Importer {
public:
  Importer(MLIRContext &context, const std::string &path,
           const ImportOptions &options, std::string &error)
      : context(context), builder(&context), path(path), options(options),
        error(error) {}

  FailureOr<ImportResult> run() {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return fail("cannot read '" + path + "': " + buffer.getError().message());
    if ((*buffer)->getBufferSize() > (size_t)INT32_MAX)
      return fail("'" + path + "' is larger than 2 GB (external data is not supported)");
    if (!model.ParseFromArray((*buffer)->getBufferStart(),
                              (int)(*buffer)->getBufferSize()))
      return fail("'" + path + "' is not an ONNX model (protobuf parse failed)");
    if (model.ir_version() <= 0 || !model.has_graph() ||
        model.graph().node_size() == 0)
      return fail("'" + path + "' is not an ONNX model (no ir_version or no graph nodes)");
    for (const auto &opset : model.opset_import())
      if (opset.domain().empty() || opset.domain() == "ai.onnx")
        opsetVersion = opset.version();

    context.loadDialect<func::FuncDialect, dg::DgDialect, sym::SymDialect>();
    Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
    result.module = ModuleOp::create(fileLoc);
    result.module->setSymNameAttr(builder.getStringAttr(
        sanitizeSymbolName(model.graph().name().empty() ? "model"
                                                        : model.graph().name())));
    builder.setInsertionPointToEnd(result.module->getBody());

    const onnx::GraphProto &graph = model.graph();
    for (const auto &init : graph.initializer())
      initializers[init.name()] = &init;

    // Inputs (initializers listed as inputs are constants, not inputs).
    SmallVector<Type> argTypes;
    SmallVector<std::string> argNames;
    for (const auto &input : graph.input()) {
      if (initializers.count(input.name()))
        continue;
      FailureOr<Type> type = importInputType(input);
      if (failed(type))
        return failure();
      argTypes.push_back(*type);
      argNames.push_back(input.name());
    }

    auto func = func::FuncOp::create(builder, fileLoc, "main",
                                     builder.getFunctionType(argTypes, {}));
    Block *entry = func.addEntryBlock();
    for (auto [i, name] : llvm::enumerate(argNames)) {
      func.setArgAttr(i, "dg.name", builder.getStringAttr(name));
      values[name] = entry->getArgument(i);
    }
    builder.setInsertionPointToStart(entry);

    SmallVector<const onnx::NodeProto *> order;
    if (failed(sortNodes(order)))
      return failure();
    for (const onnx::NodeProto *node : order)
      if (failed(importNode(*node)))
        return failure();

    SmallVector<Value> results;
    for (const auto &output : graph.output()) {
      FailureOr<Value> value = lookup(output.name(), nullptr);
      if (failed(value))
        return failure();
      results.push_back(*value);
    }
    func::ReturnOp::create(builder, fileLoc, results);
    func.setType(builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
    for (auto [i, output] : llvm::enumerate(graph.output()))
      func.setResultAttr(i, "dg.name", builder.getStringAttr(output.name()));

    // Symbols, in order of first appearance.
    builder.setInsertionPointToStart(result.module->getBody());
    for (const std::string &name : symbolOrder) {
      const SymbolInfo &info = symbols[name];
      if (info.min == info.max)
        continue; // Specialized to a constant by --dim NAME=VALUE.
      sym::SymbolOp::create(builder, fileLoc, name, info.min, info.max,
                            info.divisor > 1
                                ? builder.getI64IntegerAttr(info.divisor)
                                : IntegerAttr(),
                            IntegerAttr());
    }
    return std::move(result);
  }

private:
  struct SymbolInfo {
    int64_t min, max, divisor;
  };

  FailureOr<ImportResult> fail(const std::string &message) {
    error = message;
    return failure();
  }
  LogicalResult failNode(const onnx::NodeProto &node, const std::string &message) {
    std::string label =
        !node.name().empty() ? "node '" + node.name() + "'"
        : node.output_size() > 0
            ? "unnamed node producing '" + node.output(0) + "'"
            : std::string("unnamed node");
    error = label + " (" + node.op_type() + "): " + message;
    return failure();
  }

  FailureOr<Type> importElementType(int32_t dataType, const std::string &what) {
    switch (dataType) {
    case onnx::TensorProto::FLOAT:
      return Type(builder.getF32Type());
    case onnx::TensorProto::DOUBLE:
      return Type(builder.getF64Type());
    case onnx::TensorProto::FLOAT16:
      return Type(builder.getF16Type());
    case onnx::TensorProto::BFLOAT16:
      return Type(builder.getBF16Type());
    case onnx::TensorProto::INT32:
      return Type(builder.getI32Type());
    case onnx::TensorProto::INT64:
      return Type(builder.getI64Type());
    default:
      error = what + " has unsupported element type " +
              onnx::TensorProto::DataType_Name(
                  static_cast<onnx::TensorProto::DataType>(dataType));
      return failure();
    }
  }

  /// A symbol for a dynamic dimension: named after dim_param, or fresh.
  std::string getSymbol(const std::string &param, const std::string &inputName,
                        int dim) {
    std::string raw = param;
    // `unk__N`, `None`, `?` and empty are anonymous in practice, but a name
    // shared between inputs still ties them, so only the empty one is fresh.
    if (raw.empty())
      raw = inputName + "_d" + std::to_string(dim);
    std::string name = sanitizeSymbolName(raw);
    if (!symbols.count(name)) {
      SymbolInfo info{options.defaultMin, options.defaultMax, 1};
      auto flag = options.dims.find(raw);
      if (flag == options.dims.end())
        flag = options.dims.find(name);
      if (flag != options.dims.end()) {
        info = {flag->second.min, flag->second.max, flag->second.divisor};
        usedFlags.insert(flag->first);
      } else {
        result.notes.push_back("symbol '" + name + "' (input '" + inputName +
                               "' dimension " + std::to_string(dim) +
                               ") has no --dim range; using the default [" +
                               std::to_string(options.defaultMin) + ", " +
                               std::to_string(options.defaultMax) + "]");
      }
      symbols[name] = info;
      symbolOrder.push_back(name);
    }
    return name;
  }

  FailureOr<Type> importInputType(const onnx::ValueInfoProto &input) {
    const std::string what = "input '" + input.name() + "'";
    if (!input.type().has_tensor_type()) {
      error = what + " is not a tensor (sequence, map and optional inputs are not supported)";
      return failure();
    }
    const auto &tensorType = input.type().tensor_type();
    FailureOr<Type> elementType = importElementType(tensorType.elem_type(), what);
    if (failed(elementType))
      return failure();
    if (!tensorType.has_shape()) {
      error = what + " has no shape (unknown rank is not supported)";
      return failure();
    }
    SmallVector<int64_t> sizes;
    SmallVector<DimExpr> exprs;
    bool dynamic = false;
    for (auto [i, dim] : llvm::enumerate(tensorType.shape().dim())) {
      if (dim.has_dim_value() && dim.dim_value() >= 0) {
        sizes.push_back(dim.dim_value());
        exprs.push_back(DimExpr(dim.dim_value()));
        continue;
      }
      std::string param = dim.has_dim_param() ? dim.dim_param() : "";
      std::string name = getSymbol(param, input.name(), (int)i);
      const SymbolInfo &info = symbols[name];
      if (info.min == info.max) {
        // `--dim NAME=VALUE`: specialized at compile time.
        sizes.push_back(info.min);
        exprs.push_back(DimExpr(info.min));
        continue;
      }
      sizes.push_back(ShapedType::kDynamic);
      exprs.push_back(DimExpr::symbol(name));
      dynamic = true;
    }
    auto type = RankedTensorType::get(sizes, *elementType);
    if (dynamic)
      type = sym::withSymbolicShape(type, exprs);
    return Type(type);
  }

  /// Kahn's algorithm: real exports are not always topologically sorted.
  LogicalResult sortNodes(SmallVectorImpl<const onnx::NodeProto *> &order) {
    const auto &nodes = model.graph().node();
    std::map<std::string, int> producer;
    for (int i = 0; i < nodes.size(); ++i)
      for (const std::string &out : nodes[i].output())
        if (!out.empty())
          producer[out] = i;
    std::vector<int> pending(nodes.size(), 0);
    std::vector<std::vector<int>> users(nodes.size());
    for (int i = 0; i < nodes.size(); ++i)
      for (const std::string &in : nodes[i].input()) {
        auto it = producer.find(in);
        if (it != producer.end()) {
          ++pending[i];
          users[it->second].push_back(i);
        }
      }
    std::deque<int> ready;
    for (int i = 0; i < nodes.size(); ++i)
      if (pending[i] == 0)
        ready.push_back(i);
    while (!ready.empty()) {
      int i = ready.front();
      ready.pop_front();
      order.push_back(&nodes[i]);
      for (int user : users[i])
        if (--pending[user] == 0)
          ready.push_back(user);
    }
    if ((int)order.size() != nodes.size()) {
      for (int i = 0; i < nodes.size(); ++i)
        if (pending[i] > 0)
          return failNode(nodes[i], "the graph has a cycle through this node");
    }
    return success();
  }

  FailureOr<Value> importInitializer(const onnx::TensorProto &tensor) {
    const std::string what = "initializer '" + tensor.name() + "'";
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
      error = what + " uses external data, which is not supported";
      return failure();
    }
    FailureOr<Type> elementType = importElementType(tensor.data_type(), what);
    if (failed(elementType))
      return failure();
    SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
    int64_t count = 1;
    for (int64_t d : shape) {
      if (d < 0) {
        error = what + " has a negative dimension";
        return failure();
      }
      count *= d;
    }
    auto type = RankedTensorType::get(shape, *elementType);
    size_t width = (*elementType).getIntOrFloatBitWidth() / 8;
    std::string bytes;
    if (tensor.has_raw_data()) {
      bytes = tensor.raw_data();
    } else {
      auto append = [&](const auto &field, auto convert) {
        for (auto v : field) {
          auto c = convert(v);
          bytes.append(reinterpret_cast<const char *>(&c), sizeof(c));
        }
      };
      switch (tensor.data_type()) {
      case onnx::TensorProto::FLOAT:
        append(tensor.float_data(), [](float v) { return v; });
        break;
      case onnx::TensorProto::DOUBLE:
        append(tensor.double_data(), [](double v) { return v; });
        break;
      case onnx::TensorProto::INT32:
        append(tensor.int32_data(), [](int32_t v) { return v; });
        break;
      case onnx::TensorProto::INT64:
        append(tensor.int64_data(), [](int64_t v) { return v; });
        break;
      case onnx::TensorProto::FLOAT16:
      case onnx::TensorProto::BFLOAT16:
        append(tensor.int32_data(), [](int32_t v) { return (uint16_t)v; });
        break;
      default:
        break;
      }
    }
    if (bytes.size() != (size_t)count * width) {
      error = what + " holds " + std::to_string(bytes.size()) +
              " bytes of data, expected " + std::to_string(count * width);
      return failure();
    }
    auto attr = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(bytes.data(), bytes.size()));
    Location loc = NameLoc::get(builder.getStringAttr(tensor.name()));
    return dg::ConstantOp::create(builder, loc, type, attr).getResult();
  }

  FailureOr<Value> lookup(const std::string &name, const onnx::NodeProto *node) {
    auto it = values.find(name);
    if (it != values.end())
      return it->second;
    auto init = initializers.find(name);
    if (init != initializers.end()) {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(
          &result.module->lookupSymbol<func::FuncOp>("main").getBody().front());
      FailureOr<Value> value = importInitializer(*init->second);
      if (failed(value))
        return failure();
      values[name] = *value;
      return *value;
    }
    if (node)
      (void)failNode(*node, "input '" + name + "' is not defined by any node, input or initializer");
    else
      error = "graph output '" + name + "' is not defined by any node, input or initializer";
    return failure();
  }

  /// A result type with the given rank and element type and every dimension
  /// anonymous: dyncc-infer-shapes fills it in.
  Type unknownShape(int64_t rank, Type elementType) {
    return RankedTensorType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic),
                                 elementType);
  }

  LogicalResult importNode(const onnx::NodeProto &node) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return failNode(node, "unsupported op domain '" + node.domain() + "'");
    SmallVector<Value> operands;
    for (const std::string &name : node.input()) {
      if (name.empty())
        return failNode(node, "optional inputs are not supported yet");
      FailureOr<Value> value = lookup(name, &node);
      if (failed(value))
        return failure();
      operands.push_back(*value);
    }
    std::string nodeName = node.name().empty() ? node.output(0) : node.name();
    Location loc = NameLoc::get(builder.getStringAttr(nodeName),
                                FileLineColLoc::get(&context, path, 0, 0));
    auto rankOf = [](Value v) { return cast<RankedTensorType>(v.getType()).getRank(); };
    auto elementOf = [](Value v) { return getElementTypeOrSelf(v.getType()); };
    auto expectOperands = [&](int n) -> LogicalResult {
      if ((int)operands.size() != n || node.output_size() != 1)
        return failNode(node, "expected " + std::to_string(n) +
                                  " inputs and 1 output, got " +
                                  std::to_string(operands.size()) + " and " +
                                  std::to_string(node.output_size()));
      return success();
    };

    Value result;
    const std::string &type = node.op_type();
    if (type == "MatMul") {
      if (failed(expectOperands(2)))
        return failure();
      if (rankOf(operands[0]) != 2 || rankOf(operands[1]) != 2)
        return failNode(node, "only rank-2 MatMul is supported yet, got ranks " +
                                  std::to_string(rankOf(operands[0])) + " and " +
                                  std::to_string(rankOf(operands[1])));
      result = dg::MatMulOp::create(builder, loc,
                                    unknownShape(2, elementOf(operands[0])),
                                    operands[0], operands[1]);
    } else if (type == "Add") {
      if (failed(expectOperands(2)))
        return failure();
      if (elementOf(operands[0]) != elementOf(operands[1]))
        return failNode(node, "operands have different element types");
      int64_t rank = std::max(rankOf(operands[0]), rankOf(operands[1]));
      result = dg::AddOp::create(builder, loc,
                                 unknownShape(rank, elementOf(operands[0])),
                                 operands[0], operands[1]);
    } else if (type == "Relu") {
      if (failed(expectOperands(1)))
        return failure();
      result = dg::ReluOp::create(
          builder, loc,
          unknownShape(rankOf(operands[0]), elementOf(operands[0])),
          operands[0]);
    } else {
      return failNode(node, "unsupported op type '" + type + "' (opset " +
                                std::to_string(opsetVersion) + ")");
    }
    values[node.output(0)] = result;
    return success();
  }

  MLIRContext &context;
  OpBuilder builder;
  const std::string &path;
  const ImportOptions &options;
  std::string &error;

  onnx::ModelProto model;
  int64_t opsetVersion = 0;
  ImportResult result;
  std::map<std::string, const onnx::TensorProto *> initializers;
  std::map<std::string, Value> values;
  std::map<std::string, SymbolInfo> symbols;
  std::vector<std::string> symbolOrder;
  std::set<std::string> usedFlags;
};

} // namespace

FailureOr<ImportResult> dyncc::importOnnxModel(MLIRContext &context,
                                               const std::string &path,
                                               const ImportOptions &options,
                                               std::string &error) {
  return Importer(context, path, options, error).run();
}
