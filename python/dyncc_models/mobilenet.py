# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""MobileNetV2 (torchvision mobilenet_v2 layout) as torch.onnx.export
writes it at opset 13 in eval mode: each BatchNormalization folded into its
Conv's weights and bias (do_constant_folding), ReLU6 as Clip(0, 6) with its
bounds as constant inputs.

Inputs  input: float[batch, 3, height, width]
Outputs output: float[batch, num_classes]

Stem: Conv 3x3/2 -> Clip. Inverted residual blocks (t, c, n, s): a 1x1
expansion to t x the input channels (Conv -> Clip; none where t = 1), a
3x3 depthwise Conv (group = its channels; stride s on a stage's first
block) -> Clip, a 1x1 linear projection to c channels (Conv), and an Add
of the block's input where the stride is 1 and the channels agree. Head:
1x1 Conv to `last_channel` -> Clip; GlobalAveragePool (torchvision's
adaptive_avg_pool2d((1, 1)) exports as it); Flatten(axis=1); Gemm(transB=1)
with classifier.1.weight [classes, last_channel] (Dropout is gone in
eval). The image size is symbolic.
"""
import numpy as np
from onnx import TensorProto

from ._graph import GraphBuilder
from .bert import resolve_config

OPSET = 13

CONFIGS = {
    "tiny": dict(settings=[[1, 8, 1, 1], [6, 8, 2, 2], [6, 16, 2, 2], [6, 24, 1, 1]],
                 first_channel=8, last_channel=32, num_channels=3, num_classes=10),
    # torchvision mobilenet_v2(width_mult=1.0): 3,504,872 parameters.
    "v2": dict(settings=[[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                         [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]],
               first_channel=32, last_channel=1280, num_channels=3, num_classes=1000),
}

INPUT_DIMS = {"input": ["batch", 3, "height", "width"]}


def _conv(b, x, prefix, cin, cout, k, stride, groups=1, relu6=True):
    """Conv with its batch norm folded in (bias) [-> Clip(0, 6)]. He-normal
    weights over the fan-in of a group; biases small."""
    fan_in = (cin // groups) * k * k
    w = b.param(prefix + ".weight", (cout, cin // groups, k, k),
                std=float(np.sqrt(2.0 / fan_in)))
    bias = b.param(prefix + ".bias", (cout,), std=0.05)
    pad = (k - 1) // 2
    y = b.op("Conv", [x, w, bias], dilations=[1, 1], group=groups, kernel_shape=[k, k],
             pads=[pad] * 4, strides=[stride, stride])
    if not relu6:
        return y
    low = b.const(0.0, np.float32)
    high = b.const(6.0, np.float32)
    return b.op("Clip", [y, low, high])


def _inverted_residual(b, x, prefix, cin, cout, stride, expand_ratio):
    hidden = cin * expand_ratio
    y = x
    layer = 0
    if expand_ratio != 1:
        with b.scope(f"conv.{layer}"):
            y = _conv(b, y, f"{prefix}.conv.{layer}.0", cin, hidden, 1, 1)
        layer += 1
    with b.scope(f"conv.{layer}"):
        y = _conv(b, y, f"{prefix}.conv.{layer}.0", hidden, hidden, 3, stride,
                  groups=hidden)
    layer += 1
    with b.scope(f"conv.{layer}"):
        # The linear bottleneck; a small scale keeps the residual stream
        # from growing.
        y = _conv(b, y, f"{prefix}.conv.{layer}", hidden, cout, 1, 1, relu6=False)
    if stride == 1 and cin == cout:
        y = b.op("Add", [x, y])
    return y


def build(cfg, seed=0, dry=False):
    b = GraphBuilder("mobilenet", seed=seed, dry=dry)
    c = cfg["num_channels"]
    dims = list(INPUT_DIMS["input"])
    dims[1] = c
    b.input("input", TensorProto.FLOAT, dims)
    cin = cfg["first_channel"]
    with b.scope("features.0"):
        x = _conv(b, "input", "features.0.0", c, cin, 3, 2)
    index = 1
    for t, cout, n, s in cfg["settings"]:
        for i in range(n):
            with b.scope(f"features.{index}"):
                x = _inverted_residual(b, x, f"features.{index}", cin, cout,
                                       s if i == 0 else 1, t)
            cin = cout
            index += 1
    last = cfg["last_channel"]
    with b.scope(f"features.{index}"):
        x = _conv(b, x, f"features.{index}.0", cin, last, 1, 1)
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x])], axis=1)
    w = b.param("classifier.1.weight", (cfg["num_classes"], last),
                std=float(np.sqrt(1.0 / last)))
    bias = b.param("classifier.1.bias", (cfg["num_classes"],), std=0.01)
    y = b.op("Gemm", [x, w, bias], alpha=1.0, beta=1.0, transB=1)
    b.output(y, "output", TensorProto.FLOAT, ["batch", cfg["num_classes"]])
    return b


def make_model(config_name="tiny", seed=0, **overrides):
    """MobileNetV2 with random weights (seeded); `overrides` change config
    keys."""
    cfg = resolve_config(CONFIGS, config_name, overrides)
    return build(cfg, seed).finish(OPSET, doc=f"dyncc_models mobilenet {config_name} {cfg}")


def param_count(config_name="tiny", **overrides):
    return build(resolve_config(CONFIGS, config_name, overrides), dry=True).num_params
