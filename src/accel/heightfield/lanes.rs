//! Eight walks at once, one per AVX2 lane.
//!
//! The single-ray walk spends most of its time in a chain of dependent
//! loads and branches it cannot predict (down or across, x or z): about
//! twenty steps a ray, each waiting on the last. Here eight rays walk side
//! by side, each in its own lane, and every step is computed for all eight
//! with selects instead of branches: the range of the block each lane
//! stands in, its exit distances, the step down and the step across (and
//! up), of which each lane keeps the one its walk takes. Only the leaf
//! cells, which a lane reaches about twice per ray, leave the lanes: their
//! triangles are tested one lane at a time by the caller's code. A lane
//! whose ray is done takes the next ray of the batch at once, so the lanes
//! stay full until the batch runs out.
//!
//! Every lane computes exactly what [`HeightField::walk`] computes, with
//! the same operations in the same order (no fused multiply-add), so each
//! ray visits the same cells and gets the same hit as on its own: the
//! tests check this bit for bit.

use std::arch::x86_64::*;

use super::{on_line, HeightField};
use crate::accel::ray::{Ray, CULL_SLACK, ROBUST_FAR};

/// Whether this CPU can run the lanes.
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx2")
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
}

/// Levels the lanes handle: the start of each level in the range array
/// is looked up with two 8-entry permutes.
pub(super) const LANE_LEVELS: u32 = 16;

