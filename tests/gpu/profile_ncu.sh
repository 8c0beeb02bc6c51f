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
# the benchmark renders the seed scene (direct) and then the Cornell box (path), warm-up + 5
# times each, one hg_render launch per render (the megakernel, the default): profile the
# second render of each (the seed scene: warm-up, 5 timed renders, one ray-counting render)
for case in "seed hg_render 1 1" "cbox hg_render 8 1"; do
  set -- $case
  "$NCU" --clock-control none --set full -k "regex:$2" --launch-skip "$3" --launch-count "$4" \
    --export "$OUT/$1" --force-overwrite \
    "$BIN" --exact benchmark_seed_direct_and_cbox_path --nocapture > "$OUT/$1-run.txt" 2>&1
  "$NCU" --import "$OUT/$1.ncu-rep" --page details > "$OUT/$1-details.txt" 2>&1
  # per-line metrics (instructions executed, stall samples): CUDA lines via -lineinfo, and SASS
  "$NCU" --import "$OUT/$1.ncu-rep" --page source --csv --print-source cuda > "$OUT/$1-source-cuda.csv" 2>&1
  "$NCU" --import "$OUT/$1.ncu-rep" --page source --csv --print-source sass > "$OUT/$1-source-sass.csv" 2>&1
  echo "==== ncu $1 ($2)"
  grep -E "^  hg_|Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|L1/TEX Hit Rate|L2 Hit Rate|Warp Cycles Per Issued|Issue Slots Busy|Block Limit Registers|Local Memory|Branch Efficiency|Avg. Active Threads Per Warp|Avg. Not Predicated|No Eligible|One or More Eligible" "$OUT/$1-details.txt" | head -200
  grep -E -A3 "Stall|stall" "$OUT/$1-details.txt" | grep -E "OPT|stall" | head -12
done
