# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""dyncc's conformance harness (issue 8, docs/Conformance.md): the ONNX
backend node tests through the whole pipeline, static and with
--force-dynamic (nodes.py), and real and generated models against
onnxruntime at several shapes (models.py). `python -m dyncc_conformance`
runs them all and prints the summary."""
