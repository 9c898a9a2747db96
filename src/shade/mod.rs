//! Shading: materials, the sun, the sky, fog and tone mapping. Everything is
//! linear RGB until [`tonemap`].

pub mod atmosphere;
pub mod brdf;
pub mod clouds;
pub mod file;
pub mod layers;
pub mod material;
pub mod sky;
pub mod tonemap;
pub mod water;

pub use file::{CloudFile, FogFile, MaterialFile, SkyFile, SkyLightFile, SunFile, WaterFile};
pub use material::{Material, SurfacePoint};
pub use sky::Sky;
pub use tonemap::Tonemap;
pub use water::Water;

use glam::Vec3;

/// A directional light.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sun {
    /// Unit direction from the surface toward the sun.
    pub direction: Vec3,
    /// Irradiance on a surface facing the sun, linear RGB.
    pub radiance: Vec3,
    /// Angular radius of the sun's disc, radians (0: a point, hard shadows).
    pub angular_radius: f32,
}

/// How sky light is gathered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SkyLight {
    /// Cosine-weighted occlusion rays per camera sample (0: unoccluded sky).
    pub samples: u32,
    /// Occlusion rays stop at this distance, world units.
    pub distance: f32,
}

impl Sun {
    /// The direction toward a sun at `elevation` above the horizon and
    /// compass `azimuth` (clockwise from north +z toward east +x), radians.
    pub fn direction_from(elevation: f32, azimuth: f32) -> Vec3 {
        Vec3::new(
            elevation.cos() * azimuth.sin(),
            elevation.sin(),
            elevation.cos() * azimuth.cos(),
        )
    }
}

/// Exponential fog whose density falls off with height:
/// σ(y) = density · exp(−height_falloff · (y − base_height)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fog {
    /// Extinction per world unit at `base_height` (0: no fog).
    pub density: f32,
    /// Fixed colour, or None for the sky colour in the view direction.
    pub color: Option<Vec3>,
    /// Inverse scale height (0: uniform fog).
    pub height_falloff: f32,
    /// Height where the density is `density`.
    pub base_height: f32,
    /// Share of the extinction that scatters the sun toward the eye.
    pub sun_scatter: f32,
    /// Henyey–Greenstein asymmetry of that scattering.
    pub anisotropy: f32,
}

impl Fog {
    /// Optical depth along a ray from height `origin_y` with vertical
    /// direction component `dir_y` (unit direction) over `distance`:
    /// ∫₀ᵗ σ(y₀ + s·d_y) ds = σ(y₀) · (1 − e^(−k·d_y·t)) / (k·d_y).
    #[inline]
    pub fn optical_depth(&self, origin_y: f32, dir_y: f32, distance: f32) -> f32 {
        let k = self.height_falloff;
        let start = self.density * (-k * (origin_y - self.base_height)).exp();
        let a = k * dir_y * distance;
        if a.abs() < 1e-4 {
            // (1 − e^−a)/a = 1 − a/2 + …; exact for uniform fog.
            start * distance * (1.0 - 0.5 * a)
        } else {
            start * (1.0 - (-a).exp()) / (k * dir_y)
        }
    }

    /// The distance along a ray from height `origin_y` (vertical direction
    /// component `dir_y`) at which the optical depth reaches `tau`: the
    /// inverse of [`Fog::optical_depth`], for drawing points in
    /// proportion to the fog's scattering. None past the fog's total.
    #[inline]
    pub fn distance_at(&self, origin_y: f32, dir_y: f32, tau: f32) -> Option<f32> {
        let k = self.height_falloff;
        let start = self.density * (-k * (origin_y - self.base_height)).exp();
        if start <= 0.0 {
            return None;
        }
        let a = k * dir_y;
        if a.abs() < 1e-6 {
            return Some(tau / start);
        }
        let x = 1.0 - tau * a / start;
        (x > 0.0).then(|| -x.ln() / a)
    }

