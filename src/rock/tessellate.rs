//! Tessellated unit spheres. The UV sphere: `stacks` bands of latitude,
//! `slices` of longitude, one vertex at each pole and none duplicated along
//! the u = 0/1 seam, so the seam and the poles are welded by construction;
//! its triangles shrink toward the poles, where a whole texture row meets
//! in one vertex. The icosphere: an icosahedron whose faces are split in
//! four `subdivisions` times, the new vertices pushed out to the sphere:
//! no poles, triangles of nearly one size.

use glam::{Vec2, Vec3};

/// How a rock's sphere is cut into triangles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tessellation {
    /// A UV sphere.
    Uv {
        /// Latitude bands (>= 2).
        stacks: u32,
        /// Longitude segments (>= 3).
        slices: u32,
    },
    /// A subdivided icosahedron: 20 · 4^subdivisions triangles.
    Icosphere {
        /// Times each face is split in four.
        subdivisions: u32,
    },
    /// A cube sphere: each face a grid of 2^subdivisions × 2^subdivisions
    /// cells, 12 · 4^subdivisions triangles.
    Cube {
        /// Times each face's cells are split in four.
        subdivisions: u32,
    },
}

impl Tessellation {
    /// Triangles of the mesh.
    pub fn triangle_count(self) -> usize {
        match self {
            Tessellation::Uv { stacks, slices } => SphereMesh::triangle_count(stacks, slices),
            Tessellation::Icosphere { subdivisions } => 20 << (2 * subdivisions),
            Tessellation::Cube { subdivisions } => 12 << (2 * subdivisions),
        }
    }

    /// The mesh.
    pub fn mesh(self) -> SphereMesh {
        match self {
            Tessellation::Uv { stacks, slices } => SphereMesh::uv(stacks, slices),
            Tessellation::Icosphere { subdivisions } => SphereMesh::icosphere(subdivisions),
            Tessellation::Cube { subdivisions } => SphereMesh::cube(subdivisions),
        }
    }
}

/// A tessellated unit sphere.
#[derive(Debug, Clone, PartialEq)]
pub struct SphereMesh {
    /// Latitude bands of a UV sphere (>= 2); 0 for an icosphere.
    pub stacks: u32,
    /// Longitude segments of a UV sphere (>= 3); 0 for an icosphere.
    pub slices: u32,
    /// Unit vertex directions: north pole, rings from north to south, south pole.
    pub dirs: Vec<Vec3>,
    /// Texture coordinates (u = longitude/2π, v = polar angle/π).
    pub uv: Vec<Vec2>,
    /// Outward-facing (counter-clockwise seen from outside) triangles.
    pub indices: Vec<[u32; 3]>,
}

impl SphereMesh {
    /// Vertex count for a tessellation: slices · (stacks − 1) + 2.
    pub fn vertex_count(stacks: u32, slices: u32) -> usize {
        (slices * (stacks - 1) + 2) as usize
    }

    /// Triangle count: 2 · slices · (stacks − 1).
    pub fn triangle_count(stacks: u32, slices: u32) -> usize {
        (2 * slices * (stacks - 1)) as usize
    }

    /// Whether vertex `k` is a UV sphere's pole.
    pub fn is_pole(&self, k: usize) -> bool {
        self.stacks > 0 && (k == 0 || k == self.dirs.len() - 1)
    }

    /// The icosphere of `subdivisions` (0 is the icosahedron): each face
    /// split in four at its edges' midpoints, pushed out to the sphere;
    /// edges shared by two faces share their midpoint, so the mesh stays
    /// welded. Texture coordinates are those of [`super::uv_of`].
    pub fn icosphere(subdivisions: u32) -> SphereMesh {
        let t = (1.0 + 5f32.sqrt()) / 2.0;
        let mut dirs: Vec<Vec3> = [
            (-1.0, t, 0.0),
            (1.0, t, 0.0),
            (-1.0, -t, 0.0),
            (1.0, -t, 0.0),
            (0.0, -1.0, t),
            (0.0, 1.0, t),
            (0.0, -1.0, -t),
            (0.0, 1.0, -t),
            (t, 0.0, -1.0),
            (t, 0.0, 1.0),
            (-t, 0.0, -1.0),
            (-t, 0.0, 1.0),
        ]
        .iter()
        .map(|&(x, y, z)| Vec3::new(x, y, z).normalize())
        .collect();
        let mut indices: Vec<[u32; 3]> = vec![
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ];
        for _ in 0..subdivisions {
            let mut midpoints = std::collections::HashMap::new();
            let mut mid = |a: u32, b: u32, dirs: &mut Vec<Vec3>| -> u32 {
                *midpoints.entry((a.min(b), a.max(b))).or_insert_with(|| {
                    dirs.push((dirs[a as usize] + dirs[b as usize]).normalize());
                    dirs.len() as u32 - 1
                })
            };
            let mut next = Vec::with_capacity(indices.len() * 4);
            for [a, b, c] in indices {
                let ab = mid(a, b, &mut dirs);
                let bc = mid(b, c, &mut dirs);
                let ca = mid(c, a, &mut dirs);
                next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
            }
            indices = next;
        }
        SphereMesh::without_poles(dirs, indices)
    }

