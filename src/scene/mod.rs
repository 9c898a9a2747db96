//! Scenes: the JSON file ([`file`](mod@file)), its validation into a checked
//! [`Scene`] ([`validate`]), and error locations ([`locate`]).

pub mod choice;
pub mod file;
pub mod locate;
pub mod schema;
pub mod validate;

use std::path::{Path, PathBuf};

use glam::Vec3;

pub use crate::camera::{FisheyeCircle, FisheyeMapping};
pub use crate::shade::tonemap::Tonemap;
pub use file::SceneFile;

use crate::camera::{Camera, Projection};
use crate::error::{Error, Result};
use crate::rock::scatter::ScatterParams;
use crate::rock::{Displacement, Placement, Tessellation};
use crate::shade::{Fog, Material, Sky, SkyLight, Sun};
use crate::terrain::{Generator, PostStep, Recipe};
use crate::texture::Texture;
use std::sync::Arc;

/// The built-in default scene (`scenes/rocky-valley.json`).
pub const DEFAULT_SCENE: &str = include_str!("../../scenes/rocky-valley.json");
/// Name shown in messages for the built-in default scene.
pub const DEFAULT_SCENE_NAME: &str = "scenes/rocky-valley.json (built in)";

/// Largest image side, pixels.
pub const MAX_IMAGE_SIDE: u32 = 16384;
/// Most samples per pixel.
pub const MAX_SAMPLES: u32 = 4096;
/// Most bounces of the path tracer.
pub const MAX_BOUNCES: u32 = 32;
/// Largest terrain grid side, samples.
pub const MAX_TERRAIN_SIDE: u32 = 32769;
/// Memory a scene may need, bytes (estimated before anything is allocated).
pub const MEMORY_LIMIT: u64 = 16 << 30;
/// Estimated peak bytes per terrain sample: generation buffers, the
/// heights, smooth normals and the grid hierarchy (23 measured for a
/// fault-line terrain at 4097²; erosion needs more scratch). Tiles over
/// [`crate::terrain::DOUBLE_SAMPLES`] are counted as [`compact_tile_bytes`]
/// says instead.
pub const BYTES_PER_TERRAIN_SAMPLE: u64 = 40;
/// Bytes per sample of a tile over [`crate::terrain::DOUBLE_SAMPLES`] once
/// built: f32 heights and their min/max hierarchy, no stored normals.
pub const BYTES_PER_COMPACT_SAMPLE: u64 = 7;
/// Estimated peak bytes per stored rock triangle: mesh, BVH build records,
/// nodes and reordered triangles.
pub const BYTES_PER_TRIANGLE: u64 = 160;
/// Estimated bytes per rock instance: transforms, top-level node and box.
pub const BYTES_PER_INSTANCE: u64 = 256;
/// Bytes per image pixel: the linear framebuffer plus the encoded image.
pub const BYTES_PER_PIXEL: u64 = 24;

/// A checked scene: every value in range, angles in radians, paths resolved.
#[derive(Debug, Clone)]
pub struct Scene {
    /// Output picture settings.
    pub image: ImageSettings,
    /// Seed of every random choice.
    pub seed: u64,
    /// Metres per world unit.
    pub units: f64,
    /// Motion, if the scene is a sequence.
    pub animation: Option<crate::animation::Animation>,
    /// Instances of meshes placed over the terrain.
    pub populations: Vec<crate::population::Population>,
    /// The sun and sky as the file gave them, for frames that move the
    /// sun ([`Scene::posed`]).
    pub(crate) raw_sun: file::SunFile,
    pub(crate) raw_sky: file::SkyFile,
    /// Camera placement and projection.
    pub camera: CameraSettings,
    /// Terrain description.
    pub terrain: TerrainSettings,
    /// Rocks placed one by one.
    pub rocks: Vec<RockSpec>,
    /// Rocks scattered from a seed.
    pub scatter: Option<ScatterSpec>,
    /// The sun.
    pub sun: Sun,
    /// The sky.
    pub sky: Sky,
    /// Sky light sampling.
    pub sky_light: SkyLight,
    /// Fog.
    pub fog: Fog,
    /// A water plane, if any.
    pub water: Option<crate::shade::Water>,
    /// How light is gathered.
    pub integrator: Integrator,
}

