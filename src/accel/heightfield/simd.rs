//! The lane vectors the terrain walk is written in: eight lanes of AVX2,
//! or sixteen of AVX-512.
//!
//! The walk ([`super::lanes`]) is one generic body over [`Simd`]; each
//! implementation maps the operations it needs onto one instruction set's
//! intrinsics, operation for operation, so both give the same bits. What
//! differs is the width, and how a lane mask is held: AVX2 keeps it as a
//! vector of all-ones or zero lanes, AVX-512 in a mask register.
//!
//! Every method is an `unsafe` intrinsic wrapper: the caller must run on a
//! CPU with the implementation's instruction set, and call it from code
//! compiled for that set (where it inlines to single instructions).

use std::arch::x86_64::*;

/// Lanes the widest implementation has: the walk's per-lane state is
/// sized for it.
pub(super) const MAX_LANES: usize = 16;

/// One instruction set's lane vectors and the operations the walk uses.
///
/// # Safety
///
/// Every method requires the CPU to run the implementation's instruction
/// set. Pointers passed to loads and stores must be valid for `LANES`
/// elements.
#[allow(clippy::missing_safety_doc)]
pub(super) trait Simd: Copy {
    /// Lanes per vector.
    const LANES: usize;
    /// f32 per lane.
    type F: Copy;
    /// i32 per lane.
    type I: Copy;
    /// A bool per lane.
    type M: Copy;

