//! Plants traced where they stand, never stored as instances. A species
//! keeps a bit per spot of its grid and a height per plant
//! ([`Stand`]); a plant's place, scale, turn and variant are hashes of
//! its spot ([`Layout`](crate::plant::place::Layout)), worked out again
//! whenever a ray reaches it.
//!
//! The spots are grouped in blocks of 8 × 8 (one `u64` of bits); a
//! block's box holds its plants as they stand, and one tree over the
//! boxes of every species' blocks finds the blocks a ray crosses. In a
//! block, a plant is first tested as a circle on the ground (the reach
//! of its variants about the trunk, from three hashes), and only then
//! placed and entered: its variant's box, then its bark, leaves and
//! flowers, each a BVH built once per variant.

use arrayvec::ArrayVec;
use glam::{Affine3A, Vec2, Vec3};
use rayon::prelude::*;

use super::bvh::{Bvh, Hit, LeafCost, Tree};
use super::octet::{rays_of, OCTET};
use crate::hash::unit_f32;
use crate::plant::place::{bits, Layout, Stand, BLOCK};
use crate::plant::{Plant, LEAF_TRIANGLES, PARTS};
use crate::ray::{Aabb, Footprint, Ray};

/// One grown variant: a BVH per part (none for a part it lacks), one
/// per level of its pruned leaves, and the box of all of them, in its
/// own space.
#[derive(Debug, Clone)]
struct Variant {
    parts: [Option<Bvh>; 3],
    pruned: Vec<PrunedLeaves>,
    /// Its leaves' mean length.
    leaf_length: f32,
    bounds: Aabb,
    /// The farthest it reaches from its trunk's axis.
    reach: f32,
}

/// A level of a variant's pruned leaves ([`crate::plant::prune`]).
#[derive(Debug, Clone)]
struct PrunedLeaves {
    bvh: Bvh,
    /// The leaf of the full mesh each of its leaves is.
    kept: Vec<u32>,
}

impl Variant {
    fn grow(plant: &Plant) -> Variant {
        let meshes = PARTS.map(|(_, part)| part(plant));
        let all = || {
            meshes
                .iter()
                .copied()
                .chain(plant.pruned.iter().map(|l| &l.leaves))
                .flat_map(|m| &m.positions)
        };
        Variant {
            parts: meshes.map(|m| (!m.indices.is_empty()).then(|| Bvh::build(m))),
            pruned: plant
                .pruned
                .iter()
                .map(|l| PrunedLeaves {
                    bvh: Bvh::build(&l.leaves),
                    kept: l.kept.clone(),
                })
                .collect(),
            leaf_length: plant.leaf_length,
            bounds: all().fold(Aabb::EMPTY, |b, &p| b.grow(p)),
            reach: all()
                .map(|p| Vec2::new(p.x, p.z).length())
                .fold(0.0, f32::max),
        }
    }

    /// Part `part`'s BVH at pruning level `level` (0 the full leaves),
    /// and for pruned leaves the map back to the full mesh's triangles.
    #[inline]
    fn part(&self, part: usize, level: u8) -> Option<(&Bvh, Option<&PrunedLeaves>)> {
        if part == LEAVES && level > 0 {
            let l = &self.pruned[level as usize - 1];
            Some((&l.bvh, Some(l)))
        } else {
            self.parts[part].as_ref().map(|b| (b, None))
        }
    }

    /// The upright cylinder that holds it placed by `scale` at `at` on
    /// `foot`.
    #[inline]
    fn cylinder(&self, at: Vec2, scale: f32, foot: f32) -> Cylinder {
        Cylinder {
            at,
            r: self.reach * scale,
            bottom: foot + self.bounds.min.y * scale,
            top: foot + self.bounds.max.y * scale,
        }
    }
}

impl PrunedLeaves {
    /// `hit` on these leaves as the hit on the full leaf it copies (the
    /// same plane, so the same normal).
    #[inline]
    fn to_full(&self, mut hit: Hit) -> Hit {
        let per = LEAF_TRIANGLES as u32;
        hit.triangle = self.kept[(hit.triangle / per) as usize] * per + hit.triangle % per;
        hit
    }
}

/// The index of the leaves among a plant's parts.
const LEAVES: usize = 1;

/// The parts in the order a shadow ray tests them: the leaves first,
/// which hold most of a crown's area and so end most tests soonest.
const SHADOW_ORDER: [usize; 3] = [LEAVES, 0, 2];

/// One species as traced.
#[derive(Debug, Clone)]
struct Kind {
    stand: Stand,
    variants: Vec<Variant>,
    /// Side of its leaves' pieces of a block, in spots.
    side: u32,
    /// The least length a leaf is kept at, if its leaves are pruned.
    prune: Option<Footprint>,
    /// Its leaves are cut out: a hit on them counts only where the
    /// caller's test keeps it.
    cut: bool,
}

/// One species as the field takes it: its grown variants, and the
/// footprint its leaves are pruned to (a leaf seen smaller than it is
/// pruned), if they are.
#[derive(Debug, Clone)]
pub struct Grown<'a> {
    /// The variants, grown.
    pub variants: Vec<&'a Plant>,
    /// The least length, at a distance, of a leaf kept whole.
    pub prune: Option<Footprint>,
    /// Whether its leaves are cut out (cards with an alpha image): hits
    /// on them are tested by the queries' `keep`.
    pub cut: bool,
}

/// A hit on a plant: which species, spot and plant (its index among the
/// species' plants), which part, and the hit on that part's mesh.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlantHit {
    /// Index of the species.
    pub species: u32,
    /// The plant's spot in its species' grid.
    pub spot: u32,
    /// Index of the plant among its species'.
    pub plant: u32,
    /// The part hit (0 bark, 1 leaves, 2 flowers).
    pub part: u32,
    /// The hit on the part's mesh (t in world units).
    pub hit: Hit,
}

