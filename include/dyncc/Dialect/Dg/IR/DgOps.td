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
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Dg_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dg_Dialect, mnemonic, traits>;

/// A primitive tensor op with a symbolic shape function.
class Dg_GraphOp<string mnemonic, list<Trait> traits = []>
    : Dg_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Dg_SymbolicShapeOpInterface>])>;

//===----------------------------------------------------------------------===//
// Primitive ops
//===----------------------------------------------------------------------===//

def Dg_ConstantOp : Dg_GraphOp<"constant", [ConstantLike,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor (an initializer of the model)";
  let description = [{
    ```mlir
    %w = dg.constant dense<...> : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasVerifier = 1;
}

def Dg_MatMulOp : Dg_GraphOp<"matmul"> {
  let summary = "Matrix product of two rank-2 tensors";
  let description = [{
    `[M, K] x [K, N] -> [M, N]`, numpy `matmul` semantics for rank 2. The two
    contraction dimensions must be equal; when they are different symbolic
    expressions, shape propagation records the equality.

    ```mlir
    %y = dg.matmul %x, %w : (tensor<?x64xf32, #sym.shape<[B, 64]>>,
                             tensor<64x32xf32>) -> tensor<?x32xf32, ...>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Dg_ElementwiseBinaryOp<string mnemonic, string math>
    : Dg_GraphOp<mnemonic> {
  let summary = "Elementwise " # math # " with numpy broadcasting";
  let description = [{
    Operands broadcast against each other the numpy way: shapes are aligned
    at the trailing dimension, and a dimension of size 1 stretches.
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Dg_AddOp : Dg_ElementwiseBinaryOp<"add", "addition">;

class Dg_ElementwiseUnaryOp<string mnemonic, string math>
    : Dg_GraphOp<mnemonic, [SameOperandsAndResultShape,
                            SameOperandsAndResultElementType]> {
  let summary = "Elementwise " # math;
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Dg_ReluOp : Dg_ElementwiseUnaryOp<"relu", "max(x, 0)">;

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
