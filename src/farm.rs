//! Splitting a frame for a render farm and putting it back together:
//! regions from the command line, balanced tiles, and the merge of region
//! renders, checked against the metadata each part carries.

use std::path::PathBuf;

use image::DynamicImage;

use crate::error::{Error, Result};
use crate::output::Metadata;
use crate::render::Rect;

/// The whole image as a rectangle.
pub fn full(width: u32, height: u32) -> Rect {
    Rect {
        x0: 0,
        y0: 0,
        x1: width,
        y1: height,
    }
}

/// Parses `x0,y0,x1,y1` (pixels, end exclusive) inside a `width` × `height` image.
pub fn parse_region(text: &str, width: u32, height: u32) -> Result<Rect> {
    let bad = |why: String| Error::Usage(format!("--region {text}: {why}"));
    let v: Vec<u32> = text
        .split(',')
        .map(|p| p.trim().parse::<u32>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| bad("expected four whole numbers x0,y0,x1,y1".into()))?;
    let [x0, y0, x1, y1] = v[..] else {
        return Err(bad("expected four whole numbers x0,y0,x1,y1".into()));
    };
    if x0 >= x1 || y0 >= y1 {
        return Err(bad(
            "the region is empty (x0 < x1 and y0 < y1 are needed)".into()
        ));
    }
    if x1 > width || y1 > height {
        return Err(bad(format!("reaches outside the {width}×{height} image")));
    }
    Ok(Rect { x0, y0, x1, y1 })
}

/// Parses `fx0,fy0,fx1,fy1` (fractions of the width and height, 0–1) into
/// the pixels they cover: each edge at round(f · size).
pub fn parse_crop(text: &str, width: u32, height: u32) -> Result<Rect> {
    let bad = |why: &str| Error::Usage(format!("--crop {text}: {why}"));
    let v: Vec<f64> = text
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| bad("expected four fractions fx0,fy0,fx1,fy1"))?;
    let [a, b, c, d] = v[..] else {
        return Err(bad("expected four fractions fx0,fy0,fx1,fy1"));
    };
    if v.iter().any(|f| !(0.0..=1.0).contains(f)) {
        return Err(bad("fractions must be between 0 and 1"));
    }
    let px = |f: f64, size: u32| (f * size as f64).round() as u32;
    let r = Rect {
        x0: px(a, width),
        y0: px(b, height),
        x1: px(c, width),
        y1: px(d, height),
    };
    if r.x0 >= r.x1 || r.y0 >= r.y1 {
        return Err(bad("the crop covers no whole pixel"));
    }
    Ok(r)
}

/// Tile `k` (0-based) of `n`: horizontal bands whose heights differ by at
/// most one row (rows k·H/n to (k+1)·H/n).
pub fn tile(k: u32, n: u32, width: u32, height: u32) -> Result<Rect> {
    if n == 0 || k >= n {
        return Err(Error::Usage(format!(
            "--tile {k} --tiles {n}: the tile must be 0 to {}",
            n.saturating_sub(1)
        )));
    }
    if n > height {
        return Err(Error::Usage(format!(
            "--tiles {n}: the image has only {height} rows"
        )));
    }
    let row = |i: u32| (i as u64 * height as u64 / n as u64) as u32;
    Ok(Rect {
        x0: 0,
        y0: row(k),
        x1: width,
        y1: row(k + 1),
    })
}

/// One part of a merge: its file, pixels and metadata.
pub struct Part {
    /// The file, for messages.
    pub path: PathBuf,
    /// Its pixels: the region alone, or the full canvas.
    pub image: DynamicImage,
    /// Its metadata.
    pub meta: Metadata,
}

