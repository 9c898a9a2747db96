//! Where plants stand: each species over a jittered grid of spots its
//! spacing sets, a spot taken with the chance its density, the ground
//! (height with a treeline, slope, moisture: each window thinning out
//! toward its edges) and its groves allow; never nearer than its spacing
//! to one of its own, nor, unless it is understory, to a competing
//! species placed before it; never in water. A pure function of the
//! species, the terrain and the seeds: every random number is a hash of
//! (seed, spot).

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Affine3A, Quat, Vec2, Vec3};

use super::{Plant, Species};
use crate::hash::unit_f32;
use crate::shade::layers::smoothstep;
use crate::terrain::hydrology::Waters;
use crate::terrain::TerrainGrid;

/// A checked kind of plant: its species, grown variants and placement.
#[derive(Debug, Clone)]
pub struct Plants {
    /// The species.
    pub species: Species,
    /// Its variants, grown.
    pub variants: Vec<Arc<Plant>>,
    /// Chance a suitable spot is taken.
    pub density: f32,
    /// Least distance between two of its plants, world units.
    pub spacing: f32,
    /// Scale range.
    pub scale: [f32; 2],
    /// Heights allowed, fractions of the relief.
    pub height: [f32; 2],
    /// Slopes allowed, degrees.
    pub slope: [f32; 2],
    /// Moisture allowed, if limited.
    pub moisture: Option<[f32; 2]>,
    /// Share of each window over which plants thin out.
    pub fade: f32,
    /// 0 even, 1 in groves.
    pub clumping: f32,
    /// Size of a grove, world units.
    pub clump_size: f32,
    /// Ignores other species' plants.
    pub understory: bool,
    /// Seed of placement and growth.
    pub seed: u64,
}

/// One plant placed: its object-to-world transform and variant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placed {
    /// Object to world.
    pub place: Affine3A,
    /// Index into the species' variants.
    pub variant: u32,
    /// Where it stands (x, z).
    pub at: Vec2,
}

/// Random streams of placement.
mod stream {
    pub const X: u64 = 0x91A0;
    pub const Z: u64 = 0x91A1;
    pub const TAKE: u64 = 0x91A2;
    pub const SCALE: u64 = 0x91A3;
    pub const YAW: u64 = 0x91A4;
    pub const VARIANT: u64 = 0x91A5;
    pub const CLUMP: u64 = 0x91A6;
    pub const SUIT: u64 = 0x91A7;
}

/// 1 inside `[a, b]` away from its edges, thinning to 0 (smoothly) over
/// `fade` of its width toward an edge that lies inside the full range
/// `[lo, hi]`; 0 outside.
pub fn window(v: f32, [a, b]: [f32; 2], fade: f32, [lo, hi]: [f32; 2]) -> f32 {
    if v < a || v > b {
        return 0.0;
    }
    let f = fade * (b - a);
    let mut w = 1.0;
    if a > lo && f > 0.0 {
        w *= smoothstep(0.0, 1.0, (v - a) / f);
    }
    if b < hi && f > 0.0 {
        w *= smoothstep(0.0, 1.0, (b - v) / f);
    }
    w
}

/// Smooth value noise in 0..1 at `p` (lattice units), two octaves.
fn groves(seed: u64, p: Vec2) -> f32 {
    let lattice = |x: i64, z: i64| {
        let i = (x as u64).wrapping_mul(0x9E37_79B9) ^ (z as u64);
        unit_f32(seed, stream::CLUMP, i)
    };
    let octave = |p: Vec2| {
        let (x0, z0) = (p.x.floor(), p.y.floor());
        let (sx, sz) = (
            smoothstep(0.0, 1.0, p.x - x0),
            smoothstep(0.0, 1.0, p.y - z0),
        );
        let (x, z) = (x0 as i64, z0 as i64);
        let a = lattice(x, z) + (lattice(x + 1, z) - lattice(x, z)) * sx;
        let b = lattice(x, z + 1) + (lattice(x + 1, z + 1) - lattice(x, z + 1)) * sx;
        a + (b - a) * sz
    };
    (octave(p) * 2.0 + octave(p * 2.3 + Vec2::splat(17.0))) / 3.0
}

/// Points of one species, found by the cells of a grid of side `cell`.
struct Grid {
    cell: f32,
    points: HashMap<(i32, i32), Vec<Vec2>>,
}

impl Grid {
    fn new(cell: f32) -> Grid {
        Grid {
            cell,
            points: HashMap::new(),
        }
    }

    fn key(&self, p: Vec2) -> (i32, i32) {
        (
            (p.x / self.cell).floor() as i32,
            (p.y / self.cell).floor() as i32,
        )
    }

    fn add(&mut self, p: Vec2) {
        let k = self.key(p);
        self.points.entry(k).or_default().push(p);
    }

