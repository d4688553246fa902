#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Host GEMM tiles measured one by one: the data the host model
(cost::HostDevice, include/dyncc/CostModel/Host.h) is fitted to.

For each dense layer y = x @ W + b of BERT-base's shapes (K x N: 768 x
3072, 3072 x 768, 768 x 768) and each tile config, an artifact compiled
with `--tile-config gemm=CONFIG` (its only variant) and host code for the
builds asked for, loaded once per build under DYNCC_HOST_ISA; then at
each M, every session and onnxruntime (the same threads, spinning off)
in rotating order, the median of 5 rounds. Outputs are checked against
numpy. Rows of the CSV: K, N, M, build (`-` for onnxruntime), config
(`ort`, or `search` for the artifact the search chose the variants of),
seconds per run, pool threads.

    .venv/bin/python benchmarks/host_tile_sweep.py --configs tiles.txt \\
        --levels x86-64-v2,x86-64-v4 -o sweep.csv
    .venv/bin/python benchmarks/host_model_fit.py --sweep sweep.csv

The run's own overhead (Python, binding the input) is in every time; the
fit takes it as a constant per run. Each row of --configs is a config
(TileConfig's text) or `search`.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

PROBLEMS = [(768, 3072), (3072, 768), (768, 768)]
MS = [1, 16, 61, 128, 512]


def layer(path, k, n, rng):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = rng.standard_normal((k, n), dtype=np.float32) * 0.05
    b = rng.standard_normal(n, dtype=np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["t"]),
         helper.make_node("Add", ["t", "b"], ["y"])], "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["M", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", n])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return w, b


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", required=True,
                        help="a file of tile configs, one a line")
    parser.add_argument("--levels", default="x86-64-v2,x86-64-v4",
                        help="builds of the host code to measure")
    parser.add_argument("-o", "--output", required=True, help="CSV to write")
    parser.add_argument("--threads", type=int, default=2,
                        help="onnxruntime's threads (dyncc's pool: its own)")
    args = parser.parse_args()
    import dyncc
    import onnxruntime as ort
    build = Path(os.environ.get("DYNCC_BUILD_DIR", ROOT / "build"))
    compiler = build / "bin" / "dyncc"
    configs = [c.strip() for c in open(args.configs) if c.strip()]
    levels = args.levels.split(",")
    targets = ",".join(["cpu"] + [f"cpu-{lv}" for lv in levels
                                  if lv not in ("x86-64-v2", "generic")])
    rng = np.random.default_rng(0)
    tmp = tempfile.mkdtemp(prefix="dyncc-sweep-")
    with open(args.output, "w", newline="") as f:
        out = csv.writer(f)
        for k, n in PROBLEMS:
            model = os.path.join(tmp, f"layer_{k}_{n}.onnx")
            w, b = layer(model, k, n, rng)
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = args.threads
            opts.add_session_config_entry("session.intra_op.allow_spinning",
                                          "0")
            reference = ort.InferenceSession(
                model, opts, providers=["CPUExecutionProvider"])
            sessions = {}
            for i, config in enumerate(configs):
                artifact = os.path.join(tmp, f"layer_{k}_{n}_{i}.dyncc")
                cmd = [str(compiler), "compile", model, "-o", artifact,
                       "--target", targets, "--dim", "M=1:4096", "--quiet"]
                if config != "search":
                    cmd += ["--tile-config", "gemm=" + config]
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode:
                    print(f"{config}: {done.stderr.strip()}", file=sys.stderr)
                    continue
                for level in levels:
                    os.environ["DYNCC_HOST_ISA"] = level
                    sessions[(config, level)] = \
                        dyncc.load(artifact).session("cpu")
                os.environ.pop("DYNCC_HOST_ISA", None)
            for m in MS:
                x = rng.standard_normal((m, k), dtype=np.float32)
                expected = x @ w + b
                runs = {("ort", "-"): lambda: reference.run(None, {"x": x})}
                for key, s in sessions.items():
                    got = s.run({"x": x})["y"]
                    error = float(np.abs(got - expected).max())
                    if error > 1e-3:
                        sys.exit(f"{key} at M = {m}: differs by {error}")
                    runs[key] = (lambda s: lambda: s.run({"x": x}))(s)
                keys = list(runs)
                times = {key: [] for key in keys}
                reps = max(2, int(4e7 / (2 * m * k * n)))
                for r in range(5):
                    shift = r * 7 % len(keys)
                    for key in keys[shift:] + keys[:shift]:
                        start = time.perf_counter()
                        for _ in range(reps):
                            runs[key]()
                        times[key].append((time.perf_counter() - start) /
                                          reps)
                for key in keys:
                    out.writerow([k, n, m, key[1], key[0],
                                  float(np.median(times[key])),
                                  args.threads])
                f.flush()
                best = min((float(np.median(times[key])), key)
                           for key in keys if key[0] != "ort")
                print(f"{k}x{n} M={m}: onnxruntime "
                      f"{2 * m * k * n / np.median(times[('ort', '-')]) / 1e9:.1f}"
                      f" GFLOP/s, best {best[1][0]} ({best[1][1]}) "
                      f"{2 * m * k * n / best[0] / 1e9:.1f}", flush=True)


if __name__ == "__main__":
    main()
