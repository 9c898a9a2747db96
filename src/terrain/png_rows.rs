//! The rows of a non-interlaced PNG of whole-byte samples, inflated by
//! libdeflate: the `png` crate inflates a 4097² 16-bit heightmap in
//! 115-125 ms of one thread, libdeflate in 75-80 ms, and inflating is
//! serial (one zlib stream), so it was most of a 4097² frame's reading.
//! The `png` crate still reads and checks the header; this module takes
//! the image data from there ([`image_data`]), inflates it whole
//! ([`inflate`]), or with its last part decoded by the other thread
//! ([`inflate_beside`]), and undoes the rows' filters ([`unfilter`]).

use std::borrow::Cow;

use super::deflate_tail;
use crate::png_filter::{predict, AVG, NONE, PAETH, SUB, UP};

/// The PNG signature, before the first chunk.
const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// The zlib stream of a PNG file's `bytes`: its IDAT chunks' data, in
/// order (borrowed when there is one chunk, as most encoders write).
pub fn image_data(bytes: &[u8]) -> Result<Cow<'_, [u8]>, String> {
    let mut rest = bytes.strip_prefix(&SIGNATURE[..]).ok_or("not a PNG file")?;
    let mut parts: Vec<&[u8]> = Vec::new();
    loop {
        if rest.len() < 12 {
            return Err("the file ends before its IEND chunk".into());
        }
        let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let kind = &rest[4..8];
        let data = rest
            .get(8..8 + len)
            .filter(|_| rest.len() >= 12 + len)
            .ok_or("the image data ends early")?;
        match kind {
            b"IDAT" => parts.push(data),
            b"IEND" => break,
            _ => {}
        }
        rest = &rest[12 + len..];
    }
    match parts.as_slice() {
        [] => Err("the file has no image data".into()),
        [one] => Ok(Cow::Borrowed(one)),
        many => Ok(Cow::Owned(many.concat())),
    }
}

/// The length of the inflated rows of a `w` × `h` image of `bpp` bytes a
/// pixel: each row its filter byte and its pixels. None past `usize`.
pub fn rows_len(w: usize, h: usize, bpp: usize) -> Option<usize> {
    w.checked_mul(bpp)?.checked_add(1)?.checked_mul(h)
}

/// The most a deflate stream's bytes can inflate to, each: a length-258
/// match in one bit, and a little more.
const MOST_PER_BYTE: usize = 1032;

/// Whether `data.len()` bytes of zlib stream might inflate to `len` bytes;
/// when not, the image data is certainly short, and nothing that size
/// need be allocated to find out.
pub fn might_inflate_to(data: usize, len: usize) -> bool {
    len / MOST_PER_BYTE <= data
}

/// Inflates the zlib stream `data` into `raw`, which it must fill exactly
/// (the rows and their filter bytes); checks the stream's Adler-32.
pub fn inflate(data: &[u8], raw: &mut [u8]) -> Result<(), String> {
    let mut decompressor = libdeflater::Decompressor::new();
    match decompressor.zlib_decompress(data, raw) {
        Ok(n) if n == raw.len() => Ok(()),
        Ok(_) => Err("the image data ends early".into()),
        Err(libdeflater::DecompressionError::InsufficientSpace) => {
            Err("the image data is longer than the image".into())
        }
        Err(libdeflater::DecompressionError::BadData) => {
            Err("the image data is corrupt (it does not inflate)".into())
        }
    }
}

/// Image data shorter than this is inflated by one thread: the other's
/// search for a block costs about a millisecond.
const SPLIT_FROM: usize = 2 << 20;

/// The share of the stream the other thread decodes, once it has done
/// its own work ([`inflate_beside`]): its decoder runs at about 0.7 of
/// libdeflate's speed, and faulting in a 4097² map's pages takes it about
/// 0.6 of the time libdeflate takes over the whole stream.
const TAIL_SHARE: f64 = 1.0 / 8.0;

/// How far before its end the first part may stop the search for the
/// block the second starts with: blocks are 16-20 KiB of a zlib stream.
const SEARCH_BYTES: usize = 256 << 10;

/// Inflates `data` into `raw` as [`inflate`] does while the other thread
/// runs `beside`, and gives what that returned. Given two threads and
/// image data worth it, the other thread then decodes the stream's last
/// eighth from a block it finds there
/// ([`deflate_tail`]), while this one inflates the rest with libdeflate,
/// which stops where its input does: what it wrote up to the tail's start
/// is right, and the tail's bytes go after it, its references to the
/// window before resolved. The stream's Adler-32 over the whole is the
/// check: where it fails, or anything else does, the stream is inflated
/// again from the start, so the result and its errors are [`inflate`]'s.
pub fn inflate_beside<R: Send>(
    data: &[u8],
    raw: &mut [u8],
    beside: impl FnOnce() -> R + Send,
) -> (Result<(), String>, R) {
    if data.len() < SPLIT_FROM || rayon::current_num_threads() < 2 {
        return rayon::join(|| inflate(data, raw), beside);
    }
    let split = 2 + ((data.len() - 2) as f64 * (1.0 - TAIL_SHARE)) as usize;
    let (result, r, _) = inflate_split(data, raw, split, beside);
    (result, r)
}

