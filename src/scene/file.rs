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
//! These structs are checked and converted by [`super::validate`]; nothing
//! else in scree reads them.

use serde::Deserialize;

use crate::camera::{FisheyeCircle, FisheyeMapping, Projection};
use crate::shade::tonemap::Tonemap;
use crate::terrain::{DiamondSquare, FaultLine};

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
}

/// One population: an OBJ mesh placed `count` times over the terrain.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PopulationFile {
    /// Wavefront OBJ, relative to the scene file's folder: y up, its origin
    /// the point that stands on the ground. Triangulated on reading;
    /// normals from the file, or recomputed. Required.
    pub mesh: String,
    /// Instances wanted, 0..=1000000 (fewer where the masks leave little
    /// ground). Default 1000.
    #[serde(default = "default_population_count")]
    pub count: u32,
    /// Scale range [min, max], 0 < min <= max <= 1000. Default [1, 1].
    #[serde(default = "default_population_scale")]
    pub scale: [f64; 2],
    /// 0 stands upright, 1 perpendicular to the ground, 0..=1. Default 0.
    #[serde(default)]
    pub align_to_ground: f64,
    /// Where instances may stand.
    #[serde(default, rename = "where")]
    pub where_: WhereFile,
    /// Seed of the placement. Default 0.
    #[serde(default)]
    pub seed: u64,
    /// Surface colour (`albedo` only). Default a green [0.12, 0.2, 0.07].
    #[serde(default = "default_population_material")]
    pub material: RockMaterialFile,
}

/// `where`: the masks of a population, the same measures as the terrain's
/// height bands and steep faces.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhereFile {
    /// Heights allowed, fractions of the terrain's relief (0 its lowest
    /// point, 1 its highest). Default [0, 1].
    #[serde(default = "default_where_height")]
    pub height: [f64; 2],
    /// Slopes allowed, degrees from horizontal. Default [0, 90].
    #[serde(default = "default_where_slope")]
    pub slope: [f64; 2],
}

impl Default for WhereFile {
    fn default() -> Self {
        WhereFile {
            height: default_where_height(),
            slope: default_where_slope(),
        }
    }
}

fn default_population_count() -> u32 {
    1000
}
fn default_population_scale() -> [f64; 2] {
    [1.0, 1.0]
}
fn default_population_material() -> RockMaterialFile {
    RockMaterialFile::Albedo {
        color: [0.12, 0.2, 0.07],
        variation: 0.0,
        bump: None,
    }
}
fn default_where_height() -> [f64; 2] {
    [0.0, 1.0]
}
fn default_where_slope() -> [f64; 2] {
    [0.0, 90.0]
}

/// `animation`: a sequence of frames. The terrain and rocks are built
/// once; the camera and the sun move. `scree render --frames A..B` renders
/// them, `--frame K` one of them; a scene without `animation` is a still.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnimationFile {
    /// Frames in the sequence, numbered from 0. Required.
    pub frames: u32,
    /// Frames per second, for previews. Default 24.
    #[serde(default = "default_fps")]
    pub fps: f64,
    /// Camera keyframes, in increasing `frame` order; the camera's
    /// position and look-at follow centripetal Catmull-Rom splines through
    /// them, its fov eases between keys. None: the scene's camera.
    #[serde(default)]
    pub camera: Vec<CameraKeyFile>,
    /// Keep the camera at least `clearance` above the terrain under it
    /// (a rover's follow camera: it never dips underground).
    #[serde(default)]
    pub follow: Option<FollowFile>,
    /// Sun keyframes: elevation and azimuth ease between keys. Give these
    /// or `time_of_day`, not both.
    #[serde(default)]
    pub sun: Vec<SunKeyFile>,
    /// The sun's path over a day, from the first frame's hour to the last
    /// one's.
    #[serde(default)]
    pub time_of_day: Option<TimeOfDayFile>,
}

fn default_fps() -> f64 {
    24.0
}

/// A camera keyframe.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CameraKeyFile {
    /// The frame of the key (fractions allowed).
    pub frame: f64,
    /// Eye position, world units.
    pub position: [f64; 3],
    /// Point looked at, world units (differs from `position`).
    pub look_at: [f64; 3],
    /// Field of view, degrees, for projections that have one. Default:
    /// the scene's.
    #[serde(default)]
    pub fov: Option<f64>,
    /// The image's up direction (a roll), in every key or none. Default:
    /// the scene's `camera.up`.
    #[serde(default)]
    pub up: Option<[f64; 3]>,
}

/// `animation.follow`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FollowFile {
    /// Least height of the eye above the terrain, world units. Default 2.
    #[serde(default = "default_clearance")]
    pub clearance: f64,
}

fn default_clearance() -> f64 {
    2.0
}

