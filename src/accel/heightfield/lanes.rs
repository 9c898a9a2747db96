//! Eight walks at once, one per AVX2 lane.
//!
//! The single-ray walk spends most of its time in a chain of dependent
//! loads and branches it cannot predict (down or across, x or z): about
//! twenty steps a ray, each waiting on the last. Here eight rays walk side
//! by side, each in its own lane, and every step is computed for all eight
//! with selects instead of branches: the range of the block each lane
//! stands in, its exit distances, the step down and the step across (and
//! up), of which each lane keeps the one its walk takes. A lane that
//! reaches a leaf cell its ray may hit tests the cell's two triangles in
//! the lanes too (the watertight test, with the ray's axis permutation as
//! selects); only a cell whose edge functions come out exactly zero goes
//! to the scalar test and its f64 fallback. A lane whose ray is done takes
//! the next ray of the batch at once, so the lanes stay full until the
//! batch runs out; where each ray starts (its interval in the field's box
//! and its start block) is found for eight rays at a time, in the lanes
//! too ([`Starts`]), and two groups of eight take turns, so that one's loads
//! and divisions overlap the other's work.
//!
//! Every lane computes exactly what [`HeightField::walk`] and
//! [`HeightField::closest_in_cell`] compute, with the same operations in
//! the same order (no fused multiply-add; grid lines recomputed as
//! [`crate::terrain::TerrainGrid::position`] places them), so each ray
//! visits the same cells and gets the same hit as on its own: the tests
//! check this bit for bit.
//!
//! The walk is compiled twice from one body ([`Isa`]): for AVX2, and for
//! CPUs with AVX-512, where the same intrinsics get 32 registers and mask
//! registers (8–15% faster on an Intel Xeon with AVX-512, same bits).
//!
//! Gathers are avoided: on this project's machines (AMD Zen 3) an 8-wide
//! gather costs ~5 ns, more than the scalar loads it replaces.

use std::arch::x86_64::*;

use super::{HeightField, Hint, Query, Start};
use crate::accel::bvh::Hit;
use crate::accel::isa::Isa;
use crate::accel::ray::{Ray, CULL_SLACK, ROBUST_FAR};

/// The grid lines of one axis as [`crate::terrain::TerrainGrid::position`]
/// places them, lane by lane: line j at (j / cells − ½) · size.
#[derive(Clone, Copy)]
struct Lines {
    cells: __m256,
    /// 1 / cells where that is exact (cells a power of two), so that the
    /// division becomes a multiplication with the same result.
    exact_reciprocal: Option<__m256>,
    size: __m256,
}

impl Lines {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn new(samples: usize, size: f32) -> Lines {
        let cells = samples - 1;
        Lines {
            cells: _mm256_set1_ps(cells as f32),
            exact_reciprocal: cells
                .is_power_of_two()
                .then(|| _mm256_set1_ps(1.0 / cells as f32)),
            size: _mm256_set1_ps(size),
        }
    }

    /// Line `index` of each lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn at(self, index: __m256i) -> __m256 {
        let j = _mm256_cvtepi32_ps(index);
        let fraction = match self.exact_reciprocal {
            Some(r) => _mm256_mul_ps(j, r),
            None => _mm256_div_ps(j, self.cells),
        };
        _mm256_mul_ps(_mm256_sub_ps(fraction, _mm256_set1_ps(0.5)), self.size)
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

        // The start block: the cell a guess from the point at t gives,
        // checked against its two lines on each axis (`last`: its last
        // cell).
        let cell = |o: __m256, d: __m256, inv: __m256, lines: &[f32], along: Lines, last: usize| {
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
            Lines::new(field.cols, field.size[0]),
            field.cols - 2,
        );
        let (i, i_ok) = cell(
            oz,
            dz,
            inv_z,
            &field.zs,
            Lines::new(field.rows, field.size[1]),
            field.rows - 2,
        );
        let at_top = _mm256_cmpeq_epi32(level, top);
        let block = |index: __m256i| _mm256_andnot_si256(at_top, _mm256_srlv_epi32(index, level));

