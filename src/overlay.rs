//! Guides drawn over a projection, for reading its distortion: Tissot's
//! indicatrices (small circles of one angular radius on a grid of
//! directions, each drawn as the projection maps it, so that stretching
//! and shearing show as ellipses) and a grid of lines of equal azimuth and
//! elevation. Directions are taken in the camera's frame: azimuth to the
//! right of the view direction, elevation above it.

use glam::{DVec2, DVec3};
use image::{Rgba, RgbaImage};

use crate::camera::Camera;

/// Which guide to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlay {
    /// Tissot's indicatrices every 30°, 4° in radius.
    Tissot,
    /// Lines of equal azimuth and elevation every 15°.
    Grid,
}

/// Angular radius of an indicatrix, degrees.
pub const TISSOT_RADIUS: f64 = 4.0;
/// Spacing of the indicatrices' centres, degrees.
pub const TISSOT_STEP: f64 = 30.0;
/// Spacing of the grid's lines, degrees.
pub const GRID_STEP: f64 = 15.0;
/// The guides' colour.
const INK: [u8; 3] = [255, 214, 64];

/// The unit direction at `azimuth` and `elevation` (degrees) in the frame
/// of `camera`.
pub fn direction(camera: &Camera, azimuth: f64, elevation: f64) -> DVec3 {
    let (_, r, u, f) = camera.frame();
    let (a, e) = (azimuth.to_radians(), elevation.to_radians());
    e.cos() * a.sin() * r + e.sin() * u + e.cos() * a.cos() * f
}

/// The image point (pixels) where the direction `d` from the eye appears.
fn project(camera: &Camera, d: DVec3) -> Option<DVec2> {
    let (eye, ..) = camera.frame();
    camera.project_f64(eye + d * 100.0)
}

/// The outline of the indicatrix around direction `centre`: `points`
/// image points of the circle of angular radius `radius` (degrees) about
/// it, or None where part of it is not shown.
pub fn indicatrix(
    camera: &Camera,
    centre: DVec3,
    radius: f64,
    points: usize,
) -> Option<Vec<DVec2>> {
    let c = centre.normalize();
    let helper = if c.y.abs() < 0.9 { DVec3::Y } else { DVec3::X };
    let t = helper.cross(c).normalize();
    let b = c.cross(t);
    let rho = radius.to_radians();
    (0..points)
        .map(|k| {
            let th = std::f64::consts::TAU * k as f64 / points as f64;
            project(
                camera,
                rho.cos() * c + rho.sin() * (th.cos() * t + th.sin() * b),
            )
        })
        .collect()
}

/// The ratio of the longest to the shortest axis of an outline (1 for a
/// circle): the extreme distances from its centroid along 180 directions.
pub fn aspect(outline: &[DVec2]) -> f64 {
    let centre = outline.iter().copied().sum::<DVec2>() / outline.len() as f64;
    let extent = |angle: f64| {
        let axis = DVec2::from_angle(angle);
        let (lo, hi) = outline
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                let v = (*p - centre).dot(axis);
                (lo.min(v), hi.max(v))
            });
        hi - lo
    };
    let widths: Vec<f64> = (0..180).map(|k| extent((k as f64).to_radians())).collect();
    let max = widths.iter().copied().fold(0.0, f64::max);
    let min = widths.iter().copied().fold(f64::INFINITY, f64::min);
    max / min
}

/// The polylines of `overlay` for `camera`, in image points: each a run
/// of points the projection shows without a jump (a panorama's seam
/// breaks a line in two).
pub fn polylines(camera: &Camera, overlay: Overlay) -> Vec<Vec<DVec2>> {
    let jump = 0.25 * camera.width.max(camera.height) as f64;
    let mut lines = Vec::new();
    let mut trace = |points: &mut dyn Iterator<Item = Option<DVec2>>| {
        let mut run: Vec<DVec2> = Vec::new();
        for p in points {
            match p {
                Some(p) if run.last().is_none_or(|q| q.distance(p) < jump) => run.push(p),
                Some(p) => {
                    lines.push(std::mem::take(&mut run));
                    run.push(p);
                }
                None => lines.push(std::mem::take(&mut run)),
            }
        }
        lines.push(run);
    };
    match overlay {
        Overlay::Tissot => {
            let steps = (180.0 / TISSOT_STEP) as i32;
            for i in -steps..steps {
                for j in -(steps / 2 - 1)..=(steps / 2 - 1) {
                    let centre = direction(camera, i as f64 * TISSOT_STEP, j as f64 * TISSOT_STEP);
                    if let Some(mut outline) = indicatrix(camera, centre, TISSOT_RADIUS, 48) {
                        outline.push(outline[0]);
                        trace(&mut outline.into_iter().map(Some));
                    }
                }
            }
        }
        Overlay::Grid => {
            let n = (180.0 / GRID_STEP) as i32;
            for i in -n..n {
                let a = i as f64 * GRID_STEP;
                trace(&mut (-90..=90).map(|e| project(camera, direction(camera, a, e as f64))));
            }
            for j in -(n / 2 - 1)..=(n / 2 - 1) {
                let e = j as f64 * GRID_STEP;
                trace(&mut (-180..=180).map(|a| project(camera, direction(camera, a as f64, e))));
            }
        }
    }
    lines.retain(|l| l.len() >= 2);
    lines
}

