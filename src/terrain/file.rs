//! `terrain.generator` and `terrain.far_field` in a scene file and their
//! checks: each generator's parameters in range, a heightmap read.
//!
//! ```json
//! "generator": { "type": "fault_line", "iterations": 400 }
//! ```

use serde::Deserialize;

use super::far_field::{FarField, MAX_RINGS};
use super::noise::Octaves;
use super::{DiamondSquare, FaultLine, Generator, Hills, Noise, PostStep};
use crate::check::{above, count, within, Check, Files, Invalid};

/// `terrain.far_field`: nested rings of coarser grids around the tile.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FarFieldFile {
    /// Number of rings, 1..=12; ring k spans 2^k times the tile's size,
    /// each twice the cell size of the one inside it. Default 6.
    pub rings: u32,
    /// Samples along the longer side of each ring, 129..=8193. The first
    /// ring's cells must be whole tile cells (resolution − 1 divides twice
    /// the tile's cells along that side) and each side of a ring 8m cells.
    /// Default: the coarsest such rings (1, 2, 4, ... tile cells a first-ring
    /// cell) that together hold no more samples than the tile.
    pub resolution: Option<u32>,
}

impl Default for FarFieldFile {
    fn default() -> Self {
        FarFieldFile {
            rings: 6,
            resolution: None,
        }
    }
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
    Heightmap(super::import::HeightmapFile),
    /// Tectonic uplift against fluvial erosion (see [`crate::terrain::uplift`]).
    Uplift(super::uplift::Uplift),
}

impl Default for GeneratorFile {
    fn default() -> Self {
        GeneratorFile::FaultLine(FaultLine::default())
    }
}

fn validate_hills(p: &Hills) -> Check<Hills> {
    let g = "terrain.generator";
    count(&format!("{g}.iterations"), p.iterations, 1, 100_000)?;
    let r0 = above(&format!("{g}.radius[0]"), p.radius[0], 0.0, 1.0)?;
    within(&format!("{g}.radius[1]"), p.radius[1], r0, 1.0)?;
    within(&format!("{g}.min_amplitude"), p.min_amplitude, 0.0, 1.0)?;
    within(&format!("{g}.floor"), p.floor, 0.0, 1.0)?;
    if let Some([a, b]) = p.reset {
        count(&format!("{g}.reset[0]"), a, 1, p.iterations)?;
        count(&format!("{g}.reset[1]"), b, a, p.iterations)?;
    }
    Ok(p.clone())
}

fn validate_uplift(p: &super::uplift::Uplift) -> Check<super::uplift::Uplift> {
    let g = "terrain.generator";
    count(&format!("{g}.iterations"), p.iterations, 1, 10_000)?;
    above(&format!("{g}.dt"), p.dt, 0.0, 1e6)?;
    let lo = within(&format!("{g}.uplift[0]"), p.uplift[0], 0.0, 1.0)?;
    within(&format!("{g}.uplift[1]"), p.uplift[1], lo, 1.0)?;
    above(&format!("{g}.uplift_size"), p.uplift_size, 0.0, 4.0)?;
    above(&format!("{g}.k"), p.k, 0.0, 1.0)?;
    within(&format!("{g}.m"), p.m, 0.0, 2.0)?;
    within(&format!("{g}.n"), p.n, 1.0, 4.0)?;
    Ok(p.clone())
}

fn validate_noise(p: &Noise) -> Check<Noise> {
    let g = "terrain.generator";
    match &p.octaves {
        Octaves::Fractal {
            count: n,
            frequency,
            lacunarity,
            gain,
        } => {
            count(&format!("{g}.octaves.count"), *n, 1, 16)?;
            above(&format!("{g}.octaves.frequency"), *frequency, 0.0, 1e3)?;
            within(&format!("{g}.octaves.lacunarity"), *lacunarity, 1.0, 4.0)?;
            within(&format!("{g}.octaves.gain"), *gain, 0.0, 1.0)?;
        }
        Octaves::List(list) => {
            if list.is_empty() || list.len() > 16 {
                return Err(Invalid::new(
                    format!("{g}.octaves"),
                    format!(
                        "must list 1 to 16 [amplitude, frequency] pairs, got {}",
                        list.len()
                    ),
                ));
            }
            for (k, [a, f]) in list.iter().enumerate() {
                within(&format!("{g}.octaves[{k}][0]"), *a, -1e6, 1e6)?;
                above(&format!("{g}.octaves[{k}][1]"), *f, 0.0, 1e3)?;
            }
        }
    }
    within(&format!("{g}.offset"), p.offset, -1e6, 1e6)?;
    if let Some(w) = p.warp {
        within(&format!("{g}.warp.amount"), w.amount, 0.0, 1e4)?;
        above(&format!("{g}.warp.frequency"), w.frequency, 0.0, 1e3)?;
    }
    if let Some(i) = p.island {
        within(&format!("{g}.island.radius"), i.radius, 0.0, 1.0)?;
        above(&format!("{g}.island.falloff"), i.falloff, 0.0, 2.0)?;
        within(&format!("{g}.island.sea_level"), i.sea_level, 0.0, 1.0)?;
    }
    Ok(p.clone())
}

