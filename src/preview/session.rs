//! The preview's state: the scene file and the controls on top of it, the
//! world built from it, the worker that renders rounds, and the watcher
//! that restarts it when a file changes.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Instant, SystemTime};

use indicatif::ProgressBar;
use notify::Watcher;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::watch;

use crate::camera::ProjectionFile;
use crate::error::{Error, Result};
use crate::render;
use crate::scene::{self, Overrides, Scene, Source};
use crate::world::World;

/// The controls the page sets on top of the scene file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Controls {
    /// `sun.elevation`, degrees.
    pub sun_elevation: Option<f64>,
    /// `sun.azimuth`, degrees.
    pub sun_azimuth: Option<f64>,
    /// `image.exposure`, EV.
    pub exposure: Option<f64>,
    /// `camera.projection.type`.
    pub projection: Option<String>,
    /// `camera.projection.fov`, degrees.
    pub fov: Option<f64>,
    /// `camera.look_at`, world units.
    pub look_at: Option<[f64; 3]>,
}

impl Controls {
    /// The controls as overrides of a scene file whose projection is
    /// `file` (a fov is left out where the projection has none).
    fn overrides(&self, file: &ProjectionFile) -> Overrides {
        let projection = match &self.projection {
            Some(tag) => ProjectionFile::named(tag).ok(),
            None => Some(file.clone()),
        };
        let orthographic = matches!(projection, Some(ProjectionFile::Orthographic { .. }));
        Overrides {
            sun_elevation: self.sun_elevation,
            sun_azimuth: self.sun_azimuth,
            exposure: self.exposure,
            projection: self.projection.clone(),
            fov: self.fov.filter(|_| !orthographic),
            look_at: self.look_at,
            ..Overrides::default()
        }
    }

    /// `raw` (a scene file's JSON) with the controls applied.
    fn apply(&self, raw: &mut Value) {
        let Some(root) = raw.as_object_mut() else {
            return;
        };
        let mut set = |section: &str, key: &str, v: Value| {
            let s = root
                .entry(section)
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(s) = s.as_object_mut() {
                s.insert(key.into(), v);
            }
        };
        if let Some(e) = self.sun_elevation {
            set("sun", "elevation", e.into());
        }
        if let Some(a) = self.sun_azimuth {
            set("sun", "azimuth", a.into());
        }
        if let Some(x) = self.exposure {
            set("image", "exposure", x.into());
        }
        if let Some(p) = self.look_at {
            set("camera", "look_at", serde_json::json!(p));
        }
        if self.projection.is_some() || self.fov.is_some() {
            let camera = root
                .entry("camera")
                .or_insert_with(|| Value::Object(Default::default()));
            let Some(camera) = camera.as_object_mut() else {
                return;
            };
            let current = camera
                .get("projection")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "perspective"}));
            let same = self
                .projection
                .as_ref()
                .is_none_or(|p| current.get("type").and_then(Value::as_str) == Some(p));
            let mut projection = if same {
                current
            } else {
                serde_json::json!({ "type": self.projection })
            };
            if let (Some(fov), Some(p)) = (self.fov, projection.as_object_mut()) {
                if p.get("type").and_then(Value::as_str) != Some("orthographic") {
                    p.insert("fov".into(), fov.into());
                }
            }
            camera.insert("projection".into(), projection);
        }
    }

    /// These controls with the query's values set; an unknown key or a
    /// malformed value is an error and sets nothing.
    fn with(&self, query: &HashMap<String, String>) -> std::result::Result<Controls, String> {
        let mut next = self.clone();
        let number = |k: &str, v: &str, lo: f64, hi: f64| -> std::result::Result<f64, String> {
            let x: f64 = v
                .parse()
                .map_err(|_| format!("{k}: `{v}` is not a number"))?;
            if !x.is_finite() || x < lo || x > hi {
                return Err(format!("{k}: must be between {lo} and {hi}, got {v}"));
            }
            Ok(x)
        };
        for (k, v) in query {
            match k.as_str() {
                "sun_elevation" => next.sun_elevation = Some(number(k, v, -90.0, 90.0)?),
                "sun_azimuth" => next.sun_azimuth = Some(number(k, v, -360.0, 720.0)?),
                "exposure" => next.exposure = Some(number(k, v, -20.0, 20.0)?),
                "fov" => next.fov = Some(number(k, v, 0.0, 360.0)?),
                "projection" => {
                    ProjectionFile::named(v).map_err(|e| format!("projection: {e}"))?;
                    next.projection = Some(v.clone());
                }
                other => return Err(format!("unknown control `{other}`")),
            }
        }
        Ok(next)
    }
}

