//! A render job as the command line runs it: the scene loaded with the
//! caller's overrides, the area of the image (whole, region, crop or farm
//! tile), the world built, the frame rendered, the file written atomically
//! with its metadata, and a summary. The caller brings the progress bar and
//! the cancel flag; this module prints nothing.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use crate::camera::Projection;
use crate::error::{Error, Result};
use crate::farm;
use crate::output::{self, Format, Metadata};
use crate::render::{self, Framebuffer, Rect, RenderStats};
use crate::scene::choice::{self, ProjectionKind};
use crate::scene::{self, Scene};
use crate::world::{BuildOptions, World};

/// Which pixels of the image a job renders.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Area {
    /// The whole image.
    #[default]
    Full,
    /// Pixels `x0,y0,x1,y1` (end exclusive).
    Region(String),
    /// Fractions of the image `fx0,fy0,fx1,fy1`.
    Crop(String),
    /// Band `k` (0-based) of `n` horizontal bands.
    Tile {
        /// The band.
        k: u32,
        /// How many bands.
        n: u32,
    },
}

/// A camera projection chosen instead of the scene's (its parameters
/// follow [`choice::choose`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ProjectionChoice {
    /// The projection type; None keeps the scene's.
    pub kind: Option<ProjectionKind>,
    /// Parameters given with it.
    pub overrides: choice::Overrides,
}

/// What to render and where to write it; None keeps the scene's value.
#[derive(Debug, Clone, Default)]
pub struct RenderJob {
    /// The scene file; None renders the built-in default scene.
    pub scene: Option<PathBuf>,
    /// The output file; None is the scene's name with `.png` in the
    /// current folder.
    pub output: Option<PathBuf>,
    /// Image width; alone it keeps the scene's aspect ratio.
    pub width: Option<u32>,
    /// Image height; alone it keeps the scene's aspect ratio.
    pub height: Option<u32>,
    /// Samples per pixel.
    pub spp: Option<u32>,
    /// Seed.
    pub seed: Option<u64>,
    /// Sun elevation, degrees.
    pub sun_elevation: Option<f64>,
    /// Sun azimuth, degrees.
    pub sun_azimuth: Option<f64>,
    /// Projection instead of the scene's.
    pub projection: ProjectionChoice,
    /// Output format; None follows the extension.
    pub format: Option<Format>,
    /// The pixels to render.
    pub area: Area,
    /// With a partial area: write the whole image, transparent outside it.
    pub full_canvas: bool,
    /// Frames of the scene's animation; None renders the scene as a still.
    pub frames: Option<Frames>,
    /// Also write an animated PNG of the frames here, at a preview size.
    pub preview: Option<PathBuf>,
    /// Width of that preview, pixels (default 320).
    pub preview_width: Option<u32>,
}

/// Which frames of an animation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frames {
    /// One frame.
    One(u32),
    /// `first..=last`.
    Range {
        /// The first frame.
        first: u32,
        /// The last frame.
        last: u32,
    },
}

/// What a finished job reports.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The file written.
    pub output: PathBuf,
    /// Its size in pixels.
    pub size: (u32, u32),
    /// The whole image's size.
    pub full_size: (u32, u32),
    /// The area rendered, when not the whole image.
    pub region: Option<Rect>,
    /// Samples per pixel.
    pub spp: u32,
    /// For a sequence: frames rendered, and frames kept from an earlier run.
    pub frames: Option<(usize, usize)>,
    /// From the start of the job to the file written.
    pub total: Duration,
    /// Reading and checking the scene.
    pub load: Duration,
    /// Writing the file.
    pub write: Duration,
    /// The world's figures, as one clause.
    pub world: String,
    /// The render's counts.
    pub stats: RenderStats,
    /// Worker threads.
    pub threads: usize,
    /// Things the user should know, one line each (printed on stderr).
    pub warnings: Vec<String>,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let (w, h) = self.full_size;
        let region = self.region.map_or(String::new(), |r| {
            format!(" (region {},{},{},{} of {w}×{h})", r.x0, r.y0, r.x1, r.y1)
        });
        let s = &self.stats;
        if let Some((rendered, kept)) = self.frames {
            write!(f, "{rendered} frames rendered")?;
            if kept > 0 {
                write!(f, ", {kept} already there")?;
            }
            write!(f, "; last ")?;
        }
        write!(
            f,
            "{}: {}×{}{region}, {} spp{}, {:.2} s total | scene {:.0} ms, {} | {} rays ({} primary, {} secondary) in {:.2} s = {:.2} Mrays/s on {} thread{} | output written in {:.0} ms",
            self.output.display(),
            self.size.0,
            self.size.1,
            self.spp,
            if s.samples < s.pixels * self.spp as u64 {
                format!(" (adaptive: mean {:.1})", s.mean_samples())
            } else {
                String::new()
            },
            self.total.as_secs_f64(),
            self.load.as_secs_f64() * 1e3,
            self.world,
            s.rays(),
            s.primary_rays,
            s.shadow_rays,
            s.trace_time.as_secs_f64(),
            s.mrays_per_second(),
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.write.as_secs_f64() * 1e3
        )
    }
}

