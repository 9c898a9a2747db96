//! Every shipped scene renders to its reference image in `renders/`, checked
//! with scree's own `diff`. On the machine that made the references the
//! bytes are identical; the tolerance only absorbs float differences between
//! machines. On failure the metrics are printed and a heat map and HTML
//! report are left under `target/tmp/references/`.

use std::path::PathBuf;

use crate::support::*;

/// Per-pixel threshold (a few 8-bit steps) and share of pixels allowed over it.
const THRESHOLD: &str = "0.02";
const FAIL_PERCENT: &str = "0.05";

#[test]
fn every_scene_matches_its_reference_render() {
    let out_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("references");
    std::fs::create_dir_all(&out_dir).unwrap();
    let mut scenes: Vec<PathBuf> = std::fs::read_dir(root().join("scenes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    scenes.sort();
    assert!(scenes.len() >= 4, "the shipped scenes are found");
    let mut failures = Vec::new();
    for scene in &scenes {
        let name = scene.file_stem().unwrap().to_string_lossy().into_owned();
        let reference = root().join("renders").join(format!("{name}.png"));
        assert!(
            reference.exists(),
            "scenes/{name}.json has no reference renders/{name}.png"
        );
        let rendered = out_dir.join(format!("{name}.png"));
        let render = scree()
            .arg("render")
            .arg(scene)
            .arg("-o")
            .arg(&rendered)
            .arg("-q")
            .output()
            .unwrap();
        assert!(
            render.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&render.stderr)
        );
        let diff = scree()
            .arg("diff")
            .arg(&reference)
            .arg(&rendered)
            .args(["--threshold", THRESHOLD, "--fail-percent", FAIL_PERCENT])
            .arg("--heatmap")
            .arg(out_dir.join(format!("{name}-heatmap.png")))
            .arg("--report")
            .arg(out_dir.join(format!("{name}-report")))
            .output()
            .unwrap();
        match diff.status.code() {
            Some(0) => {}
            Some(1) => failures.push(format!(
                "{name} differs from renders/{name}.png (heat map and report in {}):\n{}",
                out_dir.display(),
                String::from_utf8_lossy(&diff.stdout)
            )),
            _ => failures.push(format!(
                "{name}: diff failed: {}",
                String::from_utf8_lossy(&diff.stderr)
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{}\nIf the change is intended, regenerate the references with scripts/update-references.sh and review them.",
        failures.join("\n")
    );
}
