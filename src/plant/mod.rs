//! Plants grown from parameters, in the manner of Weber and Penn's
//! "Creation and Rendering of Realistic Trees" (1995): a trunk, up to
//! three levels of branches whose counts, lengths (the first level's by
//! the crown's shape), angles, curvature and taper the species sets,
//! leaves (or needles, or grass blades) along the last level, and
//! flowers at its tips. A species is grown into a few seeded variants,
//! stored once and placed many times ([`place`]).
//!
//! A plant is three meshes in its own space (y up, its foot at the
//! origin): bark, leaves and flowers, each with its own colour. Leaves
//! are thin strips bent along their length, their outline the species'
//! shape; they are two-sided, and pass the species' `translucency` of
//! their light through to their other side.

use glam::{Quat, Vec3};

use crate::hash::unit_f32;
use crate::mesh::TriangleMesh;

pub mod export;
pub mod file;
pub mod place;
pub mod prune;

pub use file::{PlantsFile, SPECIES_PRESETS};

/// Branch levels below the trunk, at most.
pub const MAX_LEVELS: usize = 3;

/// The crown's envelope: how the first level's branches' lengths vary
/// with their height up the trunk (Weber and Penn's shape ratios).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Crown {
    /// Longest at the bottom: a spruce.
    Conical,
    /// Longest in the middle.
    Spherical,
    /// Longest low, rounded above.
    Hemispherical,
    /// All alike.
    Cylindrical,
    /// Half again as long at the bottom.
    TaperedCylindrical,
    /// Longest at 70 % up.
    Flame,
    /// Longest at the top: a vase.
    InverseConical,
    /// A flame that does not vanish below.
    TendFlame,
}

impl Crown {
    /// The length ratio at `r`, the branch's place from the crown's top
    /// (0) to its base (1).
    pub fn ratio(self, r: f32) -> f32 {
        use std::f32::consts::PI;
        match self {
            Crown::Conical => 0.2 + 0.8 * r,
            Crown::Spherical => 0.2 + 0.8 * (PI * r).sin(),
            Crown::Hemispherical => 0.2 + 0.8 * (0.5 * PI * r).sin(),
            Crown::Cylindrical => 1.0,
            Crown::TaperedCylindrical => 0.5 + 0.5 * r,
            Crown::Flame if r <= 0.7 => r / 0.7,
            Crown::Flame => (1.0 - r) / 0.3,
            Crown::InverseConical => 1.0 - 0.8 * r,
            Crown::TendFlame if r <= 0.7 => 0.5 + 0.5 * r / 0.7,
            Crown::TendFlame => 0.5 + 0.5 * (1.0 - r) / 0.3,
        }
    }
}

/// One level of branches on the level above (the trunk for the first).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Level {
    /// Branches per parent stem.
    pub count: u32,
    /// Where along the parent they begin, 0..1 (the first level's:
    /// the crown's base).
    pub start: f32,
    /// Longest length, a fraction of the parent's.
    pub length: f32,
    /// Random share of the length taken away, 0..1.
    pub length_var: f32,
    /// Angle from the parent's direction, degrees.
    pub down: f32,
    /// Random spread of that angle, degrees.
    pub down_var: f32,
    /// Angle around the parent from one branch to the next, degrees.
    pub rotate: f32,
    /// Bend from base to tip, degrees (negative bends down).
    pub curve: f32,
    /// Pull of the tips toward the sky per unit length (negative: droop).
    pub up: f32,
    /// Base radius, a fraction of the parent's radius where it leaves.
    pub radius: f32,
}

/// The leaves' outline along their length.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LeafShape {
    /// An ellipse: broad leaves.
    #[default]
    Ellipse,
    /// Pointed at both ends, broadest a third of the way: willow, birch.
    Lanceolate,
    /// Nearly round.
    Round,
    /// A narrow sprig of needles.
    Needle,
    /// A grass blade: broad at the foot, tapering to a point.
    Blade,
    /// A rectangle: a card whose outline an image's alpha cuts
    /// (`leaf_image`).
    Card,
}

