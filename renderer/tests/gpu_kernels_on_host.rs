//! The CUDA kernels compiled as C++ and run on the CPU (no GPU needed): the same
//! assembled source NVRTC gets (`backend::cuda::kernels::assemble`), plus a small shim
//! (`tests/gpu/host_shim.h`, `tests/gpu/host_main.cpp`) that emulates the thread grid.
//!
//! Checks, on every scene of `scenes/` at 64×64 with the depth integrator and a
//! one-pixel box filter: the kernel's film equals the CPU backend's (bit for bit
//! expected: both evaluate the same float operations in the same order), and the
//! layout table equals `flat::LAYOUT`. This catches syntax, layout and logic errors
//! in the kernels before the GPU machine is involved; what it cannot check (NVRTC's
//! dialect, device code generation) the GPU tests do (`gpu_depth.rs`).
//!
//! Skips with a message when no C++ compiler (`$CXX`, else `c++`) is available.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::harness::{build_host, read_f32s, repo_root};
use heliograph::backend::cpu;
use heliograph::backend::cuda::kernels;
use heliograph::desc::xml;
use heliograph::flat::{as_bytes, FlatScene, LAYOUT};
use heliograph::integrators::{AnyIntegrator, Depth};
use heliograph::render::RenderOptions;
use heliograph::rfilters::AnyFilter;
use heliograph::scene::build_scene;

/// Writes the arrays the host driver reads.
fn dump(flat: &FlatScene, dir: &Path) {
    let w = |name: &str, b: &[u8]| std::fs::write(dir.join(name), b).unwrap();
    w("camera.bin", as_bytes(std::slice::from_ref(&flat.camera)));
    w("film.bin", as_bytes(std::slice::from_ref(&flat.film)));
    w("nodes.bin", as_bytes(&flat.nodes));
    w("leaf.bin", as_bytes(&flat.leaf_prims));
    w("prims.bin", as_bytes(&flat.prims));
    w("shapes.bin", as_bytes(&flat.shapes));
}

#[test]
fn kernels_on_the_host_match_the_cpu_backend_and_layout() {
    let dir = std::env::temp_dir().join(format!("hg-host-kernels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let Some(exe) = build_host(&dir, kernels::DEPTH_MODULE, "host_main.cpp", "hg_host") else {
        return;
    };
    let mut scenes: Vec<PathBuf> = std::fs::read_dir(repo_root().join("scenes"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    scenes.sort();
    assert!(!scenes.is_empty());
    let (seed, spp) = (7u64, 2u32);
    for path in &scenes {
        let desc = xml::load_file(path, &[("res".into(), "64".into())]).unwrap();
        let mut scene = build_scene(&desc).unwrap();
        scene.integrator = AnyIntegrator::Depth(Depth);
        scene.sensor.film.rfilter = AnyFilter::Box { radius: 0.5 };
        let opts = RenderOptions {
            spp: Some(spp),
            seed,
        };
        let cpu_img = cpu::render(&scene, &opts).unwrap();
        dump(&FlatScene::from_scene(&scene).unwrap(), &dir);
        let st = Command::new(&exe)
            .arg(&dir)
            .arg(seed.to_string())
            .arg(spp.to_string())
            .status()
            .unwrap();
        assert!(
            st.success(),
            "host kernel run failed for {}",
            path.display()
        );
        let host = read_f32s(&dir.join("out.bin"));
        assert_eq!(host.len(), cpu_img.data.len());
        let ch = cpu_img.channels;
        let differ: Vec<usize> = (0..host.len() / ch)
            .filter(|&i| {
                (0..ch).any(|c| host[i * ch + c].to_bits() != cpu_img.data[i * ch + c].to_bits())
            })
            .collect();
        let hits = cpu_img.data.chunks(ch).filter(|p| p[0] > 0.0).count();
        println!(
            "{}: {} of {} pixels differ from the CPU, {hits} pixels hit",
            path.display(),
            differ.len(),
            host.len() / ch
        );
        assert!(hits > 0, "{}: nothing visible", path.display());
        // The CPU's box splat puts a sample whose position rounds up to the next integer
        // into the next pixel; the kernel keeps it in its own. Allow those rare cases.
        assert!(
            differ.len() * 1000 <= host.len() / ch,
            "{}: pixels {:?} differ",
            path.display(),
            &differ[..differ.len().min(10)]
        );
    }
    let table: Vec<u32> = std::fs::read(dir.join("layout.bin"))
        .unwrap()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    for (e, &t) in LAYOUT.iter().zip(&table) {
        assert_eq!(e.offset, t as usize, "{}.{}", e.record, e.field);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
