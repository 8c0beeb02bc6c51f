#!/usr/bin/env bash
# One device-runner call that checks a bundle and times it against an older wheel:
#   1. the Rust GPU checks (tests/gpu/device_round.sh, parity, NVRTC, device updates) and
#      the Python GPU suite (tests/gpu/run_python_gpu.sh) side by side: both are checks of
#      correctness, and the device has cores and memory for both;
#   2. then, on the idle GPU, tests/bench/ab_wheels.py: the bundle's wheel against
#      BUNDLE/base-wheel (seed and Cornell box render + np.array, the seed loop).
# Writes OUT/summary.txt (Rust checks), OUT/py.txt (Python suite), OUT/ab.txt (the table).
#
#   OUT=/some/dir tests/gpu/verify_and_bench.sh [BUNDLE]
set -u
OUT=${OUT:?set OUT to the folder that comes back}
HERE=$(cd "$(dirname "$0")" && pwd)
BUNDLE=${1:-$HERE/../../.gpu}
PY=${PYTHON:-python3}
SITE=$(mktemp -d "${TMPDIR:-/tmp}/hg-site.XXXXXX")
BASE=$(mktemp -d "${TMPDIR:-/tmp}/hg-base.XXXXXX")
"$PY" -m pip install -q --no-index --no-deps --target "$SITE" "$BUNDLE"/wheels/heliograph-*.whl || exit 1
HG_GPU_GROUPS=rust HG_GPU_SKIP=${HG_GPU_SKIP:-tune,mesh1m,cold,warm,bench} \
  bash "$HERE/device_round.sh" "$BUNDLE" & rust=$!
HG_GPU_LOG_DIR=$OUT/py bash "$HERE/run_python_gpu.sh" "$SITE" > "$OUT/py.txt" 2>&1 & py=$!
wait $rust; rc_rust=$?
wait $py; rc_py=$?
echo "rust checks: exit $rc_rust; python suite: exit $rc_py"
rc_ab=0
if ls "$BUNDLE"/base-wheel/heliograph-*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --target "$BASE" "$BUNDLE"/base-wheel/heliograph-*.whl || exit 1
  { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u;
    echo "A = base-wheel, B = this bundle's wheel"
    timeout -k 5 "${HG_AB_SECONDS:-150}" "$PY" "$HERE/../bench/ab_wheels.py" "$BASE" "$SITE" \
      --rounds "${HG_AB_ROUNDS:-6}" --reps "${HG_AB_REPS:-15}"; } > "$OUT/ab.txt" 2>&1
  rc_ab=$?
fi
[ $rc_rust = 0 ] && [ $rc_py = 0 ] && [ $rc_ab = 0 ]
