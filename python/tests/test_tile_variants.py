# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The tile search's variants, end to end on the CPU target: every variant a
GEMM dispatch gets is run inside each interval where its table picks it (at
both ends and a prime inside), the run-time must pick what the table says,
and the numbers must match numpy on random data."""
import json
import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dyncc
from conftest import (compile_with_plan, load_input_script, table_variant,
                      table_variant_at)

# The variants run where the tile search's table picks them (cpu sessions
# would otherwise select f32 GEMMs by the host model).
pytestmark = pytest.mark.usefixtures("table_selection")


def make_dense(path, dtype, input_dims, k, n, seed):
    """Y = X @ W + b with X of `input_dims` + [k] (symbols as strings)."""
    rng = np.random.default_rng(seed)
    np_type = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16}[dtype]
    w = rng.uniform(-1, 1, size=(k, n)).astype(np_type)
    b = rng.uniform(-1, 1, size=(n,)).astype(np_type)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]),
         helper.make_node("Add", ["XW", "b"], ["Y"])],
        "dense",
        [helper.make_tensor_value_info("X", dtype, input_dims + [k])],
        [helper.make_tensor_value_info("Y", dtype, input_dims + [n])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return w, b


def variant_names(plan, groups):
    """The kernel names of the variants of `groups` (entries of the plan's
    `groups`): what a test that runs every variant must have run."""
    return {plan["kernels"][v["kernel"]]["name"]
            for g in groups for v in g["variants"]}


def is_prime(v):
    return v > 1 and all(v % d for d in range(2, int(v ** 0.5) + 1))


def probe_points(lower, upper):
    """Both ends of [lower, upper] and a prime inside, where there is one."""
    points = {lower, upper}
    prime = next((v for v in range(lower + 1, upper) if is_prime(v)), None)
    if prime is not None:
        points.add(prime)
    return sorted(points)


def intervals(lower, hi):
    """[lower[i], lower[i+1] - 1] pairs, the last up to hi."""
    return [(lo, (lower[i + 1] - 1) if i + 1 < len(lower) else hi)
            for i, lo in enumerate(lower)]


def check(sess, plan, w, b, shape, symbols, dtype, rtol, atol, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=shape).astype(dtype)
    y = sess.run({"X": x})["Y"]
    ref = x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=rtol, atol=atol)
    assert sess.variants == [table_variant(plan, 0, symbols)], symbols
    return sess.variants[0]


@pytest.mark.parametrize("dtype,k,n,hi", [
    (TensorProto.FLOAT, 64, 48, 600),
    # f16 tiles are alike up to a few hundred rows (the k-steps' fixed cost
    # dominates): the range goes on to where they differ.
    (TensorProto.FLOAT16, 256, 512, 1200),
])
def test_every_variant_of_one_key_table(tmp_path, dtype, k, n, hi):
    """Y[M, n] = X[M, k] @ W: the table is keyed on M alone."""
    model = tmp_path / "dense.onnx"
    w, b = make_dense(model, dtype, ["M"], k, n, seed=k)
    dims = {"M": (1, hi)}
    plan, art = compile_with_plan(model, tmp_path / "dense.dyncc", dims=dims,
                                  targets=["cpu"], device="h200")
    select = plan["groups"][0]["select"]
    assert select["keys"] == ["M"] and select["device"] == "h200"
    assert select["candidates"] > 100 and len(plan["groups"][0]["variants"]) >= 2
    sess = dyncc.load(art).session()
    np_type = np.float32 if dtype == TensorProto.FLOAT else np.float16
    rtol, atol = (1e-4, 1e-4) if dtype == TensorProto.FLOAT else (2e-2, 5e-2)
    ran = set()
    for lo, top in intervals(select["lower"], hi):
        for m in probe_points(lo, top):
            ran.add(check(sess, plan, w, b, (m, k), {"M": m}, np_type, rtol,
                          atol, seed=m))
    # Every variant the group has is picked somewhere, and ran.
    names = variant_names(plan, plan["groups"][:1])
    assert ran == names


def factor(value, b_max, s_max):
    """(B, S) with B * S == value, B <= b_max, S <= s_max, B as large as
    possible (so that rows of several batches share a block); None where
    there is none."""
    for b in range(min(b_max, value), 0, -1):
        if value % b == 0 and value // b <= s_max:
            return b, value // b
    return None


def test_every_variant_of_folded_batch(tmp_path):
    """Y[B, S, n] = X[B, S, k] @ W: W is shared by the batch, so the layer
    is one product over B*S rows and its table has the one key B*S. Every
    interval is probed at its ends and a prime inside (or the nearest value
    B <= 6 and S <= 300 can make), and every variant runs."""
    model = tmp_path / "dense3d.onnx"
    w, b = make_dense(model, TensorProto.FLOAT, ["B", "S"], 32, 64, seed=3)
    dims = {"B": (1, 6), "S": (1, 300)}
    plan, art = compile_with_plan(model, tmp_path / "dense3d.dyncc", dims=dims,
                                  targets=["cpu"])
    group = plan["groups"][0]
    assert group["problem"]["batch"] == "1" and group["problem"]["m"] == "B*S"
    select = group["select"]
    assert select["keys"] == ["B*S"]
    sess = dyncc.load(art).session()
    ran = set()
    for lo, hi in intervals(select["lower"], 1800):
        for point in probe_points(lo, hi):
            value = next((v for d in range(hi - lo + 1)
                          for v in (point + d, point - d)
                          if lo <= v <= hi and factor(v, 6, 300)), None)
            if value is None:
                continue
            batch, s = factor(value, 6, 300)
            ran.add(check(sess, plan, w, b, (batch, s, 32),
                          {"B": batch, "S": s}, np.float32, 1e-4, 1e-4,
                          seed=value))
    names = variant_names(plan, [group])
    assert ran == names and len(names) >= 2


def test_every_variant_of_two_key_table(tmp_path):
    """Y[B, S, 64] = X[B, S, 32] @ W[B, 32, 64]: each batch has its own
    weight, so the batch is a grid dimension of its own and the table has
    two keys, B and S (a decision table)."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], "bmm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", "S", 32]),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, ["B", 32, 64])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", "S", 64])])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    model = tmp_path / "bmm.onnx"
    onnx.save(onnx_model, model)
    dims = {"B": (1, 6), "S": (1, 300)}
    plan, art = compile_with_plan(model, tmp_path / "bmm.dyncc", dims=dims,
                                  targets=["cpu"])
    select = plan["groups"][0]["select"]
    assert select["keys"] == ["B", "S"]
    sess = dyncc.load(art).session()
    ran = set()
    for (blo, bhi), inner in zip(intervals(select["lower"], 6), select["inner"]):
        for batch in sorted({blo, bhi}):
            for lo, hi in intervals(inner["lower"], 300):
                for s in probe_points(lo, hi):
                    rng = np.random.default_rng(batch * 1000 + s)
                    x = rng.uniform(-1, 1, (batch, s, 32)).astype(np.float32)
                    w = rng.uniform(-1, 1, (batch, 32, 64)).astype(np.float32)
                    y = sess.run({"X": x, "W": w})["Y"]
                    np.testing.assert_allclose(
                        y, x.astype(np.float64) @ w.astype(np.float64),
                        rtol=1e-4, atol=1e-4)
                    symbols = {"B": batch, "S": s}
                    assert sess.variants == [table_variant(plan, 0, symbols)]
                    ran.add(sess.variants[0])
    names = variant_names(plan, plan["groups"][:1])
    assert ran == names and len(names) >= 2


@pytest.mark.parametrize("level", ["x86-64-v2", "x86-64-v4"])
def test_every_variant_of_the_host_search(tmp_path, monkeypatch, level):
    """An artifact only for the host searches its f32 GEMMs among the
    host's tiles, a set covering the portable and the AVX-512 builds: every
    variant, forced, matches numpy at M = 1, primes and sizes just off the
    tiles' multiples, with K and N off them too, on each build this
    processor runs (the AVX-512 build's variants run on the portable one
    where it does not)."""
    model = tmp_path / "dense.onnx"
    k, n = 100, 200
    w, b = make_dense(model, TensorProto.FLOAT, ["M"], k, n, seed=5)
    plan, art = compile_with_plan(model, tmp_path / "dense.dyncc",
                                  dims={"M": (1, 600)},
                                  targets=["cpu", "cpu-x86-64-v4"])
    group = plan["groups"][0]
    assert group["select"]["device"] == "host-x86-64-v2"
    configs = [plan["kernels"][v["kernel"]]["config"]
               for v in group["variants"]]
    assert len(configs) >= 2
    for config in configs:
        thread_n = int(re.search(r"thread \d+x(\d+)", config).group(1))
        assert thread_n % 4 == 0 and "stages" not in config, config
    # A row of 16 or more f32 is the AVX-512 build's (one or more of its
    # registers); the portable build's rows are 4 or 8.
    assert any(int(re.search(r"thread \d+x(\d+)", c).group(1)) >= 16
               for c in configs), configs
    monkeypatch.setenv("DYNCC_HOST_ISA", level)
    sess = dyncc.load(art).session("cpu")
    rng = np.random.default_rng(7)
    for v, config in enumerate(configs):
        sess.force_variant(0, v)
        for m in [1, 2, 3, 7, 13, 31, 47, 63, 65, 97, 127, 129, 257, 600]:
            x = rng.uniform(-1, 1, size=(m, k)).astype(np.float32)
            y = sess.run({"X": x})["Y"]
            ref = x.astype(np.float64) @ w.astype(np.float64) + b
            np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4,
                                       err_msg=f"{config} at M = {m}")
            kernel = group["variants"][v]["kernel"]
            assert sess.variants == [plan["kernels"][kernel]["name"]]


