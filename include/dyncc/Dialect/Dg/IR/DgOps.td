//===- DgOps.td - Dyncc graph operations -------------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_IR_DGOPS_TD
#define DYNCC_DIALECT_DG_IR_DGOPS_TD

include "dyncc/Dialect/Dg/IR/DgBase.td"
include "dyncc/Dialect/Dg/IR/DgInterfaces.td"
include "dyncc/Dialect/Sym/IR/SymAttrs.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Dg_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dg_Dialect, mnemonic, traits>;

/// Marks ops whose result has the (broadcast) shape of their operands and
/// whose elements depend only on the same-index operand elements.
def Dg_ElementwiseTrait : NativeOpTrait<"dg::Elementwise"> {
  let cppNamespace = "::dyncc";
}
/// Marks ops whose operands broadcast the numpy way.
def Dg_BroadcastTrait : NativeOpTrait<"dg::Broadcasting"> {
  let cppNamespace = "::dyncc";
}

/// A primitive tensor op with a symbolic shape function.
class Dg_GraphOp<string mnemonic, list<Trait> traits = []>
    : Dg_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Dg_SymbolicShapeOpInterface>])>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Dg_ConstantOp : Dg_GraphOp<"constant", [ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor (an initializer or Constant node)";
  let description = [{
    Large weights are resource-backed (`dense_resource`), held without copies.

    ```mlir
    %w = dg.constant dense<...> : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
}

def Dg_DimValuesOp : Dg_GraphOp<"dim_values"> {
  let summary = "A small integer tensor whose elements are symbolic expressions";
  let description = [{
    The contents of a shape computation, evaluated symbolically: what
    `Shape -> Gather -> Unsqueeze -> Concat` computes, as one op over the
    symbols (`dyncc-fold-shape-computations` makes these). Elements are in
    row-major order; the tensor has a static shape and an integer element
    type. The kernel that needs it evaluates the expressions from the
    dynamic dimensions it is given.

    ```mlir
    %s = dg.dim_values #sym.shape<[B, L, 12, 64]> : tensor<4xi64>
    ```
  }];
  let arguments = (ins Sym_ShapeAttr:$values);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$values attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Dg_ConstantOfShapeOp : Dg_GraphOp<"constant_of_shape"> {
  let summary = "A tensor of the shape given by a 1-D integer tensor, filled with one value";
  let description = [{
    The result's shape is the symbolic contents of `shape`; when those depend
    on data, the dimensions are fresh data-dependent symbols.
  }];
  let arguments = (ins AnyTensor:$shape, ElementsAttr:$value);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $shape `,` $value attr-dict `:` type($shape) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Dg_UnaryOp<string mnemonic, string math, list<Trait> traits = []>
    : Dg_GraphOp<mnemonic, !listconcat(traits, [Dg_ElementwiseTrait])> {
  let summary = "Elementwise " # math;
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_NegOp : Dg_UnaryOp<"neg", "-x">;
def Dg_AbsOp : Dg_UnaryOp<"abs", "|x|">;
def Dg_ExpOp : Dg_UnaryOp<"exp", "e^x">;
def Dg_LogOp : Dg_UnaryOp<"log", "ln x">;
def Dg_SqrtOp : Dg_UnaryOp<"sqrt", "square root">;
def Dg_ReciprocalOp : Dg_UnaryOp<"reciprocal", "1/x">;
def Dg_ErfOp : Dg_UnaryOp<"erf", "error function">;
def Dg_TanhOp : Dg_UnaryOp<"tanh", "hyperbolic tangent">;
def Dg_SigmoidOp : Dg_UnaryOp<"sigmoid", "1/(1+e^-x)">;
def Dg_ReluOp : Dg_UnaryOp<"relu", "max(x, 0)">;
def Dg_NotOp : Dg_UnaryOp<"not", "logical not">;
def Dg_CastOp : Dg_UnaryOp<"cast", "conversion to the result element type">;
def Dg_LeakyReluOp : Dg_UnaryOp<"leaky_relu", "x < 0 ? alpha*x : x"> {
  let arguments = (ins AnyTensor:$input, F32Attr:$alpha);
}
def Dg_CumSumOp : Dg_UnaryOp<"cumsum", "cumulative sum along an axis"> {
  let arguments = (ins AnyTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
}

def Dg_ClipOp : Dg_GraphOp<"clip", [Dg_ElementwiseTrait, AttrSizedOperandSegments]> {
  let summary = "Elementwise clamp to [min, max] (scalar operands, optional)";
  let arguments = (ins AnyTensor:$input,
                       Optional<AnyTensor>:$min,
                       Optional<AnyTensor>:$max);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input (`min` $min^ `:` type($min))? (`max` $max^ `:` type($max))?
    attr-dict `:` type($input) `->` type($result)
  }];
}

class Dg_BinaryOp<string mnemonic, string math>
    : Dg_GraphOp<mnemonic, [Dg_ElementwiseTrait, Dg_BroadcastTrait]> {
  let summary = "Elementwise " # math # " with numpy broadcasting";
  let description = [{
    Operands broadcast the numpy way: shapes align at the trailing dimension,
    and a dimension of size 1 stretches. Symbolic dimensions broadcast only
    against 1 or an equal expression (the equality is recorded).
  }];
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Dg_AddOp : Dg_BinaryOp<"add", "addition">;
def Dg_SubOp : Dg_BinaryOp<"sub", "subtraction">;
def Dg_MulOp : Dg_BinaryOp<"mul", "multiplication">;
def Dg_DivOp : Dg_BinaryOp<"div", "division (integers truncate)">;
def Dg_PowOp : Dg_BinaryOp<"pow", "power">;
def Dg_MinOp : Dg_BinaryOp<"min", "minimum">;
def Dg_MaxOp : Dg_BinaryOp<"max", "maximum">;
def Dg_AndOp : Dg_BinaryOp<"and", "logical and">;
def Dg_OrOp : Dg_BinaryOp<"or", "logical or">;
def Dg_EqualOp : Dg_BinaryOp<"equal", "==">;
def Dg_LessOp : Dg_BinaryOp<"less", "<">;
def Dg_GreaterOp : Dg_BinaryOp<"greater", ">">;
def Dg_LessEqualOp : Dg_BinaryOp<"less_equal", "<=">;
def Dg_GreaterEqualOp : Dg_BinaryOp<"greater_equal", ">=">;

def Dg_SelectOp : Dg_GraphOp<"select", [Dg_ElementwiseTrait, Dg_BroadcastTrait]> {
  let summary = "cond ? lhs : rhs, elementwise with numpy broadcasting (ONNX Where)";
  let arguments = (ins AnyTensor:$condition, AnyTensor:$lhs,
                       AnyTensor:$rhs);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Shapes and data movement
//===----------------------------------------------------------------------===//

def Dg_ShapeOfOp : Dg_GraphOp<"shape_of"> {
  let summary = "The shape of a tensor as a 1-D i64 tensor (ONNX Shape)";
  let description = [{
    Its contents are the input's symbolic dimensions `[start, end)`, so shape
    arithmetic on it is evaluated symbolically.
  }];
  let arguments = (ins AnyTensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_SizeOp : Dg_GraphOp<"size"> {
  let summary = "The number of elements of a tensor, as an i64 scalar";
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_ReshapeOp : Dg_GraphOp<"reshape"> {
  let summary = "Reshape to the shape given by a 1-D tensor (0 copies, -1 infers)";
  let description = [{
    `shape`'s symbolic contents give the result shape; an entry 0 copies the
    input dimension (unless `allowzero`), one entry -1 is inferred from the
    element count, which must be provable equal.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$shape,
                       DefaultValuedAttr<BoolAttr, "false">:$allowzero);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $shape attr-dict `:` functional-type(operands, results)
  }];
}

def Dg_FlattenOp : Dg_GraphOp<"flatten"> {
  let summary = "Collapse to 2-D at `axis`";
  let arguments = (ins AnyTensor:$input, I64Attr:$axis);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_SqueezeOp : Dg_GraphOp<"squeeze"> {
  let summary = "Remove size-1 dimensions (`axes`, or every size-1 dimension)";
  let arguments = (ins AnyTensor:$input,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_UnsqueezeOp : Dg_GraphOp<"unsqueeze"> {
  let summary = "Insert size-1 dimensions at `axes` (of the result)";
  let arguments = (ins AnyTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_TransposeOp : Dg_GraphOp<"transpose"> {
  let summary = "Permute dimensions: result dim i is input dim perm[i]";
  let arguments = (ins AnyTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Dg_ConcatOp : Dg_GraphOp<"concat"> {
  let summary = "Concatenate along `axis`; other dimensions must be equal";
  let arguments = (ins Variadic<AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
}

def Dg_SplitOp : Dg_GraphOp<"split"> {
  let summary = "Split along `axis` into pieces of `sizes` (or equal pieces)";
  let arguments = (ins AnyTensor:$input, I64Attr:$axis,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes);
  let results = (outs Variadic<AnyTensor>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
}

def Dg_SliceOp : Dg_GraphOp<"slice", [AttrSizedOperandSegments]> {
  let summary = "Strided slice with ONNX semantics (negative indices, clamping)";
  let description = [{
    `starts`, `ends`, and optionally `axes` and `steps`, are 1-D integer
    tensors. With symbolic contents, the result size is
    `ceildiv(min(max(end', 0), dim) - min(max(start', 0), dim), step)`
    clamped at 0 (negative indices add `dim` first), using `min`/`max` of
    the algebra.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$starts,
                       AnyTensor:$ends, Optional<AnyTensor>:$axes,
                       Optional<AnyTensor>:$steps);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $starts `,` $ends (`axes` $axes^ `:` type($axes))?
    (`steps` $steps^ `:` type($steps))? attr-dict
    `:` type($input) `,` type($starts) `,` type($ends) `->` type($result)
  }];
}

def Dg_GatherOp : Dg_GraphOp<"gather"> {
  let summary = "Take slices of `data` along `axis` at `indices` (ONNX Gather)";
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Dg_ExpandOp : Dg_GraphOp<"expand"> {
  let summary = "Broadcast to the shape given by a 1-D tensor";
  let arguments = (ins AnyTensor:$input, AnyTensor:$shape);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $shape attr-dict `:` functional-type(operands, results)
  }];
}

def Dg_TileOp : Dg_GraphOp<"tile"> {
  let summary = "Repeat the input `repeats[i]` times along each dimension";
  let arguments = (ins AnyTensor:$input, AnyTensor:$repeats);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $repeats attr-dict `:` functional-type(operands, results)
  }];
}

def Dg_RangeOp : Dg_GraphOp<"range"> {
  let summary = "[start, limit) by delta: max(ceil((limit - start) / delta), 0) elements";
  let arguments = (ins AnyTensor:$start, AnyTensor:$limit,
                       AnyTensor:$delta);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)
  }];
}

def Dg_TriluOp : Dg_GraphOp<"trilu", [Dg_ElementwiseTrait]> {
  let summary = "Keep the upper or lower triangle of the last two dimensions";
  let arguments = (ins AnyTensor:$input, Optional<AnyTensor>:$k,
                       DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input (`k` $k^ `:` type($k))? attr-dict `:` type($input) `->` type($result)
  }];
}

def Dg_PadOp : Dg_GraphOp<"pad"> {
  let summary = "Pad by `pads` (begins then ends) with a constant, edge or reflection";
  let arguments = (ins AnyTensor:$input, AnyTensor:$pads,
                       Optional<AnyTensor>:$value,
                       DefaultValuedAttr<StrAttr, "\"constant\"">:$mode);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $pads (`value` $value^ `:` type($value))? attr-dict
    `:` type($input) `,` type($pads) `->` type($result)
  }];
}

def Dg_NonZeroOp : Dg_GraphOp<"nonzero"> {
  let summary = "Indices of the non-zero elements: [rank, n], n bound at run time";
  let description = [{
    `n` is a fresh data-dependent symbol, except where the input is known to
    have no zero: a `dg.constant_of_shape` of a non-zero value (how older
    exporters spell `arange`), where `n` is the number of elements.
  }];
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let extraClassDeclaration = [{
    /// True when every element of the input is non-zero by construction.
    bool countsEveryElement();
  }];
}

def Dg_DepthToSpaceOp : Dg_GraphOp<"depth_to_space"> {
  let summary = "Rearrange [N, C*b*b, H, W] into [N, C, H*b, W*b]";
  let arguments = (ins AnyTensor:$input, I64Attr:$blocksize,
                       DefaultValuedAttr<StrAttr, "\"DCR\"">:$mode);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_ResizeOp : Dg_GraphOp<"resize", [AttrSizedOperandSegments]> {
  let summary = "Resize the spatial dimensions by `scales` or to `sizes`";
  let description = [{
    Exactly one of `scales` (floats) and `sizes` (integers) gives the result
    shape: `sizes` contents directly, or `floor(dim * scale)` for each scale,
    kept exact as a rational multiple.
  }];
  let arguments = (ins AnyTensor:$input, Optional<AnyTensor>:$scales,
                       Optional<AnyTensor>:$sizes,
                       DefaultValuedAttr<StrAttr, "\"nearest\"">:$mode,
                       DefaultValuedAttr<StrAttr, "\"half_pixel\"">:$coordinate_transformation_mode,
                       DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:$nearest_mode);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input (`scales` $scales^ `:` type($scales))? (`sizes` $sizes^ `:` type($sizes))?
    attr-dict `:` type($input) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Compute and normalization
//===----------------------------------------------------------------------===//

def Dg_MatMulOp : Dg_GraphOp<"matmul"> {
  let summary = "Matrix product with numpy semantics (batched, broadcast, rank 1)";
  let description = [{
    `[..., M, K] x [..., K, N] -> [broadcast(...), M, N]`; a rank-1 operand
    is promoted to a matrix and the added dimension removed. The contraction
    dimensions must be equal; when they are different symbolic expressions,
    shape propagation records the equality.
  }];
  let arguments = (ins AnyTensor:$lhs, AnyTensor:$rhs);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dg_GemmOp : Dg_GraphOp<"gemm"> {
  let summary = "alpha * op(A) * op(B) + beta * C (ONNX Gemm)";
  let arguments = (ins AnyTensor:$a, AnyTensor:$b,
                       Optional<AnyTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0f">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$transA,
                       DefaultValuedAttr<BoolAttr, "false">:$transB);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^ `:` type($c))? attr-dict `:` type($a) `,` type($b)
    `->` type($result)
  }];
}

def Dg_ConvOp : Dg_GraphOp<"conv"> {
  let summary = "N-d convolution, NCHW, grouped (ONNX Conv)";
  let description = [{
    Output size per spatial dimension:
    `floordiv(in + pad_begin + pad_end - dilation*(kernel-1) - 1, stride) + 1`;
    `auto_pad` SAME_* gives `ceildiv(in, stride)`.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$weight,
                       Optional<AnyTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^ `:` type($bias))? attr-dict
    `:` type($input) `,` type($weight) `->` type($result)
  }];
}

def Dg_Im2ColOp : Dg_GraphOp<"im2col"> {
  let summary = "A 1-D or 2-D convolution's windows as channels (NCW, NCHW)";
  let description = [{
    `[N, C, H, W] -> [N, C*KH*KW, OH, OW]` for a window of `kernel_shape`
    `[KH, KW]` with the `strides`, `pads` and `dilations` of `dg.conv`
    (and its output sizes): channel `c*KH*KW + i*KW + j` at pixel
    `(y, x)` is the input's channel `c` at
    `(y*sh + i*dh - pad_top, x*sw + j*dw - pad_left)`, zero where that
    reads padding. A convolution of one group is then a 1x1 convolution
    of this with its weights viewed as `[F, C*KH*KW, 1, 1]` (whose
    layout that is): a GEMM. `dyncc-conv-im2col` makes it so where the
    cost model predicts that faster.

    A 1-D window (`kernel_shape = [KW]`, two pads) takes `[N, C, W]` to
    `[N, C*KW, OW]` alike: channel `c*KW + j` at `x` is the input's
    channel `c` at `x*sw + j*dw - pad_left`.

    With `batch_inner`, the first two dimensions are swapped
    (`[C*KH*KW, N, OH, OW]`): the window channels outermost, so that
    `[C*KH*KW, N*OH*OW]` is one GEMM operand over every image's pixels
    (the batch folded into the GEMM's columns).
  }];
  let arguments = (ins AnyTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$batch_inner);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_BatchNormOp : Dg_GraphOp<"batch_norm"> {
  let summary = "Inference batch normalization over the channel dimension";
  let arguments = (ins AnyTensor:$input, AnyTensor:$scale,
                       AnyTensor:$bias, AnyTensor:$mean,
                       AnyTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict
    `:` functional-type(operands, results)
  }];
}

class Dg_PoolOp<string mnemonic, string math> : Dg_GraphOp<mnemonic> {
  let summary = math # " pooling over the spatial dimensions (NCHW)";
  let arguments = (ins AnyTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
                       DefaultValuedAttr<StrAttr, "\"NOTSET\"">:$auto_pad,
                       DefaultValuedAttr<BoolAttr, "false">:$column_major_indices);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_MaxPoolOp : Dg_PoolOp<"max_pool", "Max"> {
  let results = (outs AnyTensor:$result, Optional<AnyTensor>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result) (`,` type($indices)^)?
  }];
}
def Dg_AvgPoolOp : Dg_PoolOp<"avg_pool", "Average">;

class Dg_GlobalPoolOp<string mnemonic, string math> : Dg_GraphOp<mnemonic> {
  let summary = math # " over all spatial dimensions, kept as size 1";
  let arguments = (ins AnyTensor:$input);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_GlobalAvgPoolOp : Dg_GlobalPoolOp<"global_avg_pool", "Average">;
def Dg_GlobalMaxPoolOp : Dg_GlobalPoolOp<"global_max_pool", "Maximum">;

class Dg_ReduceOp<string mnemonic, string math> : Dg_GraphOp<mnemonic> {
  let summary = math # " over `axes` (all when absent), keeping them if `keepdims`";
  let arguments = (ins AnyTensor:$input,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_ReduceSumOp : Dg_ReduceOp<"reduce_sum", "Sum">;
def Dg_ReduceMeanOp : Dg_ReduceOp<"reduce_mean", "Mean">;
def Dg_ReduceMaxOp : Dg_ReduceOp<"reduce_max", "Maximum">;
def Dg_ReduceMinOp : Dg_ReduceOp<"reduce_min", "Minimum">;
def Dg_ReduceProdOp : Dg_ReduceOp<"reduce_prod", "Product">;

class Dg_SoftmaxLikeOp<string mnemonic, string math> : Dg_GraphOp<mnemonic> {
  let summary = math # " along `axis`";
  let description = [{
    With `coerce_2d` (ONNX before opset 13) the input is viewed as 2-D at
    `axis` and the normalization runs over all trailing dimensions.
  }];
  let arguments = (ins AnyTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$coerce_2d);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_SoftmaxOp : Dg_SoftmaxLikeOp<"softmax", "Softmax">;
def Dg_LogSoftmaxOp : Dg_SoftmaxLikeOp<"log_softmax", "Log-softmax">;

def Dg_LayerNormOp : Dg_GraphOp<"layer_norm"> {
  let summary = "Layer normalization over the dimensions from `axis` on";
  let description = [{
    Optionally also returns the mean and the inverse standard deviation
    (ONNX's second and third outputs), with the normalized dimensions kept
    as size 1.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$scale,
                       Optional<AnyTensor>:$bias, I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs AnyTensor:$result, Variadic<AnyTensor>:$statistics);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^ `:` type($bias))? attr-dict
    `:` type($input) `,` type($scale) `->` type($result) (`,` type($statistics)^)?
  }];
}

//===----------------------------------------------------------------------===//
// Fusion groups
//===----------------------------------------------------------------------===//

def Dg_FusionKindAttr : I32EnumAttr<"FusionKind", "kind of a fusion group", [
    I32EnumAttrCase<"Gemm", 0, "gemm">,
    I32EnumAttrCase<"Conv", 1, "conv">,
    I32EnumAttrCase<"Reduce", 2, "reduce">,
    I32EnumAttrCase<"Elementwise", 3, "elementwise">,
    I32EnumAttrCase<"DataMovement", 4, "data_movement">
  ]> {
  let cppNamespace = "::dyncc::dg";
}

def Dg_FusionOp : Dg_Op<"fusion", [
    SingleBlockImplicitTerminator<"YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "A fusion group: ops that become one kernel";
  let description = [{
    The region holds the group's ops; values defined above are its inputs and
    the `dg.yield` operands its results. `kind` says which code generator
    handles it; the backbone op (the one the tiling is built around, for
    example the matmul of a GEMM epilogue group) carries the `dg.backbone`
    unit attribute.

    ```mlir
    %y = dg.fusion gemm {
      %0 = dg.matmul %x, %w {dg.backbone} : ...
      %1 = dg.add %0, %b : ...
      %2 = dg.relu %1 : ...
      dg.yield %2 : tensor<?x64xf32, #sym.shape<[B, 64]>>
    } : tensor<?x64xf32, #sym.shape<[B, 64]>>
    ```
  }];
  let arguments = (ins Dg_FusionKindAttr:$kind);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind attr-dict-with-keyword $body `:` type($results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op marked `dg.backbone`, if any.
    ::mlir::Operation *getBackbone();
    static constexpr ::llvm::StringLiteral getBackboneAttrName() {
      return "dg.backbone";
    }
  }];
}

def Dg_YieldOp : Dg_Op<"yield", [Pure, ReturnLike, Terminator,
                                 HasParent<"FusionOp">]> {
  let summary = "Terminates a fusion group and names its results";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Dispatch of an outlined kernel
//===----------------------------------------------------------------------===//

def Dg_DispatchOp : Dg_Op<"dispatch", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs an outlined kernel function";
  let description = [{
    The graph-level call of a kernel function produced by outlining a fusion
    group. The callee takes, in order: one `index` per entry of `symbols`
    (the dynamic dimensions, by symbol name), the tensor `inputs`, and one
    destination tensor per result; it returns the results.

    ```mlir
    %y = dg.dispatch @group0 [B] (%x, %w, %b)
        : (tensor<?x64xf32, #sym.shape<[B, 64]>>, tensor<64x64xf32>,
           tensor<64xf32>) -> tensor<?x64xf32, #sym.shape<[B, 64]>>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, StrArrayAttr:$symbols,
                       Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $callee $symbols `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
}

#endif // DYNCC_DIALECT_DG_IR_DGOPS_TD
