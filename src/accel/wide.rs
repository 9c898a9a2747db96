//! The BVH in the form it is traced in: eight children per node, their
//! boxes stored lane by lane so that one ray is tested against four of them
//! with a handful of SIMD operations (glam's SSE `Vec4`), twice. Eight
//! children rather than four halve the nodes a ray visits one after the
//! other; on the workload mesh, 6–23% more camera rays and 20–30% more
//! shadow rays a second on one thread.
//!
//! It is made from the binary SAH tree by pulling up descendants: which
//! binary nodes become wide nodes is chosen to minimise the wide nodes'
//! summed surface area ([`Collapse`]). The leaves, and the primitives in
//! them, stay exactly as the binary build made them.
//!
//! The slab test picks each axis' near and far planes by the sign of the
//! ray's direction, so a ray that runs inside a face plane (0 · ∞ = NaN)
//! compares as "no constraint": SSE's max and min return their second
//! operand when the first is NaN, and the slab values always come first.

use std::ops::Range;

use arrayvec::ArrayVec;
use glam::Vec4;

use super::sah::Node;
use crate::isa::Isa;
use crate::ray::{Aabb, Ray, CULL_SLACK, ROBUST_FAR};

/// Groups of four children a node tests with one `Vec4` per coordinate.
pub(super) const HALVES: usize = 2;
/// Children per node.
pub const WIDTH: usize = 4 * HALVES;

/// [`WIDTH`] children: boxes lane by lane (child `c` in lane `c % 4` of
/// group `c / 4`), and what each child is. 256 bytes, on a cache line's
/// start, so that a node is four lines (a large `Vec` from the system
/// allocator starts 16 bytes into a page: every node spanned five).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub struct WideNode {
    pub(super) min_x: [Vec4; HALVES],
    pub(super) min_y: [Vec4; HALVES],
    pub(super) min_z: [Vec4; HALVES],
    pub(super) max_x: [Vec4; HALVES],
    pub(super) max_y: [Vec4; HALVES],
    pub(super) max_z: [Vec4; HALVES],
    /// An interior child's node index, or a leaf's first primitive.
    pub(super) first: [u32; WIDTH],
    /// 0 for an interior child, the primitive count of a leaf; an unused
    /// lane has an empty box (min +∞, max −∞) that no ray enters.
    pub(super) count: [u32; WIDTH],
}

const EMPTY_WIDE: WideNode = WideNode {
    min_x: [Vec4::INFINITY; HALVES],
    min_y: [Vec4::INFINITY; HALVES],
    min_z: [Vec4::INFINITY; HALVES],
    max_x: [Vec4::NEG_INFINITY; HALVES],
    max_y: [Vec4::NEG_INFINITY; HALVES],
    max_z: [Vec4::NEG_INFINITY; HALVES],
    first: [0; WIDTH],
    count: [0; WIDTH],
};

impl WideNode {
    /// Puts box `b` in child `c`.
    fn set_bounds(&mut self, c: usize, b: &Aabb) {
        let (h, l) = (c / 4, c % 4);
        self.min_x[h][l] = b.min.x;
        self.min_y[h][l] = b.min.y;
        self.min_z[h][l] = b.min.z;
        self.max_x[h][l] = b.max.x;
        self.max_y[h][l] = b.max.y;
        self.max_z[h][l] = b.max.z;
    }

    /// The box of child `c`.
    #[cfg(test)]
    fn child_bounds(&self, c: usize) -> Aabb {
        let (h, l) = (c / 4, c % 4);
        Aabb {
            min: glam::Vec3::new(self.min_x[h][l], self.min_y[h][l], self.min_z[h][l]),
            max: glam::Vec3::new(self.max_x[h][l], self.max_y[h][l], self.max_z[h][l]),
        }
    }

    /// Whether child `c` is an unused lane.
    #[cfg(test)]
    fn unused(&self, c: usize) -> bool {
        self.min_x[c / 4][c % 4] > self.max_x[c / 4][c % 4]
    }
}

/// Deep enough for the entries left behind on the way down a wide tree
/// over any mesh that fits in memory.
pub(super) const STACK: usize = 256;

/// Pushes `entry` onto `stack`, keeping the entries from `base` on sorted
/// by decreasing `key` (an entry distance): the nearest on top.
#[inline(always)]
pub(super) fn push_sorted<T: Copy>(
    stack: &mut ArrayVec<T, STACK>,
    base: usize,
    entry: T,
    key: impl Fn(&T) -> f32,
) {
    stack.push(entry);
    let mut k = stack.len() - 1;
    while k > base && key(&stack[k - 1]) < key(&entry) {
        stack[k] = stack[k - 1];
        k -= 1;
    }
    stack[k] = entry;
}

