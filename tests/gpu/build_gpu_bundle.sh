#!/usr/bin/env bash
# Build machine side: builds the CUDA test binaries (and the CLI) in release mode with
# the `cuda` feature and copies them, stripped, into .gpu/bin/ (git-ignored), for
# tests/gpu/run_gpu_checks.sh on the GPU machine (which has no Rust toolchain).
#
#   tests/gpu/build_gpu_bundle.sh   # -> .gpu/bin/{gpu_depth,gpu_render,heliograph}
#
# Manual equivalent: `cargo test --release --features cuda --test gpu_depth --no-run`
# prints "Executable tests/gpu_depth.rs (target/release/deps/gpu_depth-HASH)"; copy that
# file to .gpu/bin/gpu_depth. scenes/ and assets/ are tracked files and travel with the
# working tree; the script copies them (and tests/references/scenes/) into .gpu/ as well so
# the bundle is self-contained.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUNDLE=${1:-.gpu}
mkdir -p "$BUNDLE/bin"
rm -f "$BUNDLE"/bin/*

tests=$(cargo test -p heliograph --release --features cuda --test gpu_depth --test gpu_render --test gpu_updates --no-run --message-format=json 2>/dev/null \
      | python3 -c 'import json,sys
for l in sys.stdin:
    try: m = json.loads(l)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("gpu_depth", "gpu_render", "gpu_updates"):
        print(m["target"]["name"], m["executable"])')
for t in gpu_depth gpu_render gpu_updates; do
  exe=$(echo "$tests" | awk -v t="$t" '$1 == t {print $2}')
  [ -n "$exe" ] || { echo "could not find the $t test binary" >&2; exit 1; }
  cp "$exe" "$BUNDLE/bin/$t"
done
cargo build -p heliograph --release --features cuda --bin heliograph
cp target/release/heliograph "$BUNDLE/bin/heliograph"
strip --strip-debug "$BUNDLE"/bin/* 2>/dev/null || true
# The wheel users get (the cuda feature is on by default): abi3, manylinux_2_34, built
# by maturin as tests/run_all.sh builds it (pip wheel ./python would tag it for this
# machine only).
rm -rf "$BUNDLE/wheels"
PY=target/pyenv/bin/python
[ -x "$PY" ] || python3 -m venv target/pyenv
"$PY" -m pip install -q --disable-pip-version-check numpy pytest "maturin>=1.16,<2"
"$PY" -m maturin build --release -m python/Cargo.toml -i "$PY" -o "$BUNDLE/wheels"
rm -rf "$BUNDLE/scenes" "$BUNDLE/assets" "$BUNDLE/tests"
cp -r scenes assets "$BUNDLE/"
# the regression scenes that gpu_render also renders (their assets resolve to ../../../assets)
mkdir -p "$BUNDLE/tests/references"
cp -r tests/references/scenes "$BUNDLE/tests/references/"
cp tests/gpu/run_gpu_checks.sh "$BUNDLE/"
{
  echo "built: $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)$(git diff --quiet || echo '+dirty')"
  ls -l "$BUNDLE/bin" "$BUNDLE/wheels"
} > "$BUNDLE/MANIFEST.txt"
du -sh "$BUNDLE"
cat "$BUNDLE/MANIFEST.txt"
