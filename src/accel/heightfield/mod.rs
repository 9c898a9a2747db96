//! Terrain traced through an implicit hierarchy over its grid.
//!
//! A triangle BVH over a heightmap throws the grid away and spends ~60
//! bytes per triangle on boxes. Here the grid *is* the hierarchy: level 0
//! is one cell (two triangles), and a block of level k covers 2ᵏ × 2ᵏ cells
//! and stores only the lowest and highest height under it (a min/max
//! quadtree, or "maximum mipmap", Tevs, Ihrke and Seidel 2008). A block's
//! box is implicit: its x and z extent follow from its level and position,
//! its y extent is the stored pair. Level-0 ranges come from the cell's
//! four heights, so the stored levels start at 1: 8 bytes per 4 cells plus
//! a third for the coarser levels, about 2.7 bytes per sample on top of the
//! 4-byte heights.
//!
//! Traversal walks the ray front to back without a stack. It stands in one
//! block at a time, from the ray parameter where it entered it: if the ray's
//! height over the rest of the block overlaps the block's range, it steps
//! down into the child the ray is in at that point (at level 0 it tests the
//! cell's two triangles); otherwise it moves on to the neighbouring block
//! across the face the ray leaves through, and steps back up while that
//! neighbour lies in a new parent. All distances come from the grid lines'
//! own coordinates, so the walk never drifts off the cells the ray crosses.
//! The walk may start at any level, in the block the ray is in where it
//! enters the field: a ray from outside starts four levels below the root,
//! a ray from inside (a shadow ray leaving the ground) in its own cell;
//! either way it meets the same cells in the same order. Camera rays that
//! share an origin start later still: a bundle of them first walks once as
//! a cone, down to near the ground, and each ray starts where the cone
//! stops being clear of the terrain (`bundle`).
//!
//! Shadow rays toward the sun all climb at nearly the same slope and
//! heading. For them a view of the field can keep horizons ([`FieldView`],
//! `horizon`): per block of every level from 1 up, how high the terrain ahead
//! rises against the ray's climb, so that a shadow ray that enters a block
//! above its horizon stops there, unblocked, instead of climbing the
//! hierarchy until it leaves the field.
//!
//! Batches of rays ([`HeightField::intersect_batch`]) walk eight at a time
//! in AVX2 lanes where the CPU has them, sixteen in AVX-512 lanes where it
//! has those (`lanes`), with the same results.
//!
//! The leaf test is the same watertight test on the same vertices (those of
//! [`TerrainGrid::position`]) and the same diagonal as the terrain's mesh,
//! and ties are broken the same way ([`Hit::beats`]), so tracing the field
//! and tracing the mesh give the same hits. A ray that runs exactly along a
//! grid line (an orthographic view straight down) touches the cells on both
//! sides; it is walked once on each side.

use glam::Vec3;
use rayon::prelude::*;

use self::bundle::Hint;
use super::bvh::Hit;
use crate::ray::{hit_sheared, shear_vertices, Aabb, Ray, CULL_SLACK, ROBUST_FAR};
use crate::terrain::TerrainGrid;

/// A heightmap grid with its min/max hierarchy.
#[derive(Debug, Clone)]
pub struct HeightField {
    /// Samples along x (columns).
    cols: usize,
    /// Samples along z (rows).
    rows: usize,
    /// Heights, row-major (`rows · cols` of them), then the hierarchy: the
    /// (min, max) height of each block of levels 1 and up, row-major, one
    /// level after the other, from `ranges_at`. One array, so that the lanes
    /// reach both through one base address.
    data: Vec<f32>,
    /// Where the hierarchy starts in `data`.
    ranges_at: usize,
    /// For each block of levels `peaks_from` and up (indexed as the ranges
    /// less the start of level `peaks_from`), the highest height under it
    /// and its eight neighbours: what a bundle's cone checks (`bundle`).
    peaks: Vec<f32>,
    /// The finest level with peaks, where a cone stops descending.
    peaks_from: u32,
    /// x of each column, as the mesh places it.
    xs: Vec<f32>,
    /// z of each row, as the mesh places it.
    zs: Vec<f32>,
    /// The grid's extent along x and z ([`TerrainGrid::size`]).
    size: [f32; 2],
    /// Where each level starts in the hierarchy, in (min, max) pairs.
    level_base: [usize; MAX_LEVELS],
    /// Blocks per row of each level.
    level_cols: [usize; MAX_LEVELS],
    /// Block rows of each level.
    level_rows: [usize; MAX_LEVELS],
    /// The root's level: the smallest k with 2ᵏ cells covering both sides.
    top: u32,
    /// Bounds of the whole field.
    bounds: Aabb,
    /// The x and z corners of the hole ([`HeightField::with_hole`]), if
    /// any: a ray from inside it starts its walk where it leaves it.
    hole: Option<[[f32; 2]; 2]>,
}

/// What a field keeps for one view ([`HeightField::view`]): horizons
/// toward its light and the sight table of its eye, each where it pays for
/// the view's rays. Both only let walks stop or start early: every answer
/// is the same with any view, or with none ([`FieldView::default`]).
#[derive(Debug, Clone, Default)]
pub struct FieldView {
    /// Horizons toward the light, if they pay.
    light: Option<horizon::Horizon>,
    /// Where the eye's rays may first meet the terrain, if it pays.
    sight: Option<sight::Sight>,
}

/// The view without horizons or sight table.
static NO_VIEW: FieldView = FieldView {
    light: None,
    sight: None,
};

impl FieldView {
    /// The view without horizons or sight table, for any field.
    pub fn none() -> &'static FieldView {
        &NO_VIEW
    }

    /// Bytes held by the horizons and the sight table.
    pub fn memory_bytes(&self) -> usize {
        self.light
            .as_ref()
            .map_or(0, horizon::Horizon::memory_bytes)
            + self.sight.as_ref().map_or(0, sight::Sight::memory_bytes)
    }
}

/// What a batch wants to know of each ray.
trait Query {
    /// Whether the first hit ends the ray (occlusion), rather than the
    /// closest one being sought.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const ANY: bool;
    /// Answers ray `k` on its own.
    fn single(&mut self, field: &HeightField, view: &FieldView, k: usize, ray: &Ray, t_max: f32);
    /// Records the answer for ray `k`: its best hit.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn finish(&mut self, k: usize, best: Option<Hit>);
}

/// Closest hits, into `hits[k]`.
struct Closest<'a>(&'a mut [Option<Hit>]);