/// Loads the scene at `path` (or the built-in default) with `edit`
/// applied to the raw file before validation; returns it with its name.
pub fn load_scene(path: Option<&Path>, edit: scene::RawEdit) -> Result<(Scene, String)> {
    match path {
        Some(p) => Ok((scene::load_with(p, edit)?, p.display().to_string())),
        None => Ok((
            scene::default_scene_with(edit)?,
            scene::DEFAULT_SCENE_NAME.to_string(),
        )),
    }
}

/// Runs `job` on the current rayon pool: ticks `progress` (setting its
/// length and message), stops with [`Error::Interrupted`] when `cancel`
/// is set, and leaves no file unless it finished.
pub fn run(job: &RenderJob, progress: &ProgressBar, cancel: &AtomicBool) -> Result<Summary> {
    let start = Instant::now();
    let sun_edit = |raw: &mut scene::SceneFile| {
        if let Some(e) = job.sun_elevation {
            raw.sun.elevation = e;
        }
        if let Some(a) = job.sun_azimuth {
            raw.sun.azimuth = a;
        }
    };
    let (mut scene, name) = load_scene(job.scene.as_deref(), &sun_edit)?;
    apply_overrides(&mut scene, job)?;
    let load = start.elapsed();
    scene.check_memory(&name, None)?;
    let out = job.output.clone().unwrap_or_else(|| {
        let stem = job
            .scene
            .as_deref()
            .and_then(Path::file_stem)
            .map_or("rocky-valley".into(), |s| s.to_string_lossy().into_owned());
        let frame = if job.frames.is_some() { "-####" } else { "" };
        PathBuf::from(format!("{stem}{frame}.png"))
    });
    let format = output::format_for(&out, job.format)?;
    output::check_folder(&out)?;
    let frames = frame_list(job, &scene, &out)?;
    let (w, h) = (scene.image.width, scene.image.height);
    let region = match &job.area {
        Area::Full => None,
        Area::Region(r) => Some(farm::parse_region(r, w, h)?),
        Area::Crop(c) => Some(farm::parse_crop(c, w, h)?),
        Area::Tile { k, n } => Some(farm::tile(*k, *n, w, h)?),
    };
    if job.full_canvas && region.is_none() {
        return Err(Error::Usage(
            "--full-canvas needs --region, --crop or --tile".into(),
        ));
    }
    let key = render_key(job.scene.as_deref(), &scene)?;
    let area = region.unwrap_or(farm::full(w, h));

    let tiles = render::tile_count(area.width(), area.height());
    progress.set_length(tiles * frames.len().max(1) as u64);
    progress.set_message("building terrain");
    let options = BuildOptions {
        traced_pixels: Some(area.width() as u64 * area.height() as u64),
        ..BuildOptions::default()
    };
    let world = World::build_with(&scene, options);
    let mut warnings = Vec::new();
    if let crate::terrain::Generator::Heightmap(m) = &scene.terrain.generator {
        if let Some(dem) = m.dem.as_ref().filter(|d| d.filled > 0) {
            warnings.push(format!(
                "the DEM ({}) had {} nodata cells, filled from their valid neighbours",
                dem.format, dem.filled
            ));
        }
    }
    if cancel.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    let mut preview = Vec::new();
    let preview_width = job.preview_width.unwrap_or(320);
    let mut stats_all = RenderStats::default();
    let mut skipped = 0;
    let mut write = Duration::ZERO;
    let mut size = (0, 0);
    let mut written = out.clone();
    // A still is one pass of this loop, with the scene as it is.
    let passes: Vec<Option<u32>> = if frames.is_empty() {
        vec![None]
    } else {
        frames.iter().copied().map(Some).collect()
    };
    for (n, &frame) in passes.iter().enumerate() {
        let (posed, path, frame_key) = match frame {
            None => (scene.clone(), out.clone(), key.clone()),
            Some(k) => {
                let posed = frame_scene(&scene, &world, k)?;
                let frame_key = format!(
                    "{:016x}",
                    crate::hash::fnv1a(format!("{key} frame {k}").into_bytes())
                );
                (posed, frame_path(&out, k), frame_key)
            }
        };
        let eye = posed.camera.position;
        let ground = if frame.is_none() {
            world.ground_under_camera
        } else {
            world.terrain_height(eye.x, eye.z)
        };
        if let Some(ground) = ground.filter(|&g| eye.y < g) {
            if warnings.is_empty() {
                let at = frame.map_or(String::new(), |k| format!("in frame {k} "));
                warnings.push(format!(
                    "the camera {at}at ({}, {}, {}) is below the terrain surface (height {ground} under it), so the image shows the terrain from beneath; raise camera.position[1] above {ground}",
                    eye.x, eye.y, eye.z
                ));
            }
        }
        let meta = Metadata {
            scene: name.clone(),
            key: frame_key,
            seed: posed.seed,
            spp: posed.image.samples,
            full_size: (w, h),
            region,
        };
        written = path.clone();
        // A frame already there from the same scene and options: kept
        // (a sequence resumes where it was interrupted).
        if frame.is_some() && format != Format::Exr && already_rendered(&path, &meta) {
            skipped += 1;
            progress.inc(tiles);
            if job.preview.is_some() {
                let (image, _) = output::read_png(&path)?;
                preview.push(preview_frame(&image, preview_width));
            }
            continue;
        }
        if let Some(k) = frame {
            progress.set_message(format!("frame {k} ({} of {})", n + 1, passes.len()));
        } else {
            progress.set_message("tracing");
        }
        let camera = posed.camera();
        let (mut fb, stats) =
            render::render_region(&posed, &world, &camera, area, progress, cancel)?;
        stats_all.primary_rays += stats.primary_rays;
        stats_all.shadow_rays += stats.shadow_rays;
        stats_all.samples += stats.samples;
        stats_all.pixels += stats.pixels;
        stats_all.trace_time += stats.trace_time;
        if stats_all.first_bad_pixel.is_none() {
            stats_all.first_bad_pixel = stats.first_bad_pixel;
        }
        stats_all.bad_samples += stats.bad_samples;
        if job.full_canvas {
            let mut canvas = Framebuffer::new(w, h);
            canvas.put(area, &fb.pixels);
            fb = canvas;
        }
        size = (fb.width, fb.height);
        let write_start = Instant::now();
        let (exposure, tonemap) = (posed.image.exposure_scale, posed.image.tonemap);
        match format {
            Format::Png => {
                let image = fb.to_srgb8(exposure, tonemap);
                output::write_png_with(&image, &meta, &path)?;
                if job.preview.is_some() {
                    preview.push(preview_frame(&image, preview_width));
                }
            }
            Format::Png16 => output::write_png_with(&fb.to_linear16(exposure), &meta, &path)?,
            Format::Exr => output::write_exr(
                fb.width,
                fb.height,
                &fb.to_linear_rgba(exposure),
                &meta,
                &path,
            )?,
        }
        write += write_start.elapsed();
    }
    progress.finish_and_clear();
    if let (Some(path), Some(animation)) = (&job.preview, &scene.animation) {
        let fps = animation.fps;
        output::write_apng(&preview, fps, path)?;
    }
    let world_note = format!(
        "terrain {:.0} ms, {} triangles ({} stored), {} rocks{}, acceleration build {:.0} ms, {:.1} MiB ({:.1} MiB with shading data)",
        world.generate_time.as_secs_f64() * 1e3,
        world.triangle_count(),
        world.stored_triangle_count(),
        world.rock_count,
        match world.population_count {
            0 => String::new(),
            n => format!(", {n} population instances"),
        },
        world.bvh_time.as_secs_f64() * 1e3,
        world.accel_bytes() as f64 / (1 << 20) as f64,
        world.memory_bytes() as f64 / (1 << 20) as f64,
    );
    drop(world);
    if stats_all.bad_samples > 0 {
        let (x, y) = stats_all.first_bad_pixel.unwrap_or_default();
        warnings.push(format!(
            "{} samples were NaN or infinite and were replaced by black; the first was in pixel ({x}, {y})",
            stats_all.bad_samples
        ));
    }
    if size == (0, 0) {
        size = (area.width(), area.height());
    }
    Ok(Summary {
        output: written,
        size,
        full_size: (w, h),
        region,
        spp: scene.image.samples,
        frames: (!frames.is_empty()).then_some((frames.len() - skipped, skipped)),
        total: start.elapsed(),
        load,
        write,
        world: world_note,
        stats: stats_all,
        threads: rayon::current_num_threads(),
        warnings,
    })
}

