"""Differentiable rendering through heliograph.torch and heliograph.jax (CPU backend;
the GPU's are in gpu/test_diff_cuda.py).

The truth is the finite difference of the loss with common random numbers: with the
backward pass traced with the image's own seed (``seed_grad = seed``), the gradient is
the exact derivative of that image, and a `direct` image is linear in a texture's texels,
so a central difference of two renders equals it up to rounding. A gradient scaled by
1.1 or with its sign flipped fails the criterion (checked).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import heliograph as hg
from conftest import seed_dict
from memory_trend import LONG, measure

KEY = "shape.bsdf.reflectance.data"


def scene_and_texture(res=12, tex=4):
    rng = np.random.default_rng(3)
    texture = (0.2 + 0.6 * rng.random((tex, tex, 3))).astype(np.float32)
    return hg.load_dict(seed_dict(texture, res=res, spp=4)), texture


def adjoint(shape, seed=5):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def loss_at(scene, texture, adj, spp, seed):
    params = hg.traverse(scene)
    params[KEY] = texture
    params.update()
    return float((np.array(hg.render(scene, spp=spp, seed=seed)).astype(np.float64) * adj).sum())


def central(scene, texture, adj, index, h=0.05, spp=4, seed=9):
    up, down = texture.copy(), texture.copy()
    up[index] += h
    down[index] -= h
    return (loss_at(scene, up, adj, spp, seed) - loss_at(scene, down, adj, spp, seed)) / (2 * h)


def assert_matches_finite_differences(scene, texture, grad, adj):
    order = np.argsort(-np.abs(grad).ravel())[:3]
    for flat in order:
        index = np.unravel_index(flat, grad.shape)
        fd = central(scene, texture, adj, index)
        g = float(grad[index])
        assert abs(fd) > 1e-3
        tol = 1e-3 * max(abs(g), abs(fd))
        assert abs(g - fd) <= tol, (index, g, fd)
        assert abs(1.1 * g - fd) > tol and abs(-g - fd) > tol, "the criterion has no power"


def test_torch_gradient_is_the_derivative_of_the_image():
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, texture = scene_and_texture()
    adj = adjoint((12, 12, 3))
    t = torch.tensor(texture, requires_grad=True)
    image = hgt.render(scene, {KEY: t}, spp=4, seed=9, seed_grad=9)
    assert image.shape == (12, 12, 3) and image.dtype == torch.float32
    (image * torch.from_numpy(adj)).sum().backward()
    assert_matches_finite_differences(scene, texture, t.grad.numpy(), adj)


def test_torch_gradients_of_other_dtypes_strides_and_grad_outputs():
    # the backward pass takes the incoming gradient as it comes (no detach, no
    # contiguous copy): a strided gradient, a float64 one, and grad_outputs that require
    # grad (autograd hands them over without history when create_graph is off) give the
    # gradient of the same loss; float64 values get float64 gradients
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, texture = scene_and_texture()
    adj = adjoint((12, 12, 3))

    def grad_of(weights, dtype=torch.float32):
        t = torch.tensor(texture, dtype=dtype, requires_grad=True)
        image = hgt.render(scene, {KEY: t}, spp=4, seed=9, seed_grad=9)
        (g,) = torch.autograd.grad(image, t, grad_outputs=weights(image))
        assert g.dtype == dtype
        return g.double().numpy()

    plain = grad_of(lambda im: torch.from_numpy(adj))
    # every second column of a wider array: a strided gradient
    wide = torch.from_numpy(np.repeat(adj, 2, axis=1))[:, ::2]
    assert not wide.is_contiguous()
    np.testing.assert_allclose(grad_of(lambda im: wide), plain, rtol=1e-5, atol=1e-6)
    tracked = lambda im: torch.from_numpy(adj).requires_grad_(True)  # noqa: E731
    np.testing.assert_allclose(grad_of(tracked), plain, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad_of(lambda im: torch.from_numpy(adj).double(), torch.float64), plain, rtol=1e-4)


def test_jax_gradient_matches_torch_and_works_under_jit():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    import heliograph.jax as hgj

    scene, texture = scene_and_texture()
    adj = adjoint((12, 12, 3))
    render = hgj.render_fn(scene, keys=[KEY], spp=4, seed=9, seed_grad=9)

    def loss(tex):
        return (render(tex) * adj).sum()

    value, grad = jax.value_and_grad(loss)(jnp.asarray(texture))
    assert np.isclose(float(value), loss_at(scene, texture, adj, 4, 9), rtol=1e-5)
    assert_matches_finite_differences(scene, texture, np.asarray(grad), adj)
    jitted = jax.jit(jax.value_and_grad(loss))(jnp.asarray(texture))
    np.testing.assert_allclose(np.asarray(jitted[1]), np.asarray(grad), rtol=1e-6, atol=1e-7)


def test_jax_gradients_come_in_the_values_dtype():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    import heliograph.jax as hgj

    scene, texture = scene_and_texture(res=4, tex=2)
    render = hgj.render_fn(scene, keys=[KEY], spp=2)
    with jax.enable_x64(True):
        g64 = jax.grad(lambda t: render(t).sum())(jnp.asarray(texture, jnp.float64))
        assert g64.dtype == jnp.float64
    g32 = jax.grad(lambda t: render(t).sum())(jnp.asarray(texture))
    assert g32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(g64), np.asarray(g32), rtol=1e-6)


def test_jax_runs_as_xla_custom_calls_with_vmap_and_errors_from_inside_the_call():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    import heliograph.jax as hgj
    from heliograph import _native

    scene, texture = scene_and_texture(res=8, tex=4)
    render = hgj.render_fn(scene, keys=[KEY], spp=2, seed=3, seed_grad=3)
    calls = _native._xla_calls()
    image = jax.jit(render)(jnp.asarray(texture))
    assert _native._xla_calls() == calls + 1  # the render ran as heliograph's custom call
    np.testing.assert_array_equal(np.asarray(image), np.array(hg.render(scene, spp=2, seed=3)))
    # vmap: one render per batch element, each the render of its own values
    batch = jnp.stack([jnp.asarray(texture), jnp.asarray(texture[::-1])])
    images = jax.vmap(render)(batch)
    for tex, img in zip(batch, images):
        np.testing.assert_array_equal(np.asarray(img), np.asarray(render(tex)))
    # a value the scene refuses: the error comes from inside the call, naming the key
    bad = texture.copy()
    bad[1, 2, 0] = np.nan
    with pytest.raises(Exception, match=KEY + r".*(finite|NaN)"):
        jax.jit(render)(jnp.asarray(bad)).block_until_ready()
    # the scene is unchanged by the refused value
    np.testing.assert_array_equal(np.asarray(render(jnp.asarray(texture))), np.asarray(image))
    # a call that names a deleted render function, or none, is an error, not a crash
    target = _native._xla_target(scene, [KEY], 2, 3, 2, 3)
    gone = target.id
    del target
    call = jax.ffi.ffi_call("heliograph_render", jax.ShapeDtypeStruct((8, 8, 3), jnp.float32))
    with pytest.raises(Exception, match="no longer exists"):
        call(jnp.asarray(texture), target=np.uint64(gone)).block_until_ready()
    with pytest.raises(Exception, match="no 'target' attribute"):
        call(jnp.asarray(texture)).block_until_ready()
    with pytest.raises(Exception, match=r"expected shape \(8, 8, 3\), got \(4, 4, 3\)"):
        keep = _native._xla_target(scene, [KEY], 2, 3, 2, 3)
        small = jax.ffi.ffi_call("heliograph_render", jax.ShapeDtypeStruct((4, 4, 3), jnp.float32))
        small(jnp.asarray(texture), target=np.uint64(keep.id)).block_until_ready()


def test_jax_calls_from_two_threads_each_render_their_own_values():
    # each call writes its values and renders under the scene's lock: two threads with
    # different textures never see each other's
    jax = pytest.importorskip("jax")
    import threading

    import jax.numpy as jnp

    import heliograph.jax as hgj

    scene, texture = scene_and_texture(res=8, tex=4)
    render = jax.jit(hgj.render_fn(scene, keys=[KEY], spp=2, seed=1))
    textures = [jnp.asarray(texture), jnp.asarray(np.ascontiguousarray(texture[:, ::-1]))]
    expected = [np.asarray(render(t)) for t in textures]
    assert np.abs(expected[0] - expected[1]).max() > 1e-3
    failures = []

    def loop(k):
        try:
            for _ in range(20):
                np.testing.assert_array_equal(np.asarray(render(textures[k])), expected[k])
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)

    threads = [threading.Thread(target=loop, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_constant_colours_and_prb_scenes_from_mitsuba_scripts():
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    d = seed_dict(np.full((2, 2, 3), 0.5, np.float32), res=8, spp=4)
    d["integrator"] = {"type": "prb", "max_depth": 3}
    d["emitter"] = {"type": "constant", "radiance": {"type": "rgb", "value": [0.5, 0.6, 0.7]}}
    scene = hg.load_dict(d)
    sky = torch.tensor([0.5, 0.6, 0.7], requires_grad=True)
    image = hgt.render(scene, {"emitter.radiance.value": sky}, spp=4, seed=1, seed_grad=1)
    image.sum().backward()
    # the image is linear in the sky's radiance: its gradient is the image over it
    rgb = image.detach().numpy().reshape(-1, 3).sum(axis=0) / np.array([0.5, 0.6, 0.7])
    np.testing.assert_allclose(sky.grad.numpy(), rgb, rtol=1e-3)


def test_bad_parameters_are_named_before_anything_renders():
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, texture = scene_and_texture()
    t = torch.tensor(texture, requires_grad=True)
    with pytest.raises(hg.RenderError, match=r"\"sensor.x_fov\".*sensor parameters"):
        hgt.render(scene, {"sensor.x_fov": torch.tensor(40.0)})
    with pytest.raises(hg.RenderError, match=r"\"shape.to_world\".*projective"):
        hgt.render(scene, {"shape.to_world": torch.eye(4)})
    with pytest.raises(hg.RenderError, match="not a parameter"):
        hgt.render(scene, {"shape.bsdf.reflectanse.data": t})
    with pytest.raises(ValueError, match=r"'shape.bsdf.reflectance.data': expected shape \(4, 4, 3\), got \(4, 4\)"):
        hgt.render(scene, {KEY: t[..., 0]})
    with pytest.raises(TypeError, match="floating-point"):
        hgt.render(scene, {KEY: torch.ones((4, 4, 3), dtype=torch.int32)})
    with pytest.raises(ValueError, match="'seed'"):
        hgt.render(scene, {KEY: t}, seed=-1)


def test_backward_twice_or_after_the_scene_changed_is_an_error():
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, texture = scene_and_texture()
    t = torch.tensor(texture, requires_grad=True)
    image = hgt.render(scene, {KEY: t}, spp=2)
    image.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="already ran"):
        image.sum().backward()
    # another parameter updated between the render and its backward pass
    image = hgt.render(scene, {KEY: t}, spp=2)
    params = hg.traverse(scene)
    params["emitter.radiance.value"] = 2.0
    params.update()
    with pytest.raises(hg.RenderError, match=r"parameter \"emitter.radiance.value\" changed after the render"):
        image.sum().backward()


def test_a_loss_of_several_renders_of_one_scene():
    # each render's backward pass differentiates the values it was rendered with
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, texture = scene_and_texture()
    adj = adjoint((12, 12, 3))
    a = torch.tensor(texture, requires_grad=True)
    b = torch.tensor(texture * 0.5, requires_grad=True)
    both = hgt.render(scene, {KEY: a}, spp=4, seed=9, seed_grad=9) + hgt.render(
        scene, {KEY: b}, spp=4, seed=9, seed_grad=9)
    (both * torch.from_numpy(adj)).sum().backward()
    # the image is linear in the texels: both gradients equal the gradient of one render
    one = torch.tensor(texture, requires_grad=True)
    (hgt.render(scene, {KEY: one}, spp=4, seed=9, seed_grad=9) * torch.from_numpy(adj)).sum().backward()
    # (up to the float32 rounding of the central differences inside the backward pass)
    np.testing.assert_allclose(a.grad.numpy(), one.grad.numpy(), rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), one.grad.numpy(), rtol=1e-3, atol=1e-6)


def test_gradients_are_finite_where_densities_vanish():
    # a camera looking straight along a lit quad: grazing hits whose BSDF values and
    # densities are zero
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    d = seed_dict(np.full((4, 4, 3), 0.5, np.float32), res=8, spp=4)
    d["sensor"]["to_world"] = hg.ScalarTransform4f.look_at([0, -5, 0.0], [0, 0, 0], [0, 0, 1])
    d["integrator"] = {"type": "path", "max_depth": 3}
    scene = hg.load_dict(d)
    t = torch.full((4, 4, 3), 0.5, requires_grad=True)
    hgt.render(scene, {KEY: t}, spp=4).sum().backward()
    assert torch.isfinite(t.grad).all()


def test_fitting_a_texture_converges_without_nans():
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, target_texture = scene_and_texture(res=16, tex=4)
    target = hgt.render(scene, {KEY: torch.tensor(target_texture)}, spp=16, seed=100).detach()
    t = torch.full((4, 4, 3), 0.5, requires_grad=True)
    opt = torch.optim.Adam([t], lr=0.05)
    losses = []
    for i in range(1000 if LONG else 60):
        opt.zero_grad()
        image = hgt.render(scene, {KEY: t}, spp=4, seed=i)
        loss = ((image - target) ** 2).mean()
        loss.backward()
        assert torch.isfinite(t.grad).all()
        opt.step()
        with torch.no_grad():
            t.clamp_(0.0, 1.0)
        losses.append(loss.item())
    # the loss falls to the noise of the renders; the texture approaches the target's
    assert np.mean(losses[-10:]) < 0.5 * losses[0], losses
    start = np.abs(0.5 - target_texture).mean()
    error = np.abs(t.detach().numpy() - target_texture).mean()
    assert error < 0.3 * start, (error, start)


def test_memory_stays_flat_over_forward_and_backward_iterations():
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, texture = scene_and_texture(res=8)
    t = torch.tensor(texture, requires_grad=True)

    def cycle(i):
        hgt.render(scene, {KEY: t}, spp=1, seed=i).sum().backward()

    measure("CPU: torch forward + backward", cycle, cycles=1000 if LONG else 300, warmup=50).check()


def test_the_texture_fitting_example_converges_at_a_small_size(tmp_path):
    pytest.importorskip("torch")
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(__file__), "..", "..", "python", "examples", "fit_texture.py")
    spec = importlib.util.spec_from_file_location("fit_texture", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    r = example.main(["--res", "48", "--tex", "16", "--iters", "40", "--spp", "8", "--lr", "0.05",
                      "--out", str(tmp_path)])
    losses = r["losses"]
    assert np.isfinite(losses).all()
    assert np.mean(losses[-10:]) < 0.2 * losses[0], losses
    # half the sphere faces away from the camera: its texels keep their start value
    assert r["error_after"] < 0.75 * r["error_before"], r
    for name in ["target", "before", "after", "texture_after"]:
        assert (tmp_path / f"{name}.png").stat().st_size > 0
    assert (tmp_path / "loss.csv").read_text().count("\n") == 41


def chi2_sf(x, k):
    """P(χ²_k > x), by the Wilson–Hilferty normal approximation (k in the hundreds here)."""
    z = ((x / k) ** (1 / 3) - (1 - 2 / (9 * k))) / math.sqrt(2 / (9 * k))
    return 0.5 * math.erfc(z / math.sqrt(2))


def test_gradients_agree_with_mitsuba_prb():
    """Against Mitsuba 3.9.1's prb gradients (references/make_diff_reference.py): the
    mean over 16 seeds of each gradient component on both sides, compared by the sum of
    squared z-scores (chi-square with one degree per component); the same comparison of
    gradients scaled by 1.1 or with flipped sign must fail."""
    import os

    from heliograph import _diff

    here = os.path.join(os.path.dirname(__file__), "references")
    ref = np.load(os.path.join(here, "diff_reference.npz"))
    keys = [str(k) for k in ref["keys"]]
    scene = hg.load_file(os.path.join(here, "diff_scene.xml"))
    values = [np.array(hg.traverse(scene)[k], dtype=np.float32) for k in keys]
    grads = []
    for b in range(16):
        opts = _diff.Options.of(64, 1000 + b, 64, 5000 + b)
        _, snapshot = _diff.forward(scene, keys, values, opts)
        g = _diff.backward(scene, keys, values, ref["adjoint"], snapshot, opts)
        grads.append(np.concatenate([x.ravel() for x in g]))
    g = np.stack(grads).astype(np.float64)
    mean, se = g.mean(0), g.std(0, ddof=1) / 4.0
    mi_mean = np.concatenate([ref[f"mean{i}"] for i in range(len(keys))])
    mi_se = np.concatenate([ref[f"se{i}"] for i in range(len(keys))])
    var = se**2 + mi_se**2
    used = var > 0

    def p_value(scale):
        z2 = (scale * mean - mi_mean)[used] ** 2 / (scale**2 * se**2 + mi_se**2)[used]
        return chi2_sf(z2.sum(), used.sum())

    print(f"Mitsuba prb comparison: {used.sum()} components, p {p_value(1.0):.3g}, 1.1x {p_value(1.1):.3g}, flipped {p_value(-1.0):.3g}")
    assert used.sum() > 150
    assert p_value(1.0) > 1e-4, p_value(1.0)
    assert p_value(1.1) < 1e-6 and p_value(-1.0) < 1e-6


def test_full_jacobian_at_a_tiny_size():
    # a gradcheck: the whole Jacobian of a 4x4 render with respect to a 2x2 texture, row
    # by row through backward (one render each: a render's backward pass runs once),
    # against central differences. With the backward pass traced with the image's seed
    # the render is a deterministic function of the texels (linear, under `direct`), so
    # the numerical Jacobian is exact up to float32 rounding.
    torch = pytest.importorskip("torch")
    import heliograph.torch as hgt

    scene, texture = scene_and_texture(res=4, tex=2)

    def render(t):
        return hgt.render(scene, {KEY: t}, spp=2, seed=3, seed_grad=3)

    n_out = 4 * 4 * 3
    analytical = np.zeros((n_out, texture.size))
    for i in range(n_out):
        t = torch.tensor(texture, requires_grad=True)
        render(t).reshape(-1)[i].backward()
        analytical[i] = t.grad.numpy().ravel()
    numerical = np.zeros_like(analytical)
    h = 0.05
    for j in range(texture.size):
        up, down = texture.copy().ravel(), texture.copy().ravel()
        up[j] += h
        down[j] -= h
        diff = render(torch.tensor(up.reshape(texture.shape))) - render(torch.tensor(down.reshape(texture.shape)))
        numerical[:, j] = diff.detach().numpy().ravel() / (2 * h)
    assert np.abs(numerical).max() > 0.01
    np.testing.assert_allclose(analytical, numerical, atol=1e-4, rtol=1e-3)
    assert np.abs(1.1 * analytical - numerical).max() > 1e-3, "the check would notice a 10% error"


def test_a_float_parameter_has_a_scalar_gradient_in_torch_and_jax():
    # a 0-d value (roughplastic's alpha) goes in and its gradient comes out 0-d; torch and
    # jax run the same CPU passes, so their gradients agree to the bit
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    import heliograph.jax as hgj
    import heliograph.torch as hgt

    scene = hg.load_string("""<scene version="3.0.0">
        <integrator type="path"><integer name="max_depth" value="3"/></integrator>
        <sensor type="perspective"><float name="fov" value="40"/>
            <transform name="to_world"><lookat origin="0, 2, 3" target="0, 0, 0" up="0, 1, 0"/></transform>
            <film type="hdrfilm"><integer name="width" value="8"/><integer name="height" value="6"/></film>
        </sensor>
        <shape type="rectangle" id="plate">
            <transform name="to_world"><rotate x="1" angle="-90"/><scale value="3"/></transform>
            <bsdf type="roughplastic"><float name="alpha" value="0.3"/></bsdf>
        </shape>
        <shape type="rectangle" id="lamp">
            <transform name="to_world"><rotate x="1" angle="90"/><scale value="0.4"/><translate y="2" z="-3"/></transform>
            <emitter type="area"><rgb name="radiance" value="10, 10, 10"/></emitter>
        </shape>
    </scene>""")
    a = torch.tensor(0.3, requires_grad=True)
    image = hgt.render(scene, {"plate.bsdf.alpha": a}, spp=4, seed=3)
    image.sum().backward()
    assert a.grad.shape == () and a.grad.item() != 0.0
    render = hgj.render_fn(scene, ["plate.bsdf.alpha"], spp=4, seed=3)
    g = jax.grad(lambda x: render(x).sum())(np.float32(0.3))
    assert g.shape == () and float(g) == a.grad.item()
