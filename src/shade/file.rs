//! The shading sections of a scene file and their checks: `sun`, `sky`,
//! `sky_light`, `fog`, `water` and `terrain.material` (layers, masks,
//! bumps).
//!
//! ```json
//! "sun": { "elevation": 35, "azimuth": 210 },
//! "sky": { "type": "preetham", "turbidity": 3 }
//! ```

use std::sync::Arc;

use glam::Vec3;
use serde::Deserialize;

use super::layers::{Bump, Detail, Layer, Layers, Mask, MAX_LAYERS};
use super::sky::{sun_transmittance, HosekWilkie, Mars, Preetham};
use super::water::Waves;
use super::{Fog, Material, Sky, SkyLight, Sun, Water};
use crate::check::{above, color, count, finite, range_pair, within, Check, Files, Invalid};
use crate::texture;

/// `terrain.material`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaterialFile {
    /// Colour bands by height (sand, grass, rock, snow); steep faces are rock.
    HeightSlope {
        /// Top of the sand band, fraction of the terrain height. Default 0.06.
        #[serde(default = "default_sand_level")]
        sand_level: f64,
        /// Top of the grass band, fraction of the terrain height. Default 0.5.
        #[serde(default = "default_grass_level")]
        grass_level: f64,
        /// Bottom of the snow band, fraction of the terrain height. Default 0.8.
        #[serde(default = "default_snow_level")]
        snow_level: f64,
        /// Faces steeper than this many degrees from horizontal are rock. Default 40.
        #[serde(default = "default_steep_angle")]
        steep_angle: f64,
        /// Per-face brightness variation from a hash of the triangle, as a
        /// fraction (0.04: each face 4 % lighter or darker at most), 0..=0.5.
        /// Default 0.04.
        #[serde(default = "default_variation")]
        variation: f64,
    },
    /// One colour everywhere.
    Albedo {
        /// Linear RGB reflectance, each in [0, 1].
        color: [f64; 3],
    },
    /// Layers of colour, texture and bumps, each masked by height, slope,
    /// aspect, curvature and flow, blended top to bottom over the first.
    Layers {
        /// 1..=16 layers, bottom first; the first covers all ground and
        /// takes no mask.
        layers: Vec<LayerFile>,
        /// Bumps and albedo variation finer than the grid, everywhere.
        #[serde(default)]
        detail: Option<DetailFile>,
    },
}

/// One layer of a layered material.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LayerFile {
    /// Linear RGB albedo, each 0..=1 (multiplies the texture). Default
    /// [0.5, 0.5, 0.5].
    pub color: [f64; 3],
    /// A tileable image, relative to the scene file's folder, laid along
    /// the three axes (triplanar) so steep faces are not stretched.
    pub texture: Option<String>,
    /// World size of one tile of the texture, > 0. Default 10.
    pub texture_size: f64,
    /// Noise bumps of this layer.
    pub bump: Option<BumpFile>,
    /// Roughness of a glossy sun highlight (GGX microfacets, dielectric),
    /// 0.1..=1: low for wet rock or ice, high for a dull sheen. Default
    /// none: matte.
    pub roughness: Option<f64>,
    /// Where the layer lies. Default everywhere.
    pub mask: Option<MaskFile>,
}

impl Default for LayerFile {
    fn default() -> Self {
        LayerFile {
            color: [0.5, 0.5, 0.5],
            texture: None,
            texture_size: 10.0,
            bump: None,
            roughness: None,
            mask: None,
        }
    }
}

/// Noise bumps.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BumpFile {
    /// Height of the bumps, world units, 0..=1000.
    pub height: f64,
    /// Feature size, world units, > 0.
    pub size: f64,
}

/// Fine detail everywhere.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct DetailFile {
    /// Height of the bumps, world units, 0..=1000. Default 0.05.
    pub height: f64,
    /// Feature size, world units, > 0. Default 0.5.
    pub size: f64,
    /// Largest change of the albedo, a fraction, 0..=1. Default 0.1.
    pub variation: f64,
}

impl Default for DetailFile {
    fn default() -> Self {
        DetailFile {
            height: 0.05,
            size: 0.5,
            variation: 0.1,
        }
    }
}

