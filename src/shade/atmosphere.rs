//! A physical atmosphere: Rayleigh and Mie scattering and ozone absorption
//! over a spherical planet, after Hillaire's "A Scalable and Production
//! Ready Sky and Atmosphere Rendering Technique" (EGSR 2020), with its
//! Earth constants. One model gives the sky, the sun's colour at the
//! ground and the aerial perspective between the eye and what it sees;
//! with the sun below the horizon the upper air it still lights gives
//! the twilight.
//!
//! Four tables, built once per scene in f64 and kept in f32:
//!
//! - **transmittance** to the top of the atmosphere over (altitude, cos of
//!   the zenith angle), in Bruneton and Neyret's parametrisation (2008),
//!   zero for rays that meet the ground;
//! - **multiple scattering** Ψ_ms over (altitude, cos of the sun's zenith
//!   angle): Hillaire's isotropic approximation of all orders of
//!   scattering from the second on, L₂ / (1 − f_ms), the ground's light
//!   included;
//! - **the sky seen from the eye** over (elevation, azimuth from the sun),
//!   finer toward the horizon; below the horizon, the lit ground through
//!   the air;
//! - **aerial perspective** from the eye over (elevation, azimuth,
//!   distance): transmittance and in-scattered light of the air between
//!   the eye and a surface.
//!
//! Radiances are per unit of the sun's irradiance at the top of the
//! atmosphere; the sky multiplies them by the scene's sun.

use glam::{DVec3, Vec3};
use rayon::prelude::*;

/// Radius of the ground, metres.
pub const BOTTOM: f64 = 6_360_000.0;
/// Radius of the top of the atmosphere, metres.
pub const TOP: f64 = 6_460_000.0;
/// Rayleigh scattering per metre at sea level (680, 550, 440 nm).
pub const RAYLEIGH: [f64; 3] = [5.802e-6, 13.558e-6, 33.1e-6];
/// Rayleigh scale height, metres.
pub const RAYLEIGH_HEIGHT: f64 = 8_000.0;
/// Mie scattering and absorption per metre at sea level.
pub const MIE_SCATTERING: f64 = 3.996e-6;
/// Mie absorption per metre at sea level.
pub const MIE_ABSORPTION: f64 = 4.40e-6 - 3.996e-6;
/// Mie scale height, metres.
pub const MIE_HEIGHT: f64 = 1_200.0;
/// Ozone absorption per metre at the layer's peak.
pub const OZONE: [f64; 3] = [0.650e-6, 1.881e-6, 0.085e-6];
/// Ozone: a tent 30 km wide centred 25 km up.
const OZONE_CENTRE: f64 = 25_000.0;
const OZONE_HALF_WIDTH: f64 = 15_000.0;

const TRANSMITTANCE_MU: usize = 256;
const TRANSMITTANCE_R: usize = 64;
const MS_SIZE: usize = 32;
const SKY_ELEVATION: usize = 192;
const SKY_AZIMUTH: usize = 96;
const AP_ELEVATION: usize = 64;
const AP_AZIMUTH: usize = 32;
const AP_SLICES: usize = 32;

/// What the air is made of, as multipliers on the Earth's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Air {
    /// Multiplier on the Rayleigh (molecular) density.
    pub rayleigh: f64,
    /// Multiplier on the aerosol (Mie) density: 1 is a clear day, 4 hazy.
    pub mie: f64,
    /// Multiplier on the ozone.
    pub ozone: f64,
    /// Mie phase asymmetry, in (−1, 1).
    pub mie_g: f64,
    /// Albedo of the ground seen from above, 0..=1.
    pub ground_albedo: f64,
    /// Whether to add scattering of the second and higher orders.
    pub multiple: bool,
}

impl Default for Air {
    fn default() -> Air {
        Air {
            rayleigh: 1.0,
            mie: 1.0,
            ozone: 1.0,
            mie_g: 0.8,
            ground_albedo: 0.3,
            multiple: true,
        }
    }
}

