//! A grid of heights: the output of every generator and the input of the mesh.

use rayon::prelude::*;

use crate::hash::fnv1a;

/// Heights on a `width` × `height` grid, row-major; row `i` is at
/// z = (i/(height−1) − ½)·size_z (row 0 is the south edge), column `j` at
/// x = (j/(width−1) − ½)·size_x.
///
/// A producer that writes the heights in one pass may also give the lowest
/// and highest height of each block of 2 × 2 cells ([`block_ranges_row`],
/// [`Heightmap::with_block_ranges`]): what the terrain's min/max hierarchy
/// starts from, made while the heights are still in the cache, rather than
/// in a second pass over them all (`accel::heightfield`).
#[derive(Debug)]
pub struct Heightmap {
    /// Samples per row (along x).
    pub width: usize,
    /// Rows (along z).
    pub height: usize,
    /// `width * height` heights, row-major; where `block_ranges` says so,
    /// the blocks' ranges follow in the spare capacity.
    data: Vec<f32>,
    /// Whether `data`'s spare capacity starts with the (min, max) pair of
    /// each block, row-major: set only by [`Heightmap::with_block_ranges`],
    /// from a vector that held them, and never by a clone.
    block_ranges: bool,
}

impl Clone for Heightmap {
    /// The heights alone: a clone of the vector keeps only its length.
    fn clone(&self) -> Heightmap {
        Heightmap::new(self.width, self.height, self.data.clone())
    }
}

/// Two heightmaps are equal when their heights are.
impl PartialEq for Heightmap {
    fn eq(&self, other: &Heightmap) -> bool {
        (self.width, self.height, &self.data) == (other.width, other.height, &other.data)
    }
}

impl Heightmap {
    /// A `width` × `height` heightmap of `data`, row-major.
    pub fn new(width: usize, height: usize, data: Vec<f32>) -> Heightmap {
        assert_eq!(data.len(), width * height, "heightmap data size");
        Heightmap {
            width,
            height,
            data,
            block_ranges: false,
        }
    }

    /// A `width` × `height` heightmap from `data`: its heights, row-major,
    /// then the (min, max) of each block of 2 × 2 cells, row-major
    /// ([`block_ranges_row`], [`block_dims`]), which
    /// [`Heightmap::into_data_and_block_ranges`] hands on.
    pub fn with_block_ranges(width: usize, height: usize, mut data: Vec<f32>) -> Heightmap {
        let (rows, cols) = block_dims(width, height);
        let n = width * height;
        assert_eq!(data.len(), n + 2 * rows * cols, "heights and block ranges");
        data.truncate(n);
        Heightmap {
            width,
            height,
            data,
            block_ranges: true,
        }
    }

    /// Builds a heightmap from f64 samples, rounding each to f32.
    pub fn from_f64(width: usize, height: usize, data: &[f64]) -> Heightmap {
        assert_eq!(data.len(), width * height, "heightmap data size");
        Heightmap::new(width, height, data.par_iter().map(|&h| h as f32).collect())
    }

    /// The heights, row-major.
    pub fn data(&self) -> &[f32] {
        &self.data
    }

    /// The heights, row-major, and whether the blocks' ranges follow them
    /// in the vector (as [`Heightmap::with_block_ranges`] takes them): a
    /// vector longer than `width · height` by two floats a block.
    pub fn into_data_and_block_ranges(self) -> (Vec<f32>, bool) {
        let mut data = self.data;
        if self.block_ranges {
            let (rows, cols) = block_dims(self.width, self.height);
            let len = self.width * self.height + 2 * rows * cols;
            assert!(data.capacity() >= len);
            // SAFETY: `block_ranges` is set only where `data` held `len`
            // initialised floats and was then truncated; nothing has
            // touched it since (the field is private and no method
            // changes it), so the floats past its length are still there.
            #[allow(unsafe_code)]
            unsafe {
                data.set_len(len)
            };
        }
        (data, self.block_ranges)
    }

    /// The height at row `i`, column `j`.
    #[inline]
    pub fn at(&self, i: usize, j: usize) -> f32 {
        self.data[i * self.width + j]
    }

    /// (min, max) of all heights.
    pub fn range(&self) -> (f32, f32) {
        self.data
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &h| {
                (lo.min(h), hi.max(h))
            })
    }

    /// FNV-1a over the little-endian bits of every height: pins generators in tests.
    pub fn fingerprint(&self) -> u64 {
        fnv1a(self.data.iter().flat_map(|h| h.to_bits().to_le_bytes()))
    }
}

/// Blocks of 2 × 2 cells over a `width` × `height` grid: (rows, columns),
/// the last row or column of blocks one cell wide where the cells are odd
/// in number.
pub fn block_dims(width: usize, height: usize) -> (usize, usize) {
    (height / 2, width / 2)
}

