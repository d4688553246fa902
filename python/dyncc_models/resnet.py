# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ResNet (torchvision resnet50 layout, bottleneck v1.5: stride on the 3x3)
as torch.onnx.export writes it at opset 11 with BatchNormalization kept as
its own op (export with training=TrainingMode.PRESERVE or
do_constant_folding=False keeps it; the default eval export folds it into
the Conv).

Inputs  input: float[batch, 3, height, width]
Outputs output: float[batch, num_classes]

Conv (no bias) -> BatchNormalization(epsilon 1e-5, momentum 0.9) -> Relu;
MaxPool 3x3/2 pad 1; bottlenecks 1x1 -> 3x3 -> 1x1 (x4) with a Conv+BN
downsample on the first block of each stage, Add residual, Relu;
GlobalAveragePool (torchvision's AdaptiveAvgPool2d((1, 1)) exports as it);
Flatten(axis=1); Gemm(transB=1) with fc.weight [classes, features].
Imitates light_resnet50_opset9 (model-zoo ResNet-50 topology) and
resnet50_stem_residual_block_opset11 (Conv/BatchNormalization/Relu/MaxPool),
with torch's Add for residuals (caffe2 wrote Sum) and a symbolic image size.
"""
import numpy as np
from onnx import TensorProto

from ._graph import GraphBuilder
from .bert import resolve_config

OPSET = 11

CONFIGS = {
    "tiny": dict(layers=[1, 1, 1, 1], stem_width=8, widths=[4, 8, 16, 32], expansion=4,
                 num_channels=3, num_classes=10, image_size=32),
    "50": dict(layers=[3, 4, 6, 3], stem_width=64, widths=[64, 128, 256, 512], expansion=4,
               num_channels=3, num_classes=1000, image_size=224),
}

INPUT_DIMS = {"input": ["batch", 3, "height", "width"]}


def _conv_bn(b, x, prefix, bn_prefix, cin, cout, k, stride, relu=True, gamma=1.0):
    """Conv(bias=False) -> BatchNormalization [-> Relu]. He-normal weights;
    running statistics random but plausible (var > 0)."""
    w = b.param(prefix + ".weight", (cout, cin, k, k), std=float(np.sqrt(2.0 / (cin * k * k))))
    pad = k // 2
    y = b.op("Conv", [x, w], dilations=[1, 1], group=1, kernel_shape=[k, k],
             pads=[pad] * 4, strides=[stride, stride])
    scale = b.param(bn_prefix + ".weight", (cout,), init="uniform", low=0.5 * gamma,
                    high=1.0 * gamma)
    bias = b.param(bn_prefix + ".bias", (cout,), std=0.05)
    mean = b.param(bn_prefix + ".running_mean", (cout,), std=0.05, trainable=False)
    var = b.param(bn_prefix + ".running_var", (cout,), init="uniform", low=0.5, high=1.5,
                  trainable=False)
    y = b.op("BatchNormalization", [y, scale, bias, mean, var], epsilon=1e-5, momentum=0.9)
    return b.op("Relu", [y]) if relu else y


def _bottleneck(b, x, prefix, cin, width, expansion, stride):
    cout = width * expansion
    with b.scope("conv1"):
        y = _conv_bn(b, x, prefix + ".conv1", prefix + ".bn1", cin, width, 1, 1)
    with b.scope("conv2"):
        y = _conv_bn(b, y, prefix + ".conv2", prefix + ".bn2", width, width, 3, stride)
    with b.scope("conv3"):
        # a small last-BN scale keeps the residual stream from growing
        y = _conv_bn(b, y, prefix + ".conv3", prefix + ".bn3", width, cout, 1, 1,
                     relu=False, gamma=0.3)
    if stride != 1 or cin != cout:
        with b.scope("downsample"):
            x = _conv_bn(b, x, prefix + ".downsample.0", prefix + ".downsample.1",
                         cin, cout, 1, stride, relu=False)
    return b.op("Relu", [b.op("Add", [y, x])])


def build(cfg, seed=0, dry=False):
    b = GraphBuilder("resnet", seed=seed, dry=dry)
    c = cfg["num_channels"]
    dims = list(INPUT_DIMS["input"])
    dims[1] = c
    b.input("input", TensorProto.FLOAT, dims)
    stem = cfg["stem_width"]
    x = _conv_bn(b, "input", "conv1", "bn1", c, stem, 7, 2)
    x = b.op("MaxPool", [x], ceil_mode=0, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             strides=[2, 2])
    cin = stem
    for s, (blocks, width) in enumerate(zip(cfg["layers"], cfg["widths"])):
        for i in range(blocks):
            stride = 2 if (s > 0 and i == 0) else 1
            with b.scope(f"layer{s + 1}"), b.scope(str(i)):
                x = _bottleneck(b, x, f"layer{s + 1}.{i}", cin, width, cfg["expansion"], stride)
            cin = width * cfg["expansion"]
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x])], axis=1)
    w = b.param("fc.weight", (cfg["num_classes"], cin), std=float(np.sqrt(1.0 / cin)))
    bias = b.param("fc.bias", (cfg["num_classes"],), std=0.01)
    y = b.op("Gemm", [x, w, bias], alpha=1.0, beta=1.0, transB=1)
    b.output(y, "output", TensorProto.FLOAT, ["batch", cfg["num_classes"]])
    return b


def make_model(config_name="tiny", seed=0, **overrides):
    """ResNet with random weights (seeded); `overrides` change config keys."""
    cfg = resolve_config(CONFIGS, config_name, overrides)
    return build(cfg, seed).finish(OPSET, doc=f"dyncc_models resnet {config_name} {cfg}")


def param_count(config_name="tiny", **overrides):
    return build(resolve_config(CONFIGS, config_name, overrides), dry=True).num_params
