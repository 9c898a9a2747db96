//! Bounding volume hierarchy over boxes, and the triangle BVH built on it.
//!
//! Build: binned surface-area heuristic (12 bins over the centroid bounds,
//! on each of the three axes), children stored next to each other in
//! one flat `Vec<Node>`. [`Tree`] holds the nodes over any primitives given
//! by their boxes (triangles here, instances in the top level); [`Bvh`]
//! adds the triangles, each leaf's (at most four) as one [`Packet`] tested
//! in SIMD lanes, with their mesh indices beside it, so that a leaf reads
//! them without an index indirection;
//! its SAH counts a leaf as one packet test ([`LeafCost::PerPacket`]), which
//! fills the leaves. Traversal: near child first with a
//! fixed-size stack for the closest hit; any hit for shadow rays returns
//! at the first primitive found.

use std::ops::Range;

use arrayvec::ArrayVec;
use glam::Vec3;

use super::octet::{rays_of, OCTET};
use super::packet::Packet;
#[cfg(test)]
use super::ray::intersect_triangle;
use super::ray::{Aabb, Ray};
use super::wide::WideTree;
use crate::mesh::TriangleMesh;

/// A BVH node: 32 bytes. Interior nodes have `count == 0` and children at
/// `first` and `first + 1`; leaves hold primitives `first..first + count`
/// in leaf order.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Node {
    min: [f32; 3],
    first: u32,
    max: [f32; 3],
    count: u32,
}

impl Node {
    /// The node's box.
    #[inline]
    pub(crate) fn bounds(&self) -> Aabb {
        Aabb {
            min: Vec3::from_array(self.min),
            max: Vec3::from_array(self.max),
        }
    }

    /// Whether this is the root of a tree over nothing.
    pub(crate) fn is_empty_root(&self) -> bool {
        self.count == 0 && self.first == 0
    }

    /// Whether the node has children (rather than primitives).
    pub(crate) fn is_interior(&self) -> bool {
        self.count == 0
    }

    /// Indices of an interior node's two children.
    pub(crate) fn children(&self) -> (usize, usize) {
        (self.first as usize, self.first as usize + 1)
    }

    /// A leaf's first primitive (in leaf order) and count.
    pub(crate) fn leaf(&self) -> (u32, u32) {
        (self.first, self.count)
    }
}

/// The closest intersection found along a ray.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Ray parameter of the hit.
    pub t: f32,
    /// Barycentric weight of the triangle's second vertex.
    pub u: f32,
    /// Barycentric weight of the triangle's third vertex.
    pub v: f32,
    /// Index of the triangle in the mesh the BVH was built from.
    pub triangle: u32,
}

impl Hit {
    /// Whether this hit should replace `best`: nearer, or as near and on
    /// a lower triangle index. The tie rule makes the closest hit one
    /// well-defined triangle whatever order the triangles are tested in, so
    /// every structure over the same triangles reports the same hit.
    #[inline]
    pub fn beats(&self, best: &Option<Hit>) -> bool {
        match best {
            None => true,
            Some(b) => self.t < b.t || (self.t == b.t && self.triangle < b.triangle),
        }
    }
}

/// A hierarchy of boxes over primitives in leaf order: built as a binary
/// SAH tree of 32-byte nodes, traced in its 8-wide form.
#[derive(Debug, Clone)]
pub struct Tree {
    wide: WideTree,
    /// Bounds of everything.
    bounds: Aabb,
}

/// A BVH over the triangles of one mesh.
#[derive(Debug)]
pub struct Bvh {
    /// The hierarchy; a leaf's primitives are slots `4p..4p + count`, of
    /// leaf `p`.
    tree: Tree,
    /// Each leaf's triangles, tested four at a time, with their indices.
    leaves: Vec<Leaf>,
}

/// A leaf's triangles and the mesh index of each (`u32::MAX` past the
/// leaf's count), side by side: a ray that enters a leaf prefetches it
/// whole, and a hit needs its triangle's index at once (for the tie rule,
/// [`Hit::beats`]). Kept in an array of their own, the indices cost a
/// cache miss per hit on large meshes: on the 4097² workload mesh a
/// quarter of the camera walk's leaf-test samples waited on that load.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Leaf {
    packet: Packet,
    ids: [u32; MAX_LEAF],
}

