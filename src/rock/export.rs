//! Rock export: the scene's tessellated rocks as one Wavefront OBJ, in
//! world units, so that other renderers (and `scree bench --obj`) trace the
//! same triangles.

use std::fmt::Write;

use crate::mesh::TriangleMesh;

/// The OBJ text of `rocks` (world-space meshes): `v` positions, `vn` unit
/// normals where the meshes carry them, and `f` faces with the meshes'
/// winding (1-based indices; `f a//a b//b c//c` with normals). Coordinates
/// are written in the shortest form that reads back as the same `f32`, so
/// the triangles are exactly the traced ones.
pub fn obj(rocks: &[TriangleMesh]) -> String {
    let triangles: usize = rocks.iter().map(|m| m.indices.len()).sum();
    let vertices: usize = rocks.iter().map(|m| m.positions.len()).sum();
    let mut s = String::with_capacity(vertices * 80 + triangles * 40);
    let _ = writeln!(
        s,
        "# scree rocks: {} rocks, {triangles} triangles",
        rocks.len()
    );
    let mut first = 1;
    for (k, mesh) in rocks.iter().enumerate() {
        let _ = writeln!(s, "o rock_{k}");
        mesh.write_obj(&mut s, first);
        first += mesh.positions.len();
    }
    s
}

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use crate::accel::Bvh;
    use crate::mesh::TriangleMesh;
    use crate::ray::Ray;
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
        let text = super::obj(&rocks);
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
}
