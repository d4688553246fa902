#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ptxas' resource report per model at the default tile configs: the table of
docs/Passes.md. Compiles each model for sm_80 and sm_90 (--emit=plan, which
assembles with ptxas) and prints, over its distinct kernels, the largest
register count per target, the kernels using shared memory and the most
bytes one uses, the kernels with a stack frame and the largest, and the
largest spill.

    .venv/bin/python benchmarks/gpu_resources.py [MODEL.onnx ...]

Without arguments: the shared models that compile end to end (the list of
python/tests/test_shared_models.py). Needs ptxas (CUDA_HOME or
/usr/local/cuda).
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "tests"))


def default_models():
    from conftest import SHARED_MODELS
    from test_shared_models import COMPILES
    return [SHARED_MODELS / f"{name}.onnx" for name in sorted(COMPILES)]


def row(path):
    proc = subprocess.run(
        [str(ROOT / "build" / "bin" / "dyncc"), "compile", str(path), "-o",
         "/dev/null", "--target", "sm_80,sm_90", "--emit=plan", "--quiet"],
        capture_output=True, text=True)
    if proc.returncode != 0:
        return f"| {path.stem} | error: {proc.stderr.strip()[-120:]} |"
    plan = json.loads(proc.stdout)
    per = {}
    for arch in ("sm_80", "sm_90"):
        per[arch] = {k["gpu"][arch]["entry"]: k["gpu"][arch]["resources"]
                     for k in plan["kernels"]}
    r90 = list(per["sm_90"].values())
    spill = max(max(r["spill_store_bytes"], r["spill_load_bytes"])
                for arch in per for r in per[arch].values())
    # ptxas' static bytes plus the dynamic ones each launch passes (GEMMs'
    # shared tiles are dynamic shared memory, which ptxas counts as 1).
    shared = list({k["gpu"]["sm_90"]["entry"]:
                   k["gpu"]["sm_90"]["resources"]["shared_bytes"] +
                   k.get("shared_bytes", 0) for k in plan["kernels"]}.values())
    stack = [r["stack_bytes"] for r in r90]
    return (f"| {path.stem} | {len(plan['groups'])} | {len(r90)} | "
            f"{max(r['registers'] for r in r90)} | "
            f"{max(r['registers'] for r in per['sm_80'].values())} | "
            f"{sum(1 for s in shared if s)} | {max(shared)} | "
            f"{sum(1 for s in stack if s)} | {max(stack)} | {spill} |")


def main(argv):
    models = [Path(a) for a in argv] or default_models()
    print("| model | launches | distinct kernels | max regs sm_90 | "
          "max regs sm_80 | kernels with shared | max shared (B) | "
          "kernels with stack | max stack (B) | spill (B) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in models:
        print(row(path), flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
