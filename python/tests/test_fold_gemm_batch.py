# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Dense layers whose weight the batch shares compute one product over the
batch's rows (dyncc-fold-gemm-batch): the recorded problem is
1 x [M B*S x K] x [K x N], and the numbers match onnxruntime at shapes where
a block's rows cross from one batch into the next (S of 1, primes, sizes
just off the tiles) with epilogues that read the output's rows (a bias, an
erf GELU, a residual) and with two leading dimensions folded. A layer whose
epilogue reads a per-batch operand keeps its batch."""
import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import dyncc
from conftest import compile_with_plan, table_variant

# The variants run where the tile search's table picks them (cpu sessions
# would otherwise select f32 GEMMs by the host model).
pytestmark = pytest.mark.usefixtures("table_selection")

F = TensorProto.FLOAT

# (B, S): 1, primes, sizes just off multiples of 2, 4, 8, 16, 32, 64.
SHAPES = [(1, 1), (2, 1), (1, 2), (3, 7), (5, 1), (1, 31), (2, 33), (7, 13),
          (4, 64), (3, 65), (8, 127), (6, 97), (1, 257)]


def _save(path, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, "dense", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


def _weights(rng, k, n):
    return [numpy_helper.from_array(
                rng.uniform(-0.5, 0.5, (k, n)).astype(np.float32), "W"),
            numpy_helper.from_array(
                rng.uniform(-1, 1, (n,)).astype(np.float32), "b")]


def gelu_case(path, rng):
    """Y = GELU(X @ W + b) with erf, X [B, S, 48], W [48, 40]."""
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Add", ["P", "b"], ["A"]),
             helper.make_node("Div", ["A", "sqrt2"], ["D"]),
             helper.make_node("Erf", ["D"], ["E"]),
             helper.make_node("Add", ["E", "one"], ["E1"]),
             helper.make_node("Mul", ["A", "E1"], ["M"]),
             helper.make_node("Mul", ["M", "half"], ["Y"])]
    scalars = [numpy_helper.from_array(np.array(v, np.float32), name)
               for name, v in (("sqrt2", np.sqrt(2)), ("one", 1.0),
                               ("half", 0.5))]
    _save(path, nodes, [helper.make_tensor_value_info("X", F, ["B", "S", 48])],
          [helper.make_tensor_value_info("Y", F, ["B", "S", 40])],
          _weights(rng, 48, 40) + scalars)
    return {"X": (48,)}


def residual_case(path, rng):
    """Y = Relu(X @ W + b) + X, X [B, S, 48], W [48, 48]."""
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Add", ["P", "b"], ["A"]),
             helper.make_node("Relu", ["A"], ["R"]),
             helper.make_node("Add", ["R", "X"], ["Y"])]
    _save(path, nodes, [helper.make_tensor_value_info("X", F, ["B", "S", 48])],
          [helper.make_tensor_value_info("Y", F, ["B", "S", 48])],
          _weights(rng, 48, 48))
    return {"X": (48,)}


def rank4_case(path, rng):
    """Y = X @ W + b with X [B, 3, S, 24]: three leading loops fold into
    one M."""
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Add", ["P", "b"], ["Y"])]
    _save(path, nodes,
          [helper.make_tensor_value_info("X", F, ["B", 3, "S", 24])],
          [helper.make_tensor_value_info("Y", F, ["B", 3, "S", 20])],
          _weights(rng, 24, 20))
    return {"X": (3, 24)}


def per_batch_case(path, rng):
    """Y = X @ W + C with C [B, 1, 24], one bias row per batch: the
    epilogue's rows are not contiguous along B*S, so the batch stays."""
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Add", ["P", "C"], ["Y"])]
    _save(path, nodes,
          [helper.make_tensor_value_info("X", F, ["B", "S", 16]),
           helper.make_tensor_value_info("C", F, ["B", 1, 24])],
          [helper.make_tensor_value_info("Y", F, ["B", "S", 24])],
          _weights(rng, 16, 24)[:1])
    return {"X": (16,), "C": "per_batch"}


def tied_case(path, rng):
    """Y = X @ E^T with E [40, 48] an embedding table (GPT-2's tied LM
    head): the weight is transposed inside the kernel, which makes B alone
    and stays as it is while the batch folds."""
    nodes = [helper.make_node("Transpose", ["E"], ["Et"], perm=[1, 0]),
             helper.make_node("MatMul", ["X", "Et"], ["Y"])]
    table = numpy_helper.from_array(
        rng.uniform(-0.5, 0.5, (40, 48)).astype(np.float32), "E")
    _save(path, nodes, [helper.make_tensor_value_info("X", F, ["B", "S", 48])],
          [helper.make_tensor_value_info("Y", F, ["B", "S", 40])], [table])
    return {"X": (48,)}


