//! Cloud layers: heterogeneous media shaped by 3D noise (Perlin–Worley,
//! after Schneider's "Nubis" clouds), and the tracking that walks rays
//! through them (Novák et al., "Monte Carlo Methods for Volumetric Light
//! Transport Simulation", 2018).
//!
//! A layer lies between two altitudes over the planet's curve (its floor
//! drops by r²/2R at a horizontal distance r), so a layer seen toward the
//! horizon ends where the planet would take it out of sight. Its density
//! is `density` times a shape in [0, 1]: a tile of noise baked once per
//! scene (a weather map of coverage, Perlin noise carved by Worley cells,
//! and the type's profile with height), repeated over the plane and eroded
//! at lookup by a finer tile of Worley noise. Erosion only takes density
//! away, so the baked tile bounds the density: each column of 8 × 8 of its
//! cells keeps its largest value, and rays step through the columns (a 2D
//! DDA) with that bound as the majorant, skipping the clear sky between
//! clouds.
//!
//! The walks draw their random numbers from a closure: the renderer's
//! counter-based streams, so a walk is the same on any thread.

use std::sync::Arc;

use arrayvec::ArrayVec;
use glam::{Vec2, Vec3};
use rayon::prelude::*;

use super::layers::smoothstep;
use crate::hash::hash3;

/// Cloud types: profiles with height and shapes of noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Heaped clouds with flat bases and rounded tops.
    Cumulus,
    /// A grey sheet, nearly unbroken.
    Stratus,
    /// Thin, high wisps drawn out along the wind.
    Cirrus,
    /// Constant density through the layer: a slab of haze, and the case
    /// with exact answers.
    Uniform,
}

/// Most layers a scene may have (a camera ray orders them on the stack).
pub const MAX_LAYERS: usize = 8;
/// Baked cells across a tile, and up a layer.
const CELLS: usize = 128;
const LAYERS: usize = 32;
/// Baked cells per majorant column, across.
const COLUMN: usize = 8;
const COLUMNS: usize = CELLS / COLUMN;
/// Cells of the erosion tile, each way.
const DETAIL: usize = 32;
/// How deep erosion cuts into the shape.
const EROSION: f32 = 0.35;
/// The farthest along a ray that clouds are walked, world units (beyond
/// the curve's horizon from any height a layer can have, the walk's
/// arithmetic in f32 would no longer step).
const MAX_REACH: f32 = 1e6;
/// Share of light a cloud scatters rather than absorbs at each collision.
pub const ALBEDO: f32 = 0.99;

/// A layer's phase function: a mix of up to two Henyey–Greenstein lobes,
/// each an asymmetry g and a share (the shares sum to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    lobes: [(f32, f32); 2],
}

impl Phase {
    /// Cloud droplets: a strong forward lobe (the silver lining) and a
    /// weak backward one.
    pub const CLOUD: Phase = Phase {
        lobes: [(0.8, 0.75), (-0.3, 0.25)],
    };

    /// One Henyey–Greenstein lobe of asymmetry `g` (|g| < 1).
    pub fn henyey_greenstein(g: f32) -> Phase {
        Phase {
            lobes: [(g, 1.0), (0.0, 0.0)],
        }
    }

    /// The phase function at the cosine `c` between the light's travel
    /// and the scattered direction, its lobes' asymmetries scaled by `k`
    /// (1 for the real function).
    #[inline]
    pub fn eval(&self, c: f32, k: f32) -> f32 {
        self.lobes
            .iter()
            .filter(|l| l.1 > 0.0)
            .map(|&(g, w)| w * henyey_greenstein(g * k, c))
            .sum()
    }

    /// A direction drawn from the phase function around the travel
    /// direction `wo` (unit) with the uniform numbers `u` (the first
    /// picks the lobe).
    #[inline]
    pub fn sample(&self, wo: Vec3, u: (f32, f32)) -> Vec3 {
        let [(g0, w0), (g1, w1)] = self.lobes;
        let (g, u0) = if u.0 < w0 || w1 == 0.0 {
            (g0, (u.0 / w0).min(1.0))
        } else {
            (g1, (u.0 - w0) / w1)
        };
        // Inverse CDF of the HG cosine.
        let cos = if g.abs() < 1e-3 {
            1.0 - 2.0 * u0
        } else {
            let s = (1.0 - g * g) / (1.0 - g + 2.0 * g * u0);
            ((1.0 + g * g - s * s) / (2.0 * g)).clamp(-1.0, 1.0)
        };
        let sin = (1.0 - cos * cos).max(0.0).sqrt();
        let phi = std::f32::consts::TAU * u.1;
        let (t, b) = crate::sampling::basis(wo);
        (t * (sin * phi.cos()) + b * (sin * phi.sin()) + wo * cos).normalize()
    }
}

/// A checked cloud layer, its shape baked.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// The type.
    pub kind: Kind,
    /// Altitude of its floor and top, world units.
    pub bottom: f32,
    /// Altitude of its top.
    pub top: f32,
    /// Extinction per world unit where the shape is 1.
    pub density: f32,
    /// Side of the repeated tile, world units.
    pub period: f32,
    /// How far the wind has carried the clouds, world units (x, z).
    pub offset: Vec2,
    /// The planet's radius, world units.
    pub planet: f32,
    /// How the layer scatters.
    pub phase: Phase,
    /// The baked shape: CELLS × LAYERS × CELLS, x fastest, then z, then up.
    shape: Arc<Vec<f32>>,
    /// The largest shape in each column of COLUMN × COLUMN cells (and its
    /// neighbours the interpolation reaches), times `density`.
    majorant: Arc<Vec<f32>>,
    /// The erosion tile, DETAIL³, and its side in world units.
    detail: Arc<Vec<f32>>,
    detail_period: f32,
}

