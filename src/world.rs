//! The geometry of a scene, ready to trace: terrain and rock meshes merged
//! into one triangle list with a material per triangle and one BVH over
//! it, plus the analytic rocks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::Vec3;

use crate::accel::{Bvh, Hit, Ray};
use crate::mesh::TriangleMesh;
use crate::rock::analytic::AnalyticRock;
use crate::rock::{self, scatter, Placement, UvSphere};
use crate::scene::{RockMaterial, Scene};
use crate::shade::Material;
use crate::terrain::{self, TerrainGrid};
use crate::texture::Texture;

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
    /// Per material: interpolate vertex normals (true) or use face normals.
    pub smooth: Vec<bool>,
    /// Textures that materials index.
    pub textures: Vec<Arc<Texture>>,
    /// Rocks traced exactly.
    pub analytic: Vec<AnalyticRock>,
    /// Rocks in the scene (listed, analytic and scattered).
    pub rock_count: usize,
    /// Hierarchy over `mesh`.
    pub bvh: Bvh,
    /// Time spent generating the terrain and rocks.
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
    /// Index of the surface's material.
    pub material: u16,
    /// Index of the triangle hit (0 for analytic rocks).
    pub face: u32,
}

/// Meshes and materials gathered before the BVH is built.
struct Builder {
    mesh: TriangleMesh,
    triangle_material: Vec<u16>,
    materials: Vec<Material>,
    smooth: Vec<bool>,
    textures: Vec<Arc<Texture>>,
}

impl Builder {
    fn material(&mut self, m: Material, smooth: bool) -> u16 {
        self.materials.push(m);
        self.smooth.push(smooth);
        (self.materials.len() - 1) as u16
    }

    fn add(&mut self, mesh: &TriangleMesh, material: u16) {
        self.mesh.append(mesh);
        self.triangle_material
            .extend(std::iter::repeat_n(material, mesh.indices.len()));
    }

    /// The material of a rock at `place`.
    fn rock_material(&mut self, m: &RockMaterial, place: &Placement, smooth: bool) -> u16 {
        match m {
            RockMaterial::Albedo(c) => self.material(Material::Albedo(*c), smooth),
            RockMaterial::Texture(t) => {
                let index = match self.textures.iter().position(|u| Arc::ptr_eq(u, t)) {
                    Some(i) => i,
                    None => {
                        self.textures.push(t.clone());
                        self.textures.len() - 1
                    }
                };
                let m = Material::RockTexture {
                    texture: index as u16,
                    object_from_world: place.world_from_object().inverse(),
                };
                self.material(m, smooth)
            }
        }
    }
}

impl World {
    /// Generates the scene's terrain and rocks and builds the BVH.
    pub fn build(scene: &Scene) -> World {
        let t0 = Instant::now();
        let ts = &scene.terrain;
        let heights = terrain::generate(&ts.recipe(), scene.seed);

        let grid = TerrainGrid {
            heights,
            size: ts.size,
        };
        let mut b = Builder {
            mesh: TriangleMesh::default(),
            triangle_material: Vec::new(),
            materials: Vec::new(),
            smooth: Vec::new(),
            textures: Vec::new(),
        };
        let terrain_material = b.material(ts.material, ts.smooth);
        b.add(&grid.to_mesh(ts.smooth), terrain_material);

        let mut analytic = Vec::new();
        // Rocks with the same tessellation share it: built once, indexed.
        let mut spheres: Vec<UvSphere> = Vec::new();
        let mut sphere = |stacks: u32, slices: u32| -> usize {
            if let Some(i) = spheres
                .iter()
                .position(|s| s.stacks == stacks && s.slices == slices)
            {
                return i;
            }
            spheres.push(UvSphere::new(stacks, slices));
            spheres.len() - 1
        };
        let rock_spheres: Vec<Option<usize>> = scene
            .rocks
            .iter()
            .map(|r| (!r.analytic).then(|| sphere(r.stacks, r.slices)))
            .collect();
        let scatter_sphere = scene.scatter.as_ref().map(|s| sphere(s.stacks, s.slices));
        for (r, tessellation) in scene.rocks.iter().zip(&rock_spheres) {
            let mut place = r.place;
            if let Some(sink) = r.rest_sink {
                let ry = place.axes().y;
                place.center.y =
                    grid.height_at(place.center.x, place.center.z) + ry * (1.0 - 2.0 * sink);
            }
            let material = b.rock_material(&r.material, &place, !r.flat);
            match tessellation {
                None => analytic.push(AnalyticRock::new(place, material)),
                Some(i) => {
                    let mesh =
                        rock::world_mesh(&spheres[*i], &place, r.displacement.as_ref(), r.flat);
                    b.add(&mesh, material);
                }
            }
        }
        let mut rock_count = scene.rocks.len();
        if let (Some(s), Some(i)) = (&scene.scatter, scatter_sphere) {
            // One mesh for all scattered rocks, placed many times.
            let shared = rock::object_mesh(&spheres[i], s.displacement.as_ref());
            let placements = scatter::scatter(&s.params, &grid);
            rock_count += placements.len();
            let shared_material = match &s.material {
                RockMaterial::Albedo(c) => Some(b.material(Material::Albedo(*c), true)),
                RockMaterial::Texture(_) => None,
            };
            for place in &placements {
                let material =
                    shared_material.unwrap_or_else(|| b.rock_material(&s.material, place, true));
                b.add(&rock::place_mesh(&shared, place), material);
            }
        }
        let generate_time = t0.elapsed();
        let t1 = Instant::now();
        let bvh = Bvh::build(&b.mesh);
        World {
            terrain: grid,
            mesh: b.mesh,
            triangle_material: b.triangle_material,
            materials: b.materials,
            smooth: b.smooth,
            textures: b.textures,
            analytic,
            rock_count,
            bvh,
            generate_time,
            bvh_time: t1.elapsed(),
        }
    }

