//! Projection overrides and `scree compare`, end to end.

use crate::support::*;

#[test]
fn fisheye_override_gives_transparent_corners_and_opaque_centre() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let out = run_in(
        dir.path(),
        &[
            "render",
            scene.to_str().unwrap(),
            "-o",
            "f.png",
            "-q",
            "--projection",
            "fisheye",
            "--fov",
            "180",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = image::open(dir.path().join("f.png")).unwrap().to_rgba8();
    assert_eq!(img.get_pixel(0, 0)[3], 0, "corner is background");
    assert_eq!(img.get_pixel(79, 44)[3], 0, "corner is background");
    assert_eq!(img.get_pixel(40, 22)[3], 255, "centre is covered");
}

#[test]
fn projection_override_changes_the_picture_but_not_the_camera_place() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    for (name, extra) in [
        ("p.png", &[][..]),
        (
            "c.png",
            &["--projection", "cylindrical", "--fov", "200"][..],
        ),
        (
            "o.png",
            &["--projection", "orthographic", "--ortho-width", "60"][..],
        ),
    ] {
        let mut args = vec!["render", s, "-o", name, "-q"];
        args.extend_from_slice(extra);
        let out = run_in(dir.path(), &args);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let p = std::fs::read(dir.path().join("p.png")).unwrap();
    assert_ne!(p, std::fs::read(dir.path().join("c.png")).unwrap());
    assert_ne!(p, std::fs::read(dir.path().join("o.png")).unwrap());
}

#[test]
fn bad_projection_flags_exit_2_with_the_flag_named() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    for (args, expect) in [
        (&["--fov", "0"][..], "--fov"),
        (
            &["--projection", "cylindrical", "--fov", "400"][..],
            "--fov",
        ),
        (
            &[
                "--projection",
                "fisheye",
                "--mapping",
                "orthographic",
                "--fov",
                "200",
            ][..],
            "180",
        ),
        (
            &["--projection", "orthographic", "--ortho-width", "-3"][..],
            "--ortho-width",
        ),
        (
            &["--projection", "fisheye", "--mapping", "nope"][..],
            "nope",
        ),
        (&["--projection", "pinhole"][..], "pinhole"),
        (&["--mapping", "equisolid"][..], "--mapping does not apply"),
    ] {
        let mut full = vec!["render", s, "-o", "x.png"];
        full.extend_from_slice(args);
        let out = run_in(dir.path(), &full);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
    }
    assert_eq!(files_in(dir.path()), vec!["small.json"]);
}

#[test]
fn bad_projection_in_a_scene_names_the_field() {
    let cases = [
        (
            r#"{ "type": "fisheye", "mapping": "fishy" }"#,
            "camera.projection",
        ),
        (
            r#"{ "type": "fisheye", "fov": 270, "mapping": "orthographic" }"#,
            "camera.projection.fov",
        ),
        (
            r#"{ "type": "cylindrical", "fov": 361 }"#,
            "camera.projection.fov",
        ),
        (
            r#"{ "type": "equirectangular", "fov": -1 }"#,
            "camera.projection.fov",
        ),
        (
            r#"{ "type": "orthographic", "width": 0 }"#,
            "camera.projection.width",
        ),
    ];
    for (projection, path) in cases {
        let text = format!(
            "{{\n  \"camera\": {{\n    \"position\": [0, 20, -40], \"look_at\": [0, 0, 0],\n    \"projection\": {projection}\n  }}\n}}"
        );
        let (dir, scene) = scene_dir("bad.json", &text);
        let out = run_in(dir.path(), &["check", scene.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{projection}: {stderr}");
        assert!(
            stderr.contains(path) && stderr.contains("line 4"),
            "{projection}: {stderr}"
        );
    }
}

#[test]
fn compare_writes_a_labelled_grid() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let out = run_in(
        dir.path(),
        &[
            "compare",
            scene.to_str().unwrap(),
            "-o",
            "grid.png",
            "--cell-width",
            "96",
            "--spp",
            "1",
            "-q",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = image::open(dir.path().join("grid.png")).unwrap().to_rgba8();
    // 2 × 2 cells of 96 × 54 (the scene is 16:9), 8 px gaps, 24 px labels.
    let layout_w = 8 + 2 * (96 + 8);
    let layout_h = 8 + 2 * (54 + 24 + 8);
    assert_eq!((img.width(), img.height()), (layout_w, layout_h));
    // Each label strip has light text pixels.
    for (x0, y0) in [(8, 62), (112, 62), (8, 148), (112, 148)] {
        let lit = (x0..x0 + 96)
            .flat_map(|x| (y0..y0 + 24).map(move |y| (x, y)))
            .filter(|&(x, y)| img.get_pixel(x, y)[0] > 200)
            .count();
        assert!(
            lit > 20,
            "label under cell at ({x0}, {y0}): {lit} lit pixels"
        );
    }
}

#[test]
fn compare_accepts_any_list_and_rejects_bad_items() {
    let (dir, scene) = scene_dir("small.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    let ok = run_in(
        dir.path(),
        &[
            "compare",
            s,
            "-o",
            "g.png",
            "--cell-width",
            "64",
            "--spp",
            "1",
            "-q",
            "--projections",
            "orthographic:80,fisheye:200:equisolid:full_frame,cylindrical:360",
        ],
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let bad = run_in(
        dir.path(),
        &[
            "compare",
            s,
            "-o",
            "h.png",
            "--projections",
            "perspective,fishy",
        ],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("`fishy`"));
    assert!(!dir.path().join("h.png").exists());
}
