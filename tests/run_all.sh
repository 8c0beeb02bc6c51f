#!/usr/bin/env bash
# The whole test suite: what a newcomer runs and what CI runs (.ci/run).
# Needs only Rust (cargo) and Python 3 with pip; installs nothing system-wide (everything
# goes under target/).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
NVRTC_MISSING=""

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings
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

echo "== Python package: build into a fresh virtual environment (target/pyenv) and run pytest"
# The extension is built and installed exactly as users do it (pip install ./python).
# NumPy and pytest are required; JAX (CPU), nbclient (runs the notebook) and mypy
# (stubtest) and ruff (lint) are optional: when they cannot be installed, they are skipped.
VENV=target/pyenv
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check numpy pytest
timeout 600 "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "jax[cpu]" nbclient nbformat ipykernel mypy ruff \
    || echo "(optional jax / nbclient / mypy not installed: their tests will skip)"
if [ -x "$VENV/bin/ruff" ]; then "$VENV/bin/ruff" check python tests/python; fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps ./python
(cd tests/python && "../../$VENV/bin/python" -m pytest -q -W error -p no:cacheprovider)

if [ -n "$NVRTC_MISSING" ]; then
    printf '!!!!!!!!!! WARNING: %s\n' "$NVRTC_MISSING"
fi
echo "== all checks passed in $SECONDS s"
