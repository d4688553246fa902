//===- KernelShapes.h - A kernel's extents over its arguments ---*- C++ -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Extents computed inside a kernel function, as DimExprs over the names
// getGridArgName gives its arguments (`__argN` for an index argument,
// `__argN_dD` for dimension D of a tensor argument). The host plan
// substitutes a dispatch's symbols and shapes for them: the launch grid
// (dyncc-tile-and-fuse) and a GEMM's problem (getGemmProblem) are recorded
// this way.
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_TILING_KERNELSHAPES_H
#define DYNCC_TILING_KERNELSHAPES_H

#include "dyncc/Support/DimExpr.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/OpDefinition.h"

namespace dyncc {

/// Dimension `d` of `tensor`, traced through the kernel's ops to its
/// arguments (`entry` is the kernel's entry block), or failure.
mlir::FailureOr<DimExpr> getKernelDimExpr(mlir::Value tensor, int64_t d,
                                          mlir::Block &entry,
                                          unsigned depth = 0);

/// An index value or constant computed in the kernel, as a DimExpr over its
/// arguments, or failure.
mlir::FailureOr<DimExpr> getKernelExtentExpr(mlir::OpFoldResult ofr,
                                             mlir::Block &entry,
                                             unsigned depth = 0);

/// What a GEMM kernel computes: batch x [M x K] x [K x N], each extent over
/// the kernel's arguments, and the bytes of an operand and an output
/// element.
struct GemmProblemExprs {
  DimExpr batch, m, n, k;
  int64_t operandBytes = 0;
  int64_t outputBytes = 0;
  /// Products of this problem that each block computes in turn, one tile of
  /// each (attention's Q, K and V projections of one input, fused): every
  /// root gets its own block loop over the same grid.
  int64_t products = 1;
  /// Where the roots see N split (attention's head split of N = H * D), the
  /// extent of its last part (D): a block's N tile must divide it. 0: N is
  /// not split.
  int64_t nSplit = 0;
  /// Every product takes two operands of one 16-bit float type (f16 or
  /// bf16) and accumulates in f32: what tensor cores compute, whatever the
  /// epilogue makes of the result (attention's scores are often cast to
  /// f32 for the softmax).
  bool tensorCores = false;
};

/// Whether `func` is a kernel the passes before tiling rewrite: a defined
/// `dyncc.kernel` function whose `dyncc.kind` is `kind`.
bool isKernelOfKind(mlir::func::FuncOp func, llvm::StringRef kind);

/// The problem of the kernel's contractions: M and N are the last two
/// dimensions of the output, the batch the product of the other parallel
/// loops, K the product of the reduction loops. Several contractions are one
/// problem computed `products` times where they have the same extents and
/// element types, none reads another, and each reaches a kernel result
/// through getProductLayout. Fails for a kernel with no contraction, for
/// contractions that differ, or for extents it cannot express.
mlir::FailureOr<GemmProblemExprs> getGemmProblem(mlir::func::FuncOp kernel);

/// How a kernel's root computes a contraction's result: the root is the
/// contraction, or carries its result (one operand of each op along the
/// way) through elementwise ops with permuted maps, `linalg.transpose`s and
/// at most one `tensor.expand_shape`, a head split [B, S, H*D] -> [B, S, H,
/// D], say.
struct ProductLayout {
  mlir::Operation *product = nullptr;
  /// Per root dimension, its place in the product's GEMM view, whose last
  /// two dimensions are M and N and whose others are the batch, in order.
  /// N is the product's innermost output dimension that only B indexes, M
  /// the innermost that only A does (by operands; its last two output
  /// dimensions otherwise, or where the loops do not tell); where the
  /// expand splits a dimension, its last part takes the dimension's place
  /// and the others are batch dimensions. So [B, S, H*D] split and
  /// [B, S, H, D] computed as such have one view, [B, H, S, D]. A tile
  /// config's sizes are the view's.
  llvm::SmallVector<int64_t> viewDims;
  /// The static extent of N's last part where the expand splits N; 0
  /// otherwise.
  int64_t nSplit = 0;

