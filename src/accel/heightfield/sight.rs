//! Sight lines from one eye: how far a camera ray surely runs before it
//! can meet the terrain.
//!
//! Seen from an eye E, a point P of the terrain lies at an azimuth, at a
//! horizontal distance s from E, and at a slope (P.y − E.y) / s. A ray
//! from E climbs at its own slope, and reaches the terrain at the first
//! distance where a point of the terrain under it is at least that steep.
//! So if G(a, k) bounds the slopes of the terrain at azimuths in bin a
//! and distances in bin k, a ray of azimuth bin a cannot meet the terrain
//! before the first bin k where the running maximum R(a, k) = max over
//! k' ≤ k of G(a, k') reaches its slope. That is true of any terrain, not
//! only a smooth one: it compares the ray with every point of every bin.
//!
//! Only the first bin matters, so what is kept is a table of it by
//! azimuth and by slope: the entry of (a, slope bin b) is the first k
//! where R(a, k) reaches the lowest slope of bin b. The table covers the
//! azimuths and slopes of the camera's rays, a few MiB or less; a ray
//! reads one entry (where a bundle's cone reads the hierarchy block by
//! block, `bundle`) and starts its walk, at the finest level, at the
//! distance of that entry's bin. For the peer workload that start is
//! within a few cells of the hit for most rays, where the cone stops four
//! to sixteen cells short.
//!
//! G comes from the blocks of one level of the hierarchy (cells where
//! there are not too many): a block's highest height over the distance
//! that makes it steepest (its nearest point when it rises above the eye,
//! its farthest otherwise) bounds the slope of every point in it, and is
//! put in the bin of its nearest distance, for every azimuth bin its four
//! corners span. Azimuths are a pseudo-angle (monotone in the angle, one
//! division), slopes are s = m / (1 + |m|) of the slope m, so that
//! straight up and down are finite. All margins are generous against f32
//! rounding (~1e-5 relative) and tiny against a bin.

use std::ops::Range;

use glam::Vec3;
use rayon::prelude::*;

use super::bundle::{Hint, BUNDLE};
use super::{higher, lower, HeightField};
use crate::ray::Ray;

/// Most entries of a table (u16 each): 8 MiB.
const MAX_ENTRIES: usize = 1 << 20;

/// Most blocks that fill G: the finest level with at most this many.
const MAX_BLOCKS: usize = 1 << 22;

/// Blocks a side of the tiles that fill G.
const TILE: usize = 64;

/// Azimuth and slope bins of a table, at most.
const MAX_BINS: usize = 4096;

/// Most floats in a slab of G (see `Sight::new`): 1 MiB.
const SLAB_FLOATS: usize = 1 << 18;

/// Slabs of G a thread takes, at least, so that the threads finish
/// together however the blocks in view spread over the azimuths.
const SLABS_PER_THREAD: usize = 4;

/// The first distance bins of one eye's rays (see the module).
#[derive(Debug, Clone)]
pub(super) struct Sight {
    /// The eye: only rays from exactly here use the table.
    eye: Vec3,
    /// The pseudo-angle turned to 2 (the middle of the camera's view), so
    /// that the seam at 0 ≡ 4 lies behind it.
    turn: f32,
    /// Azimuth bins: the first one's pseudo-angle, bins per unit, count.
    azimuth: Bins,
    /// Slope bins, in s = m / (1 + |m|).
    slope: Bins,
    /// Width of a distance bin.
    bin: f32,
    /// Distance bins (the table's entries are at most this).
    distances: usize,
    /// For each azimuth bin (rows) and slope bin, the first distance bin
    /// where the terrain may reach that slope.
    first: Vec<u16>,
}

/// What fills G: the eye, the azimuths' turn and bins, the distance bins
/// (their width and count), the level whose blocks fill it, and whether
/// the view is along z (tiles then go column by column, else row by row).
#[derive(Debug, Clone, Copy)]
struct Fill {
    eye: Vec3,
    turn: f32,
    azimuth: Bins,
    bin: f32,
    distances: usize,
    level: u32,
    along_z: bool,
}

/// A tile's row of block corners: pseudo-angles and squared distances.
struct Corners {
    p: [f32; TILE + 1],
    d2: [f32; TILE + 1],
}

impl Default for Corners {
    fn default() -> Corners {
        Corners {
            p: [0.0; TILE + 1],
            d2: [0.0; TILE + 1],
        }
    }
}

