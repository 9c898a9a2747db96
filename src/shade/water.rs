//! Water: a horizontal plane at a height (curved as the land is on a
//! planet of a given radius), seen from above, with exact
//! dielectric Fresnel reflection and refraction (index 1.33), Beer–Lambert
//! absorption with depth, small procedural waves as a normal perturbation,
//! and wet ground along the shore.
//!
//! The renderer traces the reflected and the refracted ray like any other
//! ray; this module holds the optics, which are exact formulas and tested
//! against them.

use glam::{Vec2, Vec3};

/// Refractive index of water.
pub const WATER_INDEX: f32 = 1.33;

/// Number of wave trains summed for the surface.
const TRAINS: usize = 6;

/// A water plane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Water {
    /// Height of the surface, world units.
    pub level: f32,
    /// Colour of deep water: the fraction of the light falling on the
    /// surface that the water body scatters back where the bottom is out
    /// of sight.
    pub color: Vec3,
    /// Path length through the water over which the light from the bottom
    /// falls to 1/e, world units.
    pub clarity: f32,
    /// Waves, if any.
    pub waves: Option<Waves>,
    /// Height above the level over which the ground dries, world units
    /// (wet darkening of the shore; 0: none).
    pub shore: f32,
    /// Seed of the waves' directions and phases.
    pub seed: u64,
    /// The planet's radius, if the land curves (`terrain.planet_radius`):
    /// the surface then falls by d²/2R with the distance d from the
    /// terrain's centre, as the land does, so the coast stays put and the
    /// sea's horizon dips.
    pub planet_radius: Option<f64>,
    /// Slope of a river's surface (rise over run) from which it foams as
    /// white water, fully at twice it; infinite without rivers.
    pub white_water: f32,
}

/// Small waves: a sum of sine trains, as a perturbation of the normal only
/// (the surface stays a plane for intersection).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Waves {
    /// Height of the waves, world units.
    pub amplitude: f32,
    /// Wavelength of the longest train, world units.
    pub scale: f32,
}

/// The largest share of a river's surface that is white water (the
/// water shows between the foam).
pub const MOST_FOAM: f32 = 0.6;

/// Feature size of white water's patches across the flow, world units
/// (four times it along).
pub const FOAM_SIZE: f32 = 0.4;

/// Albedo factor of fully wet ground (wet soil and rock reflect about
/// half as much: water fills the pores and the surface turns specular).
pub const WET_DARKENING: f32 = 0.55;

impl Water {
    /// Whether the water has a sea (a plane at its level); without one it
    /// is the look of a scene's rivers and lakes only.
    #[inline]
    pub fn is_sea(&self) -> bool {
        self.level > f32::NEG_INFINITY
    }

    /// Ray parameter where a ray from `origin` along `dir` meets the
    /// surface from above, if it does within (0, t_max).
    #[inline]
    pub fn hit(&self, origin: Vec3, dir: Vec3, t_max: f32) -> Option<f32> {
        if !self.is_sea() {
            return None;
        }
        let Some(radius) = self.planet_radius else {
            if origin.y <= self.level || dir.y >= 0.0 {
                return None;
            }
            let t = (self.level - origin.y) / dir.y;
            return (t > 0.0 && t < t_max).then_some(t);
        };
        // Above the surface y = level − (x² + z²)/2R where
        // f(t) = a·t² + b·t + c > 0; in f64, as the terms span the
        // planet's radius and a few units.
        let (o, d) = (origin.as_dvec3(), dir.as_dvec3());
        let two_r = 2.0 * radius;
        let a = (d.x * d.x + d.z * d.z) / two_r;
        let b = d.y + (o.x * d.x + o.z * d.z) / radius;
        let c = o.y - self.level as f64 + (o.x * o.x + o.z * o.z) / two_r;
        if c <= 0.0 {
            return None;
        }
        let disc = b * b - 4.0 * a * c;
        if disc < 0.0 || b >= 0.0 {
            // No crossing, or f grows from t = 0 (a ≥ 0, c > 0, b ≥ 0).
            return None;
        }
        // The nearer root, in the form that keeps its digits: b < 0, so
        // q > 0 and c/q is the smaller of q/a and c/q.
        let q = -0.5 * (b - disc.sqrt());
        let t = (c / q) as f32;
        (t > 0.0 && t < t_max).then_some(t)
    }

