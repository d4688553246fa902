"""Writes exported-style attention with 12 heads of 64 (argv[1]): Q K^T of
heads split by Reshape and Transpose, the scores times V, and the heads
merged back by Transpose and Reshape; batch B and sequence S dynamic."""
import sys

import onnx
from onnx import TensorProto, helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64
split = helper.make_tensor("split", I64, [4], [0, 0, 12, 64])
merge = helper.make_tensor("merge", I64, [3], [0, 0, 768])
nodes = [helper.make_node("Reshape", ["Q", "split"], ["q4"]),
         helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
         helper.make_node("Reshape", ["K", "split"], ["k4"]),
         helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
         helper.make_node("MatMul", ["qt", "kt"], ["scores"]),
         helper.make_node("Reshape", ["V", "split"], ["v4"]),
         helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
         helper.make_node("MatMul", ["scores", "vt"], ["pv"]),
         helper.make_node("Transpose", ["pv"], ["pvt"], perm=[0, 2, 1, 3]),
         helper.make_node("Reshape", ["pvt", "merge"], ["Y"])]
graph = helper.make_graph(
    nodes, "attention",
    [helper.make_tensor_value_info(n, F, ["B", "S", 768]) for n in "QKV"],
    [helper.make_tensor_value_info("Y", F, ["B", "S", 768])], [split, merge])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
