//! The JSON Schema of the scene format, generated from the same serde
//! types that read scene files ([`super::file`]), so that editors complete
//! and check fields as scree reads them: descriptions from the doc
//! comments, defaults, ranges and the names of every enum.
//! `schema/scene.schema.json` is this text, committed (a test checks it).

use serde_json::Value;

use super::file::SceneFile;

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
    root.to_value()
}

/// The schema as `scree schema` prints it and `schema/scene.schema.json`
/// holds it: pretty-printed, keys in the generator's order.
pub fn text() -> String {
    serde_json::to_string_pretty(&schema()).expect("a schema serialises")
}
