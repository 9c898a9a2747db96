//! Writing images: PNG (8-bit sRGB or 16-bit linear) and EXR (linear
//! float), with the render's metadata, encoded into a temporary file beside
//! the target and renamed into place, so a failed or interrupted write
//! leaves no partial file.

use std::io::Write;
use std::path::{Path, PathBuf};

use image::{DynamicImage, ImageFormat};
use tempfile::NamedTempFile;

use crate::error::{Error, Result};
use crate::render::Rect;

/// The kind of file a render writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// 8-bit sRGB PNG after exposure and tone mapping.
    Png,
    /// 16-bit PNG of linear values (exposure applied, no tone map, clamped to 1).
    Png16,
    /// OpenEXR with linear float radiance (exposure applied, no tone map).
    Exr,
}

/// The format for `path`: `requested` if given (it must fit the
/// extension), else from the extension (`.png` → 8-bit, `.exr` → EXR).
pub fn format_for(path: &Path, requested: Option<Format>) -> Result<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let by_ext = match ext.as_deref() {
        Some("png") => Format::Png,
        Some("exr") => Format::Exr,
        _ => {
            return Err(Error::Usage(format!(
                "{}: the output must be a .png (8-bit sRGB or --format png16) or .exr (linear float) file",
                path.display()
            )))
        }
    };
    match requested {
        None => Ok(by_ext),
        Some(f) if (f == Format::Exr) == (by_ext == Format::Exr) => Ok(f),
        Some(f) => Err(Error::Usage(format!(
            "{}: --format {} does not match the file's extension",
            path.display(),
            match f {
                Format::Png => "png",
                Format::Png16 => "png16",
                Format::Exr => "exr",
            }
        ))),
    }
}

/// The format named by `path`'s extension.
pub fn format_of(path: &Path) -> Result<Format> {
    format_for(path, None)
}

/// What a render records about itself in its output file (PNG text chunks,
/// EXR attributes), so that `scree merge` can check that parts belong together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// The scene file's name.
    pub scene: String,
    /// A hash of the scene text and every option that changes pixels.
    pub key: String,
    /// The seed.
    pub seed: u64,
    /// Samples per pixel.
    pub spp: u32,
    /// Size of the full image, pixels.
    pub full_size: (u32, u32),
    /// For a region render: the pixels it holds (end exclusive).
    pub region: Option<Rect>,
}

/// Keywords of the text chunks.
pub mod keys {
    /// Program and version.
    pub const SOFTWARE: &str = "Software";
    /// Scene file name.
    pub const SCENE: &str = "scree:scene";
    /// Render key.
    pub const KEY: &str = "scree:key";
    /// Seed.
    pub const SEED: &str = "scree:seed";
    /// Samples per pixel.
    pub const SPP: &str = "scree:spp";
    /// Full image size, "W×H".
    pub const FULL_SIZE: &str = "scree:full-size";
    /// Region "x0,y0,x1,y1".
    pub const REGION: &str = "scree:region";
}

impl Metadata {
    /// The (keyword, text) pairs written into a file.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![
            (
                keys::SOFTWARE,
                format!("scree {}", env!("CARGO_PKG_VERSION")),
            ),
            (keys::SCENE, self.scene.clone()),
            (keys::KEY, self.key.clone()),
            (keys::SEED, self.seed.to_string()),
            (keys::SPP, self.spp.to_string()),
            (
                keys::FULL_SIZE,
                format!("{}x{}", self.full_size.0, self.full_size.1),
            ),
        ];
        if let Some(r) = self.region {
            v.push((keys::REGION, format!("{},{},{},{}", r.x0, r.y0, r.x1, r.y1)));
        }
        v
    }

    /// Parses the pairs back; None when a scree key is missing or malformed.
    pub fn from_pairs(pairs: &[(String, String)]) -> Option<Metadata> {
        let get = |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let (w, h) = get(keys::FULL_SIZE)?.split_once('x')?;
        let region = match get(keys::REGION) {
            Some(r) => {
                let n: Vec<u32> = r
                    .split(',')
                    .map(|p| p.parse().ok())
                    .collect::<Option<_>>()?;
                let [x0, y0, x1, y1] = n[..] else { return None };
                Some(Rect { x0, y0, x1, y1 })
            }
            None => None,
        };
        Some(Metadata {
            scene: get(keys::SCENE)?.to_string(),
            key: get(keys::KEY)?.to_string(),
            seed: get(keys::SEED)?.parse().ok()?,
            spp: get(keys::SPP)?.parse().ok()?,
            full_size: (w.parse().ok()?, h.parse().ok()?),
            region,
        })
    }
}

/// The folder a file will be written into ("." for a bare file name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Checks, before any work, that `path` can be written: its folder exists
/// and accepts a new file, and its extension names a format.
pub fn check_writable(path: &Path) -> Result<()> {
    format_of(path)?;
    check_folder(path)
}

