"""What the Python fuzzers share: the command line, a worker process that runs cases
under an address-space limit, and the supervisor that restarts it after a crash or a
hang and counts the results.

The worker writes ``S i`` before case ``i`` and ``D i code [n]`` after it; a code the
supervisor does not know is a finding (the worker has written why to its stderr log),
and so is a worker that dies or stays in one case longer than ``--case-seconds``.
"""

import argparse
import os
import queue
import subprocess
import sys
import threading
import time
import traceback

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FINDING = "x"  # the code of a case whose outcome is a finding


def parse_args(doc):
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    p.add_argument("--execs", type=int, default=10**12)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--case-seconds", type=float, default=20.0)
    p.add_argument("--mem-mib", type=int, default=4096)
    p.add_argument("--out", default=os.path.join(ROOT, "target"))
    p.add_argument("--case", type=int)
    p.add_argument("--worker", type=int, nargs=2)
    return p.parse_args()


def limit_memory(mem_mib):
    import resource

    limit = mem_mib << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def serve(start, stop, mem_mib, make_runner, reported=()):
    """The worker: limits memory, then runs cases ``start..stop`` with the function
    ``make_runner()`` returns (case -> (code, n)). An exception of a ``reported`` type is
    a finding written as its message; any other, with its traceback."""
    limit_memory(mem_mib)
    run = make_runner()
    out = sys.stdout
    for i in range(start, stop):
        out.write(f"S {i}\n")
        out.flush()
        n = 0
        try:
            code, n = run(i)
        except reported as e:
            sys.stderr.write(f"case {i}: {e}\n")
            code = FINDING
        except Exception:  # anything but a result is a finding
            sys.stderr.write(f"case {i}:\n{traceback.format_exc()}\n")
            code = FINDING
        out.write(f"D {i} {code} {n}\n")
        out.flush()


def _lines(proc):
    """The child's stdout lines through a queue (so waiting on them can time out);
    None once it closes."""
    lines = queue.Queue()

    def pump():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def supervise(name, script, args, codes, finding):
    """Runs workers of ``script`` until ``args.seconds`` or ``args.execs``; prints each
    finding (``finding`` says what an unknown code means) with how to reproduce it.
    Returns (counts per code, the sum of the workers' n, findings, executions, seconds)."""
    os.makedirs(args.out, exist_ok=True)
    t0 = time.monotonic()
    counts = dict.fromkeys(codes, 0)
    total = 0
    findings = []
    nxt = 0
    log = open(os.path.join(args.out, f"{name}-worker-stderr.log"), "a")
    while nxt < args.execs and time.monotonic() - t0 < args.seconds:
        cmd = [sys.executable, script, "--worker", str(nxt), str(args.execs), "--seed", str(args.seed),
               "--mem-mib", str(args.mem_mib)]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1)
        lines = _lines(proc)
        started = nxt
        running = None
        while True:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                line = ""
            if line is None:
                rc = proc.wait()
                if running is None and nxt == started:
                    sys.exit(f"{name}: the worker exited (status {rc}) before running a case: see {log.name}")
                if running is not None:
                    findings.append((running[0], f"the worker died (exit status {rc})"))
                    nxt = running[0] + 1
                break
            parts = line.split()
            if parts and parts[0] == "S":
                running = (int(parts[1]), time.monotonic())
            elif parts and parts[0] == "D":
                i, code = int(parts[1]), parts[2]
                if code in counts:
                    counts[code] += 1
                    total += int(parts[3])
                else:
                    findings.append((i, finding.format(log=log.name)))
                running, nxt = None, i + 1
            if running and time.monotonic() - running[1] > args.case_seconds:
                proc.kill()
                proc.wait()
                findings.append((running[0], f"no result after {args.case_seconds} s (hang)"))
                nxt = running[0] + 1
                break
            if time.monotonic() - t0 > args.seconds or nxt >= args.execs:
                proc.kill()
                proc.wait()
                break
    secs = time.monotonic() - t0
    for i, what in findings:
        print(f"finding: case {i}: {what} (reproduce: {sys.argv[0]} --seed {args.seed} --case {i})")
    return counts, total, findings, nxt, secs