    /// Height of the surface over world (x, z): the level, less d²/2R on a
    /// curved planet.
    #[inline]
    pub fn level_at(&self, x: f32, z: f32) -> f32 {
        match self.planet_radius {
            None => self.level,
            Some(r) => {
                let d2 = x as f64 * x as f64 + z as f64 * z as f64;
                (self.level as f64 - d2 / (2.0 * r)) as f32
            }
        }
    }

    /// Unit normal of the (waved) surface at world (x, z): up, tilted by
    /// the slope of the wave height h(x, z) = amplitude · Σ wₖ sin(kₖ·(x, z) + φₖ)
    /// as (−∂h/∂x, 1, −∂h/∂z), normalised.
    #[inline]
    pub fn normal_at(&self, x: f32, z: f32) -> Vec3 {
        // The curved surface's slope, −(x, z)/R, under the waves'.
        let curve = self
            .planet_radius
            .map(|r| Vec2::new((x as f64 / r) as f32, (z as f64 / r) as f32));
        let g = match (self.waves, curve) {
            (None, None) => return Vec3::Y,
            (Some(w), None) => self.slope(w, Vec2::new(x, z)),
            (None, Some(c)) => -c,
            (Some(w), Some(c)) => self.slope(w, Vec2::new(x, z)) - c,
        };
        Vec3::new(-g.x, 1.0, -g.y).normalize()
    }

    /// Unit normal of a river's or lake's (waved) surface at world (x, z)
    /// whose unsmoothed normal is `surface` (up, tilted as the water
    /// falls): the surface's slope plus the waves', the waves running
    /// with the flow (downhill, within ±30° of it) where the water falls
    /// and every way where it lies flat.
    #[inline]
    pub fn normal_over(&self, x: f32, z: f32, surface: Vec3) -> Vec3 {
        let up = surface.y.max(1e-3);
        let tilt = Vec2::new(-surface.x / up, -surface.z / up);
        let g = match self.waves {
            None => return surface,
            Some(w) => {
                let fall = Vec2::new(surface.x, surface.z);
                let flow = (fall.length() > 1e-4).then(|| fall.normalize());
                self.trains_along(w, flow)
                    .map(|(dir, k, phase, a)| {
                        dir * (a * k * (k * dir.dot(Vec2::new(x, z)) + phase).cos())
                    })
                    .sum::<Vec2>()
                    + tilt
            }
        };
        Vec3::new(-g.x, 1.0, -g.y).normalize()
    }

    /// How much of a river's surface whose normal is `surface` is white
    /// water: 0 below the `white_water` slope, [`MOST_FOAM`] from twice it,
    /// smooth between.
    #[inline]
    pub fn foam(&self, surface: Vec3) -> f32 {
        if !self.white_water.is_finite() {
            return 0.0;
        }
        let slope = Vec2::new(surface.x, surface.z).length() / surface.y.max(1e-3);
        let t = ((slope - self.white_water) / self.white_water).clamp(0.0, 1.0);
        MOST_FOAM * t * t * (3.0 - 2.0 * t)
    }

    /// [`Water::foam`] at world `p`, broken into patches: value noise of
    /// feature size [`FOAM_SIZE`] stretched along the fall, so that white
    /// water streaks downstream.
    #[inline]
    pub fn foam_at(&self, p: Vec3, surface: Vec3) -> f32 {
        let most = self.foam(surface);
        if most <= 0.0 {
            return 0.0;
        }
        let fall = Vec2::new(surface.x, surface.z).normalize_or_zero();
        let (along, across) = (
            fall.dot(Vec2::new(p.x, p.z)),
            fall.perp_dot(Vec2::new(p.x, p.z)),
        );
        let q = Vec3::new(along / (4.0 * FOAM_SIZE), 0.0, across / FOAM_SIZE);
        let (v, _) = crate::shade::layers::value_noise(q, self.seed ^ 0xF0A3);
        most * (0.5 + v).clamp(0.0, 1.0)
    }

