"""Embree's ray rates on the mesh of `renderer/examples/bench_rays.rs`, for comparison.

A program, not a test. Needs `pip install embreex` (Python binding of Intel Embree 4):

    target/pyenv/bin/python tests/bench_rays_embree.py
    cargo run --release -p heliograph --example bench_rays -- --threads 1

Same mesh (1,000,000-triangle displaced sphere), same camera and ray kinds as
bench_rays: primary (closest hit), shadow towards a sphere light (occlusion, finite
tmax) and cosine-distributed diffuse rays from the primary hits (closest hit). The
binding traces one ray at a time (rtcIntersect1 / rtcOccluded1) on one thread, so
compare with `bench_rays --threads 1`. Best of 3, wall time, Mrays/s.
"""

import time

import numpy as np
from embreex import mesh_construction, rtcore_scene

RINGS, SEGMENTS, RES = 500, 1000, 1024


def bumpy_sphere():
    j = np.arange(RINGS + 1, dtype=np.float32)
    i = np.arange(SEGMENTS, dtype=np.float32)
    theta = (np.pi * (j + 0.5) / (RINGS + 1)).astype(np.float32)[:, None]
    phi = (2 * np.pi * i / SEGMENTS).astype(np.float32)[None, :]
    r = 1.0 + 0.04 * np.sin(23.0 * theta) * np.cos(31.0 * phi)
    v = np.stack([r * np.sin(theta) * np.cos(phi), r * np.cos(theta) * np.ones_like(phi),
                  r * np.sin(theta) * np.sin(phi)], -1).reshape(-1, 3).astype(np.float32)
    jj, ii = np.meshgrid(np.arange(RINGS), np.arange(SEGMENTS), indexing="ij")
    a = (jj * SEGMENTS + ii).ravel()
    b = (jj * SEGMENTS + (ii + 1) % SEGMENTS).ravel()
    c, d = a + SEGMENTS, b + SEGMENTS
    return v, np.concatenate([np.stack([a, b, c], 1), np.stack([b, d, c], 1)]).astype(np.int32)


def primary():
    o = np.array([0.0, 0.8, 3.0], np.float32)
    fwd = -o / np.linalg.norm(o)
    right = np.cross(fwd, [0, 1, 0])
    right /= np.linalg.norm(right)
    up = np.cross(right, fwd)
    h = np.tan(np.radians(22.5))
    x, y = np.meshgrid(np.arange(RES) + 0.5, np.arange(RES) + 0.5)
    u, v = (2 * x / RES - 1).ravel(), (1 - 2 * y / RES).ravel()
    d = fwd + u[:, None] * h * right + v[:, None] * h * up
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    return np.tile(o, (len(d), 1)).astype(np.float32), d.astype(np.float32)


def best(f):
    ts = []
    for _ in range(3):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    return min(ts), out


def main():
    v, f = bumpy_sphere()
    t0 = time.perf_counter()
    scene = rtcore_scene.EmbreeScene()
    mesh_construction.TriangleMesh(scene, v, f)
    o, d = primary()
    scene.run(o[:16], d[:16])  # builds the BVH
    print(f"embree: {len(f)} triangles, build {time.perf_counter() - t0:.2f} s")
    t, res = best(lambda: scene.run(o, d, output=1))
    hit = res["geomID"] >= 0
    rows = [("primary", len(o), t, int(hit.sum()))]
    # secondary rays from the hits, as bench_rays builds them
    rng = np.random.default_rng(7)
    tt = res["tfar"][hit][:, None]
    n = res["Ng"][hit]
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where((n * d[hit]).sum(1, keepdims=True) < 0, n, -n)
    p = (o[hit] + d[hit] * tt + n * 1e-4).astype(np.float32)
    z = rng.normal(size=(len(p), 3))
    to = np.array([2.0, 3.0, 2.0]) + 0.5 * z / np.linalg.norm(z, axis=1, keepdims=True) - p
    dist = np.linalg.norm(to, axis=1)
    sd = (to / dist[:, None]).astype(np.float32)
    t, occ = best(lambda: scene.run(p, sd, dists=(dist * (1 - 1e-4)).astype(np.float32),
                                    query="OCCLUDED"))
    rows.append(("shadow", len(p), t, int((np.asarray(occ) >= 0).sum())))
    # cosine-distributed directions about n (Malley: disk sample lifted to the hemisphere)
    u1, u2 = rng.random(len(p)), rng.random(len(p))
    r, ph = np.sqrt(u1), 2 * np.pi * u2
    lx, ly, lz = r * np.cos(ph), r * np.sin(ph), np.sqrt(np.maximum(0, 1 - u1))
    a = np.where(np.abs(n[:, :1]) > 0.9, [[0, 1, 0]], [[1, 0, 0]])
    s = np.cross(a, n)
    s /= np.linalg.norm(s, axis=1, keepdims=True)
    tv = np.cross(n, s)
    dd = (lx[:, None] * s + ly[:, None] * tv + lz[:, None] * n).astype(np.float32)
    t, ids = best(lambda: scene.run(p, dd))
    rows.append(("diffuse", len(p), t, int((np.asarray(ids) >= 0).sum())))
    print(f"{'rays':<10} {'count':>9} {'Mrays/s':>10} {'hits':>9}")
    for name, count, t, hits in rows:
        print(f"{name:<10} {count:>9d} {count / t / 1e6:>10.2f} {hits:>9d}")


if __name__ == "__main__":
    main()
