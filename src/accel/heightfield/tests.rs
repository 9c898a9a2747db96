use glam::Vec3;
use proptest::prelude::*;

use super::*;
use crate::accel::bvh::brute_closest;
use crate::accel::Bvh;
use crate::terrain::Heightmap;
use crate::tiling::{patch_order, Rect, PATCH};

fn grid(width: usize, height: usize, data: Vec<f32>, size: [f32; 2]) -> TerrainGrid {
    TerrainGrid {
        heights: Heightmap::new(width, height, data),
        size,
    }
}

/// Checks the field against brute force over the grid's mesh and against
/// the BVH over that mesh: the same closest t and triangle, the same
/// barycentrics, the same occlusion.
fn check_rays(g: &TerrainGrid, rays: &[(Ray, f32)]) -> Result<usize, TestCaseError> {
    let field = HeightField::build(g);
    let mesh = g.to_mesh(false);
    let bvh = Bvh::build(&mesh);
    let mut hits = 0;
    for (ray, t_max) in rays {
        let expect = brute_closest(&mesh, ray, *t_max);
        let got = field.intersect(ray, *t_max);
        prop_assert_eq!(got.map(|h| (h.t, h.triangle)), expect, "ray {:?}", ray);
        prop_assert_eq!(
            got,
            bvh.intersect(ray, *t_max),
            "field and BVH, ray {:?}",
            ray
        );
        prop_assert_eq!(
            field.occluded(ray, *t_max),
            expect.is_some(),
            "ray {:?}",
            ray
        );
        hits += expect.is_some() as usize;
    }
    check_batches(&field, FieldView::none(), rays)?;
    Ok(hits)
}

/// Batches (eight AVX2 lanes or sixteen AVX-512 lanes, where the CPU has
/// them) give bit for bit what one ray at a time gives.
/// With a view, its answers are the ones without it.
fn check_batches(
    field: &HeightField,
    view: &FieldView,
    rays: &[(Ray, f32)],
) -> Result<(), TestCaseError> {
    let (list, t_max): (Vec<Ray>, Vec<f32>) = rays.iter().copied().unzip();
    let mut hits = vec![None; rays.len()];
    field.intersect_batch_in(view, &list, &t_max, &mut hits);
    let mut blocked = vec![false; rays.len()];
    field.occluded_batch_in(view, &list, &t_max, &mut blocked);
    for (k, (ray, t)) in rays.iter().enumerate() {
        let single = field.intersect(ray, *t);
        prop_assert_eq!(hits[k], single, "batch, ray {:?}", ray);
        prop_assert_eq!(field.intersect_in(view, ray, *t), single, "ray {:?}", ray);
        let blocks = field.occluded(ray, *t);
        prop_assert_eq!(blocked[k], blocks, "batch, ray {:?}", ray);
        prop_assert_eq!(field.occluded_in(view, ray, *t), blocks, "ray {:?}", ray);
    }
    check_each_isa(field, view, &list, &t_max)?;
    check_lane_starts(field, view, &list, &t_max)?;
    // Without the first ray, the lanes' groups of eight shift and the last
    // one is partial (most lists here are multiples of eight).
    if list.len() > 1 {
        check_lane_starts(field, view, &list[1..], &t_max[1..])?;
    }
    Ok(())
}

/// Every copy of the lanes that this CPU runs (and the scalar path) gives
/// bit for bit what one ray at a time gives (the batch above runs only the
/// best copy).
fn check_each_isa(
    field: &HeightField,
    view: &FieldView,
    rays: &[Ray],
    t_max: &[f32],
) -> Result<(), TestCaseError> {
    for cap in crate::isa::caps_here() {
        let (hits, blocked) = crate::isa::with_cap(cap, || {
            let mut hits = vec![None; rays.len()];
            field.intersect_batch_in(view, rays, t_max, &mut hits);
            let mut blocked = vec![false; rays.len()];
            field.occluded_batch_in(view, rays, t_max, &mut blocked);
            (hits, blocked)
        });
        for (k, ray) in rays.iter().enumerate() {
            prop_assert_eq!(
                hits[k],
                field.intersect(ray, t_max[k]),
                "{:?}, ray {:?}",
                cap,
                ray
            );
            prop_assert_eq!(
                blocked[k],
                field.occluded(ray, t_max[k]),
                "{:?}, ray {:?}",
                cap,
                ray
            );
        }
    }
    Ok(())
}

/// The lanes find every ray's start (with its bundle's hint) bit for bit
/// as [`HeightField::start_from`] does, and the same rays along grid lines.
fn check_lane_starts(
    field: &HeightField,
    view: &FieldView,
    rays: &[Ray],
    t_max: &[f32],
) -> Result<(), TestCaseError> {
    #[cfg(target_arch = "x86_64")]
    if field.fits_lanes() && lanes::isa().is_some() {
        let hints = field.hints(view, rays);
        // SAFETY: the CPU has AVX2 and the field fits the lanes.
        #[allow(unsafe_code)]
        let got = unsafe { lanes::starts(field, rays, t_max, &hints) };
        for (k, ray) in rays.iter().enumerate() {
            let expect = (
                field.start_from(ray, t_max[k], hints[k]),
                field.runs_along_a_line(ray) != (false, false),
            );
            // A ray along a line is walked on its own, from its own start.
            let got = if expect.1 {
                (expect.0, got[k].1)
            } else {
                got[k]
            };
            prop_assert_eq!(
                got,
                expect,
                "start of ray {} {:?}, hint {:?}",
                k,
                ray,
                hints[k]
            );
        }
    }
    Ok(())
}

