//! Light arriving at a surface point: the sun through its disc (soft
//! shadows) and the sky over the hemisphere with occlusion rays.

use glam::Vec3;

use super::sampler::{SampleRng, STREAM_SKY, STREAM_SUN};
use crate::ray::Ray;
pub use crate::sampling::{basis, cosine_hemisphere, sample_cone};
use crate::shade::{Sky, SkyLight, Sun};
use crate::world::World;

/// Offset of secondary ray origins along the geometric normal, scaled with
/// the point's distance from the origin so that large scenes stay clean.
#[inline]
pub fn ray_offset(p: Vec3) -> f32 {
    1e-3 * (1.0 + p.abs().max_element() * 1e-3)
}

/// A secondary ray the shading asks about: from `p` lifted off the surface
/// along the geometric normal `ng`, toward `dir`, within `t_max`. The ray
/// itself, with its reciprocal direction and shear, is built only where
/// it is traced ([`Probe::ray`]): a tile lists its probes' rays once and
/// then shades with their answers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Probe {
    /// The surface point.
    pub p: Vec3,
    /// Its geometric normal (unit, facing the side the ray leaves from).
    pub ng: Vec3,
    /// Unit direction.
    pub dir: Vec3,
    /// How far the ray looks.
    pub t_max: f32,
}

impl Probe {
    /// Where its ray starts: `p` lifted off the surface.
    #[inline]
    pub fn origin(&self) -> Vec3 {
        self.p + self.ng * ray_offset(self.p)
    }

    /// The ray to trace.
    #[inline]
    pub fn ray(&self) -> Ray {
        Ray::new(self.origin(), self.dir)
    }
}

/// Probes listed for one batch of occlusion rays, whose rays are then set
/// up four at a time ([`Ray::extend_new`]: the same rays as
/// [`Probe::ray`], bit for bit).
#[derive(Debug, Default)]
pub struct ProbeBatch {
    origins: Vec<Vec3>,
    dirs: Vec<Vec3>,
    /// How far each probe looks.
    pub limits: Vec<f32>,
}

impl ProbeBatch {
    /// An empty batch with room for `n` probes.
    pub fn with_capacity(n: usize) -> ProbeBatch {
        ProbeBatch {
            origins: Vec::with_capacity(n),
            dirs: Vec::with_capacity(n),
            limits: Vec::with_capacity(n),
        }
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.origins.clear();
        self.dirs.clear();
        self.limits.clear();
    }

    /// Lists `probe`.
    #[inline]
    pub fn push(&mut self, probe: &Probe) {
        self.origins.push(probe.origin());
        self.dirs.push(probe.dir);
        self.limits.push(probe.t_max);
    }

    /// Probes listed.
    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    /// Whether no probe is listed.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// The listed probes' rays, in order, into `rays` (cleared first).
    pub fn rays_into(&self, rays: &mut Vec<Ray>) {
        rays.clear();
        Ray::extend_new(rays, |k| self.origins[k], &self.dirs);
    }
}

/// The shadow probe from `p` (shading normal `n`, geometric normal `ng`)
/// toward a point of the sun's disc, with the cosine between its direction
/// and `n`; None when that point is below either surface.
#[inline(always)]
pub fn sun_probe(sun: &Sun, p: Vec3, n: Vec3, ng: Vec3, rng: &SampleRng) -> Option<(Probe, f32)> {
    sun_probe_with(sun, p, n, ng, || rng.pair(STREAM_SUN, 0))
}

/// [`sun_probe`] with the disc's point drawn from the uniform numbers
/// `u` gives (asked only for a sun with a disc).
#[inline(always)]
pub fn sun_probe_with(
    sun: &Sun,
    p: Vec3,
    n: Vec3,
    ng: Vec3,
    u: impl FnOnce() -> (f32, f32),
) -> Option<(Probe, f32)> {
    // A point sun needs no random numbers (sample_cone would ignore them).
    let dir = if sun.angular_radius > 0.0 {
        sample_cone(sun.direction, sun.angular_radius, u())
    } else {
        sun.direction
    };
    let cos = n.dot(dir);
    if cos <= 0.0 || ng.dot(dir) <= 0.0 {
        return None;
    }
    let probe = Probe {
        p,
        ng,
        dir,
        t_max: f32::INFINITY,
    };
    Some((probe, cos))
}

