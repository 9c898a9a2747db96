//! The triangles of a BVH leaf, four at a time.
//!
//! A leaf holds at most four triangles, so its vertices are stored as one
//! packet, coordinate by coordinate with one lane per triangle, and one ray
//! is tested against all four with the same SIMD operations (glam's
//! `Vec4`). Each lane computes exactly what [`crate::ray::intersect_triangle`]
//! computes for its triangle, in the same order (the ray's shear, the three
//! edge functions, the determinant and t; no fused multiply-add), so a hit's
//! t and barycentrics are bit for bit those of the one-at-a-time test. A
//! lane whose edge functions come out exactly zero, where that test redoes
//! them in f64, goes to the one-at-a-time test with the same sheared
//! vertices.

use glam::{Vec3, Vec4};

use crate::ray::{hit_sheared, Ray};

/// Up to four triangles: coordinate `k` of vertex `v` of the triangle in
/// lane `l` is `corners[v][k][l]`. Lanes past the leaf's count repeat its
/// last triangle, so every lane holds finite numbers.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Packet {
    corners: [[Vec4; 3]; 3],
}

/// What a packet test finds: per lane, the hit's t and barycentrics, and
/// the lanes that hit within the given t_max.
#[derive(Debug, Clone, Copy)]
pub struct PacketHits {
    /// Ray parameter of each lane's hit.
    pub t: [f32; 4],
    /// Barycentric weight of each hit triangle's second vertex.
    pub u: [f32; 4],
    /// Barycentric weight of each hit triangle's third vertex.
    pub v: [f32; 4],
    /// Bit `l` is set where lane `l` hits.
    pub mask: u32,
}

impl Packet {
    /// The packet of `tris` (one to four triangles).
    pub fn new(tris: &[[Vec3; 3]]) -> Packet {
        assert!(
            (1..=4).contains(&tris.len()),
            "a packet holds one to four triangles"
        );
        let lane = |l: usize| tris[l.min(tris.len() - 1)];
        let coord = |v: usize, k: usize| Vec4::from_array([0, 1, 2, 3].map(|l| lane(l)[v][k]));
        Packet {
            corners: [0, 1, 2].map(|v| [0, 1, 2].map(|k| coord(v, k))),
        }
    }

    /// The three vertices of the triangle in lane `l`.
    pub(crate) fn triangle(&self, l: usize) -> [Vec3; 3] {
        self.corners
            .map(|c| Vec3::new(c[0].to_array()[l], c[1].to_array()[l], c[2].to_array()[l]))
    }

