"""The shipped .pyi stubs agree with the runtime (mypy.stubtest)."""

import subprocess
import sys

import pytest


def test_stubtest_accepts_the_stubs():
    pytest.importorskip("mypy.stubtest")
    out = subprocess.run([sys.executable, "-m", "mypy.stubtest", "heliograph"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