/// [`inflate_beside`] with the first part's input ending at byte `split`
/// of `data`; and whether the two parts were joined (or the stream
/// inflated serially after all).
fn inflate_split<R: Send>(
    data: &[u8],
    raw: &mut [u8],
    split: usize,
    beside: impl FnOnce() -> R + Send,
) -> (Result<(), String>, R, bool) {
    // A zlib header without a preset dictionary, then raw deflate.
    let plain_header = data.len() > split
        && split > 2
        && data[0] & 0x0f == 8
        && (data[0] as u32 * 256 + data[1] as u32).is_multiple_of(31)
        && data[1] & 0x20 == 0;
    if !plain_header {
        let (result, r) = rayon::join(|| inflate(data, raw), beside);
        return (result, r, false);
    }
    let deflate = &data[2..];
    let end = split - 2;
    let n = raw.len();
    let (_, (r, tail)) = rayon::join(
        || {
            // Fails where its input ends, mid-block: expected.
            let _ = libdeflater::Decompressor::new().deflate_decompress(&deflate[..end], raw);
        },
        || {
            let r = beside();
            let from = end.saturating_sub(SEARCH_BYTES) * 8;
            let tail = deflate_tail::find_block(deflate, from, end * 8 - 64)
                .and_then(|start| deflate_tail::inflate_tail(deflate, start, n).ok());
            (r, tail)
        },
    );
    let joined = tail.is_some_and(|tail| join_tail(data, raw, tail));
    if joined {
        (Ok(()), r, true)
    } else {
        (inflate(data, raw), r, false)
    }
}

/// Puts `tail` (the stream's last part, decoded) after the first part in
/// `raw`, and checks the whole against the zlib stream's Adler-32, which
/// follows the last block in `data`.
fn join_tail(data: &[u8], raw: &mut [u8], mut tail: deflate_tail::Tail) -> bool {
    let n = raw.len();
    let Some(first) = n.checked_sub(tail.bytes.len()) else {
        return false;
    };
    let window = &raw[first.saturating_sub(deflate_tail::WINDOW)..first];
    if !tail.resolve(window) {
        return false;
    }
    raw[first..].copy_from_slice(&tail.bytes);
    let trailer = 2 + tail.end_bit.div_ceil(8);
    let Some(stored) = data.get(trailer..trailer + 4) else {
        return false;
    };
    let stored = u32::from_be_bytes(stored.try_into().expect("four bytes"));
    let (a, b) = raw.split_at(n / 2);
    let (a, b) = rayon::join(|| libdeflater::adler32(a), || libdeflater::adler32(b));
    adler32_combine(a, b, n - n / 2) == stored
}

/// The Adler-32 of two pieces one after the other, from theirs (`a` of
/// the first, `b` of the second, `b_len` bytes long), as zlib combines
/// them.
fn adler32_combine(a: u32, b: u32, b_len: usize) -> u32 {
    const BASE: u64 = 65521;
    let rem = b_len as u64 % BASE;
    let (a_lo, a_hi) = ((a & 0xffff) as u64, (a >> 16) as u64);
    let (b_lo, b_hi) = ((b & 0xffff) as u64, (b >> 16) as u64);
    let lo = (a_lo + b_lo + BASE - 1) % BASE;
    let hi = (rem * a_lo % BASE + a_hi + b_hi + BASE - rem) % BASE;
    (lo | hi << 16) as u32
}

