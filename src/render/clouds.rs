//! Clouds in the renderers: what a ray sees through them, and how much of
//! the sun and sky reaches a point under them.
//!
//! The direct renderer sees clouds by one walk along each camera (or
//! mirror) ray ([`Clouds::view_walk`]): what lies behind, dimmed by the
//! transmittance estimate, plus the light scattered at one chosen point,
//! weighted by the walk. That light is the sun's single scattering through
//! the clouds toward it, with Wrenninge et al.'s octaves standing in for
//! the higher orders ("Oz: The Great and Volumetric", 2013: each octave
//! scatters half as much, through half the optical depth, with a phase half
//! as peaked), and the sky's light dimmed toward the layer's floor. The
//! path tracer ([`super::path`]) traces the higher orders instead.

use glam::Vec3;

use super::sampler::SampleRng;
use crate::ray::Ray;
use crate::scene::Scene;
use crate::shade::clouds::{Phase, ALBEDO};
use crate::world::Viewed;

/// Random-number streams: the view walk, the walk toward the sun from
/// the chosen point, the walks from a surface toward the sun and up.
pub const STREAM_VIEW: u64 = 0xC1_00;
pub const STREAM_SCATTER_SUN: u64 = 0xC1_01;
pub const STREAM_SURFACE_SUN: u64 = 0xC1_02;
pub const STREAM_SURFACE_SKY: u64 = 0xC1_03;
/// The point of a fog's sun scattering, and the walk from it to the sun.
pub const STREAM_FOG: u64 = 0xC1_04;
pub const STREAM_FOG_SUN: u64 = 0xC1_05;

/// Octaves of the multiple-scattering approximation.
const OCTAVES: i32 = 3;
/// Share of the clear sky's light left under a cloud that hides the sky.
pub const OVERCAST: f32 = 0.7;

/// Uniform numbers from `stream` of the sample's generator, one by one.
#[inline]
pub fn uniforms(rng: &SampleRng, stream: u64) -> impl FnMut() -> f32 + '_ {
    let mut k = 0u32;
    move || {
        k += 1;
        rng.pair(stream, k).0
    }
}

/// What the ray from `origin` along unit `dir` sees of `behind` (the
/// surface at `t_max`, or the sky) through the clouds, with the clouds'
/// own light; `stream` offsets the walks' streams (a mirror ray's are not
/// the camera ray's). `rays` counts the shadow rays.
#[allow(clippy::too_many_arguments)]
pub fn through(
    scene: &Scene,
    world: &Viewed,
    origin: Vec3,
    dir: Vec3,
    t_max: f32,
    behind: Vec3,
    rng: &SampleRng,
    stream: u64,
    rays: &mut u64,
) -> Vec3 {
    let clouds = &scene.clouds;
    if clouds.is_empty() {
        return behind;
    }
    let walk = clouds.view_walk(origin, dir, t_max, &mut uniforms(rng, STREAM_VIEW + stream));
    let mut l = behind * walk.transmittance;
    if let Some((s, phase)) = walk.point {
        let p = origin + dir * s;
        let light = scattered(scene, world, p, dir, phase, rng, stream, rays);
        // The fog and the air between the eye and the cloud: a far cloud
        // fades into the haze as the land does.
        let sun = &scene.sun;
        let fogged = scene.fog.apply(light, origin.y, dir.y, s, || {
            scene.sky.radiance(dir, sun.direction, sun.radiance)
        });
        l += scene.sky.aerial(fogged, dir, s) * walk.weight;
    }
    l
}

