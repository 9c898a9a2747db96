//! Checking the values of a scene file: each domain's file type is checked
//! beside it (`camera::file`, `terrain::file`, `shade::file`, `rock::file`,
//! `population`, `animation`) with these helpers, which name the JSON path
//! of a value that is out of range.

use std::any::{Any, TypeId};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use glam::Vec3;

/// A value that failed validation: where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// JSON path, e.g. `terrain.resolution[0]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl Invalid {
    /// A value at `path` that is wrong for `message`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Invalid {
        Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// A checked value, or where and why it is wrong.
pub type Check<T> = std::result::Result<T, Invalid>;

/// `v` finite.
pub fn finite(path: &str, v: f64) -> Check<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Invalid::new(
            path,
            format!("must be a finite number, got {v}"),
        ))
    }
}

/// `v` in [lo, hi].
pub fn within(path: &str, v: f64, lo: f64, hi: f64) -> Check<f64> {
    finite(path, v)?;
    if v < lo || v > hi {
        return Err(Invalid::new(
            path,
            format!("must be between {lo} and {hi}, got {v}"),
        ));
    }
    Ok(v)
}

/// `v` in (lo, hi].
pub fn above(path: &str, v: f64, lo: f64, hi: f64) -> Check<f64> {
    finite(path, v)?;
    if v <= lo || v > hi {
        return Err(Invalid::new(
            path,
            format!("must be greater than {lo} and at most {hi}, got {v}"),
        ));
    }
    Ok(v)
}

/// A range [lo, hi] within [min, max]: the first value in [min, max], the
/// second in [first, max].
pub fn range_pair(path: &str, v: [f64; 2], min: f64, max: f64) -> Check<[f32; 2]> {
    let a = within(&format!("{path}[0]"), v[0], min, max)?;
    let b = within(&format!("{path}[1]"), v[1], a, max)?;
    Ok([a as f32, b as f32])
}

/// `v` in [lo, hi].
pub fn count(path: &str, v: u32, lo: u32, hi: u32) -> Check<u32> {
    if v < lo || v > hi {
        return Err(Invalid::new(
            path,
            format!("must be between {lo} and {hi}, got {v}"),
        ));
    }
    Ok(v)
}

/// A finite point or direction within ±1e7, as f32.
pub fn vec3(path: &str, v: [f64; 3]) -> Check<Vec3> {
    for (k, c) in v.iter().enumerate() {
        finite(&format!("{path}[{k}]"), *c)?;
        if c.abs() > 1e7 {
            return Err(Invalid::new(
                format!("{path}[{k}]"),
                format!("must be within ±1e7, got {c}"),
            ));
        }
    }
    Ok(Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32))
}

/// A linear RGB colour, each channel in [0, max], as f32.
pub fn color(path: &str, v: [f64; 3], max: f64) -> Check<Vec3> {
    for (k, c) in v.iter().enumerate() {
        within(&format!("{path}[{k}]"), *c, 0.0, max)?;
    }
    Ok(Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32))
}

/// The files a scene file names (heightmaps, textures, meshes), relative
/// to its folder, each read once however often the file is checked: a
/// sequence checks it again for every frame's pose. Clones share what was
/// read.
#[derive(Clone)]
pub struct Files {
    dir: PathBuf,
    read: Arc<Mutex<Vec<Loaded>>>,
}

/// A file read: its path, and its contents as their reader made them.
type Loaded = (PathBuf, TypeId, Arc<dyn Any + Send + Sync>);

impl Files {
    /// Files read relative to `dir`.
    pub fn new(dir: &Path) -> Files {
        Files {
            dir: dir.to_path_buf(),
            read: Arc::default(),
        }
    }

    /// The folder relative paths start from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `file` (relative to the folder) as `read` makes it from its full
    /// path, read the first time only; `read`'s error is the value's at
    /// JSON path `path`.
    pub fn get<T: Any + Send + Sync>(
        &self,
        path: &str,
        file: &str,
        read: impl FnOnce(&Path) -> std::result::Result<T, String>,
    ) -> Check<Arc<T>> {
        let full = self.dir.join(file);
        let kind = TypeId::of::<T>();
        let lock = || self.read.lock().unwrap_or_else(PoisonError::into_inner);
        let known = lock()
            .iter()
            .find(|(p, k, _)| *p == full && *k == kind)
            .map(|(_, _, v)| v.clone());
        if let Some(v) = known.and_then(|v| v.downcast::<T>().ok()) {
            return Ok(v);
        }
        let v = Arc::new(read(&full).map_err(|e| Invalid::new(path, e))?);
        lock().push((full, kind, v.clone()));
        Ok(v)
    }
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files").field("dir", &self.dir).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file is read once for all checks that share the cache (clones
    /// included), once again for another kind of contents, and a failed
    /// read is tried again.
    #[test]
    fn files_are_read_once() {
        let files = Files::new(Path::new("scenes"));
        let reads = std::cell::Cell::new(0);
        let read = |full: &Path| {
            reads.set(reads.get() + 1);
            Ok(full.display().to_string())
        };
        let a = files.get("x", "a.png", read).unwrap();
        let b = files.clone().get("y", "a.png", read).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!((a.as_str(), reads.get()), ("scenes/a.png", 1));
        files.get("x", "a.png", |_| Ok(7u32)).unwrap();
        files.get("x", "b.png", read).unwrap();
        assert_eq!(reads.get(), 2);
        let failed = files.get::<u8>("z", "c.png", |_| Err("no such file".into()));
        assert_eq!(failed, Err(Invalid::new("z", "no such file")));
        assert_eq!(*files.get("z", "c.png", |_| Ok(1u8)).unwrap(), 1);
    }
}