        store(&mut self.t, t);
        store(&mut self.t_leave, t_leave);
        store(&mut self.eps, eps);
        store_i(&mut self.level, level);
        store_i(&mut self.bi, block(i));
        store_i(&mut self.bj, block(j));
        let lanes = (1u32 << count) - 1;
        self.miss = !(_mm256_movemask_ps(inside) as u32) & lanes;
        self.alone = 0;
        // Rays with a zero x or z direction may run along a grid line.
        let mut zero_dir = zero_dir & lanes & !self.miss;
        while zero_dir != 0 {
            let lane = zero_dir.trailing_zeros() as usize;
            zero_dir &= zero_dir - 1;
            if field.runs_along_a_line(&rays[first + lane]) != (false, false) {
                self.alone |= 1 << lane;
            }
        }
        // Wrong guesses: the scalar search.
        let at_top = _mm256_movemask_ps(_mm256_castsi256_ps(at_top)) as u32;
        let mut wrong = !(i_ok & j_ok) & lanes & !self.miss & !self.alone & !at_top;
        while wrong != 0 {
            let lane = wrong.trailing_zeros() as usize;
            wrong &= wrong - 1;
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

/// The walk state of eight lanes, one array per quantity.
#[repr(C, align(32))]
#[derive(Default)]
struct State {
    ox: [f32; 8],
    oy: [f32; 8],
    oz: [f32; 8],
    dy: [f32; 8],
    inv_x: [f32; 8],
    inv_z: [f32; 8],
    t_leave: [f32; 8],
    eps: [f32; 8],
    /// Where the lane entered its current block.
    t: [f32; 8],
    t_best: [f32; 8],
    level: [i32; 8],
    bi: [i32; 8],
    bj: [i32; 8],
    /// Index of the lane's ray in the batch; −1 for an empty lane.
    ray: [i32; 8],
    /// All ones where the ray travels toward +x (+z), else zero.
    fwd_x: [i32; 8],
    fwd_z: [i32; 8],
    /// All ones where the ray does not climb.
    descending: [i32; 8],
    /// The watertight test's shear, and its dominant axis as masks (all
    /// ones where it is x, where it is y; z otherwise).
    sx: [f32; 8],
    sy: [f32; 8],
    sz: [f32; 8],
    kz_x: [i32; 8],
    kz_y: [i32; 8],
    /// The best hit so far (its t is `t_best`): barycentrics and triangle,
    /// `NO_HIT` for none.
    best_u: [f32; 8],
    best_v: [f32; 8],
    best_triangle: [i32; 8],
}

/// `best_triangle` of a lane without a hit: above every triangle index, so
/// that any hit beats it (as any hit beats `None` in [`Hit::beats`]).
const NO_HIT: i32 = i32::MAX;

/// Groups of eight lanes walked in turn.
const GROUPS: usize = 2;

/// Levels the lanes handle: the start of each level in the range array
/// is looked up with two 8-entry permutes.
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
/// field's sample and
/// range counts must fit in an `i32` and it must have at most
/// [`LANE_LEVELS`] levels ([`HeightField::fits_lanes`]).
pub(super) unsafe fn walk<Q: Query>(
    isa: Isa,
    field: &HeightField,
    rays: &[Ray],
    t_max: &[f32],
    hints: &[Hint],
    query: &mut Q,
) {
    match isa {
        Isa::Avx512 => walk_avx512(field, rays, t_max, hints, query),
        Isa::Avx | Isa::Avx2 => walk_avx2(field, rays, t_max, hints, query),
    }
}

/// [`walk`] compiled for one instruction set: the body, inlined under its
/// features.
macro_rules! walk_for {
    ($name:ident, $features:literal) => {
        #[doc = concat!("[`walk`] compiled for `", $features, "`.")]
        #[target_feature(enable = $features)]
        unsafe fn $name<Q: Query>(
            field: &HeightField,
            rays: &[Ray],
            t_max: &[f32],
            hints: &[Hint],
            query: &mut Q,
        ) {
            walk_lanes(field, rays, t_max, hints, query)
        }
    };
}

walk_for!(walk_avx2, "avx2");
walk_for!(walk_avx512, "avx2,avx512f,avx512vl");

/// The body of [`walk`], inlined into each instruction set's copy (which
/// then inlines the intrinsics and helpers under its own features).
#[inline(always)]
unsafe fn walk_lanes<Q: Query>(
    field: &HeightField,
    rays: &[Ray],
    t_max: &[f32],
    hints: &[Hint],
    query: &mut Q,
) {
    let mut base = [0i32; LANE_LEVELS as usize];
    for (b, &l) in base.iter_mut().zip(&field.level_base) {
        *b = l as i32;
    }
    let base_low = _mm256_loadu_si256(base.as_ptr() as *const __m256i);
    let base_high = _mm256_loadu_si256(base[8..].as_ptr() as *const __m256i);
    let seven = _mm256_set1_epi32(7);
    // Start of `level` in the range array.
    let level_base = |level: __m256i| {
        let low = _mm256_permutevar8x32_epi32(base_low, level);
        let high = _mm256_permutevar8x32_epi32(base_high, _mm256_and_si256(level, seven));
        _mm256_blendv_epi8(low, high, _mm256_cmpgt_epi32(level, seven))
    };
    // Blocks of `level` along x and z: ⌈cells / 2ᵏ⌉ = ((cells − 1) >> k) + 1.
    let cw_less = _mm256_set1_epi32(field.cols as i32 - 2);
    let ch_less = _mm256_set1_epi32(field.rows as i32 - 2);
    let one = _mm256_set1_epi32(1);
    let level_cols = |level: __m256i| _mm256_add_epi32(_mm256_srlv_epi32(cw_less, level), one);
    let level_rows = |level: __m256i| _mm256_add_epi32(_mm256_srlv_epi32(ch_less, level), one);
    // Grid line coordinates as `TerrainGrid::position` computes them.
    let (x_lines, z_lines) = (
        Lines::new(field.cols, field.size[0]),
        Lines::new(field.rows, field.size[1]),
    );
    // Two groups of eight lanes: while one waits on a load or a division,
    // the other's independent work fills the pipeline.
    let mut groups: [State; GROUPS] = std::array::from_fn(|_| State {
        ray: [-1; 8],
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
        for lane in 0..8 {
            fill(field, &mut batch, s, lane, query);
        }
    }

    let data = field.data.as_ptr();
    let ranges_at = _mm256_set1_epi32(field.ranges_at as i32);
    let cw = _mm256_set1_epi32((field.cols - 1) as i32);
    let ch = _mm256_set1_epi32((field.rows - 1) as i32);
    let cols = _mm256_set1_epi32(field.cols as i32);
    let top = _mm256_set1_epi32(field.top as i32);
    let zero = _mm256_setzero_si256();
    let slack = _mm256_set1_ps(CULL_SLACK);
    let robust_far = _mm256_set1_ps(ROBUST_FAR);

    loop {
        let mut idle = 0;
        for s in groups.iter_mut() {
            let ray = load_i(&s.ray);
            let active = _mm256_cmpgt_epi32(ray, _mm256_set1_epi32(-1));
            if _mm256_movemask_ps(_mm256_castsi256_ps(active)) == 0 {
                idle += 1;
                continue;
            }
            let (level, bi, bj) = (load_i(&s.level), load_i(&s.bi), load_i(&s.bj));
            let (fwd_x, fwd_z) = (load_i(&s.fwd_x), load_i(&s.fwd_z));
            let (ox, oy, oz) = (load(&s.ox), load(&s.oy), load(&s.oz));
            let (inv_x, inv_z) = (load(&s.inv_x), load(&s.inv_z));
            let (dy, eps, t_leave, t) = (load(&s.dy), load(&s.eps), load(&s.t_leave), load(&s.t));

            // The block's exit faces: the far side on each axis.
            let col = _mm256_min_epi32(
                _mm256_sllv_epi32(_mm256_add_epi32(bj, _mm256_and_si256(fwd_x, one)), level),
                cw,
            );
            let row = _mm256_min_epi32(
                _mm256_sllv_epi32(_mm256_add_epi32(bi, _mm256_and_si256(fwd_z, one)), level),
                ch,
            );
            let (x_exit, z_exit) = (x_lines.at(col), z_lines.at(row));
            let tx = _mm256_mul_ps(_mm256_sub_ps(x_exit, ox), inv_x);
            let tz = _mm256_mul_ps(_mm256_sub_ps(z_exit, oz), inv_z);
            let t_exit = lower(lower(t_leave, tx), tz);
            let mut t_best = load(&s.t_best);
            let t_limit = lower(t_exit, _mm256_mul_ps(t_best, slack));

            // The block's range: stored for levels ≥ 1, from the cell's four
            // heights at level 0. Both are read as two (f32, f32) pairs: the
            // cell's top and bottom sample pairs, or the stored (min, max)
            // twice; the range is the min and max of the four values.
            let leaf = _mm256_cmpeq_epi32(level, zero);
            let leaf_ps = _mm256_castsi256_ps(leaf);
            let (blocks_x, blocks_z) = (level_cols(level), level_rows(level));
            let block = _mm256_add_epi32(
                _mm256_add_epi32(level_base(level), _mm256_mullo_epi32(bi, blocks_x)),
                bj,
            );
            let stored = _mm256_add_epi32(ranges_at, _mm256_slli_epi32::<1>(block));
            let sample = _mm256_add_epi32(_mm256_mullo_epi32(bi, cols), bj);
            let first = _mm256_blendv_epi8(stored, sample, leaf);
            let second = _mm256_blendv_epi8(stored, _mm256_add_epi32(sample, cols), leaf);
            let [y00, y01, y10, y11] = pairs(data, first, second);
            let lo = _mm256_min_ps(_mm256_min_ps(y00, y01), _mm256_min_ps(y10, y11));
            let hi = _mm256_max_ps(_mm256_max_ps(y00, y01), _mm256_max_ps(y10, y11));

            // The ray's height at both ends of its stretch in the block.
            let ya = _mm256_add_ps(oy, _mm256_mul_ps(dy, t));
            let yb = _mm256_add_ps(oy, _mm256_mul_ps(dy, t_limit));
            let descending = _mm256_castsi256_ps(load_i(&s.descending));
            let y_low = _mm256_blendv_ps(ya, yb, descending);
            let y_high = _mm256_blendv_ps(yb, ya, descending);
            let overlaps = _mm256_and_ps(
                _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_LE_OQ>(t, _mm256_mul_ps(t_limit, robust_far)),
                    _mm256_cmp_ps::<_CMP_LE_OQ>(y_low, _mm256_add_ps(hi, eps)),
                ),
                _mm256_and_ps(
                    _mm256_cmp_ps::<_CMP_GE_OQ>(y_high, _mm256_sub_ps(lo, eps)),
                    _mm256_castsi256_ps(active),
                ),
            );

            // Leaf cells: both triangles tested in the lanes.
            let mut stopped = 0;
            let leaves = _mm256_and_ps(overlaps, leaf_ps);
            if _mm256_movemask_ps(leaves) != 0 {
                // A cell's lines: the exit line on each axis (the far one,
                // computed above) and the one behind it.
                let behind = |index: __m256i, forward: __m256i| {
                    _mm256_add_epi32(index, _mm256_andnot_si256(forward, one))
                };
                let x_behind = x_lines.at(behind(bj, fwd_x));
                let z_behind = z_lines.at(behind(bi, fwd_z));
                let (fx, fz) = (_mm256_castsi256_ps(fwd_x), _mm256_castsi256_ps(fwd_z));
                let (x0, x1) = (
                    _mm256_blendv_ps(x_exit, x_behind, fx),
                    _mm256_blendv_ps(x_behind, x_exit, fx),
                );
                let (z0, z1) = (
                    _mm256_blendv_ps(z_exit, z_behind, fz),
                    _mm256_blendv_ps(z_behind, z_exit, fz),
                );
                let cell = Sheared::new(
                    s,
                    [[x0, y00, z0], [x0, y10, z1], [x1, y01, z0], [x1, y11, z1]],
                );
                let [p00, p10, p01, p11] = cell.corners;
                let first_id = _mm256_slli_epi32::<1>(_mm256_add_epi32(
                    _mm256_mullo_epi32(bi, _mm256_sub_epi32(cols, one)),
                    bj,
                ));
                let first = Triangle::test(p00, p10, p01);
                let second = Triangle::test(p01, p10, p11);
                // Cells with an exactly zero edge function go to the scalar test.
                let scalar = _mm256_and_ps(leaves, _mm256_or_ps(first.zero, second.zero));
                let simd = _mm256_andnot_ps(scalar, leaves);
                if Q::ANY {
                    let blocked =
                        _mm256_and_ps(simd, _mm256_or_ps(first.hits(t_best), second.hits(t_best)));
                    stopped = _mm256_movemask_ps(blocked);
                } else {
                    let mut best = Best::load(s, t_best);
                    best.offer(&first, first_id, simd);
                    best.offer(&second, _mm256_add_epi32(first_id, one), simd);
                    best.store(s);
                }
                let mut scalar = _mm256_movemask_ps(scalar);
                while scalar != 0 {
                    let lane = scalar.trailing_zeros() as usize;
                    scalar &= scalar - 1;
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
                for lane in 0..8 {
                    if stopped & (1 << lane) != 0 {
                        s.best_triangle[lane] = 0;
                    }
                }
                t_best = load(&s.t_best);
            }
            let descend = _mm256_andnot_ps(leaf_ps, overlaps);

            // Across: to the neighbour over the exit face (x's when it comes
            // first, never one the ray runs along), then up where that
            // neighbour lies in a new parent.
            let finished = _mm256_or_ps(
                _mm256_cmp_ps::<_CMP_GE_OQ>(t_exit, t_leave),
                _mm256_cmp_ps::<_CMP_GT_OQ>(t_exit, _mm256_mul_ps(t_best, slack)),
            );
            let x_first = _mm256_castps_si256(_mm256_or_ps(
                _mm256_cmp_ps::<_CMP_LE_OQ>(tx, tz),
                _mm256_cmp_ps::<_CMP_UNORD_Q>(tz, tz),
            ));
            let v = _mm256_blendv_epi8(bi, bj, x_first);
            let forward = _mm256_blendv_epi8(fwd_z, fwd_x, x_first);
            let blocks = _mm256_blendv_epi8(blocks_z, blocks_x, x_first);
            let v_fwd = _mm256_add_epi32(v, one);
            let v_back = _mm256_sub_epi32(v, one);
            let moved = _mm256_blendv_epi8(v_back, v_fwd, forward);
            let on_grid = _mm256_blendv_epi8(
                _mm256_cmpgt_epi32(v, zero),
                _mm256_cmpgt_epi32(blocks, v_fwd),
                forward,
            );
            // Forward, the first child of a parent is even; backward, odd.
            let odd = _mm256_cmpeq_epi32(_mm256_and_si256(moved, one), one);
            let new_parent = _mm256_xor_si256(odd, forward);
            let ascend = _mm256_and_si256(new_parent, _mm256_cmpgt_epi32(top, level));
            let across_bj = _mm256_blendv_epi8(bj, moved, x_first);
            let across_bi = _mm256_blendv_epi8(moved, bi, x_first);
            let across_level = _mm256_sub_epi32(level, ascend);
            let up = _mm256_and_si256(ascend, one);
            let across_bj = _mm256_srlv_epi32(across_bj, up);
            let across_bi = _mm256_srlv_epi32(across_bi, up);

            // Down: into the child the ray is in at t.
            let down_level = _mm256_max_epi32(_mm256_sub_epi32(level, one), zero);
            let col_mid = _mm256_min_epi32(
                _mm256_sllv_epi32(
                    _mm256_add_epi32(_mm256_slli_epi32::<1>(bj), one),
                    down_level,
                ),
                cw,
            );
            let row_mid = _mm256_min_epi32(
                _mm256_sllv_epi32(
                    _mm256_add_epi32(_mm256_slli_epi32::<1>(bi), one),
                    down_level,
                ),
                ch,
            );
            let past_x = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(
                t,
                _mm256_mul_ps(_mm256_sub_ps(x_lines.at(col_mid), ox), inv_x),
            ));
            let past_z = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(
                t,
                _mm256_mul_ps(_mm256_sub_ps(z_lines.at(row_mid), oz), inv_z),
            ));
            // Far half where (forward == past), i.e. where they do not differ.
            let far_x = _mm256_andnot_si256(_mm256_xor_si256(fwd_x, past_x), one);
            let far_z = _mm256_andnot_si256(_mm256_xor_si256(fwd_z, past_z), one);
            let (down_cols, down_rows) = (level_cols(down_level), level_rows(down_level));
            let down_bj = _mm256_min_epi32(
                _mm256_add_epi32(_mm256_slli_epi32::<1>(bj), far_x),
                _mm256_sub_epi32(down_cols, one),
            );
            let down_bi = _mm256_min_epi32(
                _mm256_add_epi32(_mm256_slli_epi32::<1>(bi), far_z),
                _mm256_sub_epi32(down_rows, one),
            );

            // Each lane keeps its own move; empty lanes stay at block (0, 0).
            let descend_i = _mm256_castps_si256(descend);
            let keep = |across: __m256i, down: __m256i| {
                _mm256_and_si256(_mm256_blendv_epi8(across, down, descend_i), active)
            };
            store_i(&mut s.level, keep(across_level, down_level));
            store_i(&mut s.bi, keep(across_bi, down_bi));
            store_i(&mut s.bj, keep(across_bj, down_bj));
            store(&mut s.t, _mm256_blendv_ps(t_exit, t, descend));

            // Lanes whose ray is done take the next one.
            let done = _mm256_andnot_ps(
                descend,
                _mm256_or_ps(
                    finished,
                    _mm256_castsi256_ps(_mm256_xor_si256(on_grid, _mm256_set1_epi32(-1))),
                ),
            );
            let mut done = (_mm256_movemask_ps(_mm256_and_ps(done, _mm256_castsi256_ps(active)))
                | stopped) as u32;
            while done != 0 {
                let lane = done.trailing_zeros() as usize;
                done &= done - 1;
                fill(field, &mut batch, s, lane, query);
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
fn fill(
    field: &HeightField,
    batch: &mut Batch,
    s: &mut State,
    lane: usize,
    query: &mut impl Query,
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
            query.single(field, k, ray, t_max[k]);
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
        s.bi[lane] = start.block[0] as i32;
        s.bj[lane] = start.block[1] as i32;
        s.ray[lane] = k as i32;
        s.fwd_x[lane] = -((inv.x > 0.0) as i32);
        s.fwd_z[lane] = -((inv.z > 0.0) as i32);
        s.descending[lane] = -((d.y <= 0.0) as i32);
        let (shear, kz) = ray.shear();
        s.sx[lane] = shear.x;
        s.sy[lane] = shear.y;
        s.sz[lane] = shear.z;
        s.kz_x[lane] = -((kz == 0) as i32);
        s.kz_y[lane] = -((kz == 1) as i32);
        s.best_triangle[lane] = NO_HIT;
        return;
    }
    s.ray[lane] = -1;
    s.level[lane] = 0;
    s.bi[lane] = 0;
    s.bj[lane] = 0;
}

/// Per lane, the f32 pairs at `data[first]` and `data[second]`, as four
/// vectors: first.0, first.1, second.0, second.1.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn pairs(data: *const f32, first: __m256i, second: __m256i) -> [__m256; 4] {
    let split = |at: __m256i| {
        let mut index = [0i32; 8];
        _mm256_storeu_si256(index.as_mut_ptr() as *mut __m256i, at);
        // Four 64-bit loads per half: cheaper than a gather on this
        // hardware (AMD Zen 3: a 4-wide gather costs ~3 ns, these ~1.7).
        let half = |k: usize| {
            let low = _mm_loadl_epi64(data.add(index[k] as usize) as *const __m128i);
            _mm_castpd_si128(_mm_loadh_pd(
                _mm_castsi128_pd(low),
                data.add(index[k + 1] as usize) as *const f64,
            ))
        };
        let (a, b, c, d) = (half(0), half(2), half(4), half(6));
        // Lanes 0–3 and 4–7 as (x, y) pairs.
        let low = _mm256_castsi256_ps(_mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a), b));
        let high = _mm256_castsi256_ps(_mm256_inserti128_si256::<1>(_mm256_castsi128_si256(c), d));
        // Even and odd elements, lanes in the order 0 1 4 5 2 3 6 7; the
        // 64-bit permute puts them back.
        let order = |v: __m256| {
            _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)))
        };
        (
            order(_mm256_shuffle_ps::<0b10_00_10_00>(low, high)),
            order(_mm256_shuffle_ps::<0b11_01_11_01>(low, high)),
        )
    };
    let (a, b) = split(first);
    let (c, d) = split(second);
    [a, b, c, d]
}

