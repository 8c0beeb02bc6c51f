//! The CUDA C sources (`renderer/kernels/`), embedded in the binary, and the
//! `#include` resolver that turns a module into one self-contained NVRTC source.
//!
//! Plugin twins are not listed here: each category's registry embeds its plugins'
//! files and generates one more, its dispatch (`bsdfs/registry.cuh`, from
//! [`crate::bsdfs::registry`]; `textures/registry.cuh`, from
//! [`crate::textures::registry`]; `emitters/registry.cuh`, from
//! [`crate::emitters::registry`]; `shapes/registry.cuh`, the shape records' tags, their
//! twins' includes and the dispatch over them, from [`crate::shapes::registry`]; the
//! integrator, film-placement and sampler tags, from [`super::features::cuda_sources`]);
//! [`file()`] finds them, and the twins of the shape records and of the integrator
//! plugins that have one ([`crate::shapes::CUDA_TWINS`], [`crate::integrators::CUDA_TWINS`]).
//!
//! NVRTC gets no file system access from us: each `#include "x.cuh"` is replaced by
//! the embedded file (once per module, as `#pragma once`), wrapped in `#line`
//! directives so that NVRTC's error log names the right file and line.

use crate::bsdfs::registry;
use crate::error::{CudaError, Error, Result};

/// Embeds kernel files by their path under `renderer/kernels/`.
macro_rules! embed {
    ($($f:literal),* $(,)?) => {
        &[$(($f, include_str!(concat!("../../../kernels/", $f)))),*]
    };
}

/// Every kernel file that is no plugin's twin, by name (its path under
/// `renderer/kernels/`).
pub const FILES: &[(&str, &str)] = embed![
    "backward.cuh",
    "bsdfs.cuh",
    "camera.cuh",
    "common.cuh",
    "convert.cu",
    "depth.cu",
    "elementwise.cu",
    "emitters.cuh",
    "features.cuh",
    "film.cuh",
    "flat.cuh",
    "geometry.cuh",
    "math.cuh",
    "parity.cu",
    "render.cu",
    "samplers.cuh",
    "scene.cuh",
    "textures.cuh",
    "wavefront.cuh",
    "bsdfs/bsdf.cuh",
    "bsdfs/fresnel.cuh",
    "bsdfs/microfacet.cuh",
    "bsdfs/principledhelpers.cuh",
    "bsdfs/tilted.cuh",
    "emitters/emitter.cuh",
    "integrators/observe.cuh",
    "shapes/sample.cuh",
    "textures/texture.cuh",
    "backward/params.cuh",
    "backward/texels.cuh",
    "backward/adjoint.cuh",
    "textures/bitmap_diff.cuh",
    "emitters/envmap_diff.cuh",
];

/// The module holding the `depth` integrator and the layout-table kernel.
pub const DEPTH_MODULE: &str = "depth.cu";

/// The module holding the `direct`/`path` megakernel and the film kernels.
pub const RENDER_MODULE: &str = "render.cu";

/// The module holding the per-plugin parity kernel (tests).
pub const PARITY_MODULE: &str = "parity.cu";

/// The module holding the conversion of imported arrays.
pub const CONVERT_MODULE: &str = "convert.cu";

/// The module holding TensorXf arithmetic.
pub const ELEMENTWISE_MODULE: &str = "elementwise.cu";

/// The generated kernel file of the BSDF registry.
pub const BSDF_REGISTRY_FILE: &str = "bsdfs/registry.cuh";

/// The generated kernel file of the texture registry.
pub const TEXTURE_REGISTRY_FILE: &str = "textures/registry.cuh";

/// The generated kernel file of the emitter registry.
pub const EMITTER_REGISTRY_FILE: &str = "emitters/registry.cuh";

/// The generated kernel file of the shape records' tags.
pub const SHAPE_REGISTRY_FILE: &str = "shapes/registry.cuh";

