//! The sky: background for rays that miss, fog colour and the light that
//! surfaces receive from above.
//!
//! Three models: a colour `Gradient`; the Preetham, Shirley and Smits
//! analytic daylight model ("A Practical Analytic Model for Daylight",
//! SIGGRAPH 1999), whose sun colour comes from the same turbidity; and a
//! `Mars` preset (butterscotch dust by day, a blue glow around a low sun).

use std::f64::consts::PI;

use glam::{DVec3, Vec3};

/// A sky model. All radiances are linear sRGB.
#[derive(Debug, Clone, PartialEq)]
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
        /// Strength of the sky's light on surfaces.
        ambient: f32,
    },
    /// Preetham daylight.
    Preetham(Preetham),
    /// Mars preset.
    Mars(Mars),
    /// Hosek–Wilkie daylight.
    HosekWilkie(HosekWilkie),
    /// The physical atmosphere ([`super::atmosphere`]).
    Atmosphere(std::sync::Arc<AtmosphereSky>),
}

/// The physical atmosphere as the scene's sky: its tables and the light
/// they are per unit of.
#[derive(Debug, Clone, PartialEq)]
pub struct AtmosphereSky {
    /// The tables, seen from the camera.
    pub model: super::atmosphere::Atmosphere,
    /// The sun's irradiance above the atmosphere times the sky's
    /// intensity: what the tables' radiances are per unit of.
    pub scale: Vec3,
    /// Strength of the sky's light on surfaces.
    pub ambient: f32,
}

/// Scale from the Hosek–Wilkie RGB model's radiance to scene radiance,
/// chosen so that its zenith at T = 3 with the sun 60° high (ground albedo
/// 0.2) has the luminance of the Preetham zenith there (about 0.52).
pub const HOSEK_WILKIE_SCALE: f32 = 0.0921;

/// L. Hosek, A. Wilkie, "An Analytic Model for Full Spectral Sky-Dome
/// Radiance" (SIGGRAPH 2012), RGB version, through the `hw-skymodel`
/// crate (a port of the authors' BSD reference and its fitted data): for
/// one sun elevation, turbidity and ground albedo, precomputed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HosekWilkie {
    /// The model's state (its nine coefficients per channel).
    pub state: hw_skymodel::rgb::SkyState,
    /// Unit direction toward the sun.
    pub sun: Vec3,
    /// Multiplier on the model's radiance.
    pub intensity: f32,
    /// Strength of the sky's light on surfaces.
    pub ambient: f32,
    /// Ground colour below the horizon.
    pub ground: Vec3,
}

impl HosekWilkie {
    /// The sky for the sun in direction `sun` (unit, y up), `turbidity`
    /// 1..=10 and `ground_albedo` 0..=1. The model is fitted for the sun
    /// above the horizon: below it the sky keeps the sunset state and
    /// darkens over 6°, as the Preetham sky does.
    pub fn new(
        sun: Vec3,
        turbidity: f32,
        ground_albedo: f32,
        intensity: f32,
        ambient: f32,
    ) -> HosekWilkie {
        let elevation = sun.y.clamp(0.0, 1.0).asin();
        let state = hw_skymodel::rgb::SkyState::new(&hw_skymodel::rgb::SkyParams {
            elevation,
            turbidity: turbidity.clamp(1.0, 10.0),
            albedo: [ground_albedo.clamp(0.0, 1.0); 3],
        })
        .expect("parameters clamped to the model's ranges");
        HosekWilkie {
            state,
            sun,
            intensity,
            ambient,
            ground: Vec3::new(0.25, 0.23, 0.21),
        }
    }

    /// The model's linear RGB radiance, unscaled, at zenith angle `theta`
    /// and angle `gamma` from the sun.
    pub fn model(&self, theta: f32, gamma: f32) -> Vec3 {
        use hw_skymodel::rgb::Channel;
        Vec3::new(
            self.state.radiance(theta, gamma, Channel::R),
            self.state.radiance(theta, gamma, Channel::G),
            self.state.radiance(theta, gamma, Channel::B),
        )
    }