impl PlantHit {
    /// The key that decides between hits at the same t.
    fn key(&self) -> (u32, u32, u32, u32) {
        (self.species, self.spot, self.part, self.hit.triangle)
    }

    /// Whether this hit should replace `best`: nearer, or as near and
    /// lower by (species, spot, part, triangle).
    #[inline]
    fn beats(&self, best: &Option<PlantHit>) -> bool {
        best.is_none_or(|b| self.hit.t < b.hit.t || (self.hit.t == b.hit.t && self.key() < b.key()))
    }
}

/// Spots along a side of the part of a block that is one leaf of the
/// tree, unless the field is too large for it: a whole block's box is a
/// loose fit on a forest's crowns (on forest-valley, 26 % fewer rays a
/// second with leaves of whole blocks, 20 % fewer on meadow).
const PIECE: u32 = 2;

/// Leaves the tree may have before species' pieces are made coarser:
/// what bounds its memory however many plants there are (and what the
/// scene's memory estimate counts on).
pub const LEAF_BUDGET: u64 = 8_000_000;

/// Leaves of a species' stand cut in pieces of `side` spots.
fn leaf_count(stand: &Stand, side: u32) -> u64 {
    let pieces = (BLOCK / side).pow(2);
    stand
        .masks
        .par_iter()
        .map(|&mask| {
            (0..pieces)
                .filter(|&k| mask & piece_mask(side, k) != 0)
                .count() as u64
        })
        .sum()
}

/// The side of each species' pieces: [`PIECE`], made coarser (to 4, then
/// to whole blocks of 8) for the species with the most leaves, again and
/// again, while the field has more than `budget` leaves. A hundred
/// million blades of grass cost a leaf per block, not sixteen.
fn piece_sides(stands: &[&Stand], budget: u64) -> Vec<u32> {
    let mut sides = vec![PIECE; stands.len()];
    let mut counts: Vec<u64> = stands.iter().map(|s| leaf_count(s, PIECE)).collect();
    while counts.iter().sum::<u64>() > budget {
        let Some(s) = (0..stands.len())
            .filter(|&s| sides[s] < BLOCK)
            .max_by_key(|&s| (counts[s], std::cmp::Reverse(s)))
        else {
            break;
        };
        sides[s] *= 2;
        counts[s] = leaf_count(stands[s], sides[s]);
    }
    sides
}

/// The mask of the bits of piece `k` of a block cut in pieces of
/// `side` × `side` spots.
const fn piece_mask(side: u32, k: u32) -> u64 {
    let (pi, pj) = (k % (BLOCK / side), k / (BLOCK / side));
    let row = ((1u64 << side) - 1) << (pi * side);
    let mut mask = 0;
    let mut j = 0;
    while j < side {
        mask |= row << ((pj * side + j) * BLOCK);
        j += 1;
    }
    mask
}

/// One leaf of the tree: a species' block and its piece.
#[derive(Debug, Clone, Copy)]
struct Leaf {
    species: u32,
    block: u32,
    piece: u32,
}

impl Kind {
    /// The plants of piece `piece` of block `block`, as they stand.
    #[inline]
    fn standing(&self, block: u32, piece: u32) -> impl Iterator<Item = Standing<'_>> {
        let layout = &self.stand.layout;
        let mask = self.stand.masks[block as usize];
        let first = self.stand.firsts[block as usize];
        bits(mask & piece_mask(self.side, piece)).map(move |bit| {
            let plant = first + (mask & ((1u64 << bit) - 1)).count_ones();
            let spot = layout.block_spot(block, bit);
            let foot = self.stand.feet[plant as usize];
            let variant = &self.variants[layout.variant(spot) as usize];
            let (at, scale) = (layout.at(spot), layout.scale(spot));
            Standing {
                spot,
                plant,
                variant,
                cylinder: variant.cylinder(at, scale, foot),
                at,
                scale,
                foot,
                layout,
            }
        })
    }
}

/// A plant as a ray finds it: its spot, its index among its species',
/// its variant, and the upright cylinder that holds it; placed (its
/// transform made) only once a ray crosses the cylinder.
struct Standing<'a> {
    spot: u32,
    plant: u32,
    variant: &'a Variant,
    cylinder: Cylinder,
    at: Vec2,
    scale: f32,
    foot: f32,
    layout: &'a Layout,
}

impl Standing<'_> {
    /// `ray` carried into the plant's space.
    #[inline]
    fn local(&self, m: &Affine3A, ray: &Ray) -> Ray {
        Ray::new(m.transform_point3(ray.origin), m.transform_vector3(ray.dir))
    }

    /// `hit` on part `part` of this plant of species `species` (on the
    /// level `pruned` where its leaves are pruned) as the field reports
    /// it: on the full leaf a pruned one copies.
    #[inline]
    fn named(
        &self,
        species: u32,
        part: usize,
        pruned: Option<&PrunedLeaves>,
        hit: Hit,
    ) -> PlantHit {
        PlantHit {
            species,
            spot: self.spot,
            plant: self.plant,
            part: part as u32,
            hit: pruned.map_or(hit, |l| l.to_full(hit)),
        }
    }

    /// World to the plant's space.
    #[inline]
    fn object_from_world(&self) -> Affine3A {
        self.layout
            .place_at(self.spot, self.at, self.scale, self.foot)
            .inverse()
    }
}

/// Every species' plants and the tree over their blocks.
#[derive(Debug, Clone)]
pub struct PlantField {
    kinds: Vec<Kind>,
    tree: Tree,
    /// (species, block, part of the block) of each leaf-order slot.
    order: Vec<Leaf>,
    /// Triangles the plants place (each plant counts its variant's).
    triangles: usize,
}

