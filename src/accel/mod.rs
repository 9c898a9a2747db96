//! Acceleration structures: rays and boxes, the BVH over triangle meshes,
//! the implicit hierarchy over terrain grids, and the top level over both.

pub mod bvh;
pub mod heightfield;
pub mod octet;
pub mod packet;
pub mod sah;
pub mod top;
pub mod wide;

pub use bvh::{Bvh, Hit, Tree};
pub use heightfield::HeightField;
pub use top::{Object, ObjectHit, TopLevel, Transform};
