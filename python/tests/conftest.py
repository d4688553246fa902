# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import bisect
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import dyncc  # noqa: E402
from dyncc._paths import build_dir  # noqa: E402

SHARED_MODELS = Path(os.environ.get("DYNCC_SHARED_DIR", ROOT.parent / "shared")) / "models"
IN_CI = os.environ.get("CI") == "true"


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


@pytest.fixture(scope="session")
def example_model():
    return ROOT / "examples" / "linear_relu.onnx"


@pytest.fixture(scope="session")
def example_artifact(tmp_path_factory, example_model):
    out = tmp_path_factory.mktemp("artifact") / "linear_relu.dyncc"
    dyncc.compile(example_model, out, dims={"B": (1, 4096)})
    return out


@pytest.fixture(scope="session")
def example_plan(example_model):
    """The manifest of example_artifact (the same compile, as JSON)."""
    return json.loads(dyncc.compile(example_model, None, dims={"B": (1, 4096)},
                                    emit="plan"))


def _evaluate_key(text, symbols):
    """A selection key (a product or sum of symbols and integers)."""
    assert all(c.isalnum() or c in "_*+ ()" for c in text), text
    return int(eval(text, {"__builtins__": {}}, dict(symbols)))


def table_variant(plan, group, symbols):
    """The kernel the plan's variant table of `group` picks at `symbols`
    (the run-time's look-up, written again): the last interval whose lower
    bound is at most the key, the first below them all."""
    g = plan["groups"][group]
    select = g.get("select")
    if not select or "keys" not in select:
        index = 0
    else:
        keys = [_evaluate_key(k, symbols) for k in select["keys"]]

        def interval(lower, value):
            return max(bisect.bisect_right(lower, value) - 1, 0)

        if len(keys) < 2:
            index = select["variant"][interval(select["lower"],
                                               keys[0] if keys else 0)]
        else:
            inner = select["inner"][interval(select["lower"], keys[0])]
            index = inner["variant"][interval(inner["lower"], keys[1])]
    return plan["kernels"][g["variants"][index]["kernel"]]["name"]


@pytest.fixture(scope="session")
def example_weights(example_model):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(example_model))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    return inits["W"], inits["b"]