/// The frames `job` asks for, checked against the scene's animation and
/// the output's pattern; empty for a still.
fn frame_list(job: &RenderJob, scene: &Scene, out: &Path) -> Result<Vec<u32>> {
    let Some(frames) = job.frames else {
        if job.preview.is_some() {
            return Err(Error::Usage("--preview needs --frames".into()));
        }
        return Ok(Vec::new());
    };
    let animation = scene.animation.as_ref().ok_or_else(|| {
        Error::Usage("--frame and --frames need a scene with an `animation`".into())
    })?;
    let (first, last) = match frames {
        Frames::One(k) => (k, k),
        Frames::Range { first, last } => (first, last),
    };
    if first > last || last >= animation.frames {
        return Err(Error::Usage(format!(
            "frames {first}..{last}: the animation has frames 0..{}",
            animation.frames - 1
        )));
    }
    let pattern = out.to_string_lossy().contains('#');
    if last > first && !pattern {
        return Err(Error::Usage(format!(
            "{}: a sequence needs #### in the output name for the frame number (e.g. out/frame-####.png)",
            out.display()
        )));
    }
    if let Some(p) = &job.preview {
        if output::format_of(p)? != Format::Png {
            return Err(Error::Usage(format!(
                "{}: --preview writes an animated PNG",
                p.display()
            )));
        }
    }
    Ok((first..=last).collect())
}

