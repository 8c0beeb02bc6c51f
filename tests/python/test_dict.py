"""load_dict on hostile dicts (python/src/dict.rs): cycles, absurd nesting and
non-finite numbers give a SceneError naming the key path, never a crash.

The cases that used to overflow the stack run in a child interpreter, so a
regression fails one test instead of killing the test run."""

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import heliograph as hg

NAN, INF = float("nan"), float("inf")


def _scene(**parts):
    d = {
        "type": "scene",
        "shape": {"type": "sphere", "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": 0.5}}},
    }
    d.update(parts)
    return d


def _load_in_child(setup):
    """Runs ``setup`` (which builds ``d``) and load_dict(d) in a fresh interpreter;
    returns (exit status, the SceneError text or "loaded")."""
    code = textwrap.dedent(
        """
        import heliograph as hg
        def scene():
            return {"type": "scene", "shape": {"type": "sphere", "bsdf": {"type": "diffuse",
                    "reflectance": {"type": "rgb", "value": 0.5}}}}
        """
    ) + textwrap.dedent(setup) + textwrap.dedent(
        """
        try:
            hg.load_dict(d)
            print("loaded")
        except hg.SceneError as e:
            print(e)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


CYCLES = [
    # the bsdf's reflectance is the shape dict that contains the bsdf
    ("d = scene(); d['shape']['bsdf']['reflectance'] = d['shape']",
     r"<dict>\[shape.bsdf.reflectance\]: reference cycle: this is the same dict as <dict>\[shape\]"),
    # a texture whose color0 is itself
    ("d = scene(); t = {'type': 'checkerboard'}; t['color0'] = t; d['shape']['bsdf']['reflectance'] = t",
     r"<dict>\[shape.bsdf.reflectance.color0\]: reference cycle: .* <dict>\[shape.bsdf.reflectance\]"),
    # the scene dict inside itself
    ("d = scene(); d['shape']['bsdf']['reflectance'] = d",
     r"<dict>\[shape.bsdf.reflectance\]: reference cycle: this is the same dict as <dict> which"),
]


@pytest.mark.parametrize("setup,pattern", CYCLES)
def test_a_dict_containing_itself_is_a_scene_error_naming_the_path(setup, pattern):
    rc, out = _load_in_child(setup)
    assert rc == 0, f"the interpreter died (exit status {rc}): {out[-2000:]}"
    assert re.search(pattern, out), out


def test_a_dict_nested_a_hundred_thousand_deep_is_a_scene_error():
    setup = """
        d = scene(); cur = d['shape']
        for _ in range(100_000):
            nxt = {'type': 'diffuse'}; cur['inner'] = nxt; cur = nxt
    """
    rc, out = _load_in_child(setup)
    assert rc == 0, f"the interpreter died (exit status {rc}): {out[-2000:]}"
    assert "dicts are nested more than 128 levels deep" in out, out
    assert "<dict>[shape" + ".inner" * 127 + "]" in out, out


def test_nesting_up_to_the_limit_is_accepted_by_the_dict_layer():
    # 127 dicts below the scene: the dict layer accepts it; the builder then says
    # what is wrong with the content (a nested bsdf is not a parameter of diffuse).
    d = _scene()
    cur = d["shape"]["bsdf"]
    for _ in range(125):
        nxt = {"type": "diffuse"}
        cur["inner"] = nxt
        cur = nxt
    with pytest.raises(hg.SceneError) as e:
        hg.load_dict(d)
    assert "nested more than" not in str(e.value)


def test_shared_dicts_are_not_cycles():
    rgb = {"type": "rgb", "value": [0.2, 0.4, 0.6]}
    d = _scene(
        a={"type": "sphere", "bsdf": {"type": "diffuse", "reflectance": rgb}},
        b={"type": "sphere", "center": [3, 0, 0], "bsdf": {"type": "diffuse", "reflectance": rgb}},
    )
    hg.load_dict(d)


def _mutated_transform(value):
    t = hg.ScalarTransform4f()
    t.matrix[0, 3] = value  # the constructor checked; a later edit is not checked
    return t


NON_FINITE = [
    (_scene(big={"type": "sphere", "radius": 1e300}), r"<dict>\[big.radius\]: 1e300 is not a finite number"),
    (_scene(s={"type": "sphere", "radius": NAN}), r"<dict>\[s.radius\]: NaN is not a finite number"),
    (_scene(s={"type": "sphere", "to_world": _mutated_transform(INF)}),
     r"<dict>\[s.to_world\]: the transform matrix has an entry inf"),
    (_scene(s={"type": "sphere", "to_world": _mutated_transform(NAN)}),
     r"<dict>\[s.to_world\]: the transform matrix has an entry NaN"),
    (_scene(s={"type": "sphere",
               "to_world": hg.ScalarTransform4f.scale([1e30] * 3) @ hg.ScalarTransform4f.scale([1e30] * 3)}),
     r"<dict>\[s.to_world\]: the transform matrix has an entry 1(\.0+1)?e60"),
    (_scene(s={"type": "sphere", "to_world": hg.ScalarTransform4f.scale([1e-30] * 3)}),
     r"<dict>\[s.to_world\]: the transform matrix is singular"),
    (_scene(m={"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.5, NAN, 0.5]}}),
     r"<dict>\[m.reflectance\]: \[0.5, NaN, 0.5\] has a component that is not a finite number"),
    (_scene(m={"type": "diffuse", "reflectance": {"type": "rgb", "value": INF}}),
     r"<dict>\[m.reflectance\]: \[inf, inf, inf\]"),
    (_scene(m={"type": "diffuse", "reflectance": hg.ScalarColor3f(1e300)}),
     r"<dict>\[m.reflectance\]: \[1e300, 1e300, 1e300\] has a component that is not a finite number"),
    (_scene(s={"type": "sphere", "center": [0, NAN, 0]}), r"<dict>\[s.center\]: \[0.0, NaN, 0.0\]"),
    (_scene(s={"type": "sphere", "center": np.array([1e300, 0, 0])}), r"<dict>\[s.center\]: \[inf, 0.0, 0.0\]"),
]


@pytest.mark.parametrize("d,pattern", NON_FINITE)
def test_non_finite_numbers_are_refused_where_they_are_converted(d, pattern):
    with pytest.raises(hg.SceneError, match=pattern):
        hg.load_dict(d)


def test_large_finite_values_and_unbounded_depth_stay_legal():
    d = _scene(
        integrator={"type": "path", "max_depth": -1},
        sensor={"type": "perspective", "far_clip": 1e30, "film": {"type": "hdrfilm", "width": 4, "height": 4}},
    )
    hg.load_dict(d)


def test_a_transform_parameter_update_names_the_key():
    scene = hg.load_dict(
        _scene(sensor={"type": "perspective", "film": {"type": "hdrfilm", "width": 4, "height": 4}})
    )
    params = hg.traverse(scene)
    key = next(k for k in params.keys() if k.endswith("to_world"))
    with pytest.raises(hg.SceneError, match=rf'<parameters>: parameter "{key}": the transform matrix has an entry'):
        params[key] = _mutated_transform(NAN)


REF_CYCLES = [
    ("d = {'type': 'scene', 't': {'type': 'checkerboard', 'color0': {'type': 'ref', 'id': 't'}}}",
     [r"<dict>\[t\]", r"<dict>\[t.color0\]"]),
    ("d = {'type': 'scene', 'b': {'type': 'twosided', 'bsdf': {'type': 'ref', 'id': 'b'}},\n"
     "     's': {'type': 'sphere', 'bsdf': {'type': 'ref', 'id': 'b'}}}",
     [r"<dict>\[b\]", r"<dict>\[b.bsdf\]"]),
    ("d = {'type': 'scene', 'a': {'type': 'checkerboard', 'color0': {'type': 'ref', 'id': 'b'}},\n"
     "     'b': {'type': 'checkerboard', 'color1': {'type': 'ref', 'id': 'a'}}}",
     [r"<dict>\[a\]", r"<dict>\[a.color0\]", r"<dict>\[b\]", r"<dict>\[b.color1\]"]),
]


@pytest.mark.parametrize("setup,locations", REF_CYCLES)
def test_ref_cycles_between_objects_are_scene_errors_naming_every_location(setup, locations):
    rc, out = _load_in_child(setup)
    assert rc == 0, f"the interpreter died (exit status {rc}): {out[-2000:]}"
    assert "cycle" in out, out
    for loc in locations:
        assert re.search(loc, out), (loc, out)


def test_spectra_in_dicts_convert_as_in_mitsuba(tmp_path):
    # Values Mitsuba 3.9.1 (scalar_rgb) gives the same parameters (read with mi.traverse).
    spd = tmp_path / "s.spd"
    spd.write_text("# wavelength value\n380 0.1\n\n450 0.9\n  520 0.3\n600 0.05\n780 1.2\n")
    pairs = [(400, 0.78), (500, 0.78), (600, 0.78), (700, 0.78)]
    d = {
        "type": "scene",
        "s1": {"type": "sphere", "bsdf": {"type": "diffuse", "reflectance": {"type": "spectrum", "value": pairs}}},
        "s2": {
            "type": "sphere",
            "bsdf": {"type": "conductor", "eta": {"type": "spectrum", "filename": str(spd)}},
            "emitter": {"type": "area", "radiance": {"type": "spectrum", "value": 1.0}},
        },
    }
    params = hg.traverse(hg.load_dict(d))
    for key, want in [
        ("s1.bsdf.reflectance.value", [0.7763668, 0.77981, 0.7760291]),
        ("s2.bsdf.eta.value", [0.10060823, 0.22145797, 0.7987273]),
        ("s2.emitter.radiance.value", [1.2047939, 0.948291, 0.908916]),
    ]:
        np.testing.assert_allclose(np.ravel(np.asarray(params[key])), want, rtol=1e-5, err_msg=key)
    for bad, pattern in [
        ({"type": "spectrum", "value": [(500, 1.0), (400, 1.0)]}, "must increase"),
        ({"type": "spectrum", "value": "x"}, "number or a list of"),
        ({"type": "spectrum", "value": 1.0, "filename": "a.spd"}, "unexpected key|not both"),
        ({"type": "spectrum", "filename": str(tmp_path / "none.spd")}, "cannot read"),
    ]:
        with pytest.raises(hg.SceneError, match=pattern):
            hg.load_dict(_scene(shape={"type": "sphere", "bsdf": {"type": "diffuse", "reflectance": bad}}))
