//! The BRDFs surfaces are shaded with: Lambert's for diffuse ground and
//! rock, and the GGX microfacet model (Walter et al. 2007, with Smith's
//! shadowing and Schlick's Fresnel) for glossy layers. Both integrators
//! take them from here.

use glam::Vec3;

/// Lambert's BRDF of a surface of `albedo`: albedo/π, the same toward
/// every direction.
#[inline]
pub fn lambert(albedo: Vec3) -> Vec3 {
    albedo * std::f32::consts::FRAC_1_PI
}

/// Specular reflectance at normal incidence of a dielectric ground
/// (index about 1.5).
pub const GLOSS_F0: f32 = 0.04;

/// The GGX (Trowbridge–Reitz) microfacet BRDF with Smith's separable
/// shadowing and Schlick's Fresnel from [`GLOSS_F0`], for unit normal `n`,
/// unit directions `v` toward the eye and `l` toward the light, and
/// perceptual `roughness` (α = roughness², at least 0.01):
/// D·G·F / (4 (n·l)(n·v)), with D = α² / (π ((n·h)²(α² − 1) + 1)²) and
/// G₁(x) = 2 (n·x) / ((n·x) + √(α² + (1 − α²)(n·x)²)). Zero where either
/// direction is below the surface.
pub fn ggx(n: Vec3, v: Vec3, l: Vec3, roughness: f32) -> f32 {
    let (nl, nv) = (n.dot(l), n.dot(v));
    if nl <= 0.0 || nv <= 0.0 {
        return 0.0;
    }
    let h = (v + l).normalize();
    let a2 = (roughness * roughness).max(0.01).powi(2);
    let nh = n.dot(h).max(0.0);
    let d = a2 / (std::f32::consts::PI * (nh * nh * (a2 - 1.0) + 1.0).powi(2));
    let g1 = |x: f32| 2.0 * x / (x + (a2 + (1.0 - a2) * x * x).sqrt());
    let f = GLOSS_F0 + (1.0 - GLOSS_F0) * (1.0 - v.dot(h).clamp(0.0, 1.0)).powi(5);
    d * g1(nl) * g1(nv) * f / (4.0 * nl * nv)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lambert's BRDF reflects its albedo: ∫ f cos θ dω over the
    /// hemisphere = albedo (numerically, by the polar angle).
    #[test]
    fn lambert_reflects_its_albedo() {
        let albedo = Vec3::new(0.2, 0.5, 0.9);
        let n = 20_000;
        let mut sum = 0.0f64;
        for i in 0..n {
            let theta = (i as f64 + 0.5) / n as f64 * std::f64::consts::FRAC_PI_2;
            sum += theta.cos() * theta.sin() * std::f64::consts::TAU * std::f64::consts::FRAC_PI_2
                / n as f64;
        }
        let reflected = lambert(albedo) * sum as f32;
        assert!(
            (reflected - albedo).abs().max_element() < 1e-5,
            "{reflected}"
        );
        assert_eq!(lambert(Vec3::ONE).x, std::f32::consts::FRAC_1_PI);
    }

    /// The GGX distribution is normalised: ∫ D(h) (n·h) dω_h = 1 over the
    /// hemisphere (numerically, for rough and smooth surfaces); at normal
    /// incidence the mirror direction reflects F0 · D / 4 · G.
    #[test]
    fn ggx_distribution_integrates_to_one() {
        for roughness in [0.3f32, 0.6, 1.0] {
            let a2 = (roughness * roughness).powi(2) as f64;
            let n = 4000;
            let mut sum = 0.0f64;
            for i in 0..n {
                let theta = (i as f64 + 0.5) / n as f64 * std::f64::consts::FRAC_PI_2;
                let c = theta.cos();
                let d = a2 / (std::f64::consts::PI * (c * c * (a2 - 1.0) + 1.0).powi(2));
                sum += d * c * theta.sin() * std::f64::consts::TAU * std::f64::consts::FRAC_PI_2
                    / n as f64;
            }
            assert!((sum - 1.0).abs() < 1e-3, "roughness {roughness}: {sum}");
        }
        let up = Vec3::Y;
        let r = 0.5f32;
        let a2 = (r * r).powi(2);
        let g1 = 2.0 / (1.0 + (a2 + (1.0 - a2)).sqrt());
        let expected = a2 / (std::f32::consts::PI * a2 * a2) * g1 * g1 * GLOSS_F0 / 4.0;
        assert!((ggx(up, up, up, r) - expected).abs() < 1e-5 * expected.max(1.0));
        assert_eq!(ggx(up, up, -up, r), 0.0, "light below the surface");
        // Reciprocity: swapping eye and light changes nothing.
        let (v, l) = (
            Vec3::new(0.3, 0.8, 0.1).normalize(),
            Vec3::new(-0.5, 0.6, 0.2).normalize(),
        );
        assert!((ggx(up, v, l, 0.4) - ggx(up, l, v, 0.4)).abs() < 1e-6);
    }
}
