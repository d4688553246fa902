# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compiling through the `dyncc` driver."""
import os
import subprocess
from pathlib import Path

from ._paths import build_dir
from ._runtime import DynccError


def driver_path() -> Path:
    env = os.environ.get("DYNCC_DRIVER")
    return Path(env) if env else build_dir() / "bin" / "dyncc"


def compile(model, output, targets=None, dims=None, emit=None, quiet=True,
            tile_configs=None, ptxas=None, device=None, max_variants=None,
            regret_target=None, im2col=None):
    """Compiles `model` (an .onnx path) to `output` (a .dyncc path).

    targets: list like ["cpu", "sm_90"] (default: the driver's default);
        "cpu-x86-64-v3" and "cpu-x86-64-v4" add AVX2 and AVX-512 builds of
        the host code, which the run-time loads where the processor runs
        them.
    dims: {"B": (min, max)} or {"B": (min, max, divisor)} or {"B": value}.
    emit: a stage name; then the stage's text is returned instead.
    tile_configs: {"gemm": "block 16x8 thread 2x2 k 5"} replaces the default
        tile configuration of every kernel of that kind.
    ptxas: "auto" (the driver's default: assemble GPU targets to cubins and
        record their resources when the CUDA toolkit is found), "off", or
        the path of a ptxas.
    device: the GPU the tile search predicts for ("h200", "a100", ...).
        With cpu targets only and no device, f32 GEMMs search the host's
        own tiles by the host model (the rest the H100's).
    max_variants: the most tile variants per searched dispatch (default 8).
    regret_target: the predicted regret the variants aim for (default 0.03).
    im2col: "auto" (the default: windowed convs become a copy of their
        windows and a GEMM where the cost model predicts that faster),
        "always", "never", or "per-image" or "folded" (im2col with its GEMM
        in that form; otherwise the model picks).
    Raises DynccError with the driver's one-line message on failure.
    """
    cmd = [str(driver_path()), "compile", str(model)]
    if emit is None:
        cmd += ["-o", str(output)]
    else:
        cmd += ["--emit=" + emit]
    if targets:
        cmd += ["--target", ",".join(targets)]
    for name, spec in (dims or {}).items():
        if isinstance(spec, int):
            value = str(spec)
        else:
            value = ":".join(str(v) for v in spec)
        cmd += ["--dim", f"{name}={value}"]
    for kind, config in (tile_configs or {}).items():
        cmd += ["--tile-config", f"{kind}={config}"]
    if ptxas is not None:
        cmd.append("--ptxas=" + str(ptxas))
    if device is not None:
        cmd += ["--device", str(device)]
    if max_variants is not None:
        cmd += ["--max-variants", str(max_variants)]
    if regret_target is not None:
        cmd += ["--regret-target", str(regret_target)]
    if im2col is not None:
        cmd.append("--im2col=" + str(im2col))
    if quiet:
        cmd.append("--quiet")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        message = proc.stderr.strip().splitlines()
        raise DynccError(proc.returncode, message[-1] if message else "dyncc failed")
    return proc.stdout if emit is not None else Path(output)
