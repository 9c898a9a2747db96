//! `scree bench`: the peer terrain workload (`docs/performance.md`)
//! traced inside scree, so its figures compare with Embree's and
//! POV-Ray's: a terrain mesh (from the workload's 16-bit heightmap or its
//! OBJ), one primary ray through each pixel centre of a 1920×1080 pinhole
//! camera at (0, 30, −50) looking at (0, 2, 0) with a 60° horizontal field
//! of view, and one shadow ray per hit toward normalize(−1, 0.45, 0.6) from
//! 1e-3 along the geometric normal turned toward the viewer; then one
//! diffuse bounce ray per hit from the same origin, in a cosine-weighted
//! direction about that normal fixed by the pixel's index (the peer
//! program's `diffuse_dir`: incoherent rays). The hit, occlusion and
//! bounce-hit counts are the workload's checksums.

use std::path::Path;
use std::time::{Duration, Instant};

use glam::{Vec3, Vec4};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::accel::{Bvh, FieldView, HeightField, Hit};
use crate::camera::{Camera, Projection};
use crate::error::{Error, Result};
use crate::isa::Isa;
use crate::mesh::TriangleMesh;
use crate::ray::Ray;
use crate::render::{patch_order, Rect, PATCH};
use crate::simd4::Vec3x4;
use crate::terrain::{import, TerrainGrid};

/// A pixel's primary hit: distance and unit geometric normal, as the peer
/// program's hit record holds them.
type PixelHit = Option<(f32, Vec3)>;

/// Image width of the workload, pixels.
pub const WIDTH: u32 = 1920;
/// Image height of the workload, pixels.
pub const HEIGHT: u32 = 1080;
/// Pixels of the workload's image: its camera rays, one each.
const PIXELS: usize = (WIDTH * HEIGHT) as usize;

/// The workload's sun direction: normalize(−1, 0.45, 0.6).
fn sun() -> Vec3 {
    Vec3::new(-1.0, 0.45, 0.6).normalize()
}

/// The peer program's hash for the bounce directions (lowbias32).
fn lowbias32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// The bounce direction of pixel `i` (row-major) about the unit normal
/// `n`, exactly as the peer program draws it: u1 = (h(2i) >> 8) · 2⁻²⁴,
/// u2 = (h(2i + 1) >> 8) · 2⁻²⁴, r = √u2, φ = 2π·u1 in the basis of Duff
/// et al. (2017), d = r cos φ t + r sin φ b + √(1 − u2) n, normalised.
pub fn diffuse_dir(n: Vec3, i: u32) -> Vec3 {
    let unit = |x: u32| (lowbias32(x) >> 8) as f32 * (1.0 / 16_777_216.0);
    let (u1, u2) = (unit(2 * i), unit(2 * i + 1));
    let (t, b) = crate::sampling::basis(n);
    let (r, phi) = (u2.sqrt(), std::f32::consts::TAU * u1);
    (t * (r * phi.cos()) + b * (r * phi.sin()) + n * (1.0 - u2).max(0.0).sqrt()).normalize()
}

/// What the workload traces: a terrain grid through its heightfield
/// hierarchy, or a triangle mesh through the general BVH.
#[derive(Debug, Clone)]
pub enum Geometry {
    /// A heightmap placed as a terrain grid.
    Grid(TerrainGrid),
    /// Any triangle mesh.
    Mesh(TriangleMesh),
}

impl Geometry {
    /// Triangles traced.
    pub fn triangle_count(&self) -> usize {
        match self {
            Geometry::Grid(g) => g.triangle_count(),
            Geometry::Mesh(m) => m.indices.len(),
        }
    }
}

/// The acceleration structure built over a [`Geometry`].
enum Accel {
    Field(Box<HeightField>, FieldView),
    Mesh(Bvh, TriangleMesh),
}

