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

use crate::error::{Error, Result};
use crate::farm;
use crate::output::{self, Format, Metadata};
use crate::render::{self, Framebuffer, Rect, RenderStats};
use crate::scene::{self, Overrides, Scene, Source};
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

/// What to render and where to write it.
#[derive(Debug, Clone, Default)]
pub struct RenderJob {
    /// The scene file; None renders the built-in default scene.
    pub scene: Option<PathBuf>,
    /// The output file; None is the scene's name with `.png` in the
    /// current folder.
    pub output: Option<PathBuf>,
    /// Values that replace the scene file's (size, samples, seed, sun,
    /// projection).
    pub overrides: Overrides,
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
            "{}: {}×{}{region}, {} spp{}, {:.2} s total | scene {:.0} ms, {}, view {:.0} ms | {} rays ({} primary, {} secondary) in {:.2} s = {:.2} Mrays/s on {} thread{} | output written in {:.0} ms",
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
            s.view_time.as_secs_f64() * 1e3,
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

/// What the progress line says while the world of `scene` is built:
/// placing a hundred million plants takes longer than the terrain.
pub fn building(scene: &Scene) -> &'static str {
    if scene.plants.is_empty() {
        "building terrain"
    } else {
        "building terrain and placing plants"
    }
}

/// Runs `job` on the current rayon pool: ticks `progress` (setting its
/// length and message), stops with [`Error::Interrupted`] when `cancel`
/// is set, and leaves no file unless it finished.
pub fn run(job: &RenderJob, progress: &ProgressBar, cancel: &AtomicBool) -> Result<Summary> {
    let start = Instant::now();
    let source = Source::read(job.scene.as_deref())?;
    let scene = source.scene(&job.overrides)?;
    let load = start.elapsed();
    let plan = Plan::new(job, &source, &scene)?;
    progress.set_length(plan.tiles * plan.frames.len().max(1) as u64);
    progress.set_message(building(&scene));
    let options = BuildOptions {
        traced_pixels: Some(plan.area.width() as u64 * plan.area.height() as u64),
        ..BuildOptions::default()
    };
    let world = World::build_with(&scene, options);
    if cancel.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    let mut done = Done {
        warnings: dem_warnings(&scene),
        written: plan.out.clone(),
        ..Done::default()
    };
    let passes: Vec<Option<u32>> = match plan.frames.is_empty() {
        true => vec![None],
        false => plan.frames.iter().copied().map(Some).collect(),
    };
    for (n, &frame) in passes.iter().enumerate() {
        let posed = match frame {
            None => scene.clone(),
            Some(k) => frame_scene(&source, &job.overrides, &scene, &world, k)?,
        };
        warn_below_ground(&posed, &world, frame, &mut done.warnings);
        progress.set_message(match frame {
            Some(k) => format!("frame {k} ({} of {})", n + 1, passes.len()),
            None => "tracing".into(),
        });
        render_pass(
            job, &plan, &posed, &world, frame, progress, cancel, &mut done,
        )?;
    }
    progress.finish_and_clear();
    if let (Some(path), Some(animation)) = (&job.preview, &scene.animation) {
        output::write_apng(&done.preview, animation.fps, path)?;
    }
    let world_note = world_note(&world);
    drop(world);
    let stats = done.stats;
    if stats.bad_samples > 0 {
        let (x, y) = stats.first_bad_pixel.unwrap_or_default();
        done.warnings.push(format!(
            "{} samples were NaN or infinite and were replaced by black; the first was in pixel ({x}, {y})",
            stats.bad_samples
        ));
    }
    Ok(Summary {
        output: done.written,
        size: done.size.unwrap_or((plan.area.width(), plan.area.height())),
        full_size: plan.full_size,
        region: plan.region,
        spp: scene.image.samples,
        frames: (!plan.frames.is_empty())
            .then_some((plan.frames.len() - done.skipped, done.skipped)),
        total: start.elapsed(),
        load,
        write: done.write,
        world: world_note,
        stats,
        threads: rayon::current_num_threads(),
        warnings: done.warnings,
    })
}

/// What a job writes, decided before anything is built: the output, its
/// format, the frames, the pixels and the key that ties region renders of
/// one scene together.
struct Plan {
    out: PathBuf,
    format: Format,
    frames: Vec<u32>,
    full_size: (u32, u32),
    region: Option<Rect>,
    area: Rect,
    key: String,
    name: String,
    tiles: u64,
}

impl Plan {
    fn new(job: &RenderJob, source: &Source, scene: &Scene) -> Result<Plan> {
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
        let frames = frame_list(job, scene, &out)?;
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
        let area = region.unwrap_or(farm::full(w, h));
        Ok(Plan {
            key: render_key(job.scene.as_deref(), scene)?,
            name: source.name.clone(),
            tiles: render::tile_count(area.width(), area.height()),
            out,
            format,
            frames,
            full_size: (w, h),
            region,
            area,
        })
    }
}

/// What the passes of a job have done so far.
#[derive(Default)]
struct Done {
    stats: RenderStats,
    preview: Vec<image::RgbaImage>,
    skipped: usize,
    write: Duration,
    size: Option<(u32, u32)>,
    written: PathBuf,
    warnings: Vec<String>,
}

