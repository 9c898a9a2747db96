//! Light horizons: for one light direction, a bound per block on how high
//! the terrain rises ahead of the block toward the light, relative to a
//! ray that climbs toward it.
//!
//! A shadow ray toward a distant light climbs at a fixed slope. Where it
//! enters a block B, let it be at height y. Every point it passes from
//! there on lies in B or in a block B′ that the light's rays reach from B,
//! and it gets there only after crossing whole blocks between them, so by
//! then it has climbed at least `gain(B, B′)`. If
//! `y > max over B′ of (highest(B′) − gain(B, B′))`, the ray passes above
//! every cell from B on, the walk would skip every one of them, and no
//! triangle ahead can block it: the walk may stop there, with the answer it
//! would have reached. A bound on that maximum, plus a margin for rounding,
//! is the block's horizon.
//!
//! The walk climbs the hierarchy one level a step as a shadow ray rises
//! from the ground, and without horizons it climbs until the ray leaves the
//! field's box or passes over the root's range. With them, a lit ray stops
//! at the first block whose horizon it clears, from level 1 up.
//!
//! They are built in one sweep per level along the light's dominant axis
//! (z, say, when the light's heading is nearer z than x), slab by slab of
//! blocks (a row of blocks, for z) from the far side back. A ray in a slab
//! crosses the rest of it, moving sideways by at most the cone's steepest
//! sideways drift times the slab's depth, so it passes over a window of
//! the slab's blocks, and enters the next slab within that window. Per
//! block, `E` bounds what lies ahead of a ray that *enters* the slab through
//! its near face in the block's span: the highest of the window's blocks,
//! or the next slab's `E` over the window less the climb across this
//! whole slab. The horizon of a block, for a ray anywhere in it, is the
//! highest of its window's blocks or of the next slab's `E` over the
//! window, with no climb credited. Each whole slab crossed counts its
//! climb in full: the sweep adds them up, for a few reads per block. (A
//! search of every block ahead, which this replaced, was about as tight
//! where it reached, 1.5% fewer shadow-ray steps at its finest level on
//! the peer workload, but cost ten times more per level down, so it
//! stopped at level 3; the sweep reaches level 1 in a few milliseconds at
//! 1025² and about 50 at 4097².)
//!
//! They hold for every direction within a cone around the light (a soft
//! sun's disc, widened a little for rounding): the climb is the least per
//! unit of the sweep's axis over the cone, the drift the most, and the
//! slabs and windows are the same for all of its directions, since none of
//! them changes the sign of x or z. Rays outside the cone (sky-light rays,
//! mostly) walk as before.

use glam::Vec3;
use rayon::prelude::*;

use super::{higher, HeightField};

/// Horizons of the blocks of levels `from_level` and up, for rays within
/// a cone of directions around a light.
#[derive(Debug, Clone)]
pub struct Horizon {
    /// The cone's axis (unit).
    axis: Vec3,
    /// The cosine of the angle within which a ray's direction must lie
    /// from the axis for the horizons to apply to it.
    cos_radius: f32,
    /// The lowest level with horizons.
    pub(super) from_level: u32,
    /// One per block of levels `from_level` and up, indexed as the ranges
    /// less the start of level `from_level`.
    pub(super) values: Vec<f32>,
}

impl Horizon {
    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.values.len() * 4
    }

    /// Whether the horizons apply to a ray along `dir` (any length).
    #[inline(always)]
    pub(super) fn covers(&self, dir: Vec3) -> bool {
        dir.dot(self.axis) >= self.cos_radius * dir.length()
    }
}

/// The angle, radians, added to a light's radius for the rays the horizons
/// apply to: far above the rounding of a unit vector's dot product near 1
/// (an f32 step there is 3.5e-4 radians).
const COVER_SLACK: f64 = 1e-3;

/// The angle added again for building: directions that pass the cover test
/// lie within it despite rounding.
const BUILD_SLACK: f64 = 2e-3;

/// A cone of directions as the horizons see it.
#[derive(Debug, Clone, Copy)]
struct Cone {
    /// Whether its directions travel toward +x (all alike).
    fwd_x: bool,
    /// Whether they travel toward +z.
    fwd_z: bool,
    /// The least climb of any of them per unit of travel along x.
    climb_x: f64,
    /// And along z.
    climb_z: f64,
    /// Whether the axis's heading is nearer z than x: the sweep's axis.
    along_z: bool,
    /// The most any of them moves along the other axis per unit of travel
    /// along the sweep's.
    drift: f64,
}

