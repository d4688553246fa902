//===- HostPlan.cpp - Host plan and artifact manifest ---------------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Plan/HostPlan.h"

#include <set>

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "dyncc/Runtime/ArenaPlanAhead.h"
#include "dyncc/Runtime/Manifest.h"
#include "dyncc/Target/HostObject.h"
#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/SplitK.h"
#include "dyncc/Tiling/TileConfig.h"
#include "dyncc/Tiling/TileSearch.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace dyncc;
namespace json = llvm::json;

static FailureOr<std::string> getDType(Operation *where, Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF16())
    return std::string("f16");
  if (element.isBF16())
    return std::string("bf16");
  if (element.isF32())
    return std::string("f32");
  if (element.isF64())
    return std::string("f64");
  if (element.isInteger(1))
    return std::string("bool");
  if (auto integer = dyn_cast<IntegerType>(element)) {
    unsigned width = integer.getWidth();
    if (width == 8 || width == 16 || width == 32 || width == 64)
      return (integer.isUnsigned() ? "u" : "i") + std::to_string(width);
  }
  return where->emitOpError("has no artifact dtype for ") << element;
}

std::string dyncc::getHostCodeSection(const std::vector<std::string> &isas,
                                      size_t index) {
  return index == 0 ? "cpu.so" : "cpu." + isas[index] + ".so";
}

namespace {

/// One buffer of the plan.
struct Buffer {
  int64_t id;
  std::string kind; // input, weight, output, temp, workspace
  std::string dtype;
  SmallVector<DimExpr> shape;
  std::string section; // weight
  int64_t firstStep = 0, lastStep = 0; // temp: the steps it must live over
};

class PlanBuilder {
public:
  PlanBuilder(ModuleOp module, const PlanOptions &options)
      : module(module), options(options) {}

  FailureOr<HostPlan> build() {
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main)
      return module.emitError("no func.func @main to plan");
    Block &body = main.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());

    json::Array symbols, constraints, inputs, outputs;
    for (auto symbol : module.getOps<sym::SymbolOp>()) {
      json::Object s{{"name", symbol.getSymName()},
                     {"min", (int64_t)symbol.getMin()},
                     {"max", (int64_t)symbol.getMax()},
                     {"divisor", (int64_t)symbol.getDivisor().value_or(1)}};
      symbols.push_back(std::move(s));
    }
    for (auto constraint : module.getOps<sym::ConstraintOp>())
      constraints.push_back(
          json::Object{{"lhs", constraint.getLhs().getCanonical()},
                       {"rhs", constraint.getRhs().getCanonical()},
                       {"where", constraint.getReason()}});

    // Inputs.
    for (BlockArgument arg : main.getArguments()) {
      FailureOr<int64_t> id = addBuffer(main, arg, "input");
      if (failed(id))
        return failure();
      auto name =
          main.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dg.name");
      inputs.push_back(json::Object{
          {"name", name ? name.getValue().str()
                        : "input" + std::to_string(arg.getArgNumber())},
          {"dtype", buffers[*id].dtype},
          {"shape", shapeJson(buffers[*id].shape)},
          {"buffer", *id}});
    }

