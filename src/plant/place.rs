//! Where plants stand: each species over a jittered grid of spots its
//! spacing sets, a spot taken with the chance its density, the ground
//! (height with a treeline, slope, moisture: each window thinning out
//! toward its edges) and its groves allow; never nearer than its spacing
//! to one of its own, nor, unless it is understory, to a competing
//! species placed before it; never in water. A pure function of the
//! species, the terrain and the seeds: every random number is a hash of
//! (seed, spot).

use std::sync::Arc;

use glam::{Affine3A, Quat, Vec2, Vec3};
use rayon::prelude::*;

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
    /// Leaves seen shorter than this many pixels are pruned (0: none).
    pub prune: f32,
    /// The image the leaves show, if they are cards.
    pub leaf_image: Option<LeafImage>,
    /// Seed of placement and growth.
    pub seed: u64,
}

/// The image on a species' leaf cards: its colour (linear), its alpha
/// (the first channel), and where it was read.
#[derive(Debug, Clone)]
pub struct LeafImage {
    /// Colour, decoded from sRGB.
    pub color: std::sync::Arc<crate::texture::Texture>,
    /// Opacity: the alpha channel, or the grey of an image without one.
    pub alpha: std::sync::Arc<crate::texture::Texture>,
    /// The file, as the scene names it resolved.
    pub path: std::path::PathBuf,
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
    /// Its spot in the species' grid ([`Layout::spot`]).
    pub spot: u32,
}

/// Spots along a side of a block: a block's 64 spots are one `u64` of
/// bits, the unit a ray finds plants by.
pub const BLOCK: u32 = 8;

/// Where a species' spots lie, and what a spot's hashes make of a plant
/// there: everything of a plant but whether it stands and its foot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    /// Seed of placement.
    pub seed: u64,
    /// Side of a spot's cell, world units.
    pub cell: f32,
    /// Spots across (x) and down (z).
    pub spots: [u32; 2],
    /// Blocks across and down.
    pub blocks: [u32; 2],
    /// Half the terrain's size.
    half: Vec2,
    /// Scale range.
    scale: [f32; 2],
    /// Variants grown.
    variants: u32,
}

impl Layout {
    fn new(p: &Plants, grid: &TerrainGrid) -> Layout {
        let cell = p.spacing / std::f32::consts::SQRT_2;
        let nx = (grid.size[0] / cell).ceil() as u32;
        let nz = (grid.size[1] / cell).ceil() as u32;
        Layout {
            seed: p.seed,
            cell,
            spots: [nx, nz],
            blocks: [nx.div_ceil(BLOCK), nz.div_ceil(BLOCK)],
            half: Vec2::new(grid.size[0], grid.size[1]) * 0.5,
            scale: p.scale,
            variants: p.variants.len() as u32,
        }
    }

    /// The spot at column `i`, row `j`.
    #[inline]
    pub fn spot(&self, i: u32, j: u32) -> u32 {
        j * self.spots[0] + i
    }

    /// The spot of bit `bit` of block `block`.
    #[inline]
    pub fn block_spot(&self, block: u32, bit: u32) -> u32 {
        let (bi, bj) = (block % self.blocks[0], block / self.blocks[0]);
        self.spot(bi * BLOCK + bit % BLOCK, bj * BLOCK + bit / BLOCK)
    }

    /// The block and bit of the spot at column `i`, row `j`.
    #[inline]
    fn block_bit(&self, i: u32, j: u32) -> (usize, u32) {
        let block = (j / BLOCK) * self.blocks[0] + i / BLOCK;
        (block as usize, (j % BLOCK) * BLOCK + i % BLOCK)
    }

    #[inline]
    fn unit(&self, stream: u64, spot: u32) -> f32 {
        unit_f32(self.seed, stream, spot as u64)
    }

    /// Where a plant at `spot` stands (x, z): its cell jittered.
    #[inline]
    pub fn at(&self, spot: u32) -> Vec2 {
        let (i, j) = (spot % self.spots[0], spot / self.spots[0]);
        Vec2::new(
            (i as f32 + self.unit(stream::X, spot)) * self.cell,
            (j as f32 + self.unit(stream::Z, spot)) * self.cell,
        ) - self.half
    }