/// Irradiance from the sun at `p` (shading normal `n`, geometric normal
/// `ng`), with one shadow ray toward a point of the sun's disc.
#[inline]
pub fn sun_light(
    occluded: &mut impl FnMut(&Probe) -> bool,
    sun: &Sun,
    p: Vec3,
    n: Vec3,
    ng: Vec3,
    rng: &SampleRng,
    rays: &mut u64,
) -> Vec3 {
    let Some((shadow, cos)) = sun_probe(sun, p, n, ng, rng) else {
        return Vec3::ZERO;
    };
    *rays += 1;
    if occluded(&shadow) {
        Vec3::ZERO
    } else {
        sun.radiance * cos
    }
}

/// Sky light at `p` as the radiance an albedo multiplies: the mean sky
/// radiance over cosine-weighted directions that no geometry blocks within
/// the sky-light distance (cosine sampling makes albedo · mean the Lambert
/// estimate), times the sky's ambient strength. With no samples, the
/// unoccluded approximation [`Sky::ambient`].
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn sky_light(
    occluded: &mut impl FnMut(&Probe) -> bool,
    sky: &Sky,
    settings: &SkyLight,
    p: Vec3,
    n: Vec3,
    ng: Vec3,
    rng: &SampleRng,
    rays: &mut u64,
) -> Vec3 {
    if settings.samples == 0 {
        return sky.ambient(n);
    }
    let mut sum = Vec3::ZERO;
    for k in 0..settings.samples {
        if let Some(dir) = open_sky_direction(occluded, settings.distance, p, n, ng, rng, k, rays) {
            sum += sky.radiance_without_glow(dir);
        }
    }
    sum / settings.samples as f32 * sky.ambient_strength()
}

/// The occlusion probe of sky-light sample `k` at `p`: a cosine-weighted
/// direction around `n`, if it leaves the surface, looking as far as
/// `distance`.
#[inline(always)]
pub fn sky_probe(
    p: Vec3,
    n: Vec3,
    ng: Vec3,
    rng: &SampleRng,
    k: u32,
    distance: f32,
) -> Option<Probe> {
    let dir = cosine_hemisphere(n, rng.pair(STREAM_SKY, k));
    if ng.dot(dir) <= 0.0 {
        return None; // below the actual surface
    }
    Some(Probe {
        p,
        ng,
        dir,
        t_max: distance,
    })
}

/// Sample `k`'s cosine-weighted direction around `n`, if it leaves the
/// surface and nothing blocks it within `distance`.
#[inline]
#[allow(clippy::too_many_arguments)]
fn open_sky_direction(
    occluded: &mut impl FnMut(&Probe) -> bool,
    distance: f32,
    p: Vec3,
    n: Vec3,
    ng: Vec3,
    rng: &SampleRng,
    k: u32,
    rays: &mut u64,
) -> Option<Vec3> {
    let probe = sky_probe(p, n, ng, rng, k, distance)?;
    *rays += 1;
    (!occluded(&probe)).then_some(probe.dir)
}

/// The fraction of `samples` cosine-weighted directions at `p` that reach
/// the open sky within `distance`: 1 on an open plane, near 0 in a pit.
pub fn sky_visibility(
    world: &World,
    p: Vec3,
    n: Vec3,
    samples: u32,
    distance: f32,
    seed: u64,
) -> f32 {
    let mut rays = 0;
    let open = (0..samples)
        .filter(|&k| {
            let rng = SampleRng::new(seed, k as u64, 0, 1);
            open_sky_direction(
                &mut |probe: &Probe| world.occluded(&probe.ray(), probe.t_max),
                distance,
                p,
                n,
                n,
                &rng,
                0,
                &mut rays,
            )
            .is_some()
        })
        .count();
    open as f32 / samples as f32
}

