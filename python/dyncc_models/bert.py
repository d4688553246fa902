# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""BERT (HF BertModel) as torch.onnx.export writes it at opset 13.

Inputs  input_ids, attention_mask, token_type_ids: int64[batch, seq]
Outputs last_hidden_state: float[batch, seq, hidden], pooler_output: float[batch, hidden]

Forms imitated (see docs/Models.md): bert_squad_tiny_pt13_opset1{0,11} for the
mask chain, embeddings, decomposed LayerNorm, Erf GELU and the
Shape->Gather->Unsqueeze->Concat->Reshape head split/merge;
distilbert_tiny_seqcls_pt110_opset11 for position ids sliced out of the
`position_ids` buffer with a Shape-derived end.
"""
import numpy as np
from onnx import TensorProto

from ._graph import GraphBuilder

OPSET = 13

CONFIGS = {
    "tiny": dict(vocab_size=128, hidden_size=32, num_layers=2, num_heads=2,
                 intermediate_size=64, max_position_embeddings=64,
                 type_vocab_size=2, layer_norm_eps=1e-12, initializer_range=0.02),
    "base": dict(vocab_size=30522, hidden_size=768, num_layers=12, num_heads=12,
                 intermediate_size=3072, max_position_embeddings=512,
                 type_vocab_size=2, layer_norm_eps=1e-12, initializer_range=0.02),
    "large": dict(vocab_size=30522, hidden_size=1024, num_layers=24, num_heads=16,
                  intermediate_size=4096, max_position_embeddings=512,
                  type_vocab_size=2, layer_norm_eps=1e-12, initializer_range=0.02),
}

INPUT_DIMS = {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"],
              "token_type_ids": ["batch", "seq"]}


def resolve_config(configs, config_name, overrides):
    if config_name not in configs:
        raise KeyError(f"unknown config {config_name!r}; have {sorted(configs)}")
    cfg = dict(configs[config_name])
    for k, v in overrides.items():
        if k not in cfg:
            raise KeyError(f"unknown config key {k!r}; have {sorted(cfg)}")
        cfg[k] = v
    return cfg


# -- pieces shared with ALBERT and ViT ------------------------------------------

def extended_attention_mask(b, attention_mask):
    """HF get_extended_attention_mask: mask[:, None, None, :] -> float,
    (1.0 - m) * -10000.0."""
    with b.scope("mask"):
        m = b.unsqueeze(b.unsqueeze(attention_mask, [1]), [2])
        m = b.op("Cast", [m], to=TensorProto.FLOAT)
        m = b.op("Sub", [b.const(1.0, np.float32), m])
        return b.op("Mul", [m, b.const(-10000.0, np.float32)])


def _split_heads(b, x, heads, head_dim, perm):
    """transpose_for_scores: x.view(x.size()[:-1] + (heads, head_dim)) then
    permute, the view's shape built as Shape->Gather->Unsqueeze->Concat."""
    shape = b.shape_of(b.size(x, 0), b.size(x, 1), heads, head_dim)
    return b.op("Transpose", [b.op("Reshape", [x, shape])], perm=perm)


def self_attention(b, x, ext_mask, prefix, hidden, heads, names=None):
    """BertSelfAttention + the output projection (no residual/LayerNorm).
    ext_mask may be None (ViT). `names` maps query/key/value/out to weight
    prefixes (default BERT's). Returns [batch, seq, hidden]."""
    names = names or {"query": prefix + ".self.query", "key": prefix + ".self.key",
                      "value": prefix + ".self.value", "out": prefix + ".output.dense"}
    head_dim = hidden // heads
    with b.scope("self"):
        q = b.linear(x, names["query"], hidden, hidden)
        k = b.linear(x, names["key"], hidden, hidden)
        v = b.linear(x, names["value"], hidden, hidden)
        qh = _split_heads(b, q, heads, head_dim, [0, 2, 1, 3])
        # key.transpose(-1, -2) after the permute: the exporter fuses the two
        # transposes into one with perm (0, 2, 3, 1).
        kt = _split_heads(b, k, heads, head_dim, [0, 2, 3, 1])
        vh = _split_heads(b, v, heads, head_dim, [0, 2, 1, 3])
        scores = b.op("MatMul", [qh, kt])
        scores = b.op("Div", [scores, b.const(float(np.sqrt(head_dim)), np.float32)])
        if ext_mask is not None:
            scores = b.op("Add", [scores, ext_mask])
        probs = b.op("Softmax", [scores], axis=-1)
        ctx = b.op("Transpose", [b.op("MatMul", [probs, vh])], perm=[0, 2, 1, 3])
        # context.view(context.size()[:-2] + (all_head_size,))
        ctx = b.op("Reshape", [ctx, b.shape_of(b.size(ctx, 0), b.size(ctx, 1), hidden)])
    with b.scope("output"):
        return b.linear(ctx, names["out"], hidden, hidden)