/// Where a layer lies: each criterion given is a window [lo, hi]; the
/// layer's weight is the product of its windows.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MaskFile {
    /// Height, fractions of the terrain's relief, each 0..=1.
    pub height: Option<[f64; 2]>,
    /// Slope, degrees from horizontal, each 0..=90.
    pub slope: Option<[f64; 2]>,
    /// The compass bearing the slope faces, degrees clockwise from north
    /// (+z) toward east (+x); with `aspect_width`.
    pub aspect: Option<f64>,
    /// Half-width of the aspect window, degrees, 0..=180. Default 60.
    pub aspect_width: f64,
    /// Curvature, −1 (ridges) to 1 (gullies), each −1..=1.
    pub curvature: Option<[f64; 2]>,
    /// Water flow, 0 (none) to 1 (main channels), each 0..=1.
    pub flow: Option<[f64; 2]>,
    /// Moisture near lakes and rivers (`terrain.rivers`), 1 at the water
    /// falling to 0 at its reach, each 0..=1; 0 everywhere without rivers.
    pub moisture: Option<[f64; 2]>,
    /// Soft edge width, a fraction of each criterion's unit (height 1,
    /// slope 90°, aspect 180°, curvature 2, flow 1), 0..=1. Default 0.05.
    pub fuzz: f64,
    /// Noise that breaks the borders: added to the criteria, a fraction of
    /// their unit, 0..=1. Default 0.
    pub noise: f64,
    /// Feature size of that noise, world units, > 0. Default 10.
    pub noise_size: f64,
}

impl Default for MaskFile {
    fn default() -> Self {
        MaskFile {
            height: None,
            slope: None,
            aspect: None,
            aspect_width: 60.0,
            curvature: None,
            flow: None,
            moisture: None,
            fuzz: 0.05,
            noise: 0.0,
            noise_size: 10.0,
        }
    }
}

fn default_sand_level() -> f64 {
    0.06
}

fn default_grass_level() -> f64 {
    0.5
}

fn default_snow_level() -> f64 {
    0.8
}

fn default_steep_angle() -> f64 {
    40.0
}

fn default_variation() -> f64 {
    0.04
}

impl Default for MaterialFile {
    fn default() -> Self {
        MaterialFile::HeightSlope {
            sand_level: default_sand_level(),
            grass_level: default_grass_level(),
            snow_level: default_snow_level(),
            steep_angle: default_steep_angle(),
            variation: default_variation(),
        }
    }
}

/// `sun`: directional light.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SunFile {
    /// Degrees above the horizon, -90..=90. Default 35.
    pub elevation: f64,
    /// Compass bearing of the sun, degrees clockwise from north (+z) toward
    /// east (+x), any value. Default 210 (south-south-west).
    pub azimuth: f64,
    /// Irradiance on a surface facing the sun, 0..=1000. Default 6.
    pub intensity: f64,
    /// Linear RGB tint, each 0..=1. Default [1, 0.95, 0.88]; with the
    /// `preetham` and `mars` skies the model's own colour multiplies it.
    pub color: [f64; 3],
    /// Apparent diameter of the sun's disc, degrees, 0..=20; shadow rays
    /// sample the disc, so larger suns cast softer shadows. 0 gives hard
    /// shadows. Default 0.53 (the Sun seen from Earth).
    pub angular_diameter: f64,
}

impl Default for SunFile {
    fn default() -> Self {
        SunFile {
            elevation: 35.0,
            azimuth: 210.0,
            intensity: 6.0,
            color: [1.0, 0.95, 0.88],
            angular_diameter: 0.53,
        }
    }
}

