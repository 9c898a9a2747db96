use super::analytic::{unit_sphere_hits, AnalyticRock};
use super::*;
use crate::ray::Ray;
use glam::{DVec3, Vec2};

fn sphere_place(radius: f32) -> Placement {
    Placement {
        center: Vec3::new(1.0, 2.0, 3.0),
        radius,
        scale: Vec3::ONE,
        rotation: Quat::IDENTITY,
        pre_rotation: Quat::IDENTITY,
    }
}

#[test]
fn counts_for_given_stacks_and_slices() {
    for (stacks, slices) in [(2, 3), (3, 4), (16, 32), (64, 128)] {
        let s = SphereMesh::uv(stacks, slices);
        assert_eq!(s.dirs.len(), (slices * (stacks - 1) + 2) as usize);
        assert_eq!(s.indices.len(), (2 * slices * (stacks - 1)) as usize);
        assert_eq!(s.dirs.len(), SphereMesh::vertex_count(stacks, slices));
        assert_eq!(s.indices.len(), SphereMesh::triangle_count(stacks, slices));
    }
}

#[test]
fn no_degenerate_triangles_and_all_face_outward() {
    let s = SphereMesh::uv(12, 20);
    for t in &s.indices {
        let [a, b, c] = t.map(|v| s.dirs[v as usize]);
        let n = (b - a).cross(c - a);
        assert!(n.length() > 1e-6, "degenerate {t:?}");
        assert!(n.dot(a + b + c) > 0.0, "inward {t:?}");
    }
}

#[test]
fn undisplaced_normals_match_the_sphere_within_a_degree() {
    let s = SphereMesh::uv(64, 128);
    let place = sphere_place(2.0);
    let mesh = world_mesh(&s, &place, None, false);
    for (k, n) in mesh.normals.iter().enumerate() {
        let exact = (mesh.positions[k] - place.center).normalize();
        let angle = n.dot(exact).clamp(-1.0, 1.0).acos().to_degrees();
        assert!(angle < 1.0, "vertex {k}: {angle}°");
    }
}

/// A texture whose gray value is 0.2 + 0.6·u (constant down each column)
/// and v-independent: 64 × 4 texels at their centres.
fn ramp() -> Arc<Texture> {
    let w = 64;
    let texels = (0..4 * w)
        .map(|k| Vec3::splat(0.2 + 0.6 * ((k % w) as f32 + 0.5) / w as f32))
        .collect();
    Arc::new(Texture {
        source: None,
        width: w,
        height: 4,
        texels,
    })
}

#[test]
fn displaced_positions_follow_the_formula() {
    // Nearest lookup: vertex (u, v) takes the texel of column floor(64u).
    let disp = Displacement {
        texture: Some(ramp()),
        scale: 0.3,
        bias: 0.5,
        filter: Filter::Nearest,
        mapping: Mapping::Uv,
    };
    let s = SphereMesh::uv(8, 16);
    let place = Placement {
        scale: Vec3::new(1.0, 0.6, 1.3),
        rotation: Quat::from_rotation_y(0.4),
        ..sphere_place(2.0)
    };
    let mesh = world_mesh(&s, &place, Some(&disp), false);
    for k in 1..s.dirs.len() - 1 {
        let uv = s.uv[k];
        let texel = 0.2 + 0.6 * ((uv.x * 64.0).floor() + 0.5) / 64.0;
        let undisplaced = place.world_from_object().transform_point3(s.dirs[k]);
        let expected = undisplaced + place.normal_at(s.dirs[k]) * 0.3 * (texel - 0.5);
        assert!((mesh.positions[k] - expected).length() < 1e-5, "vertex {k}");
    }
    // The poles take the mean of their texture row: 0.2 + 0.6·mean(u) over
    // the 16 ring longitudes j/16 → columns 4j, centres (4j + 0.5)/64.
    let mean: f32 = (0..16)
        .map(|j| 0.2 + 0.6 * ((4 * j) as f32 + 0.5) / 64.0)
        .sum::<f32>()
        / 16.0;
    let north = place.world_from_object().transform_point3(Vec3::Y)
        + place.normal_at(Vec3::Y) * 0.3 * (mean - 0.5);
    assert!((mesh.positions[0] - north).length() < 1e-5);
}

