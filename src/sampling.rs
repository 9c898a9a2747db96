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
