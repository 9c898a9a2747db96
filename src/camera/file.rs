//! `camera` in a scene file and its check: where the camera is, what it
//! looks at and how it projects.
//!
//! ```json
//! "camera": { "position": [0, 30, -60], "look_at": [0, 5, 0],
//!             "projection": { "type": "perspective", "fov": 50 } }
//! ```

use glam::Vec3;
use serde::Deserialize;

use super::{FisheyeCircle, FisheyeMapping, Projection};
use crate::check::{above, finite, vec3, Check, Invalid};

/// `camera`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CameraFile {
    /// Eye position, world units. Required.
    pub position: [f64; 3],
    /// Point the camera looks at, world units. Required; differs from `position`.
    pub look_at: [f64; 3],
    /// World direction that is "up" in the image. Default [0, 1, 0].
    #[serde(default = "default_up")]
    pub up: [f64; 3],
    /// The projection; default `{"type": "perspective", "fov": 60}`.
    #[serde(default)]
    pub projection: ProjectionFile,
}

fn default_up() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

/// `camera.projection`: how image points map to ray directions.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ProjectionFile {
    /// Pinhole ("flat"): straight lines stay straight.
    Perspective {
        /// Horizontal field of view, degrees, in (0, 180). Default 60.
        #[serde(default = "default_perspective_fov")]
        fov: f64,
    },
    /// Parallel rays along the view direction.
    Orthographic {
        /// Width of the view, world units, > 0. Default 100.
        #[serde(default = "default_ortho_width")]
        width: f64,
    },
    /// Panorama curved about the vertical axis only.
    Cylindrical {
        /// Horizontal field of view, degrees, in (0, 360]. Default 240.
        #[serde(default = "default_cylindrical_fov")]
        fov: f64,
    },
    /// Curved about both axes (latitude/longitude).
    Equirectangular {
        /// Horizontal field of view, degrees, in (0, 360]. Default 360.
        #[serde(default = "default_equirect_fov")]
        fov: f64,
    },
    /// Fisheye lens.
    Fisheye {
        /// Field of view across the image circle, degrees: (0, 360], at
        /// most 180 for the `orthographic` mapping. Default 180.
        #[serde(default = "default_fisheye_fov")]
        fov: f64,
        /// Radial mapping from off-axis angle to image radius.
        #[serde(default)]
        mapping: FisheyeMapping,
        /// `circular` (the circle fits the image; outside is background)
        /// or `full_frame` (the circle reaches the image corners).
        #[serde(default)]
        circle: FisheyeCircle,
    },
}

fn default_perspective_fov() -> f64 {
    60.0
}

fn default_ortho_width() -> f64 {
    100.0
}

fn default_cylindrical_fov() -> f64 {
    240.0
}

fn default_equirect_fov() -> f64 {
    360.0
}

fn default_fisheye_fov() -> f64 {
    180.0
}

impl ProjectionFile {
    /// The projection scene files tag `tag`, with its defaults; serde's
    /// sentence (listing the tags) when there is none.
    pub fn named(tag: &str) -> Result<ProjectionFile, String> {
        serde_json::from_value(serde_json::json!({ "type": tag })).map_err(|e| e.to_string())
    }

    /// Every projection, with its defaults, in the order the type lists
    /// them: read from the type's own schema, so that a new variant is
    /// listed (by the CLI's help, the compare grid and the preview's
    /// menu) with nothing else to change.
    pub fn all() -> Vec<ProjectionFile> {
        let schema = serde_json::to_value(schemars::schema_for!(ProjectionFile))
            .expect("a schema serialises");
        schema["oneOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|variant| variant["properties"]["type"]["const"].as_str())
            .filter_map(|tag| ProjectionFile::named(tag).ok())
            .collect()
    }

    /// The field of view, degrees, of a projection that has one.
    pub fn fov(&self) -> Option<f64> {
        match *self {
            ProjectionFile::Perspective { fov }
            | ProjectionFile::Cylindrical { fov }
            | ProjectionFile::Equirectangular { fov }
            | ProjectionFile::Fisheye { fov, .. } => Some(fov),
            ProjectionFile::Orthographic { .. } => None,
        }
    }

    /// The tag scene files write for this projection.
    pub fn name(&self) -> &'static str {
        let shape = match *self {
            ProjectionFile::Perspective { .. } => Projection::Perspective { fov: 0.0 },
            ProjectionFile::Orthographic { .. } => Projection::Orthographic { width: 0.0 },
            ProjectionFile::Cylindrical { .. } => Projection::Cylindrical { fov: 0.0 },
            ProjectionFile::Equirectangular { .. } => Projection::Equirectangular { fov: 0.0 },
            ProjectionFile::Fisheye {
                mapping, circle, ..
            } => Projection::Fisheye {
                fov: 0.0,
                mapping,
                circle,
            },
        };
        shape.name()
    }

