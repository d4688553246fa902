# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""CPU numerics of code generation, per kernel kind and per tile variant.

Each case is a small ONNX model exercising one kind of kernel (GEMM, batched
GEMM, conv, pooling, gather, concat/slice, pad, transpose, row and column
reductions, broadcast elementwise). Each is compiled for the CPU target with
the default tile configuration and with other configurations the tile search
can emit (odd block tiles, one thread, k-steps of 1 and primes), through
`--tile-config`. Every variant runs at 10 or more shape bindings, including
1, primes and sizes just below and above multiples of every tile level, on
random data, against onnxruntime.

The CPU target runs the same per-block entry points over the same grid the
GPU launches, so the block arithmetic and every masked tail are exercised.
"""
import re
import tempfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import dyncc
from conftest import compile_with_plan, manifest_values

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "kind", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def _const(name, rng, shape, scale=1.0):
    return numpy_helper.from_array(
        rng.uniform(-scale, scale, size=shape).astype(np.float32), name)


# Shape bindings: 1, primes, and sizes just off multiples of the default
# tiles (4, 32, 64, 128) and of the alternative ones (3, 5, 8, 16, 24) and
# k-steps (1, 5, 7, 16, 64).
# Images [N, C, H, W]: 3x3 windows at stride 1 and 2 need H, W >= 3.
IMAGE_SHAPES = [dict(N=n, H=h, W=w) for n, h, w in [
    (1, 3, 3), (1, 4, 7), (2, 5, 5), (1, 17, 13), (3, 8, 9),
    (1, 31, 6), (2, 3, 33), (1, 16, 16), (1, 11, 29), (2, 7, 4)]]


def gemm_case():
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Add", ["P", "b"], ["S"]),
             helper.make_node("Relu", ["S"], ["Y"])]
    model = _model(nodes, [_vi("X", F, ["M", "K"]), _vi("W", F, ["K", "N"]),
                           _vi("b", F, ["N"])], [_vi("Y", F, ["M", "N"])])
    shapes = [dict(M=m, K=k, N=n) for m, k, n in [
        (1, 1, 1), (2, 3, 5), (7, 13, 11), (31, 16, 63), (32, 17, 64),
        (33, 15, 65), (1, 100, 3), (64, 64, 129), (97, 31, 1), (5, 257, 17),
        (65, 7, 127)]]

    def feeds(s, rng):
        return {"X": rng.uniform(-1, 1, (s["M"], s["K"])),
                "W": rng.uniform(-1, 1, (s["K"], s["N"])),
                "b": rng.uniform(-1, 1, (s["N"],))}
    return model, shapes, feeds


def batched_gemm_case():
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Mul", ["P", "s"], ["Y"])]
    model = _model(nodes, [_vi("X", F, ["B", "M", "K"]),
                           _vi("W", F, ["B", "K", 24]), _vi("s", F, [24])],
                   [_vi("Y", F, ["B", "M", 24])])
    shapes = [dict(B=b, M=m, K=k) for b, m, k in [
        (1, 1, 1), (2, 7, 3), (3, 31, 16), (1, 33, 17), (5, 1, 64),
        (2, 65, 5), (7, 2, 29), (1, 96, 11), (4, 13, 33), (3, 64, 1)]]

    def feeds(s, rng):
        return {"X": rng.uniform(-1, 1, (s["B"], s["M"], s["K"])),
                "W": rng.uniform(-1, 1, (s["B"], s["K"], 24)),
                "s": rng.uniform(-2, 2, (24,))}
    return model, shapes, feeds


def attention_scores_case():
    """Q K^T of heads split by Reshape and Transpose (as exported
    attention is), the scores times V with the heads merged back, and a
    classifier-style Gemm with transB: the input transposes fold into the
    products' maps, so they read kernel arguments (a transposed B in the
    register tile), and the head merge's block tile is the product's."""
    heads, head = 2, 3
    shape = helper.make_tensor("shp", I64, [4], [0, 0, heads, head])
    nodes = [helper.make_node("Reshape", ["Q", "shp"], ["q4"]),
             helper.make_node("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["K", "shp"], ["k4"]),
             helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("MatMul", ["qt", "kt"], ["Y"]),
             # The scores times V, heads merged back: the product's
             # [B, H, S, D] transposed to [B, S, H, D] and flattened.
             helper.make_node("Reshape", ["Vh", "shp"], ["v4"]),
             helper.make_node("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
             helper.make_node("MatMul", ["Y", "vt"], ["pv"]),
             helper.make_node("Transpose", ["pv"], ["pvt"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["pvt", "merged"], ["O"]),
             helper.make_node("Gemm", ["G", "V"], ["Z"], transB=1)]
    merged = helper.make_tensor("merged", I64, [3], [0, 0, heads * head])
    model = _model(nodes, [_vi("Q", F, ["B", "S", heads * head]),
                           _vi("K", F, ["B", "S", heads * head]),
                           _vi("Vh", F, ["B", "S", heads * head]),
                           _vi("G", F, ["M", "K"]), _vi("V", F, [5, "K"])],
                   [_vi("Y", F, ["B", heads, "S", "S"]), _vi("Z", F, ["M", 5]),
                    _vi("O", F, ["B", "S", heads * head])],
                   inits=[shape, merged])
    shapes = [dict(B=b, S=s, M=m, K=k) for b, s, m, k in [
        (1, 1, 1, 1), (2, 3, 2, 3), (1, 7, 31, 16), (3, 33, 33, 17),
        (1, 65, 5, 64), (2, 31, 64, 5), (1, 64, 97, 29), (2, 13, 1, 65)]] + [
        dict(B=1, S=96, M=129, K=11), dict(B=4, S=2, M=7, K=1)]

    def feeds(s, rng):
        return {"Q": rng.uniform(-1, 1, (s["B"], s["S"], heads * head)),
                "K": rng.uniform(-1, 1, (s["B"], s["S"], heads * head)),
                "Vh": rng.uniform(-1, 1, (s["B"], s["S"], heads * head)),
                "G": rng.uniform(-1, 1, (s["M"], s["K"])),
                "V": rng.uniform(-1, 1, (5, s["K"]))}
    return model, shapes, feeds


def conv_case():
    rng = np.random.default_rng(7)
    nodes = [
        helper.make_node("Conv", ["X", "W1", "b1"], ["C1"], pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["C1"], ["R1"]),
        helper.make_node("Conv", ["R1", "W2"], ["Y"], strides=[2, 2],
                         kernel_shape=[3, 3], pads=[0, 1, 0, 1]),
    ]
    model = _model(nodes, [_vi("X", F, ["N", 3, "H", "W"])],
                   [_vi("Y", F, ["N", 5, "OH", "OW"])],
                   [_const("W1", rng, (6, 3, 3, 3)), _const("b1", rng, (6,)),
                    _const("W2", rng, (5, 6, 3, 3))])
    shapes = IMAGE_SHAPES

    def feeds(s, rng):
        return {"X": rng.uniform(-1, 1, (s["N"], 3, s["H"], s["W"]))}
    return model, shapes, feeds


def unit_batch_conv_case():
    """A batch of 1 fixed in the model (the light_* CNNs): tiling drops the
    unit dimension of the conv, not of its Relu, and the reshapes that leave
    between them must not stop the conv fusing into the Relu's tiles. Then a
    grouped 1x1 conv with its Relu."""
    rng = np.random.default_rng(11)
    nodes = [
        helper.make_node("Conv", ["X", "W1", "b1"], ["C1"], pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["C1"], ["R1"]),
        helper.make_node("Conv", ["R1", "W2", "b2"], ["C2"], group=4,
                         kernel_shape=[1, 1]),
        helper.make_node("Relu", ["C2"], ["Y"]),
    ]
    model = _model(nodes, [_vi("X", F, [1, 3, "H", "W"])],
                   [_vi("Y", F, [1, 8, "H", "W"])],
                   [_const("W1", rng, (8, 3, 3, 3)), _const("b1", rng, (8,)),
                    _const("W2", rng, (8, 2, 1, 1)), _const("b2", rng, (8,))])
    shapes = [dict(H=s["H"], W=s["W"]) for s in IMAGE_SHAPES]

    def feeds(s, rng):
        return {"X": rng.uniform(-1, 1, (1, 3, s["H"], s["W"]))}
    return model, shapes, feeds


def channel_shuffle_model(height, width):
    """ShuffleNet's unit at a static image size, as the light_* models have
    it: a grouped 1x1 conv, Relu and a channel shuffle (Reshape, Transpose,
    Reshape), all fused into one conv kernel whose reshapes tiling must see
    through. Random weights, so a wrong channel order shows."""
    rng = np.random.default_rng(13)
    split = numpy_helper.from_array(
        np.array([1, 4, 2, height, width], np.int64), "split")
    merge = numpy_helper.from_array(
        np.array([1, 8, height, width], np.int64), "merge")
    nodes = [
        helper.make_node("Conv", ["X", "W", "b"], ["C"], group=4,
                         kernel_shape=[1, 1]),
        helper.make_node("Relu", ["C"], ["R"]),
        helper.make_node("Reshape", ["R", "split"], ["G"]),
        helper.make_node("Transpose", ["G"], ["T"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["T", "merge"], ["Y"]),
    ]
    return _model(nodes, [_vi("X", F, [1, 8, height, width])],
                  [_vi("Y", F, [1, 8, height, width])],
                  [_const("W", rng, (8, 2, 1, 1)), _const("b", rng, (8,)),
                   split, merge])


def pool_case():
    nodes = [
        helper.make_node("MaxPool", ["X"], ["P"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["X"], ["Q"], kernel_shape=[2, 3],
                         strides=[1, 2]),
    ]
    model = _model(nodes, [_vi("X", F, ["N", 4, "H", "W"])],
                   [_vi("P", F, ["N", 4, "PH", "PW"]), _vi("Q", F, ["N", 4, "QH", "QW"])])
    shapes = IMAGE_SHAPES

    def feeds(s, rng):
        return {"X": rng.uniform(-1, 1, (s["N"], 4, s["H"], s["W"]))}
    return model, shapes, feeds


def gather_case():
    rng = np.random.default_rng(3)
    nodes = [helper.make_node("Gather", ["E", "ids"], ["G"]),
             helper.make_node("Add", ["G", "pos"], ["Y"])]
    model = _model(nodes, [_vi("ids", I64, ["B", "L"]), _vi("pos", F, ["L", 12])],
                   [_vi("Y", F, ["B", "L", 12])], [_const("E", rng, (50, 12))])
    shapes = [dict(B=b, L=l) for b, l in [
        (1, 1), (2, 3), (1, 7), (3, 31), (1, 33), (5, 64), (2, 65),
        (1, 127), (7, 2), (4, 129)]]

    def feeds(s, rng):
        return {"ids": rng.integers(0, 50, (s["B"], s["L"])),
                "pos": rng.uniform(-1, 1, (s["L"], 12))}
    return model, shapes, feeds


def arange_case():
    """Position ids as older exporters write arange: NonZero of a
    ConstantOfShape of ones, transposed and squeezed, then a position
    embedding gathered with them (the NonZero becomes a Range)."""
    rng = np.random.default_rng(4)
    one = numpy_helper.from_array(np.array(1, dtype=np.int64), "one")
    axes0 = numpy_helper.from_array(np.array([0], dtype=np.int64), "axes0")
    axes1 = numpy_helper.from_array(np.array([1], dtype=np.int64), "axes1")
    nodes = [
        helper.make_node("Shape", ["ids"], ["shape"]),
        helper.make_node("Gather", ["shape", "one"], ["len"]),
        helper.make_node("Unsqueeze", ["len", "axes0"], ["len1"]),
        helper.make_node("ConstantOfShape", ["len1"], ["ones"],
                         value=numpy_helper.from_array(np.array([1], dtype=np.int64))),
        helper.make_node("NonZero", ["ones"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["nzt"], perm=[1, 0]),
        helper.make_node("Squeeze", ["nzt", "axes1"], ["pos"]),
        helper.make_node("Gather", ["P", "pos"], ["PE"]),
        helper.make_node("Gather", ["E", "ids"], ["G"]),
        helper.make_node("Add", ["G", "PE"], ["Y"])]
    model = _model(nodes, [_vi("ids", I64, ["B", "L"])],
                   [_vi("Y", F, ["B", "L", 12]), _vi("pos", I64, ["L"])],
                   [_const("E", rng, (50, 12)), _const("P", rng, (520, 12)),
                    one, axes0, axes1])
    shapes = [dict(B=b, L=l) for b, l in [
        (1, 1), (2, 3), (1, 7), (3, 31), (1, 33), (5, 64), (2, 65),
        (1, 127), (7, 2), (4, 129)]]

    def feeds(s, rng):
        return {"ids": rng.integers(0, 50, (s["B"], s["L"]))}
    return model, shapes, feeds


def identity_cast_case():
    """Kernels that are their input as it is: a Cast of a bool to bool after
    an Expand (DistilBERT's attention mask) and a Cast of f32 to f32. The
    Cast folds away; the kernel must still write its output."""
    nodes = [
        helper.make_node("Equal", ["ids", "zero"], ["eq"]),
        helper.make_node("Unsqueeze", ["eq", "axes"], ["eq3"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Expand", ["eq3", "shape"], ["wide"]),
        helper.make_node("Cast", ["wide"], ["mask"], to=TensorProto.BOOL),
        helper.make_node("Where", ["mask", "x", "neg"], ["W"]),
        helper.make_node("Cast", ["x"], ["X"], to=F)]
    model = _model(nodes, [_vi("ids", I64, ["B", "L"]), _vi("x", F, ["B", 3, "L"])],
                   [_vi("mask", TensorProto.BOOL, ["B", 3, "L"]),
                    _vi("W", F, ["B", 3, "L"]), _vi("X", F, ["B", 3, "L"])],
                   [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
                    numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
                    numpy_helper.from_array(np.array(-7.0, dtype=np.float32), "neg")])
    shapes = [dict(B=b, L=l) for b, l in [
        (1, 1), (2, 3), (1, 7), (3, 31), (1, 33), (5, 64), (2, 65),
        (1, 127), (7, 2), (4, 129)]]

    def feeds(s, rng):
        return {"ids": rng.integers(0, 2, (s["B"], s["L"])),
                "x": rng.uniform(-1, 1, (s["B"], 3, s["L"]))}
    return model, shapes, feeds


def concat_slice_case():
    axes = numpy_helper.from_array(np.array([1, 2], np.int64), "axes")
    starts = numpy_helper.from_array(np.array([1, 2], np.int64), "starts")
    ends = numpy_helper.from_array(np.array([1 << 30, 11], np.int64), "ends")
    steps = numpy_helper.from_array(np.array([1, 2], np.int64), "steps")
    nodes = [helper.make_node("Concat", ["A", "C"], ["K"], axis=2),
             helper.make_node("Slice", ["K", "starts", "ends", "axes", "steps"],
                              ["S"]),
             helper.make_node("Neg", ["S"], ["Y"])]
    model = _model(nodes, [_vi("A", F, ["B", "L", 8]), _vi("C", F, ["B", "L", 5])],
                   [_vi("Y", F, ["B", "L1", 6])], [axes, starts, ends, steps])
    shapes = [dict(B=b, L=l) for b, l in [
        (1, 2), (2, 3), (1, 7), (3, 31), (1, 33), (5, 64), (2, 65),
        (1, 128), (7, 6), (4, 130)]]

    def feeds(s, rng):
        return {"A": rng.uniform(-1, 1, (s["B"], s["L"], 8)),
                "C": rng.uniform(-1, 1, (s["B"], s["L"], 5))}
    return model, shapes, feeds


def pad_transpose_case():
    pads = numpy_helper.from_array(np.array([0, 2, 1, 0, 1, 3], np.int64), "pads")
    value = numpy_helper.from_array(np.array(0.5, np.float32), "value")
    nodes = [helper.make_node("Pad", ["X", "pads", "value"], ["P"]),
             helper.make_node("Transpose", ["P"], ["Y"], perm=[0, 2, 1])]
    model = _model(nodes, [_vi("X", F, ["B", "L", "D"])], [_vi("Y", F, ["B", "D2", "L2"])],
                   [pads, value])
    shapes = [dict(B=b, L=l, D=d) for b, l, d in [
        (1, 1, 1), (2, 3, 5), (1, 7, 13), (3, 31, 4), (1, 33, 127),
        (2, 64, 3), (1, 65, 129), (4, 2, 61), (1, 127, 17), (2, 5, 128)]]

    def feeds(s, rng):
        return {"X": rng.uniform(-1, 1, (s["B"], s["L"], s["D"]))}
    return model, shapes, feeds


def row_reduce_case():
    nodes = [helper.make_node("Softmax", ["X"], ["Y"], axis=-1),
             helper.make_node("LayerNormalization", ["X", "g", "beta"], ["Z"],
                              axis=-1, epsilon=1e-5)]
    model = _model(nodes, [_vi("X", F, ["B", "L", "D"]), _vi("g", F, ["D"]),
                           _vi("beta", F, ["D"])],
                   [_vi("Y", F, ["B", "L", "D"]), _vi("Z", F, ["B", "L", "D"])])
    shapes = [dict(B=b, L=l, D=d) for b, l, d in [
        (1, 1, 1), (2, 3, 5), (1, 7, 13), (3, 31, 64), (1, 5, 65),
        (2, 4, 63), (1, 9, 129), (4, 2, 127), (1, 3, 300), (2, 5, 2)]]

    def feeds(s, rng):
        return {"X": rng.uniform(-3, 3, (s["B"], s["L"], s["D"])),
                "g": rng.uniform(0.5, 1.5, (s["D"],)),
                "beta": rng.uniform(-1, 1, (s["D"],))}
    return model, shapes, feeds


def row_root_case():
    # Reductions over the last axis as the kernels' results (keepdims 0 and
    # 1), and one with an epilogue on the reduced shape (ReduceMean: a sum,
    # then a division), which keeps the tile levels.
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    nodes = [helper.make_node("ReduceSum", ["X", "axes"], ["S"], keepdims=1),
             helper.make_node("Abs", ["X"], ["A"]),
             helper.make_node("ReduceMax", ["A"], ["M"], axes=[2], keepdims=0),
             helper.make_node("ReduceMean", ["X"], ["E"], axes=[-1], keepdims=0)]
    model = _model(nodes, [_vi("X", F, ["B", "L", "D"])],
                   [_vi("S", F, ["B", "L", 1]), _vi("M", F, ["B", "L"]),
                    _vi("E", F, ["B", "L"])], [axes])
    shapes = [dict(B=b, L=l, D=d) for b, l, d in [
        (1, 1, 1), (2, 3, 5), (1, 7, 13), (3, 31, 64), (1, 5, 65),
        (2, 4, 63), (1, 9, 129), (4, 2, 127), (1, 3, 300), (2, 5, 33)]]

    def feeds(s, rng):
        return {"X": rng.uniform(-3, 3, (s["B"], s["L"], s["D"]))}
    return model, shapes, feeds


def multi_axis_row_case():
    # Reductions over several trailing axes, which dyncc-collapse-row-dims
    # computes as rows: an instance norm written out over a ReLU's [H, W]
    # (dynamic; its variance reduces an intermediate), an
    # InstanceNormalization over another input's, a max over [H, W] as the
    # kernel's result, and a LayerNormalization over [4, 8] (static).
    nodes = [helper.make_node("Relu", ["X"], ["R"]),
             helper.make_node("ReduceMean", ["R"], ["M"], axes=[2, 3]),
             helper.make_node("Sub", ["R", "M"], ["D"]),
             helper.make_node("Mul", ["D", "D"], ["D2"]),
             helper.make_node("ReduceMean", ["D2"], ["V"], axes=[2, 3]),
             helper.make_node("Add", ["V", "eps"], ["Ve"]),
             helper.make_node("Sqrt", ["Ve"], ["Sd"]),
             helper.make_node("Div", ["D", "Sd"], ["Nrm"]),
             helper.make_node("Mul", ["Nrm", "s"], ["Sc"]),
             helper.make_node("Add", ["Sc", "b"], ["Y"]),
             helper.make_node("Abs", ["X"], ["A"]),
             helper.make_node("ReduceMax", ["A"], ["P"], axes=[2, 3],
                              keepdims=0),
             helper.make_node("InstanceNormalization", ["A", "s3", "b3"],
                              ["I"], epsilon=1e-3),
             helper.make_node("Neg", ["T"], ["Tn"]),
             helper.make_node("LayerNormalization", ["Tn", "g", "beta"], ["Z"],
                              axis=-2, epsilon=1e-5)]
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             _const("s", rng, (3, 1, 1)), _const("b", rng, (3, 1, 1)),
             _const("g", rng, (4, 8)), _const("beta", rng, (4, 8)),
             _const("s3", rng, (3,)), _const("b3", rng, (3,))]
    model = _model(nodes, [_vi("X", F, ["N", 3, "H", "W"]),
                           _vi("T", F, ["B", "L", 4, 8])],
                   [_vi("Y", F, ["N", 3, "H", "W"]), _vi("P", F, ["N", 3]),
                    _vi("I", F, ["N", 3, "H", "W"]),
                    _vi("Z", F, ["B", "L", 4, 8])], inits)
    shapes = [dict(N=n, H=h, W=w, B=b, L=l) for n, h, w, b, l in [
        (1, 1, 1, 1, 1), (2, 1, 5, 3, 7), (1, 7, 13, 1, 31), (3, 8, 9, 2, 5),
        (1, 31, 6, 4, 2), (2, 3, 33, 1, 65), (1, 16, 16, 2, 33),
        (1, 11, 29, 5, 3), (2, 7, 4, 1, 129), (1, 9, 65, 3, 1)]]

    def feeds(s, rng):
        return {"X": rng.uniform(-3, 3, (s["N"], 3, s["H"], s["W"])),
                "T": rng.uniform(-3, 3, (s["B"], s["L"], 4, 8))}
    return model, shapes, feeds


def int_row_case():
    # Integer row reductions: exact, whatever order the lanes combine in.
    axes = numpy_helper.from_array(np.array([-1], np.int64), "axes")
    nodes = [helper.make_node("ReduceSum", ["X", "axes"], ["S"], keepdims=0),
             helper.make_node("ReduceMax", ["X"], ["M"], axes=[-1], keepdims=1),
             helper.make_node("ReduceMin", ["X"], ["N"], axes=[-1], keepdims=0)]
    model = _model(nodes, [_vi("X", TensorProto.INT32, ["B", "D"])],
                   [_vi("S", TensorProto.INT32, ["B"]),
                    _vi("M", TensorProto.INT32, ["B", 1]),
                    _vi("N", TensorProto.INT32, ["B"])], [axes])
    shapes = [dict(B=b, D=d) for b, d in [
        (1, 1), (2, 5), (7, 13), (3, 64), (5, 65), (4, 63), (9, 129),
        (2, 127), (3, 300), (5, 33)]]

    def feeds(s, rng):
        return {"X": rng.integers(-1000, 1000, (s["B"], s["D"])).astype(np.int32)}
    return model, shapes, feeds


def column_reduce_case():
    # Reductions over an outer axis (column reductions, each thread walking
    # its columns): a sum over the first axis, a max over the second (kept),
    # a mean over a sequence's positions, a softmax over the channels of an
    # image (opset 13) and a channels-first LayerNorm written out
    # (ConvNeXt's), whose results span the reduced axis.
    axis0 = numpy_helper.from_array(np.array([0], np.int64), "axis0")
    rng = np.random.default_rng(11)
    nodes = [helper.make_node("ReduceSum", ["X", "axis0"], ["S"], keepdims=0),
             helper.make_node("ReduceMax", ["T"], ["Y"], axes=[1], keepdims=1),
             helper.make_node("ReduceMean", ["E"], ["P"], axes=[1], keepdims=0),
             helper.make_node("Softmax", ["U"], ["Q"], axis=1),
             helper.make_node("ReduceMean", ["V"], ["Vm"], axes=[1]),
             helper.make_node("Sub", ["V", "Vm"], ["Vd"]),
             helper.make_node("Mul", ["Vd", "Vd"], ["Vd2"]),
             helper.make_node("ReduceMean", ["Vd2"], ["Vv"], axes=[1]),
             helper.make_node("Add", ["Vv", "eps"], ["Ve"]),
             helper.make_node("Sqrt", ["Ve"], ["Vs"]),
             helper.make_node("Div", ["Vd", "Vs"], ["Vn"]),
             helper.make_node("Mul", ["Vn", "g"], ["Vg"]),
             helper.make_node("Add", ["Vg", "beta"], ["Z"])]
    inits = [axis0, numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
             _const("g", rng, (3, 1, 1)), _const("beta", rng, (3, 1, 1))]
    model = _model(nodes, [_vi("X", F, ["M", "N"]), _vi("T", F, ["B", "L", "D"]),
                           _vi("E", F, ["B", "L", "D"]),
                           _vi("U", F, ["B", 5, "L", "D"]),
                           _vi("V", F, ["B", 3, "L", "D"])],
                   [_vi("S", F, ["N"]), _vi("Y", F, ["B", 1, "D"]),
                    _vi("P", F, ["B", "D"]), _vi("Q", F, ["B", 5, "L", "D"]),
                    _vi("Z", F, ["B", 3, "L", "D"])], inits, opset=13)
    shapes = [dict(M=m, N=n, B=b, L=m, D=n) for m, n, b in [
        (1, 1, 1), (2, 3, 2), (7, 13, 1), (31, 64, 3), (65, 5, 1),
        (64, 63, 2), (129, 1, 1), (3, 127, 2), (300, 17, 1), (5, 129, 3)]]

    def feeds(s, rng):
        b, l, d = s["B"], s["L"], s["D"]
        return {"X": rng.uniform(-1, 1, (s["M"], s["N"])),
                "T": rng.uniform(-1, 1, (b, l, d)),
                "E": rng.uniform(-1, 1, (b, l, d)),
                "U": rng.uniform(-3, 3, (b, 5, l, d)),
                "V": rng.uniform(-3, 3, (b, 3, l, d))}
    return model, shapes, feeds


def broadcast_case():
    nodes = [helper.make_node("Mul", ["X", "s"], ["A"]),
             helper.make_node("Add", ["A", "Z"], ["C"]),
             helper.make_node("Erf", ["C"], ["E"]),
             helper.make_node("Sigmoid", ["E"], ["G"]),
             helper.make_node("Tanh", ["C"], ["H"]),
             helper.make_node("Sub", ["G", "H"], ["Y"])]
    model = _model(nodes, [_vi("X", F, ["B", "L", "D"]), _vi("s", F, ["D"]),
                           _vi("Z", F, ["B", 1, "D"])], [_vi("Y", F, ["B", "L", "D"])])
    shapes = [dict(B=b, L=l, D=d) for b, l, d in [
        (1, 1, 1), (2, 3, 5), (1, 7, 13), (3, 31, 4), (1, 33, 127),
        (2, 64, 3), (1, 65, 129), (4, 2, 61), (1, 5, 512), (2, 5, 128)]]

    def feeds(s, rng):
        return {"X": rng.uniform(-2, 2, (s["B"], s["L"], s["D"])),
                "s": rng.uniform(-2, 2, (s["D"],)),
                "Z": rng.uniform(-1, 1, (s["B"], 1, s["D"]))}
    return model, shapes, feeds


# Alternative configurations per kernel kind, beside the default: odd block
# tiles, several elements per thread, one thread, k-steps of 1 and primes.
GEMM_CONFIGS = [None, "block 16x8 thread 2x2 k 5", "block 8x24 thread 8x3 k 1",
                "block 1x1 thread 1x1 k 7",
                # Pipelined register tiles: the copies of later k-steps in
                # flight, one buffer per stage (the stage arithmetic and
                # the tails run on the CPU too).
                "block 16x8 thread 2x2 k 5 stages 2",
                "block 32x64 thread 4x4 k 16 stages 3"]
OTHER_CONFIGS = [None, "block 3x5 thread 1x5 k 3", "block 2x16 thread 2x1 k 1",
                 "block 1x1 thread 1x1 k 7"]
# Convs also take a k-step per reduction loop (input channels, filter rows,
# filter columns): a filter row at a time over 2 channels, whole windows
# over 4, and one column at a time, each promoted per step (the windows'
# padding and the stride-2 conv's halo in every step).
CONV_CONFIGS = ["block 1x8x4x32 thread 1x2x1x4 k 2x1x3",
                "block 1x4x2x8 thread 1x2x1x2 k 4x3x3",
                "block 1x2x3x5 thread 1x1x3x1 k 3x3x1"]
# Row reductions (the default is a warp per row, 4 rows per block, one
# element per lane and step): 2 and 3 rows per block, 4 and 3 elements per
# lane and step, and a block per row of 2 and 3 warps. Kernels whose
# reductions are not along rows keep the tile levels with these tiles (and
# their k-step).
# `reduce column` splits a column reduction's (or a row's) reduced axis over
# a group of lanes per output: 8 lanes by 16 outputs. (Blocks of more lanes
# than a warp on one output: test_every_variant_of_column_splits.)
ROW_CONFIGS = ["block 2x32 thread 1x1 k 16 reduce warp",
               "block 3x128 thread 1x4 k 5 reduce warp",
               "block 1x64 thread 1x1 k 16 reduce block",
               "block 1x96 thread 1x3 k 7 reduce block",
               "block 16x8 thread 1x1 k 64 reduce column"]

CASES = {
    "gemm": (gemm_case, ["gemm"]),
    "batched_gemm": (batched_gemm_case, ["gemm"]),
    "attention_scores": (attention_scores_case, ["gemm"]),
    "conv": (conv_case, ["conv"]),
    "unit_batch_conv": (unit_batch_conv_case, ["conv"]),
    "pool": (pool_case, ["reduce", "data_movement", "elementwise"]),
    "gather": (gather_case, ["data_movement", "elementwise"]),
    "arange": (arange_case, ["data_movement", "elementwise"]),
    "identity_cast": (identity_cast_case, ["data_movement", "elementwise"]),
    "concat_slice": (concat_slice_case, ["data_movement", "elementwise"]),
    "pad_transpose": (pad_transpose_case, ["data_movement", "elementwise"]),
    "row_reduce": (row_reduce_case, ["reduce"]),
    "row_root": (row_root_case, ["reduce", "elementwise"]),
    "int_row": (int_row_case, ["reduce"]),
    "multi_axis_row": (multi_axis_row_case, ["reduce"]),
    "column_reduce": (column_reduce_case, ["reduce"]),
    "broadcast": (broadcast_case, ["elementwise"]),
}


def _variants():
    for name, (_, kinds) in CASES.items():
        configs = GEMM_CONFIGS if kinds[0] in ("gemm", "conv") else OTHER_CONFIGS
        if kinds[0] == "conv":
            configs = configs + CONV_CONFIGS
        if "reduce" in kinds:
            configs = configs + ROW_CONFIGS
        for i, config in enumerate(configs):
            yield pytest.param(name, config, id=f"{name}-{'default' if config is None else f'v{i}'}")


@pytest.fixture(scope="module")
def ort():
    return pytest.importorskip("onnxruntime")


def default_kind_artifact(compile_once, case, work):
    """CASES[case] compiled for the CPU with its symbols in [1, 512] and the
    tile search's variants, once per test run (test_host_kernels checks the
    same artifact); its path."""
    model, shapes, _ = CASES[case][0]()
    path = work / f"{case}.onnx"
    onnx.save(model, str(path))
    dims = [f for s in shapes[0] for f in ("--dim", f"{s}=1:512")]
    result = compile_once(f"kind-{case}", path, "--target", "cpu", *dims)
    assert result.returncode == 0, result.stderr
    return result.artifact


@pytest.mark.parametrize("case,config", list(_variants()))
def test_kind_variant_matches_onnxruntime(tmp_path, ort, compile_once, case,
                                          config):
    build, kinds = CASES[case]
    model, shapes, make_feeds = build()
    assert len(shapes) >= 10
    path = tmp_path / f"{case}.onnx"
    onnx.save(model, str(path))
    if not config:
        art_path = default_kind_artifact(compile_once, case, tmp_path)
    else:
        art_path = dyncc.compile(path, tmp_path / f"{case}.dyncc",
                                 targets=["cpu"],
                                 dims={s: (1, 512) for s in shapes[0]},
                                 tile_configs={k: config for k in kinds})
        # The variant is the one asked for: the manifest records it (fitted
        # to each kernel's rank: its innermost sizes and its k-step).
        words = config.split()
        pattern = (r'block (\d+x)*%s thread (\d+x)*%s k %s%s' % (
            words[1].split("x")[-1], words[3].split("x")[-1], words[5],
            "".join(" " + w for w in words[6:])))
        configs = manifest_values(art_path, "config")
        assert any(re.fullmatch(pattern, c) for c in configs), (pattern, configs)
    art = dyncc.load(art_path)
    session = art.session("cpu")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in model.graph.output]
    nonzero = {name: False for name in names}
    for shape in shapes:
        rng = np.random.default_rng(sum(shape.values()) * 31 + len(case))
        feeds = {k: (v.astype(np.float32) if v.dtype == np.float64 else v)
                 for k, v in make_feeds(shape, rng).items()}
        got = session.run(feeds)
        want = ref.run(names, feeds)
        for name, w in zip(names, want):
            g = got[name]
            nonzero[name] |= bool(np.abs(w).max() > 0)
            assert g.shape == w.shape, f"{case} {shape} {name}: {g.shape} vs {w.shape}"
            if np.issubdtype(w.dtype, np.integer):
                np.testing.assert_array_equal(
                    g, w, err_msg=f"{case} [{config or 'default'}] {name} at {shape}")
                continue
            np.testing.assert_allclose(
                g, w, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(w).max())),
                err_msg=f"{case} [{config or 'default'}] {name} at {shape}")
    assert all(nonzero.values()), f"{case}: an output is zero at every shape"


@pytest.mark.parametrize("config", GEMM_CONFIGS)
def test_channel_shuffle_matches_onnxruntime(tmp_path, ort, config):
    """channel_shuffle_model at static sizes (1, primes, off the 4x32 block
    tile), each variant: the shuffled channels of every block's tile land
    where onnxruntime puts them."""
    for height, width in [(1, 1), (3, 5), (7, 13), (5, 31), (4, 33), (9, 64)]:
        path = tmp_path / f"shuffle_{height}x{width}.onnx"
        onnx.save(channel_shuffle_model(height, width), str(path))
        art = dyncc.compile(path, tmp_path / "shuffle.dyncc", targets=["cpu"],
                            tile_configs={"conv": config} if config else None)
        # The whole unit is one kernel: the shuffle is fused into the conv.
        assert manifest_values(art, "kind").count("conv") == 1
        feeds = {"X": np.random.default_rng(height * width).uniform(
            -1, 1, (1, 8, height, width)).astype(np.float32)}
        got = dyncc.load(art).session("cpu").run(feeds)["Y"]
        want = ort.InferenceSession(
            str(path), providers=["CPUExecutionProvider"]).run(["Y"], feeds)[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{config} at {height}x{width}")


@pytest.mark.parametrize("config", [None, "block 16x8 thread 2x2 k 16", "block 16x16 thread 16x1 k 8"])
def test_divisible_variant_matches_onnxruntime(tmp_path, ort, config):
    """Symbols declared as multiples of 16 (`--dim M=16:512:16`): the
    clamps of full tiles are dropped at compile time (test/Codegen/
    divisibility.test); the unmasked kernels must still be right at every
    multiple, including the smallest, and where the default tiles (32x64)
    are not divisors, the clamps that remain still mask the tails."""
    model, _, make_feeds = gemm_case()
    path = tmp_path / "gemm.onnx"
    onnx.save(model, str(path))
    art_path = dyncc.compile(path, tmp_path / "gemm.dyncc", targets=["cpu"],
                             dims={"M": (16, 512, 16), "K": (16, 512, 16),
                                   "N": (8, 512, 8)},
                             tile_configs={"gemm": config} if config else None)
    session = dyncc.load(art_path).session("cpu")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shapes = [dict(M=m, K=k, N=n) for m, k, n in [
        (16, 16, 8), (32, 16, 16), (48, 32, 24), (16, 112, 72), (64, 64, 64),
        (80, 16, 8), (112, 48, 136), (128, 128, 128), (16, 512, 8), (208, 16, 40)]]
    for shape in shapes:
        rng = np.random.default_rng(sum(shape.values()))
        feeds = {k: v.astype(np.float32) for k, v in make_feeds(shape, rng).items()}
        want = ref.run(["Y"], feeds)[0]
        got = session.run(feeds)["Y"]
        np.testing.assert_allclose(got, want, rtol=1e-4,
                                   atol=1e-5 * max(1.0, float(np.abs(want).max())),
                                   err_msg=f"[{config or 'default'}] at {shape}")


# Tensor-core variants of an f16 GEMM (f32 accumulation): the default, and
# other block, warp and k-step tilings. On the CPU the warps' products run
# as loops over the same padded static tiles the GPU's mma.sync reads, so
# the padding, the warp decomposition and the masked epilogue are what this
# checks; the instruction-level lowering is pinned by
# test/Target/tensor-cores.test. A batched GEMM given these configs keeps
# SIMT threads (tensor cores take 2-D products only so far): the batched
# cases check that fallback.
MMA_CONFIGS = [None, "block 32x32 warp 16x16 thread 1x8 k 16 mma 16x8x16",
               "block 64x128 warp 32x64 thread 4x16 k 16 mma 16x8x16",
               "block 128x32 warp 32x32 thread 8x4 k 48 mma 16x8x16"]


def _f16_gemm_model(tmp_path, x_lead, w_lead, dtype=TensorProto.FLOAT16):
    """Saves Y = Relu(X @ W + b) in f16 (or `dtype`), X [*x_lead, M, K],
    W [*w_lead, K, N], b [N]; returns its path."""
    H = dtype
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"]),
             helper.make_node("Add", ["P", "b"], ["S"]),
             helper.make_node("Relu", ["S"], ["Y"])]
    model = _model(nodes, [_vi("X", H, x_lead + ["M", "K"]),
                           _vi("W", H, w_lead + ["K", "N"]), _vi("b", H, ["N"])],
                   [_vi("Y", H, x_lead + ["M", "N"])])
    path = tmp_path / "gemm_f16.onnx"
    onnx.save(model, str(path))
    return path


def _check_f16_gemm(session, shapes, x_batch, w_batch, label, dtype=np.float16):
    """Runs the model of _f16_gemm_model at each (M, K, N) of `shapes`, with
    leading batch sizes `x_batch` and `w_batch`, on random data of `dtype`,
    against numpy in f32 (rtol 1e-2); the output must not be zero
    everywhere."""
    nonzero = False
    for m, k, n in shapes:
        rng = np.random.default_rng(m * 1000 + k * 10 + n)
        x = rng.uniform(-1, 1, x_batch + [m, k]).astype(dtype)
        w = rng.uniform(-1, 1, w_batch + [k, n]).astype(dtype)
        b = rng.uniform(-1, 1, (n,)).astype(dtype)
        got = session.run({"X": x, "W": w, "b": b})["Y"].astype(np.float32)
        want = np.maximum(x.astype(np.float32) @ w.astype(np.float32)
                          + b.astype(np.float32), 0)
        nonzero |= bool(np.abs(want).max() > 0)
        np.testing.assert_allclose(
            got, want, rtol=1e-2, atol=1e-2 * max(1.0, float(np.abs(want).max())),
            err_msg=f"[{label}] at M={m} K={k} N={n}")
    assert nonzero, "the output is zero at every shape"


@pytest.mark.parametrize("batched", [False, True], ids=["gemm", "batched"])
@pytest.mark.parametrize("config", MMA_CONFIGS,
                         ids=[f"v{i}" if c else "default" for i, c in enumerate(MMA_CONFIGS)])
def test_tensor_core_variant_matches_reference(tmp_path, config, batched):
    lead = ["B"] if batched else []
    path = _f16_gemm_model(tmp_path, lead, lead)
    dims = {"M": (1, 512), "K": (1, 512), "N": (1, 512)}
    if batched:
        dims["B"] = (1, 8)
    # The default config, the search kept off (M, K and N are its keys).
    tile_configs = {"gemm": config or "default"}
    art_path = dyncc.compile(path, tmp_path / "gemm_f16.dyncc", targets=["cpu"],
                             dims=dims, tile_configs=tile_configs)
    want_config = config or "block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 3"
    if batched:
        want_config = " ".join(
            ("1x" + w) if i in (1, 3, 5) else w
            for i, w in enumerate(want_config.split()))
    assert want_config in manifest_values(art_path, "config")
    # The product is on tensor cores, a batch of one per block included
    # (the unit batch dimension dropped from the warps' tiles).
    tiled = dyncc.compile(path, None, targets=["cpu"], dims=dims, emit="tiled",
                          tile_configs=tile_configs)
    assert re.search(r"linalg\.matmul \{dyncc\.mma = array<i64: 16, 8, 16>\} "
                     r"ins\(.*: tensor<\d+x\d+xf16>, tensor<\d+x\d+xf16>\)", tiled)
    session = dyncc.load(art_path).session("cpu")
    shapes = [(1, 1, 1), (2, 3, 5), (7, 13, 11), (31, 16, 63), (32, 17, 64),
              (33, 15, 65), (1, 100, 3), (64, 64, 129), (97, 31, 1),
              (5, 257, 17), (65, 7, 127), (129, 48, 33)]
    batch = [3] if batched else []
    _check_f16_gemm(session, shapes, batch, batch, config or "default")


# Pipelined tensor-core variants: stages, vector widths (16, 8 and 4 bytes
# per chunk, from what K and N are known to be multiples of) and tile sizes.
PIPELINE_CASES = [
    (None, 8),
    ("block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16", 8),
    ("block 64x64 warp 32x32 thread 4x8 k 32 mma 16x8x16 stages 2", 4),
    ("block 32x32 warp 16x16 thread 1x8 k 16 mma 16x8x16 stages 4", 2),
    ("block 64x128 warp 32x64 thread 4x16 k 16 mma 16x8x16 stages 2", 8),
    ("block 128x32 warp 32x32 thread 8x4 k 48 mma 16x8x16 stages 2", 8),
    # 112 KB of shared tiles: dynamic shared memory on the GPU.
    ("block 128x128 warp 64x64 thread 8x16 k 32 mma 16x8x16 stages 3", 8),
]


@pytest.mark.parametrize("lead", [[], ["B"]], ids=["2d", "batch_of_rows"])
@pytest.mark.parametrize("config,divisor", PIPELINE_CASES,
                         ids=[f"{'default' if c is None else f'v{i}'}-div{d}"
                              for i, (c, d) in enumerate(PIPELINE_CASES)])
def test_pipelined_tensor_core_variant_matches_reference(tmp_path, config, divisor,
                                                         lead):
    """K and N multiples of `divisor`: the operands are copied in aligned
    chunks (cp.async on the GPU) into one shared tile per stage, with a
    prologue and the steps past the end skipped. The CPU runs the same
    chunks, stages and predicates; every tail (M anything, K and N just off
    the chunk, the k-step and the block tile) against numpy. With `lead`,
    X is [B, M, K] and W [K, N] (a transformer's projection: a batch of one
    per block, read through the reshapes of X)."""
    path = _f16_gemm_model(tmp_path, lead, [])
    dims = {"M": (1, 512), "K": (divisor, 512, divisor), "N": (divisor, 512, divisor)}
    if lead:
        dims["B"] = (1, 4)
    # The default config, the search kept off (M, K and N are its keys).
    tile_configs = {"gemm": config or "default"}
    stages = int(config.split("stages ")[1]) if config and "stages" in config else (
        1 if config else 3)
    cpu_ir = dyncc.compile(path, None, targets=["cpu"], dims=dims,
                           tile_configs=tile_configs, emit="cpu")
    # Chunks of whole vectors (the host moves runs of them, up to 64 bytes:
    # dyncc-widen-chunked-copies), one shared tile per stage.
    widths = {int(w) for w in re.findall(
        r"vector\.transfer_read [^\n]*vector<1x(\d+)xf16>", cpu_ir)}
    assert widths and all(w % divisor == 0 and w <= 32 for w in widths), widths
    tiles = re.findall(r"memref\.alloca\(\)[^\n]*: memref<([0-9x]+)xf16>", cpu_ir)
    staged = [t for t in tiles if t.count("x") == 2]
    assert len(staged) == (2 if stages > 1 else 0), tiles
    assert all(t.startswith(f"{stages}x") for t in staged), tiles
    art_path = dyncc.compile(path, tmp_path / "gemm_f16.dyncc", targets=["cpu"],
                             dims=dims, tile_configs=tile_configs)
    session = dyncc.load(art_path).session("cpu")
    d = divisor
    shapes = [(1, d, d), (2, 3 * d, 5 * d), (7, 13 * d, 11 * d), (31, 16, 64),
              (33, 40, 72), (64, 64, 128), (97, 104, 8), (65, 48 + d, 136),
              (129, 96 - d, 64 + d), (5, 256 + d, 16 * d + d), (1, 512, 512),
              (131, 8 * d, 2 * d)]
    assert all(k % d == 0 and n % d == 0 for _, k, n in shapes)
    _check_f16_gemm(session, shapes, [3] if lead else [], [], config or "default")


# bf16 on tensor cores: the configs of the f16 tests, and a pipeline deep
# enough for dynamic shared memory on the GPU. On the CPU the warps'
# products are the same loops over padded static tiles, in bf16.
BF16_CASES = [(None, 1), (None, 8),
              ("block 32x32 warp 16x16 thread 1x8 k 16 mma 16x8x16 stages 4", 2),
              ("block 128x128 warp 64x64 thread 8x16 k 32 mma 16x8x16 stages 3", 8)]


@pytest.mark.parametrize("config,divisor", BF16_CASES,
                         ids=[f"{'default' if c is None else f'v{i}'}-div{d}"
                              for i, (c, d) in enumerate(BF16_CASES)])
def test_bf16_tensor_core_variant_matches_reference(tmp_path, config, divisor):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    path = _f16_gemm_model(tmp_path, [], [], TensorProto.BFLOAT16)
    dims = {"M": (1, 512), "K": (divisor, 512, divisor), "N": (divisor, 512, divisor)}
    tile_configs = {"gemm": config} if config else None
    tiled = dyncc.compile(path, None, targets=["cpu"], dims=dims, emit="tiled",
                          tile_configs=tile_configs)
    assert re.search(r"linalg\.matmul \{dyncc\.mma = array<i64: 16, 8, 16>\} "
                     r"ins\(.*: tensor<\d+x\d+xbf16>, tensor<\d+x\d+xbf16>\)", tiled)
    art_path = dyncc.compile(path, tmp_path / "gemm_bf16.dyncc", targets=["cpu"],
                             dims=dims, tile_configs=tile_configs)
    session = dyncc.load(art_path).session("cpu")
    d = divisor
    shapes = [(1, d, d), (2, 3 * d, 5 * d), (7, 13 * d, 11 * d), (31, 16 * d, 8 * d),
              (33, 40 * d, 9 * d), (64, 8 * d, 16 * d), (97, 13 * d, d),
              (129, 12 * d - d, 8 * d + d), (5, 32 * d + d, 17 * d), (131, 8 * d, 2 * d)]
    assert all(k <= 512 and n <= 512 for _, k, n in shapes)
    _check_f16_gemm(session, shapes, [], [], config or "default", ml_dtypes.bfloat16)


# Static products whose operand is computed in the kernel: an elementwise
# prologue of reads (a ReLU before a classifier's Gemm, attention's f32
# probabilities cast to f16 before P.V) is rebuilt over padded inputs and
# fuses into each k-step's copy. f32: SIMT register tiles; f16: tensor
# cores, the product's [B, H, S, D] stored as [B, S, H, D] (the head merge).
PROLOGUE_CONFIGS = [None, "block 16x8 thread 2x2 k 5 stages 2"]


def _tiled_and_session(tmp_path, model, name, dims, config):
    """Saves `model` as NAME.onnx and compiles it for the CPU with `config`
    for its GEMMs; returns the tiled IR and a session of the artifact."""
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    tile_configs = {"gemm": config} if config else None
    tiled = dyncc.compile(path, None, targets=["cpu"], dims=dims, emit="tiled",
                          tile_configs=tile_configs)
    art = dyncc.compile(path, tmp_path / f"{name}.dyncc", targets=["cpu"],
                        dims=dims, tile_configs=tile_configs)
    return tiled, dyncc.load(art).session("cpu")
PROLOGUE_MMA_CONFIGS = [None, "block 32x32 warp 16x16 thread 1x8 k 16 mma 16x8x16"]


@pytest.mark.parametrize("config", PROLOGUE_CONFIGS,
                         ids=["default", "v1"])
def test_register_tile_with_prologue_matches_reference(tmp_path, config):
    nodes = [helper.make_node("Relu", ["X"], ["R"]),
             helper.make_node("MatMul", ["R", "W"], ["P"]),
             helper.make_node("Add", ["P", "b"], ["Y"])]
    model = _model(nodes, [_vi("X", F, ["M", "K"]), _vi("W", F, ["K", "N"]),
                           _vi("b", F, ["N"])], [_vi("Y", F, ["M", "N"])])
    tiled, session = _tiled_and_session(
        tmp_path, model, "relu_gemm", {"M": (1, 300), "K": (1, 300), "N": (1, 300)},
        config)
    assert "dyncc.register_tile" in tiled
    for m, k, n in [(1, 1, 1), (2, 3, 5), (7, 13, 11), (31, 16, 63), (33, 17, 65),
                    (64, 64, 129), (97, 31, 1), (5, 257, 17), (129, 48, 33),
                    (300, 300, 300)]:
        rng = np.random.default_rng(m * 7 + k * 3 + n)
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = rng.standard_normal((k, n)).astype(np.float32)
        b = rng.standard_normal(n).astype(np.float32)
        want = np.maximum(x, 0) @ w + b
        got = session.run({"X": x, "W": w, "b": b})["Y"]
        np.testing.assert_allclose(got, want, rtol=1e-4,
                                   atol=1e-5 * max(1.0, float(np.abs(want).max())),
                                   err_msg=f"[{config or 'default'}] at {(m, k, n)}")


@pytest.mark.parametrize("config", PROLOGUE_MMA_CONFIGS, ids=["default", "v1"])
def test_tensor_cores_with_prologue_match_reference(tmp_path, config):
    H = TensorProto.FLOAT16
    nodes = [helper.make_node("Cast", ["P"], ["Ph"], to=H),
             helper.make_node("MatMul", ["Ph", "V"], ["O"]),
             helper.make_node("Transpose", ["O"], ["Y"], perm=[0, 2, 1, 3])]
    model = _model(nodes, [_vi("P", F, ["B", 3, "S", "T"]),
                           _vi("V", H, ["B", 3, "T", 40])],
                   [_vi("Y", H, ["B", "S", 3, 40])])
    tiled, session = _tiled_and_session(
        tmp_path, model, "pv", {"B": (1, 3), "S": (1, 200), "T": (1, 200)}, config)
    assert re.search(r"dyncc\.mma = array<i64: 16, 8, 16>", tiled)
    # The cast is computed in the per-step copies (between the k-step loop's
    # start and the product), not whole per block before the loop.
    loop, product = tiled.index("scf.for"), tiled.index("dyncc.mma = ")
    assert "arith.truncf" in tiled[loop:product]
    assert "arith.truncf" not in tiled[tiled.index("func.func @"):loop]
    for bsz, seq, keys in [(1, 1, 1), (2, 7, 13), (1, 31, 33), (3, 33, 64),
                           (1, 64, 65), (2, 65, 31), (1, 97, 128), (1, 128, 127),
                           (1, 200, 200), (3, 5, 199)]:
        rng = np.random.default_rng(bsz * 1000 + seq * 10 + keys)
        p = rng.uniform(0, 1, (bsz, 3, seq, keys)).astype(np.float32)
        v = rng.uniform(-1, 1, (bsz, 3, keys, 40)).astype(np.float16)
        want = np.transpose(p.astype(np.float16).astype(np.float32)
                            @ v.astype(np.float32), (0, 2, 1, 3))
        got = session.run({"P": p, "V": v})["Y"].astype(np.float32)
        np.testing.assert_allclose(
            got, want, rtol=1e-2, atol=1e-2 * max(1.0, float(np.abs(want).max())),
            err_msg=f"[{config or 'default'}] at B={bsz} S={seq} T={keys}")


def test_half_conversions_are_exact(tmp_path):
    """f16 <-> f32 on the host (integer code, no libgcc call: see
    test_host_kernels.py): widening every one of the 65536 f16 values, and
    narrowing with round-to-nearest-even at the halfway points, the
    subnormal range, the overflow threshold, infinities and NaN, bit for bit
    against numpy."""
    nodes = [helper.make_node("Cast", ["H"], ["W"], to=TensorProto.FLOAT),
             helper.make_node("Cast", ["F"], ["N"], to=TensorProto.FLOAT16)]
    model = _model(nodes, [_vi("H", TensorProto.FLOAT16, ["A"]), _vi("F", F, ["B"])],
                   [_vi("W", F, ["A"]), _vi("N", TensorProto.FLOAT16, ["B"])])
    path = tmp_path / "casts.onnx"
    onnx.save(model, str(path))
    art = dyncc.compile(path, tmp_path / "casts.dyncc", targets=["cpu"],
                        dims={"A": (1, 1 << 17), "B": (1, 1 << 21)})
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    # Every f16 and its neighbours halfway above and below in f32, plus
    # random f32 over the whole exponent range.
    wide = halves[np.isfinite(halves)].astype(np.float32)
    up = np.nextafter(wide, np.float32(np.inf))
    mid = ((wide.astype(np.float64) + np.roll(wide, -1).astype(np.float64)) / 2).astype(np.float32)
    rng = np.random.default_rng(0)
    randoms = rng.uniform(-1, 1, 1 << 16).astype(np.float32) * np.exp2(
        rng.integers(-30, 20, 1 << 16)).astype(np.float32)
    floats = np.concatenate([wide, up, mid, randoms, np.array(
        [np.inf, -np.inf, np.nan, 65519.996, 65520.0, 65536.0, 1e30, 2.0 ** -25,
         2.0 ** -24 * 1.5, 5.96e-8], np.float32)])
    out = dyncc.load(art).session("cpu").run({"H": halves, "F": floats})
    want_w = halves.astype(np.float32)
    got_w = out["W"]
    assert np.array_equal(np.isnan(got_w), np.isnan(want_w))
    ok = ~np.isnan(want_w)
    assert np.array_equal(got_w[ok].view(np.uint32), want_w[ok].view(np.uint32))
    with np.errstate(over="ignore"):
        want_n = floats.astype(np.float16)
    got_n = out["N"]
    assert np.array_equal(np.isnan(got_n), np.isnan(want_n))
    ok = ~np.isnan(want_n)
    bad = np.nonzero(got_n[ok].view(np.uint16) != want_n[ok].view(np.uint16))[0]
    assert bad.size == 0, (floats[ok][bad[:5]], got_n[ok][bad[:5]], want_n[ok][bad[:5]])


# Elementwise thread tiles as aligned vectors: with the innermost symbol a
# multiple of the thread tile (`--dim D=4:512:4`), every thread's 4 (or 2)
# f32 are one aligned vector access. The default (1x4 per thread: 16 bytes),
# 8-byte vectors, and a block tile (24) that is no multiple of 16 bytes'
# worth of threads.
VECTOR_CASES = [(None, 4, 16), ("block 2x64 thread 1x2 k 0", 2, 8),
                ("block 3x24 thread 1x4 k 0", 4, 16)]


@pytest.mark.parametrize("config,divisor,alignment", VECTOR_CASES)
def test_vectorized_elementwise_matches_onnxruntime(tmp_path, ort, config, divisor,
                                                    alignment):
    model, _, make_feeds = broadcast_case()
    path = tmp_path / "broadcast.onnx"
    onnx.save(model, str(path))
    dims = {"B": (1, 8), "L": (1, 512), "D": (divisor, 1024, divisor)}
    tile_configs = {"elementwise": config} if config else None
    # The vectors are there, with their alignment, on both targets: the
    # kernel is not vectorized without the divisibility fact.
    gpu = dyncc.compile(path, None, targets=["sm_90"], dims=dims, emit="gpu",
                        tile_configs=tile_configs)
    width = alignment // 4
    for op in ("vector.load", "vector.store"):
        assert re.search(r"%s .*\{alignment = %d : i64\} : memref<.*>, "
                         r"vector<%dxf32>" % (op, alignment, width), gpu), op
    unaligned = dyncc.compile(path, None, targets=["sm_90"], emit="gpu",
                              dims={"B": (1, 8), "L": (1, 512), "D": (1, 512)},
                              tile_configs=tile_configs)
    assert "vector.load" not in unaligned and "vector.store" not in unaligned
    art_path = dyncc.compile(path, tmp_path / "broadcast.dyncc", targets=["cpu"],
                             dims=dims, tile_configs=tile_configs)
    session = dyncc.load(art_path).session("cpu")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for b, l, d in [(1, 1, 1), (2, 3, 2), (1, 7, 3), (3, 31, 31), (1, 5, 32),
                    (2, 4, 33), (1, 9, 62), (4, 2, 64), (1, 3, 65), (2, 5, 128),
                    (1, 2, 129)]:
        shape = dict(B=b, L=l, D=d * divisor)
        rng = np.random.default_rng(b * 1000 + l * 10 + d)
        feeds = {k: v.astype(np.float32) for k, v in make_feeds(shape, rng).items()}
        want = ref.run(["Y"], feeds)[0]
        got = session.run(feeds)["Y"]
        np.testing.assert_allclose(got, want, rtol=1e-4,
                                   atol=1e-5 * max(1.0, float(np.abs(want).max())),
                                   err_msg=f"[{config or 'default'}] at {shape}")


def test_vectorized_f16_elementwise_matches_onnxruntime(tmp_path, ort):
    """f16 vectors (4 halves per thread: 8-byte accesses), through the host
    CPU's half-precision emulation on vectors."""
    H = TensorProto.FLOAT16
    nodes = [helper.make_node("Mul", ["X", "s"], ["A"]),
             helper.make_node("Add", ["A", "Z"], ["C"]),
             helper.make_node("Sub", ["C", "X"], ["Y"])]
    model = _model(nodes, [_vi("X", H, ["B", "L", "D"]), _vi("s", H, ["D"]),
                           _vi("Z", H, ["B", 1, "D"])], [_vi("Y", H, ["B", "L", "D"])])
    path = tmp_path / "f16.onnx"
    onnx.save(model, str(path))
    dims = {"B": (1, 8), "L": (1, 512), "D": (4, 1024, 4)}
    gpu = dyncc.compile(path, None, targets=["sm_90"], dims=dims, emit="gpu")
    assert re.search(r"vector.load .*\{alignment = 8 : i64\} : memref<.*>, "
                     r"vector<4xf16>", gpu)
    art = dyncc.compile(path, tmp_path / "f16.dyncc", targets=["cpu"], dims=dims)
    # Half vectors need no compiler-rt conversions on the host either.
    from conftest import sections
    from test_host_kernels import undefined_symbols
    assert not [s for s in undefined_symbols(sections(art)["cpu.so"], tmp_path)
                if "hf" in s or "truncsf" in s or "extend" in s]
    session = dyncc.load(art).session("cpu")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for b, l, d in [(1, 1, 4), (2, 3, 8), (1, 7, 12), (3, 31, 124), (1, 5, 128),
                    (2, 4, 132), (1, 9, 252), (4, 2, 256), (1, 3, 260), (2, 5, 516)]:
        rng = np.random.default_rng(b * 1000 + l * 10 + d)
        feeds = {"X": rng.uniform(-2, 2, (b, l, d)).astype(np.float16),
                 "s": rng.uniform(-2, 2, (d,)).astype(np.float16),
                 "Z": rng.uniform(-1, 1, (b, 1, d)).astype(np.float16)}
        want = ref.run(["Y"], feeds)[0].astype(np.float32)
        got = session.run(feeds)["Y"].astype(np.float32)
        np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-3 * max(1.0, float(np.abs(want).max())),
                                   err_msg=f"at {(b, l, d)}")


