//! Layered terrain materials: layers of colour (or a triplanar image
//! texture) and bump, each masked by height, slope, aspect, curvature and
//! flow with soft edges, blended top to bottom over the first; masks can
//! be broken up by noise so borders are not contour lines. A detail layer
//! adds bump and albedo variation finer than the grid, in world units.
//!
//! The masks read plain numbers about the ground ([`Ground`]); the world
//! gathers them from the terrain.

use std::sync::Arc;

use glam::{Vec2, Vec3};

use crate::texture::Texture;

/// A layered material.
#[derive(Debug, Clone, PartialEq)]
pub struct Layers {
    /// The layers, bottom first; the first covers all ground.
    pub layers: Vec<Layer>,
    /// Fine detail everywhere, if any.
    pub detail: Option<Detail>,
    /// Seed of the masks' and the detail's noise.
    pub seed: u64,
}

/// One layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// Linear RGB albedo (multiplies the texture, if any).
    pub color: Vec3,
    /// An image laid triplanar: the texture and the world size of one tile.
    pub texture: Option<(Arc<Texture>, f32)>,
    /// Bumps: height and feature size, world units.
    pub bump: Option<Bump>,
    /// Roughness of a glossy sun highlight (GGX), 0.1–1; `None` is matte
    /// (Lambert alone).
    pub roughness: Option<f32>,
    /// Where the layer lies (the first layer's is not used).
    pub mask: Mask,
}

/// Noise bumps: h(p) = height · n(p / size), n value noise in [−1, 1].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bump {
    /// Height of the bumps, world units.
    pub height: f32,
    /// Feature size, world units.
    pub size: f32,
}

/// Fine detail: bumps, and albedo varied by a factor 1 + variation · n.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detail {
    /// The bumps.
    pub bump: Bump,
    /// Largest change of the albedo, a fraction.
    pub variation: f32,
}

/// Where a layer lies: each criterion given is a window [lo, hi] with soft
/// edges; the layer's weight is the product of its windows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Mask {
    /// Height, fraction of the terrain's relief (0 lowest, 1 highest).
    pub height: Option<[f32; 2]>,
    /// Slope, degrees from horizontal.
    pub slope: Option<[f32; 2]>,
    /// Facing: the compass bearing the slope faces (radians, clockwise
    /// from north +z toward east +x) and the half-width of the window
    /// (radians).
    pub aspect: Option<(f32, f32)>,
    /// Curvature, −1 (ridges) to 1 (gullies).
    pub curvature: Option<[f32; 2]>,
    /// Water flow, 0 (none) to 1 (the main channels).
    pub flow: Option<[f32; 2]>,
    /// Moisture, 1 at lakes and rivers to 0 at their reach.
    pub moisture: Option<[f32; 2]>,
    /// Width of the soft edges, a fraction of each criterion's unit
    /// (height 1, slope 90°, aspect 180°, curvature 2, flow 1).
    pub fuzz: f32,
    /// Noise added to the criteria, a fraction of their unit, and the
    /// noise's feature size in world units.
    pub noise: Option<(f32, f32)>,
}

/// What the masks read about a point of ground.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ground {
    /// World position.
    pub point: Vec3,
    /// Unit surface normal (before any bump).
    pub normal: Vec3,
    /// Height as a fraction of the terrain's relief.
    pub height: f32,
    /// Curvature, −1..1.
    pub curvature: f32,
    /// Flow, 0..1.
    pub flow: f32,
    /// Moisture, 0..1.
    pub moisture: f32,
}

/// Most layers a material may have.
pub const MAX_LAYERS: usize = 16;

impl Layers {
    /// Each layer's share of the surface at `g` (summing to 1): a layer's
    /// mask weight times what the layers above it leave uncovered.
    pub fn coverage(&self, g: &Ground) -> [f32; MAX_LAYERS] {
        let mut weights = [0.0f32; MAX_LAYERS];
        weights[0] = 1.0;
        for (k, layer) in self.layers.iter().enumerate().skip(1) {
            weights[k] = layer.mask.weight(g, self.seed ^ k as u64);
        }
        let mut coverage = [0.0f32; MAX_LAYERS];
        let mut left = 1.0;
        for k in (0..self.layers.len()).rev() {
            coverage[k] = weights[k] * left;
            left *= 1.0 - weights[k];
        }
        coverage
    }

