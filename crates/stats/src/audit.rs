//! A runner's audit: how often its A/A canaries claimed a change that is not there (against α),
//! how often planted changes of known size were found and how soon, and how well "needs N more
//! rounds" forecast what came. docs/statistics.md §9 explains the rates to users.

use statrs::distribution::{Beta, ContinuousCDF};

use crate::analysis::{AnalysisOptions, RoundOrder, analyze_pairs};
use crate::error::StatsError;
use crate::floor::NoiseFloor;
use crate::verdict::Verdict;

/// A forecast counts as right when what it took is within this fraction of what it said.
pub const FORECAST_TOLERANCE: f64 = 0.3;

/// A canary's forecast is the first one made at this many rounds or more: what a job's end
/// shows a user, not the guess of the second round.
pub const FORECAST_FROM: usize = 5;

/// A count of events in trials with its exact (Clopper–Pearson) two-sided interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub hits: u64,
    pub trials: u64,
    pub lower: f64,
    pub upper: f64,
}

impl Rate {
    /// `hits` of `trials` with the exact interval at confidence `1 − alpha`; `[0, 1]` with no
    /// trial at all.
    pub fn new(hits: u64, trials: u64, alpha: f64) -> Rate {
        let (lower, upper) = clopper_pearson(hits, trials, alpha);
        Rate {
            hits,
            trials,
            lower,
            upper,
        }
    }

    /// `hits / trials`; `None` without trials.
    pub fn point(&self) -> Option<f64> {
        (self.trials > 0).then(|| self.hits as f64 / self.trials as f64)
    }

    /// The whole interval lies above `level`: the rate is credibly higher than promised.
    pub fn credibly_above(&self, level: f64) -> bool {
        self.trials > 0 && self.lower > level
    }
}

/// The exact binomial interval for `hits` of `trials` at confidence `1 − alpha`: the beta
/// quantiles `B(α/2; k, n−k+1)` and `B(1−α/2; k+1, n−k)`, with 0 and 1 at the ends.
pub fn clopper_pearson(hits: u64, trials: u64, alpha: f64) -> (f64, f64) {
    if trials == 0 || hits > trials {
        return (0.0, 1.0);
    }
    let (k, n) = (hits as f64, trials as f64);
    let quantile = |a: f64, b: f64, p: f64| Beta::new(a, b).map_or(f64::NAN, |d| d.inverse_cdf(p));
    let lower = if hits == 0 {
        0.0
    } else {
        quantile(k, n - k + 1.0, alpha / 2.0)
    };
    let upper = if hits == trials {
        1.0
    } else {
        quantile(k + 1.0, n - k, 1.0 - alpha / 2.0)
    };
    (lower, upper)
}

/// The error level each row of a canary with `rows` scored rows is judged at: its rows are one
/// family (Bonferroni), so an A/A canary claims a change anywhere at most `alpha` of the time
/// whatever the suite's size, and the runner flag ([`crate::flag`]) is fed per-canary outcomes
/// whose rate on a healthy runner is at most the `alpha` it tests. (The PR gate's e-BH is at
/// least as powerful, so a planted canary's rounds are an upper bound on a PR's.)
pub fn canary_row_alpha(alpha: f64, rows: usize) -> f64 {
    alpha / rows.max(1) as f64
}

/// What a canary's rounds said to someone who looks after every round and stops at the first
/// decision (the anytime-valid interval allows exactly that).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstDecision {
    /// The first decided verdict, or the last undecided one when none came.
    pub verdict: Verdict,
    /// Rounds at that verdict.
    pub rounds: usize,
    /// The first "needs N more rounds" said at [`FORECAST_FROM`] rounds or later on the way:
    /// the rounds it was said at and N.
    pub forecast: Option<(usize, u64)>,
}

impl FirstDecision {
    /// A slower or faster verdict: a claim of a change.
    pub fn claims_change(&self) -> bool {
        matches!(
            self.verdict,
            Verdict::Slower { .. } | Verdict::Faster { .. }
        )
    }

    /// Decided at all (a claim or "no change beyond ±M").
    pub fn decided(&self) -> bool {
        self.claims_change() || self.verdict == Verdict::Equivalent
    }
}

