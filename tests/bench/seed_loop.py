"""The seed-loop benchmark: heliograph against Mitsuba 3, timed as a Python user sees it.

A program, not a test: it asserts nothing and prints one table last (tests/bench/README.md
says exactly what each row times).

    python tests/bench/seed_loop.py                     # heliograph cuda_rgb vs Mitsuba cuda_ad_rgb
    python tests/bench/seed_loop.py --cpu               # heliograph cpu_rgb vs Mitsuba llvm_ad_rgb
    python tests/bench/seed_loop.py --out res.md --soak-seconds 45 --deadline 480

Each renderer runs in a worker process of its own (this file with --worker), started once and
kept warm. The parent runs the rows in order, each row on both workers back to back (which one
goes first alternates from row to row), so both are measured in the same run on the same machine.
A renderer or framework that is missing, or a worker that dies, gives rows "n/a (reason)".
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import json
import os
import platform
import queue
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

# JAX would otherwise reserve 75 % of the GPU for itself at its first use
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = "shape.bsdf.reflectance.data"
TEXTURES = 8  # distinct textures to rotate among, so no cache can return the last result
GUARD_SEED = 4242
FRAMEWORKS = ("hg", "mi")
NAMES = {"hg": "heliograph", "mi": "Mitsuba"}

# id, label for the table, samples per pixel behind one timed call (0: no samples/s)
ROWS: List[Tuple[str, str, int]] = [
    ("seed32_np", "render + np.array, seed, 32 spp", 32),
    ("seed1_np", "render + np.array, seed, 1 spp", 1),
    ("cbox32_np", "render + np.array, Cornell box path d8, 32 spp", 32),
    ("seed32_torch", "render + torch export + sync, seed, 32 spp", 32),
    ("seed32_torch_method", "render + img.torch() + sync, seed, 32 spp", 32),
    ("np_finished", "np.array of a finished film", 0),
    ("set_tensorxf", "params[key] = TensorXf(numpy) + update()", 0),
    ("tensorxf_np", "TensorXf(numpy) of the texture", 0),
    ("set_numpy", "params[key] = numpy + update()", 0),
    ("tensorxf_torch", "TensorXf(torch tensor) of the texture", 0),
    ("update_render4", "set texture + update() + render 4 spp + np.array", 4),
    ("loop_torch", "loop: torch texture, update, render 4 spp, torch sum", 4),
    ("loop_numpy", "loop: NumPy texture, update, render 4 spp, torch sum", 4),
    ("soak", "soak: NumPy/torch textures, torch/JAX exports", 4),
    ("enqueue", "host time of the render() call, seed, 32 spp", 0),
]
ROW_IDS = [r[0] for r in ROWS]


class NotApplicable(Exception):
    """This row cannot run in this worker (a framework or device is missing)."""


class Stopped(Exception):
    """SIGTERM (e.g. from `timeout`): stop starting rows, print the table of what ran."""


def repo_root() -> str:
    """$HELIOGRAPH_ROOT when it holds scenes/seed.xml, else the checkout holding this file."""
    env = os.environ.get("HELIOGRAPH_ROOT")
    if env and os.path.isfile(os.path.join(env, "scenes", "seed.xml")):
        return env
    return os.path.abspath(os.path.join(HERE, "..", ".."))


# ================================================================ worker side


def make_textures(res: int) -> List[Any]:
    """TEXTURES random res x res x 3 float32 textures, the same in both workers. Red ramps up
    along the rows, green down the columns (a flip or transpose changes the block means) and
    each texture has its own brightness (a stale texture changes the image mean)."""
    import numpy as np

    ramp = np.linspace(0.3, 1.0, res)
    shape = np.stack([np.broadcast_to(ramp[None, :], (res, res)), np.broadcast_to(ramp[::-1, None], (res, res)),
                      np.full((res, res), 0.8)], axis=-1)
    out = []
    for k in range(TEXTURES):
        rng = np.random.default_rng(1000 + k)
        scale = 0.5 + 0.5 * k / (TEXTURES - 1)
        out.append(np.ascontiguousarray((0.1 + 0.9 * rng.random((res, res, 3))) * shape * scale, dtype=np.float32))
    return out


def rss_mib() -> Optional[float]:
    """This process's resident set size (VmRSS) in MiB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def _noise_se(blocks: Any) -> Any:
    """Standard error of the mean of each block (axis 0) and channel (last axis), from the
    spread of horizontal neighbour differences: the render noise, fireflies included, with
    only edges of the picture added (the spread of the pixels would count the picture)."""
    d = (blocks[:, :, 1:] - blocks[:, :, :-1]).reshape(blocks.shape[0], -1, blocks.shape[-1])
    return d.std(axis=1) / 2**0.5 / (blocks.shape[1] * blocks.shape[2]) ** 0.5


