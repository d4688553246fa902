#!/usr/bin/env bash
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# Sets up and builds dyncc (scripts/setup.sh), compiles the example model
# Y = Relu(X @ W + b) with a dynamic batch B once, and runs the one artifact
# at several batch sizes on the CPU target, checking each against numpy.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${DYNCC_BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
exec "$ROOT/.venv/bin/python" "$ROOT/examples/demo.py" --build "$BUILD"