/// All the scene's cloud layers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Clouds {
    /// The layers, in any order.
    pub layers: Vec<Layer>,
}

/// What a layer file asks for, checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerSpec {
    /// The type.
    pub kind: Kind,
    /// Floor altitude, world units.
    pub altitude: f32,
    /// Thickness, world units.
    pub thickness: f32,
    /// Share of the sky covered, 0..=1.
    pub coverage: f32,
    /// Extinction per world unit in a cloud's heart.
    pub density: f32,
    /// Size of a single cloud, world units.
    pub scale: f32,
    /// Seed of the noise.
    pub seed: u64,
    /// Wind (x, z), world units per second.
    pub wind: Vec2,
    /// Seconds of wind.
    pub time: f32,
    /// The planet's radius, world units.
    pub planet: f32,
    /// How the layer scatters.
    pub phase: Phase,
}

// ---------------------------------------------------------------------------
// Tileable noise.

#[inline]
fn wrap(i: i64, n: i64) -> u64 {
    i.rem_euclid(n) as u64
}

/// Gradient (Perlin) noise in 3D, periodic with `n` lattice cells along
/// x and z (y is not wrapped), roughly in [−1, 1].
fn perlin(seed: u64, p: Vec3, n: i64) -> f32 {
    let (x0, y0, z0) = (p.x.floor(), p.y.floor(), p.z.floor());
    let f = p - Vec3::new(x0, y0, z0);
    let fade = |t: f32| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
    let (u, v, w) = (fade(f.x), fade(f.y), fade(f.z));
    let grad = |i: i64, j: i64, k: i64, d: Vec3| {
        let h = hash3(
            seed,
            wrap(i, n) | (wrap(k, n) << 20),
            (j as u64) & 0xFFFF_FFFF,
        );
        // One of the 12 edge directions of a cube.
        let g = match h % 12 {
            0 => Vec3::new(1.0, 1.0, 0.0),
            1 => Vec3::new(-1.0, 1.0, 0.0),
            2 => Vec3::new(1.0, -1.0, 0.0),
            3 => Vec3::new(-1.0, -1.0, 0.0),
            4 => Vec3::new(1.0, 0.0, 1.0),
            5 => Vec3::new(-1.0, 0.0, 1.0),
            6 => Vec3::new(1.0, 0.0, -1.0),
            7 => Vec3::new(-1.0, 0.0, -1.0),
            8 => Vec3::new(0.0, 1.0, 1.0),
            9 => Vec3::new(0.0, -1.0, 1.0),
            10 => Vec3::new(0.0, 1.0, -1.0),
            _ => Vec3::new(0.0, -1.0, -1.0),
        };
        g.dot(d)
    };
    let (i, j, k) = (x0 as i64, y0 as i64, z0 as i64);
    let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
    let c = |di: i64, dj: i64, dk: i64| {
        grad(
            i + di,
            j + dj,
            k + dk,
            f - Vec3::new(di as f32, dj as f32, dk as f32),
        )
    };
    let x00 = lerp(c(0, 0, 0), c(1, 0, 0), u);
    let x10 = lerp(c(0, 1, 0), c(1, 1, 0), u);
    let x01 = lerp(c(0, 0, 1), c(1, 0, 1), u);
    let x11 = lerp(c(0, 1, 1), c(1, 1, 1), u);
    lerp(lerp(x00, x10, v), lerp(x01, x11, v), w)
}

/// Worley noise: distance to the nearest of one random point per lattice
/// cell, periodic with `n` cells along every axis, in [0, ~1].
fn worley(seed: u64, p: Vec3, n: i64) -> f32 {
    let c = p.floor();
    let (i, j, k) = (c.x as i64, c.y as i64, c.z as i64);
    let mut best = f32::INFINITY;
    for dk in -1..=1 {
        for dj in -1..=1 {
            for di in -1..=1 {
                let (a, b, e) = (i + di, j + dj, k + dk);
                let h = hash3(seed, wrap(a, n) | (wrap(e, n) << 20), wrap(b, n) ^ 0xC10D);
                let jitter = Vec3::new(
                    (h & 0xFFFF) as f32 / 65536.0,
                    ((h >> 16) & 0xFFFF) as f32 / 65536.0,
                    ((h >> 32) & 0xFFFF) as f32 / 65536.0,
                );
                let q = Vec3::new(a as f32, b as f32, e as f32) + jitter;
                best = best.min((q - p).length_squared());
            }
        }
    }
    best.sqrt()
}

/// Three octaves of inverted Worley noise, in [0, 1]: 1 at cell points.
fn worley_fbm(seed: u64, p: Vec3, n: i64) -> f32 {
    let w = |o: i64| (1.0 - worley(seed ^ o as u64, p * o as f32, n * o)).clamp(0.0, 1.0);
    w(1) * 0.625 + w(2) * 0.25 + w(4) * 0.125
}