impl LeafShape {
    /// Half-width at `t` along the leaf (0 its stalk, 1 its tip), as a
    /// fraction of the widest.
    pub fn width(self, t: f32) -> f32 {
        use std::f32::consts::PI;
        match self {
            LeafShape::Ellipse => (PI * t).sin().max(0.0).sqrt(),
            LeafShape::Lanceolate => {
                // (sin πt)·(1 − t)^0.6, normalised to its peak.
                ((PI * t).sin().max(0.0) * (1.0 - t).max(0.0).powf(0.6)) / 0.7
            }
            LeafShape::Round => (1.0 - (2.0 * t - 1.0).powi(2)).max(0.0).powf(0.35),
            LeafShape::Needle => 1.0 - 0.5 * t,
            LeafShape::Blade => (1.0 - t).max(0.0).powf(0.7),
            LeafShape::Card => 1.0,
        }
        .min(1.0)
    }
}

/// The leaves of the last level of stems.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leaves {
    /// Leaves per stem of the last level.
    pub count: u32,
    /// Length, world units.
    pub size: f32,
    /// Width over length.
    pub aspect: f32,
    /// Angle from the stem, degrees.
    pub down: f32,
    /// Bend along the leaf, degrees (a grass blade's arch).
    pub bend: f32,
    /// Outline.
    pub shape: LeafShape,
    /// Where along the stem the leaves begin, 0..1.
    pub start: f32,
}

/// Flowers at the tips of the last level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flowers {
    /// Petals per flower.
    pub petals: u32,
    /// Radius, world units.
    pub size: f32,
}

/// A checked species.
#[derive(Debug, Clone, PartialEq)]
pub struct Species {
    /// Its name (the preset's or the file's).
    pub name: String,
    /// Trunk height range, world units.
    pub height: [f32; 2],
    /// Trunk radius at the foot, a fraction of the height.
    pub radius: f32,
    /// How much the stems narrow to their tips, 0 (none) ..= 1 (a point).
    pub taper: f32,
    /// Trunk's bend, degrees.
    pub curve: f32,
    /// The crown's envelope.
    pub crown: Crown,
    /// Branch levels, at most [`MAX_LEVELS`].
    pub levels: Vec<Level>,
    /// The leaves, if any.
    pub leaves: Option<Leaves>,
    /// The flowers, if any.
    pub flowers: Option<Flowers>,
    /// Linear RGB albedo of the bark.
    pub bark_color: Vec3,
    /// Of the leaves.
    pub leaf_color: Vec3,
    /// Largest change of the leaves' brightness from plant to plant, a
    /// fraction.
    pub leaf_color_var: f32,
    /// Share of the light on a leaf it passes through to its other side.
    pub translucency: f32,
    /// Of the flowers.
    pub flower_color: Vec3,
    /// Variants grown.
    pub variants: u32,
}

/// One stem of a grown plant: its level (0 the trunk), base, direction
/// at the base and length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stem {
    /// 0 the trunk, then the branch levels.
    pub level: usize,
    /// Where it leaves its parent.
    pub base: Vec3,
    /// Unit direction there.
    pub dir: Vec3,
    /// Length, world units.
    pub length: f32,
}

/// A grown plant: its stems and its three meshes.
#[derive(Debug, Clone, Default)]
pub struct Plant {
    /// Every stem, parents before children.
    pub stems: Vec<Stem>,
    /// Tapered tubes, smooth normals.
    pub bark: TriangleMesh,
    /// Leaf strips, flat.
    pub leaves: TriangleMesh,
    /// The leaves' texture coordinates, one per corner: u across the
    /// leaf (0 to 1), v along it (0 its stalk, 1 its tip).
    pub leaf_uvs: Vec<glam::Vec2>,
    /// Petal fans, flat.
    pub flowers: TriangleMesh,
    /// Leaves grown.
    pub leaf_count: usize,
    /// Their one-sided area, world units².
    pub leaf_area: f32,
    /// Their mean length, world units.
    pub leaf_length: f32,
    /// The leaves pruned to fewer and larger ([`prune`]), a level at a
    /// time: the first keeps half of them.
    pub pruned: Vec<prune::Pruned>,
}

/// The texture coordinates on triangle `tri` of a leaves mesh at
/// barycentrics `(u, v)`: every strip is laid out alike, so the
/// triangle's number gives its corners' coordinates (those of
/// [`Plant::leaf_uvs`]) without a lookup.
#[inline]
pub fn leaf_uv(tri: u32, u: f32, v: f32) -> glam::Vec2 {
    let j = tri as usize % LEAF_TRIANGLES;
    let (row, segments) = ((j / 2) as f32, LEAF_SEGMENTS as f32);
    // Corner k of the segment: 0 and 1 across its foot, 2 and 3 its top.
    let corner = |k: usize| {
        let t = (row + (k / 2) as f32) / segments;
        glam::Vec2::new((k % 2) as f32, t)
    };
    let [a, b, c] = match j % 2 {
        0 => [0, 1, 3],
        _ => [0, 3, 2],
    }
    .map(corner);
    a * (1.0 - u - v) + b * u + c * v
}

