//! A runner's noise floor from A/A sessions (the same commit on both sides): how much the
//! log-ratio scatters within a session (`s_aa`) and how far whole sessions drift from zero
//! (`tau_b`). The floor sets the margin M below which a difference means nothing on this runner.

use statrs::distribution::{ChiSquared, ContinuousCDF};

use crate::error::{StatsError, check_alpha};
use crate::paired::{MeanSd, mean_sd, validate_log_ratios};

/// Salted builds (layout sessions) needed before the layout spread counts at all. With fewer,
/// the lower end of its interval is most often 0 and a single unlucky pair of builds decides
/// the estimate (docs/statistics.md §3, `examples/layout_floor.rs`).
pub const MIN_LAYOUT_SESSIONS: usize = 8;

/// The spread code layout alone brings (`tau_layout`, log scale) from salted A/A sessions, with
/// an interval: M widens by its lower end, so an unlucky estimate cannot silence real changes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutSpread {
    /// `tau_b`'s formula over the layout sessions.
    pub point: f64,
    /// The `1 − alpha` interval, from the χ² interval on the variance of the session means
    /// (k − 1 degrees of freedom) less what session noise alone puts there.
    pub lower: f64,
    pub upper: f64,
    pub sessions: usize,
}

/// `tau_layout` of salted A/A sessions (each given as its log-ratios, at least 2 pairs) with its
/// `1 − alpha` interval; `None` with fewer than [`MIN_LAYOUT_SESSIONS`] sessions.
pub fn layout_spread<S: AsRef<[f64]>>(
    sessions: &[S],
    alpha: f64,
) -> Result<Option<LayoutSpread>, StatsError> {
    if sessions.len() < MIN_LAYOUT_SESSIONS {
        check_alpha(alpha)?;
        return Ok(None);
    }
    layout_spread_of(sessions, alpha).map(Some)
}

/// [`layout_spread`] for any number of sessions from 2 (the simulation reads fewer than the
/// minimum too, to show what the minimum buys).
pub fn layout_spread_of<S: AsRef<[f64]>>(
    sessions: &[S],
    alpha: f64,
) -> Result<LayoutSpread, StatsError> {
    check_alpha(alpha)?;
    let summaries = session_summaries(sessions)?;
    let means: Vec<f64> = summaries.iter().map(|m| m.mean).collect();
    let k = means.len() as f64;
    let expected = summaries
        .iter()
        .map(|m| m.sd * m.sd / m.n as f64)
        .sum::<f64>()
        / k;
    let var_means = mean_sd(&means)?.sd.powi(2);
    let chi = ChiSquared::new(k - 1.0).map_err(|_| StatsError::InvalidParameter {
        name: "sessions",
        value: k,
        expected: "at least 2",
    })?;
    let spread = |var: f64| (var - expected).max(0.0).sqrt();
    Ok(LayoutSpread {
        point: spread(var_means),
        lower: spread((k - 1.0) * var_means / chi.inverse_cdf(1.0 - alpha / 2.0)),
        upper: spread((k - 1.0) * var_means / chi.inverse_cdf(alpha / 2.0)),
        sessions: means.len(),
    })
}

/// Each session's mean and sd; every session needs at least 2 valid log-ratios.
fn session_summaries<S: AsRef<[f64]>>(sessions: &[S]) -> Result<Vec<MeanSd>, StatsError> {
    sessions
        .iter()
        .map(|session| {
            let d = session.as_ref();
            if d.len() < 2 {
                return Err(StatsError::TooFewPairs {
                    found: d.len(),
                    needed: 2,
                });
            }
            validate_log_ratios(d)?;
            mean_sd(d)
        })
        .collect()
}

/// The floor of one (runner, repo, benchmark, metric), on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoiseFloor {
    /// Pooled within-session sd of the A/A log-ratios: `√(Σ(n_j−1)s_j² / Σ(n_j−1))`.
    pub s_aa: f64,
    /// Between-session bias `√max(0, var(session means) − mean(s_j²/n_j))`; 0 with one session.
    pub tau_b: f64,
    /// Number of A/A sessions pooled.
    pub sessions: usize,
    /// Number of A/A pairs over all sessions.
    pub pairs: usize,
    /// Spread between builds that differ only in code layout (salted A/A sessions, same
    /// formula as `tau_b`); 0 without a layout calibration.
    pub tau_layout: f64,
}

