#!/usr/bin/env bash
# One GPU round for differentiable rendering on the device machine: the GPU tests of
# heliograph.torch under cuda_rgb (tests/python/gpu/test_diff_cuda.py), the benchmark
# against Mitsuba 3.9.1 cuda_ad_rgb prb (tests/bench_diff.py --cuda; Mitsuba from
# BUNDLE/mitsuba-slim.tar.xz, the PyPI wheels of mitsuba 3.9.1 and drjit 1.5.0 for
# CPython 3.12 unpacked without the variants and plugins the benchmark does not load,
# made by tests/gpu/make_mitsuba_slim.sh, when present), the example on cuda_rgb, then
# the direct/path CPU parity and the Python smoke test of the bundle's
# run_gpu_checks.sh (the kernels' integrators run over an observer). With
# HG_DIFF_PROFILE=1, first an Nsight Compute profile of one hg_backward launch of the
# benchmark (profile_backward.sh); with HG_DIFF_PARITY=0, without the parity checks.
#
#   OUT=/some/dir tests/gpu/diff_round.sh [BUNDLE]     # writes OUT/diff_round.txt
set -u
OUT=${OUT:?set OUT to the folder that comes back}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUNDLE=$(cd "${1:-$ROOT/.gpu}" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hg-diff.XXXXXX")
LOG=$OUT/diff_round.txt
export HELIOGRAPH_REQUIRE_GPU=1 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONDONTWRITEBYTECODE=1
export HELIOGRAPH_ROOT=$ROOT
{
  echo "==== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
  python3 -m pip install -q --no-index --no-deps --target "$WORK/site" "$BUNDLE"/wheels/*.whl || exit 1
  if [ "${HG_DIFF_PROFILE:-0}" = 1 ]; then
    echo "==== 0. ncu: one hg_backward launch of the benchmark (OUT/backward_*)"
    bash "$HERE/profile_backward.sh" "$OUT" "$WORK/site"
  fi
  echo "==== 1. pytest tests/python/gpu/test_diff_cuda.py"
  ( cd "$ROOT/tests/python" && PYTHONPATH=$WORK/site timeout -k 5 240 python3 -m pytest -v -rfEs \
      -p no:cacheprovider gpu/test_diff_cuda.py 2>&1 | tail -30 )
  echo "==== 2. benchmark (tests/bench_diff.py --cuda)"
  MI=
  if [ -f "$BUNDLE/mitsuba-slim.tar.xz" ]; then
    mkdir -p "$WORK/mi" && tar xJf "$BUNDLE/mitsuba-slim.tar.xz" -C "$WORK/mi" && MI=$WORK/mi
  fi
  timeout -k 5 240 python3 "$ROOT/tests/bench_diff.py" --cuda --hg-python python3 --hg-path "$WORK/site" \
    --mi-python python3 --mi-path "${MI:-/nonexistent}" 2>&1 | tail -40
  echo "==== 2b. python/examples/fit_texture.py --variant cuda_rgb (small)"
  PYTHONPATH=$WORK/site timeout -k 5 120 python3 "$ROOT/python/examples/fit_texture.py" --variant cuda_rgb \
    --res 64 --tex 32 --iters 40 --out "$WORK/fit" 2>&1 | tail -4
  if [ "${HG_DIFF_PARITY:-1}" != 0 ]; then
    echo "==== 3. direct/path parity and the Python smoke test"
    HG_GPU_LOG_DIR=$WORK/logs HG_GPU_SKIP=cold,warm,depth,parity,instanced,roughdielectric,principled,samplers,ptracer,determinism,nvrtc,bench,mesh1m,tune,updates,pysuite,nvrtcwheel \
      timeout -k 5 200 bash "$BUNDLE/run_gpu_checks.sh" "$BUNDLE" 2>&1 | tail -25
  fi
} > "$LOG" 2>&1
cat "$LOG"