/// A tile's row of blocks as G takes them: its distance bin, its first
/// azimuth bin and one past the last, and its slope bound.
struct TileRow {
    k: [u32; TILE],
    lo: [u32; TILE],
    end: [u32; TILE],
    m: [f32; TILE],
}

impl Default for TileRow {
    fn default() -> TileRow {
        TileRow {
            k: [0; TILE],
            lo: [0; TILE],
            end: [0; TILE],
            m: [0.0; TILE],
        }
    }
}

/// Uniform bins over an interval.
#[derive(Debug, Clone, Copy)]
struct Bins {
    start: f32,
    per_unit: f32,
    count: usize,
}

impl Bins {
    /// The bin of `v`, None outside.
    #[cfg(test)]
    fn of(&self, v: f32) -> Option<usize> {
        self.bin((v - self.start) * self.per_unit)
    }

    /// The bin at `x` bins from the start, None outside.
    #[inline]
    fn bin(&self, x: f32) -> Option<usize> {
        // NaN fails both tests.
        (x >= 0.0 && x < self.count as f32).then(|| (x as usize).min(self.count - 1))
    }

    /// The lowest value of bin `k`.
    fn low(&self, k: usize) -> f32 {
        self.start + k as f32 / self.per_unit
    }
}

/// A pseudo-angle of the horizontal direction (x, z), in [0, 4):
/// monotone in the angle from +x toward +z, one unit a quadrant; NaN for
/// (0, 0). Without branches, so that rows of corners run in vector lanes.
#[inline]
fn diamond(x: f32, z: f32) -> f32 {
    // How far toward the z axis, within the quadrant.
    let t = z.abs() / (x.abs() + z.abs());
    match (z >= 0.0, x >= 0.0) {
        (true, true) => t,
        (true, false) => 2.0 - t,
        (false, false) => 2.0 + t,
        (false, true) => 4.0 - t,
    }
}

/// `p` turned by `turn` so that `turn` lands on 2, in [0, 4].
#[inline]
fn turned(p: f32, turn: f32) -> f32 {
    let r = p - turn + 2.0;
    if r < 0.0 {
        r + 4.0
    } else if r >= 4.0 {
        r - 4.0
    } else {
        r
    }
}

/// The slope coordinate of a direction: m / (1 + |m|) for the slope m =
/// d.y / |horizontal d|, as d.y / (|horizontal d| + |d.y|).
#[inline]
fn slope_of(d: Vec3, horizontal: f32) -> f32 {
    d.y / (horizontal + d.y.abs())
}

/// The rounding margin of a slope `m`.
#[inline]
fn margin(m: f32) -> f32 {
    m.abs() * 1e-5 + 1e-6
}

