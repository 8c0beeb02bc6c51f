"""Fuzzes load_dict (python/src/dict.rs) and what follows a load: traverse, parameter
updates and tiny renders.

A case is a scene dict: a seed from dict_seeds.py with a few random edits, or one
generated from scratch (random plugin types, parameter names and values: NaN,
infinities, huge and negative numbers, wrong types, odd arrays, broken transforms,
colours and bitmaps, refs, dicts containing themselves, deep nesting). Case ``i`` of
seed ``s`` is a pure function of ``(s, i)``.

The cases run in a child interpreter under a memory limit (RLIMIT_AS) that this
script supervises: heliograph's exceptions, TypeError and ValueError are results;
any other exception, a dead child (abort, segfault, out of memory) or a case running
past the time limit is a finding.

    python tests/fuzz/fuzz_dict.py [--execs N] [--seconds S] [--seed S]
        [--case-seconds T] [--mem-mib M]
    python tests/fuzz/fuzz_dict.py --seed S --case I      # run case I and show it

A reference cycle between objects is bad input like any other: the case must end in
a clean error. The summary counts those errors apart from the rest. Exit status 1
when anything was found.
"""

import os
import random
import sys

import supervision

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

# Every registered plugin of each category, from the package itself, so a new plugin is
# fuzzed without editing this file; roughplastic tabulates its albedo when built (about
# 0.4 s) and would take most of the fuzzer's time.
# Read in the worker, after its memory limit is set (as heliograph itself is imported).
_TYPES = {}


def types():
    """{category: plugin names} of the installed package."""
    if not _TYPES:
        from heliograph import _native

        for cat, names in _native._plugins():
            _TYPES[cat] = [n for n in names if n != "roughplastic"]
    return _TYPES
NAMES = [
    "alpha", "alpha_u", "alpha_v", "beam_width", "bitmap", "bsdf", "bsdf_samples", "center", "color0",
    "color1", "cutoff_angle",
    "crop_height", "crop_offset_x", "crop_offset_y", "crop_width", "data", "diffuse_reflectance",
    "direction", "distribution", "emitter", "emitter_samples", "eta", "ext_ior", "face_normals", "far_clip",
    "filename", "film", "filter_type", "flip_normals", "focal_length", "focus_distance", "fov", "fov_axis",
    "height", "hide_emitters", "int_ior", "intensity", "irradiance", "k", "material", "max_depth",
    "near_clip", "pixel_format", "position", "radiance", "radius", "raw", "reflectance", "rfilter",
    "rr_depth", "sample_count", "sampler", "scale", "seed", "specular_reflectance", "stddev", "to_uv",
    "target", "texture", "to_world", "width", "wrap_mode", "value", "base_color", "roughness",
    "metallic", "spec_trans", "diff_trans", "clearcoat", "specular",
]
WEIRD_KEYS = ["id", "type", "a.b", "_arg_0", "", 3, None, ("t",)]
STRINGS = [
    "", "rgb", "rgba", "x", "y", "ggx", "beckmann", "Au", "Al", "water", "air", "bk7", "nearest",
    "bilinear", "repeat", "mirror", "clamp", "float16", "float32", "nope", "é", "\x00", "a" * 10_000,
    os.path.join(ROOT, "assets", "textures", "seed_texture.png"),
    os.path.join(ROOT, "assets", "envmaps", "sky.exr"),
    os.path.join(ROOT, "assets", "meshes", "icosphere.ply"),
    os.path.join(ROOT, "renderer", "tests", "fixtures", "meshes", "quad.obj"),
    "/dev/zero", "/", "missing.png",
]
FLOATS = [0.0, -0.0, 0.5, 1.0, -1.0, 2.0, 1e-45, 1e-320, 1e30, 3.4e38, 3.5e38, 1e300, -1e300,
          float("nan"), float("inf"), float("-inf")]
INTS = [0, 1, -1, 2, 3, 4, 8, 16, 32768, 32769, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**63,
        -(2**63), 2**70, -(2**70)]


class Weird:
    """An object whose attribute lookups fail or lie."""

    def __getattr__(self, name):
        if name.startswith("__heliograph"):
            raise RuntimeError("attribute lookups of this object fail")
        raise AttributeError(name)


