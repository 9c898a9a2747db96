//! The world built each way it can be (terrain as a grid or a mesh,
//! scattered rocks as instances or copies) renders the same picture: the
//! faster structures are checked against the plain ones here, where both
//! are rendered.
use std::path::Path;
use std::sync::atomic::AtomicBool;

use indicatif::ProgressBar;

use super::{framebuffer::Framebuffer, render};
use crate::scene::Scene;
use crate::world::*;

fn scene(name: &str, width: u32, height: u32) -> Scene {
    let mut s = crate::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap();
    s.image.width = width;
    s.image.height = height;
    s.image.samples = 1;
    s
}

fn picture(scene: &Scene, options: BuildOptions) -> (Framebuffer, World) {
    let world = World::build_with(scene, options);
    let (fb, _) = render(
        scene,
        &world,
        &scene.camera(),
        &ProgressBar::hidden(),
        &AtomicBool::new(false),
    )
    .unwrap();
    (fb, world)
}

fn bits(fb: &Framebuffer) -> Vec<[u32; 4]> {
    fb.pixels
        .iter()
        .map(|p| p.to_array().map(f32::to_bits))
        .collect()
}

/// The terrain traced through its grid hierarchy and as a triangle mesh
/// through a BVH: the same triangles and the same hits, so the same
/// image bit for bit (sun, soft shadows and sky-light rays included).
#[test]
fn grid_and_mesh_terrain_render_the_same_image() {
    for (name, w, h) in [
        ("scenes/rocky-valley.json", 96, 54),
        ("scenes/eroded-island.json", 96, 54),
        ("scenes/fisheye.json", 64, 64),
    ] {
        let s = scene(name, w, h);
        let (grid, gw) = picture(&s, BuildOptions::default());
        let (mesh, mw) = picture(
            &s,
            BuildOptions {
                terrain_grid: false,
                ..BuildOptions::default()
            },
        );
        assert_eq!(gw.triangle_count(), mw.triangle_count());
        assert!(
            gw.accel_bytes() * 8 < mw.accel_bytes(),
            "{name}: the grid hierarchy is far smaller ({} vs {} bytes)",
            gw.accel_bytes(),
            mw.accel_bytes()
        );
        assert!(bits(&grid) == bits(&mesh), "{name}: images differ");
    }
}

/// A tile's smooth normals made from its heights while shading (as for
/// tiles over [`crate::world::STORED_NORMALS`] samples) instead of stored:
/// the same image bit for bit, and 12 bytes a sample less.
#[test]
fn normals_from_heights_render_the_stored_normals_image() {
    for (name, w, h) in [
        ("scenes/rocky-valley.json", 96, 54),
        ("scenes/horizon.json", 96, 54),
    ] {
        let s = scene(name, w, h);
        let (stored, sw) = picture(&s, BuildOptions::default());
        let none = BuildOptions {
            stored_normals: 0,
            ..BuildOptions::default()
        };
        let (computed, cw) = picture(&s, none);
        let [tw, th] = s.terrain.resolution;
        assert_eq!(
            sw.memory_bytes() - cw.memory_bytes(),
            12 * tw * th,
            "{name}: the stored normals' bytes"
        );
        assert!(bits(&stored) == bits(&computed), "{name}: images differ");
    }
}

/// The terrain's sight lines from the camera change no pixel, and are
/// built only where the pixels traced pay for them: a farm part's
/// region counts, not the whole image.
#[test]
fn sight_lines_change_no_pixel() {
    let mut s = scene("scenes/diamond-hills.json", 96, 54);
    s.terrain.resolution = [65, 65];
    let (with, w) = picture(&s, BuildOptions::default());
    let part = BuildOptions {
        traced_pixels: Some(16),
        ..BuildOptions::default()
    };
    let (without, wo) = picture(&s, part);
    assert!(
        w.accel_bytes() > wo.accel_bytes(),
        "a table for the whole image ({} against {} bytes)",
        w.accel_bytes(),
        wo.accel_bytes()
    );
    assert!(bits(&with) == bits(&without), "images differ");
}

/// A boulder field of instanced rocks against the same rocks as placed
/// copies: eight stored rock meshes (its variants) instead of 400, and the same image up to
/// the rounding of hits computed in object space instead of world space
/// (a few pixels on silhouettes and shadow edges).
#[test]
fn instanced_and_copied_rocks_render_the_same_image() {
    let s = scene("scenes/boulder-field.json", 128, 72);
    let (inst, iw) = picture(&s, BuildOptions::default());
    let (copy, cw) = picture(
        &s,
        BuildOptions {
            instancing: false,
            ..BuildOptions::default()
        },
    );
    assert_eq!(iw.rock_count, 400);
    assert_eq!(iw.triangle_count(), cw.triangle_count());
    let rock = (iw.stored_triangle_count() - iw.grid_triangle_count()) as f64;
    let copied = (cw.stored_triangle_count() - cw.grid_triangle_count()) as f64;
    // 400 rocks of 8 variants: the instances store the 8 variants' meshes.
    assert_eq!(
        copied / rock,
        400.0 / 8.0,
        "instances store the variants' triangles"
    );
    let differing = inst
        .pixels
        .iter()
        .zip(&copy.pixels)
        .filter(|(a, b)| (**a - **b).abs().max_element() > 1e-3)
        .count();
    let close = inst
        .pixels
        .iter()
        .zip(&copy.pixels)
        .all(|(a, b)| (*a - *b).abs().max_element() < 0.5);
    assert!(
        differing * 1000 < inst.pixels.len() && close,
        "{differing} of {} pixels differ",
        inst.pixels.len()
    );
}
