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

/// A height as a generator stores it: `f64`, or `f32` on tiles of more
/// than [`crate::terrain::DOUBLE_SAMPLES`] (half the memory). The
/// arithmetic is f64 either way; only what is kept between steps differs.
pub trait Sample: Copy + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The stored value nearest `v`.
    fn from_f64(v: f64) -> Self;
    /// The stored value, exactly.
    fn to_f64(self) -> f64;
    /// A generator's f64 heights as stored ones (no copy for f64).
    fn from_f64s(data: Vec<f64>) -> Vec<Self>;
    /// Runs `f` over the heights as f64 (in place for f64, through a
    /// copy for f32): for the post steps, which work in f64.
    fn as_f64s(data: &mut Vec<Self>, f: impl FnOnce(&mut Vec<f64>));
    /// The finished heightmap (f64 rounds to f32; f32 moves in).
    fn into_heightmap(width: usize, height: usize, data: Vec<Self>) -> Heightmap;
}

impl Sample for f64 {
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64s(data: Vec<f64>) -> Vec<f64> {
        data
    }
    fn as_f64s(data: &mut Vec<f64>, f: impl FnOnce(&mut Vec<f64>)) {
        f(data)
    }
    fn into_heightmap(width: usize, height: usize, data: Vec<f64>) -> Heightmap {
        Heightmap::from_f64(width, height, &data)
    }
}

impl Sample for f32 {
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64s(data: Vec<f64>) -> Vec<f32> {
        data.par_iter().map(|&v| v as f32).collect()
    }
    fn as_f64s(data: &mut Vec<f32>, f: impl FnOnce(&mut Vec<f64>)) {
        let mut wide: Vec<f64> = data.par_iter().map(|&v| v as f64).collect();
        f(&mut wide);
        data.par_iter_mut()
            .zip(&wide)
            .for_each(|(v, &w)| *v = w as f32);
    }
    fn into_heightmap(width: usize, height: usize, data: Vec<f32>) -> Heightmap {
        Heightmap::new(width, height, data)
    }
}

/// The lowest and highest of `data` (infinities when empty).
pub fn range<T: Sample>(data: &[T]) -> (f64, f64) {
    // Min and max are exact, so any grouping of the fold gives the same.
    data.par_iter()
        .fold(
            || (f64::INFINITY, f64::NEG_INFINITY),
            |(lo, hi), &h| (lo.min(h.to_f64()), hi.max(h.to_f64())),
        )
        .reduce(
            || (f64::INFINITY, f64::NEG_INFINITY),
            |(a, b), (c, d)| (a.min(c), b.max(d)),
        )
}

/// Maps samples linearly onto [0, `top`] (all zero when flat).
pub fn normalise<T: Sample>(data: &mut [T], top: f64) {
    let (lo, hi) = range(data);
    let span = hi - lo;
    data.par_iter_mut().for_each(|h| {
        *h = T::from_f64(if span > 0.0 {
            (h.to_f64() - lo) / span * top
        } else {
            0.0
        });
    });
}

/// One pass of a 3×3 box filter (edges use the samples that exist), rows
/// in parallel.
pub fn box_smooth(data: &[f64], width: usize, height: usize) -> Vec<f64> {
    let mut out = vec![0.0; data.len()];
    out.par_chunks_mut(width).enumerate().for_each(|(i, row)| {
        for (j, v) in row.iter_mut().enumerate() {
            let mut sum = 0.0;
            let mut n = 0.0;
            for di in i.saturating_sub(1)..=(i + 1).min(height - 1) {
                for dj in j.saturating_sub(1)..=(j + 1).min(width - 1) {
                    sum += data[di * width + dj];
                    n += 1.0;
                }
            }
            *v = sum / n;
        }
    });
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
