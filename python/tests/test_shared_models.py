# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every real model in ../shared/models either compiles or is refused with one
line naming the unsupported op and its node; never a crash, never a partial
file. (Which models compile grows with the op set and code generation.)
test_conformance.py runs each against onnxruntime at five or more shapes."""
import re
import subprocess

import pytest

from conftest import SHARED_MODELS, require

MODELS = sorted(SHARED_MODELS.glob("*.onnx")) if SHARED_MODELS.exists() else []


def test_shared_models_present():
    require(len(MODELS) > 0, f"no models in {SHARED_MODELS}")


# The models code generation handles today: each must compile and match
# onnxruntime, so a change that makes one of them refused again fails here.
# (The rest are refused with one line; issue 5's note says why.)
COMPILES = {
    "bert_attention_mask1d_pt111_opset11",
    "bert_attention_mask2d_pt15_opset11",
    "bert_attention_nomask_fp16_pt111_opset11",
    "bert_squad_tiny_pt13_opset10",
    "bert_squad_tiny_pt13_opset11_fp16",
    "bert_toy_pt11_opset12_ortopt",
    "cifar_cnn_tutorial_pt17_opset10",
    "cnn_mnist_pt11_opset9",
    "distilbert_tiny_seqcls_pt110_opset11",
    "gelu_erf_tf2onnx_opset10",
    "gpt2_megatron_tiny_pt19_opset12",
    "gpt2_tiny_nopast_pt13_opset11",
    "layernorm_with_cast_pt16_opset9",
    "light_resnet50_opset9",
    "light_shufflenet_opset9",
    "light_squeezenet_opset9",
    "matmul_add_layernorm_pt15_opset11",
    "mobilenetv3_small_excerpt_opset13",
    "resnet50_stem_residual_block_opset11",
    "small_cnn_resize_pt110_opset11",
    "super_resolution_pt111_opset15",
    "tfbert_mrpc_tiny_keras2onnx_opset10",
    "upsample_resize_tf2onnx_opset12",
}


@pytest.mark.parametrize("model", MODELS, ids=[m.stem for m in MODELS])
def test_compile_or_clean_refusal(model_compile, model):
    result = model_compile(model)
    if result.returncode == 0:
        assert result.files == ["out.dyncc"], result.files
        import dyncc
        dyncc.load(str(result.artifact))  # a valid artifact
        return
    assert model.stem not in COMPILES, f"regression: {result.stderr.strip()}"
    assert result.returncode == 1, result.stderr  # not a signal / crash
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert re.match(r"dyncc: error: ((unnamed )?node .* \(\w+\): )?.+", lines[0]), lines[0]
    assert result.files == [], "no partial or temporary file may be left"


@pytest.mark.parametrize("model", MODELS, ids=[m.stem for m in MODELS])
def test_fuses(bin_dir, model):
    """Every shared model compiles through fusion (the driver verifies the IR
    after each stage), every compute op lands in exactly one group, and
    groups of the backbone kinds, and only those, have backbones."""
    proc = subprocess.run(
        [bin_dir / "dyncc", "compile", model, "--emit=fusion-report", "--quiet"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    groups = re.findall(r"^group \d+ (\w+):((?: \S+)+)$", proc.stdout, re.M)
    total = re.search(r"^total: (\d+) groups of (\d+) ops;", proc.stdout, re.M)
    assert total and groups, proc.stdout
    assert int(total.group(1)) == len(groups)
    assert int(total.group(2)) == sum(len(ops.split()) for _, ops in groups)
    for kind, ops in groups:
        backbones = [op for op in ops.split() if op.endswith("*")]
        if kind in ("gemm", "conv", "reduce"):
            assert backbones, (kind, ops)
        else:
            assert not backbones, (kind, ops)
    # The fused IR itself has no compute op outside a group.
    fused = subprocess.run(
        [bin_dir / "dyncc", "compile", model, "--emit=fused", "--quiet"],
        capture_output=True, text=True, timeout=300)
    assert fused.returncode == 0, fused.stderr
    top_level = [l for l in fused.stdout.splitlines()
                 if re.match(r"^    %\S+ = dg\.(?!fusion|constant|dim_values)", l)]
    assert not top_level, top_level[:3]


@pytest.mark.parametrize("model", MODELS, ids=[m.stem for m in MODELS])
def test_outlines(bin_dir, model):
    """Every group of every shared model outlines into a kernel function
    that verifies (the driver verifies after each stage): one dispatch per
    group, each calling a `dyncc.kernel` function on plain tensors whose
    dynamic sizes are `index` arguments, identical kernels merged."""
    report = subprocess.run(
        [bin_dir / "dyncc", "compile", model, "--emit=fusion-report", "--quiet"],
        capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    groups = int(re.search(r"^total: (\d+) groups", report.stdout, re.M).group(1))
    proc = subprocess.run(
        [bin_dir / "dyncc", "compile", model, "--emit=outlined", "--quiet"],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    callees = re.findall(r"dg\.dispatch @(\w+)", proc.stdout)
    kernels = re.findall(r"^  func\.func @(\w+)\((.*)\) -> .* attributes \{.*dyncc\.kernel",
                         proc.stdout, re.M)
    # One dispatch per group; identical groups (the same one in each layer)
    # share one kernel, and every kernel is called.
    assert len(callees) == groups, (groups, len(callees))
    assert len(kernels) <= groups
    assert set(callees) == {name for name, _ in kernels}
    assert len(set(name for name, _ in kernels)) == len(kernels)
    for name, args in kernels:
        assert "#sym.shape" not in args and "dg." not in args, name
    assert "dg.fusion" not in proc.stdout
    # Kernel bodies are upstream dialects only.
    kernel_text = proc.stdout.partition("dyncc.kernel")[2]
    assert not re.search(r"\bdg\.|#sym\.", kernel_text)


def test_im2col_arena_repaired():
    """light_resnet50 with its windowed convs as im2col's copies and GEMMs
    (the default, the cost model's choice: 13 of 17), most of them split-K
    (f32 partial sums in workspaces): the copies are the largest
    temporaries, short-lived, beside a long-lived residual stream.
    Largest-first placement needs 1.13x the live-set peak there; the
    planner's 4 repairs (ArenaPlanner::place, the top block's neighbours
    from the highest down) reach 1.03x (a search of 3,000 orders offline,
    1.00x). Issue 7's bound is 1.25x. (Before the large tiles' splits, the
    plan had no workspaces, largest-first needed 1.22x and two repairs
    reached the peak; ArenaPlanTest.RepairsReachThePeakWhereLargestFirstDoesNot
    keeps that case.)"""
    import numpy as np
    import dyncc
    model = SHARED_MODELS / "light_resnet50_opset9.onnx"
    require(model.exists(), f"{model} missing")
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        art = f"{tmp}/r50.dyncc"
        dyncc.compile(model, art, targets=["cpu"], device="h200")
        session = dyncc.load(art).session("cpu")
        x = np.random.default_rng(0).uniform(
            -1, 1, (1, 3, 224, 224)).astype(np.float32)
        session.run({"gpu_0/data_0": x})
        memory = session.memory()
    assert memory["live_peak_bytes"] > 0
    assert memory["arena_bytes"] <= 1.05 * memory["live_peak_bytes"], memory