/// A plant's part: its name and where its mesh is.
pub type Part = (&'static str, fn(&Plant) -> &TriangleMesh);

/// Bark, leaves and flowers, in the order a world places them (and an
/// export writes them).
pub const PARTS: [Part; 3] = [("bark", bark), ("leaf", leaves), ("flower", flowers)];

fn bark(p: &Plant) -> &TriangleMesh {
    &p.bark
}

fn leaves(p: &Plant) -> &TriangleMesh {
    &p.leaves
}

fn flowers(p: &Plant) -> &TriangleMesh {
    &p.flowers
}

/// Random streams of growth.
mod stream {
    pub const HEIGHT: u64 = 1;
    pub const LENGTH: u64 = 2;
    pub const DOWN: u64 = 3;
    pub const ROTATE: u64 = 4;
    pub const LEAF: u64 = 5;
    pub const PLACE: u64 = 6;
}

/// Segments along a stem of each level (the trunk first), and sides
/// around it.
const SEGMENTS: [usize; 4] = [8, 4, 3, 2];
const SIDES: [usize; 4] = [7, 5, 4, 3];
/// Segments along a leaf.
const LEAF_SEGMENTS: usize = 3;
/// Corners of a leaf strip: a pair across it at each end of a segment,
/// the stalk's pair first.
pub const LEAF_VERTICES: usize = 2 * (LEAF_SEGMENTS + 1);
/// Triangles of a leaf strip, which follow one another in the mesh.
pub const LEAF_TRIANGLES: usize = 2 * LEAF_SEGMENTS;
/// Stems thinner than this fraction of the trunk's radius get no tube
/// (twigs too fine to see still carry leaves).
const THINNEST: f32 = 0.02;
/// Nor do stems under this radius, world units (a grass tuft's foot).
const FINEST: f32 = 0.004;

/// A unit vector perpendicular to the unit `d`.
fn perpendicular(d: Vec3) -> Vec3 {
    let a = if d.y.abs() < 0.9 { Vec3::Y } else { Vec3::X };
    d.cross(a).normalize()
}

/// Where a stem goes: points along it (its base first) and the
/// direction at each.
struct Path {
    points: Vec<Vec3>,
    dirs: Vec<Vec3>,
}

impl Path {
    /// The point and direction at `t` (0..=1) along the path.
    fn at(&self, t: f32) -> (Vec3, Vec3) {
        let n = self.points.len() - 1;
        let x = (t.clamp(0.0, 1.0) * n as f32).min(n as f32 - 1e-4);
        let i = x as usize;
        let f = x - i as f32;
        (
            self.points[i].lerp(self.points[i + 1], f),
            self.dirs[i].lerp(self.dirs[i + 1], f).normalize(),
        )
    }
}

/// Grows variant `variant` of `species` (a pure function of both).
pub fn grow(species: &Species, seed: u64, variant: u32) -> Plant {
    let seed = crate::hash::hash3(seed, 0x9_1A47, variant as u64);
    let mut g = Grower {
        s: species,
        seed,
        draws: 0,
        plant: Plant::default(),
    };
    let u = g.unit(stream::HEIGHT);
    let height = species.height[0] + (species.height[1] - species.height[0]) * u;
    let radius = species.radius * height;
    let bend = g.unit(stream::DOWN) * std::f32::consts::TAU;
    let axis = Vec3::new(bend.cos(), 0.0, bend.sin());
    g.stem(0, Vec3::ZERO, Vec3::Y, axis, height, radius, 0.0);
    let mut plant = g.plant;
    plant.leaf_length = prune::mean_leaf_length(&plant.leaves);
    plant.pruned = prune::prune(&plant, seed);
    plant
}

struct Grower<'a> {
    s: &'a Species,
    seed: u64,
    draws: u64,
    plant: Plant,
}