impl Clone for Bvh {
    /// A copy whose tree prefetches the copy's leaves.
    fn clone(&self) -> Bvh {
        let mut copy = Bvh {
            tree: self.tree.clone(),
            leaves: self.leaves.clone(),
        };
        copy.tree.wide.set_leaf_memory(&copy.leaves, MAX_LEAF);
        copy
    }
}

const BINS: usize = 12;
const MAX_LEAF: usize = 4;
/// SAH cost of one node traversal relative to one primitive test.
const TRAVERSAL_COST: f32 = 1.0;

/// What testing a leaf costs the surface-area heuristic, in node
/// traversals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LeafCost {
    /// One test per primitive (instances in the top level).
    PerPrimitive,
    /// One test per leaf of up to `MAX_LEAF` (four) primitives (triangles,
    /// tested as one packet): the build fills leaves.
    PerPacket,
}

impl LeafCost {
    fn of(self, count: usize) -> f32 {
        match self {
            LeafCost::PerPrimitive => count as f32,
            LeafCost::PerPacket => count.div_ceil(MAX_LEAF) as f32,
        }
    }
}

struct BuildPrim {
    bounds: Aabb,
    centroid: Vec3,
    id: u32,
}

impl Tree {
    /// Builds the hierarchy over primitives with the given boxes; returns
    /// it with the primitive index of each leaf-order slot.
    pub fn build(bounds: &[Aabb], leaf: LeafCost) -> (Tree, Vec<u32>) {
        let mut prims = build_prims(bounds);
        let nodes = binary(&mut prims, leaf);
        let tree = Tree {
            wide: WideTree::collapse(&nodes),
            bounds: if prims.is_empty() {
                Aabb::EMPTY
            } else {
                nodes[0].bounds()
            },
        };
        (tree, prims.iter().map(|p| p.id).collect())
    }

    /// The wide form.
    #[cfg(test)]
    pub(crate) fn wide(&self) -> &WideTree {
        &self.wide
    }

    /// Number of (8-wide) nodes.
    pub fn node_count(&self) -> usize {
        self.wide.node_count()
    }

    /// Bytes held by the nodes.
    pub fn memory_bytes(&self) -> usize {
        self.wide.memory_bytes()
    }

    /// Bounds of all primitives (empty for none).
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Visits the leaves that `ray` reaches before the closest hit, near
    /// child first. `leaf` tests the primitives of a leaf (a range in leaf
    /// order) and lowers `t_best` when it finds a nearer hit; nodes beyond
    /// `t_best` are skipped. Ties (a node starting exactly at `t_best`) are
    /// still visited, so that the tie rule of [`Hit::beats`] sees them.
    #[inline(always)]
    pub fn closest(&self, ray: &Ray, t_max: f32, leaf: impl FnMut(Range<usize>, &mut f32)) {
        self.wide.closest(ray, t_max, leaf)
    }

    /// Whether `leaf` reports a hit in any leaf that `ray` reaches within
    /// `t_max`; stops at the first.
    #[inline(always)]
    pub fn any(&self, ray: &Ray, t_max: f32, leaf: impl FnMut(Range<usize>) -> bool) -> bool {
        self.wide.any(ray, t_max, leaf)
    }

    /// [`Tree::closest`] for up to [`OCTET`] rays at once; see
    /// [`WideTree::closest_octet`].
    #[inline(always)]
    pub fn closest_octet(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        leaf: impl FnMut(u32, Range<usize>, &mut [f32; OCTET]),
    ) {
        self.wide.closest_octet(rays, t_max, leaf)
    }
}

/// The box of each triangle of `mesh`.
fn triangle_bounds(mesh: &TriangleMesh) -> Vec<Aabb> {
    mesh.indices
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| mesh.positions[v as usize]);
            Aabb::EMPTY.grow(a).grow(b).grow(c)
        })
        .collect()
}

/// Build records of primitives with the given boxes.
fn build_prims(bounds: &[Aabb]) -> Vec<BuildPrim> {
    bounds
        .iter()
        .enumerate()
        .map(|(id, &bounds)| BuildPrim {
            bounds,
            centroid: (bounds.min + bounds.max) * 0.5,
            id: id as u32,
        })
        .collect()
}