@pytest.mark.parametrize("dtype", [TensorProto.INT32, TensorProto.INT64],
                         ids=["int32", "int64"])
def test_integer_power_matches_reference(tmp_path, ort, dtype):
    """Pow on integers: exponentiation by squaring in the kernel, the same
    loop for the CPU and the GPU (compiled here for sm_90 too, where
    upstream's software version cannot be called). Negative exponents give
    the integer part of 1 / b^-e: 1 for b = 1, +-1 for b = -1, 0 otherwise,
    which onnxruntime (std::pow truncated) agrees with wherever b != 0; 0 to
    a negative power, undefined in ONNX, gives 0."""
    np_type = np.int32 if dtype == TensorProto.INT32 else np.int64
    model = _model([helper.make_node("Pow", ["X", "E"], ["Y"])],
                   [_vi("X", dtype, ["N"]), _vi("E", dtype, ["N"])],
                   [_vi("Y", dtype, ["N"])])
    path = tmp_path / "pow.onnx"
    onnx.save(model, str(path))
    art = dyncc.compile(path, tmp_path / "pow.dyncc", targets=["cpu", "sm_90"],
                        dims={"N": (1, 512)})
    session = dyncc.load(art).session("cpu")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n in (1, 7, 33, 130, 512):
        rng = np.random.default_rng(n)
        x = rng.integers(-6, 7, n).astype(np_type)
        e = rng.integers(-3, 12, n).astype(np_type)
        y = session.run({"X": x, "E": e})["Y"]
        positive = np.power(x, np.maximum(e, 0))
        reciprocal = np.where(x == 1, 1, np.where(x == -1, np.where(e % 2, -1, 1), 0))
        np.testing.assert_array_equal(y, np.where(e < 0, reciprocal, positive),
                                      err_msg=f"N = {n}")
        defined = (x != 0) | (e >= 0)
        (want,) = ref.run(["Y"], {"X": x, "E": e})
        np.testing.assert_array_equal(y[defined], want[defined], err_msg=f"N = {n}")


