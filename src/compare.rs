//! `scree compare`: one scene seen through several projections, rendered
//! into equal cells of a grid with each projection's name and parameters
//! written under its cell, and optionally a guide to the distortion drawn
//! over each ([`crate::overlay`]).

use std::sync::atomic::AtomicBool;

use image::{Rgba, RgbaImage};
use indicatif::ProgressBar;

use crate::camera::{Camera, Projection};
use crate::error::Result;
use crate::overlay::{self, Overlay};
use crate::render;
use crate::scene::Scene;
use crate::text;
use crate::world::World;

/// Height of the label strip under each cell, pixels.
pub const LABEL_HEIGHT: u32 = 24;
/// Gap between cells and around the grid, pixels.
pub const GAP: u32 = 8;
/// Grid background (also behind transparent background pixels).
const BACKGROUND: [u8; 4] = [32, 32, 36, 255];

/// The layout of a comparison grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Cells per row.
    pub columns: u32,
    /// Rows of cells.
    pub rows: u32,
    /// Cell image width, pixels.
    pub cell_width: u32,
    /// Cell image height, pixels (the scene's aspect ratio).
    pub cell_height: u32,
}

impl Layout {
    /// A near-square grid of `n` cells `cell_width` wide with the scene's aspect.
    pub fn new(n: usize, cell_width: u32, scene: &Scene) -> Layout {
        let columns = ((n as f64).sqrt().ceil() as u32).max(1);
        let rows = (n as u32).div_ceil(columns);
        let aspect = scene.image.width as f64 / scene.image.height as f64;
        Layout {
            columns,
            rows,
            cell_width,
            cell_height: ((cell_width as f64 / aspect).round() as u32).max(1),
        }
    }

    /// Size of the whole grid image.
    pub fn size(&self) -> (u32, u32) {
        (
            GAP + self.columns * (self.cell_width + GAP),
            GAP + self.rows * (self.cell_height + LABEL_HEIGHT + GAP),
        )
    }

    /// Top-left corner of cell `k`.
    pub fn origin(&self, k: usize) -> (u32, u32) {
        let (c, r) = (k as u32 % self.columns, k as u32 / self.columns);
        (
            GAP + c * (self.cell_width + GAP),
            GAP + r * (self.cell_height + LABEL_HEIGHT + GAP),
        )
    }

    /// Tiles rendered for the whole grid (for one progress bar).
    pub fn tiles(&self, n: usize) -> u64 {
        n as u64 * render::tile_count(self.cell_width, self.cell_height)
    }
}

/// Renders `world` through each projection from the scene camera's position
/// and look-at, and lays the results out as labelled cells.
pub fn compare(
    scene: &Scene,
    world: &World,
    projections: &[Projection],
    layout: Layout,
    overlay: Option<Overlay>,
    progress: &ProgressBar,
    cancel: &AtomicBool,
) -> Result<RgbaImage> {
    let (w, h) = layout.size();
    let mut grid = RgbaImage::from_pixel(w, h, Rgba(BACKGROUND));
    for (k, projection) in projections.iter().enumerate() {
        let c = &scene.camera;
        let camera = Camera::new(
            c.position,
            c.look_at,
            c.up,
            *projection,
            layout.cell_width,
            layout.cell_height,
        );
        let whole = render::Rect {
            x0: 0,
            y0: 0,
            x1: camera.width,
            y1: camera.height,
        };
        let curve = (scene.image.exposure_scale, scene.image.tonemap);
        let (frame, _) = render::render_region(scene, world, &camera, whole, progress, cancel)?;
        let cell = frame.to_srgb8(curve.0, curve.1).to_rgba8();
        let (x0, y0) = layout.origin(k);
        for (x, y, p) in cell.enumerate_pixels() {
            grid.put_pixel(x0 + x, y0 + y, over_background(*p));
        }
        if let Some(o) = overlay {
            overlay::draw(&mut grid, (x0, y0), &camera, o);
        }
        draw_label(
            &mut grid,
            &projection.label(),
            x0,
            y0 + layout.cell_height,
            layout.cell_width,
        );
    }
    Ok(grid)
}

/// `p` composited over the grid background.
fn over_background(p: Rgba<u8>) -> Rgba<u8> {
    let a = p[3] as u32;
    let mix = |c: u8, b: u8| ((c as u32 * a + b as u32 * (255 - a) + 127) / 255) as u8;
    Rgba([
        mix(p[0], BACKGROUND[0]),
        mix(p[1], BACKGROUND[1]),
        mix(p[2], BACKGROUND[2]),
        255,
    ])
}

/// Writes `text` centred in the label strip below a cell.
fn draw_label(grid: &mut RgbaImage, text: &str, x0: u32, y0: u32, width: u32) {
    let x = x0 + width.saturating_sub(text::width(text)) / 2;
    let y = y0 + (LABEL_HEIGHT - text::CHAR_HEIGHT) / 2;
    text::draw(grid, text, x, y, [230, 230, 230]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_a_near_square_grid() {
        let scene = crate::scene::default_scene(); // 16:9
        let l = Layout::new(4, 320, &scene);
        assert_eq!((l.columns, l.rows, l.cell_height), (2, 2, 180));
        assert_eq!(l.size(), (8 + 2 * 328, 8 + 2 * (180 + 24 + 8)));
        assert_eq!(l.origin(3), (8 + 328, 8 + 212));
        let l5 = Layout::new(5, 100, &scene);
        assert_eq!((l5.columns, l5.rows), (3, 2));
    }

    #[test]
    fn label_pixels_are_drawn_inside_the_strip() {
        let mut img = RgbaImage::from_pixel(200, 40, Rgba(BACKGROUND));
        draw_label(&mut img, "fisheye 180°", 0, 10, 200);
        let lit: Vec<(u32, u32)> = img
            .enumerate_pixels()
            .filter(|(_, _, p)| p[0] > 200)
            .map(|(x, y, _)| (x, y))
            .collect();
        assert!(lit.len() > 50, "text drawn: {}", lit.len());
        assert!(lit
            .iter()
            .all(|&(_, y)| (10..10 + LABEL_HEIGHT).contains(&y)));
    }

    #[test]
    fn transparent_pixels_show_the_background() {
        assert_eq!(over_background(Rgba([255, 0, 0, 0])), Rgba(BACKGROUND));
        assert_eq!(
            over_background(Rgba([255, 0, 0, 255])),
            Rgba([255, 0, 0, 255])
        );
    }
}