def post_ln_layer(b, x, ext_mask, prefix, cfg, act):
    """BertLayer (post-LayerNorm): attention, add & norm, FFN, add & norm."""
    h, eps = cfg["hidden_size"], cfg["layer_norm_eps"]
    with b.scope("attention"):
        a = self_attention(b, x, ext_mask, prefix + ".attention", h, cfg["num_heads"])
        a = b.layer_norm(b.op("Add", [a, x]), prefix + ".attention.output.LayerNorm", h, eps)
    with b.scope("intermediate"):
        f = act(b, b.linear(a, prefix + ".intermediate.dense", h, cfg["intermediate_size"]))
    with b.scope("output"):
        f = b.linear(f, prefix + ".output.dense", cfg["intermediate_size"], h)
        return b.layer_norm(b.op("Add", [f, a]), prefix + ".output.LayerNorm", h, eps)


def pooler(b, hidden_states, hidden, prefix="pooler.dense"):
    """hidden_states[:, 0] -> Linear -> Tanh."""
    with b.scope("pooler"):
        first = b.op("Gather", [hidden_states, b.const(0)], axis=1)
        w = b.param(prefix + ".weight", (hidden, hidden))
        bias = b.param(prefix + ".bias", (hidden,))
        return b.op("Tanh", [b.op("Add", [b.op("MatMul", [first, w]), bias])])


def embeddings(b, input_ids, token_type_ids, cfg, width, prefix="embeddings"):
    """Word + token-type + position embeddings (position ids sliced from the
    position_ids buffer up to seq = input_ids.size(1)), then LayerNorm."""
    with b.scope("embeddings"):
        seq = b.size(input_ids, 1)
        pos_buf = b.buffer(prefix + ".position_ids",
                           np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None, :])
        pos_ids = b.op("Slice", [pos_buf, b.init_const([0]), b.unsqueeze(seq, [0]),
                                 b.init_const([1]), b.init_const([1])])
        word = b.param(prefix + ".word_embeddings.weight", (cfg["vocab_size"], width))
        ttype = b.param(prefix + ".token_type_embeddings.weight",
                        (cfg["type_vocab_size"], width))
        pos = b.param(prefix + ".position_embeddings.weight",
                      (cfg["max_position_embeddings"], width))
        e = b.op("Add", [b.op("Gather", [word, input_ids]),
                         b.op("Gather", [ttype, token_type_ids])])
        e = b.op("Add", [e, b.op("Gather", [pos, pos_ids])])
        return b.layer_norm(e, prefix + ".LayerNorm", width, cfg["layer_norm_eps"])


def add_text_inputs(b, with_token_types=True):
    b.input("input_ids", TensorProto.INT64, INPUT_DIMS["input_ids"])
    b.input("attention_mask", TensorProto.INT64, INPUT_DIMS["attention_mask"])
    if with_token_types:
        b.input("token_type_ids", TensorProto.INT64, INPUT_DIMS["token_type_ids"])


# -- the model -------------------------------------------------------------------

def build(cfg, seed=0, dry=False):
    b = GraphBuilder("bert", seed=seed, dry=dry, std=cfg["initializer_range"])
    add_text_inputs(b)
    ext = extended_attention_mask(b, "attention_mask")
    x = embeddings(b, "input_ids", "token_type_ids", cfg, cfg["hidden_size"])
    for i in range(cfg["num_layers"]):
        with b.scope("encoder"), b.scope(f"layer.{i}"):
            x = post_ln_layer(b, x, ext, f"encoder.layer.{i}", cfg, GraphBuilder.gelu_erf)
    pooled = pooler(b, x, cfg["hidden_size"])
    b.output(x, "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", cfg["hidden_size"]])
    b.output(pooled, "pooler_output", TensorProto.FLOAT, ["batch", cfg["hidden_size"]])
    return b


def make_model(config_name="tiny", seed=0, **overrides):
    """BERT with random weights (seeded). `overrides` change config keys,
    e.g. make_model("base", num_layers=2)."""
    cfg = resolve_config(CONFIGS, config_name, overrides)
    return build(cfg, seed).finish(OPSET, doc=f"dyncc_models bert {config_name} {cfg}")


def param_count(config_name="tiny", **overrides):
    return build(resolve_config(CONFIGS, config_name, overrides), dry=True).num_params
