# Part of dyncc, under the Apache License v2.0 with LLVM Exceptions.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DLPack (https://dmlc.github.io/dlpack/latest/) in pure ctypes: reading the
`dltensor` capsule a producer (torch, cupy, jax, numpy) hands over, and
making one for a CUDA session's outputs, so that `torch.from_dlpack(out)`
or `cupy.from_dlpack(out)` sees the session's device memory without a
copy. Only the unversioned (0.x) ABI is produced; both are read."""
import ctypes

# DLDeviceType.
CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13

# DLDataTypeCode per manifest dtype: (code, bits).
_CODES = {
    "i8": (0, 8), "i16": (0, 16), "i32": (0, 32), "i64": (0, 64),
    "u8": (1, 8), "u16": (1, 16), "u32": (1, 32), "u64": (1, 64),
    "f16": (2, 16), "f32": (2, 32), "f64": (2, 64),
    "bf16": (4, 16), "bool": (6, 8),
}
_NAMES = {value: key for key, value in _CODES.items()}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor),
                            ("manager_ctx", ctypes.c_void_p),
                            ("deleter", _Deleter)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


_VersionedDeleter = ctypes.CFUNCTYPE(
    None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [("version", DLPackVersion),
                                     ("manager_ctx", ctypes.c_void_p),
                                     ("deleter", _VersionedDeleter),
                                     ("flags", ctypes.c_uint64),
                                     ("dl_tensor", DLTensor)]

# Capsule names: the capsule keeps a pointer to its name, which must live as
# long as it does.
_LEGACY, _VERSIONED = b"dltensor", b"dltensor_versioned"
_USED = {_LEGACY: b"used_dltensor", _VERSIONED: b"used_dltensor_versioned"}

# The capsule API, as prototypes of our own (ctypes.pythonapi's attributes
# are shared with every other user of ctypes).
_api = ctypes.pythonapi
_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object,
                                 ctypes.c_char_p)(("PyCapsule_GetPointer", _api))
_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _api))
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p,
                                 ctypes.c_char_p, _Destructor)(
    ("PyCapsule_New", _api))


class Borrowed:
    """A producer's tensor, read from its capsule: `data` (byte offset
    applied), `shape`, `dtype` (a manifest dtype name, or a description),
    `device` ((type, id)), `contiguous`. release() hands it back."""

    def __init__(self, capsule):
        if _is_valid(capsule, _VERSIONED):
            name, kind = _VERSIONED, DLManagedTensorVersioned
        elif _is_valid(capsule, _LEGACY):
            name, kind = _LEGACY, DLManagedTensor
        else:
            raise TypeError("not a DLPack capsule (its name is neither "
                            "'dltensor' nor 'dltensor_versioned')")
        self._managed = kind.from_address(
            _get_pointer(capsule, name))
        # Consumed: the capsule's destructor must not free it now.
        _set_name(capsule, _USED[name])
        t = self._managed.dl_tensor
        self.device = (t.device.device_type, t.device.device_id)
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        code = (t.dtype.code, t.dtype.bits)
        self.dtype = (_NAMES.get(code, f"DLPack type code {code[0]}, "
                                       f"{code[1]} bits")
                      if t.dtype.lanes == 1 else f"{t.dtype.lanes} lanes")
        self.data = (t.data or 0) + t.byte_offset
        self.contiguous = True
        if t.strides:
            expected = 1
            for d in reversed(range(t.ndim)):
                if self.shape[d] != 1 and t.strides[d] != expected:
                    self.contiguous = False
                expected *= self.shape[d]

    def release(self):
        managed, self._managed = self._managed, None
        if managed is not None and managed.deleter:
            managed.deleter(ctypes.pointer(managed))


# What the capsules this module makes keep alive, by DLManagedTensor address.
_alive = {}


def _delete(pointer):
    _alive.pop(ctypes.addressof(pointer.contents), None)


_DELETE = _Deleter(_delete)


# The capsule API on a raw pointer: a destructor's capsule is being freed
# and must not become a Python reference again.
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                  ctypes.c_char_p)(("PyCapsule_IsValid", _api))
_get_pointer_raw = ctypes.PYFUNCTYPE(
    ctypes.c_void_p, ctypes.c_void_p,
    ctypes.c_char_p)(("PyCapsule_GetPointer", _api))


def _destroy(capsule):
    # A capsule never consumed still owns its tensor.
    if _is_valid_raw(capsule, _LEGACY):
        _alive.pop(_get_pointer_raw(capsule, _LEGACY), None)


_DESTROY = _Destructor(_destroy)
_NO_DESTRUCTOR = ctypes.cast(None, _Destructor)


def make_capsule(data, shape, dtype, device, owner):
    """A `dltensor` capsule over `data` (an address) of `shape` and manifest
    dtype `dtype` on `device` ((type, id)), compact and row-major; `owner`
    is kept alive until the consumer deletes the tensor."""
    managed = DLManagedTensor()
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    t = managed.dl_tensor
    t.data = data or None
    t.device = DLDevice(*device)
    t.ndim = len(shape)
    code, bits = _CODES[dtype]
    t.dtype = DLDataType(code, bits, 1)
    t.shape = dims
    t.strides = None
    t.byte_offset = 0
    managed.deleter = _DELETE
    _alive[ctypes.addressof(managed)] = (managed, dims, owner)
    return _new_capsule(ctypes.addressof(managed), _LEGACY, _DESTROY)
