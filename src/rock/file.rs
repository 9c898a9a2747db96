//! Rocks in a scene file and their checks: `rocks` (placed one by one) and
//! `scatter` (many, from a seed), their tessellation, displacement and
//! material.
//!
//! ```json
//! "scatter": { "count": 400, "radius": [0.3, 1.2], "variants": 8,
//!              "where": { "slope": [0, 35] } }
//! ```

use std::sync::Arc;

use glam::Vec3;
use serde::Deserialize;

use super::scatter::ScatterParams;
use super::{Displacement, Mapping, Placement, Tessellation};
use crate::check::{above, color, count, range_pair, vec3, within, Check, Files, Invalid};
use crate::shade::file::BumpFile;
use crate::shade::layers::Bump;
use crate::terrain::NormalsFile;
use crate::texture::{self, Texture};

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
#[serde(default, deny_unknown_fields)]
pub struct DisplacementFile {
    /// Grayscale image (luminance of RGB; 8- or 16-bit PNG), relative to the
    /// scene file's folder. Required except for the `solid` mapping.
    pub texture: Option<String>,
    /// World units per unit of (texel − bias) for listed rocks; a fraction
    /// of each rock's radius for `scatter`. -1e3..=1e3. Default 0.1.
    pub scale: f64,
    /// Texel value that leaves the surface in place, 0..=1. Default 0.5.
    pub bias: f64,
    /// `nearest` or `bilinear` (default).
    pub filter: crate::texture::Filter,
    /// `uv` (default), `triplanar` or `solid`.
    pub mapping: MappingFile,
    /// With `solid`: cells per unit of the rock's own space (its unit
    /// sphere is 2 across), 0.5..=64. Default 3.
    pub cells: f64,
    /// With `solid`: seed of the stones. Default 0.
    pub seed: u64,
}

impl Default for DisplacementFile {
    fn default() -> Self {
        DisplacementFile {
            texture: None,
            scale: 0.1,
            bias: 0.5,
            filter: Default::default(),
            mapping: Default::default(),
            cells: 3.0,
            seed: 0,
        }
    }
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
#[serde(default, deny_unknown_fields)]
pub struct ScatterFile {
    /// Number of rocks, 0..=1000000. Default 40.
    pub count: u32,
    /// Radius range [min, max], world units, 0 < min <= max. Default [0.5, 2].
    pub radius: [f64; 2],
    /// Vertical scale range [min, max], each in (0, 4]. Default [0.5, 0.9].
    pub squash: [f64; 2],
    /// Seed of the placement. Default 0.
    pub seed: u64,
    /// Fraction of each rock's height below the ground, 0..=1. Default 0.25.
    pub sink: f64,
    /// Keep rocks from intersecting each other. Default true.
    pub avoid_overlap: bool,
    /// Extent [x, z] of the scattered area, centred on the origin; default
    /// the terrain's size.
    pub area: Option<[f64; 2]>,
    /// Latitude bands of a UV sphere, 2..=1024. Default 16. Giving
    /// `stacks` or `slices` (without `tessellation`) asks for a UV sphere.
    pub stacks: Option<u32>,
    /// Longitude segments of a UV sphere, 3..=2048. Default 32.
    pub slices: Option<u32>,
    /// `icosphere` (the default: no poles, triangles of nearly one size),
    /// `cube` (a cube sphere: likewise) or `uv` (the default where
    /// `stacks` or `slices` is given).
    pub tessellation: Option<TessellationFile>,
    /// Icosphere or cube sphere subdivisions, 0..=7 (20 · 4^n or 12 · 4^n
    /// triangles). Default 3.
    pub subdivisions: u32,
    /// Where rocks may lie: heights (fractions of the terrain's relief) and
    /// slopes (degrees), as for populations. Default anywhere.
    #[serde(rename = "where")]
    pub where_: WhereFile,
    /// Differently shaped rock meshes, 1..=64, each instanced many times:
    /// its own low-frequency shape and its own turn of the displacement.
    /// Which one a rock takes is a hash of its index. Default 8.
    pub variants: u32,
    /// Fracture planes cut into each variant, 0..=32: flat broken faces
    /// with sharp edges, as split stone has. Default 0.
    pub facets: u32,
    /// Displacement of the shared mesh (`scale` as a fraction of the radius).
    pub displacement: Option<DisplacementFile>,
    /// Surface colour of every scattered rock.
    pub material: RockMaterialFile,
}

impl Default for ScatterFile {
    fn default() -> Self {
        ScatterFile {
            count: 40,
            radius: [0.5, 2.0],
            squash: [0.5, 0.9],
            seed: 0,
            sink: 0.25,
            avoid_overlap: true,
            area: None,
            stacks: None,
            slices: None,
            tessellation: None,
            subdivisions: 3,
            where_: Default::default(),
            variants: 8,
            facets: 0,
            displacement: None,
            material: Default::default(),
        }
    }
}

/// `where`: the masks of a population, the same measures as the terrain's
/// height bands and steep faces.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WhereFile {
    /// Heights allowed, fractions of the terrain's relief (0 its lowest
    /// point, 1 its highest). Default [0, 1].
    pub height: [f64; 2],
    /// Slopes allowed, degrees from horizontal. Default [0, 90].
    pub slope: [f64; 2],
    /// Moisture allowed, each 0..=1: 1 at lakes and rivers
    /// (`terrain.rivers`), falling to 0 at their reach; 0 everywhere
    /// without rivers. Default any.
    pub moisture: Option<[f64; 2]>,
}

