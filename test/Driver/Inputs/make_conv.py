# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes a conv model to argv[1]: Y = Relu(Conv(X[B, 6, H, W])), 16
output channels, a 3x3 window at stride 2 with dilation 1 along rows and
2 along columns, padding 1. With argv[2] = grouped: the conv has 2 groups
(3 input and 8 output channels each); with argv[2] = depthwise: 6 groups
of one channel each, 6 output channels; with argv[2] = conv1d: a 1-D conv
over X[B, 6, W], 3 taps at stride 2 with dilation 2, padding 1; with
argv[2] = line (column): the same 1-D conv as tf2onnx exports Conv1D, a
2-D conv over X[B, 6, 1, W] with a 1x3 window (over X[B, 6, H, 1] with a
3x1 one); with argv[2] = f16: in f16.
make_conv() writes Relu(Conv(X) + b) of any window, stride, padding,
dilation and element type, and returns the weights and bias."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_conv(path, channels, out_channels, taps, stride, pad, dilation,
              dtype, dims, seed, groups=1):
    """Relu(Conv(X) + b) with X[`dims`] (symbols as strings; three for a
    1-D conv, four for a 2-D one), a square window of `taps`, `pad` on
    every side, in `groups` groups, in `dtype` (f32, f16 or bf16: bf16
    takes ml_dtypes); returns the weights and the bias."""
    if dtype == "bf16":
        import ml_dtypes
        np_type = ml_dtypes.bfloat16
    else:
        np_type = {"f32": np.float32, "f16": np.float16}[dtype]
    elem = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16,
            "bf16": TensorProto.BFLOAT16}[dtype]
    rng = np.random.default_rng(seed)
    spatial = len(dims) - 2
    w = rng.uniform(-1, 1, (out_channels, channels // groups) +
                    (taps,) * spatial).astype(np_type)
    b = rng.uniform(-1, 1, (out_channels,)).astype(np_type)

    def initializer(name, array):
        # Raw bytes: numpy_helper does not take ml_dtypes' bfloat16.
        return helper.make_tensor(name, elem, array.shape, array.tobytes(),
                                  raw=True)

    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "b"], ["C"],
                          kernel_shape=[taps] * spatial,
                          pads=[pad] * (2 * spatial),
                          strides=[stride] * spatial,
                          dilations=[dilation] * spatial, group=groups),
         helper.make_node("Relu", ["C"], ["Y"])], "conv",
        [helper.make_tensor_value_info("X", elem, dims)],
        [helper.make_tensor_value_info("Y", elem, None)],
        [initializer("W", w), initializer("b", b)])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return w, b


if __name__ == "__main__":
    form = sys.argv[2] if len(sys.argv) > 2 else ""
    groups = {"grouped": 2, "depthwise": 6}.get(form, 1)
    out_channels = 6 if groups == 6 else 16
    half = sys.argv[2:] == ["f16"]
    elem = TensorProto.FLOAT16 if half else TensorProto.FLOAT
    rng = np.random.default_rng(0)
    oned = form == "conv1d"
    window = {"conv1d": (3,), "line": (1, 3), "column": (3, 1)}.get(form,
                                                                    (3, 3))
    w = rng.uniform(-1, 1, (out_channels, 6 // groups) + window).astype(
        np.float16 if half else np.float32)
    attrs = (dict(kernel_shape=[3], pads=[1, 1], strides=[2], dilations=[2])
             if oned else
             dict(kernel_shape=[1, 3], pads=[0, 1, 0, 1], strides=[1, 2],
                  dilations=[1, 2])
             if form == "line" else
             dict(kernel_shape=[3, 1], pads=[1, 0, 1, 0], strides=[2, 1],
                  dilations=[2, 1])
             if form == "column" else
             dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2],
                  dilations=[1, 2]))
    shape = {"conv1d": ["B", 6, "W"], "line": ["B", 6, 1, "W"],
             "column": ["B", 6, "H", 1]}.get(form, ["B", 6, "H", "W"])
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W"], ["C"], group=groups, **attrs),
         helper.make_node("Relu", ["C"], ["Y"])],
        "conv",
        [helper.make_tensor_value_info("X", elem, shape)],
        [helper.make_tensor_value_info("Y", elem, None)],
        [numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, sys.argv[1])
