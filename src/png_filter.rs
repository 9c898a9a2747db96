//! The PNG row filters' predictors (PNG specification, section 9): what
//! each filter type predicts a byte to be from its neighbours, shared by
//! the decoder of heightmaps (`terrain::png_rows`, which adds the
//! prediction back) and the encoder of renders (`output::png_stream`,
//! which subtracts it).

// Filter types, by their byte before each row.
/// None: the bytes as they are.
pub const NONE: u8 = 0;
/// Sub: less the byte a pixel to the left.
pub const SUB: u8 = 1;
/// Up: less the byte above.
pub const UP: u8 = 2;
/// Average: less the mean of left and above, rounded down.
pub const AVG: u8 = 3;
/// Paeth: less [`paeth`] of left, above and upper left.
pub const PAETH: u8 = 4;

/// The Paeth predictor of x from its left (`a`), upper (`b`) and upper
/// left (`c`) neighbours: whichever is nearest p = a + b − c, in that
/// order on ties. Written as selects, which the compiler vectorises.
#[inline(always)]
pub fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let (a16, b16, c16) = (a as i16, b as i16, c as i16);
    let near_a = (b16 - c16).abs();
    let near_b = (a16 - c16).abs();
    let near_c = (a16 + b16 - 2 * c16).abs();
    let b_or_c = if near_b <= near_c { b } else { c };
    if near_a <= near_b && near_a <= near_c {
        a
    } else {
        b_or_c
    }
}

/// What filter `kind` predicts a byte to be from its left (`a`), upper
/// (`b`) and upper left (`c`) neighbours (0 where there is none); 0 for
/// None. Inlined, so that a constant `kind` leaves only its own formula.
#[inline(always)]
pub fn predict(kind: u8, a: u8, b: u8, c: u8) -> u8 {
    match kind {
        SUB => a,
        UP => b,
        AVG => ((a as u16 + b as u16) / 2) as u8,
        PAETH => paeth(a, b, c),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paeth_picks_the_nearest_in_order() {
        assert_eq!(paeth(10, 20, 10), 20); // p = 20: above
        assert_eq!(paeth(20, 10, 10), 20); // p = 20: left
        assert_eq!(paeth(10, 10, 10), 10);
        assert_eq!(paeth(0, 255, 128), 128); // p = 127: upper left
        assert_eq!(paeth(100, 50, 75), 75); // p = 75: upper left
        assert_eq!(paeth(5, 9, 7), 7); // p = 7: upper left exactly
        assert_eq!(paeth(0, 30, 20), 0); // p = 10: left and upper left tie, left wins
        assert_eq!(paeth(0, 30, 10), 30); // p = 20: above and upper left tie, above wins
    }

    #[test]
    fn paeth_picks_the_nearest_neighbour_a_then_b_then_c_on_ties() {
        // p = a + b − c.
        assert_eq!(paeth(10, 20, 10), 20); // p = 20: b exactly
        assert_eq!(paeth(20, 10, 10), 20); // p = 20: a exactly
        assert_eq!(paeth(10, 10, 10), 10);
        assert_eq!(paeth(5, 9, 7), 7); // p = 7: c exactly
        assert_eq!(paeth(0, 4, 2), 2); // p = 2: pa = 2, pb = 2, pc = 0
        assert_eq!(paeth(6, 4, 5), 5); // p = 5: pa = 1, pb = 1, pc = 0
        assert_eq!(paeth(2, 5, 4), 2); // p = 3: pa = 1, pb = 2, pc = 1 → a
        assert_eq!(paeth(4, 1, 3), 1); // p = 2: pa = 2, pb = 1, pc = 1 → b
        assert_eq!(paeth(255, 255, 0), 255); // p = 510
        assert_eq!(paeth(0, 255, 255), 0);
    }
}