def summary(image: Any) -> Dict[str, Any]:
    """What the guard compares: channel means and 4 x 4 block means of an (H, W, C) image,
    each with its standard error (render noise)."""
    import numpy as np

    a = np.asarray(image, dtype=np.float64)
    h, w, c = a.shape[0] // 4 * 4, a.shape[1] // 4 * 4, a.shape[2]
    b = a[:h, :w].reshape(4, h // 4, 4, w // 4, c).transpose(0, 2, 1, 3, 4).reshape(16, h // 4, w // 4, c)
    return {"mean": a.mean(axis=(0, 1)).tolist(), "mean_se": _noise_se(a[None])[0].tolist(),
            "blocks": b.mean(axis=(1, 2)).reshape(-1).tolist(), "blocks_se": _noise_se(b).reshape(-1).tolist(),
            "finite": bool(np.isfinite(a).all())}


class DeviceTimer:
    """heliograph's device time of enqueued work, by CUDA events on its own stream.

    A spin kernel holds the stream while the host enqueues, so the time between the two
    events is device work only, not the host's enqueue gaps. A diagnostic, never compared."""

    def __init__(self, torch: Any, stream_handle: int, spin_ms: float = 30.0) -> None:
        self.torch = torch
        self.stream = torch.cuda.ExternalStream(stream_handle)
        probe = 2_000_000
        ms = self._events(lambda: self._spin(probe))
        self.cycles = max(1, int(probe * spin_ms / max(ms, 1e-3)))

    def _spin(self, cycles: int) -> None:
        with self.torch.cuda.stream(self.stream):
            self.torch.cuda._sleep(cycles)

    def _events(self, fn: Callable[[], Any]) -> float:
        torch = self.torch
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(self.stream)
        r = fn()
        e1.record(self.stream)
        e1.synchronize()
        del r
        return float(e0.elapsed_time(e1))

    def measure(self, enqueue: Callable[[int], Any], reps: int) -> List[float]:
        out = []
        for i in range(reps):
            self._spin(self.cycles)
            out.append(self._events(lambda i=i: enqueue(i)))
        return out


class Heliograph:
    """heliograph as its README documents it (`import heliograph as hg`)."""

    name = "heliograph"

    def __init__(self, cpu: bool, variant: Optional[str]) -> None:
        import heliograph as hg

        self.hg = hg
        self.variant = variant or ("cpu_rgb" if cpu else "cuda_rgb")
        hg.set_variant(self.variant)  # CudaUnavailableError (with the reason) without a usable GPU
        if hasattr(hg, "set_progress"):
            hg.set_progress(False)
        self.cuda = self.variant == "cuda_rgb"
        self.TensorXf = hg.TensorXf
        self.notes: List[str] = []
        self._refused: Dict[str, str] = {}

    def versions(self) -> Dict[str, str]:
        return {"heliograph": self.hg.__version__, "heliograph variant": self.variant}

    def write_exr(self, path: str, array: Any) -> None:
        self.hg.util.write_bitmap(path, array)

    def load(self, path: str, res: int) -> Any:
        return self.hg.load_file(path, res=res)

    def traverse(self, scene: Any) -> Any:
        return self.hg.traverse(scene)

    def render(self, scene: Any, params: Any, spp: int, seed: int) -> Any:
        return self.hg.render(scene, params, spp=spp, seed=seed)

    def _set_direct(self, params: Any, key: str, value: Any, kind: str) -> None:
        """params[key] = value as the README allows (NumPy or any DLPack array); if this build
        refuses it, wrap in TensorXf and say so in the notes."""
        if kind not in self._refused:
            try:
                params[key] = value
                return
            except TypeError as e:
                self._refused[kind] = f"params[key] = {kind} refused ({e}); timed with TensorXf({kind}) instead"
        if self._refused[kind] not in self.notes:
            self.notes.append(self._refused[kind])
        params[key] = self.TensorXf(value)

    def set_numpy(self, params: Any, key: str, x: Any) -> None:
        self._set_direct(params, key, x, "numpy")

    set_user_numpy = set_numpy  # what a heliograph user writes in a loop

    def set_user_torch(self, params: Any, key: str, t: Any) -> None:
        self._set_direct(params, key, t, "torch tensor")

    def wait(self, img: Any) -> None:
        """Waits for a render without reading it (no host copy)."""
        if hasattr(img, "ready"):
            while not img.ready:
                time.sleep(50e-6)
        elif self.cuda:
            self.hg.sync_device()
        else:
            img.numpy()

    def settle(self) -> None:
        """Waits for queued uploads between untimed steps (only ever outside the timed calls)."""
        if self.cuda:
            self.hg.sync_device()

    def torch_user(self, torch: Any, img: Any) -> Any:
        return torch.from_dlpack(img)

    def jax_user(self, jax: Any, img: Any) -> Any:
        return img.jax()


class Mitsuba:
    """Mitsuba 3 through its own idioms (mi.load_file, mi.traverse, mi.TensorXf, dr.eval, .torch())."""

    name = "Mitsuba"

    def __init__(self, cpu: bool, variant: Optional[str]) -> None:
        import drjit as dr
        import mitsuba as mi

        self.mi, self.dr = mi, dr
        self.notes: List[str] = []
        if variant is None and not cpu:
            variant = "cuda_ad_rgb"
        if variant is None:
            variant = "llvm_ad_rgb"
            if not dr.has_backend(dr.JitBackend.LLVM):
                variant = "scalar_rgb"
                self.notes.append("Dr.Jit found no usable libLLVM: scalar_rgb instead of llvm_ad_rgb")
        if variant not in mi.variants():
            raise NotApplicable(f"this Mitsuba build has no variant {variant} (it has {', '.join(mi.variants())})")
        mi.set_variant(variant)
        self.variant = variant
        self.cuda = variant.startswith("cuda")
        self.TensorXf = mi.TensorXf

    def versions(self) -> Dict[str, str]:
        out = {"mitsuba": self.mi.__version__, "drjit": self.dr.__version__, "mitsuba variant": self.variant}
        if self.variant.startswith("llvm"):
            try:
                out["libLLVM (Dr.Jit)"] = ".".join(str(v) for v in self.dr.detail.llvm_version())
            except Exception:  # noqa: BLE001 -- only informative
                pass
        return out

    def write_exr(self, path: str, array: Any) -> None:
        self.mi.Bitmap(array).write(path)

    def load(self, path: str, res: int) -> Any:
        return self.mi.load_file(path, res=res)

    def traverse(self, scene: Any) -> Any:
        return self.mi.traverse(scene)

    def render(self, scene: Any, params: Any, spp: int, seed: int) -> Any:
        return self.mi.render(scene, params, spp=spp, seed=seed)

    def set_numpy(self, params: Any, key: str, x: Any) -> None:
        params[key] = x

    def set_user_numpy(self, params: Any, key: str, x: Any) -> None:
        params[key] = self.mi.TensorXf(x)

    def set_user_torch(self, params: Any, key: str, t: Any) -> None:
        params[key] = self.mi.TensorXf(t)

    def wait(self, img: Any) -> None:
        self.dr.eval(img)
        self.dr.sync_thread()

    def settle(self) -> None:
        self.dr.sync_thread()

    def torch_user(self, torch: Any, img: Any) -> Any:
        return img.torch()

    def jax_user(self, jax: Any, img: Any) -> Any:
        return img.jax()


class Bench:
    """One renderer's side of every row: set up untimed, time the user-visible calls."""

    def __init__(self, fw: str, cfg: Dict[str, Any]) -> None:
        import numpy as np

        self.np, self.cfg = np, cfg
        self.res, self.cpu = cfg["res"], cfg["cpu"]
        cls = Heliograph if fw == "hg" else Mitsuba
        self.A: Any = cls(self.cpu, cfg["variants"].get(fw))
        self.tex = make_textures(self.res)
        self.info: Dict[str, Any] = {"versions": self.A.versions(), "notes": self.A.notes}
        self.torch, self.torch_why = self._import_torch()
        self.jax, self.jax_why = self._import_jax()
        self.ttex: List[Any] = []
        if self.torch is not None:
            dev = "cpu" if self.cpu else "cuda"
            self.ttex = [self.torch.from_numpy(x).to(dev) for x in self.tex]
        self.timer: Optional[DeviceTimer] = None
        if fw == "hg" and self.A.cuda and self.torch is not None and hasattr(self.torch.cuda, "_sleep"):
            self.timer = DeviceTimer(self.torch, self.A.hg.cuda_stream())
        self._load_scenes(fw)
        self._guards: Dict[str, Any] = {}
        self._jax_method_error: Optional[str] = None

    # ---------------------------------------------------------------- setup

    def _import_torch(self) -> Tuple[Any, Optional[str]]:
        try:
            import torch
        except ImportError as e:
            return None, f"PyTorch not importable ({e})"
        self.info["versions"]["torch"] = torch.__version__
        if not self.cpu and not torch.cuda.is_available():
            return None, "PyTorch sees no CUDA device"
        if not self.cpu:
            self.info["gpu"] = torch.cuda.get_device_name(0)
        return torch, None

    def _import_jax(self) -> Tuple[Any, Optional[str]]:
        try:
            import jax
            import jax.dlpack  # noqa: F401
        except ImportError as e:
            return None, f"JAX not importable ({e})"
        self.info["versions"]["jax"] = jax.__version__
        platform_ = "cpu" if self.cpu else "gpu"
        try:
            if not jax.devices(platform_):
                raise RuntimeError("no device")
        except RuntimeError as e:
            return None, f"JAX has no {platform_} backend ({e})"
        return jax, None

    def _load_scenes(self, fw: str) -> None:
        """The seed scene with its bitmap replaced by a res x res x 3 float32 EXR (heliograph
        keeps a texture's shape on update and Mitsuba keeps an 8-bit PNG as uint8), and the
        Cornell box unchanged. Cold first renders (kernel compiles included) are recorded."""
        np, A, root = self.np, self.A, repo_root()
        work = self.cfg["workdir"]
        exr = os.path.join(work, f"{fw}_texture.exr")
        A.write_exr(exr, self.tex[0])
        with open(os.path.join(root, "scenes", "seed.xml")) as f:
            xml, n = re.subn(r'(<string name="filename" value=")[^"]*(")', rf"\g<1>{exr}\g<2>", f.read())
        if n != 1:
            raise RuntimeError(f"scenes/seed.xml: expected one bitmap filename, found {n}")
        seed_xml = os.path.join(work, f"{fw}_seed.xml")
        with open(seed_xml, "w") as f:
            f.write(xml)
        cold: Dict[str, float] = {}
        t0 = time.perf_counter()
        self.seed = A.load(seed_xml, self.res)
        cold["load seed"] = time.perf_counter() - t0
        self.params = A.traverse(self.seed)
        self.key = self._find_key()
        t0 = time.perf_counter()
        self.cbox = A.load(os.path.join(root, "scenes", "cbox.xml"), self.res)
        cold["load cbox"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        np.array(A.render(self.seed, self.params, 4, 0))
        cold["first seed render (4 spp)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        np.array(A.render(self.cbox, None, 1, 0))
        cold["first cbox render (1 spp)"] = time.perf_counter() - t0
        self.info.update(key=self.key, cold=cold)

    def _find_key(self) -> str:
        """The seed texture's key: KEY if traverse lists it, else the one reflectance texture."""
        keys = list(self.params.keys())
        if KEY in keys:
            found = KEY
        else:
            cands = [k for k in keys if k.endswith("reflectance.data")]
            if len(cands) != 1:
                raise RuntimeError(f"cannot find the seed texture among the keys {keys}")
            found = cands[0]
        shape = tuple(self.params[found].shape)
        if shape != (self.res, self.res, 3):
            raise RuntimeError(f"{found} has shape {shape}, expected {(self.res, self.res, 3)}")
        return found

    def _need_torch(self) -> Any:
        if self.torch is None:
            raise NotApplicable(self.torch_why)
        return self.torch

    def _sync(self) -> None:
        """torch.cuda.synchronize() where a user would write it (not on the CPU)."""
        if not self.cpu:
            self.torch.cuda.synchronize()

    def reset(self) -> None:
        """Texture 0 on the seed scene, nothing queued (untimed, before every row)."""
        self.params[self.key] = self.A.TensorXf(self.tex[0])
        self.params.update()
        self.A.settle()

    # ---------------------------------------------------------------- timing

    def measure(self, step: Callable[[int, Any], Any], before: Optional[Callable[[int], Any]] = None,
                after: Optional[Callable[[Any], None]] = None) -> Dict[str, Any]:
        """Times step(i, before(i)) alone: `warmup` untimed calls first (the first one
        compiles and fills caches), then at least min_reps and for at least row_seconds."""
        cfg = self.cfg
        first, samples, i, stop_at = None, [], 0, None
        while True:
            arg = before(i) if before else None
            t0 = time.perf_counter()
            r = step(i, arg)
            dt = time.perf_counter() - t0
            if after:
                after(r)
            del r
            if i == 0:
                first = dt
            if i >= cfg["warmup"]:
                samples.append(dt)
                if stop_at is None:
                    stop_at = time.perf_counter() + cfg["row_seconds"]
            i += 1
            n = len(samples)
            if n >= cfg["max_reps"] or (n >= cfg["min_reps"] and time.perf_counter() >= stop_at):
                return {"first": first, "warmup": cfg["warmup"], "samples": samples}

    def guard_render(self, scene: Any, params: Any, name: str) -> Dict[str, Any]:
        """Summary of a guard_spp render of the scene as it stands (cached per name)."""
        if name not in self._guards:
            img = self.A.render(scene, params, self.cfg["guard_spp"], GUARD_SEED)
            self._guards[name] = summary(self.np.array(img))
        return self._guards[name]

    def guard_set(self, setter: Callable[[Any], None], value: Any,
                  read: Optional[Callable[[Any], Any]] = None) -> Dict[str, Any]:
        """Sets texture 3 the row's way, updates, renders guard_spp, reads (np.array or `read`)."""
        setter(value)
        self.params.update()
        img = self.A.render(self.seed, self.params, self.cfg["guard_spp"], GUARD_SEED)
        out = summary(read(img) if read else self.np.array(img))
        self.reset()
        return out

    def diag(self, enqueue: Callable[[int], Any]) -> Optional[List[float]]:
        if self.timer is None:
            return None
        out = self.timer.measure(enqueue, self.cfg["diag_reps"])
        self.reset()
        return out

    # ---------------------------------------------------------------- rows

    def _render_read(self, scene: Any, params: Any, spp: int, name: str) -> Dict[str, Any]:
        A, np = self.A, self.np
        out = self.measure(lambda i, _: np.array(A.render(scene, params, spp, i)))
        out["guard"] = self.guard_render(scene, params, name)
        out["diag"] = self.diag(lambda i: A.render(scene, params, spp, i))
        return out

    def row_seed32_np(self) -> Dict[str, Any]:
        return self._render_read(self.seed, self.params, 32, "seed")

    def row_seed1_np(self) -> Dict[str, Any]:
        return self._render_read(self.seed, self.params, 1, "seed")

    def row_cbox32_np(self) -> Dict[str, Any]:
        return self._render_read(self.cbox, None, 32, "cbox")

    def _render_torch(self, export: Callable[[Any], Any]) -> Dict[str, Any]:
        self._need_torch()
        A = self.A

        def step(i: int, _: Any) -> Any:
            t = export(A.render(self.seed, self.params, 32, i))
            self._sync()
            return t

        out = self.measure(step)
        img = A.render(self.seed, self.params, self.cfg["guard_spp"], GUARD_SEED)
        out["guard"] = summary(export(img).cpu().numpy())
        return out

    def row_seed32_torch(self) -> Dict[str, Any]:
        return self._render_torch(lambda img: self.A.torch_user(self.torch, img))

    def row_seed32_torch_method(self) -> Dict[str, Any]:
        return self._render_torch(lambda img: img.torch())

    def row_np_finished(self) -> Dict[str, Any]:
        A, np = self.A, self.np

        def before(i: int) -> Any:
            img = A.render(self.seed, self.params, 32, i)
            A.wait(img)
            return img

        out = self.measure(lambda i, img: np.array(img), before=before)
        img = A.render(self.seed, self.params, self.cfg["guard_spp"], GUARD_SEED)
        A.wait(img)
        out["guard"] = summary(np.array(img))
        return out

    def _set_row(self, setter: Callable[[Any], None], values: List[Any]) -> Dict[str, Any]:
        """Times setter(values[i % 8]) + params.update(); queued uploads settle untimed."""

        def step(i: int, _: Any) -> None:
            setter(values[i % TEXTURES])
            self.params.update()

        out = self.measure(step, after=lambda _: self.A.settle())
        out["guard"] = self.guard_set(setter, values[3])
        return out

    def row_set_tensorxf(self) -> Dict[str, Any]:
        def setter(x: Any) -> None:
            self.params[self.key] = self.A.TensorXf(x)

        return self._set_row(setter, self.tex)

    def row_set_numpy(self) -> Dict[str, Any]:
        return self._set_row(lambda x: self.A.set_numpy(self.params, self.key, x), self.tex)

    def _convert(self, values: List[Any], host: Callable[[Any], Any]) -> Dict[str, Any]:
        A, np = self.A, self.np
        out = self.measure(lambda i, _: A.TensorXf(values[i % TEXTURES]), after=lambda _: A.settle())
        out["guard"] = {"exact": bool(np.array_equal(np.array(A.TensorXf(values[5])), host(values[5])))}
        return out

    def row_tensorxf_np(self) -> Dict[str, Any]:
        return self._convert(self.tex, lambda x: x)

    def row_tensorxf_torch(self) -> Dict[str, Any]:
        self._need_torch()
        return self._convert(self.ttex, lambda t: t.cpu().numpy())

    def row_update_render4(self) -> Dict[str, Any]:
        A, np = self.A, self.np

        def setter(x: Any) -> None:
            self.params[self.key] = A.TensorXf(x)

        def enqueue(i: int) -> Any:
            setter(self.tex[i % TEXTURES])
            self.params.update()
            return A.render(self.seed, self.params, 4, i)

        out = self.measure(lambda i, _: np.array(enqueue(i)))
        out["guard"] = self.guard_set(setter, self.tex[3])
        out["diag"] = self.diag(enqueue)
        return out

    def _total(self, img: Any) -> float:
        """The loop's export: torch.from_dlpack(img).sum().item(), or NumPy without PyTorch."""
        if self.torch is None:
            return float(self.np.asarray(img).sum())
        return self.torch.from_dlpack(img).sum().item()

    def _loop(self, setter: Callable[[Any], None], values: List[Any]) -> Dict[str, Any]:
        A = self.A

        def step(i: int, _: Any) -> float:
            setter(values[i % TEXTURES])
            self.params.update()
            return self._total(A.render(self.seed, self.params, 4, i))

        out = self.measure(step)
        if self.torch is None:
            out["note"] = "PyTorch missing: the export is np.asarray(img).sum()"
            read = None
        else:
            def read(img: Any) -> Any:
                return self.torch.from_dlpack(img).cpu().numpy()
        out["guard"] = self.guard_set(setter, values[3], read)
        return out

    def row_loop_torch(self) -> Dict[str, Any]:
        self._need_torch()
        return self._loop(lambda t: self.A.set_user_torch(self.params, self.key, t), self.ttex)

    def row_loop_numpy(self) -> Dict[str, Any]:
        return self._loop(lambda x: self.A.set_user_numpy(self.params, self.key, x), self.tex)

    def row_enqueue(self) -> Dict[str, Any]:
        A = self.A
        out = self.measure(lambda i, _: A.render(self.seed, self.params, 32, i), after=A.wait)
        out["guard"] = self.guard_render(self.seed, self.params, "seed")
        return out

    # ---------------------------------------------------------------- soak

    def _device_used_mib(self) -> Optional[float]:
        if self.cpu or self.torch is None:
            return None
        free, total = self.torch.cuda.mem_get_info()
        return (total - free) / 2**20

    def _exporters(self) -> List[Tuple[str, Callable[[Any], float]]]:
        out: List[Tuple[str, Callable[[Any], float]]] = []
        if self.torch is not None:
            out.append(("torch", lambda img: self.A.torch_user(self.torch, img).sum().item()))
        if self.jax is not None:
            out.append(("jax", self._jax_export))
        if not out:
            out.append(("numpy", lambda img: float(self.np.asarray(img).sum())))
        return out

    def _jax_export(self, img: Any) -> float:
        """img.jax(); if the renderer's method fails, jax.dlpack.from_dlpack(img) (noted)."""
        if self._jax_method_error is None:
            try:
                return float(self.A.jax_user(self.jax, img).sum())
            except Exception as e:  # noqa: BLE001 -- fall back, say why in the row's note
                self._jax_method_error = f"img.jax() failed ({type(e).__name__}: {e}); used jax.dlpack.from_dlpack(img)"
        return float(self.jax.dlpack.from_dlpack(img).sum())

    def soak(self, seconds: float) -> Dict[str, Any]:
        """Cycles of set texture (NumPy, then torch), update, render 4 spp, export (torch, then
        JAX) for `seconds`; every 4th cycle the export's sum is checked against a host read."""
        A, np = self.A, self.np
        setters = [("numpy", lambda k: A.set_user_numpy(self.params, self.key, self.tex[k % TEXTURES]))]
        if self.torch is not None:
            setters.append(("torch", lambda k: A.set_user_torch(self.params, self.key, self.ttex[k % TEXTURES])))
        exporters = self._exporters()
        rss0, dev0 = rss_mib(), self._device_used_mib()
        samples: List[float] = []
        checked = mismatched = 0
        warm = max(2, len(setters) * len(exporters))
        end = time.perf_counter() + seconds
        k = 0
        while k < warm or time.perf_counter() < end:
            set_tex = setters[k % len(setters)][1]
            export = exporters[(k // len(setters)) % len(exporters)][1]
            t0 = time.perf_counter()
            set_tex(k)
            self.params.update()
            img = A.render(self.seed, self.params, 4, k)
            value = export(img)
            dt = time.perf_counter() - t0
            if k >= warm:
                samples.append(dt)
            if k % 4 == 3:
                host = float(np.asarray(img, dtype=np.float64).sum())
                checked += 1
                mismatched += abs(value - host) > 1e-4 * max(abs(host), 1.0)
            del img
            k += 1
        self.reset()
        notes = [f"textures: {', '.join(s[0] for s in setters)}; exports: {', '.join(e[0] for e in exporters)}"]
        notes += [why for why in (self.torch_why, self.jax_why, self._jax_method_error) if why]
        return {"first": None, "warmup": warm, "samples": samples, "rss_mib": [rss0, rss_mib()],
                "device_used_mib": [dev0, self._device_used_mib()], "checked": checked,
                "mismatched": mismatched, "note": "; ".join(notes)}

    def run_row(self, row: str, soak_seconds: float) -> Dict[str, Any]:
        self.reset()
        if row == "soak":
            return self.soak(soak_seconds)
        self.A.notes.clear()
        out = getattr(self, f"row_{row}")()
        if self.A.notes:
            out["note"] = "; ".join(filter(None, [out.get("note"), *self.A.notes]))
        return out


def worker_main(fw: str, cfg: Dict[str, Any]) -> int:
    """Answers the parent's JSON requests, one line each way. The protocol uses a private
    copy of stdout; fd 1 goes to stderr so that library output cannot corrupt it."""
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def reply(obj: Dict[str, Any]) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    bench: Optional[Bench] = None
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["cmd"] == "init":
                bench = Bench(fw, cfg)
                reply({"ok": True, "info": bench.info})
            elif req["cmd"] == "row":
                assert bench is not None
                reply({"ok": True, "result": bench.run_row(req["row"], req.get("soak_seconds", 0.0))})
            elif req["cmd"] == "quit":
                reply({"ok": True})
                return 0
        except NotApplicable as e:
            reply({"ok": False, "na": str(e)})
        except Exception as e:  # noqa: BLE001 -- reported as this row's n/a, the worker goes on
            traceback.print_exc()
            reply({"ok": False, "na": f"{type(e).__name__}: {e}".strip()[:300]})
    return 0


# ================================================================ parent side


class Worker:
    """A worker process: JSON requests on stdin, answers read by a thread (for timeouts),
    stderr echoed with a prefix and its tail kept (to say why a worker died)."""

    def __init__(self, fw: str, cfg: Dict[str, Any]) -> None:
        self.fw = fw
        cmd = [sys.executable, "-u", os.path.abspath(__file__), "--worker", fw, "--config", json.dumps(cfg)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.answers: queue.Queue = queue.Queue()
        self.tail: collections.deque = collections.deque(maxlen=12)
        self.dead: Optional[str] = None
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._echo, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.answers.put(line)
        self.answers.put(None)

    def _echo(self) -> None:
        for line in self.proc.stderr:
            self.tail.append(line.rstrip())
            sys.stderr.write(f"[{self.fw}] {line}")

    def request(self, req: Dict[str, Any], timeout: float) -> Dict[str, Any]:
        if self.dead:
            return {"ok": False, "na": self.dead}
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.answers.get(timeout=timeout)
        except (BrokenPipeError, OSError):
            line = None
        except queue.Empty:
            self.proc.kill()
            self.dead = f"worker stopped: no answer within {timeout:.0f} s"
            return {"ok": False, "na": self.dead}
        if line is None:
            rc = self.proc.wait()
            time.sleep(0.2)  # let the echo thread catch the last lines
            last = next((t for t in reversed(self.tail) if t.strip()), "")
            self.dead = f"worker died (exit {rc}): {last[:200]}"
            return {"ok": False, "na": self.dead}
        return json.loads(line)

    def close(self, force: bool = False) -> None:
        if not force and not self.dead and self.proc.poll() is None:
            try:
                self.request({"cmd": "quit"}, timeout=30)
            except Exception:  # noqa: BLE001 -- shutting down anyway
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def quantile(xs: List[float], q: float) -> float:
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def stats(samples: List[float]) -> Optional[Dict[str, float]]:
    if not samples:
        return None
    ms = [x * 1e3 for x in samples]
    return {"median": statistics.median(ms), "p10": quantile(ms, 0.1), "p90": quantile(ms, 0.9), "n": len(ms)}


def _worst(xs: List[float], ys: List[float], xse: List[float], yse: List[float], tol: float,
           floor: float) -> Tuple[float, bool]:
    """The largest relative difference, and whether every pair agrees: within tol (relative,
    plus an absolute floor) or within 5 standard errors (low spp, dark blocks)."""
    worst, ok = 0.0, True
    for x, y, sx, sy in zip(xs, ys, xse, yse):
        d = abs(x - y)
        worst = max(worst, d / max(abs(x), abs(y), 1e-9))
        ok = ok and (d <= tol * max(abs(x), abs(y)) + floor or d <= 5 * (sx * sx + sy * sy) ** 0.5)
    return worst, ok


def guard_verdict(a: Optional[Dict[str, Any]], b: Optional[Dict[str, Any]], tol: float) -> str:
    """ok, or a warning: channel means within tol, 4x4 block means within 2*tol (see _worst)."""
    if a is None or b is None:
        return "-"
    if "exact" in a:
        bad = [NAMES[fw] for fw, g in (("hg", a), ("mi", b)) if not g["exact"]]
        return "ok (both exact)" if not bad else f"WARNING: {' and '.join(bad)} changed the values"
    if not (a["finite"] and b["finite"]):
        return "WARNING: NaN/inf in the image"
    floor = 0.02 * max(sum(b["mean"]) / 3, 1e-6)
    worst_mean, ok_mean = _worst(a["mean"], b["mean"], a["mean_se"], b["mean_se"], tol, 0.0)
    worst_block, ok_block = _worst(a["blocks"], b["blocks"], a["blocks_se"], b["blocks_se"], 2 * tol, floor)
    text = f"mean {100 * worst_mean:.1f}%, blocks {100 * worst_block:.1f}%"
    return f"ok ({text})" if ok_mean and ok_block else f"WARNING: images differ ({text})"


def fmt_ms(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 100 else f"{x:.0f}"


def fmt_stats(s: Optional[Dict[str, float]]) -> str:
    if s is None:
        return "-"
    return f"{fmt_ms(s['median'])} [{fmt_ms(s['p10'])}-{fmt_ms(s['p90'])}] n={s['n']}"


def fmt_rate(samples_per_s: Optional[float]) -> str:
    if samples_per_s is None:
        return "-"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if samples_per_s >= div:
            return f"{samples_per_s / div:.3g}{unit}"
    return f"{samples_per_s:.3g}"


def machine_info() -> Dict[str, str]:
    info = {"python": platform.python_version(), "os": platform.platform(), "cores": str(os.cpu_count())}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        info["cpu"] = platform.processor() or "?"
    if shutil.which("nvidia-smi"):
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                           capture_output=True, text=True)
        if p.returncode == 0 and p.stdout.strip():
            info["gpu"] = p.stdout.strip().splitlines()[0]
    for dist in ("heliograph", "mitsuba", "drjit", "torch", "jax", "numpy"):
        try:  # installed versions, without importing (a worker that fails still has one)
            info[f"version {dist}"] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            info[f"version {dist}"] = "not installed"
    try:
        rev = subprocess.run(["git", "-C", repo_root(), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True)
        if rev.returncode == 0:
            info["commit"] = rev.stdout.strip()
    except OSError:
        pass
    return info


def build_rows(results: Dict[str, Dict[str, Dict[str, Any]]], res: int, tol: float) -> List[Dict[str, Any]]:
    rows = []
    for rid, label, spp in ROWS:
        if rid not in results:
            continue
        row: Dict[str, Any] = {"id": rid, "label": label, "spp": spp}
        for fw in FRAMEWORKS:
            ans = results[rid].get(fw, {"ok": False, "na": "not run"})
            if not ans.get("ok"):
                row[fw] = {"na": ans.get("na") or "failed"}
                continue
            r = ans["result"]
            st = stats(r["samples"])
            cell = {"stats": st, "first_ms": r["first"] * 1e3 if r.get("first") else None,
                    "warmup": r.get("warmup"), "note": r.get("note"), "guard": r.get("guard"),
                    "samples_ms": [x * 1e3 for x in r["samples"]]}
            if spp and st:
                cell["samples_per_s"] = res * res * spp / (st["median"] / 1e3)
            if r.get("diag"):
                cell["device_ms"] = statistics.median(r["diag"])
            for k in ("rss_mib", "device_used_mib", "checked", "mismatched"):
                if k in r:
                    cell[k] = r[k]
            row[fw] = cell
        hg, mi = row["hg"], row["mi"]
        if hg.get("stats") and mi.get("stats"):
            row["ratio"] = hg["stats"]["median"] / mi["stats"]["median"]
        row["guard"] = guard_verdict(hg.get("guard"), mi.get("guard"), tol)
        rows.append(row)
    return rows


def cell_text(c: Dict[str, Any]) -> str:
    if "na" in c:
        why = c["na"] if len(c["na"]) <= 100 else c["na"][:97] + "..."
        return f"n/a ({why})"
    return fmt_stats(c.get("stats"))


def header_lines(report: Dict[str, Any]) -> List[str]:
    """Machine, versions, settings, cold starts and the guard, above the table."""
    m, cfg = report["machine"], report["config"]
    hgi, mii = report["workers"].get("hg", {}), report["workers"].get("mi", {})
    vers = {k.split(" ", 1)[1]: v for k, v in m.items() if k.startswith("version ")}
    for w in (hgi, mii):
        vers.update(w.get("versions", {}))
    asked = cfg["variants"]
    lines = [f"## seed-loop benchmark: heliograph {vers.get('heliograph variant', asked['hg'])} vs Mitsuba "
             f"{vers.get('mitsuba variant', asked['mi'])}", ""]
    lines.append(f"- date: {report['date']}; commit {m.get('commit', '?')}; {m['os']}")
    gpu = m.get("gpu") or hgi.get("gpu") or mii.get("gpu") or "none"
    load = " -> ".join("/".join(f"{x:.1f}" for x in la) for la in report.get("load", []))
    lines.append(f"- machine: GPU {gpu}; CPU {m['cpu']} ({m['cores']} cores); load average at start -> end: {load}")
    order = ("heliograph", "mitsuba", "drjit", "libLLVM (Dr.Jit)", "torch", "jax", "numpy")
    vtext = ", ".join(f"{k} {vers[k]}" for k in order if k in vers)
    lines.append(f"- versions: {vtext}, python {m['python']}")
    lines.append(f"- film {cfg['res']}x{cfg['res']}; texture {cfg['res']}x{cfg['res']}x3 float32, {TEXTURES} rotating; "
                 f"per row and renderer {cfg['warmup']} untimed warm-up calls (kernel compiles, caches), then "
                 f">= {cfg['min_reps']} timed calls over >= {cfg['row_seconds']} s (max {cfg['max_reps']}); "
                 f"times in ms: median [p10-p90] n; ratio = heliograph / Mitsuba medians (< 1: heliograph faster)")
    for fw, w in (("hg", hgi), ("mi", mii)):
        if "cold" in w:
            cold = ", ".join(f"{k} {v:.2f} s" for k, v in w["cold"].items())
            lines.append(f"- {NAMES[fw]} cold start (kernel compiles included): {cold}; texture key `{w['key']}`")
        elif "na" in w:
            lines.append(f"- {NAMES[fw]}: n/a ({w['na']})")
    if cfg["cpu"]:
        lines.append("- --cpu: torch tensors live on the CPU, so the torch rows have no torch.cuda.synchronize(); "
                     "no device-time column")
    lines.append(f"- guard: {cfg['guard_spp']} spp renders, channel means within {100 * cfg['tolerance']:.0f}% and "
                 f"4x4 block means within {200 * cfg['tolerance']:.0f}% (or 5 standard errors of the noise); "
                 "device ms: heliograph's stream, diagnostic")
    return lines


def note_lines(report: Dict[str, Any]) -> List[str]:
    """Below the table: the soak's memory and checks, per-row notes, first calls, worker notes."""
    out = []
    for r in report["rows"]:
        for fw in FRAMEWORKS:
            c = r[fw]
            if r["id"] == "soak" and "stats" in c:
                rss, dev = c["rss_mib"], c["device_used_mib"]
                dtext = f"{dev[0]:.0f} -> {dev[1]:.0f} MiB" if dev[0] is not None else "n/a"
                out.append(f"- soak, {NAMES[fw]}: {c['stats']['n']} cycles; host RSS {rss[0]:.0f} -> "
                           f"{rss[1]:.0f} MiB; device memory used {dtext}; export vs host read: "
                           f"{c['mismatched']} of {c['checked']} checked cycles differ")
            if c.get("note"):
                out.append(f"- {r['label']}, {NAMES[fw]}: {c['note']}")
            if c.get("first_ms") is not None and r["id"] in ("seed32_np", "cbox32_np", "update_render4"):
                out.append(f"- {r['label']}, {NAMES[fw]}: first (untimed) call {fmt_ms(c['first_ms'])} ms")
    for fw in FRAMEWORKS:
        out += [f"- {n}" for n in report["workers"].get(fw, {}).get("notes", [])]
    return out + [f"- {n}" for n in report["notes"]]


def render_markdown(report: Dict[str, Any]) -> str:
    head = ["row", "heliograph ms", "Mitsuba ms", "hg/mi", "hg samples/s", "mi samples/s", "hg device ms (diag.)",
            "guard"]
    lines = header_lines(report) + ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in report["rows"]:
        hg, mi = r["hg"], r["mi"]
        dev = hg.get("device_ms")
        lines.append("| " + " | ".join([
            r["label"], cell_text(hg), cell_text(mi), f"{r['ratio']:.2f}" if "ratio" in r else "-",
            fmt_rate(hg.get("samples_per_s")), fmt_rate(mi.get("samples_per_s")),
            fmt_ms(dev) if dev is not None else "-", r["guard"]]) + " |")
    notes = note_lines(report)
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true", help="heliograph cpu_rgb vs Mitsuba llvm_ad_rgb (scalar_rgb)")
    ap.add_argument("--out", help="write the table as Markdown here and as JSON beside it (.json)")
    ap.add_argument("--soak-seconds", type=float, default=45.0, help="soak length per renderer (default 45)")
    ap.add_argument("--res", type=int, default=512)
    ap.add_argument("--rows", default=",".join(ROW_IDS), help="comma-separated row ids (default: all)")
    ap.add_argument("--frameworks", default="hg,mi", help="hg, mi or both (default)")
    ap.add_argument("--hg-variant", default=None, help="default cuda_rgb (--cpu: cpu_rgb)")
    ap.add_argument("--mi-variant", default=None, help="default cuda_ad_rgb (--cpu: llvm_ad_rgb, else scalar_rgb)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed calls per row (default 5; --cpu 1)")
    ap.add_argument("--min-reps", type=int, default=None, help="default 20 (--cpu 3)")
    ap.add_argument("--max-reps", type=int, default=None, help="default 2000 (--cpu 30)")
    ap.add_argument("--row-seconds", type=float, default=None, help="timed seconds per row (default 2; --cpu 4)")
    ap.add_argument("--guard-spp", type=int, default=None, help="spp of the guard renders (default 256; --cpu 16)")
    ap.add_argument("--tolerance", type=float, default=0.03, help="guard: relative difference of channel means")
    ap.add_argument("--diag-reps", type=int, default=5, help="device-time repetitions (heliograph CUDA only)")
    ap.add_argument("--deadline", type=float, default=None, help="seconds: rows not started by then are n/a")
    ap.add_argument("--request-timeout", type=float, default=600.0, help="seconds a worker may take for one row")
    ap.add_argument("--worker", choices=FRAMEWORKS, help=argparse.SUPPRESS)
    ap.add_argument("--config", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    gpu_defaults = {"warmup": 5, "min_reps": 20, "max_reps": 2000, "row_seconds": 2.0, "guard_spp": 256}
    cpu_defaults = {"warmup": 1, "min_reps": 3, "max_reps": 30, "row_seconds": 4.0, "guard_spp": 16}
    for k, v in (cpu_defaults if args.cpu else gpu_defaults).items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    return args


def start_workers(fws: List[str], cfg: Dict[str, Any], report: Dict[str, Any], started: List[Worker],
                  timeout: float) -> Dict[str, Worker]:
    """The workers that started (imports, scene loads, cold first renders); why not, in the report."""
    workers = {}
    for fw in FRAMEWORKS:
        if fw not in fws:
            report["workers"][fw] = {"na": "not selected (--frameworks)"}
            continue
        print(f"starting the {NAMES[fw]} worker (imports, scene loads, cold first renders)", file=sys.stderr)
        w = Worker(fw, cfg)
        started.append(w)
        ans = w.request({"cmd": "init"}, timeout=timeout)
        if ans.get("ok"):
            report["workers"][fw] = ans["info"]
            workers[fw] = w
        else:
            report["workers"][fw] = {"na": ans["na"]}
    return workers


def run_rows(rows: List[str], workers: Dict[str, Worker], args: argparse.Namespace, t_start: float,
             results: Dict[str, Dict[str, Any]]) -> None:
    """Each row on both workers back to back, which goes first alternating; fills `results`."""
    for n, rid in enumerate(rows):
        elapsed = time.monotonic() - t_start
        for fw in FRAMEWORKS if n % 2 == 0 else FRAMEWORKS[::-1]:
            if fw not in workers:
                results[rid][fw] = {"ok": False, "na": f"no {NAMES[fw]} worker, see above"}
                continue
            if args.deadline is not None and time.monotonic() - t_start > args.deadline:
                results[rid][fw] = {"ok": False, "na": f"not started: past --deadline {args.deadline:.0f} s"}
                continue
            soak = args.soak_seconds
            if args.deadline is not None and rid == "soak":
                soak = max(5.0, min(soak, (args.deadline - elapsed - 60.0) / 2))
            print(f"row {rid}: {NAMES[fw]}", file=sys.stderr)
            results[rid][fw] = workers[fw].request({"cmd": "row", "row": rid, "soak_seconds": soak},
                                                   timeout=args.request_timeout + soak)


def on_sigterm(signum: int, frame: Any) -> None:
    raise Stopped()


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker_main(args.worker, json.loads(args.config))
    t_start = time.monotonic()
    rows = [r for r in args.rows.split(",") if r]
    bad = [r for r in rows if r not in ROW_IDS]
    if bad:
        print(f"unknown rows {bad}; known: {', '.join(ROW_IDS)}", file=sys.stderr)
        return 2
    workdir = tempfile.mkdtemp(prefix="seed_loop_")
    cfg = {"cpu": args.cpu, "res": args.res, "warmup": args.warmup, "min_reps": args.min_reps,
           "max_reps": args.max_reps, "row_seconds": args.row_seconds, "guard_spp": args.guard_spp,
           "diag_reps": args.diag_reps, "workdir": workdir, "tolerance": args.tolerance,
           "variants": {"hg": args.hg_variant, "mi": args.mi_variant}}
    asked = {"hg": args.hg_variant or ("cpu_rgb" if args.cpu else "cuda_rgb"),
             "mi": args.mi_variant or ("llvm_ad_rgb" if args.cpu else "cuda_ad_rgb")}
    report: Dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine_info(),
        "config": {**{k: v for k, v in cfg.items() if k != "workdir"}, "variants": asked},
        "workers": {}, "notes": [], "load": [os.getloadavg()]}
    results: Dict[str, Dict[str, Any]] = {r: {} for r in rows}
    started: List[Worker] = []
    signal.signal(signal.SIGTERM, on_sigterm)
    stopped = False
    try:
        workers = start_workers([f for f in args.frameworks.split(",") if f], cfg, report, started,
                                args.request_timeout)
        run_rows(rows, workers, args, t_start, results)
    except (Stopped, KeyboardInterrupt):
        stopped = True
        report["notes"].append(f"stopped (signal) after {time.monotonic() - t_start:.0f} s: later rows are missing")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for w in started:
            w.close(force=stopped)
        shutil.rmtree(workdir, ignore_errors=True)
    report["load"].append(os.getloadavg())
    report["rows"] = build_rows(results, args.res, args.tolerance)
    report["seconds"] = round(time.monotonic() - t_start, 1)
    text = render_markdown(report)
    print()
    print(text, end="")
    if args.out:
        base = args.out[:-3] if args.out.endswith(".md") else args.out
        with open(base + ".md", "w") as f:
            f.write(text)
        with open(base + ".json", "w") as f:
            json.dump(report, f, indent=1)
        print(f"\n(written to {base}.md and {base}.json; {report['seconds']} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