/// `out` with its run of `#` replaced by frame `k`, zero-padded to the
/// run's length (`frame-####.png` → `frame-0007.png`).
pub fn frame_path(out: &Path, k: u32) -> PathBuf {
    let text = out.to_string_lossy();
    let Some(start) = text
        .rfind('#')
        .map(|end| text[..=end].trim_end_matches('#').len())
    else {
        return out.to_path_buf();
    };
    let end = text[start..]
        .find(|c| c != '#')
        .map_or(text.len(), |e| start + e);
    let width = end - start;
    PathBuf::from(format!("{}{k:0width$}{}", &text[..start], &text[end..]))
}

/// The scene at frame `k` of its animation, with a follow camera held
/// `clearance` above the terrain under it.
pub fn frame_scene(scene: &Scene, world: &World, k: u32) -> Result<Scene> {
    let animation = scene
        .animation
        .as_ref()
        .ok_or_else(|| Error::Usage("the scene has no animation".into()))?;
    let mut pose = animation.at(k);
    if let (Some(clearance), Some(p)) = (animation.clearance, pose.position.as_mut()) {
        if let Some(ground) = world.terrain_height(p.x as f32, p.z as f32) {
            p.y = p.y.max(ground as f64 + clearance);
        }
    }
    scene.posed(&pose)
}

/// Whether `path` is a PNG this job wrote already: same scene key.
fn already_rendered(path: &Path, meta: &Metadata) -> bool {
    path.is_file()
        && output::read_png(path)
            .ok()
            .and_then(|(_, texts)| Metadata::from_pairs(&texts))
            .is_some_and(|m| {
                m.key == meta.key && m.full_size == meta.full_size && m.region == meta.region
            })
}

/// A frame of the preview animation: at most `width` pixels wide, RGBA.
fn preview_frame(image: &image::DynamicImage, width: u32) -> image::RgbaImage {
    let (w, h) = (image.width(), image.height());
    let pw = w.min(width);
    let ph = ((h as u64 * pw as u64) / w as u64).max(1) as u32;
    image::imageops::resize(
        &image.to_rgba8(),
        pw,
        ph,
        image::imageops::FilterType::Triangle,
    )
}

/// A hash of the scene text and every checked value that changes pixels,
/// so that region renders of different scenes or options cannot be merged.
pub fn render_key(path: Option<&Path>, scene: &Scene) -> Result<String> {
    let text = match path {
        Some(p) => std::fs::read(p).map_err(|source| Error::Io {
            path: p.to_path_buf(),
            source,
        })?,
        None => scene::DEFAULT_SCENE.as_bytes().to_vec(),
    };
    let options = format!(
        "{}x{} {} {} {:?} {:?} {:?}",
        scene.image.width,
        scene.image.height,
        scene.image.samples,
        scene.seed,
        scene.camera,
        scene.sun,
        scene.image
    );
    Ok(format!(
        "{:016x}",
        crate::hash::fnv1a(text.into_iter().chain(options.into_bytes()))
    ))
}

