//! Heightmap import: an 8- or 16-bit grayscale PNG (also the 16-bit PNGs
//! that World Machine, Gaea or GIS tools export) mapped to [0, 1] and
//! resampled bilinearly to the requested grid.
//!
//! ```json
//! "generator": { "type": "heightmap", "path": "maps/valley.png" }
//! ```
//!
//! The image's top row is the far, north (+z) edge of the terrain, as in
//! POV-Ray and north-up GIS images: image row r is grid row H − 1 − r.

use std::path::Path;

use rayon::prelude::*;
use serde::Deserialize;

use super::Heightmap;

/// Parameters of the heightmap importer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeightmapFile {
    /// Grayscale PNG, relative to the scene file's folder. Required.
    pub path: String,
}

/// A decoded grayscale heightmap, row 0 = south (grid order): sample k's
/// value in [0, 1] is `samples[k] / full_scale` (255 or 65535 for PNGs).
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// Samples per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Row-major raw samples.
    pub samples: Vec<u16>,
    /// The raw value of 1.0.
    pub full_scale: f64,
}

impl Imported {
    /// Sample (row `i`, column `j`) in [0, 1].
    #[inline]
    pub fn value(&self, i: usize, j: usize) -> f64 {
        self.samples[i * self.width + j] as f64 / self.full_scale
    }
}

/// Reads a grayscale PNG; colour images are refused (a heightmap has one channel).
pub fn load(path: &Path) -> Result<Imported, String> {
    let bytes = crate::texture::read_image_file(path)?;
    decode(&bytes, path)
}

/// The most memory a heightmap's decoded pixels may take: room for the
/// largest terrain (16385² samples) in 16-bit gray with alpha, and a
/// clear error instead of an allocation failure for a header that
/// declares absurd dimensions.
const MAX_DECODED_BYTES: usize = 2 << 30;

/// Decodes heightmap bytes (named `path` in messages).
///
/// The png crate decodes into one buffer of big-endian rows, which are
/// flipped and converted to samples in parallel: going through
/// `image::load_from_memory` added a serial byte-swap pass and a serial
/// flip, 25-40 ms of a 4097² map's load.
pub fn decode(bytes: &[u8], path: &Path) -> Result<Imported, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read {}: {e}", path.display());
    let mut decoder = png::Decoder::new_with_limits(
        std::io::Cursor::new(bytes),
        png::Limits {
            bytes: MAX_DECODED_BYTES,
        },
    );
    // Palettes and low bit depths to 8 bits, a transparent colour to alpha.
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| cannot(&e))?;
    let (color, depth) = reader.output_color_type();
    let info = reader.info();
    let (w, h) = (info.width as usize, info.height as usize);
    let channels = match color {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        other => {
            return Err(format!(
                "{} is not a grayscale image ({other:?}, {} bits); export the heightmap as 8- or 16-bit grayscale",
                path.display(),
                depth as u8
            ))
        }
    };
    if w < 2 || h < 2 {
        return Err(format!(
            "{} is {w}×{h}; a heightmap needs at least 2×2 samples",
            path.display()
        ));
    }
    let size = reader
        .output_buffer_size()
        .filter(|&size| size <= MAX_DECODED_BYTES)
        .ok_or_else(|| {
            format!(
                "{} is {w}×{h} pixels of {} bits, over the {MAX_DECODED_BYTES} byte limit for a decoded heightmap",
                path.display(),
                channels * depth as usize
            )
        })?;
    let mut raw = vec![0u8; size];
    let frame = reader.next_frame(&mut raw).map_err(|e| cannot(&e))?;
    let wide = depth == png::BitDepth::Sixteen;
    let stride = frame.line_size;
    // Rows are flipped on the way: the image's top row is the north edge,
    // our row 0 the south. Only the gray channel is kept.
    let mut samples = vec![0u16; w * h];
    samples.par_chunks_mut(w).enumerate().for_each(|(i, row)| {
        let src = &raw[(h - 1 - i) * stride..][..stride];
        if wide {
            for (out, px) in row.iter_mut().zip(src.chunks_exact(2 * channels)) {
                *out = u16::from_be_bytes([px[0], px[1]]);
            }
        } else {
            for (out, px) in row.iter_mut().zip(src.chunks_exact(channels)) {
                *out = px[0] as u16;
            }
        }
    });
    Ok(Imported {
        width: w,
        height: h,
        samples,
        full_scale: if wide { 65535.0 } else { 255.0 },
    })
}