impl NoiseFloor {
    /// Pools A/A sessions, each given as its log-ratios; every session needs at least 2 pairs.
    pub fn from_sessions<S: AsRef<[f64]>>(sessions: &[S]) -> Result<Self, StatsError> {
        if sessions.is_empty() {
            return Err(StatsError::Empty);
        }
        let summaries = session_summaries(sessions)?;
        let pairs: usize = summaries.iter().map(|s| s.n).sum();
        let dof: f64 = summaries.iter().map(|s| (s.n - 1) as f64).sum();
        let pooled_var: f64 = summaries
            .iter()
            .map(|s| (s.n - 1) as f64 * s.sd * s.sd)
            .sum::<f64>()
            / dof;
        let tau_b = if summaries.len() < 2 {
            // One session cannot separate between-session bias from within-session noise.
            0.0
        } else {
            let means: Vec<f64> = summaries.iter().map(|s| s.mean).collect();
            let var_means = mean_sd(&means)?.sd.powi(2);
            // Subtract what within-session noise alone would put into the session means.
            let expected: f64 = summaries
                .iter()
                .map(|s| s.sd * s.sd / s.n as f64)
                .sum::<f64>()
                / summaries.len() as f64;
            (var_means - expected).max(0.0).sqrt()
        };
        Ok(Self {
            s_aa: pooled_var.sqrt(),
            tau_b,
            sessions: summaries.len(),
            pairs,
            tau_layout: 0.0,
        })
    }