    /// Tests `ray` against the first `count` lanes: the watertight test of
    /// [`crate::ray::intersect_triangle`] with t in (0, t_max], lane by lane.
    #[inline(always)]
    pub fn hits(&self, ray: &Ray, t_max: f32, count: usize) -> PacketHits {
        let (s, _) = ray.shear();
        let [kx, ky, kz] = ray.axes();
        let o = [0, 1, 2].map(|k| Vec4::splat(ray.origin[k]));
        let (sx, sy, sz) = (Vec4::splat(s.x), Vec4::splat(s.y), Vec4::splat(s.z));
        // Each vertex moved into the ray's frame, as `ray::shear` does.
        let sheared = |c: &[Vec4; 3]| {
            let (x, y, z) = (c[kx] - o[kx], c[ky] - o[ky], c[kz] - o[kz]);
            [x - sx * z, y - sy * z, sz * z]
        };
        let a = sheared(&self.corners[0]);
        let b = sheared(&self.corners[1]);
        let c = sheared(&self.corners[2]);
        let [ax, ay, az] = a;
        let [bx, by, bz] = b;
        let [cx, cy, cz] = c;
        let u = cx * by - cy * bx;
        let v = ax * cy - ay * cx;
        let w = bx * ay - by * ax;
        let lanes = (1u32 << count) - 1;
        let zero = Vec4::ZERO;
        let exact_zero = (u.cmpeq(zero) | v.cmpeq(zero) | w.cmpeq(zero)).bitmask() & lanes;
        let negative = u.cmplt(zero) | v.cmplt(zero) | w.cmplt(zero);
        let positive = u.cmpgt(zero) | v.cmpgt(zero) | w.cmpgt(zero);
        let det = u + v + w;
        let t = u * az + v * bz + w * cz;
        let inv = Vec4::ONE / det;
        let t = t * inv;
        let in_range = t.cmpgt(zero) & t.cmple(Vec4::splat(t_max));
        let inside = !(negative & positive);
        let mut out = PacketHits {
            t: t.to_array(),
            u: (v * inv).to_array(),
            v: (w * inv).to_array(),
            mask: (in_range & inside).bitmask() & lanes & !exact_zero,
        };
        // Lanes with an exactly zero edge function: the one-at-a-time test,
        // which redoes them in f64.
        let mut redo = exact_zero;
        while redo != 0 {
            let l = redo.trailing_zeros() as usize;
            redo &= redo - 1;
            let lane = |p: [Vec4; 3]| p.map(|q| q.to_array()[l]);
            if let Some((t, u, v)) = hit_sheared(lane(a), lane(b), lane(c), t_max) {
                (out.t[l], out.u[l], out.v[l]) = (t, u, v);
                out.mask |= 1 << l;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ray::intersect_triangle;

    #[test]
    fn packet_is_144_bytes() {
        assert_eq!(std::mem::size_of::<Packet>(), 144);
    }

    /// Lane `l` of `got` as the one-at-a-time test's answer, in bits.
    fn lane_bits(got: &PacketHits, l: usize) -> Option<[u32; 3]> {
        (got.mask >> l & 1 == 1).then(|| [got.t[l], got.u[l], got.v[l]].map(f32::to_bits))
    }

    fn single_bits(ray: &Ray, [a, b, c]: [Vec3; 3], t_max: f32) -> Option<[u32; 3]> {
        intersect_triangle(ray, a, b, c, t_max).map(|(t, u, v)| [t, u, v].map(f32::to_bits))
    }

    /// Every lane gives bit for bit what the one-at-a-time test gives, on
    /// random triangles and rays, with one to four lanes in use.
    #[test]
    fn lanes_match_the_single_test() {
        let r = |k: u64, s: u64| crate::hash::unit_f32(k, s, 7) * 4.0 - 2.0;
        let mut hits = 0;
        for k in 0..20_000u64 {
            let v = |i: u64| Vec3::new(r(k, 3 * i), r(k, 3 * i + 1), r(k, 3 * i + 2));
            let mut tris = [
                [v(0), v(1), v(2)],
                [v(3), v(4), v(5)],
                [v(0), v(2), v(6)],
                [v(7), v(8), v(9)],
            ];
            if k % 16 == 1 {
                tris[1] = [Vec3::ZERO; 3]; // degenerate
            }
            let origin = Vec3::new(r(k, 40), 3.0 + r(k, 41), r(k, 42));
            // Half the rays aim inside one of the triangles.
            let dir = if k % 2 == 0 {
                let [a, b, c] = tris[(k / 2 % 4) as usize];
                let (s, t) = ((r(k, 45) + 2.0) / 8.0, (r(k, 46) + 2.0) / 8.0);
                (a + (b - a) * s + (c - a) * t - origin).normalize()
            } else {
                Vec3::new(r(k, 43), -2.5, r(k, 44)).normalize()
            };
            let ray = Ray::new(origin, dir);
            // A t_max exactly at the first triangle's hit (a tie with the
            // best hit so far) keeps that hit.
            let first_hit = intersect_triangle(&ray, tris[0][0], tris[0][1], tris[0][2], 1e30);
            let t_max = match (k % 3, first_hit) {
                (0, _) => 2.5,
                (1, Some((t, _, _))) => t,
                _ => f32::INFINITY,
            };
            let count = 1 + (k % 4) as usize;
            let packet = Packet::new(&tris[..count]);
            let got = packet.hits(&ray, t_max, count);
            for (l, &tri) in tris.iter().enumerate().take(count) {
                assert_eq!(packet.triangle(l), tri);
                let expect = single_bits(&ray, tri, t_max);
                assert_eq!(lane_bits(&got, l), expect, "case {k}, lane {l}");
                hits += expect.is_some() as usize;
            }
            assert_eq!(got.mask >> count, 0, "lanes past the count never hit");
        }
        assert!(hits > 5000, "{hits} hits");
    }

    /// Rays straight down through the vertices and edges of lattice
    /// triangles: edge functions come out exactly zero, and the lanes take
    /// the f64 fallback as the one-at-a-time test does.
    #[test]
    fn exact_zero_edges_match_the_single_test() {
        let q = |k: u64, s: u64| (crate::hash::unit_f32(k, s, 9) * 8.0).floor() * 0.25;
        let mut hits = 0;
        for k in 0..4000u64 {
            let v = |i: u64| Vec3::new(q(k, 3 * i), q(k, 3 * i + 1) - 1.0, q(k, 3 * i + 2));
            let tris = [0, 1, 2, 3].map(|t| [v(3 * t), v(3 * t + 1), v(3 * t + 2)]);
            let origin = Vec3::new(q(k, 50), 4.0, q(k, 51));
            let dir = if k % 2 == 0 {
                Vec3::NEG_Y
            } else {
                Vec3::new(0.0, -1.0, 0.0).lerp(Vec3::X, 0.5 * (k % 3) as f32)
            };
            let ray = Ray::new(origin, dir);
            let packet = Packet::new(&tris);
            let got = packet.hits(&ray, f32::INFINITY, 4);
            for (l, &tri) in tris.iter().enumerate() {
                let expect = single_bits(&ray, tri, f32::INFINITY);
                assert_eq!(lane_bits(&got, l), expect, "case {k}, lane {l}");
                hits += expect.is_some() as usize;
            }
        }
        assert!(hits > 500, "{hits} hits");
    }
}
