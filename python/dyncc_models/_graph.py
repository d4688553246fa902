# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Graph-building helpers shared by the model families.

`GraphBuilder` writes nodes the way torch.onnx.export names them (scoped node
names such as `/encoder/layer.0/attention/self/Shape_1` with outputs
`..._output_0`), scalar constants as `Constant` nodes and the small int64
vectors fed to `Concat` as initializers, as recent torch exports do.

Weights are random but deterministic: every parameter draws from its own
generator seeded with (seed, crc32(name)), so a tensor's values depend only on
the seed and its name, never on build order. Initializers are written
straight into the ModelProto (one copy of each weight in memory), so the full
models (up to ~1.3 GB for BERT-large) can be built and `onnx.save`d.

The helpers below emit the decomposed forms torch.onnx.export produces at
opset 13 (no contrib ops): LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/
Sqrt/Div/Mul/Add, GELU in its Erf or Tanh form, `x.size(i)` as
Shape->Gather, `x.size(-1)` as Shape->Slice->Squeeze, and so on.
"""
import math
import zlib
from contextlib import contextmanager

import numpy as np
import onnx
from onnx import TensorProto, helper

__all__ = ["GraphBuilder", "INT64_MAX", "IR_VERSION_FOR_OPSET", "MAX_OPSET"]

INT64_MAX = 9223372036854775807
MAX_OPSET = 17  # the C++ importer links Debian's onnx 1.12 (opsets <= 17)
# IR version of the ONNX release that introduced each opset (what the
# exporters of that time wrote); all <= 8 so that onnx 1.12 accepts them.
IR_VERSION_FOR_OPSET = {9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8,
                        16: 8, 17: 8}

_NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def _tensor(array, name=""):
    """TensorProto of `array` in raw_data form (one copy of the bytes)."""
    array = np.asarray(array)
    if not array.flags.c_contiguous:
        array = array.copy(order="C")  # (ascontiguousarray would make 0-d 1-d)
    t = TensorProto()
    t.name = name
    t.data_type = _NP_TO_ONNX[array.dtype]
    t.dims.extend(array.shape)
    t.raw_data = array.tobytes()
    return t


class GraphBuilder:
    """Accumulates one ONNX graph. With `dry=True` no weight data is made:
    the graph is built only to count parameters (see `num_params`)."""

    def __init__(self, name, seed=0, dry=False, std=0.02):
        self.model = onnx.ModelProto()
        self.graph = self.model.graph
        self.graph.name = name
        self.seed = int(seed)
        self.dry = dry
        self.std = std               # default std of "normal" weights
        self.num_params = 0          # elements of trainable parameters
        self._shapes = {}            # initializer name -> shape
        self._nodes = []
        self._scope = []
        self._counts = {}
        self._const_id = 0

    # -- naming --------------------------------------------------------------

    @contextmanager
    def scope(self, name):
        """Nodes made inside get names prefixed with `/name`."""
        self._scope.append(name)
        try:
            yield
        finally:
            self._scope.pop()

    def _node_name(self, op_type):
        base = "/" + "/".join(self._scope + [op_type]) if self._scope else "/" + op_type
        k = self._counts.get(base, 0)
        self._counts[base] = k + 1
        return base if k == 0 else f"{base}_{k}"

    # -- nodes ---------------------------------------------------------------

    def op(self, op_type, inputs, outputs=1, **attrs):
        """Appends a node; returns its output name (or a list if outputs > 1)."""
        name = self._node_name(op_type)
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self._nodes.append(helper.make_node(op_type, list(inputs), outs,
                                            name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    def const(self, value, dtype=np.int64):
        """A `Constant` node holding `value` (scalars stay 0-d), as torch emits
        for scalar literals, Gather indices and Unsqueeze/Squeeze axes."""
        return self.op("Constant", [], value=_tensor(np.array(value, dtype=dtype)))

    def init_const(self, value, dtype=np.int64):
        """A small constant initializer (e.g. the `[heads]` piece of a
        Concat'ed shape), named like torch's `onnx::Concat_N`."""
        self._const_id += 1
        name = f"onnx::Const_{self._const_id}"
        self._add_initializer(name, np.array(value, dtype=dtype))
        return name

    # -- weights -------------------------------------------------------------

    def _rng(self, name):
        return np.random.default_rng([self.seed, zlib.crc32(name.encode())])

    def _add_initializer(self, name, array):
        self._shapes[name] = tuple(array.shape)
        if not self.dry:
            self.graph.initializer.append(_tensor(array, name))

    def param(self, name, shape, init="normal", std=None, low=0.0, high=1.0,
              trainable=True):
        """A float32 trainable weight. A name used twice refers to the same
        tensor (shared weights, as in ALBERT or a tied LM head).

        init: "normal" (std * N(0,1); std defaults to the builder's, the
        config's initializer_range), "ones" (1 + std * N(0,1): LayerNorm and
        BatchNorm scales), "uniform" (U[low, high): e.g. BatchNorm running
        variance, kept positive). trainable=False (running statistics) keeps
        it out of `num_params`."""
        shape = tuple(int(d) for d in shape)
        if name in self._shapes:
            assert self._shapes[name] == shape, (name, self._shapes[name], shape)
            return name
        if trainable:
            self.num_params += int(np.prod(shape))
        if self.dry:
            self._shapes[name] = shape
            return name
        std = self.std if std is None else std
        rng = self._rng(name)
        if init == "normal":
            a = rng.standard_normal(shape, dtype=np.float32)
            a *= np.float32(std)
        elif init == "ones":
            a = rng.standard_normal(shape, dtype=np.float32)
            a *= np.float32(std)
            a += np.float32(1.0)
        elif init == "uniform":
            a = rng.uniform(low, high, shape).astype(np.float32)
        else:
            raise ValueError(f"unknown init {init!r}")
        self._add_initializer(name, a)
        return name

    def buffer(self, name, array):
        """A named non-trainable constant (position_ids, causal-mask bias)."""
        if name not in self._shapes:
            self._add_initializer(name, np.asarray(array))
        return name

    # -- graph interface -----------------------------------------------------

    def input(self, name, elem_type, dims):
        self.graph.input.append(helper.make_tensor_value_info(name, elem_type, dims))
        return name

    def output(self, value, name, elem_type, dims):
        """Declares graph output `name`, renaming the producing node's output."""
        for node in reversed(self._nodes):
            for i, out in enumerate(node.output):
                if out == value:
                    node.output[i] = name
                    for other in self._nodes:
                        for j, inp in enumerate(other.input):
                            if inp == value:
                                other.input[j] = name
                    self.graph.output.append(
                        helper.make_tensor_value_info(name, elem_type, dims))
                    return name
        raise KeyError(value)

    def finish(self, opset, doc=""):
        assert opset <= MAX_OPSET, opset
        self.graph.node.extend(self._nodes)
        self._nodes = []
        m = self.model
        m.ir_version = IR_VERSION_FOR_OPSET[opset]
        m.producer_name = "dyncc_models"
        m.producer_version = "0.1"
        m.doc_string = doc
        m.opset_import.append(helper.make_opsetid("", opset))
        return m

    # -- torch-style building blocks ------------------------------------------

    def size(self, x, index):
        """`x.size(index)` for index >= 0: Shape -> Gather (0-d int64)."""
        return self.op("Gather", [self.op("Shape", [x]), self.const(index)], axis=0)

    def size_neg(self, x, index):
        """`x.size(-k)` as torch 1.x writes it: Shape -> Slice -> Squeeze."""
        end = INT64_MAX if index == -1 else index + 1
        sl = self.op("Slice", [self.op("Shape", [x]), self.const([index]),
                               self.const([end]), self.const([0])])
        return self.op("Squeeze", [sl, self.const([0])])

    def unsqueeze(self, x, axes):
        return self.op("Unsqueeze", [x, self.const(list(axes))])

    def shape_of(self, *pieces):
        """Concat of shape pieces: a 0-d int64 value is Unsqueezed, an int
        becomes a [v] initializer, a str naming a 1-d value is used as is."""
        parts = []
        for p in pieces:
            if isinstance(p, int):
                parts.append(self.init_const([p]))
            elif isinstance(p, tuple):  # ("1d", name): already a 1-d value
                parts.append(p[1])
            else:
                parts.append(self.unsqueeze(p, [0]))
        return self.op("Concat", parts, axis=0)

    def linear(self, x, prefix, n_in, n_out, std=None):
        """nn.Linear on a 3-D input as torch exports it: MatMul by the
        (constant-folded) transposed weight [in, out], then Add bias."""
        w = self.param(prefix + ".weight", (n_in, n_out), std=std)
        b = self.param(prefix + ".bias", (n_out,), std=std)
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x, prefix, n, eps):
        """nn.LayerNorm decomposed as torch < 2 exports it (opset < 17)."""
        w = self.param(prefix + ".weight", (n,), init="ones")
        b = self.param(prefix + ".bias", (n,))
        mean = self.op("ReduceMean", [x], axes=[-1])
        d = self.op("Sub", [x, mean])
        var = self.op("ReduceMean", [self.op("Pow", [d, self.const(2.0, np.float32)])],
                      axes=[-1])
        std = self.op("Sqrt", [self.op("Add", [var, self.const(eps, np.float32)])])
        y = self.op("Div", [d, std])
        return self.op("Add", [self.op("Mul", [y, w]), b])

    def gelu_erf(self, x):
        """nn.GELU / F.gelu: x * 0.5 * (1 + erf(x / sqrt(2)))."""
        e = self.op("Erf", [self.op("Div", [x, self.const(1.4142135381698608, np.float32)])])
        y = self.op("Mul", [x, self.op("Add", [e, self.const(1.0, np.float32)])])
        return self.op("Mul", [y, self.const(0.5, np.float32)])

    def gelu_tanh(self, x):
        """HF gelu_new: 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715 x^3)))."""
        half = self.op("Mul", [x, self.const(0.5, np.float32)])
        cube = self.op("Pow", [x, self.const(3.0, np.float32)])
        inner = self.op("Add", [x, self.op("Mul", [cube, self.const(0.044715, np.float32)])])
        t = self.op("Tanh", [self.op("Mul", [inner, self.const(math.sqrt(2.0 / math.pi),
                                                               np.float32)])])
        return self.op("Mul", [half, self.op("Add", [t, self.const(1.0, np.float32)])])


