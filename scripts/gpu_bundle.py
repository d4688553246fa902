#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Packs the GPU-check bundle: what a GPU machine with no LLVM needs to
check dyncc's CUDA path in one command.

    scripts/gpu_bundle.py [-o out/gpu-bundle] [--models NAME,...]

The bundle, a directory and its archive OUT.tar.gz (what travels: at most
64 MiB, checked), holds:
  src/        the run-time's sources (git's tracked files only) and its
              CMake build, which builds there with -DDYNCC_RUNTIME_ONLY=ON;
  python/     the run-time's Python package and dyncc_models (its
              `reference`: the inputs and tolerances of the model tests);
  models/     the ONNX models, for onnxruntime there;
  artifacts/  each compiled here for cpu and sm_90 (cubins by ptxas where
              the toolkit is here), plus linear_relu over B = 1..4096 with
              several variants, for `dyncc-run tune`, and BERT-base's dense
              layers (examples/make_bert_dense.py, f32 and f16) over
              M = 1..4096, searched for the H100 and the H200, to tune and
              to time against torch.matmul (--no-bert-dense leaves them
              out), and BERT-base's fused Q, K and V projection and a
              one-pixel conv, in f16, and the generator's tiny ResNet and
              GPT-2 in f16 (--no-fused-products leaves them out), and
              depthwise, grouped and 1-D convs over a batch of 1..32 to
              time against cuDNN (--no-grouped-convs leaves them out),
              and max pools over a batch of 1..32 and a dynamic image,
              searched with the row model (--no-pools leaves them out),
              and column reductions over a batch of 1..32 (a softmax over
              64 channels, ConvNeXt's channels-first LayerNorms over 96
              channels of 56 x 56 and 384 of 14 x 14, a mean over 512
              positions; the search splits their columns over lanes where
              it predicts that faster), timed against torch
              (--no-columns leaves them out);
  nodes/      the ONNX node tests that pass on the CPU here, each mode
              (static, --force-dynamic) compiled for cpu and sm_90 with its
              data sets' inputs and expected outputs (--nodes REGEX picks
              some, --nodes '' none);
  bundle.json what to check;
  check.py    scripts/gpu_check.py: builds the run-time, then compares each
              model's CUDA session with onnxruntime and with its CPU
              session, hands CUDA tensors over by DLPack (torch), times a
              shape sweep (`dyncc-run bench`) and tunes (`dyncc-run tune`);
              then runs each node test on the CUDA session against its
              expected outputs, and profiles the kernels of the entries
              marked `profile` with ncu where it is there.

There: `tar -xzf gpu-bundle.tar.gz && python3 gpu-bundle/check.py --out $OUT`.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 64 << 20

# A transformer of each export (fp32, fp16, distilled, decoder), CNNs.
DEFAULT_MODELS = [
    "bert_squad_tiny_pt13_opset10",
    "bert_squad_tiny_pt13_opset11_fp16",
    # BERT-base's self-attention in f16, its softmax in f32: the scores
    # (Q x K^T, K read along its rows) are f16 products into f32, on
    # mma.sync since 2026-11-29.
    "bert_attention_nomask_fp16_pt111_opset11",
    "distilbert_tiny_seqcls_pt110_opset11",
    "gpt2_tiny_nopast_pt13_opset11",
    "cnn_mnist_pt11_opset9",
    "cifar_cnn_tutorial_pt17_opset10",
    "resnet50_stem_residual_block_opset11",
    "super_resolution_pt111_opset15",
    # Sizes read from data in the middle of a run (the random feeds' values
    # 1 and 2 are valid sizes).
    "shape_constantofshape_chain_pt16_opset9",
]

# Dynamic sizes to check, where the default's do not suit (the tiny GPT-2's
# position table holds 8 positions).
DYNAMIC = {"gpt2_tiny_nopast_pt13_opset11": [1, 5, 8]}

# Sizes checked on a real GPU only: a batch whose reduction grid has more
# than 65535 blocks along z, which the run-time launches along x alone
# (linear_grid); the fake driver runs host code by the three block ids and
# cannot follow that.
DYNAMIC_GPU = {"cnn_mnist_pt11_opset9": [8192]}

