//! Fault-line terrain: repeated random cuts across the grid, raising one side
//! and lowering the other.
//!
//! ```json
//! "generator": { "type": "fault_line", "iterations": 1000, "dropoff": "quadratic",
//!                "displacement": 1.0, "min_displacement": 0.01, "smoothing": 1 }
//! ```
//!
//! Iteration i of n draws v ∈ [−π/2, π/2] and c ∈ [−s/2, s/2] (s: mean of the
//! grid's width and height in samples, coordinates centred on the grid), and
//! moves every sample (x, z) by +d_i where a·x + b·z + c > 0 and −d_i where it
//! is < 0 (a = sin v, b = cos v).
//!
//! One deliberate addition to that recipe: each fault also draws a fair coin
//! that swaps which side rises. With v only in [−π/2, π/2], b = cos v ≥ 0,
//! so the raised side always faces +z and the faults add up to a ramp from
//! south to north about fifteen times taller than the detail (at 1000
//! iterations, quadratic dropoff). The coin is the same as drawing v over a
//! full turn, as the classic fault-formation algorithm does.
//!
//! Because a·x + b·z + c is monotonic along a
//! row, each row splits into at most three runs, found by binary search; the
//! moves are accumulated as per-row differences, so an iteration costs
//! O(rows · log columns) instead of O(samples).

use rayon::prelude::*;
use serde::Deserialize;

use super::heightmap::box_smooth;
use crate::hash::{sin_cos_det, unit_f64};

/// Parameters of the fault-line generator.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FaultLine {
    /// Number of fault lines, 1..=100000. Default 1000.
    pub iterations: u32,
    /// How the displacement d_i shrinks over the iterations. Default `quadratic`.
    pub dropoff: Dropoff,
    /// d_0, the first fault's displacement (> 0). Default 1. Heights are
    /// normalised to the terrain height afterwards, so only ratios matter.
    pub displacement: f64,
    /// d_min, the floor of `linear` and `quadratic` dropoff, 0..=`displacement`.
    /// Default 0.01.
    pub min_displacement: f64,
    /// Passes of a 3×3 box filter afterwards, 0..=64. Default 1.
    pub smoothing: u32,
}

impl Default for FaultLine {
    fn default() -> Self {
        FaultLine {
            iterations: 1000,
            dropoff: Default::default(),
            displacement: 1.0,
            min_displacement: 0.01,
            smoothing: 1,
        }
    }
}

/// Displacement dropoff over iterations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dropoff {
    /// d_i = d_0.
    Constant,
    /// d_i = d_0 + (d_min − d_0)·i/n.
    Linear,
    /// d_i = max(d_0·(1 − i/n)², d_min).
    #[default]
    Quadratic,
}

impl Dropoff {
    /// The displacement of iteration `i` of `n`.
    pub fn displacement(self, d0: f64, d_min: f64, i: u32, n: u32) -> f64 {
        let f = i as f64 / n as f64;
        match self {
            Dropoff::Constant => d0,
            Dropoff::Linear => d0 + (d_min - d0) * f,
            Dropoff::Quadratic => {
                let k = 1.0 - f;
                (d0 * k * k).max(d_min)
            }
        }
    }
}

/// Random stream ids for this generator's draws.
const STREAM_ANGLE: u64 = 0xFA01;
const STREAM_OFFSET: u64 = 0xFA02;
const STREAM_SIDE: u64 = 0xFA03;

/// Iteration i's line (a, b, c) and signed displacement: + raises the side
/// where a·x + b·z + c > 0, − lowers it.
fn draw(p: &FaultLine, s: f64, seed: u64, i: u32) -> (f64, f64, f64, f64) {
    let v = (unit_f64(seed, STREAM_ANGLE, i as u64) - 0.5) * std::f64::consts::PI;
    let c = (unit_f64(seed, STREAM_OFFSET, i as u64) - 0.5) * s;
    let (a, b) = sin_cos_det(v);
    let d = p
        .dropoff
        .displacement(p.displacement, p.min_displacement, i, p.iterations);
    let flip = unit_f64(seed, STREAM_SIDE, i as u64) < 0.5;
    (a, b, c, if flip { -d } else { d })
}

/// Generates raw fault-line heights (not normalised), row-major, `w` × `h`:
/// the fault sum at the samples ([`extended`] over the tile's own
/// coordinates), then the smoothing passes.
pub fn generate(p: &FaultLine, w: usize, h: usize, seed: u64) -> Vec<f64> {
    let cx = (w as f64 - 1.0) / 2.0;
    let cz = (h as f64 - 1.0) / 2.0;
    let xs: Vec<f64> = (0..w).map(|j| j as f64 - cx).collect();
    let zs: Vec<f64> = (0..h).map(|i| i as f64 - cz).collect();
    let mut data = extended(p, w, h, seed, &xs, &zs);
    for _ in 0..p.smoothing {
        data = box_smooth(&data, w, h);
    }
    data
}

