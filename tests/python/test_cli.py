"""The command line of the Python package: ``python -m heliograph`` and the ``heliograph``
console script run the Rust CLI (heliograph::cli) with its messages and exit codes, and
render the same bits as ``import heliograph``; and where the package tells the CUDA
backend to look for NVRTC."""

import os
import subprocess
import sys

import pytest

import heliograph as hg
from conftest import ROOT

SEED = os.path.join(ROOT, "scenes", "seed.xml")


def _cli(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "heliograph", *args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=cwd)


def test_version_help_and_exit_codes_are_the_rust_clis():
    v = _cli("--version")
    assert v.returncode == 0 and v.stdout.strip() == f"heliograph {hg.__version__}", v
    h = _cli("render", "--help")
    assert h.returncode == 0 and "--spp" in h.stdout and "--nvrtc" in h.stdout, h
    bad_flag = _cli("render", SEED, "--no-such-flag")
    assert bad_flag.returncode == 2 and "--no-such-flag" in bad_flag.stderr, bad_flag
    missing = _cli("render", os.path.join(ROOT, "scenes", "no-such-scene.xml"), "--backend", "cpu")
    assert missing.returncode == 1 and missing.stderr.startswith("error: "), missing
    assert "no-such-scene.xml" in missing.stderr


def test_the_cli_renders_the_same_bits_as_the_python_api(tmp_path):
    out = tmp_path / "cli.exr"
    r = _cli("render", SEED, "-D", "res=24", "--spp", "3", "--seed", "11", "--backend", "cpu", "-q",
             "-o", str(out))
    assert r.returncode == 0, r
    assert "rendered 24x24 at 3 spp" in r.stdout and "cpu" in r.stdout, r.stdout
    api = tmp_path / "api.exr"
    hg.util.write_bitmap(str(api), hg.render(hg.load_file(SEED, res=24), spp=3, seed=11))
    assert out.read_bytes() == api.read_bytes()


def test_the_console_script_is_installed_next_to_the_interpreter():
    if sys.prefix == sys.base_prefix:
        pytest.skip("not in a virtual environment: no scripts folder of our own")
    script = os.path.join(os.path.dirname(sys.executable), "heliograph")
    assert os.access(script, os.X_OK), f"{script} missing: [project.scripts] in python/pyproject.toml"
    r = subprocess.run([script, "info", SEED, "-D", "res=8"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "shape.bsdf.reflectance.data" in r.stdout, r


def test_nvrtc_is_searched_for_in_the_import_folders():
    from heliograph import _nvrtc

    paths = _nvrtc.search_paths()
    assert paths and all(os.path.isabs(p) and os.path.isdir(p) for p in paths)
    assert len(set(paths)) == len(paths)
    here = os.path.dirname(os.path.dirname(os.path.abspath(hg.__file__)))
    assert here in paths, "the folder heliograph itself was imported from"


def test_a_wrong_nvrtc_path_is_a_cuda_unavailable_error_naming_it(tmp_path):
    # a new process: the NVRTC a process found stays loaded
    missing = str(tmp_path / "libnvrtc.so.13")
    code = ("import heliograph, heliograph._native as n\n"
            "try:\n    n._nvrtc_path()\nexcept heliograph.CudaUnavailableError as e:\n    print(e)\n")
    env = dict(os.environ, HELIOGRAPH_NVRTC=missing)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r
    assert f"HELIOGRAPH_NVRTC={missing}: no such file" in r.stdout, r.stdout
    assert 'pip install "heliograph[cuda]"' in r.stdout


def test_output_is_checked_before_the_scene_is_loaded(tmp_path):
    # the scene does not exist: an error about it would mean it was read first
    r = _cli("render", str(tmp_path / "missing.xml"), "-o", str(tmp_path / "out.bmp"), "-q")
    assert r.returncode == 1
    assert "output path (-o)" in r.stderr and "unsupported output format" in r.stderr, r.stderr
    assert "missing.xml" not in r.stderr, r.stderr


def test_an_unknown_define_lists_the_defaults_and_suggests_one(tmp_path):
    r = _cli("render", SEED, "-D", "sppp=4", "-o", str(tmp_path / "x.exr"), "-q", "--backend", "cpu")
    assert r.returncode == 1
    assert 'unknown parameter "sppp"' in r.stderr and "spp, res" in r.stderr, r.stderr
    assert 'did you mean "spp"?' in r.stderr, r.stderr
    assert not (tmp_path / "x.exr").exists()
