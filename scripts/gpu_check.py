#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU check, run from a bundle that scripts/gpu_bundle.py packed:

    python3 check.py [--out DIR] [--budget SECONDS] [--runtime-build DIR]
                     [--fake-driver LIB]

1. Builds the run-time alone from src/ (CMake, -DDYNCC_RUNTIME_ONLY=ON), or
   uses --runtime-build's, and measures the device's two ceilings (a
   device-to-device copy, a bf16 8192^3 torch.matmul).
2. For each model of bundle.json, at each dynamic size: runs its artifact on
   cuda:0 and on the cpu, and onnxruntime on the ONNX file, on the same
   inputs (dyncc_models.reference), and compares within issue 8's
   tolerances: CUDA against onnxruntime, CUDA against the CPU session, a
   replayed CUDA graph against the CPU session. Where torch sees a GPU:
   hands the inputs over as torch CUDA tensors (DLPack, no copy) and takes
   the outputs back with torch.from_dlpack. Entries marked `gpu` (H100,
   H200: searched for that device's description) are checked only on that
   GPU, where torch names it.
3. Times the models marked `versus_torch` against the same matmuls through
   torch (cuBLAS) at each M listed: the ratio t_cublas / t_dyncc, side by
   side in one process; and the models marked `versus_torch_graph` (CNN
   blocks) against their whole graph through torch (TorchGraph: cuDNN
   convs, batch norms folded into them) at each batch listed, outputs
   compared.
4. Tunes the models marked `tune` (`dyncc-run tune`: the selection regret)
   and times a shape sweep of each artifact (`dyncc-run bench`).
5. Where ncu is on the PATH, profiles each kernel of the entries marked
   `profile` at the sizes they list (time, pipe use, shared loads and
   their bank conflicts, local memory, occupancy).
6. Runs each packed ONNX node test (static and --force-dynamic, those that
   pass on the CPU where the bundle was made) on cuda:0 against its
   expected outputs, with the same tolerances (issue 8).
7. Writes results.json and results.md to --out after every stage (a run
   the lease stops leaves what it measured) and prints the table. With
   --budget, a stage not begun in time is skipped and named as skipped.
   Exits 1 if any comparison failed.

--fake-driver runs it all without a GPU on the test suite's fake driver
(which runs each launch with the artifact's host code): how the tests check
this script.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_tool(command, timeout=240, env=None):
    """A dyncc-run command, stopped after `timeout` seconds (the lease is
    short): a CompletedProcess, with a timeout as a failure."""
    try:
        return subprocess.run(command, capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired as expired:
        def text(value):
            return value.decode() if isinstance(value, bytes) else value or ""
        return subprocess.CompletedProcess(
            command, 1, text(expired.stdout),
            text(expired.stderr) + f"timed out after {timeout} s")


def build_runtime(build):
    subprocess.run(["cmake", "-S", str(HERE / "src"), "-B", str(build), "-G",
                    "Ninja", "-DDYNCC_RUNTIME_ONLY=ON",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build)], check=True,
                   stdout=subprocess.DEVNULL)


def host_code(artifact, dest):
    """The artifact's cpu.so section (what the fake driver runs)."""
    import struct
    data = artifact.read_bytes()
    count, table = struct.unpack_from("<I4xQ", data, 32)
    for i in range(count):
        name, offset, size = struct.unpack_from("<40sQQ", data, table + 64 * i)
        if name.rstrip(b"\0") == b"cpu.so":
            dest.write_bytes(data[offset:offset + size])
            return dest
    raise SystemExit(f"check: {artifact} has no cpu.so section")


def compare(have, want, dtype_tolerances):
    import numpy as np
    rtol, atol = dtype_tolerances(want.dtype)
    if have.shape != want.shape:
        return False, f"shape {have.shape} != {want.shape}"
    a, b = have.astype(np.float64), want.astype(np.float64)
    excess = np.abs(a - b) - (atol + rtol * np.abs(b))
    worst = float(np.max(np.abs(a - b))) if a.size else 0.0
    # The norm-relative error too: where the elementwise test fails, it
    # says whether the whole tensor is off or a few small elements.
    norm = float(np.linalg.norm(b))
    relative = float(np.linalg.norm(a - b)) / norm if norm else 0.0
    return bool(np.all(excess <= 0)), (f"max |diff| {worst:.3g}, "
                                       f"|diff|/|ref| {relative:.2g}")


def run_node_tests(cases, dyncc, out, fake_driver):
    """Each node test of the bundle on cuda:0: [(label, problem or None)]."""
    import numpy as np
    from dyncc_conformance.compare import compare, load
    results = []
    for case in cases:
        where = HERE / case["dir"]
        label = f"{case['test']} [{case['mode']}]"
        spec = json.loads((where / "case.json").read_text())
        artifact = where / "model.dyncc"
        problem = None
        try:
            if fake_driver:
                os.environ["DYNCC_FAKE_CUDA_HOST_CODE"] = str(host_code(
                    artifact, out / f"node.{case['test']}.{case['mode']}.so"))
            art = dyncc.load(str(artifact))
            session = art.session("cuda:0")
            dtypes = {name: dtype for name, dtype, _ in art.inputs}
            for data in spec["sets"]:
                feeds = {}
                for name, file in data["inputs"].items():
                    value = np.load(where / file, allow_pickle=False)
                    if dtypes.get(name) == "bf16":  # kept as its bits
                        import ml_dtypes
                        value = value.view(ml_dtypes.bfloat16)
                    feeds[name] = value
                got = session.run(feeds)
                for name, file in data["outputs"].items():
                    # bf16 kept as its bits: read back as the output's type.
                    want = load(where / file, got[name])
                    problem = compare(name, got[name], want)
                    if problem:
                        break
                if problem:
                    break
            session.close()
            art.close()
        except Exception as error:  # one line per failure, then go on
            problem = f"error: {error}"
        results.append((label, problem))
        if problem:
            print(f"FAIL {label}: {problem}", flush=True)
    return results


# What the check's ncu profiles read (`ncu --query-metrics` names).
PROFILE_METRICS = [
    "gpu__time_duration.sum", "launch__grid_size", "launch__block_size",
    "launch__registers_per_thread",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
    "dram__bytes_read.sum", "lts__t_sector_hit_rate.pct",
]


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def event_ms(torch, fn, repeat=20, warmup=3):
    """The median of `repeat` event-timed calls of fn on torch's stream."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return median(times)


def ceilings(torch):
    """The copy bandwidth (bytes read plus written) and the bf16 matmul rate,
    measured on random data."""
    src = torch.randn(1 << 28, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    ms = event_ms(torch, lambda: dst.copy_(src))
    copy = 2 * src.numel() * 4 / ms / 1e9
    del src, dst
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    ms = event_ms(torch, lambda: a @ b, repeat=10)
    return {"copy_TBps": copy, "bf16_matmul_TFLOPs": 2 * 8192**3 / ms / 1e9}


def session_ms(session, tensors, torch, repeat=20, warmup=3):
    """The median event-timed device time of `session`'s runs on the torch
    CUDA `tensors`, and the last run's device outputs."""
    torch.cuda.synchronize()
    times = []
    for r in range(warmup + repeat):
        outs = session.run(tensors, device_outputs=True)
        if r >= warmup:
            times.append(session.device_time())
    return median(times), outs


def versus_torch(entry, art, torch, reference):
    """The artifact's whole run (its event-timed device time) against the
    same MatMuls through torch.matmul, at each M of the entry, on the same
    device tensors. Returns table rows."""
    import onnx
    model = onnx.load(str(HERE / entry["model"]))
    products = [(n.input[0], n.input[1]) for n in model.graph.node
                if n.op_type == "MatMul"]
    session = art.session("cuda:0")
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for m in entry["versus_torch"]:
        feeds = reference.random_feeds(HERE / entry["model"], m)
        tensors = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
        ours, _ = session_ms(session, tensors, torch)
        pairs = [(tensors[a], tensors[b]) for a, b in products]
        theirs = event_ms(torch, lambda: [a @ b for a, b in pairs])
        flops = sum(2 * a.shape[0] * a.shape[1] * b.shape[1] for a, b in pairs)
        rows.append({"model": entry["name"], "M": m, "dyncc_ms": ours,
                     "torch_ms": theirs, "ratio": theirs / ours,
                     "dyncc_TFLOPs": flops / ours / 1e9,
                     "torch_TFLOPs": flops / theirs / 1e9})
        print(f"{entry['name']} M={m}: dyncc {ours:.4f} ms "
              f"({flops / ours / 1e9:.1f} TFLOP/s), torch {theirs:.4f} ms "
              f"({flops / theirs / 1e9:.1f} TFLOP/s), t_cublas/t_dyncc "
              f"{theirs / ours:.3f}", flush=True)
    session.close()
    return rows


class TorchGraph:
    """A CNN block's ONNX graph through a torch.nn.functional-like module
    `F` (torch's on the GPU: cuDNN), the baseline dyncc's whole run is timed
    against. Each BatchNormalization whose input is only a Conv's output is
    folded into that Conv's weights and bias, as inference engines do.
    Takes Conv (1-D or 2-D, grouped, symmetric pads), BatchNormalization,
    Relu, MaxPool
    (symmetric pads, no ceil mode or dilation), Add and Sum, and for
    normalization blocks Softmax (opset 13: one axis), ReduceMean (`axes`
    an attribute), Sub, Mul, Div and Sqrt, whose operands may be
    initializers (a LayerNorm's scale); anything else is an error naming the
    node. `tensor` turns a numpy array into one of F's tensors."""

    def __init__(self, model, F, tensor):
        import numpy as np
        from onnx import helper, numpy_helper
        weights = {t.name: numpy_helper.to_array(t).astype(np.float64)
                   for t in model.graph.initializer}
        uses = {}
        for node in model.graph.node:
            for name in node.input:
                uses[name] = uses.get(name, 0) + 1

        def symmetric(node, pads):
            half = len(pads) // 2
            if list(pads[:half]) != list(pads[half:]):
                raise ValueError(f"node {node.name or node.op_type}: "
                                 f"asymmetric pads {list(pads)}")
            return list(pads[:half])

        steps = []
        for node in model.graph.node:
            attrs = {a.name: helper.get_attribute_value(a)
                     for a in node.attribute}
            if node.op_type == "Conv":
                w = weights[node.input[1]]
                b = (weights[node.input[2]] if len(node.input) > 2
                     and node.input[2] else np.zeros(w.shape[0]))
                # Defaults per spatial dimension (one for a 1-D conv).
                spatial = w.ndim - 2
                steps.append({
                    "op": "conv", "x": node.input[0], "y": node.output[0],
                    "w": w, "b": b,
                    "stride": list(attrs.get("strides", [1] * spatial)),
                    "padding": symmetric(
                        node, attrs.get("pads", [0] * (2 * spatial))),
                    "dilation": list(attrs.get("dilations", [1] * spatial)),
                    "groups": attrs.get("group", 1)})
            elif node.op_type == "BatchNormalization":
                scale, shift, mean, var = (weights[n] for n in node.input[1:5])
                scale = scale / np.sqrt(var + attrs.get("epsilon", 1e-5))
                shift = shift - mean * scale
                conv = next((st for st in steps if st["op"] == "conv"
                             and st["y"] == node.input[0]), None)
                if conv is not None and uses[node.input[0]] == 1:
                    conv["w"] = conv["w"] * scale.reshape(
                        (-1,) + (1,) * (conv["w"].ndim - 1))
                    conv["b"] = conv["b"] * scale + shift
                    conv["y"] = node.output[0]
                else:
                    steps.append({"op": "affine", "x": node.input[0],
                                  "y": node.output[0], "scale": scale,
                                  "shift": shift})
            elif node.op_type == "Relu":
                steps.append({"op": "relu", "x": node.input[0],
                              "y": node.output[0]})
            elif node.op_type == "MaxPool":
                if attrs.get("ceil_mode", 0) or any(
                        d != 1 for d in attrs.get("dilations", [1, 1])):
                    raise ValueError(f"node {node.name or 'MaxPool'}: ceil "
                                     "mode or dilation")
                kernel = list(attrs["kernel_shape"])
                steps.append({"op": "maxpool", "x": node.input[0],
                              "y": node.output[0], "kernel": kernel,
                              "stride": list(attrs.get("strides", kernel)),
                              "padding": symmetric(
                                  node, attrs.get("pads", [0] * 4))})
            elif node.op_type in ("Add", "Sum"):
                steps.append({"op": "sum", "inputs": list(node.input),
                              "y": node.output[0]})
            elif node.op_type in ("Sub", "Mul", "Div"):
                steps.append({"op": node.op_type.lower(),
                              "inputs": list(node.input), "y": node.output[0]})
            elif node.op_type == "Sqrt":
                steps.append({"op": "sqrt", "x": node.input[0],
                              "y": node.output[0]})
            elif node.op_type == "Softmax":
                steps.append({"op": "softmax", "x": node.input[0],
                              "y": node.output[0],
                              "axis": attrs.get("axis", -1)})
            elif node.op_type == "ReduceMean" and "axes" in attrs:
                steps.append({"op": "mean", "x": node.input[0],
                              "y": node.output[0],
                              "axes": tuple(attrs["axes"]),
                              "keepdims": bool(attrs.get("keepdims", 1))})
            else:
                raise ValueError(f"node {node.name or node.op_type}: "
                                 f"{node.op_type} has no torch baseline")
        # The weights in the graph's element type (an f16 model's convs run
        # on cuDNN's f16 tensor-core kernels, as dyncc's do).
        elem = model.graph.input[0].type.tensor_type.elem_type
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
        if dtype not in (np.float16, np.float32):
            raise ValueError(f"input {model.graph.input[0].name}: {dtype} "
                             "has no torch baseline")
        for st in steps:
            for key in ("w", "b", "scale", "shift"):
                if key in st:
                    st[key] = tensor(st[key].astype(dtype))
        # Initializers the elementwise steps read (a LayerNorm's scale and
        # epsilon), in the graph's element type.
        read = {name for st in steps for name in st.get("inputs", ())}
        self.constants = {name: tensor(np.asarray(array).astype(dtype))
                          for name, array in weights.items() if name in read}
        self.steps, self.F = steps, F
        self.outputs = [o.name for o in model.graph.output]

    def __call__(self, feeds):
        env, F = dict(self.constants), self.F
        env.update(feeds)
        for st in self.steps:
            if st["op"] == "conv":
                # A 1-D conv's weights are [F, C, K].
                conv = F.conv1d if st["w"].ndim == 3 else F.conv2d
                env[st["y"]] = conv(env[st["x"]], st["w"], st["b"],
                                    st["stride"], st["padding"],
                                    st["dilation"], st["groups"])
            elif st["op"] == "affine":
                # Per channel, over NCW or NCHW.
                x = env[st["x"]]
                shape = (1, -1) + (1,) * (x.ndim - 2)
                env[st["y"]] = (x * st["scale"].reshape(shape)
                                + st["shift"].reshape(shape))
            elif st["op"] == "relu":
                env[st["y"]] = F.relu(env[st["x"]])
            elif st["op"] == "maxpool":
                env[st["y"]] = F.max_pool2d(env[st["x"]], st["kernel"],
                                            st["stride"], st["padding"])
            elif st["op"] in ("sub", "mul", "div"):
                a, b = (env[name] for name in st["inputs"])
                env[st["y"]] = (a - b if st["op"] == "sub" else
                                a * b if st["op"] == "mul" else a / b)
            elif st["op"] == "sqrt":
                env[st["y"]] = env[st["x"]] ** 0.5
            elif st["op"] == "softmax":
                env[st["y"]] = F.softmax(env[st["x"]], st["axis"])
            elif st["op"] == "mean":
                x = env[st["x"]]
                # torch's Tensor.mean, else numpy's (the tests' stand-in).
                try:
                    env[st["y"]] = x.mean(dim=st["axes"],
                                          keepdim=st["keepdims"])
                except TypeError:
                    env[st["y"]] = x.mean(axis=st["axes"],
                                          keepdims=st["keepdims"])
            else:
                total = env[st["inputs"][0]]
                for name in st["inputs"][1:]:
                    total = total + env[name]
                env[st["y"]] = total
        return [env[name] for name in self.outputs]


def versus_torch_graph(entry, art, torch, reference):
    """The artifact's whole run (event-timed device time) against its graph
    through torch (TorchGraph: cuDNN convs, batch norms folded, cudnn's
    autotuner on, TF32 off so both compute in f32), at each batch of the
    entry, on the same device tensors; the outputs are compared too.
    Returns table rows."""
    import onnx
    import torch.nn.functional as F
    model = onnx.load(str(HERE / entry["model"]))
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    graph = TorchGraph(model, F, lambda a: torch.from_numpy(a).cuda())
    session = art.session("cuda:0")
    rows = []
    for batch in entry["versus_torch_graph"]:
        feeds = reference.random_feeds(HERE / entry["model"], batch)
        tensors = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
        ours, outs = session_ms(session, tensors, torch)
        with torch.no_grad():
            theirs = event_ms(torch, lambda: graph(tensors))
            want = graph(tensors)
        have = [torch.from_dlpack(outs[name]) for name in graph.outputs]
        error = max(float((h - w).abs().max() / w.abs().max().clamp_min(1e-30))
                    for h, w in zip(have, want))
        rows.append({"model": entry["name"], "batch": batch,
                     "dyncc_ms": ours, "torch_ms": theirs,
                     "ratio": theirs / ours, "max_rel_error": error})
        print(f"{entry['name']} batch={batch}: dyncc {ours:.4f} ms, torch "
              f"(cuDNN) {theirs:.4f} ms, t_torch/t_dyncc {theirs / ours:.3f}, "
              f"max error {error:.2e} of the largest output", flush=True)
    session.close()
    return rows


def line_svg(series, title, x_label, y_label, y_format, baseline=None,
             right=230):
    """Lines over a log-scale x as SVG, with no plotting library: `series`
    is (label, [(x, y)], dash, colour index) per line; `baseline` a dashed
    horizontal line at that y."""
    import math
    width, height, left, top, bottom = 530 + right, 420, 60, 30, 45
    xs = [x for _, points, _, _ in series for x, _ in points]
    ys = [y for _, points, _, _ in series for _, y in points]
    top_y = max(ys + ([baseline] if baseline is not None else [])) * 1.05
    lo, hi = math.log10(min(xs)), math.log10(max(xs))
    def px(x):
        return left + (math.log10(x) - lo) / max(hi - lo, 1e-9) * (
            width - left - right)
    def py(y):
        return height - bottom - y / top_y * (height - top - bottom)
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    x0, x1 = left, width - right
    y0, y1 = height - bottom, top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="13">{title}</text>',
           f'<path d="M{x0},{y1} V{y0} H{x1}" stroke="black" fill="none"/>']
    for k in range(6):
        y = top_y * k / 5
        out.append(f'<text x="{x0 - 6}" y="{py(y) + 4:.1f}" '
                   f'text-anchor="end">{y:{y_format}}</text>')
        out.append(f'<path d="M{x0},{py(y):.1f} H{x1}" stroke="#ddd"/>')
    if baseline is not None:
        out.append(f'<path d="M{x0},{py(baseline):.1f} H{x1}" '
                   'stroke="black" stroke-dasharray="4,3"/>')
    for x in sorted(set(xs)):
        out.append(f'<text x="{px(x):.1f}" y="{y0 + 15}" '
                   f'text-anchor="middle">{x}</text>')
    out.append(f'<text x="{(x0 + x1) / 2}" y="{height - 8}" '
               f'text-anchor="middle">{x_label}, log scale</text>')
    out.append(f'<text x="14" y="{(y0 + y1) / 2}" transform="rotate(-90 '
               f'14 {(y0 + y1) / 2})" text-anchor="middle">{y_label}</text>')
    for n, (label, points, dash, colour_index) in enumerate(series):
        colour = colours[colour_index % len(colours)]
        path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}"
                        for i, (x, y) in enumerate(points))
        out.append(f'<path d="{path}" stroke="{colour}" stroke-width="2" '
                   f'fill="none" stroke-dasharray="{dash}"/>')
        ly = top + 16 * n
        out.append(f'<path d="M{x1 + 12},{ly} h24" stroke="{colour}" '
                   f'stroke-width="2" stroke-dasharray="{dash}"/>')
        out.append(f'<text x="{x1 + 40}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def versus_svg(rows, title):
    """TFLOP/s over M, a line per model and baseline (dashed): the
    `versus_torch` rows (dense layers against cuBLAS)."""
    series = []
    for n, model in enumerate(sorted({r["model"] for r in rows})):
        mine = sorted((r for r in rows if r["model"] == model),
                      key=lambda r: r["M"])
        series.append((f"{model} dyncc", [(r["M"], r["dyncc_TFLOPs"])
                                          for r in mine], "", n))
        series.append((f"{model} torch", [(r["M"], r["torch_TFLOPs"])
                                          for r in mine], "6,4", n))
    return line_svg(series, title, "M (rows)", "TFLOP/s", ".0f")


def graph_svg(rows, title):
    """t_torch / t_dyncc over the batch, a line per model, a dashed line at
    1 (above it dyncc is faster): the `versus_torch_graph` rows (graphs
    against the same graph through torch, convs against cuDNN)."""
    series = [(model, sorted((r["batch"], r["ratio"]) for r in rows
                             if r["model"] == model), "", n)
              for n, model in enumerate(sorted({r["model"] for r in rows}))]
    return line_svg(series, title, "batch", "t_torch / t_dyncc", ".1f",
                    baseline=1.0, right=300)


def write_results(out, state):
    """results.json and results.md from what has run so far: written after
    every stage, so a run stopped by the lease's limit leaves its tables."""
    rows, versus, logs = state["rows"], state["versus"], state["logs"]
    node_results, environment = state["nodes"], state["environment"]
    node_failures = [(label, p) for label, p in node_results if p]
    (out / "results.json").write_text(json.dumps(
        {"device": state["device"], "environment": environment, "rows": rows,
         "versus_torch": versus,
         "versus_torch_graph": state.get("versus_graph", []), "logs": logs,
         "nodes": [{"test": label, "problem": p} for label, p in node_results],
         "skipped": state["skipped"]}, indent=1))
    lines = [f"device: {state['device']}", "",
             "| model | dynamic | ok | device ms | detail |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['model']} | {r['dynamic']} | {'yes' if r['ok'] else 'NO'}"
              f" | {r.get('device_ms', 0):.4f} | {r['detail']} |" for r in rows]
    if environment:
        lines += ["", f"ceilings: copy {environment['copy_TBps']:.2f} TB/s, "
                  f"bf16 matmul {environment['bf16_matmul_TFLOPs']:.0f} "
                  f"TFLOP/s (torch {environment['torch']})"]
    if versus:
        lines += ["", "| model | M | dyncc ms | TFLOP/s | torch ms | TFLOP/s "
                  "| t_cublas/t_dyncc |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {v['model']} | {v['M']} | {v['dyncc_ms']:.4f} | "
                  f"{v['dyncc_TFLOPs']:.1f} | {v['torch_ms']:.4f} | "
                  f"{v['torch_TFLOPs']:.1f} | {v['ratio']:.3f} |"
                  for v in versus]
    if state.get("versus_graph"):
        lines += ["", "| model | batch | dyncc ms | torch (cuDNN) ms | "
                  "t_torch/t_dyncc | max rel error |", "|---|---|---|---|---|---|"]
        lines += [f"| {v['model']} | {v['batch']} | {v['dyncc_ms']:.4f} | "
                  f"{v['torch_ms']:.4f} | {v['ratio']:.3f} | "
                  f"{v['max_rel_error']:.1e} |" for v in state["versus_graph"]]
    if node_results:
        lines += ["", f"node tests on cuda:0: {len(node_results) - len(node_failures)}"
                  f" of {len(node_results)} pass"]
        lines += [f"- FAIL {label}: {p}" for label, p in node_failures]
    if state["skipped"]:
        lines += ["", "skipped (past the time budget): " +
                  ", ".join(state["skipped"])]
    for title, text in logs.items():
        lines += ["", f"## {title}", "", "```", text.rstrip(), "```"]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--runtime-build", type=Path)
    parser.add_argument("--fake-driver", type=Path)
    parser.add_argument("--budget", type=float, default=0, metavar="SECONDS",
                        help="stages not begun this long after the start "
                        "are skipped, and reported as skipped (0: no limit); "
                        "tool runs stop at the budget plus a minute")
    parser.add_argument("--plot-from", type=Path, metavar="RESULTS_JSON",
                        help="only draw versus_torch.svg (into --out) from "
                        "a results.json")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.plot_from:
        results = json.loads(args.plot_from.read_text())
        gpu = results["environment"].get("gpu", "?")
        if results.get("versus_torch"):
            (args.out / "versus_torch.svg").write_text(versus_svg(
                results["versus_torch"],
                f"dyncc vs torch.matmul (cuBLAS) on {gpu}"))
        if results.get("versus_torch_graph"):
            (args.out / "versus_torch_graph.svg").write_text(graph_svg(
                results["versus_torch_graph"],
                f"dyncc vs the same graph through torch (cuDNN) on {gpu}"))
        return 0
    started = time.time()
    state = {"device": "", "environment": {}, "rows": [], "versus": [],
             "versus_graph": [], "logs": {}, "nodes": [], "skipped": []}

    def past_budget(what):
        if args.budget and time.time() - started > args.budget:
            state["skipped"].append(what)
            print(f"SKIP {what}: past the {args.budget:.0f} s budget",
                  flush=True)
            return True
        return False

    def tool_timeout():
        if not args.budget:
            return 240
        return max(30, min(240, args.budget + 60 - (time.time() - started)))

    build = args.runtime_build or (HERE / "build")
    if not args.runtime_build:
        start = time.time()
        build_runtime(build)
        print(f"built the run-time in {time.time() - start:.0f} s", flush=True)
    os.environ["DYNCC_RUNTIME_LIB"] = str(build / "lib" /
                                          "libdyncc_runtime.so")
    if args.fake_driver:
        os.environ["DYNCC_CUDA_DRIVER"] = str(args.fake_driver)
    sys.path.insert(0, str(HERE / "python"))
    import dyncc
    from dyncc_models import reference

    bundle = json.loads((HERE / "bundle.json").read_text())
    rows, failures = state["rows"], 0
    torch = None
    if not args.fake_driver:
        try:
            import torch as torch_module
            if torch_module.cuda.is_available():
                torch = torch_module
        except ImportError:
            pass
    gpu_name = torch.cuda.get_device_name() if torch is not None else ""
    environment = state["environment"]
    if torch is not None:
        environment.update({"torch": torch.__version__, "gpu": gpu_name,
                            "copy_TBps": 0.0, "bf16_matmul_TFLOPs": 0.0})
        try:
            environment.update(ceilings(torch))
        except Exception as error:  # measured where torch can, else zeros
            print(f"FAIL ceilings: {error}")
        print(f"ceilings on {gpu_name}: copy {environment['copy_TBps']:.2f} "
              f"TB/s, bf16 matmul {environment['bf16_matmul_TFLOPs']:.0f} "
              "TFLOP/s", flush=True)
    # Entries searched for another GPU's description are left out.
    models = [e for e in bundle["models"]
              if not (gpu_name and e.get("gpu") and e["gpu"] not in gpu_name)]

    # 2. Each model on cuda:0 against the CPU session and onnxruntime.
    for entry in models:
        if past_budget(f"compare {entry['name']}"):
            continue
        model = HERE / entry["model"]
        artifact = HERE / entry["artifact"]
        if args.fake_driver:
            os.environ["DYNCC_FAKE_CUDA_HOST_CODE"] = str(
                host_code(artifact, args.out / f"{entry['name']}.so"))
        art = dyncc.load(str(artifact))
        cpu, gpu = art.session("cpu"), art.session("cuda:0")
        state["device"] = state["device"] or gpu.device
        try:
            ort = reference.onnxruntime_session(model)
        except ImportError:
            ort = None
        sizes = entry["dynamic"] + ([] if args.fake_driver
                                    else entry.get("dynamic_gpu", []))
        for dynamic in sizes:
            row = {"model": entry["name"], "dynamic": dynamic}
            try:
                feeds = reference.random_feeds(model, dynamic)
                got = gpu.run(feeds)
                row["device_ms"] = gpu.device_time()
                want_cpu = cpu.run(feeds)
                want_ort = dict(zip([o.name for o in ort.get_outputs()],
                                    ort.run(None, feeds))) if ort else {}
                checks = []
                for name, have in got.items():
                    ok, text = compare(have, want_cpu[name], reference.tolerances)
                    checks.append((ok, f"{name} vs cpu: {text}"))
                    if name in want_ort:
                        ok, text = compare(have, want_ort[name],
                                           reference.tolerances)
                        checks.append((ok, f"{name} vs onnxruntime: {text}"))
                # Again twice on the same inputs: the second run of the
                # same launches captures a CUDA graph, the third replays it.
                for _ in range(2):
                    again = gpu.run(feeds)
                for name, have in again.items():
                    ok, text = compare(have, want_cpu[name], reference.tolerances)
                    checks.append((ok, f"{name} by graph vs cpu: {text}"))
                graphs = gpu.cuda_graphs()
                row["graphs"] = graphs
                if torch is not None:
                    tensors = {k: torch.from_numpy(v).cuda()
                               for k, v in feeds.items()}
                    outs = gpu.run(tensors, device_outputs=True)
                    for name, out in outs.items():
                        have = torch.from_dlpack(out).cpu().numpy()
                        ok, text = compare(have, want_cpu[name],
                                           reference.tolerances)
                        checks.append((ok, f"{name} by DLPack vs cpu: {text}"))
                row["ok"] = all(ok for ok, _ in checks)
                row["detail"] = "; ".join(text for _, text in checks)
            except Exception as error:  # one line per failure, then go on
                row["ok"], row["detail"] = False, f"error: {error}"
            failures += not row["ok"]
            rows.append(row)
            print(f"{'ok  ' if row['ok'] else 'FAIL'} {entry['name']} "
                  f"dynamic={dynamic} device {row.get('device_ms', 0):.4f} ms: "
                  f"{row['detail']}", flush=True)
        gpu.close()
        cpu.close()
        art.close()
    write_results(args.out, state)

    # 3. The dense layers against the same matmuls through torch (cuBLAS),
    # then the CNN blocks against their graphs through torch (cuDNN).
    for mark, key, versus, what in (
            ("versus_torch", "versus", versus_torch, "versus torch"),
            ("versus_torch_graph", "versus_graph", versus_torch_graph,
             "versus torch graph")):
        for entry in models:
            if torch is None or not entry.get(mark):
                continue
            if past_budget(f"{what} {entry['name']}"):
                continue
            art = dyncc.load(str(HERE / entry["artifact"]))
            try:
                state[key] += versus(entry, art, torch, reference)
            except Exception as error:  # one line per failure, then go on
                failures += 1
                print(f"FAIL {what} {entry['name']}: {error}")
            art.close()
    if state["versus"]:
        (args.out / "versus_torch.svg").write_text(versus_svg(
            state["versus"], f"dyncc vs torch.matmul (cuBLAS) on {gpu_name}"))
    if state["versus_graph"]:
        (args.out / "versus_torch_graph.svg").write_text(graph_svg(
            state["versus_graph"],
            f"dyncc vs the same graph through torch (cuDNN) on {gpu_name}"))
    write_results(args.out, state)

    # 4. Tuning and timings through the run-time-only tool.
    tool = build / "bin" / "dyncc-run"
    logs = state["logs"]
    for entry in models:
        artifact = HERE / entry["artifact"]
        if args.fake_driver:
            # The fake runs blocks one by one on the host: sweeping a CNN's
            # image sizes there takes minutes, and times nothing real.
            if not entry.get("tune"):
                continue
            os.environ["DYNCC_FAKE_CUDA_HOST_CODE"] = str(
                args.out / f"{entry['name']}.so")
        repeat = "3" if args.fake_driver else "20"
        sweep = [str(tool), "bench", str(artifact), "--device", "cuda:0",
                 "--repeat", repeat, *entry.get("bench_args", [])]
        if entry.get("tune") and not past_budget(f"tune {entry['name']}"):
            tune = run_tool(
                [str(tool), "tune", str(artifact), "-o",
                 str(args.out / f"{entry['name']}.tuned.dyncc"), "--repeat",
                 "2" if args.fake_driver else "10",
                 *entry.get("tune_args", [])], timeout=tool_timeout())
            logs[f"tune {entry['name']}"] = tune.stdout + tune.stderr
            if tune.returncode != 0:
                failures += 1
                print(f"FAIL tune {entry['name']}: {tune.stderr.strip()}")
            else:
                print(tune.stdout.strip().splitlines()[-1], flush=True)
            write_results(args.out, state)
        if entry.get("bench", True) and not past_budget(
                f"bench {entry['name']}"):
            bench = run_tool(sweep, timeout=tool_timeout())
            logs[f"bench {entry['name']}"] = bench.stdout + bench.stderr
            if bench.returncode != 0:
                failures += 1
                print(f"FAIL bench {entry['name']}: {bench.stderr.strip()}")
            if entry.get("graphs_ab") and not args.fake_driver:
                # The same sweep launching kernel by kernel: what graphs save.
                bench = run_tool(sweep, timeout=tool_timeout(),
                                 env=dict(os.environ, DYNCC_CUDA_GRAPHS="0"))
                logs[f"bench {entry['name']} (graphs off)"] = (bench.stdout +
                                                               bench.stderr)
            write_results(args.out, state)

    # 5. Where ncu is there: each kernel of the entries marked `profile`,
    # at the sizes given (the model's picks), with the counters that found
    # the write-back and split-K bugs (GpuResults.md): time, pipe use,
    # shared loads and their bank conflicts, local memory, occupancy.
    ncu = shutil.which("ncu")
    for entry in models:
        if args.fake_driver or not entry.get("profile"):
            continue
        if not ncu:
            logs[f"profile {entry['name']}"] = "ncu is not on the PATH"
            continue
        for dims in entry["profile"]:
            title = f"profile {entry['name']} {' '.join(dims)}"
            if past_budget(title):
                continue
            try:
                profile = run_tool(
                    [ncu, "--clock-control", "none", "--metrics",
                     ",".join(PROFILE_METRICS), str(tool),
                     str(HERE / entry["artifact"]), *dims, "--device",
                     "cuda:0", "--quiet"], timeout=tool_timeout())
                logs[title] = "\n".join(
                    line for line in
                    (profile.stdout + profile.stderr).splitlines()
                    if not line.startswith("==PROF==") and
                    "Warning" not in line)
            except OSError as error:  # a profile is worth no failure
                logs[title] = f"error: {error}"
            write_results(args.out, state)

    # 6. The ONNX node tests on cuda:0.
    nodes = bundle.get("nodes", [])
    if nodes and not past_budget(f"{len(nodes)} node tests"):
        state["nodes"] = run_node_tests(nodes, dyncc, args.out,
                                        args.fake_driver)
    node_failures = [(label, p) for label, p in state["nodes"] if p]
    failures += len(node_failures)
    if state["nodes"]:
        print(f"node tests on cuda:0: "
              f"{len(state['nodes']) - len(node_failures)} of "
              f"{len(state['nodes'])} pass", flush=True)

    lines = write_results(args.out, state)
    for line in lines:
        if line.startswith("| bert") or line.startswith("ceilings"):
            print(line)
    skipped = (f", {len(state['skipped'])} stages skipped (budget)"
               if state["skipped"] else "")
    print(f"{len(rows) - sum(not r['ok'] for r in rows)} of {len(rows)} "
          f"comparisons passed, {failures} failures{skipped}; results in "
          f"{args.out} after {time.time() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