def rand_array(rng, np):
    rank = rng.choice([0, 1, 1, 2, 3, 3, 3, 4])
    shape = tuple(rng.choice([0, 1, 2, 3, 4, 5, 8]) for _ in range(rank))
    if rng.random() < 0.05 and rank >= 2:
        shape = (rng.choice([64, 256]), rng.choice([64, 256])) + shape[2:]
    dtype = rng.choice(["float32", "float64", "float16", "uint8", "int32", "bool", "complex64"])
    a = np.asarray(np.random.default_rng(rng.getrandbits(32)).random(shape) * rng.choice([1, 255, 1e30]))
    if rng.random() < 0.2 and a.size:
        a.flat[rng.randrange(a.size)] = rng.choice([float("nan"), float("inf"), -1.0])
    with np.errstate(all="ignore"):
        a = a.astype(dtype)
    if rng.random() < 0.1 and a.ndim >= 2:
        a = a[..., ::-1] if rng.random() < 0.5 else np.swapaxes(a, 0, 1)
    return a


def rand_transform(rng, hg):
    t = hg.ScalarTransform4f
    ops = [lambda: t.translate([rng.choice(FLOATS[:10])] * 3), lambda: t.scale([rng.choice([1, 2, 1e-20, 1e30])] * 3),
           lambda: t.rotate([0, 1, 0], rng.choice([0, 30, 1e30])),
           lambda: t.look_at([0, 0, 5], [0, 0, 0], [0, 1, 0])]
    try:
        m = rng.choice(ops)()
        if rng.random() < 0.3:
            m = m @ rng.choice(ops)()
        if rng.random() < 0.15:
            m.matrix[rng.randrange(4), rng.randrange(4)] = rng.choice(FLOATS)
        return m
    except (ValueError, TypeError, ArithmeticError):
        return t()


def rand_key(rng):
    """A parameter name; rarely one that load_dict must refuse or treat specially."""
    return rng.choice(WEIRD_KEYS) if rng.random() < 0.03 else rng.choice(NAMES)


def rand_value(rng, hg, np, ids, depth):
    k = rng.random()
    if k < 0.15:
        return rng.choice(FLOATS) if rng.random() < 0.7 else rng.uniform(-10, 10)
    if k < 0.27:
        return rng.choice(INTS) if rng.random() < 0.6 else rng.randrange(-5, 100)
    if k < 0.32:
        return rng.random() < 0.5
    if k < 0.42:
        return rng.choice(STRINGS)
    if k < 0.52:
        return [rand_scalar(rng) for _ in range(rng.choice([0, 1, 2, 3, 3, 3, 4, 16]))]
    if k < 0.58:
        return rand_array(rng, np)
    if k < 0.64:
        return rand_transform(rng, hg)
    if k < 0.68:
        try:
            return hg.ScalarColor3f(*[rng.choice(FLOATS[:12]) for _ in range(3)])
        except (ValueError, TypeError):
            return hg.ScalarColor3f(0.5)
    if k < 0.72:
        try:
            return hg.Bitmap(rand_array(rng, np))
        except (hg.SceneError, ValueError, TypeError):
            return None
    if k < 0.80:
        return {"type": rng.choice(["rgb", "spectrum"]), "value": rand_value(rng, hg, np, ids, depth + 1)}
    if k < 0.83 and ids:
        return {"type": "ref", "id": rng.choice(ids)}
    if k < 0.88:
        return {"type": "ref", "id": rng.choice(["missing", "", "a.b"])}
    if k < 0.90:
        return rng.choice([None, b"bytes", object(), Weird(), (1, 2, 3), {1, 2}, 1 + 2j])
    if depth < 6:
        return rand_object(rng, hg, np, ids, depth + 1)
    return 0.5


def rand_scalar(rng):
    return rng.choice([rng.choice(FLOATS), rng.choice(INTS[:6]), rng.uniform(-2, 2), "x", None, [1, 2]])


def rand_object(rng, hg, np, ids, depth, category=None):
    category = category or rng.choice(list(types()))
    obj = {"type": rng.choice(types()[category]) if rng.random() < 0.95 else rng.choice(["nope", "scene", "", 7])}
    for _ in range(rng.choice([0, 1, 2, 3, 4, 6])):
        obj[rand_key(rng)] = rand_value(rng, hg, np, ids, depth)
    if category == "sensor" and rng.random() < 0.8:
        obj["film"] = {"type": "hdrfilm", "width": rng.choice([1, 2, 4, 8, 0, 40000]),
                       "height": rng.choice([1, 3, 8, -1, 32768])}
    return obj


