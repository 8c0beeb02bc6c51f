#!/usr/bin/env bash
# Build machine side: slim copies of the mitsuba 3.9.1 and drjit 1.5.0 wheels, small enough
# for the device runner (64 MiB in all) and installable on the GPU machine without network:
#
#   tests/bench/pack_mitsuba_wheels.sh .mitsuba-slim     # cp312 wheels for the GPU machine
#   PYTAG=cp311 MI_SLIM_VARIANTS="scalar_rgb llvm_ad_rgb cuda_ad_rgb" \
#     tests/bench/pack_mitsuba_wheels.sh target/mitsuba-slim-cp311 --check
#       # the same layout for this machine's Python 3.11, installed into a scratch venv
#       # (OUTDIR/check-venv) and rendered with: keep it out of .mitsuba-slim, which the
#       # device runner carries (64 MiB in all)
#
# On the GPU machine: python3 -m pip install --no-index --no-deps --target SITE OUTDIR/*.whl
# (tests/bench/run_on_gpu.sh does it).
#
# Each slim wheel is the original with files left out and RECORD rewritten (still a valid
# wheel that pip installs and checks). Left out of mitsuba:
#   - the variant extension modules other than $MI_SLIM_VARIANTS (default: cuda_ad_rgb, and
#     scalar_rgb for a sanity check); mi.variants() is compiled in and still lists all 13,
#     mi.set_variant() of a left-out one raises ModuleNotFoundError;
#   - plugins other than the ones the shipped scenes need: Mitsuba's PluginManager dlopens a
#     plugin's .so the first time a scene names it, so absent plugins cost nothing until
#     used (--check renders with the slim copy to prove it). Kept: the plugins the benchmark
#     scenes load (traced from /proc/self/maps: area bitmap constant cube diffuse direct
#     gaussian hdrfilm independent merge path perspective rectangle srgb) plus the rest of
#     heliograph's plugin set, so scenes/showcase.xml and the regression scenes load too;
#   - data/srgb.coeff (the RGB-to-spectrum table of the spectral variants) and data/sunsky
#     (the sunsky plugin's tables); data/ior stays (conductor presets);
#   - the .pyi stubs, C++ headers, CMake and pkg-config files, and share/doc.
# Left out of drjit: the .pyi stubs, stubs.pat, C++ headers and CMake files.
#
# Wheels are looked for in $MI_WHEELS (default /tmp/whl) and downloaded there when missing.
# OUTDIR must be git-ignored (e.g. .mitsuba-slim/): wheels are never committed.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
OUT=$1
CHECK=${2:-}
PYTAG=${PYTAG:-cp312}
VARIANTS=${MI_SLIM_VARIANTS:-cuda_ad_rgb scalar_rgb}
WHEELS=${MI_WHEELS:-/tmp/whl}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-python3}

