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

#include "dyncc/CostModel/Conv.h"
#include "dyncc/CostModel/Device.h"
#include "dyncc/CostModel/Gemm.h"
#include "dyncc/CostModel/Host.h"
#include "dyncc/CostModel/Partition.h"
#include "dyncc/CostModel/Rows.h"
#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/Passes.h"
#include "dyncc/Tiling/SplitK.h"
#include "dyncc/Tiling/TileConfig.h"
#include "dyncc/Tiling/TileSearch.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/MapVector.h"

#include <array>
#include <functional>

namespace dyncc {
#define GEN_PASS_DEF_SEARCHTILESPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;
namespace cost = dyncc::cost;

namespace {

/// The problem's dimensions, in the order of dyncc.gemm_problem.
constexpr const char *kGemmDims[] = {"batch", "m", "n", "k"};
/// The problem's dimensions, in the order of dyncc.row_problem.
constexpr const char *kRowDims[] = {"batch", "rows", "length", "planes"};
/// A column reduction's (a dyncc.row_problem with a `column`): the fourth is
/// the extent each output folds.
constexpr const char *kColumnDims[] = {"batch", "rows", "length", "column"};
/// The problem's dimensions, in the order of dyncc.conv_problem.
constexpr const char *kConvDims[] = {"batch", "out_c", "out_h", "out_w"};

/// The static shared bytes of the dynamic-shared symbol, which the search's
/// constraints count and getSharedBytesBudget leaves out.
constexpr int64_t kDynamicSymbolBytes = 16;

/// Key ranges are clamped to this (an unbounded symbol's product).
constexpr int64_t kLargestKey = int64_t(1) << 40;

/// Which model predicts a kernel: GEMM tiles, row-wise tiles (elementwise
/// kernels and row reductions), or conv tiles.
enum class Model { Gemm, Rows, Conv };

/// Key values, one per key (DecisionTable::kMaxKeys at most).
using KeyValues = std::array<int64_t, cost::DecisionTable::kMaxKeys>;

/// One dispatch's problem: its distinct dynamic dimensions as keys, the
/// rest constant.
struct SearchSpace {
  Model model = Model::Gemm;
  SmallVector<DimExpr, 4> keys;
  SmallVector<std::pair<int64_t, int64_t>, 4> ranges;
  /// Every value of each key is a multiple of this (12 for `12*batch`).
  SmallVector<int64_t, 4> divisors;
  /// Per problem dimension (GEMM: batch, M, N, K; rows: batch, rows,
  /// length, planes): the key it is, or -1 for `constant`.
  SmallVector<int, 4> keyOf;
  SmallVector<int64_t, 4> constant;
  /// GEMMs: the bytes of an operand and of a result element.
  int64_t operandBytes = 4;
  int64_t outputBytes = 4;
  /// GEMMs: the products each block computes in turn, and the extent a
  /// block's N tile must divide (0: any; GemmProblemExprs::nSplit).
  int64_t products = 1;
  int64_t nSplit = 0;
  /// GEMMs whose K dyncc-split-k may split: that static K (0: none).
  int64_t splitK = 0;
  /// Row-wise kernels: the bytes of an element, those moved per element,
  /// and whether the rows are reduced.
  int64_t elementBytes = 4;
  int64_t bytesPerElement = 8;
  bool reduction = false;
  /// The kernel's output has one dimension: its config has no rows
  /// dimension, so a block takes one row.
  bool singleRow = false;
  /// Row-wise kernels that read element by element (RowProblemExprs::
  /// scalarAccess).
  bool scalarAccess = false;
  /// Column reductions (RowProblemExprs::columns): the fourth dimension is
  /// the extent each output folds; where the result spans it, its place
  /// from the result's end (else 0).
  bool columns = false;
  int64_t columnPlace = 0;
  /// Column reductions code generation can split over lanes
  /// (RowProblemExprs::columnLanes): `reduce column` tiles are candidates.
  bool columnLanes = false;
  /// Row-wise kernels whose planes (the outer dimension next to the rows)
  /// are more than one: blocks may span them.
  bool planesTiled() const {
    return model == Model::Rows && !columns &&
           !(keyOf[3] < 0 && constant[3] == 1);
  }
  /// The size a column tile takes the reduced axis whole with: its extent,
  /// or its greatest value.
  int64_t columnSize() const {
    return keyOf[3] < 0 ? constant[3] : ranges[keyOf[3]].second;
  }
  /// Convs: the static parts of the problem (channels, window, strides,
  /// dilations, element bytes); convAt sets the rest.
  cost::ConvProblem conv;

  /// Tensor-core tiles are candidates: the products take f16 or bf16
  /// operands and accumulate in f32 (the problem's `tensor_cores`), as
  /// for the default config.
  bool tensorCores = false;

