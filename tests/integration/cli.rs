//! The render and check commands, end to end.

use crate::support::*;

#[test]
fn default_scene_renders_to_png_with_overridden_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[
            "render",
            "-o",
            "out.png",
            "--width",
            "96",
            "--spp",
            "1",
            "--threads",
            "1",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = image::open(dir.path().join("out.png")).unwrap();
    // --width alone keeps the scene's 16:9 aspect: 96 × 54.
    assert_eq!((img.width(), img.height()), (96, 54));
    let summary = String::from_utf8_lossy(&out.stdout);
    for word in [
        "triangles",
        "acceleration build",
        "rays",
        "Mrays/s on 1 thread |",
        "output written in",
    ] {
        assert!(summary.contains(word), "summary lacks {word}: {summary}");
    }
}

#[test]
fn output_is_byte_identical_across_thread_counts_and_runs() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let scene = scene.to_str().unwrap();
    let mut outputs = Vec::new();
    for (name, threads) in [("a.png", "1"), ("b.png", "2"), ("c.png", "2")] {
        let out = run_in(
            dir.path(),
            &["render", scene, "-o", name, "--threads", threads, "-q"],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push(std::fs::read(dir.path().join(name)).unwrap());
    }
    assert_eq!(outputs[0], outputs[1], "1 thread vs 2 threads");
    assert_eq!(outputs[1], outputs[2], "two runs in a row");
}

#[test]
fn seed_override_changes_the_picture() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let scene = scene.to_str().unwrap();
    run_in(dir.path(), &["render", scene, "-o", "a.png", "-q"]);
    run_in(
        dir.path(),
        &["render", scene, "-o", "b.png", "-q", "--seed", "4"],
    );
    let a = std::fs::read(dir.path().join("a.png")).unwrap();
    let b = std::fs::read(dir.path().join("b.png")).unwrap();
    assert_ne!(a, b);
}

#[test]
fn quiet_prints_nothing() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let out = run_in(
        dir.path(),
        &["render", scene.to_str().unwrap(), "-o", "a.png", "-q"],
    );
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
}

#[test]
fn default_output_name_is_the_scene_name() {
    let (dir, scene) = scene_dir("valley.json", SMALL_SCENE);
    let out = run_in(dir.path(), &["render", scene.to_str().unwrap(), "-q"]);
    assert!(out.status.success());
    assert!(dir.path().join("valley.png").exists());
}

#[test]
fn check_accepts_every_shipped_scene() {
    let mut n = 0;
    for entry in std::fs::read_dir(root().join("scenes")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let out = scree().arg("check").arg(&path).output().unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let summary = String::from_utf8_lossy(&out.stdout);
            assert!(summary.contains(": ok"));
            if path.ends_with("canyon-bounce.json") {
                assert!(
                    summary.contains("64 spp (adaptive, threshold 0.1), path-traced, 2 bounces"),
                    "{summary}"
                );
            } else if path.ends_with("rocky-valley.json") {
                assert!(summary.contains("4 spp, direct light"), "{summary}");
            }
            n += 1;
        }
    }
    assert!(n >= 2);
}

#[test]
fn a_closed_standard_output_ends_the_report_quietly() {
    // The reader is gone before scree starts, so its first line meets a
    // broken pipe for certain (as `scree check … | head -0` may).
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = scree()
        .arg("check")
        .arg(root().join("scenes/rocky-valley.json"))
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn built_in_default_is_the_shipped_rocky_valley() {
    let shipped = std::fs::read_to_string(root().join("scenes/rocky-valley.json")).unwrap();
    assert_eq!(shipped, scree::scene::DEFAULT_SCENE);
}

#[cfg(unix)]
#[test]
fn ctrl_c_leaves_no_output_and_no_temporary_file() {
    interrupted_render_leaves_nothing("-INT");
}
