//! Land past the tile: nested square rings of coarser grids around the
//! detail tile, as geometry clipmaps lay them out (Losasso and Hoppe
//! 2004), and the planet's curvature.
//!
//! Ring k (1 to `rings`) is a grid of the same number of cells
//! ([`FarField::cells`]) over 2ᵏ times the tile's extent, centred on it, so
//! each ring has twice the cell size and extent of the one inside it, and
//! the first ring's cells are a whole number of the tile's. Its middle, where the
//! finer level lies, is a hole ([`Ring::hole`]) that the tracer passes
//! over. The hole is two of the ring's cells smaller on each side than the
//! finer level: the levels overlap by that band, and there the finer
//! level's samples are set onto the coarser ring's triangles, so the two
//! surfaces coincide where they meet and no ray can slip between them.
//! Inward of the band the finer level blends back to its own heights over
//! [`BLEND`] cells of the coarser ring.
//!
//! Heights come from the tile's generator evaluated at the ring's samples
//! in world coordinates, through the tile's own normalisation
//! ([`Trace`]): noise directly (octaves finer than the ring's cells left
//! out, `Noise::limited`); fault lines extended across the plane;
//! hills (which all sit inside the tile) as their floor. Where the
//! generator has no detail of its own out there (fault lines, hills, an
//! imported map) seeded noise as rough as the tile is added (its
//! variogram's growth and size matched, [`matched_noise`]),
//! and the ring near the tile blends from the tile's edge heights into it
//! over half the tile's size. Diamond-square fields are tiled: repeated
//! when made with `wrap`, mirrored otherwise. Of the post steps the rings
//! take `normalize` and `terrace` (with the tile's range) and `smooth`
//! (its radius scaled to the ring's cells); erosion is left to the tile,
//! whose blend band hides the difference.

use rayon::prelude::*;

use super::noise::{self, Noise};
use super::post::{self, PostStep};
use super::{fault_line, Generator, Heightmap, Recipe, TerrainGrid};

/// Validated `terrain.far_field`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FarField {
    /// Number of rings, 1 to [`MAX_RINGS`].
    pub rings: u32,
    /// Cells along x and z of every ring ([`FarField::fit`]).
    pub cells: [usize; 2],
}

/// The most rings: 2¹² times the tile's extent.
pub const MAX_RINGS: u32 = 12;
/// The fewest cells along a side of a ring: room for the overlap and
/// blend bands of the levels inside and outside it.
pub const MIN_CELLS: usize = 128;
/// The most cells along a side of a ring.
pub const MAX_CELLS: usize = 8192;
/// Cells of the coarser level by which two levels overlap.
pub const OVERLAP: usize = 2;
/// Cells of the coarser level over which the finer one blends into it.
pub const BLEND: usize = 8;

impl FarField {
    /// The ring cells for a tile of `resolution` samples whose first ring
    /// has cells `ratio` times the tile's: 2(n − 1)/ratio along each axis.
    /// None unless both are whole multiples of 8 (so the hole and the bands
    /// fall on whole blocks) within [`MIN_CELLS`]..=[`MAX_CELLS`]: then the
    /// first ring's vertices are tile samples, and the tile's band lies
    /// exactly on its triangles.
    pub fn cells(resolution: [usize; 2], ratio: usize) -> Option<[usize; 2]> {
        let side = |n: usize| {
            let d = 2 * (n - 1);
            (ratio > 0 && d.is_multiple_of(ratio))
                .then_some(d / ratio)
                .filter(|c| c % 8 == 0 && (MIN_CELLS..=MAX_CELLS).contains(c))
        };
        Some([side(resolution[0])?, side(resolution[1])?])
    }

    /// `rings` rings around a tile of `resolution`: with `samples` along
    /// the tile's longer side if given, else the coarsest first ring (a
    /// ratio of 1, 2, 4, … tile cells a ring cell) whose rings together
    /// hold no more samples than the tile, or failing that the finest that
    /// fits. None where no ratio fits the tile's sides.
    pub fn fit(rings: u32, resolution: [usize; 2], samples: Option<usize>) -> Option<FarField> {
        let long = resolution[0].max(resolution[1]);
        if let Some(n) = samples {
            let d = 2 * (long - 1);
            if n < 2 || !d.is_multiple_of(n - 1) {
                return None;
            }
            let cells = FarField::cells(resolution, d / (n - 1))?;
            return Some(FarField { rings, cells });
        }
        let tile = (resolution[0] * resolution[1]) as f64;
        let fits: Vec<[usize; 2]> = (0..14)
            .filter_map(|k| FarField::cells(resolution, 1 << k))
            .collect();
        let small = fits
            .iter()
            .find(|c| rings as f64 * ((c[0] + 1) * (c[1] + 1)) as f64 <= tile);
        let cells = *small.or(fits.last())?;
        Some(FarField { rings, cells })
    }
}