/// A cell's four corners moved into each lane's ray frame (as
/// [`crate::accel::ray::shear_vertices`] does, lane by lane).
struct Sheared {
    corners: [[__m256; 3]; 4],
}

impl Sheared {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn new(s: &State, points: [[__m256; 3]; 4]) -> Sheared {
        let (ox, oy, oz) = (load(&s.ox), load(&s.oy), load(&s.oz));
        let (sx, sy, sz) = (load(&s.sx), load(&s.sy), load(&s.sz));
        let kz_x = _mm256_castsi256_ps(load_i(&s.kz_x));
        let kz_y = _mm256_castsi256_ps(load_i(&s.kz_y));
        // Which of x, y, z each permuted axis takes: z dominant keeps
        // (x, y, z), y dominant takes (z, x, y), x dominant (y, z, x).
        let pick = |x: __m256, y: __m256, z: __m256| {
            _mm256_blendv_ps(_mm256_blendv_ps(x, z, kz_y), y, kz_x)
        };
        let corners = points.map(|[px, py, pz]| {
            let (ax, ay, az) = (
                _mm256_sub_ps(px, ox),
                _mm256_sub_ps(py, oy),
                _mm256_sub_ps(pz, oz),
            );
            let kx = pick(ax, ay, az);
            let ky = pick(ay, az, ax);
            let kz = pick(az, ax, ay);
            [
                _mm256_sub_ps(kx, _mm256_mul_ps(sx, kz)),
                _mm256_sub_ps(ky, _mm256_mul_ps(sy, kz)),
                _mm256_mul_ps(sz, kz),
            ]
        });
        Sheared { corners }
    }
}

