//! Choosing a projection from the command line: `--projection NAME` with
//! `--fov`, `--mapping`, `--circle`, `--ortho-width`, and the
//! `TYPE[:NUMBER][:MAPPING][:CIRCLE]` items of `scree compare --projections`.
//! Every choice goes through the same validation as a scene file's.

use super::file::ProjectionFile;
use super::validate::validate_projection;
use crate::camera::{FisheyeCircle, FisheyeMapping, Projection};
use crate::error::{Error, Result};

/// A projection type, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectionKind {
    /// Pinhole camera.
    Perspective,
    /// Parallel rays.
    Orthographic,
    /// Panorama curved about the vertical axis.
    Cylindrical,
    /// Latitude/longitude.
    Equirectangular,
    /// Fisheye lens.
    Fisheye,
}

impl ProjectionKind {
    /// The type named `name` as in scene files (any case).
    pub fn named(name: &str) -> Option<ProjectionKind> {
        let kind = match name.to_ascii_lowercase().as_str() {
            "perspective" => ProjectionKind::Perspective,
            "orthographic" => ProjectionKind::Orthographic,
            "cylindrical" => ProjectionKind::Cylindrical,
            "equirectangular" => ProjectionKind::Equirectangular,
            "fisheye" => ProjectionKind::Fisheye,
            _ => return None,
        };
        Some(kind)
    }

    /// The type with its scene-file defaults.
    pub fn defaults(self) -> ProjectionFile {
        let json = match self {
            ProjectionKind::Perspective => r#"{"type": "perspective"}"#,
            ProjectionKind::Orthographic => r#"{"type": "orthographic"}"#,
            ProjectionKind::Cylindrical => r#"{"type": "cylindrical"}"#,
            ProjectionKind::Equirectangular => r#"{"type": "equirectangular"}"#,
            ProjectionKind::Fisheye => r#"{"type": "fisheye"}"#,
        };
        serde_json::from_str(json).expect("every projection type has defaults")
    }

    fn of(p: &ProjectionFile) -> ProjectionKind {
        match p {
            ProjectionFile::Perspective { .. } => ProjectionKind::Perspective,
            ProjectionFile::Orthographic { .. } => ProjectionKind::Orthographic,
            ProjectionFile::Cylindrical { .. } => ProjectionKind::Cylindrical,
            ProjectionFile::Equirectangular { .. } => ProjectionKind::Equirectangular,
            ProjectionFile::Fisheye { .. } => ProjectionKind::Fisheye,
        }
    }
}

/// A checked projection back in scene-file form (degrees).
pub fn to_file(p: &Projection) -> ProjectionFile {
    ProjectionFile::of(p)
}

/// Parameters given on the command line; None keeps the base value.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides {
    /// Field of view, degrees (all but orthographic).
    pub fov: Option<f64>,
    /// Orthographic view width, world units.
    pub width: Option<f64>,
    /// Fisheye mapping.
    pub mapping: Option<FisheyeMapping>,
    /// Fisheye circle.
    pub circle: Option<FisheyeCircle>,
}

/// The projection `kind` (or the current one's type when None) with the
/// current projection's parameters where the type matches, the type's
/// defaults otherwise, and `o` on top; checked like a scene file's.
pub fn choose(
    current: &Projection,
    kind: Option<ProjectionKind>,
    o: Overrides,
) -> Result<Projection> {
    let current_file = to_file(current);
    let mut p = match kind {
        Some(k) if k != ProjectionKind::of(&current_file) => k.defaults(),
        _ => current_file,
    };
    let kind = ProjectionKind::of(&p);
    let unused = |flag: &str| {
        Error::Usage(format!("{flag} does not apply to the {kind:?} projection").to_lowercase())
    };
    match &mut p {
        ProjectionFile::Orthographic { width } => {
            if o.fov.is_some() {
                return Err(unused("--fov"));
            }
            *width = o.width.unwrap_or(*width);
        }
        ProjectionFile::Perspective { fov }
        | ProjectionFile::Cylindrical { fov }
        | ProjectionFile::Equirectangular { fov } => {
            *fov = o.fov.unwrap_or(*fov);
        }
        ProjectionFile::Fisheye {
            fov,
            mapping,
            circle,
        } => {
            *fov = o.fov.unwrap_or(*fov);
            *mapping = o.mapping.unwrap_or(*mapping);
            *circle = o.circle.unwrap_or(*circle);
        }
    }
    if o.width.is_some() && kind != ProjectionKind::Orthographic {
        return Err(unused("--ortho-width"));
    }
    if (o.mapping.is_some() || o.circle.is_some()) && kind != ProjectionKind::Fisheye {
        return Err(unused(if o.mapping.is_some() {
            "--mapping"
        } else {
            "--circle"
        }));
    }
    validate_projection("", &p).map_err(|e| {
        let flag = match e.path.as_str() {
            ".width" => "--ortho-width",
            _ => "--fov",
        };
        Error::Usage(format!("{flag}: {}", e.message))
    })
}

