//! From the raw [`SceneFile`] to a checked [`Scene`]: every number in range,
//! degrees to radians, colours and vectors to glam types. After this step
//! nothing in scree reports a user-input error about the scene.

use std::path::Path;

use glam::Vec3;

use super::file::*;
use super::file::{DEFAULT_RESOLUTION, DEFAULT_TERRAIN_HEIGHT, DEFAULT_TERRAIN_SIZE};
use super::locate::{locate, locate_string, parse_path};
use super::{
    CameraSettings, ImageSettings, Integrator, RockMaterial, RockSpec, ScatterSpec, Scene,
    TerrainSettings, MAX_BOUNCES, MAX_IMAGE_SIDE, MAX_SAMPLES, MAX_TERRAIN_SIDE,
};
use crate::animation::Animation;
use crate::camera::{FisheyeMapping, Projection};
use crate::error::Error;
use crate::rock::scatter::ScatterParams;
use crate::rock::{Displacement, Mapping, Placement, Tessellation};
use crate::shade::sky::{sun_transmittance, Mars, Preetham};
use crate::shade::{Fog, Material, Sky, SkyLight, Sun};
use crate::terrain::noise::Octaves;
use crate::terrain::{DiamondSquare, FaultLine, Generator, Hills, Noise, PostStep};
use crate::texture::Texture;
use std::sync::Arc;

/// A value that failed validation: where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// JSON path, e.g. `terrain.resolution[0]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl Invalid {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Invalid {
        Invalid {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The error with the line found in `src`.
    pub fn into_error(self, src: &str, file: &str) -> Error {
        Error::Scene {
            file: file.to_string(),
            line: locate(src, &parse_path(&self.path)),
            path: self.path,
            message: self.message,
        }
    }
}

type Check<T> = std::result::Result<T, Invalid>;

/// Parses JSON into the raw structs, turning serde's errors into one clear
/// sentence with the JSON path, the line and a "did you mean" for typos.
pub fn deserialize(src: &str, file: &str) -> Result<SceneFile, Error> {
    let de = &mut serde_json::Deserializer::from_str(src);
    let result: Result<SceneFile, _> = serde_path_to_error::deserialize(&mut *de);
    let err = match result.map(|raw| (raw, de.end())) {
        Ok((raw, Ok(()))) => {
            return Ok(raw);
        }
        Ok((_, Err(trailing))) => {
            // Text after the scene's object: `{...} garbage`.
            return Err(Error::Scene {
                file: file.to_string(),
                path: String::new(),
                line: Some((trailing.line(), trailing.column())),
                message: "malformed JSON: text after the end of the scene object".into(),
            });
        }
        Err(e) => e,
    };
    let mut path = err.path().to_string();
    if path == "." {
        path.clear();
    }
    let inner = err.inner();
    // Inside a tagged object (`{"type": ..., ...}`) serde knows only the
    // object's path: find the field that holds the fault.
    let mut narrowed = false;
    if inner.classify() == serde_json::error::Category::Data {
        let deeper = narrow_path(src, &path, &inner.to_string());
        narrowed = deeper != path;
        path = deeper;
    }
    let full = inner.to_string();
    let message = full
        .rfind(" at line ")
        .map_or(full.as_str(), |i| &full[..i])
        .to_string();
    let mut line = (inner.line() > 0).then(|| (inner.line(), inner.column()));
    if narrowed {
        line = locate(src, &parse_path(&path)).or(line);
    }
    let message = match inner.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            format!("malformed JSON: {message}")
        }
        serde_json::error::Category::Io => message,
        serde_json::error::Category::Data => {
            if let Some((field, hint)) = unknown_name_hint(&message) {
                if field.is_none() {
                    // An unknown variant: point at its string in the file.
                    let name = message.split('`').nth(1).unwrap_or_default();
                    line = locate_string(src, &parse_path(&path), name).or(line);
                }
                if let Some(field) = field {
                    // Point at the unknown field itself (serde_path_to_error
                    // already does, except inside tagged enums).
                    path = if path.is_empty() {
                        field
                    } else if path.ends_with(&field) {
                        path
                    } else {
                        format!("{path}.{field}")
                    };
                    line = locate(src, &parse_path(&path)).or(line);
                }
                format!("{message}{hint}")
            } else {
                message
            }
        }
    };
    Err(Error::Scene {
        file: file.to_string(),
        path,
        line,
        message,
    })
}

/// The serde message of `value` read as a scene (`None` when it reads).
fn data_error(value: &serde_json::Value) -> Option<String> {
    serde_path_to_error::deserialize::<_, SceneFile>(value)
        .err()
        .map(|e| e.inner().to_string())
}

