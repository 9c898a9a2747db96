//! Image textures: loading PNGs and sampling them by (u, v), plus the
//! procedural cobblestone generator.
//!
//! Coordinates: u ∈ [0, 1) runs left to right and wraps around; v ∈ [0, 1]
//! runs from the top row (v = 0) to the bottom row (v = 1) and is clamped.
//! Texel (i, j) covers [j/W, (j+1)/W) × [i/H, (i+1)/H); its centre is at
//! ((j + ½)/W, (i + ½)/H).

pub mod cobblestone;
pub mod ground;

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use glam::Vec3;
use serde::Deserialize;

use crate::check::{Check, Files, Invalid};
use crate::error::{Error, Result};

/// Texel lookup.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Filter {
    /// The texel whose cell contains (u, v).
    Nearest,
    /// Bilinear blend of the four texels around (u, v).
    #[default]
    Bilinear,
}

/// An RGB texture with values in [0, 1] (8-bit /255, 16-bit /65535), as stored
/// in the file: no gamma decoding, since displacement maps are data.
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    /// Texels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// Row-major RGB texels.
    pub texels: Vec<Vec3>,
    /// The file it was read from, if any (for exports that name it).
    pub source: Option<std::path::PathBuf>,
}

/// Largest image file scree reads as a texture or heightmap, bytes.
pub const MAX_IMAGE_FILE: u64 = 1 << 30;

/// Reads an image file after checking that it is a regular file of at most
/// [`MAX_IMAGE_FILE`] bytes (so `/dev/zero` or a pipe cannot hang a render).
pub fn read_image_file(path: &Path) -> std::result::Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    open_image_file(path)?
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(bytes)
}

