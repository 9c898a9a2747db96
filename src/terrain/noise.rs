//! Fractal noise (fBm): a sum of octaves of value or Perlin gradient noise
//! sampled at world (x, z).
//!
//! ```json
//! "generator": { "type": "noise", "basis": "perlin",
//!                "octaves": { "count": 6, "frequency": 0.02, "lacunarity": 2, "gain": 0.5 },
//!                "ridged": false, "warp": { "amount": 4, "frequency": 0.03 },
//!                "island": { "radius": 0.45, "falloff": 0.15, "sea_level": 0.25 } }
//! "octaves": [ [0.08, 0.7752], [1.1, 0.1316], [5.0, 0.02584], [20, 0.01078], [100, 0.00189] ],
//! "offset": -8
//! ```
//!
//! Octave k uses the seed `seed + k`, so octaves are independent. Value
//! noise blends hash(seed, x, z) lattice values in [−1, 1] with smoothstep;
//! Perlin noise blends gradients hash-picked from 8 directions with the
//! quintic fade 6t⁵ − 15t⁴ + 10t³. `ridged` folds each octave to
//! (1 − |n|)². `warp` displaces the sample point by two value-noise fields
//! before sampling. `island` scales the heights by a radial mask that is 1
//! inside `radius` (fraction of the terrain's half size) and falls to 0 over
//! `falloff`, and flattens everything below `sea_level` (fraction of the
//! range) to it.

use serde::Deserialize;

use crate::hash::hash3;

/// Noise basis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Lattice values with smoothstep blending.
    Value,
    /// Perlin gradient noise.
    #[default]
    Perlin,
}

/// The octaves: generated from a base or listed one by one.
#[derive(Debug, Clone, PartialEq, schemars::JsonSchema)]
#[schemars(untagged, deny_unknown_fields)]
pub enum Octaves {
    /// `count` octaves; octave k has frequency · lacunarity^k and amplitude gain^k.
    Fractal {
        /// Number of octaves, 1..=16.
        count: u32,
        /// Frequency of the first octave, cycles per world unit, > 0.
        frequency: f64,
        /// Frequency ratio between octaves, 1..=4. Default 2.
        #[schemars(default = "default_lacunarity")]
        lacunarity: f64,
        /// Amplitude ratio between octaves, 0..=1. Default 0.5.
        #[schemars(default = "default_gain")]
        gain: f64,
    },
    /// Explicit [amplitude, frequency] pairs (frequency in cycles per world unit).
    List(Vec<[f64; 2]>),
}

/// [`Octaves::Fractal`] as read from an object.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FractalFile {
    count: u32,
    frequency: f64,
    #[serde(default = "default_lacunarity")]
    lacunarity: f64,
    #[serde(default = "default_gain")]
    gain: f64,
}

/// An object is the fractal form, an array the list: read by what the
/// value is rather than by trying each form (serde's `untagged`), so that
/// an error names the field at fault and says what is wrong with it.
impl<'de> Deserialize<'de> for Octaves {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Octaves, D::Error> {
        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = Octaves;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object {\"count\", \"frequency\", ...} or a list of [amplitude, frequency] pairs")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Octaves, A::Error> {
                let f =
                    FractalFile::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(Octaves::Fractal {
                    count: f.count,
                    frequency: f.frequency,
                    lacunarity: f.lacunarity,
                    gain: f.gain,
                })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Octaves, A::Error> {
                Vec::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))
                    .map(Octaves::List)
            }
        }
        d.deserialize_any(Either)
    }
}

fn default_lacunarity() -> f64 {
    2.0
}
fn default_gain() -> f64 {
    0.5
}

impl Octaves {
    /// (amplitude, frequency) of every octave.
    pub fn pairs(&self) -> Vec<(f64, f64)> {
        match self {
            Octaves::Fractal {
                count,
                frequency,
                lacunarity,
                gain,
            } => (0..*count)
                .map(|k| (gain.powi(k as i32), frequency * lacunarity.powi(k as i32)))
                .collect(),
            Octaves::List(v) => v.iter().map(|p| (p[0], p[1])).collect(),
        }
    }
}

/// Domain warp.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Warp {
    /// Largest displacement of the sample point, world units, 0..=1e4.
    pub amount: f64,
    /// Frequency of the warp field, cycles per world unit, > 0.
    pub frequency: f64,
}

/// Island mask.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Island {
    /// Radius of the full-height area, fraction of the half size, 0..=1. Default 0.5.
    pub radius: f64,
    /// Width of the fall to the sea, same units, > 0. Default 0.3.
    pub falloff: f64,
    /// Heights below this fraction of the range become flat sea, 0..=1. Default 0.2.
    pub sea_level: f64,
}

impl Default for Island {
    fn default() -> Self {
        Island {
            radius: 0.5,
            falloff: 0.3,
            sea_level: 0.2,
        }
    }
}

