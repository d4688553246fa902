//===- OnnxImporter.cpp - ONNX to the dg dialect --------------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The model-level part of the importer: the protobuf, the graph inputs and
// their symbols, initializers and other compile-time tensors, the
// topological order, and the helpers op handlers use (OnnxOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "dyncc/Importer/OnnxWire.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cctype>
#include <cmath>
#include <deque>

using namespace mlir;
using namespace dyncc;
using namespace dyncc::importer;

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
  auto allDigits = [](const std::string &s, size_t from) {
    return s.size() > from &&
           std::all_of(s.begin() + from, s.end(),
                       [](char c) { return std::isdigit((unsigned char)c); });
  };
  bool typeLike = ((out[0] == 'i' || out[0] == 'f') && allDigits(out, 1)) ||
                  ((out.rfind("si", 0) == 0 || out.rfind("ui", 0) == 0) &&
                   allDigits(out, 2));
  if (reserved.count(out) || typeLike)
    out = "s_" + out;
  return out;
}

Type importer::getElementType(MLIRContext *context, int32_t dataType) {
  Builder b(context);
  auto unsignedInt = [&](unsigned width) {
    return IntegerType::get(context, width, IntegerType::Unsigned);
  };
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::UINT8:
    return unsignedInt(8);
  case onnx::TensorProto::UINT16:
    return unsignedInt(16);
  case onnx::TensorProto::UINT32:
    return unsignedInt(32);
  case onnx::TensorProto::UINT64:
    return unsignedInt(64);
  default:
    return Type();
  }
}

FailureOr<Type> Importer::importElementType(int32_t dataType,
                                            const std::string &what) {
  if (Type t = getElementType(&context, dataType))
    return t;
  std::string name = onnx::TensorProto::DataType_IsValid(dataType)
                         ? onnx::TensorProto::DataType_Name(
                               static_cast<onnx::TensorProto::DataType>(dataType))
                         : "#" + std::to_string(dataType);
  if (dataType == onnx::TensorProto::STRING)
    error = what + " is a STRING tensor: strings are out of scope";
  else
    error = what + " has unsupported element type " + name;
  return failure();
}

FailureOr<ImportResult> Importer::fail(const std::string &message) {
  error = message;
  return failure();
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

std::optional<ArrayRef<char>>
Importer::rawData(const onnx::TensorProto &tensor) const {
  auto it = detached.find(&tensor);
  if (it != detached.end())
    return it->second;
  if (tensor.has_raw_data())
    return ArrayRef<char>(tensor.raw_data().data(), tensor.raw_data().size());
  return std::nullopt;
}

/// How errors name `node`: `node 'NAME' (OpType)`, or for an unnamed node
/// `unnamed node producing 'OUTPUT' (OpType)`.
static std::string nodeLabel(const onnx::NodeProto &node) {
  std::string label =
      !node.name().empty() ? "node '" + node.name() + "'"
      : node.output_size() > 0
          ? "unnamed node producing '" + node.output(0) + "'"
          : std::string("unnamed node");
  return label + " (" + node.op_type() + ")";
}

/// The little-endian bytes of a tensor from its typed fields (the caller
/// reads raw_data in place).
static std::optional<std::string> typedBytes(const onnx::TensorProto &tensor,
                                             size_t width) {
  std::string bytes;
  auto append = [&](auto value) {
    bytes.append(reinterpret_cast<const char *>(&value), width);
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float v : tensor.float_data())
      append(v);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double v : tensor.double_data())
      append(v);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t v : tensor.int64_data())
      append(v);
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    for (uint64_t v : tensor.uint64_data())
      append(v);
    break;
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    // Narrow types live in int32_data, one element each (little-endian:
    // the low `width` bytes of the int32 are the element).
    for (int32_t v : tensor.int32_data())
      append(v);
    break;
  default:
    return std::nullopt;
  }
  return bytes;
}

