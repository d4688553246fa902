# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The ONNX model generators of python/dyncc_models (docs/Models.md): every
family's tiny config is a valid opset <= 17 / IR <= 8 model (checked by this
onnx and by Debian's onnx 1.12, which the C++ importer links), has the
symbolic inputs and the torch-export op patterns it claims, is deterministic
per seed, and - when onnxruntime is importable - runs at two shape bindings
and matches a numpy reference of the architecture."""
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import dyncc_models
from dyncc_models import FAMILIES

FAMILY_NAMES = sorted(FAMILIES)
TEXT = ("albert", "bert", "gpt2")
DEBIAN_PYTHON = "/usr/bin/python3"
PYTHON_DIR = Path(__file__).resolve().parents[1]

# (input dims, bindings): two shape bindings each family is run at.
BINDINGS = {
    "bert": [dict(batch=1, seq=7), dict(batch=2, seq=16)],
    "albert": [dict(batch=1, seq=7), dict(batch=2, seq=16)],
    "gpt2": [dict(batch=1, seq=7), dict(batch=2, seq=16)],
    "vit": [dict(batch=1, height=32, width=32), dict(batch=2, height=48, width=64)],
    "resnet": [dict(batch=1, height=32, width=32), dict(batch=2, height=48, width=64)],
    "mobilenet": [dict(batch=1, height=32, width=32), dict(batch=2, height=48, width=64)],
}

EXPECTED_INPUTS = {
    "bert": {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"],
             "token_type_ids": ["batch", "seq"]},
    "albert": {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"],
               "token_type_ids": ["batch", "seq"]},
    "gpt2": {"input_ids": ["batch", "seq"], "attention_mask": ["batch", "seq"]},
    "vit": {"pixel_values": ["batch", 3, "height", "width"]},
    "resnet": {"input": ["batch", 3, "height", "width"]},
    "mobilenet": {"input": ["batch", 3, "height", "width"]},
}

REQUIRED_OPS = {
    "bert": {"Gather", "Erf", "Softmax", "ReduceMean", "Pow", "Sqrt", "Cast", "Tanh",
             "Slice", "Transpose"},
    "albert": {"Gather", "Tanh", "Softmax", "ReduceMean", "Pow", "Sqrt", "Cast"},
    "gpt2": {"Where", "Range", "Tanh", "Split", "Gemm", "Slice", "Squeeze", "Cast",
             "Softmax", "ReduceMean"},
    "vit": {"Conv", "Erf", "Softmax", "Expand", "ConstantOfShape", "Where", "Equal",
            "Slice", "Tanh"},
    "resnet": {"Conv", "BatchNormalization", "Relu", "MaxPool", "Add",
               "GlobalAveragePool", "Flatten", "Gemm"},
    "mobilenet": {"Conv", "Clip", "Add", "GlobalAveragePool", "Flatten", "Gemm"},
}
FORBIDDEN_OPS = {"LayerNormalization", "Gelu", "Attention", "FastGelu",
                 "SkipLayerNormalization", "EmbedLayerNormalization"}


@pytest.fixture(scope="module")
def models():
    return {f: FAMILIES[f].make_model("tiny", seed=0) for f in FAMILY_NAMES}


def _ort():
    try:
        import onnxruntime
    except ImportError:
        pytest.skip("onnxruntime is not importable (not in python/requirements.txt yet); "
                    "`pip install onnxruntime` to run the execution tests")
    return onnxruntime


def _session(model):
    ort = _ort()
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _feeds(family, binding, rng, vocab=None):
    if family in TEXT:
        b, s = binding["batch"], binding["seq"]
        feeds = {"input_ids": rng.integers(0, vocab, (b, s)).astype(np.int64),
                 "attention_mask": np.ones((b, s), np.int64)}
        feeds["attention_mask"][-1, s // 2:] = 0  # padding, >= one 1 per row
        if family != "gpt2":
            feeds["token_type_ids"] = rng.integers(0, 2, (b, s)).astype(np.int64)
        return feeds
    name = "pixel_values" if family == "vit" else "input"
    shape = (binding["batch"], 3, binding["height"], binding["width"])
    return {name: rng.standard_normal(shape).astype(np.float32)}


def _vocab(family):
    cfg = FAMILIES[family].CONFIGS["tiny"]
    return cfg.get("vocab_size")


def _expected_shapes(family, binding):
    cfg = FAMILIES[family].CONFIGS["tiny"]
    if family in ("bert", "albert"):
        h = cfg["hidden_size"]
        return [(binding["batch"], binding["seq"], h), (binding["batch"], h)]
    if family == "gpt2":
        return [(binding["batch"], binding["seq"], cfg["vocab_size"])]
    if family == "vit":
        p, h = cfg["patch_size"], cfg["hidden_size"]
        tokens = 1 + (binding["height"] // p) * (binding["width"] // p)
        return [(binding["batch"], tokens, h), (binding["batch"], h)]
    return [(binding["batch"], cfg["num_classes"])]


def _weights(model):
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def _producers(model):
    return {o: n for n in model.graph.node for o in n.output}


def _count_shape_chains(model):
    """Reshapes whose shape is Concat(..., Unsqueeze(Gather(Shape(x), i)), ...)."""
    prod = _producers(model)
    count = 0
    for n in model.graph.node:
        if n.op_type != "Reshape" or n.input[1] not in prod:
            continue
        concat = prod[n.input[1]]
        if concat.op_type != "Concat":
            continue
        for inp in concat.input:
            u = prod.get(inp)
            if u is None or u.op_type != "Unsqueeze":
                continue
            g = prod.get(u.input[0])
            if g is None or g.op_type != "Gather":
                continue
            s = prod.get(g.input[0])
            if s is not None and s.op_type == "Shape":
                count += 1
                break
    return count


def _count_layernorms(model):
    """Decomposed LayerNorms: Div(Sub(x, ReduceMean x), Sqrt(Add(ReduceMean(Pow(Sub)), eps)))."""
    prod = _producers(model)
    count = 0
    for n in model.graph.node:
        if n.op_type != "Div" or n.input[1] not in prod:
            continue
        sqrt = prod[n.input[1]]
        if sqrt.op_type != "Sqrt":
            continue
        add = prod.get(sqrt.input[0])
        rm = add is not None and add.op_type == "Add" and prod.get(add.input[0])
        pw = rm and rm.op_type == "ReduceMean" and prod.get(rm.input[0])
        sub = pw and pw.op_type == "Pow" and prod.get(pw.input[0])
        if sub and sub.op_type == "Sub" and sub.output[0] == n.input[0] \
                and prod[sub.input[1]].op_type == "ReduceMean":
            count += 1
    return count


# -- static checks ----------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_checker_and_strict_shape_inference(models, family):
    model = models[family]
    onnx.checker.check_model(model, full_check=True)
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    assert len(inferred.graph.value_info) > 0


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_opset_and_ir_version(models, family):
    model = models[family]
    assert model.ir_version <= 8
    assert [(o.domain, o.version) for o in model.opset_import] == \
        [("", FAMILIES[family].OPSET)]
    assert FAMILIES[family].OPSET <= 17
    assert FAMILIES[family].OPSET == (11 if family == "resnet" else 13)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_symbolic_inputs(models, family):
    got = {}
    for vi in models[family].graph.input:
        dims = vi.type.tensor_type.shape.dim
        got[vi.name] = [d.dim_param if d.HasField("dim_param") else d.dim_value for d in dims]
    assert got == EXPECTED_INPUTS[family]
    assert FAMILIES[family].INPUT_DIMS == EXPECTED_INPUTS[family]
    init_names = {t.name for t in models[family].graph.initializer}
    assert not init_names & set(got), "initializers must not shadow inputs"


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_op_patterns(models, family):
    model = models[family]
    ops = Counter(n.op_type for n in model.graph.node)
    assert REQUIRED_OPS[family] <= set(ops), REQUIRED_OPS[family] - set(ops)
    assert not FORBIDDEN_OPS & set(ops)
    assert all(n.domain in ("", "ai.onnx") for n in model.graph.node)
    layers = FAMILIES[family].CONFIGS["tiny"].get("num_layers",
                                                  FAMILIES[family].CONFIGS["tiny"].get("n_layer"))
    if family == "resnet":
        assert ops["Conv"] == ops["BatchNormalization"]
        gemm = [n for n in model.graph.node if n.op_type == "Gemm"]
        assert len(gemm) == 1 and any(a.name == "transB" and a.i == 1 for a in gemm[0].attribute)
        return
    if family == "mobilenet":
        # Batch norms folded; a depthwise conv (group = its channels) per
        # block, each block's convs but the linear projection under ReLU6.
        assert "BatchNormalization" not in ops
        groups = [next((a.i for a in n.attribute if a.name == "group"), 1)
                  for n in model.graph.node if n.op_type == "Conv"]
        blocks = sum(n for _, _, n, _ in FAMILIES[family].CONFIGS["tiny"]["settings"])
        assert sum(g > 1 for g in groups) == blocks
        assert ops["Clip"] == ops["Conv"] - blocks
        return
    # Every transformer splits/merges heads with Shape->Gather->Unsqueeze->Concat->Reshape.
    assert _count_shape_chains(model) >= 4 * layers
    # 2 LayerNorms per layer, + 1: embeddings (BERT/ALBERT) or final (GPT-2 ln_f, ViT).
    assert _count_layernorms(model) == 2 * layers + 1
    assert ops["Softmax"] == layers
    softmax_axes = [a.i for n in model.graph.node if n.op_type == "Softmax" for a in n.attribute]
    assert softmax_axes == [-1] * layers
    perms = Counter(tuple(a.ints) for n in model.graph.node if n.op_type == "Transpose"
                    for a in n.attribute)
    assert perms[(0, 2, 3, 1)] == layers and perms[(0, 2, 1, 3)] == 3 * layers
    if family in ("bert", "vit"):
        assert ops["Erf"] == layers
    if family == "albert":  # gelu_new per layer + pooler
        assert ops["Tanh"] == layers + 1
    if family == "gpt2":
        assert ops["Tanh"] == layers and ops["Where"] == layers and ops["Gemm"] == 4 * layers


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_opset_specific_syntax(models, family):
    """Opset 13: Unsqueeze/Squeeze axes are inputs, ReduceMean axes an attribute,
    Slice bounds and Split sizes are inputs."""
    for n in models[family].graph.node:
        attrs = {a.name for a in n.attribute}
        if n.op_type in ("Unsqueeze", "Squeeze"):
            assert len(n.input) == 2 and "axes" not in attrs, n.name
        elif n.op_type == "ReduceMean":
            assert len(n.input) == 1 and "axes" in attrs, n.name
        elif n.op_type == "Slice":
            assert len(n.input) >= 3 and not attrs & {"starts", "ends", "axes"}, n.name
        elif n.op_type == "Split":
            assert len(n.input) == 2 and "split" not in attrs, n.name


def test_albert_shares_layer_weights(models):
    model = models["albert"]
    layers = dyncc_models.albert.CONFIGS["tiny"]["num_layers"]
    uses = Counter(i for n in model.graph.node for i in n.input)
    shared = [t.name for t in model.graph.initializer if ".albert_layers.0." in t.name]
    assert shared and all(uses[name] == layers for name in shared), \
        {name: uses[name] for name in shared}


def test_gpt2_lm_head_is_tied(models):
    model = models["gpt2"]
    tr = [n for n in model.graph.node if n.op_type == "Transpose"
          and n.input[0] == "transformer.wte.weight"]
    assert len(tr) == 1
    final = [n for n in model.graph.node if n.output[0] == "logits"][0]
    assert final.op_type == "MatMul" and final.input[1] == tr[0].output[0]


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_deterministic_per_seed(models, family):
    again = FAMILIES[family].make_model("tiny", seed=0).SerializeToString()
    assert again == models[family].SerializeToString()
    other = FAMILIES[family].make_model("tiny", seed=1).SerializeToString()
    assert other != again


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_weights_are_random(models, family):
    floats = [numpy_helper.to_array(t) for t in models[family].graph.initializer
              if t.data_type == onnx.TensorProto.FLOAT]
    assert floats
    for a in floats:
        assert np.isfinite(a).all() and np.count_nonzero(a) > 0
    if family == "resnet":
        for t in models[family].graph.initializer:
            if t.name.endswith("running_var"):
                assert (numpy_helper.to_array(t) > 0).all()


def test_param_counts_of_full_configs():
    """Counted without making weights (dry build); real architectures' sizes."""
    expected = {("bert", "base"): 109.48e6, ("bert", "large"): 335.14e6,
                ("albert", "base"): 11.68e6, ("gpt2", "small"): 124.44e6,
                ("vit", "b16"): 86.68e6, ("resnet", "50"): 25.557e6,
                # torchvision's 3,504,872 less the 17,056 batch norm
                # parameters folding leaves as conv biases.
                ("mobilenet", "v2"): 3.487816e6}
    for (fam, cfg), n in expected.items():
        assert dyncc_models.param_count(fam, cfg) == pytest.approx(n, rel=1e-3), (fam, cfg)
    assert set(FAMILIES["bert"].CONFIGS) == {"tiny", "base", "large"}
    assert set(FAMILIES["albert"].CONFIGS) == {"tiny", "base"}
    assert set(FAMILIES["gpt2"].CONFIGS) == {"tiny", "small"}
    assert set(FAMILIES["vit"].CONFIGS) == {"tiny", "b16"}
    assert set(FAMILIES["resnet"].CONFIGS) == {"tiny", "50"}
    assert set(FAMILIES["mobilenet"].CONFIGS) == {"tiny", "v2"}