/// One ring of the far field.
#[derive(Debug, Clone)]
pub struct Ring {
    /// The ring's grid, hole included (the samples inside the hole hold
    /// the generator's heights; the tracer sinks them out of the way).
    pub grid: TerrainGrid,
    /// The cells left out: columns `hole[0][0]..hole[0][1]`, rows
    /// `hole[1][0]..hole[1][1]`.
    pub hole: [[usize; 2]; 2],
}

/// A terrain ready to place: the detail tile and its far-field rings,
/// innermost first.
#[derive(Debug, Clone)]
pub struct Land {
    /// The detail tile.
    pub tile: TerrainGrid,
    /// The rings, innermost first (none without a far field).
    pub rings: Vec<Ring>,
    /// The tile's lakes and rivers, if the terrain has rivers.
    pub waters: Option<super::hydrology::Waters>,
}

/// What the tile's generation did to its heights, for the rings to do
/// the same.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// The generator's range, where it was normalised to [0, height].
    pub normalised_from: Option<(f64, f64)>,
    /// The raw noise's range an island mask was normalised from.
    pub island_from: Option<(f64, f64)>,
    /// The range of the heights before each post step.
    pub before_post: Vec<(f64, f64)>,
}

/// Seed stream of the added far-field noise.
const DETAIL_STREAM: u64 = 0xFA4F_1E1D;

/// The far-field rings around `tile` (generated from `r` with `seed`,
/// which did `trace`), all levels curved by `planet_radius` if given, and
/// each level's outer band set onto the ring around it.
pub fn rings(
    r: &Recipe,
    far: &FarField,
    trace: &Trace,
    tile: &mut TerrainGrid,
    planet_radius: Option<f64>,
    seed: u64,
) -> Vec<Ring> {
    let source = Source::new(r, trace, &*tile, seed);
    let mut rings: Vec<Ring> = (1..=far.rings)
        .into_par_iter()
        .map(|k| source.ring(r, trace, far.cells, k))
        .collect();
    if let Some(radius) = planet_radius {
        curve(tile, radius);
        for ring in &mut rings {
            curve(&mut ring.grid, radius);
        }
    }
    // Each level's outer band onto the next ring, from the outside in
    // (a ring's outer band is changed only by the ring outside it).
    for k in (0..rings.len()).rev() {
        let (inner, outer) = rings.split_at_mut(k);
        let outer = &outer[0].grid;
        match inner.last_mut() {
            Some(ring) => stitch(&mut ring.grid, outer),
            None => stitch(tile, outer),
        }
    }
    rings
}

/// Lowers every sample of `grid` by d²/2R, d its distance from the
/// origin (the terrain's centre) and R `radius`: the fall of a sphere's
/// surface below its tangent plane, to second order (the sphere's fall is
/// larger by a relative d²/4R²: 0.006 % at 100 km on Earth).
pub fn curve(grid: &mut TerrainGrid, radius: f64) {
    map_samples(grid, |x, z, v| {
        let d2 = x as f64 * x as f64 + z as f64 * z as f64;
        (v as f64 - drop(d2.sqrt(), radius)) as f32
    });
}

/// Replaces each sample of `grid` by `f(x, z, height)`, (x, z) its world
/// position as [`TerrainGrid::position`] gives it; rows in parallel.
fn map_samples(grid: &mut TerrainGrid, f: impl Fn(f32, f32, f32) -> f32 + Sync) {
    let (w, h) = (grid.heights.width, grid.heights.height);
    let size = grid.size;
    grid.heights
        .data_mut()
        .par_chunks_mut(w)
        .enumerate()
        .for_each(|(i, row)| {
            let z = (i as f32 / (h - 1) as f32 - 0.5) * size[1];
            for (j, v) in row.iter_mut().enumerate() {
                let x = (j as f32 / (w - 1) as f32 - 0.5) * size[0];
                *v = f(x, z, *v);
            }
        });
}

