//! `scree preview`: the real server on a free port, driven over HTTP the
//! way the page drives it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::*;

const SCENE: &str = r#"{
  "image": { "width": 64, "height": 36, "samples": 4 },
  "camera": { "position": [0, 30, -60], "look_at": [0, 5, 0] },
  "terrain": { "resolution": [33, 33] },
  "sun": { "elevation": 35 }
}
"#;

/// The server, stopped (SIGINT, as Ctrl-C) when dropped.
struct Preview {
    child: Child,
    addr: String,
}

impl Preview {
    fn start(dir: &std::path::Path, scene: &std::path::Path) -> Preview {
        let mut child = scree()
            .current_dir(dir)
            .args(["preview", scene.to_str().unwrap(), "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        Preview { child, addr }
    }

    /// (status, body) of `method path`, sent as it is written (no path
    /// normalisation).
    fn request(&self, method: &str, path: &str) -> (u16, Vec<u8>) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            self.addr
        )
        .unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&raw[..split]).to_string();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        let mut body = raw[split + 4..].to_vec();
        if head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked")
        {
            body = dechunk(&body);
        }
        (status, body)
    }

    fn state(&self) -> serde_json::Value {
        let (status, body) = self.request("GET", "/state");
        assert_eq!(status, 200);
        serde_json::from_slice(&body).unwrap()
    }

    /// Waits for a finished image of a generation after `after`.
    fn done_after(&self, after: u64) -> serde_json::Value {
        let start = Instant::now();
        loop {
            let s = self.state();
            if s["state"] == "done" && s["generation"].as_u64().unwrap() > after {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "no image: {s}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Preview {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let size =
            usize::from_str_radix(std::str::from_utf8(&b[..line_end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&b[line_end + 2..line_end + 2 + size]);
        b = &b[line_end + 2 + size + 2..];
    }
}

/// Waits for a finished image after generation `after` drawn with more
/// worlds built than `builds`; returns the count.
fn builds_after(preview: &Preview, after: u64, builds: u64) -> u64 {
    let start = Instant::now();
    loop {
        let s = preview.done_after(after);
        let now = s["builds"].as_u64().unwrap();
        if now > builds {
            return now;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no new world: {s}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_preview_refines_follows_the_file_and_serves_nothing_else() {
    let (dir, scene) = scene_dir("preview.json", SCENE);
    let preview = Preview::start(dir.path(), &scene);

    let (status, page) = preview.request("GET", "/");
    assert_eq!(status, 200);
    let page = String::from_utf8(page).unwrap();
    assert!(page.contains("<title>scree preview</title>"));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "nothing fetched from elsewhere"
    );

    // The projection menu: every tag with its default field of view.
    let (status, list) = preview.request("GET", "/projections.json");
    assert_eq!(status, 200);
    let list: serde_json::Value = serde_json::from_slice(&list).unwrap();
    assert_eq!(
        list[0],
        serde_json::json!({ "type": "perspective", "fov": 60.0 })
    );
    assert_eq!(
        list[1],
        serde_json::json!({ "type": "orthographic", "fov": null })
    );
    assert_eq!(list.as_array().unwrap().len(), 5);

    // Rounds up to the scene's samples; the last is the render's image.
    let first = preview.done_after(0);
    assert_eq!(
        (first["samples"].clone(), first["width"].clone()),
        (4.into(), 64.into())
    );
    let (status, before) = preview.request("GET", "/frame.png");
    assert_eq!(status, 200);
    assert!(before.starts_with(b"\x89PNG"));
    let rendered = dir.path().join("rendered.png");
    run_ok(
        dir.path(),
        &[
            "render",
            scene.to_str().unwrap(),
            "-o",
            rendered.to_str().unwrap(),
            "-q",
        ],
    );
    let shown = dir.path().join("shown.png");
    std::fs::write(&shown, &before).unwrap();
    run_ok(
        dir.path(),
        &[
            "diff",
            rendered.to_str().unwrap(),
            shown.to_str().unwrap(),
            "-q",
        ],
    );
    std::fs::remove_file(&rendered).unwrap();
    std::fs::remove_file(&shown).unwrap();

    // Events: the status of each round, as JSON.
    let mut events = TcpStream::connect(&preview.addr).unwrap();
    events
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(events, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    while !seen.contains("data: {") {
        let n = events.read(&mut buf).unwrap();
        assert!(n > 0, "the event stream ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(seen.contains("text/event-stream"), "{seen}");
    drop(events);

    // The file changes: a new generation, the world kept, another image.
    std::fs::write(
        &scene,
        SCENE.replace("\"elevation\": 35", "\"elevation\": 8"),
    )
    .unwrap();
    let next = preview.done_after(first["generation"].as_u64().unwrap());
    assert_eq!(next["rebuilt"], false, "a sun change keeps the world");
    let (_, after) = preview.request("GET", "/frame.png");
    assert_ne!(before, after, "the image follows the sun");

    // A broken file: its error on the page, the last image kept.
    std::fs::write(&scene, SCENE.replace("64", "\"wide\"")).unwrap();
    let start = Instant::now();
    let broken = loop {
        let s = preview.state();
        if s["state"] == "error" {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no error: {s}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let message = broken["error"].as_str().unwrap();
    assert!(
        message.contains("preview.json at image.width (line 2"),
        "{message}"
    );
    assert_eq!(preview.request("GET", "/frame.png").1, after);
    std::fs::write(&scene, SCENE).unwrap();
    preview.done_after(broken["generation"].as_u64().unwrap());

    // Nothing outside the routes, however the path is spelled.
    for path in [
        "/../Cargo.toml",
        "/%2e%2e/Cargo.toml",
        "/%2E%2E%2FCargo.toml",
        "/..%2fCargo.toml",
        "/frame.png/../../Cargo.toml",
        "/preview.json",
        "//etc/passwd",
    ] {
        assert_eq!(preview.request("GET", path).0, 404, "{path}");
    }

    // A malformed control: 400, and the scene is as it was.
    let (_, unchanged) = preview.request("GET", "/scene.json");
    for bad in [
        "/control?sun_elevation=high",
        "/control?sun_elevation=95",
        "/control?projection=isometric",
        "/control?brightness=2",
        "/control?projection=perspective&fov=200",
        "/look?x=1",
        "/save?name=../escape.json",
    ] {
        assert_eq!(preview.request("POST", bad).0, 400, "{bad}");
    }
    assert_eq!(preview.request("GET", "/scene.json").1, unchanged);

    // A control changes the image, not the file; Save as writes a new one.
    let generation = preview.state()["generation"].as_u64().unwrap();
    assert_eq!(
        preview
            .request("POST", "/control?sun_azimuth=90&exposure=1")
            .0,
        200
    );
    preview.done_after(generation);
    assert_eq!(std::fs::read_to_string(&scene).unwrap(), SCENE);
    let (status, body) = preview.request("POST", "/save?name=edited.json");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let edited: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("edited.json")).unwrap())
            .unwrap();
    assert_eq!(
        (
            edited["sun"]["azimuth"].clone(),
            edited["image"]["exposure"].clone()
        ),
        (90.0.into(), 1.0.into())
    );
    assert_eq!(preview.request("POST", "/save?name=edited.json").0, 409);

    // A file the scene names: changing it rebuilds the world.
    let map = |v: u8| {
        image::GrayImage::from_fn(9, 9, |x, y| image::Luma([(x * 20 + y * v as u32) as u8]))
            .save(dir.path().join("h.png"))
            .unwrap()
    };
    map(3);
    let state = preview.state();
    let (generation, builds) = (
        state["generation"].as_u64().unwrap(),
        state["builds"].as_u64().unwrap(),
    );
    std::fs::write(
        &scene,
        SCENE.replace(
            r#""resolution": [33, 33]"#,
            r#""generator": { "type": "heightmap", "path": "h.png" }"#,
        ),
    )
    .unwrap();
    // Counted in builds: one write may come as several events, and a
    // round whose file did not change again keeps the world it has.
    let built = builds_after(&preview, generation, builds);
    std::thread::sleep(Duration::from_millis(50));
    map(9);
    let generation = preview.state()["generation"].as_u64().unwrap();
    builds_after(&preview, generation - 1, built);

    // Ctrl-C stops it and leaves only what was saved.
    drop(preview);
    assert_eq!(
        files_in(dir.path()),
        vec!["edited.json", "h.png", "preview.json"]
    );
}

/// A view the preview moved to (a click to look at, the sun and the
/// field of view changed) is drawn with the world built for the first
/// view: it must give the bytes a fresh render of the moved view gives.
#[test]
fn a_moved_view_is_drawn_as_a_fresh_render_of_it() {
    let scene_text = r#"{
  "image": { "width": 72, "height": 40, "samples": 4 },
  "seed": 11,
  "camera": { "position": [-25, 12, -35], "look_at": [0, 4, 0] },
  "terrain": { "size": [80, 80], "resolution": [129, 129], "height": 14 },
  "scatter": { "count": 30, "radius": [0.6, 1.4] },
  "sun": { "elevation": 40, "azimuth": 150 }
}
"#;
    let (dir, scene) = scene_dir("view.json", scene_text);
    let preview = Preview::start(dir.path(), &scene);
    let first = preview.done_after(0);
    let (_, before) = preview.request("GET", "/frame.png");

    let (status, body) = preview.request("POST", "/look?x=60&y=30");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    preview.done_after(first["generation"].as_u64().unwrap());
    let generation = preview.state()["generation"].as_u64().unwrap();
    let (status, body) = preview.request("POST", "/control?sun_elevation=9&sun_azimuth=250&fov=45");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let moved = preview.done_after(generation);
    assert_eq!(moved["rebuilt"], false, "the first view's world is kept");
    assert_eq!(moved["samples"], 4);
    let (_, shown) = preview.request("GET", "/frame.png");
    assert_ne!(before, shown, "the view moved");

    let (status, body) = preview.request("POST", "/save?name=moved.json");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    drop(preview);
    run_ok(
        dir.path(),
        &["render", "moved.json", "-o", "fresh.png", "-q"],
    );
    let fresh = image::open(dir.path().join("fresh.png"))
        .unwrap()
        .to_rgba8();
    let shown = image::load_from_memory(&shown).unwrap().to_rgba8();
    assert_eq!(fresh.dimensions(), shown.dimensions());
    assert!(
        fresh.as_raw() == shown.as_raw(),
        "the preview's pixels are a fresh render's"
    );
}