impl Grower<'_> {
    /// The next uniform number of `stream`.
    fn unit(&mut self, stream: u64) -> f32 {
        self.draws += 1;
        unit_f32(self.seed, stream, self.draws)
    }

    /// Grows a stem of `level` from `base` along `dir`, bending about
    /// `axis`, and all it carries. `phase` starts its children's spiral.
    #[allow(clippy::too_many_arguments)]
    fn stem(
        &mut self,
        level: usize,
        base: Vec3,
        dir: Vec3,
        axis: Vec3,
        length: f32,
        radius: f32,
        phase: f32,
    ) {
        let s = self.s;
        self.plant.stems.push(Stem {
            level,
            base,
            dir,
            length,
        });
        let (curve, up) = match level {
            0 => (s.curve, 0.0),
            l => (s.levels[l - 1].curve, s.levels[l - 1].up),
        };
        // The path: each segment turns by its share of the curve, then
        // leans toward the sky by `up`.
        let segs = SEGMENTS[level.min(3)];
        let step = length / segs as f32;
        let turn = Quat::from_axis_angle(axis, (curve / segs as f32).to_radians());
        let mut points = vec![base];
        let mut dirs = vec![dir];
        let mut d = dir;
        for _ in 0..segs {
            let p = *points.last().expect("based") + d * step;
            d = (turn * d + Vec3::Y * (up * step)).normalize();
            points.push(p);
            dirs.push(d);
        }
        let path = Path { points, dirs };
        let trunk = s.radius * s.height[0];
        if radius > THINNEST * trunk && radius > FINEST {
            self.tube(&path, radius, SIDES[level.min(3)]);
        }
        if level < s.levels.len() {
            self.children(level, &path, length, radius, phase);
        } else {
            self.leaves(&path);
            if let Some(f) = s.flowers {
                let (tip, d) = path.at(1.0);
                self.flower(tip, d, f);
            }
        }
    }

    /// The branches of the next level along a stem of `level`.
    fn children(&mut self, level: usize, path: &Path, length: f32, radius: f32, phase: f32) {
        let s = self.s;
        let l = s.levels[level];
        let mut angle = phase;
        for k in 0..l.count {
            // Evenly along the stem from `start`, a little jittered.
            let jitter = self.unit(stream::PLACE) - 0.5;
            let t = l.start + (1.0 - l.start) * ((k as f32 + 0.5 + 0.5 * jitter) / l.count as f32);
            let (at, d) = path.at(t);
            // Length: the first level's by the crown's shape, deeper
            // levels' shorter toward the parent's tip (Weber and Penn).
            let most = l.length * length;
            let shaped = if level == 0 {
                let r = (1.0 - t) / (1.0 - l.start).max(1e-3);
                most * s.crown.ratio(r.clamp(0.0, 1.0))
            } else {
                l.length * (length - 0.6 * t * length).max(0.0)
            };
            let child_length = shaped * (1.0 - l.length_var * self.unit(stream::LENGTH));
            angle += l.rotate.to_radians() + 0.1 * (self.unit(stream::ROTATE) - 0.5);
            let side = perpendicular(d);
            let around = Quat::from_axis_angle(d, angle);
            let out = around * side;
            let down = l.down + l.down_var * (2.0 * self.unit(stream::DOWN) - 1.0);
            let tilt_axis = d.cross(out).normalize_or(side);
            let child_dir = (Quat::from_axis_angle(tilt_axis, down.to_radians()) * d).normalize();
            // The child bends in the plane it leaves the parent by.
            let child_axis = child_dir
                .cross(Vec3::Y)
                .normalize_or(perpendicular(child_dir));
            let here = radius * (1.0 - s.taper * t);
            let child_radius = (here * l.radius).min(here);
            if child_length > 0.0 {
                self.stem(
                    level + 1,
                    at,
                    child_dir,
                    child_axis,
                    child_length,
                    child_radius,
                    angle,
                );
            }
        }
    }

    /// A tube of `sides` around the path, tapering from `radius`.
    fn tube(&mut self, path: &Path, radius: f32, sides: usize) {
        let m = &mut self.plant.bark;
        let first = m.positions.len() as u32;
        let n = path.points.len();
        let mut side = perpendicular(path.dirs[0]);
        for (i, (&p, &d)) in path.points.iter().zip(&path.dirs).enumerate() {
            // Carry the ring's frame along the path (no twist).
            side = (side - d * side.dot(d)).normalize_or(perpendicular(d));
            let other = d.cross(side);
            let t = i as f32 / (n - 1) as f32;
            let r = radius * (1.0 - self.s.taper * t).max(0.02);
            for k in 0..sides {
                let a = k as f32 / sides as f32 * std::f32::consts::TAU;
                let out = side * a.cos() + other * a.sin();
                m.positions.push(p + out * r);
                m.normals.push(out);
            }
        }
        for i in 0..n as u32 - 1 {
            for k in 0..sides as u32 {
                let k1 = (k + 1) % sides as u32;
                let a = first + i * sides as u32;
                let b = a + sides as u32;
                m.indices.push([a + k, a + k1, b + k1]);
                m.indices.push([a + k, b + k1, b + k]);
            }
        }
    }

    /// The leaves along a stem of the last level.
    fn leaves(&mut self, path: &Path) {
        let Some(l) = self.s.leaves else {
            return;
        };
        for k in 0..l.count {
            let t = l.start + (1.0 - l.start) * ((k as f32 + 0.5) / l.count as f32);
            let (at, d) = path.at(t);
            let spin = (k as f32 * 137.5).to_radians() + self.unit(stream::LEAF);
            let out = Quat::from_axis_angle(d, spin) * perpendicular(d);
            let axis = d.cross(out).normalize_or(perpendicular(d));
            let down = l.down * (0.8 + 0.4 * self.unit(stream::LEAF));
            let leaf_dir = (Quat::from_axis_angle(axis, down.to_radians()) * d).normalize();
            // The blade faces the sky as far as its direction allows.
            let across = leaf_dir.cross(Vec3::Y).normalize_or(out);
            let size = l.size * (0.8 + 0.4 * self.unit(stream::LEAF));
            self.leaf(at, leaf_dir, across, size, l);
        }
    }

    /// One leaf strip from `at` along `dir`, its width along `across`.
    fn leaf(&mut self, at: Vec3, dir: Vec3, across: Vec3, size: f32, l: Leaves) {
        let m = &mut self.plant.leaves;
        let first = m.positions.len() as u32;
        let half = 0.5 * l.aspect * size;
        let step = size / LEAF_SEGMENTS as f32;
        let turn = Quat::from_axis_angle(across, (l.bend / LEAF_SEGMENTS as f32).to_radians());
        let mut p = at;
        let mut d = dir;
        let mut area = 0.0;
        let mut last_w = 0.0;
        for i in 0..=LEAF_SEGMENTS {
            let t = i as f32 / LEAF_SEGMENTS as f32;
            let w = half * l.shape.width(t);
            m.positions.push(p - across * w);
            m.positions.push(p + across * w);
            self.plant.leaf_uvs.push(glam::Vec2::new(0.0, t));
            self.plant.leaf_uvs.push(glam::Vec2::new(1.0, t));
            if i > 0 {
                area += (w + last_w) * step;
            }
            last_w = w;
            p += d * step;
            d = (turn * d).normalize();
        }
        for i in 0..LEAF_SEGMENTS as u32 {
            let a = first + 2 * i;
            m.indices.push([a, a + 1, a + 3]);
            m.indices.push([a, a + 3, a + 2]);
        }
        self.plant.leaf_count += 1;
        self.plant.leaf_area += area;
    }

    /// A flower: a fan of petals around the tip, facing along `d`.
    fn flower(&mut self, tip: Vec3, d: Vec3, f: Flowers) {
        let m = &mut self.plant.flowers;
        let side = perpendicular(d);
        let other = d.cross(side);
        let centre = m.positions.len() as u32;
        m.positions.push(tip);
        for k in 0..f.petals {
            let a = k as f32 / f.petals as f32 * std::f32::consts::TAU;
            let w = 0.5 * std::f32::consts::PI / f.petals as f32;
            let ray = |a: f32| side * a.cos() + other * a.sin();
            let first = m.positions.len() as u32;
            m.positions
                .push(tip + ray(a - w) * (0.45 * f.size) + d * (0.1 * f.size));
            m.positions
                .push(tip + ray(a) * f.size + d * (0.25 * f.size));
            m.positions
                .push(tip + ray(a + w) * (0.45 * f.size) + d * (0.1 * f.size));
            m.indices.push([centre, first, first + 1]);
            m.indices.push([centre, first + 1, first + 2]);
        }
    }
}

#[cfg(test)]
mod tests;