/// Parameters of the noise generator.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Noise {
    /// `perlin` (default) or `value`.
    pub basis: Basis,
    /// The octaves. Default 6 fractal octaves from 0.02 cycles per unit.
    pub octaves: Octaves,
    /// Added to the sum, world units. Default 0.
    pub offset: f64,
    /// Ridged multifractal octaves. Default false.
    pub ridged: bool,
    /// Optional domain warp.
    pub warp: Option<Warp>,
    /// Optional island mask.
    pub island: Option<Island>,
}

impl Default for Noise {
    fn default() -> Self {
        Noise {
            basis: Default::default(),
            octaves: Octaves::Fractal {
                count: 6,
                frequency: 0.02,
                lacunarity: 2.0,
                gain: 0.5,
            },
            offset: 0.0,
            ridged: false,
            warp: None,
            island: None,
        }
    }
}

/// Lattice hash of (seed, ix, iz) to 64 bits.
#[inline]
fn lattice(seed: u64, ix: i64, iz: i64) -> u64 {
    hash3(seed, ix as u64, iz as u64)
}

#[inline]
fn smoothstep(t: f64) -> f64 {
    t * t * (3.0 - 2.0 * t)
}

#[inline]
fn quintic(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

#[inline]
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + (b - a) * t
}

/// Value noise in [−1, 1] at (x, z) (lattice spacing 1).
pub fn value_noise(seed: u64, x: f64, z: f64) -> f64 {
    let (x0, z0) = (x.floor(), z.floor());
    let (tx, tz) = (smoothstep(x - x0), smoothstep(z - z0));
    let (ix, iz) = (x0 as i64, z0 as i64);
    let v = |dx: i64, dz: i64| {
        (lattice(seed, ix + dx, iz + dz) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    lerp(lerp(v(0, 0), v(1, 0), tx), lerp(v(0, 1), v(1, 1), tx), tz)
}

/// The 8 gradient directions of 2D Perlin noise (unit length).
const GRADIENTS: [(f64, f64); 8] = [
    (1.0, 0.0),
    (-1.0, 0.0),
    (0.0, 1.0),
    (0.0, -1.0),
    (
        std::f64::consts::FRAC_1_SQRT_2,
        std::f64::consts::FRAC_1_SQRT_2,
    ),
    (
        -std::f64::consts::FRAC_1_SQRT_2,
        std::f64::consts::FRAC_1_SQRT_2,
    ),
    (
        std::f64::consts::FRAC_1_SQRT_2,
        -std::f64::consts::FRAC_1_SQRT_2,
    ),
    (
        -std::f64::consts::FRAC_1_SQRT_2,
        -std::f64::consts::FRAC_1_SQRT_2,
    ),
];

/// Perlin gradient noise at (x, z), roughly in [−1, 1] (scaled by √2).
pub fn perlin_noise(seed: u64, x: f64, z: f64) -> f64 {
    let (x0, z0) = (x.floor(), z.floor());
    let (fx, fz) = (x - x0, z - z0);
    let (ix, iz) = (x0 as i64, z0 as i64);
    let g = |dx: i64, dz: i64| {
        let (gx, gz) = GRADIENTS[(lattice(seed, ix + dx, iz + dz) >> 61) as usize];
        gx * (fx - dx as f64) + gz * (fz - dz as f64)
    };
    let (tx, tz) = (quintic(fx), quintic(fz));
    std::f64::consts::SQRT_2 * lerp(lerp(g(0, 0), g(1, 0), tx), lerp(g(0, 1), g(1, 1), tx), tz)
}

impl Noise {
    /// The noise height at world (x, z) before the island mask.
    pub fn height(&self, seed: u64, x: f64, z: f64) -> f64 {
        self.height_with(&self.octaves.pairs(), seed, x, z)
    }

    /// [`Noise::height`] with the octaves' (amplitude, frequency) pairs
    /// computed once by the caller.
    fn height_with(&self, octaves: &[(f64, f64)], seed: u64, x: f64, z: f64) -> f64 {
        let (x, z) = match self.warp {
            Some(w) => (
                x + w.amount
                    * value_noise(seed ^ 0x5741_5250_0001, x * w.frequency, z * w.frequency),
                z + w.amount
                    * value_noise(seed ^ 0x5741_5250_0002, x * w.frequency, z * w.frequency),
            ),
            None => (x, z),
        };
        let mut sum = self.offset;
        for (k, &(amp, freq)) in octaves.iter().enumerate() {
            let octave_seed = seed.wrapping_add(k as u64);
            let n = match self.basis {
                Basis::Value => value_noise(octave_seed, x * freq, z * freq),
                Basis::Perlin => perlin_noise(octave_seed, x * freq, z * freq),
            };
            let n = if self.ridged {
                (1.0 - n.abs()).powi(2)
            } else {
                n
            };
            sum += amp * n;
        }
        sum
    }
}

/// The mean of a ridged octave's term (1 − |n|)² over the plane, for each
/// basis: what an octave too fine for a grid is replaced by
/// ([`Noise::limited`]). Measured over 10⁶ points (test
/// `ridged_means_are_measured`).
const RIDGED_MEAN: [f64; 2] = [RIDGED_MEAN_VALUE, RIDGED_MEAN_PERLIN];
const RIDGED_MEAN_VALUE: f64 = 0.4693;
const RIDGED_MEAN_PERLIN: f64 = 0.5954;

impl Noise {
    /// The noise for a grid of spacing `cell` (world units), without
    /// aliasing: an octave whose frequency f has f·cell ≥ ½ (finer than the
    /// grid can hold) is left out, its mean kept, and octaves fade out
    /// linearly from f·cell = ¼. Far-field rings sample the terrain's noise
    /// this way; the octaves are worked out once for the whole grid.
    pub fn limited(&self, cell: f64) -> Limited<'_> {
        let mean = RIDGED_MEAN[usize::from(self.basis == Basis::Perlin)];
        let mut constant = 0.0;
        let octaves: Vec<(f64, f64)> = self
            .octaves
            .pairs()
            .into_iter()
            .map(|(amp, freq)| {
                let keep = (2.0 - 4.0 * freq * cell).clamp(0.0, 1.0);
                if self.ridged {
                    constant += amp * (1.0 - keep) * mean;
                }
                (amp * keep, freq)
            })
            .filter(|&(amp, _)| amp != 0.0)
            .collect();
        Limited {
            noise: self,
            octaves,
            constant,
        }
    }
}

/// A [`Noise`] with the octaves a grid can hold ([`Noise::limited`]).
pub struct Limited<'a> {
    noise: &'a Noise,
    octaves: Vec<(f64, f64)>,
    /// The means of the ridged octaves left out.
    constant: f64,
}

