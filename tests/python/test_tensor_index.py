"""The views CUDA indexing reads and writes, checked without a GPU: for thousands of
random basic indices, the (offset, shape, strides) that heliograph computes, laid over
a NumPy array with as_strided, names the same elements as NumPy's own ``a[index]``;
bad indices raise NumPy's exception types with messages naming what is wrong."""

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import heliograph as hg
from heliograph import _native

RNG = np.random.default_rng(29)


def _bound(n):
    """A slice bound: absent, in range, negative, or far out of range."""
    return RNG.choice([None, int(RNG.integers(-n - 3, n + 4)), 10**30, -(10**30)], p=[0.3, 0.6, 0.05, 0.05])


def _random_index(shape):
    """A basic index of up to len(shape) ints/slices, maybe one '...', some None. The
    ints are in range for the axis they were drawn for, which a '...' may change."""
    taken = int(RNG.integers(0, len(shape) + 1))
    items = []
    for axis in range(taken):
        n = shape[axis]
        if n > 0 and RNG.random() < 0.35:
            items.append(int(RNG.integers(-n, n)))
        else:
            step = RNG.choice([None, 1, 2, 3, -1, -2, -5, 10**20])
            items.append(slice(_bound(n), _bound(n), step))
    if RNG.random() < 0.4:
        items.insert(int(RNG.integers(0, len(items) + 1)), Ellipsis)
    for _ in range(int(RNG.integers(0, 3))):
        items.insert(int(RNG.integers(0, len(items) + 1)), None)
    if len(items) == 1 and RNG.random() < 0.5:
        return items[0]
    return tuple(items)


def _apply(a, index):
    offset, shape, strides = _native._index_view(a.shape, index)
    flat = a.reshape(-1)
    return as_strided(flat[offset:], shape=shape, strides=[s * a.itemsize for s in strides])


def _view_reach(a, index):
    """The element numbers a view names, checked to lie inside the array."""
    offset, shape, strides = _native._index_view(a.shape, index)
    if 0 in shape:
        return
    lo = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    hi = offset + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    assert 0 <= lo and hi < a.size, (index, offset, shape, strides)


@pytest.mark.parametrize("shape", [(), (7,), (0,), (4, 5), (3, 0, 2), (2, 3, 4, 5), (6, 1, 3)])
def test_views_name_the_elements_numpy_indexing_names(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    checked = 0
    for _ in range(600):
        index = _random_index(shape)
        try:
            want = a[index]
        except IndexError as e:  # an int out of range once '...' moved it to another axis
            with pytest.raises(IndexError, match="out of bounds for axis"):
                _native._index_view(a.shape, index)
            assert "out of bounds" in str(e)
            continue
        checked += 1
        _view_reach(a, index)
        got = _apply(a, index)
        assert got.shape == np.shape(want), index
        np.testing.assert_array_equal(got, want, err_msg=repr(index))
    assert checked > 400


@pytest.mark.parametrize("index", [
    0, -1, (1, 2), (Ellipsis, 0), (None, 1, None), slice(None, None, -1), (slice(1, None, 2), Ellipsis, -2),
    (), Ellipsis, np.int64(2), (np.int32(-3), slice(np.int64(1), None)), np.array(1),
])
def test_named_indices_match_numpy(index):
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    np.testing.assert_array_equal(_apply(a, index), a[index])


@pytest.mark.parametrize("index, exc, message", [
    (3, IndexError, "index 3 is out of bounds for axis 0 with size 3"),
    ((0, -5), IndexError, "index -5 is out of bounds for axis 1 with size 4"),
    ((0, 0, 5), IndexError, "index 5 is out of bounds for axis 2 with size 5"),
    (10**30, IndexError, "out of bounds for axis 0 with size 3"),
    ((0, 0, 0, 0), IndexError, "the tensor is 3-dimensional, but 4 were indexed"),
    ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
    (slice(None, None, 0), ValueError, "slice step cannot be zero"),
    (slice(0.5, None), TypeError, "slice indices must be integers"),
    (1.5, IndexError, "only ints, slices .* are valid indices, got float"),
    ("a", IndexError, "valid indices, got str"),
    ([0, 2], IndexError, "integer-array \\(advanced\\) indexing by a list is not supported; supported: ints, slices"),
    (np.array([0, 2]), IndexError, "advanced\\) indexing by a ndarray is not supported"),
    ((0, [1]), IndexError, "advanced"),
    (np.ones(3, bool), ValueError, "a host mask \\(ndarray\\) cannot index a CUDA tensor without a copy"),
    (True, IndexError, "boolean scalar index is not supported"),
])
def test_bad_indices_raise_numpys_exception_types(index, exc, message):
    a = np.zeros((3, 4, 5), np.float32)
    with pytest.raises(exc, match=message):
        _native._index_view(a.shape, index)
    if exc is not ValueError and not isinstance(index, (list, np.ndarray, bool, tuple, str, float)):
        with pytest.raises(exc):  # NumPy agrees on the kind of error
            a[index]


def test_a_host_tensor_mask_is_refused_for_a_cuda_index():
    with pytest.raises(ValueError, match="a host mask \\(a CPU TensorXf\\)"):
        _native._index_view((3,), hg.TensorXf(np.ones(3, np.float32)))


def test_host_tensors_still_index_and_assign_with_numpy():
    a = RNG.uniform(0, 1, (6, 5, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    for index in [(slice(None, None, -2), 1), (None, Ellipsis, -1), (2, slice(1, 4), None)]:
        r = t[index]
        assert isinstance(r, hg.TensorXf) and r.device == "cpu"
        np.testing.assert_array_equal(r.numpy(), a[index])
    mask = hg.TensorXf((a[..., 0] > 0.5).astype(np.float32))
    t[mask] = hg.TensorXf(np.array([1, 2, 3], np.float32))
    want = a.copy()
    want[a[..., 0] > 0.5] = [1, 2, 3]
    np.testing.assert_array_equal(t.numpy(), want)
    with pytest.raises(ValueError, match="could not broadcast"):
        t[:2] = np.ones((3, 5, 3))