  /// The problem's dimensions at `keyValues` (one per key).
  SmallVector<int64_t, 4> at(const KeyValues &keyValues) const {
    SmallVector<int64_t, 4> v;
    for (auto [key, value] : llvm::zip(keyOf, constant))
      v.push_back(key < 0 ? value : keyValues[key]);
    return v;
  }
  cost::GemmProblem gemmAt(const KeyValues &keys) const {
    SmallVector<int64_t, 4> v = at(keys);
    cost::GemmProblem p;
    p.batch = v[0];
    p.m = v[1];
    p.n = v[2];
    p.k = v[3];
    p.operandBytes = operandBytes;
    p.outputBytes = outputBytes;
    p.products = products;
    return p;
  }
  cost::RowProblem rowsAt(const KeyValues &keys) const {
    SmallVector<int64_t, 4> v = at(keys);
    cost::RowProblem p;
    p.batch = v[0];
    p.rows = v[1];
    p.length = v[2];
    p.planes = columns ? 1 : v[3];
    p.columnLength = columns ? v[3] : 0;
    p.elementBytes = elementBytes;
    p.bytesPerElement = bytesPerElement;
    p.reduction = reduction;
    p.scalarAccess = scalarAccess;
    return p;
  }

  cost::ConvProblem convAt(const KeyValues &keys) const {
    SmallVector<int64_t, 4> v = at(keys);
    cost::ConvProblem p = conv;
    p.batch = v[0];
    p.outC = v[1];
    p.outH = v[2];
    p.outW = v[3];
    p.staticH = keyOf[2] < 0;
    p.staticW = keyOf[3] < 0;
    return p;
  }

  /// Identifies the problem: dispatches with the same one share a search.
  std::string str() const {
    std::string text = model == Model::Gemm   ? "gemm;"
                       : model == Model::Rows ? "rows;"
                                              : "conv;";
    for (auto [key, value] : llvm::zip(keyOf, constant))
      text += (key < 0 ? std::to_string(value) : keys[key].str()) + ";";
    for (int64_t bytes :
         {operandBytes, outputBytes, products, nSplit, splitK, elementBytes,
          bytesPerElement, int64_t(reduction), int64_t(singleRow),
          int64_t(tensorCores), int64_t(scalarAccess), int64_t(columns),
          columnPlace, int64_t(columnLanes)})
      text += std::to_string(bytes) + ";";
    if (model == Model::Conv) {
      for (int64_t v : conv.window())
        text += std::to_string(v) + ";";
      text += std::to_string(conv.spatialDims) + ";";
    }
    return text;
  }
};

/// The tiles a search chooses among: GEMM, row or conv tiles.
struct Candidates {
  Model model = Model::Gemm;
  /// GEMM tiles of the host's search (getHostCandidates), which the host
  /// model predicts (selectHost), not predict.
  bool host = false;
  std::vector<cost::GemmTile> gemm;
  std::vector<cost::RowTile> rows;
  std::vector<cost::ConvTile> conv;

