//! The sky as a light to sample: its radiance tabulated over the sphere in
//! latitude–longitude bins, and a piecewise-constant distribution over the
//! bins weighted by sin θ, so that bright parts of the sky are chosen in
//! proportion to their light.
//!
//! The distribution is *MIS-compensated* (Karlík et al. 2019, "MIS
//! Compensation"; pbrt-v4's image infinite light): each bin's weight is
//! how far its radiance exceeds the sky's mean, not the radiance itself.
//! The path tracer always pairs a sky draw with a cosine-weighted BSDF
//! draw that covers every direction the sky can light, so the sky draw
//! need only bring the parts brighter than average; the dim rest, which it
//! would sample worse than the BSDF does, is left to the BSDF. A sky with
//! no part brighter than its mean (a uniform one) is not drawn at all, as
//! pbrt-v4's uniform infinite light is not: there the cosine draw alone is
//! the better estimator, and its shadow ray is saved.

use glam::Vec3;

use crate::sampling::Distribution1D;
use crate::shade::Sky;

/// Bins around the horizon.
const COLS: usize = 128;
/// Bins from the zenith to the nadir.
const ROWS: usize = 64;

/// How far above the mean the brightest bin must be, as a share of the
/// mean, for the sky to be drawn: below it the sky is uniform but for
/// rounding.
const UNIFORM: f32 = 1e-3;

/// A sampling distribution over directions proportional (per bin) to how
/// much the sky's radiance exceeds its mean.
#[derive(Debug, Clone)]
pub struct SkyMap {
    /// None where the sky is uniform: nothing to draw.
    table: Option<Table>,
}

#[derive(Debug, Clone)]
struct Table {
    /// One distribution per row over its columns.
    rows: Vec<Distribution1D>,
    /// The distribution over rows (each row's integral).
    marginal: Distribution1D,
}

/// Direction of the point (u, v) of the unit square: φ = 2πu around the
/// vertical from +x toward +z, θ = πv down from the zenith.
#[inline]
fn direction(u: f32, v: f32) -> Vec3 {
    let (sin_t, cos_t) = (std::f32::consts::PI * v).sin_cos();
    let (sin_p, cos_p) = (std::f32::consts::TAU * u).sin_cos();
    Vec3::new(sin_t * cos_p, cos_t, sin_t * sin_p)
}

impl SkyMap {
    /// The compensated distribution of `radiance` (the sky as light on
    /// surfaces) over the sphere: each bin's weight is its brightest
    /// channel at its centre less the mean over the sphere (by solid
    /// angle), where positive, times sin θ.
    pub fn new(radiance: impl Fn(Vec3) -> Vec3) -> SkyMap {
        let sin: [f32; ROWS] = std::array::from_fn(|row| {
            (std::f32::consts::PI * (row as f32 + 0.5) / ROWS as f32).sin()
        });
        let values: Vec<f32> = (0..ROWS * COLS)
            .map(|k| {
                let (row, col) = (k / COLS, k % COLS);
                let d = direction(
                    (col as f32 + 0.5) / COLS as f32,
                    (row as f32 + 0.5) / ROWS as f32,
                );
                radiance(d).max_element().max(0.0)
            })
            .collect();
        let sum: f64 = values
            .iter()
            .enumerate()
            .map(|(k, &v)| (v * sin[k / COLS]) as f64)
            .sum();
        let area: f64 = sin.iter().map(|&s| s as f64).sum::<f64>() * COLS as f64;
        let mean = (sum / area) as f32;
        let peak = values.iter().fold(0.0f32, |a, &v| a.max(v));
        if peak - mean <= UNIFORM * mean {
            return SkyMap { table: None };
        }
        let rows: Vec<Distribution1D> = values
            .chunks(COLS)
            .enumerate()
            .map(|(row, v)| {
                Distribution1D::new(v.iter().map(|&x| (x - mean).max(0.0) * sin[row]).collect())
            })
            .collect();
        let marginal = Distribution1D::new(rows.iter().map(Distribution1D::integral).collect());
        SkyMap {
            table: Some(Table { rows, marginal }),
        }
    }

    /// The map of `sky`'s light on surfaces (without the gradient sky's
    /// glow, which is the sun's).
    pub fn of(sky: &Sky) -> SkyMap {
        SkyMap::new(|d| emission(sky, d))
    }

    /// A direction drawn from the map with the uniform numbers `u` gives
    /// (asked only when there is a table), and its density per steradian;
    /// None for a uniform sky.
    #[inline]
    pub fn sample(&self, u: impl FnOnce() -> (f32, f32)) -> Option<(Vec3, f32)> {
        let table = self.table.as_ref()?;
        let u = u();
        let (v, pv, row) = table.marginal.sample(u.1);
        let (uu, pu, _) = table.rows[row].sample(u.0);
        let d = direction(uu, v);
        let sin = (std::f32::consts::PI * v).sin();
        let pdf = if sin > 0.0 {
            pu * pv / (2.0 * std::f32::consts::PI * std::f32::consts::PI * sin)
        } else {
            0.0
        };
        Some((d, pdf))
    }

