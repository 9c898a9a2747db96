//! Indexed triangle meshes: the common geometry of terrain and rocks.

use glam::Vec3;

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
    /// vertex (else none). An error names the file.
    pub fn read_obj(path: &std::path::Path) -> Result<TriangleMesh, String> {
        let opts = tobj::LoadOptions {
            triangulate: true,
            single_index: true,
            ..Default::default()
        };
        let (models, _) = tobj::load_obj(path, &opts)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let mut mesh = TriangleMesh::default();
        let mut normals = Vec::new();
        let mut all_normals = true;
        for m in models {
            let base = mesh.positions.len() as u32;
            let count = m.mesh.positions.len() / 3;
            mesh.positions.extend(
                m.mesh
                    .positions
                    .chunks_exact(3)
                    .map(|p| Vec3::new(p[0], p[1], p[2])),
            );
            if m.mesh.normals.len() == 3 * count {
                normals.extend(
                    m.mesh
                        .normals
                        .chunks_exact(3)
                        .map(|n| Vec3::new(n[0], n[1], n[2])),
                );
            } else {
                all_normals = false;
            }
            mesh.indices.extend(
                m.mesh
                    .indices
                    .chunks_exact(3)
                    .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
            );
        }
        if mesh.indices.is_empty() {
            return Err(format!(
                "{} has no triangles (Wavefront OBJ faces)",
                path.display()
            ));
        }
        if let Some(p) = mesh.positions.iter().find(|p| !p.is_finite()) {
            return Err(format!("{}: a vertex is not finite ({p})", path.display()));
        }
        if all_normals && normals.iter().all(|n| n.is_finite() && n.length() > 0.0) {
            mesh.normals = normals.into_iter().map(Vec3::normalize).collect();
        }
        Ok(mesh)
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
