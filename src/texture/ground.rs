//! Tileable ground textures for layered materials: rock strata, grass and
//! snow, as linear-reflectance colour maps.
//!
//! Each is built from value noise on a torus: lattice values hashed from
//! (seed, octave, i mod p, j mod p) with a period p that divides the
//! texture, blended with the smoothstep, summed over octaves of doubling
//! frequency (fBm). Sampling the lattice at the texel centres of one
//! period makes the image tile in both directions. Only arithmetic is
//! used, so the maps are the same bytes everywhere.
//!
//! - `strata`: horizontal bands (the texture's rows: they run level along
//!   a cliff under triplanar mapping) of thickness and colour drawn per
//!   band from a palette of sandstones and shales, their edges wavy by
//!   low-frequency noise, with fine grain on top.
//! - `grass`: green with patches of drier, yellower grass and dark specks.
//! - `snow`: near-white with soft blue-grey hollows.

use glam::Vec3;

use crate::hash::unit_f32;

/// Which ground texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ground {
    /// Banded sedimentary rock.
    Strata,
    /// Grass.
    Grass,
    /// Snow.
    Snow,
}

const STRATA: [Vec3; 6] = [
    Vec3::new(0.42, 0.26, 0.16),
    Vec3::new(0.55, 0.38, 0.24),
    Vec3::new(0.33, 0.22, 0.15),
    Vec3::new(0.60, 0.46, 0.32),
    Vec3::new(0.26, 0.18, 0.13),
    Vec3::new(0.48, 0.30, 0.19),
];

/// Periodic value noise in [0, 1] at (x, y) in lattice units, period `p`.
fn noise(seed: u64, octave: u64, x: f32, y: f32, p: u32) -> f32 {
    let (fx, fy) = (x.floor(), y.floor());
    let (tx, ty) = (x - fx, y - fy);
    let s = |t: f32| t * t * (3.0 - 2.0 * t);
    let (sx, sy) = (s(tx), s(ty));
    let at = |i: i64, j: i64| {
        let (i, j) = (i.rem_euclid(p as i64) as u64, j.rem_euclid(p as i64) as u64);
        unit_f32(seed, 0x6A0 + octave, i * 65_537 + j)
    };
    let (i, j) = (fx as i64, fy as i64);
    let top = at(i, j) + sx * (at(i + 1, j) - at(i, j));
    let bottom = at(i, j + 1) + sx * (at(i + 1, j + 1) - at(i, j + 1));
    top + sy * (bottom - top)
}

/// fBm of `octaves` octaves at texture coordinates (u, v) in [0, 1), base
/// period `p` cells across the texture, in [0, 1].
fn fbm(seed: u64, u: f32, v: f32, p: u32, octaves: u32) -> f32 {
    let (mut sum, mut weight, mut total) = (0.0, 1.0, 0.0);
    for k in 0..octaves {
        let period = p << k;
        sum += weight * noise(seed, k as u64, u * period as f32, v * period as f32, period);
        total += weight;
        weight *= 0.5;
    }
    sum / total
}

impl Ground {
    /// The texture, `size` × `size` texels, row-major linear albedo.
    pub fn generate(self, size: u32, seed: u64) -> Vec<Vec3> {
        let n = size as usize;
        let mut out = Vec::with_capacity(n * n);
        for y in 0..n {
            for x in 0..n {
                let u = (x as f32 + 0.5) / size as f32;
                let v = (y as f32 + 0.5) / size as f32;
                out.push(self.texel(seed, u, v));
            }
        }
        out
    }

