"""The ``aov`` integrator under cuda_rgb. The CUDA backend does not render it: a scene
with one, and a lone ``aov`` integrator passed to ``render`` (the way Mitsuba's tutorial
``image_io_and_manipulation`` does), are refused with a message that names the CPU
variants; the same scene then renders under cpu_rgb."""

import numpy as np
import pytest

import heliograph as hg

AOV = {"type": "aov", "aovs": "albedo:albedo,normals:sh_normal", "integrator": {"type": "path"}}


def _cbox(**extra):
    d = hg.cornell_box()
    d["sensor"]["film"].update(width=16, height=16)
    d.update(extra)
    return d


def test_aov_renders_are_refused_on_cuda_naming_the_cpu_variants():
    refusal = r'the CUDA backend does not render the "aov" integrator.*"cpu_rgb"'
    in_scene = hg.load_dict(_cbox(integrator=AOV))
    with pytest.raises(hg.RenderError, match=refusal):
        hg.render(in_scene, spp=1)
    plain = hg.load_dict(_cbox())
    with pytest.raises(hg.RenderError, match=refusal):
        hg.render(plain, spp=1, integrator=hg.load_dict(AOV))
    # the plain scene still renders on the GPU, and the aov scene on the CPU
    assert hg.render(plain, spp=1).numpy().shape == (16, 16, 3)
    hg.set_variant("cpu_rgb")
    img = hg.render(in_scene, spp=1).numpy()
    assert img.shape == (16, 16, 9) and np.all(np.isfinite(img))