/// A sun keyframe.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SunKeyFile {
    /// The frame of the key.
    pub frame: f64,
    /// Degrees above the horizon.
    pub elevation: f64,
    /// Degrees clockwise from north.
    pub azimuth: f64,
}

/// `animation.time_of_day`: the sun's place from the date, the latitude
/// and the local solar time (12 is solar noon).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeOfDayFile {
    /// Degrees, north positive.
    pub latitude: f64,
    /// Day of the year, 1 (1 January) to 366.
    pub day: u32,
    /// Solar time at the first frame, hours.
    pub start_hour: f64,
    /// Solar time at the last frame, hours.
    pub end_hour: f64,
}

/// `image`: the output picture.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageFile {
    /// Width in pixels, 1..=16384. Default 960.
    #[serde(default = "default_width")]
    pub width: u32,
    /// Height in pixels, 1..=16384. Default 540.
    #[serde(default = "default_height")]
    pub height: u32,
    /// Samples per pixel (stratified jitter), 1..=4096. Default 4.
    #[serde(default = "default_samples")]
    pub samples: u32,
    /// Exposure in EV stops applied before tone mapping, -20..=20. Default 0.
    #[serde(default)]
    pub exposure: f64,
    /// Tone map from linear radiance to display: `aces` (filmic, default),
    /// `reinhard` or `none` (clamp).
    #[serde(default)]
    pub tonemap: Tonemap,
    /// Adaptive sampling: a pixel stops taking samples once the relative
    /// standard error of its mean luminance is below this, 0..=1 (0: every
    /// pixel takes `samples`). Samples come in rounds of 16, 32, 64, …
    /// Default 0.
    #[serde(default)]
    pub noise_threshold: f64,
    /// A transparent background (as Cycles' Film > Transparent): camera
    /// rays that meet no surface (the sky, seen through any fog) leave their
    /// pixel's share uncovered, so the alpha of a PNG or EXR is the land's
    /// coverage. Default false: the sky is drawn and every pixel is opaque.
    #[serde(default)]
    pub transparent: bool,
}

fn default_width() -> u32 {
    960
}
fn default_height() -> u32 {
    540
}
fn default_samples() -> u32 {
    4
}

impl Default for ImageFile {
    fn default() -> Self {
        ImageFile {
            width: default_width(),
            height: default_height(),
            samples: default_samples(),
            exposure: 0.0,
            tonemap: Tonemap::default(),
            noise_threshold: 0.0,
            transparent: false,
        }
    }
}

/// `camera`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CameraFile {
    /// Eye position, world units. Required.
    pub position: [f64; 3],
    /// Point the camera looks at, world units. Required; differs from `position`.
    pub look_at: [f64; 3],
    /// World direction that is "up" in the image. Default [0, 1, 0].
    #[serde(default = "default_up")]
    pub up: [f64; 3],
    /// The projection; default `{"type": "perspective", "fov": 60}`.
    #[serde(default)]
    pub projection: ProjectionFile,
}

fn default_up() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

/// `camera.projection`: how image points map to ray directions.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ProjectionFile {
    /// Pinhole ("flat"): straight lines stay straight.
    Perspective {
        /// Horizontal field of view, degrees, in (0, 180). Default 60.
        #[serde(default = "default_perspective_fov")]
        fov: f64,
    },
    /// Parallel rays along the view direction.
    Orthographic {
        /// Width of the view, world units, > 0. Default 100.
        #[serde(default = "default_ortho_width")]
        width: f64,
    },
    /// Panorama curved about the vertical axis only.
    Cylindrical {
        /// Horizontal field of view, degrees, in (0, 360]. Default 240.
        #[serde(default = "default_cylindrical_fov")]
        fov: f64,
    },
    /// Curved about both axes (latitude/longitude).
    Equirectangular {
        /// Horizontal field of view, degrees, in (0, 360]. Default 360.
        #[serde(default = "default_equirect_fov")]
        fov: f64,
    },
    /// Fisheye lens.
    Fisheye {
        /// Field of view across the image circle, degrees: (0, 360], at
        /// most 180 for the `orthographic` mapping. Default 180.
        #[serde(default = "default_fisheye_fov")]
        fov: f64,
        /// Radial mapping from off-axis angle to image radius.
        #[serde(default)]
        mapping: FisheyeMapping,
        /// `circular` (the circle fits the image; outside is background)
        /// or `full_frame` (the circle reaches the image corners).
        #[serde(default)]
        circle: FisheyeCircle,
    },
}

fn default_perspective_fov() -> f64 {
    60.0
}
fn default_ortho_width() -> f64 {
    100.0
}
fn default_cylindrical_fov() -> f64 {
    240.0
}
fn default_equirect_fov() -> f64 {
    360.0
}
fn default_fisheye_fov() -> f64 {
    180.0
}

