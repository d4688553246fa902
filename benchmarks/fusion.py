#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fusion: time of the `fused` and `outlined` stages, groups per model, and the device-memory
bytes the fused groups move against the same ops unfused (the driver's
--emit=fusion-report, whose symbolic byte counts are evaluated here at a
binding), in one script.

    .venv/bin/python benchmarks/fusion.py [--models bert:large,...] [--bind batch=8,seq=128]

Models come from benchmarks/.cache (generated like import_shapes.py) or are
paths. The last line is the headline.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))


def model_path(spec):
    if spec.endswith(".onnx"):
        return Path(spec)
    family, config = spec.split(":")
    path = ROOT / "benchmarks" / ".cache" / f"{family}_{config}.onnx"
    if not path.exists():
        import onnx
        import dyncc_models
        path.parent.mkdir(parents=True, exist_ok=True)
        onnx.save(dyncc_models.make_model(family, config, seed=0), str(path))
    return path


def evaluate(expr, binding):
    """Evaluates a printed #sym.expr polynomial at `binding` (symbols that are
    not bound take 1)."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)) - {
        "floordiv", "ceildiv", "mod", "min", "max"}
    env = {n: binding.get(n, 1) for n in names}
    env.update(floordiv=lambda a, b: a // b, ceildiv=lambda a, b: -(-a // b),
               mod=lambda a, b: a % b, min=min, max=max)
    return eval(expr, {"__builtins__": {}}, env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="bert:large,bert:base,gpt2:small,vit:b16,resnet:50")
    ap.add_argument("--bind", default="batch=8,seq=128,height=224,width=224")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build", default=str(ROOT / "build"))
    args = ap.parse_args()
    dyncc = Path(args.build) / "bin" / "dyncc"
    binding = {k: int(v) for k, v in (kv.split("=") for kv in args.bind.split(","))}
    env = dict(os.environ, DYNCC_PROGRESS="1")
    print(f"{'model':12} {'ops':>6} {'groups':>6} {'fused s':>8} {'outline s':>9} "
          f"{'fused MB':>10} {'unfused MB':>11} {'traffic ratio':>13}")
    headline = None
    for spec in args.models.split(","):
        path = model_path(spec)
        times, outline_times = [], []
        for _ in range(args.repeat):
            p = subprocess.run([dyncc, "compile", path, "--stop-after=outlined", "--quiet"],
                               capture_output=True, text=True, env=env)
            if p.returncode != 0:
                raise SystemExit(p.stderr)
            times.append(float(re.search(r"^\s+fused\s+([0-9.]+) s", p.stderr, re.M).group(1)))
            outline_times.append(
                float(re.search(r"^\s+outlined\s+([0-9.]+) s", p.stderr, re.M).group(1)))
        rep = subprocess.run([dyncc, "compile", path, "--emit=fusion-report", "--quiet"],
                             capture_output=True, text=True).stdout
        total = re.search(r"^total: (\d+) groups of (\d+) ops; bytes (.*) \(unfused (.*)\)$",
                          rep, re.M)
        groups, ops = int(total.group(1)), int(total.group(2))
        fused = evaluate(total.group(3), binding) / 2**20
        unfused = evaluate(total.group(4), binding) / 2**20
        t = statistics.median(times)
        to = statistics.median(outline_times)
        print(f"{spec:12} {ops:>6} {groups:>6} {t:>8.3f} {to:>9.3f} {fused:>10.1f} "
              f"{unfused:>11.1f} {unfused / fused:>12.2f}x")
        if headline is None:
            headline = (spec, t + to, groups, unfused / fused)
    spec, t, groups, ratio = headline
    print(f"headline: {spec} fusion + outlining {t:.3f} s ({'under' if t < 1 else 'OVER'} "
          f"the 1 s budget), {groups} groups, unfused/fused device-memory traffic "
          f"{ratio:.2f}x at {args.bind}")


if __name__ == "__main__":
    main()
