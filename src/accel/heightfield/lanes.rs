//! Eight or sixteen walks at once, one per SIMD lane.
//!
//! The single-ray walk spends most of its time in a chain of dependent
//! loads and branches it cannot predict (down or across, x or z): about
//! twenty steps a ray, each waiting on the last. Here eight rays (AVX2) or
//! sixteen (AVX-512) walk side by side, each in its own lane, and every
//! step is computed for all of them with selects instead of branches: the range of the block each lane
//! stands in, its exit distances, the step down and the step across (and
//! up), of which each lane keeps the one its walk takes. A lane that
//! reaches a leaf cell its ray may hit tests the cell's two triangles in
//! the lanes too (the watertight test, with the ray's axis permutation as
//! selects); only a cell whose edge functions come out exactly zero goes
//! to the scalar test and its f64 fallback. A lane whose ray is done takes
//! the next ray of the batch at once, so the lanes stay full until the
//! batch runs out; where each ray starts (its interval in the field's box
//! and its start block) is found for eight rays at a time, in the lanes
//! too ([`Starts`]), and two groups of lanes take turns, so that one's
//! loads and divisions overlap the other's work.
//!
//! Every lane computes exactly what [`HeightField::walk`] and
//! [`HeightField::closest_in_cell`] compute, with the same operations in
//! the same order (no fused multiply-add; grid lines recomputed as
//! [`crate::terrain::TerrainGrid::position`] places them), so each ray
//! visits the same cells and gets the same hit as on its own: the tests
//! check this bit for bit.
//!
//! The walk is one body, generic over its lane vectors ([`Simd`]), and
//! compiled twice ([`Isa`]): in eight AVX2 lanes, and on CPUs with
//! AVX-512 in sixteen, whose operations are the same per lane, so both
//! give the same bits. On an Intel Xeon with AVX-512 the sixteen lanes
//! trace 16–48% more rays a second than the eight did there.
//!
//! The AVX2 copy reads each lane's pair of heights with scalar 64-bit
//! loads: on AMD Zen 3, where it runs, an 8-wide gather costs ~5 ns, more
//! than the loads it replaces. So does the AVX-512 copy: on the project's
//! AMD Zen 4 machine, 64-bit loads put into the lanes trace 2–16% more
//! rays a second than the 64-bit gathers did (on the Xeon it was first
//! tuned on, they had been 13–20% slower than the gathers).

use std::arch::x86_64::*;

use super::simd::{Avx2, Avx512, Simd, MAX_LANES};
use super::{FieldView, HeightField, Hint, Query, Start, PATIENCE};
use crate::accel::bvh::Hit;
use crate::accel::octet::rays_of;
use crate::isa::Isa;
use crate::ray::{Ray, CULL_SLACK, ROBUST_FAR};

/// The grid lines of one axis as [`crate::terrain::TerrainGrid::position`]
/// places them, lane by lane: line j at (j / cells − ½) · size.
#[derive(Clone, Copy)]
struct Lines<S: Simd> {
    cells: S::F,
    /// 1 / cells where that is exact (cells a power of two), so that the
    /// division becomes a multiplication with the same result.
    exact_reciprocal: Option<S::F>,
    size: S::F,
}

impl<S: Simd> Lines<S> {
    #[inline(always)]
    unsafe fn new(samples: usize, size: f32) -> Lines<S> {
        let cells = samples - 1;
        Lines {
            cells: S::splat(cells as f32),
            exact_reciprocal: cells
                .is_power_of_two()
                .then(|| S::splat(1.0 / cells as f32)),
            size: S::splat(size),
        }
    }

    /// Line `index` of each lane.
    #[inline(always)]
    unsafe fn at(self, index: S::I) -> S::F {
        let j = S::to_float(index);
        let fraction = match self.exact_reciprocal {
            Some(r) => S::mul(j, r),
            None => S::div(j, self.cells),
        };
        S::mul(S::sub(fraction, S::splat(0.5)), self.size)
    }
}

/// Where eight consecutive rays of a batch start their walks, found
/// together, lane by lane exactly as [`HeightField::start_from`] finds
/// each: the field's box interval, the slack, the start parameter and
/// level, and the start block from a guess that is checked against the
/// block's lines by the descent's rule (a wrong guess, which is rare, is
/// corrected by the scalar search).
#[repr(C, align(32))]
#[derive(Default)]
struct Starts {
    t: [f32; 8],
    t_leave: [f32; 8],
    eps: [f32; 8],
    level: [i32; 8],
    ceiling: [i32; 8],
    bi: [i32; 8],
    bj: [i32; 8],
    /// Lanes whose ray misses the field's box (no walk), one bit each.
    miss: u32,
    /// Lanes whose ray runs exactly along a grid line (walked on its own).
    alone: u32,
    /// Index in the batch of the ray in lane 0 (a multiple of eight), or
    /// `usize::MAX` before the first group.
    first: usize,
}

impl Starts {
    /// Before the first group of a batch.
    fn new() -> Starts {
        Starts {
            first: usize::MAX,
            ..Starts::default()
        }
    }