/// How far the surface at distance `d` has fallen below the tangent plane
/// at the centre on a planet of radius `radius`: d²/2R.
pub fn drop(d: f64, radius: f64) -> f64 {
    d * d / (2.0 * radius)
}

/// Sets the samples of the finer level `fine` that lie within [`OVERLAP`]
/// cells of `coarse` from its edge onto `coarse`'s triangles, and blends
/// the next [`BLEND`] cells' worth back to their own heights.
fn stitch(fine: &mut TerrainGrid, coarse: &TerrainGrid) {
    let size = fine.size;
    let cell = [
        coarse.size[0] / (coarse.heights.width - 1) as f32,
        coarse.size[1] / (coarse.heights.height - 1) as f32,
    ];
    let band = OVERLAP as f32;
    map_samples(fine, |x, z, v| {
        // How far in from the edge, in the coarse ring's cells.
        let t = ((0.5 * size[1] - z.abs()) / cell[1]).min((0.5 * size[0] - x.abs()) / cell[0]);
        if t <= band + 1e-3 {
            coarse.height_at(x, z)
        } else if t < band + BLEND as f32 {
            let s = (t - band) / BLEND as f32;
            let s = s * s * (3.0 - 2.0 * s);
            let on = coarse.height_at(x, z);
            on + s * (v - on)
        } else {
            v
        }
    });
}

/// Where far heights come from.
struct Source<'a> {
    generator: &'a Generator,
    /// The tile's generator resolution and extent.
    resolution: [usize; 2],
    size: [f64; 2],
    /// The tile's final heights (for tiling and edge extension).
    tile: &'a TerrainGrid,
    /// Added noise ([`matched_noise`]) and its amplitude, where the
    /// generator has no far detail of its own.
    far: Option<(Noise, f64)>,
    /// An imported map's mean height: its far land's base.
    mean: f64,
    /// The raw noise range the tile's island mask was normalised from.
    island: Option<(f64, f64)>,
    seed: u64,
}

