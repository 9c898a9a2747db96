//! Terrain: generators (pure functions of parameters and seed) produce a
//! [`Heightmap`]; [`TerrainGrid`] places it in the world, answers
//! `height_at` and turns it into triangles.

pub mod attributes;
pub mod diamond_square;
pub mod export;
pub mod far_field;
pub mod fault_line;
pub mod file;
pub mod geotiff;
pub mod heightmap;
pub mod hills;
pub mod hydrology;
pub mod import;
pub mod mesh;
pub mod noise;
pub mod post;
pub mod uplift;

use std::sync::Arc;

pub use attributes::GroundAttributes;
pub use diamond_square::DiamondSquare;
pub use far_field::{FarField, Land};
pub use fault_line::FaultLine;
pub use file::{FarFieldFile, GeneratorFile, NormalsFile};
pub use heightmap::Heightmap;
pub use hills::Hills;
pub use mesh::TerrainGrid;
pub use noise::Noise;
pub use post::PostStep;

/// A validated heightmap generator.
#[derive(Debug, Clone, PartialEq)]
pub enum Generator {
    /// Random fault lines.
    FaultLine(FaultLine),
    /// Diamond-square midpoint displacement.
    DiamondSquare(DiamondSquare),
    /// Random circular hills.
    Hills(Hills),
    /// Fractal value or Perlin noise.
    Noise(Noise),
    /// An imported grayscale image, values in [0, 1].
    Heightmap(Arc<import::Imported>),
    /// Tectonic uplift against fluvial erosion.
    Uplift(uplift::Uplift),
}

/// Everything that decides a terrain's heights.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    /// The generator.
    pub generator: Generator,
    /// Grid [columns, rows].
    pub resolution: [usize; 2],
    /// Extent [x, z], world units.
    pub size: [f64; 2],
    /// Height of the range after normalisation (and the scale of imported maps).
    pub height: f64,
    /// Normalise the generator's output to [0, height] before post-processing.
    pub normalize: bool,
    /// Post-processing steps, in order.
    pub post: Vec<PostStep>,
    /// Rings of coarser land around the tile, if any.
    pub far_field: Option<FarField>,
    /// The planet's radius, world units, if the land curves away.
    pub planet_radius: Option<f64>,
    /// Lakes and rivers, found on the tile after the post steps and
    /// carved into it.
    pub rivers: Option<hydrology::Rivers>,
}

impl Recipe {
    /// A recipe with a generator and its defaults: normalised, no post steps.
    pub fn new(generator: Generator, width: usize, height: usize, top: f64) -> Recipe {
        Recipe {
            generator,
            resolution: [width, height],
            size: [width as f64 - 1.0, height as f64 - 1.0],
            height: top,
            normalize: true,
            post: Vec::new(),
            far_field: None,
            planet_radius: None,
            rivers: None,
        }
    }
}

/// Whether an imported map's heights are its samples times the height,
/// at the terrain's resolution: neither normalised nor post-processed.
pub fn scales_map_as_is(normalize: bool, post: &[PostStep]) -> bool {
    !normalize && post.is_empty()
}

/// Runs the recipe: generator, normalisation to [0, height] (imported maps
/// are scaled by `height` instead), then the post-processing steps. A pure
/// function of the recipe and the seed. The detail tile only: the far field
/// and the curvature are [`land`]'s.
pub fn generate(r: &Recipe, seed: u64) -> Heightmap {
    generate_traced(r, seed).0
}

/// The recipe's land: the detail tile with its rivers carved and its
/// lakes and rivers, its far-field rings and the planet's curvature.
/// Without any of them the tile is [`generate`]'s.
pub fn land(r: &Recipe, seed: u64) -> Land {
    let (mut heights, trace) = generate_traced(r, seed);
    let size = [r.size[0] as f32, r.size[1] as f32];
    let mut waters = r
        .rivers
        .as_ref()
        .map(|p| hydrology::run(&mut heights, size, p).0);
    if let (Some(w), Some(radius)) = (&mut waters, r.planet_radius) {
        w.lower(|x, z| far_field::drop((x as f64).hypot(z as f64), radius));
    }
    let mut tile = TerrainGrid { heights, size };
    let rings = match (&r.far_field, r.planet_radius) {
        (Some(far), radius) => far_field::rings(r, far, &trace, &mut tile, radius, seed),
        (None, Some(radius)) => {
            far_field::curve(&mut tile, radius);
            Vec::new()
        }
        (None, None) => Vec::new(),
    };
    Land {
        tile,
        rings,
        waters,
    }
}

