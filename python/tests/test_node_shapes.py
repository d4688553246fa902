# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Shape propagation, fusion and outlining on the ONNX backend node tests,
static and with --force-dynamic: every test whose ops dyncc imports must
import, propagate, fuse and outline into kernel functions that verify, and
the propagated output shapes, instantiated at the symbol values the test's
inputs bind, must equal the expected outputs' shapes.

Tests with an op dyncc does not import yet, or an op form it does not lower
to linalg yet (dyncc's error says "has no lowering yet"), are skipped with
the op named;
out-of-scope tests (strings, sequences, control flow) with the reason.
"""
import re
import subprocess

import numpy as np
import pytest

from dyncc_conformance import nodes as onnx_nodes
from conftest import require

TESTS = onnx_nodes.list_tests()


def test_node_tests_present():
    require(len(TESTS) > 0, f"no ONNX node tests in {onnx_nodes.NODE_DIR}")


def supported_ops(bin_dir):
    out = subprocess.run([bin_dir / "dyncc", "--list-ops"], capture_output=True,
                         text=True, check=True).stdout
    return set(out.split())


@pytest.fixture(scope="module")
def ops(bin_dir):
    return supported_ops(bin_dir)


@pytest.mark.parametrize("mode", ["static", "dynamic"])
@pytest.mark.parametrize("test_dir", TESTS, ids=[t.name for t in TESTS])
def test_shapes(tmp_path, bin_dir, ops, test_dir, mode):
    import onnx
    model = onnx.load(str(test_dir / "model.onnx"))
    reason = onnx_nodes.out_of_scope(model)
    if reason:
        pytest.skip("out of scope: " + reason)
    missing = sorted({n.op_type for n in model.graph.node} - ops)
    if missing:
        pytest.skip("not imported yet: " + ", ".join(missing))
    model, inputs, outputs = onnx_nodes.load_case(test_dir)
    cmd = [bin_dir / "dyncc", "compile", test_dir / "model.onnx",
           "--emit=outlined", "--quiet"]
    if mode == "dynamic":
        cmd.append("--force-dynamic")
    for name in sorted(onnx_nodes.frozen_inputs(model)):
        np.save(tmp_path / f"{len(cmd)}.npy", inputs[name])
        cmd += ["--freeze-input", f"{name}={tmp_path / f'{len(cmd)}.npy'}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    lowering = re.search(r"'dg\.(\w+)' op (.* has no lowering yet)", proc.stderr)
    if proc.returncode != 0 and lowering:
        pytest.skip(f"not lowered yet: {lowering.group(1)} {lowering.group(2)}")
    assert proc.returncode == 0, proc.stderr.strip()
    # Every group became a kernel function (the pass manager verified it),
    # and each dispatch names one.
    graph = proc.stdout.partition("dyncc.kernel")[0]
    assert "dg.fusion" not in proc.stdout
    for callee in re.findall(r"dg\.dispatch @(\w+)", proc.stdout):
        assert f"func.func @{callee}(" in proc.stdout, callee
    # No anonymous dimension in the graph: every `?` has a symbolic shape.
    for line in graph.splitlines()[:-1]:
        for inner in onnx_nodes._tensor_types(line):
            assert "?" not in inner or "#sym.shape" in inner, line
    args, results = onnx_nodes.parse_signature(proc.stdout)

    # Bind symbols from the (non-frozen) inputs' actual shapes.
    frozen = onnx_nodes.frozen_inputs(model)
    init = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in init and i.name not in frozen]
    values = {}
    for name, dims in zip(names, args):
        actual = inputs[name].shape
        if all(d.isdigit() for d in dims):
            continue  # Static: binds no symbol.
        if len(dims) != len(actual):
            pytest.skip(f"the test's input '{name}' has rank {len(actual)} but "
                        f"the model declares rank {len(dims)}")
        for d, a in zip(dims, actual):
            if not d.lstrip("-").isdigit() and d.isidentifier():
                values.setdefault(d, a)
    for dims, expected in zip(results, outputs):
        if expected is None:
            continue
        try:
            got = tuple(onnx_nodes.eval_expr(d, values) for d in dims)
        except KeyError as e:
            # A data-dependent symbol: bound at run time, nothing to compare.
            assert "data_dependent" in proc.stdout, f"unbound symbol {e}"
            continue
        assert got == tuple(expected.shape), f"{dims} -> {got}, expected {expected.shape}"
