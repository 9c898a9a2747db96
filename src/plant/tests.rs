//! Growth follows the species' parameters; placement keeps to the
//! ground's windows and the spacings.

use super::place::{window, Placed, Plants};
use super::*;
use crate::terrain::hydrology::Waters;
use crate::terrain::TerrainGrid;

fn species(name: &str) -> Species {
    let file = file::preset(name).expect("a preset");
    file::check_species("p", name, &file).expect("valid").0
}

/// A plain species: no random spread, so lengths follow the formulas.
fn plain() -> Species {
    Species {
        name: "plain".into(),
        height: [10.0, 10.0],
        radius: 0.02,
        taper: 0.9,
        curve: 0.0,
        crown: Crown::Conical,
        levels: vec![
            Level {
                count: 12,
                start: 0.25,
                length: 0.4,
                length_var: 0.0,
                down: 60.0,
                down_var: 0.0,
                rotate: 137.5,
                curve: 0.0,
                up: 0.0,
                radius: 0.4,
            },
            Level {
                count: 5,
                start: 0.0,
                length: 0.5,
                length_var: 0.0,
                down: 45.0,
                down_var: 0.0,
                rotate: 90.0,
                curve: 0.0,
                up: 0.0,
                radius: 0.5,
            },
        ],
        leaves: Some(Leaves {
            count: 4,
            size: 0.3,
            aspect: 0.5,
            down: 40.0,
            bend: 0.0,
            shape: LeafShape::Ellipse,
            start: 0.2,
        }),
        flowers: None,
        bark_color: Vec3::splat(0.1),
        leaf_color: Vec3::splat(0.1),
        leaf_color_var: 0.0,
        translucency: 0.0,
        flower_color: Vec3::splat(0.1),
        variants: 1,
    }
}

/// The counts multiply down the levels; the first level's lengths follow
/// the conical crown (the trunk's length × 0.4 × (0.2 + 0.8 r), r from
/// the crown's top to its base), the second's the parent's × 0.5 × (1 −
/// 0.6 t); every branch leaves at the level's angle; the leaves number
/// four per twig.
#[test]
fn a_tree_follows_its_parameters() {
    let s = plain();
    let p = grow(&s, 3, 0);
    let level = |l: usize| {
        p.stems
            .iter()
            .filter(|st| st.level == l)
            .collect::<Vec<_>>()
    };
    let trunk = level(0);
    assert_eq!(trunk.len(), 1);
    assert_eq!(trunk[0].length, 10.0);
    let first = level(1);
    let second = level(2);
    assert_eq!(first.len(), 12);
    assert_eq!(second.len(), 12 * 5);
    assert_eq!(p.leaf_count, 12 * 5 * 4);
    for b in &first {
        // The trunk is straight up: t is the base's height over 10.
        let t = b.base.y / 10.0;
        let r = (1.0 - t) / 0.75;
        let want = 10.0 * 0.4 * (0.2 + 0.8 * r);
        assert!((b.length - want).abs() < 1e-3, "{} {want}", b.length);
        assert!(
            (b.dir.y - 60f32.to_radians().cos()).abs() < 1e-4,
            "{:?}",
            b.dir
        );
    }
    // Lower branches are longer: a cone.
    let lowest = first
        .iter()
        .min_by(|a, b| a.base.y.total_cmp(&b.base.y))
        .unwrap();
    let highest = first
        .iter()
        .max_by(|a, b| a.base.y.total_cmp(&b.base.y))
        .unwrap();
    assert!(lowest.length > 2.0 * highest.length);
    for c in &second {
        let parent = first
            .iter()
            .find(|b| {
                let along = c.base - b.base;
                along.cross(b.dir).length() < 1e-3 && along.dot(b.dir) >= -1e-4
            })
            .expect("a twig lies on its branch");
        let t = (c.base - parent.base).length() / parent.length;
        let want = 0.5 * parent.length * (1.0 - 0.6 * t);
        assert!((c.length - want).abs() < 1e-3, "{} {want}", c.length);
        let angle = c.dir.dot(parent.dir).clamp(-1.0, 1.0).acos().to_degrees();
        assert!((angle - 45.0).abs() < 0.05, "{angle}");
    }
}

