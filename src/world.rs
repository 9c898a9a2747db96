//! The geometry of a scene, ready to trace: the terrain and the rocks as
//! objects under one top-level BVH (see [`crate::accel::top`]), with a
//! material per object, plus the analytic rocks.
//!
//! The terrain is traced through its grid hierarchy. Each listed rock is a
//! mesh of its own (displaced in world space); scattered rocks share one
//! object-space mesh and are instances of it. [`BuildOptions`] can trace the
//! terrain as a triangle mesh and the scattered rocks as copies instead; the
//! images agree (tests compare them), which is how the faster routes are
//! checked.

use std::sync::Arc;
use std::time::{Duration, Instant};

use glam::{Affine3A, Vec2, Vec3, Vec3A};

use crate::accel::octet::open_by_octant;
use crate::accel::plants::{Grown, PlantField, PlantHit};
use crate::accel::{Bvh, HeightField, Object, ObjectHit, ObjectRef, TopLevel, View};
use crate::mesh::{face_normal, TriangleMesh};
use crate::ray::Ray;
use crate::rock::analytic::AnalyticRock;
use crate::rock::{self, scatter, Placement, SphereMesh, Tessellation};
use crate::scene::{RockMaterial, Scene};
use crate::shade::layers::{bump_gradient, Bump, Ground, Layers};
use crate::shade::{Material, SurfacePoint};
use crate::terrain::{self, GroundAttributes, TerrainGrid};
use crate::texture::Texture;

mod cutout;
pub use cutout::Cutout;

/// How the geometry is traced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildOptions {
    /// The terrain through its grid hierarchy (true) or as a triangle mesh
    /// through a BVH (false).
    pub terrain_grid: bool,
    /// Scattered rocks as instances of one mesh (true) or as transformed
    /// copies, each with its own BVH (false).
    pub instancing: bool,
    /// How many of the image's pixels will be traced (a farm part's
    /// region); None for all of them. The terrain's neighbourhood peaks
    /// start at the finest level that pays for that many camera rays.
    pub traced_pixels: Option<u64>,
    /// The most tile samples whose smooth normals are stored; a larger
    /// tile's are made from its heights when shading (the same bits).
    /// [`STORED_NORMALS`] by default.
    pub stored_normals: usize,
}

impl Default for BuildOptions {
    fn default() -> BuildOptions {
        BuildOptions {
            terrain_grid: true,
            instancing: true,
            traced_pixels: None,
            stored_normals: STORED_NORMALS,
        }
    }
}

/// The most samples a tile keeps smooth normals for (1.5 GiB of them,
/// about 11585²): computing them from the heights when shading costs
/// about 15% of a frame, storing them 12 bytes a sample, which a 32769²
/// tile cannot spare.
pub const STORED_NORMALS: usize = 1 << 27;

/// Traceable scene geometry.
#[derive(Debug, Clone)]
pub struct World {
    /// Smooth vertex normals, per sample, of each terrain grid (the tile,
    /// then any far-field rings) by object index; empty for flat shading.
    /// A tile over [`STORED_NORMALS`] samples has none: they come from its
    /// heights ([`HeightField::vertex_normal`]). A tile traced as a mesh
    /// carries its own.
    terrain_normals: Vec<(u32, Vec<Vec3>)>,
    /// Meshes for shading (positions, normals, triangles), indexed like the
    /// top level's BVHs.
    meshes: Vec<TriangleMesh>,
    /// Per object, for rocks: the map into the rock's unit-sphere space
    /// ([`RockSpace`], 4 bytes an object; the maps themselves in
    /// `rock_frames`).
    rock_space: Runs<RockSpace>,
    /// The maps of [`RockSpace`] indices.
    rock_frames: Vec<Affine3A>,
    /// Material of each object.
    object_material: Runs<u16>,
    /// The materials indexed by `object_material`.
    pub materials: Vec<Material>,
    /// Per material: interpolate vertex normals (true) or use face normals.
    pub smooth: Vec<bool>,
    /// Per material: the share of its albedo a thin surface (a leaf)
    /// passes to its other side, 0 for opaque ones.
    pub translucency: Vec<f32>,
    /// Per material: bumps in a rock's own space (tessellated rocks).
    bumps: Vec<Option<Bump>>,
    /// Textures that materials index.
    pub textures: Vec<Arc<Texture>>,
    /// Texture coordinates of each mesh's vertices (indexed as `meshes`),
    /// where it has images.
    uvs: Vec<Option<Arc<Vec<Vec2>>>>,
    /// Per material: how rays pass through it, where some may
    /// ([`Cutout`]).
    cutouts: Vec<Option<Cutout>>,
    /// Whether any material is cut out: otherwise every hit stops a ray.
    any_cutout: bool,
    /// The terrain's layered material and what its masks read of the
    /// ground, where the terrain has one.
    layers: Option<(Arc<Layers>, GroundAttributes)>,
    /// The land's lakes and rivers, if it has any.
    pub streams: Option<Streams>,
    /// Rocks traced exactly.
    pub analytic: Vec<AnalyticRock>,
    /// Rocks in the scene (listed, analytic and scattered).
    pub rock_count: usize,
    /// Instances of the scene's populations.
    pub population_count: usize,
    /// Plants placed.
    pub plant_count: usize,
    /// The plants, traced where they stand ([`PlantField`]), with each
    /// species' variants (for their meshes' normals) and the material of
    /// each of its parts.
    plants: Option<Plants>,
    /// Triangles rendered (an instance counts its mesh's triangles).
    triangles: usize,
    /// Terrain and rocks under one top level.
    accel: TopLevel,
    /// Time spent generating the terrain and rocks.
    pub generate_time: Duration,
    /// Time spent building the acceleration structures.
    pub bvh_time: Duration,
}

/// The plants as the world keeps them.
#[derive(Debug, Clone)]
struct Plants {
    field: PlantField,
    variants: Vec<Vec<Arc<crate::plant::Plant>>>,
    materials: Vec<[u16; 3]>,
}

/// The land's lakes and rivers: their surface, a mesh over the grid cells
/// that hold water, and where the water stands. Like the sea's plane the
/// surface is met only by rays looking for the first surface from above
/// ([`World::water_hit`]); it casts no shadow (light under it falls by
/// the water's absorption instead).
#[derive(Debug, Clone)]
pub struct Streams {
    /// The surface.
    mesh: TriangleMesh,
    /// Its hierarchy.
    bvh: Bvh,
    /// Levels, nearest water and moisture per sample.
    pub waters: terrain::hydrology::Waters,
}

impl Streams {
    /// The streams of `waters`, traced over its mesh.
    pub fn new(waters: terrain::hydrology::Waters) -> Streams {
        let mesh = waters.mesh();
        let bvh = Bvh::build(&mesh);
        Streams { mesh, bvh, waters }
    }

    /// Triangles of the surface.
    pub fn triangle_count(&self) -> usize {
        self.mesh.indices.len()
    }

    /// Bytes held by the surface, its hierarchy and the water's fields.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(self.mesh.positions.as_slice())
            + std::mem::size_of_val(self.mesh.indices.as_slice())
            + self.bvh.memory_bytes()
            + self.waters.memory_bytes()
    }
}

/// A [`World`] with what one view keeps ([`World::view`]): it traces as
/// the world does, with the same answers, and reads as the world
/// otherwise.
#[derive(Debug)]
pub struct Viewed<'w> {
    world: &'w World,
    view: View,
}

impl Viewed<'_> {
    /// [`World::intersect`] in this view.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<SurfaceHit> {
        self.world.intersect_in(&self.view, ray)
    }

    /// [`World::intersect_batch`] in this view.
    pub fn intersect_batch(&self, rays: &[Ray]) -> Vec<Option<SurfaceHit>> {
        self.world.intersect_batch_in(&self.view, rays)
    }

    /// [`World::occluded`] in this view.
    #[inline]
    pub fn occluded(&self, ray: &Ray, t_max: f32) -> bool {
        self.world.occluded_in(&self.view, ray, t_max)
    }

    /// [`World::occluded_batch`] in this view.
    pub fn occluded_batch(&self, rays: &[Ray], t_max: &[f32]) -> Vec<bool> {
        self.world.occluded_batch_in(&self.view, rays, t_max)
    }

    /// Bytes the view keeps (beside the world's).
    pub fn memory_bytes(&self) -> usize {
        self.view.memory_bytes()
    }
}

