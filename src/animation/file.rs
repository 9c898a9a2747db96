//! `animation` in a scene file and its check: frames, camera and sun keys
//! in order and in range, or a day's path for the sun.
//!
//! ```json
//! "animation": { "frames": 120, "camera": [
//!     { "frame": 0, "position": [-40, 20, -60], "look_at": [0, 5, 0] },
//!     { "frame": 119, "position": [40, 15, -50], "look_at": [0, 5, 0] } ] }
//! ```

use serde::Deserialize;

use super::Animation;
use crate::camera::ProjectionFile;
use crate::check::{above, count, vec3, within, Check, Invalid};

/// `animation`: a sequence of frames. The terrain and rocks are built
/// once; the camera and the sun move. `scree render --frames A..B` renders
/// them, `--frame K` one of them; a scene without `animation` is a still.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnimationFile {
    /// Frames in the sequence, numbered from 0. Required.
    pub frames: u32,
    /// Frames per second, for previews. Default 24.
    #[serde(default = "default_fps")]
    pub fps: f64,
    /// Camera keyframes, in increasing `frame` order; the camera's
    /// position and look-at follow centripetal Catmull-Rom splines through
    /// them, its fov eases between keys. None: the scene's camera.
    #[serde(default)]
    pub camera: Vec<CameraKeyFile>,
    /// Keep the camera at least `clearance` above the terrain under it
    /// (a rover's follow camera: it never dips underground).
    #[serde(default)]
    pub follow: Option<FollowFile>,
    /// Sun keyframes: elevation and azimuth ease between keys. Give these
    /// or `time_of_day`, not both.
    #[serde(default)]
    pub sun: Vec<SunKeyFile>,
    /// The sun's path over a day, from the first frame's hour to the last
    /// one's.
    #[serde(default)]
    pub time_of_day: Option<TimeOfDayFile>,
}

fn default_fps() -> f64 {
    24.0
}

/// A camera keyframe.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CameraKeyFile {
    /// The frame of the key (fractions allowed).
    pub frame: f64,
    /// Eye position, world units.
    pub position: [f64; 3],
    /// Point looked at, world units (differs from `position`).
    pub look_at: [f64; 3],
    /// Field of view, degrees, for projections that have one. Default:
    /// the scene's.
    #[serde(default)]
    pub fov: Option<f64>,
    /// The image's up direction (a roll), in every key or none. Default:
    /// the scene's `camera.up`.
    #[serde(default)]
    pub up: Option<[f64; 3]>,
}

/// `animation.follow`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FollowFile {
    /// Least height of the eye above the terrain, world units. Default 2.
    pub clearance: f64,
}

impl Default for FollowFile {
    fn default() -> Self {
        FollowFile { clearance: 2.0 }
    }
}

/// A sun keyframe.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SunKeyFile {
    /// The frame of the key.
    pub frame: f64,
    /// Degrees above the horizon.
    pub elevation: f64,
    /// Degrees clockwise from north.
    pub azimuth: f64,
}

/// `animation.time_of_day`: the sun's place from the date, the latitude
/// and the local solar time (12 is solar noon).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeOfDayFile {
    /// Degrees, north positive.
    pub latitude: f64,
    /// Day of the year, 1 (1 January) to 366.
    pub day: u32,
    /// Solar time at the first frame, hours.
    pub start_hour: f64,
    /// Solar time at the last frame, hours.
    pub end_hour: f64,
}

