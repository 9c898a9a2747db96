//! The second part of a deflate stream, decoded from one of its blocks in
//! the middle while another thread decodes the part before: a 4097²
//! heightmap's image data takes one thread 75-80 ms to inflate, most of a
//! frame's reading, and a deflate stream is serial, each block's matches
//! reaching back into the 32 KiB before it.
//!
//! Three steps, after RFC 1951 and the speculative decoding of
//! Kerbiriou and Chikhi's pugz and Knespel and Brunst's rapidgzip:
//! [`find_block`] finds where a dynamic-Huffman block starts near a given
//! bit, by trying each bit as a block header and keeping the first whose
//! codes are complete and whose whole block decodes; [`inflate_tail`]
//! decodes from there to the stream's end, its first bytes as 16-bit
//! symbols in which a match reaching before the start copies *markers*
//! (the window's byte k is 256 + k) instead of bytes, until the last
//! 32 KiB it made hold no marker, and plain bytes from there on;
//! [`Tail::resolve`] then puts the window's bytes, once the part before
//! is known, in place of the markers.
//!
//! Nothing here is trusted: a block found at a bit where none starts, or
//! any other surprise, gives bytes that the caller's checksum (the zlib
//! stream's Adler-32 over the whole) refuses, and the caller then inflates
//! the stream serially. So the decoder is lenient where the format allows
//! (incomplete codes decode until an unused code is met) and the finder
//! strict (complete codes only).

/// How far a match reaches back, at most.
pub const WINDOW: usize = 32 * 1024;

/// Why decoding stopped short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The bits are not a deflate stream (or not one from here).
    Bad,
    /// The output would not fit the buffer given.
    Full,
}

/// Bits of the stream, least significant first, as RFC 1951 packs them.
#[derive(Clone)]
struct Bits<'a> {
    data: &'a [u8],
    /// The next byte to load.
    pos: usize,
    /// Loaded bits, the next one lowest; `count` of them are valid (bits
    /// above may hold the next bytes' bits already, harmlessly).
    buf: u64,
    count: u32,
}

impl<'a> Bits<'a> {
    fn at(data: &'a [u8], bit: usize) -> Bits<'a> {
        let mut bits = Bits {
            data,
            pos: bit / 8,
            buf: 0,
            count: 0,
        };
        bits.refill();
        bits.consume((bit % 8) as u32);
        bits
    }

    /// At least 56 bits loaded.
    #[inline(always)]
    fn refill(&mut self) {
        if let Some(word) = self.data.get(self.pos..self.pos + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            self.buf |= word << self.count;
            self.pos += ((63 - self.count) >> 3) as usize;
            self.count |= 56;
        } else {
            // Zeros past the end; [`Bits::within`] tells whether any
            // were read.
            while self.count <= 56 {
                let byte = self.data.get(self.pos).copied().unwrap_or(0);
                self.buf |= (byte as u64) << self.count;
                self.pos += 1;
                self.count += 8;
            }
        }
    }

    #[inline(always)]
    fn consume(&mut self, n: u32) {
        self.buf >>= n;
        self.count -= n;
    }

    /// The next `n` bits (n ≤ count), consumed.
    #[inline(always)]
    fn take(&mut self, n: u32) -> u32 {
        let v = (self.buf & ((1u64 << n) - 1)) as u32;
        self.consume(n);
        v
    }

    /// The position of the next bit in the stream.
    fn position(&self) -> usize {
        self.pos * 8 - self.count as usize
    }

    /// Whether the bits read so far lie within the data (a few zero bytes
    /// are loaded ahead near the end without being read).
    fn within(&self) -> bool {
        self.position() <= self.data.len() * 8
    }

    fn skip_to_byte(&mut self) {
        let n = self.count % 8;
        self.consume(n);
    }
}

// A decoding table's entry: bits 0-7 the bits to consume, 8-11 the extra
// bits after them, 12-15 what the entry is, 16-31 its value (a literal,
// a length or distance base, or a subtable's offset). Zero: no code.
const LITERAL: u32 = 1 << 12;
const LENGTH: u32 = 2 << 12;
const END: u32 = 4 << 12;
const SUBTABLE: u32 = 8 << 12;

/// Bits of the first-level tables.
const LITLEN_BITS: u32 = 10;
const DIST_BITS: u32 = 8;

const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];
/// The order in which a dynamic block lists its code-length code's lengths.
const CODE_LENGTH_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// What a symbol of a code decodes to, as a table entry without its length.
fn litlen_value(symbol: usize) -> u32 {
    match symbol {
        0..=255 => LITERAL | (symbol as u32) << 16,
        256 => END,
        257..=285 => {
            let k = symbol - 257;
            LENGTH | (LENGTH_EXTRA[k] as u32) << 8 | (LENGTH_BASE[k] as u32) << 16
        }
        _ => 0,
    }
}