/// The medium at radius `r`: (Rayleigh scattering, Mie scattering,
/// extinction), per metre.
#[inline]
fn medium(air: &Air, r: f64) -> (DVec3, f64, DVec3) {
    let h = (r - BOTTOM).max(0.0);
    let rayleigh = DVec3::from(RAYLEIGH) * (air.rayleigh * (-h / RAYLEIGH_HEIGHT).exp());
    let mie_density = air.mie * (-h / MIE_HEIGHT).exp();
    let mie = MIE_SCATTERING * mie_density;
    let ozone_density = (1.0 - (h - OZONE_CENTRE).abs() / OZONE_HALF_WIDTH).max(0.0);
    let ozone = DVec3::from(OZONE) * (air.ozone * ozone_density);
    let extinction = rayleigh + DVec3::splat(mie + MIE_ABSORPTION * mie_density) + ozone;
    (rayleigh, mie, extinction)
}

/// Rayleigh phase function of the cosine `c` of the scattering angle.
#[inline]
pub fn rayleigh_phase(c: f64) -> f64 {
    3.0 / (16.0 * std::f64::consts::PI) * (1.0 + c * c)
}

/// Cornette–Shanks phase function (Mie) of asymmetry `g`.
#[inline]
pub fn mie_phase(g: f64, c: f64) -> f64 {
    let g2 = g * g;
    3.0 / (8.0 * std::f64::consts::PI) * (1.0 - g2) * (1.0 + c * c)
        / ((2.0 + g2) * (1.0 + g2 - 2.0 * g * c).max(1e-12).powf(1.5))
}

/// Distance from radius `r` along cos zenith `mu` to the sphere of radius
/// `radius` (outward, the far intersection), if it is met.
#[inline]
fn to_sphere(r: f64, mu: f64, radius: f64) -> Option<f64> {
    let disc = r * r * (mu * mu - 1.0) + radius * radius;
    (disc >= 0.0).then(|| -r * mu + disc.sqrt())
}

/// Distance to the ground from radius `r` along `mu`, if the ray meets it.
#[inline]
fn to_ground(r: f64, mu: f64) -> Option<f64> {
    let disc = r * r * (mu * mu - 1.0) + BOTTOM * BOTTOM;
    (mu < 0.0 && disc >= 0.0)
        .then(|| -r * mu - disc.sqrt())
        .filter(|&d| d >= 0.0)
}

/// Optical depth (per channel) from radius `r` along `mu` over `length`,
/// by the midpoint rule in `steps`.
fn optical_depth(air: &Air, r: f64, mu: f64, length: f64, steps: usize) -> DVec3 {
    let dt = length / steps as f64;
    (0..steps)
        .map(|i| {
            let t = (i as f64 + 0.5) * dt;
            medium(air, radius_at(r, mu, t)).2 * dt
        })
        .sum()
}

/// Radius of the point `t` along a ray from radius `r` with cos zenith `mu`.
#[inline]
fn radius_at(r: f64, mu: f64, t: f64) -> f64 {
    (t * t + 2.0 * r * mu * t + r * r).max(0.0).sqrt()
}

/// Transmittance from radius `r` along `mu` to the top of the atmosphere,
/// exactly (to the midpoint rule in `steps`), zero where the ray meets
/// the ground. What the table holds.
pub fn transmittance_exact(air: &Air, r: f64, mu: f64, steps: usize) -> DVec3 {
    if to_ground(r, mu).is_some() {
        return DVec3::ZERO;
    }
    let length = to_sphere(r, mu, TOP).unwrap_or(0.0).max(0.0);
    (-optical_depth(air, r, mu, length, steps)).exp()
}

/// A table of RGB values over the unit square, its first and last rows
/// and columns on the square's edges, bilinear between them.
#[derive(Debug, Clone, PartialEq)]
struct Table {
    w: usize,
    h: usize,
    data: Vec<[f32; 3]>,
}

impl Table {
    fn build(w: usize, h: usize, f: impl Fn(f64, f64) -> DVec3 + Sync) -> Table {
        let data = (0..w * h)
            .into_par_iter()
            .map(|k| {
                let (i, j) = (k % w, k / w);
                let v = f(i as f64 / (w - 1) as f64, j as f64 / (h - 1) as f64);
                [v.x as f32, v.y as f32, v.z as f32]
            })
            .collect();
        Table { w, h, data }
    }