impl Query for Closest<'_> {
    const ANY: bool = false;
    fn single(&mut self, field: &HeightField, view: &FieldView, k: usize, ray: &Ray, t_max: f32) {
        self.0[k] = field.intersect_in(view, ray, t_max);
    }
    fn finish(&mut self, k: usize, best: Option<Hit>) {
        self.0[k] = best;
    }
}

/// Occlusion, into `blocked[k]`.
struct Any<'a>(&'a mut [bool]);

impl Query for Any<'_> {
    const ANY: bool = true;
    fn single(&mut self, field: &HeightField, view: &FieldView, k: usize, ray: &Ray, t_max: f32) {
        self.0[k] = field.occluded_in(view, ray, t_max);
    }
    fn finish(&mut self, k: usize, best: Option<Hit>) {
        self.0[k] = best.is_some();
    }
}

/// A query answered for a subset of its rays: ray `k` of the subset is
/// ray `index[k]` of the query.
#[cfg(target_arch = "x86_64")]
struct Remap<'a, Q> {
    query: &'a mut Q,
    index: &'a [usize],
}

#[cfg(target_arch = "x86_64")]
impl<Q: Query> Query for Remap<'_, Q> {
    const ANY: bool = Q::ANY;
    fn single(&mut self, field: &HeightField, view: &FieldView, k: usize, ray: &Ray, t_max: f32) {
        self.query.single(field, view, self.index[k], ray, t_max);
    }
    fn finish(&mut self, k: usize, best: Option<Hit>) {
        self.query.finish(self.index[k], best);
    }
}

/// Where a ray's walk starts and ends.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Start {
    /// Where the walk starts: the ray's entry into the field's box, or
    /// later where a bundle's hint says it meets no triangle before.
    t_start: f32,
    /// Exit from it (finite).
    t_leave: f32,
    /// Slack on the height test.
    eps: f32,
    /// The level the walk starts at.
    level: u32,
    /// The highest level the walk climbs to in its first [`PATIENCE`]
    /// steps: a hint's level (the hint says the hit is near), else the
    /// root's.
    ceiling: u32,
    /// The block of that level the ray is in at `t_start`: (row, column).
    block: [usize; 2],
}

/// Steps a walk from a hint stays at or below the hint's level before it
/// may climb again. A hinted camera ray is a few cells from its hit:
/// climbing into a parent as it crosses one only to come down again on
/// the next step was a quarter of its steps on the peer workload (sight
/// starts: 5.65 steps a ray with climbing, 4.41 with eight steps of
/// patience, 4.37 with no climbing at all; cone starts 9.15 and 8.23). A
/// ray whose hit is further climbs after these steps as before, so a
/// poor hint costs at most these few. Occlusion walks climb at once: their
/// rays leave the ground and run long.
const PATIENCE: u32 = 8;

/// The cell along one axis (grid lines `lines`) that the walk's descent
/// would put the ray in at parameter `t`, where the ray (origin `o`,
/// reciprocal direction `inv` on this axis) is at `p`: a guess from `p`,
/// then corrected by the descent's own rule, under which the ray is past a
/// line when `t >= (line − o) · inv` and past means the far side in its
/// direction of travel.
fn cell_on_axis(lines: &[f32], o: f32, inv: f32, p: f32, t: f32) -> usize {
    let last = lines.len() - 2;
    let (first, end) = (lines[0], lines[last + 1]);
    // `as` saturates, NaN and negatives to 0; through u32, whose
    // conversion is a few instructions shorter than usize's.
    let guess = (p - first) / (end - first) * (last + 1) as f32;
    let mut j = (guess as u32 as usize).min(last);
    let forward = inv > 0.0;
    let past = |line: f32| t >= (line - o) * inv;
    // Cell j holds the ray when it is on j's side of both its lines; the
    // guess almost always does, and is checked without branches.
    let [low, high] = [lines[j], lines[j + 1]];
    if ((j == 0) | (past(low) == forward)) & ((j == last) | (past(high) != forward)) {
        return j;
    }
    // Past is monotone along the lines (the ray meets them in order), so a
    // wrong guess moves one way only.
    while j > 0 && past(lines[j]) != forward {
        j -= 1;
    }
    while j < last && past(lines[j + 1]) == forward {
        j += 1;
    }
    j
}

/// Levels a grid can have: 2³¹ cells a side, far beyond the resolution
/// limit.
const MAX_LEVELS: usize = 32;

impl HeightField {
    /// Builds the hierarchy over a copy of `grid`'s heights; see
    /// [`HeightField::new`].
    pub fn build(grid: &TerrainGrid) -> HeightField {
        HeightField::new(grid.clone())
    }

    /// Builds the hierarchy over `grid`, keeping its heights (the levels
    /// are appended to them), in one pass per level.
    pub fn new(grid: TerrainGrid) -> HeightField {
        HeightField::for_rays(grid, usize::MAX)
    }

    /// [`HeightField::new`] for about `rays` camera rays per view: the
    /// blocks' neighbourhood peaks start at the finest level that pays for
    /// them (`HeightField::finest_level_paying`).
    pub fn for_rays(grid: TerrainGrid, rays: usize) -> HeightField {
        HeightField::assemble(grid, rays, None)
    }

    /// [`HeightField::new`] over a grid with a hole: the cells in columns
    /// `hole[0][0]..hole[0][1]` of rows `hole[1][0]..hole[1][1]` (all four
    /// even) are left out of the hierarchy, so a walk passes over them as
    /// over empty space. A far-field ring's hole is where the finer level
    /// lies. The samples inside the hole (not on its border) are sunk far
    /// below the rest: a walk that starts in a hole cell (a shadow ray
    /// leaving the finer level) still tests that cell's triangles, and
    /// must find nothing above the finer level.
    ///
    /// # Panics
    /// If a bound of the hole is odd or past the grid.
    pub fn with_hole(mut grid: TerrainGrid, hole: [[usize; 2]; 2]) -> HeightField {
        let [[c0, c1], [r0, r1]] = hole;
        let w = grid.heights.width;
        let inside = |k: usize| {
            let (i, j) = (k / w, k % w);
            i > r0 && i < r1 && j > c0 && j < c1
        };
        let (lo, hi) = grid
            .heights
            .data()
            .iter()
            .enumerate()
            .filter(|&(k, _)| !inside(k))
            .fold((f32::MAX, f32::MIN), |(a, b), (_, &v)| (a.min(v), b.max(v)));
        let deep = lo - 100.0 * (hi - lo).max(1.0);
        let data = grid.heights.data_mut();
        for i in r0 + 1..r1 {
            data[i * w + c0 + 1..i * w + c1].fill(deep);
        }
        let mut field = HeightField::assemble(grid, usize::MAX, Some(hole));
        field.hole = Some([[field.xs[c0], field.zs[r0]], [field.xs[c1], field.zs[r1]]]);
        field
    }

