//! The camera: a position and frame, and a projection that maps image points
//! to rays (and back).
//!
//! Frame: forward f = normalize(look_at − position), right
//! r = normalize(up × f), camera up u = f × r. Pixel (0, 0) is the top-left
//! corner; image point (px, py) in pixels maps to sx = 2·px/W − 1 (left to
//! right) and sy = 1 − 2·py/H (bottom to top); A = W/H. The projections and
//! their formulas are in [`Projection`].

use glam::{DVec2, DVec3, Vec2, Vec3};

use crate::ray::{Footprint, Ray};
use serde::Deserialize;

pub mod file;
pub use file::{CameraFile, CameraSettings, ProjectionFile};

/// Fisheye radial mapping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FisheyeMapping {
    /// Radius proportional to the off-axis angle.
    #[default]
    Equidistant,
    /// Equal-area: radius ∝ sin(α/2).
    Equisolid,
    /// Conformal: radius ∝ tan(α/2).
    Stereographic,
    /// Radius ∝ sin α (at most 180°).
    Orthographic,
}

/// Fisheye image circle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FisheyeCircle {
    /// The circle's diameter is the image's shorter side.
    #[default]
    Circular,
    /// The circle's diameter is the image diagonal.
    FullFrame,
}

/// How image coordinates (sx, sy) ∈ [−1, 1]² become ray directions.
/// Angles are radians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Projection {
    /// d = normalize(f + sx·t·r + sy·(t/A)·u), t = tan(fov/2).
    Perspective {
        /// Horizontal field of view.
        fov: f32,
    },
    /// d = f; origin shifted by sx·w/2·r + sy·w/(2A)·u.
    Orthographic {
        /// Width of the view, world units.
        width: f32,
    },
    /// θ = sx·fov/2, h = sy·(fov/2)/A; d = normalize(sin θ·r + h·u + cos θ·f).
    Cylindrical {
        /// Horizontal field of view.
        fov: f32,
    },
    /// θ = sx·fov/2, φ = sy·(fov/2)/A;
    /// d = cos φ·sin θ·r + sin φ·u + cos φ·cos θ·f. Rows beyond the poles
    /// (|φ| > π/2) are background.
    Equirectangular {
        /// Horizontal field of view.
        fov: f32,
    },
    /// x = sx·W/2, y = sy·H/2, ρ = √(x²+y²)/R, ψ = atan2(y, x); the off-axis
    /// angle α follows from ρ by the mapping;
    /// d = sin α·cos ψ·r + sin α·sin ψ·u + cos α·f.
    Fisheye {
        /// Field of view across the image circle.
        fov: f32,
        /// ρ(α): equidistant, equisolid, stereographic or orthographic.
        mapping: FisheyeMapping,
        /// Image circle radius R: `circular` min(W, H)/2, `full_frame` √(W²+H²)/2.
        circle: FisheyeCircle,
    },
}

impl Projection {
    /// This projection with field of view `fov` (radians), for those
    /// that have one.
    pub fn with_fov(self, fov: f32) -> Projection {
        match self {
            Projection::Perspective { .. } => Projection::Perspective { fov },
            Projection::Orthographic { .. } => self,
            Projection::Cylindrical { .. } => Projection::Cylindrical { fov },
            Projection::Equirectangular { .. } => Projection::Equirectangular { fov },
            Projection::Fisheye {
                mapping, circle, ..
            } => Projection::Fisheye {
                fov,
                mapping,
                circle,
            },
        }
    }

    /// The projection's name as written in scene files.
    pub fn name(&self) -> &'static str {
        match self {
            Projection::Perspective { .. } => "perspective",
            Projection::Orthographic { .. } => "orthographic",
            Projection::Cylindrical { .. } => "cylindrical",
            Projection::Equirectangular { .. } => "equirectangular",
            Projection::Fisheye { .. } => "fisheye",
        }
    }

    /// A short human label with the parameters, e.g. "fisheye 180° equidistant circular".
    pub fn label(&self) -> String {
        let deg = |a: f32| format!("{}°", (a.to_degrees() * 10.0).round() / 10.0);
        match *self {
            Projection::Perspective { fov } => format!("perspective {}", deg(fov)),
            Projection::Orthographic { width } => format!("orthographic {width} wide"),
            Projection::Cylindrical { fov } => format!("cylindrical {}", deg(fov)),
            Projection::Equirectangular { fov } => format!("equirectangular {}", deg(fov)),
            Projection::Fisheye {
                fov,
                mapping,
                circle,
            } => {
                let m = format!("{mapping:?}").to_lowercase();
                let c = match circle {
                    FisheyeCircle::Circular => "circular",
                    FisheyeCircle::FullFrame => "full frame",
                };
                format!("fisheye {} {m} {c}", deg(fov))
            }
        }
    }
}