/// The watertight test of one triangle per lane, as
/// [`crate::accel::ray::hit_sheared`] computes it, up to the t_max test.
struct Triangle {
    /// Lanes with an exactly zero edge function (for the f64 fallback).
    zero: __m256,
    /// Lanes where the ray passes inside the edges.
    inside: __m256,
    t: __m256,
    u: __m256,
    v: __m256,
}

impl Triangle {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn test(a: [__m256; 3], b: [__m256; 3], c: [__m256; 3]) -> Triangle {
        let [ax, ay, az] = a;
        let [bx, by, bz] = b;
        let [cx, cy, cz] = c;
        let edge = |p: __m256, q: __m256, r: __m256, s: __m256| {
            _mm256_sub_ps(_mm256_mul_ps(p, q), _mm256_mul_ps(r, s))
        };
        let u = edge(cx, by, cy, bx);
        let v = edge(ax, cy, ay, cx);
        let w = edge(bx, ay, by, ax);
        let zero_ps = _mm256_setzero_ps();
        let eq = |e: __m256| _mm256_cmp_ps::<_CMP_EQ_OQ>(e, zero_ps);
        let lt = |e: __m256| _mm256_cmp_ps::<_CMP_LT_OQ>(e, zero_ps);
        let gt = |e: __m256| _mm256_cmp_ps::<_CMP_GT_OQ>(e, zero_ps);
        let zero = _mm256_or_ps(_mm256_or_ps(eq(u), eq(v)), eq(w));
        let outside = _mm256_and_ps(
            _mm256_or_ps(_mm256_or_ps(lt(u), lt(v)), lt(w)),
            _mm256_or_ps(_mm256_or_ps(gt(u), gt(v)), gt(w)),
        );
        let det = _mm256_add_ps(_mm256_add_ps(u, v), w);
        let t = _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(u, az), _mm256_mul_ps(v, bz)),
            _mm256_mul_ps(w, cz),
        );
        let inv = _mm256_div_ps(_mm256_set1_ps(1.0), det);
        Triangle {
            zero,
            inside: _mm256_xor_ps(outside, _mm256_castsi256_ps(_mm256_set1_epi32(-1))),
            t: _mm256_mul_ps(t, inv),
            u: _mm256_mul_ps(v, inv),
            v: _mm256_mul_ps(w, inv),
        }
    }

    /// Lanes where the triangle is hit within (0, t_max].
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn hits(&self, t_max: __m256) -> __m256 {
        _mm256_and_ps(
            self.inside,
            _mm256_and_ps(
                _mm256_cmp_ps::<_CMP_GT_OQ>(self.t, _mm256_setzero_ps()),
                _mm256_cmp_ps::<_CMP_LE_OQ>(self.t, t_max),
            ),
        )
    }
}