impl std::ops::Deref for Viewed<'_> {
    type Target = World;
    fn deref(&self) -> &World {
        self.world
    }
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
    /// Index of the object hit: under the top level, or past its objects
    /// for analytic rocks (the top level's count plus the rock's index).
    pub object: u32,
    /// Texture coordinates there (v up the image, as OBJ has them), on
    /// meshes that have them; zero elsewhere.
    pub uv: Vec2,
}

impl SurfaceHit {
    /// The same point seen from its other side (a thin surface's back).
    #[inline]
    pub fn flipped(&self) -> SurfaceHit {
        SurfaceHit {
            geometric_normal: -self.geometric_normal,
            normal: -self.normal,
            ..*self
        }
    }
}

/// Where an object is a rock, how to reach its own space: not a rock, an
/// instance (its mesh is in the rock's space), or an index into the
/// world's rock frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RockSpace(u32);

impl RockSpace {
    const NONE: RockSpace = RockSpace(u32::MAX);
    const INSTANCE: RockSpace = RockSpace(u32::MAX - 1);
}

/// A value for each of a list of objects, kept as runs of equal values:
/// a scatter's thousands of rocks share one material and one kind of
/// rock space, so they cost nothing here.
#[derive(Debug, Clone)]
struct Runs<T> {
    /// Index of each run's first object, increasing from 0.
    starts: Vec<u32>,
    /// Each run's value.
    values: Vec<T>,
    /// Number of objects.
    len: usize,
}

impl<T: Copy + PartialEq> Runs<T> {
    fn new(values: &[T]) -> Runs<T> {
        let mut runs = Runs {
            starts: Vec::new(),
            values: Vec::new(),
            len: values.len(),
        };
        for (k, &v) in values.iter().enumerate() {
            if runs.values.last() != Some(&v) {
                runs.starts.push(k as u32);
                runs.values.push(v);
            }
        }
        runs
    }

    /// The value of object `k`, or `None` past the last object.
    #[inline]
    fn get(&self, k: usize) -> Option<T> {
        if k >= self.len {
            return None;
        }
        let run = self.starts.partition_point(|&s| s as usize <= k) - 1;
        Some(self.values[run])
    }

    fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(self.starts.as_slice())
            + std::mem::size_of_val(self.values.as_slice())
    }
}

/// Objects, meshes and materials gathered before the top level is built.
#[derive(Default)]
struct Builder {
    objects: Vec<Object>,
    /// Per object, where it is a rock: world (or, for an instance, its
    /// mesh's) space to the rock's unit-sphere space, for the texture
    /// coordinates of the export.
    rock_space: Vec<RockSpace>,
    rock_frames: Vec<Affine3A>,
    meshes: Vec<TriangleMesh>,
    /// World from object, of each placed object.
    placements: Vec<Affine3A>,
    object_material: Vec<u16>,
    materials: Vec<Material>,
    smooth: Vec<bool>,
    translucency: Vec<f32>,
    bumps: Vec<Option<Bump>>,
    textures: Vec<Arc<Texture>>,
    uvs: Vec<Option<Arc<Vec<Vec2>>>>,
    cutouts: Vec<Option<Cutout>>,
    triangles: usize,
    /// Time spent building acceleration structures so far.
    accel_time: Duration,
}

impl Builder {
    /// The object placed last is a rock whose own space `to_rock` maps into.
    fn rock_frame(&mut self, to_rock: Affine3A) {
        self.rock_frames.push(to_rock);
        *self.rock_space.last_mut().expect("a rock was placed") =
            RockSpace(self.rock_frames.len() as u32 - 1);
    }

    fn material(&mut self, m: Material, smooth: bool) -> u16 {
        self.materials.push(m);
        self.smooth.push(smooth);
        self.translucency.push(0.0);
        self.bumps.push(None);
        self.cutouts.push(None);
        (self.materials.len() - 1) as u16
    }

    /// Adds a mesh for objects to share; returns its index.
    fn mesh(&mut self, mesh: TriangleMesh) -> u32 {
        self.mesh_with_uvs(mesh, None)
    }

    /// Adds a mesh with texture coordinates for its vertices.
    fn mesh_with_uvs(&mut self, mesh: TriangleMesh, uvs: Option<Arc<Vec<Vec2>>>) -> u32 {
        self.meshes.push(mesh);
        self.uvs.push(uvs);
        (self.meshes.len() - 1) as u32
    }

    /// The index of texture `t` among the world's, added if new.
    fn texture(&mut self, t: &Arc<Texture>) -> u16 {
        match self.textures.iter().position(|u| Arc::ptr_eq(u, t)) {
            Some(i) => i as u16,
            None => {
                self.textures.push(t.clone());
                (self.textures.len() - 1) as u16
            }
        }
    }

    /// The material of a population's part: its colour or image, cut out
    /// where it has an opacity below 1.
    fn part_material(&mut self, part: &crate::population::Part) -> u16 {
        let look = match &part.image {
            Some(t) => Material::Textured {
                texture: self.texture(t),
                variation: 0.0,
                seed: 0,
            },
            None => Material::Albedo(part.color),
        };
        let material = self.material(look, true);
        if part.cut_out() {
            let alpha = part.alpha.as_ref().map(|t| self.texture(t));
            self.cutouts[material as usize] = Some(Cutout {
                opacity: part.opacity,
                alpha,
            });
        }
        material
    }

    /// Adds mesh `mesh` as an object, in world space or placed.
    fn place(&mut self, mesh: u32, place: Option<Affine3A>, material: u16) {
        self.triangles += self.meshes[mesh as usize].indices.len();
        let placement = match place {
            None => Object::WORLD,
            Some(m) => {
                self.placements.push(m);
                self.placements.len() as u32 - 1
            }
        };
        self.objects.push(Object::Mesh { mesh, placement });
        self.rock_space.push(RockSpace::NONE);
        self.object_material.push(material);
    }

    /// Adds the terrain, traced through its grid hierarchy, built for
    /// about `rays` camera rays a view ([`HeightField::for_rays`]).
    fn terrain(&mut self, grid: TerrainGrid, material: u16, rays: usize) {
        self.triangles += grid.triangle_count();
        let t0 = Instant::now();
        let field = HeightField::for_rays(grid, rays);
        self.objects.push(Object::Terrain(Box::new(field)));
        self.rock_space.push(RockSpace::NONE);
        self.accel_time += t0.elapsed();
        self.object_material.push(material);
    }

    /// Adds a far-field ring, traced through its grid hierarchy around its
    /// hole; its object index.
    fn ring(&mut self, ring: terrain::far_field::Ring, material: u16) -> u32 {
        self.triangles += ring.grid.triangle_count();
        let t0 = Instant::now();
        let field = HeightField::with_hole(ring.grid, ring.hole);
        self.objects.push(Object::Terrain(Box::new(field)));
        self.rock_space.push(RockSpace::NONE);
        self.accel_time += t0.elapsed();
        self.object_material.push(material);
        self.objects.len() as u32 - 1
    }

    fn rock_material(&mut self, m: &RockMaterial, smooth: bool) -> u16 {
        match m {
            RockMaterial::Albedo(c) => self.material(Material::Albedo(*c), smooth),
            RockMaterial::Texture(t, triplanar) => {
                let m = Material::RockTexture {
                    texture: self.texture(t),
                    triplanar: *triplanar,
                };
                self.material(m, smooth)
            }
        }
    }

    /// Builds the BVHs and the top level.
    fn finish(
        self,
        terrain_normals: Vec<(u32, Vec<Vec3>)>,
        analytic: Vec<AnalyticRock>,
        rock_count: usize,
        generate_time: Duration,
    ) -> World {
        let t0 = Instant::now();
        let bvhs: Vec<Bvh> = self.meshes.iter().map(Bvh::build).collect();
        let accel = TopLevel::build(self.objects, bvhs, self.placements);
        World {
            terrain_normals,
            meshes: self.meshes,
            rock_space: Runs::new(&self.rock_space),
            rock_frames: self.rock_frames,
            object_material: Runs::new(&self.object_material),
            materials: self.materials,
            smooth: self.smooth,
            translucency: self.translucency,
            bumps: self.bumps,
            textures: self.textures,
            uvs: self.uvs,
            any_cutout: self.cutouts.iter().any(Option::is_some),
            cutouts: self.cutouts,
            layers: None,
            streams: None,
            analytic,
            rock_count,
            population_count: 0,
            plant_count: 0,
            plants: None,
            triangles: self.triangles,
            accel,
            generate_time: generate_time.saturating_sub(self.accel_time),
            bvh_time: self.accel_time + t0.elapsed(),
        }
    }
}

impl World {
    /// Generates the scene's terrain and rocks and builds the acceleration
    /// structures, tracing the terrain through its grid and scattered rocks
    /// as instances.
    pub fn build(scene: &Scene) -> World {
        World::build_with(scene, BuildOptions::default())
    }