    /// The scale of a plant at `spot`.
    #[inline]
    pub fn scale(&self, spot: u32) -> f32 {
        self.scale[0] + (self.scale[1] - self.scale[0]) * self.unit(stream::SCALE, spot)
    }

    /// The variant of a plant at `spot`.
    #[inline]
    pub fn variant(&self, spot: u32) -> u32 {
        ((self.unit(stream::VARIANT, spot) * self.variants as f32) as u32).min(self.variants - 1)
    }

    /// A plant at `spot` standing at height `foot`: object to world.
    #[inline]
    pub fn place(&self, spot: u32, foot: f32) -> Affine3A {
        self.place_at(spot, self.at(spot), self.scale(spot), foot)
    }

    /// [`Layout::place`] given the spot's place and scale, found already.
    #[inline]
    pub fn place_at(&self, spot: u32, at: Vec2, scale: f32, foot: f32) -> Affine3A {
        let yaw = Quat::from_rotation_y(self.unit(stream::YAW, spot) * std::f32::consts::TAU);
        Affine3A::from_scale_rotation_translation(
            Vec3::splat(scale),
            yaw,
            Vec3::new(at.x, foot, at.y),
        )
    }
}

/// A species' plants as kept: which spots hold one, a bit each, and the
/// height each stands at; everything else a hash of its spot
/// ([`Layout`]). About 4 bytes a plant, where a stored instance costs
/// some 120.
#[derive(Debug, Clone, PartialEq)]
pub struct Stand {
    /// Where the spots lie.
    pub layout: Layout,
    /// Per block (row by row over the blocks), its spots taken: bit
    /// `i + 8 j` for the spot `i` across and `j` down in the block.
    pub masks: Vec<u64>,
    /// Per block, the index in `feet` of its first plant.
    pub firsts: Vec<u32>,
    /// Per plant, block by block and bit by bit, the height it stands at.
    pub feet: Vec<f32>,
}

impl Stand {
    /// Plants placed.
    pub fn len(&self) -> usize {
        self.feet.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.feet.is_empty()
    }

    /// Whether the spot at column `i`, row `j` (either may lie off the
    /// grid) holds a plant.
    fn taken(&self, i: i64, j: i64) -> bool {
        let [nx, nz] = self.layout.spots;
        if i < 0 || j < 0 || i >= nx as i64 || j >= nz as i64 {
            return false;
        }
        let (block, bit) = self.layout.block_bit(i as u32, j as u32);
        self.masks[block] >> bit & 1 == 1
    }

    /// Whether a plant stands nearer than `r` to `p`.
    fn near(&self, p: Vec2, r: f32) -> bool {
        let l = &self.layout;
        let cell = |v: f32, h: f32| ((v + h) / l.cell).floor() as i64;
        let (i0, i1) = (cell(p.x - r, l.half.x), cell(p.x + r, l.half.x));
        let (j0, j1) = (cell(p.y - r, l.half.y), cell(p.y + r, l.half.y));
        (j0..=j1).any(|j| {
            (i0..=i1).any(|i| {
                self.taken(i, j) && {
                    let q = l.at(l.spot(i as u32, j as u32));
                    q.distance_squared(p) < r * r
                }
            })
        })
    }

    /// The plants, block by block: (spot, index in `feet`) each.
    pub fn plants(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.masks
            .iter()
            .zip(&self.firsts)
            .enumerate()
            .flat_map(move |(block, (&mask, &first))| {
                bits(mask).enumerate().map(move |(k, bit)| {
                    (self.layout.block_spot(block as u32, bit), first + k as u32)
                })
            })
    }

    /// Every plant placed, block by block.
    pub fn placed(&self) -> Vec<Placed> {
        self.plants()
            .map(|(spot, plant)| Placed {
                place: self.layout.place(spot, self.feet[plant as usize]),
                variant: self.layout.variant(spot),
                at: self.layout.at(spot),
                spot,
            })
            .collect()
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&self.masks[..])
            + std::mem::size_of_val(&self.firsts[..])
            + std::mem::size_of_val(&self.feet[..])
    }
}

