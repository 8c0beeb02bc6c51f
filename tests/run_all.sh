#!/usr/bin/env bash
# The whole test suite: what a newcomer runs and what CI runs (.ci/run).
# Needs only Rust (cargo) and Python 3 with pip; installs nothing system-wide.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo test (release: the regression renders need optimised code)"
cargo test --workspace --release
