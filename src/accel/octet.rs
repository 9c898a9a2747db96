//! Eight rays through the wide BVH together.
//!
//! Neighbouring camera rays, and the shadow rays that leave their hits
//! toward one sun, enter nearly the same boxes. An octet takes up to eight
//! of them down the tree as one: each node is fetched once for all of
//! them, and each of its children is tested against the eight rays at
//! once, one ray per AVX lane. A child goes on the stack with the rays that
//! entered it and their entry distances, and comes off it with only those
//! still reaching it; a leaf is handed the mask of the rays that reach it
//! (a mesh tests them one by one; the top level passes them on into an
//! instance's own tree as an octet). A subtree that only one or two rays
//! still enter is finished ray by ray: eight lanes for one ray cost more
//! than fetching its nodes again.
//!
//! Each lane computes exactly what [`WideTree::closest`] computes for its
//! ray (the same near and far planes, the same operations in the same
//! order), so a ray enters exactly the boxes it enters on its own. Only the
//! order of the visits can differ (it follows the first ray that entered a
//! node's children), and the hits do not depend on it: the tie rule of
//! [`super::Hit::beats`] picks one triangle whatever the order.
//!
//! Without AVX, or when the rays' directions differ in sign on some axis
//! (an octet straddling an axis, as bounce rays do), an octet is traced
//! ray by ray: for the closest hits, two rays at a time with their walks
//! interleaved node by node ([`WideTree::closest_each`]), so that one ray's
//! box tests run while the other's next node comes from memory (the
//! workload mesh's bounce rays 6–10% faster; three or four at a time, 5%
//! slower than one; measured again on 2 threads, one at a time 10% slower).
//!
//! Closest-hit batches keep their order rather than being regrouped by
//! octant first, as the occlusion walks' are ([`open_by_octant`]). Octets
//! of one octant made the workload mesh's bounce rays 9–11% faster through
//! [`super::Bvh::intersect_batch`], but a render's meshes only ever get
//! the top level's octets, and regrouping there (timed in one process,
//! taking turns) cost the top level's share of dem-rocks' path-traced
//! frame 4% and boulder-field's 9%, and gave cobble-rocks' 4%.

use std::ops::Range;

use super::wide::{WideTree, INTERLEAVE};
use crate::isa::Isa;
use crate::ray::Ray;

/// Rays in an octet.
pub const OCTET: usize = 8;

/// The indices of the set bits of `mask`, lowest first: the rays of an
/// octet that a mask names (or the SIMD lanes, in the terrain's walk).
#[inline(always)]
pub fn rays_of(mask: u32) -> impl Iterator<Item = usize> {
    let mut left = mask;
    std::iter::from_fn(move || {
        (left != 0).then(|| {
            let k = left.trailing_zeros() as usize;
            left &= left - 1;
            k
        })
    })
}

/// The rays of a batch that `blocked` leaves open, grouped by the octant
/// of their directions (in batch order within each, a counting sort), so
/// that rays sharing a direction, as a sun's shadow rays do, make up
/// octets together.
pub fn open_by_octant(rays: &[Ray], blocked: &[bool]) -> Vec<u32> {
    let octant = |k: usize| {
        let d = rays[k].dir;
        usize::from(d.x < 0.0) | usize::from(d.y < 0.0) << 1 | usize::from(d.z < 0.0) << 2
    };
    let open = || (0..rays.len()).filter(|&k| !blocked[k]);
    let mut start = [0usize; 9];
    for k in open() {
        start[octant(k) + 1] += 1;
    }
    for o in 0..8 {
        start[o + 1] += start[o];
    }
    let mut order = vec![0u32; start[8]];
    for k in open() {
        let o = octant(k);
        order[start[o]] = k as u32;
        start[o] += 1;
    }
    order
}