/// `sky`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SkyFile {
    /// Blend from `horizon` to `zenith` with the view direction's height;
    /// `ground` below the horizon.
    Gradient {
        /// Linear RGB straight up. Default [0.16, 0.32, 0.72].
        #[serde(default = "default_zenith")]
        zenith: [f64; 3],
        /// Linear RGB at the horizon. Default [0.62, 0.74, 0.9].
        #[serde(default = "default_horizon")]
        horizon: [f64; 3],
        /// Linear RGB below the horizon. Default [0.3, 0.28, 0.25].
        #[serde(default = "default_ground")]
        ground: [f64; 3],
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
    /// Preetham, Shirley and Smits' analytic daylight model; the sun's
    /// colour follows from the same turbidity (red near the horizon).
    Preetham {
        /// Atmospheric turbidity, 1.7..=10 (2 very clear, 3 clear, 6 hazy). Default 3.
        #[serde(default = "default_turbidity")]
        turbidity: f64,
        /// Multiplier on the sky's radiance, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        intensity: f64,
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
    /// Hosek and Wilkie's analytic daylight model (2012): a better fit to
    /// measured skies than Preetham's, with the ground's albedo lighting
    /// the sky from below; the sun's colour as for `preetham`.
    HosekWilkie {
        /// Atmospheric turbidity, 1..=10. Default 3.
        #[serde(default = "default_turbidity")]
        turbidity: f64,
        /// Albedo of the ground under the sky, 0..=1. Default 0.2.
        #[serde(default = "default_ground_albedo")]
        ground_albedo: f64,
        /// Multiplier on the sky's radiance, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        intensity: f64,
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
    /// A physical atmosphere: Rayleigh and Mie scattering and ozone over a
    /// spherical Earth (Hillaire 2020). One model gives the sky, the sun's
    /// colour and the aerial perspective (the air's haze between the eye
    /// and the land), twilight included; with it the fog defaults to none.
    Atmosphere {
        /// Multiplier on the aerosols (Mie haze), 0..=50: 1 a clear day,
        /// 3–5 hazy. Default 1.
        #[serde(default = "default_ambient")]
        haze: f64,
        /// Multiplier on the air's molecules (Rayleigh: the blue), 0..=10.
        /// Default 1.
        #[serde(default = "default_ambient")]
        rayleigh: f64,
        /// Multiplier on the ozone (deepens the blue of twilight), 0..=10.
        /// Default 1.
        #[serde(default = "default_ambient")]
        ozone: f64,
        /// Albedo of the ground under the air, 0..=1. Default 0.3.
        #[serde(default = "default_atmosphere_albedo")]
        ground_albedo: f64,
        /// Height of the terrain's y = 0 above sea level, metres,
        /// 0..=50000. Default 0.
        #[serde(default)]
        altitude: f64,
        /// Whether the air between the eye and the land is drawn. Default
        /// true.
        #[serde(default = "default_true")]
        aerial_perspective: bool,
        /// Multiplier on the sky's radiance, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        intensity: f64,
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
    /// Mars: a butterscotch dusty day sky, and a blue glow around a setting sun.
    Mars {
        /// Multiplier on the sky's radiance, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        intensity: f64,
        /// Strength of the sky's light on surfaces, 0..=100. Default 1.
        #[serde(default = "default_ambient")]
        ambient: f64,
    },
}

fn default_turbidity() -> f64 {
    3.0
}

fn default_atmosphere_albedo() -> f64 {
    0.3
}

fn default_true() -> bool {
    true
}

/// `sky_light`: light from the sky gathered over the hemisphere above each
/// hit, with occlusion rays (ambient occlusion).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SkyLightFile {
    /// Cosine-weighted directions per camera sample, 0..=256. 0 skips the
    /// occlusion rays and lights surfaces with the unoccluded sky. Default 4.
    pub samples: u32,
    /// Occluders farther than this (world units) do not block the sky, > 0.
    /// Default 0.4 × the terrain's longer side (40 for the default 100).
    pub distance: Option<f64>,
}

impl Default for SkyLightFile {
    fn default() -> Self {
        SkyLightFile {
            samples: 4,
            distance: None,
        }
    }
}

fn default_zenith() -> [f64; 3] {
    [0.16, 0.32, 0.72]
}

fn default_horizon() -> [f64; 3] {
    [0.62, 0.74, 0.9]
}

fn default_ground() -> [f64; 3] {
    [0.3, 0.28, 0.25]
}

fn default_ambient() -> f64 {
    1.0
}

impl Default for SkyFile {
    fn default() -> Self {
        SkyFile::Gradient {
            zenith: default_zenith(),
            horizon: default_horizon(),
            ground: default_ground(),
            ambient: default_ambient(),
        }
    }
}

/// `fog`: exponential fog toward the sky colour, thinning with height.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct FogFile {
    /// Extinction per world unit, 0..=10; 0 turns fog off. Default: 0.4
    /// over the terrain's longer side (0.004 for the default 100 units);
    /// with a far field, thin enough that the land's edge is seen through
    /// e⁻³ of haze, and never clearer than air of 50 km visibility at
    /// `units` metres a unit.
    pub density: Option<f64>,
    /// Linear RGB fog colour; default: the sky colour in the view direction
    /// (aerial perspective).
    pub color: Option<[f64; 3]>,
    /// Height fog: the density falls by e for every 1/`height_falloff` units
    /// above `base_height`, 0..=10. 0 (default) is uniform fog.
    pub height_falloff: f64,
    /// Height at which the fog has `density`, world units. Default 0.
    pub base_height: f64,
    /// Share of the fog's extinction that scatters the sun's light toward
    /// the eye, 0..=1: shafts of light through gaps in the clouds and
    /// between peaks, and shadows cast through the haze (one shadow ray per
    /// camera sample). 0 (default) keeps the fog its colour alone.
    pub sun_scatter: f64,
    /// Henyey–Greenstein asymmetry of that scattering, −0.95..=0.95:
    /// toward 1 the shafts glow brightest looking toward the sun. Default
    /// 0.6.
    pub anisotropy: f64,
}

/// A cloud layer: a heterogeneous medium between two altitudes, shaped
/// by noise.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloudFile {
    /// `cumulus` (heaped, flat-based), `stratus` (a grey sheet), `cirrus`
    /// (thin high wisps) or `uniform` (constant density: a slab of haze;
    /// coverage and scale do not apply). Default cumulus.
    #[serde(rename = "type", default)]
    pub kind: CloudKind,
    /// Height of the layer's floor, world units (the planet's curve
    /// lowers it with distance). Default: 1.3 × the terrain's height for
    /// cumulus and stratus, 4 × for cirrus.
    pub altitude: Option<f64>,
    /// Thickness of the layer, world units, > 0. Default: 0.6, 0.25 or
    /// 0.1 × the terrain's height (cumulus, stratus, cirrus).
    pub thickness: Option<f64>,
    /// Share of the sky covered, 0..=1. Default 0.45, 0.85, 0.4.
    pub coverage: Option<f64>,
    /// Extinction per world unit in a cloud's heart, > 0. Default: an
    /// optical thickness of 40, 12 or 1 across the layer.
    pub density: Option<f64>,
    /// Size of one cloud, world units, > 0. Default 2, 4 or 20 × the
    /// thickness.
    pub scale: Option<f64>,
    /// Seed of the layer's noise. Default: the scene's seed plus the
    /// layer's index.
    pub seed: Option<u64>,
    /// Wind [x, z], world units per second: the clouds drift by
    /// `time` × wind (and with an animation's frames). Default [0, 0].
    #[serde(default)]
    pub wind: [f64; 2],
    /// Henyey–Greenstein asymmetry, −0.99..=0.99, of one lobe that
    /// replaces the droplets' two-lobe phase function (0.75 of g 0.8 and
    /// 0.25 of g −0.3): 0 scatters alike in every direction, toward 1
    /// mostly onward. Default: the droplets'.
    pub anisotropy: Option<f64>,
}

