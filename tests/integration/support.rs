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

/// Runs scree with `args` in `dir` and asserts that it succeeds, showing
/// its stderr otherwise.
pub fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let out = run_in(dir, args);
    assert!(
        out.status.success(),
        "scree {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
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

/// Starts a long render of the default scene in a fresh folder, sends it
/// `signal` after 1.5 s, and checks that it exits 2 leaving nothing behind.
#[cfg(unix)]
pub fn interrupted_render_leaves_nothing(signal: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    // Big enough to still be tracing when the signal comes.
    let mut child = scree()
        .current_dir(dir.path())
        .args([
            "render",
            "-o",
            "out.png",
            "--width",
            "1920",
            "--spp",
            "16",
            "--threads",
            "1",
            "-q",
        ])
        .spawn()
        .expect("scree starts");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = child.wait().expect("scree ends");
    assert_eq!(
        exit.code(),
        Some(2),
        "an interrupted render exits 2 ({signal})"
    );
    assert_eq!(
        files_in(dir.path()),
        Vec::<String>::new(),
        "no output, no temporary file ({signal})"
    );
}