    fn assemble(grid: TerrainGrid, rays: usize, hole: Option<[[usize; 2]; 2]>) -> HeightField {
        let (cols, rows) = (grid.heights.width, grid.heights.height);
        assert!(cols >= 2 && rows >= 2, "a terrain has at least 2×2 samples");
        let xs: Vec<f32> = (0..cols).map(|j| grid.position(0, j).x).collect();
        let zs: Vec<f32> = (0..rows).map(|i| grid.position(i, 0).z).collect();
        let (cw, ch) = (cols - 1, rows - 1);
        let top = top_level(cw, ch);
        let mut level_base = [0; MAX_LEVELS];
        let mut level_cols = [0; MAX_LEVELS];
        let mut level_rows = [0; MAX_LEVELS];
        for k in 0..=top as usize {
            (level_rows[k], level_cols[k]) = level_dims(ch, cw, k as u32);
        }
        let mut total = 0;
        for k in 1..=top as usize {
            level_base[k] = total;
            total += level_rows[k] * level_cols[k];
        }
        // One array: the heights, then the (min, max) pairs of levels
        // 1..=top.
        let n = cols * rows;
        let size = grid.size;
        let mut data = grid.heights.into_data();
        // The ranges' room, zeroed in parallel: a serial `resize` spent
        // 40-50 ms on the pages of a 4097² field's 44 MB of ranges.
        let rest = n + 2 * total - data.len();
        data.reserve_exact(rest);
        data.par_extend(rayon::iter::repeat_n(0.0, rest));
        let (heights, tail) = data.split_at_mut(n);
        let ranges: &mut [[f32; 2]] = tail.as_chunks_mut::<2>().0;
        // Level 1 is read from the heights; level k > 1 combines the (up
        // to) four blocks of level k − 1 under each block. Each level is
        // written in place, its rows in parallel.
        let heights = &*heights;
        if top >= 1 {
            first_level(
                heights,
                cols,
                &mut ranges[..level_rows[1] * level_cols[1]],
                level_cols[1],
            );
            if let Some([[c0, c1], [r0, r1]]) = hole {
                assert!(
                    [c0, c1, r0, r1].iter().all(|v| v % 2 == 0) && c1 < cols && r1 < rows,
                    "a hole's bounds are even and inside the grid"
                );
                // An empty range: no ray's heights overlap it, and it
                // leaves every range it is merged into unchanged.
                let cols_1 = level_cols[1];
                for bi in r0 / 2..r1 / 2 {
                    ranges[bi * cols_1 + c0 / 2..bi * cols_1 + c1 / 2].fill([f32::MAX, f32::MIN]);
                }
            }
        }
        for k in 2..=top as usize {
            let (below, level) = ranges.split_at_mut(level_base[k]);
            let below = &below[level_base[k - 1]..];
            let (below_rows, below_cols) = (level_rows[k - 1], level_cols[k - 1]);
            let cols_k = level_cols[k];
            level[..level_rows[k] * cols_k]
                .par_chunks_mut(cols_k)
                .enumerate()
                .for_each(|(bi, row)| {
                    // The (one or two) rows of blocks below, side by side.
                    let first = &below[2 * bi * below_cols..][..below_cols];
                    let second =
                        &below[(2 * bi + 1).min(below_rows - 1) * below_cols..][..below_cols];
                    for (bj, out) in row.iter_mut().enumerate() {
                        let j = 2 * bj;
                        let k = (j + 1).min(below_cols - 1);
                        let (a, b, c, d) = (first[j], first[k], second[j], second[k]);
                        *out = [
                            lower(lower(a[0], b[0]), lower(c[0], d[0])),
                            higher(higher(a[1], b[1]), higher(c[1], d[1])),
                        ];
                    }
                });
        }
        // The root's range is every height's.
        let [lo, hi] = if top == 0 {
            cell_range(heights, cols, 0, 0)
        } else {
            ranges[level_base[top as usize]]
        };
        let bounds = Aabb {
            min: Vec3::new(xs[0], lo, zs[0]),
            max: Vec3::new(xs[cw], hi, zs[ch]),
        };
        let mut field = HeightField {
            cols,
            rows,
            data,
            ranges_at: n,
            peaks: Vec::new(),
            peaks_from: 1,
            xs,
            zs,
            size,
            level_base,
            level_cols,
            level_rows,
            top,
            bounds,
            hole: None,
        };
        let from = field.finest_level_paying(rays);
        field.peaks = field.neighbourhood_peaks(from);
        field.peaks_from = from;
        field
    }

    /// The field's view for `camera_rays` camera rays (and at most as many
    /// shadow rays): horizons toward `light` (a direction and an angular
    /// radius: a sun's disc) from the finest level that pays for the rays
    /// (`HeightField::finest_level_paying`), so that shadow rays within
    /// that cone stop early where they clear the terrain ahead; and, where
    /// it pays (`sight_pays`), a sight table from `eye` (its position
    /// and a sample of its ray directions, a camera's), so that rays from
    /// the eye within the range of those directions start their walks
    /// where the terrain may first rise to them. Built side by side; a
    /// field with a hole keeps neither.
    pub fn view(
        &self,
        light: Option<(Vec3, f32)>,
        eye: Option<(Vec3, &[Vec3])>,
        camera_rays: usize,
    ) -> FieldView {
        // A field with a hole (a far-field ring) is crossed far from the
        // eye and mostly by rays a finer level stopped: it keeps none.
        if self.hole.is_some() {
            return FieldView::default();
        }
        let from = self.finest_level_paying(camera_rays);
        let pays = sight_pays(
            (self.cols - 1) * (self.rows - 1),
            camera_rays,
            self.walk_lanes(),
        );
        let (light, sight) = rayon::join(
            || light.and_then(|(dir, radius)| self.horizon_from(dir, radius, from)),
            || {
                eye.filter(|_| pays)
                    .and_then(|(eye, directions)| sight::Sight::new(self, eye, directions))
            },
        );
        FieldView { light, sight }
    }

    /// A view with the sight table of `eye` over `directions`, wherever
    /// it pays or not, and no horizons.
    pub fn eye_view(&self, eye: Vec3, directions: &[Vec3]) -> FieldView {
        FieldView {
            light: None,
            sight: sight::Sight::new(self, eye, directions),
        }
    }