    /// Linear sRGB radiance in unit direction `d`.
    pub fn radiance(&self, d: Vec3) -> Vec3 {
        let above = Vec3::new(d.x, d.y.max(0.0), d.z).normalize_or(Vec3::X);
        let theta = above
            .y
            .clamp(-1.0, 1.0)
            .acos()
            .min(std::f32::consts::FRAC_PI_2 - 1e-3);
        let sun_up = Vec3::new(self.sun.x, self.sun.y.max(0.0), self.sun.z).normalize_or(Vec3::X);
        let gamma = above.dot(sun_up).clamp(-1.0, 1.0).acos();
        let dusk = ((self.sun.y + 0.1) / 0.1).clamp(0.0, 1.0);
        let sky = (self.model(theta, gamma) * (HOSEK_WILKIE_SCALE * self.intensity * dusk))
            .max(Vec3::ZERO);
        if d.y >= 0.0 {
            sky
        } else {
            sky.lerp(self.ground * sky.length() * 0.5, (-d.y * 8.0).min(1.0))
        }
    }
}

/// Scale from the model's luminance (kcd/m²) to scene radiance: a clear
/// zenith at T = 3 with the sun 60° high (about 10 kcd/m²) becomes about 0.5.
pub const PREETHAM_SCALE: f64 = 0.05;

/// The Preetham sky for one sun position and turbidity, precomputed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preetham {
    /// Unit direction toward the sun.
    pub sun: DVec3,
    /// Atmospheric turbidity T (2 clear – 10 hazy).
    pub turbidity: f64,
    /// Zenith luminance Y_z (kcd/m²) and chromaticity (x_z, y_z).
    pub zenith: [f64; 3],
    /// Perez coefficients A..E for Y, x and y.
    coeffs: [[f64; 5]; 3],
    /// F(0, θ_s) for Y, x and y: the normalisation of each distribution.
    norms: [f64; 3],
    /// Multiplier on the model's radiance.
    pub intensity: f64,
    /// Strength of the sky's light on surfaces.
    pub ambient: f32,
    /// Ground colour below the horizon.
    pub ground: Vec3,
}

/// Zenith luminance Y_z in kcd/m² (Preetham et al. 1999, appendix A.2):
/// χ = (4/9 − T/120)(π − 2θ_s), Y_z = (4.0453 T − 4.9710) tan χ − 0.2155 T + 2.4192.
pub fn zenith_luminance(turbidity: f64, theta_sun: f64) -> f64 {
    let t = turbidity;
    let chi = (4.0 / 9.0 - t / 120.0) * (PI - 2.0 * theta_sun);
    (4.0453 * t - 4.9710) * chi.tan() - 0.2155 * t + 2.4192
}

/// Zenith chromaticity (x_z, y_z): (T², T, 1) · M · (θ_s³, θ_s², θ_s, 1)
/// with the paper's matrices for x and y.
pub fn zenith_chromaticity(turbidity: f64, theta_sun: f64) -> (f64, f64) {
    const X: [[f64; 4]; 3] = [
        [0.00166, -0.00375, 0.00209, 0.0],
        [-0.02903, 0.06377, -0.03202, 0.00394],
        [0.11693, -0.21196, 0.06052, 0.25886],
    ];
    const Y: [[f64; 4]; 3] = [
        [0.00275, -0.00610, 0.00317, 0.0],
        [-0.04214, 0.08970, -0.04153, 0.00516],
        [0.15346, -0.26756, 0.06670, 0.26688],
    ];
    let th = [theta_sun.powi(3), theta_sun.powi(2), theta_sun, 1.0];
    let t = [turbidity * turbidity, turbidity, 1.0];
    let eval = |m: &[[f64; 4]; 3]| -> f64 {
        (0..3)
            .map(|r| t[r] * (0..4).map(|c| m[r][c] * th[c]).sum::<f64>())
            .sum()
    };
    (eval(&X), eval(&Y))
}

