"""Quick end-to-end check of the Python CUDA path on the GPU machine (a few seconds).

Renders the seed scene with cuda_rgb and cpu_rgb, compares their means, reads the CUDA
film through every consumer (NumPy host copy, PyTorch default/side stream, JAX, CuPy)
and checks each against the host read, walks the __dlpack__ stream table, and shows
that an export which skips the wait (stream=-1, then reading at once on another
stream) can see an unfinished film while the stream-aware export cannot.

    PYTHONPATH=/tmp/site python3 tests/gpu/python_smoke.py
Prints one line per check and a last line "python smoke: PASS|FAIL (n failed)".
"""

import os
import sys
import time
import traceback

import numpy as np

import heliograph as hg

ROOT = os.environ.get("HELIOGRAPH_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
SEED = os.path.join(ROOT, "scenes", "seed.xml")
FAILED = []


def check(name, fn):
    t0 = time.perf_counter()
    try:
        detail = fn()
        print(f"PASS {name} ({(time.perf_counter() - t0) * 1e3:.1f} ms) {detail or ''}")
    except Exception:
        FAILED.append(name)
        print(f"FAIL {name}")
        traceback.print_exc(limit=4, file=sys.stdout)


def capsule_name(cap):
    import ctypes

    f = ctypes.pythonapi.PyCapsule_GetName
    f.restype, f.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return f(cap).decode()


def main():
    hg.set_progress(False)
    hg.set_variant("cuda_rgb")
    scene = hg.load_file(SEED, res=128, spp=64)
    img = hg.render(scene, seed=3)
    ref = None

    def cuda_vs_cpu():
        nonlocal ref
        a = img.numpy()
        hg.set_variant("cpu_rgb")
        b = np.asarray(hg.render(hg.load_file(SEED, res=128, spp=64), seed=3))
        hg.set_variant("cuda_rgb")
        assert a.shape == b.shape == (128, 128, 3), (a.shape, b.shape)
        ma, mb = a.mean(axis=(0, 1)), b.mean(axis=(0, 1))
        assert np.allclose(ma, mb, rtol=0.02), (ma, mb)
        ref = a
        return f"means cuda {ma.round(4)} cpu {mb.round(4)}"

    check("cuda render matches cpu (channel means, 2%)", cuda_vs_cpu)
    check("device and dlpack_device", lambda: (img.device, img.__dlpack_device__()))
    assert img.device == "cuda:0" or FAILED.append("device name")

    def table():
        out = []
        for kw, name in [({}, "dltensor"), ({"max_version": (1, 0)}, "dltensor_versioned")]:
            for s in [None, -1, 1, 2]:
                cap = img.__dlpack__(stream=s, **kw)
                assert capsule_name(cap) == name, (s, kw, capsule_name(cap))
            out.append(name)
        for bad, exc in [(0, ValueError), (-2, ValueError), ("x", TypeError), (1.0, TypeError)]:
            try:
                img.__dlpack__(stream=bad)
            except exc:
                pass
            else:
                raise AssertionError(f"stream={bad!r} did not raise {exc.__name__}")
        try:
            img.__dlpack__(dl_device=(1, 0), copy=False)
        except BufferError:
            pass
        else:
            raise AssertionError("dl_device=(1,0), copy=False did not raise BufferError")
        host = np.from_dlpack(img, device="cpu")
        assert np.array_equal(host, ref)
        return " ".join(out) + " + errors + host copy"

    check("__dlpack__ stream table", table)

    def torch_default():
        import torch

        t = torch.from_dlpack(img)
        assert t.is_cuda and np.array_equal(t.cpu().numpy(), ref)
        return str(t.device)

    def torch_side():
        import torch

        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            t = torch.from_dlpack(img).clone()
        s.synchronize()
        assert np.array_equal(t.cpu().numpy(), ref)

    def jax_():
        import jax

        x = jax.dlpack.from_dlpack(img)
        assert np.array_equal(np.asarray(x), ref)
        return str(x.devices())

    def cupy_():
        import cupy

        x = cupy.from_dlpack(img)
        assert np.array_equal(cupy.asnumpy(x), ref)

    check("torch default stream", torch_default)
    check("torch side stream", torch_side)
    check("jax", jax_)
    check("cupy", cupy_)

    def race():
        import torch

        heavy = hg.load_file(SEED, res=512, spp=1024)
        params = hg.traverse(heavy)
        key = "shape.bsdf.reflectance.data"
        shape = params[key].shape
        wrong = {"unsafe": 0, "stream": 0}
        for mode in wrong:
            for i in range(6):
                params[key] = np.full(shape, 0.1 + 0.1 * i, dtype=np.float32)
                params.update()
                im = hg.render(heavy, seed=i)
                s = torch.cuda.Stream()
                with torch.cuda.stream(s):
                    if mode == "unsafe":
                        cap = im.__dlpack__(stream=-1, max_version=(1, 0))
                        t = torch.from_dlpack(cap).clone()
                    else:
                        t = torch.from_dlpack(im).clone()
                s.synchronize()
                wrong[mode] += int(not np.array_equal(t.cpu().numpy(), im.numpy()))
        assert wrong["stream"] == 0, wrong
        return f"wrong frames of 6: {wrong}"

    check("unsafe export races, stream export does not", race)

    def cuda_import():
        import torch

        params = hg.traverse(scene)
        key = "shape.bsdf.reflectance.data"
        shape = params[key].shape
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            x = torch.full(shape, 0.25, device="cuda")
            x.mul_(2.0)
        params[key] = x
        params.update()
        a = hg.render(scene, seed=5).numpy()
        params[key] = np.full(shape, 0.5, dtype=np.float32)
        params.update()
        b = hg.render(scene, seed=5).numpy()
        assert np.array_equal(a, b)
        t = hg.TensorXf(x)
        assert t.device == "cuda:0" and np.all(t.numpy() == 0.5)

    check("import a torch CUDA texture (side stream)", cuda_import)

    def settle():
        # buffers a consumer let go of without naming a stream are freed by the reclaimer
        # thread after a device synchronise, and imported capsules are released once
        # their copy ran: wait (up to a second) until both are idle
        import gc

        gc.collect()
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and (
            hg._native._cuda_held_bytes()[1] or hg._native._parked_imports()
        ):
            time.sleep(0.005)

    def lifetime():
        import gc

        settle()
        base = hg._native._cuda_live_buffers()[0]
        base_exports = hg._native._live_exports()  # NumPy views of earlier reads hold some
        im = hg.render(scene, seed=1)
        want = im.numpy()
        cap = im.__dlpack__(stream=None, max_version=(1, 0))
        del im
        gc.collect()
        import torch

        t = torch.from_dlpack(cap)
        assert np.array_equal(t.cpu().numpy(), want)
        del t, cap
        del want  # a NumPy view holds an export of its own
        gc.collect()
        for _ in range(200):
            hg.render(scene, seed=2).__dlpack__(stream=1)
        settle()
        assert hg._native._cuda_live_buffers()[0] == base, hg._native._cuda_live_buffers()
        assert hg._native._live_exports() == base_exports, hg._native._live_exports()
        return f"live buffers back to {base}, exports back to {base_exports}"

    check("capsule outlives tensor; no leak over 200 exports", lifetime)
    print(f"python smoke: {'PASS' if not FAILED else 'FAIL'} ({len(FAILED)} failed: {FAILED})")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
