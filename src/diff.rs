//! `scree diff`: compare a result image with a reference, like OpenImageIO's
//! `idiff`, plus NVIDIA's FLIP perceptual metric (through the `nv-flip`
//! crate, NVIDIA's own implementation).
//!
//! Values are normalised to [0, 1] per channel (8-bit: /255, 16-bit:
//! /65535). A pixel "differs" when its largest channel difference exceeds
//! the threshold; the verdict fails when more than `fail_percent` % of the
//! pixels differ or the mean FLIP error exceeds `max_flip`.

use std::path::{Path, PathBuf};

use image::{DynamicImage, Rgba, RgbaImage};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::shade::tonemap;
use crate::text;

/// An image loaded for comparison: RGBA, each channel in [0, 1].
#[derive(Debug, Clone)]
pub struct DiffImage {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// Whether the file had an alpha channel.
    pub has_alpha: bool,
    /// Row-major RGBA.
    pub pixels: Vec<[f32; 4]>,
    /// The image as 8-bit sRGB (what FLIP reads).
    pub rgb8: image::RgbImage,
}

/// Reads an 8- or 16-bit PNG or an EXR (any format the `image` crate reads).
pub fn load(path: &Path) -> Result<DiffImage> {
    let img = image::open(path).map_err(|source| Error::Image {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(from_image(&img))
}

/// Converts a decoded image. Float images (EXR) hold linear values: the
/// metrics compare them as they are, and FLIP sees them sRGB-encoded and
/// clamped to [0, 1] (LDR-FLIP of the image as a PNG would show it).
pub fn from_image(img: &DynamicImage) -> DiffImage {
    let has_alpha = img.color().has_alpha();
    let rgba = img.to_rgba32f();
    let is_float = matches!(
        img,
        DynamicImage::ImageRgb32F(_) | DynamicImage::ImageRgba32F(_)
    );
    let rgb8 = if is_float {
        image::RgbImage::from_fn(img.width(), img.height(), |x, y| {
            let p = rgba.get_pixel(x, y);
            let code = tonemap::srgb8;
            image::Rgb([code(p[0]), code(p[1]), code(p[2])])
        })
    } else {
        img.to_rgb8()
    };
    DiffImage {
        width: img.width(),
        height: img.height(),
        has_alpha,
        pixels: rgba.pixels().map(|p| p.0).collect(),
        rgb8,
    }
}

/// Pass/fail tolerances.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    /// A pixel differs when a channel differs by more than this (0–1).
    pub threshold: f64,
    /// Fail when more than this percentage of pixels differ.
    pub fail_percent: f64,
    /// Fail when the mean FLIP error exceeds this, if set.
    pub max_flip: Option<f64>,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            threshold: 0.0,
            fail_percent: 0.0,
            max_flip: None,
        }
    }
}

/// Everything measured between two images of the same size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Channels compared: 3 (RGB) or 4 when either image has alpha.
    pub channels: usize,
    /// Largest absolute difference per channel (R, G, B[, A]), 0–1.
    pub max_abs: Vec<f64>,
    /// Mean absolute difference over all pixels and channels, 0–1.
    pub mean_abs: f64,
    /// Root mean square difference, 0–1.
    pub rmse: f64,
    /// Peak signal-to-noise ratio in dB (peak 1); None when identical (infinite).
    pub psnr_db: Option<f64>,
    /// Pixels whose largest channel difference exceeds the threshold.
    pub pixels_over: u64,
    /// `pixels_over` as a percentage of all pixels.
    pub percent_over: f64,
    /// Mean FLIP error (0 identical – 1).
    pub flip_mean: f64,
    /// Largest per-pixel FLIP error.
    pub flip_max: f64,
}

/// A verdict with its reasons.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The reference image.
    pub reference: PathBuf,
    /// The image under test.
    pub result: PathBuf,
    /// The tolerances applied.
    pub tolerance: Tolerance,
    /// The measurements.
    pub metrics: Metrics,
    /// `"pass"` or `"fail"`.
    pub verdict: &'static str,
    /// Why it failed (empty on pass).
    pub reasons: Vec<String>,
}

impl Report {
    /// Whether the images are equal within tolerance.
    pub fn passed(&self) -> bool {
        self.verdict == "pass"
    }
}