#[test]
fn seam_and_pole_vertices_are_shared_so_normals_are_continuous() {
    // No position appears twice: the u = 0/1 seam and the poles are welded.
    // A texture that continues across u = 0/1: 0.5 + 0.3·cos(3·2πu).
    let w = 64;
    let texels = (0..4 * w)
        .map(|k| {
            Vec3::splat(
                0.5 + 0.3 * (3.0 * std::f32::consts::TAU * ((k % w) as f32 + 0.5) / w as f32).cos(),
            )
        })
        .collect();
    let periodic = Arc::new(Texture {
        source: None,
        width: w,
        height: 4,
        texels,
    });
    let disp = Displacement {
        texture: Some(periodic),
        scale: 0.2,
        bias: 0.5,
        filter: Filter::Bilinear,
        mapping: Mapping::Uv,
    };
    let s = SphereMesh::uv(16, 32);
    let mesh = world_mesh(&s, &sphere_place(1.0), Some(&disp), false);
    let mut keys: Vec<[u32; 3]> = mesh
        .positions
        .iter()
        .map(|p| p.to_array().map(f32::to_bits))
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), mesh.positions.len(), "no duplicated vertices");
    // The normal across the seam turns like it does between the other
    // neighbouring columns of the same ring (no crease at the seam).
    for r in 1..16 {
        let ring = |j: u32| 1 + (r - 1) * 32 + j % 32;
        let turn = |j: u32| {
            mesh.normals[ring(j) as usize].angle_between(mesh.normals[ring(j + 1) as usize])
        };
        let seam = turn(31);
        let worst_inside = (0..31).map(turn).fold(0.0f32, f32::max);
        assert!(
            seam <= worst_inside * 1.05 + 1e-4,
            "ring {r}: seam turn {seam} vs {worst_inside}"
        );
        // The texture repeats every third of a turn: column 31→0 turns like 10→11.
        assert!(
            (seam - turn(10)).abs() < 0.1 * seam.max(1e-3) + 1e-3,
            "ring {r}: {seam} vs {}",
            turn(10)
        );
    }
}

#[test]
fn flat_rocks_have_no_vertex_normals() {
    let mesh = world_mesh(&SphereMesh::uv(4, 6), &sphere_place(1.0), None, true);
    assert!(mesh.normals.is_empty());
}

#[test]
fn uv_of_inverts_the_tessellation() {
    let s = SphereMesh::uv(10, 24);
    for k in 1..s.dirs.len() - 1 {
        let (u, v) = uv_of(s.dirs[k]);
        let expect = s.uv[k];
        let du = (u - expect.x).abs().min(1.0 - (u - expect.x).abs());
        assert!(
            du < 1e-5 && (v - expect.y).abs() < 1e-5,
            "{k}: ({u}, {v}) vs {expect}"
        );
    }
    assert_eq!(Vec2::from(uv_of(Vec3::Y)).y, 0.0);
}

#[test]
fn robust_sphere_hits_from_far_away() {
    // A ray from 1e7 units away still finds both hits at distance ±1.
    let (t0, t1) = unit_sphere_hits(DVec3::new(0.0, 0.5, -1e7), DVec3::Z).unwrap();
    let half_chord = (1.0f64 - 0.25).sqrt();
    assert!((t0 - (1e7 - half_chord)).abs() < 1e-6, "{t0}");
    assert!((t1 - (1e7 + half_chord)).abs() < 1e-6, "{t1}");
    assert!(unit_sphere_hits(DVec3::new(0.0, 1.01, -1e7), DVec3::Z).is_none());
}

/// The nearest hit of `ray` on `mesh`, every triangle tested (the BVH
/// is checked against this in `accel`; rocks come before it).
fn nearest(mesh: &crate::mesh::TriangleMesh, ray: &Ray) -> Option<f32> {
    mesh.indices
        .iter()
        .filter_map(|t| {
            let [a, b, c] = t.map(|v| mesh.positions[v as usize]);
            crate::ray::intersect_triangle(ray, a, b, c, f32::INFINITY).map(|h| h.0)
        })
        .reduce(f32::min)
}

