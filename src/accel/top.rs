//! The top level: the objects of a scene, each traced through its own
//! structure. The terrain is an object traced through its grid hierarchy
//! (tested first, on its own: its box holds everything); a rock is an
//! instance of a mesh (a BVH built once) placed by an affine transform,
//! under one BVH over the meshes, so a thousand rocks that share a mesh
//! cost one mesh's triangles plus a thousand transforms.
//!
//! An instance is traced by carrying the ray into its object space with the
//! inverse transform. The direction is not renormalised there, so the hit
//! distance t means the same in both spaces and hits from different objects
//! compare directly.

use arrayvec::ArrayVec;
use glam::{Affine3A, Vec3};
use rayon::prelude::*;

use super::bvh::{Bvh, Hit, LeafCost, Tree};
use super::heightfield::{FieldView, HeightField};
use super::octet::{open_by_octant, rays_of, OCTET};
use crate::ray::{Aabb, Ray};

/// One object given to the top level.
#[derive(Debug, Clone)]
pub enum Object {
    /// A terrain grid traced through its min/max hierarchy.
    Terrain(Box<HeightField>),
    /// Mesh number `mesh`, in world space ([`Object::WORLD`]) or placed by
    /// placement number `placement` of the top level.
    Mesh {
        /// Index into the top level's meshes.
        mesh: u32,
        /// Index into the top level's placements, or [`Object::WORLD`].
        placement: u32,
    },
}

impl Object {
    /// The `placement` of a mesh already in world space.
    pub const WORLD: u32 = u32::MAX;
}

/// What the top level keeps for one view ([`TopLevel::view`]): each
/// terrain grid's [`FieldView`], in the order of the grids. Any view gives
/// the same answers as any other, or as none ([`View::default`]).
#[derive(Debug, Clone, Default)]
pub struct View {
    fields: Vec<FieldView>,
}

impl View {
    /// Grid `k`'s view (none past the views kept).
    fn field(&self, k: usize) -> &FieldView {
        self.fields.get(k).unwrap_or(FieldView::none())
    }

    /// Bytes held by the grids' views.
    pub fn memory_bytes(&self) -> usize {
        self.fields.iter().map(FieldView::memory_bytes).sum()
    }
}

/// One object under the top level, as it is kept: [`Object`] less the
/// terrain itself.
#[derive(Debug, Clone, Copy)]
pub enum ObjectRef<'a> {
    /// A terrain grid.
    Terrain(&'a HeightField),
    /// A mesh in world space or placed (see [`Object::Mesh`]).
    Mesh {
        /// Index into the top level's meshes.
        mesh: u32,
        /// Index into the top level's placements, or [`Object::WORLD`].
        placement: u32,
    },
}

/// An object's slot, 8 bytes: a mesh and its placement, or (with `mesh`
/// [`Slot::TERRAIN`]) a terrain and its index among the fields.
#[derive(Debug, Clone, Copy)]
struct Slot {
    mesh: u32,
    placement: u32,
}

impl Slot {
    const TERRAIN: u32 = u32::MAX;
}

/// The closest hit in a scene: which object, and the hit on it (t in world
/// units, the triangle and barycentrics in the object's own numbering).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObjectHit {
    /// Index of the object hit.
    pub object: u32,
    /// The hit on that object.
    pub hit: Hit,
}

/// The objects of a scene, their meshes and the BVH over their bounds.
#[derive(Debug, Clone)]
pub struct TopLevel {
    slots: Vec<Slot>,
    fields: Vec<HeightField>,
    /// The object index of each of `fields`.
    field_objects: Vec<u32>,
    meshes: Vec<Bvh>,
    /// Per placement, world space to the instance's object space: the only
    /// thing an instance keeps besides its object slot (the world-from-object
    /// map is needed for the bounds alone, at build time).
    object_from_world: Vec<Frame>,
    tree: Tree,
    /// Object index of each leaf-order slot.
    order: Vec<u32>,
}