impl Accel {
    /// Builds over `geometry`, which it keeps (a grid's heights are not
    /// copied).
    /// A grid's field gets horizons toward the sun and (where they pay)
    /// sight lines from the camera, as a render's does: both are counted
    /// in its build.
    fn build(geometry: Geometry) -> Accel {
        match geometry {
            Geometry::Grid(g) => {
                let field = HeightField::for_rays(g, PIXELS);
                let sight = workload_camera().sight_sample();
                let eye = sight.as_ref().map(|(e, d)| (*e, d.as_slice()));
                let view = field.view(Some((sun(), 0.0)), eye, PIXELS);
                Accel::Field(Box::new(field), view)
            }
            Geometry::Mesh(m) => Accel::Mesh(Bvh::build(&m), m),
        }
    }

    fn memory_bytes(&self) -> usize {
        match self {
            Accel::Field(f, v) => f.memory_bytes() + v.memory_bytes(),
            Accel::Mesh(b, _) => b.memory_bytes(),
        }
    }

    /// Distance and unit geometric normal of the closest hit of each ray,
    /// into `out[slot[k]]` for ray k (a field traces the batch at once).
    fn intersect(
        &self,
        rays: &[Ray],
        slots: &[usize],
        answers: &mut Answers,
        out: &mut [PixelHit],
    ) {
        let (t_max, hits) = answers.closest(rays.len());
        match self {
            Accel::Field(f, v) => {
                f.intersect_batch_in(v, rays, t_max, hits);
                for (&slot, h) in slots.iter().zip(hits.iter()) {
                    out[slot] = h.map(|h| {
                        let [a, b, c] = f.triangle(h.triangle);
                        (h.t, crate::mesh::face_normal(a, b, c))
                    });
                }
            }
            Accel::Mesh(b, m) => {
                b.intersect_batch(rays, t_max, hits);
                for (&slot, h) in slots.iter().zip(hits.iter()) {
                    out[slot] = h.map(|h| (h.t, m.face_normal(h.triangle as usize)));
                }
            }
        }
    }

    /// How many of the rays hit anything.
    fn count_hits(&self, rays: &[Ray], answers: &mut Answers) -> u64 {
        let (t_max, hits) = answers.closest(rays.len());
        match self {
            Accel::Field(f, v) => f.intersect_batch_in(v, rays, t_max, hits),
            Accel::Mesh(b, _) => b.intersect_batch(rays, t_max, hits),
        }
        hits.iter().filter(|h| h.is_some()).count() as u64
    }

    /// How many of the rays are blocked.
    fn occluded(&self, rays: &[Ray], answers: &mut Answers) -> u64 {
        let (t_max, blocked) = answers.occluded(rays.len());
        match self {
            Accel::Field(f, v) => f.occluded_batch_in(v, rays, t_max, blocked),
            Accel::Mesh(b, _) => b.occluded_batch(rays, t_max, blocked),
        }
        blocked.iter().filter(|&&b| b).count() as u64
    }
}

/// A thread's answer buffers, kept from one batch to the next (with its
/// ray buffer): allocating them for each band of rays cost the passes
/// page faults and copies that the peer program does not have.
#[derive(Default)]
struct Answers {
    /// `f32::INFINITY` for each ray of the batch.
    t_max: Vec<f32>,
    hits: Vec<Option<Hit>>,
    blocked: Vec<bool>,
}

impl Answers {
    /// The limits and the cleared hit slots of a batch of `n` rays.
    fn closest(&mut self, n: usize) -> (&[f32], &mut [Option<Hit>]) {
        self.t_max.resize(n, f32::INFINITY);
        self.hits.clear();
        self.hits.resize(n, None);
        (&self.t_max, &mut self.hits)
    }

    /// The limits and the cleared answers of a batch of `n` shadow rays.
    fn occluded(&mut self, n: usize) -> (&[f32], &mut [bool]) {
        self.t_max.resize(n, f32::INFINITY);
        self.blocked.clear();
        self.blocked.resize(n, false);
        (&self.t_max, &mut self.blocked)
    }
}