FailureOr<Value> Importer::importTensor(onnx::TensorProto &tensor,
                                        Location loc, bool takeData) {
  const std::string what = "tensor '" + tensor.name() + "'";
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
    if (d < 0 || (d > 0 && count > INT64_MAX / d)) {
      error = what + " has an invalid dimension " + std::to_string(d);
      return failure();
    }
    count *= d;
  }
  auto type = RankedTensorType::get(shape, *elementType);
  size_t width = std::max<unsigned>(1, elementType->getIntOrFloatBitWidth() / 8);
  // raw_data is read in place; only the typed fields are converted.
  std::optional<std::string> converted;
  std::optional<ArrayRef<char>> raw = rawData(tensor);
  ArrayRef<char> data;
  if (raw) {
    data = *raw;
  } else if ((converted = typedBytes(tensor, width))) {
    data = ArrayRef<char>(converted->data(), converted->size());
  }
  // The byte count must not wrap: 2^62 f32 elements are 2^64 bytes, which
  // wrapped to 0 and passed an empty tensor as one of that shape.
  if (count > INT64_MAX / static_cast<int64_t>(width)) {
    error = what + " has " + std::to_string(count) + " elements of " +
            std::to_string(width) + " bytes, more than a tensor can hold";
    return failure();
  }
  if (data.size() != static_cast<size_t>(count) * width) {
    error = what + " holds " + std::to_string(data.size()) +
            " bytes of data, expected " + std::to_string(count * width);
    return failure();
  }
  ElementsAttr attr;
  if (elementType->isInteger(1)) {
    SmallVector<bool> flags;
    for (char c : data)
      flags.push_back(c != 0);
    attr = DenseElementsAttr::get(type, ArrayRef<bool>(flags));
  } else if (count <= dg::kMaxTrackedValues) {
    // Small tensors stay inline: shape arithmetic reads their contents.
    attr = DenseElementsAttr::getFromRawBuffer(type, data);
  } else {
    // Weights: one resource blob each, not a DenseElementsAttr, and no
    // copy: detached data stays in the mapped file, and otherwise the
    // protobuf's own buffer moves into the blob when it may.
    std::string name = "w" + std::to_string(resourceCount++);
    constexpr size_t alignment = 8;
    if (detached.count(&tensor)) {
      // The blob's alignment is what the address has (files put raw_data
      // anywhere); the plan copies weights into aligned artifact sections.
      size_t align = 1;
      while (align < alignment &&
             reinterpret_cast<uintptr_t>(data.data()) % (align * 2) == 0)
        align *= 2;
      AsmResourceBlob blob(data, align,
                           [file = file](void *, size_t, size_t) {},
                           /*dataIsMutable=*/false);
      attr = DenseResourceElementsAttr::get(type, name, std::move(blob));
    } else if (takeData && tensor.has_raw_data() &&
        reinterpret_cast<uintptr_t>(data.data()) % alignment == 0) {
      std::string *raw = tensor.release_raw_data();
      AsmResourceBlob blob(ArrayRef<char>(raw->data(), raw->size()), alignment,
                           [raw](void *, size_t, size_t) { delete raw; },
                           /*dataIsMutable=*/false);
      attr = DenseResourceElementsAttr::get(type, name, std::move(blob));
    } else {
      attr = DenseResourceElementsAttr::get(
          type, name, HeapAsmResourceBlob::allocateAndCopyInferAlign(data));
    }
  }
  return dg::ConstantOp::create(builder, loc, type, attr).getResult();
}

std::optional<SmallVector<int64_t>>
Importer::constantInts(const std::string &name) {
  auto it = constants.find(name);
  if (it == constants.end())
    return std::nullopt;
  const onnx::TensorProto &t = *it->second;
  int32_t dt = t.data_type();
  size_t width;
  switch (dt) {
  case onnx::TensorProto::INT64:
    width = 8;
    break;
  case onnx::TensorProto::INT32:
    width = 4;
    break;
  case onnx::TensorProto::INT16:
    width = 2;
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    width = 1;
    break;
  default:
    return std::nullopt;
  }
  std::optional<std::string> converted;
  std::optional<ArrayRef<char>> bytes = rawData(t);
  if (!bytes && (converted = typedBytes(t, width)))
    bytes = ArrayRef<char>(converted->data(), converted->size());
  if (!bytes || bytes->size() % width)
    return std::nullopt;
  SmallVector<int64_t> result;
  for (size_t i = 0; i < bytes->size(); i += width) {
    int64_t v = 0;
    std::memcpy(&v, bytes->data() + i, width);
    if (dt != onnx::TensorProto::UINT8 && width < 8 &&
        (v >> (width * 8 - 1)) & 1)
      v -= int64_t(1) << (width * 8); // Sign-extend.
    result.push_back(v);
  }
  return result;
}

