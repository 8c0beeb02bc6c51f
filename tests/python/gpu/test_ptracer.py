"""The ``ptracer`` integrator under cuda_rgb. The CUDA backend does not render it: a
scene with one, and a lone ``ptracer`` integrator passed to ``render``, are refused with a
message that names the CPU variants; the same scene then renders under cpu_rgb."""

import numpy as np
import pytest

import heliograph as hg

PTRACER = {"type": "ptracer", "max_depth": 3}


def _cbox(**extra):
    d = hg.cornell_box()
    d["sensor"]["film"].update(width=16, height=16)
    d.update(extra)
    return d


def test_ptracer_renders_are_refused_on_cuda_naming_the_cpu_variants():
    refusal = r'the CUDA backend does not render the "ptracer" integrator.*"cpu_rgb"'
    in_scene = hg.load_dict(_cbox(integrator=PTRACER))
    with pytest.raises(hg.RenderError, match=refusal):
        hg.render(in_scene, spp=1)
    plain = hg.load_dict(_cbox())
    with pytest.raises(hg.RenderError, match=refusal):
        hg.render(plain, spp=1, integrator=hg.load_dict(PTRACER))
    # the plain scene still renders on the GPU, and the ptracer scene on the CPU
    assert hg.render(plain, spp=1).numpy().shape == (16, 16, 3)
    hg.set_variant("cpu_rgb")
    img = hg.render(in_scene, spp=4).numpy()
    assert img.shape == (16, 16, 3) and np.all(np.isfinite(img)) and img.max() > 0
