//! The linear-light image a render produces, and its conversion to 8-bit.

use glam::{Vec3, Vec4};
use image::{DynamicImage, RgbImage, RgbaImage};

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
    /// A transparent black image.
    pub fn new(width: u32, height: u32) -> Framebuffer {
        Framebuffer {
            width,
            height,
            pixels: vec![Vec4::ZERO; width as usize * height as usize],
        }
    }

    /// Copies a tile's pixels (row-major within `r`) into place.
    pub fn put(&mut self, r: Rect, pixels: &[Vec4]) {
        for (row, y) in (r.y0..r.y1).enumerate() {
            let src = &pixels[row * r.width() as usize..(row + 1) * r.width() as usize];
            let start = y as usize * self.width as usize + r.x0 as usize;
            self.pixels[start..start + src.len()].copy_from_slice(src);
        }
    }

    /// Linear radiance times the exposure, without tone mapping: for EXR.
    /// Alpha is the coverage; colour stays premultiplied by it, as EXR expects.
    pub fn to_linear(&self, exposure_scale: f32) -> DynamicImage {
        let mut img = image::Rgba32FImage::new(self.width, self.height);
        for (dst, p) in img.pixels_mut().zip(&self.pixels) {
            let c = p.truncate() * exposure_scale;
            dst.0 = [c.x, c.y, c.z, p.w];
        }
        DynamicImage::ImageRgba32F(img)
    }

    /// Exposure, tone curve and sRGB encoding to 8 bits per channel; RGBA
    /// when some pixel is not fully covered, RGB otherwise.
    pub fn to_srgb8(&self, exposure_scale: f32, op: Tonemap) -> DynamicImage {
        let encode = |p: Vec4| -> [u8; 4] {
            let a = p.w;
            // Un-premultiply so partly covered edge pixels keep their colour.
            let rgb = if a > 0.0 {
                p.truncate() / a
            } else {
                Vec3::ZERO
            };
            let c = tonemap::apply(op, rgb * exposure_scale);
            [
                tonemap::to_u8(tonemap::srgb_encode(c.x)),
                tonemap::to_u8(tonemap::srgb_encode(c.y)),
                tonemap::to_u8(tonemap::srgb_encode(c.z)),
                tonemap::to_u8(a),
            ]
        };
        let opaque = self.pixels.iter().all(|p| p.w >= 1.0);
        if opaque {
            let mut img = RgbImage::new(self.width, self.height);
            for (dst, p) in img.pixels_mut().zip(&self.pixels) {
                let [r, g, b, _] = encode(*p);
                dst.0 = [r, g, b];
            }
            DynamicImage::ImageRgb8(img)
        } else {
            let mut img = RgbaImage::new(self.width, self.height);
            for (dst, p) in img.pixels_mut().zip(&self.pixels) {
                dst.0 = encode(*p);
            }
            DynamicImage::ImageRgba8(img)
        }
    }
}
