//! The 8-bit codes of eight pixels at once, one per AVX2 lane: exposure,
//! tone curve and sRGB encoding of the colour, and the coverage code, as
//! [`super::framebuffer::srgb8_codes`] makes them pixel by pixel.
//!
//! Pixel by pixel, each code waits on a division (the coverage), the tone
//! curve's division and two dependent table loads: about 10 ns a pixel, a
//! 1080p frame's 20 ms of work, 4% of the peer workload's 1025² frame.
//! Here the four pixels' channels are transposed into lanes, and every
//! step runs on eight pixels: the same operations in the same order
//! (divisions, products and sums without fused multiply-adds; `maxps` and
//! `minps` with the operands in glam's order, so that a NaN becomes the
//! bound as it does there), and the table lookups of
//! [`tonemap::srgb8`] as two gathers. So every code is the scalar one, bit
//! for bit; the tests check special values and sweeps of bit patterns on
//! every instruction set the CPU has.
//!
//! The kernel is compiled twice ([`Isa`]): for AVX2, and for AVX-512,
//! whose encoding of the same intrinsics has more registers.
#![allow(unsafe_code)]

use glam::Vec4;

#[cfg(target_arch = "x86_64")]
use crate::accel::isa::Isa;
use crate::shade::tonemap::Tonemap;

