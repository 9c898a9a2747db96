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
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;
use serde::Deserialize;

use super::heightmap::{block_dims, block_ranges_row};
use super::{pages, png_rows, Heightmap};
use crate::accel::heightfield::ranges_len;

/// Parameters of the heightmap importer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeightmapFile {
    /// Grayscale PNG, relative to the scene file's folder. Required.
    pub path: String,
}

/// A decoded grayscale heightmap, row 0 = south (grid order): sample
/// (i, j)'s value in [0, 1] is [`Imported::sample`] / `full_scale` (255
/// or 65535 for PNGs).
#[derive(Debug)]
pub struct Imported {
    /// Samples per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// The raw samples.
    store: Store,
    /// The raw value of 1.0.
    pub full_scale: f64,
    /// [`heights`] at the map's own size for one scale, made while the map
    /// was read ([`load_scaled`]), until the first call that asks for
    /// exactly those takes them.
    scaled: Mutex<Option<Scaled>>,
}

/// Where a map's raw samples are.
#[derive(Debug, Clone)]
enum Store {
    /// Row-major, row 0 south.
    Plain(Vec<u16>),
    /// A PNG's decoded rows as they are, image row 0 (the north edge)
    /// first: kept rather than copied out, since a copy of a 4097² map's
    /// samples costs 33.5 MB of fresh pages and a pass over them.
    Png(PngRows),
}

/// The decoded rows of a gray PNG.
#[derive(Debug, Clone)]
struct PngRows {
    /// The rows, `pitch` bytes apart, their pixels from `skip` bytes in.
    bytes: Vec<u8>,
    pitch: usize,
    skip: usize,
    /// Bytes a pixel; its first one (8 bits) or two (16 bits, big-endian)
    /// are the gray sample.
    bpp: usize,
    /// Whether samples are 16-bit.
    wide: bool,
}

impl PngRows {
    /// Where grid row `i` (of `h`)'s first pixel is: grid row i is image
    /// row h − 1 − i.
    #[inline]
    fn row_start(&self, i: usize, h: usize) -> usize {
        (h - 1 - i) * self.pitch + self.skip
    }

    /// The gray sample of the pixel at `bytes[at..]`.
    #[inline]
    fn gray(&self, at: usize) -> u16 {
        if self.wide {
            u16::from_be_bytes([self.bytes[at], self.bytes[at + 1]])
        } else {
            self.bytes[at] as u16
        }
    }

    /// Grid row `i` (of `h`)'s `w` samples, in order, into `out`, each
    /// through `f` (the sample width chosen once a row, not per pixel).
    #[inline]
    fn row_into<T>(&self, i: usize, h: usize, out: &mut [T], f: impl Fn(u16) -> T) {
        let w = out.len();
        let pixels = self.bytes[self.row_start(i, h)..][..w * self.bpp].chunks_exact(self.bpp);
        if self.wide {
            for (out, px) in out.iter_mut().zip(pixels) {
                *out = f(u16::from_be_bytes([px[0], px[1]]));
            }
        } else {
            for (out, px) in out.iter_mut().zip(pixels) {
                *out = f(px[0] as u16);
            }
        }
    }
}

/// The samples times `top`, rounded to f32: the heights, row-major, then
/// where the vector is longer than the map, the range of each block of
/// 2 × 2 cells ([`Heightmap::with_block_ranges`]).
#[derive(Debug)]
struct Scaled {
    top: f64,
    heights: Vec<f32>,
}

impl Imported {
    /// A map of `width` × `height` raw `samples` (row-major, row 0 south),
    /// `full_scale` being the raw value of 1.0.
    pub fn new(width: usize, height: usize, samples: Vec<u16>, full_scale: f64) -> Imported {
        assert_eq!(samples.len(), width * height, "one sample per grid point");
        Imported {
            width,
            height,
            store: Store::Plain(samples),
            full_scale,
            scaled: Mutex::new(None),
        }
    }

    /// The raw sample at row `i`, column `j` (row 0 south).
    #[inline]
    pub fn sample(&self, i: usize, j: usize) -> u16 {
        match &self.store {
            Store::Plain(samples) => samples[i * self.width + j],
            Store::Png(rows) => rows.gray(rows.row_start(i, self.height) + j * rows.bpp),
        }
    }