find_wheel() {  # find_wheel NAME VERSION: the wheel for $PYTAG in $WHEELS, downloaded if missing
  local w
  w=$(ls "$WHEELS"/"$1"-"$2"-"$PYTAG"-"$PYTAG"-manylinux*_x86_64.whl 2>/dev/null | head -1 || true)
  if [ -z "$w" ]; then
    mkdir -p "$WHEELS"
    "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "${PYTAG#cp}" --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 -d "$WHEELS" "$1==$2" >&2
    w=$(ls "$WHEELS"/"$1"-"$2"-"$PYTAG"-"$PYTAG"-manylinux*_x86_64.whl | head -1)
  fi
  echo "$w"
}

MI_WHL=$(find_wheel mitsuba 3.9.1)
DR_WHL=$(find_wheel drjit 1.5.0)
mkdir -p "$OUT"
rm -f "$OUT"/mitsuba-*.whl "$OUT"/drjit-*.whl

"$PY" - "$OUT" "$MI_WHL" "$DR_WHL" "$VARIANTS" <<'PYEOF'
import base64
import hashlib
import os
import re
import sys
import zipfile

out, mi_whl, dr_whl, variants = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
PLUGINS = set("""
    area bitmap constant cube diffuse direct gaussian hdrfilm independent merge path perspective rectangle srgb
    disk sphere obj ply conductor roughconductor dielectric roughdielectric thindielectric plastic roughplastic
    twosided
    checkerboard point directional envmap depth box tent uniform d65 regular
""".split())
VARIANT_SO = re.compile(r"^mitsuba/((?:scalar|llvm_ad|cuda_ad)_\w+)\.cpython-[^/]*\.so$")


def keep_mitsuba(name):
    if name.endswith(".pyi") or name.startswith("share/"):
        return False
    if re.match(r"^mitsuba/(include|cmake|pkgconfig|data/sunsky)/", name) or name == "mitsuba/data/srgb.coeff":
        return False
    m = re.match(r"^mitsuba/plugins/(\w+)\.so$", name)
    if m:
        return m.group(1) in PLUGINS
    m = VARIANT_SO.match(name)
    return m is None or m.group(1) in variants


def keep_drjit(name):
    return not (name.endswith(".pyi") or name == "drjit/stubs.pat" or re.match(r"^drjit/(include|cmake)/", name))


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def repack(src, keep):
    dst = os.path.join(out, os.path.basename(src))
    dropped = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zout:
        record_name = next(n for n in zin.namelist() if n.endswith(".dist-info/RECORD"))
        lines = []
        for info in zin.infolist():
            name = info.filename
            if name == record_name:
                continue
            if not name.endswith("/") and not keep(name):
                dropped += info.file_size
                continue
            data = zin.read(name)
            zi = zipfile.ZipInfo(name, info.date_time)
            zi.external_attr = info.external_attr  # keeps the executable bits
            zi.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(zi, data, compresslevel=9)
            if not name.endswith("/"):
                lines.append(record_line(name, data))
        lines.append(f"{record_name},,")
        zout.writestr(record_name, "\n".join(lines) + "\n", compress_type=zipfile.ZIP_DEFLATED)
    print(f"{os.path.basename(dst)}: {os.path.getsize(src) / 1e6:.1f} MB -> {os.path.getsize(dst) / 1e6:.1f} MB "
          f"({dropped / 1e6:.0f} MB unpacked left out)")


missing = [v for v in variants if not any(VARIANT_SO.match(n) and VARIANT_SO.match(n).group(1) == v
                                          for n in zipfile.ZipFile(mi_whl).namelist())]
if missing:
    sys.exit(f"variants not in {mi_whl}: {missing}")
repack(mi_whl, keep_mitsuba)
repack(dr_whl, keep_drjit)
PYEOF
du -ch "$OUT"/*.whl | tail -1 | sed 's/total/in all (compressed)/'

[ "$CHECK" = "--check" ] || exit 0

# --check: a scratch venv with only the slim wheels (and NumPy); every kept variant that runs
# here renders the seed scene (its PNG and a float EXR texture, updated through traverse) and
# the Cornell box, and the plugins it loaded are listed.
VENV=$OUT/check-venv
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/pip" install -q numpy
"$VENV/bin/pip" install -q --no-index --no-deps "$OUT"/mitsuba-*.whl "$OUT"/drjit-*.whl
"$VENV/bin/pip" check || true
cd "$ROOT"
"$VENV/bin/python" - <<'PYEOF'
import os
import re
import tempfile

import drjit as dr
import mitsuba as mi
import numpy as np

here = os.path.dirname(mi.__file__)
installed = [v for v in mi.variants() if any(f.startswith(v + ".cpython") for f in os.listdir(here))]
print("mitsuba", mi.__version__, "from", here, "variants installed:", installed)
tmp = tempfile.mkdtemp()
tex = np.random.default_rng(0).random((64, 64, 3)).astype(np.float32)
for variant in installed:
    if variant.startswith("cuda"):
        continue  # no GPU here
    if variant.startswith("llvm") and not dr.has_backend(dr.JitBackend.LLVM):
        print(f"{variant}: skipped (Dr.Jit finds no libLLVM)")
        continue
    mi.set_variant(variant)
    mi.Bitmap(tex).write(f"{tmp}/t.exr")
    xml = re.sub(r'(<string name="filename" value=")[^"]*(")', rf"\g<1>{tmp}/t.exr\g<2>", open("scenes/seed.xml").read())
    with open(f"{tmp}/seed.xml", "w") as f:
        f.write(xml)
    png = np.array(mi.render(mi.load_file("scenes/seed.xml", res=64), spp=16)).mean()
    scene = mi.load_file(f"{tmp}/seed.xml", res=64)
    params = mi.traverse(scene)
    params["shape.bsdf.reflectance.data"] = mi.TensorXf(tex * 0.5)
    params.update()
    exr = np.array(mi.render(scene, params, spp=16, seed=1)).mean()
    cbox = np.array(mi.render(mi.load_file("scenes/cbox.xml", res=64), spp=16)).mean()
    print(f"{variant}: seed (PNG) mean {png:.4f}, seed (EXR, texture halved) {exr:.4f}, cbox {cbox:.4f}")
    assert all(np.isfinite([png, exr, cbox])) and min(png, exr, cbox) > 0.01
plugins = sorted({m.group(1) for line in open("/proc/self/maps") for m in [re.search(r"/plugins/(\w+)\.so", line)] if m})
print("plugins loaded:", " ".join(plugins))
print("slim Mitsuba check: OK")
PYEOF