/// The binary SAH tree over `prims` (reordered into leaf order), root
/// first; with no primitives, an empty leaf.
fn binary(prims: &mut [BuildPrim], leaf: LeafCost) -> Vec<Node> {
    if prims.is_empty() {
        vec![EMPTY_NODE]
    } else {
        build_subtree(prims, 0, leaf)
    }
}

impl Bvh {
    /// Builds the hierarchy over all triangles of `mesh`.
    pub fn build(mesh: &TriangleMesh) -> Bvh {
        let bounds = triangle_bounds(mesh);
        let (mut tree, order) = Tree::build(&bounds, LeafCost::PerPacket);
        // One packet per leaf, in the order the leaves lie in the tree.
        let mut leaves = Vec::new();
        tree.wide.renumber_leaves(|first, count| {
            let leaf = &order[first as usize..(first + count) as usize];
            let tris: ArrayVec<[Vec3; 3], MAX_LEAF> = leaf
                .iter()
                .map(|&id| mesh.indices[id as usize].map(|v| mesh.positions[v as usize]))
                .collect();
            let mut ids = [u32::MAX; MAX_LEAF];
            ids[..leaf.len()].copy_from_slice(leaf);
            leaves.push(Leaf {
                packet: Packet::new(&tris),
                ids,
            });
            (MAX_LEAF * (leaves.len() - 1)) as u32
        });
        tree.wide.set_leaf_memory(&leaves, MAX_LEAF);
        Bvh { tree, leaves }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.tree.node_count()
    }

    /// Bytes held by the nodes and reordered triangles.
    pub fn memory_bytes(&self) -> usize {
        self.tree.memory_bytes() + std::mem::size_of_val(self.leaves.as_slice())
    }

    /// The bounds of all triangles.
    pub fn bounds(&self) -> Aabb {
        self.tree.bounds()
    }

    /// The closest hit along `ray` with t in (0, t_max]; of hits at the same
    /// t, the lowest triangle index.
    #[inline]
    pub fn intersect(&self, ray: &Ray, t_max: f32) -> Option<Hit> {
        let mut best: Option<Hit> = None;
        self.tree.closest(ray, t_max, |slots, t_best| {
            self.closest_in_leaf(ray, slots, t_best, &mut best)
        });
        best
    }

    /// [`Bvh::intersect`] for each ray of a batch (`hits[k]` for `rays[k]`
    /// within `t_max[k]`), bit for bit, eight neighbouring rays at a time
    /// down the tree (see [`super::octet`]). Coherent rays (a patch of
    /// camera rays, their shadow rays) go faster so.
    pub fn intersect_batch(&self, rays: &[Ray], t_max: &[f32], hits: &mut [Option<Hit>]) {
        assert!(t_max.len() == rays.len() && hits.len() == rays.len());
        for ((rays, t_max), hits) in rays
            .chunks(OCTET)
            .zip(t_max.chunks(OCTET))
            .zip(hits.chunks_mut(OCTET))
        {
            hits.fill(None);
            self.tree
                .wide
                .closest_octet(rays, t_max, |mask, slots, t_best| {
                    for k in rays_of(mask) {
                        self.closest_in_leaf(&rays[k], slots.clone(), &mut t_best[k], &mut hits[k]);
                    }
                });
        }
    }

    /// Tests `ray` against the triangles in packet slots `slots`, and makes
    /// the closest of them within `t_best` the new `best`.
    #[inline(always)]
    fn closest_in_leaf(
        &self,
        ray: &Ray,
        slots: Range<usize>,
        t_best: &mut f32,
        best: &mut Option<Hit>,
    ) {
        let leaf = &self.leaves[slots.start / MAX_LEAF];
        let found = leaf.packet.hits(ray, *t_best, slots.len());
        // Lane by lane, as testing the leaf's triangles one at a time
        // with t_max lowered after each hit would take them.
        let mut lanes = found.mask;
        while lanes != 0 {
            let l = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let hit = Hit {
                t: found.t[l],
                u: found.u[l],
                v: found.v[l],
                triangle: leaf.ids[l],
            };
            if hit.t <= *t_best && hit.beats(best) {
                *t_best = hit.t;
                *best = Some(hit);
            }
        }
    }

