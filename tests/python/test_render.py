"""render(): asynchrony, argument errors, progress line and Ctrl-C."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import heliograph as hg
from conftest import seed_dict


def _big_scene(res=256):
    return hg.load_dict(seed_dict(np.random.default_rng(0).random((8, 8, 3)), res=res))


def test_render_returns_at_once_and_reads_wait_for_that_render():
    scene = _big_scene(128)
    t0 = time.perf_counter()
    img = hg.render(scene, spp=64)
    returned = time.perf_counter() - t0
    assert img.shape == (128, 128, 3) and img.dtype == np.float32  # known before the render ends
    assert not img.ready
    a = np.array(img)
    waited = time.perf_counter() - t0
    assert img.ready and returned < 0.2 * waited, (returned, waited)
    assert a.shape == (128, 128, 3) and np.isfinite(a).all()


def test_same_seed_is_bitwise_identical_and_seeds_differ():
    scene = _big_scene(16)
    a, b = np.array(hg.render(scene, spp=4, seed=5)), np.array(hg.render(scene, spp=4, seed=5))
    c = np.array(hg.render(scene, spp=4, seed=6))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_spp_defaults_to_the_scene_sampler():
    scene = hg.load_dict(seed_dict(np.ones((2, 2, 3)), res=8, spp=3))
    np.testing.assert_array_equal(np.array(hg.render(scene, seed=2)), np.array(hg.render(scene, spp=3, seed=2)))
    # spp=0 means the scene's count too, as in Mitsuba
    np.testing.assert_array_equal(np.array(hg.render(scene, spp=0, seed=2)), np.array(hg.render(scene, spp=3, seed=2)))
    assert not np.array_equal(np.array(hg.render(scene, spp=0, seed=2)), np.array(hg.render(scene, spp=4, seed=2)))


@pytest.mark.parametrize(
    "kwargs,exc,pattern",
    [
        ({"spp": -4}, ValueError, r"'spp' must be in \[0, 4294967295\] \(0: the scene's sample count\), got -4"),
        ({"spp": 2**32}, ValueError, r"'spp' must be in \[0, 4294967295\].*got 4294967296"),
        ({"spp": 2.5}, TypeError, "'spp' must be an int, got float"),
        ({"spp": True}, TypeError, "'spp' must be an int, got bool"),
        ({"seed": -1}, ValueError, r"'seed' must be in \[0, 18446744073709551615\], got -1"),
        ({"sensor": 1}, ValueError, "one sensor"),
        ({"sensor": "s"}, TypeError, r"'sensor' must be a Sensor from load_dict\(\) or the index 0, got str"),
        ({"integrator": {"type": "path"}}, TypeError, r"'integrator' must be an Integrator from load_dict\(\), got dict"),
        ({"params": {"a": 1}}, TypeError, "SceneParameters"),
    ],
)
def test_bad_render_arguments(small_scene, kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        hg.render(small_scene, **kwargs)


def test_render_needs_a_scene():
    with pytest.raises(TypeError, match="must be a heliograph Scene"):
        hg.render({"type": "scene"})


def test_progress_line_shows_and_can_be_turned_off(capsys):
    scene = _big_scene(64)
    hg.set_progress(True, delay=0.0)
    assert hg.progress()
    np.array(hg.render(scene, spp=64))
    err = capsys.readouterr().err
    assert "Rendering [" in err and "100.0%" in err and err.endswith("\n")
    hg.set_progress(False)
    np.array(hg.render(scene, spp=64))
    assert capsys.readouterr().err == ""
    with pytest.raises(ValueError, match="delay"):
        hg.set_progress(True, delay=-1.0)


def test_keyboard_interrupt_cancels_the_render_and_leaves_the_scene_usable():
    scene = _big_scene(256)
    earlier = hg.render(scene, spp=1, seed=1)
    earlier_values = np.array(earlier).copy()
    other = hg.render(_big_scene(32), spp=256, seed=2)  # in flight, but not the one waited for
    img = hg.render(scene, spp=100_000)  # minutes if not cancelled
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        np.array(img)
    assert time.perf_counter() - t0 < 10.0
    timer.join()
    with pytest.raises(hg.RenderError, match="cancelled"):
        np.array(img)
    ok = np.array(hg.render(scene, spp=1))
    assert ok.shape == (256, 256, 3) and np.isfinite(ok).all()
    # only the render waited for is cancelled: earlier results and other renders are intact
    np.testing.assert_array_equal(np.array(earlier), earlier_values)
    np.testing.assert_array_equal(np.array(other), np.array(hg.render(_big_scene(32), spp=256, seed=2)))


def test_dropping_an_unread_render_does_not_block_or_leak():
    scene = _big_scene(256)
    t0 = time.perf_counter()
    for _ in range(3):
        hg.render(scene, spp=100_000)  # dropped at once: cancelled
    assert time.perf_counter() - t0 < 10.0
