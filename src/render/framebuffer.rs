//! The linear-light image a render produces, and its conversion to 8-bit.

use glam::{Vec3, Vec3A, Vec4};
use image::{DynamicImage, RgbImage, RgbaImage};
use rayon::prelude::*;

use super::Rect;
use crate::shade::tonemap::{self, Tonemap};

/// Linear RGB radiance and coverage per pixel, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Framebuffer {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// rgb: mean radiance of the covered samples times coverage; a: coverage.
    pub pixels: Vec<Vec4>,
}

impl Framebuffer {
    /// A transparent black image. Its memory comes zeroed from the system
    /// (`calloc`), so its pages are first touched by the tiles that fill
    /// them, in parallel: `vec![Vec4::ZERO; n]` wrote a 1080p frame's 33 MB
    /// serially before tracing, 30-35 ms.
    pub fn new(width: u32, height: u32) -> Framebuffer {
        Framebuffer {
            width,
            height,
            pixels: bytemuck::zeroed_vec(width as usize * height as usize),
        }
    }

    /// Copies a tile's pixels (row-major within `r`) into place.
    pub fn put(&mut self, r: Rect, pixels: &[Vec4]) {
        put_rect(&mut self.pixels, self.width, r, pixels);
    }

    /// Linear radiance times the exposure as RGBA floats, without tone
    /// mapping (colour premultiplied by coverage, as EXR expects).
    pub fn to_linear_rgba(&self, exposure_scale: f32) -> Vec<[f32; 4]> {
        self.pixels
            .iter()
            .map(|p| {
                let c = p.truncate() * exposure_scale;
                [c.x, c.y, c.z, p.w]
            })
            .collect()
    }

    /// Linear values times the exposure, clamped to [0, 1], in 16 bits per
    /// channel (no tone map, no sRGB curve); RGBA when some pixel is not
    /// fully covered.
    pub fn to_linear16(&self, exposure_scale: f32) -> DynamicImage {
        let q = |v: f32| (v.clamp(0.0, 1.0) * 65535.0 + 0.5) as u16;
        let encoded: Vec<[u16; 4]> = self
            .pixels
            .iter()
            .map(|&p| {
                let rgb = unpremultiplied(p) * exposure_scale;
                [q(rgb.x), q(rgb.y), q(rgb.z), q(p.w)]
            })
            .collect();
        rgb_or_rgba16(self.width, self.height, &encoded)
    }

    /// Exposure, tone curve and sRGB encoding to 8 bits per channel; RGBA
    /// when some pixel's coverage does not round to 255, RGB otherwise.
    pub fn to_srgb8(&self, exposure_scale: f32, op: Tonemap) -> DynamicImage {
        // One pass over the pixels, rows in parallel, straight into the
        // image's colour bytes with the coverage codes beside them. The
        // pass is bound by reading the 33 MB of a 1080p frame: a first
        // pass over them to decide RGB or RGBA made it take twice as long.
        // The decision reads the coverage codes instead, by the rule every
        // 8-bit output follows ([`rgb_or_rgba8`]).
        let n = self.pixels.len();
        let row = self.width.max(1) as usize;
        let mut rgb = vec![0u8; 3 * n];
        let mut alpha = vec![0u8; n];
        rgb.par_chunks_mut(3 * row)
            .zip(alpha.par_chunks_mut(row))
            .zip(self.pixels.par_chunks(row))
            .for_each(|((rgb, alpha), pixels)| srgb8_codes(pixels, rgb, alpha, exposure_scale, op));
        rgb_or_rgba8_from_parts(self.width, self.height, rgb, &alpha)
    }
}

/// The 8-bit codes of `pixels`: exposure, tone curve and sRGB encoding of
/// the colour into `rgb` (3 a pixel), the coverage into `alpha`.
pub fn srgb8_codes(
    pixels: &[Vec4],
    rgb: &mut [u8],
    alpha: &mut [u8],
    exposure_scale: f32,
    op: Tonemap,
) {
    for ((rgb, a), &p) in rgb.chunks_exact_mut(3).zip(alpha).zip(pixels) {
        let c = tonemap::apply(op, unpremultiplied(p) * exposure_scale);
        rgb[0] = tonemap::srgb8(c.x);
        rgb[1] = tonemap::srgb8(c.y);
        rgb[2] = tonemap::srgb8(c.z);
        *a = tonemap::to_u8(p.w);
    }
}

/// Copies `pixels` (row-major within `r`) into rectangle `r` of `rows`,
/// rows of an image `width` pixels wide (row 0 of `r` is `rows`' first).
pub fn put_rect(rows: &mut [Vec4], width: u32, r: Rect, pixels: &[Vec4]) {
    let w = r.width() as usize;
    for (src, y) in pixels.chunks_exact(w.max(1)).zip(r.y0..r.y1) {
        let start = y as usize * width as usize + r.x0 as usize;
        rows[start..start + w].copy_from_slice(src);
    }
}

