# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The host kernel library of an artifact (section `cpu.so`) depends on libc
and libm only: no MLIR run-time library (a non-contiguous memref.copy would
call `memrefCopy`), no allocator in a kernel (a temporary left as
memref.alloc would call `malloc`), no C++ run-time. Checked with `nm -u` on
artifacts of every kernel kind and of the real models that compile."""
import shutil
import subprocess

import pytest

import dyncc
from conftest import SHARED_MODELS, require, sections
from test_codegen_kinds import CASES, default_kind_artifact

# What generated kernels may call: libm's functions, and the libc memory
# routines LLVM emits for copies and fills.
ALLOWED = {
    "memcpy", "memmove", "memset",
    "expf", "exp", "logf", "log", "log1pf", "expm1f", "sqrtf", "sqrt",
    "tanhf", "tanh", "powf", "pow", "erff", "erf", "sinf", "cosf",
    "floorf", "ceilf", "roundf", "fabsf", "fmaf", "fmodf", "rintf",
    "nearbyintf", "truncf", "atanf", "atan2f", "log2f", "log10f", "exp2f",
    "cbrtf", "roundevenf",
}


def undefined_symbols(so_bytes, tmp_path):
    so = tmp_path / "kernels.so"
    so.write_bytes(so_bytes)
    proc = subprocess.run(["nm", "-u", "-D", str(so)], capture_output=True,
                          text=True, check=True)
    names = set()
    for line in proc.stdout.splitlines():
        name = line.split()[-1].split("@")[0]
        if name.startswith("__") and name in ("__cxa_finalize", "__gmon_start__"):
            continue  # weak references every shared object carries
        names.add(name)
    return names


def kind_artifacts(work, compile_once):
    """Artifacts of every kernel kind (test_codegen_kinds' cases, the ones
    its numerics run) and a bf16 GEMM."""
    out = [default_kind_artifact(compile_once, name, work) for name in CASES]
    import onnx
    # A bf16 GEMM whose chunked copies carry bf16 vectors through branches
    # (LLVM narrows them back with __truncsfbf2, which the object defines).
    from test_codegen_kinds import _f16_gemm_model
    bf16 = _f16_gemm_model(work, [], [], onnx.TensorProto.BFLOAT16)
    out.append(dyncc.compile(bf16, work / "gemm_bf16.dyncc", targets=["cpu"],
                             dims={"M": (1, 512), "K": (8, 512, 8),
                                   "N": (8, 512, 8)}))
    assert len(out) >= len(CASES)
    return out


# One test per real model, so that the compiles spread over the workers.
SOURCES = ["kernel-kinds"] + [m.stem for m in sorted(SHARED_MODELS.glob("*.onnx"))]


@pytest.mark.parametrize("source", SOURCES)
def test_host_kernels_need_only_libc_and_libm(tmp_path, compile_once,
                                              model_compile, source):
    require(shutil.which("nm") is not None, "nm (binutils) is not installed")
    if source == "kernel-kinds":
        arts = kind_artifacts(tmp_path, compile_once)
    else:
        # The artifact test_shared_models checks too: compiled once.
        result = model_compile(SHARED_MODELS / f"{source}.onnx")
        if result.returncode != 0:
            pytest.skip("refused (test_shared_models checks the refusal): "
                        + result.stderr.strip())
        arts = [result.artifact]
    for art in arts:
        so = sections(art).get("cpu.so")
        assert so, f"{art.name}: no cpu.so section"
        extra = undefined_symbols(so, tmp_path) - ALLOWED
        assert not extra, f"{art.name}: host kernels call {sorted(extra)}"


def test_the_check_catches_a_foreign_symbol(tmp_path):
    """The check itself can fail: a library that calls malloc is caught."""
    require(shutil.which("cc") is not None, "no C compiler")
    src = tmp_path / "k.c"
    src.write_text("#include <stdlib.h>\nvoid *k(long n) { return malloc(n); }\n")
    so = tmp_path / "k.so"
    subprocess.run(["cc", "-shared", "-fPIC", str(src), "-o", str(so)], check=True)
    assert "malloc" in undefined_symbols(so.read_bytes(), tmp_path) - ALLOWED