    /// The starts of rays `first..first + 8` of `rays` (those that exist).
    #[target_feature(enable = "avx2")]
    unsafe fn find(
        &mut self,
        field: &HeightField,
        rays: &[Ray],
        t_max: &[f32],
        hints: &[Hint],
        first: usize,
    ) {
        self.first = first;
        let count = (rays.len() - first).min(8);
        let [ox, oy, oz, dx, dy, dz, inv_x, inv_y, inv_z, t_max, hint_t, hint_level] = if count == 8
        {
            gather_eight(
                &rays[first..first + 8],
                &t_max[first..first + 8],
                &hints[first..first + 8],
            )
        } else {
            // The batch's last few rays, padded with copies of its last
            // one (whose lanes are never read).
            let at = |lane: usize| first + lane.min(count - 1);
            gather_eight(
                &std::array::from_fn::<_, 8, _>(|lane| rays[at(lane)]),
                &std::array::from_fn::<_, 8, _>(|lane| t_max[at(lane)]),
                &std::array::from_fn::<_, 8, _>(|lane| hints[at(lane)]),
            )
        };
        let hint_level = _mm256_min_epu32(
            _mm256_castps_si256(hint_level),
            _mm256_set1_epi32(field.top as i32),
        );
        let zero = _mm256_setzero_ps();
        let zero_dir = _mm256_movemask_ps(_mm256_or_ps(
            _mm256_cmp_ps::<_CMP_EQ_OQ>(dx, zero),
            _mm256_cmp_ps::<_CMP_EQ_OQ>(dz, zero),
        )) as u32;

        // The box interval, as `Aabb::interval`: each axis' slab, nearer
        // end first (a NaN end swaps nothing and is passed over).
        let b = field.bounds;
        let mut t_near = zero;
        let mut t_far = _mm256_mul_ps(t_max, _mm256_set1_ps(CULL_SLACK));
        for (low, high, o, inv) in [
            (b.min.x, b.max.x, ox, inv_x),
            (b.min.y, b.max.y, oy, inv_y),
            (b.min.z, b.max.z, oz, inv_z),
        ] {
            let t1 = _mm256_mul_ps(_mm256_sub_ps(_mm256_set1_ps(low), o), inv);
            let t2 = _mm256_mul_ps(_mm256_sub_ps(_mm256_set1_ps(high), o), inv);
            let swap = _mm256_cmp_ps::<_CMP_GT_OQ>(t1, t2);
            let near = _mm256_blendv_ps(t1, t2, swap);
            let far = _mm256_mul_ps(_mm256_blendv_ps(t2, t1, swap), _mm256_set1_ps(ROBUST_FAR));
            t_near = _mm256_blendv_ps(t_near, near, _mm256_cmp_ps::<_CMP_GT_OQ>(near, t_near));
            t_far = _mm256_blendv_ps(t_far, far, _mm256_cmp_ps::<_CMP_LT_OQ>(far, t_far));
        }
        let (t_enter, t_leave) = (t_near, t_far);
        let sign = _mm256_set1_ps(-0.0);
        let abs = |v: __m256| _mm256_andnot_ps(sign, v);
        let inside = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_LE_OQ>(t_enter, t_leave),
            _mm256_cmp_ps::<_CMP_LT_OQ>(abs(t_leave), _mm256_set1_ps(f32::INFINITY)),
        );
        let eps = _mm256_mul_ps(
            _mm256_add_ps(
                _mm256_add_ps(
                    _mm256_add_ps(abs(oy), abs(_mm256_mul_ps(dy, t_leave))),
                    _mm256_set1_ps(b.min.y.abs()),
                ),
                _mm256_set1_ps(b.max.y.abs()),
            ),
            _mm256_set1_ps(4e-6),
        );

        // The start: a hint's, else the entry, in the ray's own cell when
        // it starts inside the box, four levels below the root otherwise.
        let hinted = _mm256_cmp_ps::<_CMP_GT_OQ>(hint_t, t_enter);
        let t = _mm256_blendv_ps(t_enter, _mm256_min_ps(hint_t, t_leave), hinted);
        let top = _mm256_set1_epi32(field.top as i32);
        let unhinted_level = _mm256_andnot_si256(
            _mm256_castps_si256(_mm256_cmp_ps::<_CMP_EQ_OQ>(t_enter, zero)),
            _mm256_max_epi32(
                _mm256_sub_epi32(top, _mm256_set1_epi32(4)),
                _mm256_setzero_si256(),
            ),
        );
        let level = _mm256_blendv_epi8(unhinted_level, hint_level, _mm256_castps_si256(hinted));
        let ceiling = _mm256_blendv_epi8(top, hint_level, _mm256_castps_si256(hinted));

        // The start block: the cell a guess from the point at t gives,
        // checked against its two lines on each axis (`last`: its last
        // cell).
        let cell =
            |o: __m256, d: __m256, inv: __m256, lines: &[f32], along: Lines<Avx2>, last: usize| {
                let p = _mm256_add_ps(o, _mm256_mul_ps(d, t));
                let (first, end) = (lines[0], lines[last + 1]);
                let guess = _mm256_mul_ps(
                    _mm256_div_ps(
                        _mm256_sub_ps(p, _mm256_set1_ps(first)),
                        _mm256_set1_ps(end - first),
                    ),
                    _mm256_set1_ps((last + 1) as f32),
                );
                // As `as u32` then `min(last)`: NaN and negatives to 0.
                let j = _mm256_cvttps_epi32(_mm256_min_ps(
                    _mm256_max_ps(guess, zero),
                    _mm256_set1_ps(last as f32),
                ));
                let forward = _mm256_cmp_ps::<_CMP_GT_OQ>(inv, zero);
                let past = |line: __m256| {
                    _mm256_cmp_ps::<_CMP_GE_OQ>(t, _mm256_mul_ps(_mm256_sub_ps(line, o), inv))
                };
                let one = _mm256_set1_epi32(1);
                let low = past(along.at(j));
                let high = past(along.at(_mm256_add_epi32(j, one)));
                let at_first = _mm256_castsi256_ps(_mm256_cmpeq_epi32(j, _mm256_setzero_si256()));
                let at_last =
                    _mm256_castsi256_ps(_mm256_cmpeq_epi32(j, _mm256_set1_epi32(last as i32)));
                // Past the low line the way the ray goes, and not the high one.
                let low_ok = _mm256_or_ps(
                    at_first,
                    _mm256_xor_ps(
                        _mm256_xor_ps(low, forward),
                        _mm256_castsi256_ps(_mm256_set1_epi32(-1)),
                    ),
                );
                let high_ok = _mm256_or_ps(at_last, _mm256_xor_ps(high, forward));
                (j, _mm256_movemask_ps(_mm256_and_ps(low_ok, high_ok)) as u32)
            };
        let (j, j_ok) = cell(
            ox,
            dx,
            inv_x,
            &field.xs,
            Lines::<Avx2>::new(field.cols, field.size[0]),
            field.cols - 2,
        );
        let (i, i_ok) = cell(
            oz,
            dz,
            inv_z,
            &field.zs,
            Lines::<Avx2>::new(field.rows, field.size[1]),
            field.rows - 2,
        );
        let at_top = _mm256_cmpeq_epi32(level, top);
        let block = |index: __m256i| _mm256_andnot_si256(at_top, _mm256_srlv_epi32(index, level));

