"""The ``ptracer`` integrator (light tracing) under cuda_rgb against cpu_rgb: the Cornell
box with a ``ptracer`` in the scene (box and gaussian filters, hidden emitters), and a
lone ``ptracer`` passed to ``render`` for a ``path`` scene, judged per 16x16 block and
channel with Welch's t-test over independent seeds, Bonferroni-corrected; the same test
must reject the CUDA images scaled by 1.05, so it can fail. The CUDA splats are float
atomics: two renders with the same seed agree to rounding, not to the bit. What the CPU
refuses (a sensor other than ``perspective``) is refused on CUDA with the same message."""

from __future__ import annotations

import numpy as np
import pytest

import heliograph as hg

from .common import worst_block_p

RES, SPP, SEEDS = 64, 32, 8
PTRACER = {"type": "ptracer", "max_depth": 3}


def _cbox(rfilter: str = "gaussian", **extra):
    d = hg.cornell_box()
    d["sensor"]["film"].update(width=RES, height=RES, rfilter={"type": rfilter})
    d.update(extra)
    return d


def _renders(variant: str, scene: dict, integrator: dict | None = None) -> np.ndarray:
    """Per-seed images, shape (SEEDS, RES, RES, 3)."""
    hg.set_variant(variant)
    s = hg.load_dict(scene)
    kw = {} if integrator is None else {"integrator": hg.load_dict(integrator)}
    return np.stack([hg.render(s, spp=SPP, seed=100 + k, **kw).numpy() for k in range(SEEDS)])


def _check(label: str, gpu: np.ndarray, cpu: np.ndarray) -> None:
    hg.set_variant("cuda_rgb")
    assert gpu.shape == cpu.shape == (SEEDS, RES, RES, 3)
    assert np.all(np.isfinite(gpu)) and gpu.max() > 0, label
    p = worst_block_p(gpu, cpu)
    biased = worst_block_p(gpu * 1.05, cpu)
    print(f"ptracer {label} CUDA vs CPU: worst corrected p {p:.3g}; 1.05x image {biased:.3g}")
    assert p > 1e-3, f"{label}: the CUDA ptracer differs from the CPU's (p = {p:.3g})"
    assert biased < 1e-3, f"{label}: the test cannot tell a 5% bias (p = {biased:.3g})"


@pytest.mark.parametrize(
    "label,rfilter,integrator",
    [
        ("box filter", "box", PTRACER),
        ("gaussian filter", "gaussian", PTRACER),
        ("hidden emitters", "gaussian", dict(PTRACER, hide_emitters=True, max_depth=5)),
    ],
)
def test_ptracer_in_the_scene_on_cuda_matches_the_cpu(label, rfilter, integrator):
    scene = _cbox(rfilter, integrator=integrator)
    _check(label, _renders("cuda_rgb", scene), _renders("cpu_rgb", scene))


def test_ptracer_passed_to_render_on_cuda_matches_the_cpu():
    gpu = _renders("cuda_rgb", _cbox(), integrator=PTRACER)
    cpu = _renders("cpu_rgb", _cbox(integrator=PTRACER))
    _check("passed to render", gpu, cpu)


def test_same_seed_agrees_to_rounding_and_another_seed_differs():
    hg.set_variant("cuda_rgb")
    s = hg.load_dict(_cbox(integrator=PTRACER))
    a, b, c = (hg.render(s, spp=SPP, seed=seed).numpy() for seed in (7, 7, 8))
    np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-6)
    assert not np.allclose(a, c, rtol=1e-3, atol=1e-6)


def test_ptracer_with_an_orthographic_sensor_is_refused_on_cuda_as_on_the_cpu():
    ortho = _cbox()
    ortho["sensor"] = {
        "type": "orthographic",
        "to_world": ortho["sensor"]["to_world"],
        "film": ortho["sensor"]["film"],
    }
    refusal = r'the "ptracer" integrator needs a "perspective" sensor'
    for variant in ("cuda_rgb", "cpu_rgb"):
        hg.set_variant(variant)
        plain = hg.load_dict(ortho)
        with pytest.raises(hg.RenderError, match=refusal):
            # (the CPU reports it when the image is read)
            hg.render(plain, spp=1, integrator=hg.load_dict(PTRACER)).numpy()
        # the same scene with its own integrator renders
        assert hg.render(plain, spp=1).numpy().shape == (RES, RES, 3)
    hg.set_variant("cuda_rgb")