/// Each lane's best hit, as vectors.
struct Best {
    t: __m256,
    u: __m256,
    v: __m256,
    triangle: __m256i,
}

impl Best {
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn load(s: &State, t_best: __m256) -> Best {
        Best {
            t: t_best,
            u: load(&s.best_u),
            v: load(&s.best_v),
            triangle: load_i(&s.best_triangle),
        }
    }

    /// Keeps `tri`'s hit (triangle `id`) in the lanes of `mask` where it
    /// beats the best so far ([`Hit::beats`]).
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn offer(&mut self, tri: &Triangle, id: __m256i, mask: __m256) {
        let closer = _mm256_cmp_ps::<_CMP_LT_OQ>(tri.t, self.t);
        let tie = _mm256_and_ps(
            _mm256_cmp_ps::<_CMP_EQ_OQ>(tri.t, self.t),
            _mm256_castsi256_ps(_mm256_cmpgt_epi32(self.triangle, id)),
        );
        let take = _mm256_and_ps(
            _mm256_and_ps(mask, tri.hits(self.t)),
            _mm256_or_ps(closer, tie),
        );
        self.t = _mm256_blendv_ps(self.t, tri.t, take);
        self.u = _mm256_blendv_ps(self.u, tri.u, take);
        self.v = _mm256_blendv_ps(self.v, tri.v, take);
        self.triangle = _mm256_blendv_epi8(self.triangle, id, _mm256_castps_si256(take));
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn store(&self, s: &mut State) {
        store(&mut s.t_best, self.t);
        store(&mut s.best_u, self.u);
        store(&mut s.best_v, self.v);
        store_i(&mut s.best_triangle, self.triangle);
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
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn lower(a: __m256, b: __m256) -> __m256 {
    _mm256_blendv_ps(a, b, _mm256_cmp_ps::<_CMP_LT_OQ>(b, a))
}

#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load(v: &[f32; 8]) -> __m256 {
    _mm256_load_ps(v.as_ptr())
}

#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store(v: &mut [f32; 8], x: __m256) {
    _mm256_store_ps(v.as_mut_ptr(), x)
}

#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load_i(v: &[i32; 8]) -> __m256i {
    _mm256_load_si256(v.as_ptr() as *const __m256i)
}

#[inline]
#[target_feature(enable = "avx2")]
unsafe fn store_i(v: &mut [i32; 8], x: __m256i) {
    _mm256_store_si256(v.as_mut_ptr() as *mut __m256i, x)
}