def test_variant_cap_and_given_config(tmp_path):
    """--max-variants caps the set (the regret is reported, not hidden); a
    --tile-config for GEMMs replaces the search."""
    model = tmp_path / "dense.onnx"
    make_dense(model, TensorProto.FLOAT, ["M"], 64, 64, seed=5)
    dims = {"M": (1, 4096)}
    capped = json.loads(dyncc.compile(model, None, dims=dims, targets=["cpu"],
                                      max_variants=1, emit="plan"))
    group = capped["groups"][0]
    assert len(group["variants"]) == 1
    assert group["select"]["cap"] == 1 and group["select"]["max_regret"] > 0
    given = json.loads(dyncc.compile(
        model, None, dims=dims, targets=["cpu"], emit="plan",
        tile_configs={"gemm": "block 32x64 thread 4x4 k 16"}))
    assert "select" not in given["groups"][0]
    assert given["kernels"][0]["config"] == "block 32x64 thread 4x4 k 16"


@pytest.mark.parametrize("flag,message", [
    (["--device", "v100"], "unknown device 'v100' for --device"),
    (["--device", "h200", "--target", "sm_80"],
     "--device h200 is sm_90, which is not among --target"),
    (["--max-variants", "0"], "--max-variants must be at least 1, got 0"),
    (["--max-variants", "x"], "--max-variants needs a positive integer"),
    (["--regret-target", "-1"], "--regret-target must be in [0, 10), got"),
    (["--im2col=sometimes"],
     "--im2col must be auto, always, never, per-image or folded, got "
     "'sometimes'"),
    (["--im2col"], "--im2col needs auto, always, never, per-image or folded"),
])
def test_search_option_errors(tmp_path, bin_dir, flag, message):
    import subprocess
    model = tmp_path / "dense.onnx"
    make_dense(model, TensorProto.FLOAT, ["M"], 16, 16, seed=1)
    out = tmp_path / "out.dyncc"
    proc = subprocess.run([bin_dir / "dyncc", "compile", model, "-o", out,
                           "--ptxas=off"] + flag,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert message in proc.stderr.strip().splitlines()[0], proc.stderr
    assert not out.exists()


def make_rows(path):
    """Y = Softmax(X) over the last axis of X[B, 3, S, S], R = ReduceMax of
    V[B, L] over L, and W = Z * Sigmoid(Z) of Z[B, S, 40]: two row
    reductions and an elementwise kernel, each keyed on its dimensions."""
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["X"], ["Y"], axis=-1),
         helper.make_node("ReduceMax", ["V"], ["R"], axes=[-1], keepdims=0),
         helper.make_node("Sigmoid", ["Z"], ["G"]),
         helper.make_node("Mul", ["Z", "G"], ["W"])],
        "rows",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", 3, "S", "S"]),
         helper.make_tensor_value_info("V", TensorProto.FLOAT, ["B", "L"]),
         helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["B", "S", 40])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", 3, "S", "S"]),
         helper.make_tensor_value_info("R", TensorProto.FLOAT, ["B"]),
         helper.make_tensor_value_info("W", TensorProto.FLOAT, ["B", "S", 40])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def key_points(select, his):
    """Per key, both ends of every interval of its tables (at any node of
    its level) and, for the last key, a prime inside: points where every
    variant of `select` is picked, taken as their product."""
    keys = select["keys"]
    levels = max(len(keys), 1)
    points = [set() for _ in range(levels)]
    nodes = [select]
    for depth in range(levels):
        for node in nodes:
            for lo, hi in intervals(node["lower"], his[depth]):
                points[depth].update(probe_points(lo, hi)
                                     if depth == levels - 1 else (lo, hi))
        nodes = [child for node in nodes for child in node.get("inner", [])]
    return [sorted(p) for p in points]


