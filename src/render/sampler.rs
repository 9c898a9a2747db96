//! Sample positions inside a pixel: stratified and jittered, from
//! hash(seed, pixel, sample) only.

use crate::hash::hash3;

const STREAM_JITTER: u64 = 0x5A_01;

/// Offset in [0, 1)² of sample `s` of `n` in pixel `pixel` (row-major index).
/// One sample is the pixel centre; more samples fill an m × ⌈n/m⌉ grid of
/// strata (m = ⌈√n⌉), each jittered.
#[inline]
pub fn sample_offset(seed: u64, pixel: u64, s: u32, n: u32) -> (f32, f32) {
    if n == 1 {
        return (0.5, 0.5);
    }
    let m = (n as f32).sqrt().ceil() as u32;
    let rows = n.div_ceil(m);
    let h = hash3(
        seed,
        STREAM_JITTER,
        pixel.wrapping_mul(n as u64).wrapping_add(s as u64),
    );
    let jx = (h >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
    let jy = ((h >> 16) & 0xFF_FFFF) as f32 * (1.0 / (1u32 << 24) as f32);
    (
        ((s % m) as f32 + jx) / m as f32,
        ((s / m) as f32 + jy) / rows as f32,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_is_the_centre() {
        assert_eq!(sample_offset(1, 2, 0, 1), (0.5, 0.5));
    }

    #[test]
    fn four_samples_fill_four_strata() {
        let mut seen = [false; 4];
        for s in 0..4 {
            let (x, y) = sample_offset(9, 123, s, 4);
            assert!((0.0..1.0).contains(&x) && (0.0..1.0).contains(&y));
            seen[(x >= 0.5) as usize + 2 * (y >= 0.5) as usize] = true;
        }
        assert_eq!(seen, [true; 4]);
    }

    #[test]
    fn depends_only_on_its_inputs() {
        assert_eq!(sample_offset(3, 77, 5, 9), sample_offset(3, 77, 5, 9));
        assert_ne!(sample_offset(3, 77, 5, 9), sample_offset(4, 77, 5, 9));
    }
}

/// Random numbers for one camera sample: uniform values in [0, 1) that are
/// a pure function of (seed, pixel, sample, stream, index).
#[derive(Debug, Clone, Copy)]
pub struct SampleRng {
    seed: u64,
    key: u64,
}

/// Stream of the sun-disc sample.
pub const STREAM_SUN: u64 = 0x5A_10;
/// Stream of the sky-light directions.
pub const STREAM_SKY: u64 = 0x5A_20;

impl SampleRng {
    /// The generator of sample `s` of `n` in pixel `pixel`.
    #[inline]
    pub fn new(seed: u64, pixel: u64, s: u32, n: u32) -> SampleRng {
        SampleRng {
            seed,
            key: pixel.wrapping_mul(n as u64).wrapping_add(s as u64),
        }
    }

    /// Two uniform values in [0, 1) for draw `index` of `stream`.
    #[inline]
    pub fn pair(&self, stream: u64, index: u32) -> (f32, f32) {
        let h = hash3(
            self.seed ^ self.key.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            stream,
            index as u64,
        );
        let a = (h >> 40) as f32 * (1.0 / (1u32 << 24) as f32);
        let b = ((h >> 16) & 0xFF_FFFF) as f32 * (1.0 / (1u32 << 24) as f32);
        (a, b)
    }
}