    /// [`World::build`] with a choice of structures.
    pub fn build_with(scene: &Scene, options: BuildOptions) -> World {
        let t0 = Instant::now();
        let land = terrain::land(&scene.terrain.recipe(), scene.seed);
        World::assemble(scene, land, options, t0)
    }

    /// [`World::build`] over `land`, the scene's terrain already generated
    /// (by a caller that needs it too); `generate_time` counts the rocks.
    pub fn build_on(scene: &Scene, land: terrain::Land) -> World {
        World::assemble(scene, land, BuildOptions::default(), Instant::now())
    }

    /// The rocks of `scene` placed on `land`'s tile, and the structures over
    /// both; `generate_time` runs from `t0`.
    fn assemble(scene: &Scene, land: terrain::Land, options: BuildOptions, t0: Instant) -> World {
        let ts = &scene.terrain;
        let terrain::Land {
            tile: grid,
            rings,
            waters,
        } = land;
        let mut b = Builder::default();
        let terrain_material = b.material(ts.material, ts.smooth);
        // What needs the grid's heights first: smooth normals, rocks
        // resting on the ground, scattered placements. Then the grid goes
        // to its hierarchy (or becomes a mesh). Above `stored_normals` the
        // tile's normals are made from its heights when shading instead.
        let samples = grid.heights.width * grid.heights.height;
        let mut terrain_normals =
            if options.terrain_grid && ts.smooth && samples <= options.stored_normals {
                vec![(0, grid.vertex_normals())]
            } else {
                Vec::new()
            };
        let layers = ts.layers.as_ref().map(|l| {
            let uses =
                |f: fn(&crate::shade::layers::Mask) -> bool| l.layers.iter().any(|x| f(&x.mask));
            let attributes =
                grid.attributes(uses(|m| m.curvature.is_some()), uses(|m| m.flow.is_some()));
            (l.clone(), attributes)
        });
        let rock_places: Vec<Placement> = scene
            .rocks
            .iter()
            .map(|r| {
                let mut place = r.place;
                if let Some(sink) = r.rest_sink {
                    let ry = place.axes().y;
                    place.center.y =
                        grid.height_at(place.center.x, place.center.z) + ry * (1.0 - 2.0 * sink);
                }
                place
            })
            .collect();
        let scattered = scene.scatter.as_ref().map_or(Vec::new(), |s| {
            scatter::scatter(&s.params, &grid, waters.as_ref())
        });
        let planted = crate::plant::place::place(&scene.plants, &grid, waters.as_ref());
        let populated: Vec<Vec<Affine3A>> = scene
            .populations
            .iter()
            .map(|p| crate::population::place(p, &grid, waters.as_ref()))
            .collect();
        if options.terrain_grid {
            let im = &scene.image;
            let pixels = options
                .traced_pixels
                .unwrap_or(im.width as u64 * im.height as u64);
            let camera_rays = (pixels * im.samples as u64) as usize;
            b.terrain(grid, terrain_material, camera_rays);
        } else {
            let mesh = b.mesh(grid.to_mesh(ts.smooth));
            b.place(mesh, None, terrain_material);
        }
        // The lakes' and rivers' surface, a mesh over the cells with water.
        let t_streams = Instant::now();
        let streams = waters.filter(|w| !w.is_empty()).map(Streams::new);
        b.accel_time += t_streams.elapsed();
        // The far field's rings, always through their grids (a ring's hole
        // has no mesh counterpart).
        for ring in rings {
            let normals = ts.smooth.then(|| ring.grid.vertex_normals());
            let object = b.ring(ring, terrain_material);
            if let Some(n) = normals {
                terrain_normals.push((object, n));
            }
        }

        let mut analytic = Vec::new();
        // Rocks with the same tessellation share it: built once, indexed.
        let mut spheres: Vec<SphereMesh> = Vec::new();
        let mut kinds: Vec<Tessellation> = Vec::new();
        let mut sphere = |t: Tessellation| -> usize {
            if let Some(i) = kinds.iter().position(|k| *k == t) {
                return i;
            }
            kinds.push(t);
            spheres.push(t.mesh());
            spheres.len() - 1
        };
        let rock_spheres: Vec<Option<usize>> = scene
            .rocks
            .iter()
            .map(|r| (!r.analytic).then(|| sphere(r.tessellation)))
            .collect();
        let scatter_sphere = scene.scatter.as_ref().map(|s| sphere(s.tessellation));
        for ((r, tessellation), &place) in scene.rocks.iter().zip(&rock_spheres).zip(&rock_places) {
            let material = b.rock_material(&r.material, !r.flat);
            b.bumps[material as usize] = r.bump;
            match tessellation {
                None => analytic.push(AnalyticRock::new(place, material)),
                Some(i) => {
                    // Displaced in world space, so a mesh of its own.
                    let mesh = b.mesh(rock::world_mesh(
                        &spheres[*i],
                        &place,
                        r.displacement.as_ref(),
                        r.flat,
                    ));
                    b.place(mesh, None, material);
                    b.rock_frame(place.world_from_object().inverse());
                }
            }
        }
        let mut rock_count = scene.rocks.len();
        let scatter = scene.scatter.as_ref().filter(|_| !scattered.is_empty());
        if let (Some(s), Some(i)) = (scatter, scatter_sphere) {
            // A few object-space meshes (variants) for all scattered rocks,
            // each rock an instance of the one its index hashes to.
            let variants: Vec<TriangleMesh> = (0..s.variants)
                .map(|v| {
                    rock::variant_mesh(
                        &spheres[i],
                        s.displacement.as_ref(),
                        s.params.seed,
                        v,
                        s.variants,
                        s.facets,
                    )
                })
                .collect();
            let placements = scattered;
            rock_count += placements.len();
            // One material for the lot; a tint varies by the rock's place
            // in the run of objects that starts here.
            let material = match &s.material {
                RockMaterial::Albedo(c) if s.variation > 0.0 => b.material(
                    Material::Tinted {
                        color: *c,
                        variation: s.variation,
                        seed: s.params.seed,
                        first: b.objects.len() as u32,
                    },
                    true,
                ),
                m => b.rock_material(m, true),
            };
            b.bumps[material as usize] = s.bump;
            let instanced: Option<Vec<u32>> = options
                .instancing
                .then(|| variants.iter().map(|m| b.mesh(m.clone())).collect());
            for (k, place) in placements.iter().enumerate() {
                let v = scatter::variant_of(s.params.seed, k, s.variants);
                match &instanced {
                    Some(meshes) => b.place(meshes[v], Some(place.world_from_object()), material),
                    None => {
                        let mesh = b.mesh(rock::place_mesh(&variants[v], place));
                        b.place(mesh, None, material);
                    }
                }
                // An instance's mesh is in the rock's own space already.
                match instanced {
                    Some(_) => *b.rock_space.last_mut().expect("just placed") = RockSpace::INSTANCE,
                    None => b.rock_frame(place.world_from_object().inverse()),
                }
            }
        }
        // Populations: one mesh each, an instance per place.
        let mut population_count = 0;
        for (p, places) in scene.populations.iter().zip(&populated) {
            population_count += places.len();
            for part in p.parts.iter() {
                let material = b.part_material(part);
                let uvs = (!part.uvs.is_empty()).then(|| Arc::new(part.uvs.clone()));
                let shared = options
                    .instancing
                    .then(|| b.mesh_with_uvs(part.mesh.clone(), uvs.clone()));
                for &place in places {
                    match shared {
                        Some(mesh) => b.place(mesh, Some(place), material),
                        None => {
                            let copy = rock::place_affine(&part.mesh, place);
                            let mesh = b.mesh_with_uvs(copy, uvs.clone());
                            b.place(mesh, None, material);
                        }
                    }
                }
            }
        }
        // Plants: a material per species' part; the plants themselves are
        // kept as their stands and traced where they stand.
        let plant_materials: Vec<[u16; 3]> = scene
            .plants
            .iter()
            .map(|p| {
                let s = &p.species;
                crate::plant::PARTS.map(|(name, _)| {
                    let (look, smooth, translucency) = match name {
                        "bark" => (Material::Albedo(s.bark_color), true, 0.0),
                        // Cards: their image, tinted by the plant's spot.
                        "leaf" if p.leaf_image.is_some() => {
                            let image = p.leaf_image.as_ref().expect("an image");
                            let look = Material::Textured {
                                texture: b.texture(&image.color),
                                variation: s.leaf_color_var,
                                seed: p.seed,
                            };
                            let alpha = b.texture(&image.alpha);
                            let material = b.material(look, false);
                            b.translucency[material as usize] = s.translucency;
                            b.cutouts[material as usize] = Some(Cutout {
                                opacity: 1.0,
                                alpha: Some(alpha),
                            });
                            return material;
                        }
                        // Tinted by the plant's spot ([`SurfaceHit::object`]).
                        "leaf" => (
                            Material::Tinted {
                                color: s.leaf_color,
                                variation: s.leaf_color_var,
                                seed: p.seed,
                                first: 0,
                            },
                            false,
                            s.translucency,
                        ),
                        _ => (Material::Albedo(s.flower_color), false, 0.0),
                    };
                    let material = b.material(look, smooth);
                    b.translucency[material as usize] = translucency;
                    material
                })
            })
            .collect();
        let generate_time = t0.elapsed();
        let mut world = b.finish(terrain_normals, analytic, rock_count, generate_time);
        world.population_count = population_count;
        if !scene.plants.is_empty() {
            let t1 = Instant::now();
            let variants: Vec<Vec<Arc<crate::plant::Plant>>> =
                scene.plants.iter().map(|p| p.variants.clone()).collect();
            // Leaves are pruned by the camera's pixels, which the scene's
            // camera (at a sequence's narrowest view) sets for every frame.
            let footprint = scene.pixel_footprint();
            let grown: Vec<Grown> = scene
                .plants
                .iter()
                .map(|p| Grown {
                    variants: p.variants.iter().map(|v| &**v).collect(),
                    prune: (p.prune > 0.0).then(|| footprint.times(p.prune)),
                    cut: p.leaf_image.is_some(),
                })
                .collect();
            let field = PlantField::build(planted, &grown);
            world.plant_count = field.plant_count();
            world.triangles += field.triangle_count();
            world.plants = Some(Plants {
                field,
                variants,
                materials: plant_materials,
            });
            world.bvh_time += t1.elapsed();
        }
        world.layers = layers;
        world.streams = streams;
        world
    }

