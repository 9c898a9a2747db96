//! From scene text to the raw [`SceneFile`]: serde's errors turned into one
//! sentence with the JSON path, the line and a "did you mean" for typos.

use std::path::Path;

use super::file::SceneFile;
use super::locate::{locate, locate_string, parse_path};
use crate::error::Error;

/// Parses JSON into the raw structs, turning serde's errors into one clear
/// sentence with the JSON path, the line and a "did you mean" for typos.
pub fn deserialize(src: &str, file: &str) -> Result<SceneFile, Error> {
    let de = &mut serde_json::Deserializer::from_str(src);
    let result: Result<SceneFile, _> = serde_path_to_error::deserialize(&mut *de);
    let err = match result.map(|raw| (raw, de.end())) {
        Ok((raw, Ok(()))) => {
            return Ok(raw);
        }
        Ok((_, Err(trailing))) => {
            // Text after the scene's object: `{...} garbage`.
            return Err(Error::Scene {
                file: file.to_string(),
                path: String::new(),
                line: Some((trailing.line(), trailing.column())),
                message: "malformed JSON: text after the end of the scene object".into(),
            });
        }
        Err(e) => e,
    };
    let mut path = err.path().to_string();
    if path == "." {
        path.clear();
    }
    let inner = err.inner();
    // Inside a tagged object (`{"type": ..., ...}`) serde knows only the
    // object's path: find the field that holds the fault.
    let mut narrowed = false;
    if inner.classify() == serde_json::error::Category::Data {
        let deeper = narrow_path(src, &path, &inner.to_string());
        narrowed = deeper != path;
        path = deeper;
    }
    let full = inner.to_string();
    let message = full
        .rfind(" at line ")
        .map_or(full.as_str(), |i| &full[..i])
        .to_string();
    let mut line = (inner.line() > 0).then(|| (inner.line(), inner.column()));
    if narrowed {
        line = locate(src, &parse_path(&path)).or(line);
    }
    let message = match inner.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            format!("malformed JSON: {message}")
        }
        serde_json::error::Category::Io => message,
        serde_json::error::Category::Data => {
            if let Some((field, hint)) = unknown_name_hint(&message) {
                if field.is_none() {
                    // An unknown variant: point at its string in the file.
                    let name = message.split('`').nth(1).unwrap_or_default();
                    line = locate_string(src, &parse_path(&path), name).or(line);
                }
                if let Some(field) = field {
                    // Point at the unknown field itself (serde_path_to_error
                    // already does, except inside tagged enums).
                    path = if path.is_empty() {
                        field
                    } else if path.ends_with(&field) {
                        path
                    } else {
                        format!("{path}.{field}")
                    };
                    line = locate(src, &parse_path(&path)).or(line);
                }
                format!("{message}{hint}")
            } else {
                message
            }
        }
    };
    Err(Error::Scene {
        file: file.to_string(),
        path,
        line,
        message,
    })
}

/// The serde message of `value` read as a scene (`None` when it reads).
fn data_error(value: &serde_json::Value) -> Option<String> {
    serde_path_to_error::deserialize::<_, SceneFile>(value)
        .err()
        .map(|e| e.inner().to_string())
}

/// The path of the value inside the object at `path` that makes serde fail
/// with `message`: a field of a tagged object whose own value alone (with
/// the tag) fails the same way, and without which the object reads
/// otherwise; followed down through nested objects. `path` as it is where
/// no such field is found.
fn narrow_path(src: &str, path: &str, message: &str) -> String {
    let Ok(root) = serde_json::from_str::<serde_json::Value>(src) else {
        return path.to_string();
    };
    let message = message
        .rfind(" at line ")
        .map_or(message, |i| &message[..i]);
    let same = |v: &serde_json::Value| {
        data_error(v).is_some_and(|m| m.rfind(" at line ").map_or(&m[..], |i| &m[..i]) == message)
    };
    let mut segments = parse_path(path);
    while let Some(object) = value_at(&root, &segments)
        .and_then(|v| v.as_object())
        .cloned()
    {
        let tag = object.get("type").cloned();
        let culprit = object.keys().filter(|k| *k != "type").find(|k| {
            let mut alone = serde_json::Map::new();
            if let Some(t) = &tag {
                alone.insert("type".into(), t.clone());
            }
            alone.insert((*k).clone(), object[k.as_str()].clone());
            let mut without = object.clone();
            without.remove(k.as_str());
            let with_only = replaced(&root, &segments, alone.into());
            let with_rest = replaced(&root, &segments, without.into());
            same(&with_only) && !same(&with_rest)
        });
        match culprit {
            Some(k) => segments.push(super::locate::Segment::Key(k.clone())),
            None => break,
        }
    }
    segments
        .iter()
        .map(|s| match s {
            super::locate::Segment::Key(k) => format!(".{k}"),
            super::locate::Segment::Index(i) => format!("[{i}]"),
        })
        .collect::<String>()
        .trim_start_matches('.')
        .to_string()
}