/// A camera ready to generate rays for a `width` × `height` image.
///
/// The projection maths runs in f64 so that pixel → ray → pixel round trips
/// are exact to well under 1e-4 px even where a mapping is ill-conditioned
/// (a 360° fisheye's rim); rays are handed to the tracer in f32.
#[derive(Debug, Clone, Copy)]
pub struct Camera {
    /// Eye position, world.
    pub position: DVec3,
    /// Unit forward f.
    pub forward: DVec3,
    /// Unit right r.
    pub right: DVec3,
    /// Unit camera up u.
    pub up: DVec3,
    /// The projection.
    pub projection: Projection,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// tan(fov / 2) of a perspective projection (0 for the others), worked
    /// out once rather than for every ray.
    tan_half_fov: f64,
    /// width / height, worked out once.
    aspect: f64,
    /// tan_half_fov / aspect: the vertical half-extent of a perspective
    /// view at unit distance, worked out once.
    tan_half_fov_vertical: f64,
}

impl Camera {
    /// A camera at `position` looking at `look_at`. The caller guarantees
    /// (validation does) that the two differ and `up` is not parallel to the
    /// view direction.
    pub fn new(
        position: Vec3,
        look_at: Vec3,
        up: Vec3,
        projection: Projection,
        width: u32,
        height: u32,
    ) -> Camera {
        let position = position.as_dvec3();
        let forward = (look_at.as_dvec3() - position).normalize();
        let right = up.as_dvec3().cross(forward).normalize();
        let up = forward.cross(right);
        let tan_half_fov = match projection {
            Projection::Perspective { fov } => (fov as f64 * 0.5).tan(),
            _ => 0.0,
        };
        let aspect = width as f64 / height as f64;
        Camera {
            position,
            forward,
            right,
            up,
            projection,
            width,
            height,
            tan_half_fov,
            aspect,
            tan_half_fov_vertical: tan_half_fov / aspect,
        }
    }

    /// How wide a pixel is at a distance from the eye: the width of the
    /// image's middle pixel (an orthographic view's), and the angle it
    /// spans (a perspective view's at its middle; the others' angle per
    /// pixel across the image).
    pub fn pixel_footprint(&self) -> Footprint {
        let w = self.width as f64;
        let (width, spread) = match self.projection {
            Projection::Perspective { .. } => (0.0, 2.0 * self.tan_half_fov / w),
            Projection::Orthographic { width } => (width as f64 / w, 0.0),
            Projection::Cylindrical { fov } | Projection::Equirectangular { fov } => {
                (0.0, fov as f64 / w)
            }
            Projection::Fisheye {
                fov,
                mapping,
                circle,
            } => {
                let h = self.height as f64;
                let radius = 0.5
                    * match circle {
                        FisheyeCircle::Circular => w.min(h),
                        FisheyeCircle::FullFrame => w.hypot(h),
                    };
                // The angle of a pixel off the axis.
                let alpha = fisheye_angle(mapping, fov as f64, 1.0 / radius);
                (0.0, alpha.unwrap_or(fov as f64 / (2.0 * radius)))
            }
        };
        Footprint {
            width: width as f32,
            spread: spread as f32,
        }
    }

    /// The eye and the camera's frame: (position, right, up, forward),
    /// the last three orthonormal.
    pub fn frame(&self) -> (DVec3, DVec3, DVec3, DVec3) {
        (self.position, self.right, self.up, self.forward)
    }

    /// Image point (pixels, continuous; (0, 0) the top-left corner) to (sx, sy).
    #[inline]
    pub fn to_screen(&self, p: DVec2) -> DVec2 {
        DVec2::new(
            2.0 * p.x / self.width as f64 - 1.0,
            1.0 - 2.0 * p.y / self.height as f64,
        )
    }

    /// (sx, sy) back to an image point in pixels.
    #[inline]
    pub fn to_pixel(&self, s: DVec2) -> DVec2 {
        DVec2::new(
            (s.x + 1.0) * 0.5 * self.width as f64,
            (1.0 - s.y) * 0.5 * self.height as f64,
        )
    }

