#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Whole-model run time on the host CPU target against onnxruntime's CPU
provider, in one script: the model is compiled once (`--target cpu`), then
each shape runs a warm-up and `--repeat` timed runs in both, on the same
inputs; the median of each and their ratio are printed.

    .venv/bin/python benchmarks/cpu_models.py [--model bert:base] [--shapes 1x16,2x64]

The CPU target runs the GPU's block and thread decomposition, one block
task per pool thread; it is the target CI checks numerics on, so this
tracks its cost, not GPU speed. The last line is the headline.
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from fusion import model_path  # noqa: E402


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bert:base")
    parser.add_argument("--shapes", default="1x16,2x64")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import onnxruntime as ort
    import dyncc

    path = model_path(args.model)
    with tempfile.TemporaryDirectory() as tmp:
        artifact = dyncc.compile(path, Path(tmp) / "model.dyncc", targets=["cpu"])
        session = dyncc.load(artifact).session("cpu")
        ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [i.name for i in ref.get_inputs()]
        print(f"{'shape':>8} {'dyncc s':>9} {'onnxruntime s':>14} {'ratio':>6}")
        ratios = []
        for shape in args.shapes.split(","):
            batch, seq = (int(v) for v in shape.split("x"))
            feeds = feeds_for(names, batch, seq, np.random.default_rng(0))
            ours = median_time(lambda: session.run(feeds), args.repeat)
            theirs = median_time(lambda: ref.run(None, feeds), args.repeat)
            ratios.append(ours / theirs)
            print(f"{shape:>8} {ours:9.3f} {theirs:14.3f} {ours / theirs:6.1f}")
        print(f"{args.model}: dyncc CPU / onnxruntime CPU = "
              f"{min(ratios):.1f}x to {max(ratios):.1f}x slower")


if __name__ == "__main__":
    main()
