#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU check, run from a bundle that scripts/gpu_bundle.py packed:

    python3 check.py [--out DIR] [--runtime-build DIR] [--fake-driver LIB]

1. Builds the run-time alone from src/ (CMake, -DDYNCC_RUNTIME_ONLY=ON), or
   uses --runtime-build's.
2. For each model of bundle.json, at each dynamic size: runs its artifact on
   cuda:0 and on the cpu, and onnxruntime on the ONNX file, on the same
   inputs (dyncc_models.reference), and compares within issue 8's
   tolerances: CUDA against onnxruntime, CUDA against the CPU session.
3. Where torch sees a GPU: hands the inputs over as torch CUDA tensors
   (DLPack, no copy) and takes the outputs back with torch.from_dlpack.
4. Times a shape sweep of each artifact (`dyncc-run bench`) and tunes the
   models marked `tune` (`dyncc-run tune`: the selection regret).
5. Runs each packed ONNX node test (static and --force-dynamic, those that
   pass on the CPU where the bundle was made) on cuda:0 against its
   expected outputs, with the same tolerances (issue 8).
6. Writes results.json and results.md to --out and prints the table. Exits 1
   if any comparison failed.

--fake-driver runs it all without a GPU on the test suite's fake driver
(which runs each launch with the artifact's host code): how the tests check
this script.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build_runtime(build):
    subprocess.run(["cmake", "-S", str(HERE / "src"), "-B", str(build), "-G",
                    "Ninja", "-DDYNCC_RUNTIME_ONLY=ON",
                    "-DCMAKE_BUILD_TYPE=Release"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build)], check=True,
                   stdout=subprocess.DEVNULL)


def host_code(artifact, dest):
    """The artifact's cpu.so section (what the fake driver runs)."""
    import struct
    data = artifact.read_bytes()
    count, table = struct.unpack_from("<I4xQ", data, 32)
    for i in range(count):
        name, offset, size = struct.unpack_from("<40sQQ", data, table + 64 * i)
        if name.rstrip(b"\0") == b"cpu.so":
            dest.write_bytes(data[offset:offset + size])
            return dest
    raise SystemExit(f"check: {artifact} has no cpu.so section")


def compare(have, want, dtype_tolerances):
    import numpy as np
    rtol, atol = dtype_tolerances(want.dtype)
    if have.shape != want.shape:
        return False, f"shape {have.shape} != {want.shape}"
    a, b = have.astype(np.float64), want.astype(np.float64)
    excess = np.abs(a - b) - (atol + rtol * np.abs(b))
    worst = float(np.max(np.abs(a - b))) if a.size else 0.0
    return bool(np.all(excess <= 0)), f"max |diff| {worst:.3g}"