impl WideTree {
    /// [`WideTree::closest`] for up to [`OCTET`] rays at once: `leaf(rays,
    /// range, t_best)` tests the rays named by mask `rays` (bit `k` for
    /// `rays[k]`) against the primitives of a leaf, and lowers `t_best[k]`
    /// (which starts at `t_max[k]`) where ray `k` hits nearer.
    pub fn closest_octet(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        leaf: impl FnMut(u32, Range<usize>, &mut [f32; OCTET]),
    ) {
        assert!(rays.len() <= OCTET && t_max.len() == rays.len());
        #[cfg(target_arch = "x86_64")]
        if rays.len() > 1 {
            // SAFETY (both): the CPU runs the copy's instruction set.
            #[allow(unsafe_code)]
            match Isa::best() {
                Some(Isa::Avx512) => {
                    return unsafe { avx::closest_avx512(self, rays, t_max, leaf) }
                }
                Some(Isa::Avx | Isa::Avx2) => {
                    return unsafe { avx::closest(self, rays, t_max, leaf) }
                }
                None => {}
            }
        }
        one_by_one_closest(self, rays, t_max, leaf)
    }

    /// [`WideTree::any`] for up to [`OCTET`] rays at once: `blocked[k]`
    /// becomes whether ray `rays[k]` is blocked in some leaf it reaches
    /// within `t_max[k]`; `leaf(rays, range)` tests the rays of mask `rays`
    /// against a leaf and returns the mask of those blocked. A ray stops at
    /// its first hit; the octet stops when every ray has.
    pub fn any_octet(
        &self,
        rays: &[Ray],
        t_max: &[f32],
        leaf: impl FnMut(u32, Range<usize>) -> u32,
        blocked: &mut [bool],
    ) {
        assert!(rays.len() <= OCTET && t_max.len() == rays.len() && blocked.len() == rays.len());
        #[cfg(target_arch = "x86_64")]
        if rays.len() > 1 {
            // SAFETY (both): the CPU runs the copy's instruction set.
            #[allow(unsafe_code)]
            match Isa::best() {
                Some(Isa::Avx512) => {
                    return unsafe { avx::any_avx512(self, rays, t_max, leaf, blocked) }
                }
                Some(Isa::Avx | Isa::Avx2) => {
                    return unsafe { avx::any(self, rays, t_max, leaf, blocked) }
                }
                None => {}
            }
        }
        one_by_one_any(self, rays, t_max, leaf, blocked)
    }
}

/// Limits of an octet's lanes: `t_max` for the rays, −∞ past them.
fn lane_limits(t_max: &[f32]) -> [f32; OCTET] {
    let mut t = [f32::NEG_INFINITY; OCTET];
    t[..t_max.len()].copy_from_slice(t_max);
    t
}

/// [`WideTree::closest_octet`] ray by ray, [`INTERLEAVE`] walks at a time.
fn one_by_one_closest(
    tree: &WideTree,
    rays: &[Ray],
    t_max: &[f32],
    mut leaf: impl FnMut(u32, Range<usize>, &mut [f32; OCTET]),
) {
    let mut t_best = lane_limits(t_max);
    for (c, (rays, t_max)) in rays
        .chunks(INTERLEAVE)
        .zip(t_max.chunks(INTERLEAVE))
        .enumerate()
    {
        tree.closest_each(rays, t_max, |k, range, t| {
            let k = c * INTERLEAVE + k;
            t_best[k] = *t;
            leaf(1 << k, range, &mut t_best);
            *t = t_best[k];
        });
    }
}

