//! `populations` in a scene file and their check: the mesh read, the
//! counts, scales and masks in range.
//!
//! ```json
//! "populations": [{ "mesh": "../assets/bush.obj", "count": 300,
//!                   "where": { "slope": [0, 30] } }]
//! ```

use serde::Deserialize;

use super::Population;
use crate::check::{above, color, count, range_pair, within, Check, Files, Invalid};
use crate::mesh::TriangleMesh;
use crate::rock::{RockMaterialFile, WhereFile};

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
    let mesh = files.get(&format!("{path}.mesh"), &p.mesh, |full| {
        let mut mesh = TriangleMesh::read_obj(full)?;
        if mesh.normals.is_empty() {
            mesh.normals = mesh.area_weighted_normals();
        }
        Ok(mesh)
    })?;
    Ok(Population {
        mesh,
        count,
        scale: [s0 as f32, s1 as f32],
        align_to_ground: align as f32,
        height,
        slope,
        moisture: p.where_.check_moisture(path)?,
        seed: p.seed,
        color,
    })
}
