# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The CUDA executor on real compiled models, without a GPU: the run-time
loads the fake driver (unittests/Runtime/FakeCuda.cpp) in place of
libcuda.so.1, which runs each launch with the artifact's own host code for
that kernel and checks what a driver would: every pointer parameter of the
PTX entry is device memory, copies stay inside allocations, the code is for
the device's architecture. So a CUDA session's outputs equal a CPU
session's only if the CUDA path binds, places, launches (grid, block,
parameters in the PTX entry's order) and copies right. What it cannot test
is the GPU code itself: that needs a GPU (test_gpu_kernels checks that it
assembles)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT, SHARED_MODELS, require, sections
from dyncc._paths import build_dir
from test_gpu_kernels import ptxas_present

# A transformer with masks and integer inputs, and a CNN.
MODELS = ["bert_squad_tiny_pt13_opset10", "cnn_mnist_pt11_opset9"]

RUNNER = textwrap.dedent("""
    import json, sys
    import numpy as np
    import onnx
    sys.path.insert(0, sys.argv[1])
    import dyncc
    model, artifact = sys.argv[2], sys.argv[3]
    graph = onnx.load(model).graph
    initializers = {i.name for i in graph.initializer}
    art = dyncc.load(artifact)
    cpu, gpu = art.session("cpu"), art.session("cuda:0")
    report = {"device": gpu.device, "runs": []}
    for dynamic in (1, 7, 5):
        rng = np.random.default_rng(dynamic)
        feeds = {}
        for value in graph.input:
            if value.name in initializers:
                continue
            t = value.type.tensor_type
            shape = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0
                     else dynamic for d in t.shape.dim]
            dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
            if dtype.kind in "iub":
                feeds[value.name] = rng.integers(0, 2, size=shape).astype(dtype)
            else:
                feeds[value.name] = rng.standard_normal(shape).astype(dtype)
        want, got = cpu.run(feeds), gpu.run(feeds)
        for name in want:
            assert got[name].shape == want[name].shape, name
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6,
                                       atol=1e-7, err_msg=name)
        report["runs"].append({"dynamic": dynamic,
                               "variants": gpu.variants == cpu.variants,
                               "time": gpu.device_time() >= 0})
    # The driver's share of a run: none counted until asked for; then the
    # launches at least, in some time.
    untimed = gpu.driver_time()
    gpu.set_driver_timing(True)
    gpu.run(feeds)
    micro, calls = gpu.driver_time()
    copy_us, copy_bytes = gpu.input_copy_time()
    report["driver"] = {"untimed": list(untimed), "calls": calls,
                        "launches": len(gpu.variants), "positive": micro > 0,
                        "copy": [copy_us > 0, copy_bytes],
                        "input_bytes": sum(v.nbytes for v in feeds.values())}
    try:
        cpu.set_driver_timing(True)
        report["driver"]["cpu"] = "accepted"
    except dyncc.DynccError as e:
        report["driver"]["cpu"] = str(e)
    # CUDA graphs: that run was the second of its launches (captured where
    # graphs are on); the next ones replay the graph, on new data.
    for seed in (11, 12):
        rng = np.random.default_rng(seed)
        feeds = {k: (rng.standard_normal(v.shape).astype(v.dtype)
                     if v.dtype.kind == "f" else v) for k, v in feeds.items()}
        want, got = cpu.run(feeds), gpu.run(feeds)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6,
                                       atol=1e-7, err_msg=name)
    report["graphs"] = gpu.cuda_graphs()
    report["cpu_graphs"] = cpu.cuda_graphs()["off"]
    report["inputs"] = len(feeds)
    report["runs_total"] = len(report["runs"]) + 3
    report["pinned"] = gpu.pinned_inputs()
    report["cpu_pinned"] = cpu.pinned_inputs()["off"]
    print(json.dumps(report))
""")


def fake_driver(name="libdyncc_fake_cuda.so"):
    path = build_dir() / "lib" / name
    assert path.exists(), f"build first: {path} is missing"
    return path


