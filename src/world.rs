//! The geometry of a scene, ready to trace: meshes merged into one triangle
//! list with a material per triangle, and the BVH over it.

use std::time::{Duration, Instant};

use glam::Vec3;

use crate::accel::{Bvh, Hit, Ray};
use crate::mesh::TriangleMesh;
use crate::scene::Scene;
use crate::shade::Material;
use crate::terrain::{self, TerrainGrid};

/// Traceable scene geometry.
#[derive(Debug, Clone)]
pub struct World {
    /// The terrain grid (for height queries).
    pub terrain: TerrainGrid,
    /// All triangles of the scene.
    pub mesh: TriangleMesh,
    /// Material index of each triangle in `mesh`.
    pub triangle_material: Vec<u16>,
    /// The materials indexed by `triangle_material`.
    pub materials: Vec<Material>,
    /// Hierarchy over `mesh`.
    pub bvh: Bvh,
    /// Time spent generating the terrain.
    pub generate_time: Duration,
    /// Time spent building the BVH.
    pub bvh_time: Duration,
}

/// Surface data at a ray hit.
#[derive(Debug, Clone, Copy)]
pub struct SurfaceHit {
    /// Ray parameter.
    pub t: f32,
    /// World position.
    pub point: Vec3,
    /// Unit geometric normal, facing the incoming ray.
    pub geometric_normal: Vec3,
    /// Unit shading normal, on the same side as the geometric one.
    pub normal: Vec3,
    /// The surface's material.
    pub material: Material,
}

impl World {
    /// Generates the scene's geometry and builds the BVH.
    pub fn build(scene: &Scene) -> World {
        let t0 = Instant::now();
        let ts = &scene.terrain;
        let heights = terrain::generate(
            &ts.generator,
            ts.resolution[0],
            ts.resolution[1],
            ts.height,
            scene.seed,
        );
        let grid = TerrainGrid {
            heights,
            size: ts.size,
        };
        let generate_time = t0.elapsed();
        World {
            generate_time,
            ..World::from_terrain(grid, ts.material, ts.smooth)
        }
    }

    /// A world holding only `grid`'s triangles, all of `material`.
    pub fn from_terrain(grid: TerrainGrid, material: Material, smooth: bool) -> World {
        let mesh = grid.to_mesh(smooth);
        let t1 = Instant::now();
        let bvh = Bvh::build(&mesh);
        let bvh_time = t1.elapsed();
        World {
            terrain: grid,
            triangle_material: vec![0; mesh.indices.len()],
            materials: vec![material],
            mesh,
            bvh,
            generate_time: Duration::ZERO,
            bvh_time,
        }
    }

    /// Number of triangles traced.
    pub fn triangle_count(&self) -> usize {
        self.mesh.indices.len()
    }

    /// The closest surface along `ray`.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<SurfaceHit> {
        let hit = self.bvh.intersect(ray, f32::INFINITY)?;
        Some(self.surface(ray, &hit))
    }

    /// Whether anything blocks `ray` before `t_max`.
    #[inline]
    pub fn occluded(&self, ray: &Ray, t_max: f32) -> bool {
        self.bvh.occluded(ray, t_max)
    }

    fn surface(&self, ray: &Ray, hit: &Hit) -> SurfaceHit {
        let tri = hit.triangle as usize;
        let mut ng = self.mesh.face_normal(tri);
        let mut n = if self.mesh.normals.is_empty() {
            ng
        } else {
            let [a, b, c] = self.mesh.indices[tri].map(|v| self.mesh.normals[v as usize]);
            (a * (1.0 - hit.u - hit.v) + b * hit.u + c * hit.v)
                .try_normalize()
                .unwrap_or(ng)
        };
        if ng.dot(ray.dir) > 0.0 {
            ng = -ng;
            n = -n;
        }
        SurfaceHit {
            t: hit.t,
            point: ray.at(hit.t),
            geometric_normal: ng,
            normal: n,
            material: self.materials[self.triangle_material[tri] as usize],
        }
    }
}
