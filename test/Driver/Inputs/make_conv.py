# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes a conv model to argv[1]: Y = Relu(Conv(X[B, 6, H, W])), 16
output channels, a 3x3 window at stride 2 with dilation 1 along rows and
2 along columns, padding 1. With argv[2] = grouped: the conv has 2 groups,
which the conv model does not take; with argv[2] = f16: in f16."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

groups = 2 if sys.argv[2:] == ["grouped"] else 1
half = sys.argv[2:] == ["f16"]
elem = TensorProto.FLOAT16 if half else TensorProto.FLOAT
rng = np.random.default_rng(0)
w = rng.uniform(-1, 1, (16, 6 // groups, 3, 3)).astype(
    np.float16 if half else np.float32)
graph = helper.make_graph(
    [helper.make_node("Conv", ["X", "W"], ["C"], kernel_shape=[3, 3],
                      pads=[1, 1, 1, 1], strides=[2, 2], dilations=[1, 2],
                      group=groups),
     helper.make_node("Relu", ["C"], ["Y"])],
    "conv",
    [helper.make_tensor_value_info("X", elem, ["B", 6, "H", "W"])],
    [helper.make_tensor_value_info("Y", elem, None)],
    [numpy_helper.from_array(w, "W")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
