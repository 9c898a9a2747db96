//! Finds where a JSON path (`rocks[2].radius`) sits in the source text, so
//! that validation errors found after parsing can still name a line.

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Splits `a.b[2].c` into segments.
pub fn parse_path(path: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(b) = rest.find('[') {
            if b > 0 {
                out.push(Segment::Key(rest[..b].to_string()));
            }
            rest = &rest[b..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let end = stripped.find(']').unwrap_or(stripped.len());
                if let Ok(i) = stripped[..end].parse() {
                    out.push(Segment::Index(i));
                }
                rest = stripped.get(end + 1..).unwrap_or("");
            }
        } else {
            out.push(Segment::Key(rest.to_string()));
        }
    }
    out
}

/// 1-based (line, column) of the value at `path` in `src`, or of the deepest
/// prefix of it that exists (a defaulted field points at its parent).
pub fn locate(src: &str, path: &[Segment]) -> Option<(usize, usize)> {
    locate_offset(src, path).map(|o| line_col(src, o))
}

/// 1-based (line, column) of the first string literal `"value"` inside the
/// value at `path` (for an unknown enum variant inside a tagged object).
pub fn locate_string(src: &str, path: &[Segment], value: &str) -> Option<(usize, usize)> {
    let start = locate_offset(src, path)?;
    let needle = format!("\"{value}\"");
    let end = skip_value(src.as_bytes(), start);
    let found = src.get(start..end)?.find(&needle)?;
    Some(line_col(src, start + found))
}

/// Byte offset of the value at `path` (or its deepest existing prefix).
fn locate_offset(src: &str, path: &[Segment]) -> Option<usize> {
    let bytes = src.as_bytes();
    let mut pos = skip_ws(bytes, 0);
    let mut found = pos;
    for seg in path {
        match (seg, bytes.get(pos)) {
            (Segment::Key(key), Some(b'{')) => match find_key(bytes, pos, key) {
                Some(p) => pos = p,
                None => break,
            },
            (Segment::Index(i), Some(b'[')) => match find_index(bytes, pos, *i) {
                Some(p) => pos = p,
                None => break,
            },
            _ => break,
        }
        found = pos;
    }
    (found < bytes.len()).then_some(found)
}

fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |n| offset - n - 1) + 1;
    (line, col)
}

fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && b[p].is_ascii_whitespace() {
        p += 1;
    }
    p
}

/// End of the string starting at `p` (on the opening quote): index after
/// the closing quote, or `b.len()` for a string that never closes.
fn skip_string(b: &[u8], mut p: usize) -> usize {
    p += 1;
    while p < b.len() {
        match b[p] {
            b'\\' => p += 2,
            b'"' => return p + 1,
            _ => p += 1,
        }
    }
    b.len()
}

/// Index just after the value starting at `p`.
fn skip_value(b: &[u8], p: usize) -> usize {
    match b.get(p) {
        Some(b'"') => skip_string(b, p),
        Some(b'{') | Some(b'[') => {
            let mut depth = 0usize;
            let mut q = p;
            while q < b.len() {
                match b[q] {
                    b'"' => {
                        q = skip_string(b, q);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return q + 1;
                        }
                    }
                    _ => {}
                }
                q += 1;
            }
            q
        }
        _ => {
            let mut q = p;
            while q < b.len() && !matches!(b[q], b',' | b'}' | b']') && !b[q].is_ascii_whitespace()
            {
                q += 1;
            }
            q
        }
    }
}

/// Start of the value of `key` in the object at `p`.
fn find_key(b: &[u8], p: usize, key: &str) -> Option<usize> {
    let mut q = skip_ws(b, p + 1);
    while q < b.len() && b[q] == b'"' {
        let end = skip_string(b, q);
        // An unterminated key (end of input) has no name to match.
        if end < q + 2 || b[end - 1] != b'"' {
            return None;
        }
        let name = std::str::from_utf8(b.get(q + 1..end - 1)?).ok()?;
        q = skip_ws(b, end);
        if b.get(q) != Some(&b':') {
            return None;
        }
        q = skip_ws(b, q + 1);
        if name == key {
            return Some(q);
        }
        q = skip_ws(b, skip_value(b, q));
        if b.get(q) == Some(&b',') {
            q = skip_ws(b, q + 1);
        }
    }
    None
}

/// Start of element `i` of the array at `p`.
fn find_index(b: &[u8], p: usize, i: usize) -> Option<usize> {
    let mut q = skip_ws(b, p + 1);
    for _ in 0..i {
        if q >= b.len() || b[q] == b']' {
            return None;
        }
        q = skip_ws(b, skip_value(b, q));
        if b.get(q) != Some(&b',') {
            return None;
        }
        q = skip_ws(b, q + 1);
    }
    (q < b.len() && b[q] != b']').then_some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (found by fuzzing): an unterminated key at the end of the
    /// text sliced past its end.
    #[test]
    fn unterminated_strings_do_not_panic() {
        for src in [
            "{\n  \"age.\":` \"",
            "{\"a",
            "{\"a\\",
            "{\"",
            "[\"",
            "{\"a\": \"b",
        ] {
            let _ = locate(src, &parse_path("age.x"));
            let _ = locate(src, &parse_path("a[0]"));
            let _ = locate_string(src, &parse_path("a"), "b");
        }
    }

    #[test]
    fn paths_parse() {
        assert_eq!(
            parse_path("rocks[2].radius"),
            vec![
                Segment::Key("rocks".into()),
                Segment::Index(2),
                Segment::Key("radius".into())
            ]
        );
        assert_eq!(parse_path(""), vec![]);
    }

    #[test]
    fn locates_nested_values() {
        let src = "{\n  \"a\": {\"s\": \"x}\", \"b\": [1, [2, 3], 4]},\n  \"c\": 5\n}";
        assert_eq!(locate(src, &parse_path("c")), Some((3, 8)));
        assert_eq!(locate(src, &parse_path("a.b[2]")), Some((2, 37)));
        assert_eq!(locate(src, &parse_path("a.b[1][1]")), Some((2, 33)));
        assert_eq!(locate_string(src, &parse_path("a"), "x}"), Some((2, 14)));
        assert_eq!(locate_string(src, &parse_path("a"), "nope"), None);
        // Missing keys fall back to the deepest existing prefix.
        assert_eq!(locate(src, &parse_path("a.zz")), Some((2, 8)));
    }
}
