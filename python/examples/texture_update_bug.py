"""The seed bug, reproduced on demand .

Each frame sets the texture of scenes/seed.xml to a frame-unique colour, calls
``params.update()``, renders (asynchronously, on heliograph's non-blocking CUDA stream),
exports the film to a consumer that immediately enqueues a copy on *its* stream, waits
for the consumer, and compares the consumer's copy with ``img.numpy()`` (a host read
after a full wait on that render). A mismatch is a wrong frame. Export modes:

    unsafe  export with stream=-1 whatever the consumer asks (skips the wait, as the old
            renderer did): the consumer may read the film before the render wrote it
    stream  hand the tensor itself to the consumer (the consumer's stream
            waits on the film's ready event; the host never blocks)
    sync    hg.sync_device() (a device-wide synchronise), then export like unsafe:
            right, but it waits for every kernel on the GPU

Consumers: jax (``jax.dlpack.from_dlpack(x) + 0``), torch (``torch.from_dlpack(x).clone()``
on the default stream), torch-side (the same inside ``with torch.cuda.stream(s)``).
With --contention an unrelated long kernel (a chain of torch matmuls, or a one-thread
spin kernel) runs on another stream during each frame: ``stream`` must not wait for it,
``sync`` does.

    python python/examples/texture_update_bug.py [--frames 50] [--spp 256] [--res 512]
        [--modes unsafe,stream,sync] [--consumers jax,torch,torch-side]
        [--contention] [--contention-kernels matmul,spin] [--json out.json]

Exit status: 0 when ``stream`` and ``sync`` had no wrong frame (``unsafe`` is expected to
have some), 1 otherwise, 2 when the cuda_rgb variant or every consumer is unavailable.
``run(...)`` does the same from Python and returns the results as a dict.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import math
import os
import statistics
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

# JAX would otherwise reserve 75 % of the GPU for itself (and TensorFlow all of it)
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")

import numpy as np  # noqa: E402

import heliograph as hg  # noqa: E402

KEY = "shape.bsdf.reflectance.data"
MODES = ("unsafe", "stream", "sync")
CONSUMERS = ("jax", "torch", "torch-side")
KERNELS = ("matmul", "spin")


class Unavailable(Exception):
    """A consumer or contention kernel cannot run here (framework or GPU missing)."""


def repo_root() -> str:
    """$HELIOGRAPH_ROOT when it holds scenes/seed.xml, else the checkout holding this file."""
    env = os.environ.get("HELIOGRAPH_ROOT")
    if env and os.path.isfile(os.path.join(env, "scenes", "seed.xml")):
        return env
    return os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


class SkipWait:
    """Exports ``tensor`` with stream=-1 whatever stream the consumer passes: no wait at all."""

    def __init__(self, tensor: Any):
        self.tensor = tensor

    def __dlpack_device__(self) -> Any:
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        kwargs: Dict[str, Any] = {"stream": -1, "max_version": max_version}
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        return self.tensor.__dlpack__(**kwargs)


def frame_colour(i: int) -> np.ndarray:
    """An RGB albedo in [0.05, 0.95] that differs from the previous frames' (golden-ratio steps)."""
    phase = (i * 0.6180339887 + np.array([0.0, 1 / 3, 2 / 3])) % 1.0
    return (0.05 + 0.9 * phase).astype(np.float32)


# ---------------------------------------------------------------- consumers


class JaxConsumer:
    """``jnp.asarray(jax.dlpack.from_dlpack(obj)) + 0`` on JAX's own stream."""

    name = "jax"

    def __init__(self) -> None:
        try:
            with warnings.catch_warnings():  # a framework's import-time warnings are its own
                warnings.simplefilter("ignore")
                import jax
                import jax.dlpack  # noqa: F401
                import jax.numpy as jnp
        except ImportError as e:
            raise Unavailable(f"JAX is not importable ({e})") from e
        try:
            gpus = jax.devices("gpu")
        except RuntimeError as e:
            raise Unavailable(f"JAX has no GPU backend ({e})") from e
        if not gpus:
            raise Unavailable("JAX lists no GPU device")
        self.jax, self.jnp = jax, jnp

    def warm(self, shape: Sequence[int]) -> None:
        x = self.jnp.zeros(tuple(shape), self.jnp.float32)
        (self.jnp.asarray(x) + 0).block_until_ready()

    def consume(self, obj: Any) -> Any:
        return self.jnp.asarray(self.jax.dlpack.from_dlpack(obj)) + 0

    def wait(self, y: Any) -> None:
        y.block_until_ready()

    def host(self, y: Any) -> np.ndarray:
        return np.asarray(y)