/// [`generate`], with what it did to the heights (for the far field).
fn generate_traced(r: &Recipe, seed: u64) -> (Heightmap, far_field::Trace) {
    let [w, h] = r.resolution;
    if let (Generator::Heightmap(m), true) = (&r.generator, scales_map_as_is(r.normalize, &r.post))
    {
        // Straight to f32, the values of the general path below without
        // its f64 copy of the grid (1 GiB at the largest resolution).
        return (
            import::heights(m, w, h, r.height),
            far_field::Trace::default(),
        );
    }
    if w * h > DOUBLE_SAMPLES {
        run::<f32>(r, seed)
    } else {
        run::<f64>(r, seed)
    }
}

/// Tiles of more samples than this (16385²) keep their heights in `f32`
/// from generation on, as [`heightmap::Sample`] says: diamond-square's grid
/// takes 4 bytes a sample instead of 8. Smaller tiles keep `f64` until
/// the finished heights round to `f32`.
pub const DOUBLE_SAMPLES: usize = 16385 * 16385;

/// [`generate_traced`]'s generator, normalisation and post steps, with the
/// heights stored as `T` between the steps.
fn run<T: heightmap::Sample>(r: &Recipe, seed: u64) -> (Heightmap, far_field::Trace) {
    let [w, h] = r.resolution;
    let mut trace = far_field::Trace::default();
    let mut data: Vec<T> = match &r.generator {
        Generator::DiamondSquare(p) => diamond_square::generate(p, w, h, seed),
        Generator::FaultLine(p) => T::from_f64s(fault_line::generate(p, w, h, seed)),
        Generator::Hills(p) => T::from_f64s(hills::generate(p, w, h, seed)),
        Generator::Uplift(p) => T::from_f64s(uplift::generate(p, w, h, seed)),
        Generator::Noise(p) => {
            let (data, island) = noise::generate_ranged(p, w, h, r.size, seed);
            trace.island_from = island;
            T::from_f64s(data)
        }
        Generator::Heightmap(m) => T::from_f64s(import::resample(m, w, h, r.height)),
    };
    if r.normalize {
        trace.normalised_from = Some(heightmap::range(&data));
        heightmap::normalise(&mut data, r.height);
    }
    let cell = [r.size[0] / (w - 1) as f64, r.size[1] / (h - 1) as f64];
    for step in &r.post {
        if r.far_field.is_some() {
            trace.before_post.push(heightmap::range(&data));
        }
        T::as_f64s(&mut data, |data| {
            post::apply(step, data, w, h, cell, r.height, seed)
        });
    }
    (T::into_heightmap(w, h, data), trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terrain::fault_line::Dropoff;

    /// Pinned fingerprints: a change here changes every render made with
    /// these generators. Update only on purpose, and say so in the commit.
    fn gen(g: &Generator, w: usize, h: usize, top: f64, seed: u64) -> Heightmap {
        generate(&Recipe::new(g.clone(), w, h, top), seed)
    }

    #[test]
    fn fault_line_fingerprint() {
        let g = Generator::FaultLine(FaultLine::default());
        let h = gen(&g, 129, 97, 20.0, 7);
        assert_eq!(
            h.fingerprint(),
            16335288506659521784,
            "fault_line fingerprint"
        );
    }

    #[test]
    fn diamond_square_fingerprint() {
        let g = Generator::DiamondSquare(DiamondSquare::default());
        let h = gen(&g, 129, 97, 20.0, 7);
        assert_eq!(
            h.fingerprint(),
            10827815348037871260,
            "diamond_square fingerprint"
        );
    }

    #[test]
    fn same_seed_same_heights_other_seed_other_heights() {
        for g in [
            Generator::FaultLine(FaultLine {
                iterations: 50,
                ..FaultLine::default()
            }),
            Generator::DiamondSquare(DiamondSquare::default()),
        ] {
            let a = gen(&g, 33, 33, 10.0, 1);
            assert_eq!(a, gen(&g, 33, 33, 10.0, 1));
            assert_ne!(a, gen(&g, 33, 33, 10.0, 2));
            let (lo, hi) = a.range();
            assert_eq!((lo, hi), (0.0, 10.0));
        }
    }

    #[test]
    fn constant_dropoff_is_smoother_than_quadratic() {
        // SPEC: constant dropoff flattens out as iterations grow; quadratic
        // keeps fine detail. Compare total variation along rows.
        let tv = |d: Dropoff| {
            let p = FaultLine {
                iterations: 2000,
                dropoff: d,
                smoothing: 0,
                ..FaultLine::default()
            };
            let h = gen(&Generator::FaultLine(p), 65, 65, 1.0, 4);
            h.data()
                .windows(2)
                .map(|w| (w[1] - w[0]).abs() as f64)
                .sum::<f64>()
        };
        assert!(tv(Dropoff::Constant) < tv(Dropoff::Quadratic));
    }

    #[test]
    fn uplift_fingerprint() {
        let p = uplift::Uplift {
            iterations: 20,
            ..uplift::Uplift::default()
        };
        let h = gen(&Generator::Uplift(p), 65, 49, 20.0, 7);
        assert_eq!(h.fingerprint(), 186192430504991580, "uplift fingerprint");
    }

    #[test]
    fn hills_fingerprint() {
        let h = gen(&Generator::Hills(Hills::default()), 129, 97, 20.0, 7);
        assert_eq!(h.fingerprint(), 16383487175980740923, "hills fingerprint");
    }

    #[test]
    fn noise_fingerprints() {
        let perlin = gen(&Generator::Noise(Noise::default()), 129, 97, 20.0, 7);
        let value = gen(
            &Generator::Noise(Noise {
                basis: noise::Basis::Value,
                ..Noise::default()
            }),
            129,
            97,
            20.0,
            7,
        );
        let list = Noise {
            octaves: noise::Octaves::List(vec![
                [0.08, 1.0 / 1.29],
                [1.1, 1.0 / 7.6],
                [5.0, 1.0 / 38.7],
                [20.0, 1.0 / 92.8],
                [100.0, 1.0 / 529.0],
            ]),
            offset: -8.0,
            ridged: true,
            warp: Some(noise::Warp {
                amount: 5.0,
                frequency: 0.02,
            }),
            island: Some(noise::Island {
                radius: 0.5,
                falloff: 0.3,
                sea_level: 0.2,
            }),
            ..Noise::default()
        };
        let full = gen(&Generator::Noise(list), 129, 97, 20.0, 7);
        assert_eq!(
            [
                perlin.fingerprint(),
                value.fingerprint(),
                full.fingerprint()
            ],
            [
                17392366094515641161,
                3739984756358634328,
                10967814644962122120
            ]
        );
    }

    #[test]
    fn import_fingerprint() {
        // A 5 × 4 ramp image resampled to 9 × 7 and scaled to 10 units.
        let samples = (0..20).map(|k| (k * 3 % 17) as u16).collect();
        let m = import::Imported::new(5, 4, samples, 16.0);
        let r = Recipe {
            normalize: false,
            ..Recipe::new(Generator::Heightmap(Arc::new(m)), 9, 7, 10.0)
        };
        assert_eq!(
            generate(&r, 0).fingerprint(),
            17434667452153675369,
            "import fingerprint"
        );
    }

    #[test]
    fn imported_maps_go_to_f32_as_through_f64() {
        // The direct route for an imported map with no post steps gives the
        // values of the general route (f64 resampling, then f32).
        let samples = (0..35).map(|k| (k * 7919 % 65536) as u16).collect();
        let m = Arc::new(import::Imported::new(7, 5, samples, 65535.0));
        for (w, h) in [(7, 5), (13, 4)] {
            let r = Recipe {
                normalize: false,
                ..Recipe::new(Generator::Heightmap(m.clone()), w, h, 37.5)
            };
            let general = Heightmap::from_f64(w, h, &import::resample(&m, w, h, 37.5));
            assert_eq!(generate(&r, 0), general, "{w}×{h}");
        }
    }

    #[test]
    fn imported_maps_scale_to_the_height_without_normalising() {
        let m = import::Imported::new(2, 2, vec![1, 2, 2, 3], 4.0);
        let r = Recipe {
            normalize: false,
            ..Recipe::new(Generator::Heightmap(Arc::new(m)), 2, 2, 8.0)
        };
        assert_eq!(generate(&r, 0).data(), vec![2.0, 4.0, 4.0, 6.0]);
    }
}
