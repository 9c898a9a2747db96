use super::*;
use std::f32::consts::PI;

fn all_projections() -> Vec<Projection> {
    use FisheyeCircle::*;
    use FisheyeMapping::*;
    let mut v = vec![
        Projection::Perspective {
            fov: 60f32.to_radians(),
        },
        Projection::Orthographic { width: 40.0 },
        Projection::Cylindrical {
            fov: 240f32.to_radians(),
        },
        Projection::Cylindrical { fov: 2.0 * PI },
        Projection::Equirectangular { fov: 2.0 * PI },
        Projection::Equirectangular {
            fov: 90f32.to_radians(),
        },
    ];
    for mapping in [Equidistant, Equisolid, Stereographic, Orthographic] {
        for circle in [Circular, FullFrame] {
            let fovs: &[f32] = match mapping {
                Orthographic => &[120.0, 180.0],
                Stereographic => &[180.0, 300.0],
                _ => &[180.0, 360.0],
            };
            for &f in fovs {
                v.push(Projection::Fisheye {
                    fov: f.to_radians(),
                    mapping,
                    circle,
                });
            }
        }
    }
    v
}

fn camera(projection: Projection) -> Camera {
    Camera::new(
        Vec3::new(1.0, 2.0, -3.0),
        Vec3::new(4.0, 1.0, 5.0),
        Vec3::Y,
        projection,
        320,
        160,
    )
}

#[test]
fn frame_is_orthonormal_and_right_handed_as_specified() {
    let c = Camera::new(
        Vec3::ZERO,
        Vec3::Z,
        Vec3::Y,
        Projection::Perspective { fov: 1.0 },
        4,
        4,
    );
    assert_eq!((c.forward, c.right, c.up), (DVec3::Z, DVec3::X, DVec3::Y));
}

#[test]
fn centre_pixel_looks_forward() {
    for p in all_projections() {
        let c = camera(p);
        let ray = c.ray(160.0, 80.0).expect("centre is in view");
        assert!((ray.dir - c.forward.as_vec3()).length() < 1e-6, "{p:?}");
    }
}

#[test]
fn pixel_to_ray_to_pixel_round_trips() {
    for p in all_projections() {
        let c = camera(p);
        let mut checked = 0;
        for k in 0..400 {
            let px = 0.5 + (k * 37 % 320) as f64 + 0.25 * (k % 3) as f64;
            let py = 0.5 + (k * 11 % 160) as f64;
            let Some((origin, dir)) = c.ray_f64(DVec2::new(px, py)) else {
                continue;
            };
            let back = c
                .project_f64(origin + dir * 7.0)
                .expect("a visible point projects");
            assert!(
                (back - DVec2::new(px, py)).length() < 1e-4,
                "{p:?} at ({px}, {py}): {back}"
            );
            // The f32 ray the tracer gets lands within a thousandth of a pixel.
            let ray = c.ray(px as f32, py as f32).expect("same pixel in view");
            let back32 = c.project(ray.at(7.0)).expect("a visible point projects");
            assert!(
                (back32 - Vec2::new(px as f32, py as f32)).length() < 2e-3,
                "{p:?} f32: {back32}"
            );
            checked += 1;
        }
        assert!(checked > 100, "{p:?}: {checked}");
    }
}

/// Camera at the origin looking along +z with up +y: r = +x, u = +y, f = +z.
/// Image 200 × 100, so A = 2.
fn axis_camera(projection: Projection) -> Camera {
    Camera::new(Vec3::ZERO, Vec3::Z, Vec3::Y, projection, 200, 100)
}

fn assert_dir(c: &Camera, px: f64, py: f64, expect: [f64; 3]) {
    let (_, d) = c.ray_f64(DVec2::new(px, py)).expect("pixel in view");
    let e = DVec3::from_array(expect);
    assert!(
        (d - e).length() < 1e-6,
        "{:?}: got {d}, expected {e}",
        c.projection
    );
}

// Hand-checked rays. Pixel (150, 25): sx = 2·150/200 − 1 = 0.5,
// sy = 1 − 2·25/100 = 0.5.

#[test]
fn hand_checked_perspective() {
    // fov 90°: t = tan 45° = 1. d = normalize(f + 0.5·1·r + 0.5·(1/2)·u)
    // = (0.5, 0.25, 1) / √1.3125 = (0.5, 0.25, 1) / 1.1456439
    // = (0.4364358, 0.2182179, 0.8728716).
    let c = axis_camera(Projection::Perspective {
        fov: 90f32.to_radians(),
    });
    assert_dir(&c, 150.0, 25.0, [0.4364358, 0.2182179, 0.8728716]);
}