    /// The tessellated rocks (listed and scattered), each as a mesh in
    /// world units with world-space unit normals; analytic rocks, which
    /// have no triangles, are left out. An instance's mesh is its shared
    /// mesh carried by its placement.
    pub fn rock_meshes(&self) -> Vec<TriangleMesh> {
        self.rock_exports().into_iter().map(|r| r.mesh).collect()
    }

    /// The tessellated rocks as [`rock_meshes`](World::rock_meshes) gives
    /// them, each with its texture coordinates (those the renderer looks
    /// textures up by: [`rock::uv_of`] of the vertex's direction in the
    /// rock's own space) and its look (colour, or texture file).
    pub fn rock_exports(&self) -> Vec<rock::export::ExportRock> {
        self.accel
            .objects()
            .enumerate()
            .filter_map(|(k, object)| {
                let space = match self.rock_space.get(k)? {
                    RockSpace::NONE => return None,
                    RockSpace::INSTANCE => Affine3A::IDENTITY,
                    RockSpace(i) => self.rock_frames[i as usize],
                };
                let ObjectRef::Mesh { mesh, placement } = object else {
                    return None;
                };
                let source = &self.meshes[mesh as usize];
                let uv = source
                    .positions
                    .iter()
                    .map(|&p| {
                        let (u, v) = rock::uv_of(space.transform_point3(p).normalize_or(Vec3::Y));
                        glam::Vec2::new(u, v)
                    })
                    .collect();
                let mut placed = source.clone();
                if let Some(object_from_world) = self.accel.object_from_world(placement) {
                    let world_from_object = object_from_world.inverse();
                    let n = object_from_world.matrix3.transpose();
                    for p in &mut placed.positions {
                        *p = world_from_object.transform_point3(*p);
                    }
                    for v in &mut placed.normals {
                        *v = (n * *v).normalize_or_zero();
                    }
                }
                let material = self.object_material.get(k).expect("an object's material");
                let look = match &self.materials[material as usize] {
                    Material::RockTexture { texture, .. } => {
                        rock::export::Look::Texture(self.textures[*texture as usize].source.clone())
                    }
                    Material::Albedo(c) => rock::export::Look::Albedo(*c),
                    &Material::Tinted {
                        color,
                        variation,
                        seed,
                        first,
                    } => rock::export::Look::Albedo(Material::tint(
                        color,
                        variation,
                        seed,
                        k as u32 - first,
                    )),
                    _ => rock::export::Look::Albedo(Vec3::splat(0.5)),
                };
                Some(rock::export::ExportRock {
                    mesh: placed,
                    uv,
                    look,
                })
            })
            .collect()
    }

    /// A world of just a terrain with one material, traced through its grid.
    pub fn from_terrain(grid: TerrainGrid, material: Material, smooth: bool) -> World {
        let mut b = Builder::default();
        let m = b.material(material, smooth);
        let normals = if smooth {
            vec![(0, grid.vertex_normals())]
        } else {
            Vec::new()
        };
        b.terrain(grid, m, usize::MAX);
        b.finish(normals, Vec::new(), 0, Duration::ZERO)
    }

    /// Triangles rendered (each instance counts its mesh's triangles).
    pub fn triangle_count(&self) -> usize {
        self.triangles
    }

    /// Triangles stored: the terrain grid's, plus each distinct mesh's once
    /// (however many instances place it).
    pub fn stored_triangle_count(&self) -> usize {
        self.grid_triangle_count()
            + self.meshes.iter().map(|m| m.indices.len()).sum::<usize>()
            + self.plant_meshes().map(|m| m.indices.len()).sum::<usize>()
    }

    /// Triangles of the terrain when it is traced through its grid (0 when
    /// it is a mesh).
    pub(crate) fn grid_triangle_count(&self) -> usize {
        self.accel
            .objects()
            .map(|o| match o {
                ObjectRef::Terrain(field) => field.triangle_count(),
                _ => 0,
            })
            .sum()
    }

    /// Bytes held by the acceleration structures.
    pub fn accel_bytes(&self) -> usize {
        self.accel.memory_bytes()
    }