fn dist_value(symbol: usize) -> u32 {
    match symbol {
        0..=29 => LENGTH | (DIST_EXTRA[symbol] as u32) << 8 | (DIST_BASE[symbol] as u32) << 16,
        _ => 0,
    }
}

/// Fills `table` for the code of `lengths` (first level of `bits` bits,
/// then subtables); whether the code is complete. Over-subscribed codes
/// are an error; unused codes of an incomplete one decode to zero entries.
fn build(
    lengths: &[u8],
    bits: u32,
    value: fn(usize) -> u32,
    table: &mut Vec<u32>,
) -> Result<bool, Error> {
    let mut count = [0u32; 16];
    for &l in lengths {
        count[l as usize] += 1;
    }
    count[0] = 0;
    let mut left: i64 = 1;
    for &c in &count[1..] {
        left = 2 * left - c as i64;
        if left < 0 {
            return Err(Error::Bad);
        }
    }
    // Symbols in canonical order: by length, then by symbol.
    let mut offset = [0u32; 16];
    for l in 1..15 {
        offset[l + 1] = offset[l] + count[l];
    }
    let used = (offset[15] + count[15]) as usize;
    let mut sorted = [0u16; 288];
    for (s, &l) in lengths.iter().enumerate() {
        if l != 0 {
            sorted[offset[l as usize] as usize] = s as u16;
            offset[l as usize] += 1;
        }
    }
    table.clear();
    table.resize(1 << bits, 0);
    let mask = (1u32 << bits) - 1;
    let (mut code, mut len) = (0u32, 0u32);
    let mut k = 0;
    while k < used {
        let s = sorted[k] as usize;
        let l = lengths[s] as u32;
        code <<= l - len;
        len = l;
        let reversed = code.reverse_bits() >> (32 - l);
        if l <= bits {
            let entry = value(s) | l;
            let mut at = reversed as usize;
            while at < 1 << bits {
                table[at] = entry;
                at += 1 << l;
            }
            code += 1;
            k += 1;
            continue;
        }
        // Codes longer than the first level: those sharing these first
        // `bits` bits follow one another; their subtable is as deep as the
        // longest of them.
        let prefix = reversed & mask;
        let first_of = code >> (l - bits);
        let mut last = k;
        let (mut c, mut cl) = (code, l);
        while last + 1 < used {
            let nl = lengths[sorted[last + 1] as usize] as u32;
            let nc = (c + 1) << (nl - cl);
            if nc >> (nl - bits) != first_of {
                break;
            }
            c = nc;
            cl = nl;
            last += 1;
        }
        let sub_bits = cl - bits;
        let start = table.len();
        table.resize(start + (1 << sub_bits), 0);
        table[prefix as usize] = SUBTABLE | (start as u32) << 16 | sub_bits << 8 | bits;
        while k <= last {
            let s = sorted[k] as usize;
            let l = lengths[s] as u32;
            code <<= l - len;
            len = l;
            let reversed = code.reverse_bits() >> (32 - l);
            let entry = value(s) | (l - bits);
            let mut at = (reversed >> bits) as usize;
            while at < 1 << sub_bits {
                table[start + at] = entry;
                at += 1 << (l - bits);
            }
            code += 1;
            k += 1;
        }
    }
    Ok(left == 0)
}