    /// Whether anything lies along `ray` with t in (0, t_max]: stops at the
    /// first triangle found.
    #[inline]
    pub fn occluded(&self, ray: &Ray, t_max: f32) -> bool {
        self.tree
            .any(ray, t_max, |slots| self.blocks(ray, slots, t_max))
    }

    /// [`Bvh::occluded`] for each ray of a batch (`blocked[k]` for
    /// `rays[k]` within `t_max[k]`), eight rays at a time as
    /// [`Bvh::intersect_batch`].
    pub fn occluded_batch(&self, rays: &[Ray], t_max: &[f32], blocked: &mut [bool]) {
        assert!(t_max.len() == rays.len() && blocked.len() == rays.len());
        for ((rays, t_max), blocked) in rays
            .chunks(OCTET)
            .zip(t_max.chunks(OCTET))
            .zip(blocked.chunks_mut(OCTET))
        {
            self.tree.wide.any_octet(
                rays,
                t_max,
                |mask, slots| {
                    rays_of(mask)
                        .filter(|&k| self.blocks(&rays[k], slots.clone(), t_max[k]))
                        .fold(0, |hit, k| hit | 1 << k)
                },
                blocked,
            );
        }
    }

    /// Whether `ray` hits a triangle in packet slots `slots` within `t_max`.
    #[inline(always)]
    fn blocks(&self, ray: &Ray, slots: Range<usize>, t_max: f32) -> bool {
        self.leaves[slots.start / MAX_LEAF]
            .packet
            .hits(ray, t_max, slots.len())
            .mask
            != 0
    }
}

const EMPTY_NODE: Node = Node {
    min: [0.0; 3],
    first: 0,
    max: [0.0; 3],
    count: 0,
};

/// Subtrees with fewer triangles than this are built on one thread.
const PARALLEL_MIN: usize = 16 * 1024;

/// Builds the subtree over `prims` (which start at `offset` in leaf order)
/// as its own node array, root first. Large subtrees build their two halves
/// in parallel and concatenate them; the tree does not depend on the
/// scheduling, so the result is the same on any thread count.
fn build_subtree(prims: &mut [BuildPrim], offset: usize, leaf: LeafCost) -> Vec<Node> {
    if prims.len() < PARALLEL_MIN {
        let mut nodes = Vec::with_capacity(prims.len() / 2 + 1);
        nodes.push(EMPTY_NODE);
        build_node(&mut nodes, 0, prims, offset, leaf);
        return nodes;
    }
    let (bounds, split) = split_node(prims, leaf);
    let mut root = EMPTY_NODE;
    root.min = bounds.min.to_array();
    root.max = bounds.max.to_array();
    let Some(mid) = split else {
        root.first = offset as u32;
        root.count = prims.len() as u32;
        return vec![root];
    };
    let (lo, hi) = prims.split_at_mut(mid);
    let (left, right) = rayon::join(
        || build_subtree(lo, offset, leaf),
        || build_subtree(hi, offset + mid, leaf),
    );
    // Layout: [root, left root, right root, rest of left, rest of right].
    // A child pair at local index c (always >= 1) moves to base + c - 1.
    let mut nodes = Vec::with_capacity(1 + left.len() + right.len());
    root.first = 1;
    nodes.push(root);
    let base_left = 3;
    let base_right = 3 + left.len() - 1;
    let relocate = |mut n: Node, base: usize| {
        if n.count == 0 {
            n.first = (base + n.first as usize - 1) as u32;
        }
        n
    };
    nodes.push(relocate(left[0], base_left));
    nodes.push(relocate(right[0], base_right));
    nodes.extend(left[1..].iter().map(|&n| relocate(n, base_left)));
    nodes.extend(right[1..].iter().map(|&n| relocate(n, base_right)));
    nodes
}

/// The bounds of `prims` and, unless they should stay one leaf, the index
/// at which they were partitioned into two children.
fn split_node(prims: &mut [BuildPrim], leaf: LeafCost) -> (Aabb, Option<usize>) {
    let bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.union(p.bounds));
    if prims.len() <= 1 {
        return (bounds, None);
    }
    let centroids = prims.iter().fold(Aabb::EMPTY, |b, p| b.grow(p.centroid));
    let mid = match best_split(prims, &bounds, &centroids, leaf) {
        Some((axis, pos, cost)) if cost < leaf.of(prims.len()) || prims.len() > MAX_LEAF => {
            let mid = partition_in_place(prims, |p| p.centroid[axis] < pos);
            if mid == 0 || mid == prims.len() {
                median_split(prims, &centroids)
            } else {
                mid
            }
        }
        Some(_) => return (bounds, None),
        None if prims.len() <= MAX_LEAF => return (bounds, None),
        None => median_split(prims, &centroids),
    };
    (bounds, Some(mid))
}