/// Perez distribution coefficients A..E for (Y, x, y) at turbidity T.
fn perez_coefficients(t: f64) -> [[f64; 5]; 3] {
    [
        [
            0.1787 * t - 1.4630,
            -0.3554 * t + 0.4275,
            -0.0227 * t + 5.3251,
            0.1206 * t - 2.5771,
            -0.0670 * t + 0.3703,
        ],
        [
            -0.0193 * t - 0.2592,
            -0.0665 * t + 0.0008,
            -0.0004 * t + 0.2125,
            -0.0641 * t - 0.8989,
            -0.0033 * t + 0.0452,
        ],
        [
            -0.0167 * t - 0.2608,
            -0.0950 * t + 0.0092,
            -0.0079 * t + 0.2102,
            -0.0441 * t - 1.6537,
            -0.0109 * t + 0.0529,
        ],
    ]
}

/// Perez: F(θ, γ) = (1 + A e^{B / cos θ})(1 + C e^{Dγ} + E cos²γ).
fn perez(c: &[f64; 5], cos_theta: f64, gamma: f64) -> f64 {
    let [a, b, cc, d, e] = *c;
    (1.0 + a * (b / cos_theta.max(1e-3)).exp())
        * (1.0 + cc * (d * gamma).exp() + e * gamma.cos().powi(2))
}

/// CIE xyY to linear sRGB (D65).
pub fn xyy_to_linear_srgb(x: f64, y: f64, big_y: f64) -> DVec3 {
    if y <= 0.0 {
        return DVec3::ZERO;
    }
    let bx = x / y * big_y;
    let bz = (1.0 - x - y) / y * big_y;
    DVec3::new(
        3.2406 * bx - 1.5372 * big_y - 0.4986 * bz,
        -0.9689 * bx + 1.8758 * big_y + 0.0415 * bz,
        0.0557 * bx - 0.2040 * big_y + 1.0570 * bz,
    )
}

impl Preetham {
    /// The sky for the sun in direction `sun` (unit, y up).
    pub fn new(sun: Vec3, turbidity: f64, intensity: f64, ambient: f32) -> Preetham {
        let sun = sun.as_dvec3().normalize();
        // The model is defined for the sun above the horizon; below it the
        // sky keeps the sunset distribution and darkens (see `radiance`).
        let theta_s = sun.y.clamp(0.0, 1.0).acos();
        let (xz, yz) = zenith_chromaticity(turbidity, theta_s);
        let yz_lum = zenith_luminance(turbidity, theta_s).max(0.0);
        let coeffs = perez_coefficients(turbidity);
        let norms = coeffs.map(|c| perez(&c, 1.0, theta_s));
        Preetham {
            sun,
            turbidity,
            zenith: [yz_lum, xz, yz],
            coeffs,
            norms,
            intensity,
            ambient,
            ground: Vec3::new(0.25, 0.23, 0.21),
        }
    }

    /// CIE xyY of the sky in unit direction `d` above the horizon.
    pub fn xyy(&self, d: DVec3) -> (f64, f64, f64) {
        let cos_theta = d.y.max(1e-3);
        let gamma = d.dot(self.sun).clamp(-1.0, 1.0).acos();
        let v =
            |k: usize| self.zenith[k] * perez(&self.coeffs[k], cos_theta, gamma) / self.norms[k];
        (v(1), v(2), v(0))
    }

    /// Linear sRGB radiance in unit direction `d`.
    pub fn radiance(&self, d: Vec3) -> Vec3 {
        let d = d.as_dvec3();
        let horizon_d = DVec3::new(d.x, d.y.max(0.0), d.z).normalize_or(DVec3::X);
        let (x, y, lum) = self.xyy(horizon_d);
        // Night falls over the 6° after sunset.
        let dusk = ((self.sun.y + 0.1) / 0.1).clamp(0.0, 1.0);
        let c = (xyy_to_linear_srgb(x, y, lum) * PREETHAM_SCALE * self.intensity * dusk)
            .max(DVec3::ZERO);
        let sky = c.as_vec3();
        if d.y >= 0.0 {
            sky
        } else {
            sky.lerp(
                self.ground * sky.length() * 0.5,
                ((-d.y * 8.0) as f32).min(1.0),
            )
        }
    }
}

