//! `plants` in a scene file: which species (a preset, its parameters
//! overridden in `grow`), how densely, and where; and their check.
//!
//! ```json
//! "plants": [{ "species": "spruce", "density": 0.7,
//!              "where": { "height": [0, 0.6], "slope": [0, 35] } },
//!            { "species": "oak", "grow": { "height": [10, 14] } }]
//! ```

use std::sync::Arc;

use serde::Deserialize;

use super::place::{LeafImage, Plants};
use super::{Crown, Flowers, LeafShape, Leaves, Level, Species, MAX_LEVELS};
use crate::check::{above, color, count, range_pair, within, Check, Files, Invalid};
use crate::texture::Texture;

/// The species shipped, by name: each a file in `assets/plants/`.
pub const SPECIES_PRESETS: [(&str, &str); 6] = [
    ("spruce", include_str!("../../assets/plants/spruce.json")),
    ("oak", include_str!("../../assets/plants/oak.json")),
    ("birch", include_str!("../../assets/plants/birch.json")),
    ("shrub", include_str!("../../assets/plants/shrub.json")),
    ("grass", include_str!("../../assets/plants/grass.json")),
    ("herb", include_str!("../../assets/plants/herb.json")),
];

/// One kind of plant over the terrain.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlantsFile {
    /// The species: `spruce`, `oak`, `birch`, `shrub`, `grass` or `herb`
    /// (files in `assets/plants/`). Required.
    pub species: String,
    /// The species' parameters changed from the preset's.
    #[serde(default)]
    pub grow: SpeciesFile,
    /// Share of the places the spacing leaves that a plant takes where
    /// the ground suits it fully, 0..=1. Default 0.6.
    #[serde(default = "default_density")]
    pub density: f64,
    /// Least distance between two plants of the species, world units
    /// (> 0). Default the species' (spruce 4.5, oak 7, birch 4, shrub 1.8,
    /// grass 0.35, herb 0.5), times the largest scale.
    pub spacing: Option<f64>,
    /// Scale range [min, max], 0 < min <= max <= 100. Default [0.8, 1.2].
    #[serde(default = "default_scale")]
    pub scale: [f64; 2],
    /// Where the species grows: windows on the ground, each thinning out
    /// toward its inner edges.
    #[serde(default, rename = "where")]
    pub where_: PlantWhereFile,
    /// 0 spreads the plants evenly, 1 gathers them in groves with clear
    /// ground between, 0..=1. Default 0.3.
    #[serde(default = "default_clumping")]
    pub clumping: f64,
    /// Size of a grove, world units (> 0). Default 8 × the spacing.
    pub clump_size: Option<f64>,
    /// Grows under other species (grass, herbs) instead of competing with
    /// them for room. Default false: a plant keeps its distance from
    /// every competing species listed before it.
    #[serde(default)]
    pub understory: bool,
    /// Leaves the camera sees shorter than this many pixels are pruned:
    /// fewer of them, each grown so that they keep the area of all
    /// (Cook et al. 2007), so far crowns cost less and do not shimmer.
    /// 0 keeps every leaf, 0..=16. Default 1.
    #[serde(default = "default_prune")]
    pub prune: f64,
    /// An image (PNG, relative to the scene file's folder) the leaves
    /// show as cards: its colour, decoded from sRGB, times the species'
    /// tint from plant to plant, and its alpha (or its grey) cutting
    /// their outline. The leaves become rectangles (`shape` `card`)
    /// whose stalk is the image's bottom edge. Default none.
    pub leaf_image: Option<String>,
    /// Seed of the placement. Default the scene's seed plus the index.
    pub seed: Option<u64>,
}

fn default_prune() -> f64 {
    1.0
}

fn default_density() -> f64 {
    0.6
}

fn default_scale() -> [f64; 2] {
    [0.8, 1.2]
}

fn default_clumping() -> f64 {
    0.3
}