impl Sight {
    /// The table of `field` seen from `eye`, for rays in `directions`'
    /// range of azimuths and slopes (a camera's, sampled; rays outside it
    /// just get no start). None when the directions leave nothing to cover
    /// (all straight up or down, or none).
    pub(super) fn new(field: &HeightField, eye: Vec3, directions: &[Vec3]) -> Option<Sight> {
        let horizontal = |d: Vec3| (d.x * d.x + d.z * d.z).sqrt();
        let level_dirs: Vec<Vec3> = directions
            .iter()
            .copied()
            .filter(|&d| horizontal(d) > 0.0 && d.is_finite())
            .collect();
        let mean: Vec3 = level_dirs.iter().map(|d| *d / horizontal(*d)).sum();
        let turn = diamond(mean.x, mean.z);
        let turn = if turn.is_finite() { turn } else { 0.0 };
        let (mut p_lo, mut p_hi) = (f32::INFINITY, f32::NEG_INFINITY);
        let (mut s_lo, mut s_hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for &d in &level_dirs {
            let p = turned(diamond(d.x, d.z), turn);
            let s = slope_of(d, horizontal(d));
            (p_lo, p_hi) = (p_lo.min(p), p_hi.max(p));
            (s_lo, s_hi) = (s_lo.min(s), s_hi.max(s));
        }
        if !(p_lo <= p_hi && s_lo <= s_hi) {
            return None;
        }
        // A little room around the sampled range; all the way round when
        // the view nearly is.
        let pad = |lo: f32, hi: f32, min: f32, max: f32| {
            let m = (hi - lo) * 0.02 + 1e-3;
            ((lo - m).max(min), (hi + m).min(max))
        };
        let (p_lo, p_hi) = if p_hi - p_lo > 3.5 {
            (0.0, 4.0)
        } else {
            pad(p_lo, p_hi, 0.0, 4.0)
        };
        let (s_lo, s_hi) = pad(s_lo, s_hi, -1.0, 1.0);

        // The table's size: at most MAX_ENTRIES, and about half an entry
        // per triangle on small fields; its bins about as fine in azimuth
        // as in slope (a unit of either is 60–90° of a camera's view).
        let (cw, ch) = (field.cols - 1, field.rows - 1);
        let budget = MAX_ENTRIES.min(cw * ch).max(64) as f32;
        let ratio = ((p_hi - p_lo) / (s_hi - s_lo)).clamp(1.0 / 64.0, 64.0);
        let a_bins = ((budget * ratio).sqrt() as usize).clamp(1, MAX_BINS);
        let s_bins = ((budget / a_bins as f32) as usize).clamp(1, MAX_BINS);
        let azimuth = Bins {
            start: p_lo,
            per_unit: a_bins as f32 / (p_hi - p_lo),
            count: a_bins,
        };
        let slope = Bins {
            start: s_lo,
            per_unit: s_bins as f32 / (s_hi - s_lo),
            count: s_bins,
        };

        // The level whose blocks fill G, and the distance bins: a block's
        // smaller side each.
        let level = (0..=field.top)
            .find(|&k| field.level_rows[k as usize] * field.level_cols[k as usize] <= MAX_BLOCKS)
            .unwrap_or(field.top);
        let cell = field.cell_side();
        let far = [field.xs[0], field.xs[cw]]
            .into_iter()
            .flat_map(|x| [field.zs[0], field.zs[ch]].map(|z| (x - eye.x).hypot(z - eye.z)))
            .fold(0.0f32, f32::max);
        let mut bin = cell * (1u64 << level) as f32;
        if !(bin > 0.0 && far.is_finite()) {
            return None;
        }
        if far / bin > 60_000.0 {
            bin = far / 60_000.0;
        }
        let distances = (far / bin) as usize + 2;

        // G by azimuth bin (rows), then distance bin, in slabs of azimuth
        // bins small enough to stay in the second-level cache while the
        // blocks fill them (a slab is all the field's blocks in view of its
        // azimuths, so the tiles of blocks whose azimuths it misses are
        // passed over) and its rows of the table are read out of them.
        // The slabs go to the threads one at a time, a few to each thread.
        let along_z = mean.z.abs() >= mean.x.abs();
        let fill = Fill {
            eye,
            turn,
            azimuth,
            bin,
            distances,
            level,
            along_z,
        };
        let threads = rayon::current_num_threads();
        let slab = (SLAB_FLOATS / distances)
            .min(a_bins.div_ceil(SLABS_PER_THREAD * threads))
            .max(1);

        // Each slope bin's lowest slope, lowered.
        let lowest: Vec<f32> = (0..s_bins)
            .map(|b| {
                let s = slope.low(b);
                if s <= -1.0 {
                    f32::NEG_INFINITY
                } else if s >= 1.0 {
                    f32::INFINITY
                } else {
                    {
                        let m = s / (1.0 - s.abs());
                        m - margin(m)
                    }
                }
            })
            .collect();
        // Azimuth bin by azimuth bin: distance by distance, the running
        // maximum R, and the slope bins that R reaches there for the first
        // time (G's NaNs are passed over, as by `f32::max`).
        let mut first = vec![distances as u16; a_bins * s_bins];
        first
            .par_chunks_mut(slab * s_bins)
            .enumerate()
            .with_max_len(1)
            .for_each_init(Vec::new, |slopes: &mut Vec<f32>, (k, out)| {
                let bins = k * slab..(k * slab + slab).min(a_bins);
                slopes.clear();
                slopes.resize(bins.len() * distances, f32::NEG_INFINITY);
                field.fill_slopes(&fill, bins.clone(), slopes);
                for (out, row) in out.chunks_mut(s_bins).zip(slopes.chunks(distances)) {
                    let mut high = f32::NEG_INFINITY;
                    let mut next = 0;
                    let mut reach = |k: usize, high: f32| {
                        while next < s_bins && lowest[next] <= high {
                            out[next] = k as u16;
                            next += 1;
                        }
                    };
                    reach(0, high);
                    for (k, &g) in row.iter().enumerate() {
                        if g > high {
                            high = g;
                            reach(k, high);
                        }
                    }
                }
            });
        Some(Sight {
            eye,
            turn,
            azimuth,
            slope,
            bin,
            distances,
            first,
        })
    }

    /// Bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        2 * self.first.len()
    }