impl PostStep {
    /// The step, checked; errors name `path` (`terrain.post[k]`).
    pub fn check(&self, path: &str) -> Check<PostStep> {
        match self {
            PostStep::Normalize => {}
            PostStep::Smooth { radius, .. } => {
                count(&format!("{path}.radius"), *radius, 1, 64)?;
            }
            PostStep::Thermal {
                talus,
                iterations,
                strength,
            } => {
                within(&format!("{path}.talus"), *talus, 0.0, 89.0)?;
                count(&format!("{path}.iterations"), *iterations, 1, 10_000)?;
                within(&format!("{path}.strength"), *strength, 0.0, 1.0)?;
            }
            PostStep::Hydraulic(h) => {
                count(&format!("{path}.droplets"), h.droplets, 1, 10_000_000)?;
                within(&format!("{path}.inertia"), h.inertia, 0.0, 1.0)?;
                above(&format!("{path}.capacity"), h.capacity, 0.0, 1e3)?;
                within(&format!("{path}.deposition"), h.deposition, 0.0, 1.0)?;
                within(&format!("{path}.erosion"), h.erosion, 0.0, 1.0)?;
                within(&format!("{path}.evaporation"), h.evaporation, 0.0, 1.0)?;
                count(&format!("{path}.lifetime"), h.lifetime, 1, 10_000)?;
            }
            PostStep::Terrace { levels, sharpness } => {
                count(&format!("{path}.levels"), *levels, 2, 1024)?;
                within(&format!("{path}.sharpness"), *sharpness, 0.0, 1.0)?;
            }
        }
        Ok(self.clone())
    }
}

fn validate_fault_line(p: &FaultLine) -> Check<FaultLine> {
    let g = "terrain.generator";
    count(&format!("{g}.iterations"), p.iterations, 1, 100_000)?;
    let d0 = above(&format!("{g}.displacement"), p.displacement, 0.0, 1e6)?;
    within(
        &format!("{g}.min_displacement"),
        p.min_displacement,
        0.0,
        d0,
    )?;
    count(&format!("{g}.smoothing"), p.smoothing, 0, 64)?;
    Ok(p.clone())
}

fn validate_diamond_square(p: &DiamondSquare) -> Check<DiamondSquare> {
    let g = "terrain.generator";
    within(&format!("{g}.roughness"), p.roughness, 0.0, 4.0)?;
    let range = above(&format!("{g}.range"), p.range, 0.0, 1e6)?;
    within(&format!("{g}.min_offset"), p.min_offset, 0.0, range)?;
    if let Some(c) = p.corners {
        for (k, v) in c.iter().enumerate() {
            within(&format!("{g}.corners[{k}]"), *v, -1e6, 1e6)?;
        }
    }
    Ok(p.clone())
}

impl GeneratorFile {
    /// The generator, its parameters checked; a heightmap is read (through
    /// `files`) and its size in samples returned beside it.
    pub fn check(&self, files: &Files) -> Check<(Generator, Option<[u32; 2]>)> {
        let (f, g) = (self, "terrain.generator");
        let (generator, native) = match f {
            GeneratorFile::FaultLine(p) => (Generator::FaultLine(validate_fault_line(p)?), None),
            GeneratorFile::DiamondSquare(p) => {
                (Generator::DiamondSquare(validate_diamond_square(p)?), None)
            }
            GeneratorFile::Hills(p) => (Generator::Hills(validate_hills(p)?), None),
            GeneratorFile::Noise(p) => (Generator::Noise(validate_noise(p)?), None),
            GeneratorFile::Uplift(p) => (Generator::Uplift(validate_uplift(p)?), None),
            GeneratorFile::Heightmap(p) => {
                if p.path.is_empty() {
                    return Err(Invalid::new(
                        format!("{g}.path"),
                        "must name a grayscale PNG or a GeoTIFF DEM",
                    ));
                }
                let map = files.get(&format!("{g}.path"), &p.path, |full| {
                    if super::geotiff::is_geotiff(full) {
                        super::geotiff::load(full)
                    } else {
                        super::import::load(full)
                    }
                })?;
                let native = [map.width as u32, map.height as u32];
                (Generator::Heightmap(map), Some(native))
            }
        };
        Ok((generator, native))
    }
}

impl FarFieldFile {
    /// The rings around a tile of `resolution` samples, checked to fit it.
    pub fn check(&self, resolution: [usize; 2]) -> Check<FarField> {
        let ff = self;
        let p = "terrain.far_field";
        let rings = count(&format!("{p}.rings"), ff.rings, 1, MAX_RINGS)?;
        let samples = ff.resolution.map(|n| n as usize);
        let [w, h] = resolution;
        let Some(far) = FarField::fit(rings, resolution, samples) else {
            let long = w.max(h) - 1;
            return Err(match samples {
                Some(n) => Invalid::new(
                    format!("{p}.resolution"),
                    format!(
                        "{n} does not fit a {w}×{h} tile: a ring's first cells must be a whole number of tile cells, so resolution − 1 must divide {} and give rings of 8m cells, 128 to 8192 (e.g. {})",
                        2 * long,
                        long / 2 + 1
                    ),
                ),
                None => Invalid::new(
                    "terrain.resolution",
                    format!(
                        "a {w}×{h} tile cannot take far-field rings: each side needs 2(n − 1) to split into rings of 8m cells, 128 to 8192 (use sides like 129, 257, 513, 1025)"
                    ),
                ),
            });
        };
        Ok(far)
    }
}

/// `terrain.rivers`: lakes in the land's hollows and rivers that carve
/// their channels down to them and the sea (see
/// [`crate::terrain::hydrology`]). The water's look (colour, clarity,
/// waves, wet shore) is the `water` section's; without a `level` there
/// it is a look only, with no sea.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RiversFile {
    /// Catchment at which water runs as a river: the fraction of the
    /// tile's area that drains through a point, in (0, 1]. Default 0.01.
    pub catchment: f64,
    /// Width of a river's channel at the catchment threshold, world
    /// units, > 0: a third of it at the very source, all of it where the
    /// catchment has doubled; it grows as the square root of the
    /// catchment. Default 3 grid cells.
    pub width: Option<f64>,
    /// Widest channel, world units, >= `width`. Default 4 × `width`.
    pub max_width: Option<f64>,
    /// Depth of the water where a river starts, world units, > 0; it grows
    /// as the catchment to the power 0.4. Default 1 % of the terrain's
    /// height.
    pub depth: Option<f64>,
    /// Width of the banks beside a channel, over which the land rises from
    /// the water back to its own height, world units, >= 0. Default 2 ×
    /// `width`.
    pub banks: Option<f64>,
    /// Fill the land's hollows with lakes at the level of their spill
    /// points. Default true.
    pub lakes: bool,
    /// A hollow holds a lake where it is at least this deep, world units,
    /// >= 0. Default 0.5 % of the terrain's height.
    pub min_lake_depth: Option<f64>,
    /// Distance from the water over which the land dries: the `moisture`
    /// mask falls from 1 at the water to 0 here, and banks within it are
    /// wet up to `water.shore` above the water, world units, > 0. Default
    /// 4 × `width`.
    pub reach: Option<f64>,
    /// Slope of a river's surface (rise over run) from which it turns
    /// to white water, at its whitest from twice it, > 0. Default 0.25.
    pub white_water: f64,
}

impl Default for RiversFile {
    fn default() -> Self {
        RiversFile {
            catchment: 0.01,
            width: None,
            max_width: None,
            depth: None,
            banks: None,
            lakes: true,
            min_lake_depth: None,
            reach: None,
            white_water: 0.25,
        }
    }
}

impl RiversFile {
    /// The rivers over a tile of `size` world units and `resolution`
    /// samples whose relief is `height`, with the sea at `sea_level` if
    /// there is one.
    pub fn check(
        &self,
        size: [f32; 2],
        resolution: [usize; 2],
        height: f64,
        sea_level: Option<f64>,
    ) -> Check<super::hydrology::Rivers> {
        let p = "terrain.rivers";
        let cell = (size[0] as f64 / (resolution[0] - 1) as f64)
            .max(size[1] as f64 / (resolution[1] - 1) as f64);
        let width = above(
            &format!("{p}.width"),
            self.width.unwrap_or(3.0 * cell),
            0.0,
            1e7,
        )?;
        let max_width = within(
            &format!("{p}.max_width"),
            self.max_width.unwrap_or(4.0 * width),
            width,
            1e7,
        )?;
        let relief = if height > 0.0 { height } else { 1.0 };
        Ok(super::hydrology::Rivers {
            catchment: above(&format!("{p}.catchment"), self.catchment, 0.0, 1.0)?,
            width,
            max_width,
            depth: above(
                &format!("{p}.depth"),
                self.depth.unwrap_or(0.01 * relief),
                0.0,
                1e6,
            )?,
            banks: within(
                &format!("{p}.banks"),
                self.banks.unwrap_or(2.0 * width),
                0.0,
                1e7,
            )?,
            min_lake_depth: self
                .lakes
                .then(|| {
                    within(
                        &format!("{p}.min_lake_depth"),
                        self.min_lake_depth.unwrap_or(0.005 * relief),
                        0.0,
                        1e6,
                    )
                })
                .transpose()?,
            sea_level,
            reach: above(
                &format!("{p}.reach"),
                self.reach.unwrap_or(4.0 * width),
                0.0,
                1e7,
            )?,
        })
    }

    /// The white-water slope, checked.
    pub fn white_water(&self) -> Check<f64> {
        above("terrain.rivers.white_water", self.white_water, 0.0, 1e3)
    }
}
