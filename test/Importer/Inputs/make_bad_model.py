# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes small ONNX models for the importer tests: make_bad_model.py KIND OUT.

Most kinds are invalid in one way each (the importer must name the problem
in one line); `opset-*` kinds are valid models of one op at the opset where
its form changed; `freeze` and `dims` feed the driver flags. The checker is
not run: the bad models are bad on purpose.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def tensor(name, dims, elem=F):
    return helper.make_tensor_value_info(name, elem, dims)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(nodes, inputs, outputs, inits=(), opset=13, name="bad"):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def build(kind):
    x2 = tensor("X", ["B", 8])
    y = tensor("Y", None)
    if kind == "missing-initializer":
        # W is neither an initializer, a graph input nor a node output.
        return model([helper.make_node("MatMul", ["X", "W"], ["Y"], name="proj")],
                     [x2], [y])
    if kind == "undefined-input":
        return model([helper.make_node("Relu", ["X"], ["T"], name="first"),
                      helper.make_node("Add", ["T", "typo"], ["Y"], name="sum")],
                     [x2], [y])
    if kind == "attr-type":
        # perm must be INTS.
        node = helper.make_node("Transpose", ["X"], ["Y"], name="flip")
        node.attribute.append(helper.make_attribute("perm", [1.0, 0.0]))
        return model([node], [x2], [y])
    if kind == "attr-type-int":
        node = helper.make_node("Concat", ["X", "X"], ["Y"], name="join")
        node.attribute.append(helper.make_attribute("axis", "one"))
        return model([node], [x2], [y])
    if kind == "perm-rank":
        # A perm of length 3 for a rank-2 input.
        return model([helper.make_node("Transpose", ["X"], ["Y"], name="flip",
                                       perm=[2, 0, 1])], [x2], [y])
    if kind == "matmul-rank":
        # A scalar has no dimension to contract.
        return model([helper.make_node("MatMul", ["S", "W"], ["Y"], name="mm")],
                     [tensor("S", []), tensor("W", [8, 4])], [y])
    if kind == "add-shapes":
        return model([helper.make_node("Add", ["A", "C"], ["Y"], name="plus")],
                     [tensor("A", [2, 3]), tensor("C", [4, 3])], [y])
    if kind == "concat-shapes":
        return model([helper.make_node("Concat", ["A", "C"], ["Y"], name="join",
                                       axis=0)],
                     [tensor("A", ["N", 3]), tensor("C", ["M", 5])], [y])
    if kind == "unsupported-op":
        return model([helper.make_node("Relu", ["X"], ["T"], name="first"),
                      helper.make_node("Einsum", ["T", "T"], ["Y"], name="contract",
                                       equation="ij,ij->i")], [x2], [y])
    if kind == "unsupported-domain":
        return model([helper.make_node("FusedGemm", ["X", "X"], ["Y"], name="fused",
                                       domain="com.microsoft")], [x2], [y])
    if kind == "pad-mode":
        return model([helper.make_node("Pad", ["X", "pads"], ["Y"], name="padding",
                                       mode="wrap")],
                     [x2], [y], [ints("pads", [0, 1, 0, 1])], opset=13)
    if kind == "instance-norm-scale":
        # A scale of 4 values for 3 channels.
        scale = numpy_helper.from_array(np.ones(4, np.float32), "S")
        shift = numpy_helper.from_array(np.zeros(3, np.float32), "B")
        return model([helper.make_node("InstanceNormalization", ["X", "S", "B"],
                                       ["Y"], name="norm")],
                     [tensor("X", ["N", 3, "H", "W"])], [y], [scale, shift],
                     opset=17)
    if kind == "auto-pad":
        w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "W")
        return model([helper.make_node("Conv", ["X", "W"], ["Y"], name="conv",
                                       auto_pad="FOO")],
                     [tensor("X", ["B", 3, 8, 8])], [y], [w])
    if kind == "string-input":
        return model([helper.make_node("Identity", ["S"], ["Y"], name="id")],
                     [tensor("S", ["B"], TensorProto.STRING)], [y])
    if kind == "string-initializer":
        s = helper.make_tensor("names", TensorProto.STRING, [2], [b"a", b"b"])
        return model([helper.make_node("Identity", ["names"], ["Y"], name="id")],
                     [], [y], [s])
    if kind == "sequence-input":
        seq = helper.make_tensor_sequence_value_info("seq", F, ["B", 8])
        return model([helper.make_node("SequenceAt", ["seq", "i"], ["Y"],
                                       name="at")],
                     [seq, tensor("i", [], I64)], [y])
    if kind == "cycle":
        # a -> b -> a, and nothing reaches either from the graph input.
        return model([helper.make_node("Relu", ["X"], ["T"], name="entry"),
                      helper.make_node("Add", ["T", "V"], ["U"], name="a"),
                      helper.make_node("Relu", ["U"], ["V"], name="b"),
                      helper.make_node("Relu", ["U"], ["Y"], name="exit")],
                     [x2], [y])
    if kind == "freeze":
        # Reshape to a shape that is a graph input: frozen, it is a constant.
        return model([helper.make_node("Reshape", ["X", "shape"], ["Y"],
                                       name="view")],
                     [tensor("X", [4, 6]), tensor("shape", [3], I64)], [y],
                     name="freeze")
    if kind == "dims":
        # Static sizes 1, 0 and 7, and a named symbol L.
        return model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
                     [tensor("X", [1, 7, "L", 0])], [y], name="dims")
    if kind.startswith("opset-"):
        return build_opset(kind[len("opset-"):])
    raise SystemExit("unknown kind " + kind)


