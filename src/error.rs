//! The library's error type. `main` prints it once and maps it to exit code 2.

use std::path::PathBuf;

/// Everything that can go wrong between reading a scene and writing a file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scene file is malformed or holds a value out of range.
    #[error("{file}{}: {message}", location(path, *line))]
    Scene {
        /// The scene file as given by the user.
        file: String,
        /// JSON path of the offending value (`terrain.resolution[0]`), if known.
        path: String,
        /// 1-based (line, column) in the file, if known.
        line: Option<(usize, usize)>,
        /// What is wrong, and what would be right.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Encoding or decoding an image failed.
    #[error("{}: {source}", path.display())]
    Image {
        /// The file.
        path: PathBuf,
        /// The codec's error.
        source: image::ImageError,
    },
    /// A command-line value or combination is unusable.
    #[error("{0}")]
    Usage(String),
    /// The render was stopped by Ctrl-C or SIGTERM; nothing was written.
    #[error("interrupted: the render was stopped and no output file was written")]
    Interrupted,
}

fn location(path: &str, line: Option<(usize, usize)>) -> String {
    let at = if path.is_empty() {
        String::new()
    } else {
        format!(" at {path}")
    };
    match line {
        Some((l, c)) => format!("{at} (line {l}, column {c})"),
        None => at,
    }
}

/// Shorthand for results with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scene_error_names_file_path_and_line() {
        let e = Error::Scene {
            file: "a.json".into(),
            path: "image.width".into(),
            line: Some((3, 14)),
            message: "must be at least 1, got 0".into(),
        };
        assert_eq!(
            e.to_string(),
            "a.json at image.width (line 3, column 14): must be at least 1, got 0"
        );
    }
}
