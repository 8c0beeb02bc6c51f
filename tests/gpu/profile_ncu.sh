#!/usr/bin/env bash
# GPU machine side: Nsight Compute profile of the direct/path megakernel on the benchmark
# scenes (512x512, 32 spp), clocks left as they are (--clock-control none), so the numbers
# are comparable with the benchmark's. Writes text reports (and .ncu-rep files) to $1.
#
#   tests/gpu/profile_ncu.sh OUTDIR [BUNDLE]
set -u
OUT=${1:?usage: profile_ncu.sh OUTDIR [BUNDLE]}
HERE=$(cd "$(dirname "$0")" && pwd)
BUNDLE=${2:-$HERE/../../.gpu}
BIN=$BUNDLE/bin/gpu_render
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
export HELIOGRAPH_ROOT=$BUNDLE HELIOGRAPH_REQUIRE_GPU=1
mkdir -p "$OUT"
# the benchmark launches hg_render once per render: seed warm-up + 5, then cbox warm-up + 5
for case in "seed 1" "cbox 7"; do
  set -- $case
  "$NCU" --clock-control none --set full -k regex:hg_render --launch-skip "$2" --launch-count 1 \
    --export "$OUT/$1" --force-overwrite \
    "$BIN" --exact benchmark_seed_direct_and_cbox_path --nocapture > "$OUT/$1-run.txt" 2>&1
  "$NCU" --import "$OUT/$1.ncu-rep" --page details > "$OUT/$1-details.txt" 2>&1
  # per-line metrics (instructions executed, stall samples): CUDA lines via -lineinfo, and SASS
  "$NCU" --import "$OUT/$1.ncu-rep" --page source --csv --print-source cuda > "$OUT/$1-source-cuda.csv" 2>&1
  "$NCU" --import "$OUT/$1.ncu-rep" --page source --csv --print-source sass > "$OUT/$1-source-sass.csv" 2>&1
  echo "==== ncu $1 (hg_render)"
  grep -E "Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit Rate|L2 Hit Rate|Warp Cycles Per Issued|Issue Slots Busy|Block Limit Registers|Local Memory|Branch Efficiency|Avg. Active Threads Per Warp|Avg. Not Predicated|No Eligible|One or More Eligible" "$OUT/$1-details.txt" | head -40
  grep -E -A3 "Stall|stall" "$OUT/$1-details.txt" | grep -E "OPT|stall" | head -12
done
