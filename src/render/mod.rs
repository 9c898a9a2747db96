//! Rendering: the image is cut into tiles that rayon renders in parallel;
//! each pixel's samples use random numbers from hash(seed, pixel, sample),
//! so the result is the same bit for bit for any thread count or order.

mod clouds;
pub mod direct;
pub mod framebuffer;
pub mod light;
pub mod path;
pub mod sampler;
pub mod skymap;
mod water;
#[cfg(test)]
mod world_tests;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use glam::{Vec3, Vec4};
use indicatif::ProgressBar;
use rayon::prelude::*;

pub use crate::tiling::{patch_order, tile_count, tiles, Rect, PATCH, TILE};
pub use direct::trace;
pub use framebuffer::Framebuffer;

use crate::camera::Camera;
use crate::error::{Error, Result};
use crate::ray::Ray;
use crate::scene::Scene;
use crate::world::{Viewed, World};

/// Counts from one render.
#[derive(Debug, Clone, Copy, Default)]
pub struct RenderStats {
    /// Camera rays traced.
    pub primary_rays: u64,
    /// Secondary rays traced: shadow rays toward the sun, sky-light
    /// occlusion rays, and the path tracer's bounce rays.
    pub shadow_rays: u64,
    /// Wall time of the tracing.
    pub trace_time: Duration,
    /// Wall time of building the view's horizons and sight table
    /// ([`crate::world::World::view`]), before the tracing.
    pub view_time: Duration,
    /// Samples whose radiance came out NaN or infinite (each replaced by black).
    pub bad_samples: u64,
    /// The first pixel (in row-major order) with such a sample.
    pub first_bad_pixel: Option<(u32, u32)>,
    /// Samples taken (fewer than pixels × `samples` where adaptive
    /// sampling stopped pixels early).
    pub samples: u64,
    /// Pixels rendered.
    pub pixels: u64,
}

impl RenderStats {
    /// Adds `other`'s counts to these (a sequence's frames); the first bad
    /// pixel stays the first one found.
    pub fn add(&mut self, other: &RenderStats) {
        self.primary_rays += other.primary_rays;
        self.shadow_rays += other.shadow_rays;
        self.samples += other.samples;
        self.pixels += other.pixels;
        self.trace_time += other.trace_time;
        self.view_time += other.view_time;
        self.first_bad_pixel = self.first_bad_pixel.or(other.first_bad_pixel);
        self.bad_samples += other.bad_samples;
    }

    /// All rays traced.
    pub fn rays(&self) -> u64 {
        self.primary_rays + self.shadow_rays
    }

    /// Millions of rays per second of tracing.
    pub fn mrays_per_second(&self) -> f64 {
        self.rays() as f64 / self.trace_time.as_secs_f64().max(1e-9) / 1e6
    }

    /// Mean samples per pixel.
    pub fn mean_samples(&self) -> f64 {
        self.samples as f64 / self.pixels.max(1) as f64
    }
}

/// Renders the whole image of `camera`; see [`render_region`].
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
    render_region(scene, world, camera, full, progress, cancel)
}

/// Renders the pixels of `region` (inside the camera's image) on the current
/// rayon pool, ticking `progress` once per tile (the caller sets its length,
/// see [`tile_count`], so one bar can span several renders). Each pixel is a
/// function of its position in the full image only, so a region's pixels are
/// bit-identical to the same pixels of a full render. Stops early with
/// [`Error::Interrupted`] when `cancel` is set.
pub fn render_region(
    scene: &Scene,
    world: &World,
    camera: &Camera,
    region: Rect,
    progress: &ProgressBar,
    cancel: &AtomicBool,
) -> Result<(Framebuffer, RenderStats)> {
    let mut fb = Framebuffer::new(region.width(), region.height());
    let bands = fb.pixels.par_chunks_mut(band_len(region));
    let stats = render_bands(
        scene,
        world,
        camera,
        region,
        progress,
        cancel,
        bands,
        |_, dst, band| dst.copy_from_slice(band),
    )?;
    Ok((fb, stats))
}

/// Pixels in a band of [`TILE`] rows of `region`.
fn band_len(region: Rect) -> usize {
    (region.width() * TILE).max(1) as usize
}