#[test]
fn hand_checked_orthographic() {
    // width 10: origin = 0.5·10/2·r + 0.5·10/(2·2)·u = (2.5, 1.25, 0); d = f.
    let c = axis_camera(Projection::Orthographic { width: 10.0 });
    let (o, d) = c.ray_f64(DVec2::new(150.0, 25.0)).unwrap();
    assert!((o - DVec3::new(2.5, 1.25, 0.0)).length() < 1e-9, "{o}");
    assert_eq!(d, DVec3::Z);
}

#[test]
fn hand_checked_cylindrical() {
    // fov 180°: θ = 0.5·90° = 45°, h = 0.5·(π/2)/2 = π/8 = 0.3926991.
    // d = normalize(sin 45°, π/8, cos 45°) = (0.7071068, 0.3926991, 0.7071068)
    // / 1.0743429 = (0.6581761, 0.3655249, 0.6581761).
    let c = axis_camera(Projection::Cylindrical { fov: PI });
    assert_dir(&c, 150.0, 25.0, [0.6581761, 0.3655249, 0.6581761]);
}

#[test]
fn hand_checked_equirectangular() {
    // fov 360°: θ = 0.5·180° = 90°, φ = 0.5·180°/2 = 45°.
    // d = cos 45°·sin 90°·r + sin 45°·u + cos 45°·cos 90°·f = (0.7071068, 0.7071068, 0).
    let c = axis_camera(Projection::Equirectangular { fov: 2.0 * PI });
    let h = std::f64::consts::FRAC_1_SQRT_2; // 0.7071068
    assert_dir(&c, 150.0, 25.0, [h, h, 0.0]);
}

// Fisheye, fov 180°, pixel (120, 40): sx = 0.2, sy = 0.2, so x = 0.2·200/2 = 20,
// y = 0.2·100/2 = 10. Circular: R = min(200, 100)/2 = 50, ρ = √500/50 = 0.4472136,
// ψ = atan2(10, 20) = 0.4636476 (cos ψ = 0.8944272, sin ψ = 0.4472136).

fn fisheye(mapping: FisheyeMapping, circle: FisheyeCircle) -> Camera {
    axis_camera(Projection::Fisheye {
        fov: PI,
        mapping,
        circle,
    })
}

#[test]
fn hand_checked_fisheye_equidistant() {
    // α = ρ·90° = 40.249224° ; sin α = 0.6461149, cos α = 0.7632412.
    // d = (sin α cos ψ, sin α sin ψ, cos α) = (0.5779016, 0.2889508, 0.7632412).
    let c = fisheye(FisheyeMapping::Equidistant, FisheyeCircle::Circular);
    assert_dir(&c, 120.0, 40.0, [0.5779016, 0.2889508, 0.7632412]);
}

#[test]
fn hand_checked_fisheye_equisolid() {
    // ρ = sin(α/2)/sin 45° ⇒ α = 2·asin(0.4472136·0.7071068) = 2·asin(0.3162278)
    // = 36.869898°: sin α = 0.6, cos α = 0.8. d = (0.6·0.8944272, 0.6·0.4472136, 0.8).
    let c = fisheye(FisheyeMapping::Equisolid, FisheyeCircle::Circular);
    assert_dir(&c, 120.0, 40.0, [0.5366563, 0.2683282, 0.8]);
}

#[test]
fn hand_checked_fisheye_stereographic() {
    // ρ = tan(α/2)/tan 45° ⇒ α = 2·atan(0.4472136) = 48.189685°: sin α = 0.7453560,
    // cos α = 2/3. d = (0.7453560·0.8944272, 0.7453560·0.4472136, 2/3) = (2/3, 1/3, 2/3).
    let c = fisheye(FisheyeMapping::Stereographic, FisheyeCircle::Circular);
    assert_dir(&c, 120.0, 40.0, [2.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0]);
}

#[test]
fn hand_checked_fisheye_orthographic() {
    // ρ = sin α / sin 90° ⇒ sin α = 0.4472136, cos α = 0.8944272.
    // d = (0.4472136·0.8944272, 0.4472136·0.4472136, 0.8944272) = (0.4, 0.2, 0.8944272).
    let c = fisheye(FisheyeMapping::Orthographic, FisheyeCircle::Circular);
    assert_dir(&c, 120.0, 40.0, [0.4, 0.2, 0.8944272]);
}

