//! `scree diff` from the command line: exit codes and outputs.

use crate::support::*;

fn write_png(path: &std::path::Path, img: image::RgbImage) {
    img.save(path).unwrap();
}

fn gradient() -> image::RgbImage {
    image::RgbImage::from_fn(40, 30, |x, y| {
        image::Rgb([(x * 6) as u8, (y * 8) as u8, 90])
    })
}

#[test]
fn identical_images_exit_0_with_zero_metrics() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("a.png"), gradient());
    let out = run_in(dir.path(), &["diff", "a.png", "a.png", "--json", "r.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(r["verdict"], "pass");
    let m = &r["metrics"];
    for k in [
        "mean_abs",
        "rmse",
        "pixels_over",
        "percent_over",
        "flip_mean",
        "flip_max",
    ] {
        assert_eq!(m[k].as_f64(), Some(0.0), "{k}");
    }
    assert!(
        m["psnr_db"].is_null(),
        "PSNR of identical images is infinite (null)"
    );
}

#[test]
fn one_changed_pixel_exits_1_and_says_one_pixel() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("a.png"), gradient());
    let mut b = gradient();
    b.put_pixel(7, 9, image::Rgb([255, 0, 0]));
    write_png(&dir.path().join("b.png"), b);
    let out = run_in(
        dir.path(),
        &[
            "diff",
            "a.png",
            "b.png",
            "--json",
            "r.json",
            "--heatmap",
            "h.png",
            "--report",
            "rep",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("pixels over threshold 0: 1 ("), "{text}");
    assert!(text.contains("FAIL"));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(r["metrics"]["pixels_over"], 1);
    assert_eq!(r["verdict"], "fail");
    let heat = image::open(dir.path().join("h.png")).unwrap();
    // At least 200 px wide so the scale legend fits; the 40 × 30 diff plus a 40 px legend.
    assert_eq!((heat.width(), heat.height()), (200, 70));
    for f in ["index.html", "reference.png", "result.png", "heatmap.png"] {
        assert!(dir.path().join("rep").join(f).exists(), "report has {f}");
    }
    let html = std::fs::read_to_string(dir.path().join("rep/index.html")).unwrap();
    assert!(html.contains("FAIL") && html.contains("FLIP"));
    // The same pair passes when one pixel in 1200 may differ.
    let ok = run_in(
        dir.path(),
        &["diff", "a.png", "b.png", "--fail-percent", "0.1", "-q"],
    );
    assert_eq!(ok.status.code(), Some(0));
    assert!(ok.stdout.is_empty());
    // ...unless FLIP is capped below what one red pixel costs.
    let flip = run_in(
        dir.path(),
        &[
            "diff",
            "a.png",
            "b.png",
            "--fail-percent",
            "0.1",
            "--max-flip",
            "0.00001",
        ],
    );
    assert_eq!(flip.status.code(), Some(1));
}

#[test]
fn different_sizes_exit_2_naming_both_sizes() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("a.png"), gradient());
    write_png(&dir.path().join("b.png"), image::RgbImage::new(41, 30));
    let out = run_in(dir.path(), &["diff", "a.png", "b.png"]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("a.png is 40×30") && e.contains("b.png is 41×30"),
        "{e}"
    );
}

#[test]
fn unreadable_files_and_bad_options_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    write_png(&dir.path().join("a.png"), gradient());
    std::fs::write(dir.path().join("junk.png"), b"not a png").unwrap();
    for args in [
        &["diff", "a.png", "missing.png"][..],
        &["diff", "a.png", "junk.png"],
        &["diff", "a.png", "a.png", "--threshold", "2"],
        &["diff", "a.png", "a.png", "--fail-percent", "-1"],
        &["diff", "a.png", "a.png", "--heatmap", "nowhere/h.png"],
    ] {
        let out = run_in(dir.path(), args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn sixteen_bit_pngs_are_compared_at_full_precision() {
    let dir = tempfile::tempdir().unwrap();
    let a: image::ImageBuffer<image::Rgb<u16>, Vec<u16>> =
        image::ImageBuffer::from_pixel(8, 8, image::Rgb([30000, 30000, 30000]));
    let mut b = a.clone();
    b.put_pixel(1, 1, image::Rgb([30001, 30000, 30000]));
    a.save(dir.path().join("a.png")).unwrap();
    b.save(dir.path().join("b.png")).unwrap();
    let out = run_in(
        dir.path(),
        &["diff", "a.png", "b.png", "--json", "r.json", "-q"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "a one-step 16-bit change is a difference"
    );
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    let max_r = r["metrics"]["max_abs"][0].as_f64().unwrap();
    assert!((max_r - 1.0 / 65535.0).abs() < 1e-9, "{max_r}");
}

#[test]
fn exr_renders_are_compared_as_linear_floats() {
    let (dir, scene) = scene_dir("s.json", SMALL_SCENE);
    let s = scene.to_str().unwrap();
    for (out, seed) in [("a.exr", "3"), ("b.exr", "4")] {
        let r = run_in(dir.path(), &["render", s, "-o", out, "-q", "--seed", seed]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let same = run_in(dir.path(), &["diff", "a.exr", "a.exr", "-q"]);
    assert_eq!(same.status.code(), Some(0));
    let other = run_in(
        dir.path(),
        &["diff", "a.exr", "b.exr", "--json", "r.json", "-q"],
    );
    assert_eq!(other.status.code(), Some(1));
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(r["metrics"]["channels"], 4, "EXR carries alpha");
    assert!(r["metrics"]["flip_mean"].as_f64().unwrap() > 0.0);
}
