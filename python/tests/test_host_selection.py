# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""cpu sessions select an f32 GEMM's variant by the host model
(docs/Runtime.md, "Selection on the host"), not by the tile search's table,
which was searched for a GPU: the outputs stay right, and the picks are
the model's."""
import re
import subprocess

import numpy as np
import pytest

import dyncc
from conftest import table_variant

BATCHES = [1, 7, 64, 1000, 4096]


def reference(x, w, b):
    return np.maximum(x.astype(np.float64) @ w + b, 0)


def predictions(reason):
    """The chosen variant and each variant's predicted ms, from a reason
    'vC, by the host model (T threads): predicted X ms, vI Y ms, ...'."""
    m = re.match(r"v(\d+), by the host model \(\d+ threads?\): predicted "
                 r"([0-9.e+-]+) ms((?:, v\d+ [0-9.e+-]+ ms)*)$", reason)
    assert m, reason
    chosen = int(m.group(1))
    times = {chosen: float(m.group(2))}
    for v, t in re.findall(r"v(\d+) ([0-9.e+-]+) ms", m.group(3)):
        times[int(v)] = float(t)
    return chosen, times


def test_cpu_sessions_pick_by_the_host_model(example_artifact, example_plan,
                                             example_weights, monkeypatch):
    monkeypatch.delenv("DYNCC_HOST_SELECTION", raising=False)
    sess = dyncc.load(example_artifact).session("cpu")
    differs = 0
    variants = example_plan["groups"][0]["variants"]
    for batch in BATCHES:
        x = np.random.default_rng(batch).uniform(-2, 2, (batch, 64))
        x = x.astype(np.float32)
        y = sess.run({"X": x})["Y"]
        np.testing.assert_allclose(y, reference(x, *example_weights),
                                   rtol=1e-5, atol=1e-5)
        chosen, times = predictions(sess.variant_reasons[0])
        assert len(times) == len(variants)
        assert times[chosen] == min(times.values()), times
        kernel = example_plan["kernels"][variants[chosen]["kernel"]]["name"]
        assert sess.variants[0] == kernel
        differs += kernel != table_variant(example_plan, 0, {"B": batch})
    # The host's picks are not the GPU's: where the table takes small
    # tiles, the host takes fewer, larger blocks.
    assert differs >= 2


def test_table_selection_on_the_host(example_artifact, example_plan,
                                     monkeypatch):
    """DYNCC_HOST_SELECTION=table: the table picks, as on a GPU; another
    value is an error naming the variable."""
    monkeypatch.setenv("DYNCC_HOST_SELECTION", "table")
    sess = dyncc.load(example_artifact).session("cpu")
    x = np.ones((64, 64), np.float32)
    sess.run({"X": x})
    assert sess.variants[0] == table_variant(example_plan, 0, {"B": 64})
    assert re.match(r"v\d+, by the tile search's table: B = 64 in ",
                    sess.variant_reasons[0]), sess.variant_reasons[0]
    monkeypatch.setenv("DYNCC_HOST_SELECTION", "auto")
    with pytest.raises(dyncc.DynccError,
                       match="DYNCC_HOST_SELECTION: expected 'model' or "
                             "'table', got 'auto'"):
        dyncc.load(example_artifact).session("cpu")


def test_dyncc_run_names_the_host_model(bin_dir, example_artifact,
                                        monkeypatch):
    monkeypatch.delenv("DYNCC_HOST_SELECTION", raising=False)
    monkeypatch.setenv("DYNCC_NUM_THREADS", "1")
    proc = subprocess.run(
        [bin_dir / "dyncc", "run", example_artifact, "--dim", "B=1000", "-v"],
        capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.split("group g0_gemm (gemm) -> kernel ")[1]
    reason = line.splitlines()[1].strip()
    chosen, times = predictions(reason)
    assert "(1 thread)" in reason and times[chosen] == min(times.values())