impl ProjectionFile {
    /// A checked projection back in scene-file form (degrees).
    pub fn of(p: &Projection) -> ProjectionFile {
        let deg = |a: f32| a.to_degrees() as f64;
        match *p {
            Projection::Perspective { fov } => ProjectionFile::Perspective { fov: deg(fov) },
            Projection::Orthographic { width } => ProjectionFile::Orthographic {
                width: width as f64,
            },
            Projection::Cylindrical { fov } => ProjectionFile::Cylindrical { fov: deg(fov) },
            Projection::Equirectangular { fov } => {
                ProjectionFile::Equirectangular { fov: deg(fov) }
            }
            Projection::Fisheye {
                fov,
                mapping,
                circle,
            } => ProjectionFile::Fisheye {
                fov: deg(fov),
                mapping,
                circle,
            },
        }
    }
}

impl Default for ProjectionFile {
    fn default() -> Self {
        ProjectionFile::Perspective {
            fov: default_perspective_fov(),
        }
    }
}

/// `terrain`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TerrainFile {
    /// Extent [x, z] in world units, centred on the origin. Default [100,
    /// 100], or a georeferenced GeoTIFF's own extent (in `units`).
    #[serde(default)]
    pub size: Option<[f64; 2]>,
    /// Grid samples [columns along x, rows along z], each 2..=32769.
    /// Default [513, 513], or the image's size for an imported heightmap.
    #[serde(default)]
    pub resolution: Option<[u32; 2]>,
    /// Height of the highest sample above the lowest, world units, >= 0.
    /// Default 20; for a GeoTIFF DEM its highest height (in `units`), so
    /// that its metres are kept.
    #[serde(default)]
    pub height: Option<f64>,
    /// Heightmap generator. Default fault lines.
    #[serde(default)]
    pub generator: GeneratorFile,
    /// Surface colour. Default height/slope bands.
    #[serde(default)]
    pub material: MaterialFile,
    /// `smooth` (interpolated vertex normals, default) or `flat` faces.
    #[serde(default)]
    pub normals: NormalsFile,
    /// Map the generator's output onto [0, height] before post-processing.
    /// Default true, false for an imported heightmap (its values already
    /// span [0, height]).
    #[serde(default)]
    pub normalize: Option<bool>,
    /// Post-processing steps applied in order (smooth, thermal, hydraulic,
    /// terrace, normalize).
    #[serde(default)]
    pub post: Vec<crate::terrain::PostStep>,
    /// Rings of coarser land around the tile, out to 2^rings times its
    /// size, so that the land runs to the horizon. Default none.
    #[serde(default)]
    pub far_field: Option<FarFieldFile>,
    /// The planet's radius in world units: the land (tile and rings) falls
    /// away by d²/2R with distance d from the terrain's centre. Default
    /// none (flat). The Earth's is 6371000 metres.
    #[serde(default)]
    pub planet_radius: Option<f64>,
}

/// `terrain.far_field`: nested rings of coarser grids around the tile.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FarFieldFile {
    /// Number of rings, 1..=12; ring k spans 2^k times the tile's size,
    /// each twice the cell size of the one inside it. Default 6.
    #[serde(default = "default_rings")]
    pub rings: u32,
    /// Samples along the longer side of each ring, 129..=8193. The first
    /// ring's cells must be whole tile cells (resolution − 1 divides twice
    /// the tile's cells along that side) and each side of a ring 8m cells.
    /// Default: the coarsest such rings (1, 2, 4, ... tile cells a first-ring
    /// cell) that together hold no more samples than the tile.
    #[serde(default)]
    pub resolution: Option<u32>,
}

fn default_rings() -> u32 {
    6
}

/// The terrain's extent when a scene gives none (and no DEM decides).
pub const DEFAULT_TERRAIN_SIZE: [f64; 2] = [100.0, 100.0];
/// Grid samples when a scene gives none (and no heightmap decides).
pub const DEFAULT_RESOLUTION: [u32; 2] = [513, 513];
/// The terrain's relief when a scene gives none (and no DEM decides).
pub const DEFAULT_TERRAIN_HEIGHT: f64 = 20.0;

/// Normal interpolation over the terrain mesh.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NormalsFile {
    /// Average of adjacent face normals, interpolated across each triangle.
    #[default]
    Smooth,
    /// Each triangle's own normal.
    Flat,
}

/// `terrain.generator`: a tagged generator.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum GeneratorFile {
    /// Random fault lines (see [`FaultLine`]).
    FaultLine(FaultLine),
    /// Diamond-square midpoint displacement (see [`DiamondSquare`]).
    DiamondSquare(DiamondSquare),
    /// Random circular hills (see [`crate::terrain::Hills`]).
    Hills(crate::terrain::Hills),
    /// Fractal value or Perlin noise (see [`crate::terrain::Noise`]).
    Noise(crate::terrain::Noise),
    /// An imported grayscale PNG (see [`crate::terrain::import`]).
    Heightmap(crate::terrain::import::HeightmapFile),
}