/// The entry for the next code of `table`, whose first level is its
/// first `N` entries, consumed; at least 15 bits must be loaded.
#[inline(always)]
fn decode<const N: usize>(bits: &mut Bits, table: &[u32]) -> u32 {
    let first: &[u32; N] = table[..N].try_into().expect("a first level");
    let mut e = first[bits.buf as usize & (N - 1)];
    if e & SUBTABLE != 0 {
        bits.consume(e & 0xff);
        let sub = (e >> 8) & 0xf;
        let at = (e >> 16) as usize + (bits.buf & ((1 << sub) - 1)) as usize;
        e = table.get(at).copied().unwrap_or(0);
    }
    bits.consume(e & 0xff);
    e
}

/// Entries in the first levels.
const LITLEN_FIRST: usize = 1 << LITLEN_BITS;
const DIST_FIRST: usize = 1 << DIST_BITS;

/// A block's codes.
struct Codes {
    litlen: Vec<u32>,
    dist: Vec<u32>,
    /// The code-length code of the last dynamic header read.
    code_lengths: Vec<u32>,
}

impl Codes {
    fn new() -> Codes {
        Codes {
            litlen: Vec::with_capacity(2048),
            dist: Vec::with_capacity(1024),
            code_lengths: Vec::with_capacity(128),
        }
    }

    fn fixed(&mut self) {
        let mut lengths = [8u8; 288];
        lengths[144..256].fill(9);
        lengths[256..280].fill(7);
        build(&lengths, LITLEN_BITS, litlen_value, &mut self.litlen).expect("the fixed code");
        build(&[5; 30], DIST_BITS, dist_value, &mut self.dist).expect("the fixed code");
    }

    /// Reads a dynamic block's header after its three first bits; with
    /// `strict`, only complete codes pass (a single distance code, or
    /// none, aside).
    fn dynamic(&mut self, bits: &mut Bits, strict: bool) -> Result<(), Error> {
        bits.refill();
        let hlit = bits.take(5) as usize + 257;
        let hdist = bits.take(5) as usize + 1;
        let hclen = bits.take(4) as usize + 4;
        if hlit > 286 || hdist > 30 {
            return Err(Error::Bad);
        }
        let mut cl_lengths = [0u8; 19];
        for &k in &CODE_LENGTH_ORDER[..hclen] {
            bits.refill();
            cl_lengths[k] = bits.take(3) as u8;
        }
        if !build(
            &cl_lengths,
            7,
            |s| LITERAL | (s as u32) << 16,
            &mut self.code_lengths,
        )? {
            return Err(Error::Bad);
        }
        let mut lengths = [0u8; 286 + 30];
        let n = hlit + hdist;
        let mut i = 0;
        while i < n {
            bits.refill();
            let e = decode::<128>(bits, &self.code_lengths);
            if e == 0 {
                return Err(Error::Bad);
            }
            let (value, repeat) = match e >> 16 {
                s @ 0..=15 => (s as u8, 1),
                16 => match i.checked_sub(1) {
                    Some(prev) => (lengths[prev], 3 + bits.take(2) as usize),
                    None => return Err(Error::Bad),
                },
                17 => (0, 3 + bits.take(3) as usize),
                _ => (0, 11 + bits.take(7) as usize),
            };
            if i + repeat > n {
                return Err(Error::Bad);
            }
            lengths[i..i + repeat].fill(value);
            i += repeat;
        }
        if lengths[256] == 0 {
            return Err(Error::Bad);
        }
        let complete = build(
            &lengths[..hlit],
            LITLEN_BITS,
            litlen_value,
            &mut self.litlen,
        )?;
        let dist = &lengths[hlit..n];
        let dist_complete = build(dist, DIST_BITS, dist_value, &mut self.dist)?;
        if strict && !(complete && (dist_complete || dist.iter().filter(|&&l| l != 0).count() <= 1))
        {
            return Err(Error::Bad);
        }
        Ok(())
    }
}