impl TopLevel {
    /// Builds the top level over `objects`, whose meshes are `meshes` and
    /// whose placements (world from object) are `placements`.
    ///
    /// # Panics
    /// If an object names a mesh or a placement that is not given.
    pub fn build(objects: Vec<Object>, meshes: Vec<Bvh>, placements: Vec<Affine3A>) -> TopLevel {
        // A placed mesh's world box is the box of its placed vertices, not
        // the box of its one transformed box: a turned rock's corners stick
        // out far past it, and every shadow and sky ray through them paid
        // for the transform and the mesh's root (boulder-field's 400 rocks:
        // 6.4 → 7.4 Mrays/s with the transformed boxes of the BVH's nodes
        // two levels down; 7.9 → 8.2 with the vertices; the same pixels).
        //
        // The tree holds the meshes alone. The terrain's grids, whose boxes
        // hold everything, are tested on their own before it (as batches
        // where rays come in batches): in the tree, every ray entered the
        // terrain's leaf and was handed it only to pass it over.
        let shapes: Vec<(Vec<Vec3>, f32)> = meshes
            .iter()
            .map(|m| (m.vertices(), reach(&m.bounds())))
            .collect();
        let placed: Vec<(u32, Aabb)> = objects
            .par_iter()
            .enumerate()
            .filter_map(|(k, o)| match o {
                Object::Terrain(_) => None,
                Object::Mesh { mesh, placement } => Some((
                    k as u32,
                    match *placement {
                        Object::WORLD => meshes[*mesh as usize].bounds(),
                        p => {
                            let (vertices, reach) = &shapes[*mesh as usize];
                            placed_bounds(vertices, *reach, &placements[p as usize])
                        }
                    },
                )),
            })
            .collect();
        let bounds: Vec<Aabb> = placed.iter().map(|&(_, b)| b).collect();
        let (tree, order) = Tree::build(&bounds, LeafCost::PerInstance);
        let order = order.iter().map(|&i| placed[i as usize].0).collect();
        let object_from_world = placements.iter().map(|m| Frame::of(&m.inverse())).collect();
        let (mut fields, mut field_objects) = (Vec::new(), Vec::new());
        let slots = objects
            .into_iter()
            .enumerate()
            .map(|(k, o)| match o {
                Object::Terrain(field) => {
                    fields.push(*field);
                    field_objects.push(k as u32);
                    Slot {
                        mesh: Slot::TERRAIN,
                        placement: fields.len() as u32 - 1,
                    }
                }
                Object::Mesh { mesh, placement } => Slot { mesh, placement },
            })
            .collect();
        TopLevel {
            slots,
            fields,
            field_objects,
            meshes,
            object_from_world,
            tree,
            order,
        }
    }

    /// World space to the object space of placement `placement`, or `None`
    /// for [`Object::WORLD`].
    #[inline]
    pub fn object_from_world(&self, placement: u32) -> Option<Affine3A> {
        self.object_from_world
            .get(placement as usize)
            .map(Frame::affine)
    }

    /// The objects, in the order given to [`TopLevel::build`].
    pub fn objects(&self) -> impl ExactSizeIterator<Item = ObjectRef<'_>> + '_ {
        (0..self.slots.len() as u32).map(|k| self.object(k))
    }

