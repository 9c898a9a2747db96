//! The populations of a scene as a Wavefront OBJ and its material library
//! (`scree terrain --populations-obj`): every instance placed, in world
//! units, each part with its texture coordinates and its material: `Kd`,
//! `map_Kd` and `map_d` naming the images read (their full paths), `d`
//! the opacity.

use std::fmt::Write;

use glam::Affine3A;

use super::Population;

/// The OBJ and MTL texts of `populations` placed at `places` (each
/// population's instances, object to world), the MTL named `mtl_name` in
/// the OBJ. Returns them and the instances' triangles.
pub fn obj_with_materials(
    populations: &[Population],
    places: &[Vec<Affine3A>],
    mtl_name: &str,
) -> (String, String, usize) {
    let mut obj = String::from("# scree populations\n");
    let mut mtl = String::from("# scree population materials\n");
    let _ = writeln!(obj, "mtllib {mtl_name}");
    // OBJ counts positions, coordinates and normals apart.
    let (mut first_v, mut first_t) = (1usize, 1usize);
    let mut triangles = 0;
    for (k, (p, places)) in populations.iter().zip(places).enumerate() {
        for (j, part) in p.parts.iter().enumerate() {
            let name = format!("population{k}_{j}");
            let c = part.color;
            let _ = writeln!(mtl, "\nnewmtl {name}\nKd {} {} {}", c.x, c.y, c.z);
            if part.opacity < 1.0 {
                let _ = writeln!(mtl, "d {}", part.opacity);
            }
            for (statement, image) in [("map_Kd", &part.image), ("map_d", &part.alpha)] {
                if let Some(path) = image.as_ref().and_then(|t| t.source.as_ref()) {
                    let _ = writeln!(mtl, "{statement} {}", path.display());
                }
            }
            let uvs = !part.uvs.is_empty();
            for (i, place) in places.iter().enumerate() {
                let _ = writeln!(obj, "o {name}_{i}\nusemtl {name}");
                let normals = place.matrix3.inverse().transpose();
                let m = &part.mesh;
                for (v, n) in m.positions.iter().zip(&m.normals) {
                    let v = place.transform_point3(*v);
                    let n = (normals * glam::Vec3A::from(*n)).normalize_or_zero();
                    let _ = writeln!(obj, "v {} {} {}\nvn {} {} {}", v.x, v.y, v.z, n.x, n.y, n.z);
                }
                for uv in &part.uvs {
                    let _ = writeln!(obj, "vt {} {}", uv.x, uv.y);
                }
                for t in &m.indices {
                    let [a, b, c] = t.map(|v| v as usize + first_v);
                    if uvs {
                        let [ta, tb, tc] = t.map(|v| v as usize + first_t);
                        let _ = writeln!(obj, "f {a}/{ta}/{a} {b}/{tb}/{b} {c}/{tc}/{c}");
                    } else {
                        let _ = writeln!(obj, "f {a}//{a} {b}//{b} {c}//{c}");
                    }
                }
                first_v += m.positions.len();
                first_t += part.uvs.len();
                triangles += m.indices.len();
            }
        }
    }
    (obj, mtl, triangles)
}
