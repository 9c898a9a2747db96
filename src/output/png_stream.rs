//! A PNG encoded as its rows arrive, top row first, in batches of whole
//! rows: a render hands over each band of rows as soon as it and the bands
//! above it are done, so that encoding (serial: 15-25 ms for a 1080p
//! frame) overlaps tracing instead of following it.
//!
//! The `png` crate writes the file around the image data once it is all
//! compressed: the header, the text chunks, the IDAT chunks and the end
//! (its writer cannot hand back what it wrote, so it writes into the
//! finished file's buffer rather than being kept open). The image data is
//! made here: each row filtered, then deflated by `fdeflate` (the `png`
//! crate's own fast compressor). The crate's `StreamWriter` takes rows as
//! they come too, but its compressor writes through the chunk writer eight
//! bytes at a time, which made encoding a 1080p frame a third slower
//! (31 against 23 ms) than its whole-image path, and that path needs the
//! whole image at once.
//!
//! Filtering follows the PNG specification's recommended heuristic
//! (section 12.8): of the five filter types, each row takes the one whose
//! output bytes, read as signed, have the smallest sum of absolute values;
//! ties go to the lower type. The five costs are summed type by type,
//! without writing the filtered bytes; only the chosen filter is then
//! written. Each of those loops is simple enough for the compiler to
//! vectorise, and they are compiled for AVX2 where the CPU runs it.

use super::Metadata;
use crate::png_filter::{predict, AVG, NONE, PAETH, SUB, UP};

/// See the module documentation.
pub struct PngStream {
    /// The image's size, colour type and bit depth, and its text chunks,
    /// which the `png` crate writes around the image data at the end.
    size: (u32, u32),
    format: (png::ColorType, png::BitDepth),
    texts: Vec<(&'static str, String)>,
    deflate: fdeflate::Compressor<Vec<u8>>,
    /// Bytes of a row, and of a pixel (at least one).
    row_len: usize,
    bpp: usize,
    /// The previous row as given (zeros above the first).
    above: Vec<u8>,
    /// The row being written: its filter type, then its filtered bytes.
    filtered: Vec<u8>,
    rows_left: usize,
}

/// The most bytes of image data in one IDAT chunk, as the `png` crate
/// writes them (the format allows 2³¹ − 1).
const MAX_IDAT_BYTES: usize = (u32::MAX >> 1) as usize;

impl PngStream {
    /// Begins a `width` × `height` image of `color` (gray, gray with
    /// alpha, RGB or RGBA) and `depth` (8 or 16 bits), with `meta` in text
    /// chunks.
    pub fn new(
        (width, height): (u32, u32),
        (color, depth): (png::ColorType, png::BitDepth),
        meta: &Metadata,
    ) -> Result<PngStream, String> {
        let bytes_per_sample = match depth {
            png::BitDepth::Eight => 1,
            png::BitDepth::Sixteen => 2,
            other => return Err(format!("cannot stream {other:?}-bit PNG rows")),
        };
        if color == png::ColorType::Indexed {
            return Err("cannot stream indexed PNG rows".into());
        }
        let bpp = color.samples() * bytes_per_sample;
        let row_len = width as usize * bpp;
        let deflate = fdeflate::Compressor::new(Vec::new()).map_err(|e| e.to_string())?;
        Ok(PngStream {
            size: (width, height),
            format: (color, depth),
            texts: meta.pairs(),
            deflate,
            row_len,
            bpp,
            above: vec![0; row_len],
            filtered: vec![0; row_len + 1],
            rows_left: height as usize,
        })
    }

    /// Filters and compresses the next whole rows (samples big-endian).
    pub fn write_rows(&mut self, rows: &[u8]) -> Result<(), String> {
        let count = rows.len().checked_div(self.row_len).unwrap_or(0);
        if rows.len() != count * self.row_len || count > self.rows_left {
            return Err(format!(
                "{} bytes are not whole rows of {} bytes within the {} rows left",
                rows.len(),
                self.row_len,
                self.rows_left
            ));
        }
        for row in rows.chunks_exact(self.row_len.max(1)) {
            filter_row(row, &self.above, self.bpp, &mut self.filtered);
            self.deflate
                .write_data(&self.filtered)
                .map_err(|e| e.to_string())?;
            self.above.copy_from_slice(row);
        }
        self.rows_left -= count;
        Ok(())
    }

