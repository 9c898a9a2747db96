//! How an image is cut up for rendering: pixel rectangles, square tiles
//! (the unit of parallel work and of progress) and the patches inside a
//! tile whose camera rays are traced together, in Z order. A leaf: the
//! renderer, the farm's regions and the tracing kernels' tests share it.

/// A pixel rectangle [x0, x1) × [y0, y1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    /// Left column.
    pub x0: u32,
    /// Top row.
    pub y0: u32,
    /// One past the right column.
    pub x1: u32,
    /// One past the bottom row.
    pub y1: u32,
}

impl Rect {
    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.x1 - self.x0
    }
    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.y1 - self.y0
    }
}

/// Side of a square render tile, pixels.
pub const TILE: u32 = 32;

/// Number of tiles in a `width` × `height` image.
pub fn tile_count(width: u32, height: u32) -> u64 {
    width.div_ceil(TILE) as u64 * height.div_ceil(TILE) as u64
}

/// Side of the square patches a tile's pixels are traced in: the camera
/// rays of a patch go together (the terrain walks them as a bundle).
pub const PATCH: u32 = 8;

/// Where the k-th pixel of a patch lies in it, (column, row), in Z
/// (Morton) order: bit b of the column is bit 2b of k, bit b of the row
/// bit 2b + 1, so each run of eight pixels from a multiple of eight is a
/// 4 × 2 block, and each run of sixteen a 4 × 4 block.
const Z_ORDER: [(u32, u32); (PATCH * PATCH) as usize] = {
    assert!(
        PATCH.is_power_of_two(),
        "Z order needs a power-of-two patch"
    );
    let mut order = [(0, 0); (PATCH * PATCH) as usize];
    let mut k = 0;
    while k < order.len() {
        let (mut x, mut y, mut b) = (0, 0, 0);
        while b < PATCH.trailing_zeros() {
            x |= ((k >> (2 * b)) & 1) << b;
            y |= ((k >> (2 * b + 1)) & 1) << b;
            b += 1;
        }
        order[k] = (x as u32, y as u32);
        k += 1;
    }
    order
};

/// The pixels of `r`, patch by patch (row by row of PATCH × PATCH
/// patches), each patch in Z order ([`Z_ORDER`]; a patch cut by the edge
/// of `r` keeps the order of the pixels it has). The BVH takes eight
/// consecutive camera rays as one octet, and a 4 × 2 block of them shares
/// more boxes than a row of eight: on the workload's 2049² and 4097²
/// meshes (`scree bench --obj`, alternating with row order), its camera
/// rays ran faster in 11 of 12 one- and two-thread passes, by 7% at the
/// median (−5% to +25%). The terrain walks the whole patch as one bundle
/// whatever its order (its rates did not move beyond the noise). Plain
/// loops: four nested `flat_map`s cost a render about 70 instructions a
/// pixel more.
pub fn patch_order(r: Rect) -> Vec<(u32, u32)> {
    let mut pixels = Vec::with_capacity(r.width() as usize * r.height() as usize);
    for py in (r.y0..r.y1).step_by(PATCH as usize) {
        for px in (r.x0..r.x1).step_by(PATCH as usize) {
            for &(dx, dy) in &Z_ORDER {
                let (x, y) = (px + dx, py + dy);
                if x < r.x1 && y < r.y1 {
                    pixels.push((x, y));
                }
            }
        }
    }
    pixels
}

/// The tiles covering `r`, row by row.
pub fn tiles(r: Rect) -> Vec<Rect> {
    let mut out = Vec::new();
    for y0 in (r.y0..r.y1).step_by(TILE as usize) {
        for x0 in (r.x0..r.x1).step_by(TILE as usize) {
            out.push(Rect {
                x0,
                y0,
                x1: (x0 + TILE).min(r.x1),
                y1: (y0 + TILE).min(r.y1),
            });
        }
    }
    out
}
