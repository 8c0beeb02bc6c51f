"""Threads on the GPU (``cuda_rgb``): renders and updates from several Python threads share
heliograph's one render stream, and each still gets exactly its own images.

- two threads, each updating and rendering its own scene at the same time, get the images
  the same frame loops give one after the other (bit for bit: the same scene, spp and seed
  give the same bits on the GPU);
- an update from another thread while a render of the same scene is queued or running
  leaves that render's image that of the scene before the update (updates are ordered on
  the stream after the renders enqueued before them); the next render sees the update.

Thread joins have a time limit, and the conftest watchdog bounds every test.
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from test_concurrency import in_threads

from .common import HEAVY, KEY, Seed

JOIN_S = 60.0


def _frames(seed: Seed, which: int, count: int = 6) -> List[np.ndarray]:
    """A frame loop: each frame applies the next texture while the previous frame's render
    may still be queued, starts a render, then reads the previous one."""
    images = []
    pending = seed.render(seed=which)
    for k in range(1, count):
        seed.set_texture(seed.texture(10 * which + k))
        following = seed.render(seed=k)
        images.append(pending.numpy())
        pending = following
    images.append(pending.numpy())
    return images


def test_two_threads_render_and_update_different_scenes_as_if_alone(make_seed):
    expected = [_frames(make_seed(res=96, spp=16), w) for w in (0, 1)]
    for _ in range(3):
        got = in_threads(lambda w: _frames(*w), [(make_seed(res=96, spp=16), w) for w in (0, 1)], JOIN_S)
        for w in (0, 1):
            for i, (a, b) in enumerate(zip(got[w], expected[w])):
                assert np.array_equal(a, b), f"thread {w}, frame {i} differs from the sequential run"


def test_an_update_from_another_thread_leaves_a_queued_render_alone(heavy, make_seed):
    old, new = heavy.texture(1), heavy.texture(2)
    heavy.set_texture(old)
    # renders queued ahead keep `running` on the stream while the other thread updates
    ahead = [heavy.render(seed=100 + i) for i in range(4)]
    running = heavy.render(seed=4)

    def update(_: Any) -> bool:
        heavy.set_texture(new)
        return not running.ready

    [still_running] = in_threads(update, [None], JOIN_S)
    assert still_running, "the update must land while the render is queued or running"
    after = heavy.render(seed=5)
    got_running, got_after = running.numpy(), after.numpy()
    for i, a in enumerate(ahead):
        assert np.isfinite(a.numpy()).all(), f"render {i} queued ahead"
    np.testing.assert_array_equal(np.array(heavy.params[KEY]), new)
    fresh_old, fresh_new = make_seed(**HEAVY), make_seed(**HEAVY)
    fresh_old.set_texture(old)
    fresh_new.set_texture(new)
    assert np.array_equal(got_running, fresh_old.render(seed=4).numpy()), "the queued render saw the update"
    assert np.array_equal(got_after, fresh_new.render(seed=5).numpy()), "the next render missed the update"
