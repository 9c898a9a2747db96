//! The linear-light image a render produces, and its conversion to 8-bit.

use glam::{Vec3, Vec4};
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
        let code = |p: Vec4| {
            let c = tonemap::apply(op, unpremultiplied(p) * exposure_scale);
            [
                tonemap::srgb8(c.x),
                tonemap::srgb8(c.y),
                tonemap::srgb8(c.z),
                tonemap::to_u8(p.w),
            ]
        };
        // Straight into the image's bytes, rows in parallel. Gathering RGBA
        // codes first and dropping alpha after, serially, was part of the
        // 55-63 ms this pass took a 1080p frame (26-38 ms now).
        let opaque = self.pixels.par_iter().all(|p| tonemap::to_u8(p.w) == 255);
        let channels = if opaque { 3 } else { 4 };
        let row = self.width.max(1) as usize;
        let mut data = vec![0u8; channels * self.pixels.len()];
        data.par_chunks_mut(channels * row)
            .zip(self.pixels.par_chunks(row))
            .for_each(|(out, pixels)| {
                for (out, &p) in out.chunks_exact_mut(channels).zip(pixels) {
                    out.copy_from_slice(&code(p)[..channels]);
                }
            });
        let (w, h) = (self.width, self.height);
        if opaque {
            DynamicImage::ImageRgb8(RgbImage::from_raw(w, h, data).expect("sized"))
        } else {
            DynamicImage::ImageRgba8(RgbaImage::from_raw(w, h, data).expect("sized"))
        }
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
fn unpremultiplied(p: Vec4) -> Vec3 {
    if p.w > 0.0 {
        p.truncate() / p.w
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
    if encoded.iter().all(|p| p[3] == 255) {
        let mut data = Vec::with_capacity(3 * encoded.len());
        for p in encoded {
            data.extend_from_slice(&p[..3]);
        }
        DynamicImage::ImageRgb8(RgbImage::from_raw(width, height, data).expect("sized"))
    } else {
        let data = encoded.as_flattened().to_vec();
        DynamicImage::ImageRgba8(RgbaImage::from_raw(width, height, data).expect("sized"))
    }
}