/// The pixels-per-degree FLIP assumes (NVIDIA's default: a 0.7 m wide
/// 4K monitor seen from 0.7 m).
pub const FLIP_PPD: f32 = nv_flip::DEFAULT_PIXELS_PER_DEGREE;

/// Per-pixel largest channel difference, row-major.
pub fn pixel_differences(a: &DiffImage, b: &DiffImage, channels: usize) -> Vec<f32> {
    a.pixels
        .iter()
        .zip(&b.pixels)
        .map(|(p, q)| {
            (0..channels)
                .map(|c| (p[c] - q[c]).abs())
                .fold(0.0, f32::max)
        })
        .collect()
}

/// The FLIP error map of `test` against `reference` (values 0–1, row-major).
pub fn flip_map(reference: &DiffImage, test: &DiffImage) -> Vec<f32> {
    let r = nv_flip::FlipImageRgb8::with_data(reference.width, reference.height, &reference.rgb8);
    let t = nv_flip::FlipImageRgb8::with_data(test.width, test.height, &test.rgb8);
    nv_flip::flip(r, t, FLIP_PPD).to_vec()
}

/// Measures `result` against `reference`; images of different sizes are an error.
pub fn measure(
    reference: &DiffImage,
    result: &DiffImage,
    tol: &Tolerance,
    names: (&Path, &Path),
) -> Result<Metrics> {
    if (reference.width, reference.height) != (result.width, result.height) {
        return Err(Error::Usage(format!(
            "cannot compare images of different sizes: {} is {}×{}, {} is {}×{}",
            names.0.display(),
            reference.width,
            reference.height,
            names.1.display(),
            result.width,
            result.height
        )));
    }
    let channels = if reference.has_alpha || result.has_alpha {
        4
    } else {
        3
    };
    let mut max_abs = vec![0.0f64; channels];
    let mut sum_abs = 0.0f64;
    let mut sum_sq = 0.0f64;
    let mut pixels_over = 0u64;
    for (p, q) in reference.pixels.iter().zip(&result.pixels) {
        let mut worst = 0.0f64;
        for c in 0..channels {
            let d = (p[c] as f64 - q[c] as f64).abs();
            max_abs[c] = max_abs[c].max(d);
            sum_abs += d;
            sum_sq += d * d;
            worst = worst.max(d);
        }
        if worst > tol.threshold {
            pixels_over += 1;
        }
    }
    let n = reference.pixels.len().max(1) as f64;
    let mse = sum_sq / (n * channels as f64);
    let flip = flip_map(reference, result);
    let flip_mean = flip.iter().map(|&v| v as f64).sum::<f64>() / n;
    let flip_max = flip.iter().fold(0.0f32, |m, &v| m.max(v)) as f64;
    Ok(Metrics {
        width: reference.width,
        height: reference.height,
        channels,
        max_abs,
        mean_abs: sum_abs / (n * channels as f64),
        rmse: mse.sqrt(),
        psnr_db: (mse > 0.0).then(|| -10.0 * mse.log10()),
        pixels_over,
        percent_over: 100.0 * pixels_over as f64 / n,
        flip_mean,
        flip_max,
    })
}

/// Applies the tolerances to the metrics.
pub fn judge(reference: &Path, result: &Path, tol: Tolerance, metrics: Metrics) -> Report {
    let mut reasons = Vec::new();
    if metrics.percent_over > tol.fail_percent {
        reasons.push(format!(
            "{} pixels ({:.4}%) differ by more than {} (allowed {}%)",
            metrics.pixels_over, metrics.percent_over, tol.threshold, tol.fail_percent
        ));
    }
    if let Some(max) = tol.max_flip {
        if metrics.flip_mean > max {
            reasons.push(format!("mean FLIP {:.6} exceeds {max}", metrics.flip_mean));
        }
    }
    Report {
        reference: reference.to_path_buf(),
        result: result.to_path_buf(),
        tolerance: tol,
        verdict: if reasons.is_empty() { "pass" } else { "fail" },
        reasons,
        metrics,
    }
}

/// "R 0.000000, G …" for the per-channel maxima.
fn max_abs_text(m: &Metrics) -> String {
    let names = ["R", "G", "B", "A"];
    let parts: Vec<String> = m
        .max_abs
        .iter()
        .zip(names)
        .map(|(v, n)| format!("{n} {v:.6}"))
        .collect();
    parts.join(", ")
}