    /// The smaller side of a cell.
    fn cell_side(&self) -> f32 {
        let (cw, ch) = (self.cols - 1, self.rows - 1);
        ((self.xs[cw] - self.xs[0]) / cw as f32).min((self.zs[ch] - self.zs[0]) / ch as f32)
    }

    /// How many rays a batch walks side by side here: 16 in AVX-512 lanes,
    /// 8 in AVX2 lanes, 1 without either ([`HeightField::intersect_batch`]).
    fn walk_lanes(&self) -> usize {
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.lanes_isa() {
            return lanes::width(isa);
        }
        1
    }

    /// The instruction set a batch walks its lanes in, if any: the CPU's,
    /// where the field's indices fit the lanes.
    #[cfg(target_arch = "x86_64")]
    fn lanes_isa(&self) -> Option<crate::isa::Isa> {
        lanes::isa().filter(|_| self.fits_lanes())
    }

    /// The horizon of block (level, i, j) of `light` (whose cone holds the
    /// ray), if the level has horizons.
    #[inline(always)]
    fn block_horizon_of(
        &self,
        light: &horizon::Horizon,
        level: u32,
        i: usize,
        j: usize,
    ) -> Option<f32> {
        if level < light.from_level {
            return None;
        }
        let k = level as usize;
        let index = self.level_base[k] - self.level_base[light.from_level as usize]
            + i * self.level_cols[k]
            + j;
        Some(light.values[index])
    }

    /// Bounds of the whole field.
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// Number of triangles: two per cell.
    pub fn triangle_count(&self) -> usize {
        2 * (self.cols - 1) * (self.rows - 1)
    }

    /// Bytes held: heights, column and row positions, and the hierarchy.
    pub fn memory_bytes(&self) -> usize {
        4 * (self.data.len() + self.peaks.len() + self.xs.len() + self.zs.len())
    }

    /// Vertex of sample (row `i`, column `j`), bit for bit the mesh's.
    #[inline(always)]
    fn vertex(&self, i: usize, j: usize) -> Vec3 {
        Vec3::new(self.xs[j], self.data[i * self.cols + j], self.zs[i])
    }

    /// The smooth normal at sample `k` (row-major), from the heights as
    /// [`crate::terrain::mesh::vertex_normal`] makes it: the bits of the
    /// grid's own [`TerrainGrid::vertex_normals`] for a field without a
    /// hole (a hole's sunk samples would tilt its border's normals).
    pub fn vertex_normal(&self, k: usize) -> Vec3 {
        let (i, j) = (k / self.cols, k % self.cols);
        crate::terrain::mesh::vertex_normal(|i, j| self.vertex(i, j), self.cols, self.rows, i, j)
    }

    /// The vertices of triangle `id`, in the mesh's order: cell (i, j) holds
    /// triangles 2(i·(W−1) + j) = (i,j)(i+1,j)(i,j+1) and the next one
    /// (i,j+1)(i+1,j)(i+1,j+1).
    #[inline(always)]
    pub fn triangle(&self, id: u32) -> [Vec3; 3] {
        let (i, j) = self.triangle_cell(id);
        let [p00, p10, p01, p11] = self.cell_vertices(i, j);
        if id.is_multiple_of(2) {
            [p00, p10, p01]
        } else {
            [p01, p10, p11]
        }
    }

    /// The cell (row, column) that holds triangle `id`: in 32-bit
    /// arithmetic where the grid's width allows (ids are 32-bit), whose
    /// division is the faster one.
    #[inline(always)]
    fn triangle_cell(&self, id: u32) -> (usize, usize) {
        let cell = id / 2;
        match u32::try_from(self.cols - 1) {
            Ok(w) => ((cell / w) as usize, (cell % w) as usize),
            Err(_) => (0, cell as usize),
        }
    }

    /// Sample indices (row-major) of the vertices of triangle `id`, in the
    /// order of [`HeightField::triangle`].
    #[inline]
    pub fn triangle_samples(&self, id: u32) -> [usize; 3] {
        let (i, j) = self.triangle_cell(id);
        let k = i * self.cols + j;
        if id.is_multiple_of(2) {
            [k, k + self.cols, k + 1]
        } else {
            [k + 1, k + self.cols, k + self.cols + 1]
        }
    }

    /// The corners of cell (i, j): (i,j), (i+1,j), (i,j+1), (i+1,j+1).
    #[inline(always)]
    fn cell_vertices(&self, i: usize, j: usize) -> [Vec3; 4] {
        [
            self.vertex(i, j),
            self.vertex(i + 1, j),
            self.vertex(i, j + 1),
            self.vertex(i + 1, j + 1),
        ]
    }

    /// (min, max) height of block (i, j) of `level`.
    #[inline(always)]
    fn range(&self, level: u32, i: usize, j: usize) -> [f32; 2] {
        if level == 0 {
            cell_range(&self.data, self.cols, i, j)
        } else {
            let at = 2 * (i * self.level_cols[level as usize] + j);
            let ranges = self.level_ranges(level);
            [ranges[at], ranges[at + 1]]
        }
    }

    /// The stored (min, max) pairs of `level` (≥ 1), row-major, flat: block
    /// (i, j)'s pair starts at 2 · (i · blocks per row + j).
    #[inline(always)]
    fn level_ranges(&self, level: u32) -> &[f32] {
        let k = level as usize;
        let at = self.ranges_at + 2 * self.level_base[k];
        &self.data[at..at + 2 * self.level_rows[k] * self.level_cols[k]]
    }

    /// The closest hit along `ray` with t in (0, t_max]; of hits at the
    /// same t, the lowest triangle index.
    pub fn intersect(&self, ray: &Ray, t_max: f32) -> Option<Hit> {
        self.intersect_in(FieldView::none(), ray, t_max)
    }

    /// [`HeightField::intersect`] with `view`'s sight table (the same hit).
    pub fn intersect_in(&self, view: &FieldView, ray: &Ray, t_max: f32) -> Option<Hit> {
        let mut best: Option<Hit> = None;
        self.walk_all_sides(view, ray, t_max, false, &mut |field, i, j, t_best| {
            field.closest_in_cell(ray, i, j, t_best, &mut best);
            false
        });
        best
    }

    /// Whether the field blocks `ray` within (0, t_max]; stops at the first
    /// triangle hit.
    pub fn occluded(&self, ray: &Ray, t_max: f32) -> bool {
        self.occluded_in(FieldView::none(), ray, t_max)
    }

    /// [`HeightField::occluded`] with `view`'s horizons (the same answer).
    pub fn occluded_in(&self, view: &FieldView, ray: &Ray, t_max: f32) -> bool {
        self.walk_all_sides(view, ray, t_max, true, &mut |field, i, j, _| {
            field.blocks_in_cell(ray, i, j, t_max)
        })
    }