/// The types of cloud.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloudKind {
    /// Heaped clouds with flat bases and rounded tops.
    #[default]
    Cumulus,
    /// A grey sheet, nearly unbroken.
    Stratus,
    /// Thin, high wisps.
    Cirrus,
    /// Constant density between the altitudes: a slab of haze.
    Uniform,
}

/// What cloud defaults follow: the terrain and the scene.
#[derive(Debug, Clone, Copy)]
pub struct CloudContext {
    /// The terrain's height, world units.
    pub height: f64,
    /// The scene's seed.
    pub seed: u64,
    /// Seconds of wind.
    pub time: f64,
    /// The planet's radius, world units.
    pub planet: f64,
}

impl CloudFile {
    /// Layer `index` (at `clouds[index]`), checked and baked.
    pub fn check(&self, index: usize, cx: CloudContext) -> Check<super::clouds::Layer> {
        use super::clouds::{Kind, Layer, LayerSpec, Phase};
        let at = |f: &str| format!("clouds[{index}].{f}");
        let (kind, alt, thick, cover, tau, scale) = match self.kind {
            CloudKind::Cumulus => (Kind::Cumulus, 1.3, 0.6, 0.45, 40.0, 2.0),
            CloudKind::Stratus => (Kind::Stratus, 1.3, 0.25, 0.85, 12.0, 4.0),
            CloudKind::Cirrus => (Kind::Cirrus, 4.0, 0.1, 0.4, 1.0, 20.0),
            CloudKind::Uniform => (Kind::Uniform, 1.3, 0.1, 1.0, 1.0, 1.0),
        };
        let h = cx.height.max(1.0);
        let altitude = match self.altitude {
            Some(a) => within(&at("altitude"), a, -1e7, 1e7)?,
            None => alt * h,
        };
        let thickness = match self.thickness {
            Some(t) => above(&at("thickness"), t, 0.0, 1e7)?,
            None => thick * h,
        };
        let coverage = match self.coverage {
            Some(c) => within(&at("coverage"), c, 0.0, 1.0)?,
            None => cover,
        };
        let density = match self.density {
            Some(d) => above(&at("density"), d, 0.0, 1e6)?,
            None => tau / thickness,
        };
        let size = match self.scale {
            Some(s) => above(&at("scale"), s, 0.0, 1e7)?,
            None => scale * thickness,
        };
        let wind = [
            finite(&at("wind[0]"), self.wind[0])?,
            finite(&at("wind[1]"), self.wind[1])?,
        ];
        let phase = match self.anisotropy {
            Some(g) => Phase::henyey_greenstein(within(&at("anisotropy"), g, -0.99, 0.99)? as f32),
            None => Phase::CLOUD,
        };
        Ok(Layer::new(&LayerSpec {
            kind,
            altitude: altitude as f32,
            thickness: thickness as f32,
            coverage: coverage as f32,
            density: density as f32,
            scale: size as f32,
            seed: self
                .seed
                .unwrap_or_else(|| cx.seed.wrapping_add(index as u64)),
            wind: glam::Vec2::new(wind[0] as f32, wind[1] as f32),
            time: cx.time as f32,
            planet: cx.planet as f32,
            phase,
        }))
    }
}

