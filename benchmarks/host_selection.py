#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Selection on the host: whole-model CPU runs with the GEMM variants the
host model picks (the default) against those the tile search's table
picks (DYNCC_HOST_SELECTION=table, searched for a GPU), in one script on
one artifact: two cpu sessions, the same inputs, alternating runs; the
median of each and their ratio per shape, and the largest difference
between the two sessions' outputs.

    .venv/bin/python benchmarks/host_selection.py [--model bert:base] \
        [--shapes 1x1,1x16,2x64] [--repeat 3] [--artifact FILE]

The last line is the headline: the table's time over the model's
(geometric mean over the shapes).
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

from cpu_models import feeds_for  # noqa: E402
from fusion import model_path  # noqa: E402


def session(artifact, selection):
    os.environ["DYNCC_HOST_SELECTION"] = selection
    try:
        return artifact.session("cpu")
    finally:
        del os.environ["DYNCC_HOST_SELECTION"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="bert:base")
    parser.add_argument("--shapes", default="1x1,1x16,1x64,2x64,1x128,8x128")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--artifact", help="a compiled .dyncc (else the "
                        "model is compiled, --target cpu, batch 1-8, "
                        "sequence 1-512)")
    args = parser.parse_args()
    import dyncc

    with tempfile.TemporaryDirectory() as tmp:
        path = args.artifact
        if not path:
            path = dyncc.compile(model_path(args.model),
                                 Path(tmp) / "model.dyncc", targets=["cpu"],
                                 dims={"batch": (1, 8), "seq": (1, 512)})
        artifact = dyncc.load(path)
        table, model = session(artifact, "table"), session(artifact, "model")
        names = [name for name, _, _ in artifact.inputs]
        print(f"{'shape':>8} {'table ms':>10} {'model ms':>10} {'speed-up':>9} "
              f"{'GEMMs picked apart':>19} {'outputs differ by':>18}")
        ratios = []
        for shape in args.shapes.split(","):
            batch, seq = (int(v) for v in shape.split("x"))
            feeds = feeds_for(names, batch, seq, np.random.default_rng(0))
            want, got = table.run(feeds), model.run(feeds)
            differ = max(float(np.max(np.abs(want[k] - got[k])))
                         for k in want)
            apart = sum(a != b for a, b in zip(table.variants, model.variants)
                        if a is not None)
            times = {"table": [], "model": []}
            for _ in range(args.repeat):
                for name, sess in (("table", table), ("model", model)):
                    start = time.perf_counter()
                    sess.run(feeds)
                    times[name].append(time.perf_counter() - start)
            t = statistics.median(times["table"]) * 1e3
            m = statistics.median(times["model"]) * 1e3
            ratios.append(t / m)
            print(f"{shape:>8} {t:10.1f} {m:10.1f} {t / m:8.2f}x "
                  f"{apart:>19} {differ:18.2e}")
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{args.model}: the table's picks take {mean:.2f}x the host "
              f"model's time on the CPU target (geometric mean, "
              f"{min(ratios):.2f}x to {max(ratios):.2f}x)")


if __name__ == "__main__":
    main()
