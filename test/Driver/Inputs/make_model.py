# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes small ONNX models for the driver tests: make_model.py KIND OUT."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

kind, out = sys.argv[1], sys.argv[2]
x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", 8])
y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", 8])
if kind == "unsupported":
    nodes = [helper.make_node("Relu", ["X"], ["T"], name="first"),
             helper.make_node("Softsign", ["T"], ["Y"], name="the_softsign")]
    inits = []
elif kind == "unsorted":
    # Nodes listed consumer first, as some real exports do.
    w = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    nodes = [helper.make_node("Relu", ["T"], ["Y"], name="relu"),
             helper.make_node("MatMul", ["X", "W"], ["T"], name="matmul")]
    inits = [numpy_helper.from_array(w, "W")]
elif kind == "prologue":
    # A Relu fused before the MatMul: an operand computed in the kernel.
    w = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    nodes = [helper.make_node("Relu", ["X"], ["R"], name="relu"),
             helper.make_node("MatMul", ["R", "W"], ["Y"], name="matmul")]
    inits = [numpy_helper.from_array(w, "W")]
elif kind == "constant":
    # No kernel at all: the output is a weight, copied by the plan.
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Constant", [], ["Y"], name="constant",
                              value=numpy_helper.from_array(
                                  np.arange(6, dtype=np.float32).reshape(2, 3)))]
    inits = []
elif kind == "matmul":
    # A product with nothing fused after it: the block's accumulator is
    # the result.
    w = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    nodes = [helper.make_node("MatMul", ["X", "W"], ["Y"], name="matmul")]
    inits = [numpy_helper.from_array(w, "W")]
elif kind == "maxpool":
    # ResNet's stem pool: 3x3 windows at stride 2 over an image padded by 1.
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                      ["B", 4, "H", "W"])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[3, 3],
                              strides=[2, 2], pads=[1, 1, 1, 1], name="pool")]
    inits = []
elif kind == "kmismatch":
    w = np.ones((9, 8), dtype=np.float32)
    nodes = [helper.make_node("MatMul", ["X", "W"], ["Y"], name="bad_matmul")]
    inits = [numpy_helper.from_array(w, "W")]
elif kind == "fixed_batch":
    # X concatenated beside a constant [1, 8] row: the model fixes B to 1.
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Concat", ["X", "C"], ["Y"], axis=1,
                              name="beside_a_row")]
    inits = [numpy_helper.from_array(np.ones((1, 8), dtype=np.float32), "C")]
elif kind == "two_layers":
    # Two layers of the same shape, [B, 64] x [64, 64] + bias, Relu: their
    # kernels are deduplicated, so their groups share one name.
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", 64])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", 64])
    rng = np.random.default_rng(3)
    nodes, inits, last = [], [], "X"
    for i in range(2):
        inits += [numpy_helper.from_array(
                      rng.standard_normal((64, 64)).astype(np.float32) / 8, f"W{i}"),
                  numpy_helper.from_array(
                      rng.standard_normal(64).astype(np.float32), f"b{i}")]
        out_name = "Y" if i == 1 else f"H{i}"
        nodes += [helper.make_node("MatMul", [last, f"W{i}"], [f"M{i}"], name=f"matmul{i}"),
                  helper.make_node("Add", [f"M{i}", f"b{i}"], [f"A{i}"], name=f"bias{i}"),
                  helper.make_node("Relu", [f"A{i}"], [out_name], name=f"relu{i}")]
        last = out_name
else:
    raise SystemExit("unknown kind " + kind)
graph = helper.make_graph(nodes, kind, [x], [y], initializer=inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.save(model, out)
