//===- SearchTiles.cpp - GEMM variants chosen by the cost model -----------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Puts each GEMM dispatch's problem in terms of the symbols, runs the
// analytical model and range partitioning of dyncc/CostModel over the
// symbols' ranges, clones the kernel per chosen tile, and records the table
// that picks among the clones. After ptxas, refineVariantSelections does
// it again with the kernels' real registers, without those that spill.
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Device.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Partition.h"
#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Dialect/Sym/IR/Sym.h"
#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/Passes.h"
#include "dyncc/Tiling/TileConfig.h"
#include "dyncc/Tiling/TileSearch.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

#include <array>

namespace dyncc {
#define GEN_PASS_DEF_SEARCHTILESPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;
namespace cost = dyncc::cost;

namespace {

/// The problem's dimensions, in the order of dyncc.gemm_problem.
constexpr const char *kProblemDims[] = {"batch", "m", "n", "k"};

/// Key ranges are clamped to this (an unbounded symbol's product).
constexpr int64_t kLargestKey = int64_t(1) << 40;

/// One dispatch's problem: its dynamic dimensions as keys (at most two),
/// the rest constant.
struct SearchSpace {
  SmallVector<DimExpr, 2> keys;
  SmallVector<std::pair<int64_t, int64_t>, 2> ranges;
  /// Every value of each key is a multiple of this (12 for `12*batch`).
  SmallVector<int64_t, 2> divisors;
  /// Per problem dimension: the key it is, or -1 for `constant`.
  std::array<int, 4> keyOf = {-1, -1, -1, -1};
  std::array<int64_t, 4> constant = {1, 1, 1, 1};
  int64_t operandBytes = 4;
  int64_t outputBytes = 4;
  /// Tensor-core tiles are candidates: f16/bf16 operands and result, as
  /// for the default config (code generation takes f16 operands with an
  /// f32 result to SIMT).
  bool tensorCores() const { return operandBytes == 2 && outputBytes == 2; }

