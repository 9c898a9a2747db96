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
    rejects(
        &plants("\"species\": \"oak\", \"leaf_image\": \"gone.png\""),
        &["plants[0].leaf_image (line 4", "cannot read the image"],
    );
    rejects(
        &plants("\"species\": \"oak\", \"prune\": 20"),
        &["plants[0].prune (line 4", "got 20"],
    );
}

/// Leaf cards are cut out where their image's alpha is 0: birches whose
/// leaves show a wholly clear image render the same bytes as birches
/// whose leaves have no width (grown alike, but never met), and a half-clear image lets some of the light
/// through that opaque cards stop (the cut-out hits are tested in the
/// plant field's BVH leaves, for camera and shadow rays alike).
#[test]
fn leaf_cards_are_cut_out_where_their_image_is_clear() {
    let scene = |plants: &str| {
        format!(
            "{{ {CAMERA}, \"image\": {{ \"width\": 64, \"height\": 36, \"samples\": 2 }}, \
             \"terrain\": {{ \"size\": [60, 60], \"resolution\": [65, 65], \"height\": 6, \
                             \"generator\": {{ \"type\": \"hills\" }} }}, \
             \"plants\": [{{ \"species\": \"birch\", \"density\": 1, \"spacing\": 5, {plants} }}], \
             \"integrator\": {{ \"type\": \"path\", \"bounces\": 1 }} }}"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let image = |name: &str, alpha: fn(u32) -> u8| {
        let img = image::RgbaImage::from_fn(8, 8, |_, y| image::Rgba([60, 140, 40, alpha(y)]));
        img.save(dir.path().join(name)).unwrap();
    };
    image("clear.png", |_| 0);
    image("half.png", |y| if y < 4 { 255 } else { 0 });
    image("opaque.png", |_| 255);
    let render = |name: &str, plants: &str| {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, scene(plants)).unwrap();
        let out = run_in(
            dir.path(),
            &[
                "render",
                path.to_str().unwrap(),
                "-q",
                "-o",
                &format!("{name}.png"),
            ],
        );
        assert!(out.status.success(), "{out:?}");
        // The pixels (the file's text names its scene).
        image::open(dir.path().join(format!("{name}.png")))
            .unwrap()
            .to_rgb8()
            .into_raw()
    };
    let leafless = render(
        "leafless",
        "\"grow\": { \"leaves\": { \"count\": 8, \"size\": 0.5, \"aspect\": 0 } }",
    );
    let cards = |image: &str| {
        format!("\"leaf_image\": \"{image}\", \"grow\": {{ \"leaves\": {{ \"count\": 8, \"size\": 0.5 }} }}")
    };
    let clear = render("clear", &cards("clear.png"));
    assert!(clear == leafless, "clear cards show");
    let mean = |rgb: &[u8]| {
        rgb.iter()
            .skip(1)
            .step_by(3)
            .map(|&g| g as f64)
            .sum::<f64>()
            / rgb.len() as f64
    };
    let half = render("half", &cards("half.png"));
    let opaque = render("opaque", &cards("opaque.png"));
    assert!(half != opaque && half != clear);
    // Green cards over the hills: the more of them is opaque, the more
    // of the picture differs from the leafless one.
    let differ = |a: &[u8]| (mean(a) - mean(&leafless)).abs();
    assert!(
        differ(&half) > 0.0 && differ(&half) < differ(&opaque),
        "{} {}",
        differ(&half),
        differ(&opaque)
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

/// The shipped plant scenes, small, a path-traced grove and a meadow of
/// cut-out grass cards: the same bytes on one thread and on two.
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
    // Grass of cards cut out by their image (each ray's pass or stop a
    // hash of the ray), path traced.
    let cards = format!(
        "{{ \"camera\": {{ \"position\": [0, 1.6, -9], \"look_at\": [0, 0.4, 0] }}, \
         \"image\": {{ \"width\": 48, \"height\": 27, \"samples\": 2 }}, \
         \"terrain\": {{ \"size\": [30, 30], \"resolution\": [65, 65], \"height\": 1.2, \
                         \"generator\": {{ \"type\": \"hills\" }} }}, \
         \"populations\": [{{ \"mesh\": {:?}, \"count\": 3000, \"scale\": [0.7, 1.4] }}], \
         \"integrator\": {{ \"type\": \"path\", \"bounces\": 2 }} }}",
        root().join("assets/grass-cards/grass.obj")
    );
    let cards = {
        let path = dir.path().join("cards.json");
        std::fs::write(&path, cards).unwrap();
        path
    };
    // Oaks whose leaves are sprigs cut out of an image, path traced.
    let sprigs = {
        let path = dir.path().join("sprigs.json");
        let image = root().join("assets/leaf-cards/beech.png");
        std::fs::write(
            &path,
            format!(
                "{{ {CAMERA}, \"image\": {{ \"width\": 48, \"height\": 27, \"samples\": 2 }}, \
                 \"terrain\": {{ \"size\": [60, 60], \"resolution\": [65, 65], \"height\": 6, \
                                 \"generator\": {{ \"type\": \"hills\" }} }}, \
                 \"plants\": [{{ \"species\": \"oak\", \"leaf_image\": {image:?}, \
                                 \"grow\": {{ \"leaves\": {{ \"count\": 3, \"size\": 0.9, \"aspect\": 0.5 }} }} }}], \
                 \"integrator\": {{ \"type\": \"path\", \"bounces\": 2 }} }}"
            ),
        )
        .unwrap();
        path
    };
    let scenes = [
        root().join("scenes/forest-valley.json"),
        root().join("scenes/meadow.json"),
        grove,
        cards,
        sprigs,
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

/// `scree terrain --plants-obj` writes every plant placed: as many faces
/// as the summary's triangles, an object per part of each plant, every
/// material it uses defined in the library beside it, the leaves' with
/// their translucency as `Tf`.
#[test]
fn plants_export_as_obj_with_their_materials() {
    let scene = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"size\": [40, 40], \"resolution\": [33, 33], \"height\": 3, \
         \"generator\": {{ \"type\": \"hills\" }} }}, \
         \"plants\": [{{ \"species\": \"herb\", \"spacing\": 4, \"understory\": true }}, \
                      {{ \"species\": \"birch\", \"spacing\": 10, \"grow\": {{ \"leaf_color_var\": 0 }} }}] }}"
    );
    let (dir, path) = scene_dir("p.json", &scene);
    let out = run_in(
        dir.path(),
        &["terrain", path.to_str().unwrap(), "--plants-obj", "p.obj"],
    );
    assert!(out.status.success(), "{out:?}");
    let summary =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let obj = std::fs::read_to_string(dir.path().join("p.obj")).unwrap();
    let mtl = std::fs::read_to_string(dir.path().join("p.mtl")).unwrap();
    assert!(obj.starts_with("# scree plants\nmtllib p.mtl\n"));
    let faces = obj.lines().filter(|l| l.starts_with("f ")).count();
    assert!(
        summary.contains(&format!(", {faces} triangles")),
        "{summary}"
    );
    let plants: usize = summary
        .split(" plants exported")
        .next()
        .and_then(|s| s.split_whitespace().last())
        .and_then(|s| s.parse().ok())
        .expect("a count of plants");
    assert!(plants > 5, "{summary}");
    // Herbs: bark, leaves, flowers; birches: bark and leaves.
    let objects = obj.lines().filter(|l| l.starts_with("o ")).count();
    let herbs = obj
        .lines()
        .filter(|l| l.starts_with("o herb_0_bark_"))
        .count();
    let birches = obj
        .lines()
        .filter(|l| l.starts_with("o birch_1_bark_"))
        .count();
    assert_eq!(herbs + birches, plants);
    assert_eq!(objects, 3 * herbs + 2 * birches);
    for used in obj.lines().filter_map(|l| l.strip_prefix("usemtl ")) {
        assert!(mtl.contains(&format!("newmtl {used}\n")), "{used}");
    }
    // One leaf material for the birches (no tint), one per herb.
    assert!(
        mtl.contains("newmtl birch_1_leaf\nKd 0.08 0.12 0.03\nTf 0.3 0.3 0.3\n"),
        "{mtl}"
    );
    assert_eq!(mtl.matches("newmtl herb_0_leaf_").count(), herbs);
}

/// `scree terrain --populations-obj` writes every instance placed with
/// its texture coordinates, and a material naming the images read: what
/// `tools/peer-bench/cycles_plants.py --cards` renders in Cycles.
#[test]
fn populations_export_with_their_images() {
    let grass = root().join("assets/grass-cards/grass.obj");
    let scene = format!(
        "{{ {CAMERA}, \"terrain\": {{ \"size\": [40, 40], \"resolution\": [33, 33], \"height\": 3 }}, \
         \"populations\": [{{ \"mesh\": {grass:?}, \"count\": 50 }}] }}"
    );
    let (dir, path) = scene_dir("p.json", &scene);
    let out = run_in(
        dir.path(),
        &[
            "terrain",
            path.to_str().unwrap(),
            "--populations-obj",
            "g.obj",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("50 population instances exported, 300 triangles"),
        "{summary}"
    );
    let obj = std::fs::read_to_string(dir.path().join("g.obj")).unwrap();
    let mtl = std::fs::read_to_string(dir.path().join("g.mtl")).unwrap();
    let count = |p: &str| obj.lines().filter(|l| l.starts_with(p)).count();
    // Three cards of four corners and two triangles each, per instance;
    // every face names its corners' coordinates.
    assert_eq!((count("v "), count("vt "), count("vn ")), (600, 600, 600));
    assert_eq!(count("f "), 300);
    assert!(obj
        .lines()
        .filter(|l| l.starts_with("f "))
        .all(|l| l.split(' ').skip(1).all(|c| c.split('/').count() == 3)));
    let png = root().join("assets/grass-cards/grass.png");
    let png = png.display();
    assert!(mtl.contains(&format!("map_Kd {png}\nmap_d {png}")), "{mtl}");
    assert!(mtl.contains("Kd 0.2 0.35 0.08"), "{mtl}");
}