def test_scalar_input_through_python_api(tmp_path):
    """A rank-0 input given to session.run as a 0-d array, a numpy scalar or
    a Python number binds as rank 0 (np.ascontiguousarray, used before,
    made it [1], which the session refused: "expected rank 0, got 1")."""
    model = _model([helper.make_node("Mul", ["X", "s"], ["Y"])],
                   [_vi("X", F, ["N"]), _vi("s", F, [])], [_vi("Y", F, ["N"])])
    path = tmp_path / "scale.onnx"
    onnx.save(model, str(path))
    art = dyncc.compile(path, tmp_path / "scale.dyncc", targets=["cpu"],
                        dims={"N": (1, 64)})
    session = dyncc.load(art).session("cpu")
    x = np.random.default_rng(3).uniform(-1, 1, 13).astype(np.float32)
    for s in (np.array(2.5, np.float32), np.float32(2.5), 2.5):
        np.testing.assert_array_equal(session.run({"X": x, "s": s})["Y"], x * np.float32(2.5))
    with pytest.raises(dyncc.DynccError, match="input 's': expected rank 0, got 1"):
        session.run({"X": x, "s": np.array([2.5], np.float32)})


@pytest.mark.parametrize("elem,np_type", [
    (TensorProto.DOUBLE, np.float64), (TensorProto.INT32, np.int32),
    (TensorProto.INT64, np.int64)])
