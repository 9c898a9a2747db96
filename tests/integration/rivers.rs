//! Rivers and lakes through the command line: the summary counts them,
//! flat land and a sea over everything give no water and no error, and
//! the exported terrain is the carved one.

use crate::support::*;

const CAMERA: &str = r#""camera": { "position": [0, 30, -60], "look_at": [0, 0, 0] }"#;

fn render(text: &str) -> (String, Vec<u8>) {
    let (dir, scene) = scene_dir("rivers.json", text);
    let out = run_in(
        dir.path(),
        &["render", scene.to_str().unwrap(), "-o", "out.png"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let png = std::fs::read(dir.path().join("out.png")).unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned() + &stderr,
        png,
    )
}

/// A valley of hills holds lakes and rivers, and the summary says how
/// many; the same land with the sea over all of it, and a flat plain,
/// hold none and render without complaint.
#[test]
fn lakes_and_rivers_are_counted_and_flat_land_holds_none() {
    let hills = format!(
        "{{ {CAMERA}, \"image\": {{ \"width\": 64, \"height\": 36 }}, \"terrain\": {{ \"resolution\": [129, 129], \"generator\": {{ \"type\": \"hills\" }}, \"rivers\": {{ \"catchment\": 0.01 }} }} }}"
    );
    let (summary, _) = render(&hills);
    let counts: Vec<u64> = summary
        .split(", ")
        .find(|s| s.contains("river samples"))
        .unwrap_or_else(|| panic!("no river count in {summary}"))
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(counts[1] > 20, "river samples: {summary}");
    let drowned = hills.replace("} } }", "} }, \"water\": { \"level\": 100 } }");
    let (summary, _) = render(&drowned);
    assert!(!summary.contains("river samples"), "{summary}");
    let flat = format!(
        "{{ {CAMERA}, \"image\": {{ \"width\": 64, \"height\": 36 }}, \"terrain\": {{ \"resolution\": [65, 65], \"height\": 0, \"rivers\": {{}} }} }}"
    );
    let (summary, _) = render(&flat);
    assert!(!summary.contains("river samples"), "{summary}");
}

/// `scree terrain` exports the carved land: the heightmap with rivers
/// differs from the one without, and names how much water it found.
#[test]
fn the_exported_terrain_is_carved() {
    let scene = |rivers: &str| {
        format!(
            "{{ {CAMERA}, \"terrain\": {{ \"resolution\": [129, 129], \"generator\": {{ \"type\": \"hills\" }}{rivers} }} }}"
        )
    };
    let export = |text: &str| {
        let (dir, path) = scene_dir("t.json", text);
        let out = run_in(
            dir.path(),
            &["terrain", path.to_str().unwrap(), "--heightmap", "h.png"],
        );
        assert!(out.status.success(), "{out:?}");
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            std::fs::read(dir.path().join("h.png")).unwrap(),
        )
    };
    let (plain_note, plain) = export(&scene(""));
    let (note, carved) = export(&scene(", \"rivers\": {}"));
    assert!(!plain_note.contains("river samples"));
    assert!(note.contains("river samples"), "{note}");
    assert_ne!(plain, carved);
}

/// The shipped river scenes (small) are the same bytes on one thread and
/// on two.
#[test]
fn river_scenes_are_the_same_on_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["river-valley", "tennessee-rivers"] {
        let scene = root().join("scenes").join(format!("{name}.json"));
        let mut pixels = Vec::new();
        for threads in ["1", "2"] {
            let out = dir.path().join(format!("{name}-{threads}.png"));
            let run = scree()
                .arg("render")
                .arg(&scene)
                .args(["--width", "240", "--threads", threads, "-q", "-o"])
                .arg(&out)
                .output()
                .unwrap();
            assert!(run.status.success(), "{run:?}");
            pixels.push(image::open(&out).unwrap().to_rgba8().into_raw());
        }
        assert!(pixels[0] == pixels[1], "{name}");
    }
}