/// How light is gathered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Integrator {
    /// Sun and sky light at the first surface.
    #[default]
    Direct,
    /// Paths of up to `bounces` bounces after the first surface.
    Path {
        /// Bounces after the first surface.
        bounces: u32,
    },
}

/// Checked `image` settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageSettings {
    /// Pixels, 1..=MAX_IMAGE_SIDE.
    pub width: u32,
    /// Pixels, 1..=MAX_IMAGE_SIDE.
    pub height: u32,
    /// Samples per pixel, 1..=MAX_SAMPLES.
    pub samples: u32,
    /// Linear multiplier 2^EV.
    pub exposure_scale: f32,
    /// Tone curve.
    pub tonemap: Tonemap,
    /// Relative standard error at which a pixel stops sampling (0: off).
    pub noise_threshold: f32,
    /// Samples whose camera ray meets no surface are left uncovered.
    pub transparent: bool,
}

/// Checked camera placement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraSettings {
    /// Eye, world units.
    pub position: Vec3,
    /// Target, world units (differs from `position`).
    pub look_at: Vec3,
    /// Up hint (not parallel to the view direction).
    pub up: Vec3,
    /// Projection, radians.
    pub projection: Projection,
}

/// Checked terrain description.
#[derive(Debug, Clone, PartialEq)]
pub struct TerrainSettings {
    /// Extent [x, z], world units.
    pub size: [f32; 2],
    /// Grid [columns, rows].
    pub resolution: [usize; 2],
    /// Highest minus lowest sample, world units.
    pub height: f64,
    /// Heightmap generator.
    pub generator: Generator,
    /// Surface material, levels in world units.
    pub material: Material,
    /// The layers, where `material` is [`Material::Layers`].
    pub layers: Option<std::sync::Arc<crate::shade::layers::Layers>>,
    /// Interpolated vertex normals (true) or flat faces.
    pub smooth: bool,
    /// Normalise to [0, height] before post-processing.
    pub normalize: bool,
    /// Post-processing steps.
    pub post: Vec<PostStep>,
    /// Far-field rings, if any.
    pub far_field: Option<crate::terrain::FarField>,
    /// The planet's radius (world units), if the land curves.
    pub planet_radius: Option<f64>,
}

impl TerrainSettings {
    /// What decides the heights.
    pub fn recipe(&self) -> Recipe {
        Recipe {
            generator: self.generator.clone(),
            resolution: self.resolution,
            size: [self.size[0] as f64, self.size[1] as f64],
            height: self.height,
            normalize: self.normalize,
            post: self.post.clone(),
            far_field: self.far_field,
            planet_radius: self.planet_radius,
        }
    }
}

/// A checked rock.
#[derive(Debug, Clone)]
pub struct RockSpec {
    /// Placement (with `rest_on_terrain`, the centre's y is set when the
    /// terrain exists).
    pub place: Placement,
    /// `Some(sink)` to rest on the terrain.
    pub rest_sink: Option<f32>,
    /// How the sphere is cut into triangles.
    pub tessellation: Tessellation,
    /// Displacement (world units).
    pub displacement: Option<Displacement>,
    /// Colour.
    pub material: RockMaterial,
    /// Bumps in the rock's own space (tessellated rocks).
    pub bump: Option<crate::shade::layers::Bump>,
    /// Flat faces instead of recomputed smooth normals.
    pub flat: bool,
    /// Traced as an exact ellipsoid.
    pub analytic: bool,
}

/// A rock's checked colour.
#[derive(Debug, Clone)]
pub enum RockMaterial {
    /// One colour.
    Albedo(Vec3),
    /// A texture wrapped by (u, v), or laid triplanar with tiles of this
    /// size (a fraction of the radius).
    Texture(Arc<Texture>, Option<f32>),
}

/// Checked scatter settings.
#[derive(Debug, Clone)]
pub struct ScatterSpec {
    /// Placement parameters.
    pub params: ScatterParams,
    /// How the shared meshes' sphere is cut into triangles.
    pub tessellation: Tessellation,
    /// Differently shaped meshes the rocks are instances of.
    pub variants: u32,
    /// Fracture planes cut into each variant.
    pub facets: u32,
    /// Per-rock brightness variation of an albedo, fraction.
    pub variation: f32,
    /// Displacement (fraction of the radius).
    pub displacement: Option<Displacement>,
    /// Colour.
    pub material: RockMaterial,
    /// Bumps in the rock's own space (tessellated rocks).
    pub bump: Option<crate::shade::layers::Bump>,
}

