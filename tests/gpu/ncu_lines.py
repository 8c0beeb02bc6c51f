"""Where an Nsight Compute profile's warp-stall samples fall, from its SASS page.

    ncu --import R.ncu-rep --page source --csv --print-source sass > R.csv
    python3 tests/gpu/ncu_lines.py R.csv [N]

Prints the share of the kernel's warp-stall samples (all samples) and of its executed
instructions per function (the kernel's body and each out-of-line function, found as
the targets of its CALL instructions), then the N (default 40) instructions with the
most samples. Only the SASS page: the CUDA page of an NVRTC module holds the source
text without metrics. Columns are found by the header row's names, not by position.
"""

import bisect
import csv
import re
import sys

STALL = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def instructions(path):
    """(address, SASS text, stall samples, instructions executed) per instruction."""
    header = None
    with open(path, newline="", errors="replace") as f:
        for fields in csv.reader(f):
            if STALL in fields:
                header = fields
            elif header is not None and len(fields) == len(header):
                r = dict(zip(header, fields))
                yield int(r["Address"], 16), " ".join(r["Source"].split()), number(r[STALL]), number(r[EXECUTED])


def main():
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    code = list(instructions(path))
    if not code:
        sys.exit(f"{path}: no SASS table with a '{STALL}' column")
    base = code[0][0]
    total = sum(c[2] for c in code) or 1.0
    executed = sum(c[3] for c in code) or 1.0
    calls = {}  # target -> number of CALL sites
    for _, text, _, _ in code:
        m = re.search(r"CALL\.\S+\s+(0x[0-9a-fA-F]+)", text)
        if m:
            t = int(m.group(1), 16)
            calls[t] = calls.get(t, 0) + 1
    starts = sorted(set(calls) | {base})
    sums = {s: [0.0, 0.0, 0] for s in starts}
    for a, _, smp, ex in code:
        v = sums[starts[bisect.bisect_right(starts, a) - 1]]
        v[0] += smp
        v[1] += ex
        v[2] += 1
    print(f"{len(code)} instructions, {total:.0f} stall samples; per function (offset from the kernel's start)")
    for s, (smp, ex, n) in sums.items():
        what = "kernel body" if s == base else f"called from {calls[s]} place(s)"
        print(f"  +{s - base:#8x} {100 * smp / total:5.1f}% samples {100 * ex / executed:5.1f}% "
              f"instructions  {n:5d} SASS  {what}")
    print(f"{'share':>6} {'samples':>8} {'executed':>10}  offset  SASS")
    for a, text, smp, ex in sorted(code, key=lambda c: -c[2])[:count]:
        print(f"{100 * smp / total:5.1f}% {smp:8.0f} {ex:10.0f}  +{a - base:#7x}  {text[:110]}")


if __name__ == "__main__":
    main()