def mutate(rng, hg, np, d, ids, depth=0):
    """A few random edits of dict ``d`` and the dicts inside it, in place."""
    keys = [k for k in d if k != "type" or rng.random() < 0.02]
    for _ in range(rng.choice([1, 1, 2, 3])):
        k = rng.random()
        if keys and k < 0.55:
            d[rng.choice(keys)] = rand_value(rng, hg, np, ids, depth)
        elif keys and k < 0.62:
            d.pop(rng.choice(keys), None)
        elif k < 0.72:
            d[rand_key(rng)] = rand_value(rng, hg, np, ids, depth)
        elif k < 0.75:
            d[rng.choice(NAMES)] = d  # a dict containing itself
        elif k < 0.78 and keys:
            inner = d.get(rng.choice(keys))
            if isinstance(inner, dict):
                inner[rng.choice(NAMES)] = d  # an outer dict inside an inner one
        elif k < 0.8:
            deep = cur = {"type": "diffuse"}
            for _ in range(rng.choice([10, 127, 128, 129, 500])):
                cur["reflectance"] = {"type": "checkerboard"}
                cur = cur["reflectance"]
            d[rng.choice(NAMES)] = deep
    for v in list(d.values()):
        if isinstance(v, dict) and v is not d and depth < 8 and rng.random() < 0.3:
            mutate(rng, hg, np, v, ids, depth + 1)


def make_case(seed, i):
    """Case ``i`` of run ``seed``: a scene dict."""
    import numpy as np

    import dict_seeds
    import heliograph as hg

    rng = random.Random(f"{seed}:{i}")
    np.random.seed(rng.getrandbits(32))
    if rng.random() < 0.6:
        d = rng.choice(dict_seeds.seeds())
        ids = [k for k in d if k != "type"]
        mutate(rng, hg, np, d, ids)
        return rng, d
    d = {"type": "scene"}
    ids = []
    for n in range(rng.choice([1, 2, 3, 4, 6])):
        key = rng.choice(["sensor", "integrator", "emitter", "shape", f"obj{n}", f"obj{n}"])
        key = rand_key(rng) if rng.random() < 0.05 else key
        cat = rng.choice(list(types()))
        d[key] = rand_object(rng, hg, np, list(ids), 1, "sensor" if key == "sensor" else cat)
        if isinstance(key, str):
            ids.append(key)
    return rng, d


# How the builder's error for a reference cycle between objects begins (followed by
# the objects' names: "reference cycle a -> b -> a: ..."); a dict containing itself
# is refused with "reference cycle: ..." instead, and counts among the other errors.
CYCLE_ERROR = "reference cycle "


def run_case(seed, i):
    """Loads, edits and renders case ``i``; returns 'o' (built), 'c' (a clean error
    for a reference cycle between objects) or 'e' (any other clean error) and lets
    anything else propagate."""
    import numpy as np

    import heliograph as hg

    results = (hg.SceneError, hg.SceneFileError, hg.RenderError, hg.VariantError, TypeError, ValueError)
    rng, d = make_case(seed, i)
    try:
        scene = hg.load_dict(d)
    except results as e:
        return "c" if CYCLE_ERROR in str(e) else "e"
    params = hg.traverse(scene)
    keys = list(params.keys())
    for _ in range(rng.choice([0, 0, 1, 2])):
        if not keys:
            break
        key = rng.choice(keys)
        try:
            current = np.asarray(params[key])
            with np.errstate(all="ignore"):
                params[key] = rng.choice([rand_value(rng, hg, np, [], 5), current * rng.choice(FLOATS)])
        except results:
            pass
    try:
        params.update()
        spp = rng.choice([1, 1, 2, 2**32 - 1])
        img = hg.render(scene, params, spp=spp)
        if spp <= 2 and img.shape[0] * img.shape[1] <= 4096 and rng.random() < 0.9:
            np.asarray(img)  # waits; a huge spp or film is dropped unread, which cancels it
    except results:
        return "e"
    return "o"


def runner(seed):
    """The worker's case function (after the memory limit: imports heliograph)."""
    sys.path.insert(0, HERE)
    import heliograph as hg

    hg.set_progress(False)
    return lambda i: (run_case(seed, i), 0)


def main():
    args = supervision.parse_args(__doc__)
    if args.worker:
        supervision.serve(args.worker[0], args.worker[1], args.mem_mib, lambda: runner(args.seed))
        return 0
    if args.case is not None:
        sys.path.insert(0, HERE)
        _, d = make_case(args.seed, args.case)
        print(repr(d)[:5000])
        print(run_case(args.seed, args.case))
        return 0
    counts, _, findings, nxt, secs = supervision.supervise(
        "fuzz_dict", __file__, args, ["o", "e", "c"], "an exception other than a result (see the worker log)")
    print(f"fuzz_dict: seed {args.seed} executions {nxt} in {secs:.0f} s ({nxt / secs:.0f}/s): "
          f"{counts['o']} built, {counts['e'] + counts['c']} errors ({counts['c']} of them reference cycles), "
          f"{len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
