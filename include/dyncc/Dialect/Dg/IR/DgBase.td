//===- DgBase.td - Dyncc graph dialect definition ----------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_IR_DGBASE_TD
#define DYNCC_DIALECT_DG_IR_DGBASE_TD

include "mlir/IR/OpBase.td"

def Dg_Dialect : Dialect {
  let name = "dg";
  let summary = "The dyncc graph dialect: primitive tensor ops and fusion groups";
  let description = [{
    `dg` holds the model after import: primitive tensor ops on ranked tensors
    whose types carry symbolic shapes (`#sym.shape` encodings), fusion groups
    (`dg.fusion`) and, after outlining, dispatches of kernel functions
    (`dg.dispatch`). Every op has a shape function over symbolic dimensions
    (`SymbolicShapeOpInterface`) and a verifier.
  }];
  let cppNamespace = "::dyncc::dg";
  let dependentDialects = ["::dyncc::sym::SymDialect"];
}

#endif // DYNCC_DIALECT_DG_IR_DGBASE_TD