impl PlantField {
    /// The field of species whose plants stand as `stands` say and are
    /// grown as `species` says.
    ///
    /// # Panics
    /// If a species has no variant.
    pub fn build(stands: Vec<Stand>, species: &[Grown]) -> PlantField {
        PlantField::build_within(stands, species, LEAF_BUDGET)
    }

    /// [`PlantField::build`] with a tree of at most about `budget` leaves.
    fn build_within(stands: Vec<Stand>, species: &[Grown], budget: u64) -> PlantField {
        let sides = piece_sides(&stands.iter().collect::<Vec<_>>(), budget);
        let kinds: Vec<Kind> = stands
            .into_iter()
            .zip(species)
            .zip(sides)
            .map(|((stand, grown), side)| Kind {
                stand,
                variants: grown
                    .variants
                    .par_iter()
                    .map(|v| Variant::grow(v))
                    .collect(),
                side,
                prune: grown.prune,
                cut: grown.cut,
            })
            .collect();
        let mut triangles = 0;
        for (kind, grown) in kinds.iter().zip(species) {
            let per: Vec<usize> = grown
                .variants
                .iter()
                .map(|v| PARTS.map(|(_, part)| part(v).indices.len()).iter().sum())
                .collect();
            triangles += kind
                .stand
                .plants()
                .map(|(spot, _)| per[kind.stand.layout.variant(spot) as usize])
                .sum::<usize>();
        }
        let (mut leaves, mut bounds): (Vec<Leaf>, Vec<Aabb>) = (Vec::new(), Vec::new());
        for (s, kind) in kinds.iter().enumerate() {
            let stand = &kind.stand;
            let (l, b): (Vec<Leaf>, Vec<Aabb>) = stand
                .masks
                .par_iter()
                .enumerate()
                .filter(|(_, &mask)| mask != 0)
                .flat_map_iter(move |(block, &mask)| {
                    let block = block as u32;
                    (0..(BLOCK / kind.side).pow(2))
                        .filter(move |&piece| mask & piece_mask(kind.side, piece) != 0)
                        .map(move |piece| {
                            let bounds = kind
                                .standing(block, piece)
                                .fold(Aabb::EMPTY, |a, p| a.union(p.cylinder.bounds()));
                            let leaf = Leaf {
                                species: s as u32,
                                block,
                                piece,
                            };
                            (leaf, bounds)
                        })
                })
                .unzip();
            leaves.extend(l);
            bounds.extend(b);
        }
        let (mut tree, order) = Tree::build(&bounds, LeafCost::PerInstance);
        // Plants stand close: a shadow ray's nearest plant is the likeliest
        // to stop it.
        tree.set_near_first();
        drop(bounds);
        let order = order.iter().map(|&i| leaves[i as usize]).collect();
        PlantField {
            kinds,
            tree,
            order,
            triangles,
        }
    }

    /// Plants in the field.
    pub fn plant_count(&self) -> usize {
        self.kinds.iter().map(|k| k.stand.len()).sum()
    }

    /// Triangles the plants place (each counts its variant's).
    pub fn triangle_count(&self) -> usize {
        self.triangles
    }

    /// Bytes held: the stands, the tree over the blocks and the variants'
    /// BVHs.
    pub fn memory_bytes(&self) -> usize {
        self.tree.memory_bytes()
            + std::mem::size_of_val(&self.order[..])
            + self
                .kinds
                .iter()
                .map(|k| {
                    k.stand.memory_bytes()
                        + k.variants
                            .iter()
                            .flat_map(|v| {
                                v.parts
                                    .iter()
                                    .flatten()
                                    .chain(v.pruned.iter().map(|l| &l.bvh))
                            })
                            .map(Bvh::memory_bytes)
                            .sum::<usize>()
                })
                .sum::<usize>()
    }

    /// Object to world of plant `plant` (at `spot`) of species `species`,
    /// and its variant.
    #[inline]
    pub fn place(&self, species: u32, spot: u32, plant: u32) -> (Affine3A, u32) {
        let stand = &self.kinds[species as usize].stand;
        (
            stand.layout.place(spot, stand.feet[plant as usize]),
            stand.layout.variant(spot),
        )
    }

    /// The level of pruning of plant `p` of species `species` that a
    /// ray from `origin` sees: the level whose grown leaves are as long
    /// as the species' footprint is wide at the plant's middle (each
    /// level halves the leaves and grows them by about √2), dithered
    /// between two levels by a hash of the plant, so that its leaves
    /// thin out gradually with distance and a plant is the same for
    /// every ray from one eye.
    #[inline]
    fn level(&self, species: u32, p: &Standing, origin: Vec3) -> u8 {
        let Some(prune) = self.kinds[species as usize].prune else {
            return 0;
        };
        let levels = p.variant.pruned.len() as u32;
        if levels == 0 {
            return 0;
        }
        let c = &p.cylinder;
        let middle = Vec3::new(c.at.x, 0.5 * (c.bottom + c.top), c.at.y);
        let ratio = prune.at(origin.distance(middle)) / (p.variant.leaf_length * p.scale);
        // 2^level leaves' worth of area in each kept leaf.
        let q = ratio * ratio;
        if q.is_nan() || q < 1.0 {
            return 0;
        }
        // log2 q: its exponent, and its mantissa's fraction standing in
        // for the rest (exact, and the same on every machine).
        let bits = q.to_bits();
        let exponent = (bits >> 23) as i32 - 127;
        let fraction = f32::from_bits((bits & 0x007F_FFFF) | 0x3F80_0000) - 1.0;
        let up = self.dither(species, p.spot) < fraction;
        (exponent + i32::from(up)).clamp(0, levels as i32) as u8
    }