/// Transmittance of the atmosphere for direct sunlight at linear sRGB's
/// representative wavelengths (R 0.65, G 0.55, B 0.45 µm), from the same
/// paper's appendix: relative optical mass
/// m = 1 / (cos θ_s + 0.15 (93.885 − θ_s°)^−1.253), Rayleigh
/// τ_R = exp(−0.008735 λ^−4.08 m), aerosols with Ångström β = 0.04608 T − 0.04586,
/// α = 1.3: τ_a = exp(−β λ^−α m). Zero once the sun is below the horizon.
pub fn sun_transmittance(elevation: f64, turbidity: f64) -> Vec3 {
    if elevation <= 0.0 {
        return Vec3::ZERO;
    }
    let theta = PI / 2.0 - elevation;
    let m = 1.0 / (theta.cos() + 0.15 * (93.885 - theta.to_degrees()).powf(-1.253));
    let beta = 0.04608 * turbidity - 0.04586;
    let tau = |lambda: f64| {
        (-0.008735 * lambda.powf(-4.08) * m).exp() * (-beta * lambda.powf(-1.3) * m).exp()
    };
    Vec3::new(tau(0.65) as f32, tau(0.55) as f32, tau(0.45) as f32)
}

/// The Mars preset: suspended dust scatters red light across the sky and
/// blue light forward, so the day sky is butterscotch and the sky around a
/// setting sun turns blue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mars {
    /// Unit direction toward the sun.
    pub sun: Vec3,
    /// Multiplier on the sky's radiance.
    pub intensity: f32,
    /// Strength of the sky's light on surfaces.
    pub ambient: f32,
}

/// Mars day-sky dust colour (linear sRGB).
pub const MARS_DUST: Vec3 = Vec3::new(0.62, 0.36, 0.20);
/// The forward-scattered blue around a low sun.
pub const MARS_BLUE: Vec3 = Vec3::new(0.25, 0.45, 0.85);

impl Mars {
    /// Linear sRGB radiance in unit direction `d`.
    pub fn radiance(&self, d: Vec3) -> Vec3 {
        let el = self.sun.y; // sine of the sun's elevation
        let day = smooth(-0.12, 0.25, el);
        let up = d.y.max(0.0);
        // Dust sky: brighter and paler toward the horizon.
        let base = MARS_DUST * (0.35 + 0.65 * (1.0 - up).powi(2)) * day * 0.9;
        // Forward scattering around the sun: a halo that turns blue as the
        // sun sinks (mostly blue below about 10° elevation).
        let c = d.dot(self.sun).max(0.0);
        let halo = (c.powi(8) * 0.6 + c.powi(64) * 1.5) * smooth(-0.15, 0.05, el);
        let blue = 1.0 - smooth(0.05, 0.35, el);
        let halo_color = (MARS_DUST * 1.4).lerp(MARS_BLUE * 1.6, blue);
        let sky = (base + halo_color * halo) * self.intensity;
        if d.y >= 0.0 {
            sky
        } else {
            sky.lerp(MARS_DUST * 0.25 * day, (-d.y * 8.0).min(1.0))
        }
    }

    /// The sun's tint on Mars: dimmer than on Earth (1.52 AU) and reddened
    /// by dust near the horizon.
    pub fn sun_tint(elevation: f64) -> Vec3 {
        if elevation <= 0.0 {
            return Vec3::ZERO;
        }
        let m = 1.0 / elevation.sin().max(0.02);
        let tau = |k: f64| (-k * m).exp() as f32;
        Vec3::new(tau(0.10), tau(0.16), tau(0.24)) * 0.6
    }
}

