# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Helpers over the ONNX backend node tests (/usr/share/libonnx-testdata).

Shared by the shape-propagation conformance test (and later the numeric
one): which tests exist, which of their graph inputs are shape-like operands
to freeze, reading TensorProto files, and evaluating the symbolic
expressions dyncc prints.
"""
import os
import re
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

NODE_DIR = Path(os.environ.get("DYNCC_ONNX_NODE_DIR",
                               "/usr/share/libonnx-testdata/data/node"))

# Operand positions that structure the kernel: frozen with --freeze-input
# from the test's own input file (onnx-mlir's constant-input mode).
SHAPE_OPERANDS = {
    "Reshape": [1], "Expand": [1], "Tile": [1], "ConstantOfShape": [0],
    "Slice": [1, 2, 3, 4], "Squeeze": [1], "Unsqueeze": [1], "Split": [1],
    "Pad": [1, 2], "ReduceSum": [1], "ReduceMean": [1], "ReduceMax": [1],
    "ReduceMin": [1], "ReduceProd": [1], "Resize": [1, 2, 3],
    "Upsample": [1], "Range": [0, 1, 2], "CumSum": [1], "Trilu": [1],
    "Clip": [1, 2], "OneHot": [1],
}

OUT_OF_SCOPE_TYPES = {onnx.TensorProto.STRING}


def list_tests():
    if not NODE_DIR.exists():
        return []
    return sorted(p for p in NODE_DIR.iterdir() if (p / "model.onnx").exists())


def read_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(Path(path).read_bytes())
    return numpy_helper.to_array(t)


def load_case(test_dir):
    """Returns (model, inputs {name: array}, outputs [array])."""
    model = onnx.load(str(test_dir / "model.onnx"))
    data = test_dir / "test_data_set_0"
    init = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init]
    inputs = {}
    for i, name in enumerate(names):
        f = data / f"input_{i}.pb"
        if f.exists():
            inputs[name] = read_pb(f)
    outputs = []
    for i in range(len(model.graph.output)):
        f = data / f"output_{i}.pb"
        outputs.append(read_pb(f) if f.exists() else None)
    return model, inputs, outputs


def frozen_inputs(model):
    """Graph input names that feed shape-like operand positions."""
    graph_inputs = {i.name for i in model.graph.input}
    frozen = set()
    for node in model.graph.node:
        for pos in SHAPE_OPERANDS.get(node.op_type, []):
            if pos < len(node.input) and node.input[pos] in graph_inputs:
                frozen.add(node.input[pos])
    return frozen


def out_of_scope(model):
    """A reason string if the test is out of scope, else None."""
    for node in model.graph.node:
        if node.op_type in ("Loop", "If", "Scan"):
            return f"control flow ({node.op_type})"
    for vi in list(model.graph.input) + list(model.graph.output):
        t = vi.type
        if not t.HasField("tensor_type"):
            return f"'{vi.name}' is a sequence/map/optional value"
        if t.tensor_type.elem_type in OUT_OF_SCOPE_TYPES:
            return f"'{vi.name}' is a STRING tensor"
    for node in model.graph.node:
        if node.op_type in ("Loop", "If", "Scan"):
            return f"control flow ({node.op_type})"
        if node.op_type == "Dropout" and any(a.name == "seed" for a in node.attribute):
            return "training-mode randomness"
        if node.op_type == "BatchNormalization" and any(
                a.name == "training_mode" and a.i for a in node.attribute):
            return "training mode (BatchNormalization statistics update)"
    return None


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def eval_expr(text, values):
    """Evaluates a dyncc dimension expression (the manifest grammar)."""
    tokens = [m.groups() for m in _TOKEN.finditer(text) if m.group(0).strip()]
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else (None, None, None)

    def take(ch):
        nonlocal pos
        if peek()[2] == ch:
            pos += 1
            return True
        return False

    def factor():
        nonlocal pos
        num, ident, ch = peek()
        if take("("):
            v = expr()
            assert take(")")
            return v
        pos += 1
        if num is not None:
            return int(num)
        if take("("):
            a = expr()
            assert take(",")
            b = expr()
            assert take(")")
            return {"floordiv": lambda: a // b, "ceildiv": lambda: -((-a) // b),
                    "mod": lambda: a % b, "min": lambda: min(a, b),
                    "max": lambda: max(a, b)}[ident]()
        return values[ident]

    def term():
        v = factor()
        while take("*"):
            v *= factor()
        return v

    def expr():
        v = term()
        while True:
            if take("+"):
                v += term()
            elif take("-"):
                v -= term()
            else:
                return v

    return expr()


def _tensor_types(text):
    """Yields the inner text of every `tensor<...>` in `text`."""
    i = 0
    while True:
        i = text.find("tensor<", i)
        if i < 0:
            return
        depth, j = 1, i + len("tensor<")
        while depth and j < len(text):
            depth += text[j] == "<"
            depth -= text[j] == ">"
            j += 1
        yield text[i + len("tensor<"):j - 1]
        i = j


def _dims(inner):
    body, _, enc = inner.partition(", #sym.shape<[")
    if enc:
        return split_top(enc[: enc.rindex("]>")])
    parts = body.split("x")
    return parts[:-1]


def parse_signature(ir_text):
    """(argument shapes, result shapes) of func.func @main as lists of
    dimension expression strings."""
    line = next(l for l in ir_text.splitlines() if "func.func @main(" in l)
    head, sep, results = line.partition(") -> ")
    return ([_dims(t) for t in _tensor_types(head)],
            [_dims(t) for t in _tensor_types(results)])


def split_top(text):
    """Splits a comma-separated list at depth 0."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts
