//! Camera rays from one origin, walked together down to near the ground.
//!
//! A camera ray spends most of its walk descending: from four levels below
//! the root to the cell it hits, about two steps a level. Its neighbours in
//! the image descend through nearly the same blocks. So a bundle of rays
//! that share an origin (an 8 × 8 patch of pixels) first walks once as a
//! cone: apex at the origin, axis through the middle of the bundle, wide
//! enough to hold every ray. The cone walks the hierarchy like a ray, but
//! a block is passed only when the whole cone is above everything near it:
//! where the cone is no wider than a block, its cross-section lies within
//! the block and its eight neighbours, so the cone is clear of the terrain
//! over the block's stretch when its lowest point there is above the
//! highest of those nine ranges. The cone descends until a block is not
//! clear, or until it is wider than the blocks below; up to there, along
//! the axis, no ray of the bundle can meet a triangle.
//!
//! Each ray then starts its own walk where it leaves the cleared part of
//! the cone. A start is only a place to begin: the walk from it meets
//! every cell the ray crosses after it, and the cells before it hold no
//! hit, so every ray gets exactly the hit it gets from the field's edge.
//! All margins are generous against f32 rounding (~1e-6 relative) and
//! tiny against a block.

use glam::Vec3;

use super::{lower, Block, FieldView, HeightField};
use crate::ray::{Aabb, Ray};

/// Rays taken together: 64, an 8 × 8 patch of pixels when the caller
/// orders them so.
pub(super) const BUNDLE: usize = 64;

/// The widest bundle worth a cone: sine of its half-angle (about 8°).
const MAX_SIN: f32 = 0.14;

/// Where a ray's walk may start: ray parameter `t` (no hit before it) and
/// the level of the block it starts in there. In C order, so that the
/// lanes can read eight of them as two vectors.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C)]
pub(super) struct Hint {
    pub t: f32,
    pub level: u32,
}

impl HeightField {
    /// A start hint for each ray of `rays`, bundle by bundle: rays from the
    /// eye of the field's sight table get the starts it gives, and a bundle
    /// whose rays all share one origin the starts its cone finds where
    /// these are later; any other ray starts at the field's edge (t = 0).
    pub(super) fn hints(&self, view: &FieldView, rays: &[Ray]) -> Vec<Hint> {
        let mut hints = vec![Hint::default(); rays.len()];
        for (bundle, out) in rays.chunks(BUNDLE).zip(hints.chunks_mut(BUNDLE)) {
            // The eye's table first ([`sight`](super::sight)); where it
            // leaves a ray without a start, the cone may still move some.
            if !view.sight.as_ref().is_some_and(|s| s.starts(bundle, out)) {
                self.bundle_hints(bundle, out);
            }
        }
        hints
    }

    /// Where a ray from inside the field's hole (a ray leaving the finer
    /// level inside it) leaves the hole: no triangle of the field's own
    /// surface lies before that. The default hint for any other ray, or
    /// for a field without a hole.
    #[inline]
    pub(super) fn hole_hint(&self, ray: &Ray) -> Hint {
        let Some([lo, hi]) = self.hole else {
            return Hint::default();
        };
        let o = ray.origin;
        if !(o.x > lo[0] && o.x < hi[0] && o.z > lo[1] && o.z < hi[1]) {
            return Hint::default();
        }
        let leave = |o: f32, d: f32, lo: f32, hi: f32| {
            if d > 0.0 {
                (hi - o) / d
            } else if d < 0.0 {
                (lo - o) / d
            } else {
                f32::INFINITY
            }
        };
        let t = leave(o.x, ray.dir.x, lo[0], hi[0]).min(leave(o.z, ray.dir.z, lo[1], hi[1]));
        Hint {
            t: t * (1.0 - 1e-6),
            level: self.top.saturating_sub(4),
        }
    }

