# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dyncc: compile ONNX models with dynamic shapes ahead of time, run them.

    import dyncc, numpy as np
    dyncc.compile("model.onnx", "model.dyncc", dims={"B": (1, 1024)})
    art = dyncc.load("model.dyncc")
    sess = art.session("cpu")
    out = sess.run({"X": np.random.rand(7, 64).astype(np.float32)})

The run-time is reached through ctypes (libdyncc_runtime.so, its C API in
include/dyncc/Runtime/dyncc_runtime.h); compiling calls the `dyncc` driver.
"""
from ._runtime import (Artifact, DeviceTensor, DynccError, Session, load,
                       runtime_library)
from ._compile import compile, driver_path

__all__ = ["Artifact", "DeviceTensor", "DynccError", "Session", "compile", "driver_path",
           "load", "runtime_library"]