    /// Ends the image and gives its file's bytes: the header and text
    /// chunks, the image data in IDAT chunks, the end. An error if fewer
    /// rows came than the header declares.
    pub fn finish(self) -> Result<Vec<u8>, String> {
        if self.rows_left > 0 {
            return Err(format!("{} rows of the image are missing", self.rows_left));
        }
        let data = self.deflate.finish().map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(data.len() + 1024);
        let ((width, height), (color, depth)) = (self.size, self.format);
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(color);
        enc.set_depth(depth);
        for (k, v) in self.texts {
            // tEXt holds ISO 8859-1 only; a scene file named in another
            // script keeps its name in an international (UTF-8) chunk.
            if v.chars().all(|c| (c as u32) <= 0xFF) {
                enc.add_text_chunk(k.to_string(), v)
            } else {
                enc.add_itxt_chunk(k.to_string(), v)
            }
            .map_err(|e| e.to_string())?;
        }
        let mut file = enc.write_header().map_err(|e| e.to_string())?;
        for chunk in data.chunks(MAX_IDAT_BYTES) {
            file.write_chunk(png::chunk::IDAT, chunk)
                .map_err(|e| e.to_string())?;
        }
        file.finish().map_err(|e| e.to_string())?;
        Ok(out)
    }
}

/// Filters `row` under `above` (pixels of `bpp` bytes) into `out` (the
/// filter type, then the filtered bytes) with the filter of least cost.
fn filter_row(row: &[u8], above: &[u8], bpp: usize, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if crate::accel::isa::Isa::best() >= Some(crate::accel::isa::Isa::Avx2) {
        // SAFETY: the CPU runs AVX2.
        #[allow(unsafe_code)]
        return unsafe { filter_row_avx2(row, above, bpp, out) };
    }
    filter_row_here(row, above, bpp, out)
}

/// [`filter_row`] compiled for AVX2: 32 bytes a step instead of 16.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn filter_row_avx2(row: &[u8], above: &[u8], bpp: usize, out: &mut [u8]) {
    filter_row_here(row, above, bpp, out)
}

#[inline(always)]
fn filter_row_here(row: &[u8], above: &[u8], bpp: usize, out: &mut [u8]) {
    filter(cheapest(&costs(row, above, bpp)), row, above, bpp, out);
}

/// A filtered byte's cost: its absolute value, read as signed.
#[inline(always)]
fn cost(filtered: u8) -> u32 {
    (filtered as i8).unsigned_abs() as u32
}

/// Each filter type's cost for `row` under `above` (pixels of `bpp`
/// bytes): the sum of [`cost`] over the bytes it would write.
#[inline(always)]
fn costs(row: &[u8], above: &[u8], bpp: usize) -> [u64; 5] {
    let mut total = [0u64; 5];
    let head = bpp.min(row.len());
    // The first pixel has nothing to its left (a = c = 0).
    for (&x, &b) in row[..head].iter().zip(&above[..head]) {
        for kind in NONE..=PAETH {
            total[kind as usize] += cost(x.wrapping_sub(predict(kind, 0, b, 0))) as u64;
        }
    }
    // The rest, one type at a time (each loop simple enough to vectorise).
    let (x, a) = (&row[head..], &row[..row.len() - head]);
    let (b, c) = (&above[head..], &above[..row.len() - head]);
    macro_rules! sum_for {
        ($kind:expr) => {
            sum_costs(x, a, b, c, |x, a, b, c| {
                x.wrapping_sub(predict($kind, a, b, c))
            })
        };
    }
    total[NONE as usize] += sum_for!(NONE);
    total[SUB as usize] += sum_for!(SUB);
    total[UP as usize] += sum_for!(UP);
    total[AVG as usize] += sum_for!(AVG);
    total[PAETH as usize] += sum_for!(PAETH);
    total
}

