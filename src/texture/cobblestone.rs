//! The cobblestone texture: Worley (Voronoi) cells on a torus, so it tiles.
//!
//! One feature point per cell of a g × g grid (g = round(√stones)), jittered
//! inside its cell from hash(seed, cell). For each texel the distances to the
//! nearest and second-nearest points, F1 and F2, give the stone it belongs to
//! and how far it is from the mortar line between stones ((F2 − F1)/2, the
//! distance to the bisector). A stone rises from the mortar gap with a
//! rounded shoulder to a flat top: height = √smoothstep(w, w + 0.3·cell, e)
//! with e = (F2 − F1)/2 and w the mortar half-width, times a per-stone
//! factor in [0.8, 1]. Only arithmetic and square roots are used, so the
//! output is the same on every platform.

use glam::Vec3;

use crate::hash::unit_f32;

/// Parameters of the cobblestone generator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cobblestone {
    /// Texture side, pixels.
    pub size: u32,
    /// Seed of the stone layout and colours.
    pub seed: u64,
    /// Approximate number of stones (rounded to a square number).
    pub stones: u32,
}

/// Mortar colour (linear reflectance).
const MORTAR: Vec3 = Vec3::new(0.16, 0.15, 0.14);
/// Stone colours: a few greys and browns.
const PALETTE: [Vec3; 5] = [
    Vec3::new(0.42, 0.40, 0.37),
    Vec3::new(0.33, 0.31, 0.29),
    Vec3::new(0.45, 0.37, 0.28),
    Vec3::new(0.36, 0.29, 0.22),
    Vec3::new(0.50, 0.48, 0.45),
];

const STREAM_POINT_X: u64 = 0xC0_01;
const STREAM_POINT_Y: u64 = 0xC0_02;
const STREAM_COLOR: u64 = 0xC0_03;
const STREAM_SHADE: u64 = 0xC0_04;
const STREAM_HEIGHT: u64 = 0xC0_05;

/// A generated texture pair: displacement heights and matching albedo.
#[derive(Debug, Clone, PartialEq)]
pub struct CobblestoneMaps {
    /// Side, pixels.
    pub size: u32,
    /// Row-major heights in [0, 1]: 0 in the mortar, up to 1 on stone tops.
    pub height: Vec<f32>,
    /// Row-major linear albedo.
    pub albedo: Vec<Vec3>,
}

impl Cobblestone {
    /// Grid cells per side.
    pub fn grid(&self) -> u32 {
        ((self.stones as f64).sqrt().round() as u32).max(2)
    }

    /// Height and albedo at texture position (px, py) in pixels; periodic
    /// with period `size` in both directions.
    pub fn eval(&self, px: f32, py: f32) -> (f32, Vec3) {
        let g = self.grid() as i64;
        let cell = self.size as f32 / g as f32;
        let point = |a: i64, b: i64| {
            let id = (b.rem_euclid(g) * g + a.rem_euclid(g)) as u64;
            let jx = 0.15 + 0.7 * unit_f32(self.seed, STREAM_POINT_X, id);
            let jy = 0.15 + 0.7 * unit_f32(self.seed, STREAM_POINT_Y, id);
            // Points of wrapped cells keep their unwrapped position.
            ((a as f32 + jx) * cell, (b as f32 + jy) * cell, id)
        };
        let mortar = 0.07 * cell;
        let (ca, cb) = ((px / cell).floor() as i64, (py / cell).floor() as i64);
        let (mut f1, mut f2, mut nearest) = (f32::INFINITY, f32::INFINITY, 0u64);
        for db in -2..=2 {
            for da in -2..=2 {
                let (qx, qy, id) = point(ca + da, cb + db);
                let d = ((qx - px) * (qx - px) + (qy - py) * (qy - py)).sqrt();
                if d < f1 {
                    f2 = f1;
                    f1 = d;
                    nearest = id;
                } else if d < f2 {
                    f2 = d;
                }
            }
        }
        let edge = 0.5 * (f2 - f1);
        // Rounded shoulders from the mortar line inward, then a flat top:
        // the profile depends only on the distance to the stone's edge.
        let dome = smoothstep(mortar, mortar + 0.3 * cell, edge).sqrt();
        let rim = smoothstep(mortar, 2.0 * mortar, edge);
        let top = 0.8 + 0.2 * unit_f32(self.seed, STREAM_HEIGHT, nearest);
        let pick = (unit_f32(self.seed, STREAM_COLOR, nearest) * PALETTE.len() as f32) as usize;
        let shade = 0.9 + 0.2 * unit_f32(self.seed, STREAM_SHADE, nearest);
        let stone = PALETTE[pick % PALETTE.len()] * shade * (0.85 + 0.15 * dome);
        (dome * top, MORTAR.lerp(stone, rim))
    }