    /// Row `i`'s samples (row 0 south), each through `f`, into `out`
    /// (`width` long).
    fn row_into<T>(&self, i: usize, out: &mut [T], f: impl Fn(u16) -> T) {
        match &self.store {
            Store::Plain(samples) => {
                for (out, &v) in out.iter_mut().zip(&samples[i * self.width..][..self.width]) {
                    *out = f(v);
                }
            }
            Store::Png(rows) => rows.row_into(i, self.height, out, f),
        }
    }

    /// The raw samples, row-major, row 0 south.
    pub fn samples(&self) -> Vec<u16> {
        let mut all = vec![0; self.width * self.height];
        for (i, row) in all.chunks_mut(self.width).enumerate() {
            self.row_into(i, row, |v| v);
        }
        all
    }

    /// Sample (row `i`, column `j`) in [0, 1].
    #[inline]
    pub fn value(&self, i: usize, j: usize) -> f64 {
        self.sample(i, j) as f64 / self.full_scale
    }

    /// The heights made while reading for scale `top`, if they were and
    /// are still there; a later call makes them again.
    fn take_scaled(&self, top: f64) -> Option<Heightmap> {
        let mut slot = self.scaled.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.take() {
            Some(made) if made.top.to_bits() == top.to_bits() => {
                let (w, h) = (self.width, self.height);
                Some(if made.heights.len() > w * h {
                    Heightmap::with_block_ranges(w, h, made.heights)
                } else {
                    Heightmap::new(w, h, made.heights)
                })
            }
            other => {
                *slot = other;
                None
            }
        }
    }
}

/// Two maps are equal when their samples are: the heights made while
/// reading are the samples' values again.
impl PartialEq for Imported {
    fn eq(&self, other: &Imported) -> bool {
        (self.width, self.height, self.full_scale) == (other.width, other.height, other.full_scale)
            && {
                // Row by row: a 4097² map's samples are 33.5 MB a copy.
                let (mut mine, mut theirs) = (vec![0; self.width], vec![0; self.width]);
                (0..self.height).all(|i| {
                    self.row_into(i, &mut mine, |v| v);
                    other.row_into(i, &mut theirs, |v| v);
                    mine == theirs
                })
            }
    }
}

/// A copy of the samples; the heights made while reading stay with the
/// original.
impl Clone for Imported {
    fn clone(&self) -> Imported {
        Imported {
            width: self.width,
            height: self.height,
            store: self.store.clone(),
            full_scale: self.full_scale,
            scaled: Mutex::new(None),
        }
    }
}

/// Reads a grayscale PNG; colour images are refused (a heightmap has one channel).
pub fn load(path: &Path) -> Result<Imported, String> {
    load_scaled(path, None)
}

/// [`load`], and where `top` is given, [`heights`] at the map's own size
/// and that scale made with the samples: the first such call of
/// [`heights`] takes them. Made in the parallel pass that converts the
/// rows, they cost no pass of their own over the samples.
///
/// The file is mapped rather than read ([`pages::FileBytes`]): inflating
/// it starts at once.
pub fn load_scaled(path: &Path, top: Option<f64>) -> Result<Imported, String> {
    let file = crate::texture::open_image_file(path)?;
    let bytes = pages::FileBytes::of(file, crate::texture::MAX_IMAGE_FILE)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    decode_scaled(&bytes, path, top)
}

/// The most memory a heightmap's decoded pixels may take: room for the
/// largest terrain (16385² samples) in 16-bit gray with alpha, and a
/// clear error instead of an allocation failure for a header that
/// declares absurd dimensions.
const MAX_DECODED_BYTES: usize = 2 << 30;

/// Decodes heightmap bytes (named `path` in messages).
pub fn decode(bytes: &[u8], path: &Path) -> Result<Imported, String> {
    decode_scaled(bytes, path, None)
}

