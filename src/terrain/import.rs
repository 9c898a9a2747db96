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
//!
//! Decoding is the `png` crate's (the same decoder `image` uses for
//! textures; faster than `zune-png` on the peer workload's maps, see
//! docs/performance.md); the rows are then flipped and their gray channel
//! kept, in parallel.

use std::io::BufReader;
use std::path::Path;

use rayon::prelude::*;
use serde::Deserialize;

use super::Heightmap;

/// Parameters of the heightmap importer.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeightmapFile {
    /// Grayscale PNG or GeoTIFF DEM (`.tif`, `.tiff`), relative to the
    /// scene file's folder. Required.
    pub path: String,
}

/// A decoded grayscale heightmap, row 0 = south (grid order): sample
/// (i, j)'s value in [0, 1] is [`Imported::sample`] / `full_scale` (255
/// or 65535 for PNGs).
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// Samples per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// The raw samples, row-major, row 0 south (empty for a DEM).
    samples: Vec<u16>,
    /// A DEM's heights in metres, row-major, row 0 south (else empty).
    metres: Vec<f32>,
    /// The raw value of 1.0 (a DEM's highest height).
    pub full_scale: f64,
    /// What a GeoTIFF DEM said of itself, for one.
    pub dem: Option<Dem>,
}

/// A GeoTIFF elevation model's particulars ([`super::geotiff`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Dem {
    /// Sample type and compression, e.g. "int16, LZW".
    pub format: String,
    /// Nodata cells filled from their neighbours.
    pub filled: usize,
    /// Extent [x, z] in metres from the georeference, if it gives one.
    pub size: Option<[f64; 2]>,
    /// The highest height, metres.
    pub top: f64,
}

impl Imported {
    /// A map of `width` × `height` raw `samples` (row-major, row 0 south),
    /// `full_scale` being the raw value of 1.0.
    pub fn new(width: usize, height: usize, samples: Vec<u16>, full_scale: f64) -> Imported {
        assert_eq!(samples.len(), width * height, "one sample per grid point");
        Imported {
            width,
            height,
            samples,
            metres: Vec::new(),
            full_scale,
            dem: None,
        }
    }

    /// A DEM of `width` × `height` heights in metres (row-major, row 0
    /// south): values in metres over its highest height (1 at the top,
    /// as a PNG's white), so that a terrain height equal to that top
    /// gives the metres themselves.
    pub fn dem(width: usize, height: usize, metres: Vec<f32>, dem: Dem) -> Imported {
        assert_eq!(metres.len(), width * height, "one height per grid point");
        let full_scale = if dem.top.abs() > 0.0 {
            dem.top.abs()
        } else {
            1.0
        };
        Imported {
            width,
            height,
            samples: Vec::new(),
            metres,
            full_scale,
            dem: Some(dem),
        }
    }

    /// The raw sample at row `i`, column `j` (row 0 south).
    #[inline]
    pub fn sample(&self, i: usize, j: usize) -> u16 {
        self.samples[i * self.width + j]
    }

    /// The raw samples, row-major, row 0 south.
    pub fn samples(&self) -> Vec<u16> {
        self.samples.clone()
    }

    /// Sample (row `i`, column `j`) in [0, 1].
    #[inline]
    pub fn value(&self, i: usize, j: usize) -> f64 {
        self.raw(i * self.width + j) / self.full_scale
    }

    /// Raw sample `k` (row-major): the PNG's value or the DEM's metres.
    #[inline]
    fn raw(&self, k: usize) -> f64 {
        if self.dem.is_some() {
            self.metres[k] as f64
        } else {
            self.samples[k] as f64
        }
    }
}

/// The most memory a heightmap's decoded pixels may take: room for the
/// largest terrain (16385² samples) in 16-bit gray with alpha, and a
/// clear error instead of an allocation failure for a header that
/// declares absurd dimensions.
pub(super) const MAX_DECODED_BYTES: usize = 2 << 30;

/// Reads a grayscale PNG; colour images are refused (a heightmap has one channel).
pub fn load(path: &Path) -> Result<Imported, String> {
    let file = crate::texture::open_image_file(path)?;
    decode_from(BufReader::new(file), path)
}