impl<'a> Source<'a> {
    fn new(r: &'a Recipe, trace: &Trace, tile: &'a TerrainGrid, seed: u64) -> Source<'a> {
        let far = match r.generator {
            Generator::Noise(_) | Generator::DiamondSquare(_) => None,
            _ => {
                let (lo, hi) = tile.heights.range();
                (hi > lo)
                    .then(|| matched_noise(tile, seed))
                    .filter(|&(_, amplitude)| amplitude > 0.0)
            }
        };
        let mean = match r.generator {
            Generator::Heightmap(_) => {
                let data = tile.heights.data();
                data.iter().map(|&v| v as f64).sum::<f64>() / data.len() as f64
            }
            _ => 0.0,
        };
        Source {
            generator: &r.generator,
            resolution: r.resolution,
            size: r.size,
            tile,
            far,
            mean,
            island: trace.island_from,
            seed,
        }
    }

    /// Ring `k`, of `cells` cells along x and z.
    fn ring(&self, r: &Recipe, trace: &Trace, cells: [usize; 2], k: u32) -> Ring {
        let scale = (1u64 << k) as f64;
        let size = [self.size[0] * scale, self.size[1] * scale];
        let [n, m] = [cells[0] + 1, cells[1] + 1];
        let xs: Vec<f64> = (0..n)
            .map(|j| (j as f64 / (n - 1) as f64 - 0.5) * size[0])
            .collect();
        let zs: Vec<f64> = (0..m)
            .map(|i| (i as f64 / (m - 1) as f64 - 0.5) * size[1])
            .collect();
        let cell = [size[0] / cells[0] as f64, size[1] / cells[1] as f64];
        let mut data = self.raw(&xs, &zs, cell);
        // The tile's normalisation and post steps, where the heights are
        // the generator's own.
        if !matches!(
            self.generator,
            Generator::DiamondSquare(_) | Generator::Heightmap(_)
        ) {
            if let Some((lo, hi)) = trace.normalised_from {
                map_range(&mut data, lo, hi, r.height);
            }
            let tile_cell = [
                self.size[0] / (self.resolution[0] - 1) as f64,
                self.size[1] / (self.resolution[1] - 1) as f64,
            ];
            for (step, &(lo, hi)) in r.post.iter().zip(&trace.before_post) {
                match step {
                    PostStep::Normalize => map_range(&mut data, lo, hi, r.height),
                    PostStep::Terrace { levels, sharpness } => {
                        post::terrace_within(&mut data, *levels, *sharpness, lo, hi)
                    }
                    PostStep::Smooth { filter, radius } => {
                        let scaled = (*radius as f64 * tile_cell[0] / cell[0]).round() as usize;
                        if scaled > 0 {
                            data = post::smooth(&data, n, m, *filter, scaled);
                        }
                    }
                    PostStep::Thermal { .. } | PostStep::Hydraulic(_) => {}
                }
            }
        }
        self.add_detail(&mut data, &xs, &zs, cell[0].max(cell[1]));
        let hole = |c: usize| [c / 4 + OVERLAP, 3 * c / 4 - OVERLAP];
        let grid = TerrainGrid {
            heights: Heightmap::from_f64(n, m, &data),
            size: [size[0] as f32, size[1] as f32],
        };
        Ring {
            grid,
            hole: [hole(cells[0]), hole(cells[1])],
        }
    }

    /// The generator's heights at the grid `xs` × `zs` (world), before
    /// normalisation where the generator is normalised.
    fn raw(&self, xs: &[f64], zs: &[f64], cell: [f64; 2]) -> Vec<f64> {
        let [w, h] = self.resolution;
        let tile_cell = [self.size[0] / (w - 1) as f64, self.size[1] / (h - 1) as f64];
        let n = xs.len();
        match self.generator {
            Generator::Noise(p) => self.noise(p, xs, zs, cell),
            Generator::FaultLine(p) => {
                let ux: Vec<f64> = xs.iter().map(|x| x / tile_cell[0]).collect();
                let uz: Vec<f64> = zs.iter().map(|z| z / tile_cell[1]).collect();
                fault_line::extended(p, w, h, self.seed, &ux, &uz)
            }
            // Every hill lies inside the tile: outside it is the floor.
            Generator::Hills(p) => vec![p.floor; n * zs.len()],
            // The tile's edge is the base level, 0.
            Generator::Uplift(_) => vec![0.0; n * zs.len()],
            Generator::DiamondSquare(p) => {
                let wrap = p.wrap;
                over(xs, zs, |x, z| self.tiled(x, z, wrap))
            }
            Generator::Heightmap(_) => vec![self.mean; n * zs.len()],
        }
    }

    fn noise(&self, p: &Noise, xs: &[f64], zs: &[f64], cell: [f64; 2]) -> Vec<f64> {
        let c = cell[0].max(cell[1]);
        let seed = self.seed;
        let limited = p.limited(c);
        let mut data = over(xs, zs, |x, z| limited.height(seed, x, z));
        if let (Some(island), Some((lo, hi))) = (p.island, self.island) {
            let n = xs.len();
            data.par_chunks_mut(n).zip(zs).for_each(|(row, &z)| {
                for (v, &x) in row.iter_mut().zip(xs) {
                    let h01 = if hi > lo { (*v - lo) / (hi - lo) } else { 0.0 };
                    let (u, w) = (2.0 * x / self.size[0], 2.0 * z / self.size[1]);
                    *v = noise::island_height(&island, h01, u, w);
                }
            });
        }
        data
    }

    /// The tile's heights repeated (`wrap`) or mirrored across its edges.
    fn tiled(&self, x: f64, z: f64, wrap: bool) -> f64 {
        let fold = |v: f64, side: f64| -> f64 {
            // To [0, side) or mirrored into [0, side], then centred.
            let u = v + 0.5 * side;
            let folded = if wrap {
                u.rem_euclid(side)
            } else {
                let m = u.rem_euclid(2.0 * side);
                if m > side {
                    2.0 * side - m
                } else {
                    m
                }
            };
            folded - 0.5 * side
        };
        let s = self.tile.size;
        self.tile
            .height_at(fold(x, s[0] as f64) as f32, fold(z, s[1] as f64) as f32) as f64
    }

    /// Adds the source's far noise, if it has one (as rough as the tile:
    /// [`matched_noise`]), and near the tile blends from its edge heights
    /// into the far land.
    fn add_detail(&self, data: &mut [f64], xs: &[f64], zs: &[f64], cell: f64) {
        let Some((noise, amplitude)) = &self.far else {
            return;
        };
        let amplitude = *amplitude;
        let s = self.size[0].max(self.size[1]);
        let far = noise.limited(cell);
        let seed = self.seed ^ DETAIL_STREAM;
        let n = xs.len();
        let half = [0.5 * self.size[0], 0.5 * self.size[1]];
        data.par_chunks_mut(n).zip(zs).for_each(|(row, &z)| {
            for (v, &x) in row.iter_mut().zip(xs) {
                let far_height = *v + amplitude * far.height(seed, x, z);
                let out = (x.abs() - half[0]).max(z.abs() - half[1]).max(0.0);
                let t = (out / (0.5 * s)).min(1.0);
                let t = t * t * (3.0 - 2.0 * t);
                let edge = self.tile.height_at(x as f32, z as f32) as f64;
                *v = edge + t * (far_height - edge);
            }
        });
    }
}

