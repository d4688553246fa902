#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes linear_relu.onnx: Y = Relu(X @ W + b), X: [B, 64], B a dim_param.

W and b are seeded random initializers, so the model is reproducible:
    python examples/make_linear_relu.py examples/linear_relu.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_model(features=64):
    rng = np.random.default_rng(20261120)
    w = rng.uniform(-0.5, 0.5, size=(features, features)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, size=(features,)).astype(np.float32)
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", features])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", features])
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["XW"], name="matmul"),
        helper.make_node("Add", ["XW", "b"], ["XWb"], name="bias"),
        helper.make_node("Relu", ["XWb"], ["Y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "linear_relu", [x], [y],
        initializer=[numpy_helper.from_array(w, "W"),
                     numpy_helper.from_array(b, "b")])
    model = helper.make_model(
        graph, producer_name="dyncc-examples",
        opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "linear_relu.onnx"
    onnx.save(make_model(), out)
