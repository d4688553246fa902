#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Do the tests fail when the code breaks? Flips one operator at a time in
the conditions of the run-time's or the driver's sources, rebuilds `build/`,
runs the tests that cover them, and prints whether each mutant was noticed
(docs/Testing.md, "mutation testing").

    scripts/mutation_check.py runtime --seed 23 --count 40
    scripts/mutation_check.py tools --seed 11 --count 30
    scripts/mutation_check.py python --seed 5 --count 32   (no rebuild)

It edits the sources in place, one file at a time, and puts each back
before the next (also on Ctrl-C); do not edit or build the tree meanwhile.
A mutant that builds and passes every test is printed SURVIVED: either a
missing test or an equivalent mutant (a tie-break, a no-op), to be read.
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("DYNCC_BUILD_DIR", ROOT / "build"))
PYTHON = ROOT / ".venv" / "bin" / "python"
LIT = "/usr/lib/llvm-22/bin/lit"

FILES = {
    "runtime": ["lib/Runtime/Manifest.cpp", "lib/Runtime/Executor.cpp",
                "lib/Runtime/Artifact.cpp", "lib/Runtime/ShapeExpr.cpp",
                "lib/Runtime/Calibration.cpp", "lib/Runtime/ArenaPlan.cpp",
                "lib/Runtime/ArenaPlanAhead.cpp", "lib/Runtime/CudaModel.cpp",
                "lib/Runtime/CpuModule.cpp", "lib/Runtime/ThreadPool.cpp",
                "lib/Runtime/CApi.cpp", "lib/Runtime/Json.cpp",
                "lib/Runtime/DType.cpp", "lib/CostModel/Partition.cpp"],
    "tools": ["lib/Runtime/Tool/BenchTool.cpp", "lib/Runtime/Tool/Npy.cpp",
              "lib/Runtime/Tool/RunTool.cpp", "lib/Runtime/Tool/TuneTool.cpp",
              "lib/Runtime/Tool/ToolSupport.h",
              "tools/dyncc/Explain.cpp", "tools/dyncc/dyncc.cpp"],
    "python": ["python/dyncc/_runtime.py", "python/dyncc/_dlpack.py",
               "python/dyncc/_compile.py"],
}
PYTHON_TESTS = ["test_dlpack.py", "test_errors.py", "test_linear_relu.py",
                "test_data_sizes.py"]
SWAPS = {" < ": " <= ", " <= ": " < ", " > ": " >= ", " >= ": " > ",
         " == ": " != ", " != ": " == ", " && ": " || ", " || ": " && ",
         " + 1": " + 2", " - 1": " - 0"}
PYTHON_SWAPS = {" < ": " <= ", " <= ": " < ", " > ": " >= ", " >= ": " > ",
                " == ": " != ", " != ": " == ", " and ": " or ", " or ": " and ",
                " is not ": " is ", " + 1": " + 2", " - 1": " - 0"}


def swaps(name):
    return PYTHON_SWAPS if name.endswith(".py") else SWAPS


def candidates(files):
    """(file, line, column, operator) in the conditions of `files`."""
    found = []
    for name in files:
        for i, line in enumerate((ROOT / name).read_text().split("\n")):
            s = line.strip()
            if (s.startswith(("//", "#")) or "<<" in s or ">>" in s
                    or "template" in s):
                continue
            # C++ conditions continue on lines that start with && or ||; a
            # Python line that starts with "and" may be a docstring's prose.
            if (not re.search(r"\b(if|elif|while|return|for)\b", s)
                    and not s.startswith(("&&", "||"))):
                continue
            for op in swaps(name):
                for m in re.finditer(re.escape(op), line):
                    found.append((name, i, m.start(), op))
    return found


def tests_for(name):
    """(label, command) of the tests that cover `name`."""
    if name.endswith(".py"):
        return [("pytest", [PYTHON, "-m", "pytest", "-q", "-x", "-n", "2",
                            *[ROOT / "python" / "tests" / t for t in PYTHON_TESTS]])]
    tests = [("DynccRuntimeTests", [BUILD / "bin" / "DynccRuntimeTests", "--gtest_brief=1"])]
    if "CostModel" in name:
        tests += [("DynccCostModelTests",
                   [BUILD / "bin" / "DynccCostModelTests", "--gtest_brief=1"]),
                  ("DynccUnitTests", [BUILD / "bin" / "DynccUnitTests", "--gtest_brief=1"])]
    return tests + [
        ("lit test/Driver", [PYTHON, LIT, "-q", BUILD / "test" / "Driver"]),
        ("pytest", [PYTHON, "-m", "pytest", "-q", "-x", "-n", "2",
                    ROOT / "python" / "tests" / "test_errors.py",
                    ROOT / "python" / "tests" / "test_linear_relu.py"])]


def check(mutant):
    name, line, column, op = mutant
    path = ROOT / name
    source = path.read_text()
    lines = source.split("\n")
    before = lines[line]
    lines[line] = before[:column] + swaps(name)[op] + before[column + len(op):]
    path.write_text("\n".join(lines))
    try:
        if not name.endswith(".py") and subprocess.run(
                ["ninja", "-C", BUILD, "-j2"], capture_output=True).returncode != 0:
            return "build failed", before
        env = dict(os.environ, DYNCC_BUILD_DIR=str(BUILD))
        for label, test in tests_for(name):
            try:
                r = subprocess.run([str(t) for t in test], capture_output=True,
                                   env=env, timeout=120, cwd=ROOT)
            except subprocess.TimeoutExpired:
                return f"noticed (hang) by {label}", before
            if r.returncode != 0:
                return f"noticed by {label}", before
        return "SURVIVED", before
    finally:
        path.write_text(source)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", choices=sorted(FILES))
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--count", type=int, default=40)
    args = parser.parse_args()
    mutants = candidates(FILES[args.files])
    random.seed(args.seed)
    random.shuffle(mutants)
    print(f"{len(mutants)} candidate mutants; checking {args.count}", flush=True)
    tally = {}
    try:
        for mutant in mutants[:args.count]:
            start = time.monotonic()
            verdict, before = check(mutant)
            kind = verdict.split(" by ")[0]
            tally[kind] = tally.get(kind, 0) + 1
            name, line, _, op = mutant
            print(f"{verdict:42s} {name}:{line + 1} {op.strip()} -> "
                  f"{swaps(name)[op].strip()} | {before.strip()[:100]} "
                  f"({time.monotonic() - start:.0f} s)", flush=True)
    finally:
        subprocess.run(["ninja", "-C", BUILD, "-j2"], capture_output=True)
    print(", ".join(f"{v} {k}" for k, v in sorted(tally.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
