//===- SymAttrs.td - Symbolic shape attributes -------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_SYM_IR_SYMATTRS_TD
#define DYNCC_DIALECT_SYM_IR_SYMATTRS_TD

include "dyncc/Dialect/Sym/IR/SymBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/TensorEncoding.td"

class Sym_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Sym_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Sym_ExprAttr : Sym_Attr<"Expr", "expr"> {
  let summary = "A canonical dimension expression over shape symbols";
  let description = [{
    An integer expression over named symbols: constants, `+`, `-`, `*`,
    `floordiv`, `ceildiv`, `mod`, `min`, `max`. The attribute stores the
    canonical printed form, so uniquing is equality of expressions.

    ```mlir
    #sym.expr<12*B*L>
    #sym.expr<floordiv(L + 1, 2)>
    ```
  }];
  let parameters = (ins StringRefParameter<"canonical form">:$canonical);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins "const ::dyncc::DimExpr &":$expr), [{
      return $_get($_ctxt, expr.str());
    }]>
  ];
  let skipDefaultBuilders = 1;
  let extraClassDeclaration = [{
    /// Parses the stored canonical form back into a DimExpr.
    ::dyncc::DimExpr getExpr() const;
  }];
}

def Sym_ShapeAttr : Sym_Attr<"Shape", "shape",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "The symbolic shape of a tensor, as a tensor encoding";
  let description = [{
    One `#sym.expr` per dimension. Used as the encoding of a ranked tensor
    type; the static dimensions of the type must equal the constant
    expressions and the dynamic ones must be non-constant.

    ```mlir
    tensor<?x768xf32, #sym.shape<[B*L, 768]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::dyncc::sym::ExprAttr">:$dims);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The dimension expressions.
    ::llvm::SmallVector<::dyncc::DimExpr> getExprs() const;
    /// Builds from expressions.
    static ShapeAttr get(::mlir::MLIRContext *context,
                         ::llvm::ArrayRef<::dyncc::DimExpr> exprs);
  }];
}

#endif // DYNCC_DIALECT_SYM_IR_SYMATTRS_TD
