//! The `scree` command line: parses arguments, runs one command, prints
//! errors once and turns them into exit codes (0 ok, 2 bad input or failure).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use scree::camera::choice::{self, ProjectionKind};
use scree::error::{Error, Result};
use scree::scene::{self, Scene};
use scree::scene::{FisheyeCircle, FisheyeMapping};
use scree::world::{BuildOptions, World};
use scree::{compare, diff, farm};
use scree::{output, render};

/// Set by Ctrl-C / SIGTERM; renders poll it between tiles.
static CANCEL: AtomicBool = AtomicBool::new(false);

/// Prints one line of a command's report on standard output. A reader
/// that has gone away (`scree bench | head -1`) is no failure: the rest of
/// the report is dropped and the command ends as it would have.
macro_rules! say {
    ($($arg:tt)*) => {
        say_line(format_args!($($arg)*))
    };
}

fn say_line(line: std::fmt::Arguments) -> Result<()> {
    use std::io::Write;
    match writeln!(std::io::stdout().lock(), "{line}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            path: "standard output".into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

#[derive(Parser)]
#[command(
    name = "scree",
    version,
    about = "An offline CPU ray tracer for terrain scenes: a JSON scene file in, a PNG out.",
    long_about = "An offline CPU ray tracer for terrain scenes: a JSON scene file in, a PNG out.\n\n\
        Quick start:\n  scree render scenes/rocky-valley.json -o renders/out.png\n  \
        scree render --width 320 --spp 1 -o preview.png      (fast preview of the default scene)\n  \
        scree check my-scene.json                            (validate without rendering)\n  \
        scree compare scenes/rocky-valley.json -o grid.png   (the view through several projections)\n  \
        scree diff renders/rocky-valley.png out.png          (compare with a reference)\n\n\
        The scene format is documented in README.md.\n\n\
        Exit codes: 0 success, 1 diff found a difference, 2 bad input or failure."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Render a scene to a PNG (or EXR).
    Render(RenderArgs),
    /// Render the scene's view through several projections into one labelled grid.
    Compare(CompareArgs),
    /// Put region renders (--region/--crop/--tile) back into one image,
    /// byte-identical to a full render.
    Merge(MergeArgs),
    /// Compare a result image with a reference: metrics, FLIP, heat map,
    /// report. Exit 0 when equal within tolerance, 1 when different, 2 on error.
    Diff(DiffArgs),
    /// Export the scene's terrain: 16-bit heightmap PNG and/or Wavefront OBJ.
    Terrain(TerrainArgs),
    /// Generate a texture (the cobblestone displacement map and its albedo).
    Texture(TextureArgs),
    /// Trace the shared peer workload (../shared/bench) and print build
    /// time, memory, Mrays/s on 1 and all threads, and the hit checksums.
    Bench(BenchArgs),
    /// Validate a scene file without rendering; prints a one-line summary.
    Check {
        /// Scene file (JSON).
        scene: PathBuf,
    },
}

#[derive(clap::Args)]
struct RenderArgs {
    /// Scene file (JSON). Without it, the built-in default scene
    /// (scenes/rocky-valley.json).
    scene: Option<PathBuf>,
    /// Output file: .png (8-bit sRGB, tone mapped; 16-bit linear with
    /// --format png16) or .exr (linear float, exposure applied, no tone
    /// map). Default: the scene's name with .png, in the current folder.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Image width in pixels (keeps the scene's aspect ratio unless --height is given too).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_IMAGE_SIDE as i64))]
    width: Option<u32>,
    /// Image height in pixels (keeps the scene's aspect ratio unless --width is given too).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_IMAGE_SIDE as i64))]
    height: Option<u32>,
    /// Samples per pixel (replaces image.samples).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_SAMPLES as i64))]
    spp: Option<u32>,
    /// Worker threads. Default: one per core. The image is the same for any count.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Seed for terrain and sampling (replaces the scene's seed).
    #[arg(long)]
    seed: Option<u64>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    quiet: bool,
    /// Sun elevation in degrees above the horizon (replaces sun.elevation;
    /// the physical skies follow it).
    #[arg(long, allow_negative_numbers = true, value_parser = elevation)]
    sun_elevation: Option<f64>,
    /// Sun compass bearing in degrees clockwise from north (replaces sun.azimuth).
    #[arg(long, allow_negative_numbers = true)]
    sun_azimuth: Option<f64>,
    #[command(flatten)]
    projection: ProjectionArgs,
    /// Output format; default from the extension (.png 8-bit sRGB, .exr
    /// linear float). `png16` writes 16-bit linear values to a .png.
    #[arg(long, value_enum)]
    format: Option<output::Format>,
    /// Render only these pixels: x0,y0,x1,y1 (end exclusive). The output
    /// holds the region alone, with its place recorded in the file.
    #[arg(long, value_name = "X0,Y0,X1,Y1")]
    region: Option<String>,
    /// Render only this part of the image, as fractions: fx0,fy0,fx1,fy1.
    #[arg(long, value_name = "FX0,FY0,FX1,FY1")]
    crop: Option<String>,
    /// Render tile K (0-based) of --tiles N horizontal bands, for farm job
    /// arrays (e.g. --tile $SLURM_ARRAY_TASK_ID --tiles 16).
    #[arg(long, value_name = "K")]
    tile: Option<u32>,
    /// Number of tiles for --tile.
    #[arg(long, value_name = "N")]
    tiles: Option<u32>,
    /// With a region: write the full-size image, transparent outside the region.
    #[arg(long)]
    full_canvas: bool,
}

#[derive(clap::Args)]
struct MergeArgs {
    /// Region renders (PNG) of one frame, in any order.
    #[arg(required = true)]
    parts: Vec<PathBuf>,
    /// The merged PNG.
    #[arg(short, long)]
    output: PathBuf,
    /// No summary.
    #[arg(short, long)]
    quiet: bool,
}

fn elevation(s: &str) -> std::result::Result<f64, String> {
    number_where(s, |v| (-90.0..=90.0).contains(&v), "between -90 and 90")
}

/// `s` as a number that `ok` accepts; the error says it must be `range`.
fn number_where(
    s: &str,
    ok: impl Fn(f64) -> bool,
    range: &str,
) -> std::result::Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if ok(v) {
        Ok(v)
    } else {
        Err(format!("must be {range}, got {v}"))
    }
}

