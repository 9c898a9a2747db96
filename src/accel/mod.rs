//! Acceleration structures: rays and boxes, the BVH over triangle meshes,
//! the implicit hierarchy over terrain grids, and the top level over both.

pub mod bvh;
pub mod heightfield;
pub mod octet;
pub mod packet;
pub mod plants;
pub mod sah;
pub mod top;
pub mod wide;

pub use bvh::{Bvh, Hit, Tree};
pub use heightfield::{FieldView, HeightField};
pub use top::{Object, ObjectHit, ObjectRef, TopLevel, View};

/// Fixtures the structures' tests share: triangle soups and random rays.
#[cfg(test)]
pub(crate) mod test_support {
    use glam::Vec3;
    use proptest::prelude::*;

    use crate::mesh::TriangleMesh;
    use crate::ray::Ray;

    pub(crate) fn soup(coords: &[f32]) -> TriangleMesh {
        let positions: Vec<Vec3> = coords
            .chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect();
        let n = positions.len() / 3;
        TriangleMesh {
            positions,
            normals: vec![],
            indices: (0..n as u32)
                .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
                .collect(),
        }
    }

    pub(crate) fn ray_strategy() -> impl Strategy<Value = Ray> {
        (
            prop::array::uniform3(-12.0f32..12.0),
            prop::array::uniform3(-1.0f32..1.0),
        )
            .prop_filter("non-zero direction", |(_, d)| {
                Vec3::from_array(*d).length() > 1e-3
            })
            .prop_map(|(o, d)| Ray::new(Vec3::from_array(o), Vec3::from_array(d).normalize()))
    }
}