def test_gemm_of_other_element_types(tmp_path, elem, np_type):
    """MatMul in f64, i32 and i64: the static product's shared accumulator
    is of the product's element type (it was f32, which failed to compile
    every such GEMM), and on the GPU its operand rows are copied by
    cp.async with integer zeros past the edge. Exact (integers) or to f64
    rounding, at M = 1, a prime and the range's end, every variant the
    search picks."""
    rng = np.random.default_rng(11)
    w = rng.integers(-5, 5, (64, 48)).astype(np_type)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], "matmul",
        [helper.make_tensor_value_info("X", elem, ["M", 64])],
        [helper.make_tensor_value_info("Y", elem, None)],
        [numpy_helper.from_array(w, "W")])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    model = tmp_path / "matmul.onnx"
    onnx.save(onnx_model, model)
    art = tmp_path / "matmul.dyncc"
    tiled = dyncc.compile(model, None, dims={"M": (1, 300)},
                          targets=["cpu"], emit="tiled")
    assert "dyncc.register_tile" in tiled
    dyncc.compile(model, art, dims={"M": (1, 300)}, targets=["cpu", "sm_90"])
    sess = dyncc.load(art).session()
    for m in (1, 37, 300):
        x = rng.integers(-5, 5, (m, 64)).astype(np_type)
        y = sess.run({"X": x})["Y"]
        assert y.dtype == np_type
        np.testing.assert_array_equal(y, x @ w)


