//! Indexed triangle meshes: the common geometry of terrain and rocks.

use std::path::{Path, PathBuf};

use glam::{Vec2, Vec3};

/// A material of a Wavefront MTL file, as far as scree uses one.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjMaterial {
    /// Its name (`newmtl`).
    pub name: String,
    /// `Kd`: the diffuse colour, if given.
    pub diffuse: Option<Vec3>,
    /// `map_Kd`: the diffuse colour's image, beside the OBJ.
    pub diffuse_map: Option<PathBuf>,
    /// `map_d`: the opacity's image.
    pub alpha_map: Option<PathBuf>,
    /// `d`: the opacity, 1 where not given.
    pub dissolve: f32,
}

/// The triangles of an OBJ that share one material.
#[derive(Debug, Clone)]
pub struct ObjPart {
    /// Its triangles (normals as [`TriangleMesh::read_obj`] reads them).
    pub mesh: TriangleMesh,
    /// Texture coordinates (u, v) of each vertex as the file gives them (v
    /// up the image); empty where some vertex has none.
    pub uvs: Vec<Vec2>,
    /// Its material; None without `usemtl` (or without an MTL file).
    pub material: Option<ObjMaterial>,
}

/// [`TriangleMesh::read_obj_parts`], reading the materials or not.
fn read_parts(path: &Path, materials: bool) -> Result<Vec<ObjPart>, String> {
    let opts = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ..Default::default()
    };
    let (models, mtl) =
        tobj::load_obj(path, &opts).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mtl = match mtl {
        _ if !materials => Vec::new(),
        // Empty where the OBJ names no MTL file.
        Ok(m) => m,
        Err(e) => {
            return Err(format!(
                "cannot read the materials (mtllib) of {}: {e}",
                path.display()
            ))
        }
    };
    let folder = path.parent().unwrap_or(Path::new("."));
    // Parts by material, in the order they first appear; each part's
    // normals and coordinates kept only if every one of its models has them.
    let mut parts: Vec<(Option<usize>, ObjPart, bool, bool)> = Vec::new();
    for m in models {
        let id = m.mesh.material_id.filter(|&k| k < mtl.len());
        let k = match parts.iter().position(|p| p.0 == id) {
            Some(k) => k,
            None => {
                let material = id.map(|k| {
                    let t = &mtl[k];
                    ObjMaterial {
                        name: t.name.clone(),
                        diffuse: t.diffuse.map(Vec3::from_array),
                        diffuse_map: t.diffuse_texture.as_ref().map(|f| folder.join(f)),
                        alpha_map: t.dissolve_texture.as_ref().map(|f| folder.join(f)),
                        dissolve: t.dissolve.unwrap_or(1.0),
                    }
                });
                let part = ObjPart {
                    mesh: TriangleMesh::default(),
                    uvs: Vec::new(),
                    material,
                };
                parts.push((id, part, true, true));
                parts.len() - 1
            }
        };
        let (_, part, all_normals, all_uvs) = &mut parts[k];
        let base = part.mesh.positions.len() as u32;
        let count = m.mesh.positions.len() / 3;
        part.mesh.positions.extend(
            m.mesh
                .positions
                .chunks_exact(3)
                .map(|p| Vec3::new(p[0], p[1], p[2])),
        );
        if m.mesh.normals.len() == 3 * count {
            part.mesh.normals.extend(
                m.mesh
                    .normals
                    .chunks_exact(3)
                    .map(|n| Vec3::new(n[0], n[1], n[2])),
            );
        } else {
            *all_normals = false;
        }
        if m.mesh.texcoords.len() == 2 * count {
            part.uvs
                .extend(m.mesh.texcoords.chunks_exact(2).map(Vec2::from_slice));
        } else {
            *all_uvs = false;
        }
        part.mesh.indices.extend(
            m.mesh
                .indices
                .chunks_exact(3)
                .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
        );
    }
    let mut out = Vec::with_capacity(parts.len());
    for (_, mut part, all_normals, all_uvs) in parts {
        if part.mesh.indices.is_empty() {
            continue;
        }
        if !(all_normals
            && part
                .mesh
                .normals
                .iter()
                .all(|n| n.is_finite() && n.length() > 0.0))
        {
            part.mesh.normals.clear();
        }
        part.mesh
            .normals
            .iter_mut()
            .for_each(|n| *n = n.normalize());
        if !all_uvs || part.uvs.iter().any(|uv| !uv.is_finite()) {
            part.uvs.clear();
        }
        if let Some(m) = &part.material {
            let mapped = m.diffuse_map.is_some() || m.alpha_map.is_some();
            if mapped && part.uvs.is_empty() {
                return Err(format!(
                    "{}: the faces of material `{}` have an image (map_Kd or map_d) but not \
                     texture coordinates (vt) at every vertex",
                    path.display(),
                    m.name
                ));
            }
        }
        if let Some(p) = part.mesh.positions.iter().find(|p| !p.is_finite()) {
            return Err(format!("{}: a vertex is not finite ({p})", path.display()));
        }
        out.push(part);
    }
    if out.is_empty() {
        return Err(format!(
            "{} has no triangles (Wavefront OBJ faces)",
            path.display()
        ));
    }
    Ok(out)
}

