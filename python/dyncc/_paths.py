# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the built binaries are: $DYNCC_BUILD_DIR, else <repo>/build."""
import os
from pathlib import Path


def build_dir() -> Path:
    env = os.environ.get("DYNCC_BUILD_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "build"