    /// For each ray of a bundle (at most [`BUNDLE`]) from the eye, a ray
    /// parameter before which it cannot meet the terrain, into `hints` at
    /// the finest level; whether every ray got one (none does when a ray
    /// of the bundle comes from elsewhere: shadow rays, another camera's;
    /// nor one outside the table, or whose entry tells no more than its
    /// start). Quantity by quantity over the bundle, so that the divisions
    /// and square roots run in vector lanes; the tests hold it bit for bit
    /// to the same operations one ray at a time (`start`).
    pub(super) fn starts(&self, rays: &[Ray], hints: &mut [Hint]) -> bool {
        assert!(rays.len() <= BUNDLE && hints.len() == rays.len());
        let n = rays.len();
        if rays.iter().any(|r| r.origin != self.eye) {
            return false;
        }
        let (mut dx, mut dy, mut dz) = ([0.0f32; BUNDLE], [0.0f32; BUNDLE], [0.0f32; BUNDLE]);
        for (k, r) in rays.iter().enumerate() {
            (dx[k], dy[k], dz[k]) = (r.dir.x, r.dir.y, r.dir.z);
        }
        // Each ray's horizontal length and its azimuth and slope bins as
        // floats, as `start` and `Bins::of` compute them.
        let (mut horizontal, mut a, mut b) = ([0.0f32; BUNDLE], [0.0f32; BUNDLE], [0.0f32; BUNDLE]);
        let mut s = [0.0f32; BUNDLE];
        for k in 0..BUNDLE {
            let (x, y, z) = (dx[k], dy[k], dz[k]);
            horizontal[k] = (x * x + z * z).sqrt();
            a[k] = (turned(diamond(x, z), self.turn) - self.azimuth.start) * self.azimuth.per_unit;
            s[k] = slope_of(Vec3::new(x, y, z), horizontal[k]);
            b[k] = (s[k] - self.slope.start) * self.slope.per_unit;
        }
        // Each ray's entry of the table, or None, first for all rays, then
        // the loads: the entries mostly miss the caches, and apart from
        // the decisions the misses overlap.
        let mut entry = [None; BUNDLE];
        for k in 0..n {
            let Some(a) = self.azimuth.bin(a[k]) else {
                continue;
            };
            let b = match self.slope.bin(b[k]) {
                Some(b) => b,
                None if s[k] >= self.slope.start => self.slope.count - 1,
                None => continue,
            };
            entry[k] = Some(a * self.slope.count + b);
        }
        // The entries as distance bins in floats (0: no start).
        let mut bins = [0.0f32; BUNDLE];
        for (bin, entry) in bins.iter_mut().zip(&entry) {
            if let Some(e) = *entry {
                *bin = (self.first[e] as usize).min(self.distances) as f32;
            }
        }
        let mut t = [0.0f32; BUNDLE];
        for k in 0..BUNDLE {
            t[k] = bins[k] * self.bin / horizontal[k] * (1.0 - 1e-4);
        }
        let mut all = true;
        for k in 0..n {
            if bins[k] > 0.0 && t[k].is_finite() {
                hints[k] = Hint { t: t[k], level: 0 };
            } else {
                all = false;
            }
        }
        all
    }

    /// A ray parameter before which `ray` (from the eye) cannot meet the
    /// terrain; None for rays from elsewhere or outside the table, and
    /// when the table cannot tell more than the start. One ray at a time:
    /// the tests' reference for [`Sight::starts`].
    #[cfg(test)]
    pub(super) fn start(&self, ray: &Ray) -> Option<f32> {
        if ray.origin != self.eye {
            return None;
        }
        let d = ray.dir;
        let horizontal = (d.x * d.x + d.z * d.z).sqrt();
        let a = self.azimuth.of(turned(diamond(d.x, d.z), self.turn))?;
        // Slopes above the table take its last bin, whose lowest slope is
        // below theirs; below it there is nothing to tell.
        let s = slope_of(d, horizontal);
        let b = match self.slope.of(s) {
            Some(b) => b,
            None if s >= self.slope.start => self.slope.count - 1,
            None => return None,
        };
        let k = self.first[a * self.slope.count + b];
        if k == 0 {
            return None;
        }
        // Beyond every bin: the ray meets nothing; a start past the
        // field's far side ends its walk at once.
        let k = (k as usize).min(self.distances);
        let t = k as f32 * self.bin / horizontal * (1.0 - 1e-4);
        t.is_finite().then_some(t)
    }
}

