#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The conformance command (issue 8, docs/Conformance.md) from anywhere:
`.venv/bin/python scripts/conformance.py [options]` is
`python -m dyncc_conformance [options]` with python/ on the path."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from dyncc_conformance.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