/// The map resampled to `w` × `h` heights, `top` at full scale, rounded
/// to f32: the values of [`resample`] then [`Heightmap::from_f64`], without
/// the f64 copy of the grid.
pub fn heights(src: &Imported, w: usize, h: usize, top: f64) -> Heightmap {
    Heightmap {
        width: w,
        height: h,
        data: resample_with(src, w, h, |v| (v * top) as f32),
    }
}

/// Bilinear resampling to `w` × `h` samples, each times `scale`; corners
/// map to corners.
pub fn resample(src: &Imported, w: usize, h: usize, scale: f64) -> Vec<f64> {
    resample_with(src, w, h, |v| v * scale)
}

/// Bilinear resampling to `w` × `h` samples, each passed through `f`;
/// corners map to corners. Rows in parallel (a 4097² map is 16 M samples).
pub fn resample_with<T: Send + Copy + Default>(
    src: &Imported,
    w: usize,
    h: usize,
    f: impl Fn(f64) -> T + Sync,
) -> Vec<T> {
    let mut out = vec![T::default(); w * h];
    if (w, h) == (src.width, src.height) {
        out.par_iter_mut()
            .zip(&src.samples)
            .for_each(|(out, &v)| *out = f(v as f64 / src.full_scale));
        return out;
    }
    out.par_chunks_mut(w).enumerate().for_each(|(i, row)| {
        let fy = i as f64 * (src.height - 1) as f64 / (h - 1) as f64;
        let y0 = (fy.floor() as usize).min(src.height - 2);
        let ty = fy - y0 as f64;
        for (j, out) in row.iter_mut().enumerate() {
            let fx = j as f64 * (src.width - 1) as f64 / (w - 1) as f64;
            let x0 = (fx.floor() as usize).min(src.width - 2);
            let tx = fx - x0 as f64;
            let at = |y: usize, x: usize| src.value(y, x);
            let top = at(y0, x0) + (at(y0, x0 + 1) - at(y0, x0)) * tx;
            let bottom = at(y0 + 1, x0) + (at(y0 + 1, x0 + 1) - at(y0 + 1, x0)) * tx;
            *out = f(top + (bottom - top) * ty);
        }
    });
    out
}