/// The value at `path` in `root`.
fn value_at<'a>(
    root: &'a serde_json::Value,
    path: &[super::locate::Segment],
) -> Option<&'a serde_json::Value> {
    path.iter().try_fold(root, |v, s| match s {
        super::locate::Segment::Key(k) => v.get(k.as_str()),
        super::locate::Segment::Index(i) => v.get(*i),
    })
}

/// `root` with the value at `path` replaced by `value`.
fn replaced(
    root: &serde_json::Value,
    path: &[super::locate::Segment],
    value: serde_json::Value,
) -> serde_json::Value {
    let mut copy = root.clone();
    let slot = path.iter().try_fold(&mut copy, |v, s| match s {
        super::locate::Segment::Key(k) => v.get_mut(k.as_str()),
        super::locate::Segment::Index(i) => v.get_mut(*i),
    });
    if let Some(slot) = slot {
        *slot = value;
    }
    copy
}

/// For a whole number outside its type's range (`-5` where a count is
/// expected), the range the field accepts, in the validator's words: the
/// scene is read again with the value at each end of the type's range,
/// and where the validator refuses one of them, its message (with the
/// value given) replaces serde's. `err` as it is otherwise.
pub fn explain_range(src: &str, dir: &Path, err: Error) -> Error {
    let Error::Scene {
        file,
        path,
        line,
        message,
    } = err
    else {
        return err;
    };
    let out_of_type = message.starts_with("invalid value: integer");
    let bounds: &[u64] = match message.rsplit("expected ").next().filter(|_| out_of_type) {
        Some("u8") => &[u8::MAX as u64, 0],
        Some("u16") => &[u16::MAX as u64, 0],
        Some("u32") => &[u32::MAX as u64, 0],
        Some("u64") | Some("usize") => &[u64::MAX, 0],
        _ => &[],
    };
    let keep = |message: String| Error::Scene {
        file: file.clone(),
        path: path.clone(),
        line,
        message,
    };
    if bounds.is_empty() || path.is_empty() {
        return keep(message);
    }
    let Ok(root) = serde_json::from_str::<serde_json::Value>(src) else {
        return keep(message);
    };
    let segments = parse_path(&path);
    let Some(given) = value_at(&root, &segments).map(|v| v.to_string()) else {
        return keep(message);
    };
    for &bound in bounds {
        let probe = replaced(&root, &segments, bound.into());
        let Ok(raw) = serde_json::from_value::<SceneFile>(probe) else {
            continue;
        };
        if let Err(refused) = super::validate::validate(&raw, &crate::check::Files::new(dir)) {
            if refused.path == path {
                let rule = refused
                    .message
                    .rfind(", got ")
                    .map_or(&refused.message[..], |i| &refused.message[..i]);
                return keep(format!("{rule}, got {given}"));
            }
        }
    }
    // The probe could not be read (another fault elsewhere): the range
    // the schema gives the field.
    let pattern = |p: &str| {
        let mut out = String::new();
        let mut skip = None;
        for c in p.chars() {
            match (skip, c) {
                (None, '{') => skip = Some('}'),
                (None, '[') => {
                    out.push_str("[]");
                    skip = Some(']');
                }
                (Some(end), c) if c == end => skip = None,
                (Some(_), _) => {}
                (None, c) => out.push(c),
            }
        }
        out
    };
    let wanted = pattern(&path);
    if let Some(&(_, lo, hi, open)) = super::schema::RANGES
        .iter()
        .find(|(p, ..)| pattern(p) == wanted)
    {
        let rule = if open {
            format!("must be greater than {lo} and at most {hi}")
        } else {
            format!("must be between {lo} and {hi}")
        };
        return keep(format!("{rule}, got {given}"));
    }
    let (lo, hi) = (bounds[1], bounds[0]);
    keep(format!(
        "must be a whole number between {lo} and {hi}, got {given}"
    ))
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown
/// variant `x`, ..."): the unknown field's name (None for a variant, which
/// is a value rather than a key) and a "did you mean" suffix when one of the
/// expected names is close.
fn unknown_name_hint(message: &str) -> Option<(Option<String>, String)> {
    let is_field = message.starts_with("unknown field `");
    if !is_field && !message.starts_with("unknown variant `") {
        return None;
    }
    let name = message.split('`').nth(1)?.to_string();
    let expected: Vec<&str> = message
        .split_once("expected")
        .map(|(_, rest)| rest.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    let closest = expected
        .iter()
        .map(|e| (strsim::levenshtein(&name, e), *e))
        .filter(|(d, e)| *d <= 2.max(e.len() / 3))
        .min();
    let hint = closest.map_or(String::new(), |(_, e)| format!(" (did you mean `{e}`?)"));
    Some((is_field.then_some(name), hint))
}