#[inline]
fn remap(v: f32, lo: f32, hi: f32) -> f32 {
    ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
}

impl Kind {
    /// The fraction of the shape allowed at height fraction `h` of the
    /// layer (0 at the floor, 1 at the top).
    fn profile(self, h: f32) -> f32 {
        match self {
            // A flat base, full through the middle, rounded away at the top.
            Kind::Cumulus => smoothstep(0.0, 0.08, h) * smoothstep(1.0, 0.55, h),
            Kind::Stratus => smoothstep(0.0, 0.2, h) * smoothstep(1.0, 0.6, h),
            Kind::Cirrus => smoothstep(0.0, 0.35, h) * smoothstep(1.0, 0.65, h),
            Kind::Uniform => 1.0,
        }
    }

    /// Lattice cells of the main noise across a tile (a tile is eight
    /// clouds across).
    fn cells(self) -> i64 {
        8
    }
}

impl Layer {
    /// Bakes the layer `spec` (its shape, majorants and erosion tile).
    pub fn new(spec: &LayerSpec) -> Layer {
        let kind = spec.kind;
        let period = spec.scale * kind.cells() as f32;
        let n = kind.cells();
        let seed = spec.seed;
        let coverage = spec.coverage;
        let shape: Vec<f32> = (0..CELLS * CELLS * LAYERS)
            .into_par_iter()
            .map(|k| {
                let (i, kz, j) = (k % CELLS, (k / CELLS) % CELLS, k / (CELLS * CELLS));
                let u = i as f32 / CELLS as f32;
                let w = kz as f32 / CELLS as f32;
                let h = j as f32 / (LAYERS - 1) as f32;
                base_shape(
                    kind,
                    seed,
                    coverage,
                    n,
                    u,
                    h,
                    w,
                    spec.thickness / spec.scale,
                )
            })
            .collect();
        let majorant = column_majorants(&shape, spec.density);
        let detail: Vec<f32> = (0..DETAIL * DETAIL * DETAIL)
            .into_par_iter()
            .map(|k| {
                let (i, j, l) = (k % DETAIL, (k / DETAIL) % DETAIL, k / (DETAIL * DETAIL));
                let p = Vec3::new(i as f32, j as f32, l as f32) * (4.0 / DETAIL as f32);
                worley_fbm(seed ^ 0xDE7A11, p, 4)
            })
            .collect();
        Layer {
            kind,
            bottom: spec.altitude,
            top: spec.altitude + spec.thickness,
            density: spec.density,
            period,
            offset: spec.wind * spec.time,
            planet: spec.planet,
            phase: spec.phase,
            shape: Arc::new(shape),
            majorant: Arc::new(majorant),
            detail: Arc::new(detail),
            detail_period: spec.scale * 0.5,
        }
    }

    /// Height above the planet's curve at `p`: y plus the drop r²/2R of
    /// the floor at horizontal distance r from the origin.
    #[inline]
    pub fn altitude(&self, p: Vec3) -> f32 {
        p.y + (p.x * p.x + p.z * p.z) / (2.0 * self.planet)
    }

    /// Extinction per world unit at `p`.
    #[inline]
    pub fn sigma(&self, p: Vec3) -> f32 {
        let h = (self.altitude(p) - self.bottom) / (self.top - self.bottom);
        if !(0.0..=1.0).contains(&h) {
            return 0.0;
        }
        let q = Vec2::new(p.x, p.z) + self.offset;
        let base = self.shape_at(q / self.period, h);
        if base <= 0.0 {
            return 0.0;
        }
        if self.kind == Kind::Uniform {
            return self.density * base;
        }
        let d = self.detail_at(Vec3::new(q.x, p.y, q.y) / self.detail_period);
        let cut = EROSION * d;
        self.density * ((base - cut) / (1.0 - cut)).max(0.0)
    }

    /// The baked shape at tile coordinates `uv` (wrapped) and height
    /// fraction `h`, trilinear.
    #[inline]
    fn shape_at(&self, uv: Vec2, h: f32) -> f32 {
        let x = uv.x.rem_euclid(1.0) * CELLS as f32;
        let z = uv.y.rem_euclid(1.0) * CELLS as f32;
        let y = h * (LAYERS - 1) as f32;
        let (x0, z0, y0) = (x.floor(), z.floor(), y.floor());
        let (fx, fz, fy) = (x - x0, z - z0, y - y0);
        let (i0, k0, j0) = (
            x0 as usize % CELLS,
            z0 as usize % CELLS,
            (y0 as usize).min(LAYERS - 1),
        );
        let (i1, k1, j1) = ((i0 + 1) % CELLS, (k0 + 1) % CELLS, (j0 + 1).min(LAYERS - 1));
        let s = &self.shape;
        let at = |i: usize, k: usize, j: usize| s[(j * CELLS + k) * CELLS + i];
        let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
        let plane = |j: usize| {
            lerp(
                lerp(at(i0, k0, j), at(i1, k0, j), fx),
                lerp(at(i0, k1, j), at(i1, k1, j), fx),
                fz,
            )
        };
        lerp(plane(j0), plane(j1), fy)
    }

