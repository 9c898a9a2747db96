//! Land to the horizon: the far field covers every direction below it.

use crate::support::*;

/// Coverage (alpha) of `scenes/horizon-360.json` rendered small to EXR,
/// with or without its far field, row by row.
fn coverage(far_field: bool) -> (Vec<Vec<f32>>, u32) {
    let text = std::fs::read_to_string(root().join("scenes/horizon-360.json")).unwrap();
    let mut scene: serde_json::Value = serde_json::from_str(&text).unwrap();
    scene.as_object_mut().unwrap().remove("$schema");
    // Alpha as the land's coverage: the sky is the background.
    scene["image"]["transparent"] = true.into();
    if !far_field {
        scene["terrain"]
            .as_object_mut()
            .unwrap()
            .remove("far_field");
    }
    let (dir, path) = scene_dir("h.json", &scene.to_string());
    run_ok(
        dir.path(),
        &[
            "render",
            path.to_str().unwrap(),
            "--width",
            "256",
            "--height",
            "128",
            "--spp",
            "2",
            "-o",
            "h.exr",
            "-q",
        ],
    );
    let exr = image::open(dir.path().join("h.exr")).unwrap().to_rgba32f();
    let rows = (0..exr.height())
        .map(|y| (0..exr.width()).map(|x| exr.get_pixel(x, y)[3]).collect())
        .collect();
    (rows, exr.height())
}

/// Every pixel wholly below the horizon (which a planet of Earth's radius
/// lowers by acos(R/(R+h)) for an eye h above the sea) sees land when the
/// far field is there, and some see the background when it is not.
#[test]
fn below_the_horizon_every_pixel_is_land_with_a_far_field() {
    let text = std::fs::read_to_string(root().join("scenes/horizon-360.json")).unwrap();
    let scene: serde_json::Value = serde_json::from_str(&text).unwrap();
    let eye = scene["camera"]["position"][1].as_f64().unwrap();
    let r = scene["terrain"]["planet_radius"].as_f64().unwrap();
    let dip = (r / (r + eye)).acos().to_degrees();
    let (with, height) = coverage(true);
    let below = |y: u32| 90.0 - y as f64 * 180.0 / height as f64 <= -dip;
    let rows: Vec<u32> = (0..height).filter(|&y| below(y)).collect();
    assert!(rows.len() as u32 > height / 2 - 2, "{} rows", rows.len());
    for &y in &rows {
        for (x, &a) in with[y as usize].iter().enumerate() {
            assert_eq!(
                a, 1.0,
                "pixel ({x}, {y}) below the horizon has coverage {a}"
            );
        }
    }
    let (without, _) = coverage(false);
    let open = rows
        .iter()
        .flat_map(|&y| without[y as usize].iter())
        .filter(|&&a| a < 1.0)
        .count();
    assert!(
        open > 100,
        "without the far field only {open} pixels see past the land"
    );
}
