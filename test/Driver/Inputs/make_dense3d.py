# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes Y[B, S, 64] = X[B, S, 32] @ W + b (random weights) to argv[1];
with argv[2] = f16, in f16 with K = 64."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

half = len(sys.argv) > 2 and sys.argv[2] == "f16"
k, np_type = (64, np.float16) if half else (32, np.float32)
dtype = TensorProto.FLOAT16 if half else TensorProto.FLOAT
rng = np.random.default_rng(0)
w = rng.uniform(-1, 1, size=(k, 64)).astype(np_type)
b = rng.uniform(-1, 1, size=(64,)).astype(np_type)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["XW"]),
     helper.make_node("Add", ["XW", "b"], ["Y"])],
    "dense3d",
    [helper.make_tensor_value_info("X", dtype, ["B", "S", k])],
    [helper.make_tensor_value_info("Y", dtype, ["B", "S", 64])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