/// Where the preview is, as the page shows it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Status {
    /// The scene file, as named on the command line.
    pub scene: String,
    /// Counts every image and error published.
    pub version: u64,
    /// Counts the restarts (a file or control change).
    pub generation: u64,
    /// `building`, `rendering`, `done` or `error`.
    pub state: &'static str,
    /// The round of the image (0: the quarter-size pass).
    pub round: u32,
    /// Rounds in all.
    pub rounds: u32,
    /// Samples per pixel of the image.
    pub samples: u32,
    /// The image's size.
    pub width: u32,
    /// The image's height.
    pub height: u32,
    /// Seconds since this generation started.
    pub seconds: f64,
    /// Mrays/s of the round.
    pub mrays: f64,
    /// Whether the world was built again for this generation.
    pub rebuilt: bool,
    /// Worlds built since the preview started.
    pub builds: u64,
    /// The scene's error, as `scree check` says it; the last good image
    /// stays.
    pub error: Option<String>,
}

/// An image and its status.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// The PNG, once there is one.
    pub png: Option<Arc<Vec<u8>>>,
    /// Its status.
    pub status: Status,
}

/// What [`Session::save_as`] refuses.
#[derive(Debug)]
pub enum SaveError {
    /// The file exists.
    Exists(String),
    /// The name or the write.
    Refused(String),
}

/// The world built from a scene, with the scene (at preview size) that
/// the latest round rendered.
struct Built {
    key: String,
    world: World,
}

/// See the module documentation.
pub struct Session {
    path: PathBuf,
    dir: PathBuf,
    name: String,
    width: Option<u32>,
    controls: Mutex<Controls>,
    /// Bumped on every change; the worker waits on it.
    generation: Mutex<u64>,
    wake: Condvar,
    /// Set to stop the round being rendered (a change came).
    restart: AtomicBool,
    /// Ctrl-C.
    cancel: &'static AtomicBool,
    /// Set by [`Session::stop`].
    stopping: AtomicBool,
    /// Worlds built so far.
    builds: std::sync::atomic::AtomicU64,
    frames: watch::Sender<Frame>,
    /// The scene the latest image shows (for clicks on it).
    shown: Mutex<Option<Scene>>,
    built: Mutex<Option<Arc<Built>>>,
    worker: Mutex<Option<std::thread::JoinHandle<()>>>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    watched: Mutex<BTreeSet<PathBuf>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Session {
    /// Starts the worker and the watcher for the scene at `path`.
    pub fn start(
        path: &Path,
        width: Option<u32>,
        cancel: &'static AtomicBool,
    ) -> Result<Arc<Session>> {
        let metadata = std::fs::metadata(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if !metadata.is_file() {
            return Err(Error::Usage(format!("{} is not a file", path.display())));
        }
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let (frames, _) = watch::channel(Frame::default());
        let session = Arc::new(Session {
            path: path.to_path_buf(),
            dir,
            name: path.display().to_string(),
            width,
            controls: Mutex::new(Controls::default()),
            generation: Mutex::new(1),
            wake: Condvar::new(),
            restart: AtomicBool::new(false),
            cancel,
            stopping: AtomicBool::new(false),
            builds: Default::default(),
            frames,
            shown: Mutex::new(None),
            built: Mutex::new(None),
            worker: Mutex::new(None),
            watcher: Mutex::new(None),
            watched: Mutex::new(BTreeSet::new()),
        });
        let me = session.clone();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            use notify::event::{EventKind, ModifyKind};
            // Writes, renames and removals; not opens and reads (the
            // worker reads the files it watches).
            let writes = |kind: &EventKind| {
                matches!(
                    kind,
                    EventKind::Create(_)
                        | EventKind::Remove(_)
                        | EventKind::Modify(
                            ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any
                        )
                )
            };
            if let Some(event) = event.ok().filter(|e| writes(&e.kind)) {
                let watched = lock(&me.watched);
                if event.paths.iter().any(|p| watched.contains(&normal(p))) {
                    drop(watched);
                    me.kick();
                }
            }
        })
        .map_err(|e| Error::Usage(format!("cannot watch {}: {e}", path.display())))?;
        *lock(&session.watcher) = Some(watcher);
        session.watch(std::slice::from_ref(&session.path));
        let me = session.clone();
        *lock(&session.worker) = Some(std::thread::spawn(move || me.work()));
        Ok(session)
    }

