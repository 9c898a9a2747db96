//! Skies, soft shadows, sky light and EXR output, end to end.

use crate::support::*;

/// The small scene under each sky model, with soft shadows and sky light.
fn sky_scenes() -> Vec<(&'static str, String)> {
    let with_sky = |sky: &str| {
        SMALL_SCENE.replacen(
            "\"seed\": 3,",
            &format!(
                "\"seed\": 3, \"sky\": {sky}, \"sun\": {{ \"elevation\": 12, \"angular_diameter\": 2 }}, \
                 \"sky_light\": {{ \"samples\": 3 }}, \"fog\": {{ \"density\": 0.01, \"height_falloff\": 0.1 }},"
            ),
            1,
        )
    };
    vec![
        (
            "preetham",
            with_sky(r#"{ "type": "preetham", "turbidity": 4 }"#),
        ),
        ("mars", with_sky(r#"{ "type": "mars" }"#)),
        (
            "hosek-wilkie",
            with_sky(r#"{ "type": "hosek_wilkie", "turbidity": 3, "ground_albedo": 0.3 }"#),
        ),
        (
            "preetham over water",
            with_sky(
                r#"{ "type": "preetham", "turbidity": 4 }, "water": { "level": 4, "waves": {} }"#,
            ),
        ),
        (
            "layered ground",
            with_sky(r#"{ "type": "preetham", "turbidity": 4 }"#).replacen(
                r#""iterations": 300 }"#,
                r#""iterations": 300 },
                   "material": { "type": "layers", "layers": [
                     { "color": [0.2, 0.2, 0.2], "bump": { "height": 0.1, "size": 1 } },
                     { "color": [0.1, 0.2, 0.05], "mask": { "slope": [0, 25], "noise": 0.1 } },
                     { "color": [0.1, 0.08, 0.05], "mask": { "curvature": [0.3, 1], "flow": [0.4, 1] } },
                     { "color": [0.9, 0.9, 0.9], "mask": { "height": [0.7, 1], "aspect": 0 } } ],
                     "detail": {} }"#,
                1,
            ),
        ),
    ]
}

#[test]
fn physical_skies_render_byte_identically_on_any_thread_count() {
    for (name, text) in sky_scenes() {
        let (dir, scene) = scene_dir("s.json", &text);
        let s = scene.to_str().unwrap();
        same_bytes_on_1_and_2_threads(dir.path(), &["render", s, "-q"], name);
    }
}

/// Runs `args` with `-o` and `--threads` 1 and 2 in `dir` and checks the
/// two images are the same bytes.
fn same_bytes_on_1_and_2_threads(dir: &std::path::Path, args: &[&str], name: &str) {
    let mut images = Vec::new();
    for (out, threads) in [("a.png", "1"), ("b.png", "2")] {
        let mut all = args.to_vec();
        all.extend(["-o", out, "--threads", threads]);
        let r = run_in(dir, &all);
        assert!(
            r.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        images.push(std::fs::read(dir.join(out)).unwrap());
    }
    assert_eq!(images[0], images[1], "{name}");
}

#[test]
fn sun_elevation_override_changes_the_sky() {
    let (dir, scene) = scene_dir("s.json", &sky_scenes()[0].1);
    let s = scene.to_str().unwrap();
    run_in(
        dir.path(),
        &["render", s, "-o", "high.png", "-q", "--sun-elevation", "60"],
    );
    run_in(
        dir.path(),
        &["render", s, "-o", "low.png", "-q", "--sun-elevation", "3"],
    );
    let high = image::open(dir.path().join("high.png")).unwrap().to_rgb8();
    let low = image::open(dir.path().join("low.png")).unwrap().to_rgb8();
    // The top row is sky: bluer at noon than at sunset.
    let blueness = |img: &image::RgbImage| {
        (0..img.width())
            .map(|x| img.get_pixel(x, 0)[2] as f64 - img.get_pixel(x, 0)[0] as f64)
            .sum::<f64>()
    };
    assert!(
        blueness(&high) > blueness(&low),
        "noon sky bluer than sunset sky"
    );
    let bad = run_in(
        dir.path(),
        &["render", s, "-o", "x.png", "--sun-elevation", "95"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn exr_output_is_linear_and_matches_the_png_after_tone_mapping() {
    let (dir, scene) = scene_dir("s.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    for out in ["a.png", "a.exr"] {
        let r = run_in(dir.path(), &["render", s, "-o", out, "-q"]);
        assert!(
            r.status.success(),
            "{out}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
    }
    let png = image::open(dir.path().join("a.png")).unwrap().to_rgb8();
    let exr = image::open(dir.path().join("a.exr")).unwrap().to_rgba32f();
    assert_eq!((exr.width(), exr.height()), (png.width(), png.height()));
    for (x, y, p) in exr.enumerate_pixels() {
        assert_eq!(p[3], 1.0, "opaque");
        // The PNG is ACES(linear) then sRGB-encoded (exposure 0).
        for c in 0..3 {
            let v = p[c];
            let aces = ((v * (2.51 * v + 0.03)) / (v * (2.43 * v + 0.59) + 0.14)).clamp(0.0, 1.0);
            let srgb = if aces <= 0.0031308 {
                12.92 * aces
            } else {
                1.055 * aces.powf(1.0 / 2.4) - 0.055
            };
            let code = (srgb * 255.0 + 0.5) as i32;
            let expected = png.get_pixel(x, y)[c] as i32;
            assert!(
                (code - expected).abs() <= 1,
                "({x}, {y}) channel {c}: {code} vs {expected}"
            );
        }
    }
}

#[test]
fn bad_light_values_name_the_field() {
    for (fragment, path) in [
        (
            r#""sky": { "type": "preetham", "turbidity": 20 }"#,
            "sky.turbidity",
        ),
        (
            r#""sun": { "angular_diameter": -1 }"#,
            "sun.angular_diameter",
        ),
        (r#""sky_light": { "samples": 1000 }"#, "sky_light.samples"),
        (r#""sky_light": { "distance": 0 }"#, "sky_light.distance"),
        (r#""fog": { "height_falloff": -0.5 }"#, "fog.height_falloff"),
        (r#""sky": { "type": "marss" }"#, "did you mean `mars`?"),
    ] {
        let text = format!("{{\n  \"camera\": {{ \"position\": [0, 20, -40], \"look_at\": [0, 0, 0] }},\n  {fragment}\n}}");
        let (dir, scene) = scene_dir("bad.json", &text);
        let out = run_in(dir.path(), &["check", scene.to_str().unwrap()]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{fragment}: {e}");
        assert!(e.contains(path) && e.contains("line 3"), "{fragment}: {e}");
    }
}

/// The scenes with layers, water and the Hosek–Wilkie sky, those with
/// scattered rock variants and populations, and the path-traced one with
/// adaptive sampling, render the same bytes on 1 and 2 threads (at a fifth
/// of their width).
#[test]
fn new_scenes_render_byte_identically_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "alpine-lake",
        "canyon",
        "eroded-island",
        "boulder-field",
        "scree-slope",
        "canyon-bounce",
    ] {
        let scene = root().join(format!("scenes/{name}.json"));
        let args = ["render", scene.to_str().unwrap(), "--width", "192", "-q"];
        same_bytes_on_1_and_2_threads(dir.path(), &args, name);
    }
}
