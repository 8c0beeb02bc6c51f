//! `cube`: the box `[-1, 1]³` as 12 triangles with per-face normals and
//! texture coordinates (each face maps to the full `[0, 1]²`, laid out as
//! Mitsuba 3's cube).
//!
//! | parameter          | type      | default  | meaning                      |
//! |----------------|-----------|----------|------------------------------|
//! | `to_world`     | transform | identity | object-to-world transform    |
//! | `flip_normals` | boolean   | false    | normals point inwards        |
//!
//! ```xml
//! <shape type="cube">
//!     <transform name="to_world"><scale x="0.5" y="1" z="0.5"/></transform>
//!     <bsdf type="diffuse"/>
//! </shape>
//! ```

use std::path::Path;

use super::{Built, TriMesh};
use crate::desc::props::Props;
use crate::error::Result;
use crate::math::{Transform, Vec2, Vec3};
use crate::plugin::BuildContext;

/// Per face: the corner at uv (0, 0) and the edge vectors along u and v.
/// Winding (0,1)→(1,1)→(1,0) is counter-clockwise seen from outside.
const FACES: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
    ([-1., -1., -1.], [0., 0., 2.], [2., 0., 0.]), // -y
    ([1., 1., 1.], [-2., 0., 0.], [0., 0., -2.]),  // +y
    ([1., -1., 1.], [0., 2., 0.], [0., 0., -2.]),  // +x
    ([-1., -1., 1.], [0., 2., 0.], [2., 0., 0.]),  // +z
    ([-1., -1., -1.], [0., 2., 0.], [0., 0., 2.]), // -x
    ([-1., 1., -1.], [0., -2., 0.], [2., 0., 0.]), // -z
];

/// The corners' uvs in vertex order, and the two triangles of each face.
const CORNER_UV: [[f32; 2]; 4] = [[0., 1.], [1., 1.], [1., 0.], [0., 0.]];
const FACE_TRIS: [[u32; 3]; 2] = [[0, 1, 2], [3, 0, 2]];

/// The cube in object space.
pub fn unit_cube() -> TriMesh {
    let (mut positions, mut normals, mut uvs, mut tris) = (vec![], vec![], vec![], vec![]);
    for (f, (o, du, dv)) in FACES.iter().enumerate() {
        let (o, du, dv) = (Vec3::from(*o), Vec3::from(*du), Vec3::from(*dv));
        let n = -du.cross(dv).normalize();
        for uv in CORNER_UV {
            positions.push(o + du * uv[0] + dv * uv[1]);
            normals.push(n);
            uvs.push(Vec2::from(uv));
        }
        let base = 4 * f as u32;
        tris.extend(FACE_TRIS.iter().map(|t| t.map(|i| base + i)));
    }
    TriMesh {
        positions,
        normals: Some(normals),
        uvs: Some(uvs),
        tris,
        attributes: Vec::new(),
    }
}

/// Builds a `cube` (no parameters of its own).
pub fn build(
    p: &Props,
    _ctx: &dyn BuildContext,
    to_world: &Transform,
    _flip: bool,
) -> Result<Built> {
    let path = Path::new("<cube>");
    let m = unit_cube()
        .with_written_positions(p, path)?
        .finish(path, to_world, false)?;
    Ok(Built::Mesh(m))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{check_sampling, closest, geom_of, shape_desc};
    use super::*;
    use crate::desc::props::Value;
    use crate::math::Ray;

    #[test]
    fn faces_point_outwards_and_rays_hit_at_one() {
        let g = geom_of(&[shape_desc("cube", vec![])]);
        assert_eq!(g.prims.len(), 12);
        for axis in [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z] {
            // aim at an off-centre point of each face from outside
            let side = if axis.x != 0.0 { Vec3::Y } else { Vec3::X };
            let target = axis + side * 0.3;
            let h = closest(&g, &Ray::new(target + axis * 4.0, -axis)).unwrap();
            assert!((h.t - 4.0).abs() < 1e-5, "{axis}: t = {}", h.t);
            assert!(
                (h.ng - axis).length() < 1e-6 && (h.n - axis).length() < 1e-6,
                "{axis}"
            );
            assert!(h.uv.min_element() >= 0.0 && h.uv.max_element() <= 1.0);
            // from inside (off the diagonal): same outward normal
            let h = closest(&g, &Ray::new(side * 0.1, axis)).unwrap();
            assert!((h.t - 1.0).abs() < 1e-5 && (h.ng - axis).length() < 1e-6);
        }
        // +z face: corner (x, y) = (-1, -1) has uv (0, 0), u grows along +y
        let h = closest(&g, &Ray::new(Vec3::new(-0.5, 0.5, 3.0), -Vec3::Z)).unwrap();
        assert!((h.uv - Vec2::new(0.75, 0.25)).length() < 1e-5, "{:?}", h.uv);
        check_sampling(&g, 0, 24.0);
    }

    #[test]
    fn to_world_and_flip_normals() {
        let tw = Transform::scale(Vec3::new(2.0, 1.0, 0.5)).unwrap();
        let g = geom_of(&[shape_desc(
            "cube",
            vec![
                ("to_world", Value::Transform(tw)),
                ("flip_normals", Value::Bool(true)),
            ],
        )]);
        assert!((g.surface_area(0) - 8.0 * (2.0 + 1.0 + 0.5)).abs() < 1e-4);
        let h = closest(&g, &Ray::new(Vec3::new(5.0, 0.2, 0.1), -Vec3::X)).unwrap();
        assert!((h.t - 3.0).abs() < 1e-5 && (h.ng + Vec3::X).length() < 1e-6);
        assert!((h.n + Vec3::X).length() < 1e-6);
        check_sampling(&g, 0, 28.0);
    }

    #[test]
    fn faces_are_picked_by_area() {
        let tw = Transform::scale(Vec3::new(2.0, 1.0, 0.5)).unwrap();
        let g = geom_of(&[shape_desc("cube", vec![("to_world", Value::Transform(tw))])]);
        // face of a sample: the axis where |p| reaches the half-extent
        let bin = |p: Vec3| {
            let q = p / Vec3::new(2.0, 1.0, 0.5);
            let a = q.abs().max_position();
            2 * a + usize::from(q[a] > 0.0)
        };
        // areas: x faces 2, y faces 4, z faces 8 (total 28)
        let e = [2.0, 2.0, 4.0, 4.0, 8.0, 8.0].map(|a: f64| a / 28.0);
        super::super::test_util::check_bins(&g, 0, bin, &e);
    }
}
