//===- SymOps.td - Symbolic shape operations ---------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_SYM_IR_SYMOPS_TD
#define DYNCC_DIALECT_SYM_IR_SYMOPS_TD

include "dyncc/Dialect/Sym/IR/SymAttrs.td"
include "mlir/IR/SymbolInterfaces.td"

class Sym_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sym_Dialect, mnemonic, traits>;

def Sym_SymbolOp : Sym_Op<"symbol", [Symbol]> {
  let summary = "Declares a shape symbol and its facts";
  let description = [{
    A named non-negative integer known only at run time, with its facts: an
    inclusive range, an optional divisor (every value is a multiple of it) and
    an optional likely value (used by the tile search to break ties).

    ```mlir
    sym.symbol @B range [1, 8192]
    sym.symbol @L range [8, 512] divisor 8 likely 128
    sym.symbol @nonzero0 range [0, 2147483647] data_dependent
    ```

    A `data_dependent` symbol measures a size that depends on the data (the
    count of NonZero, a shape computed from input values): the run-time binds
    it in the middle of a run, when the op that defines it has run.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$min, I64Attr:$max,
                       OptionalAttr<I64Attr>:$divisor,
                       OptionalAttr<I64Attr>:$likely,
                       UnitAttr:$data_dependent);
  let assemblyFormat = [{
    $sym_name `range` ` ` `[` $min `,` $max `]` (`divisor` $divisor^)?
    (`likely` $likely^)? (`data_dependent` $data_dependent^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Sym_ConstraintOp : Sym_Op<"constraint"> {
  let summary = "An equality between two dimension expressions";
  let description = [{
    Records a fact that the program implies but that cannot be resolved by
    substitution at compile time (for example a reshape's element count
    against a product of other symbols). The run-time checks it after binding
    the input shapes; `reason` names the ops that implied it.

    ```mlir
    sym.constraint #sym.expr<B*L> equals #sym.expr<N> "reshape @x"
    ```
  }];
  let arguments = (ins Sym_ExprAttr:$lhs, Sym_ExprAttr:$rhs, StrAttr:$reason);
  let assemblyFormat = "$lhs `equals` $rhs $reason attr-dict";
}

def Sym_BindOp : Sym_Op<"bind"> {
  let summary = "Binds data-dependent symbols to the contents of a tensor";
  let description = [{
    Sizes read from data (the shape operand of ConstantOfShape, Reshape,
    Expand or Tile computed from input values): element `i` of the 1-D
    integer tensor `values` is dimension expression `i` of `dims`. At run
    time, once `values` is computed, the run-time reads it back: an element
    whose expression is a data-dependent symbol not bound yet binds it
    (checked against its range); any other element must equal its
    expression's value. `where` names the op whose sizes these are.
    With `reshape_of` (the input shape of a Reshape) the elements follow
    Reshape's rules before they bind: 0 copies the input's dimension at that
    index (unless `allowzero`) and one -1 is inferred from the input's
    element count. `broadcast` (Expand) also accepts 1 for an element whose
    expression is bound already: the input's dimension, which the broadcast
    keeps.

    The op has an effect (the binding), so it is never erased, and every op
    whose type uses one of the symbols must come after it.

    ```mlir
    sym.bind %shape as #sym.shape<[reshape0, reshape1]> "dg.reshape 'r'"
        reshape_of #sym.shape<[B, 12]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins 1DTensorOf<[AnySignlessInteger]>:$values,
                       Sym_ShapeAttr:$dims, StrAttr:$where,
                       OptionalAttr<Sym_ShapeAttr>:$reshape_of,
                       UnitAttr:$allowzero, UnitAttr:$broadcast);
  let assemblyFormat = [{
    $values `as` $dims $where (`reshape_of` $reshape_of^)?
    (`allowzero` $allowzero^)? (`broadcast` $broadcast^)? attr-dict `:`
    type($values)
  }];
  let hasVerifier = 1;
}

#endif // DYNCC_DIALECT_SYM_IR_SYMOPS_TD
