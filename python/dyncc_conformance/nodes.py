# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Helpers over the ONNX backend node tests (/usr/share/libonnx-testdata).

Shared by the shape-propagation test (python/tests/test_node_shapes.py)
and the numeric harness (run_node_test, below; issue 8): which tests exist,
which of their graph inputs are shape-like operands to freeze, reading
TensorProto files, evaluating the symbolic expressions dyncc prints, and
running one test through the whole pipeline on the CPU target.
"""
import os
import re
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from .compare import compare, load, node_tolerances, npy_safe, save  # noqa: F401

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


def read_data_set(model, data):
    """The inputs ({name: array}) and expected outputs ([array or None], in
    graph output order) of data set directory `data` of `model`."""
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
    return inputs, outputs


def load_case(test_dir):
    """Returns (model, inputs {name: array}, outputs [array]) of the test's
    first data set."""
    model = onnx.load(str(test_dir / "model.onnx"))
    return (model, *read_data_set(model, test_dir / "test_data_set_0"))


# The operands of ops whose sizes dyncc reads or computes from data at run
# time (`sym.bind`): with `thaw`, they stay inputs. (A Slice's axes and
# steps must still be constants.)
DATA_SIZE_OPS = {"Reshape": [1], "Expand": [1], "Tile": [1],
                 "ConstantOfShape": [0], "Slice": [1, 2], "Range": [0, 1, 2]}


def frozen_inputs(model, thaw=()):
    """Graph input names that feed shape-like operand positions, but for
    the positions `thaw` gives per op (a dict; a list or tuple of op names
    thaws every position of those ops)."""
    if not isinstance(thaw, dict):
        thaw = {op: SHAPE_OPERANDS.get(op, []) for op in thaw}
    graph_inputs = {i.name for i in model.graph.input}
    frozen = set()
    for node in model.graph.node:
        for pos in SHAPE_OPERANDS.get(node.op_type, []):
            if pos in thaw.get(node.op_type, ()):
                continue
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


# -- the numeric harness (issue 8) -------------------------------------------

# Every test ends in exactly one of these; "expected failure" is a test on
# EXPECTED_FAILURES (with its reason) that does not pass.
CATEGORIES = ("pass", "fail", "compile error", "unsupported", "out of scope",
              "expected failure")
MODES = ("static", "dynamic")


class Outcome:
    """How one node test ended in one mode: `category` (one of CATEGORIES)
    and `detail` (the op names for unsupported, the reason otherwise)."""

    def __init__(self, test, mode, category, detail="", seconds=0.0):
        assert category in CATEGORIES, category
        self.test, self.mode = test, mode
        self.category, self.detail, self.seconds = category, detail, seconds

    def __repr__(self):
        return f"{self.test} [{self.mode}]: {self.category}" + (
            f": {self.detail}" if self.detail else "")


def data_sets(test_dir):
    return sorted(p for p in test_dir.iterdir() if p.name.startswith("test_data_set_"))


def _last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    line = lines[-1] if lines else "(no message)"
    return line.removeprefix("dyncc: error: ").removeprefix("dyncc-run: error: ")


def run_node_test(test_dir, mode, driver, work, supported_ops,
                  expected_failures=None, timeout=300, thaw=(),
                  gpu_targets=(), keep=None):
    """Runs node test `test_dir` through `dyncc compile --target cpu`
    (with --force-dynamic when `mode` is "dynamic", shape-like inputs frozen
    from the test's own data, except the operands `thaw` gives
    (frozen_inputs), whose sizes are then bound from the data at run time)
    and `dyncc run` on every
    data set, in `work` (an empty directory), and returns its Outcome.
    `gpu_targets` (sm_80, ...) are compiled into the artifact too, through
    PTX and ptxas where the toolkit is: a test that does not compile for
    one is a compile error, though only the CPU runs it here. A test that
    passes is kept in directory `keep` where one is given (the GPU-check
    bundle): its artifact, each data set's inputs (the frozen ones left out)
    and expected outputs as .npy files, and case.json naming them."""
    import subprocess
    import time
    start = time.monotonic()
    test_dir, work = Path(test_dir), Path(work)

    def done(category, detail=""):
        listed = (expected_failures or {}).get((test_dir.name, mode))
        if listed is not None:
            if category == "pass":
                category, detail = "fail", (
                    "passes but is listed in EXPECTED_FAILURES "
                    f"({listed}): remove it from the list")
            elif category in ("fail", "compile error"):
                category, detail = "expected failure", f"{listed} [{detail}]"
        return Outcome(test_dir.name, mode, category, detail,
                       time.monotonic() - start)

    model = onnx.load(str(test_dir / "model.onnx"))
    reason = out_of_scope(model)
    if reason:
        return done("out of scope", reason)
    missing = sorted({n.op_type for n in model.graph.node} - set(supported_ops))
    if missing:
        return done("unsupported", ", ".join(missing))

    frozen = frozen_inputs(model, thaw)
    names = [out.name for out in model.graph.output]
    sets = []
    for data in data_sets(test_dir):
        inputs, outputs = read_data_set(model, data)
        sets.append((inputs, list(zip(names, outputs))))
    if not sets:
        return done("fail", "the test has no test_data_set")

    artifact = work / "out.dyncc"
    cmd = [str(driver), "compile", str(test_dir / "model.onnx"), "-o",
           str(artifact), "--target", ",".join(["cpu", *gpu_targets]),
           "--quiet"]
    if mode == "dynamic":
        cmd.append("--force-dynamic")
        # A thawed shape operand's length is the result's rank: static.
        for name in sorted(frozen_inputs(model) - frozen):
            if name in sets[0][0] and np.ndim(sets[0][0][name]) == 1:
                cmd += ["--dim", re.sub(r"\W", "_", name) +
                        f"_d0={len(sets[0][0][name])}"]
    for k, name in enumerate(sorted(frozen)):
        if name not in sets[0][0]:
            continue
        path = work / f"frozen{k}.npy"
        save(path, sets[0][0][name])
        cmd += ["--freeze-input", f"{name}={path}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return done("compile error", f"compile timed out after {timeout} s")
    if proc.returncode != 0:
        if proc.returncode < 0:
            return done("compile error", f"compiler crashed (signal "
                        f"{-proc.returncode}): {_last_line(proc.stderr)}")
        lowering = re.search(r"'dg\.(\w+)' op (.* has no lowering yet)",
                             proc.stderr)
        if lowering:
            return done("unsupported", f"{lowering.group(1)}: "
                        f"{lowering.group(2)}")
        return done("compile error", _last_line(proc.stderr))

    # `dyncc-run` beside the driver is `dyncc run` without the compiler
    # (the same run tool, lib/Runtime/Tool): it starts in 2 ms instead of
    # the 45 ms that loading libMLIR.so and libLLVM.so takes, for each of
    # the some 2000 runs of a conformance pass.
    runner = Path(driver).parent / "dyncc-run"
    run_cmd = ([str(runner)] if os.access(runner, os.X_OK)
               else [str(driver), "run"])
    kept = []
    for index, (inputs, outputs) in enumerate(sets):
        out_dir = work / f"out{index}"
        out_dir.mkdir()
        cmd = [*run_cmd, str(artifact), "--output-dir", str(out_dir),
               "--quiet"]
        kept.append({"inputs": {}, "outputs": {}})
        for k, (name, value) in enumerate(inputs.items()):
            if name in frozen:
                continue
            path = work / f"in{index}_{k}.npy"
            save(path, value)
            cmd += ["--input", f"{name}={path}"]
            kept[-1]["inputs"][name] = path.name
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=timeout)
        except subprocess.TimeoutExpired:
            return done("fail", f"run timed out after {timeout} s")
        if proc.returncode != 0:
            how = (f"crashed (signal {-proc.returncode})"
                   if proc.returncode < 0 else "failed")
            return done("fail", f"run {how}: {_last_line(proc.stderr)}")
        for name, want in outputs:
            if want is None:
                continue
            path = out_dir / npy_safe(name)
            if not path.exists():
                return done("fail", f"no output '{name}'")
            problem = compare(name, load(path, want), want)
            if problem:
                return done("fail", problem)
    if keep is not None:
        import json
        import shutil
        keep = Path(keep)
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy2(artifact, keep / "model.dyncc")
        for index, ((inputs, outputs), case) in enumerate(zip(sets, kept)):
            for name in case["inputs"].values():
                shutil.copy2(work / name, keep / name)
            for j, (name, want) in enumerate(outputs):
                if want is not None:
                    case["outputs"][name] = f"out{index}_{j}.npy"
                    save(keep / case["outputs"][name], want)
        (keep / "case.json").write_text(json.dumps({
            "test": test_dir.name, "mode": mode, "sets": kept}, indent=1))
    return done("pass")
