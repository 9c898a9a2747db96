//! The scene file as written by users: serde structs that mirror the JSON.
//!
//! Every field has a default except `camera.position` and `camera.look_at`.
//! Unknown fields are rejected. Lengths are world units, angles degrees,
//! colours linear RGB. A minimal scene:
//!
//! ```json
//! { "camera": { "position": [0, 30, -60], "look_at": [0, 5, 0] } }
//! ```
//!
//! Each section's type lives beside the type it is checked into (the
//! camera's in [`crate::camera::file`], the terrain generator's in
//! [`crate::terrain::file`], and so on); [`super::validate`] walks the
//! sections. Nothing after validation reads these structs.

use serde::Deserialize;

pub use crate::animation::file::*;
pub use crate::camera::file::{CameraFile, ProjectionFile};
pub use crate::population::file::PopulationFile;
pub use crate::rock::file::*;
pub use crate::shade::file::*;
use crate::shade::tonemap::Tonemap;
pub use crate::terrain::file::*;

/// The whole scene file.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// The JSON Schema this file follows, for editors (`"../schema/scene.schema.json"`
    /// in the shipped scenes); scree ignores it.
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// Output image size, samples and tone mapping.
    #[serde(default)]
    pub image: ImageFile,
    /// Seed for every random choice in the scene (terrain, pixel jitter).
    #[serde(default)]
    pub seed: u64,
    /// Metres per world unit, > 0. Default 1. Sets the haze of clear air
    /// (the floor of the default fog) and reads GeoTIFF heights and pixel
    /// sizes, which are in metres, into world units.
    #[serde(default)]
    pub units: Option<f64>,
    /// Where the camera is, what it looks at and how it projects.
    pub camera: CameraFile,
    /// The terrain: extent, grid, generator and material.
    #[serde(default)]
    pub terrain: TerrainFile,
    /// Rocks placed one by one.
    #[serde(default)]
    pub rocks: Vec<RockFile>,
    /// Rocks scattered over the terrain from a seed.
    #[serde(default)]
    pub scatter: Option<ScatterFile>,
    /// The sun: a directional light with soft shadows.
    #[serde(default)]
    pub sun: SunFile,
    /// The sky seen by rays that miss and lighting the surfaces.
    #[serde(default)]
    pub sky: SkyFile,
    /// Light from the sky with occlusion: hemisphere samples per hit.
    #[serde(default)]
    pub sky_light: SkyLightFile,
    /// Distance fog that fades into the sky colour.
    #[serde(default)]
    pub fog: FogFile,
    /// Cloud layers: volumes of noise between two altitudes.
    #[serde(default)]
    pub clouds: Vec<CloudFile>,
    /// Seconds since the start, for things that move by themselves (the
    /// clouds' wind); an animation adds frame / fps. Default 0.
    #[serde(default)]
    pub time: f64,
    /// How light is gathered: `direct` (sun and sky, default) or `path`
    /// (bounce light).
    #[serde(default)]
    pub integrator: IntegratorFile,
    /// A water plane: a sea or lake at a height, reflecting and refracting.
    #[serde(default)]
    pub water: Option<WaterFile>,
    /// Motion: frames, and keyframes for the camera and the sun.
    #[serde(default)]
    pub animation: Option<AnimationFile>,
    /// Many instances of any mesh (bushes, trees, debris), placed where
    /// the ground allows them.
    #[serde(default)]
    pub populations: Vec<PopulationFile>,
    /// Plants grown from parameters (trees, shrubs, grass, herbs),
    /// placed where the ground suits each species.
    #[serde(default)]
    pub plants: Vec<crate::plant::PlantsFile>,
}