/// Looks at the pairs after every round from `first_look` (at least 2) on, as the service
/// would, and returns the first decision with the first forecast made before it.
pub fn first_decision(
    base: &[f64],
    head: &[f64],
    opts: &AnalysisOptions,
    floor: Option<&NoiseFloor>,
    first_look: usize,
) -> Result<FirstDecision, StatsError> {
    let n = base.len().min(head.len());
    let mut forecast = None;
    let mut last = None;
    for k in first_look.max(2)..=n {
        // Each look sees the rounds so far, and their order flags.
        let look = match &opts.order {
            RoundOrder::BaseFirst(flags) => AnalysisOptions {
                order: RoundOrder::BaseFirst(flags[..k.min(flags.len())].to_vec()),
                ..opts.clone()
            },
            RoundOrder::Abba => opts.clone(),
        };
        let a = analyze_pairs(&base[..k], &head[..k], &look, floor)?;
        match a.verdict {
            Verdict::NoResultYet { rounds_needed } if k >= FORECAST_FROM => {
                forecast.get_or_insert((k, rounds_needed));
            }
            Verdict::NoResultYet { .. } => {}
            Verdict::BelowResolution => {}
            decided => {
                return Ok(FirstDecision {
                    verdict: decided,
                    rounds: k,
                    forecast,
                });
            }
        }
        last = Some(a.verdict);
    }
    let verdict = last.ok_or(StatsError::TooFewPairs {
        found: n,
        needed: first_look.max(2),
    })?;
    Ok(FirstDecision {
        verdict,
        rounds: n,
        forecast,
    })
}

/// How forecasts fared: each `(said, took)` is the rounds a "needs N more" named and the rounds
/// the verdict then took; a forecast still undecided is `(said, so far)`, censored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForecastScore {
    /// Forecasts whose horizon (said + [`FORECAST_TOLERANCE`]) has passed: decided ones and
    /// undecided ones that already took longer.
    pub scored: usize,
    /// Within ±[`FORECAST_TOLERANCE`] of what was said.
    pub within: usize,
    /// Undecided past their horizon: counted in `scored`, never `within`.
    pub censored: usize,
    /// Median of took/said, the undecided ones included as censored (Kaplan–Meier): above 1 the
    /// forecasts promise too soon. `None` while fewer than half are known to have ended.
    pub median_ratio: Option<f64>,
}

/// Scores forecasts; a forecast of 0 rounds is not one and is left out.
pub fn score_forecasts(forecasts: &[(u64, u64)]) -> ForecastScore {
    score_forecasts_censored(forecasts, &[])
}

/// Scores decided forecasts `(said, took)` with undecided ones `(said, so far)`. Leaving the
/// undecided out would score only the forecasts that came true soon enough: a forecast of 10
/// more rounds still undecided after 40 was wrong.
pub fn score_forecasts_censored(decided: &[(u64, u64)], undecided: &[(u64, u64)]) -> ForecastScore {
    let ratios = |v: &[(u64, u64)]| -> Vec<(f64, f64)> {
        v.iter()
            .filter(|(said, _)| *said > 0)
            .map(|&(said, took)| (said as f64, took as f64))
            .collect()
    };
    let (ended, open) = (ratios(decided), ratios(undecided));
    let within = ended
        .iter()
        .filter(|(said, took)| (took - said).abs() <= FORECAST_TOLERANCE * said)
        .count();
    let censored = open
        .iter()
        .filter(|(said, so_far)| *so_far > (1.0 + FORECAST_TOLERANCE) * said)
        .count();
    let events: Vec<f64> = ended.iter().map(|(said, took)| took / said).collect();
    let at_risk: Vec<f64> = open.iter().map(|(said, so_far)| so_far / said).collect();
    ForecastScore {
        scored: ended.len() + censored,
        within,
        censored,
        median_ratio: kaplan_meier_median(&events, &at_risk),
    }
}

