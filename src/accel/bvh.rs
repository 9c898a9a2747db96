//! The traced hierarchies: [`Tree`] over boxes, and the triangle BVH built
//! on it. Both are built by the binary SAH build ([`super::sah`]) and
//! traced in the 8-wide form ([`WideTree`]). [`Tree`] holds the nodes over any primitives given
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
use super::sah::{binary, build_prims, MAX_LEAF};
pub use super::sah::{LeafCost, Node};
use super::wide::WideTree;
use crate::mesh::TriangleMesh;
#[cfg(test)]
use crate::ray::intersect_triangle;
use crate::ray::{Aabb, Ray};

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
/// 160 bytes, on a multiple of 32, so that each leaf is three cache lines
/// (every other leaf spanned four).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
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

impl Tree {
    /// Makes its occlusion walks go nearest first
    /// ([`WideTree::set_near_first`]).
    pub fn set_near_first(&mut self) {
        self.wide.set_near_first();
    }

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

    /// [`Tree::any`] for up to [`OCTET`] rays at once; see
    /// [`WideTree::any_octet`].
    #[inline(always)]
    pub fn any_octet(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        leaf: impl FnMut(u32, Range<usize>) -> u32,
        blocked: &mut [bool],
    ) {
        self.wide.any_octet(rays, t_max, leaf, blocked)
    }

