//! Changes to a scene file made before its one validation: the command
//! line's flags (`--width`, `--sun-elevation`, `--projection`, ...), the
//! preview's controls and an animation frame's pose are all an
//! [`Overrides`]. A value an override sets is checked like the file's own,
//! and an error in it names the flag, not the file.

use crate::animation::Pose;
use crate::camera::{FisheyeCircle, FisheyeMapping, Projection, ProjectionFile};
use crate::check::Invalid;
use crate::error::{Error, Result};

use super::file::SceneFile;
use super::MAX_IMAGE_SIDE;

/// Values that replace the scene file's; None keeps the file's.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `image.width`; alone, the height follows the file's aspect ratio.
    pub width: Option<u32>,
    /// `image.height`; alone, the width follows the file's aspect ratio.
    pub height: Option<u32>,
    /// `image.samples`.
    pub samples: Option<u32>,
    /// `seed`.
    pub seed: Option<u64>,
    /// `terrain.resolution`, samples a side.
    pub resolution: Option<[u32; 2]>,
    /// `image.exposure`, EV.
    pub exposure: Option<f64>,
    /// `sun.elevation`, degrees.
    pub sun_elevation: Option<f64>,
    /// `sun.azimuth`, degrees.
    pub sun_azimuth: Option<f64>,
    /// Seconds added to `time` (an animation frame's).
    pub time: Option<f64>,
    /// `camera.position`, world units.
    pub position: Option<[f64; 3]>,
    /// `camera.look_at`, world units.
    pub look_at: Option<[f64; 3]>,
    /// `camera.up`.
    pub up: Option<[f64; 3]>,
    /// `camera.projection.type`, the tag as scene files write it. A type
    /// other than the file's starts from that type's defaults.
    pub projection: Option<String>,
    /// `camera.projection.fov`, degrees (every projection but
    /// orthographic).
    pub fov: Option<f64>,
    /// `camera.projection.width` of an orthographic projection.
    pub ortho_width: Option<f64>,
    /// `camera.projection.mapping` of a fisheye.
    pub mapping: Option<FisheyeMapping>,
    /// `camera.projection.circle` of a fisheye.
    pub circle: Option<FisheyeCircle>,
}

impl Overrides {
    /// The camera and sun of an animation's pose.
    pub fn pose(pose: &Pose) -> Overrides {
        Overrides {
            position: pose.position.map(|v| v.to_array()),
            look_at: pose.look_at.map(|v| v.to_array()),
            up: pose.up.map(|v| v.to_array()),
            fov: pose.fov,
            sun_elevation: pose.sun.map(|s| s.0),
            sun_azimuth: pose.sun.map(|s| s.1),
            time: Some(pose.time),
            ..Overrides::default()
        }
    }

    /// These overrides with `top`'s values in place of theirs where `top`
    /// gives one.
    pub fn then(&self, top: &Overrides) -> Overrides {
        fn or<T: Clone>(top: &Option<T>, base: &Option<T>) -> Option<T> {
            top.clone().or_else(|| base.clone())
        }
        Overrides {
            width: or(&top.width, &self.width),
            height: or(&top.height, &self.height),
            samples: or(&top.samples, &self.samples),
            seed: or(&top.seed, &self.seed),
            resolution: or(&top.resolution, &self.resolution),
            exposure: or(&top.exposure, &self.exposure),
            sun_elevation: or(&top.sun_elevation, &self.sun_elevation),
            sun_azimuth: or(&top.sun_azimuth, &self.sun_azimuth),
            time: or(&top.time, &self.time),
            position: or(&top.position, &self.position),
            look_at: or(&top.look_at, &self.look_at),
            up: or(&top.up, &self.up),
            projection: or(&top.projection, &self.projection),
            fov: or(&top.fov, &self.fov),
            ortho_width: or(&top.ortho_width, &self.ortho_width),
            mapping: or(&top.mapping, &self.mapping),
            circle: or(&top.circle, &self.circle),
        }
    }

    /// Writes these values into `file`. A projection parameter that its
    /// projection does not have, or a projection type scene files do not
    /// name, is an error naming the flag.
    pub fn apply(&self, file: &mut SceneFile) -> Result<()> {
        let image = &mut file.image;
        let (w, h) = (image.width, image.height);
        let scaled = |n: u32, num: u32, den: u32| {
            ((n as f64 * num as f64 / den as f64).round() as u32).clamp(1, MAX_IMAGE_SIDE)
        };
        match (self.width, self.height) {
            (Some(w), Some(h)) => (image.width, image.height) = (w, h),
            // The file's own size is checked later; a zero side keeps it.
            (Some(nw), None) if w > 0 && h > 0 => {
                (image.width, image.height) = (nw, scaled(nw, h, w))
            }
            (None, Some(nh)) if w > 0 && h > 0 => {
                (image.width, image.height) = (scaled(nh, w, h), nh)
            }
            (Some(nw), None) => image.width = nw,
            (None, Some(nh)) => image.height = nh,
            (None, None) => {}
        }
        set(&mut image.samples, self.samples);
        set(&mut image.exposure, self.exposure);
        set(&mut file.seed, self.seed);
        if let Some(r) = self.resolution {
            file.terrain.resolution = Some(r);
        }
        set(&mut file.sun.elevation, self.sun_elevation);
        set(&mut file.sun.azimuth, self.sun_azimuth);
        if let Some(t) = self.time {
            file.time += t;
        }
        let camera = &mut file.camera;
        set(&mut camera.position, self.position);
        set(&mut camera.look_at, self.look_at);
        set(&mut camera.up, self.up);
        self.apply_projection(&mut camera.projection)
    }

