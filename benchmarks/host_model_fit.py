#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The host model's constants (cost::HostDevice, include/dyncc/CostModel/
Host.h) fitted to measurements of f32 SIMT GEMM tiles on the host, per
build of the host code, and how well they choose. The measurements are
benchmarks/host_tile_sweep.py's CSV (one tile per artifact, BERT-base's
dense layers), or `dyncc tune --device cpu`'s of an artifact's variants:

    .venv/bin/python benchmarks/host_model_fit.py \\
        --sweep benchmarks/data/host_tiles_xeon
    dyncc tune bert_cpu.dyncc -o bert_cpu.tuned --device cpu --dim batch=1 \\
        --dim seq=1:512 --points 6 --repeat 2
    .venv/bin/python benchmarks/host_model_fit.py bert_cpu.tuned

Each measured time is the model's sum of terms (predictHostGemm's, written
again here as the fit's design matrix): per round of the pool's threads,
the block's k-steps of thread turns (each k's multiply-add instructions
and lanes, broadcasts of A, loads of B's row, its share of the unrolled
body's length, spilled vectors and loads beyond L1; each turn's
accumulator), copied and stored elements;
split-K's partial sums over the threads; a launch per kernel (for the
sweep, the run's own overhead). The constants are non-negative least
squares on the relative error, per build. Then per (problem, binding):
the measured time of the tile the fitted model picks over the fastest
measured (the selection regret), in-sample and with each problem held
out of the fit. The last line per build is the headline.
"""
import argparse
import collections
import csv
import json
import glob
import math
import os
import re
import statistics
import struct
import sys

import numpy as np

NAMES = ["threadStepSeconds", "vectorOpSeconds", "laneOpSeconds",
         "broadcastSeconds", "rowLoadSeconds", "unrollSeconds",
         "accumulatorSeconds",
         "spillSeconds", "l1MissSeconds", "copyElementSeconds",
         "storeElementSeconds", "sumElementSeconds", "launchSeconds"]


def sections(path):
    data = open(path, "rb").read()
    count, = struct.unpack_from("<I", data, 32)
    table, = struct.unpack_from("<Q", data, 40)
    out = {}
    for i in range(count):
        entry = table + 64 * i
        name = data[entry:entry + 40].split(b"\0")[0].decode()
        offset, size = struct.unpack_from("<QQ", data, entry + 40)
        if name in ("manifest", "calibration"):
            out[name] = json.loads(data[offset:offset + size])
    return out


def tile(config):
    """A SIMT GEMM tile's sizes from its config text, or None."""
    if "warp" in config:
        return None
    block = re.search(r"block ([0-9x]+)", config)
    thread = re.search(r"thread ([0-9x]+)", config)
    k = re.search(r"\bk (\d+)", config)
    if not (block and thread and k):
        return None
    split = re.search(r"split_k (\d+)", config)
    bm, bn = (int(v) for v in block.group(1).split("x")[-2:])
    tm, tn = (int(v) for v in thread.group(1).split("x")[-2:])
    return bm, bn, tm, tn, int(k.group(1)), int(split.group(1)) if split else 1


