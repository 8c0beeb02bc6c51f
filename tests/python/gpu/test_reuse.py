"""A consumer's queued work is never corrupted by heliograph reusing a film's memory.

The consumer (CuPy) imports a film with a given ``stream`` value, queues a kernel that
spins ~40 ms and then copies the film, and drops its array at once: the deleter runs
while that kernel is still queued. heliograph then renders 100 more frames of another
texture, whose films come from the same memory pool. What the kernel copied must be the
film it was given — for every ``stream`` value:

- a stream pointer and ``1`` (the legacy default stream): a release fence on that stream;
- ``2`` (the per-thread default stream): fenced when the deleter runs on the exporting
  thread; from another thread, the policy below;
- ``None`` and ``-1`` (the consumer named no stream): the film's memory is freed only
  after a device-wide synchronise that heliograph's reclaimer runs on its own thread.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import heliograph as hg

from .common import settle
from .dlpack_structs import CapsuleHolder

SPIN_MS = 40.0
KERNEL = r"""
extern "C" __global__ void spin_copy(const float* film, float* out, long long n, long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = film[i];
}
"""


@pytest.fixture(scope="module")
def spin(cupy):
    k = cupy.RawKernel(KERNEL, "spin_copy")
    rate_khz = cupy.cuda.runtime.getDeviceProperties(0)["clockRate"]
    return k, int(SPIN_MS * rate_khz)


def _consume(cupy, img, stream_value, stream, versioned):
    """The consumer: imports the film as a CuPy array (the capsule made with
    `stream_value`), then queues the spinning copy on `stream`."""
    kw = {"max_version": (1, 0)} if versioned else {}
    cap = img.__dlpack__(stream=stream_value, **kw)
    return cupy.from_dlpack(CapsuleHolder(cap, (2, 0)))


def _run(cupy, spin, seed, stream_value, versioned, deleter_thread=False):
    kernel, cycles = spin
    seed.set_texture(seed.texture(11))
    img = seed.render(seed=3)
    want = img.numpy().copy()
    n = want.size
    out = cupy.zeros(n, dtype=cupy.float32)
    # the consumer's own non-blocking stream (for None and -1, the TensorFlow case: the
    # producer cannot know it)
    s = cupy.cuda.Stream(non_blocking=True)
    if stream_value == "ptr":
        stream_value = s.ptr
    use = cupy.cuda.Stream.null if stream_value == 1 else s
    if stream_value == 2:
        use = cupy.cuda.Stream.ptds

    def consumer():
        arr = _consume(cupy, img, stream_value, use, versioned)
        with use:
            kernel((132,), (256,), (arr.reshape(-1), out, np.int64(n), np.int64(cycles)))
        return arr

    if deleter_thread:
        # exported and queued on one thread, released on another
        box = {}
        t = threading.Thread(target=lambda: box.setdefault("arr", consumer()))
        t.start()
        t.join()
        arr = box.pop("arr")
    else:
        arr = consumer()
    del arr, img  # the deleter runs now, the kernel is still spinning
    seed.set_texture(seed.texture(12))
    for i in range(100):  # films from the same pool, another texture
        seed.render(seed=100 + i)
    use.synchronize()
    s.synchronize()
    got = cupy.asnumpy(out).reshape(want.shape)
    return np.array_equal(got, want)


STREAMS = [
    pytest.param("ptr", id="pointer"),
    pytest.param(1, id="legacy"),
    pytest.param(2, id="per-thread"),
    pytest.param(None, id="None"),
    pytest.param(-1, id="minus-one"),
]


@pytest.mark.parametrize("versioned", [False, True], ids=["legacy-capsule", "versioned"])
@pytest.mark.parametrize("stream_value", STREAMS)
def test_a_consumer_kernel_reads_the_film_it_was_given(cupy, spin, make_seed, stream_value, versioned):
    seed = make_seed(res=512, spp=4)
    ok = [_run(cupy, spin, seed, stream_value, versioned) for _ in range(3)]
    settle()
    assert all(ok), f"stream={stream_value}: the consumer's kernel read a reused film in {ok.count(False)} of 3 trials"


@pytest.mark.parametrize("stream_value", [pytest.param(2, id="per-thread"), pytest.param(None, id="None")])
def test_a_deleter_on_another_thread_still_protects_the_film(cupy, spin, make_seed, stream_value):
    seed = make_seed(res=512, spp=4)
    ok = [_run(cupy, spin, seed, stream_value, True, deleter_thread=True) for _ in range(3)]
    settle()
    assert all(ok), f"stream={stream_value}: corrupted in {ok.count(False)} of 3 trials"


def test_one_film_exported_a_million_times_keeps_one_fence(cupy, make_seed):
    import time

    seed = make_seed(res=32, spp=1)
    img = seed.render()
    s = cupy.cuda.Stream(non_blocking=True)
    t0 = time.perf_counter()
    for _ in range(1_000_000):
        cap = img.__dlpack__(stream=s.ptr)
        del cap  # unconsumed: the destructor runs the deleter, which fences s
    print(f"10^6 exports in {time.perf_counter() - t0:.1f} s")
    assert hg._native._cuda_fence_count(img) == 1
    assert hg._native._live_exports() == 0