    /// The projection's type and parameters.
    fn apply_projection(&self, p: &mut ProjectionFile) -> Result<()> {
        if let Some(tag) = &self.projection {
            let named = ProjectionFile::named(tag)
                .map_err(|e| Error::Usage(format!("--projection {tag}: {e}")))?;
            if std::mem::discriminant(&named) != std::mem::discriminant(p) {
                *p = named;
            }
        }
        let unused = |flag: &str, p: &ProjectionFile| {
            Error::Usage(format!(
                "{flag} does not apply to the {} projection",
                p.name()
            ))
        };
        match p {
            ProjectionFile::Orthographic { width } => {
                if self.fov.is_some() {
                    return Err(unused("--fov", p));
                }
                set(width, self.ortho_width);
            }
            ProjectionFile::Perspective { fov }
            | ProjectionFile::Cylindrical { fov }
            | ProjectionFile::Equirectangular { fov } => set(fov, self.fov),
            ProjectionFile::Fisheye {
                fov,
                mapping,
                circle,
            } => {
                set(fov, self.fov);
                set(mapping, self.mapping);
                set(circle, self.circle);
            }
        }
        let fisheye = matches!(p, ProjectionFile::Fisheye { .. });
        let orthographic = matches!(p, ProjectionFile::Orthographic { .. });
        if self.ortho_width.is_some() && !orthographic {
            return Err(unused("--ortho-width", p));
        }
        if self.mapping.is_some() && !fisheye {
            return Err(unused("--mapping", p));
        }
        if self.circle.is_some() && !fisheye {
            return Err(unused("--circle", p));
        }
        Ok(())
    }

    /// `base` (a scene file's projection) with these overrides' projection
    /// and parameters, checked.
    pub fn projection_over(&self, base: &ProjectionFile) -> Result<Projection> {
        let mut p = base.clone();
        self.apply_projection(&mut p)?;
        p.check("camera.projection").map_err(|e| {
            self.explain(&e)
                .unwrap_or_else(|| Error::Usage(format!("{}: {}", e.path, e.message)))
        })
    }

    /// An error in a value these overrides set, named by its flag; None
    /// when the value at `e`'s path came from the file.
    pub fn explain(&self, e: &Invalid) -> Option<Error> {
        // The JSON path each override sets, the flag that sets it, and
        // whether it is set.
        let flags = [
            ("image.width", "--width", self.width.is_some()),
            ("image.height", "--height", self.height.is_some()),
            ("image.samples", "--spp", self.samples.is_some()),
            (
                "terrain.resolution",
                "--resolution",
                self.resolution.is_some(),
            ),
            ("image.exposure", "--exposure", self.exposure.is_some()),
            (
                "sun.elevation",
                "--sun-elevation",
                self.sun_elevation.is_some(),
            ),
            ("sun.azimuth", "--sun-azimuth", self.sun_azimuth.is_some()),
            (
                "camera.position",
                "the camera's position",
                self.position.is_some(),
            ),
            (
                "camera.look_at",
                "the camera's look-at",
                self.look_at.is_some(),
            ),
            ("camera.up", "the camera's up", self.up.is_some()),
            ("camera.projection.fov", "--fov", self.fov.is_some()),
            (
                "camera.projection.width",
                "--ortho-width",
                self.ortho_width.is_some(),
            ),
        ];
        let base = e.path.split('[').next().unwrap_or_default();
        flags
            .iter()
            .find(|&&(path, _, set)| set && path == base)
            .map(|(_, flag, _)| Error::Usage(format!("{flag}: {}", e.message)))
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// Parses a `TYPE[:NUMBER][:MAPPING][:CIRCLE]` item of `scree compare
/// --projections`: NUMBER is the fov in degrees (the view width for
/// orthographic), e.g. `cylindrical:360`, `fisheye:200:equisolid:full_frame`,
/// `orthographic:80`. The type is a scene file's projection tag.
pub fn projection_item(item: &str) -> Result<Overrides> {
    let bad = |what: String| Error::Usage(format!("--projections item `{item}`: {what}"));
    let mut parts = item.split(':');
    let tag = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let named = ProjectionFile::named(&tag).map_err(bad)?;
    let orthographic = matches!(named, ProjectionFile::Orthographic { .. });
    let mut o = Overrides {
        projection: Some(tag),
        ..Overrides::default()
    };
    for part in parts.map(str::trim) {
        if let Ok(v) = part.parse::<f64>() {
            if orthographic {
                o.ortho_width = Some(v);
            } else {
                o.fov = Some(v);
            }
        } else if let Some(m) = named_value::<FisheyeMapping>(part) {
            o.mapping = Some(m);
        } else if let Some(c) = named_value::<FisheyeCircle>(part) {
            o.circle = Some(c);
        } else {
            return Err(bad(format!(
                "`{part}` is not a number, a fisheye mapping or a circle"
            )));
        }
    }
    Ok(o)
}

/// The value of a scene-file enum named `name` (any case, `-` or `_`
/// between words), as the scene file spells it.
pub fn named_value<T: serde::de::DeserializeOwned>(name: &str) -> Option<T> {
    let spelled = name.to_ascii_lowercase().replace('-', "_");
    serde_json::from_value(serde_json::Value::String(spelled)).ok()
}