/// Reads the workload's heightmap: 16-bit PNG, top row the far edge, mapped
/// to [0, `height`] over an `extent` × `extent` square.
pub fn heightmap_grid(path: &Path, extent: f32, height: f32) -> Result<TerrainGrid> {
    let map = import::load(path).map_err(Error::Usage)?;
    let heights = import::heights(&map, map.width, map.height, height as f64);
    Ok(TerrainGrid {
        heights,
        size: [extent, extent],
    })
}

/// Reads a Wavefront OBJ (all its models, triangulated).
pub fn obj_mesh(path: &Path) -> Result<TriangleMesh> {
    let mut mesh = TriangleMesh::read_obj(path).map_err(Error::Usage)?;
    // The peers trace the triangles; normals play no part.
    mesh.normals.clear();
    Ok(mesh)
}

/// The workload camera's eye and the point it looks at.
const EYE: Vec3 = Vec3::new(0.0, 30.0, -50.0);
const LOOK_AT: Vec3 = Vec3::new(0.0, 2.0, 0.0);

/// The workload camera as a render's [`Camera`] (in f64; `View` makes
/// the rays, in f32 as the peer program does).
pub fn workload_camera() -> Camera {
    let fov = Projection::Perspective {
        fov: 60f32.to_radians(),
    };
    Camera::new(EYE, LOOK_AT, Vec3::Y, fov, WIDTH, HEIGHT)
}

/// The workload's camera, in f32 exactly as the peer program sets it up.
#[derive(Debug, Clone, Copy)]
struct View {
    pos: Vec3,
    fwd: Vec3,
    /// Right and up, scaled to the half-extents of the image plane.
    right: Vec3,
    up: Vec3,
}

impl View {
    fn workload() -> View {
        let pos = EYE;
        let fwd = (LOOK_AT - pos).normalize();
        let r = Vec3::Y.cross(fwd).normalize();
        let u = fwd.cross(r);
        let th = (60f32 * std::f32::consts::PI / 360.0).tan();
        View {
            pos,
            fwd,
            right: r * th,
            up: u * (th * HEIGHT as f32 / WIDTH as f32),
        }
    }

    /// The ray direction through pixel (px, py), as the peer program
    /// computes it (the tests' reference for `dirs`).
    #[cfg(test)]
    fn dir(&self, px: u32, py: u32) -> Vec3 {
        let sx = ((px as f32 + 0.5) / WIDTH as f32) * 2.0 - 1.0;
        let sy = 1.0 - ((py as f32 + 0.5) / HEIGHT as f32) * 2.0;
        (self.fwd + (self.right * sx + self.up * sy)).normalize()
    }

    /// `dir` of each pixel of `pixels` (its row offset by `y0`), into
    /// `out`, bit for bit: four at a time quantity by quantity, so that the
    /// divisions and square roots are vector instructions.
    fn dirs(&self, pixels: &[(u32, u32)], y0: u32, out: &mut Vec<Vec3>) {
        out.clear();
        out.reserve(pixels.len());
        let (f, r, u) = (self.fwd, self.right, self.up);
        let (width, height) = (Vec4::splat(WIDTH as f32), Vec4::splat(HEIGHT as f32));
        for chunk in pixels.chunks(4) {
            let (mut px, mut py) = ([0.0f32; 4], [0.0f32; 4]);
            for (k, &(x, dy)) in chunk.iter().enumerate() {
                (px[k], py[k]) = (x as f32, (y0 + dy) as f32);
            }
            let (px, py) = (Vec4::from_array(px), Vec4::from_array(py));
            let sx = ((px + 0.5) / width) * 2.0 - 1.0;
            let sy = 1.0 - ((py + 0.5) / height) * 2.0;
            let along = |f: f32, r: f32, u: f32| {
                Vec4::splat(f) + (Vec4::splat(r) * sx + Vec4::splat(u) * sy)
            };
            let d = Vec3x4 {
                x: along(f.x, r.x, u.x),
                y: along(f.y, r.y, u.y),
                z: along(f.z, r.z, u.z),
            }
            .normalize();
            out.extend((0..chunk.len()).map(|k| d.lane(k)));
        }
    }
}

