//! scree: an offline CPU ray tracer for terrain scenes.
//!
//! Data flows one way: scene file → [`scene::Source`] (the parsed file)
//! with [`scene::Overrides`] → one validation, each section checked by
//! the module that owns its type (`camera::file`, `terrain::file`,
//! `shade::file`, `rock::file`, `population::file`, `plant::file`,
//! `animation::file`)
//! → [`scene::Scene`] → [`world::World`] (terrain grid hierarchy, rock
//! and population meshes under one top level, built once) → for each
//! render, a [`world::Viewed`] world for its camera and sun → tiles
//! traced in parallel ([`render`]) through [`camera::Camera`] rays →
//! [`render::Framebuffer`] → PNG or EXR ([`output`]), driven by [`job`].
//! No module imports, directly or through others, one that imports it
//! back (`tests/integration/layering.rs` holds the house to that).
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
pub mod plant;
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
