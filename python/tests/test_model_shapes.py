# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Symbolic shapes of whole models: every shared model and every generated
model family imports and propagates with no anonymous dimension; only the
models whose shapes depend on data get data-dependent symbols; and the
propagated output shapes, instantiated, equal what onnxruntime produces."""
import subprocess

import numpy as np
import pytest

from dyncc_conformance import nodes as onnx_nodes
from conftest import SHARED_MODELS, require

SHARED = sorted(SHARED_MODELS.glob("*.onnx")) if SHARED_MODELS.exists() else []

# Shapes computed from input *values*: sizes bound at run time.
DATA_DEPENDENT = {"shape_constantofshape_chain_pt16_opset9"}


def propagate(bin_dir, model_path, *flags):
    proc = subprocess.run(
        [bin_dir / "dyncc", "compile", model_path, "--emit=shapes",
         "--dump-symbols", "--quiet", *flags],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.strip()
    return proc.stdout


def assert_no_anonymous_dims(ir):
    for line in ir.splitlines():
        for inner in onnx_nodes._tensor_types(line):
            assert inner.startswith("*") is False, f"unranked after propagation: {line}"
            assert "?" not in inner or "#sym.shape" in inner, line


def test_shared_models_present():
    require(len(SHARED) > 0, f"no models in {SHARED_MODELS}")


@pytest.mark.parametrize("model", SHARED, ids=[m.stem for m in SHARED])
def test_shared_model_propagates(bin_dir, model):
    ir = propagate(bin_dir, model)
    assert_no_anonymous_dims(ir)
    data_dependent = "data-dependent" in ir
    assert data_dependent == (model.stem in DATA_DEPENDENT), \
        "data-dependent symbols where shapes should be exact, or none where expected"


FAMILIES = ["bert", "albert", "gpt2", "vit", "resnet"]
BINDINGS = {
    "bert": [{"batch": 1, "seq": 7}, {"batch": 3, "seq": 16}],
    "albert": [{"batch": 1, "seq": 5}, {"batch": 2, "seq": 13}],
    "gpt2": [{"batch": 1, "seq": 1}, {"batch": 2, "seq": 11}],
    "vit": [{"batch": 1, "height": 16, "width": 24}, {"batch": 2, "height": 32, "width": 32}],
    "resnet": [{"batch": 1, "height": 32, "width": 32}, {"batch": 2, "height": 40, "width": 56}],
}


def make_inputs(model, values, rng):
    inputs = {}
    for vi in model.graph.input:
        shape = [values[d.dim_param] if d.dim_param else d.dim_value
                 for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == 7:  # int64
            hi = 2 if "mask" in vi.name or "type" in vi.name else 16
            inputs[vi.name] = rng.integers(0, hi, size=shape).astype(np.int64)
            if "mask" in vi.name:
                inputs[vi.name][..., 0] = 1
        else:
            inputs[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return inputs


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_family_shapes(tmp_path, bin_dir, family):
    import dyncc_models
    model = dyncc_models.make_model(family, "tiny", seed=0)
    path = tmp_path / f"{family}.onnx"
    import onnx
    onnx.save(model, str(path))
    ir = propagate(bin_dir, path)
    assert_no_anonymous_dims(ir)
    assert "data-dependent" not in ir
    _, results = onnx_nodes.parse_signature(ir)
    try:
        import onnxruntime as ort
    except ImportError:
        require(False, "onnxruntime is not installed (scripts/setup.sh installs it)")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    for values in BINDINGS[family]:
        outputs = session.run(None, make_inputs(model, values, rng))
        for dims, out in zip(results, outputs):
            got = tuple(onnx_nodes.eval_expr(d, values) for d in dims)
            assert got == out.shape, f"{family} at {values}: {dims} -> {got}, ort {out.shape}"