        Avx2::store(self.t.as_mut_ptr(), t);
        Avx2::store(self.t_leave.as_mut_ptr(), t_leave);
        Avx2::store(self.eps.as_mut_ptr(), eps);
        Avx2::store_i(self.level.as_mut_ptr(), level);
        Avx2::store_i(self.ceiling.as_mut_ptr(), ceiling);
        Avx2::store_i(self.bi.as_mut_ptr(), block(i));
        Avx2::store_i(self.bj.as_mut_ptr(), block(j));
        let lanes = (1u32 << count) - 1;
        self.miss = !(_mm256_movemask_ps(inside) as u32) & lanes;
        self.alone = 0;
        // Rays with a zero x or z direction may run along a grid line.
        for lane in rays_of(zero_dir & lanes & !self.miss) {
            if field.runs_along_a_line(&rays[first + lane]) != (false, false) {
                self.alone |= 1 << lane;
            }
        }
        // Wrong guesses: the scalar search.
        let at_top = _mm256_movemask_ps(_mm256_castsi256_ps(at_top)) as u32;
        let wrong = !(i_ok & j_ok) & lanes & !self.miss & !self.alone & !at_top;
        for lane in rays_of(wrong) {
            let [bi, bj] =
                field.block_at(&rays[first + lane], self.t[lane], self.level[lane] as u32);
            self.bi[lane] = bi as i32;
            self.bj[lane] = bj as i32;
        }
    }

    /// The start of lane `lane`'s ray (None when it misses the box).
    fn get(&self, lane: usize) -> Option<Start> {
        (self.miss & (1 << lane) == 0).then(|| Start {
            t_start: self.t[lane],
            t_leave: self.t_leave[lane],
            eps: self.eps[lane],
            level: self.level[lane] as u32,
            ceiling: self.ceiling[lane] as u32,
            block: [self.bi[lane] as usize, self.bj[lane] as usize],
        })
    }
}

/// Eight rays' origins, directions, reciprocal directions, `t_max` and
/// hints (t, and the level's bits), one vector per quantity: the rays'
/// first eight floats are read as vectors and transposed.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather_eight(rays: &[Ray], t_max: &[f32], hints: &[Hint]) -> [__m256; 12] {
    assert!(rays.len() == 8 && t_max.len() == 8 && hints.len() == 8);
    const { assert!(std::mem::size_of::<Ray>() >= 9 * 4) };
    const { assert!(std::mem::size_of::<Hint>() == 8) };
    // SAFETY: `Ray` is `repr(C)` with origin, dir and inv_dir first, nine
    // f32 in all (checked above), so each ray's first eight floats are in
    // bounds; the slices hold eight elements (asserted).
    let row = |k: usize| unsafe { _mm256_loadu_ps(&rays[k] as *const Ray as *const f32) };
    let [r0, r1, r2, r3, r4, r5, r6, r7] = std::array::from_fn(row);
    // The 8 × 8 transpose: pairs, then quadruples, then halves.
    let (a0, a1) = (_mm256_unpacklo_ps(r0, r1), _mm256_unpackhi_ps(r0, r1));
    let (a2, a3) = (_mm256_unpacklo_ps(r2, r3), _mm256_unpackhi_ps(r2, r3));
    let (a4, a5) = (_mm256_unpacklo_ps(r4, r5), _mm256_unpackhi_ps(r4, r5));
    let (a6, a7) = (_mm256_unpacklo_ps(r6, r7), _mm256_unpackhi_ps(r6, r7));
    let (b0, b1) = (
        _mm256_shuffle_ps::<0b01_00_01_00>(a0, a2),
        _mm256_shuffle_ps::<0b11_10_11_10>(a0, a2),
    );
    let (b2, b3) = (
        _mm256_shuffle_ps::<0b01_00_01_00>(a1, a3),
        _mm256_shuffle_ps::<0b11_10_11_10>(a1, a3),
    );
    let (b4, b5) = (
        _mm256_shuffle_ps::<0b01_00_01_00>(a4, a6),
        _mm256_shuffle_ps::<0b11_10_11_10>(a4, a6),
    );
    let (b6, b7) = (
        _mm256_shuffle_ps::<0b01_00_01_00>(a5, a7),
        _mm256_shuffle_ps::<0b11_10_11_10>(a5, a7),
    );
    let low = |x: __m256, y: __m256| _mm256_permute2f128_ps::<0x20>(x, y);
    let high = |x: __m256, y: __m256| _mm256_permute2f128_ps::<0x31>(x, y);
    let inv_z = _mm256_setr_ps(
        rays[0].inv_dir.z,
        rays[1].inv_dir.z,
        rays[2].inv_dir.z,
        rays[3].inv_dir.z,
        rays[4].inv_dir.z,
        rays[5].inv_dir.z,
        rays[6].inv_dir.z,
        rays[7].inv_dir.z,
    );
    // Hints are (t, level) pairs: evens and odds of two vectors of four.
    // SAFETY: eight 8-byte hints are 64 bytes in bounds.
    let (h0, h1) = unsafe {
        let at = hints.as_ptr() as *const f32;
        (_mm256_loadu_ps(at), _mm256_loadu_ps(at.add(8)))
    };
    let order =
        |v: __m256| _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)));
    [
        low(b0, b4),
        low(b1, b5),
        low(b2, b6),
        low(b3, b7),
        high(b0, b4),
        high(b1, b5),
        high(b2, b6),
        high(b3, b7),
        inv_z,
        _mm256_loadu_ps(t_max.as_ptr()),
        order(_mm256_shuffle_ps::<0b10_00_10_00>(h0, h1)),
        order(_mm256_shuffle_ps::<0b11_01_11_01>(h0, h1)),
    ]
}

