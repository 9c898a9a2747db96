//! Hydrology: where water collects and where it runs, on any grid of
//! heights (generated, a heightmap or a DEM), and the channels rivers cut.
//!
//! ```json
//! "terrain": { "rivers": { "catchment": 0.01, "width": 3, "depth": 0.6 } }
//! ```
//!
//! - **Lakes.** Depressions are filled by priority-flood (Barnes, Lehman
//!   and Mulla 2014, with its queue of pit cells): samples are taken from
//!   the outlets (the grid's edge and any sample at or below the sea)
//!   inward, lowest first, and each one reached is raised to the level it
//!   was reached at. A lake is a connected set of raised samples; its
//!   level is that of its spill point. Lakes shallower than `min_lake_depth`
//!   stay dry (the water runs through them).
//! - **Flow.** Each sample drains to its steepest lower neighbour of eight
//!   (D8) on the filled surface; on a lake or any flat, to the neighbour it
//!   was reached from, which leads to the spill point. Every sample so
//!   drains to an outlet and the flood's order is a downstream-first order.
//! - **Rivers.** A sample whose catchment (the area that drains through
//!   it) is at least `catchment` of the tile carries a river. Its width and
//!   depth grow with its discharge Q ∝ catchment as Leopold and Maddock's
//!   hydraulic geometry has it: width ∝ Q^0.5, depth ∝ Q^0.4 (the width
//!   narrowed near the source, [`source_taper`]). Its surface
//!   lies a fifth of its depth under the ground it runs on and never
//!   rises downstream: it is raised where needed to the surface of what it
//!   runs into (river, lake or sea).
//! - **Carving.** Each river sample cuts a channel with a parabolic bed
//!   across its width and banks that slope from the water's edge up to
//!   the land over `banks`; the ground becomes the lowest of what the
//!   river samples around it cut, so overlapping cuts do not depend on
//!   their order.
//!
//! Everything here is a pure function of the heights and the parameters:
//! the same bytes on any thread count.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use rayon::prelude::*;

use super::Heightmap;

/// A sample without a downstream neighbour: an outlet.
pub const OUTLET: u32 = u32::MAX;

/// Fraction of a river's depth by which its surface lies under the land
/// it runs on.
pub const FREEBOARD: f32 = 0.2;

/// A river's width near its source, as a share of the hydraulic
/// geometry's: a third where it starts (q = 1, q its catchment over the
/// threshold), growing linearly to all of it where the catchment has
/// doubled, so that a river rises as a stream rather than a pool.
/// Increasing in q, so widths never shrink downstream.
#[inline]
pub fn source_taper(q: f64) -> f64 {
    (1.0 / 3.0 + 2.0 / 3.0 * (q - 1.0)).clamp(1.0 / 3.0, 1.0)
}

/// The water's mesh dips this fraction of a river's first depth below the
/// water at its dry corners ([`Waters::skirt`]).
pub const SKIRT: f32 = 0.5;

/// Exponents of width and depth in the discharge (Leopold and Maddock
/// 1953).
pub const WIDTH_EXPONENT: f64 = 0.5;
/// See [`WIDTH_EXPONENT`].
pub const DEPTH_EXPONENT: f64 = 0.4;

/// Validated river and lake parameters (`terrain.rivers`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rivers {
    /// Catchment, as a fraction of the tile's area, from which a sample
    /// carries a river, in (0, 1].
    pub catchment: f64,
    /// Channel width where a river starts, world units.
    pub width: f64,
    /// Widest channel, world units.
    pub max_width: f64,
    /// Water depth where a river starts, world units.
    pub depth: f64,
    /// Width of the banks beside the channel over which the land rises
    /// back to its own height, world units.
    pub banks: f64,
    /// Lakes shallower than this stay dry, world units; `None`: no lakes.
    pub min_lake_depth: Option<f64>,
    /// The sea's level, world units, if there is a sea: samples at or
    /// below it are outlets and hold no river or lake.
    pub sea_level: Option<f64>,
    /// Distance from the water over which the land dries, world units
    /// (the moisture mask falls from 1 at the water to 0 here).
    pub reach: f64,
}

/// The result of priority-flood on a grid.
#[derive(Debug, Clone)]
pub struct Flood {
    /// The filled surface: each sample raised to the level at which water
    /// leaves its depression (its own height if it drains freely).
    pub filled: Vec<f32>,
    /// Samples in the order the flood took them: outlets first, each
    /// sample after the one it drains to.
    pub order: Vec<u32>,
    /// The sample each one drains to ([`OUTLET`] for outlets).
    pub down: Vec<u32>,
}