    /// Pools A/A sessions given as raw `(base, head)` samples of the same commit.
    pub fn from_session_samples<S: AsRef<[f64]>>(sessions: &[(S, S)]) -> Result<Self, StatsError> {
        let logs = sessions
            .iter()
            .map(|(b, h)| crate::paired::paired_log_ratios(b.as_ref(), h.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_sessions(&logs)
    }

    /// Pools A/A sessions of two recordings each, given as `(base, head)` run values of the
    /// same commit, compared unpaired: a session's bias is the difference of its mean log run
    /// values, and `s_aa` the spread of one base run against one head run (√2 × the pooled
    /// sd), as a pair's would be. Every session needs a run on each side and three in all.
    pub fn from_unpaired_sessions<S: AsRef<[f64]>>(
        sessions: &[(S, S)],
    ) -> Result<Self, StatsError> {
        if sessions.is_empty() {
            return Err(StatsError::Empty);
        }
        // Per session: (difference of means, pooled sd², its degrees of freedom, 1/m + 1/n).
        let mut summaries = Vec::with_capacity(sessions.len());
        let mut pairs = 0;
        for (base, head) in sessions {
            let (base, head) = (base.as_ref(), head.as_ref());
            let (m, n) = (base.len(), head.len());
            if m == 0 || n == 0 || m + n < 3 {
                return Err(StatsError::OneRunPerSide { base: m, head: n });
            }
            crate::paired::validate_samples(base, crate::error::SampleSide::Base)?;
            crate::paired::validate_samples(head, crate::error::SampleSide::Head)?;
            let logs = |x: &[f64]| x.iter().map(|v| v.ln()).collect::<Vec<f64>>();
            let (b, h) = (mean_sd(&logs(base))?, mean_sd(&logs(head))?);
            let dof = (m + n - 2) as f64;
            let var = ((m - 1) as f64 * b.sd * b.sd + (n - 1) as f64 * h.sd * h.sd) / dof;
            summaries.push((h.mean - b.mean, var, dof, 1.0 / m as f64 + 1.0 / n as f64));
            pairs += m.min(n);
        }
        let dof: f64 = summaries.iter().map(|s| s.2).sum();
        let pooled_var = summaries.iter().map(|s| s.2 * s.1).sum::<f64>() / dof;
        let tau_b = if summaries.len() < 2 {
            0.0
        } else {
            let means: Vec<f64> = summaries.iter().map(|s| s.0).collect();
            let var_means = mean_sd(&means)?.sd.powi(2);
            let expected =
                summaries.iter().map(|s| s.1 * s.3).sum::<f64>() / summaries.len() as f64;
            (var_means - expected).max(0.0).sqrt()
        };
        Ok(Self {
            s_aa: (2.0 * pooled_var).sqrt(),
            tau_b,
            sessions: summaries.len(),
            pairs,
            tau_layout: 0.0,
        })
    }

    /// True for a deterministic metric: no spread and no bias at all.
    pub fn is_deterministic(&self) -> bool {
        self.s_aa == 0.0 && self.tau_b == 0.0
    }

    /// The margin `M = max(policy minimum, 2·tau_b, 2·tau_layout)` on the log scale.
    pub fn margin(&self, policy_min_log: f64) -> f64 {
        policy_min_log.max(2.0 * self.tau_b).max(self.layout_band())
    }

    /// How far code layout alone moves a comparison of two builds (`2·tau_layout`): a claim
    /// of slower or faster needs its whole interval beyond it. 0 without a layout floor.
    pub fn layout_band(&self) -> f64 {
        2.0 * self.tau_layout
    }
}

/// The margin M for an optional floor; without one it is the policy minimum.
pub fn practical_margin(policy_min_log: f64, floor: Option<&NoiseFloor>) -> f64 {
    floor.map_or(policy_min_log, |f| f.margin(policy_min_log))
}

/// The layout band of an optional floor (see [`NoiseFloor::layout_band`]).
pub fn layout_band(floor: Option<&NoiseFloor>) -> f64 {
    floor.map_or(0.0, NoiseFloor::layout_band)
}

/// n* for each benchmark before any A/B data, as a runner's comparisons are planned: from the
/// noisiest floor among the benchmark's gated metrics (peak memory or CPU time never plan the
/// rounds of a timing), tuned so the half-width reaches the benchmark's margin; `cap` when
/// not even `cap` rounds would. Ignored benchmarks plan nothing. The service and `compare`
/// both plan with this.
pub fn plan_per_benchmark(
    floors: &[((&str, &str), NoiseFloor)],
    rules: &benchgate_api::RuleSet,
    min_effect: f64,
    alpha: f64,
    cap: u64,
) -> std::collections::BTreeMap<String, u64> {
    let keys: Vec<(&str, &str)> = floors.iter().map(|(key, _)| *key).collect();
    let mut noisiest: std::collections::BTreeMap<&str, NoiseFloor> = Default::default();
    for (((benchmark, _), floor), gated) in floors.iter().zip(crate::gated_mask(&keys, rules)) {
        if !gated || floor.s_aa <= 0.0 {
            continue;
        }
        let slot = noisiest.entry(benchmark).or_insert(*floor);
        if floor.s_aa > slot.s_aa {
            *slot = *floor;
        }
    }
    let mut plan = std::collections::BTreeMap::new();
    for (benchmark, floor) in noisiest {
        // An ignored benchmark is left out of the report; its floor must not add rounds.
        if rules.first_match(benchmark).is_some_and(|(_, r)| r.ignore) {
            continue;
        }
        let min_effect = rules.min_effect(benchmark).unwrap_or(min_effect);
        let target = floor.margin(min_effect.ln_1p());
        // An unusable floor (not finite) plans nothing: the default n* applies.
        if let Ok(n) = crate::plan_n_star(alpha, floor.s_aa, target, cap) {
            plan.insert(benchmark.to_owned(), n.unwrap_or(cap));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counted by hand: four sessions of two pairs, `m ± 0.01` around means −0.03, −0.01, 0.01
    /// and 0.03. Each session's s²/n is 0.0002/2 = 0.0001; the means' variance 0.002/3. The
    /// point is √(0.002/3 − 0.0001) = 0.02380; the 95% interval divides 3·var = 0.002 by the
    /// χ²₃ quantiles 9.3484 and 0.21580: √(0.000214 − 0.0001) = 0.01068 and
    /// √(0.009268 − 0.0001) = 0.09575.
    #[test]
    fn the_layout_spread_has_an_interval_and_needs_eight_builds() {
        let sessions: Vec<[f64; 2]> = [-0.03, -0.01, 0.01, 0.03]
            .iter()
            .map(|m| [m - 0.01, m + 0.01])
            .collect();
        let l = layout_spread_of(&sessions, 0.05).unwrap();
        assert_eq!(l.sessions, 4);
        assert!((l.point - 0.023_80).abs() < 1e-4, "{l:?}");
        assert!((l.lower - 0.010_68).abs() < 1e-4, "{l:?}");
        assert!((l.upper - 0.095_75).abs() < 1e-4, "{l:?}");
        assert!(l.lower < l.point && l.point < l.upper);
        // Below the minimum the floor has no layout spread.
        assert_eq!(layout_spread(&sessions, 0.05).unwrap(), None);
        let eight: Vec<[f64; 2]> = sessions.iter().chain(&sessions).copied().collect();
        let l8 = layout_spread(&eight, 0.05).unwrap().unwrap();
        assert_eq!(l8.sessions, 8);
        // Twice the sessions, the same point nearly and a narrower interval.
        assert!(l8.upper - l8.lower < l.upper - l.lower, "{l8:?}");
        // Sessions that differ by no more than their noise: all of it is noise.
        let quiet = [[0.01, -0.01]; 8];
        let q = layout_spread(&quiet, 0.05).unwrap().unwrap();
        assert_eq!((q.point, q.lower), (0.0, 0.0));
        assert!(layout_spread(&[[0.01]; 8], 0.05).is_err());
    }

    #[test]
    fn pools_within_and_between() {
        let a = [0.01, -0.01, 0.01, -0.01];
        let b = [0.06, 0.04, 0.06, 0.04];
        let floor = NoiseFloor::from_sessions(&[a.as_slice(), b.as_slice()]).unwrap();
        // Both sessions have sd √(0.0004/3); means 0 and 0.05.
        let within = (0.0004f64 / 3.0).sqrt();
        assert!((floor.s_aa - within).abs() < 1e-12);
        let var_means = 0.05f64.powi(2) / 2.0;
        let tau = (var_means - within * within / 4.0).sqrt();
        assert!((floor.tau_b - tau).abs() < 1e-12);
        assert_eq!((floor.sessions, floor.pairs), (2, 8));
        assert!((floor.margin(0.01) - 2.0 * tau).abs() < 1e-12);
    }

    #[test]
    fn one_session_has_no_bias_estimate() {
        let floor = NoiseFloor::from_sessions(&[[0.01, -0.02, 0.0]]).unwrap();
        assert_eq!(floor.tau_b, 0.0);
        assert_eq!(floor.margin(0.01), 0.01);
    }

    #[test]
    fn unpaired_sessions_pool_the_spread_of_a_run_and_the_bias_of_a_session() {
        let e = std::f64::consts::E;
        // Logs: base [0, 0.02], head [0.01, 0.03] (sd √0.0002 each), bias 0.01; the second
        // session the same shifted by 0.05 on the head side.
        let one = (vec![1.0, e.powf(0.02)], vec![e.powf(0.01), e.powf(0.03)]);
        let two = (vec![1.0, e.powf(0.02)], vec![e.powf(0.06), e.powf(0.08)]);
        let floor = NoiseFloor::from_unpaired_sessions(&[one.clone(), two]).unwrap();
        assert!((floor.s_aa - (2.0 * 0.0002f64).sqrt()).abs() < 1e-12);
        let var_means = 0.05f64.powi(2) / 2.0;
        let tau = (var_means - 0.0002).sqrt();
        assert!((floor.tau_b - tau).abs() < 1e-12, "{}", floor.tau_b);
        assert_eq!((floor.sessions, floor.pairs), (2, 4));
        let lone = (vec![1.0], vec![1.0]);
        assert!(NoiseFloor::from_unpaired_sessions(&[lone]).is_err());
    }

    #[test]
    fn rejects_short_sessions() {
        assert!(NoiseFloor::from_sessions::<[f64; 0]>(&[]).is_err());
        assert!(NoiseFloor::from_sessions(&[vec![0.01]]).is_err());
    }
}
