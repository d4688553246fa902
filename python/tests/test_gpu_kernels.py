# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every GPU kernel assembles with ptxas for sm_80 and sm_90 with no spills,
and the artifact records ptxas' report per kernel and architecture (the
resources the tile search and the run-time's occupancy read). Needs the CUDA
toolkit's ptxas, as CI has; no GPU."""
import json
import os

import pytest

import dyncc
from conftest import SHARED_MODELS, require, sections
from test_codegen_kinds import CASES, _variants
from test_shared_models import COMPILES

ARCHS = ["sm_80", "sm_90"]
RESOURCES = {"registers", "barriers", "shared_bytes", "stack_bytes",
             "spill_store_bytes", "spill_load_bytes"}


def ptxas_present():
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    return os.access(os.path.join(home, "bin", "ptxas"), os.X_OK)


# The kernel-kind cases and the shared models that compile; cases are
# written out only when their test runs.
SOURCES = ([pytest.param("case", name, id=name) for name in CASES] +
           [pytest.param("model", name, id=name) for name in sorted(COMPILES)])


@pytest.mark.parametrize("source,name", SOURCES)
def test_kernels_assemble_without_spills(tmp_path, model_compile, source, name):
    require(ptxas_present(), "ptxas (the CUDA toolkit) is not installed")
    if source == "model":
        # The artifact the other tests of shared models check (the default
        # targets, sm_80 and sm_90 among them): compiled once.
        result = model_compile(SHARED_MODELS / f"{name}.onnx")
        assert result.returncode == 0, result.stderr
        plan = sections(result.artifact)["manifest"]
    else:
        import onnx
        model, shapes, _ = CASES[name][0]()
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, str(path))
        dims = {s: (1, 512) for s in shapes[0]}
        plan = dyncc.compile(path, None, targets=ARCHS, dims=dims, emit="plan")
    kernels = json.loads(plan)["kernels"]
    assert kernels
    for kernel in kernels:
        for arch in ARCHS:
            code = kernel["gpu"][arch]
            assert code["cubin"] == f"cubin.{arch}"
            res = code["resources"]
            assert set(res) == RESOURCES, res
            assert 0 < res["registers"] <= 255, (kernel["name"], arch, res)
            assert res["spill_store_bytes"] == 0 and res["spill_load_bytes"] == 0, \
                (kernel["name"], arch, res)


# Every other variant the CPU numerics run (odd block tiles, one thread,
# k-steps of 1 and primes, row strategies): the GPU code of each must
# assemble too. (A variant's thread tile once vectorized to transfers that
# only the CPU lowered: CPU numerics passed, the GPU build failed.)
VARIANTS = [p for p in _variants() if p.values[1] is not None]


@pytest.mark.parametrize("case,config", VARIANTS)
def test_variants_assemble_without_spills(tmp_path, case, config):
    require(ptxas_present(), "ptxas (the CUDA toolkit) is not installed")
    import onnx
    build, kinds = CASES[case]
    model, shapes, _ = build()
    path = tmp_path / f"{case}.onnx"
    onnx.save(model, str(path))
    plan = dyncc.compile(path, None, targets=ARCHS,
                         dims={s: (1, 512) for s in shapes[0]}, emit="plan",
                         tile_configs={k: config for k in kinds})
    for kernel in json.loads(plan)["kernels"]:
        for arch in ARCHS:
            res = kernel["gpu"][arch]["resources"]
            assert res["spill_store_bytes"] == 0 and res["spill_load_bytes"] == 0, \
                (kernel["name"], arch, res)


def test_artifact_carries_cubins(tmp_path, example_model):
    require(ptxas_present(), "ptxas (the CUDA toolkit) is not installed")
    art = dyncc.compile(example_model, tmp_path / "m.dyncc",
                        targets=["cpu", *ARCHS])
    found = sections(art)
    for arch in ARCHS:
        assert found[f"cubin.{arch}"][:4] == b"\x7fELF", arch
    # One PTX, the oldest chip's, which ptxas assembled for each chip and the
    # driver compiles on any newer one: translated once, stored once.
    assert ".target sm_80" in found["ptx.sm_80"].decode()
    assert "ptx.sm_90" not in found
    for kernel in json.loads(found["manifest"])["kernels"]:
        for arch in ARCHS:
            assert kernel["gpu"][arch]["section"] == "ptx.sm_80", (kernel["name"], arch)
            assert kernel["gpu"][arch]["cubin"] == f"cubin.{arch}"


def test_ptxas_off_keeps_ptx_only(tmp_path, example_model):
    plan = json.loads(dyncc.compile(example_model, None, targets=["sm_90"],
                                    emit="plan", ptxas="off"))
    for kernel in plan["kernels"]:
        assert "cubin" not in kernel["gpu"]["sm_90"]
        assert "resources" not in kernel["gpu"]["sm_90"]
    art = dyncc.compile(example_model, tmp_path / "m.dyncc", targets=["sm_90"],
                        ptxas="off")
    assert "cubin.sm_90" not in sections(art)
