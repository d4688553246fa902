#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Column reductions (over an outer axis, with axes after it): the tile
search's column tiles (the default since session 16: each thread walks its
columns' reduced axis, a norm's channels whole in its tile) against the
fixed tile levels such kernels had before (`--tile-config reduce=default`:
`block 1x1x4x32 thread 1x1x1x1`, which gives a norm's thread one channel
of its columns, so it recomputes their statistics once per channel), for
a softmax over the channels of [1, C, S, S] (opset 13), ConvNeXt's
channels-first LayerNorm over [1, C, S, S], and a mean over the positions
of [1, L, 768], on the host CPU target, which runs the same blocks and
steps a GPU would, one block task at a time on the run-time's thread pool.
Both artifacts are compiled and run in this one script, beside
onnxruntime's CPU provider on the same model and inputs; it prints the
median time of each per shape and the ratios.

    .venv/bin/python benchmarks/column_reductions.py [--channels 16,96]
        [--images 14,56,128] [--lengths 128,512] [--repeat 5]

The CPU times measure the work each tiling does, not GPU speed: no GPU has
run these kernels yet. Since session 24 the mean's searched kernel splits
each column over a group of lanes (`reduce column`), which the CPU runs as
a loop: slower there than a thread per output (docs/CostModel.md, "Columns
split over lanes").
"""
import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import dyncc  # noqa: E402
from row_reductions import _OrtSession, median_time  # noqa: E402

STRATEGIES = {
    "searched": None,  # the default
    "fixed": "default",
}


def make_model(path, kind, channels, batch=1, spatial=("H", "W"),
               length="L"):
    """`kind`: softmax or layernorm over the channels of X[batch, C,
    *spatial], or a mean over the positions of X[batch, length, 768]
    (sizes, or symbols' names). The GPU-check bundle packs the same models
    (scripts/gpu_bundle.py)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    inits = []
    if kind == "softmax":
        nodes = [helper.make_node("Softmax", ["X"], ["Y"], axis=1)]
        shape = [batch, channels, *spatial]
    elif kind == "layernorm":
        inits = [numpy_helper.from_array(
                     rng.uniform(0.5, 1.5, (channels, 1, 1)).astype(np.float32),
                     "g"),
                 numpy_helper.from_array(
                     rng.uniform(-1, 1, (channels, 1, 1)).astype(np.float32),
                     "b"),
                 numpy_helper.from_array(np.array(1e-6, np.float32), "eps")]
        nodes = [helper.make_node("ReduceMean", ["X"], ["u"], axes=[1]),
                 helper.make_node("Sub", ["X", "u"], ["d"]),
                 helper.make_node("Mul", ["d", "d"], ["d2"]),
                 helper.make_node("ReduceMean", ["d2"], ["v"], axes=[1]),
                 helper.make_node("Add", ["v", "eps"], ["ve"]),
                 helper.make_node("Sqrt", ["ve"], ["s"]),
                 helper.make_node("Div", ["d", "s"], ["n"]),
                 helper.make_node("Mul", ["n", "g"], ["ng"]),
                 helper.make_node("Add", ["ng", "b"], ["Y"])]
        shape = [batch, channels, *spatial]
    else:
        nodes = [helper.make_node("ReduceMean", ["X"], ["Y"], axes=[1],
                                  keepdims=0)]
        shape = [batch, length, 768]
    out = [batch, 768] if kind == "mean" else shape
    graph = helper.make_graph(
        nodes, kind, [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, out)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def compare(model, tmp, dims, shapes, make_feeds, repeat, label):
    """Compiles `model` per strategy, checks both against onnxruntime, and
    prints a table row per shape."""
    import onnxruntime as ort
    sessions = {}
    for name, config in STRATEGIES.items():
        art = dyncc.compile(model, Path(tmp) / f"{model.stem}_{name}.dyncc",
                            targets=["cpu"], dims=dims,
                            tile_configs={"reduce": config} if config else None)
        sessions[name] = dyncc.load(art).session("cpu")
    ref = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    print(f"| {label} | searched (ms) | fixed tiles (ms) | fixed / searched | "
          "onnxruntime (ms) | searched / onnxruntime |")
    print("|---|---|---|---|---|---|")
    for shape in shapes:
        feeds = make_feeds(shape)
        want = ref.run(["Y"], feeds)[0]
        for s in sessions.values():
            np.testing.assert_allclose(s.run(feeds)["Y"], want, rtol=1e-4,
                                       atol=1e-4)
        t = {name: median_time(s, feeds, repeat) for name, s in sessions.items()}
        ort_time = median_time(_OrtSession(ref), feeds, repeat)
        print(f"| {shape} | {t['searched'] * 1e3:.3f} | {t['fixed'] * 1e3:.3f} | "
              f"{t['fixed'] / t['searched']:.1f}x | {ort_time * 1e3:.3f} | "
              f"{t['searched'] / ort_time:.1f}x |", flush=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", default="16,96")
    parser.add_argument("--images", default="14,56,128",
                        help="image sizes S (S x S)")
    parser.add_argument("--lengths", default="128,512",
                        help="sequence lengths L of the mean")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    channels = [int(c) for c in args.channels.split(",")]
    images = [int(s) for s in args.images.split(",")]
    lengths = [int(v) for v in args.lengths.split(",")]
    print(f"median of {args.repeat}, host CPU target")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("softmax", "layernorm"):
            for c in channels:
                model = Path(tmp) / f"{kind}{c}.onnx"
                make_model(model, kind, c)

                def image_feeds(size, c=c):
                    rng = np.random.default_rng(size)
                    return {"X": rng.uniform(-3, 3, (1, c, size, size))
                            .astype(np.float32)}
                print(f"\n{kind} over the channels of [1, {c}, S, S]:\n")
                compare(model, tmp, {"H": (1, 512), "W": (1, 512)}, images,
                        image_feeds, args.repeat, "S")
        model = Path(tmp) / "mean.onnx"
        make_model(model, "mean", 0)

        def seq_feeds(length):
            rng = np.random.default_rng(length)
            return {"X": rng.uniform(-3, 3, (1, length, 768)).astype(np.float32)}
        print("\nmean over the positions of [1, L, 768]:\n")
        compare(model, tmp, {"L": (1, 4096)}, lengths, seq_feeds, args.repeat,
                "L")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