/// Decodes heightmap bytes (named `path` in messages).
pub fn decode(bytes: &[u8], path: &Path) -> Result<Imported, String> {
    decode_from(std::io::Cursor::new(bytes), path)
}

/// Decodes a PNG from `input` (named `path` in messages): palettes and
/// bit depths under 8 expanded to 8 bits, 16-bit samples kept, the gray
/// channel taken and the rows flipped into grid order.
fn decode_from<R: std::io::BufRead + std::io::Seek>(
    input: R,
    path: &Path,
) -> Result<Imported, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot read {}: {e}", path.display());
    let mut decoder = png::Decoder::new_with_limits(
        input,
        png::Limits {
            bytes: MAX_DECODED_BYTES,
        },
    );
    decoder.set_transformations(png::Transformations::EXPAND);
    let mut reader = decoder.read_info().map_err(|e| cannot(&e))?;
    let (color, depth) = reader.output_color_type();
    let (w, h) = {
        let info = reader.info();
        (info.width as usize, info.height as usize)
    };
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
    let bpp = channels * if wide { 2 } else { 1 };
    let pitch = frame.line_size;
    let mut samples = vec![0u16; w * h];
    // Grid row i is image row h − 1 − i; the gray sample is a pixel's
    // first one (8 bits) or two (16 bits, big-endian) bytes.
    samples.par_chunks_mut(w).enumerate().for_each(|(i, row)| {
        let pixels = raw[(h - 1 - i) * pitch..][..w * bpp].chunks_exact(bpp);
        for (out, px) in row.iter_mut().zip(pixels) {
            *out = if wide {
                u16::from_be_bytes([px[0], px[1]])
            } else {
                px[0] as u16
            };
        }
    });
    let full_scale = if wide { 65535.0 } else { 255.0 };
    Ok(Imported::new(w, h, samples, full_scale))
}

