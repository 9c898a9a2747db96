//! Post-processing applied to the heights in order, each a pure function of
//! its parameters (and the seed, for hydraulic erosion).
//!
//! ```json
//! "post": [ { "type": "smooth", "filter": "gaussian", "radius": 2 },
//!           { "type": "thermal", "talus": 35, "iterations": 50 },
//!           { "type": "hydraulic", "droplets": 50000 },
//!           { "type": "terrace", "levels": 8, "sharpness": 0.6 },
//!           { "type": "normalize" } ]
//! ```
//!
//! Heights are world units; `cell` is the grid spacing [dx, dz].

use serde::Deserialize;

use crate::hash::unit_f64;

/// One post-processing step.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PostStep {
    /// Map the heights linearly onto [0, terrain.height].
    Normalize,
    /// Low-pass filter.
    Smooth {
        /// `gaussian` (σ = radius/2) or `box`.
        #[serde(default)]
        filter: SmoothFilter,
        /// Kernel radius in samples, 1..=64. Default 2.
        #[serde(default = "default_radius")]
        radius: u32,
    },
    /// Thermal erosion: material slides down slopes steeper than the talus angle.
    Thermal {
        /// Talus angle, degrees, 0..=89. Default 35.
        #[serde(default = "default_talus")]
        talus: f64,
        /// Iterations, 1..=10000. Default 50.
        #[serde(default = "default_thermal_iterations")]
        iterations: u32,
        /// Fraction of the excess moved per iteration, 0..=1. Default 0.5.
        #[serde(default = "default_strength")]
        strength: f64,
    },
    /// Hydraulic erosion by water droplets (particle model).
    Hydraulic(Hydraulic),
    /// Terraces: the heights snap toward `levels` flat steps.
    Terrace {
        /// Number of levels, 2..=1024. Default 8.
        #[serde(default = "default_levels")]
        levels: u32,
        /// 0 leaves the slope as is, 1 gives hard steps. Default 0.7.
        #[serde(default = "default_sharpness")]
        sharpness: f64,
    },
}

/// Smoothing kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SmoothFilter {
    /// Gaussian with σ = radius / 2, truncated at the radius.
    #[default]
    Gaussian,
    /// Mean over the (2r + 1)² window.
    Box,
}

fn default_radius() -> u32 {
    2
}
fn default_talus() -> f64 {
    35.0
}
fn default_thermal_iterations() -> u32 {
    50
}
fn default_strength() -> f64 {
    0.5
}
fn default_levels() -> u32 {
    8
}
fn default_sharpness() -> f64 {
    0.7
}

/// Droplet erosion parameters (after H. Beyer, "Implementation of a method
/// for hydraulic erosion", 2015).
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Hydraulic {
    /// Droplets, 1..=10,000,000. Default 50000.
    pub droplets: u32,
    /// How much a droplet keeps its direction, 0..=1. Default 0.05.
    pub inertia: f64,
    /// Sediment capacity factor, > 0. Default 4.
    pub capacity: f64,
    /// Fraction of excess sediment dropped per step, 0..=1. Default 0.3.
    pub deposition: f64,
    /// Fraction of free capacity taken from the ground per step, 0..=1. Default 0.3.
    pub erosion: f64,
    /// Fraction of water evaporating per step, 0..=1. Default 0.01.
    pub evaporation: f64,
    /// Steps before a droplet dies, 1..=10000. Default 64.
    pub lifetime: u32,
}

impl Default for Hydraulic {
    fn default() -> Self {
        Hydraulic {
            droplets: 50_000,
            inertia: 0.05,
            capacity: 4.0,
            deposition: 0.3,
            erosion: 0.3,
            evaporation: 0.01,
            lifetime: 64,
        }
    }
}