impl Default for GeneratorFile {
    fn default() -> Self {
        GeneratorFile::FaultLine(FaultLine::default())
    }
}

/// `terrain.material`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaterialFile {
    /// Colour bands by height (sand, grass, rock, snow); steep faces are rock.
    HeightSlope {
        /// Top of the sand band, fraction of the terrain height. Default 0.06.
        #[serde(default = "default_sand_level")]
        sand_level: f64,
        /// Top of the grass band, fraction of the terrain height. Default 0.5.
        #[serde(default = "default_grass_level")]
        grass_level: f64,
        /// Bottom of the snow band, fraction of the terrain height. Default 0.8.
        #[serde(default = "default_snow_level")]
        snow_level: f64,
        /// Faces steeper than this many degrees from horizontal are rock. Default 40.
        #[serde(default = "default_steep_angle")]
        steep_angle: f64,
        /// Per-face brightness variation from a hash of the triangle, as a
        /// fraction (0.04: each face 4 % lighter or darker at most), 0..=0.5.
        /// Default 0.04.
        #[serde(default = "default_variation")]
        variation: f64,
    },
    /// One colour everywhere.
    Albedo {
        /// Linear RGB reflectance, each in [0, 1].
        color: [f64; 3],
    },
    /// Layers of colour, texture and bumps, each masked by height, slope,
    /// aspect, curvature and flow, blended top to bottom over the first.
    Layers {
        /// 1..=16 layers, bottom first; the first covers all ground and
        /// takes no mask.
        layers: Vec<LayerFile>,
        /// Bumps and albedo variation finer than the grid, everywhere.
        #[serde(default)]
        detail: Option<DetailFile>,
    },
}

/// One layer of a layered material.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LayerFile {
    /// Linear RGB albedo, each 0..=1 (multiplies the texture). Default
    /// [0.5, 0.5, 0.5].
    #[serde(default = "default_layer_color")]
    pub color: [f64; 3],
    /// A tileable image, relative to the scene file's folder, laid along
    /// the three axes (triplanar) so steep faces are not stretched.
    #[serde(default)]
    pub texture: Option<String>,
    /// World size of one tile of the texture, > 0. Default 10.
    #[serde(default = "default_texture_size")]
    pub texture_size: f64,
    /// Noise bumps of this layer.
    #[serde(default)]
    pub bump: Option<BumpFile>,
    /// Roughness of a glossy sun highlight (GGX microfacets, dielectric),
    /// 0.1..=1: low for wet rock or ice, high for a dull sheen. Default
    /// none: matte.
    #[serde(default)]
    pub roughness: Option<f64>,
    /// Where the layer lies. Default everywhere.
    #[serde(default)]
    pub mask: Option<MaskFile>,
}

/// Noise bumps.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BumpFile {
    /// Height of the bumps, world units, 0..=1000.
    pub height: f64,
    /// Feature size, world units, > 0.
    pub size: f64,
}

/// Fine detail everywhere.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DetailFile {
    /// Height of the bumps, world units, 0..=1000. Default 0.05.
    #[serde(default = "default_detail_height")]
    pub height: f64,
    /// Feature size, world units, > 0. Default 0.5.
    #[serde(default = "default_detail_size")]
    pub size: f64,
    /// Largest change of the albedo, a fraction, 0..=1. Default 0.1.
    #[serde(default = "default_detail_variation")]
    pub variation: f64,
}

/// Where a layer lies: each criterion given is a window [lo, hi]; the
/// layer's weight is the product of its windows.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaskFile {
    /// Height, fractions of the terrain's relief, each 0..=1.
    #[serde(default)]
    pub height: Option<[f64; 2]>,
    /// Slope, degrees from horizontal, each 0..=90.
    #[serde(default)]
    pub slope: Option<[f64; 2]>,
    /// The compass bearing the slope faces, degrees clockwise from north
    /// (+z) toward east (+x); with `aspect_width`.
    #[serde(default)]
    pub aspect: Option<f64>,
    /// Half-width of the aspect window, degrees, 0..=180. Default 60.
    #[serde(default = "default_aspect_width")]
    pub aspect_width: f64,
    /// Curvature, −1 (ridges) to 1 (gullies), each −1..=1.
    #[serde(default)]
    pub curvature: Option<[f64; 2]>,
    /// Water flow, 0 (none) to 1 (main channels), each 0..=1.
    #[serde(default)]
    pub flow: Option<[f64; 2]>,
    /// Soft edge width, a fraction of each criterion's unit (height 1,
    /// slope 90°, aspect 180°, curvature 2, flow 1), 0..=1. Default 0.05.
    #[serde(default = "default_fuzz")]
    pub fuzz: f64,
    /// Noise that breaks the borders: added to the criteria, a fraction of
    /// their unit, 0..=1. Default 0.
    #[serde(default)]
    pub noise: f64,
    /// Feature size of that noise, world units, > 0. Default 10.
    #[serde(default = "default_noise_size")]
    pub noise_size: f64,
}