/// A wide BVH.
#[derive(Debug, Clone)]
pub struct WideTree {
    pub(super) nodes: Vec<WideNode>,
    /// Where the leaves' primitives lie, for prefetching.
    leaf_memory: LeafMemory,
    /// Whether occlusion walks visit a node's children nearest first
    /// ([`WideTree::set_near_first`]) rather than in lane order.
    pub(super) near_first: bool,
}

/// Where a tree's leaf primitives lie in memory: items of `item_bytes`
/// from address `base`, `1 << slot_shift` leaf slots each (a leaf starts
/// at an item's first slot). Only ever prefetched, never read through, so
/// a stale address costs speed, not safety. `base` 0: unknown.
#[derive(Debug, Clone, Copy, Default)]
struct LeafMemory {
    base: usize,
    slot_shift: u32,
    item_bytes: usize,
}

impl WideTree {
    /// The wide form of the binary tree `bin` (root first); an empty tree
    /// is an empty leaf at the root.
    pub fn collapse(bin: &[Node]) -> WideTree {
        let mut nodes = Vec::with_capacity(bin.len() / 3 + 1);
        let root = &bin[0];
        if root.is_empty_root() {
            nodes.push(EMPTY_WIDE);
        } else if !root.is_interior() {
            // A single leaf: one lane of the root.
            let mut node = EMPTY_WIDE;
            node.set_bounds(0, &root.bounds());
            (node.first[0], node.count[0]) = root.leaf();
            nodes.push(node);
        } else {
            collapse_node(bin, &Collapse::new(bin), 0, &mut nodes);
        }
        WideTree {
            nodes,
            leaf_memory: LeafMemory::default(),
            near_first: false,
        }
    }

    /// Makes the occlusion walks ([`WideTree::any`], [`WideTree::any_octet`])
    /// visit the children a ray enters nearest first, leaves among them,
    /// as the closest-hit walks do, instead of in lane order. The answers
    /// are the same; what changes is how soon a blocker is found. It pays
    /// over dense occluders, where the nearest is the likeliest to block:
    /// the plant field's tree over its plants, 1.04–1.05× on `meadow`'s
    /// frame. On the peer terrain mesh, whose shadow rays are blocked far
    /// off or not at all, sorting cost its shadow rays about 7 %, so a
    /// tree walks in lane order unless told.
    pub fn set_near_first(&mut self) {
        self.near_first = true;
    }

    /// Tells the traversals where the leaves' primitives lie: `items`, each
    /// holding `slots_per_item` slots (a power of two, so that finding a
    /// leaf's item is a shift), so that they ask for a leaf's items
    /// (and a node's children) as soon as a ray enters them, and the memory
    /// has come by the time they are tested. On the workload meshes,
    /// 5-20% more primary rays a second; neutral on the rock field.
    pub fn set_leaf_memory<T>(&mut self, items: &[T], slots_per_item: usize) {
        assert!(slots_per_item.is_power_of_two());
        self.leaf_memory = LeafMemory {
            base: items.as_ptr() as usize,
            slot_shift: slots_per_item.trailing_zeros(),
            item_bytes: std::mem::size_of::<T>(),
        };
    }