    fn texel(self, seed: u64, u: f32, v: f32) -> Vec3 {
        match self {
            Ground::Strata => {
                // Band index from the wavy height: 24 bands of uneven
                // thickness per tile.
                let wave = (fbm(seed, u, v, 3, 3) - 0.5) * 0.06;
                let h = (v + wave).rem_euclid(1.0) * 24.0;
                let band = h.floor() as u64;
                let thick = 0.6 + 0.8 * unit_f32(seed, 0x5A1, band);
                let pick = (unit_f32(seed, 0x5A2, band) * STRATA.len() as f32) as usize;
                let next = (unit_f32(seed, 0x5A2, (band + 1) % 24) * STRATA.len() as f32) as usize;
                let f = h.fract();
                // A soft edge at the band's top, sharper for thick beds.
                let edge = ((f - (1.0 - 0.15 / thick)) / (0.15 / thick)).clamp(0.0, 1.0);
                let base = STRATA[pick.min(5)].lerp(STRATA[next.min(5)], edge * edge);
                let grain = 0.85 + 0.3 * fbm(seed ^ 0x9, u, v, 32, 3);
                base * grain
            }
            Ground::Grass => {
                let patch = fbm(seed, u, v, 4, 4);
                let dry = ((patch - 0.55) * 4.0).clamp(0.0, 1.0);
                let green = Vec3::new(0.07, 0.12, 0.035).lerp(Vec3::new(0.2, 0.18, 0.07), dry);
                let blades = fbm(seed ^ 0x7, u, v, 64, 2);
                let speck = if blades < 0.3 { 0.7 } else { 1.0 };
                green * (0.8 + 0.4 * blades) * speck
            }
            Ground::Snow => {
                let drift = fbm(seed, u, v, 4, 5);
                let base = Vec3::new(0.9, 0.92, 0.95).lerp(
                    Vec3::new(0.72, 0.76, 0.84),
                    (0.6 - drift).clamp(0.0, 0.6) / 0.6,
                );
                base * (0.97 + 0.06 * fbm(seed ^ 0x3, u, v, 48, 2))
            }
        }
    }
}

/// `texels` (`size` square, linear albedo) as an 8-bit RGB image (linear
/// values, no gamma, as the renderer reads textures).
pub fn image(size: u32, texels: &[Vec3]) -> image::DynamicImage {
    let img = image::RgbImage::from_fn(size, size, |x, y| {
        let c = texels[(y * size + x) as usize];
        let q = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
        image::Rgb([q(c.x), q(c.y), q(c.z)])
    });
    image::DynamicImage::ImageRgb8(img)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each texture tiles: the texels across its left and right edges (and
    /// top and bottom) differ no more than neighbours inside do, and it
    /// is the same bytes for the same seed.
    #[test]
    fn ground_textures_tile_and_repeat() {
        for kind in [Ground::Strata, Ground::Grass, Ground::Snow] {
            let n = 128usize;
            let t = kind.generate(n as u32, 5);
            assert_eq!(t, kind.generate(n as u32, 5));
            assert_ne!(t, kind.generate(n as u32, 6));
            let at = |x: usize, y: usize| t[y * n + x];
            let step = |a: Vec3, b: Vec3| (a - b).abs().max_element();
            let inside: f32 = (0..n)
                .map(|y| step(at(n / 2, y), at(n / 2 - 1, y)))
                .sum::<f32>()
                + (0..n)
                    .map(|x| step(at(x, n / 2), at(x, n / 2 - 1)))
                    .sum::<f32>();
            let across: f32 = (0..n).map(|y| step(at(0, y), at(n - 1, y))).sum::<f32>()
                + (0..n).map(|x| step(at(x, 0), at(x, n - 1))).sum::<f32>();
            assert!(
                across <= 2.0 * inside + 1.0,
                "{kind:?}: seams {across} vs {inside}"
            );
            assert!(t
                .iter()
                .all(|c| c.min_element() >= 0.0 && c.max_element() <= 1.0));
        }
    }

    /// Strata run level: along a row the colour varies far less than down
    /// a column.
    #[test]
    fn strata_are_horizontal_bands() {
        let n = 128usize;
        let t = Ground::Strata.generate(n as u32, 2);
        let var = |cs: Vec<Vec3>| {
            let mean = cs.iter().copied().sum::<Vec3>() / cs.len() as f32;
            cs.iter().map(|c| (*c - mean).length_squared()).sum::<f32>() / cs.len() as f32
        };
        let row: f32 = (0..n)
            .map(|y| var((0..n).map(|x| t[y * n + x]).collect()))
            .sum();
        let column: f32 = (0..n)
            .map(|x| var((0..n).map(|y| t[y * n + x]).collect()))
            .sum();
        assert!(column > 3.0 * row, "column {column} vs row {row}");
    }
}