    /// Bytes held by the world's geometry: the acceleration structures,
    /// the meshes' shading data (each distinct mesh once, with its texture
    /// coordinates), the per-object
    /// material and rock-space slots, rock frames, materials and the
    /// terrain's vertex normals. Textures, shared with the scene, are left
    /// out.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of_val;
        let meshes: usize = self
            .meshes
            .iter()
            .chain(self.plant_meshes())
            .map(|m| {
                size_of_val(&m.positions[..])
                    + size_of_val(&m.normals[..])
                    + size_of_val(&m.indices[..])
            })
            .sum();
        self.accel.memory_bytes()
            + meshes
            + self.rock_space.memory_bytes()
            + self.object_material.memory_bytes()
            + size_of_val(&self.rock_frames[..])
            + size_of_val(&self.materials[..])
            + size_of_val(&self.smooth[..])
            + self
                .terrain_normals
                .iter()
                .map(|(_, n)| size_of_val(&n[..]))
                .sum::<usize>()
            + size_of_val(&self.analytic[..])
            + self.layers.as_ref().map_or(0, |(_, a)| a.memory_bytes())
            + self.streams.as_ref().map_or(0, Streams::memory_bytes)
            + self.plants.as_ref().map_or(0, |p| p.field.memory_bytes())
            + self.uv_bytes()
            + size_of_val(&self.cutouts[..])
    }

    /// Bytes of the meshes' texture coordinates, each list once (copies
    /// of a mesh share theirs).
    fn uv_bytes(&self) -> usize {
        let mut seen: Vec<*const Vec<Vec2>> = Vec::new();
        let mut bytes = 0;
        for uvs in self.uvs.iter().flatten() {
            if !seen.contains(&Arc::as_ptr(uvs)) {
                seen.push(Arc::as_ptr(uvs));
                bytes += std::mem::size_of_val(&uvs[..]);
            }
        }
        bytes
    }

    /// Each plant variant's part meshes, once.
    fn plant_meshes(&self) -> impl Iterator<Item = &TriangleMesh> + '_ {
        self.plants
            .iter()
            .flat_map(|p| p.variants.iter().flatten())
            .flat_map(|v| crate::plant::PARTS.map(|(_, part)| part(v)))
    }

    /// Where `ray` meets the surface of the land's lakes and rivers from
    /// above within (0, t_max): the ray parameter and the surface's unit
    /// normal, up and tilted as the water's level falls there
    /// ([`terrain::hydrology::Waters::gradient_at`]: smooth, and blind to
    /// the mesh's dip under the banks). None where it meets nothing or
    /// first meets the surface from below.
    #[inline]
    pub fn water_hit(&self, ray: &Ray, t_max: f32) -> Option<(f32, Vec3)> {
        let s = self.streams.as_ref()?;
        let hit = s.bvh.intersect(ray, t_max)?;
        if s.mesh.face_normal(hit.triangle as usize).dot(ray.dir) >= 0.0 || hit.t >= t_max {
            return None;
        }
        let p = ray.at(hit.t);
        let g = s.waters.gradient_at(p.x, p.z);
        Some((hit.t, Vec3::new(-g.x, 1.0, -g.y).normalize()))
    }

    /// The height of the terrain's surface at world (x, z), where the
    /// terrain is traced as a grid and (x, z) is over it: a ray straight
    /// down onto the rendered triangles.
    pub fn terrain_height(&self, x: f32, z: f32) -> Option<f32> {
        let field = self.accel.objects().find_map(|o| match o {
            ObjectRef::Terrain(field) => Some(field),
            ObjectRef::Mesh { .. } => None,
        })?;
        let top = field.bounds().max.y + 1.0;
        let down = Ray::new(Vec3::new(x, top, z), Vec3::NEG_Y);
        field.intersect(&down, f32::INFINITY).map(|h| top - h.t)
    }

    /// The material with index `m`.
    #[inline]
    pub fn material(&self, m: u16) -> &Material {
        &self.materials[m as usize]
    }

    /// What the layered material's masks read of the ground at `point`
    /// with unit normal `normal`.
    fn ground(&self, attributes: &GroundAttributes, point: Vec3, normal: Vec3) -> Ground {
        Ground {
            point,
            normal,
            height: attributes.height_fraction(point.y),
            curvature: attributes.curvature_at(point.x, point.z),
            flow: attributes.flow_at(point.x, point.z),
            moisture: self
                .streams
                .as_ref()
                .map_or(0.0, |s| s.waters.moisture_at(point.x, point.z)),
        }
    }

    /// Albedo of the surface at `hit`, and where a layered material has
    /// glossy layers there, their share of the surface and roughness.
    #[inline]
    pub fn look(&self, hit: &SurfaceHit) -> (Vec3, Option<(f32, f32)>) {
        let material = &self.materials[hit.material as usize];
        if let (Material::Layers, Some((layers, attributes))) = (material, &self.layers) {
            return layers.look(&self.ground(attributes, hit.point, hit.normal));
        }
        (self.albedo(hit), None)
    }

    /// The share of its albedo the surface at `hit` passes through to
    /// its other side (leaves), 0 for opaque surfaces.
    #[inline]
    pub fn translucency(&self, hit: &SurfaceHit) -> f32 {
        self.translucency[hit.material as usize]
    }

    /// Albedo of the surface at `hit`.
    #[inline]
    pub fn albedo(&self, hit: &SurfaceHit) -> Vec3 {
        let material = &self.materials[hit.material as usize];
        if let (Material::Layers, Some((layers, attributes))) = (material, &self.layers) {
            return layers.albedo(&self.ground(attributes, hit.point, hit.normal));
        }
        if let Material::Textured {
            texture,
            variation,
            seed,
        } = *material
        {
            // Rows run down the image, OBJ's v up it.
            let uv = hit.uv;
            let albedo = self.textures[texture as usize].sample_tiled(uv.x, 1.0 - uv.y);
            let tint = Material::brightness(variation, seed, hit.object);
            return (albedo * tint).min(Vec3::ONE);
        }
        let rock_point = match material {
            Material::RockTexture { .. } => self.rock_point(hit.object, hit.point),
            _ => Vec3::ZERO,
        };
        let at = SurfacePoint {
            point: hit.point,
            normal: hit.normal,
            face: hit.face,
            object: hit.object,
            rock_point,
        };
        material.albedo(&at, &self.textures)
    }

    /// World point `p` in the own (unit-sphere) space of rock `object`
    /// (numbered as [`SurfaceHit::object`]); `p` itself for an object that
    /// is not a rock.
    fn rock_point(&self, object: u32, p: Vec3) -> Vec3 {
        self.rock_frame(object).map_or(p, |m| m.transform_point3(p))
    }

    /// World space to the own (unit-sphere) space of rock `object`
    /// (numbered as [`SurfaceHit::object`]), or `None` for an object that
    /// is not a rock.
    fn rock_frame(&self, object: u32) -> Option<Affine3A> {
        let Some(space) = self.rock_space.get(object as usize) else {
            let k = object as usize - self.accel.object_count();
            return Some(self.analytic[k].object_from_world());
        };
        match space {
            RockSpace::NONE => None,
            RockSpace::INSTANCE => match self.accel.object(object) {
                ObjectRef::Mesh { placement, .. } => self.accel.object_from_world(placement),
                ObjectRef::Terrain(_) => None,
            },
            RockSpace(i) => Some(self.rock_frames[i as usize]),
        }
    }

    /// The world as seen in one view: `light` (a direction and an angular
    /// radius, the sun's disc) and `eye` (a camera's position and a sample
    /// of its ray directions, [`crate::camera::Camera::sight_sample`]) for
    /// about `camera_rays` camera rays (and at most as many shadow rays).
    /// The view keeps what pays for those rays: the terrain's horizons
    /// toward the light and its sight table from the eye. It changes no
    /// answer, only how fast it comes; the world itself stays as built,
    /// for any number of views.
    pub fn view(
        &self,
        light: Option<(Vec3, f32)>,
        eye: Option<(Vec3, &[Vec3])>,
        camera_rays: usize,
    ) -> Viewed<'_> {
        Viewed {
            world: self,
            view: self.accel.view(light, eye, camera_rays),
        }
    }

    /// The closest surface along `ray`.
    #[inline]
    pub fn intersect(&self, ray: &Ray) -> Option<SurfaceHit> {
        self.intersect_in(&View::default(), ray)
    }

    #[inline]
    fn intersect_in(&self, view: &View, ray: &Ray) -> Option<SurfaceHit> {
        let hit = self.accel.intersect(view, ray, f32::INFINITY);
        let hit = self.through_cutouts(view, ray, f32::INFINITY, hit);
        let t_mesh = hit.map_or(f32::INFINITY, |h| h.hit.t);
        let plant = self.plants.as_ref().and_then(|p| {
            p.field
                .intersect(ray, t_mesh, |r, h| self.plant_stops(r, h))
        });
        self.closest_surface(ray, hit, plant)
    }

    /// [`World::intersect`] for each ray of a batch, bit for bit, faster:
    /// the terrain traces the batch at once.
    pub fn intersect_batch(&self, rays: &[Ray]) -> Vec<Option<SurfaceHit>> {
        self.intersect_batch_in(&View::default(), rays)
    }

    fn intersect_batch_in(&self, view: &View, rays: &[Ray]) -> Vec<Option<SurfaceHit>> {
        let mut hits = vec![None; rays.len()];
        self.accel
            .intersect_batch(view, rays, &vec![f32::INFINITY; rays.len()], &mut hits);
        if self.any_cutout {
            for (hit, ray) in hits.iter_mut().zip(rays) {
                *hit = self.through_cutouts(view, ray, f32::INFINITY, *hit);
            }
        }
        let mut plants = vec![None; rays.len()];
        if let Some(p) = &self.plants {
            let limits: Vec<f32> = hits
                .iter()
                .map(|h| h.map_or(f32::INFINITY, |h| h.hit.t))
                .collect();
            p.field
                .intersect_batch(rays, &limits, &mut plants, |r, h| self.plant_stops(r, h));
        }
        rays.iter()
            .zip(hits)
            .zip(plants)
            .map(|((ray, hit), plant)| self.closest_surface(ray, hit, plant))
            .collect()
    }

    /// The surface of the closest of `hit` (the top level's), `plant`
    /// (the plants' closest within it) and the analytic rocks.
    #[inline]
    fn closest_surface(
        &self,
        ray: &Ray,
        hit: Option<ObjectHit>,
        plant: Option<PlantHit>,
    ) -> Option<SurfaceHit> {
        let t_mesh = hit.map_or(f32::INFINITY, |h| h.hit.t);
        let t_near = plant.map_or(t_mesh, |p| p.hit.t);
        let mut best_rock: Option<(f32, usize)> = None;
        for (k, rock) in self.analytic.iter().enumerate() {
            let limit = best_rock.map_or(t_near, |b| b.0);
            if let Some(t) = rock.intersect(ray, 0.0, limit) {
                best_rock = Some((t, k));
            }
        }
        match (best_rock, plant, hit) {
            (Some((t, k)), _, _) => Some(self.rock_surface(ray, t, k)),
            (None, Some(p), _) => Some(self.plant_surface(ray, &p)),
            (None, None, Some(h)) => Some(self.surface(ray, &h)),
            (None, None, None) => None,
        }
    }

    /// Whether anything lies along `ray` within (0, t_max].
    #[inline]
    pub fn occluded(&self, ray: &Ray, t_max: f32) -> bool {
        self.occluded_in(&View::default(), ray, t_max)
    }

    #[inline]
    fn occluded_in(&self, view: &View, ray: &Ray, t_max: f32) -> bool {
        self.analytic
            .iter()
            .any(|r| r.intersect(ray, 0.0, t_max).is_some())
            || self.meshes_block(view, ray, t_max)
            || self.plants_block(ray, t_max)
    }

    /// Whether a plant lies along `ray` within (0, t_max].
    #[inline]
    fn plants_block(&self, ray: &Ray, t_max: f32) -> bool {
        self.plants
            .as_ref()
            .is_some_and(|p| p.field.occluded(ray, t_max, |r, h| self.plant_stops(r, h)))
    }

    /// [`World::occluded`] for each ray of a batch (`rays[k]` within
    /// `t_max[k]`).
    pub fn occluded_batch(&self, rays: &[Ray], t_max: &[f32]) -> Vec<bool> {
        self.occluded_batch_in(&View::default(), rays, t_max)
    }

    fn occluded_batch_in(&self, view: &View, rays: &[Ray], t_max: &[f32]) -> Vec<bool> {
        let mut blocked = vec![false; rays.len()];
        self.accel.occluded_batch(view, rays, t_max, &mut blocked);
        if self.any_cutout {
            for (k, ray) in rays.iter().enumerate() {
                blocked[k] = blocked[k] && self.cutouts_block(view, ray, t_max[k]);
            }
        }
        if let Some(p) = &self.plants {
            let order = open_by_octant(rays, &blocked);
            p.field
                .occluded_batch(rays, t_max, &order, &mut blocked, |r, h| {
                    self.plant_stops(r, h)
                });
        }
        for (k, ray) in rays.iter().enumerate() {
            blocked[k] = blocked[k]
                || self
                    .analytic
                    .iter()
                    .any(|r| r.intersect(ray, 0.0, t_max[k]).is_some());
        }
        blocked
    }

    /// The surface of analytic rock `k` at `t` along `ray`.
    fn rock_surface(&self, ray: &Ray, t: f32, k: usize) -> SurfaceHit {
        let rock = &self.analytic[k];
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
            object: (self.accel.object_count() + k) as u32,
            uv: Vec2::ZERO,
        }
    }

    fn surface(&self, ray: &Ray, hit: &ObjectHit) -> SurfaceHit {
        let object = hit.object as usize;
        let (t, u, v, tri) = (hit.hit.t, hit.hit.u, hit.hit.v, hit.hit.triangle);
        let material = self
            .object_material
            .get(object)
            .expect("an object's material");
        let smooth = self.smooth[material as usize];
        let interpolate = |[a, b, c]: [Vec3; 3], ng: Vec3| {
            (a * (1.0 - u - v) + b * u + c * v)
                .try_normalize()
                .unwrap_or(ng)
        };
        let (ng, mut n) = match self.accel.object(hit.object) {
            ObjectRef::Terrain(field) => {
                let [a, b, c] = field.triangle(tri);
                let ng = face_normal(a, b, c);
                let normals = self
                    .terrain_normals
                    .iter()
                    .find(|(o, _)| *o == hit.object)
                    .map(|(_, n)| n);
                // A ring's normals are stored (made before its hole was
                // sunk); a tile's too, up to `STORED_NORMALS` samples,
                // beyond which they come from its heights: the same bits
                // without 12 bytes a sample, for about 15% of a frame.
                let samples = field.triangle_samples(tri);
                let n = match normals {
                    _ if !smooth => ng,
                    Some(normals) => interpolate(samples.map(|k| normals[k]), ng),
                    None => interpolate(samples.map(|k| field.vertex_normal(k)), ng),
                };
                (ng, n)
            }
            ObjectRef::Mesh { mesh, placement } => placed_normals(
                &self.meshes[mesh as usize],
                tri,
                (u, v),
                smooth,
                self.accel.object_from_world(placement),
            ),
        };
        let uv = self.uv_at(hit.object, &hit.hit);
        if let (Material::Layers, Some((layers, attributes))) =
            (&self.materials[material as usize], &self.layers)
        {
            let point = ray.at(t);
            n = layers.shading_normal(&self.ground(attributes, point, n), n);
        }
        // The rock's frame is looked up only for a material with bumps.
        let bumped =
            self.bumps[material as usize].and_then(|b| Some((b, self.rock_frame(hit.object)?)));
        if let Some((b, m)) = bumped {
            // h(p) = h_rock(M p): the world gradient is Mᵀ times the
            // rock-space one.
            let g = m.matrix3.transpose()
                * Vec3A::from(bump_gradient(b, m.transform_point3(ray.at(t)), 0xB0C4));
            let g = Vec3::from(g);
            n = (n - (g - g.dot(n) * n)).try_normalize().unwrap_or(n);
        }
        SurfaceHit {
            uv,
            ..facing(ray, t, ng, n, material, tri, hit.object)
        }
    }

    /// The surface of a plant at `hit`; its object is its spot, which its
    /// leaves' tint follows.
    fn plant_surface(&self, ray: &Ray, hit: &PlantHit) -> SurfaceHit {
        let plants = self.plants.as_ref().expect("a plant was hit");
        let (place, variant) = plants.field.place(hit.species, hit.spot, hit.plant);
        let (_, part) = crate::plant::PARTS[hit.part as usize];
        let mesh = part(&plants.variants[hit.species as usize][variant as usize]);
        let material = plants.materials[hit.species as usize][hit.part as usize];
        let h = hit.hit;
        let (ng, n) = placed_normals(
            mesh,
            h.triangle,
            (h.u, h.v),
            self.smooth[material as usize],
            Some(place.inverse()),
        );
        let uv = match self.cutouts[material as usize] {
            Some(_) => self.plant_uv(hit),
            None => Vec2::ZERO,
        };
        SurfaceHit {
            uv,
            ..facing(ray, h.t, ng, n, material, h.triangle, hit.spot)
        }
    }
}

