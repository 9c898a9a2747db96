//! The command line's arguments: clap's structs and value enums, and their
//! translation into the library's types ([`scree::job::RenderJob`] and
//! friends). The library knows nothing of clap.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use scree::camera::{FisheyeCircle, FisheyeMapping, ProjectionFile};
use scree::error::{Error, Result};
use scree::job::{Area, Frames, RenderJob};
use scree::output::Format;
use scree::scene;
use scree::scene::overrides::named_value;
use scree::scene::Overrides;

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
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
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
    /// Trace the peer terrain workload (docs/performance.md) and print build
    /// time, memory, Mrays/s on 1 and all threads, and the hit checksums.
    Bench(BenchArgs),
    /// Serve a live preview of a scene on a local web page: it refines
    /// while you watch and follows the scene file as you edit it.
    Preview(PreviewArgs),
    /// Print the JSON Schema of the scene format (for editors; the same as
    /// schema/scene.schema.json).
    Schema,
    /// Validate a scene file without rendering; prints a one-line summary.
    Check {
        /// Scene file (JSON).
        scene: PathBuf,
    },
}

#[derive(clap::Args)]
pub struct RenderArgs {
    /// Scene file (JSON). Without it, the built-in default scene
    /// (scenes/rocky-valley.json).
    pub scene: Option<PathBuf>,
    /// Output file: .png (8-bit sRGB, tone mapped; 16-bit linear with
    /// --format png16) or .exr (linear float, exposure applied, no tone
    /// map). Default: the scene's name with .png, in the current folder.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Image width in pixels (keeps the scene's aspect ratio unless --height is given too).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_IMAGE_SIDE as i64))]
    pub width: Option<u32>,
    /// Image height in pixels (keeps the scene's aspect ratio unless --width is given too).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_IMAGE_SIDE as i64))]
    pub height: Option<u32>,
    /// Samples per pixel (replaces image.samples).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_SAMPLES as i64))]
    pub spp: Option<u32>,
    /// Worker threads. Default: one per core. The image is the same for any count.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Seed for terrain and sampling (replaces the scene's seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Sun elevation in degrees above the horizon (replaces sun.elevation;
    /// the physical skies follow it).
    #[arg(long, allow_negative_numbers = true, value_parser = elevation)]
    pub sun_elevation: Option<f64>,
    /// Sun compass bearing in degrees clockwise from north (replaces sun.azimuth).
    #[arg(long, allow_negative_numbers = true)]
    pub sun_azimuth: Option<f64>,
    #[command(flatten)]
    pub projection: ProjectionArgs,
    /// Output format; default from the extension (.png 8-bit sRGB, .exr
    /// linear float). `png16` writes 16-bit linear values to a .png.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Render only these pixels: x0,y0,x1,y1 (end exclusive). The output
    /// holds the region alone, with its place recorded in the file.
    #[arg(long, value_name = "X0,Y0,X1,Y1")]
    pub region: Option<String>,
    /// Render only this part of the image, as fractions: fx0,fy0,fx1,fy1.
    #[arg(long, value_name = "FX0,FY0,FX1,FY1")]
    pub crop: Option<String>,
    /// Render tile K (0-based) of --tiles N horizontal bands, for farm job
    /// arrays (e.g. --tile $SLURM_ARRAY_TASK_ID --tiles 16).
    #[arg(long, value_name = "K")]
    pub tile: Option<u32>,
    /// Number of tiles for --tile.
    #[arg(long, value_name = "N")]
    pub tiles: Option<u32>,
    /// With a region: write the full-size image, transparent outside the region.
    #[arg(long)]
    pub full_canvas: bool,
    /// Render frames FIRST..LAST (both included) of the scene's animation,
    /// building the world once; the output name's #### becomes the frame
    /// number. Frames already there from the same scene are kept.
    #[arg(long, value_name = "FIRST..LAST", value_parser = frame_range, conflicts_with = "frame")]
    pub frames: Option<(u32, u32)>,
    /// Render frame N of the scene's animation, as it is in a sequence.
    #[arg(long, value_name = "N")]
    pub frame: Option<u32>,
    /// With --frames: also write an animated PNG of the sequence (at most
    /// 320 pixels wide) to this file.
    #[arg(long, value_name = "ANIM.png", requires = "frames")]
    pub preview: Option<PathBuf>,
    /// Width of the --preview animation in pixels (the height keeps the
    /// aspect ratio).
    #[arg(long, value_name = "W", default_value_t = 320, value_parser = clap::value_parser!(u32).range(16..=4096))]
    pub preview_width: u32,
}