    /// [`HeightField::intersect`] for each ray of a batch: `hits[k]` becomes
    /// the closest hit of `rays[k]` within `t_max[k]`. Bit for bit the same
    /// as one ray at a time, and faster: where the CPU has AVX2 the rays
    /// walk eight at a time, sixteen where it has AVX-512.
    pub fn intersect_batch(&self, rays: &[Ray], t_max: &[f32], hits: &mut [Option<Hit>]) {
        self.intersect_batch_in(FieldView::none(), rays, t_max, hits);
    }

    /// [`HeightField::intersect_batch`] with `view`'s sight table.
    pub fn intersect_batch_in(
        &self,
        view: &FieldView,
        rays: &[Ray],
        t_max: &[f32],
        hits: &mut [Option<Hit>],
    ) {
        assert_eq!(rays.len(), hits.len(), "one hit slot per ray");
        self.batch(view, rays, t_max, &mut Closest(hits));
    }

    /// [`HeightField::occluded`] for each ray of a batch, as
    /// [`HeightField::intersect_batch`].
    pub fn occluded_batch(&self, rays: &[Ray], t_max: &[f32], blocked: &mut [bool]) {
        self.occluded_batch_in(FieldView::none(), rays, t_max, blocked);
    }

    /// [`HeightField::occluded_batch`] with `view`'s horizons.
    pub fn occluded_batch_in(
        &self,
        view: &FieldView,
        rays: &[Ray],
        t_max: &[f32],
        blocked: &mut [bool],
    ) {
        assert_eq!(rays.len(), blocked.len(), "one answer slot per ray");
        self.batch(view, rays, t_max, &mut Any(blocked));
    }

    /// Answers `query` for each ray of a batch: in AVX2 lanes where the CPU
    /// has them (sixteen AVX-512 lanes where it has those), one ray at a
    /// time otherwise.
    fn batch<Q: Query>(&self, view: &FieldView, rays: &[Ray], t_max: &[f32], query: &mut Q) {
        assert_eq!(rays.len(), t_max.len(), "one t_max per ray");
        #[cfg(target_arch = "x86_64")]
        if let Some(isa) = self.lanes_isa() {
            if self.hole.is_some() {
                self.batch_around_hole(isa, view, rays, t_max, query);
                return;
            }
            // SAFETY: the CPU runs `isa` and the field's indices fit in i32.
            #[allow(unsafe_code)]
            unsafe {
                lanes::walk(isa, self, view, rays, t_max, &self.hints(view, rays), query)
            };
            return;
        }
        for (k, ray) in rays.iter().enumerate() {
            query.single(self, view, k, ray, t_max[k]);
        }
    }

    /// [`HeightField::batch`] in lanes for a field with a hole (a far-field
    /// ring): only the rays that may reach it walk, as alone
    /// ([`HeightField::start`]), each from where it leaves the hole if it
    /// starts inside; the others are answered at once. Most of a ring's
    /// rays stopped on a finer level first. No cone hints: camera rays
    /// cross a ring far from the eye, where a cone walk over its blocks
    /// found little and cost a tenth of a horizon frame.
    #[cfg(target_arch = "x86_64")]
    fn batch_around_hole<Q: Query>(
        &self,
        isa: crate::isa::Isa,
        view: &FieldView,
        rays: &[Ray],
        t_max: &[f32],
        query: &mut Q,
    ) {
        let n = rays.len();
        let (mut index, mut walking, mut limits, mut hints) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (k, (ray, &t)) in rays.iter().zip(t_max).enumerate() {
            match self.hole_exit(ray, t) {
                Some(hint) if self.bounds.interval(ray, t).is_some() => {
                    index.push(k);
                    walking.push(*ray);
                    limits.push(t);
                    hints.push(hint);
                }
                _ => query.finish(k, None),
            }
        }
        let mut remapped = Remap {
            query,
            index: &index,
        };
        // SAFETY: the CPU runs `isa` and the field's indices fit in i32.
        #[allow(unsafe_code)]
        unsafe {
            lanes::walk(isa, self, view, &walking, &limits, &hints, &mut remapped)
        };
    }

    /// Where `ray` may first meet the field's own cells within `t_max`, as
    /// its hole says: None if it stays inside the hole (or has no
    /// length), the hole's exit ([`HeightField::hole_hint`]) if it starts
    /// inside it, the default hint otherwise and for a field without a
    /// hole. The box is the caller's to check.
    #[inline]
    fn hole_exit(&self, ray: &Ray, t_max: f32) -> Option<Hint> {
        if self.hole.is_none() {
            return Some(Hint::default());
        }
        if t_max <= 0.0 || self.stays_in_hole(ray, t_max) {
            return None;
        }
        let hint = self.hole_hint(ray);
        (hint.t < t_max).then_some(hint)
    }

    /// Whether `ray` certainly ends inside the hole within `t`: its origin
    /// is inside, and along x and along z it moves less than its distance
    /// to the hole's edges, by a margin ten times the one that
    /// [`HeightField::hole_hint`] takes off its exit, so that every ray
    /// answered here would have had no cell to walk. No division: most of
    /// a ring's rays (a tile's shadow and sky rays) are answered here.
    #[inline]
    fn stays_in_hole(&self, ray: &Ray, t: f32) -> bool {
        let Some([lo, hi]) = self.hole else {
            return false;
        };
        let o = ray.origin;
        let room_x = (o.x - lo[0]).min(hi[0] - o.x);
        let room_z = (o.z - lo[1]).min(hi[1] - o.z);
        let reach = t * (1.0 + 1e-5);
        reach * ray.dir.x.abs() < room_x && reach * ray.dir.z.abs() < room_z
    }

    /// Whether every sample and range index fits the lanes' 32-bit
    /// integers, and the levels their tables.
    #[cfg(target_arch = "x86_64")]
    fn fits_lanes(&self) -> bool {
        let limit = i32::MAX as usize / 2;
        self.data.len() < limit && self.top < lanes::LANE_LEVELS
    }