/// Applies `step` to the `w` × `h` heights (world units) with grid spacing `cell`.
pub fn apply(
    step: &PostStep,
    data: &mut Vec<f64>,
    w: usize,
    h: usize,
    cell: [f64; 2],
    top: f64,
    seed: u64,
) {
    match step {
        PostStep::Normalize => super::heightmap::normalise(data, top),
        PostStep::Smooth { filter, radius } => {
            *data = smooth(data, w, h, *filter, *radius as usize)
        }
        PostStep::Thermal {
            talus,
            iterations,
            strength,
        } => thermal(data, w, h, cell, *talus, *iterations, *strength),
        PostStep::Hydraulic(p) => hydraulic(data, w, h, p, seed),
        PostStep::Terrace { levels, sharpness } => terrace(data, *levels, *sharpness),
    }
}

/// Separable smoothing; edges use the samples that exist (renormalised weights).
pub fn smooth(data: &[f64], w: usize, h: usize, filter: SmoothFilter, radius: usize) -> Vec<f64> {
    let weights: Vec<f64> = (0..=2 * radius)
        .map(|k| {
            let d = k as f64 - radius as f64;
            match filter {
                SmoothFilter::Box => 1.0,
                SmoothFilter::Gaussian => {
                    let sigma = radius as f64 / 2.0;
                    (-(d * d) / (2.0 * sigma * sigma)).exp()
                }
            }
        })
        .collect();
    let pass =
        |src: &[f64], stride: usize, len: usize, lines: usize, line_stride: usize| -> Vec<f64> {
            let mut out = vec![0.0; src.len()];
            for l in 0..lines {
                for k in 0..len {
                    let (mut sum, mut norm) = (0.0, 0.0);
                    for (t, wt) in weights.iter().enumerate() {
                        let q = k as isize + t as isize - radius as isize;
                        if q >= 0 && (q as usize) < len {
                            sum += src[l * line_stride + q as usize * stride] * wt;
                            norm += wt;
                        }
                    }
                    out[l * line_stride + k * stride] = sum / norm;
                }
            }
            out
        };
    let rows = pass(data, 1, w, h, w);
    pass(&rows, w, h, w, 1)
}

/// Thermal erosion: in each iteration every sample whose drop to a lower
/// 4-neighbour exceeds the talus height (tan(talus) · spacing) sends
/// strength · excess / 2 to each such neighbour in proportion to its excess.
/// Moves are gathered into a delta buffer first, so the result does not
/// depend on visiting order, and material is conserved exactly up to rounding.
pub fn thermal(
    data: &mut [f64],
    w: usize,
    h: usize,
    cell: [f64; 2],
    talus_deg: f64,
    iterations: u32,
    strength: f64,
) {
    let tan = talus_deg.to_radians().tan();
    let limit = [tan * cell[0], tan * cell[0], tan * cell[1], tan * cell[1]];
    let mut delta = vec![0.0f64; w * h];
    for _ in 0..iterations {
        delta.iter_mut().for_each(|d| *d = 0.0);
        for i in 0..h {
            for j in 0..w {
                let k = i * w + j;
                let hk = data[k];
                let neighbours = [
                    (j > 0).then(|| k - 1),
                    (j + 1 < w).then(|| k + 1),
                    (i > 0).then(|| k - w),
                    (i + 1 < h).then(|| k + w),
                ];
                let mut excess = [0.0f64; 4];
                let mut total = 0.0;
                let mut max_excess = 0.0f64;
                for (n, (nb, lim)) in neighbours.iter().zip(limit).enumerate() {
                    if let Some(q) = nb {
                        let e = hk - data[*q] - lim;
                        if e > 0.0 {
                            excess[n] = e;
                            total += e;
                            max_excess = max_excess.max(e);
                        }
                    }
                }
                if total <= 0.0 {
                    continue;
                }
                let moved = strength * max_excess / 2.0;
                for (n, nb) in neighbours.iter().enumerate() {
                    if let Some(q) = nb {
                        if excess[n] > 0.0 {
                            let share = moved * excess[n] / total;
                            delta[*q] += share;
                            delta[k] -= share;
                        }
                    }
                }
            }
        }
        for (v, d) in data.iter_mut().zip(&delta) {
            *v += d;
        }
    }
}