    /// The wave trains: direction, wavenumber, phase and height of each
    /// (heights 0.72ᵏ of the first, summing to the amplitude; wavelengths
    /// 0.68ᵏ of `scale`; directions and phases from the seed).
    fn trains(&self, w: Waves) -> impl Iterator<Item = (Vec2, f32, f32, f32)> + '_ {
        let total: f32 = (0..TRAINS).map(|k| 0.72f32.powi(k as i32)).sum();
        (0..TRAINS).map(move |k| {
            let u = |s: u64| crate::hash::unit_f32(self.seed, 0x3A7E + s, k as u64);
            let angle = u(0) * std::f32::consts::TAU;
            let wavelength = w.scale * 0.68f32.powi(k as i32);
            (
                Vec2::new(angle.cos(), angle.sin()),
                std::f32::consts::TAU / wavelength,
                u(1) * std::f32::consts::TAU,
                w.amplitude * 0.72f32.powi(k as i32) / total,
            )
        })
    }

    /// [`Water::trains`] turned toward `flow` where given: each train's
    /// direction within ±30° of it (the same random number that gives
    /// its direction on still water).
    fn trains_along(
        &self,
        w: Waves,
        flow: Option<Vec2>,
    ) -> impl Iterator<Item = (Vec2, f32, f32, f32)> + '_ {
        self.trains(w)
            .enumerate()
            .map(move |(k, (dir, wavenumber, phase, height))| {
                let Some(f) = flow else {
                    return (dir, wavenumber, phase, height);
                };
                let u = crate::hash::unit_f32(self.seed, 0x3A7E, k as u64);
                let angle = f.y.atan2(f.x) + (u - 0.5) * std::f32::consts::FRAC_PI_3;
                (
                    Vec2::new(angle.cos(), angle.sin()),
                    wavenumber,
                    phase,
                    height,
                )
            })
    }

    /// Gradient of the wave height at `p`.
    fn slope(&self, w: Waves, p: Vec2) -> Vec2 {
        self.trains(w)
            .map(|(dir, k, phase, a)| dir * (a * k * (k * dir.dot(p) + phase).cos()))
            .sum()
    }

    /// The wave height at `p` (tests check the slope against it).
    #[cfg(test)]
    fn wave_height(&self, w: Waves, p: Vec2) -> f32 {
        self.trains(w)
            .map(|(dir, k, phase, a)| a * (k * dir.dot(p) + phase).sin())
            .sum()
    }

    /// How wet ground at `p` is: 1 at and below the surface, falling
    /// smoothly to 0 at `shore` above it.
    #[inline]
    pub fn wetness(&self, p: Vec3) -> f32 {
        self.wetness_over(self.level_at(p.x, p.z), p.y)
    }

    /// How wet ground at height `y` is beside water at `level`: 1 at and
    /// below it, falling smoothly to 0 at `shore` above it.
    #[inline]
    pub fn wetness_over(&self, level: f32, y: f32) -> f32 {
        if y <= level {
            return 1.0;
        }
        if self.shore <= 0.0 {
            return 0.0;
        }
        let t = ((y - level) / self.shore).min(1.0);
        1.0 - t * t * (3.0 - 2.0 * t)
    }

    /// The albedo factor of ground at `p`: 1 when dry, down to
    /// [`WET_DARKENING`] when wet.
    #[inline]
    pub fn wet_factor(&self, p: Vec3) -> f32 {
        self.wet_factor_of(self.wetness(p))
    }

    /// The albedo factor of ground of wetness `wet`, 0..=1.
    #[inline]
    pub fn wet_factor_of(&self, wet: f32) -> f32 {
        1.0 - (1.0 - WET_DARKENING) * wet
    }

    /// How deep `p` lies under the surface (0 above it).
    #[inline]
    pub fn depth(&self, p: Vec3) -> f32 {
        (self.level_at(p.x, p.z) - p.y).max(0.0)
    }

    /// Beer–Lambert transmittance over `distance` units of water:
    /// e^(−distance / clarity).
    #[inline]
    pub fn transmittance(&self, distance: f32) -> f32 {
        (-distance / self.clarity).exp()
    }
}