/// An output element: a byte, or in the first part of a tail a byte or a
/// marker for the window's byte k (256 + k).
trait Symbol: Copy + Default {
    fn byte(b: u8) -> Self;
}

impl Symbol for u8 {
    #[inline(always)]
    fn byte(b: u8) -> u8 {
        b
    }
}

impl Symbol for u16 {
    #[inline(always)]
    fn byte(b: u8) -> u16 {
        b as u16
    }
}

/// How a block ended.
#[derive(PartialEq)]
enum Ended {
    /// The stream's last block.
    Last,
    /// Another block follows.
    More,
}

/// Decodes one block of `kind` (its header's first three bits read) into
/// `out` from `*at`; matches may reach back to `out[0]`.
fn block<S: Symbol>(
    bits: &mut Bits,
    codes: &mut Codes,
    kind: u32,
    out: &mut [S],
    at: &mut usize,
) -> Result<(), Error> {
    match kind {
        0 => {
            bits.skip_to_byte();
            bits.refill();
            let len = bits.take(16) as usize;
            let nlen = bits.take(16) as usize;
            if len != !nlen & 0xffff {
                return Err(Error::Bad);
            }
            if *at + len > out.len() {
                return Err(Error::Full);
            }
            for slot in &mut out[*at..*at + len] {
                bits.refill();
                *slot = S::byte(bits.take(8) as u8);
            }
            *at += len;
            return Ok(());
        }
        1 => codes.fixed(),
        2 => codes.dynamic(bits, false)?,
        _ => return Err(Error::Bad),
    }
    // The bits in locals of their own, which the compiler keeps in
    // registers through the loop.
    let (local, made) = symbols(bits.clone(), codes, out, *at);
    *bits = local;
    *at = made?;
    if bits.within() {
        Ok(())
    } else {
        Err(Error::Bad)
    }
}

/// A Huffman block's symbols from `bits` into `out` from `o`, to its end
/// code: the bits after them, and where the output ends. The bit reader is
/// a local of its own and the function is not inlined, so that the loop
/// keeps the reader in registers: each symbol's table lookup waits on the
/// last one's length.
#[inline(never)]
fn symbols<'a, S: Symbol>(
    bits: Bits<'a>,
    codes: &Codes,
    out: &mut [S],
    mut o: usize,
) -> (Bits<'a>, Result<usize, Error>) {
    let mut bits = bits;
    let (litlen, dist) = (&codes.litlen[..], &codes.dist[..]);
    let first: &[u32; LITLEN_FIRST] = litlen[..LITLEN_FIRST].try_into().expect("a first level");
    let result = loop {
        bits.refill();
        let e = decode::<LITLEN_FIRST>(&mut bits, litlen);
        if e & LITERAL != 0 {
            let Some(slot) = out.get_mut(o) else {
                break Err(Error::Full);
            };
            *slot = S::byte((e >> 16) as u8);
            o += 1;
            // A second literal often follows within the bits loaded.
            let e = first[bits.buf as usize & (LITLEN_FIRST - 1)];
            if e & LITERAL != 0 && e & 0xff <= bits.count {
                bits.consume(e & 0xff);
                let Some(slot) = out.get_mut(o) else {
                    break Err(Error::Full);
                };
                *slot = S::byte((e >> 16) as u8);
                o += 1;
            }
            continue;
        }
        if e & LENGTH != 0 {
            let len = (e >> 16) as usize + bits.take((e >> 8) & 0xf) as usize;
            bits.refill();
            let d = decode::<DIST_FIRST>(&mut bits, dist);
            if d & LENGTH == 0 {
                break Err(Error::Bad);
            }
            let distance = (d >> 16) as usize + bits.take((d >> 8) & 0xf) as usize;
            if distance > o {
                break Err(Error::Bad);
            }
            if o + len > out.len() {
                break Err(Error::Full);
            }
            let from = o - distance;
            if distance >= 8 && o + len + 8 <= out.len() {
                // Eight at a time, each eight read before they are
                // written over (a match may overlap what it makes), the
                // last eight overshooting into room written later.
                let mut k = 0;
                while k < len {
                    let eight: [S; 8] = out[from + k..from + k + 8].try_into().expect("eight");
                    out[o + k..o + k + 8].copy_from_slice(&eight);
                    k += 8;
                }
            } else {
                for k in 0..len {
                    out[o + k] = out[from + k];
                }
            }
            o += len;
            continue;
        }
        if e & END != 0 {
            break Ok(o);
        }
        break Err(Error::Bad);
    };
    (bits, result)
}