    /// Tests the two triangles of cell (i, j), keeping the closer hit in
    /// `best` (and its t in `t_best`).
    #[inline(always)]
    fn closest_in_cell(
        &self,
        ray: &Ray,
        i: usize,
        j: usize,
        t_best: &mut f32,
        best: &mut Option<Hit>,
    ) {
        let [p00, p10, p01, p11] = shear_vertices(ray, self.cell_vertices(i, j));
        let first = 2 * (i * (self.cols - 1) + j) as u32;
        for (id, [a, b, c]) in [(first, [p00, p10, p01]), (first + 1, [p01, p10, p11])] {
            if let Some((t, u, v)) = hit_sheared(a, b, c, *t_best) {
                let hit = Hit {
                    t,
                    u,
                    v,
                    triangle: id,
                };
                if hit.beats(best) {
                    *t_best = t;
                    *best = Some(hit);
                }
            }
        }
    }

    /// Whether a triangle of cell (i, j) blocks `ray` within (0, t_max].
    #[inline(always)]
    fn blocks_in_cell(&self, ray: &Ray, i: usize, j: usize, t_max: f32) -> bool {
        let [p00, p10, p01, p11] = shear_vertices(ray, self.cell_vertices(i, j));
        hit_sheared(p00, p10, p01, t_max).is_some() || hit_sheared(p01, p10, p11, t_max).is_some()
    }

    /// Whether `ray` runs exactly along a column line, and along a row line
    /// (a zero direction component with the origin on a line).
    #[inline]
    fn runs_along_a_line(&self, ray: &Ray) -> (bool, bool) {
        (
            ray.dir.x == 0.0 && on_line(&self.xs, ray.origin.x),
            ray.dir.z == 0.0 && on_line(&self.zs, ray.origin.z),
        )
    }

    /// Walks the ray, and again on the other side of any grid line it runs
    /// exactly along: a zero direction component walks on one side of the
    /// line its origin sits on (the sign of the zero picks which), so a ray
    /// on a line is walked with +0 and with −0 there.
    fn walk_all_sides(
        &self,
        view: &FieldView,
        ray: &Ray,
        t_max: f32,
        any: bool,
        cell: &mut impl FnMut(&HeightField, usize, usize, &mut f32) -> bool,
    ) -> bool {
        let (on_x_line, on_z_line) = self.runs_along_a_line(ray);
        let mut t_best = t_max;
        if !on_x_line && !on_z_line {
            return self.walk(view, ray, &mut t_best, any, cell);
        }
        let signs_x: &[f32] = if on_x_line {
            &[0.0, -0.0]
        } else {
            &[ray.dir.x]
        };
        let signs_z: &[f32] = if on_z_line {
            &[0.0, -0.0]
        } else {
            &[ray.dir.z]
        };
        for &dx in signs_x {
            for &dz in signs_z {
                let side = Ray::new(ray.origin, Vec3::new(dx, ray.dir.y, dz));
                if self.walk(view, &side, &mut t_best, any, cell) {
                    return true;
                }
            }
        }
        false
    }

    /// Where the walk of `ray` starts and ends, or None when the ray misses
    /// the field's box within `t_max` or stays inside its hole.
    #[inline(always)]
    fn start(&self, ray: &Ray, t_max: f32) -> Option<Start> {
        let hint = self.hole_exit(ray, t_max)?;
        self.start_from(ray, t_max, hint)
    }

    /// [`HeightField::start`], later along the ray where `hint` says no
    /// triangle is met before it.
    #[inline(always)]
    fn start_from(&self, ray: &Ray, t_max: f32, hint: Hint) -> Option<Start> {
        let (t_enter, t_leave) = self.bounds.interval(ray, t_max)?;
        if !t_leave.is_finite() {
            return None; // only a zero direction leaves a finite box unbounded
        }
        // Slack on the height test for the rounding of the interval ends
        // and of the ray's height there: generous against ~1e-7 relative
        // errors, tiny against any real gap.
        let eps = (ray.origin.y.abs()
            + (ray.dir.y * t_leave).abs()
            + self.bounds.min.y.abs()
            + self.bounds.max.y.abs())
            * 4e-6;
        // Where to start (found by counting steps on the peer workload): a
        // ray with a hint at the hint's level; one that starts inside the
        // box (a shadow ray leaving the ground) at its own cell, one from
        // outside (a camera ray) four levels below the root, so it neither
        // descends from the top nor climbs from the bottom.
        let (t, level, ceiling) = if hint.t > t_enter {
            let level = hint.level.min(self.top);
            (hint.t.min(t_leave), level, level)
        } else if t_enter == 0.0 {
            (t_enter, 0, self.top)
        } else {
            (t_enter, self.top.saturating_sub(4), self.top)
        };
        Some(Start {
            t_start: t,
            t_leave,
            eps,
            level,
            ceiling,
            block: self.block_at(ray, t, level),
        })
    }

    /// The block of `level` the walk's descent puts `ray` in at parameter
    /// `t`: (row, column).
    #[inline(always)]
    fn block_at(&self, ray: &Ray, t: f32, level: u32) -> [usize; 2] {
        if level == self.top {
            return [0, 0];
        }
        let p = ray.at(t);
        let j = cell_on_axis(&self.xs, ray.origin.x, ray.inv_dir.x, p.x, t);
        let i = cell_on_axis(&self.zs, ray.origin.z, ray.inv_dir.z, p.z, t);
        [i >> level, j >> level]
    }

    /// Walks the blocks along `ray` front to back, calling
    /// `cell(self, i, j, &mut t_best)` on each cell the ray may hit a
    /// triangle in, until it returns true (then returns true) or the ray
    /// passes `t_best` or leaves the field. An occlusion walk (`any`) along
    /// the light also stops where the ray clears a block's horizon.
    #[inline(always)]
    fn walk(
        &self,
        view: &FieldView,
        ray: &Ray,
        t_best: &mut f32,
        any: bool,
        cell: &mut impl FnMut(&HeightField, usize, usize, &mut f32) -> bool,
    ) -> bool {
        let Some(Start {
            t_start,
            t_leave,
            eps,
            level: start_level,
            ceiling,
            block: [start_i, start_j],
        }) = self.start(ray, *t_best)
        else {
            return false;
        };
        let (o, d) = (ray.origin, ray.dir);
        let descending = d.y <= 0.0;
        let mut block = Block {
            level: start_level,
            i: start_i,
            j: start_j,
        };
        // The light's horizons, for an occlusion ray within its cone.
        let light = view.light.as_ref().filter(|h| any && h.covers(d));
        let mut t = t_start;
        let mut steps = 0;
        loop {
            steps += 1;
            if let Some(h) =
                light.and_then(|l| self.block_horizon_of(l, block.level, block.i, block.j))
            {
                if o.y + d.y * t > h + eps {
                    return false;
                }
            }
            let (tx, tz) = self.exits(ray, block);
            // A NaN (the ray runs along the exit face) never ends the block.
            let t_exit = lower(lower(t_leave, tx), tz);
            let t_limit = lower(t_exit, *t_best * CULL_SLACK);
            let [lo, hi] = self.range(block.level, block.i, block.j);
            // The ray's height at both ends of its stretch in the block.
            let (ya, yb) = (o.y + d.y * t, o.y + d.y * t_limit);
            let (y_low, y_high) = if descending { (yb, ya) } else { (ya, yb) };
            let overlaps = t <= t_limit * ROBUST_FAR && y_low <= hi + eps && y_high >= lo - eps;
            if overlaps {
                if block.level == 0 {
                    if cell(self, block.i, block.j, t_best) {
                        return true;
                    }
                } else {
                    block = self.child(ray, t, block);
                    continue;
                }
            }
            // Move on to the neighbour across the exit face.
            if t_exit >= t_leave || t_exit > *t_best * CULL_SLACK {
                return false;
            }
            t = t_exit;
            let ceiling = if steps < PATIENCE && !any {
                ceiling
            } else {
                self.top
            };
            let Some(next) = self.across(ray, tx, tz, block, ceiling) else {
                return false; // off the grid
            };
            block = next;
        }
    }

