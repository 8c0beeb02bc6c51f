"""The parts of Mitsuba's Python API that its tutorials use: TensorXf arithmetic
(checked against NumPy), value types and transforms (against explicit matrix
algebra), lone plugins and render(sensor=, integrator=) (against the same scene with
the plugin inside), parameters, Bitmap conversions (against the sRGB formulas),
multi-channel EXR and dict_to_xml (round trips)."""

import operator

import numpy as np
import pytest

import heliograph as hg

RNG = np.random.default_rng(13)


def _tensor_pair(shape_a, shape_b):
    a = RNG.uniform(0.5, 2.0, shape_a).astype(np.float32)
    b = RNG.uniform(0.5, 2.0, shape_b).astype(np.float32)
    return a, b


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
          operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shapes", [((4, 5, 3), (4, 5, 3)), ((4, 5, 3), (3,)), ((4, 1, 3), (5, 1)), ((2, 3), ())])
def test_binary_operators_match_numpy_with_broadcasting(op, shapes):
    a, b = _tensor_pair(*shapes)
    b.flat[0] = a.flat[0]  # equality is exercised
    want = op(a, b).astype(np.float32)
    for x, y in [(hg.TensorXf(a), hg.TensorXf(b)), (hg.TensorXf(a), b), (a, hg.TensorXf(b))]:
        r = op(x, y)
        assert isinstance(r, hg.TensorXf) and r.shape == want.shape and r.dtype == np.float32
        np.testing.assert_allclose(np.array(r), want, rtol=1e-6)
    # Python numbers on either side
    np.testing.assert_allclose(np.array(op(hg.TensorXf(a), 1.5)), op(a, np.float32(1.5)).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(np.array(op(1.5, hg.TensorXf(a))), op(np.float32(1.5), a).astype(np.float32), rtol=1e-6)


def test_unary_operators_ufuncs_and_in_place_forms():
    a = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
    t = hg.TensorXf(a)
    np.testing.assert_array_equal(np.array(-t), -a)
    np.testing.assert_array_equal(np.array(abs(t)), np.abs(a))
    for f in [np.exp, np.sin, np.sqrt, np.floor, np.tanh]:
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(np.array(f(t)), f(a), rtol=1e-6, equal_nan=True)
    r = np.maximum(t, 0.25)
    assert isinstance(r, hg.TensorXf)
    np.testing.assert_array_equal(np.array(r), np.maximum(a, np.float32(0.25)))
    np.testing.assert_allclose(np.array(np.arctan2(t, hg.TensorXf(a[::-1].copy()))), np.arctan2(a, a[::-1]), rtol=1e-6)
    u = t
    u += 1
    u *= hg.TensorXf(a)
    np.testing.assert_allclose(np.array(u), (a + 1) * a, rtol=1e-6)
    np.testing.assert_array_equal(np.array(t), a)  # the original is unchanged
    img = hg.TensorXf(np.abs(a))
    np.testing.assert_allclose(np.array(img ** (1.0 / 2.2)), np.abs(a) ** np.float32(1 / 2.2), rtol=1e-6)


def test_indexing_slicing_masks_and_assignment_match_numpy():
    a = RNG.uniform(0, 1, (6, 5, 3)).astype(np.float32)
    t = hg.TensorXf(a)
    assert t[2, 3, 1] == a[2, 3, 1] and isinstance(t[2, 3, 1], float)
    s = t[1:4, ::2]
    assert isinstance(s, hg.TensorXf)
    np.testing.assert_array_equal(np.array(s), a[1:4, ::2])
    np.testing.assert_array_equal(np.array(t[t > 0.5]), a[a > 0.5])
    exported = t.numpy()
    t[:3, :3, :] = 0.0
    t[t > 0.9] = 1.0
    want = a.copy()
    want[:3, :3, :] = 0.0
    want[want > 0.9] = 1.0
    np.testing.assert_array_equal(np.array(t), want)
    np.testing.assert_array_equal(exported, a)  # arrays exported before keep their values
    with pytest.raises(TypeError, match="'value' must be a number or an array, got str"):
        t[0] = "x"


def test_bad_operands_are_clear_errors():
    t = hg.TensorXf(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"TensorXf add: the operands' shapes \(2, 3\) and \(4,\) do not broadcast"):
        t + np.ones(4)
    with pytest.raises(TypeError):
        t + "text"
    with pytest.raises(TypeError):
        t * {"a": 1}
    with pytest.raises(TypeError, match="keyword arguments"):
        np.add(t, 1, out=np.empty((2, 3), np.float32))
    assert (t == "text") is False


def test_value_types_convert_to_numpy_and_do_arithmetic():
    p, q = hg.ScalarPoint3f(1, 2, 3), hg.ScalarPoint3f([0.5, 0.5, 0.5])
    d = p - q
    assert isinstance(d, hg.ScalarVector3f)  # point - point is a vector, as in Mitsuba
    np.testing.assert_array_equal(np.array(d), [0.5, 1.5, 2.5])
    assert isinstance(p + d, hg.ScalarPoint3f) and isinstance(2 * p, hg.ScalarPoint3f)
    np.testing.assert_array_equal(np.array(p * [1, 0, 2]), [1, 0, 6])
    assert (p.x, p.y, p.z) == (1, 2, 3) and list(p) == [1, 2, 3] and len(p) == 3
    c = hg.Color3f(0.1, 0.2, 0.3) * [1.5, 0.2, 0.2]
    assert isinstance(c, hg.Color3f)
    np.testing.assert_allclose(np.array(c), [0.15, 0.04, 0.06])
    many = hg.Point3f(np.arange(12.0).reshape(3, 4))
    assert many.shape == (3, 4)
    np.testing.assert_array_equal(np.array(many + [1, 2, 3]), np.arange(12.0).reshape(3, 4) + [[1], [2], [3]])
    f = hg.Float(1, 2, 3)
    assert isinstance(f, hg.TensorXf) and f.shape == (3,)
    with pytest.raises(ValueError, match=r"ScalarPoint3f: expected shape \(3,\), got shape \(2,\)"):
        hg.ScalarPoint3f([1, 2])
    with pytest.raises(TypeError, match="ScalarVector3f\\(\\) takes one array-like or 3 components, got 2"):
        hg.ScalarVector3f(1, 2)


def test_transforms_apply_to_points_vectors_and_normals_as_matrices_do():
    T = hg.ScalarTransform4f().translate([1, 2, 3]).rotate([0, 0, 1], 30).scale([2, 1, 0.5])
    m = np.array(T)
    p = hg.ScalarPoint3f(0.3, -0.2, 0.7)
    tp = T @ p
    assert isinstance(tp, hg.ScalarPoint3f)
    np.testing.assert_allclose(np.array(tp), (m @ [0.3, -0.2, 0.7, 1])[:3])
    tv = T @ hg.ScalarVector3f(0.3, -0.2, 0.7)
    assert isinstance(tv, hg.ScalarVector3f)
    np.testing.assert_allclose(np.array(tv), m[:3, :3] @ [0.3, -0.2, 0.7])
    tn = T @ hg.ScalarNormal3f(0, 0, 1)
    np.testing.assert_allclose(np.array(tn), np.linalg.inv(m[:3, :3]).T @ [0, 0, 1])
    many = T @ hg.Point3f(np.eye(3))
    np.testing.assert_allclose(np.array(many), (m @ np.vstack([np.eye(3), np.ones(3)]))[:3])
    assert isinstance(hg.Transform4f() @ hg.Transform4f().translate([1, 0, 0]), hg.Transform4f)
    # the multi-view tutorial's camera origin: rotations then a point
    o = hg.ScalarTransform4f().rotate([0, 0, 1], 20).rotate([0, 1, 0], 60) @ hg.ScalarPoint3f([0, 0, 12])
    t, f = np.radians(60), np.radians(20)
    np.testing.assert_allclose(np.array(o), [12 * np.sin(t) * np.cos(f), 12 * np.sin(t) * np.sin(f), 12 * np.cos(t)], atol=1e-12)
    with pytest.raises(ValueError, match=r"'x' must be a transform or 3 coordinates .* got shape \(2,\)"):
        T @ [1, 2]


def test_frame3f_is_orthonormal_and_round_trips():
    for n in [[0, 0, 1], [0, 0, -1], [1, 2, 3], [-0.3, 0.1, -0.9]]:
        f = hg.Frame3f(n)
        m = np.stack([np.array(f.s), np.array(f.t), np.array(f.n)])
        np.testing.assert_allclose(m @ m.T, np.eye(3), atol=1e-12)
        np.testing.assert_allclose(np.array(f.n), np.array(n) / np.linalg.norm(n))
        np.testing.assert_allclose(np.linalg.det(m), 1.0)  # right handed
        v = [0.2, -0.5, 0.7]
        np.testing.assert_allclose(np.array(f.to_world(f.to_local(v))), v, atol=1e-12)
        np.testing.assert_allclose(np.array(f.to_local(f.n)), [0, 0, 1], atol=1e-12)
    with pytest.raises(ValueError, match="'n' must be a non-zero finite vector"):
        hg.Frame3f([0, 0, 0])


def _scene(**extra):
    d = {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3},
        "sensor": {"type": "perspective", "fov": 40,
                   "to_world": hg.ScalarTransform4f().look_at(origin=[0, -4, 1], target=[0, 0, 0], up=[0, 0, 1]),
                   "film": {"type": "hdrfilm", "width": 24, "height": 16}},
        "sphere": {"type": "sphere", "center": [0.5, 0, 0], "radius": 0.75,
                   "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.6, 0.5, 0.4]}}},
        "light": {"type": "point", "position": [0, -3, 3], "intensity": {"type": "rgb", "value": 20.0}},
        "env": {"type": "constant", "radiance": {"type": "rgb", "value": 0.2}},
    }
    d.update(extra)
    return d


def test_render_with_a_lone_sensor_equals_the_scene_with_that_sensor():
    hg.set_variant("scalar_rgb")
    sensor_dict = {"type": "perspective", "fov": 30,
                   "to_world": hg.ScalarTransform4f().look_at(origin=hg.ScalarPoint3f(3, -3, 2), target=[0, 0, 0], up=[0, 0, 1]),
                   "sampler": {"type": "independent", "sample_count": 5},
                   "film": {"type": "hdrfilm", "width": 20, "height": 12, "rfilter": {"type": "tent"}}}
    sensor = hg.load_dict(sensor_dict)
    assert isinstance(sensor, hg.Sensor)
    assert list(sensor.film().size()) == [20, 12] and list(sensor.film().crop_size()) == [20, 12]
    np.testing.assert_allclose(np.array(sensor.world_transform()), np.array(sensor_dict["to_world"]), atol=1e-6)
    scene = hg.load_dict(_scene())
    inside = hg.load_dict(_scene(sensor=sensor_dict))
    got = hg.render(scene, sensor=sensor, seed=3)  # spp: the sensor's sampler (5)
    assert got.shape[:2] == (12, 20)
    np.testing.assert_array_equal(np.array(got), np.array(hg.render(inside, seed=3)))
    np.testing.assert_array_equal(np.array(hg.render(scene, sensor=0, seed=3, spp=2)), np.array(hg.render(scene, seed=3, spp=2)))
    bmp = sensor.film().bitmap()  # the last image of that film (`got` is alive)
    np.testing.assert_array_equal(np.array(bmp), np.array(got))


def test_render_with_a_lone_integrator_equals_the_scene_with_it():
    integ = hg.load_dict({"type": "direct"})
    assert isinstance(integ, hg.Integrator)
    scene = hg.load_dict(_scene())
    inside = hg.load_dict(_scene(integrator={"type": "direct"}))
    np.testing.assert_array_equal(np.array(hg.render(scene, integrator=integ, spp=3, seed=1)),
                                  np.array(hg.render(inside, spp=3, seed=1)))


def test_lone_plugins_of_every_category_and_their_errors():
    for d, cls in [({"type": "diffuse"}, hg.BSDF), ({"type": "sphere"}, hg.Shape), ({"type": "point"}, hg.Emitter),
                   ({"type": "checkerboard"}, hg.Texture), ({"type": "box"}, hg.ReconstructionFilter)]:
        assert isinstance(hg.load_dict(d), cls)
    # a lone plugin can be placed into a scene dict
    bsdf = hg.load_dict({"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.6, 0.5, 0.4]}})
    a = hg.load_dict(_scene(sphere={"type": "sphere", "center": [0.5, 0, 0], "radius": 0.75, "bsdf": bsdf}))
    np.testing.assert_array_equal(np.array(hg.render(a, spp=2)), np.array(hg.render(hg.load_dict(_scene()), spp=2)))
    with pytest.raises(hg.SceneError, match=r'unknown plugin type "difuse"'):
        hg.load_dict({"type": "difuse"})
    with pytest.raises(hg.SceneError, match="unknown parameter|has no parameter"):
        hg.load_dict({"type": "diffuse", "reflectanse": 0.5})


def test_scene_objects_and_bbox():
    scene = hg.load_dict(_scene())
    (sensor,) = scene.sensors()
    assert list(sensor.film().size()) == [24, 16]
    assert len(scene.emitters()) == 2 and len(scene.shapes()) == 1
    assert isinstance(scene.integrator(), hg.Integrator)
    box = scene.bbox()
    np.testing.assert_allclose(np.array(box.min), [-0.25, -0.75, -0.75], atol=1e-5)
    np.testing.assert_allclose(np.array(box.max), [1.25, 0.75, 0.75], atol=1e-5)


def test_parameters_in_place_arithmetic_and_update_with_values():
    scene = hg.load_dict(_scene())
    p = hg.traverse(scene)
    assert isinstance(p["light.position"], hg.ScalarPoint3f)
    assert isinstance(p["light.intensity.value"], hg.ScalarColor3f)
    p["light.intensity.value"] *= [1.5, 0.2, 0.2]
    p["light.position"] += [0, 0, 1]
    p.update()
    np.testing.assert_allclose(np.array(p["light.intensity.value"]), [30, 4, 4], rtol=1e-6)
    np.testing.assert_allclose(np.array(p["light.position"]), [0, -3, 4], rtol=1e-6)
    # update(values): a dict, or anything with items()
    a, b = hg.load_dict(_scene()), hg.load_dict(_scene())
    pa, pb = hg.traverse(a), hg.traverse(b)
    pa["env.radiance.value"] = [0.5, 0.1, 0.1]
    pa.update()
    assert pb.update({"env.radiance.value": [0.5, 0.1, 0.1]}) == ["env.radiance.value"]
    np.testing.assert_array_equal(np.array(hg.render(a, spp=2)), np.array(hg.render(b, spp=2)))

    class Items:
        def items(self):
            return [("env.radiance.value", [0.2, 0.2, 0.2])]

    assert pb.update(Items()) == ["env.radiance.value"]
    with pytest.raises(TypeError, match="'values' must be a dict or have items\\(\\), got int"):
        pb.update(3)
    with pytest.raises(KeyError):
        pb.update({"nope": 1.0})


def _srgb(x):
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(np.maximum(x, 0), 1 / 2.4) - 0.055)


def test_bitmap_convert_follows_the_srgb_and_luminance_formulas():
    lin = RNG.uniform(0, 1, (4, 5, 3)).astype(np.float32)
    b = hg.Bitmap(lin)
    assert (b.pixel_format(), b.component_format(), b.srgb_gamma()) == (hg.Bitmap.PixelFormat.RGB, hg.Struct.Type.Float32, False)
    assert list(b.size()) == [5, 4]
    u8 = b.convert(hg.Bitmap.PixelFormat.RGB, hg.Struct.Type.UInt8, True)
    np.testing.assert_array_equal(np.array(u8), np.clip(np.rint(_srgb(lin.astype(np.float64)) * 255), 0, 255))
    enc = b.convert(pixel_format=hg.Bitmap.PixelFormat.RGB, component_format=hg.Struct.Type.Float32, srgb_gamma=True)
    np.testing.assert_allclose(np.array(enc), _srgb(lin.astype(np.float64)), rtol=1e-6)
    back = enc.convert(srgb_gamma=False)
    np.testing.assert_allclose(np.array(back), lin, rtol=1e-5, atol=1e-7)
    y = b.convert(hg.Bitmap.PixelFormat.Y)
    np.testing.assert_allclose(np.array(y)[..., 0], lin @ [0.212671, 0.715160, 0.072169], rtol=1e-6)
    rgba = b.convert(hg.Bitmap.PixelFormat.RGBA)
    assert rgba.channel_count() == 4 and np.all(np.array(rgba)[..., 3] == 1)
    with pytest.raises(TypeError, match="'component_format' must be a Struct.Type"):
        b.convert(component_format="float32")
    b.metadata()["test"] = "foo"
    r = repr(b)
    assert "pixel_format = rgb" in r and "float32 G; // @4" in r and 'test => "foo"' in r


def test_split_multichannel_exr_and_write_formats(tmp_path):
    names = ["R", "G", "B", "depth.T", "n.X", "n.Y", "n.Z"]
    data = RNG.uniform(0, 1, (6, 4, 7)).astype(np.float32)
    b = hg.Bitmap(data, channel_names=names)
    assert b.pixel_format() == hg.Bitmap.PixelFormat.MultiChannel
    parts = dict(b.split())
    assert set(parts) == {"<root>", "depth", "n"}
    np.testing.assert_array_equal(np.array(parts["n"]), data[..., 4:7])
    assert parts["n"].channel_names() == ["X", "Y", "Z"]
    b.write(tmp_path / "aov.exr")
    back = hg.Bitmap(tmp_path / "aov.exr")
    assert back.channel_names() == names
    np.testing.assert_array_equal(np.array(back), data)
    with pytest.raises(ValueError, match="only be written as .exr"):
        b.write(tmp_path / "aov.png")
    with pytest.raises(ValueError, match="'channel_names' has 2 names, but the data has 7 channels"):
        hg.Bitmap(data, channel_names=["a", "b"])
    rgb = hg.Bitmap(data[..., :3])
    for ext in ["png", "jpg"]:
        hg.util.write_bitmap(tmp_path / f"x.{ext}", rgb)
        u8 = hg.Bitmap(tmp_path / f"x.{ext}")
        assert u8.component_format() == hg.Struct.Type.UInt8 and u8.srgb_gamma()
        err = np.abs(np.array(u8).astype(int) - np.rint(_srgb(data[..., :3]) * 255))
        if ext == "png":
            assert err.max() <= 1
        else:  # JPEG is lossy (and subsamples colour): noise survives only on average
            assert err.mean() < 25
    disp = hg.util.convert_to_bitmap(hg.TensorXf(data[..., :3]))
    assert disp.component_format() == hg.Struct.Type.UInt8
    np.testing.assert_array_equal(np.array(disp), np.clip(np.rint(_srgb(data[..., :3].astype(np.float64)) * 255), 0, 255))


def test_resample_with_a_box_filter_averages_pixel_blocks():
    a = RNG.uniform(0, 1, (8, 6, 3)).astype(np.float32)
    small = hg.Bitmap(a).resample([3, 4], hg.load_dict({"type": "box"}))
    assert list(small.size()) == [3, 4]
    np.testing.assert_allclose(np.array(small), a.reshape(4, 2, 3, 2, 3).mean(axis=(1, 3)), rtol=1e-5)


def _filtered(a, n, weight, reach):
    """``a`` (one row) resampled to ``n`` samples, as Mitsuba's filters define the weights
    (the filter widened by the downscaling factor)."""
    m = a.size
    scale = max(m / n, 1.0)
    out = []
    for i in range(n):
        c = (i + 0.5) * m / n
        x = (np.arange(m) + 0.5 - c) / scale
        w = np.where(np.abs(x) <= reach, weight(x), 0.0)
        out.append(np.dot(w, a) / w.sum())
    return np.array(out)


@pytest.mark.parametrize("rfilter,weight,reach", [
    ({"type": "tent", "radius": 2.0}, lambda x: np.maximum(0.0, 1 - np.abs(x) / 2), 2.0),
    ({"type": "gaussian"}, lambda x: np.maximum(0.0, np.exp(-2 * x * x) - np.exp(-8.0)), 2.0),
    ({"type": "box", "radius": 1.5}, lambda x: np.ones_like(x), 1.5),
])
def test_resample_weights_follow_the_filter_the_dict_describes(rfilter, weight, reach):
    row = RNG.uniform(0, 1, 23)
    for n in (5, 40):
        got = np.array(hg.Bitmap(row[None, :, None].astype(np.float32)).resample([n, 1], hg.load_dict(rfilter)))
        np.testing.assert_allclose(got[0, :, 0], _filtered(row.astype(np.float32), n, weight, reach), rtol=2e-6)


def test_an_8bit_bitmap_texture_decodes_as_the_same_array_given_directly():
    u8 = RNG.integers(0, 256, (5, 7, 3)).astype(np.uint8)

    def render(data):
        d = _scene()
        d["sphere"]["bsdf"]["reflectance"] = {"type": "bitmap", "data": data}
        return np.array(hg.render(hg.load_dict(d), spp=2, seed=1))

    np.testing.assert_array_equal(render(hg.Bitmap(u8)), render(u8))
    lin = np.array(hg.Bitmap(u8).convert(component_format=hg.Struct.Type.Float32, srgb_gamma=False))
    np.testing.assert_allclose(lin, np.where(u8 <= 10, u8 / 255 / 12.92, ((u8 / 255 + 0.055) / 1.055) ** 2.4), rtol=1e-6)


def test_transform_inverse_of_a_singular_matrix_is_refused():
    with pytest.raises(ValueError, match="inverse: the matrix is singular"):
        hg.ScalarTransform4f(np.diag([1.0, 0.0, 1.0, 1.0])).inverse()
    with pytest.raises(ValueError, match="normal: the matrix is singular"):
        hg.ScalarTransform4f(np.diag([1.0, 0.0, 1.0, 1.0])) @ hg.ScalarNormal3f([0, 0, 1])


def test_dict_to_xml_round_trips_to_the_same_render(tmp_path):
    d = _scene()
    hg.xml.dict_to_xml(d, tmp_path / "s.xml")
    a = hg.render(hg.load_dict(d), spp=3, seed=4)
    b = hg.render(hg.load_file(tmp_path / "s.xml"), spp=3, seed=4)
    np.testing.assert_allclose(np.array(b), np.array(a), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="'type': 'scene'"):
        hg.xml.dict_to_xml({"type": "sphere"}, tmp_path / "x.xml")


def test_the_readme_python_example_runs_with_numpy_alone(tmp_path, monkeypatch):
    import builtins
    import os

    readme = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        block = f.read().split("## Python\n\n```python\n", 1)[1].split("```", 1)[0]
    real_import = builtins.__import__

    def no_frameworks(name, *a, **k):
        if name.split(".")[0] in ("jax", "torch", "tensorflow", "cupy"):
            raise ImportError(f"{name} is not installed (this test hides it)")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_frameworks)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "seed.png").stat().st_size > 0