fn default_layer_color() -> [f64; 3] {
    [0.5, 0.5, 0.5]
}
fn default_texture_size() -> f64 {
    10.0
}
fn default_detail_height() -> f64 {
    0.05
}
fn default_detail_size() -> f64 {
    0.5
}
fn default_detail_variation() -> f64 {
    0.1
}
fn default_aspect_width() -> f64 {
    60.0
}
fn default_fuzz() -> f64 {
    0.05
}
fn default_noise_size() -> f64 {
    10.0
}

fn default_sand_level() -> f64 {
    0.06
}
fn default_grass_level() -> f64 {
    0.5
}
fn default_snow_level() -> f64 {
    0.8
}
fn default_steep_angle() -> f64 {
    40.0
}
fn default_variation() -> f64 {
    0.04
}

impl Default for MaterialFile {
    fn default() -> Self {
        MaterialFile::HeightSlope {
            sand_level: default_sand_level(),
            grass_level: default_grass_level(),
            snow_level: default_snow_level(),
            steep_angle: default_steep_angle(),
            variation: default_variation(),
        }
    }
}

/// `sun`: directional light.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SunFile {
    /// Degrees above the horizon, -90..=90. Default 35.
    #[serde(default = "default_elevation")]
    pub elevation: f64,
    /// Compass bearing of the sun, degrees clockwise from north (+z) toward
    /// east (+x), any value. Default 210 (south-south-west).
    #[serde(default = "default_azimuth")]
    pub azimuth: f64,
    /// Irradiance on a surface facing the sun, 0..=1000. Default 6.
    #[serde(default = "default_intensity")]
    pub intensity: f64,
    /// Linear RGB tint, each 0..=1. Default [1, 0.95, 0.88]; with the
    /// `preetham` and `mars` skies the model's own colour multiplies it.
    #[serde(default = "default_sun_color")]
    pub color: [f64; 3],
    /// Apparent diameter of the sun's disc, degrees, 0..=20; shadow rays
    /// sample the disc, so larger suns cast softer shadows. 0 gives hard
    /// shadows. Default 0.53 (the Sun seen from Earth).
    #[serde(default = "default_angular_diameter")]
    pub angular_diameter: f64,
}

fn default_angular_diameter() -> f64 {
    0.53
}

fn default_elevation() -> f64 {
    35.0
}
fn default_azimuth() -> f64 {
    210.0
}
fn default_intensity() -> f64 {
    6.0
}
fn default_sun_color() -> [f64; 3] {
    [1.0, 0.95, 0.88]
}

impl Default for SunFile {
    fn default() -> Self {
        SunFile {
            elevation: default_elevation(),
            azimuth: default_azimuth(),
            intensity: default_intensity(),
            color: default_sun_color(),
            angular_diameter: default_angular_diameter(),
        }
    }
}