/// The path of the value inside the object at `path` that makes serde fail
/// with `message`: a field of a tagged object whose own value alone (with
/// the tag) fails the same way, and without which the object reads
/// otherwise; followed down through nested objects. `path` as it is where
/// no such field is found.
fn narrow_path(src: &str, path: &str, message: &str) -> String {
    let Ok(root) = serde_json::from_str::<serde_json::Value>(src) else {
        return path.to_string();
    };
    let message = message
        .rfind(" at line ")
        .map_or(message, |i| &message[..i]);
    let same = |v: &serde_json::Value| {
        data_error(v).is_some_and(|m| m.rfind(" at line ").map_or(&m[..], |i| &m[..i]) == message)
    };
    let mut segments = parse_path(path);
    while let Some(object) = value_at(&root, &segments)
        .and_then(|v| v.as_object())
        .cloned()
    {
        let tag = object.get("type").cloned();
        let culprit = object.keys().filter(|k| *k != "type").find(|k| {
            let mut alone = serde_json::Map::new();
            if let Some(t) = &tag {
                alone.insert("type".into(), t.clone());
            }
            alone.insert((*k).clone(), object[k.as_str()].clone());
            let mut without = object.clone();
            without.remove(k.as_str());
            let with_only = replaced(&root, &segments, alone.into());
            let with_rest = replaced(&root, &segments, without.into());
            same(&with_only) && !same(&with_rest)
        });
        match culprit {
            Some(k) => segments.push(super::locate::Segment::Key(k.clone())),
            None => break,
        }
    }
    segments
        .iter()
        .map(|s| match s {
            super::locate::Segment::Key(k) => format!(".{k}"),
            super::locate::Segment::Index(i) => format!("[{i}]"),
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

/// The value at `path` in `root`.
fn value_at<'a>(
    root: &'a serde_json::Value,
    path: &[super::locate::Segment],
) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(root, |v, s| match s {
        super::locate::Segment::Key(k) => v.get(k.as_str()),
        super::locate::Segment::Index(i) => v.get(*i),
    })
}

/// `root` with the value at `path` replaced by `value`.
fn replaced(
    root: &serde_json::Value,
    path: &[super::locate::Segment],
    value: serde_json::Value,
) -> serde_json::Value {
    let mut copy = root.clone();
    let slot = path.iter().try_fold(&mut copy, |v, s| match s {
        super::locate::Segment::Key(k) => v.get_mut(k.as_str()),
        super::locate::Segment::Index(i) => v.get_mut(*i),
    });
    if let Some(slot) = slot {
        *slot = value;
    }
    copy
}

/// For a whole number outside its type's range (`-5` where a count is
/// expected), the range the field accepts, in the validator's words: the
/// scene is read again with the value at each end of the type's range,
/// and where the validator refuses one of them, its message (with the
/// value given) replaces serde's. `err` as it is otherwise.
pub fn explain_range(src: &str, dir: &Path, err: Error) -> Error {
    let Error::Scene {
        file,
        path,
        line,
        message,
    } = err
    else {
        return err;
    };
    let out_of_type = message.starts_with("invalid value: integer");
    let bounds: &[u64] = match message.rsplit("expected ").next().filter(|_| out_of_type) {
        Some("u8") => &[u8::MAX as u64, 0],
        Some("u16") => &[u16::MAX as u64, 0],
        Some("u32") => &[u32::MAX as u64, 0],
        Some("u64") | Some("usize") => &[u64::MAX, 0],
        _ => &[],
    };
    let keep = |message: String| Error::Scene {
        file: file.clone(),
        path: path.clone(),
        line,
        message,
    };
    if bounds.is_empty() || path.is_empty() {
        return keep(message);
    }
    let Ok(root) = serde_json::from_str::<serde_json::Value>(src) else {
        return keep(message);
    };
    let segments = parse_path(&path);
    let Some(given) = value_at(&root, &segments).map(|v| v.to_string()) else {
        return keep(message);
    };
    for &bound in bounds {
        let probe = replaced(&root, &segments, bound.into());
        let Ok(raw) = serde_json::from_value::<SceneFile>(probe) else {
            continue;
        };
        if let Err(refused) = validate(&raw, dir) {
            if refused.path == path {
                let rule = refused
                    .message
                    .rfind(", got ")
                    .map_or(&refused.message[..], |i| &refused.message[..i]);
                return keep(format!("{rule}, got {given}"));
            }
        }
    }
    // The probe could not be read (another fault elsewhere): the range
    // the schema gives the field.
    let pattern = |p: &str| {
        let mut out = String::new();
        let mut skip = None;
        for c in p.chars() {
            match (skip, c) {
                (None, '{') => skip = Some('}'),
                (None, '[') => {
                    out.push_str("[]");
                    skip = Some(']');
                }
                (Some(end), c) if c == end => skip = None,
                (Some(_), _) => {}
                (None, c) => out.push(c),
            }
        }
        out
    };
    let wanted = pattern(&path);
    if let Some(&(_, lo, hi, open)) = super::schema::RANGES
        .iter()
        .find(|(p, ..)| pattern(p) == wanted)
    {
        let rule = if open {
            format!("must be greater than {lo} and at most {hi}")
        } else {
            format!("must be between {lo} and {hi}")
        };
        return keep(format!("{rule}, got {given}"));
    }
    let (lo, hi) = (bounds[1], bounds[0]);
    keep(format!(
        "must be a whole number between {lo} and {hi}, got {given}"
    ))
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown
/// variant `x`, ..."): the unknown field's name (None for a variant, which
/// is a value rather than a key) and a "did you mean" suffix when one of the
/// expected names is close.
fn unknown_name_hint(message: &str) -> Option<(Option<String>, String)> {
    let is_field = message.starts_with("unknown field `");
    if !is_field && !message.starts_with("unknown variant `") {
        return None;
    }
    let name = message.split('`').nth(1)?.to_string();
    let expected: Vec<&str> = message
        .split_once("expected")
        .map(|(_, rest)| rest.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    let closest = expected
        .iter()
        .map(|e| (strsim::levenshtein(&name, e), *e))
        .filter(|(d, e)| *d <= 2.max(e.len() / 3))
        .min();
    let hint = closest.map_or(String::new(), |(_, e)| format!(" (did you mean `{e}`?)"));
    Some((is_field.then_some(name), hint))
}

fn finite(path: &str, v: f64) -> Check<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(Invalid::new(
            path,
            format!("must be a finite number, got {v}"),
        ))
    }
}

/// `v` in [lo, hi].
fn within(path: &str, v: f64, lo: f64, hi: f64) -> Check<f64> {
    finite(path, v)?;
    if v < lo || v > hi {
        return Err(Invalid::new(
            path,
            format!("must be between {lo} and {hi}, got {v}"),
        ));
    }
    Ok(v)
}

/// `v` in (lo, hi].
fn above(path: &str, v: f64, lo: f64, hi: f64) -> Check<f64> {
    finite(path, v)?;
    if v <= lo || v > hi {
        return Err(Invalid::new(
            path,
            format!("must be greater than {lo} and at most {hi}, got {v}"),
        ));
    }
    Ok(v)
}

/// A range [lo, hi] within [min, max]: the first value in [min, max], the
/// second in [first, max].
fn range_pair(path: &str, v: [f64; 2], min: f64, max: f64) -> Check<[f32; 2]> {
    let a = within(&format!("{path}[0]"), v[0], min, max)?;
    let b = within(&format!("{path}[1]"), v[1], a, max)?;
    Ok([a as f32, b as f32])
}

fn count(path: &str, v: u32, lo: u32, hi: u32) -> Check<u32> {
    if v < lo || v > hi {
        return Err(Invalid::new(
            path,
            format!("must be between {lo} and {hi}, got {v}"),
        ));
    }
    Ok(v)
}

fn vec3(path: &str, v: [f64; 3]) -> Check<Vec3> {
    for (k, c) in v.iter().enumerate() {
        finite(&format!("{path}[{k}]"), *c)?;
        if c.abs() > 1e7 {
            return Err(Invalid::new(
                format!("{path}[{k}]"),
                format!("must be within ±1e7, got {c}"),
            ));
        }
    }
    Ok(Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32))
}

