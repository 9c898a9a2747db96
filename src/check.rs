//! Checking the values of a scene file: each domain's file type is checked
//! beside it (`camera::file`, `terrain::file`, `shade::file`, `rock::file`,
//! `population`, `animation`) with these helpers, which name the JSON path
//! of a value that is out of range.

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