def test_every_variant_of_row_wise_kernels(tmp_path):
    """Row reductions and elementwise kernels are searched too (the row
    model): at the ends of every interval and a prime inside, the run-time
    picks what the table says and every variant matches numpy."""
    model = tmp_path / "rows.onnx"
    make_rows(model)
    dims = {"B": (1, 3), "S": (1, 96), "L": (1, 2000)}
    # A tight target, so that the tables have several variants to check.
    options = dict(dims=dims, targets=["cpu"], regret_target=0.005)
    art = tmp_path / "rows.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    groups = {g["kind"] + ":" + ",".join(g["select"]["keys"]): i
              for i, g in enumerate(plan["groups"])}
    assert set(groups) == {"reduce:3*B,S", "reduce:B,L", "elementwise:B,S"}
    for g in plan["groups"]:
        assert g["select"]["model"] == "rows"
    assert max(len(g["variants"]) for g in plan["groups"]) >= 2
    sess = dyncc.load(art).session()
    rng = np.random.default_rng(0)
    ran = set()

    def run(b, s, l):
        x = rng.uniform(-4, 4, size=(b, 3, s, s)).astype(np.float32)
        v = rng.uniform(-4, 4, size=(b, l)).astype(np.float32)
        z = rng.uniform(-4, 4, size=(b, s, 40)).astype(np.float32)
        out = sess.run({"X": x, "V": v, "Z": z})
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        np.testing.assert_allclose(out["Y"], e / e.sum(axis=-1, keepdims=True),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out["R"], v.max(axis=-1))
        np.testing.assert_allclose(out["W"], z / (1 + np.exp(-z)),
                                   rtol=1e-5, atol=1e-6)
        symbols = {"B": b, "S": s, "L": l}
        assert sess.variants == [table_variant(plan, g, symbols)
                                 for g in range(3)], symbols
        ran.update(sess.variants)

    softmax = plan["groups"][groups["reduce:3*B,S"]]["select"]
    outer, inner = key_points(softmax, [9, 96])
    for b3 in outer:
        for s in inner:
            run(b3 // 3, s, 1 + (b3 * 7 + s) % 2000)
    rmax = plan["groups"][groups["reduce:B,L"]]["select"]
    for b in key_points(rmax, [3, 2000])[0]:
        for l in key_points(rmax, [3, 2000])[1]:
            run(b, 1 + (l % 96), l)
    ew = plan["groups"][groups["elementwise:B,S"]]["select"]
    for b in key_points(ew, [3, 96])[0]:
        for s in key_points(ew, [3, 96])[1]:
            run(b, s, 1 + s)
    names = variant_names(plan, plan["groups"])
    assert ran == names


def test_every_variant_of_column_reductions(tmp_path):
    """Reductions over an outer axis are searched as column reductions
    (each thread walks its columns' reduced axis, or a group of lanes
    splits it): a softmax over the channels of X[B, 8, S, S], whose every
    variant takes the 8 channels whole or splits them over lanes, and a
    mean over the positions of E[B, L, 96], whose reduced extent L is a
    key. Every variant, forced, matches numpy at sizes of 1,
    primes and off its tiles; and at the smallest point of the tables where
    each variant is picked, the run-time picks what the table says."""
    path = tmp_path / "columns.onnx"
    graph = helper.make_graph(
        [helper.make_node("Softmax", ["X"], ["Y"], axis=1),
         helper.make_node("ReduceMean", ["E"], ["P"], axes=[1], keepdims=0)],
        "columns",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", 8, "S", "S"]),
         helper.make_tensor_value_info("E", TensorProto.FLOAT, ["B", "L", 96])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["B", 8, "S", "S"]),
         helper.make_tensor_value_info("P", TensorProto.FLOAT, ["B", 96])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    dims = {"B": (1, 4), "S": (1, 512), "L": (1, 1024)}
    options = dict(dims=dims, targets=["cpu"], regret_target=0.005)
    art = tmp_path / "columns.dyncc"
    plan, _ = compile_with_plan(path, art, **options)
    groups = {",".join(g["select"]["keys"]): i
              for i, g in enumerate(plan["groups"])}
    assert set(groups) == {"B,S", "B,L"}, groups
    for g in plan["groups"]:
        assert g["select"]["model"] == "rows" and g["select"]["columns"] == 1
    softmax = plan["groups"][groups["B,S"]]
    assert len(softmax["variants"]) >= 2
    for v in softmax["variants"]:
        config = plan["kernels"][v["kernel"]]["config"]
        assert (re.fullmatch(r"block 1x8x\d+x\d+ thread 1x8x1x\d+ k 0", config)
                or re.fullmatch(r"block (1x)*\d+x\d+ thread (1x)*1 k 64 "
                                r"reduce column", config)), config
    sess = dyncc.load(art).session()
    rng = np.random.default_rng(3)

    def run(b, s, l):
        x = rng.uniform(-4, 4, size=(b, 8, s, s)).astype(np.float32)
        e = rng.uniform(-4, 4, size=(b, l, 96)).astype(np.float32)
        out = sess.run({"X": x, "E": e})
        ex = np.exp(x - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(out["Y"], ex / ex.sum(axis=1, keepdims=True),
                                   rtol=1e-5, atol=1e-6, err_msg=str((b, s, l)))
        np.testing.assert_allclose(out["P"], e.astype(np.float64).mean(axis=1),
                                   rtol=1e-5, atol=1e-5, err_msg=str((b, s, l)))

    names = [[plan["kernels"][v["kernel"]]["name"] for v in g["variants"]]
             for g in plan["groups"]]
    for g, kernels in enumerate(names):
        for v, kernel in enumerate(kernels):
            sess.force_variant(g, v)
            for b, s, l in [(1, 1, 1), (3, 7, 13), (1, 33, 65), (2, 17, 127),
                            (1, 65, 2)]:
                run(b, s, l)
                assert sess.variants[g] == kernel, (b, s, l)
        sess.force_variant(g, None)
    with pytest.raises(dyncc.DynccError, match="has no variant 8"):
        sess.force_variant(0, 8)
    for key, sizes in [("B,S", lambda b, s: b * s * s),
                       ("B,L", lambda b, l: b * l)]:
        g = groups[key]
        outer, inner = key_points(plan["groups"][g]["select"],
                                  [4, 1024 if key == "B,L" else 512])
        first = {}
        for point in sorted(((b, k) for b in outer for k in inner),
                            key=lambda p: sizes(*p)):
            first.setdefault(table_variant_at(plan, g, list(point)), point)
        assert set(first) == set(names[g])
        for b, k in first.values():
            s, l = (k, 5) if key == "B,S" else (3, k)
            run(b, s, l)
            symbols = {"B": b, "S": s, "L": l}
            assert sess.variants == [table_variant(plan, i, symbols)
                                     for i in range(2)], symbols


def test_every_variant_of_column_splits(tmp_path):
    """Column reductions whose result lacks the reduced axis and whose
    reductions read the inputs get `reduce column` candidates: a group of
    2 to 32 lanes per output (or a block of 64 to 1024 on one) walks its
    column, the lanes merging their partials (issue 6). A max over the positions of E[B, L, D] kept as
    [B, 1, D], and a mean over the positions of F[L, D] into [D] (one
    dimension: the config's outputs per block are a size beyond it). D is
    dynamic, so blocks of outputs end off their tiles. Each group has a
    split among its variants; every variant, forced, matches numpy at 1,
    primes and sizes just off the tiles; unforced, the run-time picks what
    the table says."""
    path = tmp_path / "splits.onnx"
    graph = helper.make_graph(
        [helper.make_node("ReduceMax", ["E"], ["M"], axes=[1], keepdims=1),
         helper.make_node("ReduceMean", ["F"], ["A"], axes=[0], keepdims=0)],
        "splits",
        [helper.make_tensor_value_info("E", TensorProto.FLOAT, ["B", "L", "D"]),
         helper.make_tensor_value_info("F", TensorProto.FLOAT, ["L", "D"])],
        [helper.make_tensor_value_info("M", TensorProto.FLOAT, ["B", 1, "D"]),
         helper.make_tensor_value_info("A", TensorProto.FLOAT, ["D"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    art = tmp_path / "splits.dyncc"
    plan, _ = compile_with_plan(path, art, targets=["cpu"],
                                dims={"B": (1, 4), "L": (1, 1024),
                                      "D": (1, 300)})
    assert len(plan["groups"]) == 2
    configs = [[plan["kernels"][v["kernel"]]["config"] for v in g["variants"]]
               for g in plan["groups"]]
    lanes = set()
    for g, group in zip(configs, plan["groups"]):
        assert group["select"]["columns"] == 1
        splits = [c for c in g if c.endswith("reduce column")]
        assert splits, g
        for c in splits:
            m = re.fullmatch(r"block (?:1x)*(\d+)x(\d+) thread (?:1x)*1x1 "
                             r"k 64 reduce column", c)
            assert m, c
            outputs, group_lanes = int(m.group(1)), int(m.group(2))
            assert group_lanes in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), c
            # Beyond a warp, one output per block.
            assert group_lanes <= 32 or outputs == 1, c
            lanes.add(group_lanes)
    # Few outputs over long columns take a block of lanes: its merge across
    # warps runs too.
    assert max(lanes) > 32 and min(lanes) <= 32, lanes
    sess = dyncc.load(art).session()
    rng = np.random.default_rng(11)

    def run(b, l, d):
        e = rng.uniform(-4, 4, size=(b, l, d)).astype(np.float32)
        f = rng.uniform(-4, 4, size=(l, d)).astype(np.float32)
        out = sess.run({"E": e, "F": f})
        np.testing.assert_array_equal(out["M"], e.max(axis=1, keepdims=True),
                                      err_msg=str((b, l, d)))
        np.testing.assert_allclose(out["A"], f.astype(np.float64).mean(axis=0),
                                   rtol=1e-5, atol=1e-5, err_msg=str((b, l, d)))

    shapes = [(1, 1, 1), (3, 7, 13), (1, 33, 17), (2, 127, 65), (4, 1024, 300),
              (1, 509, 299), (2, 2, 31), (1, 64, 33)]
    names = [[plan["kernels"][v["kernel"]]["name"] for v in g["variants"]]
             for g in plan["groups"]]
    for g, kernels in enumerate(names):
        for v, kernel in enumerate(kernels):
            sess.force_variant(g, v)
            for b, l, d in shapes:
                run(b, l, d)
                assert sess.variants[g] == kernel, (b, l, d)
        sess.force_variant(g, None)
    for b, l, d in shapes:
        run(b, l, d)
        symbols = {"B": b, "L": l, "D": d}
        assert sess.variants == [table_variant(plan, i, symbols)
                                 for i in range(2)], symbols


def make_pools(path, channels, dtype):
    """M = MaxPool(X) (3x3, stride 2, padding 1, ResNet's stem pool) and A =
    AveragePool(X) (2x2, stride 2) of X[B, channels, H, W]."""
    elem = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["X"], ["M"], kernel_shape=[3, 3],
                          strides=[2, 2], pads=[1, 1, 1, 1]),
         helper.make_node("AveragePool", ["X"], ["A"], kernel_shape=[2, 2],
                          strides=[2, 2])],
        "pools",
        [helper.make_tensor_value_info("X", elem, ["B", channels, "H", "W"])],
        [helper.make_tensor_value_info("M", elem, None),
         helper.make_tensor_value_info("A", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


@pytest.mark.parametrize("dtype,channels", [(np.float32, 64),
                                            (np.float16, 32)])
def test_every_variant_of_pools(tmp_path, dtype, channels):
    """Windowed pools are searched with the row model, over their outputs
    (batch x channels planes of rows x columns), each thread folding its
    outputs' windows. At both ends of every interval of the three keys and
    a prime inside, the run-time picks what the table says and every
    variant matches numpy: a padded max pool at stride 2 and an average
    pool, at output sizes 1, primes and sizes off the tiles, from odd input
    sizes."""
    model = tmp_path / "pools.onnx"
    make_pools(model, channels, dtype)
    dims = {"B": (1, 3), "H": (2, 128), "W": (2, 128)}
    options = dict(dims=dims, targets=["cpu"], regret_target=0.005)
    art = tmp_path / "pools.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    assert [g["kind"] for g in plan["groups"]] == ["reduce", "reduce"]
    for g in plan["groups"]:
        assert g["select"]["model"] == "rows"
        assert g["select"]["reduction"] == 0
        assert len(g["select"]["keys"]) == 3
    assert max(len(g["variants"]) for g in plan["groups"]) >= 2
    sess = dyncc.load(art).session()
    rng = np.random.default_rng(3)
    ran = set()
    tolerance = 1e-6 if dtype == np.float32 else 2e-3
    # Each point of either group's table at odd sizes: the max pool has v
    # rows from 2v - 1 (and 2v) rows in, the average pool from 2v + 1 (and
    # 2v); the other pool takes what those give.
    shapes = set()
    for group in plan["groups"]:
        outer, rows, columns = key_points(group["select"],
                                          [3 * channels, 64, 64])
        batches = {min(3, max(1, -(-key // channels))) for key in outer}
        max_pool = group["select"]["keys"][1].endswith("+ 1")
        sizes = {v: (2 * v - 1 if v > 1 else 2) if max_pool
                 else min(2 * v + 1, 128) for v in set(rows) | set(columns)}
        shapes.update((b, sizes[oh], sizes[ow]) for b in batches
                      for oh in rows for ow in columns)
    for b, h, w in sorted(shapes):
        x = rng.uniform(-4, 4, (b, channels, h, w)).astype(dtype)
        out = sess.run({"X": x})
        padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)),
                        constant_values=-np.inf)
        windows = np.lib.stride_tricks.sliding_window_view(
            padded, (3, 3), axis=(2, 3))[:, :, ::2, ::2]
        np.testing.assert_array_equal(out["M"],
                                      windows.max(axis=(4, 5)).astype(dtype))
        ah, aw = h // 2, w // 2
        mean = x[:, :, :2 * ah, :2 * aw].astype(np.float64).reshape(
            b, channels, ah, 2, aw, 2).mean(axis=(3, 5))
        np.testing.assert_allclose(out["A"].astype(np.float64), mean,
                                   rtol=tolerance, atol=tolerance)
        symbols = {"B": b, "H": h, "W": w}
        assert sess.variants == [table_variant(plan, i, symbols)
                                 for i in range(2)], symbols
        ran.update(sess.variants)
    names = variant_names(plan, plan["groups"])
    assert ran == names


def test_every_variant_of_global_pools(tmp_path):
    """GlobalAveragePool and a ReduceMax over the rows and columns of
    X[B, C, H, W] reduce rows of H*W elements (the lowering collapses the
    innermost reduced dimensions into one), so they are row reductions,
    searched over the batch and the image's size with warp and block
    strategies. At both ends of every interval of both keys and a prime
    inside (the nearest image size the same variant takes, where no image
    within the ranges has that many pixels), the run-time picks what the
    table says and every variant matches numpy."""
    channels = 64
    model = tmp_path / "global.onnx"
    graph = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["X"], ["G"]),
         helper.make_node("ReduceMax", ["X"], ["R"], axes=[2, 3], keepdims=0)],
        "global",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       ["B", channels, "H", "W"])],
        [helper.make_tensor_value_info("G", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("R", TensorProto.FLOAT, None)])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    onnx.save(onnx_model, model)
    dims = {"B": (1, 8), "H": (1, 64), "W": (1, 64)}
    options = dict(dims=dims, targets=["cpu"], regret_target=0.005)
    art = tmp_path / "global.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    for g in plan["groups"]:
        assert g["kind"] == "reduce"
        assert g["select"]["model"] == "rows"
        assert g["select"]["reduction"] == 1
        assert g["select"]["keys"] == ["B", "H*W"]
        assert len(g["variants"]) >= 2
    sess = dyncc.load(art).session()
    images = {}
    for h in range(1, 65):
        for w in range(1, 65):
            images.setdefault(h * w, (h, w))
    rng = np.random.default_rng(5)
    ran = set()
    shapes = set()
    for g, group in enumerate(plan["groups"]):
        batches, pixels = key_points(group["select"], [8, 64 * 64])
        for b in batches:
            for p in pixels:
                want = table_variant_at(plan, g, [b, p])
                near = min((q for q in images
                            if table_variant_at(plan, g, [b, q]) == want),
                           key=lambda q: abs(q - p))
                shapes.add((b, *images[near]))
    for b, h, w in sorted(shapes):
        x = rng.uniform(-4, 4, (b, channels, h, w)).astype(np.float32)
        out = sess.run({"X": x})
        np.testing.assert_allclose(
            out["G"], x.astype(np.float64).mean(axis=(2, 3), keepdims=True),
            rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out["R"], x.max(axis=(2, 3)))
        symbols = {"B": b, "H": h, "W": w}
        assert sess.variants == [table_variant(plan, i, symbols)
                                 for i in range(2)], symbols
        ran.update(sess.variants)
    names = variant_names(plan, plan["groups"])
    assert ran == names


def output_size(size, taps, stride, pad, dilation):
    """A conv's output size along an axis of `size` (pads on both sides)."""
    return (size + 2 * pad - dilation * (taps - 1) - 1) // stride + 1


def input_sizes(low, high, taps, stride, pad, dilation):
    """Per output size a conv's inputs of [low, high] give, the smallest
    input size that gives it."""
    sizes = {}
    for size in range(low, high + 1):
        sizes.setdefault(output_size(size, taps, stride, pad, dilation), size)
    return sizes


def conv_reference(x, w, b, stride, pad, dilation, groups=1):
    """NCHW convolution in float64 (each of `groups` output channel groups
    reading its own input channels), then bias and Relu."""
    n, c, h, wd = x.shape
    oc, icg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, oc, oh, ow))
    ocg = oc // groups
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                       j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
            for g in range(groups):
                out[:, g * ocg:(g + 1) * ocg] += np.einsum(
                    "nchw,oc->nohw", patch[:, g * icg:(g + 1) * icg],
                    w[g * ocg:(g + 1) * ocg, :, i, j].astype(np.float64))
    return np.maximum(out + b.astype(np.float64)[None, :, None, None], 0)