/// The raw fault sum (before smoothing) of the `w` × `h` tile's faults,
/// extended across the plane: at each (x, z) of the grid `xs` × `zs`, in
/// the tile's sample units from its centre (x = j − (w − 1)/2 on the
/// tile). `xs` must increase. Each fault adds +d on its positive side, −d
/// on its negative side and 0 on its line, as on the tile.
pub fn extended(p: &FaultLine, w: usize, h: usize, seed: u64, xs: &[f64], zs: &[f64]) -> Vec<f64> {
    let s = (w + h) as f64 / 2.0;
    let faults: Vec<(f64, f64, f64, f64)> =
        (0..p.iterations).map(|i| draw(p, s, seed, i)).collect();
    let n = xs.len();
    let mut data = vec![0.0; n * zs.len()];
    data.par_chunks_mut(n).zip(zs).for_each(|(row, &z)| {
        let mut diff = vec![0.0f64; n + 1];
        for &(a, b, c, d) in &faults {
            let side = |j: usize| a * xs[j] + b * z + c;
            // Along increasing x the side's sign runs one way: negative,
            // zero, positive where a ≥ 0, the reverse otherwise.
            let (p0, q0) = if a >= 0.0 {
                (
                    partition(n, |j| side(j) < 0.0),
                    partition(n, |j| side(j) <= 0.0),
                )
            } else {
                (
                    partition(n, |j| side(j) > 0.0),
                    partition(n, |j| side(j) >= 0.0),
                )
            };
            let (first, last) = if a >= 0.0 { (-d, d) } else { (d, -d) };
            diff[0] += first;
            diff[p0] -= first;
            diff[q0] += last;
            diff[n] -= last;
        }
        let mut acc = 0.0;
        for (j, out) in row.iter_mut().enumerate() {
            acc += diff[j];
            *out = acc;
        }
    });
    data
}

/// The first index in 0..n where `pred` is false, for a `pred` that is true
/// on a prefix and false after it.
fn partition(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_is_the_fault_sum_across_the_plane() {
        // Off the tile, at fractional and far coordinates, the run-based
        // sum is the definition: +d on each fault's positive side, −d on
        // its negative side.
        let p = FaultLine {
            iterations: 300,
            ..FaultLine::default()
        };
        let (w, h) = (37, 23);
        let xs = [-400.25, -19.5, 0.0, 3.75, 18.0, 250.5];
        let zs = [-300.0, -11.5, 7.25, 90.0];
        let got = extended(&p, w, h, 5, &xs, &zs);
        let s = (w + h) as f64 / 2.0;
        for (r, &z) in zs.iter().enumerate() {
            for (c, &x) in xs.iter().enumerate() {
                let want: f64 = (0..p.iterations)
                    .map(|i| {
                        let (a, b, cc, d) = draw(&p, s, 5, i);
                        let v = a * x + b * z + cc;
                        if v > 0.0 {
                            d
                        } else if v < 0.0 {
                            -d
                        } else {
                            0.0
                        }
                    })
                    .sum();
                assert!((got[r * xs.len() + c] - want).abs() < 1e-9, "({x}, {z})");
            }
        }
    }

    /// The definition, sample by sample: the reference for the run-based code.
    fn brute(p: &FaultLine, w: usize, h: usize, seed: u64) -> Vec<f64> {
        let s = (w + h) as f64 / 2.0;
        let (cx, cz) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
        let mut data = vec![0.0; w * h];
        for i in 0..p.iterations {
            let (a, b, c, d) = draw(p, s, seed, i);
            for r in 0..h {
                for col in 0..w {
                    let val = a * (col as f64 - cx) + b * (r as f64 - cz) + c;
                    if val > 0.0 {
                        data[r * w + col] += d;
                    } else if val < 0.0 {
                        data[r * w + col] -= d;
                    }
                }
            }
        }
        data
    }

    #[test]
    fn runs_match_the_per_sample_definition() {
        for dropoff in [Dropoff::Constant, Dropoff::Linear, Dropoff::Quadratic] {
            let p = FaultLine {
                iterations: 200,
                dropoff,
                smoothing: 0,
                ..FaultLine::default()
            };
            let fast = generate(&p, 37, 23, 5);
            let slow = brute(&p, 37, 23, 5);
            for (a, b) in fast.iter().zip(&slow) {
                assert!((a - b).abs() < 1e-9, "{dropoff:?}: {a} vs {b}");
            }
        }
    }

    /// Regression: without the side coin the faults summed to a north-facing
    /// ramp. The mean of the north half must be close to the south half's.
    #[test]
    fn no_systematic_tilt() {
        let p = FaultLine {
            smoothing: 0,
            ..FaultLine::default()
        };
        let (w, h) = (64, 64);
        let mut tilt = 0.0;
        let mut spread = 0.0;
        for seed in 0..8 {
            let d = generate(&p, w, h, seed);
            let south: f64 = d[..w * h / 2].iter().sum::<f64>() / (w * h / 2) as f64;
            let north: f64 = d[w * h / 2..].iter().sum::<f64>() / (w * h / 2) as f64;
            tilt += north - south;
            let (lo, hi) = d
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, u), &v| (l.min(v), u.max(v)));
            spread += hi - lo;
        }
        assert!(tilt.abs() < 0.25 * spread, "tilt {tilt} vs spread {spread}");
    }

    #[test]
    fn dropoff_formulas() {
        assert_eq!(Dropoff::Constant.displacement(2.0, 0.1, 5, 10), 2.0);
        assert_eq!(Dropoff::Linear.displacement(2.0, 0.0, 5, 10), 1.0);
        assert_eq!(Dropoff::Quadratic.displacement(2.0, 0.0, 5, 10), 0.5);
        assert_eq!(Dropoff::Quadratic.displacement(2.0, 0.6, 5, 10), 0.6);
    }

    #[test]
    fn partition_finds_the_boundary() {
        assert_eq!(partition(10, |j| j < 4), 4);
        assert_eq!(partition(10, |_| true), 10);
        assert_eq!(partition(10, |_| false), 0);
    }
}