    fn bundle_hints(&self, rays: &[Ray], hints: &mut [Hint]) {
        let origin = rays[0].origin;
        if rays.len() < 2 || rays.iter().any(|r| r.origin != origin) {
            return;
        }
        let Some(axis) = rays.iter().map(|r| r.dir).sum::<Vec3>().try_normalize() else {
            return;
        };
        // The cone's half-angle: the widest ray's, from its sine (the part
        // of d across the axis, accurate for the small angles of a
        // bundle), widened a little.
        let mut sin2 = 0.0f32;
        // Each ray's direction along the axis, kept for its start below.
        let mut along = [0.0f32; BUNDLE];
        for (r, along) in rays.iter().zip(&mut along) {
            *along = axis.dot(r.dir);
            if along.is_nan() || *along <= 0.0 {
                return;
            }
            sin2 = sin2.max((r.dir - axis * *along).length_squared() / r.dir.length_squared());
        }
        if sin2.is_nan() || sin2 > MAX_SIN * MAX_SIN {
            return;
        }
        let tan = (sin2 / (1.0 - sin2)).sqrt() * 1.01 + 1e-6;
        let Some((clear, level)) = self.clear_cone(origin, axis, tan) else {
            return;
        };
        let clear = clear * (1.0 - 1e-4);
        for (&along, hint) in along.iter().zip(hints) {
            // The ray's point at t lies at t·(axis·d) along the axis.
            let t = clear / along;
            if t.is_finite() && t > hint.t {
                *hint = Hint { t, level };
            }
        }
    }

    /// How far along `axis` (unit) the cone from `apex` with half-angle
    /// tan⁻¹ `tan` stays clear of the terrain, and the level the walk was
    /// at there; None when it is not clear anywhere worth a start.
    fn clear_cone(&self, apex: Vec3, axis: Vec3, tan: f32) -> Option<(f32, u32)> {
        if self.top == 0 {
            return None; // one cell: nothing to skip
        }
        let ray = Ray::new(apex, axis);
        let (o, d) = (ray.origin, ray.dir);
        let (cw, ch) = (self.cols - 1, self.rows - 1);
        // The axis over the field's footprint: its box, unbounded in y.
        let footprint = Aabb {
            min: Vec3::new(self.xs[0], f32::NEG_INFINITY, self.zs[0]),
            max: Vec3::new(self.xs[cw], f32::INFINITY, self.zs[ch]),
        };
        let (s_in, s_out) = footprint.interval(&ray, f32::INFINITY)?;
        if !s_out.is_finite() {
            return None;
        }
        let [lo_all, hi_all] = [self.bounds.min.y, self.bounds.max.y];
        let extent = self.size[0].max(self.size[1]);
        // Absolute slack for rounding, growing with the distances involved.
        let scale = o.abs().max_element() + extent + lo_all.abs() + hi_all.abs();
        let slack = |s: f32| (scale + s) * 1e-5;
        let radius = |s: f32| s * tan + slack(s);
        let y = |s: f32| o.y + d.y * s;
        // Before the footprint the cone must pass above every height.
        if s_in > 0.0 && y(0.0).min(y(s_in)) - radius(s_in) <= hi_all + slack(s_in) {
            return None;
        }
        // A block's smallest side at each level.
        let cell = self.cell_side();
        let side = |level: u32| cell * (1u64 << level) as f32;

        let mut block = Block {
            level: self.top,
            i: 0,
            j: 0,
        };
        let mut t = s_in;
        loop {
            let (tx, tz) = self.exits(&ray, block);
            let t_exit = lower(lower(s_out, tx), tz);
            let r = radius(t_exit);
            let level = block.level;
            if r > side(level) {
                // Too wide for these blocks' neighbourhoods.
                return (t > 0.0).then_some((t, level));
            }
            let high = self.peaks[self.level_base[level as usize]
                - self.level_base[self.peaks_from as usize]
                + block.i * self.level_cols[level as usize]
                + block.j];
            if y(t).min(y(t_exit)) - r <= high + slack(t_exit) {
                // Not clear: closer in, or stop where it is too wide to.
                if level == self.peaks_from || r > side(level - 1) {
                    return (t > 0.0).then_some((t, level));
                }
                block = self.child(&ray, t, block);
                continue;
            }
            if t_exit >= s_out {
                return Some((s_out, level));
            }
            t = t_exit;
            let Some(next) = self.across(&ray, tx, tz, block, self.top) else {
                return Some((t, level));
            };
            block = next;
        }
    }
}
