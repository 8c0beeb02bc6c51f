#!/usr/bin/env bash
# GPU machine side: Nsight Compute profile (full set, clocks as they are) of one
# hg_backward launch of tests/bench_diff.py --cuda, with heliograph from SITE (an installed
# wheel). Writes to OUT: backward.ncu-rep, backward_details.txt (the details page),
# backward_lines.txt (time per out-of-line function and the hottest SASS instructions by
# warp-stall samples, tests/gpu/ncu_lines.py) and backward_source.tgz (the source pages as CSV); prints
# the headline metrics and the hottest lines. The kernels' sources are resolved from
# renderer/kernels (the module's #line directives name the files bare).
#
#   tests/gpu/profile_backward.sh OUT SITE
set -u
OUT=${1:?usage: profile_backward.sh OUT SITE}
SITE=${2:?usage: profile_backward.sh OUT SITE}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
[ -x "$NCU" ] || { echo "no ncu on this machine"; exit 2; }
REP=$OUT/backward
( cd "$ROOT/renderer/kernels" && timeout -k 5 300 "$NCU" --target-processes all -k regex:hg_backward -c 1 \
    --clock-control none --set full --import-source yes --export "$REP" --force-overwrite \
    python3 "$ROOT/tests/bench_diff.py" --cuda --iters 1 --hg-python python3 --hg-path "$SITE" \
    --mi-python python3 --mi-path /nonexistent > "$OUT/backward_run.txt" 2>&1 )
"$NCU" --import "$REP.ncu-rep" --page details > "$OUT/backward_details.txt" 2>&1
SRC=$(mktemp -d)
for view in cuda sass; do
  ( cd "$ROOT/renderer/kernels" && "$NCU" --import "$REP.ncu-rep" --page source --csv --print-source "$view" \
      > "$SRC/backward_$view.csv" 2>&1 )
done
tar czf "$OUT/backward_source.tgz" -C "$SRC" .
grep -E "Duration|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Local Memory|Warp Cycles Per Issued|Avg. Active Threads Per Warp|Branch Efficiency|L1/TEX Hit Rate" \
  "$OUT/backward_details.txt" | head -24
# per-line metrics come with the SASS page (the CUDA page of an NVRTC module holds its
# source text only)
python3 "$HERE/ncu_lines.py" "$SRC/backward_sass.csv" 60 > "$OUT/backward_lines.txt" 2>&1
head -90 "$OUT/backward_lines.txt"