/// Orders f32 heights as u32 keys (finite values; NaN sorts first).
#[inline]
fn key(v: f32) -> u32 {
    if v.is_nan() {
        return 0;
    }
    let b = v.to_bits();
    if b >> 31 == 1 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// The offsets [rows, columns] of a sample's eight neighbours.
const NEIGHBOURS: [(isize, isize); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];

/// The neighbours of sample (i, j) on a `w` × `h` grid that lie on it:
/// index and offset [rows, columns].
#[inline]
pub(crate) fn neighbours(
    i: usize,
    j: usize,
    w: usize,
    h: usize,
) -> impl Iterator<Item = (usize, isize, isize)> {
    NEIGHBOURS.iter().filter_map(move |&(di, dj)| {
        let (ni, nj) = (i as isize + di, j as isize + dj);
        (ni >= 0 && nj >= 0 && ni < h as isize && nj < w as isize)
            .then(|| (ni as usize * w + nj as usize, di, dj))
    })
}

/// Priority-flood over `heights` (`w` × `h`, row-major), with `cell`
/// the spacing [dx, dz]: the filled surface, the flood's order and the
/// drainage of every sample. Outlets are the edge's samples, samples at
/// or below `sea` and any sample whose height is not finite.
pub fn flood(heights: &[f32], w: usize, h: usize, cell: [f64; 2], sea: Option<f32>) -> Flood {
    let n = w * h;
    let mut filled = heights.to_vec();
    let mut order = Vec::with_capacity(n);
    let mut parent = vec![OUTLET; n];
    let mut closed = vec![false; n];
    let mut open: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
    let mut pit: VecDeque<u32> = VecDeque::new();
    let is_outlet = |k: usize| {
        let (i, j) = (k / w, k % w);
        let v = heights[k];
        i == 0
            || j == 0
            || i + 1 == h
            || j + 1 == w
            || !v.is_finite()
            || sea.is_some_and(|s| v <= s)
    };
    // Outlets enter lowest first, ties by index: the heap's key is
    // (height, index), which makes the order a function of the heights.
    for k in 0..n {
        if is_outlet(k) {
            closed[k] = true;
            if !filled[k].is_finite() {
                filled[k] = f32::NEG_INFINITY;
            }
            open.push(Reverse((key(filled[k]), k as u32)));
        }
    }
    loop {
        let c = match pit.pop_front() {
            Some(c) => c,
            None => match open.pop() {
                Some(Reverse((_, c))) => c,
                None => break,
            },
        };
        order.push(c);
        let (i, j) = (c as usize / w, c as usize % w);
        let level = filled[c as usize];
        for (m, _, _) in neighbours(i, j, w, h) {
            if closed[m] {
                continue;
            }
            closed[m] = true;
            parent[m] = c;
            if filled[m] <= level {
                filled[m] = level;
                pit.push_back(m as u32);
            } else {
                open.push(Reverse((key(filled[m]), m as u32)));
            }
        }
    }
    // Steepest descent on the filled surface where there is a lower
    // neighbour; else (lakes, flats) the neighbour the flood came from.
    // Both lead to samples taken earlier, so the order is downstream-first.
    let down: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|k| {
            if parent[k] == OUTLET {
                return OUTLET;
            }
            let (i, j) = (k / w, k % w);
            let mut best = (0.0f64, parent[k]);
            for (m, di, dj) in neighbours(i, j, w, h) {
                let drop = filled[k] as f64 - filled[m] as f64;
                if drop <= 0.0 {
                    continue;
                }
                let run = ((di as f64 * cell[1]).powi(2) + (dj as f64 * cell[0]).powi(2)).sqrt();
                let slope = drop / run;
                if slope > best.0 {
                    best = (slope, m as u32);
                }
            }
            best.1
        })
        .collect();
    Flood {
        filled,
        order,
        down,
    }
}

/// Flow accumulation: the number of samples that drain through each one
/// (itself included), gathered downstream in the flood's order. The
/// outlets' counts sum to the sample count.
pub fn accumulate(flood: &Flood) -> Vec<u32> {
    let mut count = vec![1u32; flood.down.len()];
    for &c in flood.order.iter().rev() {
        let d = flood.down[c as usize];
        if d != OUTLET {
            count[d as usize] += count[c as usize];
        }
    }
    count
}

/// The lakes of a flood: per sample, the level of the lake it lies in, or
/// NaN, and how many lakes there are. A lake is a connected (8-neighbour)
/// set of samples the flood raised to one level; it is kept if it is
/// `min_depth` deep somewhere.
pub fn lakes(
    heights: &[f32],
    flood: &Flood,
    w: usize,
    h: usize,
    min_depth: f32,
) -> (Vec<f32>, usize) {
    let n = w * h;
    let mut level = vec![f32::NAN; n];
    let mut seen = vec![false; n];
    let raised = |k: usize| flood.filled[k] > heights[k];
    let mut members = Vec::new();
    let mut stack = Vec::new();
    let mut kept = 0;
    for start in 0..n {
        if seen[start] || !raised(start) {
            continue;
        }
        let lake = flood.filled[start];
        members.clear();
        stack.push(start);
        seen[start] = true;
        let mut deepest = 0.0f32;
        while let Some(k) = stack.pop() {
            members.push(k);
            deepest = deepest.max(lake - heights[k]);
            let (i, j) = (k / w, k % w);
            for (m, _, _) in neighbours(i, j, w, h) {
                if !seen[m] && raised(m) && flood.filled[m] == lake {
                    seen[m] = true;
                    stack.push(m);
                }
            }
        }
        if deepest >= min_depth {
            kept += 1;
            for &k in &members {
                level[k] = lake;
            }
        }
    }
    (level, kept)
}

