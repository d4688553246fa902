# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes attention's Q, K and V projections to argv[1] (H = argv[2], D =
argv[3]; 2 and 32 by default; argv[4] the element type, float32 by
default, or float16; argv[5] the form, torch by default): X[B, S, H*D] times
three weights plus biases, each split into H heads of D and transposed, as
BERT does: Q and V to [B, H, S, D], K to [B, H, D, S]. Fusion makes them one
kernel of three products of one A. make_qkv() returns the weights, for a
reference.

Forms: `torch` multiplies X as it is, as torch.onnx.export writes a Linear;
`tensordot` as TensorFlow and Keras export a Dense on [B, S, H*D]
(tf2onnx, keras2onnx; the shared tfbert_mrpc_tiny): a Reshape to
[B*S, H*D], the MatMul, and a Reshape back to [B, S, H*D] whose shape is
read off X (Shape, Slice, Concat) before the bias."""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

PERMS = {"Q": [0, 2, 1, 3], "K": [0, 2, 3, 1], "V": [0, 2, 1, 3]}


def make_qkv(path, heads=2, depth=32, seed=0, dtype="float32", form="torch"):
    rng = np.random.default_rng(seed)
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    hidden = heads * depth
    nodes, inits, weights = [], [], {}
    inits.append(numpy_helper.from_array(
        np.array([0, 0, heads, depth], np.int64), "split"))
    rows = "X"
    if form == "tensordot":
        inits += [numpy_helper.from_array(np.array([-1, hidden], np.int64), "flat"),
                  numpy_helper.from_array(np.array([hidden], np.int64), "width"),
                  numpy_helper.from_array(np.array([0], np.int64), "zero"),
                  numpy_helper.from_array(np.array([2], np.int64), "two")]
        nodes += [helper.make_node("Reshape", ["X", "flat"], ["rows"]),
                  helper.make_node("Shape", ["X"], ["xshape"]),
                  helper.make_node("Slice", ["xshape", "zero", "two"], ["lead"]),
                  helper.make_node("Concat", ["lead", "width"], ["unflat"], axis=0)]
        rows = "rows"
    elif form != "torch":
        raise ValueError(f"unknown form {form!r}")
    for name, perm in PERMS.items():
        w = rng.uniform(-1, 1, size=(hidden, hidden)).astype(dtype)
        b = rng.uniform(-1, 1, size=(hidden,)).astype(dtype)
        weights[name] = (w, b)
        inits += [numpy_helper.from_array(w, "W" + name),
                  numpy_helper.from_array(b, "b" + name)]
        product = name + "0"
        nodes.append(helper.make_node("MatMul", [rows, "W" + name], [product]))
        if form == "tensordot":
            nodes.append(helper.make_node("Reshape", [product, "unflat"],
                                          [name + "3"]))
            product = name + "3"
        nodes += [helper.make_node("Add", [product, "b" + name], [name + "1"]),
                  helper.make_node("Reshape", [name + "1", "split"], [name + "2"]),
                  helper.make_node("Transpose", [name + "2"], [name], perm=perm)]
    shapes = {"Q": ["B", heads, "S", depth], "K": ["B", heads, depth, "S"],
              "V": ["B", heads, "S", depth]}
    graph = helper.make_graph(
        nodes, "qkv",
        [helper.make_tensor_value_info("X", elem,
                                       ["B", "S", hidden])],
        [helper.make_tensor_value_info(n, elem, shapes[n])
         for n in PERMS], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return weights


if __name__ == "__main__":
    make_qkv(sys.argv[1], *[int(a) for a in sys.argv[2:4]],
             dtype=sys.argv[4] if len(sys.argv) > 4 else "float32",
             form=sys.argv[5] if len(sys.argv) > 5 else "torch")
