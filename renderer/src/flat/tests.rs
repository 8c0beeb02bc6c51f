//! Tests of the flat layout: the CUDA header's layout list against `offset_of!`, and
//! Rust models of the kernels' formulas (renderer/kernels/*.cuh) evaluated on the
//! flattened records, which must reproduce the CPU's results bit for bit.

use super::*;
use crate::desc::xml;
use crate::films::record::{flatten_film, FILTER_BOX, FILTER_GAUSSIAN, FILTER_TENT};
use crate::integrators::tag::DEPTH as INTEGRATOR_DEPTH;
use crate::math::warp::square_to_uniform_disk_concentric;
use crate::math::{Ray, Vec2, Vec3};
use crate::rfilters::AnyFilter;
use crate::scene::build_scene;
use crate::sensors::camera::{CAMERA_ORTHOGRAPHIC, CAMERA_PERSPECTIVE, CAMERA_THINLENS};
use crate::shapes::record::FLAG_FLIP;
use crate::shapes::tag::{
    DISK as SHAPE_DISK, RECTANGLE as SHAPE_RECTANGLE, SPHERE as SHAPE_SPHERE,
};

/// `(record, field, offset)` entries of `HG_LAYOUT` in `flat.cuh`, in order.
fn header_layout() -> Vec<(String, String, usize)> {
    let src = include_str!("../../kernels/flat.cuh");
    let start = src
        .find("#define HG_LAYOUT(S, F)")
        .expect("HG_LAYOUT in flat.cuh");
    let body: String = src[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.trim_end().ends_with('\\') || l.contains("F(") || l.contains("S("))
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = Vec::new();
    let mut rest = body.as_str();
    while let Some(i) = rest.find(['S', 'F']) {
        let kind = &rest[i..i + 1];
        let tail = &rest[i + 1..];
        if !tail.starts_with('(') {
            rest = tail;
            continue;
        }
        let close = tail.find(')').expect("closing parenthesis");
        let args: Vec<&str> = tail[1..close].split(',').map(str::trim).collect();
        let entry = match (kind, args.as_slice()) {
            ("S", [rec, n]) => (rec.to_string(), "sizeof".to_string(), n.parse().unwrap()),
            ("F", [rec, f, n]) => (rec.to_string(), f.to_string(), n.parse().unwrap()),
            other => panic!("malformed HG_LAYOUT entry {other:?}"),
        };
        out.push(entry);
        rest = &tail[close + 1..];
    }
    out
}

#[test]
fn cuda_header_lists_the_same_layout_as_rust() {
    let header = header_layout();
    let rust: Vec<(String, String, usize)> = LAYOUT
        .iter()
        .map(|e| (e.record.to_string(), e.field.to_string(), e.offset))
        .collect();
    assert_eq!(header.len(), rust.len(), "entry count: {header:?}");
    for (h, r) in header.iter().zip(&rust) {
        assert_eq!(h, r, "flat.cuh vs flat::LAYOUT");
    }
    // every field of every record is listed: offsets + last field size add up to sizeof
    assert!(LAYOUT.iter().filter(|e| e.field == "sizeof").count() == 12);
}

fn scene_from(xml_text: &str) -> RenderSetup {
    let desc = xml::load_string(xml_text, &[]).unwrap();
    build_scene(&desc).unwrap()
}

const SHAPES: &str = r#"<scene version="3.0.0">
  <integrator type="depth"/>
  <sensor type="perspective">
    <float name="fov" value="50"/>
    <transform name="to_world"><lookat origin="1,2,6" target="0,0,0" up="0,1,0"/></transform>
    <film type="hdrfilm"><integer name="width" value="40"/><integer name="height" value="30"/>
      <rfilter type="box"/></film>
  </sensor>
  <shape type="sphere"><point name="center" x="0.5" y="0" z="0"/><float name="radius" value="0.7"/>
    <boolean name="flip_normals" value="true"/></shape>
  <shape type="rectangle"><transform name="to_world"><rotate x="1" angle="-70"/>
    <scale x="3" y="2" z="1"/><translate y="-1"/></transform></shape>
  <shape type="disk"><transform name="to_world"><rotate y="1" angle="30"/><translate x="-1.5" z="0.5"/></transform></shape>
  <shape type="cube"><transform name="to_world"><scale value="0.4"/><translate x="-0.5" y="0.8"/></transform></shape>