/// `A..B` (or `A..=B`), both ends included.
fn frame_range(s: &str) -> std::result::Result<(u32, u32), String> {
    let (a, b) = s
        .split_once("..=")
        .or_else(|| s.split_once(".."))
        .ok_or_else(|| format!("`{s}` is not FIRST..LAST (e.g. 0..119)"))?;
    let n = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{v}` is not a frame number"))
    };
    let (a, b) = (n(a)?, n(b)?);
    if a > b {
        return Err(format!("the first frame {a} is after the last {b}"));
    }
    Ok((a, b))
}

#[derive(clap::Args)]
pub struct PreviewArgs {
    /// Scene file (JSON); the preview follows it and the files it names.
    pub scene: PathBuf,
    /// Port to listen on (0: any free port; the URL printed says which).
    #[arg(long, default_value_t = 7878)]
    pub port: u16,
    /// Address to listen on. Other machines can reach the preview only if
    /// this is not a loopback address.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Open the page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Width of the preview image in pixels (the height keeps the scene's
    /// aspect ratio). Default: the scene's width, at most 960.
    #[arg(long, value_parser = clap::value_parser!(u32).range(16..=scene::MAX_IMAGE_SIDE as i64))]
    pub width: Option<u32>,
    /// Worker threads for rendering. Default: one per core.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// Region renders (PNG) of one frame, in any order.
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
    /// The merged PNG.
    #[arg(short, long)]
    pub output: PathBuf,
    /// No summary.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn elevation(s: &str) -> std::result::Result<f64, String> {
    number_where(s, |v| (-90.0..=90.0).contains(&v), "between -90 and 90")
}

/// `s` as a number that `ok` accepts; the error says it must be `range`.
pub fn number_where(
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
pub struct ProjectionArgs {
    /// Projection to render with instead of the scene's. Its parameters are
    /// the scene's when the type is the same, the type's defaults otherwise.
    /// The type as scene files tag it: perspective, orthographic,
    /// cylindrical, equirectangular or fisheye.
    #[arg(long, value_name = "TYPE", value_parser = projection_tag)]
    pub projection: Option<String>,
    /// Field of view, degrees (horizontal; across the image circle for fisheye).
    #[arg(long, allow_negative_numbers = true)]
    pub fov: Option<f64>,
    /// Fisheye mapping, as scene files name it: equidistant, equisolid,
    /// stereographic or orthographic.
    #[arg(long, value_parser = named::<FisheyeMapping>)]
    pub mapping: Option<FisheyeMapping>,
    /// Fisheye image circle, as scene files name it: circular or full_frame.
    #[arg(long, value_parser = named::<FisheyeCircle>)]
    pub circle: Option<FisheyeCircle>,
    /// Orthographic view width, world units.
    #[arg(long, allow_negative_numbers = true)]
    pub ortho_width: Option<f64>,
}

#[derive(clap::Args)]
pub struct TerrainArgs {
    /// Scene file (JSON). Without it, the built-in default scene.
    pub scene: Option<PathBuf>,
    /// Write the heights as a 16-bit grayscale PNG using the full range
    /// (lowest sample 0, highest 65535; top row = north edge).
    #[arg(long)]
    pub heightmap: Option<PathBuf>,
    /// Write the mesh as a Wavefront OBJ (world units, smooth normals, the
    /// rendered triangles and diagonal).
    #[arg(long)]
    pub obj: Option<PathBuf>,
    /// Write the heights as a GeoTIFF DEM: float32 metres (world units ×
    /// `units`), LZW, north row first, with the sample spacing as its
    /// pixel scale (a projected model, no CRS).
    #[arg(long)]
    pub geotiff: Option<PathBuf>,
    /// Write the scene's tessellated rocks (listed and scattered, placed,
    /// world units, unit normals) as one Wavefront OBJ; analytic rocks have
    /// no triangles and are left out.
    #[arg(long)]
    pub rocks_obj: Option<PathBuf>,
    /// Write the scene's plants (placed, world units: bark, leaves and
    /// flowers, each with its material) as one Wavefront OBJ, with its
    /// material library beside it (`Kd` the albedo, `Tf` a leaf's
    /// translucency).
    #[arg(long)]
    pub plants_obj: Option<PathBuf>,
    /// Write the scene's populations (every instance placed, world units,
    /// with texture coordinates) as one Wavefront OBJ, with its material
    /// library beside it (`Kd`, `d`, and `map_Kd` and `map_d` naming the
    /// images read).
    #[arg(long)]
    pub populations_obj: Option<PathBuf>,
    /// Grid samples per side instead of terrain.resolution (square grid).
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=scene::MAX_TERRAIN_SIDE as i64))]
    pub resolution: Option<u32>,
    /// Seed instead of the scene's.
    #[arg(long)]
    pub seed: Option<u64>,
    /// No summary.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// The workload's 16-bit heightmap (terrain_N.png), traced through the
    /// terrain grid hierarchy.
    #[arg(long, conflicts_with = "obj", required_unless_present = "obj")]
    pub heightmap: Option<PathBuf>,
    /// The workload's mesh (terrain_N.obj), traced through the general BVH.
    #[arg(long)]
    pub obj: Option<PathBuf>,
    /// Side of the heightmap's square, world units (as a scene's
    /// `terrain.size`: above 0, at most 1e7).
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true, value_parser = extent)]
    pub extent: f32,
    /// Height of the heightmap's full range, world units (as a scene's
    /// `terrain.height`: 0 to 1e6).
    #[arg(long, default_value_t = 15.0, allow_negative_numbers = true, value_parser = relief)]
    pub height: f32,
    /// Threads of the all-threads runs (1–1024). Default: one per core.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Repetitions of each pass, 1–1000 (rates are medians).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: u32,
    /// Also run, in each repetition, one one-thread copy of the passes per
    /// thread, all at once, each on its own buffers: a control that shows
    /// what the machine gives independent work, beside the thread scaling.
    #[arg(long)]
    pub copies: bool,
    /// Print the figures as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// No progress on standard error (reading, building, each pass).
    #[arg(short, long)]
    pub quiet: bool,
}

/// A heightmap's side for `scree bench`: the range of a scene's
/// `terrain.size`.
pub fn extent(s: &str) -> std::result::Result<f32, String> {
    number_where(s, |v| v > 0.0 && v <= 1e7, "above 0 and at most 1e7").map(|v| v as f32)
}

/// A heightmap's full-range height for `scree bench`: the range of a
/// scene's `terrain.height`.
pub fn relief(s: &str) -> std::result::Result<f32, String> {
    number_where(s, |v| (0.0..=1e6).contains(&v), "between 0 and 1e6").map(|v| v as f32)
}

#[derive(clap::Args)]
pub struct TextureArgs {
    /// Which texture: `cobblestone` (tileable Worley stones with mortar
    /// gaps), or a tileable ground colour map for layered materials:
    /// `strata`, `grass`, `snow`.
    #[arg(value_enum)]
    pub kind: TextureKind,
    /// Output PNG: for cobblestone 16-bit grayscale heights (0 mortar, 1
    /// stone tops); for the ground textures the colour map (8-bit RGB,
    /// linear reflectance).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Cobblestone only: also write the matching colour map (8-bit RGB,
    /// linear reflectance).
    #[arg(long)]
    pub albedo: Option<PathBuf>,
    /// Side of the square texture, pixels.
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(8..=8192))]
    pub size: u32,
    /// Seed of the stone layout and colours.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Approximate number of stones (rounded to a square number).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(4..=65536))]
    pub stones: u32,
}

/// Generated textures.
#[derive(Clone, Copy, ValueEnum)]
pub enum TextureKind {
    /// Rounded stones separated by darker mortar gaps.
    Cobblestone,
    /// Horizontal bands of sandstone and shale (cliff faces under
    /// triplanar mapping).
    Strata,
    /// Green grass with drier patches.
    Grass,
    /// Snow with soft blue-grey hollows.
    Snow,
}

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The reference image (8- or 16-bit PNG).
    pub reference: PathBuf,
    /// The image to test against it.
    pub result: PathBuf,
    /// A pixel differs when one of its channels differs by more than this
    /// (0–1 of the full range; 1/255 ≈ 0.0039 is one 8-bit step).
    #[arg(long, default_value_t = 0.0, value_parser = unit_interval)]
    pub threshold: f64,
    /// Fail when more than this percentage of pixels differ.
    #[arg(long, default_value_t = 0.0, value_parser = percentage)]
    pub fail_percent: f64,
    /// Fail when the mean FLIP error exceeds this (0–1).
    #[arg(long, value_parser = unit_interval)]
    pub max_flip: Option<f64>,
    /// Write a heat map of the differences (PNG).
    #[arg(long)]
    pub heatmap: Option<PathBuf>,
    /// Write all metrics and the verdict as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write DIR/index.html with reference, result and heat map side by side.
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Print nothing; only the exit code tells.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn unit_interval(s: &str) -> std::result::Result<f64, String> {
    number_where(s, |v| (0.0..=1.0).contains(&v), "between 0 and 1")
}

pub fn percentage(s: &str) -> std::result::Result<f64, String> {
    number_where(s, |v| (0.0..=100.0).contains(&v), "between 0 and 100")
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Scene file (JSON). Without it, the built-in default scene.
    pub scene: Option<PathBuf>,
    /// Output PNG file.
    #[arg(short, long, default_value = "compare.png")]
    pub output: PathBuf,
    /// Comma-separated projections, each TYPE[:NUMBER][:MAPPING][:CIRCLE]
    /// (NUMBER: fov in degrees, or view width for orthographic), e.g.
    /// `perspective:70,cylindrical:360,fisheye:200:equisolid`.
    #[arg(
        long,
        default_value = "perspective,cylindrical,equirectangular,fisheye"
    )]
    pub projections: String,
    /// Width of each cell in pixels; the height follows the scene's aspect ratio.
    #[arg(long, default_value_t = 480, value_parser = clap::value_parser!(u32).range(16..=8192))]
    pub cell_width: u32,
    /// Samples per pixel (replaces image.samples).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=scene::MAX_SAMPLES as i64))]
    pub spp: Option<u32>,
    /// Worker threads. Default: one per core.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Draw a guide to each projection's distortion over its cell:
    /// `tissot` (Tissot's indicatrices: circles of 4° every 30°) or `grid`
    /// (lines of equal azimuth and elevation every 15°).
    #[arg(long, value_enum)]
    pub overlay: Option<OverlayArg>,
    /// Render frames FIRST..LAST of the scene's animation into an animated
    /// PNG of the grid (the output), building the world once.
    #[arg(long, value_name = "FIRST..LAST", value_parser = frame_range)]
    pub frames: Option<(u32, u32)>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Guides over `scree compare`'s cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OverlayArg {
    /// Tissot's indicatrices.
    Tissot,
    /// Lines of equal azimuth and elevation.
    Grid,
}

impl From<OverlayArg> for scree::overlay::Overlay {
    fn from(o: OverlayArg) -> scree::overlay::Overlay {
        match o {
            OverlayArg::Tissot => scree::overlay::Overlay::Tissot,
            OverlayArg::Grid => scree::overlay::Overlay::Grid,
        }
    }
}

/// Output formats, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// 8-bit sRGB PNG after exposure and tone mapping.
    Png,
    /// 16-bit PNG of linear values (exposure applied, no tone map, clamped to 1).
    Png16,
    /// OpenEXR with linear float radiance (exposure applied, no tone map).
    Exr,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Png => Format::Png,
            FormatArg::Png16 => Format::Png16,
            FormatArg::Exr => Format::Exr,
        }
    }
}

impl ProjectionArgs {
    /// The overrides the arguments give.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            projection: self.projection.clone(),
            fov: self.fov,
            ortho_width: self.ortho_width,
            mapping: self.mapping,
            circle: self.circle,
            ..Overrides::default()
        }
    }
}

/// A projection type as scene files tag it.
fn projection_tag(s: &str) -> std::result::Result<String, String> {
    let tag = s.to_ascii_lowercase();
    ProjectionFile::named(&tag).map(|_| tag)
}

/// A value of a scene-file enum, as scene files name it.
fn named<T: serde::de::DeserializeOwned>(s: &str) -> std::result::Result<T, String> {
    named_value(s).ok_or_else(|| format!("`{s}` is not a name scene files use here"))
}

impl RenderArgs {
    /// The render job the arguments describe.
    pub fn job(&self) -> Result<RenderJob> {
        let area = match (&self.region, &self.crop, self.tile, self.tiles) {
            (Some(r), None, None, None) => Area::Region(r.clone()),
            (None, Some(c), None, None) => Area::Crop(c.clone()),
            (None, None, Some(k), Some(n)) => Area::Tile { k, n },
            (None, None, None, None) => Area::Full,
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
        Ok(RenderJob {
            scene: self.scene.clone(),
            output: self.output.clone(),
            overrides: Overrides {
                width: self.width,
                height: self.height,
                samples: self.spp,
                seed: self.seed,
                sun_elevation: self.sun_elevation,
                sun_azimuth: self.sun_azimuth,
                ..self.projection.overrides()
            },
            format: self.format.map(Into::into),
            area,
            full_canvas: self.full_canvas,
            frames: match (self.frames, self.frame) {
                (Some((first, last)), _) => Some(Frames::Range { first, last }),
                (None, Some(k)) => Some(Frames::One(k)),
                (None, None) => None,
            },
            preview: self.preview.clone(),
            preview_width: Some(self.preview_width),
        })
    }
}