#[test]
fn analytic_hits_match_tessellated_within_tessellation_error() {
    let place = Placement {
        scale: Vec3::new(1.0, 0.7, 1.2),
        rotation: Quat::from_rotation_x(0.3),
        pre_rotation: Quat::from_rotation_z(1.1),
        ..sphere_place(2.0)
    };
    let rock = AnalyticRock::new(place, 0);
    let mesh = world_mesh(&SphereMesh::uv(96, 192), &place, None, false);
    let mut hits = 0;
    for k in 0..400u64 {
        let r = |s| crate::hash::unit_f32(k, s, 0);
        let origin = place.center + Vec3::new(r(1) - 0.5, r(2) - 0.5, -1.0).normalize() * 20.0;
        let target = place.center + Vec3::new(r(3) - 0.5, r(4) - 0.5, r(5) - 0.5) * 4.0;
        let ray = Ray::new(origin, (target - origin).normalize());
        let exact = rock.intersect(&ray, 0.0, f32::INFINITY);
        let tess = nearest(&mesh, &ray);
        match (exact, tess) {
            (Some(a), Some(b)) => {
                // Chord sag of a 96 × 192 tessellation of a 2.4-radius axis:
                // r·(1 − cos(π/96)) ≈ 1.3e-3; allow a grazing-angle factor.
                assert!((a - b).abs() < 0.02, "ray {k}: {a} vs {b}");
                hits += 1;
            }
            (None, None) => {}
            // Rays that graze the silhouette may disagree.
            (a, b) => {
                let t = a.or(b).unwrap();
                let p = ray.at(t);
                let grazing = rock.normal(p).dot(ray.dir).abs() < 0.1;
                assert!(grazing, "ray {k}: exact {a:?} vs tessellated {b:?}");
            }
        }
    }
    assert!(hits > 100, "{hits}");
}

#[test]
fn scattered_rocks_rest_on_the_terrain_and_do_not_overlap() {
    use crate::terrain::{generate, FaultLine, Generator, Recipe, TerrainGrid};
    let heights = generate(
        &Recipe::new(
            Generator::FaultLine(FaultLine {
                iterations: 200,
                ..FaultLine::default()
            }),
            65,
            65,
            10.0,
        ),
        2,
    );
    let grid = TerrainGrid {
        heights,
        size: [60.0, 60.0],
    };
    let p = scatter::ScatterParams {
        count: 150,
        radius: [0.5, 2.0],
        squash: [0.5, 0.9],
        sink: 0.3,
        avoid_overlap: true,
        area: [50.0, 50.0],
        seed: 9,
        margin: 0.1,
        height: [0.0, 1.0],
        slope: [0.0, 90.0],
        moisture: None,
    };
    let rocks = scatter::scatter(&p, &grid, None);
    assert!(rocks.len() > 100, "{} placed", rocks.len());
    for r in &rocks {
        let ry = r.axes().y;
        // The centre sits r_y·(1 − 2·sink) above the ground under it.
        let ground = grid.height_at(r.center.x, r.center.z);
        assert!((r.center.y - (ground + ry * 0.4)).abs() < 1e-4);
        assert!((0.5..=2.0).contains(&r.radius));
        assert!(r.center.x.abs() <= 25.0 && r.center.z.abs() <= 25.0);
    }
    for (i, a) in rocks.iter().enumerate() {
        for b in &rocks[i + 1..] {
            let gap = a.center.distance(b.center) - 1.1 * (a.radius + b.radius);
            assert!(gap >= -1e-4, "rocks overlap by {}", -gap);
        }
    }
    // Deterministic from the seed.
    assert_eq!(rocks, scatter::scatter(&p, &grid, None));
    let other = scatter::scatter(&scatter::ScatterParams { seed: 10, ..p }, &grid, None);
    assert_ne!(rocks, other);
}

#[test]
fn placed_copies_of_the_shared_mesh_match_a_direct_build() {
    // For a round rock, the object-space mesh placed in the world is the
    // rock built directly with the displacement scaled by the radius.
    let disp_rel = Displacement {
        texture: Some(ramp()),
        scale: 0.05,
        bias: 0.5,
        filter: Filter::Bilinear,
        mapping: Mapping::Uv,
    };
    let disp_world = Displacement {
        scale: 0.05 * 2.0,
        ..disp_rel.clone()
    };
    let s = SphereMesh::uv(10, 20);
    let place = Placement {
        rotation: Quat::from_rotation_z(0.7),
        ..sphere_place(2.0)
    };
    let placed = place_mesh(&object_mesh(&s, Some(&disp_rel)), &place);
    let direct = world_mesh(&s, &place, Some(&disp_world), false);
    for (a, b) in placed.positions.iter().zip(&direct.positions) {
        assert!((*a - *b).length() < 1e-5);
    }
    for (a, b) in placed.normals.iter().zip(&direct.normals) {
        assert!(a.angle_between(*b) < 1e-3);
    }
}

