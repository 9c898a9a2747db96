//! The BVH in the form it is traced in: four children per node, their
//! boxes stored lane by lane so that one ray is tested against all four with
//! a handful of SIMD operations (glam's SSE `Vec4`).
//!
//! It is made from the binary SAH tree by pulling up grandchildren: a node
//! takes its two children, then replaces the child with the largest surface
//! until it has four (or only leaves). The leaves, and the primitives in
//! them, stay exactly as the binary build made them.
//!
//! The slab test picks each axis' near and far planes by the sign of the
//! ray's direction, so a ray that runs inside a face plane (0 · ∞ = NaN)
//! compares as "no constraint": SSE's max and min return their second
//! operand when the first is NaN, and the slab values always come first.

use std::ops::Range;

use arrayvec::ArrayVec;
use glam::Vec4;

use super::bvh::Node;
use super::ray::{Ray, CULL_SLACK, ROBUST_FAR};

/// Four children: boxes lane by lane, and what each child is. 128 bytes.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Node4 {
    min_x: Vec4,
    min_y: Vec4,
    min_z: Vec4,
    max_x: Vec4,
    max_y: Vec4,
    max_z: Vec4,
    /// An interior child's node index, or a leaf's first primitive.
    first: [u32; 4],
    /// 0 for an interior child, the primitive count of a leaf; an unused
    /// lane has an empty box (min +∞, max −∞) that no ray enters.
    count: [u32; 4],
}

const EMPTY4: Node4 = Node4 {
    min_x: Vec4::INFINITY,
    min_y: Vec4::INFINITY,
    min_z: Vec4::INFINITY,
    max_x: Vec4::NEG_INFINITY,
    max_y: Vec4::NEG_INFINITY,
    max_z: Vec4::NEG_INFINITY,
    first: [0; 4],
    count: [0; 4],
};

/// Deep enough for three entries left behind per level of a 4-wide tree
/// over any mesh that fits in memory.
const STACK: usize = 96;

/// A 4-wide BVH.
#[derive(Debug, Clone)]
pub struct WideTree {
    nodes: Vec<Node4>,
}

impl WideTree {
    /// The 4-wide form of the binary tree `bin` (root first); an empty tree
    /// is an empty leaf at the root.
    pub fn collapse(bin: &[Node]) -> WideTree {
        let mut nodes = Vec::with_capacity(bin.len() / 3 + 1);
        let root = &bin[0];
        if root.is_empty_root() {
            nodes.push(EMPTY4);
        } else if !root.is_interior() {
            // A single leaf: one lane of the root.
            let mut node = EMPTY4;
            let b = root.bounds();
            (node.min_x[0], node.min_y[0], node.min_z[0]) = (b.min.x, b.min.y, b.min.z);
            (node.max_x[0], node.max_y[0], node.max_z[0]) = (b.max.x, b.max.y, b.max.z);
            (node.first[0], node.count[0]) = root.leaf();
            nodes.push(node);
        } else {
            collapse_node(bin, 0, &mut nodes);
        }
        WideTree { nodes }
    }

