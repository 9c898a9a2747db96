//! Motion: keyframed tracks and the sun's path over a day, evaluated at a
//! frame. Positions follow centripetal Catmull-Rom splines through their
//! keys (no cusps or loops between close keys, Yuksel et al. 2011);
//! scalars ease in and out between keys (smoothstep); before the first key
//! and after the last the value holds. Pure functions of the keys and the
//! frame: a frame is the same whether rendered alone or in a sequence.

use glam::DVec3;

pub mod file;
pub use file::AnimationFile;

/// A checked `animation`.
#[derive(Debug, Clone, PartialEq)]
pub struct Animation {
    /// Frames, numbered from 0.
    pub frames: u32,
    /// Frames per second.
    pub fps: f64,
    /// The camera's keys; None keeps the scene's camera.
    pub camera: Option<CameraTrack>,
    /// The sun's path; None keeps the scene's sun.
    pub sun: Option<SunPath>,
    /// Least height of the eye above the terrain.
    pub clearance: Option<f64>,
}

/// Camera keys.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraTrack {
    /// Eye positions.
    pub position: Vec<Key<DVec3>>,
    /// Points looked at.
    pub look_at: Vec<Key<DVec3>>,
    /// Fields of view, degrees (may be empty).
    pub fov: Vec<Key<f64>>,
    /// Up directions (may be empty), eased componentwise ([`eased`]) and
    /// normalised.
    pub up: Vec<Key<DVec3>>,
}

/// How the sun moves.
#[derive(Debug, Clone, PartialEq)]
pub enum SunPath {
    /// Elevation and azimuth keys, degrees.
    Keys {
        /// Elevations.
        elevation: Vec<Key<f64>>,
        /// Azimuths.
        azimuth: Vec<Key<f64>>,
    },
    /// A day's path ([`sun_position`]), the hour linear in the frame.
    Day {
        /// Degrees north.
        latitude: f64,
        /// Day of the year.
        day: f64,
        /// Hour at frame 0.
        start_hour: f64,
        /// Hour at the last frame.
        end_hour: f64,
    },
}

/// What the animation says at a frame; None keeps the scene's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Eye.
    pub position: Option<DVec3>,
    /// Point looked at.
    pub look_at: Option<DVec3>,
    /// Field of view, degrees.
    pub fov: Option<f64>,
    /// The image's up direction.
    pub up: Option<DVec3>,
    /// Sun (elevation, azimuth), degrees.
    pub sun: Option<(f64, f64)>,
    /// Seconds since frame 0: frame / fps.
    pub time: f64,
}

impl Animation {
    /// The pose at frame `frame`.
    pub fn at(&self, frame: u32) -> Pose {
        let f = frame as f64;
        let camera = self.camera.as_ref();
        Pose {
            time: f / self.fps,
            position: camera.map(|c| point(&c.position, f)),
            look_at: camera.map(|c| point(&c.look_at, f)),
            fov: camera
                .filter(|c| !c.fov.is_empty())
                .map(|c| scalar(&c.fov, f)),
            up: camera
                .filter(|c| !c.up.is_empty())
                .map(|c| eased(&c.up, f).normalize_or(DVec3::Y)),
            sun: self.sun.as_ref().map(|s| match s {
                SunPath::Keys { elevation, azimuth } => (scalar(elevation, f), scalar(azimuth, f)),
                SunPath::Day {
                    latitude,
                    day,
                    start_hour,
                    end_hour,
                } => {
                    let u = if self.frames > 1 {
                        f / (self.frames - 1) as f64
                    } else {
                        0.0
                    };
                    sun_position(*latitude, *day, start_hour + (end_hour - start_hour) * u)
                }
            }),
        }
    }
}

/// A key: a value at a frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key<T> {
    /// The frame (keys are in increasing order).
    pub frame: f64,
    /// The value there.
    pub value: T,
}

/// The segment of `keys` around `frame`: (index of its first key, the
/// fraction of the way to the next), or None outside the keys (holding
/// the first or last).
fn segment<T>(keys: &[Key<T>], frame: f64) -> Result<(usize, f64), usize> {
    match keys {
        [] => unreachable!("a track has keys"),
        [_] => Err(0),
        _ if frame <= keys[0].frame => Err(0),
        _ if frame >= keys[keys.len() - 1].frame => Err(keys.len() - 1),
        _ => {
            let i = keys.partition_point(|k| k.frame <= frame) - 1;
            let (a, b) = (keys[i].frame, keys[i + 1].frame);
            Ok((i, (frame - a) / (b - a)))
        }
    }
}