    /// Object `k`, numbered in the order given to [`TopLevel::build`].
    #[inline]
    pub fn object(&self, k: u32) -> ObjectRef<'_> {
        let slot = self.slots[k as usize];
        match slot.mesh {
            Slot::TERRAIN => ObjectRef::Terrain(&self.fields[slot.placement as usize]),
            mesh => ObjectRef::Mesh {
                mesh,
                placement: slot.placement,
            },
        }
    }

    /// Number of objects.
    pub fn object_count(&self) -> usize {
        self.slots.len()
    }

    /// The meshes' BVHs.
    pub fn meshes(&self) -> &[Bvh] {
        &self.meshes
    }

    /// Bytes held by the top level, the terrain hierarchy and the meshes'
    /// BVHs.
    pub fn memory_bytes(&self) -> usize {
        self.tree.memory_bytes()
            + self.order.len() * 4
            + std::mem::size_of_val(self.slots.as_slice())
            + std::mem::size_of_val(self.field_objects.as_slice())
            + std::mem::size_of_val(self.object_from_world.as_slice())
            + self
                .fields
                .iter()
                .map(HeightField::memory_bytes)
                .sum::<usize>()
            + self.meshes.iter().map(Bvh::memory_bytes).sum::<usize>()
    }

    /// The terrain grids' views for a view of `camera_rays` camera rays
    /// (and at most as many shadow rays) from `eye` (its position and a
    /// sample of its ray directions) lit from `light` (a direction and an
    /// angular radius); see [`HeightField::view`].
    pub fn view(
        &self,
        light: Option<(Vec3, f32)>,
        eye: Option<(Vec3, &[Vec3])>,
        camera_rays: usize,
    ) -> View {
        View {
            fields: self
                .fields
                .iter()
                .map(|f| f.view(light, eye, camera_rays))
                .collect(),
        }
    }

    /// The closest hit along `ray` with t in (0, t_max], with the grids'
    /// `view`. Of hits at the same t, the lowest object index, then the
    /// lowest triangle.
    pub fn intersect(&self, view: &View, ray: &Ray, t_max: f32) -> Option<ObjectHit> {
        self.intersect_where(view, ray, t_max, |_, _| true)
    }

    /// [`TopLevel::intersect`] among the hits `keep` accepts, given a
    /// mesh object's index and its hit (in the object's space, t as the
    /// ray's); the terrain's grids' hits always count.
    #[inline]
    pub fn intersect_where(
        &self,
        view: &View,
        ray: &Ray,
        t_max: f32,
        keep: impl Fn(u32, &Hit) -> bool,
    ) -> Option<ObjectHit> {
        // The terrain's grids first, then the meshes up to their best hit.
        let (mut t_start, mut best) = (t_max, None);
        for (object, field, seen) in self.terrains(view) {
            if let Some(hit) = field.intersect_in(seen, ray, t_start) {
                offer(ObjectHit { object, hit }, &mut t_start, &mut best);
            }
        }
        self.tree.closest(ray, t_start, |range, t_best| {
            for &object in &self.order[range] {
                let (bvh, local) = self.local(object, ray);
                if let Some(hit) = bvh.intersect_where(&local, *t_best, |h| keep(object, h)) {
                    offer(ObjectHit { object, hit }, t_best, &mut best);
                }
            }
        });
        best
    }

    /// [`TopLevel::intersect`] for each ray of a batch (`hits[k]` for
    /// `rays[k]` within `t_max[k]`), bit for bit: the terrain's walks run as
    /// one batch ([`HeightField::intersect_batch`]), then the rays visit the
    /// other objects up to their terrain hits eight at a time (see
    /// `TopLevel::closest_octets`).
    pub fn intersect_batch(
        &self,
        view: &View,
        rays: &[Ray],
        t_max: &[f32],
        hits: &mut [Option<ObjectHit>],
    ) {
        hits.fill(None);
        // The terrain's levels (the tile, then its far-field rings, inner
        // to outer) one batch each, every ray limited by its best hit so far.
        let mut limits = t_max.to_vec();
        let mut found = vec![None; rays.len()];
        for (object, field, seen) in self.terrains(view) {
            field.intersect_batch_in(seen, rays, &limits, &mut found);
            for k in 0..rays.len() {
                if let Some(hit) = found[k] {
                    offer(ObjectHit { object, hit }, &mut limits[k], &mut hits[k]);
                }
            }
        }
        if self.slots.len() > self.fields.len() {
            self.closest_octets(rays, t_max, hits);
        }
    }

    /// [`TopLevel::closest`] for each ray of a batch, eight neighbouring
    /// rays at a time down the top tree and, together, down each mesh they
    /// reach ([`Bvh::intersect_batch`]); `best[k]` holds ray `k`'s hit on
    /// the terrain, if any, and becomes its closest hit.
    fn closest_octets(&self, rays: &[Ray], t_max: &[f32], best: &mut [Option<ObjectHit>]) {
        for ((rays, t_max), best) in rays
            .chunks(OCTET)
            .zip(t_max.chunks(OCTET))
            .zip(best.chunks_mut(OCTET))
        {
            let t_start: ArrayVec<f32, OCTET> = (0..rays.len())
                .map(|k| best[k].map_or(t_max[k], |b| b.hit.t))
                .collect();
            self.tree
                .closest_octet(rays, &t_start, |mask, range, t_best| {
                    for &object in &self.order[range] {
                        self.closest_on_object(object, rays, mask, t_best, best);
                    }
                });
        }
    }

    /// Offers the hits on object `object` of the rays of `octet` named by
    /// `mask` (within `t_best`) as their closest hits in `best`. Several
    /// rays into a mesh go down its BVH together.
    #[inline]
    fn closest_on_object(
        &self,
        object: u32,
        octet: &[Ray],
        mask: u32,
        t_best: &mut [f32; OCTET],
        best: &mut [Option<ObjectHit>],
    ) {
        match self.object(object) {
            ObjectRef::Mesh { mesh, placement } if !mask.is_power_of_two() => {
                let (local, limits, ks) =
                    object_rays(octet, t_best, mask, self.object_from_world(placement));
                let mut found = [None; OCTET];
                self.meshes[mesh as usize].intersect_batch(&local, &limits, &mut found[..ks.len()]);
                for (&k, found) in ks.iter().zip(found) {
                    if let Some(hit) = found {
                        offer(ObjectHit { object, hit }, &mut t_best[k], &mut best[k]);
                    }
                }
            }
            _ => {
                for k in rays_of(mask) {
                    if let Some(hit) = self.object_hit(object, &octet[k], t_best[k]) {
                        offer(ObjectHit { object, hit }, &mut t_best[k], &mut best[k]);
                    }
                }
            }
        }
    }

    /// Whether anything lies along `ray` with t in (0, t_max].
    pub fn occluded(&self, view: &View, ray: &Ray, t_max: f32) -> bool {
        self.terrains(view)
            .any(|(_, field, seen)| field.occluded_in(seen, ray, t_max))
            || self.any(ray, t_max)
    }

    /// [`TopLevel::occluded`] among the hits `keep` accepts (as
    /// [`TopLevel::intersect_where`]).
    pub fn occluded_where(
        &self,
        view: &View,
        ray: &Ray,
        t_max: f32,
        keep: impl Fn(u32, &Hit) -> bool,
    ) -> bool {
        self.terrains(view)
            .any(|(_, field, seen)| field.occluded_in(seen, ray, t_max))
            || self.tree.any(ray, t_max, |range| {
                self.order[range].iter().any(|&object| {
                    let (bvh, local) = self.local(object, ray);
                    bvh.occluded_where(&local, t_max, |h| keep(object, h))
                })
            })
    }

    /// [`TopLevel::occluded`] for each ray of a batch: the terrain first, as
    /// one batch, then the meshes for the rays it leaves open, eight at a
    /// time: the open rays grouped by the octant of their direction (in
    /// batch order within each), so that a render's sun rays, which
    /// share a direction, go down the top tree and into each rock's BVH
    /// together (see [`TopLevel::any_octets`]).
    pub fn occluded_batch(&self, view: &View, rays: &[Ray], t_max: &[f32], blocked: &mut [bool]) {
        blocked.fill(false);
        // The terrain's levels one batch each (the tile, then the far-field
        // rings); a ray blocked by one goes on with no length, which a ring
        // answers without walking it.
        let mut limits = t_max.to_vec();
        let mut hit = vec![false; rays.len()];
        for (_, field, seen) in self.terrains(view) {
            field.occluded_batch_in(seen, rays, &limits, &mut hit);
            for k in 0..rays.len() {
                if hit[k] {
                    blocked[k] = true;
                    limits[k] = 0.0;
                }
            }
        }
        if self.slots.len() > self.fields.len() {
            let order = open_by_octant(rays, blocked);
            self.any_octets(rays, t_max, &order, blocked);
        }
    }

    /// Whether a mesh lies along each ray named in `order` within its
    /// limit, into `blocked`, eight rays of `order` at a time down the top
    /// tree ([`Tree::any_octet`]); several rays into a mesh go down its
    /// BVH together ([`Bvh::occluded_batch`]).
    fn any_octets(&self, rays: &[Ray], t_max: &[f32], order: &[u32], blocked: &mut [bool]) {
        self.tree.any_octets(
            rays,
            t_max,
            order,
            |octet, limits, mask, range| {
                let mut hit = 0;
                for &object in &self.order[range] {
                    hit |= self.blocks_on_object(object, octet, limits, mask & !hit);
                    if hit == mask {
                        break;
                    }
                }
                hit
            },
            blocked,
        );
    }

    /// The mask of the rays of `octet` named by `mask` that mesh object
    /// `object` blocks within their limits.
    #[inline]
    fn blocks_on_object(&self, object: u32, octet: &[Ray], limits: &[f32], mask: u32) -> u32 {
        if mask.is_power_of_two() {
            let k = mask.trailing_zeros() as usize;
            return u32::from(self.object_blocks(object, &octet[k], limits[k])) << k;
        }
        let slot = self.slots[object as usize];
        let (local, local_limits, ks) =
            object_rays(octet, limits, mask, self.object_from_world(slot.placement));
        let mut found = [false; OCTET];
        self.meshes[slot.mesh as usize].occluded_batch(
            &local,
            &local_limits,
            &mut found[..ks.len()],
        );
        ks.iter()
            .zip(found)
            .filter(|&(_, f)| f)
            .fold(0, |hit, (&k, _)| hit | 1 << k)
    }

    /// Whether a mesh (any object but the terrain's grids) lies along
    /// `ray` within t_max.
    fn any(&self, ray: &Ray, t_max: f32) -> bool {
        self.tree.any(ray, t_max, |range| {
            self.order[range]
                .iter()
                .any(|&object| self.object_blocks(object, ray, t_max))
        })
    }

    /// The closest hit of `ray` on mesh object `object` (one of the
    /// tree's) with t in (0, t_max].
    #[inline]
    fn object_hit(&self, object: u32, ray: &Ray, t_max: f32) -> Option<Hit> {
        let (bvh, local) = self.local(object, ray);
        bvh.intersect(&local, t_max)
    }

    /// Whether mesh object `object` (one of the tree's) lies along `ray`
    /// with t in (0, t_max].
    #[inline]
    fn object_blocks(&self, object: u32, ray: &Ray, t_max: f32) -> bool {
        let (bvh, local) = self.local(object, ray);
        bvh.occluded(&local, t_max)
    }

    /// The BVH of mesh object `object` (one of the tree's: the terrain's
    /// grids are not), with `ray` carried into its space.
    #[inline]
    fn local(&self, object: u32, ray: &Ray) -> (&Bvh, Ray) {
        let slot = self.slots[object as usize];
        debug_assert!(
            slot.mesh != Slot::TERRAIN,
            "the top tree holds meshes alone"
        );
        (
            &self.meshes[slot.mesh as usize],
            in_space(ray, self.object_from_world(slot.placement)),
        )
    }

    /// The terrain's grids (the tile, then any far-field rings), with
    /// their object indices and their views in `view`, in the order given.
    fn terrains<'a>(
        &'a self,
        view: &'a View,
    ) -> impl Iterator<Item = (u32, &'a HeightField, &'a FieldView)> + 'a {
        self.field_objects
            .iter()
            .copied()
            .zip(&self.fields)
            .enumerate()
            .map(|(k, (object, field))| (object, field, view.field(k)))
    }
}