/// [`WideTree::any_octet`] ray after ray.
fn one_by_one_any(
    tree: &WideTree,
    rays: &[Ray],
    t_max: &[f32],
    mut leaf: impl FnMut(u32, Range<usize>) -> u32,
    blocked: &mut [bool],
) {
    for (k, ray) in rays.iter().enumerate() {
        blocked[k] = tree.any(ray, t_max[k], |range| leaf(1 << k, range) != 0);
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx {
    use std::arch::x86_64::*;
    use std::ops::Range;

    use arrayvec::ArrayVec;

    use super::{lane_limits, one_by_one_any, one_by_one_closest, rays_of, OCTET};
    use crate::ray::{Ray, CULL_SLACK, ROBUST_FAR};
    use glam::Vec4;

    use crate::accel::wide::{push_sorted, WideNode, WideTree, HALVES, STACK, WIDTH};

    /// A subtree that no more than this many rays of an octet enter is
    /// traced ray by ray: testing eight lanes for them would cost more than
    /// fetching its nodes again.
    const ALONE: u32 = 2;

    /// The rays of an octet, lane by lane; lanes past the rays repeat the
    /// first ray and are never entered.
    struct Lanes {
        o: [__m256; 3],
        inv: [__m256; 3],
        /// Whether the directions are negative on each axis (the near
        /// plane is the box's max): the same for all the rays.
        neg: [bool; 3],
        /// Bit `k` for each ray.
        live: u32,
    }

    impl Lanes {
        /// The lanes of `rays`, if their directions have the same signs.
        #[target_feature(enable = "avx")]
        fn new(rays: &[Ray]) -> Option<Lanes> {
            let neg = |r: &Ray| [r.inv_dir.x < 0.0, r.inv_dir.y < 0.0, r.inv_dir.z < 0.0];
            let first = neg(&rays[0]);
            if rays.iter().any(|r| neg(r) != first) {
                return None;
            }
            // Origins and reciprocal directions, one array per coordinate,
            // filled ray by ray in one pass.
            let mut columns = [[0.0f32; OCTET]; 6];
            for k in 0..OCTET {
                let r = &rays[if k < rays.len() { k } else { 0 }];
                let (o, inv) = (r.origin, r.inv_dir);
                for (column, v) in columns.iter_mut().zip([o.x, o.y, o.z, inv.x, inv.y, inv.z]) {
                    column[k] = v;
                }
            }
            // SAFETY: each column holds eight f32.
            let load = |c: &[f32; OCTET]| unsafe { _mm256_loadu_ps(c.as_ptr()) };
            let [ox, oy, oz, ix, iy, iz] = &columns;
            Some(Lanes {
                o: [load(ox), load(oy), load(oz)],
                inv: [load(ix), load(iy), load(iz)],
                neg: first,
                live: (1u32 << rays.len()) - 1,
            })
        }

        /// Entry distance of each ray into each child of `n`, and the rays
        /// that enter it by their `t_limit` (bit `k` for ray `k`): lane by
        /// lane what [`WideTree::closest`]'s box test computes. Unused
        /// children have empty boxes, which no ray enters.
        ///
        /// Not compiled for AVX itself, so that it can be inlined into the
        /// traversals, which are.
        ///
        /// # Safety
        ///
        /// The CPU must support AVX.
        #[inline(always)]
        unsafe fn enter(&self, n: &WideNode, t_limit: __m256) -> ([__m256; WIDTH], [u32; WIDTH]) {
            let (nx, fx) = pick(self.neg[0], &n.min_x, &n.max_x);
            let (ny, fy) = pick(self.neg[1], &n.min_y, &n.max_y);
            let (nz, fz) = pick(self.neg[2], &n.min_z, &n.max_z);
            // SAFETY: the CPU supports AVX (the caller's promise).
            unsafe {
                let robust = _mm256_set1_ps(ROBUST_FAR);
                let mut t = [_mm256_setzero_ps(); WIDTH];
                let mut rays = [0; WIDTH];
                for c in 0..WIDTH {
                    let (h, l) = (c / 4, c % 4);
                    let slab = |p: &[Vec4; HALVES], axis: usize| {
                        let p = _mm256_set1_ps(p[h][l]);
                        _mm256_mul_ps(_mm256_sub_ps(p, self.o[axis]), self.inv[axis])
                    };
                    let t_near = _mm256_max_ps(
                        slab(nx, 0),
                        _mm256_max_ps(slab(ny, 1), _mm256_max_ps(slab(nz, 2), _mm256_setzero_ps())),
                    );
                    let t_far = _mm256_min_ps(
                        _mm256_mul_ps(slab(fx, 0), robust),
                        _mm256_min_ps(
                            _mm256_mul_ps(slab(fy, 1), robust),
                            _mm256_min_ps(_mm256_mul_ps(slab(fz, 2), robust), t_limit),
                        ),
                    );
                    t[c] = t_near;
                    rays[c] = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(t_near, t_far)) as u32;
                }
                (t, rays)
            }
        }
    }

    /// The near and far planes of boxes `min`..`max` along an axis.
    #[inline(always)]
    fn pick<'a, T>(neg: bool, min: &'a T, max: &'a T) -> (&'a T, &'a T) {
        if neg {
            (max, min)
        } else {
            (min, max)
        }
    }

    /// The children some of `active` entered: bit `c` for child `c`.
    #[inline(always)]
    fn entered_children(rays: &[u32; WIDTH], active: u32) -> u32 {
        (0..WIDTH).fold(0, |m, c| m | (((rays[c] & active) != 0) as u32) << c)
    }

    /// Tests the rays of `mask` against the leaf `range` for the occlusion
    /// walk: marks those `leaf` finds blocked and takes them out of
    /// `open`. Whether no ray is left open.
    #[inline(always)]
    fn leaf_blocks(
        leaf: &mut impl FnMut(u32, Range<usize>) -> u32,
        mask: u32,
        range: Range<usize>,
        blocked: &mut [bool],
        open: &mut u32,
    ) -> bool {
        let hit = leaf(mask, range) & mask;
        for k in rays_of(hit) {
            blocked[k] = true;
        }
        *open &= !hit;
        *open == 0
    }

    /// A subtree or leaf waiting on the stack: the rays that entered it and
    /// where.
    #[derive(Clone, Copy)]
    struct Entry {
        t: __m256,
        first: u32,
        count: u32,
        rays: u32,
        /// Entry distance of the first of those rays: the visiting order.
        key: f32,
    }

    /// Lane `k` of `v`.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX.
    #[inline(always)]
    unsafe fn lane(v: __m256, k: usize) -> f32 {
        let mut out = [0.0; OCTET];
        // SAFETY: `out` holds eight f32; the CPU supports AVX.
        unsafe { _mm256_storeu_ps(out.as_mut_ptr(), v) };
        out[k]
    }

    /// The octet traversals, compiled for one instruction set: written once,
    /// stamped out for each ([`crate::accel::isa`]).
    macro_rules! traversals {
        ($closest:ident, $any:ident, $features:literal) => {
            #[doc = concat!("[`WideTree::closest_octet`] compiled for `", $features, "`.")]
            #[target_feature(enable = $features)]
            pub(super) fn $closest(
                tree: &WideTree,
                rays: &[Ray],
                t_max: &[f32],
                mut leaf: impl FnMut(u32, Range<usize>, &mut [f32; OCTET]),
            ) {
                let Some(r) = Lanes::new(rays) else {
                    return one_by_one_closest(tree, rays, t_max, leaf);
                };
                // Lanes past the rays get a limit no box is entered by.
                let mut t_best = lane_limits(t_max);
                let limit = |t_best: &[f32; OCTET]| {
                    // SAFETY: `t_best` holds eight f32.
                    let t = unsafe { _mm256_loadu_ps(t_best.as_ptr()) };
                    _mm256_mul_ps(t, _mm256_set1_ps(CULL_SLACK))
                };
                let mut stack: ArrayVec<Entry, STACK> = ArrayVec::new();
                let (mut first, mut count, mut active) = (0u32, 0u32, r.live);
                loop {
                    if count == 0 {
                        let n = &tree.nodes[first as usize];
                        // SAFETY: this function runs only where the CPU has AVX.
                        let (t, rays) = unsafe { r.enter(n, limit(&t_best)) };
                        let base = stack.len();
                        let mut children = entered_children(&rays, active);
                        while children != 0 {
                            let c = children.trailing_zeros() as usize;
                            children &= children - 1;
                            let entered = rays[c] & active;
                            tree.prefetch_child(n, c);
                            let entry = Entry {
                                t: t[c],
                                first: n.first[c],
                                count: n.count[c],
                                rays: entered,
                                // SAFETY: this function runs only where the CPU has AVX.
                                key: unsafe { lane(t[c], entered.trailing_zeros() as usize) },
                            };
                            push_sorted(&mut stack, base, entry, |e| e.key);
                        }
                    } else {
                        leaf(
                            active,
                            first as usize..(first + count) as usize,
                            &mut t_best,
                        );
                    }
                    // The nearest entry some ray still reaches.
                    loop {
                        let Some(e) = stack.pop() else {
                            return;
                        };
                        let reach = _mm256_cmp_ps::<_CMP_LE_OQ>(e.t, limit(&t_best));
                        let still = e.rays & _mm256_movemask_ps(reach) as u32;
                        if still == 0 {
                            continue;
                        }
                        if e.count > 0 || still.count_ones() > ALONE {
                            (first, count, active) = (e.first, e.count, still);
                            break;
                        }
                        // Few rays left in this subtree: one by one.
                        for k in rays_of(still) {
                            let t_start = t_best[k];
                            tree.closest_with::<true>(e.first, &rays[k], t_start, |range, t| {
                                t_best[k] = *t;
                                leaf(1 << k, range, &mut t_best);
                                *t = t_best[k];
                            });
                        }
                    }
                }
            }

            #[doc = concat!("[`WideTree::any_octet`] compiled for `", $features, "`.")]
            #[target_feature(enable = $features)]
            pub(super) fn $any(
                tree: &WideTree,
                rays: &[Ray],
                t_max: &[f32],
                mut leaf: impl FnMut(u32, Range<usize>) -> u32,
                blocked: &mut [bool],
            ) {
                let Some(r) = Lanes::new(rays) else {
                    return one_by_one_any(tree, rays, t_max, leaf, blocked);
                };
                let limits = lane_limits(t_max);
                // SAFETY: `limits` holds eight f32.
                let t_limit = unsafe { _mm256_loadu_ps(limits.as_ptr()) };
                let t_limit = _mm256_mul_ps(t_limit, _mm256_set1_ps(CULL_SLACK));
                blocked.fill(false);
                // Rays with no hit yet.
                let mut open = r.live;
                // Entries: (first, count, the rays that entered, the first
                // of those rays' entry distance); count 0 is a node. Leaves
                // wait on the stack only when the walk goes nearest first.
                let mut stack: ArrayVec<(u32, u32, u32, f32), STACK> = ArrayVec::new();
                stack.push((0, 0, open, 0.0));
                while let Some((node, count, entered, _)) = stack.pop() {
                    let active = entered & open;
                    if active == 0 {
                        continue;
                    }
                    if count > 0 {
                        let range = node as usize..(node + count) as usize;
                        if leaf_blocks(&mut leaf, active, range, blocked, &mut open) {
                            return;
                        }
                        continue;
                    }
                    if active.count_ones() <= ALONE {
                        // Few rays left in this subtree: one by one.
                        for k in rays_of(active) {
                            let one = 1 << k;
                            if tree.any_with::<true>(node, &rays[k], t_max[k], |range| {
                                leaf(one, range) != 0
                            }) {
                                blocked[k] = true;
                                open &= !one;
                            }
                        }
                        if open == 0 {
                            return;
                        }
                        continue;
                    }
                    let n = &tree.nodes[node as usize];
                    // SAFETY: this function runs only where the CPU has AVX.
                    let (t, rays) = unsafe { r.enter(n, t_limit) };
                    let mut children = entered_children(&rays, active);
                    let mut ahead = children;
                    while ahead != 0 {
                        tree.prefetch_child(n, ahead.trailing_zeros() as usize);
                        ahead &= ahead - 1;
                    }
                    let base = stack.len();
                    while children != 0 {
                        let c = children.trailing_zeros() as usize;
                        children &= children - 1;
                        let entered = rays[c] & active & open;
                        if entered == 0 {
                            continue;
                        }
                        if tree.near_first {
                            // Sorted far to near onto the stack.
                            // SAFETY: this function runs only where the CPU has AVX.
                            let key = unsafe { lane(t[c], entered.trailing_zeros() as usize) };
                            let entry = (n.first[c], n.count[c], entered, key);
                            push_sorted(&mut stack, base, entry, |e| e.3);
                            continue;
                        }
                        if n.count[c] == 0 {
                            stack.push((n.first[c], 0, entered, 0.0));
                            continue;
                        }
                        let range = n.first[c] as usize..(n.first[c] + n.count[c]) as usize;
                        if leaf_blocks(&mut leaf, entered, range, blocked, &mut open) {
                            return;
                        }
                    }
                }
            }
        };
    }

    traversals!(closest, any, "avx");
    traversals!(closest_avx512, any_avx512, "avx,avx2,avx512f,avx512vl");
}

