//! Terrain generators, post-processing, import and export, end to end.

use crate::support::*;

fn terrain_scene(terrain: &str) -> String {
    format!(
        r#"{{ "image": {{ "width": 64, "height": 36, "samples": 1 }},
  "camera": {{ "position": [0, 30, -50], "look_at": [0, 0, 0] }},
  "terrain": {terrain} }}"#
    )
}

#[test]
fn heightmap_export_import_round_trip_is_exact_to_one_16_bit_step() {
    let (dir, scene) = scene_dir(
        "a.json",
        &terrain_scene(
            r#"{ "size": [60, 60], "resolution": [97, 97], "height": 12, "generator": { "type": "hills" } }"#,
        ),
    );
    let out = run_in(
        dir.path(),
        &[
            "terrain",
            scene.to_str().unwrap(),
            "--heightmap",
            "a.png",
            "--obj",
            "a.obj",
            "-q",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Import it with the same height and export again.
    std::fs::write(
        dir.path().join("b.json"),
        terrain_scene(r#"{ "size": [60, 60], "height": 12, "generator": { "type": "heightmap", "path": "a.png" } }"#),
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[
            "terrain",
            "b.json",
            "--heightmap",
            "b.png",
            "--obj",
            "b.obj",
            "-q",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(dir.path().join("a.png")).unwrap(),
        std::fs::read(dir.path().join("b.png")).unwrap()
    );
    // The meshes agree to one 16-bit step of the 12-unit range.
    let load = |name: &str| {
        let (models, _) =
            tobj::load_obj(dir.path().join(name), &tobj::LoadOptions::default()).unwrap();
        models[0].mesh.positions.clone()
    };
    let (a, b) = (load("a.obj"), load("b.obj"));
    assert_eq!(a.len(), b.len());
    let step = 12.0 / 65535.0;
    for (k, (p, q)) in a.iter().zip(&b).enumerate() {
        assert!(
            (p - q).abs() <= step * 0.5 + 1e-5,
            "coordinate {k}: {p} vs {q}"
        );
    }
}

#[test]
fn obj_loads_in_a_standard_reader_with_the_expected_counts() {
    let (dir, scene) = scene_dir(
        "s.json",
        &terrain_scene(r#"{ "resolution": [33, 21], "generator": { "type": "noise" } }"#),
    );
    let out = run_in(
        dir.path(),
        &["terrain", scene.to_str().unwrap(), "--obj", "t.obj", "-q"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (models, _) =
        tobj::load_obj(dir.path().join("t.obj"), &tobj::LoadOptions::default()).unwrap();
    let mesh = &models[0].mesh;
    assert_eq!(mesh.positions.len(), 33 * 21 * 3);
    assert_eq!(mesh.normals.len(), 33 * 21 * 3);
    assert_eq!(mesh.indices.len(), 2 * 32 * 20 * 3);
    assert_eq!(
        mesh.normal_indices, mesh.indices,
        "each vertex has its own normal"
    );
    // The first cell is split along (i, j+1)–(i+1, j): its faces are
    // (i,j)(i+1,j)(i,j+1) and (i,j+1)(i+1,j)(i+1,j+1), in x/z world units
    // (dx = 100/32, dz = 100/20).
    let xz = |k: usize| {
        let v = mesh.indices[k] as usize;
        (mesh.positions[3 * v], mesh.positions[3 * v + 2])
    };
    let (x0, z0, x1, z1) = (-50.0, -50.0, -50.0 + 100.0 / 32.0, -50.0 + 100.0 / 20.0);
    assert_eq!([xz(0), xz(1), xz(2)], [(x0, z0), (x0, z1), (x1, z0)]);
    assert_eq!([xz(3), xz(4), xz(5)], [(x1, z0), (x0, z1), (x1, z1)]);
    // World units: x spans the terrain size (100 by default).
    let xs: Vec<f32> = mesh.positions.chunks(3).map(|p| p[0]).collect();
    assert_eq!(xs.iter().cloned().fold(f32::MAX, f32::min), -50.0);
    assert_eq!(xs.iter().cloned().fold(f32::MIN, f32::max), 50.0);
}

#[test]
fn every_generator_and_post_step_renders() {
    let cases = [
        r#"{ "resolution": [65, 65], "generator": { "type": "hills", "reset": [20, 60], "floor": 0.2 } }"#,
        r#"{ "resolution": [65, 65], "generator": { "type": "noise", "basis": "value", "ridged": true,
             "warp": { "amount": 5, "frequency": 0.03 }, "island": { "radius": 0.4 } } }"#,
        r#"{ "resolution": [65, 65], "generator": { "type": "noise",
             "octaves": [[0.08, 0.775], [1.1, 0.1316], [5.0, 0.02584], [20, 0.01078], [100, 0.00189]], "offset": -8 } }"#,
        r#"{ "resolution": [65, 65], "post": [ { "type": "smooth", "filter": "box", "radius": 1 },
             { "type": "thermal", "talus": 30, "iterations": 10 }, { "type": "hydraulic", "droplets": 2000 },
             { "type": "terrace", "levels": 6 }, { "type": "normalize" } ] }"#,
    ];
    for terrain in cases {
        let (dir, scene) = scene_dir("s.json", &terrain_scene(terrain));
        let out = run_in(
            dir.path(),
            &["render", scene.to_str().unwrap(), "-o", "o.png", "-q"],
        );
        assert!(
            out.status.success(),
            "{terrain}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn bad_terrain_parameters_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    image::RgbImage::new(8, 8)
        .save(dir.path().join("colour.png"))
        .unwrap();
    std::fs::write(dir.path().join("junk.png"), b"not a png").unwrap();
    let cases = [
        (
            r#"{ "generator": { "type": "noise", "octaves": { "count": 0, "frequency": 0.1 } } }"#,
            "terrain.generator.octaves.count",
        ),
        (
            r#"{ "generator": { "type": "noise", "octaves": [] } }"#,
            "terrain.generator.octaves",
        ),
        (
            r#"{ "generator": { "type": "hills", "radius": [-0.1, 0.2] } }"#,
            "terrain.generator.radius[0]",
        ),
        (
            r#"{ "post": [ { "type": "thermal", "talus": 95 } ] }"#,
            "terrain.post[0].talus",
        ),
        (
            r#"{ "post": [ { "type": "terrace", "levels": 1 } ] }"#,
            "terrain.post[0].levels",
        ),
        (r#"{ "post": [ { "type": "erode" } ] }"#, "terrain.post[0]"),
        (
            r#"{ "generator": { "type": "heightmap", "path": "missing.png" } }"#,
            "terrain.generator.path",
        ),
        (
            r#"{ "generator": { "type": "heightmap", "path": "junk.png" } }"#,
            "terrain.generator.path",
        ),
        (
            r#"{ "generator": { "type": "heightmap", "path": "colour.png" } }"#,
            "not a grayscale image",
        ),
    ];
    for (terrain, expect) in cases {
        std::fs::write(dir.path().join("bad.json"), terrain_scene(terrain)).unwrap();
        let out = run_in(dir.path(), &["render", "bad.json", "-o", "out.png"]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{terrain}: {e}");
        assert!(
            e.contains(expect) && e.contains("bad.json"),
            "{terrain}: {e}"
        );
        assert!(!dir.path().join("out.png").exists());
    }
    let none = run_in(dir.path(), &["terrain"]);
    assert_eq!(none.status.code(), Some(2), "an output is required");
}

/// A scene's terrain exported as a GeoTIFF DEM and read back as one takes
/// its size from the georeference and its heights in metres: the same
/// grid, to f32 rounding.
#[test]
fn geotiff_export_import_round_trip_keeps_size_and_heights() {
    let (dir, scene) = scene_dir(
        "a.json",
        &terrain_scene(
            r#"{ "size": [60, 40], "resolution": [61, 41], "height": 12, "generator": { "type": "hills" } }"#,
        ),
    );
    run_ok(
        dir.path(),
        &[
            "terrain",
            scene.to_str().unwrap(),
            "--geotiff",
            "a.tif",
            "--obj",
            "a.obj",
            "-q",
        ],
    );
    std::fs::write(
        dir.path().join("b.json"),
        terrain_scene(r#"{ "generator": { "type": "heightmap", "path": "a.tif" } }"#),
    )
    .unwrap();
    run_ok(dir.path(), &["terrain", "b.json", "--obj", "b.obj", "-q"]);
    let a = std::fs::read_to_string(dir.path().join("a.obj")).unwrap();
    let b = std::fs::read_to_string(dir.path().join("b.obj")).unwrap();
    let vertices = |s: &str| -> Vec<[f64; 3]> {
        s.lines()
            .filter(|l| l.starts_with("v "))
            .map(|l| {
                let v: Vec<f64> = l[2..]
                    .split_whitespace()
                    .map(|x| x.parse().unwrap())
                    .collect();
                [v[0], v[1], v[2]]
            })
            .collect()
    };
    let (va, vb) = (vertices(&a), vertices(&b));
    assert_eq!(va.len(), 61 * 41);
    assert_eq!(va.len(), vb.len());
    for (p, q) in va.iter().zip(&vb) {
        for k in 0..3 {
            assert!((p[k] - q[k]).abs() < 1e-4, "{p:?} vs {q:?}");
        }
    }
}
