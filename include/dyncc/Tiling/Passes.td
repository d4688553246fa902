//===- Passes.td - Tiling passes ---------------------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_PASSES_TD
#define DYNCC_TILING_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldGemmBatchPass : Pass<"dyncc-fold-gemm-batch", "mlir::ModuleOp"> {
  let summary = "Compute a shared-weight GEMM's batch as rows of M";
  let description = [{
    A GEMM kernel whose B does not depend on the batch (a dense layer on a
    `[B, S, K]` input, `[K, N]` weights) computes one `[B*S, K] x [K, N]`
    product: its contraction's M loops (every loop only A and the output
    index) become one, with `linalg::collapseOpIterationDims`, and so do
    the leading loops of its epilogue (bias, activation, residual), which
    must run along the output and read their operands contiguously along
    those loops. Inputs are collapsed and results expanded back at the
    kernel's boundary only; the kernel gets `dyncc.folded_batch`, and
    code generation keeps that expansion at the end.

    The problem recorded next then has batch 1 and M = B*S, so the tile
    search keys the layer's table on the one product (docs/CostModel.md).
    A kernel with any other op (a reshape, a transpose, a reduction, a
    second contraction), an epilogue that broadcasts along the batch, or a
    batched B keeps its loops.
  }];
}

def UnfoldGemmRowsPass : Pass<"dyncc-unfold-gemm-rows", "mlir::ModuleOp"> {
  let summary = "Compute a product whose rows the kernel splits as a batched one";
  let description = [{
    TensorFlow's and Keras' dense layers on a `[B, S, K]` input (`Tensordot`)
    are exported as a Reshape to `[B*S, K]`, a MatMul and a Reshape back to
    `[B, S, N]`. Where the result then goes to a head split (a reshape to
    `[B, S, H, D]` and a transpose, the Q, K and V of a TF BERT), the kernel
    has two splits on the way from its product to its result, and its GEMM
    problem is unknown: the product's M runs across `B`, which the result
    has as a batch of its own.

    In a GEMM kernel with no problem (`getGemmProblem` fails), each
    contraction of one M and one N loop whose result reaches a
    `tensor.expand_shape` splitting its M alone, through elementwise ops of
    its shape (an f16 product's cast), each its value's only user, is
    computed on the split rows instead: the expansion is folded into it and
    the ops between (upstream's
    `linalg::populateFoldReshapeOpsByExpansionPatterns`, on those ops and
    what the folding creates only), so A is read as `[B, S, K]` and the
    product writes `[B, S, N]` with B as a batch that the weight does not
    read: the form PyTorch's exporter writes, whose problem and layouts
    `getGemmProblem` and code generation already know. The kernel is kept
    so only where it then has a problem; otherwise, and where its problem
    is known already or it has no such product, it is left as it was.
  }];
}

def PointwiseConvAsGemmPass
    : Pass<"dyncc-pointwise-conv-as-gemm", "mlir::ModuleOp"> {
  let summary = "Compute a one-pixel convolution as a GEMM over the image's pixels";
  let description = [{
    A conv kernel whose convolution has a window of one pixel, stride 1
    and no padding (its image read at the output's pixel) and one group
    computes `out[n, f, p] = sum_c W[f, c] * X[n, c, p]` over the pixels
    `p` of the image: per image, the `[F, C]` filter times the `[C, H*W]`
    pixels. The kernel is rewritten to compute it so: the conv becomes a
    contraction of the filter (A, collapsed to `[F, C]`) and the image (B),
    accumulating from zero, its bias (the conv's initial value) added by an
    epilogue op after it; every op has its image loops collapsed into one
    (`linalg::collapseOpIterationDims`), the kernel's inputs collapsed and
    its results expanded back at its boundary only. The kernel becomes a
    `gemm` one, with `dyncc.folded_image` (code generation keeps that
    expansion at the end), so the problem recorded next is `N x [F x C] x
    [C x H*W]` and the tile search and code generation treat it as a GEMM.

    A kernel with any other op (a pad, a reshape, a reduction), an
    epilogue that does not run along the output with the image contiguous,
    or a conv of any other window, stride, padding or grouping, stays a
    conv kernel.
  }];
}

def CollapseRowDimsPass : Pass<"dyncc-collapse-row-dims", "mlir::ModuleOp"> {
  let summary = "Compute a reduction over several trailing axes as one over rows";
  let description = [{
    A `reduce` kernel whose reductions over several loops (a LayerNorm over
    `[C, H, W]`, an InstanceNorm's statistics over `[H, W]`) all reduce
    the same trailing loops of the same space is rewritten to reduce rows:
    each op over that space has those loops collapsed into one, its
    operands collapsed alike (a row read in order becomes one dimension; a
    statistic read at 0 over trailing unit dimensions, one unit dimension),
    its results expanded back; the reshapes between two ops cancel, so only
    the kernel's inputs are collapsed and its results expanded, at its
    boundary (`dyncc.folded_rows`: code generation keeps that expansion at
    the end). The problem recorded next is then a row problem, which the
    tile search takes, and code generation gives a warp or a block per row.

    A kernel with a reduction that is not along trailing loops, two
    reductions over different loops, an op over the full space that reads
    the reduced loops otherwise (transposed, some of them, in an
    expression; a body that indexes them), or any other op over more
    loops keeps its loops.
  }];
}

def SplitKPass : Pass<"dyncc-split-k", "mlir::ModuleOp"> {
  let summary = "Split a GEMM variant's K over blocks: partial sums, then their sum";
  let description = [{
    For each kernel whose `dyncc.tile_config` has `split_k S` (the tile
    search's split-K candidates, or `--tile-config`), builds two kernels:
    - `<kernel>_part` computes the contraction over each S-th of K into its
      own slice of a workspace, its last argument, an f32 tensor
      `[S, ...destination's shape]`: a batched contraction whose outermost
      parallel loop is the part (operands expanded from `[.., K]` to
      `[.., S, K/S]`), tiled with the variant's tiles and one part per
      block along it;
    - `<kernel>_sum` is the kernel with its contraction replaced by the
      elementwise sum of the S slices, the epilogue unchanged.

    The kernel's function then describes the pair (`dyncc.split_k = {part,
    sum, parts}`) and is no longer compiled; the plan launches the part,
    then the sum, in its variant's step, with the workspace as a buffer of
    kind `workspace`.

    A kernel must have one contraction with one reduction loop over a
    static K that splits into S parts of whole k-steps, operands that are
    its arguments (or their reshapes), and an f32 accumulator of its
    destination's shape starting at zero; else the pass fails naming why.
  }];
}

def AssignTileConfigPass : Pass<"dyncc-assign-tile-config", "mlir::ModuleOp"> {
  let summary = "Give every kernel function a tile configuration";
  let description = [{
    Stands where the tile search will stand: each `dyncc.kernel` function
    without a `dyncc.tile_config` gets the default configuration for its kind
    and output rank (dyncc/Tiling/TileConfig.h). Existing configurations are
    checked and kept.

    `override=KIND=CONFIG` replaces the default for one kind (`gemm`, `conv`,
    `reduce`, `elementwise`, `data_movement`), in the form TileConfig prints,
    for example `gemm=block 16x8 thread 2x2 k 5`. Sizes apply to the
    innermost output dimensions (outer ones get 1). The driver's
    `--tile-config` sets it: for testing variants the search will emit, and
    for trying a configuration by hand. `KIND=default` keeps the kind's
    default configuration (the driver then keeps the search off KIND's
    kernels too).
  }];
  let options = [
    ListOption<"overrides", "override", "std::string",
               "KIND=CONFIG: the configuration for kernels of KIND">
  ];
}

def SearchTilesPass : Pass<"dyncc-search-tiles", "mlir::ModuleOp"> {
  let summary = "Choose each kernel's tile variants with the cost model";
  let description = [{
    The tile search (docs/CostModel.md). For every `dg.dispatch` of a GEMM
    kernel (one whose `dyncc.gemm_problem` the outlining recorded) or of a
    row-wise kernel (elementwise, or reductions along rows: its
    `dyncc.row_problem`) or of a 2-D conv (its `dyncc.conv_problem`), the
    problem's dimensions (batch, M, N and K; batch, rows and length; or
    batch and the output's channels, rows and columns) are put in terms of
    the model's symbols,
    and the distinct ones that are not constant become the keys of the
    dispatch's selection: none (a static problem), one (M = `seq`, or
    `batch*seq` for a dense layer whose batch was folded into M) or two
    (the batch and `seq` of a batched product: attention's `12*batch` and
    `seq`), or three (a conv's batch, output rows and output columns), up
    to four. Over the keys' ranges (from the symbols' facts)
    the analytical model predicts every candidate tile of the device
    (dyncc/CostModel), and range partitioning chooses at most `cap`
    variants, aiming for `target-regret`, with an interval table (one key)
    or a decision table (a level per key) that picks among them.

    The kernel function becomes the first variant (its tile config
    replaced) and is cloned, as `<name>_v<i>`, for the others, across all
    of its dispatches. Each dispatch gets `dyncc.variant_select`: the
    device, the candidate counts, the achieved regret, the keys (DimExpr
    text over the symbols), its variants (kernel symbols) and the table
    (`lower` and `variant`; several keys: `lower` of the first and one
    `inner` node per interval, nested a level per key, the last key's
    nodes with `lower` and `variant`). A dispatch whose problem the search
    cannot express keeps its kernel's configuration, and records why
    (`reason`).

    With `host-levels` (an artifact whose only target is the host CPU),
    f32 GEMMs search the host's own candidates (cost::
    enumerateHostGemmTiles) with the host model (cost::predictHostGemm),
    whose time depends on the build of the host code and on the threads
    that run the blocks: the variants cover every build listed at 2, 8
    and 32 threads (the partition's first dimension is that context), and
    the table picks among them for the first build at 8 threads (the run-
    time picks by the model for its own build and threads). The device is
    then recorded as `host-<first build>`, with `host_threads`. Other
    kernels (row-wise, convs, f16 GEMMs, and GEMMs of three or four keys,
    whose grid with the context would thin the contexts) keep the device's
    search. A head narrower than 4 f32 has no tile of either search.
  }];
  let options = [
    Option<"device", "device", "std::string", "\"h100\"",
           "the device description the model predicts for "
           "(a100, rtx3090, h100, h200, or sm_80, sm_86, sm_90)">,
    Option<"cap", "cap", "int64_t", "8",
           "the most variants per dispatch">,
    Option<"targetRegret", "target-regret", "double", "0.03",
           "the predicted regret the variants aim for at every point">,
    ListOption<"givenKinds", "given-kinds", "std::string",
               "kernel kinds whose configuration was given (--tile-config): "
               "not searched">,
    Option<"sharedBytes", "shared-bytes", "int64_t", "0",
           "the shared memory a block may take on every compile target "
           "(code generation's budget); 0: the device's own limit">,
    ListOption<"hostLevels", "host-levels", "std::string",
               "an artifact with no GPU target: the builds of its host code "
               "(x86-64-v2, x86-64-v3, x86-64-v4; generic is the portable "
               "build's constants). Its f32 GEMMs choose among host tiles "
               "by the host model, a set that covers every build">
  ];
}

#endif // DYNCC_TILING_PASSES_TD
