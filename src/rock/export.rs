//! Rock export: the scene's tessellated rocks as one Wavefront OBJ, in
//! world units, so that other renderers (and `scree bench --obj`) trace the
//! same triangles.

use std::fmt::Write;

use crate::mesh::TriangleMesh;

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
