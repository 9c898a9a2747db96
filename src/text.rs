//! Text on images with embedded-graphics' built-in bitmap font (labels under
//! compare cells, the heat map's scale).

use embedded_graphics::mono_font::iso_8859_1::FONT_9X15;
use embedded_graphics::mono_font::MonoTextStyle;
use embedded_graphics::pixelcolor::Rgb888;
use embedded_graphics::prelude::*;
use embedded_graphics::text::{Baseline, Text};
use image::{Rgba, RgbaImage};

/// Width of one character, pixels.
pub const CHAR_WIDTH: u32 = 9;
/// Height of one line, pixels.
pub const CHAR_HEIGHT: u32 = 15;

/// Draws `text` with its top-left corner at (x, y) in `color`; pixels that
/// fall outside the image are dropped.
pub fn draw(image: &mut RgbaImage, text: &str, x: u32, y: u32, color: [u8; 3]) {
    let style = MonoTextStyle::new(&FONT_9X15, Rgb888::new(color[0], color[1], color[2]));
    let mut canvas = Canvas { image };
    Text::with_baseline(text, Point::new(x as i32, y as i32), style, Baseline::Top)
        .draw(&mut canvas)
        .expect("drawing into an image cannot fail");
}

/// Width of `text` in pixels.
pub fn width(text: &str) -> u32 {
    text.chars().count() as u32 * CHAR_WIDTH
}

/// An `RgbaImage` as an embedded-graphics draw target.
struct Canvas<'a> {
    image: &'a mut RgbaImage,
}

impl OriginDimensions for Canvas<'_> {
    fn size(&self) -> Size {
        Size::new(self.image.width(), self.image.height())
    }
}

impl DrawTarget for Canvas<'_> {
    type Color = Rgb888;
    type Error = std::convert::Infallible;

    fn draw_iter<I: IntoIterator<Item = Pixel<Rgb888>>>(
        &mut self,
        pixels: I,
    ) -> std::result::Result<(), Self::Error> {
        for Pixel(p, c) in pixels {
            if p.x >= 0
                && p.y >= 0
                && (p.x as u32) < self.image.width()
                && (p.y as u32) < self.image.height()
            {
                self.image
                    .put_pixel(p.x as u32, p.y as u32, Rgba([c.r(), c.g(), c.b(), 255]));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_inside_the_text_box_only() {
        let mut img = RgbaImage::new(100, 30);
        draw(&mut img, "fov 180°", 5, 7, [255, 255, 255]);
        let lit: Vec<(u32, u32)> = img
            .enumerate_pixels()
            .filter(|(_, _, p)| p[0] == 255)
            .map(|(x, y, _)| (x, y))
            .collect();
        assert!(lit.len() > 40);
        let w = width("fov 180°");
        assert_eq!(w, 72);
        assert!(lit
            .iter()
            .all(|&(x, y)| (5..5 + w).contains(&x) && (7..7 + CHAR_HEIGHT).contains(&y)));
    }
}