/// An affine map kept in 48 bytes, its four columns unpadded (an
/// `Affine3A` pads each to 16): the instance's share of memory. Unpacking
/// copies the same floats, so rays transform bit for bit as before.
#[derive(Debug, Clone, Copy)]
struct Frame([Vec3; 4]);

impl Frame {
    fn of(m: &Affine3A) -> Frame {
        let c = m.to_cols_array_2d();
        Frame(c.map(Vec3::from_array))
    }

    #[inline]
    fn affine(&self) -> Affine3A {
        let [x, y, z, w] = self.0;
        Affine3A::from_cols(x.into(), y.into(), z.into(), w.into())
    }
}

/// `ray` carried into the space of an object placed by `object_from_world`
/// (itself for an object in world space), t unchanged.
#[inline]
fn in_space(ray: &Ray, object_from_world: Option<Affine3A>) -> Ray {
    match object_from_world {
        None => *ray,
        Some(m) => Ray::new(m.transform_point3(ray.origin), m.transform_vector3(ray.dir)),
    }
}

/// Offers `candidate` as a ray's closest hit: it replaces `best` (and
/// lowers `t_best`) if it lies within `t_best` and is nearer, or as near
/// and on a lower (object, triangle).
#[inline]
fn offer(candidate: ObjectHit, t_best: &mut f32, best: &mut Option<ObjectHit>) {
    let hit = candidate.hit;
    let better = match best {
        None => true,
        Some(b) => {
            hit.t < b.hit.t
                || (hit.t == b.hit.t
                    && (candidate.object, hit.triangle) < (b.object, b.hit.triangle))
        }
    };
    if better && hit.t <= *t_best {
        *t_best = hit.t;
        *best = Some(candidate);
    }
}