/// Puts region renders back into the full image. Fails when the parts come
/// from different renders (scene, key, seed, samples or full size differ),
/// when a part lacks its region, when regions overlap, or when some pixel is
/// covered by none. The result, encoded with the parts' metadata minus the
/// region, is byte for byte the full render.
pub fn merge(parts: &[Part]) -> Result<(DynamicImage, Metadata)> {
    let first = parts
        .first()
        .ok_or_else(|| Error::Usage("scree merge: no parts given".into()))?;
    let mut meta = first.meta.clone();
    meta.region = None;
    let (w, h) = meta.full_size;
    let sixteen = is_16_bit(&first.image);
    let mut regions = Vec::new();
    for p in parts {
        let name = p.path.display();
        let m = &p.meta;
        let same = |what: &str, a: String, b: String| {
            if a == b {
                Ok(())
            } else {
                Err(Error::Usage(format!(
                    "{name} is from a different render than {}: {what} {b} vs {a}",
                    first.path.display()
                )))
            }
        };
        same("scene", meta.scene.clone(), m.scene.clone())?;
        same("seed", meta.seed.to_string(), m.seed.to_string())?;
        same("samples", meta.spp.to_string(), m.spp.to_string())?;
        same(
            "full size",
            format!("{w}x{h}"),
            format!("{}x{}", m.full_size.0, m.full_size.1),
        )?;
        same(
            "render key (scene text or options)",
            meta.key.clone(),
            m.key.clone(),
        )?;
        if is_16_bit(&p.image) != sixteen {
            return Err(Error::Usage(format!("{name} mixes 8- and 16-bit parts")));
        }
        let r = m
            .region
            .ok_or_else(|| Error::Usage(format!("{name} is a full render, not a region")))?;
        let (iw, ih) = (p.image.width(), p.image.height());
        let full_canvas = (iw, ih) == (w, h);
        if !full_canvas && (iw, ih) != (r.width(), r.height()) {
            return Err(Error::Usage(format!(
                "{name} is {iw}×{ih} but its region {:?} is {}×{}",
                r,
                r.width(),
                r.height()
            )));
        }
        for (q, other) in &regions {
            if overlap(&r, q) {
                return Err(Error::Usage(format!(
                    "{name}: its region overlaps the one of {}",
                    other
                )));
            }
        }
        regions.push((r, name.to_string()));
    }
    let covered: u64 = regions
        .iter()
        .map(|(r, _)| r.width() as u64 * r.height() as u64)
        .sum();
    if covered != w as u64 * h as u64 {
        let missing = first_uncovered(&regions, w, h);
        return Err(Error::Usage(format!(
            "the parts cover {covered} of {} pixels; pixel ({}, {}) is in no part (a tile is missing)",
            w as u64 * h as u64,
            missing.0,
            missing.1
        )));
    }
    let mut canvas = vec![[0u16; 4]; (w * h) as usize];
    for p in parts {
        let r = p.meta.region.expect("checked above");
        let full_canvas = (p.image.width(), p.image.height()) == (w, h);
        let px = p.image.to_rgba16();
        for y in r.y0..r.y1 {
            for x in r.x0..r.x1 {
                let (sx, sy) = if full_canvas {
                    (x, y)
                } else {
                    (x - r.x0, y - r.y0)
                };
                canvas[(y * w + x) as usize] = px.get_pixel(sx, sy).0;
            }
        }
    }
    let image = if sixteen {
        crate::render::framebuffer::rgb_or_rgba16(w, h, &canvas)
    } else {
        // to_rgba16 widened 8-bit values by ×257; narrow them back exactly.
        let eight: Vec<[u8; 4]> = canvas.iter().map(|p| p.map(|v| (v / 257) as u8)).collect();
        crate::render::framebuffer::rgb_or_rgba8(w, h, &eight)
    };
    Ok((image, meta))
}

fn is_16_bit(img: &DynamicImage) -> bool {
    matches!(
        img,
        DynamicImage::ImageRgb16(_)
            | DynamicImage::ImageRgba16(_)
            | DynamicImage::ImageLuma16(_)
            | DynamicImage::ImageLumaA16(_)
    )
}

fn overlap(a: &Rect, b: &Rect) -> bool {
    a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

fn first_uncovered(regions: &[(Rect, String)], w: u32, h: u32) -> (u32, u32) {
    for y in 0..h {
        for x in 0..w {
            if !regions
                .iter()
                .any(|(r, _)| x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1)
            {
                return (x, y);
            }
        }
    }
    (0, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_and_crops_parse_and_are_checked() {
        assert_eq!(
            parse_region("1,2,30,20", 64, 32).unwrap(),
            Rect {
                x0: 1,
                y0: 2,
                x1: 30,
                y1: 20
            }
        );
        assert!(parse_region("1,2,30", 64, 32).is_err());
        assert!(parse_region("5,2,5,20", 64, 32).is_err());
        assert!(parse_region("0,0,65,10", 64, 32).is_err());
        assert_eq!(
            parse_crop("0,0.5,0.25,1", 64, 32).unwrap(),
            Rect {
                x0: 0,
                y0: 16,
                x1: 16,
                y1: 32
            }
        );
        assert!(parse_crop("0,0,1.5,1", 64, 32).is_err());
    }

    #[test]
    fn tiles_are_balanced_and_cover_the_image() {
        for (n, h) in [(1, 10), (3, 10), (4, 1080), (7, 45)] {
            let tiles: Vec<Rect> = (0..n).map(|k| tile(k, n, 64, h).unwrap()).collect();
            assert_eq!(tiles[0].y0, 0);
            assert_eq!(tiles[n as usize - 1].y1, h);
            for w in tiles.windows(2) {
                assert_eq!(w[0].y1, w[1].y0, "contiguous");
            }
            let heights: Vec<u32> = tiles.iter().map(Rect::height).collect();
            let (lo, hi) = (heights.iter().min().unwrap(), heights.iter().max().unwrap());
            assert!(hi - lo <= 1, "balanced: {heights:?}");
        }
        assert!(tile(4, 4, 64, 32).is_err());
        assert!(tile(0, 50, 64, 32).is_err());
    }
}