/// The map resampled to `w` × `h` heights, `top` at full scale, rounded
/// to f32: the values of [`resample`] then [`Heightmap::from_f64`], without
/// the f64 copy of the grid.
pub fn heights(src: &Imported, w: usize, h: usize, top: f64) -> Heightmap {
    Heightmap::new(w, h, resample_with(src, w, h, |v| (v * top) as f32))
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
            .enumerate()
            .for_each(|(k, out)| *out = f(src.raw(k) / src.full_scale));
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
        let src = Imported::new(2, 2, vec![0, 1, 2, 3], 1.0);
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
            (&m.samples()[..3], m.value(0, 0)),
            (&[0; 3][..], 0.0),
            "row 0 (south) is the image's bottom row"
        );
        assert_eq!((&m.samples()[3..], m.value(1, 2)), (&[255; 3][..], 1.0));
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
        assert_eq!(m.samples(), vec![0, 65535, 7, 1000, 2000, 3000]);
        assert_eq!(m.value(1, 2), 3000.0 / 65535.0);
    }

    #[test]
    fn resampling_at_the_native_size_only_scales() {
        let src = Imported::new(3, 2, vec![0, 1, 2, 3, 4, 255], 255.0);
        let out = resample(&src, 3, 2, 10.0);
        let expect: Vec<f64> = src
            .samples()
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
        assert_eq!(m.samples(), vec![255, 170, 85, 0, 0, 85, 170, 255]);
    }

    #[test]
    fn sixteen_bit_samples_are_read_big_endian() {
        // 2 × 2: top row 0x0102 0xfffe, bottom row 0x8000 0x0001.
        let packed = [1, 2, 0xff, 0xfe, 0x80, 0, 0, 1];
        let m = load_gray((2, 2), png::BitDepth::Sixteen, &packed);
        assert_eq!(m.samples(), vec![0x8000, 1, 0x0102, 0xfffe]);
    }

    /// Every way of reading a decoded map's samples gives the same ones:
    /// one at a time, all at once, resampled at the map's own size, and
    /// from a copy; for 16-bit gray with alpha, 8-bit and 2-bit maps.
    #[test]
    fn a_maps_samples_read_alike_every_way() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        let img = image::ImageBuffer::from_fn(5, 3, |x, y| {
            image::LumaA([(7919 * (x + 5 * y) % 65536) as u16, 999 * x as u16])
        });
        image::DynamicImage::ImageLumaA16(img).save(&path).unwrap();
        let maps = [
            load(&path).unwrap(),
            load_gray((3, 2), png::BitDepth::Eight, &[9, 8, 7, 6, 5, 4]),
            load_gray((4, 2), png::BitDepth::Two, &[0b00_01_10_11, 0b11_10_01_00]),
        ];
        for m in &maps {
            let all = m.samples();
            let (w, h) = (m.width, m.height);
            assert!(all.iter().collect::<std::collections::HashSet<_>>().len() >= 4);
            for i in 0..h {
                for j in 0..w {
                    assert_eq!(m.sample(i, j), all[i * w + j]);
                    assert_eq!(m.value(i, j), all[i * w + j] as f64 / m.full_scale);
                }
            }
            let values: Vec<f64> = all.iter().map(|&v| v as f64 / m.full_scale).collect();
            assert_eq!(resample(m, w, h, 1.0), values);
            assert_eq!(&m.clone(), m);
            assert_eq!(Imported::new(w, h, all, m.full_scale), *m);
        }
        assert_eq!(maps[1].samples(), vec![6, 5, 4, 9, 8, 7]);
    }

    /// A `w` × `h` 16-bit map whose every sample differs: image row r
    /// (top first), column c holds 1000 r + c.
    fn numbered_rows(w: u32, h: u32) -> Vec<u8> {
        (0..h)
            .flat_map(|r| (0..w).flat_map(move |c| ((1000 * r + c) as u16).to_be_bytes()))
            .collect()
    }

    #[test]
    fn maps_of_many_batches_flip_every_row() {
        // 200 rows: three full batches of rows and a short one.
        let (w, h) = (5, 200);
        let m = load_gray((w, h), png::BitDepth::Sixteen, &numbered_rows(w, h));
        assert_eq!((m.width, m.height), (5, 200));
        for i in 0..h as usize {
            for j in 0..w as usize {
                let r = h as usize - 1 - i;
                assert_eq!(
                    m.samples()[i * 5 + j],
                    (1000 * r + j) as u16,
                    "row {i}, column {j}"
                );
            }
        }
    }

    #[test]
    fn truncated_maps_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        let (w, h) = (300, 300);
        let mut enc = png::Encoder::new(std::fs::File::create(&path).unwrap(), w, h);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        // Stored, so that half the file is half the rows.
        enc.set_compression(png::Compression::NoCompression);
        let mut writer = enc.write_header().unwrap();
        writer.write_image_data(&numbered_rows(w, h)).unwrap();
        writer.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let e = load(&path).unwrap_err();
        assert!(
            e.starts_with(&format!("cannot read {}", path.display())),
            "{e}"
        );
    }

    #[test]
    fn interlaced_maps_read_as_plain_ones() {
        // 8-bit 5 × 9, image row r column c holding 10 r + c, written
        // Adam7-interlaced by hand: the seven passes' rows (filter byte 0)
        // in one stored zlib block.
        let (w, h) = (5usize, 9usize);
        let value = |r: usize, c: usize| (10 * r + c) as u8;
        let passes = [
            (0, 0, 8, 8),
            (4, 0, 8, 8),
            (0, 4, 4, 8),
            (2, 0, 4, 4),
            (0, 2, 2, 4),
            (1, 0, 2, 2),
            (0, 1, 1, 2),
        ];
        let mut raw = Vec::new();
        for (x0, y0, dx, dy) in passes {
            if x0 >= w || y0 >= h {
                continue; // an empty pass has no rows at all
            }
            for r in (y0..h).step_by(dy) {
                raw.push(0);
                raw.extend((x0..w).step_by(dx).map(|c| value(r, c)));
            }
        }
        let adler = {
            let (mut a, mut b) = (1u32, 0u32);
            for &v in &raw {
                a = (a + v as u32) % 65521;
                b = (b + a) % 65521;
            }
            (b << 16) | a
        };
        let len = raw.len() as u16;
        let mut zlib = vec![0x78, 0x01, 0x01];
        zlib.extend(len.to_le_bytes());
        zlib.extend((!len).to_le_bytes());
        zlib.extend(&raw);
        zlib.extend(adler.to_be_bytes());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        let mut info = png::Info::with_size(w as u32, h as u32);
        info.color_type = png::ColorType::Grayscale;
        info.bit_depth = png::BitDepth::Eight;
        info.interlaced = true;
        let file = std::fs::File::create(&path).unwrap();
        let mut writer = png::Encoder::with_info(file, info)
            .unwrap()
            .write_header()
            .unwrap();
        writer.write_chunk(png::chunk::IDAT, &zlib).unwrap();
        writer.finish().unwrap();

        let m = load(&path).unwrap();
        let plain: Vec<u8> = (0..h)
            .flat_map(|r| (0..w).map(move |c| value(r, c)))
            .collect();
        assert_eq!(
            m,
            load_gray((w as u32, h as u32), png::BitDepth::Eight, &plain)
        );
        assert_eq!(
            m.samples()[0..5],
            [80, 81, 82, 83, 84],
            "grid row 0 is image row 8"
        );
    }

    /// Writes at `path` a 16-bit gray PNG's header for `w` × `h` samples,
    /// and four bytes of pixel data.
    fn header_with_scant_data(path: &Path, (w, h): (u32, u32)) {
        let file = std::fs::File::create(path).unwrap();
        let mut enc = png::Encoder::new(file, w, h);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        let mut writer = enc.write_header().unwrap();
        writer
            .write_chunk(png::chunk::IDAT, &[0x78, 0x9c, 0, 0])
            .unwrap();
    }

    #[test]
    fn maps_whose_data_cannot_fill_their_size_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        // 8000 × 8000 samples (128 MB): the four bytes of data would
        // inflate to 4 KB at most.
        header_with_scant_data(&path, (8000, 8000));
        let e = load(&path).unwrap_err();
        assert!(
            e.starts_with(&format!("cannot read {}: ", path.display())),
            "{e}"
        );
    }

    #[test]
    fn absurd_dimensions_are_refused_before_anything_is_allocated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        // 60000 × 60000 samples: 7.2 GB.
        header_with_scant_data(&path, (60000, 60000));
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

    /// Damaged files fail with a message naming the file, never a panic:
    /// a valid map (adaptive filters, so every filter type occurs) with
    /// one to four bytes changed and sometimes its end cut, three thousand
    /// ways; the bytes changed are anywhere in the file, so as often in the
    /// chunks' lengths and the zlib stream as in the header.
    #[test]
    fn damaged_maps_fail_with_a_message() {
        use crate::hash::hash3;
        let path = Path::new("damaged.png");
        let mut valid = Vec::new();
        let mut enc = png::Encoder::new(&mut valid, 23, 17);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(png::BitDepth::Sixteen);
        enc.set_filter(png::Filter::Adaptive);
        let mut writer = enc.write_header().unwrap();
        writer.write_image_data(&numbered_rows(23, 17)).unwrap();
        writer.finish().unwrap();
        assert!(decode(&valid, path).is_ok());
        let mut refused = 0;
        for case in 0..3000u64 {
            let mut bytes = valid.clone();
            let changes = 1 + hash3(case, 1, 0) % 4;
            for c in 0..changes {
                let at = (hash3(case, 2, c) % bytes.len() as u64) as usize;
                bytes[at] = hash3(case, 3, c) as u8;
            }
            if hash3(case, 4, 0).is_multiple_of(4) {
                bytes.truncate((hash3(case, 5, 0) % bytes.len() as u64) as usize);
            }
            match decode(&bytes, path) {
                Ok(m) => assert_eq!((m.width, m.height, m.samples().len()), (23, 17, 23 * 17)),
                Err(e) => {
                    assert!(e.contains("damaged.png"), "case {case}: {e}");
                    refused += 1;
                }
            }
        }
        assert!(refused > 1000, "only {refused} of 3000 refused");
    }

    #[test]
    fn colour_images_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        image::RgbImage::new(4, 4).save(&path).unwrap();
        assert!(load(&path).unwrap_err().contains("not a grayscale image"));
    }
}
