//! Writing images: encoded into a temporary file beside the target and
//! renamed into place, so a failed or interrupted write leaves no partial file.

use std::io::Write;
use std::path::{Path, PathBuf};

use image::{DynamicImage, ImageFormat};
use tempfile::NamedTempFile;

use crate::error::{Error, Result};

/// The folder a file will be written into ("." for a bare file name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The kind of file a render writes, chosen by the output's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// 8-bit sRGB PNG, tone mapped.
    Png,
    /// OpenEXR with linear float radiance (exposure applied, no tone map).
    Exr,
}

/// The format named by `path`'s extension (`.png` or `.exr`).
pub fn format_of(path: &Path) -> Result<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("png") => Ok(Format::Png),
        Some("exr") => Ok(Format::Exr),
        _ => Err(Error::Usage(format!(
            "{}: the output must be a .png (8-bit sRGB) or .exr (linear float) file",
            path.display()
        ))),
    }
}

/// Checks, before any work, that `path` can be written: its folder exists
/// and accepts a new file, and its extension names a format.
pub fn check_writable(path: &Path) -> Result<()> {
    format_of(path)?;
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

/// Atomically puts `bytes` at `path`: written to a temporary file in the
/// same folder, synced, made world-readable and renamed into place.
pub fn write_bytes(bytes: &[u8], path: &Path) -> Result<()> {
    let dir = folder_of(path);
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut tmp = NamedTempFile::new_in(&dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    // Temporary files are private (0600); our outputs are not.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o644)).map_err(io)?;
    }
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
