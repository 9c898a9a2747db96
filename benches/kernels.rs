//! Regression benchmarks for the tracing kernels (`cargo bench`).
//!
//! The same shape of work as `scree bench` (the peer workload: a camera at
//! (0, 30, −50) looking at (0, 2, 0) over a 100 × 100 terrain 15 high, one
//! shadow ray per hit toward the sun), at a size that runs in seconds and
//! without the workload's files: a 513² diamond-square terrain generated
//! here. Each iteration traces one row band of 64 × 36 rays, so throughput
//! reads directly as rays per second.
//!
//! - `terrain/*`: the grid hierarchy (one ray at a time, and as a batch:
//!   eight AVX2 lanes where the CPU has them) against the BVH over the same
//!   mesh; `primary/grid-bundles` traces full-resolution 8 × 8 pixel
//!   patches, which the field walks as bundles (against the same rays one
//!   at a time), and `primary/grid-bundles-sighted` the same patches
//!   starting from the field's sight lines from the eye.
//! - `rocks/*`: a boulder field as instances of one mesh and as copies.
//! - `build/*`: building the grid hierarchy, its sight lines from the
//!   workload's eye (`grid-sight`, a clone of the field included) and the
//!   BVH.
//! - `triangle`: the watertight ray–triangle test alone.
//! - `output/*`: a 1080p frame's 8-bit codes and its PNG encoding.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glam::{Affine3A, Quat, Vec3};
use scree::accel::{Bvh, FieldView, HeightField, Object, TopLevel, View};
use scree::ray::Ray;
use scree::render::{patch_order, Rect, PATCH};
use scree::terrain::{generate, DiamondSquare, Generator, Recipe, TerrainGrid};
use std::hint::black_box;

const W: u32 = 64;
const H: u32 = 36;

fn terrain() -> TerrainGrid {
    let heights = generate(
        &Recipe::new(
            Generator::DiamondSquare(DiamondSquare::default()),
            513,
            513,
            15.0,
        ),
        1,
    );
    TerrainGrid {
        heights,
        size: [100.0, 100.0],
    }
}

/// The workload camera for a `w` × `h` image: the ray through pixel (px, py).
fn workload_camera(w: u32, h: u32) -> impl Fn(u32, u32) -> Ray {
    let pos = Vec3::new(0.0, 30.0, -50.0);
    let fwd = (Vec3::new(0.0, 2.0, 0.0) - pos).normalize();
    let r = Vec3::Y.cross(fwd).normalize();
    let u = fwd.cross(r);
    let th = (60f32.to_radians() / 2.0).tan();
    let (right, up) = (r * th, u * (th * h as f32 / w as f32));
    move |px, py| {
        let sx = ((px as f32 + 0.5) / w as f32) * 2.0 - 1.0;
        let sy = 1.0 - ((py as f32 + 0.5) / h as f32) * 2.0;
        Ray::new(pos, (fwd + (right * sx + up * sy)).normalize())
    }
}

/// The workload camera's rays, W × H of them over the whole image.
fn camera_rays() -> Vec<Ray> {
    let ray = workload_camera(W, H);
    (0..H)
        .flat_map(|py| (0..W).map(move |px| (px, py)))
        .map(|(px, py)| ray(px, py))
        .collect()
}

/// The workload camera's rays at full resolution (1920 × 1080), in 8 × 8
/// pixel patches as render tiles hand them over (so that the field walks
/// them as bundles): 36 patches spread over the image, 64 rays each.
fn patch_rays() -> Vec<Ray> {
    let (w, h) = (1920u32, 1080u32);
    let ray = workload_camera(w, h);
    (0..36)
        .flat_map(|k| {
            let (x0, y0) = (k % 6 * w / 6, k / 6 * h / 6);
            patch_order(Rect {
                x0,
                y0,
                x1: x0 + PATCH,
                y1: y0 + PATCH,
            })
        })
        .map(|(px, py)| ray(px, py))
        .collect()
}

/// The workload camera's eye and sampled directions, as a render of its
/// 1920 × 1080 image gives them to [`HeightField::set_eye`].
fn sight_sample() -> (Vec3, Vec<Vec3>) {
    scree::bench::workload_camera()
        .sight_sample()
        .expect("a perspective camera")
}

/// Shadow rays from the primary hits (the hits found through `trace`).
fn shadow_rays(rays: &[Ray], trace: impl Fn(&Ray) -> Option<f32>) -> Vec<Ray> {
    let sun = Vec3::new(-1.0, 0.45, 0.6).normalize();
    rays.iter()
        .filter_map(|r| trace(r).map(|t| Ray::new(r.at(t) + Vec3::Y * 1e-3, sun)))
        .collect()
}

/// Traces batches of `n` rays through `field` (buffers made once) and
/// counts their hits.
fn batch_hits<'a>(
    field: &'a HeightField,
    view: &'a FieldView,
    n: usize,
) -> impl FnMut(&[Ray]) -> usize + 'a {
    let t_max = vec![f32::INFINITY; n];
    let mut hits = vec![None; n];
    move |rays| {
        field.intersect_batch_in(view, black_box(rays), &t_max, &mut hits);
        hits.iter().filter(|h| h.is_some()).count()
    }
}