    /// Stops the worker (the round in progress ends early).
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.kick();
        let worker = lock(&self.worker).take();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
        let watcher = lock(&self.watcher).take();
        drop(watcher);
    }

    fn stopped(&self) -> bool {
        self.stopping.load(Ordering::SeqCst) || self.cancel.load(Ordering::SeqCst)
    }

    /// A receiver of each new frame.
    pub fn frames(&self) -> watch::Receiver<Frame> {
        self.frames.subscribe()
    }

    /// The latest frame.
    pub fn latest(&self) -> Frame {
        self.frames.borrow().clone()
    }

    /// Something changed: stop the round and start again.
    fn kick(&self) {
        self.restart.store(true, Ordering::SeqCst);
        *lock(&self.generation) += 1;
        self.wake.notify_all();
    }

    /// Watches `files` (their folders, for editors that replace a file by
    /// renaming another onto it), besides what is watched already.
    fn watch(&self, files: &[PathBuf]) {
        let mut watched = lock(&self.watched);
        let mut watcher = lock(&self.watcher);
        for file in files {
            let file = normal(file);
            if !watched.insert(file.clone()) {
                continue;
            }
            let folder = file
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
            let folders: BTreeSet<PathBuf> = watched
                .iter()
                .filter(|f| **f != file)
                .filter_map(|f| f.parent().map(Path::to_path_buf))
                .collect();
            if !folders.contains(&folder) {
                if let Some(w) = watcher.as_mut() {
                    let _ = w.watch(&folder, notify::RecursiveMode::NonRecursive);
                }
            }
        }
    }

    /// The scene file's JSON with the controls applied.
    /// The scene file's text, read once, and its JSON with `controls`
    /// applied.
    fn edited(&self, controls: &Controls) -> Result<(String, Value)> {
        let text = std::fs::read_to_string(&self.path).map_err(|source| Error::Io {
            path: self.path.clone(),
            source,
        })?;
        // The file's own errors (syntax, line and column) come from the
        // parser, as `scree check` gives them.
        let mut raw: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(_) => {
                scene::parse(&text, &self.name, &self.dir)?;
                return Err(Error::Usage(format!("{}: not a JSON object", self.name)));
            }
        };
        controls.apply(&mut raw);
        Ok((text, raw))
    }

    /// The scene as the page shows it, pretty-printed.
    pub fn edited_text(&self) -> Result<String> {
        let controls = lock(&self.controls).clone();
        let (_, raw) = self.edited(&controls)?;
        Ok(serde_json::to_string_pretty(&raw).expect("JSON serialises") + "\n")
    }

    /// The scene read with `controls` as overrides (errors name the file's
    /// lines), and its JSON with them applied.
    fn scene_with(&self, controls: &Controls) -> Result<(Scene, Value)> {
        let (text, raw) = self.edited(controls)?;
        let source = Source::parse(&text, &self.name, &self.dir)?;
        let scene = source.scene(&controls.overrides(&source.file.camera.projection))?;
        Ok((scene, raw))
    }

    /// Sets controls from a query; see [`Controls::with`]. The scene must
    /// stay valid with them.
    pub fn set_controls(
        &self,
        query: &HashMap<String, String>,
    ) -> std::result::Result<Controls, String> {
        let current = lock(&self.controls).clone();
        let next = current.with(query)?;
        self.commit(next)
    }

    fn commit(&self, next: Controls) -> std::result::Result<Controls, String> {
        if let Err(e) = self.scene_with(&next) {
            // A scene that was already broken is the file's fault, not the
            // control's: keep the control for when the file is fixed.
            if self.scene_with(&lock(&self.controls)).is_ok() {
                return Err(e.to_string());
            }
        }
        *lock(&self.controls) = next.clone();
        self.kick();
        Ok(next)
    }

    /// Clears the controls.
    pub fn reset_controls(&self) -> Controls {
        *lock(&self.controls) = Controls::default();
        self.kick();
        Controls::default()
    }

    /// Sets `look_at` to the surface seen at pixel (x, y) of the image
    /// shown.
    pub fn look_at_pixel(&self, x: f64, y: f64) -> std::result::Result<Controls, String> {
        let shown = lock(&self.shown).clone().ok_or("no image yet")?;
        let built = lock(&self.built).clone().ok_or("no image yet")?;
        let camera = shown.camera();
        let inside = x >= 0.0 && y >= 0.0 && x < camera.width as f64 && y < camera.height as f64;
        if !inside {
            return Err(format!(
                "({x}, {y}) is outside the {}×{} image",
                camera.width, camera.height
            ));
        }
        let ray = camera
            .ray(x as f32, y as f32)
            .ok_or("no camera ray there (outside the projection)")?;
        let hit = built
            .world
            .intersect(&ray)
            .ok_or("nothing there: the ray meets only sky")?;
        let p = hit.point;
        let mut next = lock(&self.controls).clone();
        let round = |v: f32| (v as f64 * 1000.0).round() / 1000.0;
        next.look_at = Some([round(p.x), round(p.y), round(p.z)]);
        self.commit(next)
    }

    /// Writes the edited scene to `name` beside the scene file: a plain
    /// `.json` name, not a path, that does not exist yet.
    pub fn save_as(&self, name: &str) -> std::result::Result<String, SaveError> {
        let plain = !name.is_empty()
            && name.ends_with(".json")
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._- ".contains(c));
        if !plain {
            return Err(SaveError::Refused(format!(
                "`{name}` is not a plain file name ending in .json (letters, digits, `.`, `_`, `-`)"
            )));
        }
        let text = self
            .edited_text()
            .map_err(|e| SaveError::Refused(e.to_string()))?;
        let target = self.dir.join(name);
        let shown = target.display().to_string();
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            Ok(mut file) => {
                use std::io::Write;
                file.write_all(text.as_bytes())
                    .map_err(|e| SaveError::Refused(format!("{shown}: {e}")))?;
                Ok(shown)
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(SaveError::Exists(shown))
            }
            Err(e) => Err(SaveError::Refused(format!("{shown}: {e}"))),
        }
    }

    /// Publishes a frame: `png` if new (the last one stays otherwise).
    fn publish(&self, png: Option<Vec<u8>>, status: Status) {
        self.frames.send_modify(|frame| {
            if let Some(png) = png {
                frame.png = Some(Arc::new(png));
            }
            let version = frame.status.version + 1;
            frame.status = Status {
                version,
                scene: self.name.clone(),
                ..status
            };
        });
    }

    /// The worker: a generation at a time, until stopped.
    fn work(self: Arc<Session>) {
        let mut seen = 0;
        loop {
            let generation = {
                let mut g = lock(&self.generation);
                while *g == seen && !self.stopped() {
                    g = self
                        .wake
                        .wait_timeout(g, std::time::Duration::from_millis(200))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                }
                *g
            };
            if self.stopped() {
                return;
            }
            seen = generation;
            self.restart.store(false, Ordering::SeqCst);
            self.generation_rounds(generation);
        }
    }

    /// Renders the rounds of one generation, or publishes its error.
    fn generation_rounds(&self, generation: u64) {
        let start = Instant::now();
        let controls = lock(&self.controls).clone();
        let status = |state: &'static str| Status {
            generation,
            state,
            builds: self.builds.load(Ordering::SeqCst),
            ..Status::default()
        };
        let (mut scene, raw) = match self.scene_with(&controls) {
            Ok(s) => s,
            Err(e) => {
                self.publish(
                    None,
                    Status {
                        error: Some(e.to_string()),
                        ..status("error")
                    },
                );
                return;
            }
        };
        let files = named_files(&raw, &self.dir);
        self.watch(&files);
        // The world is kept unless what it is built from changed.
        let key = world_key(&raw, &files);
        let reuse = lock(&self.built).as_ref().filter(|b| b.key == key).cloned();
        let rebuilt = reuse.is_none();
        let (width, height) = preview_size(&scene, self.width);
        scene.image.width = width;
        scene.image.height = height;
        let built = match reuse {
            Some(b) => b,
            None => {
                self.publish(None, status("building"));
                let world = World::build(&scene);
                self.builds.fetch_add(1, Ordering::SeqCst);
                let b = Arc::new(Built { key, world });
                *lock(&self.built) = Some(b.clone());
                b
            }
        };
        let samples = scene.image.samples;
        let mut plan = vec![(width.div_ceil(4), height.div_ceil(4), 1)];
        let mut spp = 1;
        while spp < samples {
            plan.push((width, height, spp));
            spp *= 2;
        }
        plan.push((width, height, samples));
        let rounds = plan.len() as u32;
        for (round, &(w, h, spp)) in plan.iter().enumerate() {
            if self.restart.load(Ordering::SeqCst) || self.stopped() {
                return;
            }
            let mut s = scene.clone();
            (s.image.width, s.image.height, s.image.samples) = (w, h, spp);
            let camera = s.camera();
            let Ok((frame, stats)) = render::render(
                &s,
                &built.world,
                &camera,
                &ProgressBar::hidden(),
                &self.restart,
            ) else {
                return; // a change came: the next generation starts
            };
            let image = frame.to_srgb8(s.image.exposure_scale, s.image.tonemap);
            let mut png = Vec::new();
            if image
                .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
                .is_err()
            {
                return;
            }
            *lock(&self.shown) = Some(s);
            let last = round as u32 + 1 == rounds;
            self.publish(
                Some(png),
                Status {
                    round: round as u32,
                    rounds,
                    samples: spp,
                    width: w,
                    height: h,
                    seconds: start.elapsed().as_secs_f64(),
                    mrays: stats.mrays_per_second(),
                    rebuilt,
                    ..status(if last { "done" } else { "rendering" })
                },
            );
        }
    }
}

