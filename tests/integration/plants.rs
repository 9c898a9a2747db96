//! Plants through the command line: bad values name their field, a leaf
//! lit from behind passes its translucency's share of the light in both
//! integrators, and the plant scenes are the same bytes on one thread and
//! on two.

use crate::bad_input::rejects;
use crate::support::*;

const CAMERA: &str = r#""camera": { "position": [0, 30, -60], "look_at": [0, 0, 0] }"#;

/// Each bad plants value is one line naming its path and line, exit 2,
/// and no picture.
#[test]
fn bad_plants_name_the_field() {
    let plants =
        |body: &str| format!("{{\n  {CAMERA},\n  \"plants\": [\n    {{ {body} }}\n  ]\n}}");
    rejects(
        &plants("\"species\": \"palm\""),
        &["plants[0].species (line 4", "palm", "spruce, oak, birch"],
    );
    rejects(
        &plants("\"species\": \"oak\", \"density\": 2"),
        &["plants[0].density (line 4", "got 2"],
    );
    rejects(
        &plants("\"species\": \"oak\", \"grow\": { \"levels\": [{\"count\": 1, \"length\": 1, \"down\": 9}, {\"count\": 1, \"length\": 1, \"down\": 9}, {\"count\": 1, \"length\": 1, \"down\": 9}, {\"count\": 1, \"length\": 1, \"down\": 9}] }"),
        &["plants[0].grow.levels (line 4", "at most 3"],
    );
    rejects(
        &plants("\"species\": \"oak\", \"grow\": { \"leaves\": { \"count\": 3, \"size\": 1, \"shape\": \"star\" } }"),
        &["star", "ellipse"],
    );
    rejects(
        &plants("\"species\": \"grass\", \"spacing\": 0.001"),
        &["plants[0].spacing (line 4", "places over the terrain"],
    );
    rejects(
        &plants("\"species\": \"oak\", \"densty\": 0.5"),
        &["plants[0].densty (line 4", "`density`"],
    );
}

/// One broad horizontal leaf over the camera, the sun straight above it,
/// no sky: its underside sends albedo · t · E / π (0.5 · 0.4 · 3 / π),
/// by the direct integrator and by the path tracer's next-event estimate.
#[test]
fn a_leaf_lit_from_behind_passes_its_translucency() {
    let scene = |integrator: &str| {
        format!(
            r#"{{ "image": {{ "width": 8, "height": 8, "samples": 1, "tonemap": "none" }},
  "camera": {{ "position": [3, 1, 3], "look_at": [3.01, 10, 3],
              "projection": {{ "type": "perspective", "fov": 4 }} }},
  "terrain": {{ "size": [2, 2], "resolution": [9, 9], "height": 0,
               "material": {{ "type": "albedo", "color": [0, 0, 0] }} }},
  "plants": [{{ "species": "grass", "density": 1, "spacing": 3, "clumping": 0, "scale": [1, 1],
    "grow": {{ "height": [5, 5], "radius": 0.01, "levels": [], "translucency": 0.4,
      "leaf_color": [0.5, 0.5, 0.5], "leaf_color_var": 0,
      "leaves": {{ "count": 4, "size": 20, "aspect": 1, "down": 90, "bend": 0,
                  "shape": "round", "start": 0.99 }} }} }}],
  "sun": {{ "elevation": 90, "azimuth": 0, "intensity": 3, "color": [1, 1, 1], "angular_diameter": 0 }},
  "sky": {{ "type": "gradient", "zenith": [0, 0, 0], "horizon": [0, 0, 0], "ground": [0, 0, 0], "ambient": 0 }},
  "sky_light": {{ "samples": 0 }},
  "fog": {{ "density": 0 }},
  "integrator": {integrator} }}"#
        )
    };
    let want = 0.5 * 0.4 * 3.0 / std::f32::consts::PI;
    for integrator in [
        r#"{ "type": "direct" }"#,
        r#"{ "type": "path", "bounces": 0 }"#,
    ] {
        let (dir, path) = scene_dir("leaf.json", &scene(integrator));
        let out = run_in(
            dir.path(),
            &["render", path.to_str().unwrap(), "-q", "-o", "o.exr"],
        );
        assert!(out.status.success(), "{out:?}");
        let img = image::open(dir.path().join("o.exr")).unwrap().to_rgba32f();
        for p in img.pixels() {
            assert!(
                (p[0] - want).abs() < 2e-3 * want,
                "{integrator}: {} against {want}",
                p[0]
            );
        }
    }
}

/// The shipped plant scenes, small, and a path-traced grove: the same
/// bytes on one thread and on two.
#[test]
fn plant_scenes_are_the_same_on_one_and_two_threads() {
    let grove = format!(
        "{{ {CAMERA}, \"image\": {{ \"width\": 48, \"height\": 27, \"samples\": 2 }}, \
         \"terrain\": {{ \"size\": [60, 60], \"resolution\": [65, 65], \"height\": 6, \
                         \"generator\": {{ \"type\": \"hills\" }} }}, \
         \"plants\": [{{ \"species\": \"birch\" }}, {{ \"species\": \"grass\", \"understory\": true, \"spacing\": 1 }}], \
         \"integrator\": {{ \"type\": \"path\", \"bounces\": 2 }} }}"
    );
    let (dir, grove) = scene_dir("grove.json", &grove);
    let scenes = [
        root().join("scenes/forest-valley.json"),
        root().join("scenes/meadow.json"),
        grove,
    ];
    for scene in &scenes {
        let mut pixels = Vec::new();
        for threads in ["1", "2"] {
            let out = run_in(
                dir.path(),
                &[
                    "render",
                    scene.to_str().unwrap(),
                    "--width",
                    "160",
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
        assert!(pixels[0] == pixels[1], "{}", scene.display());
    }
}