/// The text of kernel file `name`: embedded here, a registered plugin's twin, or a
/// registry's generated dispatch.
pub fn file(name: &str) -> Result<&'static str> {
    if name == BSDF_REGISTRY_FILE {
        return Ok(registry::cuda_source());
    }
    if name == TEXTURE_REGISTRY_FILE {
        return Ok(crate::textures::registry::cuda_source());
    }
    if name == SHAPE_REGISTRY_FILE {
        return Ok(crate::shapes::registry::cuda_source());
    }
    if let Some((_, s)) = super::features::cuda_sources()
        .iter()
        .find(|(n, _)| *n == name)
    {
        return Ok(s);
    }
    if let Some(e) = crate::bsdfs::REGISTRY
        .iter()
        .find(|e| e.cuda_file() == name)
    {
        return Ok(e.cuda);
    }
    if let Some(e) = (crate::textures::REGISTRY.iter()).find(|e| e.cuda_file() == name) {
        return Ok(e.cuda);
    }
    if name == EMITTER_REGISTRY_FILE {
        return Ok(crate::emitters::registry::cuda_source());
    }
    if let Some(e) = (crate::emitters::REGISTRY.iter()).find(|e| e.cuda_file() == name) {
        return Ok(e.cuda);
    }
    let twins = crate::shapes::CUDA_TWINS.iter();
    FILES
        .iter()
        .chain(twins.chain(crate::integrators::CUDA_TWINS))
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .ok_or_else(|| Error::Cuda(CudaError::NotEmbedded { file: name.into() }))
}

/// The module `name` with its includes resolved into one source.
pub fn assemble(name: &str) -> Result<String> {
    let mut out = String::new();
    let mut seen = Vec::new();
    append(name, &mut out, &mut seen, 0)?;
    Ok(out)
}

/// The embedded name of `inc` included from file `from` (relative to `from`'s folder).
fn resolve(from: &str, inc: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for p in inc.split('/') {
        match p {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn append(name: &str, out: &mut String, seen: &mut Vec<String>, depth: usize) -> Result<()> {
    if depth > 16 {
        return Err(Error::Cuda(CudaError::IncludeDepth { file: name.into() }));
    }
    if seen.iter().any(|s| s == name) {
        return Ok(());
    }
    seen.push(name.to_string());
    let text = file(name)?;
    out.push_str(&format!("#line 1 \"{name}\"\n"));
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t == "#pragma once" {
            out.push('\n');
        } else if let Some(inc) = t.strip_prefix("#include") {
            let inc = resolve(name, inc.trim().trim_matches('"'));
            append(&inc, out, seen, depth + 1).map_err(|e| match e {
                Error::Cuda(e) => Error::Cuda(CudaError::Included {
                    error: Box::new(e),
                    file: name.into(),
                    line: i + 1,
                }),
                e => e,
            })?;
            out.push_str(&format!("#line {} \"{name}\"\n", i + 2));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_are_inlined_once_with_line_directives() {
        let src = assemble(DEPTH_MODULE).unwrap();
        assert!(!src.contains("#include"), "every include resolved");
        assert_eq!(
            src.matches("struct FlatShape {").count(),
            1,
            "flat.cuh once"
        );
        assert!(src.contains("#line 1 \"flat.cuh\"") && src.contains("#line 1 \"depth.cu\""));
        // after geometry.cuh, depth.cu resumes on the line after its include
        let inc_line = file(DEPTH_MODULE)
            .unwrap()
            .lines()
            .position(|l| l.starts_with("#include"))
            .unwrap();
        assert!(src.contains(&format!("#line {} \"depth.cu\"", inc_line + 2)));
        assert!(src.contains("hg_depth") && src.contains("hg_layout_table"));
    }

    #[test]
    fn every_kernel_file_is_embedded() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                assert!(file(&rel).is_ok(), "{rel} is not in kernels::FILES");
            }
        }
        assert!(assemble(RENDER_MODULE).is_ok());
    }

    #[test]
    fn a_missing_file_names_itself() {
        let e = assemble("nope.cu").unwrap_err().to_string();
        assert!(e.contains("nope.cu"), "{e}");
    }
}
