//! Rock export: the scene's tessellated rocks as one Wavefront OBJ, in
//! world units, so that other renderers (and `scree bench --obj`) trace the
//! same triangles.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use glam::{Vec2, Vec3};

use crate::mesh::TriangleMesh;

/// How an exported rock looks: a colour or a texture file.
#[derive(Debug, Clone, PartialEq)]
pub enum Look {
    /// Linear RGB albedo.
    Albedo(Vec3),
    /// The albedo texture's file (None for a generated one).
    Texture(Option<PathBuf>),
}

/// A rock as exported: its world-space mesh, the texture coordinates of
/// its vertices, and its look.
#[derive(Debug, Clone)]
pub struct ExportRock {
    /// World units, unit normals.
    pub mesh: TriangleMesh,
    /// Per vertex: (u, v) as the renderer looks textures up.
    pub uv: Vec<Vec2>,
    /// Colour or texture.
    pub look: Look,
}

/// The OBJ and MTL texts of `rocks`: [`obj`]'s vertices and normals, a
/// `vt` per face corner (a face that crosses the u = 0/1 seam takes u + 1
/// on its side of it, so no face stretches across the texture), and a
/// material per distinct look, in `mtl_name`: `Kd` for a colour,
/// `map_Kd` naming the texture file (relative to `folder`, the OBJ's, where
/// it can be) for a texture. Texture v runs up in OBJ, down in scree.
pub fn obj_with_materials(rocks: &[ExportRock], mtl_name: &str, folder: &Path) -> (String, String) {
    let triangles: usize = rocks.iter().map(|r| r.mesh.indices.len()).sum();
    let mut obj = String::new();
    let mut mtl = String::from("# scree rock materials\n");
    let _ = writeln!(
        obj,
        "# scree rocks: {} rocks, {triangles} triangles",
        rocks.len()
    );
    let _ = writeln!(obj, "mtllib {mtl_name}");
    let mut looks: Vec<&Look> = Vec::new();
    let (mut first_v, mut first_t) = (1, 1);
    for (k, rock) in rocks.iter().enumerate() {
        let m = &rock.mesh;
        let id = match looks.iter().position(|l| **l == rock.look) {
            Some(i) => i,
            None => {
                looks.push(&rock.look);
                let i = looks.len() - 1;
                let _ = writeln!(mtl, "\nnewmtl rock_{i}");
                match &rock.look {
                    Look::Albedo(c) => {
                        let _ = writeln!(mtl, "Kd {} {} {}", c.x, c.y, c.z);
                    }
                    Look::Texture(path) => {
                        let _ = writeln!(mtl, "Kd 1 1 1");
                        if let Some(p) = path {
                            let shown = pathdiff(p, folder);
                            let _ = writeln!(mtl, "map_Kd {}", shown.display());
                        }
                    }
                }
                i
            }
        };
        let _ = writeln!(obj, "o rock_{k}");
        let _ = writeln!(obj, "usemtl rock_{id}");
        for p in &m.positions {
            let _ = writeln!(obj, "v {} {} {}", p.x, p.y, p.z);
        }
        for n in &m.normals {
            let _ = writeln!(obj, "vn {} {} {}", n.x, n.y, n.z);
        }
        for t in &m.indices {
            let uv = t.map(|v| rock.uv.get(v as usize).copied().unwrap_or(Vec2::ZERO));
            let us = uv.map(|c| c.x);
            let high = us.iter().copied().fold(f32::MIN, f32::max);
            for c in uv {
                let u = if high - c.x > 0.5 { c.x + 1.0 } else { c.x };
                let _ = writeln!(obj, "vt {} {}", u, 1.0 - c.y);
            }
        }
        for (f, t) in m.indices.iter().enumerate() {
            let corner = |c: usize| {
                let v = first_v + t[c] as usize;
                let vt = first_t + 3 * f + c;
                if m.normals.is_empty() {
                    format!("{v}/{vt}")
                } else {
                    format!("{v}/{vt}/{v}")
                }
            };
            let _ = writeln!(obj, "f {} {} {}", corner(0), corner(1), corner(2));
        }
        first_v += m.positions.len();
        first_t += 3 * m.indices.len();
    }
    (obj, mtl)
}

/// `path` relative to `folder` where both are relative or both absolute
/// and `path` lies below it; `path` itself otherwise.
fn pathdiff(path: &Path, folder: &Path) -> PathBuf {
    let full = |p: &Path| std::fs::canonicalize(p).or_else(|_| std::path::absolute(p));
    let (Ok(p), Ok(f)) = (full(path), full(folder)) else {
        return path.to_path_buf();
    };
    let (pc, fc): (Vec<_>, Vec<_>) = (p.components().collect(), f.components().collect());
    let common = pc.iter().zip(&fc).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return p;
    }
    let mut out = PathBuf::new();
    for _ in common..fc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c);
    }
    out
}

/// The OBJ text of `rocks` (world-space meshes): `v` positions, `vn` unit
/// normals where the meshes carry them, and `f` faces with the meshes'
/// winding (1-based indices; `f a//a b//b c//c` with normals). Coordinates
/// are written in the shortest form that reads back as the same `f32`, so
/// the triangles are exactly the traced ones.
pub fn obj(rocks: &[TriangleMesh]) -> String {
    let triangles: usize = rocks.iter().map(|m| m.indices.len()).sum();
    let vertices: usize = rocks.iter().map(|m| m.positions.len()).sum();
    let mut s = String::with_capacity(vertices * 80 + triangles * 40);
    let _ = writeln!(
        s,
        "# scree rocks: {} rocks, {triangles} triangles",
        rocks.len()
    );
    let mut first = 1;
    for (k, mesh) in rocks.iter().enumerate() {
        let _ = writeln!(s, "o rock_{k}");
        mesh.write_obj(&mut s, first);
        first += mesh.positions.len();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A face across the u = 0/1 seam takes u + 1 on its near side, v is
    /// flipped for OBJ, and looks dedupe into materials.
    #[test]
    fn faces_across_the_seam_do_not_stretch_over_the_texture() {
        let mesh = TriangleMesh {
            positions: vec![Vec3::X, Vec3::Y, Vec3::Z],
            normals: vec![],
            indices: vec![[0, 1, 2]],
        };
        let rock = |look| ExportRock {
            mesh: mesh.clone(),
            uv: vec![
                Vec2::new(0.95, 0.25),
                Vec2::new(0.02, 0.5),
                Vec2::new(0.97, 0.75),
            ],
            look,
        };
        let red = Look::Albedo(Vec3::new(1.0, 0.0, 0.0));
        let (obj, mtl) =
            obj_with_materials(&[rock(red.clone()), rock(red)], "r.mtl", Path::new("."));
        assert!(
            obj.contains("vt 0.95 0.75\nvt 1.02 0.5\nvt 0.97 0.25\n"),
            "{obj}"
        );
        assert!(
            obj.contains("f 1/1 2/2 3/3\n") && obj.contains("f 4/4 5/5 6/6\n"),
            "{obj}"
        );
        assert_eq!(mtl.matches("newmtl").count(), 1, "{mtl}");
        assert_eq!(obj.matches("usemtl rock_0").count(), 2);
    }
}