#[test]
fn displacement_changes_the_silhouette() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("textures/cobblestone.png");
    let texture = Arc::new(Texture::load(&path).unwrap());
    let s = SphereMesh::uv(64, 128);
    let place = sphere_place(2.0);
    let bumpy = Displacement {
        texture: Some(texture),
        scale: 0.25,
        bias: 0.5,
        filter: Filter::Bilinear,
        mapping: Mapping::Uv,
    };
    let flat = Displacement {
        scale: 0.0,
        ..bumpy.clone()
    };
    let a = world_mesh(&s, &place, Some(&bumpy), false);
    let b = world_mesh(&s, &place, Some(&flat), false);
    // Parallel rays along +z in a ring around the silhouette (distance 1.8
    // to 2.2 from the axis): which hit differs between the two.
    let mut differ = 0;
    for k in 0..2000 {
        let angle = k as f32 * 0.0031415;
        let r = 1.8 + 0.4 * ((k * 7919) % 2000) as f32 / 2000.0;
        let origin = place.center + Vec3::new(r * angle.cos(), r * angle.sin(), -10.0);
        let ray = Ray::new(origin, Vec3::Z);
        if nearest(&a, &ray).is_some() != nearest(&b, &ray).is_some() {
            differ += 1;
        }
    }
    assert!(differ > 200, "{differ} of 2000 silhouette rays differ");
}

/// Twice the area of each triangle of `s`.
fn areas(s: &SphereMesh) -> Vec<f32> {
    s.indices
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| s.dirs[v as usize]);
            (b - a).cross(c - a).length()
        })
        .collect()
}

/// The icosphere: 10 · 4ⁿ + 2 welded vertices, 20 · 4ⁿ outward triangles,
/// the largest at most twice the smallest (the default 48 × 96 UV
/// sphere's ratio is 15).
#[test]
fn icospheres_have_no_poles_and_triangles_of_one_size() {
    for n in 0..=5u32 {
        let s = SphereMesh::icosphere(n);
        assert_eq!(s.dirs.len(), 10 * 4usize.pow(n) + 2, "n = {n}");
        assert_eq!(
            s.indices.len(),
            Tessellation::Icosphere { subdivisions: n }.triangle_count()
        );
        assert!(s.dirs.iter().all(|d| (d.length() - 1.0).abs() < 1e-6));
        for t in &s.indices {
            let [a, b, c] = t.map(|v| s.dirs[v as usize]);
            assert!(
                (b - a).cross(c - a).dot(a + b + c) > 0.0,
                "n = {n}: faces outward"
            );
        }
        assert!((0..s.dirs.len()).all(|k| !s.is_pole(k)));
        let a = areas(&s);
        let ratio =
            a.iter().copied().fold(0.0, f32::max) / a.iter().copied().fold(f32::MAX, f32::min);
        assert!(ratio <= 2.0, "n = {n}: area ratio {ratio}");
    }
    let uv = areas(&SphereMesh::uv(48, 96));
    let ratio =
        uv.iter().copied().fold(0.0, f32::max) / uv.iter().copied().fold(f32::MAX, f32::min);
    assert!(ratio > 15.0, "the UV sphere's ratio {ratio}");
}

