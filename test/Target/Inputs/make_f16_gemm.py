"""Writes an f16 MatMul + bias + Relu model with dynamic M, K, N (argv[1])."""
import sys

import onnx
from onnx import TensorProto, helper

nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
         helper.make_node("Add", ["P", "b"], ["S"]),
         helper.make_node("Relu", ["S"], ["Y"])]
f16 = TensorProto.FLOAT16
graph = helper.make_graph(
    nodes, "f16_gemm",
    [helper.make_tensor_value_info("X", f16, ["M", "K"]),
     helper.make_tensor_value_info("W", f16, ["K", "N"]),
     helper.make_tensor_value_info("b", f16, ["N"])],
    [helper.make_tensor_value_info("Y", f16, ["M", "N"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
