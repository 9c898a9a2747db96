//! Diamond-square (midpoint displacement) terrain.
//!
//! ```json
//! "generator": { "type": "diamond_square", "roughness": 1.0, "range": 1.0,
//!                "offsets": "symmetric", "min_offset": 0.0, "wrap": false }
//! ```
//!
//! Generated on the smallest (2^k + 1)² square that covers the requested
//! grid, then cropped to it (rows and columns from index 0). Level L (L = 0
//! for the corners and the first square step) draws offsets from
//! [−r_L, r_L] (`symmetric`) or [0, r_L] (`positive`), with
//! r_L = max(range · 2^(−roughness·L), min_offset). Each sample's offset comes
//! from hash(seed, sample index), so the result does not depend on the order
//! of the steps. With `wrap` the diamond step takes missing neighbours from
//! the opposite edge and the last row and column repeat the first: the
//! square tiles seamlessly.

use serde::Deserialize;

use crate::hash::unit_f64;

/// Parameters of the diamond-square generator.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiamondSquare {
    /// How fast offsets shrink per level, 0..=4: each level's range is
    /// 2^(−roughness) times the previous one. Small is rough. Default 1.
    #[serde(default = "default_roughness")]
    pub roughness: f64,
    /// Offset range of the first level, > 0. Default 1.
    #[serde(default = "default_range")]
    pub range: f64,
    /// `symmetric` (offsets in [−r, r], default) or `positive` ([0, r]).
    #[serde(default)]
    pub offsets: Offsets,
    /// The offset range never shrinks below this, 0..=`range`. Default 0.
    #[serde(default)]
    pub min_offset: f64,
    /// Heights of the four corners [south-west, south-east, north-west,
    /// north-east] before any step; default random within `range`.
    #[serde(default)]
    pub corners: Option<[f64; 4]>,
    /// Tileable result: indices wrap around. Default false.
    #[serde(default)]
    pub wrap: bool,
}

fn default_roughness() -> f64 {
    1.0
}
fn default_range() -> f64 {
    1.0
}

impl Default for DiamondSquare {
    fn default() -> Self {
        DiamondSquare {
            roughness: default_roughness(),
            range: default_range(),
            offsets: Offsets::default(),
            min_offset: 0.0,
            corners: None,
            wrap: false,
        }
    }
}

/// Sign of the random offsets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Offsets {
    /// Offsets in [−r, r].
    #[default]
    Symmetric,
    /// Offsets in [0, r].
    Positive,
}

const STREAM: u64 = 0xD5_01;

/// The side of the square grid generated for a `w` × `h` request: 2^k + 1.
pub fn grid_side(w: usize, h: usize) -> usize {
    let mut n = 2;
    while n + 1 < w.max(h) {
        n *= 2;
    }
    n + 1
}