  /// The problem at key values `a` (the first key) and `b` (the second).
  cost::GemmProblem at(int64_t a, int64_t b) const {
    int64_t keyValues[2] = {a, b};
    int64_t v[4];
    for (int d = 0; d < 4; ++d)
      v[d] = keyOf[d] < 0 ? constant[d] : keyValues[keyOf[d]];
    cost::GemmProblem p;
    p.batch = v[0];
    p.m = v[1];
    p.n = v[2];
    p.k = v[3];
    p.operandBytes = operandBytes;
    p.outputBytes = outputBytes;
    return p;
  }
};

/// The facts of the module's symbols.
FactsMap getSymbolFacts(ModuleOp module) {
  FactsMap facts;
  for (auto symbol : module.getOps<sym::SymbolOp>()) {
    SymbolFacts &f = facts[symbol.getSymName().str()];
    f.min = (int64_t)symbol.getMin();
    f.max = (int64_t)symbol.getMax();
    if (std::optional<uint64_t> d = symbol.getDivisor())
      f.divisor = (int64_t)*d;
  }
  return facts;
}

/// The search space of `dispatch`, a call of `kernel`; fails with `why`.
FailureOr<SearchSpace> getSearchSpace(dg::DispatchOp dispatch,
                                      func::FuncOp kernel,
                                      const FactsMap &facts,
                                      std::string &why) {
  auto problem =
      kernel->getAttrOfType<DictionaryAttr>(getGemmProblemAttrName());
  if (!problem) {
    why = "the kernel's GEMM problem is unknown (not one contraction)";
    return failure();
  }
  SearchSpace space;
  for (int d = 0; d < 4; ++d) {
    FailureOr<DimExpr> expr =
        resolveDispatchExpr(dispatch, problem.get(kProblemDims[d]));
    if (failed(expr)) {
      why = std::string("the problem's ") + kProblemDims[d] +
            " is not an expression of the symbols";
      return failure();
    }
    DimExpr value = simplify(*expr, facts);
    if (std::optional<int64_t> c = value.getConstant()) {
      space.constant[d] = std::max<int64_t>(1, *c);
      continue;
    }
    auto found = llvm::find(space.keys, value);
    if (found == space.keys.end()) {
      if (space.keys.size() == 2) {
        why = "more than two distinct dynamic problem dimensions";
        return failure();
      }
      space.keys.push_back(value);
      auto [lo, hi] = value.bounds(facts);
      int64_t divisor = std::max<int64_t>(1, knownDivisor(value, facts));
      lo = std::clamp<int64_t>(lo, divisor, kLargestKey);
      lo = (lo + divisor - 1) / divisor * divisor;
      hi = std::clamp<int64_t>(hi, lo, kLargestKey) / divisor * divisor;
      space.ranges.push_back({lo, std::max(lo, hi)});
      space.divisors.push_back(divisor);
      found = space.keys.end() - 1;
    }
    space.keyOf[d] = found - space.keys.begin();
  }
  for (StringRef key : {"operand_bytes", "output_bytes"}) {
    auto bytes = problem.getAs<IntegerAttr>(key);
    if (!bytes || bytes.getInt() < 1) {
      why = "the kernel's GEMM problem has no " + key.str();
      return failure();
    }
    (key == "operand_bytes" ? space.operandBytes : space.outputBytes) =
        bytes.getInt();
  }
  return space;
}

/// Chosen tiles and the table that picks among them; with fewer than two
/// keys the table has one outer interval.
struct Selection {
  std::vector<size_t> chosen;
  cost::DecisionTable table;
  double maxRegret = 0;
  size_t considered = 0;
};

Selection select(const SearchSpace &space, ArrayRef<cost::GemmTile> tiles,
                 const cost::Device &device,
                 const cost::PartitionOptions &options) {
  // Partitions run over the keys' multiples of their divisors (values in
  // between never occur); bounds are scaled back after.
  int64_t da = space.divisors.size() > 0 ? space.divisors[0] : 1;
  int64_t db = space.divisors.size() > 1 ? space.divisors[1] : 1;
  auto predict = [&](size_t c, int64_t a, int64_t b) {
    return cost::predictGemm(tiles[c], space.at(a * da, b * db), device)
        .seconds;
  };
  auto scale = [](cost::IntervalTable &table, int64_t divisor) {
    for (int64_t &bound : table.lower)
      bound *= divisor;
  };
  Selection selection;
  if (space.keys.size() < 2) {
    auto [lo, hi] = space.keys.empty() ? std::pair<int64_t, int64_t>{1, 1}
                                       : space.ranges[0];
    cost::Partition part = cost::partitionRange(
        tiles.size(), [&](size_t c, int64_t v) { return predict(c, v, 0); },
        lo / da, hi / da, options);
    scale(part.table, da);
    selection.chosen = part.chosen;
    selection.table.lower = {part.table.lower.front()};
    selection.table.inner = {part.table};
    selection.maxRegret = part.maxRegret;
    selection.considered = part.considered;
    return selection;
  }
  auto [aLo, aHi] = space.ranges[0];
  auto [bLo, bHi] = space.ranges[1];
  cost::Partition2D part = cost::partitionRange2D(
      tiles.size(), predict, aLo / da, aHi / da, bLo / db, bHi / db, options);
  for (int64_t &bound : part.table.lower)
    bound *= da;
  for (cost::IntervalTable &inner : part.table.inner)
    scale(inner, db);
  selection.chosen = part.chosen;
  selection.table = part.table;
  selection.maxRegret = part.maxRegret;
  selection.considered = part.considered;
  return selection;
}

/// What the search recorded of itself, kept when refining.
struct SearchInfo {
  std::string device;
  int64_t candidates = 0;
  int64_t considered = 0;
  double maxRegret = 0;
  int64_t cap = 8;
  double target = 0.03;
};

DictionaryAttr buildSelectAttr(MLIRContext *context, const SearchInfo &info,
                               const SearchSpace &space,
                               const Selection &selection,
                               ArrayRef<Attribute> variants,
                               ArrayRef<NamedAttribute> extra = {}) {
  Builder b(context);
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("device", b.getStringAttr(info.device)),
      b.getNamedAttr("candidates", b.getI64IntegerAttr(info.candidates)),
      b.getNamedAttr("considered", b.getI64IntegerAttr(info.considered)),
      b.getNamedAttr("max_regret", b.getF64FloatAttr(info.maxRegret)),
      b.getNamedAttr("cap", b.getI64IntegerAttr(info.cap)),
      b.getNamedAttr("target", b.getF64FloatAttr(info.target))};
  SmallVector<Attribute> keys;
  SmallVector<int64_t> ranges;
  for (auto [key, range] : llvm::zip(space.keys, space.ranges)) {
    keys.push_back(b.getStringAttr(key.str()));
    ranges.push_back(range.first);
    ranges.push_back(range.second);
  }
  entries.push_back(b.getNamedAttr("keys", b.getArrayAttr(keys)));
  // The problem's batch, M, N and K: the key each is (-1: none) and the
  // constant of those that are none, for explain to predict at a key.
  SmallVector<int64_t> dimKeys(space.keyOf.begin(), space.keyOf.end());
  SmallVector<int64_t> dimValues;
  for (int d = 0; d < 4; ++d)
    dimValues.push_back(space.keyOf[d] < 0 ? space.constant[d] : 0);
  entries.push_back(b.getNamedAttr("dim_keys", b.getDenseI64ArrayAttr(dimKeys)));
  entries.push_back(
      b.getNamedAttr("dim_values", b.getDenseI64ArrayAttr(dimValues)));
  entries.push_back(
      b.getNamedAttr("key_ranges", b.getDenseI64ArrayAttr(ranges)));
  entries.push_back(b.getNamedAttr("variants", b.getArrayAttr(variants)));
  auto table = [&](const cost::IntervalTable &t) {
    SmallVector<int64_t> variant(t.variant.begin(), t.variant.end());
    return std::make_pair(
        b.getNamedAttr("lower", b.getDenseI64ArrayAttr(t.lower)),
        b.getNamedAttr("variant", b.getDenseI64ArrayAttr(variant)));
  };
  if (space.keys.size() < 2) {
    auto [lower, variant] = table(selection.table.inner.front());
    entries.push_back(lower);
    entries.push_back(variant);
  } else {
    SmallVector<Attribute> inner;
    for (const cost::IntervalTable &t : selection.table.inner) {
      auto [lower, variant] = table(t);
      inner.push_back(b.getDictionaryAttr({lower, variant}));
    }
    entries.push_back(b.getNamedAttr(
        "lower", b.getDenseI64ArrayAttr(selection.table.lower)));
    entries.push_back(b.getNamedAttr("inner", b.getArrayAttr(inner)));
  }
  llvm::append_range(entries, extra);
  return b.getDictionaryAttr(entries);
}

/// The GEMM tile of a kernel's config, or nullopt for one that is not.
std::optional<cost::GemmTile> getKernelTile(func::FuncOp kernel) {
  FailureOr<TileConfig> config = TileConfig::fromAttr(
      kernel->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName()));
  if (failed(config))
    return std::nullopt;
  return cost::parseGemmTile(config->str());
}