/// A water plane at a height, seen from above.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WaterFile {
    /// Height of the surface, world units. Default, for an island (the
    /// noise generator's `island`): 1 % of the terrain's height above its
    /// flat sea floor; otherwise required.
    pub level: Option<f64>,
    /// Linear RGB colour of deep water, each 0..=1: the fraction of the
    /// light on the surface that the water body sends back where the
    /// bottom is out of sight. Default [0.01, 0.045, 0.05].
    pub color: [f64; 3],
    /// Path length through the water over which light from the bottom
    /// falls to 1/e (Beer–Lambert), world units, > 0. Default 4.
    pub clarity: f64,
    /// Small waves, as a tilt of the surface normal. Default none.
    pub waves: Option<WavesFile>,
    /// Height above the level over which the shore dries (wet ground is
    /// darker), world units, >= 0. Default 1 % of the terrain's height.
    pub shore: Option<f64>,
}

impl Default for WaterFile {
    fn default() -> Self {
        WaterFile {
            level: None,
            color: [0.01, 0.045, 0.05],
            clarity: 4.0,
            waves: None,
            shore: None,
        }
    }
}

/// Waves on the water.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WavesFile {
    /// Height of the waves, world units, 0..=100. Default 0.02.
    pub amplitude: f64,
    /// Wavelength of the longest waves, world units, > 0. Default 2.
    pub scale: f64,
}

impl Default for WavesFile {
    fn default() -> Self {
        WavesFile {
            amplitude: 0.02,
            scale: 2.0,
        }
    }
}

fn default_ground_albedo() -> f64 {
    0.2
}

impl Default for FogFile {
    fn default() -> Self {
        FogFile {
            density: None,
            color: None,
            height_falloff: 0.0,
            base_height: 0.0,
            sun_scatter: 0.0,
            anisotropy: 0.6,
        }
    }
}

