# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes Y[B, S, 64] = X[B, S, 32] @ W + b (random weights) to argv[1]."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w = rng.uniform(-1, 1, size=(32, 64)).astype(np.float32)
b = rng.uniform(-1, 1, size=(64,)).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["XW"]),
     helper.make_node("Add", ["XW", "b"], ["Y"])],
    "dense3d",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", "S", 32])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", "S", 64])],
    [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
