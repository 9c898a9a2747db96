//! Scattering rocks over the terrain from a seed.
//!
//! Rock i draws, from hash(seed, i, attempt): a position uniform over the
//! scatter area, a radius in `radius`, a vertical squash in `squash`, a
//! rotation (any yaw, a tilt of up to 15°) and any orientation of the
//! sphere (and so of its texture) before the squash. Its centre rests on the terrain
//! surface under it and is sunk so that `sink` of its height is below:
//! y = height_at(x, z) + r_y · (1 − 2·sink). With `avoid_overlap` a draw
//! whose bounding sphere meets an earlier rock's is redrawn (up to 32
//! attempts; then the rock is left out and the count reports it).

use std::collections::HashMap;

use glam::{Quat, Vec3};

use super::Placement;
use crate::hash::unit_f32;
use crate::terrain::TerrainGrid;

/// Checked scatter parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScatterParams {
    /// Rocks wanted.
    pub count: u32,
    /// Radius range, world units.
    pub radius: [f32; 2],
    /// Vertical scale range (1 = round).
    pub squash: [f32; 2],
    /// Fraction of each rock's height below the ground, 0–1.
    pub sink: f32,
    /// Redraw rocks whose bounding spheres meet.
    pub avoid_overlap: bool,
    /// Extent [x, z] of the area, centred on the origin, world units.
    pub area: [f32; 2],
    /// Seed of the placement.
    pub seed: u64,
    /// Outward displacement margin, as a fraction of the radius (for the overlap test).
    pub margin: f32,
    /// Heights allowed, fractions of the terrain's relief.
    pub height: [f32; 2],
    /// Slopes allowed, degrees from horizontal.
    pub slope: [f32; 2],
    /// Moisture allowed (near lakes and rivers), if limited.
    pub moisture: Option<[f32; 2]>,
}

const ATTEMPTS: u32 = 32;
const STREAMS: u64 = 0x5C_00;

/// A unit vector uniform on the sphere from two uniform numbers.
fn random_axis(a: f32, b: f32) -> Vec3 {
    let y = 2.0 * a - 1.0;
    let r = (1.0 - y * y).max(0.0).sqrt();
    let phi = std::f32::consts::TAU * b;
    Vec3::new(r * phi.cos(), y, r * phi.sin())
}

/// The variant rock `k` of a scatter with `seed` takes, of `variants`.
pub fn variant_of(seed: u64, k: usize, variants: u32) -> usize {
    if variants <= 1 {
        return 0;
    }
    (crate::hash::hash3(seed, 0x7A40, k as u64) % variants as u64) as usize
}

/// The placements of the scattered rocks, in order; with `waters` (the
/// land's lakes and rivers) the mask reads their moisture (rocks may lie
/// in the water).
pub fn scatter(
    p: &ScatterParams,
    terrain: &TerrainGrid,
    waters: Option<&crate::terrain::hydrology::Waters>,
) -> Vec<Placement> {
    let mut placed: Vec<(Placement, f32)> = Vec::with_capacity(p.count as usize);
    let mask = terrain
        .mask(p.height, p.slope)
        .near_water(waters, p.moisture, false);
    // Rocks by square cells of (x, z) as wide as the most two bounds can
    // reach: one that meets a new rock is in its cell or a neighbour.
    let cell = (2.0 * p.radius[1] * (1.0 + p.margin)).max(f32::MIN_POSITIVE);
    let cell_of = |c: Vec3| ((c.x / cell).floor() as i64, (c.z / cell).floor() as i64);
    let mut cells: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
    for i in 0..p.count {
        for attempt in 0..ATTEMPTS {
            let index = i as u64 * ATTEMPTS as u64 + attempt as u64;
            let u = |k: u64| unit_f32(p.seed, STREAMS + k, index);
            let radius = p.radius[0] + (p.radius[1] - p.radius[0]) * u(0);
            let squash = p.squash[0] + (p.squash[1] - p.squash[0]) * u(1);
            let x = (u(2) - 0.5) * p.area[0];
            let z = (u(3) - 0.5) * p.area[1];
            let yaw = u(4) * std::f32::consts::TAU;
            let tilt = u(5) * 15f32.to_radians();
            let tilt_axis = u(6) * std::f32::consts::TAU;
            let rotation =
                Quat::from_axis_angle(Vec3::new(tilt_axis.cos(), 0.0, tilt_axis.sin()), tilt)
                    * Quat::from_rotation_y(yaw);
            if !mask.is_open() && !mask.allows(x, z, terrain.normal_at(x, z)) {
                continue;
            }
            let ry = radius * squash;
            let y = terrain.height_at(x, z) + ry * (1.0 - 2.0 * p.sink);
            // Any orientation of the sphere before the squash, so that the
            // texture's poles do not all point up.
            let pre_rotation =
                Quat::from_axis_angle(random_axis(u(7), u(8)), u(9) * std::f32::consts::TAU);
            let place = Placement {
                center: Vec3::new(x, y, z),
                radius,
                scale: Vec3::new(1.0, squash, 1.0),
                rotation,
                pre_rotation,
            };
            let bound = radius * (1.0 + p.margin);
            let (cx, cz) = cell_of(place.center);
            let free = !p.avoid_overlap
                || (-1..=1).all(|dx| {
                    (-1..=1).all(|dz| {
                        cells.get(&(cx + dx, cz + dz)).is_none_or(|near| {
                            near.iter().all(|&j| {
                                let (q, qb) = &placed[j as usize];
                                q.center.distance(place.center) >= bound + qb
                            })
                        })
                    })
                });
            if free {
                if p.avoid_overlap {
                    cells.entry((cx, cz)).or_default().push(placed.len() as u32);
                }
                placed.push((place, bound));
                break;
            }
        }
    }
    placed.into_iter().map(|(p, _)| p).collect()
}