/// Around a pole, UV mapping reads a whole texture row within a fraction
/// of a degree (the pinch); triplanar mapping reads one neighbourhood.
#[test]
fn triplanar_displacement_has_no_pole() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("textures/cobblestone.png");
    let texture = Arc::new(Texture::load(&path).unwrap());
    let disp = |mapping| Displacement {
        texture: Some(texture.clone()),
        scale: 1.0,
        bias: 0.5,
        filter: Filter::Bilinear,
        mapping,
    };
    let (uv, tri) = (disp(Mapping::Uv), disp(Mapping::Triplanar));
    let spread = |f: &dyn Fn(Vec3) -> f32| {
        let ring: Vec<f32> = (0..64)
            .map(|k| {
                let phi = k as f32 * std::f32::consts::TAU / 64.0;
                let theta = 0.3f32.to_radians();
                f(Vec3::new(
                    theta.sin() * phi.sin(),
                    theta.cos(),
                    theta.sin() * phi.cos(),
                ))
            })
            .collect();
        ring.iter().copied().fold(f32::MIN, f32::max)
            - ring.iter().copied().fold(f32::MAX, f32::min)
    };
    let around_uv = spread(&|d| {
        let (u, v) = uv_of(d);
        uv.offset(u, v)
    });
    let around_tri = spread(&|d| tri.triplanar_offset(d));
    assert!(
        around_uv > 0.2,
        "the UV pole reads a whole row: {around_uv}"
    );
    assert!(
        around_tri < 0.05 * around_uv,
        "triplanar {around_tri} against uv {around_uv}"
    );
}

/// Solid stones: mortar (0) and stone tops (1) both occur, the field is
/// continuous (F2 − F1 changes at most twice as fast as the point moves,
/// over the 0.3-cell ramp), the same for a seed and different across
/// seeds, and with no pole on the sphere.
#[test]
fn solid_stones_have_mortar_tops_and_no_pole() {
    let (mut mortar, mut tops) = (0, 0);
    for k in 0..4000u64 {
        let r = |s| crate::hash::unit_f32(k, s, 99) * 10.0 - 5.0;
        let p = Vec3::new(r(1), r(2), r(3));
        let h = solid_stone(p, 7);
        assert_eq!(h, solid_stone(p, 7));
        mortar += (h < 0.05) as u32;
        tops += (h > 0.95) as u32;
        let step = Vec3::new(1e-3, -2e-3, 1e-3);
        let change = (solid_stone(p + step, 7) - h).abs();
        assert!(
            change <= 2.0 * step.length() / 0.3 + 1e-5,
            "at {p}: {change}"
        );
    }
    assert!(mortar > 100 && tops > 600, "mortar {mortar}, tops {tops}");
    let differ = (0..200)
        .filter(|&k| {
            let p = Vec3::new(k as f32 * 0.37, 1.3, -0.7 * k as f32);
            solid_stone(p, 1) != solid_stone(p, 2)
        })
        .count();
    assert!(differ > 150, "{differ}");
    // Around the pole the stones vary no more than anywhere else.
    let ring: Vec<f32> = (0..64)
        .map(|k| {
            let phi = k as f32 * std::f32::consts::TAU / 64.0;
            let t = 0.3f32.to_radians();
            solid_stone(
                Vec3::new(t.sin() * phi.sin(), t.cos(), t.sin() * phi.cos()) * 3.0,
                0,
            )
        })
        .collect();
    let spread = ring.iter().copied().fold(f32::MIN, f32::max)
        - ring.iter().copied().fold(f32::MAX, f32::min);
    assert!(spread < 0.2, "{spread}");
    // On a rock: each vertex moves by scale · (stone − bias).
    let disp = Displacement {
        texture: None,
        scale: 0.2,
        bias: 0.5,
        filter: Filter::Bilinear,
        mapping: Mapping::Solid {
            cells: 2.5,
            seed: 3,
        },
    };
    let sphere = SphereMesh::icosphere(3);
    let mesh = object_mesh(&sphere, Some(&disp));
    for (p, d) in mesh.positions.iter().zip(&sphere.dirs) {
        let expected = 1.0 + 0.2 * (solid_stone(*d * 2.5, 3) - 0.5);
        assert!((p.length() - expected).abs() < 1e-5);
    }
    let radii: Vec<f32> = mesh.positions.iter().map(|p| p.length()).collect();
    assert!(
        radii.iter().copied().fold(0.0, f32::max) - radii.iter().copied().fold(9.0, f32::min)
            > 0.15
    );
}

