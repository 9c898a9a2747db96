//! Render farms: regions, tiles in separate processes, merge, signals,
//! output formats with metadata.

use std::process::Stdio;

use crate::support::*;

/// A scene with a circular fisheye, so tiles mix covered and background pixels.
fn fisheye_scene() -> String {
    SMALL_SCENE.replacen(
        "\"camera\": { \"position\": [0, 20, -45], \"look_at\": [0, 4, 0] }",
        "\"camera\": { \"position\": [0, 20, -45], \"look_at\": [0, 4, 0], \"projection\": { \"type\": \"fisheye\", \"fov\": 200 } }",
        1,
    )
}

#[test]
fn four_tiles_in_four_processes_merge_to_the_full_render_bytes() {
    for (name, text) in [
        ("plain.json", SMALL_SCENE.to_string()),
        ("fisheye.json", fisheye_scene()),
    ] {
        let (dir, scene) = scene_dir(name, &text);
        let s = scene.to_str().unwrap();
        let full = run_in(dir.path(), &["render", s, "-o", "full.png", "-q"]);
        assert!(
            full.status.success(),
            "{}",
            String::from_utf8_lossy(&full.stderr)
        );
        // Four processes at once, as a job array would run them.
        let children: Vec<_> = (0..4)
            .map(|k| {
                scree()
                    .current_dir(dir.path())
                    .args([
                        "render",
                        s,
                        "-o",
                        &format!("tile{k}.png"),
                        "-q",
                        "--tile",
                        &k.to_string(),
                        "--tiles",
                        "4",
                        "--threads",
                        "1",
                    ])
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let merged = run_in(
            dir.path(),
            &[
                "merge",
                "tile2.png",
                "tile0.png",
                "tile3.png",
                "tile1.png",
                "-o",
                "merged.png",
                "-q",
            ],
        );
        assert!(
            merged.status.success(),
            "{}",
            String::from_utf8_lossy(&merged.stderr)
        );
        let read = |f: &str| std::fs::read(dir.path().join(f)).unwrap();
        assert_eq!(
            read("full.png"),
            read("merged.png"),
            "{name}: merge == full render, byte for byte"
        );
        // A tile holds only its band, with its place recorded.
        let tile = image::open(dir.path().join("tile1.png")).unwrap();
        assert_eq!((tile.width(), tile.height()), (80, 11));
    }
}

#[test]
fn regions_crops_and_full_canvas_hold_the_same_pixels_as_the_full_render() {
    let (dir, scene) = scene_dir("s.json", &fisheye_scene());
    let s = scene.to_str().unwrap();
    for args in [
        &["-o", "full.png"][..],
        &["-o", "region.png", "--region", "10,5,50,30"],
        &["-o", "crop.png", "--crop", "0.125,0.111,0.625,0.667"],
        &[
            "-o",
            "canvas.png",
            "--region",
            "10,5,50,30",
            "--full-canvas",
        ],
    ] {
        let mut all = vec!["render", s, "-q"];
        all.extend_from_slice(args);
        run_ok(dir.path(), &all);
    }
    let full = image::open(dir.path().join("full.png")).unwrap().to_rgba8();
    let region = image::open(dir.path().join("region.png"))
        .unwrap()
        .to_rgba8();
    let crop = image::open(dir.path().join("crop.png")).unwrap().to_rgba8();
    let canvas = image::open(dir.path().join("canvas.png"))
        .unwrap()
        .to_rgba8();
    assert_eq!((region.width(), region.height()), (40, 25));
    // round(0.125·80) = 10, round(0.111·45) = 5, round(0.625·80) = 50, round(0.667·45) = 30.
    assert_eq!(region, crop);
    assert_eq!((canvas.width(), canvas.height()), (80, 45));
    for y in 0..45 {
        for x in 0..80 {
            let inside = (10..50).contains(&x) && (5..30).contains(&y);
            if inside {
                assert_eq!(region.get_pixel(x - 10, y - 5), full.get_pixel(x, y));
                assert_eq!(canvas.get_pixel(x, y), full.get_pixel(x, y));
            } else {
                assert_eq!(
                    canvas.get_pixel(x, y)[3],
                    0,
                    "outside the region is transparent"
                );
            }
        }
    }
}

#[test]
fn merge_refuses_missing_overlapping_and_foreign_parts() {
    let (dir, scene) = scene_dir("s.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    for k in 0..3 {
        let out = run_in(
            dir.path(),
            &[
                "render",
                s,
                "-o",
                &format!("t{k}.png"),
                "-q",
                "--tile",
                &k.to_string(),
                "--tiles",
                "3",
            ],
        );
        assert!(out.status.success());
    }
    run_in(
        dir.path(),
        &[
            "render",
            s,
            "-o",
            "other.png",
            "-q",
            "--tile",
            "2",
            "--tiles",
            "3",
            "--seed",
            "9",
        ],
    );
    run_in(dir.path(), &["render", s, "-o", "full.png", "-q"]);
    let cases = [
        (&["t0.png", "t1.png"][..], "missing"),
        (&["t0.png", "t1.png", "t2.png", "t1.png"], "overlaps"),
        (&["t0.png", "t1.png", "other.png"], "different render"),
        (&["t0.png", "t1.png", "t2.png", "full.png"], "not a region"),
    ];
    for (parts, expect) in cases {
        let mut args = vec!["merge"];
        args.extend_from_slice(parts);
        args.extend_from_slice(&["-o", "m.png"]);
        let out = run_in(dir.path(), &args);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{parts:?}: {e}");
        assert!(e.contains(expect), "{parts:?}: {e}");
        assert!(!dir.path().join("m.png").exists());
    }
    std::fs::write(
        dir.path().join("plain.png"),
        std::fs::read(root().join("tests/data/flip/ref.png")).unwrap(),
    )
    .unwrap();
    let out = run_in(dir.path(), &["merge", "t0.png", "plain.png", "-o", "m.png"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no scree render metadata"));
}

#[cfg(unix)]
#[test]
fn sigterm_stops_a_render_without_output_or_temporary_files() {
    interrupted_render_leaves_nothing("-TERM");
}

#[test]
fn png16_and_exr_read_back_with_the_expected_values_and_metadata() {
    let (dir, scene) = scene_dir("s.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    for args in [
        &["-o", "a.exr"][..],
        &["-o", "a16.png", "--format", "png16"],
    ] {
        let mut all = vec!["render", s, "-q"];
        all.extend_from_slice(args);
        run_ok(dir.path(), &all);
    }
    let exr = image::open(dir.path().join("a.exr")).unwrap().to_rgba32f();
    let png16 = image::open(dir.path().join("a16.png")).unwrap();
    assert_eq!(png16.color(), image::ColorType::Rgb16);
    let png16 = png16.to_rgba16();
    for (a, b) in exr.pixels().zip(png16.pixels()) {
        for c in 0..3 {
            let expected = (a[c].clamp(0.0, 1.0) * 65535.0 + 0.5) as u16;
            assert_eq!(b[c], expected, "16-bit PNG holds the linear values");
        }
    }
    // Metadata: PNG text chunks and EXR attributes.
    let (_, texts) = scree::output::read_png(&dir.path().join("a16.png")).unwrap();
    let meta = scree::output::Metadata::from_pairs(&texts).unwrap();
    assert_eq!((meta.seed, meta.spp, meta.full_size), (3, 2, (80, 45)));
    assert!(meta.scene.ends_with("s.json"));
    let exr_bytes = std::fs::read(dir.path().join("a.exr")).unwrap();
    let has = |needle: &str| {
        exr_bytes
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    };
    assert!(has("scree:seed") && has("scree:spp") && has("scree:scene") && has("Software"));
    let bad = run_in(dir.path(), &["render", s, "-o", "x.png", "--format", "exr"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn bad_farm_options_exit_2() {
    let (dir, scene) = scene_dir("s.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    for args in [
        &["--region", "0,0,100,10"][..],
        &["--region", "5,5,5,10"],
        &["--crop", "0,0,2,1"],
        &["--tile", "4", "--tiles", "4"],
        &["--tile", "1"],
        &["--region", "0,0,10,10", "--tile", "0", "--tiles", "2"],
        &["--full-canvas"],
    ] {
        let mut all = vec!["render", s, "-o", "x.png"];
        all.extend_from_slice(args);
        let out = run_in(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!dir.path().join("x.png").exists());
    }
}

/// A scene file named outside ISO 8859-1 (which PNG's tEXt chunks hold)
/// renders to PNG and EXR, its name kept whole in the metadata, and its
/// tiles merge back into the full render.
#[test]
fn a_scene_named_in_any_script_renders_and_merges() {
    let (dir, scene) = scene_dir("жар 火.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    run_ok(dir.path(), &["render", s, "-q", "-o", "full.png"]);
    run_ok(dir.path(), &["render", s, "-q", "-o", "full.exr"]);
    for k in ["0", "1"] {
        let out = format!("t{k}.png");
        run_ok(
            dir.path(),
            &["render", s, "-q", "-o", &out, "--tile", k, "--tiles", "2"],
        );
    }
    run_ok(
        dir.path(),
        &["merge", "t0.png", "t1.png", "-o", "m.png", "-q"],
    );
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    assert_eq!(
        read("m.png"),
        read("full.png"),
        "merged tiles are the full render"
    );
    let (_, texts) = scree::output::read_png(&dir.path().join("full.png")).unwrap();
    let meta = scree::output::Metadata::from_pairs(&texts).unwrap();
    assert!(meta.scene.ends_with("жар 火.json"), "{}", meta.scene);
    let exr = read("full.exr");
    let name = "жар 火.json".as_bytes();
    assert!(
        exr.windows(name.len()).any(|w| w == name),
        "the EXR keeps the name in UTF-8"
    );
}
