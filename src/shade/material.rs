//! Surface reflectance.

use std::sync::Arc;

use glam::Vec3;

use crate::texture::{Filter, Texture};

/// Band colours (linear RGB) of the height/slope material.
pub const SAND: Vec3 = Vec3::new(0.45, 0.38, 0.25);
/// Grass band.
pub const GRASS: Vec3 = Vec3::new(0.10, 0.17, 0.05);
/// Rock band and steep faces.
pub const ROCK: Vec3 = Vec3::new(0.19, 0.16, 0.13);
/// Snow band.
pub const SNOW: Vec3 = Vec3::new(0.82, 0.84, 0.88);

/// How a surface's albedo is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Material {
    /// Bands by height (world y) and slope; heights are world units.
    HeightSlope {
        /// Top of the sand band.
        sand_top: f32,
        /// Top of the grass band.
        grass_top: f32,
        /// Bottom of the snow band.
        snow_bottom: f32,
        /// Faces whose normal's y is below this are rock.
        steep_cos: f32,
        /// Width of the blend between bands, world units.
        blend: f32,
        /// Per-face brightness variation, fraction.
        variation: f32,
    },
    /// One albedo.
    Albedo(Vec3),
    /// Albedo from a texture wrapped around a rock: the hit point in the
    /// rock's own (unit-sphere) space gives (u, v) as for its displacement.
    RockTexture {
        /// Index into the world's textures.
        texture: u16,
        /// Laid triplanar in the rock's own space with tiles of this size
        /// (a fraction of the radius), instead of by (u, v).
        triplanar: Option<f32>,
    },
    /// Albedo from a colour image (an OBJ material's `map_Kd`), looked up
    /// by the mesh's texture coordinates, which the world keeps.
    Textured {
        /// Index into the world's textures.
        texture: u16,
        /// Largest change of brightness from object to object, a
        /// fraction, as a [`Material::Tinted`] run's (0: none).
        variation: f32,
        /// Seed of that change's hash.
        seed: u64,
    },
    /// Layers of colour and bumps over terrain
    /// ([`crate::shade::layers::Layers`]), which the world keeps and
    /// evaluates with what it knows of the ground; their albedo is not
    /// this enum's to give.
    Layers,
    /// One albedo made a little lighter or darker for each of a run of
    /// objects (scattered rocks), by a hash of the object's place in the
    /// run: one material for any number of rocks.
    Tinted {
        /// The albedo before the tint.
        color: Vec3,
        /// Largest change of brightness, a fraction.
        variation: f32,
        /// Seed of the tint's hash.
        seed: u64,
        /// Index of the run's first object.
        first: u32,
    },
}

/// Where on a surface an albedo is looked up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SurfacePoint {
    /// World position.
    pub point: Vec3,
    /// Unit shading normal.
    pub normal: Vec3,
    /// Index of the triangle (0 for analytic rocks).
    pub face: u32,
    /// Index of the object.
    pub object: u32,
    /// For a rock, the point in its own unit-sphere space (zero otherwise).
    pub rock_point: Vec3,
}

impl Material {
    /// The tint of object `object` of a [`Material::Tinted`] run.
    #[inline]
    pub fn tint(color: Vec3, variation: f32, seed: u64, index: u32) -> Vec3 {
        (color * Material::brightness(variation, seed, index)).clamp(Vec3::ZERO, Vec3::ONE)
    }

    /// The factor object `index` of a run varying by `variation` is made
    /// lighter or darker by.
    #[inline]
    pub fn brightness(variation: f32, seed: u64, index: u32) -> f32 {
        let jitter = 2.0 * crate::hash::unit_f32(seed, 0x7A42, index as u64) - 1.0;
        1.0 + variation * jitter
    }

    /// Albedo at `at`; `textures` are the world's textures that
    /// `RockTexture` indexes.
    #[inline]
    pub fn albedo(&self, at: &SurfacePoint, textures: &[Arc<Texture>]) -> Vec3 {
        let (p, n, face) = (at.point, at.normal, at.face);
        match *self {
            Material::Albedo(c) => c,
            // The world evaluates layers and images by (u, v) itself
            // (World::albedo); grey is what they look like out of it.
            Material::Layers | Material::Textured { .. } => Vec3::splat(0.5),
            Material::Tinted {
                color,
                variation,
                seed,
                first,
            } => Material::tint(color, variation, seed, at.object.wrapping_sub(first)),
            Material::RockTexture {
                texture,
                triplanar: None,
            } => {
                let d = at.rock_point.normalize_or(Vec3::Y);
                let (u, v) = crate::texture::uv_of(d);
                textures[texture as usize].sample(u, v, Filter::Bilinear)
            }
            Material::RockTexture {
                texture,
                triplanar: Some(size),
            } => {
                // Weights from the direction from the rock's centre, a
                // normal that turns with the rock.
                let p = at.rock_point / size;
                let w = at.rock_point.normalize_or(Vec3::Y).abs().powf(4.0);
                let w = w / (w.x + w.y + w.z);
                let t = &textures[texture as usize];
                w.x * t.sample_tiled(p.z, -p.y)
                    + w.y * t.sample_tiled(p.x, p.z)
                    + w.z * t.sample_tiled(p.x, -p.y)
            }
            Material::HeightSlope {
                sand_top,
                grass_top,
                snow_bottom,
                steep_cos,
                blend,
                variation,
            } => {
                let y = p.y;
                let step = |edge: f32| smoothstep(edge - blend, edge + blend, y);
                let mut c = SAND.lerp(GRASS, step(sand_top));
                c = c.lerp(ROCK, step(grass_top));
                c = c.lerp(SNOW, step(snow_bottom));
                // Steep faces are rock; snow does not hold on them either.
                let steep = 1.0 - smoothstep(steep_cos - 0.05, steep_cos + 0.05, n.y);
                // Each face a little lighter or darker, from a hash of its index.
                let jitter =
                    1.0 + variation * (2.0 * crate::hash::unit_f32(0x7ACE, 0, face as u64) - 1.0);
                c.lerp(ROCK, steep) * jitter
            }
        }
    }
}