    /// The erosion tile at `p` (in tile sides, wrapped), trilinear.
    #[inline]
    fn detail_at(&self, p: Vec3) -> f32 {
        let q = (p - p.floor()) * DETAIL as f32;
        let f = q - q.floor();
        let (i0, j0, k0) = (
            q.x as usize % DETAIL,
            q.y as usize % DETAIL,
            q.z as usize % DETAIL,
        );
        let (i1, j1, k1) = ((i0 + 1) % DETAIL, (j0 + 1) % DETAIL, (k0 + 1) % DETAIL);
        let d = &self.detail;
        let at = |i: usize, j: usize, k: usize| d[(k * DETAIL + j) * DETAIL + i];
        let lerp = |a: f32, b: f32, t: f32| a + (b - a) * t;
        let plane = |k: usize| {
            lerp(
                lerp(at(i0, j0, k), at(i1, j0, k), f.x),
                lerp(at(i0, j1, k), at(i1, j1, k), f.x),
                f.y,
            )
        };
        lerp(plane(k0), plane(k1), f.z)
    }

    /// The spans of the ray `o + t·d`, 0 ≤ t < `t_max`, inside the layer
    /// (at most two: a ray can leave the curved layer and come back).
    fn spans(&self, o: Vec3, d: Vec3, t_max: f32) -> [Option<(f32, f32)>; 2] {
        // altitude(t) = a t² + b t + c.
        let inv = 1.0 / (2.0 * self.planet);
        let a = (d.x * d.x + d.z * d.z) * inv;
        let b = d.y + (o.x * d.x + o.z * d.z) * 2.0 * inv;
        let c = self.altitude(o);
        // A ray that goes down into the planet (below sea level by the
        // layer's thickness) ends there: it does not come back up on the
        // far side of the curve.
        let ground = self.bottom.min(0.0) - (self.top - self.bottom);
        let t_max = match below(a, b, c - ground) {
            Some((g0, _)) if g0 >= 0.0 => t_max.min(g0),
            Some((_, g1)) if g1 > 0.0 => 0.0,
            _ => t_max,
        }
        .min(MAX_REACH);
        // Below the top: one interval (a parabola opening up, or a line).
        let Some((u0, u1)) = below(a, b, c - self.top) else {
            return [None, None];
        };
        let (u0, u1) = (u0.max(0.0), u1.min(t_max));
        if u0 >= u1 {
            return [None, None];
        }
        // Below the floor: an interval to take out.
        match below(a, b, c - self.bottom) {
            None => [Some((u0, u1)), None],
            Some((l0, l1)) => {
                let first = (u0 < l0.min(u1)).then(|| (u0, l0.min(u1)));
                let second = (l1.max(u0) < u1).then(|| (l1.max(u0), u1));
                [first, second]
            }
        }
    }

    /// Walks the tentative collisions of the ray `o + t·d` (unit `d`)
    /// before `t_max` in order: a Poisson process whose rate, the
    /// majorant, is each column's bound. `visit(t, σ(t), majorant,
    /// uniform)` returns false to stop; `uniform()` gives the walk's
    /// random numbers (and the visitor's). Returns false when stopped.
    pub fn walk<U: FnMut() -> f32>(
        &self,
        o: Vec3,
        d: Vec3,
        t_max: f32,
        uniform: &mut U,
        visit: &mut impl FnMut(f32, f32, f32, &mut U) -> bool,
    ) -> bool {
        for (t0, t1) in self.spans(o, d, t_max).into_iter().flatten() {
            if !self.walk_span(o, d, t0, t1, uniform, visit) {
                return false;
            }
        }
        true
    }

    fn walk_span<U: FnMut() -> f32>(
        &self,
        o: Vec3,
        d: Vec3,
        t0: f32,
        t1: f32,
        uniform: &mut U,
        visit: &mut impl FnMut(f32, f32, f32, &mut U) -> bool,
    ) -> bool {
        // A 2D DDA over the columns, in the tile's frame (the wind moves
        // the tile, so the ray's x and z are offset).
        let size = self.period / COLUMNS as f32;
        let start = o + d * t0;
        let p = Vec2::new(start.x + self.offset.x, start.z + self.offset.y) / size;
        let dir = Vec2::new(d.x, d.z) / size;
        let mut cell = (p.x.floor() as i64, p.y.floor() as i64);
        let step = (
            if dir.x >= 0.0 { 1 } else { -1 },
            if dir.y >= 0.0 { 1 } else { -1 },
        );
        let next_edge = |c: i64, s: i64, p: f32, v: f32| -> f32 {
            if v == 0.0 {
                f32::INFINITY
            } else {
                let edge = if s > 0 { (c + 1) as f32 } else { c as f32 };
                ((edge - p) / v).max(0.0)
            }
        };
        let delta = (
            if dir.x != 0.0 {
                (1.0 / dir.x).abs()
            } else {
                f32::INFINITY
            },
            if dir.y != 0.0 {
                (1.0 / dir.y).abs()
            } else {
                f32::INFINITY
            },
        );
        let mut tx = t0 + next_edge(cell.0, step.0, p.x, dir.x);
        let mut tz = t0 + next_edge(cell.1, step.1, p.y, dir.y);
        let mut t = t0;
        // The columns a straight line crosses, at most: a bound that holds
        // even where f32 can no longer step the crossings apart.
        let mut budget = ((t1 - t0) * (dir.x.abs() + dir.y.abs())) as u64 + 4;
        while t < t1 && budget > 0 {
            budget -= 1;
            let exit = tx.min(tz).min(t1);
            let column = wrap(cell.1, COLUMNS as i64) as usize * COLUMNS
                + wrap(cell.0, COLUMNS as i64) as usize;
            let m = self.majorant[column];
            if m > 0.0 {
                let mut s = t;
                loop {
                    s -= (1.0 - uniform()).ln() / m;
                    if s >= exit {
                        break;
                    }
                    let sigma = self.sigma(o + d * s);
                    if !visit(s, sigma, m, uniform) {
                        return false;
                    }
                }
            }
            t = exit;
            if tx < tz {
                cell.0 += step.0;
                tx += delta.0;
            } else {
                cell.1 += step.1;
                tz += delta.1;
            }
        }
        true
    }
}