/// Fills `nodes[index]` for `prims` (which start at `offset` in leaf order),
/// recursing into its children.
fn build_node(
    nodes: &mut Vec<Node>,
    index: usize,
    prims: &mut [BuildPrim],
    offset: usize,
    leaf: LeafCost,
) {
    let (bounds, split) = split_node(prims, leaf);
    nodes[index].min = bounds.min.to_array();
    nodes[index].max = bounds.max.to_array();
    let Some(mid) = split else {
        nodes[index].first = offset as u32;
        nodes[index].count = prims.len() as u32;
        return;
    };
    let left = nodes.len();
    nodes.push(EMPTY_NODE);
    nodes.push(EMPTY_NODE);
    nodes[index].first = left as u32;
    nodes[index].count = 0;
    let (lo, hi) = prims.split_at_mut(mid);
    build_node(nodes, left, lo, offset, leaf);
    build_node(nodes, left + 1, hi, offset + mid, leaf);
}

/// The cheapest binned SAH split over all three axes: (axis, position, cost
/// in triangle tests relative to the parent's area), or None when all
/// centroids coincide.
fn best_split(
    prims: &[BuildPrim],
    bounds: &Aabb,
    centroids: &Aabb,
    leaf: LeafCost,
) -> Option<(usize, f32, f32)> {
    let mut best: Option<(usize, f32, f32)> = None;
    let parent_area = bounds.half_area().max(f32::MIN_POSITIVE);
    for axis in 0..3 {
        let lo = centroids.min[axis];
        let extent = centroids.max[axis] - lo;
        if extent <= 0.0 {
            continue;
        }
        let scale = BINS as f32 / extent;
        let mut bin_bounds = [Aabb::EMPTY; BINS];
        let mut bin_counts = [0usize; BINS];
        for p in prims {
            let b = (((p.centroid[axis] - lo) * scale) as usize).min(BINS - 1);
            bin_bounds[b] = bin_bounds[b].union(p.bounds);
            bin_counts[b] += 1;
        }
        // Sweep from the right to get suffix areas and counts.
        let mut right_area = [0.0f32; BINS];
        let mut right_count = [0usize; BINS];
        let mut acc = Aabb::EMPTY;
        let mut count = 0;
        for b in (1..BINS).rev() {
            acc = acc.union(bin_bounds[b]);
            count += bin_counts[b];
            right_area[b] = acc.half_area();
            right_count[b] = count;
        }
        let mut left = Aabb::EMPTY;
        let mut left_count = 0;
        for b in 1..BINS {
            left = left.union(bin_bounds[b - 1]);
            left_count += bin_counts[b - 1];
            if left_count == 0 || right_count[b] == 0 {
                continue;
            }
            let cost = TRAVERSAL_COST
                + (left.half_area() * leaf.of(left_count)
                    + right_area[b] * leaf.of(right_count[b]))
                    / parent_area;
            if best.is_none_or(|(_, _, c)| cost < c) {
                best = Some((axis, lo + b as f32 / scale, cost));
            }
        }
    }
    best
}

/// Splits at the median centroid along the longest centroid axis.
fn median_split(prims: &mut [BuildPrim], centroids: &Aabb) -> usize {
    let d = centroids.max - centroids.min;
    let axis = if d.x >= d.y && d.x >= d.z {
        0
    } else if d.y >= d.z {
        1
    } else {
        2
    };
    let mid = prims.len() / 2;
    prims.select_nth_unstable_by(mid, |a, b| a.centroid[axis].total_cmp(&b.centroid[axis]));
    mid
}

/// Moves the elements satisfying `pred` to the front; returns their count.
fn partition_in_place<T>(v: &mut [T], pred: impl Fn(&T) -> bool) -> usize {
    let mut i = 0;
    for j in 0..v.len() {
        if pred(&v[j]) {
            v.swap(i, j);
            i += 1;
        }
    }
    i
}

