//! The JSON Schema of the scene format, generated from the same serde
//! types that read scene files ([`super::file`]), so that editors complete
//! and check fields as scree reads them: descriptions from the doc
//! comments, defaults, the names of every enum, and the ranges of
//! [`RANGES`]. `schema/scene.schema.json` is this text, committed (a test
//! checks it).

use serde_json::{Map, Value};

use super::file::SceneFile;

/// A numeric field's range as the validator ([`super::validate`]) checks
/// it: the field's path in a scene (`{tag}` picks a tagged object's
/// variant, `[]` any element of a list), its bounds, and whether the lower
/// bound is excluded (`> 0` rather than `>= 0`). A test reads a scene with
/// each field just outside and at its bounds and checks that the validator
/// agrees, so this table cannot drift from it.
pub const RANGES: &[(&str, f64, f64, bool)] = &[
    ("image.width", 1.0, 16384.0, false),
    ("image.height", 1.0, 16384.0, false),
    ("image.samples", 1.0, 4096.0, false),
    ("image.exposure", -20.0, 20.0, false),
    ("camera.projection{orthographic}.width", 0.0, 1e7, true),
    ("camera.projection{cylindrical}.fov", 0.0, 360.0, true),
    ("camera.projection{equirectangular}.fov", 0.0, 360.0, true),
    ("camera.projection{fisheye}.fov", 0.0, 360.0, true),
    ("terrain.height", 0.0, 1e6, false),
    ("terrain.material{height_slope}.sand_level", 0.0, 1.0, false),
    (
        "terrain.material{height_slope}.steep_angle",
        0.0,
        90.0,
        false,
    ),
    ("terrain.material{height_slope}.variation", 0.0, 0.5, false),
    (
        "terrain.generator{fault_line}.iterations",
        1.0,
        100000.0,
        false,
    ),
    ("terrain.generator{fault_line}.displacement", 0.0, 1e6, true),
    ("terrain.generator{fault_line}.smoothing", 0.0, 64.0, false),
    (
        "terrain.generator{diamond_square}.roughness",
        0.0,
        4.0,
        false,
    ),
    ("terrain.generator{diamond_square}.range", 0.0, 1e6, true),
    ("terrain.generator{hills}.iterations", 1.0, 100000.0, false),
    ("terrain.generator{hills}.min_amplitude", 0.0, 1.0, false),
    ("terrain.generator{hills}.floor", 0.0, 1.0, false),
    ("terrain.generator{noise}.octaves.count", 1.0, 16.0, false),
    ("terrain.generator{noise}.octaves.frequency", 0.0, 1e3, true),
    (
        "terrain.generator{noise}.octaves.lacunarity",
        1.0,
        4.0,
        false,
    ),
    ("terrain.generator{noise}.octaves.gain", 0.0, 1.0, false),
    ("terrain.generator{noise}.offset", -1e6, 1e6, false),
    ("terrain.generator{noise}.warp.amount", 0.0, 1e4, false),
    ("terrain.generator{noise}.warp.frequency", 0.0, 1e3, true),
    ("terrain.generator{noise}.island.radius", 0.0, 1.0, false),
    ("terrain.generator{noise}.island.falloff", 0.0, 2.0, true),
    ("terrain.generator{noise}.island.sea_level", 0.0, 1.0, false),
    ("terrain.post[]{smooth}.radius", 1.0, 64.0, false),
    ("terrain.post[]{thermal}.talus", 0.0, 89.0, false),
    ("terrain.post[]{thermal}.iterations", 1.0, 10000.0, false),
    ("terrain.post[]{thermal}.strength", 0.0, 1.0, false),
    ("terrain.post[]{hydraulic}.droplets", 1.0, 1e7, false),
    ("terrain.post[]{hydraulic}.inertia", 0.0, 1.0, false),
    ("terrain.post[]{hydraulic}.capacity", 0.0, 1e3, true),
    ("terrain.post[]{hydraulic}.deposition", 0.0, 1.0, false),
    ("terrain.post[]{hydraulic}.erosion", 0.0, 1.0, false),
    ("terrain.post[]{hydraulic}.evaporation", 0.0, 1.0, false),
    ("terrain.post[]{hydraulic}.lifetime", 1.0, 10000.0, false),
    ("terrain.post[]{terrace}.levels", 2.0, 1024.0, false),
    ("terrain.post[]{terrace}.sharpness", 0.0, 1.0, false),
    ("rocks[].radius", 0.0, 1e6, true),
    ("rocks[].sink", 0.0, 1.0, false),
    ("rocks[].stacks", 2.0, 1024.0, false),
    ("rocks[].slices", 3.0, 2048.0, false),
    ("rocks[].displacement.scale", -1e3, 1e3, false),
    ("rocks[].displacement.bias", 0.0, 1.0, false),
    ("scatter.count", 0.0, 1000000.0, false),
    ("scatter.sink", 0.0, 1.0, false),
    ("scatter.stacks", 2.0, 1024.0, false),
    ("scatter.slices", 3.0, 2048.0, false),
    ("scatter.variants", 1.0, 64.0, false),
    ("scatter.facets", 0.0, 32.0, false),
    ("sun.elevation", -90.0, 90.0, false),
    ("sun.intensity", 0.0, 1000.0, false),
    ("sun.angular_diameter", 0.0, 20.0, false),
    ("sky{preetham}.turbidity", 1.7, 10.0, false),
    ("sky_light.samples", 0.0, 256.0, false),
    ("sky_light.distance", 0.0, 1e7, true),
    ("fog.density", 0.0, 10.0, false),
    ("units", 0.0, 1e9, true),
    ("fog.height_falloff", 0.0, 10.0, false),
    ("fog.base_height", -1e7, 1e7, false),
];

