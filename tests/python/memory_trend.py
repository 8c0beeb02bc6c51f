"""Memory growth per cycle of a loop, measured the way the long-run tests need it.

Resident memory moves in steps (allocator arenas, pools, page trimming), so one reading
before and one after says little over a short run. ``measure`` runs a warm-up, then reads
the resident set size (and, where given, device memory) at evenly spaced points and
compares the mean of the last quarter of the readings with the mean of the first quarter:
a steady leak shows as their difference over the cycles between them, a one-off step does
not dominate it.

Results are printed and, when ``$HELIOGRAPH_RECORD`` names a file, appended to it as one
line each, so that a GPU round can copy them into the results file.
"""

from __future__ import annotations

import gc
import json
import os
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional

# The bound of the long-run promise: growth after warm-up below 1 KB per cycle.
BOUND_BYTES_PER_CYCLE = 1024
# HELIOGRAPH_LONG=1 runs the full counts (10^6 exports, 10^4 loads); the default counts
# keep the CPU suite fast.
LONG = os.environ.get("HELIOGRAPH_LONG") == "1"


def rss_bytes() -> int:
    """This process's resident set size (VmRSS), in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS line in /proc/self/status")


@dataclass
class Trend:
    """What ``measure`` found: growth per cycle and the readings it came from."""

    name: str
    cycles: int
    seconds: float
    rss: List[int] = field(default_factory=list)
    device: List[int] = field(default_factory=list)
    points: List[int] = field(default_factory=list)

    @staticmethod
    def _per_cycle(points: List[int], values: List[int]) -> float:
        q = max(1, len(values) // 4)
        first = sum(values[:q]) / q
        last = sum(values[-q:]) / q
        span = sum(points[-q:]) / q - sum(points[:q]) / q
        return (last - first) / span if span > 0 else 0.0

    @property
    def rss_per_cycle(self) -> float:
        return self._per_cycle(self.points, self.rss)

    @property
    def device_per_cycle(self) -> Optional[float]:
        return self._per_cycle(self.points, self.device) if self.device else None

    def summary(self) -> str:
        mib = 1 << 20
        dev = ""
        if self.device:
            dev = (f"; device {self.device[0] / mib:.1f} -> {self.device[-1] / mib:.1f} MiB "
                   f"({self.device_per_cycle:+.1f} B/cycle)")
        return (f"{self.name}: {self.cycles} cycles in {self.seconds:.1f} s "
                f"({self.seconds / self.cycles * 1e6:.1f} us/cycle); host RSS "
                f"{self.rss[0] / mib:.1f} -> {self.rss[-1] / mib:.1f} MiB "
                f"({self.rss_per_cycle:+.1f} B/cycle over {len(self.rss)} readings){dev}")

    def check(self) -> None:
        """Records the trend and fails if either memory grows by the bound or more."""
        line = self.summary()
        print(line)
        path = os.environ.get("HELIOGRAPH_RECORD")
        if path:
            with open(path, "a") as f:
                f.write(json.dumps({"name": self.name, "summary": line}) + "\n")
        assert self.rss_per_cycle < BOUND_BYTES_PER_CYCLE, f"host memory grows: {line}"
        per = self.device_per_cycle
        assert per is None or per < BOUND_BYTES_PER_CYCLE, f"device memory grows: {line}"


def measure(name: str, cycle: Callable[[int], None], cycles: int, warmup: int,
            readings: int = 20, device_bytes: Optional[Callable[[], int]] = None,
            settle: Callable[[], None] = gc.collect) -> Trend:
    """Runs ``cycle(i)`` ``warmup`` times, then ``cycles`` times reading memory
    ``readings`` times (after ``settle()``, which by default collects garbage)."""
    for i in range(warmup):
        cycle(i)
    every = max(1, cycles // readings)
    trend = Trend(name, cycles, 0.0)

    def read(done: int) -> None:
        settle()
        trend.points.append(done)
        trend.rss.append(rss_bytes())
        if device_bytes is not None:
            trend.device.append(device_bytes())

    read(0)
    t0 = time.perf_counter()
    for i in range(cycles):
        cycle(warmup + i)
        if (i + 1) % every == 0:
            t_pause = time.perf_counter()
            read(i + 1)
            t0 += time.perf_counter() - t_pause  # the readings are not the loop's time
    trend.seconds = time.perf_counter() - t0
    return trend