fn validate_layers(
    list: &[LayerFile],
    detail: Option<&DetailFile>,
    files: &Files,
) -> Check<Layers> {
    let p = "terrain.material.layers";
    if list.is_empty() || list.len() > MAX_LAYERS {
        return Err(Invalid::new(
            p,
            format!("must list 1 to {MAX_LAYERS} layers, got {}", list.len()),
        ));
    }
    let bump = |at: &str, height: f64, size: f64| -> Check<Bump> {
        Ok(Bump {
            height: within(&format!("{at}.height"), height, 0.0, 1e3)? as f32,
            size: above(&format!("{at}.size"), size, 0.0, 1e7)? as f32,
        })
    };
    let mut layers = Vec::with_capacity(list.len());
    for (k, l) in list.iter().enumerate() {
        let at = format!("{p}[{k}]");
        if k == 0 && l.mask.is_some() {
            return Err(Invalid::new(
                format!("{at}.mask"),
                "the first layer covers all ground and takes no mask",
            ));
        }
        let mask = match &l.mask {
            None => Mask::default(),
            Some(m) => {
                let at = format!("{at}.mask");
                Mask {
                    height: m
                        .height
                        .map(|v| range_pair(&format!("{at}.height"), v, 0.0, 1.0))
                        .transpose()?,
                    slope: m
                        .slope
                        .map(|v| range_pair(&format!("{at}.slope"), v, 0.0, 90.0))
                        .transpose()?,
                    aspect: match m.aspect {
                        Some(a) => Some((
                            within(&format!("{at}.aspect"), a, -360.0, 360.0)?.to_radians() as f32,
                            within(&format!("{at}.aspect_width"), m.aspect_width, 0.0, 180.0)?
                                .to_radians() as f32,
                        )),
                        None => None,
                    },
                    curvature: m
                        .curvature
                        .map(|v| range_pair(&format!("{at}.curvature"), v, -1.0, 1.0))
                        .transpose()?,
                    flow: m
                        .flow
                        .map(|v| range_pair(&format!("{at}.flow"), v, 0.0, 1.0))
                        .transpose()?,
                    moisture: m
                        .moisture
                        .map(|v| range_pair(&format!("{at}.moisture"), v, 0.0, 1.0))
                        .transpose()?,
                    fuzz: within(&format!("{at}.fuzz"), m.fuzz, 0.0, 1.0)? as f32,
                    noise: match within(&format!("{at}.noise"), m.noise, 0.0, 1.0)? {
                        0.0 => None,
                        amount => Some((
                            amount as f32,
                            above(&format!("{at}.noise_size"), m.noise_size, 0.0, 1e7)? as f32,
                        )),
                    },
                }
            }
        };
        layers.push(Layer {
            color: color(&format!("{at}.color"), l.color, 1.0)?,
            texture: match &l.texture {
                Some(t) => Some((
                    texture::cached(files, &format!("{at}.texture"), t)?,
                    above(&format!("{at}.texture_size"), l.texture_size, 0.0, 1e7)? as f32,
                )),
                None => None,
            },
            roughness: l
                .roughness
                .map(|r| within(&format!("{at}.roughness"), r, 0.1, 1.0).map(|r| r as f32))
                .transpose()?,
            bump: l
                .bump
                .as_ref()
                .map(|b| bump(&format!("{at}.bump"), b.height, b.size))
                .transpose()?,
            mask,
        });
    }
    let detail = detail
        .map(|d| {
            Ok::<_, Invalid>(Detail {
                bump: bump("terrain.material.detail", d.height, d.size)?,
                variation: within("terrain.material.detail.variation", d.variation, 0.0, 1.0)?
                    as f32,
            })
        })
        .transpose()?;
    Ok(Layers {
        layers,
        detail,
        seed: 0x1A7E,
    })
}

/// Where the physical atmosphere is seen from.
#[derive(Debug, Clone, Copy)]
pub struct Eye {
    /// The camera's height, world units.
    pub height: f64,
    /// Metres per world unit.
    pub units: f64,
    /// The farthest the land is seen, world units.
    pub reach: f64,
}