/// Where a·t² + b·t + c ≤ 0 (a ≥ 0), as an interval, if anywhere.
fn below(a: f32, b: f32, c: f32) -> Option<(f32, f32)> {
    if a <= 1e-12 {
        // A line.
        if b == 0.0 {
            return (c <= 0.0).then_some((f32::NEG_INFINITY, f32::INFINITY));
        }
        let root = -c / b;
        return Some(if b > 0.0 {
            (f32::NEG_INFINITY, root)
        } else {
            (root, f32::INFINITY)
        });
    }
    let disc = b * b - 4.0 * a * c;
    if disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    // Stable roots.
    let q = -0.5 * (b + b.signum() * s);
    let (r0, r1) = if q != 0.0 { (q / a, c / q) } else { (0.0, 0.0) };
    Some((r0.min(r1), r0.max(r1)))
}

/// The baked shape of a `kind` layer at tile coordinates (u, w) and
/// height fraction h; `n` lattice cells across the tile, `aspect` the
/// layer's thickness over a cloud's size.
#[allow(clippy::too_many_arguments)]
fn base_shape(
    kind: Kind,
    seed: u64,
    coverage: f32,
    n: i64,
    u: f32,
    h: f32,
    w: f32,
    aspect: f32,
) -> f32 {
    if kind == Kind::Uniform {
        return 1.0;
    }
    // The weather map: coverage that varies over a few clouds.
    let weather = perlin(seed ^ 0x3EA7, Vec3::new(u * 2.0, 0.5, w * 2.0), 2) * 0.5
        + perlin(seed ^ 0x3EA8, Vec3::new(u * 4.0, 0.5, w * 4.0), 4) * 0.25;
    let cover = (coverage + weather * 0.6).clamp(0.0, 1.0);
    let nf = n as f32;
    // Cirrus are drawn out along x (the tile is turned by nothing; the
    // wind's direction stretches nothing here, so streaks run east).
    let (sx, sy) = match kind {
        Kind::Cirrus => (0.25, 1.0),
        _ => (1.0, 1.0),
    };
    let p = Vec3::new(u * nf * sx, h * aspect * sy, w * nf);
    let period = ((nf * sx).round() as i64).max(1);
    let fbm = (perlin(seed, p, period) * 0.5
        + perlin(seed ^ 1, p * 2.0, period * 2) * 0.25
        + perlin(seed ^ 2, p * 4.0, period * 4) * 0.125)
        * 0.5
        + 0.5;
    let cells = worley_fbm(seed ^ 0x0C, Vec3::new(u * nf, h * aspect, w * nf), n);
    // Perlin–Worley: the Perlin field carved by the Worley cells.
    let noise = match kind {
        Kind::Cumulus => remap(fbm, cells - 1.0, 1.0) * 0.5 + cells * 0.5,
        Kind::Stratus => fbm * 0.6 + cells * 0.4,
        Kind::Cirrus | Kind::Uniform => fbm,
    };
    let v = noise * kind.profile(h);
    // Coverage lowers the threshold the noise must pass.
    remap(v, 1.0 - cover, (1.0 - cover) + 0.3)
}

/// Per column of COLUMN × COLUMN cells (with the cells beside it that
/// interpolation reaches), the largest shape up the layer, times `density`.
fn column_majorants(shape: &[f32], density: f32) -> Vec<f32> {
    let mut out = vec![0.0f32; COLUMNS * COLUMNS];
    for (c, m) in out.iter_mut().enumerate() {
        let (ci, ck) = (c % COLUMNS, c / COLUMNS);
        let mut best = 0.0f32;
        for j in 0..LAYERS {
            for dk in 0..=COLUMN {
                let k = (ck * COLUMN + dk) % CELLS;
                for di in 0..=COLUMN {
                    let i = (ci * COLUMN + di) % CELLS;
                    best = best.max(shape[(j * CELLS + k) * CELLS + i]);
                }
            }
        }
        *m = best * density;
    }
    out
}

/// Henyey–Greenstein phase function of asymmetry `g` at the cosine `c`
/// between the light's travel and the scattered direction.
#[inline]
pub fn henyey_greenstein(g: f32, c: f32) -> f32 {
    let d = 1.0 + g * g - 2.0 * g * c;
    (1.0 - g * g) / (4.0 * std::f32::consts::PI * d * d.sqrt())
}

impl Clouds {
    /// Whether there are no layers.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Extinction per world unit at `p`, all layers together.
    pub fn sigma(&self, p: Vec3) -> f32 {
        self.layers.iter().map(|l| l.sigma(p)).sum()
    }