    /// Asks for the cache lines of child `c` of `n`: a node, or a leaf's
    /// first item.
    #[inline(always)]
    pub(super) fn prefetch_child(&self, n: &WideNode, c: usize) {
        let (address, bytes) = if n.count[c] == 0 {
            let node = self.nodes.as_ptr().wrapping_add(n.first[c] as usize);
            (node as usize, std::mem::size_of::<WideNode>())
        } else {
            let m = &self.leaf_memory;
            if m.base == 0 {
                return;
            }
            let item = n.first[c] as usize >> m.slot_shift;
            (m.base + item * m.item_bytes, m.item_bytes)
        };
        #[cfg(target_arch = "x86_64")]
        for offset in (0..bytes).step_by(64).chain([bytes - 1]) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            // SAFETY: SSE is part of x86_64; a prefetch reads nothing and
            // never faults, whatever the address.
            #[allow(unsafe_code)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>((address + offset) as *const i8)
            };
        }
    }

    /// Number of wide nodes.
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
            for lane in 0..WIDTH {
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
            for lane in 0..WIDTH {
                if n.unused(lane) {
                    continue;
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

    /// Entry distances of `ray` into the children of `n`, and the
    /// children it enters by `t_limit` (bit `c` for child `c`); with `AVX`
    /// (only where the CPU has it), in one 8-wide group.
    #[allow(unsafe_code)]
    #[inline(always)]
    fn enter<const AVX: bool>(n: &WideNode, r: &Lanes, t_limit: f32) -> ([f32; WIDTH], u32) {
        #[cfg(target_arch = "x86_64")]
        if AVX {
            // SAFETY: AVX is true only in functions compiled for AVX, which
            // run only where the CPU has it.
            return unsafe { enter_avx(n, r, t_limit) };
        }
        let mut t_entry = [0.0; WIDTH];
        let mut mask = 0;
        for h in 0..HALVES {
            let (nx, fx) = if r.neg[0] {
                (n.max_x[h], n.min_x[h])
            } else {
                (n.min_x[h], n.max_x[h])
            };
            let (ny, fy) = if r.neg[1] {
                (n.max_y[h], n.min_y[h])
            } else {
                (n.min_y[h], n.max_y[h])
            };
            let (nz, fz) = if r.neg[2] {
                (n.max_z[h], n.min_z[h])
            } else {
                (n.min_z[h], n.max_z[h])
            };
            let t_near = ((nx - r.ox) * r.ix)
                .max(((ny - r.oy) * r.iy).max(((nz - r.oz) * r.iz).max(Vec4::ZERO)));
            let t_far = ((fx - r.ox) * r.ix * ROBUST_FAR).min(
                ((fy - r.oy) * r.iy * ROBUST_FAR)
                    .min(((fz - r.oz) * r.iz * ROBUST_FAR).min(Vec4::splat(t_limit))),
            );
            t_near.write_to_slice(&mut t_entry[4 * h..4 * h + 4]);
            mask |= t_near.cmple(t_far).bitmask() << (4 * h);
        }
        (t_entry, mask)
    }

    /// Visits the leaves that `ray` reaches before the closest hit, nearest
    /// first; see [`super::bvh::Tree::closest`]. Where the CPU has AVX
    /// (checked at run time), a node's eight boxes are tested in one 8-wide
    /// group, with the same operations in each lane.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub fn closest(&self, ray: &Ray, t_max: f32, leaf: impl FnMut(Range<usize>, &mut f32)) {
        #[cfg(target_arch = "x86_64")]
        match Isa::best() {
            // SAFETY (both): the CPU runs the copy's instruction set.
            Some(Isa::Avx512) => return unsafe { self.closest_avx512(ray, t_max, leaf) },
            Some(Isa::Avx | Isa::Avx2) => return unsafe { self.closest_avx(ray, t_max, leaf) },
            None => {}
        }
        self.closest_with::<false>(0, ray, t_max, leaf)
    }

    /// [`WideTree::closest`] from node `root` down, its box tests in 8-wide
    /// AVX groups or not.
    #[inline(always)]
    pub(super) fn closest_with<const AVX: bool>(
        &self,
        root: u32,
        ray: &Ray,
        t_max: f32,
        mut leaf: impl FnMut(Range<usize>, &mut f32),
    ) {
        let mut walk = Walk::new(root, ray, t_max);
        while walk.step::<AVX>(self, &mut leaf) {}
    }

    /// [`WideTree::closest`] for each of `rays` (up to [`INTERLEAVE`]),
    /// `leaf(k, range, t_best)` testing ray `rays[k]`: their walks take
    /// turns node by node, so that while one waits on a node it asked the
    /// memory for, the others test theirs. Each walk is exactly the one
    /// ray's own, so the hits are too.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub fn closest_each(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        leaf: impl FnMut(usize, Range<usize>, &mut f32),
    ) {
        assert!(!rays.is_empty() && rays.len() <= INTERLEAVE && t_max.len() == rays.len());
        #[cfg(target_arch = "x86_64")]
        match Isa::best() {
            // SAFETY (both): the CPU runs the copy's instruction set.
            Some(Isa::Avx512) => return unsafe { self.closest_each_avx512(rays, t_max, leaf) },
            Some(Isa::Avx | Isa::Avx2) => {
                return unsafe { self.closest_each_avx(rays, t_max, leaf) }
            }
            None => {}
        }
        self.closest_each_with::<false>(rays, t_max, leaf)
    }

    /// [`WideTree::closest_each`], its box tests in 8-wide AVX groups or not.
    #[inline(always)]
    fn closest_each_with<const AVX: bool>(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        mut leaf: impl FnMut(usize, Range<usize>, &mut f32),
    ) {
        // Walks past the rays repeat the first ray and never step.
        let mut walks: [Walk; INTERLEAVE] = std::array::from_fn(|k| {
            let k = if k < rays.len() { k } else { 0 };
            Walk::new(0, &rays[k], t_max[k])
        });
        let mut live = (1u32 << rays.len()) - 1;
        while live != 0 {
            for (k, walk) in walks.iter_mut().enumerate() {
                if live & 1 << k != 0
                    && !walk.step::<AVX>(self, &mut |range, t: &mut f32| leaf(k, range, t))
                {
                    live &= !(1 << k);
                }
            }
        }
    }

    /// Whether `leaf` reports a hit in any leaf `ray` reaches within
    /// `t_max`; stops at the first. AVX as in [`WideTree::closest`].
    #[allow(unsafe_code)]
    #[inline(always)]
    pub fn any(&self, ray: &Ray, t_max: f32, leaf: impl FnMut(Range<usize>) -> bool) -> bool {
        #[cfg(target_arch = "x86_64")]
        match Isa::best() {
            // SAFETY (both): the CPU runs the copy's instruction set.
            Some(Isa::Avx512) => return unsafe { self.any_avx512(ray, t_max, leaf) },
            Some(Isa::Avx | Isa::Avx2) => return unsafe { self.any_avx(ray, t_max, leaf) },
            None => {}
        }
        self.any_with::<false>(0, ray, t_max, leaf)
    }

    /// [`WideTree::any`] from node `root` down, its box tests in 8-wide AVX
    /// groups or not.
    #[inline(always)]
    pub(super) fn any_with<const AVX: bool>(
        &self,
        root: u32,
        ray: &Ray,
        t_max: f32,
        mut leaf: impl FnMut(Range<usize>) -> bool,
    ) -> bool {
        let r = Lanes::new(ray);
        // Entries: (first, count, entry distance); count 0 is a node.
        // Leaves wait on the stack only when the walk goes nearest first.
        let mut stack: ArrayVec<(u32, u32, f32), STACK> = ArrayVec::new();
        stack.push((root, 0, 0.0));
        while let Some((first, count, _)) = stack.pop() {
            if count > 0 {
                if leaf(first as usize..(first + count) as usize) {
                    return true;
                }
                continue;
            }
            let n = &self.nodes[first as usize];
            let (t_near, mask) = Self::enter::<AVX>(n, &r, t_max * CULL_SLACK);
            let mut ahead = mask;
            while ahead != 0 {
                self.prefetch_child(n, ahead.trailing_zeros() as usize);
                ahead &= ahead - 1;
            }
            let base = stack.len();
            let mut lanes = mask;
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let entry = (n.first[lane], n.count[lane], t_near[lane]);
                if !self.near_first {
                    if entry.1 > 0 {
                        if leaf(entry.0 as usize..(entry.0 + entry.1) as usize) {
                            return true;
                        }
                    } else {
                        stack.push(entry);
                    }
                    continue;
                }
                push_sorted(&mut stack, base, entry, |e| e.2);
            }
        }
        false
    }
}

