//! Uplift against fluvial erosion: the stream power law
//! ∂h/∂t = U − K·A^m·S^n, where tectonic uplift U raises the land and
//! rivers cut it down in proportion to a power of their drainage area A
//! and slope S (Cordonnier et al. 2016; Schott et al. 2023, whose defaults
//! are K = 0.0005, m = 0.8, n = 2). Drainage networks, ridges and valleys
//! grow out of it rather than being drawn.
//!
//! ```json
//! "generator": { "type": "uplift", "iterations": 100 }
//! ```
//!
//! The start's hollows are filled once (priority-flood, each sample a hair
//! above the one the flood reached it from), so every sample has a lower
//! neighbour. Each step routes the water to each sample's steepest lower
//! neighbour (D8), gathers the drainage areas upstream first, and solves
//! the law implicitly (Braun and Willett 2013) downstream first: each new
//! height h solves
//! h − (h₀ + Δt·U) + Δt·K·A^m·((h − h_r)/L)^n = 0 for its receiver's new
//! height h_r, by Newton's method (a closed form for n = 1), which is
//! never below h_r, so no hollow forms. A sample whose raised height does
//! not pass its receiver's is only raised.
//! The grid's edge is the base level, held at 0. Lengths are grid cells
//! (L = 1 or √2, A in cells), so the same parameters make the same land at
//! any size; the heights are then normalised as every generator's are.
//! The uplift varies over the land as fractal noise between `uplift[0]`
//! and `uplift[1]` (a range of mountains rather than a dome), and the
//! start is a low random surface, both from the seed.

use serde::Deserialize;

use rayon::prelude::*;

use super::hydrology::{flood, neighbours};

/// Parameters of the uplift generator.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Uplift {
    /// Time steps, 1..=10000. Default 100.
    pub iterations: u32,
    /// Length of a step, > 0, at most 1e6. Default 2000.
    pub dt: f64,
    /// Uplift per unit time [lowest, highest], grid cells, each 0..=1,
    /// the second at least the first. Default [0.0001, 0.0005].
    pub uplift: [f64; 2],
    /// Feature size of the uplift's variation, a fraction of the longer
    /// side, > 0, at most 4. Default 0.5.
    pub uplift_size: f64,
    /// Erodibility K, > 0, at most 1. Default 0.0005.
    pub k: f64,
    /// Exponent m of the drainage area, 0..=2. Default 0.8.
    pub m: f64,
    /// Exponent n of the slope, 1..=4. Default 2.
    pub n: f64,
}

impl Default for Uplift {
    fn default() -> Self {
        Uplift {
            iterations: 100,
            dt: 2000.0,
            uplift: [0.0001, 0.0005],
            uplift_size: 0.5,
            k: 0.0005,
            m: 0.8,
            n: 2.0,
        }
    }
}

/// Random streams of the generator: the start, the uplift map.
const START: u64 = 0x0F_1100;
const UPLIFT: u64 = 0x0F_1200;

/// Heights of a `w` × `h` grid grown by `p` from `seed`, grid cells (not
/// normalised).
pub fn generate(p: &Uplift, w: usize, h: usize, seed: u64) -> Vec<f64> {
    let n = w * h;
    let side = w.max(h) as f64;
    let uplift: Vec<f64> = (0..n)
        .map(|k| {
            let (i, j) = ((k / w) as f64, (k % w) as f64);
            let f = 1.0 / (p.uplift_size * side);
            let mut v = 0.0;
            let mut amp = 0.5;
            let mut freq = f;
            for octave in 0..4 {
                v += amp * super::noise::perlin_noise(seed ^ (UPLIFT + octave), j * freq, i * freq);
                amp *= 0.5;
                freq *= 2.0;
            }
            let t = (0.5 + v).clamp(0.0, 1.0);
            p.uplift[0] + t * (p.uplift[1] - p.uplift[0])
        })
        .collect();
    let start: Vec<f32> = (0..n)
        .map(|k| match is_edge(k, w, h) {
            true => 0.0,
            false => crate::hash::unit_f32(seed, START, k as u64),
        })
        .collect();
    // The start's hollows filled once, each sample a hair above the one
    // the flood reached it from: every sample then has a lower neighbour,
    // and the implicit step keeps it so (a new height is never below its
    // receiver's).
    let filled = flood(&start, w, h, [1.0, 1.0], None);
    let mut heights = vec![0.0f64; n];
    for (rank, &c) in filled.order.iter().enumerate() {
        let c = c as usize;
        if !is_edge(c, w, h) {
            heights[c] = filled.filled[c] as f64 + 1e-7 * rank as f64;
        }
    }
    let mut order = Vec::with_capacity(n);
    for _ in 0..p.iterations {
        let receiver = receivers(&heights, w, h);
        let area = drain(&receiver, &mut order);
        for &c in order.iter().rev() {
            let c = c as usize;
            let raised = heights[c] + p.dt * uplift[c];
            let r = receiver[c] as usize;
            if is_edge(c, w, h) {
                heights[c] = 0.0;
                continue;
            }
            if r == c {
                heights[c] = raised;
                continue;
            }
            let below = heights[r];
            let drop = raised - below;
            if drop <= 0.0 {
                heights[c] = raised;
                continue;
            }
            let run = if c % w != r % w && c / w != r / w {
                std::f64::consts::SQRT_2
            } else {
                1.0
            };
            let f = p.dt * p.k * (area[c] as f64).powf(p.m) / run.powf(p.n);
            heights[c] = below + solve(drop, f, p.n);
        }
    }
    heights
}

