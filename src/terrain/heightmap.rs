//! A grid of heights: the output of every generator and the input of the mesh.

use rayon::prelude::*;

use crate::hash::fnv1a;

/// Heights on a `width` × `height` grid, row-major; row `i` is at
/// z = (i/(height−1) − ½)·size_z (row 0 is the south edge), column `j` at
/// x = (j/(width−1) − ½)·size_x.
#[derive(Debug, Clone, PartialEq)]
pub struct Heightmap {
    /// Samples per row (along x).
    pub width: usize,
    /// Rows (along z).
    pub height: usize,
    /// `width * height` heights, row-major.
    data: Vec<f32>,
}

impl Heightmap {
    /// A `width` × `height` heightmap of `data`, row-major.
    pub fn new(width: usize, height: usize, data: Vec<f32>) -> Heightmap {
        assert_eq!(data.len(), width * height, "heightmap data size");
        Heightmap {
            width,
            height,
            data,
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

    /// The heights, row-major, to change in place.
    pub fn data_mut(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// The heights, row-major, handed over.
    pub fn into_data(self) -> Vec<f32> {
        self.data
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

/// The lowest and highest of `data` (infinities when empty).
pub fn range(data: &[f64]) -> (f64, f64) {
    data.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &h| {
            (lo.min(h), hi.max(h))
        })
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