/// The directions within `radius` of `axis`, as the horizons see them:
/// whether each travels toward +x and +z (all alike), and the least climb
/// of any per unit of x and per unit of z. None when some does not climb,
/// or the cone reaches an axis plane or the zenith.
fn cone(axis: Vec3, radius: f64) -> Option<Cone> {
    let a = axis.as_dvec3();
    if !a.is_finite() || a.length() < 0.5 {
        return None;
    }
    let a = a.normalize();
    let elevation = a.y.clamp(-1.0, 1.0).asin();
    let azimuth = a.x.atan2(a.z);
    let half_pi = std::f64::consts::FRAC_PI_2;
    if elevation - radius <= 0.0 || elevation + radius >= half_pi {
        return None;
    }
    // The azimuths of the cone's directions: within `spread` of the axis's.
    let spread = (radius.sin() / elevation.cos()).min(1.0).asin();
    let (first, last) = (azimuth - spread, azimuth + spread);
    if (first / half_pi).floor() != (last / half_pi).floor() {
        return None; // some direction runs along x or z, or turns back
    }
    let most = |f: fn(f64) -> f64| f(first).abs().max(f(last).abs());
    let least_climb = (elevation - radius).tan() * (1.0 - 1e-6);
    let along_z = azimuth.cos().abs() >= azimuth.sin().abs();
    // |tan| (|cot|) grows toward one end of a quadrant: the larger end's.
    let drift = if along_z {
        most(f64::tan)
    } else {
        most(|a: f64| 1.0 / a.tan())
    } * (1.0 + 1e-6);
    Some(Cone {
        fwd_x: azimuth.sin() > 0.0,
        fwd_z: azimuth.cos() > 0.0,
        climb_x: least_climb / most(f64::sin),
        climb_z: least_climb / most(f64::cos),
        along_z,
        drift,
    })
}

impl HeightField {
    /// Horizons for rays within `radius` (radians) of `axis`, from level 1
    /// up, or None when there is nothing to gain: a light too low (some
    /// direction does not climb), a cone that reaches an axis plane or the
    /// zenith, or a field too small for levels with horizons.
    pub fn horizon(&self, axis: Vec3, radius: f32) -> Option<Horizon> {
        self.horizon_from(axis, radius, 1)
    }

    /// The finest level whose horizons and neighbourhood peaks pay for
    /// `rays` camera rays (and as many shadow rays at most): the first
    /// from 1 up with no more blocks than rays (the root's at most).
    ///
    /// A horizon sweep is one thread's, about 7 ns a block on the Zen 4
    /// machine, and the finest level's is the build's longest step; what
    /// it saves grows with the rays that stop on it. On the peer workload
    /// (2.07 M camera rays, 1.6-1.7 M shadow rays), starting at level 2
    /// instead of 1 cost 1025²'s frame 10 ms of tracing (0.262 M level-1
    /// blocks), was even at 2049² (1.05 M), and at 4097² (4.19 M) saved
    /// 14-20 ms of build for no shadow ray slower: 9.4 / 18.5 Mrays/s (1
    /// / 2 threads) either way, alternating in `scree bench`. A bundle's
    /// cone stops descending once it is wider than a block, and with more
    /// blocks than rays it is wider than a level-1 block's neighbourhood
    /// before it gets there; the level-1 peaks were three quarters of the
    /// peaks' 21 ms at 4097².
    pub(super) fn finest_level_paying(&self, rays: usize) -> u32 {
        (1..self.top)
            .find(|&k| self.level_rows[k as usize] * self.level_cols[k as usize] <= rays)
            .unwrap_or(self.top)
            .max(1)
    }

    /// [`HeightField::horizon`] for the blocks of levels `from_level` (1 or
    /// more) and up.
    pub(super) fn horizon_from(&self, axis: Vec3, radius: f32, from_level: u32) -> Option<Horizon> {
        let cover = radius.max(0.0) as f64 + COVER_SLACK;
        let cone = cone(axis, cover + BUILD_SLACK)?;
        if self.top < 2 {
            return None;
        }
        let [root_lo, root_hi] = self.range(self.top, 0, 0);
        // Rounding: the ray's heights and the gains are computed in f32 by
        // the walk, in f64 here; a margin far above either's error.
        let margin = (root_hi.abs().max(root_lo.abs()) + 1.0) * 1e-5;
        let from_level = from_level.clamp(1, self.top);
        // Levels are independent of each other: built side by side, each
        // into its own part of the values (laid out as the ranges are).
        let base = self.level_base[from_level as usize];
        let mut values = vec![0.0f32; self.level_base[self.top as usize] + 1 - base];
        self.split_by_level(&mut values, from_level)
            .into_par_iter()
            .for_each(|(level, out)| self.level_horizons(level, cone, margin, out));
        Some(Horizon {
            axis: axis.normalize(),
            cos_radius: cover.cos() as f32,
            from_level,
            values,
        })
    }

