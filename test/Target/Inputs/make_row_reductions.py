"""Writes a model of row reductions over dynamic [B, L, D] (argv[1]):
Softmax and LayerNormalization over the last axis (a reduction and its
consumers in one kernel), a ReduceSum over the last axis as a kernel's
result, and a ReduceMean (a sum, then a division on the reduced shape)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
nodes = [helper.make_node("Softmax", ["X"], ["Y"], axis=-1),
         helper.make_node("LayerNormalization", ["X", "g", "beta"], ["Z"],
                          axis=-1, epsilon=1e-5),
         helper.make_node("ReduceSum", ["X", "axes"], ["S"], keepdims=0),
         helper.make_node("ReduceMean", ["X"], ["E"], axes=[-1], keepdims=0)]
graph = helper.make_graph(
    nodes, "rows",
    [helper.make_tensor_value_info("X", F, ["B", "L", "D"]),
     helper.make_tensor_value_info("g", F, ["D"]),
     helper.make_tensor_value_info("beta", F, ["D"])],
    [helper.make_tensor_value_info("Y", F, ["B", "L", "D"]),
     helper.make_tensor_value_info("Z", F, ["B", "L", "D"]),
     helper.make_tensor_value_info("S", F, ["B", "L"]),
     helper.make_tensor_value_info("E", F, ["B", "L"])], [axes])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
