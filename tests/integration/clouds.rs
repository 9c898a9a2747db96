//! Clouds, fog shafts and the physical atmosphere through the command
//! line: bad values name their field, and the new scenes are the same
//! bytes on one thread and on two, in both integrators.

use crate::bad_input::rejects;
use crate::support::*;

const CAMERA: &str = r#""camera": { "position": [0, 30, -60], "look_at": [0, 0, 0] }"#;

/// Each bad cloud, fog or atmosphere value is one line naming its path
/// and line, exit 2, and no picture.
#[test]
fn bad_clouds_and_air_name_the_field() {
    let clouds =
        |body: &str| format!("{{\n  {CAMERA},\n  \"clouds\": [\n    {{ {body} }}\n  ]\n}}");
    rejects(
        &clouds("\"thickness\": 0"),
        &["clouds[0].thickness (line 4", "got 0"],
    );
    rejects(
        &clouds("\"coverage\": 1.5"),
        &["clouds[0].coverage (line 4", "got 1.5"],
    );
    rejects(&clouds("\"density\": -1"), &["clouds[0].density", "got -1"]);
    rejects(&clouds("\"type\": \"nimbus\""), &["nimbus", "cumulus"]);
    rejects(
        &clouds("\"anisotropy\": 1"),
        &["clouds[0].anisotropy (line 4", "got 1"],
    );
    rejects(
        &clouds("\"cover\": 0.3"),
        &["clouds[0].cover (line 4", "`coverage`"],
    );
    let fog = format!("{{\n  {CAMERA},\n  \"fog\": {{ \"sun_scatter\": 2 }}\n}}");
    rejects(&fog, &["fog.sun_scatter (line 3", "got 2"]);
    let sky =
        format!("{{\n  {CAMERA},\n  \"sky\": {{ \"type\": \"atmosphere\", \"haze\": -1 }}\n}}");
    rejects(&sky, &["sky.haze (line 3", "got -1"]);
}

/// A small scene with cumulus, fog shafts and the atmosphere: the same
/// bytes on one thread and on two, direct and path-traced; and the
/// clouds change the picture.
#[test]
fn cloud_scenes_are_the_same_on_one_and_two_threads() {
    let scene = |integrator: &str, clouds: &str| {
        format!(
            "{{ {CAMERA}, \"image\": {{ \"width\": 64, \"height\": 36, \"samples\": 2 }}, \
             \"terrain\": {{ \"resolution\": [65, 65], \"generator\": {{ \"type\": \"hills\" }} }}, \
             \"sky\": {{ \"type\": \"atmosphere\" }}, \"units\": 20, \
             \"fog\": {{ \"density\": 0.01, \"sun_scatter\": 0.5 }}, \
             \"integrator\": {integrator}{clouds} }}"
        )
    };
    let layer = ", \"clouds\": [{ \"type\": \"cumulus\", \"altitude\": 25, \"thickness\": 10, \"coverage\": 0.6 }]";
    for integrator in [
        r#"{ "type": "direct" }"#,
        r#"{ "type": "path", "bounces": 1 }"#,
    ] {
        let (dir, path) = scene_dir("c.json", &scene(integrator, layer));
        let mut pixels = Vec::new();
        for threads in ["1", "2"] {
            let out = run_in(
                dir.path(),
                &[
                    "render",
                    path.to_str().unwrap(),
                    "--threads",
                    threads,
                    "-q",
                    "-o",
                    "o.png",
                ],
            );
            assert!(out.status.success(), "{out:?}");
            pixels.push(std::fs::read(dir.path().join("o.png")).unwrap());
        }
        assert!(pixels[0] == pixels[1], "{integrator}");
        let (dir, path) = scene_dir("c.json", &scene(integrator, ""));
        let out = run_in(
            dir.path(),
            &["render", path.to_str().unwrap(), "-q", "-o", "o.png"],
        );
        assert!(out.status.success(), "{out:?}");
        assert!(std::fs::read(dir.path().join("o.png")).unwrap() != pixels[0]);
    }
}