/// Decodes a heightmap's PNG `bytes` (named `path` in messages), and given
/// `top`, its heights (see [`load_scaled`]).
///
/// Inflating the image is most of the work: a 4097² map's zlib stream
/// takes 75-80 ms of one thread in libdeflate ([`png_rows`]). Meanwhile
/// the other thread faults in the pages ([`pages`]): first those of the
/// rows being inflated, ahead of the inflating, then those of the
/// samples, the heights and the terrain hierarchy's room after them (a
/// 4097² map's 144 MB, which would cost the conversion and the build as
/// much again), and then inflates the stream's last eighth
/// ([`png_rows::inflate_beside`]); then the rows are unfiltered and
/// converted in parallel:
/// flipped (the image's top row is the north edge, our row 0 the south),
/// the gray channel kept. Interlaced and 1-, 2- or 4-bit images, rare for
/// heightmaps, are decoded by the `png` crate instead.
fn decode_scaled(bytes: &[u8], path: &Path, top: Option<f64>) -> Result<Imported, String> {
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
    let inflate_whole = !info.interlaced && info.bit_depth as u8 >= 8;
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
    reader
        .output_buffer_size()
        .filter(|&size| size <= MAX_DECODED_BYTES)
        .ok_or_else(|| {
            format!(
                "{} is {w}×{h} pixels of {} bits, over the {MAX_DECODED_BYTES} byte limit for a decoded heightmap",
                path.display(),
                channels * depth as usize
            )
        })?;
    let wide = depth == png::BitDepth::Sixteen;
    let room = top.map(|_| ranges_len(w, h));
    // The pixel rows, `pitch` bytes apart from `skip` bytes in, pixels
    // of `bpp` bytes whose first one or two are the gray sample.
    let (rows, mut heights) = if inflate_whole {
        let data = png_rows::image_data(bytes).map_err(|e| cannot(&e))?;
        // The samples as stored, before any alpha for a transparent colour.
        let bpp = info.color_type.samples() * if wide { 2 } else { 1 };
        // Within MAX_DECODED_BYTES, checked above.
        let len = png_rows::rows_len(w, h, bpp).unwrap_or(usize::MAX);
        if !png_rows::might_inflate_to(data.len(), len) {
            return Err(cannot(&"the image data ends early"));
        }
        let mut raw = vec![0u8; len];
        let pages_of_raw = pages::Region::of(&mut raw);
        let (inflated, heights) = png_rows::inflate_beside(&data, &mut raw, || {
            pages::populate(pages_of_raw);
            heights_room(w * h, room, true)
        });
        inflated.map_err(|e| cannot(&e))?;
        png_rows::unfilter(&mut raw, w * bpp, bpp).map_err(|e| cannot(&e))?;
        let rows = PngRows {
            bytes: raw,
            pitch: w * bpp + 1,
            skip: 1,
            bpp,
            wide,
        };
        (rows, heights)
    } else {
        let mut raw = vec![0u8; reader.output_buffer_size().unwrap_or(0)];
        reader.next_frame(&mut raw).map_err(|e| cannot(&e))?;
        let pitch = reader
            .output_line_size(w as u32)
            .ok_or_else(|| cannot(&"rows too long"))?;
        let bpp = channels * if wide { 2 } else { 1 };
        let rows = PngRows {
            bytes: raw,
            pitch,
            skip: 0,
            bpp,
            wide,
        };
        (rows, heights_room(w * h, room, false))
    };
    let full_scale = if wide { 65535.0 } else { 255.0 };
    let scaled = if let Some(top) = top {
        // As `heights` makes them at the map's own size, each sample's
        // value looked up rather than divided out again: a 4097² map has
        // 16.8 M samples but at most 65536 values (256 for 8 bits).
        let height = |v: u16| (v as f64 / full_scale * top) as f32;
        let table: Vec<f32> = (0..=full_scale as u16).map(height).collect();
        convert(&rows, w, h, &table, &mut heights);
        Some(Scaled { top, heights })
    } else {
        None
    };
    Ok(Imported {
        width: w,
        height: h,
        store: Store::Png(rows),
        full_scale,
        scaled: Mutex::new(scaled),
    })
}

/// Given `room` (floats for the terrain hierarchy's ranges after them),
/// room for `n` heights and that many more floats, all zero; without
/// `room`, no heights. With `touch`, every page is faulted in, so that
/// filling them later faults nothing in (worth it where a thread would
/// otherwise wait).
fn heights_room(n: usize, room: Option<usize>, touch: bool) -> Vec<f32> {
    let mut heights = room.map_or(Vec::new(), |room| vec![0.0f32; n + room]);
    if touch {
        pages::fault_in(&mut heights);
    }
    heights
}

/// Block rows a task of [`convert`] makes: 16 grid rows of heights.
const BAND: usize = 8;

