"""Who owns a film: capsules keep it alive past the TensorXf, unconsumed capsules free their
share, and 1000 render/export/delete cycles leave no device memory behind.

``_native._cuda_live_buffers()`` is (count, bytes) of heliograph's device tensors (films,
imported arrays) still alive; ``_native._live_exports()`` the capsules whose deleter has
not run.
"""

import time

import numpy as np
import pytest

import heliograph as hg
from heliograph import _native

from .common import KEY, settle
from .dlpack_structs import CapsuleHolder, consume_on_another_thread

KINDS = [pytest.param(None, id="legacy"), pytest.param((1, 0), id="versioned")]
MiB = 1 << 20


def _free_device_memory(torch, cupy):
    if torch is not None:
        torch.cuda.synchronize()
        return torch.cuda.mem_get_info()[0]
    return cupy.cuda.runtime.memGetInfo()[0]


def _optional(request, name):
    try:
        return request.getfixturevalue(name)
    except pytest.skip.Exception:
        return None


@pytest.mark.parametrize("max_version", KINDS)
@pytest.mark.parametrize("stream", [None, 1, -1])
def test_the_last_share_is_freed_by_a_deleter_on_another_thread(make_seed, max_version, stream):
    """The deleter needs no GIL and binds the CUDA context itself; with stream=1 it also
    leaves a release fence on the legacy default stream from that thread."""
    seed = make_seed(res=96, spp=8)
    seed.render().numpy()
    settle()
    (n0, b0), e0 = _native._cuda_live_buffers(), _native._live_exports()
    img = seed.render()
    shape = tuple(img.shape)
    cap = img.__dlpack__(stream=stream, max_version=max_version)
    del img
    settle()
    assert _native._cuda_live_buffers()[0] == n0 + 1, "the capsule holds the film"
    assert consume_on_another_thread(cap) == shape
    del cap
    settle()
    assert _native._cuda_live_buffers() == (n0, b0), "the deleter freed the film"
    assert _native._live_exports() == e0
    assert np.array_equal(seed.render().numpy(), seed.render().numpy()), "the backend still works"


@pytest.mark.parametrize("max_version", KINDS)
def test_an_unconsumed_capsule_keeps_the_film_then_frees_its_share(make_seed, max_version):
    seed = make_seed(res=96, spp=8)
    seed.render().numpy()
    settle()
    (n0, b0), e0 = _native._cuda_live_buffers(), _native._live_exports()
    img = seed.render()
    img.numpy()
    n1, b1 = _native._cuda_live_buffers()
    assert n1 == n0 + 1 and b1 >= b0 + 96 * 96 * 3 * 4, ((n0, b0), (n1, b1))
    caps = [img.__dlpack__(max_version=max_version), img.__dlpack__(stream=-1, max_version=max_version)]
    assert _native._live_exports() == e0 + 2
    del img
    settle()
    assert _native._cuda_live_buffers() == (n1, b1), "the capsules hold the film"
    caps.pop()
    settle()
    assert _native._cuda_live_buffers() == (n1, b1), "one capsule still holds it"
    assert _native._live_exports() == e0 + 1
    caps.pop()
    settle()
    assert _native._cuda_live_buffers() == (n0, b0), "the last capsule's destructor frees the film"
    assert _native._live_exports() == e0


@pytest.mark.parametrize("max_version", KINDS)
def test_a_capsule_outlives_its_tensor_and_later_renders(make_seed, torch, max_version):
    seed = make_seed(res=256, spp=32)
    seed.set_texture(seed.texture(1))
    img = seed.render(seed=1)
    ref = img.numpy().copy()
    cap = img.__dlpack__(max_version=max_version)
    del img
    settle()
    # new renders of another texture: a film freed too early would be reused and overwritten
    seed.set_texture(seed.texture(2))
    later = [seed.render(seed=s) for s in range(4)]
    y = torch.from_dlpack(CapsuleHolder(cap, (2, 0))).clone()
    torch.cuda.synchronize()
    np.testing.assert_array_equal(y.cpu().numpy(), ref)
    assert not np.array_equal(later[0].numpy(), ref)


