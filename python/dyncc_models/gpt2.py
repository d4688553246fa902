# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""GPT-2 (HF GPT2LMHeadModel, no KV cache) as torch.onnx.export writes it at
opset 13.

Inputs  input_ids, attention_mask: int64[batch, seq]
Outputs logits: float[batch, seq, vocab]

Forms imitated from gpt2_tiny_nopast_pt13_opset11 (a real HF GPT-2 export):
input_ids.view(-1, seq); position ids from Range(0, seq, 1) on a Shape-derived
seq; HF Conv1D as view-to-2D -> Gemm -> view-back, each view shape a
Shape->Gather/Slice->Squeeze->Unsqueeze->Concat chain; c_attn output split
into q, k, v with Split; heads split by Reshape + Transpose (key straight to
perm 0,2,3,1); the causal mask sliced out of each layer's
[1, 1, n_positions, n_positions] lower-triangular `bias` buffer with bounds
(key_len - query_len : key_len, :key_len) computed from the score tensor's
Shape. As in HF 4.x, the buffer is uint8, Cast to bool, and applied with
Where(mask, scores, -1e4); the padding mask (1 - m) * -1e4 is then Added.
GELU is the Tanh form; ln eps 1e-5; the LM head is tied to wte (MatMul by
Transpose(wte)).
"""
import numpy as np
from onnx import TensorProto

from ._graph import GraphBuilder
from .bert import resolve_config

OPSET = 13

CONFIGS = {
    "tiny": dict(vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=2,
                 layer_norm_epsilon=1e-5, initializer_range=0.02),
    "small": dict(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12,
                  layer_norm_epsilon=1e-5, initializer_range=0.02),
}

INPUT_DIMS = {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"]}

MASKED_BIAS = -10000.0


def _conv1d(b, x, prefix, nx, nf):
    """HF Conv1D: size_out = x.size()[:-1] + (nf,);
    x = addmm(bias, x.view(-1, x.size(-1)), weight); x.view(size_out)."""
    w = b.param(prefix + ".weight", (nx, nf))
    bias = b.param(prefix + ".bias", (nf,))
    bsz, seq = b.size(x, 0), b.size(x, 1)
    x2 = b.op("Reshape", [x, b.shape_of(-1, b.size_neg(x, -1))])
    y = b.op("Gemm", [x2, w, bias], alpha=1.0, beta=1.0)
    return b.op("Reshape", [y, b.shape_of(bsz, seq, nf)])


def _split_heads(b, x, heads, perm):
    """x.view(x.size()[:-1] + (heads, x.size(-1) // heads)).permute(perm)."""
    hd = b.op("Div", [b.size_neg(x, -1), b.const(heads)])
    shape = b.shape_of(b.size(x, 0), b.size(x, 1), heads, hd)
    return b.op("Transpose", [b.op("Reshape", [x, shape])], perm=perm)


def _attention(b, x, mask, prefix, cfg):
    n, heads, npos = cfg["n_embd"], cfg["n_head"], cfg["n_positions"]
    qkv = _conv1d(b, x, prefix + ".c_attn", n, 3 * n)
    q, k, v = b.op("Split", [qkv, b.init_const([n, n, n])], outputs=3, axis=2)
    q = _split_heads(b, q, heads, [0, 2, 1, 3])
    k = _split_heads(b, k, heads, [0, 2, 3, 1])
    v = _split_heads(b, v, heads, [0, 2, 1, 3])
    w = b.op("MatMul", [q, k])
    w = b.op("Div", [w, b.const(float(np.sqrt(n // heads)), np.float32)])
    # nd, ns = w.size(-2), w.size(-1); mask = bias[:, :, ns - nd:ns, :ns]
    nd, ns = b.size_neg(w, -2), b.size_neg(w, -1)
    bias = b.buffer(prefix + ".bias",
                    np.tril(np.ones((npos, npos), dtype=np.uint8))[None, None])
    m = b.op("Slice", [bias, b.unsqueeze(b.op("Sub", [ns, nd]), [0]), b.unsqueeze(ns, [0]),
                       b.init_const([2]), b.const([1])])
    m = b.op("Slice", [m, b.init_const([0]), b.unsqueeze(ns, [0]), b.init_const([3]),
                       b.const([1])])
    m = b.op("Cast", [m], to=TensorProto.BOOL)
    w = b.op("Where", [m, w, b.const(MASKED_BIAS, np.float32)])
    w = b.op("Add", [w, mask])
    p = b.op("Softmax", [w], axis=-1)
    a = b.op("Transpose", [b.op("MatMul", [p, v])], perm=[0, 2, 1, 3])
    # merge_heads: x.view(x.size()[:-2] + (x.size(-2) * x.size(-1),))
    merged = b.op("Mul", [b.size_neg(a, -2), b.size_neg(a, -1)])
    a = b.op("Reshape", [a, b.shape_of(b.size(a, 0), b.size(a, 1), merged)])
    return _conv1d(b, a, prefix + ".c_proj", n, n)


def build(cfg, seed=0, dry=False):
    b = GraphBuilder("gpt2", seed=seed, dry=dry, std=cfg["initializer_range"])
    n, eps, vocab = cfg["n_embd"], cfg["layer_norm_epsilon"], cfg["vocab_size"]
    b.input("input_ids", TensorProto.INT64, INPUT_DIMS["input_ids"])
    b.input("attention_mask", TensorProto.INT64, INPUT_DIMS["attention_mask"])
    with b.scope("transformer"):
        bsz, seq = b.size("input_ids", 0), b.size("input_ids", 1)
        ids = b.op("Reshape", ["input_ids", b.shape_of(-1, seq)])
        # position_ids = arange(0, seq).unsqueeze(0).view(-1, seq)
        pos = b.op("Range", [b.const(0), seq, b.const(1)])
        pos = b.op("Reshape", [b.unsqueeze(pos, [0]), b.shape_of(-1, seq)])
        # attention_mask.view(batch, -1)[:, None, None, :]; (1 - m) * -10000
        am = b.op("Reshape", ["attention_mask", b.shape_of(bsz, -1)])
        am = b.op("Cast", [b.unsqueeze(b.unsqueeze(am, [1]), [2])], to=TensorProto.FLOAT)
        am = b.op("Mul", [b.op("Sub", [b.const(1.0, np.float32), am]),
                          b.const(MASKED_BIAS, np.float32)])
        wte = b.param("transformer.wte.weight", (vocab, n))
        wpe = b.param("transformer.wpe.weight", (cfg["n_positions"], n))
        h = b.op("Add", [b.op("Gather", [wte, ids]), b.op("Gather", [wpe, pos])])
        for i in range(cfg["n_layer"]):
            p = f"transformer.h.{i}"
            with b.scope(f"h.{i}"):
                with b.scope("attn"):
                    a = _attention(b, b.layer_norm(h, p + ".ln_1", n, eps), am,
                                   p + ".attn", cfg)
                h = b.op("Add", [h, a])
                with b.scope("mlp"):
                    f = _conv1d(b, b.layer_norm(h, p + ".ln_2", n, eps), p + ".mlp.c_fc",
                                n, 4 * n)
                    f = _conv1d(b, b.gelu_tanh(f), p + ".mlp.c_proj", 4 * n, n)
                h = b.op("Add", [h, f])
        h = b.layer_norm(h, "transformer.ln_f", n, eps)
        # hidden_states.view(input_shape + (hidden_states.size(-1),))
        h = b.op("Reshape", [h, b.shape_of(bsz, seq, b.size_neg(h, -1))])
    with b.scope("lm_head"):
        logits = b.op("MatMul", [h, b.op("Transpose", [wte], perm=[1, 0])])
    b.output(logits, "logits", TensorProto.FLOAT, ["batch", "seq", vocab])
    return b


def make_model(config_name="tiny", seed=0, **overrides):
    """GPT-2 with random weights (seeded); `overrides` change config keys."""
    cfg = resolve_config(CONFIGS, config_name, overrides)
    return build(cfg, seed).finish(OPSET, doc=f"dyncc_models gpt2 {config_name} {cfg}")


def param_count(config_name="tiny", **overrides):
    return build(resolve_config(CONFIGS, config_name, overrides), dry=True).num_params