/// Hermite smoothstep: 0 at 0, 1 at 1, flat at both.
pub fn ease(u: f64) -> f64 {
    let u = u.clamp(0.0, 1.0);
    u * u * (3.0 - 2.0 * u)
}

/// A scalar track at `frame`, eased between keys.
pub fn scalar(keys: &[Key<f64>], frame: f64) -> f64 {
    eased(keys, frame)
}

/// A track of scalars or vectors at `frame`, eased between keys
/// (componentwise for vectors).
pub fn eased<T>(keys: &[Key<T>], frame: f64) -> T
where
    T: Copy
        + std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<f64, Output = T>,
{
    match segment(keys, frame) {
        Err(k) => keys[k].value,
        Ok((i, u)) => {
            let (a, b) = (keys[i].value, keys[i + 1].value);
            a + (b - a) * ease(u)
        }
    }
}

/// A point track at `frame`: the centripetal Catmull-Rom spline through
/// the keys (the ends extended by mirroring their neighbours).
pub fn point(keys: &[Key<DVec3>], frame: f64) -> DVec3 {
    let (i, u) = match segment(keys, frame) {
        Err(k) => return keys[k].value,
        Ok(s) => s,
    };
    let p1 = keys[i].value;
    let p2 = keys[i + 1].value;
    let p0 = if i > 0 {
        keys[i - 1].value
    } else {
        2.0 * p1 - p2
    };
    let p3 = keys.get(i + 2).map_or(2.0 * p2 - p1, |k| k.value);
    catmull_rom([p0, p1, p2, p3], u)
}

/// The centripetal (α = ½) Catmull-Rom segment from `p[1]` to `p[2]` at
/// `u` ∈ [0, 1], in the Barry–Goldman pyramid form.
pub fn catmull_rom(p: [DVec3; 4], u: f64) -> DVec3 {
    // Knot spacing: the square root of the chord lengths, kept off zero
    // so that repeated points do not divide by it.
    let knot = |a: DVec3, b: DVec3| a.distance(b).sqrt().max(1e-9);
    let t0 = 0.0;
    let t1 = t0 + knot(p[0], p[1]);
    let t2 = t1 + knot(p[1], p[2]);
    let t3 = t2 + knot(p[2], p[3]);
    let t = t1 + u * (t2 - t1);
    let lerp = |a: DVec3, b: DVec3, ta: f64, tb: f64| {
        a * ((tb - t) / (tb - ta)) + b * ((t - ta) / (tb - ta))
    };
    let a1 = lerp(p[0], p[1], t0, t1);
    let a2 = lerp(p[1], p[2], t1, t2);
    let a3 = lerp(p[2], p[3], t2, t3);
    let b1 = lerp(a1, a2, t0, t2);
    let b2 = lerp(a2, a3, t1, t3);
    lerp(b1, b2, t1, t2)
}