/// One pass's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Primary rays that hit.
    pub hits: u64,
    /// Shadow rays that were blocked.
    pub occluded: u64,
    /// Diffuse bounce rays that hit.
    pub diffuse_hits: u64,
}

/// Times of one pass.
#[derive(Debug, Clone, Copy)]
struct PassTimes {
    primary: Duration,
    shadow: Duration,
    diffuse: Duration,
}

/// Camera rays traced together: sixteen patches, as many as a render's
/// 32 × 32 tile, so that a batch is traced while its setup is still in
/// the core's caches (on the Zen 1 machine, batches of 256 to 15360 rays,
/// a whole band, traced alike within the noise).
const BATCH: usize = 16 * (PATCH * PATCH) as usize;

/// Bands of `PATCH` rows in the image.
const BANDS: usize = (HEIGHT / PATCH) as usize;

/// Traces the workload once on the current rayon pool. `hits` (one slot
/// per pixel) is allocated by the caller once for all passes, as the peer
/// program's hit records are, so that no pass times the first touch of its
/// pages.
///
/// The bands (and the shadow pass's rows) are taken from band `first` on,
/// then from the top: on one thread, a copy with another `first` traces
/// other terrain at any moment, as the threads of one pass do.
fn trace_once(accel: &Accel, hits: &mut [PixelHit], first: usize) -> (Counts, PassTimes) {
    let view = View::workload();
    let pos = view.pos;
    let sun = sun();

    let t0 = Instant::now();
    // Bands of PATCH rows, traced patch by patch as a render tile orders
    // its pixels, so that neighbouring rays go together. Every band has the
    // same order (the height is a multiple of PATCH), listed once.
    const { assert!(HEIGHT.is_multiple_of(PATCH)) };
    let order = patch_order(Rect {
        x0: 0,
        y0: 0,
        x1: WIDTH,
        y1: PATCH,
    });
    // Where each ray of a band puts its hit in the band's rows.
    let slots: Vec<usize> = order
        .iter()
        .map(|&(px, dy)| (dy * WIDTH + px) as usize)
        .collect();
    // Bands are handed out one at a time, as the peer program hands out
    // rows (OpenMP's dynamic schedule): left to rayon's adaptive split, a
    // pass went in about four pieces, and on two threads one thread sat
    // idle for up to 15% of the pass once its pieces were done.
    let band_len = (WIDTH * PATCH) as usize;
    let (top, rest) = hits.split_at_mut(first * band_len);
    rest.par_chunks_mut(band_len)
        .enumerate()
        .map(|(k, band)| (first + k, band))
        .chain(top.par_chunks_mut(band_len).enumerate())
        .with_max_len(1)
        .for_each_init(
            || (Vec::new(), Vec::new(), Answers::default()),
            |(dirs, rays, answers), (band, out)| {
                for (pixels, slots) in order.chunks(BATCH).zip(slots.chunks(BATCH)) {
                    view.dirs(pixels, band as u32 * PATCH, dirs);
                    rays.clear();
                    Ray::extend_new(rays, |_| pos, dirs);
                    accel.intersect(rays, slots, answers, out);
                }
            },
        );
    let primary = t0.elapsed();
    let t1 = Instant::now();
    // Every shadow ray has the sun's direction, so its reciprocal and
    // shear are set up once; a row's camera directions come together.
    let toward_sun = Ray::new(Vec3::ZERO, sun);
    let first_row = first as u32 * PATCH;
    // Rows one at a time, as the bands above: for each, the hits' points
    // lifted 1e-3 along the geometric normal turned toward the viewer,
    // that normal, and the pixel's index; `trace` gets a row's worth, with
    // buffers for directions and rays kept from row to row.
    type Trace<'a> = dyn Fn(&[(Vec3, Vec3, u32)], &mut Vec<Vec3>, &mut Vec<Ray>, &mut Answers) -> u64
        + Sync
        + 'a;
    let rows = |trace: &Trace| {
        let row: Vec<(u32, u32)> = (0..WIDTH).map(|px| (px, 0)).collect();
        (first_row..HEIGHT)
            .into_par_iter()
            .chain(0..first_row)
            .with_max_len(1)
            .map_init(
                || {
                    let buffers = (Vec::new(), Vec::new(), Vec::new());
                    (buffers, Vec::new(), Answers::default())
                },
                |((dirs, points, spare), rays, answers), py| {
                    view.dirs(&row, py, dirs);
                    points.clear();
                    let row_hits = &hits[(py * WIDTH) as usize..][..WIDTH as usize];
                    for (px, (hit, &d)) in row_hits.iter().zip(dirs.iter()).enumerate() {
                        if let Some((t, n)) = *hit {
                            let n = if n.dot(d) > 0.0 { -n } else { n };
                            points.push((pos + d * t + n * 1e-3, n, py * WIDTH + px as u32));
                        }
                    }
                    trace(points, spare, rays, answers)
                },
            )
            .sum::<u64>()
    };
    // Every shadow ray has the sun's direction, so its reciprocal and
    // shear are set up once.
    let occluded = rows(&|points, _, rays, answers| {
        rays.clear();
        rays.extend(points.iter().map(|&(o, _, _)| toward_sun.from_origin(o)));
        accel.occluded(rays, answers)
    });
    let shadow = t1.elapsed();
    let t2 = Instant::now();
    // One bounce ray per hit, set up four at a time (the same rays as one
    // by one).
    let diffuse_hits = rows(&|points, bounces, rays, answers| {
        bounces.clear();
        bounces.extend(points.iter().map(|&(_, n, i)| diffuse_dir(n, i)));
        rays.clear();
        Ray::extend_new(rays, |k| points[k].0, bounces);
        accel.count_hits(rays, answers)
    });
    let diffuse = t2.elapsed();
    let counts = Counts {
        hits: hits.iter().filter(|h| h.is_some()).count() as u64,
        occluded,
        diffuse_hits,
    };
    (
        counts,
        PassTimes {
            primary,
            shadow,
            diffuse,
        },
    )
}