/// The noise added where a generator has no far detail of its own: ten
/// Perlin octaves from a wavelength of half the tile's larger side, each
/// `gain` of the one before.
fn far_noise(size: [f64; 2], gain: f64) -> Noise {
    let s = size[0].max(size[1]);
    Noise {
        octaves: noise::Octaves::Fractal {
            count: 10,
            frequency: 2.0 / s,
            lacunarity: 2.0,
            gain,
        },
        ..Noise::default()
    }
}

/// The lags, in tile samples along each axis, at which the far land's
/// roughness is matched to the tile's: a sixty-fourth and an eighth of the
/// tile.
fn roughness_lags(w: usize, h: usize) -> [[usize; 2]; 2] {
    let lag = |n: usize, part: usize| ((n - 1) / part).max(1);
    [[lag(w, 64), lag(h, 64)], [lag(w, 8), lag(h, 8)]]
}

/// The tile's variogram at `lag`: the mean squared difference of heights
/// `lag` samples apart along x and along z. Row sums in parallel, added in
/// row order: the same bits on any number of threads.
fn tile_variogram(tile: &TerrainGrid, [lx, lz]: [usize; 2]) -> f64 {
    let (w, h) = (tile.heights.width, tile.heights.height);
    let data = tile.heights.data();
    let at = |i: usize, j: usize| data[i * w + j] as f64;
    let rows: Vec<f64> = (0..h)
        .into_par_iter()
        .map(|i| {
            let along_x: f64 = (0..w - lx)
                .map(|j| (at(i, j + lx) - at(i, j)).powi(2))
                .sum();
            let along_z: f64 = match i + lz < h {
                true => (0..w).map(|j| (at(i + lz, j) - at(i, j)).powi(2)).sum(),
                false => 0.0,
            };
            along_x + along_z
        })
        .collect();
    let pairs = h * (w - lx) + (h - lz) * w;
    rows.iter().sum::<f64>() / pairs as f64
}

/// Noise as rough as the tile, and its amplitude. Roughness here is the
/// variogram γ(d), the mean squared difference of heights d apart. Its
/// growth between the two [`roughness_lags`] gives the tile's Hurst
/// exponent H (γ ∝ d^2H), clamped to 0.2–1; octaves with gain 2^−H have
/// the same (fBm with lacunarity 2). The amplitude then makes the noise's
/// variogram at the longer lag the tile's, the noise's measured over a
/// 129² grid across the first two rings (four tiles wide).
fn matched_noise(tile: &TerrainGrid, seed: u64) -> (Noise, f64) {
    let (w, h) = (tile.heights.width, tile.heights.height);
    let [short, long] = roughness_lags(w, h);
    let (near, far) = (tile_variogram(tile, short), tile_variogram(tile, long));
    let ratio = (long[0] * long[1]) as f64 / (short[0] * short[1]) as f64;
    let hurst = if near > 0.0 && far > near {
        (far / near).log2() / ratio.log2()
    } else {
        1.0
    };
    let size = [tile.size[0] as f64, tile.size[1] as f64];
    let noise = far_noise(size, (-hurst.clamp(0.2, 1.0)).exp2());
    let d = [
        long[0] as f64 * size[0] / (w - 1) as f64,
        long[1] as f64 * size[1] / (h - 1) as f64,
    ];
    let cell = (size[0] / (w - 1) as f64).max(size[1] / (h - 1) as f64);
    let seed = seed ^ DETAIL_STREAM;
    let limited = noise.limited(cell);
    let f = |x: f64, z: f64| limited.height(seed, x, z);
    const N: usize = 129;
    let squares: Vec<f64> = (0..N * N)
        .into_par_iter()
        .map(|k| {
            let (x, z) = (
                (k % N) as f64 / (N - 1) as f64 * 4.0 * size[0] - 2.0 * size[0],
                (k / N) as f64 / (N - 1) as f64 * 4.0 * size[1] - 2.0 * size[1],
            );
            let v = f(x, z);
            (f(x + d[0], z) - v).powi(2) + (f(x, z + d[1]) - v).powi(2)
        })
        .collect();
    let noise_variogram = squares.iter().sum::<f64>() / (2 * N * N) as f64;
    let amplitude = if noise_variogram > 0.0 {
        (far / noise_variogram).sqrt()
    } else {
        0.0
    };
    (noise, amplitude)
}