    /// A checked projection back in scene-file form (degrees).
    pub fn of(p: &Projection) -> ProjectionFile {
        let deg = |a: f32| a.to_degrees() as f64;
        match *p {
            Projection::Perspective { fov } => ProjectionFile::Perspective { fov: deg(fov) },
            Projection::Orthographic { width } => ProjectionFile::Orthographic {
                width: width as f64,
            },
            Projection::Cylindrical { fov } => ProjectionFile::Cylindrical { fov: deg(fov) },
            Projection::Equirectangular { fov } => {
                ProjectionFile::Equirectangular { fov: deg(fov) }
            }
            Projection::Fisheye {
                fov,
                mapping,
                circle,
            } => ProjectionFile::Fisheye {
                fov: deg(fov),
                mapping,
                circle,
            },
        }
    }
}

impl Default for ProjectionFile {
    fn default() -> Self {
        ProjectionFile::Perspective {
            fov: default_perspective_fov(),
        }
    }
}

/// Checked camera placement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraSettings {
    /// Eye, world units.
    pub position: Vec3,
    /// Target, world units (differs from `position`).
    pub look_at: Vec3,
    /// Up hint (not parallel to the view direction).
    pub up: Vec3,
    /// Projection, radians.
    pub projection: Projection,
}

impl TryFrom<&CameraFile> for CameraSettings {
    type Error = Invalid;

    fn try_from(f: &CameraFile) -> Check<CameraSettings> {
        let position = vec3("camera.position", f.position)?;
        let look_at = vec3("camera.look_at", f.look_at)?;
        let up = vec3("camera.up", f.up)?;
        let view = look_at - position;
        if view.length() < 1e-6 {
            return Err(Invalid::new(
                "camera.look_at",
                "must differ from camera.position",
            ));
        }
        if up.length() < 1e-6 || up.normalize().cross(view.normalize()).length() < 1e-4 {
            return Err(Invalid::new(
                "camera.up",
                "must be a non-zero direction that is not parallel to the view direction (look_at − position)",
            ));
        }
        Ok(CameraSettings {
            position,
            look_at,
            up,
            projection: f.projection.check("camera.projection")?,
        })
    }
}

impl ProjectionFile {
    /// The projection, its parameters checked against their limits and in
    /// radians; errors name `path` (the projection's place in the file).
    pub fn check(&self, path: &str) -> Check<Projection> {
        let p = self;
        let fov_path = format!("{path}.fov");
        let rad = |v: f64| v.to_radians() as f32;
        Ok(match *p {
            ProjectionFile::Perspective { fov } => {
                finite(&fov_path, fov)?;
                if fov <= 0.0 || fov >= 180.0 {
                    return Err(Invalid::new(
                        fov_path,
                        format!(
                            "must be greater than 0 and less than 180 for perspective, got {fov}"
                        ),
                    ));
                }
                Projection::Perspective { fov: rad(fov) }
            }
            ProjectionFile::Orthographic { width } => Projection::Orthographic {
                width: above(&format!("{path}.width"), width, 0.0, 1e7)? as f32,
            },
            ProjectionFile::Cylindrical { fov } => Projection::Cylindrical {
                fov: rad(above(&fov_path, fov, 0.0, 360.0)?),
            },
            ProjectionFile::Equirectangular { fov } => Projection::Equirectangular {
                fov: rad(above(&fov_path, fov, 0.0, 360.0)?),
            },
            ProjectionFile::Fisheye {
                fov,
                mapping,
                circle,
            } => {
                let max = match mapping {
                    FisheyeMapping::Orthographic => 180.0,
                    _ => 360.0,
                };
                above(&fov_path, fov, 0.0, max)?;
                if mapping == FisheyeMapping::Stereographic && fov >= 360.0 {
                    return Err(Invalid::new(
                        fov_path,
                        format!("must be less than 360 for the stereographic mapping, got {fov}"),
                    ));
                }
                Projection::Fisheye {
                    fov: rad(fov),
                    mapping,
                    circle,
                }
            }
        })
    }
}