    /// Whether a point lies nearer than `r` to `p`.
    fn near(&self, p: Vec2, r: f32) -> bool {
        let (x0, z0) = self.key(p - Vec2::splat(r));
        let (x1, z1) = self.key(p + Vec2::splat(r));
        (x0..=x1).any(|x| {
            (z0..=z1).any(|z| {
                self.points
                    .get(&(x, z))
                    .is_some_and(|v| v.iter().any(|q| q.distance_squared(p) < r * r))
            })
        })
    }
}

/// The ground's suitability for `p` at (x, z): the product of its
/// windows, 0 in water.
fn suits(
    p: &Plants,
    grid: &TerrainGrid,
    waters: Option<&Waters>,
    lo: f32,
    relief: f32,
    at: Vec2,
) -> f32 {
    let (x, z) = (at.x, at.y);
    let ground = grid.height_at(x, z);
    if waters.is_some_and(|w| w.level_at(x, z) > ground) {
        return 0.0;
    }
    let n = grid.normal_at(x, z);
    let slope = n.y.clamp(-1.0, 1.0).acos().to_degrees();
    let fraction = ((ground - lo) / relief).clamp(0.0, 1.0);
    let mut w = window(fraction, p.height, p.fade, [0.0, 1.0])
        * window(slope, p.slope, p.fade, [0.0, 90.0]);
    if let Some(m) = p.moisture {
        let moist = waters.map_or(0.0, |w| w.moisture_at(x, z));
        w *= window(moist, m, p.fade, [0.0, 1.0]);
    }
    w
}

/// The plants of every species over `grid`, in the order listed (each
/// species' in the order of its spots). With `waters`, never where water
/// stands and within the moisture windows (0 everywhere without them).
pub fn place(all: &[Plants], grid: &TerrainGrid, waters: Option<&Waters>) -> Vec<Vec<Placed>> {
    let (lo, hi) = grid.heights.range();
    let relief = (hi - lo).max(1e-6);
    let half = Vec2::new(grid.size[0], grid.size[1]) * 0.5;
    let mut grids: Vec<Grid> = Vec::new();
    let mut out = Vec::new();
    for (k, p) in all.iter().enumerate() {
        let cell = p.spacing / std::f32::consts::SQRT_2;
        let nx = (grid.size[0] / cell).ceil() as u64;
        let nz = (grid.size[1] / cell).ceil() as u64;
        let mut own = Grid::new(p.spacing);
        let mut placed = Vec::new();
        for j in 0..nz {
            for i in 0..nx {
                let spot = j * nx + i;
                let u = |s: u64| unit_f32(p.seed, s, spot);
                let at = Vec2::new(
                    (i as f32 + u(stream::X)) * cell,
                    (j as f32 + u(stream::Z)) * cell,
                ) - half;
                if at.x.abs() > half.x || at.y.abs() > half.y {
                    continue;
                }
                let grove = if p.clumping > 0.0 {
                    let s = smoothstep(0.0, 1.0, groves(p.seed, at / p.clump_size));
                    (1.0 - p.clumping) + p.clumping * 2.0 * s
                } else {
                    1.0
                };
                let chance = p.density * grove;
                if u(stream::TAKE) >= chance {
                    continue;
                }
                if suits(p, grid, waters, lo, relief, at) <= u(stream::SUIT) {
                    continue;
                }
                if own.near(at, p.spacing) {
                    continue;
                }
                let crowded = !p.understory
                    && all[..k]
                        .iter()
                        .zip(&grids)
                        .any(|(q, g)| !q.understory && g.near(at, 0.5 * (p.spacing + q.spacing)));
                if crowded {
                    continue;
                }
                own.add(at);
                let scale = p.scale[0] + (p.scale[1] - p.scale[0]) * u(stream::SCALE);
                // Stand on the lowest ground under the trunk, so no
                // root floats on a slope.
                let r = p.species.radius * p.species.height[0] * scale;
                let foot = [(r, 0.0), (-r, 0.0), (0.0, r), (0.0, -r), (0.0, 0.0)]
                    .iter()
                    .map(|&(dx, dz)| grid.height_at(at.x + dx, at.y + dz))
                    .fold(f32::INFINITY, f32::min);
                let yaw = Quat::from_rotation_y(u(stream::YAW) * std::f32::consts::TAU);
                let variant = ((u(stream::VARIANT) * p.variants.len() as f32) as u32)
                    .min(p.variants.len() as u32 - 1);
                placed.push(Placed {
                    place: Affine3A::from_scale_rotation_translation(
                        Vec3::splat(scale),
                        yaw,
                        Vec3::new(at.x, foot, at.y),
                    ),
                    variant,
                    at,
                });
            }
        }
        grids.push(own);
        out.push(placed);
    }
    out
}