    /// Where `ray` leaves `block` across its far face on x and on z (NaN
    /// where the ray runs along the face).
    #[inline(always)]
    fn exits(&self, ray: &Ray, block: Block) -> (f32, f32) {
        let (o, inv) = (ray.origin, ray.inv_dir);
        let (cw, ch) = (self.cols - 1, self.rows - 1);
        // The far side in the direction of travel; the sign of a zero
        // picks a side.
        let col = ((block.j + (inv.x > 0.0) as usize) << block.level).min(cw);
        let row = ((block.i + (inv.z > 0.0) as usize) << block.level).min(ch);
        ((self.xs[col] - o.x) * inv.x, (self.zs[row] - o.z) * inv.z)
    }

    /// The child of `block` (level ≥ 1) that `ray` is in at `t`: past a mid
    /// plane at t means the far half on that axis.
    #[inline(always)]
    fn child(&self, ray: &Ray, t: f32, block: Block) -> Block {
        let (o, inv) = (ray.origin, ray.inv_dir);
        let level = block.level - 1;
        let col_mid = ((2 * block.j + 1) << level).min(self.cols - 1);
        let row_mid = ((2 * block.i + 1) << level).min(self.rows - 1);
        let past_x = t >= (self.xs[col_mid] - o.x) * inv.x;
        let past_z = t >= (self.zs[row_mid] - o.z) * inv.z;
        // A child beyond the grid's edge (odd sizes): the ray is in its
        // sibling; the walk moves on from there.
        Block {
            level,
            i: (2 * block.i + ((inv.z > 0.0) == past_z) as usize)
                .min(self.level_rows[level as usize] - 1),
            j: (2 * block.j + ((inv.x > 0.0) == past_x) as usize)
                .min(self.level_cols[level as usize] - 1),
        }
    }

    /// The neighbour of `block` across the face `ray` leaves it through
    /// (x's when it comes first, never one the ray runs along: NaN), at its
    /// parent's level where it lies in a new parent (the ray enters both
    /// at the same t) and that level is at most `ceiling`; None off the
    /// grid.
    #[inline(always)]
    fn across(&self, ray: &Ray, tx: f32, tz: f32, block: Block, ceiling: u32) -> Option<Block> {
        let Block {
            mut level,
            mut i,
            mut j,
        } = block;
        let crossed_parent = if tx <= tz || tz.is_nan() {
            step(&mut j, ray.inv_dir.x > 0.0, self.level_cols[level as usize])
        } else {
            step(&mut i, ray.inv_dir.z > 0.0, self.level_rows[level as usize])
        }?;
        if crossed_parent && level < ceiling {
            level += 1;
            i /= 2;
            j /= 2;
        }
        Some(Block { level, i, j })
    }
}

/// A block of the hierarchy: its level and its (row, column) there.
#[derive(Debug, Clone, Copy)]
struct Block {
    level: u32,
    i: usize,
    j: usize,
}

/// Whether `v` is exactly one of the (sorted) grid line coordinates.
fn on_line(lines: &[f32], v: f32) -> bool {
    lines.binary_search_by(|x| x.total_cmp(&v)).is_ok()
}

/// Moves block index `index` one block forward or back among `blocks`:
/// whether the new block lies in a new parent (it is the first child met
/// in the direction of travel), or None when the move leaves the grid.
#[inline(always)]
fn step(index: &mut usize, forward: bool, blocks: usize) -> Option<bool> {
    if forward {
        *index += 1;
        (*index < blocks).then_some(index.is_multiple_of(2))
    } else {
        *index = index.checked_sub(1)?;
        Some(!index.is_multiple_of(2))
    }
}

/// (min, max) of the four corner heights of cell (i, j) of a grid with
/// `cols` samples per row.
#[inline(always)]
fn cell_range(heights: &[f32], cols: usize, i: usize, j: usize) -> [f32; 2] {
    let k = i * cols + j;
    let top = &heights[k..k + 2];
    let bottom = &heights[k + cols..k + cols + 2];
    let (a, b, c, d) = (top[0], top[1], bottom[0], bottom[1]);
    [a.min(b).min(c.min(d)), a.max(b).max(c.max(d))]
}

/// The (min, max) height of each block of one row of 2 × 2-cell blocks,
/// into `out`: block j spans columns 2j ..= 2j + 2 (or to the last column)
/// of `rows`, the block row's grid rows 2i, 2i + 1 and 2i + 2 (at the far
/// edge, where there is no row 2i + 2, the last row twice). `lo` and `hi`
/// are room for a row each. A NaN height is passed over.
pub fn block_ranges_row(rows: [&[f32]; 3], lo: &mut [f32], hi: &mut [f32], out: &mut [[f32; 2]]) {
    // min and max that pass over a NaN second operand, one instruction
    // each; folds from ±∞ never hold a NaN.
    let lower = |a: f32, b: f32| if b < a { b } else { a };
    let higher = |a: f32, b: f32| if b > a { b } else { a };
    let [a, b, c] = rows;
    for ((((lo, hi), &x), &y), &z) in lo.iter_mut().zip(hi.iter_mut()).zip(a).zip(b).zip(c) {
        *lo = lower(lower(lower(f32::INFINITY, x), y), z);
        *hi = higher(higher(higher(f32::NEG_INFINITY, x), y), z);
    }
    // Block j from the column pairs j and j + 1 (the first of the latter),
    // in lanes; the last block alone, its third column clamped.
    let Some((last, inner)) = out.split_last_mut() else {
        return;
    };
    let (lo_pairs, hi_pairs) = (lo.as_chunks::<2>().0, hi.as_chunks::<2>().0);
    let next = lo_pairs[1..].iter().zip(&hi_pairs[1..]);
    for (((out, l), h), (l2, h2)) in inner.iter_mut().zip(lo_pairs).zip(hi_pairs).zip(next) {
        *out = [
            lower(lower(l[0], l[1]), l2[0]),
            higher(higher(h[0], h[1]), h2[0]),
        ];
    }
    let j = 2 * inner.len();
    let end = (j + 2).min(a.len() - 1);
    *last = [
        lower(lower(lo[j], lo[j + 1]), lo[end]),
        higher(higher(hi[j], hi[j + 1]), hi[end]),
    ];
}

