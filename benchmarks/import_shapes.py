#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Import + symbolic shape propagation time of whole models, against ONNX's
own (static, C++) shape inference run in the same script on the same file.

    .venv/bin/python benchmarks/import_shapes.py [--models bert:large,...]

Each model is generated once into benchmarks/.cache (full-size BERT-large is
1.3 GB). dyncc's time is the `import` + `shapes` stage times the driver
reports (median of --repeat runs); its wall time includes process start and
reading the file. The baseline is onnx.shape_inference.infer_shapes_path
(which propagates only what is static). Peak RSS of the dyncc process is
reported too. The last line is the headline ratio.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def stage_times(stderr):
    times = {}
    for m in re.finditer(r"^\s+(\S+)\s+([0-9.]+) s", stderr, re.M):
        times[m.group(1)] = float(m.group(2))
    return times


def run_dyncc(dyncc, path):
    # The driver prints stage times on a terminal, or with DYNCC_PROGRESS=1.
    env = dict(os.environ, DYNCC_PROGRESS="1")
    start = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "maxrss_kb=%M", str(dyncc), "compile", str(path),
         "--stop-after=shapes", "--quiet"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    times = stage_times(proc.stderr)
    rss = int(re.search(r"maxrss_kb=(\d+)", proc.stderr).group(1))
    return times.get("import", 0) + times.get("shapes", 0), wall, rss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="bert:large,bert:base,gpt2:small,vit:b16,resnet:50")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--build", default=str(ROOT / "build"))
    args = parser.parse_args()
    import onnx
    import dyncc_models

    dyncc = Path(args.build) / "bin" / "dyncc"
    cache = ROOT / "benchmarks" / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    for spec in args.models.split(","):
        family, config = spec.split(":")
        path = cache / f"{family}_{config}.onnx"
        if not path.exists():
            print(f"generating {path.name} ...", file=sys.stderr, flush=True)
            onnx.save(dyncc_models.make_model(family, config, seed=0), str(path))
        nodes = len(onnx.load(str(path), load_external_data=False).graph.node)
        ours = [run_dyncc(dyncc, path) for _ in range(args.repeat)]
        base = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            onnx.shape_inference.infer_shapes_path(str(path), str(cache / "inferred.onnx"))
            base.append(time.perf_counter() - start)
        stage = statistics.median(o[0] for o in ours)
        wall = statistics.median(o[1] for o in ours)
        rss = max(o[2] for o in ours)
        b = statistics.median(base)
        rows.append((spec, nodes, path.stat().st_size / 2**20, stage, wall, rss, b))
    (cache / "inferred.onnx").unlink(missing_ok=True)

    print(f"{'model':<12} {'nodes':>6} {'MB':>7} {'dyncc import+shapes s':>22} "
          f"{'dyncc wall s':>13} {'peak RSS MB':>12} {'onnx infer_shapes s':>20} {'ratio':>7}")
    for spec, nodes, mb, stage, wall, rss, b in rows:
        print(f"{spec:<12} {nodes:>6} {mb:>7.0f} {stage:>22.3f} {wall:>13.3f} "
              f"{rss:>12.0f} {b:>20.3f} {b / stage:>7.2f}")
    head = rows[0]
    print(f"headline: {head[0]} import+propagation {head[3]:.3f} s "
          f"({'under' if head[3] < 1 else 'OVER'} the 1 s budget), "
          f"{head[6] / head[3]:.2f}x the speed of onnx.shape_inference")


if __name__ == "__main__":
    main()
