//===- AssignTileConfig.cpp - Default tile configurations -----------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/CostModel/Conv.h"
#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Tiling/KernelShapes.h"
#include "dyncc/Tiling/Passes.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace dyncc {
#define GEN_PASS_DEF_ASSIGNTILECONFIGPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// The window of the kernel's convolution: the product of the static
/// extents of the reduction loops that index an input through a sum
/// (`oh * s + kh`), 9 for a 3x3 conv, 1 when there is none.
static int64_t getWindowTaps(func::FuncOp func) {
  int64_t taps = 1;
  func.walk([&](linalg::LinalgOp op) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    int64_t product = 1;
    for (unsigned loop = 0; loop < iterators.size(); ++loop) {
      if (iterators[loop] != utils::IteratorType::reduction ||
          ShapedType::isDynamic(ranges[loop]))
        continue;
      bool inSum = llvm::any_of(op.getIndexingMapsArray(), [&](AffineMap map) {
        return llvm::any_of(map.getResults(), [&](AffineExpr expr) {
          return expr.getKind() == AffineExprKind::Add &&
                 expr.isFunctionOfDim(loop);
        });
      });
      if (inSum)
        product *= ranges[loop];
    }
    taps = std::max(taps, product);
  });
  return taps;
}

/// The default conv k-step (input channels per step) for a window of
/// `taps`: each thread's product per step is fully unrolled, so a step is
/// kept to at most 128 multiply-adds per output (16 channels of a 1x1 conv,
/// 8 of a 3x3, 2 of a 7x7). 16 channels of a 3x3 window unrolled to 255
/// registers and spilled on sm_80 (light_resnet50's stride-2 convs).
static int64_t getConvKStep(int64_t taps) {
  int64_t kStep = 16;
  while (kStep > 1 && kStep * taps > 128)
    kStep /= 2;
  return kStep;
}