/// Fresnel reflectance of unpolarised light arriving at a smooth boundary
/// from a medium of index `n1` into one of `n2`, `cos_i` the cosine of the
/// angle of incidence: the mean of the s and p reflectances,
/// Rs = ((n1 cos i − n2 cos t)/(n1 cos i + n2 cos t))²,
/// Rp = ((n1 cos t − n2 cos i)/(n1 cos t + n2 cos i))²; 1 under total
/// internal reflection.
#[inline]
pub fn fresnel(cos_i: f32, n1: f32, n2: f32) -> f32 {
    let cos_i = cos_i.clamp(0.0, 1.0);
    let sin_t = n1 / n2 * (1.0 - cos_i * cos_i).max(0.0).sqrt();
    if sin_t >= 1.0 {
        return 1.0;
    }
    let cos_t = (1.0 - sin_t * sin_t).sqrt();
    let rs = (n1 * cos_i - n2 * cos_t) / (n1 * cos_i + n2 * cos_t);
    let rp = (n1 * cos_t - n2 * cos_i) / (n1 * cos_t + n2 * cos_i);
    0.5 * (rs * rs + rp * rp)
}

/// `dir` mirrored about the unit normal `n`.
#[inline]
pub fn reflect(dir: Vec3, n: Vec3) -> Vec3 {
    dir - 2.0 * dir.dot(n) * n
}

/// The mirror ray's direction off the (waved) surface with unit normal
/// `n` for a ray along `dir`: [`reflect`], lifted to 10⁻³ above the
/// horizon where a wave tilts it below, so that it skims the surface.
#[inline]
pub fn mirror(dir: Vec3, n: Vec3) -> Vec3 {
    let r = reflect(dir, n);
    if r.y < 1e-3 {
        Vec3::new(r.x, 1e-3, r.z).normalize()
    } else {
        r
    }
}

/// How far above (mirror rays) or below (refracted rays) the surface at
/// `p` the rays that leave it start.
#[inline]
pub fn surface_offset(p: Vec3) -> f32 {
    1e-4 * (1.0 + p.abs().max_element())
}

