"""The ``aov`` integrator from Python, as Mitsuba 3's tutorial
``how_to_guides/image_io_and_manipulation`` uses it: ``render`` returns the base and AOV
channels, ``sensor.film().bitmap()`` holds every film channel under Mitsuba's names, and
``split()`` groups them. The AOV values are compared with Mitsuba 3.9.1's
(references/aov_reference.npz, made by references/make_aov_reference.py) per pixel and
channel: a Welch t-test of the mean of BATCHES heliograph renders against Mitsuba's mean
and standard error, plus a floor for float round-off on noise-free pixels, significance
Bonferroni-corrected for the number of tests.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import heliograph as hg
from conftest import ROOT
from test_seed import t_two_sided_p

REFS = os.path.join(os.path.dirname(__file__), "references")
BATCHES, SPP, ALPHA = 16, 64, 1e-3
REL_FLOOR, ABS_FLOOR = 1e-4, 1e-5

TUTORIAL_AOV = {
    "type": "aov",
    "aovs": "albedo:albedo,normals:sh_normal",
    "integrator": {"type": "path"},
}
# Mitsuba 3.9.1's sensor.film().bitmap() channels after the tutorial's render (rgb film)
TUTORIAL_FILM = ["R", "G", "B", "integrator.R", "integrator.G", "integrator.B", "integrator.A",
                 "albedo.R", "albedo.G", "albedo.B", "normals.X", "normals.Y", "normals.Z"]


def _cbox(res=24):
    d = hg.cornell_box()
    d["sensor"]["film"]["rfilter"]["type"] = "box"
    d["sensor"]["film"]["width"] = d["sensor"]["film"]["height"] = res
    return d


def test_the_tutorial_cell_renders_albedo_and_normals_next_to_the_image():
    scene = hg.load_dict(_cbox())
    integrator = hg.load_dict(TUTORIAL_AOV)
    assert isinstance(integrator, hg.Integrator)
    sensor = scene.sensors()[0]
    to_sensor = sensor.world_transform().inverse()
    np.testing.assert_allclose(np.array(to_sensor) @ np.array(sensor.world_transform()), np.eye(4), atol=1e-12)
    # Mitsuba's world_transform() of the Cornell box camera
    mitsuba = [[-1, 0, 0, 0], [0, 1, 0, 0], [0, 0, -1, 3.9], [0, 0, 0, 1]]
    np.testing.assert_allclose(np.array(sensor.world_transform()), mitsuba, atol=1e-6)

    img = hg.render(scene, spp=2, seed=5, integrator=integrator)
    assert img.shape == (24, 24, 9)  # Mitsuba: the image's R, G, B and the 6 AOV channels
    bmp = sensor.film().bitmap()
    assert bmp.channel_names() == TUTORIAL_FILM
    assert bmp.pixel_format() == hg.Bitmap.PixelFormat.MultiChannel
    parts = bmp.split()
    assert [k for k, _ in parts] == ["<root>", "albedo", "integrator", "normals"]  # Mitsuba's order
    parts = dict(parts)
    assert parts["normals"].pixel_format() == hg.Bitmap.PixelFormat.XYZ
    assert parts["integrator"].channel_names() == ["R", "G", "B", "A"]
    film, got = np.array(bmp), np.array(img)
    plain = np.array(hg.render(scene, spp=2, seed=5, integrator=hg.load_dict({"type": "path"})))
    np.testing.assert_array_equal(got[..., :3], plain, err_msg="the nested path image is a plain path render")
    np.testing.assert_array_equal(np.array(parts["<root>"]), plain)
    np.testing.assert_array_equal(film[..., 3:6], plain)
    np.testing.assert_array_equal(film[6:-6, 6:-6, 6], 1.0)  # integrator.A: rays into the box hit
    np.testing.assert_array_equal(film[..., 7:], got[..., 3:])
    # the white walls and boxes fill the centre: the albedo is their reflectance
    np.testing.assert_allclose(got[12, 12, 3:6], [0.885809, 0.698859, 0.666422], rtol=1e-6)
    # the normals of the box's walls and boxes are unit vectors, a pixel's the mean of its 2
    assert np.all(np.linalg.norm(got[6:-6, 6:-6, 6:], axis=-1) <= 1 + 1e-6)


def test_the_film_keeps_a_render_whose_tensor_was_dropped():
    # the tutorial drops render()'s result and reads the film: the dropped render is
    # cancelled, and the film develops the same render again (bit for bit)
    scene = hg.load_dict(_cbox(16))
    integrator = hg.load_dict(TUTORIAL_AOV)
    kept = np.array(hg.render(scene, spp=1, seed=2, integrator=integrator))
    hg.render(scene, spp=1, seed=2, integrator=integrator)  # dropped at once
    film = np.array(scene.sensors()[0].film().bitmap())
    assert film.shape == (16, 16, 13)
    np.testing.assert_array_equal(film[..., :3], kept[..., :3])
    np.testing.assert_array_equal(film[..., 7:], kept[..., 3:])
    # a plain render with its tensor dropped: the film is its RGB image
    plain = np.array(hg.render(scene, spp=1, seed=4))
    hg.render(scene, spp=1, seed=4)
    bmp = scene.sensors()[0].film().bitmap()
    assert bmp.channel_names() == ["R", "G", "B"]
    np.testing.assert_array_equal(np.array(bmp), plain)


def test_without_a_nested_integrator_render_returns_the_aovs_only():
    d = _cbox(8)
    d["sensor"]["film"]["pixel_format"] = "rgba"
    d["integrator"] = {"type": "aov", "aovs": "dd.y:depth,p:position,s:shape_index"}
    scene = hg.load_dict(d)
    assert scene.integrator()._dict["type"] == "aov"
    img = np.array(hg.render(scene, spp=1))
    assert img.shape == (8, 8, 5)  # as Mitsuba: the AOVs, no image channels
    bmp = scene.sensors()[0].film().bitmap()
    assert bmp.channel_names() == ["R", "G", "B", "A", "dd.y.T", "p.X", "p.Y", "p.Z", "s.I"]
    np.testing.assert_array_equal(np.array(bmp)[..., :4], 0.0)
    np.testing.assert_array_equal(np.array(bmp)[..., 4:], img)
    assert [k for k, _ in bmp.split()] == ["<root>", "dd.y", "p", "s"]


def test_bad_aov_integrators_raise_scene_errors_naming_the_problem():
    cases = [
        ({"type": "aov", "aovs": "albedo:albedo,n:normal"}, r'unknown AOV type "normal".*\(known: albedo, depth'),
        ({"type": "aov", "aovs": "albedo"}, r'entry "albedo" is not a <name>:<type> pair'),
        ({"type": "aov", "aovs": "d:dp_du"}, r'"dp_du" is not supported by heliograph'),
        ({"type": "aov"}, r'"aovs": missing'),
        ({"type": "aov", "aovs": "d:depth", "a": {"type": "path"}, "b": {"type": "direct"}},
         "at most one nested integrator in heliograph, found 2"),
        ({"type": "aov", "aovs": "d:depth", "s": {"type": "independent"}}, 'nested sampler is not used by plugin "aov"'),
    ]
    for d, match in cases:
        with pytest.raises(hg.SceneError, match=match):
            hg.load_dict(d)
    scene = dict(_cbox(8), integrator={"type": "aov", "aovs": "x:uv,y:albedo"})
    assert np.array(hg.render(hg.load_dict(scene), spp=1)).shape == (8, 8, 5), "no nested integrator is fine"


def _batches(scene, n, seed0):
    imgs = np.stack([np.array(hg.render(scene, spp=SPP, seed=seed0 + i), dtype=np.float64) for i in range(n)])
    return imgs.mean(0), imgs.std(0, ddof=1) / np.sqrt(n)


def _failures(mean, se, ref_mean, ref_se, dof):
    """(pixel, channel) tests that reject equality, Bonferroni-corrected."""
    floor = ABS_FLOOR + REL_FLOOR * np.abs(ref_mean)
    t = (mean - ref_mean) / np.sqrt(se**2 + ref_se.astype(np.float64) ** 2 + floor**2)
    limit = ALPHA / t.size
    return [(idx, float(t[idx])) for idx in zip(*np.nonzero(np.abs(t) > 4))
            if t_two_sided_p(float(t[idx]), dof) < limit]


@pytest.fixture(scope="module")
def reference_scene():
    """Mitsuba's reference, and heliograph's mean and standard error of the same scene."""
    hg.set_variant("cpu_rgb")
    scene = hg.load_file(os.path.join(REFS, "aov_scene.xml"))
    mean, se = _batches(scene, BATCHES, 0)
    return np.load(os.path.join(REFS, "aov_reference.npz")), scene, mean, se


def test_aovs_match_mitsuba_on_meshes_analytic_shapes_and_materials(reference_scene):
    ref, scene, mean, se = reference_scene
    names = scene.sensors()[0].film().bitmap().channel_names()
    assert names == list(ref["film_names"]), "Mitsuba's film channels"
    out = names[3:]  # render() returns the AOVs: no nested integrator
    assert mean.shape == ref["mean"].shape and len(out) == mean.shape[2]
    # shape_index numbers shapes in the scene's shape order, which Mitsuba does not keep
    # (its order depends on how it loaded them): compared below as a renumbering
    si = out.index("si.I")
    keep = [c for c in range(len(out)) if c != si]
    bad = _failures(mean[..., keep], se[..., keep], ref["mean"][..., keep], ref["se"][..., keep], BATCHES - 1)
    assert not bad, [(i, [out[c] for c in keep][i[2]], t) for i, t in bad[:10]]
    # where every sample of a pixel hit one shape, both name it: the names map one to one
    hg_si, mi_si = mean[..., si], ref["mean"][..., si]
    whole = (np.abs(hg_si - np.round(hg_si)) < 1e-6) & (np.abs(mi_si - np.round(mi_si)) < 1e-6)
    pairs = {(int(round(a)), int(round(b))) for a, b in zip(hg_si[whole], mi_si[whole])}
    assert len(pairs) == 6 and len({a for a, _ in pairs}) == 6 and len({b for _, b in pairs}) == 6, pairs
    assert (0, 0) in pairs, "a miss is 0 in both"


def test_the_comparison_rejects_other_conventions(reference_scene):
    # the criterion can fail: texture v flipped, depth 1 % long, the back side's normal
    ref, _, mean, se = reference_scene
    out = list(ref["film_names"])[3:]

    def rejects(c, wrong):
        return _failures(wrong, se[..., c], ref["mean"][..., c], ref["se"][..., c], BATCHES - 1)

    v, d, n = out.index("uv.V"), out.index("d.T"), out.index("n.Z")
    hit = mean[..., d] > 0
    assert rejects(v, np.where(hit, 1.0 - mean[..., v], 0.0))
    assert rejects(d, mean[..., d] * 1.01)
    assert rejects(n, -mean[..., n])


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "heliograph", *args], capture_output=True, text=True, timeout=120)


def test_the_cli_writes_every_film_channel_to_an_exr(tmp_path):
    scene = os.path.join(REFS, "aov_scene.xml")
    out = tmp_path / "aov.exr"
    r = _cli("render", scene, "--spp", "2", "--seed", "3", "--backend", "cpu", "-q", "-o", str(out))
    assert r.returncode == 0, r
    exr = hg.Bitmap(str(out))
    loaded = hg.load_file(scene)
    py = hg.render(loaded, spp=2, seed=3)
    film = loaded.sensors()[0].film().bitmap()
    assert sorted(exr.channel_names()) == sorted(film.channel_names())
    for name in film.channel_names():  # the Python film's channels, bit for bit
        a = np.array(exr)[..., exr.channel_names().index(name)]
        np.testing.assert_array_equal(a, np.array(film)[..., film.channel_names().index(name)], err_msg=name)
    del py
    png = _cli("render", scene, "--spp", "1", "--backend", "cpu", "-q", "-o", str(tmp_path / "aov.png"))
    assert png.returncode == 1 and "only an .exr output holds them all" in png.stderr, png
    assert "20 channels" in png.stderr and not (tmp_path / "aov.png").exists()
    plain = _cli("render", os.path.join(ROOT, "scenes", "seed.xml"), "-D", "res=8", "--spp", "1", "--backend", "cpu",
                 "-q", "-o", str(tmp_path / "seed.png"))
    assert plain.returncode == 0, plain
