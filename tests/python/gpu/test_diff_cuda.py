"""Differentiable rendering on the GPU: ``heliograph.torch`` under ``cuda_rgb``.

- With the backward pass traced with the image's own seed, the gradient is the exact
  derivative of that (GPU) image: compared with central differences of CUDA renders
  with common random numbers, where a 1.1× or flipped gradient fails;
- the GPU and CPU backward passes agree in expectation (independent seeds, z-test of the
  means; a 1.1× GPU gradient is rejected);
- an environment map's texel gradients are the exact derivative of the GPU image too
  (up to the sampling density the gradient holds fixed);
- values, image and gradients stay on the GPU, no NaN, and device memory stays flat
  over 1000 forward+backward iterations, through PyTorch and through JAX;
- JAX's calls run as heliograph's XLA custom calls on XLA's stream, with the same exact
  derivative; JAX on the CPU with ``cuda_rgb``, and on the GPU with ``cpu_rgb``, give the
  images and gradients of the other platform's calls;
- the backward pass reads the image's gradient after the PyTorch work that writes it,
  on the default stream and on a side stream;
- wrong input is an error naming the key before anything renders.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import heliograph as hg
from conftest import ROOT, seed_dict
from heliograph import _native

KEY = "shape.bsdf.reflectance.data"


def scene_and_texture(res=12, tex=4):
    rng = np.random.default_rng(3)
    texture = (0.2 + 0.6 * rng.random((tex, tex, 3))).astype(np.float32)
    return hg.load_dict(seed_dict(texture, res=res, spp=4)), texture


def adjoint(shape, seed=5):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def loss_at(scene, texture, adj, spp, seed, key=KEY):
    params = hg.traverse(scene)
    params[key] = texture
    params.update()
    return float((np.array(hg.render(scene, spp=spp, seed=seed)).astype(np.float64) * adj).sum())


def top_texels_match_finite_differences(scene, texture, grad, adj, key=KEY, rtol=1e-3):
    """The three largest texel gradients of `Σ adj · image` (spp 4, seed and seed_grad 9)
    with respect to `key` against central differences of GPU renders with common random
    numbers, within `rtol`; a 1.1× or flipped gradient must fail the criterion."""
    assert np.isfinite(grad).all()
    for flat in np.argsort(-np.abs(grad).ravel())[:3]:
        index = np.unravel_index(flat, grad.shape)
        up, down = texture.copy(), texture.copy()
        up[index] += 0.05
        down[index] -= 0.05
        fd = (loss_at(scene, up, adj, 4, 9, key) - loss_at(scene, down, adj, 4, 9, key)) / 0.1
        g = float(grad[index])
        tol = rtol * max(abs(g), abs(fd))
        assert abs(fd) > 1e-3
        assert abs(g - fd) <= tol, (index, g, fd)
        assert abs(1.1 * g - fd) > tol and abs(-g - fd) > tol, "the criterion has no power"


def test_cuda_gradient_is_the_derivative_of_the_gpu_image(torch):
    import heliograph.torch as hgt

    scene, texture = scene_and_texture()
    adj = adjoint((12, 12, 3))
    t = torch.tensor(texture, device="cuda", requires_grad=True)
    image = hgt.render(scene, {KEY: t}, spp=4, seed=9, seed_grad=9)
    assert image.device.type == "cuda" and image.shape == (12, 12, 3)
    (image * torch.from_numpy(adj).cuda()).sum().backward()
    assert t.grad.device.type == "cuda"
    top_texels_match_finite_differences(scene, texture, t.grad.cpu().numpy(), adj)


# the environment-lit scene the CPU and host-kernel tests differentiate too
ENVMAP_SCENE = os.path.join(ROOT, "tests", "scenes", "diff_envmap.xml")


def test_envmap_gradient_is_the_derivative_of_the_gpu_image(torch):
    # the environment map's texels: seen directly (a pixel's samples add to the same
    # texels, which the kernel sums over the warp before its atomics), through the
    # floor and ball, and sampled by next-event estimation. A texel also moves that
    # sampling density (and so the MIS weights), which the gradient holds fixed (as
    # Mitsuba's prb) and the finite difference does not: 5e-3 relative, far inside the
    # 10% that must fail
    import heliograph.torch as hgt

    scene = hg.load_file(ENVMAP_SCENE)
    data = np.array(hg.traverse(scene)["sky.data"], dtype=np.float32)
    adj = adjoint((11, 14, 3))
    t = torch.tensor(data, device="cuda", requires_grad=True)
    image = hgt.render(scene, {"sky.data": t}, spp=4, seed=9, seed_grad=9)
    (image * torch.from_numpy(adj).cuda()).sum().backward()
    top_texels_match_finite_differences(scene, data, t.grad.cpu().numpy(), adj, key="sky.data", rtol=5e-3)


def gradients(torch, scene, texture, adj, seeds, device):
    import heliograph.torch as hgt

    out = []
    for s in seeds:
        t = torch.tensor(texture, device=device, requires_grad=True)
        image = hgt.render(scene, {KEY: t}, spp=16, seed=s, seed_grad=s + 1000)
        (image * torch.from_numpy(adj).to(device)).sum().backward()
        out.append(t.grad.cpu().numpy().astype(np.float64))
    return np.array(out)


def test_gpu_and_cpu_gradients_agree_in_expectation(torch):
    scene, texture = scene_and_texture(res=16, tex=2)
    adj = adjoint((16, 16, 3))
    seeds = range(24)
    gpu = gradients(torch, scene, texture, adj, seeds, "cuda")
    hg.set_variant("cpu_rgb")
    try:
        cpu = gradients(torch, scene, texture, adj, seeds, "cpu")
    finally:
        hg.set_variant("cuda_rgb")

    def worst_z(a):
        se = np.sqrt(a.var(0, ddof=1) / len(a) + cpu.var(0, ddof=1) / len(cpu))
        return np.max(np.abs(a.mean(0) - cpu.mean(0)) / se)

    # 12 components: |z| < 4 for all at a family-wise level of ~1e-3
    assert worst_z(gpu) < 4.0, worst_z(gpu)
    assert worst_z(1.1 * gpu) > 4.0, "the comparison has no power"


def test_cuda_iterations_stay_on_the_device_and_memory_is_flat(torch):
    import heliograph.torch as hgt

    scene, texture = scene_and_texture(res=32, tex=8)
    target = torch.rand(32, 32, 3, device="cuda")
    t = torch.tensor(texture, device="cuda", requires_grad=True)
    opt = torch.optim.Adam([t], lr=0.02)
    held = []
    for i in range(1000):
        opt.zero_grad()
        image = hgt.render(scene, {KEY: t}, spp=4, seed=i)
        loss = ((image - target) ** 2).mean()
        loss.backward()
        assert t.grad.device.type == "cuda"
        opt.step()
        if i in (100, 999):
            torch.cuda.synchronize()
            held.append((_native._cuda_held_bytes(), _native._cuda_live_buffers()))
    assert torch.isfinite(t).all() and torch.isfinite(t.grad).all()
    assert held[1] == held[0], held


def test_the_incoming_gradient_is_read_after_the_work_that_writes_it(torch, monkeypatch):
    """The backward pass reads the image's gradient only after PyTorch's queued work that
    writes it (heliograph.torch orders the render stream after PyTorch's current stream):
    a node between the image and the loss whose backward fills its output with a
    sentinel, stalls the stream (torch.cuda._sleep) and only then writes twice its
    incoming gradient gives exactly twice the plain gradient, with the work on the
    default stream and on a side stream. Power: with an idle stream named instead of
    PyTorch's, the same node gives another gradient (the sentinel is read)."""
    import heliograph.torch as hgt

    if not hasattr(torch.cuda, "_sleep"):
        pytest.skip("this PyTorch has no torch.cuda._sleep")
    stall = [40_000_000]  # GPU clock cycles: ~20 ms

    class SlowDouble(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            out = torch.full_like(g, 1e3)
            torch.cuda._sleep(stall[0])
            out.copy_(2 * g)
            return out

    scene, texture = scene_and_texture(res=48, tex=8)
    adj = torch.from_numpy(adjoint((48, 48, 3))).cuda()

    def grad(slow, stream, named=None):
        t = torch.tensor(texture, device="cuda", requires_grad=True)
        torch.cuda.synchronize()
        with torch.cuda.stream(stream):
            image = hgt.render(scene, {KEY: t}, spp=4, seed=9, seed_grad=9)
            out = SlowDouble.apply(image) if slow else image
            loss = (out * adj).sum()
            with monkeypatch.context() as m:
                if named is not None:  # the backward pass is told this stream is PyTorch's
                    m.setattr(hgt, "_current_stream", lambda device: named.cuda_stream)
                loss.backward()
        torch.cuda.synchronize()
        return t.grad.cpu().numpy().astype(np.float64)

    plain = grad(False, torch.cuda.current_stream())
    assert np.abs(plain).max() > 1e-3
    close = dict(rtol=1e-4, atol=1e-6 * np.abs(plain).max())
    for stream in (torch.cuda.current_stream(), torch.cuda.Stream()):
        for _ in range(2):
            np.testing.assert_allclose(grad(True, stream), 2 * plain, **close)
    stall[0] = 400_000_000  # ~0.2 s: the render stream's copy certainly runs first
    wrong = grad(True, torch.cuda.current_stream(), named=torch.cuda.Stream())
    assert not np.allclose(wrong, 2 * plain, **close), "the check has no power"


def test_wrong_input_names_the_key_before_rendering(torch):
    import heliograph.torch as hgt

    scene, texture = scene_and_texture()
    with pytest.raises(ValueError, match=KEY):
        hgt.render(scene, {KEY: torch.tensor(texture, requires_grad=True)})  # a CPU tensor
    with pytest.raises(hg.RenderError, match=r"\"sensor.x_fov\".*sensor parameters"):
        hgt.render(scene, {"sensor.x_fov": torch.tensor(40.0, device="cuda")})
    with pytest.raises(ValueError, match=r"expected shape \(4, 4, 3\), got \(4, 4\)"):
        hgt.render(scene, {KEY: torch.tensor(texture[..., 0], device="cuda")})


PLATE = """<scene version="3.0.0">
    <integrator type="path"><integer name="max_depth" value="3"/></integrator>
    <sensor type="perspective"><float name="fov" value="40"/>
        <transform name="to_world"><lookat origin="0, 2, 3" target="0, 0, 0" up="0, 1, 0"/></transform>
        <film type="hdrfilm"><integer name="width" value="16"/><integer name="height" value="12"/>
        <string name="pixel_format" value="rgb"/></film>
    </sensor>
    <shape type="rectangle" id="plate">
        <transform name="to_world"><rotate x="1" angle="-90"/><scale value="3"/></transform>
        <bsdf type="roughplastic"><float name="alpha" value="0.3"/>
           <rgb name="diffuse_reflectance" value="0.1, 0.1, 0.1"/></bsdf>
    </shape>
    <shape type="rectangle" id="lamp">
        <transform name="to_world"><rotate x="1" angle="90"/><scale value="0.4"/><translate y="2" z="-3"/></transform>
        <emitter type="area"><rgb name="radiance" value="10, 10, 10"/></emitter>
    </shape>
</scene>"""


def test_a_bsdf_float_gradient_agrees_with_the_cpu_in_expectation(torch):
    # roughplastic's alpha, a plain float (rebuilt records swapped in by the kernels'
    # probe); the loss rewards a sharp highlight
    import heliograph.torch as hgt

    scene = hg.load_string(PLATE)
    ref = np.array(hg.render(scene, spp=64, seed=1))
    adj = np.where(ref > ref.mean(), 1.0, -1.0).astype(np.float32)

    def grads(device):
        out = []
        for s in range(24):
            a = torch.tensor(0.3, device=device, requires_grad=True)
            image = hgt.render(scene, {"plate.bsdf.alpha": a}, spp=16, seed=s, seed_grad=s + 500)
            (image * torch.from_numpy(adj).to(device)).sum().backward()
            out.append(float(a.grad))
        return np.array(out)

    gpu = grads("cuda")
    hg.set_variant("cpu_rgb")
    try:
        cpu = grads("cpu")
    finally:
        hg.set_variant("cuda_rgb")
    se = np.sqrt(gpu.var(ddof=1) / len(gpu) + cpu.var(ddof=1) / len(cpu))
    assert abs(cpu.mean()) > 10 * cpu.std(ddof=1) / np.sqrt(len(cpu)), "no visible gradient"
    assert abs(gpu.mean() - cpu.mean()) < 4 * se, (gpu.mean(), cpu.mean(), se)
    assert abs(1.1 * gpu.mean() - cpu.mean()) > 4 * se, "the comparison has no power"


def test_jax_on_the_gpu_runs_custom_calls_with_the_exact_derivative(jax):
    import jax.numpy as jnp

    import heliograph.jax as hgj

    gpu = jax.devices("gpu")[0]
    scene, texture = scene_and_texture()
    adj = adjoint((12, 12, 3))
    render = hgj.render_fn(scene, [KEY], spp=4, seed=9, seed_grad=9)
    tex = jax.device_put(jnp.asarray(texture), gpu)
    a = jax.device_put(jnp.asarray(adj), gpu)
    step = jax.jit(jax.value_and_grad(lambda t: (render(t) * a).sum()))
    calls = _native._xla_calls()
    value, grad = step(tex)
    assert _native._xla_calls() == calls + 2  # forward and backward as custom calls
    assert grad.devices() == {gpu} and value.devices() == {gpu}
    image = jax.jit(render)(tex)
    assert image.devices() == {gpu}
    np.testing.assert_array_equal(np.asarray(image), np.array(hg.render(scene, spp=4, seed=9)))
    assert np.isclose(float(value), loss_at(scene, texture, adj, 4, 9), rtol=1e-5)
    top_texels_match_finite_differences(scene, texture, np.asarray(grad), adj)


def test_jax_across_platforms_matches_the_other_platforms_calls(jax):
    import jax.numpy as jnp

    import heliograph.jax as hgj

    gpu, cpu = jax.devices("gpu")[0], jax.devices("cpu")[0]
    scene, texture = scene_and_texture()
    adj = adjoint((12, 12, 3))

    def run(device):
        render = hgj.render_fn(scene, [KEY], spp=4, seed=9, seed_grad=9)
        tex = jax.device_put(jnp.asarray(texture), device)
        a = jax.device_put(jnp.asarray(adj), device)
        image = jax.jit(render)(tex)
        grad = jax.jit(jax.grad(lambda t: (render(t) * a).sum()))(tex)
        assert image.devices() == {device} and grad.devices() == {device}
        return np.asarray(image), np.asarray(grad)

    # cuda_rgb: JAX on the CPU uploads the values and reads the results back
    image_gpu, grad_gpu = run(gpu)
    image_cpu, grad_cpu = run(cpu)
    np.testing.assert_array_equal(image_cpu, image_gpu)
    # texel gradients are summed with float atomics: equal to rounding
    np.testing.assert_allclose(grad_cpu, grad_gpu, rtol=1e-4, atol=1e-4 * np.abs(grad_gpu).max())
    # cpu_rgb: JAX on the GPU reads the values to the host and uploads the results
    hg.set_variant("cpu_rgb")
    try:
        image_gpu, grad_gpu = run(gpu)
        image_cpu, grad_cpu = run(cpu)
    finally:
        hg.set_variant("cuda_rgb")
    np.testing.assert_array_equal(image_gpu, image_cpu)
    np.testing.assert_array_equal(grad_gpu, grad_cpu)


def test_jax_iterations_on_the_gpu_keep_memory_flat(jax):
    import jax.numpy as jnp

    import heliograph.jax as hgj

    gpu = jax.devices("gpu")[0]
    scene, texture = scene_and_texture(res=32, tex=8)
    render = hgj.render_fn(scene, [KEY], spp=4, seed=0)
    target = jax.device_put(jnp.asarray(np.random.default_rng(1).random((32, 32, 3)), jnp.float32), gpu)

    @jax.jit
    def step(t):
        loss, g = jax.value_and_grad(lambda t: jnp.mean((render(t) - target) ** 2))(t)
        return jnp.clip(t - 2.0 * g, 0.0, 1.0), loss, jnp.isfinite(g).all()

    t = jax.device_put(jnp.asarray(texture), gpu)
    held, losses = [], []
    for i in range(1000):
        t, loss, finite = step(t)
        if i in (100, 999):
            t.block_until_ready()
            held.append((_native._cuda_held_bytes(), _native._cuda_live_buffers()))
            losses.append(float(loss))
            assert bool(finite)
    assert held[1] == held[0], held
    assert losses[1] < losses[0], losses


def test_jax_on_the_gpu_takes_float_and_colour_parameters(jax, torch):
    # a float (roughplastic's alpha, a record float) and a colour (the lamp's radiance)
    # given as GPU arrays: their few values are read to the host inside the custom call;
    # the gradients match heliograph.torch's with the same seeds (the same kernels)
    import jax.numpy as jnp

    import heliograph.jax as hgj
    import heliograph.torch as hgt

    gpu = jax.devices("gpu")[0]
    scene = hg.load_string(PLATE)
    adj = adjoint((12, 16, 3))
    keys = ["plate.bsdf.alpha", "lamp.emitter.radiance.value"]
    render = hgj.render_fn(scene, keys, spp=16, seed=3, seed_grad=4)
    a = jax.device_put(jnp.asarray(adj), gpu)
    alpha = jax.device_put(jnp.float32(0.3), gpu)
    radiance = jax.device_put(jnp.asarray([10.0, 9.0, 8.0], jnp.float32), gpu)
    grads = jax.jit(jax.grad(lambda x, r: (render(x, r) * a).sum(), argnums=(0, 1)))(alpha, radiance)
    assert grads[0].shape == () and grads[1].shape == (3,)
    assert all(g.devices() == {gpu} for g in grads)
    x = torch.tensor(0.3, device="cuda", requires_grad=True)
    r = torch.tensor([10.0, 9.0, 8.0], device="cuda", requires_grad=True)
    image = hgt.render(scene, {keys[0]: x, keys[1]: r}, spp=16, seed=3, seed_grad=4)
    (image * torch.from_numpy(adj).cuda()).sum().backward()
    assert abs(float(x.grad)) > 0 and float(r.grad.abs().min()) > 0
    # float atomics: equal to rounding (the sums cancel, so relative to the largest)
    np.testing.assert_allclose(float(grads[0]), float(x.grad), rtol=1e-3)
    rg = r.grad.cpu().numpy()
    np.testing.assert_allclose(np.asarray(grads[1]), rg, rtol=1e-3, atol=1e-3 * np.abs(rg).max())