/// Converts the `w` × `h` map's rows to heights through `table` (its
/// heights by raw sample) into `out`, which has room for them and then
/// more, and leaves `out` holding the heights and, where that room holds
/// them, the ranges of the blocks of 2 × 2 cells
/// ([`Heightmap::with_block_ranges`]): made band by band from the rows
/// just written, while they are in the cache, they spare the terrain's
/// build a pass over all the heights (9-10 ms of a 4097² map's). `out` is
/// left longer than the heights exactly when it holds them.
fn convert(rows: &PngRows, w: usize, h: usize, table: &[f32], out: &mut Vec<f32>) {
    let n = w * h;
    let (block_rows, block_cols) = block_dims(w, h);
    let range_floats = 2 * block_rows * block_cols;
    if out.len() < n + range_floats {
        out.truncate(n);
        out.par_chunks_mut(w)
            .enumerate()
            .for_each(|(i, row)| rows.row_into(i, h, row, |v| table[v as usize]));
        return;
    }
    out.truncate(n + range_floats);
    let (heights, ranges) = out.split_at_mut(n);
    let ranges = ranges.as_chunks_mut::<2>().0;
    // A band of 2·BAND grid rows, and its BAND block rows (none for a last
    // band of one row: the top row of an odd number of rows, which the
    // band before reads itself).
    let bands = ranges
        .par_chunks_mut(BAND * block_cols)
        .map(Some)
        .chain(rayon::iter::once(None));
    heights
        .par_chunks_mut(2 * BAND * w)
        .zip(bands)
        .enumerate()
        .for_each_init(
            || [vec![0.0; w], vec![0.0; w], vec![0.0; w]],
            |[after, lo, hi], (band, (band_heights, band_ranges))| {
                let first = 2 * BAND * band;
                for (k, row) in band_heights.chunks_mut(w).enumerate() {
                    rows.row_into(first + k, h, row, |v| table[v as usize]);
                }
                let Some(band_ranges) = band_ranges else {
                    return;
                };
                let made = band_heights.len() / w;
                // The row after the band, which its last block row reaches.
                if first + made < h {
                    rows.row_into(first + made, h, after, |v| table[v as usize]);
                }
                let row = |r: usize| -> &[f32] {
                    match r.min(h - 1 - first) {
                        r if r < made => &band_heights[r * w..][..w],
                        _ => after,
                    }
                };
                for (b, out) in band_ranges.chunks_mut(block_cols).enumerate() {
                    block_ranges_row([row(2 * b), row(2 * b + 1), row(2 * b + 2)], lo, hi, out);
                }
            },
        );
}