/// Growth is a pure function of species, seed and variant; variants
/// differ; the shipped species all grow.
#[test]
fn growth_is_seeded_and_every_preset_grows() {
    let s = species("oak");
    let a = grow(&s, 5, 1);
    let b = grow(&s, 5, 1);
    let c = grow(&s, 5, 2);
    assert_eq!(a.leaves.positions, b.leaves.positions);
    assert_eq!(a.bark.positions, b.bark.positions);
    assert_ne!(a.leaves.positions, c.leaves.positions);
    for (name, _) in SPECIES_PRESETS {
        let p = grow(&species(name), 1, 0);
        assert!(p.leaf_count > 0, "{name}");
        assert!(!p.leaves.indices.is_empty(), "{name}");
        let top = p.leaves.positions.iter().map(|v| v.y).fold(0.0, f32::max);
        let sp = species(name);
        let [lo, hi] = sp.height;
        let blade = sp.leaves.map_or(0.0, |l| 1.2 * l.size);
        assert!(top > 0.3 * lo && top < 2.5 * hi + blade, "{name}: {top}");
    }
    let herb = grow(&species("herb"), 1, 0);
    assert!(!herb.flowers.indices.is_empty());
    // A grass tuft is blades alone: no tube at its foot.
    assert!(grow(&species("grass"), 1, 0).bark.indices.is_empty());
}

/// A leaf strip's area is the trapezoid sum of its outline: for a
/// blade (half-width (1 − t)^0.7 of the widest) of length L and width
/// 0.1 L, three segments give L²·Σ (wᵢ + wᵢ₊₁)/3 with w = 0.05 (1 − t)^0.7.
#[test]
fn leaf_area_is_the_outline_s() {
    let mut s = plain();
    s.levels.clear();
    s.leaves = Some(Leaves {
        count: 1,
        size: 1.0,
        aspect: 0.1,
        down: 30.0,
        bend: 0.0,
        shape: LeafShape::Blade,
        start: 0.5,
    });
    let p = grow(&s, 0, 0);
    // The leaf's length (each leaf's size is drawn within ±20 %): from
    // the middle of its foot to its tip, a straight strip.
    let m = &p.leaves;
    let foot = (m.positions[0] + m.positions[1]) * 0.5;
    let tip = (m.positions[6] + m.positions[7]) * 0.5;
    let length = foot.distance(tip);
    assert!((0.8..=1.2).contains(&length), "{length}");
    let w = |t: f32| 0.05 * length * (1.0 - t).powf(0.7);
    let want: f32 = (0..3)
        .map(|i| {
            let (a, b) = (i as f32 / 3.0, (i + 1) as f32 / 3.0);
            (w(a) + w(b)) * length / 3.0
        })
        .sum();
    assert!((p.leaf_area - want).abs() < 1e-5, "{} {want}", p.leaf_area);
    // Its triangles hold that area.
    let area: f32 = m
        .indices
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|k| m.positions[k as usize]);
            0.5 * (b - a).cross(c - a).length()
        })
        .sum();
    assert!((area - want).abs() < 1e-4, "{area} {want}");
}

#[test]
fn windows_thin_toward_inner_edges_only() {
    assert_eq!(window(0.5, [0.0, 1.0], 0.2, [0.0, 1.0]), 1.0);
    assert_eq!(window(0.95, [0.0, 0.9], 0.2, [0.0, 1.0]), 0.0);
    // The top edge at 0.9 lies inside the range: 0.1 under it is 0.1 / 0.18
    // of the fade, smoothstepped.
    let x: f32 = 0.1 / 0.18;
    let want = x * x * (3.0 - 2.0 * x);
    assert!((window(0.8, [0.0, 0.9], 0.2, [0.0, 1.0]) - want).abs() < 1e-6);
    // The bottom edge at the range's own end does not thin.
    assert_eq!(window(0.0, [0.0, 0.9], 0.2, [0.0, 1.0]), 1.0);
}

