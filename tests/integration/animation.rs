//! Sequences: `--frames` and `--frame` over a scene's `animation`.

use crate::support::*;

const SCENE: &str = r#"{
  "image": { "width": 48, "height": 27, "samples": 2 },
  "seed": 4,
  "camera": { "position": [-20, 10, -30], "look_at": [0, 3, 0] },
  "terrain": { "size": [60, 60], "resolution": [65, 65], "height": 10 },
  "sun": { "elevation": 20, "azimuth": 120 },
  "sky": { "type": "preetham", "turbidity": 3 },
  "animation": {
    "frames": 12, "fps": 12,
    "camera": [
      { "frame": 0, "position": [-20, 10, -30], "look_at": [0, 3, 0], "fov": 60 },
      { "frame": 6, "position": [0, 1, -10], "look_at": [10, 3, 10], "fov": 50 },
      { "frame": 11, "position": [20, 8, 10], "look_at": [0, 2, 20], "fov": 70 }
    ],
    "follow": { "clearance": 3 },
    "time_of_day": { "latitude": 46, "day": 172, "start_hour": 5, "end_hour": 9 }
  }
}"#;

#[test]
fn frames_in_a_sequence_are_the_frames_rendered_alone() {
    let (dir, scene) = scene_dir("anim.json", SCENE);
    let s = scene.to_str().unwrap();
    std::fs::create_dir(dir.path().join("seq")).unwrap();
    run_ok(
        dir.path(),
        &[
            "render",
            s,
            "--frames",
            "0..3",
            "-o",
            "seq/f-####.png",
            "--preview",
            "anim.png",
            "-q",
        ],
    );
    let frames: Vec<Vec<u8>> = (0..4)
        .map(|k| std::fs::read(dir.path().join(format!("seq/f-{k:04}.png"))).unwrap())
        .collect();
    for (k, frame) in frames.iter().enumerate() {
        for threads in ["1", "2"] {
            let alone = format!("alone-{k}-{threads}.png");
            run_ok(
                dir.path(),
                &[
                    "render",
                    s,
                    "--frame",
                    &k.to_string(),
                    "--threads",
                    threads,
                    "-o",
                    &alone,
                    "-q",
                ],
            );
            assert_eq!(
                std::fs::read(dir.path().join(&alone)).unwrap(),
                *frame,
                "frame {k} alone on {threads} threads"
            );
        }
    }
    for pair in frames.windows(2) {
        assert_ne!(pair[0], pair[1], "the frames move");
    }
    // The preview is an animated PNG of the four frames.
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("anim.png")).unwrap(),
    ));
    let reader = decoder.read_info().unwrap();
    let control = reader.info().animation_control().expect("an APNG");
    assert_eq!((control.num_frames, control.num_plays), (4, 0));

    // Run again: every frame is kept, not rendered.
    let again = run_ok(
        dir.path(),
        &["render", s, "--frames", "0..3", "-o", "seq/f-####.png"],
    );
    let summary = String::from_utf8_lossy(&again.stdout);
    assert!(
        summary.starts_with("0 frames rendered, 4 already there"),
        "{summary}"
    );
    // A frame of another scene (a changed file) is rendered again.
    std::fs::write(&scene, SCENE.replace("\"seed\": 4", "\"seed\": 5")).unwrap();
    let changed = run_ok(
        dir.path(),
        &["render", s, "--frames", "2..3", "-o", "seq/f-####.png"],
    );
    let summary = String::from_utf8_lossy(&changed.stdout);
    assert!(summary.starts_with("2 frames rendered"), "{summary}");
}

#[test]
fn sequences_refuse_what_they_cannot_do() {
    let (dir, scene) = scene_dir("anim.json", SCENE);
    let s = scene.to_str().unwrap();
    let still = dir.path().join("still.json");
    std::fs::write(
        &still,
        r#"{ "camera": { "position": [0, 30, -60], "look_at": [0, 5, 0] } }"#,
    )
    .unwrap();
    for (args, says) in [
        (
            vec!["render", s, "--frames", "0..3", "-o", "f.png"],
            "needs #### in the output name",
        ),
        (
            vec!["render", s, "--frames", "0..12", "-o", "f-##.png"],
            "the animation has frames 0..11",
        ),
        (
            vec!["render", s, "--frames", "3..1", "-o", "f-##.png"],
            "is after the last",
        ),
        (
            vec![
                "render",
                still.to_str().unwrap(),
                "--frame",
                "0",
                "-o",
                "f.png",
            ],
            "need a scene with an `animation`",
        ),
    ] {
        let out = run_in(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert_eq!(
        files_in(dir.path()),
        vec!["anim.json", "still.json"],
        "nothing written"
    );
}

#[test]
fn compare_over_frames_is_an_animated_grid_with_its_overlay() {
    let (dir, scene) = scene_dir("anim.json", SCENE);
    let s = scene.to_str().unwrap();
    run_ok(
        dir.path(),
        &["render", s, "--frame", "0", "-o", "unused.png", "-q"],
    );
    run_ok(
        dir.path(),
        &[
            "compare",
            s,
            "--frames",
            "0..2",
            "--overlay",
            "tissot",
            "--cell-width",
            "64",
            "--spp",
            "1",
            "-o",
            "grid.png",
            "-q",
        ],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("grid.png")).unwrap(),
    ));
    let reader = decoder.read_info().unwrap();
    assert_eq!(reader.info().animation_control().unwrap().num_frames, 3);
}

/// A frame of a sequence is the scene without its animation, rendered as
/// a still with the frame's pose (camera, follow clearance, sun from the
/// time of day) given as overrides: the same pixels, though the frame is
/// drawn with the world built for frame 0's view.
#[test]
fn a_frame_is_the_still_with_its_pose_as_overrides() {
    use scree::job::{self, RenderJob};
    use scree::scene::{Overrides, Source};
    use std::sync::atomic::AtomicBool;

    let (dir, scene) = scene_dir("anim.json", SCENE);
    let s = scene.to_str().unwrap();
    run_ok(
        dir.path(),
        &["render", s, "--frame", "7", "-o", "frame.png", "-q"],
    );

    let source = Source::read(Some(&scene)).unwrap();
    let animated = source.scene(&Overrides::default()).unwrap();
    let world = scree::world::World::build(&animated);
    let pose = job::frame_overrides(&animated, &world, 7).unwrap();
    assert!(pose.position.is_some() && pose.sun_elevation.is_some());
    let mut still: serde_json::Value = serde_json::from_str(SCENE).unwrap();
    still.as_object_mut().unwrap().remove("animation");
    let still_path = dir.path().join("still.json");
    std::fs::write(&still_path, still.to_string()).unwrap();
    let out = dir.path().join("still.png");
    let still_job = RenderJob {
        scene: Some(still_path),
        output: Some(out.clone()),
        overrides: pose,
        ..RenderJob::default()
    };
    job::run(
        &still_job,
        &indicatif::ProgressBar::hidden(),
        &AtomicBool::new(false),
    )
    .unwrap();

    let frame = image::open(dir.path().join("frame.png"))
        .unwrap()
        .to_rgba8();
    let still = image::open(&out).unwrap().to_rgba8();
    assert_eq!(frame.dimensions(), (48, 27));
    assert!(
        frame.as_raw() == still.as_raw(),
        "frame 7 and the posed still differ"
    );
}