    /// The horizons of the blocks of `level` into `out` (row-major, each
    /// plus `margin`), swept slab by slab along the cone's axis (see the module
    /// doc). Along z a slab is a row of blocks, along x a column; either
    /// way the sweep runs along the rows in memory.
    fn level_horizons(&self, level: u32, cone: Cone, margin: f32, out: &mut [f32]) {
        let k = level as usize;
        let (rows, cols) = (self.level_rows[k], self.level_cols[k]);
        let ranges = self.level_ranges(level);
        let highest = |i: usize, j: usize| ranges[2 * (i * cols + j) + 1] as f64;
        let line = |lines: &[f32], b: usize| lines[(b << level).min(lines.len() - 1)] as f64;
        let (slab_lines, side_lines, slabs, per_slab) = if cone.along_z {
            (&self.zs, &self.xs, rows, cols)
        } else {
            (&self.xs, &self.zs, cols, rows)
        };
        // Sideways, a margin far above the walk's rounding of the points
        // where rays enter blocks.
        let [lo, hi] = [self.bounds.min, self.bounds.max];
        let slack = 1e-5 * (lo.abs().max(hi.abs()).max_element() as f64 + 1.0);
        // Each slab's depth, and how many blocks beyond its own a ray in any
        // slab passes over sideways: it drifts by at most drift · depth, so
        // no more than the narrowest whole block fits into that, plus one
        // it may reach into. Every slab takes the deepest slab's window (a
        // narrower last slab's lies within it).
        let narrowest = (0..per_slab.saturating_sub(1))
            .map(|b| line(side_lines, b + 1) - line(side_lines, b))
            .fold(f64::INFINITY, f64::min);
        let depth: Vec<f64> = (0..slabs)
            .map(|a| (line(slab_lines, a + 1) - line(slab_lines, a)).abs())
            .collect();
        let deepest = depth.iter().copied().fold(0.0, f64::max);
        let blocks = ((cone.drift * deepest + slack) / narrowest).floor() + 1.0;
        let n = if blocks < per_slab as f64 {
            blocks as usize
        } else {
            per_slab
        };
        // Block `b` (of `count`) and the `n` beyond it the way the rays
        // drift.
        let window = |b: usize, count: usize, drifts_up: bool| {
            if drifts_up {
                b..(b + n + 1).min(count)
            } else {
                b.saturating_sub(n)..b + 1
            }
        };
        // Slabs go from the far side back; crossing slab a climbs at least
        // credit[a].
        let (forward, sideways, climb) = if cone.along_z {
            (cone.fwd_z, cone.fwd_x, cone.climb_z)
        } else {
            (cone.fwd_x, cone.fwd_z, cone.climb_x)
        };
        let credit: Vec<f64> = depth.iter().map(|d| climb * d).collect();
        // 0..count, from the high end when `descending`.
        let order = |count: usize, descending: bool| -> Vec<usize> {
            if descending {
                (0..count).rev().collect()
            } else {
                (0..count).collect()
            }
        };
        assert_eq!(out.len(), rows * cols, "one horizon per block");
        if cone.along_z {
            // Row a's E from the E of the row after it (`entering`).
            let mut entering = vec![f64::NEG_INFINITY; cols];
            let mut next = vec![0.0f64; cols];
            for a in order(rows, forward) {
                for b in 0..cols {
                    let (mut near, mut ahead) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
                    for w in window(b, cols, sideways) {
                        near = higher(near, highest(a, w));
                        ahead = higher(ahead, entering[w]);
                    }
                    out[a * cols + b] = (higher(near, ahead) as f32) + margin;
                    next[b] = higher(near, ahead - credit[a]);
                }
                std::mem::swap(&mut entering, &mut next);
            }
        } else {
            // Column a's E from the E of the column after it, over a window
            // of rows: rows go in the order the rays drift from, so that a
            // window's other rows are done before it, and the E of the last
            // few rows are kept in a ring. Per row, what the window's blocks
            // and its other rows give is found first, along memory; only
            // the row's own chain of E, column after column, is left to run
            // in order.
            let ring_rows = n + 1;
            let mut ring = vec![f64::NEG_INFINITY; ring_rows * cols];
            let mut near = vec![0.0f64; cols];
            let mut others = vec![0.0f64; cols];
            let columns = order(cols, forward);
            for i in order(rows, sideways) {
                near.fill(f64::NEG_INFINITY);
                others.fill(f64::NEG_INFINITY);
                for w in window(i, rows, sideways) {
                    let heights = &ranges[2 * w * cols..2 * (w + 1) * cols];
                    for (v, range) in near.iter_mut().zip(heights.chunks_exact(2)) {
                        *v = higher(*v, range[1] as f64);
                    }
                    if w != i {
                        let e = &ring[(w % ring_rows) * cols..][..cols];
                        // Block a's next column is a + 1 forward, a − 1 back.
                        let (from, to) = if forward {
                            (&e[1..], &mut others[..cols - 1])
                        } else {
                            (&e[..cols - 1], &mut others[1..])
                        };
                        for (v, &x) in to.iter_mut().zip(from) {
                            *v = higher(*v, x);
                        }
                    }
                }
                let own = (i % ring_rows) * cols;
                let out_row = &mut out[i * cols..(i + 1) * cols];
                let mut step = |a: usize, chained: f64| {
                    let ahead = higher(others[a], chained);
                    out_row[a] = (higher(near[a], ahead) as f32) + margin;
                    // max(near, max(others, chained) − credit), with the
                    // subtraction moved inside the max (exact: rounding is
                    // monotonic), so that the chain from block to block is
                    // one subtraction and one max.
                    let e = higher(higher(near[a], others[a] - credit[a]), chained - credit[a]);
                    ring[own + a] = e;
                    e
                };
                columns
                    .iter()
                    .fold(f64::NEG_INFINITY, |chained, &a| step(a, chained));
            }
        }
    }
}
