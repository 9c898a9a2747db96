//! What layered materials read about the ground besides its height and
//! normal: curvature (gullies and ridges) and water flow, per sample of
//! the grid, looked up bilinearly at world (x, z).
//!
//! Curvature is the Laplacian of the heights (positive in hollows and
//! gullies, negative on ridges; edge samples take their inner
//! neighbour's), divided by three times its mean absolute
//! value over the grid and clamped to [−1, 1], so one setting reads the
//! same on any terrain. Flow is D8 flow accumulation on the final heights:
//! each sample, highest first, passes the area it gathered (its own and
//! what flowed into it) to its steepest downhill neighbour of eight; the
//! result is ln(area) / ln(largest area), 0 on ridges, 1 in the main
//! channel. It needs no erosion step, and after hydraulic erosion it
//! follows the carved channels.

use super::TerrainGrid;

/// Curvature and flow of a terrain grid, and its height range.
#[derive(Debug, Clone, Default)]
pub struct GroundAttributes {
    width: usize,
    height: usize,
    size: [f32; 2],
    /// Lowest sample.
    pub low: f32,
    /// Highest minus lowest sample.
    pub relief: f32,
    curvature: Vec<f32>,
    flow: Vec<f32>,
}

impl TerrainGrid {
    /// The grid's height range, and its curvature and flow where asked
    /// for (each costs 4 bytes a sample).
    pub fn attributes(&self, curvature: bool, flow: bool) -> GroundAttributes {
        let (w, h) = (self.heights.width, self.heights.height);
        let data = self.heights.data();
        let low = data.iter().copied().fold(f32::INFINITY, f32::min);
        let high = data.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        GroundAttributes {
            width: w,
            height: h,
            size: self.size,
            low,
            relief: (high - low).max(0.0),
            curvature: if curvature {
                self.curvature()
            } else {
                Vec::new()
            },
            flow: if flow { self.flow() } else { Vec::new() },
        }
    }

    fn curvature(&self) -> Vec<f32> {
        let (w, h) = (self.heights.width, self.heights.height);
        let dx = self.size[0] / (w - 1) as f32;
        let dz = self.size[1] / (h - 1) as f32;
        if w < 3 || h < 3 {
            return vec![0.0; w * h];
        }
        let at = |i: usize, j: usize| self.heights.at(i, j);
        // Edge samples take their inner neighbour's value.
        let mut lap: Vec<f32> = (0..h * w)
            .map(|k| {
                let (i, j) = ((k / w).clamp(1, h - 2), (k % w).clamp(1, w - 2));
                let c = at(i, j);
                let xs = at(i, j - 1) + at(i, j + 1) - 2.0 * c;
                let zs = at(i - 1, j) + at(i + 1, j) - 2.0 * c;
                xs / (dx * dx) + zs / (dz * dz)
            })
            .collect();
        let mean = lap.iter().map(|v| v.abs() as f64).sum::<f64>() / lap.len() as f64;
        let scale = if mean > 0.0 { (3.0 * mean) as f32 } else { 1.0 };
        lap.iter_mut()
            .for_each(|v| *v = (*v / scale).clamp(-1.0, 1.0));
        lap
    }

    fn flow(&self) -> Vec<f32> {
        let (w, h) = (self.heights.width, self.heights.height);
        let data = self.heights.data();
        let dx = self.size[0] / (w - 1) as f32;
        let dz = self.size[1] / (h - 1) as f32;
        let mut order: Vec<u32> = (0..(w * h) as u32).collect();
        order.sort_by(|&a, &b| {
            data[b as usize]
                .total_cmp(&data[a as usize])
                .then(a.cmp(&b))
        });
        let mut area = vec![1.0f32; w * h];
        for &k in &order {
            let k = k as usize;
            let (i, j) = (k / w, k % w);
            let mut best: Option<(f32, usize)> = None;
            for (n, di, dj) in super::hydrology::neighbours(i, j, w, h) {
                let dist = ((di as f32 * dz).powi(2) + (dj as f32 * dx).powi(2)).sqrt();
                let drop = (data[k] - data[n]) / dist;
                if drop > 0.0 && best.is_none_or(|(d, _)| drop > d) {
                    best = Some((drop, n));
                }
            }
            if let Some((_, n)) = best {
                area[n] += area[k];
            }
        }
        let most = area.iter().copied().fold(1.0f32, f32::max);
        let norm = if most > 1.0 { most.ln() } else { 1.0 };
        area.iter().map(|a| a.ln() / norm).collect()
    }
}