fn ray_strategy(reach: f32) -> impl Strategy<Value = (Ray, f32)> {
    (
        prop::array::uniform3(-reach..reach),
        prop::array::uniform3(-1.0f32..1.0),
        prop_oneof![Just(f32::INFINITY), 0.5f32..40.0],
    )
        .prop_filter("non-zero direction", |(_, d, _)| {
            Vec3::from_array(*d).length() > 1e-3
        })
        .prop_map(|(o, d, t)| {
            (
                Ray::new(Vec3::from_array(o), Vec3::from_array(d).normalize()),
                t,
            )
        })
}

/// The rays of `patches` (pixel patches, PATCH × PATCH, by their top-left
/// pixel) of a pinhole camera at `origin` looking at `target` with an
/// `size` × `size` image: 64 rays per patch, all from one origin, in the
/// order a render tile hands them to the field.
fn camera_patches(
    origin: Vec3,
    target: Vec3,
    fov_deg: f32,
    size: u32,
    patches: &[(u32, u32)],
) -> Vec<(Ray, f32)> {
    let fwd = (target - origin).normalize();
    let right = Vec3::Y.cross(fwd).normalize();
    let up = fwd.cross(right);
    let th = (fov_deg.to_radians() * 0.5).tan();
    let ray = |(x, y): (u32, u32)| {
        let sx = (x as f32 + 0.5) / size as f32 * 2.0 - 1.0;
        let sy = 1.0 - (y as f32 + 0.5) / size as f32 * 2.0;
        let dir = (fwd + right * (sx * th) + up * (sy * th)).normalize();
        (Ray::new(origin, dir), f32::INFINITY)
    };
    patches
        .iter()
        .flat_map(|&(x0, y0)| {
            patch_order(Rect {
                x0,
                y0,
                x1: x0 + PATCH,
                y1: y0 + PATCH,
            })
        })
        .map(ray)
        .collect()
}

/// A field over `g` and its view with sight lines from the eye of `rays`
/// (all from one origin), for the range of their directions.
fn sighted(g: &TerrainGrid, rays: &[(Ray, f32)]) -> (HeightField, FieldView) {
    let field = HeightField::build(g);
    let directions: Vec<Vec3> = rays.iter().map(|r| r.0.dir).collect();
    let view = field.eye_view(rays[0].0.origin, &directions);
    (field, view)
}

/// No ray from the eye meets a triangle before the start the sight table
/// gives it, nor before its hint: brute force over the mesh finds every
/// hit at or after both. Returns how many rays got a start from the table.
fn check_sight(g: &TerrainGrid, rays: &[(Ray, f32)]) -> Result<usize, TestCaseError> {
    let (field, view) = sighted(g, rays);
    let mesh = g.to_mesh(false);
    let list: Vec<Ray> = rays.iter().map(|r| r.0).collect();
    let mut started = 0;
    for (ray, hint) in list.iter().zip(field.hints(&view, &list)) {
        let start = view.sight.as_ref().and_then(|s| s.start(ray));
        started += start.is_some() as usize;
        if let Some((t, _)) = brute_closest(&mesh, ray, f32::INFINITY) {
            prop_assert!(
                t >= start.unwrap_or(0.0) && t >= hint.t,
                "hit at {} before the start {:?} or {:?}, ray {:?}",
                t,
                start,
                hint,
                ray
            );
        }
    }
    // A bundle's starts are its rays' own, bit for bit.
    if let Some(sight) = view.sight.as_ref() {
        for bundle in list.chunks(bundle::BUNDLE) {
            let mut hints = vec![Hint::default(); bundle.len()];
            let all = sight.starts(bundle, &mut hints);
            let singles: Vec<Option<f32>> = bundle.iter().map(|r| sight.start(r)).collect();
            prop_assert_eq!(all, singles.iter().all(Option::is_some));
            for (hint, single) in hints.iter().zip(&singles) {
                let expect = single.map_or(Hint::default(), |t| Hint { t, level: 0 });
                prop_assert_eq!(hint.t.to_bits(), expect.t.to_bits());
                prop_assert_eq!(hint.level, expect.level);
            }
        }
    }
    check_batches(&field, &view, rays)?;
    Ok(started)
}