/// The sun's visibility at `p` averaged over `samples` points of its disc.
pub fn sun_visibility(world: &World, sun: &Sun, p: Vec3, n: Vec3, samples: u32, seed: u64) -> f32 {
    let mut rays = 0;
    let mut lit = 0.0;
    let unit = Sun {
        radiance: Vec3::ONE,
        ..*sun
    };
    for k in 0..samples {
        let rng = SampleRng::new(seed, k as u64, 0, 1);
        let cos = n.dot(sample_cone(
            sun.direction,
            sun.angular_radius,
            rng.pair(STREAM_SUN, 0),
        ));
        if cos > 0.0 {
            let mut occluded = |probe: &Probe| world.occluded(&probe.ray(), probe.t_max);
            lit += sun_light(&mut occluded, &unit, p, n, n, &rng, &mut rays).x / cos;
        }
    }
    lit / samples as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shade::Material;
    use crate::terrain::{Heightmap, TerrainGrid};

    fn world(width: usize, height: usize, data: Vec<f32>, size: f32) -> World {
        let grid = TerrainGrid {
            heights: Heightmap::new(width, height, data),
            size: [size, size],
        };
        World::from_terrain(grid, Material::Albedo(Vec3::splat(0.5)), false)
    }

    #[test]
    fn basis_is_orthonormal() {
        for n in [Vec3::Y, Vec3::NEG_Z, Vec3::new(0.3, -0.5, 0.8).normalize()] {
            let (t, b) = basis(n);
            assert!(t.dot(n).abs() < 1e-6 && b.dot(n).abs() < 1e-6 && t.dot(b).abs() < 1e-6);
            assert!((t.length() - 1.0).abs() < 1e-6 && (b.length() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn cone_samples_stay_in_the_cone() {
        let axis = Vec3::new(0.2, 0.9, -0.3).normalize();
        let radius = 2f32.to_radians();
        for k in 0..500 {
            let u = (
                ((k * 37) % 500) as f32 / 500.0,
                ((k * 91) % 500) as f32 / 500.0,
            );
            let d = sample_cone(axis, radius, u);
            assert!(d.dot(axis) >= radius.cos() - 1e-6);
        }
        assert_eq!(sample_cone(axis, 0.0, (0.3, 0.7)), axis);
    }

    #[test]
    fn sky_visibility_of_an_open_plane_is_one() {
        let w = world(3, 3, vec![0.0; 9], 100.0);
        let v = sky_visibility(&w, Vec3::new(1.0, 0.0, 2.0), Vec3::Y, 256, 1e6, 3);
        assert_eq!(v, 1.0);
    }

    #[test]
    fn sky_visibility_at_the_bottom_of_a_deep_narrow_pit_is_near_zero() {
        // 21 × 21 samples 1 unit apart at height 50, one sample at 0: a pit
        // 50 deep and 2 wide.
        let mut data = vec![50.0; 21 * 21];
        data[10 * 21 + 10] = 0.0;
        let w = world(21, 21, data, 20.0);
        let v = sky_visibility(&w, Vec3::new(0.0, 0.0, 0.0), Vec3::Y, 256, 1e6, 3);
        assert!(v < 0.02, "visibility {v}");
        // The rim is open.
        assert_eq!(
            sky_visibility(&w, Vec3::new(5.0, 50.0, 5.0), Vec3::Y, 64, 1e6, 3),
            1.0
        );
    }

    #[test]
    fn soft_shadows_converge_to_the_hard_shadow() {
        // A wall 10 high along x = 0 between z = −50 and 50; the sun in the
        // west at 45°, so the wall's shadow reaches 10 units east of it.
        let mut data = vec![0.0; 101 * 101];
        for i in 0..101 {
            data[i * 101 + 50] = 10.0;
        }
        let w = world(101, 101, data, 100.0);
        let dir = Sun::direction_from(45f32.to_radians(), 270f32.to_radians());
        let hard = Sun {
            direction: dir,
            radiance: Vec3::ONE,
            angular_radius: 0.0,
        };
        for x in [2.0f32, 5.0, 8.0, 9.5, 10.5, 12.0, 20.0] {
            let p = Vec3::new(x, 0.0, 0.3);
            let expected = sun_visibility(&w, &hard, p, Vec3::Y, 1, 0);
            assert_eq!(
                expected,
                if x < 10.0 { 0.0 } else { 1.0 },
                "hard shadow at x = {x}"
            );
            let mut last_error = f32::INFINITY;
            for diameter in [8.0f32, 2.0, 0.5, 0.01] {
                let soft = Sun {
                    angular_radius: (diameter / 2.0).to_radians(),
                    ..hard
                };
                let error = (sun_visibility(&w, &soft, p, Vec3::Y, 256, 7) - expected).abs();
                assert!(
                    error <= last_error + 1e-6,
                    "x {x}: error grows as the sun shrinks"
                );
                last_error = error;
            }
            assert_eq!(
                last_error, 0.0,
                "x = {x}: a 0.01° sun casts the hard shadow"
            );
        }
        // A big sun really is soft: just inside the hard edge is partly lit.
        let big = Sun {
            angular_radius: 4f32.to_radians(),
            ..hard
        };
        let v = sun_visibility(&w, &big, Vec3::new(9.5, 0.0, 0.3), Vec3::Y, 256, 7);
        assert!(v > 0.05 && v < 0.95, "penumbra {v}");
    }
}
