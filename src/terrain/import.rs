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

use serde::Deserialize;

use super::Heightmap;

/// Parameters of the heightmap importer.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeightmapFile {
    /// Grayscale PNG, relative to the scene file's folder. Required.
    pub path: String,
}

/// A decoded grayscale heightmap, values in [0, 1], row 0 = south (grid order).
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// Samples per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Row-major values in [0, 1].
    pub data: Vec<f64>,
}

/// Reads a grayscale PNG; colour images are refused (a heightmap has one channel).
pub fn load(path: &Path) -> Result<Imported, String> {
    let bytes = crate::texture::read_image_file(path)?;
    decode(&bytes, path)
}

/// Decodes heightmap bytes (named `path` in messages).
pub fn decode(bytes: &[u8], path: &Path) -> Result<Imported, String> {
    let img = image::load_from_memory(bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (w, h) = (img.width() as usize, img.height() as usize);
    if w < 2 || h < 2 {
        return Err(format!(
            "{} is {w}×{h}; a heightmap needs at least 2×2 samples",
            path.display()
        ));
    }
    // Rows are flipped on the way: the image's top row is the north edge,
    // our row 0 the south.
    fn flipped<P: image::Pixel>(b: &image::ImageBuffer<P, Vec<P::Subpixel>>, scale: f64) -> Vec<f64>
    where
        P::Subpixel: Into<f64>,
    {
        let (w, h) = b.dimensions();
        (0..h)
            .rev()
            .flat_map(|r| (0..w).map(move |c| b.get_pixel(c, r).channels()[0].into() / scale))
            .collect()
    }
    let data = match &img {
        image::DynamicImage::ImageLuma8(b) => flipped(b, 255.0),
        image::DynamicImage::ImageLuma16(b) => flipped(b, 65535.0),
        image::DynamicImage::ImageLumaA8(b) => flipped(b, 255.0),
        image::DynamicImage::ImageLumaA16(b) => flipped(b, 65535.0),
        other => {
            return Err(format!(
            "{} is not a grayscale image ({:?}); export the heightmap as 8- or 16-bit grayscale",
            path.display(),
            other.color()
        ))
        }
    };
    Ok(Imported {
        width: w,
        height: h,
        data,
    })
}

/// Bilinear resampling to `w` × `h` samples; corners map to corners.
pub fn resample(src: &Imported, w: usize, h: usize) -> Vec<f64> {
    if (w, h) == (src.width, src.height) {
        return src.data.clone();
    }
    let mut out = Vec::with_capacity(w * h);
    for i in 0..h {
        let fy = i as f64 * (src.height - 1) as f64 / (h - 1) as f64;
        let y0 = (fy.floor() as usize).min(src.height - 2);
        let ty = fy - y0 as f64;
        for j in 0..w {
            let fx = j as f64 * (src.width - 1) as f64 / (w - 1) as f64;
            let x0 = (fx.floor() as usize).min(src.width - 2);
            let tx = fx - x0 as f64;
            let at = |y: usize, x: usize| src.data[y * src.width + x];
            let top = at(y0, x0) + (at(y0, x0 + 1) - at(y0, x0)) * tx;
            let bottom = at(y0 + 1, x0) + (at(y0 + 1, x0 + 1) - at(y0 + 1, x0)) * tx;
            out.push(top + (bottom - top) * ty);
        }
    }
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
            data: vec![0.0, 1.0, 2.0, 3.0],
        };
        let out = resample(&src, 3, 3);
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
            &m.data[..3],
            &[0.0; 3],
            "row 0 (south) is the image's bottom row"
        );
        assert_eq!(&m.data[3..], &[1.0; 3]);
    }

    #[test]
    fn colour_images_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        image::RgbImage::new(4, 4).save(&path).unwrap();
        assert!(load(&path).unwrap_err().contains("not a grayscale image"));
    }
}
