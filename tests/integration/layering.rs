//! The house is one-way: no module of `src/` imports, directly or through
//! others, a module that imports it back, at any depth of the module tree
//! (tests included), and the library knows nothing of clap or of PNG
//! files below `output`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::root;

/// Every module of the library and the binary: its path (`accel::bvh`)
/// and its source without comment lines.
fn modules() -> BTreeMap<String, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(root().join("src")).unwrap();
            let mut parts: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let name = parts.join("::");
            if name == "lib" || name == "main" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            out.insert(name, code);
        }
    }
    let mut out = BTreeMap::new();
    walk(&root().join("src"), &mut out);
    out
}

/// The modules `code` (of module `me`) names through `crate::` or
/// `super::` paths, resolved to the longest known module.
fn imports(me: &str, code: &str, known: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let resolve = |path: Vec<&str>, found: &mut BTreeSet<String>| {
        for len in (1..=path.len()).rev() {
            let candidate = path[..len].join("::");
            if known.contains_key(&candidate) {
                found.insert(candidate);
                return;
            }
        }
    };
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let tokens: Vec<&str> = code.split(|c: char| !word(c)).collect();
    let mine: Vec<&str> = me.split("::").collect();
    for token in tokens {
        if let Some(rest) = token.strip_prefix("crate::") {
            resolve(
                rest.split("::").filter(|s| !s.is_empty()).collect(),
                &mut found,
            );
        } else if token.starts_with("super::") {
            let ups = token.matches("super::").count();
            let rest = token.trim_start_matches("super::");
            if ups <= mine.len() {
                let mut path: Vec<&str> = mine[..mine.len() - ups].to_vec();
                path.extend(rest.split("::").filter(|s| !s.is_empty()));
                resolve(path, &mut found);
            }
        }
    }
    // `crate::{a, b::c}` groups.
    for group in code.split("crate::{").skip(1) {
        let inner = group.split('}').next().unwrap_or_default();
        for item in inner.split(',') {
            let item = item.trim().split(['{', ' ']).next().unwrap_or_default();
            resolve(
                item.split("::").filter(|s| !s.is_empty()).collect(),
                &mut found,
            );
        }
    }
    found
}

/// The module graph cut at `depth` path segments: edges between distinct
/// modules neither of which contains the other.
fn graph(depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let known = modules();
    let cut = |m: &str| m.split("::").take(depth).collect::<Vec<_>>().join("::");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (me, code) in &known {
        for target in imports(me, code, &known) {
            let (a, b) = (cut(me), cut(&target));
            let nested = a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"));
            if a != b && !nested {
                edges.entry(a).or_default().insert(b);
            }
        }
    }
    edges
}

/// A cycle of `edges`, if there is one.
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            match state.get(next.as_str()) {
                Some(1) => {
                    let from = stack.iter().position(|s| s == next).unwrap();
                    let mut found = stack[from..].to_vec();
                    found.push(next.clone());
                    return Some(found);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        if !state.contains_key(node) {
            if let Some(c) = visit(node, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_module_graph_has_no_circles_at_any_depth() {
    let top = graph(1);
    assert!(top.len() > 10, "the modules are found: {top:?}");
    for depth in 1..=3 {
        let edges = graph(depth);
        assert_eq!(cycle(&edges), None, "an import circle at depth {depth}");
    }
}

#[test]
fn nothing_points_back_up() {
    let top = graph(1);
    // (module, modules it must not import): the flow is scene →
    // terrain/rocks → world/accel → camera → render → output.
    for (module, forbidden) in [
        (
            "terrain",
            &["accel", "world", "render", "scene", "output"][..],
        ),
        ("rock", &["accel", "world", "render", "scene", "output"]),
        ("plant", &["accel", "world", "render", "scene", "output"]),
        ("accel", &["world", "render", "scene", "camera", "output"]),
        ("camera", &["scene", "world", "render", "output"]),
        ("render", &["output", "job"]),
        ("ray", &["accel", "terrain", "render"]),
    ] {
        let imports = top.get(module).cloned().unwrap_or_default();
        for f in forbidden {
            assert!(!imports.contains(*f), "{module} imports {f}: {imports:?}");
        }
    }
}

#[test]
fn the_library_knows_no_clap_and_renders_know_no_png() {
    for (module, code) in modules() {
        if !["cli", "commands"].contains(&module.as_str()) {
            assert!(!code.contains("clap::"), "{module} uses clap");
        }
        if module.starts_with("render") {
            assert!(!code.contains("png::"), "{module} knows PNG");
        }
    }
}
