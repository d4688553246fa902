#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Row reductions: a warp per row (the default, `reduce warp`) against the
tile levels of every other kind (`reduce thread`: each thread reduces the
rows of its outputs itself, the configuration row reductions had before),
for softmax and LayerNorm over [B, L, D], and for InstanceNormalization
over [1, C, S, S] (its statistics over two axes, rows since
dyncc-collapse-row-dims), on the host CPU target, which
runs the same blocks, lanes and steps the GPU would, one block task at a
time on the run-time's thread pool. Both artifacts are compiled and run in
this one script, beside onnxruntime's CPU provider on the same model and
inputs; it prints the median time of each per D and the ratios.

    .venv/bin/python benchmarks/row_reductions.py [--rows 512] [--dims 64,256,768,2048]
        [--channels 64] [--images 14,28,56] [--repeat 5]

The CPU times measure the work each strategy does (the thread strategy
recomputes a row's maximum and sum for every 4 outputs, and the maximum
again in every step of the sum), not GPU speed: no GPU has run these
kernels yet.
"""
import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "python" / "tests"))

import dyncc  # noqa: E402

STRATEGIES = {
    "warp": None,  # the default
    "thread": "block 1x4x128 thread 1x1x4 k 64",
}


def make_model(path):
    """Softmax and LayerNorm over [B, L, D]: the row-reduction case of the
    kernel-kind tests."""
    import onnx
    from test_codegen_kinds import row_reduce_case
    onnx.save(row_reduce_case()[0], str(path))


def make_instance_model(path, channels):
    """InstanceNormalization over [1, C, H, W], H and W dynamic."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(
                 rng.uniform(0.5, 1.5, (channels,)).astype(np.float32), "s"),
             numpy_helper.from_array(
                 rng.uniform(-1, 1, (channels,)).astype(np.float32), "b")]
    graph = helper.make_graph(
        [helper.make_node("InstanceNormalization", ["X", "s", "b"], ["Y"])],
        "instance_norm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       [1, channels, "H", "W"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                       [1, channels, "H", "W"])], inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))


def compare(model, tmp, dims, shapes, make_feeds, outputs, repeat, label):
    """Compiles `model` per strategy, checks they agree, and prints a table
    row per shape: each strategy's median time and onnxruntime's."""
    import onnxruntime as ort
    sessions = {}
    for name, config in STRATEGIES.items():
        art = dyncc.compile(model, Path(tmp) / f"{model.stem}_{name}.dyncc",
                            targets=["cpu"], dims=dims,
                            tile_configs={"reduce": config} if config else None)
        sessions[name] = dyncc.load(art).session("cpu")
    ref = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    print(f"| {label} | warp per row (ms) | thread tiles (ms) | thread / warp | "
          "onnxruntime (ms) | warp / onnxruntime |")
    print("|---|---|---|---|---|---|")
    for shape in shapes:
        feeds = make_feeds(shape)
        got = {name: s.run(feeds) for name, s in sessions.items()}
        want = ref.run(outputs, feeds)
        for out, w in zip(outputs, want):
            for name in sessions:
                np.testing.assert_allclose(got[name][out], w, rtol=1e-4,
                                           atol=1e-4)
        t = {name: median_time(s, feeds, repeat) for name, s in sessions.items()}
        ort_time = median_time(_OrtSession(ref), feeds, repeat)
        print(f"| {shape} | {t['warp'] * 1e3:.2f} | {t['thread'] * 1e3:.2f} | "
              f"{t['thread'] / t['warp']:.1f}x | {ort_time * 1e3:.2f} | "
              f"{t['warp'] / ort_time:.1f}x |", flush=True)


def median_time(session, feeds, repeat):
    session.run(feeds)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        session.run(feeds)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class _OrtSession:
    def __init__(self, session):
        self.session = session

    def run(self, feeds):
        return self.session.run(None, feeds)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=512, help="B x L")
    parser.add_argument("--dims", default="64,256,768,2048")
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--images", default="14,28,56",
                        help="instance norm image sizes S (S x S)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    dims = [int(d) for d in args.dims.split(",")]
    images = [int(s) for s in args.images.split(",")]
    print(f"median of {args.repeat}, host CPU target")
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "rows.onnx"
        make_model(model)

        def row_feeds(d):
            rng = np.random.default_rng(d)
            return {"X": rng.uniform(-3, 3, (1, args.rows, d)).astype(np.float32),
                    "g": rng.uniform(0.5, 1.5, (d,)).astype(np.float32),
                    "beta": rng.uniform(-1, 1, (d,)).astype(np.float32)}
        print(f"\nsoftmax and LayerNorm over [1, {args.rows}, D]:\n")
        compare(model, tmp, {"B": (1, 64), "L": (1, 4096), "D": (1, 8192)},
                dims, row_feeds, ["Y", "Z"], args.repeat, "D")

        instance = Path(tmp) / "instance.onnx"
        make_instance_model(instance, args.channels)

        def image_feeds(size):
            rng = np.random.default_rng(size)
            return {"X": rng.uniform(-3, 3, (1, args.channels, size, size))
                    .astype(np.float32)}
        print(f"\nInstanceNormalization over [1, {args.channels}, S, S]:\n")
        compare(instance, tmp, {"H": (1, 512), "W": (1, 512)}, images,
                image_feeds, ["Y"], args.repeat, "S")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