/// Masks: rocks lie only where the ground's height and slope allow.
#[test]
fn scattered_rocks_keep_to_their_masks() {
    let grid = crate::terrain::TerrainGrid::diamond_square(65, 65, 10.0, 4, [40.0, 40.0]);
    let (lo, hi) = grid.heights.range();
    let p = scatter::ScatterParams {
        count: 200,
        radius: [0.2, 0.4],
        squash: [0.6, 0.9],
        sink: 0.3,
        avoid_overlap: false,
        area: [40.0, 40.0],
        seed: 2,
        margin: 0.0,
        height: [0.0, 0.4],
        slope: [20.0, 90.0],
        moisture: None,
    };
    let rocks = scatter::scatter(&p, &grid, None);
    assert!(rocks.len() > 20, "{}", rocks.len());
    for r in &rocks {
        let (x, z) = (r.center.x, r.center.z);
        let fraction = (grid.height_at(x, z) - lo) / (hi - lo);
        let slope = grid.normal_at(x, z).y.acos().to_degrees();
        assert!(fraction <= 0.4 && slope >= 20.0, "{fraction} {slope}");
    }
}

/// Fracture facets: every vertex of a cut variant lies on or inside each
/// of its planes, whole faces lie flat on the planes (a fifth of the
/// vertices or more sit on one, to rounding), and each variant is cut
/// differently.
#[test]
fn facets_cut_flat_faces_inside_their_planes() {
    let sphere = SphereMesh::icosphere(4);
    let plain = variant_mesh(&sphere, None, 7, 0, 8, 0);
    let cut = variant_mesh(&sphere, None, 7, 0, 8, 12);
    let other = variant_mesh(&sphere, None, 7, 1, 8, 12);
    assert_ne!(cut.positions, other.positions);
    // The planes are where the cut moved vertices: a moved vertex went
    // straight in along some plane's normal, so the shape only shrinks.
    let mut on_a_plane = 0;
    for (p, q) in plain.positions.iter().zip(&cut.positions) {
        assert!(q.length() <= p.length() + 1e-5, "{p} -> {q}");
        if p.distance(*q) > 1e-6 {
            on_a_plane += 1;
        }
    }
    let share = on_a_plane as f64 / cut.positions.len() as f64;
    assert!((0.2..0.99).contains(&share), "{share}");
    // Flat faces: neighbouring cut triangles whose vertices all moved share
    // a normal to within a hundredth of a degree on most of the cut area.
    let moved: Vec<bool> = plain
        .positions
        .iter()
        .zip(&cut.positions)
        .map(|(p, q)| p.distance(*q) > 1e-6)
        .collect();
    let normals: Vec<Vec3> = (0..cut.indices.len())
        .filter(|&t| cut.indices[t].iter().all(|&k| moved[k as usize]))
        .map(|t| cut.face_normal(t))
        .collect();
    let mut distinct: Vec<Vec3> = Vec::new();
    for n in &normals {
        if !distinct.iter().any(|d| d.dot(*n) > 0.99999) {
            distinct.push(*n);
        }
    }
    assert!(
        distinct.len() <= 12 + normals.len() / 10,
        "{} normals over {} flat triangles",
        distinct.len(),
        normals.len()
    );
}

/// The cube sphere: 6n² + 2 welded vertices, 12n² outward triangles, no
/// poles, the largest triangle at most twice the smallest.
#[test]
fn cube_spheres_are_welded_and_of_one_size() {
    for s in 0..=5u32 {
        let n = 1usize << s;
        let m = SphereMesh::cube(s);
        assert_eq!(m.dirs.len(), 6 * n * n + 2, "s = {s}");
        assert_eq!(
            m.indices.len(),
            Tessellation::Cube { subdivisions: s }.triangle_count()
        );
        assert!(m.dirs.iter().all(|d| (d.length() - 1.0).abs() < 1e-6));
        for t in &m.indices {
            let [a, b, c] = t.map(|v| m.dirs[v as usize]);
            assert!(
                (b - a).cross(c - a).dot(a + b + c) > 0.0,
                "s = {s}: faces outward"
            );
        }
        // Welded: every edge is shared by exactly two triangles.
        let mut edges = std::collections::HashMap::new();
        for t in &m.indices {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += 1;
            }
        }
        assert!(edges.values().all(|&c| c == 2), "s = {s}: closed");
        assert!((0..m.dirs.len()).all(|k| !m.is_pole(k)));
        let a = areas(&m);
        let ratio =
            a.iter().copied().fold(0.0, f32::max) / a.iter().copied().fold(f32::MAX, f32::min);
        assert!(ratio <= 2.0, "s = {s}: area ratio {ratio}");
    }
}