/// Replacing the scene camera's projection (position and look-at stay).
#[derive(clap::Args)]
struct ProjectionArgs {
    /// Projection to render with instead of the scene's. Its parameters are
    /// the scene's when the type is the same, the type's defaults otherwise.
    #[arg(long, value_enum)]
    projection: Option<ProjectionKind>,
    /// Field of view, degrees (horizontal; across the image circle for fisheye).
    #[arg(long, allow_negative_numbers = true)]
    fov: Option<f64>,
    /// Fisheye mapping.
    #[arg(long, value_enum)]
    mapping: Option<FisheyeMapping>,
    /// Fisheye image circle.
    #[arg(long, value_enum)]
    circle: Option<FisheyeCircle>,
    /// Orthographic view width, world units.
    #[arg(long, allow_negative_numbers = true)]
    ortho_width: Option<f64>,
}

#[derive(clap::Args)]
struct TerrainArgs {
    /// Scene file (JSON). Without it, the built-in default scene.
    scene: Option<PathBuf>,
    /// Write the heights as a 16-bit grayscale PNG using the full range
    /// (lowest sample 0, highest 65535; top row = north edge).
    #[arg(long)]
    heightmap: Option<PathBuf>,
    /// Write the mesh as a Wavefront OBJ (world units, smooth normals, the
    /// rendered triangles and diagonal).
    #[arg(long)]
    obj: Option<PathBuf>,
    /// Write the scene's tessellated rocks (listed and scattered, placed,
    /// world units, unit normals) as one Wavefront OBJ; analytic rocks have
    /// no triangles and are left out.
    #[arg(long)]
    rocks_obj: Option<PathBuf>,
    /// Grid samples per side instead of terrain.resolution (square grid).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=scene::MAX_TERRAIN_SIDE as i64))]
    resolution: Option<u32>,
    /// Seed instead of the scene's.
    #[arg(long)]
    seed: Option<u64>,
    /// No summary.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// The workload's 16-bit heightmap (terrain_N.png), traced through the
    /// terrain grid hierarchy.
    #[arg(long, conflicts_with = "obj", required_unless_present = "obj")]
    heightmap: Option<PathBuf>,
    /// The workload's mesh (terrain_N.obj), traced through the general BVH.
    #[arg(long)]
    obj: Option<PathBuf>,
    /// Side of the heightmap's square, world units (as a scene's
    /// `terrain.size`: above 0, at most 1e7).
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true, value_parser = extent)]
    extent: f32,
    /// Height of the heightmap's full range, world units (as a scene's
    /// `terrain.height`: 0 to 1e6).
    #[arg(long, default_value_t = 15.0, allow_negative_numbers = true, value_parser = relief)]
    height: f32,
    /// Threads of the all-threads runs (1–1024). Default: one per core.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// Repetitions of each pass, 1–1000 (rates are medians).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    reps: u32,
    /// Also run, in each repetition, one one-thread copy of the passes per
    /// thread, all at once, each on its own buffers: a control that shows
    /// what the machine gives independent work, beside the thread scaling.
    #[arg(long)]
    copies: bool,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
    /// No progress on standard error (reading, building, each pass).
    #[arg(short, long)]
    quiet: bool,
}

