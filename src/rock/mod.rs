//! Rocks: UV spheres (or ellipsoids) whose vertices are pushed along their
//! normals by a displacement texture, with normals recomputed from the
//! displaced surface; or exact analytic ellipsoids; placed one by one or
//! scattered over the terrain.
//!
//! ```json
//! "rocks": [ { "center": [3, 2, 4], "radius": 2.5, "scale": [1, 0.7, 1],
//!              "stacks": 64, "slices": 128,
//!              "displacement": { "texture": "textures/cobblestone.png",
//!                                "scale": 0.15, "bias": 0.5, "filter": "bilinear" } } ]
//! ```

pub mod analytic;
pub mod export;
pub mod scatter;
pub mod tessellate;

use std::sync::Arc;

use glam::{Affine3A, Quat, Vec3};

use crate::mesh::TriangleMesh;
pub use crate::texture::uv_of;
use crate::texture::{Filter, Texture};
pub use tessellate::{SphereMesh, Tessellation};

pub mod file;
pub use file::{
    RockFile, RockMaterial, RockMaterialFile, RockSpec, ScatterFile, ScatterSpec, WhereFile,
};

/// Where a rock is and its shape before displacement: the unit sphere
/// turned by `pre_rotation` (which only moves where the texture's poles and
/// seam fall), scaled per axis by `radius · scale`, rotated by `rotation`,
/// then moved to `center`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// Centre, world units.
    pub center: Vec3,
    /// Radius, world units.
    pub radius: f32,
    /// Per-axis scale of the radius (an ellipsoid when not all 1).
    pub scale: Vec3,
    /// Orientation.
    pub rotation: Quat,
    /// Turn of the unit sphere before scaling.
    pub pre_rotation: Quat,
}

impl Placement {
    /// Semi-axes, world units.
    pub fn axes(&self) -> Vec3 {
        self.scale * self.radius
    }

    /// Object (unit sphere) to world.
    pub fn world_from_object(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(self.axes(), self.rotation, self.center)
            * Affine3A::from_quat(self.pre_rotation)
    }

    /// The ellipsoid's unit normal at the point of unit direction `u`
    /// (object space): normalize(R · (P·u / axes)), the inverse transpose of
    /// the placement applied to the sphere's normal u.
    pub fn normal_at(&self, u: Vec3) -> Vec3 {
        (self.rotation * ((self.pre_rotation * u) / self.axes())).normalize()
    }

    /// Radius of a sphere around `center` that holds the rock, plus `extra`.
    pub fn bounding_radius(&self, extra: f32) -> f32 {
        self.axes().max_element() + extra.max(0.0)
    }
}

/// A displacement map applied along the undisplaced normals.
#[derive(Debug, Clone, PartialEq)]
pub struct Displacement {
    /// Grayscale source (luminance of RGB); None for solid stones.
    pub texture: Option<Arc<Texture>>,
    /// World units per unit of (texel − bias) for listed rocks; fraction of
    /// the radius for scattered rocks.
    pub scale: f32,
    /// Texel value that leaves the surface in place.
    pub bias: f32,
    /// Lookup filter.
    pub filter: Filter,
    /// How the texture is laid on the sphere.
    pub mapping: Mapping,
}

/// How a displacement map is laid on a rock's unit sphere.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum Mapping {
    /// By (u, v) of the direction ([`uv_of`]).
    #[default]
    Uv,
    /// Projected along the three axes, blended by |d|⁴ per axis.
    Triplanar,
    /// Stones and mortar in space: 3D cellular (Worley) noise of `cells`
    /// cells per unit of the rock's own space, from `seed`; no texture.
    Solid {
        /// Cells per unit (the unit sphere is 2 across).
        cells: f32,
        /// Seed of the cells' points.
        seed: u64,
    },
}

/// The height of solid stones at `p` (a point of the rock's own space,
/// in cells): 0 in the mortar between stones, rising to 1 on a stone's
/// top over 0.3 of a cell. F2 − F1 of the Worley distances to the
/// seeded points of the 27 cells around `p`, one point a cell.
pub fn solid_stone(p: Vec3, seed: u64) -> f32 {
    let base = p.floor();
    let (mut f1, mut f2) = (f32::INFINITY, f32::INFINITY);
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                let cell = base + Vec3::new(dx as f32, dy as f32, dz as f32);
                let key = |v: f32| (v as i64 as u64) & 0x1f_ffff;
                let index = (key(cell.x) << 42) | (key(cell.y) << 21) | key(cell.z);
                let jitter = Vec3::new(
                    crate::hash::unit_f32(seed, 0x5701, index),
                    crate::hash::unit_f32(seed, 0x5702, index),
                    crate::hash::unit_f32(seed, 0x5703, index),
                );
                let d = (cell + jitter).distance(p);
                if d < f1 {
                    (f1, f2) = (d, f1);
                } else if d < f2 {
                    f2 = d;
                }
            }
        }
    }
    ((f2 - f1) / 0.3).clamp(0.0, 1.0)
}