/// The water a terrain holds once its rivers have run: per grid sample,
/// the level of the water over it (NaN where dry), and per sample the
/// level of the nearest water and the distance to it, for wet banks and
/// the moisture mask.
#[derive(Debug, Clone, Default)]
pub struct Waters {
    /// Grid columns and rows.
    pub width: usize,
    /// See `width`.
    pub height: usize,
    /// Extent [x, z], world units.
    pub size: [f32; 2],
    /// Water surface per sample, NaN where dry.
    pub level: Vec<f32>,
    /// Level of the nearest water per sample (NaN beyond `reach`).
    pub nearest: Vec<f32>,
    /// Moisture per sample: 1 at the water, falling linearly to 0 at
    /// `reach` from it.
    pub moisture: Vec<f32>,
    /// Samples that carry a river.
    pub river_samples: usize,
    /// Samples under a lake.
    pub lake_samples: usize,
    /// Number of lakes.
    pub lakes: usize,
    /// How far below the lowest of its wet neighbours a dry corner of the
    /// water's mesh lies, world units: the surface dips under the banks,
    /// so the land, not the grid, draws the shoreline.
    pub skirt: f32,
}

/// What [`run`] measured and made, besides the carved heights.
#[derive(Debug, Clone)]
pub struct Network {
    /// The flood of the heights before carving.
    pub flood: Flood,
    /// Samples draining through each sample.
    pub count: Vec<u32>,
    /// River surface per sample, NaN off the rivers (centre lines only).
    pub surface: Vec<f32>,
    /// Lake level per sample, NaN off the lakes.
    pub lake: Vec<f32>,
}

/// Runs the hydrology over `heights` (`size` its extent in world units):
/// finds lakes and rivers, carves the channels into the heights, and
/// returns the water and the network it came from.
pub fn run(heights: &mut Heightmap, size: [f32; 2], p: &Rivers) -> (Waters, Network) {
    let (w, h) = (heights.width, heights.height);
    let n = w * h;
    let cell = [
        size[0] as f64 / (w - 1).max(1) as f64,
        size[1] as f64 / (h - 1).max(1) as f64,
    ];
    let sea = p.sea_level.map(|s| s as f32);
    let ground: Vec<f32> = heights.data().to_vec();
    let (low, high) = heights.range();
    if high <= low || high.is_nan() || low.is_nan() {
        // Flat land: water stands where it falls; no lakes, no rivers.
        let flood = Flood {
            filled: ground.clone(),
            order: Vec::new(),
            down: vec![OUTLET; n],
        };
        let waters = Waters {
            width: w,
            height: h,
            size,
            level: vec![f32::NAN; n],
            nearest: vec![f32::NAN; n],
            moisture: vec![0.0; n],
            ..Waters::default()
        };
        let network = Network {
            flood,
            count: vec![1; n],
            surface: vec![f32::NAN; n],
            lake: vec![f32::NAN; n],
        };
        return (waters, network);
    }
    let flood = flood(&ground, w, h, cell, sea);
    let count = accumulate(&flood);
    let (lake, lake_count) = match p.min_lake_depth {
        Some(d) => lakes(&ground, &flood, w, h, d as f32),
        None => (vec![f32::NAN; n], 0),
    };
    let in_sea = |k: usize| sea.is_some_and(|s| ground[k] <= s);
    // Rivers: samples gathering at least the catchment, off lakes and sea.
    let threshold = (p.catchment * n as f64).max(1.0);
    let mut surface = vec![f32::NAN; n];
    let mut half = vec![0.0f32; n];
    let mut depth = vec![0.0f32; n];
    let mut rivers = 0;
    for k in 0..n {
        if (count[k] as f64) < threshold || !lake[k].is_nan() || in_sea(k) {
            continue;
        }
        let q = count[k] as f64 / threshold;
        let width = (p.width * q.powf(WIDTH_EXPONENT) * source_taper(q)).min(p.max_width);
        let d = p.depth * q.powf(DEPTH_EXPONENT);
        half[k] = (0.5 * width) as f32;
        depth[k] = d as f32;
        surface[k] = flood.filled[k] - FREEBOARD * d as f32;
        rivers += 1;
    }
    // Never rising downstream: downstream first, each river sample at least
    // as high as the water it runs into.
    for &c in &flood.order {
        let c = c as usize;
        if surface[c].is_nan() {
            continue;
        }
        let d = flood.down[c];
        if d == OUTLET {
            continue;
        }
        let d = d as usize;
        let below = if !surface[d].is_nan() {
            surface[d]
        } else if !lake[d].is_nan() {
            lake[d]
        } else if in_sea(d) {
            sea.unwrap_or(f32::NEG_INFINITY)
        } else {
            f32::NEG_INFINITY
        };
        surface[c] = surface[c].max(below);
    }
    // Channels: each river sample's disc, the ground the lowest cut and
    // the water the mean of the surfaces of the river samples whose
    // channel covers it, weighted by (1 − r/half-width)², so that it runs
    // smoothly from sample to sample. The mean is at least the lowest of
    // those surfaces, which is above the lowest cut.
    let mut carved = ground.clone();
    let mut sum = vec![0.0f64; n];
    let mut weight = vec![0.0f64; n];
    for c in 0..n {
        let s = surface[c];
        if s.is_nan() {
            continue;
        }
        let (hw, d) = (half[c], depth[c]);
        let reach = hw + p.banks as f32;
        let (ri, rj) = (
            (reach as f64 / cell[1]).ceil() as isize,
            (reach as f64 / cell[0]).ceil() as isize,
        );
        let (ci, cj) = ((c / w) as isize, (c % w) as isize);
        for i in (ci - ri).max(0)..=(ci + ri).min(h as isize - 1) {
            for j in (cj - rj).max(0)..=(cj + rj).min(w as isize - 1) {
                let dz = ((i - ci) as f64 * cell[1]) as f32;
                let dx = ((j - cj) as f64 * cell[0]) as f32;
                let r = (dx * dx + dz * dz).sqrt();
                if r > reach {
                    continue;
                }
                let k = i as usize * w + j as usize;
                if !lake[k].is_nan() || in_sea(k) {
                    continue;
                }
                let g = ground[k];
                let cut = if r <= hw {
                    let u = r / hw.max(1e-6);
                    s - d * (1.0 - u * u)
                } else if g > s {
                    s + (r - hw) / p.banks.max(1e-9) as f32 * (g - s)
                } else {
                    g
                };
                carved[k] = carved[k].min(cut);
                if r < hw {
                    let wt = (1.0 - (r / hw) as f64).powi(2);
                    sum[k] += wt * s as f64;
                    weight[k] += wt;
                }
            }
        }
    }
    heights.data_mut().copy_from_slice(&carved);
    // A river's water only where it stands over its bed.
    let level: Vec<f32> = (0..n)
        .map(|k| {
            if !lake[k].is_nan() {
                return lake[k];
            }
            let l = (sum[k] / weight[k]) as f32;
            if weight[k] > 0.0 && l > carved[k] {
                l
            } else {
                f32::NAN
            }
        })
        .collect();
    let (nearest, moisture) = banks(&level, w, h, cell, p.reach as f32);
    let lake_samples = lake.iter().filter(|v| !v.is_nan()).count();
    let waters = Waters {
        width: w,
        height: h,
        size,
        level,
        nearest,
        moisture,
        river_samples: rivers,
        lake_samples,
        lakes: lake_count,
        skirt: SKIRT * p.depth as f32,
    };
    let network = Network {
        flood,
        count,
        surface,
        lake,
    };
    (waters, network)
}

