# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writes attention's scores to argv[1] (H = argv[2], D = argv[3]; 2 and 32
by default; argv[4] the layout of K, `rows` by default or `columns`), as an
f16 model exported with its softmax in f32 does: Q[B, H, S, D] times K's
transpose, cast to f32, divided by sqrt(D). With `rows`, K comes as [B, H,
S, D] and is transposed in the graph (B read along its rows: N x K); with
`columns` it comes as [B, H, D, S] (B read as K x N). make_scores() returns
the scale, for a reference."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_scores(path, heads=2, depth=32, layout="rows"):
    f16 = TensorProto.FLOAT16
    scale = float(np.sqrt(depth))
    nodes = []
    if layout == "rows":
        nodes.append(helper.make_node("Transpose", ["K"], ["Kt"],
                                      perm=[0, 1, 3, 2]))
        k_shape = ["B", heads, "S", depth]
    else:
        nodes.append(helper.make_node("Identity", ["K"], ["Kt"]))
        k_shape = ["B", heads, depth, "S"]
    nodes += [helper.make_node("MatMul", ["Q", "Kt"], ["QK"]),
              helper.make_node("Cast", ["QK"], ["QK32"], to=TensorProto.FLOAT),
              helper.make_node("Div", ["QK32", "scale"], ["Y"])]
    graph = helper.make_graph(
        nodes, "scores",
        [helper.make_tensor_value_info("Q", f16, ["B", heads, "S", depth]),
         helper.make_tensor_value_info("K", f16, k_shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                       ["B", heads, "S", "S"])],
        [numpy_helper.from_array(np.array(scale, np.float32), "scale")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return scale


if __name__ == "__main__":
    make_scores(sys.argv[1], *[int(a) for a in sys.argv[2:4]],
                layout=sys.argv[4] if len(sys.argv) > 4 else "rows")
