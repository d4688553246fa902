//===- SymBase.td - Symbolic shape dialect definition ------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_SYM_IR_SYMBASE_TD
#define DYNCC_DIALECT_SYM_IR_SYMBASE_TD

include "mlir/IR/OpBase.td"

def Sym_Dialect : Dialect {
  let name = "sym";
  let summary = "Named shape symbols and canonical dimension expressions";
  let description = [{
    The `sym` dialect carries dyncc's symbolic shapes. A module declares its
    shape symbols with `sym.symbol` (range, divisibility, likely value); every
    tensor dimension is then an expression over those symbols, written as a
    `#sym.shape<[...]>` tensor encoding:

    ```mlir
    sym.symbol @B range [1, 8192]
    func.func @main(%x: tensor<?x64xf32, #sym.shape<[B, 64]>>) ...
    ```

    Expressions are kept in a canonical form (dyncc/Support/DimExpr.h), so two
    attributes are equal exactly when their expressions are equal
    (`12*B*L` and `L*B*12` print and unique the same).
  }];
  let cppNamespace = "::dyncc::sym";
  let useDefaultAttributePrinterParser = 1;
}

#endif // DYNCC_DIALECT_SYM_IR_SYMBASE_TD