def run_node_tests(cases, dyncc, out, fake_driver):
    """Each node test of the bundle on cuda:0: [(label, problem or None)]."""
    import numpy as np
    from dyncc_conformance.compare import compare, load
    results = []
    for case in cases:
        where = HERE / case["dir"]
        label = f"{case['test']} [{case['mode']}]"
        spec = json.loads((where / "case.json").read_text())
        artifact = where / "model.dyncc"
        problem = None
        try:
            if fake_driver:
                os.environ["DYNCC_FAKE_CUDA_HOST_CODE"] = str(host_code(
                    artifact, out / f"node.{case['test']}.{case['mode']}.so"))
            art = dyncc.load(str(artifact))
            session = art.session("cuda:0")
            dtypes = {name: dtype for name, dtype, _ in art.inputs}
            for data in spec["sets"]:
                feeds = {}
                for name, file in data["inputs"].items():
                    value = np.load(where / file, allow_pickle=False)
                    if dtypes.get(name) == "bf16":  # kept as its bits
                        import ml_dtypes
                        value = value.view(ml_dtypes.bfloat16)
                    feeds[name] = value
                got = session.run(feeds)
                for name, file in data["outputs"].items():
                    # bf16 kept as its bits: read back as the output's type.
                    want = load(where / file, got[name])
                    problem = compare(name, got[name], want)
                    if problem:
                        break
                if problem:
                    break
            session.close()
            art.close()
        except Exception as error:  # one line per failure, then go on
            problem = f"error: {error}"
        results.append((label, problem))
        if problem:
            print(f"FAIL {label}: {problem}", flush=True)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--runtime-build", type=Path)
    parser.add_argument("--fake-driver", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    build = args.runtime_build or (HERE / "build")
    if not args.runtime_build:
        start = time.time()
        build_runtime(build)
        print(f"built the run-time in {time.time() - start:.0f} s")
    os.environ["DYNCC_RUNTIME_LIB"] = str(build / "lib" /
                                          "libdyncc_runtime.so")
    if args.fake_driver:
        os.environ["DYNCC_CUDA_DRIVER"] = str(args.fake_driver)
    sys.path.insert(0, str(HERE / "python"))
    import numpy as np
    import dyncc
    from dyncc_models import reference

    bundle = json.loads((HERE / "bundle.json").read_text())
    rows, failures = [], 0
    torch = None
    if not args.fake_driver:
        try:
            import torch as torch_module
            if torch_module.cuda.is_available():
                torch = torch_module
        except ImportError:
            pass
    for entry in bundle["models"]:
        model = HERE / entry["model"]
        artifact = HERE / entry["artifact"]
        if args.fake_driver:
            os.environ["DYNCC_FAKE_CUDA_HOST_CODE"] = str(
                host_code(artifact, args.out / f"{entry['name']}.so"))
        art = dyncc.load(str(artifact))
        cpu, gpu = art.session("cpu"), art.session("cuda:0")
        try:
            ort = reference.onnxruntime_session(model)
        except ImportError:
            ort = None
        for dynamic in entry["dynamic"]:
            row = {"model": entry["name"], "dynamic": dynamic}
            try:
                feeds = reference.random_feeds(model, dynamic)
                got = gpu.run(feeds)
                row["device_ms"] = gpu.device_time()
                want_cpu = cpu.run(feeds)
                want_ort = dict(zip([o.name for o in ort.get_outputs()],
                                    ort.run(None, feeds))) if ort else {}
                checks = []
                for name, have in got.items():
                    ok, text = compare(have, want_cpu[name], reference.tolerances)
                    checks.append((ok, f"{name} vs cpu: {text}"))
                    if name in want_ort:
                        ok, text = compare(have, want_ort[name],
                                           reference.tolerances)
                        checks.append((ok, f"{name} vs onnxruntime: {text}"))
                if torch is not None:
                    tensors = {k: torch.from_numpy(v).cuda()
                               for k, v in feeds.items()}
                    outs = gpu.run(tensors, device_outputs=True)
                    for name, out in outs.items():
                        have = torch.from_dlpack(out).cpu().numpy()
                        ok, text = compare(have, want_cpu[name],
                                           reference.tolerances)
                        checks.append((ok, f"{name} by DLPack vs cpu: {text}"))
                row["ok"] = all(ok for ok, _ in checks)
                row["detail"] = "; ".join(text for _, text in checks)
            except Exception as error:  # one line per failure, then go on
                row["ok"], row["detail"] = False, f"error: {error}"
            failures += not row["ok"]
            rows.append(row)
            print(f"{'ok  ' if row['ok'] else 'FAIL'} {entry['name']} "
                  f"dynamic={dynamic} device {row.get('device_ms', 0):.4f} ms: "
                  f"{row['detail']}", flush=True)

    node_results = run_node_tests(bundle.get("nodes", []), dyncc, args.out,
                                  args.fake_driver)
    node_failures = [(label, p) for label, p in node_results if p]
    failures += len(node_failures)
    if node_results:
        print(f"node tests on cuda:0: {len(node_results) - len(node_failures)}"
              f" of {len(node_results)} pass", flush=True)

    # Timings and tuning through the run-time-only tool.
    tool = build / "bin" / "dyncc-run"
    logs = {}
    for entry in bundle["models"]:
        artifact = HERE / entry["artifact"]
        if args.fake_driver:
            # The fake runs blocks one by one on the host: sweeping a CNN's
            # image sizes there takes minutes, and times nothing real.
            if not entry.get("tune"):
                continue
            os.environ["DYNCC_FAKE_CUDA_HOST_CODE"] = str(
                args.out / f"{entry['name']}.so")
        repeat = "3" if args.fake_driver else "20"
        bench = subprocess.run([str(tool), "bench", str(artifact), "--device",
                                "cuda:0", "--repeat", repeat],
                               capture_output=True, text=True)
        logs[f"bench {entry['name']}"] = bench.stdout + bench.stderr
        if bench.returncode != 0:
            failures += 1
            print(f"FAIL bench {entry['name']}: {bench.stderr.strip()}")
        if entry.get("tune"):
            tune = subprocess.run(
                [str(tool), "tune", str(artifact), "-o",
                 str(args.out / f"{entry['name']}.tuned.dyncc"), "--repeat",
                 "2" if args.fake_driver else "10"],
                capture_output=True, text=True)
            logs[f"tune {entry['name']}"] = tune.stdout + tune.stderr
            if tune.returncode != 0:
                failures += 1
                print(f"FAIL tune {entry['name']}: {tune.stderr.strip()}")
            else:
                print(tune.stdout.strip().splitlines()[-1])

    (args.out / "results.json").write_text(json.dumps(
        {"device": gpu.device, "rows": rows, "logs": logs,
         "nodes": [{"test": label, "problem": p} for label, p in node_results]},
        indent=1))
    lines = [f"device: {gpu.device}", "",
             "| model | dynamic | ok | device ms | detail |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['model']} | {r['dynamic']} | {'yes' if r['ok'] else 'NO'}"
              f" | {r.get('device_ms', 0):.4f} | {r['detail']} |" for r in rows]
    if node_results:
        lines += ["", f"node tests on cuda:0: {len(node_results) - len(node_failures)}"
                  f" of {len(node_results)} pass"]
        lines += [f"- FAIL {label}: {p}" for label, p in node_failures]
    for title, text in logs.items():
        lines += ["", f"## {title}", "", "```", text.rstrip(), "```"]
    (args.out / "results.md").write_text("\n".join(lines) + "\n")
    print(f"{len(rows) - sum(not r['ok'] for r in rows)} of {len(rows)} "
          f"comparisons passed, {failures} failures; results in {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
