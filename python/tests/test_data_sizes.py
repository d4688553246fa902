# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Sizes read from data in the middle of a run (issue 7: "symbols bound from
data are read back by the plan and bound then"; docs/Runtime.md): the shape
operands of Reshape, Expand, Tile and ConstantOfShape as run-time inputs.
The compiler binds their elements to data-dependent symbols (`sym.bind`),
the plan reads them back after the kernels that compute them, and sizes and
places what they determine. Numbers are checked against the ONNX node
tests' outputs and numpy; bad values get one-line errors."""
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import dyncc
from conftest import SHARED_MODELS, require
from dyncc_conformance import nodes

# Node tests whose sizes come from a shape operand that is a graph input
# (Range's expanded forms are Loops: out of scope).
TESTS = [t for t in nodes.list_tests()
         if t.name.split("_")[1] in ("reshape", "expand", "tile",
                                     "constantofshape", "slice", "range")
         and not t.name.endswith("_expanded")]


@pytest.fixture(scope="module")
def ops(bin_dir):
    out = subprocess.run([bin_dir / "dyncc", "--list-ops"], capture_output=True,
                         text=True, check=True).stdout
    return set(out.split())


def test_node_tests_present():
    assert len(TESTS) >= 27, [t.name for t in TESTS]


@pytest.mark.parametrize("mode", nodes.MODES)
@pytest.mark.parametrize("test_dir", TESTS, ids=[t.name for t in TESTS])
def test_node_sizes_from_data(tmp_path, bin_dir, ops, test_dir, mode):
    # The operands that give sizes are not frozen (a Slice's axes and steps
    # are): the sizes are bound from the test's inputs at run time.
    model = onnx.load(str(test_dir / "model.onnx"))
    assert nodes.frozen_inputs(model, nodes.DATA_SIZE_OPS) < \
        nodes.frozen_inputs(model)
    outcome = nodes.run_node_test(test_dir, mode, bin_dir / "dyncc", tmp_path,
                                  ops, thaw=nodes.DATA_SIZE_OPS)
    assert outcome.category == "pass", str(outcome)


def _model(tmp_path, node, inputs, output):
    graph = helper.make_graph([node], "g", inputs, [output])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return path


@pytest.fixture
def reshape(tmp_path, bin_dir):
    """Reshape(x: f32[N, 6], shape: i64[3]), compiled with N in [1, 64]."""
    path = _model(tmp_path, helper.make_node("Reshape", ["x", "shape"], ["y"]),
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6]),
                   helper.make_tensor_value_info("shape", TensorProto.INT64, [3])],
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, None))
    out = tmp_path / "m.dyncc"
    dyncc.compile(path, out, targets=["cpu"], dims={"N": (1, 64)})
    artifact = dyncc.load(str(out))
    assert artifact.data_symbols == {f"reshape{i}": "dg.reshape 'y'"
                                     for i in range(3)}
    return artifact.session("cpu")


@pytest.mark.parametrize("n,shape,expected", [
    (4, [2, -1, 3], (2, 4, 3)),    # -1: the input's 24 elements over 6
    (4, [0, 3, 2], (4, 3, 2)),     # 0: copies the input's dimension 0
    (1, [1, 1, 6], (1, 1, 6)),
    (7, [-1, 2, 3], (7, 2, 3)),
    (64, [8, 0, -1], (8, 6, 8)),
])
def test_reshape_rules(reshape, n, shape, expected):
    x = np.random.default_rng(n).standard_normal((n, 6)).astype(np.float32)
    y = reshape.run({"x": x, "shape": np.array(shape, np.int64)})["y"]
    assert y.shape == expected
    np.testing.assert_array_equal(y, x.reshape(expected))


@pytest.mark.parametrize("shape,message", [
    ([-1, -1, 6], "element 1 of the shape read from data is -1, and so is "
                  "element 0: only one size may be inferred"),
    ([5, -1, 2], "element 1 of the shape read from data is -1, but the "
                 "input's 24 elements do not divide into the other sizes' 10"),
    ([2, -2, 6], "element 1 of the shape read from data is -2"),
    ([2, 3, 0], "element 2 of the shape read from data is 0, but the input "
                "has rank 2"),
    ([2, 3, 5], "reshape0*reshape1*reshape2 == 6*N does not hold: 30 != 24 "
                "(from the element counts of dg.reshape 'y')"),
])
def test_reshape_bad_sizes(reshape, shape, message):
    x = np.ones((4, 6), np.float32)
    with pytest.raises(dyncc.DynccError) as error:
        reshape.run({"x": x, "shape": np.array(shape, np.int64)})
    text = str(error.value)
    assert "\n" not in text
    assert message in text, text