    /// An unbiased estimate of the transmittance along `o + t·d` up to
    /// `t_max` (ratio tracking, with Russian roulette once it is small).
    pub fn transmittance(
        &self,
        o: Vec3,
        d: Vec3,
        t_max: f32,
        uniform: &mut impl FnMut() -> f32,
    ) -> f32 {
        let mut tr = 1.0f32;
        for layer in &self.layers {
            let mut alive = true;
            layer.walk(o, d, t_max, uniform, &mut |_, sigma, m, uniform| {
                alive = ratio_step(&mut tr, sigma / m, 0.1, uniform);
                alive
            });
            if !alive {
                return 0.0;
            }
        }
        tr
    }

    /// One walk toward a light: the transmittance estimate (ratio
    /// tracking, with roulette) and the optical depth estimate (track
    /// length), for the direct renderer's octaves of multiple scattering.
    pub fn light_walk(&self, o: Vec3, d: Vec3, uniform: &mut impl FnMut() -> f32) -> (f32, f32) {
        let (mut tr, mut tau) = (1.0f32, 0.0f32);
        for layer in &self.layers {
            layer.walk(o, d, f32::INFINITY, uniform, &mut |_, sigma, m, uniform| {
                tau += sigma / m;
                if tr > 0.0 {
                    ratio_step(&mut tr, sigma / m, 0.1, uniform);
                }
                // Past an optical depth of 30 nothing is left of any octave.
                tau < 30.0
            });
        }
        (if tau >= 30.0 { 0.0 } else { tr }, tau)
    }

    /// The distance of the first real collision along the ray before
    /// `t_max` (delta tracking), if any, and its layer's phase function.
    pub fn collide(
        &self,
        o: Vec3,
        d: Vec3,
        t_max: f32,
        uniform: &mut impl FnMut() -> f32,
    ) -> Option<(f32, Phase)> {
        let mut hit: Option<(f32, Phase)> = None;
        for layer in &self.layers {
            let limit = hit.map_or(t_max, |h| h.0);
            layer.walk(o, d, limit, uniform, &mut |t, sigma, m, uniform| {
                if uniform() * m < sigma {
                    hit = Some((t, layer.phase));
                    false
                } else {
                    true
                }
            });
        }
        hit
    }

    /// A walk along a camera ray for the direct renderer: the
    /// transmittance estimate (ratio tracking) to `t_max`, and one
    /// scattering point chosen among the tentative collisions in
    /// proportion to their weights T̂(t)·σ(t)/majorant, with the sum W of
    /// those weights. W times the light scattered at the chosen point is
    /// an unbiased estimate of ∫ T(t) σ(t) L(t) dt (Campbell's theorem
    /// over the majorant's Poisson process, then one weighted-reservoir
    /// choice).
    pub fn view_walk(
        &self,
        o: Vec3,
        d: Vec3,
        t_max: f32,
        uniform: &mut impl FnMut() -> f32,
    ) -> ViewWalk {
        // Layers along one ray are walked in turn; a ray passing through
        // two layers sees the nearer's transmittance on the farther's
        // weights only when the nearer comes first in the list, so order
        // them by distance along the ray.
        let mut order: ArrayVec<(f32, &Layer), MAX_LAYERS> = self
            .layers
            .iter()
            .take(MAX_LAYERS)
            .filter_map(|l| {
                l.spans(o, d, t_max)
                    .into_iter()
                    .flatten()
                    .next()
                    .map(|(t0, _)| (t0, l))
            })
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut walk = ViewWalk {
            transmittance: 1.0,
            weight: 0.0,
            point: None,
        };
        for (_, layer) in order {
            let mut dead = false;
            layer.walk(o, d, t_max, uniform, &mut |t, sigma, m, uniform| {
                let w = walk.transmittance * sigma / m;
                if w > 0.0 {
                    walk.weight += w;
                    if uniform() * walk.weight < w {
                        walk.point = Some((t, layer.phase));
                    }
                }
                dead = !ratio_step(&mut walk.transmittance, sigma / m, 0.05, uniform);
                !dead
            });
            if dead {
                break;
            }
        }
        walk
    }

    /// Height fraction of `p` in the layer that holds it (for the light
    /// cloud tops get from the sky), 1 outside every layer.
    pub fn height_fraction(&self, p: Vec3) -> f32 {
        self.layers
            .iter()
            .find_map(|l| {
                let h = (l.altitude(p) - l.bottom) / (l.top - l.bottom);
                (0.0..=1.0).contains(&h).then_some(h)
            })
            .unwrap_or(1.0)
    }
}

/// One step of ratio tracking at a tentative collision whose density is
/// `share` of the majorant: `tr` times the chance 1 − share that it was
/// no collision; once under `floor`, Russian roulette keeps it (doubled)
/// with chance ½. Returns false when the roulette ends the walk (`tr` is
/// then 0).
#[inline]
fn ratio_step(tr: &mut f32, share: f32, floor: f32, uniform: &mut impl FnMut() -> f32) -> bool {
    *tr *= 1.0 - share;
    if *tr < floor {
        if uniform() < 0.5 {
            *tr = 0.0;
            return false;
        }
        *tr *= 2.0;
    }
    true
}

