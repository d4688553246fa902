# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU check's cuDNN baseline for CNN blocks (scripts/gpu_check.py
TorchGraph): the ResNet-50 stem block's graph, its batch norms folded into
the convs, run through a numpy stand-in for torch.nn.functional, matches
onnxruntime. On the GPU the same program runs torch's functions; a wrong
baseline would make the check's ratios meaningless."""
import importlib.util

import numpy as np
import onnx
import pytest

from conftest import ROOT, SHARED_MODELS, load_input_script, require
from dyncc_models import reference


def load_check():
    spec = importlib.util.spec_from_file_location(
        "gpu_check", ROOT / "scripts" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NumpyFunctional:
    """conv1d, conv2d, relu, max_pool2d and softmax of torch.nn.functional,
    on NCW and NCHW numpy arrays, one tap (and group) at a time."""

    @staticmethod
    def softmax(x, dim):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    @staticmethod
    def conv2d(x, w, b, stride, padding, dilation, groups):
        n, c, h, wd = x.shape
        o, cg, kh, kw = w.shape
        assert c == cg * groups
        og = o // groups
        ph, pw = padding
        xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        oh = (h + 2 * ph - dilation[0] * (kh - 1) - 1) // stride[0] + 1
        ow = (wd + 2 * pw - dilation[1] * (kw - 1) - 1) // stride[1] + 1
        out = np.zeros((n, o, oh, ow), np.float64)
        for i in range(kh):
            for j in range(kw):
                r, s = i * dilation[0], j * dilation[1]
                window = xp[:, :, r:r + stride[0] * (oh - 1) + 1:stride[0],
                            s:s + stride[1] * (ow - 1) + 1:stride[1]]
                for g in range(groups):
                    out[:, g * og:(g + 1) * og] += np.einsum(
                        "nchw,oc->nohw", window[:, g * cg:(g + 1) * cg],
                        w[g * og:(g + 1) * og, :, i, j])
        return (out + b[None, :, None, None]).astype(np.float32)

    @staticmethod
    def conv1d(x, w, b, stride, padding, dilation, groups):
        # conv2d over one row.
        y = NumpyFunctional.conv2d(x[:, :, None, :], w[:, :, None, :], b,
                                   [1, stride[0]], [0, padding[0]],
                                   [1, dilation[0]], groups)
        return y[:, :, 0, :]

    @staticmethod
    def relu(x):
        return np.maximum(x, 0)

    @staticmethod
    def max_pool2d(x, kernel, stride, padding):
        ph, pw = padding
        xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)),
                    constant_values=-np.inf)
        oh = (x.shape[2] + 2 * ph - kernel[0]) // stride[0] + 1
        ow = (x.shape[3] + 2 * pw - kernel[1]) // stride[1] + 1
        out = np.full(x.shape[:2] + (oh, ow), -np.inf, x.dtype)
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                out = np.maximum(out, xp[:, :, i:i + stride[0] * (oh - 1) + 1:
                                         stride[0],
                                         j:j + stride[1] * (ow - 1) + 1:
                                         stride[1]])
        return out


def error_against_onnxruntime(graph, path, dynamic):
    """`graph`'s output on random inputs of the model at `path` (every
    dynamic dimension at `dynamic`) against onnxruntime's: the largest
    difference over the largest value."""
    feeds = reference.random_feeds(path, dynamic)
    (have,) = graph(feeds)
    (want,) = reference.onnxruntime_session(path).run(None, feeds)
    assert have.shape == want.shape
    return np.abs(have - want).max() / np.abs(want).max()


def test_stem_block_graph_matches_onnxruntime():
    path = SHARED_MODELS / "resnet50_stem_residual_block_opset11.onnx"
    require(path.exists(), "shared models missing")
    check = load_check()
    model = onnx.load(str(path))
    graph = check.TorchGraph(model, NumpyFunctional, lambda a: a)
    # Five convs, each batch norm folded into its conv: no affine steps.
    ops = [step["op"] for step in graph.steps]
    assert ops.count("conv") == 5 and "affine" not in ops
    error = error_against_onnxruntime(graph, path, 2)
    assert error < 1e-4, error


@pytest.mark.parametrize("channels,out_channels,taps,stride,pad,groups,dims", [
    (12, 12, 3, 2, 1, 12, [9, 11]),
    (12, 24, 1, 1, 0, 3, [7, 7]),
    (6, 8, 5, 2, 2, 2, [40]),
    (1, 4, 10, 5, 0, 1, [64]),
])
def test_grouped_and_1d_graphs_match_onnxruntime(tmp_path, channels,
                                                 out_channels, taps, stride,
                                                 pad, groups, dims):
    # The bundle's grouped, depthwise and 1-D convs (--grouped-convs): the
    # baseline calls conv2d with the groups, or conv1d on [N, C, L].
    path = tmp_path / "conv.onnx"
    load_input_script("make_conv").make_conv(path, channels, out_channels, taps, stride, pad, 1,
                     "f32", ["B", channels, *dims], seed=1, groups=groups)
    graph = load_check().TorchGraph(onnx.load(str(path)), NumpyFunctional,
                                    lambda a: a)
    assert [s["op"] for s in graph.steps] == ["conv", "relu"]
    assert graph.steps[0]["groups"] == groups
    error = error_against_onnxruntime(graph, path, 2)
    assert error < 1e-5, error


