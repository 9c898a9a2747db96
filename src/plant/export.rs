//! The plants of a scene as a Wavefront OBJ and its material library
//! (`scree terrain --plants-obj`): every plant placed, in world units,
//! its bark, leaves and flowers each with their material. A leaf material
//! carries its albedo as `Kd` and the share it passes through as `Tf`
//! (read as the translucency: light from behind times Tf); leaves whose
//! brightness varies get a material per plant, with the tint the
//! renderer gives them. Leaf cards (`leaf_image`) carry their texture
//! coordinates and name the image as `map_Kd` and `map_d`, with `Kd` the
//! plant's brightness factor.

use std::fmt::Write;

use glam::Vec3;

use super::place::{Plants, Stand};
use crate::shade::material::Material;

/// The OBJ and MTL texts of `plants` placed as `stands` say, the MTL
/// named `mtl_name` in the OBJ. Returns them and the plants' triangles.
pub fn obj_with_materials(
    plants: &[Plants],
    stands: &[Stand],
    mtl_name: &str,
) -> (String, String, usize) {
    let mut obj = String::from("# scree plants\n");
    let mut mtl = String::from("# scree plant materials (Tf: the share a leaf passes through)\n");
    let _ = writeln!(obj, "mtllib {mtl_name}");
    // OBJ counts vertices and normals apart; normals are written only
    // for meshes that have one per vertex, so their count trails.
    let mut first = 1usize;
    let mut first_n = 1usize;
    let mut first_t = 1usize;
    let mut triangles = 0;
    let mut material = |name: &str, kd: Vec3, tf: f32, image: Option<&std::path::Path>| {
        let _ = writeln!(mtl, "\nnewmtl {name}\nKd {} {} {}", kd.x, kd.y, kd.z);
        if tf > 0.0 {
            let _ = writeln!(mtl, "Tf {tf} {tf} {tf}");
        }
        if let Some(image) = image {
            let _ = writeln!(mtl, "map_Kd {0}\nmap_d {0}", image.display());
        }
    };
    for (k, (p, stand)) in plants.iter().zip(stands).enumerate() {
        let s = &p.species;
        let spots = stand.placed();
        for (part, mesh_of) in super::PARTS {
            let image = match part {
                "leaf" => p.leaf_image.as_ref().map(|i| i.path.as_path()),
                _ => None,
            };
            let shared = match part {
                "bark" => Some((s.bark_color, 0.0)),
                "flower" => Some((s.flower_color, 0.0)),
                _ if s.leaf_color_var == 0.0 && image.is_some() => {
                    Some((Vec3::ONE, s.translucency))
                }
                _ if s.leaf_color_var == 0.0 => Some((s.leaf_color, s.translucency)),
                _ => None,
            };
            let name = format!("{}_{k}_{part}", s.name);
            if let Some((kd, tf)) = shared {
                if spots
                    .iter()
                    .any(|q| !mesh_of(&p.variants[q.variant as usize]).indices.is_empty())
                {
                    material(&name, kd, tf, image);
                }
            }
            for (i, q) in spots.iter().enumerate() {
                let m = mesh_of(&p.variants[q.variant as usize]);
                if m.indices.is_empty() {
                    continue;
                }
                let _ = writeln!(obj, "o {name}_{i}");
                match shared {
                    Some(_) => {
                        let _ = writeln!(obj, "usemtl {name}");
                    }
                    None => {
                        // Tinted by its spot, as the renderer tints it.
                        let tint = match image {
                            Some(_) => {
                                let k = Material::brightness(s.leaf_color_var, p.seed, q.spot);
                                Vec3::splat(k.min(1.0))
                            }
                            None => Material::tint(s.leaf_color, s.leaf_color_var, p.seed, q.spot),
                        };
                        let own = format!("{name}_{i}");
                        material(&own, tint, s.translucency, image);
                        let _ = writeln!(obj, "usemtl {own}");
                    }
                }
                for v in &m.positions {
                    let w = q.place.transform_point3(*v);
                    let _ = writeln!(obj, "v {} {} {}", w.x, w.y, w.z);
                }
                let uvs = match image {
                    Some(_) => &p.variants[q.variant as usize].leaf_uvs[..],
                    None => &[],
                };
                for t in uvs {
                    let _ = writeln!(obj, "vt {} {}", t.x, t.y);
                }
                // Bark is smooth: its normals, turned with the plant.
                for n in &m.normals {
                    let w = q.place.transform_vector3(*n).normalize_or_zero();
                    let _ = writeln!(obj, "vn {} {} {}", w.x, w.y, w.z);
                }
                for t in &m.indices {
                    let [a, b, c] = t.map(|v| first + v as usize);
                    if !uvs.is_empty() {
                        let [ta, tb, tc] = t.map(|v| first_t + v as usize);
                        let _ = writeln!(obj, "f {a}/{ta} {b}/{tb} {c}/{tc}");
                    } else if m.normals.is_empty() {
                        let _ = writeln!(obj, "f {a} {b} {c}");
                    } else {
                        let [na, nb, nc] = t.map(|v| first_n + v as usize);
                        let _ = writeln!(obj, "f {a}//{na} {b}//{nb} {c}//{nc}");
                    }
                }
                first += m.positions.len();
                first_n += m.normals.len();
                first_t += uvs.len();
                triangles += m.indices.len();
            }
        }
    }
    (obj, mtl, triangles)
}