#[test]
fn hand_checked_fisheye_full_frame() {
    // R = √(200² + 100²)/2 = 111.80340, ρ = √500/111.80340 = 0.2, α = 0.2·90° = 18°:
    // d = (sin 18°·0.8944272, sin 18°·0.4472136, cos 18°) = (0.2763932, 0.1381966, 0.9510565).
    let c = fisheye(FisheyeMapping::Equidistant, FisheyeCircle::FullFrame);
    assert_dir(&c, 120.0, 40.0, [0.2763932, 0.1381966, 0.9510565]);
}

// Properties.

#[test]
fn perspective_keeps_straight_lines_straight() {
    let c = camera(Projection::Perspective {
        fov: 70f32.to_radians(),
    });
    for k in 0..20 {
        let a = DVec3::new(k as f64 - 10.0, 3.0 - k as f64 * 0.3, 20.0 + k as f64);
        let b = a + DVec3::new(0.7, 0.2 * k as f64 - 1.0, -0.4);
        let pts: Vec<DVec2> = (0..=10)
            .map(|i| c.project_f64(a.lerp(b, i as f64 / 10.0)).expect("in front"))
            .collect();
        let (p0, p1) = (pts[0], pts[10]);
        let dir = (p1 - p0).normalize();
        for p in &pts {
            let off = (*p - p0).perp_dot(dir).abs();
            assert!(off < 1e-6, "line {k}: {off} px off the straight line");
        }
    }
}

#[test]
fn level_cylindrical_and_equirectangular_keep_verticals_in_one_column() {
    for p in [
        Projection::Cylindrical {
            fov: 240f32.to_radians(),
        },
        Projection::Equirectangular { fov: 2.0 * PI },
    ] {
        // A level camera: forward horizontal, up +y.
        let c = Camera::new(
            Vec3::new(1.0, 5.0, 2.0),
            Vec3::new(7.0, 5.0, 9.0),
            Vec3::Y,
            p,
            400,
            200,
        );
        for k in 0..10 {
            let base = DVec3::new(k as f64 * 3.0 - 12.0, 0.0, 15.0 - k as f64);
            let columns: Vec<f64> = (0..8)
                .map(|h| {
                    c.project_f64(base + DVec3::Y * (h as f64 * 2.5 - 4.0))
                        .unwrap()
                        .x
                })
                .collect();
            for x in &columns {
                assert!((x - columns[0]).abs() < 1e-6, "{p:?}: {columns:?}");
            }
        }
    }
}

#[test]
fn equidistant_fisheye_angle_is_proportional_to_radius() {
    let fov = 200f64.to_radians();
    let c = axis_camera(Projection::Fisheye {
        fov: fov as f32,
        mapping: FisheyeMapping::Equidistant,
        circle: FisheyeCircle::Circular,
    });
    let centre = DVec2::new(100.0, 50.0);
    for k in 0..200 {
        let pixel = centre + DVec2::new((k % 20) as f64 * 2.3 - 23.0, (k / 20) as f64 * 4.7 - 23.0);
        let Some((_, d)) = c.ray_f64(pixel) else {
            continue;
        };
        let alpha = d.dot(c.forward.normalize()).clamp(-1.0, 1.0).acos();
        let rho = (pixel - centre).length() / 50.0;
        let expected = rho * (fov as f32 as f64) / 2.0;
        assert!(
            (alpha - expected).abs() < 1e-6,
            "ρ {rho}: α {alpha} vs {expected}"
        );
    }
}

#[test]
fn circular_fisheye_corners_are_background() {
    for mapping in [
        FisheyeMapping::Equidistant,
        FisheyeMapping::Equisolid,
        FisheyeMapping::Stereographic,
        FisheyeMapping::Orthographic,
    ] {
        let c = camera(Projection::Fisheye {
            fov: PI,
            mapping,
            circle: FisheyeCircle::Circular,
        });
        for (x, y) in [(0.5, 0.5), (319.5, 0.5), (0.5, 159.5), (319.5, 159.5)] {
            assert!(c.ray(x, y).is_none(), "{mapping:?} corner ({x}, {y})");
        }
        let full = camera(Projection::Fisheye {
            fov: PI,
            mapping,
            circle: FisheyeCircle::FullFrame,
        });
        assert!(
            full.ray(0.5, 0.5).is_some(),
            "{mapping:?} full frame covers the corners"
        );
    }
}

