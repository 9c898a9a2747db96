//! Exact ray–ellipsoid intersection for undisplaced rocks.
//!
//! The ray is taken into the rock's object space, where the rock is the unit
//! sphere, and solved there in f64 with the numerically robust form of
//! Haines et al. ("Precision Improvements for Ray/Sphere Intersection", Ray
//! Tracing Gems, 2019): the discriminant is computed from the distance of
//! the sphere's centre to the ray's line, not from b² − 4ac, so rays from far
//! away do not lose the hit to cancellation.

use glam::{Affine3A, DVec3, Vec3};

use super::Placement;
use crate::ray::{Aabb, Ray};

/// An ellipsoid traced exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AnalyticRock {
    /// Its placement.
    pub place: Placement,
    object_from_world: Affine3A,
    /// Index of its material in the world's list.
    pub material: u16,
}

impl AnalyticRock {
    /// An ellipsoid at `place` with material `material`.
    pub fn new(place: Placement, material: u16) -> AnalyticRock {
        AnalyticRock {
            place,
            object_from_world: place.world_from_object().inverse(),
            material,
        }
    }

    /// World space to the rock's own (unit-sphere) space.
    #[inline]
    pub fn object_from_world(&self) -> Affine3A {
        self.object_from_world
    }

    /// World bounds.
    pub fn bounds(&self) -> Aabb {
        let r = Vec3::splat(self.place.bounding_radius(0.0));
        Aabb {
            min: self.place.center - r,
            max: self.place.center + r,
        }
    }

    /// Ray parameter of the nearest hit in (t_min, t_max), if any.
    pub fn intersect(&self, ray: &Ray, t_min: f32, t_max: f32) -> Option<f32> {
        let o = self
            .object_from_world
            .transform_point3(ray.origin)
            .as_dvec3();
        let d = self.object_from_world.transform_vector3(ray.dir).as_dvec3();
        let (t0, t1) = unit_sphere_hits(o, d)?;
        [t0, t1]
            .into_iter()
            .map(|t| t as f32)
            .find(|&t| t > t_min && t < t_max)
    }

    /// Unit outward normal at world point `p` on the surface.
    pub fn normal(&self, p: Vec3) -> Vec3 {
        let u = self.object_from_world.transform_point3(p);
        self.place.normal_at(u.normalize_or(Vec3::Y))
    }
}

/// Both parameters (t0 ≤ t1) where o + t·d meets the unit sphere at the
/// origin, or None when the line misses it.
pub fn unit_sphere_hits(o: DVec3, d: DVec3) -> Option<(f64, f64)> {
    let a = d.length_squared();
    if a == 0.0 {
        return None;
    }
    let b = -o.dot(d); // half of −B
                       // Distance² of the centre to the line: |o + (b/a)·d|².
    let closest = o + d * (b / a);
    let disc = a * (1.0 - closest.length_squared());
    if disc < 0.0 {
        return None;
    }
    let c = o.length_squared() - 1.0;
    let q = b + b.signum() * disc.sqrt();
    let (t0, t1) = if q == 0.0 {
        (0.0, 0.0)
    } else {
        let (x, y) = (c / q, q / a);
        (x.min(y), x.max(y))
    };
    Some((t0, t1))
}