@pytest.mark.parametrize("elem,np_type,config", [
    (TensorProto.FLOAT, np.float32, "block 32x32 thread 4x4 k 16"),
    (TensorProto.FLOAT16, np.float16,
     "block 32x32 warp 16x16 thread 2x4 k 32 mma 16x8x16 stages 2")])
def test_static_extents_below_the_block_tile(tmp_path, elem, np_type, config):
    """A product whose static M and N are below the block tile (a
    classifier at batch 3 with 10 classes) gets static per-thread or
    per-warp products all the same, its operands padded to the whole tile.
    Against numpy, K a prime past several k-steps."""
    rng = np.random.default_rng(5)
    m, k, n = 3, 131, 10
    w = rng.uniform(-1, 1, (k, n)).astype(np_type)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], "classifier",
        [helper.make_tensor_value_info("X", elem, [m, k])],
        [helper.make_tensor_value_info("Y", elem, [m, n])],
        [numpy_helper.from_array(w, "W")])
    onnx_model = helper.make_model(graph,
                                   opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    model = tmp_path / "classifier.onnx"
    onnx.save(onnx_model, model)
    options = dict(targets=["cpu"], tile_configs={"gemm": config})
    tiled = dyncc.compile(model, None, emit="tiled", **options)
    marker = "dyncc.mma" if np_type == np.float16 else "dyncc.register_tile"
    assert marker in tiled
    art = tmp_path / "classifier.dyncc"
    dyncc.compile(model, art, **options)
    x = rng.uniform(-1, 1, (m, k)).astype(np_type)
    y = dyncc.load(art).session().run({"X": x})["Y"]
    tol = 1e-5 if np_type == np.float32 else 1e-2
    np.testing.assert_allclose(y.astype(np.float64),
                               x.astype(np.float64) @ w.astype(np.float64),
                               rtol=tol, atol=tol)


def test_multi_axis_reductions_are_searched_rows():
    """multi_axis_row_case's reduce kernels (the instance norms, the max
    over [H, W], the LayerNorm over [4, 8]) are each a row problem the tile
    search took (dyncc-collapse-row-dims), keyed on the batch and the
    collapsed row's length, not kernels left to the tile levels."""
    import json
    model, shapes, _ = multi_axis_row_case()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "multi_axis_row.onnx"
        onnx.save(model, str(path))
        plan = json.loads(dyncc.compile(path, None, targets=["cpu"],
                                        dims={s: (1, 512) for s in shapes[0]},
                                        emit="plan"))
    reduces = [g for g in plan["groups"] if g["kind"] == "reduce"]
    assert len(reduces) == 4, [g["name"] for g in plan["groups"]]
    for group in reduces:
        select = group.get("select", {})
        assert select.get("model") == "rows" and select.get("reduction") == 1, \
            (group["name"], select.get("reason"))
    keys = sorted(tuple(g["select"]["keys"]) for g in reduces)
    assert keys.count(("N", "H*W")) == 3 and ("B", "L") in keys, keys


def test_column_reductions_are_searched():
    """column_reduce_case's five reduce kernels are column problems the tile
    search took (model rows, `columns`), not kernels left to the fixed
    tiles; the two whose results span the reduced axis (the softmax over 5
    channels, the LayerNorm over 3) take it whole in each variant or split
    it over lanes (`reduce column`), and the other three's splits are
    candidates too."""
    import json
    model, shapes, _ = column_reduce_case()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "column_reduce.onnx"
        onnx.save(model, str(path))
        plan = json.loads(dyncc.compile(path, None, targets=["cpu"],
                                        dims={s: (1, 512) for s in shapes[0]},
                                        emit="plan"))
    reduces = [g for g in plan["groups"] if g["kind"] == "reduce"]
    assert len(reduces) == 5, [g["name"] for g in plan["groups"]]
    spanned = 0
    for group in reduces:
        select = group.get("select", {})
        assert select.get("model") == "rows" and select.get("columns") == 1, \
            (group["name"], select.get("reason"))
        configs = [plan["kernels"][v["kernel"]]["config"] for v in group["variants"]]
        split = r"block (1x)*\d+x\d+ thread (1x)*1 k 64 reduce column"
        # The fourth dimension is the extent each output folds: 3 or 5
        # channels for the two spanning kernels.
        column = select["dim_values"][3] if select["dim_keys"][3] < 0 else 0
        if column in (3, 5):
            spanned += 1
            assert all(re.fullmatch(r"block 1x%dx\d+x\d+ thread 1x%dx1x\d+ k 0"
                                    % (column, column), c)
                       or re.fullmatch(split, c) for c in configs), configs
    assert spanned == 2


def test_wide_and_unbounded_columns(tmp_path, ort):
    """A channels-first LayerNorm over 1536 channels (ConvNeXt-L) is searched
    with one element a thread where a thread's tile holds the 1536 channels
    of its column (at most cost::kMaxColumnTileBytes), or with the channels
    split over lanes (`reduce column`); a softmax over a dynamic axis of up
    to 8192, which no thread's tile can hold whole, is searched with splits
    alone (before those, it had no candidate and kept the fixed tiles).
    Every variant of both, forced, matches onnxruntime."""
    rng = np.random.default_rng(2)
    c = 1536
    nodes = [helper.make_node("ReduceMean", ["X"], ["u"], axes=[1]),
             helper.make_node("Sub", ["X", "u"], ["d"]),
             helper.make_node("Mul", ["d", "d"], ["d2"]),
             helper.make_node("ReduceMean", ["d2"], ["v"], axes=[1]),
             helper.make_node("Add", ["v", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["s"]),
             helper.make_node("Div", ["d", "s"], ["n"]),
             helper.make_node("Mul", ["n", "g"], ["Y"]),
             helper.make_node("Softmax", ["Z"], ["W"], axis=1)]
    inits = [numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
             _const("g", rng, (c, 1, 1))]
    model = _model(nodes, [_vi("X", F, ["N", c, "H", "W"]),
                           _vi("Z", F, ["N", "C", 6])],
                   [_vi("Y", F, ["N", c, "H", "W"]), _vi("W", F, ["N", "C", 6])],
                   inits, opset=13)
    path = tmp_path / "wide.onnx"
    onnx.save(model, str(path))
    dims = {"N": (1, 2), "H": (1, 16), "W": (1, 16)}
    plan, art_path = compile_with_plan(path, tmp_path / "wide.dyncc",
                                       targets=["cpu"], dims=dims)
    reasons = {}
    for g in plan["groups"]:
        configs = [plan["kernels"][v["kernel"]]["config"] for v in g["variants"]]
        reasons[g["name"]] = (g["select"].get("reason"), configs)
    assert all(r[0] is None for r in reasons.values()), reasons
    split = r"block (1x)*\d+x\d+ thread (1x)*1 k 64 reduce column"
    for reason, configs in reasons.values():
        if any("1536" in c for c in configs):
            assert all(re.fullmatch(r"block 1x1536x\d+x\d+ thread 1x1536x1x1 k 0",
                                    c) or re.fullmatch(split, c)
                       for c in configs), configs
        else:
            assert all(re.fullmatch(split, c) for c in configs), configs
    art = dyncc.load(art_path)
    session = art.session("cpu")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    variants = [len(g["variants"]) for g in plan["groups"]]
    forced = [(g, v) for g, count in enumerate(variants) for v in range(count)]
    for g, v in forced + [(None, None)]:
        if g is not None:
            session.force_variant(g, v)
        for n, h, w, cc in [(1, 1, 1, 1), (2, 7, 13, 5), (1, 16, 3, 130)]:
            feeds = {"X": rng.uniform(-2, 2, (n, c, h, w)).astype(np.float32),
                     "Z": rng.uniform(-2, 2, (n, cc, 6)).astype(np.float32)}
            got = session.run(feeds)
            for name, want in zip(["Y", "W"], ref.run(["Y", "W"], feeds)):
                np.testing.assert_allclose(
                    got[name], want, rtol=1e-4, atol=1e-5,
                    err_msg=f"{name} at {(n, h, w, cc)}, variant {g}/{v}")
        if g is not None:
            session.force_variant(g, None)


@pytest.mark.parametrize("norm", ["instance", "layer"])
def test_norm_with_positional_epilogue_matches_onnxruntime(tmp_path, ort, norm):
    """A norm over dynamic image axes whose fused epilogue reads them in
    part (a product with a `[1, 1, 1, W]` input), which
    dyncc-collapse-row-dims does not take: an InstanceNormalization's
    kernel keeps its loops, a LayerNormalization from axis 1 is flattened
    into rows first (Decompose); both compile and match onnxruntime."""
    rng = np.random.default_rng(3)
    if norm == "instance":
        node = helper.make_node("InstanceNormalization", ["X", "s", "b"], ["I"])
        inits = [_const("s", rng, (3,)), _const("b", rng, (3,))]
    else:
        node = helper.make_node("LayerNormalization", ["X", "one"], ["I"],
                                axis=1)
        inits = [numpy_helper.from_array(np.array(1.0, np.float32), "one")]
    model = _model([node, helper.make_node("Mul", ["I", "P"], ["Y"])],
                   [_vi("X", F, ["N", 3, "H", "W"]), _vi("P", F, [1, 1, 1, "W"])],
                   [_vi("Y", F, ["N", 3, "H", "W"])], inits)
    path = tmp_path / f"{norm}.onnx"
    onnx.save(model, str(path))
    art = dyncc.compile(path, tmp_path / f"{norm}.dyncc", targets=["cpu"],
                        dims={"N": (1, 8), "H": (1, 64), "W": (1, 64)})
    session = dyncc.load(art).session("cpu")
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n, h, w in [(1, 1, 1), (2, 3, 5), (1, 7, 13), (3, 17, 4), (1, 33, 31)]:
        feeds = {"X": rng.uniform(-3, 3, (n, 3, h, w)).astype(np.float32),
                 "P": rng.uniform(-1, 1, (1, 1, 1, w)).astype(np.float32)}
        np.testing.assert_allclose(session.run(feeds)["Y"],
                                   ref.run(None, feeds)[0], rtol=1e-4,
                                   atol=1e-4, err_msg=f"{norm} at {n, h, w}")