/// No ray of a bundle meets a triangle before the start its cone gave it,
/// in a field built for `built_for` camera rays (its peaks, where cones
/// stop, from the level that pays for them): brute force over the mesh
/// finds every hit at or after it. Returns how many rays enter the field's
/// box, and how many of them got a start past their entry.
fn check_hints(
    g: &TerrainGrid,
    rays: &[(Ray, f32)],
    built_for: usize,
) -> Result<(usize, usize), TestCaseError> {
    let field = HeightField::for_rays(g.clone(), built_for);
    let mesh = g.to_mesh(false);
    let list: Vec<Ray> = rays.iter().map(|r| r.0).collect();
    let (mut entering, mut later) = (0, 0);
    for (ray, hint) in list.iter().zip(field.hints(FieldView::none(), &list)) {
        let Some((t_enter, _)) = field.bounds.interval(ray, f32::INFINITY) else {
            continue;
        };
        entering += 1;
        later += (hint.t > t_enter) as usize;
        if let Some((t, _)) = brute_closest(&mesh, ray, f32::INFINITY) {
            prop_assert!(
                t >= hint.t,
                "hit at {} before the start {:?}, ray {:?}",
                t,
                hint,
                ray
            );
        }
    }
    Ok((entering, later))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Bundles of camera rays (cameras high and low, inside the field's
    /// box and outside its footprint, narrow and wide views) start their
    /// walks where their cones say, and still get exactly the hits of one
    /// ray at a time.
    #[test]
    fn camera_bundles_match_single_rays(
        (w, h, data) in (9usize..40, 9usize..40).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), prop::collection::vec(-3.0f32..3.0, w * h))
        }),
        size in (4.0f32..20.0, 4.0f32..20.0),
        origin in (-15.0f32..15.0, -2.0f32..12.0, -15.0f32..15.0),
        target in (-1.0f32..1.0, -3.0f32..3.0, -1.0f32..1.0),
        fov in 5.0f32..90.0,
        patches in prop::collection::vec((0u32..7, 0u32..7), 3),
        built_for in prop_oneof![Just(usize::MAX), 1usize..500],
    ) {
        let g = grid(w, h, data, [size.0, size.1]);
        let origin = Vec3::new(origin.0, origin.1, origin.2);
        let target = Vec3::new(target.0 * size.0 * 0.5, target.1, target.2 * size.1 * 0.5);
        prop_assume!((target - origin).normalize().y.abs() < 0.99);
        let patches: Vec<(u32, u32)> = patches.iter().map(|&(x, y)| (x * 8, y * 8)).collect();
        let rays = camera_patches(origin, target, fov, 64, &patches);
        check_hints(&g, &rays, built_for)?;
        check_batches(&HeightField::for_rays(g.clone(), built_for), FieldView::none(), &rays)?;
        check_sight(&g, &rays)?;
    }

    /// The sight table from eyes anywhere (above the terrain, under it,
    /// inside the field's footprint and outside it), for rays all round the
    /// eye (across the pseudo-angle's seam) and for rays outside the range
    /// it was built for: no start passes a hit, and batches give exactly
    /// the hits of one ray at a time.
    #[test]
    fn sight_starts_never_pass_a_hit(
        (w, h, data) in (2usize..30, 2usize..30).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), prop::collection::vec(-3.0f32..3.0, w * h))
        }),
        size in (1.0f32..20.0, 1.0f32..20.0),
        eye in (-15.0f32..15.0, -4.0f32..12.0, -15.0f32..15.0),
        built in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0), 1..12),
        traced in prop::collection::vec((-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0), 64),
    ) {
        let g = grid(w, h, data, [size.0, size.1]);
        let eye = Vec3::new(eye.0, eye.1, eye.2);
        let dir = |&(x, y, z): &(f32, f32, f32)| Vec3::new(x, y, z).try_normalize();
        let built: Vec<Vec3> = built.iter().filter_map(dir).collect();
        let rays: Vec<(Ray, f32)> = traced
            .iter()
            .filter_map(dir)
            .map(|d| (Ray::new(eye, d), f32::INFINITY))
            .collect();
        prop_assume!(!rays.is_empty());
        let field = HeightField::build(&g);
        let view = field.eye_view(eye, &built);
        let mesh = g.to_mesh(false);
        for (ray, _) in &rays {
            let start = view.sight.as_ref().and_then(|s| s.start(ray));
            if let (Some(t), Some((hit, _))) = (start, brute_closest(&mesh, ray, f32::INFINITY)) {
                prop_assert!(hit >= t, "hit at {} before the start {}, ray {:?}", hit, t, ray);
            }
        }
        check_batches(&field, &view, &rays)?;
    }

    /// Random grids of any shape (not powers of two, not square, down to
    /// one cell) and random rays from anywhere, including under the terrain.
    #[test]
    fn field_matches_brute_force_and_bvh(
        (w, h, data) in (2usize..24, 2usize..24).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), prop::collection::vec(-3.0f32..3.0, w * h))
        }),
        size in (1.0f32..20.0, 1.0f32..20.0),
        rays in prop::collection::vec(ray_strategy(15.0), 48),
    ) {
        let g = grid(w, h, data, [size.0, size.1]);
        check_rays(&g, &rays)?;
    }

    /// Rays straight down (an orthographic top view) land on vertices,
    /// edges and the diagonal exactly, and run inside the mid planes of
    /// the hierarchy; quantised heights make exact ties between cells.
    #[test]
    fn axis_parallel_rays_on_grid_lines(
        (w, h, data) in (2usize..20, 2usize..20).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), prop::collection::vec(0u8..4, w * h))
        }),
        picks in prop::collection::vec((0usize..64, 0usize..64, 0u8..3), 64),
    ) {
        let g = grid(w, h, data.iter().map(|&v| v as f32 * 0.5).collect(), [8.0, 8.0]);
        let rays: Vec<(Ray, f32)> = picks
            .iter()
            .map(|&(a, b, kind)| {
                let (i, j) = (a % h, b % w);
                let p = g.position(i, j);
                let q = g.position((i + 1).min(h - 1), (j + 1).min(w - 1));
                let (x, z) = match kind {
                    0 => (p.x, p.z),                   // on a vertex
                    1 => (p.x, (p.z + q.z) * 0.5),     // on a column line
                    _ => ((p.x + q.x) * 0.5, (p.z + q.z) * 0.5), // on the diagonal
                };
                (Ray::new(Vec3::new(x, 10.0, z), Vec3::NEG_Y), f32::INFINITY)
            })
            .collect();
        let hits = check_rays(&g, &rays)?;
        prop_assert_eq!(hits, rays.len(), "every ray down onto the grid hits");
    }

    /// Rays from points on grid lines inside the field's box, slanted
    /// either way (as shadow rays leave the ground): a start cell guessed
    /// from such a point can land on the wrong side of its line, and must
    /// be corrected by the descent's rule, in the lanes as on their own.
    #[test]
    fn rays_from_grid_lines_start_in_the_right_cell(
        (w, h, data) in (3usize..40, 3usize..40).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), prop::collection::vec(0.0f32..2.0, w * h))
        }),
        size in (3.0f32..30.0, 3.0f32..30.0),
        picks in prop::collection::vec(
            (0usize..64, 0usize..64, prop::array::uniform3(-1.0f32..1.0), 0u8..3),
            64,
        ),
    ) {
        let g = grid(w, h, data, [size.0, size.1]);
        let rays: Vec<(Ray, f32)> = picks
            .iter()
            .filter(|(_, _, d, _)| d[0] != 0.0 && d[2] != 0.0)
            .map(|&(a, b, d, kind)| {
                let p = g.position(a % h, b % w);
                let q = g.position((a + 1) % h, (b + 1) % w);
                let (x, z) = match kind {
                    0 => (p.x, p.z),
                    1 => (p.x, (p.z + q.z) * 0.5),
                    _ => ((p.x + q.x) * 0.5, p.z),
                };
                (Ray::new(Vec3::new(x, 1.0, z), Vec3::from_array(d)), f32::INFINITY)
            })
            .collect();
        check_rays(&g, &rays)?;
    }
}