/// Hermite step from 0 at `e0` to 1 at `e1`. Edges that meet (a band blended over zero width: a terrain 0 high)
/// make a step, 1 from `e0` on, rather than 0/0 at `x == e0`.
#[inline]
fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    if e1 <= e0 {
        return if x < e0 { 0.0 } else { 1.0 };
    }
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(point: Vec3, normal: Vec3, face: u32) -> SurfacePoint {
        SurfacePoint {
            point,
            normal,
            face,
            object: 0,
            rock_point: Vec3::ZERO,
        }
    }

    #[test]
    fn smoothstep_over_zero_width_is_a_step() {
        assert_eq!(smoothstep(0.0, 0.0, -1e-9), 0.0);
        assert_eq!(smoothstep(0.0, 0.0, 0.0), 1.0);
        assert_eq!(smoothstep(0.0, 0.0, 1e-9), 1.0);
        assert_eq!(smoothstep(0.0, 2.0, 1.0), 0.5);
    }

    #[test]
    fn bands_by_height_and_slope() {
        let m = Material::HeightSlope {
            sand_top: 1.0,
            grass_top: 10.0,
            snow_bottom: 16.0,
            steep_cos: 40f32.to_radians().cos(),
            blend: 0.5,
            variation: 0.0,
        };
        let flat = Vec3::Y;
        assert_eq!(m.albedo(&at(Vec3::new(0.0, 0.0, 0.0), flat, 0), &[]), SAND);
        assert_eq!(m.albedo(&at(Vec3::new(0.0, 5.0, 0.0), flat, 0), &[]), GRASS);
        assert_eq!(m.albedo(&at(Vec3::new(0.0, 13.0, 0.0), flat, 0), &[]), ROCK);
        assert_eq!(m.albedo(&at(Vec3::new(0.0, 19.0, 0.0), flat, 0), &[]), SNOW);
        let cliff = Vec3::new(1.0, 0.2, 0.0).normalize();
        assert_eq!(m.albedo(&at(Vec3::new(0.0, 5.0, 0.0), cliff, 0), &[]), ROCK);
    }

    #[test]
    fn per_face_variation_stays_within_its_fraction_and_varies() {
        let m = Material::HeightSlope {
            sand_top: 1.0,
            grass_top: 10.0,
            snow_bottom: 16.0,
            steep_cos: 0.7,
            blend: 0.5,
            variation: 0.05,
        };
        let p = Vec3::new(0.0, 5.0, 0.0);
        let values: Vec<f32> = (0..200)
            .map(|f| m.albedo(&at(p, Vec3::Y, f), &[]).y / GRASS.y)
            .collect();
        assert!(values.iter().all(|v| (0.95..=1.05).contains(v)));
        let spread = values.iter().cloned().fold(f32::MIN, f32::max)
            - values.iter().cloned().fold(f32::MAX, f32::min);
        assert!(spread > 0.08, "faces differ: {spread}");
        assert_eq!(
            m.albedo(&at(p, Vec3::Y, 7), &[]),
            m.albedo(&at(p, Vec3::Y, 7), &[])
        );
    }

    /// A triplanar rock texture: along an axis of the rock's own space it
    /// reads that axis's projection alone (the others weigh nothing), and
    /// the weights blend to the same colour for a uniform texture.
    #[test]
    fn triplanar_rock_textures_read_their_projections() {
        let mut texels = Vec::new();
        for k in 0..16u32 {
            texels.push(Vec3::new(k as f32 / 16.0, 0.5, 1.0 - k as f32 / 16.0));
        }
        let t = Arc::new(Texture {
            source: None,
            width: 4,
            height: 4,
            texels,
        });
        let m = Material::RockTexture {
            texture: 0,
            triplanar: Some(0.5),
        };
        let on = |rock_point: Vec3| {
            let mut a = at(Vec3::ZERO, Vec3::Y, 0);
            a.rock_point = rock_point;
            m.albedo(&a, std::slice::from_ref(&t))
        };
        let x = Vec3::new(1.0, 0.3, -0.2);
        // Mostly along x: the x projection's (z, −y) / size dominates.
        let px = on(Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(px, t.sample_tiled(0.0, 0.0));
        let py = on(Vec3::new(0.0, 1.0, 0.0));
        assert_eq!(py, t.sample_tiled(0.0, 0.0));
        let mixed = on(x);
        assert!(mixed.min_element() >= 0.0 && mixed.max_element() <= 1.0);
        let flat = Arc::new(Texture {
            source: None,
            width: 2,
            height: 2,
            texels: vec![Vec3::splat(0.3); 4],
        });
        let mut a = at(Vec3::ZERO, Vec3::Y, 0);
        a.rock_point = x;
        assert!(
            (m.albedo(&a, &[flat]) - Vec3::splat(0.3))
                .abs()
                .max_element()
                < 1e-6
        );
    }
}