/// Height and gradient of the bilinear surface at (x, z) in sample units.
fn height_gradient(data: &[f64], w: usize, x: f64, z: f64) -> (f64, f64, f64) {
    let (j, i) = (x.floor() as usize, z.floor() as usize);
    let (u, v) = (x - j as f64, z - i as f64);
    let k = i * w + j;
    let (h00, h10, h01, h11) = (data[k], data[k + 1], data[k + w], data[k + w + 1]);
    let gx = (h10 - h00) * (1.0 - v) + (h11 - h01) * v;
    let gz = (h01 - h00) * (1.0 - u) + (h11 - h10) * u;
    let height =
        h00 * (1.0 - u) * (1.0 - v) + h10 * u * (1.0 - v) + h01 * (1.0 - u) * v + h11 * u * v;
    (height, gx, gz)
}

/// Adds `amount` to the four samples around (x, z) with bilinear weights.
fn splat(data: &mut [f64], w: usize, x: f64, z: f64, amount: f64) {
    let (j, i) = (x.floor() as usize, z.floor() as usize);
    let (u, v) = (x - j as f64, z - i as f64);
    let k = i * w + j;
    data[k] += amount * (1.0 - u) * (1.0 - v);
    data[k + 1] += amount * u * (1.0 - v);
    data[k + w] += amount * (1.0 - u) * v;
    data[k + w + 1] += amount * u * v;
}

const STREAM_DROP: u64 = 0x48_00;

/// Hydraulic erosion. Droplets start at hash(seed, droplet) positions and
/// run in order (so the result is the same on every run); each moves
/// downhill with inertia, carries sediment up to
/// capacity · max(−Δh, 0.01) · speed · water, erodes from or deposits to the
/// four samples around it (bilinear weights), evaporates, and at its end
/// (lifetime, a flat spot, or the edge of the map) leaves its sediment where
/// it is. Erosion takes at most the drop in height to the next position, so
/// no pits are dug. Material is conserved up to rounding.
pub fn hydraulic(data: &mut [f64], w: usize, h: usize, p: &Hydraulic, seed: u64) {
    const GRAVITY: f64 = 4.0;
    const MIN_SLOPE: f64 = 0.01;
    for d in 0..p.droplets as u64 {
        let mut x = unit_f64(seed, STREAM_DROP, 2 * d) * (w - 1) as f64;
        let mut z = unit_f64(seed, STREAM_DROP, 2 * d + 1) * (h - 1) as f64;
        x = x.min((w - 1) as f64 - 1e-9);
        z = z.min((h - 1) as f64 - 1e-9);
        let (mut dx, mut dz) = (0.0f64, 0.0f64);
        let (mut speed, mut water, mut sediment) = (1.0f64, 1.0f64, 0.0f64);
        for _ in 0..p.lifetime {
            let (height, gx, gz) = height_gradient(data, w, x, z);
            dx = dx * p.inertia - gx * (1.0 - p.inertia);
            dz = dz * p.inertia - gz * (1.0 - p.inertia);
            let len = (dx * dx + dz * dz).sqrt();
            if len < 1e-12 {
                break; // flat: nowhere to go
            }
            dx /= len;
            dz /= len;
            let (nx, nz) = (x + dx, z + dz);
            if nx < 0.0 || nz < 0.0 || nx >= (w - 1) as f64 || nz >= (h - 1) as f64 {
                break; // would leave the map
            }
            let new_height = height_gradient(data, w, nx, nz).0;
            let dh = new_height - height;
            let capacity = (-dh).max(MIN_SLOPE) * speed * water * p.capacity;
            if sediment > capacity || dh > 0.0 {
                // Uphill: fill the hole up to the new height; otherwise drop
                // part of the excess.
                let drop = if dh > 0.0 {
                    dh.min(sediment)
                } else {
                    (sediment - capacity) * p.deposition
                };
                sediment -= drop;
                splat(data, w, x, z, drop);
            } else {
                let take = ((capacity - sediment) * p.erosion).min(-dh);
                sediment += take;
                splat(data, w, x, z, -take);
            }
            speed = (speed * speed + dh.abs() * GRAVITY).sqrt().min(1e3);
            water *= 1.0 - p.evaporation;
            x = nx;
            z = nz;
        }
        // The droplet ends: its sediment stays where it is.
        splat(data, w, x, z, sediment);
    }
}