/// The sun and the sky together: the physical skies also colour the sun.
/// Checks `animation`: frames, keys in order within the sequence, every
/// key's values in the ranges of the values they replace (`camera`'s
/// projection for a fov).
pub fn validate_animation(f: &AnimationFile, projection: &ProjectionFile) -> Check<Animation> {
    use crate::animation::{CameraTrack, Key, SunPath};
    use glam::DVec3;
    let p = "animation";
    let frames = count(&format!("{p}.frames"), f.frames, 1, 1_000_000)?;
    let fps = above(&format!("{p}.fps"), f.fps, 0.0, 1000.0)?;
    let last = (frames - 1) as f64;
    // Keys' frames: finite, within the sequence, strictly increasing.
    let frames_of = |what: &str, keys: &[f64]| -> Check<()> {
        for (k, &frame) in keys.iter().enumerate() {
            let path = format!("{p}.{what}[{k}].frame");
            within(&path, frame, 0.0, last)?;
            if k > 0 && frame <= keys[k - 1] {
                return Err(Invalid::new(
                    path,
                    format!(
                        "keys must be in increasing frame order, got {frame} after {}",
                        keys[k - 1]
                    ),
                ));
            }
        }
        Ok(())
    };
    let camera_track = if f.camera.is_empty() {
        None
    } else {
        frames_of(
            "camera",
            &f.camera.iter().map(|k| k.frame).collect::<Vec<_>>(),
        )?;
        let mut track = CameraTrack {
            position: Vec::new(),
            look_at: Vec::new(),
            fov: Vec::new(),
            up: Vec::new(),
        };
        for (k, key) in f.camera.iter().enumerate() {
            let path = format!("{p}.camera[{k}]");
            let position = vec3(&format!("{path}.position"), key.position)?;
            let look_at = vec3(&format!("{path}.look_at"), key.look_at)?;
            if (look_at - position).length() < 1e-6 {
                return Err(Invalid::new(
                    format!("{path}.look_at"),
                    "must differ from the key's position",
                ));
            }
            let d = |v: [f64; 3]| DVec3::from_array(v);
            if let Some(up) = key.up {
                let v = vec3(&format!("{path}.up"), up)?;
                if v.length() < 1e-6 {
                    return Err(Invalid::new(
                        format!("{path}.up"),
                        "must be a non-zero direction",
                    ));
                }
                track.up.push(Key {
                    frame: key.frame,
                    value: d(up).normalize(),
                });
            }
            track.position.push(Key {
                frame: key.frame,
                value: d(key.position),
            });
            track.look_at.push(Key {
                frame: key.frame,
                value: d(key.look_at),
            });
            if let Some(fov) = key.fov {
                // As the scene's projection would take it.
                let mut file = projection.clone();
                match &mut file {
                    ProjectionFile::Orthographic { .. } => {
                        return Err(Invalid::new(
                            format!("{path}.fov"),
                            "the orthographic projection has no fov",
                        ))
                    }
                    ProjectionFile::Perspective { fov: v }
                    | ProjectionFile::Cylindrical { fov: v }
                    | ProjectionFile::Equirectangular { fov: v }
                    | ProjectionFile::Fisheye { fov: v, .. } => *v = fov,
                }
                file.check(&path)?;
                track.fov.push(Key {
                    frame: key.frame,
                    value: fov,
                });
            }
        }
        if !track.fov.is_empty() && track.fov.len() != f.camera.len() {
            return Err(Invalid::new(
                format!("{p}.camera"),
                "give `fov` in every camera key or in none",
            ));
        }
        if !track.up.is_empty() && track.up.len() != f.camera.len() {
            return Err(Invalid::new(
                format!("{p}.camera"),
                "give `up` in every camera key or in none",
            ));
        }
        Some(track)
    };
    let sun = match (&f.sun[..], &f.time_of_day) {
        ([], None) => None,
        ([_, ..], Some(_)) => {
            return Err(Invalid::new(
                format!("{p}.time_of_day"),
                "give sun keys or a time of day, not both",
            ))
        }
        (keys @ [_, ..], None) => {
            frames_of("sun", &keys.iter().map(|k| k.frame).collect::<Vec<_>>())?;
            let mut elevation = Vec::new();
            let mut azimuth = Vec::new();
            for (k, key) in keys.iter().enumerate() {
                let path = format!("{p}.sun[{k}]");
                let e = within(&format!("{path}.elevation"), key.elevation, -90.0, 90.0)?;
                let a = within(&format!("{path}.azimuth"), key.azimuth, -3600.0, 3600.0)?;
                elevation.push(Key {
                    frame: key.frame,
                    value: e,
                });
                azimuth.push(Key {
                    frame: key.frame,
                    value: a,
                });
            }
            Some(SunPath::Keys { elevation, azimuth })
        }
        ([], Some(t)) => {
            let path = format!("{p}.time_of_day");
            Some(SunPath::Day {
                latitude: within(&format!("{path}.latitude"), t.latitude, -90.0, 90.0)?,
                day: count(&format!("{path}.day"), t.day, 1, 366)? as f64,
                start_hour: within(&format!("{path}.start_hour"), t.start_hour, 0.0, 24.0)?,
                end_hour: within(&format!("{path}.end_hour"), t.end_hour, 0.0, 24.0)?,
            })
        }
    };
    let clearance = f
        .follow
        .as_ref()
        .map(|c| within(&format!("{p}.follow.clearance"), c.clearance, 0.0, 1e6))
        .transpose()?;
    if clearance.is_some() && camera_track.is_none() {
        return Err(Invalid::new(
            format!("{p}.follow"),
            "follows a camera path: give `animation.camera` keys",
        ));
    }
    Ok(Animation {
        frames,
        fps,
        camera: camera_track,
        sun,
        clearance,
    })
}