  size_t size() const {
    return model == Model::Gemm   ? gemm.size()
           : model == Model::Rows ? rows.size()
                                  : conv.size();
  }
  /// Tile config text (TileConfig::parse's form).
  std::string str(size_t c) const {
    return model == Model::Gemm   ? gemm[c].str()
           : model == Model::Rows ? rows[c].str()
                                  : conv[c].str();
  }
  double predict(size_t c, const SearchSpace &space, const KeyValues &keys,
                 const cost::Device &device) const {
    switch (model) {
    case Model::Gemm:
      return cost::predictGemm(gemm[c], space.gemmAt(keys), device).seconds;
    case Model::Rows:
      return cost::predictRows(rows[c], space.rowsAt(keys), device).seconds;
    case Model::Conv:
      return cost::predictConv(conv[c], space.convAt(keys), device).seconds;
    }
    return 0;
  }
  /// Appends the tile of config `text` for `space` with ptxas' `registers`
  /// and the compiled kernel's `sharedBytes` (0: the estimate's); false if
  /// the text is not a tile of this model.
  bool add(const std::string &text, const SearchSpace &space,
           int64_t registers, int64_t sharedBytes) {
    if (model == Model::Gemm) {
      std::optional<cost::GemmTile> tile = cost::parseGemmTile(text);
      if (!tile)
        return false;
      if (registers > 0)
        tile->registers = registers;
      tile->sharedBytes = sharedBytes;
      gemm.push_back(*tile);
      return true;
    }
    if (model == Model::Conv) {
      std::optional<cost::ConvTile> tile = cost::parseConvTile(text);
      if (!tile)
        return false;
      if (registers > 0)
        tile->registers = registers;
      conv.push_back(*tile);
      return true;
    }
    std::optional<cost::RowTile> tile = cost::parseRowTile(text);
    if (!tile)
      return false;
    if (registers > 0)
      tile->registers = registers;
    rows.push_back(*tile);
    return true;
  }
};

/// What getCandidates depends on: spaces with the same key have the same
/// candidates on a device.
std::string getCandidatesKey(const SearchSpace &space, bool host) {
  std::string key = std::to_string(int(space.model)) + (host ? "h;" : ";");
  auto add = [&](ArrayRef<int64_t> values) {
    for (int64_t v : values)
      key += std::to_string(v) + ";";
  };
  switch (space.model) {
  case Model::Gemm:
    add({space.operandBytes, space.tensorCores, space.nSplit, space.products,
         space.splitK, space.keyOf[3] < 0 ? space.constant[3] : 0});
    break;
  case Model::Rows:
    add({space.elementBytes, space.reduction, space.singleRow,
         space.planesTiled(), space.columns, space.columnPlace,
         space.columnPlace ? space.columnSize() : 0, space.columnLanes});
    break;
  case Model::Conv:
    add(space.conv.window());
    add({space.conv.elementBytes, space.conv.spatialDims});
    break;
  }
  return key;
}

/// Every candidate of `space`'s model on `device`.
Candidates getCandidates(const SearchSpace &space, const cost::Device &device) {
  Candidates candidates;
  candidates.model = space.model;
  if (space.model == Model::Rows) {
    for (const cost::RowTile &tile :
         space.columns ? cost::enumerateColumnTiles(
                             space.elementBytes, device, space.columnSize(),
                             space.columnPlace, space.columnLanes)
                       : cost::enumerateRowTiles(space.reduction,
                                                 space.elementBytes, device))
      // A column split's outputs per block are along the length, not the
      // rows.
      if ((!space.singleRow || tile.rowsPerBlock == 1 ||
           tile.strategy == cost::RowStrategy::Column) &&
          (space.planesTiled() || tile.planesPerBlock == 1))
        candidates.rows.push_back(tile);
    return candidates;
  }
  if (space.model == Model::Conv) {
    candidates.conv = cost::enumerateConvTiles(space.conv, device);
    return candidates;
  }
  // K where it is static, else 0.
  int64_t k = space.keyOf[3] < 0 ? space.constant[3] : 0;
  std::vector<cost::GemmTile> tiles =
      cost::enumerateGemmTiles(space.operandBytes, device);
  // Heads narrower than the usual N tiles (a tiny BERT's 4 columns): SIMT
  // tiles of a block N that divides them.
  if (space.nSplit != 0) {
    std::vector<cost::GemmTile> narrow = cost::enumerateNarrowGemmTiles(
        space.operandBytes, device, space.nSplit);
    tiles.insert(tiles.end(), narrow.begin(), narrow.end());
  }
  for (cost::GemmTile tile : tiles) {
    if ((!space.tensorCores && tile.tensorCores) ||
        (space.nSplit != 0 && space.nSplit % tile.blockN != 0))
      continue;
    // No tensor-core tile code generation would run on SIMT threads, which
    // the tile would not model (tensorCoresTakeStaticK).
    if (tile.tensorCores && k != 0 &&
        !tensorCoresTakeStaticK(k, tile.kStep, cost::kMmaK))
      continue;
    candidates.gemm.push_back(tile);
    // Split-K: small tiles in parts of whole k-steps of a static K.
    if (space.splitK != 0)
      for (const cost::GemmTile &split :
           cost::getSplitKTiles(tile, space.splitK))
        candidates.gemm.push_back(split);
  }
  return candidates;
}

/// The host search's candidates of an f32 GEMM `space`: the host's tiles
/// (cost::enumerateHostGemmTiles) whose block tiles code generation keeps
/// in its buffers within `device`'s shared memory (the targets' budget).
Candidates getHostCandidates(const SearchSpace &space,
                             const cost::Device &device) {
  Candidates candidates;
  candidates.model = Model::Gemm;
  candidates.host = true;
  for (const cost::GemmTile &tile : cost::enumerateHostGemmTiles(space.nSplit))
    if (cost::estimateResources(tile, space.operandBytes).sharedBytes <=
        device.maxSharedBytesPerBlock)
      candidates.gemm.push_back(tile);
  return candidates;
}

/// The facts of the module's symbols.
FactsMap getSymbolFacts(ModuleOp module) {
  ShapeConstraints constraints;
  dg::declareSymbolFacts(module, constraints);
  return constraints.getFactsMap();
}

/// The search space of `dispatch`, a call of `kernel`; fails with `why`.
FailureOr<SearchSpace> getSearchSpace(dg::DispatchOp dispatch,
                                      func::FuncOp kernel,
                                      const FactsMap &facts,
                                      std::string &why) {
  SearchSpace space;
  auto problem =
      kernel->getAttrOfType<DictionaryAttr>(getGemmProblemAttrName());
  ArrayRef<const char *> dims = kGemmDims;
  if (!problem) {
    problem = kernel->getAttrOfType<DictionaryAttr>(getRowProblemAttrName());
    space.model = Model::Rows;
    space.columns = problem && problem.get("column");
    dims = space.columns ? ArrayRef<const char *>(kColumnDims) : kRowDims;
  }
  if (!problem) {
    problem = kernel->getAttrOfType<DictionaryAttr>(getConvProblemAttrName());
    space.model = Model::Conv;
    dims = kConvDims;
  }
  if (!problem) {
    auto kind = kernel->getAttrOfType<StringAttr>("dyncc.kind");
    StringRef name = kind ? kind.getValue() : "";
    why = name == "gemm"
              ? "the kernel's GEMM problem is unknown (not one contraction)"
          : name == "conv"
              ? "the kernel is not one 2-D NCHW conv with static channels, "
                "groups and window and one element type (1-D or 3-D)"
          : name == "data_movement"
              ? "the kernel is not row-wise (its root is not a linalg op "
                "of parallel loops, or it has loops or conditions of its "
                "own)"
              : "the kernel is not row-wise (reductions neither all along "
                "rows with the same loops nor all over the same outer axes, "
                "or several results)";
    return failure();
  }
  for (const char *name : dims) {
    FailureOr<DimExpr> expr = resolveDispatchExpr(dispatch, problem.get(name));
    if (failed(expr)) {
      why = std::string("the problem's ") + name +
            " is not an expression of the symbols";
      return failure();
    }
    DimExpr value = simplify(*expr, facts);
    if (std::optional<int64_t> c = value.getConstant()) {
      space.keyOf.push_back(-1);
      space.constant.push_back(std::max<int64_t>(1, *c));
      continue;
    }
    auto found = llvm::find(space.keys, value);
    if (found == space.keys.end()) {
      // A problem has at most four dimensions; a table takes as many.
      static_assert(std::size(kGemmDims) <= cost::DecisionTable::kMaxKeys &&
                    std::size(kRowDims) <= cost::DecisionTable::kMaxKeys &&
                    std::size(kColumnDims) <= cost::DecisionTable::kMaxKeys &&
                    std::size(kConvDims) <= cost::DecisionTable::kMaxKeys);
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
    space.keyOf.push_back(found - space.keys.begin());
    space.constant.push_back(0);
  }
  auto getInt = [&](StringRef key, int64_t &out, int64_t min) {
    auto bytes = problem.getAs<IntegerAttr>(key);
    if (!bytes || bytes.getInt() < min) {
      why = "the kernel's problem has no " + key.str();
      return false;
    }
    out = bytes.getInt();
    return true;
  };
  if (space.model == Model::Gemm) {
    if (!getInt("operand_bytes", space.operandBytes, 1) ||
        !getInt("output_bytes", space.outputBytes, 1))
      return failure();
    if (problem.get("products") &&
        !getInt("products", space.products, 1))
      return failure();
    if (problem.get("n_split") && !getInt("n_split", space.nSplit, 1))
      return failure();
    if (auto tensorCores = problem.getAs<BoolAttr>("tensor_cores"))
      space.tensorCores = tensorCores.getValue();
    // K static, one product, the kernel's structure one dyncc-split-k
    // takes.
    if (space.keyOf[3] < 0 && space.products == 1 && space.nSplit == 0 &&
        !whyNoSplitK(kernel))
      space.splitK = space.constant[3];
    return space;
  }
  if (space.model == Model::Conv) {
    auto window = problem.getAs<DenseI64ArrayAttr>("window");
    if (!window ||
        !space.conv.setWindow(window.asArrayRef().data(), window.size())) {
      why = "the kernel's problem has no window";
      return failure();
    }
    if (!getInt("element_bytes", space.conv.elementBytes, 1))
      return failure();
    if (problem.get("spatial_dims") &&
        (!getInt("spatial_dims", space.conv.spatialDims, 1) ||
         space.conv.spatialDims > 2)) {
      why = "the kernel's problem has no spatial_dims of 1 or 2";
      return failure();
    }
    return space;
  }
  int64_t reduction = 0, scalarAccess = 0;
  if (!getInt("element_bytes", space.elementBytes, 1) ||
      !getInt("bytes_per_element", space.bytesPerElement, 1) ||
      !getInt("reduction", reduction, 0) ||
      !getInt("scalar_access", scalarAccess, 0))
    return failure();
  space.reduction = reduction != 0;
  space.scalarAccess = scalarAccess != 0;
  auto output =
      dyn_cast<RankedTensorType>(kernel.getFunctionType().getResult(0));
  if (space.columns) {
    if (!getInt("column_place", space.columnPlace, 0))
      return failure();
    // Absent: no split over lanes.
    auto lanes = problem.getAs<IntegerAttr>("column_lanes");
    space.columnLanes = lanes && lanes.getInt() != 0;
    // A result spanning the reduced axis takes it whole: a tile of one
    // element there would be the stats' recomputation per output.
    if (space.columnPlace != 0 &&
        (space.columnPlace < 2 || space.columnSize() < 2)) {
      why = "the column reduction's axis is a single element";
      return failure();
    }
  }
  // The space without a spanned column; a column reduction's rows of 1 (a
  // keepdims result's unit axis) take a block no further rows.
  int64_t rank = output ? output.getRank() - (space.columnPlace ? 1 : 0) : 0;
  space.singleRow = rank < 2 || (space.columns && space.keyOf[1] < 0 &&
                                 space.constant[1] == 1);
  return space;
}

/// Chosen tiles and the table that picks among them; with fewer than two
/// keys the table is one interval table.
struct Selection {
  std::vector<size_t> chosen;
  cost::DecisionTable table;
  double maxRegret = 0;
  size_t considered = 0;
};

/// Calls `visit` once for each node of `table` with its depth (its key's
/// index): a node is shared by the intervals above it that have equal
/// subtrees, and is visited once. `visit` may change a node's bounds, and a
/// last key's node's variants.
void forEachNode(
    cost::DecisionTable &table,
    llvm::function_ref<void(cost::IntervalTable &, size_t)> visit) {
  std::vector<char> seen(table.nodes.size(), 0);
  SmallVector<std::pair<uint32_t, size_t>> stack;
  if (!table.nodes.empty())
    stack.push_back({0, 0});
  while (!stack.empty()) {
    auto [n, depth] = stack.pop_back_val();
    if (seen[n])
      continue;
    seen[n] = 1;
    cost::IntervalTable &node = table.nodes[n];
    if (depth + 1 < table.keys)
      for (uint32_t child : node.variant)
        stack.push_back({child, depth + 1});
    visit(node, depth);
  }
}

/// The ranges a partition of `space` runs over: its keys' multiples of
/// their divisors (values in between never occur), in those multiples.
std::vector<std::pair<int64_t, int64_t>>
getPartitionRanges(const SearchSpace &space) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (size_t k = 0; k < space.keys.size(); ++k)
    ranges.push_back({space.ranges[k].first / space.divisors[k],
                      space.ranges[k].second / space.divisors[k]});
  return ranges;
}

/// A candidate's predicted time at the keys' values.
using Predictor = std::function<double(size_t, const KeyValues &)>;

/// Chooses among `count` candidates over `space`'s keys by `time`.
Selection select(const SearchSpace &space, size_t count, const Predictor &time,
                 const cost::PartitionOptions &options) {
  // Partitions run over the keys' multiples of their divisors (values in
  // between never occur); bounds are scaled back after.
  size_t keys = space.keys.size();
  auto predict = [&](size_t c, const int64_t *values) {
    KeyValues scaled{};
    for (size_t k = 0; k < keys; ++k)
      scaled[k] = values[k] * space.divisors[k];
    return time(c, scaled);
  };
  Selection selection;
  if (keys < 2) {
    int64_t divisor = keys ? space.divisors[0] : 1;
    auto [lo, hi] =
        keys ? space.ranges[0] : std::pair<int64_t, int64_t>{1, 1};
    cost::Partition part = cost::partitionRange(
        count, [&](size_t c, int64_t v) { return predict(c, &v); },
        lo / divisor, hi / divisor, options);
    for (int64_t &bound : part.table.lower)
      bound *= divisor;
    selection.chosen = part.chosen;
    selection.table = cost::DecisionTable::fromIntervals(part.table);
    selection.maxRegret = part.maxRegret;
    selection.considered = part.considered;
    return selection;
  }
  cost::PartitionGrid part =
      cost::partitionGrid(count, predict, getPartitionRanges(space), options);
  // A node's depth is its key's: scale each node's bounds by its divisor.
  forEachNode(part.table, [&](cost::IntervalTable &node, size_t depth) {
    for (int64_t &bound : node.lower)
      bound *= space.divisors[depth];
  });
  selection.chosen = part.chosen;
  selection.table = part.table;
  selection.maxRegret = part.maxRegret;
  selection.considered = part.considered;
  return selection;
}

/// The host search's pool threads: the contexts cover these, and the table
/// is for kHostTableThreads.
constexpr int64_t kHostThreads[] = {2, 8, 32};
constexpr int64_t kHostTableThreads = 8;

/// Whether `space` takes the host's search among `levels`: f32 GEMMs of
/// at most two keys (with the context, a grid of three dimensions, whose
/// fine points keep every context: getGridPointsPerDimension).
bool takesHostSearch(const SearchSpace &space, ArrayRef<std::string> levels) {
  return !levels.empty() && space.model == Model::Gemm &&
         space.operandBytes == 4 && !space.tensorCores &&
         space.keys.size() <= 2;
}

/// The host's search: variants that cover every build of `levels` at each
/// of kHostThreads (a first dimension of the partition, one value per
/// build and thread count), then the table among them for the first build
/// at kHostTableThreads.
Selection selectHost(const SearchSpace &space, const Candidates &tiles,
                     ArrayRef<std::string> levels,
                     const cost::PartitionOptions &options) {
  std::vector<cost::HostDevice> contexts;
  for (const std::string &level : levels)
    for (int64_t threads : kHostThreads) {
      cost::HostDevice host = cost::getFittedHostDevice(level);
      host.threads = threads;
      contexts.push_back(host);
    }
  size_t keys = space.keys.size();
  auto cover = [&](size_t c, const int64_t *values) {
    KeyValues scaled{};
    for (size_t k = 0; k < keys; ++k)
      scaled[k] = values[k + 1] * space.divisors[k];
    return cost::predictHostGemm(tiles.gemm[c], space.gemmAt(scaled),
                                 contexts[values[0]])
        .seconds;
  };
  std::vector<std::pair<int64_t, int64_t>> ranges = getPartitionRanges(space);
  ranges.insert(ranges.begin(), {0, int64_t(contexts.size()) - 1});
  // Every context is a value of its own (getGridPoints takes every value
  // of a range of at most its count).
  cost::PartitionGrid covered =
      cost::partitionGrid(tiles.size(), cover, ranges, options);

  cost::HostDevice table = cost::getFittedHostDevice(levels.front());
  table.threads = kHostTableThreads;
  const std::vector<size_t> &chosen = covered.chosen;
  cost::PartitionOptions all = options;
  all.cap = chosen.size();
  all.targetRegret = 0;
  Selection selection = select(
      space, chosen.size(),
      [&](size_t c, const KeyValues &values) {
        return cost::predictHostGemm(tiles.gemm[chosen[c]],
                                     space.gemmAt(values), table)
            .seconds;
      },
      all);
  // The table's variants index its own choice among `chosen`: renumber
  // them as the variants, which are all of `chosen`. Nodes above the last
  // key index nodes: only the last key's name variants.
  cost::DecisionTable &decision = selection.table;
  forEachNode(decision, [&](cost::IntervalTable &node, size_t depth) {
    if (depth + 1 == decision.keys)
      for (uint32_t &v : node.variant)
        v = uint32_t(selection.chosen[v]);
  });
  selection.chosen = chosen;
  selection.maxRegret = covered.maxRegret;
  selection.considered = covered.considered;
  return selection;
}

/// What the search recorded of itself, kept when refining.
struct SearchInfo {
  std::string device;
  /// The host's search: the pool threads its table is for (else 0).
  int64_t hostThreads = 0;
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
  if (info.hostThreads > 0)
    entries.push_back(
        b.getNamedAttr("host_threads", b.getI64IntegerAttr(info.hostThreads)));
  SmallVector<Attribute> keys;
  SmallVector<int64_t> ranges;
  for (auto [key, range] : llvm::zip(space.keys, space.ranges)) {
    keys.push_back(b.getStringAttr(key.str()));
    ranges.push_back(range.first);
    ranges.push_back(range.second);
  }
  entries.push_back(b.getNamedAttr("keys", b.getArrayAttr(keys)));
  // The problem's dimensions (GEMM: batch, M, N, K; rows: batch, rows,
  // length; conv: batch, out_c, out_h, out_w): the key each is (-1: none)
  // and the constant of those that are none, for explain to predict at a
  // key.
  SmallVector<int64_t> dimKeys(space.keyOf.begin(), space.keyOf.end());
  SmallVector<int64_t> dimValues(space.constant.begin(), space.constant.end());
  entries.push_back(b.getNamedAttr("dim_keys", b.getDenseI64ArrayAttr(dimKeys)));
  entries.push_back(
      b.getNamedAttr("dim_values", b.getDenseI64ArrayAttr(dimValues)));
  if (space.model == Model::Rows) {
    entries.push_back(b.getNamedAttr("model", b.getStringAttr("rows")));
    entries.push_back(b.getNamedAttr(
        "element_bytes", b.getI64IntegerAttr(space.elementBytes)));
    entries.push_back(b.getNamedAttr(
        "bytes_per_element", b.getI64IntegerAttr(space.bytesPerElement)));
    entries.push_back(
        b.getNamedAttr("reduction", b.getI64IntegerAttr(space.reduction)));
    entries.push_back(b.getNamedAttr("scalar_access",
                                     b.getI64IntegerAttr(space.scalarAccess)));
    // The fourth dimension is the extent each output folds.
    if (space.columns)
      entries.push_back(b.getNamedAttr("columns", b.getI64IntegerAttr(1)));
  }
  if (space.model == Model::Conv) {
    entries.push_back(b.getNamedAttr("model", b.getStringAttr("conv")));
    entries.push_back(
        b.getNamedAttr("window", b.getDenseI64ArrayAttr(space.conv.window())));
    entries.push_back(b.getNamedAttr(
        "element_bytes", b.getI64IntegerAttr(space.conv.elementBytes)));
  }
  entries.push_back(
      b.getNamedAttr("key_ranges", b.getDenseI64ArrayAttr(ranges)));
  // Every value of a key is a multiple of its divisor (12 for `12*batch`):
  // explain evaluates the table at those.
  SmallVector<int64_t> divisors(space.divisors.begin(), space.divisors.end());
  entries.push_back(
      b.getNamedAttr("key_divisors", b.getDenseI64ArrayAttr(divisors)));
  entries.push_back(b.getNamedAttr("variants", b.getArrayAttr(variants)));
  // The table's nodes, nested: a node over the last key has `lower` and
  // `variant`, one over another `lower` and `inner`, the nodes over the
  // next key per interval.
  const cost::DecisionTable &decision = selection.table;
  std::function<void(uint32_t, size_t, SmallVectorImpl<NamedAttribute> &)>
      addNode = [&](uint32_t n, size_t depth,
                    SmallVectorImpl<NamedAttribute> &out) {
        const cost::IntervalTable &node = decision.nodes[n];
        out.push_back(
            b.getNamedAttr("lower", b.getDenseI64ArrayAttr(node.lower)));
        SmallVector<int64_t> next(node.variant.begin(), node.variant.end());
        if (depth + 1 >= decision.keys) {
          out.push_back(
              b.getNamedAttr("variant", b.getDenseI64ArrayAttr(next)));
          return;
        }
        SmallVector<Attribute> inner;
        for (uint32_t child : node.variant) {
          SmallVector<NamedAttribute> fields;
          addNode(child, depth + 1, fields);
          inner.push_back(b.getDictionaryAttr(fields));
        }
        out.push_back(b.getNamedAttr("inner", b.getArrayAttr(inner)));
      };
  addNode(0, 0, entries);
  llvm::append_range(entries, extra);
  return b.getDictionaryAttr(entries);
}

/// Records on `dispatch` why the search did not take it.
void setReason(dg::DispatchOp dispatch, StringRef why) {
  MLIRContext *context = dispatch.getContext();
  dispatch->setAttr(getVariantSelectAttrName(),
                    DictionaryAttr::get(context,
                                        {NamedAttribute(
                                            StringAttr::get(context, "reason"),
                                            StringAttr::get(context, why))}));
}

/// A kernel's tile config as text, or nullopt for a kernel without one.
std::optional<std::string> getConfigText(func::FuncOp kernel) {
  FailureOr<TileConfig> config = TileConfig::fromAttr(
      kernel->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName()));
  if (failed(config))
    return std::nullopt;
  return config->str();
}

/// The dispatches of the kernels the search takes (GEMMs, convs,
/// elementwise, data-movement and row-reduction kernels, but none of
/// `givenKinds`), per kernel in program order.
llvm::MapVector<func::FuncOp, SmallVector<dg::DispatchOp>>
getSearchedDispatches(ModuleOp module, SymbolTable &symbols,
                      ArrayRef<std::string> givenKinds) {
  llvm::MapVector<func::FuncOp, SmallVector<dg::DispatchOp>> byKernel;
  module.walk([&](dg::DispatchOp dispatch) {
    auto kernel = symbols.lookup<func::FuncOp>(dispatch.getCallee());
    if (!kernel)
      return;
    auto kind = kernel->getAttrOfType<StringAttr>("dyncc.kind");
    StringRef name = kind ? kind.getValue() : "elementwise";
    if ((name == "gemm" || name == "conv" || name == "elementwise" ||
         name == "reduce" || name == "data_movement") &&
        !llvm::is_contained(givenKinds, name))
      byKernel[kernel].push_back(dispatch);
  });
  return byKernel;
}

struct SearchTiles final
    : ::dyncc::impl::SearchTilesPassBase<SearchTiles> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const cost::Device *described = cost::lookupDevice(device);
    if (!described) {
      module.emitError("unknown device '")
          << device
          << "' (expected a100, rtx3090, h100, h200, sm_80, sm_86 or sm_90)";
      return signalPassFailure();
    }
    // Candidates fit every target: code generation promotes a block's
    // tiles to shared memory within the least of the targets' limits, and a
    // tile over it would not compile as the model describes it.
    cost::Device limited = *described;
    if (sharedBytes > 0)
      limited.maxSharedBytesPerBlock = std::min<int64_t>(
          limited.maxSharedBytesPerBlock, sharedBytes + kDynamicSymbolBytes);
    const cost::Device *target = &limited;
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
    // Candidates per getCandidatesKey.
    std::map<std::string, Candidates> candidates;