/// Renders `region` band by band (bands of [`TILE`] rows, each of them a
/// row of tiles), bands and their tiles in parallel, and hands each band's
/// number and pixels (row-major) to `finish` with the band's item of
/// `sinks` (one per band, in order). Threads take bands in order from the
/// top, so bands finish about in order. The pixels are put together in a
/// buffer each rayon job keeps from band to band.
#[allow(clippy::too_many_arguments)]
fn render_bands<S: Send>(
    scene: &Scene,
    world: &World,
    camera: &Camera,
    region: Rect,
    progress: &ProgressBar,
    cancel: &AtomicBool,
    sinks: impl IndexedParallelIterator<Item = S>,
    finish: impl Fn(usize, S, &[Vec4]) + Sync,
) -> Result<RenderStats> {
    let shadow_rays = AtomicU64::new(0);
    let samples_taken = AtomicU64::new(0);
    let gather = Gather::of(scene);
    let viewing = Instant::now();
    let world = &view(scene, world, camera, region);
    let view_time = viewing.elapsed();
    let start = Instant::now();
    let sinks: Vec<S> = sinks.collect();
    let count = sinks.len();
    let sinks = Mutex::new(sinks.into_iter().enumerate());
    let bad = (0..count)
        .into_par_iter()
        .map_init(Vec::new, |canvas: &mut Vec<Vec4>, _| {
            // The first band no thread has taken, whichever job this is.
            let (band, sink) = sinks
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .next()
                .expect("a band for each job");
            let y0 = region.y0 + band as u32 * TILE;
            let y1 = (y0 + TILE).min(region.y1);
            let band_tiles = tiles(Rect { y0, y1, ..region });
            let rendered: Vec<(Rect, Vec<Vec4>, Bad)> = band_tiles
                .par_iter()
                .map(|&tile| {
                    let mut bad = Bad::default();
                    if cancel.load(Ordering::Relaxed) {
                        return (tile, Vec::new(), bad);
                    }
                    let mut shadows = 0u64;
                    let (pixels, taken) =
                        render_tile(scene, world, camera, &gather, tile, &mut shadows, &mut bad);
                    shadow_rays.fetch_add(shadows, Ordering::Relaxed);
                    samples_taken.fetch_add(taken, Ordering::Relaxed);
                    progress.inc(1);
                    (tile, pixels, bad)
                })
                .collect();
            let mut bad = Bad::default();
            canvas.clear();
            canvas.resize(((y1 - y0) * region.width()) as usize, Vec4::ZERO);
            for (tile, pixels, tile_bad) in rendered {
                if pixels.is_empty() {
                    return bad; // cancelled
                }
                let in_band = Rect {
                    x0: tile.x0 - region.x0,
                    y0: tile.y0 - y0,
                    x1: tile.x1 - region.x0,
                    y1: tile.y1 - y0,
                };
                framebuffer::put_rect(canvas, region.width(), in_band, &pixels);
                bad.merge(&tile_bad);
            }
            finish(band, sink, canvas);
            bad
        })
        .reduce(Bad::default, |mut a, b| {
            a.merge(&b);
            a
        });
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    let samples = samples_taken.into_inner();
    Ok(RenderStats {
        primary_rays: samples,
        shadow_rays: shadow_rays.into_inner(),
        trace_time: start.elapsed(),
        view_time,
        bad_samples: bad.count,
        first_bad_pixel: bad.first.map(|(y, x)| (x, y)),
        samples,
        pixels: region.width() as u64 * region.height() as u64,
    })
}

/// `world` as seen by `camera` under the scene's sun, for the camera rays
/// of `region` at the scene's samples per pixel ([`World::view`]): built
/// for each render, so that no render uses another view's horizons or
/// sight table.
fn view<'w>(scene: &Scene, world: &'w World, camera: &Camera, region: Rect) -> Viewed<'w> {
    let pixels = region.width() as u64 * region.height() as u64;
    let camera_rays = (pixels * scene.image.samples as u64) as usize;
    let sight = camera.sight_sample();
    let eye = sight.as_ref().map(|(e, d)| (*e, d.as_slice()));
    // Shadow rays go toward points of the sun's disc (`light::sun_probe`),
    // at most one a camera ray.
    let light = (scene.sun.direction, scene.sun.angular_radius);
    world.view(Some(light), eye, camera_rays)
}

/// Samples that came out NaN or infinite: how many, and the first pixel
/// as (row, column) so that the minimum is the first in row-major order.
#[derive(Debug, Clone, Copy, Default)]
struct Bad {
    count: u64,
    first: Option<(u32, u32)>,
}