  /// The root dimensions run along the view's in order.
  bool isIdentity() const;
  /// `viewSizes` (in the view's order) per root dimension.
  llvm::SmallVector<int64_t> toRoot(llvm::ArrayRef<int64_t> viewSizes) const;
};

/// The layout of `root` over the contraction whose result it carries, M
/// and N told by operands (a GEMM kernel's) or by position (a conv's, whose
/// config is its output's); failure where it carries none, or more than one
/// operand could be the carried one.
mlir::FailureOr<ProductLayout> getProductLayout(mlir::Operation *root,
                                                bool byOperands);

/// The attribute holding a GEMM kernel's problem: a dictionary of `batch`,
/// `m`, `n`, `k` (DimExpr text over the argument names) and
/// `operand_bytes`, `output_bytes`; `products` and `n_split` where they are
/// not 1 and 0.
constexpr llvm::StringLiteral getGemmProblemAttrName() {
  return "dyncc.gemm_problem";
}

/// The unit attribute of a GEMM kernel whose shared-weight batch was folded
/// into M (dyncc-fold-gemm-batch): it computes on [B*S, N] and expands its
/// results to [B, S, N] only at the end, which code generation keeps.
constexpr llvm::StringLiteral getFoldedBatchAttrName() {
  return "dyncc.folded_batch";
}

/// The unit attribute of a GEMM kernel that was a one-pixel convolution
/// (dyncc-pointwise-conv-as-gemm): it computes on [N, F, H*W] and expands
/// its results to [N, F, H, W] only at the end, which code generation
/// keeps.
constexpr llvm::StringLiteral getFoldedImageAttrName() {
  return "dyncc.folded_image";
}

/// The unit attribute of a `reduce` kernel whose reductions over several
/// trailing loops were collapsed into rows (dyncc-collapse-row-dims): it
/// computes on [..., C*H*W] and expands its results to [..., C, H, W] only
/// at the end, which code generation keeps.
constexpr llvm::StringLiteral getFoldedRowsAttrName() {
  return "dyncc.folded_rows";
}

/// `value` traced back through tensor.expand_shape, tensor.collapse_shape
/// and tensor.cast to the value they reshape (a kernel result to its root).
mlir::Value getReshapedSource(mlir::Value value);

/// What a row-wise kernel computes: `batch` independent [rows x length]
/// spaces (the loops of its row reduction, or of its elementwise root: the
/// innermost is the length, the next the rows, the product of the others
/// the batch, the one next to the rows the planes), each extent over the
/// kernel's arguments; the bytes of an output element and the bytes moved
/// per element of the space.
struct RowProblemExprs {
  DimExpr batch, rows, length, planes;
  int64_t elementBytes = 0;
  int64_t bytesPerElement = 0;
  /// A row reduction (kind `reduce`, isRowReductionKernel), else
  /// elementwise.
  bool reduction = false;
  /// The kernel reads element by element whatever its thread tile: a gather
  /// (tensor.extract in a linalg body, im2col's windows) or a transpose,
  /// which code generation does not vectorize (vectorizeThreadTiles): a
  /// thread's run of elements spreads a warp's loads over more sectors
  /// (cost::getSectorInflation).
  bool scalarAccess = false;
  /// A column reduction (getRowProblem): every reduction folds the
  /// same outer axes, with loops after them. The space is then the
  /// result's dimensions without that axis, `column` the extent each output
  /// folds, and `columnPlace` the axis' dimension from the result's end
  /// where the result spans it (a softmax over channels), else 0.
  bool columns = false;
  DimExpr column;
  int64_t columnPlace = 0;
  /// A column reduction code generation can split over a group of lanes
  /// per output (`reduce column`): it folds one axis, each reduction with a
  /// combiner (add, max, ...) reading the kernel's arguments, statistics
  /// per column or values over the whole space, so that with the reduced loop
  /// moved innermost (and a spanning result's loop over it last) they are rows
  /// (isRowReductionKernel with `columns`).
  bool columnLanes = false;
};

/// The problem of an `elementwise` kernel whose root has parallel loops
/// only, of a `data_movement` one alike with no region but its linalg ops'
/// (a copy, a gather, im2col's windows), of a `reduce` kernel whose
/// reductions all run along rows with the same loops (isRowReduction), or
/// of one whose reductions all fold the same outer axes (a column
/// reduction); fails for any other kernel.
mlir::FailureOr<RowProblemExprs> getRowProblem(mlir::func::FuncOp kernel);

/// The attribute holding a row-wise kernel's problem: `batch`, `rows`,
/// `length`, `planes` (DimExpr text over the argument names),
/// `element_bytes`, `bytes_per_element`, `reduction` and `scalar_access` (0
/// or 1), and for a column reduction `column` (DimExpr text),
/// `column_place` and `column_lanes` (0 or 1: RowProblemExprs::columnLanes).
constexpr llvm::StringLiteral getRowProblemAttrName() {
  return "dyncc.row_problem";
}

/// `expr`, over the names getGridArgName gives a kernel's arguments, in
/// terms of the model's symbols at `dispatch` (a call of that kernel): its
/// symbols and the symbolic shapes of its inputs and results. Fails for a
/// name that is not an argument of the dispatch or a dimension of one.
/// What a conv kernel computes, as the tile search's conv model takes it
/// (dyncc/CostModel/Conv.h): a 2-D convolution over NCHW, its output's
/// dimensions in terms of the kernel's arguments, its groups, channels,
/// window, strides and dilations static. A grouped conv's `outC` and `inC`
/// are a group's.
struct ConvProblemExprs {
  DimExpr batch, outC, outH, outW;
  int64_t inC = 0, kh = 0, kw = 0, groups = 1;
  /// 1 for a 1-D conv (its outH, kh, strideH and dilationH are 1).
  int64_t spatialDims = 2;
  int64_t strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t elementBytes = 0;
};

/// The problem of `kernel`'s one convolution: a linalg op with loops
/// [n, oc, oh, ow] and reductions [ic, kh, kw], reading the input at [n,
/// ic, oh * sh + kh * dh, ow * sw + kw * dw] and the weights at [oc, ic, kh,
/// kw], writing [n, oc, oh, ow] as the kernel's result, every operand of
/// one element type (an f16 or bf16 conv's accumulator may be f32: the
/// problem's element bytes are the operands'); or a 1-D one, with no
/// rows ([n, oc, ow] over [ic, kw]); either one grouped, with a group loop
/// `g` after `n` in the output and input and first in the weights
/// (DgToLinalg's expanded form). A 2-D conv over a line (one output row,
/// one filter row and one input row, or a column alike) is the 1-D conv
/// code generation builds of it, over the other dimension. Fails for every
/// other kernel (3-D convs, several convs, dynamic channels, groups or
/// windows).
mlir::FailureOr<ConvProblemExprs> getConvProblem(mlir::func::FuncOp kernel);

constexpr llvm::StringLiteral getConvProblemAttrName() {
  return "dyncc.conv_problem";
}

/// `extra`: the shapes of kernel arguments after the dispatch's
/// destinations (a split-K kernel's workspace).
mlir::FailureOr<DimExpr>
resolveDispatchExpr(mlir::Operation *dispatch, const DimExpr &expr,
                    llvm::ArrayRef<llvm::SmallVector<DimExpr>> extra = {});

/// resolveDispatchExpr of DimExpr text held by `attr` (a StringAttr).
mlir::FailureOr<DimExpr>
resolveDispatchExpr(mlir::Operation *dispatch, mlir::Attribute attr,
                    llvm::ArrayRef<llvm::SmallVector<DimExpr>> extra = {});

/// Whether `op`, an op of a kernel besides its contraction, computes on the
/// contraction's output space (`rank` parallel loops along the output's
/// dimensions; a generic or a fill) with `loops` contiguous in every operand
/// and every map a projected permutation (upstream's collapse reads every
/// map result as a loop: a constant, the broadcast of a unit dimension, is
/// not one), so that collapseKernelLoops can collapse them.
bool collapsesAlong(mlir::linalg::LinalgOp op, int64_t rank,
                    const mlir::ReassociationIndices &loops);

/// Rewrites `fill` to fill its destination collapsed by `groups`, the
/// result expanded back.
void collapseFill(mlir::RewriterBase &rewriter, mlir::linalg::FillOp fill,
                  llvm::ArrayRef<mlir::ReassociationIndices> groups);

/// Collapses `loops` of each op of `ops` into one loop (a kernel's epilogue
/// after its contraction's loops were collapsed alike): each op is
/// rewritten by linalg::collapseOpIterationDims on its operands collapsed,
/// its results expanded back; a fill on its output collapsed by
/// `outputGroups`. Fails with an error on an op that does not collapse,
/// saying it could not `what`.
mlir::LogicalResult
collapseKernelLoops(mlir::RewriterBase &rewriter,
                    llvm::ArrayRef<mlir::linalg::LinalgOp> ops,
                    const mlir::ReassociationIndices &loops,
                    llvm::ArrayRef<mlir::ReassociationIndices> outputGroups,
                    llvm::StringRef what);

/// Cancels the reshapes that collapseKernelLoops leaves between the ops of
/// `kernel` (an expansion collapsed again), folds empty tensors through
/// them, and reads the expansions' dimensions from their operands, so that
/// only the reshapes at the kernel's boundary remain.
void foldKernelReshapes(mlir::func::FuncOp kernel);

} // namespace dyncc

#endif // DYNCC_TILING_KERNELSHAPES_H