/// Σ [`cost`] of `filtered(x, a, b, c)` over the bytes, in runs short
/// enough for 16-bit sums (256 · 128), which stay in vector lanes.
#[inline(always)]
fn sum_costs(
    x: &[u8],
    a: &[u8],
    b: &[u8],
    c: &[u8],
    filtered: impl Fn(u8, u8, u8, u8) -> u8,
) -> u64 {
    const RUN: usize = 256;
    let n = x.len();
    let (x, a, b, c) = (&x[..n], &a[..n], &b[..n], &c[..n]);
    let mut total = 0u64;
    let mut start = 0;
    while start + RUN <= n {
        let (x, a, b, c) = (
            run::<RUN>(x, start),
            run::<RUN>(a, start),
            run::<RUN>(b, start),
            run::<RUN>(c, start),
        );
        let mut sum = 0u16;
        for i in 0..RUN {
            sum += cost(filtered(x[i], a[i], b[i], c[i])) as u16;
        }
        total += sum as u64;
        start += RUN;
    }
    for i in start..n {
        total += cost(filtered(x[i], a[i], b[i], c[i])) as u64;
    }
    total
}

/// The `N` bytes of `bytes` from `start`, as an array (for loops the
/// compiler knows the length of).
fn run<const N: usize>(bytes: &[u8], start: usize) -> &[u8; N] {
    bytes[start..start + N].try_into().expect("N bytes")
}

/// The filter type of least cost, the lowest on ties.
fn cheapest(costs: &[u64; 5]) -> u8 {
    (NONE..=PAETH)
        .min_by_key(|&kind| (costs[kind as usize], kind))
        .unwrap_or(NONE)
}