    /// `surface` seen from `origin_y` along a ray with vertical component
    /// `dir_y` through `distance` units of fog, fading toward the fog colour
    /// (the sky colour from `sky_color` when the fog has none; it is only
    /// evaluated then, since a physical sky is costly per ray).
    #[inline]
    pub fn apply(
        &self,
        surface: Vec3,
        origin_y: f32,
        dir_y: f32,
        distance: f32,
        sky_color: impl FnOnce() -> Vec3,
    ) -> Vec3 {
        if self.density <= 0.0 {
            return surface;
        }
        let keep = (-self.optical_depth(origin_y, dir_y, distance)).exp();
        let fog = self.color.unwrap_or_else(sky_color);
        surface * keep + fog * (1.0 - keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sun_direction_follows_the_compass() {
        let east = Sun::direction_from(0.0, 90f32.to_radians());
        assert!((east - Vec3::X).length() < 1e-6);
        let north_up = Sun::direction_from(30f32.to_radians(), 0.0);
        assert!((north_up - Vec3::new(0.0, 0.5, 0.75f32.sqrt())).length() < 1e-6);
    }

    fn uniform(density: f32, color: Option<Vec3>) -> Fog {
        Fog {
            density,
            color,
            height_falloff: 0.0,
            base_height: 0.0,
            sun_scatter: 0.0,
            anisotropy: 0.0,
        }
    }

    #[test]
    fn fog_fades_to_its_colour() {
        let fog = uniform(0.1, Some(Vec3::ONE));
        assert_eq!(
            fog.apply(Vec3::ZERO, 0.0, 0.3, 0.0, || Vec3::ZERO),
            Vec3::ZERO
        );
        let half = fog.apply(Vec3::ZERO, 5.0, 0.3, 2f32.ln() / 0.1, || Vec3::ZERO);
        assert!((half - Vec3::splat(0.5)).length() < 1e-6);
        let sky_fog = uniform(0.1, None);
        assert!((sky_fog.apply(Vec3::ZERO, 0.0, 0.0, 1e6, || Vec3::X) - Vec3::X).length() < 1e-6);
    }

    #[test]
    fn height_fog_optical_depth_matches_numeric_integral() {
        let fog = Fog {
            density: 0.05,
            color: None,
            height_falloff: 0.2,
            base_height: 3.0,
            sun_scatter: 0.0,
            anisotropy: 0.0,
        };
        for (y0, dy, t) in [
            (10.0f32, -0.3f32, 25.0f32),
            (0.0, 0.5, 40.0),
            (5.0, 0.0, 12.0),
            (5.0, 1e-6, 12.0),
        ] {
            let n = 100_000;
            let numeric: f64 = (0..n)
                .map(|i| {
                    let s = (i as f64 + 0.5) / n as f64 * t as f64;
                    let y = y0 as f64 + s * dy as f64;
                    0.05 * (-0.2 * (y - 3.0)).exp() * t as f64 / n as f64
                })
                .sum();
            let exact = fog.optical_depth(y0, dy, t) as f64;
            assert!(
                (exact - numeric).abs() < 1e-4 * numeric.max(1.0),
                "({y0}, {dy}, {t}): {exact} vs {numeric}"
            );
        }
        // The inverse: the distance at which each share of the depth is
        // reached, back to that depth.
        for (y0, dy, t) in [
            (10.0f32, -0.3f32, 25.0f32),
            (0.0, 0.5, 40.0),
            (5.0, 0.0, 12.0),
        ] {
            let total = fog.optical_depth(y0, dy, t);
            for share in [0.1f32, 0.5, 0.9] {
                let s = fog
                    .distance_at(y0, dy, share * total)
                    .expect("within the fog");
                let back = fog.optical_depth(y0, dy, s);
                assert!((back / (share * total) - 1.0).abs() < 1e-4, "{back}");
            }
        }
        // Fog thins with height: a horizontal ray high up sees less fog.
        assert!(fog.optical_depth(30.0, 0.0, 10.0) < fog.optical_depth(3.0, 0.0, 10.0));
    }
}
