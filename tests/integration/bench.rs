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
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let a = bench(&["--heightmap", "t.png"]);
    let b = bench(&["--obj", "t.obj"]);
    for key in [
        "build_ms",
        "bytes_per_triangle",
        "peak_rss_mib",
        "primary_mrays_1t",
        "primary_mrays",
        "shadow_mrays_1t",
        "shadow_mrays",
        "hits",
        "occluded",
        "threads",
    ] {
        assert!(a.get(key).is_some(), "JSON has {key}");
    }
    assert_eq!(a["triangles"], 2 * 64 * 64);
    assert_eq!((&a["hits"], &a["occluded"]), (&b["hits"], &b["occluded"]));
    // Most of the 1920 × 1080 rays see the terrain from this camera.
    assert!(a["hits"].as_u64().unwrap() > 1_000_000);
    let bad = run_in(dir.path(), &["bench"]);
    assert_eq!(bad.status.code(), Some(2));
}