/// For every sample, the level of the nearest wet sample and the moisture
/// 1 − distance/reach (0 beyond it): nearest wet samples propagated by two
/// raster passes over the eight neighbours (a vector distance transform,
/// exact to within a fraction of a cell), the distance Euclidean to the
/// sample found.
fn banks(level: &[f32], w: usize, h: usize, cell: [f64; 2], reach: f32) -> (Vec<f32>, Vec<f32>) {
    let n = w * h;
    let mut source = vec![OUTLET; n];
    for (k, v) in level.iter().enumerate() {
        if !v.is_nan() {
            source[k] = k as u32;
        }
    }
    let dist2 = |k: usize, s: u32| -> f64 {
        if s == OUTLET {
            return f64::INFINITY;
        }
        let (i, j) = ((k / w) as f64, (k % w) as f64);
        let (si, sj) = ((s as usize / w) as f64, (s as usize % w) as f64);
        ((i - si) * cell[1]).powi(2) + ((j - sj) * cell[0]).powi(2)
    };
    let relax = |k: usize, m: usize, source: &mut [u32]| {
        let s = source[m];
        if s != OUTLET && dist2(k, s) < dist2(k, source[k]) {
            source[k] = s;
        }
    };
    for i in 0..h {
        for j in 0..w {
            let k = i * w + j;
            if i > 0 {
                relax(k, k - w, &mut source);
                if j > 0 {
                    relax(k, k - w - 1, &mut source);
                }
                if j + 1 < w {
                    relax(k, k - w + 1, &mut source);
                }
            }
            if j > 0 {
                relax(k, k - 1, &mut source);
            }
        }
        for j in (0..w.saturating_sub(1)).rev() {
            let k = i * w + j;
            relax(k, k + 1, &mut source);
        }
    }
    for i in (0..h).rev() {
        for j in (0..w).rev() {
            let k = i * w + j;
            if i + 1 < h {
                relax(k, k + w, &mut source);
                if j + 1 < w {
                    relax(k, k + w + 1, &mut source);
                }
                if j > 0 {
                    relax(k, k + w - 1, &mut source);
                }
            }
            if j + 1 < w {
                relax(k, k + 1, &mut source);
            }
        }
        for j in 1..w {
            let k = i * w + j;
            relax(k, k - 1, &mut source);
        }
    }
    let mut nearest = vec![f32::NAN; n];
    let mut moisture = vec![0.0f32; n];
    for k in 0..n {
        let s = source[k];
        if s == OUTLET {
            continue;
        }
        let d = dist2(k, s).sqrt() as f32;
        if d <= reach {
            nearest[k] = level[s as usize];
            moisture[k] = if reach > 0.0 { 1.0 - d / reach } else { 1.0 };
        }
    }
    (nearest, moisture)
}