/// The Kaplan–Meier median of values of which `events` are known and `censored` only known to
/// be larger: the smallest event value where the estimated share still above it falls to one
/// half or below; `None` when it never does.
pub fn kaplan_meier_median(events: &[f64], censored: &[f64]) -> Option<f64> {
    let mut times: Vec<f64> = events.iter().copied().filter(|t| t.is_finite()).collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut survival = 1.0;
    for t in times {
        // At risk: every value not yet ended before t (a value censored at t counts, as usual).
        let risk = events.iter().filter(|e| **e >= t).count()
            + censored.iter().filter(|c| **c >= t).count();
        let ended = events.iter().filter(|e| **e == t).count();
        survival *= 1.0 - ended as f64 / risk as f64;
        if survival <= 0.5 + 1e-12 {
            return Some(t);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_matches_published_values() {
        // 0 of 100: the upper end is 1 − 0.025^(1/100) exactly.
        let (lo, hi) = clopper_pearson(0, 100, 0.05);
        assert_eq!(lo, 0.0);
        assert!((hi - (1.0 - 0.025f64.powf(0.01))).abs() < 1e-9, "{hi}");
        // 5 of 100 (R: binom.test(5, 100)$conf.int = 0.01643180 0.11283491).
        let (lo, hi) = clopper_pearson(5, 100, 0.05);
        assert!((lo - 0.016_431_80).abs() < 1e-6, "{lo}");
        assert!((hi - 0.112_834_91).abs() < 1e-6, "{hi}");
        assert_eq!(clopper_pearson(3, 3, 0.05).1, 1.0);
        assert_eq!(clopper_pearson(0, 0, 0.05), (0.0, 1.0));
    }

    #[test]
    fn a_rate_is_credibly_above_only_when_its_whole_interval_is() {
        assert!(!Rate::new(5, 100, 0.05).credibly_above(0.05));
        assert!(!Rate::new(10, 100, 0.05).credibly_above(0.05));
        // 15 of 100: the interval starts near 8.6%.
        assert!(Rate::new(15, 100, 0.05).credibly_above(0.05));
        assert!(!Rate::new(0, 0, 0.05).credibly_above(0.05));
        assert_eq!(Rate::new(0, 0, 0.05).point(), None);
    }

    #[test]
    fn forecasts_within_thirty_percent_count_as_right() {
        let score = score_forecasts(&[(10, 10), (10, 13), (10, 14), (10, 7), (10, 6), (0, 5)]);
        assert_eq!((score.scored, score.within), (5, 3));
        assert_eq!(score.median_ratio, Some(1.0));
    }

    /// Counted by hand: 4 decided forecasts of 10 rounds (took 8, 10, 12, 30) and 4 still open
    /// (40, 35 and 20 rounds so far, past the horizon of 13; 5 so far, not yet). Left out, the
    /// open ones would make the forecasts look right 3 times in 4 with a median ratio of 1.0;
    /// counted, 3 in 7 are right, and the median ratio is 3.0: the Kaplan–Meier estimate stays
    /// above one half until the decided 30 (at risk 7 at 0.8, 6 at 1.0, 5 at 1.2, 3 at 3.0:
    /// 6/7 · 5/6 · 4/5 · 2/3 = 0.38; the open 5 left the risk set at 0.5).
    #[test]
    fn forecasts_still_undecided_past_their_horizon_count_as_took_longer() {
        let decided = [(10, 8), (10, 10), (10, 12), (10, 30)];
        let open = [(10, 40), (10, 35), (10, 20), (10, 5)];
        let left_out = score_forecasts(&decided);
        assert_eq!((left_out.scored, left_out.within), (4, 3));
        assert_eq!(left_out.median_ratio, Some(1.0));
        let score = score_forecasts_censored(&decided, &open);
        assert_eq!((score.scored, score.within, score.censored), (7, 3, 3));
        assert_eq!(score.median_ratio, Some(3.0));
        // Nothing ended: no median can be stated.
        assert_eq!(kaplan_meier_median(&[], &[2.0, 3.0]), None);
        // Nothing censored: the lower median of the events.
        assert_eq!(kaplan_meier_median(&[1.0, 2.0, 3.0, 4.0], &[]), Some(2.0));
    }

    #[test]
    fn the_first_decision_stops_at_the_first_decided_look() {
        // Head 10% slower with ±0.5% wobble: decided slower within a few rounds.
        let base: Vec<f64> = (0..30)
            .map(|i| 100.0 * (1.0 + 0.005 * f64::from(i % 3)))
            .collect();
        let head: Vec<f64> = base.iter().map(|b| b * 1.1).collect();
        let opts = AnalysisOptions::default();
        let d = first_decision(&base, &head, &opts, None, 2).unwrap();
        // Seeded orders are cut to each look too.
        let seeded = AnalysisOptions {
            order: RoundOrder::BaseFirst((0..30).map(|i| i % 3 == 0).collect()),
            ..AnalysisOptions::default()
        };
        assert_eq!(
            first_decision(&base, &head, &seeded, None, 2)
                .unwrap()
                .rounds,
            d.rounds
        );
        assert!(d.claims_change() && d.decided(), "{d:?}");
        assert!(d.rounds < 30);
        // The look before it was undecided.
        if d.rounds > 2 {
            let k = d.rounds - 1;
            let before = analyze_pairs(&base[..k], &head[..k], &opts, None).unwrap();
            assert!(matches!(
                before.verdict,
                Verdict::NoResultYet { .. } | Verdict::BelowResolution
            ));
        }
    }
}