def test_consumer_arrays_outlive_the_tensor(make_seed, request):
    torch, jax = _optional(request, "torch"), _optional(request, "jax")
    if torch is None and jax is None:
        pytest.skip("needs PyTorch or JAX")
    seed = make_seed(res=256, spp=32)
    seed.set_texture(seed.texture(3))
    img = seed.render(seed=3)
    held = []
    if torch is not None:
        held.append(("torch", torch.from_dlpack(img)))
    if jax is not None:
        held.append(("jax", jax.dlpack.from_dlpack(img)))
    ref = img.numpy().copy()
    del img
    settle()
    seed.set_texture(seed.texture(4))
    later = [seed.render(seed=s) for s in range(4)]
    for name, arr in held:
        got = arr.cpu().numpy() if name == "torch" else np.asarray(arr)
        np.testing.assert_array_equal(got, ref, err_msg=f"{name}'s view of a deleted TensorXf")
    del held
    assert later[-1].numpy().shape == ref.shape


def test_1000_render_export_delete_cycles_leave_no_device_memory(make_seed, request):
    torch, cupy = _optional(request, "torch"), None
    if torch is None:
        cupy = _optional(request, "cupy")
    seed = make_seed(res=128, spp=4)
    tex = [seed.texture(i) for i in range(2)]
    torch_tex = torch.from_numpy(tex[1]).cuda() if torch is not None else None

    def cycle(i):
        if i % 10 == 4 and torch_tex is not None:
            seed.set_texture(torch_tex)  # the import path
        elif i % 10 == 9:
            seed.set_texture(tex[i % 2])  # ends every ten cycles on a NumPy upload
        img = seed.render(seed=i)
        cap = img.__dlpack__(max_version=(1, 0) if i % 2 else None)  # never consumed
        if torch is not None and i % 3 == 0:
            alias = torch.from_dlpack(img)  # consumed, then dropped
            del alias
        if i % 7 == 0:
            host = img.__dlpack__(dl_device=(1, 0))  # a host copy
            del host
        del cap, img

    for i in range(100):  # warm-up: pools, module, caches
        cycle(i)
    settle()
    (n0, b0), e0 = _native._cuda_live_buffers(), _native._live_exports()
    free0 = _free_device_memory(torch, cupy) if (torch or cupy) else None
    t0 = time.monotonic()
    for i in range(100, 1100):
        cycle(i)
        if i % 250 == 0:
            print(f"cycle {i}: live buffers {_native._cuda_live_buffers()}, exports {_native._live_exports()}")
        assert time.monotonic() - t0 < 90, f"1000 cycles take too long (at cycle {i})"
    settle()
    assert _native._cuda_live_buffers() == (n0, b0), "device tensors leaked"
    assert _native._live_exports() == e0 == 0, "capsules leaked"
    if free0 is not None:
        drift = free0 - _free_device_memory(torch, cupy)
        print(f"device free memory drift over 1000 cycles: {drift / MiB:.1f} MiB")
        assert abs(drift) < 64 * MiB, f"device memory grew by {drift / MiB:.1f} MiB"
    else:
        print("no PyTorch or CuPy: device free memory not checked")


def test_deleting_a_tensor_while_its_render_runs_is_safe(make_seed):
    seed = make_seed(res=512, spp=256)
    seed.render().numpy()
    settle()
    n0 = _native._cuda_live_buffers()
    for s in range(5):
        img = seed.render(seed=s)
        del img  # the kernel is still writing that film: it must not be freed under it
    settle()
    assert _native._cuda_live_buffers() == n0
    np.testing.assert_array_equal(seed.render(seed=0).numpy(), seed.render(seed=0).numpy())


def test_the_scene_keeps_an_imported_texture_whose_source_is_gone(make_seed, torch):
    seed = make_seed(res=64, spp=16)
    x = torch.full(seed.tex_shape, 0.25, device="cuda")
    seed.set_texture(x)
    del x
    torch.cuda.empty_cache()
    junk = torch.full((64 << 20,), 7.0, device="cuda")  # reuses freed torch memory
    torch.cuda.synchronize()
    got = seed.render(seed=1).numpy()
    seed.set_texture(np.full(seed.tex_shape, 0.25, np.float32))
    np.testing.assert_array_equal(got, seed.render(seed=1).numpy())
    np.testing.assert_array_equal(np.asarray(hg.traverse(seed.scene)[KEY]), 0.25)
    del junk
