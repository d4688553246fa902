# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Split-K end to end on the CPU target: the search's split variants (a
part kernel into an f32 workspace, then a sum kernel with the epilogue) and
configs given by hand, at 1, primes and sizes just off the tiles, against
numpy on random data; the workspace takes arena bytes only where a split
variant runs; bad splits are one-line errors."""
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dyncc
from conftest import compile_with_plan, table_variant
from test_tile_variants import intervals, probe_points

# The variants run where the tile search's table picks them (cpu sessions
# would otherwise select f32 GEMMs by the host model).
pytestmark = pytest.mark.usefixtures("table_selection")


def make_dense(path, dtype, input_dims, k, n, seed):
    """Y = relu(X @ W + b), X of `input_dims` + [k]."""
    rng = np.random.default_rng(seed)
    np_type = {TensorProto.FLOAT: np.float32,
               TensorProto.FLOAT16: np.float16}[dtype]
    w = (rng.uniform(-1, 1, size=(k, n)) / np.sqrt(k)).astype(np_type)
    b = rng.uniform(-1, 1, size=(n,)).astype(np_type)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]),
         helper.make_node("Add", ["XW", "b"], ["XWb"]),
         helper.make_node("Relu", ["XWb"], ["Y"])],
        "dense",
        [helper.make_tensor_value_info("X", dtype, input_dims + [k])],
        [helper.make_tensor_value_info("Y", dtype, input_dims + [n])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return w, b


def reference(x, w, b):
    return np.maximum(x.astype(np.float64) @ w.astype(np.float64) +
                      b.astype(np.float64), 0)


def test_searched_split_variants(tmp_path):
    """A 768 -> 256 layer on the H100: the search splits K where the unsplit
    grid of the variant's tile leaves SMs idle (for this narrow layer, up to
    thousands of rows with 128-row tiles), and somewhere it does not split;
    every variant runs where its table picks it."""
    model = tmp_path / "dense.onnx"
    w, b = make_dense(model, TensorProto.FLOAT, ["M"], 768, 256, seed=7)
    dims = {"M": (1, 8192)}
    plan, art = compile_with_plan(model, tmp_path / "dense.dyncc", dims=dims,
                                  targets=["cpu"], device="h100")
    group = plan["groups"][0]
    split = [v for v in group["variants"] if "then" in v]
    assert split, "no split-K variant was chosen"
    for variant in split:
        part = plan["kernels"][variant["kernel"]]
        total = plan["kernels"][variant["then"][0]]
        assert part["name"].endswith("_part") and "split_k" in part["config"]
        assert total["name"].endswith("_sum")
        workspace = [plan["buffers"][p["buffer"]] for p in part["params"]
                     if "buffer" in p][-1]
        assert workspace["kind"] == "workspace"
        assert workspace["dtype"] == "f32"
        assert workspace["shape"][1:] == ["M", "256"]
    # A split only where its tile's unsplit grid has fewer blocks than the
    # H100's 132 SMs (the model's rule), and not everywhere.
    unsplit = 0
    for (lo, hi), v in zip(intervals(group["select"]["lower"], 8192),
                           group["select"]["variant"]):
        variant = group["variants"][v]
        if "then" not in variant:
            unsplit += 1
            continue
        config = plan["kernels"][variant["kernel"]]["config"].split()
        block = [int(d) for d in config[config.index("block") + 1].split("x")]
        rows, cols = block[-2], block[-1]
        assert -(-hi // rows) * -(-256 // cols) < 132, (lo, hi, config)
    assert unsplit > 0

    sess = dyncc.load(art).session()
    ran = set()
    for lo, hi in intervals(group["select"]["lower"], 8192):
        for m in probe_points(lo, min(hi, 600)) if lo <= 600 else [lo]:
            rng = np.random.default_rng(m)
            x = rng.uniform(-1, 1, size=(m, 768)).astype(np.float32)
            y = sess.run({"X": x})["Y"]
            np.testing.assert_allclose(y, reference(x, w, b), rtol=1e-4,
                                       atol=1e-4)
            assert sess.variants == [table_variant(plan, 0, {"M": m})]
            ran.add(sess.variants[0])
            # The arena is the live-set peak: the workspace only when split.
            memory = sess.memory()
            assert memory["arena_bytes"] == memory["live_peak_bytes"]
            assert (memory["live_peak_bytes"] > 0) == \
                sess.variants[0].endswith("_part")
    names = {plan["kernels"][v["kernel"]]["name"] for v in group["variants"]}
    assert ran == names


@pytest.mark.parametrize("dtype,config,k", [
    (TensorProto.FLOAT, "block 4x32 thread 1x2 k 16 split_k 2", 96),
    (TensorProto.FLOAT, "block 2x64 thread 1x4 k 8 stages 2 split_k 3", 96),
    (TensorProto.FLOAT, "block 8x32 thread 2x2 k 16 stages 3 split_k 6", 192),
    (TensorProto.FLOAT16,
     "block 16x32 warp 16x16 thread 1x8 k 32 mma 16x8x16 stages 2 split_k 4",
     256),
])
def test_given_split_configs(tmp_path, dtype, config, k):
    """Splits given by hand, on a folded batch [B, S, k]: every size of rows
    from 1, primes, and just off the block tile."""
    model = tmp_path / "dense.onnx"
    w, b = make_dense(model, dtype, ["B", "S"], k, 48, seed=k)
    dims = {"B": (1, 4), "S": (1, 80)}
    art = tmp_path / "dense.dyncc"
    dyncc.compile(model, art, dims=dims, targets=["cpu"],
                  tile_configs={"gemm": config})
    sess = dyncc.load(art).session()
    np_type = np.float32 if dtype == TensorProto.FLOAT else np.float16
    rtol, atol = (1e-4, 1e-4) if dtype == TensorProto.FLOAT else (2e-2, 3e-2)
    for batch, s in [(1, 1), (1, 2), (1, 3), (2, 7), (1, 13), (3, 17),
                     (1, 31), (4, 33), (2, 64), (1, 79)]:
        rng = np.random.default_rng(batch * 100 + s)
        x = rng.uniform(-1, 1, size=(batch, s, k)).astype(np_type)
        y = sess.run({"X": x})["Y"]
        np.testing.assert_allclose(y.astype(np.float64), reference(x, w, b),
                                   rtol=rtol, atol=atol)
        assert sess.variants[0].endswith("_part")
        memory = sess.memory()
        parts = int(config.split("split_k ")[1])
        # The output is not a temp: the arena is the workspace alone.
        assert memory["arena_bytes"] == memory["live_peak_bytes"]
        assert memory["live_peak_bytes"] >= parts * batch * s * 48 * 4


@pytest.mark.parametrize("config,message", [
    ("block 4x32 thread 1x2 k 16 split_k 5",
     "cannot split K into 5 parts (config 'block 4x32 thread 1x2 k 16 "
     "split_k 5'): K = 96 is not 5 parts of whole k-steps of 16"),
    ("block 4x32 thread 1x2 k 32 split_k 2",
     "K = 96 is not 2 parts of whole k-steps of 32"),
    ("block 4x32 thread 1x2 k 0 split_k 2",
     "split_k 2 needs a k-step (a GEMM's tiles)"),
    ("block 4x32 thread 1x2 k 16 split_k 0", "split_k must be 1 to 64, got 0"),
])
def test_bad_split_is_one_line_error(tmp_path, bin_dir, config, message):
    model = tmp_path / "dense.onnx"
    make_dense(model, TensorProto.FLOAT, ["M"], 96, 32, seed=1)
    out = tmp_path / "dense.dyncc"
    result = subprocess.run(
        [str(bin_dir / "dyncc"), "compile", str(model), "--target", "cpu",
         "--tile-config", "gemm=" + config, "-o", str(out)],
        capture_output=True, text=True)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and message in errors[0], result.stderr
    assert not out.exists()
