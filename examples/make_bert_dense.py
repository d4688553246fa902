#!/usr/bin/env python3
# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes bert_dense.onnx: BERT-base's four dense layers over M = B*S rows,
each a MatMul of its own, with the weights as inputs (so the artifact holds
no weights and the GPU bundle stays small):

    qkv = x @ qkv_weight     [M, 768] x [768, 2304]
    out = x @ out_weight     [M, 768] x [768, 768]
    ffn1 = x @ ffn1_weight   [M, 768] x [768, 3072]
    ffn2 = h @ ffn2_weight   [M, 3072] x [3072, 768]

M is a dim_param. The GPU check (scripts/gpu_check.py) tunes it (the
selection regret over held-out M) and times it against torch.matmul
(cuBLAS) on the same shapes:
    python examples/make_bert_dense.py bert_dense.onnx [float|float16]
"""
import sys

import onnx
from onnx import TensorProto, helper

LAYERS = [("qkv", "x", 768, 2304), ("out", "x", 768, 768),
          ("ffn1", "x", 768, 3072), ("ffn2", "h", 3072, 768)]


def make_model(dtype="float"):
    elem = {"float": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}[dtype]
    inputs = [helper.make_tensor_value_info("x", elem, ["M", 768]),
              helper.make_tensor_value_info("h", elem, ["M", 3072])]
    outputs, nodes = [], []
    for name, source, k, n in LAYERS:
        inputs.append(helper.make_tensor_value_info(f"{name}_weight", elem,
                                                    [k, n]))
        outputs.append(helper.make_tensor_value_info(name, elem, ["M", n]))
        nodes.append(helper.make_node("MatMul", [source, f"{name}_weight"],
                                      [name], name=name))
    graph = helper.make_graph(nodes, "bert_dense", inputs, outputs)
    model = helper.make_model(
        graph, producer_name="dyncc-examples",
        opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "bert_dense.onnx"
    onnx.save(make_model(sys.argv[2] if len(sys.argv) > 2 else "float"), out)