/// The (min, max) height of each block of one row of 2 × 2-cell blocks,
/// into `out`: block j spans columns 2j ..= 2j + 2 (or to the last column)
/// of `rows`, the block row's grid rows 2i, 2i + 1 and 2i + 2 (at the far
/// edge, where there is no row 2i + 2, the last row twice). `lo` and `hi`
/// are room for a row each. A NaN height is passed over.
pub fn block_ranges_row(rows: [&[f32]; 3], lo: &mut [f32], hi: &mut [f32], out: &mut [[f32; 2]]) {
    // min and max that pass over a NaN second operand, one instruction
    // each; folds from ±∞ never hold a NaN.
    let lower = |a: f32, b: f32| if b < a { b } else { a };
    let higher = |a: f32, b: f32| if b > a { b } else { a };
    let [a, b, c] = rows;
    for ((((lo, hi), &x), &y), &z) in lo.iter_mut().zip(hi.iter_mut()).zip(a).zip(b).zip(c) {
        *lo = lower(lower(lower(f32::INFINITY, x), y), z);
        *hi = higher(higher(higher(f32::NEG_INFINITY, x), y), z);
    }
    // Block j from the column pairs j and j + 1 (the first of the latter),
    // in lanes; the last block alone, its third column clamped.
    let Some((last, inner)) = out.split_last_mut() else {
        return;
    };
    let (lo_pairs, hi_pairs) = (lo.as_chunks::<2>().0, hi.as_chunks::<2>().0);
    let next = lo_pairs[1..].iter().zip(&hi_pairs[1..]);
    for (((out, l), h), (l2, h2)) in inner.iter_mut().zip(lo_pairs).zip(hi_pairs).zip(next) {
        *out = [
            lower(lower(l[0], l[1]), l2[0]),
            higher(higher(h[0], h[1]), h2[0]),
        ];
    }
    let j = 2 * inner.len();
    let end = (j + 2).min(a.len() - 1);
    *last = [
        lower(lower(lo[j], lo[j + 1]), lo[end]),
        higher(higher(hi[j], hi[j + 1]), hi[end]),
    ];
}

/// Maps f64 samples linearly onto [0, `top`] (all zero when flat).
pub fn normalise(data: &mut [f64], top: f64) {
    let (lo, hi) = data
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &h| {
            (lo.min(h), hi.max(h))
        });
    let span = hi - lo;
    for h in data.iter_mut() {
        *h = if span > 0.0 {
            (*h - lo) / span * top
        } else {
            0.0
        };
    }
}

/// One pass of a 3×3 box filter (edges use the samples that exist).
pub fn box_smooth(data: &[f64], width: usize, height: usize) -> Vec<f64> {
    let mut out = vec![0.0; data.len()];
    for i in 0..height {
        for j in 0..width {
            let mut sum = 0.0;
            let mut n = 0.0;
            for di in i.saturating_sub(1)..=(i + 1).min(height - 1) {
                for dj in j.saturating_sub(1)..=(j + 1).min(width - 1) {
                    sum += data[di * width + dj];
                    n += 1.0;
                }
            }
            out[i * width + j] = sum / n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block ranges given with the heights are handed on after them; a
    /// clone, whose vector is only as long as the heights, hands on the
    /// heights alone; and both compare equal to the heights alone.
    #[test]
    fn block_ranges_go_with_the_heights_but_not_into_clones() {
        let (w, h) = (5, 4);
        let heights: Vec<f32> = (0..20).map(|k| k as f32).collect();
        let mut data = heights.clone();
        data.extend([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]); // (2, 2) blocks
        let given = Heightmap::with_block_ranges(w, h, data.clone());
        assert_eq!(given.data(), &heights[..]);
        let copy = given.clone();
        assert_eq!(copy, Heightmap::new(w, h, heights.clone()));
        assert_eq!(copy.into_data_and_block_ranges(), (heights, false));
        assert_eq!(given.into_data_and_block_ranges(), (data, true));
    }

    /// Each block's range is the lowest and highest of its 3 × 3 samples
    /// (fewer at the far edges); a NaN height is passed over.
    #[test]
    fn block_ranges_row_takes_each_blocks_samples() {
        let r0 = [0.0, 5.0, 1.0, 9.0, 2.0, 3.0];
        let r1 = [4.0, f32::NAN, 6.0, -1.0, 7.0, 8.0];
        let r2 = [2.0, 2.0, 2.0, 2.0, 2.0, 10.0];
        let (mut lo, mut hi) = ([0.0; 6], [0.0; 6]);
        let mut out = [[0.0; 2]; 3];
        block_ranges_row([&r0, &r1, &r2], &mut lo, &mut hi, &mut out);
        assert_eq!(out, [[0.0, 6.0], [-1.0, 9.0], [2.0, 10.0]]);
        // Columns 0..=2, 2..=4 and 4..=5 of the first row alone (twice).
        block_ranges_row([&r0, &r0, &r0], &mut lo, &mut hi, &mut out);
        assert_eq!(out, [[0.0, 5.0], [1.0, 9.0], [2.0, 3.0]]);
    }

    #[test]
    fn normalise_maps_to_range() {
        let mut d = vec![-2.0, 0.0, 2.0];
        normalise(&mut d, 10.0);
        assert_eq!(d, vec![0.0, 5.0, 10.0]);
        let mut flat = vec![3.0; 4];
        normalise(&mut flat, 10.0);
        assert_eq!(flat, vec![0.0; 4]);
    }

    #[test]
    fn box_smooth_keeps_constants_and_averages_a_spike() {
        let mut d = vec![1.0; 9];
        assert_eq!(box_smooth(&d, 3, 3), d);
        d[4] = 10.0;
        let s = box_smooth(&d, 3, 3);
        assert_eq!(s[4], 2.0); // (8·1 + 10) / 9
        assert_eq!(s[0], 13.0 / 4.0); // corner sees 4 samples: 1+1+1+10
    }
}