#[cfg(test)]
mod tests {
    use glam::Vec3;
    use proptest::prelude::*;

    use crate::accel::test_support::{ray_strategy, soup};
    use crate::accel::Bvh;
    use crate::isa::{caps_here, with_cap};
    use crate::mesh::TriangleMesh;
    use crate::ray::Ray;

    /// Checks that the batch calls give, ray by ray and bit for bit, what
    /// the one-ray calls give, with every compiled copy of the traversals
    /// this CPU runs, and that every copy gives what the scalar one-ray
    /// calls give; returns how many rays hit.
    fn batch_matches_one_by_one(bvh: &Bvh, rays: &[Ray], t_max: &[f32]) -> usize {
        let bits = |h: Option<crate::accel::Hit>| {
            h.map(|h| (h.t.to_bits(), h.u.to_bits(), h.v.to_bits(), h.triangle))
        };
        let one_by_one = || -> Vec<_> {
            rays.iter()
                .zip(t_max)
                .map(|(ray, &t)| (bits(bvh.intersect(ray, t)), bvh.occluded(ray, t)))
                .collect()
        };
        let scalar = with_cap(None, one_by_one);
        for cap in caps_here() {
            let (hits, blocked, one) = with_cap(cap, || {
                let mut hits = vec![None; rays.len()];
                bvh.intersect_batch(rays, t_max, &mut hits);
                let mut blocked = vec![true; rays.len()];
                bvh.occluded_batch(rays, t_max, &mut blocked);
                (hits, blocked, one_by_one())
            });
            for k in 0..rays.len() {
                assert_eq!(one[k], scalar[k], "{cap:?}: ray {k} alone");
                assert_eq!(bits(hits[k]), one[k].0, "{cap:?}: closest hit of ray {k}");
                assert_eq!(blocked[k], one[k].1, "{cap:?}: occlusion of ray {k}");
            }
        }
        scalar.iter().filter(|(h, _)| h.is_some()).count()
    }