    /// The albedo at `g` and its gloss ([`Layers::gloss`]), from one pass
    /// over the masks.
    pub fn look(&self, g: &Ground) -> (Vec3, Option<(f32, f32)>) {
        let coverage = self.coverage(g);
        (self.albedo_by(&coverage, g), self.gloss_by(&coverage))
    }

    /// The albedo at `g`.
    pub fn albedo(&self, g: &Ground) -> Vec3 {
        self.albedo_by(&self.coverage(g), g)
    }

    fn albedo_by(&self, coverage: &[f32; MAX_LAYERS], g: &Ground) -> Vec3 {
        let mut c = Vec3::ZERO;
        for (layer, &w) in self.layers.iter().zip(coverage) {
            if w > 0.0 {
                c += w * layer.albedo(g);
            }
        }
        if let Some(d) = &self.detail {
            let (n, _) = value_noise(g.point / d.bump.size, self.seed ^ 0xDE7A);
            c *= 1.0 + d.variation * n;
        }
        c.clamp(Vec3::ZERO, Vec3::ONE)
    }

    /// The share of the surface at `g` that is glossy (covered by layers
    /// with a roughness) and its mean roughness there; `None` where no
    /// glossy layer lies.
    pub fn gloss(&self, g: &Ground) -> Option<(f32, f32)> {
        if self.layers.iter().all(|l| l.roughness.is_none()) {
            return None;
        }
        self.gloss_by(&self.coverage(g))
    }

    fn gloss_by(&self, coverage: &[f32; MAX_LAYERS]) -> Option<(f32, f32)> {
        let (mut share, mut sum) = (0.0, 0.0);
        for (layer, &w) in self.layers.iter().zip(coverage) {
            if let Some(r) = layer.roughness {
                share += w;
                sum += w * r;
            }
        }
        (share > 0.0).then(|| (share, sum / share))
    }

    /// The shading normal at `g`: `n` (the surface's smooth normal) tilted
    /// by the slope of the layers' bumps (by coverage) and the detail's.
    pub fn shading_normal(&self, g: &Ground, n: Vec3) -> Vec3 {
        let coverage = self.coverage(g);
        let mut grad = Vec3::ZERO;
        for (k, (layer, &w)) in self.layers.iter().zip(&coverage).enumerate() {
            if let (Some(b), true) = (layer.bump, w > 0.0) {
                grad += w * bump_gradient(b, g.point, self.seed ^ (0xB0 + k as u64));
            }
        }
        if let Some(d) = &self.detail {
            grad += bump_gradient(d.bump, g.point, self.seed ^ 0xDE7A);
        }
        let tangential = grad - grad.dot(n) * n;
        (n - tangential).try_normalize().unwrap_or(n)
    }
}

impl Layer {
    /// This layer's albedo at `g`: its colour, times its texture laid
    /// along the three axes and blended by the fourth powers of the
    /// normal's components.
    fn albedo(&self, g: &Ground) -> Vec3 {
        let Some((texture, size)) = &self.texture else {
            return self.color;
        };
        let p = g.point / *size;
        let w = g.normal.abs().powf(4.0);
        let w = w / (w.x + w.y + w.z);
        let mut c = Vec3::ZERO;
        for (weight, (u, v)) in [(w.x, (p.z, p.y)), (w.y, (p.x, p.z)), (w.z, (p.x, p.y))] {
            if weight > 0.0 {
                c += weight * texture.sample_tiled(u, -v);
            }
        }
        self.color * c
    }
}

impl Mask {
    /// The mask's weight at `g`, 0–1.
    pub fn weight(&self, g: &Ground, seed: u64) -> f32 {
        let wobble = match self.noise {
            Some((amount, size)) => amount * value_noise(g.point / size, seed).0,
            None => 0.0,
        };
        let f = self.fuzz;
        let mut w = 1.0;
        if let Some(r) = self.height {
            w *= window(g.height + wobble, r, f, [0.0, 1.0]);
        }
        if let Some(r) = self.slope {
            let slope = g.normal.y.clamp(-1.0, 1.0).acos().to_degrees();
            w *= window(slope + 90.0 * wobble, r, 90.0 * f, [0.0, 90.0]);
        }
        if let Some((facing, half_width)) = self.aspect {
            let h = Vec2::new(g.normal.x, g.normal.z);
            let dir = Vec2::new(facing.sin(), facing.cos());
            let off = match h.try_normalize() {
                Some(h) => h.dot(dir).clamp(-1.0, 1.0).acos(),
                None => 0.0,
            };
            let pi = std::f32::consts::PI;
            let along = window(off + pi * wobble, [0.0, half_width], pi * f, [0.0, pi]);
            // Flat ground faces nowhere: it passes.
            let tilt = smoothstep(0.05, 0.25, h.length());
            w *= 1.0 + tilt * (along - 1.0);
        }
        if let Some(r) = self.curvature {
            w *= window(g.curvature + 2.0 * wobble, r, 2.0 * f, [-1.0, 1.0]);
        }
        if let Some(r) = self.flow {
            w *= window(g.flow + wobble, r, f, [0.0, 1.0]);
        }
        if let Some(r) = self.moisture {
            w *= window(g.moisture + wobble, r, f, [0.0, 1.0]);
        }
        w
    }
}

