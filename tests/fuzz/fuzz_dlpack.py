"""Fuzzes DLPack import (python/src/dlpack/import.rs, renderer/src/tensor/strided.rs)
through every Python entry point that takes an array: ``hg.TensorXf(x)``,
``hg.Bitmap(x)``, ``params[key] = x`` and ``load_dict`` with ``x`` as bitmap data.

A case is one producer handed to one entry point, made one of two ways:

- a NumPy array of a random dtype (every kind NumPy has: bool, int8 to uint64,
  float16 to float64, byte-swapped ones, longdouble, complex, datetime, timedelta,
  object, strings, structured) in a random layout: C or Fortran order, transposed,
  sliced with negative steps, broadcast (zero strides), ``as_strided`` views with
  negative, zero and large strides or byte strides that are not a multiple of the
  item size (all inside memory the case owns), unaligned, a field of a structured
  array, read-only, up to 64 dimensions, sometimes behind a ``memoryview``. A
  supported dtype must give NumPy's own ``astype(float32)`` values bit for bit (NaN
  for NaN), an unsupported one a clear error;
- a hand-made capsule: a small Python object whose ``__dlpack__`` returns a PyCapsule
  around a ``DLManagedTensor`` or ``DLManagedTensorVersioned`` built with ctypes:
  null, negative, zero and huge strides, 0 to 40 dimensions and more, broadcasts
  claiming 2^31 to 2^63 elements, shapes whose product overflows, null data with
  elements, odd element types, data pointers split oddly between ``data`` and
  ``byte_offset``, a capsule device other than ``__dlpack_device__`` says, wrong
  capsule names, consumed capsules, unsupported versions, a ``__dlpack__`` raising
  TypeError for reasons other than ``max_version``, or returning something else.
  Every layout that must be read points inside a buffer the case owns; every other
  one must be refused before a byte is read.

The entry points other than ``TensorXf`` have rules of their own (bitmap shapes,
uint8 read as sRGB, the texture's shape), so their result is compared with the same
entry point fed NumPy's C-order copy of the expected array: the same values, or an
error from both. Every capsule's deleter must have run exactly once once the case
is over (a hand-made one counts its calls and overwrites the data it guarded, so a
read after the deleter shows as wrong values; a NumPy one releases its array, whose
reference count must be back where it was). Case ``i`` of seed ``s`` is a pure
function of ``(s, i)``.

The cases run in a child interpreter under a memory limit (RLIMIT_AS) that this
script supervises: a copy with the expected values and TypeError, ValueError or
BufferError (or the producer's own exception) are results; anything else (another
exception, wrong values, a copy where an error is due or the reverse, a deleter run
zero or two times, a dead child, a case running past the time limit) is a finding.

    python tests/fuzz/fuzz_dlpack.py [--execs N] [--seconds S] [--seed S]
        [--case-seconds T] [--mem-mib M]
    python tests/fuzz/fuzz_dlpack.py --seed S --case I      # run case I and show it

Exit status 1 when anything was found.
"""

import ctypes
import gc
import os
import random
import sys
import traceback

import supervision

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

KEY = "shape.bsdf.reflectance.data"
TEX_SHAPE = (4, 4, 3)  # the texture the params entry point assigns to
MAX_NDIM = 32  # heliograph reads host arrays of 0 to 32 dimensions
ISIZE_MAX = 2**63 - 1

SUPPORTED = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64"]
UNSUPPORTED = ["complex64", "complex128", "clongdouble", "longdouble", "datetime64[s]", "datetime64[ns]",
               "timedelta64[ms]", "object", "U3", "S5", "V4", "struct", "StringDType"]
PLAIN = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
         "float64", "complex64", "complex128", "clongdouble", "longdouble", "datetime64[s]", "datetime64[ns]",
         "timedelta64[ms]", "S5", "V4", "U3"}  # plain bytes: any layout over owned memory is safe to read
ENTRIES = ["tensor", "tensor", "tensor", "bitmap", "params", "load_dict"]
# what the other entry points take: float images (and uint8 ones, read as sRGB, for bitmaps)
FOR_IMAGES = {"bitmap": ["float16", "float32", "float64", "uint8"],
              "load_dict": ["float16", "float32", "float64", "uint8"], "params": ["float16", "float32", "float64"]}

# DLPack element types (code, bits) heliograph reads, and their NumPy names
DL_TYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
            (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64", (2, 16): "float16", (2, 32): "float32",
            (2, 64): "float64", (6, 8): "bool"}
DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST = 1, 2, 3


class ProducerError(Exception):
    """What a hostile ``__dlpack__`` raises: heliograph must let it through (wrapped or not)."""


# ---------------------------------------------------------------------------------------
# ctypes: the DLPack records (dlpack.h, 64-bit) and capsules made by hand

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


assert ctypes.sizeof(DLTensor) == 48 and ctypes.sizeof(DLManagedTensorVersioned) == 80

_DELETER_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DESTRUCTOR_T = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# PYFUNCTYPE: the GIL stays held, as the C API needs; raw pointers, so that a capsule
# being destroyed is never touched by a reference count
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _DESTRUCTOR_T)(
    ("PyCapsule_New", ctypes.pythonapi))
_capsule_name = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(("PyCapsule_GetName", ctypes.pythonapi))
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi))

# a capsule keeps a pointer to its name: these live as long as the process
NAMES = {"legacy": b"dltensor", "versioned": b"dltensor_versioned", "used": b"used_dltensor",
         "used_versioned": b"used_dltensor_versioned"}
WRONG_NAMES = [b"", b"DLTENSOR", b"dltensor_", b"dltensor_versione", b"dltensor_versioned_1", b"used_",
               b"numpy", "null"]  # "null": a capsule without a name