/// `f` at every (x, z) of the grid `xs` × `zs`, row-major.
fn over(xs: &[f64], zs: &[f64], f: impl Fn(f64, f64) -> f64 + Sync) -> Vec<f64> {
    let n = xs.len();
    let mut data = vec![0.0; n * zs.len()];
    data.par_chunks_mut(n).zip(zs).for_each(|(row, &z)| {
        for (v, &x) in row.iter_mut().zip(xs) {
            *v = f(x, z);
        }
    });
    data
}

/// Maps `data` from [lo, hi] onto [0, top] as the tile's normalisation
/// did (all zero where the tile was flat).
fn map_range(data: &mut [f64], lo: f64, hi: f64, top: f64) {
    let span = hi - lo;
    for v in data.iter_mut() {
        *v = if span > 0.0 {
            (*v - lo) / span * top
        } else {
            0.0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::import::Imported;
    use crate::terrain::{FaultLine, Hills};

    /// The mean squared difference of `grid`'s heights `lag` samples apart
    /// along x and along z, over the pairs that lie where `keep` (world
    /// x, z) holds at both ends.
    fn variogram(grid: &TerrainGrid, lag: [usize; 2], keep: impl Fn(f32, f32) -> bool) -> f64 {
        let (w, h) = (grid.heights.width, grid.heights.height);
        let (mut sum, mut n) = (0.0, 0.0);
        for i in 0..h {
            for j in 0..w {
                let p = grid.position(i, j);
                for (a, b) in [(i, j + lag[0]), (i + lag[1], j)] {
                    if a < h && b < w {
                        let q = grid.position(a, b);
                        if keep(p.x, p.z) && keep(q.x, q.z) {
                            sum += ((q.y - p.y) as f64).powi(2);
                            n += 1.0;
                        }
                    }
                }
            }
        }
        sum / n
    }

    /// Far land added where the generator has none is as rough as the
    /// tile: past the blend (outside the first ring), the second ring's
    /// variogram at an eighth of the tile is the tile's, within what one
    /// realisation of the noise over that band allows (the amplitude was
    /// matched over the first two rings' whole square). Half the tile's
    /// range, the rule before, gave hills 0.32 of the tile's.
    #[test]
    fn added_far_land_is_as_rough_as_the_tile() {
        for generator in [
            Generator::Hills(Hills::default()),
            Generator::FaultLine(FaultLine::default()),
            Generator::Heightmap(std::sync::Arc::new(Imported::new(
                9,
                9,
                (0..81)
                    .map(|k| (crate::hash::unit_f64(8, 1, k) * 60000.0) as u16)
                    .collect(),
                65535.0,
            ))),
        ] {
            let mut r = Recipe::new(generator.clone(), 257, 257, 12.0);
            r.size = [64.0, 64.0];
            r.far_field = Some(FarField::fit(4, [257, 257], None).expect("fits"));
            let land = super::super::land(&r, 3);
            let [_, [lx, lz]] = roughness_lags(257, 257);
            let tile = variogram(&land.tile, [lx, lz], |_, _| true);
            let ring = &land.rings[1].grid;
            let cell = ring.size[0] / (ring.heights.width - 1) as f32;
            let lag = ((lx as f32 * 0.25 / cell).round() as usize).max(1);
            assert_eq!(
                lag as f32 * cell,
                lx as f32 * 0.25,
                "a whole number of ring cells"
            );
            let far = variogram(ring, [lag, lag], |x, z| x.abs().max(z.abs()) >= 64.0);
            let ratio = far / tile;
            assert!(ratio > 0.7 && ratio < 1.4, "{generator:?}: {ratio}");
        }
    }
}