class TorchConsumer:
    """``torch.from_dlpack(obj).clone()`` on the current stream, or inside a side stream."""

    def __init__(self, side: bool) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import torch
        except ImportError as e:
            raise Unavailable(f"PyTorch is not importable ({e})") from e
        if not torch.cuda.is_available():
            raise Unavailable("PyTorch sees no CUDA device")
        self.torch = torch
        self.stream = torch.cuda.Stream() if side else None
        self.name = "torch-side" if side else "torch"

    def _enqueue(self, fn: Callable[[], Any]) -> Any:
        if self.stream is None:
            return fn()
        with self.torch.cuda.stream(self.stream):
            return fn()

    def warm(self, shape: Sequence[int]) -> None:
        y = self._enqueue(lambda: self.torch.zeros(tuple(shape), device="cuda").clone())
        self.wait(y)

    def consume(self, obj: Any) -> Any:
        return self._enqueue(lambda: self.torch.from_dlpack(obj).clone())

    def wait(self, y: Any) -> None:
        (self.torch.cuda.current_stream() if self.stream is None else self.stream).synchronize()

    def host(self, y: Any) -> np.ndarray:
        return y.cpu().numpy()


def make_consumer(name: str) -> Any:
    """A consumer by name (raises Unavailable when its framework or GPU is missing)."""
    if name == "jax":
        return JaxConsumer()
    if name in ("torch", "torch-side"):
        return TorchConsumer(side=name == "torch-side")
    raise ValueError(f"unknown consumer {name!r}; known: {', '.join(CONSUMERS)}")


# ---------------------------------------------------------------- contention


class Contention:
    """An unrelated long kernel on its own (non-blocking) torch stream, sized by timing once.

    ``matmul``: a chain of 4096x4096 float32 matmuls (competes for the SMs as real work would);
    ``spin``: ``torch.cuda._sleep``, one thread spinning (occupies one SM, takes wall time only).
    """

    def __init__(self, kind: str, target_ms: float) -> None:
        try:
            import torch
        except ImportError as e:
            raise Unavailable(f"--contention needs PyTorch ({e})") from e
        if not torch.cuda.is_available():
            raise Unavailable("--contention needs PyTorch with a CUDA device")
        self.torch, self.kind = torch, kind
        self.stream = torch.cuda.Stream()
        if kind == "spin":
            if not hasattr(torch.cuda, "_sleep"):
                raise Unavailable("this PyTorch has no torch.cuda._sleep")
            probe = 20_000_000
            ms = self._time(lambda: torch.cuda._sleep(probe))
            self.cycles = max(1, int(probe * target_ms / max(ms, 1e-3)))
        elif kind == "matmul":
            n = 4096
            with torch.cuda.stream(self.stream):
                self.a = torch.rand(n, n, device="cuda") / n
                self.c = torch.empty_like(self.a)
            self._time(lambda: torch.mm(self.a, self.a, out=self.c))  # cuBLAS warm-up
            ms = self._time(lambda: torch.mm(self.a, self.a, out=self.c))
            self.reps = max(1, math.ceil(target_ms / max(ms, 1e-3)))
        else:
            raise ValueError(f"unknown contention kernel {kind!r}; known: {', '.join(KERNELS)}")
        self.kernel_ms = self._time(self.launch)  # what one launch really takes, alone

    def _time(self, fn: Callable[[], Any]) -> float:
        torch = self.torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(self.stream):
            start.record()
            fn()
            end.record()
        end.synchronize()
        return float(start.elapsed_time(end))

    def launch(self) -> None:
        torch = self.torch
        with torch.cuda.stream(self.stream):
            if self.kind == "spin":
                torch.cuda._sleep(self.cycles)
            else:
                for _ in range(self.reps):
                    torch.mm(self.a, self.a, out=self.c)

    def wait(self) -> None:
        self.stream.synchronize()


