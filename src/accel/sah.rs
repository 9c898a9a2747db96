//! The binary SAH build: a bounding volume hierarchy over boxes, built
//! with the binned surface-area heuristic (`BINS` bins over the centroid
//! bounds, on each of the three axes), children stored next to each other
//! in one flat `Vec<Node>`. [`super::wide::WideTree`] collapses it into the
//! 8-wide form that is traced; this module knows nothing of rays.

use glam::Vec3;

use crate::ray::Aabb;

/// A BVH node: 32 bytes. Interior nodes have `count == 0` and children at
/// `first` and `first + 1`; leaves hold primitives `first..first + count`
/// in leaf order.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Node {
    pub(crate) min: [f32; 3],
    pub(crate) first: u32,
    pub(crate) max: [f32; 3],
    pub(crate) count: u32,
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

/// Bins per axis of the SAH's split search: 32, as Embree's binned builder
/// uses. Against 12, the workload mesh's bounce rays ran 2 % faster on two
/// threads (three alternating rounds) for a build a fifth longer.
pub(crate) const BINS: usize = 32;
pub(crate) const MAX_LEAF: usize = 4;
/// SAH cost of one node traversal relative to one primitive test.
pub(crate) const TRAVERSAL_COST: f32 = 1.0;
/// SAH cost of testing one instance, in node traversals.
pub(crate) const INSTANCE_COST: f32 = 4.0;

/// What testing a leaf costs the surface-area heuristic, in node
/// traversals.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LeafCost {
    /// One test per primitive.
    PerPrimitive,
    /// An instance in the top level: the ray carried into its space and
    /// its tree's root tested, [`INSTANCE_COST`] node traversals.
    PerInstance,
    /// One test per leaf of up to `MAX_LEAF` (four) primitives (triangles,
    /// tested as one packet): the build fills leaves.
    PerPacket,
}

impl LeafCost {
    fn of(self, count: usize) -> f32 {
        match self {
            LeafCost::PerPrimitive => count as f32,
            LeafCost::PerInstance => count as f32 * INSTANCE_COST,
            LeafCost::PerPacket => count.div_ceil(MAX_LEAF) as f32,
        }
    }
}

pub(crate) struct BuildPrim {
    pub(crate) bounds: Aabb,
    pub(crate) centroid: Vec3,
    pub(crate) id: u32,
}

/// Build records of primitives with the given boxes.
pub(crate) fn build_prims(bounds: &[Aabb]) -> Vec<BuildPrim> {
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
pub(crate) fn binary(prims: &mut [BuildPrim], leaf: LeafCost) -> Vec<Node> {
    if prims.is_empty() {
        vec![EMPTY_NODE]
    } else {
        build_subtree(prims, 0, leaf)
    }
}

pub(crate) const EMPTY_NODE: Node = Node {
    min: [0.0; 3],
    first: 0,
    max: [0.0; 3],
    count: 0,
};

/// Subtrees with fewer triangles than this are built on one thread.
pub(crate) const PARALLEL_MIN: usize = 16 * 1024;

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