/// The geometric and shading normals of triangle `tri` of `m` at
/// barycentrics `(u, v)`, carried to the world by the inverse transpose
/// of the placement (vertex by vertex, as a placed copy's are) where
/// `object_from_world` is given.
fn placed_normals(
    m: &TriangleMesh,
    tri: u32,
    (u, v): (f32, f32),
    smooth: bool,
    object_from_world: Option<Affine3A>,
) -> (Vec3, Vec3) {
    let corners = m.indices[tri as usize];
    let interpolate = |[a, b, c]: [Vec3; 3], ng: Vec3| {
        (a * (1.0 - u - v) + b * u + c * v)
            .try_normalize()
            .unwrap_or(ng)
    };
    match object_from_world {
        None => {
            let ng = m.face_normal(tri as usize);
            let n = if smooth {
                interpolate(corners.map(|k| m.normals[k as usize]), ng)
            } else {
                ng
            };
            (ng, n)
        }
        Some(object_from_world) => {
            let nm = object_from_world.matrix3.transpose();
            let to_world = |n: Vec3| Vec3::from((nm * Vec3A::from(n)).normalize());
            let ng = to_world(m.face_normal(tri as usize));
            let n = if smooth {
                interpolate(corners.map(|k| to_world(m.normals[k as usize])), ng)
            } else {
                ng
            };
            (ng, n)
        }
    }
}

/// A hit at `t` along `ray` with normals `ng` and `n` turned to face the
/// ray (the shading normal onto the geometric one's side).
fn facing(
    ray: &Ray,
    t: f32,
    mut ng: Vec3,
    mut n: Vec3,
    material: u16,
    face: u32,
    object: u32,
) -> SurfaceHit {
    if ng.dot(ray.dir) > 0.0 {
        ng = -ng;
    }
    if n.dot(ng) < 0.0 {
        n = -n;
    }
    SurfaceHit {
        t,
        point: ray.at(t),
        geometric_normal: ng,
        normal: n,
        material,
        face,
        object,
        uv: Vec2::ZERO,
    }
}

#[cfg(test)]
mod tests {
    //! The world's rocks: those it exports (`scree terrain --rocks-obj`)
    //! are the triangles it traces, and scattered ones vary in colour.
    use glam::Vec3;

    use crate::accel::Bvh;
    use crate::mesh::TriangleMesh;
    use crate::ray::Ray;
    use crate::rock::export::obj;
    use crate::world::World;

