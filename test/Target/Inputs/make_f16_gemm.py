"""Writes a MatMul + bias + Relu model with dynamic M, K, N (argv[1]), in
f16, or in the type argv[2] names (bf16)."""
import sys

import onnx
from onnx import TensorProto, helper

nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
         helper.make_node("Add", ["P", "b"], ["S"]),
         helper.make_node("Relu", ["S"], ["Y"])]
dtype = {"f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16}[
    sys.argv[2] if len(sys.argv) > 2 else "f16"]
graph = helper.make_graph(
    nodes, "half_gemm",
    [helper.make_tensor_value_info("X", dtype, ["M", "K"]),
     helper.make_tensor_value_info("W", dtype, ["K", "N"]),
     helper.make_tensor_value_info("b", dtype, ["N"])],
    [helper.make_tensor_value_info("Y", dtype, ["M", "N"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
