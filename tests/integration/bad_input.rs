//! Bad input: one clear sentence naming the file, the JSON path and the line;
//! exit code 2; no output file; never a panic.

use crate::support::*;

/// Renders `scene_text` and checks the failure.
pub(crate) fn rejects(scene_text: &str, expected: &[&str]) {
    let (dir, scene) = scene_dir("bad.json", scene_text);
    let out = run_in(
        dir.path(),
        &["render", scene.to_str().unwrap(), "-o", "out.png"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit code for {scene_text}: {stderr}"
    );
    assert!(stderr.contains("bad.json"), "names the file: {stderr}");
    for e in expected {
        assert!(stderr.contains(e), "expected {e:?} in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert_eq!(files_in(dir.path()), vec!["bad.json"], "no output file");
    // `check` agrees.
    let check = run_in(dir.path(), &["check", scene.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(2));
}

const CAMERA: &str = r#""camera": { "position": [0, 20, -40], "look_at": [0, 0, 0] }"#;

#[test]
fn malformed_json_gives_line_and_column() {
    rejects(
        &format!("{{\n  {CAMERA},\n  ,\n}}"),
        &["malformed JSON", "line 3, column 3"],
    );
    rejects("", &["malformed JSON", "EOF"]);
}

#[test]
fn unknown_field_gives_path_line_and_suggestion() {
    let text = format!("{{\n  {CAMERA},\n  \"image\": {{ \"widht\": 10 }}\n}}");
    rejects(
        &text,
        &["at image.widht", "line 3", "did you mean `width`?"],
    );
}

#[test]
fn unknown_generator_suggests_the_closest() {
    let text = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"fault_lines\" }} }} }}"
    );
    rejects(&text, &["terrain.generator", "did you mean `fault_line`?"]);
}

#[test]
fn wrong_type_names_the_field() {
    let text = format!("{{\n  {CAMERA},\n  \"image\": {{ \"width\": \"wide\" }}\n}}");
    rejects(&text, &["image.width", "invalid type", "line 3"]);
}

#[test]
fn out_of_range_values_name_field_and_line() {
    let zero_width = format!("{{\n  {CAMERA},\n  \"image\": {{\n    \"width\": 0\n  }}\n}}");
    rejects(
        &zero_width,
        &["at image.width (line 4, column 14)", "got 0"],
    );
    let negative = format!("{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"fault_line\", \"iterations\": -5 }} }} }}");
    rejects(&negative, &["terrain.generator", "-5"]);
    let zero_iter = format!("{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"fault_line\", \"iterations\": 0 }} }} }}");
    rejects(&zero_iter, &["terrain.generator.iterations", "got 0"]);
    let huge = format!("{{ {CAMERA}, \"sun\": {{ \"elevation\": 1e999 }} }}");
    rejects(&huge, &["number out of range"]);
    let rough = format!("{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"diamond_square\", \"roughness\": -2 }} }} }}");
    rejects(&rough, &["terrain.generator.roughness", "between 0 and 4"]);
    let size = format!("{{ {CAMERA}, \"terrain\": {{ \"size\": [100, -1] }} }}");
    rejects(&size, &["terrain.size[1]", "got -1"]);
}

#[test]
fn resolution_over_the_limit_is_refused() {
    let text = format!("{{ {CAMERA}, \"terrain\": {{ \"resolution\": [40000, 513] }} }}");
    rejects(&text, &["terrain.resolution[0]", "32769"]);
}

#[test]
fn memory_is_estimated_and_refused_before_allocating() {
    // The largest terrain (10 GiB) with the largest image (6 GiB).
    let text = format!(
        "{{ {CAMERA}, \"image\": {{ \"width\": 16384, \"height\": 16384 }}, \"terrain\": {{ \"resolution\": [16385, 16385] }} }}"
    );
    rejects(&text, &["GiB", "limit"]);
}

#[test]
fn the_largest_tiles_are_estimated_by_what_they_hold() {
    // A 32769² diamond-square tile keeps f32 heights and no normals: about
    // 7 GiB, under the limit. Eroding one needs an f64 copy and scratch:
    // 20 bytes a sample, 20 GiB, refused.
    let tile = |post: &str| {
        format!(
            "{{ {CAMERA}, \"terrain\": {{ \"resolution\": [32769, 32769], \"generator\": {{ \"type\": \"diamond_square\" }}{post} }} }}"
        )
    };
    let (dir, scene) = scene_dir("big.json", &tile(""));
    let check = run_in(dir.path(), &["check", scene.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("32769×32769 terrain"), "{stdout}");
    rejects(
        &tile(r#", "post": [{ "type": "thermal" }]"#),
        &["about 20.0 GiB", "limit"],
    );
    // Rings around it count too, and the message names them.
    rejects(
        &tile(r#", "far_field": { "rings": 4 }"#),
        &[
            "4 far-field rings of 8193×8193",
            "terrain.far_field.resolution",
        ],
    );
}

#[test]
fn degenerate_camera_is_refused() {
    let same = r#"{ "camera": { "position": [1, 2, 3], "look_at": [1, 2, 3] } }"#;
    rejects(same, &["camera.look_at", "must differ"]);
    let parallel = r#"{ "camera": { "position": [0, 10, 0], "look_at": [0, 0, 0] } }"#;
    rejects(parallel, &["camera.up", "parallel"]);
    let bad_fov = r#"{ "camera": { "position": [0, 20, -40], "look_at": [0, 0, 0], "projection": { "type": "perspective", "fov": 0 } } }"#;
    rejects(bad_fov, &["camera.projection.fov"]);
}

#[test]
fn missing_camera_is_named() {
    rejects("{}", &["missing field `camera`"]);
}

#[test]
fn missing_scene_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["render", "nope.json", "-o", "out.png"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.json"));
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}

#[test]
fn unwritable_output_folder_is_refused_before_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &["render", "-o", "missing/out.png"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does not exist"), "{stderr}");
    // Refused before any work: no summary was printed.
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_command_line_values_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["render", "--width", "0"][..],
        &["render", "--spp", "100000"],
        &["render", "--threads", "x"],
    ] {
        let out = run_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    assert_eq!(files_in(dir.path()), Vec::<String>::new());
}

#[test]
fn text_after_the_scene_object_is_refused() {
    rejects(
        &format!("{{ {CAMERA} }} garbage"),
        &[
            "malformed JSON",
            "text after the end of the scene object",
            "line 1",
        ],
    );
    rejects(&format!("{{ {CAMERA} }}\n{{}}\n"), &["line 2, column 1"]);
}

/// A wrong value inside a tagged object (generator, projection, material,
/// post step, octaves) names the field itself, its line, and the range the
/// field accepts.
#[test]
fn wrong_values_in_tagged_objects_name_the_field_and_its_range() {
    let terrain =
        |inner: &str| format!("{{\n  {CAMERA},\n  \"terrain\": {{\n    {inner}\n  }}\n}}");
    rejects(
        &terrain(r#""generator": { "type": "fault_line", "iterations": -5 }"#),
        &[
            "at terrain.generator.iterations (line 4",
            "must be between 1 and 100000, got -5",
        ],
    );
    rejects(
        &terrain(r#""generator": { "type": "hills", "iterations": 4294967296 }"#),
        &["at terrain.generator.iterations", "got 4294967296"],
    );
    rejects(
        &terrain(
            r#""generator": { "type": "noise", "octaves": { "count": -3, "frequency": 0.1 } }"#,
        ),
        &[
            "at terrain.generator.octaves.count (line 4",
            "must be between 1 and 16, got -3",
        ],
    );
    // Two faults: the first is named, with its own range.
    rejects(
        &terrain(
            r#""generator": { "type": "noise", "octaves": { "count": -3, "frequency": 0.1 } }, "post": [{ "type": "thermal", "iterations": -1 }]"#,
        ),
        &[
            "at terrain.generator.octaves.count",
            "must be between 1 and 16, got -3",
        ],
    );
    rejects(
        &terrain(r#""post": [{ "type": "smooth" }, { "type": "thermal", "iterations": -1 }]"#),
        &[
            "at terrain.post[1].iterations",
            "must be between 1 and 10000, got -1",
        ],
    );
    rejects(
        &terrain(r#""material": { "type": "height_slope", "steep_angle": "steep" }"#),
        &["at terrain.material.steep_angle (line 4", "expected f64"],
    );
    rejects(
        "{\n  \"camera\": { \"position\": [0, 20, -40], \"look_at\": [0, 0, 0],\n    \"projection\": { \"type\": \"fisheye\", \"fov\": \"wide\" } }\n}",
        &["at camera.projection.fov (line 3", "expected f64"],
    );
}

/// A camera under the ground still renders, with one line on stderr that
/// says so and gives the terrain's height under it.
#[test]
fn a_camera_under_the_terrain_is_warned_about() {
    let flat = r#"{
        "image": { "width": 32, "height": 16, "samples": 1 },
        "camera": { "position": [0, -1, 0], "look_at": [10, -1, 0] },
        "terrain": { "resolution": [9, 9], "height": 0 }
    }"#;
    let (dir, scene) = scene_dir("under.json", flat);
    let out = run_in(
        dir.path(),
        &["render", scene.to_str().unwrap(), "-o", "out.png", "-q"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(dir.path().join("out.png").exists());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(
            "warning: the camera at (0, -1, 0) is below the terrain surface (height 0 under it)"
        ),
        "{stderr}"
    );
    // Above the ground, no word.
    let (dir, scene) = scene_dir("over.json", &flat.replace("-1", "1"));
    let out = run_in(
        dir.path(),
        &["render", scene.to_str().unwrap(), "-o", "out.png", "-q"],
    );
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn a_population_whose_mesh_cannot_be_read_is_named() {
    rejects(
        &format!("{{\n  {CAMERA},\n  \"populations\": [{{ \"mesh\": \"missing.obj\" }}]\n}}"),
        &["at populations[0].mesh", "missing.obj"],
    );
    rejects(
        &format!("{{\n  {CAMERA},\n  \"populations\": [{{ \"mesh\": \"b.obj\", \"where\": {{ \"slope\": [30, 10] }} }}]\n}}"),
        &["at populations[0].where.slope[1]", "must be between 30 and 90, got 10"],
    );
}

/// An OBJ's materials that cannot be used are named with the population
/// that reads them: a missing MTL file or image, an image on faces
/// without texture coordinates, an opacity past 1.
#[test]
fn a_population_whose_materials_cannot_be_read_is_named() {
    let quad = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n";
    let uvs = "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n";
    let cases = [
        (
            format!("mtllib gone.mtl\n{quad}f 1 2 3 4\n"),
            "",
            "cannot read the materials (mtllib)",
        ),
        (
            format!("mtllib m.mtl\n{quad}usemtl a\nf 1 2 3 4\n"),
            "newmtl a\nmap_d mask.png\n",
            "have an image (map_Kd or map_d) but not texture coordinates (vt)",
        ),
        (
            format!("mtllib m.mtl\n{quad}{uvs}usemtl a\nf 1/1 2/2 3/3 4/4\n"),
            "newmtl a\nmap_Kd gone.png\n",
            "cannot read the image",
        ),
        (
            format!("mtllib m.mtl\n{quad}usemtl a\nf 1 2 3 4\n"),
            "newmtl a\nd 1.5\n",
            "opacity (d) of 1.5, outside 0..=1",
        ),
    ];
    for (obj, mtl, expected) in cases {
        let scene = format!("{{\n  {CAMERA},\n  \"populations\": [{{ \"mesh\": \"c.obj\" }}]\n}}");
        let (dir, path) = scene_dir("bad.json", &scene);
        std::fs::write(dir.path().join("c.obj"), obj).unwrap();
        std::fs::write(dir.path().join("m.mtl"), mtl).unwrap();
        let out = run_in(
            dir.path(),
            &["render", path.to_str().unwrap(), "-o", "out.png"],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        for e in ["bad.json", "at populations[0].mesh (line 3", expected] {
            assert!(stderr.contains(e), "expected {e:?} in: {stderr}");
        }
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(!dir.path().join("out.png").exists());
    }
}

#[test]
fn bad_water_layers_and_skies_name_the_field() {
    let no_level = format!("{{ {CAMERA}, \"water\": {{ \"clarity\": 2 }} }}");
    rejects(&no_level, &["water", "needs a \"level\""]);
    let clarity = format!("{{ {CAMERA}, \"water\": {{ \"level\": 1, \"clarity\": 0 }} }}");
    rejects(&clarity, &["water.clarity", "got 0"]);
    let base_mask = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"material\": {{ \"type\": \"layers\", \"layers\": [ {{ \"mask\": {{ \"slope\": [0, 30] }} }} ] }} }} }}"
    );
    rejects(
        &base_mask,
        &["terrain.material.layers[0].mask", "takes no mask"],
    );
    let slope = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"material\": {{ \"type\": \"layers\", \"layers\": [ {{}}, {{ \"mask\": {{ \"slope\": [50, 30] }} }} ] }} }} }}"
    );
    rejects(
        &slope,
        &[
            "terrain.material.layers[1].mask.slope[1]",
            "between 50 and 90",
        ],
    );
    let no_layers = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"material\": {{ \"type\": \"layers\", \"layers\": [] }} }} }}"
    );
    rejects(&no_layers, &["terrain.material.layers", "1 to 16 layers"]);
    let texture = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"material\": {{ \"type\": \"layers\", \"layers\": [ {{ \"texture\": \"nope.png\" }} ] }} }} }}"
    );
    rejects(
        &texture,
        &["terrain.material.layers[0].texture", "nope.png"],
    );
    let turbidity =
        format!("{{ {CAMERA}, \"sky\": {{ \"type\": \"hosek_wilkie\", \"turbidity\": 12 }} }}");
    rejects(&turbidity, &["sky.turbidity", "between 1 and 10"]);
}

#[test]
fn bad_integrators_and_thresholds_name_the_field() {
    let bounces =
        format!("{{ {CAMERA}, \"integrator\": {{ \"type\": \"path\", \"bounces\": 40 }} }}");
    rejects(
        &bounces,
        &["integrator.bounces", "between 0 and 32, got 40"],
    );
    let kind = format!("{{ {CAMERA}, \"integrator\": {{ \"type\": \"photon\" }} }}");
    rejects(&kind, &["integrator", "photon"]);
    let threshold = format!("{{ {CAMERA}, \"image\": {{ \"noise_threshold\": 2 }} }}");
    rejects(&threshold, &["image.noise_threshold", "got 2"]);
}

#[test]
fn far_field_and_dem_mistakes_are_named() {
    rejects(
        &format!(
            "{{ {CAMERA}, \"terrain\": {{ \"resolution\": [97, 97], \"far_field\": {{ \"rings\": 3, \"resolution\": 130 }} }} }}"
        ),
        &["terrain.far_field.resolution", "does not fit a 97×97 tile"],
    );
    rejects(
        &format!("{{ {CAMERA}, \"terrain\": {{ \"far_field\": {{ \"rings\": 13 }} }} }}"),
        &["terrain.far_field.rings", "between 1 and 12"],
    );
    rejects(
        &format!("{{ {CAMERA}, \"terrain\": {{ \"planet_radius\": -5 }} }}"),
        &["terrain.planet_radius"],
    );
    // A .tif that is no TIFF; the scene names it through its path.
    let text = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"heightmap\", \"path\": \"bad.json\" }} }} }}"
    );
    rejects(&text, &["terrain.generator.path"]);
    let (dir, scene) = scene_dir(
        "bad.json",
        &format!(
            "{{ {CAMERA}, \"terrain\": {{ \"generator\": {{ \"type\": \"heightmap\", \"path\": \"dem.tif\" }} }} }}"
        ),
    );
    std::fs::write(dir.path().join("dem.tif"), b"II*\0 not really").unwrap();
    let out = run_in(
        dir.path(),
        &["render", scene.to_str().unwrap(), "-o", "out.png"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("terrain.generator.path") && stderr.contains("dem.tif"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

/// Rivers: a catchment of 0 (every sample a river), a widest channel
/// narrower than the first and banks below 0 name the field; a water
/// without a level is refused without rivers and is their look with them.
#[test]
fn bad_rivers_name_the_field() {
    let rivers = |body: &str| {
        format!("{{\n  {CAMERA},\n  \"terrain\": {{ \"rivers\": {{\n    {body}\n  }} }}\n}}")
    };
    rejects(
        &rivers("\"catchment\": 0"),
        &["terrain.rivers.catchment (line 4", "got 0"],
    );
    rejects(
        &rivers("\"width\": 4, \"max_width\": 2"),
        &["terrain.rivers.max_width", "between 4 and"],
    );
    rejects(
        &rivers("\"banks\": -1"),
        &["terrain.rivers.banks", "got -1"],
    );
    rejects(
        &rivers("\"white_water\": 0"),
        &["terrain.rivers.white_water", "got 0"],
    );
    rejects(&rivers("\"lake\": true"), &["did you mean `lakes`?"]);
    let look_only = format!(
        "{{ {CAMERA}, \"image\": {{ \"width\": 8, \"height\": 8 }}, \"terrain\": {{ \"resolution\": [33, 33], \"rivers\": {{}} }}, \"water\": {{ \"clarity\": 2 }} }}"
    );
    let (dir, scene) = scene_dir("ok.json", &look_only);
    let out = run_in(dir.path(), &["check", scene.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}