/// Opens an image file for reading after the checks of [`read_image_file`].
pub fn open_image_file(path: &Path) -> std::result::Result<std::fs::File, String> {
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if meta.len() > MAX_IMAGE_FILE {
        return Err(format!(
            "{} is {} bytes, over the {} byte limit",
            path.display(),
            meta.len(),
            MAX_IMAGE_FILE
        ));
    }
    std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Rec. 709 luminance weights, for grayscale lookups of RGB textures.
pub const LUMA: Vec3 = Vec3::new(0.2126, 0.7152, 0.0722);

impl Texture {
    /// Reads any image the `image` crate decodes (8- or 16-bit PNG, …).
    pub fn load(path: &Path) -> Result<Texture> {
        let bytes = read_image_file(path).map_err(Error::Usage)?;
        let img = image::load_from_memory(&bytes).map_err(|source| Error::Image {
            path: path.to_path_buf(),
            source,
        })?;
        let rgb = img.to_rgb32f();
        Ok(Texture {
            width: rgb.width() as usize,
            height: rgb.height() as usize,
            texels: rgb.pixels().map(|p| Vec3::from_array(p.0)).collect(),
            source: Some(path.to_path_buf()),
        })
    }

    /// Reads a colour image as [`Texture::load`] does and decodes its
    /// values from sRGB to linear (an OBJ material's `map_Kd`, painted or
    /// photographed as every image viewer shows it).
    pub fn load_srgb(path: &Path) -> Result<Texture> {
        let mut t = Texture::load(path)?;
        let linear = |c: f32| {
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        for texel in &mut t.texels {
            *texel = Vec3::new(linear(texel.x), linear(texel.y), linear(texel.z));
        }
        Ok(t)
    }

    /// Reads an opacity image (an OBJ material's `map_d`): its alpha
    /// channel where it has one, else its first channel (a grey mask), in
    /// all three channels.
    pub fn load_alpha(path: &Path) -> Result<Texture> {
        let bytes = read_image_file(path).map_err(Error::Usage)?;
        let img = image::load_from_memory(&bytes).map_err(|source| Error::Image {
            path: path.to_path_buf(),
            source,
        })?;
        let alpha = img.color().has_alpha();
        let rgba = img.to_rgba32f();
        Ok(Texture {
            width: rgba.width() as usize,
            height: rgba.height() as usize,
            texels: rgba
                .pixels()
                .map(|p| Vec3::splat(if alpha { p.0[3] } else { p.0[0] }))
                .collect(),
            source: Some(path.to_path_buf()),
        })
    }

    /// The texel at row `i`, column `j` (j wraps, i clamps).
    #[inline]
    fn texel(&self, i: isize, j: isize) -> Vec3 {
        let i = i.clamp(0, self.height as isize - 1) as usize;
        let j = j.rem_euclid(self.width as isize) as usize;
        self.texels[i * self.width + j]
    }

    /// The colour at (u, v), bilinear, the texture repeating in both
    /// directions (a tileable image laid over ground).
    #[inline]
    pub fn sample_tiled(&self, u: f32, v: f32) -> Vec3 {
        let (w, h) = (self.width as isize, self.height as isize);
        let fx = u.rem_euclid(1.0) * self.width as f32 - 0.5;
        let fy = v.rem_euclid(1.0) * self.height as f32 - 0.5;
        let (j, i) = (fx.floor(), fy.floor());
        let (tx, ty) = (fx - j, fy - i);
        let at = |i: isize, j: isize| self.texels[(i.rem_euclid(h) * w + j.rem_euclid(w)) as usize];
        let (i, j) = (i as isize, j as isize);
        let top = at(i, j).lerp(at(i, j + 1), tx);
        let bottom = at(i + 1, j).lerp(at(i + 1, j + 1), tx);
        top.lerp(bottom, ty)
    }

    /// The colour at (u, v).
    #[inline]
    pub fn sample(&self, u: f32, v: f32, filter: Filter) -> Vec3 {
        let x = u * self.width as f32;
        let y = v * self.height as f32;
        match filter {
            Filter::Nearest => self.texel(y.floor() as isize, x.floor() as isize),
            Filter::Bilinear => {
                // Texel centres sit at half-integers.
                let (fx, fy) = (x - 0.5, y - 0.5);
                let (j, i) = (fx.floor(), fy.floor());
                let (tx, ty) = (fx - j, fy - i);
                let (i, j) = (i as isize, j as isize);
                let top = self.texel(i, j).lerp(self.texel(i, j + 1), tx);
                let bottom = self.texel(i + 1, j).lerp(self.texel(i + 1, j + 1), tx);
                top.lerp(bottom, ty)
            }
        }
    }

    /// The luminance at (u, v).
    #[inline]
    pub fn sample_gray(&self, u: f32, v: f32, filter: Filter) -> f32 {
        self.sample(u, v, filter).dot(LUMA)
    }
}

/// Texture coordinates of unit object-space direction (a sphere's texture map) `d`: u = longitude/2π
/// in [0, 1), v = polar angle/π (0 at the north pole, +y).
#[inline]
pub fn uv_of(d: Vec3) -> (f32, f32) {
    let u = d.x.atan2(d.z) / std::f32::consts::TAU;
    let u = if u < 0.0 { u + 1.0 } else { u };
    let v = d.y.clamp(-1.0, 1.0).acos() / std::f32::consts::PI;
    (u, v)
}

/// The texture at `file` (relative to the scene's folder), read once for
/// all of `files`' checks; errors name JSON path `path`.
pub fn cached(files: &Files, path: &str, file: &str) -> Check<Arc<Texture>> {
    if file.is_empty() {
        return Err(Invalid::new(path, "must name an image file"));
    }
    files.get(path, file, |full| {
        let t = Texture::load(full).map_err(|e| format!("cannot read the texture: {e}"))?;
        if t.width == 0 || t.height == 0 {
            return Err(format!("{} has no pixels", full.display()));
        }
        Ok(t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 × 2 gray texture: top row 0, 1; bottom row 2, 3 (in tenths).
    fn two_by_two() -> Texture {
        Texture {
            source: None,
            width: 2,
            height: 2,
            texels: [0.0, 0.1, 0.2, 0.3]
                .iter()
                .map(|&g| Vec3::splat(g))
                .collect(),
        }
    }

    #[test]
    fn nearest_picks_the_containing_texel() {
        let t = two_by_two();
        assert_eq!(t.sample(0.1, 0.1, Filter::Nearest), Vec3::splat(0.0));
        assert_eq!(t.sample(0.6, 0.1, Filter::Nearest), Vec3::splat(0.1));
        assert_eq!(t.sample(0.1, 0.9, Filter::Nearest), Vec3::splat(0.2));
        assert_eq!(t.sample(0.99, 0.99, Filter::Nearest), Vec3::splat(0.3));
        // u wraps: 1.1 is 0.1.
        assert_eq!(t.sample(1.1, 0.1, Filter::Nearest), Vec3::splat(0.0));
    }

    #[test]
    fn bilinear_blends_between_texel_centres() {
        let t = two_by_two();
        // At texel centres the texel itself.
        assert!((t.sample_gray(0.25, 0.25, Filter::Bilinear) - 0.0).abs() < 1e-6);
        assert!((t.sample_gray(0.75, 0.75, Filter::Bilinear) - 0.3).abs() < 1e-6);
        // Midway between the four centres: (0 + 0.1 + 0.2 + 0.3) / 4 = 0.15.
        assert!((t.sample_gray(0.5, 0.5, Filter::Bilinear) - 0.15).abs() < 1e-6);
        // Across the u seam at the top row: u = 0 is midway between column 1
        // (0.1) and column 0 (0.0) after wrapping; v = 0.25 is the top row.
        assert!((t.sample_gray(0.0, 0.25, Filter::Bilinear) - 0.05).abs() < 1e-6);
        // v clamps: above the first centre stays on the top row.
        assert!((t.sample_gray(0.25, 0.0, Filter::Bilinear) - 0.0).abs() < 1e-6);
    }
}
