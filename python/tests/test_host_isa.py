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