/// `image`: the output picture.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ImageFile {
    /// Width in pixels, 1..=16384. Default 960.
    pub width: u32,
    /// Height in pixels, 1..=16384. Default 540.
    pub height: u32,
    /// Samples per pixel (stratified jitter), 1..=4096. Default 4.
    pub samples: u32,
    /// Exposure in EV stops applied before tone mapping, -20..=20. Default 0.
    pub exposure: f64,
    /// Tone map from linear radiance to display: `aces` (filmic, default),
    /// `reinhard` or `none` (clamp).
    pub tonemap: Tonemap,
    /// Adaptive sampling: a pixel stops taking samples once the relative
    /// standard error of its mean luminance is below this, 0..=1 (0: every
    /// pixel takes `samples`). Samples come in rounds of 16, 32, 64, …
    /// Default 0.
    pub noise_threshold: f64,
    /// A transparent background (as Cycles' Film > Transparent): camera
    /// rays that meet no surface (the sky, seen through any fog) leave their
    /// pixel's share uncovered, so the alpha of a PNG or EXR is the land's
    /// coverage. Default false: the sky is drawn and every pixel is opaque.
    pub transparent: bool,
}

impl Default for ImageFile {
    fn default() -> Self {
        ImageFile {
            width: 960,
            height: 540,
            samples: 4,
            exposure: 0.0,
            tonemap: Default::default(),
            noise_threshold: 0.0,
            transparent: false,
        }
    }
}

/// `terrain`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema, Default)]
#[serde(default, deny_unknown_fields)]
pub struct TerrainFile {
    /// Extent [x, z] in world units, centred on the origin. Default [100,
    /// 100], or a georeferenced GeoTIFF's own extent (in `units`).
    pub size: Option<[f64; 2]>,
    /// Grid samples [columns along x, rows along z], each 2..=32769.
    /// Default [513, 513], or the image's size for an imported heightmap.
    pub resolution: Option<[u32; 2]>,
    /// Height of the highest sample above the lowest, world units, >= 0.
    /// Default 20; for a GeoTIFF DEM its highest height (in `units`), so
    /// that its metres are kept.
    pub height: Option<f64>,
    /// Heightmap generator. Default fault lines.
    pub generator: GeneratorFile,
    /// Surface colour. Default height/slope bands.
    pub material: MaterialFile,
    /// `smooth` (interpolated vertex normals, default) or `flat` faces.
    pub normals: NormalsFile,
    /// Map the generator's output onto [0, height] before post-processing.
    /// Default true, false for an imported heightmap (its values already
    /// span [0, height]).
    pub normalize: Option<bool>,
    /// Post-processing steps applied in order (smooth, thermal, hydraulic,
    /// terrace, normalize).
    pub post: Vec<crate::terrain::PostStep>,
    /// Rings of coarser land around the tile, out to 2^rings times its
    /// size, so that the land runs to the horizon. Default none.
    pub far_field: Option<FarFieldFile>,
    /// The planet's radius in world units: the land (tile and rings) falls
    /// away by d²/2R with distance d from the terrain's centre. Default
    /// none (flat). The Earth's is 6371000 metres.
    pub planet_radius: Option<f64>,
    /// Lakes in the land's hollows and rivers carving their way down to
    /// them and the sea. Default none.
    pub rivers: Option<crate::terrain::file::RiversFile>,
}

/// `integrator`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum IntegratorFile {
    /// Sun and sky light at the first surface, with shadow rays and
    /// `sky_light`'s occlusion rays; no bounce light.
    #[default]
    Direct,
    /// A path tracer: light bounces between surfaces. Next-event estimation
    /// of the sun's disc and of the sky (importance-sampled), multiple
    /// importance sampling with the surfaces' BSDFs, Russian roulette after
    /// the second bounce.
    Path {
        /// Bounces after the first surface, 0..=32 (0: direct light only,
        /// as `direct` without its occlusion distance). Default 2.
        #[serde(default = "default_bounces")]
        bounces: u32,
        /// Scattering events in clouds a path may take, 0..=1024 (they are
        /// not bounces). Each is another walk through the clouds, so
        /// thick clouds cost in proportion; past the limit a cloud's light
        /// stops short of its higher orders (it darkens). Default 16.
        #[serde(default = "default_volume_bounces")]
        volume_bounces: u32,
    },
}

fn default_volume_bounces() -> u32 {
    16
}

fn default_bounces() -> u32 {
    2
}
