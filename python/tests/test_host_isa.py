# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Host code levels (docs/Runtime.md, "Host code levels"): an artifact
compiled with --target cpu,cpu-x86-64-v3,cpu-x86-64-v4 holds the host code
three times, for SSE4.2, AVX2 and AVX-512; the run-time loads the highest
the processor runs, DYNCC_HOST_ISA caps it. Each build must be right on
its own: the conformance suite checks every model on the portable and the
AVX-512 builds (docs/Conformance.md); here models covering the kernel
kinds (GEMMs, attention, layer norms, convolutions and pools, f16
arithmetic) run on the AVX2 build against onnxruntime at every binding of
their ranges (1, primes, sizes off tile multiples)."""
import json
import re
import subprocess

import numpy as np
import pytest

import dyncc
from conftest import SHARED_MODELS, require, sections
from dyncc_conformance import models

LEVELS = ["x86-64-v2", "x86-64-v3", "x86-64-v4"]
TARGETS = "cpu,cpu-x86-64-v3,cpu-x86-64-v4"
MODELS = ["bert_toy_pt11_opset12_ortopt", "cnn_mnist_pt11_opset9",
          "bert_squad_tiny_pt13_opset11_fp16",
          "resnet50_stem_residual_block_opset11"]


@pytest.fixture(scope="module")
def levels_artifact(tmp_path_factory, example_model):
    out = tmp_path_factory.mktemp("levels") / "linear_relu.dyncc"
    return dyncc.compile(example_model, out, dims={"B": (1, 4096)},
                         targets=TARGETS.split(","))


@pytest.fixture(scope="module")
def runs(levels_artifact):
    """The levels this processor runs: up to the one the run-time picks
    without a cap."""
    top = dyncc.load(levels_artifact).host_isa
    assert top in LEVELS, top
    return LEVELS[:LEVELS.index(top) + 1]


def test_every_build_runs_here(runs):
    """CI's machines (AMD EPYC) run x86-64-v4, so every build is checked
    there; elsewhere the builds above the processor's level are not."""
    require(runs == LEVELS, f"this processor runs up to {runs[-1]}: the "
            "builds above it are not run here")


def test_the_artifact_holds_each_build(levels_artifact):
    secs = sections(levels_artifact)
    plan = json.loads(secs["manifest"])
    assert plan["host_code"] == [
        {"isa": "x86-64-v2", "section": "cpu.so"},
        {"isa": "x86-64-v3", "section": "cpu.x86-64-v3.so"},
        {"isa": "x86-64-v4", "section": "cpu.x86-64-v4.so"}]
    codes = [secs[b["section"]] for b in plan["host_code"]]
    assert all(code[:4] == b"\x7fELF" for code in codes)
    assert len(set(codes)) == 3, "the builds are the same object"


@pytest.mark.parametrize("model", MODELS)
def test_the_avx2_build_matches_onnxruntime(tmp_path, bin_dir, runs, model):
    pytest.importorskip("onnxruntime", reason="scripts/setup.sh installs onnxruntime")
    require("x86-64-v3" in runs, "this processor does not run x86-64-v3")
    path = SHARED_MODELS / f"{model}.onnx"
    require(path.exists(), f"missing: {path}")
    check = models.check_model(path, models.SHARED[model], bin_dir / "dyncc",
                               tmp_path, targets="cpu,cpu-x86-64-v3",
                               isas=["x86-64-v3"])
    assert check.passed, check.summary()
    assert len(check.results) >= 5, check.summary()


def test_the_cap_picks_the_build(levels_artifact, runs, monkeypatch):
    x = np.random.default_rng(3).uniform(-2, 2, (67, 64)).astype(np.float32)
    outputs = {}
    for isa in runs:
        monkeypatch.setenv("DYNCC_HOST_ISA", isa)
        art = dyncc.load(levels_artifact)
        assert art.host_isa == isa
        outputs[isa] = art.session("cpu").run({"X": x})["Y"]
    for isa in runs[1:]:
        np.testing.assert_allclose(outputs[isa], outputs[runs[0]],
                                   rtol=1e-5, atol=1e-5)
    # A level below every build: the artifact loads, a cpu session cannot
    # run it.
    monkeypatch.setenv("DYNCC_HOST_ISA", "generic")
    art = dyncc.load(levels_artifact)
    assert art.host_isa == ""
    with pytest.raises(dyncc.DynccError, match="no build of the host code "
                       "runs on this processor: the artifact's are for "
                       "x86-64-v2, x86-64-v3, x86-64-v4"):
        art.session("cpu")
    monkeypatch.setenv("DYNCC_HOST_ISA", "avx512")
    with pytest.raises(dyncc.DynccError, match="DYNCC_HOST_ISA: expected "
                       "'generic', 'x86-64-v2', 'x86-64-v3' or 'x86-64-v4', "
                       "got 'avx512'"):
        dyncc.load(levels_artifact)


