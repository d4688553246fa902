# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python -m dyncc_models FAMILY CONFIG OUT.onnx [--seed N] [--set KEY=VALUE ...]
    [--dtype float16]
python -m dyncc_models --list"""
import argparse
import ast
import sys

import onnx

from . import FAMILIES, count_parameters, family
from ._graph import to_half


def _list():
    for name, mod in FAMILIES.items():
        print(f"{name} (opset {mod.OPSET}): inputs "
              + ", ".join(f"{k}{v}" for k, v in mod.INPUT_DIMS.items()))
        for cfg_name, cfg in mod.CONFIGS.items():
            n = mod.param_count(cfg_name)
            print(f"  {cfg_name:6s} {n / 1e6:9.2f}M params ~{n * 4 / 2**20:8.1f} MiB  {cfg}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m dyncc_models",
                                 description="Write an ONNX model with random weights.")
    ap.add_argument("--list", action="store_true", help="list families and configs")
    ap.add_argument("family", nargs="?", choices=sorted(FAMILIES))
    ap.add_argument("config", nargs="?")
    ap.add_argument("out", nargs="?", help="output .onnx path")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a config key, e.g. --set num_layers=2")
    ap.add_argument("--dtype", choices=["float32", "float16"], default="float32",
                    help="the weights' and float inputs' type: float16 writes "
                         "the model as an f16 export has it")
    args = ap.parse_args(argv)
    if args.list:
        _list()
        return 0
    if not (args.family and args.config and args.out):
        ap.error("FAMILY CONFIG OUT are required (or --list)")
    mod = family(args.family)
    if args.config not in mod.CONFIGS:
        ap.error(f"unknown config {args.config!r} for {args.family}; have "
                 + ", ".join(mod.CONFIGS))
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        try:
            overrides[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            overrides[key] = value
    model = mod.make_model(args.config, seed=args.seed, **overrides)
    if args.dtype == "float16":
        to_half(model)
    onnx.save(model, args.out)
    print(f"wrote {args.out}: {args.family} {args.config} seed {args.seed} "
          f"{args.dtype}, "
          f"{len(model.graph.node)} nodes, {count_parameters(model) / 1e6:.2f}M float weights")
    return 0


if __name__ == "__main__":
    sys.exit(main())