/// Blocks from `bits` into `out` from `*at`, until the stream's last one,
/// or (with `until_clean`) until a block ends with the last [`WINDOW`]
/// symbols all bytes.
fn blocks<S: Symbol + Into<u32>>(
    bits: &mut Bits,
    codes: &mut Codes,
    out: &mut [S],
    at: &mut usize,
    until_clean: bool,
) -> Result<Ended, Error> {
    loop {
        bits.refill();
        let last = bits.take(1);
        let kind = bits.take(2);
        block(bits, codes, kind, out, at)?;
        if last == 1 {
            return Ok(Ended::Last);
        }
        if until_clean
            && *at >= 2 * WINDOW
            && out[*at - WINDOW..*at].iter().all(|&s| s.into() < 256)
        {
            return Ok(Ended::More);
        }
    }
}

/// The first dynamic-Huffman block that starts at a bit in
/// `from..to` of `data`: its header's codes complete, the whole block
/// decoding within the data, and unless it is the last, the bits after it
/// the start of another block.
pub fn find_block(data: &[u8], from: usize, to: usize) -> Option<usize> {
    let mut codes = Codes::new();
    for bit in from..to.min(data.len() * 8) {
        // Dynamic: bits 0, 1 after the last-block bit.
        let byte = bit / 8;
        let word = u32::from_le_bytes([
            data[byte],
            *data.get(byte + 1).unwrap_or(&0),
            *data.get(byte + 2).unwrap_or(&0),
            *data.get(byte + 3).unwrap_or(&0),
        ]) >> (bit % 8);
        if word & 0b110 != 0b100 || (word >> 3) & 0x1f > 29 || (word >> 8) & 0x1f > 29 {
            continue;
        }
        let mut bits = Bits::at(data, bit + 3);
        if codes.dynamic(&mut bits, true).is_err() {
            continue;
        }
        if trial(&mut bits, &codes, word & 1 == 1).is_ok() {
            return Some(bit);
        }
    }
    None
}

/// Decodes the block whose codes are `codes` and whose symbols start at
/// `bits`, its output discarded (any match may reach into the unknown
/// window before), then, unless it is the `last`, reads the next block's
/// first three bits: an error unless it all decodes within the data and
/// the next block's kind is one that exists.
fn trial(bits: &mut Bits, codes: &Codes, last: bool) -> Result<(), Error> {
    let (litlen, dist) = (&codes.litlen[..], &codes.dist[..]);
    loop {
        bits.refill();
        let e = decode::<LITLEN_FIRST>(bits, litlen);
        if e & LITERAL != 0 {
            continue;
        } else if e & LENGTH != 0 {
            bits.consume((e >> 8) & 0xf);
            bits.refill();
            let d = decode::<DIST_FIRST>(bits, dist);
            if d & LENGTH == 0 {
                return Err(Error::Bad);
            }
            bits.consume((d >> 8) & 0xf);
        } else if e & END != 0 {
            break;
        } else {
            return Err(Error::Bad);
        }
    }
    bits.refill();
    let next_kind = (bits.buf >> 1) & 0b11;
    if (!last && next_kind == 3) || !bits.within() {
        return Err(Error::Bad);
    }
    Ok(())
}

