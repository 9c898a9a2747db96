//! Populations: many instances of any mesh (bushes, trees, debris) placed
//! over the terrain by a deterministic scatter, where the ground allows
//! them: a range of heights (a fraction of the terrain's relief) and of
//! slopes (degrees). Each instance is a random yaw, a scale within a range
//! and a tilt toward the ground's normal (`align_to_ground`: 0 upright,
//! 1 perpendicular to the slope), its origin on the ground.

use std::sync::Arc;

use glam::{Affine3A, Quat, Vec2, Vec3};

use crate::hash::unit_f32;
use crate::mesh::TriangleMesh;
use crate::terrain::TerrainGrid;
use crate::texture::Texture;

pub mod export;
pub mod file;
pub use file::PopulationFile;

/// One part of a population's mesh: the triangles of one material.
#[derive(Debug, Clone)]
pub struct Part {
    /// Its triangles, in the mesh's own space (y up, origin on the
    /// ground), with normals.
    pub mesh: TriangleMesh,
    /// Texture coordinates of its vertices (v up the image, as OBJ has
    /// them); empty where it has no image.
    pub uvs: Vec<Vec2>,
    /// Linear RGB albedo where it has no colour image.
    pub color: Vec3,
    /// Its colour image (`map_Kd`), decoded to linear.
    pub image: Option<Arc<Texture>>,
    /// Its opacity (`d`), times its opacity image's (`map_d`).
    pub opacity: f32,
    /// Its opacity image.
    pub alpha: Option<Arc<Texture>>,
}

impl Part {
    /// Whether rays may pass through some of it.
    pub fn cut_out(&self) -> bool {
        self.opacity < 1.0 || self.alpha.is_some()
    }
}

/// A checked population.
#[derive(Debug, Clone)]
pub struct Population {
    /// The mesh's parts, one per material.
    pub parts: Arc<Vec<Part>>,
    /// Instances wanted.
    pub count: u32,
    /// Scale range.
    pub scale: [f32; 2],
    /// 0 upright, 1 along the ground's normal.
    pub align_to_ground: f32,
    /// Heights allowed, fractions of the terrain's relief (0 lowest, 1 highest).
    pub height: [f32; 2],
    /// Slopes allowed, degrees from horizontal.
    pub slope: [f32; 2],
    /// Moisture allowed (near lakes and rivers), if limited.
    pub moisture: Option<[f32; 2]>,
    /// Seed of the placement.
    pub seed: u64,
}

impl Population {
    /// Triangles of one instance.
    pub fn triangle_count(&self) -> usize {
        self.parts.iter().map(|p| p.mesh.indices.len()).sum()
    }
}

/// Tries a place gets before it is given up (where the masks leave little
/// ground, fewer instances than `count` are placed).
const ATTEMPTS: u64 = 16;

