//! GPU checks of the persistent device scene and its patches: a scene is uploaded once
//! and each parameter update patches exactly what changed, in stream order; a render
//! after an update gives the same bits as a fresh upload of the edited scene (every kind
//! of parameter, texture data from the host and from device memory); host reads wait
//! for their own render only; release fences stay bounded; imports of strided device
//! arrays convert like the host reader; memory stays flat over many update cycles; an
//! instanced scene's instance transform and group member material update in place.
//!
//! Policy as `gpu_depth.rs`: no GPU → `SKIP: ...` and pass; a GPU present and the
//! backend broken → FAIL; `HELIOGRAPH_REQUIRE_GPU=1` makes a missing GPU a failure.
#![cfg(feature = "cuda")]

mod common;

use std::sync::Arc;
use std::time::Instant;

use heliograph::backend::cuda::{CudaBackend, DeviceScene, ForeignArray};
use heliograph::desc::params::DeviceValues;
use heliograph::desc::{xml, ParamValue, TensorData, TensorValue};
use heliograph::render::RenderOptions;
use heliograph::scene::LoadedScene;
use heliograph::tensor::dlpack::{DLDataType, DLDevice, DLTensor};

use common::harness::{backend_or_skip, repo_root};

/// A scene with every kind of parameter the seed loop and its neighbours use: bitmap
/// data read by a diffuse and (another bitmap) by a plastic, constants, an area light,
/// an envmap, IORs, roughness, the camera and shape transforms (brute force: few
/// primitives).
const TEMPLATE: &str = r#"<scene version="3.0.0">
  <integrator type="path"><integer name="max_depth" value="3"/></integrator>
  <sensor type="perspective" id="cam">
    <float name="fov" value="{fov}"/>
    <transform name="to_world"><lookat origin="0, 1, 5" target="0, 0, 0" up="0, 1, 0"/></transform>
    <film type="hdrfilm"><integer name="width" value="64"/><integer name="height" value="48"/></film>
  </sensor>
  <emitter type="envmap" id="sky"><string name="filename" value="{sky}"/><float name="scale" value="{scale}"/></emitter>
  <texture type="bitmap" id="tex"><string name="filename" value="{tex}"/></texture>
  <texture type="bitmap" id="tex2"><string name="filename" value="{tex2}"/></texture>
  <bsdf type="diffuse" id="matte"><ref name="reflectance" id="tex"/></bsdf>
  <bsdf type="plastic" id="shiny"><ref name="diffuse_reflectance" id="tex2"/><float name="int_ior" value="{ior}"/></bsdf>
  <bsdf type="roughconductor" id="metal"><float name="alpha" value="{alpha}"/></bsdf>
  <shape type="rectangle" id="floor"><transform name="to_world"><scale value="3"/><rotate x="1" angle="-90"/><translate y="-1"/></transform><ref id="matte"/></shape>
  <shape type="sphere" id="ball"><transform name="to_world"><translate value="{ball}"/></transform><ref id="shiny"/></shape>
  <shape type="sphere"><point name="center" value="1, 0, 0"/><float name="radius" value="0.4"/><ref id="metal"/></shape>
  <shape type="disk" id="lamp"><transform name="to_world"><rotate x="1" angle="90"/><translate y="2"/></transform>
    <emitter type="area"><rgb name="radiance" value="{radiance}"/></emitter></shape>
</scene>"#;

struct Files {
    sky: [String; 2],
    tex: [String; 2],
}

fn files() -> Files {
    let dir = std::env::temp_dir().join(format!("hg-gpu-updates-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, w: u32, h: u32, seed: u32| -> String {
        let path = dir.join(name);
        let data: Vec<f32> = (0..w * h * 3)
            .map(|i| ((i * 7919 + seed * 104_729) % 1000) as f32 / 500.0)
            .collect();
        let buf = image::Rgb32FImage::from_raw(w, h, data).expect("size");
        image::DynamicImage::ImageRgb32F(buf).save(&path).unwrap();
        path.to_string_lossy().into_owned()
    };
    Files {
        sky: [write("sky0.exr", 32, 16, 1), write("sky1.exr", 32, 16, 2)],
        tex: [write("tex0.exr", 24, 16, 3), write("tex1.exr", 24, 16, 4)],
    }
}

fn defaults(f: &Files) -> Vec<(&'static str, String)> {
    vec![
        ("fov", "45".into()),
        ("sky", f.sky[0].clone()),
        ("scale", "1".into()),
        ("tex", f.tex[0].clone()),
        ("tex2", f.tex[1].clone()),
        ("ior", "1.5".into()),
        ("alpha", "0.1".into()),
        ("ball", "-1, 0, 0".into()),
        ("radiance", "4".into()),
    ]
}

/// (key, variable, new value).
fn edits(f: &Files) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("cam.x_fov", "fov", "30".into()),
        ("sky.data", "sky", f.sky[1].clone()),
        ("sky.scale", "scale", "2.5".into()),
        ("tex.data", "tex", f.tex[1].clone()),
        ("tex2.data", "tex2", f.tex[0].clone()),
        ("shiny.eta", "ior", "1.8".into()),
        ("metal.alpha.value", "alpha", "0.4".into()),
        ("ball.to_world", "ball", "-1, 0.5, 0.5".into()),
        ("lamp.emitter.radiance.value", "radiance", "7".into()),
    ]
}

