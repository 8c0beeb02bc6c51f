#!/usr/bin/env bash
# The whole test suite: what a newcomer runs and what CI runs (.ci/run).
# Needs only Rust (cargo) and Python 3 with pip; installs nothing system-wide (everything
# goes under target/).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
NVRTC_MISSING=""

echo "== no merge-conflict markers left in tracked files"
if git grep -nE '^(<{7} |={7}$|>{7} )' -- . ':!*.exr' ':!*.png'; then
    echo "conflict markers above: resolve the merge" >&2; exit 1
fi
echo "== cargo fmt --check"
cargo fmt --all -- --check
# plugins declared through a registry macro are out of cargo fmt's reach: each file itself
git ls-files -z 'renderer/src/*.rs' 'python/src/*.rs' | xargs -0 rustfmt --edition 2021 --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo clippy without the cuda feature (the stub backend mirrors the CUDA API)"
CARGO_TARGET_DIR=target/nocuda cargo clippy -p heliograph --no-default-features -- -D warnings
echo "== cargo doc (every link in the API docs resolves)"
RUSTDOCFLAGS="-D warnings" cargo doc -p heliograph --no-deps
echo "== cargo test (release: the regression renders need optimised code)"
cargo test --workspace --release

echo "== NVRTC: compile every kernel module the renderer can ask for ($SECONDS s so far)"
# NVRTC needs no GPU. It comes from the wheel that the Python package's cuda extra
# requires (the same requirement string), installed under target/nvrtc; the download is
# kept for later runs. Without network this step is skipped with a loud warning (CI then
# has not checked the kernels); a CUDA C compile error always fails.
REQ=$(grep -o 'nvidia-cuda-nvrtc[^;"]*' python/pyproject.toml | head -1)
NVRTC_SITE=target/nvrtc
NVRTC_LIB=$PWD/$NVRTC_SITE/nvidia/cu13/lib/libnvrtc.so.13
if [ "$(cat "$NVRTC_SITE/.requirement" 2>/dev/null)" != "$REQ" ] || [ ! -f "$NVRTC_LIB" ]; then
    rm -rf "$NVRTC_SITE" target/nvrtc-wheel
    if "$PY" -m pip download -q --disable-pip-version-check --no-deps -d target/nvrtc-wheel "$REQ" \
        && "$PY" -m pip install -q --disable-pip-version-check --no-deps --no-index \
            --target "$NVRTC_SITE" target/nvrtc-wheel/*.whl; then
        echo "$REQ" > "$NVRTC_SITE/.requirement"
    fi
fi
if [ -f "$NVRTC_LIB" ]; then
    HELIOGRAPH_NVRTC=$NVRTC_LIB HELIOGRAPH_REQUIRE_NVRTC=1 \
        cargo test -p heliograph --release --test nvrtc_modules --test nvrtc_lookup -- --nocapture
else
    NVRTC_MISSING="could not download $REQ: the CUDA kernels were NOT compiled in this run"
    printf '!!!!!!!!!!\n!!!!!!!!!! WARNING: %s\n!!!!!!!!!!\n' "$NVRTC_MISSING"
fi

echo "== Python package: the abi3 manylinux wheel, then pytest with it installed ($SECONDS s so far)"
# The wheel is built as a release builds it (maturin build: its manylinux check applies;
# pip wheel ./python would make a local linux_x86_64 wheel) and installed as users install
# it. NumPy, pytest and maturin are required; JAX (CPU), nbclient (runs the notebook),
# mypy (stubtest), ruff (lint) and auditwheel are optional: when they cannot be
# installed, their checks are skipped.
VENV=target/pyenv
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check numpy pytest "maturin>=1.16,<2"
timeout 600 "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "jax[cpu]" nbclient nbformat ipykernel mypy ruff auditwheel \
    || echo "(optional jax / nbclient / mypy / ruff / auditwheel not installed: their checks will skip)"
# PyTorch for heliograph.torch's tests (large: its own time limit)
timeout 900 "$VENV/bin/python" -m pip install -q --disable-pip-version-check torch \
    || echo "(optional torch not installed: the heliograph.torch tests will skip)"
if [ -x "$VENV/bin/ruff" ]; then "$VENV/bin/ruff" check python tests/python tests/fuzz tests/mitsuba_data tests/mitsuba_tutorials tests/bench_cpu.py tests/bench_diff.py tests/bench_diff_jit.py tests/bench_rays_embree.py; fi
rm -rf target/wheels
"$VENV/bin/maturin" build --release -m python/Cargo.toml -i "$VENV/bin/python" -o target/wheels
WHEEL=$(ls target/wheels/heliograph-*.whl)
TAG=manylinux_2_34_$(uname -m)
case "$WHEEL" in
    *-cp39-abi3-"$TAG".whl) echo "wheel: $WHEEL" ;;
    *) echo "expected an abi3 $TAG wheel, got $WHEEL"; exit 1 ;;
esac
if [ -x "$VENV/bin/auditwheel" ]; then
    SHOW=$("$VENV/bin/auditwheel" show "$WHEEL")
    echo "$SHOW"
    case "$SHOW" in *"platform tag: \"$TAG\""*) ;; *) echo "auditwheel disagrees"; exit 1 ;; esac
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$WHEEL"
(cd tests/python && "../../$VENV/bin/python" -m pytest -q -W error -p no:cacheprovider)
# the acceptance criterion of the Mitsuba test-suite harness (the harness itself needs a
# mitsuba-data checkout: tests/RESULTS.md)
"$VENV/bin/python" -m pytest -q -W error -p no:cacheprovider tests/mitsuba_data/test_judge.py

echo "== fuzz: 30 s each of the scene-file, load_dict and DLPack import fuzzers (tests/fuzz/README.md) ($SECONDS s so far)"
# Fixed seeds, so that a failure here reproduces (--seed 1 --case I); long runs use
# other seeds. The example was built by cargo test above; a finding exits 1.
cargo run -q --release -p heliograph --example fuzz_scene -- --seconds 30 --seed 1
"$VENV/bin/python" tests/fuzz/fuzz_dict.py --seconds 30 --seed 1
"$VENV/bin/python" tests/fuzz/fuzz_dlpack.py --seconds 30 --seed 1

echo "== the wheel in a fresh virtual environment, with a bare PATH ($SECONDS s so far)"
# heliograph (the console script), python -m heliograph and import heliograph render the
# seed scene on the CPU: same scene, spp and seed, so the files must be identical. With
# the cuda extra installed, the backend's NVRTC must be the environment's wheel.
WENV=$PWD/target/wheelenv
rm -rf "$WENV"
"$PY" -m venv "$WENV"
if [ -z "$NVRTC_MISSING" ]; then
    "$WENV/bin/python" -m pip install -q --disable-pip-version-check \
        --find-links target/nvrtc-wheel "$WHEEL[cuda]"
else
    "$WENV/bin/python" -m pip install -q --disable-pip-version-check "$WHEEL"
fi
SEED=$PWD/scenes/seed.xml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# no cargo, no target/release, no PYTHONPATH or HELIOGRAPH_*: only the environment
clean() { (cd "$WORK" && env -i HOME="$HOME" PATH="$WENV/bin:/usr/bin:/bin" LANG=C.UTF-8 "$@"); }
[ "$(clean sh -c 'command -v heliograph')" = "$WENV/bin/heliograph" ]
ARGS=(render "$SEED" -D res=32 --spp 4 --seed 7 --backend cpu -q)
clean heliograph "${ARGS[@]}" -o cli.exr
clean python -m heliograph "${ARGS[@]}" -o module.exr
clean python -c 'import sys, heliograph as hg
hg.set_variant("cpu_rgb")
hg.util.write_bitmap("api.exr", hg.render(hg.load_file(sys.argv[1], res=32), spp=4, seed=7))' "$SEED"
cmp "$WORK/cli.exr" "$WORK/module.exr"
cmp "$WORK/cli.exr" "$WORK/api.exr"
echo "the three renders are identical ($(stat -c %s "$WORK/cli.exr") bytes)"
if [ -z "$NVRTC_MISSING" ]; then
    clean python -c 'import os, sysconfig, heliograph
got = os.path.realpath(heliograph._native._nvrtc_path())
want = os.path.realpath(os.path.join(sysconfig.get_paths()["purelib"], "nvidia/cu13/lib/libnvrtc.so.13"))
assert got == want, (got, want)
print("NVRTC from the environment:", got)'
fi

if [ -n "$NVRTC_MISSING" ]; then
    printf '!!!!!!!!!! WARNING: %s\n' "$NVRTC_MISSING"
fi
echo "== all checks passed in $SECONDS s"
