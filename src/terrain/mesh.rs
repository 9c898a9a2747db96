//! The heightmap placed in the world: grid geometry, exact height queries
//! and the triangle mesh that is rendered.
//!
//! Sample (row i, column j) sits at x = (j/(W−1) − ½)·size_x,
//! z = (i/(H−1) − ½)·size_z. Each cell is split along the diagonal from
//! (i, j+1) to (i+1, j) into triangles (i,j)(i+1,j)(i,j+1) and
//! (i,j+1)(i+1,j)(i+1,j+1), both facing +y.

use glam::Vec3;

use super::Heightmap;
use crate::mesh::TriangleMesh;

/// The smooth normal at sample (row `i`, column `j`) of a `w` × `h` grid
/// whose samples `p` places: the area-weighted mean of the adjacent
/// faces, summed in increasing triangle order as
/// [`TriangleMesh::area_weighted_normals`] sums them, so that a normal
/// computed here when shading equals the stored one bit for bit.
#[inline]
pub fn vertex_normal(
    p: impl Fn(usize, usize) -> Vec3,
    w: usize,
    h: usize,
    i: usize,
    j: usize,
) -> Vec3 {
    // Unnormalised face normals of cell (ci, cj): first and second triangle.
    let faces = |ci: usize, cj: usize| {
        let (a, b, c, d) = (p(ci, cj), p(ci + 1, cj), p(ci, cj + 1), p(ci + 1, cj + 1));
        ((b - a).cross(c - a), (b - c).cross(d - c))
    };
    let mut n = Vec3::ZERO;
    // Adjacent triangles in increasing index order: the cells above (row
    // i − 1) come first, then this row's.
    if i > 0 && j > 0 {
        n += faces(i - 1, j - 1).1;
    }
    if i > 0 && j < w - 1 {
        let (f0, f1) = faces(i - 1, j);
        n += f0;
        n += f1;
    }
    if i < h - 1 && j > 0 {
        let (f0, f1) = faces(i, j - 1);
        n += f0;
        n += f1;
    }
    if i < h - 1 && j < w - 1 {
        n += faces(i, j).0;
    }
    n.try_normalize().unwrap_or(Vec3::Y)
}

/// A heightmap with a world extent.
#[derive(Debug, Clone)]
pub struct TerrainGrid {
    /// The heights, world units.
    pub heights: Heightmap,
    /// Extent along x and z, world units.
    pub size: [f32; 2],
}

impl TerrainGrid {
    /// World position of sample (row `i`, column `j`).
    #[inline]
    pub fn position(&self, i: usize, j: usize) -> Vec3 {
        let (w, h) = (self.heights.width, self.heights.height);
        Vec3::new(
            (j as f32 / (w - 1) as f32 - 0.5) * self.size[0],
            self.heights.at(i, j),
            (i as f32 / (h - 1) as f32 - 0.5) * self.size[1],
        )
    }

    /// Height of the rendered triangles at world (x, z); positions outside
    /// the grid are clamped to its edge.
    pub fn height_at(&self, x: f32, z: f32) -> f32 {
        let (w, h) = (self.heights.width, self.heights.height);
        let fx = ((x / self.size[0] + 0.5) * (w - 1) as f32).clamp(0.0, (w - 1) as f32);
        let fz = ((z / self.size[1] + 0.5) * (h - 1) as f32).clamp(0.0, (h - 1) as f32);
        let j = (fx.floor() as usize).min(w - 2);
        let i = (fz.floor() as usize).min(h - 2);
        let (u, v) = (fx - j as f32, fz - i as f32);
        let h00 = self.heights.at(i, j);
        let h01 = self.heights.at(i, j + 1);
        let h10 = self.heights.at(i + 1, j);
        let h11 = self.heights.at(i + 1, j + 1);
        if u + v <= 1.0 {
            h00 + u * (h01 - h00) + v * (h10 - h00)
        } else {
            h11 + (1.0 - u) * (h10 - h11) + (1.0 - v) * (h01 - h11)
        }
    }

    /// The terrain's unit normal at world (x, z): from central differences
    /// of [`TerrainGrid::height_at`] a quarter cell apart.
    pub fn normal_at(&self, x: f32, z: f32) -> Vec3 {
        let (w, h) = (self.heights.width as f32, self.heights.height as f32);
        let dx = self.size[0] / (w - 1.0) * 0.25;
        let dz = self.size[1] / (h - 1.0) * 0.25;
        let hx = self.height_at(x + dx, z) - self.height_at(x - dx, z);
        let hz = self.height_at(x, z + dz) - self.height_at(x, z - dz);
        Vec3::new(-hx / (2.0 * dx), 1.0, -hz / (2.0 * dz)).normalize()
    }