USED = {NAMES["used"], NAMES["used_versioned"]}

_RECORDS = {}  # address of a managed record -> Record, while its case runs
_CAPSULES = {}  # address of a hand-made capsule -> Record, until the capsule is destroyed
_CALLBACK_ERRORS = []  # anything odd seen inside a deleter or a capsule destructor


class Record:
    """A managed tensor record made by hand, what it points at, and its deleter calls."""

    def __init__(self, versioned):
        self.managed = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        self.versioned = versioned
        self.keep = []  # shape and strides arrays, the data buffer
        self.guarded = None  # the bytes the tensor shows (overwritten by the deleter)
        self.has_deleter = True
        self.calls = 0
        self.nested = False  # the deleter imports another array into heliograph

    @property
    def address(self):
        return ctypes.addressof(self.managed)


def _on_delete(address):
    try:
        rec = _RECORDS.get(address)
        if rec is None:
            _CALLBACK_ERRORS.append(f"a deleter was called with an unknown pointer {address:#x}")
            return
        rec.calls += 1
        if rec.guarded is not None:
            rec.guarded[...] = 0xA5  # a read after this shows as wrong values
        if rec.nested:
            import numpy as np

            import heliograph as hg

            if not np.array_equal(np.asarray(hg.TensorXf(np.arange(3.0))), np.arange(3.0)):
                _CALLBACK_ERRORS.append("an import inside a deleter gave wrong values")
    except BaseException:  # noqa: BLE001 - must not cross the C boundary; reported by the case
        _CALLBACK_ERRORS.append("a deleter raised:\n" + traceback.format_exc())


def _on_capsule_destroyed(cap):
    """The producer's capsule destructor: deletes the tensor unless a consumer took it."""
    try:
        rec = _CAPSULES.pop(cap, None)
        if rec is None:
            _CALLBACK_ERRORS.append(f"an unknown capsule {cap:#x} was destroyed")
            return
        name = _capsule_name(cap)
        name = ctypes.string_at(name) if name else None
        if name not in USED and rec.has_deleter:
            _on_delete(rec.address)
    except BaseException:  # noqa: BLE001 - as above
        _CALLBACK_ERRORS.append("a capsule destructor raised:\n" + traceback.format_exc())


_DELETER = _DELETER_T(_on_delete)
_DESTRUCTOR = _DESTRUCTOR_T(_on_capsule_destroyed)
_DELETER_ADDRESS = ctypes.cast(_DELETER, ctypes.c_void_p).value


def make_capsule(rec, name):
    cap = _capsule_new(rec.address, name, _DESTRUCTOR)
    _CAPSULES[id(cap)] = rec
    return cap


# ---------------------------------------------------------------------------------------
# values


