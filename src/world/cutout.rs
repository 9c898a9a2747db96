//! Cut-out surfaces: meshes whose material has an opacity below 1 (an OBJ
//! material's `d`) or an opacity image (`map_d`), such as leaf cards.
//!
//! A ray that meets such a surface where its opacity is `a` stops there
//! with probability `a` and passes on otherwise, decided by a hash of the
//! ray (its origin and direction, bit for bit) and of the triangle: the
//! same ray always makes the same decision, on any thread and in any
//! batch, and the many rays of a pixel's samples see the surface as `a`
//! opaque on average (stochastic transparency, as pbrt-v4 decides its
//! alpha tests; pbrt hashes the ray alone, which makes two overlapping
//! half-opaque cards let through half the rays rather than a quarter).
//! A ray that a surface lets pass is traced again with the test made in
//! the meshes' leaves ([`crate::accel::TopLevel::intersect_where`]), and
//! meets the closest surface that stops it.

use glam::Vec2;

use super::World;
use crate::accel::plants::PlantHit;
use crate::accel::{Hit, ObjectHit, ObjectRef, View};
use crate::hash::hash3;
use crate::ray::Ray;

/// How rays pass through a cut-out material.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cutout {
    /// The opacity, 0..=1.
    pub opacity: f32,
    /// The world's texture whose first channel multiplies it, looked up by
    /// the mesh's texture coordinates.
    pub alpha: Option<u16>,
}

/// Random stream of the decisions.
const STREAM_CUTOUT: u64 = 0xA1FA;