CASES = {
    "gelu": (gelu_case, "B*S"),
    "residual": (residual_case, "B*S"),
    "rank4": (rank4_case, "3*B*S"),
    "per_batch": (per_batch_case, None),
    "tied": (tied_case, "B*S"),
}


def _to_half(path, out):
    """The model at `path` with its float weights, constants, inputs and
    outputs in f16 (a dense layer as an f16 export has it)."""
    model = onnx.load(path)
    for init in model.graph.initializer:
        if init.data_type == F:
            init.CopyFrom(numpy_helper.from_array(
                numpy_helper.to_array(init).astype(np.float16), init.name))
    for value in list(model.graph.input) + list(model.graph.output):
        if value.type.tensor_type.elem_type == F:
            value.type.tensor_type.elem_type = TensorProto.FLOAT16
    onnx.save(model, out)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_folded_dense_layers_match_onnxruntime(tmp_path, name, dtype):
    """In f16 too: its f32 accumulator is sized from the f16 output
    (`tensor.dim`s in the kernel, which kept every f16 layer's batch before
    2026-11-29). The f16 layer is compared with onnxruntime's f32 one on
    the same (f16) inputs."""
    make, folded_m = CASES[name]
    rng = np.random.default_rng(len(name))
    reference = tmp_path / f"{name}.onnx"
    inputs = make(reference, rng)
    model = reference
    if dtype == "float16":
        model = tmp_path / f"{name}_f16.onnx"
        _to_half(reference, model)
    dims = {"B": (1, 8), "S": (1, 300)}
    plan, art = compile_with_plan(model, tmp_path / f"{name}.dyncc",
                                  dims=dims, targets=["cpu"])
    gemm = next(g for g in plan["groups"] if g["kind"] == "gemm")
    problem = gemm["problem"]
    if folded_m:
        assert problem["batch"] == "1" and problem["m"] == folded_m, problem
        assert gemm["select"]["keys"] == [folded_m]
    else:
        assert problem["batch"] == "B" and problem["m"] == "S", problem
    sess = dyncc.load(art).session()
    ref = ort.InferenceSession(str(reference),
                               providers=["CPUExecutionProvider"])
    ran = set()
    for b, s in SHAPES:
        feeds = {}
        for input_name, tail in inputs.items():
            if tail == "per_batch":
                shape = (b, 1, 24)
            elif len(tail) == 2:  # rank 4: [B, 3, S, K]
                shape = (b, tail[0], s, tail[1])
            else:
                shape = (b, s) + tail
            feeds[input_name] = rng.uniform(-1, 1, shape).astype(dtype)
        got = sess.run(feeds)["Y"]
        want = ref.run(None, {k: v.astype(np.float32)
                              for k, v in feeds.items()})[0]
        assert got.shape == want.shape and got.dtype == dtype, (b, s)
        # f16: weights rounded to f16, results to 11 bits.
        tol = 1e-4 if dtype == "float32" else 2e-2
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=tol,
                                   atol=tol, err_msg=f"{name} at B={b} S={s}")
        symbols = {"B": b, "S": s}
        assert sess.variants[0] == table_variant(plan, 0, symbols), symbols
        ran.add(sess.variants[0])
    # A folded layer's sweep of B*S crosses its table's intervals (f32's;
    # the f16 table of these small layers may hold one tile up to 300 rows).
    if folded_m and dtype == "float32":
        assert len(ran) >= 2, ran


def test_folded_dense_layer_compiles_for_gpus(tmp_path, bin_dir):
    """The folded kernel lowers to PTX (and through ptxas where the toolkit
    is found) for sm_80 and sm_90, with each variant's resources."""
    model = tmp_path / "gelu.onnx"
    gelu_case(model, np.random.default_rng(0))
    plan = json.loads(dyncc.compile(
        model, None, dims={"B": (1, 8), "S": (1, 300)},
        targets=["cpu", "sm_80", "sm_90"], emit="plan"))
    gemm = next(g for g in plan["groups"] if g["kind"] == "gemm")
    assert gemm["problem"]["m"] == "B*S"
    kernels = [plan["kernels"][v["kernel"]] for v in gemm["variants"]]
    assert len(kernels) >= 2
    for kernel in kernels:
        assert {"sm_80", "sm_90"} <= set(kernel["gpu"]), kernel["name"]
        assert "cpu" in kernel