/// A heightmap's side for `scree bench`: the range of a scene's
/// `terrain.size`.
fn extent(s: &str) -> std::result::Result<f32, String> {
    number_where(s, |v| v > 0.0 && v <= 1e7, "above 0 and at most 1e7").map(|v| v as f32)
}

/// A heightmap's full-range height for `scree bench`: the range of a
/// scene's `terrain.height`.
fn relief(s: &str) -> std::result::Result<f32, String> {
    number_where(s, |v| (0.0..=1e6).contains(&v), "between 0 and 1e6").map(|v| v as f32)
}

#[derive(clap::Args)]
struct TextureArgs {
    /// Which texture: `cobblestone` (tileable Worley stones with mortar gaps).
    #[arg(value_enum)]
    kind: TextureKind,
    /// Output PNG: 16-bit grayscale heights (0 mortar, 1 stone tops).
    #[arg(short, long)]
    output: PathBuf,
    /// Also write the matching colour map (8-bit RGB, linear reflectance).
    #[arg(long)]
    albedo: Option<PathBuf>,
    /// Side of the square texture, pixels.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(8..=8192))]
    size: u32,
    /// Seed of the stone layout and colours.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Approximate number of stones (rounded to a square number).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(4..=65536))]
    stones: u32,
}

/// Generated textures.
#[derive(Clone, Copy, clap::ValueEnum)]
enum TextureKind {
    /// Rounded stones separated by darker mortar gaps.
    Cobblestone,
}

#[derive(clap::Args)]
struct DiffArgs {
    /// The reference image (8- or 16-bit PNG).
    reference: PathBuf,
    /// The image to test against it.
    result: PathBuf,
    /// A pixel differs when one of its channels differs by more than this
    /// (0–1 of the full range; 1/255 ≈ 0.0039 is one 8-bit step).
    #[arg(long, default_value_t = 0.0, value_parser = unit_interval)]
    threshold: f64,
    /// Fail when more than this percentage of pixels differ.
    #[arg(long, default_value_t = 0.0, value_parser = percentage)]
    fail_percent: f64,
    /// Fail when the mean FLIP error exceeds this (0–1).
    #[arg(long, value_parser = unit_interval)]
    max_flip: Option<f64>,
    /// Write a heat map of the differences (PNG).
    #[arg(long)]
    heatmap: Option<PathBuf>,
    /// Write all metrics and the verdict as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write DIR/index.html with reference, result and heat map side by side.
    #[arg(long, value_name = "DIR")]
    report: Option<PathBuf>,
    /// Print nothing; only the exit code tells.
    #[arg(short, long)]
    quiet: bool,
}

fn unit_interval(s: &str) -> std::result::Result<f64, String> {
    number_where(s, |v| (0.0..=1.0).contains(&v), "between 0 and 1")
}

fn percentage(s: &str) -> std::result::Result<f64, String> {
    number_where(s, |v| (0.0..=100.0).contains(&v), "between 0 and 100")
}