    /// The ray through image point (px, py), or None where the projection
    /// shows background (outside a circular fisheye, beyond the poles).
    #[inline]
    pub fn ray(&self, px: f32, py: f32) -> Option<Ray> {
        let (origin, dir) = self.ray_f64(DVec2::new(px as f64, py as f64))?;
        Some(Ray::new(origin.as_vec3(), dir.as_vec3()))
    }

    /// [`Camera::ray`] for each of `points` (image points, pixels), in
    /// order: whether it has a ray appended to `has`, its ray (where it has
    /// one) to `rays`. Bit for bit the rays of [`Camera::ray`]. A
    /// perspective camera's directions come from a loop of their own with
    /// [`Camera::perspective_dir`] inlined, so that one ray's square root
    /// and division overlap the next one's; one by one through
    /// [`Camera::ray`], each waited on the last (26 ns a camera ray of the
    /// peer workload's frame, 12% of its tracing).
    pub fn rays_into(&self, points: &[[f32; 2]], has: &mut Vec<bool>, rays: &mut Vec<Ray>) {
        if !matches!(self.projection, Projection::Perspective { .. }) {
            for &[px, py] in points {
                let ray = self.ray(px, py);
                has.push(ray.is_some());
                rays.extend(ray);
            }
            return;
        }
        has.extend(std::iter::repeat_n(true, points.len()));
        let dirs: Vec<Vec3> = points
            .iter()
            .map(|&[px, py]| {
                let s = self.to_screen(DVec2::new(px as f64, py as f64));
                self.perspective_dir(s).as_vec3()
            })
            .collect();
        let origin = self.position.as_vec3();
        Ray::extend_new(rays, |_| origin, &dirs);
    }

    /// A perspective camera's unit direction through screen point `s`:
    /// normalize(f + sx·t·r + sy·(t/A)·u).
    #[inline(always)]
    fn perspective_dir(&self, s: DVec2) -> DVec3 {
        let (t, tv) = (self.tan_half_fov, self.tan_half_fov_vertical);
        (self.forward + s.x * t * self.right + s.y * tv * self.up).normalize()
    }

    /// The eye and a sample of the ray directions over the whole image
    /// (33 × 33 points, its edges and corners included), for a structure
    /// that prepares for the camera's rays; None for an orthographic
    /// camera, whose rays do not share an origin.
    pub fn sight_sample(&self) -> Option<(Vec3, Vec<Vec3>)> {
        if matches!(self.projection, Projection::Orthographic { .. }) {
            return None;
        }
        const STEPS: u32 = 32;
        let (w, h) = (self.width as f32, self.height as f32);
        let directions = (0..=STEPS)
            .flat_map(|i| (0..=STEPS).map(move |j| (i, j)))
            .filter_map(|(i, j)| {
                let (px, py) = (w * i as f32 / STEPS as f32, h * j as f32 / STEPS as f32);
                self.ray(px, py)
            })
            .map(|r| r.dir)
            .collect();
        Some((self.position.as_vec3(), directions))
    }

    /// [`Camera::ray`] in f64: (origin, unit direction).
    pub fn ray_f64(&self, pixel: DVec2) -> Option<(DVec3, DVec3)> {
        let s = self.to_screen(pixel);
        let (r, u, f) = (self.right, self.up, self.forward);
        let a = self.aspect;
        let dir = match self.projection {
            Projection::Perspective { .. } => self.perspective_dir(s),
            Projection::Orthographic { width } => {
                let w = width as f64;
                let origin = self.position + s.x * w * 0.5 * r + s.y * w / (2.0 * a) * u;
                return Some((origin, f));
            }
            Projection::Cylindrical { fov } => {
                let theta = s.x * fov as f64 * 0.5;
                let h = s.y * fov as f64 * 0.5 / a;
                (theta.sin() * r + h * u + theta.cos() * f).normalize()
            }
            Projection::Equirectangular { fov } => {
                let theta = s.x * fov as f64 * 0.5;
                let phi = s.y * fov as f64 * 0.5 / a;
                if phi.abs() > std::f64::consts::FRAC_PI_2 {
                    return None;
                }
                phi.cos() * theta.sin() * r + phi.sin() * u + phi.cos() * theta.cos() * f
            }
            Projection::Fisheye {
                fov,
                mapping,
                circle,
            } => {
                let x = s.x * self.width as f64 * 0.5;
                let y = s.y * self.height as f64 * 0.5;
                let rho = (x * x + y * y).sqrt() / self.fisheye_radius(circle);
                if circle == FisheyeCircle::Circular && rho > 1.0 {
                    return None;
                }
                let alpha = fisheye_angle(mapping, fov as f64, rho)?;
                let psi = y.atan2(x);
                alpha.sin() * psi.cos() * r + alpha.sin() * psi.sin() * u + alpha.cos() * f
            }
        };
        Some((self.position, dir))
    }