    /// Reads OBJ text back as one mesh (positions and faces).
    fn read(text: &str) -> TriangleMesh {
        let (models, _) = tobj::load_obj_buf(
            &mut text.as_bytes(),
            &tobj::LoadOptions {
                triangulate: false,
                single_index: false,
                ..Default::default()
            },
            |_| unreachable!("no materials"),
        )
        .expect("valid OBJ");
        let mut mesh = TriangleMesh {
            positions: vec![],
            normals: vec![],
            indices: vec![],
        };
        for m in models {
            let base = mesh.positions.len() as u32;
            mesh.positions
                .extend(m.mesh.positions.chunks(3).map(Vec3::from_slice));
            mesh.indices.extend(
                m.mesh
                    .indices
                    .chunks(3)
                    .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
            );
        }
        mesh
    }

    /// A scene with two listed tessellated rocks, one analytic rock and a
    /// scattered field of instances: the export holds every tessellated
    /// rock's triangles at their exact world positions, and rays hit the
    /// exported mesh where they hit the rendered rocks.
    #[test]
    fn exported_rocks_are_the_rendered_triangles() {
        let src = r#"{
            "image": { "width": 32, "height": 32 },
            "camera": { "position": [0, 12, -30], "look_at": [0, 0, 0] },
            "terrain": { "size": [40, 40], "resolution": [33, 33], "height": 2,
                         "generator": { "type": "hills" } },
            "rocks": [
                { "center": [-4, 1, 0], "radius": 2, "stacks": 8, "slices": 16 },
                { "center": [5, 1, 3], "radius": 1.5, "scale": [1, 0.6, 1.2],
                  "rotation": [10, 30, 0], "stacks": 6, "slices": 12 },
                { "center": [0, 1, 8], "radius": 1, "analytic": true }
            ],
            "scatter": { "count": 12, "radius": [0.5, 1.2], "seed": 3, "area": [30, 30],
                         "stacks": 6, "slices": 12 }
        }"#;
        let scene = crate::scene::parse(src, "rocks.json", std::path::Path::new(".")).unwrap();
        let world = World::build(&scene);
        let rocks = world.rock_meshes();
        assert_eq!(rocks.len(), 2 + 12, "listed and scattered, not analytic");
        let text = obj(&rocks);
        let read = read(&text);
        let expect: Vec<Vec3> = rocks.iter().flat_map(|m| m.positions.clone()).collect();
        assert_eq!(read.positions, expect, "positions read back bit for bit");
        assert_eq!(
            read.indices.len(),
            rocks.iter().map(|m| m.indices.len()).sum::<usize>()
        );
        assert_eq!(
            text.matches("\nvn ").count(),
            expect.len(),
            "a normal per vertex"
        );

        // Rays down onto the rocks: the exported mesh is hit where the
        // world (rocks as instances, terrain as a grid) reports a rock.
        let bvh = Bvh::build(&read);
        let mut rock_hits = 0;
        for k in 0..4000u64 {
            let r = |s| crate::hash::unit_f32(k, s, 5) * 30.0 - 15.0;
            let (x, z) = (r(1), r(2));
            // Not near the analytic rock, which is not exported.
            if Vec3::new(x, 0.0, z - 8.0).length() < 2.5 {
                continue;
            }
            let ray = Ray::new(
                Vec3::new(x, 20.0, z),
                Vec3::new(0.02, -1.0, 0.03).normalize(),
            );
            // Material 0 is the terrain's: rays that reach the ground first
            // may still find the sunk part of a rock in the export.
            let Some(seen) = world.intersect(&ray).filter(|h| h.material != 0) else {
                continue;
            };
            let exported = bvh
                .intersect(&ray, f32::INFINITY)
                .expect("the rock is exported");
            assert!((seen.t - exported.t).abs() < 1e-3 * seen.t, "ray {k}");
            rock_hits += 1;
        }
        assert!(rock_hits > 100, "rays hit rocks ({rock_hits})");
    }

    /// With `variation`, each scattered rock has its own albedo within
    /// that fraction of the colour; without it, all share one.
    #[test]
    fn scattered_rocks_vary_in_colour_within_the_variation() {
        let scene = |variation: f64| {
            let src = format!(
                r#"{{ "camera": {{ "position": [0, 12, -30], "look_at": [0, 0, 0] }},
                     "terrain": {{ "size": [40, 40], "resolution": [33, 33], "height": 2 }},
                     "scatter": {{ "count": 30, "seed": 3, "variants": 2, "subdivisions": 1,
                                   "material": {{ "type": "albedo", "color": [0.5, 0.4, 0.3],
                                                  "variation": {variation} }} }} }}"#
            );
            crate::scene::parse(&src, "v.json", std::path::Path::new(".")).unwrap()
        };
        // The albedo each rock is exported with, in object order (the
        // terrain is object 0, rock k object k + 1).
        let albedos = |w: &World| -> Vec<Vec3> {
            w.rock_exports()
                .iter()
                .map(|r| match r.look {
                    crate::rock::export::Look::Albedo(c) => c,
                    _ => panic!("an albedo"),
                })
                .collect()
        };
        let plain = World::build(&scene(0.0));
        assert!(albedos(&plain)
            .iter()
            .all(|&c| c == Vec3::new(0.5, 0.4, 0.3)));
        let varied = World::build(&scene(0.2));
        // One material for the terrain, one for all the rocks.
        assert_eq!(varied.materials.len(), 2);
        let colours = albedos(&varied);
        assert_eq!(colours.len(), varied.rock_count);
        for c in &colours {
            let f = c.x / 0.5;
            assert!((0.8..=1.2).contains(&f), "{c}");
            assert!(
                (c.y / 0.4 - f).abs() < 1e-5 && (c.z / 0.3 - f).abs() < 1e-5,
                "one factor: {c}"
            );
        }
        // What the renderer shades a rock with is what it is exported with.
        let mut shaded = 0;
        for r in varied.rock_exports() {
            let c = r.mesh.positions.iter().copied().sum::<Vec3>() / r.mesh.positions.len() as f32;
            let down = Ray::new(Vec3::new(c.x, 50.0, c.z), Vec3::NEG_Y);
            let hit = varied.intersect(&down).expect("over the terrain");
            if hit.object > 0 {
                assert_eq!(varied.albedo(&hit), colours[hit.object as usize - 1]);
                shaded += 1;
            }
        }
        assert!(shaded > 20, "{shaded}");
        let distinct: std::collections::BTreeSet<u32> =
            colours.iter().map(|c| c.x.to_bits()).collect();
        assert!(distinct.len() > 20, "{}", distinct.len());
    }

    /// 100,000 scattered rocks of 8 variants cost the variants' meshes
    /// plus at most 128 bytes a rock: the top level's slot, box and
    /// placement, the rock's material index and rock-space slot.
    #[test]
    fn a_scattered_rock_costs_at_most_128_bytes() {
        let world = |count: usize| {
            let src = format!(
                r#"{{ "camera": {{ "position": [0, 40, -300], "look_at": [0, 0, 0] }},
                     "terrain": {{ "size": [600, 600], "resolution": [65, 65], "height": 8 }},
                     "scatter": {{ "count": {count}, "seed": 9, "variants": 8, "subdivisions": 2,
                                   "avoid_overlap": false, "radius": [0.3, 1.0],
                                   "material": {{ "type": "albedo", "color": [0.4, 0.4, 0.4],
                                                  "variation": 0.1 }} }} }}"#
            );
            World::build(&crate::scene::parse(&src, "m.json", std::path::Path::new(".")).unwrap())
        };
        let few = world(1_000);
        let many = world(101_000);
        assert_eq!(many.rock_count, 101_000);
        assert_eq!(many.meshes.len(), few.meshes.len(), "the same 8 variants");
        let per_rock = (many.memory_bytes() - few.memory_bytes()) as f64 / 100_000.0;
        println!("{per_rock:.1} bytes a scattered rock");
        assert!(per_rock <= 128.0, "{per_rock:.1} bytes a rock");
    }

    /// A rock's bumps tilt its shading normal, not its geometry: the same
    /// rays hit the same points with the same geometric normals, the
    /// shading normals differ and stay unit length.
    #[test]
    fn rock_bumps_tilt_only_the_shading_normal() {
        let world = |bump: &str| {
            let src = format!(
                r#"{{ "camera": {{ "position": [0, 12, -30], "look_at": [0, 0, 0] }},
                     "terrain": {{ "size": [40, 40], "resolution": [33, 33], "height": 0.5 }},
                     "rocks": [ {{ "center": [0, 3, 0], "radius": 3, "tessellation": "icosphere",
                                   "material": {{ "type": "albedo", "color": [0.4, 0.4, 0.4] {bump} }} }} ] }}"#
            );
            World::build(&crate::scene::parse(&src, "b.json", std::path::Path::new(".")).unwrap())
        };
        let plain = world("");
        let bumpy = world(r#", "bump": { "height": 0.05, "size": 0.2 }"#);
        let mut tilted = 0;
        for k in 0..200 {
            let x = -2.5 + 5.0 * (k % 20) as f32 / 19.0;
            let z = -2.5 + 5.0 * (k / 20) as f32 / 9.0;
            let ray = Ray::new(Vec3::new(x, 20.0, z), Vec3::NEG_Y);
            let (a, b) = (
                plain.intersect(&ray).unwrap(),
                bumpy.intersect(&ray).unwrap(),
            );
            assert_eq!(a.t.to_bits(), b.t.to_bits());
            assert_eq!(a.geometric_normal, b.geometric_normal);
            assert!((b.normal.length() - 1.0).abs() < 1e-5);
            if a.object == 1 && a.normal.dot(b.normal) < 0.9999 {
                tilted += 1;
            }
        }
        assert!(tilted > 50, "{tilted}");
    }
}