/// Terraces between the current minimum and maximum: with step
/// s = (max − min)/levels and t = (h − min)/s, the height becomes
/// min + s·(⌊t⌋ + smoothstep(sharpness, 1, frac t)), clamped to the top level,
/// so sharpness 1 leaves exactly `levels` flat levels.
pub fn terrace(data: &mut [f64], levels: u32, sharpness: f64) {
    let (lo, hi) = data
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    terrace_within(data, levels, sharpness, lo, hi);
}

/// [`terrace`] between `lo` and `hi` rather than the heights' own range
/// (a far-field ring takes its tile's).
pub fn terrace_within(data: &mut [f64], levels: u32, sharpness: f64, lo: f64, hi: f64) {
    let step = (hi - lo) / levels as f64;
    if step <= 0.0 {
        return;
    }
    for v in data.iter_mut() {
        let t = ((*v - lo) / step).min(levels as f64 - 1.0 + 0.999_999_999);
        let (base, f) = (t.floor(), t - t.floor());
        let e0 = sharpness.min(1.0 - 1e-9);
        let x = ((f - e0) / (1.0 - e0)).clamp(0.0, 1.0);
        let ramp = if sharpness >= 1.0 {
            0.0
        } else {
            x * x * (3.0 - 2.0 * x)
        };
        *v = lo + step * (base + ramp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::fnv1a;

    /// A cone-shaped hill on 33 × 33 samples, 1 unit apart.
    fn cone() -> Vec<f64> {
        (0..33 * 33)
            .map(|k| {
                let (x, z) = ((k % 33) as f64 - 16.0, (k / 33) as f64 - 16.0);
                (20.0 - (x * x + z * z).sqrt()).max(0.0)
            })
            .collect()
    }

    /// Over the f32 roundings (the precision heights are stored in), so
    /// that a last-bit difference in a platform's exp or tan does not show.
    fn fingerprint(d: &[f64]) -> u64 {
        fnv1a(d.iter().flat_map(|v| (*v as f32).to_bits().to_le_bytes()))
    }

    #[test]
    fn smoothing_keeps_constants_and_lowers_peaks() {
        for filter in [SmoothFilter::Gaussian, SmoothFilter::Box] {
            let flat = vec![3.0; 100];
            let s = smooth(&flat, 10, 10, filter, 2);
            assert!(s.iter().all(|v| (v - 3.0).abs() < 1e-12));
            let c = cone();
            let s = smooth(&c, 33, 33, filter, 3);
            assert!(s[16 * 33 + 16] < c[16 * 33 + 16]);
        }
        // Box radius 1 in the middle of a spike: (1·9 + 8·0)/9 per pass pair.
        let mut spike = vec![0.0; 25];
        spike[12] = 9.0;
        assert!((smooth(&spike, 5, 5, SmoothFilter::Box, 1)[12] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn thermal_erosion_flattens_slopes_to_the_talus_and_conserves() {
        let mut d = cone(); // slopes of 45°
        let before: f64 = d.iter().sum();
        thermal(&mut d, 33, 33, [1.0, 1.0], 30.0, 400, 0.5);
        let after: f64 = d.iter().sum();
        assert!(
            (before - after).abs() < 1e-9 * before,
            "mass {before} → {after}"
        );
        let max_step = (0..33 * 33 - 1)
            .filter(|k| k % 33 != 32)
            .map(|k| (d[k + 1] - d[k]).abs())
            .fold(0.0, f64::max);
        assert!(
            max_step < 30f64.to_radians().tan() + 0.05,
            "steepest step {max_step}"
        );
    }

    #[test]
    fn hydraulic_erosion_moves_material_downhill_and_conserves() {
        let mut d = cone();
        let before: f64 = d.iter().sum();
        let centre_before = d[16 * 33 + 16] + d[16 * 33 + 15] + d[15 * 33 + 16];
        let p = Hydraulic {
            droplets: 3000,
            ..Hydraulic::default()
        };
        hydraulic(&mut d, 33, 33, &p, 7);
        let after: f64 = d.iter().sum();
        assert!(
            (before - after).abs() < 1e-9 * before,
            "mass {before} → {after}"
        );
        let centre_after = d[16 * 33 + 16] + d[16 * 33 + 15] + d[15 * 33 + 16];
        assert!(centre_after < centre_before, "the summit loses material");
        // The mean height of the lower ring rises: material went downhill.
        let ring = |d: &[f64]| {
            (0..33 * 33)
                .filter(|k| {
                    let (x, z) = ((k % 33) as f64 - 16.0, (k / 33) as f64 - 16.0);
                    let r = (x * x + z * z).sqrt();
                    (14.0..19.0).contains(&r)
                })
                .map(|k| d[k])
                .sum::<f64>()
        };
        assert!(ring(&d) > ring(&cone()), "the foot gains material");
        let mut again = cone();
        hydraulic(&mut again, 33, 33, &p, 7);
        assert_eq!(fingerprint(&d), fingerprint(&again), "deterministic");
    }

    #[test]
    fn hard_terraces_give_the_configured_number_of_levels() {
        let mut d: Vec<f64> = (0..1000).map(|k| k as f64 * 0.01).collect();
        terrace(&mut d, 7, 1.0);
        let mut levels: Vec<u64> = d.iter().map(|v| v.to_bits()).collect();
        levels.sort();
        levels.dedup();
        assert_eq!(levels.len(), 7);
        let mut soft: Vec<f64> = (0..1000).map(|k| k as f64 * 0.01).collect();
        terrace(&mut soft, 7, 0.5);
        assert!(
            soft.windows(2).all(|w| w[1] >= w[0]),
            "terracing keeps the order"
        );
    }

    #[test]
    fn pinned_fingerprints() {
        let mut s = cone();
        apply(
            &PostStep::Smooth {
                filter: SmoothFilter::Gaussian,
                radius: 2,
            },
            &mut s,
            33,
            33,
            [1.0, 1.0],
            20.0,
            1,
        );
        let mut t = cone();
        apply(
            &PostStep::Thermal {
                talus: 30.0,
                iterations: 20,
                strength: 0.5,
            },
            &mut t,
            33,
            33,
            [1.0, 1.0],
            20.0,
            1,
        );
        let mut hy = cone();
        apply(
            &PostStep::Hydraulic(Hydraulic {
                droplets: 500,
                ..Hydraulic::default()
            }),
            &mut hy,
            33,
            33,
            [1.0, 1.0],
            20.0,
            1,
        );
        let mut te = cone();
        apply(
            &PostStep::Terrace {
                levels: 5,
                sharpness: 0.7,
            },
            &mut te,
            33,
            33,
            [1.0, 1.0],
            20.0,
            1,
        );
        let mut n = cone();
        apply(&PostStep::Normalize, &mut n, 33, 33, [1.0, 1.0], 5.0, 1);
        assert_eq!(
            [
                fingerprint(&s),
                fingerprint(&t),
                fingerprint(&hy),
                fingerprint(&te),
                fingerprint(&n)
            ],
            [
                9963493806872297205,
                8808720542459633325,
                9697399893971925050,
                10656843315823188402,
                6724504421948757781
            ]
        );
    }
}