/// The schema as a JSON value (draft 2020-12).
pub fn schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut root = generator.into_root_schema_for::<SceneFile>();
    root.insert(
        "$id".into(),
        "https://github.com/scree-render/scree/schema/scene.schema.json".into(),
    );
    root.insert("title".into(), "scree scene".into());
    root.insert(
        "description".into(),
        "A scree scene file: terrain, rocks, camera, sun, sky and image settings. Lengths are world units, angles degrees, colours linear RGB.".into(),
    );
    let mut value = root.to_value();
    for &(path, lo, hi, open) in RANGES {
        let field = field_mut(&mut value, path)
            .unwrap_or_else(|| panic!("RANGES names {path}, which the schema lacks"));
        field.insert(
            (if open { "exclusiveMinimum" } else { "minimum" }).into(),
            number(lo),
        );
        field.insert("maximum".into(), number(hi));
    }
    value
}

/// `v` as JSON: whole numbers as integers.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// The schema of the field at `path` (a [`RANGES`] path) inside `root`:
/// found by walking `root` to a JSON pointer (through `$ref`s into
/// `$defs`, tagged variants, list items and optional fields), then taken
/// mutably.
fn field_mut<'a>(root: &'a mut Value, path: &str) -> Option<&'a mut Map<String, Value>> {
    let pointer = pointer_of(root, path)?;
    root.pointer_mut(&pointer)?.as_object_mut()
}

/// The JSON pointer of the field at `path` in `root`.
fn pointer_of(root: &Value, path: &str) -> Option<String> {
    let mut at = String::new();
    for segment in path.split('.') {
        let (name, mut rest) = segment.split_at(segment.find(['[', '{']).unwrap_or(segment.len()));
        at = resolve(root, at, "object")?;
        at = format!("{at}/properties/{name}");
        loop {
            if let Some(after) = rest.strip_prefix("[]") {
                at = format!("{}/items", resolve(root, at, "array")?);
                rest = after;
            } else if let Some(after) = rest.strip_prefix('{') {
                let (tag, after) = after.split_once('}')?;
                at = resolve(root, at, "object")?;
                let variants = root.pointer(&format!("{at}/oneOf"))?.as_array()?;
                let k = variants
                    .iter()
                    .position(|v| v["properties"]["type"]["const"] == tag)?;
                at = format!("{at}/oneOf/{k}");
                rest = after;
            } else {
                break;
            }
        }
    }
    resolve(root, at, "number")
}

/// Where the schema at `at` really is: through a `$ref` into `$defs`, and
/// for an optional field (`anyOf: [T, null]`), the branch of JSON `kind`
/// (`number` also matches `integer`, a `$ref` any kind).
fn resolve(root: &Value, mut at: String, kind: &str) -> Option<String> {
    loop {
        let node = root.pointer(&at)?;
        if let Some(name) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            at = format!("/$defs/{name}");
        } else if let Some(branches) = node.get("anyOf").and_then(Value::as_array) {
            let k = branches.iter().position(|v| {
                let t = v.get("type").and_then(Value::as_str).unwrap_or_default();
                t == kind || (kind == "number" && t == "integer") || v.get("$ref").is_some()
            })?;
            at = format!("{at}/anyOf/{k}");
        } else {
            return Some(at);
        }
    }
}

