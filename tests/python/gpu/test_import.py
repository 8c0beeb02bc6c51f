"""Import: a texture another framework has just written on its own stream, used by the next
render. heliograph passes its render stream to ``x.__dlpack__`` so the producer orders its
pending writes first. The truth: a render of the same texture uploaded from NumPy with the
same seed (the CUDA backend is deterministic: identical bits).

The producers write *late*: a spin kernel runs on their stream before the write, so an
import that does not wait for the producer reads the previous texture.
"""

import numpy as np
import pytest

import heliograph as hg

from .common import KEY, frame_colour

FRAMES = 200
SPIN_MS = 2.0


def _spin_cycles(torch, ms):
    s = torch.cuda.Stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s):
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
    end.synchronize()
    return max(1, int(10_000_000 * ms / max(start.elapsed_time(end), 1e-3)))


def _reference(seed, i):
    seed.set_texture(seed.texture(i))
    return seed.render(seed=i).numpy()


def _check_frames(seed, write, label):
    """write(i) sets KEY from a framework-made texture of frame_colour(i), returns nothing."""
    wrong = []
    for i in range(FRAMES):
        write(i)
        seed.params.update()
        got = seed.render(seed=i).numpy()
        if not np.array_equal(got, _reference(seed, i)):
            wrong.append(i)
    assert not wrong, f"{label}: {len(wrong)} of {FRAMES} renders used a texture the producer had not written yet: {wrong[:10]}"


def test_torch_texture_written_on_a_side_stream(make_seed, torch):
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("this PyTorch has no torch.cuda._sleep")
    seed = make_seed(res=64, spp=16)
    cycles = _spin_cycles(torch, SPIN_MS)
    s = torch.cuda.Stream()
    h, w, _ = seed.tex_shape

    def write(i):
        c = frame_colour(i)
        with torch.cuda.stream(s):
            torch.cuda._sleep(cycles)  # the write below lands ~2 ms late
            x = torch.empty((h, w, 3), device="cuda")
            for ch in range(3):
                x[..., ch].fill_(float(c[ch]))
            # inside the `with`: torch orders heliograph's stream after *its current* stream
            seed.params[KEY] = x

    _check_frames(seed, write, "torch side stream")


def test_jax_texture_from_a_late_computation(make_seed, jax):
    jnp = jax.numpy
    seed = make_seed(res=64, spp=16)
    shape = seed.tex_shape
    a = jnp.full((4096, 4096), 1e-3, jnp.float32)

    @jax.jit
    def make(c, a):
        # a 4096^3 matmul first (~ms), so the texture is written late on JAX's stream
        return jnp.broadcast_to(c, shape) + 0.0 * jnp.sum(a @ a)

    make(jnp.asarray(frame_colour(0)), a).block_until_ready()

    def write(i):
        seed.params[KEY] = make(jnp.asarray(frame_colour(i)), a)

    _check_frames(seed, write, "JAX")


def test_cupy_texture_written_on_its_stream(make_seed, cupy):
    seed = make_seed(res=64, spp=16)
    s = cupy.cuda.Stream(non_blocking=True)
    big = cupy.full((2048, 2048), 1e-3, cupy.float32)

    def write(i):
        with s:
            x = cupy.broadcast_to(cupy.asarray(frame_colour(i)), seed.tex_shape) + 0.0 * (big @ big).sum()
            x = cupy.ascontiguousarray(x, dtype=cupy.float32)
            seed.params[KEY] = x

    _check_frames(seed, write, "CuPy")


def _to_device(fw, producer, a):
    if producer == "torch":
        return fw.from_numpy(np.ascontiguousarray(a)).cuda()
    if producer == "jax":
        return fw.device_put(a, fw.devices("gpu")[0])
    return fw.asarray(a)


@pytest.mark.parametrize("producer", ["torch", "jax", "cupy"])
def test_tensorxf_of_a_cuda_array_is_a_cuda_tensor(make_seed, request, producer):
    fw = request.getfixturevalue(producer)
    a = np.random.default_rng(1).random((33, 17, 3)).astype(np.float32)
    t = hg.TensorXf(_to_device(fw, producer, a))
    assert t.device == "cuda:0" and t.__dlpack_device__() == (2, 0)
    assert t.shape == (33, 17, 3) and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), a)
    # and it is a texture like any other, as a TensorXf or as the framework's array
    seed = make_seed(res=64, spp=16)
    tex = np.broadcast_to(a[:1, :1], seed.tex_shape).astype(np.float32)
    seed.set_texture(tex)
    ref = seed.render(seed=5).numpy()
    seed.set_texture(hg.TensorXf(_to_device(fw, producer, tex)))
    np.testing.assert_array_equal(seed.render(seed=5).numpy(), ref)
    seed.set_texture(seed.texture(9))
    seed.set_texture(_to_device(fw, producer, tex))
    np.testing.assert_array_equal(seed.render(seed=5).numpy(), ref)


def _bad_inputs(torch, shape):
    h, w, c = shape
    return [
        ("int32", torch.zeros((h, w, c), dtype=torch.int32, device="cuda"), (TypeError, ValueError)),
        ("complex64", torch.zeros((h, w, c), dtype=torch.complex64, device="cuda"), (TypeError, ValueError)),
        ("bigger", torch.zeros((h + 1, w, c), device="cuda"), (ValueError,)),
        ("rank 4", torch.zeros((1, h, w, c), device="cuda"), (ValueError,)),
    ]


def test_refused_cuda_textures_name_the_key_and_change_nothing(make_seed, torch):
    seed = make_seed(res=32, spp=8)
    seed.set_texture(seed.texture(7))
    before = seed.render(seed=2).numpy()
    old = np.asarray(seed.params[KEY])
    shape = seed.tex_shape
    for label, x, excs in _bad_inputs(torch, shape):
        with pytest.raises(excs) as e:
            seed.params[KEY] = x
        msg = str(e.value)
        assert KEY in msg, f"{label}: the error must name the key: {msg}"
        if label in ("bigger", "rank 4"):
            assert str(tuple(shape)) in msg, f"{label}: the expected shape: {msg}"
            assert str(tuple(x.shape)) in msg, f"{label}: given shape: {msg}"
        assert seed.params.changed() == [], label
        assert seed.params.update() == [], label
        np.testing.assert_array_equal(np.asarray(seed.params[KEY]), old)
        np.testing.assert_array_equal(seed.render(seed=2).numpy(), before, err_msg=label)


def test_a_cuda_array_on_another_device_is_refused(make_seed, torch):
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU only: no other device to import from")
    seed = make_seed(res=32, spp=8)
    before = seed.render(seed=2).numpy()
    x = torch.zeros(seed.tex_shape, device="cuda:1")
    with pytest.raises((ValueError, TypeError, BufferError)):
        seed.params[KEY] = x
    assert seed.params.changed() == []
    np.testing.assert_array_equal(seed.render(seed=2).numpy(), before)