    /// Bilinear at (u, v), clamped to the square.
    #[inline]
    fn at(&self, u: f64, v: f64) -> DVec3 {
        let x = (u * (self.w - 1) as f64).clamp(0.0, (self.w - 1) as f64);
        let y = (v * (self.h - 1) as f64).clamp(0.0, (self.h - 1) as f64);
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(self.w - 1), (y0 + 1).min(self.h - 1));
        let (fx, fy) = (x - x0 as f64, y - y0 as f64);
        let get = |i: usize, j: usize| {
            let c = self.data[j * self.w + i];
            DVec3::new(c[0] as f64, c[1] as f64, c[2] as f64)
        };
        let top = get(x0, y0).lerp(get(x1, y0), fx);
        let bottom = get(x0, y1).lerp(get(x1, y1), fx);
        top.lerp(bottom, fy)
    }
}

/// Bruneton's H and ρ for radius `r`.
#[inline]
fn horizon_terms(r: f64) -> (f64, f64) {
    let h = (TOP * TOP - BOTTOM * BOTTOM).sqrt();
    let rho = (r * r - BOTTOM * BOTTOM).max(0.0).sqrt();
    (h, rho)
}

/// Texture coordinates of (r, mu) in the transmittance table.
#[inline]
fn transmittance_uv(r: f64, mu: f64) -> (f64, f64) {
    let (h, rho) = horizon_terms(r);
    let d = to_sphere(r, mu, TOP).unwrap_or(0.0).max(0.0);
    let (d_min, d_max) = (TOP - r, rho + h);
    ((d - d_min) / (d_max - d_min), rho / h)
}

/// (r, mu) of texture coordinates in the transmittance table.
#[inline]
fn transmittance_r_mu(u: f64, v: f64) -> (f64, f64) {
    let h = (TOP * TOP - BOTTOM * BOTTOM).sqrt();
    let rho = h * v;
    let r = (rho * rho + BOTTOM * BOTTOM).sqrt();
    let (d_min, d_max) = (TOP - r, rho + h);
    let d = d_min + u * (d_max - d_min);
    let mu = if d == 0.0 {
        1.0
    } else {
        ((h * h - rho * rho - d * d) / (2.0 * r * d)).clamp(-1.0, 1.0)
    };
    (r, mu)
}

/// Azimuth-and-elevation coordinates of the sky tables: elevation `l`
/// (radians) against the horizon's `horizon`, finer near it (Hillaire's
/// square root), and the azimuth from the sun `phi` in [0, π].
#[inline]
fn sky_uv(l: f64, horizon: f64, phi: f64) -> (f64, f64) {
    use std::f64::consts::FRAC_PI_2;
    let v = if l >= horizon {
        0.5 + 0.5 * ((l - horizon) / (FRAC_PI_2 - horizon)).sqrt()
    } else {
        0.5 - 0.5 * ((horizon - l) / (FRAC_PI_2 + horizon)).sqrt()
    };
    (phi / std::f64::consts::PI, v)
}

/// The inverse of [`sky_uv`]: (elevation, azimuth from the sun).
#[inline]
fn sky_angles(u: f64, v: f64, horizon: f64) -> (f64, f64) {
    use std::f64::consts::FRAC_PI_2;
    let l = if v >= 0.5 {
        let s = (v - 0.5) * 2.0;
        horizon + s * s * (FRAC_PI_2 - horizon)
    } else {
        let s = (0.5 - v) * 2.0;
        horizon - s * s * (FRAC_PI_2 + horizon)
    };
    (l, u * std::f64::consts::PI)
}

/// The precomputed atmosphere seen from one eye.
#[derive(Debug, Clone, PartialEq)]
pub struct Atmosphere {
    /// The air.
    pub air: Air,
    /// Unit direction toward the sun.
    pub sun: DVec3,
    /// Radius of the eye, metres from the planet's centre.
    pub eye: f64,
    /// Metres per world unit (aerial perspective's distances).
    pub units: f64,
    /// Greatest distance the aerial perspective table covers, metres.
    pub reach: f64,
    transmittance: Table,
    multiple: Table,
    /// The sky above the horizon and the ground below it, each over
    /// (azimuth from the sun, square root of the angle from the horizon).
    sky: [Table; 2],
    /// Per slice: AP_ELEVATION × AP_AZIMUTH transmittance and in-scatter.
    aerial: Vec<(Table, Table)>,
    /// Elevation of the eye's horizon, radians (below 0 above the ground).
    horizon: f64,
    /// The sun's direction flattened onto the ground, unit (None with the
    /// sun straight up or down): the azimuths of lookups start from it.
    sun_flat: Option<DVec3>,
}