    /// A number in [0, 1) for each plant.
    #[inline]
    fn dither(&self, species: u32, spot: u32) -> f32 {
        unit_f32(species as u64, 0xD17E, spot as u64)
    }

    /// The closest hit of part `part` (at pruning level `level`) of
    /// plant `p` of species `species` along `local`, the ray in the
    /// plant's space, within `t_max`; on a cut-out species' leaves, the
    /// closest that `keep` keeps.
    #[inline]
    fn part_hit(
        &self,
        species: u32,
        p: &Standing,
        (part, level): (usize, u8),
        (world, local): (&Ray, &Ray),
        t_max: f32,
        keep: &impl Fn(&Ray, &PlantHit) -> bool,
    ) -> Option<PlantHit> {
        let (bvh, pruned) = p.variant.part(part, level)?;
        let named = |hit: Hit| p.named(species, part, pruned, hit);
        let hit = match part == LEAVES && self.kinds[species as usize].cut {
            true => bvh.intersect_where(local, t_max, |h| keep(world, &named(*h)))?,
            false => bvh.intersect(local, t_max)?,
        };
        Some(named(hit))
    }

    /// Whether part `part` (at `level`) of plant `p` blocks `local`
    /// within `t_max`, as [`PlantField::part_hit`] finds hits.
    #[inline]
    fn part_blocks(
        &self,
        species: u32,
        p: &Standing,
        (part, level): (usize, u8),
        (world, local): (&Ray, &Ray),
        t_max: f32,
        keep: &impl Fn(&Ray, &PlantHit) -> bool,
    ) -> bool {
        let Some((bvh, pruned)) = p.variant.part(part, level) else {
            return false;
        };
        match part == LEAVES && self.kinds[species as usize].cut {
            true => bvh.occluded_where(local, t_max, |h| {
                keep(world, &p.named(species, part, pruned, *h))
            }),
            false => bvh.occluded(local, t_max),
        }
    }

    /// The closest plant along `ray` with t in (0, t_max]. Of hits at the
    /// same t, the lowest (species, spot, part, triangle). A hit on the
    /// leaves of a species whose leaves are cut out counts where `keep`
    /// keeps it.
    pub fn intersect(
        &self,
        ray: &Ray,
        t_max: f32,
        keep: impl Fn(&Ray, &PlantHit) -> bool,
    ) -> Option<PlantHit> {
        let mut best: Option<PlantHit> = None;
        self.tree.closest(ray, t_max, |range, t_best| {
            for &Leaf {
                species,
                block,
                piece,
            } in &self.order[range]
            {
                self.visit(species, block, piece, ray, *t_best, |local, p| {
                    let level = self.level(species, p, ray.origin);
                    for part in 0..PARTS.len() {
                        let found =
                            self.part_hit(species, p, (part, level), (ray, local), *t_best, &keep);
                        if let Some(candidate) = found.filter(|c| c.beats(&best)) {
                            *t_best = candidate.hit.t;
                            best = Some(candidate);
                        }
                    }
                    false
                });
            }
        });
        best
    }

    /// Whether a plant lies along `ray` with t in (0, t_max] (cut-out
    /// leaves where `keep` keeps the hit).
    pub fn occluded(&self, ray: &Ray, t_max: f32, keep: impl Fn(&Ray, &PlantHit) -> bool) -> bool {
        self.tree.any(ray, t_max, |range| {
            self.order[range].iter().any(|l| {
                self.visit(l.species, l.block, l.piece, ray, t_max, |local, p| {
                    let level = self.level(l.species, p, ray.origin);
                    SHADOW_ORDER.iter().any(|&part| {
                        self.part_blocks(l.species, p, (part, level), (ray, local), t_max, &keep)
                    })
                })
            })
        })
    }

    /// [`PlantField::intersect`] for each ray of a batch, eight neighbours
    /// at a time down the tree and together into each plant more than one
    /// of them reaches: `hits[k]` for `rays[k]` within `t_max[k]`.
    pub fn intersect_batch(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        hits: &mut [Option<PlantHit>],
        keep: impl Fn(&Ray, &PlantHit) -> bool,
    ) {
        hits.fill(None);
        for ((rays, t_max), hits) in rays
            .chunks(OCTET)
            .zip(t_max.chunks(OCTET))
            .zip(hits.chunks_mut(OCTET))
        {
            self.tree.closest_octet(rays, t_max, |mask, range, t_best| {
                for leaf in &self.order[range] {
                    let limits = *t_best;
                    let cut = self.kinds[leaf.species as usize].cut;
                    self.visit_octet(leaf, rays, mask, &limits, |local, ks, p| {
                        let levels: ArrayVec<u8, OCTET> = ks
                            .iter()
                            .map(|&k| self.level(leaf.species, p, rays[k].origin))
                            .collect();
                        for part in 0..PARTS.len() {
                            for (level, lanes) in by_level(part, &levels) {
                                let mut found = [None; OCTET];
                                let lanes: ArrayVec<usize, OCTET> = rays_of(lanes).collect();
                                if lanes.len() == 1 || (cut && part == LEAVES) {
                                    // One at a time: cut-out leaves test
                                    // each hit in the leaves of the BVH.
                                    for (f, &i) in found.iter_mut().zip(&lanes) {
                                        let k = ks[i];
                                        *f = self.part_hit(
                                            leaf.species,
                                            p,
                                            (part, level),
                                            (&rays[k], &local[i]),
                                            t_best[k],
                                            &keep,
                                        );
                                    }
                                } else {
                                    let Some((bvh, pruned)) = p.variant.part(part, level) else {
                                        break;
                                    };
                                    let group: ArrayVec<Ray, OCTET> =
                                        lanes.iter().map(|&i| local[i]).collect();
                                    let limits: ArrayVec<f32, OCTET> =
                                        lanes.iter().map(|&i| t_best[ks[i]]).collect();
                                    let mut raw = [None; OCTET];
                                    bvh.intersect_batch(&group, &limits, &mut raw[..lanes.len()]);
                                    for (f, hit) in found.iter_mut().zip(raw) {
                                        *f =
                                            hit.map(|hit| p.named(leaf.species, part, pruned, hit));
                                    }
                                }
                                for (&i, candidate) in lanes.iter().zip(found) {
                                    let k = ks[i];
                                    let Some(candidate) = candidate else { continue };
                                    if candidate.beats(&hits[k]) {
                                        t_best[k] = candidate.hit.t;
                                        hits[k] = Some(candidate);
                                    }
                                }
                            }
                        }
                        0
                    });
                }
            });
        }
    }