impl Waters {
    /// Whether any sample holds water.
    pub fn is_empty(&self) -> bool {
        self.river_samples == 0 && self.lake_samples == 0
    }

    /// Lowers every level by `f(x, z)` at its sample's world position (the
    /// planet's curvature, applied to the land after the hydrology), as
    /// the land's samples are lowered.
    pub fn lower(&mut self, f: impl Fn(f32, f32) -> f64) {
        let (w, h, size) = (self.width, self.height, self.size);
        for field in [&mut self.level, &mut self.nearest] {
            for (k, v) in field.iter_mut().enumerate() {
                if v.is_nan() {
                    continue;
                }
                let z = ((k / w) as f32 / (h - 1) as f32 - 0.5) * size[1];
                let x = ((k % w) as f32 / (w - 1) as f32 - 0.5) * size[0];
                *v = (*v as f64 - f(x, z)) as f32;
            }
        }
    }

    /// The grid cell under world (x, z) and the position in it, clamped to
    /// the grid.
    #[inline]
    fn cell(&self, x: f32, z: f32) -> (usize, usize, f32, f32) {
        let (w, h) = (self.width, self.height);
        let fx = ((x / self.size[0] + 0.5) * (w - 1) as f32).clamp(0.0, (w - 1) as f32);
        let fz = ((z / self.size[1] + 0.5) * (h - 1) as f32).clamp(0.0, (h - 1) as f32);
        let j = (fx.floor() as usize).min(w - 2);
        let i = (fz.floor() as usize).min(h - 2);
        (i, j, fx - j as f32, fz - i as f32)
    }

    /// `field` at world (x, z), bilinear over the corners that have a
    /// value (NaN if none does).
    #[inline]
    fn lookup(&self, field: &[f32], x: f32, z: f32) -> f32 {
        if field.is_empty() || self.width < 2 || self.height < 2 {
            return f32::NAN;
        }
        let (i, j, u, v) = self.cell(x, z);
        let w = self.width;
        let corners = [
            (field[i * w + j], (1.0 - u) * (1.0 - v)),
            (field[i * w + j + 1], u * (1.0 - v)),
            (field[(i + 1) * w + j], (1.0 - u) * v),
            (field[(i + 1) * w + j + 1], u * v),
        ];
        let (mut sum, mut weight) = (0.0f32, 0.0f32);
        for (value, wt) in corners {
            if !value.is_nan() {
                sum += value * wt;
                weight += wt;
            }
        }
        if weight > 0.0 {
            sum / weight
        } else {
            f32::NAN
        }
    }

    /// The water surface over world (x, z), NaN where dry.
    #[inline]
    pub fn level_at(&self, x: f32, z: f32) -> f32 {
        self.lookup(&self.level, x, z)
    }

    /// The gradient of the water's level at world (x, z): central
    /// differences a grid cell apart over [`Waters::level_at`] (which
    /// reads wet samples only), one-sided where one side is dry, 0 where
    /// both are.
    #[inline]
    pub fn gradient_at(&self, x: f32, z: f32) -> glam::Vec2 {
        let (dx, dz) = (
            self.size[0] / (self.width - 1) as f32,
            self.size[1] / (self.height - 1) as f32,
        );
        let here = self.level_at(x, z);
        let slope = |lo: f32, hi: f32, step: f32| match (lo.is_nan(), hi.is_nan()) {
            (false, false) => (hi - lo) / (2.0 * step),
            (true, false) if !here.is_nan() => (hi - here) / step,
            (false, true) if !here.is_nan() => (here - lo) / step,
            _ => 0.0,
        };
        glam::Vec2::new(
            slope(self.level_at(x - dx, z), self.level_at(x + dx, z), dx),
            slope(self.level_at(x, z - dz), self.level_at(x, z + dz), dz),
        )
    }

    /// How deep `p` lies under the water over it (0 where dry or above).
    #[inline]
    pub fn depth(&self, p: glam::Vec3) -> f32 {
        let l = self.level_at(p.x, p.z);
        if l.is_nan() {
            0.0
        } else {
            (l - p.y).max(0.0)
        }
    }

    /// The level of the nearest water to world (x, z), NaN beyond reach.
    #[inline]
    pub fn nearest_at(&self, x: f32, z: f32) -> f32 {
        self.lookup(&self.nearest, x, z)
    }

