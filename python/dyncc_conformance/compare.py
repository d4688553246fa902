# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""How a node test's outputs are compared with its expected ones (issue 8's
tolerances), and how arrays go to and from the .npy files the driver reads
and writes. numpy only (no onnx), so the GPU-check bundle runs it on the GPU
machine too."""
import re

import numpy as np


def node_tolerances(dtype):
    """Issue 8's (rtol, atol) for node tests: float32 and float64 the ONNX
    backend's rtol 1e-3 with atol 1e-5, float16 and bfloat16 1e-2 and 1e-3,
    integers and bools exact."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return 0.0, 0.0
    if dtype.itemsize == 2:
        return 1e-2, 1e-3
    return 1e-3, 1e-5


def compare(name, got, want, tolerances=node_tolerances):
    """None when `got` matches `want`, else one line saying how not."""
    if got.dtype != want.dtype:
        return f"output '{name}' has dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"output '{name}' has shape {got.shape}, expected {want.shape}"
    if got.size == 0:
        return None
    rtol, atol = tolerances(want.dtype)
    if want.dtype.kind in "iub":
        bad = got != want
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w))
                    | (np.isnan(g) & np.isnan(w)) | (g == w))
    if not bad.any():
        return None
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    return (f"output '{name}': {int(bad.sum())} of {got.size} elements differ "
            f"(rtol {rtol:g}, atol {atol:g}); first at {list(i)}: "
            f"{got[i]!r} vs {want[i]!r}")


def npy_safe(name):
    """The file name `dyncc run --output-dir` writes output `name` to."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".npy"


def save(path, array):
    if array.dtype.name == "bfloat16":  # .npy has no bf16: its bits as <u2.
        array = array.view(np.uint16)
    np.save(path, array, allow_pickle=False)


def load(path, want):
    got = np.load(path, allow_pickle=False)
    if want is not None and want.dtype.name == "bfloat16" and got.dtype == np.uint16:
        got = got.view(want.dtype)
    return got