    /// [`PlantField::occluded`] for the rays of a batch named by `order`
    /// (best grouped by the signs of their directions), eight of them at
    /// a time: `blocked[k]` is set for each blocked ray `k`, and left as
    /// it is otherwise.
    pub fn occluded_batch(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        order: &[u32],
        blocked: &mut [bool],
        keep: impl Fn(&Ray, &PlantHit) -> bool,
    ) {
        self.tree.any_octets(
            rays,
            t_max,
            order,
            |octet, limits, mask, range| {
                let mut hit = 0;
                for leaf in &self.order[range] {
                    let cut = self.kinds[leaf.species as usize].cut;
                    hit |= self.visit_octet(leaf, octet, mask & !hit, limits, |local, ks, p| {
                        let levels: ArrayVec<u8, OCTET> = ks
                            .iter()
                            .map(|&k| self.level(leaf.species, p, octet[k].origin))
                            .collect();
                        // Lanes of `ks` not yet blocked.
                        let mut open = (1u32 << ks.len()) - 1;
                        for part in SHADOW_ORDER {
                            for (level, lanes) in by_level(part, &levels) {
                                let lanes = lanes & open;
                                if lanes == 0 {
                                    continue;
                                }
                                let mut found = [false; OCTET];
                                let n = lanes.count_ones() as usize;
                                if n == 1 || (cut && part == LEAVES) {
                                    for (f, i) in found.iter_mut().zip(rays_of(lanes)) {
                                        *f = self.part_blocks(
                                            leaf.species,
                                            p,
                                            (part, level),
                                            (&octet[ks[i]], &local[i]),
                                            limits[ks[i]],
                                            &keep,
                                        );
                                    }
                                } else {
                                    let Some((bvh, _)) = p.variant.part(part, level) else {
                                        break;
                                    };
                                    let (group, lim): (ArrayVec<Ray, OCTET>, ArrayVec<f32, OCTET>) =
                                        rays_of(lanes).map(|i| (local[i], limits[ks[i]])).unzip();
                                    bvh.occluded_batch(&group, &lim, &mut found[..n]);
                                }
                                for (i, f) in rays_of(lanes).zip(found) {
                                    open &= !(u32::from(f) << i);
                                }
                            }
                            // Rays blocked already need no other part.
                            if open == 0 {
                                break;
                            }
                        }
                        let all = (1u32 << ks.len()) - 1;
                        rays_of(all & !open).fold(0, |now, i| now | 1 << ks[i])
                    });
                    if hit == mask {
                        break;
                    }
                }
                hit
            },
            blocked,
        );
    }

    /// For each plant of `leaf` that some of the rays of `octet` named by
    /// `mask` may meet within their `limits`, calls `enter` with those
    /// rays carried into the plant's space, their lanes, and the plant;
    /// returns the union of the masks `enter` returns (and stops early
    /// once every ray of `mask` is in it).
    #[inline]
    fn visit_octet(
        &self,
        leaf: &Leaf,
        octet: &[Ray],
        mask: u32,
        limits: &[f32],
        mut enter: impl FnMut(ArrayVec<Ray, OCTET>, ArrayVec<usize, OCTET>, &Standing) -> u32,
    ) -> u32 {
        let mut done = 0u32;
        for plant in self.kinds[leaf.species as usize].standing(leaf.block, leaf.piece) {
            let ks: ArrayVec<usize, OCTET> = rays_of(mask & !done)
                .filter(|&k| plant.cylinder.crossed(&octet[k], limits[k]))
                .collect();
            if ks.is_empty() {
                continue;
            }
            let m = plant.object_from_world();
            let (local, ks): (ArrayVec<Ray, OCTET>, ArrayVec<usize, OCTET>) = ks
                .iter()
                .map(|&k| (plant.local(&m, &octet[k]), k))
                .filter(|(local, k)| plant.variant.bounds.hit(local, limits[*k]).is_some())
                .unzip();
            if ks.is_empty() {
                continue;
            }
            done |= enter(local, ks, &plant);
            if done & mask == mask {
                break;
            }
        }
        done
    }

    /// Calls `enter` with `ray` carried into each plant of piece `piece`
    /// of block `block` of species `species` that it may meet within
    /// `t_max`, and the plant, until `enter` says to stop (true, which is
    /// returned).
    #[inline]
    fn visit(
        &self,
        species: u32,
        block: u32,
        piece: u32,
        ray: &Ray,
        t_max: f32,
        mut enter: impl FnMut(&Ray, &Standing) -> bool,
    ) -> bool {
        for plant in self.kinds[species as usize].standing(block, piece) {
            if !plant.cylinder.crossed(ray, t_max) {
                continue;
            }
            let local = plant.local(&plant.object_from_world(), ray);
            if plant.variant.bounds.hit(&local, t_max).is_none() {
                continue;
            }
            if enter(&local, &plant) {
                return true;
            }
        }
        false
    }
}