/// Renders one pass (the still, or frame `frame`) of `posed` and writes
/// it, unless the frame is there already from the same scene.
#[allow(clippy::too_many_arguments)]
fn render_pass(
    job: &RenderJob,
    plan: &Plan,
    posed: &Scene,
    world: &World,
    frame: Option<u32>,
    progress: &ProgressBar,
    cancel: &AtomicBool,
    done: &mut Done,
) -> Result<()> {
    let (path, key) = match frame {
        None => (plan.out.clone(), plan.key.clone()),
        Some(k) => (
            frame_path(&plan.out, k),
            format!(
                "{:016x}",
                crate::hash::fnv1a(format!("{} frame {k}", plan.key).into_bytes())
            ),
        ),
    };
    let meta = Metadata {
        scene: plan.name.clone(),
        key,
        seed: posed.seed,
        spp: posed.image.samples,
        full_size: plan.full_size,
        region: plan.region,
    };
    done.written = path.clone();
    let preview_width = job.preview_width.unwrap_or(320);
    // A frame already there from the same scene and options: kept (a
    // sequence resumes where it was interrupted).
    if frame.is_some() && plan.format != Format::Exr && already_rendered(&path, &meta) {
        done.skipped += 1;
        progress.inc(plan.tiles);
        if job.preview.is_some() {
            let (image, _) = output::read_png(&path)?;
            done.preview.push(preview_frame(&image, preview_width));
        }
        return Ok(());
    }
    let camera = posed.camera();
    let (mut fb, stats) =
        render::render_region(posed, world, &camera, plan.area, progress, cancel)?;
    done.stats.add(&stats);
    if job.full_canvas {
        let (w, h) = plan.full_size;
        let mut canvas = Framebuffer::new(w, h);
        canvas.put(plan.area, &fb.pixels);
        fb = canvas;
    }
    done.size = Some((fb.width, fb.height));
    let write_start = Instant::now();
    let (exposure, tonemap) = (posed.image.exposure_scale, posed.image.tonemap);
    match plan.format {
        Format::Png => {
            let image = fb.to_srgb8(exposure, tonemap);
            output::write_png_with(&image, &meta, &path)?;
            if job.preview.is_some() {
                done.preview.push(preview_frame(&image, preview_width));
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
    done.write += write_start.elapsed();
    Ok(())
}

/// A warning for a DEM whose nodata cells were filled.
fn dem_warnings(scene: &Scene) -> Vec<String> {
    let mut warnings = Vec::new();
    if let crate::terrain::Generator::Heightmap(m) = &scene.terrain.generator {
        if let Some(dem) = m.dem.as_ref().filter(|d| d.filled > 0) {
            warnings.push(format!(
                "the DEM ({}) had {} nodata cells, filled from their valid neighbours",
                dem.format, dem.filled
            ));
        }
    }
    warnings
}

/// A warning (the first only) for a camera below the terrain's surface.
fn warn_below_ground(posed: &Scene, world: &World, frame: Option<u32>, warnings: &mut Vec<String>) {
    let eye = posed.camera.position;
    let Some(ground) = world.terrain_height(eye.x, eye.z).filter(|&g| eye.y < g) else {
        return;
    };
    if warnings.is_empty() {
        let at = frame.map_or(String::new(), |k| format!("in frame {k} "));
        warnings.push(format!(
            "the camera {at}at ({}, {}, {}) is below the terrain surface (height {ground} under it), so the image shows the terrain from beneath; raise camera.position[1] above {ground}",
            eye.x, eye.y, eye.z
        ));
    }
}

/// The world's figures for the summary, as one clause.
fn world_note(world: &World) -> String {
    format!(
        "terrain {:.0} ms, {} triangles ({} stored), {} rocks{}{}{}, acceleration build {:.0} ms, {:.1} MiB ({:.1} MiB with shading data)",
        world.generate_time.as_secs_f64() * 1e3,
        world.triangle_count(),
        world.stored_triangle_count(),
        world.rock_count,
        match world.population_count {
            0 => String::new(),
            n => format!(", {n} population instances"),
        },
        match world.plant_count {
            0 => String::new(),
            n => format!(", {n} plants"),
        },
        world.streams.as_ref().map_or(String::new(), |s| format!(
            ", {} lakes and {} river samples ({} water triangles)",
            s.waters.lakes,
            s.waters.river_samples,
            s.triangle_count()
        )),
        world.bvh_time.as_secs_f64() * 1e3,
        world.accel_bytes() as f64 / (1 << 20) as f64,
        world.memory_bytes() as f64 / (1 << 20) as f64,
    )
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

/// The overrides that pose the camera and the sun at frame `k` of the
/// scene's animation, with a follow camera held `clearance` above the
/// terrain under it.
pub fn frame_overrides(scene: &Scene, world: &World, k: u32) -> Result<Overrides> {
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
    Ok(Overrides::pose(&pose))
}

/// The scene at frame `k` of its animation: `source` validated with
/// `overrides` and the frame's pose on top ([`frame_overrides`]).
pub fn frame_scene(
    source: &Source,
    overrides: &Overrides,
    scene: &Scene,
    world: &World,
    k: u32,
) -> Result<Scene> {
    let pose = overrides.then(&frame_overrides(scene, world, k)?);
    source
        .scene(&pose)
        .map_err(|e| Error::Usage(format!("frame {k} of the animation: {e}")))
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
        let source = Source::parse(FOLLOW, "follow.json", Path::new(".")).unwrap();
        let scene = source.scene(&Overrides::default()).unwrap();
        let world = World::build(&scene);
        let animation = scene.animation.as_ref().unwrap();
        let (mut lifted, mut kept) = (0, 0);
        for k in 0..animation.frames {
            let posed = frame_scene(&source, &Overrides::default(), &scene, &world, k).unwrap();
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
        let source = Source::read(Some(&path)).unwrap();
        let scene = source.scene(&Overrides::default()).unwrap();
        let world = World::build(&scene);
        let animation = scene.animation.as_ref().unwrap();
        let clearance = animation.clearance.unwrap() as f32;
        for k in 0..animation.frames {
            let eye = frame_scene(&source, &Overrides::default(), &scene, &world, k)
                .unwrap()
                .camera
                .position;
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
