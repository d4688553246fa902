# -*- Python -*-
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "DYNCC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dyncc_obj_root, "test")

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "CI"])
llvm_config.use_default_substitutions()  # FileCheck, not, count
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.dyncc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["dyncc-opt", "dyncc", "dyncc-run", "dyncc-tile-search"], tool_dirs)
config.substitutions.append(("%python", config.python_executable))
# The tests' CUDA driver on the host (unittests/Runtime/FakeCuda.cpp), and
# the same without its optional entry points (before %fake_cuda, its
# prefix).
config.substitutions.append(
    ("%fake_cuda_minimal",
     os.path.join(config.dyncc_obj_root, "lib", "libdyncc_fake_cuda_minimal.so")))
config.substitutions.append(
    ("%fake_cuda", os.path.join(config.dyncc_obj_root, "lib", "libdyncc_fake_cuda.so")))
config.substitutions.append(("%models", os.path.join(config.dyncc_src_root, "examples")))
# The real exports next to the checkout (../shared/models, or
# $DYNCC_SHARED_DIR/models as for pytest): a missing one fails the tests
# that use it.
shared_dir = os.environ.get("DYNCC_SHARED_DIR") or os.path.join(
    os.path.dirname(config.dyncc_src_root), "shared")
config.substitutions.append(("%shared_models", os.path.join(shared_dir, "models")))
# The model generators (python/dyncc_models): `%dyncc_models FAMILY CONFIG OUT`.
config.substitutions.append(
    ("%dyncc_models", "env PYTHONPATH=%s %s -m dyncc_models"
     % (os.path.join(config.dyncc_src_root, "python"), config.python_executable)))

# ptxas: tests that assemble PTX need it. Under CI it must be present.
ptxas = os.path.join(config.cuda_home, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
elif os.environ.get("CI") == "true":
    lit_config.fatal("CI=true but ptxas is missing at " + ptxas)
else:
    lit_config.note("ptxas not found at %s: PTX assembly tests are UNSUPPORTED" % ptxas)

# The x86-64 psABI levels this machine runs (/proc/cpuinfo's flags; the
# run-time reads CPUID itself): tests that run the host code's wider builds
# (docs/Runtime.md, "Host code levels") need them. CI's machines run
# x86-64-v4.
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


_flags = _cpu_flags()
if {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe"} <= _flags:
    config.available_features.add("host-x86-64-v3")
    if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= _flags:
        config.available_features.add("host-x86-64-v4")
elif os.environ.get("CI") == "true":
    lit_config.fatal("CI=true but this machine does not run x86-64-v3")
