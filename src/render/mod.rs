//! Rendering: the image is cut into tiles that rayon renders in parallel;
//! each pixel's samples use random numbers from hash(seed, pixel, sample),
//! so the result is the same bit for bit for any thread count or order.

pub mod framebuffer;
pub mod light;
pub mod sampler;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use glam::{Vec3, Vec4};
use indicatif::ProgressBar;
use rayon::prelude::*;

pub use framebuffer::Framebuffer;

use crate::accel::Ray;
use crate::camera::Camera;
use crate::error::{Error, Result};
use crate::scene::Scene;
use crate::world::World;

/// Side of a square render tile, pixels.
pub const TILE: u32 = 32;

/// Counts from one render.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderStats {
    /// Camera rays traced.
    pub primary_rays: u64,
    /// Secondary rays traced: shadow rays toward the sun and sky-light
    /// occlusion rays.
    pub shadow_rays: u64,
    /// Wall time of the tracing.
    pub trace_time: Duration,
}

impl RenderStats {
    /// All rays traced.
    pub fn rays(&self) -> u64 {
        self.primary_rays + self.shadow_rays
    }

    /// Millions of rays per second of tracing.
    pub fn mrays_per_second(&self) -> f64 {
        self.rays() as f64 / self.trace_time.as_secs_f64().max(1e-9) / 1e6
    }
}

/// A pixel rectangle [x0, x1) × [y0, y1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    /// Left column.
    pub x0: u32,
    /// Top row.
    pub y0: u32,
    /// One past the right column.
    pub x1: u32,
    /// One past the bottom row.
    pub y1: u32,
}

impl Rect {
    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.x1 - self.x0
    }
    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.y1 - self.y0
    }
}

/// Renders the whole image of `camera` on the current rayon pool, ticking
/// `progress` once per tile (the caller sets its length, see
/// [`tile_count`], so one bar can span several renders). Stops early with
/// [`Error::Interrupted`] when `cancel` is set.
pub fn render(
    scene: &Scene,
    world: &World,
    camera: &Camera,
    progress: &ProgressBar,
    cancel: &AtomicBool,
) -> Result<(Framebuffer, RenderStats)> {
    let full = Rect {
        x0: 0,
        y0: 0,
        x1: camera.width,
        y1: camera.height,
    };
    let tiles = tiles(full);
    let shadow_rays = AtomicU64::new(0);
    let start = Instant::now();
    let rendered: Vec<(Rect, Vec<Vec4>)> = tiles
        .par_iter()
        .map(|&tile| {
            if cancel.load(Ordering::Relaxed) {
                return (tile, Vec::new());
            }
            let mut shadows = 0u64;
            let mut pixels = Vec::with_capacity((tile.width() * tile.height()) as usize);
            for y in tile.y0..tile.y1 {
                for x in tile.x0..tile.x1 {
                    pixels.push(render_pixel(scene, world, camera, x, y, &mut shadows));
                }
            }
            shadow_rays.fetch_add(shadows, Ordering::Relaxed);
            progress.inc(1);
            (tile, pixels)
        })
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    let mut fb = Framebuffer::new(camera.width, camera.height);
    for (tile, pixels) in rendered {
        fb.put(tile, &pixels);
    }
    let stats = RenderStats {
        primary_rays: camera.width as u64 * camera.height as u64 * scene.image.samples as u64,
        shadow_rays: shadow_rays.into_inner(),
        trace_time: start.elapsed(),
    };
    Ok((fb, stats))
}

/// Number of tiles in a `width` × `height` image.
pub fn tile_count(width: u32, height: u32) -> u64 {
    width.div_ceil(TILE) as u64 * height.div_ceil(TILE) as u64
}

/// The tiles covering `r`, row by row.
pub fn tiles(r: Rect) -> Vec<Rect> {
    let mut out = Vec::new();
    for y0 in (r.y0..r.y1).step_by(TILE as usize) {
        for x0 in (r.x0..r.x1).step_by(TILE as usize) {
            out.push(Rect {
                x0,
                y0,
                x1: (x0 + TILE).min(r.x1),
                y1: (y0 + TILE).min(r.y1),
            });
        }
    }
    out
}

/// Mean linear radiance (rgb) and coverage (a) of pixel (x, y).
fn render_pixel(
    scene: &Scene,
    world: &World,
    camera: &Camera,
    x: u32,
    y: u32,
    shadows: &mut u64,
) -> Vec4 {
    let n = scene.image.samples;
    let pixel = y as u64 * camera.width as u64 + x as u64;
    let mut sum = Vec4::ZERO;
    for s in 0..n {
        let (jx, jy) = sampler::sample_offset(scene.seed, pixel, s, n);
        // No ray: background outside the projection, transparent black.
        if let Some(ray) = camera.ray(x as f32 + jx, y as f32 + jy) {
            let rng = sampler::SampleRng::new(scene.seed, pixel, s, n);
            sum += trace(scene, world, &ray, &rng, shadows).extend(1.0);
        }
    }
    sum / n as f32
}

/// Linear radiance arriving along the camera ray `ray`; `rays` counts the
/// secondary rays traced.
#[inline]
pub fn trace(
    scene: &Scene,
    world: &World,
    ray: &Ray,
    rng: &sampler::SampleRng,
    rays: &mut u64,
) -> Vec3 {
    let sun = &scene.sun;
    let sky = scene.sky.radiance(ray.dir, sun.direction, sun.radiance);
    let Some(hit) = world.intersect(ray) else {
        return sky + sun_disc(sun, ray.dir);
    };
    let (p, n, ng) = (hit.point, hit.normal, hit.geometric_normal);
    let albedo = world.albedo(&hit);
    // Lambert: reflected radiance = albedo/π · sun irradiance; the sky
    // light is already a radiance that the albedo multiplies.
    let sun_e = light::sun_light(world, sun, p, n, ng, rng, rays);
    let sky_l = light::sky_light(
        world,
        &scene.sky,
        &scene.sky_light,
        sun,
        p,
        n,
        ng,
        rng,
        rays,
    );
    let surface = albedo * (sun_e * std::f32::consts::FRAC_1_PI + sky_l);
    scene
        .fog
        .apply(surface, ray.origin.y, ray.dir.y, hit.t, sky)
}

/// The sun's disc seen directly: its irradiance spread over the disc's
/// solid angle 2π(1 − cos r).
#[inline]
fn sun_disc(sun: &crate::shade::Sun, dir: Vec3) -> Vec3 {
    let r = sun.angular_radius;
    if r <= 0.0 || dir.dot(sun.direction) < r.cos() {
        return Vec3::ZERO;
    }
    sun.radiance / (std::f32::consts::TAU * (1.0 - r.cos()))
}
