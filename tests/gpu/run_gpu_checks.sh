#!/usr/bin/env bash
# GPU machine side: runs every GPU check of the bundle built by build_gpu_bundle.sh and
# prints a summary table last. Needs no Rust toolchain; continues after failures.
#
#   tests/gpu/run_gpu_checks.sh [BUNDLE]        # BUNDLE defaults to .gpu
#   HG_GPU_LOG_DIR=$OUT tests/gpu/run_gpu_checks.sh   # keep the logs (default BUNDLE/logs)
#   HG_GPU_GROUPS=python tests/gpu/run_gpu_checks.sh   # only some groups: rust, python
#   HG_GPU_SKIP=tune,mesh1m tests/gpu/run_gpu_checks.sh # leave out checks by key: cold, warm,
#       depth, render, parity, instanced, roughdielectric, principled, samplers, ptracer,
#       determinism, nvrtc, bench, mesh1m, tune, updates, pysuite (the GPU pytest suite),
#       nvrtcwheel (the NVRTC wheel-layout check)
#   HG_GPU_GROUPS=suite HG_MITSUBA_DATA=.mdslim tests/gpu/run_gpu_checks.sh
#       # Mitsuba's test scenes on CUDA with the bundle's wheel (tests/mitsuba_data/run.py;
#       # HG_SUITE_BACKEND=all adds the CPU backend), its table also in LOGS/suite.md
#
# Exit status: 0 when every check passed, 1 otherwise.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -d "$HERE/bin" ]; then        # the copy inside a bundle (.gpu/run_gpu_checks.sh)
  ROOT=$(cd "$HERE/.." && pwd); BUNDLE=${1:-$HERE}
else                               # tests/gpu/run_gpu_checks.sh in the repository
  ROOT=$(cd "$HERE/../.." && pwd); BUNDLE=${1:-$ROOT/.gpu}
fi
[ -d "$BUNDLE" ] || { echo "no bundle at $BUNDLE (run tests/gpu/build_gpu_bundle.sh on the build machine)"; exit 2; }
BUNDLE=$(cd "$BUNDLE" && pwd)
LOGS=${HG_GPU_LOG_DIR:-$BUNDLE/logs}
mkdir -p "$LOGS"
# scenes/assets: the bundle's copy if present, else the repository's
if [ -d "$BUNDLE/scenes" ]; then export HELIOGRAPH_ROOT=$BUNDLE; else export HELIOGRAPH_ROOT=$ROOT; fi
export HELIOGRAPH_REQUIRE_GPU=1
export RUST_BACKTRACE=0
CACHE=$(mktemp -d "${TMPDIR:-/tmp}/hg-cubin-cache.XXXXXX")   # fresh: the first run must compile
export HELIOGRAPH_CACHE_DIR=$CACHE

declare -a ROWS=()
FAILED=0

# run NAME LOG CMD...: runs a test binary, records passed/failed counts and the exit code.
run() {
  local name=$1 log=$2; shift 2
  local t0 t1 rc passed failed
  t0=$(date +%s.%N)
  "$@" >"$log" 2>&1; rc=$?
  t1=$(date +%s.%N)
  passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s+=$1} END {print s+0}')
  failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
  if [ "$rc" -ne 0 ]; then FAILED=1; fi
  ROWS+=("$(printf '%-34s %-6s %6s %6s %8.2fs' "$name" "$([ "$rc" -eq 0 ] && echo ok || echo FAIL:$rc)" "$passed" "$failed" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')")")
  echo "---- $name (exit $rc), log $log"
  grep -E 'HG_GPU_STAT|SKIP|^test .* (ok|FAILED)$|test result' "$log" | head -40
  grep -E -A4 'panicked at' "$log" | grep -v '^ *[0-9]*: \|^ *at ' | head -30
}

echo "==== environment"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | tee "$LOGS/nvidia-smi.txt"
cat "$BUNDLE/MANIFEST.txt" 2>/dev/null | head -3

GROUPS_=${HG_GPU_GROUPS:-rust,python}
want() { case ",$GROUPS_," in *",$1,"*) return 0;; *) return 1;; esac; }
SKIP_=${HG_GPU_SKIP:-}
skip() { case ",$SKIP_," in *",$1,"*) return 0;; *) return 1;; esac; }

BIN=$BUNDLE/bin/gpu_depth
if ! want rust; then :
elif [ -x "$BIN" ]; then
  skip cold || run "gpu_depth first render (cold)" "$LOGS/cold.log" "$BIN" --exact first_render_and_module_cache_times --nocapture
  skip warm || run "gpu_depth first render (warm)" "$LOGS/warm.log" "$BIN" --exact first_render_and_module_cache_times --nocapture
  skip depth || run "gpu_depth all tests" "$LOGS/all.log" "$BIN" --test-threads=1 --nocapture
else
  echo "missing $BIN"; FAILED=1; ROWS+=("gpu_depth: binary missing")
