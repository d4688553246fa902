# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DLPack in and out of sessions (python/dyncc/_dlpack.py). On the CPU,
against numpy's own DLPack producer and consumer. On CUDA, on the fake
driver (unittests/Runtime/FakeCuda.cpp), whose device memory is host memory:
a CUDA tensor made over the fake's cuMemAlloc is bound in place (no copy to
the device: the fake counts them) and the outputs come back as DLPack
capsules over the session's device memory, read without a copy. torch and
cupy are not installed here: their side of the protocol is the same
capsule, which numpy's tests below check against."""
import ctypes
import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import ROOT, sections
from dyncc import _dlpack
from test_cuda_executor import fake_driver

import dyncc


@pytest.fixture(scope="module")
def linear(tmp_path_factory, bin_dir):
    """linear_relu (X: f32[B, 64] -> Y) compiled for the CPU and sm_90."""
    path = tmp_path_factory.mktemp("dlpack") / "linear.dyncc"
    subprocess.run([str(bin_dir / "dyncc"), "compile",
                    str(ROOT / "examples" / "linear_relu.onnx"), "-o",
                    str(path), "--target", "cpu,sm_90", "--dim", "B=1:256",
                    "--quiet"], check=True)
    return path


class DLPackOnly:
    """A producer with nothing but the DLPack protocol (no __array__)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_cpu_session_reads_dlpack_tensors(linear):
    session = dyncc.load(linear).session("cpu")
    x = np.random.default_rng(0).standard_normal((13, 64)).astype(np.float32)
    want = session.run({"X": x})["Y"]
    assert not hasattr(DLPackOnly(x), "__array__")
    np.testing.assert_array_equal(session.run({"X": DLPackOnly(x)})["Y"], want)
    # device_outputs is for CUDA sessions: the CPU returns arrays.
    np.testing.assert_array_equal(
        session.run([x], device_outputs=True)["Y"], want)


class CudaLike:
    """Claims to be a CUDA tensor."""

    def __dlpack_device__(self):
        return (_dlpack.CUDA, 0)

    def __dlpack__(self, **kwargs):
        raise AssertionError("a CPU session must not take it")


def test_cpu_session_rejects_a_cuda_tensor(linear):
    session = dyncc.load(linear).session("cpu")
    with pytest.raises(dyncc.DynccError, match="input 'X' is a CUDA tensor, "
                       "but the session is on the cpu"):
        session.run({"X": CudaLike()})


def test_capsules_read_and_made():
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    tensor = _dlpack.Borrowed(x.__dlpack__())
    assert (tensor.shape, tensor.dtype, tensor.device) == ((3, 4), "i16",
                                                           (_dlpack.CPU, 0))
    assert tensor.contiguous and tensor.data == x.ctypes.data
    tensor.release()
    strided = _dlpack.Borrowed(x.T.__dlpack__())
    assert strided.shape == (4, 3) and not strided.contiguous
    strided.release()
    with pytest.raises(TypeError, match="not a DLPack capsule"):
        _dlpack.Borrowed(x)

    # A capsule this module makes, consumed by numpy: same memory, and the
    # owner kept alive until numpy's array goes.
    y = np.linspace(0, 1, 10, dtype=np.float64).reshape(2, 5)

    class Producer:
        def __dlpack__(self, **kwargs):
            return _dlpack.make_capsule(y.ctypes.data, y.shape, "f64",
                                        (_dlpack.CPU, 0), y)

        def __dlpack_device__(self):
            return (_dlpack.CPU, 0)

    alive = len(_dlpack._alive)
    z = np.from_dlpack(Producer())
    assert z.ctypes.data == y.ctypes.data
    np.testing.assert_array_equal(z, y)
    assert len(_dlpack._alive) == alive + 1
    del z
    gc.collect()
    assert len(_dlpack._alive) == alive
    # Never consumed: the capsule's destructor releases it.
    capsule = Producer().__dlpack__()
    assert len(_dlpack._alive) == alive + 1
    del capsule
    assert len(_dlpack._alive) == alive


CUDA_RUNNER = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import dyncc
    from dyncc import _dlpack
    fake = ctypes.CDLL(sys.argv[3])
    fake.fake_cuda_count.restype = ctypes.c_long
    fake.fake_cuda_count.argtypes = [ctypes.c_char_p]
    art = dyncc.load(sys.argv[2])
    cpu, gpu = art.session("cpu"), art.session("cuda:0")

    class FakeCudaTensor:
        # The fake driver's device memory (host memory there).
        def __init__(self, array, device=0):
            self.array = np.ascontiguousarray(array)
            self.device = device
            self.ptr = ctypes.c_uint64()
            assert fake.cuMemAlloc_v2(ctypes.byref(self.ptr),
                                      ctypes.c_size_t(self.array.nbytes)) == 0
            ctypes.memmove(self.ptr.value, self.array.ctypes.data,
                           self.array.nbytes)
            self.streams = []
        def __dlpack_device__(self):
            return (_dlpack.CUDA, self.device)
        def __dlpack__(self, stream=None):
            self.streams.append(stream)
            dtype = {np.float32: "f32", np.float64: "f64"}[self.array.dtype.type]
            return _dlpack.make_capsule(self.ptr.value, self.array.shape,
                                        dtype, (_dlpack.CUDA, self.device), self)

    def errors(value):
        try:
            gpu.run({"X": value})
        except dyncc.DynccError as e:
            return str(e)
        return "no error"

    rng = np.random.default_rng(7)
    for rows in (1, 13, 256):
        x = rng.standard_normal((rows, 64)).astype(np.float32)
        want = cpu.run({"X": x})["Y"]
        t = FakeCudaTensor(x)
        copies = fake.fake_cuda_count(b"copies_in")
        out = gpu.run({"X": t}, device_outputs=True)["Y"]
        assert fake.fake_cuda_count(b"copies_in") == copies, "input was copied"
        assert t.streams and t.streams[0] > 2, t.streams
        assert isinstance(out, dyncc.DeviceTensor), out
        assert out.shape == want.shape and out.__dlpack_device__() == (2, 0)
        got = _dlpack.Borrowed(out.__dlpack__())
        assert got.device == (2, 0) and got.shape == want.shape
        assert got.dtype == "f32" and got.data == out.data_ptr
        host = np.frombuffer(ctypes.string_at(got.data, want.nbytes),
                             dtype=np.float32).reshape(want.shape)
        np.testing.assert_allclose(host, want, rtol=1e-6, atol=1e-6)
        got.release()
        # A consumer may name the device it wants: this one, or none other.
        _dlpack.Borrowed(out.__dlpack__(dl_device=(2, 0))).release()
        try:
            out.__dlpack__(dl_device=(2, 1))
            raise AssertionError("exported to another device")
        except BufferError as e:
            assert "output 'Y' is on cuda:0" in str(e), e
        # Host outputs as before, from a device input.
        np.testing.assert_allclose(gpu.run({"X": t})["Y"], want, rtol=1e-6,
                                   atol=1e-6)
        fake.cuMemFree_v2(t.ptr)
    try:
        out.__dlpack__()
        raise AssertionError("a stale output was exported")
    except dyncc.DynccError as e:
        assert "output 'Y' is of an earlier run" in str(e), e

    x = rng.standard_normal((5, 64))
    print(errors(FakeCudaTensor(x)))
    print(errors(FakeCudaTensor(x.astype(np.float32), device=1)))
    # A strided (transposed) view of device memory.
    base = FakeCudaTensor(x.astype(np.float32).T.copy())
    class Strided:
        def __dlpack_device__(self):
            return (_dlpack.CUDA, 0)
        def __dlpack__(self, stream=None):
            m = _dlpack.DLManagedTensor()
            self.keep = (m, (ctypes.c_int64 * 2)(5, 64),
                         (ctypes.c_int64 * 2)(1, 5))
            t = m.dl_tensor
            t.data, t.ndim = base.ptr.value, 2
            t.device = _dlpack.DLDevice(2, 0)
            t.dtype = _dlpack.DLDataType(2, 32, 1)
            t.shape, t.strides = self.keep[1], self.keep[2]
            return _dlpack._new_capsule(ctypes.addressof(m), b"dltensor",
                                        _dlpack._NO_DESTRUCTOR)
    print(errors(Strided()))
    print(len(_dlpack._alive))
""")


def test_cuda_session_dlpack_on_the_fake_driver(tmp_path, linear):
    host_code = tmp_path / "host.so"
    host_code.write_bytes(sections(linear)["cpu.so"])
    env = dict(os.environ, DYNCC_CUDA_DRIVER=str(fake_driver()),
               DYNCC_FAKE_CUDA_HOST_CODE=str(host_code))
    proc = subprocess.run(
        [sys.executable, "-c", CUDA_RUNNER, str(ROOT / "python"), str(linear),
         str(fake_driver())], capture_output=True, text=True, env=env,
        timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "input 'X' has dtype f64, expected f32",
        "input 'X' is on DLPack device 2:1, the session on cuda:0",
        "input 'X' is not contiguous (row-major without gaps); pass "
        ".contiguous()",
        # Every capsule made was released by its consumer.
        "0",
    ]