/// Undoes the PNG filters of `raw`'s rows in place: each row is a filter
/// byte and `stride` bytes of pixels of `bpp` bytes; the first row's row
/// above is zeros. Rows filtered with None, as a heightmap's rows often
/// are, are left as they are. (The `png` crate's unfilter is public only
/// under its development-time `benchmarks` feature.)
pub fn unfilter(raw: &mut [u8], stride: usize, bpp: usize) -> Result<(), String> {
    let zeros = vec![0u8; stride];
    for start in (0..raw.len()).step_by(stride + 1) {
        let (before, row) = raw.split_at_mut(start + 1);
        let row = &mut row[..stride];
        let up = if start == 0 {
            &zeros[..]
        } else {
            &before[start - stride..start]
        };
        let (near, far) = (bpp.min(stride), bpp..stride);
        // Each byte plus its prediction from the bytes already undone: the
        // first `bpp` have no pixel to their left.
        macro_rules! unfilter_with {
            ($kind:expr) => {{
                for k in 0..near {
                    row[k] = row[k].wrapping_add(predict($kind, 0, up[k], 0));
                }
                for k in far {
                    row[k] = row[k].wrapping_add(predict($kind, row[k - bpp], up[k], up[k - bpp]));
                }
            }};
        }
        match before[start] {
            NONE => {}
            SUB => unfilter_with!(SUB),
            UP => unfilter_with!(UP),
            AVG => unfilter_with!(AVG),
            PAETH => unfilter_with!(PAETH),
            other => {
                return Err(format!(
                    "row {} has filter type {other}, which PNG does not define",
                    start / (stride + 1)
                ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG of `w` × `h` pixels of `color` and `depth`, its rows `packed`,
    /// written with `filter` (adaptive picks per row), its zlib stream
    /// split into IDAT chunks of at most `chunk` bytes.
    fn encode(
        (w, h): (u32, u32),
        color: png::ColorType,
        depth: png::BitDepth,
        filter: png::Filter,
        chunk: usize,
        packed: &[u8],
    ) -> Vec<u8> {
        fn header(
            out: &mut Vec<u8>,
            w: u32,
            h: u32,
            layout: (png::ColorType, png::BitDepth),
            filter: png::Filter,
        ) -> png::Writer<&mut Vec<u8>> {
            let mut enc = png::Encoder::new(out, w, h);
            enc.set_color(layout.0);
            enc.set_depth(layout.1);
            enc.set_filter(filter);
            enc.write_header().unwrap()
        }
        let mut whole = Vec::new();
        let mut writer = header(&mut whole, w, h, (color, depth), filter);
        writer.write_image_data(packed).unwrap();
        writer.finish().unwrap();
        let stream = image_data(&whole).unwrap().into_owned();
        let mut split = Vec::new();
        let mut writer = header(&mut split, w, h, (color, depth), filter);
        for piece in stream.chunks(chunk) {
            writer.write_chunk(png::chunk::IDAT, piece).unwrap();
        }
        writer.finish().unwrap();
        split
    }

    /// What the `png` crate decodes.
    fn reference(bytes: &[u8]) -> Vec<u8> {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
            .read_info()
            .unwrap();
        let mut out = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut out).unwrap();
        out
    }

    /// Inflated and unfiltered here, the rows without their filter bytes.
    fn decoded(bytes: &[u8], stride: usize, bpp: usize, h: usize) -> Vec<u8> {
        let data = image_data(bytes).unwrap();
        let mut raw = vec![0; h * (stride + 1)];
        inflate(&data, &mut raw).unwrap();
        unfilter(&mut raw, stride, bpp).unwrap();
        raw.chunks_exact(stride + 1)
            .flat_map(|row| row[1..].to_vec())
            .collect()
    }

    #[test]
    fn every_filter_and_layout_decodes_as_the_png_crate_does() {
        let (w, h) = (37u32, 23u32);
        for (color, depth, bpp) in [
            (png::ColorType::Grayscale, png::BitDepth::Eight, 1),
            (png::ColorType::Grayscale, png::BitDepth::Sixteen, 2),
            (png::ColorType::GrayscaleAlpha, png::BitDepth::Eight, 2),
            (png::ColorType::GrayscaleAlpha, png::BitDepth::Sixteen, 4),
        ] {
            let stride = w as usize * bpp;
            // Smooth terrain-like bytes with some noise, so that every
            // filter has carries and borrows to get right.
            let packed: Vec<u8> = (0..h as usize * stride)
                .map(|k| {
                    let (r, c) = (k / stride, k % stride);
                    ((r * 7 + c * 3) as u8) ^ (crate::hash::unit_f32(k as u64, 3, 1) * 64.0) as u8
                })
                .collect();
            for filter in [
                png::Filter::NoFilter,
                png::Filter::Sub,
                png::Filter::Up,
                png::Filter::Avg,
                png::Filter::Paeth,
                png::Filter::Adaptive,
            ] {
                for chunk in [1 << 20, 97] {
                    let bytes = encode((w, h), color, depth, filter, chunk, &packed);
                    assert_eq!(reference(&bytes), packed);
                    assert_eq!(
                        decoded(&bytes, stride, bpp, h as usize),
                        packed,
                        "{color:?} {depth:?} {filter:?}, IDAT chunks of {chunk}"
                    );
                }
            }
        }
    }

    #[test]
    fn broken_streams_are_refused() {
        let packed: Vec<u8> = (0..64u8).collect();
        let bytes = encode(
            (8, 8),
            png::ColorType::Grayscale,
            png::BitDepth::Eight,
            png::Filter::Sub,
            1 << 20,
            &packed,
        );
        let data = image_data(&bytes).unwrap().into_owned();
        assert!(might_inflate_to(data.len(), 8 * 9));
        assert!(!might_inflate_to(1, 2 * MOST_PER_BYTE));
        // One row too few, one too many.
        assert!(inflate(&data, &mut [0; 8 * 9 + 1])
            .unwrap_err()
            .contains("ends early"));
        assert!(inflate(&data, &mut [0; 7 * 9])
            .unwrap_err()
            .contains("longer than the image"));
        let mut corrupt = data.clone();
        let last = corrupt.len() - 1;
        corrupt[last] ^= 1; // the Adler-32
        assert!(inflate(&corrupt, &mut [0; 8 * 9])
            .unwrap_err()
            .contains("corrupt"));
        // A file cut inside its data, and one with no data.
        assert!(image_data(&bytes[..bytes.len() - 20])
            .unwrap_err()
            .contains("ends early"));
        let mut no_data = bytes[..33].to_vec();
        no_data.extend([0, 0, 0, 0, b'I', b'E', b'N', b'D', 0xae, 0x42, 0x60, 0x82]);
        assert!(image_data(&no_data).unwrap_err().contains("no image data"));
        // An undefined filter type.
        let mut raw = vec![5, 1, 2, 0, 3, 4];
        assert!(unfilter(&mut raw, 2, 1)
            .unwrap_err()
            .contains("row 0 has filter type 5"));
    }

    /// A zlib stream of `bytes`: a header, the deflated bytes, their
    /// Adler-32.
    fn zlib(bytes: &[u8], level: i32) -> Vec<u8> {
        let mut out = vec![0x78, 0x9c];
        out.extend(deflate_tail::tests::deflate(bytes, level));
        out.extend(libdeflater::adler32(bytes).to_be_bytes());
        out
    }

    #[test]
    fn split_inflates_are_the_serial_inflate_wherever_the_split_falls() {
        let original = deflate_tail::tests::noisy(1_500_000, 21);
        for level in [1, 6] {
            let stream = zlib(&original, level);
            for share in [0.02, 0.3, 0.5, 0.9, 0.999] {
                let split = 2 + ((stream.len() - 2) as f64 * share) as usize;
                let mut raw = vec![0; original.len()];
                let done = inflate_split(&stream, &mut raw, split, || 7);
                assert_eq!(done, (Ok(()), 7, true), "level {level}, share {share}");
                assert!(raw == original, "level {level}, share {share}");
            }
        }
        // Stored blocks only: no block to start a tail at, so one thread
        // inflates it all.
        let stream = zlib(&original, 0);
        let mut raw = vec![0; original.len()];
        let done = inflate_split(&stream, &mut raw, stream.len() / 2, || 7);
        assert_eq!(done, (Ok(()), 7, false));
        assert!(raw == original);
    }

    #[test]
    fn split_inflates_fail_as_the_serial_inflate_does() {
        let original = deflate_tail::tests::noisy(1_000_000, 22);
        let stream = zlib(&original, 6);
        let split = stream.len() * 3 / 4;
        let serial = |data: &[u8], n: usize| inflate(data, &mut vec![0; n]);
        // Damaged in the tail's part, in the first part, or in the
        // checksum; cut short; inflating to more or fewer bytes.
        let mut cases: Vec<(Vec<u8>, usize)> = Vec::new();
        for at in [split + 5000, split / 2, stream.len() - 2] {
            let mut damaged = stream.clone();
            damaged[at] ^= 0x10;
            cases.push((damaged, original.len()));
        }
        cases.push((stream[..stream.len() - 3000].to_vec(), original.len()));
        cases.push((stream.clone(), original.len() + 1));
        cases.push((stream.clone(), original.len() - 1));
        for (k, (data, n)) in cases.iter().enumerate() {
            let mut raw = vec![0; *n];
            let (split_result, (), joined) =
                inflate_split(data, &mut raw, split.min(data.len() - 1), || ());
            assert!(split_result.is_err() && !joined, "case {k}");
            assert_eq!(split_result, serial(data, *n), "case {k}");
        }
    }

    #[test]
    fn adler32_of_two_pieces_combines_to_the_whole() {
        let bytes = deflate_tail::tests::noisy(200_000, 23);
        for cut in [0, 1, 65520, 65521, 65522, 100_000, 200_000] {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(
                adler32_combine(libdeflater::adler32(a), libdeflater::adler32(b), b.len()),
                libdeflater::adler32(&bytes),
                "cut at {cut}"
            );
        }
    }
}