fn plants(name: &str, seed: u64, spacing: f32, height: [f32; 2], slope: [f32; 2]) -> Plants {
    let s = species(name);
    Plants {
        variants: (0..2)
            .map(|v| std::sync::Arc::new(grow(&s, seed, v)))
            .collect(),
        species: s,
        density: 0.9,
        spacing,
        scale: [0.8, 1.2],
        height,
        slope,
        moisture: None,
        fade: 0.15,
        clumping: 0.3,
        clump_size: 30.0,
        understory: false,
        prune: 1.0,
        leaf_image: None,
        seed,
    }
}

/// Every plant of each species placed over `grid`.
fn place(all: &[Plants], grid: &TerrainGrid, waters: Option<&Waters>) -> Vec<Vec<Placed>> {
    super::place::place(all, grid, waters)
        .iter()
        .map(|s| s.placed())
        .collect()
}

fn hills() -> TerrainGrid {
    TerrainGrid::diamond_square(129, 129, 60.0, 4, [200.0, 200.0])
}

/// No tree above the treeline nor on ground steeper than its window; no
/// two of a species nearer than its spacing, nor a tree nearer than half
/// the spacings' sum to one of a competing species; the same plants on
/// every run.
#[test]
fn plants_keep_to_the_ground_and_their_distances() {
    let grid = hills();
    let (lo, hi) = grid.heights.range();
    let all = [
        plants("spruce", 1, 5.0, [0.0, 0.6], [0.0, 30.0]),
        plants("oak", 2, 8.0, [0.0, 0.8], [0.0, 40.0]),
    ];
    let placed = place(&all, &grid, None);
    assert_eq!(placed, place(&all, &grid, None));
    assert!(
        placed[0].len() > 100 && placed[1].len() > 20,
        "{}",
        placed[1].len()
    );
    for (p, spots) in all.iter().zip(&placed) {
        for q in spots {
            let (x, z) = (q.at.x, q.at.y);
            let fraction = (grid.height_at(x, z) - lo) / (hi - lo);
            assert!(fraction <= p.height[1] + 1e-4, "{fraction}");
            let slope = grid.normal_at(x, z).y.acos().to_degrees();
            assert!(slope <= p.slope[1] + 1e-3, "{slope}");
            // It stands on the ground (the lowest under its trunk).
            let y = q.place.translation.y;
            assert!(y <= grid.height_at(x, z) + 1e-4);
        }
        for (i, a) in spots.iter().enumerate() {
            for b in &spots[i + 1..] {
                assert!(a.at.distance(b.at) >= p.spacing, "{}", a.at.distance(b.at));
            }
        }
    }
    for a in &placed[1] {
        for b in &placed[0] {
            assert!(a.at.distance(b.at) >= 6.5);
        }
    }
    // Understory ignores the others, so it places more.
    let mut under = all.clone();
    under[1].understory = true;
    let more = place(&under, &grid, None);
    assert_eq!(more[0], placed[0]);
    assert!(more[1].len() > placed[1].len());
}

/// The treeline thins the forest: the upper fifth of the window holds
/// fewer trees per spot than the lower part.
#[test]
fn forests_thin_toward_the_treeline() {
    let grid = hills();
    let (lo, hi) = grid.heights.range();
    let mut p = plants("spruce", 9, 2.0, [0.0, 0.7], [0.0, 90.0]);
    p.clumping = 0.0;
    p.fade = 0.3;
    let placed = place(std::slice::from_ref(&p), &grid, None);
    let fraction = |x: f32, z: f32| (grid.height_at(x, z) - lo) / (hi - lo);
    // Share of ground samples in each band, against share of trees.
    let band = |f: f32, a: f32, b: f32| f >= a && f < b;
    let mut ground = [0usize; 2];
    for j in 0..200 {
        for i in 0..200 {
            let f = fraction(i as f32 - 99.5, j as f32 - 99.5);
            ground[0] += band(f, 0.1, 0.4) as usize;
            ground[1] += band(f, 0.56, 0.7) as usize;
        }
    }
    let mut trees = [0usize; 2];
    for q in &placed[0] {
        let f = fraction(q.at.x, q.at.y);
        trees[0] += band(f, 0.1, 0.4) as usize;
        trees[1] += band(f, 0.56, 0.7) as usize;
    }
    let dense = |k: usize| trees[k] as f32 / ground[k].max(1) as f32;
    assert!(ground[1] > 500, "{ground:?}");
    assert!(dense(1) < 0.7 * dense(0), "{trees:?} {ground:?}");
}