/// A realistic terrain with camera-like rays: most rays hit, and every
/// one agrees with the mesh.
#[test]
fn terrain_rays_match_the_mesh() {
    let g = TerrainGrid::diamond_square(129, 97, 8.0, 3, [20.0, 15.0]);
    let rays: Vec<(Ray, f32)> = (0..3000u64)
        .map(|k| {
            let r = |s| crate::hash::unit_f32(k, s, 0);
            let origin = Vec3::new(r(1) * 30.0 - 15.0, 9.0 + r(2) * 10.0, r(3) * 30.0 - 15.0);
            let target = Vec3::new(r(4) * 20.0 - 10.0, 0.0, r(5) * 15.0 - 7.5);
            let dir = (target - origin).normalize();
            (Ray::new(origin, dir), f32::INFINITY)
        })
        .collect();
    let hits = check_rays(&g, &rays).unwrap();
    assert!(hits > 2500, "most test rays hit ({hits})");
    // Shadow rays: from just above each hit toward a low sun, so they start
    // inside the field's box (at the cell under their origin).
    let field = HeightField::build(&g);
    let sun = Vec3::new(-1.0, 0.45, 0.6).normalize();
    let shadows: Vec<(Ray, f32)> = rays
        .iter()
        .filter_map(|(ray, _)| {
            let hit = field.intersect(ray, f32::INFINITY)?;
            let origin = ray.at(hit.t) + Vec3::Y * 1e-3;
            Some((Ray::new(origin, sun), f32::INFINITY))
        })
        .collect();
    let blocked = check_rays(&g, &shadows).unwrap();
    assert!(
        (100..shadows.len() - 100).contains(&blocked),
        "some shadow rays are blocked, some not ({blocked} of {})",
        shadows.len()
    );
}

/// Bundles pay off: on a realistic terrain seen from above, most camera
/// rays start their walks well past their entry into the field's box, at
/// least half way to their hit, and all of them still match the mesh.
#[test]
fn camera_bundles_start_near_the_ground() {
    let g = TerrainGrid::diamond_square(257, 257, 6.0, 5, [40.0, 40.0]);
    let patches: Vec<(u32, u32)> = (0..8)
        .flat_map(|y| (0..8).map(move |x| (x * 128, y * 128)))
        .collect();
    let origin = Vec3::new(0.0, 14.0, -26.0);
    let rays = camera_patches(origin, Vec3::new(0.0, 0.0, 4.0), 60.0, 1024, &patches);
    let (entering, later) = check_hints(&g, &rays, usize::MAX).unwrap();
    assert!(
        later * 10 > entering * 9,
        "{later} of {entering} start later"
    );
    let field = HeightField::build(&g);
    let list: Vec<Ray> = rays.iter().map(|r| r.0).collect();
    let hints = field.hints(FieldView::none(), &list);
    let (mut hits, mut near) = (0, 0);
    for (ray, hint) in list.iter().zip(&hints) {
        if let Some(hit) = field.intersect(ray, f32::INFINITY) {
            hits += 1;
            near += (hint.t >= 0.5 * hit.t) as usize;
        }
    }
    assert!(hits > rays.len() / 2, "{hits} hits");
    assert!(near * 10 > hits * 9, "{near} of {hits} hits start half way");
    check_batches(&field, FieldView::none(), &rays).unwrap();
}

/// The sight table pays off: on a realistic terrain seen from above, as
/// the peer workload sees its own, most camera rays get a start from it,
/// most of those start within a tenth of their hit's distance of it, and
/// more than two thirds later than their bundle's cone would have them
/// start (three quarters when this was written); every ray still matches
/// the mesh.
#[test]
fn sight_starts_near_the_hits() {
    let g = TerrainGrid::diamond_square(257, 257, 6.0, 5, [40.0, 40.0]);
    let patches: Vec<(u32, u32)> = (0..8)
        .flat_map(|y| (0..8).map(move |x| (x * 128, y * 128)))
        .collect();
    let origin = Vec3::new(0.0, 14.0, -20.0);
    let rays = camera_patches(origin, Vec3::new(0.0, 0.0, 4.0), 60.0, 1024, &patches);
    let started = check_sight(&g, &rays).unwrap();
    assert!(
        started * 10 > rays.len() * 9,
        "{started} of {} started",
        rays.len()
    );
    let (field, view) = sighted(&g, &rays);
    let list: Vec<Ray> = rays.iter().map(|r| r.0).collect();
    let (sighted, cones) = (
        field.hints(&view, &list),
        field.hints(FieldView::none(), &list),
    );
    let (mut hits, mut near, mut later) = (0, 0, 0);
    for ((ray, sight), cone) in list.iter().zip(&sighted).zip(&cones) {
        if let Some(hit) = field.intersect(ray, f32::INFINITY) {
            hits += 1;
            near += (sight.t >= 0.9 * hit.t) as usize;
            later += (sight.t > cone.t) as usize;
        }
    }
    assert!(hits > rays.len() / 2, "{hits} hits");
    assert!(
        near * 10 > hits * 8,
        "{near} of {hits} hits start within a tenth"
    );
    assert!(
        later * 3 > hits * 2,
        "{later} of {hits} start later than the cone's"
    );
}