fn terrain_kernels(c: &mut Criterion) {
    let grid = terrain();
    let field = HeightField::build(&grid);
    let bvh = Bvh::build(&grid.to_mesh(false));
    let rays = camera_rays();
    let shadows = shadow_rays(&rays, |r| field.intersect(r, f32::INFINITY).map(|h| h.t));
    let mut g = c.benchmark_group("terrain");
    g.throughput(Throughput::Elements(rays.len() as u64));
    // Rays traced one at a time (and as one batch: `batch_hits`).
    let one_by_one = |rays: &[Ray]| {
        rays.iter()
            .filter(|r| field.intersect(black_box(r), f32::INFINITY).is_some())
            .count()
    };
    g.bench_function("primary/grid", |b| b.iter(|| one_by_one(&rays)));
    g.bench_function("primary/grid-batch", |b| {
        let mut trace = batch_hits(&field, FieldView::none(), rays.len());
        b.iter(|| trace(&rays))
    });
    let patches = patch_rays();
    g.throughput(Throughput::Elements(patches.len() as u64));
    g.bench_function("primary/grid-bundles", |b| {
        let mut trace = batch_hits(&field, FieldView::none(), patches.len());
        b.iter(|| trace(&patches))
    });
    // The same patches from a field with sight lines from the eye, as a
    // render of the whole image builds them.
    let (eye, directions) = sight_sample();
    let sighted = field.eye_view(eye, &directions);
    g.bench_function("primary/grid-bundles-sighted", |b| {
        let mut trace = batch_hits(&field, &sighted, patches.len());
        b.iter(|| trace(&patches))
    });
    g.bench_function("primary/grid-patches-one-by-one", |b| {
        b.iter(|| one_by_one(&patches))
    });
    g.bench_function("primary/bvh-octets", |b| {
        let t_max = vec![f32::INFINITY; patches.len()];
        let mut hits = vec![None; patches.len()];
        b.iter(|| {
            bvh.intersect_batch(black_box(&patches), &t_max, &mut hits);
            hits.iter().filter(|h| h.is_some()).count()
        })
    });
    g.bench_function("primary/bvh-patches-one-by-one", |b| {
        b.iter(|| {
            patches
                .iter()
                .filter(|r| bvh.intersect(black_box(r), f32::INFINITY).is_some())
                .count()
        })
    });
    g.throughput(Throughput::Elements(rays.len() as u64));
    g.bench_function("primary/bvh", |b| {
        b.iter(|| {
            rays.iter()
                .filter(|r| bvh.intersect(black_box(r), f32::INFINITY).is_some())
                .count()
        })
    });
    g.throughput(Throughput::Elements(shadows.len() as u64));
    g.bench_function("shadow/grid", |b| {
        b.iter(|| {
            shadows
                .iter()
                .filter(|r| field.occluded(black_box(r), f32::INFINITY))
                .count()
        })
    });
    g.bench_function("shadow/grid-batch", |b| {
        let t_max = vec![f32::INFINITY; shadows.len()];
        let mut blocked = vec![false; shadows.len()];
        b.iter(|| {
            field.occluded_batch(black_box(&shadows), &t_max, &mut blocked);
            blocked.iter().filter(|&&b| b).count()
        })
    });
    g.bench_function("shadow/bvh", |b| {
        b.iter(|| {
            shadows
                .iter()
                .filter(|r| bvh.occluded(black_box(r), f32::INFINITY))
                .count()
        })
    });
    g.bench_function("shadow/bvh-octets", |b| {
        let t_max = vec![f32::INFINITY; shadows.len()];
        let mut blocked = vec![false; shadows.len()];
        b.iter(|| {
            bvh.occluded_batch(black_box(&shadows), &t_max, &mut blocked);
            blocked.iter().filter(|&&b| b).count()
        })
    });
    g.finish();
}