/// Windows on the ground where a species grows. Each thins the plants
/// out over `fade` of its width at an edge inside the full range: the
/// top of a height window is a treeline that forests thin toward.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PlantWhereFile {
    /// Heights, fractions of the terrain's relief (0 its lowest point, 1
    /// its highest). Default [0, 1].
    pub height: [f64; 2],
    /// Slopes, degrees from horizontal. Default [0, 90].
    pub slope: [f64; 2],
    /// Moisture, each 0..=1: 1 at lakes and rivers (`terrain.rivers`),
    /// falling to 0 at their reach; 0 everywhere without rivers. Default
    /// any.
    pub moisture: Option<[f64; 2]>,
    /// Share of each window's width over which plants thin out toward
    /// its edge, 0..=0.5. Default 0.15.
    pub fade: f64,
}

impl Default for PlantWhereFile {
    fn default() -> Self {
        PlantWhereFile {
            height: [0.0, 1.0],
            slope: [0.0, 90.0],
            moisture: None,
            fade: 0.15,
        }
    }
}

/// A species' parameters (Weber and Penn's, simplified): every field
/// optional, the preset's where absent.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeciesFile {
    /// Trunk height range [min, max], world units, 0 < min <= max <= 200.
    pub height: Option<[f64; 2]>,
    /// Trunk radius at the foot, a fraction of the height, 0..=0.2.
    pub radius: Option<f64>,
    /// How much stems narrow to their tips, 0 (not) ..= 1 (to a point).
    pub taper: Option<f64>,
    /// Trunk's bend, degrees, −90..=90.
    pub curve: Option<f64>,
    /// The first level's lengths up the trunk: `conical`, `spherical`,
    /// `hemispherical`, `cylindrical`, `tapered_cylindrical`, `flame`,
    /// `inverse_conical` or `tend_flame`.
    pub crown: Option<Crown>,
    /// Branch levels, at most 3; the last carries the leaves (the trunk,
    /// with none). Replaces the preset's list whole.
    pub levels: Option<Vec<LevelFile>>,
    /// The leaves on the last level.
    pub leaves: Option<LeavesFile>,
    /// Flowers at the last level's tips.
    pub flowers: Option<FlowersFile>,
    /// Bark albedo, linear RGB 0..=1.
    pub bark: Option<[f64; 3]>,
    /// Leaf albedo, linear RGB 0..=1.
    pub leaf_color: Option<[f64; 3]>,
    /// Largest change of the leaves' brightness from plant to plant, a
    /// fraction 0..=1. Default 0.15.
    pub leaf_color_var: Option<f64>,
    /// Share of the light on a leaf that passes through to its other
    /// side (lit from behind, it glows), 0..=1: the rest it reflects.
    /// Default 0.
    pub translucency: Option<f64>,
    /// Flower albedo, linear RGB 0..=1.
    pub flower_color: Option<[f64; 3]>,
    /// Least distance between plants at scale 1, world units (> 0).
    pub spacing: Option<f64>,
    /// Variants grown (each seeded), 1..=16.
    pub variants: Option<u32>,
}

/// One level of branches.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LevelFile {
    /// Branches on each stem of the level above, 0..=200.
    pub count: u32,
    /// Where along the parent they begin, 0..1. Default 0.
    #[serde(default)]
    pub start: f64,
    /// Longest length, a fraction of the parent's, 0..=3.
    pub length: f64,
    /// Random share of the length taken away, 0..=1. Default 0.
    #[serde(default)]
    pub length_var: f64,
    /// Angle from the parent, degrees, 0..=180.
    pub down: f64,
    /// Random spread of that angle, degrees, 0..=90. Default 0.
    #[serde(default)]
    pub down_var: f64,
    /// Turn around the parent from one branch to the next, degrees.
    /// Default 137.5 (the golden angle).
    #[serde(default = "golden")]
    pub rotate: f64,
    /// Bend from base to tip, degrees, −180..=180. Default 0.
    #[serde(default)]
    pub curve: f64,
    /// Pull of the tips toward the sky per unit length, −2..=2
    /// (negative droops). Default 0.
    #[serde(default)]
    pub up: f64,
    /// Base radius, a fraction of the parent's there, 0..=1. Default 0.5.
    #[serde(default = "half")]
    pub radius: f64,
}