/// What [`Clouds::view_walk`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewWalk {
    /// Estimate of the transmittance through the clouds.
    pub transmittance: f32,
    /// Sum of the weights of the tentative collisions.
    pub weight: f32,
    /// The chosen scattering point's distance and its layer's phase
    /// function, if any weight.
    pub point: Option<(f32, Phase)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::unit_f32;

    fn spec(kind: Kind) -> LayerSpec {
        LayerSpec {
            kind,
            altitude: 20.0,
            thickness: 10.0,
            coverage: 0.5,
            density: 0.4,
            scale: 20.0,
            seed: 7,
            wind: Vec2::ZERO,
            time: 0.0,
            planet: 1e9,
            phase: Phase::CLOUD,
        }
    }

    /// Uniform numbers for draw `n` of a test: a counter-based stream.
    fn draws(n: u64) -> impl FnMut() -> f32 {
        let mut k = 0;
        move || {
            k += 1;
            unit_f32(0x7E57, n, k)
        }
    }

    /// Optical depth along the ray by the midpoint rule in 200 000 steps:
    /// the exact answer the estimators' means are held against.
    fn quadrature(clouds: &Clouds, o: Vec3, d: Vec3, t: f32) -> f64 {
        let n = 200_000;
        let dt = t as f64 / n as f64;
        (0..n)
            .map(|i| clouds.sigma(o + d * ((i as f64 + 0.5) * dt) as f32) as f64 * dt)
            .sum()
    }

    /// Through a uniform slab of density 0.4 and thickness 10, straight
    /// up and at 30° from the vertical: Beer–Lambert, e^(−4) and
    /// e^(−4/cos 30°). Ratio tracking in a uniform medium whose majorant
    /// is its density is delta tracking: each estimate is 0 or 1, their
    /// mean within 4 standard errors of the exact value; the track-length
    /// optical depth's mean within 2 %.
    #[test]
    fn a_uniform_slab_follows_beer_lambert() {
        let clouds = Clouds {
            layers: vec![Layer::new(&spec(Kind::Uniform))],
        };
        for d in [Vec3::Y, Vec3::new(0.5, 0.75f32.sqrt(), 0.0)] {
            let exact = (-0.4f64 * 10.0 / d.y as f64).exp();
            assert!((quadrature(&clouds, Vec3::ZERO, d, 40.0) - 4.0 / d.y as f64).abs() < 1e-3);
            let n = 40_000;
            let mean: f64 = (0..n)
                .map(|k| clouds.transmittance(Vec3::ZERO, d, f32::INFINITY, &mut draws(k)) as f64)
                .sum::<f64>()
                / n as f64;
            let se = (exact * (1.0 - exact) / n as f64).sqrt();
            assert!(
                (mean - exact).abs() < 4.0 * se,
                "{d}: {mean} vs {exact} (se {se})"
            );
            let tau: f64 = (0..n)
                .map(|k| clouds.light_walk(Vec3::ZERO, d, &mut draws(k)).1 as f64)
                .sum::<f64>()
                / n as f64;
            assert!((tau / (4.0 / d.y as f64) - 1.0).abs() < 0.02, "{tau}");
        }
    }

    /// Through cumulus, along three rays: the means of ratio tracking,
    /// of delta tracking (no collision) and of the view walk's weights
    /// (which sum to 1 − T in expectation) against the transmittance of
    /// the quadrature's optical depth.
    #[test]
    fn tracking_means_are_the_exact_transmittance() {
        let clouds = Clouds {
            layers: vec![Layer::new(&spec(Kind::Cumulus))],
        };
        let rays = [
            (
                Vec3::new(3.0, 0.0, -7.0),
                Vec3::new(0.3, 1.0, 0.2).normalize(),
                60.0,
            ),
            (
                Vec3::new(-40.0, 24.0, 5.0),
                Vec3::new(1.0, 0.05, 0.3).normalize(),
                6.0,
            ),
            (
                Vec3::new(10.0, 50.0, 10.0),
                Vec3::new(-0.2, -1.0, 0.4).normalize(),
                60.0,
            ),
        ];
        for (r, (o, d, t)) in rays.into_iter().enumerate() {
            let exact = (-quadrature(&clouds, o, d, t)).exp();
            assert!(
                exact > 0.05 && exact < 0.95,
                "ray {r} crosses cloud: {exact}"
            );
            let n = 20_000u64;
            let mean = |f: &dyn Fn(u64) -> f64| (0..n).map(f).sum::<f64>() / n as f64;
            let ratio = mean(&|k| clouds.transmittance(o, d, t, &mut draws(k)) as f64);
            let delta =
                mean(&|k| clouds.collide(o, d, t, &mut draws(k + n)).is_none() as u8 as f64);
            let walk = mean(&|k| clouds.view_walk(o, d, t, &mut draws(k + 2 * n)).weight as f64);
            // Binary estimates: standard error at most 0.5/√n = 0.0035.
            assert!(
                (delta - exact).abs() < 0.015,
                "ray {r}: delta {delta} vs {exact}"
            );
            assert!(
                (ratio - exact).abs() < 0.015,
                "ray {r}: ratio {ratio} vs {exact}"
            );
            assert!(
                (walk - (1.0 - exact)).abs() < 0.015,
                "ray {r}: walk {walk} vs {}",
                1.0 - exact
            );
        }
    }

    /// The majorant bounds the density everywhere: at 100 000 points in
    /// the layer, σ never exceeds its column's bound.
    #[test]
    fn the_majorant_bounds_the_density() {
        let layer = Layer::new(&spec(Kind::Cumulus));
        let size = layer.period / COLUMNS as f32;
        for k in 0..100_000u64 {
            let p = Vec3::new(
                unit_f32(1, 0, k) * 400.0 - 200.0,
                20.0 + unit_f32(1, 1, k) * 10.0,
                unit_f32(1, 2, k) * 400.0 - 200.0,
            );
            let c = (
                wrap((p.x / size).floor() as i64, COLUMNS as i64) as usize,
                wrap((p.z / size).floor() as i64, COLUMNS as i64) as usize,
            );
            let m = layer.majorant[c.1 * COLUMNS + c.0];
            assert!(
                layer.sigma(p) <= m * (1.0 + 1e-6),
                "{p}: {} > {m}",
                layer.sigma(p)
            );
        }
    }

    /// On a planet of radius R a horizontal ray from the ground meets a
    /// layer whose floor is h up at √(2Rh), the curve's drop r²/2R; and a
    /// ray down into the planet never meets the layer beyond.
    #[test]
    fn the_layer_follows_the_planets_curve() {
        let layer = Layer::new(&LayerSpec {
            planet: 50_000.0,
            ..spec(Kind::Uniform)
        });
        let spans: Vec<_> = layer
            .spans(Vec3::ZERO, Vec3::X, f32::INFINITY)
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(spans.len(), 1, "{spans:?}");
        let (t0, t1) = spans[0];
        assert!(
            (t0 - (2.0f32 * 50_000.0 * 20.0).sqrt()).abs() < 0.05,
            "{t0}"
        );
        assert!(
            (t1 - (2.0f32 * 50_000.0 * 30.0).sqrt()).abs() < 0.05,
            "{t1}"
        );
        let down = Vec3::new(1.0, -0.05, 0.0).normalize();
        assert_eq!(
            layer.spans(Vec3::new(0.0, 25.0, 0.0), down, f32::INFINITY)[1],
            None
        );
    }

    /// Wind moves the clouds: a layer `time` seconds on is the layer at
    /// the start, moved by wind × time (exactly, at tile-aligned moves).
    #[test]
    fn wind_carries_the_clouds() {
        let still = Layer::new(&spec(Kind::Cumulus));
        let windy = Layer::new(&LayerSpec {
            wind: Vec2::new(2.5, -1.25),
            time: 8.0,
            ..spec(Kind::Cumulus)
        });
        let mut moved = 0;
        for k in 0..200u64 {
            let p = Vec3::new(unit_f32(2, 0, k) * 100.0, 24.0, unit_f32(2, 1, k) * 100.0);
            let q = p + Vec3::new(20.0, 0.0, -10.0);
            assert!((windy.sigma(p) - still.sigma(q)).abs() <= 1e-5 * still.sigma(q).max(1e-3));
            moved += (windy.sigma(p) != still.sigma(p)) as u32;
        }
        assert!(moved > 20);
    }

    /// Each phase function integrates to 1 over the sphere, and its
    /// draws' mean cosine is Σ wᵢgᵢ: 0.75·0.8 − 0.25·0.3 = 0.525 for the
    /// droplets', g for one lobe.
    #[test]
    fn the_phase_functions_are_normalised_and_sampled() {
        let n = 20_000;
        for (phase, mean_cosine) in [
            (Phase::CLOUD, 0.525),
            (Phase::henyey_greenstein(0.6), 0.6),
            (Phase::henyey_greenstein(0.0), 0.0),
            (Phase::henyey_greenstein(-0.4), -0.4),
        ] {
            let integral: f64 = (0..n)
                .map(|i| {
                    let c = -1.0 + (i as f32 + 0.5) * 2.0 / n as f32;
                    phase.eval(c, 1.0) as f64 * 2.0 / n as f64 * std::f64::consts::TAU
                })
                .sum();
            assert!((integral - 1.0).abs() < 1e-3, "{phase:?} {integral}");
            let wo = Vec3::new(0.3, -0.4, 0.866).normalize();
            let mean: f64 = (0..n as u64)
                .map(|k| {
                    let wi = phase.sample(wo, (unit_f32(3, 0, k), unit_f32(3, 1, k)));
                    assert!((wi.length() - 1.0).abs() < 1e-4);
                    wi.dot(wo) as f64
                })
                .sum::<f64>()
                / n as f64;
            assert!((mean - mean_cosine).abs() < 0.01, "{phase:?} {mean}");
        }
    }

    /// The baked shape is a pure function of the seed: pinned.
    #[test]
    fn the_shape_is_pinned() {
        let layer = Layer::new(&spec(Kind::Cumulus));
        let print = crate::hash::fnv1a(layer.shape.iter().flat_map(|v| v.to_le_bytes()));
        let other = Layer::new(&LayerSpec {
            seed: 8,
            ..spec(Kind::Cumulus)
        });
        assert_ne!(layer.shape, other.shape);
        let filled =
            layer.shape.iter().filter(|&&v| v > 0.0).count() as f32 / layer.shape.len() as f32;
        assert!((0.05..0.6).contains(&filled), "{filled}");
        assert_eq!(print, 12424281017633314809, "fingerprint");
    }
}