/// The lanes of a plant's rays that test part `part` together, with
/// the level they test it at: every lane at once for the bark and
/// flowers, and for the leaves the lanes of each level apart (in the
/// order of their first lanes).
fn by_level(part: usize, levels: &[u8]) -> ArrayVec<(u8, u32), OCTET> {
    let mut groups: ArrayVec<(u8, u32), OCTET> = ArrayVec::new();
    for (i, &level) in levels.iter().enumerate() {
        let level = if part == LEAVES { level } else { 0 };
        match groups.iter_mut().find(|(l, _)| *l == level) {
            Some((_, lanes)) => *lanes |= 1 << i,
            None => groups.push((level, 1 << i)),
        }
    }
    groups
}

/// An upright cylinder: its axis at `at` (x, z), its radius, bottom and
/// top.
struct Cylinder {
    at: Vec2,
    r: f32,
    bottom: f32,
    top: f32,
}

impl Cylinder {
    /// Its box, widened as [`Cylinder::crossed`] widens it.
    fn bounds(&self) -> Aabb {
        let r = self.r * (1.0 + 1e-4) + 1e-4;
        let slack = 1e-4 * (1.0 + self.top.abs().max(self.bottom.abs()));
        Aabb {
            min: Vec3::new(self.at.x - r, self.bottom - slack, self.at.y - r),
            max: Vec3::new(self.at.x + r, self.top + slack, self.at.y + r),
        }
    }