/// Draws `overlay` over `image` (the camera's own image, or a cell of it
/// at `origin`), antialiased, one pixel wide.
pub fn draw(image: &mut RgbaImage, origin: (u32, u32), camera: &Camera, overlay: Overlay) {
    for line in polylines(camera, overlay) {
        for pair in line.windows(2) {
            segment(
                image,
                origin,
                (camera.width, camera.height),
                pair[0],
                pair[1],
            );
        }
    }
}

/// One antialiased segment from `a` to `b` (cell pixels), clipped to the
/// `size` cell at `origin`: each pixel covered by how near its centre is
/// to the segment (full within 0.5 px, none beyond 1.25 px).
fn segment(image: &mut RgbaImage, origin: (u32, u32), size: (u32, u32), a: DVec2, b: DVec2) {
    let lo = a.min(b).floor() - 2.0;
    let hi = a.max(b).ceil() + 2.0;
    let (x0, y0) = (lo.x.max(0.0) as u32, lo.y.max(0.0) as u32);
    let (x1, y1) = (
        (hi.x.max(0.0) as u32).min(size.0),
        (hi.y.max(0.0) as u32).min(size.1),
    );
    let ab = b - a;
    let len2 = ab.length_squared().max(1e-12);
    for y in y0..y1 {
        for x in x0..x1 {
            let p = DVec2::new(x as f64 + 0.5, y as f64 + 0.5);
            let t = ((p - a).dot(ab) / len2).clamp(0.0, 1.0);
            let d = p.distance(a + ab * t);
            let cover = ((1.25 - d) / 0.75).clamp(0.0, 1.0);
            if cover > 0.0 {
                let px = image.get_pixel_mut(origin.0 + x, origin.1 + y);
                let mix =
                    |c: u8, ink: u8| (c as f64 + (ink as f64 - c as f64) * cover).round() as u8;
                *px = Rgba([
                    mix(px[0], INK[0]),
                    mix(px[1], INK[1]),
                    mix(px[2], INK[2]),
                    px[3].max((cover * 255.0) as u8),
                ]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Projection;
    use glam::Vec3;

    fn camera(projection: Projection) -> Camera {
        Camera::new(
            Vec3::new(0.0, 5.0, 0.0),
            Vec3::new(0.0, 5.0, 10.0),
            Vec3::Y,
            projection,
            480,
            270,
        )
    }

    /// At the centre of a perspective view the indicatrix is a circle; near
    /// the edge of a 150° view it is stretched along the radius: measured
    /// on the outlines the overlay draws.
    #[test]
    fn tissot_circles_stay_round_at_the_centre_and_stretch_at_the_edge() {
        let narrow = camera(Projection::Perspective {
            fov: 60f32.to_radians(),
        });
        let centre = indicatrix(&narrow, direction(&narrow, 0.0, 0.0), TISSOT_RADIUS, 96).unwrap();
        let a = aspect(&centre);
        assert!(a < 1.02, "centre aspect {a}");
        let wide = camera(Projection::Perspective {
            fov: 150f32.to_radians(),
        });
        let edge = indicatrix(&wide, direction(&wide, 65.0, 0.0), TISSOT_RADIUS, 96).unwrap();
        let a = aspect(&edge);
        // A perspective view scales by 1/cos² θ along the radius and 1/cos θ
        // across it: an aspect of 1/cos θ, 2.37 at 65° (a little more for
        // a circle of finite size).
        let expected = 1.0 / 65f64.to_radians().cos();
        assert!(
            a > 1.5 && (a / expected - 1.0).abs() < 0.03,
            "edge aspect {a}, expected {expected}"
        );
        // An equirectangular view keeps the equator's circles round.
        let equi = camera(Projection::Equirectangular {
            fov: std::f32::consts::TAU,
        });
        let on_equator = indicatrix(&equi, direction(&equi, 90.0, 0.0), TISSOT_RADIUS, 96).unwrap();
        assert!(aspect(&on_equator) < 1.02, "{}", aspect(&on_equator));
    }

    #[test]
    fn the_overlays_draw_inside_the_image() {
        for projection in [
            Projection::Perspective {
                fov: 90f32.to_radians(),
            },
            Projection::Equirectangular {
                fov: std::f32::consts::TAU,
            },
            Projection::Cylindrical {
                fov: 240f32.to_radians(),
            },
        ] {
            let cam = camera(projection);
            for overlay in [Overlay::Tissot, Overlay::Grid] {
                let mut img = RgbaImage::from_pixel(480, 270, Rgba([0, 0, 0, 255]));
                draw(&mut img, (0, 0), &cam, overlay);
                let inked = img.pixels().filter(|p| p[0] > 100).count();
                assert!(inked > 500, "{projection:?} {overlay:?}: {inked} pixels");
            }
        }
    }
}