fn load(vars: &[(&str, String)]) -> LoadedScene {
    let mut s = TEMPLATE.to_string();
    for (k, v) in vars {
        s = s.replace(&format!("{{{k}}}"), v);
    }
    LoadedScene::new(xml::load_string(&s, &[]).unwrap()).unwrap()
}

fn with(base: &[(&'static str, String)], var: &str, new: &str) -> Vec<(&'static str, String)> {
    let mut v = base.to_vec();
    v.iter_mut().find(|(k, _)| *k == var).unwrap().1 = new.to_string();
    v
}

const OPTS: RenderOptions = RenderOptions {
    spp: Some(8),
    seed: 5,
};

fn render(be: &CudaBackend, d: &DeviceScene) -> Vec<f32> {
    be.render_scene(d, &OPTS, 1)
        .and_then(|f| f.to_image())
        .unwrap_or_else(|e| panic!("{e}"))
        .data
}

fn fresh(be: &CudaBackend, s: &LoadedScene) -> Vec<f32> {
    let d = be.upload_scene(s.setup(), s.version()).unwrap();
    render(be, &d)
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Sets `key` and applies the update to the host scene and its device copy.
fn set(be: &CudaBackend, s: &mut LoadedScene, d: &mut DeviceScene, key: &str, v: ParamValue) {
    let mut p = s.traverse();
    p.set(key, v).unwrap_or_else(|e| panic!("{key}: {e}"));
    let changes = s
        .update(&p.staged())
        .unwrap_or_else(|e| panic!("{key}: {e}"));
    be.update_scene(d, s.setup(), &changes, s.version())
        .unwrap_or_else(|e| panic!("{key}: {e}"));
}

/// The same value in device memory (an imported texture).
fn on_device(be: &CudaBackend, v: &ParamValue) -> ParamValue {
    let ParamValue::Tensor(t) = v else {
        return v.clone();
    };
    let host = t.host_data().unwrap();
    let dev = be.upload_tensor(&host.data).unwrap();
    ParamValue::Tensor(TensorValue {
        shape: t.shape,
        data: TensorData::Device(Arc::new(dev) as Arc<dyn DeviceValues>),
    })
}

#[test]
fn updates_on_the_device_match_a_fresh_upload_bit_for_bit() {
    let Some(be) = backend_or_skip("device updates") else {
        return;
    };
    let f = files();
    let base = defaults(&f);
    let mut s = load(&base);
    let mut d = be.upload_scene(s.setup(), s.version()).unwrap();
    let original = render(&be, &d);
    let mut checked = 0;
    for device_source in [false, true] {
        for (key, var, new) in edits(&f) {
            let target = load(&with(&base, var, &new));
            let mut v = target.traverse().get(key).unwrap().clone();
            if device_source {
                if !matches!(v, ParamValue::Tensor(_)) {
                    continue;
                }
                v = on_device(&be, &v);
            }
            let back = s.traverse().get(key).unwrap().clone();
            let before = be.uploaded_bytes();
            set(&be, &mut s, &mut d, key, v);
            let sent = be.uploaded_bytes() - before;
            let updated = render(&be, &d);
            let want = fresh(&be, &target);
            let label = format!(
                "{key} (from the {})",
                if device_source { "device" } else { "host" }
            );
            assert!(
                same_bits(&updated, &want),
                "{label}: the patched scene renders differently"
            );
            assert!(
                !same_bits(&updated, &original),
                "{label}: the update changed nothing"
            );
            println!(
                "HG_GPU_STAT update key={key} device_source={device_source} uploaded_bytes={sent}"
            );
            if key == "tex.data" && device_source {
                assert_eq!(
                    sent, 0,
                    "a device texture under a diffuse moves no host bytes"
                );
            }
            set(&be, &mut s, &mut d, key, back);
            assert!(same_bits(&render(&be, &d), &original), "{label}: undo");
            checked += 1;
        }
    }
    println!("HG_GPU_STAT device_updates checked={checked}");
    assert_eq!(checked, edits(&f).len() + 3);
}

#[test]
fn a_texture_update_moves_only_its_texels() {
    let Some(be) = backend_or_skip("texture patch size") else {
        return;
    };
    let f = files();
    let base = defaults(&f);
    let mut s = load(&base);
    let mut d = be.upload_scene(s.setup(), 0).unwrap();
    let before = be.uploaded_bytes();
    render(&be, &d);
    render(&be, &d);
    assert_eq!(be.uploaded_bytes(), before, "a render uploads nothing");
    let v = load(&with(&base, "tex", &f.tex[1]))
        .traverse()
        .get("tex.data")
        .unwrap()
        .clone();
    set(&be, &mut s, &mut d, "tex.data", v);
    let texels = 24 * 16 * 3 * 4;
    assert_eq!(
        be.uploaded_bytes() - before,
        texels,
        "only the texels of the updated image travel (the diffuse record is unchanged)"
    );
}

#[test]
fn a_read_waits_only_for_its_own_render() {
    let Some(be) = backend_or_skip("read ordering") else {
        return;
    };
    let small = load(&defaults(&files()));
    let d_small = be.upload_scene(small.setup(), 0).unwrap();
    let cbox = xml::load_file(
        &repo_root().join("scenes/cbox.xml"),
        &[("res".into(), "1024".into())],
    )
    .unwrap();
    let big = LoadedScene::new(cbox).unwrap();
    let d_big = be.upload_scene(big.setup(), 0).unwrap();
    // warm up both modules
    render(&be, &d_small);
    let warm = RenderOptions {
        spp: Some(1),
        seed: 0,
    };
    be.render_scene(&d_big, &warm, 1)
        .unwrap()
        .to_image()
        .unwrap();
    let long = RenderOptions {
        spp: Some(512),
        seed: 1,
    };
    let a = be.render_scene(&d_small, &OPTS, 1).unwrap();
    let b = be.render_scene(&d_big, &long, 1).unwrap();
    let t = Instant::now();
    let img = a.to_image().unwrap();
    let read_ms = t.elapsed().as_secs_f64() * 1e3;
    let b_done_then = b.is_ready();
    let t = Instant::now();
    b.to_image().unwrap();
    let rest_ms = t.elapsed().as_secs_f64() * 1e3;
    println!(
        "HG_GPU_STAT read_ordering small_read_ms={read_ms:.3} long_render_still_running={} \
         long_render_rest_ms={rest_ms:.1}",
        !b_done_then
    );
    assert!(img.data.iter().all(|v| v.is_finite()));
    assert!(
        !b_done_then,
        "the read of the first film waited for the render queued after it"
    );
}

#[test]
fn fences_stay_bounded_and_strided_imports_convert_like_the_host() {
    let Some(be) = backend_or_skip("fences and imports") else {
        return;
    };
    let t = be.upload_tensor(&[1.0; 64]).unwrap();
    for _ in 0..100_000 {
        assert!(t.fence_stream(1));
    }
    assert_eq!(t.fence_count(), 1, "one fence per stream, re-recorded");
    // raw storage: 64 floats whose bytes also serve as float16 / int16 / float64 data
    let raw: Vec<f32> = (0..64).map(|i| (i as f32 - 20.0) * 0.37).collect();
    let bytes: Vec<u8> = raw.iter().flat_map(|v| v.to_le_bytes()).collect();
    let dev = be.upload_tensor(&raw).unwrap();
    let dtypes = [
        DLDataType::F32,
        DLDataType {
            code: 2,
            bits: 16,
            lanes: 1,
        },
        DLDataType {
            code: 2,
            bits: 64,
            lanes: 1,
        },
        DLDataType {
            code: 0,
            bits: 16,
            lanes: 1,
        },
        DLDataType {
            code: 1,
            bits: 8,
            lanes: 1,
        },
    ];
    let layouts: [(&[i64], &[i64], i64); 5] = [
        (&[4, 3], &[3, 1], 0),       // compact
        (&[4, 3], &[1, 4], 0),       // Fortran order
        (&[4, 3], &[-3, 1], 9),      // rows flipped
        (&[2, 3, 2], &[0, 2, 1], 0), // broadcast
        (&[3, 2], &[5, 2], 1),       // gapped, offset
    ];
    let mut checked = 0;
    for dt in dtypes {
        for (shape, strides, origin) in layouts {
            let elem = (dt.bits / 8) as u64;
            let a = ForeignArray {
                ptr: dev.device_ptr() + origin as u64 * elem,
                shape: shape.to_vec(),
                strides: strides.to_vec(),
                dtype: dt,
            };
            let got = be.import_device(&a).unwrap().to_host().unwrap();
            let (mut sh, mut st) = (shape.to_vec(), strides.to_vec());
            let host = DLTensor {
                data: bytes.as_ptr() as *mut std::ffi::c_void,
                device: DLDevice {
                    device_type: 1,
                    device_id: 0,
                },
                ndim: sh.len() as i32,
                dtype: dt,
                shape: sh.as_mut_ptr(),
                strides: st.as_mut_ptr(),
                byte_offset: origin as u64 * elem,
            };
            // SAFETY: every reached element lies in `bytes` (the layouts above)
            let want = unsafe { heliograph::tensor::read_host(&host) }
                .unwrap()
                .data;
            assert!(
                got.len() == want.len()
                    && got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan())),
                "{dt:?} {shape:?} {strides:?}: {got:?} vs {want:?}"
            );
            checked += 1;
        }
    }
    println!("HG_GPU_STAT imports checked={checked} fences=1");
}

#[test]
fn memory_stays_flat_over_update_render_read_cycles() {
    let Some(be) = backend_or_skip("memory soak") else {
        return;
    };
    let f = files();
    let base = defaults(&f);
    let mut s = load(&base);
    let mut d = be.upload_scene(s.setup(), 0).unwrap();
    let texs: Vec<ParamValue> = (0..2)
        .map(|i| {
            load(&with(&base, "tex", &f.tex[i]))
                .traverse()
                .get("tex.data")
                .unwrap()
                .clone()
        })
        .collect();
    let mut cycle = |i: usize| {
        let v = if i % 3 == 0 {
            on_device(&be, &texs[i % 2])
        } else {
            texs[i % 2].clone()
        };
        set(&be, &mut s, &mut d, "tex.data", v);
        let film = be.render_scene(&d, &OPTS, 1).unwrap();
        let t = film.into_tensor();
        if i % 2 == 0 {
            t.fence_stream(1);
        }
        t.to_host().unwrap();
    };
    for i in 0..200 {
        cycle(i);
    }
    let live0 = heliograph::backend::cuda::live_device_tensors();
    let held0 = be.held_bytes();
    let t0 = Instant::now();
    for i in 200..3200 {
        cycle(i);
    }
    let per_cycle_ms = t0.elapsed().as_secs_f64() * 1e3 / 3000.0;
    let live1 = heliograph::backend::cuda::live_device_tensors();
    let held1 = be.held_bytes();
    println!(
        "HG_GPU_STAT memory_soak cycles=3000 live={live0:?}->{live1:?} held={held0:?}->{held1:?} \
         ms_per_cycle={per_cycle_ms:.3}"
    );
    assert!(
        live1.0 <= live0.0 + 2,
        "device tensors accumulate: {live0:?} -> {live1:?}"
    );
    assert_eq!(held1.0, held0.0, "staging grew");
}

/// `scenes/instances.xml` at 64×64 with its first instance named `inst`, the first
/// instance's translation and the group's sphere colour as given.
fn instanced(translate: &str, colour: &str) -> LoadedScene {
    let text = std::fs::read_to_string(repo_root().join("scenes/instances.xml")).unwrap();
    let assets = repo_root().join("assets");
    let text = text
        .replacen(
            r#"<shape type="instance">"#,
            r#"<shape type="instance" id="inst">"#,
            1,
        )
        .replace(
            r#"value="-1.6, 0, 0.6""#,
            &format!(r#"value="{translate}""#),
        )
        .replace(r#"value="0.7, 0.1, 0.1""#, &format!(r#"value="{colour}""#))
        .replace("../assets", &assets.display().to_string());
    let defines = [("res".to_string(), "64".to_string())];
    LoadedScene::new(xml::load_string(&text, &defines).unwrap()).unwrap()
}

/// Instances on the device: moving an instance (a new top-level tree, the group's data
/// unchanged) and recolouring a group member (its BSDF record) render as a fresh upload.
#[test]
fn instance_and_group_member_updates_match_a_fresh_upload() {
    let Some(be) = backend_or_skip("instance updates") else {
        return;
    };
    let (at, red) = ("-1.6, 0, 0.6", "0.7, 0.1, 0.1");
    let mut s = instanced(at, red);
    let mut d = be.upload_scene(s.setup(), s.version()).unwrap();
    let original = render(&be, &d);
    for (key, target) in [
        ("inst.to_world", instanced("-1.2, 0.3, 0.4", red)),
        (
            "ornament.shape_1.bsdf.diffuse_reflectance.value",
            instanced(at, "0.1, 0.6, 0.2"),
        ),
    ] {
        let v = target.traverse().get(key).unwrap().clone();
        let back = s.traverse().get(key).unwrap().clone();
        set(&be, &mut s, &mut d, key, v);
        let updated = render(&be, &d);
        assert!(
            same_bits(&updated, &fresh(&be, &target)),
            "{key}: the patched scene renders differently"
        );
        assert!(
            !same_bits(&updated, &original),
            "{key}: the update changed nothing"
        );
        set(&be, &mut s, &mut d, key, back);
        assert!(same_bits(&render(&be, &d), &original), "{key}: undo");
    }
}
