//! Light horizons: for one light direction, a bound per block on how high
//! the terrain rises ahead of the block toward the light, relative to a
//! ray that climbs toward it.
//!
//! A shadow ray toward a distant light climbs at a fixed slope. Where it
//! enters a block B, let it be at height y. Every point it passes from
//! there on lies in B or in a block B′ ahead of B, which it reaches only
//! after crossing the whole blocks between them, so by then it has climbed
//! at least `gain(B, B′)`: the crossed spans along x and along z, each
//! times the ray's climb per unit of that axis. If
//! `y > max over B′ of (highest(B′) − gain(B, B′))`, the ray passes above
//! every cell from B on, the walk would skip every one of them, and no
//! triangle ahead can block it: the walk may stop there, with the answer it
//! would have reached. That maximum, plus a margin for rounding, is the
//! block's horizon.
//!
//! The walk climbs the hierarchy one level a step as a shadow ray rises
//! from the ground, and without horizons it climbs until the ray leaves the
//! field's box or passes over the root's range. With them, a lit ray stops
//! at the first block of a level with horizons whose horizon it clears.
//! Horizons are built from the root down, level by level, while the next
//! level's searches (a block's visits the blocks ahead of it until none
//! left can matter) stay within a budget of a few million visits, so the
//! build takes a few milliseconds on any grid; the finest levels are the
//! ones that save the most steps.
//!
//! They hold for every direction within a cone around the light (a soft
//! sun's disc, widened a little for rounding): the gains use the least
//! climb per unit of x and of z over the cone, and the blocks ahead are
//! the same for all of its directions, since none of them changes the
//! sign of x or z. Rays outside the cone (sky-light rays, mostly) walk as
//! before.

use glam::Vec3;
use rayon::prelude::*;

use super::HeightField;

/// Blocks visited, at most, in building one level's horizons (the search
/// of a block visits those ahead of it until none left can matter): a few
/// milliseconds.
const VISIT_BUDGET: u64 = 1_500_000;

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
    Some(Cone {
        fwd_x: azimuth.sin() > 0.0,
        fwd_z: azimuth.cos() > 0.0,
        climb_x: least_climb / most(f64::sin),
        climb_z: least_climb / most(f64::cos),
    })
}

impl HeightField {
    /// Horizons for rays within `radius` (radians) of `axis`, or None when
    /// there is nothing to gain: a light too low (some direction does not
    /// climb), a cone that reaches an axis plane or the zenith, or a field
    /// too small for levels with horizons.
    pub fn horizon(&self, axis: Vec3, radius: f32) -> Option<Horizon> {
        let cover = radius.max(0.0) as f64 + COVER_SLACK;
        let cone = cone(axis, cover + BUILD_SLACK)?;
        if self.top < 2 {
            return None;
        }
        let [root_lo, root_hi] = self.range(self.top, 0, 0);
        // Rounding: the ray's heights and the gains are computed in f32 by
        // the walk, in f64 here; a margin far above either's error.
        let margin = (root_hi.abs().max(root_lo.abs()) + 1.0) * 1e-5;
        // Level by level from the root down, while the next level's work
        // (about ten times this one's: four times the blocks, each with a
        // longer way ahead in blocks) stays within the budget. Each block
        // counts as a visit too, so that a field whose searches end at once
        // (a plane) still stops before its finest levels' millions of
        // blocks.
        let mut levels = Vec::new();
        let mut from_level = self.top;
        loop {
            let (values, visits) = self.level_horizons(from_level, cone, margin);
            let work = visits + values.len() as u64;
            levels.push(values);
            if from_level == 1 || work.saturating_mul(10) > VISIT_BUDGET {
                break;
            }
            from_level -= 1;
        }
        let values = levels.into_iter().rev().flatten().collect();
        Some(Horizon {
            axis: axis.normalize(),
            cos_radius: cover.cos() as f32,
            from_level,
            values,
        })
    }

    /// The horizons of the blocks of `level` (row-major, each plus
    /// `margin`), and how many blocks their searches visited.
    fn level_horizons(&self, level: u32, cone: Cone, margin: f32) -> (Vec<f32>, u64) {
        let k = level as usize;
        let (rows, cols) = (self.level_rows[k], self.level_cols[k]);
        let ahead = Ahead::new(self, level, cone);
        let mut values = vec![0.0; rows * cols];
        let visits = values
            .par_chunks_mut(cols)
            .enumerate()
            .map(|(bi, out)| {
                let mut visits = 0;
                for (bj, out) in out.iter_mut().enumerate() {
                    let (value, n) = self.search_horizon(level, bi, bj, cone, &ahead);
                    *out = value + margin;
                    visits += n;
                }
                visits
            })
            .sum();
        (values, visits)
    }