/// The cell a walk starts in is the one the descent from the root would
/// reach: inside it by the descent's own rule at every grid line, on grid
/// lines too (for both signs of a zero direction).
#[test]
fn start_cell_follows_the_descent_rule() {
    let lines: Vec<f32> = (0..9).map(|j| (j as f32 / 8.0 - 0.5) * 3.0).collect();
    for (o, inv) in [
        (-2.0f32, 0.7f32),
        (2.0, -1.3),
        (0.0, f32::INFINITY),
        (0.0, f32::NEG_INFINITY),
    ] {
        for step in 0..=64 {
            let t = step as f32 / 16.0;
            let p = o + t / inv;
            let p = if p.is_nan() { o } else { p };
            let j = cell_on_axis(&lines, o, inv, p, t);
            let past = |k: usize| t >= (lines[k] - o) * inv;
            let forward = inv > 0.0;
            assert!(
                j == 0 || past(j) == forward,
                "o {o} inv {inv} t {t}: cell {j}"
            );
            assert!(
                j == 7 || past(j + 1) != forward,
                "o {o} inv {inv} t {t}: cell {j}"
            );
        }
    }
}

/// `w` × `h` heights from the hash of (`seed`, sample), uniform over [lo, hi).
fn hashed_heights(w: usize, h: usize, seed: u64, lo: f32, hi: f32) -> Vec<f32> {
    (0..w * h)
        .map(|k| crate::hash::unit_f32(seed, k as u64, 0) * (hi - lo) + lo)
        .collect()
}

/// Every block holds exactly the lowest and highest sample under it, with
/// odd and even cell counts each way (a last block short of a row or a
/// column of cells, at level 1 and above) and a grid one cell wide.
#[test]
fn block_ranges_are_exact() {
    let top = HeightField::build(&grid(37, 22, vec![0.0; 37 * 22], [5.0, 3.0])).top;
    assert_eq!(top, 6, "36 cells need 2⁶");
    for (w, h) in [(37, 22), (38, 23), (2, 9), (9, 2), (65, 65)] {
        let data = hashed_heights(w, h, 9, -5.0, 5.0);
        let field = HeightField::build(&grid(w, h, data.clone(), [5.0, 3.0]));
        assert_eq!(level_dims(h - 1, w - 1, field.top), (1, 1));
        for level in 0..=field.top {
            let (rows, cols) = level_dims(h - 1, w - 1, level);
            let span = 1usize << level;
            for bi in 0..rows {
                for bj in 0..cols {
                    let mut lo = f32::INFINITY;
                    let mut hi = f32::NEG_INFINITY;
                    for i in bi * span..=((bi + 1) * span).min(h - 1) {
                        for j in bj * span..=((bj + 1) * span).min(w - 1) {
                            lo = lo.min(data[i * w + j]);
                            hi = hi.max(data[i * w + j]);
                        }
                    }
                    assert_eq!(
                        field.range(level, bi, bj),
                        [lo, hi],
                        "{w}×{h}, level {level} ({bi}, {bj})"
                    );
                }
            }
        }
    }
}

#[test]
fn neighbourhood_peaks_are_exact() {
    for (w, h) in [(37, 22), (2, 9), (65, 65)] {
        let data = hashed_heights(w, h, 4, -5.0, 5.0);
        let field = HeightField::build(&grid(w, h, data, [5.0, 3.0]));
        for level in 1..=field.top {
            let (rows, cols) = level_dims(h - 1, w - 1, level);
            for bi in 0..rows {
                for bj in 0..cols {
                    let mut peak = f32::NEG_INFINITY;
                    for ni in bi.saturating_sub(1)..=(bi + 1).min(rows - 1) {
                        for nj in bj.saturating_sub(1)..=(bj + 1).min(cols - 1) {
                            peak = peak.max(field.range(level, ni, nj)[1]);
                        }
                    }
                    let at = field.level_base[level as usize] + bi * cols + bj;
                    assert_eq!(field.peaks[at], peak, "{w}×{h}, level {level} ({bi}, {bj})");
                }
            }
        }
    }
}

/// The point of the structure: a few bytes per sample, against ~60 per
/// triangle (~120 per sample) for a triangle BVH.
#[test]
fn memory_is_a_few_bytes_per_sample() {
    let n = 257;
    let field = HeightField::build(&grid(n, n, vec![0.0; n * n], [1.0, 1.0]));
    let per_sample = field.memory_bytes() as f64 / (n * n) as f64;
    // 4 (height) + 8/4 · 4/3 (ranges of levels 1 and up; level 0 is
    // computed) + 4/4 · 4/3 (their neighbourhood peaks) ≈ 8.0, plus the row
    // and column lists.
    assert!(
        (7.9..8.1).contains(&per_sample),
        "{per_sample} bytes per sample"
    );
    assert_eq!(field.triangle_count(), 2 * 256 * 256);
}

#[test]
fn triangles_are_the_mesh_triangles() {
    let data: Vec<f32> = (0..5 * 4).map(|k| (k * 7 % 5) as f32).collect();
    let g = grid(5, 4, data, [4.0, 3.0]);
    let field = HeightField::build(&g);
    let mesh = g.to_mesh(false);
    for (id, t) in mesh.indices.iter().enumerate() {
        let expect = t.map(|v| mesh.positions[v as usize]);
        assert_eq!(field.triangle(id as u32), expect, "triangle {id}");
    }
}

#[test]
fn zero_direction_and_misses() {
    let g = grid(3, 3, vec![0.0; 9], [2.0, 2.0]);
    let field = HeightField::build(&g);
    let zero = Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::ZERO);
    assert!(field.intersect(&zero, f32::INFINITY).is_none());
    assert!(!field.occluded(&zero, f32::INFINITY));
    let away = Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::Y);
    assert!(field.intersect(&away, f32::INFINITY).is_none());
    let short = Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y);
    assert!(field.intersect(&short, 4.9).is_none());
    assert_eq!(field.intersect(&short, 5.0).map(|h| h.t), Some(5.0));
}