/// 1 inside [lo, hi], 0 outside, with smooth edges `fuzz` wide on each
/// side; an edge at or beyond the end of its domain is open.
#[inline]
fn window(v: f32, [lo, hi]: [f32; 2], fuzz: f32, domain: [f32; 2]) -> f32 {
    let rise = if lo <= domain[0] {
        1.0
    } else {
        soft_step(lo, fuzz, v)
    };
    let fall = if hi >= domain[1] {
        1.0
    } else {
        1.0 - soft_step(hi, fuzz, v)
    };
    rise * fall
}

/// 0 below `edge − fuzz`, 1 above `edge + fuzz`, smooth between; a step
/// at `edge` for no fuzz.
#[inline]
fn soft_step(edge: f32, fuzz: f32, v: f32) -> f32 {
    if fuzz <= 0.0 {
        return if v < edge { 0.0 } else { 1.0 };
    }
    smoothstep(edge - fuzz, edge + fuzz, v)
}

/// Hermite step from 0 at `e0` to 1 at `e1` (falling where `e1 < e0`).
#[inline]
pub(crate) fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

/// The gradient of h(p) = height · n(p / size).
#[inline]
pub fn bump_gradient(b: Bump, p: Vec3, seed: u64) -> Vec3 {
    let (_, g) = value_noise(p / b.size, seed);
    g * (b.height / b.size)
}

