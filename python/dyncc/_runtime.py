# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ctypes binding of the run-time's C API."""
import ctypes
import os
from pathlib import Path

import numpy as np

from . import _dlpack
from ._paths import build_dir

_DTYPES = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "bool": np.bool_,
}
try:  # numpy has no bfloat16; ml_dtypes (an onnx dependency) adds it.
    import ml_dtypes
    _DTYPES["bf16"] = ml_dtypes.bfloat16
except ImportError:
    pass


def _numpy_dtype(dtype, name):
    """The numpy dtype of the manifest's `dtype`, for tensor `name`."""
    if dtype not in _DTYPES:
        hint = " (install ml_dtypes for bf16)" if dtype == "bf16" else ""
        raise DynccError(7, f"tensor '{name}' has type {dtype}, which has no "
                            f"numpy dtype here{hint}")
    return _DTYPES[dtype]


class DynccError(RuntimeError):
    """A run-time or compiler error: `status` and the one-line message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def runtime_library() -> Path:
    env = os.environ.get("DYNCC_RUNTIME_LIB")
    return Path(env) if env else build_dir() / "lib" / "libdyncc_runtime.so"


_lib = None


def _api():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(str(runtime_library()))
    c_size, c_char_p, c_void_p = ctypes.c_size_t, ctypes.c_char_p, ctypes.c_void_p
    sigs = {
        "dyncc_last_error": (c_char_p, []),
        "dyncc_artifact_load": (ctypes.c_int, [c_char_p, ctypes.POINTER(c_void_p)]),
        "dyncc_artifact_free": (None, [c_void_p]),
        "dyncc_artifact_model_name": (c_char_p, [c_void_p]),
        "dyncc_artifact_num_targets": (c_size, [c_void_p]),
        "dyncc_artifact_target": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_host_isa": (c_char_p, [c_void_p]),
        "dyncc_artifact_num_inputs": (c_size, [c_void_p]),
        "dyncc_artifact_input_name": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_input_dtype": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_input_rank": (c_size, [c_void_p, c_size]),
        "dyncc_artifact_input_dim": (c_char_p, [c_void_p, c_size, c_size]),
        "dyncc_artifact_num_outputs": (c_size, [c_void_p]),
        "dyncc_artifact_output_name": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_output_dtype": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_output_rank": (c_size, [c_void_p, c_size]),
        "dyncc_artifact_output_dim": (c_char_p, [c_void_p, c_size, c_size]),
        "dyncc_artifact_num_symbols": (c_size, [c_void_p]),
        "dyncc_artifact_symbol_name": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_symbol_min": (ctypes.c_int64, [c_void_p, c_size]),
        "dyncc_artifact_symbol_max": (ctypes.c_int64, [c_void_p, c_size]),
        "dyncc_artifact_symbol_source": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_num_groups": (c_size, [c_void_p]),
        "dyncc_artifact_group_name": (c_char_p, [c_void_p, c_size]),
        "dyncc_artifact_group_kind": (c_char_p, [c_void_p, c_size]),
        "dyncc_session_create": (ctypes.c_int, [c_void_p, c_char_p, ctypes.POINTER(c_void_p)]),
        "dyncc_session_free": (None, [c_void_p]),
        "dyncc_session_set_input": (ctypes.c_int, [c_void_p, c_size, c_void_p,
                                                   ctypes.POINTER(ctypes.c_int64), c_size]),
        "dyncc_session_set_input_device": (ctypes.c_int, [
            c_void_p, c_size, ctypes.c_uint64, ctypes.POINTER(ctypes.c_int64), c_size]),
        "dyncc_session_output_device": (ctypes.c_uint64, [c_void_p, c_size]),
        "dyncc_session_stream": (c_void_p, [c_void_p]),
        "dyncc_session_run": (ctypes.c_int, [c_void_p]),
        "dyncc_session_output_shape": (ctypes.c_int, [c_void_p, c_size,
                                                      ctypes.POINTER(ctypes.c_int64), c_size,
                                                      ctypes.POINTER(c_size)]),
        "dyncc_session_output_size": (c_size, [c_void_p, c_size]),
        "dyncc_session_output_data": (c_void_p, [c_void_p, c_size]),
        "dyncc_session_symbol_value": (ctypes.c_int, [c_void_p, c_size,
                                                      ctypes.POINTER(ctypes.c_int64)]),
        "dyncc_session_group_variant": (c_char_p, [c_void_p, c_size]),
        "dyncc_session_group_reason": (c_char_p, [c_void_p, c_size]),
        "dyncc_session_memory": (ctypes.c_int, [c_void_p, ctypes.POINTER(ctypes.c_uint64),
                                                ctypes.POINTER(ctypes.c_uint64)]),
        "dyncc_session_device": (c_char_p, [c_void_p]),
        "dyncc_session_device_time": (ctypes.c_int, [c_void_p,
                                                     ctypes.POINTER(ctypes.c_double)]),
        "dyncc_session_set_driver_timing": (ctypes.c_int, [c_void_p, ctypes.c_int]),
        "dyncc_session_driver_time": (ctypes.c_int, [
            c_void_p, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_uint64)]),
        "dyncc_session_input_copy_time": (ctypes.c_int, [
            c_void_p, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_uint64)]),
        "dyncc_session_cuda_graphs": (ctypes.c_int, [
            c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
            ctypes.POINTER(ctypes.c_char_p)]),
        "dyncc_session_pinned_inputs": (ctypes.c_int, [
            c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_char_p)]),
        "dyncc_session_force_variant": (ctypes.c_int, [c_void_p, c_size, ctypes.c_int64]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib = lib
    return lib


def _check(status):
    if status != 0:
        raise DynccError(status, _api().dyncc_last_error().decode())


def _str(value):
    return value.decode() if value is not None else None


class Artifact:
    """A loaded .dyncc file (memory-mapped)."""

    def __init__(self, path):
        api = _api()
        handle = ctypes.c_void_p()
        _check(api.dyncc_artifact_load(str(path).encode(), ctypes.byref(handle)))
        self._handle = handle
        h = handle
        self.model = _str(api.dyncc_artifact_model_name(h))
        self.targets = [_str(api.dyncc_artifact_target(h, i))
                        for i in range(api.dyncc_artifact_num_targets(h))]
        # The level of the host code loaded ("x86-64-v4", ...; "" for an
        # artifact whose host code has no levels).
        self.host_isa = _str(api.dyncc_artifact_host_isa(h))
        self.inputs = [
            (_str(api.dyncc_artifact_input_name(h, i)),
             _str(api.dyncc_artifact_input_dtype(h, i)),
             [_str(api.dyncc_artifact_input_dim(h, i, d))
              for d in range(api.dyncc_artifact_input_rank(h, i))])
            for i in range(api.dyncc_artifact_num_inputs(h))]
        self.outputs = [
            (_str(api.dyncc_artifact_output_name(h, i)),
             _str(api.dyncc_artifact_output_dtype(h, i)),
             [_str(api.dyncc_artifact_output_dim(h, i, d))
              for d in range(api.dyncc_artifact_output_rank(h, i))])
            for i in range(api.dyncc_artifact_num_outputs(h))]
        self.symbols = {
            _str(api.dyncc_artifact_symbol_name(h, i)):
                (api.dyncc_artifact_symbol_min(h, i), api.dyncc_artifact_symbol_max(h, i))
            for i in range(api.dyncc_artifact_num_symbols(h))}
        # Symbols that sizes read from data bind in the middle of a run:
        # {name: the op they belong to}.
        self.data_symbols = {
            _str(api.dyncc_artifact_symbol_name(h, i)):
                _str(api.dyncc_artifact_symbol_source(h, i))
            for i in range(api.dyncc_artifact_num_symbols(h))
            if api.dyncc_artifact_symbol_source(h, i)}
        self.groups = [(_str(api.dyncc_artifact_group_name(h, i)),
                        _str(api.dyncc_artifact_group_kind(h, i)))
                       for i in range(api.dyncc_artifact_num_groups(h))]

    def session(self, device="cpu"):
        return Session(self, device)

    def close(self):
        if self._handle:
            _api().dyncc_artifact_free(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Session:
    """One execution context; run() binds shapes, selects variants, runs."""

    def __init__(self, artifact, device="cpu"):
        handle = ctypes.c_void_p()
        _check(_api().dyncc_session_create(artifact._handle, device.encode(),
                                           ctypes.byref(handle)))
        self._artifact = artifact  # keeps the artifact alive
        self._handle = handle
        # The CUDA ordinal, or None on the cpu.
        self._ordinal = None
        if device.startswith("cuda"):
            self._ordinal = int(device[5:]) if len(device) > 5 else 0
        self._runs = 0

    def _bind_device(self, index, name, dtype, value, borrowed):
        """Binds input `index` to the CUDA tensor `value` (a DLPack
        producer) without a copy; the borrowed tensor goes to `borrowed`."""
        if self._ordinal is None:
            raise DynccError(5, f"input '{name}' is a CUDA tensor, but the "
                                "session is on the cpu (pass a host array, "
                                "or create the session on 'cuda:N')")
        stream = _api().dyncc_session_stream(self._handle) or 0
        try:
            capsule = value.__dlpack__(stream=stream)
        except TypeError:  # a producer without the stream argument
            capsule = value.__dlpack__()
        tensor = _dlpack.Borrowed(capsule)
        borrowed.append(tensor)
        kind, device_id = tensor.device
        where = f"input '{name}'"
        if kind not in (_dlpack.CUDA, _dlpack.CUDA_MANAGED) or \
                device_id != self._ordinal:
            raise DynccError(5, f"{where} is on DLPack device {kind}:"
                                f"{device_id}, the session on cuda:"
                                f"{self._ordinal}")
        if tensor.dtype != dtype:
            raise DynccError(5, f"{where} has dtype {tensor.dtype}, expected "
                                f"{dtype}")
        if not tensor.contiguous:
            raise DynccError(5, f"{where} is not contiguous (row-major "
                                "without gaps); pass .contiguous()")
        shape = (ctypes.c_int64 * max(len(tensor.shape), 1))(*tensor.shape)
        _check(_api().dyncc_session_set_input_device(
            self._handle, index, tensor.data, shape, len(tensor.shape)))

    def run(self, inputs, device_outputs=False):
        """inputs: {name: array} or a list in input order; an array is
        anything numpy takes, or a DLPack tensor (`__dlpack__`): a CUDA one
        (torch, cupy) is read in place by a CUDA session on its device.
        Returns {output name: numpy array} (copies, owned by the caller);
        with `device_outputs` on a CUDA session, {output name:
        DeviceTensor}, the session's device memory (`torch.from_dlpack`,
        `cupy.from_dlpack`), valid until the session's next run."""
        api = _api()
        art = self._artifact
        if isinstance(inputs, dict):
            names = [name for name, _, _ in art.inputs]
            unknown = set(inputs) - set(names)
            if unknown:
                raise DynccError(5, f"unknown input '{sorted(unknown)[0]}'")
            ordered = [inputs.get(name) for name in names]
        else:
            ordered = list(inputs)
        keep, borrowed = [], []
        try:
            self._bind(ordered, keep, borrowed)
            self._runs += 1
            _check(api.dyncc_session_run(self._handle))
        finally:
            for tensor in borrowed:
                tensor.release()
        if device_outputs and self._ordinal is not None:
            return {name: DeviceTensor(self, index)
                    for index, (name, _, _) in enumerate(art.outputs)}
        outputs = {}
        for index, (name, dtype, _) in enumerate(art.outputs):
            shape = self._output_shape(index)
            size = api.dyncc_session_output_size(self._handle, index)
            data = api.dyncc_session_output_data(self._handle, index) if size else None
            if size and not data:  # a GPU's copy to the host failed
                raise DynccError(8, api.dyncc_last_error().decode())
            buf = ctypes.string_at(data, size) if size else b""
            outputs[name] = np.frombuffer(
                buf, dtype=_numpy_dtype(dtype, name)).reshape(shape).copy()
        return outputs

    def _output_shape(self, index):
        rank = ctypes.c_size_t()
        dims = (ctypes.c_int64 * 16)()
        _check(_api().dyncc_session_output_shape(self._handle, index, dims, 16,
                                                 ctypes.byref(rank)))
        return tuple(dims[i] for i in range(rank.value))

    def _bind(self, ordered, keep, borrowed):
        api = _api()
        for index, ((name, dtype, _), value) in enumerate(
                zip(self._artifact.inputs, ordered)):
            if value is None:
                continue
            if not isinstance(value, np.ndarray) and \
                    hasattr(value, "__dlpack_device__"):
                kind = value.__dlpack_device__()[0]
                if kind in (_dlpack.CUDA, _dlpack.CUDA_MANAGED):
                    self._bind_device(index, name, dtype, value, borrowed)
                    continue
                if not hasattr(value, "__array__") and \
                        not hasattr(value, "__array_interface__"):
                    value = np.from_dlpack(value)
            # asarray, not ascontiguousarray, which makes a scalar [1].
            array = np.asarray(value, dtype=_numpy_dtype(dtype, name), order="C")
            keep.append(array)
            shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
            _check(api.dyncc_session_set_input(
                self._handle, index, array.ctypes.data_as(ctypes.c_void_p),
                shape, array.ndim))

    @property
    def variants(self):
        """The kernel that last ran for each group."""
        api = _api()
        return [_str(api.dyncc_session_group_variant(self._handle, g))
                for g in range(len(self._artifact.groups))]

    def force_variant(self, group, variant):
        """Runs variant `variant` (its index among the group's variants) of
        group `group` from the next run on, wherever its conditions hold
        (elsewhere the group selects as usual); None restores the usual
        selection. What `dyncc tune` measures with, and how a test runs
        every variant at shapes its table gives to another."""
        _check(_api().dyncc_session_force_variant(
            self._handle, group, -1 if variant is None else variant))

    @property
    def variant_reasons(self):
        """Why each group's kernel ran at the last run's shapes: its variant
        and the tile search's table interval (or conditions) that chose it;
        None for a group that has not run."""
        api = _api()
        return [_str(api.dyncc_session_group_reason(self._handle, g))
                for g in range(len(self._artifact.groups))]

    @property
    def device(self):
        """The session's device: "cpu (N threads)", or the CUDA device, its
        architecture and how many kernels came from a cubin and how many the
        driver compiled from PTX when the artifact was loaded."""
        return _str(_api().dyncc_session_device(self._handle))

    def device_time(self):
        """CUDA sessions: the last run's time on the device in milliseconds
        (events around its steps)."""
        ms = ctypes.c_double()
        _check(_api().dyncc_session_device_time(self._handle, ctypes.byref(ms)))
        return ms.value

    def set_driver_timing(self, enable=True):
        """CUDA sessions: time the host's calls into the driver from the next
        run on, so that a run's host time splits into the run-time's own and
        the driver's (each call then costs two clock reads more). Raises
        DynccError on the cpu."""
        _check(_api().dyncc_session_set_driver_timing(self._handle,
                                                      1 if enable else 0))

    def driver_time(self):
        """The last run's host time inside CUDA driver calls, in
        microseconds, and their count: (0.0, 0) without driver timing."""
        us, calls = ctypes.c_double(), ctypes.c_uint64()
        _check(_api().dyncc_session_driver_time(self._handle, ctypes.byref(us),
                                                ctypes.byref(calls)))
        return us.value, calls.value

    def input_copy_time(self):
        """The last run's host time copying host inputs into page-locked
        memory, in microseconds, and the bytes copied: (0.0, 0) without
        driver timing or pinned inputs. Not part of driver_time()."""
        us, count = ctypes.c_double(), ctypes.c_uint64()
        _check(_api().dyncc_session_input_copy_time(
            self._handle, ctypes.byref(us), ctypes.byref(count)))
        return us.value, count.value

    def cuda_graphs(self):
        """CUDA graphs: {"replays": runs that replayed a graph, "captures":
        graphs captured, "off": why they are off, "" when on}. The second
        run with the same launches (shapes and buffers) captures them, later
        ones replay the graph (dyncc_runtime.h)."""
        replays, captures = ctypes.c_uint64(), ctypes.c_uint64()
        reason = ctypes.c_char_p()
        _check(_api().dyncc_session_cuda_graphs(
            self._handle, ctypes.byref(replays), ctypes.byref(captures),
            ctypes.byref(reason)))
        return {"replays": replays.value, "captures": captures.value,
                "off": _str(reason.value)}

    def pinned_inputs(self):
        """Host inputs through page-locked memory: {"copies": copies to
        the device made from it, "off": why inputs are copied from the
        caller's memory instead, "" when they are not} (dyncc_runtime.h)."""
        copies = ctypes.c_uint64()
        reason = ctypes.c_char_p()
        _check(_api().dyncc_session_pinned_inputs(
            self._handle, ctypes.byref(copies), ctypes.byref(reason)))
        return {"copies": copies.value, "off": _str(reason.value)}

    def symbol_values(self):
        api = _api()
        values = {}
        for i, name in enumerate(self._artifact.symbols):
            v = ctypes.c_int64()
            _check(api.dyncc_session_symbol_value(self._handle, i, ctypes.byref(v)))
            values[name] = v.value
        return values

    def memory(self):
        """The last run's temporaries: `arena_bytes`, what their placement
        needs at that run's shapes, and `live_peak_bytes`, the most bytes of
        them live at one step."""
        arena, peak = ctypes.c_uint64(), ctypes.c_uint64()
        _check(_api().dyncc_session_memory(self._handle, ctypes.byref(arena),
                                           ctypes.byref(peak)))
        return {"arena_bytes": arena.value, "live_peak_bytes": peak.value}

    def close(self):
        if self._handle:
            _api().dyncc_session_free(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class DeviceTensor:
    """An output of a CUDA session's last run, in the session's device
    memory: a DLPack producer (`torch.from_dlpack(t)`, `cupy.from_dlpack(t)`
    alias it, no copy). Valid until the session runs again; exporting it
    after that raises."""

    def __init__(self, session, index):
        self._session = session
        self._index = index
        self._run = session._runs
        self.name, self.dtype, _ = session._artifact.outputs[index]
        self.shape = session._output_shape(index)
        self.data_ptr = _api().dyncc_session_output_device(session._handle,
                                                           index)

    def __dlpack_device__(self):
        return (_dlpack.CUDA, self._session._ordinal)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None,
                   copy=None):
        # The run was waited for: the data is ready on any stream.
        if self._session._runs != self._run:
            raise DynccError(5, f"output '{self.name}' is of an earlier run: "
                                "the session has run since and reuses its "
                                "memory")
        if copy:
            raise BufferError("dyncc's device outputs are exported without "
                              "a copy only")
        if dl_device is not None and tuple(dl_device) != \
                self.__dlpack_device__():
            raise BufferError(f"output '{self.name}' is on cuda:"
                              f"{self._session._ordinal}")
        return _dlpack.make_capsule(self.data_ptr, self.shape, self.dtype,
                                    self.__dlpack_device__(), self._session)

    def __repr__(self):
        return (f"DeviceTensor({self.name!r}, {self.dtype}{list(self.shape)} "
                f"on cuda:{self._session._ordinal})")


def load(path):
    return Artifact(path)
