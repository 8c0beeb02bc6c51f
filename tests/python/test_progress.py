"""Where the progress line goes (python/src/progress.rs): nothing on a pipe, one line
redrawn and erased on a terminal, one display updated in place in a notebook.

Each case runs a fresh interpreter with the automatic setting and no delay (the suite's
conftest turns the line off in this process), rendering for a fraction of a second."""

import errno
import os
import pty
import subprocess
import sys
import time

import pytest

from conftest import ROOT

RENDER = """
import numpy as np
import heliograph as hg
{setup}
d = {{"type": "scene", "integrator": {{"type": "direct"}}, "emitter": {{"type": "constant"}},
     "shape": {{"type": "rectangle", "bsdf": {{"type": "diffuse"}}}},
     "sensor": {{"type": "perspective",
                "to_world": hg.ScalarTransform4f.look_at([0, 0, 5], [0, 0, 0], [0, 1, 0]),
                "film": {{"type": "hdrfilm", "width": 256, "height": 256, "pixel_format": "rgb"}}}}}}
img = hg.render(hg.load_dict(d), spp=64)
print("shape", np.array(img).shape)
"""


# Automatic placement (the default) with no delay: the line must not depend on how long
# the render takes on this machine (a fast one finishes before the default 0.5 s).
AUTO = "hg.set_progress(None, delay=0.0)"


def _script(setup=AUTO):
    return RENDER.format(setup=setup)


def test_nothing_is_written_when_stderr_is_a_file(tmp_path):
    err = tmp_path / "stderr.txt"
    with open(err, "w") as f:
        r = subprocess.run([sys.executable, "-c", _script()], stdout=subprocess.PIPE, stderr=f,
                           text=True, timeout=300)
    assert r.returncode == 0 and "shape (256, 256, 3)" in r.stdout, err.read_text()
    assert err.read_text() == ""


def test_true_forces_the_line_onto_a_pipe_ending_in_a_newline():
    r = subprocess.run([sys.executable, "-c", _script("hg.set_progress(True, delay=0.0)")],
                       capture_output=True, timeout=300)
    err = r.stderr.decode()  # bytes: text mode would turn each \r into \n
    assert r.returncode == 0, err
    assert err.startswith("\rRendering [") and err.endswith("\n"), repr(err)
    assert err.count("100.0%") == 1 and err.count("\n") == 1, repr(err)


def test_the_setting_is_automatic_forced_or_off():
    import heliograph as hg

    for setting in (None, True, False):
        hg.set_progress(setting)
        assert hg.progress() is setting


def _run_on_a_terminal(script):
    """Runs ``script`` with stderr on a pseudo-terminal; returns (status, what the
    terminal received)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 4096)
        except OSError as e:  # EIO: the child closed the terminal
            if e.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=60), out.decode()


def test_on_a_terminal_the_line_is_redrawn_shows_100_once_and_is_erased():
    rc, out = _run_on_a_terminal(_script())
    assert rc == 0, out
    assert out.startswith("\rRendering ["), repr(out)
    assert out.count("100.0%") == 1, repr(out)
    assert "\n" not in out, repr(out)  # one line, redrawn in place
    last = out.rsplit("\r", 2)
    assert last[-1] == "" and last[-2].strip() == "", f"not erased at the end: {out[-200:]!r}"


def test_in_a_notebook_one_display_is_updated_in_place(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(_script()))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": ROOT}}).execute()
    outputs = nb.cells[0].outputs
    assert not [o for o in outputs if o.output_type == "error"], outputs
    streams = [o for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert not streams, f"progress went to stderr: {streams}"
    displays = [o for o in outputs if o.output_type == "display_data"]
    assert len(displays) == 1, outputs
    text = displays[0].data["text/plain"]
    assert text.startswith("Rendering [") and "100.0%" in text, text
    assert "<progress" in displays[0].data["text/html"]
    assert any("shape (256, 256, 3)" in o.get("text", "") for o in outputs), outputs