/// The placements of `p` over `grid`, in order: each instance's
/// object-to-world transform. With `waters` (the land's lakes and
/// rivers), never where water stands, and within the population's
/// moisture window (0 everywhere without them). A pure function of the
/// population and the terrain.
pub fn place(
    p: &Population,
    grid: &TerrainGrid,
    waters: Option<&crate::terrain::hydrology::Waters>,
) -> Vec<Affine3A> {
    let mask = grid
        .mask(p.height, p.slope)
        .near_water(waters, p.moisture, true);
    let mut out = Vec::with_capacity(p.count as usize);
    for i in 0..p.count as u64 {
        for attempt in 0..ATTEMPTS {
            let index = i * ATTEMPTS + attempt;
            let u = |k: u64| unit_f32(p.seed, 0x9090 + k, index);
            let x = (u(0) - 0.5) * grid.size[0];
            let z = (u(1) - 0.5) * grid.size[1];
            let y = grid.height_at(x, z);
            let n = grid.normal_at(x, z);
            if !mask.allows(x, z, n) {
                continue;
            }
            let scale = p.scale[0] + (p.scale[1] - p.scale[0]) * u(2);
            let up = Vec3::Y.lerp(n, p.align_to_ground).normalize();
            let tilt = Quat::from_rotation_arc(Vec3::Y, up);
            let yaw = Quat::from_rotation_y(u(3) * std::f32::consts::TAU);
            out.push(Affine3A::from_scale_rotation_translation(
                Vec3::splat(scale),
                tilt * yaw,
                Vec3::new(x, y, z),
            ));
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> TerrainGrid {
        TerrainGrid::diamond_square(65, 65, 10.0, 4, [40.0, 40.0])
    }

    fn bush(height: [f32; 2], slope: [f32; 2], align: f32) -> Population {
        Population {
            parts: Arc::new(Vec::new()),
            count: 300,
            scale: [0.5, 1.5],
            align_to_ground: align,
            height,
            slope,
            moisture: None,
            seed: 4,
        }
    }

    /// Near lakes and rivers: no instance stands where water does, and
    /// each stands within the moisture window; without the window the
    /// dry ground still takes them all.
    #[test]
    fn instances_keep_out_of_the_water_and_to_their_moisture() {
        let g = grid();
        let (w, h) = (g.heights.width, g.heights.height);
        // Water over the western third; moisture falling eastward from 1
        // to 0 over the grid.
        let level: Vec<f32> = (0..w * h)
            .map(|k| {
                if k % w < w / 3 {
                    g.heights.data()[k] + 1.0
                } else {
                    f32::NAN
                }
            })
            .collect();
        let moisture: Vec<f32> = (0..w * h)
            .map(|k| 1.0 - (k % w) as f32 / (w - 1) as f32)
            .collect();
        let waters = crate::terrain::hydrology::Waters {
            width: w,
            height: h,
            size: g.size,
            level,
            moisture,
            ..Default::default()
        };
        let all = place(&bush([0.0, 1.0], [0.0, 90.0], 0.0), &g, Some(&waters));
        assert_eq!(all.len(), 300, "the dry two thirds take them all");
        let window = Population {
            moisture: Some([0.4, 0.5]),
            ..bush([0.0, 1.0], [0.0, 90.0], 0.0)
        };
        let some = place(&window, &g, Some(&waters));
        assert!(some.len() > 50, "{}", some.len());
        for places in [&all, &some] {
            for m in places.iter() {
                let p = m.translation;
                let level = waters.level_at(p.x, p.z);
                assert!(level.is_nan() || level <= p.y, "in the water at {p}");
            }
        }
        for m in &some {
            let p = m.translation;
            let moist = waters.moisture_at(p.x, p.z);
            assert!((0.4..=0.5).contains(&moist), "{moist} at {p}");
        }
        // Without waters the moisture is 0: a window above 0 takes nothing.
        assert!(place(&window, &g, None).is_empty());
    }

    /// Every instance stands on the ground, within the masks and the
    /// scale range; the same population gives the same places.
    #[test]
    fn instances_stand_where_the_masks_allow() {
        let g = grid();
        let (lo, hi) = g.heights.range();
        let p = bush([0.2, 0.6], [0.0, 25.0], 0.0);
        let places = place(&p, &g, None);
        assert!(places.len() > 50, "{}", places.len());
        for t in &places {
            let at = t.translation;
            assert!((g.height_at(at.x, at.z) - at.y).abs() < 1e-4);
            let height = (at.y - lo) / (hi - lo);
            assert!((0.2..=0.6).contains(&height), "{height}");
            let slope = g.normal_at(at.x, at.z).y.acos().to_degrees();
            assert!(slope <= 25.0, "{slope}");
            let scale = t.matrix3.x_axis.length();
            assert!((0.5..=1.5).contains(&scale), "{scale}");
            // Upright: the object's up is the world's.
            let up = (t.matrix3 * glam::Vec3A::Y).normalize();
            assert!(up.y > 0.9999, "{up}");
        }
        assert_eq!(place(&p, &g, None), places);
    }

    /// Aligned to the ground, an instance's up is the ground's normal.
    #[test]
    fn aligned_instances_follow_the_slope() {
        let g = grid();
        let places = place(&bush([0.0, 1.0], [10.0, 90.0], 1.0), &g, None);
        assert!(!places.is_empty());
        for t in &places {
            let up = Vec3::from((t.matrix3 * glam::Vec3A::Y).normalize());
            let n = g.normal_at(t.translation.x, t.translation.z);
            assert!(up.dot(n) > 0.9999, "{up} against {n}");
        }
    }

    /// A mask no ground meets places nothing.
    #[test]
    fn impossible_masks_place_nothing() {
        assert!(place(&bush([0.0, 1.0], [89.0, 90.0], 0.0), &grid(), None).is_empty());
    }
}