    /// Number of 4-wide nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes held by the nodes.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(self.nodes.as_slice())
    }

    /// Gives every leaf a new first primitive, `f(first, count)`, visiting
    /// the leaves in the order they lie in the node array.
    pub fn renumber_leaves(&mut self, mut f: impl FnMut(u32, u32) -> u32) {
        for node in &mut self.nodes {
            for lane in 0..4 {
                if node.count[lane] > 0 {
                    node.first[lane] = f(node.first[lane], node.count[lane]);
                }
            }
        }
    }

    /// Every leaf reachable from the root: (first primitive, count).
    #[cfg(test)]
    pub(crate) fn leaves(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            let n = &self.nodes[i];
            for lane in 0..4 {
                if n.min_x[lane] > n.max_x[lane] {
                    continue; // unused lane
                }
                if n.count[lane] > 0 {
                    out.push((n.first[lane], n.count[lane]));
                } else {
                    stack.push(n.first[lane] as usize);
                }
            }
        }
        out
    }

    /// Entry distances of `ray` into the four children of `n`, and the lanes
    /// it enters by `t_limit`.
    #[inline(always)]
    fn enter(n: &Node4, r: &Lanes, t_limit: f32) -> (Vec4, u32) {
        let (nx, fx) = if r.neg[0] {
            (n.max_x, n.min_x)
        } else {
            (n.min_x, n.max_x)
        };
        let (ny, fy) = if r.neg[1] {
            (n.max_y, n.min_y)
        } else {
            (n.min_y, n.max_y)
        };
        let (nz, fz) = if r.neg[2] {
            (n.max_z, n.min_z)
        } else {
            (n.min_z, n.max_z)
        };
        let t_near = ((nx - r.ox) * r.ix)
            .max(((ny - r.oy) * r.iy).max(((nz - r.oz) * r.iz).max(Vec4::ZERO)));
        let t_far = ((fx - r.ox) * r.ix * ROBUST_FAR).min(
            ((fy - r.oy) * r.iy * ROBUST_FAR)
                .min(((fz - r.oz) * r.iz * ROBUST_FAR).min(Vec4::splat(t_limit))),
        );
        (t_near, t_near.cmple(t_far).bitmask())
    }

    /// Visits the leaves that `ray` reaches before the closest hit, nearest
    /// first; see [`super::bvh::Tree::closest`].
    #[inline(always)]
    pub fn closest(&self, ray: &Ray, t_max: f32, mut leaf: impl FnMut(Range<usize>, &mut f32)) {
        let r = Lanes::new(ray);
        let mut t_best = t_max;
        // Entries: (first, count, entry distance); count 0 is a node.
        let mut stack: ArrayVec<(u32, u32, f32), STACK> = ArrayVec::new();
        let mut node = 0usize;
        loop {
            let n = &self.nodes[node];
            let (t_near, mask) = Self::enter(n, &r, t_best * CULL_SLACK);
            // One interior child entered: go straight into it.
            if mask.is_power_of_two() {
                let lane = mask.trailing_zeros() as usize;
                if n.count[lane] == 0 {
                    node = n.first[lane] as usize;
                    continue;
                }
            }
            // The entered children, sorted far to near onto the stack.
            let tn = t_near.to_array();
            let base = stack.len();
            let mut lanes = mask;
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let entry = (n.first[lane], n.count[lane], tn[lane]);
                // Insertion: keep stack[base..] sorted by decreasing t.
                stack.push(entry);
                let mut k = stack.len() - 1;
                while k > base && stack[k - 1].2 < entry.2 {
                    stack[k] = stack[k - 1];
                    k -= 1;
                }
                stack[k] = entry;
            }
            // Pop the nearest entry still reachable; test leaves right away.
            loop {
                let Some((first, count, t)) = stack.pop() else {
                    return;
                };
                if t > t_best * CULL_SLACK {
                    continue;
                }
                if count == 0 {
                    node = first as usize;
                    break;
                }
                let first = first as usize;
                leaf(first..first + count as usize, &mut t_best);
            }
        }
    }

    /// Whether `leaf` reports a hit in any leaf `ray` reaches within
    /// `t_max`; stops at the first.
    #[inline(always)]
    pub fn any(&self, ray: &Ray, t_max: f32, mut leaf: impl FnMut(Range<usize>) -> bool) -> bool {
        let r = Lanes::new(ray);
        let mut stack: ArrayVec<u32, STACK> = ArrayVec::new();
        stack.push(0);
        while let Some(node) = stack.pop() {
            let n = &self.nodes[node as usize];
            let (_, mask) = Self::enter(n, &r, t_max * CULL_SLACK);
            let mut lanes = mask;
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                if n.count[lane] > 0 {
                    let first = n.first[lane] as usize;
                    if leaf(first..first + n.count[lane] as usize) {
                        return true;
                    }
                } else {
                    stack.push(n.first[lane]);
                }
            }
        }
        false
    }
}

/// A ray spread over four lanes.
struct Lanes {
    ox: Vec4,
    oy: Vec4,
    oz: Vec4,
    ix: Vec4,
    iy: Vec4,
    iz: Vec4,
    /// Whether the direction is negative on each axis (near plane = max).
    neg: [bool; 3],
}

impl Lanes {
    #[inline(always)]
    fn new(ray: &Ray) -> Lanes {
        let (o, i) = (ray.origin, ray.inv_dir);
        Lanes {
            ox: Vec4::splat(o.x),
            oy: Vec4::splat(o.y),
            oz: Vec4::splat(o.z),
            ix: Vec4::splat(i.x),
            iy: Vec4::splat(i.y),
            iz: Vec4::splat(i.z),
            neg: [i.x < 0.0, i.y < 0.0, i.z < 0.0],
        }
    }
}

/// Appends the 4-wide node for binary node `b` (interior) and its subtree;
/// returns its index.
fn collapse_node(bin: &[Node], b: usize, out: &mut Vec<Node4>) -> u32 {
    let (l, _) = bin[b].children();
    let mut kids = vec![l, l + 1];
    while kids.len() < 4 {
        let widest = kids
            .iter()
            .enumerate()
            .filter(|(_, &k)| bin[k].is_interior())
            .max_by(|(_, &a), (_, &c)| {
                bin[a]
                    .bounds()
                    .half_area()
                    .total_cmp(&bin[c].bounds().half_area())
            });
        let Some((pos, &k)) = widest else { break };
        let (kl, _) = bin[k].children();
        kids.splice(pos..=pos, [kl, kl + 1]);
    }
    let index = out.len();
    out.push(EMPTY4);
    let mut node = EMPTY4;
    for (lane, &k) in kids.iter().enumerate() {
        let b = bin[k].bounds();
        node.min_x[lane] = b.min.x;
        node.min_y[lane] = b.min.y;
        node.min_z[lane] = b.min.z;
        node.max_x[lane] = b.max.x;
        node.max_y[lane] = b.max.y;
        node.max_z[lane] = b.max.z;
        if bin[k].is_interior() {
            node.first[lane] = collapse_node(bin, k, out);
            node.count[lane] = 0;
        } else {
            let (first, count) = bin[k].leaf();
            node.first[lane] = first;
            node.count[lane] = count;
        }
    }
    out[index] = node;
    index as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node4_is_128_bytes() {
        assert_eq!(std::mem::size_of::<Node4>(), 128);
    }
}