impl HeightField {
    /// Fills azimuth bins `bins` of G (`slopes`, a row of distance bins per
    /// azimuth bin, the first row `bins.start`'s) from the blocks of
    /// `fill.level`: each block's steepest bound in the bin of its nearest
    /// distance, over the azimuth bins its corners span. The blocks go in
    /// tiles of [`TILE`] × [`TILE`], whose bins lie in a few nearby rows of
    /// G, and the tiles column by column when the view is along z (row by
    /// row otherwise), so that each column's run through the same rows of
    /// G; a tile whose corners' azimuths miss `bins` is passed over.
    fn fill_slopes(&self, fill: &Fill, bins: Range<usize>, slopes: &mut [f32]) {
        let Fill {
            eye,
            turn,
            azimuth,
            bin,
            distances,
            level,
            along_z,
        } = *fill;
        let (cw, ch) = (self.cols - 1, self.rows - 1);
        let (rows, cols) = (
            0..self.level_rows[level as usize],
            0..self.level_cols[level as usize],
        );
        // The blocks' corner lines: every 2^level-th grid line, and the last.
        let line = |b: usize, last: usize| (b << level).min(last);
        let xs: Vec<f32> = (0..=self.level_cols[level as usize])
            .map(|b| self.xs[line(b, cw)] - eye.x)
            .collect();
        // Each block's distance from the eye along x (0 over it).
        let gaps: Vec<f32> = xs.windows(2).map(|x| x[0].max(-x[1]).max(0.0)).collect();
        let (start, per_unit) = (azimuth.start, azimuth.per_unit);
        let end = azimuth.count as f32;
        let a_count = azimuth.count as u32;
        let (per_bin, last_bin) = (1.0 / bin, (distances - 1) as f32);
        let mut highs = [0.0f32; TILE];
        // Per block of a tile's row: its distance bin, its first azimuth
        // bin and one past its last, and its bound.
        let mut out = TileRow::default();
        // A tile's row of corners: pseudo-angles and squared distances.
        let mut below = Corners::default();
        let mut above = Corners::default();
        // The slab's azimuths, a bin wider each side than `bins` against
        // rounding: tiles outside them write nothing to it.
        let (slab_start, span) = (
            start + (bins.start as f32 - 1.0) / per_unit,
            (bins.len() as f32 + 2.0) / per_unit,
        );
        let (first_bin, end_bin) = (bins.start as u32, bins.end as u32);
        // Tile corners (i0, j0), in lines of tiles along the outer axis.
        let (outer, inner) = if along_z {
            (cols.clone(), rows.clone())
        } else {
            (rows.clone(), cols.clone())
        };
        let tiles = outer.step_by(TILE).flat_map(|o| {
            inner
                .clone()
                .step_by(TILE)
                .map(move |i| if along_z { (i, o) } else { (o, i) })
        });
        for (i0, j0) in tiles {
            let n = TILE.min(cols.end - j0);
            let tile_rows = i0..(i0 + TILE).min(rows.end);
            // A tile wholly outside the table's azimuths holds nothing for it.
            let (z0, z1) = (
                self.zs[line(i0, ch)] - eye.z,
                self.zs[line(tile_rows.end, ch)] - eye.z,
            );
            let (x0, x1) = (xs[j0], xs[j0 + n]);
            let around = x0 <= 0.0 && x1 >= 0.0 && z0 <= 0.0 && z1 >= 0.0;
            let p =
                [(x0, z0), (x0, z1), (x1, z0), (x1, z1)].map(|(x, z)| turned(diamond(x, z), turn));
            let (p_lo, p_hi) = (
                p.iter().copied().fold(f32::INFINITY, f32::min),
                p.iter().copied().fold(f32::NEG_INFINITY, f32::max),
            );
            if !around
                && p_hi - p_lo <= 2.0
                && (p_hi + 1e-5 < slab_start || p_lo - 1e-5 >= slab_start + span)
            {
                continue;
            }
            let corners = |bi: usize, out: &mut Corners| {
                let z = self.zs[line(bi, ch)] - eye.z;
                for ((&x, p), d2) in xs[j0..=j0 + n].iter().zip(&mut out.p).zip(&mut out.d2) {
                    (*p, *d2) = (turned(diamond(x, z), turn), x * x + z * z);
                }
            };
            corners(tile_rows.start, &mut below);
            for bi in tile_rows {
                corners(bi + 1, &mut above);
                self.block_highs(level, bi, j0..j0 + n, &mut highs[..n]);
                let (z0, z1) = (
                    self.zs[line(bi, ch)] - eye.z,
                    self.zs[line(bi + 1, ch)] - eye.z,
                );
                let dz = z0.max(-z1).max(0.0);
                // Without branches and one quantity to an array, so that
                // it runs in vector lanes.
                for c in 0..n {
                    let near = (gaps[j0 + c] * gaps[j0 + c] + dz * dz).sqrt();
                    let (b0, b1, a0, a1) = (below.p[c], below.p[c + 1], above.p[c], above.p[c + 1]);
                    // Single min/max instructions (`lower`, `higher`) where
                    // `f32::min` takes three to pass over a NaN: the only
                    // NaN corners (at the eye) are in blocks taken at every
                    // azimuth anyway.
                    let p_lo = lower(lower(a1, a0), lower(b1, b0));
                    let p_hi = higher(higher(a1, a0), higher(b1, b0));
                    let far2 = higher(
                        higher(above.d2[c + 1], above.d2[c]),
                        higher(below.d2[c + 1], below.d2[c]),
                    );
                    // A block around the eye, or across the seam behind the
                    // view, may be at any azimuth. Bins are truncations of
                    // non-negative values (`floor` is a library call
                    // without SSE4.1); one past the last is 0 (none) below
                    // the table.
                    let any = (near == 0.0) | (p_hi - p_lo > 2.0) | p_lo.is_nan();
                    let a_lo = higher(0.0, lower(end, (p_lo - 1e-5 - start) * per_unit));
                    let a_end = higher(
                        0.0,
                        lower(end - 1.0, (p_hi + 1e-5 - start) * per_unit) + 1.0,
                    );
                    let rise = highs[c] - eye.y;
                    let to_near = if near > 0.0 {
                        rise / near
                    } else {
                        f32::INFINITY
                    };
                    let to_far = rise / far2.sqrt();
                    let m = if rise < 0.0 { to_far } else { to_near };
                    // Truncated here, where the conversions run in the lanes
                    // too, through i32 (x86 has no unsigned conversion);
                    // G has fewer than 2³¹ entries.
                    out.k[c] = lower(last_bin, near * (1.0 - 1e-6) * per_bin) as i32 as u32;
                    out.lo[c] = if any { 0 } else { a_lo as i32 as u32 };
                    out.end[c] = if any { a_count } else { a_end as i32 as u32 };
                    // A NaN bound (a NaN height, which no ray hits)
                    // changes nothing.
                    out.m[c] = m + margin(m);
                }
                // Most blocks span one or two azimuth bins: both written
                // (the same one twice for one), without a loop.
                for c in 0..n {
                    // The block's azimuth bins within the slab, from its row.
                    let a_lo = (out.lo[c].max(first_bin) - first_bin) as usize;
                    let a_end = (out.end[c].min(end_bin).max(first_bin) - first_bin) as usize;
                    let (k, m) = (out.k[c] as usize, out.m[c]);
                    if a_end > a_lo + 2 {
                        for a in a_lo..a_end {
                            let g = &mut slopes[a * distances + k];
                            *g = g.max(m);
                        }
                    } else if a_end > a_lo {
                        let (g0, g1) = (a_lo * distances + k, (a_end - 1) * distances + k);
                        slopes[g0] = slopes[g0].max(m);
                        slopes[g1] = slopes[g1].max(m);
                    }
                }
                (below, above) = (above, below);
            }
        }
    }

    /// The highest height under blocks `cols` of row `bi` of `level`.
    fn block_highs(&self, level: u32, bi: usize, cols: Range<usize>, highs: &mut [f32]) {
        if level == 0 {
            let top = &self.data[bi * self.cols..][..self.cols];
            let bottom = &self.data[(bi + 1) * self.cols..][..self.cols];
            for (j, h) in cols.zip(highs.iter_mut()) {
                *h = top[j].max(top[j + 1]).max(bottom[j].max(bottom[j + 1]));
            }
        } else {
            let row = self.level_base[level as usize] + bi * self.level_cols[level as usize];
            for (j, h) in cols.zip(highs.iter_mut()) {
                *h = self.data[self.ranges_at + 2 * (row + j) + 1];
            }
        }
    }
}
