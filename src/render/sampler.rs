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
    /// The pixel (row-major index) and the sample's number in it.
    pixel: u64,
    sample: u32,
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
            pixel,
            sample: s,
        }
    }

    /// Two values in [0, 1) for `stream`, well spread over a pixel's
    /// samples: point `s` (this sample's number) of a shuffled, Owen-
    /// scrambled two-dimensional Sobol sequence (Burley 2020, "Practical
    /// Hash-based Owen Scrambling"), its shuffle and scrambles drawn from
    /// hash(seed, pixel, stream). Any 2^k consecutive samples of a pixel
    /// from the first cover a 2^k-cell elementary grid of the square once
    /// per cell (a (0, 2)-sequence), so a pixel's estimate converges faster
    /// than with independent draws; each pixel and stream is scrambled
    /// independently.
    #[inline]
    pub fn sobol(&self, stream: u64) -> (f32, f32) {
        let h = hash3(
            self.seed ^ self.pixel.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            stream,
            0x50B0,
        );
        let (shuffle, sx, sy) = (h as u32, (h >> 32) as u32, mix32(h as u32 ^ 0x5bd1_e995));
        let i = owen_scramble(self.sample, shuffle);
        let unit = |x: u32| (x >> 8) as f32 * (1.0 / (1u32 << 24) as f32);
        (
            unit(owen_scramble(i.reverse_bits(), sx)),
            unit(owen_scramble(sobol_second(i), sy)),
        )
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

/// Sobol's second dimension of point `i`: the XOR of the direction numbers
/// of `i`'s set bits, v₀ = 2³¹, vₖ = vₖ₋₁ ⊕ (vₖ₋₁ >> 1). (The first
/// dimension is the van der Corput sequence, `i` with its bits reversed.)
/// Read a byte at a time from [`SOBOL_BYTES`].
#[inline]
pub fn sobol_second(i: u32) -> u32 {
    let [a, b, c, d] = i.to_le_bytes();
    SOBOL_BYTES[0][a as usize]
        ^ SOBOL_BYTES[1][b as usize]
        ^ SOBOL_BYTES[2][c as usize]
        ^ SOBOL_BYTES[3][d as usize]
}

/// For byte k of an index and each of its 256 values, the XOR of the
/// second dimension's direction numbers of its set bits.
static SOBOL_BYTES: [[u32; 256]; 4] = sobol_byte_tables();

const fn sobol_byte_tables() -> [[u32; 256]; 4] {
    let mut v = [0u32; 32];
    v[0] = 1 << 31;
    let mut k = 1;
    while k < 32 {
        v[k] = v[k - 1] ^ (v[k - 1] >> 1);
        k += 1;
    }
    let mut tables = [[0u32; 256]; 4];
    let mut byte = 0;
    while byte < 4 {
        let mut value = 0;
        while value < 256 {
            let mut x = 0;
            let mut bit = 0;
            while bit < 8 {
                if value >> bit & 1 != 0 {
                    x ^= v[8 * byte + bit];
                }
                bit += 1;
            }
            tables[byte][value] = x;
            value += 1;
        }
        byte += 1;
    }
    tables
}

/// Nested uniform (Owen) scrambling of the bits of `x` from the top down,
/// with the hash of Laine and Karras as Burley improved it: reverse, hash
/// so that each bit depends on the bits below it, reverse back.
#[inline]
pub fn owen_scramble(x: u32, seed: u32) -> u32 {
    let mut v = x.reverse_bits().wrapping_add(seed);
    v ^= v.wrapping_mul(0x6c50_b47c);
    v ^= v.wrapping_mul(0xb82f_1e52);
    v ^= v.wrapping_mul(0xc7af_e638);
    v ^= v.wrapping_mul(0x8d22_f6e6);
    v.reverse_bits()
}

/// A 32-bit finaliser (from MurmurHash3).
#[inline]
fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x85eb_ca6b);
    x ^= x >> 13;
    x = x.wrapping_mul(0xc2b2_ae35);
    x ^ (x >> 16)
}

#[cfg(test)]
mod sobol_tests {
    use super::*;

    #[test]
    fn the_second_sobol_dimension_starts_as_published() {
        // 0, 1/2, 3/4, 1/4, 5/8, 1/8, 3/8, 7/8 (Bratley and Fox's table).
        let first: Vec<f64> = (0..8)
            .map(|i| sobol_second(i) as f64 / 4_294_967_296.0)
            .collect();
        assert_eq!(first, [0.0, 0.5, 0.75, 0.25, 0.625, 0.125, 0.375, 0.875]);
    }

    #[test]
    fn the_byte_tables_give_the_bit_by_bit_definition() {
        let by_bits = |mut i: u32| {
            let (mut v, mut x) = (1u32 << 31, 0u32);
            while i != 0 {
                if i & 1 != 0 {
                    x ^= v;
                }
                i >>= 1;
                v ^= v >> 1;
            }
            x
        };
        for i in [0, 1, 2, 3, 255, 256, 0x1234_5678, 0xdead_beef, u32::MAX] {
            assert_eq!(sobol_second(i), by_bits(i), "{i:#x}");
        }
    }

    #[test]
    fn owen_scrambling_is_a_permutation_that_keeps_elementary_intervals() {
        // Scrambling maps the 2^k intervals of width 2^-k onto each other:
        // the top 4 bits of 16 consecutive aligned values stay a permutation.
        for seed in [0u32, 1, 0xdead_beef] {
            let mut seen = [false; 16];
            for k in 0..16u32 {
                seen[(owen_scramble(k << 28, seed) >> 28) as usize] = true;
            }
            assert_eq!(seen, [true; 16], "seed {seed}");
        }
    }

    #[test]
    fn sixteen_samples_of_a_pixel_fill_every_elementary_grid() {
        // (0, 2)-sequence: 16 points, one in each cell of the 16 × 1,
        // 8 × 2, 4 × 4, 2 × 8 and 1 × 16 grids.
        for pixel in [0u64, 77, 123_456] {
            let points: Vec<(f32, f32)> = (0..16)
                .map(|s| SampleRng::new(9, pixel, s, 16).sobol(0x77))
                .collect();
            for a in 0..=4 {
                let (nx, ny) = (1usize << a, 1usize << (4 - a));
                let mut cells = [0; 16];
                for &(x, y) in &points {
                    cells[(y * ny as f32) as usize * nx + (x * nx as f32) as usize] += 1;
                }
                assert!(cells.iter().all(|&c| c == 1), "pixel {pixel}, {nx} × {ny}");
            }
        }
        // Other streams and pixels are scrambled apart.
        let rng = SampleRng::new(9, 5, 3, 16);
        assert_ne!(rng.sobol(1), rng.sobol(2));
        assert_ne!(rng.sobol(1), SampleRng::new(9, 6, 3, 16).sobol(1));
    }
}