@pytest.mark.parametrize(
    "channels,out_channels,taps,stride,pad,dilation,dtype,groups", [
        (20, 16, 3, 1, 1, 1, "f32", 1),
        (5, 12, 5, 2, 2, 1, "f32", 1),
        (16, 8, 3, 1, 2, 2, "f32", 1),
        (12, 16, 3, 1, 1, 1, "f16", 1),
        (7, 16, 3, 2, 1, 1, "bf16", 1),
        # Depthwise: the block's channels span groups.
        (24, 24, 3, 1, 1, 1, "f32", 24),
        (40, 40, 5, 2, 2, 1, "f32", 40),
        (24, 24, 3, 1, 1, 1, "f16", 24),
        # Two outputs per input channel (a block in one group, its window
        # one channel); groups of several channels (ResNeXt's 3x3s; a
        # grouped 1x1 is a batched GEMM, test_every_variant_of_pointwise_conv).
        (12, 24, 3, 1, 1, 1, "f32", 12),
        (24, 48, 3, 1, 1, 1, "f32", 4),
    ])
def test_every_variant_of_conv(tmp_path, channels, out_channels, taps, stride,
                               pad, dilation, dtype, groups):
    """Relu(Conv(X[B, C, S, S])): 2-D convs are searched with the conv
    model, keyed on the batch and the output's size (rows and columns are
    one expression of S). At both ends of every interval of both keys and a
    prime inside, the run-time picks what the table says and every variant
    matches numpy: 20 channels in k-steps of 8 (a partial step), a 5x5
    window at stride 2 over 5 channels, dilation 2, f16 and bf16 convs
    (16-bit operands, an f32 accumulator, the result rounded once), and
    grouped convs (depthwise, two outputs per input channel, groups of
    several channels), whose window records their groups."""
    if dtype == "bf16":
        np_type = pytest.importorskip("ml_dtypes").bfloat16
    else:
        np_type = {"f32": np.float32, "f16": np.float16}[dtype]
    elem = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16,
            "bf16": TensorProto.BFLOAT16}[dtype]
    # 16-bit types: the reference in float64 from the same values, against
    # one rounding of the result (2^-11 relative for f16, 2^-8 for bf16)
    # and the f32 sums.
    tolerance = {"f32": 1e-4, "f16": 2e-3, "bf16": 1e-2}[dtype]
    rng = np.random.default_rng(channels * 100 + taps)
    w = rng.uniform(-1, 1, (out_channels, channels // groups, taps,
                            taps)).astype(np_type)
    b = rng.uniform(-1, 1, (out_channels,)).astype(np_type)

    def initializer(name, array):
        # Raw bytes: numpy_helper does not take ml_dtypes' bfloat16.
        return helper.make_tensor(name, elem, array.shape, array.tobytes(),
                                  raw=True)

    attrs = dict(kernel_shape=[taps, taps], pads=[pad] * 4,
                 strides=[stride, stride], dilations=[dilation, dilation],
                 group=groups)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "b"], ["C"], **attrs),
         helper.make_node("Relu", ["C"], ["Y"])], "conv",
        [helper.make_tensor_value_info("X", elem, ["B", channels, "S", "S"])],
        [helper.make_tensor_value_info("Y", elem, None)],
        [initializer("W", w), initializer("b", b)])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    model = tmp_path / "conv.onnx"
    onnx.save(onnx_model, model)
    s_max = 48
    low = max(1, dilation * (taps - 1) + 1 - 2 * pad)
    dims = {"B": (1, 4), "S": (low, s_max)}
    # The direct conv's variants (test_every_variant_of_im2col_conv covers
    # the copy and the GEMM).
    options = dict(dims=dims, targets=["cpu"], device="h200",
                   regret_target=0.005, im2col="never")
    art = tmp_path / "conv.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    group = plan["groups"][0]
    assert group["kind"] == "conv"
    select = group["select"]
    assert select["model"] == "conv" and len(select["keys"]) == 2
    assert select["window"] == [channels // groups, taps, taps, stride,
                                stride, dilation, dilation] + (
                                    [groups] if groups > 1 else [])
    assert select["element_bytes"] == np.dtype(np_type).itemsize
    assert len(group["variants"]) >= 2
    sess = dyncc.load(art).session()

    # The keys are B and the output's size; find an S per output size.
    def size_of(s):
        return output_size(s, taps, stride, pad, dilation)

    sizes = input_sizes(low, s_max, taps, stride, pad, dilation)
    ran = set()
    outer, inner = key_points(select, [4, size_of(s_max)])
    for batch in outer:
        for size in inner:
            s = sizes.get(size)
            if s is None:
                continue
            x = rng.uniform(-1, 1, (batch, channels, s, s)).astype(np_type)
            y = sess.run({"X": x})["Y"]
            assert y.dtype == np_type
            want = conv_reference(x.astype(np.float64), w.astype(np.float64),
                                  b.astype(np.float64), stride, pad, dilation,
                                  groups)
            np.testing.assert_allclose(
                y.astype(np.float64), want, rtol=tolerance,
                atol=tolerance * max(1.0, float(np.abs(want).max())))
            assert sess.variants == [table_variant(plan, 0, {"B": batch,
                                                             "S": s})]
            ran.add(sess.variants[0])
    names = variant_names(plan, [group])
    assert ran == names


