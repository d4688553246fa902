# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ViT (HF ViTModel) as torch.onnx.export writes it at opset 13, with a
symbolic image size.

Inputs  pixel_values: float[batch, 3, height, width]
Outputs last_hidden_state: float[batch, tokens, hidden], pooler_output: float[batch, hidden]
        (tokens = 1 + (height / patch) * (width / patch))

Patch embedding: Conv (kernel = stride = patch) then `.flatten(2)` as torch's
flatten helper writes it (Shape -> Slice[0:2] -> Concat with [-1] -> Reshape)
and `.transpose(1, 2)`. The class token is `expand(batch, -1, -1)`ed the way
torch exports an expand with -1 (ConstantOfShape/Equal/Where on the target
shape, then Expand). Position embeddings: HF adds a fixed table of
1 + (image_size / patch)^2 rows, which only fits one image size; here the
table has 1 + (max_image_size / patch)^2 rows and is sliced to the token count
read from the embeddings' Shape (Slice with a computed end), so the graph is
valid for any height/width that are multiples of the patch size with
(h/p)*(w/p) <= (max_image_size/p)^2. (No interpolation: rows are taken in
order, which is exact for image_size and merely plausible for others.)
The encoder is pre-LayerNorm with the BERT-style attention of bert.py (no
mask), Erf GELU, final LayerNorm and the Tanh pooler on token 0.
"""
import numpy as np
from onnx import TensorProto

from ._graph import GraphBuilder, _tensor
from .bert import pooler, resolve_config, self_attention

OPSET = 13

CONFIGS = {
    "tiny": dict(image_size=32, max_image_size=64, patch_size=8, num_channels=3,
                 hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64,
                 layer_norm_eps=1e-12, initializer_range=0.02),
    "b16": dict(image_size=224, max_image_size=384, patch_size=16, num_channels=3,
                hidden_size=768, num_layers=12, num_heads=12, intermediate_size=3072,
                layer_norm_eps=1e-12, initializer_range=0.02),
}

INPUT_DIMS = {"pixel_values": ["batch", 3, "height", "width"]}


def max_tokens(cfg):
    return 1 + (cfg["max_image_size"] // cfg["patch_size"]) ** 2


def _expand_neg1(b, x, pieces):
    """x.expand(*pieces) with -1 entries, as torch's expand symbolic writes it:
    size = Where(Equal(size, ones * -1), ones, size); Expand(x, size)."""
    size = b.shape_of(*pieces)
    ones = b.op("ConstantOfShape", [b.op("Shape", [size])],
                value=_tensor(np.array([1], dtype=np.int64)))
    neg = b.op("Mul", [ones, b.const(-1)])
    size = b.op("Where", [b.op("Equal", [size, neg]), ones, size])
    return b.op("Expand", [x, size])


def build(cfg, seed=0, dry=False):
    b = GraphBuilder("vit", seed=seed, dry=dry, std=cfg["initializer_range"])
    h, eps, c, p = cfg["hidden_size"], cfg["layer_norm_eps"], cfg["num_channels"], cfg["patch_size"]
    dims = list(INPUT_DIMS["pixel_values"])
    dims[1] = c
    b.input("pixel_values", TensorProto.FLOAT, dims)
    with b.scope("embeddings"):
        bsz = b.size("pixel_values", 0)
        with b.scope("patch_embeddings"):
            w = b.param("embeddings.patch_embeddings.projection.weight", (h, c, p, p),
                        std=float(np.sqrt(1.0 / (c * p * p))))
            bias = b.param("embeddings.patch_embeddings.projection.bias", (h,))
            x = b.op("Conv", ["pixel_values", w, bias], dilations=[1, 1], group=1,
                     kernel_shape=[p, p], pads=[0, 0, 0, 0], strides=[p, p])
            # x.flatten(2): Shape -> Slice[0:2] -> Concat(., [-1]) -> Reshape
            lead = b.op("Slice", [b.op("Shape", [x]), b.const([0]), b.const([2]), b.const([0])])
            x = b.op("Reshape", [x, b.op("Concat", [lead, b.init_const([-1])], axis=0)])
            x = b.op("Transpose", [x], perm=[0, 2, 1])
        cls = b.param("embeddings.cls_token", (1, 1, h))
        cls = _expand_neg1(b, cls, [bsz, -1, -1])
        x = b.op("Concat", [cls, x], axis=1)
        # position_embeddings[:, :tokens] with tokens = x.size(1)
        pos = b.param("embeddings.position_embeddings", (1, max_tokens(cfg), h))
        tokens = b.size(x, 1)
        pos = b.op("Slice", [pos, b.init_const([0]), b.unsqueeze(tokens, [0]),
                             b.init_const([1]), b.const([1])])
        x = b.op("Add", [x, pos])
    for i in range(cfg["num_layers"]):
        pre = f"encoder.layer.{i}"
        names = {"query": pre + ".attention.attention.query",
                 "key": pre + ".attention.attention.key",
                 "value": pre + ".attention.attention.value",
                 "out": pre + ".attention.output.dense"}
        with b.scope("encoder"), b.scope(f"layer.{i}"):
            with b.scope("attention"):
                a = b.layer_norm(x, pre + ".layernorm_before", h, eps)
                a = self_attention(b, a, None, pre + ".attention", h, cfg["num_heads"], names)
            x = b.op("Add", [a, x])
            f = b.layer_norm(x, pre + ".layernorm_after", h, eps)
            with b.scope("intermediate"):
                f = b.gelu_erf(b.linear(f, pre + ".intermediate.dense", h,
                                        cfg["intermediate_size"]))
            with b.scope("output"):
                f = b.linear(f, pre + ".output.dense", cfg["intermediate_size"], h)
            x = b.op("Add", [f, x])
    x = b.layer_norm(x, "layernorm", h, eps)
    pooled = pooler(b, x, h)
    b.output(x, "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", h])
    b.output(pooled, "pooler_output", TensorProto.FLOAT, ["batch", h])
    return b


def make_model(config_name="tiny", seed=0, **overrides):
    """ViT with random weights (seeded); `overrides` change config keys."""
    cfg = resolve_config(CONFIGS, config_name, overrides)
    return build(cfg, seed).finish(OPSET, doc=f"dyncc_models vit {config_name} {cfg}")


def param_count(config_name="tiny", **overrides):
    return build(resolve_config(CONFIGS, config_name, overrides), dry=True).num_params
