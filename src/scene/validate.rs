//! From the raw [`SceneFile`] to a checked [`Scene`]: every number in range,
//! degrees to radians, colours and vectors to glam types. After this step
//! nothing in scree reports a user-input error about the scene.

use super::file::*;
use super::{
    ImageSettings, Integrator, Scene, TerrainSettings, MAX_BOUNCES, MAX_IMAGE_SIDE, MAX_SAMPLES,
    MAX_TERRAIN_SIDE,
};
use crate::animation::file::validate_animation;
use crate::camera::CameraSettings;
use crate::check::{above, count, within, Check, Files};
use crate::population::file::validate_population;
use crate::rock::file::{validate_rock, validate_scatter};
use crate::shade::file::{check_sun_and_sky, CloudContext, Eye, Shore};
use crate::shade::SkyFile;
use crate::terrain::Generator;

/// Checks every value of `raw` and loads its textures; relative paths
/// resolve against `dir`.
pub fn validate(raw: &SceneFile, files: &Files) -> Check<Scene> {
    let image = validate_image(&raw.image)?;
    let camera = CameraSettings::try_from(&raw.camera)?;
    let units = raw
        .units
        .map(|u| above("units", u, 0.0, 1e9))
        .transpose()?
        .unwrap_or(1.0);
    let terrain = validate_terrain(&raw.terrain, files, units)?;
    let rocks = raw
        .rocks
        .iter()
        .enumerate()
        .map(|(i, r)| validate_rock(&format!("rocks[{i}]"), r, files))
        .collect::<Check<Vec<_>>>()?;
    let scatter = raw
        .scatter
        .as_ref()
        .map(|s| validate_scatter(s, terrain.size, files))
        .transpose()?;
    let (sky_distance, fog_density) = distance_defaults(&terrain, units);
    let eye = Eye {
        height: camera.position.y as f64,
        units,
        reach: sight(&terrain),
    };
    let (sun, sky) = check_sun_and_sky(&raw.sun, &raw.sky, eye)?;
    let sky_light = raw.sky_light.check(sky_distance)?;
    // The physical atmosphere draws its own haze: no fog unless asked.
    let fog_density = match raw.sky {
        SkyFile::Atmosphere { .. } => 0.0,
        _ => fog_density,
    };
    let fog = raw.fog.check(fog_density)?;
    let shore = Shore {
        island: matches!(&terrain.generator, Generator::Noise(n) if n.island.is_some()),
        height: terrain.height,
        planet_radius: terrain.planet_radius,
    };
    // Rivers take the water's look, and run to its sea if it has one.
    let rivers = raw.terrain.rivers.as_ref();
    let water = match (&raw.water, rivers) {
        (Some(w), _) => Some(w.check(shore, raw.seed, rivers)?),
        (None, Some(_)) => Some(WaterFile::default().check(shore, raw.seed, rivers)?),
        (None, None) => None,
    };
    let mut terrain = terrain;
    terrain.rivers = rivers
        .map(|r| {
            let sea = water
                .as_ref()
                .filter(|w| w.is_sea())
                .map(|w| w.level as f64);
            r.check(terrain.size, terrain.resolution, terrain.height, sea)
        })
        .transpose()?;
    let time = within("time", raw.time, -1e9, 1e9)?;
    let cloud_context = CloudContext {
        height: terrain.height,
        seed: raw.seed,
        time,
        planet: terrain
            .planet_radius
            .unwrap_or(crate::shade::atmosphere::BOTTOM / units),
    };
    let most = crate::shade::clouds::MAX_LAYERS;
    if raw.clouds.len() > most {
        return Err(crate::check::Invalid::new(
            "clouds",
            format!("must list at most {most} layers, got {}", raw.clouds.len()),
        ));
    }
    let clouds = crate::shade::clouds::Clouds {
        layers: raw
            .clouds
            .iter()
            .enumerate()
            .map(|(k, c)| c.check(k, cloud_context))
            .collect::<Check<Vec<_>>>()?,
    };
    let animation = raw
        .animation
        .as_ref()
        .map(|a| validate_animation(a, &raw.camera.projection))
        .transpose()?;
    let populations = raw
        .populations
        .iter()
        .enumerate()
        .map(|(k, p)| validate_population(&format!("populations[{k}]"), p, files))
        .collect::<Check<Vec<_>>>()?;
    let area = terrain.size[0] as f64 * terrain.size[1] as f64;
    let plants = raw
        .plants
        .iter()
        .enumerate()
        .map(|(k, p)| p.check(k, raw.seed, area, files))
        .collect::<Check<Vec<_>>>()?;
    Ok(Scene {
        image,
        seed: raw.seed,
        units,
        animation,
        populations,
        plants,
        camera,
        terrain,
        rocks,
        scatter,
        sun,
        sky,
        sky_light,
        fog,
        clouds,
        water,
        integrator: match raw.integrator {
            IntegratorFile::Direct => Integrator::Direct,
            IntegratorFile::Path {
                bounces,
                volume_bounces,
            } => Integrator::Path {
                bounces: count("integrator.bounces", bounces, 0, MAX_BOUNCES)?,
                volume_bounces: count("integrator.volume_bounces", volume_bounces, 0, 1024)?,
            },
        },
    })
}

