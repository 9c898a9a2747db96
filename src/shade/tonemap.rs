//! From linear radiance to display values: exposure, tone curve, sRGB.

use glam::Vec3;

pub use crate::scene::Tonemap;

/// Applies the tone curve to exposed linear radiance; the result is in [0, 1].
#[inline]
pub fn apply(op: Tonemap, c: Vec3) -> Vec3 {
    let c = c.max(Vec3::ZERO);
    match op {
        // Narkowicz 2015, "ACES Filmic Tone Mapping Curve".
        Tonemap::Aces => {
            ((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14)).clamp(Vec3::ZERO, Vec3::ONE)
        }
        Tonemap::Reinhard => c / (c + 1.0),
        Tonemap::None => c.min(Vec3::ONE),
    }
}

/// sRGB transfer function (IEC 61966-2-1) of a value in [0, 1].
#[inline]
pub fn srgb_encode(x: f32) -> f32 {
    if x <= 0.003_130_8 {
        12.92 * x
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// A display value in [0, 1] to an 8-bit code, rounding to nearest.
#[inline]
pub fn to_u8(x: f32) -> u8 {
    (x.clamp(0.0, 1.0) * 255.0 + 0.5) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_fix_black_and_saturate() {
        for op in [Tonemap::Aces, Tonemap::Reinhard, Tonemap::None] {
            assert_eq!(apply(op, Vec3::ZERO), Vec3::ZERO);
            assert!(apply(op, Vec3::splat(1e6)).x > 0.99);
        }
        assert_eq!(apply(Tonemap::Reinhard, Vec3::ONE), Vec3::splat(0.5));
        // ACES fit at 1: 2.54 / 3.16.
        assert!((apply(Tonemap::Aces, Vec3::ONE).x - 2.54 / 3.16).abs() < 1e-6);
    }

    #[test]
    fn srgb_known_points() {
        assert_eq!(srgb_encode(0.0), 0.0);
        assert!((srgb_encode(1.0) - 1.0).abs() < 1e-6);
        assert!((srgb_encode(0.18) - 0.4614).abs() < 1e-3);
        assert_eq!(to_u8(1.0), 255);
        assert_eq!(to_u8(0.5), 128);
    }
}