#[cfg(test)]
mod far_field_tests {
    //! The far field as the tracer sees it: watertight where levels meet,
    //! and the curvature's horizon where geometry puts it.
    use glam::Vec3;

    use crate::ray::Ray;
    use crate::scene::parse;
    use crate::terrain::{self, far_field};
    use crate::world::World;

    fn scene(terrain: &str) -> crate::scene::Scene {
        let src = format!(
            r#"{{ "image": {{ "width": 8, "height": 8 }},
                 "camera": {{ "position": [0, 50, -90], "look_at": [0, 0, 0] }},
                 "terrain": {terrain} }}"#
        );
        parse(&src, "far.json", std::path::Path::new(".")).expect("valid scene")
    }

    /// Rays aimed at points on the seams (the tile's edge, the inner edge
    /// of each ring's overlap band, each ring's outer edge), from many
    /// directions and at grazing angles: each stops at or before its
    /// point. A ray that slipped between two levels would run on past it.
    #[test]
    fn rays_aimed_at_the_seams_never_slip_through() {
        for generator in [
            r#"{ "type": "noise", "octaves": { "count": 7, "frequency": 0.03 } }"#,
            r#"{ "type": "fault_line", "iterations": 200 }"#,
        ] {
            let s = scene(&format!(
                r#"{{ "size": [60, 40], "resolution": [193, 129], "height": 8,
                      "generator": {generator}, "far_field": {{ "rings": 3 }} }}"#
            ));
            let land = terrain::land(&s.terrain.recipe(), s.seed);
            let world = World::build(&s);
            // (the level whose surface holds it, x and z) of seam points.
            let mut points: Vec<(usize, f32, f32)> = Vec::new();
            let levels: Vec<&terrain::TerrainGrid> = std::iter::once(&land.tile)
                .chain(land.rings.iter().map(|r| &r.grid))
                .collect();
            for (k, grid) in levels.iter().enumerate() {
                let [hx, hz] = [0.5 * grid.size[0], 0.5 * grid.size[1]];
                // (x, z) of an edge's corner and the level that holds it;
                // past the outermost ring's outer edge there is nothing.
                let mut edges = Vec::new();
                if k + 1 < levels.len() {
                    edges.push((hx, hz, k + 1));
                }
                if k > 0 {
                    // The inner edge of the ring's overlap band: its hole.
                    let ring = &land.rings[k - 1];
                    let cell = grid.size[0] / (grid.heights.width - 1) as f32;
                    let cz = grid.size[1] / (grid.heights.height - 1) as f32;
                    let a = ring.hole[0][0] as f32 * cell - hx;
                    let b = ring.hole[1][0] as f32 * cz - hz;
                    edges.push((-a, -b, k));
                }
                for (ex, ez, holder) in edges {
                    for f in 0..23 {
                        // Off the grids' vertices: a ray through a vertex
                        // is the walk's own corner case, not the seams'.
                        let u = -0.99 + 1.98 * f as f32 / 22.0 + 0.0013;
                        for (x, z) in [(ex, u * ez), (-ex, u * ez), (u * ex, ez), (u * ex, -ez)] {
                            points.push((holder, x, z));
                        }
                    }
                }
            }
            let mut aimed = 0;
            for (k, x, z) in points {
                // The coarser level at a seam holds the point exactly (the
                // finer one's band lies on its triangles).
                let y = levels[k].height_at(x, z);
                let p = Vec3::new(x, y, z);
                for a in 0..8 {
                    for e in [1.0f32, 4.0, 20.0, 60.0] {
                        let (az, el) = ((a as f32 * 45.0 + 7.0).to_radians(), e.to_radians());
                        let d = Vec3::new(az.cos() * el.cos(), -el.sin(), az.sin() * el.cos());
                        let origin = p - d * 30.0;
                        // Rays that enter the land at their point, not
                        // graze it (a ray that touches a ridge goes on).
                        let past = p + d * 0.05;
                        if levels[k].height_at(past.x, past.z) < past.y + 1e-3 {
                            continue;
                        }
                        // From above the land only (a ray from under it
                        // meets the surface from behind).
                        let top = Vec3::new(origin.x, 1e4, origin.z);
                        let ground = world.intersect(&Ray::new(top, Vec3::NEG_Y));
                        if ground.is_some_and(|g| 1e4 - g.t >= origin.y) {
                            continue;
                        }
                        let hit = world.intersect(&Ray::new(origin, d));
                        let t = hit.map_or(f32::INFINITY, |h| h.t);
                        assert!(
                            t <= 30.0 * (1.0 + 1e-4) + 1e-3,
                            "{generator}: a ray at {p} (level {k}, heading {a}, {e}°) went on to t = {t}"
                        );
                        aimed += 1;
                    }
                }
            }
            assert!(aimed > 2000, "{aimed}");
        }
    }

    /// Over a flat sea on an Earth-sized planet, from 1.7 units up, the
    /// horizon lies acos(R/(R+h)) = 0.0418° below the level line: found
    /// here by bisecting the lowest elevation at which a ray toward it
    /// misses the land, to a tenth of a pixel of a 1°-tall 1080-row image.
    #[test]
    fn the_horizon_dips_as_a_planet_of_earths_radius_says() {
        let s = scene(
            r#"{ "size": [200, 200], "resolution": [129, 129], "height": 0,
                 "generator": { "type": "noise" }, "planet_radius": 6371000,
                 "far_field": { "rings": 7 } }"#,
        );
        let world = World::build(&s);
        let (r, h) = (6_371_000.0f64, 1.7f64);
        let expected = (r / (r + h)).acos().to_degrees();
        assert!((expected - 0.0418).abs() < 1e-4, "{expected}");
        let eye = Vec3::new(0.0, 1.7, 0.0);
        let mut below = 0.5f64; // degrees under the level line: hits
        let mut above = 0.0f64; // misses
        assert!(world.intersect(&Ray::new(eye, dir(below))).is_some());
        for _ in 0..40 {
            let mid = 0.5 * (below + above);
            if world.intersect(&Ray::new(eye, dir(mid))).is_some() {
                below = mid;
            } else {
                above = mid;
            }
        }
        let pixel = 1.0 / 1080.0;
        assert!(
            (below - expected).abs() < 0.1 * pixel,
            "horizon {below}° below level, expected {expected}°"
        );
        fn dir(dip_degrees: f64) -> Vec3 {
            let a = dip_degrees.to_radians();
            Vec3::new(0.0, -a.sin() as f32, a.cos() as f32)
        }
    }

    /// A point 50 km out sinks by d²/2R = 196.2 on Earth: the land at
    /// that distance lies that far under its height on a flat world.
    #[test]
    fn land_fifty_kilometres_out_sinks_by_196() {
        assert!((far_field::drop(50_000.0, 6_371_000.0) - 196.2).abs() < 0.05);
        let s = scene(
            r#"{ "size": [6250, 6250], "resolution": [129, 129], "height": 0,
                 "generator": { "type": "noise" }, "planet_radius": 6371000,
                 "far_field": { "rings": 5, "resolution": 257 } }"#,
        );
        let land = terrain::land(&s.terrain.recipe(), s.seed);
        let outer = &land.rings.last().expect("rings").grid;
        let y = outer.height_at(50_000.0, 0.0);
        assert!((y + 196.2).abs() < 0.1, "{y}");
    }
}
