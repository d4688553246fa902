# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU-check bundle (scripts/gpu_bundle.py, scripts/gpu_check.py):
packed with one shared model, its sources configure as the run-time-only
build, and its check runs through on the fake driver (CUDA sessions against
onnxruntime and the CPU, `dyncc-run bench` and `dyncc-run tune`, and node
tests against their expected outputs). What it does on a GPU is the same
program with the real driver."""
import json
import re
import shutil
import subprocess
import sys

from conftest import ROOT, SHARED_MODELS, manifest_values, require
from dyncc._paths import build_dir
from test_cuda_executor import fake_driver


def pack(bundle, *options):
    """Runs scripts/gpu_bundle.py into `bundle` with `options`, which must
    succeed; returns its bundle.json."""
    packed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gpu_bundle.py"), "-o",
         str(bundle), *options], capture_output=True, text=True, timeout=300)
    assert packed.returncode == 0, packed.stderr
    return json.loads((bundle / "bundle.json").read_text())


def test_bundle_packs_and_checks_on_the_fake_driver(tmp_path):
    model = "cnn_mnist_pt11_opset9"
    require((SHARED_MODELS / f"{model}.onnx").exists(), "shared models missing")
    bundle = tmp_path / "bundle"
    # Node tests: a bind step (NonZero), bf16, integer Pow, a broadcasting
    # read, a LayerNormalization; the castlike one fails on the CPU (its
    # test data are wrong) and is not packed.
    node_tests = ["test_nonzero_example", "test_cast_BFLOAT16_to_FLOAT",
                  "test_pow_types_int32_int32", "test_expand_dim_unchanged",
                  "test_layer_normalization_4d_axis1",
                  "test_castlike_FLOAT_to_BFLOAT16_expanded"]
    packed_json = pack(
        bundle, "--models", model, "--shared", str(SHARED_MODELS),
        "--nodes", "^(" + "|".join(node_tests) + ")$", "--no-bert-dense",
        "--no-fused-products", "--no-conv-forms", "--no-grouped-convs",
        "--no-pools", "--no-columns")
    archive = tmp_path / "bundle.tar.gz"
    assert 0 < archive.stat().st_size < 64 << 20
    entries = packed_json["models"]
    assert [e["name"] for e in entries] == [model, "linear_relu"]
    packed_nodes = {(c["test"], c["mode"]) for c in packed_json["nodes"]}
    assert packed_nodes == {(t, m) for t in node_tests[:-1]
                            for m in ("static", "dynamic")}, packed_nodes
    for sub in ("check.py", "src/CMakeLists.txt", "src/lib/Runtime/Executor.cpp",
                "python/dyncc/_runtime.py", "python/dyncc_models/reference.py",
                f"models/{model}.onnx", f"artifacts/{model}.dyncc"):
        assert (bundle / sub).exists(), sub

    # The sources are complete for the run-time-only build's configuration.
    if shutil.which("cmake") and shutil.which("ninja"):
        configured = subprocess.run(
            ["cmake", "-S", str(bundle / "src"), "-B", str(tmp_path / "b"),
             "-G", "Ninja", "-DDYNCC_RUNTIME_ONLY=ON",
             "-DDYNCC_BUILD_TESTS=OFF"], capture_output=True, text=True,
            timeout=120)
        assert configured.returncode == 0, configured.stderr[-2000:]

    out = tmp_path / "results"
    checked = subprocess.run(
        [sys.executable, str(bundle / "check.py"), "--out", str(out),
         "--runtime-build", str(build_dir()), "--fake-driver",
         str(fake_driver())], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "7 of 7 comparisons passed, 0 failures" in checked.stdout
    assert "node tests on cuda:0: 10 of 10 pass" \
        in checked.stdout, checked.stdout[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["device"].startswith("cuda:0 (Fake GPU 0 (sm_90), sm_90, driver 13.0)")
    assert all(row["ok"] for row in results["rows"])
    assert "selection regret over" in results["logs"]["tune linear_relu"]
    assert "launches" in results["logs"]["bench linear_relu"]
    assert (out / "results.md").read_text().startswith("device: cuda:0")
    assert results["skipped"] == []

    # A budget already spent: every stage is skipped, named in the results,
    # and the results are still written.
    spent = tmp_path / "spent"
    checked = subprocess.run(
        [sys.executable, str(bundle / "check.py"), "--out", str(spent),
         "--runtime-build", str(build_dir()), "--fake-driver",
         str(fake_driver()), "--budget", "0.001"], capture_output=True,
        text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "0 of 0 comparisons passed, 0 failures, 5 stages skipped" \
        in checked.stdout, checked.stdout[-3000:]
    results = json.loads((spent / "results.json").read_text())
    # (The fake driver sweeps and tunes only the models marked `tune`.)
    assert results["skipped"] == [
        f"compare {model}", "compare linear_relu", "tune linear_relu",
        "bench linear_relu", "10 node tests"], results["skipped"]
    assert results["rows"] == [] and results["nodes"] == []
    assert "skipped (past the time budget): compare " in \
        (spent / "results.md").read_text()


def test_bundle_packs_both_forms_of_a_conv(tmp_path):
    """--conv-forms (the default) packs ResNet's 3x3 convs in f16 three
    times, a direct conv (--im2col=never) and im2col's copy and GEMM per
    image and with the batch folded into the GEMM, each timed against cuDNN
    on the GPU: the plans say which form each is."""
    bundle = tmp_path / "bundle"
    entries = pack(bundle, "--models", "", "--nodes", "", "--no-bert-dense",
                   "--no-fused-products", "--no-grouped-convs",
                   "--no-pools", "--no-columns")["models"]
    forms = [e for e in entries if e["name"].startswith("conv3x3_")]
    assert [e["name"] for e in forms] == [
        f"conv3x3_{c}_{s}_f16_im2col_{form}"
        for c, s in ((64, 56), (256, 14))
        for form in ("never", "per-image", "folded")]
    for entry in forms:
        assert entry["versus_torch_graph"] == [1, 8, 32, 64]
        # The manifest's groups (the artifact's JSON section).
        found = manifest_values(bundle / entry["artifact"], "kind")
        kinds = {kind: found.count(kind)
                 for kind in ("conv", "gemm", "data_movement", "elementwise")}
        direct = entry["name"].endswith("never")
        assert (kinds["conv"] > 0) == direct, (entry["name"], kinds)
        assert (kinds["gemm"] > 0) != direct, (entry["name"], kinds)
        assert (kinds["data_movement"] > 0) != direct, (entry["name"], kinds)
        # Folded: the GEMM's output is transposed back to NCHW in the
        # relu's kernel; per image the relu is the GEMM's epilogue.
        folded = entry["name"].endswith("folded")
        assert (kinds["elementwise"] > 0) == folded, (entry["name"], kinds)


def test_bundle_packs_grouped_convs(tmp_path):
    """--grouped-convs (the default) packs seven depthwise, grouped and 1-D
    convs, each timed against cuDNN on the GPU at batch 1, 8 and 32: the
    depthwise ones searched with the conv model (the manifest's `window`),
    ShuffleNet's grouped 1x1 a batched GEMM, AlexNet's 2-group 5x5 im2col's
    copy and a GEMM per image and group, and wav2vec2's 1-D convs in the
    form the cost model picks (a direct conv, or im2col's copy and GEMM);
    with them the stem's max pools and the column reductions, the other
    kernels the bundle times against torch by default."""
    bundle = tmp_path / "bundle"
    entries = pack(bundle, "--models", "", "--nodes", "", "--no-bert-dense",
                   "--no-fused-products", "--no-conv-forms")["models"]
    grouped = [e for e in entries if e["name"].startswith(
        ("depthwise", "grouped", "conv1d"))]
    assert len(grouped) == 7
    for entry in grouped:
        assert entry["versus_torch_graph"] == [1, 8, 32]
        # The manifest's groups (the artifact's JSON section; the graph is
        # named "conv" too, so a conv's selection shows by its `window`).
        artifact = bundle / entry["artifact"]
        kinds = manifest_values(artifact, "kind")
        gemm = "gemm" in kinds
        name = entry["name"]
        if not name.startswith("conv1d"):
            assert gemm == name.startswith("grouped"), name
        assert ("conv" in kinds) != gemm, name
        assert bool(manifest_values(artifact, "window")) != gemm, name
        # im2col's copy is a data-movement kernel before the GEMM (a 1x1
        # conv has none).
        assert ("data_movement" in kinds) == (
            gemm and not name.startswith("grouped1x1")), name
    # --pools (the default): ResNet's stem max pool in f32 and f16, its
    # group searched with the row model over the outputs (an elementwise
    # problem, `reduction` 0), timed against torch.
    pools = [e for e in entries if e["name"].startswith("maxpool")]
    assert [e["name"] for e in pools] == ["maxpool3x3_s2_64_112_f32",
                                          "maxpool3x3_s2_64_112_f16"]
    for entry in pools:
        assert entry["versus_torch_graph"] == [1, 8, 32]
        artifact = bundle / entry["artifact"]
        assert "rows" in manifest_values(artifact, "model")
        assert 0 in manifest_values(artifact, "reduction")
    # --columns (the default): a softmax over 64 channels, channels-first
    # LayerNorms over 96 channels of 56 x 56 and 384 of 14 x 14 (ConvNeXt's
    # first and last) and a mean over 512 positions, each one kernel
    # searched as a column reduction, timed against torch; the norms' tiles
    # take the channels whole or split them over lanes (`reduce column`),
    # and the last LayerNorm's and the mean's have splits.
    columns = [e for e in entries if e["name"].startswith("column")]
    assert [e["name"] for e in columns] == ["column_softmax_64_56",
                                            "column_layernorm_96_56",
                                            "column_layernorm_384_14",
                                            "column_mean_512_768"]
    for entry in columns:
        assert entry["versus_torch_graph"] == [1, 8, 32]
        artifact = bundle / entry["artifact"]
        assert manifest_values(artifact, "kind").count("reduce") == 1, \
            entry["name"]
        assert 1 in manifest_values(artifact, "columns"), entry["name"]
        channels = entry["name"].split("_")[2]
        configs = manifest_values(artifact, "config")
        split = r"block (1x)*\d+x\d+ thread (1x)*1 k 64 reduce column"
        if entry["name"] != "column_mean_512_768":
            whole = r"block 1x%sx\d+x\d+ thread 1x%sx1x" % (channels, channels)
            assert all(re.match(whole, c) or re.fullmatch(split, c)
                       for c in configs), configs
        if entry["name"] in ("column_layernorm_384_14", "column_mean_512_768"):
            assert any(re.fullmatch(split, c) for c in configs), configs


def test_plot_from_draws_each_comparison_it_has(tmp_path):
    """check.py --plot-from redraws the plots of a results.json: the dense
    layers against cuBLAS (TFLOP/s over M) and the graphs against torch
    (t_torch / t_dyncc over the batch, a line per model), each only where
    the results have its rows (a run without dense layers has none)."""
    results = {"environment": {"gpu": "NVIDIA H200"}, "versus_torch": [],
               "versus_torch_graph": [
                   {"model": m, "batch": b, "ratio": r, "dyncc_ms": 1.0,
                    "torch_ms": r, "max_rel_error": 0.0}
                   for m, points in (("conv_a", ((1, 3.5), (8, 1.1), (64, 0.3))),
                                     ("conv_b", ((1, 2.0), (8, 0.5), (64, 0.2))))
                   for b, r in points]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    out = tmp_path / "plots"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gpu_check.py"),
         "--plot-from", str(path), "--out", str(out)],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not (out / "versus_torch.svg").exists()
    svg = (out / "versus_torch_graph.svg").read_text()
    assert svg.startswith("<svg") and "conv_a" in svg and "conv_b" in svg
    assert svg.count('stroke-width="2" fill="none"') == 2
    assert "t_torch / t_dyncc" in svg and 'stroke-dasharray="4,3"' in svg
    # With dense-layer rows: their TFLOP/s, dyncc's and torch's per model.
    results["versus_torch"] = [
        {"model": "dense", "M": m, "dyncc_TFLOPs": d, "torch_TFLOPs": t}
        for m, d, t in ((1, 0.3, 0.2), (128, 10.0, 16.0), (4096, 27.0, 43.0))]
    path.write_text(json.dumps(results))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gpu_check.py"),
         "--plot-from", str(path), "--out", str(out)],
        capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    svg = (out / "versus_torch.svg").read_text()
    assert "dense dyncc" in svg and "dense torch" in svg and "TFLOP/s" in svg
    assert svg.count('stroke-width="2" fill="none"') == 2
