//===- Passes.td - Dg transformation passes ----------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_TRANSFORMS_PASSES_TD
#define DYNCC_DIALECT_DG_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def InferShapesPass : Pass<"dyncc-infer-shapes", "mlir::ModuleOp"> {
  let summary = "Propagate symbolic shapes through the graph";
  let description = [{
    A worklist (TSCompiler, Algorithm 1) computes each op's result shapes
    with its `SymbolicShapeOpInterface` shape function from the operands'
    symbolic shapes, first in program order, then again for the ops whose
    operands facts learned later (sibling inference) refine, until a round
    learns nothing; then it rewrites the result types with `#sym.shape`
    encodings. The
    types the importer wrote (declared shapes are not trusted) are replaced.
    Equalities the ops imply go through the constraint store: a symbol equal
    to another expression is substituted everywhere, two different constants
    are an error naming the op, and the rest become `sym.constraint` ops that
    the run-time checks. After this pass no dimension is an anonymous `?`.

    Before: `%0 = dg.matmul %x, %w : (...) -> tensor<?x?xf32>`
    After:  `%0 = dg.matmul %x, %w : (...) -> tensor<?x64xf32, #sym.shape<[B, 64]>>`
  }];
  let dependentDialects = ["::dyncc::sym::SymDialect"];
}

def FoldShapeComputationsPass
    : Pass<"dyncc-fold-shape-computations", "mlir::ModuleOp"> {
  let summary = "Replace shape sub-graphs by their symbolic contents";
  let description = [{
    Graph clean-up before fusion. After propagation, the contents of every
    small integer tensor computed from shapes (`Shape -> Gather -> Unsqueeze
    -> Concat`, sizes, element counts, computed slice bounds) are known as
    expressions over the symbols. Each such tensor that something still uses
    is replaced by one `dg.constant` (all contents constant) or
    `dg.dim_values` (symbolic), a `constant_of_shape` of a static shape
    becomes a splat `dg.constant`, and the ops left without users are
    removed, so no kernel computes a shape. Runs after `dyncc-infer-shapes`.

    Before: `%s = dg.shape_of %x ; %b = dg.gather %s, %c0 ; ...
             %t = dg.concat %ub, %ul, %c12, %c64`
    After:  `%t = dg.dim_values #sym.shape<[B, L, 12, 64]> : tensor<4xi64>`
  }];
}

def DecomposePass : Pass<"dyncc-decompose", "mlir::func::FuncOp"> {
  let summary = "Split compound ops into the primitives fusion works on";
  let description = [{
    Graph clean-up before fusion: BatchNormalization (inference, constant
    statistics) after a conv with constant weights is folded into the conv's
    weights and bias when the conv has no other user; Softmax and LogSoftmax become
    `reduce_max`, `sub`, `exp`, `reduce_sum` and `div` (or `log`, `sub`);
    LayerNormalization becomes two `reduce_mean`s and elementwise ops (when
    its statistics outputs are unused); Gemm becomes `transpose`s, a
    `matmul`, and `mul`/`add` for alpha, beta and C. Reductions keep their
    dims, so the row structure stays visible to the reduce-level pass.
    Runs after `dyncc-infer-shapes`: result types are built from the
    operands' symbolic shapes.
  }];
}

