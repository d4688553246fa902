# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""End-to-end numerics of the walking skeleton: Y = Relu(X @ W + b), X: [B, 64],
compiled once and run on the CPU target at many B, against numpy."""
import subprocess

import numpy as np
import pytest

import dyncc
from conftest import table_variant

# The variants run where the tile search's table picks them (cpu sessions
# would otherwise select f32 GEMMs by the host model).
pytestmark = pytest.mark.usefixtures("table_selection")

# 1, primes, the block tile (32) and sizes just off its multiples, large.
BATCHES = [1, 2, 7, 31, 32, 33, 63, 64, 65, 97, 127, 1000, 4096]


def reference(x, w, b):
    return np.maximum(x.astype(np.float64) @ w + b, 0)


def random_input(batch, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, size=(batch, 64)).astype(np.float32)


@pytest.mark.parametrize("batch", [1, 7, 64, 1000])
def test_dyncc_run_matches_numpy(tmp_path, bin_dir, example_artifact,
                                 example_plan, example_weights, batch):
    """The issue's acceptance test: `dyncc run` at B = 1, 7, 64, 1000."""
    x = random_input(batch, batch)
    np.save(tmp_path / "x.npy", x)
    proc = subprocess.run(
        [bin_dir / "dyncc", "run", example_artifact, "--input",
         f"X={tmp_path / 'x.npy'}", "--output-dir", tmp_path],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert f"B = {batch}" in proc.stdout
    expected = table_variant(example_plan, 0, {"B": batch})
    assert f"group g0_gemm (gemm) -> kernel {expected}\n" in proc.stdout
    y = np.load(tmp_path / "Y.npy")
    assert y.shape == (batch, 64) and y.dtype == np.float32
    np.testing.assert_allclose(y, reference(x, *example_weights), rtol=1e-5, atol=1e-5)
    assert (y > 0).any() and (y == 0).any(), "ReLU must both pass and clamp"


@pytest.mark.parametrize("batch", BATCHES)
def test_python_api_matches_numpy(example_artifact, example_plan,
                                  example_weights, batch):
    art = dyncc.load(example_artifact)
    sess = art.session("cpu")
    x = random_input(batch, 1000 + batch)
    y = sess.run({"X": x})["Y"]
    np.testing.assert_allclose(y, reference(x, *example_weights), rtol=1e-5, atol=1e-5)
    # The variant the tile search's table picks at this B.
    assert sess.variants == [table_variant(example_plan, 0, {"B": batch})]
    assert sess.symbol_values() == {"B": batch}
    # Why: the variant's index and the table's interval holding B.
    reason = sess.variant_reasons[0]
    variants = [example_plan["kernels"][v["kernel"]]["name"]
                for v in example_plan["groups"][0]["variants"]]
    assert reason.startswith(f"v{variants.index(sess.variants[0])}, by the "
                             f"tile search's table: B = {batch} in "), reason
    lo, hi = (int(v) for v in reason.rsplit(" in ", 1)[1].split("-"))
    assert lo <= batch <= hi


def test_session_reuse_across_shapes(example_artifact, example_weights):
    """One session, shapes growing and shrinking: the arena and outputs are
    reused and every result is still right (stale data would show)."""
    sess = dyncc.load(example_artifact).session()
    for batch in [1000, 3, 257, 1, 64]:
        x = random_input(batch, batch)
        y = sess.run([x])["Y"]
        np.testing.assert_allclose(y, reference(x, *example_weights),
                                   rtol=1e-5, atol=1e-5)


def test_artifact_metadata(example_artifact):
    art = dyncc.load(example_artifact)
    assert art.model == "linear_relu"
    assert art.targets == ["cpu", "sm_80", "sm_90"]
    assert art.inputs == [("X", "f32", ["B", "64"])]
    assert art.outputs == [("Y", "f32", ["B", "64"])]
    assert art.symbols == {"B": (1, 4096)}
    assert art.groups == [("g0_gemm", "gemm")]


def test_dyncc_run_tool_is_the_same_run(tmp_path, bin_dir, example_artifact):
    """dyncc-run (run-time only) and `dyncc run` give identical bytes."""
    outs = []
    for tool in (["dyncc-run"], ["dyncc", "run"]):
        out = tmp_path / tool[0]
        proc = subprocess.run(
            [bin_dir / tool[0], *tool[1:], example_artifact, "--dim", "B=45",
             "--seed", "3", "--output-dir", out], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        outs.append(np.load(out / "Y.npy"))
    assert outs[0].shape == (45, 64)
    assert np.array_equal(outs[0], outs[1])
    assert np.abs(outs[0]).sum() > 0