/// Estimated peak bytes of a tile over [`crate::terrain::DOUBLE_SAMPLES`],
/// whose heights stay f32 from generation on: the larger of what
/// generating and what tracing it hold at once. Diamond-square fills its
/// (2ᵏ + 1)² square in f32 (4 bytes a sample); the other generators make
/// f64 heights and round them (12); post steps run on an f64 copy with
/// scratch beside the f32 heights (4 + 8 + 8). Built, the tile holds
/// [`BYTES_PER_COMPACT_SAMPLE`], plus 8 for layered masks' curvature and
/// flow.
fn compact_tile_bytes(t: &TerrainSettings) -> u64 {
    let [w, h] = t.resolution;
    let samples = w as u64 * h as u64;
    let generated = match &t.generator {
        Generator::DiamondSquare(_) => {
            let n = crate::terrain::diamond_square::grid_side(w, h) as u64;
            4 * n * n
        }
        _ => 12 * samples,
    };
    let post = if t.post.is_empty() { 0 } else { 20 * samples };
    let layers = if t.layers.is_some() { 8 * samples } else { 0 };
    generated
        .max(post)
        .max(BYTES_PER_COMPACT_SAMPLE * samples + layers)
}

/// Stored triangles of all rocks of a scene (analytic ones have none;
/// scattered rocks share one mesh), and the number of scattered instances.
fn rock_triangles(scene: &Scene) -> (u64, u64) {
    let listed: u64 = scene
        .rocks
        .iter()
        .filter(|r| !r.analytic)
        .map(|r| r.tessellation.triangle_count() as u64)
        .sum();
    let (shared, instances) = scene.scatter.as_ref().map_or((0, 0), |s| {
        (
            s.tessellation.triangle_count() as u64 * s.variants as u64,
            s.params.count as u64,
        )
    });
    let populations: u64 = scene
        .populations
        .iter()
        .map(|p| p.mesh.indices.len() as u64)
        .sum();
    let placed: u64 = scene.populations.iter().map(|p| p.count as u64).sum();
    (listed + shared + populations, instances + placed)
}

impl Scene {
    /// The camera for this scene's image size.
    pub fn camera(&self) -> Camera {
        let c = &self.camera;
        Camera::new(
            c.position,
            c.look_at,
            c.up,
            c.projection,
            self.image.width,
            self.image.height,
        )
    }

    /// The scene at a pose of its animation: the camera's eye, look-at and
    /// fov and the sun (with the sky that follows it) replaced where the
    /// pose gives them. Values were checked with the animation's keys;
    /// between keys they stay within the keys' ranges.
    pub fn posed(&self, pose: &crate::animation::Pose) -> Result<Scene> {
        let mut s = self.clone();
        let f = |v: glam::DVec3| Vec3::new(v.x as f32, v.y as f32, v.z as f32);
        if let Some(p) = pose.position {
            s.camera.position = f(p);
        }
        if let Some(p) = pose.look_at {
            s.camera.look_at = f(p);
        }
        if let Some(u) = pose.up {
            s.camera.up = f(u);
        }
        let view = s.camera.look_at - s.camera.position;
        if view.length() < 1e-6 || s.camera.up.normalize().cross(view.normalize()).length() < 1e-4 {
            return Err(Error::Usage(format!(
                "the animation's camera at ({}, {}, {}) looks along its up direction or at its own eye; move the camera keys' look_at",
                s.camera.position.x, s.camera.position.y, s.camera.position.z
            )));
        }
        if let Some(fov) = pose.fov {
            s.camera.projection = choice::choose(
                &s.camera.projection,
                None,
                choice::Overrides {
                    fov: Some(fov),
                    ..Default::default()
                },
            )?;
        }
        if let Some((elevation, azimuth)) = pose.sun {
            let mut sun = self.raw_sun.clone();
            (sun.elevation, sun.azimuth) = (elevation, azimuth);
            (s.sun, s.sky) = validate::validate_sun_and_sky(&sun, &self.raw_sky).map_err(|e| {
                Error::Usage(format!("the animation's sun: {}: {}", e.path, e.message))
            })?;
        }
        Ok(s)
    }