def ConvIm2ColPass : Pass<"dyncc-conv-im2col", "mlir::ModuleOp"> {
  let summary = "Windowed convs the cost model predicts faster as a copy and a GEMM";
  let description = [{
    A 2-D conv of one group with a window wider than a pixel, explicit
    padding (or VALID) and constant weights becomes `dg.im2col` of its input
    (every pixel's window as channels, [N, C*KH*KW, OH, OW]) and a 1x1 conv
    of that with the weights viewed as [F, C*KH*KW, 1, 1], which
    `dyncc-pointwise-conv-as-gemm` makes a GEMM (tensor cores in f16). In
    `auto` mode a conv is rewritten where the cost model
    (`cost::predictConvForms`) predicts the copy plus the GEMM faster than
    the direct conv on `device`: at five sizes log-spaced from all symbols
    at their lower bounds to all at their upper bounds, the geometric mean
    of im2col's time over the direct conv's is below 1. The prediction is
    kept on the conv as `dyncc.conv_forms` (microseconds summed over the
    sizes, and that ratio). `always` rewrites every such conv, `never`
    none. Runs after
    `dyncc-decompose`, whose batch-norm folds take the conv as it is.

    im2col has two forms, and in `auto` and `always` the model picks
    between them the same way: per image (above), or with the batch folded
    into the GEMM's columns, where the batch is not the constant 1: the
    copy as [C*KH*KW, N, OH, OW] (`batch_inner`), one `dg.matmul` of the
    weights viewed as [F, C*KH*KW] and that copy flattened to
    [C*KH*KW, N*OH*OW] (the bias added along its rows), and its
    [F, N, OH, OW] transposed back to NCHW, which dyncc-fuse-elementwise
    runs with the conv's elementwise consumers. A per-image GEMM of a
    small image (196 columns at 14x14) wastes most of its tiles' columns
    and blocks; the folded one has N*OH*OW columns. `per-image` and
    `folded` force im2col in that form.

    Before: `%y = dg.conv %x, %w {pads = [1,1,1,1], ...} : ... -> tensor<?x64x56x56xf16>`
    After:  `%c = dg.im2col %x {kernel_shape = [3, 3], ...} -> tensor<?x576x56x56xf16>`
            `%y = dg.conv %c, %w1 {pads = [0,0,0,0], ...}` with `%w1 : 64x576x1x1`
  }];
  let options = [
    Option<"device", "device", "std::string", "\"h100\"",
           "the device description the model predicts for "
           "(a100, rtx3090, h100, h200, or sm_80, sm_86, sm_90)">,
    Option<"mode", "mode", "std::string", "\"auto\"",
           "auto (the cost model decides), always, never, or per-image or "
           "folded (im2col in that form)">,
  ];
}

def FuseGemmPass : Pass<"dyncc-fuse-gemm", "mlir::func::FuncOp"> {
  let summary = "GEMM-level fusion: a matmul or conv backbone with its prologue and epilogue";
  let description = [{
    The first and highest-priority fusion pass. Each `dg.matmul` or
    `dg.conv` not yet in a group becomes the backbone of a `dg.fusion gemm`
    (`conv`) group that absorbs
    - producers of its operands that map elements one to one (elementwise
      ops such as a scale or a cast, and transposes, reshapes, squeezes)
      and that nothing else uses: the operand layout and the prologue;
    - consumers, transitively, that map elements one to one and read group
      values only at the index space they were produced in (the same
      symbolic shape; side operands may broadcast): bias, scale, mask,
      GELU's erf form, residual add, cast, batch normalization, and the
      reshape/transpose out of attention heads.

    Legality is by symbolic shape: a consumer over `[B, L2]` does not join a
    backbone over `[B, L]` unless `L == L2` was proven, a reduction (which
    needs whole rows) never joins, and a group never depends on itself
    through an outside op. A value that other ops still use becomes an
    extra group result.

    ```mlir
    %0 = dg.matmul %x, %w ; %1 = dg.add %0, %b ; %2 = dg.relu %1
    // becomes
    %2 = dg.fusion gemm { ... dg.yield %r } : tensor<...>
    ```
  }];
  let options = [Option<"maxGroupSize", "max-group-size", "unsigned", "32",
                        "Upper bound on ops per group">];
}

def FuseReductionsPass : Pass<"dyncc-fuse-reductions", "mlir::func::FuncOp"> {
  let summary = "Reduce-level (stitch) fusion: row reductions with their producers and consumers";
  let description = [{
    Each row reduction (a `reduce_*` keeping its dims) not yet in a group
    seeds a `dg.fusion reduce` group over its row space: the reduction's
    input shape `S` and its reduced shape `R`. The group absorbs elementwise
    consumers whose results are over `S` or `R` (a per-row value broadcast
    back over its row stays on chip), further reductions of `S` over the
    same axes, and elementwise producers over `S` that nothing else uses.
    Softmax (max, shift, exp, sum, divide) and LayerNorm (mean, centre,
    variance, normalize, scale, bias) each become one group.
  }];
  let options = [Option<"maxGroupSize", "max-group-size", "unsigned", "32",
                        "Upper bound on ops per group">];
}

def FuseElementwisePass : Pass<"dyncc-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse the remaining chains of elementwise ops over one index space";
  let description = [{
    After the backbone and reduce-level passes: connected elementwise ops
    not yet in a group whose results have the same symbolic shape become one
    `dg.fusion elementwise` group.
  }];
  let options = [Option<"maxGroupSize", "max-group-size", "unsigned", "32",
                        "Upper bound on ops per group">];
}

def FuseHorizontalPass : Pass<"dyncc-fuse-horizontal", "mlir::func::FuncOp"> {
  let summary = "Merge GEMM groups whose backbones share their input (Q, K, V)";
  let description = [{
    GEMM groups whose matmul backbones read the same left operand, with
    the same result shape, and that do not depend on one another, merge
    into one multi-output `dg.fusion gemm` group with every matmul marked as
    a backbone: the shared input is read once.
  }];
}

def GroupRemainingPass : Pass<"dyncc-group-remaining", "mlir::func::FuncOp"> {
  let summary = "Put every compute op not yet in a group into its own group";
  let description = [{
    The last fusion pass: each `dg` compute op left outside a `dg.fusion`
    (constants stay outside) becomes a single-op group of its kind, so that
    outlining sees only groups.
  }];
}

def OutlineGroupsPass : Pass<"dyncc-outline-groups", "mlir::ModuleOp"> {
  let summary = "Outline each fusion group into a kernel function on tensors";
  let description = [{
    Each `dg.fusion` becomes a `func.func` (marked `dyncc.kernel`) whose body
    is the group lowered to upstream dialects (linalg on plain tensors) and a
    `dg.dispatch` of it. The kernel takes the symbols its shapes mention as
    `index` arguments, then the group's inputs, then one destination tensor
    per result (destination-passing style), and returns the results.
    Small constants and `dg.dim_values` used by a group are not inputs: they
    are rebuilt inside the kernel, so their values fold into the code.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect"
  ];
}

def DedupKernelsPass : Pass<"dyncc-dedup-kernels", "mlir::ModuleOp"> {
  let summary = "Compile identical kernels once";
  let description = [{
    Kernel functions (`dyncc.kernel`) that are identical up to their name
    (the same body, argument attributes and tile configuration, as the same
    group in every layer of a transformer is) are merged: every `dg.dispatch`
    calls the first of them and the others are erased, so tiling, lowering
    and assembly run once per distinct kernel.
  }];
}

#endif // DYNCC_DIALECT_DG_TRANSFORMS_PASSES_TD
