"""Sizes a user can ask for that no machine can serve: clear errors stating the
limits, never an aborted interpreter or a render that never ends."""

import subprocess
import sys
import textwrap

import pytest

import heliograph as hg


def _film(**film):
    return {
        "type": "scene",
        "sensor": {"type": "perspective", "film": {"type": "hdrfilm", "pixel_format": "rgba", **film}},
    }


@pytest.mark.parametrize(
    "film,pattern",
    [
        ({"width": 0, "height": 4}, r'<dict>\[sensor.film.width\]: parameter "width": must be in \[1, 32768\], got 0'),
        ({"width": 4, "height": -3}, r'parameter "height": must be in \[1, 32768\], got -3'),
        ({"width": 40000, "height": 4}, r"must be in \[1, 32768\], got 40000"),
        ({"width": 2**70, "height": 4}, r"<dict>\[sensor.film.width\]: integer out of range"),
        ({"width": 1e10, "height": 4}, r"must be in \[1, 32768\], got 10000000000"),
        ({"width": 4.5, "height": 4}, r'parameter "width": expected integer, got float'),
    ],
)
def test_absurd_film_sizes_are_build_time_errors(film, pattern):
    with pytest.raises(hg.SceneError, match=pattern):
        hg.load_dict(_film(**film))


@pytest.mark.parametrize("count", [0, -1, 2**32])
def test_sample_counts_outside_the_u32_range_are_build_time_errors(count):
    d = _film(width=4, height=4)
    d["sensor"]["sampler"] = {"type": "independent", "sample_count": count}
    with pytest.raises(hg.SceneError, match=rf'sampler.sample_count\]: parameter "sample_count": must be in \[1, 4294967295\], got {count}'):
        hg.load_dict(d)


def test_a_film_too_large_for_memory_is_a_render_error_stating_the_limit():
    # In a child limited to 8 GiB of address space: before the check, this render
    # asked for 21 GiB at once and the interpreter aborted.
    code = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({8 << 30}, {8 << 30}))
        import heliograph as hg
        d = {_film(width=32768, height=32768)!r}
        scene = hg.load_dict(d)
        try:
            hg.render(scene, spp=1)
            print("started")
        except hg.RenderError as e:
            print(e)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    out = (r.stdout + r.stderr).strip()
    assert r.returncode == 0, f"the interpreter died (exit status {r.returncode}): {out[-2000:]}"
    assert "32768 x 32768 crop window would need 36.0 GiB" in out, out
    assert "at most 268435456 pixels (16384 x 16384)" in out and "crop_width" in out, out


def test_a_crop_window_of_a_huge_film_renders():
    d = _film(width=32768, height=32768, crop_offset_x=100, crop_offset_y=7, crop_width=8, crop_height=4)
    img = hg.render(hg.load_dict(d), spp=1)
    assert img.shape == (4, 8, 4)