/// The start of each ray of `rays` as the lanes find them, and whether it
/// runs along a grid line (for the tests, against
/// [`HeightField::start_from`]).
///
/// # Safety
///
/// As [`walk`].
#[cfg(test)]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn starts(
    field: &HeightField,
    rays: &[Ray],
    t_max: &[f32],
    hints: &[Hint],
) -> Vec<(Option<Start>, bool)> {
    let mut starts = Starts::new();
    (0..rays.len())
        .map(|k| {
            if k % 8 == 0 {
                starts.find(field, rays, t_max, hints, k);
            }
            (starts.get(k % 8), starts.alone & (1 << (k % 8)) != 0)
        })
        .collect()
}

/// Whether this CPU runs the lanes, and which copy: the best instruction
/// set it has, if that is AVX2 or more.
pub(super) fn isa() -> Option<Isa> {
    Isa::best().filter(|&isa| isa >= Isa::Avx2)
}

/// Rays [`walk`] walks side by side with `isa`.
pub(super) fn width(isa: Isa) -> usize {
    match isa {
        Isa::Avx512 => Avx512::LANES,
        Isa::Avx | Isa::Avx2 => Avx2::LANES,
    }
}

/// The walk state of up to [`MAX_LANES`] lanes, one array per quantity
/// (a vector of `S::LANES` lanes reads the first `S::LANES` of each).
#[repr(C, align(64))]
#[derive(Default)]
struct State {
    ox: [f32; MAX_LANES],
    oy: [f32; MAX_LANES],
    oz: [f32; MAX_LANES],
    dy: [f32; MAX_LANES],
    inv_x: [f32; MAX_LANES],
    inv_z: [f32; MAX_LANES],
    t_leave: [f32; MAX_LANES],
    eps: [f32; MAX_LANES],
    /// Where the lane entered its current block.
    t: [f32; MAX_LANES],
    t_best: [f32; MAX_LANES],
    level: [i32; MAX_LANES],
    bi: [i32; MAX_LANES],
    bj: [i32; MAX_LANES],
    /// The highest level the lane climbs to while `wait` is positive, and
    /// the steps left before it climbs to the root's again
    /// ([`super::PATIENCE`]).
    ceiling: [i32; MAX_LANES],
    wait: [i32; MAX_LANES],
    /// Index of the lane's ray in the batch; −1 for an empty lane.
    ray: [i32; MAX_LANES],
    /// The watertight test's shear, and its dominant axis as masks (all
    /// ones where it is x, where it is y; z otherwise).
    sx: [f32; MAX_LANES],
    sy: [f32; MAX_LANES],
    sz: [f32; MAX_LANES],
    kz_x: [i32; MAX_LANES],
    kz_y: [i32; MAX_LANES],
    /// −1 where the lane's ray runs along the field's light (its horizons
    /// apply), 0 elsewhere.
    along_light: [i32; MAX_LANES],
    /// The best hit so far (its t is `t_best`): barycentrics and triangle,
    /// `NO_HIT` for none.
    best_u: [f32; MAX_LANES],
    best_v: [f32; MAX_LANES],
    best_triangle: [i32; MAX_LANES],
}

/// `best_triangle` of a lane without a hit: above every triangle index, so
/// that any hit beats it (as any hit beats `None` in [`Hit::beats`]).
const NO_HIT: i32 = i32::MAX;

/// Groups of lanes walked in turn.
const GROUPS: usize = 2;

/// Levels the lanes handle: the start of each level in the range array
/// is looked up in a 16-entry table.
pub(super) const LANE_LEVELS: u32 = 16;

/// Answers `query` for every ray of `rays` (with its own `t_max`) as
/// [`HeightField::intersect`] or [`HeightField::occluded`] would: each lane
/// walks as [`HeightField::walk`] does and tests a cell's two triangles as
/// [`HeightField::closest_in_cell`] does, all in the lanes; a cell whose
/// edge functions come out exactly zero (the test's f64 fallback) is
/// tested by the scalar code.
///
/// # Safety
///
/// `isa` must be AVX2 or more and the CPU must run it ([`isa`]), and the
/// field's sample and range counts must fit in an `i32` and it must have
/// at most [`LANE_LEVELS`] levels ([`HeightField::fits_lanes`]).
pub(super) unsafe fn walk<Q: Query>(
    isa: Isa,
    field: &HeightField,
    view: &FieldView,
    rays: &[Ray],
    t_max: &[f32],
    hints: &[Hint],
    query: &mut Q,
) {
    match isa {
        Isa::Avx512 => walk_avx512(field, view, rays, t_max, hints, query),
        Isa::Avx | Isa::Avx2 => walk_avx2(field, view, rays, t_max, hints, query),
    }
}

/// [`walk`] compiled for one instruction set and its lane vectors: the
/// body, inlined under the set's features.
macro_rules! walk_for {
    ($name:ident, $simd:ty, $features:literal) => {
        #[doc = concat!("[`walk`] in `", stringify!($simd), "` lanes, compiled for `", $features, "`.")]
        #[target_feature(enable = $features)]
        unsafe fn $name<Q: Query>(
            field: &HeightField,
            view: &FieldView,
            rays: &[Ray],
            t_max: &[f32],
            hints: &[Hint],
            query: &mut Q,
        ) {
            walk_lanes::<$simd, Q>(field, view, rays, t_max, hints, query)
        }
    };
}