/// Triangles over shared vertices.
#[derive(Debug, Clone, Default)]
pub struct TriangleMesh {
    /// Vertex positions, world units.
    pub positions: Vec<Vec3>,
    /// Unit vertex normals for smooth shading; empty for flat shading.
    pub normals: Vec<Vec3>,
    /// Counter-clockwise (seen from outside) vertex indices per triangle.
    pub indices: Vec<[u32; 3]>,
}

impl TriangleMesh {
    /// Reads a Wavefront OBJ (all its models, triangulated) with `tobj`:
    /// positions, and the file's normals where it gives one for every
    /// vertex (else none); its materials are not read. An error names the
    /// file.
    pub fn read_obj(path: &Path) -> Result<TriangleMesh, String> {
        let parts = read_parts(path, false)?;
        let all_normals = parts.iter().all(|p| !p.mesh.normals.is_empty());
        let mut mesh = TriangleMesh::default();
        for part in &parts {
            mesh.append(&part.mesh);
        }
        if !all_normals {
            mesh.normals.clear();
        }
        Ok(mesh)
    }

    /// Reads a Wavefront OBJ as [`TriangleMesh::read_obj`] does, and its
    /// MTL materials (`mtllib`): one part per material used (`usemtl`), in
    /// the order they first appear, each with its texture coordinates. An
    /// MTL file that cannot be read is an error, as is a part whose
    /// material has a texture but whose vertices lack coordinates (`vt`).
    pub fn read_obj_parts(path: &Path) -> Result<Vec<ObjPart>, String> {
        read_parts(path, true)
    }
    /// Per-vertex normals: the sum of the unnormalised face normals around
    /// each vertex (so larger faces weigh more), normalised.
    pub fn area_weighted_normals(&self) -> Vec<Vec3> {
        let mut sums = vec![Vec3::ZERO; self.positions.len()];
        for t in &self.indices {
            let [a, b, c] = t.map(|v| self.positions[v as usize]);
            let n = (b - a).cross(c - a);
            for v in t {
                sums[*v as usize] += n;
            }
        }
        sums.into_iter()
            .map(|n| n.try_normalize().unwrap_or(Vec3::Y))
            .collect()
    }

    /// Appends `other`'s vertices and triangles. A mesh without normals gets
    /// zero normals for its vertices so that the list stays per-vertex (the
    /// caller marks its triangles flat).
    pub fn append(&mut self, other: &TriangleMesh) {
        let base = self.positions.len() as u32;
        if self.normals.len() < self.positions.len() {
            self.normals.resize(self.positions.len(), Vec3::ZERO);
        }
        self.positions.extend_from_slice(&other.positions);
        if other.normals.is_empty() {
            self.normals.resize(self.positions.len(), Vec3::ZERO);
        } else {
            self.normals.extend_from_slice(&other.normals);
        }
        self.indices
            .extend(other.indices.iter().map(|t| t.map(|v| v + base)));
    }

    /// Appends the mesh as Wavefront OBJ lines to `out`: `v` positions,
    /// `vn` normals when every vertex has one, and `f` faces with the
    /// mesh's winding (`f a//a b//b c//c` with normals), numbered from
    /// `first` (OBJ's indices start at 1, and run on over earlier meshes
    /// of the same file). Coordinates are Rust's shortest form that reads
    /// back as the same `f32`.
    pub fn write_obj(&self, out: &mut String, first: usize) {
        use std::fmt::Write;
        for p in &self.positions {
            let _ = writeln!(out, "v {} {} {}", p.x, p.y, p.z);
        }
        let normals = self.normals.len() == self.positions.len();
        if normals {
            for n in &self.normals {
                let _ = writeln!(out, "vn {} {} {}", n.x, n.y, n.z);
            }
        }
        for t in &self.indices {
            let [a, b, c] = t.map(|v| v as usize + first);
            if normals {
                let _ = writeln!(out, "f {a}//{a} {b}//{b} {c}//{c}");
            } else {
                let _ = writeln!(out, "f {a} {b} {c}");
            }
        }
    }

    /// The unit geometric normal of triangle `t` (Vec3::Y if degenerate).
    pub fn face_normal(&self, t: usize) -> Vec3 {
        let [a, b, c] = self.indices[t].map(|v| self.positions[v as usize]);
        face_normal(a, b, c)
    }
}

/// The unit normal of triangle (a, b, c), counter-clockwise seen from its
/// front (Vec3::Y if degenerate).
#[inline]
pub fn face_normal(a: Vec3, b: Vec3, c: Vec3) -> Vec3 {
    (b - a).cross(c - a).try_normalize().unwrap_or(Vec3::Y)
}