    // Outputs: each returned value gets an output buffer; a dispatch result
    // that is returned writes into it directly, anything else is copied.
    json::Array steps;
    DenseMap<Value, int64_t> outputOf;
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      FailureOr<int64_t> id = addBuffer(ret, value, "output");
      if (failed(id))
        return failure();
      if (value.getDefiningOp<dg::DispatchOp>() && !outputOf.count(value))
        outputOf[value] = *id;
      auto name = main.getResultAttrOfType<StringAttr>(i, "dg.name");
      outputs.push_back(json::Object{
          {"name", name ? name.getValue().str() : "output" + std::to_string(i)},
          {"dtype", buffers[*id].dtype},
          {"shape", shapeJson(buffers[*id].shape)},
          {"buffer", *id}});
    }

    // Dispatches, in order: one launch step each. A temporary lives from
    // the step that writes it to the last step that reads it; the run-time
    // places temporaries in its arena by these lifetimes once their sizes
    // are known (a placement in symbolic offsets would have to order sizes
    // that no symbol range orders, and could not reuse freed space).
    json::Array kernels, groups;
    DenseMap<Operation *, int64_t> stepOf;
    SmallVector<std::pair<Value, int64_t>> temps;
    // Symbols bound so far: the inputs' at the start, data-dependent ones
    // by their bind steps. Every step may use only these.
    for (auto symbol : module.getOps<sym::SymbolOp>())
      if (!symbol.getDataDependent())
        bound.insert(symbol.getSymName());
    if (failed(checkDataSymbols(body)))
      return failure();
    for (Operation &op : body) {
      if (auto constant = dyn_cast<dg::ConstantOp>(op)) {
        if (failed(addWeight(constant)))
          return failure();
        continue;
      }
      if (auto bind = dyn_cast<sym::BindOp>(op)) {
        stepOf[bind] = steps.size();
        if (failed(addBind(bind, steps)))
          return failure();
        continue;
      }
      auto dispatch = dyn_cast<dg::DispatchOp>(op);
      if (!dispatch)
        continue;
      if (failed(checkBound(dispatch)))
        return failure();
      for (Value result : dispatch.getResults()) {
        if (outputOf.count(result)) {
          bufferOf[result] = outputOf[result];
          continue;
        }
        FailureOr<int64_t> id = addBuffer(dispatch, result, "temp");
        if (failed(id))
          return failure();
        temps.push_back({result, *id});
      }
      stepOf[dispatch] = steps.size();
      if (failed(addDispatch(dispatch, kernels, groups, steps)))
        return failure();
    }
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      int64_t out = bufferOfOutput(i);
      if (value.getDefiningOp<dg::DispatchOp>() &&
          outputOf.lookup(value) == out)
        continue;
      auto it = bufferOf.find(value);
      if (it == bufferOf.end())
        return ret.emitOpError("output #")
               << i << " has no buffer to copy from";
      steps.push_back(
          json::Object{{"op", "copy"}, {"src", it->second}, {"dst", out}});
      // A returned temporary lives until the last copy.
      stepOf[ret] = steps.size() - 1;
    }
    for (auto [value, id] : temps) {
      Buffer &buffer = buffers[id];
      buffer.firstStep = stepOf.lookup(value.getDefiningOp());
      buffer.lastStep = buffer.firstStep;
      for (Operation *user : value.getUsers()) {
        auto it = stepOf.find(user);
        if (it == stepOf.end())
          return user->emitOpError("reads a temporary but runs no step");
        buffer.lastStep = std::max(buffer.lastStep, it->second);
      }
    }

    json::Array bufferArray;
    for (const Buffer &b : buffers) {
      json::Object o{{"id", b.id},
                     {"kind", b.kind},
                     {"dtype", b.dtype},
                     {"shape", shapeJson(b.shape)}};
      if (b.kind == "weight")
        o["section"] = b.section;
      if (b.kind == "temp" || b.kind == "workspace")
        o["live"] = json::Array{b.firstStep, b.lastStep};
      bufferArray.push_back(std::move(o));
    }
    json::Array targets;
    for (const std::string &t : options.targets)
      targets.push_back(t);

    json::Object manifest{
        {"format", runtime::kManifestFormatVersion},
        {"producer", options.producer},
        {"model", module.getSymName() ? module.getSymName()->str() : "model"},
        {"targets", std::move(targets)},
        {"symbols", std::move(symbols)},
        {"constraints", std::move(constraints)},
        {"inputs", std::move(inputs)},
        {"outputs", std::move(outputs)},
        {"buffers", std::move(bufferArray)},
        {"kernels", std::move(kernels)},
        {"groups", std::move(groups)},
        {"steps", std::move(steps)}};
    if (!options.hostIsas.empty()) {
      json::Array builds;
      for (size_t i = 0; i < options.hostIsas.size(); ++i)
        builds.push_back(
            json::Object{{"isa", options.hostIsas[i]},
                         {"section", getHostCodeSection(options.hostIsas, i)}});
      manifest["host_code"] = std::move(builds);
    }
    json::Value value(std::move(manifest));
    plan.manifest = formatJson(value);
    // The arena, planned ahead by the run-time's own planner over the
    // manifest as the run-time reads it. A manifest it cannot read gets
    // none here; the compiler reports why before it writes anything.
    runtime::Manifest parsed;
    std::string parseError;
    if (runtime::parseManifest(plan.manifest, parsed, parseError)) {
      std::vector<runtime::ArenaPlanInfo> planned =
          runtime::planArenaAhead(parsed);
      if (!planned.empty()) {
        auto ids = [&](const std::vector<size_t> &indices) {
          json::Array a;
          for (size_t b : indices)
            a.push_back(parsed.buffers[b].id);
          return a;
        };
        json::Array arena;
        for (const runtime::ArenaPlanInfo &placement : planned)
          arena.push_back(json::Object{{"empty", ids(placement.empty)},
                                       {"order", ids(placement.order)}});
        (*value.getAsObject())["arena"] = std::move(arena);
        plan.manifest = formatJson(value);
      }
    }
    return std::move(plan);
  }