fn golden() -> f64 {
    137.5
}

fn half() -> f64 {
    0.5
}

/// The leaves.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeavesFile {
    /// Leaves on each stem of the last level, 0..=200.
    pub count: u32,
    /// Length, world units, > 0.
    pub size: f64,
    /// Width over length, 0..=2. Default 0.5.
    #[serde(default = "half")]
    pub aspect: f64,
    /// Angle from the stem, degrees, 0..=180. Default 45.
    #[serde(default = "forty_five")]
    pub down: f64,
    /// Bend along the leaf, degrees, −180..=180 (negative arches away
    /// from the sky: a grass blade). Default 0.
    #[serde(default)]
    pub bend: f64,
    /// Outline: `ellipse`, `lanceolate`, `round`, `needle` (a sprig) or
    /// `blade`. Default ellipse.
    #[serde(default)]
    pub shape: LeafShape,
    /// Where along the stem they begin, 0..1. Default 0.3.
    #[serde(default = "three_tenths")]
    pub start: f64,
}

fn forty_five() -> f64 {
    45.0
}

fn three_tenths() -> f64 {
    0.3
}

/// The flowers.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowersFile {
    /// Petals, 3..=24. Default 5.
    #[serde(default = "five")]
    pub petals: u32,
    /// Radius, world units, > 0.
    pub size: f64,
}

fn five() -> u32 {
    5
}

impl SpeciesFile {
    /// `self`'s fields where given, `base`'s elsewhere.
    fn over(&self, b: SpeciesFile) -> SpeciesFile {
        let s = self.clone();
        SpeciesFile {
            height: s.height.or(b.height),
            radius: s.radius.or(b.radius),
            taper: s.taper.or(b.taper),
            curve: s.curve.or(b.curve),
            crown: s.crown.or(b.crown),
            levels: s.levels.or(b.levels),
            leaves: s.leaves.or(b.leaves),
            flowers: s.flowers.or(b.flowers),
            bark: s.bark.or(b.bark),
            leaf_color: s.leaf_color.or(b.leaf_color),
            leaf_color_var: s.leaf_color_var.or(b.leaf_color_var),
            translucency: s.translucency.or(b.translucency),
            flower_color: s.flower_color.or(b.flower_color),
            spacing: s.spacing.or(b.spacing),
            variants: s.variants.or(b.variants),
        }
    }
}

/// The preset `name`, parsed.
pub fn preset(name: &str) -> Option<SpeciesFile> {
    SPECIES_PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| serde_json::from_str(text).expect("a shipped species parses"))
}

