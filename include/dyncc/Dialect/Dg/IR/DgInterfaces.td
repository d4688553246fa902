//===- DgInterfaces.td - Dg op interfaces ------------------*- tablegen -*-===//
//
// Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef DYNCC_DIALECT_DG_IR_DGINTERFACES_TD
#define DYNCC_DIALECT_DG_IR_DGINTERFACES_TD

include "mlir/IR/OpBase.td"

def Dg_SymbolicShapeOpInterface : OpInterface<"SymbolicShapeOpInterface"> {
  let description = [{
    The shape function of a graph op over symbolic dimensions: given the
    symbolic shapes of its operands (and, for small integer tensors, their
    symbolic contents: the values of shape sub-graphs), compute the shapes of
    its results, recording in the constraint store every equality the op
    requires (a matmul's contraction dims, broadcast partners). Ops that
    compute on shape values also set the symbolic contents of their results
    in `context.resultValues`, so that `Shape -> Gather -> Concat -> Reshape`
    chains resolve to exact symbolic shapes.
  }];
  let cppNamespace = "::dyncc::dg";
  let methods = [
    InterfaceMethod<
      "Computes the symbolic result shapes from the operand shapes.",
      "::mlir::LogicalResult", "inferSymbolicShapes",
      (ins "::dyncc::dg::ShapeInferenceContext &":$context,
           "::llvm::SmallVectorImpl<::dyncc::SymShape> &":$resultShapes)>
  ];
}

#endif // DYNCC_DIALECT_DG_IR_DGINTERFACES_TD