/// The single-ray traversals compiled for one instruction set
/// ([`crate::accel::isa`]): [`WideTree::closest_with`] and
/// [`WideTree::any_with`] with 8-wide box tests, inlined under its
/// features.
#[cfg(target_arch = "x86_64")]
macro_rules! traversals {
    ($closest:ident, $each:ident, $any:ident, $features:literal) => {
        impl WideTree {
            #[doc = concat!("[`WideTree::closest`] compiled for `", $features, "`.")]
            ///
            /// # Safety
            ///
            /// The CPU must support those features.
            #[allow(unsafe_code)]
            #[target_feature(enable = $features)]
            unsafe fn $closest(
                &self,
                ray: &Ray,
                t_max: f32,
                leaf: impl FnMut(Range<usize>, &mut f32),
            ) {
                self.closest_with::<true>(0, ray, t_max, leaf)
            }

            #[doc = concat!("[`WideTree::closest_each`] compiled for `", $features, "`.")]
            ///
            /// # Safety
            ///
            /// The CPU must support those features.
            #[allow(unsafe_code)]
            #[target_feature(enable = $features)]
            unsafe fn $each(
                &self,
                rays: &[Ray],
                t_max: &[f32],
                leaf: impl FnMut(usize, Range<usize>, &mut f32),
            ) {
                self.closest_each_with::<true>(rays, t_max, leaf)
            }

            #[doc = concat!("[`WideTree::any`] compiled for `", $features, "`.")]
            ///
            /// # Safety
            ///
            /// The CPU must support those features.
            #[allow(unsafe_code)]
            #[target_feature(enable = $features)]
            unsafe fn $any(
                &self,
                ray: &Ray,
                t_max: f32,
                leaf: impl FnMut(Range<usize>) -> bool,
            ) -> bool {
                self.any_with::<true>(0, ray, t_max, leaf)
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
traversals!(closest_avx, closest_each_avx, any_avx, "avx");
#[cfg(target_arch = "x86_64")]
traversals!(
    closest_avx512,
    closest_each_avx512,
    any_avx512,
    "avx,avx2,avx512f,avx512vl"
);

/// [`WideTree::enter`] in one 8-wide group: each lane gives what the
/// 4-wide groups give, bit for bit (the entry distances by the same
/// operations; the far distance's scaling once, after the minimum, which
/// rounds to the same value; NaN slabs always the first operand, so they
/// resolve the same way).
///
/// # Safety
///
/// The CPU must support AVX.
#[allow(unsafe_code)]
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn enter_avx(n: &WideNode, r: &Lanes, t_limit: f32) -> ([f32; WIDTH], u32) {
    use std::arch::x86_64::*;
    const { assert!(HALVES == 2) };
    // The near and far planes, loaded from the offsets the ray's signs
    // chose (no branch on them at each node).
    let base = n as *const WideNode as *const u8;
    // SAFETY: each offset is that of one of the node's `[Vec4; 2]` fields,
    // eight contiguous f32.
    let load = |k: usize| unsafe { _mm256_loadu_ps(base.add(r.planes[k]) as *const f32) };
    let (nx, ny, nz) = (load(0), load(1), load(2));
    let (fx, fy, fz) = (load(3), load(4), load(5));
    let splat = |v: Vec4| _mm256_set1_ps(v.x);
    let (ox, oy, oz) = (splat(r.ox), splat(r.oy), splat(r.oz));
    let (ix, iy, iz) = (splat(r.ix), splat(r.iy), splat(r.iz));
    let slab = |p, o, i| _mm256_mul_ps(_mm256_sub_ps(p, o), i);
    let robust = _mm256_set1_ps(ROBUST_FAR);
    let t_near = _mm256_max_ps(
        slab(nx, ox, ix),
        _mm256_max_ps(
            slab(ny, oy, iy),
            _mm256_max_ps(slab(nz, oz, iz), _mm256_setzero_ps()),
        ),
    );
    // The far planes' minimum, then scaled: the same as scaling each (the
    // rounding of a product by a positive constant keeps the order), and a
    // NaN slab is always the first operand, so it drops out as there.
    let far = _mm256_min_ps(
        slab(fx, ox, ix),
        _mm256_min_ps(
            slab(fy, oy, iy),
            _mm256_min_ps(slab(fz, oz, iz), _mm256_set1_ps(f32::INFINITY)),
        ),
    );
    let t_far = _mm256_min_ps(_mm256_mul_ps(far, robust), _mm256_set1_ps(t_limit));
    let mut t_entry = [0.0; WIDTH];
    // SAFETY: `t_entry` holds eight f32.
    unsafe { _mm256_storeu_ps(t_entry.as_mut_ptr(), t_near) };
    let mask = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(t_near, t_far)) as u32;
    (t_entry, mask)
}

/// Rays whose walks [`WideTree::closest_each`] interleaves. Two: the
/// workload mesh's bounce rays went 6–10% faster than one at a time; with
/// three 5% slower than one, with four as slow (more walks' state than
/// stays close at hand).
pub const INTERLEAVE: usize = 2;

/// One ray's closest-hit walk down a wide tree, resumable node by node.
struct Walk {
    r: Lanes,
    t_best: f32,
    /// Entries: (first, count, entry distance); count 0 is a node.
    stack: ArrayVec<(u32, u32, f32), STACK>,
    /// The node to visit next.
    node: usize,
}

impl Walk {
    #[inline(always)]
    fn new(root: u32, ray: &Ray, t_max: f32) -> Walk {
        Walk {
            r: Lanes::new(ray),
            t_best: t_max,
            stack: ArrayVec::new(),
            node: root as usize,
        }
    }

    /// Visits the next node: tests its children, puts the entered ones on
    /// the stack (nearest on top) or goes straight into a lone interior
    /// one, and pops entries, testing leaves at once (`leaf` lowers
    /// `t_best` on a nearer hit), until it has the node to visit next.
    /// False when the walk is done.
    #[inline(always)]
    fn step<const AVX: bool>(
        &mut self,
        tree: &WideTree,
        leaf: &mut impl FnMut(Range<usize>, &mut f32),
    ) -> bool {
        let stack = &mut self.stack;
        let n = &tree.nodes[self.node];
        let (t_near, mask) = WideTree::enter::<AVX>(n, &self.r, self.t_best * CULL_SLACK);
        // One interior child entered: go straight into it.
        if mask.is_power_of_two() {
            let lane = mask.trailing_zeros() as usize;
            if n.count[lane] == 0 {
                self.node = n.first[lane] as usize;
                return true;
            }
        }
        // The entered children, sorted far to near onto the stack.
        let base = stack.len();
        let mut lanes = mask;
        // Exactly two children (one bit left once the lowest is
        // cleared; no `popcnt` in the copies' target features).
        if (mask & mask.wrapping_sub(1)).is_power_of_two() {
            // The commonest case after one, ordered by a select rather
            // than a branch on the distances, which goes either way.
            let a = lanes.trailing_zeros() as usize;
            let b = (lanes & (lanes - 1)).trailing_zeros() as usize;
            tree.prefetch_child(n, a);
            tree.prefetch_child(n, b);
            let (near, far) = if t_near[b] < t_near[a] {
                (b, a)
            } else {
                (a, b)
            };
            stack.push((n.first[far], n.count[far], t_near[far]));
            stack.push((n.first[near], n.count[near], t_near[near]));
            lanes = 0;
        }
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            tree.prefetch_child(n, lane);
            let entry = (n.first[lane], n.count[lane], t_near[lane]);
            push_sorted(stack, base, entry, |e| e.2);
        }
        // Pop the nearest entry still reachable; test leaves right away.
        loop {
            let Some((first, count, t)) = stack.pop() else {
                return false;
            };
            if t > self.t_best * CULL_SLACK {
                continue;
            }
            if count == 0 {
                self.node = first as usize;
                return true;
            }
            let first = first as usize;
            leaf(first..first + count as usize, &mut self.t_best);
        }
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
    /// Byte offsets in a [`WideNode`] of the near planes (x, y, z), then
    /// the far planes.
    planes: [usize; 6],
}

impl Lanes {
    #[inline(always)]
    fn new(ray: &Ray) -> Lanes {
        let (o, i) = (ray.origin, ray.inv_dir);
        let neg = [i.x < 0.0, i.y < 0.0, i.z < 0.0];
        // Each axis' (near, far) planes: the max first where the direction
        // is negative.
        let planes = |axis: usize, min: usize, max: usize| {
            if neg[axis] {
                (max, min)
            } else {
                (min, max)
            }
        };
        use std::mem::offset_of;
        let (nx, fx) = planes(0, offset_of!(WideNode, min_x), offset_of!(WideNode, max_x));
        let (ny, fy) = planes(1, offset_of!(WideNode, min_y), offset_of!(WideNode, max_y));
        let (nz, fz) = planes(2, offset_of!(WideNode, min_z), offset_of!(WideNode, max_z));
        Lanes {
            ox: Vec4::splat(o.x),
            oy: Vec4::splat(o.y),
            oz: Vec4::splat(o.z),
            ix: Vec4::splat(i.x),
            iy: Vec4::splat(i.y),
            iz: Vec4::splat(i.z),
            neg,
            planes: [nx, ny, nz, fx, fy, fz],
        }
    }
}

/// Which binary nodes become the wide tree's nodes: the choice that
/// minimises the summed surface area of the wide nodes (the SAH cost of
/// their box tests; the leaves' cost is the same in any choice, as the
/// leaves stay as the binary build made them), over all ways of giving
/// each wide node at most [`WIDTH`] children. Dynamic programming over the
/// binary tree, as in Ylitie, Karras and Laine (2017), "Efficient incoherent
/// ray traversal on GPUs through compressed wide BVHs", §3.1.
///
/// Pulling up the widest grandchildren greedily fills the upper nodes and
/// leaves the last level with whatever is left: on a balanced tree of 2¹⁹
/// leaves, nodes of two children. The workload mesh's wide nodes held 3.3
/// children on average that way, and a bounce ray visited 9.3 of them.
struct Collapse {
    /// `spread[n][i - 1]`: 0 where that least cost keeps `n` as one child
    /// (a leaf, or a wide node of its own); else the number of children
    /// `j <= i` its two children share.
    spread: Vec<[u8; WIDTH]>,
    /// `split[n][j - 1]`: how many of `j` children `n`'s left child takes.
    split: Vec<[u8; WIDTH]>,
}

impl Collapse {
    /// The choice for the binary tree `bin` (children after their parent).
    fn new(bin: &[Node]) -> Collapse {
        // `cost[n][i - 1]`: the least cost of binary node `n`'s subtree as
        // at most `i` children of a wide node (0 for a leaf).
        let mut cost = vec![[0.0f32; WIDTH]; bin.len()];
        let mut spread = vec![[0u8; WIDTH]; bin.len()];
        let mut split = vec![[0u8; WIDTH]; bin.len()];
        for n in (0..bin.len()).rev() {
            if !bin[n].is_interior() {
                continue; // a leaf is one child at no cost
            }
            let (l, r) = bin[n].children();
            debug_assert!(l > n, "a binary node's children come after it");
            // Least cost of the two subtrees as j children together.
            let mut shared = [f32::INFINITY; WIDTH];
            for j in 2..=WIDTH {
                for k in 1..j {
                    let c = cost[l][k - 1] + cost[r][j - k - 1];
                    if c < shared[j - 1] {
                        shared[j - 1] = c;
                        split[n][j - 1] = k as u8;
                    }
                }
            }
            // As one child, n is a wide node over its subtree.
            cost[n][0] = bin[n].bounds().half_area() + shared[WIDTH - 1];
            for i in 2..=WIDTH {
                if shared[i - 1] < cost[n][i - 2] {
                    cost[n][i - 1] = shared[i - 1];
                    spread[n][i - 1] = i as u8;
                } else {
                    cost[n][i - 1] = cost[n][i - 2];
                    spread[n][i - 1] = spread[n][i - 2];
                }
            }
        }
        Collapse { spread, split }
    }

    /// The children of the wide node made for interior binary node `n`, in
    /// the binary tree's order.
    fn children(&self, bin: &[Node], n: usize) -> ArrayVec<usize, WIDTH> {
        let mut out = ArrayVec::new();
        self.spread_into(bin, n, WIDTH, &mut out);
        out
    }

    /// Appends the children that interior node `n`'s two subtrees make
    /// when they share `j` of them.
    fn spread_into(&self, bin: &[Node], n: usize, j: usize, out: &mut ArrayVec<usize, WIDTH>) {
        let (l, r) = bin[n].children();
        let k = self.split[n][j - 1] as usize;
        self.place(bin, l, k, out);
        self.place(bin, r, j - k, out);
    }

    /// Appends binary node `m` as at most `i` children.
    fn place(&self, bin: &[Node], m: usize, i: usize, out: &mut ArrayVec<usize, WIDTH>) {
        match self.spread[m][i - 1] as usize {
            0 => out.push(m),
            j => self.spread_into(bin, m, j, out),
        }
    }
}

/// Appends the wide node for binary node `b` (interior) and its subtree;
/// returns its index.
fn collapse_node(bin: &[Node], choice: &Collapse, b: usize, out: &mut Vec<WideNode>) -> u32 {
    let kids = choice.children(bin, b);
    let index = out.len();
    out.push(EMPTY_WIDE);
    let mut node = EMPTY_WIDE;
    for (lane, &k) in kids.iter().enumerate() {
        node.set_bounds(lane, &bin[k].bounds());
        if bin[k].is_interior() {
            node.first[lane] = collapse_node(bin, choice, k, out);
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
    fn node_is_128_bytes_a_group_of_four() {
        assert_eq!(std::mem::size_of::<WideNode>(), 128 * HALVES);
        assert_eq!(std::mem::align_of::<WideNode>(), 64);
    }

    /// The 8-wide AVX box test gives bit for bit the entry distances and
    /// the mask of the 4-wide groups, on every node of a tree, for random
    /// rays and for rays along the axes (whose slabs are 0 · ∞ = NaN on
    /// the faces they run in).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx_boxes_match_the_groups_of_four() {
        if !Isa::Avx.runs_here() {
            return;
        }
        let mesh = crate::terrain::TerrainGrid::diamond_square(40, 40, 8.0, 4, [20.0, 20.0])
            .to_mesh(false);
        let bounds: Vec<Aabb> = mesh
            .indices
            .iter()
            .map(|t| {
                t.iter()
                    .fold(Aabb::EMPTY, |b, &v| b.grow(mesh.positions[v as usize]))
            })
            .collect();
        let mut prims = crate::accel::sah::build_prims(&bounds);
        let nodes = crate::accel::sah::binary(&mut prims, crate::accel::sah::LeafCost::PerPacket);
        let tree = &WideTree::collapse(&nodes);
        let r = |k: u64, s: u64| crate::hash::unit_f32(k, s, 11) * 2.0 - 1.0;
        let mut entered = 0;
        for k in 0..300u64 {
            let origin = glam::Vec3::new(r(k, 0) * 12.0, 4.0 + r(k, 1) * 4.0, r(k, 2) * 12.0);
            let dir = match k % 5 {
                0 => glam::Vec3::NEG_Y,
                1 => glam::Vec3::X,
                2 => glam::Vec3::new(0.0, -1.0, r(k, 3)).normalize(),
                _ => glam::Vec3::new(r(k, 3), -1.0, r(k, 4)).normalize(),
            };
            // Rays along an axis start on face planes of some child box,
            // so that their slabs there are 0 · ∞ = NaN.
            let n = &tree.nodes[k as usize % tree.nodes.len()];
            let c = if n.unused(k as usize % WIDTH) {
                0
            } else {
                k as usize % WIDTH
            };
            let face = |min: &[Vec4; HALVES], max: &[Vec4; HALVES]| {
                if k % 2 == 0 {
                    min[c / 4][c % 4]
                } else {
                    max[c / 4][c % 4]
                }
            };
            let origin = match k % 5 {
                0 => glam::Vec3::new(face(&n.min_x, &n.max_x), origin.y, face(&n.min_z, &n.max_z)),
                1 => glam::Vec3::new(origin.x, face(&n.min_y, &n.max_y), face(&n.min_z, &n.max_z)),
                2 => glam::Vec3::new(face(&n.min_x, &n.max_x), origin.y, origin.z),
                _ => origin,
            };
            let lanes = Lanes::new(&Ray::new(origin, dir));
            for n in &tree.nodes {
                // A limit exactly at a child's entry: the box still counts.
                let (t_all, m_all) = WideTree::enter::<false>(n, &lanes, f32::INFINITY);
                let at_entry = t_all[m_all.trailing_zeros().min(WIDTH as u32 - 1) as usize];
                for t_limit in [f32::INFINITY, 6.0, at_entry] {
                    let (t4, m4) = WideTree::enter::<false>(n, &lanes, t_limit);
                    // SAFETY: the CPU has AVX (checked above).
                    #[allow(unsafe_code)]
                    let (t8, m8) = unsafe { enter_avx(n, &lanes, t_limit) };
                    assert_eq!(m4, m8, "ray {k}");
                    assert_eq!(t4.map(f32::to_bits), t8.map(f32::to_bits), "ray {k}");
                    entered += m4.count_ones();
                }
            }
        }
        assert!(entered > 1000, "{entered} boxes entered");
    }

    /// A perfect binary tree over 128 unit boxes in a row.
    fn row_of_boxes() -> Vec<Node> {
        let leaves = 128;
        let mut bin = vec![crate::accel::sah::EMPTY_NODE; 2 * leaves - 1];
        for k in (0..bin.len()).rev() {
            let (lo, hi, first, count) = if k >= leaves - 1 {
                let i = (k - (leaves - 1)) as u32;
                (i as f32, i as f32 + 1.0, i, 1)
            } else {
                let (l, r) = (2 * k + 1, 2 * k + 2);
                (bin[l].min[0], bin[r].max[0], l as u32, 0)
            };
            bin[k] = Node {
                min: [lo, 0.0, 0.0],
                first,
                max: [hi, 1.0, 1.0],
                count,
            };
        }
        bin
    }

    /// 128 leaves fit in 19 wide nodes at the fewest ((128 − 1) / 7,
    /// rounded up), and the collapse takes that few. Their summed area is
    /// at most that of the evenly split choice, the root over two halves,
    /// each over eight runs of 8 boxes (half-area 2w + 1 for a box w × 1 ×
    /// 1: 257 + 2 · 129 + 16 · 17 = 787); pulling up the widest
    /// grandchildren would have filled the root and the next level and left
    /// 64 nodes of two boxes (73 nodes, 257 + 8 · 33 + 64 · 5 = 841).
    #[test]
    fn a_balanced_tree_collapses_into_full_nodes() {
        let bin = row_of_boxes();
        let tree = WideTree::collapse(&bin);
        assert_eq!(tree.node_count(), 19);
        let area: f32 = tree
            .nodes
            .iter()
            .map(|n| {
                (0..WIDTH)
                    .filter(|&c| !n.unused(c))
                    .fold(Aabb::EMPTY, |a, c| a.union(n.child_bounds(c)))
                    .half_area()
            })
            .sum();
        assert!(area <= 787.0, "summed half-area {area}");
        let mut leaves = tree.leaves();
        leaves.sort();
        assert_eq!(leaves, (0..128).map(|i| (i, 1)).collect::<Vec<_>>());
    }
}
