"""Reads a DLPack capsule with ctypes (name, version, flags, DLTensor fields) without
consuming it, and hands a pre-made capsule to a consumer (``CapsuleHolder``).

Layouts from dlpack.h (64-bit): DLTensor 48 bytes; DLManagedTensor = {DLTensor, ctx,
deleter}; DLManagedTensorVersioned = {version, ctx, deleter, flags, DLTensor}.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Optional, Tuple

FLAG_READ_ONLY = 1
FLAG_IS_COPIED = 2
NAMES = ("dltensor", "dltensor_versioned", "used_dltensor", "used_dltensor_versioned")


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


assert ctypes.sizeof(DLTensor) == 48 and ctypes.sizeof(DLManagedTensorVersioned) == 80

_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_name(cap: Any) -> Optional[str]:
    """The DLPack name the capsule carries now (None: not a DLPack capsule)."""
    for name in NAMES:
        if _is_valid(cap, name.encode()):
            return name
    return None


@dataclass
class CapsuleInfo:
    """What an unconsumed capsule describes."""

    name: str
    version: Optional[Tuple[int, int]]  # versioned capsules only
    flags: Optional[int]  # versioned capsules only
    data: int
    device: Tuple[int, int]
    dtype: Tuple[int, int, int]  # (code, bits, lanes)
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]]
    byte_offset: int
    has_deleter: bool


def inspect(cap: Any) -> CapsuleInfo:
    """Reads an unconsumed ``dltensor``/``dltensor_versioned`` capsule (does not consume it)."""
    name = capsule_name(cap)
    if name not in ("dltensor", "dltensor_versioned"):
        raise ValueError(f"not an unconsumed DLPack capsule (name {name!r})")
    ptr = _get_pointer(cap, name.encode())
    version = flags = None
    if name == "dltensor_versioned":
        m = DLManagedTensorVersioned.from_address(ptr)
        version, flags = (int(m.version.major), int(m.version.minor)), int(m.flags)
    else:
        m = DLManagedTensor.from_address(ptr)
    t = m.dl_tensor
    nd = int(t.ndim)
    shape = tuple(int(t.shape[i]) for i in range(nd))
    strides = tuple(int(t.strides[i]) for i in range(nd)) if t.strides else None
    return CapsuleInfo(name, version, flags, int(t.data or 0), (int(t.device.device_type), int(t.device.device_id)),
                       (int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes)), shape, strides,
                       int(t.byte_offset), bool(m.deleter))


def compact_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """C-order strides in elements."""
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= max(n, 1)
    return tuple(reversed(out))


class CapsuleHolder:
    """Hands out a capsule made earlier, to a consumer that wants an object with __dlpack__."""

    def __init__(self, cap: Any, device: Tuple[int, int]):
        self.cap, self.device, self.calls = cap, device, []

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.device

    def __dlpack__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self.cap


# the capsule keeps a pointer to its name, so the names must outlive every capsule
_USED = {"dltensor": b"used_dltensor", "dltensor_versioned": b"used_dltensor_versioned"}
_set_name = ctypes.pythonapi.PyCapsule_SetName
_set_name.restype = ctypes.c_int
_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # a CFUNCTYPE call releases the GIL


def consume_on_another_thread(cap: Any) -> Tuple[int, ...]:
    """Consumes ``cap`` as a consumer would (renames it ``used_*``, so its destructor does
    nothing) and calls the producer's deleter from a new thread, without the GIL held
    during the call. Returns the capsule's shape, read before the deleter ran."""
    import threading

    name = capsule_name(cap)
    if name not in _USED:
        raise ValueError(f"not an unconsumed DLPack capsule (name {name!r})")
    shape = inspect(cap).shape
    ptr = _get_pointer(cap, name.encode())
    record = DLManagedTensorVersioned if name == "dltensor_versioned" else DLManagedTensor
    deleter = record.from_address(ptr).deleter
    assert _set_name(cap, _USED[name]) == 0
    errors = []

    def run() -> None:
        try:
            _DELETER(deleter)(ptr)
        except BaseException as e:  # noqa: BLE001 - reported to the caller's thread
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "the deleter did not return"
    if errors:
        raise errors[0]
    return shape