/// Light gathered by a march from radius `r` along `mu` (azimuth `phi`
/// from the sun's vertical plane): what each point in `steps` adds.
struct March {
    /// In-scattered radiance per unit sun irradiance.
    light: DVec3,
    /// Transmittance from the start.
    through: DVec3,
}

impl Atmosphere {
    /// The atmosphere of `air` lit by a sun in direction `sun` (unit, y
    /// up), seen from `altitude` metres above the ground; the aerial
    /// perspective reaches `reach` metres, and world distances are `units`
    /// metres each.
    pub fn new(air: Air, sun: DVec3, altitude: f64, units: f64, reach: f64) -> Atmosphere {
        let transmittance = Table::build(TRANSMITTANCE_MU, TRANSMITTANCE_R, |u, v| {
            let (r, mu) = transmittance_r_mu(u, v);
            transmittance_exact(&air, r, mu, 250)
        });
        let eye = BOTTOM + altitude.clamp(0.0, TOP - BOTTOM - 1.0);
        let mut atmosphere = Atmosphere {
            air,
            sun,
            eye,
            horizon: -(1.0 - (BOTTOM / eye).powi(2)).max(0.0).sqrt().asin(),
            sun_flat: DVec3::new(sun.x, 0.0, sun.z).try_normalize(),
            units,
            reach,
            transmittance,
            multiple: empty(),
            sky: [empty(), empty()],
            aerial: Vec::new(),
        };
        if air.multiple {
            atmosphere.multiple = atmosphere.build_multiple();
        }
        atmosphere.sky = atmosphere.build_sky();
        atmosphere.aerial = atmosphere.build_aerial();
        atmosphere
    }

    /// Transmittance to the top of the atmosphere from radius `r` along
    /// `mu`, from the table; zero where the ray meets the ground.
    pub fn transmittance(&self, r: f64, mu: f64) -> DVec3 {
        let r = r.clamp(BOTTOM, TOP);
        if to_ground(r, mu).is_some() {
            return DVec3::ZERO;
        }
        let (u, v) = transmittance_uv(r, mu);
        self.transmittance.at(u, v)
    }

    /// Ψ_ms at radius `r` with the sun at cos zenith `mu_s`.
    #[inline]
    fn psi(&self, r: f64, mu_s: f64) -> DVec3 {
        if !self.air.multiple {
            return DVec3::ZERO;
        }
        let u = (mu_s * 0.5 + 0.5).clamp(0.0, 1.0);
        let v = ((r - BOTTOM) / (TOP - BOTTOM)).clamp(0.0, 1.0);
        self.multiple.at(u, v)
    }

    /// Hillaire's multiple-scattering table: for each altitude and sun
    /// angle, the second-order light L₂ and the transfer f_ms gathered over
    /// 64 directions (a Fibonacci sphere) with an isotropic phase, and
    /// Ψ_ms = L₂ / (1 − f_ms).
    fn build_multiple(&self) -> Table {
        let air = self.air;
        let dirs: Vec<DVec3> = fibonacci_sphere(64);
        Table::build(MS_SIZE, MS_SIZE, |u, v| {
            let mu_s = u * 2.0 - 1.0;
            let r = BOTTOM + v * (TOP - BOTTOM);
            let sun = DVec3::new((1.0 - mu_s * mu_s).max(0.0).sqrt(), mu_s, 0.0);
            let iso = 1.0 / (4.0 * std::f64::consts::PI);
            let (mut l2, mut f) = (DVec3::ZERO, DVec3::ZERO);
            for d in &dirs {
                let mu = d.y;
                let ground = to_ground(r, mu);
                let length = ground.or_else(|| to_sphere(r, mu, TOP)).unwrap_or(0.0);
                let steps = 20;
                let dt = length / steps as f64;
                let mut through = DVec3::ONE;
                for i in 0..steps {
                    let t = (i as f64 + 0.5) * dt;
                    let p = DVec3::new(0.0, r, 0.0) + *d * t;
                    let rr = p.length();
                    let (ray, mie, ext) = medium(&air, rr);
                    let step = (-ext * dt).exp();
                    let scatter = ray + DVec3::splat(mie);
                    let sun_through = self.transmittance(rr, p.dot(sun) / rr);
                    let s = scatter * sun_through * iso;
                    // ∫ over the step of T·S: S·(1 − e^(−σ dt)) / σ.
                    let integral = (DVec3::ONE - step) / ext.max(DVec3::splat(1e-20));
                    l2 += through * s * integral;
                    f += through * scatter * integral;
                    through *= step;
                }
                if let Some(g) = ground {
                    let p = DVec3::new(0.0, r, 0.0) + *d * g;
                    let n = p.normalize();
                    let cos = n.dot(sun).max(0.0);
                    let sun_through = self.transmittance(BOTTOM, n.dot(sun));
                    l2 += through * sun_through * (cos * air.ground_albedo / std::f64::consts::PI);
                }
            }
            let n = dirs.len() as f64;
            // The mean over the sphere with the isotropic phase's 1/4π
            // folded in: (4π / n) · iso = 1 / n.
            let (l2, f) = (l2 * 4.0 * std::f64::consts::PI / n * iso, f / n);
            l2 / (DVec3::ONE - f)
        })
    }