/// Checks species `s` (named `name`); errors name fields under `path`.
pub fn check_species(path: &str, name: &str, s: &SpeciesFile) -> Check<(Species, f32)> {
    let at = |f: &str| format!("{path}.{f}");
    let need = |f: &str| Invalid::new(at(f), "is required (no preset gives it)");
    let h = s.height.ok_or_else(|| need("height"))?;
    let h0 = above(&at("height[0]"), h[0], 0.0, 200.0)?;
    let h1 = within(&at("height[1]"), h[1], h0, 200.0)?;
    let levels_in = s.levels.clone().unwrap_or_default();
    if levels_in.len() > MAX_LEVELS {
        return Err(Invalid::new(
            at("levels"),
            format!("has {} levels; at most {MAX_LEVELS}", levels_in.len()),
        ));
    }
    let mut levels = Vec::new();
    for (k, l) in levels_in.iter().enumerate() {
        let lat = |f: &str| at(&format!("levels[{k}].{f}"));
        levels.push(Level {
            count: count(&lat("count"), l.count, 0, 200)?,
            start: within(&lat("start"), l.start, 0.0, 0.99)? as f32,
            length: within(&lat("length"), l.length, 0.0, 3.0)? as f32,
            length_var: within(&lat("length_var"), l.length_var, 0.0, 1.0)? as f32,
            down: within(&lat("down"), l.down, 0.0, 180.0)? as f32,
            down_var: within(&lat("down_var"), l.down_var, 0.0, 90.0)? as f32,
            rotate: within(&lat("rotate"), l.rotate, -360.0, 360.0)? as f32,
            curve: within(&lat("curve"), l.curve, -180.0, 180.0)? as f32,
            up: within(&lat("up"), l.up, -2.0, 2.0)? as f32,
            radius: within(&lat("radius"), l.radius, 0.0, 1.0)? as f32,
        });
    }
    let leaves = match &s.leaves {
        None => None,
        Some(l) => Some(Leaves {
            count: count(&at("leaves.count"), l.count, 0, 200)?,
            size: above(&at("leaves.size"), l.size, 0.0, 20.0)? as f32,
            aspect: within(&at("leaves.aspect"), l.aspect, 0.0, 2.0)? as f32,
            down: within(&at("leaves.down"), l.down, 0.0, 180.0)? as f32,
            bend: within(&at("leaves.bend"), l.bend, -180.0, 180.0)? as f32,
            shape: l.shape,
            start: within(&at("leaves.start"), l.start, 0.0, 0.99)? as f32,
        }),
    };
    let flowers = match &s.flowers {
        None => None,
        Some(f) => Some(Flowers {
            petals: count(&at("flowers.petals"), f.petals, 3, 24)?,
            size: above(&at("flowers.size"), f.size, 0.0, 10.0)? as f32,
        }),
    };
    let crown = s.crown.unwrap_or(Crown::Conical);
    let grey = [0.3, 0.3, 0.3];
    let species = Species {
        name: name.to_string(),
        height: [h0 as f32, h1 as f32],
        radius: within(&at("radius"), s.radius.unwrap_or(0.02), 0.0, 0.2)? as f32,
        taper: within(&at("taper"), s.taper.unwrap_or(0.9), 0.0, 1.0)? as f32,
        curve: within(&at("curve"), s.curve.unwrap_or(0.0), -90.0, 90.0)? as f32,
        crown,
        levels,
        leaves,
        flowers,
        bark_color: color(&at("bark"), s.bark.unwrap_or(grey), 1.0)?,
        leaf_color: color(&at("leaf_color"), s.leaf_color.unwrap_or(grey), 1.0)?,
        leaf_color_var: within(
            &at("leaf_color_var"),
            s.leaf_color_var.unwrap_or(0.15),
            0.0,
            1.0,
        )? as f32,
        translucency: within(&at("translucency"), s.translucency.unwrap_or(0.0), 0.0, 1.0)? as f32,
        flower_color: color(&at("flower_color"), s.flower_color.unwrap_or(grey), 1.0)?,
        variants: count(&at("variants"), s.variants.unwrap_or(4), 1, 16)?,
    };
    let spacing = match s.spacing {
        Some(v) => above(&at("spacing"), v, 0.0, 1e4)?,
        None => return Err(need("spacing")),
    };
    Ok((species, spacing as f32))
}

/// A leaf card's image read: its colour and its alpha.
type LeafTextures = (Arc<Texture>, Arc<Texture>);

/// Reads a leaf card's image as colour and as alpha.
fn read_leaf_image(full: &std::path::Path) -> Result<LeafTextures, String> {
    let read = |load: fn(&std::path::Path) -> crate::error::Result<Texture>| {
        let t = load(full).map_err(|e| format!("cannot read the image: {e}"))?;
        match t.width == 0 || t.height == 0 {
            true => Err(format!("{} has no pixels", full.display())),
            false => Ok(Arc::new(t)),
        }
    };
    Ok((read(Texture::load_srgb)?, read(Texture::load_alpha)?))
}