/// A uniform number in [0, 1) from the bits of `ray` and of triangle
/// `triangle` of object `object`.
fn decision(ray: &Ray, object: u32, triangle: u32) -> f32 {
    let [ox, oy, oz] = ray.origin.to_array().map(|c| c.to_bits() as u64);
    let [dx, dy, dz] = ray.dir.to_array().map(|c| c.to_bits() as u64);
    let key = hash3(ox | oy << 32, oz | dx << 32, dy | dz << 32);
    let h = hash3(key, STREAM_CUTOUT, (object as u64) << 32 | triangle as u64);
    (h >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
}

impl World {
    /// Texture coordinates of mesh object `object` at `hit`, where it has
    /// them.
    pub(super) fn uv_at(&self, object: u32, hit: &Hit) -> Vec2 {
        let ObjectRef::Mesh { mesh, .. } = self.accel.object(object) else {
            return Vec2::ZERO;
        };
        let Some(uvs) = &self.uvs[mesh as usize] else {
            return Vec2::ZERO;
        };
        let [a, b, c] =
            self.meshes[mesh as usize].indices[hit.triangle as usize].map(|k| uvs[k as usize]);
        a * (1.0 - hit.u - hit.v) + b * hit.u + c * hit.v
    }

    /// The opacity of object `object` at `hit`: 1 where its material is
    /// not cut out.
    pub fn opacity_at(&self, object: u32, hit: &Hit) -> f32 {
        let material = self
            .object_material
            .get(object as usize)
            .expect("an object's material");
        let Some(cut) = self.cutouts[material as usize] else {
            return 1.0;
        };
        let image = cut.alpha.map_or(1.0, |t| {
            let uv = self.uv_at(object, hit);
            // Rows run down the image, OBJ's v up it.
            self.textures[t as usize].sample_tiled(uv.x, 1.0 - uv.y).x
        });
        cut.opacity * image
    }

    /// The texture coordinates of a plant's leaf at `hit`.
    pub(super) fn plant_uv(&self, hit: &PlantHit) -> Vec2 {
        crate::plant::leaf_uv(hit.hit.triangle, hit.hit.u, hit.hit.v)
    }

    /// Whether a plant's `hit` stops `ray`: always but on cut-out leaves,
    /// which stop it as [`World::stops`] decides.
    pub(super) fn plant_stops(&self, ray: &Ray, hit: &PlantHit) -> bool {
        let plants = self.plants.as_ref().expect("a plant was hit");
        let material = plants.materials[hit.species as usize][hit.part as usize];
        let Some(cut) = self.cutouts[material as usize] else {
            return true;
        };
        let image = cut.alpha.map_or(1.0, |t| {
            let uv = self.plant_uv(hit);
            self.textures[t as usize].sample_tiled(uv.x, 1.0 - uv.y).x
        });
        let a = cut.opacity * image;
        // The plant's spot and species name it among the decisions.
        let object = hit.spot ^ hit.species.wrapping_mul(0x9E37_79B9);
        a >= 1.0 || (a > 0.0 && decision(ray, object, hit.hit.triangle) < a)
    }

    /// Whether object `object`'s `hit` stops `ray`.
    fn stops(&self, ray: &Ray, object: u32, hit: &Hit) -> bool {
        let a = self.opacity_at(object, hit);
        a >= 1.0 || (a > 0.0 && decision(ray, object, hit.triangle) < a)
    }

    /// The closest of the top level's hits along `ray` within `t_max`
    /// that stops it ([`World::stops`]), given `hit`, the top level's
    /// closest: `hit` itself where it stops the ray, else the top level
    /// searched again with the cut-out test in its meshes' leaves.
    pub(super) fn through_cutouts(
        &self,
        view: &View,
        ray: &Ray,
        t_max: f32,
        hit: Option<ObjectHit>,
    ) -> Option<ObjectHit> {
        match hit {
            Some(h) if self.any_cutout && !self.stops(ray, h.object, &h.hit) => self
                .accel
                .intersect_where(view, ray, t_max, |o, h| self.stops(ray, o, h)),
            _ => hit,
        }
    }

    /// Whether the top level's surfaces block `ray` within `t_max`, cut-out
    /// ones where they stop it.
    pub(super) fn meshes_block(&self, view: &View, ray: &Ray, t_max: f32) -> bool {
        match self.any_cutout {
            true => self.cutouts_block(view, ray, t_max),
            false => self.accel.occluded(view, ray, t_max),
        }
    }

    /// Whether a surface of the top level that stops `ray` lies within
    /// `t_max` (the test made in the meshes' leaves).
    pub(super) fn cutouts_block(&self, view: &View, ray: &Ray, t_max: f32) -> bool {
        self.accel
            .occluded_where(view, ray, t_max, |o, h| self.stops(ray, o, h))
    }
}

#[cfg(test)]
mod tests {
    //! A population of two crossed cards: one cut out by its image's alpha
    //! (the lower half clear, the upper opaque), one half opaque by its
    //! `d`.
    use glam::{Affine3A, Vec3};

    use super::*;
    use crate::world::SurfaceHit;

    const OBJ: &str = "mtllib card.mtl
v -4 1 0\nv 4 1 0\nv 4 9 0\nv -4 9 0
v 0 1 -4\nv 0 1 4\nv 0 9 4\nv 0 9 -4
vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1
usemtl leaf
f 1/1 2/2 3/3 4/4
usemtl veil
f 5/1 6/2 7/3 8/4
";
    const MTL: &str = "newmtl leaf\nKd 0.2 0.6 0.1\nmap_Kd mask.png\nmap_d mask.png
newmtl veil\nKd 0.5 0.5 0.5\nd 0.5\n";

    /// The world, and the card's placement (object to world).
    fn world() -> (World, Affine3A, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("card.obj"), OBJ).unwrap();
        std::fs::write(dir.path().join("card.mtl"), MTL).unwrap();
        // Grey 188 (0.5029 linear); the top two rows opaque, the bottom
        // two clear.
        image::RgbaImage::from_fn(4, 4, |_, y| {
            image::Rgba([188, 188, 188, if y < 2 { 255 } else { 0 }])
        })
        .save(dir.path().join("mask.png"))
        .unwrap();
        let src = r#"{ "camera": { "position": [0, 20, -60], "look_at": [0, 0, 0] },
            "terrain": { "size": [40, 40], "resolution": [33, 33], "height": 0 },
            "populations": [{ "mesh": "card.obj", "count": 1, "seed": 3 }] }"#;
        let scene = crate::scene::parse(src, "c.json", dir.path()).unwrap();
        let land = crate::terrain::land(&scene.terrain.recipe(), scene.seed);
        let place = crate::population::place(&scene.populations[0], &land.tile, None)[0];
        (World::build(&scene), place, dir)
    }

    /// Rays toward object-space point `at` from `far` units back along
    /// the object-space direction `along`.
    fn toward(place: Affine3A, at: Vec3, along: Vec3, far: f32) -> Ray {
        let target = place.transform_point3(at);
        let dir = place.transform_vector3(along).normalize();
        Ray::new(target - dir * far, dir)
    }

    #[test]
    fn the_image_cuts_the_card_out_where_its_alpha_is_0() {
        let (world, place, _dir) = world();
        let card = world.accel.object_count() as u32 - 2;
        for k in 0..40 {
            let x = -3.5 + 3.0 * (k % 10) as f32 / 9.0 - 0.1 * (k / 10) as f32;
            // The upper half stops every ray, with the image's colour.
            // (Bilinear lookups blend the rows for a texel's height about
            // the middle, and the image repeats: the bottom edge blends
            // with the top row, the top edge with the bottom.)
            let y = 6.1 + 1.8 * (k as f32 / 39.0);
            let ray = toward(place, Vec3::new(x, y, 0.0), Vec3::Z, 30.0);
            let hit = world.intersect(&ray).expect("the card");
            assert_eq!(hit.object, card, "upper, ray {k}");
            assert!((hit.t - 30.0).abs() < 1e-3, "{}", hit.t);
            let uv = Vec2::new((x + 4.0) / 8.0, (y - 1.0) / 8.0);
            assert!((hit.uv - uv).length() < 1e-5, "{} against {uv}", hit.uv);
            let expected = ((188.0 / 255.0 + 0.055) / 1.055f32).powf(2.4);
            assert!(
                (world.albedo(&hit) - Vec3::splat(expected))
                    .abs()
                    .max_element()
                    < 1e-5
            );
            assert!(world.occluded(&ray, 40.0));
            // The lower half lets every ray through to the ground.
            let y = 2.0 + 1.9 * (k as f32 / 39.0);
            let ray = toward(place, Vec3::new(x, y, 0.0), Vec3::Z, 30.0);
            let hit = world.intersect(&ray);
            assert!(hit.is_none_or(|h| h.object == 0), "lower, ray {k}: {hit:?}");
            assert!(!world.occluded(&ray, 40.0), "lower, ray {k}");
        }
    }

    #[test]
    fn half_opaque_stops_half_the_rays_the_same_way_each_time() {
        let (world, place, _dir) = world();
        let veil = world.accel.object_count() as u32 - 1;
        let rays: Vec<Ray> = (0..4000)
            .map(|k| {
                let z = 0.5 + 3.0 * (k % 61) as f32 / 60.0;
                let y = 1.5 + 7.0 * (k / 61) as f32 / 66.0;
                toward(place, Vec3::new(0.0, y, z), Vec3::X, 20.0)
            })
            .collect();
        let one: Vec<Option<SurfaceHit>> = rays.iter().map(|r| world.intersect(r)).collect();
        let stopped = one
            .iter()
            .filter(|h| h.is_some_and(|h| h.object == veil))
            .count();
        assert!((1850..=2150).contains(&stopped), "{stopped} of 4000");
        // Every ray makes one decision: one at a time or in batches, on one
        // thread or two, as a shadow ray or not.
        let limits = vec![25.0; rays.len()];
        let blocked: Vec<bool> = rays.iter().map(|r| world.occluded(r, 25.0)).collect();
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (batch, shadows) = pool.install(|| {
                use rayon::prelude::*;
                let batch: Vec<_> = rays
                    .par_chunks(64)
                    .flat_map(|c| world.intersect_batch(c))
                    .collect();
                let shadows: Vec<_> = rays
                    .par_chunks(64)
                    .zip(limits.par_chunks(64))
                    .flat_map(|(c, l)| world.occluded_batch(c, l))
                    .collect();
                (batch, shadows)
            });
            assert_eq!(batch.len(), one.len());
            for (k, (a, b)) in one.iter().zip(&batch).enumerate() {
                assert_eq!(
                    a.map(|h| (h.object, h.t.to_bits())),
                    b.map(|h| (h.object, h.t.to_bits())),
                    "ray {k}"
                );
            }
            assert_eq!(shadows, blocked, "{threads} threads");
        }
        for (k, (hit, &blocked)) in one.iter().zip(&blocked).enumerate() {
            // A ray stopped by the veil is a shadow ray blocked; one it
            // lets through meets nothing within 25 units (the ground is
            // below, the other card edge-on).
            assert_eq!(hit.is_some_and(|h| h.t < 25.0), blocked, "ray {k}");
        }
    }
}