/// `dir` (unit, arriving against the unit normal `n`) refracted by Snell's
/// law with `eta` = n1 / n2; `None` under total internal reflection.
#[inline]
pub fn refract(dir: Vec3, n: Vec3, eta: f32) -> Option<Vec3> {
    let cos_i = -dir.dot(n);
    let k = 1.0 - eta * eta * (1.0 - cos_i * cos_i);
    (k >= 0.0).then(|| (eta * dir + (eta * cos_i - k.sqrt()) * n).normalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calm() -> Water {
        Water {
            level: 2.0,
            color: Vec3::new(0.02, 0.08, 0.1),
            clarity: 4.0,
            waves: None,
            shore: 0.5,
            seed: 1,
            planet_radius: None,
            white_water: f32::INFINITY,
        }
    }

    /// At normal incidence R = ((n1 − n2)/(n1 + n2))² = (0.33/2.33)²; at
    /// grazing incidence R → 1; at 60° the exact value from the s and p
    /// formulas, worked here in f64.
    #[test]
    fn fresnel_matches_the_exact_formula() {
        let normal = fresnel(1.0, 1.0, WATER_INDEX);
        assert!((normal - (0.33f32 / 2.33).powi(2)).abs() < 1e-7, "{normal}");
        assert!((normal - 0.020059).abs() < 1e-6);
        assert!(fresnel(1e-4, 1.0, WATER_INDEX) > 0.999);
        assert_eq!(fresnel(0.0, 1.0, WATER_INDEX), 1.0);
        let i = 60f64.to_radians();
        let t = (i.sin() / 1.33).asin();
        let rs = ((i.cos() - 1.33 * t.cos()) / (i.cos() + 1.33 * t.cos())).powi(2);
        let rp = ((t.cos() - 1.33 * i.cos()) / (t.cos() + 1.33 * i.cos())).powi(2);
        let exact = 0.5 * (rs + rp);
        let ours = fresnel(i.cos() as f32, 1.0, WATER_INDEX) as f64;
        assert!((ours - exact).abs() < 1e-6, "{ours} vs {exact}");
        // Brewster's angle: the p reflectance vanishes, R = Rs / 2.
        let b = 1.33f64.atan();
        let tb = (b.sin() / 1.33).asin();
        let rs_b = ((b.cos() - 1.33 * tb.cos()) / (b.cos() + 1.33 * tb.cos())).powi(2);
        let ours_b = fresnel(b.cos() as f32, 1.0, WATER_INDEX) as f64;
        assert!((ours_b - rs_b / 2.0).abs() < 1e-6);
        // From inside, past the critical angle, everything reflects.
        assert_eq!(fresnel(0.5, WATER_INDEX, 1.0), 1.0);
    }

    #[test]
    fn refraction_follows_snells_law() {
        for deg in [0.0f32, 20.0, 45.0, 80.0] {
            let i = deg.to_radians();
            let dir = Vec3::new(i.sin(), -i.cos(), 0.0);
            let t = refract(dir, Vec3::Y, 1.0 / WATER_INDEX).unwrap();
            assert!((t.length() - 1.0).abs() < 1e-6);
            let sin_t = t.x;
            assert!((i.sin() - WATER_INDEX * sin_t).abs() < 1e-6, "{deg}°");
            assert!(t.y < 0.0);
        }
        let up = Vec3::new(0.9, 0.1, 0.0).normalize();
        assert!(
            refract(-up, -Vec3::Y, WATER_INDEX).is_none(),
            "total internal reflection"
        );
    }

    /// Beer–Lambert: T(d) = e^(−d/clarity); halves every clarity · ln 2.
    #[test]
    fn absorption_is_beer_lambert() {
        let w = calm();
        assert_eq!(w.transmittance(0.0), 1.0);
        assert!((w.transmittance(4.0) - (-1f32).exp()).abs() < 1e-7);
        assert!((w.transmittance(4.0 * 2f32.ln()) - 0.5).abs() < 1e-6);
        let (a, b) = (w.transmittance(1.5), w.transmittance(2.5));
        assert!(
            (w.transmittance(4.0) - a * b).abs() < 1e-6,
            "multiplicative"
        );
    }

    /// A ray mirrored by a flat water plane lands where the mirror image
    /// says: the reflected ray from the surface point passes through the
    /// target's image below the plane when run backwards, so a target seen
    /// in reflection lies on the line from the eye's mirror image.
    #[test]
    fn a_reflected_ray_lands_where_the_mirror_image_says() {
        let w = calm();
        let eye = Vec3::new(-3.0, 7.0, -10.0);
        let target = Vec3::new(4.0, 5.5, 12.0);
        // The mirror image of the target across y = level.
        let image = Vec3::new(target.x, 2.0 * w.level - target.y, target.z);
        let dir = (image - eye).normalize();
        let t = w
            .hit(eye, dir, f32::INFINITY)
            .expect("the ray meets the water");
        let p = eye + dir * t;
        assert!((p.y - w.level).abs() < 1e-5);
        let r = reflect(dir, w.normal_at(p.x, p.z));
        let to_target = (target - p).normalize();
        assert!(r.dot(to_target) > 1.0 - 1e-6, "{r} vs {to_target}");
        // From below or looking up there is no hit.
        assert!(w
            .hit(Vec3::new(0.0, 1.0, 0.0), -Vec3::Y, f32::INFINITY)
            .is_none());
        assert!(w.hit(eye, Vec3::Y, f32::INFINITY).is_none());
        assert!(w.hit(eye, dir, t * 0.5).is_none(), "beyond t_max");
    }

    #[test]
    fn waves_tilt_the_normal_by_their_slope() {
        let mut w = calm();
        w.waves = Some(Waves {
            amplitude: 0.02,
            scale: 2.0,
        });
        let normals: Vec<Vec3> = (0..400)
            .map(|k| w.normal_at(k as f32 * 0.137, (k * 7 % 31) as f32 * 0.29))
            .collect();
        let max_tilt = normals.iter().map(|n| n.y.acos()).fold(0.0, f32::max);
        // The steepest slope is at most Σ aₖ·2π/λₖ.
        assert!(max_tilt > 0.02 && max_tilt < 0.25, "{max_tilt}");
        assert!(normals.iter().all(|n| (n.length() - 1.0).abs() < 1e-5));
        // A central difference of the height agrees with the slope used.
        let waves = w.waves.unwrap();
        for p in [
            Vec2::new(0.3, 0.8),
            Vec2::new(-5.1, 2.2),
            Vec2::new(7.7, -3.0),
        ] {
            let h = 1e-3;
            let dx = (w.wave_height(waves, p + Vec2::X * h)
                - w.wave_height(waves, p - Vec2::X * h))
                / (2.0 * h);
            let dz = (w.wave_height(waves, p + Vec2::Y * h)
                - w.wave_height(waves, p - Vec2::Y * h))
                / (2.0 * h);
            let g = w.slope(waves, p);
            assert!(
                (g - Vec2::new(dx, dz)).length() < 1e-3 * (1.0 + g.length()),
                "{g} vs {dx}, {dz}"
            );
            assert!(w.wave_height(waves, p).abs() <= 0.02 + 1e-6);
        }
        assert_eq!(calm().normal_at(0.3, 0.8), Vec3::Y);
    }

    #[test]
    fn the_shore_dries_over_its_height() {
        let w = calm();
        let at = |y: f32| Vec3::new(3.0, y, -1.0);
        assert_eq!(w.wetness(at(1.0)), 1.0);
        assert_eq!(w.wetness(at(2.0)), 1.0);
        assert!((w.wetness(at(2.25)) - 0.5).abs() < 1e-6);
        assert_eq!(w.wetness(at(2.5)), 0.0);
        assert_eq!(w.wet_factor(at(9.0)), 1.0);
        assert!((w.wet_factor(at(0.0)) - WET_DARKENING).abs() < 1e-7);
        assert_eq!(w.depth(at(0.5)), 1.5);
        assert_eq!(w.depth(at(2.5)), 0.0);
    }

    /// On a planet of Earth's radius the sea curves as the land does: from
    /// an eye 1.7 above it the horizon dips by acos(R/(R + h)) (0.041856°),
    /// found by bisecting the lowest elevation whose ray misses the water,
    /// to 10⁻⁵°; the surface 50 km out lies 196.2 lower and its normal
    /// leans back toward the centre by d/R; the shore's wetness follows it.
    #[test]
    fn a_curved_sea_has_the_planets_horizon() {
        let r = 6_371_000.0f64;
        let w = Water {
            level: 0.0,
            planet_radius: Some(r),
            ..calm()
        };
        let eye = Vec3::new(0.0, 1.7, 0.0);
        let hits = |deg: f64| {
            let a = deg.to_radians();
            let dir = Vec3::new(a.cos() as f32, a.sin() as f32, 0.0);
            w.hit(eye, dir, f32::INFINITY).is_some()
        };
        let (mut lo, mut hi) = (-1.0f64, 0.0f64);
        assert!(hits(lo) && !hits(hi));
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if hits(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let dip = (r / (r + 1.7)).acos().to_degrees();
        assert!((-lo - dip).abs() < 1e-5, "{} against {dip}", -lo);
        // Flat water would meet every downward ray.
        assert!(calm()
            .hit(
                Vec3::new(0.0, 3.7, 0.0),
                Vec3::new(1.0, -1e-6, 0.0).normalize(),
                f32::INFINITY
            )
            .is_some());
        assert!((w.level_at(50_000.0, 0.0) + 196.2).abs() < 0.1);
        let n = w.normal_at(50_000.0, 0.0);
        assert!(
            (n.x as f64 - 50_000.0 / r).abs() < 1e-6 && n.z == 0.0,
            "{n}"
        );
        let shore = Vec3::new(0.0, -195.5, 50_000.0);
        assert_eq!(w.wetness(shore), 0.0, "0.7 above the curved surface");
        assert_eq!(w.wetness(shore - Vec3::Y), 1.0, "0.3 under it");
        // A ray down onto it from above meets it at its height.
        let t = w
            .hit(Vec3::new(50_000.0, 10.0, 0.0), -Vec3::Y, f32::INFINITY)
            .expect("hits the sea below");
        assert!((t - (10.0 - w.level_at(50_000.0, 0.0))).abs() < 1e-3, "{t}");
    }
}
