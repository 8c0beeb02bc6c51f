"""Device memory exhausted in the middle of a run: a render that cannot get its film
raises a ``RenderError`` that says "out of GPU memory" with the sizes; nothing else is
lost, and once memory is free again the same scene renders the same bits.

PyTorch takes the device's free memory in blocks from 1 GiB down to 2 MiB, so less than
a film is left to the driver. heliograph's pool may still keep freed memory of earlier
renders (up to 2 GiB, or an eighth of the device), from which a render is served without
asking the driver; so the scene is rendered again and again, each film kept, until the
pool and the driver are both used up and a render fails. The bound on that loop covers
the most the pool keeps and what the driver had left.
"""

from __future__ import annotations

import numpy as np
import pytest

import heliograph as hg

from .common import settle

RES, SPP, SEED = 1024, 4, 7
FILM_BYTES = RES * RES * 3 * 4
# the film accumulator: 5 floats a pixel
ACCUM_BYTES = RES * RES * 5 * 4
SMALLEST_BLOCK = 2 << 20


def _hog(torch, blocks):
    """Takes the device's free memory as PyTorch tensors appended to ``blocks``, in blocks
    from 1 GiB down to 2 MiB (the caller's list: clearing it gives the memory back even
    when this fails part-way)."""
    oom = getattr(torch.cuda, "OutOfMemoryError", RuntimeError)
    size = 1 << 30
    while size >= SMALLEST_BLOCK:
        try:
            blocks.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
        except oom:
            size //= 2
    torch.cuda.synchronize()


def test_a_render_that_finds_the_device_full_fails_cleanly_and_the_process_goes_on(make_seed, torch):
    s = make_seed(res=RES, spp=SPP)
    earlier = s.render(seed=SEED)
    want = earlier.numpy().copy()
    assert np.isfinite(want).all() and want.max() > 0
    settle()
    free_before, total = torch.cuda.mem_get_info()
    hog, held = [], []
    try:
        _hog(torch, hog)
        free_left = torch.cuda.mem_get_info()[0]
        # normally under 2 MiB; the loop below also uses up whatever is left
        assert free_left < (64 << 20), (
            f"PyTorch left {free_left / 2**20:.0f} MiB of {free_before / 2**20:.0f} MiB free: "
            f"the device could not be filled")
        # what the pool may keep, what the driver has left, and some room for rounding
        kept = min(2 << 30, total // 8)
        bound = (kept + free_left + (256 << 20)) // FILM_BYTES + 16
        error = None
        for _ in range(bound):
            try:
                held.append(s.render(seed=SEED))
            except hg.RenderError as e:
                error = e
                break
        assert error is not None, (
            f"{len(held)} renders of {FILM_BYTES / 2**20:.0f} MiB fit beside "
            f"{sum(b.numel() for b in hog) / 2**30:.1f} GiB held by PyTorch")
        msg = str(error)
        assert msg.startswith("out of GPU memory: ") and "GiB" in msg, msg
        assert "film" in msg, msg
        # still under the hog: the results rendered so far read back, bit for bit
        np.testing.assert_array_equal(earlier.numpy(), want)
        if held:
            np.testing.assert_array_equal(held[-1].numpy(), want, "the last render that fit")
        # a failed render leaves nothing that changes the next one: trying again fails the same way
        with pytest.raises(hg.RenderError, match="out of GPU memory"):
            for _ in range(4):
                held.append(s.render(seed=SEED))
    finally:
        held.clear()
        hog.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        settle()
    assert torch.cuda.mem_get_info()[0] >= FILM_BYTES + ACCUM_BYTES, "memory given back"

    # memory free again: the same scene renders the same bits, the earlier result is intact
    np.testing.assert_array_equal(s.render(seed=SEED).numpy(), want)
    np.testing.assert_array_equal(earlier.numpy(), want)
    # and a texture update still takes effect, and undoes exactly
    s.set_texture(s.texture(3))
    three = s.render(seed=SEED).numpy()
    assert not np.array_equal(three, want)
    s.set_texture(s.texture(5))
    assert not np.array_equal(s.render(seed=SEED).numpy(), three)
    s.set_texture(s.texture(3))
    np.testing.assert_array_equal(s.render(seed=SEED).numpy(), three)
    np.testing.assert_array_equal(earlier.numpy(), want)
