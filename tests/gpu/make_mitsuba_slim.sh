#!/usr/bin/env bash
# Build machine side: BUNDLE/mitsuba-slim.tar.xz for tests/gpu/diff_round.sh, Mitsuba
# 3.9.1 and its drjit (1.5.0) for the GPU machine's CPython 3.12 (which has no network):
# the PyPI wheels unpacked into one site folder without the variants and plugins the
# benchmark does not load (the whole wheel is larger than what a device call carries).
#
#   tests/gpu/make_mitsuba_slim.sh [BUNDLE]      # BUNDLE defaults to .gpu (~22 MB)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUNDLE=${1:-.gpu}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for req in mitsuba==3.9.1 drjit==1.5.0; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 -d "$WORK/wheels" "$req"
done
mkdir -p "$WORK/site"
for w in "$WORK"/wheels/*.whl; do (cd "$WORK/site" && python3 -m zipfile -e "$w" .); done
cd "$WORK/site/mitsuba"
rm -rf llvm_ad_* cuda_ad_mono* cuda_ad_spectral* scalar_spectral* scalar_mono* include cmake pkgconfig \
  mitsuba_stubs data/srgb.coeff
for p in volpathmis ellipsoids ellipsoidsmesh volpath bsplinecurve sunsky timed_sunsky sdfgrid linearcurve \
  volgrid gridvolume; do rm -f "plugins/$p.so"; done
rm -rf "$WORK/site/drjit/include" "$WORK/site/drjit/cmake"
cd - >/dev/null
mkdir -p "$BUNDLE"
tar cJf "$BUNDLE/mitsuba-slim.tar.xz" -C "$WORK/site" .
ls -l "$BUNDLE/mitsuba-slim.tar.xz"
