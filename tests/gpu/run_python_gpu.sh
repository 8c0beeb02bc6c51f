#!/usr/bin/env bash
# GPU machine side: the Python checks of the cuda_rgb variant (the stream-aware export).
# Installs nothing: the heliograph wheel must already be unpacked into SITE
# (python3 -m pip install --no-index --no-deps --target SITE heliograph-*.whl).
#
#   tests/gpu/run_python_gpu.sh SITE                 # e.g. /tmp/site
#   HG_GPU_LOG_DIR=$OUT tests/gpu/run_python_gpu.sh SITE   # keep the logs and the JSON
#
# 1. pytest tests/python/gpu (HELIOGRAPH_REQUIRE_GPU=1: no usable GPU is a failure, a
#    missing framework a skip), ~3 min;
# 2. python/examples/texture_update_bug.py: the seed bug's table (unsafe/stream/sync x
#    jax/torch/torch-side; 200 frames in stream mode, 30 in the others) and the latency
#    under an unrelated long kernel (matmul chain, spin kernel), ~2 min.
# Exit status: 0 when both passed, 1 otherwise, 2 on bad usage.
set -u
SITE=${1:-}
if [ -z "$SITE" ] || [ ! -d "$SITE/heliograph" ]; then
  echo "usage: $0 SITE   (SITE: the folder holding the unpacked heliograph package; got '${SITE}')"
  exit 2
fi
SITE=$(cd "$SITE" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}
LOGS=${HG_GPU_LOG_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/hg-python-gpu.XXXXXX")}
mkdir -p "$LOGS"
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
export HELIOGRAPH_REQUIRE_GPU=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false   # JAX shares the GPU with heliograph and PyTorch
export TF_FORCE_GPU_ALLOW_GROWTH=true
export PYTHONUNBUFFERED=1
export PYTHONDONTWRITEBYTECODE=1
[ -z "${HELIOGRAPH_ROOT:-}" ] && export HELIOGRAPH_ROOT=$ROOT

# limit SECONDS CMD...: coreutils timeout when there is one (the suite has its own watchdog)
limit() {
  local s=$1; shift
  if command -v timeout >/dev/null 2>&1; then timeout -k 10 "$s" "$@"; else "$@"; fi
}

echo "==== environment ($(date -u +%FT%TZ))"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4
"$PY" - <<'PYEOF' 2>&1 | tee "$LOGS/versions.txt"
import importlib, sys, warnings
warnings.simplefilter("ignore")
print("python", sys.version.split()[0])
for mod in ("heliograph", "numpy", "jax", "torch", "cupy", "tensorflow", "pytest"):
    try:
        m = importlib.import_module(mod)
        print(f"{mod:<11} {getattr(m, '__version__', '?'):<14} {getattr(m, '__file__', '')}")
    except Exception as e:  # a missing framework is reported, not fatal
        print(f"{mod:<11} MISSING ({type(e).__name__}: {e})")
try:
    import heliograph as hg
    print("heliograph variants:", hg.variants())
    hg.set_variant("cuda_rgb")
    print("cuda_rgb selected; render stream handle", hg.cuda_stream())
except Exception as e:
    print(f"cuda_rgb NOT usable: {type(e).__name__}: {e}")
PYEOF

echo
echo "==== 1. pytest tests/python/gpu, and the CPU long runs (full counts: HELIOGRAPH_LONG=1)"
t0=$(date +%s)
export HELIOGRAPH_LONG=1
export HELIOGRAPH_RECORD=$LOGS/long_runs.jsonl   # one line per long run: cycles, time, memory
: > "$HELIOGRAPH_RECORD"
export HELIOGRAPH_GPU_WATCHDOG_LOG=$LOGS/watchdog.txt   # stacks of a test that hung (exit 1)
: > "$HELIOGRAPH_GPU_WATCHDOG_LOG"
limit 480 "$PY" -m pytest -v -rfEs -p no:cacheprovider --durations=15 \
  tests/python/gpu tests/python/test_long_runs.py 2>&1 | tee "$LOGS/pytest_gpu.log"
rc_pytest=${PIPESTATUS[0]}
if grep -q "Thread 0x\|Current thread" "$HELIOGRAPH_GPU_WATCHDOG_LOG"; then
  echo "---- the watchdog stopped pytest; last test and stacks ($HELIOGRAPH_GPU_WATCHDOG_LOG):"
  grep "^watchdog:" "$HELIOGRAPH_GPU_WATCHDOG_LOG" | tail -1
  grep -v "^watchdog:" "$HELIOGRAPH_GPU_WATCHDOG_LOG" | head -60
fi
t_pytest=$(( $(date +%s) - t0 ))

echo
echo "==== 2. seed reproduction: python/examples/texture_update_bug.py"
t0=$(date +%s)
limit 260 "$PY" python/examples/texture_update_bug.py --frames 30 --stream-frames 200 \
  --contention --contention-kernels matmul,spin --timeout 230 --json "$LOGS/texture_update_bug.json" \
  2>&1 | tee "$LOGS/texture_update_bug.log"
rc_example=${PIPESTATUS[0]}
t_example=$(( $(date +%s) - t0 ))

echo
echo "==================== heliograph Python GPU checks: summary ===================="
echo "date      : $(date -u +%FT%TZ)"
echo "gpu       : $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
grep -E "^(heliograph|jax|torch|cupy|tensorflow|numpy) +[^:]+$" "$LOGS/versions.txt" | awk '{printf "  %-11s %s\n", $1, $2}'
echo "pytest tests/python/gpu: $([ "$rc_pytest" -eq 0 ] && echo ok || echo "FAIL (exit $rc_pytest)") in ${t_pytest}s: $(grep -E '^=+ .*(passed|failed|error|skipped).* =+$' "$LOGS/pytest_gpu.log" | tail -1 | tr -d '=')"
grep -E '^(FAILED|ERROR) ' "$LOGS/pytest_gpu.log" | head -30 | sed 's/^/  /'
grep -E '^SKIPPED ' "$LOGS/pytest_gpu.log" | head -20 | sed 's/^/  /'
echo "long runs (growth after warm-up; the bound is 1024 B/cycle):"
"$PY" -c 'import json, sys; [print("  " + json.loads(l)["summary"]) for l in open(sys.argv[1])]' "$HELIOGRAPH_RECORD"
echo "texture_update_bug.py  : $([ "$rc_example" -eq 0 ] && echo ok || echo "FAIL (exit $rc_example)") in ${t_example}s"
sed -n '/^mode /,$p' "$LOGS/texture_update_bug.log" | sed 's/^/  /'
echo "logs: $LOGS"
if [ "$rc_pytest" -eq 0 ] && [ "$rc_example" -eq 0 ]; then echo "overall   : PASS"; exit 0; fi
echo "overall   : FAIL"
exit 1
