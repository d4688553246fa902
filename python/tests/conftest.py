# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import bisect
import fcntl
import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import dyncc  # noqa: E402
from dyncc._paths import build_dir  # noqa: E402

SHARED_MODELS = Path(os.environ.get("DYNCC_SHARED_DIR", ROOT.parent / "shared")) / "models"
IN_CI = os.environ.get("CI") == "true"


def load_input_script(name):
    """The module of one of the lit tests' input scripts
    (test/Driver/Inputs/NAME.py), which write the models they check."""
    import importlib.util
    path = ROOT / "test" / "Driver" / "Inputs" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def require(condition, reason):
    """Skips with `reason` when `condition` is false; under CI=true a missing
    prerequisite that CI is known to have is a failure, not a skip."""
    if condition:
        return
    if IN_CI:
        pytest.fail("CI=true but " + reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def bin_dir():
    path = build_dir() / "bin"
    assert (path / "dyncc").exists(), f"build first: {path / 'dyncc'} is missing"
    return path


class Compiled(NamedTuple):
    """`dyncc compile MODEL -o out.dyncc --quiet FLAGS`, as it ended: the
    exit status, stderr, the artifact's path (there on success), and the
    files the output directory held after it (no partial file on failure)."""
    returncode: int
    stderr: str
    artifact: Path
    files: list


def _run_shared_dir(tmp_path_factory):
    """A directory every xdist worker of this run shares: their base temps
    have one parent, and the run's id keeps separate runs apart."""
    base = tmp_path_factory.getbasetemp()
    uid = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if uid:
        base = base.parent / f"shared-{uid}"
    base.mkdir(parents=True, exist_ok=True)
    return base


@pytest.fixture(scope="session")
def compile_once(tmp_path_factory, bin_dir):
    """compile_once(key, model, *flags) compiles `model` with `flags` once
    per test run for each `key`, whichever worker asks first (the others
    wait on a lock and reuse it), and returns a Compiled: tests that check
    the same artifact share one compile. A key asked for with other flags
    is an error in the tests."""
    shared = _run_shared_dir(tmp_path_factory)

    def compile_model(key, model, *flags):
        flags = [str(f) for f in flags]
        work = shared / key
        record = shared / f"{key}.json"
        with open(shared / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not record.exists():
                work.mkdir()
                proc = subprocess.run(
                    [bin_dir / "dyncc", "compile", model, "-o",
                     work / "out.dyncc", *flags, "--quiet"],
                    capture_output=True, text=True, timeout=600)
                files = sorted(p.name for p in work.iterdir())
                record.write_text(json.dumps(
                    {"flags": flags, "returncode": proc.returncode,
                     "stderr": proc.stderr, "files": files}))
            data = json.loads(record.read_text())
        assert data["flags"] == flags, \
            f"compile_once({key!r}): flags {flags}, first asked with {data['flags']}"
        return Compiled(data["returncode"], data["stderr"],
                        work / "out.dyncc", data["files"])

    return compile_model


# The targets a shared model is compiled for by model_compile: the driver's
# default ones.
MODEL_TARGETS = "cpu,sm_80,sm_90"


@pytest.fixture(scope="session")
def model_compile(compile_once):
    """A shared model compiled once per test run for the driver's default
    targets (the CPU, sm_80 and sm_90, with ptxas where the toolkit is) and
    symbol ranges: the artifact test_shared_models, test_host_kernels,
    test_gpu_kernels and test_cuda_executor each check."""
    def compile_model(model):
        model = Path(model)
        return compile_once(model.stem, model, "--target", MODEL_TARGETS)

    return compile_model


def sections(path):
    """The sections of artifact `path` by name (docs/ArtifactFormat.md)."""
    data = Path(path).read_bytes()
    count, table = struct.unpack_from("<I4xQ", data, 32)
    out = {}
    for i in range(count):
        name, offset, size = struct.unpack_from("<40sQQ", data, table + 64 * i)
        out[name.rstrip(b"\0").decode()] = data[offset:offset + size]
    return out


def manifest_values(path, key):
    """Every value of member `key` anywhere in the manifest of artifact
    `path` (its groups' `kind`s, their variants' `config`s), in order: what a
    test asks of the plan without depending on how its JSON is spaced."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for name, value in node.items():
                if name == key:
                    found.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(sections(path)["manifest"]))
    return found


def compile_with_plan(model, output, **options):
    """`dyncc.compile(model, output, **options)`, returning the plan the
    artifact carries (its `manifest` section: what `emit="plan"` prints)
    and the artifact's path. One compile where a test needs both."""
    art = Path(dyncc.compile(model, output, **options))
    return json.loads(sections(art)["manifest"]), art


@pytest.fixture(scope="session")
def example_model():
    return ROOT / "examples" / "linear_relu.onnx"


@pytest.fixture(scope="session")
def _example_compile(tmp_path_factory, example_model):
    out = tmp_path_factory.mktemp("artifact") / "linear_relu.dyncc"
    return compile_with_plan(example_model, out, dims={"B": (1, 4096)})


@pytest.fixture(scope="session")
def example_artifact(_example_compile):
    return _example_compile[1]


@pytest.fixture(scope="session")
def example_plan(_example_compile):
    """The manifest of example_artifact, as JSON."""
    return _example_compile[0]


def _evaluate_key(text, symbols):
    """A selection key: sums, differences and products of symbols and
    integers, and floordiv/ceildiv/mod of such (a conv's output size)."""
    assert all(c.isalnum() or c in "_*+-, ()" for c in text), text
    functions = {"floordiv": lambda a, b: a // b,
                 "ceildiv": lambda a, b: -(-a // b),
                 "mod": lambda a, b: a % b}
    return int(eval(text, {"__builtins__": {}}, {**functions, **symbols}))


@pytest.fixture
def table_selection(monkeypatch):
    """cpu sessions select f32 GEMMs' variants by the host model
    (docs/Runtime.md, "Selection on the host"); the tests of the run-time's
    look-up of the tile search's table, and of the variants at the shapes
    the table gives them, select by the table, as CUDA sessions do."""
    monkeypatch.setenv("DYNCC_HOST_SELECTION", "table")


def table_variant(plan, group, symbols):
    """The kernel the plan's variant table of `group` picks at `symbols`
    (the run-time's look-up, written again): the last interval whose lower
    bound is at most the key, the first below them all."""
    select = plan["groups"][group].get("select")
    keys = [_evaluate_key(k, symbols) for k in select["keys"]] \
        if select and "keys" in select else []
    return table_variant_at(plan, group, keys)


def table_variant_at(plan, group, keys):
    """The kernel `group`'s table picks at the values of its keys."""
    g = plan["groups"][group]
    select = g.get("select")
    if not select or "keys" not in select:
        index = 0
    else:
        def interval(lower, value):
            return max(bisect.bisect_right(lower, value) - 1, 0)

        # A node per key: intervals, then the next key's nodes ("inner")
        # or, at the last key, the variants.
        node = select
        for key in keys[:-1]:
            node = node["inner"][interval(node["lower"], key)]
        index = node["variant"][interval(node["lower"],
                                         keys[-1] if keys else 0)]
    return plan["kernels"][g["variants"][index]["kernel"]]["name"]


@pytest.fixture(scope="session")
def example_weights(example_model):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(example_model))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return inits["W"], inits["b"]


def pytest_terminal_summary(terminalreporter):
    """The conformance harness's totals per category and mode
    (test_conformance.py records each node test's category)."""
    from collections import Counter
    totals = Counter()
    for reports in terminalreporter.stats.values():
        for report in reports:
            for key, value in getattr(report, "user_properties", ()):
                if key == "conformance" and getattr(report, "when", "") == "call":
                    totals[tuple(value.split(":", 1))] += 1
    if not totals:
        return
    from dyncc_conformance.expected_failures import EXPECTED_FAILURES
    from dyncc_conformance.nodes import CATEGORIES, MODES
    write = terminalreporter.write_line
    write("ONNX node tests by category (static / dynamic):")
    for category in CATEGORIES:
        write(f"  {category:17} {totals[(MODES[0], category)]:5d} "
              f"{totals[(MODES[1], category)]:5d}")
    write(f"  expected-failures list: {len(EXPECTED_FAILURES)} entries")