def count_parameters(model):
    """Elements in all float (f32 or f16) initializers of `model`."""
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer
               if t.data_type in (TensorProto.FLOAT, TensorProto.FLOAT16))


def to_half(model):
    """`model` as an f16 export has it, in place: float weights, constants
    (Constant, ConstantOfShape), casts to float, and float inputs and
    outputs become f16; values keep their names. Intermediate shape
    annotations are dropped (their types changed). Returns `model`."""
    from onnx import numpy_helper

    def half(tensor):
        tensor.CopyFrom(numpy_helper.from_array(
            numpy_helper.to_array(tensor).astype(np.float16), tensor.name))

    graph = model.graph
    for init in graph.initializer:
        if init.data_type == TensorProto.FLOAT:
            half(init)
    for value in list(graph.input) + list(graph.output):
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = TensorProto.FLOAT16
    del graph.value_info[:]
    for node in graph.node:
        for attr in node.attribute:
            if (node.op_type in ("Constant", "ConstantOfShape")
                    and attr.name == "value"
                    and attr.t.data_type == TensorProto.FLOAT):
                half(attr.t)
            elif (node.op_type == "Cast" and attr.name == "to"
                  and attr.i == TensorProto.FLOAT):
                attr.i = TensorProto.FLOAT16
    return model