/// Generates raw diamond-square heights (not normalised), row-major, `w` × `h`.
pub fn generate(p: &DiamondSquare, w: usize, h: usize, seed: u64) -> Vec<f64> {
    let n = grid_side(w, h);
    let m = n - 1; // period when wrapping
    let mut g = vec![0.0f64; n * n];
    let range_at = |level: u32| (p.range * (-p.roughness * level as f64).exp2()).max(p.min_offset);
    let offset = |i: usize, j: usize, r: f64| {
        let u = unit_f64(seed, STREAM, (i * n + j) as u64);
        match p.offsets {
            Offsets::Symmetric => (2.0 * u - 1.0) * r,
            Offsets::Positive => u * r,
        }
    };

    let r0 = range_at(0);
    let corners = p.corners.unwrap_or_else(|| {
        [
            offset(0, 0, r0),
            offset(0, m, r0),
            offset(m, 0, r0),
            offset(m, m, r0),
        ]
    });
    let corners = if p.wrap { [corners[0]; 4] } else { corners };
    g[0] = corners[0];
    g[m] = corners[1];
    g[m * n] = corners[2];
    g[m * n + m] = corners[3];

    let mut step = m;
    let mut level = 0;
    while step > 1 {
        let half = step / 2;
        let r = range_at(level);
        // Square step: centre of each square = mean of its corners + offset.
        for i in (half..n).step_by(step) {
            for j in (half..n).step_by(step) {
                let mean = (g[(i - half) * n + j - half]
                    + g[(i - half) * n + j + half]
                    + g[(i + half) * n + j - half]
                    + g[(i + half) * n + j + half])
                    / 4.0;
                g[i * n + j] = mean + offset(i, j, r);
            }
        }
        // Diamond step: edge midpoints = mean of the 2–4 diamond neighbours.
        for i in (0..n).step_by(half) {
            let j0 = if (i / half).is_multiple_of(2) {
                half
            } else {
                0
            };
            for j in (j0..n).step_by(step) {
                if p.wrap && (i == m || j == m) {
                    continue; // copied from the opposite edge below
                }
                let mut sum = 0.0;
                let mut count = 0.0;
                let neighbours = [
                    (i as isize - half as isize, j as isize),
                    (i as isize + half as isize, j as isize),
                    (i as isize, j as isize - half as isize),
                    (i as isize, j as isize + half as isize),
                ];
                for (ni, nj) in neighbours {
                    let inside = |v: isize| v >= 0 && v < n as isize;
                    if p.wrap {
                        let wi = ni.rem_euclid(m as isize) as usize;
                        let wj = nj.rem_euclid(m as isize) as usize;
                        sum += g[wi * n + wj];
                        count += 1.0;
                    } else if inside(ni) && inside(nj) {
                        sum += g[ni as usize * n + nj as usize];
                        count += 1.0;
                    }
                }
                g[i * n + j] = sum / count + offset(i, j, r);
            }
        }
        if p.wrap {
            for k in 0..n {
                g[m * n + k] = g[k];
                g[k * n + m] = g[k * n];
            }
        }
        step = half;
        level += 1;
    }

    let mut out = Vec::with_capacity(w * h);
    for i in 0..h {
        out.extend_from_slice(&g[i * n..i * n + w]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_side_is_the_smallest_cover() {
        assert_eq!(grid_side(2, 2), 3);
        assert_eq!(grid_side(3, 3), 3);
        assert_eq!(grid_side(4, 2), 5);
        assert_eq!(grid_side(513, 300), 513);
        assert_eq!(grid_side(514, 10), 1025);
    }

    #[test]
    fn wrap_makes_opposite_edges_equal() {
        let p = DiamondSquare {
            wrap: true,
            ..DiamondSquare::default()
        };
        let g = generate(&p, 33, 33, 9);
        for k in 0..33 {
            assert_eq!(g[k], g[32 * 33 + k], "column {k}");
            assert_eq!(g[k * 33], g[k * 33 + 32], "row {k}");
        }
    }

    #[test]
    fn positive_offsets_never_lower_the_mean() {
        let p = DiamondSquare {
            offsets: Offsets::Positive,
            corners: Some([0.0; 4]),
            ..DiamondSquare::default()
        };
        let g = generate(&p, 17, 17, 3);
        assert!(g.iter().all(|&h| h >= 0.0));
    }

    #[test]
    fn given_corners_are_kept_and_crop_is_a_prefix() {
        let p = DiamondSquare {
            corners: Some([1.0, 2.0, 3.0, 4.0]),
            ..DiamondSquare::default()
        };
        let full = generate(&p, 17, 17, 1);
        assert_eq!(
            [full[0], full[16], full[16 * 17], full[16 * 17 + 16]],
            [1.0, 2.0, 3.0, 4.0]
        );
        let crop = generate(&p, 10, 12, 1);
        for i in 0..12 {
            assert_eq!(&crop[i * 10..i * 10 + 10], &full[i * 17..i * 17 + 10]);
        }
    }

    #[test]
    fn min_offset_keeps_fine_levels_rough() {
        // With roughness 4 the fine levels are almost flat; a minimum offset
        // keeps neighbouring samples apart.
        let smooth = DiamondSquare {
            roughness: 4.0,
            ..DiamondSquare::default()
        };
        let rough = DiamondSquare {
            min_offset: 0.2,
            ..smooth.clone()
        };
        let tv = |g: &[f64]| g.windows(2).map(|w| (w[1] - w[0]).abs()).sum::<f64>();
        assert!(tv(&generate(&rough, 65, 65, 2)) > 2.0 * tv(&generate(&smooth, 65, 65, 2)));
    }
}