/// Walks every ray of `rays` (with its own `t_max`) as
/// [`HeightField::walk_all_sides`] does, calling `cell(field, k, i, j,
/// &mut t_best)` for ray `k`'s candidate cells in the same order; a ray
/// stops when its call returns true.
///
/// # Safety
///
/// The CPU must support AVX2 ([`available`]) and the field's sample and
/// range counts must fit in an `i32` and it must have at most
/// [`LANE_LEVELS`] levels ([`HeightField::fits_lanes`]).
#[target_feature(enable = "avx2")]
pub(super) unsafe fn walk(
    field: &HeightField,
    rays: &[Ray],
    t_max: &[f32],
    cell: &mut impl FnMut(&HeightField, usize, usize, usize, &mut f32) -> bool,
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
    let (x_cells, x_size) = (
        _mm256_set1_ps((field.cols - 1) as f32),
        _mm256_set1_ps(field.size[0]),
    );
    let (z_cells, z_size) = (
        _mm256_set1_ps((field.rows - 1) as f32),
        _mm256_set1_ps(field.size[1]),
    );
    let half = _mm256_set1_ps(0.5);
    let line = |index: __m256i, cells: __m256, size: __m256| {
        _mm256_mul_ps(
            _mm256_sub_ps(_mm256_div_ps(_mm256_cvtepi32_ps(index), cells), half),
            size,
        )
    };
    let mut s = State {
        ray: [-1; 8],
        ..State::default()
    };
    let mut next = 0;
    for lane in 0..8 {
        fill(field, rays, t_max, &mut next, &mut s, lane, cell);
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
        let ray = load_i(&s.ray);
        let active = _mm256_cmpgt_epi32(ray, _mm256_set1_epi32(-1));
        if _mm256_movemask_ps(_mm256_castsi256_ps(active)) == 0 {
            return;
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
        let tx = _mm256_mul_ps(_mm256_sub_ps(line(col, x_cells, x_size), ox), inv_x);
        let tz = _mm256_mul_ps(_mm256_sub_ps(line(row, z_cells, z_size), oz), inv_z);
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
        let [lo, hi] = range_of_pairs(data, first, second);
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

        // Leaf cells leave the lanes: the caller tests their triangles.
        let mut stopped = 0;
        let mut leaves = _mm256_movemask_ps(_mm256_and_ps(overlaps, leaf_ps));
        if leaves != 0 {
            while leaves != 0 {
                let lane = leaves.trailing_zeros() as usize;
                leaves &= leaves - 1;
                let (i, j) = (s.bi[lane] as usize, s.bj[lane] as usize);
                if cell(field, s.ray[lane] as usize, i, j, &mut s.t_best[lane]) {
                    stopped |= 1 << lane;
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
            _mm256_mul_ps(_mm256_sub_ps(line(col_mid, x_cells, x_size), ox), inv_x),
        ));
        let past_z = _mm256_castps_si256(_mm256_cmp_ps::<_CMP_GE_OQ>(
            t,
            _mm256_mul_ps(_mm256_sub_ps(line(row_mid, z_cells, z_size), oz), inv_z),
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
        let mut done =
            (_mm256_movemask_ps(_mm256_and_ps(done, _mm256_castsi256_ps(active))) | stopped) as u32;
        while done != 0 {
            let lane = done.trailing_zeros() as usize;
            done &= done - 1;
            fill(field, rays, t_max, &mut next, &mut s, lane, cell);
        }
    }
}

/// Puts the next ray of the batch that needs a lane into `lane`, or empties
/// it. Rays that miss the field's box need no walk; rays that run exactly
/// along a grid line are walked on their own, on both sides of the line.
#[inline(always)]
fn fill(
    field: &HeightField,
    rays: &[Ray],
    t_max: &[f32],
    next: &mut usize,
    s: &mut State,
    lane: usize,
    cell: &mut impl FnMut(&HeightField, usize, usize, usize, &mut f32) -> bool,
) {
    while *next < rays.len() {
        let k = *next;
        *next += 1;
        let ray = &rays[k];
        if (ray.dir.x == 0.0 && on_line(&field.xs, ray.origin.x))
            || (ray.dir.z == 0.0 && on_line(&field.zs, ray.origin.z))
        {
            field.walk_all_sides(ray, t_max[k], &mut |f, i, j, t_best| {
                cell(f, k, i, j, t_best)
            });
            continue;
        }
        let Some(start) = field.start(ray, t_max[k]) else {
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
        s.t[lane] = start.t_enter;
        s.t_best[lane] = t_max[k];
        s.level[lane] = start.level as i32;
        s.bi[lane] = start.block[0] as i32;
        s.bj[lane] = start.block[1] as i32;
        s.ray[lane] = k as i32;
        s.fwd_x[lane] = -((inv.x > 0.0) as i32);
        s.fwd_z[lane] = -((inv.z > 0.0) as i32);
        s.descending[lane] = -((d.y <= 0.0) as i32);
        return;
    }
    s.ray[lane] = -1;
    s.level[lane] = 0;
    s.bi[lane] = 0;
    s.bj[lane] = 0;
}

/// Per lane, the min and max of the f32 pairs at `data[first]` and
/// `data[second]`.
#[inline(always)]
unsafe fn range_of_pairs(data: *const f32, first: __m256i, second: __m256i) -> [__m256; 2] {
    let pairs = |at: __m256i| {
        let gather = |half: __m128i| {
            _mm256_castsi256_ps(_mm256_i32gather_epi64::<4>(data as *const i64, half))
        };
        (
            gather(_mm256_castsi256_si128(at)),
            gather(_mm256_extracti128_si256::<1>(at)),
        )
    };
    // Lanes 0–3 and 4–7, each as (a, b) pairs.
    let (first_low, first_high) = pairs(first);
    let (second_low, second_high) = pairs(second);
    let (min_low, max_low) = (
        _mm256_min_ps(first_low, second_low),
        _mm256_max_ps(first_low, second_low),
    );
    let (min_high, max_high) = (
        _mm256_min_ps(first_high, second_high),
        _mm256_max_ps(first_high, second_high),
    );
    // Even and odd elements: lanes in the order 0 1 4 5 2 3 6 7, which
    // the final 64-bit permute puts back.
    let lo = _mm256_min_ps(
        _mm256_shuffle_ps::<0b10_00_10_00>(min_low, min_high),
        _mm256_shuffle_ps::<0b11_01_11_01>(min_low, min_high),
    );
    let hi = _mm256_max_ps(
        _mm256_shuffle_ps::<0b10_00_10_00>(max_low, max_high),
        _mm256_shuffle_ps::<0b11_01_11_01>(max_low, max_high),
    );
    let order =
        |v: __m256| _mm256_castpd_ps(_mm256_permute4x64_pd::<0b11_01_10_00>(_mm256_castps_pd(v)));
    [order(lo), order(hi)]
}

/// min(a, b) per lane that ignores a NaN `b`, as the scalar `lower`.
#[inline(always)]
unsafe fn lower(a: __m256, b: __m256) -> __m256 {
    _mm256_blendv_ps(a, b, _mm256_cmp_ps::<_CMP_LT_OQ>(b, a))
}

#[inline(always)]
unsafe fn load(v: &[f32; 8]) -> __m256 {
    _mm256_load_ps(v.as_ptr())
}

#[inline(always)]
unsafe fn store(v: &mut [f32; 8], x: __m256) {
    _mm256_store_ps(v.as_mut_ptr(), x)
}

#[inline(always)]
unsafe fn load_i(v: &[i32; 8]) -> __m256i {
    _mm256_load_si256(v.as_ptr() as *const __m256i)
}

#[inline(always)]
unsafe fn store_i(v: &mut [i32; 8], x: __m256i) {
    _mm256_store_si256(v.as_mut_ptr() as *mut __m256i, x)
}
