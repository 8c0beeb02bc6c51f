"""The seed loop on the GPU: set a texture, ``update()``, render, hand the image over.

- An update gives the image a freshly loaded scene with the new texture gives, bit for
  bit (same seed), whether the texture comes from NumPy or from another framework's CUDA
  array (copied device to device);
- importing a CUDA texture never blocks the host, and still orders after the
  producer's pending writes;
- a host read waits for its own render only, not for renders enqueued after it;
- host memory (RSS) and device memory stay flat over 10 000 cycles of the loop.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import heliograph as hg
from conftest import seed_dict
from heliograph import _native
from memory_trend import measure

from .common import KEY, frame_colour, settle

CYCLES = int(os.environ.get("HELIOGRAPH_SOAK_CYCLES", "10000"))


@pytest.mark.parametrize(
    "source", ["numpy", "numpy-reversed", "numpy-float64", "tensorxf", "torch", "cupy", "jax"]
)
def test_an_update_renders_the_image_of_a_fresh_load(request, source):
    res, spp = 96, 8
    rng = np.random.default_rng(3)
    tex0 = rng.random((32, 48, 3), dtype=np.float32)
    tex1 = rng.random((32, 48, 3), dtype=np.float32)
    scene = hg.load_dict(seed_dict(tex0, res))
    p = hg.traverse(scene)
    hg.render(scene, spp=spp).numpy()  # uploaded to the device
    if source == "numpy":
        value = tex1
    elif source == "numpy-reversed":  # negative strides: read element by element
        value = np.ascontiguousarray(tex1[::-1, ::-1])[::-1, ::-1]
        assert value.strides[0] < 0
    elif source == "numpy-float64":
        value = tex1.astype(np.float64)
    elif source == "tensorxf":
        value = hg.TensorXf(tex1)
    else:
        fw = request.getfixturevalue(source)
        value = {
            "torch": lambda: fw.from_numpy(tex1).cuda(),
            "cupy": lambda: fw.asarray(tex1),
            "jax": lambda: fw.device_put(tex1, fw.devices("gpu")[0]),
        }[source]()
    p[KEY] = value
    p.update()
    got = hg.render(scene, spp=spp, seed=7).numpy()
    want = hg.render(hg.load_dict(seed_dict(tex1, res)), spp=spp, seed=7).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(hg.traverse(scene)[KEY]), tex1)
    # the emitter and the camera are patches too
    p["emitter.radiance.value"] = 2.5
    p["sensor.x_fov"] = 30.0
    p.update()
    d = seed_dict(tex1, res)
    d["emitter"]["radiance"] = 2.5
    d["sensor"]["fov"] = 30.0
    d["sensor"]["fov_axis"] = "x"
    np.testing.assert_array_equal(hg.render(scene, spp=spp, seed=7).numpy(), hg.render(hg.load_dict(d), spp=spp, seed=7).numpy())


def test_host_textures_of_a_gpu_scene_go_straight_to_the_device():
    res, spp = 64, 4
    rng = np.random.default_rng(5)
    tex0 = rng.random((16, 24, 3), dtype=np.float32)
    scene = hg.load_dict(seed_dict(tex0, res))
    p = hg.traverse(scene)
    before = hg.render(scene, spp=spp, seed=1).numpy()
    tex1 = rng.random((16, 24, 3), dtype=np.float32)
    p[KEY] = tex1
    assert p[KEY].device == "cuda:0", "uploaded when set (one host copy, into staging)"
    p.update()
    np.testing.assert_array_equal(np.asarray(hg.traverse(scene)[KEY]), tex1)
    # refused values name the key and where the problem is, and change nothing
    bad = tex1.copy()
    bad[3, 5, 2] = np.nan
    with pytest.raises(hg.SceneError, match=r"reflectance.data.*row 3, column 5, channel 2"):
        p[KEY] = bad
    with pytest.raises(hg.SceneError, match=r"shape \(16, 24, 3\).*\(24, 16, 3\)"):
        p[KEY] = np.zeros((24, 16, 3), np.float32)
    with pytest.raises(hg.SceneError, match="float"):
        p[KEY] = np.zeros((16, 24, 3), np.int32)
    assert p.changed() == []
    p[KEY] = tex0
    p.update()
    np.testing.assert_array_equal(hg.render(scene, spp=spp, seed=1).numpy(), before)


def test_a_cuda_texture_import_never_blocks_the_host(make_seed, torch):
    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("this PyTorch has no torch.cuda._sleep")
    seed = make_seed(res=64, spp=16)
    seed.render().numpy()
    h, w, _ = seed.tex_shape
    # one import first, so that what a process does once (compiling the import's kernels)
    # is not in the timed enqueue below
    seed.params[KEY] = torch.zeros((h, w, 3), device="cuda")
    seed.params.update()
    seed.render().numpy()
    s = torch.cuda.Stream()
    # ~100 ms of spinning on the producer's stream before it writes the texture
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s):
        start.record()
        torch.cuda._sleep(10_000_000)
        end.record()
    end.synchronize()
    cycles = int(10_000_000 * 100.0 / max(start.elapsed_time(end), 1e-3))
    c = frame_colour(5)
    with torch.cuda.stream(s):
        torch.cuda._sleep(cycles)
        x = torch.empty((h, w, 3), device="cuda")
        for ch in range(3):
            x[..., ch].fill_(float(c[ch]))
        t0 = time.perf_counter()
        seed.params[KEY] = x
        seed.params.update()
        img = seed.render(seed=1)
        enqueue_ms = (time.perf_counter() - t0) * 1e3
    assert not img.ready, "the render finished before the producer's write: no ordering to check"
    got = img.numpy()
    seed.set_texture(seed.texture(5))
    want = seed.render(seed=1).numpy()
    print(f"import + update + render enqueue: {enqueue_ms:.3f} ms while the producer spins 100 ms")
    assert enqueue_ms < 20, f"the import blocked the host ({enqueue_ms:.1f} ms)"
    np.testing.assert_array_equal(got, want)


def test_a_read_waits_only_for_its_own_render(make_seed):
    small = make_seed(res=64, spp=4)
    big = make_seed(res=512, spp=2048)  # ~0.5 s on an H200
    small.render().numpy()
    big.render().numpy()
    a = small.render(seed=1)
    b = big.render(seed=2)
    t0 = time.perf_counter()
    np.asarray(a)
    read_ms = (time.perf_counter() - t0) * 1e3
    still_running = not b.ready
    print(f"read of the small film: {read_ms:.3f} ms; the long render still running: {still_running}")
    assert still_running, "the read waited for the render enqueued after its own"
    b.numpy()


@pytest.mark.parametrize("source,consumer", [("torch", "torch"), ("numpy", "jax")])
def test_memory_stays_flat_over_the_loop(request, make_seed, torch, source, consumer):
    seed = make_seed(res=128, spp=4)
    h, w, _ = seed.tex_shape
    gen = torch.Generator(device="cuda").manual_seed(1)
    textures = [torch.rand((h, w, 3), device="cuda", generator=gen) for _ in range(4)]
    if source == "numpy":
        textures = [t.cpu().numpy() for t in textures]
    if consumer == "jax":
        jax = request.getfixturevalue("jax")

        def consume(img):
            return float(jax.numpy.sum(jax.dlpack.from_dlpack(img)))
    else:

        def consume(img):
            return torch.from_dlpack(img).sum().item()

    def cycle(i):
        seed.params[KEY] = textures[i % 4]
        seed.params.update()
        consume(seed.render(seed=i))

    def device_used():
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        return total - free

    for i in range(10):  # the scene's device copies exist from here on
        cycle(i)
    settle()
    n0 = _native._cuda_live_buffers()[0]
    measure(f"CUDA seed loop: {source} texture -> update -> render 4 spp -> {consumer} export",
            cycle, cycles=CYCLES, warmup=300, device_bytes=device_used, settle=settle).check()
    settle()
    assert _native._cuda_live_buffers()[0] <= n0 + 1