def test_expand_broadcast_ones(tmp_path):
    """Expand's 1 keeps the input's dimension; any other size must agree."""
    path = _model(tmp_path, helper.make_node("Expand", ["x", "shape"], ["y"]),
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1]),
                   helper.make_tensor_value_info("shape", TensorProto.INT64, [3])],
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, None))
    out = tmp_path / "m.dyncc"
    dyncc.compile(path, out, targets=["cpu"])
    session = dyncc.load(str(out)).session("cpu")
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    for shape in ([2, 1, 5], [1, 3, 1], [4, 3, 7]):
        y = session.run({"x": x, "shape": np.array(shape, np.int64)})["y"]
        np.testing.assert_array_equal(y, x * np.ones(shape, np.float32))
    with pytest.raises(dyncc.DynccError, match="element 1 .* is 2, expected 3"):
        session.run({"x": x, "shape": np.array([1, 2, 1], np.int64)})


def test_sizes_grow_the_arena_mid_run(tmp_path):
    """Tile's repeats size a temporary after the run started: the arena is
    placed again around the temporaries already written, grows, and stays
    within 1.25 x the live-set peak."""
    nodes_ = [helper.make_node("Tile", ["x", "repeats"], ["t"]),
              helper.make_node("Exp", ["t"], ["e"]),
              helper.make_node("Add", ["e", "t"], ["y"])]
    graph = helper.make_graph(
        nodes_, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 5]),
         helper.make_tensor_value_info("repeats", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(path))
    out = tmp_path / "m.dyncc"
    dyncc.compile(path, out, targets=["cpu"], dims={"N": (1, 32)})
    session = dyncc.load(str(out)).session("cpu")
    rng = np.random.default_rng(0)
    for n, repeats in ((1, [1, 1]), (3, [2, 7]), (31, [13, 3]), (2, [1, 2])):
        x = rng.standard_normal((n, 5)).astype(np.float32)
        y = session.run({"x": x, "repeats": np.array(repeats, np.int64)})["y"]
        t = np.tile(x, repeats)
        np.testing.assert_allclose(y, np.exp(t) + t, rtol=1e-5, atol=1e-6)
        memory = session.memory()
        assert memory["arena_bytes"] <= 1.25 * memory["live_peak_bytes"], memory


def _onnx_slice(start, end, step, dim):
    """The indices ONNX's Slice reads along one axis: a negative start or
    end counts from the end; then both are clamped to [0, dim] for a
    positive step, the start to [0, dim - 1] and the end to [-1, dim - 1]
    for a negative one."""
    start, end = start + dim if start < 0 else start, end + dim if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return np.arange(start, end, step, dtype=np.int64)


SLICE_CASES = [  # (input dims, axes, steps)
    ([10], None, None), ([11], [0], [2]), ([9], [0], [-1]), ([10], [0], [-3]),
    (["N", 7], [1, 0], [1, -2]), ([4, "N", 3], [-2], [3]),
]


@pytest.mark.parametrize("dims,axes,steps", SLICE_CASES,
                         ids=[f"case{i}" for i in range(len(SLICE_CASES))])
def test_slice_lengths_computed_and_bound(tmp_path, dims, axes, steps):
    """A Slice whose starts and ends are inputs: each sliced length is
    computed with ONNX's clamping by a kernel ahead of it and bound, and the
    Slice writes exactly that: against the spec's rule written out below, on
    random starts and ends in [-14, 14) and the extremes INT64_MAX and
    INT64_MIN. (Neither reference follows the spec everywhere: the ONNX
    reference evaluator slices like numpy, which for a negative step sends
    a start before the beginning to an empty result where the spec clamps
    it to 0; onnxruntime slices an end of INT64_MAX with a negative step
    to the start, where the spec clamps it to the last element.)"""
    count = len(axes) if axes else 1
    inits, names = [], ["x", "s", "e"]
    if axes or steps:
        inits.append(helper.make_tensor("axes", TensorProto.INT64, [count],
                                        axes or list(range(count))))
        names.append("axes")
    if steps:
        inits.append(helper.make_tensor("steps", TensorProto.INT64, [count], steps))
        names.append("steps")
    graph = helper.make_graph(
        [helper.make_node("Slice", names, ["y"])], "slice",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims),
         helper.make_tensor_value_info("s", TensorProto.INT64, [count]),
         helper.make_tensor_value_info("e", TensorProto.INT64, [count])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "slice.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "m.dyncc"
    dyncc.compile(path, out, targets=["cpu"],
                  dims={"N": (1, 16)} if "N" in dims else None)
    art = dyncc.load(str(out))
    assert set(art.data_symbols.values()) == {"dg.slice 'y'"}, art.data_symbols
    session = art.session("cpu")
    rng = np.random.default_rng(len(dims) * 10 + count)
    extremes = [np.iinfo(np.int64).max, np.iinfo(np.int64).min]
    for trial in range(30):
        shape = [d if isinstance(d, int) else int(rng.integers(1, 17)) for d in dims]
        x = rng.standard_normal(shape).astype(np.float32)
        starts = rng.integers(-14, 14, count)
        ends = rng.integers(-14, 14, count)
        if trial < 4:
            starts[0] = extremes[trial % 2] if trial >= 2 else starts[0]
            ends[0] = extremes[trial % 2]
        want = x
        for i in range(count):
            axis = (axes[i] if axes else i) % len(shape)
            want = np.take(want, _onnx_slice(int(starts[i]), int(ends[i]),
                                             steps[i] if steps else 1,
                                             shape[axis]), axis=axis)
        y = session.run({"x": x, "s": starts.astype(np.int64),
                         "e": ends.astype(np.int64)})["y"]
        assert y.shape == want.shape, (shape, starts, ends, y.shape, want.shape)
        np.testing.assert_array_equal(y, want)