@pytest.mark.parametrize("kind,steps", [
    ("softmax", ["softmax"]),
    ("layernorm", ["mean", "sub", "mul", "mean", "sum", "sqrt", "div", "mul",
                   "sum"]),
    ("mean", ["mean"]),
])
def test_column_reduction_graphs_match_onnxruntime(tmp_path, kind, steps):
    # The bundle's column reductions (--columns): a softmax over channels,
    # ConvNeXt's channels-first LayerNorm (its scale, shift and epsilon
    # initializers read by the elementwise steps) and a mean over positions.
    import sys
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from column_reductions import make_model
    path = tmp_path / f"{kind}.onnx"
    make_model(path, kind, 12, batch="B", spatial=(5, 7), length=9)
    graph = load_check().TorchGraph(onnx.load(str(path)), NumpyFunctional,
                                    lambda a: a)
    assert [s["op"] for s in graph.steps] == steps
    error = error_against_onnxruntime(graph, path, 2)
    assert error < 1e-5, error


def test_1d_conv_with_default_attributes_and_batch_norms(tmp_path):
    # A batch norm over the [N, C, L] input, kept as a step, then a 1-D
    # conv with no strides, dilations or pads written (ONNX's defaults, one
    # per spatial dimension), its batch norm folded into its [F, C, K]
    # weights.
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 3, 3)).astype(np.float32)
    stats = [numpy_helper.from_array(
        (rng.random(n) + 0.5).astype(np.float32), name + str(n))
        for n in (3, 4) for name in ("s", "b", "m", "v")]
    graph = helper.make_graph(
        [helper.make_node("BatchNormalization",
                          ["X", "s3", "b3", "m3", "v3"], ["N"]),
         helper.make_node("Conv", ["N", "W"], ["C"]),
         helper.make_node("BatchNormalization",
                          ["C", "s4", "b4", "m4", "v4"], ["Y"])],
        "conv1d_bn", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                    ["B", 3, 10])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W")] + stats)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    path = tmp_path / "conv1d_bn.onnx"
    onnx.save(model, path)
    graph = load_check().TorchGraph(model, NumpyFunctional, lambda a: a)
    assert [s["op"] for s in graph.steps] == ["affine", "conv"]
    assert graph.steps[1]["stride"] == [1] and graph.steps[1]["padding"] == [0]
    error = error_against_onnxruntime(graph, path, 2)
    assert error < 1e-5, error


def test_half_graph_keeps_half_weights(tmp_path):
    # An f16 model (a one-pixel conv with a residual): the baseline's
    # weights are f16 like its inputs, so torch runs cuDNN's f16 convs.
    path = tmp_path / "pointwise.onnx"
    load_input_script("make_pointwise_conv").make_pointwise_conv(path, 16, 8, "float16", "residual")
    graph = load_check().TorchGraph(onnx.load(str(path)), NumpyFunctional,
                                    lambda a: a)
    assert [s["op"] for s in graph.steps] == ["conv", "sum", "relu"]
    assert graph.steps[0]["w"].dtype == np.float16
    feeds = reference.random_feeds(path, 3)
    (have,) = graph(feeds)
    (want,) = reference.onnxruntime_session(path).run(None, feeds)
    error = np.abs(have - want.astype(np.float32)).max() / np.abs(want).max()
    assert error < 2e-3, error


def test_batch_norm_of_a_shared_conv_output_is_not_folded():
    # The conv's output is read by the batch norm and by the Add: folding
    # would change what the Add reads.
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 3, 3, 3)).astype(np.float32)
    stats = [numpy_helper.from_array(
        (rng.random(3) + 0.5).astype(np.float32), name)
        for name in ("s", "b", "m", "v")]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W"], ["C"], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["C", "s", "b", "m", "v"],
                          ["N"]),
         helper.make_node("Add", ["C", "N"], ["Y"])],
        "shared", [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                 [1, 3, 5, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "W")] + stats)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    check = load_check()
    torch_graph = check.TorchGraph(model, NumpyFunctional, lambda a: a)
    assert [s["op"] for s in torch_graph.steps] == ["conv", "affine", "sum"]
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    (have,) = torch_graph({"X": x})
    import onnxruntime as ort
    (want,) = ort.InferenceSession(model.SerializeToString()).run(
        None, {"X": x})
    assert np.abs(have - want).max() / np.abs(want).max() < 1e-5


def test_an_op_with_no_baseline_is_named():
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Sigmoid", ["X"], ["Y"], name="gate")], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph)
    with pytest.raises(ValueError, match="node gate: Sigmoid has no torch "
                                         "baseline"):
        load_check().TorchGraph(model, NumpyFunctional, lambda a: a)


@pytest.mark.parametrize("node, message", [
    (("Conv", ["X", "W"], ["Y"], "skewed", {"pads": [0, 0, 1, 1]}),
     r"node skewed: asymmetric pads \[0, 0, 1, 1\]"),
    (("MaxPool", ["X"], ["Y"], "ceil", {"kernel_shape": [2, 2],
                                        "ceil_mode": 1}),
     "node ceil: ceil mode or dilation"),
])
def test_a_form_with_no_baseline_is_named(node, message):
    # torch's conv2d and max_pool2d pad symmetrically, and the baseline
    # does not build ceil-mode or dilated pools.
    from onnx import TensorProto, helper, numpy_helper
    op, inputs, outputs, name, attrs = node
    weights = [numpy_helper.from_array(np.ones((3, 3, 2, 2), np.float32),
                                       "W")]
    graph = helper.make_graph(
        [helper.make_node(op, inputs, outputs, name=name, **attrs)], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 5, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
        weights)
    model = helper.make_model(graph)
    with pytest.raises(ValueError, match=message):
        load_check().TorchGraph(model, NumpyFunctional, lambda a: a)
