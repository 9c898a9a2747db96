//! Rocks and the texture command, end to end.

use crate::support::*;

fn rock_scene(rock: &str) -> String {
    SMALL_SCENE.replacen(
        "\"seed\": 3,",
        &format!("\"seed\": 3, \"rocks\": [ {rock} ],"),
        1,
    )
}

fn cobblestone() -> String {
    root()
        .join("textures/cobblestone.png")
        .display()
        .to_string()
}

#[test]
fn displaced_rock_renders_differently_from_an_undisplaced_one() {
    let rock = |scale: f64| {
        format!(
            r#"{{ "center": [0, 0, -20], "radius": 4, "rest_on_terrain": true, "stacks": 32, "slices": 64,
                 "displacement": {{ "texture": "{}", "scale": {scale} }} }}"#,
            cobblestone()
        )
    };
    let (dir, a) = scene_dir("a.json", &rock_scene(&rock(0.6)));
    std::fs::write(dir.path().join("b.json"), rock_scene(&rock(0.0))).unwrap();
    for (scene, out) in [(a.to_str().unwrap(), "a.png"), ("b.json", "b.png")] {
        let r = run_in(dir.path(), &["render", scene, "-o", out, "-q"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let diff = run_in(dir.path(), &["diff", "a.png", "b.png", "-q"]);
    assert_eq!(diff.status.code(), Some(1));
}

#[test]
fn relative_texture_paths_resolve_against_the_scene_folder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tex")).unwrap();
    std::fs::copy(
        root().join("textures/cobblestone.png"),
        dir.path().join("tex/c.png"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("scenes")).unwrap();
    let rock =
        r#"{ "center": [0, 0, 0], "radius": 2, "displacement": { "texture": "../tex/c.png" } }"#;
    std::fs::write(dir.path().join("scenes/s.json"), rock_scene(rock)).unwrap();
    // Run from elsewhere: the path is relative to the scene file, not the cwd.
    let out = run_in(
        dir.path().join("tex").as_path(),
        &["check", "../scenes/s.json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bad_rocks_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.png"), b"this is not an image").unwrap();
    let junk = dir.path().join("notes.png").display().to_string();
    let cases = [
        (
            r#"{ "center": [0, 0, 0], "radius": 1, "displacement": { "texture": "missing.png" } }"#
                .to_string(),
            "rocks[0].displacement.texture",
        ),
        (
            format!(
                r#"{{ "center": [0, 0, 0], "radius": 1, "displacement": {{ "texture": "{junk}" }} }}"#
            ),
            "rocks[0].displacement.texture",
        ),
        (
            r#"{ "center": [0, 0, 0], "radius": 1, "stacks": 1 }"#.to_string(),
            "rocks[0].stacks",
        ),
        (
            r#"{ "center": [0, 0, 0], "radius": 1, "slices": 2 }"#.to_string(),
            "rocks[0].slices",
        ),
        (
            r#"{ "center": [0, 0, 0], "radius": -1 }"#.to_string(),
            "rocks[0].radius",
        ),
        (
            format!(
                r#"{{ "center": [0, 0, 0], "radius": 1, "analytic": true, "displacement": {{ "texture": "{}" }} }}"#,
                cobblestone()
            ),
            "rocks[0].analytic",
        ),
    ];
    for (rock, path) in cases {
        let text = rock_scene(&rock);
        std::fs::write(dir.path().join("bad.json"), &text).unwrap();
        let out = run_in(dir.path(), &["render", "bad.json", "-o", "out.png"]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rock}: {e}");
        assert!(e.contains(path) && e.contains("line"), "{rock}: {e}");
        assert!(!dir.path().join("out.png").exists());
    }
    let scatter = SMALL_SCENE.replacen(
        "\"seed\": 3,",
        "\"seed\": 3, \"scatter\": { \"radius\": [2, 1] },",
        1,
    );
    std::fs::write(dir.path().join("bad.json"), scatter).unwrap();
    let out = run_in(dir.path(), &["check", "bad.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("scatter.radius[1]"));
}

#[test]
fn scattered_and_analytic_rocks_render_deterministically() {
    let text = SMALL_SCENE.replacen(
        "\"seed\": 3,",
        &format!(
            r#""seed": 3, "rocks": [ {{ "center": [5, 0, -10], "radius": 3, "rest_on_terrain": true, "analytic": true }} ],
               "scatter": {{ "count": 60, "radius": [0.5, 1.5], "seed": 2,
                            "displacement": {{ "texture": "{}", "scale": 0.15 }},
                            "material": {{ "type": "texture", "texture": "{}" }} }},"#,
            cobblestone(),
            root().join("textures/cobblestone-albedo.png").display()
        ),
        1,
    );
    let (dir, scene) = scene_dir("s.json", &text);
    let s = scene.to_str().unwrap();
    let mut images = Vec::new();
    for (out, threads) in [("a.png", "1"), ("b.png", "2")] {
        let r = run_in(dir.path(), &["render", s, "-o", out, "--threads", threads]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        images.push(std::fs::read(dir.path().join(out)).unwrap());
    }
    assert_eq!(images[0], images[1]);
}

#[test]
fn texture_command_writes_deterministic_16_bit_maps() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b"] {
        let out = run_in(
            dir.path(),
            &[
                "texture",
                "cobblestone",
                "-o",
                &format!("{name}.png"),
                "--albedo",
                &format!("{name}-albedo.png"),
                "--size",
                "64",
                "--stones",
                "16",
                "--seed",
                "3",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let read = |n: &str| std::fs::read(dir.path().join(n)).unwrap();
    assert_eq!(read("a.png"), read("b.png"));
    assert_eq!(read("a-albedo.png"), read("b-albedo.png"));
    let img = image::open(dir.path().join("a.png")).unwrap();
    assert_eq!(img.color(), image::ColorType::L16);
    assert_eq!((img.width(), img.height()), (64, 64));
    let albedo = image::open(dir.path().join("a-albedo.png")).unwrap();
    assert_eq!(albedo.color(), image::ColorType::Rgb8);
    let bad = run_in(
        dir.path(),
        &["texture", "cobblestone", "-o", "x.png", "--size", "3"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn shipped_cobblestone_texture_is_what_the_command_generates() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &["texture", "cobblestone", "-o", "c.png", "--albedo", "a.png"],
    );
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(dir.path().join("c.png")).unwrap(),
        std::fs::read(root().join("textures/cobblestone.png")).unwrap()
    );
    assert_eq!(
        std::fs::read(dir.path().join("a.png")).unwrap(),
        std::fs::read(root().join("textures/cobblestone-albedo.png")).unwrap()
    );
}

#[test]
fn shipped_ground_textures_are_what_the_command_generates() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ["strata", "grass", "snow"] {
        let name = format!("{kind}.png");
        let out = run_in(
            dir.path(),
            &["texture", kind, "-o", &name, "--size", "256", "--seed", "1"],
        );
        assert!(out.status.success(), "{kind}");
        assert_eq!(
            std::fs::read(dir.path().join(&name)).unwrap(),
            std::fs::read(root().join("textures").join(&name)).unwrap(),
            "{kind}"
        );
    }
    // A ground texture is its colour map: --albedo is refused, nothing written.
    let bad = run_in(
        dir.path(),
        &["texture", "grass", "-o", "g.png", "--albedo", "a.png"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(!dir.path().join("g.png").exists());
}