/// Writes filter type `kind` and `row` filtered by it (under `above`,
/// pixels of `bpp` bytes) into `out`.
#[inline(always)]
fn filter(kind: u8, row: &[u8], above: &[u8], bpp: usize, out: &mut [u8]) {
    out[0] = kind;
    let out = &mut out[1..];
    let head = bpp.min(row.len());
    for i in 0..head {
        out[i] = row[i].wrapping_sub(predict(kind, 0, above[i], 0));
    }
    let n = row.len() - head;
    let (x, a) = (&row[head..], &row[..n]);
    let (b, c) = (&above[head..head + n], &above[..n]);
    let out = &mut out[head..head + n];
    // One loop per type, each simple enough to vectorise.
    macro_rules! filter_for {
        ($kind:expr) => {
            for i in 0..n {
                out[i] = x[i].wrapping_sub(predict($kind, a[i], b[i], c[i]));
            }
        };
    }
    match kind {
        SUB => filter_for!(SUB),
        UP => filter_for!(UP),
        AVG => filter_for!(AVG),
        PAETH => filter_for!(PAETH),
        _ => out.copy_from_slice(x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash3;
    use crate::terrain::png_rows;

    fn noise(n: usize, seed: u64) -> Vec<u8> {
        (0..n as u64).map(|i| hash3(seed, 0, i) as u8).collect()
    }

    /// Rows that favour each filter type in turn: flat zeros (None),
    /// ramps along the row (Sub), a row repeated (Up), and noise.
    fn varied_rows(row_len: usize, rows: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for r in 0..rows {
            let row: Vec<u8> = match r % 4 {
                0 => vec![0; row_len],
                1 => (0..row_len).map(|i| (i * 7) as u8).collect(),
                2 => out[out.len() - row_len..].to_vec(),
                _ => noise(row_len, r as u64),
            };
            out.extend(row);
        }
        out
    }

    #[test]
    fn every_filter_type_undoes_to_the_row() {
        for bpp in [1, 3, 4, 6, 8] {
            for row_len in [bpp, 2 * bpp, 17 * bpp, 100 * bpp] {
                let above = noise(row_len, 1);
                let row = noise(row_len, 2);
                for kind in NONE..=PAETH {
                    let mut raw = vec![0; 2 * (row_len + 1)];
                    filter(NONE, &above, &[0; 800], bpp, &mut raw[..row_len + 1]);
                    filter(kind, &row, &above, bpp, &mut raw[row_len + 1..]);
                    png_rows::unfilter(&mut raw, row_len, bpp).unwrap();
                    assert_eq!(&raw[row_len + 2..], &row[..], "type {kind}, bpp {bpp}");
                }
            }
        }
    }

    #[test]
    fn costs_are_the_sums_over_the_filtered_bytes_and_the_cheapest_is_chosen() {
        for bpp in [1, 3, 4, 8] {
            let row_len = 75 * bpp;
            for seed in 0..20 {
                let above = noise(row_len, 2 * seed);
                let mut row = noise(row_len, 2 * seed + 1);
                // Some rows close to the one above or to their left.
                if seed % 3 == 1 {
                    row = above
                        .iter()
                        .map(|&b| b.wrapping_add(seed as u8 % 3))
                        .collect();
                }
                let costs = costs(&row, &above, bpp);
                let mut out = vec![0; row_len + 1];
                for kind in NONE..=PAETH {
                    filter(kind, &row, &above, bpp, &mut out);
                    let sum: u64 = out[1..].iter().map(|&f| cost(f) as u64).sum();
                    assert_eq!(costs[kind as usize], sum, "type {kind}");
                }
                let chosen = cheapest(&costs);
                assert!((NONE..=PAETH).all(|k| costs[chosen as usize] <= costs[k as usize]));
                assert!((NONE..chosen).all(|k| costs[chosen as usize] < costs[k as usize]));
            }
        }
    }

    fn meta() -> Metadata {
        Metadata {
            scene: "s.json".into(),
            key: "ab".into(),
            seed: 1,
            spp: 1,
            full_size: (9, 13),
            region: None,
        }
    }

    fn streamed(
        (w, h): (u32, u32),
        format: (png::ColorType, png::BitDepth),
        data: &[u8],
        batch_rows: usize,
    ) -> Vec<u8> {
        let mut stream = PngStream::new((w, h), format, &meta()).unwrap();
        let row_len = data.len() / h as usize;
        for batch in data.chunks(row_len * batch_rows) {
            stream.write_rows(batch).unwrap();
        }
        stream.finish().unwrap()
    }

    #[test]
    fn streamed_images_decode_to_their_pixels_whatever_the_batches() {
        use png::{BitDepth::*, ColorType::*};
        for (color, depth, bpp) in [
            (Rgb, Eight, 3),
            (Rgba, Eight, 4),
            (Rgb, Sixteen, 6),
            (Rgba, Sixteen, 8),
            (Grayscale, Eight, 1),
        ] {
            for (w, h) in [(1, 1), (9, 13), (40, 7)] {
                let data = varied_rows(w as usize * bpp, h as usize);
                let whole = streamed((w, h), (color, depth), &data, h as usize);
                for batch in [1, 2, 5] {
                    assert_eq!(streamed((w, h), (color, depth), &data, batch), whole);
                }
                let mut decoder = png::Decoder::new(std::io::Cursor::new(&whole))
                    .read_info()
                    .unwrap();
                let mut back = vec![0; decoder.output_buffer_size().unwrap()];
                decoder.next_frame(&mut back).unwrap();
                assert_eq!(back, data, "{color:?} {depth:?} {w}×{h}");
                let info = decoder.info();
                assert_eq!((info.width, info.height, info.color_type), (w, h, color));
                let texts: Vec<_> = info.uncompressed_latin1_text.iter().collect();
                assert!(texts.iter().any(|t| t.keyword == "Software"));
            }
        }
    }

    #[test]
    fn rows_that_do_not_fit_the_image_are_refused() {
        let rgb8 = (png::ColorType::Rgb, png::BitDepth::Eight);
        let mut stream = PngStream::new((4, 2), rgb8, &meta()).unwrap();
        assert!(stream.write_rows(&[0; 13]).is_err(), "a row and a byte");
        assert!(stream.write_rows(&[0; 36]).is_err(), "three rows of two");
        stream.write_rows(&[0; 12]).unwrap();
        let missing = stream.finish().unwrap_err();
        assert!(missing.contains("1 rows"), "{missing}");
        assert!(
            PngStream::new((4, 2), (png::ColorType::Rgb, png::BitDepth::Four), &meta()).is_err()
        );
    }
}