/// The sun and sky of `f` and `sky` (the sky's physical models follow the
/// sun; the atmosphere is seen from `eye`), checked.
pub fn check_sun_and_sky(f: &SunFile, sky: &SkyFile, eye: Eye) -> Check<(Sun, Sky)> {
    let elevation = within("sun.elevation", f.elevation, -90.0, 90.0)?.to_radians();
    let azimuth = finite("sun.azimuth", f.azimuth)?.to_radians();
    let intensity = within("sun.intensity", f.intensity, 0.0, 1000.0)? as f32;
    let diameter = within("sun.angular_diameter", f.angular_diameter, 0.0, 20.0)?;
    let direction = Sun::direction_from(elevation as f32, azimuth as f32);
    let tint = color("sun.color", f.color, 1.0)?;
    let (sky, model_tint) = match *sky {
        SkyFile::Gradient {
            zenith,
            horizon,
            ground,
            ambient,
        } => (
            Sky::Gradient {
                zenith: color("sky.zenith", zenith, 100.0)?,
                horizon: color("sky.horizon", horizon, 100.0)?,
                ground: color("sky.ground", ground, 100.0)?,
                ambient: within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            },
            Vec3::ONE,
        ),
        SkyFile::Preetham {
            turbidity,
            intensity,
            ambient,
        } => {
            let t = within("sky.turbidity", turbidity, 1.7, 10.0)?;
            let sky = Preetham::new(
                direction,
                t,
                within("sky.intensity", intensity, 0.0, 100.0)?,
                within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            );
            (Sky::Preetham(sky), sun_transmittance(elevation, t))
        }
        SkyFile::HosekWilkie {
            turbidity,
            ground_albedo,
            intensity,
            ambient,
        } => {
            let t = within("sky.turbidity", turbidity, 1.0, 10.0)?;
            let sky = HosekWilkie::new(
                direction,
                t as f32,
                within("sky.ground_albedo", ground_albedo, 0.0, 1.0)? as f32,
                within("sky.intensity", intensity, 0.0, 100.0)? as f32,
                within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            );
            (
                Sky::HosekWilkie(sky),
                sun_transmittance(elevation, t.max(1.7)),
            )
        }
        SkyFile::Atmosphere {
            haze,
            rayleigh,
            ozone,
            ground_albedo,
            altitude,
            aerial_perspective,
            intensity: sky_intensity,
            ambient,
        } => {
            use super::atmosphere::{Air, Atmosphere};
            let air = Air {
                rayleigh: within("sky.rayleigh", rayleigh, 0.0, 10.0)?,
                mie: within("sky.haze", haze, 0.0, 50.0)?,
                ozone: within("sky.ozone", ozone, 0.0, 10.0)?,
                ground_albedo: within("sky.ground_albedo", ground_albedo, 0.0, 1.0)?,
                ..Air::default()
            };
            let altitude = within("sky.altitude", altitude, 0.0, 50_000.0)?;
            let sky_intensity = within("sky.intensity", sky_intensity, 0.0, 100.0)? as f32;
            let eye_altitude = (altitude + eye.height.max(0.0) * eye.units).min(50_000.0);
            let reach = if aerial_perspective {
                (eye.reach * eye.units).max(1.0)
            } else {
                1.0
            };
            let model = Atmosphere::new(
                air,
                direction.as_dvec3(),
                eye_altitude,
                if aerial_perspective { eye.units } else { 0.0 },
                reach,
            );
            let through = model.sun_transmittance();
            let sky = super::sky::AtmosphereSky {
                model,
                scale: tint * intensity * sky_intensity,
                ambient: within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            };
            (Sky::Atmosphere(std::sync::Arc::new(sky)), through)
        }
        SkyFile::Mars { intensity, ambient } => (
            Sky::Mars(Mars {
                sun: direction,
                intensity: within("sky.intensity", intensity, 0.0, 100.0)? as f32,
                ambient: within("sky.ambient", ambient, 0.0, 100.0)? as f32,
            }),
            Mars::sun_tint(elevation),
        ),
    };
    let sun = Sun {
        direction,
        radiance: tint * model_tint * intensity,
        angular_radius: (diameter / 2.0).to_radians() as f32,
    };
    Ok((sun, sky))
}

/// The relief a water plane lies in: what its defaults follow.
#[derive(Debug, Clone, Copy)]
pub struct Shore {
    /// The terrain is an island (its sea level is the default level).
    pub island: bool,
    /// The terrain's relief, world units.
    pub height: f64,
    /// The planet's radius, world units, if the land curves.
    pub planet_radius: Option<f64>,
}