    /// A world holding only `grid`'s triangles, all of `material`.
    pub fn from_terrain(grid: TerrainGrid, material: Material, smooth: bool) -> World {
        let mesh = grid.to_mesh(smooth);
        let t1 = Instant::now();
        let bvh = Bvh::build(&mesh);
        World {
            terrain: grid,
            triangle_material: vec![0; mesh.indices.len()],
            materials: vec![material],
            smooth: vec![smooth],
            textures: Vec::new(),
            analytic: Vec::new(),
            rock_count: 0,
            mesh,
            bvh,
            generate_time: Duration::ZERO,
            bvh_time: t1.elapsed(),
        }
    }

    /// Number of triangles traced.
    pub fn triangle_count(&self) -> usize {
        self.mesh.indices.len()
    }

    /// The material with index `m`.
    #[inline]
    pub fn material(&self, m: u16) -> &Material {
        &self.materials[m as usize]
    }

    /// Albedo of the surface at `hit`.
    #[inline]
    pub fn albedo(&self, hit: &SurfaceHit) -> Vec3 {
        self.materials[hit.material as usize].albedo(
            hit.point,
            hit.normal,
            hit.face,
            &self.textures,
        )
    }

    /// The closest surface along `ray`.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<SurfaceHit> {
        let hit = self.bvh.intersect(ray, f32::INFINITY);
        let t_mesh = hit.map_or(f32::INFINITY, |h| h.t);
        let mut best_rock: Option<(f32, &AnalyticRock)> = None;
        for rock in &self.analytic {
            let limit = best_rock.map_or(t_mesh, |b| b.0);
            if let Some(t) = rock.intersect(ray, 0.0, limit) {
                best_rock = Some((t, rock));
            }
        }
        match (best_rock, hit) {
            (Some((t, rock)), _) => Some(self.rock_surface(ray, t, rock)),
            (None, Some(h)) => Some(self.surface(ray, &h)),
            (None, None) => None,
        }
    }

    /// Whether anything blocks `ray` before `t_max`.
    #[inline]
    pub fn occluded(&self, ray: &Ray, t_max: f32) -> bool {
        self.analytic
            .iter()
            .any(|r| r.intersect(ray, 0.0, t_max).is_some())
            || self.bvh.occluded(ray, t_max)
    }

    fn rock_surface(&self, ray: &Ray, t: f32, rock: &AnalyticRock) -> SurfaceHit {
        let point = ray.at(t);
        let mut n = rock.normal(point);
        if n.dot(ray.dir) > 0.0 {
            n = -n;
        }
        SurfaceHit {
            t,
            point,
            geometric_normal: n,
            normal: n,
            material: rock.material,
            face: 0,
        }
    }

    fn surface(&self, ray: &Ray, hit: &Hit) -> SurfaceHit {
        let tri = hit.triangle as usize;
        let material = self.triangle_material[tri];
        let mut ng = self.mesh.face_normal(tri);
        let mut n = if self.smooth[material as usize] {
            let [a, b, c] = self.mesh.indices[tri].map(|v| self.mesh.normals[v as usize]);
            (a * (1.0 - hit.u - hit.v) + b * hit.u + c * hit.v)
                .try_normalize()
                .unwrap_or(ng)
        } else {
            ng
        };
        if ng.dot(ray.dir) > 0.0 {
            ng = -ng;
        }
        if n.dot(ng) < 0.0 {
            n = -n;
        }
        SurfaceHit {
            t: hit.t,
            point: ray.at(hit.t),
            geometric_normal: ng,
            normal: n,
            material,
            face: hit.triangle,
        }
    }
}