/// Traces the workload once on `one` and once on each of `others`' pools,
/// all at once, each copy into its own hit buffer (`hits` for the copy on
/// `one`): the counts (the same for every copy) and each copy's times.
/// Copy k of n starts at band k/n of the image, so that the copies read
/// different terrain at any moment, as the threads of one pass do (rayon
/// gives the second thread the second half): copies all tracing the same
/// rays at once would find in the shared cache what another had just
/// read, and scaled up to 0.25 higher than the threads for the BVH.
fn trace_copies(
    accel: &Accel,
    one: &rayon::ThreadPool,
    hits: &mut [PixelHit],
    others: &mut [(rayon::ThreadPool, Vec<PixelHit>)],
) -> (Counts, Vec<PassTimes>) {
    for (_, buffer) in others.iter_mut() {
        buffer.resize(hits.len(), None);
    }
    let copies = others.len() + 1;
    std::thread::scope(|scope| {
        let handles: Vec<_> = others
            .iter_mut()
            .enumerate()
            .map(|(k, (pool, buffer))| {
                let first = (k + 1) * BANDS / copies;
                scope.spawn(move || pool.install(|| trace_once(accel, buffer, first)))
            })
            .collect();
        let (counts, times_on_one) = one.install(|| trace_once(accel, hits, 0));
        let mut times = vec![times_on_one];
        for h in handles {
            let (c, t) = h.join().expect("a copy's thread does not panic");
            debug_assert_eq!(c, counts, "every copy traces the same rays");
            times.push(t);
        }
        (counts, times)
    })
}