/// The schema as `scree schema` prints it and `schema/scene.schema.json`
/// holds it: pretty-printed, keys in the generator's order.
pub fn text() -> String {
    serde_json::to_string_pretty(&schema()).expect("a schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scene whose field at `path` (a [`RANGES`] path) is `value`, the
    /// rest defaulted, and the path the validator names it by.
    fn scene_with(path: &str, value: f64) -> (String, String) {
        let mut scene = serde_json::json!({
            "camera": {"position": [0, 30, -60], "look_at": [0, 5, 0]},
            "terrain": {"resolution": [9, 9]},
            "image": {"width": 8, "height": 8, "samples": 1}
        });
        let mut node = &mut scene;
        let mut named = Vec::new();
        for segment in path.split('.') {
            let (name, rest) = segment.split_at(segment.find(['[', '{']).unwrap_or(segment.len()));
            let object = node.as_object_mut().unwrap();
            let list = rest.starts_with("[]");
            let tag = rest.split_once('{').map(|(_, t)| t.trim_end_matches('}'));
            // Objects with required fields start with valid ones.
            let fresh = match (list, name) {
                (true, "rocks") => serde_json::json!([{"center": [0, 0, 0], "radius": 1}]),
                (true, _) => serde_json::json!([{}]),
                (false, "warp") => serde_json::json!({"amount": 1, "frequency": 0.05}),
                (false, "octaves") => serde_json::json!({"count": 4, "frequency": 0.05}),
                (false, "displacement") => {
                    serde_json::json!({"texture": "textures/cobblestone.png"})
                }
                (false, _) => serde_json::json!({}),
            };
            node = object.entry(name).or_insert(fresh);
            named.push(if list {
                format!("{name}[0]")
            } else {
                name.to_string()
            });
            if list {
                node = &mut node[0];
            }
            if let Some(tag) = tag {
                *node = serde_json::json!({ "type": tag });
            }
        }
        *node = number(value);
        (scene.to_string(), named.join("."))
    }

    /// The validator's verdict on `path` at `value`: the path it refuses,
    /// if any.
    fn refused(path: &str, value: f64) -> Option<String> {
        let (text, _) = scene_with(path, value);
        match crate::scene::parse(&text, "range.json", std::path::Path::new(".")) {
            Ok(_) => None,
            Err(crate::error::Error::Scene { path, .. }) => Some(path),
            Err(e) => Some(e.to_string()),
        }
    }

    /// Every range in the schema is the validator's: each bound is
    /// accepted (an excluded lower bound refused), and a value just
    /// outside each is refused, at the field's own path.
    #[test]
    fn the_schemas_ranges_are_the_validators() {
        for &(path, lo, hi, open) in RANGES {
            let (_, named) = scene_with(path, lo);
            let step = |v: f64| (v.abs() * 1e-6).max(1e-6);
            let whole = [lo, hi].iter().all(|v| v.fract() == 0.0)
                && !path.contains("exposure")
                && hi > 100.0;
            let (below, above) = if whole {
                (lo - 1.0, hi + 1.0)
            } else {
                (lo - step(lo), hi + step(hi))
            };
            if lo >= 0.0 || !whole {
                assert_eq!(
                    refused(path, below).as_deref(),
                    Some(&named[..]),
                    "{path} at {below}"
                );
            }
            assert_eq!(
                refused(path, above).as_deref(),
                Some(&named[..]),
                "{path} at {above}"
            );
            // At a bound the field itself is fine (a field that depends
            // on it, such as grass_level on sand_level, may then not be).
            assert_ne!(
                refused(path, hi).as_deref(),
                Some(&named[..]),
                "{path} at its maximum {hi}"
            );
            if open {
                assert_eq!(
                    refused(path, lo).as_deref(),
                    Some(&named[..]),
                    "{path} at {lo}"
                );
            } else {
                assert_ne!(
                    refused(path, lo).as_deref(),
                    Some(&named[..]),
                    "{path} at its minimum {lo}"
                );
            }
        }
    }

    #[test]
    fn every_range_lands_on_its_field() {
        let schema = schema();
        let iterations = &schema["$defs"]["GeneratorFile"]["oneOf"][0]["properties"]["iterations"];
        assert_eq!(
            (iterations["minimum"].clone(), iterations["maximum"].clone()),
            (1.into(), 100000.into())
        );
        assert_eq!(
            schema["$defs"]["ImageFile"]["properties"]["width"]["maximum"],
            16384
        );
    }
}