    // First the searches: each distinct problem once (a model's repeated
    // layers share one), in parallel; they are pure C++ over the cost
    // model. Then, per kernel, its variants and its dispatches' tables.
    struct Search {
      SearchSpace space;
      const Candidates *tiles;
      Selection selection;
    };
    std::vector<Search> searches;
    std::map<std::string, size_t> searchOf;
    struct Pending {
      dg::DispatchOp dispatch;
      size_t search;
    };
    std::vector<std::pair<func::FuncOp, std::vector<Pending>>> pending;
    for (auto &[kernel, dispatches] :
         getSearchedDispatches(module, symbols, givenKinds)) {
      auto outType =
          dyn_cast<RankedTensorType>(kernel.getFunctionType().getResult(0));
      if (!outType || outType.getRank() < 1)
        continue;
      std::vector<Pending> &kernelPending =
          pending.emplace_back(kernel, std::vector<Pending>()).second;
      for (dg::DispatchOp dispatch : dispatches) {
        std::string why;
        FailureOr<SearchSpace> space =
            getSearchSpace(dispatch, kernel, facts, why);
        if (failed(space)) {
          setReason(dispatch, why);
          continue;
        }
        std::string problem = space->str();
        if (auto it = searchOf.find(problem); it != searchOf.end()) {
          kernelPending.push_back({dispatch, it->second});
          continue;
        }
        bool host = takesHostSearch(*space, hostLevels);
        Candidates &tiles = candidates[getCandidatesKey(*space, host)];
        if (tiles.size() == 0)
          tiles = host ? getHostCandidates(*space, *target)
                       : getCandidates(*space, *target);
        if (tiles.size() == 0) {
          setReason(dispatch,
                    space->nSplit ? "no candidate tile (a block's N tile "
                                    "must divide the head size " +
                                        std::to_string(space->nSplit) + ")"
                    : space->columnPlace
                        ? "no candidate tile (a thread's tile holds the "
                          "column reduction's axis whole, up to " +
                              std::to_string(space->columnSize()) +
                              " elements, more than " +
                              std::to_string(cost::kMaxColumnTileBytes) +
                              " bytes)"
                        : "no candidate tile");
          continue;
        }
        searchOf.insert({std::move(problem), searches.size()});
        kernelPending.push_back({dispatch, searches.size()});
        searches.push_back({*space, &tiles, Selection()});
      }
    }
    parallelFor(context, 0, searches.size(), [&](size_t i) {
      Search &search = searches[i];
      const Candidates &tiles = *search.tiles;
      search.selection =
          tiles.host
              ? selectHost(search.space, tiles, hostLevels, options)
              : select(
                    search.space, tiles.size(),
                    [&](size_t c, const KeyValues &keys) {
                      return tiles.predict(c, search.space, keys, *target);
                    },
                    options);
    });