    /// Light in-scattered toward the eye along a ray from the eye with
    /// unit direction `d` (y toward the zenith at the start) over
    /// `length` metres in `steps`, with `sun` the sun's unit direction in
    /// the same frame; when `ground` the ray ends on the lit ground.
    /// `record(march)` sees the march at the end of each step.
    fn march(
        &self,
        d: DVec3,
        sun: DVec3,
        length: f64,
        steps: usize,
        ground: bool,
        mut record: impl FnMut(&March),
    ) -> March {
        let r = self.eye;
        let air = &self.air;
        let c = d.dot(sun);
        let (pr, pm) = (rayleigh_phase(c), mie_phase(air.mie_g, c));
        let mut m = March {
            light: DVec3::ZERO,
            through: DVec3::ONE,
        };
        let origin = DVec3::new(0.0, r, 0.0);
        // Steps grow with the square of their index: finer near the eye.
        let at = |i: f64| length * (i / steps as f64).powi(2);
        for i in 0..steps {
            let (t0, t1) = (at(i as f64), at(i as f64 + 1.0));
            let dt = t1 - t0;
            let p = origin + d * (0.5 * (t0 + t1));
            let rr = p.length();
            let up = p / rr;
            let mu_s = up.dot(sun);
            let (ray, mie, ext) = medium(air, rr);
            let sun_through = self.transmittance(rr, mu_s);
            let single = (ray * pr + DVec3::splat(mie * pm)) * sun_through;
            let multiple = (ray + DVec3::splat(mie)) * self.psi(rr, mu_s);
            let step = (-ext * dt).exp();
            let integral = (DVec3::ONE - step) / ext.max(DVec3::splat(1e-20));
            m.light += m.through * (single + multiple) * integral;
            m.through *= step;
            record(&m);
        }
        if ground {
            let p = origin + d * length;
            let n = p.normalize();
            let cos = n.dot(sun).max(0.0);
            let lit = self.transmittance(BOTTOM, n.dot(sun)) * cos;
            m.light += m.through * lit * (air.ground_albedo / std::f64::consts::PI);
        }
        m
    }

    /// The sun's direction in the frame of a ray of elevation `l` and
    /// azimuth `phi` from the sun (both from the eye), and the ray's.
    fn frame(&self, l: f64, phi: f64) -> (DVec3, DVec3) {
        let sun_el = self.sun.y.clamp(-1.0, 1.0).asin();
        let d = DVec3::new(l.cos() * phi.cos(), l.sin(), l.cos() * phi.sin());
        let sun = DVec3::new(sun_el.cos(), sun_el.sin(), 0.0);
        (d, sun)
    }

    fn build_sky(&self) -> [Table; 2] {
        let horizon = self.horizon;
        [true, false].map(|above| {
            Table::build(SKY_AZIMUTH, SKY_ELEVATION / 2, |u, s| {
                let v = if above { 0.5 + 0.5 * s } else { 0.5 - 0.5 * s };
                self.sky_at(u, v, horizon)
            })
        })
    }