def test_the_host_model_has_each_builds_constants(levels_artifact, runs,
                                                  monkeypatch):
    """The host model predicts with the constants fitted to the build it
    runs: the same tiles at the same shape get other times."""
    monkeypatch.delenv("DYNCC_HOST_SELECTION", raising=False)
    x = np.ones((1000, 64), np.float32)
    reasons = {}
    for isa in (runs[0], runs[-1]):
        monkeypatch.setenv("DYNCC_HOST_ISA", isa)
        sess = dyncc.load(levels_artifact).session("cpu")
        sess.run({"X": x})
        reasons[isa] = sess.variant_reasons[0]
        assert "by the host model" in reasons[isa], reasons[isa]
    times = [re.findall(r"([0-9.e+-]+) ms", r) for r in reasons.values()]
    assert times[0] != times[-1], reasons


def test_tune_measures_the_build_it_runs(bin_dir, levels_artifact, runs,
                                         tmp_path, monkeypatch):
    """`dyncc tune --device cpu` names the build in its entry's arch
    (cpu-LEVEL above the portable build): sessions on another build keep
    the host model."""
    monkeypatch.setenv("DYNCC_NUM_THREADS", "1")
    monkeypatch.setenv("DYNCC_HOST_ISA", runs[-1])
    tuned = tmp_path / "tuned.dyncc"
    proc = subprocess.run(
        [bin_dir / "dyncc", "tune", levels_artifact, "-o", tuned, "--device",
         "cpu", "--repeat", "1", "--points", "2", "--no-check"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    arch = "cpu-x86_64" if runs[-1] == "x86-64-v2" else f"cpu-{runs[-1]}"
    assert f"({arch}, 1 thread)" in proc.stdout, proc.stdout
    x = np.ones((100, 64), np.float32)
    sess = dyncc.load(tuned).session("cpu")
    sess.run({"X": x})
    assert "by dyncc tune's measurements" in sess.variant_reasons[0]
    if len(runs) > 1:
        monkeypatch.setenv("DYNCC_HOST_ISA", runs[0])
        sess = dyncc.load(tuned).session("cpu")
        sess.run({"X": x})
        assert "by the host model" in sess.variant_reasons[0], \
            sess.variant_reasons[0]


@pytest.fixture(scope="module")
def math_artifact(tmp_path_factory):
    """Exp, Tanh, Sigmoid, Erf, Log and Pow by constants over a vector, and a
    Softmax over rows, compiled with every build of the host code."""
    tmp_path = tmp_path_factory.mktemp("math")
    return dyncc.compile(_math_model(tmp_path), tmp_path / "math.dyncc",
                         targets=TARGETS.split(","),
                         dims={"A": (1, 1 << 15), "B": (1, 64), "C": (1, 256)})


POWERS = {"Pow2": 2, "Pow3": 3, "Pow4": 4, "PowM1": -1, "PowM2": -2,
          "PowM3": -3, "PowM4": -4}


def _math_model(tmp_path):
    import onnx
    from onnx import TensorProto, helper
    F = TensorProto.FLOAT
    nodes = [helper.make_node(op, ["X"], [op]) for op in
             ("Exp", "Tanh", "Sigmoid", "Erf", "Log")]
    nodes.append(helper.make_node("Softmax", ["R"], ["Softmax"], axis=1))
    # Constant exponents: multiplications, not pow.
    nodes += [helper.make_node("Pow", ["X", f"e{n}"], [name])
              for name, n in POWERS.items()]
    graph = helper.make_graph(
        nodes, "math",
        [helper.make_tensor_value_info("X", F, ["A"]),
         helper.make_tensor_value_info("R", F, ["B", "C"])],
        [helper.make_tensor_value_info(op, F, None) for op in
         ("Exp", "Tanh", "Sigmoid", "Erf", "Log", "Softmax", *POWERS)],
        [helper.make_tensor(f"e{n}", F, [], [float(n)])
         for n in POWERS.values()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "math.onnx"
    onnx.save(model, str(path))
    return path


def _math_inputs():
    rng = np.random.default_rng(5)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 3e-4, 5e-4,
               1e-40, 1e-45, 1.1754944e-38, 3.4028235e38, 1.0, 2.0, 0.5,
               1e10, -1e10, 2e19, -3e-20,
               -87.0, -87.5, -88.0, -100.0, -104.0, -1e4, 88.0, 88.5, 88.75,
               89.0, 1e4, 7.9, 8.1, -7.9, -8.1, 20.0, -20.0, 3.75, 3.8]
    x = np.concatenate([np.array(special, np.float32),
                        np.linspace(-110, 110, 20011, dtype=np.float32),
                        rng.normal(0, 3, 4099).astype(np.float32)])
    # Attention rows: scores, masked lanes at -10000 and -inf, a row of
    # huge scores.
    r = rng.normal(0, 4, (37, 131)).astype(np.float32)
    r[::3, 100:] = -10000.0
    r[1::5, 7:50] = -np.inf
    r[4] = rng.uniform(1e3, 1e4, 131).astype(np.float32)
    return x, r


def _math_reference(x, r):
    from math import erf
    w = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(w)
        shifted = np.exp(r - r.max(axis=1, keepdims=True).astype(np.float64))
        exact = {"Exp": e, "Tanh": np.tanh(w), "Sigmoid": 1 / (1 + np.exp(-w)),
                 "Erf": np.array([erf(v) if np.isfinite(v) else
                                  (np.sign(v) if not np.isnan(v) else np.nan)
                                  for v in w]),
                 "Log": np.log(w),
                 "Softmax": shifted / shifted.sum(axis=1, keepdims=True)}
        exact.update({name: w ** n for name, n in POWERS.items()})
        # Rounded to f32: exp overflows to infinity past 88.72.
        return {name: v.astype(np.float32).astype(np.float64)
                for name, v in exact.items()}


# Largest error allowed per function and build, relative to the exact
# value (and absolute below 2^-126, the smallest normal f32: host kernels
# flush exp's subnormal results to 0). Upstream's approximations:
# measured 2.4e-7 (exp, tanh; erf 3.0e-7 unfused), 1.4e-7 (sigmoid),
# 1.2e-7 (log, subnormal inputs included) and 1.2e-6 (softmax, its sum) at
# worst; constant powers by multiplying: 1.2e-7 (x^3, x^-2), 2.1e-7 (x^4).
MATH_TOLERANCE = {"Exp": 3e-7, "Tanh": 3e-7, "Sigmoid": 2e-7, "Erf": 4e-7,
                  "Log": 2e-7, "Softmax": 2e-6, "Pow2": 1e-7, "Pow3": 2e-7,
                  "Pow4": 3e-7, "PowM1": 1e-7, "PowM2": 2e-7, "PowM3": 3e-7,
                  "PowM4": 3e-7}


def test_math_functions_on_every_build(math_artifact, runs, monkeypatch):
    """exp, tanh and log are computed inline on the host (upstream's
    polynomial approximations, log's subnormal inputs scaled first; no libm
    call), powers with a constant small integer exponent by multiplying,
    and every approximation's multiply-adds are fused on the AVX2 and
    AVX-512 builds and not on the portable one: each build matches the
    exact function over the whole f32 range, infinities, NaN, signed zeros,
    subnormals and the overflow and underflow thresholds included."""
    x, r = _math_inputs()
    want = _math_reference(x, r)
    for isa in runs:
        monkeypatch.setenv("DYNCC_HOST_ISA", isa)
        got = dyncc.load(math_artifact).session("cpu").run({"X": x, "R": r})
        for name, exact in want.items():
            out = got[name].astype(np.float64)
            assert np.array_equal(np.isnan(out), np.isnan(exact)), (isa, name)
            assert np.array_equal(np.isinf(out), np.isinf(exact)), \
                (isa, name, x[np.isinf(out) != np.isinf(exact)][:5])
            # Signed zeros and infinities: pow(-0, -1) = -inf, log(0) = -inf,
            # erf(-0) = -0.
            signed = (exact == 0) | np.isinf(exact)
            if name != "Softmax":
                assert np.array_equal(np.signbit(out[signed]),
                                      np.signbit(exact[signed])), \
                    (isa, name, x[signed][np.signbit(out[signed])
                                          != np.signbit(exact[signed])][:5])
            finite = np.isfinite(exact)
            error = np.abs(out[finite] - exact[finite])
            limit = np.maximum(MATH_TOLERANCE[name] * np.abs(exact[finite]),
                               2.0 ** -126)
            worst = np.argmax(error / limit)
            assert error[worst] <= limit[worst], (
                isa, name, x[finite.ravel()][worst] if name != "Softmax"
                else worst, out[finite][worst], exact[finite][worst])


def test_host_kernels_call_no_math_library(math_artifact, tmp_path):
    """The approximations and the multiplications replace the calls in
    every build (nm -u)."""
    from test_host_kernels import undefined_symbols
    secs = sections(math_artifact)
    for section in ("cpu.so", "cpu.x86-64-v3.so", "cpu.x86-64-v4.so"):
        names = undefined_symbols(secs[section], tmp_path)
        assert not names & {"expf", "tanhf", "fmaf", "erff", "logf", "powf",
                            "copysignf"}, \
            (section, names)