fn validate_image(f: &ImageFile) -> Check<ImageSettings> {
    Ok(ImageSettings {
        width: count("image.width", f.width, 1, MAX_IMAGE_SIDE)?,
        height: count("image.height", f.height, 1, MAX_IMAGE_SIDE)?,
        samples: count("image.samples", f.samples, 1, MAX_SAMPLES)?,
        exposure_scale: within("image.exposure", f.exposure, -20.0, 20.0)?.exp2() as f32,
        tonemap: f.tonemap,
        noise_threshold: within("image.noise_threshold", f.noise_threshold, 0.0, 1.0)? as f32,
        transparent: f.transparent,
    })
}

/// Extinction per metre of clear air with 50 km visibility (Koschmieder:
/// 3.912 / visibility).
const CLEAR_AIR_PER_METRE: f64 = 3.912 / 50_000.0;

/// The defaults that scale with the terrain: the sky light's occlusion
/// distance, 0.4 × the tile's longer side, and the fog's density, 0.4 over
/// that side (so the tile's far side is seen through e⁻⁰·⁴ of it, as a
/// 100-unit tile always was at 0.004). With a far field the land runs on
/// to half its outer ring's side E, and the fog thins to 3/E there (e⁻³ at
/// the land's edge); it is never thinner than clear air at `units` metres
/// a world unit.
fn distance_defaults(t: &TerrainSettings, units: f64) -> (f64, f64) {
    let side = t.size[0].max(t.size[1]) as f64;
    let mut fog = 0.4 / side;
    if let Some(far) = t.far_field {
        let edge = 0.5 * side * (1u64 << far.rings) as f64;
        fog = fog.min(3.0 / edge);
    }
    (0.4 * side, fog.max(CLEAR_AIR_PER_METRE * units).min(10.0))
}

/// The farthest the land can be seen, world units: the far field's edge
/// or, without one, four times the tile's longer side (the atmosphere's
/// aerial perspective is tabulated that far).
fn sight(t: &TerrainSettings) -> f64 {
    let side = t.size[0].max(t.size[1]) as f64;
    match t.far_field {
        Some(far) => side * (1u64 << far.rings) as f64,
        None => 4.0 * side,
    }
}

fn validate_terrain(f: &TerrainFile, files: &Files, units: f64) -> Check<TerrainSettings> {
    let (generator, native) = f.generator.check(files)?;
    // A DEM's metres become world units: its extent (where georeferenced)
    // and its heights, unless the scene says otherwise.
    let dem = match &generator {
        Generator::Heightmap(m) => m.dem.as_ref(),
        _ => None,
    };
    let size = f
        .size
        .or_else(|| dem.and_then(|d| d.size).map(|s| s.map(|v| v / units)))
        .unwrap_or(DEFAULT_TERRAIN_SIZE);
    let size = [
        above("terrain.size[0]", size[0], 0.0, 1e7)? as f32,
        above("terrain.size[1]", size[1], 0.0, 1e7)? as f32,
    ];
    let height = f
        .height
        .or_else(|| dem.map(|d| d.top.abs() / units))
        .unwrap_or(DEFAULT_TERRAIN_HEIGHT);
    let height = within("terrain.height", height, 0.0, 1e6)?;
    let res = f.resolution.or(native).unwrap_or(DEFAULT_RESOLUTION);
    let resolution = [
        count("terrain.resolution[0]", res[0], 2, MAX_TERRAIN_SIDE)? as usize,
        count("terrain.resolution[1]", res[1], 2, MAX_TERRAIN_SIDE)? as usize,
    ];
    let (material, layers) = f.material.check(height, files)?;
    let post = f
        .post
        .iter()
        .enumerate()
        .map(|(k, step)| step.check(&format!("terrain.post[{k}]")))
        .collect::<Check<Vec<_>>>()?;
    let far_field = f
        .far_field
        .as_ref()
        .map(|ff| ff.check(resolution))
        .transpose()?;
    let planet_radius = f
        .planet_radius
        .map(|r| above("terrain.planet_radius", r, 0.0, 1e12))
        .transpose()?;
    Ok(TerrainSettings {
        far_field,
        planet_radius,
        size,
        resolution,
        height,
        normalize: f.normalize.unwrap_or(native.is_none()),
        generator,
        material,
        layers,
        smooth: f.normals == NormalsFile::Smooth,
        post,
        rivers: None,
    })
}