def build_opset(kind):
    """One op at one opset: OP-OPSET."""
    op, opset = kind.rsplit("-", 1)
    opset = int(opset)
    y = tensor("Y", None)
    x = tensor("X", ["B", 1, 8, 6])
    inits = []
    if op == "squeeze":
        if opset < 13:
            node = helper.make_node("Squeeze", ["X"], ["Y"], name="sq", axes=[1])
        else:
            node = helper.make_node("Squeeze", ["X", "axes"], ["Y"], name="sq")
            inits = [ints("axes", [1])]
    elif op == "unsqueeze":
        if opset < 13:
            node = helper.make_node("Unsqueeze", ["X"], ["Y"], name="unsq",
                                    axes=[0, 5])
        else:
            node = helper.make_node("Unsqueeze", ["X", "axes"], ["Y"], name="unsq")
            inits = [ints("axes", [0, 5])]
    elif op == "slice":
        # [:, :, 2:-1, ::2] in both forms (steps only as an input).
        if opset < 10:
            node = helper.make_node("Slice", ["X"], ["Y"], name="sl",
                                    starts=[2], ends=[-1], axes=[2])
        else:
            node = helper.make_node("Slice", ["X", "starts", "ends", "axes",
                                              "steps"], ["Y"], name="sl")
            inits = [ints("starts", [2, 0]), ints("ends", [-1, 100]),
                     ints("axes", [2, 3]), ints("steps", [1, 2])]
    elif op == "clip":
        if opset < 11:
            node = helper.make_node("Clip", ["X"], ["Y"], name="clamp",
                                    min=0.0, max=6.0)
        else:
            node = helper.make_node("Clip", ["X", "lo", "hi"], ["Y"], name="clamp")
            inits = [numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
                     numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    elif op == "reducesum":
        if opset < 13:
            node = helper.make_node("ReduceSum", ["X"], ["Y"], name="sum",
                                    axes=[2], keepdims=0)
        else:
            node = helper.make_node("ReduceSum", ["X", "axes"], ["Y"], name="sum",
                                    keepdims=0)
            inits = [ints("axes", [2])]
    elif op == "split":
        outs = ["Y", "Z"]
        if opset < 13:
            node = helper.make_node("Split", ["X"], outs, name="parts", axis=2,
                                    split=[3, 5])
        else:
            node = helper.make_node("Split", ["X", "split"], outs, name="parts",
                                    axis=2)
            inits = [ints("split", [3, 5])]
        return model([node], [x], [y, tensor("Z", None)], inits, opset,
                     name="split")
    elif op == "pad":
        if opset < 11:
            node = helper.make_node("Pad", ["X"], ["Y"], name="padding",
                                    pads=[0, 0, 1, 2, 0, 0, 3, 4], value=1.0)
        else:
            node = helper.make_node("Pad", ["X", "pads"], ["Y"], name="padding")
            inits = [ints("pads", [0, 0, 1, 2, 0, 0, 3, 4])]
    elif op == "softmax":
        node = helper.make_node("Softmax", ["X"], ["Y"], name="probs")
    else:
        raise SystemExit("unknown opset kind " + kind)
    return model([node], [x], [y], inits, opset, name=op)


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    onnx.save(build(kind), out)
