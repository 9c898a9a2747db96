//! Rays, axis-aligned boxes and the ray–triangle test.

use glam::{Vec3, Vec3A, Vec4};

use crate::simd4::Vec3x4;

/// A ray with its precomputed reciprocal direction and the shear of the
/// watertight ray–triangle test. Laid out in C order, so that the AVX2
/// lanes can read eight rays' first eight floats (origin, direction, and
/// x and y of the reciprocal) as vectors.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Ray {
    /// Origin, world units.
    pub origin: Vec3,
    /// Direction (unit length for primary and shadow rays).
    pub dir: Vec3,
    /// 1 / dir per component (±∞ where a component is zero).
    pub inv_dir: Vec3,
    /// Shear (S_x, S_y, S_z) that maps the direction onto the +z axis of
    /// the permuted frame (Woop, Benthin and Wald 2013).
    shear: Vec3,
    /// The dominant axis of `dir`, which becomes the permuted z axis.
    kz: u8,
}

impl Ray {
    /// A ray from `origin` along `dir`.
    #[inline]
    pub fn new(origin: Vec3, dir: Vec3) -> Ray {
        let a = dir.abs();
        // The dominant axis kz, and the shear's numerators: the next two
        // axes cyclically ([`axes`]), then 1. Two 4-wide divisions rather
        // than six scalar ones, with the same results lane by lane.
        let (kz, top, bottom) = if a.x >= a.y && a.x >= a.z {
            (0, Vec3A::new(dir.y, dir.z, 1.0), dir.x)
        } else if a.y >= a.z {
            (1, Vec3A::new(dir.z, dir.x, 1.0), dir.y)
        } else {
            (2, Vec3A::new(dir.x, dir.y, 1.0), dir.z)
        };
        let shear = Vec3::from(top / Vec3A::splat(bottom));
        Ray {
            origin,
            dir,
            inv_dir: Vec3::from(Vec3A::from(dir).recip()),
            shear,
            kz: kz as u8,
        }
    }

    /// Appends `Ray::new(origin(k), dirs[k])` for each k, bit for bit the
    /// same rays, set up four at a time quantity by quantity: the
    /// reciprocals and the shear's divisions of four rays are then one
    /// SSE division each, where ray by ray each waits on the divider.
    pub fn extend_new(out: &mut Vec<Ray>, origin: impl Fn(usize) -> Vec3, dirs: &[Vec3]) {
        out.reserve(dirs.len());
        for (c, chunk) in dirs.chunks(4).enumerate() {
            // The last chunk padded with ones (their rays are not kept).
            let Vec3x4 { x, y, z } = Vec3x4::from_slice(chunk, Vec3::ONE);
            // As `new`: the dominant axis, the shear's numerators (the
            // next two axes cyclically) and its denominator.
            let (ax, ay, az) = (x.abs(), y.abs(), z.abs());
            let on_x = ax.cmpge(ay) & ax.cmpge(az);
            let on_y = !on_x & ay.cmpge(az);
            let pick = |if_x: Vec4, if_y: Vec4, if_z: Vec4| {
                Vec4::select(on_x, if_x, Vec4::select(on_y, if_y, if_z))
            };
            let (n0, n1, den) = (pick(y, z, x), pick(z, x, y), pick(x, y, z));
            let inv = [Vec4::ONE / x, Vec4::ONE / y, Vec4::ONE / z].map(|v| v.to_array());
            let shear = [n0 / den, n1 / den, Vec4::ONE / den].map(|v| v.to_array());
            let (on_x, on_y) = (on_x.bitmask(), on_y.bitmask());
            out.extend(chunk.iter().enumerate().map(|(k, &dir)| Ray {
                origin: origin(c * 4 + k),
                dir,
                inv_dir: Vec3::new(inv[0][k], inv[1][k], inv[2][k]),
                shear: Vec3::new(shear[0][k], shear[1][k], shear[2][k]),
                kz: if on_x & (1 << k) != 0 {
                    0
                } else if on_y & (1 << k) != 0 {
                    1
                } else {
                    2
                },
            }));
        }
    }

    /// Every field of the ray, as bits (for tests that check two ways of
    /// setting rays up give the same ones).
    #[cfg(test)]
    pub(crate) fn bits(&self) -> ([u32; 12], u8) {
        let v = [self.origin, self.dir, self.inv_dir, self.shear];
        (std::array::from_fn(|k| v[k / 3][k % 3].to_bits()), self.kz)
    }