/// `p` made absolute, for comparing with the watcher's paths.
fn normal(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The preview's size: `width` (default the scene's, at most 960) and the
/// scene's aspect ratio.
fn preview_size(scene: &Scene, width: Option<u32>) -> (u32, u32) {
    let (sw, sh) = (scene.image.width, scene.image.height);
    let w = width.unwrap_or(sw.min(960)).max(1);
    let h = ((w as f64 * sh as f64 / sw as f64).round() as u32).max(1);
    (w, h)
}

/// The files the scene names (heightmaps, textures): every string of its
/// JSON that is a file beside it.
fn named_files(raw: &Value, dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![raw];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if !s.is_empty() && s.len() < 4096 => {
                let p = dir.join(s);
                if p.is_file() {
                    out.push(p);
                }
            }
            Value::Array(a) => stack.extend(a),
            Value::Object(o) => stack.extend(o.values()),
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What the world is built from: the terrain, rocks, scatter and seed of
/// the scene, its populations and plants, and the files it names as they
/// are on disk.
fn world_key(raw: &Value, files: &[PathBuf]) -> String {
    let parts: Vec<String> = [
        "terrain",
        "rocks",
        "scatter",
        "populations",
        "plants",
        "seed",
    ]
    .iter()
    .map(|k| raw.get(*k).map_or(String::new(), Value::to_string))
    .chain(files.iter().map(|f| {
        let m = std::fs::metadata(f).ok();
        let modified = m
            .as_ref()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!("{}:{}:{modified}", f.display(), m.map_or(0, |m| m.len()))
    }))
    .collect();
    parts.join("\u{1f}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn controls_apply_over_the_file() {
        let mut raw = serde_json::json!({
            "camera": {"position": [0, 1, 0], "look_at": [1, 1, 1],
                       "projection": {"type": "perspective", "fov": 50}},
            "sun": {"elevation": 10}
        });
        let c = Controls::default()
            .with(&query(&[
                ("sun_elevation", "45"),
                ("fov", "70"),
                ("exposure", "-1.5"),
            ]))
            .unwrap();
        c.apply(&mut raw);
        assert_eq!(raw["sun"]["elevation"], 45.0);
        assert_eq!(raw["image"]["exposure"], -1.5);
        assert_eq!(
            raw["camera"]["projection"],
            serde_json::json!({"type": "perspective", "fov": 70.0})
        );
        let fish = c.with(&query(&[("projection", "fisheye")])).unwrap();
        fish.apply(&mut raw);
        assert_eq!(
            raw["camera"]["projection"],
            serde_json::json!({"type": "fisheye", "fov": 70.0})
        );
    }

    #[test]
    fn malformed_controls_change_nothing() {
        let c = Controls::default();
        for bad in [
            ("sun_elevation", "high"),
            ("sun_elevation", "95"),
            ("exposure", "NaN"),
            ("projection", "isometric"),
            ("brightness", "2"),
        ] {
            assert!(c.with(&query(&[bad, ("fov", "60")])).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_preview_keeps_the_scenes_aspect_ratio() {
        let scene = scene::default_scene();
        assert_eq!(preview_size(&scene, None), (960, 540));
        assert_eq!(preview_size(&scene, Some(320)), (320, 180));
    }
}