/// Spots a species' spacing may leave over the terrain, at most.
pub const MAX_SPOTS: f64 = 1e9;

impl PlantsFile {
    /// Checks entry `index` of `plants` and grows its variants; `seed` is
    /// the scene's, `area` the terrain's in world units².
    pub fn check(&self, index: usize, seed: u64, area: f64, files: &Files) -> Check<Plants> {
        let path = format!("plants[{index}]");
        let at = |f: &str| format!("{path}.{f}");
        let base = preset(&self.species).ok_or_else(|| {
            let names: Vec<&str> = SPECIES_PRESETS.iter().map(|p| p.0).collect();
            Invalid::new(
                at("species"),
                format!(
                    "is `{}`, not a species scree has (one of {})",
                    self.species,
                    names.join(", ")
                ),
            )
        })?;
        let (mut species, own_spacing) =
            check_species(&at("grow"), &self.species, &self.grow.over(base))?;
        let leaf_image = match &self.leaf_image {
            Some(file) => {
                let Some(leaves) = species.leaves.as_mut() else {
                    return Err(Invalid::new(
                        at("leaf_image"),
                        format!("is given, but a {} grows no leaves", species.name),
                    ));
                };
                leaves.shape = LeafShape::Card;
                let (color, alpha) = &*files.get(&at("leaf_image"), file, read_leaf_image)?;
                Some(LeafImage {
                    color: color.clone(),
                    alpha: alpha.clone(),
                    path: std::path::absolute(files.dir().join(file))
                        .unwrap_or_else(|_| files.dir().join(file)),
                })
            }
            None => None,
        };
        let s0 = above(&at("scale[0]"), self.scale[0], 0.0, 100.0)?;
        let s1 = within(&at("scale[1]"), self.scale[1], s0, 100.0)?;
        let spacing = match self.spacing {
            Some(v) => above(&at("spacing"), v, 0.0, 1e4)?,
            None => own_spacing as f64 * s1,
        };
        // The jittered grid holds a spot per (spacing / √2)² of ground.
        let spots = area / (spacing * spacing * 0.5);
        if spots > MAX_SPOTS {
            return Err(Invalid::new(
                at("spacing"),
                format!(
                    "of {spacing} leaves {spots:.0} places over the terrain, more than {MAX_SPOTS:.0}; \
                     raise it or use a smaller terrain"
                ),
            ));
        }
        let w = &self.where_;
        let seed = self.seed.unwrap_or_else(|| seed.wrapping_add(index as u64));
        let grown = (0..species.variants)
            .map(|v| Arc::new(super::grow(&species, seed, v)))
            .collect();
        Ok(Plants {
            species,
            variants: grown,
            density: within(&at("density"), self.density, 0.0, 1.0)? as f32,
            spacing: spacing as f32,
            scale: [s0 as f32, s1 as f32],
            height: range_pair(&at("where.height"), w.height, 0.0, 1.0)?,
            slope: range_pair(&at("where.slope"), w.slope, 0.0, 90.0)?,
            moisture: w
                .moisture
                .map(|m| range_pair(&at("where.moisture"), m, 0.0, 1.0))
                .transpose()?,
            fade: within(&at("where.fade"), w.fade, 0.0, 0.5)? as f32,
            clumping: within(&at("clumping"), self.clumping, 0.0, 1.0)? as f32,
            clump_size: match self.clump_size {
                Some(c) => above(&at("clump_size"), c, 0.0, 1e6)? as f32,
                None => 8.0 * spacing as f32,
            },
            understory: self.understory,
            prune: within(&at("prune"), self.prune, 0.0, 16.0)? as f32,
            leaf_image,
            seed,
        })
    }
}