    /// [`Tree::any_octet`] for the rays of a batch named by `order`
    /// (best grouped by octant, [`super::octet::open_by_octant`]), eight
    /// at a time: `leaf(octet, limits, rays, range)` is handed the octet
    /// and its limits with the mask and leaf range. Sets `blocked[k]` for
    /// each blocked ray `k` and leaves the others as they are.
    pub fn any_octets(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        order: &[u32],
        mut leaf: impl FnMut(&[Ray], &[f32], u32, Range<usize>) -> u32,
        blocked: &mut [bool],
    ) {
        for ks in order.chunks(OCTET) {
            let octet: ArrayVec<Ray, OCTET> = ks.iter().map(|&k| rays[k as usize]).collect();
            let limits: ArrayVec<f32, OCTET> = ks.iter().map(|&k| t_max[k as usize]).collect();
            let mut found = [false; OCTET];
            self.any_octet(
                &octet,
                &limits,
                |mask, range| leaf(&octet, &limits, mask, range),
                &mut found[..ks.len()],
            );
            for (&k, &f) in ks.iter().zip(&found) {
                blocked[k as usize] |= f;
            }
        }
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

    /// The corners of the triangles, each once (in no meaningful order):
    /// what an affine map of the mesh is bounded by.
    pub fn vertices(&self) -> Vec<Vec3> {
        let mut corners: Vec<[u32; 3]> = self
            .leaves
            .iter()
            .flat_map(|leaf| (0..MAX_LEAF).flat_map(|l| leaf.packet.triangle(l)))
            .map(|v| v.to_array().map(f32::to_bits))
            .collect();
        corners.sort_unstable();
        corners.dedup();
        corners
            .into_iter()
            .map(|c| Vec3::from_array(c.map(f32::from_bits)))
            .collect()
    }

    /// The closest hit along `ray` with t in (0, t_max]; of hits at the same
    /// t, the lowest triangle index.
    #[inline]
    pub fn intersect(&self, ray: &Ray, t_max: f32) -> Option<Hit> {
        self.intersect_where(ray, t_max, |_| true)
    }

    /// [`Bvh::intersect`] among the hits `keep` accepts: the closest hit
    /// that it accepts (a cut-out surface's test, which passes the ray
    /// through the others).
    #[inline]
    pub fn intersect_where(
        &self,
        ray: &Ray,
        t_max: f32,
        keep: impl Fn(&Hit) -> bool,
    ) -> Option<Hit> {
        let mut best: Option<Hit> = None;
        self.tree.closest(ray, t_max, |slots, t_best| {
            self.closest_in_leaf(ray, slots, t_best, &mut best, &keep)
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
                        let (t_best, hit) = (&mut t_best[k], &mut hits[k]);
                        self.closest_in_leaf(&rays[k], slots.clone(), t_best, hit, &|_| true);
                    }
                });
        }
    }

    /// Tests `ray` against the triangles in packet slots `slots`, and makes
    /// the closest of them within `t_best` that `keep` accepts the new
    /// `best`.
    #[inline(always)]
    fn closest_in_leaf(
        &self,
        ray: &Ray,
        slots: Range<usize>,
        t_best: &mut f32,
        best: &mut Option<Hit>,
        keep: &impl Fn(&Hit) -> bool,
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
            if hit.t <= *t_best && hit.beats(best) && keep(&hit) {
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

    /// [`Bvh::occluded`] among the hits `keep` accepts (as
    /// [`Bvh::intersect_where`]).
    #[inline]
    pub fn occluded_where(&self, ray: &Ray, t_max: f32, keep: impl Fn(&Hit) -> bool) -> bool {
        self.tree.any(ray, t_max, |slots| {
            let leaf = &self.leaves[slots.start / MAX_LEAF];
            let found = leaf.packet.hits(ray, t_max, slots.len());
            rays_of(found.mask).any(|l| {
                keep(&Hit {
                    t: found.t[l],
                    u: found.u[l],
                    v: found.v[l],
                    triangle: leaf.ids[l],
                })
            })
        })
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
    use crate::accel::sah::PARALLEL_MIN;
    use crate::accel::test_support::{ray_strategy, soup};
    use proptest::prelude::*;

    /// Three cache lines a leaf, wherever it lies in the array.
    #[test]
    fn a_leaf_is_160_bytes_on_a_multiple_of_32() {
        assert_eq!(std::mem::size_of::<Leaf>(), 160);
        assert_eq!(std::mem::align_of::<Leaf>(), 32);
    }

    /// Over a row of boxes that all block, a near-first occlusion walk
    /// tests the box nearest the rays first, whichever end they come
    /// from, alone and eight at a time; in lane order it may not.
    #[test]
    fn near_first_occlusion_walks_meet_the_nearest_blocker_first() {
        let boxes = 64;
        let bounds: Vec<Aabb> = (0..boxes)
            .map(|i| Aabb {
                min: Vec3::new(i as f32, 0.0, 0.0),
                max: Vec3::new(i as f32 + 0.5, 1.0, 1.0),
            })
            .collect();
        let (mut tree, order) = Tree::build(&bounds, LeafCost::PerInstance);
        tree.set_near_first();
        for (start, dir, nearest) in [(-1.0, 1.0, 0), (boxes as f32 + 1.0, -1.0, boxes - 1)] {
            let rays: Vec<Ray> = (0..OCTET)
                .map(|k| {
                    let y = 0.1 + 0.1 * k as f32;
                    Ray::new(Vec3::new(start, y, 0.5), Vec3::new(dir, 0.01, 0.0))
                })
                .collect();
            // The boxes of the first leaf a walk tests.
            let holds = |first: &Option<Range<usize>>| {
                first
                    .clone()
                    .is_some_and(|r| order[r].contains(&(nearest as u32)))
            };
            let mut first = None;
            let blocked = tree.any(&rays[0], f32::INFINITY, |range| {
                first.get_or_insert(range);
                true
            });
            assert!(blocked);
            assert!(holds(&first), "alone, from {start}: {first:?}");
            let mut first = None;
            let mut found = [false; OCTET];
            let limits = [f32::INFINITY; OCTET];
            tree.any_octet(
                &rays,
                &limits,
                |mask, range| {
                    first.get_or_insert(range);
                    mask
                },
                &mut found,
            );
            assert_eq!(found, [true; OCTET]);
            assert!(holds(&first), "eight at a time, from {start}: {first:?}");
        }
    }

    #[test]
    fn node_is_32_bytes() {
        assert_eq!(std::mem::size_of::<Node>(), 32);
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

    /// Two touching unit cubes side by side: half-areas 3 each, 5 together.
    /// Counted one traversal each, keeping them in one leaf (cost 2) beats
    /// splitting (1 + (3 + 3) / 5 = 2.2); counted as instances, four each,
    /// splitting (1 + (12 + 12) / 5 = 5.8) beats the leaf (8), so a ray
    /// meeting one cube's box is not carried into the other's space.
    #[test]
    fn instances_are_split_into_leaves_of_their_own() {
        let cube = |x: f32| Aabb {
            min: Vec3::new(x, 0.0, 0.0),
            max: Vec3::new(x + 1.0, 1.0, 1.0),
        };
        let boxes = [cube(0.0), cube(1.0)];
        let leaves = |cost| {
            let (tree, _) = Tree::build(&boxes, cost);
            let mut l = tree.wide.leaves();
            l.sort();
            l
        };
        assert_eq!(leaves(LeafCost::PerPrimitive), vec![(0, 2)]);
        assert_eq!(leaves(LeafCost::PerInstance), vec![(0, 1), (1, 1)]);
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