RANGE_CASES = [(0, 10, 3), (10, 0, -3), (0, 9, 3), (5, 5, 1), (3, 1, 1),
               (-7, 8, 5), (-3, 7, 2), (2, 3, 7), (0, 1000, 1), (1000, -1000, -7)]


@pytest.mark.parametrize("dtype", [TensorProto.INT64, TensorProto.INT32,
                                   TensorProto.FLOAT], ids=["int64", "int32", "float"])
def test_range_length_computed_and_bound(tmp_path, dtype):
    """A Range whose bounds are inputs: its length, max(ceil((limit - start)
    / delta), 0), is computed by a kernel ahead of it and bound, and the
    Range then writes exactly that many values: against np.arange, empty
    results included, and for floats fractional deltas."""
    np_type = {TensorProto.INT64: np.int64, TensorProto.INT32: np.int32,
               TensorProto.FLOAT: np.float32}[dtype]
    path = _model(tmp_path, helper.make_node("Range", ["a", "b", "c"], ["y"]),
                  [helper.make_tensor_value_info(n, dtype, []) for n in "abc"],
                  helper.make_tensor_value_info("y", dtype, None))
    out = tmp_path / "m.dyncc"
    dyncc.compile(path, out, targets=["cpu"])
    art = dyncc.load(str(out))
    assert list(art.data_symbols.values()) == ["dg.range 'y'"], art.data_symbols
    session = art.session("cpu")
    cases = RANGE_CASES + ([(1, 2, 0.5), (0, 1, 0.3), (2.5, -1, -0.75)]
                           if dtype == TensorProto.FLOAT else [])
    for a, b, c in cases:
        y = session.run({"a": np.array(a, np_type), "b": np.array(b, np_type),
                         "c": np.array(c, np_type)})["y"]
        np.testing.assert_array_equal(y, np.arange(a, b, c, dtype=np_type),
                                      err_msg=str((a, b, c)))


@pytest.mark.parametrize("dtype,dims", [
    (TensorProto.FLOAT, ["N", 7]),
    (TensorProto.INT32, ["N"]),
    (TensorProto.BOOL, ["N", 3, 5]),
])
def test_nonzero_count_bound_from_data(tmp_path, dtype, dims):
    """NonZero's count is computed by a reduction, bound, and the scan then
    writes a result of exactly that size; all zero, none zero and random
    inputs at sizes 1, primes and a large one match numpy."""
    path = _model(tmp_path, helper.make_node("NonZero", ["x"], ["y"]),
                  [helper.make_tensor_value_info("x", dtype, dims)],
                  helper.make_tensor_value_info("y", TensorProto.INT64, None))
    out = tmp_path / "m.dyncc"
    dyncc.compile(path, out, targets=["cpu"], dims={"N": (1, 300)})
    artifact = dyncc.load(str(out))
    assert artifact.data_symbols == {"nonzero0": "dg.nonzero 'y'"}
    session = artifact.session("cpu")
    numpy_type = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    rng = np.random.default_rng(dtype)
    for n in (1, 2, 13, 31, 300):
        shape = [n if d == "N" else d for d in dims]
        values = rng.standard_normal(shape) * (rng.random(shape) < 0.4)
        for x in (values, np.zeros(shape), np.ones(shape)):
            x = x.astype(numpy_type)
            y = session.run({"x": x})["y"]
            np.testing.assert_array_equal(y, np.array(np.nonzero(x), np.int64))


def test_shared_model_sizes_that_give_each_other(tmp_path, bin_dir):
    """shape_constantofshape_chain reshapes a fill of a*b elements to
    [1, a, b] read from its input, and the fill's size is the product of
    the very sizes the reshape reads: a -1 there cannot be inferred (its
    input's size is what it would give), which is one line. `dyncc bench`
    refuses --dim on those symbols: they are not input dimensions."""
    model = SHARED_MODELS / "shape_constantofshape_chain_pt16_opset9.onnx"
    require(model.exists(), f"{model} is missing")
    out = tmp_path / "m.dyncc"
    dyncc.compile(model, out, targets=["cpu"])
    session = dyncc.load(str(out)).session("cpu")
    y = session.run({"shape": np.array([3, 5], np.int64)})["output"]
    np.testing.assert_array_equal(y, np.zeros((1, 3, 5), np.float32))
    with pytest.raises(dyncc.DynccError) as error:
        session.run({"shape": np.array([-1, 3], np.int64)})
    assert str(error.value) == (
        "dg.reshape 'Reshape_15': the shape read from data has a 0 or -1, "
        "which needs the input's sizes, but they are sizes this shape gives")
    proc = subprocess.run([bin_dir / "dyncc", "bench", out, "--dim",
                           "reshape1=3"], capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "dyncc: error: --dim reshape1: the symbol is a size read from data by "
        "dg.reshape 'Reshape_15', not an input dimension"]
