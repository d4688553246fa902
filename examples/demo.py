#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The demo: compile linear_relu.onnx once, run it at several batch sizes.

Y = Relu(X @ W + b) with X: [B, 64]; B is a dim_param, so one artifact serves
every B in the declared range. Each run prints the summary `dyncc run` gives
(symbol values, the kernel variant each group ran, output statistics), then
the largest difference from numpy.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", default=str(HERE.parent / "build"))
    parser.add_argument("--batches", default="1,7,64,1000")
    args = parser.parse_args()
    dyncc = Path(args.build) / "bin" / "dyncc"
    model = HERE / "linear_relu.onnx"
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(model)).graph.initializer}
    w, b = inits["W"], inits["b"]

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        artifact = tmp / "linear_relu.dyncc"
        cmd = [str(dyncc), "compile", str(model), "-o", str(artifact),
               "--dim", "B=1:4096"]
        print("$ " + " ".join(cmd[:4] + ["-o", "linear_relu.dyncc"] + cmd[5:]), flush=True)
        subprocess.run(cmd, check=True)
        print(f"artifact: {artifact.stat().st_size} bytes, targets cpu, sm_80, sm_90\n", flush=True)
        worst = 0.0
        for batch in [int(v) for v in args.batches.split(",")]:
            x = np.random.default_rng(batch).uniform(-2, 2, (batch, 64)).astype(np.float32)
            np.save(tmp / "x.npy", x)
            run = [str(dyncc), "run", "linear_relu.dyncc", "--input", "X=x.npy",
                   "--output-dir", "out"]
            print("$ " + " ".join(run), flush=True)
            subprocess.run(run, check=True, cwd=tmp)
            y = np.load(tmp / "out" / "Y.npy")
            err = float(np.abs(y - np.maximum(x.astype(np.float64) @ w + b, 0)).max())
            worst = max(worst, err)
            print(f"max |dyncc - numpy| = {err:.2e}\n", flush=True)
    ok = worst < 1e-4
    print("demo " + ("passed" if ok else "FAILED") + f": worst error {worst:.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