/// Value noise in [−1, 1] at `p` (lattice values hashed from `seed`,
/// blended with the quintic fade) and its gradient.
pub fn value_noise(p: Vec3, seed: u64) -> (f32, Vec3) {
    let cell = p.floor();
    let f = p - cell;
    let (i, j, k) = (cell.x as i64, cell.y as i64, cell.z as i64);
    let fade = |t: f32| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
    let dfade = |t: f32| 30.0 * t * t * (t * (t - 2.0) + 1.0);
    let (u, v, w) = (fade(f.x), fade(f.y), fade(f.z));
    let (du, dv, dw) = (dfade(f.x), dfade(f.y), dfade(f.z));
    let at = |a: i64, b: i64, c: i64| {
        let key = (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (b as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (c as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
        2.0 * crate::hash::unit_f32(seed, 0x7A1E, key) - 1.0
    };
    let c000 = at(i, j, k);
    let c100 = at(i + 1, j, k);
    let c010 = at(i, j + 1, k);
    let c110 = at(i + 1, j + 1, k);
    let c001 = at(i, j, k + 1);
    let c101 = at(i + 1, j, k + 1);
    let c011 = at(i, j + 1, k + 1);
    let c111 = at(i + 1, j + 1, k + 1);
    // n = Σ corners · weights; written out as the trilinear polynomial.
    let k0 = c000;
    let k1 = c100 - c000;
    let k2 = c010 - c000;
    let k3 = c001 - c000;
    let k4 = c000 - c100 - c010 + c110;
    let k5 = c000 - c010 - c001 + c011;
    let k6 = c000 - c100 - c001 + c101;
    let k7 = -c000 + c100 + c010 - c110 + c001 - c101 - c011 + c111;
    let n = k0 + k1 * u + k2 * v + k3 * w + k4 * u * v + k5 * v * w + k6 * w * u + k7 * u * v * w;
    let g = Vec3::new(
        du * (k1 + k4 * v + k6 * w + k7 * v * w),
        dv * (k2 + k5 * w + k4 * u + k7 * w * u),
        dw * (k3 + k6 * u + k5 * v + k7 * u * v),
    );
    (n, g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ground(height: f32, normal: Vec3) -> Ground {
        Ground {
            point: Vec3::new(3.0, 10.0, -2.0),
            normal: normal.normalize(),
            height,
            curvature: 0.0,
            flow: 0.0,
            moisture: 0.0,
        }
    }

    fn from_slope(deg: f32, bearing: f32) -> Vec3 {
        let (s, b) = (deg.to_radians(), bearing.to_radians());
        Vec3::new(s.sin() * b.sin(), s.cos(), s.sin() * b.cos())
    }

    fn layer(color: Vec3, mask: Mask) -> Layer {
        Layer {
            color,
            texture: None,
            bump: None,
            roughness: None,
            mask,
        }
    }

    /// Masks at known heights, slopes and aspects give the expected
    /// weights: 1 inside, 0 outside, ½ on an edge with fuzz, a smoothstep
    /// between.
    #[test]
    fn masks_weigh_height_slope_and_aspect() {
        let m = Mask {
            height: Some([0.5, 0.8]),
            fuzz: 0.1,
            ..Mask::default()
        };
        let flat = Vec3::Y;
        assert_eq!(m.weight(&ground(0.65, flat), 1), 1.0);
        assert_eq!(m.weight(&ground(0.3, flat), 1), 0.0);
        assert_eq!(m.weight(&ground(0.95, flat), 1), 0.0);
        assert!((m.weight(&ground(0.5, flat), 1) - 0.5).abs() < 1e-6);
        assert!((m.weight(&ground(0.8, flat), 1) - 0.5).abs() < 1e-6);
        // A quarter of the way into the rising edge: smoothstep(0.25).
        let quarter = 0.25f32 * 0.25 * (3.0 - 2.0 * 0.25);
        assert!((m.weight(&ground(0.45, flat), 1) - quarter).abs() < 1e-6);

        // Slope in degrees; the open end (90°) has no edge.
        let steep = Mask {
            slope: Some([40.0, 90.0]),
            fuzz: 0.0,
            ..Mask::default()
        };
        assert_eq!(steep.weight(&ground(0.5, from_slope(39.0, 0.0)), 1), 0.0);
        assert_eq!(steep.weight(&ground(0.5, from_slope(41.0, 0.0)), 1), 1.0);
        assert_eq!(steep.weight(&ground(0.5, from_slope(89.9, 0.0)), 1), 1.0);

        // Aspect: slopes facing north (bearing 0) within 45°, flat ground
        // passes, a south face does not.
        let north = Mask {
            aspect: Some((0.0, 45f32.to_radians())),
            fuzz: 0.0,
            ..Mask::default()
        };
        assert_eq!(north.weight(&ground(0.5, from_slope(30.0, 10.0)), 1), 1.0);
        assert_eq!(north.weight(&ground(0.5, from_slope(30.0, 350.0)), 1), 1.0);
        assert_eq!(north.weight(&ground(0.5, from_slope(30.0, 60.0)), 1), 0.0);
        assert_eq!(north.weight(&ground(0.5, from_slope(30.0, 180.0)), 1), 0.0);
        assert_eq!(north.weight(&ground(0.5, Vec3::Y), 1), 1.0);

        // Curvature and flow windows.
        let gully = Mask {
            curvature: Some([0.3, 1.0]),
            flow: Some([0.5, 1.0]),
            fuzz: 0.0,
            ..Mask::default()
        };
        let mut g = ground(0.5, flat);
        (g.curvature, g.flow) = (0.6, 0.7);
        assert_eq!(gully.weight(&g, 1), 1.0);
        g.flow = 0.2;
        assert_eq!(gully.weight(&g, 1), 0.0);
        (g.curvature, g.flow) = (-0.6, 0.7);
        assert_eq!(gully.weight(&g, 1), 0.0);
    }

    /// Layers blend top over bottom: coverages sum to 1, the top layer
    /// takes its full weight, and the albedo is the coverage-weighted mean.
    #[test]
    fn layers_blend_top_over_bottom() {
        let (a, b, c) = (Vec3::X, Vec3::Y, Vec3::Z);
        let layers = Layers {
            layers: vec![
                layer(a, Mask::default()),
                layer(
                    b,
                    Mask {
                        height: Some([0.5, 1.0]),
                        fuzz: 0.1,
                        ..Mask::default()
                    },
                ),
                layer(
                    c,
                    Mask {
                        slope: Some([40.0, 90.0]),
                        fuzz: 0.0,
                        ..Mask::default()
                    },
                ),
            ],
            detail: None,
            seed: 1,
        };
        let g = ground(0.5, Vec3::Y);
        let cov = layers.coverage(&g);
        assert!((cov[..3].iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert_eq!(cov[2], 0.0);
        assert!((cov[1] - 0.5).abs() < 1e-6 && (cov[0] - 0.5).abs() < 1e-6);
        assert!((layers.albedo(&g) - Vec3::new(0.5, 0.5, 0.0)).length() < 1e-6);
        let cliff = ground(0.9, from_slope(60.0, 0.0));
        assert_eq!(layers.albedo(&cliff), c);
    }

    /// Noise breaks a border: along a line of constant height at the edge,
    /// the weight now varies; the noise's gradient matches a central
    /// difference.
    #[test]
    fn noise_breaks_borders_and_has_the_right_gradient() {
        let m = Mask {
            height: Some([0.5, 1.0]),
            fuzz: 0.02,
            noise: Some((0.1, 2.0)),
            ..Mask::default()
        };
        let weights: Vec<f32> = (0..200)
            .map(|k| {
                let mut g = ground(0.5, Vec3::Y);
                g.point = Vec3::new(k as f32 * 0.37, 10.0, 0.0);
                m.weight(&g, 4)
            })
            .collect();
        assert!(weights.iter().any(|&w| w < 0.05) && weights.iter().any(|&w| w > 0.95));
        for p in [Vec3::new(0.3, 1.7, -2.2), Vec3::new(10.5, -3.25, 7.9)] {
            let (_, g) = value_noise(p, 9);
            let h = 1e-3;
            let d =
                |e: Vec3| (value_noise(p + e * h, 9).0 - value_noise(p - e * h, 9).0) / (2.0 * h);
            let numeric = Vec3::new(d(Vec3::X), d(Vec3::Y), d(Vec3::Z));
            assert!(
                (g - numeric).length() < 2e-3 * (1.0 + g.length()),
                "{g} vs {numeric}"
            );
            assert!(value_noise(p, 9).0.abs() <= 1.0);
        }
    }

    /// Bumps tilt the shading normal and leave it unit length; without
    /// bumps the normal is unchanged.
    #[test]
    fn bumps_tilt_the_shading_normal() {
        let mut layers = Layers {
            layers: vec![layer(Vec3::ONE, Mask::default())],
            detail: None,
            seed: 2,
        };
        let g = ground(0.5, Vec3::Y);
        assert_eq!(layers.shading_normal(&g, Vec3::Y), Vec3::Y);
        layers.detail = Some(Detail {
            bump: Bump {
                height: 0.1,
                size: 0.5,
            },
            variation: 0.0,
        });
        let tilts: Vec<f32> = (0..50)
            .map(|k| {
                let mut g = g;
                g.point.x = k as f32 * 0.173;
                let n = layers.shading_normal(&g, Vec3::Y);
                assert!((n.length() - 1.0).abs() < 1e-5);
                n.y.acos()
            })
            .collect();
        assert!(tilts.iter().any(|&t| t > 0.05), "{tilts:?}");
    }
}

#[cfg(test)]
mod gloss_tests {
    use super::*;

    /// Only glossy layers count: their share and mean roughness.
    #[test]
    fn gloss_is_the_glossy_layers_share() {
        let matte = Layer {
            color: Vec3::ONE,
            texture: None,
            bump: None,
            roughness: None,
            mask: Mask::default(),
        };
        let mut wet = matte.clone();
        wet.roughness = Some(0.2);
        wet.mask = Mask {
            height: Some([0.0, 0.5]),
            fuzz: 0.1,
            ..Mask::default()
        };
        let layers = Layers {
            layers: vec![matte.clone(), wet],
            detail: None,
            seed: 1,
        };
        let at = |h: f32| Ground {
            point: Vec3::ZERO,
            normal: Vec3::Y,
            height: h,
            curvature: 0.0,
            flow: 0.0,
            moisture: 0.0,
        };
        assert_eq!(layers.gloss(&at(0.2)), Some((1.0, 0.2)));
        let (share, r) = layers.gloss(&at(0.5)).unwrap();
        assert!((share - 0.5).abs() < 1e-6 && (r - 0.2).abs() < 1e-6);
        assert_eq!(layers.gloss(&at(0.9)), None);
        let all_matte = Layers {
            layers: vec![matte],
            detail: None,
            seed: 1,
        };
        assert_eq!(all_matte.gloss(&at(0.2)), None);
    }
}
