//! Helpers: run the binary, write scenes into temporary folders.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `scree` binary built by cargo for these tests.
pub fn scree() -> Command {
    Command::new(env!("CARGO_BIN_EXE_scree"))
}

/// The project root (where `scenes/` is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs scree with `args` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    scree()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("scree runs")
}

/// A small, quick scene: 80×45 pixels, a 129² terrain.
pub const SMALL_SCENE: &str = r#"{
  "image": { "width": 80, "height": 45, "samples": 2 },
  "seed": 3,
  "camera": { "position": [0, 20, -45], "look_at": [0, 4, 0] },
  "terrain": { "size": [80, 80], "resolution": [129, 129], "height": 14,
               "generator": { "type": "fault_line", "iterations": 300 } }
}"#;

/// Writes `text` as `name` in a fresh temporary folder.
pub fn scene_dir(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write scene");
    (dir, path)
}

/// Files in `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}