    unsafe fn splat(x: f32) -> Self::F;
    unsafe fn load(p: *const f32) -> Self::F;
    unsafe fn store(p: *mut f32, v: Self::F);
    unsafe fn add(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn sub(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn mul(a: Self::F, b: Self::F) -> Self::F;
    unsafe fn div(a: Self::F, b: Self::F) -> Self::F;
    /// As `minps`: b where either is NaN.
    unsafe fn min(a: Self::F, b: Self::F) -> Self::F;
    /// As `maxps`: b where either is NaN.
    unsafe fn max(a: Self::F, b: Self::F) -> Self::F;
    /// Ordered comparisons (false where either is NaN).
    unsafe fn lt(a: Self::F, b: Self::F) -> Self::M;
    unsafe fn le(a: Self::F, b: Self::F) -> Self::M;
    unsafe fn gt(a: Self::F, b: Self::F) -> Self::M;
    unsafe fn ge(a: Self::F, b: Self::F) -> Self::M;
    unsafe fn eq(a: Self::F, b: Self::F) -> Self::M;
    /// Lanes where `a` is NaN.
    unsafe fn nan(a: Self::F) -> Self::M;
    /// `yes` in the lanes of `m`, `no` elsewhere.
    unsafe fn select(m: Self::M, yes: Self::F, no: Self::F) -> Self::F;
    /// i32 to f32, rounding to nearest.
    unsafe fn to_float(i: Self::I) -> Self::F;

    unsafe fn splat_i(x: i32) -> Self::I;
    unsafe fn load_i(p: *const i32) -> Self::I;
    unsafe fn store_i(p: *mut i32, v: Self::I);
    unsafe fn add_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn sub_i(a: Self::I, b: Self::I) -> Self::I;
    /// The low 32 bits of the product.
    unsafe fn mul_i(a: Self::I, b: Self::I) -> Self::I;
    /// a << b per lane (0 where b ≥ 32).
    unsafe fn shl(a: Self::I, b: Self::I) -> Self::I;
    /// a >> b per lane, logical (0 where b ≥ 32).
    unsafe fn shr(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn and_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn min_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn max_i(a: Self::I, b: Self::I) -> Self::I;
    unsafe fn eq_i(a: Self::I, b: Self::I) -> Self::M;
    /// Signed a > b.
    unsafe fn gt_i(a: Self::I, b: Self::I) -> Self::M;
    unsafe fn select_i(m: Self::M, yes: Self::I, no: Self::I) -> Self::I;
    /// `v` in the lanes of `m`, 0 elsewhere.
    unsafe fn keep_i(m: Self::M, v: Self::I) -> Self::I;
    /// `table[index]` per lane, for indices in 0..16.
    unsafe fn lookup(table: &[i32; 16], index: Self::I) -> Self::I;
    /// Per lane, the f32 pairs at `data[first]` and `data[second]`, as four
    /// vectors: first.0, first.1, second.0, second.1. Every index, and
    /// the one after it, must be within `data`'s allocation.
    unsafe fn pairs(data: *const f32, first: Self::I, second: Self::I) -> [Self::F; 4];
    /// Per lane, `data[index]`; every index must be within `data`'s
    /// allocation.
    unsafe fn gather(data: *const f32, index: Self::I) -> Self::F;

    /// `yes` in the lanes of `m`, `no` elsewhere.
    unsafe fn select_m(m: Self::M, yes: Self::M, no: Self::M) -> Self::M;
    unsafe fn and(a: Self::M, b: Self::M) -> Self::M;
    unsafe fn or(a: Self::M, b: Self::M) -> Self::M;
    unsafe fn xor(a: Self::M, b: Self::M) -> Self::M;
    /// !a & b.
    unsafe fn and_not(a: Self::M, b: Self::M) -> Self::M;
    unsafe fn not(a: Self::M) -> Self::M;
    /// Bit k set where lane k is.
    unsafe fn bits(m: Self::M) -> u32;
    /// Lanes whose integer is not zero (the state keeps masks as 0 / −1).
    unsafe fn mask_of(i: Self::I) -> Self::M;
}

/// Trait methods that are each one expression of intrinsics on their
/// arguments, compiled for `$features`: one line each.
macro_rules! direct {
    ($features:literal; $($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $body:expr;)*) => {
        $(
            #[inline]
            #[target_feature(enable = $features)]
            unsafe fn $name($($arg: $ty),*) -> $ret {
                $body
            }
        )*
    };
}

/// Eight lanes of AVX2; masks are vectors of all-ones or zero lanes.
#[derive(Clone, Copy)]
pub(super) struct Avx2;

impl Simd for Avx2 {
    const LANES: usize = 8;
    type F = __m256;
    type I = __m256i;
    type M = __m256;

    direct! {
        "avx2";
        splat(x: f32) -> __m256 = _mm256_set1_ps(x);
        load(p: *const f32) -> __m256 = _mm256_loadu_ps(p);
        store(p: *mut f32, v: __m256) -> () = _mm256_storeu_ps(p, v);
        add(a: __m256, b: __m256) -> __m256 = _mm256_add_ps(a, b);
        sub(a: __m256, b: __m256) -> __m256 = _mm256_sub_ps(a, b);
        mul(a: __m256, b: __m256) -> __m256 = _mm256_mul_ps(a, b);
        div(a: __m256, b: __m256) -> __m256 = _mm256_div_ps(a, b);
        min(a: __m256, b: __m256) -> __m256 = _mm256_min_ps(a, b);
        max(a: __m256, b: __m256) -> __m256 = _mm256_max_ps(a, b);
        lt(a: __m256, b: __m256) -> __m256 = _mm256_cmp_ps::<_CMP_LT_OQ>(a, b);
        le(a: __m256, b: __m256) -> __m256 = _mm256_cmp_ps::<_CMP_LE_OQ>(a, b);
        gt(a: __m256, b: __m256) -> __m256 = _mm256_cmp_ps::<_CMP_GT_OQ>(a, b);
        ge(a: __m256, b: __m256) -> __m256 = _mm256_cmp_ps::<_CMP_GE_OQ>(a, b);
        eq(a: __m256, b: __m256) -> __m256 = _mm256_cmp_ps::<_CMP_EQ_OQ>(a, b);
        nan(a: __m256) -> __m256 = _mm256_cmp_ps::<_CMP_UNORD_Q>(a, a);
        select(m: __m256, yes: __m256, no: __m256) -> __m256 = _mm256_blendv_ps(no, yes, m);
        to_float(i: __m256i) -> __m256 = _mm256_cvtepi32_ps(i);
        splat_i(x: i32) -> __m256i = _mm256_set1_epi32(x);
        load_i(p: *const i32) -> __m256i = _mm256_loadu_si256(p as *const __m256i);
        store_i(p: *mut i32, v: __m256i) -> () = _mm256_storeu_si256(p as *mut __m256i, v);
        add_i(a: __m256i, b: __m256i) -> __m256i = _mm256_add_epi32(a, b);
        sub_i(a: __m256i, b: __m256i) -> __m256i = _mm256_sub_epi32(a, b);
        mul_i(a: __m256i, b: __m256i) -> __m256i = _mm256_mullo_epi32(a, b);
        shl(a: __m256i, b: __m256i) -> __m256i = _mm256_sllv_epi32(a, b);
        shr(a: __m256i, b: __m256i) -> __m256i = _mm256_srlv_epi32(a, b);
        and_i(a: __m256i, b: __m256i) -> __m256i = _mm256_and_si256(a, b);
        min_i(a: __m256i, b: __m256i) -> __m256i = _mm256_min_epi32(a, b);
        max_i(a: __m256i, b: __m256i) -> __m256i = _mm256_max_epi32(a, b);
        eq_i(a: __m256i, b: __m256i) -> __m256 = _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b));
        gt_i(a: __m256i, b: __m256i) -> __m256 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(a, b));
        select_i(m: __m256, yes: __m256i, no: __m256i) -> __m256i = _mm256_blendv_epi8(no, yes, _mm256_castps_si256(m));
        keep_i(m: __m256, v: __m256i) -> __m256i = _mm256_and_si256(_mm256_castps_si256(m), v);
        select_m(m: __m256, yes: __m256, no: __m256) -> __m256 = _mm256_blendv_ps(no, yes, m);
        and(a: __m256, b: __m256) -> __m256 = _mm256_and_ps(a, b);
        or(a: __m256, b: __m256) -> __m256 = _mm256_or_ps(a, b);
        xor(a: __m256, b: __m256) -> __m256 = _mm256_xor_ps(a, b);
        and_not(a: __m256, b: __m256) -> __m256 = _mm256_andnot_ps(a, b);
        not(a: __m256) -> __m256 = _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(-1)));
        bits(m: __m256) -> u32 = _mm256_movemask_ps(m) as u32;
        mask_of(i: __m256i) -> __m256 = _mm256_castsi256_ps(i);
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn lookup(table: &[i32; 16], index: __m256i) -> __m256i {
        let low = _mm256_loadu_si256(table.as_ptr() as *const __m256i);
        let high = _mm256_loadu_si256(table[8..].as_ptr() as *const __m256i);
        let seven = _mm256_set1_epi32(7);
        _mm256_blendv_epi8(
            _mm256_permutevar8x32_epi32(low, index),
            _mm256_permutevar8x32_epi32(high, _mm256_and_si256(index, seven)),
            _mm256_cmpgt_epi32(index, seven),
        )
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn gather(data: *const f32, index: __m256i) -> __m256 {
        // Eight scalar loads: on AMD Zen 1 the horizons' gather held the
        // shadow walk up (2–4% fewer shadow rays a second than these).
        let mut at = [0i32; 8];
        _mm256_storeu_si256(at.as_mut_ptr() as *mut __m256i, index);
        let v = |k: usize| *data.add(at[k] as usize);
        _mm256_setr_ps(v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn pairs(data: *const f32, first: __m256i, second: __m256i) -> [__m256; 4] {
        let split = |at: __m256i| {
            let mut index = [0i32; 8];
            _mm256_storeu_si256(index.as_mut_ptr() as *mut __m256i, at);
            // Four 64-bit loads per half: cheaper than a gather on AMD
            // Zen 3 (a 4-wide gather costs ~3 ns, these ~1.7).
            let half = |k: usize| two_pairs(data, index[k], index[k + 1]);
            let (a, b, c, d) = (half(0), half(2), half(4), half(6));
            // Lanes 0–3 and 4–7 as (x, y) pairs.
            let low =
                _mm256_castsi256_ps(_mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a), b));
            let high =
                _mm256_castsi256_ps(_mm256_inserti128_si256::<1>(_mm256_castsi128_si256(c), d));
            // Even and odd elements, lanes in the order 0 1 4 5 2 3 6 7;
            // the 64-bit permute puts them back.
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
}

/// The (f32, f32) pairs at `data[a]` and `data[b]`, loaded whole into
/// one 128-bit vector: two lanes' worth of [`Simd::pairs`]. SSE2 only, so
/// it inlines into every copy (and into closures, which do not inherit a
/// function's target features).
///
/// # Safety
///
/// Both indices, and the ones after them, must be within `data`'s
/// allocation.
#[inline(always)]
unsafe fn two_pairs(data: *const f32, a: i32, b: i32) -> __m128i {
    let low = _mm_loadl_epi64(data.add(a as usize) as *const __m128i);
    _mm_castpd_si128(_mm_loadh_pd(
        _mm_castsi128_pd(low),
        data.add(b as usize) as *const f64,
    ))
}

/// Sixteen lanes of AVX-512 (F); masks are mask registers.
#[derive(Clone, Copy)]
pub(super) struct Avx512;

impl Simd for Avx512 {
    const LANES: usize = 16;
    type F = __m512;
    type I = __m512i;
    type M = __mmask16;

    direct! {
        "avx512f";
        splat(x: f32) -> __m512 = _mm512_set1_ps(x);
        load(p: *const f32) -> __m512 = _mm512_loadu_ps(p);
        store(p: *mut f32, v: __m512) -> () = _mm512_storeu_ps(p, v);
        add(a: __m512, b: __m512) -> __m512 = _mm512_add_ps(a, b);
        sub(a: __m512, b: __m512) -> __m512 = _mm512_sub_ps(a, b);
        mul(a: __m512, b: __m512) -> __m512 = _mm512_mul_ps(a, b);
        div(a: __m512, b: __m512) -> __m512 = _mm512_div_ps(a, b);
        min(a: __m512, b: __m512) -> __m512 = _mm512_min_ps(a, b);
        max(a: __m512, b: __m512) -> __m512 = _mm512_max_ps(a, b);
        lt(a: __m512, b: __m512) -> __mmask16 = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(a, b);
        le(a: __m512, b: __m512) -> __mmask16 = _mm512_cmp_ps_mask::<_CMP_LE_OQ>(a, b);
        gt(a: __m512, b: __m512) -> __mmask16 = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b);
        ge(a: __m512, b: __m512) -> __mmask16 = _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b);
        eq(a: __m512, b: __m512) -> __mmask16 = _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(a, b);
        nan(a: __m512) -> __mmask16 = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(a, a);
        select(m: __mmask16, yes: __m512, no: __m512) -> __m512 = _mm512_mask_blend_ps(m, no, yes);
        to_float(i: __m512i) -> __m512 = _mm512_cvtepi32_ps(i);
        splat_i(x: i32) -> __m512i = _mm512_set1_epi32(x);
        load_i(p: *const i32) -> __m512i = _mm512_loadu_si512(p as *const __m512i);
        store_i(p: *mut i32, v: __m512i) -> () = _mm512_storeu_si512(p as *mut __m512i, v);
        add_i(a: __m512i, b: __m512i) -> __m512i = _mm512_add_epi32(a, b);
        sub_i(a: __m512i, b: __m512i) -> __m512i = _mm512_sub_epi32(a, b);
        mul_i(a: __m512i, b: __m512i) -> __m512i = _mm512_mullo_epi32(a, b);
        shl(a: __m512i, b: __m512i) -> __m512i = _mm512_sllv_epi32(a, b);
        shr(a: __m512i, b: __m512i) -> __m512i = _mm512_srlv_epi32(a, b);
        and_i(a: __m512i, b: __m512i) -> __m512i = _mm512_and_si512(a, b);
        min_i(a: __m512i, b: __m512i) -> __m512i = _mm512_min_epi32(a, b);
        max_i(a: __m512i, b: __m512i) -> __m512i = _mm512_max_epi32(a, b);
        eq_i(a: __m512i, b: __m512i) -> __mmask16 = _mm512_cmpeq_epi32_mask(a, b);
        gt_i(a: __m512i, b: __m512i) -> __mmask16 = _mm512_cmpgt_epi32_mask(a, b);
        select_i(m: __mmask16, yes: __m512i, no: __m512i) -> __m512i = _mm512_mask_blend_epi32(m, no, yes);
        keep_i(m: __mmask16, v: __m512i) -> __m512i = _mm512_maskz_mov_epi32(m, v);
        select_m(m: __mmask16, yes: __mmask16, no: __mmask16) -> __mmask16 = (m & yes) | (!m & no);
        and(a: __mmask16, b: __mmask16) -> __mmask16 = a & b;
        or(a: __mmask16, b: __mmask16) -> __mmask16 = a | b;
        xor(a: __mmask16, b: __mmask16) -> __mmask16 = a ^ b;
        and_not(a: __mmask16, b: __mmask16) -> __mmask16 = !a & b;
        not(a: __mmask16) -> __mmask16 = !a;
        bits(m: __mmask16) -> u32 = m as u32;
        mask_of(i: __m512i) -> __mmask16 = _mm512_test_epi32_mask(i, i);
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn lookup(table: &[i32; 16], index: __m512i) -> __m512i {
        _mm512_permutexvar_epi32(index, _mm512_loadu_si512(table.as_ptr() as *const __m512i))
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn gather(data: *const f32, index: __m512i) -> __m512 {
        _mm512_i32gather_ps::<4>(index, data)
    }
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn pairs(data: *const f32, first: __m512i, second: __m512i) -> [__m512; 4] {
        // Each (f32, f32) pair loaded whole, two lanes to 128 bits and
        // four of those to each half's vector; the evens and odds of both
        // halves then make the vectors. On AMD Zen 4 the 32 loads beat two
        // 8-wide 64-bit gathers: 2–16% more rays a second, `scree bench`
        // on the peer workload, alternating builds (the walks wait on
        // these: a quarter to a third of their time on the gathers).
        let evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        let odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
        let split = |at: __m512i| {
            let mut index = [0i32; 16];
            _mm512_storeu_si512(index.as_mut_ptr() as *mut __m512i, at);
            let q = |k: usize| two_pairs(data, index[k], index[k + 1]);
            let half = |k: usize| {
                let v = _mm512_castsi128_si512(q(k));
                let v = _mm512_inserti32x4::<1>(v, q(k + 2));
                let v = _mm512_inserti32x4::<2>(v, q(k + 4));
                _mm512_castsi512_ps(_mm512_inserti32x4::<3>(v, q(k + 6)))
            };
            let (low, high) = (half(0), half(8));
            (
                _mm512_permutex2var_ps(low, evens, high),
                _mm512_permutex2var_ps(low, odds, high),
            )
        };
        let (a, b) = split(first);
        let (c, d) = split(second);
        [a, b, c, d]
    }
}