/// The job's values replace the scene's. A width or height alone keeps
/// the scene's aspect ratio.
fn apply_overrides(scene: &mut Scene, job: &RenderJob) -> Result<()> {
    let p = job.projection;
    let chosen: Projection = choice::choose(&scene.camera.projection, p.kind, p.overrides)?;
    scene.camera.projection = chosen;
    let img = &mut scene.image;
    let aspect = img.width as f64 / img.height as f64;
    match (job.width, job.height) {
        (Some(w), Some(h)) => (img.width, img.height) = (w, h),
        (Some(w), None) => {
            img.width = w;
            img.height = ((w as f64 / aspect).round() as u32).clamp(1, scene::MAX_IMAGE_SIDE);
        }
        (None, Some(h)) => {
            img.height = h;
            img.width = ((h as f64 * aspect).round() as u32).clamp(1, scene::MAX_IMAGE_SIDE);
        }
        (None, None) => {}
    }
    if let Some(spp) = job.spp {
        img.samples = spp;
    }
    if let Some(seed) = job.seed {
        scene.seed = seed;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FOLLOW: &str = r#"{
      "camera": { "position": [-20, 10, -30], "look_at": [0, 3, 0] },
      "terrain": { "size": [60, 60], "resolution": [65, 65], "height": 10 },
      "animation": {
        "frames": 48,
        "camera": [
          { "frame": 0, "position": [-20, 25, -30], "look_at": [0, 3, 0] },
          { "frame": 20, "position": [0, -4, -10], "look_at": [10, 3, 10] },
          { "frame": 47, "position": [20, 1, 10], "look_at": [0, 2, 20] }
        ],
        "follow": { "clearance": 3 }
      }
    }"#;

    /// Along the whole path, the follow camera's eye is at least the
    /// clearance above the terrain under it, though the keyed path runs
    /// underground; where the path is high enough it is left alone.
    #[test]
    fn a_follow_camera_never_dips_under_the_terrain() {
        let scene = scene::parse(FOLLOW, "follow.json", Path::new(".")).unwrap();
        let world = World::build(&scene);
        let animation = scene.animation.as_ref().unwrap();
        let (mut lifted, mut kept) = (0, 0);
        for k in 0..animation.frames {
            let posed = frame_scene(&scene, &world, k).unwrap();
            let eye = posed.camera.position;
            let ground = world
                .terrain_height(eye.x, eye.z)
                .expect("over the terrain");
            assert!(
                eye.y >= ground + 3.0 - 1e-3,
                "frame {k}: eye {eye} over ground {ground}"
            );
            let keyed = animation.at(k).position.unwrap();
            if (keyed.y as f32 - eye.y).abs() > 1e-4 {
                lifted += 1;
                assert!(
                    (eye.y - ground - 3.0).abs() < 1e-3,
                    "frame {k}: lifted to the clearance"
                );
            } else {
                kept += 1;
            }
        }
        assert!(lifted > 10 && kept > 5, "lifted {lifted}, kept {kept}");
    }

    /// The shipped flyover's follow camera, every frame of it.
    #[test]
    fn the_flyovers_camera_stays_above_the_ground_all_the_way() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/flyover.json");
        let scene = scene::load(&path).unwrap();
        let world = World::build(&scene);
        let animation = scene.animation.as_ref().unwrap();
        let clearance = animation.clearance.unwrap() as f32;
        for k in 0..animation.frames {
            let eye = frame_scene(&scene, &world, k).unwrap().camera.position;
            let ground = world
                .terrain_height(eye.x, eye.z)
                .expect("over the terrain");
            assert!(
                eye.y >= ground + clearance - 1e-3,
                "frame {k}: eye {eye}, ground {ground}"
            );
        }
    }

    #[test]
    fn frame_paths_number_the_hashes() {
        assert_eq!(
            frame_path(Path::new("out/f-####.png"), 7),
            PathBuf::from("out/f-0007.png")
        );
        assert_eq!(
            frame_path(Path::new("a#b/f-##.png"), 123),
            PathBuf::from("a#b/f-123.png")
        );
        assert_eq!(
            frame_path(Path::new("still.png"), 3),
            PathBuf::from("still.png")
        );
    }
}
