#!/usr/bin/env bash
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# Sets up (scripts/setup.sh), builds, and runs every test suite: lit, gtest
# (ctest), pytest, the sanitizer build of the run-time, the fuzzers. Ends with
# the line `N passed, N failed`; exits non-zero if anything failed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS=0
"$ROOT/scripts/setup.sh"
export DYNCC_BUILD_SECONDS="$SECONDS"
exec "$ROOT/.venv/bin/python" "$ROOT/scripts/run_tests.py"