impl Displacement {
    /// `scale · (texel − bias)` at (u, v).
    #[inline]
    pub fn offset(&self, u: f32, v: f32) -> f32 {
        let texel = self
            .texture
            .as_ref()
            .map_or(self.bias, |t| t.sample_gray(u, v, self.filter));
        self.scale * (texel - self.bias)
    }

    /// The offset at unit direction `d` with triplanar mapping: the
    /// texture on the three axis planes (the x plane seen along x at
    /// ((z + 1)/2, (1 − y)/2), and so on), weighted by the fourth powers of
    /// d's components, normalised. Continuous everywhere, with no pole
    /// and no seam.
    pub fn triplanar_offset(&self, d: Vec3) -> f32 {
        let w = d.abs().powf(4.0);
        let w = w / (w.x + w.y + w.z);
        let at = |a: f32, b: f32| self.offset((a + 1.0) * 0.5, (1.0 - b) * 0.5);
        w.x * at(d.z, d.y) + w.y * at(d.x, d.z) + w.z * at(d.x, d.y)
    }

    /// The largest outward offset any texel can give.
    pub fn max_outward(&self) -> f32 {
        (self.scale * (1.0 - self.bias))
            .max(self.scale * -self.bias)
            .max(0.0)
    }
}

/// The mesh of one listed rock, in world space: every vertex of the UV
/// sphere moves along its undisplaced (ellipsoid) normal by
/// `scale · (texel − bias)`; normals are then recomputed as the
/// area-weighted mean of the displaced faces (none when `flat`).
pub fn world_mesh(
    sphere: &SphereMesh,
    place: &Placement,
    disp: Option<&Displacement>,
    flat: bool,
) -> TriangleMesh {
    let to_world = place.world_from_object();
    let offsets = vertex_offsets(sphere, disp, None);
    let positions = sphere
        .dirs
        .iter()
        .zip(&offsets)
        .map(|(&u, &off)| to_world.transform_point3(u) + place.normal_at(u) * off)
        .collect();
    finish(positions, sphere, flat)
}

/// The shared mesh of scattered rocks, in object space: the unit sphere
/// displaced along its normals by `scale · (texel − bias)` (scale relative
/// to the radius). Built once and placed with [`place_mesh`].
pub fn object_mesh(sphere: &SphereMesh, disp: Option<&Displacement>) -> TriangleMesh {
    let offsets = vertex_offsets(sphere, disp, None);
    let positions = sphere
        .dirs
        .iter()
        .zip(&offsets)
        .map(|(&u, &off)| u * (1.0 + off))
        .collect();
    finish(positions, sphere, false)
}

/// The largest outward reach of a variant's shape lobes, a fraction of
/// the radius ([`variant_mesh`]).
pub const SHAPE_MAX: f32 = 0.15;