walk_for!(walk_avx2, Avx2, "avx2");
walk_for!(walk_avx512, Avx512, "avx2,avx512f,avx512vl");

/// The body of [`walk`] in `S`'s lanes, inlined into each instruction
/// set's copy (which then inlines the lane operations under its own
/// features).
#[inline(always)]
unsafe fn walk_lanes<S: Simd, Q: Query>(
    field: &HeightField,
    view: &FieldView,
    rays: &[Ray],
    t_max: &[f32],
    hints: &[Hint],
    query: &mut Q,
) {
    let lanes = S::LANES;
    const { assert!(S::LANES <= MAX_LANES, "the state holds MAX_LANES lanes") };
    let mut base = [0i32; LANE_LEVELS as usize];
    for (b, &l) in base.iter_mut().zip(&field.level_base) {
        *b = l as i32;
    }
    // Blocks of `level` along x and z: ⌈cells / 2ᵏ⌉ = ((cells − 1) >> k) + 1.
    let cw_less = S::splat_i(field.cols as i32 - 2);
    let ch_less = S::splat_i(field.rows as i32 - 2);
    let one = S::splat_i(1);
    let level_cols = |level: S::I| S::add_i(S::shr(cw_less, level), one);
    let level_rows = |level: S::I| S::add_i(S::shr(ch_less, level), one);
    // Grid line coordinates as `TerrainGrid::position` computes them.
    let (x_lines, z_lines) = (
        Lines::<S>::new(field.cols, field.size[0]),
        Lines::<S>::new(field.rows, field.size[1]),
    );
    // Groups of lanes: while one waits on a load or a division, the
    // other's independent work fills the pipeline.
    let mut groups: [State; GROUPS] = std::array::from_fn(|_| State {
        ray: [-1; MAX_LANES],
        ..State::default()
    });
    let mut batch = Batch {
        rays,
        t_max,
        hints,
        next: 0,
        starts: Starts::new(),
    };
    for s in groups.iter_mut() {
        for lane in 0..lanes {
            fill(field, view, &mut batch, s, lane, query);
        }
    }

    let data = field.data.as_ptr();
    let ranges_at = S::splat_i(field.ranges_at as i32);
    let cw = S::splat_i((field.cols - 1) as i32);
    let ch = S::splat_i((field.rows - 1) as i32);
    let cols = S::splat_i(field.cols as i32);
    let top = S::splat_i(field.top as i32);
    let zero = S::splat_i(0);
    let zero_f = S::splat(0.0);
    let slack = S::splat(CULL_SLACK);
    let robust_far = S::splat(ROBUST_FAR);
    let f = |v: &[f32; MAX_LANES]| S::load(v.as_ptr());
    let i = |v: &[i32; MAX_LANES]| S::load_i(v.as_ptr());
    // Occlusion along the light: the horizons of levels from `from_level`
    // up, stored from the start of that level.
    let light = view.light.as_ref().filter(|_| Q::ANY).map(|h| {
        (
            h.values.as_ptr(),
            S::splat_i(h.from_level as i32 - 1),
            S::splat_i(field.level_base[h.from_level as usize] as i32),
        )
    });

    loop {
        let mut idle = 0;
        for s in groups.iter_mut() {
            let active = S::gt_i(i(&s.ray), S::splat_i(-1));
            if S::bits(active) == 0 {
                idle += 1;
                continue;
            }
            let (level, bi, bj) = (i(&s.level), i(&s.bi), i(&s.bj));
            let (ox, oy, oz) = (f(&s.ox), f(&s.oy), f(&s.oz));
            let (inv_x, inv_z) = (f(&s.inv_x), f(&s.inv_z));
            let (dy, eps, t_leave, t) = (f(&s.dy), f(&s.eps), f(&s.t_leave), f(&s.t));
            // Lanes whose ray travels toward +x (+z), and whose ray does
            // not climb: as the scalar walk tests them.
            let (fwd_x, fwd_z) = (S::gt(inv_x, zero_f), S::gt(inv_z, zero_f));
            let descending = S::le(dy, zero_f);

            // The block's exit faces: the far side on each axis.
            let col = S::min_i(S::shl(S::add_i(bj, S::keep_i(fwd_x, one)), level), cw);
            let row = S::min_i(S::shl(S::add_i(bi, S::keep_i(fwd_z, one)), level), ch);
            let (x_exit, z_exit) = (x_lines.at(col), z_lines.at(row));
            let tx = S::mul(S::sub(x_exit, ox), inv_x);
            let tz = S::mul(S::sub(z_exit, oz), inv_z);
            let t_exit = lower::<S>(lower::<S>(t_leave, tx), tz);
            let mut t_best = f(&s.t_best);
            let t_limit = lower::<S>(t_exit, S::mul(t_best, slack));

            // The block's range: stored for levels ≥ 1, from the cell's four
            // heights at level 0. Both are read as two (f32, f32) pairs: the
            // cell's top and bottom sample pairs, or the stored (min, max)
            // twice; the range is the min and max of the four values.
            let leaf = S::eq_i(level, zero);
            let (blocks_x, blocks_z) = (level_cols(level), level_rows(level));
            let block = S::add_i(
                S::add_i(S::lookup(&base, level), S::mul_i(bi, blocks_x)),
                bj,
            );
            let stored = S::add_i(ranges_at, S::add_i(block, block));
            let sample = S::add_i(S::mul_i(bi, cols), bj);
            let first = S::select_i(leaf, sample, stored);
            let second = S::select_i(leaf, S::add_i(sample, cols), stored);
            let [y00, y01, y10, y11] = S::pairs(data, first, second);
            let lo = S::min(S::min(y00, y01), S::min(y10, y11));
            let hi = S::max(S::max(y00, y01), S::max(y10, y11));

            // The ray's height at both ends of its stretch in the block.
            let ya = S::add(oy, S::mul(dy, t));
            let yb = S::add(oy, S::mul(dy, t_limit));
            let y_low = S::select(descending, yb, ya);
            let y_high = S::select(descending, ya, yb);
            let overlaps = S::and(
                S::and(
                    S::le(t, S::mul(t_limit, robust_far)),
                    S::le(y_low, S::add(hi, eps)),
                ),
                S::and(S::ge(y_high, S::sub(lo, eps)), active),
            );
            // A ray along the light above its block's horizon is done,
            // unblocked, as in `HeightField::walk`.
            let mut clear = S::mask_of(zero); // no lane
            if let Some((values, below, light_base)) = light {
                let along = S::and(S::mask_of(i(&s.along_light)), active);
                let eligible = S::and(along, S::gt_i(level, below));
                if S::bits(eligible) != 0 {
                    let index = S::keep_i(eligible, S::sub_i(block, light_base));
                    let horizon = S::gather(values, index);
                    clear = S::and(eligible, S::gt(ya, S::add(horizon, eps)));
                }
            }
            let overlaps = S::and_not(clear, overlaps);

            // Leaf cells: both triangles tested in the lanes.
            let mut stopped = 0;
            let leaves = S::and(overlaps, leaf);
            if S::bits(leaves) != 0 {
                // A cell's lines: the exit line on each axis (the far one,
                // computed above) and the one behind it.
                let behind =
                    |index: S::I, forward: S::M| S::add_i(index, S::keep_i(S::not(forward), one));
                let x_behind = x_lines.at(behind(bj, fwd_x));
                let z_behind = z_lines.at(behind(bi, fwd_z));
                let (x0, x1) = (
                    S::select(fwd_x, x_behind, x_exit),
                    S::select(fwd_x, x_exit, x_behind),
                );
                let (z0, z1) = (
                    S::select(fwd_z, z_behind, z_exit),
                    S::select(fwd_z, z_exit, z_behind),
                );
                let [p00, p10, p01, p11] = sheared::<S>(
                    s,
                    [[x0, y00, z0], [x0, y10, z1], [x1, y01, z0], [x1, y11, z1]],
                );
                let cell = S::add_i(S::mul_i(bi, S::sub_i(cols, one)), bj);
                let first_id = S::add_i(cell, cell);
                let first = Triangle::<S>::test(p00, p10, p01);
                let second = Triangle::<S>::test(p01, p10, p11);
                // Cells with an exactly zero edge function go to the scalar test.
                let scalar = S::and(leaves, S::or(first.zero, second.zero));
                let simd = S::and_not(scalar, leaves);
                if Q::ANY {
                    let blocked = S::and(simd, S::or(first.hits(t_best), second.hits(t_best)));
                    stopped = S::bits(blocked);
                } else {
                    let mut best = Best::<S>::load(s, t_best);
                    best.offer(&first, first_id, simd);
                    best.offer(&second, S::add_i(first_id, one), simd);
                    best.store(s);
                }
                for lane in rays_of(S::bits(scalar)) {
                    let (i, j) = (s.bi[lane] as usize, s.bj[lane] as usize);
                    let ray = &rays[s.ray[lane] as usize];
                    if Q::ANY {
                        if field.blocks_in_cell(ray, i, j, s.t_best[lane]) {
                            stopped |= 1 << lane;
                        }
                    } else {
                        let mut best = lane_best(s, lane);
                        field.closest_in_cell(ray, i, j, &mut s.t_best[lane], &mut best);
                        if let Some(hit) = best {
                            s.best_u[lane] = hit.u;
                            s.best_v[lane] = hit.v;
                            s.best_triangle[lane] = hit.triangle as i32;
                        }
                    }
                }
                // An occluded ray keeps a mark of its hit for `finish`.
                for lane in rays_of(stopped) {
                    s.best_triangle[lane] = 0;
                }
                t_best = f(&s.t_best);
            }
            let descend = S::and_not(leaf, overlaps);

            // Across: to the neighbour over the exit face (x's when it comes
            // first, never one the ray runs along), then up where that
            // neighbour lies in a new parent.
            let finished = S::or(S::ge(t_exit, t_leave), S::gt(t_exit, S::mul(t_best, slack)));
            let x_first = S::or(S::le(tx, tz), S::nan(tz));
            let v = S::select_i(x_first, bj, bi);
            let forward = S::select_m(x_first, fwd_x, fwd_z);
            let blocks = S::select_i(x_first, blocks_x, blocks_z);
            let v_fwd = S::add_i(v, one);
            let moved = S::select_i(forward, v_fwd, S::sub_i(v, one));
            let on_grid = S::select_m(forward, S::gt_i(blocks, v_fwd), S::gt_i(v, zero));
            // Forward, the first child of a parent is even; backward, odd.
            let odd = S::eq_i(S::and_i(moved, one), one);
            let new_parent = S::xor(odd, forward);
            // Up to the ceiling for a closest-hit walk's first steps, as
            // `walk`.
            let ceiling = if Q::ANY {
                top
            } else {
                let wait = S::sub_i(i(&s.wait), one);
                S::store_i(s.wait.as_mut_ptr(), wait);
                S::select_i(S::gt_i(wait, zero), i(&s.ceiling), top)
            };
            let ascend = S::and(new_parent, S::gt_i(ceiling, level));
            let across_bj = S::select_i(x_first, moved, bj);
            let across_bi = S::select_i(x_first, bi, moved);
            let up = S::keep_i(ascend, one);
            let across_level = S::add_i(level, up);
            let across_bj = S::shr(across_bj, up);
            let across_bi = S::shr(across_bi, up);

            // Down: into the child the ray is in at t.
            let down_level = S::max_i(S::sub_i(level, one), zero);
            let mid = |b: S::I, cells: S::I| {
                S::min_i(S::shl(S::add_i(S::add_i(b, b), one), down_level), cells)
            };
            let past_x = S::ge(t, S::mul(S::sub(x_lines.at(mid(bj, cw)), ox), inv_x));
            let past_z = S::ge(t, S::mul(S::sub(z_lines.at(mid(bi, ch)), oz), inv_z));
            // Far half where (forward == past), i.e. where they do not differ.
            let far_x = S::keep_i(S::not(S::xor(fwd_x, past_x)), one);
            let far_z = S::keep_i(S::not(S::xor(fwd_z, past_z)), one);
            let (down_cols, down_rows) = (level_cols(down_level), level_rows(down_level));
            let down_bj = S::min_i(S::add_i(S::add_i(bj, bj), far_x), S::sub_i(down_cols, one));
            let down_bi = S::min_i(S::add_i(S::add_i(bi, bi), far_z), S::sub_i(down_rows, one));

            // Each lane keeps its own move; empty lanes stay at block (0, 0).
            let keep =
                |across: S::I, down: S::I| S::keep_i(active, S::select_i(descend, down, across));
            S::store_i(s.level.as_mut_ptr(), keep(across_level, down_level));
            S::store_i(s.bi.as_mut_ptr(), keep(across_bi, down_bi));
            S::store_i(s.bj.as_mut_ptr(), keep(across_bj, down_bj));
            S::store(s.t.as_mut_ptr(), S::select(descend, t, t_exit));

            // Lanes whose ray is done take the next one.
            let done = S::or(clear, S::and_not(descend, S::or(finished, S::not(on_grid))));
            for lane in rays_of(S::bits(S::and(done, active)) | stopped) {
                fill(field, view, &mut batch, s, lane, query);
            }
        }
        if idle == groups.len() {
            return;
        }
    }
}

