# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Whole models against onnxruntime (issue 8, part 2 and 3): each model of
../shared/models and each generated family's tiny configuration is compiled
for the CPU with declared symbol ranges, then run at five or more shape
bindings - every symbol at its minimum, every symbol at its maximum, each
symbol alone at its maximum, and values off tile multiples (primes) - on
valid inputs, and compared with onnxruntime within issue 8's whole-model
tolerances (dyncc_models.reference.tolerances)."""
import os
import re
import subprocess
import threading
from pathlib import Path

import numpy as np
import onnx

from .nodes import compare, eval_expr

# Per shared model: the compile flags that make its symbols (static models
# get theirs from --force-dynamic=all, with the dimensions their reshapes
# fix specialized) and the range each symbol is compiled and run over.
# `index` inputs hold lengths: values in [1, that symbol's value].
SHARED = {
    # (bert_squad_tiny's position table has 20 rows.)
    "bert_attention_mask1d_pt111_opset11": dict(
        dims={"batch": (1, 8), "sequence": (1, 96)},
        index={"mask_index": "sequence"}),
    "bert_attention_mask2d_pt15_opset11": dict(
        dims={"batch": (1, 8), "seq_len": (1, 96)}),
    "bert_attention_nomask_fp16_pt111_opset11": dict(
        dims={"batch": (1, 8), "sequence": (1, 96)}),
    "bert_squad_tiny_pt13_opset10": dict(
        dims={"batch_size": (1, 8), "max_seq_len": (1, 20)}),
    "bert_squad_tiny_pt13_opset11_fp16": dict(
        dims={"batch_size": (1, 8), "max_seq_len": (1, 20)}),
    "bert_toy_pt11_opset12_ortopt": dict(
        dims={"batch": (1, 8), "max_seq_len_in_batch": (1, 128)}),
    "cifar_cnn_tutorial_pt17_opset10": dict(dims={"batch_size": (1, 32)}),
    "cnn_mnist_pt11_opset9": dict(dims={"batch": (1, 32)}),
    "distilbert_tiny_seqcls_pt110_opset11": dict(
        dims={"batch": (1, 8), "sequence": (1, 128)}),
    "gelu_erf_tf2onnx_opset10": dict(dims={"unk__14": (1, 8), "unk__15": (1, 128)}),
    # Its 64x64 attention mask bounds past + current length by 64.
    "gpt2_megatron_tiny_pt19_opset12": dict(
        dims={"batch_size": (1, 4), "seq_len": (1, 32), "past_seq_len": (1, 32)}),
    # Its causal mask buffer is 8 long: seq_len <= 8 is a constraint.
    "gpt2_tiny_nopast_pt13_opset11": dict(
        dims={"batch_size": (1, 16), "seq_len": (1, 8)}),
    "layernorm_with_cast_pt16_opset9": dict(
        flags=["--force-dynamic=all"], dims={"input_d0": (1, 256)}),
    # A Reshape to [1, 2048] fixes the batch at 1 and the image to the
    # sizes whose final 7x7 feature map is the same: 193..224.
    "light_resnet50_opset9": dict(
        flags=["--force-dynamic=all", "--dim", "gpu_0_data_0_d0=1"],
        dims={"gpu_0_data_0_d2": (193, 224), "gpu_0_data_0_d3": (193, 224)}),
    # Its shuffles reshape to [1, 4, 28, 56, 56]: the batch is 1, and the
    # images those whose stem leaves 56 x 56 (221 to 224).
    "light_shufflenet_opset9": dict(
        flags=["--force-dynamic", "--dim", "gpu_0_data_0_d0=1"],
        dims={"gpu_0_data_0_d2": (221, 224), "gpu_0_data_0_d3": (221, 224)}),
    "light_squeezenet_opset9": dict(
        flags=["--force-dynamic=all", "--dim", "data_0_d2=224",
               "--dim", "data_0_d3=224"],
        dims={"data_0_d0": (1, 8)}),
    "matmul_add_layernorm_pt15_opset11": dict(
        flags=["--force-dynamic=all"],
        dims={"input_1_d0": (1, 16), "input_1_d1": (1, 128)}),
    "mobilenetv3_small_excerpt_opset13": dict(dims={"batch_size": (1, 8)}),
    "resnet50_stem_residual_block_opset11": dict(dims={"gpu_0_data_0_d0": (1, 8)}),
    # Its shapes come from the values of input `shape` (data-dependent
    # symbols bound in the middle of a run), not from input dimensions:
    # `values` lists the contents it runs at, the smallest, primes, a
    # large one.
    "shape_constantofshape_chain_pt16_opset9": dict(
        dims={}, values=[{"shape": v} for v in
                         ([1, 1], [2, 2], [3, 5], [7, 1], [1, 13],
                          [31, 17], [64, 257])]),
    "small_cnn_resize_pt110_opset11": dict(dims={"batch_size": (1, 32)}),
    "super_resolution_pt111_opset15": dict(dims={"batch_size": (1, 8)}),
    "tfbert_mrpc_tiny_keras2onnx_opset10": dict(dims={"N": (1, 32)}),
    "upsample_resize_tf2onnx_opset12": dict(
        dims={"unk__31": (1, 4), "unk__32": (1, 64), "unk__33": (1, 64)}),
}

def _attention_block(sequence, **extra):
    """SHARED_DYNAMIC's entry of a BERT attention block whose sequence
    symbol is `sequence`: the QKV weight's rows (the hidden size in)
    dynamic too; its 2304 columns the heads' reshape fixes
    (`2304*batch*sequence == batch*bias_d0*sequence`, with batch and
    sequence cancelled)."""
    return dict(
        flags=["--force-dynamic"],
        dims={"batch": (1, 4), sequence: (1, 40), "input_d2": (1, 800)},
        bindings=[{"batch": 1, sequence: 1, "input_d2": 768},
                  {"batch": 3, sequence: 37, "input_d2": 5},
                  {"batch": 2, sequence: 17, "input_d2": 777}],
        **extra)


# Shared models with their images (and, for the attention blocks, their
# weights' sizes) dynamic too. Where the model's own fixed reshapes bound
# which sizes are valid, `bindings` lists the shapes it runs at, which
# (unlike bindings()' extremes) the reshapes accept. The CNNs among those
# have a Reshape whose runs of dimensions cannot be matched symbolically
# over those sizes ([N, 24, H', W'] to [-1, 2400]), which fusion keeps out
# of its neighbours' kernels, and ShuffleNet's channel shuffles then run as
# a transpose and a conv that reads it through the reshape.
SHARED_DYNAMIC = {
    # (H/2 - 6) * (W/2 - 6) a multiple of 100: [-1, 2400] rows per image.
    "cifar_cnn_tutorial_pt17_opset10": dict(
        flags=["--force-dynamic", "--dim", "modelInput_d1=3"],
        dims={"batch_size": (1, 5), "modelInput_d2": (32, 64),
              "modelInput_d3": (32, 64)},
        bindings=[dict(batch_size=1, modelInput_d2=32, modelInput_d3=32),
                  dict(batch_size=3, modelInput_d2=32, modelInput_d3=52),
                  dict(batch_size=2, modelInput_d2=33, modelInput_d3=53)]),
    # ((H - 4)/2 - 4)/2 * ((W - 4)/2 - 4)/2 a multiple of 16 ([-1, 320]).
    "cnn_mnist_pt11_opset9": dict(
        flags=["--force-dynamic", "--dim", "input_image_d1=1"],
        dims={"batch": (1, 5), "input_image_d2": (28, 64),
              "input_image_d3": (28, 64)},
        bindings=[dict(batch=1, input_image_d2=28, input_image_d3=28),
                  dict(batch=3, input_image_d2=28, input_image_d3=44),
                  dict(batch=2, input_image_d2=29, input_image_d3=47)]),
    # Its shuffles reshape to [1, 4, 28, 56, 56]: images whose stem (a
    # stride-2 conv, then a stride-2 pool) leaves 56 x 56, 221 to 224.
    "light_shufflenet_opset9": dict(
        flags=["--force-dynamic", "--dim", "gpu_0_data_0_d0=1"],
        dims={"gpu_0_data_0_d2": (221, 224), "gpu_0_data_0_d3": (221, 224)},
        bindings=[dict(gpu_0_data_0_d2=224, gpu_0_data_0_d3=224),
                  dict(gpu_0_data_0_d2=223, gpu_0_data_0_d3=221)]),
    # Fully convolutional up to a global pool, a resize or a pixel
    # shuffle: every size of the range, 1 and primes included.
    "mobilenetv3_small_excerpt_opset13": dict(
        flags=["--force-dynamic", "--dim", "input_d1=3"],
        dims={"batch_size": (1, 3), "input_d2": (1, 96), "input_d3": (1, 96)}),
    "resnet50_stem_residual_block_opset11": dict(
        flags=["--force-dynamic", "--dim", "gpu_0_data_0_d1=3"],
        dims={"gpu_0_data_0_d0": (1, 3), "gpu_0_data_0_d2": (1, 96),
              "gpu_0_data_0_d3": (1, 96)}),
    "super_resolution_pt111_opset15": dict(
        flags=["--force-dynamic", "--dim", "input_d1=1"],
        dims={"batch_size": (1, 3), "input_d2": (1, 64), "input_d3": (1, 64)}),
    "small_cnn_resize_pt110_opset11": dict(
        flags=["--force-dynamic", "--dim", "modelInput_d1=3"],
        dims={"batch_size": (1, 3), "modelInput_d2": (1, 64),
              "modelInput_d3": (1, 64)}),
    # Its last pool is a fixed 13 x 13 window: images of 200 to 240.
    "light_squeezenet_opset9": dict(
        flags=["--force-dynamic=all", "--dim", "data_0_d1=3"],
        dims={"data_0_d0": (1, 2), "data_0_d2": (200, 240),
              "data_0_d3": (200, 240)}),
    # The attention blocks (_attention_block).
    "bert_attention_mask1d_pt111_opset11": _attention_block(
        "sequence", index={"mask_index": "sequence"}),
    "bert_attention_mask2d_pt15_opset11": _attention_block("seq_len"),
    "bert_attention_nomask_fp16_pt111_opset11": _attention_block("sequence"),
}

# Per generated family (dyncc_models): symbol ranges of its tiny config.
# BERT-like position tables hold 64 positions; ViT's 64-pixel maximum image
# is cut in 8-pixel patches.
FAMILIES = {
    "bert": dict(dims={"batch": (1, 8), "seq": (1, 64)}),
    "albert": dict(dims={"batch": (1, 8), "seq": (1, 64)}),
    "gpt2": dict(dims={"batch": (1, 8), "seq": (1, 64)}),
    "vit": dict(dims={"batch": (1, 8), "height": (8, 64, 8), "width": (8, 64, 8)}),
    "resnet": dict(dims={"batch": (1, 8), "height": (1, 64), "width": (1, 64)}),
    "mobilenet": dict(dims={"batch": (1, 8), "height": (1, 64), "width": (1, 64)}),
}


def _off_multiple(lo, hi, div, fraction):
    """A value of [lo, hi] (a multiple of `div`) near lo + fraction*(hi-lo),
    a prime or an odd multiple of `div` where there is one: off the tile
    multiples."""
    target = lo + fraction * (hi - lo)
    values = range(lo, hi + 1, div) if div > 1 else range(lo, hi + 1)

    def score(v):
        odd = (v // div) % 2 == 1 if div > 1 else _is_prime(v)
        return (not odd, abs(v - target))
    return min(values, key=score)


def _is_prime(n):
    return n > 2 and all(n % k for k in range(2, int(n ** 0.5) + 1)) or n == 2


def bindings(dims):
    """Five or more bindings of `dims` ({symbol: (lo, hi[, divisor])}):
    all at the minimum, all at the maximum, each alone at its maximum, and
    values off tile multiples."""
    spec = {s: (r[0], r[1], r[2] if len(r) > 2 else 1) for s, r in dims.items()}
    out = [{s: lo for s, (lo, _, _) in spec.items()},
           {s: hi for s, (_, hi, _) in spec.items()}]
    if len(spec) > 1:
        for s in spec:
            out.append({t: (hi if t == s else lo) for t, (lo, hi, _) in spec.items()})
    for fraction in (0.5, 0.25, 0.75, 0.1):
        out.append({s: _off_multiple(lo, hi, div, fraction)
                    for s, (lo, hi, div) in spec.items()})
    unique = []
    for b in out:
        if b not in unique:
            unique.append(b)
    return unique


def dim_flags(dims):
    flags = []
    for s, r in dims.items():
        flags += ["--dim", f"{s}=" + ":".join(str(v) for v in r)]
    return flags


def vocabularies(graph):
    """{graph input: rows of the table it indexes}: inputs that reach a
    Gather's indices (through Cast, Reshape, Unsqueeze, Squeeze, Flatten)
    whose data is an initializer or a Constant, like token ids into an
    embedding table."""
    tables = {i.name: list(i.dims) for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    tables[node.output[0]] = list(a.t.dims)
    consumers = {}
    for node in graph.node:
        for k, name in enumerate(node.input):
            consumers.setdefault(name, []).append((node, k))
    passthrough = {"Cast", "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity"}
    found = {}
    for value in graph.input:
        frontier, seen = [value.name], set()
        while frontier:
            name = frontier.pop()
            if name in seen:
                continue
            seen.add(name)
            for node, k in consumers.get(name, []):
                if node.op_type == "Gather" and k == 1 and node.input[0] in tables:
                    rows = tables[node.input[0]]
                    axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
                    if rows:
                        size = rows[axis]
                        found[value.name] = min(found.get(value.name, size), size)
                elif node.op_type in passthrough and k == 0:
                    frontier.extend(node.output)
    return found


def valid_feeds(graph, shapes, binding, index=None, seed=0):
    """Inputs of `graph` at `shapes` ({input: tuple}): token ids below the
    rows of the table they index (read from the model), masks (integer or
    float inputs named *mask* of rank 2 or more) of 0 and 1, mask indices
    (`index`: {input: symbol}) in [1, that symbol's value], other integers
    in [1, 3), floats normal (float16 at 0.1: see reference.plain_feed),
    inputs named `weight` at 1/sqrt(fan-in) (reference.plain_feed)."""
    from dyncc_models import reference
    rng = np.random.default_rng(seed)
    vocab = vocabularies(graph)
    initializers = {i.name for i in graph.initializer}
    feeds = {}
    for value in graph.input:
        if value.name in initializers:
            continue
        shape = shapes[value.name]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        name = value.name.lower()
        if index and value.name in index:
            feeds[value.name] = rng.integers(
                1, binding[index[value.name]] + 1, size=shape).astype(dtype)
        elif value.name in vocab:
            feeds[value.name] = rng.integers(0, vocab[value.name], size=shape).astype(dtype)
        elif "mask" in name and len(shape) >= 2:
            feeds[value.name] = rng.integers(0, 2, size=shape).astype(dtype)
        else:
            feeds[value.name] = reference.plain_feed(value.name, dtype, shape, rng)
    return feeds


class ModelCheck:
    """One model checked at each binding: `results` is a list of
    (binding, None or what differed); `error` is a compile or load error."""

    def __init__(self, name):
        self.name, self.results, self.error = name, [], None

    @property
    def passed(self):
        return self.error is None and self.results and all(
            problem is None for _, problem in self.results)

    def summary(self):
        if self.error:
            return f"{self.name}: {self.error}"
        bad = [f"{b}: {p}" for b, p in self.results if p]
        return f"{self.name}: {len(self.results) - len(bad)} of " \
               f"{len(self.results)} shapes match" + ("; " + "; ".join(bad) if bad else "")


# Guards DYNCC_HOST_ISA while _load_at sets it (__main__ checks models on
# several threads).
_ENV_LOCK = threading.Lock()


def _load_at(path, isa):
    """dyncc.load(path) with the host code of level `isa` (DYNCC_HOST_ISA
    while it loads; None: the highest this processor runs)."""
    import dyncc
    with _ENV_LOCK:
        old = os.environ.get("DYNCC_HOST_ISA")
        if isa:
            os.environ["DYNCC_HOST_ISA"] = isa
        try:
            art = dyncc.load(str(path))
        finally:
            if old is None:
                os.environ.pop("DYNCC_HOST_ISA", None)
            else:
                os.environ["DYNCC_HOST_ISA"] = old
    if isa and art.host_isa != isa:
        raise RuntimeError(f"DYNCC_HOST_ISA={isa} loaded the host code of "
                           f"{art.host_isa!r}")
    return art


# The host targets a model check compiles: the portable build and the
# AVX-512 one (docs/Runtime.md, "Host code levels"), both run where the
# processor runs them.
CHECK_TARGETS = "cpu,cpu-x86-64-v4"


def check_model(model_path, spec, driver, work, ort_session=None,
                targets=CHECK_TARGETS, isas=None):
    """Compiles `model_path` for `targets` (the CPU's) with `spec`
    (SHARED's or FAMILIES' entry) in `work`, runs it at every binding of
    spec's dims, on the host code of each level of `isas` (docs/Runtime.md,
    "Host code levels"; None in it: the one the run-time picks; `isas`
    None: the portable build and the highest this processor runs), and
    compares with onnxruntime. Returns a ModelCheck; with several levels,
    each result's binding names its level as `isa`."""
    from dyncc_models import reference
    model_path, work = Path(model_path), Path(work)
    check = ModelCheck(model_path.stem)
    artifact = work / (model_path.stem + ".dyncc")
    cmd = [str(driver), "compile", str(model_path), "-o", str(artifact),
           "--target", targets, "--quiet", *spec.get("flags", []),
           *dim_flags(spec["dims"])]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        check.error = "compile error: " + proc.stderr.strip().splitlines()[-1]
        return check
    graph = onnx.load(str(model_path)).graph
    if isas is None:
        top = _load_at(artifact, None).host_isa
        isas = ["x86-64-v2", top] if top in ("x86-64-v3", "x86-64-v4") \
            else [None]
    art = _load_at(artifact, isas[0])
    # A dim the model fixes is no symbol of the artifact: its bindings
    # would all run the one shape.
    named = {name for _, _, dims in art.inputs for d in dims
             for name in re.findall(r"[A-Za-z_]\w*", str(d))}
    fixed = sorted(set(spec["dims"]) - named)
    if fixed:
        check.error = (f"{', '.join(fixed)}: not a symbol of the artifact (the "
                       f"model fixes it), so its bindings would not vary")
        return check
    if ort_session is None:
        # Dimensions the model declares static but the artifact made
        # symbols (--force-dynamic) are made dynamic in onnxruntime's copy.
        declared = {v.name: v.type.tensor_type.shape.dim for v in graph.input}
        symbolic = {}
        for name, _, dims in art.inputs:
            for k, d in enumerate(dims):
                if not str(d).isdigit() and declared[name][k].HasField("dim_value"):
                    symbolic.setdefault(name, {})[k] = str(d)
        ort_session = reference.onnxruntime_session(model_path, symbolic)
    # Inputs whose contents are sizes (`values`) run at each given content;
    # the other inputs at each binding of the symbols.
    given = spec.get("values") or [{}]
    cases = [(b, v, isa)
             for isa in isas
             for b in spec.get("bindings") or bindings(spec["dims"])
             for v in given]
    sessions = {}
    for k, (binding, values, isa) in enumerate(cases):
        if isa not in sessions:
            sessions[isa] = (art if isa == isas[0] else
                             _load_at(artifact, isa)).session("cpu")
        session = sessions[isa]
        shapes = {name: tuple(eval_expr(str(d), binding) for d in dims)
                  for name, _, dims in art.inputs}
        feeds = valid_feeds(graph, shapes, binding, spec.get("index"), seed=k)
        for name, contents in values.items():
            feeds[name] = np.asarray(contents, dtype=feeds[name].dtype)
        binding = {**binding, **values}
        if len(isas) > 1:
            binding["isa"] = isa
        try:
            expected = ort_session.run(None, feeds)
            got = session.run(feeds)
        except Exception as e:  # noqa: BLE001 - reported per binding
            check.results.append((binding, f"{type(e).__name__}: {e}"))
            continue
        problem = None
        memory = session.memory()
        if memory["arena_bytes"] > 1.25 * memory["live_peak_bytes"]:
            problem = f"arena {memory['arena_bytes']} B > 1.25 x live peak " \
                      f"{memory['live_peak_bytes']} B"
        for out, want in zip(ort_session.get_outputs(), expected):
            problem = problem or compare(out.name, got[out.name], want,
                                         reference.tolerances)
        check.results.append((binding, problem))
    return check


def check_family(family, driver, work, seed=0):
    """check_model on generated family `family`'s tiny configuration."""
    import dyncc_models
    path = Path(work) / f"{family}_tiny.onnx"
    onnx.save(dyncc_models.make_model(family, "tiny", seed=seed), str(path))
    return check_model(path, FAMILIES[family], driver, work)


def shared_models(directory):
    """Every model of ../shared/models, plus any SHARED names that are
    missing from it (check_shared reports them)."""
    directory = Path(directory)
    found = sorted(directory.glob("*.onnx")) if directory.exists() else []
    names = {p.stem for p in found}
    return found + [directory / f"{s}.onnx" for s in sorted(SHARED) if s not in names]


def check_shared(path, driver, work):
    """check_model on a shared model with its SHARED entry; a model with no
    entry, or a missing one, is an error."""
    path = Path(path)
    if not path.exists():
        check = ModelCheck(path.stem)
        check.error = f"missing: {path}"
        return check
    if path.stem not in SHARED:
        check = ModelCheck(path.stem)
        check.error = ("no entry in dyncc_conformance.models.SHARED: give its "
                       "symbols' ranges there")
        return check
    return check_model(path, SHARED[path.stem], driver, work)