/// The closest hit by testing every triangle: (t, triangle), the lowest
/// index on ties.
#[cfg(test)]
pub(crate) fn brute_closest(mesh: &TriangleMesh, ray: &Ray, t_max: f32) -> Option<(f32, u32)> {
    let mut best: Option<(f32, u32)> = None;
    for (id, t) in mesh.indices.iter().enumerate() {
        let [a, b, c] = t.map(|v| mesh.positions[v as usize]);
        if let Some((t, _, _)) = intersect_triangle(ray, a, b, c, t_max) {
            if t <= t_max && best.is_none_or(|b| t < b.0) {
                best = Some((t, id as u32));
            }
        }
    }
    best
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn node_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Node>(), 32);
    }

    pub(crate) fn soup(coords: &[f32]) -> TriangleMesh {
        let positions: Vec<Vec3> = coords
            .chunks_exact(3)
            .map(|c| Vec3::new(c[0], c[1], c[2]))
            .collect();
        let n = positions.len() / 3;
        TriangleMesh {
            positions,
            normals: vec![],
            indices: (0..n as u32)
                .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
                .collect(),
        }
    }

    pub(crate) fn ray_strategy() -> impl Strategy<Value = Ray> {
        (
            prop::array::uniform3(-12.0f32..12.0),
            prop::array::uniform3(-1.0f32..1.0),
        )
            .prop_filter("non-zero direction", |(_, d)| {
                Vec3::from_array(*d).length() > 1e-3
            })
            .prop_map(|(o, d)| Ray::new(Vec3::from_array(o), Vec3::from_array(d).normalize()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn bvh_matches_brute_force(
            coords in prop::collection::vec(-10.0f32..10.0, 9..900),
            rays in prop::collection::vec(ray_strategy(), 64),
            t_max in prop_oneof![Just(f32::INFINITY), 1.0f32..30.0],
        ) {
            let coords = &coords[..coords.len() / 9 * 9];
            let mesh = soup(coords);
            let bvh = Bvh::build(&mesh);
            for ray in &rays {
                let expect = brute_closest(&mesh, ray, t_max);
                let got = bvh.intersect(ray, t_max).map(|h| (h.t, h.triangle));
                match (expect, got) {
                    (None, None) => {}
                    (Some(e), Some(g)) => prop_assert_eq!(e, g),
                    other => prop_assert!(false, "closest mismatch: {:?}", other),
                }
                prop_assert_eq!(bvh.occluded(ray, t_max), expect.is_some());
            }
        }
    }

    #[test]
    fn terrain_grid_matches_brute_force() {
        let mesh = crate::terrain::TerrainGrid::diamond_square(40, 30, 8.0, 3, [20.0, 15.0])
            .to_mesh(false);
        let bvh = Bvh::build(&mesh);
        let mut hits = 0;
        for k in 0..2000u64 {
            let r = |s| crate::hash::unit_f32(k, s, 0);
            let origin = Vec3::new(r(1) * 30.0 - 15.0, 10.0 + r(2) * 10.0, r(3) * 30.0 - 15.0);
            let dir = Vec3::new(r(4) - 0.5, -r(5), r(6) - 0.5).normalize();
            let ray = Ray::new(origin, dir);
            let expect = brute_closest(&mesh, &ray, f32::INFINITY);
            let got = bvh
                .intersect(&ray, f32::INFINITY)
                .map(|h| (h.t, h.triangle));
            assert_eq!(expect, got, "ray {k}");
            assert_eq!(bvh.occluded(&ray, f32::INFINITY), expect.is_some());
            hits += expect.is_some() as usize;
        }
        assert!(hits > 300, "many test rays hit ({hits})");
    }

    /// The parallel top of the build must give the same tree as building
    /// everything on one thread.
    #[test]
    fn parallel_build_equals_single_threaded() {
        let mesh = crate::terrain::TerrainGrid::diamond_square(200, 200, 8.0, 5, [20.0, 20.0])
            .to_mesh(false);
        assert!(mesh.indices.len() > 4 * PARALLEL_MIN);
        let bounds = triangle_bounds(&mesh);
        let build = || {
            let mut prims = build_prims(&bounds);
            let nodes = binary(&mut prims, LeafCost::PerPacket);
            (nodes, prims.iter().map(|p| p.id).collect::<Vec<u32>>())
        };
        let (parallel, parallel_ids) = build();
        let (single, single_ids) = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(build);
        assert_eq!(parallel_ids, single_ids);
        let key = |n: &Node| {
            (
                n.min.map(f32::to_bits),
                n.max.map(f32::to_bits),
                n.first,
                n.count,
            )
        };
        assert!(parallel.iter().map(key).eq(single.iter().map(key)));
        // Every node is reachable exactly once and leaves cover every triangle once.
        let mut seen = vec![0u8; mesh.indices.len()];
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            let n = parallel[i];
            if n.count > 0 {
                for k in n.first..n.first + n.count {
                    seen[k as usize] += 1;
                }
            } else {
                stack.push(n.first as usize);
                stack.push(n.first as usize + 1);
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        // The wide form keeps exactly the binary tree's leaves.
        let wide = super::WideTree::collapse(&parallel);
        let mut wide_leaves = wide.leaves();
        let mut bin_leaves: Vec<(u32, u32)> = parallel
            .iter()
            .filter(|n| n.count > 0)
            .map(|n| (n.first, n.count))
            .collect();
        wide_leaves.sort_unstable();
        bin_leaves.sort_unstable();
        assert_eq!(wide_leaves, bin_leaves);
        assert!(wide.node_count() * 3 <= parallel.len());
    }

    /// Counting a leaf as one packet test gives fuller leaves (fewer of
    /// them) than counting each triangle, and never more than four
    /// triangles a leaf.
    #[test]
    fn packet_leaf_cost_fills_leaves() {
        let mesh = crate::terrain::TerrainGrid::diamond_square(60, 60, 8.0, 2, [20.0, 20.0])
            .to_mesh(false);
        let leaves = |cost| {
            let (tree, _) = Tree::build(&triangle_bounds(&mesh), cost);
            tree.wide.leaves()
        };
        let (per_triangle, per_packet) =
            (leaves(LeafCost::PerPrimitive), leaves(LeafCost::PerPacket));
        for leaves in [&per_triangle, &per_packet] {
            assert!(leaves.iter().all(|&(_, n)| (1..=4).contains(&n)));
            let total: u32 = leaves.iter().map(|&(_, n)| n).sum();
            assert_eq!(total as usize, mesh.indices.len());
        }
        let mean = |l: &[(u32, u32)]| mesh.indices.len() as f32 / l.len() as f32;
        assert!(
            mean(&per_packet) > 3.0 && mean(&per_triangle) < 2.5,
            "{} against {}",
            mean(&per_packet),
            mean(&per_triangle)
        );
    }

    /// Degenerate input: zero-area triangles (a point, a line) among good
    /// ones build and trace without panics, and are never hit.
    #[test]
    fn degenerate_triangles_are_never_hit() {
        let mesh = soup(&[
            0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, // a point
            -1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.5, 0.0, 0.0, // a line
            -1.0, 0.0, -1.0, -1.0, 0.0, 1.0, 1.0, 0.0, 0.0, // a real triangle
        ]);
        let bvh = Bvh::build(&mesh);
        let down = Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::NEG_Y);
        assert_eq!(
            bvh.intersect(&down, f32::INFINITY).map(|h| h.triangle),
            Some(2)
        );
        // Along the line's own direction, in its plane: parallel to every face.
        let along = Ray::new(Vec3::new(-5.0, 0.0, 0.0), Vec3::X);
        assert!(bvh.intersect(&along, f32::INFINITY).is_none());
        // A zero direction has no hits and no NaN trouble.
        let zero = Ray::new(Vec3::new(0.0, 5.0, 0.0), Vec3::ZERO);
        assert!(bvh.intersect(&zero, f32::INFINITY).is_none());
        assert!(!bvh.occluded(&zero, f32::INFINITY));
    }

    #[test]
    fn empty_mesh_misses() {
        let bvh = Bvh::build(&TriangleMesh::default());
        let ray = Ray::new(Vec3::ZERO, Vec3::X);
        assert!(bvh.intersect(&ray, f32::INFINITY).is_none());
        assert!(!bvh.occluded(&ray, f32::INFINITY));
    }
}