/// A deflate stream's part from a block boundary to its end, decoded.
#[derive(Debug)]
pub struct Tail {
    /// The decoded bytes; where `first` holds a marker, a placeholder for
    /// a byte of the window before the tail.
    pub bytes: Vec<u8>,
    /// The first symbols as decoded, markers and bytes, while any marker
    /// was within a window's reach.
    first: Vec<u16>,
    /// The bit after the stream's last block.
    pub end_bit: usize,
}

impl Tail {
    /// Puts the bytes of `window` (the 32 KiB before the tail, or fewer at
    /// the stream's start, ending where the tail starts) in place of the
    /// markers. False where a marker reaches before the window's start.
    pub fn resolve(&mut self, window: &[u8]) -> bool {
        for (k, &s) in self.first.iter().enumerate() {
            if s >= 256 {
                let back = WINDOW - (s as usize - 256);
                let Some(at) = window.len().checked_sub(back) else {
                    return false;
                };
                self.bytes[k] = window[at];
            }
        }
        true
    }
}

/// Decodes `data` from the block that starts at bit `start` to the end of
/// the stream, into a buffer of at most `room` bytes.
pub fn inflate_tail(data: &[u8], start: usize, room: usize) -> Result<Tail, Error> {
    let mut bits = Bits::at(data, start);
    let mut codes = Codes::new();
    // The first part in 16-bit symbols after a window of markers (zeroed
    // by the system, its pages faulted in only as far as it is written).
    let mut first = vec![0u16; WINDOW + room.min(64 * WINDOW)];
    for (k, s) in first[..WINDOW].iter_mut().enumerate() {
        *s = 256 + k as u16;
    }
    let mut at = WINDOW;
    let ended = blocks(&mut bits, &mut codes, &mut first, &mut at, true)?;
    first.truncate(at);
    let first = first.split_off(WINDOW);
    let mut bytes = vec![0u8; room];
    for (b, &s) in bytes.iter_mut().zip(&first) {
        *b = s as u8;
    }
    let mut len = first.len();
    if ended == Ended::More {
        blocks(&mut bits, &mut codes, &mut bytes, &mut len, false)?;
    }
    bytes.truncate(len);
    Ok(Tail {
        bytes,
        first,
        end_bit: bits.position(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Bytes like a heightmap's noisy rows: mostly unpredictable, with
    /// repeats at every distance up to a window, so that a compressor
    /// makes matches that reach across block boundaries.
    pub(crate) fn noisy(n: usize, seed: u64) -> Vec<u8> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut out: Vec<u8> = Vec::with_capacity(n);
        while out.len() < n {
            let r = next();
            if out.len() > 64 && r % 5 == 0 {
                let distance = 1 + (r >> 8) as usize % out.len().min(WINDOW);
                let len = 3 + (r >> 40) as usize % 20;
                for _ in 0..len {
                    out.push(out[out.len() - distance]);
                }
            } else {
                out.extend_from_slice(&r.to_le_bytes()[..1 + (r >> 60) as usize % 4]);
            }
        }
        out.truncate(n);
        out
    }

    /// `bytes` deflated by libdeflate at `level` (0 stores them).
    pub(crate) fn deflate(bytes: &[u8], level: i32) -> Vec<u8> {
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::new(level).unwrap());
        let mut out = vec![0; c.deflate_compress_bound(bytes.len())];
        let n = c.deflate_compress(bytes, &mut out).unwrap();
        out.truncate(n);
        out
    }

    /// Every block `find_block` finds from the start, in order.
    fn blocks_found(stream: &[u8]) -> Vec<usize> {
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(b) = find_block(stream, from, stream.len() * 8) {
            found.push(b);
            from = b + 1;
        }
        found
    }

    #[test]
    fn tails_from_every_block_found_are_the_streams_last_bytes() {
        for (level, seed) in [(1, 1), (6, 2), (12, 3)] {
            let original = noisy(1_500_000, seed);
            let stream = deflate(&original, level);
            let starts = blocks_found(&stream);
            assert!(
                starts.len() >= 3,
                "level {level}: {} blocks found",
                starts.len()
            );
            for &start in &starts {
                let mut tail = inflate_tail(&stream, start, original.len()).unwrap();
                let first = original.len() - tail.bytes.len();
                assert!(tail.resolve(&original[first.saturating_sub(WINDOW)..first]));
                assert_eq!(
                    tail.bytes,
                    original[first..],
                    "level {level}, block at bit {start}"
                );
                assert_eq!(tail.end_bit.div_ceil(8), stream.len(), "the stream's end");
            }
        }
    }

    #[test]
    fn tails_whose_matches_reach_back_carry_markers_until_resolved() {
        let original = noisy(1_500_000, 7);
        let stream = deflate(&original, 6);
        let start = blocks_found(&stream)[1];
        let tail = inflate_tail(&stream, start, original.len()).unwrap();
        let first = original.len() - tail.bytes.len();
        let marked = tail.first.iter().filter(|&&s| s >= 256).count();
        assert!(marked > 0, "no match reached before the tail");
        // Each marker names the byte of the window it stands for.
        for (k, &s) in tail.first.iter().enumerate() {
            if s >= 256 {
                assert_eq!(
                    original[first - WINDOW + (s as usize - 256)],
                    original[first + k]
                );
            } else {
                assert_eq!(s as u8, original[first + k]);
            }
        }
        // A window too short for the markers is refused.
        let mut short = tail;
        assert!(!short.resolve(&original[first - 10..first]));
    }

    #[test]
    fn stored_and_fixed_blocks_decode_in_a_tail() {
        // Level 0 stores; small inputs make fixed-code blocks. A tail
        // that starts at a dynamic block decodes the others after it.
        let mut original = noisy(200_000, 11);
        let stored = deflate(&noisy(70_000, 12), 0);
        original.extend_from_slice(&stored); // incompressible-ish bytes
        let stream = deflate(&original, 6);
        let start = blocks_found(&stream)[0];
        let mut tail = inflate_tail(&stream, start, original.len()).unwrap();
        let first = original.len() - tail.bytes.len();
        assert!(tail.resolve(&original[first.saturating_sub(WINDOW)..first]));
        assert_eq!(tail.bytes, original[first..]);
        // A stream of stored blocks only has no dynamic block to find.
        let only_stored = deflate(&noisy(100_000, 13), 0);
        assert_eq!(find_block(&only_stored, 0, only_stored.len() * 8), None);
    }

    #[test]
    fn short_room_and_damage_are_errors_not_panics() {
        let original = noisy(200_000, 5);
        let stream = deflate(&original, 6);
        let start = blocks_found(&stream)[0];
        assert_eq!(inflate_tail(&stream, start, 1000).unwrap_err(), Error::Full);
        // Cut short, or bytes changed: an error or bytes the caller's
        // checksum refuses, never a panic.
        for cut in [1, 100, stream.len() / 2] {
            let _ = inflate_tail(&stream[..stream.len() - cut], start, original.len());
        }
        let mut damaged = stream.clone();
        for k in (start / 8 + 10..damaged.len()).step_by(997) {
            damaged[k] ^= 0x5a;
        }
        let _ = inflate_tail(&damaged, start, original.len());
        let _ = find_block(&damaged, 0, damaged.len() * 8);
        // Bits that are not a stream at all.
        let junk = noisy(50_000, 9);
        for bit in [0, 3, 8000, 100_000] {
            let _ = inflate_tail(&junk, bit, 1 << 20);
        }
    }
}
