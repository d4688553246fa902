# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes a model of two row-wise kernels to argv[1]: Y = Softmax(X) over
the last axis of X[B, 4, S, S] (a row reduction) and W = Z * Sigmoid(Z)
of Z[B, S, 96] (elementwise). With argv[2] = column: a reduction over the
first axis of X[S, 96] instead, which is not row-wise; with argv[2] =
nonzero: NonZero(X[S, 96]), a data-movement kernel with a loop of its own
(a scan), and Transpose(X), one without; with argv[2] = channels: Y =
Softmax(X) over the channels of X[B, 4, S, S] (a column reduction whose
result spans the reduced axis); with argv[2] = one_channel: the same over
X[B, 1, S, S]."""
import sys

import onnx
from onnx import TensorProto, helper

graph = helper.make_graph(
    [helper.make_node("Softmax", ["X"], ["Y"], axis=-1),
     helper.make_node("Sigmoid", ["Z"], ["G"]),
     helper.make_node("Mul", ["Z", "G"], ["W"])],
    "rows",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", 4, "S", "S"]),
     helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["B", "S", 96])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", 4, "S", "S"]),
     helper.make_tensor_value_info("W", TensorProto.FLOAT, ["B", "S", 96])])
if sys.argv[2:] == ["column"]:
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["X", "axes"], ["Y"], keepdims=0)],
        "column",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["S", 96])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [96])],
        [helper.make_tensor("axes", TensorProto.INT64, [1], [0])])
if sys.argv[2:] in (["channels"], ["one_channel"]):
    channels = 4 if sys.argv[2] == "channels" else 1
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["X"], ["Y"], axis=1)],
        "channels",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       ["B", channels, "S", "S"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                       ["B", channels, "S", "S"])])
if sys.argv[2:] == ["nonzero"]:
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["X"], ["Y"]),
         helper.make_node("Transpose", ["X"], ["T"], perm=[1, 0])],
        "nonzero",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["S", 96])],
        [helper.make_tensor_value_info("Y", TensorProto.INT64, None),
         helper.make_tensor_value_info("T", TensorProto.FLOAT, [96, "S"])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