# Models whose sweep runs twice, with CUDA graphs and without.
GRAPHS_AB = {"bert_squad_tiny_pt13_opset10", "gpt2_tiny_nopast_pt13_opset11",
             "distilbert_tiny_seqcls_pt110_opset11"}

# Models with no shape sweep: the sizes of shape_constantofshape are read
# from its inputs' values, which the sweep's random inputs make invalid
# (`dyncc-run bench` says so and stops).
NO_BENCH = {"shape_constantofshape_chain_pt16_opset9"}

# The shape sweep's range where the declared one (1..8192) would take
# minutes or more memory than the GPU has (super_resolution's arena at
# batch 8192 is 210 GB).
BENCH_ARGS = {
    "resnet50_stem_residual_block_opset11": ["--dim",
                                             "gpu_0_data_0_d0=1:256"],
    "super_resolution_pt111_opset15": ["--dim", "batch_size=1:256"],
}

# What the run-time-only build reads.
SOURCES = ["CMakeLists.txt", "include/dyncc/Runtime", "include/dyncc/CostModel",
           "lib/Runtime", "lib/CostModel", "tools/dyncc-run",
           "tools/dyncc-tile-search", "unittests/Runtime",
           "unittests/CostModel", "python/dyncc"]


def copy_tracked(paths, dest):
    files = subprocess.run(["git", "ls-files", "--", *paths], cwd=ROOT,
                           check=True, capture_output=True,
                           text=True).stdout.split()
    for name in files:
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    return len(files)