/// The figures `scree bench --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Acceleration structure: `heightfield` (a grid through its min/max
    /// hierarchy) or `bvh` (a mesh through the general BVH).
    pub accel: &'static str,
    /// Build time of the acceleration structure, milliseconds.
    pub build_ms: f64,
    /// Bytes of the acceleration structure (for a BVH: nodes, reordered
    /// triangles, ids; for a heightfield: heights, hierarchy) per triangle.
    pub bytes_per_triangle: f64,
    /// Peak resident memory of the process, MiB.
    pub peak_rss_mib: f64,
    /// Primary rays per second on one thread, millions (median of the repetitions).
    pub primary_mrays_1t: f64,
    /// Primary rays per second on all threads, millions.
    pub primary_mrays: f64,
    /// Shadow rays per second on one thread, millions.
    pub shadow_mrays_1t: f64,
    /// Shadow rays per second on all threads, millions.
    pub shadow_mrays: f64,
    /// Diffuse bounce rays (incoherent, closest hit) per second on one
    /// thread, millions.
    pub diffuse_mrays_1t: f64,
    /// Diffuse bounce rays per second on all threads, millions.
    pub diffuse_mrays: f64,
    /// With `--copies`: primary rays per second, millions, of one
    /// one-thread copy of the passes per thread, all running at once on
    /// their own buffers ([`copies_rate`]). Its ratio to
    /// `primary_mrays_1t` is what the machine gives work that shares
    /// nothing: a control for the thread scaling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copies_primary_mrays: Option<f64>,
    /// With `--copies`: shadow rays per second of the copies, millions
    /// (each copy's shadow pass follows its own primary pass, so they
    /// overlap most, not all, of the time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copies_shadow_mrays: Option<f64>,
    /// Primary hits (the workload's first checksum).
    pub hits: u64,
    /// Occluded shadow rays (the second checksum).
    pub occluded: u64,
    /// Diffuse bounce rays that hit (the third checksum).
    pub diffuse_hits: u64,
    /// Threads of the all-threads runs.
    pub threads: usize,
    /// Triangles traced.
    pub triangles: usize,
    /// The SIMD copy of the kernels that ran: `avx512` (the grid walks
    /// sixteen lanes, the BVH its AVX-512 copies), `avx2` (the grid walks
    /// eight lanes), `avx` (the BVH's AVX copies; the grid one ray at a
    /// time) or `scalar`.
    pub simd: &'static str,
}

/// The combined rate, millions of rays per second, of copies of a pass
/// that ran at once, each tracing `rays` rays in its own time: all their
/// rays over the slowest one's time, as the threads' pass counts its rays
/// over the time its last thread finished.
pub fn copies_rate(rays: u64, times: &[Duration]) -> f64 {
    let slowest = times.iter().max().copied().unwrap_or_default();
    mrays(times.len() as u64 * rays, slowest)
}

/// Millions of rays per second: `rays` traced in `time`.
fn mrays(rays: u64, time: Duration) -> f64 {
    rays as f64 / time.as_secs_f64() / 1e6
}