/// The GEMM kernels' dispatches, in program order.
llvm::MapVector<func::FuncOp, SmallVector<dg::DispatchOp>>
getGemmDispatches(ModuleOp module, SymbolTable &symbols) {
  llvm::MapVector<func::FuncOp, SmallVector<dg::DispatchOp>> byKernel;
  module.walk([&](dg::DispatchOp dispatch) {
    auto kernel = symbols.lookup<func::FuncOp>(dispatch.getCallee());
    auto kind = kernel ? kernel->getAttrOfType<StringAttr>("dyncc.kind")
                       : StringAttr();
    if (kind && kind.getValue() == "gemm")
      byKernel[kernel].push_back(dispatch);
  });
  return byKernel;
}

struct SearchTiles final
    : ::dyncc::impl::SearchTilesPassBase<SearchTiles> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const cost::Device *target = cost::lookupDevice(device);
    if (!target) {
      module.emitError("unknown device '")
          << device
          << "' (expected a100, rtx3090, h100, h200, sm_80, sm_86 or sm_90)";
      return signalPassFailure();
    }
    if (cap < 1) {
      module.emitError("the variant cap must be at least 1, got ") << cap;
      return signalPassFailure();
    }
    cost::PartitionOptions options;
    options.cap = size_t(cap);
    options.targetRegret = targetRegret;
    FactsMap facts = getSymbolFacts(module);
    SymbolTable symbols(module);
    MLIRContext *context = &getContext();
    // Candidates per operand size and tensor cores or not.
    std::map<std::pair<int64_t, bool>, std::vector<cost::GemmTile>>
        candidates;

    for (auto &[kernel, dispatches] : getGemmDispatches(module, symbols)) {
      auto outType =
          dyn_cast<RankedTensorType>(kernel.getFunctionType().getResult(0));
      if (!outType || outType.getRank() < 2)
        continue;
      // The kernel's variants: tiles chosen for any of its dispatches.
      std::vector<cost::GemmTile> variantTiles;
      struct Chosen {
        dg::DispatchOp dispatch;
        SearchSpace space;
        Selection selection;
        SearchInfo info;
      };
      std::vector<Chosen> searched;
      // Dispatches with the same problem (a model's repeated layers) share
      // one search.
      std::map<std::string, size_t> byProblem;
      for (dg::DispatchOp dispatch : dispatches) {
        std::string why;
        FailureOr<SearchSpace> space =
            getSearchSpace(dispatch, kernel, facts, why);
        if (failed(space)) {
          dispatch->setAttr(
              getVariantSelectAttrName(),
              DictionaryAttr::get(context,
                                  {NamedAttribute(
                                      StringAttr::get(context, "reason"),
                                      StringAttr::get(context, why))}));
          continue;
        }
        std::string problemKey;
        for (int d = 0; d < 4; ++d)
          problemKey += (space->keyOf[d] < 0
                             ? std::to_string(space->constant[d])
                             : space->keys[space->keyOf[d]].str()) +
                        ";";
        problemKey += std::to_string(space->operandBytes) + ";" +
                      std::to_string(space->outputBytes);
        auto [it, inserted] = byProblem.insert({problemKey, searched.size()});
        if (!inserted) {
          searched.push_back(searched[it->second]);
          searched.back().dispatch = dispatch;
          continue;
        }
        std::vector<cost::GemmTile> &tiles =
            candidates[{space->operandBytes, space->tensorCores()}];
        if (tiles.empty())
          for (const cost::GemmTile &tile :
               cost::enumerateGemmTiles(space->operandBytes, *target))
            if (space->tensorCores() || !tile.tensorCores)
              tiles.push_back(tile);
        Selection selection = select(*space, tiles, *target, options);
        SearchInfo info{target->name,   int64_t(tiles.size()),
                        int64_t(selection.considered), selection.maxRegret,
                        cap,            targetRegret};
        // Chosen indices become indices into the kernel's variants.
        for (size_t &c : selection.chosen) {
          const cost::GemmTile &tile = tiles[c];
          auto found = llvm::find(variantTiles, tile);
          c = found - variantTiles.begin();
          if (found == variantTiles.end())
            variantTiles.push_back(tile);
        }
        searched.push_back({dispatch, *space, selection, info});
      }
      if (variantTiles.empty())
        continue;

      // Variant 0 is the kernel itself; the others are clones after it.
      SmallVector<Attribute> variantRefs;
      OpBuilder builder(kernel);
      builder.setInsertionPointAfter(kernel);
      for (auto [i, tile] : llvm::enumerate(variantTiles)) {
        std::string error;
        std::optional<TileConfig> config = TileConfig::parse(tile.str(), error);
        if (!config) {
          kernel.emitOpError("tile search chose a config code generation "
                             "rejects: ")
              << tile.str() << " (" << error << ")";
          return signalPassFailure();
        }
        func::FuncOp variant = kernel;
        if (i != 0) {
          variant = cast<func::FuncOp>(builder.clone(*kernel));
          variant.setSymName(kernel.getSymName().str() + "_v" +
                             std::to_string(i));
          symbols.insert(variant);
        }
        variant->setAttr(TileConfig::getAttrName(),
                         config->fitToRank(outType.getRank()).toAttr(context));
        variantRefs.push_back(FlatSymbolRefAttr::get(variant.getSymNameAttr()));
      }
      for (Chosen &c : searched) {
        SmallVector<Attribute> refs;
        for (size_t v : c.selection.chosen)
          refs.push_back(variantRefs[v]);
        // The dispatch's own variants are numbered 0.. in its table.
        c.dispatch->setAttr(getVariantSelectAttrName(),
                            buildSelectAttr(context, c.info, c.space,
                                            c.selection, refs));
      }
    }
  }
};

} // namespace