/// The map resampled to `w` × `h` heights, `top` at full scale, rounded
/// to f32: the values of [`resample`] then [`Heightmap::from_f64`], without
/// the f64 copy of the grid.
pub fn heights(src: &Imported, w: usize, h: usize, top: f64) -> Heightmap {
    let made = ((w, h) == (src.width, src.height))
        .then(|| src.take_scaled(top))
        .flatten();
    made.unwrap_or_else(|| Heightmap::new(w, h, resample_with(src, w, h, |v| (v * top) as f32)))
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
        out.par_chunks_mut(w)
            .enumerate()
            .for_each(|(i, row)| src.row_into(i, row, |v| f(v as f64 / src.full_scale)));
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
    fn heights_made_while_reading_have_room_for_the_hierarchy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        let img = image::ImageBuffer::from_fn(300, 200, |x, y| image::Luma([(x * 200 + y) as u16]));
        image::DynamicImage::ImageLuma16(img).save(&path).unwrap();
        let m = load_scaled(&path, Some(15.0)).unwrap();
        let made = heights(&m, 300, 200, 15.0);
        assert_eq!(
            made.data(),
            resample_with(&m, 300, 200, |v| (v * 15.0) as f32)
        );
        let (data, block_ranges) = made.into_data_and_block_ranges();
        assert!(block_ranges);
        assert!(
            data.capacity() >= 300 * 200 + ranges_len(300, 200),
            "capacity {}",
            data.capacity()
        );
    }

    /// The block ranges made with the heights are each block's lowest and
    /// highest height, for maps of odd and even sides, of one band or many
    /// (a band is 16 rows), a last band of one row among them.
    #[test]
    fn block_ranges_made_while_reading_are_each_blocks_range() {
        let dir = tempfile::tempdir().unwrap();
        for (w, h) in [
            (37, 33),
            (40, 34),
            (19, 35),
            (6, 49),
            (300, 17),
            (3, 3),
            (2, 2),
        ] {
            let path = dir.path().join(format!("b{w}x{h}.png"));
            let img = image::ImageBuffer::from_fn(w, h, |x, y| {
                image::Luma([(crate::hash::unit_f32(x as u64, y as u64, 3) * 60000.0) as u16])
            });
            image::DynamicImage::ImageLuma16(img).save(&path).unwrap();
            let (w, h) = (w as usize, h as usize);
            let m = load_scaled(&path, Some(7.0)).unwrap();
            let heights = heights(&m, w, h, 7.0);
            let plain = heights.data().to_vec();
            assert_eq!(
                plain,
                resample_with(&m, w, h, |v| (v * 7.0) as f32),
                "{w}×{h}"
            );
            let (data, made) = heights.into_data_and_block_ranges();
            // A map of one cell has no hierarchy to start, nor room for it.
            assert_eq!(made, (w, h) != (2, 2), "{w}×{h}");
            if !made {
                assert_eq!(data.len(), w * h);
                continue;
            }
            let (rows, cols) = block_dims(w, h);
            assert_eq!(data.len(), w * h + 2 * rows * cols, "{w}×{h}");
            for bi in 0..rows {
                for bj in 0..cols {
                    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
                    for i in 2 * bi..=(2 * bi + 2).min(h - 1) {
                        for j in 2 * bj..=(2 * bj + 2).min(w - 1) {
                            lo = lo.min(plain[i * w + j]);
                            hi = hi.max(plain[i * w + j]);
                        }
                    }
                    let at = w * h + 2 * (bi * cols + bj);
                    assert_eq!(
                        [data[at], data[at + 1]],
                        [lo, hi],
                        "{w}×{h}, block {bi}, {bj}"
                    );
                }
            }
        }
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
        load_gray_scaled((w, h), depth, packed, None)
    }

    fn load_gray_scaled(
        (w, h): (u32, u32),
        depth: png::BitDepth,
        packed: &[u8],
        top: Option<f64>,
    ) -> Imported {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        let file = std::fs::File::create(&path).unwrap();
        let mut enc = png::Encoder::new(file, w, h);
        enc.set_color(png::ColorType::Grayscale);
        enc.set_depth(depth);
        let mut writer = enc.write_header().unwrap();
        writer.write_image_data(packed).unwrap();
        writer.finish().unwrap();
        load_scaled(&path, top).unwrap()
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
    /// one at a time, all at once, row by row at the map's own size, and
    /// from a copy; for rows inflated whole (16-bit gray with alpha,
    /// 8-bit) and rows the png crate expanded (2-bit).
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

    /// The heights made while reading are bit for bit those made after
    /// it, from the samples: taken once, then made again; for another
    /// scale or size, made from the samples.
    #[test]
    fn heights_made_while_reading_are_the_samples_scaled() {
        // 150 rows: two full batches of rows and a short one.
        let (w, h) = (67, 150);
        let rows = numbered_rows(w, h);
        for depth in [png::BitDepth::Sixteen, png::BitDepth::Eight] {
            let packed: Vec<u8> = match depth {
                png::BitDepth::Eight => rows.iter().step_by(2).copied().collect(),
                _ => rows.clone(),
            };
            let top = 37.3;
            let plain = load_gray((w, h), depth, &packed);
            let read = load_gray_scaled((w, h), depth, &packed, Some(top));
            assert_eq!(read, plain);
            let bits = |m: &Heightmap| m.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            let expected = bits(&heights(&plain, w as usize, h as usize, top));
            assert!(expected.iter().any(|&b| b != 0));
            // Another scale leaves them in place; then they are taken.
            let other = bits(&heights(&read, w as usize, h as usize, 2.0 * top));
            assert_eq!(
                other,
                bits(&heights(&plain, w as usize, h as usize, 2.0 * top))
            );
            assert!(read.scaled.lock().unwrap().is_some());
            assert_eq!(bits(&heights(&read, w as usize, h as usize, top)), expected);
            assert!(read.scaled.lock().unwrap().is_none());
            assert_eq!(bits(&heights(&read, w as usize, h as usize, top)), expected);
            // Another size resamples the samples.
            let resampled = bits(&heights(&read, 20, 30, top));
            assert_eq!(resampled, bits(&heights(&plain, 20, 30, top)));
        }
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
    fn maps_whose_data_cannot_fill_their_size_are_refused_before_inflating() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.png");
        // 8000 × 8000 samples (128 MB): the four bytes of data would
        // inflate to 4 KB at most.
        header_with_scant_data(&path, (8000, 8000));
        let e = load_scaled(&path, Some(10.0)).unwrap_err();
        assert_eq!(
            e,
            format!("cannot read {}: the image data ends early", path.display())
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