    for (auto &[kernel, dispatches] : pending) {
      auto outType =
          cast<RankedTensorType>(kernel.getFunctionType().getResult(0));
      // The kernel's variants: the configs chosen for any of its
      // dispatches.
      std::vector<std::string> variantConfigs;
      struct Chosen {
        dg::DispatchOp dispatch;
        SearchSpace space;
        Selection selection;
        SearchInfo info;
      };
      std::vector<Chosen> searched;
      // The kernel's dispatches of one search share its entry.
      std::map<size_t, size_t> bySearch;
      for (auto [dispatch, index] : dispatches) {
        if (auto it = bySearch.find(index); it != bySearch.end()) {
          searched.push_back(searched[it->second]);
          searched.back().dispatch = dispatch;
          continue;
        }
        bySearch.insert({index, searched.size()});
        const Search &search = searches[index];
        Selection selection = search.selection;
        SearchInfo info{search.tiles->host
                            ? cost::getHostSearchDevice(hostLevels.front())
                            : target->name,
                        search.tiles->host ? kHostTableThreads : 0,
                        int64_t(search.tiles->size()),
                        int64_t(selection.considered),
                        selection.maxRegret,
                        cap,
                        targetRegret};
        // Chosen indices become indices into the kernel's variants.
        for (size_t &c : selection.chosen) {
          std::string config = search.tiles->str(c);
          auto found = llvm::find(variantConfigs, config);
          c = found - variantConfigs.begin();
          if (found == variantConfigs.end())
            variantConfigs.push_back(config);
        }
        searched.push_back({dispatch, search.space, selection, info});
      }
      if (variantConfigs.empty())
        continue;

      // A 1-D conv's configs have three sizes, for [N, C, W]: also a 2-D
      // conv's over a line, which code generation builds as one once it
      // drops the unit rows (getConvProblem), and whose configs would read
      // as 2-D tiles with four.
      int64_t configRank = outType.getRank();
      if (auto conv =
              kernel->getAttrOfType<DictionaryAttr>(getConvProblemAttrName()))
        if (auto dims = conv.getAs<IntegerAttr>("spatial_dims");
            dims && dims.getInt() == 1)
          configRank = 3;
      // Variant 0 is the kernel itself; the others are clones after it.
      SmallVector<Attribute> variantRefs;
      OpBuilder builder(kernel);
      builder.setInsertionPointAfter(kernel);
      for (auto [i, text] : llvm::enumerate(variantConfigs)) {
        std::string error;
        std::optional<TileConfig> config = TileConfig::parse(text, error);
        if (!config) {
          kernel.emitOpError("tile search chose a config code generation "
                             "rejects: ")
              << text << " (" << error << ")";
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
                         config->fitToRank(configRank).toAttr(context));
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
    // The host's search has no ptxas resources to refine by.
    if (deviceName && !cost::getHostSearchLevel(deviceName.str()).empty())
      return;
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
    Candidates tiles;
    tiles.model = space->model;
    SmallVector<Attribute> kept;
    int64_t dropped = 0;
    for (Attribute ref : variants) {
      auto symbol = dyn_cast<FlatSymbolRefAttr>(ref);
      auto variant =
          symbol ? symbols.lookup<func::FuncOp>(symbol.getValue()) : nullptr;
      std::optional<std::string> config =
          variant ? getConfigText(variant) : std::nullopt;
      // A split-K variant's function describes its kernels: the part's
      // resources are the tile's, and a spill in either drops it.
      func::FuncOp lead = variant;
      std::optional<CompiledKernel> sumReport;
      if (std::optional<SplitKernels> split =
              variant ? getSplitKernels(variant) : std::nullopt) {
        lead = split->part;
        sumReport = compiled(split->sum.getSymName());
      }
      std::optional<CompiledKernel> report =
          config && lead ? compiled(lead.getSymName()) : std::nullopt;
      if ((report && report->spillBytes > 0) ||
          (sumReport && sumReport->spillBytes > 0)) {
        ++dropped;
        continue;
      }
      int64_t sharedBytes = 0;
      if (report && lead)
        if (auto dynamic = lead->getAttrOfType<IntegerAttr>(
                getDynamicSharedBytesAttrName()))
          sharedBytes = report->sharedBytes + dynamic.getInt();
      if (!config ||
          !tiles.add(*config, *space, report ? report->registers : 0,
                     sharedBytes)) {
        result = dispatch.emitOpError("has a variant whose config the search "
                                      "does not model: ")
                 << ref;
        return;
      }
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
    Selection selection = select(
        *space, tiles.size(),
        [&](size_t c, const KeyValues &keys) {
          return tiles.predict(c, *space, keys, *device);
        },
        options);
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