    /// Moisture at world (x, z): 1 at the water to 0 at its reach.
    #[inline]
    pub fn moisture_at(&self, x: f32, z: f32) -> f32 {
        let m = self.lookup(&self.moisture, x, z);
        if m.is_nan() {
            0.0
        } else {
            m
        }
    }

    /// The water's surface as triangles: two per grid cell with water at
    /// any corner, dry corners [`Waters::skirt`] below the lowest level of
    /// their wet neighbours (so the surface runs on under the banks and
    /// the land cuts the shoreline), counter-clockwise seen from above.
    pub fn mesh(&self) -> crate::mesh::TriangleMesh {
        let (w, h) = (self.width, self.height);
        let mut index = vec![OUTLET; w * h];
        let mut positions = Vec::new();
        let mut indices = Vec::new();
        let wet = |k: usize| !self.level[k].is_nan();
        let vertex = |k: usize, positions: &mut Vec<glam::Vec3>, index: &mut [u32]| -> u32 {
            if index[k] != OUTLET {
                return index[k];
            }
            let (i, j) = (k / w, k % w);
            let y = if wet(k) {
                self.level[k]
            } else {
                let lowest = neighbours(i, j, w, h)
                    .filter(|&(m, _, _)| wet(m))
                    .map(|(m, _, _)| self.level[m])
                    .fold(f32::INFINITY, f32::min);
                lowest - self.skirt
            };
            let x = (j as f32 / (w - 1) as f32 - 0.5) * self.size[0];
            let z = (i as f32 / (h - 1) as f32 - 0.5) * self.size[1];
            positions.push(glam::Vec3::new(x, y, z));
            index[k] = positions.len() as u32 - 1;
            index[k]
        };
        for i in 0..h.saturating_sub(1) {
            for j in 0..w.saturating_sub(1) {
                let k = [
                    i * w + j,
                    i * w + j + 1,
                    (i + 1) * w + j,
                    (i + 1) * w + j + 1,
                ];
                if !k.iter().any(|&k| wet(k)) {
                    continue;
                }
                let v = k.map(|k| vertex(k, &mut positions, &mut index));
                // z grows with i: (j, i) → (j, i + 1) → (j + 1, i) turns
                // counter-clockwise seen from +y.
                indices.push([v[0], v[2], v[1]]);
                indices.push([v[1], v[2], v[3]]);
            }
        }
        crate::mesh::TriangleMesh {
            positions,
            normals: Vec::new(),
            indices,
        }
    }

