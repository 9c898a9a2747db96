//! The direct integrator: sun and sky light at the first surface a camera
//! ray meets (with its shadow and sky-light occlusion rays), water's
//! mirror and refraction, and fog in front. A tile's samples are shaded in
//! a batch whose secondary rays are traced together
//! (`radiance_batch`); [`trace`] shades one ray alone, with the same
//! result.

use glam::Vec3;

use super::clouds;
use super::light::{self, Probe};
use super::sampler;
use super::water::{self, first_surface, FOAM_ALBEDO};
use crate::ray::Ray;
use crate::scene::Scene;
use crate::world::{SurfaceHit, Viewed};

/// The offset of a water mirror ray's cloud streams from the camera ray's.
const MIRROR_STREAMS: u64 = 0x10;

/// The radiance of each sample of `list` whose camera ray (`rays`, one
/// for each `has_ray`) exists, shaded as a batch: the closest hits of the
/// rays first, then the secondary rays their shading asks about, then the
/// shading with those answers. Returns the values and whether each ray
/// met a surface (terrain, rock or water).
#[allow(clippy::too_many_arguments)]
pub(super) fn radiance_batch(
    scene: &Scene,
    world: &Viewed,
    list: &[(u32, u32, u32)],
    has_ray: &[bool],
    rays: &[Ray],
    rng_of: &impl Fn(u32, u32, u32) -> sampler::SampleRng,
    shadows: &mut u64,
) -> (Vec<Option<Vec3>>, Vec<bool>) {
    // The first surface of each ray, found once: the scene's closest hit
    // or the water in front of it.
    let firsts: Vec<Option<(SurfaceHit, bool)>> = rays
        .iter()
        .zip(world.intersect_batch(rays))
        .map(|(ray, hit)| first_surface(scene, world, ray, hit.as_ref()))
        .collect();
    // The secondary rays the shading of each hit asks about, in order.
    let per_hit = 1 + scene.sky_light.samples as usize;
    let mut probes = light::ProbeBatch::with_capacity(per_hit * firsts.len());
    let mut first_of_ray = firsts.iter();
    for (&(x, y, s), &has_ray) in list.iter().zip(has_ray) {
        if has_ray {
            let first = first_of_ray.next().expect("one hit slot per ray");
            if let Some((first, _)) = first {
                light_probes(scene, world, first, &rng_of(x, y, s), &mut |probe| {
                    probes.push(&probe)
                });
            }
        }
    }
    let mut queries = Vec::with_capacity(probes.len());
    probes.rays_into(&mut queries);
    let limits = &probes.limits;
    let blocked = world.occluded_batch(&queries, limits);

    let mut answers = queries.iter().zip(limits).zip(&blocked);
    let mut answer = |probe: &Probe| {
        let ((listed, &limit), &blocked) = answers
            .next()
            .expect("the shading asks the probes it listed, in order");
        debug_assert!(
            {
                let ray = probe.ray();
                (listed.origin, listed.dir, limit) == (ray.origin, ray.dir, probe.t_max)
            },
            "the shading asks the probes it listed, in order"
        );
        blocked
    };
    let mut ray_of_sample = rays.iter().zip(&firsts);
    let values = list
        .iter()
        .zip(has_ray)
        .map(|(&(x, y, s), &has_ray)| {
            if !has_ray {
                return None;
            }
            let (ray, first) = ray_of_sample.next().expect("one hit slot per ray");
            let rng = rng_of(x, y, s);
            Some(shade(
                scene,
                world,
                ray,
                first.as_ref(),
                &rng,
                &mut answer,
                shadows,
            ))
        })
        .collect();
    (values, firsts.iter().map(Option::is_some).collect())
}

/// Linear radiance arriving along the camera ray `ray`; `rays` counts the
/// secondary rays traced.
#[inline]
pub fn trace(
    scene: &Scene,
    world: &Viewed,
    ray: &Ray,
    rng: &sampler::SampleRng,
    rays: &mut u64,
) -> Vec3 {
    let hit = world.intersect(ray);
    let mut occluded = |probe: &Probe| world.occluded(&probe.ray(), probe.t_max);
    let first = first_surface(scene, world, ray, hit.as_ref());
    shade(scene, world, ray, first.as_ref(), rng, &mut occluded, rays)
}