#[test]
fn orthographic_rays_are_parallel() {
    let c = camera(Projection::Orthographic { width: 30.0 });
    let first = c.ray(0.5, 0.5).unwrap();
    for k in 0..100 {
        let r = c
            .ray((k * 7 % 320) as f32 + 0.5, (k * 3 % 160) as f32 + 0.5)
            .unwrap();
        assert_eq!(r.dir, first.dir);
    }
    // ...and their origins span the view width.
    let left = c.ray(0.0, 80.0).unwrap().origin;
    let right = c.ray(320.0, 80.0).unwrap().origin;
    assert!(((right - left).length() - 30.0).abs() < 1e-4);
}

/// The rays `rays_into` sets up for a batch are bit for bit those of
/// `ray`, point by point, for every projection: perspective batches (of
/// any length, across the batch size) and the rest one by one, points
/// outside the image and background included.
#[test]
fn batched_rays_are_the_rays_one_by_one() {
    let mut projections = all_projections();
    projections.extend(
        [1.0f32, 30.0, 90.0, 150.0].map(|deg| Projection::Perspective {
            fov: deg.to_radians(),
        }),
    );
    for p in projections {
        for (w, h) in [(320, 160), (7, 300), (1920, 1080)] {
            let c = Camera::new(
                Vec3::new(1.0, 2.0, -3.0),
                Vec3::new(4.0, 1.0, 5.0),
                Vec3::Y,
                p,
                w,
                h,
            );
            for n in [0usize, 1, 15, 16, 17, 100] {
                let points: Vec<[f32; 2]> = (0..n)
                    .map(|k| {
                        let k = k as f32;
                        [
                            (k * 37.31 % (w as f32 + 8.0)) - 4.0,
                            (k * 11.7 % (h as f32 + 6.0)) - 3.0 + 0.125,
                        ]
                    })
                    .collect();
                let (mut has, mut rays) = (Vec::new(), Vec::new());
                c.rays_into(&points, &mut has, &mut rays);
                let single: Vec<Option<Ray>> = points.iter().map(|&[x, y]| c.ray(x, y)).collect();
                assert_eq!(has, single.iter().map(Option::is_some).collect::<Vec<_>>());
                let expected: Vec<_> = single.iter().flatten().map(Ray::bits).collect();
                let batched: Vec<_> = rays.iter().map(Ray::bits).collect();
                assert_eq!(batched, expected, "{p:?} {w}×{h}, {n} points");
            }
        }
    }
}

/// Every projection scene files can name is listed, with the defaults a
/// file that names only its type gets, and each lists under its own tag.
#[test]
fn every_projection_is_listed_with_its_defaults() {
    let all = ProjectionFile::all();
    let names: Vec<&str> = all.iter().map(ProjectionFile::name).collect();
    assert_eq!(
        names,
        [
            "perspective",
            "orthographic",
            "cylindrical",
            "equirectangular",
            "fisheye"
        ]
    );
    let fovs: Vec<Option<f64>> = all.iter().map(ProjectionFile::fov).collect();
    assert_eq!(
        fovs,
        [Some(60.0), None, Some(240.0), Some(360.0), Some(180.0)]
    );
    let refused = ProjectionFile::named("isometric").unwrap_err();
    for name in names {
        assert!(refused.contains(&format!("`{name}`")), "{refused}");
    }
}

/// A pixel's footprint is what the camera's own rays through two
/// neighbouring pixels at the image's middle say: the angle between them
/// (each projection's but the orthographic), or the distance between
/// their origins (the orthographic's). Exact for the perspective:
/// 2·tan(fov/2)/W.
#[test]
fn the_pixel_footprint_is_the_middle_pixels_spread() {
    let p = Camera::new(
        Vec3::ZERO,
        Vec3::Z,
        Vec3::Y,
        Projection::Perspective {
            fov: 90f32.to_radians(),
        },
        200,
        100,
    );
    let f = p.pixel_footprint();
    assert_eq!(f.width, 0.0);
    assert!((f.spread - 0.01).abs() < 1e-7, "{}", f.spread);
    for projection in all_projections() {
        let c = camera(projection);
        let (x, y) = (c.width as f32 * 0.5, c.height as f32 * 0.5);
        let a = c.ray(x - 0.5, y).expect("the middle is seen");
        let b = c.ray(x + 0.5, y).expect("the middle is seen");
        let f = c.pixel_footprint();
        // The chord between the unit directions, as an angle.
        let chord = (a.dir.normalize() - b.dir.normalize()).length();
        let angle = 2.0 * (0.5 * chord).asin();
        let apart = a.origin.distance(b.origin);
        let label = projection.label();
        assert!(
            (f.spread - angle).abs() < 1e-3 * angle.max(1e-3),
            "{label}: {f:?} {angle}"
        );
        assert!((f.width - apart).abs() < 1e-4, "{label}: {f:?} {apart}");
    }
}