/// `sky`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SkyFile {
    /// Blend from `horizon` to `zenith` with the view direction's height;
    /// `ground` below the horizon.
    Gradient {
        /// Linear RGB straight up. Default [0.16, 0.32, 0.72].
        #[serde(default = "default_zenith")]
        zenith: [f64; 3],
        /// Linear RGB at the horizon. Default [0.62, 0.74, 0.9].
        #[serde(default = "default_horizon")]
        horizon: [f64; 3],
        /// Linear RGB below the horizon. Default [0.3, 0.28, 0.25].
        #[serde(default = "default_ground")]
        ground: [f64; 3],
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
    /// Preetham, Shirley and Smits' analytic daylight model; the sun's
    /// colour follows from the same turbidity (red near the horizon).
    Preetham {
        /// Atmospheric turbidity, 1.7..=10 (2 very clear, 3 clear, 6 hazy). Default 3.
        #[serde(default = "default_turbidity")]
        turbidity: f64,
        /// Multiplier on the sky's radiance, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        intensity: f64,
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
    /// Hosek and Wilkie's analytic daylight model (2012): a better fit to
    /// measured skies than Preetham's, with the ground's albedo lighting
    /// the sky from below; the sun's colour as for `preetham`.
    HosekWilkie {
        /// Atmospheric turbidity, 1..=10. Default 3.
        #[serde(default = "default_turbidity")]
        turbidity: f64,
        /// Albedo of the ground under the sky, 0..=1. Default 0.2.
        #[serde(default = "default_ground_albedo")]
        ground_albedo: f64,
        /// Multiplier on the sky's radiance, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        intensity: f64,
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
    /// Mars: a butterscotch dusty day sky, and a blue glow around a setting sun.
    Mars {
        /// Multiplier on the sky's radiance, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        intensity: f64,
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
}

fn default_turbidity() -> f64 {
    3.0
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
    },
}

fn default_bounces() -> u32 {
    2
}

/// `sky_light`: light from the sky gathered over the hemisphere above each
/// hit, with occlusion rays (ambient occlusion).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkyLightFile {
    /// Cosine-weighted directions per camera sample, 0..=256. 0 skips the
    /// occlusion rays and lights surfaces with the unoccluded sky. Default 4.
    #[serde(default = "default_sky_samples")]
    pub samples: u32,
    /// Occluders farther than this (world units) do not block the sky, > 0.
    /// Default 0.4 × the terrain's longer side (40 for the default 100).
    #[serde(default)]
    pub distance: Option<f64>,
}

fn default_sky_samples() -> u32 {
    4
}

impl Default for SkyLightFile {
    fn default() -> Self {
        SkyLightFile {
            samples: default_sky_samples(),
            distance: None,
        }
    }
}

fn default_zenith() -> [f64; 3] {
    [0.16, 0.32, 0.72]
}
fn default_horizon() -> [f64; 3] {
    [0.62, 0.74, 0.9]
}
fn default_ground() -> [f64; 3] {
    [0.3, 0.28, 0.25]
}
fn default_ambient() -> f64 {
    1.0
}

impl Default for SkyFile {
    fn default() -> Self {
        SkyFile::Gradient {
            zenith: default_zenith(),
            horizon: default_horizon(),
            ground: default_ground(),
            ambient: default_ambient(),
        }
    }
}

/// `fog`: exponential fog toward the sky colour, thinning with height.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FogFile {
    /// Extinction per world unit, 0..=10; 0 turns fog off. Default: 0.4
    /// over the terrain's longer side (0.004 for the default 100 units);
    /// with a far field, thin enough that the land's edge is seen through
    /// e⁻³ of haze, and never clearer than air of 50 km visibility at
    /// `units` metres a unit.
    #[serde(default)]
    pub density: Option<f64>,
    /// Linear RGB fog colour; default: the sky colour in the view direction
    /// (aerial perspective).
    #[serde(default)]
    pub color: Option<[f64; 3]>,
    /// Height fog: the density falls by e for every 1/`height_falloff` units
    /// above `base_height`, 0..=10. 0 (default) is uniform fog.
    #[serde(default)]
    pub height_falloff: f64,
    /// Height at which the fog has `density`, world units. Default 0.
    #[serde(default)]
    pub base_height: f64,
}

/// A water plane at a height, seen from above.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaterFile {
    /// Height of the surface, world units. Default, for an island (the
    /// noise generator's `island`): 1 % of the terrain's height above its
    /// flat sea floor; otherwise required.
    #[serde(default)]
    pub level: Option<f64>,
    /// Linear RGB colour of deep water, each 0..=1: the fraction of the
    /// light on the surface that the water body sends back where the
    /// bottom is out of sight. Default [0.01, 0.045, 0.05].
    #[serde(default = "default_water_color")]
    pub color: [f64; 3],
    /// Path length through the water over which light from the bottom
    /// falls to 1/e (Beer–Lambert), world units, > 0. Default 4.
    #[serde(default = "default_clarity")]
    pub clarity: f64,
    /// Small waves, as a tilt of the surface normal. Default none.
    #[serde(default)]
    pub waves: Option<WavesFile>,
    /// Height above the level over which the shore dries (wet ground is
    /// darker), world units, >= 0. Default 1 % of the terrain's height.
    #[serde(default)]
    pub shore: Option<f64>,
}

/// Waves on the water.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WavesFile {
    /// Height of the waves, world units, 0..=100. Default 0.02.
    #[serde(default = "default_wave_amplitude")]
    pub amplitude: f64,
    /// Wavelength of the longest waves, world units, > 0. Default 2.
    #[serde(default = "default_wave_scale")]
    pub scale: f64,
}

fn default_water_color() -> [f64; 3] {
    [0.01, 0.045, 0.05]
}
fn default_clarity() -> f64 {
    4.0
}
fn default_wave_amplitude() -> f64 {
    0.02
}
fn default_wave_scale() -> f64 {
    2.0
}

fn default_ground_albedo() -> f64 {
    0.2
}

impl Default for FogFile {
    fn default() -> Self {
        FogFile {
            density: None,
            color: None,
            height_falloff: 0.0,
            base_height: 0.0,
        }
    }
}

