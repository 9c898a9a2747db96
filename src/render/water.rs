//! The water a ray meets and what it does to the land under and beside
//! it: the sea's plane and the land's lakes and rivers
//! ([`crate::world::Streams`]), both with the look of the scene's `water`.

use glam::Vec3;

use crate::ray::Ray;
use crate::scene::Scene;
use crate::shade::Water;
use crate::world::{SurfaceHit, World};

/// Albedo of white water (foam reflects most light, diffusely).
pub(super) const FOAM_ALBEDO: f32 = 0.8;

/// Marks a [`SurfaceHit`] on a lake or river (its `object`); the sea's
/// plane is `u32::MAX`.
const STREAM: u32 = u32::MAX - 1;

/// The first surface along `ray` whose closest scene hit is `hit`: that
/// hit, or the water's surface where the ray meets water first (then with
/// `true`). On the sea the normal is straight up; on a lake or river it is
/// its surface's, up and tilted as the water falls; the waves tilt only
/// the mirror and refraction directions ([`normal`]).
#[inline]
pub(super) fn first_surface(
    scene: &Scene,
    world: &World,
    ray: &Ray,
    hit: Option<&SurfaceHit>,
) -> Option<(SurfaceHit, bool)> {
    let mut t_hit = hit.map_or(f32::INFINITY, |h| h.t);
    let mut water = None;
    if let Some(t) = scene
        .water
        .as_ref()
        .and_then(|w| w.hit(ray.origin, ray.dir, t_hit))
    {
        t_hit = t;
        water = Some((t, Vec3::Y, u32::MAX));
    }
    if let Some((t, n)) = world.water_hit(ray, t_hit) {
        water = Some((t, n, STREAM));
    }
    match water {
        Some((t, n, object)) => Some((
            SurfaceHit {
                t,
                point: ray.at(t),
                geometric_normal: n,
                normal: n,
                material: 0,
                face: 0,
                object,
                uv: glam::Vec2::ZERO,
            },
            true,
        )),
        None => hit.map(|h| (*h, false)),
    }
}

/// The unit normal of the water's (waved) surface at `surface`, a water
/// hit from [`first_surface`], and how much of it is white water.
#[inline]
pub(super) fn normal(water: &Water, surface: &SurfaceHit) -> (Vec3, f32) {
    let p = surface.point;
    if surface.object == STREAM {
        let n = surface.geometric_normal;
        (water.normal_over(p.x, p.z, n), water.foam_at(p, n))
    } else {
        (water.normal_at(p.x, p.z), 0.0)
    }
}

/// How deep `p` lies under the sea or a lake or river (0 where dry).
#[inline]
pub(super) fn depth(water: &Water, world: &World, p: Vec3) -> f32 {
    let streams = world.streams.as_ref().map_or(0.0, |s| s.waters.depth(p));
    water.depth(p).max(streams)
}

/// The albedo factor of ground at `p` (1 dry, down to
/// [`crate::shade::water::WET_DARKENING`] wet): under or just above the
/// sea, or within the reach of a lake or river and up to the water's
/// `shore` above it.
#[inline]
pub(super) fn wet_factor(water: &Water, world: &World, p: Vec3) -> f32 {
    let bank = world
        .streams
        .as_ref()
        .map_or(f32::NAN, |s| s.waters.nearest_at(p.x, p.z));
    let wet = if bank.is_nan() {
        water.wetness(p)
    } else {
        water.wetness(p).max(water.wetness_over(bank, p.y))
    };
    water.wet_factor_of(wet)
}
