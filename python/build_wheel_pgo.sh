#!/usr/bin/env bash
# Builds the release wheel with profile-guided optimisation (PGO): an instrumented wheel
# renders every scene in scenes/ at a small size, and the wheel is built again with the
# branch and call counts of those renders, so the compiler lays out the hot paths of
# the sample loop (traversal, integrators, BSDFs, the film) for how they actually run.
# Renders took up to 20% less Python wall time than with a wheel from `maturin build
# --release` (tests/bench_cpu.py, both wheels in one run; tests/bench_cpu_results.md) and
# give the same pixels, bit for bit: PGO changes code layout and inlining, never
# floating-point results.
#
#     bash python/build_wheel_pgo.sh [OUT_DIR]        # default target/wheels
#
# target/pgo/venv then holds the PGO wheel, with NumPy: the environment that
# `tests/bench_cpu.py --hg-pgo-python target/pgo/venv/bin/python` measures.
#
# Needs what `maturin build` needs plus LLVM's profile merger from rustup
# (`rustup component add llvm-tools`). About twice a plain release build's time; the two
# builds keep their own target directories under target/pgo/, so a rebuild after a
# change recompiles only heliograph. The CLI (`cargo build --release`) is not built with
# PGO by this script; the wheel's `heliograph` command is the same program and is.
set -euo pipefail
CALLER=$(pwd)
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${1:-$ROOT/target/wheels}
case "$OUT" in
    /*) ;;
    *) OUT=$CALLER/$OUT ;; # relative to where the script was called from
esac
WORK=$ROOT/target/pgo
PYTHON=${PYTHON:-python3}

HOST=$(rustc -vV | sed -n 's/^host: //p')
PROFDATA=$(rustc --print sysroot)/lib/rustlib/$HOST/bin/llvm-profdata
if [ ! -x "$PROFDATA" ]; then
    echo "build_wheel_pgo.sh: $PROFDATA is missing; install it with:" >&2
    echo "    rustup component add llvm-tools" >&2
    exit 1
fi

# a private environment with the build tools and NumPy (the training renders run in it)
if [ ! -x "$WORK/venv/bin/python" ]; then
    "$PYTHON" -m venv "$WORK/venv"
fi
VPY=$WORK/venv/bin/python
"$VPY" -m pip install -q --disable-pip-version-check numpy "maturin>=1.16,<2"

# 1. the instrumented wheel (build scripts are instrumented too: their counts, written
#    while it builds, are cleared before the training renders)
rm -rf "$WORK/wheel-instrumented"
RUSTFLAGS="-Cprofile-generate=$WORK/profiles" CARGO_TARGET_DIR=$WORK/instrumented \
    "$WORK/venv/bin/maturin" build --release -m python/Cargo.toml -i "$VPY" \
    -o "$WORK/wheel-instrumented"
"$VPY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
    "$WORK"/wheel-instrumented/heliograph-*.whl

# 2. training: every shipped scene, small, through the wheel's command line (the same
#    render code as `heliograph.render`)
rm -rf "$WORK/profiles"
for scene in scenes/*.xml; do
    echo "training render: $scene"
    "$VPY" -m heliograph render "$scene" --spp 8 -D res=96 -o "$WORK/training.exr" -q
done
"$PROFDATA" merge -o "$WORK/heliograph.profdata" "$WORK/profiles"

# 3. the release wheel, optimised with the profile
RUSTFLAGS="-Cprofile-use=$WORK/heliograph.profdata" CARGO_TARGET_DIR=$WORK/release \
    "$WORK/venv/bin/maturin" build --release -m python/Cargo.toml -i "$VPY" -o "$OUT"
# the environment keeps the optimised wheel, not the instrumented one (which would write
# counts on every run)
"$VPY" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
    "$(ls -t "$OUT"/heliograph-*.whl | head -n 1)"
echo "build_wheel_pgo.sh: the PGO wheel is in $OUT"
