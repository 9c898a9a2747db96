//! Shading: materials, the sun, the sky, fog and tone mapping. Everything is
//! linear RGB until [`tonemap`].

pub mod material;
pub mod sky;
pub mod tonemap;

pub use material::Material;
pub use sky::Sky;
pub use tonemap::Tonemap;

use glam::Vec3;

/// A directional light.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sun {
    /// Unit direction from the surface toward the sun.
    pub direction: Vec3,
    /// Irradiance on a surface facing the sun, linear RGB.
    pub radiance: Vec3,
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

/// Exponential distance fog.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fog {
    /// Extinction per world unit (0: no fog).
    pub density: f32,
    /// Fixed colour, or None for the sky colour in the view direction.
    pub color: Option<Vec3>,
}

impl Fog {
    /// `surface` seen through `distance` units of fog whose colour is `fog_color`.
    #[inline]
    pub fn apply(&self, surface: Vec3, distance: f32, sky_color: Vec3) -> Vec3 {
        if self.density <= 0.0 {
            return surface;
        }
        let keep = (-self.density * distance).exp();
        let fog = self.color.unwrap_or(sky_color);
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

    #[test]
    fn fog_fades_to_its_colour() {
        let fog = Fog {
            density: 0.1,
            color: Some(Vec3::ONE),
        };
        assert_eq!(fog.apply(Vec3::ZERO, 0.0, Vec3::ZERO), Vec3::ZERO);
        let half = fog.apply(Vec3::ZERO, 2f32.ln() / 0.1, Vec3::ZERO);
        assert!((half - Vec3::splat(0.5)).length() < 1e-6);
        let sky_fog = Fog {
            density: 0.1,
            color: None,
        };
        assert!((sky_fog.apply(Vec3::ZERO, 1e6, Vec3::X) - Vec3::X).length() < 1e-6);
    }
}