fn color(path: &str, v: [f64; 3], max: f64) -> Check<Vec3> {
    for (k, c) in v.iter().enumerate() {
        within(&format!("{path}[{k}]"), *c, 0.0, max)?;
    }
    Ok(Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32))
}

/// Checks every value of `raw` and loads its textures; relative paths
/// resolve against `dir`.
pub fn validate(raw: &SceneFile, dir: &Path) -> Check<Scene> {
    let image = validate_image(&raw.image)?;
    let camera = validate_camera(&raw.camera)?;
    let units = raw
        .units
        .map(|u| above("units", u, 0.0, 1e9))
        .transpose()?
        .unwrap_or(1.0);
    let terrain = validate_terrain(&raw.terrain, dir, units)?;
    let mut textures = TextureCache::new(dir);
    let rocks = raw
        .rocks
        .iter()
        .enumerate()
        .map(|(i, r)| validate_rock(&format!("rocks[{i}]"), r, &mut textures))
        .collect::<Check<Vec<_>>>()?;
    let scatter = raw
        .scatter
        .as_ref()
        .map(|s| validate_scatter(s, &terrain, &mut textures))
        .transpose()?;
    let (sun, sky) = validate_sun_and_sky(&raw.sun, &raw.sky)?;
    let (sky_distance, fog_density) = distance_defaults(&terrain, units);
    let sky_light = SkyLight {
        samples: count("sky_light.samples", raw.sky_light.samples, 0, 256)?,
        distance: match raw.sky_light.distance {
            Some(d) => above("sky_light.distance", d, 0.0, 1e7)?,
            None => sky_distance,
        } as f32,
    };
    let fog = Fog {
        density: match raw.fog.density {
            Some(d) => within("fog.density", d, 0.0, 10.0)?,
            None => fog_density,
        } as f32,
        color: raw
            .fog
            .color
            .map(|c| color("fog.color", c, 100.0))
            .transpose()?,
        height_falloff: within("fog.height_falloff", raw.fog.height_falloff, 0.0, 10.0)? as f32,
        base_height: within("fog.base_height", raw.fog.base_height, -1e7, 1e7)? as f32,
    };
    let water = raw
        .water
        .as_ref()
        .map(|w| validate_water(w, &terrain, raw.seed))
        .transpose()?;
    let animation = raw
        .animation
        .as_ref()
        .map(|a| validate_animation(a, &camera))
        .transpose()?;
    let populations = raw
        .populations
        .iter()
        .enumerate()
        .map(|(k, p)| validate_population(&format!("populations[{k}]"), p, dir))
        .collect::<Check<Vec<_>>>()?;
    Ok(Scene {
        image,
        seed: raw.seed,
        units,
        animation,
        populations,
        raw_sun: raw.sun.clone(),
        raw_sky: raw.sky.clone(),
        camera,
        terrain,
        rocks,
        scatter,
        sun,
        sky,
        sky_light,
        fog,
        water,
        integrator: match raw.integrator {
            IntegratorFile::Direct => Integrator::Direct,
            IntegratorFile::Path { bounces } => Integrator::Path {
                bounces: count("integrator.bounces", bounces, 0, MAX_BOUNCES)?,
            },
        },
    })
}

