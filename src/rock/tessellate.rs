//! The UV sphere: `stacks` bands of latitude, `slices` of longitude, one
//! vertex at each pole and none duplicated along the u = 0/1 seam, so the
//! seam and the poles are welded by construction.

use glam::{Vec2, Vec3};

/// A tessellated unit sphere.
#[derive(Debug, Clone, PartialEq)]
pub struct UvSphere {
    /// Latitude bands (>= 2).
    pub stacks: u32,
    /// Longitude segments (>= 3).
    pub slices: u32,
    /// Unit vertex directions: north pole, rings from north to south, south pole.
    pub dirs: Vec<Vec3>,
    /// Texture coordinates (u = longitude/2π, v = polar angle/π).
    pub uv: Vec<Vec2>,
    /// Outward-facing (counter-clockwise seen from outside) triangles.
    pub indices: Vec<[u32; 3]>,
}

impl UvSphere {
    /// Vertex count for a tessellation: slices · (stacks − 1) + 2.
    pub fn vertex_count(stacks: u32, slices: u32) -> usize {
        (slices * (stacks - 1) + 2) as usize
    }

    /// Triangle count: 2 · slices · (stacks − 1).
    pub fn triangle_count(stacks: u32, slices: u32) -> usize {
        (2 * slices * (stacks - 1)) as usize
    }

    /// Whether vertex `k` is a pole.
    pub fn is_pole(&self, k: usize) -> bool {
        k == 0 || k == self.dirs.len() - 1
    }

    /// Tessellates the unit sphere. Ring r (1..stacks) is at polar angle
    /// θ = rπ/stacks, vertex j of a ring at longitude φ = 2πj/slices, in
    /// direction (sin θ sin φ, cos θ, sin θ cos φ).
    pub fn new(stacks: u32, slices: u32) -> UvSphere {
        assert!(stacks >= 2 && slices >= 3, "validated tessellation");
        let mut dirs = Vec::with_capacity(Self::vertex_count(stacks, slices));
        let mut uv = Vec::with_capacity(dirs.capacity());
        dirs.push(Vec3::Y);
        uv.push(Vec2::new(0.0, 0.0));
        for r in 1..stacks {
            let theta = r as f32 * std::f32::consts::PI / stacks as f32;
            for j in 0..slices {
                let phi = j as f32 * std::f32::consts::TAU / slices as f32;
                dirs.push(Vec3::new(
                    theta.sin() * phi.sin(),
                    theta.cos(),
                    theta.sin() * phi.cos(),
                ));
                uv.push(Vec2::new(
                    j as f32 / slices as f32,
                    r as f32 / stacks as f32,
                ));
            }
        }
        dirs.push(Vec3::NEG_Y);
        uv.push(Vec2::new(0.0, 1.0));

        let ring = |r: u32, j: u32| 1 + (r - 1) * slices + j % slices;
        let south = dirs.len() as u32 - 1;
        let mut indices = Vec::with_capacity(Self::triangle_count(stacks, slices));
        for j in 0..slices {
            indices.push([0, ring(1, j), ring(1, j + 1)]);
        }
        for r in 1..stacks - 1 {
            for j in 0..slices {
                let (a, b) = (ring(r, j), ring(r, j + 1));
                let (c, d) = (ring(r + 1, j), ring(r + 1, j + 1));
                indices.push([a, c, d]);
                indices.push([a, d, b]);
            }
        }
        for j in 0..slices {
            indices.push([south, ring(stacks - 1, j + 1), ring(stacks - 1, j)]);
        }
        UvSphere {
            stacks,
            slices,
            dirs,
            uv,
            indices,
        }
    }
}