def cdiv(a, b):
    return -(-a // b)


# Per build: the widest vector register (bytes) and the vector registers
# (HostDevice::vectorBytes, vectorRegisters; getFittedHostDevice's).
BUILDS = {"generic": (16, 16), "x86-64-v2": (16, 16), "x86-64-v3": (32, 16),
          "x86-64-v4": (64, 32)}


def terms(t, batch, m, n, k, products, threads, level, l1):
    bm, bn, tm, tn, ks, split = t
    width, registers = BUILDS.get(level, BUILDS["generic"])
    rounds = cdiv(batch * cdiv(m, bm) * cdiv(n, bn) * split, threads)
    steps = rounds * cdiv(cdiv(k, split), ks) * products
    turns = steps * (bm // tm) * (bn // tn)
    row = cdiv(tn * 4, max(16, width))
    spilled = max(0, tm * row + row + 1 - registers)
    working = (bm + bn) * ks * 4 + tm * ks * min(max(16, width),
                                                  max(16, tn * 4))
    beyond = max(0, working - l1) / working
    return [turns,
            turns * ks * tm * row,
            turns * ks * tm * cdiv(tn, 4),
            turns * ks * tm,
            turns * ks * row,
            turns * ks * ks,
            turns * tm * row,
            turns * ks * spilled,
            turns * ks * (tm + row) * beyond,
            steps * (bm + bn) * ks,
            rounds * bm * bn * products,
            split * batch * m * n / threads if split > 1 else 0,
            2 if split > 1 else 1]


def in_family(t):
    """cost::enumerateHostGemmTiles' bounds: at most 512 turns (GPU
    threads) a block and a 128 KB accumulator."""
    bm, bn, tm, tn = t[:4]
    return (bm // tm) * (bn // tn) <= 512 and bm * bn * 4 <= 128 * 1024


def sweep_files(paths):
    """The CSVs of --sweep: files, or every *.csv of a directory."""
    files = []
    for path in paths:
        files += sorted(glob.glob(os.path.join(path, "*.csv"))) \
            if os.path.isdir(path) else [path]
    return files


def sweep_samples(paths, l1, family=True):
    """host_tile_sweep.py's rows as samples (those of the host search's
    family of tiles, unless not `family`)."""
    rows = []
    for path in sweep_files(paths):
        for k, n, m, level, config, seconds, threads in csv.reader(open(path)):
            t = tile(config)
            if t is None or (family and not in_family(t)):
                continue
            k, n, m = int(k), int(n), int(m)
            rows.append((f"{k}x{n}", f"{k}x{n}", config, (m,),
                         float(seconds),
                         terms(t, 1, m, n, k, 1, int(threads), level, l1),
                         level))
    return rows


def samples(path, l1):
    secs = sections(path)
    manifest, rows = secs["manifest"], []
    kernels = {k["name"]: k for k in manifest["kernels"]}
    for device in secs["calibration"]["devices"]:
        if not device["arch"].startswith("cpu-"):
            continue
        for group in device["groups"]:
            info = manifest["groups"][group["index"]]
            problem = info.get("problem")
            if info["kind"] != "gemm" or not problem or \
                    problem["operand_bytes"] != 4:
                continue
            for variant in group["variants"]:
                t = tile(kernels[variant["kernel"]].get("config", ""))
                if t is None:
                    continue
                for s in variant["samples"]:
                    env = dict(zip(group["symbols"], s["at"]))
                    dims = [int(eval(str(problem[d]), {"__builtins__": {}},
                                     env)) for d in ("batch", "m", "n", "k")]
                    # Layers of one problem are one kind (held out
                    # together).
                    kind = ",".join(str(problem[d]) for d in
                                    ("batch", "m", "n", "k")) + \
                        f"x{problem.get('products', 1)}"
                    level = device["arch"][len("cpu-"):]
                    if level not in BUILDS:
                        level = "x86-64-v2"
                    rows.append((kind, info["name"], variant["kernel"],
                                 tuple(s["at"]), s["ms"] * 1e-3,
                                 terms(t, *dims, problem.get("products", 1),
                                       device["sms"], level, l1), level))
    return rows


def nnls(a, b, iterations=200):
    """Lawson and Hanson's active-set non-negative least squares."""
    x = np.zeros(a.shape[1])
    passive = np.zeros(a.shape[1], bool)
    for _ in range(iterations):
        w = a.T @ (b - a @ x)
        if passive.all() or (w[~passive] <= 1e-12 * np.abs(w).max()).all():
            break
        passive[np.argmax(np.where(passive, -np.inf, w))] = True
        while True:
            z = np.zeros_like(x)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            bad = passive & (z <= 0)
            alpha = np.min(x[bad] / (x[bad] - z[bad]))
            x = x + alpha * (z - x)
            passive &= x > 1e-18
    return x


def fit(rows):
    a = np.array([r[5] for r in rows], float)
    y = np.array([r[4] for r in rows])
    return nnls(a / y[:, None], np.ones_like(y))


def regrets(rows, coef):
    """Per (group, binding): the measured time of the model's pick over the
    fastest measured variant's."""
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    for _, group, kernel, at, seconds, t, _ in rows:
        # A variant's kernel names its group ("g15_gemm_v3_part").
        times[(group, at)][kernel].append((float(np.dot(t, coef)), seconds))
    out = []
    for variants in times.values():
        pairs = {k: (v[0][0], statistics.median(s for _, s in v))
                 for k, v in variants.items()}
        pick = min(pairs, key=lambda k: pairs[k][0])
        out.append(pairs[pick][1] / min(s for _, s in pairs.values()))
    return out


def summary(ratios):
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return f"geomean {mean:.3f}x, max {max(ratios):.3f}x over {len(ratios)}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tuned", nargs="?", help="an artifact `dyncc tune "
                        "--device cpu` measured")
    parser.add_argument("--sweep", action="append", default=[],
                        help="host_tile_sweep.py's CSV, or a directory of "
                        "them (repeatable)")
    parser.add_argument("--l1", type=int, default=48 * 1024,
                        help="the measuring processor's L1 data cache, bytes")
    parser.add_argument("--all-tiles", action="store_true",
                        help="fit the sweep's tiles beyond the host search's "
                        "family too")
    args = parser.parse_args()
    rows = samples(args.tuned, args.l1) if args.tuned else []
    if args.sweep:
        rows += sweep_samples(args.sweep, args.l1, not args.all_tiles)
    if not rows:
        sys.exit("no host measurements of f32 SIMT GEMMs")
    for level in sorted({r[6] for r in rows}):
        build = [r for r in rows if r[6] == level]
        coef = fit(build)
        print(f"== {level}: {len(build)} samples")
        for name, value in zip(NAMES, coef):
            print(f"{name:20} {value:.4g}")
        error = [float(np.dot(r[5], coef)) / r[4] for r in build]
        print("prediction / measured: geometric mean of |log| "
              f"{math.exp(statistics.mean(abs(math.log(e)) for e in error)):.3f}x")
        print(f"selection regret, in sample: {summary(regrets(build, coef))}")
        held = []
        kinds = sorted({r[0] for r in build})
        print(f"{len(kinds)} problems:", "; ".join(kinds))
        for kind in kinds:
            train = [r for r in build if r[0] != kind]
            test = [r for r in build if r[0] == kind]
            if train and test:
                held += regrets(test, fit(train))
        if held:
            print(f"selection regret, each problem held out of the fit: "
                  f"{summary(held)}")


if __name__ == "__main__":
    main()