FailureOr<Value> Importer::lookup(const std::string &name,
                                  const onnx::NodeProto *node) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto c = constants.find(name);
  if (c != constants.end()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(entry);
    FailureOr<Value> value =
        importTensor(*c->second, NameLoc::get(builder.getStringAttr(name)),
                     /*takeData=*/true);
    if (failed(value)) {
      if (node)
        error = nodeLabel(*node) + ": " + error;
      return failure();
    }
    values[name] = *value;
    return *value;
  }
  std::string where = node ? nodeLabel(*node) + ": " : "";
  error = where + "'" + name +
          "' is not defined by any node, graph input or initializer";
  return failure();
}

//===----------------------------------------------------------------------===//
// Graph inputs and symbols
//===----------------------------------------------------------------------===//

std::string Importer::getSymbol(const std::string &param,
                                const std::string &inputName, int dim,
                                bool mayBeZero) {
  std::string raw = param;
  if (raw.empty())
    raw = inputName + "_d" + std::to_string(dim);
  std::string name = sanitizeSymbolName(raw);
  if (!symbols.count(name)) {
    SymbolInfo info{mayBeZero ? 0 : options.defaultMin, options.defaultMax, 1};
    auto flag = options.dims.find(raw);
    if (flag == options.dims.end())
      flag = options.dims.find(name);
    if (flag != options.dims.end()) {
      info = {flag->second.min, flag->second.max, flag->second.divisor,
              /*fromFlag=*/true};
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

FailureOr<Type> Importer::importInputType(const onnx::ValueInfoProto &input) {
  const std::string what = "input '" + input.name() + "'";
  if (!input.type().has_tensor_type()) {
    error = what + " is not a tensor: sequence, map and optional inputs are "
                   "out of scope";
    return failure();
  }
  const auto &tensorType = input.type().tensor_type();
  FailureOr<Type> elementType =
      importElementType(tensorType.elem_type(), what);
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
    bool known = dim.has_dim_value() && dim.dim_value() >= 0;
    // --force-dynamic: sizes other than 1 and 0 (all, with =all) become
    // symbols; 1 carries broadcasting meaning and 0 an empty tensor.
    if (known && options.forceDynamic &&
        ((dim.dim_value() != 1 && dim.dim_value() != 0) ||
         options.forceDynamicAll))
      known = false;
    if (known) {
      sizes.push_back(dim.dim_value());
      exprs.push_back(DimExpr(dim.dim_value()));
      continue;
    }
    std::string param = dim.has_dim_param() ? dim.dim_param() : "";
    // A declared size 0 made symbolic (--force-dynamic=all) may be empty.
    bool mayBeZero = dim.has_dim_value() && dim.dim_value() == 0;
    std::string name = getSymbol(param, input.name(), (int)i, mayBeZero);
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

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

LogicalResult
Importer::sortNodes(SmallVectorImpl<const onnx::NodeProto *> &order) {
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
  // Kahn's algorithm, stable: ready nodes in their original order.
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
  for (int i = 0; i < nodes.size(); ++i)
    if (pending[i] > 0) {
      error = nodeLabel(nodes[i]) + ": the graph has a cycle through this node";
      return failure();
    }
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node) {
  std::string label = node.name();
  if (label.empty() && node.output_size() > 0)
    label = node.output(0);
  Location loc = NameLoc::get(builder.getStringAttr(label),
                              FileLineColLoc::get(&context, path, 0, 0));
  NodeContext ctx(*this, node, loc);
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return ctx.fail("unsupported op domain '" + node.domain() + "'");
  const auto &handlers = getOpHandlers();
  auto it = handlers.find(node.op_type());
  if (it == handlers.end())
    return ctx.fail("unsupported op type '" + node.op_type() + "' (opset " +
                    std::to_string(opsetVersion) + ")");
  return it->second(ctx);
}

FailureOr<ImportResult> Importer::run() {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read '" + path + "': " + buffer.getError().message());
  file = std::move(*buffer);
  // Parse the model without its large initializers' bytes, which stay in
  // the mapped file (OnnxWire.h); when the wire format does not read that
  // way, parse it whole and let protobuf say what is wrong.
  constexpr size_t kDetachBytes = 4096;
  std::optional<onnx_wire::SplitModel> split =
      onnx_wire::detachInitializerData(file->getBuffer(), kDetachBytes);
  StringRef bytes = split ? StringRef(split->model) : file->getBuffer();
  if (bytes.size() > (size_t)INT32_MAX)
    return fail("'" + path + "' is larger than 2 GB without its weights "
                "(external data is not supported)");
  if (!model.ParseFromArray(bytes.data(), (int)bytes.size()))
    return fail("'" + path + "' is not an ONNX model (protobuf parse failed)");
  if (split) {
    const auto &inits = model.graph().initializer();
    for (const onnx_wire::DetachedData &d : split->detached) {
      if (d.initializer >= (size_t)inits.size())
        return fail("'" + path + "' is not an ONNX model (initializer " +
                    std::to_string(d.initializer) + " is out of place)");
      detached[&inits[d.initializer]] =
          ArrayRef<char>(d.bytes.data(), d.bytes.size());
    }
  } else {
    file.reset(); // The protobuf holds its own copy of the weights.
  }
  if (model.ir_version() <= 0 || !model.has_graph() ||
      model.graph().node_size() == 0)
    return fail("'" + path +
                "' is not an ONNX model (no ir_version or no graph nodes)");
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      opsetVersion = opset.version();
  if (opsetVersion == 0)
    opsetVersion = 1;

  context.loadDialect<func::FuncDialect, dg::DgDialect, sym::SymDialect>();
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  result.module = ModuleOp::create(fileLoc);
  result.module->setSymNameAttr(builder.getStringAttr(sanitizeSymbolName(
      model.graph().name().empty() ? "model" : model.graph().name())));
  builder.setInsertionPointToEnd(result.module->getBody());

  onnx::GraphProto &graph = *model.mutable_graph();
  for (const auto &node : graph.node())
    for (const std::string &in : node.input())
      usedNames.insert(in);
  for (const auto &output : graph.output())
    usedNames.insert(output.name());
  for (auto &init : *graph.mutable_initializer())
    constants[init.name()] = &init;
  for (const auto &[name, frozen] : options.frozenInputs) {
    onnx::TensorProto &t = ownedConstants.emplace_back();
    t.set_name(name);
    t.set_data_type(frozen.dataType);
    for (int64_t d : frozen.shape)
      t.add_dims(d);
    t.set_raw_data(frozen.bytes);
    constants[name] = &t;
  }

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  std::set<std::string> graphInputs;
  for (const auto &input : graph.input()) {
    graphInputs.insert(input.name());
    if (constants.count(input.name()))
      continue; // An initializer listed as an input, or frozen.
    FailureOr<Type> type = importInputType(input);
    if (failed(type))
      return failure();
    argTypes.push_back(*type);
    argNames.push_back(input.name());
  }
  for (const auto &[name, frozen] : options.frozenInputs)
    if (!graphInputs.count(name))
      return fail("--freeze-input " + name + ": the model has no input '" +
                  name + "'");

  auto func = func::FuncOp::create(builder, fileLoc, "main",
                                   builder.getFunctionType(argTypes, {}));
  entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "dg.name", builder.getStringAttr(name));
    values[name] = entry->getArgument(i);
  }
  builder.setInsertionPointToEnd(entry);

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

  builder.setInsertionPointToStart(result.module->getBody());
  for (const std::string &name : symbolOrder) {
    const SymbolInfo &info = symbols[name];
    if (info.min == info.max)
      continue; // Specialized to a constant by --dim NAME=VALUE.
    auto symbol = sym::SymbolOp::create(
        builder, fileLoc, builder.getStringAttr(name),
        builder.getI64IntegerAttr(info.min),
        builder.getI64IntegerAttr(info.max),
        info.divisor > 1 ? builder.getI64IntegerAttr(info.divisor)
                         : IntegerAttr(),
        IntegerAttr(), UnitAttr());
    // Shape inference tells the user where the model fixes such a symbol.
    if (info.fromFlag)
      symbol->setAttr(sym::getDimFlagAttrName(), builder.getUnitAttr());
  }
  return std::move(result);
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

LogicalResult NodeContext::fail(const std::string &message) {
  importer.error = nodeLabel(node) + ": " + message;
  return failure();
}

FailureOr<Value> NodeContext::input(int i) {
  if (!hasInput(i)) {
    (void)fail("input #" + std::to_string(i) + " is required");
    return failure();
  }
  return importer.lookup(node.input(i), &node);
}

Value NodeContext::optionalInput(int i) {
  if (!hasInput(i))
    return Value();
  FailureOr<Value> v = importer.lookup(node.input(i), &node);
  return succeeded(v) ? *v : Value();
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(int i,
                                                          StringRef what) {
  if (!hasInput(i)) {
    (void)fail(what.str() + " (input #" + std::to_string(i) + ") is required");
    return failure();
  }
  std::optional<SmallVector<int64_t>> v = importer.constantInts(node.input(i));
  if (!v) {
    (void)fail(what.str() + " ('" + node.input(i) +
               "') must be an integer constant (an initializer, a Constant "
               "node or a --freeze-input)");
    return failure();
  }
  return *v;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

static const char *attrTypeName(int type) {
  return onnx::AttributeProto::AttributeType_IsValid(type)
             ? onnx::AttributeProto::AttributeType_Name(
                   static_cast<onnx::AttributeProto::AttributeType>(type))
                   .c_str()
             : "UNKNOWN";
}

FailureOr<int64_t> NodeContext::intAttr(StringRef name, int64_t dflt) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::INT)
    return fail("attribute '" + name.str() + "' has type " +
                attrTypeName(a->type()) + ", expected INT");
  return a->i();
}

FailureOr<float> NodeContext::floatAttr(StringRef name, float dflt) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT)
    return fail("attribute '" + name.str() + "' has type " +
                attrTypeName(a->type()) + ", expected FLOAT");
  return a->f();
}

FailureOr<std::string> NodeContext::stringAttr(StringRef name, StringRef dflt) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt.str();
  if (a->type() != onnx::AttributeProto::STRING)
    return fail("attribute '" + name.str() + "' has type " +
                attrTypeName(a->type()) + ", expected STRING");
  return a->s();
}