# ---------------------------------------------------------------- the frame loop


def _stats(xs: List[float]) -> Dict[str, float]:
    if not xs:
        return {"mean": float("nan"), "median": float("nan"), "p90": float("nan"), "max": float("nan")}
    s = sorted(xs)
    return {"mean": statistics.fmean(s), "median": statistics.median(s),
            "p90": s[min(len(s) - 1, int(0.9 * len(s)))], "max": s[-1]}


class Session:
    """The seed scene, its parameters and the texture shape, on the cuda_rgb variant."""

    def __init__(self, res: int, spp: int) -> None:
        hg.set_variant("cuda_rgb")  # CudaUnavailableError without a usable GPU
        self.res, self.spp = res, spp
        self.scene = hg.load_file(os.path.join(repo_root(), "scenes", "seed.xml"), spp=spp, res=res)
        self.params = hg.traverse(self.scene)
        self.tex_shape = tuple(self.params[KEY].shape)

    def set_texture(self, i: int) -> None:
        self.params[KEY] = np.broadcast_to(frame_colour(i), self.tex_shape).astype(np.float32)
        self.params.update()

    def render(self, seed: int) -> Any:
        return hg.render(self.scene, spp=self.spp, seed=seed % 2**31)

    def timing(self, n: int = 3) -> Dict[str, Any]:
        """How long render() takes to return and the render to finish (no export)."""
        calls, totals, ready_at_return = [], [], []
        for k in range(n + 1):
            self.set_texture(-1 - k)
            t0 = time.perf_counter()
            img = self.render(seed=k)
            t1 = time.perf_counter()
            ready_at_return.append(bool(img.ready))
            img.numpy()
            t2 = time.perf_counter()
            if k:  # the first one compiles/uploads
                calls.append((t1 - t0) * 1e3)
                totals.append((t2 - t0) * 1e3)
        return {"render_call_ms": statistics.median(calls), "render_total_ms": statistics.median(totals),
                "ready_when_render_returned": any(ready_at_return[1:])}


def _export(mode: str, img: Any) -> Any:
    if mode == "stream":
        return img
    if mode == "sync":
        hg.sync_device()
    elif mode != "unsafe":
        raise ValueError(f"unknown mode {mode!r}; known: {', '.join(MODES)}")
    return SkipWait(img)


def run_frames(session: Session, consumer: Any, mode: str, frames: int, deadline: float,
               contention: Optional[Contention] = None, log: Callable[[str], None] = print,
               first_frame: int = 0) -> Dict[str, Any]:
    """``frames`` frames of texture update, render, export, consume; counts wrong frames."""
    row: Dict[str, Any] = {"mode": mode, "consumer": consumer.name, "frames": 0, "wrong": 0, "stale": 0,
                           "max_mismatch_fraction": 0.0, "incomplete": False, "error": None}
    lat: List[float] = []
    whole: List[float] = []
    prev_ref: Optional[np.ndarray] = None
    last_print = time.monotonic()
    for k in range(frames):
        if time.monotonic() > deadline:
            row["incomplete"] = True
            log(f"    deadline reached after {k} of {frames} frames")
            break
        i = first_frame + k
        if contention is not None:
            contention.wait()
            contention.launch()
        t_start = time.perf_counter()
        session.set_texture(i)
        img = session.render(seed=i)
        t0 = time.perf_counter()
        y = consumer.consume(_export(mode, img))
        consumer.wait(y)
        t1 = time.perf_counter()
        got, ref = consumer.host(y), img.numpy()
        del y, img
        lat.append((t1 - t0) * 1e3)
        whole.append((t1 - t_start) * 1e3)
        row["frames"] += 1
        if got.shape != ref.shape or not np.array_equal(got, ref):
            row["wrong"] += 1
            frac = 1.0 if got.shape != ref.shape else float(np.mean(got != ref))
            row["max_mismatch_fraction"] = max(row["max_mismatch_fraction"], frac)
            if prev_ref is not None and got.shape == prev_ref.shape and np.array_equal(got, prev_ref):
                row["stale"] += 1
        prev_ref = ref
        if time.monotonic() - last_print > 5.0:
            last_print = time.monotonic()
            log(f"    frame {k + 1}/{frames}: {row['wrong']} wrong so far")
    if contention is not None:
        contention.wait()
    row["export_ready_ms"] = _stats(lat)
    row["frame_ms"] = _stats(whole)
    return row