def rand_values(rng, np, dt, n, finite=False):
    """``n`` values of dtype ``dt`` (native order), with the awkward ones often; only
    finite ones of moderate size with ``finite`` (which bitmaps and textures need)."""
    nrng = np.random.default_rng(rng.getrandbits(64))
    kind = dt.kind
    if finite and kind == "f" and dt.itemsize <= 8:
        exp = nrng.integers(-6, 4 if dt.itemsize == 2 else 9, n)
        out = (nrng.standard_normal(n) * 10.0**exp).astype(dt.newbyteorder("="))
        out[nrng.random(n) < 0.1] = rng.choice([0.0, -0.0, 1.0, 6e-8, 65504.0])
        return out
    if kind == "b":
        return nrng.random(n) < 0.5
    if kind in "iu":
        native = dt.newbyteorder("=")
        if rng.random() < 0.5:
            return nrng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(native)
        info = np.iinfo(native)
        edge = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=native)
        small = nrng.integers(max(info.min, -300), min(info.max, 300), n, endpoint=True).astype(native)
        pick = nrng.random(n) < 0.2
        small[pick] = edge[nrng.integers(0, len(edge), int(pick.sum()))]
        return small
    if kind == "f" and dt.itemsize <= 8:
        native = dt.newbyteorder("=")
        with np.errstate(all="ignore"):  # float16 overflows to inf: wanted
            out = (nrng.standard_normal(n) * 10.0 ** nrng.integers(-8, 9, n)).astype(native)
        special = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 65504.0, 65520.0, 6e-8, 1e-45,
                            1.4e-45, 3.4028235e38, 3.5e38, 1e300, -1e300, 5e-324, 2.0**-149, 2.0**-150,
                            1.0 + 2.0**-24, 1.0 + 2.0**-23 + 2.0**-24], dtype=np.float64)
        with np.errstate(all="ignore"):
            special = special.astype(native)
        pick = nrng.random(n) < 0.25
        out[pick] = special[nrng.integers(0, len(special), int(pick.sum()))]
        raw = nrng.random(n) < 0.15
        bits = nrng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(native)
        out[raw] = bits[raw]
        return out
    if kind in "fc":
        return (nrng.standard_normal(n) * 100).astype(dt)
    if kind in "mM":
        return nrng.integers(-(2**40), 2**40, n).astype(dt)
    if kind == "O":
        return np.array([rng.choice([1, 2.5, None, "x", (1, 2), 1 + 2j]) for _ in range(n)] + [None],
                        dtype=object)[:n]
    if kind == "U":
        return nrng.integers(32, 0x2FF, n * (dt.itemsize // 4), dtype=np.uint32).view(dt)
    if kind in "SV":
        return nrng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).view(dt)
    if kind == "T":
        return np.array([rng.choice(["", "x", "é" * 40, "1.5"]) for _ in range(n)], dtype=dt)
    raise AssertionError(dt)


def rand_dtype(rng, np, entry):
    """(name, dtype): a supported dtype, maybe byte-swapped, or an unsupported one; for
    the entry points other than TensorXf, often one they take (float, or uint8 images)."""
    if rng.random() < 0.85:
        name = rng.choice(SUPPORTED if entry == "tensor" or rng.random() < 0.3 else FOR_IMAGES[entry])
        dt = np.dtype(name)
        if dt.itemsize > 1 and rng.random() < 0.15:
            return name + " byte-swapped", dt.newbyteorder()
        return name, dt
    name = rng.choice(UNSUPPORTED)
    if name == "struct":
        return name, np.dtype([("a", "<f4"), ("b", "u1")])
    if name == "StringDType":
        return name, np.dtypes.StringDType()
    dt = np.dtype(name)
    if dt.itemsize > 1 and name in PLAIN and rng.random() < 0.15:
        return name + " byte-swapped", dt.newbyteorder()
    return name, dt


def is_supported(dt):
    return dt.kind in "biuf" and dt.itemsize <= 8 and dt.fields is None


# ---------------------------------------------------------------------------------------
# NumPy producers


def rand_shape(rng, entry):
    """A shape; for the entry points with rules of their own, usually one they accept."""
    if entry == "params" and rng.random() < 0.7:
        return TEX_SHAPE
    if entry in ("bitmap", "load_dict") and rng.random() < 0.7:
        h, w = rng.choice([1, 2, 3, 5, 8]), rng.choice([1, 2, 4, 7])
        return (h, w) if rng.random() < 0.3 else (h, w, rng.choice([1, 3, 4, 4, 2]))
    k = rng.random()
    if k < 0.02:
        rank = rng.choice([MAX_NDIM - 1, MAX_NDIM, MAX_NDIM + 1, MAX_NDIM + 2, 40, 63, 64])
        shape = [1] * rank
        for _ in range(rng.choice([0, 1, 3, 6])):
            shape[rng.randrange(rank)] = rng.choice([2, 3])
        return tuple(shape)
    if k < 0.04:
        return (rng.choice([64, 31]), rng.choice([64, 17]), 3)
    rank = rng.choice([0, 1, 1, 2, 2, 3, 3, 3, 4, 5, 6])
    return tuple(rng.choice([0, 1, 1, 2, 2, 3, 4, 5, 6]) if rng.random() < 0.97 else 0 for _ in range(rank))


def _strided_buffer(rng, np, dt, shape, elem_strides, finite):
    """A buffer and an ``as_strided`` view of ``shape`` over it (strides in elements, or
    in bytes when ``elem_strides`` is None), reaching only the buffer's own memory."""
    size = dt.itemsize
    if elem_strides is None:
        strides = [rng.choice([1, 3, 5, size + 1, size - 1, 2 * size + 3, -3, 7]) or 1 for _ in shape]
    else:
        strides = [s * size for s in elem_strides]
    # NumPy's bounds check counts an extent of 0 as reaching -stride
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = hi - lo + size + rng.choice([0, 0, 1, 8])
    raw = np.zeros(nbytes + 8, dtype=np.uint8)
    shift = rng.choice([0, 0, 0, 1, 3]) if dt.kind != "O" else 0
    # the element positions the view reaches, filled with fresh values
    offs = np.zeros(shape, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        ax = [1] * len(shape)
        ax[d] = n
        offs = offs + (np.arange(n, dtype=np.int64) * s).reshape(ax)
    start = shift - lo
    if count:
        vals = rand_values(rng, np, dt.newbyteorder("=") if dt.kind not in "OT" else dt, count, finite)
        vals = vals.astype(dt).view(np.uint8).reshape(count, size)
        pos = (start + offs.ravel())[:, None] + np.arange(size)
        raw[pos] = vals
    # NumPy checks that every element it can reach lies inside ``raw``
    return raw, np.ndarray(shape, dtype=dt, buffer=raw, offset=start, strides=strides)


def numpy_case(rng, np, entry):
    """A NumPy array (or a memoryview of one) and the steps that made it."""
    name, dt = rand_dtype(rng, np, entry)
    finite = entry != "tensor" and rng.random() < 0.8

    def vals(n):
        return rand_values(rng, np, dt, n, finite).astype(dt)

    shape = rand_shape(rng, entry)
    count = int(np.prod(shape, dtype=np.int64))
    steps = [f"dtype {name}", f"shape {shape}"]
    safe = name.split()[0] in PLAIN  # bytes only: as_strided and unaligned views are fine
    layouts = ["c", "c", "fortran", "transposed", "sliced", "broadcast", "field"]
    if safe:
        layouts += ["as_strided", "as_strided", "as_strided", "odd_bytes", "unaligned"]
    layout = rng.choice(layouts)
    if dt.kind in "OT" or dt.fields is not None:
        layout = rng.choice(["c", "fortran", "transposed", "sliced"])
    steps.append(f"layout {layout}")
    keep = None
    if layout in ("c", "fortran"):
        x = vals(count).reshape(shape)
        x = np.asfortranarray(x) if layout == "fortran" else x
    elif layout == "transposed":
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        inv = [perm.index(d) for d in range(len(shape))]
        x = vals(count).reshape([shape[p] for p in perm]).transpose(inv)
        steps.append(f"transpose {inv}")
    elif layout == "sliced":
        sl, big = [], []
        many = len(shape) > 6  # keep the base array small
        for n in shape:
            step = rng.choice([1, -1] if many else [1, 2, 3, -1, -2, -3])
            extra = 0 if many else rng.choice([0, 1, 2])
            m = n * abs(step) + extra
            big.append(m)
            first = rng.randrange(extra + 1) if step > 0 else m - 1 - rng.randrange(extra + 1)
            sl.append(slice(first, first + n * step if first + n * step >= 0 else None, step))
        base = vals(int(np.prod(big, dtype=np.int64))).reshape(big)
        x = base[tuple(sl)]
        steps.append(f"slices {sl} of {tuple(big)}")
    elif layout == "broadcast":
        small = tuple(n if rng.random() < 0.5 else 1 for n in shape)
        x = np.broadcast_to(vals(int(np.prod(small, dtype=np.int64))).reshape(small), shape)
        steps.append(f"broadcast from {small}")
    elif layout == "field":
        pad = rng.choice([1, 2, 3, 4, 8])
        sdt = np.dtype([("pad0", "u1", (rng.choice([0, 1, 3]),)), ("x", dt), ("pad1", "u1", (pad,))])
        base = np.zeros(shape, dtype=sdt)
        base["x"] = vals(count).reshape(shape)
        x = base["x"]
        steps.append(f"field x of {sdt}")
    elif layout in ("as_strided", "odd_bytes"):
        if layout == "odd_bytes":
            elem = None
        else:
            elem = []
            for n in shape:
                if n <= 1:
                    elem.append(rng.choice([0, 1, 7, -5, 2**20, -(2**20)]))
                else:
                    elem.append(rng.choice([1, 1, 2, -1, -2, 0, 0, 5, -7, 64, -64,
                                            rng.choice([2**14, 2**16, -(2**16), 2**18]) if n <= 3 else 3]))
        keep, x = _strided_buffer(rng, np, dt, shape, elem, finite)
        steps.append(f"strides {x.strides} (bytes)")
    elif layout == "unaligned":
        shift = rng.choice([1, 2, 3, 5, 7])
        buf = np.zeros(count * dt.itemsize + 8, dtype=np.uint8)
        x = buf[shift:shift + count * dt.itemsize].view(dt).reshape(shape)
        x[...] = vals(count).reshape(shape)
        keep = buf
        steps.append(f"at byte offset {shift}")
    if isinstance(x, (str, bytes)) or not isinstance(x, (np.ndarray, np.generic)):
        x = np.asarray(x, dtype=dt)  # x[()] of a 0-d array of objects or strings: keep an array
    if rng.random() < 0.1 and isinstance(x, np.ndarray) and x.ndim < 64:
        x = x[np.newaxis] if rng.random() < 0.5 else x[..., np.newaxis]
        steps.append("new axis")
    if rng.random() < 0.15 and isinstance(x, np.ndarray):  # (x[()] is a NumPy scalar)
        x = x.view()
        x.flags.writeable = False
        steps.append("read-only")
    if rng.random() < 0.04 and entry != "load_dict" and dt.kind not in "OT" and dt.fields is None:
        # (load_dict takes arrays, lists and tuples, not buffers)
        try:
            x = memoryview(x)
            steps.append("memoryview")
        except (ValueError, TypeError, BufferError):
            pass
    return x, keep, steps


# ---------------------------------------------------------------------------------------
# hand-made capsules


def _count(shape):
    if not isinstance(shape, list):
        return 0  # no shape array
    n = 1
    for e in shape:
        n *= e
    return n


def capsule_spec(rng, entry):
    """The recipe of a hostile producer (plain data, printed by --case)."""
    s = {"entry": entry, "versioned": rng.random() < 0.5, "name": None, "deleter": rng.random() < 0.97,
         "nested_deleter": rng.random() < 0.01, "version": (1, rng.choice([0, 1, 2, 3, 2**32 - 1])),
         "flags": rng.choice([0, 0, 1, 2, 3, 2**64 - 1, 1 << 40]), "claim": "cpu", "device": (DEVICE_CPU, 0),
         "behaviour": "normal", "dtype": rand_dl_type(rng, entry), "ndim": None, "shape": None,
         "finite": entry != "tensor" and rng.random() < 0.8,
         "strides": None, "data": "valid", "offset": "zero", "expect": "copy"}
    if s["versioned"] and rng.random() < 0.04:
        s["version"] = (rng.choice([0, 2, 3, 2**32 - 1]), 0)
    # the layout
    k = rng.random()
    if k < 0.55:
        shape = list(rand_shape(rng, entry))
        if len(shape) > MAX_NDIM:
            s["expect"] = "error"
    elif k < 0.62:  # many dimensions, mostly of extent 1
        rank = rng.choice([5, 8, 16, 31, 32, 32, 33, 34, 40])
        shape = [1] * rank
        for _ in range(rng.choice([0, 2, 5, 12])):
            shape[rng.randrange(rank)] = 2
        if rank > MAX_NDIM:
            s["expect"] = "error"
    elif k < 0.66:  # empty, with any strides and maybe no data at all
        shape = list(rand_shape(rng, "tensor")) or [0]
        shape[rng.randrange(len(shape))] = 0
        s["data"] = rng.choice(["valid", "null"])
        if len(shape) > MAX_NDIM:
            s["expect"] = "error"
    else:
        shape = None
    if shape is not None:
        s["shape"] = shape
        s["ndim"] = len(shape)
        if _count(shape) <= 1 << 16:
            s["strides"] = rand_strides(rng, shape) if rng.random() < 0.8 else None
    else:
        hostile_layout(rng, s)
    # the element type
    if rng.random() < 0.06:
        s["dtype"] = rng.choice([(2, 8, 1), (2, 128, 1), (2, 32, 2), (2, 32, 0), (2, 32, 4), (4, 16, 1),
                                 (5, 64, 1), (5, 128, 1), (3, 64, 1), (6, 1, 1), (6, 16, 1), (0, 1, 1),
                                 (0, 4, 1), (1, 12, 1), (1, 128, 1), (7, 8, 1), (12, 8, 1), (255, 255, 65535),
                                 (2, 0, 1), (0, 0, 0)])
        s["expect"] = "error"
    # where the data lives
    if s["data"] == "valid" and s["expect"] == "copy":
        s["offset"] = rng.choice(["zero", "zero", "split", "wrapping", "unaligned"])
    elif s["data"] == "valid" and rng.random() < 0.08 and _count(s["shape"] or []) > 0:
        s["data"] = "null"
        s["offset"] = rng.choice(["zero", "split"])
    if s["data"] == "null" and _count(s["shape"] or []) > 0:
        s["expect"] = "error"
    # devices
    k = rng.random()
    if k < 0.1:
        s["claim"] = rng.choice(["absent", "raises", "raises_attribute"])
    elif k < 0.16:
        s["claim"] = rng.choice([(DEVICE_CPU, 0), (DEVICE_CPU, 7), (DEVICE_CUDA_HOST, 0), (DEVICE_CPU, -1)])
    elif k < 0.2:
        s["claim"] = rng.choice([(DEVICE_CUDA, 0), (DEVICE_CUDA, 1), (13, 0), (4, 0), (0, 0), (-1, 0),
                                 (2**31 - 1, 0), (14, 3)])
        s["expect"] = "error"
    elif k < 0.23:
        s["claim"] = rng.choice(["junk_str", "junk_short", "junk_long", "junk_float", "junk_big", "junk_list",
                                 "junk_none"])
        s["expect"] = "error"
    if rng.random() < 0.06:
        s["device"] = rng.choice([(DEVICE_CUDA, 0), (13, 0), (4, 0), (0, 0), (DEVICE_CUDA, -1), (-5, 2)])
        s["expect"] = "error"
    elif rng.random() < 0.05:
        s["device"] = rng.choice([(DEVICE_CUDA_HOST, 0), (DEVICE_CPU, 3)])
    # the producer's behaviour
    k = rng.random()
    if k < 0.04:
        s["behaviour"] = "legacy_signature"  # __dlpack__(stream=None): TypeError on max_version
    elif k < 0.07:
        s["behaviour"] = "type_error"  # TypeError whatever it is asked
        s["expect"] = "error"
    elif k < 0.09:
        s["behaviour"] = "type_error_once"  # TypeError on the first call only
    elif k < 0.11:
        s["behaviour"] = "raises"  # ProducerError
        s["expect"] = "error"
    elif k < 0.13:
        s["behaviour"] = rng.choice(["returns_int", "returns_none", "returns_bytes", "returns_tuple"])
        s["expect"] = "error"
    elif k < 0.16:
        s["behaviour"] = "reused"  # the same capsule for a second import: consumed by the first
    elif k < 0.18:
        s["behaviour"] = "consumed"  # a capsule some other consumer took already
        s["expect"] = "error"
    elif k < 0.21:
        s["name"] = rng.choice(WRONG_NAMES)
        s["expect"] = "error"
    elif k < 0.22:
        s["behaviour"] = "nested"  # imports another array into heliograph before answering
    # a version heliograph does not read matters only in a versioned capsule, which these
    # producers make when asked with max_version
    if s["version"][0] != 1 and s["behaviour"] not in ("legacy_signature", "type_error_once"):
        s["expect"] = "error"
    return s


def rand_dl_type(rng, entry):
    """(code, bits, lanes) of a type heliograph reads, often one ``entry`` takes."""
    if entry == "tensor" or rng.random() < 0.3:
        return rng.choice(list(DL_TYPES)) + (1,)
    name = rng.choice(FOR_IMAGES[entry])
    return next(k for k, v in DL_TYPES.items() if v == name) + (1,)


def rand_strides(rng, shape):
    """Strides in elements for a layout that must be read: negative, zero, large."""
    out = []
    for n in shape:
        if n <= 1:
            out.append(rng.choice([0, 1, -1, 5, 2**31, -(2**40), ISIZE_MAX, -(2**63), 2**62]))
        elif n <= 3:
            out.append(rng.choice([1, 2, -1, -3, 0, 0, 4, 2**10, -(2**12), 2**16, -(2**18), 2**20]))
        else:
            out.append(rng.choice([1, 1, 2, -1, -2, 0, 3, -5, 64, 333]))
    return out


def hostile_layout(rng, s):
    """A layout heliograph must refuse before reading anything."""
    kind = rng.choice(["ndim", "ndim", "negative", "null_shape", "broadcast", "broadcast", "overflow",
                       "unreachable", "unreachable"])
    s["layout"] = kind
    s["expect"] = "error"
    if kind == "ndim":
        s["ndim"] = rng.choice([33, 34, 35, 40, 64, 100, 1000, -1, -7, -(2**31), 2**31 - 1])
        s["shape"] = [1] * max(0, min(s["ndim"], 1000))
        s["strides"] = rng.choice([None, [1] * len(s["shape"])])
    elif kind == "negative":
        shape = [rng.choice([1, 2, 3]) for _ in range(rng.choice([1, 2, 3, 4]))]
        shape[rng.randrange(len(shape))] = rng.choice([-1, -2, -(2**31), -(2**63), -5])
        s["shape"], s["ndim"] = shape, len(shape)
        s["strides"] = rng.choice([None, [0] * len(shape), [1] * len(shape)])
    elif kind == "null_shape":
        s["ndim"] = rng.choice([1, 2, 3, 32])
        s["shape"] = "null"
    elif kind == "broadcast":  # one real element claimed to be many (zero strides)
        shape = rng.choice([[2**20, 2**20], [2**16, 2**16], [2**31], [2**32], [2**32 + 1], [2**40],
                            [3, 2**30], [2**62, 4], [2**21, 2**21, 3], [1, 2**32, 1, 1]])
        s["shape"], s["ndim"] = shape, len(shape)
        s["strides"] = [0] * len(shape)
        if _count(shape) > 2**32 and rng.random() < 0.3:
            s["strides"] = rng.choice([None, [1] * len(shape)])  # refused on the count alone
    elif kind == "overflow":
        shape = rng.choice([[2**32, 2**32, 2**32], [2**63 - 1, 2], [2**62, 2**62], [3, 2**63 - 1, 5],
                            [2**31 - 1] * 3, [2**16] * 5])
        s["shape"], s["ndim"] = shape, len(shape)
        s["strides"] = rng.choice([None, [0] * len(shape), [1] * len(shape)])
    else:  # strides whose reach overflows a pointer, whatever the element size
        n = rng.choice([2, 3, 100])
        big = rng.choice([2**63 - 1, -(2**63), 2**62 + 1, -(2**62) - 1, 2**61 + 3])
        while (n - 1) * abs(big) <= ISIZE_MAX:
            n *= 2
        shape = [n] + [rng.choice([1, 2]) for _ in range(rng.choice([0, 1, 2]))]
        strides = [big] + [rng.choice([0, 1]) for _ in shape[1:]]
        if rng.random() < 0.5:
            shape.reverse()
            strides.reverse()
        s["shape"], s["ndim"], s["strides"] = shape, len(shape), strides


class Producer:
    """A DLPack producer without ``__dlpack_device__``."""

    def __init__(self, build, behaviour):
        self.build, self.behaviour, self.calls, self.cap = build, behaviour, [], None

    def __dlpack__(self, **kwargs):
        self.calls.append(sorted(kwargs))
        b = self.behaviour
        if b == "legacy_signature" and set(kwargs) - {"stream"}:
            raise TypeError(f"__dlpack__() got an unexpected keyword argument {sorted(kwargs)[0]!r}")
        if b == "type_error" or (b == "type_error_once" and len(self.calls) == 1):
            raise TypeError("this producer cannot export that array (not a max_version problem)")
        if b == "raises":
            raise ProducerError("the producer failed")
        if b.startswith("returns_"):
            return {"returns_int": 42, "returns_none": None, "returns_bytes": b"dltensor",
                    "returns_tuple": (1, 2)}[b]
        if b == "nested":
            import numpy as np

            import heliograph as hg

            hg.TensorXf(np.ones((2, 2)))
        if b == "reused":
            if self.cap is None:
                self.cap = self.build("max_version" in kwargs and kwargs["max_version"] is not None)
            return self.cap
        return self.build("max_version" in kwargs and kwargs["max_version"] is not None)


class DeviceProducer(Producer):
    """A DLPack producer with a ``__dlpack_device__`` answering ``claim``."""

    def __init__(self, build, behaviour, claim):
        super().__init__(build, behaviour)
        self.claim = claim

    def __dlpack_device__(self):
        c = self.claim
        if c == "raises":
            raise RuntimeError("__dlpack_device__ failed")
        if c == "raises_attribute":
            raise AttributeError("__dlpack_device__")
        if isinstance(c, str) and c.startswith("junk_"):
            return {"junk_str": "cpu", "junk_short": (1,), "junk_long": (1, 0, 0), "junk_float": (1.0, 0),
                    "junk_big": (2**40, 0), "junk_list": [1, 0], "junk_none": None}[c]
        return (1, 0) if c == "cpu" else c


def build_capsule_producer(rng, np, s, records):
    """The producer ``s`` describes; the array it must read as (None for an expected
    error); the records it makes are appended to ``records``."""
    code, bits, lanes = s["dtype"]
    npname = DL_TYPES.get((code, bits)) if lanes == 1 else None
    size = max(1, bits // 8)
    shape = s["shape"]
    expected = None
    raw = None
    target = 0
    # a layout that can be read gets a real buffer even when an error is due (a bad
    # device, name, version...): heliograph reading it by mistake shows as a copy where
    # an error is due, not as a crash
    readable = s.get("layout") is None and npname is not None and isinstance(shape, list) and (
        len(shape) <= MAX_NDIM and _count(shape) <= 1 << 16)
    if readable:
        dt = np.dtype(npname)
        strides = s["strides"] or _compact(shape)
        count = _count(shape)
        lo = sum(min(0, (n - 1) * st) for n, st in zip(shape, strides)) if count else 0
        hi = sum(max(0, (n - 1) * st) for n, st in zip(shape, strides)) if count else 0
        shift = rng.choice([1, 3, 5]) if s["offset"] == "unaligned" else 0
        raw = np.zeros(shift + (hi - lo + 1) * size + 16, dtype=np.uint8)
        start = shift - lo * size  # byte index of element offset 0
        offs = np.zeros(shape, dtype=np.int64)
        for d, (n, st) in enumerate(zip(shape, strides)):
            ax = [1] * len(shape)
            ax[d] = n
            offs = offs + (np.arange(n, dtype=np.int64) * st).reshape(ax)
        pos = (start + offs.ravel() * size)[:, None] + np.arange(size)
        if count:
            vals = rand_values(rng, np, dt, count, s["finite"]).astype(dt).view(np.uint8).reshape(count, size)
            raw[pos] = vals
        # the oracle: the bytes at each element's offset, gathered by hand
        expected = raw[pos].reshape(count, size).copy().view(dt).reshape(shape)
        target = raw.ctypes.data + start
        if s["expect"] != "copy":
            expected = None
    elif s["data"] == "valid":
        raw = np.zeros(64, dtype=np.uint8)  # one real element; nothing past it may be read
        target = raw.ctypes.data

    def build(versioned_asked):
        versioned = s["versioned"] and versioned_asked if s["behaviour"] != "legacy_signature" else False
        if s["name"] is not None or s["behaviour"] == "consumed":
            versioned = s["versioned"]
        rec = Record(versioned)
        _RECORDS[rec.address] = rec
        records.append(rec)
        m = rec.managed
        t = m.dl_tensor
        data, offset = target, 0
        if s["offset"] == "split":
            offset = rng.choice([1, 8, 256, 4096, 2**20])
            data = target - offset
        elif s["offset"] == "wrapping":
            k = rng.choice([1, 64, 2**32])
            data, offset = (target + k) % 2**64, 2**64 - k
        if s["data"] == "null":
            data = 0
        t.data = data or None
        t.byte_offset = offset
        t.device.device_type, t.device.device_id = s["device"]
        t.ndim = s["ndim"]
        t.dtype.code, t.dtype.bits, t.dtype.lanes = s["dtype"]
        if shape == "null" or shape is None:
            t.shape = None
        else:
            arr = (ctypes.c_int64 * max(1, len(shape)))(*[v if v < 2**63 else v - 2**64 for v in shape])
            rec.keep.append(arr)
            t.shape = ctypes.addressof(arr) if shape or rng.random() < 0.5 else None
        if s["strides"] is not None:
            arr = (ctypes.c_int64 * max(1, len(s["strides"])))(*s["strides"])
            rec.keep.append(arr)
            t.strides = ctypes.addressof(arr)
        rec.keep.append(raw)
        if readable:
            rec.guarded = raw
        rec.has_deleter = s["deleter"]
        rec.nested = s["nested_deleter"]
        m.deleter = _DELETER_ADDRESS if s["deleter"] else None
        m.manager_ctx = 12345
        if versioned:
            m.version.major, m.version.minor = s["version"]
            m.flags = s["flags"]
        if s["name"] is not None:
            return make_capsule(rec, None if s["name"] == "null" else s["name"])
        name = NAMES["versioned" if versioned else "legacy"]
        cap = make_capsule(rec, name)
        if s["behaviour"] == "consumed":
            assert _capsule_set_name(cap, NAMES["used_versioned" if versioned else "used"]) == 0
            if rec.has_deleter:
                _on_delete(rec.address)  # what the consumer that took it did
        return cap

    if s["claim"] == "absent":
        prod = Producer(build, s["behaviour"])
    else:
        prod = DeviceProducer(build, s["behaviour"], s["claim"])
    return prod, expected


def _compact(shape):
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return list(reversed(out))


# ---------------------------------------------------------------------------------------
# entry points and checks


class Context:
    """What a worker keeps between cases: a scene whose texture the params case sets."""

    def __init__(self, hg, np):
        self.scene = hg.load_dict(texture_dict(np.zeros(TEX_SHAPE, np.float32)))
        self.params = hg.traverse(self.scene)


def texture_dict(x):
    return {"type": "scene", "shape": {"type": "rectangle", "bsdf": {"type": "diffuse",
            "reflectance": {"type": "bitmap", "data": x}}}}


def apply(hg, np, ctx, entry, x):
    """Hands ``x`` to ``entry``: ("ok", float32 values) or ("error", exception type, message)."""
    try:
        if entry == "tensor":
            out = np.array(hg.TensorXf(x))
        elif entry == "bitmap":
            out = np.array(hg.Bitmap(x))
        elif entry == "params":
            ctx.params[KEY] = x
            out = np.array(ctx.params[KEY])
        else:
            out = np.array(hg.traverse(hg.load_dict(texture_dict(x)))[KEY])
        return ("ok", out)
    except Exception as e:  # noqa: BLE001 - classified by the caller
        return ("error", type(e), str(e)[:300])


def same_values(np, got, want):
    """Equal shapes, element types and values, bit for bit, NaN matching any NaN. Every
    entry point gives float32, except a Bitmap of 8-bit data, which stays uint8 (as
    Mitsuba's does)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype == np.uint8:
        return bool(np.array_equal(got, want))
    if got.dtype != np.float32:
        return False
    g, w = np.ascontiguousarray(got).view(np.uint32), np.ascontiguousarray(want).view(np.uint32)
    return bool(np.all((g == w) | (np.isnan(got) & np.isnan(want))))


CLEAN = (TypeError, ValueError, BufferError)


class Finding(Exception):
    pass


class _Forward:
    """A NumPy array behind a plain DLPack producer, so that the oracle of a hand-made
    capsule takes the same path through heliograph as the capsule (a Bitmap keeps a
    NumPy array's 8-bit data as uint8, and reads other producers' as linear floats)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def check(hg, np, ctx, entry, out, expected, producer_error=False, producer=False):
    """Raises Finding unless ``out`` is what heliograph owes for an array that reads as
    ``expected`` (None: an error is due); ``producer``: ``out`` came from a DLPack
    producer that is not a NumPy array."""
    allowed = CLEAN + ((ProducerError,) if producer_error else ())
    if expected is None:
        if out[0] == "ok":
            raise Finding(f"a copy of shape {out[1].shape} where an error is due")
        if not issubclass(out[1], allowed):
            raise Finding(f"{out[1].__name__} (not a clean error): {out[2]}")
        return "error"
    if entry == "tensor":
        with np.errstate(all="ignore"):
            want = ("ok", np.asarray(expected).astype(np.float32))
    else:
        copy = expected.astype(expected.dtype.newbyteorder("="), order="C")
        want = apply(hg, np, ctx, entry, _Forward(copy) if producer else copy)
    if out[0] == "ok" and want[0] == "ok":
        if not same_values(np, out[1], want[1]):
            bad = f"got {out[1].dtype} of shape {out[1].shape}, want {want[1].dtype} of shape {want[1].shape}"
            if out[1].shape == want[1].shape and out[1].dtype == want[1].dtype:
                diff = np.argwhere(~((out[1] == want[1]) | (np.isnan(out[1]) & np.isnan(want[1]))))
                i = tuple(diff[0])
                bad = f"first difference at {i}: got {out[1][i]!r}, want {want[1][i]!r}"
            raise Finding(f"wrong values from {entry}: {bad}")
        return "copy"
    if out[0] == "ok":
        raise Finding(f"a copy where NumPy's C-order copy of the same array gives {want[1].__name__}: {want[2]}")
    if want[0] == "ok":
        raise Finding(f"{out[1].__name__} where a copy is due: {out[2]}")
    if not issubclass(out[1], allowed):
        raise Finding(f"{out[1].__name__} (not a clean error): {out[2]}")
    return "error"


def make_case(seed, i):
    """Case ``i`` of run ``seed``: ('numpy', steps) or ('capsule', spec), and its rng."""
    rng = random.Random(f"{seed}:{i}")
    entry = rng.choice(ENTRIES)
    if rng.random() < 0.5:
        return rng, "numpy", entry
    return rng, "capsule", capsule_spec(rng, entry)


def run_case(seed, i, ctx, show=False):
    """Runs case ``i``; returns (code, deleters checked) or raises Finding."""
    import numpy as np

    import heliograph as hg

    rng, kind, what = make_case(seed, i)
    del _CALLBACK_ERRORS[:]
    if kind == "numpy":
        entry = what
        with np.errstate(all="ignore"):
            x, keep, steps = numpy_case(rng, np, entry)
        if show:
            print(f"numpy producer -> {entry}: " + "; ".join(steps))
        expected = None
        arr = np.asarray(x)  # (x may be a memoryview or a scalar: x[()] of a 0-d array)
        if is_supported(arr.dtype) and arr.ndim <= MAX_NDIM:
            expected = arr
        refs = sys.getrefcount(x)
        out = apply(hg, np, ctx, entry, x)
        if isinstance(x, np.ndarray) and sys.getrefcount(x) != refs:
            gc.collect()
            if sys.getrefcount(x) != refs:
                raise Finding(f"the array's reference count went from {refs} to {sys.getrefcount(x)}: its "
                              "capsule was not released")
        code = check(hg, np, ctx, entry, out, expected, producer=not isinstance(x, np.ndarray))
        del keep
        return "numpy-" + code, 0
    s = what
    if show:
        print(f"capsule producer -> {s['entry']}: {s}")
    records = []
    prod, expected = build_capsule_producer(rng, np, s, records)
    out = apply(hg, np, ctx, s["entry"], prod)
    code = check(hg, np, ctx, s["entry"], out, expected, producer_error=s["behaviour"] == "raises",
                 producer=True)
    if s["behaviour"] == "reused" and out[0] == "ok":
        again = apply(hg, np, ctx, s["entry"], prod)
        if again[0] == "ok" or not issubclass(again[1], CLEAN):
            raise Finding(f"a consumed capsule imported again gave {again[0]} {again[1:]}")
    calls = len(prod.calls)
    if calls > (4 if s["behaviour"] == "reused" else 2):
        raise Finding(f"__dlpack__ was called {calls} times")
    del prod
    if any(r.calls != int(r.has_deleter) for r in records):
        gc.collect()
    for r in records:
        _RECORDS.pop(r.address, None)
    if _CALLBACK_ERRORS:
        raise Finding("; ".join(_CALLBACK_ERRORS))
    for r in records:
        if r.calls != int(r.has_deleter):
            raise Finding(f"a deleter ran {r.calls} times (expected {int(r.has_deleter)})")
    return "capsule-" + code, len(records)


def runner(seed):
    """The worker's case function (after the memory limit: imports heliograph)."""
    import numpy as np

    import heliograph as hg

    hg.set_progress(False)
    ctx = Context(hg, np)
    return lambda i: run_case(seed, i, ctx)


CODES = ["numpy-copy", "numpy-error", "capsule-copy", "capsule-error"]


def main():
    args = supervision.parse_args(__doc__)
    if args.worker:
        supervision.serve(args.worker[0], args.worker[1], args.mem_mib, lambda: runner(args.seed),
                          reported=(Finding,))
        return 0
    if args.case is not None:
        import numpy as np

        import heliograph as hg

        supervision.limit_memory(args.mem_mib)  # the broadcast cases rely on it: their allocation must fail
        try:
            print(run_case(args.seed, args.case, Context(hg, np), show=True)[0])
        except Finding as e:
            print(f"finding: {e}")
            return 1
        return 0
    counts, deleters, findings, nxt, secs = supervision.supervise(
        "fuzz_dlpack", __file__, args, CODES, "a finding (see {log})")
    print(f"fuzz_dlpack: seed {args.seed} executions {nxt} in {secs:.0f} s ({nxt / secs:.0f}/s): "
          f"NumPy arrays {counts['numpy-copy']} copied, {counts['numpy-error']} errors; hand-made capsules "
          f"{counts['capsule-copy']} copied, {counts['capsule-error']} errors, {deleters} deleters run once; "
          f"{len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