impl Bad {
    fn merge(&mut self, other: &Bad) {
        self.count += other.count;
        self.first = match (self.first, other.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// How a render gathers light, set up once for all its tiles.
enum Gather {
    /// The direct renderer.
    Direct,
    /// The path tracer, with the sky tabulated as a light to sample.
    Path {
        bounces: u32,
        sky_map: skymap::SkyMap,
    },
}

impl Gather {
    fn of(scene: &Scene) -> Gather {
        match scene.integrator {
            crate::scene::Integrator::Direct => Gather::Direct,
            crate::scene::Integrator::Path { bounces, .. } => Gather::Path {
                bounces,
                sky_map: skymap::SkyMap::of(&scene.sky),
            },
        }
    }
}

/// Samples traced as one batch: a patch's pixels at a full round of
/// samples. A whole tile's round at once (65 536 samples) spills the
/// caches between a path's steps and takes its buffers from the kernel,
/// zeroed, every round; batches this size ran 10–25 % faster, the same
/// bytes (each sample's light does not depend on its batch).
const BATCH: usize = (PATCH * PATCH * 64) as usize;

/// Samples per pixel of the round after `done` of `n`: 16, then as many
/// as were taken so far, at most 64 at a time.
fn round_size(done: u32, n: u32) -> u32 {
    let size = if done == 0 { 16 } else { done.min(64) };
    size.min(n - done)
}

/// A pixel's samples so far.
#[derive(Debug, Clone, Copy, Default)]
struct PixelSum {
    /// Radiance (rgb) and coverage (a).
    sum: Vec4,
    /// Samples taken.
    taken: u32,
    /// Sums of the samples' luminance and its square.
    lum: f64,
    lum2: f64,
}

impl PixelSum {
    /// Whether the relative standard error of the mean luminance is below
    /// `threshold`, the mean floored at `floor`.
    fn converged(&self, threshold: f32, floor: f32) -> bool {
        let k = self.taken as f64;
        if k < 2.0 {
            return false;
        }
        let mean = self.lum / k;
        let variance = ((self.lum2 / k - mean * mean) * k / (k - 1.0)).max(0.0);
        let error = (variance / k).sqrt();
        error < threshold as f64 * mean.max(floor as f64)
    }
}

/// Luminance of linear sRGB (Rec. 709 weights).
#[inline]
fn luminance(c: Vec3) -> f32 {
    c.dot(Vec3::new(0.2126, 0.7152, 0.0722))
}

/// Mean linear radiance (rgb) and coverage (a) of each pixel of `tile`, row
/// by row, and the samples taken; a sample whose radiance is not finite
/// counts as black and is recorded in `bad`.
///
/// Samples come in rounds ([`round_size`]); with `image.noise_threshold`
/// set, a pixel leaves after a round once its error is below the
/// threshold ([`PixelSum::converged`]): the decision depends on its own
/// samples only, and each sample is the same whatever else is in its
/// round, so the result does not depend on the tile's other pixels.
fn render_tile(
    scene: &Scene,
    world: &Viewed,
    camera: &Camera,
    gather: &Gather,
    tile: Rect,
    shadows: &mut u64,
    bad: &mut Bad,
) -> (Vec<Vec4>, u64) {
    let n = scene.image.samples;
    let threshold = scene.image.noise_threshold;
    // Near-black pixels are judged against this luminance (about a
    // twentieth of a mid-grey after the exposure).
    let floor = 0.05 / scene.image.exposure_scale;
    let order = patch_order(tile);
    let mut sums = vec![PixelSum::default(); order.len()];
    let mut active: Vec<usize> = (0..order.len()).collect();
    let mut done = 0;
    let mut list = Vec::new();
    while done < n && !active.is_empty() {
        let round = round_size(done, n);
        list.clear();
        for &i in &active {
            let (x, y) = order[i];
            list.extend((done..done + round).map(|s| (x, y, s)));
        }
        let mut values = Vec::with_capacity(list.len());
        for part in list.chunks(BATCH) {
            values.extend(sample_radiance(scene, world, camera, gather, part, shadows));
        }
        for (&i, values) in active.iter().zip(values.chunks(round as usize)) {
            let (x, y) = order[i];
            let pixel = &mut sums[i];
            for &c in values {
                pixel.taken += 1;
                // No ray: background outside the projection, transparent black.
                let Some(c) = c else { continue };
                if c.is_finite() {
                    pixel.sum += c.extend(1.0);
                    let l = luminance(c) as f64;
                    pixel.lum += l;
                    pixel.lum2 += l * l;
                } else {
                    pixel.sum += Vec4::W;
                    bad.merge(&Bad {
                        count: 1,
                        first: Some((y, x)),
                    });
                }
            }
        }
        done += round;
        if threshold > 0.0 && done < n {
            active.retain(|&i| !sums[i].converged(threshold, floor));
        }
    }
    let mut pixels = vec![Vec4::ZERO; (tile.width() * tile.height()) as usize];
    let mut taken = 0;
    for (&(x, y), pixel) in order.iter().zip(&sums) {
        pixels[((y - tile.y0) * tile.width() + x - tile.x0) as usize] =
            pixel.sum / pixel.taken as f32;
        taken += pixel.taken as u64;
    }
    (pixels, taken)
}

/// The radiance of each sample (x, y, s) of `list` (None where the
/// projection gives it no camera ray), in order.
///
/// The camera rays are traced as one batch. The direct renderer then
/// traces the shadow and sky-light rays of all the samples as another (the
/// terrain walks batches eight rays at a time): its shading runs twice,
/// once to list the probes it asks about (their rays built there, once),
/// once with their answers. The path tracer goes on as a wavefront
/// ([`path::trace_paths`]). Each sample gets exactly what [`trace`] gives
/// it on its own.
fn sample_radiance(
    scene: &Scene,
    world: &Viewed,
    camera: &Camera,
    gather: &Gather,
    list: &[(u32, u32, u32)],
    shadows: &mut u64,
) -> Vec<Option<Vec3>> {
    let n = scene.image.samples;
    let seed = scene.seed;
    let pixel_index = |x: u32, y: u32| y as u64 * camera.width as u64 + x as u64;
    let rng_of = |x: u32, y: u32, s: u32| sampler::SampleRng::new(seed, pixel_index(x, y), s, n);
    let points: Vec<[f32; 2]> = list
        .iter()
        .map(|&(x, y, s)| {
            let (jx, jy) = sampler::sample_offset(seed, pixel_index(x, y), s, n);
            [x as f32 + jx, y as f32 + jy]
        })
        .collect();
    let (mut has_ray, mut rays) = (
        Vec::with_capacity(list.len()),
        Vec::with_capacity(list.len()),
    );
    camera.rays_into(&points, &mut has_ray, &mut rays);

    if let Gather::Path { bounces, sky_map } = gather {
        let cameras: Vec<(usize, sampler::SampleRng, Ray)> = list
            .iter()
            .enumerate()
            .filter(|&(k, _)| has_ray[k])
            .zip(&rays)
            .map(|((k, &(x, y, s)), &ray)| (k, rng_of(x, y, s), ray))
            .collect();
        let mut radiance = vec![Vec3::ZERO; list.len()];
        // Coverage only for a transparent background (as below).
        let mut covered = scene.image.transparent.then(|| vec![true; cameras.len()]);
        path::trace_paths(
            scene,
            world,
            sky_map,
            *bounces,
            &cameras,
            &mut radiance,
            covered.as_deref_mut(),
            shadows,
        );
        let values = radiance
            .into_iter()
            .zip(&has_ray)
            .map(|(c, &has)| has.then_some(c))
            .collect();
        return match covered {
            None => values,
            Some(covered) => uncover(values, &has_ray, |k| covered[k]),
        };
    }

    let (values, covered) =
        direct::radiance_batch(scene, world, list, &has_ray, &rays, &rng_of, shadows);
    if !scene.image.transparent {
        return values;
    }
    uncover(values, &has_ray, |k| covered[k])
}

/// `values` (one a sample; `has_ray` says which samples have a camera
/// ray) with the samples whose camera ray `k` is not `covered(k)` left
/// uncovered: a transparent background.
fn uncover(
    values: Vec<Option<Vec3>>,
    has_ray: &[bool],
    covered: impl Fn(usize) -> bool,
) -> Vec<Option<Vec3>> {
    let mut ray = 0;
    values
        .into_iter()
        .zip(has_ray)
        .map(|(c, &has)| {
            let k = ray;
            ray += usize::from(has);
            c.filter(|_| covered(k))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    fn small_scene() -> Scene {
        let mut scene = crate::scene::default_scene();
        scene.terrain.resolution = [33, 33];
        scene.image.width = 16;
        scene.image.height = 9;
        scene.image.samples = 2;
        scene
    }

    #[test]
    fn nan_samples_are_counted_replaced_and_located() {
        // Bypass validation: a NaN sun reaches every sample (through the
        // light on surfaces and the glow in the sky).
        let mut scene = small_scene();
        scene.sun.radiance = Vec3::NAN;
        let world = World::build(&scene);
        let camera = scene.camera();
        let (fb, stats) = render(
            &scene,
            &world,
            &camera,
            &ProgressBar::hidden(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(stats.bad_samples, 16 * 9 * 2);
        assert_eq!(stats.first_bad_pixel, Some((0, 0)));
        assert!(
            fb.pixels.iter().all(|p| p.is_finite()),
            "no pixel is poisoned"
        );
    }

    /// The whole frame of `scene`, its world built for it.
    fn rendered(scene: &Scene) -> (Framebuffer, RenderStats) {
        let world = World::build(scene);
        let camera = scene.camera();
        render(
            scene,
            &world,
            &camera,
            &ProgressBar::hidden(),
            &AtomicBool::new(false),
        )
        .unwrap()
    }

    #[test]
    fn a_sane_scene_has_no_bad_samples() {
        let scene = small_scene();
        let (_, stats) = rendered(&scene);
        assert_eq!((stats.bad_samples, stats.first_bad_pixel), (0, None));
    }

    /// Tiles trace their camera rays and then their shadow and sky-light
    /// rays as batches, shading in two passes (the path tracer steps all
    /// of a tile's paths together); every sample must still get exactly
    /// what tracing it alone gives: terrain, listed, analytic and
    /// instanced rocks, soft sun and sky light, water, rays outside a
    /// fisheye, far-field rings, and paths.
    #[test]
    fn tiles_match_tracing_each_sample_alone() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (name, path) in [
            ("scenes/horizon-360.json", false),
            ("scenes/horizon-360.json", true),
            ("scenes/alpine-lake.json", false),
            ("scenes/boulder-field.json", false),
            ("scenes/cobble-rocks.json", false),
            ("scenes/eroded-island.json", false),
            ("scenes/fisheye.json", false),
            ("scenes/alpine-lake.json", true),
            ("scenes/cobble-rocks.json", true),
            ("scenes/fisheye.json", true),
        ] {
            let mut scene = crate::scene::load(&root.join(name)).unwrap();
            (scene.image.width, scene.image.height, scene.image.samples) = (40, 30, 2);
            if let Some(rock) = scene.rocks.first_mut() {
                rock.analytic = true;
            }
            if path {
                scene.integrator = crate::scene::Integrator::Path {
                    bounces: 3,
                    volume_bounces: 16,
                };
            }
            let sky_map = skymap::SkyMap::of(&scene.sky);
            let world = World::build(&scene);
            let camera = scene.camera();
            let none = AtomicBool::new(false);
            let (fb, stats) =
                render(&scene, &world, &camera, &ProgressBar::hidden(), &none).unwrap();
            // One ray at a time without a view: the render's view changes
            // no answer.
            let seen = world.view(None, None, 0);
            let n = scene.image.samples;
            let mut rays = 0;
            for y in 0..camera.height {
                for x in 0..camera.width {
                    let pixel = y as u64 * camera.width as u64 + x as u64;
                    let mut sum = Vec4::ZERO;
                    for s in 0..n {
                        let (jx, jy) = sampler::sample_offset(scene.seed, pixel, s, n);
                        if let Some(ray) = camera.ray(x as f32 + jx, y as f32 + jy) {
                            let rng = sampler::SampleRng::new(scene.seed, pixel, s, n);
                            let c = if path {
                                path::trace_path(&scene, &seen, &sky_map, 3, &ray, &rng, &mut rays)
                            } else {
                                trace(&scene, &seen, &ray, &rng, &mut rays)
                            };
                            sum += c.extend(1.0);
                        }
                    }
                    let alone = (sum / n as f32).to_array().map(f32::to_bits);
                    let tiled = fb.pixels[pixel as usize].to_array().map(f32::to_bits);
                    assert_eq!(tiled, alone, "{name} (path {path}): pixel ({x}, {y})");
                }
            }
            assert_eq!(stats.shadow_rays, rays, "{name}: secondary rays");
            assert!(rays > 1000, "{name}: the scene casts shadow rays");
        }
    }

    /// A scene for the path tracer's checks: `scene` at `size` with a
    /// uniform sky of radiance `sky`, the sun as given, no fog, every
    /// surface of albedo `albedo`.
    fn uniform_sky(mut scene: Scene, sky: f32, albedo: f32) -> Scene {
        scene.sky = crate::shade::Sky::Gradient {
            zenith: Vec3::splat(sky),
            horizon: Vec3::splat(sky),
            ground: Vec3::splat(sky),
            ambient: 1.0,
        };
        scene.fog.density = 0.0;
        scene.terrain.material = crate::shade::Material::Albedo(Vec3::splat(albedo));
        scene.terrain.layers = None;
        scene
    }

    /// The mean of the red channel over the image and its standard error
    /// (from the spread of the means of `seeds` sample seeds over the
    /// terrain of the scene's own seed).
    fn image_means(scene: &Scene, seeds: u64) -> (f64, f64) {
        let world = World::build(scene);
        let camera = scene.camera();
        let none = AtomicBool::new(false);
        let means: Vec<f64> = (0..seeds)
            .map(|seed| {
                let scene = Scene {
                    seed: 1000 + seed,
                    ..scene.clone()
                };
                let (fb, _) =
                    render(&scene, &world, &camera, &ProgressBar::hidden(), &none).unwrap();
                let sum: f64 = fb.pixels.iter().map(|p| p.x as f64).sum();
                sum / fb.pixels.len() as f64
            })
            .collect();
        let k = seeds as f64;
        let mean = means.iter().sum::<f64>() / k;
        let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (k - 1.0);
        (mean, (var / k).sqrt())
    }

    /// With no bounces the path tracer gathers the light the direct
    /// renderer does (sky occlusion unlimited): the image means agree
    /// within their standard errors.
    #[test]
    fn the_path_tracer_without_bounces_agrees_with_direct_light() {
        let mut scene = uniform_sky(small_scene(), 0.6, 0.5);
        (scene.image.width, scene.image.height, scene.image.samples) = (32, 18, 8);
        scene.sky_light.distance = 1e7;
        scene.sky_light.samples = 8;
        let (direct, e_direct) = image_means(&scene, 8);
        scene.integrator = crate::scene::Integrator::Path {
            bounces: 0,
            volume_bounces: 16,
        };
        let (path, e_path) = image_means(&scene, 8);
        let error = (e_direct * e_direct + e_path * e_path).sqrt();
        assert!(
            (direct - path).abs() < 3.0 * error,
            "direct {direct} ± {e_direct}, path {path} ± {e_path}"
        );
        assert!(error < 0.01 * direct, "the test can tell: error {error}");
    }

    /// A flat plane 1 km across without a sun, seen from 14 m away so
    /// that it fills the 24 × 16 frame, path-traced with `bounces`.
    fn flat_plane(bounces: u32) -> Scene {
        let src = r#"{
            "image": {"width": 24, "height": 16, "samples": 16},
            "camera": {"position": [0, 10, -10], "look_at": [0, 0, 0]},
            "terrain": {"size": [1000, 1000], "resolution": [3, 3], "height": 0},
            "sun": {"intensity": 0}
        }"#;
        let mut scene = crate::scene::parse(src, "flat.json", std::path::Path::new(".")).unwrap();
        scene.integrator = crate::scene::Integrator::Path {
            bounces,
            volume_bounces: 16,
        };
        scene
    }

    /// A flat open plane of albedo a under a uniform sky of radiance L
    /// (no sun) sends back a · L whatever the bounces: its bounce rays all
    /// leave for the sky. And with bounces, light between the slopes of a
    /// real terrain adds to the image.
    #[test]
    fn a_flat_plane_under_a_uniform_sky_sends_back_albedo_times_sky() {
        let scene = uniform_sky(flat_plane(3), 0.8, 0.5);
        let (mean, error) = image_means(&scene, 6);
        assert!(
            (mean - 0.4).abs() < 3.0 * error.max(1e-4) && error < 0.004,
            "{mean} ± {error}"
        );

        let mut valley = uniform_sky(small_scene(), 0.6, 0.7);
        (valley.image.width, valley.image.height) = (32, 18);
        valley.integrator = crate::scene::Integrator::Path {
            bounces: 0,
            volume_bounces: 16,
        };
        let (none, e0) = image_means(&valley, 4);
        valley.integrator = crate::scene::Integrator::Path {
            bounces: 2,
            volume_bounces: 16,
        };
        let (two, e2) = image_means(&valley, 4);
        assert!(
            two - none > 5.0 * (e0 * e0 + e2 * e2).sqrt(),
            "bounce light: {none} ± {e0} then {two} ± {e2}"
        );
    }

    /// A flat open plane of albedo a under a gradient sky with zenith Z
    /// and horizon H, whose radiance at cos θ = μ above the horizon is
    /// H + (Z − H)√μ, sends back (a / π) · 2π ∫₀¹ (H + (Z − H)√μ) μ dμ =
    /// a (H + 0.8 (Z − H)). The sky is drawn only where it is brighter
    /// than its mean (μ > 1/9 here), so this checks that the bounce ray
    /// alone brings the rest, weighted in full.
    #[test]
    fn a_flat_plane_under_a_gradient_sky_sends_back_its_cosine_weighted_mean() {
        let mut scene = uniform_sky(flat_plane(1), 0.2, 0.5);
        scene.sky = crate::shade::Sky::Gradient {
            zenith: Vec3::splat(1.0),
            horizon: Vec3::splat(0.2),
            ground: Vec3::splat(0.2),
            ambient: 1.0,
        };
        let (mean, error) = image_means(&scene, 6);
        let exact = 0.5 * (0.2 + 0.8 * 0.8);
        assert!(
            (mean - exact).abs() < 3.0 * error.max(1e-4) && error < 0.004,
            "{mean} ± {error}, exactly {exact}"
        );
    }

    /// Adaptive sampling: pixels of open sky stop after the first round;
    /// the summary's count says so; a region is still bit-identical to the
    /// same pixels of the full frame, and without a threshold every pixel
    /// takes every sample.
    #[test]
    fn adaptive_sampling_stops_quiet_pixels_and_keeps_regions_exact() {
        let mut scene = small_scene();
        scene.integrator = crate::scene::Integrator::Path {
            bounces: 1,
            volume_bounces: 16,
        };
        (scene.image.width, scene.image.height, scene.image.samples) = (48, 32, 64);
        let (_, all) = rendered(&scene);
        assert_eq!(all.samples, 48 * 32 * 64);
        assert_eq!(all.mean_samples(), 64.0);
        scene.image.noise_threshold = 0.05;
        let (full, stats) = rendered(&scene);
        let mean = stats.mean_samples();
        assert!(mean > 16.0 && mean < 48.0, "mean samples {mean}");
        assert_eq!(stats.primary_rays, stats.samples);
        let world = World::build(&scene);
        let camera = scene.camera();
        let region = Rect {
            x0: 7,
            y0: 5,
            x1: 41,
            y1: 30,
        };
        let none = AtomicBool::new(false);
        let (part, _) = render_region(
            &scene,
            &world,
            &camera,
            region,
            &ProgressBar::hidden(),
            &none,
        )
        .unwrap();
        assert_region_of(&part, &full, region);
    }

    /// `part`, a render of `region`, is bit for bit `full`'s pixels there.
    fn assert_region_of(part: &Framebuffer, full: &Framebuffer, region: Rect) {
        for y in 0..region.height() {
            for x in 0..region.width() {
                let a = part.pixels[(y * region.width() + x) as usize];
                let b = full.pixels[((y + region.y0) * full.width + x + region.x0) as usize];
                assert_eq!(
                    a.to_array().map(f32::to_bits),
                    b.to_array().map(f32::to_bits),
                    "pixel ({x}, {y}) of region {region:?}"
                );
            }
        }
    }

    #[test]
    fn a_pixel_converges_when_its_error_is_under_the_threshold() {
        let mut p = PixelSum::default();
        for l in [1.0, 1.0, 1.0, 1.0] {
            p.taken += 1;
            p.lum += l;
            p.lum2 += l * l;
        }
        assert!(p.converged(0.01, 0.05), "no variance");
        // Samples 0 and 2: mean 1, sample variance 4/3, error √(1/3) ≈ 0.577.
        let mut q = PixelSum::default();
        for l in [0.0, 2.0, 0.0, 2.0] {
            q.taken += 1;
            q.lum += l;
            q.lum2 += l * l;
        }
        assert!(q.converged(0.58, 0.05) && !q.converged(0.57, 0.05));
        // Near black, the floor: mean 0.01, error 0.00577 against 0.05.
        let mut r = PixelSum::default();
        for l in [0.0, 0.02, 0.0, 0.02] {
            r.taken += 1;
            r.lum += l;
            r.lum2 += l * l;
        }
        assert!(r.converged(0.116, 0.05) && !r.converged(0.115, 0.05));
        assert_eq!(
            [0, 16, 32, 64, 128, 192, 250].map(|d| round_size(d, 256)),
            [16, 16, 32, 64, 64, 64, 6]
        );
        assert_eq!(round_size(0, 4), 4);
    }

    #[test]
    fn patch_order_lists_each_pixel_once_patch_by_patch() {
        let r = Rect {
            x0: 3,
            y0: 2,
            x1: 21,
            y1: 12,
        };
        // Each pixel once, sorted by patch row, then patch column, then
        // Z order within the patch.
        let z = |x: u32, y: u32| {
            (0..3).fold(0, |k, b| {
                k | (x >> b & 1) << (2 * b) | (y >> b & 1) << (2 * b + 1)
            })
        };
        let mut expected: Vec<(u32, u32)> = (r.y0..r.y1)
            .flat_map(|y| (r.x0..r.x1).map(move |x| (x, y)))
            .collect();
        expected.sort_by_key(|&(x, y)| {
            let (dx, dy) = (x - r.x0, y - r.y0);
            (dy / PATCH, dx / PATCH, z(dx % PATCH, dy % PATCH))
        });
        let order = patch_order(r);
        assert_eq!(order, expected);
        // A whole patch: 2 × 2 blocks, then the 4 × 2 and 4 × 4 blocks
        // that eight and sixteen consecutive pixels make.
        assert_eq!(order[..4], [(3, 2), (4, 2), (3, 3), (4, 3)]);
        assert_eq!(order[4..8], [(5, 2), (6, 2), (5, 3), (6, 3)]);
        for block in order[..64].chunks(16) {
            let (xs, ys): (Vec<u32>, Vec<u32>) = block.iter().copied().unzip();
            assert_eq!(xs.iter().max().unwrap() - xs.iter().min().unwrap(), 3);
            assert_eq!(ys.iter().max().unwrap() - ys.iter().min().unwrap(), 3);
        }
        // The patch cut by the right edge (columns 19 and 20) keeps its
        // pixels in Z order.
        assert_eq!(order[128..132], [(19, 2), (20, 2), (19, 3), (20, 3)]);
        assert_eq!(order[132], (19, 4));
    }

    #[test]
    fn regions_are_bit_identical_to_the_full_render() {
        // One tile's worth, and one across several bands and tiles whose
        // edges fall inside tiles of the full render.
        for (size, region) in [
            (
                (16, 9),
                Rect {
                    x0: 3,
                    y0: 2,
                    x1: 11,
                    y1: 9,
                },
            ),
            (
                (80, 70),
                Rect {
                    x0: 5,
                    y0: 30,
                    x1: 75,
                    y1: 69,
                },
            ),
        ] {
            let mut scene = small_scene();
            (scene.image.width, scene.image.height) = size;
            let world = World::build(&scene);
            let camera = scene.camera();
            let none = AtomicBool::new(false);
            let (full, _) = render(&scene, &world, &camera, &ProgressBar::hidden(), &none).unwrap();
            let (part, stats) = render_region(
                &scene,
                &world,
                &camera,
                region,
                &ProgressBar::hidden(),
                &none,
            )
            .unwrap();
            let (w, h) = (region.width(), region.height());
            assert_eq!((part.width, part.height), (w, h));
            assert_eq!(stats.primary_rays, (w * h * 2) as u64);
            assert_region_of(&part, &full, region);
        }
    }

    /// Regression: a 360° view of the sky from 100 km above a flat 1 × 1
    /// terrain of height 0 gave NaN samples straight down. The rays were
    /// clean; the height bands of a terrain 0 high blend over zero width,
    /// and a hit exactly at a band's edge divided zero by zero.
    #[test]
    fn a_flat_terrain_seen_from_far_above_has_no_bad_samples() {
        let src = r#"{
            "image": {"width": 1024, "height": 512, "samples": 4},
            "camera": {"position": [0, 100000, 0], "look_at": [0, 100000, 1],
                       "projection": {"type": "equirectangular", "fov": 360}},
            "terrain": {"size": [1, 1], "resolution": [2, 2], "height": 0}
        }"#;
        let scene = crate::scene::parse(src, "flat.json", std::path::Path::new(".")).unwrap();
        let (fb, stats) = rendered(&scene);
        assert!(
            stats.shadow_rays > 0,
            "the rays straight down hit the terrain"
        );
        assert_eq!((stats.bad_samples, stats.first_bad_pixel), (0, None));
        assert!(fb.pixels.iter().all(|p| p.is_finite()));
    }

    #[test]
    fn cancelling_stops_with_interrupted() {
        let scene = small_scene();
        let world = World::build(&scene);
        let r = render(
            &scene,
            &world,
            &scene.camera(),
            &ProgressBar::hidden(),
            &AtomicBool::new(true),
        );
        assert!(matches!(r, Err(Error::Interrupted)));
    }
}