fn validate_water(
    w: &WaterFile,
    terrain: &TerrainSettings,
    seed: u64,
) -> Check<crate::shade::Water> {
    let island = matches!(&terrain.generator, Generator::Noise(n) if n.island.is_some());
    let level = match w.level {
        Some(level) => within("water.level", level, -1e7, 1e7)? as f32,
        None if island => (0.01 * terrain.height) as f32,
        None => {
            return Err(Invalid::new(
                "water",
                "needs a \"level\" (world units) unless the terrain is an island".to_string(),
            ))
        }
    };
    Ok(crate::shade::Water {
        level,
        color: color("water.color", w.color, 1.0)?,
        clarity: above("water.clarity", w.clarity, 0.0, 1e7)? as f32,
        waves: w
            .waves
            .as_ref()
            .map(|v| {
                Ok::<_, Invalid>(crate::shade::water::Waves {
                    amplitude: within("water.waves.amplitude", v.amplitude, 0.0, 100.0)? as f32,
                    scale: above("water.waves.scale", v.scale, 0.0, 1e7)? as f32,
                })
            })
            .transpose()?,
        shore: match w.shore {
            Some(s) => within("water.shore", s, 0.0, 1e7)? as f32,
            None => (0.01 * terrain.height) as f32,
        },
        seed: crate::hash::hash3(seed, 0x3A7E, 0),
        planet_radius: terrain.planet_radius,
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

fn validate_camera(f: &CameraFile) -> Check<CameraSettings> {
    let position = vec3("camera.position", f.position)?;
    let look_at = vec3("camera.look_at", f.look_at)?;
    let up = vec3("camera.up", f.up)?;
    let view = look_at - position;
    if view.length() < 1e-6 {
        return Err(Invalid::new(
            "camera.look_at",
            "must differ from camera.position",
        ));
    }
    if up.length() < 1e-6 || up.normalize().cross(view.normalize()).length() < 1e-4 {
        return Err(Invalid::new(
            "camera.up",
            "must be a non-zero direction that is not parallel to the view direction (look_at − position)",
        ));
    }
    Ok(CameraSettings {
        position,
        look_at,
        up,
        projection: validate_projection("camera.projection", &f.projection)?,
    })
}

/// Checks a projection's parameters against its limits.
pub fn validate_projection(path: &str, p: &ProjectionFile) -> Check<Projection> {
    let fov_path = format!("{path}.fov");
    let rad = |v: f64| v.to_radians() as f32;
    Ok(match *p {
        ProjectionFile::Perspective { fov } => {
            finite(&fov_path, fov)?;
            if fov <= 0.0 || fov >= 180.0 {
                return Err(Invalid::new(
                    fov_path,
                    format!("must be greater than 0 and less than 180 for perspective, got {fov}"),
                ));
            }
            Projection::Perspective { fov: rad(fov) }
        }
        ProjectionFile::Orthographic { width } => Projection::Orthographic {
            width: above(&format!("{path}.width"), width, 0.0, 1e7)? as f32,
        },
        ProjectionFile::Cylindrical { fov } => Projection::Cylindrical {
            fov: rad(above(&fov_path, fov, 0.0, 360.0)?),
        },
        ProjectionFile::Equirectangular { fov } => Projection::Equirectangular {
            fov: rad(above(&fov_path, fov, 0.0, 360.0)?),
        },
        ProjectionFile::Fisheye {
            fov,
            mapping,
            circle,
        } => {
            let max = match mapping {
                FisheyeMapping::Orthographic => 180.0,
                _ => 360.0,
            };
            above(&fov_path, fov, 0.0, max)?;
            if mapping == FisheyeMapping::Stereographic && fov >= 360.0 {
                return Err(Invalid::new(
                    fov_path,
                    format!("must be less than 360 for the stereographic mapping, got {fov}"),
                ));
            }
            Projection::Fisheye {
                fov: rad(fov),
                mapping,
                circle,
            }
        }
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

fn validate_terrain(f: &TerrainFile, dir: &Path, units: f64) -> Check<TerrainSettings> {
    let g = "terrain.generator";
    let (generator, native) = match &f.generator {
        GeneratorFile::FaultLine(p) => (Generator::FaultLine(validate_fault_line(p)?), None),
        GeneratorFile::DiamondSquare(p) => {
            (Generator::DiamondSquare(validate_diamond_square(p)?), None)
        }
        GeneratorFile::Hills(p) => (Generator::Hills(validate_hills(p)?), None),
        GeneratorFile::Noise(p) => (Generator::Noise(validate_noise(p)?), None),
        GeneratorFile::Heightmap(p) => {
            if p.path.is_empty() {
                return Err(Invalid::new(
                    format!("{g}.path"),
                    "must name a grayscale PNG or a GeoTIFF DEM",
                ));
            }
            let full = dir.join(&p.path);
            let map = if crate::terrain::geotiff::is_geotiff(&full) {
                crate::terrain::geotiff::load(&full)
            } else {
                crate::terrain::import::load(&full)
            }
            .map_err(|e| Invalid::new(format!("{g}.path"), e))?;
            let native = [map.width as u32, map.height as u32];
            (Generator::Heightmap(Arc::new(map)), Some(native))
        }
    };
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
    let mut layers = None;
    let material = match &f.material {
        MaterialFile::Layers {
            layers: list,
            detail,
        } => {
            layers = Some(std::sync::Arc::new(validate_layers(
                list,
                detail.as_ref(),
                dir,
            )?));
            Material::Layers
        }
        &MaterialFile::HeightSlope {
            sand_level,
            grass_level,
            snow_level,
            steep_angle,
            variation,
        } => {
            let p = "terrain.material";
            let sand = within(&format!("{p}.sand_level"), sand_level, 0.0, 1.0)?;
            let grass = within(&format!("{p}.grass_level"), grass_level, sand, 1.0)?;
            let snow = within(&format!("{p}.snow_level"), snow_level, grass, 1.0)?;
            let steep = within(&format!("{p}.steep_angle"), steep_angle, 0.0, 90.0)?;
            Material::HeightSlope {
                sand_top: (sand * height) as f32,
                grass_top: (grass * height) as f32,
                snow_bottom: (snow * height) as f32,
                steep_cos: steep.to_radians().cos() as f32,
                blend: (0.02 * height) as f32,
                variation: within(&format!("{p}.variation"), variation, 0.0, 0.5)? as f32,
            }
        }
        MaterialFile::Albedo { color: c } => {
            Material::Albedo(color("terrain.material.color", *c, 1.0)?)
        }
    };
    let post = f
        .post
        .iter()
        .enumerate()
        .map(|(k, step)| validate_post(&format!("terrain.post[{k}]"), step))
        .collect::<Check<Vec<_>>>()?;
    let far_field = match &f.far_field {
        None => None,
        Some(ff) => {
            use crate::terrain::far_field::{FarField, MAX_RINGS};
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
            Some(far)
        }
    };
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
    })
}

fn validate_layers(
    list: &[LayerFile],
    detail: Option<&DetailFile>,
    dir: &Path,
) -> Check<crate::shade::layers::Layers> {
    use crate::shade::layers::{Bump, Detail, Layer, Layers, Mask, MAX_LAYERS};
    let p = "terrain.material.layers";
    if list.is_empty() || list.len() > MAX_LAYERS {
        return Err(Invalid::new(
            p,
            format!("must list 1 to {MAX_LAYERS} layers, got {}", list.len()),
        ));
    }
    let mut textures = TextureCache::new(dir);
    let bump = |at: &str, height: f64, size: f64| -> Check<Bump> {
        Ok(Bump {
            height: within(&format!("{at}.height"), height, 0.0, 1e3)? as f32,
            size: above(&format!("{at}.size"), size, 0.0, 1e7)? as f32,
        })
    };
    let mut layers = Vec::with_capacity(list.len());
    for (k, l) in list.iter().enumerate() {
        let at = format!("{p}[{k}]");
        if k == 0 && l.mask.is_some() {
            return Err(Invalid::new(
                format!("{at}.mask"),
                "the first layer covers all ground and takes no mask",
            ));
        }
        let mask = match &l.mask {
            None => Mask::default(),
            Some(m) => {
                let at = format!("{at}.mask");
                Mask {
                    height: m
                        .height
                        .map(|v| range_pair(&format!("{at}.height"), v, 0.0, 1.0))
                        .transpose()?,
                    slope: m
                        .slope
                        .map(|v| range_pair(&format!("{at}.slope"), v, 0.0, 90.0))
                        .transpose()?,
                    aspect: match m.aspect {
                        Some(a) => Some((
                            within(&format!("{at}.aspect"), a, -360.0, 360.0)?.to_radians() as f32,
                            within(&format!("{at}.aspect_width"), m.aspect_width, 0.0, 180.0)?
                                .to_radians() as f32,
                        )),
                        None => None,
                    },
                    curvature: m
                        .curvature
                        .map(|v| range_pair(&format!("{at}.curvature"), v, -1.0, 1.0))
                        .transpose()?,
                    flow: m
                        .flow
                        .map(|v| range_pair(&format!("{at}.flow"), v, 0.0, 1.0))
                        .transpose()?,
                    fuzz: within(&format!("{at}.fuzz"), m.fuzz, 0.0, 1.0)? as f32,
                    noise: match within(&format!("{at}.noise"), m.noise, 0.0, 1.0)? {
                        0.0 => None,
                        amount => Some((
                            amount as f32,
                            above(&format!("{at}.noise_size"), m.noise_size, 0.0, 1e7)? as f32,
                        )),
                    },
                }
            }
        };
        layers.push(Layer {
            color: color(&format!("{at}.color"), l.color, 1.0)?,
            texture: match &l.texture {
                Some(t) => Some((
                    textures.get(&format!("{at}.texture"), t)?,
                    above(&format!("{at}.texture_size"), l.texture_size, 0.0, 1e7)? as f32,
                )),
                None => None,
            },
            roughness: l
                .roughness
                .map(|r| within(&format!("{at}.roughness"), r, 0.1, 1.0).map(|r| r as f32))
                .transpose()?,
            bump: l
                .bump
                .as_ref()
                .map(|b| bump(&format!("{at}.bump"), b.height, b.size))
                .transpose()?,
            mask,
        });
    }
    let detail = detail
        .map(|d| {
            Ok::<_, Invalid>(Detail {
                bump: bump("terrain.material.detail", d.height, d.size)?,
                variation: within("terrain.material.detail.variation", d.variation, 0.0, 1.0)?
                    as f32,
            })
        })
        .transpose()?;
    Ok(Layers {
        layers,
        detail,
        seed: 0x1A7E,
    })
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

fn validate_post(path: &str, step: &PostStep) -> Check<PostStep> {
    match step {
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
    Ok(step.clone())
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

/// The sun and the sky together: the physical skies also colour the sun.
/// Checks `animation`: frames, keys in order within the sequence, every
/// key's values in the ranges of the values they replace (`camera`'s
/// projection for a fov).
fn validate_animation(f: &AnimationFile, camera: &CameraSettings) -> Check<Animation> {
    use crate::animation::{CameraTrack, Key, SunPath};
    use glam::DVec3;
    let p = "animation";
    let frames = count(&format!("{p}.frames"), f.frames, 1, 1_000_000)?;
    let fps = above(&format!("{p}.fps"), f.fps, 0.0, 1000.0)?;
    let last = (frames - 1) as f64;
    // Keys' frames: finite, within the sequence, strictly increasing.
    let frames_of = |what: &str, keys: &[f64]| -> Check<()> {
        for (k, &frame) in keys.iter().enumerate() {
            let path = format!("{p}.{what}[{k}].frame");
            within(&path, frame, 0.0, last)?;
            if k > 0 && frame <= keys[k - 1] {
                return Err(Invalid::new(
                    path,
                    format!(
                        "keys must be in increasing frame order, got {frame} after {}",
                        keys[k - 1]
                    ),
                ));
            }
        }
        Ok(())
    };
    let camera_track = if f.camera.is_empty() {
        None
    } else {
        frames_of(
            "camera",
            &f.camera.iter().map(|k| k.frame).collect::<Vec<_>>(),
        )?;
        let mut track = CameraTrack {
            position: Vec::new(),
            look_at: Vec::new(),
            fov: Vec::new(),
            up: Vec::new(),
        };
        for (k, key) in f.camera.iter().enumerate() {
            let path = format!("{p}.camera[{k}]");
            let position = vec3(&format!("{path}.position"), key.position)?;
            let look_at = vec3(&format!("{path}.look_at"), key.look_at)?;
            if (look_at - position).length() < 1e-6 {
                return Err(Invalid::new(
                    format!("{path}.look_at"),
                    "must differ from the key's position",
                ));
            }
            let d = |v: [f64; 3]| DVec3::from_array(v);
            if let Some(up) = key.up {
                let v = vec3(&format!("{path}.up"), up)?;
                if v.length() < 1e-6 {
                    return Err(Invalid::new(
                        format!("{path}.up"),
                        "must be a non-zero direction",
                    ));
                }
                track.up.push(Key {
                    frame: key.frame,
                    value: d(up).normalize(),
                });
            }
            track.position.push(Key {
                frame: key.frame,
                value: d(key.position),
            });
            track.look_at.push(Key {
                frame: key.frame,
                value: d(key.look_at),
            });
            if let Some(fov) = key.fov {
                // As the scene's projection would take it.
                let mut file = ProjectionFile::of(&camera.projection);
                match &mut file {
                    ProjectionFile::Orthographic { .. } => {
                        return Err(Invalid::new(
                            format!("{path}.fov"),
                            "the orthographic projection has no fov",
                        ))
                    }
                    ProjectionFile::Perspective { fov: v }
                    | ProjectionFile::Cylindrical { fov: v }
                    | ProjectionFile::Equirectangular { fov: v }
                    | ProjectionFile::Fisheye { fov: v, .. } => *v = fov,
                }
                validate_projection(&path, &file)?;
                track.fov.push(Key {
                    frame: key.frame,
                    value: fov,
                });
            }
        }
        if !track.fov.is_empty() && track.fov.len() != f.camera.len() {
            return Err(Invalid::new(
                format!("{p}.camera"),
                "give `fov` in every camera key or in none",
            ));
        }
        if !track.up.is_empty() && track.up.len() != f.camera.len() {
            return Err(Invalid::new(
                format!("{p}.camera"),
                "give `up` in every camera key or in none",
            ));
        }
        Some(track)
    };
    let sun = match (&f.sun[..], &f.time_of_day) {
        ([], None) => None,
        ([_, ..], Some(_)) => {
            return Err(Invalid::new(
                format!("{p}.time_of_day"),
                "give sun keys or a time of day, not both",
            ))
        }
        (keys @ [_, ..], None) => {
            frames_of("sun", &keys.iter().map(|k| k.frame).collect::<Vec<_>>())?;
            let mut elevation = Vec::new();
            let mut azimuth = Vec::new();
            for (k, key) in keys.iter().enumerate() {
                let path = format!("{p}.sun[{k}]");
                let e = within(&format!("{path}.elevation"), key.elevation, -90.0, 90.0)?;
                let a = within(&format!("{path}.azimuth"), key.azimuth, -3600.0, 3600.0)?;
                elevation.push(Key {
                    frame: key.frame,
                    value: e,
                });
                azimuth.push(Key {
                    frame: key.frame,
                    value: a,
                });
            }
            Some(SunPath::Keys { elevation, azimuth })
        }
        ([], Some(t)) => {
            let path = format!("{p}.time_of_day");
            Some(SunPath::Day {
                latitude: within(&format!("{path}.latitude"), t.latitude, -90.0, 90.0)?,
                day: count(&format!("{path}.day"), t.day, 1, 366)? as f64,
                start_hour: within(&format!("{path}.start_hour"), t.start_hour, 0.0, 24.0)?,
                end_hour: within(&format!("{path}.end_hour"), t.end_hour, 0.0, 24.0)?,
            })
        }
    };
    let clearance = f
        .follow
        .as_ref()
        .map(|c| within(&format!("{p}.follow.clearance"), c.clearance, 0.0, 1e6))
        .transpose()?;
    if clearance.is_some() && camera_track.is_none() {
        return Err(Invalid::new(
            format!("{p}.follow"),
            "follows a camera path: give `animation.camera` keys",
        ));
    }
    Ok(Animation {
        frames,
        fps,
        camera: camera_track,
        sun,
        clearance,
    })
}

/// Checks a population and reads its mesh (normals recomputed where the
/// file gives none).
fn validate_population(
    path: &str,
    p: &PopulationFile,
    dir: &Path,
) -> Check<crate::population::Population> {
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
    let mut mesh = crate::mesh::TriangleMesh::read_obj(&dir.join(&p.mesh))
        .map_err(|e| Invalid::new(format!("{path}.mesh"), e))?;
    if mesh.normals.is_empty() {
        mesh.normals = mesh.area_weighted_normals();
    }
    Ok(crate::population::Population {
        mesh: Arc::new(mesh),
        count,
        scale: [s0 as f32, s1 as f32],
        align_to_ground: align as f32,
        height,
        slope,
        seed: p.seed,
        color,
    })
}

/// The sun and sky of `f` and `sky` (the sky's physical models follow the
/// sun), checked.
pub(crate) fn validate_sun_and_sky(f: &SunFile, sky: &SkyFile) -> Check<(Sun, Sky)> {
    let elevation = within("sun.elevation", f.elevation, -90.0, 90.0)?.to_radians();
    let azimuth = finite("sun.azimuth", f.azimuth)?.to_radians();
    let intensity = within("sun.intensity", f.intensity, 0.0, 1000.0)? as f32;
    let diameter = within("sun.angular_diameter", f.angular_diameter, 0.0, 20.0)?;
    let direction = Sun::direction_from(elevation as f32, azimuth as f32);
    let tint = color("sun.color", f.color, 1.0)?;
    let (sky, model_tint) = match *sky {
        SkyFile::Gradient {
            zenith,
            horizon,
            ground,
            ambient,
        } => (
            Sky::Gradient {
                zenith: color("sky.zenith", zenith, 100.0)?,
                horizon: color("sky.horizon", horizon, 100.0)?,
                ground: color("sky.ground", ground, 100.0)?,
                ambient: within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            },
            Vec3::ONE,
        ),
        SkyFile::Preetham {
            turbidity,
            intensity,
            ambient,
        } => {
            let t = within("sky.turbidity", turbidity, 1.7, 10.0)?;
            let sky = Preetham::new(
                direction,
                t,
                within("sky.intensity", intensity, 0.0, 100.0)?,
                within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            );
            (Sky::Preetham(sky), sun_transmittance(elevation, t))
        }
        SkyFile::HosekWilkie {
            turbidity,
            ground_albedo,
            intensity,
            ambient,
        } => {
            let t = within("sky.turbidity", turbidity, 1.0, 10.0)?;
            let sky = crate::shade::sky::HosekWilkie::new(
                direction,
                t as f32,
                within("sky.ground_albedo", ground_albedo, 0.0, 1.0)? as f32,
                within("sky.intensity", intensity, 0.0, 100.0)? as f32,
                within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            );
            (
                Sky::HosekWilkie(sky),
                sun_transmittance(elevation, t.max(1.7)),
            )
        }
        SkyFile::Mars { intensity, ambient } => (
            Sky::Mars(Mars {
                sun: direction,
                intensity: within("sky.intensity", intensity, 0.0, 100.0)? as f32,
                ambient: within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            }),
            Mars::sun_tint(elevation),
        ),
    };
    let sun = Sun {
        direction,
        radiance: tint * model_tint * intensity,
        angular_radius: (diameter / 2.0).to_radians() as f32,
    };
    Ok((sun, sky))
}

/// Textures loaded once per file.
struct TextureCache<'a> {
    dir: &'a Path,
    loaded: Vec<(std::path::PathBuf, Arc<Texture>)>,
}

impl<'a> TextureCache<'a> {
    fn new(dir: &'a Path) -> Self {
        TextureCache {
            dir,
            loaded: Vec::new(),
        }
    }

    /// The texture at `file` (relative to the scene's folder).
    fn get(&mut self, path: &str, file: &str) -> Check<Arc<Texture>> {
        if file.is_empty() {
            return Err(Invalid::new(path, "must name an image file"));
        }
        let full = self.dir.join(file);
        if let Some((_, t)) = self.loaded.iter().find(|(p, _)| *p == full) {
            return Ok(t.clone());
        }
        let t = Texture::load(&full)
            .map_err(|e| Invalid::new(path, format!("cannot read the texture: {e}")))?;
        if t.width == 0 || t.height == 0 {
            return Err(Invalid::new(
                path,
                format!("{} has no pixels", full.display()),
            ));
        }
        let t = Arc::new(t);
        self.loaded.push((full, t.clone()));
        Ok(t)
    }
}

fn validate_displacement(
    path: &str,
    d: &DisplacementFile,
    textures: &mut TextureCache,
) -> Check<Displacement> {
    let mapping = match d.mapping {
        MappingFile::Uv => Mapping::Uv,
        MappingFile::Triplanar => Mapping::Triplanar,
        MappingFile::Solid => Mapping::Solid {
            cells: within(&format!("{path}.cells"), d.cells, 0.5, 64.0)? as f32,
            seed: d.seed,
        },
    };
    let texture = match (&d.texture, d.mapping) {
        (Some(t), _) => Some(textures.get(&format!("{path}.texture"), t)?),
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
    textures: &mut TextureCache,
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
            textures.get(&format!("{path}.texture"), texture)?,
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

fn validate_rock(path: &str, r: &RockFile, textures: &mut TextureCache) -> Check<RockSpec> {
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
        .map(|d| validate_displacement(&format!("{path}.displacement"), d, textures))
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
        material: validate_rock_material(
            &format!("{path}.material"),
            &r.material,
            textures,
            false,
        )?,
        bump: rock_bump(&format!("{path}.material"), &r.material)?,
        flat: r.normals == NormalsFile::Flat,
        analytic: r.analytic,
    })
}

fn validate_scatter(
    s: &ScatterFile,
    terrain: &TerrainSettings,
    textures: &mut TextureCache,
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
        None => terrain.size,
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
        .map(|d| validate_displacement(&format!("{p}.displacement"), d, textures))
        .transpose()?;
    let shape = if variants > 1 || facets > 0 {
        crate::rock::SHAPE_MAX
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
        material: validate_rock_material(&format!("{p}.material"), &s.material, textures, true)?,
        bump: rock_bump(&format!("{p}.material"), &s.material)?,
    })
}

/// A rock material's bumps (height and size, fractions of the radius).
fn rock_bump(path: &str, m: &RockMaterialFile) -> Check<Option<crate::shade::layers::Bump>> {
    let (RockMaterialFile::Albedo { bump, .. } | RockMaterialFile::Texture { bump, .. }) = m;
    bump.as_ref()
        .map(|b| {
            Ok(crate::shade::layers::Bump {
                height: within(&format!("{path}.bump.height"), b.height, 0.0, 1.0)? as f32,
                size: above(&format!("{path}.bump.size"), b.size, 0.0, 100.0)? as f32,
            })
        })
        .transpose()
}