    /// Generates both maps, sampling each texel at its centre.
    pub fn generate(&self) -> CobblestoneMaps {
        let n = self.size as usize;
        let mut height = vec![0.0f32; n * n];
        let mut albedo = vec![MORTAR; n * n];
        for y in 0..n {
            for x in 0..n {
                let (h, a) = self.eval(x as f32 + 0.5, y as f32 + 0.5);
                height[y * n + x] = h;
                albedo[y * n + x] = a;
            }
        }
        CobblestoneMaps {
            size: self.size,
            height,
            albedo,
        }
    }
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

impl CobblestoneMaps {
    /// The heights as a 16-bit grayscale image.
    pub fn height_image(&self) -> image::DynamicImage {
        let img = image::ImageBuffer::from_fn(self.size, self.size, |x, y| {
            let h = self.height[(y * self.size + x) as usize];
            image::Luma([(h.clamp(0.0, 1.0) * 65535.0).round() as u16])
        });
        image::DynamicImage::ImageLuma16(img)
    }

    /// The albedo as an 8-bit RGB image (linear values, no gamma).
    pub fn albedo_image(&self) -> image::DynamicImage {
        let img = image::RgbImage::from_fn(self.size, self.size, |x, y| {
            let c = self.albedo[(y * self.size + x) as usize];
            let q = |v: f32| (v.clamp(0.0, 1.0) * 255.0).round() as u8;
            image::Rgb([q(c.x), q(c.y), q(c.z)])
        });
        image::DynamicImage::ImageRgb8(img)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::fnv1a;

    fn maps() -> CobblestoneMaps {
        Cobblestone {
            size: 128,
            seed: 1,
            stones: 36,
        }
        .generate()
    }

    #[test]
    fn heights_are_in_range_with_mortar_and_tops() {
        let m = maps();
        assert!(m.height.iter().all(|&h| (0.0..=1.0).contains(&h)));
        let mortar = m.height.iter().filter(|&&h| h == 0.0).count();
        let tops = m.height.iter().filter(|&&h| h > 0.7).count();
        assert!(mortar > 128 * 128 / 50, "mortar gaps: {mortar}");
        assert!(tops > 128 * 128 / 10, "stone tops: {tops}");
    }

    #[test]
    fn is_periodic() {
        let c = Cobblestone {
            size: 128,
            seed: 1,
            stones: 36,
        };
        for k in 0..200 {
            let (x, y) = ((k * 37 % 128) as f32 + 0.5, (k * 53 % 128) as f32 + 0.5);
            let (h, a) = c.eval(x, y);
            for (dx, dy) in [(128.0, 0.0), (0.0, 128.0), (-128.0, 128.0)] {
                let (h2, a2) = c.eval(x + dx, y + dy);
                assert!(
                    (h - h2).abs() < 1e-3 && (a - a2).length() < 1e-3,
                    "({x}, {y}) + ({dx}, {dy})"
                );
            }
        }
    }

    #[test]
    fn tiles_seamlessly() {
        // Across the wrap (last column → first, last row → first) heights
        // change no more than across the roughest interior column or row
        // boundary (the tile edge is also a cell boundary, where mortar
        // lines gather, so compare it with interior boundaries, not with
        // the average).
        let m = maps();
        let n = 128;
        let h = |x: usize, y: usize| m.height[y * n + x];
        let mean = |v: Vec<f32>| v.iter().sum::<f32>() / v.len() as f32;
        let col_step =
            |a: usize, b: usize| mean((0..n).map(|y| (h(a, y) - h(b, y)).abs()).collect());
        let row_step =
            |a: usize, b: usize| mean((0..n).map(|x| (h(x, a) - h(x, b)).abs()).collect());
        let worst_col = (0..n - 1).map(|x| col_step(x, x + 1)).fold(0.0, f32::max);
        let worst_row = (0..n - 1).map(|y| row_step(y, y + 1)).fold(0.0, f32::max);
        assert!(
            col_step(n - 1, 0) <= worst_col,
            "x seam {} vs {worst_col}",
            col_step(n - 1, 0)
        );
        assert!(
            row_step(n - 1, 0) <= worst_row,
            "y seam {} vs {worst_row}",
            row_step(n - 1, 0)
        );
    }

    #[test]
    fn fingerprint() {
        let m = maps();
        let fp = fnv1a(m.height.iter().flat_map(|h| h.to_bits().to_le_bytes()));
        assert_eq!(fp, 16722138290041246807, "cobblestone fingerprint");
    }

    #[test]
    fn seed_changes_the_layout() {
        let a = Cobblestone {
            size: 64,
            seed: 1,
            stones: 16,
        }
        .generate();
        let b = Cobblestone {
            size: 64,
            seed: 2,
            stones: 16,
        }
        .generate();
        assert_ne!(a.height, b.height);
        assert_eq!(
            a,
            Cobblestone {
                size: 64,
                seed: 1,
                stones: 16
            }
            .generate()
        );
    }
}