/// A climbing direction from elevation and azimuth (radians), never along
/// an axis.
fn light(elevation: f32, azimuth: f32) -> Vec3 {
    Vec3::new(
        azimuth.sin() * elevation.cos(),
        elevation.sin(),
        azimuth.cos() * elevation.cos(),
    )
}

/// Height of the mesh's surface at (x, z) inside the grid: the triangle
/// of its cell under the point, by the diagonal from (i, j+1) to (i+1, j).
fn surface_height(field: &HeightField, x: f32, z: f32) -> f32 {
    let j = cell_on_axis(&field.xs, 0.0, 1.0, x, x).min(field.cols - 2);
    let i = cell_on_axis(&field.zs, 0.0, 1.0, z, z).min(field.rows - 2);
    let [p00, p10, p01, p11] = field.cell_vertices(i, j);
    let u = (x - p00.x) / (p01.x - p00.x);
    let v = (z - p00.z) / (p10.z - p00.z);
    if u + v <= 1.0 {
        p00.y + (p01.y - p00.y) * u + (p10.y - p00.y) * v
    } else {
        p11.y + (p10.y - p11.y) * (1.0 - u) + (p01.y - p11.y) * (1.0 - v)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With horizons toward a light (a point, or a disc up to 6° across),
    /// from level 1 or a coarser one up, shadow rays toward it (from the
    /// surface, and from anywhere) and rays in other directions get
    /// exactly brute force's occlusion, one at a time and in every copy of
    /// the lanes.
    #[test]
    fn light_horizons_keep_every_answer(
        (w, h, data) in (2usize..48, 2usize..48).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), prop::collection::vec(-3.0f32..3.0, w * h))
        }),
        size in (1.0f32..20.0, 1.0f32..20.0),
        (elevation, azimuth) in (0.02f32..1.5, 0.0f32..std::f32::consts::TAU),
        radius in prop_oneof![Just(0.0f32), 0.0f32..0.05],
        points in prop::collection::vec((-0.5f32..0.5, -0.5f32..0.5, 0.0f32..1.0, 0.0f32..1.0, 0.0f32..1.0), 40),
        others in prop::collection::vec(ray_strategy(15.0), 8),
        from_level in 1u32..4,
    ) {
        let g = grid(w, h, data, [size.0, size.1]);
        let axis = light(elevation, azimuth);
        let field = HeightField::build(&g);
        let view = FieldView {
            light: field.horizon_from(axis, radius, from_level),
            sight: None,
        };
        let mesh = g.to_mesh(false);
        let mut rays: Vec<(Ray, f32)> = points
            .iter()
            .enumerate()
            .map(|(k, &(x, z, lift, u, v))| {
                let (x, z) = (x * size.0, z * size.1);
                // Half the rays leave the surface as shadow rays do, the
                // rest start anywhere up to 4 above it.
                let y = surface_height(&field, x, z) + if k % 2 == 0 { 1e-3 } else { 4.0 * lift };
                let dir = crate::sampling::sample_cone(axis, radius, (u, v));
                (Ray::new(Vec3::new(x, y, z), dir), f32::INFINITY)
            })
            .collect();
        rays.extend(others);
        for (ray, t_max) in &rays {
            let expect = brute_closest(&mesh, ray, *t_max).is_some();
            prop_assert_eq!(field.occluded_in(&view, ray, *t_max), expect, "ray {:?}", ray);
        }
        check_batches(&field, &view, &rays)?;
    }

    /// Every horizon bounds the surface ahead of its block: from points all
    /// over the block, along the axis and the edges of a light's disc, the
    /// surface's height less the ray's climb stays below it.
    #[test]
    fn horizons_bound_the_surface_ahead(
        (w, h, data) in (5usize..40, 5usize..40).prop_flat_map(|(w, h)| {
            (Just(w), Just(h), prop::collection::vec(-3.0f32..3.0, w * h))
        }),
        size in (1.0f32..20.0, 1.0f32..20.0),
        (elevation, azimuth) in (0.02f32..1.5, 0.0f32..std::f32::consts::TAU),
        radius in prop_oneof![Just(0.0f32), 0.0f32..0.05],
    ) {
        let g = grid(w, h, data, [size.0, size.1]);
        let axis = light(elevation, azimuth);
        let field = HeightField::build(&g);
        let Some(horizon) = field.horizon(axis, radius) else {
            return Ok(());
        };
        let dirs: Vec<Vec3> = [(0.0, 0.0), (1.0, 0.0), (1.0, 0.25), (1.0, 0.5), (1.0, 0.75)]
            .into_iter()
            .map(|u| crate::sampling::sample_cone(axis, radius, u))
            .collect();
        let step = size.0.min(size.1) / (w.max(h) as f32 * 4.0);
        let [lo, hi] = [field.bounds.min, field.bounds.max];
        for dir in dirs {
            let climb = dir.y / Vec3::new(dir.x, 0.0, dir.z).length();
            let along = Vec3::new(dir.x, 0.0, dir.z).normalize();
            for level in horizon.from_level..=field.top {
                let k = level as usize;
                for bi in 0..field.level_rows[k] {
                    for bj in 0..field.level_cols[k] {
                        let bound = field
                            .block_horizon_of(&horizon, level, bi, bj)
                            .expect("a level with horizons");
                        let x0 = field.xs[(bj << level).min(field.cols - 1)];
                        let x1 = field.xs[((bj + 1) << level).min(field.cols - 1)];
                        let z0 = field.zs[(bi << level).min(field.rows - 1)];
                        let z1 = field.zs[((bi + 1) << level).min(field.rows - 1)];
                        for a in 0..=4 {
                            for b in 0..=4 {
                                let mut p = Vec3::new(
                                    x0 + (x1 - x0) * a as f32 / 4.0,
                                    0.0,
                                    z0 + (z1 - z0) * b as f32 / 4.0,
                                );
                                let mut s = 0.0;
                                while p.x >= lo.x && p.x <= hi.x && p.z >= lo.z && p.z <= hi.z {
                                    let ahead = surface_height(&field, p.x, p.z) - climb * s;
                                    prop_assert!(
                                        ahead <= bound,
                                        "level {} block ({}, {}) along {:?}: {} ahead against {}",
                                        level, bi, bj, dir, ahead, bound
                                    );
                                    p += along * step;
                                    s += step;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A view for every ray has the horizons a lit view builds from level 1;
/// a view without a light has none, and a view without an eye (or too few
/// rays for the table to pay) no sight table; a ring's view has neither.
#[test]
fn views_keep_what_pays_for_their_rays() {
    let (w, h) = (70, 45);
    let g = grid(w, h, hashed_heights(w, h, 5, 0.0, 8.0), [30.0, 20.0]);
    let field = HeightField::new(g.clone());
    let eye = Vec3::new(0.0, 20.0, -30.0);
    let directions = [Vec3::new(0.0, -0.5, 1.0).normalize(), Vec3::Z];
    for (dir, radius) in [(light(0.5, 2.2), 0.0), (light(0.3, 5.5), 0.02)] {
        let view = field.view(Some((dir, radius)), Some((eye, &directions)), usize::MAX);
        let lit = field.horizon(dir, radius);
        let (a, b) = (view.light.expect("horizons"), lit.expect("horizons"));
        assert_eq!((a.from_level, &a.values), (b.from_level, &b.values));
        assert!(view.sight.is_some(), "a table for every ray pays");
        let few = field.view(Some((dir, radius)), Some((eye, &directions)), 1);
        assert!(few.sight.is_none(), "a table for one ray does not pay");
    }
    let dark = field.view(None, None, usize::MAX);
    assert!(dark.light.is_none() && dark.sight.is_none());
    let ring = HeightField::with_hole(g, [[10, 20], [10, 20]]);
    let view = ring.view(
        Some((light(0.5, 2.2), 0.0)),
        Some((eye, &directions)),
        usize::MAX,
    );
    assert!(view.light.is_none() && view.sight.is_none());
}

/// Each block's range is the lowest and highest of its 3 × 3 samples
/// (fewer at the far edges); a NaN height is passed over.
#[test]
fn block_ranges_row_takes_each_blocks_samples() {
    let r0 = [0.0, 5.0, 1.0, 9.0, 2.0, 3.0];
    let r1 = [4.0, f32::NAN, 6.0, -1.0, 7.0, 8.0];
    let r2 = [2.0, 2.0, 2.0, 2.0, 2.0, 10.0];
    let (mut lo, mut hi) = ([0.0; 6], [0.0; 6]);
    let mut out = [[0.0; 2]; 3];
    block_ranges_row([&r0, &r1, &r2], &mut lo, &mut hi, &mut out);
    assert_eq!(out, [[0.0, 6.0], [-1.0, 9.0], [2.0, 10.0]]);
    // Columns 0..=2, 2..=4 and 4..=5 of the first row alone (twice).
    block_ranges_row([&r0, &r0, &r0], &mut lo, &mut hi, &mut out);
    assert_eq!(out, [[0.0, 5.0], [1.0, 9.0], [2.0, 3.0]]);
}

/// The finest level with horizons and peaks is the first with no more
/// blocks than the rays, and a field lit for fewer rays keeps the same
/// horizons and peaks on the levels it has.
#[test]
fn horizons_and_peaks_start_where_their_blocks_are_no_more_than_the_rays() {
    let n = 1025; // levels 1, 2, 3 of 512², 256², 128² blocks, root 10
    let field = HeightField::build(&grid(
        n,
        n,
        hashed_heights(n, n, 3, 0.0, 9.0),
        [100.0, 100.0],
    ));
    assert_eq!(field.top, 10);
    for (rays, level) in [
        (usize::MAX, 1),
        (512 * 512, 1),
        (512 * 512 - 1, 2),
        (256 * 256, 2),
        (128 * 128 - 1, 4),
        (1, 10),
        (0, 10),
    ] {
        assert_eq!(field.finest_level_paying(rays), level, "{rays} rays");
    }
    let (dir, radius) = (light(0.4, 2.2), 0.0);
    let all = field.horizon(dir, radius).expect("horizons");
    let lit = HeightField::for_rays(
        grid(n, n, hashed_heights(n, n, 3, 0.0, 9.0), [100.0, 100.0]),
        100_000,
    );
    let view = lit.view(Some((dir, radius)), None, 100_000);
    let some = view.light.as_ref().expect("horizons");
    assert_eq!((some.from_level, lit.peaks_from), (2, 2));
    let skipped = field.level_base[2] - field.level_base[1];
    assert_eq!(some.values, all.values[skipped..]);
    assert_eq!(field.peaks_from, 1);
    assert_eq!(lit.peaks, field.peaks[skipped..]);
    let tiny = HeightField::build(&grid(2, 2, vec![0.0, 1.0, 2.0, 3.0], [1.0, 1.0]));
    assert_eq!((tiny.top, tiny.finest_level_paying(0)), (0, 1));
}

/// Horizons reach down to level 1, and a plane's are its height (plus the
/// margin) at every level.
#[test]
fn horizons_cover_every_level_from_one() {
    let n = 1025;
    let field = HeightField::build(&grid(n, n, vec![1.0; n * n], [100.0, 100.0]));
    for azimuth in [0.3f32, 1.3, 2.0, 3.5, 5.0] {
        let h = field.horizon(light(0.4, azimuth), 0.0).expect("horizons");
        assert_eq!(h.from_level, 1);
        let blocks: usize = (1..=field.top as usize)
            .map(|k| field.level_rows[k] * field.level_cols[k])
            .sum();
        assert_eq!(h.values.len(), blocks);
        assert!(h.values.iter().all(|&v| (1.0..1.001).contains(&v)));
    }
}

/// A spike in a flat field: the blocks its rays lead toward see it less
/// the climb across every whole slab between, and blocks off to the side,
/// whose rays pass it by, see only the flat ground.
#[test]
fn horizons_see_what_lies_along_the_rays_only() {
    // Cells of one unit; the spike at sample (row 50, column 32), x = 0,
    // z = 18.
    let n = 65;
    let mut data = vec![0.0; n * n];
    data[50 * n + 32] = 10.0;
    let field = HeightField::build(&grid(n, n, data, [64.0, 64.0]));
    // Heading 0.2 rad off +z toward +x, climbing at 0.3 rad.
    let (elevation, azimuth) = (0.3f32, 0.2f32);
    let h = field
        .horizon(light(elevation, azimuth), 0.0)
        .expect("horizons");
    let at = |bi, bj| field.block_horizon_of(&h, 1, bi, bj).expect("level 1");
    // 20 back from the spike along the heading: x ≈ −4, z ≈ −1.6, cell
    // (row 30, column 28), level-1 block (15, 14). Between it (z up to 0)
    // and the spike's blocks (z from 16) lie 8 whole slabs, 16 of z.
    // The light climbs tan 0.3 / cos 0.2 = 0.3155 a unit of z; the cone
    // the horizons are built for (widened by 3e-3 rad for rounding) at
    // least 0.31.
    let climb_z = 0.31;
    assert!(climb_z < elevation.tan() / azimuth.cos());
    let seen = at(15, 14);
    assert!(seen > 0.5, "{seen}: the spike is ahead");
    assert!(
        seen <= 10.0 - climb_z * 16.0 + 1e-3,
        "{seen}: every slab's climb counts"
    );
    // Off to the side (x ≈ −28), in the same rows: the rays pass the spike
    // 24 to the left of it.
    let side = at(15, 2);
    assert!(
        side.abs() < 1e-3,
        "{side}: only flat ground lies along the rays"
    );
    // Past the spike, nothing rises ahead.
    assert!(at(27, 17).abs() < 1e-3);
}

/// Horizons exist for climbing directions off the axes, on fields with
/// levels to hold them; none for a light below the horizon or along an
/// axis, and rays along other directions never use them.
#[test]
fn horizons_only_for_climbing_directions_off_the_axes() {
    let data: Vec<f32> = (0..33 * 33)
        .map(|k| ((k * 7919) % 13) as f32 * 0.3)
        .collect();
    let field = HeightField::build(&grid(33, 33, data, [32.0, 32.0]));
    let dir = light(0.4, 1.0);
    let h = field
        .horizon(dir, 0.0)
        .expect("a climbing direction off the axes");
    assert!(h.from_level >= 1 && h.from_level <= field.top);
    for (none, radius) in [
        (light(-0.4, 1.0), 0.0),
        (Vec3::new(0.0, 0.5, 0.8).normalize(), 0.0),
        (Vec3::new(0.6, 0.5, 0.0).normalize(), 0.0),
        (Vec3::Y, 0.0),
        // A disc that dips below the horizon, one that crosses the x = 0
        // plane, one around the zenith.
        (light(0.05, 1.0), 0.1),
        (light(0.4, 0.05), 0.1),
        (light(1.5, 1.0), 0.1),
    ] {
        assert!(
            field.horizon(none, radius).is_none(),
            "{none:?} within {radius}"
        );
    }
    assert!(field.horizon(light(0.4, 1.0), 0.1).is_some());
    // The root's horizon is its highest height (nothing lies ahead of it
    // but itself), plus the margin.
    let last = *h.values.last().unwrap();
    let [_, top] = field.range(field.top, 0, 0);
    assert!(last >= top && last <= top + 1e-3, "{last} against {top}");
}

/// The sight table is built where its fill costs less than it saves: the
/// peer workload's 1080p frame (2 073 600 camera rays) gets one over
/// 1025² samples whatever the lanes, over 2049² only with eight lanes or
/// fewer, and over 4097² never.
#[test]
fn sight_table_pays_by_cells_per_ray_and_lanes() {
    let rays = 1920 * 1080;
    for lanes in [1, 8, 16] {
        assert!(sight_pays(1024 * 1024, rays, lanes), "1025², {lanes} lanes");
        assert_eq!(
            sight_pays(2048 * 2048, rays, lanes),
            lanes < 16,
            "2049², {lanes} lanes"
        );
        assert!(
            !sight_pays(4096 * 4096, rays, lanes),
            "4097², {lanes} lanes"
        );
        // The limits themselves.
        let per_ray = if lanes == 16 { 1 } else { 3 };
        assert!(sight_pays(per_ray * rays, rays, lanes));
        assert!(!sight_pays(per_ray * rays + 1, rays, lanes));
    }
}

#[test]
fn vertex_normals_from_the_field_are_the_grids_bit_for_bit() {
    let g = TerrainGrid::diamond_square(37, 23, 9.0, 4, [11.0, 6.5]);
    let field = HeightField::build(&g);
    let stored = g.vertex_normals();
    for (k, n) in stored.iter().enumerate() {
        assert_eq!(
            field.vertex_normal(k).to_array().map(f32::to_bits),
            n.to_array().map(f32::to_bits),
            "sample {k}"
        );
    }
}