/// A batch's rays, with their `t_max` and start hints, and the next one
/// to hand to a lane.
struct Batch<'a> {
    rays: &'a [Ray],
    t_max: &'a [f32],
    hints: &'a [Hint],
    next: usize,
    /// The starts of the eight rays around `next`.
    starts: Starts,
}

/// Puts the next ray of the batch that needs a lane into `lane`, or empties
/// it. Rays that miss the field's box need no walk; rays that run exactly
/// along a grid line are walked on their own, on both sides of the line.
#[inline(always)]
fn fill<Q: Query>(
    field: &HeightField,
    view: &FieldView,
    batch: &mut Batch,
    s: &mut State,
    lane: usize,
    query: &mut Q,
) {
    let Batch {
        rays,
        t_max,
        hints,
        next,
        starts,
    } = batch;
    if s.ray[lane] >= 0 {
        query.finish(s.ray[lane] as usize, lane_best(s, lane));
    }
    while *next < rays.len() {
        let k = *next;
        *next += 1;
        let ray = &rays[k];
        let first = k & !7;
        if starts.first != first {
            // SAFETY: `fill` runs inside `walk`, whose caller checked AVX2.
            unsafe { starts.find(field, rays, t_max, hints, first) };
        }
        if starts.alone & (1 << (k - first)) != 0 {
            query.single(field, view, k, ray, t_max[k]);
            continue;
        }
        let Some(start) = starts.get(k - first) else {
            query.finish(k, None);
            continue;
        };
        let (o, d, inv) = (ray.origin, ray.dir, ray.inv_dir);
        s.ox[lane] = o.x;
        s.oy[lane] = o.y;
        s.oz[lane] = o.z;
        s.dy[lane] = d.y;
        s.inv_x[lane] = inv.x;
        s.inv_z[lane] = inv.z;
        s.t_leave[lane] = start.t_leave;
        s.eps[lane] = start.eps;
        s.t[lane] = start.t_start;
        s.t_best[lane] = t_max[k];
        s.level[lane] = start.level as i32;
        s.ceiling[lane] = start.ceiling as i32;
        s.wait[lane] = PATIENCE as i32;
        s.bi[lane] = start.block[0] as i32;
        s.bj[lane] = start.block[1] as i32;
        s.ray[lane] = k as i32;
        let (shear, kz) = ray.shear();
        s.sx[lane] = shear.x;
        s.sy[lane] = shear.y;
        s.sz[lane] = shear.z;
        s.kz_x[lane] = -((kz == 0) as i32);
        s.kz_y[lane] = -((kz == 1) as i32);
        // Only occlusion walks use the light's horizons.
        s.along_light[lane] =
            -((Q::ANY && view.light.as_ref().is_some_and(|h| h.covers(d))) as i32);
        s.best_triangle[lane] = NO_HIT;
        return;
    }
    s.ray[lane] = -1;
    s.level[lane] = 0;
    s.bi[lane] = 0;
    s.bj[lane] = 0;
}