/// The colour of a pixel whose rgb is premultiplied by its coverage, so
/// that partly covered edge pixels keep their colour (black when uncovered).
/// The three divisions share one SSE division (lane by lane the same).
#[inline]
fn unpremultiplied(p: Vec4) -> Vec3 {
    if p.w > 0.0 {
        Vec3::from(Vec3A::from_vec4(p) / p.w)
    } else {
        Vec3::ZERO
    }
}

/// The 16-bit counterpart of [`rgb_or_rgba8`].
pub fn rgb_or_rgba16(width: u32, height: u32, encoded: &[[u16; 4]]) -> DynamicImage {
    if encoded.iter().all(|p| p[3] == u16::MAX) {
        let data = encoded.iter().flat_map(|p| [p[0], p[1], p[2]]).collect();
        DynamicImage::ImageRgb16(image::ImageBuffer::from_raw(width, height, data).expect("sized"))
    } else {
        let data = encoded.iter().flat_map(|p| *p).collect();
        DynamicImage::ImageRgba16(image::ImageBuffer::from_raw(width, height, data).expect("sized"))
    }
}

/// RGB when every alpha is 255, RGBA otherwise: the rule every 8-bit
/// output follows (full renders and merged regions alike).
pub fn rgb_or_rgba8(width: u32, height: u32, encoded: &[[u8; 4]]) -> DynamicImage {
    let rgb = encoded.iter().flat_map(|p| &p[..3]).copied().collect();
    let alpha: Vec<u8> = encoded.iter().map(|p| p[3]).collect();
    rgb_or_rgba8_from_parts(width, height, rgb, &alpha)
}

/// [`rgb_or_rgba8`] from the colour codes (3 a pixel) and the alpha codes
/// apart, as the tone-mapping pass writes them; the pixels are interleaved
/// (rows in parallel) only when the image needs its alpha.
pub fn rgb_or_rgba8_from_parts(
    width: u32,
    height: u32,
    rgb: Vec<u8>,
    alpha: &[u8],
) -> DynamicImage {
    if alpha.par_iter().all(|&a| a == 255) {
        return DynamicImage::ImageRgb8(RgbImage::from_raw(width, height, rgb).expect("sized"));
    }
    let row = width.max(1) as usize;
    let mut rgba = vec![0u8; 4 * alpha.len()];
    rgba.par_chunks_mut(4 * row)
        .zip(rgb.par_chunks(3 * row).zip(alpha.par_chunks(row)))
        .for_each(|(out, (rgb, alpha))| {
            for ((out, rgb), &a) in out.chunks_exact_mut(4).zip(rgb.chunks_exact(3)).zip(alpha) {
                (out[0], out[1], out[2], out[3]) = (rgb[0], rgb[1], rgb[2], a);
            }
        });
    DynamicImage::ImageRgba8(RgbaImage::from_raw(width, height, rgba).expect("sized"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 × 2: the colour (0.5, 0.25, 1), fully and half covered, premultiplied.
    fn frame(second_coverage: f32) -> Framebuffer {
        let colour = Vec4::new(0.5, 0.25, 1.0, 1.0);
        let mut fb = Framebuffer::new(2, 2);
        fb.pixels = vec![colour, colour * second_coverage, colour, colour];
        fb
    }

    #[test]
    fn opaque_frames_become_rgb_with_srgb_codes() {
        let img = frame(1.0).to_srgb8(1.0, Tonemap::None);
        let DynamicImage::ImageRgb8(rgb) = img else {
            panic!("an opaque frame is RGB, got {:?}", img.color());
        };
        assert_eq!(rgb.as_raw(), &[188, 137, 255].repeat(4));
    }

    #[test]
    fn partly_covered_frames_become_rgba_with_unpremultiplied_colour() {
        let img = frame(0.5).to_srgb8(1.0, Tonemap::None);
        let DynamicImage::ImageRgba8(rgba) = img else {
            panic!("a partly covered frame is RGBA, got {:?}", img.color());
        };
        let (full, half) = ([188, 137, 255, 255], [188, 137, 255, 128]);
        assert_eq!(rgba.as_raw(), &[full, half, full, full].concat());
        // Uncovered: transparent black.
        let mut fb = frame(1.0);
        fb.pixels[3] = Vec4::ZERO;
        let DynamicImage::ImageRgba8(rgba) = fb.to_srgb8(1.0, Tonemap::None) else {
            panic!("a frame with an uncovered pixel is RGBA");
        };
        assert_eq!(&rgba.as_raw()[12..], &[0, 0, 0, 0]);
    }
}
