"""Out of resources while writing images: a directory that does not exist, one that is
read-only, a full disk. The command line (``-o``) and the Python writers
(``util.write_bitmap``, ``Bitmap.write``) give an error that names the file (an
``OSError`` in Python), leave no partial file, keep an earlier image at that path intact,
and the process goes on.

A full disk is a child process under a file size limit of one block with SIGXFSZ
ignored: a write past the limit fails with EFBIG, as a full disk fails with ENOSPC. The
limit is set by ``sh`` (``ulimit -f``) rather than a ``preexec_fn``, which is not safe in
this multi-threaded interpreter. A read-only directory does not stop root; then
``/proc/self``, where no one can create files, stands in."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import pytest

import heliograph as hg
from conftest import ROOT

SEED = os.path.join(ROOT, "scenes", "seed.xml")
# file size limit: one block (512 or 1024 bytes, by the shell), below every image here
LIMITED = ["sh", "-c", "trap '' XFSZ; ulimit -f 1 && exec \"$0\" \"$@\""]


def _cli(*args, limited=False, cwd=None):
    cmd = [sys.executable, "-m", "heliograph", *args]
    return subprocess.run((LIMITED if limited else []) + cmd, capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def _render_to(out, res=32, limited=False):
    return _cli("render", SEED, "-D", f"res={res}", "--spp", "2", "--backend", "cpu", "-q", "-o",
                str(out), limited=limited)


def _read_only_dir(path):
    """``path`` made read-only, or ``None`` when that does not stop this user (root)."""
    path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        (path / "probe").write_bytes(b"x")
    except OSError:
        return path
    (path / "probe").unlink()
    return None


def _noise(h, w, seed):
    """An image that does not compress: its file is larger than the limit."""
    return np.random.default_rng(seed).random((h, w, 3), dtype=np.float32)


def test_cli_output_into_a_missing_directory_is_an_error_naming_it(tmp_path):
    out = tmp_path / "no" / "such" / "dir" / "out.exr"
    r = _render_to(out)
    assert r.returncode == 1, r
    # checked before the scene loads: no render is wasted
    assert r.stderr.startswith("error: checking the output path (-o): ") and str(out) in r.stderr, r.stderr
    assert "does not exist" in r.stderr, r.stderr
    assert not (tmp_path / "no").exists()


def test_cli_output_into_a_read_only_directory_keeps_the_earlier_image(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    out = ro / "out.exr"
    assert _render_to(out, res=16).returncode == 0
    earlier = out.read_bytes()
    try:
        if _read_only_dir(ro) is not None:
            r = _render_to(out)
            assert r.returncode == 1 and str(out) in r.stderr, r
            assert "Permission denied" in r.stderr, r.stderr
            assert sorted(os.listdir(ro)) == ["out.exr"], "no partial file"
            assert out.read_bytes() == earlier
    finally:
        ro.chmod(0o755)
    r = _render_to("/proc/self/out.exr")
    assert r.returncode == 1 and "/proc/self/out.exr" in r.stderr, r


@pytest.mark.parametrize("ext", ["exr", "png"])
def test_cli_output_onto_a_full_disk_keeps_the_earlier_image(tmp_path, ext):
    out = tmp_path / f"out.{ext}"
    assert _render_to(out, res=16).returncode == 0
    earlier = out.read_bytes()
    # a 32x32 film: an EXR of 12 KiB, a PNG of a few KiB (within one write buffer)
    r = _render_to(out, limited=True)
    assert r.returncode == 1, r
    assert str(out) in r.stderr and "File too large" in r.stderr, r.stderr
    assert "rendered" not in r.stdout, r.stdout
    assert sorted(os.listdir(tmp_path)) == [out.name], "no partial file"
    assert out.read_bytes() == earlier
    # with room again, the same command writes the image
    assert _render_to(out).returncode == 0
    assert hg.Bitmap(str(out)).shape == (32, 32, 3)


def test_python_writers_into_unwritable_places_raise_oserror_naming_the_file(tmp_path):
    img = _noise(8, 8, 1)
    missing = tmp_path / "missing" / "a.exr"
    with pytest.raises(OSError, match="missing/a.exr") as e:
        hg.util.write_bitmap(missing, img)
    assert isinstance(e.value, hg.SceneFileError)
    with pytest.raises(OSError, match="/proc/self/a.png"):
        hg.Bitmap(img).write("/proc/self/a.png")
    ro = tmp_path / "ro"
    ro.mkdir()
    hg.util.write_bitmap(ro / "a.png", img)
    earlier = (ro / "a.png").read_bytes()
    try:
        if _read_only_dir(ro) is not None:
            with pytest.raises(OSError, match="ro/a.png"):
                hg.util.write_bitmap(ro / "a.png", _noise(8, 8, 2))
            assert sorted(os.listdir(ro)) == ["a.png"]
            assert (ro / "a.png").read_bytes() == earlier
    finally:
        ro.chmod(0o755)
    # onto a directory: refused, the directory stays
    (tmp_path / "taken.exr").mkdir()
    with pytest.raises(OSError, match="taken.exr"):
        hg.util.write_bitmap(tmp_path / "taken.exr", img)
    assert (tmp_path / "taken.exr").is_dir()
    # the interpreter goes on
    hg.util.write_bitmap(tmp_path / "b.exr", img)
    np.testing.assert_array_equal(np.asarray(hg.Bitmap(str(tmp_path / "b.exr"))), img)


# Runs in a child under the file size limit: every write fails, each with an OSError that
# names its file; a write that fits and a render still work afterwards.
CHILD = r"""
import os, sys
import numpy as np
import heliograph as hg

d = sys.argv[1]
images = {name: np.random.default_rng(i).random(shape, dtype=np.float32)
          for i, (name, shape) in enumerate(sorted(eval(sys.argv[2]).items()))}
for name, img in images.items():
    for path, write in [(os.path.join(d, name), hg.util.write_bitmap),
                        (os.path.join(d, "new-" + name), lambda p, a: hg.Bitmap(a).write(p))]:
        try:
            write(path, img)
        except OSError as e:
            assert isinstance(e, hg.SceneFileError), repr(e)
            assert path in str(e) and "File too large" in str(e), str(e)
        else:
            sys.exit(f"{path}: written past the file size limit")
hg.util.write_bitmap(os.path.join(d, "tiny.png"), np.zeros((1, 1, 3), np.float32))
scene = hg.load_file(sys.argv[3], res=8)
assert np.isfinite(hg.render(scene, spp=1).numpy()).all()
print("child ok")
"""


def test_python_writers_on_a_full_disk_keep_the_earlier_image(tmp_path):
    # files smaller and larger than a write buffer (8 KiB), all above the limit
    shapes = {"small.png": (24, 24, 3), "small.exr": (16, 16, 3), "large.png": (64, 64, 3),
              "large.exr": (64, 64, 3)}
    earlier = {}
    for i, (name, shape) in enumerate(shapes.items()):
        hg.util.write_bitmap(tmp_path / name, _noise(*shape[:2], 100 + i))
        earlier[name] = (tmp_path / name).read_bytes()
    r = subprocess.run(LIMITED + [sys.executable, "-c", CHILD, str(tmp_path), repr(shapes), SEED],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "child ok" in r.stdout, r
    assert sorted(os.listdir(tmp_path)) == sorted([*shapes, "tiny.png"]), "no partial or new file"
    for name, data in earlier.items():
        assert (tmp_path / name).read_bytes() == data, f"{name} changed"
