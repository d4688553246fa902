# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes a one-pixel conv model to argv[1]: Y = Relu(Conv(X[B, C, H, W])
+ R) with a 1x1 window, stride 1, no padding, a bias, C = argv[2] and F =
argv[3] output channels (64 and 48 by default), in argv[4] (float32 by
default, or float16). With argv[5] = residual, R[B, F, H, W] is a second
input (a ResNet block's sum); otherwise there is no R. With argv[5] =
stride2, padded or grouped, the conv has a stride of 2, a padding of 1 or
2 groups instead, and no R: a conv that is not a GEMM over the image's
pixels (the strided one is, after a strided slice of the image). With argv[5] = batchnorm, the conv has no bias and a
BatchNormalization follows it, before the residual's Add. make_pointwise_conv()
returns the weight and bias, for a reference; its `groups` gives the conv
that many groups (2 with the grouped variant)."""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def make_pointwise_conv(path, channels=64, out_channels=48, dtype="float32",
                        variant="", seed=0, groups=None):
    rng = np.random.default_rng(seed)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    if groups is None:
        groups = 2 if variant == "grouped" else 1
    w = rng.uniform(-1, 1, (out_channels, channels // groups, 1, 1)).astype(
        dtype)
    b = rng.uniform(-1, 1, (out_channels,)).astype(dtype)
    attrs = dict(kernel_shape=[1, 1], group=groups,
                 strides=[2, 2] if variant == "stride2" else [1, 1],
                 pads=[1] * 4 if variant == "padded" else [0] * 4)
    nodes = [helper.make_node("Conv", ["X", "W", "b"], ["C"], **attrs)]
    inputs = [helper.make_tensor_value_info("X", elem,
                                            ["B", channels, "H", "W"])]
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")]
    if variant == "batchnorm":
        nodes = [helper.make_node("Conv", ["X", "W"], ["C0"], **attrs),
                 helper.make_node("BatchNormalization",
                                  ["C0", "s", "b", "m", "v"], ["C"])]
        inits += [numpy_helper.from_array(
            rng.uniform(0.5, 1.5, (out_channels,)).astype(dtype), name)
            for name in ("s", "m", "v")]
    if variant in ("residual", "batchnorm"):
        nodes.append(helper.make_node("Add", ["C", "R"], ["S"]))
        inputs.append(helper.make_tensor_value_info(
            "R", elem, ["B", out_channels, "H", "W"]))
        nodes.append(helper.make_node("Relu", ["S"], ["Y"]))
    else:
        nodes.append(helper.make_node("Relu", ["C"], ["Y"]))
    graph = helper.make_graph(
        nodes, "pointwise_conv", inputs,
        [helper.make_tensor_value_info("Y", elem, None)], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return w, b


if __name__ == "__main__":
    make_pointwise_conv(
        sys.argv[1], *[int(a) for a in sys.argv[2:4]],
        dtype=sys.argv[4] if len(sys.argv) > 4 else "float32",
        variant=sys.argv[5] if len(sys.argv) > 5 else "")
