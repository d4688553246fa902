"""Writes an elementwise model over dynamic [B, L, D] with broadcasts
(argv[1]): Y = sigmoid(erf(X * s + Z)) - tanh(X * s + Z), s of [D] and Z of
[B, 1, D]."""
import sys

import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT
nodes = [helper.make_node("Mul", ["X", "s"], ["A"]),
         helper.make_node("Add", ["A", "Z"], ["C"]),
         helper.make_node("Erf", ["C"], ["E"]),
         helper.make_node("Sigmoid", ["E"], ["G"]),
         helper.make_node("Tanh", ["C"], ["H"]),
         helper.make_node("Sub", ["G", "H"], ["Y"])]
graph = helper.make_graph(
    nodes, "broadcast",
    [helper.make_tensor_value_info("X", F, ["B", "L", "D"]),
     helper.make_tensor_value_info("s", F, ["D"]),
     helper.make_tensor_value_info("Z", F, ["B", 1, "D"])],
    [helper.make_tensor_value_info("Y", F, ["B", "L", "D"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