/// Variant `v` of `variants` of the scattered rocks' object-space mesh:
/// with one variant, [`object_mesh`] itself. Otherwise each variant has
/// its own shape, four smooth lobes (random directions from `seed` and
/// `v`, amplitudes within ±[`SHAPE_MAX`]/2, each `a · ((d·u + 1)/2)³`)
/// added to the radius, and its own turn of the displacement (the
/// direction rotated by a random rotation before the lookup), so that the
/// field does not look cloned.
///
/// With `facets`, that many fracture planes then cut each variant (its own
/// planes: a random unit normal n and an offset c in [0.6, 0.9] from the
/// centre): a point of the shape beyond a plane (p·n > c) is moved back
/// onto it along n, so the stone has flat broken faces meeting in sharp
/// edges; the displacement is added after the cuts, so the faces keep its
/// fine relief.
pub fn variant_mesh(
    sphere: &SphereMesh,
    disp: Option<&Displacement>,
    seed: u64,
    v: u32,
    variants: u32,
    facets: u32,
) -> TriangleMesh {
    if variants <= 1 && facets == 0 {
        return object_mesh(sphere, disp);
    }
    let u = |k: u64| crate::hash::unit_f32(seed, 0x7A41 + k, v as u64);
    let axis = |k: u64| {
        let y = 2.0 * u(k) - 1.0;
        let r = (1.0 - y * y).max(0.0).sqrt();
        let phi = std::f32::consts::TAU * u(k + 1);
        Vec3::new(r * phi.cos(), y, r * phi.sin())
    };
    let lobes: Vec<(Vec3, f32)> = (0..4)
        .map(|i| (axis(10 * i), (u(10 * i + 2) - 0.5) * SHAPE_MAX))
        .collect();
    let turn = glam::Quat::from_axis_angle(axis(50), u(52) * std::f32::consts::TAU);
    let planes: Vec<(Vec3, f32)> = (0..facets as u64)
        .map(|i| (axis(100 + 3 * i), 0.6 + 0.3 * u(102 + 3 * i)))
        .collect();
    let offsets = vertex_offsets(sphere, disp, Some(turn));
    let positions = sphere
        .dirs
        .iter()
        .zip(&offsets)
        .map(|(&d, &off)| {
            let shape: f32 = lobes
                .iter()
                .map(|&(l, a)| a * ((d.dot(l) + 1.0) * 0.5).powi(3))
                .sum();
            let mut p = d * (1.0 + shape);
            for &(n, c) in &planes {
                let beyond = p.dot(n) - c;
                if beyond > 0.0 {
                    p -= beyond * n;
                }
            }
            p + d * off
        })
        .collect();
    finish(positions, sphere, false)
}

/// A copy of an object-space mesh placed in the world; normals follow the
/// inverse transpose of the placement.
pub fn place_mesh(mesh: &TriangleMesh, place: &Placement) -> TriangleMesh {
    place_affine(mesh, place.world_from_object())
}

/// A copy of an object-space mesh carried by `m`; normals follow its
/// inverse transpose.
pub fn place_affine(mesh: &TriangleMesh, m: Affine3A) -> TriangleMesh {
    let normal_matrix = m.matrix3.inverse().transpose();
    TriangleMesh {
        positions: mesh
            .positions
            .iter()
            .map(|&p| m.transform_point3(p))
            .collect(),
        normals: mesh
            .normals
            .iter()
            .map(|&n| (normal_matrix * glam::Vec3A::from(n)).normalize().into())
            .collect(),
        indices: mesh.indices.clone(),
    }
}

/// Displacement of each vertex: the texel at its (u, v); a pole takes the
/// mean of its texture row so that it does not depend on an arbitrary u.
/// With `turn`, the texture is read as if the sphere were turned by it
/// (a variant's own turn of the displacement): every vertex by the (u, v)
/// of its turned direction, no pole averaged.
fn vertex_offsets(
    sphere: &SphereMesh,
    disp: Option<&Displacement>,
    turn: Option<Quat>,
) -> Vec<f32> {
    let Some(d) = disp else {
        return vec![0.0; sphere.dirs.len()];
    };
    let dir = |k: usize| turn.map_or(sphere.dirs[k], |q| q * sphere.dirs[k]);
    (0..sphere.dirs.len())
        .map(|k| match d.mapping {
            Mapping::Triplanar => d.triplanar_offset(dir(k)),
            Mapping::Solid { cells, seed } => {
                d.scale * (solid_stone(dir(k) * cells, seed) - d.bias)
            }
            Mapping::Uv if turn.is_some() => {
                let (u, v) = uv_of(dir(k));
                d.offset(u, v)
            }
            Mapping::Uv if sphere.is_pole(k) => {
                let n = sphere.slices;
                (0..n)
                    .map(|j| d.offset(j as f32 / n as f32, sphere.uv[k].y))
                    .sum::<f32>()
                    / n as f32
            }
            Mapping::Uv => d.offset(sphere.uv[k].x, sphere.uv[k].y),
        })
        .collect()
}

fn finish(positions: Vec<Vec3>, sphere: &SphereMesh, flat: bool) -> TriangleMesh {
    let mut mesh = TriangleMesh {
        positions,
        normals: Vec::new(),
        indices: sphere.indices.clone(),
    };
    if !flat {
        mesh.normals = mesh.area_weighted_normals();
    }
    mesh
}

#[cfg(test)]
mod tests;