/// The heights as a 16-bit grayscale PNG image using the full range:
/// min → 0, max → 65535 (a flat map is all 0); top row = north edge.
/// Returns the image and the (min, max) it spans.
pub fn to_png16(map: &Heightmap) -> (image::DynamicImage, (f32, f32)) {
    let (lo, hi) = map.range();
    let span = hi - lo;
    let (w, h) = (map.width as u32, map.height as u32);
    let img = image::ImageBuffer::from_fn(w, h, |x, y| {
        let v = map.at(map.height - 1 - y as usize, x as usize);
        let t = if span > 0.0 {
            ((v - lo) / span) as f64
        } else {
            0.0
        };
        image::Luma([(t.clamp(0.0, 1.0) * 65535.0).round() as u16])
    });
    (image::DynamicImage::ImageLuma16(img), (lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resample_keeps_corners_and_interpolates_linearly() {
        // 2 × 2: south row 0, 1; north row 2, 3.
        let src = Imported {
            width: 2,
            height: 2,
            samples: vec![0, 1, 2, 3],
            full_scale: 1.0,
        };
        let out = resample(&src, 3, 3, 1.0);
        assert_eq!(out, vec![0.0, 0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.5, 3.0]);
    }

    #[test]
    fn top_row_is_north() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        // Image: top row white, bottom row black.
        let img =
            image::GrayImage::from_fn(3, 2, |_, y| image::Luma([if y == 0 { 255 } else { 0 }]));
        img.save(&path).unwrap();
        let m = load(&path).unwrap();
        assert_eq!(
            (&m.samples[..3], m.value(0, 0)),
            (&[0; 3][..], 0.0),
            "row 0 (south) is the image's bottom row"
        );
        assert_eq!((&m.samples[3..], m.value(1, 2)), (&[255; 3][..], 1.0));
    }

    #[test]
    fn sixteen_bit_maps_with_alpha_keep_the_gray_channel() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        // 3 × 2: the top (north) row 1000, 2000, 3000; the bottom row 0,
        // 65535, 7; alpha all over the place.
        let img = image::ImageBuffer::from_fn(3, 2, |x, y| {
            let v = if y == 0 {
                1000 * (x as u16 + 1)
            } else {
                [0, 65535, 7][x as usize]
            };
            image::LumaA([v, 12345 * x as u16])
        });
        image::DynamicImage::ImageLumaA16(img).save(&path).unwrap();
        let m = load(&path).unwrap();
        assert_eq!((m.width, m.height, m.full_scale), (3, 2, 65535.0));
        assert_eq!(m.samples, vec![0, 65535, 7, 1000, 2000, 3000]);
        assert_eq!(m.value(1, 2), 3000.0 / 65535.0);
    }

    #[test]
    fn resampling_at_the_native_size_only_scales() {
        let src = Imported {
            width: 3,
            height: 2,
            samples: vec![0, 1, 2, 3, 4, 255],
            full_scale: 255.0,
        };
        let out = resample(&src, 3, 2, 10.0);
        let expect: Vec<f64> = src
            .samples
            .iter()
            .map(|&v| v as f64 / 255.0 * 10.0)
            .collect();
        assert_eq!(out, expect);
        assert_eq!(
            resample_with(&src, 3, 2, |v| v as f32),
            vec![0.0, 1.0 / 255.0, 2.0 / 255.0, 3.0 / 255.0, 4.0 / 255.0, 1.0]
        );
    }

    /// Loads a `w` × `h` grayscale PNG of `depth` bits made from packed rows.
    fn load_gray((w, h): (u32, u32), depth: png::BitDepth, packed: &[u8]) -> Imported {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        let file = std::fs::File::create(&path).unwrap();
        let mut enc = png::Encoder::new(file, w, h);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(depth);
        let mut writer = enc.write_header().unwrap();
        writer.write_image_data(packed).unwrap();
        writer.finish().unwrap();
        load(&path).unwrap()
    }

    #[test]
    fn low_bit_depths_expand_to_eight_bits() {
        // 4 × 2 at 2 bits: top row 0 1 2 3, bottom row 3 2 1 0.
        let m = load_gray((4, 2), png::BitDepth::Two, &[0b00_01_10_11, 0b11_10_01_00]);
        assert_eq!((m.width, m.height, m.full_scale), (4, 2, 255.0));
        assert_eq!(m.samples, vec![255, 170, 85, 0, 0, 85, 170, 255]);
    }

    #[test]
    fn sixteen_bit_samples_are_read_big_endian() {
        // 2 × 2: top row 0x0102 0xfffe, bottom row 0x8000 0x0001.
        let packed = [1, 2, 0xff, 0xfe, 0x80, 0, 0, 1];
        let m = load_gray((2, 2), png::BitDepth::Sixteen, &packed);
        assert_eq!(m.samples, vec![0x8000, 1, 0x0102, 0xfffe]);
    }

    #[test]
    fn absurd_dimensions_are_refused_before_anything_is_allocated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        // A header for 60000 × 60000 16-bit samples (7.2 GB), and a few
        // bytes of pixel data.
        let file = std::fs::File::create(&path).unwrap();
        let mut enc = png::Encoder::new(file, 60000, 60000);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        let mut writer = enc.write_header().unwrap();
        writer
            .write_chunk(png::chunk::IDAT, &[0x78, 0x9c, 0, 0])
            .unwrap();
        drop(writer);
        let e = load(&path).unwrap_err();
        assert!(e.contains("60000×60000 pixels of 16 bits, over the"), "{e}");
    }

    #[test]
    fn files_that_are_not_pngs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        std::fs::write(&path, b"P5 2 2 255 abcd").unwrap();
        let e = load(&path).unwrap_err();
        assert!(
            e.starts_with(&format!("cannot read {}", path.display())),
            "{e}"
        );
    }

    #[test]
    fn colour_images_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        image::RgbImage::new(4, 4).save(&path).unwrap();
        assert!(load(&path).unwrap_err().contains("not a grayscale image"));
    }
}