    /// This ray moved to start at `origin` (the same direction, so the same
    /// reciprocal and shear): `Ray::new(origin, self.dir)` without its
    /// divisions, for the many rays toward one light.
    #[inline]
    pub fn from_origin(&self, origin: Vec3) -> Ray {
        Ray { origin, ..*self }
    }

    /// The shear of the watertight test and its dominant axis (0, 1, 2 for
    /// x, y, z).
    #[inline]
    pub(crate) fn shear(&self) -> (Vec3, u8) {
        (self.shear, self.kz)
    }

    /// The axes of the watertight test's permuted frame: the world axes
    /// that become its x, y and z (z the dominant one).
    #[inline]
    pub(crate) fn axes(&self) -> [usize; 3] {
        axes(self.kz as usize)
    }

    /// The point at parameter `t`.
    #[inline]
    pub fn at(&self, t: f32) -> Vec3 {
        self.origin + self.dir * t
    }
}

/// The permuted frame's axes for dominant axis `kz`: the next two axes
/// cyclically, then `kz`.
#[inline(always)]
fn axes(kz: usize) -> [usize; 3] {
    [(kz + 1) % 3, (kz + 2) % 3, kz]
}

/// 1 + 2γ₃ with γₙ = nε/(1 − nε) and ε = 2⁻²⁴: the factor that makes a
/// slab test conservative under f32 rounding.
pub(crate) const ROBUST_FAR: f32 =
    1.0 + 2.0 * (3.0 * f32::EPSILON * 0.5) / (1.0 - 3.0 * f32::EPSILON * 0.5);

/// Boxes are culled only when they start beyond the best hit by more than
/// this factor: a triangle's computed hit distance can round below the
/// computed entry of a box it lies on the face of (a flat patch seen
/// straight on), and a tie there must still be tested.
pub(crate) const CULL_SLACK: f32 = 1.0 + 1e-5;

/// How wide a camera's pixel is where it sees a point at distance `d`
/// from a ray's origin: `width + spread · d` world units (a pinhole's
/// width is 0, an orthographic view's spread is 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// Width at the origin, world units.
    pub width: f32,
    /// Growth with distance: the pixel's angle, radians.
    pub spread: f32,
}

impl Footprint {
    /// The width at distance `d`.
    #[inline]
    pub fn at(&self, d: f32) -> f32 {
        self.width + self.spread * d
    }