    fn fisheye_radius(&self, circle: FisheyeCircle) -> f64 {
        let (w, h) = (self.width as f64, self.height as f64);
        match circle {
            FisheyeCircle::Circular => w.min(h) * 0.5,
            FisheyeCircle::FullFrame => (w * w + h * h).sqrt() * 0.5,
        }
    }

    /// The image point (pixels) where world point `p` appears, or None when
    /// the projection does not show it (behind a perspective camera, beyond
    /// a fisheye's field of view).
    pub fn project(&self, p: Vec3) -> Option<Vec2> {
        self.project_f64(p.as_dvec3()).map(|v| v.as_vec2())
    }

    /// [`Camera::project`] in f64.
    pub fn project_f64(&self, p: DVec3) -> Option<DVec2> {
        let rel = p - self.position;
        let (dx, dy, dz) = (rel.dot(self.right), rel.dot(self.up), rel.dot(self.forward));
        let a = self.aspect;
        let s = match self.projection {
            Projection::Perspective { .. } => {
                if dz <= 0.0 {
                    return None;
                }
                let t = self.tan_half_fov;
                DVec2::new(dx / dz / t, dy / dz / (t / a))
            }
            Projection::Orthographic { width } => {
                let w = width as f64;
                DVec2::new(dx / (w * 0.5), dy / (w / (2.0 * a)))
            }
            Projection::Cylindrical { fov } => {
                let theta = dx.atan2(dz);
                let h = dy / (dx * dx + dz * dz).sqrt();
                DVec2::new(theta / (fov as f64 * 0.5), h * a / (fov as f64 * 0.5))
            }
            Projection::Equirectangular { fov } => {
                let theta = dx.atan2(dz);
                // atan2 rather than asin: well conditioned near the poles.
                let phi = dy.atan2((dx * dx + dz * dz).sqrt());
                DVec2::new(theta / (fov as f64 * 0.5), phi * a / (fov as f64 * 0.5))
            }
            Projection::Fisheye {
                fov,
                mapping,
                circle,
            } => {
                // atan2 rather than acos: well conditioned near 0 and π.
                let alpha = (dx * dx + dy * dy).sqrt().atan2(dz);
                if alpha > fov as f64 * 0.5 + 1e-9 {
                    return None;
                }
                let rho = fisheye_radius_of(mapping, fov as f64, alpha);
                let psi = dy.atan2(dx);
                let big_r = self.fisheye_radius(circle);
                let x = rho * big_r * psi.cos();
                let y = rho * big_r * psi.sin();
                DVec2::new(
                    x / (self.width as f64 * 0.5),
                    y / (self.height as f64 * 0.5),
                )
            }
        };
        Some(self.to_pixel(s))
    }
}

/// Off-axis angle α for normalised image radius ρ (α = fov/2 at ρ = 1), or
/// None where the mapping has no angle (orthographic beyond 90°).
fn fisheye_angle(mapping: FisheyeMapping, fov: f64, rho: f64) -> Option<f64> {
    let alpha = match mapping {
        FisheyeMapping::Equidistant => rho * fov * 0.5,
        FisheyeMapping::Equisolid => {
            let v = rho * (fov * 0.25).sin();
            if v > 1.0 {
                return None;
            }
            2.0 * v.asin()
        }
        FisheyeMapping::Stereographic => 2.0 * (rho * (fov * 0.25).tan()).atan(),
        FisheyeMapping::Orthographic => {
            let v = rho * (fov * 0.5).sin();
            if v > 1.0 {
                return None;
            }
            v.asin()
        }
    };
    (alpha <= std::f64::consts::PI).then_some(alpha)
}

/// Normalised image radius ρ for off-axis angle α: the inverse of [`fisheye_angle`].
fn fisheye_radius_of(mapping: FisheyeMapping, fov: f64, alpha: f64) -> f64 {
    match mapping {
        FisheyeMapping::Equidistant => alpha / (fov * 0.5),
        FisheyeMapping::Equisolid => (alpha * 0.5).sin() / (fov * 0.25).sin(),
        FisheyeMapping::Stereographic => (alpha * 0.5).tan() / (fov * 0.25).tan(),
        FisheyeMapping::Orthographic => alpha.sin() / (fov * 0.5).sin(),
    }
}

#[cfg(test)]
mod tests;
