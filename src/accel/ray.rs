//! Rays, axis-aligned boxes and the ray–triangle test.

use glam::Vec3;

/// A ray with its precomputed reciprocal direction.
#[derive(Debug, Clone, Copy)]
pub struct Ray {
    /// Origin, world units.
    pub origin: Vec3,
    /// Direction (unit length for primary and shadow rays).
    pub dir: Vec3,
    /// 1 / dir per component (±∞ where a component is zero).
    pub inv_dir: Vec3,
}

impl Ray {
    /// A ray from `origin` along `dir`.
    #[inline]
    pub fn new(origin: Vec3, dir: Vec3) -> Ray {
        Ray {
            origin,
            dir,
            inv_dir: dir.recip(),
        }
    }

    /// The point at parameter `t`.
    #[inline]
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + self.dir * t
    }
}

/// An axis-aligned bounding box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: Vec3,
    /// Upper corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box (grows from nothing).
    pub const EMPTY: Aabb = Aabb {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    /// The box grown to contain `p`.
    #[inline]
    pub fn grow(self, p: Vec3) -> Aabb {
        Aabb {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// The union of two boxes.
    #[inline]
    pub fn union(self, o: Aabb) -> Aabb {
        Aabb {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }

    /// Half the surface area (the SAH only needs ratios); 0 when empty.
    #[inline]
    pub fn half_area(&self) -> f32 {
        let d = self.max - self.min;
        if d.x < 0.0 {
            0.0
        } else {
            d.x * d.y + d.y * d.z + d.z * d.x
        }
    }

    /// Entry distance of `ray` into the box within [0, t_max], or None.
    ///
    /// A ray parallel to a slab whose origin lies in the slab's face plane
    /// computes 0 · ∞ = NaN there; the comparisons are written so that a NaN
    /// never narrows the interval (as in pbrt's `Bounds3::IntersectP`).
    #[inline]
    pub fn hit(&self, ray: &Ray, t_max: f32) -> Option<f32> {
        let t1 = (self.min - ray.origin) * ray.inv_dir;
        let t2 = (self.max - ray.origin) * ray.inv_dir;
        let mut t_near = 0.0f32;
        let mut t_far = t_max;
        for axis in 0..3 {
            let (mut a, mut b) = (t1[axis], t2[axis]);
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            t_near = if a > t_near { a } else { t_near };
            t_far = if b < t_far { b } else { t_far };
        }
        (t_near <= t_far).then_some(t_near)
    }
}

/// Möller–Trumbore ray–triangle test: `(t, u, v)` of a hit with
/// 0 < t < t_max, where the hit point is a + u·(b − a) + v·(c − a).
#[inline]
pub fn intersect_triangle(
    origin: Vec3,
    dir: Vec3,
    a: Vec3,
    b: Vec3,
    c: Vec3,
    t_max: f32,
) -> Option<(f32, f32, f32)> {
    intersect_edges(origin, dir, a, b - a, c - a, t_max)
}

/// [`intersect_triangle`] with precomputed edges e1 = b − a, e2 = c − a.
#[inline]
pub fn intersect_edges(
    origin: Vec3,
    dir: Vec3,
    a: Vec3,
    e1: Vec3,
    e2: Vec3,
    t_max: f32,
) -> Option<(f32, f32, f32)> {
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-12 {
        return None; // parallel or degenerate
    }
    let inv = 1.0 / det;
    let s = origin - a;
    let u = s.dot(p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(e1);
    let v = dir.dot(q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(q) * inv;
    (t > 0.0 && t < t_max).then_some((t, u, v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_hit_values() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Z);
        let hit = intersect_triangle(Vec3::new(0.25, 2.0, 0.5), Vec3::NEG_Y, a, b, c, 10.0);
        assert_eq!(hit, Some((2.0, 0.25, 0.5)));
        assert_eq!(
            intersect_triangle(Vec3::new(0.75, 2.0, 0.5), Vec3::NEG_Y, a, b, c, 10.0),
            None
        );
        assert_eq!(
            intersect_triangle(Vec3::new(0.25, 2.0, 0.5), Vec3::NEG_Y, a, b, c, 1.5),
            None
        );
        assert_eq!(
            intersect_triangle(Vec3::new(0.25, 2.0, 0.5), Vec3::X, a, b, c, 10.0),
            None
        );
    }

    #[test]
    fn box_hit_from_outside_inside_and_parallel() {
        let b = Aabb {
            min: Vec3::splat(-1.0),
            max: Vec3::splat(1.0),
        };
        assert_eq!(
            b.hit(&Ray::new(Vec3::new(-3.0, 0.0, 0.0), Vec3::X), 10.0),
            Some(2.0)
        );
        assert_eq!(b.hit(&Ray::new(Vec3::ZERO, Vec3::X), 10.0), Some(0.0));
        assert_eq!(
            b.hit(&Ray::new(Vec3::new(-3.0, 2.0, 0.0), Vec3::X), 10.0),
            None
        );
        assert_eq!(
            b.hit(&Ray::new(Vec3::new(-3.0, 0.0, 0.0), Vec3::NEG_X), 10.0),
            None
        );
        assert_eq!(
            b.hit(&Ray::new(Vec3::new(-3.0, 0.0, 0.0), Vec3::X), 1.0),
            None
        );
    }

    /// Regression: an axis-parallel ray whose origin lies in the plane of a
    /// box face used to compute 0 · ∞ = NaN and miss (grid lines of sky in
    /// orthographic top views).
    #[test]
    fn axis_parallel_ray_on_a_face_plane_hits() {
        let b = Aabb {
            min: Vec3::new(0.0, -1.0, 0.0),
            max: Vec3::new(1.0, 0.0, 1.0),
        };
        assert_eq!(
            b.hit(&Ray::new(Vec3::new(0.0, 5.0, 0.5), Vec3::NEG_Y), 10.0),
            Some(5.0)
        );
        assert_eq!(
            b.hit(&Ray::new(Vec3::new(1.0, 5.0, 1.0), Vec3::NEG_Y), 10.0),
            Some(5.0)
        );
        assert_eq!(
            b.hit(&Ray::new(Vec3::new(1.5, 5.0, 0.5), Vec3::NEG_Y), 10.0),
            None
        );
    }
}