/// Codes the leading whole groups of eight of `pixels` into `rgb` (three
/// a pixel) and `alpha`, where the CPU has AVX2; returns how many pixels
/// it coded (a multiple of eight; none without AVX2), leaving the rest to
/// the caller.
pub fn codes(
    pixels: &[Vec4],
    rgb: &mut [u8],
    alpha: &mut [u8],
    exposure_scale: f32,
    op: Tonemap,
) -> usize {
    assert!(rgb.len() >= 3 * pixels.len() && alpha.len() >= pixels.len());
    #[cfg(target_arch = "x86_64")]
    match Isa::best() {
        // SAFETY: the CPU runs the instruction set of the copy called.
        Some(Isa::Avx512) => unsafe { x86::codes_avx512(pixels, rgb, alpha, exposure_scale, op) },
        Some(Isa::Avx2) => unsafe { x86::codes_avx2(pixels, rgb, alpha, exposure_scale, op) },
        Some(Isa::Avx) | None => 0,
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (pixels, rgb, alpha, exposure_scale, op);
        0
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use glam::Vec4;

    use crate::shade::tonemap::{self, Tonemap, BUCKET_SHIFT};

    /// [`codes_here`] compiled for one instruction set.
    macro_rules! codes_for {
        ($name:ident, $features:literal) => {
            #[doc = concat!("The kernel compiled for `", $features, "`.")]
            #[target_feature(enable = $features)]
            pub unsafe fn $name(
                pixels: &[Vec4],
                rgb: &mut [u8],
                alpha: &mut [u8],
                exposure_scale: f32,
                op: Tonemap,
            ) -> usize {
                codes_here(pixels, rgb, alpha, exposure_scale, op)
            }
        };
    }

    codes_for!(codes_avx2, "avx2");
    codes_for!(codes_avx512, "avx2,avx512f,avx512vl");

    /// The kernel; the caller runs on a CPU with AVX2 and has checked that
    /// `rgb` and `alpha` hold `pixels`' codes.
    #[inline(always)]
    unsafe fn codes_here(
        pixels: &[Vec4],
        rgb: &mut [u8],
        alpha: &mut [u8],
        exposure_scale: f32,
        op: Tonemap,
    ) -> usize {
        let (steps, start) = tonemap::srgb8_tables();
        let zero = _mm256_setzero_ps();
        let one = _mm256_set1_ps(1.0);
        let scale = _mm256_set1_ps(exposure_scale);
        let groups = pixels.len() / 8;
        for g in 0..groups {
            let [r, gr, b, w] = transposed(pixels[8 * g..].as_ptr() as *const f32);
            // (No closures here: they would not inherit the target
            // features, and their intrinsics would become calls.)
            let covered = _mm256_cmp_ps::<_CMP_GT_OQ>(w, zero);
            let r = code(r, w, covered, scale, op, steps, start);
            let gr = code(gr, w, covered, scale, op, steps, start);
            let b = code(b, w, covered, scale, op, steps, start);
            // Three bytes a pixel: r | g << 8 | b << 16, the fourth byte
            // of each lane squeezed out, lane half by lane half.
            let packed = _mm256_or_si256(
                r,
                _mm256_or_si256(_mm256_slli_epi32::<8>(gr), _mm256_slli_epi32::<16>(b)),
            );
            let squeeze = _mm256_setr_epi8(
                0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, //
                0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
            );
            let mut bytes = [0u8; 32];
            _mm256_storeu_si256(
                bytes.as_mut_ptr() as *mut __m256i,
                _mm256_shuffle_epi8(packed, squeeze),
            );
            let out = &mut rgb[24 * g..24 * g + 24];
            out[..12].copy_from_slice(&bytes[..12]);
            out[12..].copy_from_slice(&bytes[16..28]);
            // `to_u8` of the coverage: clamped (a NaN to 0, as `maxps`
            // with 0 second gives it), scaled, rounded by truncation.
            let a = _mm256_cvttps_epi32(_mm256_add_ps(
                _mm256_mul_ps(
                    _mm256_min_ps(_mm256_max_ps(w, zero), one),
                    _mm256_set1_ps(255.0),
                ),
                _mm256_set1_ps(0.5),
            ));
            let a = _mm256_packus_epi16(_mm256_packus_epi32(a, a), _mm256_setzero_si256());
            let low = _mm_cvtsi128_si32(_mm256_castsi256_si128(a)) as u32;
            let high = _mm_cvtsi128_si32(_mm256_extracti128_si256::<1>(a)) as u32;
            alpha[8 * g..8 * g + 8]
                .copy_from_slice(&(low as u64 | (high as u64) << 32).to_le_bytes());
        }
        8 * groups
    }

    /// The code of one channel `c` of eight pixels of coverage `w`
    /// (`covered` where it is positive): `unpremultiplied`, the colour
    /// over the coverage where it is positive, else zero; then times the
    /// exposure, through the tone curve and the sRGB encoding.
    #[inline(always)]
    unsafe fn code(
        c: __m256,
        w: __m256,
        covered: __m256,
        scale: __m256,
        op: Tonemap,
        steps: &[f32; 257],
        start: &[u8],
    ) -> __m256i {
        let exposed = _mm256_mul_ps(_mm256_and_ps(_mm256_div_ps(c, w), covered), scale);
        srgb8(curve(op, exposed), steps, start)
    }

    /// Eight pixels from `p` as their r, g, b and coverage lanes (pixel k
    /// in lane k).
    #[inline(always)]
    unsafe fn transposed(p: *const f32) -> [__m256; 4] {
        // Pixels (0, 1), (2, 3), (4, 5), (6, 7); then pixel k in the low
        // half of one vector and pixel k + 4 in its high half.
        let (m0, m1) = (_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8)));
        let (m2, m3) = (_mm256_loadu_ps(p.add(16)), _mm256_loadu_ps(p.add(24)));
        let p04 = _mm256_permute2f128_ps::<0x20>(m0, m2);
        let p15 = _mm256_permute2f128_ps::<0x31>(m0, m2);
        let p26 = _mm256_permute2f128_ps::<0x20>(m1, m3);
        let p37 = _mm256_permute2f128_ps::<0x31>(m1, m3);
        // A 4 × 4 transpose in each half.
        let rg01 = _mm256_unpacklo_ps(p04, p15);
        let bw01 = _mm256_unpackhi_ps(p04, p15);
        let rg23 = _mm256_unpacklo_ps(p26, p37);
        let bw23 = _mm256_unpackhi_ps(p26, p37);
        [
            _mm256_shuffle_ps::<0x44>(rg01, rg23),
            _mm256_shuffle_ps::<0xEE>(rg01, rg23),
            _mm256_shuffle_ps::<0x44>(bw01, bw23),
            _mm256_shuffle_ps::<0xEE>(bw01, bw23),
        ]
    }

    /// [`tonemap::apply`] on one channel of eight pixels.
    #[inline(always)]
    unsafe fn curve(op: Tonemap, c: __m256) -> __m256 {
        let (zero, one) = (_mm256_setzero_ps(), _mm256_set1_ps(1.0));
        let c = _mm256_max_ps(c, zero);
        match op {
            Tonemap::Aces => {
                let [a, b, c2, d, e] = [2.51, 0.03, 2.43, 0.59, 0.14];
                let num = _mm256_mul_ps(
                    c,
                    _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(a), c), _mm256_set1_ps(b)),
                );
                let den = _mm256_add_ps(
                    _mm256_mul_ps(
                        c,
                        _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(c2), c), _mm256_set1_ps(d)),
                    ),
                    _mm256_set1_ps(e),
                );
                _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(num, den), zero), one)
            }
            Tonemap::Reinhard => _mm256_div_ps(c, _mm256_add_ps(c, one)),
            Tonemap::None => _mm256_min_ps(c, one),
        }
    }

    /// [`tonemap::srgb8`] of eight values, as 32-bit lanes: 0 for NaN and
    /// values ≤ 0, 255 for values ≥ 1; between, the code at the start of
    /// the value's bucket, plus one where the value has reached the next
    /// code's step.
    #[inline(always)]
    unsafe fn srgb8(x: __m256, steps: &[f32; 257], start: &[u8]) -> __m256i {
        let zero = _mm256_setzero_ps();
        let one = _mm256_set1_ps(1.0);
        let inside = _mm256_castps_si256(_mm256_and_ps(
            _mm256_cmp_ps::<_CMP_GT_OQ>(x, zero),
            _mm256_cmp_ps::<_CMP_LT_OQ>(x, one),
        ));
        // Lanes outside (0, 1) look up bucket 0 and are replaced below.
        let bucket = _mm256_and_si256(
            _mm256_srli_epi32::<{ BUCKET_SHIFT as i32 }>(_mm256_castps_si256(x)),
            inside,
        );
        // The bucket's byte is the low byte of a 32-bit load from it (the
        // table has three bytes of padding after its last bucket).
        let k = _mm256_and_si256(
            _mm256_i32gather_epi32::<1>(start.as_ptr() as *const i32, bucket),
            _mm256_set1_epi32(0xFF),
        );
        let next =
            _mm256_i32gather_ps::<4>(steps.as_ptr(), _mm256_add_epi32(k, _mm256_set1_epi32(1)));
        // A passed step is −1 in its lane: subtracting it adds one.
        let passed = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(x, next));
        let code = _mm256_and_si256(_mm256_sub_epi32(k, passed), inside);
        let full = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(x, one));
        _mm256_or_si256(code, _mm256_and_si256(full, _mm256_set1_epi32(255)))
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec4;

    use super::super::framebuffer::srgb8_codes;
    use crate::accel::isa::{caps_here, with_cap};
    use crate::shade::tonemap::Tonemap;

    /// Codes of `pixels` by `srgb8_codes` under `cap` (None: pixel by pixel).
    fn coded(
        cap: Option<crate::accel::isa::Isa>,
        pixels: &[Vec4],
        scale: f32,
        op: Tonemap,
    ) -> (Vec<u8>, Vec<u8>) {
        let (mut rgb, mut alpha) = (vec![0xA5; 3 * pixels.len()], vec![0xA5; pixels.len()]);
        with_cap(cap, || srgb8_codes(pixels, &mut rgb, &mut alpha, scale, op));
        (rgb, alpha)
    }

    #[test]
    fn lanes_give_the_pixel_by_pixel_codes() {
        let special = [
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            1e-40,
            0.003_130_8,
            0.5,
            1.0,
            1.0 - f32::EPSILON,
            1.0 + f32::EPSILON,
            -1.0,
            7.5,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        // Every 40009th bit pattern: both signs, subnormals, NaNs; then a
        // dense run of [0, 1.5), where the codes change.
        let sweep = (0..=u32::MAX).step_by(40009).map(f32::from_bits);
        let dense = (0..20011).map(|k| k as f32 * 1.5 / 20011.0);
        let values: Vec<f32> = special.into_iter().chain(sweep).chain(dense).collect();
        let coverages = [
            1.0,
            0.75,
            0.5,
            1e-3,
            0.0,
            -0.0,
            -0.5,
            2.0,
            f32::NAN,
            f32::INFINITY,
        ];
        // Each value in each channel, with other values beside it and
        // every coverage in turn; a length that leaves a tail of five.
        let mut pixels: Vec<Vec4> = (0..values.len() + 5)
            .map(|k| {
                let at = |m: usize| values[(k * m + m / 2) % values.len()];
                let w = coverages[k % coverages.len()];
                // Premultiplied, as a tile leaves them (where w is finite).
                let w_of = |v: f32| if w.is_finite() { v * w } else { v };
                Vec4::new(w_of(at(1)), w_of(at(7)), w_of(at(13)), w)
            })
            .collect();
        // Each code's least value and its neighbours, fully covered: with
        // no tone curve and no exposure, what the encoding itself sees.
        let (steps, _) = crate::shade::tonemap::srgb8_tables();
        let next = |x: f32, by: i32| f32::from_bits((x.to_bits() as i32 + by) as u32);
        pixels.extend(
            steps[1..256]
                .iter()
                .map(|&s| Vec4::new(s, next(s, -1), next(s, 1), 1.0)),
        );
        for op in [Tonemap::Aces, Tonemap::Reinhard, Tonemap::None] {
            for scale in [1.0, 0.37, 4.0] {
                let scalar = coded(None, &pixels, scale, op);
                for cap in caps_here() {
                    let got = coded(cap, &pixels, scale, op);
                    for (k, p) in pixels.iter().enumerate() {
                        assert_eq!(
                            (&got.0[3 * k..3 * k + 3], got.1[k]),
                            (&scalar.0[3 * k..3 * k + 3], scalar.1[k]),
                            "{op:?} × {scale} of {p:?} under {cap:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn lanes_code_whole_groups_and_leave_the_rest() {
        for n in [0, 7, 8, 9, 23, 24] {
            let pixels = vec![Vec4::new(0.2, 0.4, 0.8, 1.0); n];
            let (mut rgb, mut alpha) = (vec![0; 3 * n], vec![0; n]);
            let done = super::codes(&pixels, &mut rgb, &mut alpha, 1.0, Tonemap::None);
            let lanes = crate::accel::isa::Isa::best() >= Some(crate::accel::isa::Isa::Avx2);
            assert_eq!(done, if lanes { n / 8 * 8 } else { 0 });
            // What it coded is coded; what it left is untouched.
            assert!(alpha[..done].iter().all(|&a| a == 255));
            assert!(alpha[done..].iter().all(|&a| a == 0));
        }
    }
}