FailureOr<std::optional<SmallVector<int64_t>>>
NodeContext::intsAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::optional<SmallVector<int64_t>>();
  if (a->type() != onnx::AttributeProto::INTS)
    return fail("attribute '" + name.str() + "' has type " +
                attrTypeName(a->type()) + ", expected INTS");
  return std::optional<SmallVector<int64_t>>(
      SmallVector<int64_t>(a->ints().begin(), a->ints().end()));
}

LogicalResult NodeContext::expectArity(int min, int max, int outputs) {
  int inputs = node.input_size();
  while (inputs > 0 && node.input(inputs - 1).empty())
    --inputs;
  if (inputs < min || inputs > max)
    return fail("expected " +
                (min == max ? std::to_string(min)
                            : std::to_string(min) + " to " + std::to_string(max)) +
                " inputs, got " + std::to_string(inputs));
  if (node.output_size() < outputs)
    return fail("expected " + std::to_string(outputs) + " outputs, got " +
                std::to_string(node.output_size()));
  for (int i = outputs; i < node.output_size(); ++i)
    if (!node.output(i).empty() && importer.usedNames.count(node.output(i)))
      return fail("output #" + std::to_string(i) + " ('" + node.output(i) +
                  "') is not supported");
  return success();
}

void NodeContext::setOutput(int i, Value value) {
  importer.values[node.output(i)] = value;
}

