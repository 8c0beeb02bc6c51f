//! What a built scene holds, in a few figures ([`Summary`]), which the Python package's
//! scene methods report, and the one line `Scene`'s repr prints ([`Session::headline`]).

use crate::scene::RenderSetup;
use crate::session::Session;

/// A built scene in figures.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The film's size in pixels (width, height).
    pub film_size: (u32, u32),
    /// The film's crop window's size (width, height).
    pub crop_size: (u32, u32),
    /// The crop window's offset (x, y).
    pub crop_offset: (u32, u32),
    /// The sensor's to-world transform, as rows.
    pub sensor_to_world: [[f64; 4]; 4],
    /// The sensor's horizontal field of view, in degrees.
    pub x_fov: f32,
    /// The sampler's samples per pixel.
    pub sample_count: u32,
    /// Number of shapes.
    pub shapes: usize,
    /// Number of BSDFs.
    pub bsdfs: usize,
    /// Each emitter's record, as it prints.
    pub emitters: Vec<String>,
    /// The integrator's record, as it prints (inside `Aov(..)` for an `aov` integrator).
    pub integrator: String,
    /// The bounding box of the geometry (min, max).
    pub bbox: ([f32; 3], [f32; 3]),
}

impl Summary {
    /// The figures of `s`.
    pub fn of(s: &RenderSetup) -> Summary {
        let f = &s.sensor.film;
        let b = s.scene.bvh.bounds();
        Summary {
            film_size: (f.width, f.height),
            crop_size: (f.crop_size[0], f.crop_size[1]),
            crop_offset: (f.crop_offset[0], f.crop_offset[1]),
            sensor_to_world: s.sensor.camera.to_world.to_rows().map(|r| r.map(f64::from)),
            x_fov: s.sensor.camera.x_fov,
            sample_count: s.sensor.sampler.sample_count,
            shapes: s.scene.geom.shape_count(),
            bsdfs: s.scene.bsdfs.len(),
            emitters: s.scene.emitters.iter().map(|e| format!("{e:?}")).collect(),
            integrator: match &s.aov {
                Some(aov) => format!("Aov({:?}, {:?})", aov, s.integrator),
                None => format!("{:?}", s.integrator),
            },
            bbox: (b.min.to_array(), b.max.to_array()),
        }
    }
}

impl Session {
    /// The built scene in figures.
    pub fn summary(&self) -> Summary {
        Summary::of(self.loaded.setup())
    }

    /// `Scene(shapes=.., emitters=.., bsdfs=.., film=WxH)`: the counts only, so that a
    /// repr costs nothing on a scene of many emitters (no record is formatted).
    pub fn headline(&self) -> String {
        let s = self.loaded.setup();
        format!(
            "Scene(shapes={}, emitters={}, bsdfs={}, film={}x{})",
            s.scene.geom.shape_count(),
            s.scene.emitters.len(),
            s.scene.bsdfs.len(),
            s.sensor.film.width,
            s.sensor.film.height
        )
    }
}
