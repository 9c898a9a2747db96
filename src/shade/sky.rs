//! The sky: background for rays that miss, fog colour and ambient light.

use glam::Vec3;

/// A sky model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sky {
    /// Blend from `horizon` to `zenith` with the direction's height, `ground`
    /// below the horizon, plus a glow around the sun.
    Gradient {
        /// Straight up.
        zenith: Vec3,
        /// At the horizon.
        horizon: Vec3,
        /// Below the horizon.
        ground: Vec3,
        /// Ambient strength on surfaces.
        ambient: f32,
    },
}

impl Sky {
    /// Radiance seen along unit direction `d`; `sun` is the unit direction
    /// toward the sun and `sun_color` its radiance.
    #[inline]
    pub fn radiance(&self, d: Vec3, sun: Vec3, sun_color: Vec3) -> Vec3 {
        match *self {
            Sky::Gradient {
                zenith,
                horizon,
                ground,
                ..
            } => {
                let base = if d.y >= 0.0 {
                    // sqrt keeps the bright band near the horizon narrow.
                    horizon.lerp(zenith, d.y.sqrt())
                } else {
                    horizon.lerp(ground, (-d.y * 8.0).min(1.0))
                };
                let c = d.dot(sun).max(0.0);
                let c2 = c * c;
                let c8 = c2 * c2 * c2 * c2;
                let glow = 0.08 * c8 + 4.0 * c8 * c8 * c8 * c8 * c8 * c8 * c8 * c8;
                base + sun_color * glow
            }
        }
    }

    /// Ambient irradiance on a surface with unit normal `n`: the sky above
    /// and the ground below, weighted by how much of each the normal sees.
    #[inline]
    pub fn ambient(&self, n: Vec3) -> Vec3 {
        match *self {
            Sky::Gradient {
                zenith,
                horizon,
                ground,
                ambient,
            } => {
                let sky = (zenith + horizon) * 0.5;
                let w = 0.5 + 0.5 * n.y;
                (ground * 0.5).lerp(sky, w) * ambient
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sky() -> Sky {
        Sky::Gradient {
            zenith: Vec3::Z,
            horizon: Vec3::Y,
            ground: Vec3::X,
            ambient: 1.0,
        }
    }

    #[test]
    fn gradient_ends() {
        let away = Vec3::new(0.0, -1.0, 0.0);
        assert_eq!(sky().radiance(Vec3::Y, away, Vec3::ONE), Vec3::Z);
        assert_eq!(sky().radiance(Vec3::X, away, Vec3::ONE), Vec3::Y);
        assert_eq!(sky().radiance(Vec3::NEG_Y, Vec3::Y, Vec3::ONE), Vec3::X);
    }

    #[test]
    fn ambient_up_sees_sky_down_sees_ground() {
        assert_eq!(sky().ambient(Vec3::Y), Vec3::new(0.0, 0.5, 0.5));
        assert_eq!(sky().ambient(Vec3::NEG_Y), Vec3::new(0.5, 0.0, 0.0));
    }
}