/// A cell's four corners moved into each lane's ray frame (as
/// [`crate::ray::shear_vertices`] does, lane by lane).
#[inline(always)]
unsafe fn sheared<S: Simd>(s: &State, points: [[S::F; 3]; 4]) -> [[S::F; 3]; 4] {
    let f = |v: &[f32; MAX_LANES]| S::load(v.as_ptr());
    let frame = Frame::<S> {
        origin: [f(&s.ox), f(&s.oy), f(&s.oz)],
        shear: [f(&s.sx), f(&s.sy), f(&s.sz)],
        kz_x: S::mask_of(S::load_i(s.kz_x.as_ptr())),
        kz_y: S::mask_of(S::load_i(s.kz_y.as_ptr())),
    };
    // Corner by corner through functions that are always inlined: a
    // closure or `map` may stay out of line, and the lane operations in it.
    let [a, b, c, d] = points;
    [
        frame.corner(a),
        frame.corner(b),
        frame.corner(c),
        frame.corner(d),
    ]
}

/// Each lane's ray frame for [`sheared`].
struct Frame<S: Simd> {
    origin: [S::F; 3],
    shear: [S::F; 3],
    /// Lanes whose dominant axis is x, is y (z otherwise).
    kz_x: S::M,
    kz_y: S::M,
}

