//! Large changes in two or three rounds: the runner's A/A floor already measured how much a
//! pair scatters on this machine, so a change far outside that scatter needs no spread of its
//! own before it can be called. The session's t-mixture sequence must learn the spread from its
//! own pairs and is the whole line while `ν·ln G ≤ 2 ln(1/α)` (the first 5 pairs at the
//! defaults), whatever the effect. This is a second confidence sequence, with the spread known:
//! Robbins' normal mixture at a bound on the spread taken from the floor (its χ² upper bound,
//! or the session's own spread when that is larger), spending a share of alpha; the session's
//! sequence keeps the rest, so both hold at once with probability 1 − alpha and their
//! intersection is valid (docs/statistics.md §4d).

use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::floor::NoiseFloor;
use crate::interval::Interval;

/// Share of alpha the floor's sequence spends; the session's own keeps the rest.
pub const FLOOR_ALPHA_SHARE: f64 = 0.1;

/// Rounds the floor's mixture is tuned for: it is tightest where a large change is decided.
pub const FLOOR_TUNED_ROUNDS: f64 = 2.0;

/// Degrees of freedom a floor needs before its spread bounds anything: fewer A/A pairs give an
/// upper bound too loose to help.
pub const MIN_FLOOR_DOF: usize = 8;

/// The spread one pair has at most on this runner, by the floor: `s_aa·√(ν/χ²_ν(alpha))`, the
/// one-sided upper confidence bound at `alpha` with `ν` = A/A pairs − sessions. `None` for a
/// floor with fewer than [`MIN_FLOOR_DOF`] degrees of freedom, or none at all.
pub fn spread_upper(floor: &NoiseFloor, alpha: f64) -> Option<f64> {
    let dof = floor.pairs.checked_sub(floor.sessions)?;
    if dof < MIN_FLOOR_DOF || !(floor.s_aa.is_finite() && floor.s_aa > 0.0) {
        return None;
    }
    let chi = ChiSquared::new(dof as f64).ok()?.inverse_cdf(alpha);
    (chi > 0.0).then(|| floor.s_aa * (dof as f64 / chi).sqrt())
}

/// Half-width of the known-spread normal mixture at `n` pairs of spread `sd`, tuned for
/// [`FLOOR_TUNED_ROUNDS`] (Robbins 1970; Howard et al. 2021, eq. 14):
/// `(sd/n)·√((n + m)·ln((n + m)/(m·alpha²)))`.
pub fn half_width(sd: f64, n: u64, alpha: f64) -> f64 {
    let (n, m) = (n as f64, FLOOR_TUNED_ROUNDS);
    sd / n * ((n + m) * ((n + m) / (m * alpha * alpha)).ln()).sqrt()
}

/// Its e-value against "no change" after the pairs summing to `sum`: the mixture likelihood
/// ratio `√(m/(n+m))·exp(sum²/(2·sd²·(n+m)))`.
pub fn e_value(sum: f64, sd: f64, n: u64) -> f64 {
    let (n, m) = (n as f64, FLOOR_TUNED_ROUNDS);
    let ln = 0.5 * (m / (n + m)).ln() + sum * sum / (2.0 * sd * sd * (n + m));
    ln.exp().min(crate::SATURATED)
}

/// The floor's sequence over the log-ratios `d` (round order): the running intersection from
/// the second pair on, each round at the larger of `spread` and the session's own sd so far,
/// and its e-value at the last pair. `None` with fewer than two pairs.
pub fn floor_sequence(d: &[f64], spread: f64, alpha: f64) -> Option<(Interval, f64)> {
    if d.len() < 2 {
        return None;
    }
    let mut running = Interval::WHOLE_LINE;
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    let mut last_e = 1.0;
    for (i, x) in d.iter().enumerate() {
        sum += x;
        sum_sq += x * x;
        let n = (i + 1) as u64;
        if n < 2 {
            continue;
        }
        let nf = n as f64;
        let mean = sum / nf;
        let own = ((sum_sq - nf * mean * mean) / (nf - 1.0)).max(0.0).sqrt();
        let sd = spread.max(own);
        let half = half_width(sd, n, alpha);
        running = Interval {
            lower: running.lower.max(mean - half),
            upper: running.upper.min(mean + half),
        };
        last_e = e_value(sum, sd, n);
    }
    Some((running, last_e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor(s_aa: f64, pairs: usize, sessions: usize) -> NoiseFloor {
        NoiseFloor {
            s_aa,
            tau_b: 0.0,
            sessions,
            pairs,
            tau_layout: 0.0,
        }
    }

    #[test]
    fn the_floor_bounds_the_spread_from_above_by_its_degrees_of_freedom() {
        let few = spread_upper(&floor(0.03, 10, 1), 0.005).unwrap();
        let many = spread_upper(&floor(0.03, 200, 5), 0.005).unwrap();
        assert!(few > many && many > 0.03, "{few} {many}");
        assert!(spread_upper(&floor(0.03, 6, 1), 0.005).is_none());
    }

    #[test]
    fn a_doubling_is_outside_a_3_percent_floor_after_two_rounds() {
        let d = [std::f64::consts::LN_2 + 0.02, std::f64::consts::LN_2 - 0.03];
        let (iv, e) = floor_sequence(&d, 0.04, 0.005).unwrap();
        assert!(iv.lower > 0.5, "{iv:?}");
        assert!(e > 1.0 / 0.005, "{e}");
        // The session's own spread, when larger, is the one used: two wild pairs decide nothing.
        let (wide, _) = floor_sequence(&[0.9, -0.5], 0.04, 0.005).unwrap();
        assert!(wide.contains(0.0), "{wide:?}");
    }
}