fn rock_kernels(c: &mut Criterion) {
    // An icosphere-like rock: a 24 × 48 UV sphere, 400 placements.
    let sphere = scree::rock::SphereMesh::uv(24, 48);
    let rock = scree::rock::object_mesh(&sphere, None);
    let placements: Vec<Affine3A> = (0..400u64)
        .map(|k| {
            let r = |s| scree::hash::unit_f32(3, k, s);
            Affine3A::from_scale_rotation_translation(
                Vec3::new(0.6 + r(1), 0.4 + r(2) * 0.5, 0.6 + r(3)),
                Quat::from_rotation_y(r(4) * 6.0),
                Vec3::new(r(5) * 60.0 - 30.0, 1.0, r(6) * 40.0 - 10.0),
            )
        })
        .collect();
    let instanced = TopLevel::build(
        (0..placements.len() as u32)
            .map(|placement| Object::Mesh { mesh: 0, placement })
            .collect(),
        vec![Bvh::build(&rock)],
        placements.clone(),
    );
    let copies: Vec<Bvh> = placements
        .iter()
        .map(|m| {
            let mut placed = rock.clone();
            placed
                .positions
                .iter_mut()
                .for_each(|p| *p = m.transform_point3(*p));
            Bvh::build(&placed)
        })
        .collect();
    let copied = TopLevel::build(
        (0..copies.len() as u32)
            .map(|mesh| Object::Mesh {
                mesh,
                placement: Object::WORLD,
            })
            .collect(),
        copies,
        Vec::new(),
    );
    let rays = camera_rays();
    let mut g = c.benchmark_group("rocks");
    g.throughput(Throughput::Elements(rays.len() as u64));
    for (name, top) in [("instanced", &instanced), ("copied", &copied)] {
        g.bench_with_input(BenchmarkId::new("primary", name), top, |b, top| {
            b.iter(|| {
                rays.iter()
                    .filter(|r| {
                        top.intersect(&View::default(), black_box(r), f32::INFINITY)
                            .is_some()
                    })
                    .count()
            })
        });
    }
    // As a render's tiles hand them over: 8 × 8 pixel patches at full
    // resolution, traced as octets down the top level and into the rocks.
    let patches = patch_rays();
    g.throughput(Throughput::Elements(patches.len() as u64));
    for (name, top) in [("instanced", &instanced), ("copied", &copied)] {
        g.bench_with_input(BenchmarkId::new("patches-octets", name), top, |b, top| {
            let t_max = vec![f32::INFINITY; patches.len()];
            let mut hits = vec![None; patches.len()];
            b.iter(|| {
                top.intersect_batch(&View::default(), black_box(&patches), &t_max, &mut hits);
                hits.iter().filter(|h| h.is_some()).count()
            })
        });
        g.bench_with_input(
            BenchmarkId::new("patches-one-by-one", name),
            top,
            |b, top| {
                b.iter(|| {
                    patches
                        .iter()
                        .filter(|r| {
                            top.intersect(&View::default(), black_box(r), f32::INFINITY)
                                .is_some()
                        })
                        .count()
                })
            },
        );
    }
    g.finish();
}

fn build_kernels(c: &mut Criterion) {
    let grid = terrain();
    let mesh = grid.to_mesh(false);
    let mut g = c.benchmark_group("build");
    g.sample_size(10);
    g.throughput(Throughput::Elements(mesh.indices.len() as u64));
    g.bench_function("grid", |b| b.iter(|| HeightField::build(black_box(&grid))));
    let field = HeightField::build(&grid);
    let (eye, directions) = sight_sample();
    g.bench_function("grid-sight", |b| {
        b.iter(|| field.eye_view(eye, black_box(&directions)))
    });
    g.bench_function("bvh", |b| b.iter(|| Bvh::build(black_box(&mesh))));
    g.finish();
}

fn triangle_kernel(c: &mut Criterion) {
    let (a, b, t) = (Vec3::ZERO, Vec3::X, Vec3::Z);
    let rays: Vec<Ray> = (0..1024u64)
        .map(|k| {
            let r = |s| scree::hash::unit_f32(4, k, s);
            Ray::new(
                Vec3::new(r(1), 2.0, r(2)),
                Vec3::new(r(3) - 0.5, -1.0, r(4) - 0.5).normalize(),
            )
        })
        .collect();
    let mut g = c.benchmark_group("triangle");
    g.throughput(Throughput::Elements(rays.len() as u64));
    g.bench_function("watertight", |bench| {
        bench.iter(|| {
            rays.iter()
                .filter(|r| {
                    scree::ray::intersect_triangle(black_box(r), a, b, t, f32::INFINITY).is_some()
                })
                .count()
        })
    });
    g.finish();
}

/// The output path after tracing: exposure, tone curve and sRGB codes for
/// a 1080p frame of varied, fully covered pixels (`to_srgb8`, rows in
/// parallel), then the PNG encoding (one thread).
fn output_kernels(c: &mut Criterion) {
    let (w, h) = (1920, 1080);
    let mut fb = scree::render::Framebuffer::new(w, h);
    for (k, p) in fb.pixels.iter_mut().enumerate() {
        let r = |s| scree::hash::unit_f32(5, k as u64, s) * 1.5;
        *p = glam::Vec4::new(r(1), r(2), r(3), 1.0);
    }
    let tonemap = scree::shade::tonemap::Tonemap::Aces;
    let image = fb.to_srgb8(1.0, tonemap);
    let meta = scree::output::Metadata {
        scene: "bench".into(),
        key: "0".into(),
        seed: 0,
        spp: 1,
        full_size: (w, h),
        region: None,
    };
    let mut g = c.benchmark_group("output");
    g.throughput(Throughput::Elements(w as u64 * h as u64));
    g.sample_size(20);
    g.bench_function("srgb8-1080p", |b| {
        b.iter(|| black_box(&fb).to_srgb8(1.0, tonemap))
    });
    g.bench_function("png-1080p", |b| {
        b.iter(|| scree::output::encode_png(black_box(&image), &meta).expect("encodes"))
    });
    g.finish();
}

criterion_group!(
    kernels,
    terrain_kernels,
    rock_kernels,
    build_kernels,
    triangle_kernel,
    output_kernels
);
criterion_main!(kernels);