    /// The sky at coordinates (u, v) of [`sky_uv`].
    fn sky_at(&self, u: f64, v: f64, horizon: f64) -> DVec3 {
        let (l, phi) = sky_angles(u, v, horizon);
        let (d, sun) = self.frame(l, phi);
        let ground = to_ground(self.eye, d.y);
        let length = ground
            .or_else(|| to_sphere(self.eye, d.y, TOP))
            .unwrap_or(0.0);
        self.march(d, sun, length, 64, ground.is_some(), |_| {})
            .light
    }

    fn build_aerial(&self) -> Vec<(Table, Table)> {
        let horizon = self.horizon;
        let cells: Vec<Vec<(DVec3, DVec3)>> = (0..AP_ELEVATION * AP_AZIMUTH)
            .into_par_iter()
            .map(|k| {
                let (i, j) = (k % AP_AZIMUTH, k / AP_AZIMUTH);
                let (u, v) = (
                    i as f64 / (AP_AZIMUTH - 1) as f64,
                    j as f64 / (AP_ELEVATION - 1) as f64,
                );
                let (l, phi) = sky_angles(u, v, horizon);
                let (d, sun) = self.frame(l, phi);
                let mut slices = Vec::with_capacity(AP_SLICES);
                self.march(d, sun, self.reach, AP_SLICES, false, |m| {
                    slices.push((m.through, m.light))
                });
                slices
            })
            .collect();
        (0..AP_SLICES)
            .map(|s| {
                let pick = |f: fn(&(DVec3, DVec3)) -> DVec3| Table {
                    w: AP_AZIMUTH,
                    h: AP_ELEVATION,
                    data: cells
                        .iter()
                        .map(|c| {
                            let v = f(&c[s]);
                            [v.x as f32, v.y as f32, v.z as f32]
                        })
                        .collect(),
                };
                (pick(|c| c.0), pick(|c| c.1))
            })
            .collect()
    }

    /// (elevation, azimuth from the sun) of the unit direction `d`.
    #[inline]
    fn angles(&self, d: DVec3) -> (f64, f64) {
        let l = d.y.clamp(-1.0, 1.0).asin();
        let flat = DVec3::new(d.x, 0.0, d.z);
        let phi = match (flat.try_normalize(), self.sun_flat) {
            (Some(a), Some(b)) => a.dot(b).clamp(-1.0, 1.0).acos(),
            _ => 0.0,
        };
        (l, phi)
    }

    /// Sky radiance along unit direction `d` per unit sun irradiance.
    pub fn sky(&self, d: Vec3) -> Vec3 {
        let (l, phi) = self.angles(d.as_dvec3());
        let horizon = self.horizon;
        let (u, v) = sky_uv(l, horizon, phi);
        let c = if l >= horizon {
            self.sky[0].at(u, (v - 0.5) * 2.0)
        } else {
            self.sky[1].at(u, (0.5 - v) * 2.0)
        };
        c.as_vec3()
    }

    /// The air between the eye and a point `distance` world units away
    /// along unit direction `d`: (transmittance, in-scattered radiance
    /// per unit sun irradiance).
    pub fn aerial(&self, d: Vec3, distance: f32) -> (Vec3, Vec3) {
        let metres = distance as f64 * self.units;
        if metres <= 0.0 || !metres.is_finite() {
            return (Vec3::ONE, Vec3::ZERO);
        }
        let (l, phi) = self.angles(d.as_dvec3());
        let (u, v) = sky_uv(l, self.horizon, phi);
        // Slice k ends at reach · ((k + 1) / n)².
        let x = (metres / self.reach).sqrt() * AP_SLICES as f64 - 1.0;
        let (through, light) = if x < 0.0 {
            // Before the first slice: from nothing at the eye.
            let f = x + 1.0;
            let (t, s) = &self.aerial[0];
            (DVec3::ONE.lerp(t.at(u, v), f), s.at(u, v) * f)
        } else {
            let k = (x.floor() as usize).min(AP_SLICES - 1);
            let k1 = (k + 1).min(AP_SLICES - 1);
            let f = (x - k as f64).min(1.0);
            let (t0, s0) = &self.aerial[k];
            let (t1, s1) = &self.aerial[k1];
            (
                t0.at(u, v).lerp(t1.at(u, v), f),
                s0.at(u, v).lerp(s1.at(u, v), f),
            )
        };
        (through.as_vec3(), light.as_vec3())
    }

