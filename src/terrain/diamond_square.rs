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

use rayon::prelude::*;

use super::heightmap::Sample;
use crate::hash::unit_f64;

/// Parameters of the diamond-square generator.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DiamondSquare {
    /// How fast offsets shrink per level, 0..=4: each level's range is
    /// 2^(−roughness) times the previous one. Small is rough. Default 1.
    pub roughness: f64,
    /// Offset range of the first level, > 0. Default 1.
    pub range: f64,
    /// `symmetric` (offsets in [−r, r], default) or `positive` ([0, r]).
    pub offsets: Offsets,
    /// The offset range never shrinks below this, 0..=`range`. Default 0.
    pub min_offset: f64,
    /// Heights of the four corners [south-west, south-east, north-west,
    /// north-east] before any step; default random within `range`.
    pub corners: Option<[f64; 4]>,
    /// Tileable result: indices wrap around. Default false.
    pub wrap: bool,
}

impl Default for DiamondSquare {
    fn default() -> Self {
        DiamondSquare {
            roughness: 1.0,
            range: 1.0,
            offsets: Default::default(),
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

/// Generates raw diamond-square heights (not normalised), row-major, `w` ×
/// `h`, stored as `T`. Each step's rows are written in parallel: a step
/// writes some rows and reads only others (and its own row's samples it
/// does not write), so the result is the serial one's, bit for bit.
pub fn generate<T: Sample>(p: &DiamondSquare, w: usize, h: usize, seed: u64) -> Vec<T> {
    let n = grid_side(w, h);
    let m = n - 1; // period when wrapping
    let mut g = vec![T::from_f64(0.0); n * n];
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
    g[0] = T::from_f64(corners[0]);
    g[m] = T::from_f64(corners[1]);
    g[m * n] = T::from_f64(corners[2]);
    g[m * n + m] = T::from_f64(corners[3]);

    let mut step = m;
    let mut level = 0;
    while step > 1 {
        let half = step / 2;
        let r = range_at(level);
        // Square step: centre of each square = mean of its corners +
        // offset. Rows half, half + step, … are written; rows 0, step, …
        // are read.
        rows_apart(&mut g, n, |i| i % step == half, |i| i.is_multiple_of(step)).for_each(
            |(i, row, read)| {
                let (above, below) = (read(i - half), read(i + half));
                for j in (half..n).step_by(step) {
                    let mean = (above[j - half].to_f64()
                        + above[j + half].to_f64()
                        + below[j - half].to_f64()
                        + below[j + half].to_f64())
                        / 4.0;
                    row[j] = T::from_f64(mean + offset(i, j, r));
                }
            },
        );
        // Diamond step: edge midpoints = mean of the 2–4 diamond
        // neighbours. Rows at multiples of `step` write their midpoints
        // from the centre rows, then the centre rows theirs from the
        // corner rows; within a row, the samples read are not written.
        for corner_rows in [true, false] {
            let writes = |i: usize| i.is_multiple_of(half) && i.is_multiple_of(step) == corner_rows;
            let reads = |i: usize| i.is_multiple_of(half) && i.is_multiple_of(step) != corner_rows;
            rows_apart(&mut g, n, writes, reads).for_each(|(i, row, read)| {
                let j0 = if corner_rows { half } else { 0 };
                let wrapped = |v: isize| v.rem_euclid(m as isize) as usize;
                let inside = |v: isize| v >= 0 && v < n as isize;
                let (ii, hh) = (i as isize, half as isize);
                for j in (j0..n).step_by(step) {
                    if p.wrap && (i == m || j == m) {
                        continue; // copied from the opposite edge below
                    }
                    let jj = j as isize;
                    let mut sum = 0.0;
                    let mut count = 0.0;
                    // Above, below, left, right: the serial order of the sum.
                    for (ni, nj) in [(ii - hh, jj), (ii + hh, jj), (ii, jj - hh), (ii, jj + hh)] {
                        let (ri, rj) = if p.wrap {
                            (wrapped(ni), wrapped(nj))
                        } else if inside(ni) && inside(nj) {
                            (ni as usize, nj as usize)
                        } else {
                            continue;
                        };
                        sum += if ri == i {
                            row[rj].to_f64()
                        } else {
                            read(ri)[rj].to_f64()
                        };
                        count += 1.0;
                    }
                    row[j] = T::from_f64(sum / count + offset(i, j, r));
                }
            });
        }
        if p.wrap {
            g.copy_within(0..n, m * n);
            for k in 0..n {
                g[k * n + m] = g[k * n];
            }
        }
        step = half;
        level += 1;
    }

    // The requested corner of the square, in place.
    if w < n {
        for i in 1..h {
            g.copy_within(i * n..i * n + w, i * w);
        }
    }
    g.truncate(w * h);
    g.shrink_to_fit();
    g
}

/// The rows of the `n`-wide grid `g` for which `writes` holds, each with
/// its index and a reader of the rows for which `reads` holds (the two
/// sets disjoint), as a parallel iterator.
fn rows_apart<'a, T: Sample>(
    g: &'a mut [T],
    n: usize,
    writes: impl Fn(usize) -> bool,
    reads: impl Fn(usize) -> bool,
) -> impl ParallelIterator<
    Item = (
        usize,
        &'a mut [T],
        impl Fn(usize) -> &'a [T] + Sync + Send + 'a,
    ),
> {
    let mut written = Vec::new();
    let mut read: Vec<Option<&'a [T]>> = Vec::new();
    for (i, row) in g.chunks_mut(n).enumerate() {
        if writes(i) {
            written.push((i, row));
            read.push(None);
        } else if reads(i) {
            read.push(Some(&*row));
        } else {
            read.push(None);
        }
    }
    let read = std::sync::Arc::new(read);
    written.into_par_iter().map(move |(i, row)| {
        let read = read.clone();
        (i, row, move |k: usize| {
            read[k].expect("a row the step reads")
        })
    })
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
        let g = generate::<f64>(&p, 33, 33, 9);
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
        let g = generate::<f64>(&p, 17, 17, 3);
        assert!(g.iter().all(|&h| h >= 0.0));
    }

    #[test]
    fn given_corners_are_kept_and_crop_is_a_prefix() {
        let p = DiamondSquare {
            corners: Some([1.0, 2.0, 3.0, 4.0]),
            ..DiamondSquare::default()
        };
        let full = generate::<f64>(&p, 17, 17, 1);
        assert_eq!(
            [full[0], full[16], full[16 * 17], full[16 * 17 + 16]],
            [1.0, 2.0, 3.0, 4.0]
        );
        let crop = generate::<f64>(&p, 10, 12, 1);
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
        assert!(
            tv(&generate::<f64>(&rough, 65, 65, 2))
                > 2.0 * tv(&generate::<f64>(&smooth, 65, 65, 2))
        );
    }

    #[test]
    fn single_precision_stays_within_its_rounding_bound() {
        // Each stored value rounds once (at most u = 2⁻²⁴·max|h|) on top of
        // its inputs' error: a level's square then diamond step add 2u, the
        // corners u, so k levels stay within (1 + 2k)·u of the f64 heights.
        for wrap in [false, true] {
            let p = DiamondSquare {
                wrap,
                ..DiamondSquare::default()
            };
            let (w, h) = (1025, 700);
            let wide = generate::<f64>(&p, w, h, 5);
            let narrow = generate::<f32>(&p, w, h, 5);
            let top = wide.iter().fold(0.0f64, |a, &v| a.max(v.abs()));
            let u = top * (-24.0f64).exp2();
            let worst = wide
                .iter()
                .zip(&narrow)
                .map(|(&a, &b)| (a - b as f64).abs())
                .fold(0.0, f64::max);
            assert!(
                worst > 0.0 && worst <= 21.0 * u,
                "{worst} against {}",
                21.0 * u
            );
        }
    }
}
