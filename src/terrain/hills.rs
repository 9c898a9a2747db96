//! Hills (circles): each iteration raises the samples inside a random
//! circle by a·(r² − d²), more near the centre.
//!
//! ```json
//! "generator": { "type": "hills", "iterations": 400, "radius": [0.02, 0.12],
//!                "dropoff": "linear", "min_amplitude": 0.1, "floor": 0.2,
//!                "reset": [80, 160] }
//! ```
//!
//! Centres are uniform over the grid, radii uniform in `radius` (fractions
//! of the mean grid side), r and d in samples. The amplitude a follows the
//! fault-line dropoffs from 1 down to `min_amplitude`; with `reset` the
//! schedule starts over after a random number of iterations drawn from the
//! range, giving big hills again among the small ones. Afterwards the heights
//! are normalised to [0, 1] and everything below `floor` is raised to it
//! (flat plains between the hills).

use serde::Deserialize;

use super::fault_line::Dropoff;
use crate::hash::unit_f64;

/// Parameters of the hills generator.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Hills {
    /// Number of hills, 1..=100000. Default 400.
    pub iterations: u32,
    /// Radius range [min, max] as fractions of the mean grid side, 0 < min <= max <= 1.
    /// Default [0.02, 0.12].
    pub radius: [f64; 2],
    /// How the amplitude shrinks over the iterations. Default `linear`.
    pub dropoff: Dropoff,
    /// Floor of the amplitude for `linear` and `quadratic`, 0..=1. Default 0.1.
    pub min_amplitude: f64,
    /// Heights below this fraction of the range become flat, 0..=1. Default 0.
    pub floor: f64,
    /// Restart the dropoff after a random number of iterations in [min, max]
    /// (each 1..=iterations); none to never restart. Default none.
    pub reset: Option<[u32; 2]>,
}

impl Default for Hills {
    fn default() -> Self {
        Hills {
            iterations: 400,
            radius: [0.02, 0.12],
            dropoff: Dropoff::Linear,
            min_amplitude: 0.1,
            floor: 0.0,
            reset: None,
        }
    }
}

const STREAM: u64 = 0x41_00;

/// The amplitude of each iteration: the dropoff from 1 to `min_amplitude`
/// over a cycle, restarting after each random cycle length when `reset` is set.
pub fn amplitudes(p: &Hills, seed: u64) -> Vec<f64> {
    let mut out = Vec::with_capacity(p.iterations as usize);
    let mut cycle = 0u64;
    while out.len() < p.iterations as usize {
        let len = match p.reset {
            Some([a, b]) => a + (unit_f64(seed, STREAM + 9, cycle) * (b - a + 1) as f64) as u32,
            None => p.iterations,
        }
        .clamp(1, p.iterations);
        for k in 0..len {
            if out.len() == p.iterations as usize {
                break;
            }
            out.push(p.dropoff.displacement(1.0, p.min_amplitude, k, len));
        }
        cycle += 1;
    }
    out
}

/// Generates hills heights (normalised to [0, 1] with the floor applied), `w` × `h`.
pub fn generate(p: &Hills, w: usize, h: usize, seed: u64) -> Vec<f64> {
    use rayon::prelude::*;
    let side = (w + h) as f64 / 2.0;
    // Each hill: amplitude, centre, radius and the rows and columns it covers.
    let hills: Vec<(f64, f64, f64, f64, [usize; 4])> = amplitudes(p, seed)
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            let u = |k: u64| unit_f64(seed, STREAM + k, i as u64);
            let cx = u(0) * (w - 1) as f64;
            let cz = u(1) * (h - 1) as f64;
            let r = (p.radius[0] + (p.radius[1] - p.radius[0]) * u(2)) * side;
            let covers = [
                (cz - r).floor().max(0.0) as usize,
                ((cz + r).ceil() as usize).min(h - 1),
                (cx - r).floor().max(0.0) as usize,
                ((cx + r).ceil() as usize).min(w - 1),
            ];
            (a, cx, cz, r, covers)
        })
        .collect();
    // Rows in parallel; each sample adds its hills in their order, as one
    // hill after the other would.
    let mut data = vec![0.0f64; w * h];
    data.par_chunks_mut(w).enumerate().for_each(|(row, out)| {
        for &(a, cx, cz, r, [i0, i1, j0, j1]) in &hills {
            if row < i0 || row > i1 {
                continue;
            }
            for (col, v) in out.iter_mut().enumerate().take(j1 + 1).skip(j0) {
                let (dx, dz) = (col as f64 - cx, row as f64 - cz);
                let d2 = dx * dx + dz * dz;
                if d2 < r * r {
                    *v += a * (r * r - d2);
                }
            }
        }
    });
    super::heightmap::normalise(&mut data, 1.0);
    for v in data.iter_mut() {
        *v = v.max(p.floor);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hill_is_a_paraboloid_centred_on_its_draw() {
        let p = Hills {
            iterations: 1,
            radius: [0.3, 0.3],
            ..Hills::default()
        };
        let d = generate(&p, 41, 41, 5);
        // The maximum is where r² − d² is largest: next to the centre.
        let (imax, _) = d
            .iter()
            .enumerate()
            .fold((0, f64::MIN), |b, (k, &v)| if v > b.1 { (k, v) } else { b });
        let cx = unit_f64(5, STREAM, 0) * 40.0;
        let cz = unit_f64(5, STREAM + 1, 0) * 40.0;
        assert!(((imax % 41) as f64 - cx).abs() <= 1.0 && ((imax / 41) as f64 - cz).abs() <= 1.0);
        // Outside the radius (12.3 samples) the height stays 0.
        let far =
            |row: usize, col: usize| ((col as f64 - cx).powi(2) + (row as f64 - cz).powi(2)).sqrt();
        for row in 0..41 {
            for col in 0..41 {
                if far(row, col) > 12.4 {
                    assert_eq!(d[row * 41 + col], 0.0);
                }
            }
        }
    }

    #[test]
    fn floor_flattens_the_low_ground() {
        let p = Hills {
            floor: 0.3,
            ..Hills::default()
        };
        let d = generate(&p, 64, 64, 1);
        let flat = d.iter().filter(|&&v| v == 0.3).count();
        assert!(flat > 64 * 64 / 10, "{flat}");
        assert!(d.iter().all(|&v| v >= 0.3));
    }

    #[test]
    fn amplitude_drops_off_and_resets() {
        let base = Hills {
            iterations: 300,
            dropoff: Dropoff::Quadratic,
            min_amplitude: 0.0,
            ..Hills::default()
        };
        let a = amplitudes(&base, 3);
        assert_eq!(a.len(), 300);
        assert_eq!(a[0], 1.0);
        assert!(a.windows(2).all(|w| w[1] <= w[0]), "no reset: never grows");
        let reset = amplitudes(
            &Hills {
                reset: Some([100, 100]),
                ..base.clone()
            },
            3,
        );
        assert_eq!(
            (reset[0], reset[100], reset[200]),
            (1.0, 1.0, 1.0),
            "restarts every 100"
        );
        assert!(reset[99] < 0.001);
        let random = amplitudes(
            &Hills {
                reset: Some([20, 80]),
                ..base
            },
            3,
        );
        let restarts = random.iter().filter(|&&v| v == 1.0).count();
        assert!(
            (4..=15).contains(&restarts),
            "{restarts} cycles of 20–80 in 300"
        );
    }
}
