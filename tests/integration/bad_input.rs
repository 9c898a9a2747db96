//! Bad input: one clear sentence naming the file, the JSON path and the line;
//! exit code 2; no output file; never a panic.

use crate::support::*;

/// Renders `scene_text` and checks the failure.
fn rejects(scene_text: &str, expected: &[&str]) {
    let (dir, scene) = scene_dir("bad.json", scene_text);
    let out = run_in(
        dir.path(),
        &["render", scene.to_str().unwrap(), "-o", "out.png"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code for {scene_text}: {stderr}"
    );
    assert!(stderr.contains("bad.json"), "names the file: {stderr}");
    for e in expected {
        assert!(stderr.contains(e), "expected {e:?} in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert_eq!(files_in(dir.path()), vec!["bad.json"], "no output file");
    // `check` agrees.
    let check = run_in(dir.path(), &["check", scene.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(2));
}

const CAMERA: &str = r#""camera": { "position": [0, 20, -40], "look_at": [0, 0, 0] }"#;

#[test]
fn malformed_json_gives_line_and_column() {
    rejects(
        &format!("{{\n  {CAMERA},\n  ,\n}}"),
        &["malformed JSON", "line 3, column 3"],
    );
    rejects("", &["malformed JSON", "EOF"]);
}

#[test]
fn unknown_field_gives_path_line_and_suggestion() {
    let text = format!("{{\n  {CAMERA},\n  \"image\": {{ \"widht\": 10 }}\n}}");
    rejects(
        &text,
        &["at image.widht", "line 3", "did you mean `width`?"],
    );
}

#[test]
fn unknown_generator_suggests_the_closest() {
    let text = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"fault_lines\" }} }} }}"
    );
    rejects(&text, &["terrain.generator", "did you mean `fault_line`?"]);
}

#[test]
fn wrong_type_names_the_field() {
    let text = format!("{{\n  {CAMERA},\n  \"image\": {{ \"width\": \"wide\" }}\n}}");
    rejects(&text, &["image.width", "invalid type", "line 3"]);
}

#[test]
fn out_of_range_values_name_field_and_line() {
    let zero_width = format!("{{\n  {CAMERA},\n  \"image\": {{\n    \"width\": 0\n  }}\n}}");
    rejects(
        &zero_width,
        &["at image.width (line 4, column 14)", "got 0"],
    );
    let negative = format!("{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"fault_line\", \"iterations\": -5 }} }} }}");
    rejects(&negative, &["terrain.generator", "-5"]);
    let zero_iter = format!("{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"fault_line\", \"iterations\": 0 }} }} }}");
    rejects(&zero_iter, &["terrain.generator.iterations", "got 0"]);
    let huge = format!("{{ {CAMERA}, \"sun\": {{ \"elevation\": 1e999 }} }}");
    rejects(&huge, &["number out of range"]);
    let rough = format!("{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"diamond_square\", \"roughness\": -2 }} }} }}");
    rejects(&rough, &["terrain.generator.roughness", "between 0 and 4"]);
    let size = format!("{{ {CAMERA}, \"terrain\": {{ \"size\": [100, -1] }} }}");
    rejects(&size, &["terrain.size[1]", "got -1"]);
}

#[test]
fn resolution_over_the_limit_is_refused() {
    let text = format!("{{ {CAMERA}, \"terrain\": {{ \"resolution\": [20000, 513] }} }}");
    rejects(&text, &["terrain.resolution[0]", "16385"]);
}

#[test]
fn memory_is_estimated_and_refused_before_allocating() {
    // The largest terrain (10 GiB) with the largest image (6 GiB).
    let text = format!(
        "{{ {CAMERA}, \"image\": {{ \"width\": 16384, \"height\": 16384 }}, \"terrain\": {{ \"resolution\": [16385, 16385] }} }}"
    );
    rejects(&text, &["GiB", "limit"]);
}

#[test]
fn degenerate_camera_is_refused() {
    let same = r#"{ "camera": { "position": [1, 2, 3], "look_at": [1, 2, 3] } }"#;
    rejects(same, &["camera.look_at", "must differ"]);
    let parallel = r#"{ "camera": { "position": [0, 10, 0], "look_at": [0, 0, 0] } }"#;
    rejects(parallel, &["camera.up", "parallel"]);
    let bad_fov = r#"{ "camera": { "position": [0, 20, -40], "look_at": [0, 0, 0], "projection": { "type": "perspective", "fov": 0 } } }"#;
    rejects(bad_fov, &["camera.projection.fov"]);
}

#[test]
fn missing_camera_is_named() {
    rejects("{}", &["missing field `camera`"]);
}

#[test]
fn missing_scene_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["render", "nope.json", "-o", "out.png"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.json"));
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}

#[test]
fn unwritable_output_folder_is_refused_before_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["render", "-o", "missing/out.png"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not exist"), "{stderr}");
    // Refused before any work: no summary was printed.
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_command_line_values_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["render", "--width", "0"][..],
        &["render", "--spp", "100000"],
        &["render", "--threads", "x"],
    ] {
        let out = run_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}