/// Checks that `path`'s folder exists and accepts a new file.
pub fn check_folder(path: &Path) -> Result<()> {
    let dir = folder_of(path);
    if !dir.is_dir() {
        return Err(Error::Usage(format!(
            "{}: the output folder {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(Error::Usage(format!(
            "{}: is a folder, not a file",
            path.display()
        )));
    }
    NamedTempFile::new_in(&dir).map_err(|source| Error::Io {
        path: dir.clone(),
        source,
    })?;
    Ok(())
}

/// Encodes `img` as PNG and atomically puts it at `path`.
pub fn write_png(img: &DynamicImage, path: &Path) -> Result<()> {
    write_image(img, path, ImageFormat::Png)
}

/// Encodes `img` as `format` and atomically puts it at `path`.
pub fn write_image(img: &DynamicImage, path: &Path, format: ImageFormat) -> Result<()> {
    let mut buf = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut buf), format)
        .map_err(|source| Error::Image {
            path: path.to_path_buf(),
            source,
        })?;
    write_bytes(&buf, path)
}

/// Encodes an 8- or 16-bit RGB or RGBA image as PNG with `meta` in text
/// chunks, with `png::Encoder` (adaptive row filters, the crate's fast
/// compression). The same pixels and metadata always give the same bytes:
/// the merge of region renders relies on it.
pub fn encode_png(img: &DynamicImage, meta: &Metadata) -> std::result::Result<Vec<u8>, String> {
    use std::borrow::Cow;
    let big_endian = |v: &[u16]| Cow::Owned(v.iter().flat_map(|v| v.to_be_bytes()).collect());
    let (color, depth, bytes): (png::ColorType, png::BitDepth, Cow<[u8]>) = match img {
        DynamicImage::ImageRgb8(b) => (
            png::ColorType::Rgb,
            png::BitDepth::Eight,
            Cow::Borrowed(b.as_raw()),
        ),
        DynamicImage::ImageRgba8(b) => (
            png::ColorType::Rgba,
            png::BitDepth::Eight,
            Cow::Borrowed(b.as_raw()),
        ),
        DynamicImage::ImageRgb16(b) => (
            png::ColorType::Rgb,
            png::BitDepth::Sixteen,
            big_endian(b.as_raw()),
        ),
        DynamicImage::ImageRgba16(b) => (
            png::ColorType::Rgba,
            png::BitDepth::Sixteen,
            big_endian(b.as_raw()),
        ),
        other => return Err(format!("cannot write {:?} as PNG", other.color())),
    };
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, img.width(), img.height());
    encoder.set_color(color);
    encoder.set_depth(depth);
    encoder.set_compression(png::Compression::Fast);
    encoder.set_filter(png::Filter::Adaptive);
    // Latin-1 text in tEXt chunks; other text (a scene named `жар.json`)
    // in UTF-8 iTXt chunks.
    for (keyword, text) in meta.pairs() {
        let added = if text.chars().all(|c| (c as u32) < 256) {
            encoder.add_text_chunk(keyword.to_string(), text)
        } else {
            encoder.add_itxt_chunk(keyword.to_string(), text)
        };
        added.map_err(|e| e.to_string())?;
    }
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(&bytes).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// Writes `img` as PNG with `meta` at `path`, atomically.
pub fn write_png_with(img: &DynamicImage, meta: &Metadata, path: &Path) -> Result<()> {
    let bytes =
        encode_png(img, meta).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    write_bytes(&bytes, path)
}

/// Writes `frames` (all of one size) as an animated PNG (APNG) at `fps`
/// frames a second, looping, atomically: browsers and GitHub play it.
pub fn write_apng(frames: &[image::RgbaImage], fps: f64, path: &Path) -> Result<()> {
    let fail = |e: &dyn std::fmt::Display| Error::Usage(format!("{}: {e}", path.display()));
    let Some(first) = frames.first() else {
        return Err(fail(&"no frames for the animated preview"));
    };
    // RGB where every pixel is opaque (a quarter smaller); the strongest
    // compression, as a preview is written once and downloaded often.
    let opaque = frames.iter().all(|f| f.pixels().all(|p| p[3] == 255));
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, first.width(), first.height());
    encoder.set_color(if opaque {
        png::ColorType::Rgb
    } else {
        png::ColorType::Rgba
    });
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::High);
    encoder.set_filter(png::Filter::Adaptive);
    encoder
        .set_animated(frames.len() as u32, 0)
        .map_err(|e| fail(&e))?;
    // The delay in milliseconds, as a fraction of a second.
    let delay = (1000.0 / fps).round().clamp(1.0, 65535.0) as u16;
    encoder.set_frame_delay(delay, 1000).map_err(|e| fail(&e))?;
    let mut writer = encoder.write_header().map_err(|e| fail(&e))?;
    for frame in frames {
        if frame.dimensions() != first.dimensions() {
            return Err(fail(&"the preview's frames differ in size"));
        }
        let rgb: Vec<u8>;
        let data = if opaque {
            rgb = frame.pixels().flat_map(|p| [p[0], p[1], p[2]]).collect();
            &rgb[..]
        } else {
            frame.as_raw()
        };
        writer.write_image_data(data).map_err(|e| fail(&e))?;
    }
    writer.finish().map_err(|e| fail(&e))?;
    write_bytes(&out, path)
}

