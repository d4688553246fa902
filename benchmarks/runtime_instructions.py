#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The run-time's own work per run, counted in instructions and simulated
cache misses rather than timed: `dyncc bench` on the fake CUDA driver under
`valgrind --tool=callgrind`, collecting inside `dyncc_session_enqueue` only,
with a profile dumped after every enqueue, less the inclusive cost of the
calls into the driver's library. So each run's count is the run-time's
own: bind, check, select, size and place the buffers, fill and issue the
launches.

    .venv/bin/python benchmarks/runtime_instructions.py [ARTIFACT.dyncc]
        [--model bert:base] [--dim batch=1] [--dim seq=1:512] [--points 5]

Without an artifact, the model is compiled for `cpu,sm_90` (H200) over
batch 1-8 and sequence 1-512. The bench sweeps the points in descending
order (the first shape is the largest, so later shapes grow no buffer) and
runs each twice: its first, cold run, then a warm one. CUDA graphs are off
(`DYNCC_CUDA_GRAPHS=0`): the fake driver cannot capture a cubin's launches,
and a capture that fails at the second run would send the later shapes
down another path than the first. Timings on a shared 2-core machine vary
by 2x from run to run; these counts are the same from run to run.

The last line is the headline: the process's first run against a later new
shape, in instructions and in last-level misses (code and data).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

EVENTS = ("Ir", "ILmr", "DLmr", "DLmw")


def read_dump(path, driver):
    """The events a callgrind dump counts, by name, less those of calls from
    outside the `driver` shared object into it: the run-time's own."""
    names, totals = None, None
    inside = [0] * 16
    names_of = {}
    ob = cob = None
    in_call = False

    def name(spec):
        # Name compression: "(id) name" defines id, "(id)" refers to it.
        m = re.match(r"\((\d+)\)(?: (.*))?$", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names_of[m.group(1)] = m.group(2)
        return names_of.get(m.group(1), "")
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith(("summary:", "totals:")):
            totals = [int(v) for v in line.split()[1:]]
        elif line.startswith("ob="):
            ob = name(line[3:])
        elif line.startswith("cob="):
            cob = name(line[4:])
        elif line.startswith("calls="):
            in_call = True
        elif in_call:
            # The cost line after calls=: the call's inclusive cost.
            in_call = False
            callee = cob if cob is not None else ob
            cob = None
            if callee == driver and ob != driver:
                for i, v in enumerate(line.split()[1:]):
                    inside[i] += int(v)
    if names is None or totals is None:
        raise SystemExit(f"error: {path}: no events or totals in the dump")
    return {n: (totals[i] if i < len(totals) else 0) - inside[i]
            for i, n in enumerate(names)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifact", nargs="?")
    parser.add_argument("--model", default="bert:base")
    parser.add_argument("--dim", action="append",
                        help="the sweep, as dyncc bench takes it "
                        "(default batch=1 and seq=1:512)")
    parser.add_argument("--points", type=int, default=5)
    parser.add_argument("--build", default=str(ROOT / "build"))
    args = parser.parse_args()
    build = Path(args.build)
    dyncc = build / "bin" / "dyncc"
    driver = build / "lib" / "libdyncc_fake_cuda.so"
    for needed in (dyncc, driver):
        if not needed.exists():
            raise SystemExit(f"error: {needed} is missing: build the project first")
    dims = args.dim or ["batch=1", "seq=1:512"]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        artifact = Path(args.artifact) if args.artifact else None
        if artifact is None:
            from fusion import model_path
            artifact = tmp / "model.dyncc"
            print(f"compiling {args.model} for cpu,sm_90 ...", file=sys.stderr)
            subprocess.run([str(dyncc), "compile", str(model_path(args.model)),
                            "--dim", "batch=1:8", "--dim", "seq=1:512",
                            "--target", "cpu,sm_90", "--device", "h200",
                            "-o", str(artifact)], check=True,
                           stdout=subprocess.DEVNULL)
        out = tmp / "cg.out"
        command = [
            "valgrind", "--tool=callgrind", "--cache-sim=yes",
            f"--callgrind-out-file={out}",
            "--toggle-collect=dyncc_session_enqueue",
            "--dump-after=dyncc_session_enqueue",
            str(dyncc), "bench", str(artifact), "--device", "cuda:0",
            "--points", str(args.points), "--repeat", "1", "--descending"]
        for dim in dims:
            command += ["--dim", dim]
        env = dict(os.environ, DYNCC_CUDA_DRIVER=str(driver),
                   DYNCC_CUDA_GRAPHS="0")
        result = subprocess.run(command, env=env, capture_output=True, text=True)
        if result.returncode != 0:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f"error: dyncc bench under callgrind exited "
                             f"{result.returncode}")
        # The bench's table: a row per point, whose launches column we need.
        lines = result.stdout.splitlines()
        header = next(i for i, l in enumerate(lines) if "launches" in l)
        columns = lines[header].split("\t")
        rows = []
        for line in lines[header + 1:]:
            cells = line.split("\t")
            if len(cells) != len(columns):
                break
            rows.append(dict(zip(columns, cells)))
        dumps = sorted(tmp.glob("cg.out.*"),
                       key=lambda p: int(p.name.rsplit(".", 1)[1]))
        if len(dumps) != 2 * len(rows):
            raise SystemExit(f"error: {len(dumps)} profiles for {len(rows)} "
                             "points; expected a cold and a warm run each")
        counts = [read_dump(p, str(driver.resolve())) for p in dumps]
    shape_columns = columns[:columns.index("launches")]
    print("shape\trun\tlaunches\t" + "\t".join(EVENTS) + "\tIr/launch")
    first, later, warm = None, [], []
    for i, row in enumerate(rows):
        shape = ",".join(f"{c}={row[c]}" for c in shape_columns)
        launches = int(row["launches"])
        for kind, count in (("cold", counts[2 * i]), ("warm", counts[2 * i + 1])):
            label = ("first" if i == 0 else "new") if kind == "cold" else "warm"
            print(f"{shape}\t{label}\t{launches}\t" +
                  "\t".join(str(count.get(e, 0)) for e in EVENTS) +
                  f"\t{count['Ir'] / launches:.0f}")
            if label == "first":
                first = count
            elif label == "new":
                later.append(count)
            else:
                warm.append(count)
    if not later:
        raise SystemExit("error: give at least two points to compare the "
                         "first run with a later new shape")

    def median(runs, event):
        return statistics.median(r.get(event, 0) for r in runs)

    def misses(count):
        return count.get("ILmr", 0) + count.get("DLmr", 0) + count.get("DLmw", 0)
    print(f"warm run: median {median(warm, 'Ir'):.0f} instructions")
    new_misses = statistics.median(misses(c) for c in later)
    print(f"the process's first run / a later new shape (median of "
          f"{len(later)}): instructions {first['Ir']:.0f} / "
          f"{median(later, 'Ir'):.0f} = {first['Ir'] / median(later, 'Ir'):.2f}x, "
          f"last-level misses {misses(first)} / {new_misses:.0f} = "
          f"{misses(first) / max(new_misses, 1):.1f}x")


if __name__ == "__main__":
    main()