</scene>"#;

/// The kernels' `affine_point` on a flat column-major 3×4 map.
fn affine_point(m: &[f32; 12], p: Vec3) -> Vec3 {
    let c = |i: usize| Vec3::new(m[3 * i], m[3 * i + 1], m[3 * i + 2]);
    ((c(0) * p.x + c(1) * p.y) + c(2) * p.z) + c(3)
}

/// The kernels' `affine_vector`.
fn affine_vector(m: &[f32; 12], v: Vec3) -> Vec3 {
    let c = |i: usize| Vec3::new(m[3 * i], m[3 * i + 1], m[3 * i + 2]);
    (c(0) * v.x + c(1) * v.y) + c(2) * v.z
}

/// The kernels' `camera_ray` (camera.cuh).
fn camera_ray(cam: &FlatCamera, film: &FlatFilm, px: f32, py: f32, aperture: Vec2) -> Ray {
    let sx = 1.0 - 2.0 * px / film.width as f32;
    let sy = 1.0 - 2.0 * py / film.height as f32;
    let l = &cam.lin;
    let lin = |v: Vec3| {
        (Vec3::new(l[0], l[1], l[2]) * v.x + Vec3::new(l[3], l[4], l[5]) * v.y)
            + Vec3::new(l[6], l[7], l[8]) * v.z
    };
    let unit = |v: Vec3| v * (1.0 / v.dot(v).sqrt());
    let origin = Vec3::from(cam.origin);
    if cam.kind == CAMERA_ORTHOGRAPHIC {
        return Ray {
            o: origin + lin(Vec3::new(sx, sy / cam.aspect, cam.near_clip)),
            d: unit(lin(Vec3::Z)),
            tmax: cam.far_clip - cam.near_clip,
        };
    }
    let dl = Vec3::new(sx * cam.tan_half_x, sy * cam.tan_half_x / cam.aspect, 1.0);
    if cam.kind == CAMERA_THINLENS {
        let a = square_to_uniform_disk_concentric(aperture);
        let lens = Vec3::new(a.x * cam.aperture_radius, a.y * cam.aperture_radius, 0.0);
        let dir = unit(dl * cam.focus_distance - lens);
        let d = unit(lin(dir));
        let (t_near, t_far) = (cam.near_clip / dir.z, cam.far_clip / dir.z);
        return Ray {
            o: (origin + lin(lens)) + d * t_near,
            d,
            tmax: t_far - t_near,
        };
    }
    let inv_z = 1.0 / dl.dot(dl).sqrt();
    let d = unit(lin(dl));
    let (t_near, t_far) = (cam.near_clip / inv_z, cam.far_clip / inv_z);
    Ray {
        o: origin + d * t_near,
        d,
        tmax: t_far - t_near,
    }
}

/// The kernels' `intersect_planar` (geometry.cuh).
fn intersect_planar(s: &FlatShape, r: &Ray) -> Option<f32> {
    let o = affine_point(&s.to_local, r.o);
    let d = affine_vector(&s.to_local, r.d);
    let t = -o.z / d.z;
    let (x, y) = (o.x + t * d.x, o.y + t * d.y);
    let inside = if s.kind == SHAPE_RECTANGLE {
        x.abs() <= 1.0 && y.abs() <= 1.0
    } else {
        x * x + y * y <= 1.0
    };
    (t > crate::math::RAY_TMIN && t < r.tmax && inside).then_some(t)
}