/// The (min, max) height of each level-1 block of a grid of `cols` samples
/// a row: block (bi, bj) holds the cells of rows 2bi, 2bi + 1 and columns
/// 2bj, 2bj + 1 (those that exist), so the samples of rows 2bi ..= 2bi + 2
/// and columns 2bj ..= 2bj + 2 ([`block_ranges_row`]); block rows in
/// parallel.
fn first_level(heights: &[f32], cols: usize, level: &mut [[f32; 2]], level_cols: usize) {
    let rows = heights.len() / cols;
    level.par_chunks_mut(level_cols).enumerate().for_each_init(
        || (vec![0.0; cols], vec![0.0; cols]),
        |(lo, hi), (bi, out)| {
            let row = |r: usize| &heights[r.min(rows - 1) * cols..][..cols];
            block_ranges_row([row(2 * bi), row(2 * bi + 1), row(2 * bi + 2)], lo, hi, out);
        },
    );
}

impl HeightField {
    /// The highest range maximum over each block of levels `from` (1 or
    /// more, [`HeightField::finest_level_paying`]) to `top` and its (up to)
    /// eight neighbours of the same level, indexed as the ranges less the
    /// start of level `from`: per row, the column-wise maximum of the three
    /// rows around it, then of three columns of that.
    fn neighbourhood_peaks(&self, from: u32) -> Vec<f32> {
        let base = self.level_base[from as usize];
        let mut peaks = Vec::with_capacity(self.level_base[self.top as usize] + 1 - base);
        peaks.par_extend(rayon::iter::repeat_n(f32::NEG_INFINITY, peaks.capacity()));
        for (level, part) in self.split_by_level(&mut peaks, from) {
            let k = level as usize;
            let (rows, cols) = (self.level_rows[k], self.level_cols[k]);
            let ranges = self.level_ranges(level);
            part.par_chunks_mut(cols).enumerate().for_each_init(
                || vec![0.0; cols],
                |column_peak, (i, out)| {
                    column_peak.fill(f32::NEG_INFINITY);
                    for r in i.saturating_sub(1)..(i + 2).min(rows) {
                        let row = &ranges[2 * r * cols..][..2 * cols];
                        for (p, b) in column_peak.iter_mut().zip(row.chunks_exact(2)) {
                            *p = higher(*p, b[1]);
                        }
                    }
                    for (j, out) in out.iter_mut().enumerate() {
                        // Columns j − 1 ..= j + 1, clamped to the level
                        // (a repeated column changes no maximum).
                        let (left, right) = (j.saturating_sub(1), (j + 1).min(cols - 1));
                        *out = higher(
                            higher(column_peak[left], column_peak[j]),
                            column_peak[right],
                        );
                    }
                },
            );
        }
        peaks
    }

    /// `blocks`, one value per block of levels `from` to `top` laid out as
    /// the ranges are (from level `from`'s first block), cut into each
    /// level's part.
    fn split_by_level<'a, T>(&self, blocks: &'a mut [T], from: u32) -> Vec<(u32, &'a mut [T])> {
        let mut parts = Vec::with_capacity((self.top + 1 - from) as usize);
        let mut rest = blocks;
        for level in from..=self.top {
            let k = level as usize;
            let (part, after) = rest.split_at_mut(self.level_rows[k] * self.level_cols[k]);
            parts.push((level, part));
            rest = after;
        }
        parts
    }
}

/// Whether a sight table over `cells` cells pays for `camera_rays` camera
/// rays walked `lanes` at a time. Filling it costs about 25 ns of one
/// thread a cell at 2049² on the Zen 1 machine (8 lanes), where it saved
/// a camera ray 70–80 ns of its walk: it paid up to three cells a ray
/// (the peer workload's 2049² frame has 2.02: 0.77–0.83 s without the
/// table against 0.72–0.76 s with it; its 4097², 8.1, built the table
/// from 2 × 2 blocks and traced slower with it). Sixteen lanes walk a ray
/// in less time, so the table saves less: on the Xeon with AVX-512 its fill
/// took 35 ms of the 2049² frame's two threads and saved about 25 ms of
/// tracing (frames of 0.25–0.27 s without it against 0.27–0.28 s with it,
/// six alternating runs each), and at 1025² (0.5 cells a ray) it was even.
/// So it is built up to one cell a ray there.
fn sight_pays(cells: usize, camera_rays: usize, lanes: usize) -> bool {
    let cells_per_ray = if lanes >= 16 { 1 } else { 3 };
    cells <= cells_per_ray * camera_rays
}

/// The root's level over `cw` × `ch` cells: the first whose one block
/// covers them all.
fn top_level(cw: usize, ch: usize) -> u32 {
    let mut top = 0;
    while (1usize << top) < cw.max(ch) {
        top += 1;
    }
    top
}

/// Blocks of `level` along z and x over a grid of `ch` × `cw` cells.
#[inline(always)]
fn level_dims(ch: usize, cw: usize, level: u32) -> (usize, usize) {
    (
        (ch + (1 << level) - 1) >> level,
        (cw + (1 << level) - 1) >> level,
    )
}

/// min(a, b) that ignores a NaN `b`: one `minss`, where `f32::min` also
/// checks `a` (folds that start from ±∞ never hold a NaN).
#[inline(always)]
pub(super) fn lower<T: PartialOrd>(a: T, b: T) -> T {
    if b < a {
        b
    } else {
        a
    }
}

/// max(a, b) that ignores a NaN `b` (see [`lower`]).
#[inline(always)]
pub(super) fn higher<T: PartialOrd>(a: T, b: T) -> T {
    if b > a {
        b
    } else {
        a
    }
}

mod bundle;
mod horizon;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod lanes;
mod sight;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod simd;
#[cfg(test)]
mod tests;