/// One rock: a displaced UV sphere or ellipsoid (see [`crate::rock`]).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RockFile {
    /// Centre, world units. Required.
    pub center: [f64; 3],
    /// Radius, world units, > 0. Required.
    pub radius: f64,
    /// Per-axis scale of the radius, each > 0 (an ellipsoid). Default [1, 1, 1].
    #[serde(default = "default_scale")]
    pub scale: [f64; 3],
    /// Rotation, degrees about x, then y, then z. Default [0, 0, 0].
    #[serde(default)]
    pub rotation: [f64; 3],
    /// Put the centre on the terrain under it (ignoring `center[1]`), sunk by
    /// `sink` of the rock's height. Default false.
    #[serde(default)]
    pub rest_on_terrain: bool,
    /// With `rest_on_terrain`: fraction of the rock's height below the
    /// ground, 0..=1. Default 0.25.
    #[serde(default = "default_sink")]
    pub sink: f64,
    /// Latitude bands, 2..=1024. Default 48.
    #[serde(default = "default_stacks")]
    pub stacks: u32,
    /// Longitude segments, 3..=2048. Default 96.
    #[serde(default = "default_slices")]
    pub slices: u32,
    /// `uv` (a UV sphere of `stacks` × `slices`, the default),
    /// `icosphere` (a subdivided icosahedron: no poles, triangles of
    /// nearly one size) or `cube` (a cube sphere: likewise).
    #[serde(default)]
    pub tessellation: TessellationFile,
    /// Icosphere or cube sphere subdivisions, 0..=7 (20 · 4^n or 12 · 4^n
    /// triangles). Default 4.
    #[serde(default = "default_subdivisions")]
    pub subdivisions: u32,
    /// Displacement map; none leaves the ellipsoid smooth.
    #[serde(default)]
    pub displacement: Option<DisplacementFile>,
    /// Surface colour. Default a grey [0.35, 0.33, 0.3].
    #[serde(default)]
    pub material: RockMaterialFile,
    /// `smooth` (recomputed vertex normals, default) or `flat` faces.
    #[serde(default)]
    pub normals: NormalsFile,
    /// Trace the exact ellipsoid instead of triangles (no displacement).
    /// Default false.
    #[serde(default)]
    pub analytic: bool,
}

fn default_scale() -> [f64; 3] {
    [1.0, 1.0, 1.0]
}
fn default_sink() -> f64 {
    0.25
}
fn default_subdivisions() -> u32 {
    4
}

/// A rock's tessellation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TessellationFile {
    /// Latitude bands and longitude segments (`stacks`, `slices`).
    #[default]
    Uv,
    /// A subdivided icosahedron (`subdivisions`).
    Icosphere,
    /// A cube sphere, each face 2^subdivisions cells square (`subdivisions`).
    Cube,
}

/// How a displacement map is laid on a rock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MappingFile {
    /// By longitude and latitude (u, v): a whole texture row meets at
    /// each pole.
    #[default]
    Uv,
    /// The texture projected along the three axes of the rock's own space
    /// and blended by the undisplaced normal: no poles and no seam, and it
    /// moves with the rock.
    Triplanar,
    /// Stones and mortar in space (3D cellular noise of `cells` and
    /// `seed`): no texture, no pole, no seam.
    Solid,
}

fn default_stacks() -> u32 {
    48
}
fn default_slices() -> u32 {
    96
}

/// `displacement`: vertices move along their undisplaced normals by
/// `scale · (texel − bias)`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DisplacementFile {
    /// Grayscale image (luminance of RGB; 8- or 16-bit PNG), relative to the
    /// scene file's folder. Required except for the `solid` mapping.
    #[serde(default)]
    pub texture: Option<String>,
    /// World units per unit of (texel − bias) for listed rocks; a fraction
    /// of each rock's radius for `scatter`. -1e3..=1e3. Default 0.1.
    #[serde(default = "default_displacement_scale")]
    pub scale: f64,
    /// Texel value that leaves the surface in place, 0..=1. Default 0.5.
    #[serde(default = "default_bias")]
    pub bias: f64,
    /// `nearest` or `bilinear` (default).
    #[serde(default)]
    pub filter: crate::texture::Filter,
    /// `uv` (default), `triplanar` or `solid`.
    #[serde(default)]
    pub mapping: MappingFile,
    /// With `solid`: cells per unit of the rock's own space (its unit
    /// sphere is 2 across), 0.5..=64. Default 3.
    #[serde(default = "default_cells")]
    pub cells: f64,
    /// With `solid`: seed of the stones. Default 0.
    #[serde(default)]
    pub seed: u64,
}

fn default_cells() -> f64 {
    3.0
}

fn default_displacement_scale() -> f64 {
    0.1
}
fn default_bias() -> f64 {
    0.5
}