    /// The mask `height` (fractions of the relief) × `slope` (degrees from
    /// horizontal) on this terrain, its relief measured once.
    pub fn mask(&self, height: [f32; 2], slope: [f32; 2]) -> GroundMask<'_> {
        let (lo, hi) = self.heights.range();
        GroundMask {
            grid: self,
            lo,
            relief: (hi - lo).max(1e-6),
            height,
            slope,
            waters: None,
            moisture: None,
            dry: false,
        }
    }

    /// A diamond-square terrain of `width` × `height` samples, `top` high,
    /// over `size`: the fixture of the acceleration tests.
    #[cfg(test)]
    pub(crate) fn diamond_square(
        width: usize,
        height: usize,
        top: f64,
        seed: u64,
        size: [f32; 2],
    ) -> TerrainGrid {
        use crate::terrain::{generate, DiamondSquare, Generator, Recipe};
        let recipe = Recipe::new(
            Generator::DiamondSquare(DiamondSquare::default()),
            width,
            height,
            top,
        );
        TerrainGrid {
            heights: generate(&recipe, seed),
            size,
        }
    }

    /// Number of triangles in the mesh: two per cell.
    pub fn triangle_count(&self) -> usize {
        2 * (self.heights.width - 1) * (self.heights.height - 1)
    }

    /// Smooth vertex normals of the mesh, per sample, without building it:
    /// the same sums as [`TriangleMesh::area_weighted_normals`] (each
    /// vertex adds its adjacent faces in triangle order), so the same bits.
    pub fn vertex_normals(&self) -> Vec<Vec3> {
        use rayon::prelude::*;
        let (w, h) = (self.heights.width, self.heights.height);
        (0..h * w)
            .into_par_iter()
            .map(|k| vertex_normal(|i, j| self.position(i, j), w, h, k / w, k % w))
            .collect()
    }

    /// The triangle mesh, with smooth vertex normals (area-weighted mean of
    /// the adjacent faces) or none when `smooth` is false (flat shading).
    pub fn to_mesh(&self, smooth: bool) -> TriangleMesh {
        let (w, h) = (self.heights.width, self.heights.height);
        let mut positions = Vec::with_capacity(w * h);
        for i in 0..h {
            for j in 0..w {
                positions.push(self.position(i, j));
            }
        }
        let mut indices = Vec::with_capacity(self.triangle_count());
        for i in 0..h - 1 {
            for j in 0..w - 1 {
                let v = |i: usize, j: usize| (i * w + j) as u32;
                indices.push([v(i, j), v(i + 1, j), v(i, j + 1)]);
                indices.push([v(i, j + 1), v(i + 1, j), v(i + 1, j + 1)]);
            }
        }
        let mut mesh = TriangleMesh {
            positions,
            normals: Vec::new(),
            indices,
        };
        if smooth {
            mesh.normals = mesh.area_weighted_normals();
        }
        mesh
    }
}

/// Where things may stand on a terrain: a range of heights (fractions of
/// its relief, 0 its lowest sample) and of slopes (degrees from
/// horizontal), both inclusive. Scattered rocks and populations share it.
#[derive(Debug, Clone, Copy)]
pub struct GroundMask<'a> {
    grid: &'a TerrainGrid,
    lo: f32,
    relief: f32,
    height: [f32; 2],
    slope: [f32; 2],
    waters: Option<&'a super::hydrology::Waters>,
    moisture: Option<[f32; 2]>,
    dry: bool,
}

