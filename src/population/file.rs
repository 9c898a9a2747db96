//! `populations` in a scene file and their check: the mesh read, the
//! counts, scales and masks in range.
//!
//! ```json
//! "populations": [{ "mesh": "../assets/bush.obj", "count": 300,
//!                   "where": { "slope": [0, 30] } }]
//! ```

use serde::Deserialize;

use std::path::Path;
use std::sync::Arc;

use glam::Vec3;

use super::{Part, Population};
use crate::check::{above, color, count, range_pair, within, Check, Files, Invalid};
use crate::mesh::TriangleMesh;
use crate::rock::{RockMaterialFile, WhereFile};
use crate::texture::Texture;

/// One population: an OBJ mesh placed `count` times over the terrain.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PopulationFile {
    /// Wavefront OBJ, relative to the scene file's folder: y up, its origin
    /// the point that stands on the ground. Triangulated on reading;
    /// normals from the file, or recomputed. Its MTL materials are read:
    /// `Kd` (colour), `map_Kd` (colour image, sRGB), `d` and `map_d`
    /// (opacity, and its image's alpha channel or grey): rays pass cut-out
    /// parts by a hash of the ray and the triangle. Required.
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
    /// Surface colour (`albedo` only) of the parts whose MTL material gives
    /// none. Default a green [0.12, 0.2, 0.07].
    #[serde(default = "default_population_material")]
    pub material: RockMaterialFile,
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

/// Checks a population and reads its mesh (normals recomputed where the
/// file gives none).
pub fn validate_population(path: &str, p: &PopulationFile, files: &Files) -> Check<Population> {
    let count = count(&format!("{path}.count"), p.count, 0, 1_000_000)?;
    let s0 = above(&format!("{path}.scale[0]"), p.scale[0], 0.0, 1e3)?;
    let s1 = within(&format!("{path}.scale[1]"), p.scale[1], s0, 1e3)?;
    let align = within(
        &format!("{path}.align_to_ground"),
        p.align_to_ground,
        0.0,
        1.0,
    )?;
    let height = range_pair(&format!("{path}.where.height"), p.where_.height, 0.0, 1.0)?;
    let slope = range_pair(&format!("{path}.where.slope"), p.where_.slope, 0.0, 90.0)?;
    let color = match p.material {
        RockMaterialFile::Albedo {
            color: c,
            variation,
            ..
        } => {
            if variation != 0.0 {
                return Err(Invalid::new(
                    format!("{path}.material.variation"),
                    "applies to scattered rocks only",
                ));
            }
            color(&format!("{path}.material.color"), c, 1.0)?
        }
        RockMaterialFile::Texture { .. } => {
            return Err(Invalid::new(
                format!("{path}.material"),
                "a population takes an `albedo` material (a texture needs the rocks' (u, v))",
            ))
        }
    };
    let parts = files.get(&format!("{path}.mesh"), &p.mesh, read_parts)?;
    // The scene's colour where the OBJ gives none.
    let parts = parts
        .iter()
        .map(|(part, diffuse)| Part {
            color: diffuse.unwrap_or(color),
            ..part.clone()
        })
        .collect();
    Ok(Population {
        parts: Arc::new(parts),
        count,
        scale: [s0 as f32, s1 as f32],
        align_to_ground: align as f32,
        height,
        slope,
        moisture: p.where_.check_moisture(path)?,
        seed: p.seed,
    })
}

/// Reads an OBJ's parts with their MTL materials' images: each part, and
/// its `Kd` if its material gives one (the scene's colour is laid on the
/// others by the caller, since parts read once serve every population
/// that names the file).
fn read_parts(full: &Path) -> Result<Vec<(Part, Option<Vec3>)>, String> {
    let image = |file: &Path, load: fn(&Path) -> crate::error::Result<Texture>| {
        let t = load(file).map_err(|e| format!("cannot read the image: {e}"))?;
        if t.width == 0 || t.height == 0 {
            return Err(format!("{} has no pixels", file.display()));
        }
        Ok(Arc::new(t))
    };
    let mut parts = Vec::new();
    for part in TriangleMesh::read_obj_parts(full)? {
        let mut mesh = part.mesh;
        if mesh.normals.is_empty() {
            mesh.normals = mesh.area_weighted_normals();
        }
        let m = part.material.as_ref();
        let opacity = m.map_or(1.0, |m| m.dissolve);
        if !(0.0..=1.0).contains(&opacity) {
            return Err(format!(
                "{}: material `{}` has an opacity (d) of {opacity}, outside 0..=1",
                full.display(),
                m.map_or("", |m| &m.name)
            ));
        }
        let with =
            |file: Option<&std::path::PathBuf>, load| file.map(|f| image(f, load)).transpose();
        let diffuse = match m.and_then(|m| m.diffuse) {
            Some(c) if !c.is_finite() || c.min_element() < 0.0 || c.max_element() > 1.0 => {
                return Err(format!(
                    "{}: material `{}` has a colour (Kd) outside 0..=1",
                    full.display(),
                    m.map_or("", |m| &m.name)
                ))
            }
            c => c,
        };
        let image = with(m.and_then(|m| m.diffuse_map.as_ref()), Texture::load_srgb)?;
        let alpha = with(m.and_then(|m| m.alpha_map.as_ref()), Texture::load_alpha)?;
        // Coordinates are kept only where an image looks them up.
        let uvs = match image.is_some() || alpha.is_some() {
            true => part.uvs,
            false => Vec::new(),
        };
        let look = Part {
            mesh,
            uvs,
            color: Vec3::ONE,
            image,
            opacity,
            alpha,
        };
        parts.push((look, diffuse));
    }
    Ok(parts)
}
