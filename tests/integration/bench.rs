//! `scree bench`: the shared workload's figures and checksums.

use crate::support::*;

#[test]
fn heightmap_and_obj_of_the_same_terrain_give_the_same_checksums() {
    let dir = tempfile::tempdir().unwrap();
    // A small terrain as a 16-bit heightmap, then the OBJ of exactly what
    // importing that heightmap gives (100 × 100 units, 15 high).
    std::fs::write(
        dir.path().join("gen.json"),
        r#"{ "camera": { "position": [0, 30, -50], "look_at": [0, 2, 0] },
             "terrain": { "size": [100, 100], "resolution": [65, 65], "height": 15,
                          "generator": { "type": "diamond_square" } } }"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("imp.json"),
        r#"{ "camera": { "position": [0, 30, -50], "look_at": [0, 2, 0] },
             "terrain": { "size": [100, 100], "height": 15,
                          "generator": { "type": "heightmap", "path": "t.png" } } }"#,
    )
    .unwrap();
    assert!(run_in(
        dir.path(),
        &["terrain", "gen.json", "--heightmap", "t.png", "-q"]
    )
    .status
    .success());
    assert!(
        run_in(dir.path(), &["terrain", "imp.json", "--obj", "t.obj", "-q"])
            .status
            .success()
    );
    let bench = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["bench", "--reps", "1", "--threads", "2", "--json"];
        all.extend_from_slice(args);
        let out = run_ok(dir.path(), &all);
        // Progress is drawn only on a terminal: a pipe gets the figures alone.
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let a = bench(&["--heightmap", "t.png"]);
    let b = bench(&["--obj", "t.obj", "-q"]);
    for key in [
        "build_ms",
        "bytes_per_triangle",
        "peak_rss_mib",
        "primary_mrays_1t",
        "primary_mrays",
        "shadow_mrays_1t",
        "shadow_mrays",
        "diffuse_mrays_1t",
        "diffuse_mrays",
        "hits",
        "occluded",
        "diffuse_hits",
        "threads",
        "simd",
    ] {
        assert!(a.get(key).is_some(), "JSON has {key}");
    }
    assert!(
        ["avx512", "avx2", "avx", "scalar"].contains(&a["simd"].as_str().unwrap()),
        "{}",
        a["simd"]
    );
    assert_eq!(a["triangles"], 2 * 64 * 64);
    assert_eq!((&a["hits"], &a["occluded"]), (&b["hits"], &b["occluded"]));
    // Most of the 1920 × 1080 rays see the terrain from this camera.
    assert!(a["hits"].as_u64().unwrap() > 1_000_000);
    // The bounce rays are the same rays through both structures (their
    // hits may differ by a few where a ray grazes an edge), and some of
    // them meet the hills again.
    let (da, db) = (
        a["diffuse_hits"].as_u64().unwrap(),
        b["diffuse_hits"].as_u64().unwrap(),
    );
    assert!(da > 10_000 && da < a["hits"].as_u64().unwrap() / 2, "{da}");
    assert!(da.abs_diff(db) * 1000 <= da, "{da} against {db}");
    // The copies' control: its rates only with --copies, and the same
    // counts (every copy traces the same rays).
    assert!(a.get("copies_primary_mrays").is_none());
    let c = bench(&["--heightmap", "t.png", "--copies"]);
    assert_eq!((&c["hits"], &c["occluded"]), (&a["hits"], &a["occluded"]));
    for key in ["copies_primary_mrays", "copies_shadow_mrays"] {
        assert!(c[key].as_f64().unwrap() > 0.0, "{key}: {}", c[key]);
    }
    let bad = run_in(dir.path(), &["bench"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// `scree terrain --rocks-obj` exports a scene's rocks as one mesh that
/// `scree bench --obj` traces: the summary's triangle count is the mesh's,
/// and the workload camera sees the rocks.
#[test]
fn exported_rock_field_is_a_bench_mesh() {
    let (dir, _) = scene_dir(
        "rocks.json",
        r#"{ "camera": { "position": [0, 30, -50], "look_at": [0, 2, 0] },
             "terrain": { "size": [100, 100], "resolution": [65, 65], "height": 6,
                          "generator": { "type": "hills" } },
             "rocks": [ { "center": [0, 2, 0], "radius": 4, "stacks": 8, "slices": 16,
                          "rest_on_terrain": true },
                        { "center": [10, 2, 5], "radius": 2, "analytic": true } ],
             "scatter": { "count": 30, "radius": [1, 3], "seed": 2, "area": [80, 80],
                          "stacks": 6, "slices": 12 } }"#,
    );
    let out = run_ok(
        dir.path(),
        &["terrain", "rocks.json", "--rocks-obj", "rocks.obj"],
    );
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(
        summary.contains("31 rocks exported") && summary.contains("1 analytic rocks left out"),
        "{summary}"
    );
    let triangles: u64 = summary
        .split(" rocks exported, ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the summary gives the triangle count");
    let out = run_ok(
        dir.path(),
        &["bench", "--obj", "rocks.obj", "--reps", "1", "--json"],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["triangles"], triangles);
    assert!(report["hits"].as_u64().unwrap() > 20_000, "{report}");
    // Texture coordinates and a material library come with it.
    let obj = std::fs::read_to_string(dir.path().join("rocks.obj")).unwrap();
    let mtl = std::fs::read_to_string(dir.path().join("rocks.mtl")).unwrap();
    assert!(obj.contains("mtllib rocks.mtl\n") && obj.contains("\nusemtl rock_0\n"));
    assert_eq!(
        obj.matches("\nvt ").count() as u64,
        3 * triangles,
        "a vt per face corner"
    );
    assert!(mtl.contains("newmtl rock_0\nKd 0.35 0.33 0.3"), "{mtl}");
}

/// Bad input to `scree bench` is one clear error and exit code 2, before
/// anything is traced: a file that is not a mesh, a mesh with a vertex
/// that is not a number, and options out of range (no zero threads, which
/// rayon would take as "one per core", and no hundred thousand of them).
#[test]
fn bench_refuses_bad_input() {
    let (dir, _) = scene_dir("not-a-mesh.json", r#"{ "image": { "width": 8 } }"#);
    std::fs::write(
        dir.path().join("nan.obj"),
        "v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("index.obj"), "v 0 0 0\nf 1 2 3\n").unwrap();
    let cases: [(&[&str], &str); 10] = [
        (
            &["--obj", "not-a-mesh.json"],
            "not-a-mesh.json has no triangles",
        ),
        (&["--obj", "nan.obj"], "nan.obj: a vertex is not finite"),
        (&["--obj", "index.obj"], "cannot read index.obj"),
        (&["--obj", "missing.obj"], "cannot read missing.obj"),
        (
            &["--heightmap", "not-a-mesh.json"],
            "cannot read not-a-mesh.json",
        ),
        (
            &["--obj", "nan.obj", "--threads", "0"],
            "'--threads <THREADS>': 0 is not in 1..=1024",
        ),
        (
            &["--obj", "nan.obj", "--threads", "100000"],
            "100000 is not in 1..=1024",
        ),
        (
            &["--obj", "nan.obj", "--reps", "0"],
            "'--reps <REPS>': 0 is not in 1..=1000",
        ),
        (
            &["--obj", "nan.obj", "--extent", "-5"],
            "must be above 0 and at most 1e7, got -5",
        ),
        (
            &["--obj", "nan.obj", "--height", "nan"],
            "must be between 0 and 1e6, got NaN",
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["bench", "--json"];
        all.extend_from_slice(args);
        let out = run_in(dir.path(), &all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}
