//! From linear radiance to display values: exposure, tone curve, sRGB.

use glam::{Vec3, Vec3A};

use serde::Deserialize;

/// Tone mapping operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tonemap {
    /// Narkowicz's fit of the ACES filmic curve.
    #[default]
    Aces,
    /// x / (1 + x).
    Reinhard,
    /// Clamp to [0, 1].
    None,
}

/// Applies the tone curve to exposed linear radiance; the result is in [0, 1].
#[inline]
///
/// The channels go through SSE lanes (`Vec3A`): each lane does the scalar
/// operations in the same order, so the results are the scalar curve's
/// bit for bit (also for NaN and ±∞, where `maxps`/`minps` return their
/// second operand as `f32::max`/`min` return the non-NaN one), with one
/// division for three instead of three.
pub fn apply(op: Tonemap, c: Vec3) -> Vec3 {
    let c = Vec3A::from(c).max(Vec3A::ZERO);
    Vec3::from(match op {
        // Narkowicz 2015, "ACES Filmic Tone Mapping Curve".
        Tonemap::Aces => ((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14))
            .clamp(Vec3A::ZERO, Vec3A::ONE),
        Tonemap::Reinhard => c / (c + 1.0),
        Tonemap::None => c.min(Vec3A::ONE),
    })
}

/// sRGB transfer function (IEC 61966-2-1) of a value in [0, 1].
#[inline]
pub fn srgb_encode(x: f32) -> f32 {
    if x <= 0.003_130_8 {
        12.92 * x
    } else {
        1.055 * x.powf(1.0 / 2.4) - 0.055
    }
}

/// `to_u8(srgb_encode(x))` for any x, bit for bit, without a `powf`: a
/// table indexed by the top bits of x gives the code at the start of x's
/// bucket, and the step to the next code (its least x) says whether x has
/// passed it. No bucket holds two steps (`srgb8_table` checks), so one
/// comparison, without a branch, finishes the job: a loop there cost the
/// 8-bit output a mispredicted branch per channel. NaN and values ≤ 0
/// give 0, values ≥ 1 give 255, as the formula does.
#[inline]
pub fn srgb8(x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x >= 1.0 {
        return 255;
    }
    let t = srgb8_table();
    let k = t.start[(x.to_bits() >> BUCKET_SHIFT) as usize] as usize;
    (k + (x >= t.steps[k + 1]) as usize) as u8
}

/// Buckets of [`srgb8`]: 2⁷ per octave of x (x's bucket is
/// `x.to_bits() >> BUCKET_SHIFT`).
pub const BUCKET_SHIFT: u32 = 16;

struct Srgb8Table {
    /// For each code k in 1..=255, the least f32 whose code is k or more
    /// (entry 0 is unused, entry 256 is +∞: no code above 255).
    steps: [f32; 257],
    /// The code of the least f32 of each bucket of [0, 1), then three
    /// bytes of padding: a 32-bit gather of the last bucket's code reads
    /// them ([`srgb8_tables`]).
    start: Vec<u8>,
}

/// [`srgb8`]'s tables, for code that looks up many values at once: the
/// least f32 of each code k ≥ 1 (entry k; entry 256 is +∞), and the code
/// at the start of each bucket of [0, 1) ([`BUCKET_SHIFT`]), followed by
/// three bytes that no
/// bucket owns, so that every bucket's byte can be read as the low byte
/// of a 32-bit load.
pub fn srgb8_tables() -> (&'static [f32; 257], &'static [u8]) {
    let t = srgb8_table();
    (&t.steps, &t.start)
}

/// Found once by bisection over the bit patterns of [0, 1] on the curve
/// itself; valid because the code never falls as x rises, which
/// `srgb8_matches_the_formula_on_every_f32_of_0_1` checks for every f32 in [0, 1].
fn srgb8_table() -> &'static Srgb8Table {
    static TABLE: std::sync::OnceLock<Srgb8Table> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let code = |bits: u32| to_u8(srgb_encode(f32::from_bits(bits)));
        let mut steps = [f32::NEG_INFINITY; 257];
        steps[256] = f32::INFINITY;
        for (k, step) in steps.iter_mut().enumerate().take(256).skip(1) {
            // code(lo) < k ≤ code(hi), lo and hi bit patterns of [0, 1].
            let (mut lo, mut hi) = (0u32, 1f32.to_bits());
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if code(mid) as usize >= k {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            *step = f32::from_bits(hi);
        }
        let buckets = 1f32.to_bits() >> BUCKET_SHIFT;
        let mut start: Vec<u8> = (0..buckets).map(|b| code(b << BUCKET_SHIFT)).collect();
        // Each bucket's last value is at most one code past its first.
        for (b, &k) in start.iter().enumerate() {
            let last = f32::from_bits((((b as u32) + 1) << BUCKET_SHIFT) - 1);
            assert!(
                (k as usize + 2 > 256) || last < steps[k as usize + 2],
                "an sRGB bucket spans two steps"
            );
        }
        start.extend([0; 3]);
        Srgb8Table { steps, start }
    })
}

