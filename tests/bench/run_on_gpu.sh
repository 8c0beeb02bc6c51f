#!/usr/bin/env bash
# GPU machine side: the seed-loop benchmark (heliograph cuda_rgb vs Mitsuba cuda_ad_rgb) in one
# call. Installs the heliograph wheel and the slim Mitsuba/Dr.Jit wheels into a scratch site
# folder (no network needed), runs tests/bench/seed_loop.py and prints its table last.
#
#   tests/bench/run_on_gpu.sh [--soak-seconds N] [any other seed_loop.py option]
#
# Looks for the heliograph wheel in $HG_WHEEL, else .gpu/wheels/ (tests/gpu/build_gpu_bundle.sh
# or `target/pyenv/bin/pip wheel --no-deps -w .gpu/wheels ./python`), and for the slim Mitsuba
# in $MI_SLIM (default .mitsuba-slim/, made by tests/bench/pack_mitsuba_wheels.sh).
# Writes $OUT/seed_loop.md, seed_loop.json and seed_loop.log (the workers' stderr) when $OUT is
# set. Fits the device runner's 10 minutes: rows not started after --deadline (default 420 s)
# are n/a, the soak shrinks to fit, and the whole run is stopped at 540 s. Kernel caches start
# empty (Dr.Jit's ~/.drjit on a fresh machine, heliograph's in a fresh folder), so the
# "cold start" line includes every first compile; the timed rows exclude them (warm-up).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/seed-loop.XXXXXX")}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
T0=$(date +%s)

HG=${HG_WHEEL:-$(ls .gpu/wheels/heliograph-*.whl 2>/dev/null | head -1)}
MI_SLIM=${MI_SLIM:-.mitsuba-slim}
[ -n "$HG" ] && [ -f "$HG" ] || { echo "no heliograph wheel (HG_WHEEL or .gpu/wheels/heliograph-*.whl)"; exit 2; }
ls "$MI_SLIM"/mitsuba-*.whl "$MI_SLIM"/drjit-*.whl >/dev/null 2>&1 \
  || echo "no slim Mitsuba wheels in $MI_SLIM: the Mitsuba column will be n/a"

SITE=$(mktemp -d "${TMPDIR:-/tmp}/seed-loop-site.XXXXXX")
"$PY" -m pip install -q --no-index --no-deps --target "$SITE" "$HG" >"$OUT/install.log" 2>&1 \
  || { echo "installing $HG failed:"; cat "$OUT/install.log"; exit 1; }
"$PY" -m pip install -q --no-index --no-deps --target "$SITE" "$MI_SLIM"/mitsuba-*.whl "$MI_SLIM"/drjit-*.whl \
  >>"$OUT/install.log" 2>&1 || { echo "installing the slim Mitsuba failed:"; tail -5 "$OUT/install.log"; }
export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
export HELIOGRAPH_ROOT=$ROOT
export HELIOGRAPH_CACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hg-cache.XXXXXX")
export XLA_PYTHON_CLIENT_PREALLOCATE=false   # JAX shares the GPU with heliograph, Dr.Jit and PyTorch
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

echo "==== environment"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
# Mitsuba's cuda variants trace rays with OptiX, which the driver installs as libnvoptix
if ! command -v ldconfig >/dev/null 2>&1; then echo "libnvoptix.so.1: unknown (no ldconfig)"
elif ldconfig -p | grep -q libnvoptix.so.1; then echo "libnvoptix.so.1: present"
else echo "libnvoptix.so.1: NOT on the loader path (Mitsuba cuda_ad_rgb needs it)"; fi
echo "installed in $SITE after $(( $(date +%s) - T0 )) s: $(ls "$SITE" | tr '\n' ' ')"
"$PY" - <<'PYEOF' 2>&1
import importlib
for name in ("heliograph", "mitsuba", "drjit", "torch", "jax", "numpy"):
    try:
        m = importlib.import_module(name)
        print(f"{name:<10} {getattr(m, '__version__', '?'):<14} {m.__file__}")
    except Exception as e:  # noqa: BLE001 -- reported; seed_loop.py gives that column n/a
        print(f"{name:<10} NOT importable: {type(e).__name__}: {e}")
PYEOF

LIMIT="timeout -k 10 540"
command -v timeout >/dev/null 2>&1 || LIMIT=
echo "==== tests/bench/seed_loop.py (worker logs: $OUT/seed_loop.log)"
$LIMIT "$PY" tests/bench/seed_loop.py --deadline 420 --request-timeout 120 --out "$OUT/seed_loop" "$@" 2>"$OUT/seed_loop.log" \
  >"$OUT/seed_loop.stdout"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "seed_loop.py exited with $rc; the last lines of its log:"
  tail -40 "$OUT/seed_loop.log"
fi
grep -E "Error|Traceback|WARNING" "$OUT/seed_loop.log" | grep -v "^\[..\] *File " | tail -15
echo "(total $(( $(date +%s) - T0 )) s; files in $OUT)"
cat "$OUT/seed_loop.stdout"
rm -rf "$SITE" "$HELIOGRAPH_CACHE_DIR"
exit "$rc"