    fn terrain() -> TriangleMesh {
        crate::terrain::TerrainGrid::diamond_square(64, 48, 8.0, 9, [32.0, 24.0]).to_mesh(false)
    }

    /// Camera rays in rows of eight, as a render's patches give them (same
    /// signs: traced as octets), and shadow rays toward one sun from their
    /// hits; batches of every length up to and past an octet.
    #[test]
    fn coherent_octets_find_the_hits_of_single_rays() {
        let mesh = terrain();
        let bvh = Bvh::build(&mesh);
        let eye = Vec3::new(-20.0, 14.0, -16.0);
        let mut camera = Vec::new();
        for y in 0..40 {
            for x in 0..64 {
                let dir = Vec3::new(0.3 + x as f32 * 0.011, -0.35 - y as f32 * 0.012, 0.8);
                camera.push(Ray::new(eye, dir.normalize()));
            }
        }
        let t_max: Vec<f32> = (0..camera.len())
            .map(|k| if k % 7 == 3 { 25.0 } else { f32::INFINITY })
            .collect();
        let hit = batch_matches_one_by_one(&bvh, &camera, &t_max);
        assert!(
            hit > camera.len() / 2,
            "{hit} of {} camera rays hit",
            camera.len()
        );
        // Shadow rays toward the sun from the camera rays' hits.
        let mut hits = vec![None; camera.len()];
        bvh.intersect_batch(&camera, &t_max, &mut hits);
        let sun = Vec3::new(-1.0, 0.45, 0.6).normalize();
        let shadow: Vec<Ray> = camera
            .iter()
            .zip(&hits)
            .filter_map(|(ray, hit)| {
                let h = (*hit)?;
                let n = mesh.face_normal(h.triangle as usize);
                let n = if n.dot(ray.dir) > 0.0 { -n } else { n };
                Some(Ray::new(ray.origin + ray.dir * h.t + n * 1e-3, sun))
            })
            .collect();
        let inf = vec![f32::INFINITY; shadow.len()];
        let mut blocked = vec![false; shadow.len()];
        bvh.occluded_batch(&shadow, &inf, &mut blocked);
        let n_blocked = blocked.iter().filter(|&&b| b).count();
        assert!(
            n_blocked > 20 && n_blocked < shadow.len() - 20,
            "{n_blocked} of {} shadow rays blocked",
            shadow.len()
        );
        batch_matches_one_by_one(&bvh, &shadow, &inf);
        for len in 1..=17 {
            batch_matches_one_by_one(&bvh, &camera[..len], &t_max[..len]);
        }
    }