/// A rock's colour.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RockMaterialFile {
    /// One colour.
    Albedo {
        /// Linear RGB reflectance, each 0..=1.
        color: [f64; 3],
        /// Scattered rocks only: each rock's colour a little lighter or
        /// darker, by a hash of the rock, up to this fraction, 0..=0.5.
        /// Default 0.
        #[serde(default)]
        variation: f64,
        /// Tessellated rocks: noise bumps in the rock's own space (height
        /// and size as fractions of the radius) that tilt the shading
        /// normal. Default none.
        #[serde(default)]
        bump: Option<BumpFile>,
    },
    /// Colour from an image wrapped around the rock with the displacement's
    /// (u, v), e.g. the cobblestone albedo, or laid triplanar.
    Texture {
        /// RGB image (values used as linear reflectance), relative to the
        /// scene file's folder.
        texture: String,
        /// `uv` (the displacement's (u, v), default) or `triplanar` (along
        /// the three axes of the rock's own space, blended by the fourth
        /// powers of the direction's components: no poles, no seams; the
        /// image should tile).
        #[serde(default)]
        mapping: RockTextureMappingFile,
        /// With `triplanar`: the size of one tile, a fraction of the
        /// radius, > 0. Default 1.
        #[serde(default = "default_rock_tile")]
        size: f64,
        /// Tessellated rocks: noise bumps as for `albedo`.
        #[serde(default)]
        bump: Option<BumpFile>,
    },
}

/// How a rock's colour texture is laid on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RockTextureMappingFile {
    /// By the displacement's (u, v).
    #[default]
    Uv,
    /// Along the three axes of the rock's own space.
    Triplanar,
}

fn default_rock_tile() -> f64 {
    1.0
}

impl Default for RockMaterialFile {
    fn default() -> Self {
        RockMaterialFile::Albedo {
            color: [0.35, 0.33, 0.3],
            variation: 0.0,
            bump: None,
        }
    }
}

/// `scatter`: many rocks placed from a seed, resting on the terrain.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScatterFile {
    /// Number of rocks, 0..=1000000. Default 40.
    #[serde(default = "default_count")]
    pub count: u32,
    /// Radius range [min, max], world units, 0 < min <= max. Default [0.5, 2].
    #[serde(default = "default_radius_range")]
    pub radius: [f64; 2],
    /// Vertical scale range [min, max], each in (0, 4]. Default [0.5, 0.9].
    #[serde(default = "default_squash")]
    pub squash: [f64; 2],
    /// Seed of the placement. Default 0.
    #[serde(default)]
    pub seed: u64,
    /// Fraction of each rock's height below the ground, 0..=1. Default 0.25.
    #[serde(default = "default_sink")]
    pub sink: f64,
    /// Keep rocks from intersecting each other. Default true.
    #[serde(default = "default_true")]
    pub avoid_overlap: bool,
    /// Extent [x, z] of the scattered area, centred on the origin; default
    /// the terrain's size.
    #[serde(default)]
    pub area: Option<[f64; 2]>,
    /// Latitude bands of a UV sphere, 2..=1024. Default 16. Giving
    /// `stacks` or `slices` (without `tessellation`) asks for a UV sphere.
    #[serde(default)]
    pub stacks: Option<u32>,
    /// Longitude segments of a UV sphere, 3..=2048. Default 32.
    #[serde(default)]
    pub slices: Option<u32>,
    /// `icosphere` (the default: no poles, triangles of nearly one size),
    /// `cube` (a cube sphere: likewise) or `uv` (the default where
    /// `stacks` or `slices` is given).
    #[serde(default)]
    pub tessellation: Option<TessellationFile>,
    /// Icosphere or cube sphere subdivisions, 0..=7 (20 · 4^n or 12 · 4^n
    /// triangles). Default 3.
    #[serde(default = "default_scatter_subdivisions")]
    pub subdivisions: u32,
    /// Where rocks may lie: heights (fractions of the terrain's relief) and
    /// slopes (degrees), as for populations. Default anywhere.
    #[serde(default, rename = "where")]
    pub where_: WhereFile,
    /// Differently shaped rock meshes, 1..=64, each instanced many times:
    /// its own low-frequency shape and its own turn of the displacement.
    /// Which one a rock takes is a hash of its index. Default 8.
    #[serde(default = "default_variants")]
    pub variants: u32,
    /// Fracture planes cut into each variant, 0..=32: flat broken faces
    /// with sharp edges, as split stone has. Default 0.
    #[serde(default)]
    pub facets: u32,
    /// Displacement of the shared mesh (`scale` as a fraction of the radius).
    #[serde(default)]
    pub displacement: Option<DisplacementFile>,
    /// Surface colour of every scattered rock.
    #[serde(default)]
    pub material: RockMaterialFile,
}

fn default_scatter_subdivisions() -> u32 {
    3
}
fn default_variants() -> u32 {
    8
}

fn default_count() -> u32 {
    40
}
fn default_radius_range() -> [f64; 2] {
    [0.5, 2.0]
}
fn default_squash() -> [f64; 2] {
    [0.5, 0.9]
}
fn default_true() -> bool {
    true
}