    /// Whether `ray` may pass through the cylinder with t in [0, t_max]:
    /// the span of t it spends within the radius (widened a little for
    /// rounding), and the heights it has there.
    #[inline]
    fn crossed(&self, ray: &Ray, t_max: f32) -> bool {
        let o = Vec2::new(ray.origin.x - self.at.x, ray.origin.z - self.at.y);
        let d = Vec2::new(ray.dir.x, ray.dir.z);
        let r = self.r * (1.0 + 1e-4) + 1e-4;
        let dd = d.length_squared();
        let od = o.dot(d);
        let c = o.length_squared() - r * r;
        if dd < 1e-12 {
            // Straight up or down: within the radius or not at all.
            return c <= 0.0;
        }
        let disc = od * od - dd * c;
        if disc < 0.0 {
            return false;
        }
        let root = disc.sqrt();
        let t0 = ((-od - root) / dd).max(0.0);
        let t1 = ((-od + root) / dd).min(t_max);
        if t0 > t1 * (1.0 + 1e-5) {
            return false;
        }
        let slack = 1e-4 * (1.0 + self.top.abs().max(self.bottom.abs()));
        let (y0, y1) = (ray.origin.y + ray.dir.y * t0, ray.origin.y + ray.dir.y * t1);
        y0.max(y1) >= self.bottom - slack && y0.min(y1) <= self.top + slack
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use glam::Vec3;

    use super::*;
    use crate::accel::bvh::brute_closest;
    use crate::plant::place::{place, Plants};
    use crate::plant::{file, grow};
    use crate::terrain::TerrainGrid;

    fn plants(name: &str, seed: u64, spacing: f32) -> Plants {
        let s = file::check_species("p", name, &file::preset(name).expect("a preset"))
            .expect("valid")
            .0;
        Plants {
            variants: (0..3).map(|v| Arc::new(grow(&s, seed, v))).collect(),
            species: s,
            density: 0.9,
            spacing,
            scale: [0.7, 1.3],
            height: [0.0, 1.0],
            slope: [0.0, 60.0],
            moisture: None,
            fade: 0.15,
            clumping: 0.3,
            clump_size: 10.0,
            understory: true,
            prune: 1.0,
            leaf_image: None,
            seed,
        }
    }

    /// Spruces and grass on a small hill, and their field.
    fn field(budget: u64) -> (Vec<Plants>, Vec<Stand>, PlantField) {
        field_pruned(budget, None)
    }

    /// [`field`] with leaves pruned to `prune`.
    fn field_pruned(
        budget: u64,
        prune: Option<Footprint>,
    ) -> (Vec<Plants>, Vec<Stand>, PlantField) {
        let grid = TerrainGrid::diamond_square(33, 33, 6.0, 7, [40.0, 40.0]);
        let all = vec![plants("spruce", 3, 6.0), plants("grass", 4, 1.0)];
        let stands = place(&all, &grid, None);
        let grown: Vec<Grown> = all
            .iter()
            .map(|p| Grown {
                variants: p.variants.iter().map(|v| &**v).collect(),
                prune,
                cut: false,
            })
            .collect();
        let field = PlantField::build_within(stands.clone(), &grown, budget);
        (all, stands, field)
    }

    /// Rays from above the hill down through the stands, and level ones
    /// through the trunks and tufts, `t_max` finite for some.
    fn rays() -> Vec<(Ray, f32)> {
        (0..600u64)
            .map(|k| {
                let r = |s| crate::hash::unit_f32(k, s, 9);
                let origin = Vec3::new(r(1) * 50.0 - 25.0, r(2) * 25.0, r(3) * 50.0 - 25.0);
                let dir = Vec3::new(r(4) - 0.5, -r(5) * 0.8, r(6) - 0.5).normalize();
                let t_max = if k % 3 == 0 {
                    r(7) * 30.0
                } else {
                    f32::INFINITY
                };
                (Ray::new(origin, dir), t_max)
            })
            .collect()
    }

    /// The closest hit over every placed plant's every triangle, found
    /// without the field: (t, species, spot, part, triangle).
    fn brute(all: &[Plants], stands: &[Stand], ray: &Ray, t_max: f32) -> Option<(f32, [u32; 4])> {
        brute_at(all, stands, ray, t_max, None)
    }

    /// [`brute`] with each plant's leaves at their deepest pruned level
    /// where `deepest`, each hit on them named by the full leaf's
    /// triangle.
    fn brute_at(
        all: &[Plants],
        stands: &[Stand],
        ray: &Ray,
        t_max: f32,
        deepest: Option<()>,
    ) -> Option<(f32, [u32; 4])> {
        let mut best: Option<(f32, [u32; 4])> = None;
        for (s, (p, stand)) in all.iter().zip(stands).enumerate() {
            for q in stand.placed() {
                let m = q.place.inverse();
                let local = Ray::new(m.transform_point3(ray.origin), m.transform_vector3(ray.dir));
                let plant = &p.variants[q.variant as usize];
                let pruned = deepest.and(plant.pruned.last());
                let leaves = pruned.map_or(&plant.leaves, |l| &l.leaves);
                for (part, mesh) in [&plant.bark, leaves, &plant.flowers]
                    .into_iter()
                    .enumerate()
                {
                    if let Some((t, tri)) = brute_closest(mesh, &local, t_max) {
                        let tri = match pruned {
                            Some(l) if part == LEAVES => l.full_triangle(tri),
                            _ => tri,
                        };
                        let key = [s as u32, q.spot, part as u32, tri];
                        if best.is_none_or(|(bt, bk)| t < bt || (t == bt && key < bk)) {
                            best = Some((t, key));
                        }
                    }
                }
            }
        }
        best
    }

    /// Each of the field's four queries, one ray at a time and in octets,
    /// finds `expect[k]` (or, occluded, that it is some) for `rays[k]`,
    /// hits on cut-out leaves kept by `keep`.
    fn queries_agree(
        field: &PlantField,
        rays: &[(Ray, f32)],
        expect: &[Option<(f32, [u32; 4])>],
        keep: impl Fn(&Ray, &PlantHit) -> bool + Copy,
    ) {
        let (list, limits): (Vec<Ray>, Vec<f32>) = rays.iter().copied().unzip();
        let order: Vec<u32> = (0..list.len() as u32).collect();
        let mut batch = vec![None; list.len()];
        field.intersect_batch(&list, &limits, &mut batch, keep);
        let mut blocked = vec![false; list.len()];
        field.occluded_batch(&list, &limits, &order, &mut blocked, keep);
        for (k, ((ray, t_max), expect)) in rays.iter().zip(expect).enumerate() {
            let expect = *expect;
            assert_eq!(
                field.intersect(ray, *t_max, keep).as_ref().map(key),
                expect,
                "ray {k}"
            );
            assert_eq!(batch[k].as_ref().map(key), expect, "ray {k} in an octet");
            assert_eq!(
                field.occluded(ray, *t_max, keep),
                expect.is_some(),
                "ray {k}"
            );
            assert_eq!(blocked[k], expect.is_some(), "ray {k} in an octet");
        }
    }

    /// Keeps every hit.
    fn every(_: &Ray, _: &PlantHit) -> bool {
        true
    }

    fn key(h: &PlantHit) -> (f32, [u32; 4]) {
        (h.hit.t, [h.species, h.spot, h.part, h.hit.triangle])
    }

    /// The plant a ray finds through the blocks is the one found by
    /// testing every placed plant; the octet traversals and the
    /// occlusion queries agree with it, and so does a field cut in
    /// coarser pieces (a budget of no leaves makes every piece a block).
    #[test]
    fn the_field_finds_the_plants_brute_force_finds() {
        let (all, stands, fine) = field(LEAF_BUDGET);
        let (_, _, coarse) = field(0);
        assert_eq!(
            fine.plant_count(),
            stands.iter().map(Stand::len).sum::<usize>()
        );
        assert!(
            stands[0].len() > 15 && stands[1].len() > 400,
            "{}",
            stands[0].len()
        );
        assert!(fine.kinds.iter().all(|k| k.side == PIECE));
        assert!(coarse.kinds.iter().all(|k| k.side == BLOCK));
        let rays = rays();
        let (list, limits): (Vec<Ray>, Vec<f32>) = rays.iter().copied().unzip();
        let mut batch = vec![None; list.len()];
        fine.intersect_batch(&list, &limits, &mut batch, every);
        let order: Vec<u32> = (0..list.len() as u32).collect();
        let mut blocked = vec![false; list.len()];
        fine.occluded_batch(&list, &limits, &order, &mut blocked, every);
        let mut hits = 0;
        for (k, (ray, t_max)) in rays.iter().enumerate() {
            let expect = brute(&all, &stands, ray, *t_max);
            for f in [&fine, &coarse] {
                assert_eq!(
                    f.intersect(ray, *t_max, every).as_ref().map(key),
                    expect,
                    "ray {k}"
                );
                assert_eq!(f.occluded(ray, *t_max, every), expect.is_some(), "ray {k}");
            }
            assert_eq!(batch[k].as_ref().map(key), expect, "ray {k} in an octet");
            assert_eq!(blocked[k], expect.is_some(), "ray {k} in an octet");
            hits += expect.is_some() as usize;
        }
        assert!(hits > 150, "{hits} of {} rays meet a plant", rays.len());
    }

    /// Pruned leaves: seen from afar (a footprint wider than any leaf at
    /// the deepest level) every plant is traced with its deepest level,
    /// and a hit names the full leaf's triangle; seen with no footprint,
    /// with every leaf. The octet traversals agree.
    #[test]
    fn far_plants_are_traced_with_their_pruned_leaves() {
        let far = Footprint {
            width: 100.0,
            spread: 0.0,
        };
        let near = Footprint {
            width: 0.0,
            spread: 0.0,
        };
        let rays = rays();
        for (prune, deepest) in [(far, Some(())), (near, None)] {
            let (all, stands, field) = field_pruned(LEAF_BUDGET, Some(prune));
            assert!(all
                .iter()
                .all(|p| p.variants.iter().all(|v| !v.pruned.is_empty())));
            let expect: Vec<_> = rays
                .iter()
                .map(|(ray, t_max)| brute_at(&all, &stands, ray, *t_max, deepest))
                .collect();
            queries_agree(&field, &rays, &expect, every);
            let differ = rays
                .iter()
                .zip(&expect)
                .filter(|((ray, t_max), e)| **e != brute(&all, &stands, ray, *t_max))
                .count();
            // Pruning changes what some rays meet, and only pruning does.
            assert_eq!(differ > 20, deepest.is_some(), "{differ} rays differ");
        }
    }

    /// Cut-out leaves: a hit on them counts only where the queries' test
    /// keeps it (here, the even triangles), one ray at a time and in
    /// octets; hits on bark are never put to the test.
    #[test]
    fn cut_out_leaves_count_where_kept() {
        let (all, stands, mut field) = field(LEAF_BUDGET);
        for kind in &mut field.kinds {
            kind.cut = true;
        }
        let asked_of_bark = std::sync::atomic::AtomicBool::new(false);
        let even = |_: &Ray, h: &PlantHit| {
            if h.part != LEAVES as u32 {
                asked_of_bark.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            h.hit.triangle.is_multiple_of(2)
        };
        let rays = rays();
        // The leaves' even triangles alone, brute force: triangle j of the
        // copy is 2j of the leaves.
        let halved: Vec<Vec<crate::mesh::TriangleMesh>> = all
            .iter()
            .map(|p| {
                p.variants
                    .iter()
                    .map(|v| crate::mesh::TriangleMesh {
                        indices: v.leaves.indices.iter().copied().step_by(2).collect(),
                        ..v.leaves.clone()
                    })
                    .collect()
            })
            .collect();
        let mut expected = Vec::new();
        for (ray, t_max) in &rays {
            let mut expect: Option<(f32, [u32; 4])> = None;
            for (s, (p, stand)) in all.iter().zip(&stands).enumerate() {
                for q in stand.placed() {
                    let m = q.place.inverse();
                    let local =
                        Ray::new(m.transform_point3(ray.origin), m.transform_vector3(ray.dir));
                    let v = &p.variants[q.variant as usize];
                    let leaves = &halved[s][q.variant as usize];
                    for (part, mesh) in [&v.bark, leaves, &v.flowers].into_iter().enumerate() {
                        if let Some((t, tri)) = brute_closest(mesh, &local, *t_max) {
                            let tri = if part == LEAVES { 2 * tri } else { tri };
                            let key = [s as u32, q.spot, part as u32, tri];
                            if expect.is_none_or(|(bt, bk)| t < bt || (t == bt && key < bk)) {
                                expect = Some((t, key));
                            }
                        }
                    }
                }
            }
            expected.push(expect);
        }
        queries_agree(&field, &rays, &expected, even);
        let passed = rays
            .iter()
            .zip(&expected)
            .filter(|((ray, t_max), e)| **e != brute(&all, &stands, ray, *t_max))
            .count();
        assert!(passed > 20, "{passed} rays pass an odd triangle");
        assert!(!asked_of_bark.into_inner());
    }

    /// Between the full leaves and the deepest level, a plant's level
    /// grows with the footprint, one level per doubling of the leaves'
    /// area, dithered from plant to plant: at footprints k and 2k, the
    /// mean level over many plants rises by 2 (the levels in between
    /// taken by a share of the plants that follows the log).
    #[test]
    fn the_level_follows_the_footprint() {
        let (_, _, field) = field_pruned(
            LEAF_BUDGET,
            Some(Footprint {
                width: 1.0,
                spread: 0.0,
            }),
        );
        let kind = &field.kinds[0];
        let length = kind.variants[0].leaf_length;
        let mean = |width: f32| {
            let mut field = field.clone();
            field.kinds[0].prune = Some(Footprint { width, spread: 0.0 });
            let kind = &field.kinds[0];
            let (mut sum, mut n) = (0.0, 0);
            for block in 0..kind.stand.masks.len() as u32 {
                for piece in 0..(BLOCK / kind.side).pow(2) {
                    for p in kind.standing(block, piece) {
                        // As if every plant were the first variant at scale 1.
                        let p = Standing {
                            variant: &kind.variants[0],
                            scale: 1.0,
                            ..p
                        };
                        sum += f64::from(field.level(0, &p, Vec3::ZERO));
                        n += 1;
                    }
                }
            }
            assert!(n > 15);
            sum / n as f64
        };
        assert_eq!(mean(0.5 * length), 0.0);
        assert_eq!(mean(length), 0.0);
        // 2^1.5 leaves' area: level 1, or 2 for a share of the plants
        // that is the mantissa's fraction (√2 − 1, standing in for
        // log2's 0.5).
        let m = mean(2f32.powf(0.75) * length);
        assert!((m - std::f64::consts::SQRT_2).abs() < 0.15, "{m}");
        assert_eq!(mean(2.0 * length), 2.0);
        let deepest = crate::plant::prune::LEVELS as f64;
        assert_eq!(mean(1000.0 * length), deepest);
    }

    /// The field built on one thread is the field built on two: the same
    /// leaves in the same order, so the same hits.
    #[test]
    fn the_field_is_the_same_on_any_thread_count() {
        let build = || {
            let (_, _, f) = field(LEAF_BUDGET);
            let leaves: Vec<(u32, u32, u32)> = f
                .order
                .iter()
                .map(|l| (l.species, l.block, l.piece))
                .collect();
            let hits: Vec<Option<(f32, [u32; 4])>> = rays()
                .iter()
                .map(|(r, t)| f.intersect(r, *t, every).as_ref().map(key))
                .collect();
            (leaves, hits)
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(build);
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(build);
        assert_eq!(one, two);
    }
}