/// The report as the text `scree diff` prints.
pub fn summary(r: &Report) -> String {
    let m = &r.metrics;
    let max = max_abs_text(m);
    let psnr = m
        .psnr_db
        .map_or("inf".to_string(), |p| format!("{p:.2} dB"));
    let mut s = format!(
        "{} vs {} ({}×{}, {} channels)\n  max abs diff: {}\n  mean abs diff: {:.6}  RMSE: {:.6}  PSNR: {}\n  pixels over threshold {}: {} ({:.4}%)\n  FLIP mean: {:.6}  max: {:.6}\n  verdict: {}",
        r.reference.display(),
        r.result.display(),
        m.width,
        m.height,
        m.channels,
        max,
        m.mean_abs,
        m.rmse,
        psnr,
        r.tolerance.threshold,
        m.pixels_over,
        m.percent_over,
        m.flip_mean,
        m.flip_max,
        r.verdict.to_uppercase()
    );
    for reason in &r.reasons {
        s.push_str(&format!("\n  - {reason}"));
    }
    s
}

/// Height of the colour scale under the heat map, pixels.
const LEGEND_HEIGHT: u32 = 40;

/// A heat map of the per-pixel largest channel difference on NVIDIA's magma
/// scale, normalised to the largest difference in the image, with a scale
/// bar and its range written underneath.
pub fn heatmap(reference: &DiffImage, result: &DiffImage, channels: usize) -> RgbaImage {
    let diffs = pixel_differences(reference, result, channels);
    let peak = diffs.iter().fold(0.0f32, |m, &v| m.max(v));
    let lut = nv_flip::magma_lut().to_vec();
    let color = |t: f32| {
        let i = ((t.clamp(0.0, 1.0) * 255.0).round() as usize) * 3;
        Rgba([lut[i], lut[i + 1], lut[i + 2], 255])
    };
    let (w, h) = (reference.width, reference.height);
    let mut out = RgbaImage::from_pixel(w.max(200), h + LEGEND_HEIGHT, Rgba([20, 20, 24, 255]));
    for (k, d) in diffs.iter().enumerate() {
        let t = if peak > 0.0 { d / peak } else { 0.0 };
        out.put_pixel(k as u32 % w, k as u32 / w, color(t));
    }
    // Scale bar: 0 on the left to the peak on the right.
    let bar_w = out.width() - 20;
    for x in 0..bar_w {
        for y in h + 4..h + 14 {
            out.put_pixel(10 + x, y, color(x as f32 / (bar_w - 1).max(1) as f32));
        }
    }
    text::draw(&mut out, "0", 10, h + 20, [230, 230, 230]);
    let label = format!("{peak:.4}");
    text::draw(
        &mut out,
        &label,
        10 + bar_w - text::width(&label),
        h + 20,
        [230, 230, 230],
    );
    out
}