/// The rays of `octet` named by `mask`, in the object space of an object
/// placed by `object_from_world`, with their limits (from `limits`, one
/// per ray of the octet) and their indices in the octet.
#[inline]
fn object_rays(
    octet: &[Ray],
    limits: &[f32],
    mask: u32,
    object_from_world: Option<Affine3A>,
) -> (
    ArrayVec<Ray, OCTET>,
    ArrayVec<f32, OCTET>,
    ArrayVec<usize, OCTET>,
) {
    let ks: ArrayVec<usize, OCTET> = rays_of(mask).collect();
    let rays = ks
        .iter()
        .map(|&k| in_space(&octet[k], object_from_world))
        .collect();
    let limits = ks.iter().map(|&k| limits[k]).collect();
    (rays, limits, ks)
}

/// The largest coordinate, in magnitude, of anything in box `b`.
fn reach(b: &Aabb) -> f32 {
    b.min.abs().max(b.max.abs()).max_element()
}

/// The world box of a mesh with vertices `vertices` (in its own space, no
/// coordinate larger than `reach` in magnitude) placed by `m`: the box of
/// the placed vertices, widened by eight roundings of the largest
/// magnitude in the transform's sums. A ray is
/// carried into the mesh's space rather than the vertices out of it, so
/// the box must hold the vertices as that ray meets them, and a box face
/// through a vertex would cull a ray that grazes it by a rounding.
fn placed_bounds(vertices: &[Vec3], reach: f32, m: &Affine3A) -> Aabb {
    let b = vertices
        .iter()
        .fold(Aabb::EMPTY, |acc, &v| acc.grow(m.transform_point3(v)));
    if b.min.x > b.max.x {
        return b;
    }
    let linear = m.matrix3.x_axis.abs() + m.matrix3.y_axis.abs() + m.matrix3.z_axis.abs();
    let magnitude = Vec3::from(m.translation).abs().max_element() + linear.max_element() * reach;
    let pad = Vec3::splat(magnitude * 8.0 * f32::EPSILON);
    Aabb {
        min: b.min - pad,
        max: b.max + pad,
    }
}

