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