/// The sun's place in the sky, degrees: (elevation above the horizon,
/// azimuth clockwise from north), at `latitude` (degrees, north
/// positive), day `day` of the year (1 = 1 January) and local solar time
/// `hour` (12 = solar noon). Declination from Cooper's formula,
/// δ = 23.44° · sin(360° · (284 + day) / 365); hour angle 15° an hour.
pub fn sun_position(latitude: f64, day: f64, hour: f64) -> (f64, f64) {
    let phi = latitude.to_radians();
    let delta = (23.44f64).to_radians() * (std::f64::consts::TAU * (284.0 + day) / 365.0).sin();
    let h = (15.0 * (hour - 12.0)).to_radians();
    let sin_el = phi.sin() * delta.sin() + phi.cos() * delta.cos() * h.cos();
    let elevation = sin_el.clamp(-1.0, 1.0).asin();
    // Azimuth from the south, west positive; then from the north.
    let from_south = h.sin().atan2(h.cos() * phi.sin() - delta.tan() * phi.cos());
    let azimuth = (from_south.to_degrees() + 180.0).rem_euclid(360.0);
    (elevation.to_degrees(), azimuth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys<T: Copy>(v: &[(f64, T)]) -> Vec<Key<T>> {
        v.iter()
            .map(|&(frame, value)| Key { frame, value })
            .collect()
    }

    #[test]
    fn scalars_hold_outside_and_ease_between_keys() {
        let k = keys(&[(10.0, 1.0), (20.0, 3.0), (40.0, -1.0)]);
        assert_eq!(scalar(&k, 0.0), 1.0);
        assert_eq!(scalar(&k, 10.0), 1.0);
        assert_eq!(scalar(&k, 15.0), 2.0, "halfway eases to the middle");
        assert_eq!(scalar(&k, 20.0), 3.0);
        assert_eq!(scalar(&k, 12.5), 1.0 + 2.0 * 0.15625);
        assert_eq!(scalar(&k, 99.0), -1.0);
        assert_eq!(scalar(&keys(&[(3.0, 7.0)]), 50.0), 7.0);
    }

    #[test]
    fn points_pass_through_their_keys_and_lines_stay_lines() {
        let k = keys(&[
            (0.0, DVec3::new(0.0, 0.0, 0.0)),
            (10.0, DVec3::new(10.0, 0.0, 0.0)),
            (20.0, DVec3::new(10.0, 5.0, 10.0)),
            (30.0, DVec3::new(-4.0, 2.0, 3.0)),
        ]);
        for key in &k {
            assert!(point(&k, key.frame).distance(key.value) < 1e-12);
        }
        // Evenly spaced points on a line: the spline is that line, at the
        // even spacing.
        let line = keys(&[
            (0.0, DVec3::ZERO),
            (1.0, DVec3::X),
            (2.0, 2.0 * DVec3::X),
            (3.0, 3.0 * DVec3::X),
        ]);
        for f in [0.25, 1.5, 2.75] {
            assert!(point(&line, f).distance(f * DVec3::X) < 1e-12, "{f}");
        }
        // Repeated keys (a pause) neither divide by zero nor move.
        let pause = keys(&[(0.0, DVec3::ONE), (5.0, DVec3::ONE), (9.0, DVec3::ZERO)]);
        assert!(point(&pause, 2.5).distance(DVec3::ONE) < 1e-9);
        assert!(point(&pause, 7.0).is_finite());
    }

    /// Centripetal parameterisation keeps a sharp turn between close keys
    /// from overshooting into a loop: the curve stays within the keys'
    /// bounding box grown by a fraction of the short chord.
    #[test]
    fn close_keys_do_not_loop() {
        let k = keys(&[
            (0.0, DVec3::new(0.0, 0.0, 0.0)),
            (1.0, DVec3::new(10.0, 0.0, 0.0)),
            (2.0, DVec3::new(10.2, 0.0, 0.2)),
            (3.0, DVec3::new(0.2, 0.0, 0.2)),
        ]);
        for s in 0..=100 {
            let p = point(&k, 1.0 + s as f64 / 100.0);
            assert!(p.x < 10.35 && p.x > 9.9 && p.z > -0.1 && p.z < 0.35, "{p}");
        }
    }

    /// A roll from up +y to up +x: halfway, the eased components are equal
    /// and the direction is their normalised sum.
    #[test]
    fn up_keys_roll_the_camera() {
        let animation = Animation {
            frames: 11,
            fps: 24.0,
            camera: Some(CameraTrack {
                position: keys(&[(0.0, DVec3::ZERO), (10.0, DVec3::ZERO)]),
                look_at: keys(&[(0.0, DVec3::Z), (10.0, DVec3::Z)]),
                fov: Vec::new(),
                up: keys(&[(0.0, DVec3::Y), (10.0, DVec3::X)]),
            }),
            sun: None,
            clearance: None,
        };
        let half = std::f64::consts::FRAC_1_SQRT_2;
        assert!(
            animation
                .at(5)
                .up
                .unwrap()
                .distance(DVec3::new(half, half, 0.0))
                < 1e-12
        );
        assert_eq!(animation.at(0).up, Some(DVec3::Y));
        assert_eq!(animation.at(10).up, Some(DVec3::X));
        assert_eq!(animation.at(3).fov, None);
    }

    #[test]
    fn the_sun_at_noon_stands_where_the_declination_says() {
        // Equinox (declination 0: day 81), equator, noon: overhead.
        let (el, _) = sun_position(0.0, 81.0, 12.0);
        assert!((el - 90.0).abs() < 0.02, "{el}");
        // At 46° N on the solstice (day 172, δ = 23.44° within 0.01°) the
        // noon sun is 90 − 46 + 23.44 high, due south.
        let delta = 23.44 * (std::f64::consts::TAU * (284.0 + 172.0) / 365.0).sin();
        let (el, az) = sun_position(46.0, 172.0, 12.0);
        assert!((el - (90.0 - 46.0 + delta)).abs() < 1e-9, "{el}");
        assert!((az - 180.0).abs() < 1e-9, "{az}");
        // Morning sun in the east half, evening in the west, mirrored.
        let (em, am) = sun_position(46.0, 172.0, 8.0);
        let (ee, ae) = sun_position(46.0, 172.0, 16.0);
        assert!((em - ee).abs() < 1e-9 && (am + ae - 360.0).abs() < 1e-9);
        assert!(am > 0.0 && am < 180.0, "{am}");
        // Midnight in winter: below the horizon.
        assert!(sun_position(46.0, 355.0, 0.0).0 < -40.0);
    }
}
