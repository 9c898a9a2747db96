//! The scene format's JSON Schema: `scree schema` prints the committed
//! `schema/scene.schema.json`, every shipped scene names it and validates
//! against it, and it refuses what scree refuses.

use crate::support::*;

fn committed() -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("schema/scene.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&committed()).expect("the schema is a valid JSON Schema")
}

#[test]
fn the_committed_schema_is_what_scree_schema_prints() {
    let out = run_ok(&root(), &["schema"]);
    let printed = String::from_utf8(out.stdout).unwrap();
    let file = std::fs::read_to_string(root().join("schema/scene.schema.json")).unwrap();
    assert_eq!(
        printed.trim_end(),
        file.trim_end(),
        "schema/scene.schema.json is stale: run `scree schema > schema/scene.schema.json`"
    );
}

#[test]
fn every_shipped_scene_names_the_schema_and_validates() {
    let v = validator();
    let mut count = 0;
    for entry in std::fs::read_dir(root().join("scenes")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let scene: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            scene["$schema"],
            "../schema/scene.schema.json",
            "{} names the schema",
            path.display()
        );
        let errors: Vec<String> = v.iter_errors(&scene).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        count += 1;
    }
    assert!(count >= 9, "the shipped scenes are found ({count})");
    // The built-in default scene is scenes/rocky-valley.json's text.
    let default: serde_json::Value = serde_json::from_str(scree::scene::DEFAULT_SCENE).unwrap();
    assert!(v.is_valid(&default));
}

/// The schema refuses what the parser refuses: unknown fields (also inside
/// tagged objects), unknown enum names, wrong types, a missing camera; and
/// it knows the defaults and the tags.
#[test]
fn the_schema_refuses_what_scree_refuses() {
    let v = validator();
    let camera = r#""camera": {"position": [0, 20, -40], "look_at": [0, 0, 0]}"#;
    let ok = |extra: &str| -> serde_json::Value {
        serde_json::from_str(&format!("{{{camera}{extra}}}")).unwrap()
    };
    assert!(v.is_valid(&ok("")));
    assert!(v.is_valid(&ok(
        r#", "terrain": {"generator": {"type": "hills", "iterations": 40}}"#
    )));
    for bad in [
        r#", "imagee": {}"#,
        r#", "image": {"width": "wide"}"#,
        r#", "image": {"tonemap": "filmic"}"#,
        r#", "terrain": {"generator": {"type": "fault_lines"}}"#,
        r#", "terrain": {"generator": {"type": "hills", "iterashuns": 3}}"#,
        r#", "camera2": {}"#,
        r#", "image": {"width": 0}"#,
        r#", "terrain": {"generator": {"type": "fault_line", "iterations": -5}}"#,
        r#", "terrain": {"post": [{"type": "terrace", "levels": 1}]}"#,
        r#", "sky_light": {"distance": 0}"#,
    ] {
        assert!(!v.is_valid(&ok(bad)), "the schema accepts {bad}");
    }
    assert!(
        !v.is_valid(&serde_json::json!({"image": {}})),
        "camera is required"
    );
    let schema = committed();
    let image = &schema["$defs"]["ImageFile"]["properties"];
    assert_eq!(image["width"]["default"], 960);
    assert_eq!(image["samples"]["default"], 4);
    assert_eq!(
        (
            image["width"]["minimum"].clone(),
            image["width"]["maximum"].clone()
        ),
        (1.into(), 16384.into())
    );
}