/// Each sample's steepest lower neighbour of eight (itself where none is
/// lower, and on the edge).
fn receivers(heights: &[f64], w: usize, h: usize) -> Vec<u32> {
    (0..w * h)
        .into_par_iter()
        .map(|k| {
            let (i, j) = (k / w, k % w);
            if is_edge(k, w, h) {
                return k as u32;
            }
            let mut best = (0.0f64, k as u32);
            for (m, di, dj) in neighbours(i, j, w, h) {
                let run = if di != 0 && dj != 0 {
                    std::f64::consts::SQRT_2
                } else {
                    1.0
                };
                let slope = (heights[k] - heights[m]) / run;
                if slope > best.0 {
                    best = (slope, m as u32);
                }
            }
            best.1
        })
        .collect()
}

/// The drainage area of each sample (in samples, itself included) for
/// the `receiver` graph, and in `order` the samples upstream first
/// (Kahn's order: a sample after all that drain into it; ties by index).
fn drain(receiver: &[u32], order: &mut Vec<u32>) -> Vec<u32> {
    let n = receiver.len();
    let mut donors = vec![0u32; n];
    for (k, &r) in receiver.iter().enumerate() {
        if r as usize != k {
            donors[r as usize] += 1;
        }
    }
    order.clear();
    order.extend((0..n as u32).filter(|&k| donors[k as usize] == 0));
    let mut area = vec![1u32; n];
    let mut next = 0;
    while next < order.len() {
        let c = order[next] as usize;
        next += 1;
        let r = receiver[c] as usize;
        if r == c {
            continue;
        }
        area[r] += area[c];
        donors[r] -= 1;
        if donors[r] == 0 {
            order.push(r as u32);
        }
    }
    area
}

fn is_edge(k: usize, w: usize, h: usize) -> bool {
    let (i, j) = (k / w, k % w);
    i == 0 || j == 0 || i + 1 == h || j + 1 == w
}

/// The x ≥ 0 with x + f·xⁿ = c (c > 0, f ≥ 0, n ≥ 1): exactly for n = 1
/// and n = 2 (the quadratic's root in the form that keeps its digits),
/// else by Newton's method from x = c, which falls monotonically onto the
/// root of this increasing convex function.
fn solve(c: f64, f: f64, n: f64) -> f64 {
    if n == 1.0 {
        return c / (1.0 + f);
    }
    if n == 2.0 {
        return 2.0 * c / (1.0 + (1.0 + 4.0 * f * c).sqrt());
    }
    let mut x = c;
    for _ in 0..50 {
        let g = x + f * x.powf(n) - c;
        let dg = 1.0 + n * f * x.powf(n - 1.0);
        let next = (x - g / dg).max(0.0);
        if (x - next).abs() <= 1e-12 * c {
            return next;
        }
        x = next;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The implicit step's root: x + f·xⁿ = c, checked by substitution,
    /// and the closed forms of n = 1 and n = 2.
    #[test]
    fn the_implicit_step_solves_the_stream_power_law() {
        for (c, f, n) in [
            (1.0, 0.0, 2.0),
            (1.0, 3.0, 2.0),
            (0.2, 50.0, 1.5),
            (5.0, 0.01, 4.0),
        ] {
            let x = solve(c, f, n);
            assert!((x + f * x.powf(n) - c).abs() < 1e-9, "{c} {f} {n}: {x}");
            assert!(x >= 0.0 && x <= c);
        }
        let (c, f) = (2.0, 3.0);
        assert_eq!(solve(c, f, 1.0), c / (1.0 + f));
        let quadratic = (-1.0 + (1.0f64 + 4.0 * f * c).sqrt()) / (2.0 * f);
        assert!((solve(c, f, 2.0) - quadratic).abs() < 1e-12);
        // Newton's method gives the quadratic's root too.
        assert!((solve(c, f, 2.0 + 1e-12) - quadratic).abs() < 1e-9);
    }

    /// The edge stays at the base level, the land rises inside it, and
    /// after enough steps every sample but the edge drains downhill (the
    /// start's hollows are cut through or filled): a drainage network,
    /// not a field of pits.
    #[test]
    fn uplift_grows_land_that_drains_to_the_edge() {
        let (w, h) = (65, 49);
        let p = Uplift {
            iterations: 60,
            ..Uplift::default()
        };
        let v = generate(&p, w, h, 3);
        for (k, &height) in v.iter().enumerate() {
            if is_edge(k, w, h) {
                assert_eq!(height, 0.0);
            }
        }
        let top = v.iter().copied().fold(0.0, f64::max);
        assert!(top > 5.0, "relief {top} cells");
        let f32s: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        let routes = flood(&f32s, w, h, [1.0, 1.0], None);
        let pits = (0..w * h).filter(|&k| routes.filled[k] > f32s[k]).count();
        assert!(pits * 100 < w * h, "{pits} samples in hollows");
        // The same seed, the same land; another seed, another.
        assert_eq!(v, generate(&p, w, h, 3));
        assert_ne!(v, generate(&p, w, h, 4));
    }
}
