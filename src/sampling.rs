//! Directions from uniform numbers: an orthonormal basis around a normal,
//! the sun's cone and the cosine-weighted hemisphere. A leaf: the light
//! model and the tracing kernels' tests share it.

use glam::Vec3;

/// Two unit vectors completing `n` to an orthonormal basis (Duff et al. 2017).
#[inline]
pub fn basis(n: Vec3) -> (Vec3, Vec3) {
    let sign = 1f32.copysign(n.z);
    let a = -1.0 / (sign + n.z);
    let b = n.x * n.y * a;
    (
        Vec3::new(1.0 + sign * n.x * n.x * a, sign * b, -sign * n.x),
        Vec3::new(b, sign + n.y * n.y * a, -n.y),
    )
}

/// A direction within the cone of half-angle `radius` around unit `axis`,
/// uniform over the disc the cone cuts (the sun's disc seen from the point).
#[inline]
pub fn sample_cone(axis: Vec3, radius: f32, u: (f32, f32)) -> Vec3 {
    if radius <= 0.0 {
        return axis;
    }
    let (t, b) = basis(axis);
    let r = u.0.sqrt() * radius.tan();
    let phi = std::f32::consts::TAU * u.1;
    (axis + t * (r * phi.cos()) + b * (r * phi.sin())).normalize()
}

/// A cosine-weighted direction in the hemisphere around unit `n`.
#[inline]
pub fn cosine_hemisphere(n: Vec3, u: (f32, f32)) -> Vec3 {
    let (t, b) = basis(n);
    let r = u.0.sqrt();
    let phi = std::f32::consts::TAU * u.1;
    (t * (r * phi.cos()) + b * (r * phi.sin()) + n * (1.0 - u.0).max(0.0).sqrt()).normalize()
}

/// A piecewise-constant distribution over [0, 1) with one piece per value
/// of a non-negative function (pbrt's `PiecewiseConstant1D`).
#[derive(Debug, Clone)]
pub struct Distribution1D {
    func: Vec<f32>,
    /// cdf[i] = ∫₀^(i/n) f / ∫₀¹ f, n + 1 entries from 0 to 1.
    cdf: Vec<f32>,
    /// ∫₀¹ f.
    integral: f32,
    /// guide[j]: the piece where u = j / n falls, from which a draw scans
    /// forward (one step or two, where a binary search would take log n).
    guide: Vec<u32>,
}

impl Distribution1D {
    /// The distribution of `func` (at least one value; all zero means
    /// uniform).
    pub fn new(func: Vec<f32>) -> Distribution1D {
        let n = func.len().max(1) as f32;
        let mut cdf = Vec::with_capacity(func.len() + 1);
        let mut sum = 0.0f64;
        cdf.push(0.0);
        for &f in &func {
            sum += f as f64 / n as f64;
            cdf.push(sum as f32);
        }
        let integral = sum as f32;
        if integral > 0.0 {
            for c in &mut cdf {
                *c /= integral;
            }
        } else {
            for (i, c) in cdf.iter_mut().enumerate() {
                *c = i as f32 / n;
            }
        }
        *cdf.last_mut().expect("n + 1 entries") = 1.0;
        let pieces = func.len();
        let guide = (0..pieces)
            .map(|j| {
                let u = j as f32 / pieces as f32;
                (cdf.partition_point(|&c| c <= u) - 1).min(pieces - 1) as u32
            })
            .collect();
        Distribution1D {
            func,
            cdf,
            integral,
            guide,
        }
    }

    /// ∫₀¹ f.
    pub fn integral(&self) -> f32 {
        self.integral
    }

    /// A point x in [0, 1) drawn with the uniform number `u`, its density
    /// and the piece it lies in.
    #[inline]
    pub fn sample(&self, u: f32) -> (f32, f32, usize) {
        let n = self.func.len();
        // The last piece whose cdf start is at most u: from the guide's
        // piece (whose start is at most about u: back one where rounding
        // of u·n went up) forward.
        let mut i = self.guide[((u * n as f32) as usize).min(n - 1)] as usize;
        while i > 0 && self.cdf[i] > u {
            i -= 1;
        }
        while i + 1 < n && self.cdf[i + 1] <= u {
            i += 1;
        }
        let width = self.cdf[i + 1] - self.cdf[i];
        let du = if width > 0.0 {
            ((u - self.cdf[i]) / width).clamp(0.0, 1.0)
        } else {
            0.5
        };
        let x = ((i as f32 + du) / n as f32).min(1.0 - f32::EPSILON);
        (x, self.density(i), i)
    }

    /// The density on piece `i`.
    #[inline]
    pub fn density(&self, i: usize) -> f32 {
        if self.integral > 0.0 {
            self.func[i] / self.integral
        } else {
            1.0
        }
    }

    /// The density at x in [0, 1].
    #[inline]
    pub fn density_at(&self, x: f32) -> f32 {
        let n = self.func.len();
        self.density(((x * n as f32) as usize).min(n - 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_distribution_samples_its_pieces_in_proportion() {
        let d = Distribution1D::new(vec![1.0, 3.0, 0.0, 4.0]);
        assert_eq!(d.integral(), 2.0);
        assert_eq!(
            [0, 1, 2, 3].map(|i| d.density(i)),
            [0.5, 1.5, 0.0, 2.0],
            "densities integrate to 1 over [0, 1)"
        );
        // cdf: 0, 1/8, 4/8, 4/8, 1.
        assert_eq!(d.sample(0.0), (0.0, 0.5, 0));
        assert_eq!(d.sample(0.0625), (0.125, 0.5, 0));
        assert_eq!(d.sample(0.25), (0.25 + 0.25 / 3.0, 1.5, 1));
        // u at the empty piece's (zero-width) start lands past it.
        let (x, p, i) = d.sample(0.5);
        assert_eq!((x, p, i), (0.75, 2.0, 3));
        assert!(d.sample(0.999_999).0 < 1.0);
        assert_eq!(d.density_at(0.8), 2.0);
    }

    #[test]
    fn the_guide_finds_the_piece_a_binary_search_finds() {
        let d = Distribution1D::new((0..97).map(|k| ((k * 37) % 11) as f32).collect());
        for k in 0..10_000 {
            let u = k as f32 / 10_000.0;
            let i = (d.cdf.partition_point(|&c| c <= u) - 1).min(96);
            assert_eq!(d.sample(u).2, i, "u = {u}");
        }
    }

    #[test]
    fn an_all_zero_function_is_uniform() {
        let d = Distribution1D::new(vec![0.0; 4]);
        assert_eq!(d.sample(0.3), (0.3, 1.0, 1));
    }
}
