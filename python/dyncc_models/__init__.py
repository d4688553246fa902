# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generators of ONNX models with dynamic shapes and random (seeded) weights,
in the graph forms torch.onnx.export writes (see docs/Models.md).

    from dyncc_models import make_model
    model = make_model("bert", "tiny", seed=0)      # onnx.ModelProto
    onnx.save(model, "bert_tiny.onnx")

or `python -m dyncc_models bert base bert_base.onnx --seed 0`.
Each family module (bert, albert, gpt2, vit, resnet, mobilenet) has CONFIGS,
INPUT_DIMS, OPSET, make_model(config_name="tiny", seed=0, **overrides) and
param_count(config_name).
"""
from . import albert, bert, gpt2, mobilenet, resnet, vit
from ._graph import count_parameters, to_half

FAMILIES = {"bert": bert, "albert": albert, "gpt2": gpt2, "vit": vit, "resnet": resnet,
            "mobilenet": mobilenet}

__all__ = ["FAMILIES", "albert", "bert", "count_parameters", "family", "gpt2",
           "make_model", "mobilenet", "param_count", "resnet", "to_half", "vit"]


def family(name):
    """The module of family `name`."""
    try:
        return FAMILIES[name]
    except KeyError:
        raise KeyError(f"unknown family {name!r}; have {sorted(FAMILIES)}") from None


def make_model(family_name, config_name="tiny", seed=0, **overrides):
    """onnx.ModelProto of `family_name`'s config `config_name`."""
    return family(family_name).make_model(config_name, seed=seed, **overrides)


def param_count(family_name, config_name="tiny", **overrides):
    """Trainable parameters of a config, counted without making weights."""
    return family(family_name).param_count(config_name, **overrides)
