//===- TileAndFuse.cpp - Block and thread tiling with fusion --------------===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Tiles the root op of a kernel function twice through TilingInterface, first
// to blocks and then to threads, fusing its producers into each level, as the
// kernel's tile configuration says.
//
//===----------------------------------------------------------------------===//

#include "dyncc/Codegen/Passes.h"
#include "dyncc/Tiling/TileConfig.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace dyncc {
#define GEN_PASS_DEF_TILEANDFUSEPASS
#include "dyncc/Codegen/Passes.h.inc"
} // namespace dyncc

using namespace mlir;
using namespace dyncc;

namespace {

/// Tiles `root` with `sizes` (one per output dimension; further loops, the
/// reductions, stay whole) into an scf.forall with the given mapping, and
/// fuses its producers. Returns the tiled root.
static FailureOr<TilingInterface> tileLevel(RewriterBase &rewriter,
                                            TilingInterface root,
                                            ArrayRef<int64_t> sizes,
                                            bool threads) {
  MLIRContext *ctx = rewriter.getContext();
  size_t numLoops = root.getLoopIteratorTypes().size();
  if (numLoops < sizes.size())
    return root->emitOpError("has ")
           << numLoops << " loops but the tile config has " << sizes.size()
           << " sizes";
  if (sizes.size() > 3)
    return root->emitOpError("tiling ")
           << sizes.size()
           << " output dimensions onto a grid is not supported yet (at most 3)";
  SmallVector<int64_t> allSizes(sizes.begin(), sizes.end());
  allSizes.resize(numLoops, 0);

  SmallVector<Attribute> mapping;
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto id = static_cast<gpu::MappingId>(sizes.size() - 1 - i);
    mapping.push_back(threads ? Attribute(gpu::GPUThreadMappingAttr::get(ctx, id))
                              : Attribute(gpu::GPUBlockMappingAttr::get(ctx, id)));
  }

  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(ctx, allSizes));
  tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  tiling.setMapping(mapping);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);

  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(result))
    return root->emitOpError("could not be tiled and fused");

  for (OpResult value : root->getResults())
    rewriter.replaceAllUsesWith(value, result->replacements.lookup(value));
  // The untiled producers are dead now.
  SmallVector<Operation *> dead{root};
  dead.append(result->fusedProducers.begin(), result->fusedProducers.end());
  for (Operation *op : dead)
    if (op->use_empty())
      rewriter.eraseOp(op);
  return cast<TilingInterface>(result->tiledAndFusedOps.front());
}

struct TileAndFuse final : ::dyncc::impl::TileAndFusePassBase<TileAndFuse> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func->hasAttr("dyncc.kernel"))
      return;
    FailureOr<TileConfig> config = TileConfig::fromAttr(
        func->getAttrOfType<DictionaryAttr>(TileConfig::getAttrName()));
    if (failed(config)) {
      func.emitOpError("has no valid ") << TileConfig::getAttrName();
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    if (ret.getNumOperands() == 0)
      return;
    if (ret.getNumOperands() > 1) {
      // Only the root's producers are fused into the tile loops; a second
      // result would be computed outside them, once per block.
      func.emitOpError("has ")
          << ret.getNumOperands()
          << " results; multi-result kernels are not tiled yet";
      return signalPassFailure();
    }
    auto root = dyn_cast_or_null<TilingInterface>(
        ret.getOperand(0).getDefiningOp());
    if (!root) {
      func.emitOpError("the first result is not produced by a tileable op");
      return signalPassFailure();
    }

    IRRewriter rewriter(&getContext());
    FailureOr<TilingInterface> blockRoot =
        tileLevel(rewriter, root, config->blockTile, /*threads=*/false);
    if (failed(blockRoot))
      return signalPassFailure();
    if (failed(tileLevel(rewriter, *blockRoot, config->threadTile,
                         /*threads=*/true)))
      return signalPassFailure();
  }
};

} // namespace