#[derive(clap::Args)]
struct CompareArgs {
    /// Scene file (JSON). Without it, the built-in default scene.
    scene: Option<PathBuf>,
    /// Output PNG file.
    #[arg(short, long, default_value = "compare.png")]
    output: PathBuf,
    /// Comma-separated projections, each TYPE[:NUMBER][:MAPPING][:CIRCLE]
    /// (NUMBER: fov in degrees, or view width for orthographic), e.g.
    /// `perspective:70,cylindrical:360,fisheye:200:equisolid`.
    #[arg(
        long,
        default_value = "perspective,cylindrical,equirectangular,fisheye"
    )]
    projections: String,
    /// Width of each cell in pixels; the height follows the scene's aspect ratio.
    #[arg(long, default_value_t = 480, value_parser = clap::value_parser!(u32).range(16..=8192))]
    cell_width: u32,
    /// Samples per pixel (replaces image.samples).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_SAMPLES as i64))]
    spp: Option<u32>,
    /// Worker threads. Default: one per core.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Both Ctrl-C and SIGTERM (what farm schedulers send) stop a render.
    let _ = ctrlc::set_handler(|| CANCEL.store(true, Ordering::SeqCst));
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Render(args) => render_command(args),
        Command::Compare(args) => compare_command(args),
        Command::Diff(args) => diff_command(args),
        Command::Texture(args) => texture_command(args),
        Command::Terrain(args) => terrain_command(args),
        Command::Merge(args) => merge_command(args),
        Command::Bench(args) => bench_command(args),
        Command::Check { scene } => {
            let s = scene::load(&scene)?;
            let [w, h] = s.terrain.resolution;
            say!(
                "{}: ok ({}×{} image, {} spp, {}×{} terrain, {} projection, about {:.0} MiB)",
                scene.display(),
                s.image.width,
                s.image.height,
                s.image.samples,
                w,
                h,
                s.camera.projection.name(),
                s.memory_estimate() as f64 / (1 << 20) as f64
            )?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Loads the scene named on the command line, or the built-in default.
fn load_scene(path: Option<&Path>) -> Result<(Scene, String)> {
    load_scene_with(path, &|_| {})
}

/// [`load_scene`] with `edit` applied to the raw scene before validation.
fn load_scene_with(path: Option<&Path>, edit: scene::RawEdit) -> Result<(Scene, String)> {
    match path {
        Some(p) => Ok((scene::load_with(p, edit)?, p.display().to_string())),
        None => Ok((
            scene::default_scene_with(edit)?,
            scene::DEFAULT_SCENE_NAME.to_string(),
        )),
    }
}

fn render_command(args: RenderArgs) -> Result<ExitCode> {
    // The summary's total runs from here: reading and checking the scene
    // (decoding a heightmap) is part of what a render costs.
    let start = Instant::now();
    // Every parallel step, from decoding a heightmap to converting the
    // image for output, runs on the `--threads` pool.
    let pool = thread_pool(args.threads)?;
    pool.install(|| render_on_pool(args, start))
}

/// [`render_command`] on its thread pool; `start` is when the command began.
/// A render's pixels: the linear frame, or the 8-bit image made of it
/// band by band, with its PNG file's bytes if it was encoded as it rendered.
enum Rendered {
    Linear(render::Framebuffer),
    Srgb8(image::DynamicImage, Option<Vec<u8>>),
}

fn render_on_pool(args: RenderArgs, start: Instant) -> Result<ExitCode> {
    let sun_edit = |raw: &mut scene::SceneFile| {
        if let Some(e) = args.sun_elevation {
            raw.sun.elevation = e;
        }
        if let Some(a) = args.sun_azimuth {
            raw.sun.azimuth = a;
        }
    };
    let (mut scene, name) = load_scene_with(args.scene.as_deref(), &sun_edit)?;
    apply_overrides(&mut scene, &args)?;
    let load_time = start.elapsed();
    scene.check_memory(&name, None)?;
    let out = args.output.clone().unwrap_or_else(|| {
        let stem = args
            .scene
            .as_deref()
            .and_then(Path::file_stem)
            .map_or("rocky-valley".into(), |s| s.to_string_lossy().into_owned());
        PathBuf::from(format!("{stem}.png"))
    });
    let format = output::format_for(&out, args.format)?;
    output::check_folder(&out)?;
    let (w, h) = (scene.image.width, scene.image.height);
    let region = match (&args.region, &args.crop, args.tile, args.tiles) {
        (Some(r), None, None, None) => Some(farm::parse_region(r, w, h)?),
        (None, Some(c), None, None) => Some(farm::parse_crop(c, w, h)?),
        (None, None, Some(k), Some(n)) => Some(farm::tile(k, n, w, h)?),
        (None, None, None, None) => None,
        (None, None, Some(_), None) | (None, None, None, Some(_)) => {
            return Err(Error::Usage(
                "--tile K needs --tiles N, and --tiles N needs --tile K".into(),
            ))
        }
        _ => {
            return Err(Error::Usage(
                "give only one of --region, --crop and --tile/--tiles".into(),
            ))
        }
    };
    if args.full_canvas && region.is_none() {
        return Err(Error::Usage(
            "--full-canvas needs --region, --crop or --tile".into(),
        ));
    }
    let meta = output::Metadata {
        scene: name.clone(),
        key: render_key(args.scene.as_deref(), &scene)?,
        seed: scene.seed,
        spp: scene.image.samples,
        full_size: (w, h),
        region,
    };
    let area = region.unwrap_or(farm::full(w, h));

    let progress = progress_bar(args.quiet);
    progress.set_length(render::tile_count(area.width(), area.height()));
    progress.set_message("building terrain");
    let options = BuildOptions {
        traced_pixels: Some(area.width() as u64 * area.height() as u64),
        ..BuildOptions::default()
    };
    let world = World::build_with(&scene, options);
    let (exposure, tonemap) = (scene.image.exposure_scale, scene.image.tonemap);
    // An 8-bit PNG of the rendered area is converted band by band while
    // the frame renders; the other outputs convert the linear frame.
    let direct8 = format == output::Format::Png && !args.full_canvas;
    let result = if CANCEL.load(Ordering::SeqCst) {
        Err(Error::Interrupted)
    } else {
        progress.set_message("tracing");
        let camera = scene.camera();
        if direct8 {
            let curve = (exposure, tonemap);
            // Encoded while it renders; if the stream cannot start, the
            // image is encoded after, which reports why.
            let size = (area.width(), area.height());
            let rgb8 = (png::ColorType::Rgb, png::BitDepth::Eight);
            let png = output::PngStream::new(size, rgb8, &meta).ok();
            render::render_region_srgb8(
                &scene, &world, &camera, area, &progress, &CANCEL, curve, png,
            )
            .map(|(img, encoded, stats)| (Rendered::Srgb8(img, encoded), stats))
        } else {
            render::render_region(&scene, &world, &camera, area, &progress, &CANCEL)
                .map(|(fb, stats)| (Rendered::Linear(fb), stats))
        }
    };
    let (mut rendered, stats) = result?;
    progress.finish_and_clear();
    if let (true, Rendered::Linear(fb)) = (args.full_canvas, &rendered) {
        let mut canvas = render::Framebuffer::new(w, h);
        canvas.put(area, &fb.pixels);
        rendered = Rendered::Linear(canvas);
    }
    if CANCEL.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    // The summary's figures; the world, scene and frame are then freed on
    // a thread of their own while this one writes the image (and encodes
    // it, unless it was encoded while it rendered): giving back a 4097²
    // terrain's pages took the process 20-40 ms after the image was
    // written. Leaving them to the process's exit instead was slower
    // (0.57 against 0.52 s a 4097² frame, hyperfine, 10 runs each).
    let world_note = format!(
        "terrain {:.0} ms, {} triangles ({} stored), {} rocks, acceleration build {:.0} ms, {:.1} MiB",
        world.generate_time.as_secs_f64() * 1e3,
        world.triangle_count(),
        world.stored_triangle_count(),
        world.rock_count,
        world.bvh_time.as_secs_f64() * 1e3,
        world.accel_bytes() as f64 / (1 << 20) as f64,
    );
    let (fb_width, fb_height) = match &rendered {
        Rendered::Linear(fb) => (fb.width, fb.height),
        Rendered::Srgb8(img, _) => (img.width(), img.height()),
    };
    let spp = scene.image.samples;
    let output_start = Instant::now();
    enum Converted {
        Encoded(Vec<u8>),
        Png(image::DynamicImage),
        Exr(Vec<[f32; 4]>),
    }
    let (converted, fb) = match rendered {
        Rendered::Srgb8(_, Some(encoded)) => (Converted::Encoded(encoded), None),
        Rendered::Srgb8(img, None) => (Converted::Png(img), None),
        Rendered::Linear(fb) => {
            let converted = match format {
                output::Format::Png => Converted::Png(fb.to_srgb8(exposure, tonemap)),
                output::Format::Png16 => Converted::Png(fb.to_linear16(exposure)),
                output::Format::Exr => Converted::Exr(fb.to_linear_rgba(exposure)),
            };
            (converted, Some(fb))
        }
    };
    let freeing = std::thread::spawn(move || drop((world, scene, fb)));
    let written = match converted {
        Converted::Encoded(bytes) => output::write_bytes(&bytes, &out),
        Converted::Png(img) => output::write_png_with(&img, &meta, &out),
        Converted::Exr(rgba) => output::write_exr(fb_width, fb_height, &rgba, &meta, &out),
    };
    // Joined, so that the process never exits while it frees.
    freeing.join().expect("freeing the world does not panic");
    written?;
    let output_time = output_start.elapsed();
    if !args.quiet {
        let region_note = region.map_or(String::new(), |r| {
            format!(" (region {},{},{},{} of {w}×{h})", r.x0, r.y0, r.x1, r.y1)
        });
        say!(
            "{}: {}×{}{region_note}, {} spp, {:.2} s total | scene {:.0} ms, {world_note} | {} rays ({} primary, {} shadow and sky) in {:.2} s = {:.2} Mrays/s on {} thread{} | output written in {:.0} ms",
            out.display(),
            fb_width,
            fb_height,
            spp,
            start.elapsed().as_secs_f64(),
            load_time.as_secs_f64() * 1e3,
            stats.rays(),
            stats.primary_rays,
            stats.shadow_rays,
            stats.trace_time.as_secs_f64(),
            stats.mrays_per_second(),
            rayon::current_num_threads(),
            if rayon::current_num_threads() == 1 { "" } else { "s" },
            output_time.as_secs_f64() * 1e3
        )?;
    }
    if stats.bad_samples > 0 {
        let (x, y) = stats.first_bad_pixel.unwrap_or_default();
        eprintln!(
            "warning: {} samples were NaN or infinite and were replaced by black; the first was in pixel ({x}, {y})",
            stats.bad_samples
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A hash of the scene text and every checked value that changes pixels,
/// so that region renders of different scenes or options cannot be merged.
fn render_key(path: Option<&Path>, scene: &Scene) -> Result<String> {
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
        scree::hash::fnv1a(text.into_iter().chain(options.into_bytes()))
    ))
}

fn merge_command(args: MergeArgs) -> Result<ExitCode> {
    if output::format_of(&args.output)? != output::Format::Png {
        return Err(Error::Usage(format!(
            "{}: merge writes PNG",
            args.output.display()
        )));
    }
    output::check_folder(&args.output)?;
    let parts = args
        .parts
        .iter()
        .map(|p| {
            let (image, texts) = output::read_png(p)?;
            let meta = output::Metadata::from_pairs(&texts).ok_or_else(|| {
                Error::Usage(format!(
                    "{}: has no scree render metadata (not a scree region render)",
                    p.display()
                ))
            })?;
            Ok(farm::Part {
                path: p.clone(),
                image,
                meta,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let (image, meta) = farm::merge(&parts)?;
    output::write_png_with(&image, &meta, &args.output)?;
    if !args.quiet {
        say!(
            "{}: {} parts merged into {}×{}",
            args.output.display(),
            parts.len(),
            image.width(),
            image.height()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn compare_command(args: CompareArgs) -> Result<ExitCode> {
    let (mut scene, name) = load_scene(args.scene.as_deref())?;
    if let Some(spp) = args.spp {
        scene.image.samples = spp;
    }
    let current = scene.camera.projection;
    let projections = args
        .projections
        .split(',')
        .map(|item| choice::parse_item(&current, item))
        .collect::<Result<Vec<_>>>()?;
    let layout = compare::Layout::new(projections.len(), args.cell_width, &scene);
    scene.image.width = layout.cell_width;
    scene.image.height = layout.cell_height;
    scene.check_memory(&name, None)?;
    output::check_writable(&args.output)?;

    let pool = thread_pool(args.threads)?;
    let start = Instant::now();
    let progress = progress_bar(args.quiet);
    progress.set_length(layout.tiles(projections.len()));
    progress.set_message("building terrain");
    let grid = pool.install(|| {
        let world = World::build(&scene);
        progress.set_message("tracing");
        compare::compare(&scene, &world, &projections, layout, &progress, &CANCEL)
    })?;
    progress.finish_and_clear();
    if CANCEL.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    output::write_png(&image::DynamicImage::ImageRgba8(grid), &args.output)?;
    if !args.quiet {
        let (w, h) = layout.size();
        say!(
            "{}: {} projections in a {}×{} grid of {}×{} cells ({w}×{h} px), {:.2} s",
            args.output.display(),
            projections.len(),
            layout.columns,
            layout.rows,
            layout.cell_width,
            layout.cell_height,
            start.elapsed().as_secs_f64()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn diff_command(args: DiffArgs) -> Result<ExitCode> {
    for out in [&args.heatmap, &args.json].into_iter().flatten() {
        output::check_folder(out)?;
    }
    let reference = diff::load(&args.reference)?;
    let result = diff::load(&args.result)?;
    let tolerance = diff::Tolerance {
        threshold: args.threshold,
        fail_percent: args.fail_percent,
        max_flip: args.max_flip,
    };
    let metrics = diff::measure(
        &reference,
        &result,
        &tolerance,
        (&args.reference, &args.result),
    )?;
    let channels = metrics.channels;
    let report = diff::judge(&args.reference, &args.result, tolerance, metrics);
    let needs_heatmap = args.heatmap.is_some() || args.report.is_some();
    let heat = needs_heatmap
        .then(|| image::DynamicImage::ImageRgba8(diff::heatmap(&reference, &result, channels)));
    if let (Some(path), Some(heat)) = (&args.heatmap, &heat) {
        output::write_png(heat, path)?;
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report).expect("a report serialises");
        output::write_bytes(format!("{text}\n").as_bytes(), path)?;
    }
    if let (Some(dir), Some(heat)) = (&args.report, &heat) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.clone(),
            source,
        })?;
        let copy = |from: &Path, name: &str| {
            let bytes = std::fs::read(from).map_err(|source| Error::Io {
                path: from.to_path_buf(),
                source,
            })?;
            output::write_bytes(&bytes, &dir.join(name))
        };
        copy(&args.reference, "reference.png")?;
        copy(&args.result, "result.png")?;
        output::write_png(heat, &dir.join("heatmap.png"))?;
        output::write_bytes(
            diff::html_report(&report).as_bytes(),
            &dir.join("index.html"),
        )?;
    }
    if !args.quiet {
        say!("{}", diff::summary(&report))?;
    }
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn terrain_command(args: TerrainArgs) -> Result<ExitCode> {
    if args.heightmap.is_none() && args.obj.is_none() && args.rocks_obj.is_none() {
        return Err(Error::Usage(
            "scree terrain: give --heightmap FILE.png, --obj FILE.obj and/or --rocks-obj FILE.obj"
                .into(),
        ));
    }
    let (mut scene, name) = load_scene(args.scene.as_deref())?;
    if let Some(n) = args.resolution {
        scene.terrain.resolution = [n as usize, n as usize];
    }
    if let Some(seed) = args.seed {
        scene.seed = seed;
    }
    scene.check_memory(&name, None)?;
    if let Some(h) = &args.heightmap {
        output::check_writable(h)?;
    }
    for o in [&args.obj, &args.rocks_obj].into_iter().flatten() {
        output::check_folder(o)?;
    }
    let start = Instant::now();
    let heights = scree::terrain::generate(&scene.terrain.recipe(), scene.seed);
    let generate_time = start.elapsed();
    let grid = scree::terrain::TerrainGrid {
        heights,
        size: scene.terrain.size,
    };
    let (lo, hi) = grid.heights.range();
    if let Some(h) = &args.heightmap {
        let (img, _) = scree::terrain::import::to_png16(&grid.heights);
        output::write_png(&img, h)?;
    }
    if let Some(o) = &args.obj {
        output::write_bytes(scree::terrain::export::obj(&grid).as_bytes(), o)?;
    }
    if !args.quiet {
        say!(
            "{}×{} terrain generated in {:.0} ms; heights {lo} to {hi} (import with \"height\": {})",
            grid.heights.width,
            grid.heights.height,
            generate_time.as_secs_f64() * 1e3,
            hi - lo
        )?;
    }
    if let Some(o) = &args.rocks_obj {
        let world = scree::world::World::build_on(&scene, grid);
        let rocks = world.rock_meshes();
        output::write_bytes(scree::rock::export::obj(&rocks).as_bytes(), o)?;
        if !args.quiet {
            let triangles: usize = rocks.iter().map(|m| m.indices.len()).sum();
            let left_out = world.analytic.len();
            say!(
                "{} rocks exported, {triangles} triangles{}",
                rocks.len(),
                if left_out > 0 {
                    format!("; {left_out} analytic rocks left out (no triangles)")
                } else {
                    String::new()
                }
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn bench_command(args: BenchArgs) -> Result<ExitCode> {
    let progress = bench_progress(args.quiet);
    let t0 = Instant::now();
    if let Some(file) = args.heightmap.as_ref().or(args.obj.as_ref()) {
        progress.set_message(format!("reading {}", file.display()));
    }
    let geometry = match (&args.heightmap, &args.obj) {
        (Some(h), _) => {
            scree::bench::Geometry::Grid(scree::bench::heightmap_grid(h, args.extent, args.height)?)
        }
        (None, Some(o)) => scree::bench::Geometry::Mesh(scree::bench::obj_mesh(o)?),
        (None, None) => {
            return Err(Error::Usage(
                "scree bench: give --heightmap FILE or --obj FILE".into(),
            ))
        }
    };
    let load = t0.elapsed();
    let all = thread_pool(args.threads)?;
    let r = scree::bench::run(geometry, &all, args.reps as usize, args.copies, &progress)?;
    progress.finish_and_clear();
    if args.json {
        say!(
            "{}",
            serde_json::to_string(&r).expect("a report serialises")
        )?;
    } else {
        say!(
            "{} triangles (loaded in {:.0} ms) | {} build {:.0} ms, {:.1} bytes/triangle, peak RSS {:.0} MiB | SIMD {}\n\
             primary: {:.2} Mrays/s on 1 thread, {:.2} on {} ({:.2}×) | shadow: {:.2} / {:.2} Mrays/s ({:.2}×)\n\
             hits {} occluded {}{}",
            r.triangles,
            load.as_secs_f64() * 1e3,
            r.accel,
            r.build_ms,
            r.bytes_per_triangle,
            r.peak_rss_mib,
            r.simd,
            r.primary_mrays_1t,
            r.primary_mrays,
            r.threads,
            r.primary_mrays / r.primary_mrays_1t,
            r.shadow_mrays_1t,
            r.shadow_mrays,
            r.shadow_mrays / r.shadow_mrays_1t,
            r.hits,
            r.occluded,
            match (r.copies_primary_mrays, r.copies_shadow_mrays) {
                (Some(p), Some(s)) => format!(
                    "\ncopies, one thread each, {} at once: primary {:.2} Mrays/s ({:.2}×), shadow {:.2} ({:.2}×)",
                    r.threads,
                    p,
                    p / r.primary_mrays_1t,
                    s,
                    s / r.shadow_mrays_1t
                ),
                _ => String::new(),
            }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn texture_command(args: TextureArgs) -> Result<ExitCode> {
    output::check_writable(&args.output)?;
    if let Some(a) = &args.albedo {
        output::check_writable(a)?;
    }
    let maps = match args.kind {
        TextureKind::Cobblestone => scree::texture::cobblestone::Cobblestone {
            size: args.size,
            seed: args.seed,
            stones: args.stones,
        }
        .generate(),
    };
    output::write_png(&maps.height_image(), &args.output)?;
    if let Some(a) = &args.albedo {
        output::write_png(&maps.albedo_image(), a)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A rayon pool with `threads` workers (default: one per core).
fn thread_pool(threads: Option<u32>) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0) as usize)
        .build()
        .map_err(|e| Error::Usage(format!("cannot start worker threads: {e}")))
}

/// The progress bar on stderr (drawn only when stderr is a terminal), or a
/// hidden one.
fn progress_bar(quiet: bool) -> ProgressBar {
    stderr_progress(quiet, "{spinner} {msg} [{bar:40}] {percent}% eta {eta}")
}

/// `scree bench`'s progress on standard error: a spinner, redrawn by its
/// own thread while the file is read and the structure built, then a bar
/// over the passes, drawn only between them ([`scree::bench::run`]).
fn bench_progress(quiet: bool) -> ProgressBar {
    let bar = stderr_progress(quiet, "{spinner} {msg} {elapsed}");
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// A progress display on stderr in `template` (drawn only when stderr is a
/// terminal), or a hidden one.
fn stderr_progress(quiet: bool, template: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("static template")
            .progress_chars("=> "),
    );
    bar
}

/// Command-line values replace the scene's. A width or height alone keeps
/// the scene's aspect ratio.
fn apply_overrides(scene: &mut Scene, args: &RenderArgs) -> Result<()> {
    let p = &args.projection;
    scene.camera.projection = choice::choose(
        &scene.camera.projection,
        p.projection,
        choice::Overrides {
            fov: p.fov,
            width: p.ortho_width,
            mapping: p.mapping,
            circle: p.circle,
        },
    )?;
    let img = &mut scene.image;
    let aspect = img.width as f64 / img.height as f64;
    match (args.width, args.height) {
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
    if let Some(spp) = args.spp {
        img.samples = spp;
    }
    if let Some(seed) = args.seed {
        scene.seed = seed;
    }
    Ok(())
}