private:
  /// Compact: white space would be 60% of BERT-base's manifest, which the
  /// run-time parses at every load (`--emit=plan` prints it indented).
  static std::string formatJson(const json::Value &value) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << value;
    return text;
  }
  static std::string exprJson(const DimExpr &e) { return e.str(); }
  static json::Array shapeJson(ArrayRef<DimExpr> shape) {
    json::Array a;
    for (const DimExpr &d : shape)
      a.push_back(d.str());
    return a;
  }

  static DimExpr byteSize(const Buffer &b) {
    int64_t width = 4;
    if (b.dtype == "f16" || b.dtype == "bf16" || b.dtype == "i16" ||
        b.dtype == "u16")
      width = 2;
    else if (b.dtype == "f64" || b.dtype == "i64" || b.dtype == "u64")
      width = 8;
    else if (b.dtype == "i8" || b.dtype == "u8" || b.dtype == "bool")
      width = 1;
    DimExpr size(width);
    for (const DimExpr &d : b.shape)
      size = size * d;
    return size;
  }

  int64_t bufferOfOutput(size_t index) { return outputBuffers[index]; }

  FailureOr<int64_t> addBuffer(Operation *where, Value value, StringRef kind) {
    std::optional<SmallVector<DimExpr>> shape =
        sym::getSymbolicShape(value.getType());
    if (!shape)
      return where->emitOpError("a value of type ")
             << value.getType() << " has no symbolic shape to plan";
    FailureOr<std::string> dtype = getDType(where, value.getType());
    if (failed(dtype))
      return failure();
    Buffer b;
    b.id = buffers.size();
    b.kind = kind.str();
    b.dtype = *dtype;
    b.shape = *shape;
    buffers.push_back(b);
    if (kind == "output")
      outputBuffers.push_back(b.id);
    else
      bufferOf[value] = b.id;
    return b.id;
  }

  LogicalResult addWeight(dg::ConstantOp constant) {
    FailureOr<int64_t> id = addBuffer(constant, constant.getResult(), "weight");
    if (failed(id))
      return failure();
    std::string section = "w" + std::to_string(plan.weights.size());
    std::string bytes;
    if (auto resource =
            dyn_cast<DenseResourceElementsAttr>(constant.getValue())) {
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob)
        return constant.emitOpError("weight resource '")
               << resource.getRawHandle().getKey() << "' has no data";
      ArrayRef<char> data = blob->getData();
      bytes.assign(data.data(), data.size());
      buffers[*id].section = section;
      plan.weights.push_back({section, std::move(bytes)});
      return success();
    }
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense)
      return constant.emitOpError("weights must be dense or resource elements");
    if (dense.getElementType().isInteger(1)) {
      // i1 is bit-packed in the attribute; the artifact stores a byte each.
      for (bool b : dense.getValues<bool>())
        bytes.push_back(b ? 1 : 0);
      buffers[*id].section = section;
      plan.weights.push_back({section, std::move(bytes)});
      return success();
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      int64_t count = dense.getNumElements();
      size_t width = raw.size();
      bytes.reserve(count * width);
      for (int64_t i = 0; i < count; ++i)
        bytes.append(raw.data(), width);
    } else {
      bytes.assign(raw.data(), raw.size());
    }
    buffers[*id].section = section;
    plan.weights.push_back({section, std::move(bytes)});
    return success();
  }

  /// A `bind` step: the run-time reads `values` back and binds the bare
  /// data-dependent symbols among `dims` not bound yet; every other element
  /// is checked, so its symbols must be bound already.
  LogicalResult addBind(sym::BindOp bind, json::Array &steps) {
    auto it = bufferOf.find(bind.getValues());
    if (it == bufferOf.end())
      return bind.emitOpError("reads a value that has no buffer");
    json::Array dims;
    for (const DimExpr &dim : bind.getDims().getExprs()) {
      std::optional<std::string> name = dim.getSymbol();
      if (name && !bound.contains(*name)) {
        bound.insert(*name);
      } else {
        std::vector<std::string> names;
        dim.collectSymbols(names);
        for (const std::string &n : names)
          if (!bound.contains(n))
            return bind.emitOpError("checks ")
                   << dim.str() << " before '" << n << "' is bound";
      }
      dims.push_back(dim.str());
    }
    json::Object step{{"op", "bind"},
                      {"buffer", it->second},
                      {"dims", std::move(dims)},
                      {"where", bind.getWhere()}};
    if (std::optional<sym::ShapeAttr> input = bind.getReshapeOf())
      step["reshape_of"] = shapeJson(input->getExprs());
    if (bind.getAllowzero())
      step["allowzero"] = true;
    if (bind.getBroadcast())
      step["broadcast"] = true;
    steps.push_back(std::move(step));
    return success();
  }

  /// Every data-dependent symbol is one that some bind step reads from data
  /// (dyncc-infer-shapes binds every kind of one it makes; this refuses a
  /// new kind that it does not, rather than leave the symbol unbound).
  LogicalResult checkDataSymbols(Block &body) {
    llvm::StringSet<> read;
    for (auto bind : body.getOps<sym::BindOp>())
      for (const DimExpr &dim : bind.getDims().getExprs())
        if (std::optional<std::string> name = dim.getSymbol())
          read.insert(*name);
    for (auto symbol : module.getOps<sym::SymbolOp>()) {
      if (!symbol.getDataDependent() || read.contains(symbol.getSymName()))
        continue;
      auto by = symbol->getAttrOfType<StringAttr>("defined_by");
      return symbol.emitOpError("'")
             << symbol.getSymName() << "' is a size computed from data by "
             << (by ? by.getValue() : StringRef("an op"))
             << ", which nothing computes for the run-time to bind (sizes read "
                "from a shape operand's values, NonZero's counts, Range's and "
                "Slice's lengths are)";
    }
    return success();
  }

  /// A dispatch may only use symbols bound by the time it runs: a kernel
  /// fused with the computation of the data its own sizes are read from
  /// cannot run.
  LogicalResult checkBound(dg::DispatchOp dispatch) {
    std::vector<std::string> names;
    for (Attribute symbol : dispatch.getSymbols())
      names.push_back(cast<StringAttr>(symbol).getValue().str());
    for (Type type : llvm::concat<Type>(dispatch->getOperandTypes(),
                                        dispatch->getResultTypes()))
      if (std::optional<SmallVector<DimExpr>> shape =
              sym::getSymbolicShape(type))
        for (const DimExpr &dim : *shape)
          dim.collectSymbols(names);
    for (const std::string &name : names)
      if (!bound.contains(name))
        return dispatch.emitOpError("uses '")
               << name << "' before the run-time can bind it from data";
    return success();
  }

  LogicalResult addDispatch(dg::DispatchOp dispatch, json::Array &kernels,
                            json::Array &groups, json::Array &steps) {
    auto kernel = module.lookupSymbol<func::FuncOp>(dispatch.getCallee());
    if (!kernel)
      return dispatch.emitOpError("callee not found");

    // Parameters in the kernel's argument order.
    json::Array params;
    for (Attribute symbol : dispatch.getSymbols())
      params.push_back(
          json::Object{{"expr", cast<StringAttr>(symbol).getValue()}});
    for (Value input : dispatch.getInputs()) {
      auto it = bufferOf.find(input);
      if (it == bufferOf.end())
        return dispatch.emitOpError("input has no buffer");
      params.push_back(json::Object{{"buffer", it->second}});
    }
    for (Value result : dispatch.getResults())
      params.push_back(json::Object{{"buffer", bufferOf.lookup(result)}});

    // Every variant is valid over every symbol's whole range.
    json::Array when;
    for (Attribute symbol : dispatch.getSymbols()) {
      auto op = module.lookupSymbol<sym::SymbolOp>(cast<StringAttr>(symbol));
      if (!op)
        return dispatch.emitOpError("symbol '")
               << cast<StringAttr>(symbol).getValue() << "' is not declared";
      when.push_back(json::Object{{"symbol", op.getSymName()},
                                  {"min", (int64_t)op.getMin()},
                                  {"max", (int64_t)op.getMax()}});
    }

    // The searched variants (dyncc-search-tiles), else the kernel alone.
    auto select =
        dispatch->getAttrOfType<DictionaryAttr>(getVariantSelectAttrName());
    SmallVector<func::FuncOp> variants;
    if (auto refs = select ? select.getAs<ArrayAttr>("variants") : nullptr) {
      for (Attribute ref : refs) {
        auto symbol = dyn_cast<FlatSymbolRefAttr>(ref);
        auto variant = symbol ? module.lookupSymbol<func::FuncOp>(symbol)
                              : func::FuncOp();
        if (!variant)
          return dispatch.emitOpError("variant not found: ") << ref;
        variants.push_back(variant);
      }
    } else {
      variants.push_back(kernel);
    }
    json::Array variantList;
    for (func::FuncOp variant : variants) {
      if (variant->hasAttr(getSplitKAttrName())) {
        FailureOr<json::Object> entry =
            addSplitVariant(dispatch, variant, params, kernels, steps);
        if (failed(entry))
          return failure();
        (*entry)["when"] = json::Array(when);
        variantList.push_back(std::move(*entry));
        continue;
      }
      FailureOr<int64_t> index = addKernel(dispatch, variant, params, kernels);
      if (failed(index))
        return failure();
      variantList.push_back(
          json::Object{{"kernel", *index}, {"when", json::Array(when)}});
    }

    int64_t groupIndex = groups.size();
    json::Object group{
        {"name", kernel.getSymName()},
        {"kind",
         kernel->getAttrOfType<StringAttr>("dyncc.kind")
             ? kernel->getAttrOfType<StringAttr>("dyncc.kind").getValue()
             : "elementwise"},
        {"variants", std::move(variantList)}};
    if (select) {
      FailureOr<json::Object> table = getSelection(dispatch, select);
      if (failed(table))
        return failure();
      group["select"] = std::move(*table);
    }
    // A GEMM's problem in terms of the symbols: what its variants are
    // chosen by.
    if (auto problem =
            kernel->getAttrOfType<DictionaryAttr>(getGemmProblemAttrName())) {
      json::Object resolved;
      for (StringRef key : {"batch", "m", "n", "k"}) {
        FailureOr<DimExpr> value = resolveDispatchExpr(dispatch, problem.get(key));
        if (failed(value))
          return kernel.emitOpError("has a malformed ")
                 << getGemmProblemAttrName() << " " << problem;
        resolved[key] = value->str();
      }
      for (StringRef key : {"operand_bytes", "output_bytes"}) {
        auto bytes = problem.getAs<IntegerAttr>(key);
        if (!bytes)
          return kernel.emitOpError("has a malformed ")
                 << getGemmProblemAttrName() << " " << problem;
        resolved[key] = bytes.getInt();
      }
      if (auto products = problem.getAs<IntegerAttr>("products"))
        resolved["products"] = products.getInt();
      group["problem"] = std::move(resolved);
    }
    groups.push_back(std::move(group));
    steps.push_back(json::Object{{"op", "launch"}, {"group", groupIndex}});
    return success();
  }

  /// A decision table's `inner` nodes (dyncc.variant_select's), each
  /// `lower` with `variant` (over the last key) or with `inner` (over
  /// another, nested); nullopt where one is neither.
  template <typename Ints>
  static std::optional<json::Array> getInner(Attribute value, Ints ints) {
    auto tables = dyn_cast<ArrayAttr>(value);
    if (!tables)
      return std::nullopt;
    json::Array inner;
    for (Attribute table : tables) {
      auto dict = dyn_cast<DictionaryAttr>(table);
      auto lower = dict ? dict.getAs<DenseI64ArrayAttr>("lower") : nullptr;
      if (!lower)
        return std::nullopt;
      json::Object node{{"lower", ints(lower)}};
      if (auto variant = dict.getAs<DenseI64ArrayAttr>("variant")) {
        node["variant"] = ints(variant);
      } else if (Attribute nested = dict.get("inner")) {
        std::optional<json::Array> next = getInner(nested, ints);
        if (!next)
          return std::nullopt;
        node["inner"] = std::move(*next);
      } else {
        return std::nullopt;
      }
      inner.push_back(std::move(node));
    }
    return inner;
  }

  /// The manifest's `select` of a group: its keys, table and what the
  /// search recorded (docs/ArtifactFormat.md), from `dyncc.variant_select`.
  FailureOr<json::Object> getSelection(dg::DispatchOp dispatch,
                                       DictionaryAttr select) {
    auto malformed = [&]() -> FailureOr<json::Object> {
      return dispatch.emitOpError("has a malformed ")
             << getVariantSelectAttrName() << " " << select;
    };
    json::Object out;
    if (auto reason = select.getAs<StringAttr>("reason")) {
      out["reason"] = reason.getValue();
      return out;
    }
    auto ints = [](DenseI64ArrayAttr attr) {
      json::Array values;
      for (int64_t v : attr.asArrayRef())
        values.push_back(v);
      return values;
    };
    for (NamedAttribute entry : select) {
      StringRef name = entry.getName().getValue();
      Attribute value = entry.getValue();
      if (name == "variants")
        continue;
      if (auto text = dyn_cast<StringAttr>(value)) {
        out[name] = text.getValue();
      } else if (auto integer = dyn_cast<IntegerAttr>(value)) {
        out[name] = integer.getInt();
      } else if (auto real = dyn_cast<FloatAttr>(value)) {
        out[name] = real.getValueAsDouble();
      } else if (auto array = dyn_cast<DenseI64ArrayAttr>(value)) {
        out[name] = ints(array);
      } else if (name == "keys") {
        json::Array keys;
        for (Attribute key : cast<ArrayAttr>(value)) {
          // Keys are over the symbols already; check they parse.
          std::string error;
          auto text = dyn_cast<StringAttr>(key);
          std::optional<DimExpr> expr =
              text ? DimExpr::parse(text.getValue().str(), error)
                   : std::nullopt;
          if (!expr)
            return malformed();
          keys.push_back(expr->str());
        }
        out[name] = std::move(keys);
      } else if (name == "inner") {
        std::optional<json::Array> inner = getInner(value, ints);
        if (!inner)
          return malformed();
        out[name] = std::move(*inner);
      } else {
        return malformed();
      }
    }
    return out;
  }

  /// Adds `kernel`, called by `dispatch` with `params`, to `kernels`;
  /// returns its index.
  /// A split-K variant (dyncc-split-k): its part kernel, then its sum
  /// kernel, both taking the workspace after the dispatch's parameters. The
  /// workspace is [parts, ...the result's shape] of f32, living in this
  /// step alone.
  FailureOr<json::Object> addSplitVariant(dg::DispatchOp dispatch,
                                          func::FuncOp variant,
                                          const json::Array &params,
                                          json::Array &kernels,
                                          const json::Array &steps) {
    std::optional<SplitKernels> split = getSplitKernels(variant);
    if (!split || dispatch.getResults().size() != 1)
      return variant.emitOpError("has a malformed ")
             << getSplitKAttrName() << " "
             << variant->getAttr(getSplitKAttrName());
    Buffer workspace;
    workspace.id = buffers.size();
    workspace.kind = "workspace";
    workspace.dtype = "f32";
    workspace.shape.push_back(DimExpr(split->parts));
    llvm::append_range(workspace.shape,
                       buffers[bufferOf.lookup(dispatch.getResult(0))].shape);
    workspace.firstStep = workspace.lastStep = steps.size();
    buffers.push_back(workspace);
    json::Array withWorkspace(params);
    withWorkspace.push_back(json::Object{{"buffer", workspace.id}});
    SmallVector<SmallVector<DimExpr>> extra{workspace.shape};
    FailureOr<int64_t> partIndex =
        addKernel(dispatch, split->part, withWorkspace, kernels, extra);
    if (failed(partIndex))
      return failure();
    FailureOr<int64_t> sumIndex =
        addKernel(dispatch, split->sum, withWorkspace, kernels, extra);
    if (failed(sumIndex))
      return failure();
    return json::Object{{"kernel", *partIndex},
                        {"then", json::Array{*sumIndex}}};
  }

  FailureOr<int64_t> addKernel(dg::DispatchOp dispatch, func::FuncOp kernel,
                               const json::Array &params,
                               json::Array &kernels,
                               ArrayRef<SmallVector<DimExpr>> extra = {}) {
    FailureOr<TileConfig> config = TileConfig::fromAttr(
        kernel->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName()));
    if (failed(config))
      return kernel.emitOpError("has no tile configuration");
    auto gridAttr = kernel->getAttrOfType<ArrayAttr>(getGridAttrName());
    if (!gridAttr || gridAttr.size() != 3)
      return kernel.emitOpError("has no dyncc.grid; was it tiled?");

    // The grid is in terms of the kernel's arguments (symbols, inputs,
    // destinations, in that order): substitute the dispatch's symbols and
    // operand shapes.
    auto resolveText = [&](Attribute attr) {
      return resolveDispatchExpr(dispatch, attr, extra);
    };
    json::Array grid, block;
    for (Attribute axis : gridAttr) {
      auto terms = dyn_cast<ArrayAttr>(axis);
      if (!terms || terms.empty())
        return kernel.emitOpError("has a malformed dyncc.grid ") << gridAttr;
      // The maximum of the distinct terms once in terms of the symbols.
      std::set<DimExpr> distinct;
      for (Attribute attr : terms) {
        FailureOr<DimExpr> resolved = resolveText(attr);
        if (failed(resolved))
          return kernel.emitOpError("has a malformed dyncc.grid ") << gridAttr;
        distinct.insert(*resolved);
      }
      std::optional<DimExpr> extent;
      for (const DimExpr &term : distinct)
        extent = extent ? DimExpr::max(*extent, term) : term;
      grid.push_back(extent->str());
    }
    // Block: threads along the innermost three tile dimensions, x innermost.
    for (int64_t threads : config->getBlockDims())
      block.push_back(threads);

    int64_t dynamicSharedBytes = 0;
    if (auto bytes =
            kernel->getAttrOfType<IntegerAttr>(getDynamicSharedBytesAttrName()))
      dynamicSharedBytes = bytes.getInt();

    std::string name = kernel.getSymName().str();
    json::Object gpu;
    for (const std::string &target : options.targets)
      if (target != "cpu") {
        auto ptxChip = options.ptxChips.find(target);
        json::Object code{
            {"section",
             "ptx." + (ptxChip == options.ptxChips.end() ? target
                                                         : ptxChip->second)},
            {"entry", name}};
        auto cubin = options.cubins.find(target);
        if (cubin != options.cubins.end()) {
          auto found = cubin->second.resources.find(name);
          if (found == cubin->second.resources.end())
            return kernel.emitOpError("has no ptxas report for ") << target;
          const KernelResources &r = found->second;
          code["cubin"] = cubin->second.section;
          code["resources"] =
              json::Object{{"registers", r.registers},
                           {"barriers", r.barriers},
                           {"shared_bytes", r.sharedBytes},
                           {"stack_bytes", r.stackBytes},
                           {"spill_store_bytes", r.spillStoreBytes},
                           {"spill_load_bytes", r.spillLoadBytes}};
        }
        gpu[target] = std::move(code);
      }
    json::Object k{{"name", name},
                   {"params", json::Array(params)},
                   {"grid", std::move(grid)},
                   {"linear_grid", true},
                   {"block", std::move(block)},
                   {"shared_bytes", dynamicSharedBytes},
                   {"config", config->str()}};
    if (llvm::is_contained(options.targets, "cpu"))
      k["cpu"] = json::Object{{"section", getHostCodeSection({}, 0)},
                              {"symbol", getHostEntryName(name)}};
    if (!gpu.empty())
      k["gpu"] = std::move(gpu);
    int64_t kernelIndex = kernels.size();
    kernels.push_back(std::move(k));
    return kernelIndex;
  }

  ModuleOp module;
  const PlanOptions &options;
  HostPlan plan;
  SmallVector<Buffer> buffers;
  SmallVector<int64_t> outputBuffers;
  DenseMap<Value, int64_t> bufferOf;
  /// The symbols bound at the current step.
  llvm::StringSet<> bound;
};

} // namespace

FailureOr<HostPlan> dyncc::buildHostPlan(ModuleOp module,
                                         const PlanOptions &options) {
  return PlanBuilder(module, options).build();
}