def compiled_model(model_compile, name):
    """The shared model `name` and its artifact for the default targets
    (CPU, sm_80, sm_90), compiled once per test run (model_compile)."""
    model = SHARED_MODELS / f"{name}.onnx"
    require(model.exists(), f"{model} is missing")
    result = model_compile(model)
    assert result.returncode == 0, result.stderr
    return model, result.artifact


def run_on_fake(tmp_path, model, artifact, arch, driver=None):
    host_code = tmp_path / f"host-{arch}.so"
    host_code.write_bytes(sections(artifact)["cpu.so"])
    # The cpu session selects by the table too, so that both select alike.
    env = dict(os.environ, DYNCC_CUDA_DRIVER=str(driver or fake_driver()),
               DYNCC_FAKE_CUDA_HOST_CODE=str(host_code),
               DYNCC_FAKE_CUDA_ARCH=str(arch), DYNCC_HOST_SELECTION="table")
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(ROOT / "python"), str(model),
         str(artifact)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", MODELS)
def test_cuda_session_matches_cpu_session(tmp_path, model_compile, name):
    model, artifact = compiled_model(model_compile, name)
    kernels = len(json.loads(sections(artifact)["manifest"])["kernels"])

    # An sm_90: the cubin where ptxas made one (else the sm_90 PTX).
    report = run_on_fake(tmp_path, model, artifact, 90)
    if ptxas_present():
        assert report["device"].endswith(
            f"sm_90, driver 13.0): {kernels} kernels from cubin")
    assert all(run["variants"] and run["time"] for run in report["runs"])
    driver = report["driver"]
    assert driver["untimed"] == [0.0, 0] and driver["positive"]
    # Each group's launch (empty grids aside), the input copies and the
    # run's two events are driver calls.
    assert driver["calls"] >= driver["launches"] + 2, driver
    # The host inputs' copies into page-locked memory, timed apart.
    assert driver["copy"] == [True, driver["input_bytes"]], driver
    assert driver["cpu"] == ("driver timing needs a CUDA session; this one "
                             "runs on the cpu"), driver

    # An sm_100, which runs neither cubin: PTX only, so every launch's
    # pointer parameters are checked against the PTX entry's. Its code is
    # sm_90's, whose PTX is the one section sm_80 and sm_90 share (sm_80's;
    # the fake refuses PTX whose target is above the device's).
    report = run_on_fake(tmp_path, model, artifact, 100)
    assert report["device"].endswith(
        f"0 kernels from cubin, {kernels} kernels compiled by the driver at "
        "load from the PTX of sm_80"), report["device"]
    # CUDA graphs: the fake captures PTX launches, so the fourth run at 5
    # (the driver-timed one) captured the graph and it and the next two
    # replayed it, with the CPU's results. (A plan that binds sizes from
    # data mid-run has none: gtest BindsSizesFromDeviceData.)
    graphs = report["graphs"]
    assert graphs == {"off": "", "captures": 1, "replays": 3}, graphs
    assert report["cpu_graphs"] == "not a CUDA session"
    # Every run copied each host input through page-locked memory.
    pinned = report["pinned"]
    assert pinned == {"off": "", "copies": report["inputs"] *
                      report["runs_total"]}, (pinned, report["inputs"])
    assert report["cpu_pinned"] == "not a CUDA session"


def test_cuda_session_without_optional_driver_entry_points(tmp_path,
                                                          model_compile):
    # A driver with neither page-locked memory nor graphs: inputs are
    # copied from the caller's memory and runs launch kernel by kernel,
    # with the CPU session's results, and the session says why.
    model, artifact = compiled_model(model_compile, MODELS[0])
    report = run_on_fake(tmp_path, model, artifact, 90,
                         fake_driver("libdyncc_fake_cuda_minimal.so"))
    assert all(run["variants"] and run["time"] for run in report["runs"])
    assert report["graphs"] == {
        "off": "the CUDA driver has no graph entry points", "captures": 0,
        "replays": 0}, report["graphs"]
    assert report["pinned"] == {
        "off": "the CUDA driver has no page-locked memory entry points",
        "copies": 0}, report["pinned"]
    assert report["driver"]["copy"] == [False, 0], report["driver"]