Type NodeContext::resultType(Type elementType) {
  return UnrankedTensorType::get(elementType);
}

Type NodeContext::elementTypeOf(Value v) { return getElementTypeOrSelf(v); }

int64_t NodeContext::opset() const { return importer.opsetVersion; }

OpBuilder &NodeContext::builder() { return importer.builder; }

Value NodeContext::i64Constant(ArrayRef<int64_t> values, bool scalar) {
  auto type = RankedTensorType::get(
      scalar ? ArrayRef<int64_t>{} : ArrayRef<int64_t>{(int64_t)values.size()},
      builder().getI64Type());
  return dg::ConstantOp::create(builder(), loc, type,
                                DenseElementsAttr::get(type, values));
}

Value NodeContext::scalarConstant(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (auto f = dyn_cast<FloatType>(elementType))
    attr = DenseElementsAttr::get(type, builder().getFloatAttr(f, value));
  else {
    // Saturate: an attribute like Clip's max may be +inf on an int tensor.
    int64_t v = std::isnan(value)       ? 0
                : value >= 9.2e18       ? INT64_MAX
                : value <= -9.2e18      ? INT64_MIN
                                        : (int64_t)value;
    attr = DenseElementsAttr::get(type,
                                  builder().getIntegerAttr(elementType, v));
  }
  return dg::ConstantOp::create(builder(), loc, type,
                                cast<ElementsAttr>(attr));
}

std::vector<std::string> dyncc::getSupportedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto &entry : getOpHandlers())
    ops.push_back(entry.first);
  return ops;
}

FailureOr<ImportResult> dyncc::importOnnxModel(MLIRContext &context,
                                               const std::string &path,
                                               const ImportOptions &options,
                                               std::string &error) {
  return Importer(context, path, options, error).run();
}