/// The value of a scene-file enum named `name` (any case, `-` or `_`
/// between words), as the scene file spells it.
fn named<T: serde::de::DeserializeOwned>(name: &str) -> Option<T> {
    let spelled = name.to_ascii_lowercase().replace('-', "_");
    serde_json::from_value(serde_json::Value::String(spelled)).ok()
}

/// Parses a `TYPE[:NUMBER][:MAPPING][:CIRCLE]` item: NUMBER is the fov in
/// degrees (the view width for orthographic), e.g. `cylindrical:360`,
/// `fisheye:200:equisolid:full_frame`, `orthographic:80`.
pub fn parse_item(current: &Projection, item: &str) -> Result<Projection> {
    let bad = |what: String| Error::Usage(format!("--projections item `{item}`: {what}"));
    let mut parts = item.split(':');
    let name = parts.next().unwrap_or_default().trim();
    let kind = ProjectionKind::named(name).ok_or_else(|| {
        bad("unknown projection; use perspective, orthographic, cylindrical, equirectangular or fisheye".into())
    })?;
    let mut o = Overrides::default();
    for part in parts.map(str::trim) {
        if let Ok(v) = part.parse::<f64>() {
            if kind == ProjectionKind::Orthographic {
                o.width = Some(v);
            } else {
                o.fov = Some(v);
            }
        } else if let Some(m) = named::<FisheyeMapping>(part) {
            o.mapping = Some(m);
        } else if let Some(c) = named::<FisheyeCircle>(part) {
            o.circle = Some(c);
        } else {
            return Err(bad(format!(
                "`{part}` is not a number, a fisheye mapping or a circle"
            )));
        }
    }
    choose(current, Some(kind), o).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERSP: Projection = Projection::Perspective { fov: 1.0 };

    #[test]
    fn override_keeps_current_parameters_of_the_same_type() {
        let p = choose(
            &PERSP,
            None,
            Overrides {
                fov: Some(90.0),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            p,
            Projection::Perspective {
                fov: 90f32.to_radians()
            }
        );
        let same = choose(
            &PERSP,
            Some(ProjectionKind::Perspective),
            Overrides::default(),
        )
        .unwrap();
        assert!(matches!(same, Projection::Perspective { fov } if (fov - 1.0).abs() < 1e-6));
    }

    #[test]
    fn new_type_starts_from_its_defaults() {
        let p = choose(&PERSP, Some(ProjectionKind::Fisheye), Overrides::default()).unwrap();
        assert_eq!(
            p,
            Projection::Fisheye {
                fov: 180f32.to_radians(),
                mapping: FisheyeMapping::Equidistant,
                circle: FisheyeCircle::Circular
            }
        );
    }

    #[test]
    fn bad_overrides_are_refused_with_the_flag() {
        let o = |fov| Overrides {
            fov: Some(fov),
            ..Default::default()
        };
        let e = choose(&PERSP, Some(ProjectionKind::Perspective), o(180.0)).unwrap_err();
        assert!(e.to_string().starts_with("--fov: "), "{e}");
        let e = choose(
            &PERSP,
            Some(ProjectionKind::Fisheye),
            Overrides {
                fov: Some(200.0),
                mapping: Some(FisheyeMapping::Orthographic),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("180"), "{e}");
        let e = choose(
            &PERSP,
            Some(ProjectionKind::Orthographic),
            Overrides {
                width: Some(0.0),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("--ortho-width: "), "{e}");
        let e = choose(
            &PERSP,
            None,
            Overrides {
                mapping: Some(FisheyeMapping::Equisolid),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("--mapping does not apply"), "{e}");
    }

    #[test]
    fn items_parse() {
        assert_eq!(
            parse_item(&PERSP, "fisheye:200:equisolid:full_frame").unwrap(),
            Projection::Fisheye {
                fov: 200f32.to_radians(),
                mapping: FisheyeMapping::Equisolid,
                circle: FisheyeCircle::FullFrame
            }
        );
        assert_eq!(
            parse_item(&PERSP, "orthographic:80").unwrap(),
            Projection::Orthographic { width: 80.0 }
        );
        assert!(parse_item(&PERSP, "fishey").is_err());
        assert!(parse_item(&PERSP, "cylindrical:400").is_err());
        assert!(parse_item(&PERSP, "fisheye:wide").is_err());
    }
}