impl WaterFile {
    /// The water over a terrain shaped as `terrain` says, its waves seeded
    /// from the scene's `seed`.
    /// With `rivers`, a water without a level (and not an island's) is
    /// the rivers' and lakes' look only, with no sea.
    pub fn check(
        &self,
        terrain: Shore,
        seed: u64,
        rivers: Option<&crate::terrain::file::RiversFile>,
    ) -> Check<Water> {
        let w = self;
        let island = terrain.island;
        let level =
            match w.level {
                Some(level) => within("water.level", level, -1e7, 1e7)? as f32,
                None if island => (0.01 * terrain.height) as f32,
                None if rivers.is_some() => f32::NEG_INFINITY,
                None => return Err(Invalid::new(
                    "water",
                    "needs a \"level\" (world units) unless the terrain is an island or has rivers"
                        .to_string(),
                )),
            };
        Ok(Water {
            level,
            color: color("water.color", w.color, 1.0)?,
            clarity: above("water.clarity", w.clarity, 0.0, 1e7)? as f32,
            waves: w
                .waves
                .as_ref()
                .map(|v| {
                    Ok::<_, Invalid>(Waves {
                        amplitude: within("water.waves.amplitude", v.amplitude, 0.0, 100.0)? as f32,
                        scale: above("water.waves.scale", v.scale, 0.0, 1e7)? as f32,
                    })
                })
                .transpose()?,
            shore: match w.shore {
                Some(s) => within("water.shore", s, 0.0, 1e7)? as f32,
                None => (0.01 * terrain.height) as f32,
            },
            seed: crate::hash::hash3(seed, 0x3A7E, 0),
            planet_radius: terrain.planet_radius,
            white_water: match rivers {
                Some(r) => r.white_water()? as f32,
                None => f32::INFINITY,
            },
        })
    }
}

impl MaterialFile {
    /// The terrain's material, its levels in world units for a terrain of
    /// `height` world units, and its layers (textures read through
    /// `files`) where it is layered.
    pub fn check(&self, height: f64, files: &Files) -> Check<(Material, Option<Arc<Layers>>)> {
        let mut layers = None;
        let material = match self {
            MaterialFile::Layers {
                layers: list,
                detail,
            } => {
                layers = Some(Arc::new(validate_layers(list, detail.as_ref(), files)?));
                Material::Layers
            }
            &MaterialFile::HeightSlope {
                sand_level,
                grass_level,
                snow_level,
                steep_angle,
                variation,
            } => {
                let p = "terrain.material";
                let sand = within(&format!("{p}.sand_level"), sand_level, 0.0, 1.0)?;
                let grass = within(&format!("{p}.grass_level"), grass_level, sand, 1.0)?;
                let snow = within(&format!("{p}.snow_level"), snow_level, grass, 1.0)?;
                let steep = within(&format!("{p}.steep_angle"), steep_angle, 0.0, 90.0)?;
                Material::HeightSlope {
                    sand_top: (sand * height) as f32,
                    grass_top: (grass * height) as f32,
                    snow_bottom: (snow * height) as f32,
                    steep_cos: steep.to_radians().cos() as f32,
                    blend: (0.02 * height) as f32,
                    variation: within(&format!("{p}.variation"), variation, 0.0, 0.5)? as f32,
                }
            }
            MaterialFile::Albedo { color: c } => {
                Material::Albedo(color("terrain.material.color", *c, 1.0)?)
            }
        };
        Ok((material, layers))
    }
}

impl FogFile {
    /// The fog, its density `density` where the file gives none.
    pub fn check(&self, density: f64) -> Check<Fog> {
        Ok(Fog {
            density: match self.density {
                Some(d) => within("fog.density", d, 0.0, 10.0)?,
                None => density,
            } as f32,
            color: self
                .color
                .map(|c| color("fog.color", c, 100.0))
                .transpose()?,
            height_falloff: within("fog.height_falloff", self.height_falloff, 0.0, 10.0)? as f32,
            base_height: within("fog.base_height", self.base_height, -1e7, 1e7)? as f32,
            sun_scatter: within("fog.sun_scatter", self.sun_scatter, 0.0, 1.0)? as f32,
            anisotropy: within("fog.anisotropy", self.anisotropy, -0.95, 0.95)? as f32,
        })
    }
}

impl SkyLightFile {
    /// The sky light, its occlusion reaching `distance` where the file
    /// gives none.
    pub fn check(&self, distance: f64) -> Check<SkyLight> {
        Ok(SkyLight {
            samples: count("sky_light.samples", self.samples, 0, 256)?,
            distance: match self.distance {
                Some(d) => above("sky_light.distance", d, 0.0, 1e7)?,
                None => distance,
            } as f32,
        })
    }
}