/// The set bits of `mask`, lowest first.
pub fn bits(mut mask: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let bit = mask.trailing_zeros();
            mask &= mask - 1;
            bit
        })
    })
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
/// species' spots taken in the order of their rows). With `waters`, never
/// where water stands and within the moisture windows (0 everywhere
/// without them).
///
/// Whether a spot suits (its chance, groves and ground) is found for
/// every row at once, in parallel; the spacings, which depend on the
/// spots taken before, then walk the suitable spots in order.
pub fn place(all: &[Plants], grid: &TerrainGrid, waters: Option<&Waters>) -> Vec<Stand> {
    let (lo, hi) = grid.heights.range();
    let relief = (hi - lo).max(1e-6);
    let mut stands: Vec<Stand> = Vec::new();
    for (k, p) in all.iter().enumerate() {
        let layout = Layout::new(p, grid);
        let [nx, nz] = layout.spots;
        let rows: Vec<Vec<u64>> = (0..nz)
            .into_par_iter()
            .map(|j| {
                let mut row = vec![0u64; nx.div_ceil(64) as usize];
                for i in 0..nx {
                    let spot = layout.spot(i, j);
                    if suitable(p, &layout, grid, waters, lo, relief, spot) {
                        row[(i / 64) as usize] |= 1 << (i % 64);
                    }
                }
                row
            })
            .collect();
        let blocks = (layout.blocks[0] * layout.blocks[1]) as usize;
        let mut stand = Stand {
            layout,
            masks: vec![0; blocks],
            firsts: Vec::new(),
            feet: Vec::new(),
        };
        for (j, row) in rows.iter().enumerate() {
            for (w, &word) in row.iter().enumerate() {
                for b in bits(word) {
                    let i = w as u32 * 64 + b;
                    let at = layout.at(layout.spot(i, j as u32));
                    if stand.near(at, p.spacing) {
                        continue;
                    }
                    let crowded = !p.understory
                        && all[..k].iter().zip(&stands).any(|(q, s)| {
                            !q.understory && s.near(at, 0.5 * (p.spacing + q.spacing))
                        });
                    if crowded {
                        continue;
                    }
                    let (block, bit) = layout.block_bit(i, j as u32);
                    stand.masks[block] |= 1 << bit;
                }
            }
        }
        drop(rows);
        // Stand on the lowest ground under the trunk, so no root floats
        // on a slope.
        let trunk = p.species.radius * p.species.height[0];
        let mut first = 0u32;
        stand.firsts = stand
            .masks
            .iter()
            .map(|m| {
                let at = first;
                first += m.count_ones();
                at
            })
            .collect();
        stand.feet = stand
            .masks
            .par_iter()
            .enumerate()
            .flat_map_iter(|(block, &mask)| {
                bits(mask).map(move |bit| {
                    let spot = layout.block_spot(block as u32, bit);
                    let at = layout.at(spot);
                    let r = trunk * layout.scale(spot);
                    [(r, 0.0), (-r, 0.0), (0.0, r), (0.0, -r), (0.0, 0.0)]
                        .iter()
                        .map(|&(dx, dz)| grid.height_at(at.x + dx, at.y + dz))
                        .fold(f32::INFINITY, f32::min)
                })
            })
            .collect();
        stands.push(stand);
    }
    stands
}

/// Whether `spot` suits `p` before the spacings: on the terrain, taken by
/// its chance in its groves, and by its ground.
fn suitable(
    p: &Plants,
    layout: &Layout,
    grid: &TerrainGrid,
    waters: Option<&Waters>,
    lo: f32,
    relief: f32,
    spot: u32,
) -> bool {
    let at = layout.at(spot);
    if at.x.abs() > layout.half.x || at.y.abs() > layout.half.y {
        return false;
    }
    let grove = if p.clumping > 0.0 {
        let s = smoothstep(0.0, 1.0, groves(p.seed, at / p.clump_size));
        (1.0 - p.clumping) + p.clumping * 2.0 * s
    } else {
        1.0
    };
    let chance = p.density * grove;
    layout.unit(stream::TAKE, spot) < chance
        && suits(p, grid, waters, lo, relief, at) > layout.unit(stream::SUIT, spot)
}
