//! Four vectors at once, one per SSE lane (x, y and z each a glam `Vec4`):
//! the normalisations that setting up camera rays needs for many
//! directions in a row. Each lane gets exactly what
//! glam's `Vec3` gives on its own (the same operations in the same order,
//! and a vector square root or division is exact lane by lane, as the
//! scalar ones are), so batched and one-at-a-time results agree bit for
//! bit; one at a time, each square root and division waits on the last.

use glam::{Vec3, Vec4};

/// x, y and z of four vectors, lane k holding vector k.
#[derive(Debug, Clone, Copy)]
pub struct Vec3x4 {
    /// The x coordinates.
    pub x: Vec4,
    /// The y coordinates.
    pub y: Vec4,
    /// The z coordinates.
    pub z: Vec4,
}

impl Vec3x4 {
    /// The vectors of `v` (at most four), `v[k]` in lane k; lanes past
    /// the end hold `pad`.
    #[inline]
    pub fn from_slice(v: &[Vec3], pad: Vec3) -> Vec3x4 {
        debug_assert!(v.len() <= 4);
        let at = |k: usize| v.get(k).copied().unwrap_or(pad);
        let lanes = |f: fn(Vec3) -> f32| Vec4::from_array(std::array::from_fn(|k| f(at(k))));
        Vec3x4 {
            x: lanes(|v| v.x),
            y: lanes(|v| v.y),
            z: lanes(|v| v.z),
        }
    }

    /// The vector in lane `k`.
    #[inline]
    pub fn lane(&self, k: usize) -> Vec3 {
        Vec3::new(self.x[k], self.y[k], self.z[k])
    }

    /// Lane by lane `Vec3::length_recip`: 1 / √(x² + y² + z²).
    #[inline]
    fn length_recip(self) -> Vec4 {
        let squared = self.x * self.x + self.y * self.y + self.z * self.z;
        Vec4::ONE / sqrt(squared)
    }

    /// Lane by lane `Vec3::normalize`: times the reciprocal length.
    #[inline]
    pub fn normalize(self) -> Vec3x4 {
        self.scale(self.length_recip())
    }

    /// Each lane times its own factor.
    #[inline]
    fn scale(self, s: Vec4) -> Vec3x4 {
        Vec3x4 {
            x: self.x * s,
            y: self.y * s,
            z: self.z * s,
        }
    }
}

/// Square roots of four lanes: one SSE instruction.
#[inline]
fn sqrt(v: Vec4) -> Vec4 {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: SSE is part of x86_64.
    let root = Vec4::from(unsafe { std::arch::x86_64::_mm_sqrt_ps(v.into()) });
    #[cfg(not(target_arch = "x86_64"))]
    let root = Vec4::from_array(v.to_array().map(f32::sqrt));
    root
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bits(v: Vec3) -> [u32; 3] {
        v.to_array().map(f32::to_bits)
    }

    proptest! {
        #[test]
        fn four_lanes_match_vec3_one_at_a_time(
            a in proptest::array::uniform4(proptest::array::uniform3(-1e3f32..1e3)),
            b in proptest::array::uniform4(proptest::array::uniform3(-1e3f32..1e3)),
        ) {
            let (a, b) = (a.map(Vec3::from_array), b.map(Vec3::from_array));
            let (va, vb) = (Vec3x4::from_slice(&a, Vec3::ZERO), Vec3x4::from_slice(&b, Vec3::ZERO));
            let (normal, recip) = (va.normalize(), vb.length_recip());
            for k in 0..4 {
                prop_assert_eq!(va.lane(k), a[k]);
                prop_assert_eq!(bits(normal.lane(k)), bits(a[k].normalize()));
                prop_assert_eq!(recip[k].to_bits(), b[k].length_recip().to_bits());
            }
        }
    }

    #[test]
    fn zero_and_huge_vectors_match_too() {
        let v = [
            Vec3::ZERO,
            Vec3::splat(1e30),
            Vec3::new(-0.0, 3.0, 4.0),
            Vec3::splat(1e-30),
        ];
        let recip = Vec3x4::from_slice(&v, Vec3::ONE).length_recip();
        for k in 0..4 {
            assert_eq!(
                recip[k].to_bits(),
                v[k].length_recip().to_bits(),
                "{}",
                v[k]
            );
        }
    }
}