def conv1d_reference(x, w, b, stride, pad, dilation, groups):
    """NCW convolution in float64 (grouped), then bias and Relu: the 2-D
    reference over one row."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad)))
    y = conv_reference(xp[:, :, None, :], w[:, :, None, :], b, stride, 0,
                       dilation, groups)
    return y[:, :, 0, :]


@pytest.mark.parametrize(
    "channels,out_channels,taps,stride,pad,dilation,groups,l_max", [
        # wav2vec2's first layer's shape: one channel, a 10-tap window at
        # stride 5 (fewer output channels here), over longer audio.
        (1, 32, 10, 5, 0, 1, 1, 16000),
        (12, 8, 5, 2, 4, 2, 1, 4000),
        # Grouped and depthwise.
        (16, 16, 7, 1, 3, 1, 4, 700),
        (24, 24, 3, 1, 1, 1, 24, 8000),
    ])
def test_every_variant_of_conv1d(tmp_path, channels, out_channels, taps,
                                 stride, pad, dilation, groups, l_max):
    """Relu(Conv(X[B, C, L])): a 1-D conv is searched with the conv model
    too, its tiles three sizes a level (`block 1xCxW`), which code
    generation aligns to the output's [B, C, L]. At both ends of every
    interval of both keys and a prime inside, the run-time picks what the
    table says and every variant matches numpy."""
    model = tmp_path / "conv1d.onnx"
    w, b = make_conv(model, channels, out_channels, taps, stride, pad,
                     dilation, "f32", ["B", channels, "L"],
                     seed=channels * 10 + taps, groups=groups)
    rng = np.random.default_rng(taps)
    low = max(1, dilation * (taps - 1) + 1 - 2 * pad)
    options = dict(dims={"B": (1, 4), "L": (low, l_max)}, targets=["cpu"],
                   device="h200", regret_target=0.005)
    art = tmp_path / "conv1d.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    group = plan["groups"][0]
    select = group["select"]
    assert group["kind"] == "conv" and select["model"] == "conv"
    assert select["keys"][0] == "B" and len(select["keys"]) == 2
    assert select["window"] == [channels // groups, 1, taps, 1, stride, 1,
                                dilation] + ([groups] if groups > 1 else [])
    assert len(group["variants"]) >= 2
    for v in group["variants"]:
        config = plan["kernels"][v["kernel"]]["config"]
        assert config.startswith("block 1x") and config.count("x") == 4, config
    check_conv1d_variants(plan, dyncc.load(art).session(), rng, w, b,
                          (taps, stride, pad, dilation, groups), low, l_max,
                          1e-4)


def check_conv1d_variants(plan, sess, rng, w, b, conv, low, l_max,
                          tolerance, shape=lambda x: x):
    """Runs a 1-D conv's artifact (group 0, keys B in 1..4 and L) at both
    ends of every interval of both keys and a prime inside: the run-time
    picks what the table says, every variant runs, and each output matches
    numpy within `tolerance`. `conv` is (taps, stride, pad, dilation,
    groups); `shape` gives the model's input (and its output's) layout from
    [B, C, L]."""
    taps, stride, pad, dilation, groups = conv
    group = plan["groups"][0]
    sizes = input_sizes(low, l_max, taps, stride, pad, dilation)
    ran = set()
    outer, inner = key_points(group["select"], [
        4, output_size(l_max, taps, stride, pad, dilation)])
    for batch in outer:
        for size in inner:
            length = sizes.get(size)
            if length is None:
                continue
            x = rng.uniform(-1, 1, (batch, w.shape[1] * groups,
                                    length)).astype(w.dtype)
            y = sess.run({"X": shape(x)})["Y"]
            assert y.dtype == w.dtype
            want = shape(conv1d_reference(x, w.astype(np.float64),
                                          b.astype(np.float64), stride, pad,
                                          dilation, groups))
            np.testing.assert_allclose(
                y.astype(np.float64), want, rtol=tolerance,
                atol=tolerance * max(1.0, float(np.abs(want).max())))
            assert sess.variants == [table_variant(plan, 0, {"B": batch,
                                                             "L": length})]
            ran.add(sess.variants[0])
    names = variant_names(plan, [group])
    assert ran == names


@pytest.mark.parametrize("form,dtype", [("line", "f32"), ("column", "f32"),
                                        ("line", "f16")])
def test_every_variant_of_line_conv(tmp_path, form, dtype):
    """Relu(Conv(X[B, C, 1, L]) + b) with a 1xK window (tf2onnx's Conv1D),
    or over a column (X[B, C, L, 1], a Kx1 window): code generation drops
    the unit dimension, so the problem is the 1-D conv it builds, with
    three-size tiles. At both ends of every interval of both keys and a
    prime inside, the run-time picks what the table says and every variant
    matches numpy."""
    channels, out_channels, taps, stride, pad, dilation = 12, 20, 5, 2, 3, 2
    line = form == "line"
    np_type = {"f32": np.float32, "f16": np.float16}[dtype]
    elem = {"f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16}[dtype]
    rng = np.random.default_rng(17)
    w = rng.uniform(-1, 1, (out_channels, channels, taps)).astype(np_type)
    b = rng.uniform(-1, 1, (out_channels,)).astype(np_type)
    w4 = w[:, :, None, :] if line else w[:, :, :, None]
    along = (lambda v, other: [other, v]) if line else (lambda v, other: [v, other])
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "b"], ["C"],
                          kernel_shape=list(w4.shape[2:]),
                          pads=along(pad, 0) * 2, strides=along(stride, 1),
                          dilations=along(dilation, 1)),
         helper.make_node("Relu", ["C"], ["Y"])], "line",
        [helper.make_tensor_value_info("X", elem,
                                       ["B", channels] + along("L", 1))],
        [helper.make_tensor_value_info("Y", elem, None)],
        [numpy_helper.from_array(w4, "W"), numpy_helper.from_array(b, "b")])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    model = tmp_path / "line.onnx"
    onnx.save(onnx_model, model)
    low, l_max = dilation * (taps - 1) + 1 - 2 * pad, 3000
    options = dict(dims={"B": (1, 4), "L": (low, l_max)}, targets=["cpu"],
                   device="h200", regret_target=0.005)
    art = tmp_path / "line.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    group = plan["groups"][0]
    select = group["select"]
    assert group["kind"] == "conv" and select["model"] == "conv"
    assert select["window"] == [channels, 1, taps, 1, stride, 1, dilation]
    assert len(group["variants"]) >= 2
    for v in group["variants"]:
        config = plan["kernels"][v["kernel"]]["config"]
        assert config.startswith("block 1x") and config.count("x") == 4, config
    check_conv1d_variants(
        plan, dyncc.load(art).session(), rng, w, b,
        (taps, stride, pad, dilation, 1), low, l_max,
        {"f32": 1e-4, "f16": 2e-3}[dtype],
        (lambda x: x[:, :, None, :]) if line else (lambda x: x[:, :, :, None]))


def test_every_variant_of_three_key_conv(tmp_path):
    """Relu(Conv(X[B, 6, H, W])) with the image's rows and columns two
    symbols: the conv's problem has three dynamic dimensions (the batch,
    the output's rows and its columns), and the table is a decision tree
    with a level per key. At the ends of every interval of each level
    (a prime inside for the last), the run-time picks what the tree says
    and every variant matches numpy."""
    channels, out_channels, taps, stride, pad = 6, 16, 3, 2, 1
    rng = np.random.default_rng(3)
    w = rng.uniform(-1, 1, (out_channels, channels, taps, taps)).astype(np.float32)
    b = rng.uniform(-1, 1, (out_channels,)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "b"], ["C"],
                          kernel_shape=[taps, taps], pads=[pad] * 4,
                          strides=[stride, stride]),
         helper.make_node("Relu", ["C"], ["Y"])], "conv",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       ["B", channels, "H", "W"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    model = tmp_path / "conv3.onnx"
    onnx.save(onnx_model, model)
    h_max, w_max = 40, 64
    dims = {"B": (1, 3), "H": (1, h_max), "W": (1, w_max)}
    options = dict(dims=dims, targets=["cpu"], device="h200",
                   regret_target=0.005, im2col="never")
    art = tmp_path / "conv3.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    group = plan["groups"][0]
    select = group["select"]
    assert select["model"] == "conv" and len(select["keys"]) == 3
    assert len(group["variants"]) >= 2
    # Nested: a node over the rows per interval of the batch, a table over
    # the columns per interval of the rows.
    assert "variant" in select["inner"][0]["inner"][0]
    sess = dyncc.load(art).session()

    def size_of(s):
        return output_size(s, taps, stride, pad, 1)

    def input_of(size, s_max):
        return next(s for s in range(1, s_max + 1) if size_of(s) == size)

    batches, rows, columns = key_points(
        select, [3, size_of(h_max), size_of(w_max)])
    ran = set()
    for batch in batches:
        for oh in rows:
            for ow in columns:
                h, wd = input_of(oh, h_max), input_of(ow, w_max)
                x = rng.uniform(-1, 1, (batch, channels, h, wd)).astype(np.float32)
                y = sess.run({"X": x})["Y"]
                np.testing.assert_allclose(
                    y, conv_reference(x, w, b, stride, pad, 1),
                    rtol=1e-4, atol=1e-4)
                assert sess.variants == [table_variant(
                    plan, 0, {"B": batch, "H": h, "W": wd})], (batch, h, wd)
                ran.add(sess.variants[0])
    names = variant_names(plan, [group])
    assert ran == names


def make_conv(*args, **kwargs):
    """test/Driver/Inputs/make_conv.py's make_conv (bf16 needs ml_dtypes)."""
    if kwargs.get("dtype", args[7] if len(args) > 7 else None) == "bf16":
        pytest.importorskip("ml_dtypes")
    return load_input_script("make_conv").make_conv(*args, **kwargs)


@pytest.mark.parametrize(
    "channels,out_channels,taps,stride,pad,dilation,dtype,groups", [
        (20, 16, 3, 1, 1, 1, "f32", 1),
        (5, 12, 5, 2, 2, 1, "f32", 1),
        (16, 8, 3, 1, 2, 2, "f32", 1),
        (3, 24, 7, 2, 3, 1, "f32", 1),
        (16, 48, 3, 1, 1, 1, "f16", 1),
        # (bf16 at stride 2 over 7 -> 16 channels is one tensor-core
        # variant within the regret target since SIMT tiles pay for
        # converting halves.)
        (7, 48, 3, 1, 1, 1, "bf16", 1),
        # Many channels over small images: the GEMM's K is 2304 and its
        # variants split it (part and sum kernels).
        (256, 32, 3, 1, 1, 1, "f32", 1),
        # Grouped (ResNeXt's 3x3s): the copy holds each group's windows
        # together and the GEMM is batched over images and groups.
        (32, 64, 3, 1, 1, 1, "f32", 4),
        (32, 64, 3, 1, 1, 1, "f16", 4),
    ])
def test_every_variant_of_im2col_conv(tmp_path, channels, out_channels, taps,
                                      stride, pad, dilation, dtype, groups):
    """Relu(Conv(X[B, C, H, W])) with --im2col=always: the windows are
    copied into channels (dg.im2col, one kernel) and the conv is a GEMM of
    the [F, C*KH*KW] filter and each image's copy, searched with GEMM
    candidates keyed on the batch and the output's pixels. At both ends of
    every interval of both keys and a prime inside (where an output within
    the ranges has that many pixels; else the nearest count the same
    variant takes), the run-time picks what the table says and every
    variant matches numpy: partial k-steps, a 5x5 window at stride 2,
    dilation 2, a 7x7 stem over 3 channels, f16 and bf16, split K, and
    groups (a GEMM per image and group, the batch key G*B)."""
    model = tmp_path / "conv.onnx"
    w, b = make_conv(model, channels, out_channels, taps, stride, pad,
                     dilation, dtype, ["B", channels, "H", "W"],
                     seed=channels * 100 + taps, groups=groups)
    np_type = w.dtype
    tolerance = {"f32": 1e-4, "f16": 2e-3, "bf16": 1e-2}[dtype]
    side = 8 if channels == 256 else 40
    low = max(1, dilation * (taps - 1) + 1 - 2 * pad)
    dims = {"B": (1, 3), "H": (low, side), "W": (low, side)}
    options = dict(dims=dims, targets=["cpu"], device="h200",
                   regret_target=0.005, im2col="always")
    art = tmp_path / "conv.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    kinds = [g["kind"] for g in plan["groups"]]
    assert kinds == ["data_movement", "gemm"], kinds
    group = plan["groups"][1]
    depth = channels // groups * taps * taps
    assert group["problem"]["m"] == str(out_channels // groups)
    assert group["problem"]["k"] == str(depth)
    assert group["problem"]["batch"] == ("B" if groups == 1 else
                                         f"{groups}*B")
    assert len(group["variants"]) >= 2
    assert any("then" in v for v in group["variants"]) == (channels == 256)
    tiled = dyncc.compile(model, None, emit="tiled", **options)
    assert ("dyncc.mma = " in tiled) == (dtype != "f32")
    assert "dyncc.conv_problem" not in tiled
    sess = dyncc.load(art).session()

    # An input size per output size, and the output images per pixel count.
    inputs = input_sizes(low, side, taps, stride, pad, dilation)
    images = {}
    for oh in inputs:
        for ow in inputs:
            images.setdefault(oh * ow, (inputs[oh], inputs[ow]))
    rng = np.random.default_rng(7)
    ran = set()
    largest = output_size(side, taps, stride, pad, dilation)
    outer, inner = key_points(group["select"], [3 * groups, largest ** 2])
    if groups > 1:
        # The key is G*B: every batch.
        outer = [1, 2, 3]
    for batch in outer:
        for pixels in inner:
            key = groups * batch
            want = table_variant_at(plan, 1, [key, pixels])
            near = min((p for p in images
                        if table_variant_at(plan, 1, [key, p]) == want),
                       key=lambda p: abs(p - pixels))
            h, wd = images[near]
            x = rng.uniform(-1, 1, (batch, channels, h, wd)).astype(np_type)
            y = sess.run({"X": x})["Y"]
            assert y.dtype == np_type
            ref = conv_reference(x.astype(np.float64), w.astype(np.float64),
                                 b.astype(np.float64), stride, pad, dilation,
                                 groups)
            np.testing.assert_allclose(
                y.astype(np.float64), ref, rtol=tolerance,
                atol=tolerance * max(1.0, float(np.abs(ref).max())))
            assert sess.variants[1] == table_variant(
                plan, 1, {"B": batch, "H": h, "W": wd}), (batch, h, wd)
            ran.add(sess.variants[1])
    names = variant_names(plan, [group])
    assert ran == names


@pytest.mark.parametrize(
    "channels,out_channels,taps,stride,pad,dilation,dtype,mode", [
        # Whisper's second conv (fewer channels): 3 taps at stride 2.
        (48, 40, 3, 2, 1, 1, "f32", "always"),
        (64, 48, 3, 2, 1, 1, "f16", "always"),
        # wav2vec2's first layer: one channel, 10 taps at stride 5.
        (1, 24, 10, 5, 0, 1, "f32", "always"),
        (12, 8, 5, 1, 4, 2, "f32", "folded"),
        (16, 32, 3, 1, 1, 1, "f16", "folded"),
    ])
def test_every_variant_of_im2col_conv1d(tmp_path, channels, out_channels,
                                        taps, stride, pad, dilation, dtype,
                                        mode):
    """Relu(Conv(X[B, C, L])) through im2col: the copy is [B, C*KW, OW]
    (folded: [C*KW, B, OW], one GEMM over every image's columns, the
    result read back as NCW) and the conv a GEMM of the [F, C*KW] filter.
    At both ends of every interval of the GEMM's keys and a prime inside,
    the run-time picks what the table says and every variant matches
    numpy: a dilated window, padding, a one-channel input, f16."""
    model = tmp_path / "conv1d.onnx"
    w, b = make_conv(model, channels, out_channels, taps, stride, pad,
                     dilation, dtype, ["B", channels, "L"],
                     seed=channels * 10 + taps)
    np_type = w.dtype
    tolerance = {"f32": 1e-4, "f16": 2e-3}[dtype]
    low = max(1, dilation * (taps - 1) + 1 - 2 * pad)
    l_max, batches = 3000, 3
    options = dict(dims={"B": (1, batches), "L": (low, l_max)},
                   targets=["cpu"], device="h200", regret_target=0.005,
                   im2col=mode)
    art = tmp_path / "conv1d.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    kinds = [g["kind"] for g in plan["groups"]]
    folded = mode == "folded"
    assert kinds == ["data_movement", "gemm"] + (["elementwise"] if folded
                                                 else []), kinds
    group = plan["groups"][1]
    assert group["problem"]["m"] == str(out_channels)
    assert group["problem"]["k"] == str(channels * taps)
    assert group["problem"]["batch"] == ("1" if folded else "B")
    assert len(group["variants"]) >= 2
    sess = dyncc.load(art).session()

    sizes = input_sizes(low, l_max, taps, stride, pad, dilation)
    largest = output_size(l_max, taps, stride, pad, dilation)
    keys = [batches * largest] if folded else [batches, largest]
    points = key_points(group["select"], keys)
    # The shapes to run: per key point, the nearest batch and length that
    # the table gives the same variant.
    shapes = [(bt, ow) for bt in range(1, batches + 1) for ow in sizes]
    key_of = ((lambda bt, ow: [bt * ow]) if folded else
              (lambda bt, ow: [bt, ow]))
    wanted = ([[n] for n in points[0]] if folded else
              [[bt, n] for bt in points[0] for n in points[1]])
    rng = np.random.default_rng(5)
    ran = set()
    for key in wanted:
        want = table_variant_at(plan, 1, key)
        batch, out = min(
            (s for s in shapes if table_variant_at(plan, 1, key_of(*s)) == want),
            key=lambda s: abs(key_of(*s)[-1] - key[-1]))
        x = rng.uniform(-1, 1, (batch, channels, sizes[out])).astype(np_type)
        y = sess.run({"X": x})["Y"]
        assert y.dtype == np_type
        ref = conv1d_reference(x, w.astype(np.float64), b.astype(np.float64),
                               stride, pad, dilation, 1)
        np.testing.assert_allclose(
            y.astype(np.float64), ref, rtol=tolerance,
            atol=tolerance * max(1.0, float(np.abs(ref).max())))
        assert sess.variants[1] == want, (batch, out)
        ran.add(want)
    names = variant_names(plan, [group])
    assert ran == names


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
def test_same_padded_im2col_conv(tmp_path, auto_pad):
    """SAME padding over a static image (tf2onnx's convs): im2col takes its
    pads from the sizes, the odd one at the end for SAME_UPPER and at the
    start for SAME_LOWER, and matches numpy at batch 1, 2 and 3 with a
    3x3 window at stride 2 over 9 x 10 (an odd total padding each way) and
    a 4x4 one at stride 1 (3 rows and columns of padding)."""
    rng = np.random.default_rng(11)
    for taps, stride in ((3, 2), (4, 1)):
        w = rng.uniform(-1, 1, (6, 5, taps, taps)).astype(np.float32)
        b = rng.uniform(-1, 1, (6,)).astype(np.float32)
        graph = helper.make_graph(
            [helper.make_node("Conv", ["X", "W", "b"], ["C"],
                              kernel_shape=[taps, taps],
                              strides=[stride, stride], auto_pad=auto_pad),
             helper.make_node("Relu", ["C"], ["Y"])], "same",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                           ["B", 5, 9, 10])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
        model = helper.make_model(graph,
                                  opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        path = tmp_path / f"same{taps}.onnx"
        onnx.save(model, path)
        art = tmp_path / f"same{taps}.dyncc"
        options = dict(dims={"B": (1, 3)}, targets=["cpu"], device="h200",
                       im2col="always")
        plan, _ = compile_with_plan(path, art, **options)
        assert [g["kind"] for g in plan["groups"]] == ["data_movement", "gemm"]
        sess = dyncc.load(art).session()
        pads = []
        for size in (9, 10):
            out = -(-size // stride)
            total = max(0, (out - 1) * stride + taps - size)
            low = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads.append((low, total - low))
        for batch in (1, 2, 3):
            x = rng.uniform(-1, 1, (batch, 5, 9, 10)).astype(np.float32)
            padded = np.pad(x, ((0, 0), (0, 0), pads[0], pads[1]))
            want = conv_reference(padded, w, b, stride, 0, 1)
            np.testing.assert_allclose(sess.run({"X": x})["Y"], want,
                                       rtol=1e-4, atol=1e-4)


def test_im2col_is_the_cost_models_choice(tmp_path):
    """--im2col=auto (the default) asks the cost model per conv: a 256 ->
    256 3x3 conv in f16 over 14x14 images is a copy and a GEMM on tensor
    cores, an 8 -> 4 one in f32 stays a direct conv; a conv tile config
    given keeps convs direct (it is for them), and --im2col=never does."""
    wide, narrow = tmp_path / "wide.onnx", tmp_path / "narrow.onnx"
    make_conv(wide, 256, 256, 3, 1, 1, 1, "f16", ["B", 256, 14, 14], seed=1)
    make_conv(narrow, 8, 4, 3, 1, 1, 1, "f32", ["B", 8, "S", "S"], seed=2)
    common = dict(targets=["cpu"], device="h200")

    def kinds(model, dims, **options):
        plan = json.loads(dyncc.compile(model, None, emit="plan", dims=dims,
                                        **common, **options))
        return [g["kind"] for g in plan["groups"]]

    assert kinds(wide, {"B": (1, 32)}) == ["data_movement", "gemm"]
    assert kinds(wide, {"B": (1, 32)}, im2col="never") == ["conv"]
    assert kinds(wide, {"B": (1, 32)}, tile_configs={
        "conv": "block 1x8x4x32 thread 1x2x1x4 k 8x3x3"}) == ["conv"]
    assert kinds(narrow, {"B": (1, 8), "S": (3, 64)}) == ["conv"]
    assert kinds(narrow, {"B": (1, 8), "S": (3, 64)},
                 im2col="always") == ["data_movement", "gemm"]
    # The prediction behind each choice is in the fused IR.
    fused = dyncc.compile(wide, None, emit="fused", dims={"B": (1, 32)},
                          **common)
    assert "dyncc.conv_forms = {copy = " in fused


@pytest.mark.parametrize("dtype, depth, form", [
    ("float32", 32, "torch"), ("float16", 64, "torch"),
    ("float32", 32, "tensordot"), ("float16", 64, "tensordot"),
    ("float32", 4, "tensordot"), ("float32", 8, "torch")])
def test_every_variant_of_fused_products(tmp_path, dtype, depth, form):
    """Attention's Q, K and V projections fused into one kernel of three
    products, K's root transposed: every variant the search chooses runs
    where its table picks it, and Q, K and V all match numpy. In f16 the
    variants are tensor-core ones, each product static per warp although
    its loops run over [B, S, H, D] with B and H of one per block. The
    `tensordot` form is TensorFlow's export (X flattened to [B*S, H*D], each
    product reshaped back before its bias): dyncc-unfold-gemm-rows gives its
    products the batch B, so it is searched the same way. Heads of 4 and 8
    f32 columns (the tiny BERTs') take the narrow SIMT tiles whose block N
    divides them."""
    qkv = load_input_script("make_qkv")
    make_qkv, perms = qkv.make_qkv, qkv.PERMS
    model = tmp_path / "qkv.onnx"
    heads = 2
    weights = make_qkv(model, heads, depth, seed=7, dtype=dtype, form=form)
    dims = {"B": (1, 3), "S": (1, 200)}
    options = dict(dims=dims, targets=["cpu"], regret_target=0.005)
    art = tmp_path / "qkv.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    # The tensordot form's flattening of the graph's input is a copy of its
    # own (a view of an input is not taken; see the issue note).
    groups = [g for g in plan["groups"] if g["kind"] == "gemm"]
    assert len(groups) == 1
    assert len(plan["groups"]) == (1 if form == "torch" else 2)
    group = groups[0]
    gemm = plan["groups"].index(group)
    assert group["problem"]["products"] == 3
    # Narrow heads' problems are small: one variant may be all it needs.
    assert len(group["variants"]) >= (2 if depth >= 32 else 1)
    for v in group["variants"]:
        config = plan["kernels"][v["kernel"]]["config"]
        block_n = int(config.split()[1].split("x")[-1])
        assert depth % block_n == 0, config
    # Every variant's three products are static: tensor cores (f16 only)
    # or SIMT register tiles.
    tiled = dyncc.compile(model, None, emit="tiled", **options)
    mma = tiled.count("dyncc.mma = ")
    assert mma + tiled.count("dyncc.register_tile") == \
        3 * len(group["variants"])
    assert (mma > 0) == (dtype == "float16")
    sess = dyncc.load(art).session()
    rng = np.random.default_rng(1)
    ran = set()
    outer, inner = key_points(group["select"], [3, 200])
    for b in outer:
        for s in inner:
            x = rng.uniform(-1, 1, size=(b, s, heads * depth)).astype(dtype)
            out = sess.run({"X": x})
            for name, perm in perms.items():
                w, bias = weights[name]
                ref = (x.astype(np.float64) @ w + bias).reshape(
                    b, s, heads, depth).transpose(perm)
                # f16 results: rounding to 11 bits of values up to ~20.
                tol = 1e-4 if dtype == "float32" else 2e-2
                np.testing.assert_allclose(out[name], ref, rtol=tol,
                                           atol=tol, err_msg=name)
            picked = table_variant(plan, gemm, {"B": b, "S": s})
            assert sess.variants[gemm] == picked
            ran.add(picked)
    names = variant_names(plan, [group])
    assert ran == names


@pytest.mark.parametrize("layout", ["rows", "columns"])
def test_every_variant_of_half_scores_into_f32(tmp_path, layout):
    """Attention's scores in an f16 model whose softmax runs in f32: f16
    products cast to an f32 result. Tensor-core tiles are candidates (the
    products' operands decide, not the result's type), every tensor-core
    variant's product is a static warp product (`dyncc.mma`), with K read along its
    rows (B as N x K, a transposed read) or as K x N (small-M SIMT tiles
    stay per-thread products), and every variant matches numpy where its
    table picks it."""
    make_scores = load_input_script("make_scores").make_scores
    model = tmp_path / "scores.onnx"
    heads, depth = 2, 32
    scale = make_scores(model, heads, depth, layout)
    dims = {"B": (1, 3), "S": (1, 200)}
    options = dict(dims=dims, targets=["cpu"], regret_target=0.005)
    art = tmp_path / "scores.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    assert len(plan["groups"]) == 1
    group = plan["groups"][0]
    assert group["problem"]["output_bytes"] == 4
    assert len(group["variants"]) >= 2
    configs = [plan["kernels"][v["kernel"]]["config"] for v in group["variants"]]
    warp_products = sum("mma 16x8x16" in c for c in configs)
    assert warp_products >= 1, configs
    tiled = dyncc.compile(model, None, emit="tiled", **options)
    assert tiled.count("dyncc.mma = ") == warp_products
    sess = dyncc.load(art).session()
    rng = np.random.default_rng(3)
    ran = set()
    outer, inner = key_points(group["select"], [heads * 3, 200])
    for bh in outer:
        b = -(-bh // heads)
        for s in inner:
            q = rng.uniform(-1, 1, size=(b, heads, s, depth)).astype(np.float16)
            k = rng.uniform(-1, 1, size=(b, heads, s, depth)).astype(np.float16)
            kt = k.transpose(0, 1, 3, 2)
            fed = k if layout == "rows" else np.ascontiguousarray(kt)
            out = sess.run({"Q": q, "K": fed})["Y"]
            assert out.dtype == np.float32
            # The product rounds to f16 before the cast, as the model says.
            ref = (q.astype(np.float64) @ kt.astype(np.float64))
            ref = ref.astype(np.float16).astype(np.float64) / scale
            np.testing.assert_allclose(out, ref, rtol=2e-3, atol=2e-3)
            assert sess.variants == [table_variant(plan, 0, {"B": b, "S": s})]
            ran.update(sess.variants)
    names = variant_names(plan, [group])
    assert ran == names


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_strided_pointwise_conv(tmp_path, dtype):
    """A one-pixel conv of stride 2 (ResNet's downsampling shortcut) is a
    strided slice of the image (a data-movement kernel), then a GEMM over
    the slice's pixels, every variant's product static. Against
    numpy at images of 1 pixel, odd and prime sides, and the ranges' ends,
    every variant its table picks."""
    make_pointwise_conv = load_input_script(
        "make_pointwise_conv").make_pointwise_conv
    model = tmp_path / "strided.onnx"
    w, b = make_pointwise_conv(model, 24, 40, dtype, "stride2", seed=5)
    dims = {"B": (1, 3), "H": (1, 33), "W": (1, 33)}
    options = dict(dims=dims, targets=["cpu"], device="h200")
    art = tmp_path / "strided.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    kinds = [g["kind"] for g in plan["groups"]]
    assert kinds == ["data_movement", "gemm"], kinds
    gemm = plan["groups"][1]
    tiled = dyncc.compile(model, None, emit="tiled", **options)
    assert tiled.count("dyncc.mma = ") + tiled.count("dyncc.register_tile") \
        == len(gemm["variants"])
    sess = dyncc.load(art).session()
    w64 = w.astype(np.float64)[:, :, 0, 0]
    tol = 1e-4 if dtype == "float32" else 2e-3
    rng = np.random.default_rng(9)
    ran = set()
    for batch, h, wd in [(1, 1, 1), (2, 2, 3), (3, 7, 5), (1, 13, 17),
                         (2, 33, 33), (3, 32, 31), (1, 1, 33)]:
        x = rng.uniform(-1, 1, (batch, 24, h, wd)).astype(dtype)
        got = sess.run({"X": x})["Y"]
        sub = x.astype(np.float64)[:, :, ::2, ::2]
        ref = np.einsum("fc,bchw->bfhw", w64, sub) + \
            b.astype(np.float64)[None, :, None, None]
        ref = np.maximum(ref, 0)
        assert got.shape == ref.shape, (got.shape, ref.shape)
        np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol,
                                   atol=tol * max(1, np.abs(ref).max()))
        ran.update(v for v in sess.variants if "_gemm" in v or "conv" in v)
    assert len(gemm["variants"]) >= 1 and ran


def image_of(pixels, h_max, w_max, w_div):
    """Rows and columns of an image of `pixels` pixels within the ranges,
    the columns a multiple of `w_div`, the squarest there is; None where
    there is none."""
    for h in range(int(pixels ** 0.5), 0, -1):
        if pixels % h == 0:
            w = pixels // h
            for rows, cols in ((h, w), (w, h)):
                if rows <= h_max and cols <= w_max and cols % w_div == 0:
                    return rows, cols
    return None


@pytest.mark.parametrize(
    "channels,out_channels,dtype,variant,w_div,side,groups", [
        (20, 12, "float32", "", 1, 40, 1),
        (40, 24, "float32", "residual", 1, 40, 1),
        (64, 48, "float16", "residual", 1, 40, 1),
        # Columns a multiple of 8: the image's rows of H*W halves are
        # 16-byte aligned, so the k-steps copy it in 16-byte chunks
        # (cp.async on the GPU), through the collapse of its [H, W].
        (32, 40, "float16", "", 8, 40, 1),
        # Many channels over small images (ResNet's last stage): too few
        # blocks for the SMs, so the variants split K (part and sum
        # kernels).
        (1024, 64, "float32", "residual", 1, 8, 1),
        # Grouped (ShuffleNet's 1x1s): a GEMM per image and group, the
        # batch G*B; with a residual read on the groups too, and in f16
        # (ShuffleNet's 240 -> 240 over 3 groups) on tensor cores.
        (24, 48, "float32", "residual", 1, 24, 3),
        (240, 240, "float16", "", 1, 16, 3),
        (64, 32, "float32", "", 1, 24, 8),
    ])
def test_every_variant_of_pointwise_conv(tmp_path, channels, out_channels,
                                         dtype, variant, w_div, side, groups):
    """Relu(Conv1x1(X[B, C, H, W]) (+ R)): a one-pixel conv is a GEMM of
    the [F, C] filter and each image's [C, H*W] pixels
    (dyncc-pointwise-conv-as-gemm), searched with GEMM candidates keyed on
    the batch and H*W, its products static (SIMT register tiles; tensor
    cores in f16); grouped, of each group's [F/G, C/G] filter and pixels,
    the batch B*G. At both ends of every interval and a prime inside (where
    an image within the ranges has that many pixels; else the nearest count
    the same variant takes), the run-time picks what the table says and
    every variant matches numpy."""
    make_pointwise_conv = load_input_script(
        "make_pointwise_conv").make_pointwise_conv
    model = tmp_path / "pointwise.onnx"
    w, b = make_pointwise_conv(model, channels, out_channels, dtype, variant,
                               seed=channels, groups=groups)
    h_max, w_max = side, side
    dims = {"B": (1, 3), "H": (1, h_max), "W": (w_div, w_max, w_div)}
    options = dict(dims=dims, targets=["cpu"], device="h200",
                   regret_target=0.005)
    art = tmp_path / "pointwise.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    assert len(plan["groups"]) == 1
    group = plan["groups"][0]
    assert group["kind"] == "gemm"
    split = ["then" in v for v in group["variants"]]
    assert any(split) == (channels == 1024)
    assert group["problem"]["m"] == str(out_channels // groups)
    assert group["problem"]["k"] == str(channels // groups)
    assert group["problem"]["batch"] == ("B" if groups == 1 else
                                         f"{groups}*B")
    assert len(group["variants"]) >= 2
    # Every variant's product is static: tensor cores (f16 only) or SIMT
    # register tiles (the search's SIMT candidates for f16 too).
    tiled = dyncc.compile(model, None, emit="tiled", **options)
    mma = tiled.count("dyncc.mma = ")
    assert mma + tiled.count("dyncc.register_tile") == len(group["variants"])
    assert (mma > 0) == (dtype == "float16")
    assert "dyncc.conv_problem" not in tiled
    # Chunked copies of the image's [K, pixels] tiles (vector reads of 8
    # halves, the pixels dynamic) exactly where its rows are known to be
    # aligned; the weights' [F, K] tiles (K static) in f16 always, [F, C, 1,
    # 1] being [F, C] in memory.
    import re
    # (Grouped: the weights' K of 80 is not a multiple of the k-step, so
    # their tiles are dynamic too and look like the image's here.)
    image = re.search(r"tensor<\d+x\?xf16>, vector<1x8xf16>", tiled)
    weights = re.search(r"tensor<[\d?]+x\d+xf16>, vector<1x8xf16>", tiled)
    if groups == 1:
        assert bool(image) == (w_div == 8)
        assert bool(weights) == (dtype == "float16")
    sess = dyncc.load(art).session()
    tol = 1e-4 if dtype == "float32" else 2e-3
    rng = np.random.default_rng(3)
    w64 = w.astype(np.float64)[:, :, 0, 0]
    ran = set()
    outer, inner = key_points(group["select"], [3 * groups, h_max * w_max])
    if groups > 1:
        # The key is G*B: every batch.
        outer = [1, 2, 3]
    for batch in outer:
        for pixels in inner:
            want = table_variant(plan, 0, {"B": batch, "H": pixels, "W": 1})
            image = None
            for near in sorted(range(1, h_max * w_max + 1),
                               key=lambda n: abs(n - pixels)):
                image = image_of(near, h_max, w_max, w_div)
                if image and table_variant(
                        plan, 0, {"B": batch, "H": near, "W": 1}) == want:
                    break
            rows, cols = image
            x = rng.uniform(-1, 1, (batch, channels, rows, cols)).astype(dtype)
            inputs = {"X": x}
            # Group by group: its output channels from its input channels.
            fg = out_channels // groups
            ref = np.concatenate([
                np.einsum("fc,bchw->bfhw", w64[g * fg:(g + 1) * fg],
                          x[:, g * w64.shape[1]:(g + 1) * w64.shape[1]]
                          .astype(np.float64))
                for g in range(groups)], axis=1)
            ref += b.astype(np.float64)[None, :, None, None]
            if variant == "residual":
                r = rng.uniform(-1, 1, (batch, out_channels, rows, cols))
                inputs["R"] = r.astype(dtype)
                ref += inputs["R"].astype(np.float64)
            y = sess.run(inputs)["Y"]
            np.testing.assert_allclose(
                y.astype(np.float64), np.maximum(ref, 0), rtol=tol,
                atol=tol * max(1.0, float(np.abs(ref).max())))
            assert sess.variants == [table_variant(
                plan, 0, {"B": batch, "H": rows, "W": cols})]
            ran.add(sess.variants[0])
    names = variant_names(plan, [group])
    assert ran == names


def test_one_dimensional_pointwise_conv(tmp_path):
    """A 1-D one-pixel conv (X[B, C, L]) is a GEMM over L directly: at L =
    1, a prime and the range's end, every variant the table picks matches
    numpy."""
    rng = np.random.default_rng(5)
    w = rng.uniform(-1, 1, (24, 16, 1)).astype(np.float32)
    b = rng.uniform(-1, 1, (24,)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "b"], ["Y"], kernel_shape=[1])],
        "conv1d",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["B", 16, "L"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    model = tmp_path / "conv1d.onnx"
    onnx.save(onnx_model, model)
    options = dict(dims={"B": (1, 3), "L": (1, 300)}, targets=["cpu"],
                   device="h200")
    art = tmp_path / "conv1d.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    group = plan["groups"][0]
    assert group["kind"] == "gemm" and group["problem"]["k"] == "16"
    sess = dyncc.load(art).session()
    for batch, length in [(1, 1), (2, 97), (3, 300)]:
        x = rng.uniform(-1, 1, (batch, 16, length)).astype(np.float32)
        y = sess.run({"X": x})["Y"]
        ref = np.einsum("fc,bcl->bfl", w[:, :, 0].astype(np.float64), x)
        np.testing.assert_allclose(y, ref + b[None, :, None], rtol=1e-4,
                                   atol=1e-4)
        assert sess.variants == [table_variant(plan, 0, {"B": batch,
                                                         "L": length})]


@pytest.mark.parametrize("channels,out_channels,taps,stride,pad,side,dtype", [
    (20, 16, 3, 1, 1, 9, "f32"),
    (5, 12, 5, 2, 2, 11, "f32"),
    (16, 48, 3, 1, 1, 12, "f16"),
    # K = 2304 over 5x5 images: split-K variants (part and sum kernels).
    (256, 32, 3, 1, 1, 5, "f32"),
])
def test_every_variant_of_folded_im2col_conv(tmp_path, channels, out_channels,
                                             taps, stride, pad, side, dtype):
    """Relu(Conv(X[B, C, side, side])) with --im2col=folded: the copy's
    window channels are outermost ([C*KH*KW, B, OH, OW], one kernel), one
    GEMM takes every image's pixels as its columns (N = B*OH*OW, keyed on
    that), and the relu's kernel reads the GEMM's [F, B, OH, OW] as NCHW.
    At every batch of the range the run-time picks what the table says, and
    every GEMM variant runs and matches numpy: odd and prime batches,
    images of 3x3 to 12x12 (columns off every tile), f16, split K."""
    model = tmp_path / "conv.onnx"
    w, b = make_conv(model, channels, out_channels, taps, stride, pad, 1,
                     dtype, ["B", channels, side, side],
                     seed=channels * 10 + taps)
    np_type = w.dtype
    tolerance = {"f32": 1e-4, "f16": 2e-3}[dtype]
    batches = 24
    options = dict(dims={"B": (1, batches)}, targets=["cpu"], device="h200",
                   regret_target=0.005, im2col="folded")
    art = tmp_path / "conv.dyncc"
    plan, _ = compile_with_plan(model, art, **options)
    kinds = [g["kind"] for g in plan["groups"]]
    assert kinds == ["data_movement", "gemm", "elementwise"], kinds
    group = plan["groups"][1]
    pixels = output_size(side, taps, stride, pad, 1) ** 2
    assert group["problem"]["m"] == str(out_channels)
    assert group["problem"]["k"] == str(channels * taps * taps)
    assert group["problem"]["n"] == f"{pixels}*B"
    assert group["problem"]["batch"] == "1"
    assert len(group["variants"]) >= 2
    assert any("then" in v for v in group["variants"]) == (channels == 256)
    sess = dyncc.load(art).session()
    rng = np.random.default_rng(11)
    ran = set()
    for batch in range(1, batches + 1):
        x = rng.uniform(-1, 1, (batch, channels, side, side)).astype(np_type)
        y = sess.run({"X": x})["Y"]
        assert y.dtype == np_type
        ref = conv_reference(x.astype(np.float64), w.astype(np.float64),
                             b.astype(np.float64), stride, pad, 1)
        np.testing.assert_allclose(
            y.astype(np.float64), ref, rtol=tolerance,
            atol=tolerance * max(1.0, float(np.abs(ref).max())))
        assert sess.variants[1] == table_variant(plan, 1, {"B": batch}), batch
        ran.add(sess.variants[1])
    names = variant_names(plan, [group])
    assert ran == names