impl Limited<'_> {
    /// [`Noise::height`] with the grid's octaves.
    pub fn height(&self, seed: u64, x: f64, z: f64) -> f64 {
        self.noise.height_with(&self.octaves, seed, x, z) + self.constant
    }
}

/// The island mask's height at tile coordinates (u, v) (−1 to 1 across
/// the tile, further outside it) for a height `h` normalised to [0, 1].
pub fn island_height(island: &Island, h: f64, u: f64, v: f64) -> f64 {
    let r = (u * u + v * v).sqrt();
    let t = ((r - island.radius) / island.falloff).clamp(0.0, 1.0);
    (h * (1.0 - smoothstep(t))).max(island.sea_level)
}

/// Generates noise heights on a `w` × `h` grid of extent `size` (world units).
/// With an island mask the result is normalised to [0, 1].
pub fn generate(p: &Noise, w: usize, h: usize, size: [f64; 2], seed: u64) -> Vec<f64> {
    generate_ranged(p, w, h, size, seed).0
}

/// [`generate`], with the range of the heights the island mask was
/// normalised from (None without a mask).
pub fn generate_ranged(
    p: &Noise,
    w: usize,
    h: usize,
    size: [f64; 2],
    seed: u64,
) -> (Vec<f64>, Option<(f64, f64)>) {
    use rayon::prelude::*;
    let mut data = vec![0.0; w * h];
    let octaves = p.octaves.pairs();
    data.par_chunks_mut(w).enumerate().for_each(|(i, row)| {
        let z = (i as f64 / (h - 1) as f64 - 0.5) * size[1];
        for (j, v) in row.iter_mut().enumerate() {
            let x = (j as f64 / (w - 1) as f64 - 0.5) * size[0];
            *v = p.height_with(&octaves, seed, x, z);
        }
    });
    let mut range = None;
    if let Some(island) = p.island {
        range = Some(super::heightmap::range(&data));
        super::heightmap::normalise(&mut data, 1.0);
        for i in 0..h {
            for j in 0..w {
                let (u, v) = (
                    2.0 * j as f64 / (w - 1) as f64 - 1.0,
                    2.0 * i as f64 / (h - 1) as f64 - 1.0,
                );
                let k = i * w + j;
                data[k] = island_height(&island, data[k], u, v);
            }
        }
    }
    (data, range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ridged_means_are_measured() {
        for (basis, k) in [(Basis::Value, 0), (Basis::Perlin, 1)] {
            let n = 1000;
            let mut sum = 0.0;
            for i in 0..n {
                for j in 0..n {
                    let (x, z) = (j as f64 * 0.731 + 0.1, i as f64 * 0.677 + 0.2);
                    let v = match basis {
                        Basis::Value => value_noise(9, x, z),
                        Basis::Perlin => perlin_noise(9, x, z),
                    };
                    sum += (1.0 - v.abs()).powi(2);
                }
            }
            let mean = sum / (n * n) as f64;
            assert!((mean - RIDGED_MEAN[k]).abs() < 2e-3, "{basis:?}: {mean}");
        }
    }

    #[test]
    fn a_fine_enough_grid_keeps_every_octave() {
        let p = Noise {
            ridged: true,
            ..Noise::default()
        };
        // Finest octave 0.02 · 2⁵ = 0.64 per unit: all kept below 0.39 spacing.
        for (x, z) in [(1.5, -2.0), (40.0, 17.25)] {
            assert_eq!(p.limited(0.39).height(3, x, z), p.height(3, x, z));
            assert_ne!(p.limited(1.0).height(3, x, z), p.height(3, x, z));
        }
    }

    #[test]
    fn value_noise_hits_lattice_values_and_is_continuous() {
        // At lattice points the value is the hashed one.
        let at = value_noise(3, 5.0, -2.0);
        let expect = (lattice(3, 5, -2) >> 11) as f64 / (1u64 << 52) as f64 - 1.0;
        assert_eq!(at, expect);
        for k in 0..100 {
            let x = k as f64 * 0.173 - 7.0;
            let (a, b) = (value_noise(3, x, 1.3), value_noise(3, x + 1e-6, 1.3));
            assert!((a - b).abs() < 1e-4 && a.abs() <= 1.0);
        }
    }

    #[test]
    fn perlin_noise_is_zero_on_the_lattice_and_bounded() {
        for (x, z) in [(0.0, 0.0), (3.0, -4.0), (-17.0, 9.0)] {
            assert_eq!(perlin_noise(7, x, z), 0.0);
        }
        for k in 0..2000 {
            let (x, z) = (k as f64 * 0.0731, k as f64 * 0.1193 - 50.0);
            assert!(perlin_noise(7, x, z).abs() <= 1.0 + 1e-9);
        }
    }

    #[test]
    fn octave_list_follows_the_spec_example() {
        let list = Octaves::List(vec![[0.08, 1.0 / 1.29], [100.0, 1.0 / 529.0]]);
        assert_eq!(list.pairs(), vec![(0.08, 1.0 / 1.29), (100.0, 1.0 / 529.0)]);
        let fractal = Octaves::Fractal {
            count: 3,
            frequency: 0.1,
            lacunarity: 2.0,
            gain: 0.5,
        };
        assert_eq!(fractal.pairs(), vec![(1.0, 0.1), (0.5, 0.2), (0.25, 0.4)]);
    }

    #[test]
    fn each_octave_has_its_own_seed() {
        // Two identical octaves would double one field; seeded apart they differ.
        let p = Noise {
            octaves: Octaves::List(vec![[1.0, 0.1], [1.0, 0.1]]),
            ..Noise::default()
        };
        let one = Noise {
            octaves: Octaves::List(vec![[1.0, 0.1]]),
            ..Noise::default()
        };
        let (x, z) = (3.3, 4.4);
        assert!((p.height(5, x, z) - 2.0 * one.height(5, x, z)).abs() > 1e-6);
    }

    #[test]
    fn ridged_octaves_are_non_negative_and_peak_at_one() {
        let p = Noise {
            ridged: true,
            octaves: Octaves::List(vec![[1.0, 0.3]]),
            ..Noise::default()
        };
        let d = generate(&p, 64, 64, [100.0, 100.0], 1);
        assert!(d.iter().all(|&v| (0.0..=1.0).contains(&v)));
        assert!(d.iter().cloned().fold(0.0, f64::max) > 0.95);
    }

    #[test]
    fn island_sinks_the_edges_to_sea_level() {
        let p = Noise {
            island: Some(Island {
                radius: 0.4,
                falloff: 0.3,
                sea_level: 0.15,
            }),
            ..Noise::default()
        };
        let d = generate(&p, 65, 65, [100.0, 100.0], 2);
        for k in 0..65 {
            for v in [d[k], d[64 * 65 + k], d[k * 65], d[k * 65 + 64]] {
                assert_eq!(v, 0.15, "edges are sea");
            }
        }
        assert!(
            d[32 * 65 + 32] > 0.15 || d.iter().any(|&v| v > 0.5),
            "land in the middle"
        );
    }

    #[test]
    fn warp_moves_features() {
        let plain = Noise::default();
        let warped = Noise {
            warp: Some(Warp {
                amount: 10.0,
                frequency: 0.05,
            }),
            ..Noise::default()
        };
        let a = generate(&plain, 32, 32, [100.0, 100.0], 4);
        let b = generate(&warped, 32, 32, [100.0, 100.0], 4);
        assert_ne!(a, b);
    }
}