/// A display value in [0, 1] to an 8-bit code, rounding to nearest.
#[inline]
pub fn to_u8(x: f32) -> u8 {
    (x.clamp(0.0, 1.0) * 255.0 + 0.5) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_fix_black_and_saturate() {
        for op in [Tonemap::Aces, Tonemap::Reinhard, Tonemap::None] {
            assert_eq!(apply(op, Vec3::ZERO), Vec3::ZERO);
            assert!(apply(op, Vec3::splat(1e6)).x > 0.99);
        }
        assert_eq!(apply(Tonemap::Reinhard, Vec3::ONE), Vec3::splat(0.5));
        // ACES fit at 1: 2.54 / 3.16.
        assert!((apply(Tonemap::Aces, Vec3::ONE).x - 2.54 / 3.16).abs() < 1e-6);
    }

    /// The curves channel by channel in scalar f32, as `apply` computed
    /// them before it used SSE lanes (glam's `Vec3::clamp` is `max` then
    /// `min`, which turn a NaN into the bound, unlike `f32::clamp`).
    #[allow(clippy::manual_clamp)] // f32::clamp keeps a NaN; this must not
    fn scalar(op: Tonemap, c: f32) -> f32 {
        let c = c.max(0.0);
        match op {
            Tonemap::Aces => ((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14))
                .max(0.0)
                .min(1.0),
            Tonemap::Reinhard => c / (c + 1.0),
            Tonemap::None => c.min(1.0),
        }
    }

    #[test]
    fn lanes_give_the_scalar_curves_bit_for_bit() {
        let special = [
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            1e-40,
            1.0,
            -1.0,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        // Every 65537th bit pattern: both signs, subnormals, NaNs.
        let sweep = (0..=u32::MAX).step_by(65537).map(f32::from_bits);
        let values: Vec<f32> = special.into_iter().chain(sweep).collect();
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        for op in [Tonemap::Aces, Tonemap::Reinhard, Tonemap::None] {
            for (k, &x) in values.iter().enumerate() {
                // The channels at once, each with different neighbours.
                let (y, z) = (
                    values[(k + 1) % values.len()],
                    values[(k * 7) % values.len()],
                );
                let got = apply(op, Vec3::new(x, y, z));
                for (g, v) in [(got.x, x), (got.y, y), (got.z, z)] {
                    assert!(
                        same(g, scalar(op, v)),
                        "{op:?}({v:e}) = {g:e}, scalar {:e}",
                        scalar(op, v)
                    );
                }
            }
        }
    }

    #[test]
    fn srgb8_matches_the_formula_on_every_f32_of_0_1() {
        use rayon::prelude::*;
        let formula = |x: f32| to_u8(srgb_encode(x));
        let end = 1f32.to_bits() as u64 + 1;
        let chunks = 64;
        let wrong = (0..chunks)
            .into_par_iter()
            .map(|c| {
                (c * end / chunks..(c + 1) * end / chunks)
                    .filter(|&b| {
                        let x = f32::from_bits(b as u32);
                        srgb8(x) != formula(x)
                    })
                    .count()
            })
            .sum::<usize>();
        assert_eq!(wrong, 0);
        for x in [
            -0.0,
            -1e-30,
            -5.0,
            1.0 + f32::EPSILON,
            7.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
        ] {
            assert_eq!(srgb8(x), formula(x), "{x}");
        }
        // All 256 codes occur.
        assert_eq!(srgb8(0.0), 0);
        assert_eq!(srgb8(1.0), 255);
        assert!(srgb8_table().steps[1..].windows(2).all(|w| w[0] < w[1]));
        assert_eq!(srgb8_table().steps[256], f32::INFINITY);
    }

    #[test]
    fn srgb_known_points() {
        assert_eq!(srgb_encode(0.0), 0.0);
        assert!((srgb_encode(1.0) - 1.0).abs() < 1e-6);
        assert!((srgb_encode(0.18) - 0.4614).abs() < 1e-3);
        assert_eq!(to_u8(1.0), 255);
        assert_eq!(to_u8(0.5), 128);
    }
}
