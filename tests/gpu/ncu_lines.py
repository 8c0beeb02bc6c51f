"""The hottest source lines of an Nsight Compute source-page CSV.

    ncu --import R.ncu-rep --page source --csv --print-source cuda > R.csv
    python3 tests/gpu/ncu_lines.py R.csv [N]

Prints the N (default 40) lines with the most warp-stall samples (all samples; the
share of the kernel's total first), with the instructions executed and the source text,
and the totals per file; for SASS also per function (the kernel's body and each
out-of-line function, found as the targets of its CALL instructions). The CSV holds one table per source file, each after a line that
names the file (or one table of SASS for --print-source sass); every table's header row
names its columns, so nothing here depends on ncu's column order.
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


def rows(path):
    """(file, row dict) for every data row of every table in the CSV."""
    header, name = None, "?"
    with open(path, newline="", errors="replace") as f:
        for fields in csv.reader(f):
            if not fields:
                continue
            if STALL in fields:
                header = fields
                continue
            if header is None or len(fields) != len(header):
                # a line between tables: ncu names the source file there
                name = " ".join(fields).strip() or name
                header = None if len(fields) == 1 else header
                continue
            yield name, dict(zip(header, fields))


def functions(found, total):
    """Samples and instructions per out-of-line function of a SASS table."""
    code = [(int(r["Address"], 16), r) for _, r in found]
    targets = set()
    for _, r in code:
        m = re.search(r"CALL\.\S+\s+(0x[0-9a-fA-F]+)", r.get("Source", ""))
        if m:
            targets.add(int(m.group(1), 16))
    starts = sorted(targets | {code[0][0]})
    calls = {t: sum(f"{t:#x}" in r.get("Source", "") for _, r in code) for t in targets}
    sums = {}
    for a, r in code:
        start = starts[bisect.bisect_right(starts, a) - 1]
        v = sums.setdefault(start, [0.0, 0.0, 0])
        v[0] += number(r.get(STALL, "0"))
        v[1] += number(r.get(EXECUTED, "0"))
        v[2] += 1
    executed = sum(v[1] for v in sums.values()) or 1.0
    print("per function (offset from the kernel's start; calls: CALL sites)")
    for start, (smp, ex, n) in sorted(sums.items()):
        what = "kernel body" if start == code[0][0] else f"called from {calls[start]} place(s)"
        print(f"  +{start - code[0][0]:#8x} {100 * smp / total:5.1f}% samples {100 * ex / executed:5.1f}% "
              f"instructions  {n:5d} SASS  {what}")


def main():
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    found = list(rows(path))
    if not found:
        print(f"{path}: no table with a '{STALL}' column; its first lines:")
        with open(path, errors="replace") as f:
            for _ in range(8):
                print("  " + f.readline().rstrip()[:200])
        return
    total = sum(number(r.get(STALL, "0")) for _, r in found) or 1.0
    per_file = {}
    for name, r in found:
        per_file[name] = per_file.get(name, 0.0) + number(r.get(STALL, "0"))
    print(f"{len(found)} rows, {total:.0f} stall samples")
    for name, v in sorted(per_file.items(), key=lambda x: -x[1])[:12]:
        print(f"  {100 * v / total:5.1f}%  {name[:100]}")
    if "Address" in found[0][1]:
        functions(found, total)
    key = next((k for k in ("#", "Line", "Address", "# Address") if k in found[0][1]), None)
    print(f"{'share':>6} {'samples':>8} {'executed':>10}  where / source")
    hot = sorted(found, key=lambda x: -number(x[1].get(STALL, "0")))[:count]
    for name, r in hot:
        v = number(r.get(STALL, "0"))
        where = f"{name.split('/')[-1][:24]}:{r.get(key, '?')}" if key else name[:24]
        src = " ".join(r.get("Source", "").split())[:110]
        print(f"{100 * v / total:5.1f}% {v:8.0f} {number(r.get(EXECUTED, '0')):10.0f}  {where}  {src}")


if __name__ == "__main__":
    main()