fi
RBIN=$BUNDLE/bin/gpu_render
if ! want rust; then :
elif [ -x "$RBIN" ]; then
  skip render || run "gpu_render direct/path parity" "$LOGS/render.log" "$RBIN" --exact every_scene_matches_the_cpu_backend --nocapture
  skip parity || run "gpu_render plugin parity" "$LOGS/parity.log" "$RBIN" --exact plugin_twins_match_the_rust_plugins_on_the_gpu --nocapture
  skip instanced || run "gpu_render instanced rays" "$LOGS/instanced_rays.log" "$RBIN" --exact instanced_rays_on_the_gpu_match_the_cpu_traversal --nocapture
  skip roughdielectric || run "gpu_render rough glass parity" "$LOGS/roughdielectric.log" "$RBIN" --exact roughdielectric_scene_matches_the_cpu_backend --nocapture
  skip principled || run "gpu_render principled parity" "$LOGS/principled.log" "$RBIN" --exact principled_scene_matches_the_cpu_backend --nocapture
  skip samplers || run "gpu_render sampler parity" "$LOGS/samplers.log" "$RBIN" --exact every_sampler_matches_the_cpu_backend --nocapture
  skip ptracer || run "gpu_render ptracer parity" "$LOGS/ptracer.log" "$RBIN" --exact ptracer_matches_the_cpu_backend --nocapture
  skip determinism || run "gpu_render determinism" "$LOGS/determinism.log" "$RBIN" --exact same_seed_same_bits --nocapture
  skip nvrtc || run "gpu_render NVRTC compile" "$LOGS/nvrtc.log" "$RBIN" --exact nvrtc_compiles_the_kernels_for_sm_90 --nocapture
  skip bench || run "gpu_render benchmark" "$LOGS/bench.log" "$RBIN" --exact benchmark_seed_direct_and_cbox_path --nocapture
  skip mesh1m || run "gpu_render benchmark mesh1m" "$LOGS/bench_mesh1m.log" "$RBIN" --exact benchmark_mesh1m_primary_and_diffuse_rays --nocapture
  skip tune || run "gpu_render tuning sweep" "$LOGS/tune.log" "$RBIN" --exact benchmark_tuning_sweep --nocapture
else
  echo "missing $RBIN"; FAILED=1; ROWS+=("gpu_render: binary missing")
fi
UBIN=$BUNDLE/bin/gpu_updates
if ! want rust; then :
elif [ -x "$UBIN" ]; then
  skip updates || run "gpu_updates device scene" "$LOGS/updates.log" "$UBIN" --test-threads=1 --nocapture
else
  echo "missing $UBIN"; FAILED=1; ROWS+=("gpu_updates: binary missing")
fi
if want rust && [ -x "$BUNDLE/bin/heliograph" ]; then
  run "heliograph --version" "$LOGS/cli.log" "$BUNDLE/bin/heliograph" --version
fi

