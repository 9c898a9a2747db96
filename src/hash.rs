//! Counter-based random numbers: every random value in scree is a pure
//! function of (seed, stream, index), so results never depend on thread
//! scheduling, time or call order.
//!
//! The mixer is SplitMix64's finaliser; streams keep unrelated uses of one
//! seed (fault lines, offsets, pixel jitter) independent.

/// SplitMix64 finaliser: a bijective 64-bit mix with good avalanche.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of (seed, stream, index) to 64 random bits.
#[inline]
pub fn hash3(seed: u64, stream: u64, index: u64) -> u64 {
    let a = mix64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let b = mix64(a ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03));
    mix64(b ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Uniform f64 in [0, 1) from 53 random bits of `hash3(seed, stream, index)`.
#[inline]
pub fn unit_f64(seed: u64, stream: u64, index: u64) -> f64 {
    (hash3(seed, stream, index) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform f32 in [0, 1) from 24 random bits.
#[inline]
pub fn unit_f32(seed: u64, stream: u64, index: u64) -> f32 {
    (hash3(seed, stream, index) >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
}

/// FNV-1a over bytes: the fingerprint used to pin generated data in tests.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Sine and cosine of `x` for |x| ≤ π/2 by Taylor series in plain f64
/// arithmetic, so generated terrain does not depend on the platform's libm.
pub fn sin_cos_det(x: f64) -> (f64, f64) {
    debug_assert!(x.abs() <= std::f64::consts::FRAC_PI_2 + 1e-12);
    let x2 = x * x;
    // Horner over the series up to x^21 / x^20: error < 1e-16 on [-π/2, π/2].
    let mut s = 0.0;
    let mut c = 0.0;
    for k in (0..=10).rev() {
        let sk = 2 * k + 1;
        let ck = 2 * k;
        s = s * x2 + sign(k) / factorial(sk);
        c = c * x2 + sign(k) / factorial(ck);
    }
    (s * x, c)
}

fn sign(k: u32) -> f64 {
    if k.is_multiple_of(2) {
        1.0
    } else {
        -1.0
    }
}

fn factorial(n: u32) -> f64 {
    (1..=n).fold(1.0, |acc, i| acc * i as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn det_sin_cos_matches_libm() {
        for i in -100..=100 {
            let x = i as f64 / 100.0 * std::f64::consts::FRAC_PI_2;
            let (s, c) = sin_cos_det(x);
            assert!((s - x.sin()).abs() < 1e-15, "sin({x})");
            assert!((c - x.cos()).abs() < 1e-15, "cos({x})");
        }
    }

    #[test]
    fn unit_values_are_in_range_and_differ_by_index() {
        let a = unit_f64(7, 1, 0);
        let b = unit_f64(7, 1, 1);
        assert!((0.0..1.0).contains(&a) && (0.0..1.0).contains(&b));
        assert_ne!(a, b);
        assert_eq!(a, unit_f64(7, 1, 0));
        assert_ne!(unit_f64(7, 1, 0), unit_f64(8, 1, 0));
    }

    #[test]
    fn fnv1a_known_value() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (published test vector).
        assert_eq!(fnv1a(*b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