    /// Rays straight down onto the grid's vertices and edges (each hits
    /// several triangles at the same t, so the tie rule decides; their x
    /// and z slabs are 0 · ∞ = NaN on box faces), and octets whose
    /// directions differ in sign.
    #[test]
    fn ties_axis_rays_and_mixed_signs_match_single_rays() {
        let mesh = terrain();
        let bvh = Bvh::build(&mesh);
        let (cell_x, cell_z) = (32.0 / 63.0, 24.0 / 47.0);
        let mut down = Vec::new();
        for i in 0..48 {
            // Even rows on the vertices, odd rows on the edges between.
            for j in 0..64 - i % 2 {
                let x = j as f32 * cell_x - 16.0 + if i % 2 == 0 { 0.0 } else { cell_x / 2.0 };
                let z = i as f32 * cell_z - 12.0;
                down.push(Ray::new(Vec3::new(x, 30.0, z), Vec3::NEG_Y));
            }
        }
        let inf = vec![f32::INFINITY; down.len()];
        assert_eq!(batch_matches_one_by_one(&bvh, &down, &inf), down.len());
        let fan: Vec<Ray> = (0..256)
            .map(|k| {
                let a = k as f32 * 0.7;
                Ray::new(
                    Vec3::new(0.0, 6.0, 0.0),
                    Vec3::new(a.cos(), -0.4, a.sin()).normalize(),
                )
            })
            .collect();
        let inf = vec![f32::INFINITY; fan.len()];
        assert!(batch_matches_one_by_one(&bvh, &fan, &inf) > 100);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Random soups and random rays, same-signed octets among them.
        #[test]
        fn random_batches_match_single_rays(
            coords in prop::collection::vec(-10.0f32..10.0, 9..900),
            rays in prop::collection::vec(ray_strategy(), 1..40),
            t_max in prop::collection::vec(prop_oneof![Just(f32::INFINITY), 1.0f32..30.0], 40),
            flip in any::<bool>(),
        ) {
            let coords = &coords[..coords.len() / 9 * 9];
            let mesh = soup(coords);
            let bvh = Bvh::build(&mesh);
            // Half the cases turn every direction into the positive
            // octant, so that octets take the lanes.
            let rays: Vec<Ray> = rays
                .iter()
                .map(|r| if flip { Ray::new(r.origin, r.dir.abs()) } else { *r })
                .collect();
            batch_matches_one_by_one(&bvh, &rays, &t_max[..rays.len()]);
        }
    }
}
