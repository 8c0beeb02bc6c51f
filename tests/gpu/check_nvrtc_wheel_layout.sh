#!/usr/bin/env bash
# GPU machine side: does `pip install "heliograph[cuda]"` work on a machine whose loader
# knows no NVRTC? The GPU machine has no network, so the nvidia-cuda-nvrtc wheel's layout
# is emulated with the machine's own NVRTC 13 (the same NVIDIA build of the library the
# wheel ships, 109 MB: too large to carry there):
#
#   tests/gpu/check_nvrtc_wheel_layout.sh SITE
#
# SITE: a folder holding the unpacked heliograph wheel (pip install --target SITE ...).
#
# 1. copies the system's libnvrtc.so.13 and its libnvrtc-builtins.so.13.N (found with
#    ldconfig -p and under /usr/local/cuda*) to SITE/nvidia/cu13/lib/, the wheel's layout
#    (removed again at exit);
# 2. in a private mount namespace (unshare -m: gone when the check ends; no system file
#    is changed), covers every NVRTC file the loader could find (each one's real file,
#    so libnvrtc.so, libnvrtc.so.13 and the builtins alike) with an empty file, and
#    checks that dlopen("libnvrtc.so.13") and dlopen("libnvrtc.so") now fail; LD_LIBRARY_PATH
#    alone would not do: ld.so.cache still knows the files;
# 3. runs Python there with PYTHONPATH=SITE and a fresh kernel cache (so NVRTC must
#    compile): hg.set_variant("cuda_rgb"), renders scenes/seed.xml, compares its mean
#    with the CPU's, and prints the NVRTC file heliograph uses (heliograph._native.
#    _nvrtc_path(): the file cudarc's handle resolves to) and every NVRTC file mapped
#    into the process (/proc/self/maps). PASS only if both are SITE/nvidia/cu13/lib.
#
# Cases: "wheel" (the above; decides the exit status), "explicit" (HELIOGRAPH_NVRTC
# naming a copy in a temporary folder, same hiding) and, when the system Python already
# has the real nvidia-cuda-nvrtc wheel (PyTorch depends on it), "pypi" (no copy in SITE:
# heliograph must find and use that wheel, the PyPI binary itself). A "control" run
# without hiding prints which NVRTC wins when both the wheel and a toolkit are present.
#
# What a PASS proves: with no NVRTC known to the loader, heliograph imported from a
# pip-style folder finds NVRTC through its import path alone, cudarc calls into that
# very file (not another copy), NVRTC finds its builtins beside it, compiles the render
# module and the render is right. Exit status: 0 pass, 1 fail, 2 could not run (no
# NVRTC 13 on this machine, no mount namespace, or bad usage).
set -u
SITE=${1:-}
if [ -z "$SITE" ] || [ ! -d "$SITE/heliograph" ]; then
  echo "usage: $0 SITE   (SITE: the folder holding the unpacked heliograph package; got '${SITE}')"
  exit 2
fi
SITE=$(cd "$SITE" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-python3}
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

# Inside the namespace (the script runs itself again under unshare): hide, then check.
if [ "${HG_NVRTC_NS:-}" = 1 ]; then
  EMPTY=$(mktemp "${TMPDIR:-/tmp}/hg-empty.XXXXXX")
  while read -r f; do
    mount --bind "$EMPTY" "$f" || { echo "could not cover $f"; exit 2; }
    echo "hidden: $f"
  done < "$HG_NVRTC_HIDE"
  for name in libnvrtc.so.13 libnvrtc.so $HG_NVRTC_BUILTINS; do
    if "$PY" -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$name" 2>/dev/null; then
      echo "the loader still finds $name: cannot hide the system NVRTC"; exit 2
    fi
  done
  echo "the loader finds no libnvrtc.so.13 / libnvrtc.so / builtins any more"
  shift
  exec "$@"
fi