impl Default for WhereFile {
    fn default() -> Self {
        WhereFile {
            height: [0.0, 1.0],
            slope: [0.0, 90.0],
            moisture: None,
        }
    }
}

impl WhereFile {
    /// The moisture window, checked; errors name `path.where.moisture`.
    pub fn check_moisture(&self, path: &str) -> Check<Option<[f32; 2]>> {
        self.moisture
            .map(|m| range_pair(&format!("{path}.where.moisture"), m, 0.0, 1.0))
            .transpose()
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
    pub bump: Option<Bump>,
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
    pub bump: Option<Bump>,
}

fn validate_displacement(path: &str, d: &DisplacementFile, files: &Files) -> Check<Displacement> {
    let mapping = match d.mapping {
        MappingFile::Uv => Mapping::Uv,
        MappingFile::Triplanar => Mapping::Triplanar,
        MappingFile::Solid => Mapping::Solid {
            cells: within(&format!("{path}.cells"), d.cells, 0.5, 64.0)? as f32,
            seed: d.seed,
        },
    };
    let texture = match (&d.texture, d.mapping) {
        (Some(t), _) => Some(texture::cached(files, &format!("{path}.texture"), t)?),
        (None, MappingFile::Solid) => None,
        (None, _) => {
            return Err(Invalid::new(
                format!("{path}.texture"),
                "must name a grayscale image (or use \"mapping\": \"solid\", which needs none)",
            ))
        }
    };
    Ok(Displacement {
        texture,
        scale: within(&format!("{path}.scale"), d.scale, -1e3, 1e3)? as f32,
        bias: within(&format!("{path}.bias"), d.bias, 0.0, 1.0)? as f32,
        filter: d.filter,
        mapping,
    })
}

/// A rock's material; `variation` is allowed only where the caller uses it
/// (scattered rocks).
fn validate_rock_material(
    path: &str,
    m: &RockMaterialFile,
    files: &Files,
    variation_allowed: bool,
) -> Check<RockMaterial> {
    Ok(match m {
        RockMaterialFile::Albedo {
            color: c,
            variation,
            ..
        } => {
            if *variation != 0.0 && !variation_allowed {
                return Err(Invalid::new(
                    format!("{path}.variation"),
                    "applies to scattered rocks only",
                ));
            }
            RockMaterial::Albedo(color(&format!("{path}.color"), *c, 1.0)?)
        }
        RockMaterialFile::Texture {
            texture,
            mapping,
            size,
            ..
        } => RockMaterial::Texture(
            texture::cached(files, &format!("{path}.texture"), texture)?,
            match mapping {
                RockTextureMappingFile::Uv => None,
                RockTextureMappingFile::Triplanar => {
                    Some(above(&format!("{path}.size"), *size, 0.0, 100.0)? as f32)
                }
            },
        ),
    })
}

fn tessellation(
    path: &str,
    kind: TessellationFile,
    (stacks, slices): (u32, u32),
    subdivisions: u32,
) -> Check<Tessellation> {
    Ok(match kind {
        TessellationFile::Uv => Tessellation::Uv {
            stacks: count(&format!("{path}.stacks"), stacks, 2, 1024)?,
            slices: count(&format!("{path}.slices"), slices, 3, 2048)?,
        },
        TessellationFile::Icosphere => Tessellation::Icosphere {
            subdivisions: count(&format!("{path}.subdivisions"), subdivisions, 0, 7)?,
        },
        TessellationFile::Cube => Tessellation::Cube {
            subdivisions: count(&format!("{path}.subdivisions"), subdivisions, 0, 7)?,
        },
    })
}

/// Checks rock `path` (`rocks[k]`), reading its textures once.
pub fn validate_rock(path: &str, r: &RockFile, files: &Files) -> Check<RockSpec> {
    let center = vec3(&format!("{path}.center"), r.center)?;
    let radius = above(&format!("{path}.radius"), r.radius, 0.0, 1e6)? as f32;
    let mut scale = [0.0f32; 3];
    for (k, s) in scale.iter_mut().enumerate() {
        *s = above(&format!("{path}.scale[{k}]"), r.scale[k], 0.0, 1e3)? as f32;
    }
    let rot = vec3(&format!("{path}.rotation"), r.rotation)?;
    let rotation = glam::Quat::from_euler(
        glam::EulerRot::ZYX,
        rot.z.to_radians(),
        rot.y.to_radians(),
        rot.x.to_radians(),
    );
    let tessellation = tessellation(path, r.tessellation, (r.stacks, r.slices), r.subdivisions)?;
    let displacement = r
        .displacement
        .as_ref()
        .map(|d| validate_displacement(&format!("{path}.displacement"), d, files))
        .transpose()?;
    if r.analytic && displacement.is_some() {
        return Err(Invalid::new(
            format!("{path}.analytic"),
            "an analytic rock is an exact ellipsoid and cannot be displaced; remove `displacement` or `analytic`",
        ));
    }
    let sink = within(&format!("{path}.sink"), r.sink, 0.0, 1.0)? as f32;
    Ok(RockSpec {
        place: Placement {
            center,
            radius,
            scale: Vec3::from_array(scale),
            rotation,
            pre_rotation: glam::Quat::IDENTITY,
        },
        rest_sink: r.rest_on_terrain.then_some(sink),
        tessellation,
        displacement,
        material: validate_rock_material(&format!("{path}.material"), &r.material, files, false)?,
        bump: rock_bump(&format!("{path}.material"), &r.material)?,
        flat: r.normals == NormalsFile::Flat,
        analytic: r.analytic,
    })
}

/// Checks `scatter` over a terrain of `terrain_size` (its `area` by
/// default).
pub fn validate_scatter(
    s: &ScatterFile,
    terrain_size: [f32; 2],
    files: &Files,
) -> Check<ScatterSpec> {
    let p = "scatter";
    let count = count(&format!("{p}.count"), s.count, 0, 1_000_000)?;
    let r0 = above(&format!("{p}.radius[0]"), s.radius[0], 0.0, 1e6)?;
    let r1 = within(&format!("{p}.radius[1]"), s.radius[1], r0, 1e6)?;
    let q0 = above(&format!("{p}.squash[0]"), s.squash[0], 0.0, 4.0)?;
    let q1 = within(&format!("{p}.squash[1]"), s.squash[1], q0, 4.0)?;
    let area = match s.area {
        Some(a) => [
            above(&format!("{p}.area[0]"), a[0], 0.0, 1e7)? as f32,
            above(&format!("{p}.area[1]"), a[1], 0.0, 1e7)? as f32,
        ],
        None => terrain_size,
    };
    let kind = s
        .tessellation
        .unwrap_or(if s.stacks.is_some() || s.slices.is_some() {
            TessellationFile::Uv
        } else {
            TessellationFile::Icosphere
        });
    let tessellation = tessellation(
        p,
        kind,
        (s.stacks.unwrap_or(16), s.slices.unwrap_or(32)),
        s.subdivisions,
    )?;
    let variants = self::count(&format!("{p}.variants"), s.variants, 1, 64)?;
    let facets = self::count(&format!("{p}.facets"), s.facets, 0, 32)?;
    let displacement = s
        .displacement
        .as_ref()
        .map(|d| validate_displacement(&format!("{p}.displacement"), d, files))
        .transpose()?;
    let shape = if variants > 1 || facets > 0 {
        super::SHAPE_MAX
    } else {
        0.0
    };
    let margin = displacement.as_ref().map_or(0.0, Displacement::max_outward) + shape;
    Ok(ScatterSpec {
        params: ScatterParams {
            count,
            radius: [r0 as f32, r1 as f32],
            squash: [q0 as f32, q1 as f32],
            sink: within(&format!("{p}.sink"), s.sink, 0.0, 1.0)? as f32,
            avoid_overlap: s.avoid_overlap,
            area,
            seed: s.seed,
            margin,
            height: range_pair(&format!("{p}.where.height"), s.where_.height, 0.0, 1.0)?,
            slope: range_pair(&format!("{p}.where.slope"), s.where_.slope, 0.0, 90.0)?,
            moisture: s.where_.check_moisture(p)?,
        },
        tessellation,
        variants,
        facets,
        variation: match s.material {
            RockMaterialFile::Albedo { variation, .. } => {
                within(&format!("{p}.material.variation"), variation, 0.0, 0.5)? as f32
            }
            RockMaterialFile::Texture { .. } => 0.0,
        },
        displacement,
        material: validate_rock_material(&format!("{p}.material"), &s.material, files, true)?,
        bump: rock_bump(&format!("{p}.material"), &s.material)?,
    })
}

/// A rock material's bumps (height and size, fractions of the radius).
fn rock_bump(path: &str, m: &RockMaterialFile) -> Check<Option<Bump>> {
    let (RockMaterialFile::Albedo { bump, .. } | RockMaterialFile::Texture { bump, .. }) = m;
    bump.as_ref()
        .map(|b| {
            Ok(Bump {
                height: within(&format!("{path}.bump.height"), b.height, 0.0, 1.0)? as f32,
                size: above(&format!("{path}.bump.size"), b.size, 0.0, 100.0)? as f32,
            })
        })
        .transpose()
}
