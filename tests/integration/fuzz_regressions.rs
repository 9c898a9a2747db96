//! Replays the inputs kept from fuzzing (`fuzz/`, see README): each must be
//! handled without a panic. Crashes the fuzzer finds are fixed and their
//! inputs added to `tests/data/fuzz/`.

use crate::support::*;

fn inputs(kind: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root().join("tests/data/fuzz").join(kind);
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.display().to_string(), std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn scene_inputs_never_panic() {
    let cases = inputs("scene");
    assert!(!cases.is_empty());
    for (name, bytes) in cases {
        let text = String::from_utf8_lossy(&bytes);
        let result = std::panic::catch_unwind(|| {
            let _ = scree::scene::parse(
                &text,
                "fuzz.json",
                std::path::Path::new("/nonexistent-scree-fuzz"),
            );
        });
        assert!(result.is_ok(), "{name} panicked");
    }
}

#[test]
fn heightmap_inputs_never_panic() {
    let cases = inputs("heightmap");
    assert!(!cases.is_empty());
    for (name, bytes) in cases {
        let result = std::panic::catch_unwind(|| {
            if let Ok(map) =
                scree::terrain::import::decode(&bytes, std::path::Path::new("fuzz.png"))
            {
                let _ = scree::terrain::import::resample(&map, 17, 9, 1.0);
            }
        });
        assert!(result.is_ok(), "{name} panicked");
    }
}