    /// This footprint made `k` times as wide.
    pub fn times(&self, k: f32) -> Footprint {
        Footprint {
            width: self.width * k,
            spread: self.spread * k,
        }
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

    /// The interval of `ray` inside the box, clipped to [0, t_max] (widened
    /// by the cull slack), or None.
    ///
    /// A ray parallel to a slab whose origin lies in the slab's face plane
    /// computes 0 · ∞ = NaN there; the comparisons are written so that a NaN
    /// never narrows the interval (as in pbrt's `Bounds3::IntersectP`). The
    /// far distance is widened by 2γ₃ (Ize 2013, as pbrt does) so that
    /// rounding never culls a box a triangle inside it is hit in.
    #[inline]
    pub fn interval(&self, ray: &Ray, t_max: f32) -> Option<(f32, f32)> {
        let t1 = (self.min - ray.origin) * ray.inv_dir;
        let t2 = (self.max - ray.origin) * ray.inv_dir;
        let mut t_near = 0.0f32;
        let mut t_far = t_max * CULL_SLACK;
        for axis in 0..3 {
            let (mut a, mut b) = (t1[axis], t2[axis]);
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            let b = b * ROBUST_FAR;
            t_near = if a > t_near { a } else { t_near };
            t_far = if b < t_far { b } else { t_far };
        }
        (t_near <= t_far).then_some((t_near, t_far))
    }

    /// Entry distance of `ray` into the box within [0, t_max] (widened by
    /// the cull slack), or None.
    #[inline]
    pub fn hit(&self, ray: &Ray, t_max: f32) -> Option<f32> {
        self.interval(ray, t_max).map(|(t_near, _)| t_near)
    }
}

/// Watertight ray–triangle test (Woop, Benthin and Wald, "Watertight
/// ray/triangle intersection", JCGT 2013): `(t, u, v)` of a hit with
/// 0 < t ≤ t_max, where the hit point is (1 − u − v)·a + u·b + v·c.
///
/// The vertices are translated to the ray origin and sheared so that the
/// ray runs along +z; the three 2D edge functions then decide the hit, and
/// an edge shared by two triangles gives both the same edge function, so a
/// ray never slips through the crack between them. Edge functions that
/// round to exactly zero are recomputed in f64. Both windings hit.
#[inline]
pub fn intersect_triangle(
    ray: &Ray,
    a: Vec3,
    b: Vec3,
    c: Vec3,
    t_max: f32,
) -> Option<(f32, f32, f32)> {
    let [a, b, c] = shear_vertices(ray, [a, b, c]);
    hit_sheared(a, b, c, t_max)
}

/// Vertices moved into the ray's frame of the watertight test: translated
/// to the origin, permuted so that the dominant axis is z, and sheared so
/// that the ray runs along +z; z is left scaled by S_z. Vertices shared by
/// several triangles (a terrain cell's two) are moved once.
#[inline(always)]
pub(crate) fn shear_vertices<const N: usize>(ray: &Ray, points: [Vec3; N]) -> [[f32; 3]; N] {
    match ray.kz {
        0 => points.map(|p| shear::<1, 2, 0>(ray, p)),
        1 => points.map(|p| shear::<2, 0, 1>(ray, p)),
        _ => points.map(|p| shear::<0, 1, 2>(ray, p)),
    }
}

/// One vertex of [`shear_vertices`], the axis permutation fixed at compile
/// time. Swapping x and y for a negative dominant direction (as the paper
/// does) only flips the sign of every edge function; both signs are
/// accepted by [`hit_sheared`], so the swap is left out.
#[inline(always)]
fn shear<const KX: usize, const KY: usize, const KZ: usize>(ray: &Ray, p: Vec3) -> [f32; 3] {
    let o = ray.origin.to_array();
    let s = ray.shear;
    let p = p.to_array();
    let a = [p[0] - o[0], p[1] - o[1], p[2] - o[2]];
    [a[KX] - s.x * a[KZ], a[KY] - s.y * a[KZ], s.z * a[KZ]]
}

/// The watertight test on the triangle of sheared vertices `a`, `b`, `c`
/// ([`shear_vertices`]).
#[inline(always)]
pub(crate) fn hit_sheared(
    [ax, ay, az]: [f32; 3],
    [bx, by, bz]: [f32; 3],
    [cx, cy, cz]: [f32; 3],
    t_max: f32,
) -> Option<(f32, f32, f32)> {
    let mut u = cx * by - cy * bx;
    let mut v = ax * cy - ay * cx;
    let mut w = bx * ay - by * ax;
    if u == 0.0 || v == 0.0 || w == 0.0 {
        let f = |p: f32, q: f32, r: f32, s: f32| (p as f64 * q as f64 - r as f64 * s as f64) as f32;
        u = f(cx, by, cy, bx);
        v = f(ax, cy, ay, cx);
        w = f(bx, ay, by, ax);
    }
    if (u < 0.0 || v < 0.0 || w < 0.0) && (u > 0.0 || v > 0.0 || w > 0.0) {
        return None;
    }
    let det = u + v + w;
    let t = u * az + v * bz + w * cz;
    // t must lie in (0, t_max]. Compared after the division, so that a hit
    // at exactly t_max (a tie with the best hit so far) is kept; written so
    // that a NaN (a zero direction) never hits.
    let inv = 1.0 / det;
    let t = t * inv;
    if !(t > 0.0 && t <= t_max) {
        return None;
    }
    Some((t, v * inv, w * inv))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `Ray::extend_new` against `Ray::new` ray by ray, bit for bit.
    fn check_extend_new(dirs: &[Vec3]) {
        let origin = |k: usize| Vec3::new(k as f32, -(k as f32), 0.5);
        let mut together = vec![Ray::new(Vec3::ONE, Vec3::X)];
        Ray::extend_new(&mut together, origin, dirs);
        assert_eq!(
            together.len(),
            dirs.len() + 1,
            "appends one ray a direction"
        );
        for (k, (r, &d)) in together[1..].iter().zip(dirs).enumerate() {
            assert_eq!(r.bits(), Ray::new(origin(k), d).bits(), "ray {k} along {d}");
        }
    }

    #[test]
    fn rays_set_up_together_match_one_at_a_time_on_edge_cases() {
        // Zero and signed-zero components, ties between axes (the dominant
        // axis' order of preference), and a ragged last chunk.
        let dirs = [
            Vec3::X,
            Vec3::NEG_Y,
            Vec3::Z,
            Vec3::ZERO,
            Vec3::new(-0.0, 0.0, -0.0),
            Vec3::new(1.0, 1.0, 0.5),
            Vec3::new(1.0, -1.0, 1.0),
            Vec3::new(0.5, -2.0, 2.0),
            Vec3::new(-3.0, 0.0, 3.0),
            Vec3::new(1e-30, -1e30, 7.0),
            Vec3::new(0.3, 0.4, -0.5).normalize(),
        ];
        for n in 0..=dirs.len() {
            check_extend_new(&dirs[..n]);
        }
    }

    proptest! {
        #[test]
        fn rays_set_up_together_match_one_at_a_time(
            dirs in proptest::collection::vec(proptest::array::uniform3(-10.0f32..10.0), 0..40)
        ) {
            let dirs: Vec<Vec3> = dirs.into_iter().map(Vec3::from_array).collect();
            check_extend_new(&dirs);
        }
    }

    #[test]
    fn triangle_hit_values() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Z);
        let down = |x: f32, z: f32| Ray::new(Vec3::new(x, 2.0, z), Vec3::NEG_Y);
        let hit = intersect_triangle(&down(0.25, 0.5), a, b, c, 10.0);
        assert_eq!(hit, Some((2.0, 0.25, 0.5)));
        assert_eq!(intersect_triangle(&down(0.75, 0.5), a, b, c, 10.0), None);
        assert_eq!(intersect_triangle(&down(0.25, 0.5), a, b, c, 1.5), None);
        assert_eq!(
            intersect_triangle(&Ray::new(Vec3::new(0.25, 2.0, 0.5), Vec3::X), a, b, c, 10.0),
            None
        );
    }

    #[test]
    fn triangle_hit_from_below_and_along_each_dominant_axis() {
        let (a, b, c) = (Vec3::ZERO, Vec3::X, Vec3::Z);
        let up = Ray::new(Vec3::new(0.25, -3.0, 0.5), Vec3::Y);
        assert_eq!(
            intersect_triangle(&up, a, b, c, 10.0),
            Some((3.0, 0.25, 0.5))
        );
        // The same triangle stood up in each axis plane, hit along the normal.
        let hits = [
            (
                Vec3::new(0.0, 0.25, 0.5),
                Vec3::new(-2.0, 0.25, 0.5),
                Vec3::X,
            ),
            (
                Vec3::new(0.25, 0.0, 0.5),
                Vec3::new(0.25, 4.0, 0.5),
                Vec3::NEG_Y,
            ),
            (
                Vec3::new(0.25, 0.5, 0.0),
                Vec3::new(0.25, 0.5, -1.0),
                Vec3::Z,
            ),
        ];
        for (k, (_, origin, dir)) in hits.iter().enumerate() {
            let perm = |p: Vec3| match k {
                0 => Vec3::new(p.y, p.x, p.z),
                1 => p,
                _ => Vec3::new(p.x, p.z, p.y),
            };
            let ray = Ray::new(*origin, *dir);
            let hit = intersect_triangle(&ray, perm(a), perm(b), perm(c), 10.0);
            let (t, u, v) = hit.expect("hit");
            let expected_t = [2.0, 4.0, 1.0][k];
            assert!((t - expected_t).abs() < 1e-6, "axis {k}: t = {t}");
            assert!(
                (u - 0.25).abs() < 1e-6 && (v - 0.5).abs() < 1e-6,
                "axis {k}: {u} {v}"
            );
        }
    }

    proptest::proptest! {
        /// Rays aimed at the shared vertex or a shared edge of a closed fan
        /// of triangles always hit one of them: no cracks. (The fan is
        /// flatter than the rays are steep, so every ray crosses it.)
        #[test]
        fn watertight_on_shared_edges_and_vertices(
            ox in -10.0f32..10.0, oy in 4.0f32..10.0, oz in -10.0f32..10.0,
            px in -1.0f32..1.0, pz in -1.0f32..1.0, py in -0.5f32..0.5,
            n in 3usize..9, phase in 0.0f32..6.0, along in 0.0f32..0.9,
            heights in proptest::collection::vec(-0.05f32..0.05, 9),
        ) {
            let centre = Vec3::new(px, py, pz);
            let rim: Vec<Vec3> = (0..n)
                .map(|k| {
                    let a = phase + k as f32 * std::f32::consts::TAU / n as f32;
                    centre + Vec3::new(a.cos(), heights[k], a.sin())
                })
                .collect();
            let origin = Vec3::new(ox, oy, oz);
            for target in [centre, centre.lerp(rim[0], along)] {
                let ray = Ray::new(origin, (target - origin).normalize());
                let hit = (0..n).any(|k| {
                    intersect_triangle(&ray, centre, rim[k], rim[(k + 1) % n], f32::INFINITY)
                        .is_some()
                });
                proptest::prop_assert!(hit, "ray slipped through at {target}");
            }
        }
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