fn smooth(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

impl Sky {
    /// Radiance seen along unit direction `d`; `sun` is the unit direction
    /// toward the sun and `sun_color` its radiance (the gradient sky adds a
    /// glow around it; the physical models have their own).
    #[inline]
    pub fn radiance(&self, d: Vec3, sun: Vec3, sun_color: Vec3) -> Vec3 {
        let sky = self.radiance_without_glow(d);
        match self {
            Sky::Gradient { .. } => {
                let c = d.dot(sun).max(0.0);
                let c2 = c * c;
                let c8 = c2 * c2 * c2 * c2;
                let glow = 0.08 * c8 + 4.0 * c8 * c8 * c8 * c8 * c8 * c8 * c8 * c8;
                sky + sun_color * glow * 0.3
            }
            Sky::Preetham(_) | Sky::Mars(_) | Sky::HosekWilkie(_) | Sky::Atmosphere(_) => sky,
        }
    }

    /// Radiance along unit direction `d` without the gradient sky's glow
    /// around the sun: the sky as light on surfaces, which the sun lights
    /// on its own (the physical models' brightening near the sun stays: it
    /// is their sky).
    #[inline]
    pub fn radiance_without_glow(&self, d: Vec3) -> Vec3 {
        match self {
            Sky::Gradient {
                zenith,
                horizon,
                ground,
                ..
            } => {
                if d.y >= 0.0 {
                    // sqrt keeps the bright band near the horizon narrow.
                    horizon.lerp(*zenith, d.y.sqrt())
                } else {
                    horizon.lerp(*ground, (-d.y * 8.0).min(1.0))
                }
            }
            Sky::Preetham(p) => p.radiance(d),
            Sky::Mars(m) => m.radiance(d),
            Sky::HosekWilkie(h) => h.radiance(d),
            Sky::Atmosphere(a) => a.model.sky(d) * a.scale,
        }
    }

    /// The air between the eye and a point `distance` world units along
    /// unit direction `d` from it: (transmittance, radiance it scatters
    /// toward the eye). Only the physical atmosphere has air; every other
    /// sky has none (its haze is the fog's).
    #[inline]
    pub fn air(&self, d: Vec3, distance: f32) -> Option<(Vec3, Vec3)> {
        match self {
            Sky::Atmosphere(a) => {
                let (through, light) = a.model.aerial(d, distance);
                Some((through, light * a.scale))
            }
            _ => None,
        }
    }

    /// `surface` seen through the air over `distance` along `d`
    /// ([`Sky::air`]): dimmed, and the air's light added.
    #[inline]
    pub fn aerial(&self, surface: Vec3, d: Vec3, distance: f32) -> Vec3 {
        match self.air(d, distance) {
            Some((through, light)) => surface * through + light,
            None => surface,
        }
    }

    /// Strength of the sky's light on surfaces.
    pub fn ambient_strength(&self) -> f32 {
        match self {
            Sky::Gradient { ambient, .. } => *ambient,
            Sky::Preetham(p) => p.ambient,
            Sky::Mars(m) => m.ambient,
            Sky::HosekWilkie(h) => h.ambient,
            Sky::Atmosphere(a) => a.ambient,
        }
    }

    /// Unoccluded sky light on a surface with unit normal `n`, as the
    /// radiance that an albedo multiplies: the sky straight along the normal
    /// and at the horizon, averaged. Used when no occlusion rays are traced.
    pub fn ambient(&self, n: Vec3) -> Vec3 {
        let along = self.radiance_without_glow(n);
        let across = match self {
            // The gradient depends on elevation alone: every horizontal
            // direction sees the horizon colour.
            Sky::Gradient { .. } => self.radiance_without_glow(Vec3::X),
            _ => self.radiance_without_glow(Vec3::new(n.x, 0.0, n.z).normalize_or(Vec3::X)),
        };
        (along * 0.6 + across * 0.4) * self.ambient_strength()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_ends() {
        let sky = Sky::Gradient {
            zenith: Vec3::Z,
            horizon: Vec3::Y,
            ground: Vec3::X,
            ambient: 1.0,
        };
        let away = Vec3::new(0.0, -1.0, 0.0);
        assert_eq!(sky.radiance(Vec3::Y, away, Vec3::ONE), Vec3::Z);
        assert_eq!(sky.radiance(Vec3::X, away, Vec3::ONE), Vec3::Y);
        assert_eq!(sky.radiance(Vec3::NEG_Y, Vec3::Y, Vec3::ONE), Vec3::X);
    }

    /// Without a sun colour the gradient has no glow, even looking into
    /// the sun; with one, the glow peaks there.
    #[test]
    fn glow_follows_the_sun_colour() {
        let sky = Sky::Gradient {
            zenith: Vec3::new(0.2, 0.4, 0.9),
            horizon: Vec3::new(0.7, 0.8, 0.9),
            ground: Vec3::splat(0.3),
            ambient: 1.0,
        };
        let sun = Vec3::new(1.0, 0.5, 0.0).normalize();
        let base = Vec3::new(0.7, 0.8, 0.9).lerp(Vec3::new(0.2, 0.4, 0.9), sun.y.sqrt());
        assert_eq!(sky.radiance(sun, sun, Vec3::ZERO), base);
        // Into the sun, c = 1 (to rounding): glow 0.08 + 4.
        let lit = sky.radiance(sun, sun, Vec3::ONE);
        assert!(
            (lit - (base + Vec3::splat((0.08 + 4.0) * 0.3)))
                .abs()
                .max_element()
                < 1e-4
        );
        let away = Vec3::new(-1.0, 0.5, 0.0).normalize();
        assert!(sky.radiance(away, sun, Vec3::ONE).x < lit.x - 1.0);
    }

    #[test]
    fn unoccluded_ambient_mixes_the_sky_along_and_beside_the_normal() {
        let sky = Sky::Gradient {
            zenith: Vec3::Z,
            horizon: Vec3::Y,
            ground: Vec3::X,
            ambient: 2.0,
        };
        // Up: 0.6·zenith + 0.4·horizon, times the strength 2.
        assert_eq!(sky.ambient(Vec3::Y), Vec3::new(0.0, 0.8, 1.2));
        // Down: 0.6·ground + 0.4·horizon.
        assert_eq!(sky.ambient(Vec3::NEG_Y), Vec3::new(1.2, 0.8, 0.0));
    }

    /// Preetham appendix A.2 by hand, T = 3, sun 30° from the zenith
    /// (θ_s = 0.5235988):
    /// χ = (4/9 − 3/120)(π − 2·0.5235988) = 0.4194444 · 2.0943951 = 0.8784824,
    /// tan χ = 1.2059327,
    /// Y_z = (4.0453·3 − 4.9710)·1.2059327 − 0.2155·3 + 2.4192
    ///     = 7.1649 · 1.2059327 − 0.6465 + 2.4192 = 10.4130869 kcd/m².
    /// With θ_s³ = 0.1435476, θ_s² = 0.2741557:
    /// x_z = 9·(0.00166·0.1435476 − 0.00375·0.2741557 + 0.00209·0.5235988)
    ///     + 3·(−0.02903·0.1435476 + 0.06377·0.2741557 − 0.03202·0.5235988 + 0.00394)
    ///     + (0.11693·0.1435476 − 0.21196·0.2741557 + 0.06052·0.5235988 + 0.25886)
    ///     = 9·0.0000338 + 3·0.0001634 + 0.2492232 = 0.2534342,
    /// y_z = 9·0.0000425 + 3·0.0006525 + 0.2504798 = 0.2597925.
    #[test]
    fn zenith_values_t3_sun_30_degrees_from_zenith() {
        let th = 30f64.to_radians();
        assert!((zenith_luminance(3.0, th) - 10.4130869).abs() < 1e-6);
        let (x, y) = zenith_chromaticity(3.0, th);
        assert!((x - 0.2534342).abs() < 1e-6, "{x}");
        assert!((y - 0.2597925).abs() < 1e-6, "{y}");
    }

    /// T = 5, sun 70° from the zenith (θ_s = 1.2217305):
    /// χ = (4/9 − 5/120)(π − 2.4434610) = 0.4027778 · 0.6981317 = 0.2811919,
    /// tan χ = 0.2888453, Y_z = (20.2265 − 4.9710)·0.2888453 − 1.0775 + 2.4192
    /// = 15.2555·0.2888453 + 1.3417 = 5.7481789.
    /// x_z = 25·(−0.0000168) + 5·0.0070662 + 0.2296542 = 0.2645658,
    /// y_z = 25·(−0.0002173) + 5·0.0114641 + 0.2288501 = 0.2807390.
    #[test]
    fn zenith_values_t5_low_sun() {
        let th = 70f64.to_radians();
        assert!((zenith_luminance(5.0, th) - 5.7481789).abs() < 1e-6);
        let (x, y) = zenith_chromaticity(5.0, th);
        assert!((x - 0.2645658).abs() < 1e-6, "{x}");
        assert!((y - 0.2807390).abs() < 1e-6, "{y}");
    }

    /// The Hosek–Wilkie radiance is the paper's formula (eq. 9) with the
    /// state's fitted coefficients, evaluated here on its own in f64:
    /// (1 + A e^(B/(cos θ + 0.01))) (C + D e^(Eγ) + F cos²γ + G χ(H, γ) +
    /// I cos^½ θ) · L_M, χ = (1 + cos²γ) / (1 + H² − 2H cos γ)^(3/2); at
    /// the zenith and at the horizon, to 1e-4 relative.
    #[test]
    fn hosek_wilkie_radiance_is_the_papers_formula() {
        let sun = Vec3::new(0.0, 35f32.to_radians().sin(), 35f32.to_radians().cos());
        let h = HosekWilkie::new(sun, 3.0, 0.2, 1.0, 1.0);
        let (params, radiances) = h.state.raw();
        let formula = |theta: f64, gamma: f64, c: usize| {
            let p: Vec<f64> = params[9 * c..9 * c + 9].iter().map(|&v| v as f64).collect();
            let (cos_t, cos_g) = (theta.cos().abs(), gamma.cos());
            let chi = (1.0 + cos_g * cos_g) / (1.0 + p[8] * p[8] - 2.0 * p[8] * cos_g).powf(1.5);
            (1.0 + p[0] * (p[1] / (cos_t + 0.01)).exp())
                * (p[2]
                    + p[3] * (p[4] * gamma).exp()
                    + p[5] * cos_g * cos_g
                    + p[6] * chi
                    + p[7] * cos_t.sqrt())
                * radiances[c] as f64
        };
        let sun_zenith = 55f64.to_radians();
        for (theta, gamma) in [
            (0.0, sun_zenith),
            (89.9f64.to_radians(), 100f64.to_radians()),
            (89.9f64.to_radians(), 40f64.to_radians()),
        ] {
            let ours = h.model(theta as f32, gamma as f32);
            for c in 0..3 {
                let exact = formula(theta, gamma, c);
                let rel = (ours[c] as f64 - exact).abs() / exact.abs();
                assert!(
                    rel < 1e-4,
                    "θ {theta}, γ {gamma}, channel {c}: {} vs {exact}",
                    ours[c]
                );
            }
        }
    }

    /// Calibrated to the Preetham zenith (T = 3, sun 60° high), a clear
    /// Hosek–Wilkie sky is blue overhead, brighter toward the horizon and
    /// brightest near the sun, and fades after sunset.
    #[test]
    fn hosek_wilkie_sky_is_calibrated_and_looks_like_daylight() {
        let luminance = |c: Vec3| c.dot(Vec3::new(0.2126, 0.7152, 0.0722));
        let sun60 = Vec3::new(0.0, 60f32.to_radians().sin(), 60f32.to_radians().cos());
        let h = HosekWilkie::new(sun60, 3.0, 0.2, 1.0, 1.0);
        let p = Preetham::new(sun60, 3.0, 1.0, 1.0);
        let (hz, pz) = (
            luminance(h.radiance(Vec3::Y)),
            luminance(p.radiance(Vec3::Y)),
        );
        assert!((hz / pz - 1.0).abs() < 5e-3, "{hz} vs {pz}");
        let zenith = h.radiance(Vec3::Y);
        assert!(zenith.z > zenith.x, "blue overhead: {zenith}");
        let away = Vec3::new(0.0, 0.05, -1.0).normalize();
        assert!(
            luminance(h.radiance(away)) > luminance(zenith),
            "brighter low down"
        );
        let near_sun = Vec3::new(0.0, 55f32.to_radians().sin(), 55f32.to_radians().cos());
        assert!(luminance(h.radiance(near_sun)) > 2.0 * luminance(zenith));
        let night = HosekWilkie::new(Vec3::new(0.0, -0.2, 1.0).normalize(), 3.0, 0.2, 1.0, 1.0);
        assert_eq!(night.radiance(Vec3::Y), Vec3::ZERO);
    }

    #[test]
    fn preetham_zenith_radiance_is_the_zenith_value() {
        let sun = Vec3::new(0.0, 60f32.to_radians().sin(), 60f32.to_radians().cos());
        let p = Preetham::new(sun, 3.0, 1.0, 1.0);
        let (x, y, lum) = p.xyy(DVec3::Y);
        assert!(
            (lum - p.zenith[0]).abs() < 1e-9
                && (x - p.zenith[1]).abs() < 1e-9
                && (y - p.zenith[2]).abs() < 1e-9
        );
    }

    #[test]
    fn noon_sky_is_blue_overhead_and_bright_and_white_at_the_horizon() {
        let sun = Vec3::new(0.0, 70f32.to_radians().sin(), 70f32.to_radians().cos());
        let sky = Sky::Preetham(Preetham::new(sun, 3.0, 1.0, 1.0));
        let luminance = |c: Vec3| c.dot(Vec3::new(0.2126, 0.7152, 0.0722));
        // 90° around from the sun: 30° up, and at the horizon.
        let up = sky.radiance(Vec3::new(1.0, 0.577, 0.0).normalize(), sun, Vec3::ONE);
        let horizon = sky.radiance(Vec3::new(1.0, 0.03, 0.0).normalize(), sun, Vec3::ONE);
        assert!(up.z > 1.5 * up.x, "blue sky overhead: {up}");
        assert!(
            luminance(horizon) > luminance(up),
            "horizon {horizon} brighter than {up}"
        );
        assert!(
            horizon.z / horizon.x < 0.5 * up.z / up.x,
            "horizon whiter than the sky above"
        );
    }

    #[test]
    fn sun_reddens_toward_the_horizon() {
        let high = sun_transmittance(60f64.to_radians(), 3.0);
        let low = sun_transmittance(3f64.to_radians(), 3.0);
        assert!(high.x > 0.5 && high.z > 0.5);
        assert!(
            low.x / low.z > 2.0 * high.x / high.z,
            "low {low} vs high {high}"
        );
        assert_eq!(sun_transmittance(-1f64.to_radians(), 3.0), Vec3::ZERO);
    }

    #[test]
    fn mars_day_is_red_and_sunset_glow_is_blue() {
        let day_sun = Vec3::new(0.0, 50f32.to_radians().sin(), 50f32.to_radians().cos());
        let day = Mars {
            sun: day_sun,
            intensity: 1.0,
            ambient: 1.0,
        };
        let sky = day.radiance(Vec3::new(1.0, 0.3, 0.0).normalize());
        assert!(sky.x > sky.z * 2.0, "red day sky {sky}");
        let set_sun = Vec3::new(0.0, 2f32.to_radians().sin(), 2f32.to_radians().cos());
        let dusk = Mars {
            sun: set_sun,
            intensity: 1.0,
            ambient: 1.0,
        };
        let near_sun = dusk.radiance(Vec3::new(0.0, 0.06, 1.0).normalize());
        assert!(
            near_sun.z > near_sun.x,
            "blue around the setting sun {near_sun}"
        );
        let away = dusk.radiance(Vec3::new(0.0, 0.3, -1.0).normalize());
        assert!(away.length() < near_sun.length());
    }
}