/// Pruning keeps the leaves' area: each level keeps ⌈n / 2^k⌉ of the n
/// leaves, a subset of the level before's, each a copy of its full leaf
/// grown about its stalk (the same normals), and the kept leaves' area
/// is the full leaves' (the issue asks for 5 %; growing by the kept
/// area's ratio, not the count's, makes it exact but for rounding).
#[test]
fn pruning_keeps_the_leaf_area() {
    for (name, _) in SPECIES_PRESETS {
        for variant in 0..2 {
            let p = grow(&species(name), 7, variant);
            let n = p.leaf_count;
            let full: f64 = prune::leaf_areas(&p.leaves).iter().sum();
            assert!(
                (full - p.leaf_area as f64).abs() < 1e-3 * full,
                "{name}: {full} {}",
                p.leaf_area
            );
            let want = (1..=prune::LEVELS)
                .take_while(|k| n.div_ceil(1 << k) >= prune::FEWEST)
                .count();
            assert_eq!(p.pruned.len(), want, "{name} ({n} leaves)");
            // Trees and shrubs have leaves enough for every level.
            assert!(
                n < 64 || p.pruned.len() == prune::LEVELS,
                "{name} ({n} leaves)"
            );
            let mut before: Vec<u32> = (0..n as u32).collect();
            for (k, level) in p.pruned.iter().enumerate() {
                let keep = n.div_ceil(2 << k);
                assert_eq!(level.kept.len(), keep, "{name} level {}", k + 1);
                assert_eq!(level.leaves.indices.len(), keep * LEAF_TRIANGLES);
                assert!(level.kept.iter().all(|l| before.binary_search(l).is_ok()));
                let area: f64 = prune::leaf_areas(&level.leaves).iter().sum();
                assert!(
                    (area - full).abs() < 1e-4 * full,
                    "{name} level {}: {area} of {full}",
                    k + 1
                );
                // Not merely scaled by the count: the kept leaves' sizes
                // differ from the mean, so the factor is not √(n/kept).
                let by_count = (n as f32 / keep as f32).sqrt();
                assert!(level.scale > 1.0 && (level.scale / by_count - 1.0).abs() < 0.2);
                for tri in 0..level.leaves.indices.len() as u32 {
                    let own = level.leaves.face_normal(tri as usize);
                    let of = p.leaves.face_normal(level.full_triangle(tri) as usize);
                    assert!(own.dot(of) > 0.9999, "{name}: {own} {of}");
                }
                before = level.kept.clone();
            }
        }
    }
}

/// A leaf triangle's texture coordinates follow from its number: the
/// same as the corners' stored ones, bit for bit, on every triangle.
#[test]
fn leaf_coordinates_follow_from_the_triangle() {
    let p = grow(&species("oak"), 3, 1);
    assert_eq!(p.leaf_uvs.len(), p.leaves.positions.len());
    for (tri, corners) in p.leaves.indices.iter().enumerate() {
        let [a, b, c] = corners.map(|k| p.leaf_uvs[k as usize]);
        for (u, v) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.25, 0.5)] {
            let stored = a * (1.0 - u - v) + b * u + c * v;
            assert_eq!(leaf_uv(tri as u32, u, v), stored, "triangle {tri}");
        }
    }
}