/// The HTML page of `--report DIR`: reference, result and heat map side by
/// side, with the metrics. Image paths are relative to the page.
pub fn html_report(r: &Report) -> String {
    let m = &r.metrics;
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let row = |k: &str, v: String| format!("<tr><th>{k}</th><td>{}</td></tr>\n", esc(&v));
    let max = max_abs_text(m);
    let mut rows = String::new();
    rows += &row(
        "size",
        format!("{}×{}, {} channels", m.width, m.height, m.channels),
    );
    rows += &row("max abs diff", max);
    rows += &row("mean abs diff", format!("{:.6}", m.mean_abs));
    rows += &row("RMSE", format!("{:.6}", m.rmse));
    rows += &row(
        "PSNR",
        m.psnr_db.map_or("inf".into(), |p| format!("{p:.2} dB")),
    );
    rows += &row(
        "pixels over threshold",
        format!(
            "{} ({:.4}%) at threshold {}",
            m.pixels_over, m.percent_over, r.tolerance.threshold
        ),
    );
    rows += &row(
        "FLIP mean / max",
        format!("{:.6} / {:.6}", m.flip_mean, m.flip_max),
    );
    rows += &row(
        "verdict",
        format!("{} {}", r.verdict.to_uppercase(), r.reasons.join("; ")),
    );
    let colour = if r.passed() { "#2e7d32" } else { "#c62828" };
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>scree diff: {title}</title>
<style>
body {{ font-family: sans-serif; background: #1e1e22; color: #ddd; margin: 2em; }}
h1 {{ font-size: 1.3em; }} .verdict {{ color: {colour}; }}
.images {{ display: flex; gap: 1em; flex-wrap: wrap; }}
figure {{ margin: 0; }} figcaption {{ text-align: center; margin-top: .4em; }}
img {{ max-width: 31vw; image-rendering: pixelated; border: 1px solid #444; }}
table {{ border-collapse: collapse; margin-top: 1.5em; }}
th, td {{ text-align: left; padding: .3em 1em; border-bottom: 1px solid #333; }}
</style></head><body>
<h1>scree diff <span class="verdict">{verdict}</span></h1>
<div class="images">
<figure><img src="reference.png" alt="reference"><figcaption>reference: {reference}</figcaption></figure>
<figure><img src="result.png" alt="result"><figcaption>result: {result}</figcaption></figure>
<figure><img src="heatmap.png" alt="heat map"><figcaption>difference (largest channel), magma scale</figcaption></figure>
</div>
<table>
{rows}</table>
</body></html>
"#,
        title = esc(&r.result.display().to_string()),
        verdict = r.verdict.to_uppercase(),
        reference = esc(&r.reference.display().to_string()),
        result = esc(&r.result.display().to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solid(w: u32, h: u32, v: u8) -> DiffImage {
        from_image(&DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
            w,
            h,
            image::Rgb([v, v, v]),
        )))
    }

    #[test]
    fn identical_images_have_zero_metrics_and_pass() {
        let a = solid(16, 8, 100);
        let m = measure(
            &a,
            &a,
            &Tolerance::default(),
            (Path::new("a"), Path::new("b")),
        )
        .unwrap();
        assert_eq!(m.max_abs, vec![0.0; 3]);
        assert_eq!(
            (m.mean_abs, m.rmse, m.psnr_db, m.pixels_over, m.flip_mean),
            (0.0, 0.0, None, 0, 0.0)
        );
        assert!(judge(Path::new("a"), Path::new("b"), Tolerance::default(), m).passed());
    }

    #[test]
    fn one_changed_pixel_is_counted_and_measured() {
        let a = solid(10, 10, 100);
        let mut img = image::RgbImage::from_pixel(10, 10, image::Rgb([100, 100, 100]));
        img.put_pixel(3, 4, image::Rgb([151, 100, 100]));
        let b = from_image(&DynamicImage::ImageRgb8(img));
        let m = measure(
            &a,
            &b,
            &Tolerance::default(),
            (Path::new("a"), Path::new("b")),
        )
        .unwrap();
        assert_eq!(m.pixels_over, 1);
        assert_eq!(m.percent_over, 1.0);
        let d = 51.0 / 255.0;
        assert!((m.max_abs[0] - d).abs() < 1e-6 && m.max_abs[1] == 0.0);
        assert!((m.mean_abs - d / 300.0).abs() < 1e-7);
        assert!((m.rmse - (d * d / 300.0).sqrt()).abs() < 1e-7);
        assert!((m.psnr_db.unwrap() - (-10.0 * (d * d / 300.0).log10())).abs() < 1e-4);
        assert!(m.flip_mean > 0.0 && m.flip_max > 0.0);
        let r = judge(
            Path::new("a"),
            Path::new("b"),
            Tolerance::default(),
            m.clone(),
        );
        assert!(!r.passed());
        // Within tolerance when the threshold is above the change...
        let loose = Tolerance {
            threshold: 0.25,
            ..Tolerance::default()
        };
        let m2 = measure(&a, &b, &loose, (Path::new("a"), Path::new("b"))).unwrap();
        assert!(judge(Path::new("a"), Path::new("b"), loose, m2).passed());
        // ...or when 1% of pixels may differ, but not when FLIP is capped at 0.
        let percent = Tolerance {
            fail_percent: 1.0,
            ..Tolerance::default()
        };
        assert!(judge(Path::new("a"), Path::new("b"), percent, m.clone()).passed());
        let flip = Tolerance {
            fail_percent: 1.0,
            max_flip: Some(0.0),
            ..Tolerance::default()
        };
        assert!(!judge(Path::new("a"), Path::new("b"), flip, m).passed());
    }

    #[test]
    fn different_sizes_name_both() {
        let e = measure(
            &solid(4, 4, 0),
            &solid(4, 5, 0),
            &Tolerance::default(),
            (Path::new("a.png"), Path::new("b.png")),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("a.png is 4×4") && e.contains("b.png is 4×5"),
            "{e}"
        );
    }

    #[test]
    fn sixteen_bit_values_keep_their_precision() {
        let a = DynamicImage::ImageRgb16(image::ImageBuffer::from_pixel(
            2,
            2,
            image::Rgb([1000u16, 1000, 1000]),
        ));
        let b = DynamicImage::ImageRgb16(image::ImageBuffer::from_pixel(
            2,
            2,
            image::Rgb([1001u16, 1000, 1000]),
        ));
        let m = measure(
            &from_image(&a),
            &from_image(&b),
            &Tolerance::default(),
            (Path::new("a"), Path::new("b")),
        )
        .unwrap();
        assert!(
            (m.max_abs[0] - 1.0 / 65535.0).abs() < 1e-9,
            "{}",
            m.max_abs[0]
        );
        assert_eq!(m.pixels_over, 4);
    }

    #[test]
    fn heatmap_marks_the_changed_pixel_brightest() {
        let a = solid(8, 8, 0);
        let mut img = image::RgbImage::new(8, 8);
        img.put_pixel(5, 2, image::Rgb([255, 255, 255]));
        let b = from_image(&DynamicImage::ImageRgb8(img));
        let h = heatmap(&a, &b, 3);
        assert_eq!(h.height(), 8 + LEGEND_HEIGHT);
        let hot = h.get_pixel(5, 2);
        let cold = h.get_pixel(0, 0);
        let lum = |p: &Rgba<u8>| p[0] as u32 + p[1] as u32 + p[2] as u32;
        assert!(lum(hot) > 3 * lum(cold) + 200, "{hot:?} vs {cold:?}");
    }
}

/// FLIP against NVIDIA's reference implementation: the `flip-evaluator`
/// Python package 1.7 (`pip install flip-evaluator`), run on the pairs in
/// `tests/data/flip/` as
///
/// ```text
/// r = np.asarray(Image.open("ref.png").convert("RGB")).astype(np.float32) / 255
/// t = np.asarray(Image.open(f"{name}.png").convert("RGB")).astype(np.float32) / 255
/// error_map, mean, params = flip_evaluator.evaluate(r, t, "LDR", applyMagma=False)
/// print(mean, error_map.max())   # ppd 67.02
/// ```
///
/// The pairs: a 128×96 crop of `renders/rocky-valley.png` against itself
/// with uniform noise of ±12 codes, a Gaussian blur (radius 1.5), 15 %
/// more brightness, and a crop shifted by (3, 1) pixels.
#[cfg(test)]
mod flip_reference {
    use super::*;

    /// (pair, mean, max) printed by flip-evaluator.
    const REFERENCE: [(&str, f64, f64); 4] = [
        ("noise", 0.07938992977142334, 0.22624853253364563),
        ("blur", 0.08093910664319992, 0.36741894483566284),
        ("bright", 0.37212634086608887, 0.4564498960971832),
        ("shift", 0.19343478977680206, 0.7184606790542603),
    ];

    #[test]
    fn flip_means_match_nvidia_reference_within_1e_3() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/flip");
        let reference = load(&dir.join("ref.png")).unwrap();
        for (name, expected, expected_max) in REFERENCE {
            let test = load(&dir.join(format!("{name}.png"))).unwrap();
            let m = measure(
                &reference,
                &test,
                &Tolerance::default(),
                (Path::new("ref"), Path::new(name)),
            )
            .unwrap();
            assert!(
                (m.flip_mean - expected).abs() < 1e-3,
                "{name}: scree {} vs flip-evaluator {expected}",
                m.flip_mean
            );
            assert!(
                (m.flip_max - expected_max).abs() < 1e-3,
                "{name} max: scree {} vs flip-evaluator {expected_max}",
                m.flip_max
            );
        }
    }
}