# The system's NVRTC 13 and every NVRTC file the loader could find.
cands=$( { ldconfig -p 2>/dev/null | grep -Eo '/[^ ]*libnvrtc[^ ]*\.so[^ ]*'
           ls /usr/local/cuda*/lib64/libnvrtc*.so* /usr/local/cuda*/targets/*/lib/libnvrtc*.so* 2>/dev/null
           [ -n "${LD_LIBRARY_PATH:-}" ] && for d in ${LD_LIBRARY_PATH//:/ }; do ls "$d"/libnvrtc*.so* 2>/dev/null; done
         } | sort -u)
NVRTC=""
for f in $cands; do
  case $(basename "$f") in libnvrtc.so.13*) NVRTC=$(readlink -f "$f"); break ;; esac
done
if [ -z "$NVRTC" ]; then
  echo "no libnvrtc.so.13 on this machine (looked in: ldconfig -p, /usr/local/cuda*, LD_LIBRARY_PATH)"
  exit 2
fi
LIBDIR=$(dirname "$NVRTC")
BUILTINS=$(ls "$LIBDIR"/libnvrtc-builtins.so.13.* 2>/dev/null | grep -v alt | head -1)
BUILTINS=${BUILTINS:+$(readlink -f "$BUILTINS")}
[ -n "$BUILTINS" ] || { echo "no libnvrtc-builtins.so.13.* beside $NVRTC"; exit 2; }
echo "system NVRTC: $NVRTC (builtins $BUILTINS)"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/hg-nvrtc-layout.XXXXXX")
HIDE=$WORK/hide.txt
for f in $cands; do readlink -f "$f"; done | sort -u > "$HIDE"

# 1. the wheel's layout in SITE (only what this script adds is removed at exit)
WHEELDIR=$SITE/nvidia/cu13/lib
CREATED=""
[ -e "$SITE/nvidia" ] || CREATED=$SITE/nvidia
mkdir -p "$WHEELDIR"
cp "$NVRTC" "$WHEELDIR/libnvrtc.so.13"
# the builtins' SONAME, libnvrtc-builtins.so.13.N, is the name the wheel uses
BUILTINS_NAME=$(basename "$BUILTINS" | sed 's/\.so\.13\.\([0-9]*\).*/.so.13.\1/')
cp "$BUILTINS" "$WHEELDIR/$BUILTINS_NAME"
EXPLICIT=$WORK/explicit
mkdir -p "$EXPLICIT" && cp "$WHEELDIR"/* "$EXPLICIT/"
cleanup() {
  rm -rf "$WORK"
  if [ -n "$CREATED" ]; then rm -rf "$CREATED"; else rm -f "$WHEELDIR"/libnvrtc*; fi
}
trap cleanup EXIT
ls -l "$WHEELDIR"

# The check in Python: EXPECT_DIR is where every NVRTC file must come from.
cat > "$WORK/check.py" <<'EOF'
import os, sys
import numpy as np
import heliograph as hg

expect = os.path.realpath(os.environ["EXPECT_DIR"]) if os.environ.get("EXPECT_DIR") else None
root = os.environ["HG_ROOT"]
try:
    used = hg._native._nvrtc_path()
except hg.CudaUnavailableError as e:
    print(f"NVRTC: none usable: {e}"); sys.exit(1)
print(f"NVRTC used (heliograph._native._nvrtc_path()): {used}")
hg.set_progress(False)
hg.set_variant("cuda_rgb")
scene = hg.load_file(os.path.join(root, "scenes", "seed.xml"), res=64)
gpu = hg.render(scene, spp=16, seed=1).numpy()
hg.set_variant("cpu_rgb")
cpu = hg.render(hg.load_file(os.path.join(root, "scenes", "seed.xml"), res=64), spp=16, seed=1).numpy()
mapped = sorted({line.split()[-1] for line in open("/proc/self/maps") if "nvrtc" in line.split()[-1]})
print("NVRTC files mapped into this process:", *mapped, sep="\n  ")
ok_img = gpu.shape == (64, 64, 3) and np.isfinite(gpu).all() and abs(gpu.mean() / cpu.mean() - 1) < 0.05
print(f"cuda_rgb render 64x64, 16 spp: mean {gpu.mean():.4f} (cpu_rgb {cpu.mean():.4f}) -> {'ok' if ok_img else 'WRONG'}")
if expect is None:
    sys.exit(0 if ok_img else 1)
ok_used = os.path.dirname(os.path.realpath(used)) == expect
ok_mapped = bool(mapped) and all(os.path.dirname(os.path.realpath(m)) == expect for m in mapped)
print(f"NVRTC from {expect}: used {'yes' if ok_used else 'NO'}, every mapped file {'yes' if ok_mapped else 'NO'}")
sys.exit(0 if ok_img and ok_used and ok_mapped else 1)
EOF

# case NAME EXPECT_DIR HIDE(1|0) [VAR=VALUE ...]: runs the check, prints PASS/FAIL NAME
RESULT=0
case_() {
  local name=$1 expect=$2 hide=$3; shift 3
  local cache; cache=$(mktemp -d "$WORK/cache.XXXXXX")
  echo "---- $name"
  local cmd=(env -u HELIOGRAPH_NVRTC "PYTHONPATH=$SITE" "HELIOGRAPH_CACHE_DIR=$cache"
             "EXPECT_DIR=$expect" "HG_ROOT=$ROOT" "$@" "$PY" "$WORK/check.py")
  local rc
  if [ "$hide" = 1 ]; then
    HG_NVRTC_NS=1 HG_NVRTC_HIDE=$HIDE HG_NVRTC_BUILTINS=$BUILTINS_NAME \
      unshare --mount --propagation private -- \
      bash "$0" "$SITE" "${cmd[@]}"; rc=$?
  else
    "${cmd[@]}"; rc=$?
  fi
  case $rc in
    0) echo "PASS $name" ;;
    2) echo "SKIP $name (could not hide the system NVRTC)" ;;
    *) echo "FAIL $name" ;;
  esac
  return $rc
}

if ! unshare --mount --propagation private true 2>/dev/null; then
  echo "no private mount namespace here (unshare -m needs root and CAP_SYS_ADMIN): cannot hide the system NVRTC"
  case_ control "" 0
  exit 2
fi
case_ wheel "$WHEELDIR" 1; RESULT=$?
case_ explicit "$EXPLICIT" 1 "HELIOGRAPH_NVRTC=$EXPLICIT/libnvrtc.so.13" || { [ $RESULT -ne 0 ] || RESULT=1; }
# the real wheel of the system Python, if any (not SITE's copy: PYTHONPATH unset)
PYPI=$(env -u PYTHONPATH "$PY" - <<'EOF' 2>/dev/null
import importlib.util, os
spec = importlib.util.find_spec("nvidia")
for d in (spec.submodule_search_locations if spec else []) or []:
    if os.path.isfile(os.path.join(d, "cu13", "lib", "libnvrtc.so.13")):
        print(os.path.join(d, "cu13", "lib")); break
EOF
)
if [ -n "$PYPI" ]; then
  rm -f "$WHEELDIR"/libnvrtc*    # SITE comes first on sys.path: leave the real wheel to be found
  case_ pypi "$PYPI" 1 || { [ $RESULT -ne 0 ] || RESULT=1; }
else
  echo "---- pypi: the system Python has no nvidia-cuda-nvrtc 13 wheel; not run"
fi
case_ "control (nothing hidden: which NVRTC wins when a toolkit is there too)" "" 0
echo "wheel layout check: $([ $RESULT -eq 0 ] && echo PASS || echo "FAIL ($RESULT)")"
exit $RESULT
