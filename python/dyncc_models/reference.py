# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What a model is checked against: onnxruntime on a copy it accepts, random
inputs a model accepts, and issue 8's tolerances. Shared by the tests
(python/tests/test_shared_models.py) and the GPU check
(scripts/gpu_check.py), which runs where there is no compiler."""
import numpy as np
import onnx

def concat_scalars_as_vectors(model):
    """The copy of `model` onnxruntime loads: ORT's tiny-model generator
    replaced the Unsqueeze outputs that a Concat builds Reshape shapes from
    with scalar initializers (the bert_squad_tiny models), which ONNX's
    Concat does not allow and onnxruntime refuses at load. dyncc reads a
    scalar there as one element; the copy makes each such scalar a
    1-element vector, which means the same."""
    from onnx import numpy_helper
    model = onnx.ModelProto.FromString(model.SerializeToString())
    inits = {i.name: i for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type != "Concat":
            continue
        for k, name in enumerate(node.input):
            init = inits.get(name)
            if init is None or len(init.dims) != 0:
                continue
            vector = name + ".as_1d"
            if vector not in inits:
                array = numpy_helper.to_array(init).reshape(1)
                inits[vector] = numpy_helper.from_array(array, vector)
                model.graph.initializer.append(inits[vector])
            node.input[k] = vector
    return model


# Models whose file onnxruntime refuses, and the equivalent copy it checks.
REFERENCE_COPIES = {
    "bert_squad_tiny_pt13_opset10": concat_scalars_as_vectors,
    "bert_squad_tiny_pt13_opset11_fp16": concat_scalars_as_vectors,
}


def with_symbolic_inputs(model, symbolic):
    """A copy of `model` whose graph inputs' dimensions named in `symbolic`
    ({input: {dimension index: symbol}}) are `dim_param`s, with the
    recorded intermediate and output shapes dropped: the model dyncc
    compiles with --force-dynamic, which onnxruntime checks against."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for value in model.graph.input:
        for index, symbol in symbolic.get(value.name, {}).items():
            dim = value.type.tensor_type.shape.dim[index]
            dim.ClearField("dim_value")
            dim.dim_param = symbol
    del model.graph.value_info[:]
    for value in model.graph.output:
        value.type.tensor_type.ClearField("shape")
    return model


def onnxruntime_session(model, symbolic=None):
    """An onnxruntime CPU session of `model` (a path), on the copy of it
    that onnxruntime loads where it refuses the file (REFERENCE_COPIES),
    with the input dimensions of `symbolic` made dynamic
    (with_symbolic_inputs)."""
    import onnxruntime as ort
    from pathlib import Path
    model = Path(model)
    copy = REFERENCE_COPIES.get(model.stem)
    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only
    if not copy and not symbolic:
        return ort.InferenceSession(str(model), sess_options=options,
                                    providers=["CPUExecutionProvider"])
    loaded = onnx.load(str(model))
    if copy:
        loaded = copy(loaded)
    if symbolic:
        loaded = with_symbolic_inputs(loaded, symbolic)
    return ort.InferenceSession(loaded.SerializeToString(), sess_options=options,
                                providers=["CPUExecutionProvider"])


def random_feeds(model, dynamic, seed=None):
    """Random inputs of `model` (a path) with every dynamic dimension at
    `dynamic` (seeded by `dynamic` unless `seed`): floats normal, integers
    in [1, 3) (valid token ids and shape values), token types (*type*,
    *segment*) of 0 and 1 (BERT has two), and attention masks (integer
    inputs named *mask* of rank 2 or more) of 0 and 1: a mask of 2 adds
    +10000 to the scores it keeps, where a float32 softmax has no precision
    left to compare. A weight passed as an input (named `weight` or
    `*_weight`) gets the scale of a trained one, 1/sqrt(fan-in): at 1, a
    768-wide projection puts attention outputs in the tens, built from
    terms that cancel, and a 1e-3 relative comparison of the small ones
    measures only the order of summation."""
    graph = onnx.load(str(model)).graph
    initializers = {i.name for i in graph.initializer}
    rng = np.random.default_rng(dynamic if seed is None else seed)
    feeds = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0
                 else dynamic for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if dtype.kind in "iub" and ("mask" in value.name and len(shape) >= 2
                                    or "type" in value.name
                                    or "segment" in value.name):
            feeds[value.name] = rng.integers(0, 2, size=shape).astype(dtype)
        else:
            feeds[value.name] = plain_feed(value.name, dtype, shape, rng)
    return feeds


def plain_feed(name, dtype, shape, rng):
    """A random input with no special meaning: integers in [1, 3) (valid
    shape values), float16 normal at 0.1, a `weight` (or `*_weight`) at
    1/sqrt(fan-in), other floats normal."""
    if dtype.kind in "iub":
        return rng.integers(1, 3, size=shape).astype(dtype)
    if dtype == np.float16:
        # Weights are inputs in some fp16 models: at a standard deviation
        # of 1, a 768-wide projection puts attention scores in the
        # hundreds, where fp16 softmax is ill-conditioned and any two
        # roundings disagree. 0.1 is still far above trained weights'
        # spread.
        return (0.1 * rng.standard_normal(shape)).astype(dtype)
    if name == "weight" or name.endswith("_weight"):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def tolerances(dtype):
    """Issue 8's (rtol, atol) for whole models: fp16 and bf16 1e-2, 1e-3;
    float32 1e-3, 1e-4; integers and bools exact."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return 0.0, 0.0
    if dtype.itemsize == 2:
        return 1e-2, 1e-3
    return 1e-3, 1e-4
