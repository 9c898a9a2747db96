//! The sky as a light to sample: its radiance tabulated over the sphere in
//! latitude–longitude bins, a piecewise-constant distribution over the
//! bins weighted by sin θ (as pbrt-v4 samples an image infinite light), so
//! that bright parts of the sky are chosen in proportion to their light.

use glam::Vec3;

use crate::sampling::Distribution1D;
use crate::shade::Sky;

/// Bins around the horizon.
const COLS: usize = 128;
/// Bins from the zenith to the nadir.
const ROWS: usize = 64;

/// A sampling distribution over directions proportional (per bin) to the
/// sky's radiance.
#[derive(Debug, Clone)]
pub struct SkyMap {
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
    /// The distribution of `radiance` (the sky as light on surfaces) over
    /// the sphere. Each bin's weight is its brightest channel at its centre
    /// plus 1 % of the mean, so that no direction with any light has
    /// probability 0.
    pub fn new(radiance: impl Fn(Vec3) -> Vec3) -> SkyMap {
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
        let mean = values.iter().sum::<f32>() / values.len() as f32;
        let floor = (0.01 * mean).max(1e-6);
        let rows: Vec<Distribution1D> = values
            .chunks(COLS)
            .enumerate()
            .map(|(row, v)| {
                let sin = (std::f32::consts::PI * (row as f32 + 0.5) / ROWS as f32).sin();
                Distribution1D::new(v.iter().map(|&x| (x + floor) * sin).collect())
            })
            .collect();
        let marginal = Distribution1D::new(rows.iter().map(Distribution1D::integral).collect());
        SkyMap { rows, marginal }
    }

    /// The map of `sky`'s light on surfaces (without the gradient sky's
    /// glow, which is the sun's).
    pub fn of(sky: &Sky) -> SkyMap {
        SkyMap::new(|d| emission(sky, d))
    }

    /// A direction drawn from the map with the uniform numbers `u`, and
    /// its density per steradian.
    #[inline]
    pub fn sample(&self, u: (f32, f32)) -> (Vec3, f32) {
        let (v, pv, row) = self.marginal.sample(u.1);
        let (uu, pu, _) = self.rows[row].sample(u.0);
        let d = direction(uu, v);
        let sin = (std::f32::consts::PI * v).sin();
        let pdf = if sin > 0.0 {
            pu * pv / (2.0 * std::f32::consts::PI * std::f32::consts::PI * sin)
        } else {
            0.0
        };
        (d, pdf)
    }

    /// Density per steradian of drawing unit direction `d`.
    #[inline]
    pub fn pdf(&self, d: Vec3) -> f32 {
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
        let p = self.marginal.density(row) * self.rows[row].density_at(u);
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
    fn a_uniform_sky_is_sampled_uniformly_over_the_sphere() {
        let map = SkyMap::new(|_| Vec3::splat(0.7));
        let uniform = 1.0 / (4.0 * std::f32::consts::PI);
        // At the centre of each row (where its weight's sin θ was taken)
        // the density is the uniform one, within the midpoint rule's
        // error; inside a row it varies as 1 / sin θ.
        for row in [0, 5, 31, 32, 50, 63] {
            let theta = (row as f32 + 0.5) / ROWS as f32 * std::f32::consts::PI;
            let d = Vec3::new(theta.sin() * 0.6, theta.cos(), theta.sin() * 0.8);
            let p = map.pdf(d);
            assert!((p / uniform - 1.0).abs() < 2e-4, "row {row}: {p}");
        }
        assert!((integral(&map) - 1.0).abs() < 2e-3);
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
            let (d, p) = map.sample(u);
            assert!((d.length() - 1.0).abs() < 1e-5);
            let q = map.pdf(d);
            assert!((p - q).abs() <= 1e-3 * p, "sample {k}: {p} against {q}");
        }
    }

    #[test]
    fn bright_sky_is_drawn_more_often() {
        // Five times brighter above the horizon than below: the mean is 3,
        // so each bin's weight has 0.03 added.
        let map = SkyMap::new(|d| Vec3::splat(if d.y > 0.0 { 5.0 } else { 1.0 }));
        let up = map.pdf(Vec3::new(0.6, 0.5, 0.0).normalize());
        let down = map.pdf(Vec3::new(0.6, -0.5, 0.0).normalize());
        assert!((up / down - 5.03 / 1.03).abs() < 1e-4, "{up} / {down}");
    }
}