LogicalResult dyncc::refineVariantSelections(
    ModuleOp graph,
    function_ref<std::optional<CompiledKernel>(StringRef)> compiled,
    function_ref<void(const std::string &)> note) {
  FactsMap facts = getSymbolFacts(graph);
  SymbolTable symbols(graph);
  MLIRContext *context = graph.getContext();
  LogicalResult result = success();
  // Dispatches with the same selection (a model's repeated layers) were
  // one search, and are refined once: the selection determines the result.
  DenseMap<DictionaryAttr, DictionaryAttr> refined;
  graph.walk([&](dg::DispatchOp dispatch) {
    auto attr =
        dispatch->getAttrOfType<DictionaryAttr>(getVariantSelectAttrName());
    auto variants = attr ? attr.getAs<ArrayAttr>("variants") : ArrayAttr();
    if (!variants)
      return;
    if (DictionaryAttr done = refined.lookup(attr)) {
      dispatch->setAttr(getVariantSelectAttrName(), done);
      return;
    }
    auto kernel = symbols.lookup<func::FuncOp>(dispatch.getCallee());
    auto deviceName = attr.getAs<StringAttr>("device");
    const cost::Device *device =
        deviceName ? cost::lookupDevice(deviceName.str()) : nullptr;
    std::string why;
    FailureOr<SearchSpace> space =
        kernel && device ? getSearchSpace(dispatch, kernel, facts, why)
                         : FailureOr<SearchSpace>(failure());
    if (failed(space)) {
      result = dispatch.emitOpError("has a malformed ")
               << getVariantSelectAttrName();
      return;
    }
    std::vector<cost::GemmTile> tiles;
    SmallVector<Attribute> kept;
    int64_t dropped = 0;
    for (Attribute ref : variants) {
      auto symbol = dyn_cast<FlatSymbolRefAttr>(ref);
      auto variant =
          symbol ? symbols.lookup<func::FuncOp>(symbol.getValue()) : nullptr;
      std::optional<cost::GemmTile> tile =
          variant ? getKernelTile(variant) : std::nullopt;
      if (!tile) {
        result = dispatch.emitOpError("has a variant that is not a GEMM "
                                      "kernel: ")
                 << ref;
        return;
      }
      if (std::optional<CompiledKernel> report = compiled(symbol.getValue())) {
        if (report->spillBytes > 0) {
          ++dropped;
          continue;
        }
        tile->registers = report->registers;
      }
      tiles.push_back(*tile);
      kept.push_back(ref);
    }
    if (kept.empty()) {
      note("every variant of '" + kernel.getSymName().str() +
           "' spills registers; keeping them all");
      refined[attr] = attr;
      return;
    }
    SearchInfo info;
    info.device = device->name;
    auto getInt = [&](StringRef name, int64_t fallback) {
      auto value = attr.getAs<IntegerAttr>(name);
      return value ? value.getInt() : fallback;
    };
    auto getFloat = [&](StringRef name, double fallback) {
      auto value = attr.getAs<FloatAttr>(name);
      return value ? value.getValueAsDouble() : fallback;
    };
    info.candidates = getInt("candidates", 0);
    info.considered = getInt("considered", 0);
    info.maxRegret = getFloat("max_regret", 0);
    info.cap = getInt("cap", 8);
    info.target = getFloat("target", 0.03);
    cost::PartitionOptions options;
    options.cap = size_t(std::max<int64_t>(1, info.cap));
    options.targetRegret = info.target;
    Selection selection = select(*space, tiles, *device, options);
    SmallVector<Attribute> refs;
    for (size_t v : selection.chosen)
      refs.push_back(kept[v]);
    Builder b(context);
    DictionaryAttr done = buildSelectAttr(
        context, info, *space, selection, refs,
        {b.getNamedAttr("registers", b.getStringAttr("ptxas")),
         b.getNamedAttr("dropped", b.getI64IntegerAttr(dropped)),
         b.getNamedAttr("compiled_regret",
                        b.getF64FloatAttr(selection.maxRegret))});
    refined[attr] = done;
    dispatch->setAttr(getVariantSelectAttrName(), done);
  });
  return result;
}