impl<S: Simd> Frame<S> {
    /// Which of x, y, z a permuted axis takes: z dominant keeps (x, y, z),
    /// y dominant takes (z, x, y), x dominant (y, z, x).
    #[inline(always)]
    unsafe fn pick(&self, x: S::F, y: S::F, z: S::F) -> S::F {
        S::select(self.kz_x, y, S::select(self.kz_y, z, x))
    }

    #[inline(always)]
    unsafe fn corner(&self, [px, py, pz]: [S::F; 3]) -> [S::F; 3] {
        let [ox, oy, oz] = self.origin;
        let [sx, sy, sz] = self.shear;
        let (ax, ay, az) = (S::sub(px, ox), S::sub(py, oy), S::sub(pz, oz));
        let kx = self.pick(ax, ay, az);
        let ky = self.pick(ay, az, ax);
        let kz = self.pick(az, ax, ay);
        [
            S::sub(kx, S::mul(sx, kz)),
            S::sub(ky, S::mul(sy, kz)),
            S::mul(sz, kz),
        ]
    }
}

/// The watertight test of one triangle per lane, as
/// [`crate::ray::hit_sheared`] computes it, up to the t_max test.
struct Triangle<S: Simd> {
    /// Lanes with an exactly zero edge function (for the f64 fallback).
    zero: S::M,
    /// Lanes where the ray passes inside the edges.
    inside: S::M,
    t: S::F,
    u: S::F,
    v: S::F,
}

impl<S: Simd> Triangle<S> {
    #[inline(always)]
    unsafe fn test(a: [S::F; 3], b: [S::F; 3], c: [S::F; 3]) -> Triangle<S> {
        let [ax, ay, az] = a;
        let [bx, by, bz] = b;
        let [cx, cy, cz] = c;
        let edge = |p: S::F, q: S::F, r: S::F, s: S::F| S::sub(S::mul(p, q), S::mul(r, s));
        let u = edge(cx, by, cy, bx);
        let v = edge(ax, cy, ay, cx);
        let w = edge(bx, ay, by, ax);
        let zero_ps = S::splat(0.0);
        let eq = |e: S::F| S::eq(e, zero_ps);
        let lt = |e: S::F| S::lt(e, zero_ps);
        let gt = |e: S::F| S::gt(e, zero_ps);
        let zero = S::or(S::or(eq(u), eq(v)), eq(w));
        let outside = S::and(
            S::or(S::or(lt(u), lt(v)), lt(w)),
            S::or(S::or(gt(u), gt(v)), gt(w)),
        );
        let det = S::add(S::add(u, v), w);
        let t = S::add(S::add(S::mul(u, az), S::mul(v, bz)), S::mul(w, cz));
        let inv = S::div(S::splat(1.0), det);
        Triangle {
            zero,
            inside: S::not(outside),
            t: S::mul(t, inv),
            u: S::mul(v, inv),
            v: S::mul(w, inv),
        }
    }

    /// Lanes where the triangle is hit within (0, t_max].
    #[inline(always)]
    unsafe fn hits(&self, t_max: S::F) -> S::M {
        S::and(
            self.inside,
            S::and(S::gt(self.t, S::splat(0.0)), S::le(self.t, t_max)),
        )
    }
}

/// Each lane's best hit, as vectors.
struct Best<S: Simd> {
    t: S::F,
    u: S::F,
    v: S::F,
    triangle: S::I,
}

impl<S: Simd> Best<S> {
    #[inline(always)]
    unsafe fn load(s: &State, t_best: S::F) -> Best<S> {
        Best {
            t: t_best,
            u: S::load(s.best_u.as_ptr()),
            v: S::load(s.best_v.as_ptr()),
            triangle: S::load_i(s.best_triangle.as_ptr()),
        }
    }

    /// Keeps `tri`'s hit (triangle `id`) in the lanes of `mask` where it
    /// beats the best so far ([`Hit::beats`]).
    #[inline(always)]
    unsafe fn offer(&mut self, tri: &Triangle<S>, id: S::I, mask: S::M) {
        let closer = S::lt(tri.t, self.t);
        let tie = S::and(S::eq(tri.t, self.t), S::gt_i(self.triangle, id));
        let take = S::and(S::and(mask, tri.hits(self.t)), S::or(closer, tie));
        self.t = S::select(take, tri.t, self.t);
        self.u = S::select(take, tri.u, self.u);
        self.v = S::select(take, tri.v, self.v);
        self.triangle = S::select_i(take, id, self.triangle);
    }

    #[inline(always)]
    unsafe fn store(&self, s: &mut State) {
        S::store(s.t_best.as_mut_ptr(), self.t);
        S::store(s.best_u.as_mut_ptr(), self.u);
        S::store(s.best_v.as_mut_ptr(), self.v);
        S::store_i(s.best_triangle.as_mut_ptr(), self.triangle);
    }
}

/// Lane `lane`'s best hit.
fn lane_best(s: &State, lane: usize) -> Option<Hit> {
    (s.best_triangle[lane] != NO_HIT).then(|| Hit {
        t: s.t_best[lane],
        u: s.best_u[lane],
        v: s.best_v[lane],
        triangle: s.best_triangle[lane] as u32,
    })
}

/// min(a, b) per lane that ignores a NaN `b`, as the scalar `lower`.
#[inline(always)]
unsafe fn lower<S: Simd>(a: S::F, b: S::F) -> S::F {
    S::select(S::lt(b, a), b, a)
}
