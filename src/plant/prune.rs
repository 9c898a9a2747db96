//! Stochastic pruning of a plant's leaves (Cook, Halstead, Planck and
//! Ryu, "Stochastic Simplification of Aggregate Detail", 2007): the
//! leaves are put in a random order once, and level `k` keeps the first
//! ⌈n / 2^k⌉ of them, each grown about its stalk so that the kept leaves
//! have the area of all of them. The levels nest (each keeps a prefix of
//! the one before), so a plant that moves away loses leaves, never
//! swaps them; a far crown keeps its coverage and colour with a
//! fraction of the leaves, each about a pixel long.

use super::{Plant, LEAF_TRIANGLES, LEAF_VERTICES};
use crate::hash::hash3;
use crate::mesh::TriangleMesh;

/// Levels of pruning made, at most: the deepest keeps a sixteenth of
/// the leaves, each four times as long. Deeper levels would grow leaves
/// far out of the crown's outline.
pub const LEVELS: usize = 4;

/// A level keeps at least this many leaves; a plant with fewer leaves
/// has fewer levels.
pub const FEWEST: usize = 4;

/// One level of pruning: the kept leaves, grown, in a mesh of their own,
/// and which leaf of the full mesh each is.
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// The kept leaves, each [`LEAF_TRIANGLES`] triangles as in the full
    /// mesh, grown by `scale` about its stalk.
    pub leaves: TriangleMesh,
    /// For each kept leaf, its index among the plant's leaves.
    pub kept: Vec<u32>,
    /// The factor each kept leaf's lengths are grown by.
    pub scale: f32,
}

impl Pruned {
    /// The triangle of the full leaves mesh that triangle `tri` of this
    /// level is a grown copy of (its normal is the same).
    #[inline]
    pub fn full_triangle(&self, tri: u32) -> u32 {
        let per = LEAF_TRIANGLES as u32;
        self.kept[(tri / per) as usize] * per + tri % per
    }
}

/// Area of each leaf of `leaves` (each [`LEAF_TRIANGLES`] triangles).
pub fn leaf_areas(leaves: &TriangleMesh) -> Vec<f64> {
    leaves
        .indices
        .chunks(LEAF_TRIANGLES)
        .map(|tris| {
            tris.iter()
                .map(|&[a, b, c]| {
                    let p = |k: u32| leaves.positions[k as usize].as_dvec3();
                    0.5 * (p(b) - p(a)).cross(p(c) - p(a)).length()
                })
                .sum()
        })
        .collect()
}

/// The pruned levels of `plant`'s leaves (1 to [`LEVELS`], each keeping
/// at least [`FEWEST`]; none for a plant of 6 leaves or fewer), their
/// order drawn from `seed`.
pub fn prune(plant: &Plant, seed: u64) -> Vec<Pruned> {
    let leaves = &plant.leaves;
    let n = leaves.indices.len() / LEAF_TRIANGLES;
    debug_assert_eq!(leaves.positions.len(), n * LEAF_VERTICES);
    let areas = leaf_areas(leaves);
    let total: f64 = areas.iter().sum();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&k| (hash3(seed, 0x9_2C4E, k as u64), k));
    let mut levels = Vec::new();
    for k in 1..=LEVELS {
        let keep = n.div_ceil(1 << k);
        if keep < FEWEST || total <= 0.0 {
            break;
        }
        let mut kept = order[..keep].to_vec();
        // In the full mesh's order, so the level's BVH sees the leaves
        // as the full one does.
        kept.sort_unstable();
        let area: f64 = kept.iter().map(|&l| areas[l as usize]).sum();
        let scale = (total / area).sqrt() as f32;
        let mut mesh = TriangleMesh::default();
        for &l in &kept {
            let first = l as usize * LEAF_VERTICES;
            let corners = &leaves.positions[first..first + LEAF_VERTICES];
            // The stalk: the middle of the leaf's first pair of corners.
            let stalk = 0.5 * (corners[0] + corners[1]);
            let base = mesh.positions.len() as u32;
            mesh.positions
                .extend(corners.iter().map(|&p| stalk + (p - stalk) * scale));
            let from = l as usize * LEAF_TRIANGLES;
            let shift = base.wrapping_sub(first as u32);
            mesh.indices.extend(
                leaves.indices[from..from + LEAF_TRIANGLES]
                    .iter()
                    .map(|t| t.map(|v| v.wrapping_add(shift))),
            );
        }
        levels.push(Pruned {
            leaves: mesh,
            kept,
            scale,
        });
    }
    levels
}

/// The mean length of `plant`'s leaves, stalk to tip along their
/// middles (0 for a plant without leaves).
pub fn mean_leaf_length(leaves: &TriangleMesh) -> f32 {
    let n = leaves.positions.len() / LEAF_VERTICES;
    if n == 0 {
        return 0.0;
    }
    let sum: f64 = leaves
        .positions
        .chunks(LEAF_VERTICES)
        .map(|c| {
            let mid = |i: usize| (0.5 * (c[2 * i] + c[2 * i + 1])).as_dvec3();
            (1..LEAF_VERTICES / 2)
                .map(|i| (mid(i) - mid(i - 1)).length())
                .sum::<f64>()
        })
        .sum();
    (sum / n as f64) as f32
}
