#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Whole-model run time on the host CPU target against onnxruntime's CPU
provider, in one script: the model is compiled once (by default with every
build of the host code: `--target cpu,cpu-x86-64-v3,cpu-x86-64-v4`), then
each shape runs a warm-up and `--repeat` timed runs in onnxruntime and in a
dyncc session per build this processor runs (DYNCC_HOST_ISA at load;
docs/Runtime.md, "Host code levels"), on the same inputs; the median of
each and their ratios are printed.

    .venv/bin/python benchmarks/cpu_models.py [--model bert:base] \\
        [--shapes 1x16,2x64] [--artifact FILE] [--plot FILE.svg]

The CPU target runs the GPU's block and thread decomposition, one block
task per pool thread; it is the target CI checks numerics on, so this
tracks its cost, not GPU speed. The last lines are the headline: each
build's time over onnxruntime's, and the highest build's speed-up over
the portable one (geometric means over the shapes).
"""
import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from fusion import model_path  # noqa: E402

LEVELS = ["x86-64-v2", "x86-64-v3", "x86-64-v4"]


def feeds_for(session_inputs, batch, seq, rng):
    feeds = {}
    for name in session_inputs:
        if name == "input_ids":
            feeds[name] = rng.integers(0, 1000, (batch, seq)).astype(np.int64)
        elif name in ("attention_mask",):
            feeds[name] = np.ones((batch, seq), np.int64)
        else:
            feeds[name] = np.zeros((batch, seq), np.int64)
    return feeds


def median_time(run, repeat):
    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_at(dyncc, path, isa):
    os.environ["DYNCC_HOST_ISA"] = isa
    try:
        return dyncc.load(path)
    finally:
        del os.environ["DYNCC_HOST_ISA"]


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def write_plot(path, title, shapes, series):
    """A grouped bar chart (SVG) of each series' seconds per shape, on a
    log scale, with the legend's names."""
    colours = ["#777777", "#4c72b0", "#dd8452", "#55a868", "#c44e52"]
    width, height, left, bottom, top = 760, 360, 70, 50, 40
    plot_w, plot_h = width - left - 20, height - top - bottom
    values = [v for _, vs in series for v in vs]
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values)))
    span = math.log10(hi) - math.log10(lo)

    def y(v):
        return top + plot_h * (1 - (math.log10(v) - math.log10(lo)) / span)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height}" font-family="sans-serif" font-size="12">',
           f'<text x="{width / 2}" y="20" text-anchor="middle" '
           f'font-size="14">{title}</text>']
    decade = lo
    while decade <= hi * 1.0001:
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(decade):.1f}" '
                   f'y2="{y(decade):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(decade) + 4:.1f}" '
                   f'text-anchor="end">{decade:g} s</text>')
        decade *= 10
    group_w = plot_w / len(shapes)
    bar_w = group_w * 0.8 / len(series)
    for i, shape in enumerate(shapes):
        x0 = left + i * group_w + group_w * 0.1
        for j, (_, vs) in enumerate(series):
            x = x0 + j * bar_w
            out.append(f'<rect x="{x:.1f}" y="{y(vs[i]):.1f}" '
                       f'width="{bar_w - 1:.1f}" '
                       f'height="{top + plot_h - y(vs[i]):.1f}" '
                       f'fill="{colours[j % len(colours)]}"/>')
        out.append(f'<text x="{x0 + group_w * 0.4:.1f}" '
                   f'y="{top + plot_h + 16}" text-anchor="middle">'
                   f'{shape}</text>')
    for j, (name, _) in enumerate(series):
        x = left + 10 + j * 140
        out.append(f'<rect x="{x}" y="{height - 22}" width="12" height="12" '
                   f'fill="{colours[j % len(colours)]}"/>')
        out.append(f'<text x="{x + 16}" y="{height - 12}">{name}</text>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bert:base")
    parser.add_argument("--shapes", default="1x16,2x64")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--artifact", help="a compiled .dyncc of the model "
                        "(else it is compiled with every build of the host "
                        "code, batch 1-8, sequence 1-512)")
    parser.add_argument("--plot", help="also draw the times (SVG)")
    args = parser.parse_args()
    import onnxruntime as ort
    import dyncc

    path = model_path(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        artifact = args.artifact or dyncc.compile(
            path, Path(tmp) / "model.dyncc",
            targets=["cpu", "cpu-x86-64-v3", "cpu-x86-64-v4"],
            dims={"batch": (1, 8), "seq": (1, 512)})
        sessions = {}
        for isa in LEVELS:
            loaded = load_at(dyncc, artifact, isa)
            if loaded.host_isa == isa:
                sessions[isa] = loaded.session("cpu")
        if not sessions:
            sys.exit(f"{artifact}: no x86-64 build of the host code runs here")
        ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [i.name for i in ref.get_inputs()]
        print(f"{'shape':>8} {'onnxruntime s':>14}" +
              "".join(f" {isa + ' s':>13} {'/ ort':>6}" for isa in sessions))
        times = {isa: [] for isa in ["onnxruntime", *sessions]}
        shapes = args.shapes.split(",")
        for shape in shapes:
            batch, seq = (int(v) for v in shape.split("x"))
            feeds = feeds_for(names, batch, seq, np.random.default_rng(0))
            theirs = median_time(lambda: ref.run(None, feeds), args.repeat)
            times["onnxruntime"].append(theirs)
            line = f"{shape:>8} {theirs:14.3f}"
            for isa, session in sessions.items():
                ours = median_time(lambda: session.run(feeds), args.repeat)
                times[isa].append(ours)
                line += f" {ours:13.3f} {ours / theirs:6.1f}"
            print(line)
        for isa in sessions:
            ratios = [o / t for o, t in zip(times[isa], times["onnxruntime"])]
            print(f"{args.model}: dyncc CPU ({isa}) / onnxruntime CPU = "
                  f"{geomean(ratios):.1f}x (geometric mean; {min(ratios):.1f}x "
                  f"to {max(ratios):.1f}x)")
        top, base = list(sessions)[-1], list(sessions)[0]
        if top != base:
            gains = [b / t for b, t in zip(times[base], times[top])]
            print(f"{args.model}: the {top} build is {geomean(gains):.2f}x as "
                  f"fast as the {base} build (geometric mean; "
                  f"{min(gains):.2f}x to {max(gains):.2f}x)")
        if args.plot:
            write_plot(args.plot, f"{args.model} on the host: median s per run",
                       shapes, [(name, ts) for name, ts in times.items()])
            print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
