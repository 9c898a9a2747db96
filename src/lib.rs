//! scree: an offline CPU ray tracer for terrain scenes.
//!
//! Data flows one way: scene file → [`scene::Scene`] → [`world::World`]
//! (terrain mesh + BVH) → [`camera::Camera`] rays → tiles rendered in
//! parallel ([`render`]) → [`render::Framebuffer`] → PNG ([`output`]),
//! driven by [`job`]. No module imports one further down that list.
// The places allowed unsafe code are the SIMD kernels: the heightfield's
// lanes and their lane vectors (`accel::heightfield::{lanes, simd}`), the
// wide BVH's 8-wide box test (`accel::wide`) and its octets
// (`accel::octet`): intrinsics behind a run-time CPU check.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod accel;
pub mod animation;
pub mod bench;
pub mod camera;
pub mod check;
pub mod compare;
pub mod diff;
pub mod error;
pub mod farm;
pub mod hash;
pub mod isa;
pub mod job;
pub mod mesh;
pub mod output;
pub mod overlay;
pub mod population;
pub mod preview;
pub mod ray;
pub mod render;
pub mod rock;
pub mod sampling;
pub mod scene;
pub mod shade;
pub mod simd4;
pub mod terrain;
pub mod text;
pub mod texture;
pub mod tiling;
pub mod world;

pub use error::{Error, Result};