    /// A pole-free mesh of unit directions `dirs` and triangles `indices`,
    /// with the texture coordinates of [`super::uv_of`].
    fn without_poles(dirs: Vec<Vec3>, indices: Vec<[u32; 3]>) -> SphereMesh {
        let uv = dirs
            .iter()
            .map(|&d| {
                let (u, v) = super::uv_of(d);
                Vec2::new(u, v)
            })
            .collect();
        SphereMesh {
            stacks: 0,
            slices: 0,
            dirs,
            uv,
            indices,
        }
    }

    /// The equi-angular cube sphere of `subdivisions`: each face of the
    /// cube [−1, 1]³ a grid of n × n cells (n = 2^subdivisions) whose lines
    /// are equally spaced in angle (a face coordinate c in [−1, 1] goes to
    /// tan(c·π/4)), pushed out to the sphere; each cell is split along its
    /// shorter diagonal. Vertices on the cube's edges are shared by the
    /// faces that meet there, so the mesh is welded: 6n² + 2 vertices,
    /// 12n² triangles. Texture coordinates are those of [`super::uv_of`].
    pub fn cube(subdivisions: u32) -> SphereMesh {
        let n = 1i32 << subdivisions;
        let mut dirs: Vec<Vec3> = Vec::new();
        let mut index: std::collections::HashMap<[i32; 3], u32> = std::collections::HashMap::new();
        let mut indices = Vec::with_capacity(12 * (n * n) as usize);
        let warp = |i: i32| (std::f32::consts::FRAC_PI_4 * (2.0 * i as f32 / n as f32 - 1.0)).tan();
        // Each face: the axis of its normal, the normal's sign, and two
        // tangent axes ordered so that (t1 × t2) points outward.
        for axis in 0..3usize {
            for side in [0, n] {
                let (t1, t2) = if side == n {
                    ((axis + 1) % 3, (axis + 2) % 3)
                } else {
                    ((axis + 2) % 3, (axis + 1) % 3)
                };
                let mut vertex = |a: i32, b: i32, dirs: &mut Vec<Vec3>| -> u32 {
                    let mut key = [0i32; 3];
                    key[axis] = side;
                    key[t1] = a;
                    key[t2] = b;
                    *index.entry(key).or_insert_with(|| {
                        let d = Vec3::new(warp(key[0]), warp(key[1]), warp(key[2]));
                        dirs.push(d.normalize());
                        dirs.len() as u32 - 1
                    })
                };
                for a in 0..n {
                    for b in 0..n {
                        let [p, q, r, s] = [
                            vertex(a, b, &mut dirs),
                            vertex(a + 1, b, &mut dirs),
                            vertex(a + 1, b + 1, &mut dirs),
                            vertex(a, b + 1, &mut dirs),
                        ];
                        let d = |i: u32| dirs[i as usize];
                        if d(p).distance(d(r)) <= d(q).distance(d(s)) {
                            indices.extend([[p, q, r], [p, r, s]]);
                        } else {
                            indices.extend([[p, q, s], [q, r, s]]);
                        }
                    }
                }
            }
        }
        SphereMesh::without_poles(dirs, indices)
    }

    /// Tessellates the unit sphere as a UV sphere. Ring r (1..stacks) is at polar angle
    /// θ = rπ/stacks, vertex j of a ring at longitude φ = 2πj/slices, in
    /// direction (sin θ sin φ, cos θ, sin θ cos φ).
    pub fn uv(stacks: u32, slices: u32) -> SphereMesh {
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
        SphereMesh {
            stacks,
            slices,
            dirs,
            uv,
            indices,
        }
    }
}