/// Linear radiance arriving along the camera ray `ray` whose first
/// surface ([`first_surface`]) is `first`; `occluded` answers the shadow
/// and sky-light rays, and `rays` counts them.
#[inline]
fn shade(
    scene: &Scene,
    world: &Viewed,
    ray: &Ray,
    first: Option<&(SurfaceHit, bool)>,
    rng: &sampler::SampleRng,
    occluded: &mut impl FnMut(&Probe) -> bool,
    rays: &mut u64,
) -> Vec3 {
    let sun = &scene.sun;
    let sky = || scene.sky.radiance(ray.dir, sun.direction, sun.radiance);
    let Some(&(first, on_water)) = first else {
        let behind = sky() + sun_disc(sun, ray.dir);
        return clouds::through(
            scene,
            world,
            ray.origin,
            ray.dir,
            f32::INFINITY,
            behind,
            rng,
            0,
            rays,
        );
    };
    let surface = match (on_water, &scene.water) {
        (true, Some(water)) => {
            water_radiance(scene, world, water, ray, &first, rng, occluded, rays)
        }
        _ => lambert(scene, world, &first, ray.dir, rng, occluded, rays),
    };
    let fogged = scene
        .fog
        .apply(surface, ray.origin.y, ray.dir.y, first.t, sky);
    let shafts = clouds::fog_sun(scene, world, ray.origin, ray.dir, first.t, rng, 0, rays);
    let behind = scene.sky.aerial(fogged + shafts, ray.dir, first.t);
    clouds::through(
        scene, world, ray.origin, ray.dir, first.t, behind, rng, 0, rays,
    )
}

/// Radiance leaving the surface `hit` toward a viewer looking along `dir`
/// (before fog): albedo/π · sun irradiance + albedo · sky light, the albedo
/// darkened where a water plane wets the ground; where a layered material
/// is glossy, plus its share of the GGX highlight of the sun. A
/// translucent surface (a leaf) reflects 1 − t of that and passes on t of
/// the same from its other side.
#[inline]
fn lambert(
    scene: &Scene,
    world: &Viewed,
    hit: &SurfaceHit,
    dir: Vec3,
    rng: &sampler::SampleRng,
    occluded: &mut impl FnMut(&Probe) -> bool,
    rays: &mut u64,
) -> Vec3 {
    let (mut albedo, gloss) = world.look(hit);
    if let Some(water) = &scene.water {
        albedo *= water::wet_factor(water, world, hit.point);
    }
    let (sun_e, sky_l) = lights(scene, hit, rng, occluded, rays);
    let mut diffuse = albedo * (sun_e * std::f32::consts::FRAC_1_PI + sky_l);
    let t = world.translucency(hit);
    if t > 0.0 {
        let (sun_b, sky_b) = lights(scene, &hit.flipped(), rng, occluded, rays);
        let behind = albedo * (sun_b * std::f32::consts::FRAC_1_PI + sky_b);
        diffuse = diffuse * (1.0 - t) + behind * t;
    }
    match gloss {
        None => diffuse,
        Some((share, roughness)) => {
            let brdf = crate::shade::brdf::ggx(hit.normal, -dir, scene.sun.direction, roughness);
            diffuse + sun_e * (share * brdf)
        }
    }
}

