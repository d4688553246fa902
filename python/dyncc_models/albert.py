# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ALBERT (HF AlbertModel) as torch.onnx.export writes it at opset 13.

Inputs  input_ids, attention_mask, token_type_ids: int64[batch, seq]
Outputs last_hidden_state: float[batch, seq, hidden], pooler_output: float[batch, hidden]

Same graph forms as BERT (bert.py) with ALBERT's two differences:
factorized embeddings (vocab x embedding_size, then a Linear
embedding_size -> hidden, `encoder.embedding_hidden_mapping_in`) and one set
of layer weights (`encoder.albert_layer_groups.0.albert_layers.0.*`) that
every one of the num_layers layers references, so the exported graph has
num_layers copies of the layer's nodes reading the same initializers. The
activation is HF's default for ALBERT, gelu_new (the Tanh form).
"""
from onnx import TensorProto

from ._graph import GraphBuilder
from .bert import (add_text_inputs, embeddings, extended_attention_mask, pooler,
                   resolve_config, self_attention)

OPSET = 13

CONFIGS = {
    "tiny": dict(vocab_size=128, embedding_size=16, hidden_size=32, num_layers=2,
                 num_heads=2, intermediate_size=64, max_position_embeddings=64,
                 type_vocab_size=2, layer_norm_eps=1e-12, initializer_range=0.02,
                 hidden_act="gelu_new"),
    "base": dict(vocab_size=30000, embedding_size=128, hidden_size=768, num_layers=12,
                 num_heads=12, intermediate_size=3072, max_position_embeddings=512,
                 type_vocab_size=2, layer_norm_eps=1e-12, initializer_range=0.02,
                 hidden_act="gelu_new"),
}

INPUT_DIMS = {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"],
              "token_type_ids": ["batch", "seq"]}

_ACTS = {"gelu_new": GraphBuilder.gelu_tanh, "gelu": GraphBuilder.gelu_erf}


def build(cfg, seed=0, dry=False):
    b = GraphBuilder("albert", seed=seed, dry=dry, std=cfg["initializer_range"])
    add_text_inputs(b)
    h, eps, inter = cfg["hidden_size"], cfg["layer_norm_eps"], cfg["intermediate_size"]
    act = _ACTS[cfg["hidden_act"]]
    ext = extended_attention_mask(b, "attention_mask")
    x = embeddings(b, "input_ids", "token_type_ids", cfg, cfg["embedding_size"])
    with b.scope("encoder"):
        with b.scope("embedding_hidden_mapping_in"):
            x = b.linear(x, "encoder.embedding_hidden_mapping_in", cfg["embedding_size"], h)
        p = "encoder.albert_layer_groups.0.albert_layers.0"  # shared by all layers
        names = {"query": p + ".attention.query", "key": p + ".attention.key",
                 "value": p + ".attention.value", "out": p + ".attention.dense"}
        for i in range(cfg["num_layers"]):
            with b.scope(f"albert_layer_groups.0/albert_layers.0.{i}"):
                with b.scope("attention"):
                    a = self_attention(b, x, ext, p + ".attention", h, cfg["num_heads"], names)
                    a = b.layer_norm(b.op("Add", [x, a]), p + ".attention.LayerNorm", h, eps)
                with b.scope("ffn"):
                    f = act(b, b.linear(a, p + ".ffn", h, inter))
                    f = b.linear(f, p + ".ffn_output", inter, h)
                    x = b.layer_norm(b.op("Add", [f, a]), p + ".full_layer_layer_norm", h, eps)
    pooled = pooler(b, x, h, prefix="pooler")
    b.output(x, "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", h])
    b.output(pooled, "pooler_output", TensorProto.FLOAT, ["batch", h])
    return b


def make_model(config_name="tiny", seed=0, **overrides):
    """ALBERT with random weights (seeded); `overrides` change config keys."""
    cfg = resolve_config(CONFIGS, config_name, overrides)
    return build(cfg, seed).finish(OPSET, doc=f"dyncc_models albert {config_name} {cfg}")


def param_count(config_name="tiny", **overrides):
    return build(resolve_config(CONFIGS, config_name, overrides), dry=True).num_params