/// The world box around a transformed object box: the box of its eight
/// transformed corners.
pub fn transform_bounds(b: &Aabb, m: &Affine3A) -> Aabb {
    if b.min.x > b.max.x {
        return *b;
    }
    (0..8).fold(Aabb::EMPTY, |acc, k| {
        let corner = Vec3::new(
            if k & 1 == 0 { b.min.x } else { b.max.x },
            if k & 2 == 0 { b.min.y } else { b.max.y },
            if k & 4 == 0 { b.min.z } else { b.max.z },
        );
        acc.grow(m.transform_point3(corner))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::TriangleMesh;
    use crate::terrain::{Heightmap, TerrainGrid};
    use proptest::prelude::*;

    fn tetra() -> TriangleMesh {
        TriangleMesh {
            positions: vec![
                Vec3::new(1.0, 1.0, 1.0),
                Vec3::new(1.0, -1.0, -1.0),
                Vec3::new(-1.0, 1.0, -1.0),
                Vec3::new(-1.0, -1.0, 1.0),
            ],
            normals: vec![],
            indices: vec![[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]],
        }
    }

    fn placement(k: usize) -> Affine3A {
        let r = |s| crate::hash::unit_f32(77, k as u64, s);
        Affine3A::from_scale_rotation_translation(
            Vec3::new(0.5 + r(1), 0.5 + r(2), 0.5 + r(3)),
            glam::Quat::from_euler(glam::EulerRot::YXZ, r(4) * 6.0, r(5) * 3.0, r(6) * 6.0),
            Vec3::new(r(7) * 20.0 - 10.0, r(8) * 4.0, r(9) * 20.0 - 10.0),
        )
    }

    /// The same rocks as instances and as transformed copies, over a
    /// terrain: the same object is hit at nearly the same t, and occlusion
    /// agrees, for rays from all around.
    #[test]
    fn instances_match_transformed_copies() {
        let n = 40;
        let mesh = tetra();
        let heights = Heightmap::new(9, 9, (0..81).map(|k| (k % 7) as f32 * 0.2).collect());
        let grid = TerrainGrid {
            heights,
            size: [30.0, 30.0],
        };
        let terrain = || Object::Terrain(Box::new(HeightField::build(&grid)));
        let mut inst = vec![terrain()];
        let mut copy = vec![terrain()];
        let mut copies = Vec::new();
        for k in 0..n {
            let m = placement(k);
            inst.push(Object::Mesh {
                mesh: 0,
                placement: k as u32,
            });
            copy.push(Object::Mesh {
                mesh: k as u32,
                placement: Object::WORLD,
            });
            let mut placed = mesh.clone();
            placed
                .positions
                .iter_mut()
                .for_each(|p| *p = m.transform_point3(*p));
            copies.push(Bvh::build(&placed));
        }
        let instanced = TopLevel::build(
            inst,
            vec![Bvh::build(&mesh)],
            (0..n).map(placement).collect(),
        );
        let copied = TopLevel::build(copy, copies, Vec::new());
        assert_eq!(instanced.meshes().len(), 1, "one mesh for all instances");
        let mut rock_hits = 0;
        for k in 0..4000u64 {
            let r = |s| crate::hash::unit_f32(k, s, 1);
            let origin = Vec3::new(r(1) * 40.0 - 20.0, 2.0 + r(2) * 12.0, r(3) * 40.0 - 20.0);
            let target = Vec3::new(r(4) * 24.0 - 12.0, r(5) * 3.0, r(6) * 24.0 - 12.0);
            let ray = Ray::new(origin, (target - origin).normalize());
            let a = instanced.intersect(&View::default(), &ray, f32::INFINITY);
            let b = copied.intersect(&View::default(), &ray, f32::INFINITY);
            match (a, b) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    assert_eq!(a.object, b.object, "ray {k}");
                    assert_eq!(a.hit.triangle, b.hit.triangle, "ray {k}");
                    assert!((a.hit.t - b.hit.t).abs() < 1e-4 * a.hit.t, "ray {k}");
                    rock_hits += (a.object > 0) as usize;
                }
                other => panic!("ray {k}: {other:?}"),
            }
            assert_eq!(
                instanced.occluded(&View::default(), &ray, f32::INFINITY),
                copied.occluded(&View::default(), &ray, f32::INFINITY)
            );
        }
        assert!(rock_hits > 300, "rays hit rocks ({rock_hits})");

        // Batches (the terrain's rays walk together) give bit for bit the
        // single-ray answers, for the terrain first among the objects and
        // for the terrain last; a rock resting on the ground makes ties.
        let mut last: Vec<Object> = (0..=n as u32)
            .map(|k| match k {
                0 => terrain(),
                k => Object::Mesh {
                    mesh: k - 1,
                    placement: Object::WORLD,
                },
            })
            .collect();
        last.rotate_left(1);
        let terrain_last = TopLevel::build(last, copied.meshes.clone(), Vec::new());
        let rays: Vec<Ray> = (0..3000u64)
            .map(|k| {
                let r = |s| crate::hash::unit_f32(k, s, 2);
                let origin = Vec3::new(r(1) * 40.0 - 20.0, r(2) * 14.0, r(3) * 40.0 - 20.0);
                let target = Vec3::new(r(4) * 24.0 - 12.0, r(5) * 3.0, r(6) * 24.0 - 12.0);
                Ray::new(origin, (target - origin).normalize())
            })
            .collect();
        let t_max: Vec<f32> = (0..rays.len())
            .map(|k| if k % 3 == 0 { 15.0 } else { f32::INFINITY })
            .collect();
        // With a view (horizons toward a light, a sight table from an eye)
        // the answers are the ones without.
        let eye = Vec3::new(0.0, 14.0, -20.0);
        let directions: Vec<Vec3> = rays.iter().map(|r| r.dir).collect();
        let light = (Vec3::new(0.3, 0.8, 0.2).normalize(), 0.01);
        for top in [&instanced, &copied, &terrain_last] {
            let none = View::default();
            for view in [
                &none,
                &top.view(Some(light), Some((eye, &directions)), usize::MAX),
            ] {
                let mut hits = vec![None; rays.len()];
                top.intersect_batch(view, &rays, &t_max, &mut hits);
                let mut blocked = vec![false; rays.len()];
                top.occluded_batch(view, &rays, &t_max, &mut blocked);
                for (k, ray) in rays.iter().enumerate() {
                    assert_eq!(hits[k], top.intersect(&none, ray, t_max[k]), "ray {k}");
                    assert_eq!(blocked[k], top.occluded(&none, ray, t_max[k]), "ray {k}");
                    assert_eq!(blocked[k], top.occluded(view, ray, t_max[k]), "ray {k}");
                }
            }
        }
    }

    /// Rows of eight camera rays (wider apart than the 4 × 2 blocks a
    /// render's Z-ordered patches hand over) over a field of tessellated
    /// rocks go down the top tree and into the rocks' BVHs as octets; each
    /// ray's hit and occlusion are bit for bit the single-ray answers, with
    /// and without a terrain under the rocks.
    #[test]
    fn octets_through_instances_match_single_rays() {
        let rock = crate::rock::object_mesh(&crate::rock::SphereMesh::uv(12, 24), None);
        let rocks = (0..60).map(|k| Object::Mesh {
            mesh: 0,
            placement: k as u32,
        });
        let places = || (0..60).map(placement).collect::<Vec<_>>();
        let heights = Heightmap::new(
            17,
            17,
            (0..289).map(|k| ((k * 7) % 11) as f32 * 0.15).collect(),
        );
        let grid = TerrainGrid {
            heights,
            size: [30.0, 30.0],
        };
        let on_terrain = TopLevel::build(
            std::iter::once(Object::Terrain(Box::new(HeightField::build(&grid))))
                .chain(rocks.clone())
                .collect(),
            vec![Bvh::build(&rock)],
            places(),
        );
        let alone = TopLevel::build(rocks.collect(), vec![Bvh::build(&rock)], places());
        let eye = Vec3::new(-16.0, 9.0, -18.0);
        let rays: Vec<Ray> = (0..48 * 64)
            .map(|k| {
                let (x, y) = (k % 64, k / 64);
                let dir = Vec3::new(0.25 + x as f32 * 0.012, -0.2 - y as f32 * 0.009, 1.0);
                Ray::new(eye, dir.normalize())
            })
            .collect();
        let t_max: Vec<f32> = (0..rays.len())
            .map(|k| if k % 5 == 2 { 22.0 } else { f32::INFINITY })
            .collect();
        for top in [&on_terrain, &alone] {
            let mut hits = vec![None; rays.len()];
            top.intersect_batch(&View::default(), &rays, &t_max, &mut hits);
            let mut blocked = vec![false; rays.len()];
            top.occluded_batch(&View::default(), &rays, &t_max, &mut blocked);
            let mut rock_hits = 0;
            for (k, ray) in rays.iter().enumerate() {
                let one = top.intersect(&View::default(), ray, t_max[k]);
                assert_eq!(
                    hits[k].map(|h| (h.object, h.hit.triangle, h.hit.t.to_bits())),
                    one.map(|h| (h.object, h.hit.triangle, h.hit.t.to_bits())),
                    "ray {k}"
                );
                assert_eq!(
                    blocked[k],
                    top.occluded(&View::default(), ray, t_max[k]),
                    "ray {k}"
                );
                rock_hits += hits[k]
                    .is_some_and(|h| matches!(top.object(h.object), ObjectRef::Mesh { .. }))
                    as usize;
            }
            assert!(rock_hits > 300, "rays hit rocks ({rock_hits})");
        }
    }

    /// A placed rock's world box is the box of its placed vertices, widened
    /// by no more than its rounding pad: it holds every placed vertex, lies
    /// inside the box of its transformed root box (for a turned rock, at
    /// well under half its volume), and a ray aimed at the vertex that
    /// touches a face of it still finds the rock as the mesh alone does.
    #[test]
    fn a_placed_mesh_is_bounded_by_its_vertices() {
        let rock = crate::rock::object_mesh(&crate::rock::SphereMesh::icosphere(3), None);
        let bvh = Bvh::build(&rock);
        let vertices = bvh.vertices();
        let mut distinct: Vec<[u32; 3]> = rock
            .positions
            .iter()
            .map(|v| v.to_array().map(f32::to_bits))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(vertices.len(), distinct.len(), "each vertex once");
        let volume = |b: &Aabb| (b.max - b.min).x * (b.max - b.min).y * (b.max - b.min).z;
        let n = 50;
        let top = TopLevel::build(
            (0..n)
                .map(|k| Object::Mesh {
                    mesh: 0,
                    placement: k,
                })
                .collect(),
            vec![bvh.clone()],
            (0..n as usize).map(placement).collect(),
        );
        let mut ratio = 0.0;
        for k in 0..n as usize {
            let m = placement(k);
            let tight = placed_bounds(&vertices, reach(&bvh.bounds()), &m);
            let placed: Vec<Vec3> = rock
                .positions
                .iter()
                .map(|&v| m.transform_point3(v))
                .collect();
            let exact = placed.iter().fold(Aabb::EMPTY, |b, &q| b.grow(q));
            let (below, above) = (exact.min - tight.min, tight.max - exact.max);
            assert!(
                below.cmpge(Vec3::ZERO).all()
                    && above.cmpge(Vec3::ZERO).all()
                    && below.max(above).max_element() < 1e-4,
                "{k}: {below} {above}"
            );
            let loose = transform_bounds(&bvh.bounds(), &m);
            assert!(tight.min.cmpge(loose.min).all() && tight.max.cmple(loose.max).all());
            ratio += volume(&tight) / volume(&loose) / n as f32;
            // The vertices on the box's faces, each aimed at from outside.
            for axis in 0..3 {
                for (q, from) in [
                    (
                        placed.iter().max_by(|a, b| a[axis].total_cmp(&b[axis])),
                        1.0,
                    ),
                    (
                        placed.iter().min_by(|a, b| a[axis].total_cmp(&b[axis])),
                        -1.0,
                    ),
                ] {
                    let q = *q.unwrap();
                    let mut origin = q + Vec3::new(0.3, -0.2, 0.1) * k as f32 / n as f32;
                    origin[axis] += from * 6.0;
                    let ray = Ray::new(origin, (q - origin).normalize());
                    let alone = bvh.intersect(&in_space(&ray, Some(m.inverse())), f32::INFINITY);
                    let found = top.intersect(&View::default(), &ray, f32::INFINITY);
                    assert!(alone.is_some(), "{k} {axis}: the ray reaches the rock");
                    if found.map(|h| h.object) == Some(k as u32) {
                        assert_eq!(found.map(|h| h.hit), alone, "{k} {axis}");
                    }
                    assert!(
                        found.is_some_and(|h| h.hit.t <= alone.unwrap().t),
                        "{k} {axis}"
                    );
                }
            }
        }
        assert!(ratio < 0.4, "the vertices' box is tighter: {ratio}");
    }

    proptest! {
        /// The box of the transformed corners holds every transformed point.
        #[test]
        fn transformed_bounds_hold_the_points(k in 0usize..1000, p in prop::array::uniform3(-1.0f32..1.0)) {
            let b = Aabb { min: Vec3::splat(-1.0), max: Vec3::splat(1.0) };
            let m = placement(k);
            let q = m.transform_point3(Vec3::from_array(p));
            let w = transform_bounds(&b, &m);
            prop_assert!(q.cmpge(w.min - 1e-4).all() && q.cmple(w.max + 1e-4).all());
        }
    }
}