/// Writes linear RGBA floats (row-major, `width` × `height`) as EXR with
/// `meta` as text attributes, atomically.
pub fn write_exr(
    width: u32,
    height: u32,
    rgba: &[[f32; 4]],
    meta: &Metadata,
    path: &Path,
) -> Result<()> {
    use exr::prelude::*;
    let w = width as usize;
    let channels = SpecificChannels::rgba(|p: Vec2<usize>| {
        let [r, g, b, a] = rgba[p.y() * w + p.x()];
        (r, g, b, a)
    });
    let mut image = Image::from_channels((width as usize, height as usize), channels);
    for (k, v) in meta.pairs() {
        // EXR text is bytes; UTF-8 keeps any scene file's name (the
        // crate's checked constructor panics on characters past U+00FF).
        let v = Text::from_slice_unchecked(v.as_bytes());
        image
            .attributes
            .other
            .insert(Text::from(k), AttributeValue::Text(v));
    }
    let mut buf = std::io::Cursor::new(Vec::new());
    image.write().to_buffered(&mut buf).map_err(|e| {
        crate::error::Error::Usage(format!("{}: cannot encode EXR: {e}", path.display()))
    })?;
    write_bytes(buf.get_ref(), path)
}

/// Atomically puts `bytes` at `path`: written to a temporary file in the
/// same folder, made world-readable and renamed into place, so that no
/// reader (and no interrupted render) ever sees a partial image.
///
/// Not synced to the disk first: an `fsync` cost every frame 10 ms on an
/// ext4 disk (2-5% of a workload frame) for durability across a crash of
/// the whole system, which image tools do not promise (POV-Ray, Blender
/// and the `image` crate write without it); the system writes the file
/// back as it does any other.
pub fn write_bytes(bytes: &[u8], path: &Path) -> Result<()> {
    let dir = folder_of(path);
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = NamedTempFile::new_in(&dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    // Temporary files are private (0600); our outputs are not.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644)).map_err(io)?;
    }
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Reads a PNG's pixels (as RGBA 16-bit or 8-bit image) and its text chunks.
pub fn read_png(path: &Path) -> Result<(DynamicImage, Vec<(String, String)>)> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes));
    let reader = decoder
        .read_info()
        .map_err(|e| Error::Usage(format!("{}: not a readable PNG: {e}", path.display())))?;
    let info = reader.info();
    let latin1 = info
        .uncompressed_latin1_text
        .iter()
        .map(|t| (t.keyword.clone(), t.text.clone()));
    // International (UTF-8) chunks: what a name outside ISO 8859-1 needs.
    let utf8 = info
        .utf8_text
        .iter()
        .filter_map(|t| Some((t.keyword.clone(), t.get_text().ok()?)));
    let texts = latin1.chain(utf8).collect();
    let img = image::load_from_memory_with_format(&bytes, ImageFormat::Png).map_err(|source| {
        Error::Image {
            path: path.to_path_buf(),
            source,
        }
    })?;
    Ok((img, texts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(region: Option<Rect>) -> Metadata {
        Metadata {
            scene: "a.json".into(),
            key: "00ff".into(),
            seed: 7,
            spp: 4,
            full_size: (64, 32),
            region,
        }
    }

    #[test]
    fn metadata_round_trips_through_png_text_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.png");
        let m = meta(Some(Rect {
            x0: 1,
            y0: 2,
            x1: 30,
            y1: 20,
        }));
        let img = DynamicImage::ImageRgb8(image::RgbImage::new(29, 18));
        write_png_with(&img, &m, &path).unwrap();
        let (back, texts) = read_png(&path).unwrap();
        assert_eq!((back.width(), back.height()), (29, 18));
        assert_eq!(Metadata::from_pairs(&texts), Some(m));
        assert!(texts
            .iter()
            .any(|(k, v)| k == "Software" && v.starts_with("scree ")));
    }

    #[test]
    fn encoding_is_deterministic() {
        let img = DynamicImage::ImageRgba8(image::RgbaImage::from_fn(20, 10, |x, y| {
            image::Rgba([x as u8, y as u8, 9, 255])
        }));
        assert_eq!(
            encode_png(&img, &meta(None)).unwrap(),
            encode_png(&img, &meta(None)).unwrap()
        );
    }

    #[test]
    fn format_follows_the_extension_unless_asked() {
        assert_eq!(format_for(Path::new("a.png"), None).unwrap(), Format::Png);
        assert_eq!(
            format_for(Path::new("a.PNG"), Some(Format::Png16)).unwrap(),
            Format::Png16
        );
        assert_eq!(format_for(Path::new("a.exr"), None).unwrap(), Format::Exr);
        assert!(format_for(Path::new("a.png"), Some(Format::Exr)).is_err());
        assert!(format_for(Path::new("a.jpg"), None).is_err());
    }
}