    /// Bytes held by the water's fields.
    pub fn memory_bytes(&self) -> usize {
        4 * (self.level.len() + self.nearest.len() + self.moisture.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bowl: a rim of 10 with a notch of 5 on the edge, an inner ring of
    /// 8 with a gap of 6 toward the notch, a floor of 2 and a hole of 0.
    fn bowl() -> (Vec<f32>, usize, usize) {
        let n = 7;
        let mut v = vec![10.0f32; n * n];
        for i in 1..6 {
            for j in 1..6 {
                v[i * n + j] = 8.0;
            }
        }
        for i in 2..5 {
            for j in 2..5 {
                v[i * n + j] = 2.0;
            }
        }
        v[3 * n + 3] = 0.0;
        v[3] = 5.0; // the notch on the edge (row 0, column 3)
        v[n + 3] = 6.0; // the gap in the inner ring
        (v, n, n)
    }

    fn params() -> Rivers {
        Rivers {
            catchment: 0.01,
            width: 2.0,
            max_width: 12.0,
            depth: 0.5,
            banks: 2.0,
            min_lake_depth: Some(0.0),
            sea_level: None,
            reach: 4.0,
        }
    }

    /// The bowl fills to 6, the height of the lowest way out (through the
    /// gap at 6 to the notch at 5), not to the notch's 5 nor the ring's 8.
    #[test]
    fn a_lake_fills_to_its_spill_height() {
        let (v, w, h) = bowl();
        let f = flood(&v, w, h, [1.0, 1.0], None);
        for k in [2 * w + 2, 3 * w + 3, 4 * w + 4, 2 * w + 4] {
            assert_eq!(f.filled[k], 6.0, "sample {k}");
        }
        assert_eq!(f.filled[w + 3], 6.0, "the gap itself");
        assert_eq!(f.filled[w + 1], 8.0, "the ring stays at its height");
        let (lake, count) = lakes(&v, &f, w, h, 0.0);
        assert_eq!(count, 1);
        let wet: Vec<usize> = (0..w * h).filter(|&k| !lake[k].is_nan()).collect();
        assert_eq!(wet.len(), 9, "the floor and the hole: {wet:?}");
        assert!(wet.iter().all(|&k| lake[k] == 6.0));
        // A lake must be 6 deep somewhere to count: the hole is.
        assert_eq!(
            lakes(&v, &f, w, h, 6.0)
                .0
                .iter()
                .filter(|v| !v.is_nan())
                .count(),
            9
        );
        assert!(lakes(&v, &f, w, h, 6.5).0.iter().all(|v| v.is_nan()));
    }

    /// Every sample drains to an outlet on the edge in fewer steps than
    /// there are samples, each step to a sample the flood took earlier.
    #[test]
    fn every_sample_drains_to_an_outlet() {
        let (v, w, h) = bowl();
        let f = flood(&v, w, h, [1.0, 1.0], None);
        let mut taken = vec![0usize; w * h];
        for (t, &k) in f.order.iter().enumerate() {
            taken[k as usize] = t;
        }
        assert_eq!(f.order.len(), w * h);
        for start in 0..w * h {
            let mut k = start;
            let mut steps = 0;
            while f.down[k] != OUTLET {
                let d = f.down[k] as usize;
                assert!(taken[d] < taken[k], "{k} drains to {d}, taken later");
                assert!(f.filled[d] <= f.filled[k]);
                k = d;
                steps += 1;
                assert!(steps < w * h);
            }
            let (i, j) = (k / w, k % w);
            assert!(i == 0 || j == 0 || i == h - 1 || j == w - 1, "{k}");
        }
        // The hole drains out through the gap and the notch.
        let mut k = 3 * w + 3;
        let mut path = vec![k];
        while f.down[k] != OUTLET {
            k = f.down[k] as usize;
            path.push(k);
        }
        assert!(
            path.contains(&(w + 3)) && *path.last().unwrap() == 3,
            "{path:?}"
        );
    }

    /// A rough field from a hash: many small pits, ridges and flats.
    fn rough(w: usize, h: usize, seed: u64) -> Vec<f32> {
        let coarse = |i: usize, j: usize| crate::hash::unit_f32(seed, i as u64, j as u64);
        (0..w * h)
            .map(|k| {
                let (i, j) = (k / w, k % w);
                let (x, z) = (j as f32 / 8.0, i as f32 / 8.0);
                let (i0, j0) = (z as usize, x as usize);
                let (u, v) = (x.fract(), z.fract());
                let a = coarse(i0, j0) * (1.0 - u) + coarse(i0, j0 + 1) * u;
                let b = coarse(i0 + 1, j0) * (1.0 - u) + coarse(i0 + 1, j0 + 1) * u;
                let bowl = ((x - 4.0).powi(2) + (z - 4.0).powi(2)) * 0.05;
                (10.0 * (a * (1.0 - v) + b * v) + bowl + 0.3 * coarse(i + 99, j)).round() / 2.0
            })
            .collect()
    }

    /// Flow accumulation conserves area: the outlets' counts sum to the
    /// sample count, on rough land with pits and flats (heights rounded
    /// to halves make many).
    #[test]
    fn flow_accumulation_conserves_area() {
        for (w, h, seed) in [(65, 65, 1), (97, 41, 2), (3, 3, 3)] {
            let v = rough(w, h, seed);
            let f = flood(&v, w, h, [1.0, 2.0], Some(1.0));
            let count = accumulate(&f);
            let outlets: u64 = (0..w * h)
                .filter(|&k| f.down[k] == OUTLET)
                .map(|k| count[k] as u64)
                .sum();
            assert_eq!(outlets, (w * h) as u64, "{w}×{h}");
        }
    }

    fn heightmap(v: &[f32], w: usize, h: usize) -> Heightmap {
        Heightmap::new(w, h, v.to_vec())
    }

    /// Down every river, sample to sample, the surface never rises, and
    /// where a river runs into a lake it stands at least at the lake's
    /// level; the water stands over the carved bed.
    #[test]
    fn a_river_surface_never_rises_downstream() {
        let (w, h) = (129, 129);
        let v = rough(w, h, 7);
        let mut m = heightmap(&v, w, h);
        let p = Rivers {
            sea_level: Some(1.5),
            ..params()
        };
        let (waters, net) = run(&mut m, [128.0, 128.0], &p);
        assert!(waters.river_samples > 100, "{}", waters.river_samples);
        assert!(waters.lakes > 0 && waters.lake_samples > 0);
        let mut checked = 0;
        for k in 0..w * h {
            let s = net.surface[k];
            if s.is_nan() {
                continue;
            }
            let d = net.flood.down[k];
            if d == OUTLET {
                continue;
            }
            let below = if !net.surface[d as usize].is_nan() {
                net.surface[d as usize]
            } else {
                net.lake[d as usize]
            };
            if !below.is_nan() {
                assert!(below <= s, "{k}: {s} runs into {below}");
                checked += 1;
            }
            assert!(s >= 1.5, "above the sea");
        }
        assert!(checked > 100);
        let carved = m.data();
        for k in 0..w * h {
            assert!(carved[k] <= v[k], "carving only lowers");
            if !waters.level[k].is_nan() {
                assert!(waters.level[k] >= carved[k], "{k}");
            }
        }
    }

    /// Near its source a river is a third of its width, all of it once
    /// its catchment has doubled, and never narrower downstream.
    #[test]
    fn a_river_rises_as_a_stream() {
        assert_eq!(source_taper(1.0), 1.0 / 3.0);
        assert_eq!(source_taper(2.0), 1.0);
        assert_eq!(source_taper(50.0), 1.0);
        let width = |q: f64| q.powf(WIDTH_EXPONENT) * source_taper(q);
        let mut last = 0.0;
        for k in 0..400 {
            let w = width(1.0 + k as f64 * 0.01);
            assert!(w >= last, "{k}");
            last = w;
        }
    }

    /// The hydrology is a function of the heights: the same bytes in a
    /// pool of one thread and of two.
    #[test]
    fn carving_is_the_same_on_any_thread_count() {
        let (w, h) = (97, 129);
        let v = rough(w, h, 11);
        let go = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut m = heightmap(&v, w, h);
                let (waters, _) = run(&mut m, [96.0, 128.0], &params());
                (
                    m.fingerprint(),
                    waters.level.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    waters.moisture.clone(),
                )
            })
        };
        let (one, two) = (go(1), go(2));
        assert_eq!(one, two);
    }

    /// Heights that are not numbers (a DEM's holes, where the import
    /// left any) are outlets: water drains into them, every sample still
    /// reaches an outlet, and the run gives finite water.
    #[test]
    fn holes_in_the_heights_are_outlets() {
        let (w, h) = (33, 33);
        let mut v = rough(w, h, 5);
        let hole = 16 * w + 16;
        v[hole] = f32::NAN;
        let f = flood(&v, w, h, [1.0, 1.0], None);
        assert_eq!(f.down[hole], OUTLET);
        let count = accumulate(&f);
        let outlets: u64 = (0..w * h)
            .filter(|&k| f.down[k] == OUTLET)
            .map(|k| count[k] as u64)
            .sum();
        assert_eq!(outlets, (w * h) as u64);
        let mut m = heightmap(&v, w, h);
        let (waters, _) = run(&mut m, [32.0, 32.0], &params());
        assert!(waters.level.iter().all(|l| l.is_nan() || l.is_finite()));
        assert!(waters.moisture.iter().all(|m| m.is_finite()));
    }

    /// Flat land holds no lake and no river; a threshold that catches
    /// every sample still leaves the water under the land's height.
    #[test]
    fn flat_land_holds_no_water() {
        let mut m = heightmap(&[3.0; 25 * 25], 25, 25);
        let (waters, _) = run(&mut m, [24.0, 24.0], &params());
        assert!(waters.is_empty());
        assert!(waters.level.iter().all(|v| v.is_nan()));
        assert!(m.data().iter().all(|&v| v == 3.0), "nothing carved");
    }

    /// The moisture is 1 on the water and falls linearly with the distance
    /// to the nearest wet sample, to 0 at the reach; the nearest level is
    /// that sample's.
    #[test]
    fn moisture_falls_with_the_distance_to_water() {
        let (w, h) = (21, 11);
        let mut level = vec![f32::NAN; w * h];
        level[5 * w + 4] = 2.5;
        let (nearest, moisture) = banks(&level, w, h, [0.5, 0.5], 3.0);
        assert_eq!(moisture[5 * w + 4], 1.0);
        assert!((moisture[5 * w + 8] - (1.0 - 2.0 / 3.0)).abs() < 1e-6);
        let diag = (2.0f32 * 0.25 * 9.0).sqrt(); // 3 cells diagonally
        assert!((moisture[8 * w + 7] - (1.0 - diag / 3.0)).abs() < 1e-6);
        assert_eq!(moisture[5 * w + 11], 0.0, "3.5 away");
        assert_eq!(nearest[5 * w + 8], 2.5);
        assert!(nearest[5 * w + 11].is_nan());
    }

    /// The water's mesh faces up and lies at the levels of its samples;
    /// looked up between samples, a level is bilinear over the wet ones.
    #[test]
    fn the_waters_mesh_lies_on_its_levels() {
        let (w, h) = (4, 3);
        let mut level = vec![f32::NAN; w * h];
        level[w + 1] = 1.0;
        level[w + 2] = 2.0;
        let waters = Waters {
            width: w,
            height: h,
            size: [3.0, 2.0],
            level,
            ..Waters::default()
        };
        let mesh = waters.mesh();
        assert_eq!(mesh.indices.len(), 2 * 6, "every cell touches a wet sample");
        for t in &mesh.indices {
            let [a, b, c] = t.map(|i| mesh.positions[i as usize]);
            assert!((b - a).cross(c - a).y > 0.0);
        }
        assert!(mesh
            .positions
            .iter()
            .any(|p| (*p - glam::Vec3::new(-0.5, 1.0, 0.0)).length() < 1e-6));
        assert_eq!(waters.level_at(0.0, 0.0), 1.5);
        assert_eq!(waters.level_at(-0.5, 0.0), 1.0);
        assert!(waters.level_at(-1.5, -1.0).is_nan());
        assert_eq!(waters.depth(glam::Vec3::new(0.5, 1.5, 0.0)), 0.5);
    }
}