struct AssignTileConfig final
    : ::dyncc::impl::AssignTileConfigPassBase<AssignTileConfig> {
  using Base::Base;

  void runOnOperation() override {
    llvm::StringMap<TileConfig> byKind;
    for (StringRef entry : overrides) {
      auto [kind, text] = entry.split('=');
      std::string error;
      if (!dg::symbolizeFusionKind(kind)) {
        error = "unknown kernel kind '" + kind.str() +
                "' (expected gemm, conv, reduce, elementwise or "
                "data_movement)";
      } else if (text == "default") {
        // The kind's default config, which the tile search then leaves
        // alone (the driver passes the kind as given).
        continue;
      } else if (std::optional<TileConfig> config =
                     TileConfig::parse(text, error)) {
        byKind[kind] = *config;
        continue;
      }
      getOperation().emitError("bad tile configuration '")
          << entry << "': " << error;
      return signalPassFailure();
    }

    WalkResult result = getOperation().walk([&](func::FuncOp func) {
      if (!func->hasAttr("dyncc.kernel"))
        return WalkResult::advance();
      if (func.getNumResults() == 0) {
        func.emitOpError("kernel has no result to tile");
        return WalkResult::interrupt();
      }
      auto outType = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
      if (!outType) {
        func.emitOpError("kernel result is not a ranked tensor");
        return WalkResult::interrupt();
      }
      if (auto existing =
              func->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName())) {
        FailureOr<TileConfig> config = TileConfig::fromAttr(existing);
        if (failed(config) ||
            (int64_t)config->blockTile.size() != outType.getRank()) {
          func.emitOpError("has an invalid ")
              << TileConfig::getAttrName() << " for an output of rank "
              << outType.getRank();
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      StringRef kind = "elementwise";
      if (auto kindAttr = func->getAttrOfType<StringAttr>("dyncc.kind"))
        kind = kindAttr.getValue();
      auto it = byKind.find(kind);
      // A GEMM's problem, for the default config, the plan and the tile
      // search to evaluate from the dispatch's symbols.
      FailureOr<GemmProblemExprs> problem = failure();
      if (kind == "gemm")
        problem = getGemmProblem(func);
      // A GEMM whose products take f16 or bf16 operands and accumulate in
      // f32 defaults to tensor cores, whatever its result's type (an f16
      // attention's scores cast to f32 for the softmax).
      bool tensorCore = succeeded(problem) && problem->tensorCores;
      TileConfig config =
          it != byKind.end()
              ? it->second.fitToRank(outType.getRank())
              : TileConfig::getDefault(kind, outType.getRank(), tensorCore);
      if (it == byKind.end() && kind == "conv")
        config.kStep = getConvKStep(getWindowTaps(func));
      // A static K code generation would take to SIMT threads with the
      // tensor-core default (tensorCoresTakeStaticK): SIMT's default then.
      if (it == byKind.end() && !config.mma.empty())
        if (std::optional<int64_t> k = problem->k.getConstant();
            k && !tensorCoresTakeStaticK(*k, config.kStep, config.mma[2]))
          config = TileConfig::getDefault(kind, outType.getRank(),
                                          /*tensorCore=*/false);
      func->setAttr(TileConfig::getAttrName(), config.toAttr(&getContext()));
      if (succeeded(problem)) {
        Builder b(&getContext());
        SmallVector<NamedAttribute> entries = {
            b.getNamedAttr("batch", b.getStringAttr(problem->batch.str())),
            b.getNamedAttr("m", b.getStringAttr(problem->m.str())),
            b.getNamedAttr("n", b.getStringAttr(problem->n.str())),
            b.getNamedAttr("k", b.getStringAttr(problem->k.str())),
            b.getNamedAttr("operand_bytes",
                           b.getI64IntegerAttr(problem->operandBytes)),
            b.getNamedAttr("output_bytes",
                           b.getI64IntegerAttr(problem->outputBytes))};
        if (problem->products != 1)
          entries.push_back(b.getNamedAttr(
              "products", b.getI64IntegerAttr(problem->products)));
        if (problem->nSplit != 0)
          entries.push_back(
              b.getNamedAttr("n_split", b.getI64IntegerAttr(problem->nSplit)));
        if (problem->tensorCores)
          entries.push_back(
              b.getNamedAttr("tensor_cores", b.getBoolAttr(true)));
        func->setAttr(getGemmProblemAttrName(), b.getDictionaryAttr(entries));
      }
      // A conv's problem, for the tile search.
      if (kind == "conv")
        if (FailureOr<ConvProblemExprs> problem = getConvProblem(func);
            succeeded(problem)) {
          Builder b(&getContext());
          // The static parts in the cost model's order.
          cost::ConvProblem statics;
          statics.inC = problem->inC;
          statics.kh = problem->kh;
          statics.kw = problem->kw;
          statics.strideH = problem->strideH;
          statics.strideW = problem->strideW;
          statics.dilationH = problem->dilationH;
          statics.dilationW = problem->dilationW;
          statics.groups = problem->groups;
          SmallVector<NamedAttribute> entries = {
              b.getNamedAttr("batch", b.getStringAttr(problem->batch.str())),
              b.getNamedAttr("out_c", b.getStringAttr(problem->outC.str())),
              b.getNamedAttr("out_h", b.getStringAttr(problem->outH.str())),
              b.getNamedAttr("out_w", b.getStringAttr(problem->outW.str())),
              b.getNamedAttr("window",
                             b.getDenseI64ArrayAttr(statics.window())),
              b.getNamedAttr("element_bytes",
                             b.getI64IntegerAttr(problem->elementBytes))};
          // A 1-D conv's tiles have three sizes a level.
          if (problem->spatialDims != 2)
            entries.push_back(b.getNamedAttr(
                "spatial_dims", b.getI64IntegerAttr(problem->spatialDims)));
          func->setAttr(getConvProblemAttrName(), b.getDictionaryAttr(entries));
        }
      // A row-wise kernel's problem, for the tile search.
      if (kind == "elementwise" || kind == "reduce" || kind == "data_movement")
        if (FailureOr<RowProblemExprs> problem = getRowProblem(func);
            succeeded(problem)) {
          Builder b(&getContext());
          SmallVector<NamedAttribute> entries = {
              b.getNamedAttr("batch", b.getStringAttr(problem->batch.str())),
              b.getNamedAttr("rows", b.getStringAttr(problem->rows.str())),
              b.getNamedAttr("length", b.getStringAttr(problem->length.str())),
              b.getNamedAttr("planes", b.getStringAttr(problem->planes.str())),
              b.getNamedAttr("element_bytes",
                             b.getI64IntegerAttr(problem->elementBytes)),
              b.getNamedAttr("bytes_per_element",
                             b.getI64IntegerAttr(problem->bytesPerElement)),
              b.getNamedAttr("reduction",
                             b.getI64IntegerAttr(problem->reduction)),
              b.getNamedAttr("scalar_access",
                             b.getI64IntegerAttr(problem->scalarAccess))};
          // A column reduction: the extent each output folds, and where the
          // result spans it.
          if (problem->columns) {
            entries.push_back(b.getNamedAttr(
                "column", b.getStringAttr(problem->column.str())));
            entries.push_back(b.getNamedAttr(
                "column_place", b.getI64IntegerAttr(problem->columnPlace)));
            entries.push_back(b.getNamedAttr(
                "column_lanes", b.getI64IntegerAttr(problem->columnLanes)));
          }
          func->setAttr(getRowProblemAttrName(), b.getDictionaryAttr(entries));
        }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