def _frames_for(frames: Union[int, Dict[str, int]], mode: str) -> int:
    return frames.get(mode, 50) if isinstance(frames, dict) else int(frames)


def _versions() -> Dict[str, str]:
    out = {"python": sys.version.split()[0], "heliograph": hg.__version__, "numpy": np.__version__}
    for mod in ("jax", "torch", "cupy"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = getattr(m, "__version__", "?")
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(0)
    return out


def run(frames: Union[int, Dict[str, int]] = 50, spp: int = 256, modes: Sequence[str] = MODES,
        consumers: Sequence[str] = CONSUMERS, contention: bool = False, *, res: int = 512,
        contention_frames: int = 10, contention_kernels: Sequence[str] = ("matmul",),
        contention_ms: float = 100.0, deadline_s: float = 400.0,
        log: Callable[[str], None] = print) -> Dict[str, Any]:
    """Runs every mode x consumer (then the contention runs) and returns the results.

    ``frames`` is a count for every mode or a dict {mode: count}. Raises
    ``hg.CudaUnavailableError`` when the cuda_rgb variant cannot be selected. Never runs
    longer than about ``deadline_s`` (rows cut short are marked ``incomplete``).
    """
    deadline = time.monotonic() + deadline_s
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; known: {', '.join(MODES)}")
    session = Session(res, spp)
    out: Dict[str, Any] = {"config": {"res": res, "spp": spp, "frames": frames, "modes": list(modes),
                                      "consumers": list(consumers), "texture_shape": list(session.tex_shape)},
                           "rows": [], "skipped": {}, "errors": [], "contention": []}
    log(f"heliograph {hg.__version__}, variant {hg.variant()}; scene seed.xml at {res}x{res}, {spp} spp, "
        f"texture {session.tex_shape}")
    out["timing"] = session.timing()
    t = out["timing"]
    log(f"one render: render() returns in {t['render_call_ms']:.2f} ms, the film is ready after "
        f"{t['render_total_ms']:.1f} ms" + (" (ready already when render() returned: the race "
                                            "window is tiny)" if t["ready_when_render_returned"] else ""))
    live: Dict[str, Any] = {}
    for name in consumers:
        try:
            consumer = make_consumer(name)
            consumer.warm((res, res, 3))
        except Unavailable as e:
            out["skipped"][name] = str(e)
            log(f"  consumer {name}: SKIPPED: {e}")
            continue
        except Exception as e:  # a framework that is there but broken is a failure, not a skip
            out["errors"].append(f"consumer {name}: {type(e).__name__}: {e}")
            log(f"  consumer {name}: ERROR {type(e).__name__}: {e}")
            continue
        live[name] = consumer
        try:  # one discarded frame: compiles the consumer's import and copy paths
            run_frames(session, consumer, "stream", 1, deadline, log=log, first_frame=1_000_000)
        except Exception as e:  # the stream rows will show it again; the other modes still run
            log(f"  consumer {name}: warm-up frame failed: {type(e).__name__}: {e}")
    out["versions"] = _versions()
    frame_base = 0
    for mode in modes:
        n = _frames_for(frames, mode)
        for name, consumer in live.items():
            log(f"  [{mode} -> {name}] {n} frames")
            try:
                row = run_frames(session, consumer, mode, n, deadline, log=log, first_frame=frame_base)
            except Exception as e:  # report and go on: one broken path must not hide the others
                row = {"mode": mode, "consumer": name, "frames": 0, "wrong": 0, "stale": 0,
                       "error": f"{type(e).__name__}: {e}", "incomplete": True,
                       "export_ready_ms": _stats([]), "frame_ms": _stats([])}
                log(f"    ERROR {row['error']}\n{traceback.format_exc(limit=4)}")
            frame_base += n
            out["rows"].append(row)
    if contention:
        out["contention"] = _run_contention(session, live, contention_kernels, contention_ms,
                                            contention_frames, deadline, frame_base, log)
    out["ok"], out["verdicts"] = _verdicts(out)
    return out


def _run_contention(session: Session, live: Dict[str, Any], kernels: Sequence[str], target_ms: float,
                    frames: int, deadline: float, frame_base: int, log: Callable[[str], None]) -> List[Any]:
    rows: List[Any] = []
    for kind in kernels:
        try:
            kernel = Contention(kind, target_ms)
        except Unavailable as e:
            log(f"  contention kernel {kind}: SKIPPED: {e}")
            rows.append({"kernel": kind, "skipped": str(e)})
            continue
        log(f"  contention: {kind} kernel of {kernel.kernel_ms:.1f} ms on a side stream before each frame")
        for mode in ("stream", "sync"):
            for name, consumer in live.items():
                log(f"  [{mode} -> {name}, under {kind}] {frames} frames")
                try:
                    row = run_frames(session, consumer, mode, frames, deadline, kernel, log, frame_base)
                except Exception as e:
                    row = {"mode": mode, "consumer": name, "frames": 0, "wrong": 0,
                           "error": f"{type(e).__name__}: {e}", "incomplete": True,
                           "export_ready_ms": _stats([]), "frame_ms": _stats([])}
                    log(f"    ERROR {row['error']}\n{traceback.format_exc(limit=4)}")
                frame_base += frames
                row.update(kernel=kind, kernel_ms=kernel.kernel_ms)
                rows.append(row)
    return rows


def _verdicts(out: Dict[str, Any]) -> Any:
    ok, lines = True, []
    for row in out["rows"] + [r for r in out["contention"] if "mode" in r]:
        bad = row.get("error") or row.get("incomplete") or row["wrong"]
        where = f"{row['mode']} -> {row['consumer']}" + (f" under {row['kernel']}" if "kernel" in row else "")
        if row["mode"] == "unsafe" and not row.get("error"):
            lines.append(f"{where}: {row['wrong']}/{row['frames']} wrong frames: " + (
                "the seed bug's race, reproduced" if row["wrong"] else
                "the race did not show (renders too short? raise --spp)"))
        elif bad:
            ok = False
            lines.append(f"FAIL {where}: {row['wrong']}/{row['frames']} wrong frames"
                         + (f", error {row['error']}" if row.get("error") else "")
                         + (", incomplete" if row.get("incomplete") else ""))
    for kind in {r["kernel"] for r in out["contention"] if "mode" in r}:
        for name in {r["consumer"] for r in out["contention"] if "mode" in r}:
            med = {r["mode"]: r for r in out["contention"]
                   if r.get("kernel") == kind and r.get("consumer") == name and r.get("frames")}
            if "stream" in med and "sync" in med:
                s, y = med["stream"]["export_ready_ms"]["median"], med["sync"]["export_ready_ms"]["median"]
                k = med["stream"]["kernel_ms"]
                lines.append(f"under a {k:.0f} ms {kind} kernel, {name}: export->ready median stream "
                             f"{s:.1f} ms vs sync {y:.1f} ms: " +
                             ("stream does not wait for the unrelated kernel" if s < 0.5 * k and s < y
                              else "stream is NOT faster than the device-wide sync here"))
    for e in out["errors"]:
        ok = False
        lines.append(f"FAIL {e}")
    if not any(r["mode"] == "stream" and r["frames"] for r in out["rows"]) and "stream" in out["config"]["modes"]:
        ok = False
        lines.append("FAIL: no stream-mode frame ran")
    return ok, lines


def format_table(out: Dict[str, Any]) -> str:
    """The results as a text table plus the verdict lines."""
    head = (f"{'mode':<7} {'consumer':<11} {'frames':>6} {'wrong':>6} {'stale':>6}  "
            f"{'export->ready ms: mean':>22} {'median':>10} {'max':>10}")
    lines = [head, "-" * len(head)]

    def fmt(r: Dict[str, Any]) -> str:
        st = r["export_ready_ms"]
        tail = f"  ERROR {r['error']}" if r.get("error") else ""
        return (f"{r['mode']:<7} {r['consumer']:<11} {r['frames']:>6} {r['wrong']:>6} {r.get('stale', 0):>6}  "
                f"{st['mean']:>10.2f} {st['median']:>10.2f} {st['max']:>10.2f}{tail}")

    lines += [fmt(r) for r in out["rows"]]
    cont = [r for r in out["contention"] if "mode" in r]
    if cont:
        lines.append("")
        lines.append("under contention (frame = texture update + render + export + consumer ready):")
        for r in cont:
            lines.append(fmt(r) + f"   [{r['kernel']} {r['kernel_ms']:.0f} ms; frame median "
                                  f"{r['frame_ms']['median']:.1f} ms]")
    for name, why in out["skipped"].items():
        lines.append(f"skipped consumer {name}: {why}")
    lines.append("")
    lines += out["verdicts"]
    lines.append("overall: " + ("PASS" if out["ok"] else "FAIL"))
    return "\n".join(lines)


def _csv(s: str, known: Sequence[str], what: str) -> List[str]:
    items = [x.strip() for x in s.split(",") if x.strip()]
    bad = [x for x in items if x not in known]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(bad)}; known: {', '.join(known)}")
    return items


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=50, help="frames per mode and consumer (default 50)")
    ap.add_argument("--stream-frames", type=int, default=None, help="frames for the stream mode (default --frames)")
    ap.add_argument("--spp", type=int, default=256, help="samples per pixel: a render must take tens of ms")
    ap.add_argument("--res", type=int, default=512, help="film resolution (default 512)")
    ap.add_argument("--modes", type=lambda s: _csv(s, MODES, "mode"), default=list(MODES))
    ap.add_argument("--consumers", type=lambda s: _csv(s, CONSUMERS, "consumer"), default=list(CONSUMERS))
    ap.add_argument("--contention", action="store_true", help="also measure under an unrelated long kernel")
    ap.add_argument("--contention-kernels", type=lambda s: _csv(s, KERNELS, "kernel"), default=["matmul"])
    ap.add_argument("--contention-frames", type=int, default=10)
    ap.add_argument("--contention-ms", type=float, default=100.0, help="target length of that kernel")
    ap.add_argument("--timeout", type=float, default=480.0, help="seconds; the process exits after this")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args(argv)
    # a watchdog: a hung CUDA call cannot be interrupted from Python, so dump and exit
    faulthandler.dump_traceback_later(args.timeout, exit=True)
    frames: Union[int, Dict[str, int]] = args.frames
    if args.stream_frames is not None:
        frames = {m: args.frames for m in MODES}
        frames["stream"] = args.stream_frames
    try:
        out = run(frames, args.spp, args.modes, args.consumers, args.contention, res=args.res,
                  contention_frames=args.contention_frames, contention_kernels=args.contention_kernels,
                  contention_ms=args.contention_ms, deadline_s=max(10.0, args.timeout - 30.0))
    except hg.CudaUnavailableError as e:
        print(f"texture_update_bug: cannot run: the cuda_rgb variant is unavailable: {e}")
        return 2
    finally:
        faulthandler.cancel_dump_traceback_later()
    print()
    print(format_table(out))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
        print(f"results written to {args.json}")
    if not out["rows"] and out["skipped"]:
        return 2
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
