# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Conformance (issue 8; docs/Conformance.md): every ONNX backend node test
through the whole pipeline on the CPU target (compiled for sm_80 and sm_90
too, where ptxas is), static and with --force-dynamic, against the test's
expected outputs; every model of
../shared/models and every generated family against onnxruntime at five or
more shapes. The node tests take about a minute on two cores, so this runs
all of them rather than a subset; `python -m dyncc_conformance` runs the
same checks in one process and prints the summary table.

Each node test ends in one category (dyncc_conformance.nodes.CATEGORIES):
pass; fail and compile error fail here; unsupported and out of scope skip
with the op or the reason; a test on the expected-failures list xfails with
its reason, and passing while listed fails. The category is recorded, and
conftest.py prints the totals per category and mode."""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import SHARED_MODELS, require
from dyncc_conformance import models, nodes
from dyncc_conformance.expected_failures import (EXPECTED_FAILURES,
                                                 MODEL_EXPECTED_FAILURES)

TESTS = nodes.list_tests()
SHARED = models.shared_models(SHARED_MODELS)
# Each node test is compiled for the GPU targets too, where the CUDA toolkit
# is (as on CI): the NVVM lowering and ptxas see every op the CPU runs.
PTXAS = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda") / "bin" / "ptxas"
GPU_TARGETS = ["sm_80", "sm_90"] if os.access(PTXAS, os.X_OK) else []


def test_gpu_targets_compiled():
    require(GPU_TARGETS, f"no ptxas at {PTXAS}: node tests compile for the CPU only")


def test_node_tests_present():
    require(len(TESTS) > 0, f"no ONNX node tests in {nodes.NODE_DIR}")


def test_expected_failures_have_reasons():
    print(f"expected-failures list: {len(EXPECTED_FAILURES)} node entries, "
          f"{len(MODEL_EXPECTED_FAILURES)} models")
    names = {t.name for t in TESTS}
    for (test, mode), reason in EXPECTED_FAILURES.items():
        assert mode in nodes.MODES and len(reason) > 20, (test, mode)
        if names:
            assert test in names, f"{test}: no such node test"
    for name, reason in MODEL_EXPECTED_FAILURES.items():
        assert len(reason) > 20, name


@pytest.fixture(scope="module")
def ops(bin_dir):
    out = subprocess.run([bin_dir / "dyncc", "--list-ops"], capture_output=True,
                         text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize("mode", nodes.MODES)
@pytest.mark.parametrize("test_dir", TESTS, ids=[t.name for t in TESTS])
def test_node(tmp_path, bin_dir, ops, record_property, test_dir, mode):
    outcome = nodes.run_node_test(test_dir, mode, bin_dir / "dyncc", tmp_path, ops,
                                  EXPECTED_FAILURES, gpu_targets=GPU_TARGETS)
    record_property("conformance", f"{mode}:{outcome.category}")
    if outcome.category == "out of scope":
        pytest.skip("out of scope: " + outcome.detail)
    if outcome.category == "unsupported":
        pytest.skip("unsupported: " + outcome.detail)
    if outcome.category == "expected failure":
        pytest.xfail(outcome.detail)
    assert outcome.category == "pass", f"{outcome.category}: {outcome.detail}"


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


# The builds each model check runs (models.CHECK_TARGETS): the portable and
# the AVX-512 one where the processor runs it (CI's do), else the one the
# run-time picks.
LEVELS = ({"x86-64-v2", "x86-64-v4"}
          if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl",
              "avx2", "fma", "bmi2", "f16c", "movbe"} <= _cpu_flags()
          else {None})


def _levels(check):
    return {binding.get("isa") for binding, _ in check.results}


def _check(check, name):
    if check.results:
        assert _levels(check) == LEVELS, check.summary()
    listed = MODEL_EXPECTED_FAILURES.get(name)
    if listed is not None:
        assert not check.passed, f"passes but is listed in MODEL_EXPECTED_FAILURES: {listed}"
        pytest.xfail(listed + " [" + check.summary() + "]")
    assert check.passed, check.summary()
    assert len(check.results) >= 5, check.summary()


def test_shared_models_present():
    require(SHARED_MODELS.exists() and any(SHARED_MODELS.glob("*.onnx")),
            f"no models in {SHARED_MODELS}")


@pytest.mark.parametrize("model", SHARED, ids=[m.stem for m in SHARED])
def test_shared_model(tmp_path, bin_dir, model):
    pytest.importorskip("onnxruntime", reason="scripts/setup.sh installs onnxruntime")
    _check(models.check_shared(model, bin_dir / "dyncc", tmp_path), model.stem)


@pytest.mark.parametrize("model", sorted(models.SHARED_DYNAMIC))
def test_shared_model_dynamic_images(tmp_path, bin_dir, model):
    """Shared models with their image or weight sizes dynamic as well, at
    the shapes their own fixed reshapes accept."""
    pytest.importorskip("onnxruntime", reason="scripts/setup.sh installs onnxruntime")
    path = SHARED_MODELS / f"{model}.onnx"
    require(path.exists(), f"missing: {path}")
    spec = models.SHARED_DYNAMIC[model]
    check = models.check_model(path, spec, bin_dir / "dyncc", tmp_path)
    assert check.passed, check.summary()
    shapes = spec.get("bindings") or models.bindings(spec["dims"])
    assert _levels(check) == LEVELS, check.summary()
    assert len(check.results) == len(shapes) * len(LEVELS), check.summary()


@pytest.mark.parametrize("family", sorted(models.FAMILIES))
def test_generated_family(tmp_path, bin_dir, family):
    pytest.importorskip("onnxruntime", reason="scripts/setup.sh installs onnxruntime")
    _check(models.check_family(family, bin_dir / "dyncc", tmp_path), family)


def test_bindings_cover_minimum_maximum_and_off_multiples():
    b = models.bindings({"batch": (1, 8), "seq": (1, 96)})
    assert b[0] == {"batch": 1, "seq": 1} and b[1] == {"batch": 8, "seq": 96}
    assert {"batch": 8, "seq": 1} in b and {"batch": 1, "seq": 96} in b
    assert len(b) >= 5 and len({tuple(x.values()) for x in b}) == len(b)
    assert any(x["seq"] not in (1, 96) and x["seq"] % 2 for x in b)
    # A divisor keeps every value a multiple of it.
    for x in models.bindings({"h": (8, 64, 8)}):
        assert x["h"] % 8 == 0 and 8 <= x["h"] <= 64
    assert len(models.bindings({"h": (1, 8)})) >= 5


def test_a_dim_the_model_fixes_fails_the_check(tmp_path, bin_dir):
    """A spec dim the model fixes to one value (here B, by a Concat beside a
    constant [1, 8] row) is no symbol of the artifact: its bindings would
    all run the one shape, so the check fails rather than pass them."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    pytest.importorskip("onnxruntime", reason="scripts/setup.sh installs onnxruntime")
    graph = helper.make_graph(
        [helper.make_node("Concat", ["X", "C"], ["Y"], axis=1)], "fixed",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(np.ones((1, 8), np.float32), "C")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "fixed.onnx"
    onnx.save(model, str(path))
    check = models.check_model(path, dict(dims={"B": (1, 8)}), bin_dir / "dyncc",
                               tmp_path)
    assert not check.passed
    assert "B: not a symbol of the artifact (the model fixes it)" in check.summary()