/// Light a cloud at `p` scatters by `phase` toward a viewer looking
/// along `dir`, per unit of extinction.
#[allow(clippy::too_many_arguments)]
fn scattered(
    scene: &Scene,
    world: &Viewed,
    p: Vec3,
    dir: Vec3,
    phase: Phase,
    rng: &SampleRng,
    stream: u64,
    rays: &mut u64,
) -> Vec3 {
    let clouds = &scene.clouds;
    let sun = &scene.sun;
    let mut light = Vec3::ZERO;
    if sun.radiance != Vec3::ZERO {
        *rays += 1;
        if !world.occluded(&Ray::new(p, sun.direction), f32::INFINITY) {
            let (tr, tau) = clouds.light_walk(
                p,
                sun.direction,
                &mut uniforms(rng, STREAM_SCATTER_SUN + stream),
            );
            let c = dir.dot(sun.direction);
            let mut sum = tr * phase.eval(c, 1.0);
            for i in 1..OCTAVES {
                let k = 0.5f32.powi(i);
                sum += k * phase.eval(c, k) * (-tau * k).exp();
            }
            light += sun.radiance * sum;
        }
    }
    // The sky's light, from above more than below, and less toward the
    // layer's floor, under the cloud's own bulk.
    let sky = &scene.sky;
    let mean = (sky.ambient(Vec3::Y) + sky.ambient(Vec3::NEG_Y)) * 0.5;
    let h = clouds.height_fraction(p);
    light += mean * (0.4 + 0.6 * h);
    light * ALBEDO
}

/// The share of the sun's light that reaches the surface point `p`
/// through the clouds (an estimate: ratio tracking).
#[inline]
pub fn sun_share(scene: &Scene, p: Vec3, rng: &SampleRng) -> f32 {
    let clouds = &scene.clouds;
    if clouds.is_empty() {
        return 1.0;
    }
    clouds.transmittance(
        p,
        scene.sun.direction,
        f32::INFINITY,
        &mut uniforms(rng, STREAM_SURFACE_SUN),
    )
}

/// The share of the sky's light that reaches the surface point `p` under
/// the clouds: the clear share straight up, and [`OVERCAST`] of the rest.
#[inline]
pub fn sky_share(scene: &Scene, p: Vec3, rng: &SampleRng) -> f32 {
    let clouds = &scene.clouds;
    if clouds.is_empty() {
        return 1.0;
    }
    let up = clouds.transmittance(
        p,
        Vec3::Y,
        f32::INFINITY,
        &mut uniforms(rng, STREAM_SURFACE_SKY),
    );
    up + (1.0 - up) * OVERCAST
}

/// The sun's light the fog scatters toward the eye over the `t` units of
/// the ray from `origin` along unit `dir`: single scattering at one point
/// drawn in proportion to the fog's scattering (uniform in optical depth),
/// lit where a shadow ray finds the sun and dimmed by the clouds. An
/// unbiased estimate of ∫ T(s) σ(s) · share · p(θ) · E_sun · V(s) ds;
/// `stream` offsets its random numbers; `rays` counts the shadow ray.
#[allow(clippy::too_many_arguments)]
pub fn fog_sun(
    scene: &Scene,
    world: &Viewed,
    origin: Vec3,
    dir: Vec3,
    t: f32,
    rng: &SampleRng,
    stream: u64,
    rays: &mut u64,
) -> Vec3 {
    let (fog, sun) = (&scene.fog, &scene.sun);
    if fog.sun_scatter <= 0.0 || fog.density <= 0.0 || sun.radiance == Vec3::ZERO {
        return Vec3::ZERO;
    }
    let tau = fog.optical_depth(origin.y, dir.y, t);
    if tau.is_nan() || tau <= 0.0 {
        return Vec3::ZERO;
    }
    let u = rng.pair(STREAM_FOG + stream, 0).0;
    let Some(s) = fog.distance_at(origin.y, dir.y, u * tau) else {
        return Vec3::ZERO;
    };
    let p = origin + dir * s.min(t);
    *rays += 1;
    if world.occluded(&Ray::new(p, sun.direction), f32::INFINITY) {
        return Vec3::ZERO;
    }
    let clouds = if scene.clouds.is_empty() {
        1.0
    } else {
        let mut u = uniforms(rng, STREAM_FOG_SUN + stream);
        scene
            .clouds
            .transmittance(p, sun.direction, f32::INFINITY, &mut u)
    };
    let hg = crate::shade::clouds::henyey_greenstein(fog.anisotropy, dir.dot(sun.direction));
    sun.radiance * ((1.0 - (-tau).exp()) * fog.sun_scatter * hg * clouds)
}