    /// Estimated peak memory of a render, bytes.
    pub fn memory_estimate(&self) -> u64 {
        let [w, h] = self.terrain.resolution;
        let (rock_tris, instances) = rock_triangles(self);
        // Far-field rings are grids like the tile's.
        let rings = self.terrain.far_field.map_or(0, |f| {
            f.rings as u64 * (f.cells[0] as u64 + 1) * (f.cells[1] as u64 + 1)
        });
        let samples = w as u64 * h as u64;
        let tile = if samples as usize > crate::terrain::DOUBLE_SAMPLES {
            compact_tile_bytes(&self.terrain)
        } else {
            samples * BYTES_PER_TERRAIN_SAMPLE
        };
        tile + rings * BYTES_PER_TERRAIN_SAMPLE
            + rock_tris * BYTES_PER_TRIANGLE
            + instances * BYTES_PER_INSTANCE
            + self.image.width as u64 * self.image.height as u64 * BYTES_PER_PIXEL
    }

    /// Refuses scenes whose estimated memory exceeds [`MEMORY_LIMIT`]; the
    /// error points at `terrain.resolution` in `src` when the text is known.
    pub fn check_memory(&self, file: &str, src: Option<&str>) -> Result<()> {
        let need = self.memory_estimate();
        if need > MEMORY_LIMIT {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            let path = "terrain.resolution";
            // The far field's rings, where there are any: in the bill and
            // among what to lower.
            let (rings, lower_rings) = match self.terrain.far_field {
                Some(f) => (
                    format!(
                        " with {} far-field rings of {}×{}",
                        f.rings,
                        f.cells[0] + 1,
                        f.cells[1] + 1
                    ),
                    ", terrain.far_field.resolution or its rings",
                ),
                None => (String::new(), ""),
            };
            return Err(Error::Scene {
                file: file.to_string(),
                path: path.to_string(),
                line: src.and_then(|s| locate::locate(s, &locate::parse_path(path))),
                message: format!(
                    "this scene needs about {:.1} GiB ({}×{} terrain{}, {} rock triangles, {}×{} image), over the {:.0} GiB limit; lower terrain.resolution{}, the rocks' tessellation or the image size",
                    gib(need),
                    self.terrain.resolution[0],
                    self.terrain.resolution[1],
                    rings,
                    rock_triangles(self).0,
                    self.image.width,
                    self.image.height,
                    gib(MEMORY_LIMIT),
                    lower_rings
                ),
            });
        }
        Ok(())
    }
}

/// Edits applied to the raw scene before validation (command-line values
/// that the checked scene derives other values from, such as the sun).
pub type RawEdit<'a> = &'a dyn Fn(&mut SceneFile);

/// Parses and validates scene text; `file` names it in errors and `dir` is
/// where relative paths resolve.
pub fn parse(src: &str, file: &str, dir: &Path) -> Result<Scene> {
    parse_with(src, file, dir, &|_| {})
}

/// [`parse`] with `edit` applied to the raw scene before validation.
pub fn parse_with(src: &str, file: &str, dir: &Path, edit: RawEdit) -> Result<Scene> {
    let mut raw =
        validate::deserialize(src, file).map_err(|e| validate::explain_range(src, dir, e))?;
    edit(&mut raw);
    let scene = validate::validate(&raw, dir).map_err(|e| e.into_error(src, file))?;
    scene.check_memory(file, Some(src))?;
    Ok(scene)
}

/// Reads, parses and validates a scene file.
pub fn load(path: &Path) -> Result<Scene> {
    load_with(path, &|_| {})
}

/// [`load`] with `edit` applied to the raw scene before validation.
pub fn load_with(path: &Path, edit: RawEdit) -> Result<Scene> {
    let src = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let dir = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    parse_with(&src, &path.display().to_string(), &dir, edit)
}

/// The built-in default scene, validated.
pub fn default_scene() -> Scene {
    default_scene_with(&|_| {}).expect("the built-in scene is valid")
}

/// The built-in default scene with `edit` applied before validation.
pub fn default_scene_with(edit: RawEdit) -> Result<Scene> {
    parse_with(DEFAULT_SCENE, DEFAULT_SCENE_NAME, Path::new("scenes"), edit)
}