impl GroundAttributes {
    /// World height `y` as a fraction of the relief (0 lowest, 1 highest).
    #[inline]
    pub fn height_fraction(&self, y: f32) -> f32 {
        if self.relief > 0.0 {
            (y - self.low) / self.relief
        } else {
            0.0
        }
    }

    /// Bytes held by the curvature and flow fields.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(self.curvature.as_slice())
            + std::mem::size_of_val(self.flow.as_slice())
    }

    /// Curvature at world (x, z), −1..1 (0 where not computed).
    #[inline]
    pub fn curvature_at(&self, x: f32, z: f32) -> f32 {
        self.lookup(&self.curvature, x, z)
    }

    /// Flow at world (x, z), 0..1 (0 where not computed).
    #[inline]
    pub fn flow_at(&self, x: f32, z: f32) -> f32 {
        self.lookup(&self.flow, x, z)
    }

    fn lookup(&self, field: &[f32], x: f32, z: f32) -> f32 {
        if field.is_empty() {
            return 0.0;
        }
        let (w, h) = (self.width, self.height);
        let fx = ((x / self.size[0] + 0.5) * (w - 1) as f32).clamp(0.0, (w - 1) as f32);
        let fz = ((z / self.size[1] + 0.5) * (h - 1) as f32).clamp(0.0, (h - 1) as f32);
        let j = (fx.floor() as usize).min(w - 2);
        let i = (fz.floor() as usize).min(h - 2);
        let (u, v) = (fx - j as f32, fz - i as f32);
        let at = |i: usize, j: usize| field[i * w + j];
        let top = at(i, j) + u * (at(i, j + 1) - at(i, j));
        let bottom = at(i + 1, j) + u * (at(i + 1, j + 1) - at(i + 1, j));
        top + v * (bottom - top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::Heightmap;

    fn grid(f: impl Fn(f32, f32) -> f32) -> TerrainGrid {
        let n = 65;
        let data = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                f(
                    j as f32 / (n - 1) as f32 * 2.0 - 1.0,
                    i as f32 / (n - 1) as f32 * 2.0 - 1.0,
                )
            })
            .collect();
        TerrainGrid {
            heights: Heightmap::new(n, n, data),
            size: [20.0, 20.0],
        }
    }

    /// A valley (a parabola along x) is a hollow: positive curvature down
    /// its floor; a ridge (the parabola upside down) is negative. A plane
    /// has none.
    #[test]
    fn valleys_curve_up_and_ridges_down() {
        let valley = grid(|x, _| 5.0 * x * x).attributes(true, false);
        assert!(valley.curvature_at(0.0, 3.0) > 0.2);
        let ridge = grid(|x, _| -5.0 * x * x).attributes(true, false);
        assert!(ridge.curvature_at(0.0, 3.0) < -0.2);
        let plane = grid(|x, z| x + 0.5 * z).attributes(true, false);
        assert_eq!(plane.curvature_at(1.0, -2.0), 0.0);
        assert_eq!(valley.flow_at(0.0, 0.0), 0.0, "flow not asked for");
        assert!((valley.relief - 5.0).abs() < 1e-5 && valley.low.abs() < 1e-5);
        assert!((valley.height_fraction(2.5) - 0.5).abs() < 1e-6);
    }

    /// Water runs down a V valley tilted along z: the floor's downstream
    /// end gathers the most flow (1), the crests almost none.
    #[test]
    fn flow_gathers_in_the_valley_floor() {
        let a = grid(|x, z| 3.0 * x.abs() + 0.5 * z).attributes(false, true);
        let mouth = a.flow_at(0.0, -10.0);
        let crest = a.flow_at(-10.0, 10.0);
        let side = a.flow_at(-5.0, 0.0);
        assert!(mouth > 0.95, "{mouth}");
        assert!(crest < 0.05, "{crest}");
        assert!(side < mouth && side > crest, "{side}");
    }
}