#[test]
fn flat_camera_rays_equal_the_cpu_camera_bit_for_bit() {
    let sensors = [
        SHAPES.to_string(),
        SHAPES.replace(
            r#"<sensor type="perspective">"#,
            r#"<sensor type="thinlens"><float name="aperture_radius" value="0.3"/><float name="focus_distance" value="4"/>"#,
        ),
        SHAPES
            .replace(r#"<sensor type="perspective">"#, r#"<sensor type="orthographic">"#)
            .replace(r#"<float name="fov" value="50"/>"#, r#"<float name="near_clip" value="0.5"/>"#)
            .replace("<lookat", r#"<scale value="2.5"/><lookat"#),
    ];
    for (xml, kind) in
        sensors
            .iter()
            .zip([CAMERA_PERSPECTIVE, CAMERA_THINLENS, CAMERA_ORTHOGRAPHIC])
    {
        let setup = scene_from(xml);
        let flat = FlatScene::from_scene(&setup).unwrap();
        let (cam, film) = (&setup.sensor.camera, &setup.sensor.film);
        assert_eq!((cam.kind, flat.camera.kind), (kind, kind));
        let mut rng = crate::math::Pcg32::new(3, 1);
        for _ in 0..2000 {
            let pos = Vec2::new(rng.next_f32() * 40.0, rng.next_f32() * 30.0);
            let ap = Vec2::new(rng.next_f32(), rng.next_f32());
            let a = cam.sample_ray(pos, ap, film);
            let b = camera_ray(&flat.camera, &flat.film, pos.x, pos.y, ap);
            assert_eq!(
                (a.o, a.d, a.tmax),
                (b.o, b.d, b.tmax),
                "camera {kind} at {pos}"
            );
        }
    }
}

#[test]
fn flat_shapes_hold_what_the_cpu_records_hold() {
    let setup = scene_from(SHAPES);
    let flat = FlatScene::from_scene(&setup).unwrap();
    let kinds: Vec<u32> = flat.shapes.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [SHAPE_SPHERE, SHAPE_RECTANGLE, SHAPE_DISK, SHAPE_MESH]
    );
    let sp = &flat.shapes[0];
    assert_eq!(sp.flags, FLAG_FLIP);
    assert!((Vec3::from(sp.center) - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-6);
    assert!(
        (sp.radius - 0.7).abs() < 1e-6 && (sp.area - 4.0 * crate::math::PI * 0.49).abs() < 1e-4
    );
    let cube = &flat.shapes[3];
    assert_eq!((cube.first_tri, cube.tri_count), (0, 12));
    assert_eq!(flat.tris.len(), 12);
    assert_eq!(flat.positions.len(), setup.scene.geom.mesh.positions.len());
    assert!((cube.area - 6.0 * 0.8 * 0.8).abs() < 1e-4, "{}", cube.area);
    assert_eq!(flat.integrator.kind, INTEGRATOR_DEPTH);
    assert_eq!(
        (flat.film.width, flat.film.height, flat.film.filter),
        (40, 30, FILTER_BOX)
    );
    assert_eq!(flat.film.alpha, 1);
    let interior = setup
        .scene
        .bvh
        .nodes
        .iter()
        .filter(|n| !n.is_leaf())
        .count();
    assert_eq!(flat.nodes.len(), interior + 1);
    assert_eq!(flat.leaf_prims.len(), flat.prims.len());
    // an analytic shape's flattened maps invert each other
    let r = &flat.shapes[1];
    let p = Vec3::new(0.3, -0.2, 0.9);
    assert!((affine_point(&r.to_local, affine_point(&r.to_world, p)) - p).length() < 1e-5);
}

#[test]
fn flat_planar_intersection_equals_the_cpu_bit_for_bit() {
    let setup = scene_from(SHAPES);
    let flat = FlatScene::from_scene(&setup).unwrap();
    let mut rng = crate::math::Pcg32::new(9, 2);
    let mut hits = 0;
    for _ in 0..4000 {
        let pos = Vec2::new(rng.next_f32() * 40.0, rng.next_f32() * 30.0);
        let ray = setup
            .sensor
            .camera
            .sample_ray(pos, Vec2::ZERO, &setup.sensor.film);
        for prim in [1u32, 2] {
            let cpu = setup.scene.geom.intersect_prim(prim, &ray).map(|(t, _)| t);
            let gpu = intersect_planar(&flat.shapes[prim as usize], &ray);
            assert_eq!(cpu, gpu, "prim {prim} at {pos}");
            hits += usize::from(cpu.is_some());
        }
    }
    assert!(
        hits > 500,
        "the rays must actually hit the planar shapes ({hits})"
    );
}

#[test]
fn records_view_as_bytes_without_padding() {
    let shapes = [FlatShape::default(); 3];
    assert_eq!(as_bytes(&shapes).len(), 480);
    let v = [1.0f32, 2.0];
    assert_eq!(as_bytes(&v), &[0, 0, 128, 63, 0, 0, 0, 64]);
}

/// Every scene of the repository's `scenes/` at a small resolution.
fn repo_scenes() -> Vec<(String, RenderSetup)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    v.sort();
    v.iter()
        .map(|p| {
            let desc = xml::load_file(p, &[("res".into(), "16".into())]).unwrap();
            (p.display().to_string(), build_scene(&desc).unwrap())
        })
        .collect()
}

#[test]
fn materials_textures_and_emitters_round_trip_through_their_twins() {
    use crate::emitters::AnyEmitter;
    use crate::emitters::{envmap::EnvmapRecord, registry::RecordCtx as EmitterRecordCtx};
    use crate::plugin::record::read_record;
    use crate::textures::{bitmap::BitmapRecord, registry::RecordCtx, AnyTexture};
    let mut kinds = std::collections::BTreeSet::new();
    for (name, setup) in repo_scenes() {
        let flat = FlatScene::from_scene(&setup).unwrap();
        assert_eq!(flat.bsdfs.len(), setup.scene.bsdfs.len(), "{name}");
        // each BSDF's own record, where its RecordRef says
        for (f, b) in flat.bsdfs.iter().zip(setup.scene.bsdfs.iter()) {
            let words = b.record_words(&flat.bsdfs);
            let at = f.offset as usize;
            assert_eq!(f.kind, b.tag(), "{name}");
            assert_eq!(flat.bsdf_data[at..at + words.len()], words[..], "{name}");
            kinds.insert(format!("bsdf {}", f.kind));
        }
        // each texture's own record, where its RecordRef says
        assert_eq!(
            flat.textures.len(),
            setup.scene.textures.records.len(),
            "{name}"
        );
        let at = RecordCtx::of(&setup.scene.textures, &flat.image_offsets);
        for (f, t) in flat.textures.iter().zip(&setup.scene.textures.records) {
            let words = t.record_words(&at);
            let o = f.offset as usize;
            assert_eq!(f.kind, t.tag(), "{name}");
            assert_eq!(flat.tex_data[o..o + words.len()], words[..], "{name}");
            match t {
                // a constant's record is its colour; a bitmap's points at its own texels
                AnyTexture::Constant(c) => {
                    assert_eq!(read_record(&flat.tex_data[o..]), Some(*c), "{name}")
                }
                AnyTexture::Bitmap(b) => {
                    let r: BitmapRecord = read_record(&flat.tex_data[o..]).unwrap();
                    let img = &setup.scene.textures.images[b.image as usize].data;
                    let texels = &flat.texels[r.offset as usize..][..img.len()];
                    assert_eq!(texels, &img[..], "{name}");
                    assert_eq!(
                        (r.width, r.height, r.channels),
                        (b.width, b.height, b.channels)
                    );
                }
                _ => {}
            }
            kinds.insert(format!("texture {}", f.kind));
        }
        // each emitter's own record, where its RecordRef says; an environment map's
        // refers to its texels and its distribution in the flat arrays
        assert_eq!(flat.emitters.len(), setup.scene.emitters.len(), "{name}");
        let ctx = EmitterRecordCtx {
            image_offsets: &flat.image_offsets,
            dist2d: &flat.dist2d,
        };
        for (f, e) in flat.emitters.iter().zip(setup.scene.emitters.iter()) {
            let words = e.record_words(&ctx);
            let at = f.offset as usize;
            assert_eq!(f.kind, e.tag(), "{name}");
            assert_eq!(flat.emitter_data[at..at + words.len()], words[..], "{name}");
            if let AnyEmitter::EnvmapEmitter(m) = e {
                let r: EnvmapRecord = read_record(&flat.emitter_data[at..]).unwrap();
                let d = flat.dist2d[m.dist as usize];
                assert_eq!(
                    (r.dist_rows, r.dist_h, r.dist_marginal),
                    (d.rows, d.h, d.marginal)
                );
                let img = &setup.scene.textures.images[m.image as usize].data;
                let o = r.offset as usize;
                assert_eq!(flat.texels[o..o + img.len()], img[..], "{name}");
                assert_eq!(
                    (r.to_world, r.to_local, r.scale),
                    (m.to_world, m.to_local, m.scale)
                );
                assert_eq!((r.width, r.height), (m.width, m.height));
            }
            kinds.insert(format!("emitter {}", f.kind));
        }
        let images = &setup.scene.textures.images;
        assert_eq!(flat.image_offsets.len(), images.len());
        for (o, img) in flat.image_offsets.iter().zip(images) {
            let o = *o as usize;
            assert_eq!(flat.texels[o..o + img.data.len()], img.data[..], "{name}");
        }
        let total: usize = images.iter().map(|i| i.data.len()).sum();
        assert_eq!(flat.texels.len(), total);
        assert_eq!(flat.env_emitters, setup.scene.env_emitters);
    }
    // the scenes exercise most kinds: diffuse, roughconductor, dielectric, plastic,
    // roughplastic; constant, bitmap, checkerboard; area, constant, envmap
    for k in [
        "bsdf 0",
        "bsdf 2",
        "bsdf 3",
        "bsdf 5",
        "bsdf 6",
        "texture 1",
        "texture 2",
    ] {
        assert!(kinds.contains(k), "{k} not covered: {kinds:?}");
    }
    for k in ["emitter 0", "emitter 3", "emitter 4"] {
        assert!(kinds.contains(k), "{k} not covered: {kinds:?}");
    }
}

#[test]
fn spot_and_projector_round_trip_through_their_twins() {
    use crate::emitters::tag::{PROJECTOR, SPOT};
    use crate::emitters::AnyEmitter;
    use crate::plugin::record::read_record;
    let tex = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/textures/seed_texture.png");
    let bitmap = |name: &str| {
        format!(
            r#"<texture type="bitmap" name="{name}"><string name="filename" value="{}"/></texture>"#,
            tex.display()
        )
    };
    let xml = format!(
        r#"<scene version="3.0.0"><shape type="sphere"/>
        <emitter type="spot"><float name="cutoff_angle" value="35"/>{}
            <transform name="to_world"><lookat origin="0,3,0" target="0,0,0" up="0,0,1"/></transform></emitter>
        <emitter type="spot"><rgb name="intensity" value="2, 3, 4"/></emitter>
        <emitter type="projector"><float name="fov" value="50"/><float name="scale" value="2"/>{}</emitter>
        <emitter type="projector"/></scene>"#,
        bitmap("texture"),
        bitmap("irradiance")
    );
    let setup = build_scene(&xml::load_string(&xml, &[]).unwrap()).unwrap();
    let flat = FlatScene::from_scene(&setup).unwrap();
    let kinds: Vec<u32> = flat.emitters.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, [SPOT, SPOT, PROJECTOR, PROJECTOR]);
    // their records are the plugins' own, every named field as built
    for (f, e) in flat.emitters.iter().zip(setup.scene.emitters.iter()) {
        let words = &flat.emitter_data[f.offset as usize..];
        match e {
            AnyEmitter::SpotEmitter(s) => assert_eq!(read_record(words), Some(*s)),
            AnyEmitter::ProjectorEmitter(p) => assert_eq!(read_record(words), Some(*p)),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn distributions_flatten_to_their_func_and_cdf() {
    let dist = |flat: &FlatScene, i: u32| {
        let d = flat.dist1d[i as usize];
        let (o, n) = (d.offset as usize, d.n as usize);
        (
            flat.dist_data[o..o + n].to_vec(),
            flat.dist_data[o + n..o + 2 * n + 1].to_vec(),
            d.sum,
        )
    };
    let mut envmaps = 0;
    for (name, setup) in repo_scenes() {
        let flat = FlatScene::from_scene(&setup).unwrap();
        assert_eq!(flat.dist2d.len(), setup.scene.dists2d.len(), "{name}");
        for (f, d) in flat.dist2d.iter().zip(setup.scene.dists2d.iter()) {
            assert_eq!(f.h as usize, d.rows.len());
            for (r, row) in d.rows.iter().enumerate() {
                assert_eq!(
                    dist(&flat, f.rows + r as u32),
                    (row.func.clone(), row.cdf().to_vec(), row.sum)
                );
            }
            let m = &d.marginal;
            assert_eq!(
                dist(&flat, f.marginal),
                (m.func.clone(), m.cdf().to_vec(), m.sum)
            );
            envmaps += 1;
        }
        // a shapegroup's meshes (the records after the scene's own) emit nothing: no
        // distribution
        let own = setup.scene.geom.shape_count();
        for (i, (s, d)) in flat
            .shapes
            .iter()
            .zip(&setup.scene.geom.area_dists)
            .enumerate()
        {
            if s.kind == SHAPE_MESH && i < own {
                assert_eq!(
                    dist(&flat, s.area_dist),
                    (d.func.clone(), d.cdf().to_vec(), d.sum)
                );
            } else {
                assert_eq!(s.area_dist, u32::MAX);
            }
        }
    }
    assert!(envmaps > 0, "showcase.xml has an envmap");
}

#[test]
fn content_hash_sees_every_bit_and_the_length() {
    let data: Vec<u8> = (0..37u32).map(|i| (i * 97 + 13) as u8).collect();
    let h = super::content_hash(&data);
    assert_eq!(h, super::content_hash(&data.clone()), "deterministic");
    let mut seen = std::collections::HashSet::new();
    seen.insert(h);
    for byte in 0..data.len() {
        for bit in 0..8 {
            let mut d = data.clone();
            d[byte] ^= 1 << bit;
            assert!(
                seen.insert(super::content_hash(&d)),
                "flip {byte}.{bit} collides"
            );
        }
    }
    // zero padding and truncation change the hash (the length is hashed)
    for n in 0..data.len() {
        assert!(seen.insert(super::content_hash(&data[..n])), "prefix {n}");
    }
    let mut padded = data.clone();
    padded.push(0);
    assert!(seen.insert(super::content_hash(&padded)));
}

#[test]
fn the_film_carries_the_constant_of_its_sample_placement() {
    // kernels/film.cuh: the tent inverts its CDF in units of 1 / radius; the gaussian's
    // weight per axis is 1 - exp(filter_k + z^2 / 2) with filter_k = a r^2, a = -1 / (2 s^2)
    let film = |rfilter| {
        flatten_film(
            &crate::films::Film {
                rfilter,
                ..Default::default()
            },
            &Default::default(),
        )
    };
    let f = film(AnyFilter::Box { radius: 1.0 });
    assert_eq!(
        (f.filter, f.filter_radius, f.filter_k),
        (FILTER_BOX, 1.0, 0.0)
    );
    let f = film(AnyFilter::Tent { radius: 1.5 });
    assert_eq!((f.filter, f.filter_radius), (FILTER_TENT, 1.5));
    assert!((f.filter_k - 1.0 / 1.5).abs() < 1e-7);
    for stddev in [0.5f32, 0.8, 3.75] {
        let g = AnyFilter::Gaussian {
            stddev,
            radius: 4.0 * stddev,
        };
        let f = film(g);
        assert_eq!((f.filter, f.filter_stddev), (FILTER_GAUSSIAN, stddev));
        assert_eq!(f.filter_k, -8.0, "a r^2 at r = 4 stddev");
        // f / exp(a x^2) is the weight's factor at every offset
        let a = -0.5 / (stddev as f64 * stddev as f64);
        for x in [0.0f32, 0.3, 1.0, 2.0 * stddev] {
            let w = 1.0 - (f.filter_k as f64 - a * (x as f64).powi(2)).exp();
            let want = g.eval(x) as f64 / (a * (x as f64).powi(2)).exp();
            assert!(
                (w - want).abs() < 1e-6,
                "stddev {stddev} at {x}: {w} vs {want}"
            );
        }
    }
}