    /// Transmittance of the sunlight to the eye.
    pub fn sun_transmittance(&self) -> Vec3 {
        self.transmittance(self.eye, self.sun.y).as_vec3()
    }
}

fn empty() -> Table {
    Table {
        w: 1,
        h: 1,
        data: vec![[0.0; 3]],
    }
}

/// `n` directions spread evenly over the sphere (a Fibonacci lattice).
fn fibonacci_sphere(n: usize) -> Vec<DVec3> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|i| {
            let y = 1.0 - (i as f64 + 0.5) * 2.0 / n as f64;
            let r = (1.0 - y * y).sqrt();
            let a = golden * i as f64;
            DVec3::new(r * a.cos(), y, r * a.sin())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single() -> Air {
        Air {
            multiple: false,
            ..Air::default()
        }
    }

    /// Straight up from sea level the optical depth has a closed form:
    /// β_R·H_R + (β_M + α_M)·H_M (the exponentials integrate to their
    /// scale heights; the tops' e^(−100/8) and e^(−100/1.2) are below
    /// 4e-6 of them) plus the ozone tent's area, peak·15 km. The table
    /// agrees to 1e-4.
    #[test]
    fn zenith_transmittance_is_the_closed_form() {
        let air = Air::default();
        let tent = 15_000.0;
        let tau = |c: usize| {
            RAYLEIGH[c] * RAYLEIGH_HEIGHT * (1.0 - (-100.0f64 / 8.0).exp())
                + (MIE_SCATTERING + MIE_ABSORPTION) * MIE_HEIGHT
                + OZONE[c] * tent
        };
        let a = Atmosphere::new(air, DVec3::Y, 0.0, 1.0, 1000.0);
        let table = a.transmittance(BOTTOM, 1.0);
        let exact = transmittance_exact(&air, BOTTOM, 1.0, 20_000);
        for c in 0..3 {
            let closed = (-tau(c)).exp();
            assert!(
                (exact[c] - closed).abs() < 2e-6,
                "{c}: {} {closed}",
                exact[c]
            );
            assert!(
                (table[c] - closed).abs() < 1e-4,
                "{c}: {} {closed}",
                table[c]
            );
        }
        // Red 0.9404, green 0.8677, blue 0.7623.
        assert!((table.x - 0.9404).abs() < 1e-4 && (table.z - 0.7623).abs() < 1e-4);
    }

    /// The sun 5° up: the Rayleigh optical depth over the zenith's is the
    /// air mass. Kasten and Young (1989) give 10.32 for the real
    /// atmosphere at 85° from the zenith; an exponential atmosphere of
    /// 8 km scale height gives 10.2 (Chapman), within 2 %. The table
    /// agrees with the direct integral to 0.3 %, and the sun is orange:
    /// blue falls to a third of red.
    #[test]
    fn the_sun_at_five_degrees() {
        let air = Air {
            mie: 0.0,
            ozone: 0.0,
            ..Air::default()
        };
        let mu = 5f64.to_radians().sin();
        let slant = optical_depth(
            &air,
            BOTTOM,
            mu,
            to_sphere(BOTTOM, mu, TOP).unwrap(),
            200_000,
        );
        let zenith = optical_depth(&air, BOTTOM, 1.0, TOP - BOTTOM, 200_000);
        let mass = slant.x / zenith.x;
        assert!((mass / 10.32 - 1.0).abs() < 0.02, "air mass {mass}");

        let earth = Air::default();
        let a = Atmosphere::new(
            earth,
            DVec3::new(mu.sqrt(), mu, 0.0).normalize(),
            0.0,
            1.0,
            1e3,
        );
        let table = a.transmittance(BOTTOM, mu);
        let exact = transmittance_exact(&earth, BOTTOM, mu, 100_000);
        for c in 0..3 {
            assert!(
                (table[c] / exact[c] - 1.0).abs() < 3e-3,
                "{c}: {} {}",
                table[c],
                exact[c]
            );
        }
        assert!(exact.z < exact.x / 3.0, "orange sun: {exact}");
    }

    /// Single scattering at the zenith with the sun at 45°, from the table
    /// against an independent integral: 4000 steps up, each with its own
    /// 2000-step integral toward the sun, no tables. Within 1 %.
    #[test]
    fn single_scattering_at_the_zenith_is_the_integral() {
        let air = single();
        let sun = DVec3::new(1.0, 1.0, 0.0).normalize();
        let a = Atmosphere::new(air, sun, 0.0, 1.0, 1e3);
        let ours = a.sky(Vec3::Y);
        let c = sun.y;
        let (n, length) = (4000, TOP - BOTTOM);
        let dt = length / n as f64;
        let mut through = DVec3::ONE;
        let mut light = DVec3::ZERO;
        for i in 0..n {
            let r = BOTTOM + (i as f64 + 0.5) * dt;
            let (ray, mie, ext) = medium(&air, r);
            let half = (-ext * (0.5 * dt)).exp();
            through *= half;
            let mu_s = c; // the sun's zenith angle is the same straight up
            let to_sun = transmittance_exact(&air, r, mu_s, 2000);
            light += through
                * (ray * rayleigh_phase(c) + DVec3::splat(mie * mie_phase(0.8, c)))
                * to_sun
                * dt;
            through *= half;
        }
        for ch in 0..3 {
            let rel = ours[ch] as f64 / light[ch] - 1.0;
            assert!(rel.abs() < 0.01, "{ch}: {} {}", ours[ch], light[ch]);
        }
    }

    /// At noon the zenith is blue (each channel over the last by more
    /// than the sun's own reddening could undo), and higher orders of
    /// scattering only add light: Ψ_ms ≥ 0 and f_ms < 1, so the sky with
    /// them is brighter in every channel, by less than twice (the first
    /// order holds most of the light of a thin sky).
    #[test]
    fn the_noon_zenith_is_blue_and_brightened_by_higher_orders() {
        let sun = DVec3::new(0.0, 70f64.to_radians().sin(), 70f64.to_radians().cos());
        let a = Atmosphere::new(Air::default(), sun, 0.0, 1.0, 1e3);
        let z = a.sky(Vec3::Y);
        assert!(z.z > 1.5 * z.y && z.y > 1.5 * z.x, "{z}");
        let one = Atmosphere::new(single(), sun, 0.0, 1.0, 1e3).sky(Vec3::Y);
        for c in 0..3 {
            let gain = z[c] / one[c];
            assert!((1.0..2.0).contains(&gain), "channel {c}: gain {gain}");
        }
    }

    /// After sunset (the sun 4° down) the sky still glows toward it, from
    /// the upper air the sun still lights, and is dark away from it.
    #[test]
    fn twilight_glows_where_the_sun_went_down() {
        let sun = DVec3::new(0.0, -4f64.to_radians().sin(), 4f64.to_radians().cos());
        let a = Atmosphere::new(Air::default(), sun, 0.0, 1.0, 1e3);
        let toward = a.sky(Vec3::new(0.0, 0.05, 1.0).normalize());
        let away = a.sky(Vec3::new(0.0, 0.05, -1.0).normalize());
        assert!(toward.y > 0.0 && toward.y > 3.0 * away.y, "{toward} {away}");
        assert_eq!(a.sun_transmittance(), Vec3::ZERO);
        let noon = Atmosphere::new(Air::default(), DVec3::Y, 0.0, 1.0, 1e3);
        assert!(toward.y < 0.05 * noon.sky(Vec3::new(0.0, 0.05, 1.0).normalize()).y);
    }

    /// The aerial perspective: nothing at the eye; over a horizontal
    /// 20 km the Rayleigh transmittance is e^(−β·20 km) at sea level
    /// (within the Mie and ozone shares), and light gathers with distance.
    #[test]
    fn aerial_perspective_thickens_with_distance() {
        let sun = DVec3::new(0.0, 0.5, 0.75f64.sqrt());
        let a = Atmosphere::new(Air::default(), sun, 0.0, 10.0, 100_000.0);
        let d = Vec3::new(1.0, 0.0, 0.0);
        assert_eq!(a.aerial(d, 0.0), (Vec3::ONE, Vec3::ZERO));
        let (t, s) = a.aerial(d, 2000.0);
        let blue = (-(RAYLEIGH[2] + MIE_SCATTERING + MIE_ABSORPTION) * 20_000.0).exp() as f32;
        assert!((t.z / blue - 1.0).abs() < 0.03, "{} vs {blue}", t.z);
        let (t_near, s_near) = a.aerial(d, 200.0);
        assert!(t_near.z > t.z && s_near.z < s.z && s.z > 0.0);
    }
}
