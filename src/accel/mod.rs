//! Acceleration structures: rays, boxes and the BVH over triangles that both
//! terrain and rocks are traced through.

pub mod bvh;
pub mod ray;

pub use bvh::{Bvh, Hit};
pub use ray::{Aabb, Ray};