/// Radiance leaving the water surface at `surface` toward the eye (before
/// the fog in front of it): Fresnel-weighted mirror light and light from
/// below. The mirror ray and the refracted ray are traced like camera rays
/// and the surfaces they meet lit as any surface (their shadow rays asked
/// directly, not through the tile's batch); light from the bottom falls by
/// Beer–Lambert over its path in the water, down from the surface (along
/// the sun's refracted direction) and back up to the eye, and the water
/// body itself sends back `color` times the light on the surface, in the
/// share the bottom does not fill.
#[allow(clippy::too_many_arguments)]
fn water_radiance(
    scene: &Scene,
    world: &Viewed,
    water: &crate::shade::Water,
    ray: &Ray,
    surface: &SurfaceHit,
    rng: &sampler::SampleRng,
    occluded: &mut impl FnMut(&Probe) -> bool,
    rays: &mut u64,
) -> Vec3 {
    use crate::shade::water::{fresnel, mirror, refract, surface_offset, WATER_INDEX};
    let sun = &scene.sun;
    let (sun_e, sky_l) = lights(scene, surface, rng, occluded, rays);
    let deep = water.color * (sun_e * std::f32::consts::FRAC_1_PI + sky_l);
    let p = surface.point;
    let (n, foam) = water::normal(water, surface);
    let eps = surface_offset(p);
    let mut direct = |probe: &Probe| world.occluded(&probe.ray(), probe.t_max);
    let f = fresnel(-ray.dir.dot(n), 1.0, WATER_INDEX);

    let r = mirror(ray.dir, n);
    let mirror_ray = Ray::new(p + Vec3::Y * eps, r);
    *rays += 1;
    let mirror_hit = world.intersect(&mirror_ray);
    let mirror = match &mirror_hit {
        None => scene.sky.radiance(r, sun.direction, sun.radiance) + sun_disc(sun, r),
        Some(h) => {
            let l = lambert(scene, world, h, r, rng, &mut direct, rays);
            let fogged = scene.fog.apply(l, mirror_ray.origin.y, r.y, h.t, || {
                scene.sky.radiance(r, sun.direction, sun.radiance)
            });
            scene.sky.aerial(fogged, r, h.t)
        }
    };
    let mirror = clouds::through(
        scene,
        world,
        mirror_ray.origin,
        r,
        mirror_hit.map_or(f32::INFINITY, |h| h.t),
        mirror,
        rng,
        MIRROR_STREAMS,
        rays,
    );

    // Below: the refracted ray to the bottom, if the bottom is there.
    let below = match refract(ray.dir, n, 1.0 / WATER_INDEX) {
        None => deep,
        Some(t) => {
            let down = Ray::new(p - Vec3::Y * eps, t);
            *rays += 1;
            match world.intersect(&down) {
                None => deep,
                Some(h) => {
                    let bottom = lambert(scene, world, &h, t, rng, &mut direct, rays);
                    let depth = water::depth(water, world, h.point);
                    let sun_in = refract(-sun.direction, Vec3::Y, 1.0 / WATER_INDEX)
                        .map_or(1.0, |d| -d.y)
                        .max(0.1);
                    let through = water.transmittance(h.t);
                    bottom * through * water.transmittance(depth / sun_in) + deep * (1.0 - through)
                }
            }
        }
    };
    let water = mirror * f + below * (1.0 - f);
    if foam > 0.0 {
        let white = FOAM_ALBEDO * (sun_e * std::f32::consts::FRAC_1_PI + sky_l);
        water + foam * (white - water)
    } else {
        water
    }
}

/// Sun irradiance and sky light at the surface `hit`.
#[inline]
fn lights(
    scene: &Scene,
    hit: &SurfaceHit,
    rng: &sampler::SampleRng,
    occluded: &mut impl FnMut(&Probe) -> bool,
    rays: &mut u64,
) -> (Vec3, Vec3) {
    let (p, n, ng) = (hit.point, hit.normal, hit.geometric_normal);
    let sun = &scene.sun;
    let mut sun_e = light::sun_light(occluded, sun, p, n, ng, rng, rays);
    let mut sky_l = light::sky_light(occluded, &scene.sky, &scene.sky_light, p, n, ng, rng, rays);
    if !scene.clouds.is_empty() {
        if sun_e != Vec3::ZERO {
            sun_e *= clouds::sun_share(scene, p, rng);
        }
        sky_l *= clouds::sky_share(scene, p, rng);
    }
    (sun_e, sky_l)
}

/// The probes that [`lambert`] asks about at `hit` through [`lights`], in
/// the order it asks them, without evaluating any light: those of its
/// front, then of its back if it is translucent.
#[inline]
fn light_probes(
    scene: &Scene,
    world: &Viewed,
    hit: &SurfaceHit,
    rng: &sampler::SampleRng,
    record: &mut impl FnMut(Probe),
) {
    side_probes(scene, hit, rng, record);
    if world.translucency(hit) > 0.0 {
        side_probes(scene, &hit.flipped(), rng, record);
    }
}

/// The probes [`lights`] asks about at `hit`, in its order.
#[inline]
fn side_probes(
    scene: &Scene,
    hit: &SurfaceHit,
    rng: &sampler::SampleRng,
    record: &mut impl FnMut(Probe),
) {
    let (p, n, ng) = (hit.point, hit.normal, hit.geometric_normal);
    if let Some((probe, _)) = light::sun_probe(&scene.sun, p, n, ng, rng) {
        record(probe);
    }
    let sky = &scene.sky_light;
    for k in 0..sky.samples {
        if let Some(probe) = light::sky_probe(p, n, ng, rng, k, sky.distance) {
            record(probe);
        }
    }
}

/// The sun's disc seen directly: its irradiance spread over the disc's
/// solid angle 2π(1 − cos r).
#[inline]
pub(super) fn sun_disc(sun: &crate::shade::Sun, dir: Vec3) -> Vec3 {
    let r = sun.angular_radius;
    if r <= 0.0 || dir.dot(sun.direction) < r.cos() {
        return Vec3::ZERO;
    }
    sun.radiance / (std::f32::consts::TAU * (1.0 - r.cos()))
}
