//! The x86 instruction sets the SIMD kernels are compiled for, and the best
//! one this CPU runs.
//!
//! A kernel is written once with AVX or AVX2 intrinsics and compiled into
//! one copy per instruction set it can use (`#[target_feature]` wrappers
//! around an `#[inline(always)]` body). The AVX-512 copy runs the same
//! intrinsics, which the compiler encodes with 32 registers and mask
//! registers: fewer spills, blends in one step. No operation changes, so
//! every copy gives the same bits; the tests run each copy the CPU has.
//! The terrain walk goes further: it is written over lane vectors
//! (`heightfield::simd`), and its AVX-512 copy walks sixteen lanes instead
//! of eight, with the same operations per lane.

use std::sync::OnceLock;

/// An instruction set a kernel may be compiled for, in order of what each
/// adds to the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// AVX: 8-wide f32 arithmetic.
    Avx,
    /// AVX2: 8-wide integer arithmetic and permutes as well.
    Avx2,
    /// AVX-512 F and VL on top of AVX2: the BVH's 8-wide operations with
    /// more registers and mask registers; the terrain walk in 16 lanes.
    Avx512,
}

impl Isa {
    /// Every instruction set, lowest first.
    pub const ALL: [Isa; 3] = [Isa::Avx, Isa::Avx2, Isa::Avx512];

    /// The best instruction set this CPU runs (None: no AVX, the kernels'
    /// scalar paths), found once: the traversals ask for every ray. Under
    /// test, `with_cap` can lower it.
    #[inline(always)]
    pub fn best() -> Option<Isa> {
        static BEST: OnceLock<Option<Isa>> = OnceLock::new();
        let best = *BEST.get_or_init(|| Isa::ALL.into_iter().rev().find(|i| i.runs_here()));
        #[cfg(test)]
        if let Some(cap) = CAP.with(|c| c.get()) {
            // Each set holds the ones below it, so the CPU runs the cap
            // when it is no higher than the best.
            return best.min(cap);
        }
        best
    }

    /// The lowercase name of the set: `avx`, `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Avx => "avx",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU runs code compiled for `self` (the standard
    /// library caches what the CPU has).
    #[inline(always)]
    pub fn runs_here(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Isa::Avx => is_x86_feature_detected!("avx"),
                Isa::Avx2 => is_x86_feature_detected!("avx2"),
                Isa::Avx512 => {
                    is_x86_feature_detected!("avx2")
                        && is_x86_feature_detected!("avx512f")
                        && is_x86_feature_detected!("avx512vl")
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = self;
            false
        }
    }
}

#[cfg(test)]
thread_local! {
    /// The highest instruction set [`Isa::best`] may return on this thread
    /// (Some(None): none, the scalar paths); None: no cap.
    static CAP: std::cell::Cell<Option<Option<Isa>>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with [`Isa::best`] capped at `cap` on this thread (None: the
/// scalar paths), so that a test can run each compiled copy of a kernel.
#[cfg(test)]
pub fn with_cap<T>(cap: Option<Isa>, f: impl FnOnce() -> T) -> T {
    let before = CAP.with(|c| c.replace(Some(cap)));
    let out = f();
    CAP.with(|c| c.set(before));
    out
}

/// The caps that give distinct copies on this CPU: the scalar paths, then
/// each instruction set it runs.
#[cfg(test)]
pub fn caps_here() -> Vec<Option<Isa>> {
    std::iter::once(None)
        .chain(Isa::ALL.into_iter().filter(|i| i.runs_here()).map(Some))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_lowers_the_best_and_is_lifted_after() {
        let best = Isa::best();
        assert_eq!(with_cap(None, Isa::best), None);
        if best.is_some() {
            assert_eq!(with_cap(Some(Isa::Avx), Isa::best), Some(Isa::Avx));
        }
        assert_eq!(with_cap(Some(Isa::Avx512), Isa::best), best);
        assert_eq!(Isa::best(), best);
    }
}