def test_cli(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    out = subprocess.run([sys.executable, "-m", "dyncc_models", "--list"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    for fam in FAMILY_NAMES:
        assert fam in out.stdout
    path = tmp_path / "g.onnx"
    out = subprocess.run([sys.executable, "-m", "dyncc_models", "gpt2", "tiny", str(path),
                          "--seed", "3"], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert path.read_bytes() == dyncc_models.make_model("gpt2", "tiny", seed=3).SerializeToString()
    out = subprocess.run([sys.executable, "-m", "dyncc_models", "gpt2", "nope", str(path)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "unknown config" in out.stderr


def test_debian_onnx_1_12_accepts_tiny_models(models, tmp_path):
    probe = None
    if os.path.exists(DEBIAN_PYTHON):
        # libonnx-testdata alone leaves an empty `onnx` namespace package.
        probe = subprocess.run([DEBIAN_PYTHON, "-c", "import onnx; onnx.load"],
                               capture_output=True)
    if probe is None or probe.returncode != 0:
        pytest.skip(f"{DEBIAN_PYTHON} has no onnx module (Debian python3-onnx not installed)")
    paths = []
    for fam, model in models.items():
        p = tmp_path / f"{fam}.onnx"
        onnx.save(model, str(p))
        paths.append(str(p))
    script = ("import sys, onnx\n"
              "for p in sys.argv[1:]:\n"
              "    m = onnx.load(p)\n"
              "    onnx.checker.check_model(m, full_check=True)\n"
              "    onnx.shape_inference.infer_shapes(m, strict_mode=True)\n"
              "print('ok', onnx.__version__)\n")
    out = subprocess.run([DEBIAN_PYTHON, "-c", script, *paths], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")


# -- execution (onnxruntime) ------------------------------------------------------

@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_runs_at_two_shape_bindings(models, family):
    sess = _session(models[family])
    rng = np.random.default_rng(1)
    for binding in BINDINGS[family]:
        outs = sess.run(None, _feeds(family, binding, rng, _vocab(family)))
        assert [o.shape for o in outs] == _expected_shapes(family, binding), binding
        for o in outs:
            assert o.dtype == np.float32 and np.isfinite(o).all()
            assert 0 < np.abs(o).mean() < 100


@pytest.mark.parametrize("family", ["bert", "albert"])
def test_padding_does_not_leak(models, family):
    """Tokens under attention_mask == 0 do not change the other positions."""
    sess = _session(models[family])
    rng = np.random.default_rng(2)
    feeds = _feeds(family, dict(batch=2, seq=12), rng, _vocab(family))
    base = sess.run(["last_hidden_state"], feeds)[0]
    feeds["input_ids"][-1, 6:] = (feeds["input_ids"][-1, 6:] + 1) % _vocab(family)
    changed = sess.run(["last_hidden_state"], feeds)[0]
    np.testing.assert_allclose(changed[:, :6], base[:, :6], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(changed[0], base[0], rtol=1e-5, atol=1e-5)
    assert not np.allclose(changed[-1, 6:], base[-1, 6:])


def test_gpt2_is_causal(models):
    sess = _session(models["gpt2"])
    rng = np.random.default_rng(3)
    feeds = _feeds("gpt2", dict(batch=2, seq=10), rng, _vocab("gpt2"))
    feeds["attention_mask"][:] = 1
    base = sess.run(None, feeds)[0]
    feeds["input_ids"][:, 7] = (feeds["input_ids"][:, 7] + 1) % _vocab("gpt2")
    changed = sess.run(None, feeds)[0]
    np.testing.assert_allclose(changed[:, :7], base[:, :7], rtol=1e-5, atol=1e-5)
    assert not np.allclose(changed[:, 7:], base[:, 7:])


# numpy references of the architectures, read from the initializers by name.

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _ln(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def _gelu_erf(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _mha(x, W, q, k, v, o, heads, bias=None):
    b, s, h = x.shape
    d = h // heads

    def split(t):
        return t.reshape(b, s, heads, d).transpose(0, 2, 1, 3)
    lin = lambda t, p: t @ W[p + ".weight"] + W[p + ".bias"]  # noqa: E731
    scores = split(lin(x, q)) @ split(lin(x, k)).transpose(0, 1, 3, 2) / math.sqrt(d)
    if bias is not None:
        scores = bias(scores)
    ctx = (_softmax(scores) @ split(lin(x, v))).transpose(0, 2, 1, 3).reshape(b, s, h)
    return lin(ctx, o)


def _bert_reference(W, cfg, ids, mask, tt, albert=False):
    eps, heads = cfg["layer_norm_eps"], cfg["num_heads"]
    s = ids.shape[1]
    x = (W["embeddings.word_embeddings.weight"][ids]
         + W["embeddings.token_type_embeddings.weight"][tt]
         + W["embeddings.position_embeddings.weight"][:s][None])
    x = _ln(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
    lin = lambda t, p: t @ W[p + ".weight"] + W[p + ".bias"]  # noqa: E731
    ln = lambda t, p: _ln(t, W[p + ".weight"], W[p + ".bias"], eps)  # noqa: E731
    ext = (1.0 - mask[:, None, None, :]) * -10000.0
    if albert:
        x = lin(x, "encoder.embedding_hidden_mapping_in")
    for i in range(cfg["num_layers"]):
        if albert:
            p = "encoder.albert_layer_groups.0.albert_layers.0"
            a = _mha(x, W, p + ".attention.query", p + ".attention.key", p + ".attention.value",
                     p + ".attention.dense", heads, lambda t: t + ext)
            a = ln(x + a, p + ".attention.LayerNorm")
            f = lin(_gelu_tanh(lin(a, p + ".ffn")), p + ".ffn_output")
            x = ln(f + a, p + ".full_layer_layer_norm")
        else:
            p = f"encoder.layer.{i}"
            a = _mha(x, W, p + ".attention.self.query", p + ".attention.self.key",
                     p + ".attention.self.value", p + ".attention.output.dense", heads,
                     lambda t: t + ext)
            a = ln(a + x, p + ".attention.output.LayerNorm")
            f = lin(_gelu_erf(lin(a, p + ".intermediate.dense")), p + ".output.dense")
            x = ln(f + a, p + ".output.LayerNorm")
    pool = "pooler" if albert else "pooler.dense"
    return x, np.tanh(lin(x[:, 0], pool))


def _gpt2_reference(W, cfg, ids, mask):
    eps, heads = cfg["layer_norm_epsilon"], cfg["n_head"]
    b, s = ids.shape
    ln = lambda t, p: _ln(t, W[p + ".weight"], W[p + ".bias"], eps)  # noqa: E731
    lin = lambda t, p: t @ W[p + ".weight"] + W[p + ".bias"]  # noqa: E731
    x = W["transformer.wte.weight"][ids] + W["transformer.wpe.weight"][np.arange(s)][None]
    pad = (1.0 - mask[:, None, None, :]) * -10000.0
    causal = np.tril(np.ones((s, s), bool))
    n = cfg["n_embd"]
    d = n // heads
    for i in range(cfg["n_layer"]):
        p = f"transformer.h.{i}"
        qkv = lin(ln(x, p + ".ln_1"), p + ".attn.c_attn")
        q, k, v = (t.reshape(b, s, heads, d).transpose(0, 2, 1, 3) for t in np.split(qkv, 3, -1))
        w = np.where(causal, q @ k.transpose(0, 1, 3, 2) / math.sqrt(d), -10000.0) + pad
        a = (_softmax(w) @ v).transpose(0, 2, 1, 3).reshape(b, s, n)
        x = x + lin(a, p + ".attn.c_proj")
        x = x + lin(_gelu_tanh(lin(ln(x, p + ".ln_2"), p + ".mlp.c_fc")), p + ".mlp.c_proj")
    return ln(x, "transformer.ln_f") @ W["transformer.wte.weight"].T


def _vit_reference(W, cfg, pix):
    eps, heads = cfg["layer_norm_eps"], cfg["num_heads"]
    p, h = cfg["patch_size"], cfg["hidden_size"]
    b, c, H, Wd = pix.shape
    patches = pix.reshape(b, c, H // p, p, Wd // p, p).transpose(0, 2, 4, 1, 3, 5)
    patches = patches.reshape(b, (H // p) * (Wd // p), c * p * p)
    x = patches @ W["embeddings.patch_embeddings.projection.weight"].reshape(h, -1).T \
        + W["embeddings.patch_embeddings.projection.bias"]
    x = np.concatenate([np.broadcast_to(W["embeddings.cls_token"], (b, 1, h)), x], axis=1)
    x = x + W["embeddings.position_embeddings"][:, :x.shape[1]]
    lin = lambda t, q: t @ W[q + ".weight"] + W[q + ".bias"]  # noqa: E731
    ln = lambda t, q: _ln(t, W[q + ".weight"], W[q + ".bias"], eps)  # noqa: E731
    for i in range(cfg["num_layers"]):
        q = f"encoder.layer.{i}"
        x = x + _mha(ln(x, q + ".layernorm_before"), W, q + ".attention.attention.query",
                     q + ".attention.attention.key", q + ".attention.attention.value",
                     q + ".attention.output.dense", heads)
        x = x + lin(_gelu_erf(lin(ln(x, q + ".layernorm_after"), q + ".intermediate.dense")),
                    q + ".output.dense")
    x = ln(x, "layernorm")
    return x, np.tanh(lin(x[:, 0], "pooler.dense"))


def _conv(x, w, stride, pad, fill=0.0):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    k = w.shape[-1]
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))
    return win[:, :, ::stride, ::stride]


def _resnet_reference(W, cfg, x):
    def conv_bn(x, conv, bn, stride, relu=True):
        w = W[conv + ".weight"]
        y = np.einsum("bchwij,ocij->bohw", _conv(x, w, stride, w.shape[-1] // 2), w)
        g, b, m, v = (W[f"{bn}.{n}"][None, :, None, None]
                      for n in ("weight", "bias", "running_mean", "running_var"))
        y = (y - m) / np.sqrt(v + 1e-5) * g + b
        return np.maximum(y, 0) if relu else y
    x = conv_bn(x, "conv1", "bn1", 2)
    x = _conv(x, np.zeros((1, 1, 3, 3)), 2, 1, fill=-np.inf).max(axis=(-2, -1))
    for s, blocks in enumerate(cfg["layers"]):
        for i in range(blocks):
            p = f"layer{s + 1}.{i}"
            stride = 2 if (s > 0 and i == 0) else 1
            y = conv_bn(x, p + ".conv1", p + ".bn1", 1)
            y = conv_bn(y, p + ".conv2", p + ".bn2", stride)
            y = conv_bn(y, p + ".conv3", p + ".bn3", 1, relu=False)
            if p + ".downsample.0.weight" in W:
                x = conv_bn(x, p + ".downsample.0", p + ".downsample.1", stride, relu=False)
            x = np.maximum(x + y, 0)
    return x.mean(axis=(2, 3)) @ W["fc.weight"].T + W["fc.bias"]


@pytest.mark.parametrize("family", ["bert", "albert", "gpt2", "vit", "resnet"])
def test_matches_numpy_reference(family):
    # initializer_range 0.3 instead of 0.02: with HF's tiny init the attention
    # is almost uniform and would hide a wrong head split.
    extra = {} if family == "resnet" else {"initializer_range": 0.3}
    model = FAMILIES[family].make_model("tiny", seed=5, **extra)
    sess = _session(model)
    W = {k: v.astype(np.float64) if v.dtype == np.float32 else v
         for k, v in _weights(model).items()}
    cfg = FAMILIES[family].CONFIGS["tiny"]
    rng = np.random.default_rng(4)
    for binding in BINDINGS[family]:
        feeds = _feeds(family, binding, rng, _vocab(family))
        got = sess.run(None, feeds)
        if family == "gpt2":
            want = [_gpt2_reference(W, cfg, feeds["input_ids"], feeds["attention_mask"])]
        elif family == "resnet":
            want = [_resnet_reference(W, cfg, feeds["input"].astype(np.float64))]
        elif family == "vit":
            want = _vit_reference(W, cfg, feeds["pixel_values"].astype(np.float64))
        else:
            want = _bert_reference(W, cfg, feeds["input_ids"], feeds["attention_mask"],
                                   feeds["token_type_ids"], albert=family == "albert")
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5)


# -- slow: full size ------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("DYNCC_SLOW_TESTS") != "1",
                    reason="full-size model; set DYNCC_SLOW_TESTS=1 to run")
def test_bert_base_full_size(tmp_path):
    model = dyncc_models.make_model("bert", "base", seed=0)
    n = dyncc_models.count_parameters(model)
    assert n == pytest.approx(109.48e6, rel=1e-3)
    assert n == dyncc_models.param_count("bert", "base")
    layers = sum(1 for n in model.graph.node if n.op_type == "Softmax")
    assert layers == 12
    path = tmp_path / "bert_base.onnx"
    onnx.save(model, str(path))
    assert 400e6 < path.stat().st_size < 2**31
    onnx.checker.check_model(str(path), full_check=True)


# MobileNetV2's f16 depthwise convs are checked variant by variant
# (test_tile_variants.py); compiled whole in f16 it took 25 s of the suite.
@pytest.mark.parametrize("family", [f for f in FAMILY_NAMES
                                    if f != "mobilenet"])
def test_half_models_compile_and_match_float(tmp_path, family):
    """`to_half` (`--dtype float16`) writes every family as an f16 export
    has it: f16 weights, constants, casts and float inputs and outputs, a
    model onnx's checker accepts. dyncc compiles it, and on the CPU its
    outputs match onnxruntime's on the f32 model at the same (f16-rounded)
    inputs, to f16's precision."""
    import dyncc
    ort = pytest.importorskip("onnxruntime")
    model = dyncc_models.make_model(family, "tiny", seed=2)
    reference = tmp_path / "f32.onnx"
    onnx.save(model, reference)
    half = dyncc_models.to_half(dyncc_models.make_model(family, "tiny", seed=2))
    onnx.checker.check_model(half, full_check=True)
    floats = [t for t in half.graph.initializer
              if t.data_type == onnx.TensorProto.FLOAT]
    assert not floats and dyncc_models.count_parameters(half) == \
        dyncc_models.count_parameters(model)
    path = tmp_path / "f16.onnx"
    onnx.save(half, path)
    art = tmp_path / "f16.dyncc"
    dyncc.compile(path, art, targets=["cpu"])
    sess = dyncc.load(art).session()
    ref = ort.InferenceSession(str(reference),
                               providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(4)
    binding = BINDINGS[family][1]
    feeds = _feeds(family, binding, rng, _vocab(family))
    half_feeds = {k: v.astype(np.float16) if v.dtype == np.float32 else v
                  for k, v in feeds.items()}
    got = sess.run(half_feeds)
    want = ref.run(None, {k: v.astype(np.float32) if v.dtype == np.float16
                          else v for k, v in half_feeds.items()})
    for out, expected in zip(ref.get_outputs(), want):
        value = got[out.name]
        assert value.dtype == np.float16, out.name
        scale = max(1.0, float(np.abs(expected).max()))
        np.testing.assert_allclose(value.astype(np.float32), expected,
                                   rtol=0, atol=2e-2 * scale,
                                   err_msg=f"{family} {out.name}")


def test_cli_half(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    path = tmp_path / "b.onnx"
    out = subprocess.run([sys.executable, "-m", "dyncc_models", "bert", "tiny",
                          str(path), "--dtype", "float16"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    expected = dyncc_models.to_half(dyncc_models.make_model("bert", "tiny"))
    assert path.read_bytes() == expected.SerializeToString()