    /// max over the blocks B′ of `level` ahead of block (bi, bj) toward
    /// the `cone`'s directions, itself included, of highest(B′) − gain(B, B′). Blocks are
    /// visited column by column ahead and row by row ahead within a
    /// column; `ahead` bounds what the rest of a column, or of all the
    /// columns ahead, can give, and the gains only grow, so the search
    /// stops as soon as nothing left can raise the maximum.
    /// Returns it with the number of blocks visited.
    fn search_horizon(
        &self,
        level: u32,
        bi: usize,
        bj: usize,
        cone: Cone,
        ahead: &Ahead,
    ) -> (f32, u64) {
        let k = level as usize;
        let (rows, cols) = (self.level_rows[k], self.level_cols[k]);
        let Cone {
            fwd_x,
            fwd_z,
            climb_x,
            climb_z,
        } = cone;
        // Column (row) `d` blocks ahead, if on the grid.
        let column = |d: usize| {
            if fwd_x {
                Some(bj + d).filter(|&c| c < cols)
            } else {
                bj.checked_sub(d)
            }
        };
        let row = |d: usize| {
            if fwd_z {
                Some(bi + d).filter(|&r| r < rows)
            } else {
                bi.checked_sub(d)
            }
        };
        let mut best = self.range(level, bi, bj)[1] as f64;
        let mut visits = 0;
        let mut dc = 0;
        while let Some(c) = column(dc) {
            let gx = crossed(&self.xs, level, bj, c, fwd_x) * climb_x;
            if ahead.all(bi, c) as f64 - gx <= best {
                break;
            }
            let mut dr = 0;
            while let Some(r) = row(dr) {
                let gain = gx.max(crossed(&self.zs, level, bi, r, fwd_z) * climb_z);
                if ahead.column(r, c) as f64 - gain <= best {
                    break;
                }
                best = best.max(self.range(level, r, c)[1] as f64 - gain);
                visits += 1;
                dr += 1;
            }
            dc += 1;
        }
        (best as f32, visits)
    }
}

/// The span of the whole blocks of `level` strictly between block `near`
/// and block `far` ahead of it (toward higher indices where `forward`),
/// along one axis whose grid lines are `lines`, placed as the walk places
/// them.
fn crossed(lines: &[f32], level: u32, near: usize, far: usize, forward: bool) -> f64 {
    let line = |b: usize| lines[(b << level).min(lines.len() - 1)] as f64;
    match (forward, near.abs_diff(far)) {
        (_, 0 | 1) => 0.0,
        (true, _) => line(far) - line(near + 1),
        (false, _) => line(near) - line(far + 1),
    }
}

/// For the blocks of one level, the highest height over the blocks from
/// each one on toward a direction: along its column, and over all the
/// columns from its own on.
struct Ahead {
    cols: usize,
    column: Vec<f32>,
    all: Vec<f32>,
}

impl Ahead {
    fn new(field: &HeightField, level: u32, cone: Cone) -> Ahead {
        let Cone { fwd_x, fwd_z, .. } = cone;
        let k = level as usize;
        let (rows, cols) = (field.level_rows[k], field.level_cols[k]);
        let mut column = vec![f32::NEG_INFINITY; rows * cols];
        let row_order: Vec<usize> = if fwd_z {
            (0..rows).rev().collect()
        } else {
            (0..rows).collect()
        };
        let col_order: Vec<usize> = if fwd_x {
            (0..cols).rev().collect()
        } else {
            (0..cols).collect()
        };
        let mut next: Option<usize> = None;
        for &i in &row_order {
            for j in 0..cols {
                let own = field.range(level, i, j)[1];
                column[i * cols + j] = next.map_or(own, |n| own.max(column[n * cols + j]));
            }
            next = Some(i);
        }
        let mut all = vec![f32::NEG_INFINITY; rows * cols];
        for i in 0..rows {
            let mut running = f32::NEG_INFINITY;
            for &j in &col_order {
                running = running.max(column[i * cols + j]);
                all[i * cols + j] = running;
            }
        }
        Ahead { cols, column, all }
    }

    /// Highest over block (i, j) and those after it in its column.
    fn column(&self, i: usize, j: usize) -> f32 {
        self.column[i * self.cols + j]
    }

    /// Highest over the blocks from (i, j) on, in its column and the
    /// columns after it.
    fn all(&self, i: usize, j: usize) -> f32 {
        self.all[i * self.cols + j]
    }
}