/// Builds the acceleration structure over `geometry` on `all` and traces
/// the workload `reps` times on one thread and on all of `all`'s threads,
/// taking turns; rates are medians. With `copies`, each repetition then
/// also runs one one-thread copy of the passes per thread of `all` at
/// once, each with its own hit buffer (a control: see
/// [`Report::copies_primary_mrays`]).
///
/// `progress` says what is happening: building, then each pass as it
/// starts (a bar over the `2 · reps` passes, `3 · reps` with the copies,
/// drawn only between them, so that no drawing runs while a pass is
/// timed).
pub fn run(
    geometry: Geometry,
    all: &rayon::ThreadPool,
    reps: usize,
    copies: bool,
    progress: &ProgressBar,
) -> Result<Report> {
    let one_thread = || {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map_err(|e| Error::Usage(format!("cannot start threads: {e}")))
    };
    let one = one_thread()?;
    // The copies besides the one on `one`: a pool and a hit buffer each,
    // the buffers allocated at their first pass (after the peak memory of
    // the workload's own passes has been read).
    let mut others = Vec::new();
    if copies {
        for _ in 1..all.current_num_threads() {
            others.push((one_thread()?, Vec::new()));
        }
    }
    progress.set_message(match geometry {
        Geometry::Grid(_) => "building the grid hierarchy",
        Geometry::Mesh(_) => "building the BVH",
    });
    let t0 = Instant::now();
    let triangles = geometry.triangle_count();
    let accel = all.install(|| Accel::build(geometry));
    let build = t0.elapsed();
    // No drawing thread from here on: it would share the cores with the
    // passes. (A redraw every 120 ms during the build costs it nothing
    // measurable, and a 4097² mesh takes 20 s to build.)
    progress.disable_steady_tick();
    let reps = reps.max(1);
    progress.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} passes")
            .expect("static template")
            .progress_chars("=> "),
    );
    let passes_per_rep = if copies { 3 } else { 2 };
    progress.set_length(passes_per_rep * reps as u64);
    let mut hits = vec![None; PIXELS];
    // One thread and all threads take turns, repetition by repetition, so
    // that both see the same spells of load on a shared machine: measured
    // one after the other, their ratio (the thread scaling) ranged from
    // 1.5 to 2.5 for one binary.
    let mut rates = [
        [Vec::new(), Vec::new(), Vec::new()],
        [Vec::new(), Vec::new(), Vec::new()],
    ];
    let mut copies_rates = [Vec::new(), Vec::new()];
    let mut counts = [None, None];
    let mut peak_rss = None;
    for rep in 0..reps {
        for (k, pool) in [&one, all].into_iter().enumerate() {
            progress.set_message(format!(
                "tracing {}/{reps}, {} thread{}",
                rep + 1,
                pool.current_num_threads(),
                if pool.current_num_threads() == 1 {
                    ""
                } else {
                    "s"
                }
            ));
            let (c, t) = pool.install(|| trace_once(&accel, &mut hits, 0));
            progress.inc(1);
            rates[k][0].push(mrays(PIXELS as u64, t.primary));
            rates[k][1].push(mrays(c.hits, t.shadow));
            rates[k][2].push(mrays(c.hits, t.diffuse));
            counts[k] = Some(c);
        }
        peak_rss.get_or_insert_with(peak_rss_mib);
        if copies {
            progress.set_message(format!(
                "tracing {}/{reps}, {} one-thread copies at once",
                rep + 1,
                others.len() + 1
            ));
            let (c, times) = trace_copies(&accel, &one, &mut hits, &mut others);
            progress.inc(1);
            let primary: Vec<_> = times.iter().map(|t| t.primary).collect();
            let shadow: Vec<_> = times.iter().map(|t| t.shadow).collect();
            copies_rates[0].push(copies_rate(PIXELS as u64, &primary));
            copies_rates[1].push(copies_rate(c.hits, &shadow));
            debug_assert_eq!(Some(c), counts[0], "copies trace the same rays");
        }
    }
    let [copies_primary, copies_shadow] = copies_rates.map(|v| (!v.is_empty()).then(|| median(v)));
    let [[p1, s1, d1], [pn, sn, dn]] = rates.map(|passes| passes.map(median));
    let [c1, cn] = counts.map(|c| c.expect("at least one repetition"));
    debug_assert_eq!(c1, cn, "counts do not depend on threads");
    Ok(Report {
        accel: match accel {
            Accel::Field(..) => "heightfield",
            Accel::Mesh(..) => "bvh",
        },
        build_ms: build.as_secs_f64() * 1e3,
        bytes_per_triangle: accel.memory_bytes() as f64 / triangles.max(1) as f64,
        peak_rss_mib: peak_rss.expect("at least one repetition"),
        primary_mrays_1t: p1,
        primary_mrays: pn,
        shadow_mrays_1t: s1,
        shadow_mrays: sn,
        diffuse_mrays_1t: d1,
        diffuse_mrays: dn,
        copies_primary_mrays: copies_primary,
        copies_shadow_mrays: copies_shadow,
        hits: cn.hits,
        occluded: cn.occluded,
        diffuse_hits: cn.diffuse_hits,
        threads: all.current_num_threads(),
        triangles,
        simd: Isa::best().map_or("scalar", Isa::name),
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Peak resident set size from /proc/self/status (0 where unavailable).
pub fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_rate_counts_every_copys_rays_over_the_slowest_time() {
        let ms = Duration::from_millis;
        // Two copies of 2 M rays, done in 100 and 125 ms: 4 M rays in 125 ms.
        assert_eq!(copies_rate(2_000_000, &[ms(100), ms(125)]), 32.0);
        assert_eq!(copies_rate(2_000_000, &[ms(125), ms(100)]), 32.0);
        // One copy: its own rate.
        assert_eq!(copies_rate(3_000_000, &[ms(250)]), 12.0);
    }

    #[test]
    fn bounce_directions_follow_the_peer_programs_hash() {
        // lowbias32 of 0, 1, 2, 3 and 12345, from its definition.
        assert_eq!(
            [0, 1, 2, 3, 12345].map(lowbias32),
            [0, 0x6889_90c0, 0xd113_2181, 0x53f1_e9dd, 0x912e_fcf7]
        );
        // Pixel 0: u1 = h(0) = 0, so φ = 0: toward the basis's first
        // vector t, at √u2 from the normal, u2 = (h(1) >> 8) / 2^24.
        let n = Vec3::new(0.3, 0.9, -0.2).normalize();
        let (t, _) = crate::sampling::basis(n);
        let u2 = (0x6889_90c0u32 >> 8) as f32 / 16_777_216.0;
        let expected = t * u2.sqrt() + n * (1.0 - u2).sqrt();
        assert!((diffuse_dir(n, 0) - expected).length() < 1e-6);
        // Pixel 1: u1 = (h(2) >> 8) / 2^24, u2 = (h(3) >> 8) / 2^24, so
        // the cosine to the normal is √(1 − u2).
        let u2 = (0x53f1_e9ddu32 >> 8) as f32 / 16_777_216.0;
        let d = diffuse_dir(n, 1);
        assert!((d.dot(n) - (1.0 - u2).sqrt()).abs() < 1e-5);
        for i in 0..1000 {
            let d = diffuse_dir(n, i);
            assert!((d.length() - 1.0).abs() < 1e-5 && d.dot(n) >= 0.0);
        }
    }

    #[test]
    fn directions_computed_together_match_the_peer_formula() {
        let view = View::workload();
        let order = patch_order(Rect {
            x0: 0,
            y0: 0,
            x1: WIDTH,
            y1: PATCH,
        });
        let mut dirs = Vec::new();
        for band in [0, 1, HEIGHT / PATCH / 2, HEIGHT / PATCH - 1] {
            let y0 = band * PATCH;
            view.dirs(&order[..order.len() - 3], y0, &mut dirs);
            assert_eq!(dirs.len(), order.len() - 3);
            for (&(px, dy), d) in order.iter().zip(&dirs) {
                let want = view.dir(px, y0 + dy);
                assert_eq!(
                    d.to_array().map(f32::to_bits),
                    want.to_array().map(f32::to_bits)
                );
            }
        }
    }
}
