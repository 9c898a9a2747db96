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
        write!(
            f,
            "{}: {}×{}{region}, {} spp, {:.2} s total | scene {:.0} ms, {} | {} rays ({} primary, {} shadow and sky) in {:.2} s = {:.2} Mrays/s on {} thread{} | output written in {:.0} ms",
            self.output.display(),
            self.size.0,
            self.size.1,
            self.spp,
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
        PathBuf::from(format!("{stem}.png"))
    });
    let format = output::format_for(&out, job.format)?;
    output::check_folder(&out)?;
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
    let meta = Metadata {
        scene: name.clone(),
        key: render_key(job.scene.as_deref(), &scene)?,
        seed: scene.seed,
        spp: scene.image.samples,
        full_size: (w, h),
        region,
    };
    let area = region.unwrap_or(farm::full(w, h));

    progress.set_length(render::tile_count(area.width(), area.height()));
    progress.set_message("building terrain");
    let options = BuildOptions {
        traced_pixels: Some(area.width() as u64 * area.height() as u64),
        ..BuildOptions::default()
    };
    let world = World::build_with(&scene, options);
    let mut warnings = Vec::new();
    let eye = scene.camera.position;
    if let Some(ground) = world.ground_under_camera.filter(|&g| eye.y < g) {
        warnings.push(format!(
            "the camera at ({}, {}, {}) is below the terrain surface (height {ground} under it), so the image shows the terrain from beneath; raise camera.position[1] above {ground}",
            eye.x, eye.y, eye.z
        ));
    }
    if cancel.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    progress.set_message("tracing");
    let camera = scene.camera();
    let (mut frame, stats) =
        render::render_region(&scene, &world, &camera, area, progress, cancel)?;
    progress.finish_and_clear();
    if job.full_canvas {
        let mut canvas = Framebuffer::new(w, h);
        canvas.put(area, &frame.pixels);
        frame = canvas;
    }
    let world_note = format!(
        "terrain {:.0} ms, {} triangles ({} stored), {} rocks, acceleration build {:.0} ms, {:.1} MiB",
        world.generate_time.as_secs_f64() * 1e3,
        world.triangle_count(),
        world.stored_triangle_count(),
        world.rock_count,
        world.bvh_time.as_secs_f64() * 1e3,
        world.accel_bytes() as f64 / (1 << 20) as f64,
    );
    drop(world);
    let write_start = Instant::now();
    let (exposure, tonemap) = (scene.image.exposure_scale, scene.image.tonemap);
    match format {
        Format::Png => output::write_png_with(&frame.to_srgb8(exposure, tonemap), &meta, &out)?,
        Format::Png16 => output::write_png_with(&frame.to_linear16(exposure), &meta, &out)?,
        Format::Exr => output::write_exr(
            frame.width,
            frame.height,
            &frame.to_linear_rgba(exposure),
            &meta,
            &out,
        )?,
    }
    if stats.bad_samples > 0 {
        let (x, y) = stats.first_bad_pixel.unwrap_or_default();
        warnings.push(format!(
            "{} samples were NaN or infinite and were replaced by black; the first was in pixel ({x}, {y})",
            stats.bad_samples
        ));
    }
    Ok(Summary {
        output: out,
        size: (frame.width, frame.height),
        full_size: (w, h),
        region,
        spp: scene.image.samples,
        total: start.elapsed(),
        load,
        write: write_start.elapsed(),
        world: world_note,
        stats,
        threads: rayon::current_num_threads(),
        warnings,
    })
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