def pack_node_tests(args, dest):
    """Runs the node tests that match --nodes through the conformance
    harness, compiled for cpu and sm_90, and keeps those that pass on the
    CPU (their artifacts, inputs and expected outputs) under `dest`."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor
    sys.path.insert(0, str(ROOT / "python"))
    from dyncc_conformance import nodes
    from dyncc_conformance.__main__ import supported_ops
    from dyncc_conformance.expected_failures import EXPECTED_FAILURES

    ops = supported_ops(args.dyncc)
    work = [(t, m) for t in nodes.list_tests() if re.search(args.nodes, t.name)
            for m in nodes.MODES]

    def one(item):
        test, mode = item
        with tempfile.TemporaryDirectory(prefix="dyncc-bundle-") as d:
            keep = dest / f"{test.name}.{mode}"
            outcome = nodes.run_node_test(test, mode, args.dyncc, d, ops,
                                          EXPECTED_FAILURES,
                                          gpu_targets=["sm_90"], keep=keep)
        if outcome.category != "pass":
            return None
        return {"test": test.name, "mode": mode,
                "dir": f"nodes/{test.name}.{mode}"}

    with ThreadPoolExecutor(args.jobs) as pool:
        cases = [c for c in pool.map(one, work) if c]
    print(f"node tests: {len(cases)} of {len(work)} (test, mode) pairs pass "
          "on the CPU and are packed")
    return cases


def make_max_pool(path, channels, dtype, spatial):
    """Y = MaxPool(X[B, channels, *spatial]): 3x3, stride 2, padding 1
    (ResNet's stem pool), in f32 or f16."""
    import onnx
    from onnx import TensorProto, helper
    elem = TensorProto.FLOAT16 if dtype == "f16" else TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[3, 3],
                          strides=[2, 2], pads=[1, 1, 1, 1])],
        "maxpool",
        [helper.make_tensor_value_info("X", elem, ["B", channels, *spatial])],
        [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path,
                        default=ROOT / "out" / "gpu-bundle")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help="shared models to include (comma-separated)")
    parser.add_argument("--shared", type=Path,
                        default=ROOT.parent / "shared" / "models")
    parser.add_argument("--dyncc", type=Path, default=ROOT / "build" / "bin"
                        / "dyncc")
    parser.add_argument("--nodes", default=".",
                        help="node tests to include (a regex over their "
                        "names; '' for none)")
    parser.add_argument("--bert-dense", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="BERT-base's dense layers over M = 1..4096, "
                        "tuned and timed against torch.matmul there")
    parser.add_argument("--fused-products", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="BERT-base's fused Q, K and V projection and a "
                        "one-pixel conv with a residual, both in f16 (their "
                        "products on tensor cores)")
    parser.add_argument("--conv-forms", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="3x3 convs in f16 compiled both ways (a direct "
                        "conv, and im2col's copy and GEMM), timed against "
                        "torch (cuDNN) at batches 1 to 64")
    parser.add_argument("--grouped-convs", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="depthwise and grouped 2-D convs and 1-D convs "
                        "(MobileNetV2's, ShuffleNet's, wav2vec2's first two "
                        "layers), searched with the conv model, timed "
                        "against torch (cuDNN) at batches 1 to 32")
    parser.add_argument("--pools", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="ResNet's stem max pool (3x3, stride 2, f32 and "
                        "f16) over a dynamic batch and image, searched with "
                        "the row model, timed against torch at batches 1 to "
                        "32")
    parser.add_argument("--columns", default=True,
                        action=argparse.BooleanOptionalAction,
                        help="column reductions (a softmax over channels, a "
                        "channels-first LayerNorm, a mean over positions) "
                        "over a batch of 1..32, searched with the row "
                        "model's column tiles, timed against torch")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args()
    if not args.dyncc.exists():
        sys.exit(f"gpu_bundle: error: {args.dyncc} is missing: build first")
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    for sub in ("src", "python", "models", "artifacts"):
        (out / sub).mkdir(parents=True)
    count = copy_tracked(SOURCES, out / "src")
    copy_tracked(["python/dyncc_models"], out / "src")
    for package in ("dyncc", "dyncc_models"):
        shutil.copytree(out / "src" / "python" / package, out / "python" / package)
    # The node tests' comparison (numpy only).
    (out / "python" / "dyncc_conformance").mkdir()
    for name in ("__init__.py", "compare.py"):
        shutil.copy2(ROOT / "python" / "dyncc_conformance" / name,
                     out / "python" / "dyncc_conformance" / name)
    shutil.copy2(ROOT / "scripts" / "gpu_check.py", out / "check.py")

    entries = []

    def compile_model(name, model, extra=()):
        artifact = out / "artifacts" / f"{name}.dyncc"
        proc = subprocess.run(
            [str(args.dyncc), "compile", str(model), "-o", str(artifact),
             "--target", "cpu,sm_90", "--device", "h200", "--quiet", *extra],
            capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"gpu_bundle: error: compiling {model}: "
                     f"{proc.stderr.strip()}")
        return artifact

    names = [m for m in args.models.split(",") if m]
    for name in names:
        model = args.shared / f"{name}.onnx"
        if not model.exists():
            sys.exit(f"gpu_bundle: error: {model} is missing")
        shutil.copy2(model, out / "models" / model.name)
        compile_model(name, model)
        entries.append({"name": name, "model": f"models/{model.name}",
                        "artifact": f"artifacts/{name}.dyncc",
                        "dynamic": DYNAMIC.get(name, [1, 5, 17]),
                        "dynamic_gpu": DYNAMIC_GPU.get(name, []),
                        "bench_args": BENCH_ARGS.get(name, []),
                        "bench": name not in NO_BENCH,
                        "graphs_ab": name in GRAPHS_AB})
    # A dynamic batch over the stem's convs: tuned over batch 1..64.
    stem = "resnet50_stem_residual_block_opset11"
    for entry in entries:
        if entry["name"] == stem:
            entry["tune"] = True
            entry["tune_args"] = ["--dim", "gpu_0_data_0_d0=1:64",
                                  "--points", "8"]
            entry["profile"] = [["--dim", "gpu_0_data_0_d0=17"]]
            entry["versus_torch_graph"] = [1, 8, 32, 64]
    # A transformer: its layers' groups share names (deduplicated kernels),
    # which tuned artifacts could not load before session 19; tuned over the
    # batches and sequences it runs at.
    bert = "bert_squad_tiny_pt13_opset10"
    for entry in entries:
        if entry["name"] == bert:
            entry["tune"] = True
            entry["tune_args"] = ["--dim", "batch_size=1:8", "--dim",
                                  "max_seq_len=1:256", "--points", "4"]
    # The stem again with the batch, the height and the width dynamic: its
    # convs are searched over three keys (decision trees, CostModel.md);
    # every dynamic size takes one value in a run of the check.
    import onnx
    if stem in names:
        model = onnx.load(str(args.shared / f"{stem}.onnx"))
        dims = model.graph.input[0].type.tensor_type.shape.dim
        for axis, symbol in ((0, "batch"), (2, "height"), (3, "width")):
            dims[axis].ClearField("dim_value")
            dims[axis].dim_param = symbol
        name = "resnet50_stem_three_keys"
        onnx.save(model, str(out / "models" / f"{name}.onnx"))
        compile_model(name, out / "models" / f"{name}.onnx",
                      ["--dim", "batch=1:64", "--dim", "height=1:160",
                       "--dim", "width=1:160"])
        entries.append({"name": name, "model": f"models/{name}.onnx",
                        "artifact": f"artifacts/{name}.dyncc",
                        "dynamic": [1, 17, 61], "dynamic_gpu": [64],
                        "bench": False})
    # BERT-base's dense layers over M = 1..4096 (weights as inputs), f32
    # (SIMT) and f16 (mma.sync), searched for the H100 and for the H200
    # descriptions: the check tunes and times those of the GPU it finds,
    # against torch.matmul (cuBLAS) on the same shapes.
    sys.path.insert(0, str(ROOT / "examples"))
    from make_bert_dense import make_model
    for dtype, tag in (("float", "f32"), ("float16", "f16")) * args.bert_dense:
        model = out / "models" / f"bert_dense_{tag}.onnx"
        onnx.save(make_model(dtype), str(model))
        for device in ("h100", "h200"):
            name = f"bert_dense_{tag}_{device}"
            compile_model(name, model, ["--dim", "M=1:4096", "--device",
                                        device])
            entries.append({"name": name, "model": f"models/{model.name}",
                            "artifact": f"artifacts/{name}.dyncc",
                            "dynamic": [1, 7, 300], "gpu": device.upper(),
                            "tune": True, "tune_args": ["--points", "12"],
                            "profile": [["--dim", "M=30"],
                                        ["--dim", "M=2807"]],
                            "versus_torch": [1, 5, 16, 43, 128, 344, 512,
                                             1000, 2048, 4096]})
    # Products whose loops are not a plain GEMM's until code generation
    # makes them so, in f16 on mma.sync: BERT-base's Q, K and V projection
    # fused through its head split (three products in turn, sharing their
    # shared memory), and a ResNet bottleneck's one-pixel conv with its
    # residual (a GEMM over the image's pixels, 16-byte cp.async of rows
    # with W a multiple of 8). Checked against onnxruntime and the CPU.
    sys.path.insert(0, str(ROOT / "test" / "Driver" / "Inputs"))
    from make_qkv import make_qkv
    from make_pointwise_conv import make_pointwise_conv
    if args.fused_products:
        model = out / "models" / "qkv_f16.onnx"
        make_qkv(model, 12, 64, seed=3, dtype="float16")
        compile_model("qkv_f16", model,
                      ["--dim", "B=1:64", "--dim", "S=1:512"])
        entries.append({"name": "qkv_f16", "model": "models/qkv_f16.onnx",
                        "artifact": "artifacts/qkv_f16.dyncc",
                        "dynamic": [1, 7, 61], "dynamic_gpu": [64]})
        model = out / "models" / "pointwise_conv_f16.onnx"
        make_pointwise_conv(model, 256, 64, "float16", "residual", seed=3)
        compile_model("pointwise_conv_f16", model,
                      ["--dim", "B=1:64", "--dim", "H=1:64",
                       "--dim", "W=8:64:8"])
        entries.append({"name": "pointwise_conv_f16",
                        "model": "models/pointwise_conv_f16.onnx",
                        "artifact": "artifacts/pointwise_conv_f16.dyncc",
                        "dynamic": [8, 24, 56], "dynamic_gpu": [64],
                        "versus_torch_graph": [8, 16, 32, 64]})
        # Whole f16 models from the generator (`--dtype float16`): a
        # ResNet whose one-pixel convs (the strided shortcuts through a
        # strided slice) are GEMMs on mma.sync, and a GPT-2 whose dense
        # layers and tied LM head fold their batch into M.
        import onnx
        sys.path.insert(0, str(ROOT / "python"))
        from dyncc_models import make_model, to_half
        for family in ("resnet", "gpt2"):
            name = f"{family}_tiny_f16"
            model = out / "models" / f"{name}.onnx"
            onnx.save(to_half(make_model(family, "tiny", seed=1)), str(model))
            compile_model(name, model)
            entries.append({"name": name, "model": f"models/{name}.onnx",
                            "artifact": f"artifacts/{name}.dyncc",
                            "dynamic": [1, 5, 17]})
    # A conv's three forms (dyncc-conv-im2col, CostModel.md "Windowed
    # convs: direct or im2col"): direct, im2col per image, im2col with the
    # batch folded into the GEMM, each forced, on ResNet-50's stage-1 and
    # stage-3 3x3 convs in f16: the check times them against cuDNN at the
    # same batches, so the model's choices meet a measurement.
    from make_conv import make_conv
    for channels, side in ((64, 56), (256, 14)) * args.conv_forms:
        base = f"conv3x3_{channels}_{side}_f16"
        model = out / "models" / f"{base}.onnx"
        make_conv(model, channels, channels, 3, 1, 1, 1, "f16",
                  ["B", channels, side, side], seed=channels)
        for form in ("never", "per-image", "folded"):
            name = f"{base}_im2col_{form}"
            compile_model(name, model, ["--dim", "B=1:64",
                                        f"--im2col={form}"])
            entries.append({"name": name, "model": f"models/{base}.onnx",
                            "artifact": f"artifacts/{name}.dyncc",
                            "dynamic": [1, 5, 17], "dynamic_gpu": [64],
                            "bench": False,
                            "versus_torch_graph": [1, 8, 32, 64]})
    # Grouped, depthwise and 1-D convs (CostModel.md, "Grouped and
    # depthwise convs", "1-D convs"): no GPU has run their variants; the
    # check times each against cuDNN, every dynamic batch one tuned table.
    grouped = [
        # name, in and out channels, taps, stride, pad, groups, dtype, dims
        ("depthwise3x3_144_56", 144, 144, 3, 1, 1, 144, "f32", [56, 56]),
        ("depthwise3x3_144_56_f16", 144, 144, 3, 1, 1, 144, "f16", [56, 56]),
        ("depthwise3x3_s2_96_112", 96, 96, 3, 2, 1, 96, "f32", [112, 112]),
        ("grouped1x1_240_g3_28", 240, 240, 1, 1, 0, 3, "f32", [28, 28]),
        # AlexNet's second conv (2 groups of 48 -> 128, 5x5): im2col's
        # copy and a GEMM per image and group, as the model picks it.
        ("grouped5x5_96_256_g2_27_f16", 96, 256, 5, 1, 2, 2, "f16",
         [27, 27]),
        ("conv1d_wav2vec2_0", 1, 512, 10, 5, 0, 1, "f32", [16000]),
        ("conv1d_wav2vec2_1", 512, 512, 3, 2, 0, 1, "f32", [3199]),
    ]
    for (name, channels, out_channels, taps, stride, pad, groups, dtype,
         spatial) in grouped * args.grouped_convs:
        model = out / "models" / f"{name}.onnx"
        make_conv(model, channels, out_channels, taps, stride, pad, 1, dtype,
                  ["B", channels, *spatial], seed=channels, groups=groups)
        compile_model(name, model, ["--dim", "B=1:32"])
        entries.append({"name": name, "model": f"models/{name}.onnx",
                        "artifact": f"artifacts/{name}.dyncc",
                        "dynamic": [1, 5], "dynamic_gpu": [32],
                        "bench": False,
                        "versus_torch_graph": [1, 8, 32]})
    # Windowed pools (CostModel.md, "Windowed pools"): searched with the
    # row model since session 13, where they had one fixed tile; no GPU
    # has run their variants. ResNet's stem pool over its 112x112 map
    # (the check times the static image against torch's max_pool2d).
    for dtype in ("f32", "f16") * args.pools:
        name = f"maxpool3x3_s2_64_112_{dtype}"
        model = out / "models" / f"{name}.onnx"
        make_max_pool(model, 64, dtype, [112, 112])
        compile_model(name, model, ["--dim", "B=1:32"])
        entries.append({"name": name, "model": f"models/{name}.onnx",
                        "artifact": f"artifacts/{name}.dyncc",
                        "dynamic": [1, 5], "dynamic_gpu": [32],
                        "bench": False,
                        "versus_torch_graph": [1, 8, 32]})
    # Column reductions (CostModel.md, "Column reductions"): searched since
    # session 16, where a norm's fixed tiles recomputed its statistics per
    # channel, and split over lanes since session 24 ("Columns split over
    # lanes"); no GPU has run them.
    if args.columns:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from column_reductions import make_model as make_column_model
    for kind, channels, spatial in (
            ("softmax", 64, (56, 56)), ("layernorm", 96, (56, 56)),
            ("layernorm", 384, (14, 14)), ("mean", 0, ())) * args.columns:
        name = (f"column_mean_512_768" if kind == "mean" else
                f"column_{kind}_{channels}_{spatial[0]}")
        model = out / "models" / f"{name}.onnx"
        make_column_model(model, kind, channels, batch="B", spatial=spatial,
                          length=512)
        compile_model(name, model, ["--dim", "B=1:32"])
        entries.append({"name": name, "model": f"models/{name}.onnx",
                        "artifact": f"artifacts/{name}.dyncc",
                        "dynamic": [1, 5], "dynamic_gpu": [32],
                        "bench": False,
                        "versus_torch_graph": [1, 8, 32]})
    linear = ROOT / "examples" / "linear_relu.onnx"
    shutil.copy2(linear, out / "models" / linear.name)
    compile_model("linear_relu", linear, ["--dim", "B=1:4096"])
    entries.append({"name": "linear_relu", "model": "models/linear_relu.onnx",
                    "artifact": "artifacts/linear_relu.dyncc",
                    "dynamic": [1, 7, 300, 4096], "tune": True})
    node_cases = pack_node_tests(args, out / "nodes") if args.nodes else []
    (out / "bundle.json").write_text(json.dumps(
        {"models": entries, "nodes": node_cases}, indent=1))

    # What travels is the archive: the artifacts and node tests compress
    # about 4x, and the directory alone passed 64 MiB.
    archive = out.parent / f"{out.name}.tar.gz"
    with tarfile.open(archive, "w:gz", compresslevel=6) as tar:
        tar.add(out, arcname=out.name)
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    packed = archive.stat().st_size
    if packed > LIMIT:
        sizes = sorted(((f.stat().st_size, f.name) for f in
                        (out / "artifacts").iterdir()), reverse=True)
        shutil.rmtree(out)
        archive.unlink()
        print("largest artifacts: " + ", ".join(
            f"{name} {bytes_ / 2**20:.1f} MiB" for bytes_, name in sizes[:4]))
        sys.exit(f"gpu_bundle: error: the bundle's archive would be "
                 f"{packed / 2**20:.1f} MiB, over the 64 MiB limit (drop a "
                 f"model with --models)")
    print(f"wrote {out} ({size / 2**20:.1f} MiB) and {archive.name} "
          f"({packed / 2**20:.1f} MiB): {count} source files, {len(entries)} "
          f"model artifacts, {len(node_cases)} node tests; there: tar -xzf "
          f"{archive.name} && python3 {out.name}/check.py --out DIR")


if __name__ == "__main__":
    main()