impl<'a> GroundMask<'a> {
    /// The mask, also limited to `moisture` (by `waters`, 0 everywhere
    /// without them) and, if `dry`, to ground no water stands on.
    pub fn near_water(
        self,
        waters: Option<&'a super::hydrology::Waters>,
        moisture: Option<[f32; 2]>,
        dry: bool,
    ) -> GroundMask<'a> {
        GroundMask {
            waters,
            moisture,
            dry: dry && waters.is_some(),
            ..self
        }
    }

    /// Whether the mask lets nothing out (the full ranges).
    pub fn is_open(&self) -> bool {
        self.height == [0.0, 1.0]
            && self.slope == [0.0, 90.0]
            && self.moisture.is_none()
            && !self.dry
    }

    /// Whether the ground at (x, z), of normal `n` there, lies within the
    /// mask.
    pub fn allows(&self, x: f32, z: f32, n: Vec3) -> bool {
        let ground = self.grid.height_at(x, z);
        let fraction = (ground - self.lo) / self.relief;
        let slope = n.y.clamp(-1.0, 1.0).acos().to_degrees();
        let inside = |v: f32, [a, b]: [f32; 2]| v >= a && v <= b;
        let moist = self.waters.map_or(0.0, |w| w.moisture_at(x, z));
        let wet = self.dry && self.waters.is_some_and(|w| w.level_at(x, z) > ground);
        inside(fraction, self.height)
            && inside(slope, self.slope)
            && self.moisture.is_none_or(|m| inside(moist, m))
            && !wet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> TerrainGrid {
        // 3 × 3 samples over 2 × 2 world units: cells are 1 × 1.
        TerrainGrid {
            heights: Heightmap::new(3, 3, vec![0.0, 1.0, 2.0, 3.0, 5.0, 4.0, 1.0, 0.0, 8.0]),
            size: [2.0, 2.0],
        }
    }

    #[test]
    fn vertex_normals_are_the_meshs_bit_for_bit() {
        let heights = crate::terrain::Heightmap::new(
            13,
            9,
            (0..13 * 9)
                .map(|k| crate::hash::unit_f32(5, k as u64, 0) * 4.0)
                .collect(),
        );
        let g = TerrainGrid {
            heights,
            size: [6.0, 4.0],
        };
        let expect = g.to_mesh(true).normals;
        let got = g.vertex_normals();
        assert_eq!(got.len(), expect.len());
        for (k, (a, b)) in got.iter().zip(&expect).enumerate() {
            assert_eq!(
                a.to_array().map(f32::to_bits),
                b.to_array().map(f32::to_bits),
                "vertex {k}"
            );
        }
    }

    #[test]
    fn height_at_samples_is_exact() {
        let g = grid();
        for i in 0..3 {
            for j in 0..3 {
                let p = g.position(i, j);
                assert_eq!(g.height_at(p.x, p.z), g.heights.at(i, j), "({i},{j})");
            }
        }
    }

    #[test]
    fn height_at_follows_the_fixed_diagonal() {
        let g = grid();
        // Cell (0,0): h00 = 0, h01 = 1, h10 = 3, h11 = 5. Its centre lies on
        // the diagonal (i, j+1)–(i+1, j): (h01 + h10)/2 = 2, not the
        // bilinear 2.25.
        assert_eq!(g.height_at(-0.5, -0.5), 2.0);
        // Lower triangle at u = 0.25, v = 0.25: 0 + 0.25·1 + 0.25·3 = 1.
        assert_eq!(g.height_at(-0.75, -0.75), 1.0);
        // Upper triangle at u = 0.75, v = 0.75:
        // 5 + 0.25·(3 − 5) + 0.25·(1 − 5) = 3.5.
        assert_eq!(g.height_at(-0.25, -0.25), 3.5);
    }

    #[test]
    fn height_at_agrees_with_a_ray_down_onto_the_mesh() {
        let g = grid();
        let mesh = g.to_mesh(false);
        for k in 0..50 {
            let x = -0.95 + 1.9 * ((k * 37) % 50) as f32 / 50.0;
            let z = -0.95 + 1.9 * ((k * 11) % 50) as f32 / 50.0;
            let origin = Vec3::new(x, 100.0, z);
            let hit = mesh
                .indices
                .iter()
                .filter_map(|t| {
                    crate::ray::intersect_triangle(
                        &crate::ray::Ray::new(origin, Vec3::NEG_Y),
                        mesh.positions[t[0] as usize],
                        mesh.positions[t[1] as usize],
                        mesh.positions[t[2] as usize],
                        f32::INFINITY,
                    )
                })
                .map(|h| h.0)
                .fold(f32::INFINITY, f32::min);
            assert!(
                (100.0 - hit - g.height_at(x, z)).abs() < 1e-4,
                "at ({x}, {z})"
            );
        }
    }

    #[test]
    fn mesh_counts_and_orientation() {
        let mesh = grid().to_mesh(true);
        assert_eq!(mesh.positions.len(), 9);
        assert_eq!(mesh.indices.len(), 8);
        assert_eq!(mesh.normals.len(), 9);
        for t in &mesh.indices {
            let [a, b, c] = t.map(|v| mesh.positions[v as usize]);
            assert!((b - a).cross(c - a).y > 0.0, "triangle faces up");
        }
    }
}
