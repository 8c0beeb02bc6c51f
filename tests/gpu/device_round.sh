#!/usr/bin/env bash
# One round of GPU work on the device machine, for a runner that returns few files:
# runs tests/gpu/run_gpu_checks.sh (groups from HG_GPU_GROUPS) and, with HG_GPU_PROFILE=1,
# tests/gpu/profile_ncu.sh; writes OUT/summary.txt (the checks' output) and OUT/logs.tgz
# (every log, report and profile).
#
#   OUT=/some/dir tests/gpu/device_round.sh [BUNDLE]
set -u
OUT=${OUT:?set OUT to the folder that comes back}
HERE=$(cd "$(dirname "$0")" && pwd)
BUNDLE=${1:-$HERE/../../.gpu}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hg-round.XXXXXX")
HG_GPU_LOG_DIR=$WORK/logs bash "$HERE/run_gpu_checks.sh" "$BUNDLE" > "$OUT/summary.txt" 2>&1
rc=$?
if [ "${HG_GPU_PROFILE:-0}" = 1 ]; then
  bash "$HERE/profile_ncu.sh" "$WORK/ncu" "$BUNDLE" > "$OUT/profile.txt" 2>&1
fi
tar czf "$OUT/logs.tgz" -C "$WORK" . 2>/dev/null
exit $rc
