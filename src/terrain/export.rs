//! Terrain export: a 16-bit heightmap PNG (see [`super::import::to_png16`])
//! and a Wavefront OBJ of exactly the triangles that are rendered.

use std::fmt::Write;

use super::TerrainGrid;

/// The OBJ text of the terrain mesh: `v` positions in world units, `vn`
/// smooth vertex normals, and `f a//a b//b c//c` faces with the same
/// vertices, diagonal and winding as the rendered mesh (1-based indices).
pub fn obj(grid: &TerrainGrid) -> String {
    let mesh = grid.to_mesh(true);
    let mut s = String::with_capacity(mesh.positions.len() * 64 + mesh.indices.len() * 40);
    let _ = writeln!(
        s,
        "# scree terrain: {}×{} samples, {} triangles",
        grid.heights.width,
        grid.heights.height,
        mesh.indices.len()
    );
    mesh.write_obj(&mut s, 1);
    s
}
