//===- AssignTileConfig.cpp - Default tile configurations -----------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "dyncc/Dialect/Dg/IR/Dg.h"
#include "dyncc/Tiling/Passes.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace dyncc {
#define GEN_PASS_DEF_ASSIGNTILECONFIGPASS
#include "dyncc/Tiling/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

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
      // A GEMM with a half-precision result takes half-precision operands
      // (ONNX MatMul and Gemm have one type): tensor cores, accumulating in
      // f32. Code generation falls back to SIMT where the operands differ.
      bool tensorCore = isa<Float16Type>(outType.getElementType());
      TileConfig config =
          it != byKind.end()
              ? it->second.fitToRank(outType.getRank())
              : TileConfig::getDefault(kind, outType.getRank(), tensorCore);
      func->setAttr(TileConfig::getAttrName(), config.toAttr(&getContext()));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