    /// Density per steradian of drawing unit direction `d` (0 where its
    /// bin is no brighter than the mean, and everywhere on a uniform sky).
    #[inline]
    pub fn pdf(&self, d: Vec3) -> f32 {
        let Some(table) = &self.table else {
            return 0.0;
        };
        let v = d.y.clamp(-1.0, 1.0).acos() * std::f32::consts::FRAC_1_PI;
        let mut u = d.z.atan2(d.x) / std::f32::consts::TAU;
        if u < 0.0 {
            u += 1.0;
        }
        let sin = (1.0 - d.y * d.y).max(0.0).sqrt();
        if sin <= 0.0 {
            return 0.0;
        }
        let row = ((v * ROWS as f32) as usize).min(ROWS - 1);
        let p = table.marginal.density(row) * table.rows[row].density_at(u);
        p / (2.0 * std::f32::consts::PI * std::f32::consts::PI * sin)
    }
}

/// Radiance of `sky` as light on surfaces along unit direction `d`.
#[inline]
pub fn emission(sky: &Sky, d: Vec3) -> Vec3 {
    sky.radiance_without_glow(d) * sky.ambient_strength()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ∫ pdf dω over the sphere, by a midpoint rule in (cos θ, φ).
    fn integral(map: &SkyMap) -> f64 {
        let n = 400;
        let mut sum = 0.0f64;
        for i in 0..n {
            let y = -1.0 + (i as f32 + 0.5) * 2.0 / n as f32;
            for j in 0..2 * n {
                let phi = (j as f32 + 0.5) * std::f32::consts::TAU / (2 * n) as f32;
                let r = (1.0 - y * y).sqrt();
                let d = Vec3::new(r * phi.cos(), y, r * phi.sin());
                sum += map.pdf(d) as f64;
            }
        }
        sum * (2.0 / n as f64) * (std::f64::consts::TAU / (2 * n) as f64)
    }

    #[test]
    fn a_uniform_sky_is_not_drawn() {
        let map = SkyMap::new(|_| Vec3::new(0.4, 0.5, 0.7));
        for u in [(0.0, 0.0), (0.3, 0.7), (0.999, 0.5)] {
            assert!(map.sample(|| u).is_none());
        }
        assert_eq!(map.pdf(Vec3::Y), 0.0);
        assert_eq!(map.pdf(Vec3::new(0.6, 0.0, 0.8)), 0.0);
    }

    #[test]
    fn the_density_of_a_sample_is_the_density_at_its_direction() {
        let map = SkyMap::new(|d| Vec3::new(0.2, 0.3, 0.5) * (1.0 + 4.0 * d.y.max(0.0)));
        assert!((integral(&map) - 1.0).abs() < 2e-3);
        for k in 0..200 {
            let u = (
                (k as f32 * 0.618_034) % 1.0,
                (k as f32 * 0.414_214 + 0.1) % 1.0,
            );
            let (d, p) = map.sample(|| u).expect("a sky that is not uniform");
            assert!((d.length() - 1.0).abs() < 1e-5);
            let q = map.pdf(d);
            assert!((p - q).abs() <= 1e-3 * p, "sample {k}: {p} against {q}");
        }
    }

    #[test]
    fn only_the_sky_brighter_than_its_mean_is_drawn() {
        // 5 above the horizon and 1 below: the mean over the sphere is 3,
        // so the upper half has weight 2 everywhere and the lower none.
        // At the centre of each upper row (where its weight's sin θ was
        // taken) the density is uniform over the hemisphere, 1 / 2π,
        // within the midpoint rule's error.
        let map = SkyMap::new(|d| Vec3::splat(if d.y > 0.0 { 5.0 } else { 1.0 }));
        let half = 1.0 / std::f32::consts::TAU;
        for row in [0, 5, 17, 31] {
            let theta = (row as f32 + 0.5) / ROWS as f32 * std::f32::consts::PI;
            let d = Vec3::new(theta.sin() * 0.6, theta.cos(), theta.sin() * 0.8);
            let p = map.pdf(d);
            assert!((p / half - 1.0).abs() < 2e-4, "row {row}: {p}");
            let below = Vec3::new(d.x, -d.y, d.z);
            assert_eq!(map.pdf(below), 0.0, "row {}", ROWS - 1 - row);
        }
        for k in 0..100 {
            let u = ((k as f32 * 0.618_034) % 1.0, (k as f32 * 0.414_214) % 1.0);
            let (d, _) = map.sample(|| u).expect("a sky that is not uniform");
            assert!(d.y > 0.0, "draw {k}: {d}");
        }
        assert!((integral(&map) - 1.0).abs() < 2e-3);
    }
}