# The Python package (the abi3 wheel of the bundle) on CUDA: a quick smoke test, then
# the GPU pytest suite and the seed-bug reproduction (tests/gpu/run_python_gpu.sh).
if want python; then
  SITE=$(mktemp -d "${TMPDIR:-/tmp}/hg-site.XXXXXX")
  if python3 -m pip install -q --no-index --no-deps --target "$SITE" "$BUNDLE"/wheels/*.whl >"$LOGS/wheel.log" 2>&1; then
    export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
    run "python smoke (cuda_rgb)" "$LOGS/py_smoke.log" python3 "$ROOT/tests/gpu/python_smoke.py"
    grep -E '^(PASS|FAIL) ' "$LOGS/py_smoke.log"
    if ! skip pysuite && [ -x "$ROOT/tests/gpu/run_python_gpu.sh" ]; then
      run "python GPU suite + reproduction" "$LOGS/py_gpu.log" bash "$ROOT/tests/gpu/run_python_gpu.sh" "$SITE"
      tail -60 "$LOGS/py_gpu.log"
    fi
    # NVRTC found in the nvidia-cuda-nvrtc wheel's layout with the system's hidden. Last:
    # it puts a copy of NVRTC into SITE for its own runs (removed at its exit); exit 2
    # (no mount namespace, no NVRTC 13 to copy) is a skip, not a failure.
    if ! skip nvrtcwheel && [ -f "$ROOT/tests/gpu/check_nvrtc_wheel_layout.sh" ]; then
      t0=$SECONDS
      timeout -k 10 600 bash "$ROOT/tests/gpu/check_nvrtc_wheel_layout.sh" "$SITE" >"$LOGS/nvrtc_wheel.log" 2>&1
      rc=$?
      grep -E '^(system NVRTC|----|NVRTC|cuda_rgb|  /|PASS|FAIL|SKIP|no |wheel layout)' "$LOGS/nvrtc_wheel.log" | head -60
      case $rc in 0) r=ok ;; 2) r=skip ;; *) r=FAIL:$rc; FAILED=1 ;; esac
      ROWS+=("$(printf '%-34s %-6s %6s %6s %8.2fs' "NVRTC from the wheel layout" "$r" - - "$((SECONDS - t0))")")
    fi
  else
    echo "could not install the wheel:"; cat "$LOGS/wheel.log"; FAILED=1; ROWS+=("python wheel: install failed")
  fi
fi

# Mitsuba's own test scenes (a mitsuba-data checkout at HG_MITSUBA_DATA) with the wheel.
if want suite; then
  SSITE=$(mktemp -d "${TMPDIR:-/tmp}/hg-suite.XXXXXX")
  if [ -d "${HG_MITSUBA_DATA:-}" ] && python3 -m pip install -q --no-index --no-deps --target "$SSITE" "$BUNDLE"/wheels/*.whl >"$LOGS/suite_wheel.log" 2>&1; then
    run "Mitsuba test scenes (${HG_SUITE_BACKEND:-cuda})" "$LOGS/suite.log" env PYTHONPATH="$SSITE" \
      python3 "$ROOT/tests/mitsuba_data/run.py" "$HG_MITSUBA_DATA" --backend "${HG_SUITE_BACKEND:-cuda}" \
      --timeout "${HG_SUITE_TIMEOUT:-300}" --markdown
    grep -E '^\||^[0-9]+ ' "$LOGS/suite.log" | tee "$LOGS/suite.md"
  else
    echo "suite: no mitsuba-data at HG_MITSUBA_DATA or the wheel did not install"; FAILED=1
    ROWS+=("Mitsuba test scenes: not run")
  fi
fi

stat() { grep -h "HG_GPU_STAT" "$@" 2>/dev/null; }
field() { grep -Eo "$1=[^ ]+" | head -1 | cut -d= -f2; }
cold_src=$(stat "$LOGS/cold.log" | grep 'module=' | field source)
cold_s=$(stat "$LOGS/cold.log" | grep 'module=' | field seconds)
warm_src=$(stat "$LOGS/warm.log" | grep 'module=' | field source)
warm_s=$(stat "$LOGS/warm.log" | grep 'module=' | field seconds)
first_cold=$(stat "$LOGS/cold.log" | field first_render_seconds)
first_warm=$(stat "$LOGS/warm.log" | field first_render_seconds)
device=$(stat "$LOGS/cold.log" | grep 'device ' | sed 's/.*HG_GPU_STAT device //' | head -1)
rm -rf "$CACHE"

echo
echo "==================== heliograph GPU checks: summary ===================="
echo "date      : $(date -u +%FT%TZ)"
echo "nvidia-smi: $(head -1 "$LOGS/nvidia-smi.txt" 2>/dev/null)"
echo "device    : ${device:-unknown (see logs)}"
printf '%-34s %-6s %6s %6s %9s\n' "check" "result" "passed" "failed" "wall"
for r in "${ROWS[@]}"; do echo "$r"; done
echo "NVRTC module (new process, empty cache): ${cold_src:-?} in ${cold_s:-?} s"
echo "module (new process, warm disk cache)  : ${warm_src:-?} in ${warm_s:-?} s"
echo "first render incl. context+module, cold: ${first_cold:-?} s; warm cache: ${first_warm:-?} s"
stat "$LOGS/all.log" | grep -E 'depth scene=|layout_entries|throughput' | sed 's/HG_GPU_STAT /  /'
echo "direct/path vs CPU (worst Bonferroni p; must be > 1e-3; 1.05x-biased image must be < 1e-3):"
stat "$LOGS/render.log" | grep 'image ' | sed 's/HG_GPU_STAT /  /'
stat "$LOGS/parity.log" "$LOGS/determinism.log" "$LOGS/nvrtc.log" | sed 's/HG_GPU_STAT /  /'
echo "device scene (updates vs fresh uploads, read ordering, fences, imports, memory):"
stat "$LOGS/updates.log" | grep -v 'update key=' | sed 's/HG_GPU_STAT /  /'
echo "benchmarks (512x512, 32 spp; seed: direct, target >= 24 Gsamples/s; cbox: path max_depth 8, target >= 1.5):"
stat "$LOGS/bench.log" | grep 'bench ' | sed 's/HG_GPU_STAT /  /'
echo "ray throughput (~1M-triangle bumpy sphere, 1024x1024, 4 spp; primary: depth; diffuse: path max_depth 4, kernel-counted rays):"
stat "$LOGS/bench_mesh1m.log" | grep 'bench ' | sed 's/HG_GPU_STAT /  /'
echo "tuning sweep (block size x register cap; kernel ms):"
stat "$LOGS/tune.log" | grep 'tune ' | sed 's/HG_GPU_STAT tune /  /' | awk '{print $1, $2, $3, $4, $5, $6, $7}'
echo "overall   : $([ "$FAILED" -eq 0 ] && echo PASS || echo FAIL)"
exit "$FAILED"
