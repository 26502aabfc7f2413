//! A runner's audit as the runner page, the API and the PR comment's caution read it: the A/A
//! claim rate against α, the flag, planted changes found, forecasts held.

use std::collections::BTreeMap;

use benchgate_api::VerdictKind;
use benchgate_stats::audit::{Rate, score_forecasts_censored};
use benchgate_stats::flag::{FLAG_ALTERNATIVES, Flag, claim_rate_flag};
use benchgate_store::{CanaryResult, ComparisonId, Forecast, Runner, Store, StoreError};
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::FLAG_DELTA;
use crate::comparison_analysis::ALPHA;

/// One runner's audit, as the page and `/api/v1/runners/{id}/audit` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunnerAudit {
    pub runner: String,
    pub runner_id: i64,
    pub alpha: f64,
    /// A/A canaries that claimed a change (any of their rows slower or faster), of all A/A
    /// canaries: the canary is the unit, as a PR is.
    pub aa: RateView,
    /// The same over rows; the rows of one canary share its rounds and the machine's state,
    /// so they are not independent trials and this interval is too narrow.
    pub aa_rows: RateView,
    /// A/A canaries since the last recalibration by hand: what the flag is decided on.
    pub aa_since_recalibration: RateView,
    /// The flag: the sequential test of "A/A canaries claim at most α of the time" fired since
    /// the last recalibration by hand.
    pub flagged: bool,
    pub flag: FlagView,
    pub planted: Vec<PlantedView>,
    /// Median rounds and minutes to a verdict over every decided canary row.
    pub median_rounds: Option<f64>,
    pub median_minutes: Option<f64>,
    /// Canaries scored (each has a row per gated benchmark).
    pub canaries: usize,
    /// When the newest canary was started.
    pub last_canary: Option<DateTime<Utc>>,
    pub forecasts: ForecastView,
}

/// The flag's test, as the page and the JSON show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlagView {
    /// Evidence against "claims at most α" after the newest canary (1 before any).
    pub evidence: f64,
    /// The bar the evidence must reach: 1/δ.
    pub bar: f64,
    /// The canary since the recalibration (1-based) at which the evidence first reached the bar.
    pub fired_at_canary: Option<usize>,
    /// The rule in words.
    pub rule: String,
}

impl From<Flag> for FlagView {
    fn from(f: Flag) -> Self {
        let multiples = FLAG_ALTERNATIVES.map(|m| format!("{m}"));
        FlagView {
            evidence: f.evidence,
            bar: f.bar,
            fired_at_canary: f.fired_at,
            rule: format!(
                "flagged once the evidence against \"A/A canaries claim a change at most α = {:.0}% \
                 of the time\" reaches {:.0}: the mean likelihood ratio for claim rates of {}× α, \
                 over the canaries since the last recalibration in the order they ran. A runner \
                 at α or better reaches it with probability at most {:.0}% over its whole life, \
                 however often it is looked at",
                100.0 * ALPHA,
                f.bar,
                multiples.join(", "),
                100.0 * FLAG_DELTA
            ),
        }
    }
}

/// A rate with its exact 95% interval, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RateView {
    pub hits: u64,
    pub trials: u64,
    pub rate_pct: Option<f64>,
    pub lower_pct: f64,
    pub upper_pct: f64,
}

impl RateView {
    /// The rate as the page shows it: `5.0%`, or a dash without trials.
    pub fn rate(&self) -> String {
        self.rate_pct
            .map_or_else(|| "—".to_owned(), |p| format!("{p:.1}%"))
    }
}

impl From<Rate> for RateView {
    fn from(r: Rate) -> Self {
        RateView {
            hits: r.hits,
            trials: r.trials,
            rate_pct: r.point().map(|p| 100.0 * p),
            lower_pct: 100.0 * r.lower,
            upper_pct: 100.0 * r.upper,
        }
    }
}

/// Power at one planted size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlantedView {
    pub planted_pct: f64,
    /// Canaries with a row called slower, of all canaries with this planted change.
    pub found: RateView,
    /// Canaries with a row called faster: the wrong way.
    pub wrong_way: u64,
    pub median_rounds: Option<f64>,
    pub median_minutes: Option<f64>,
}

/// How forecasts held: within ±30% of what they said.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ForecastView {
    /// Forecasts whose horizon passed: decided, or undecided past said + 30%.
    pub scored: usize,
    pub within: usize,
    /// Of `scored`, those still undecided past their horizon: they took longer than said.
    pub took_longer_undecided: usize,
    pub within_pct: Option<f64>,
    /// Median of took/said, undecided forecasts included as censored (Kaplan–Meier): above 1,
    /// forecasts promise too soon.
    pub median_ratio: Option<f64>,
    /// Forecasts still waiting for a verdict (some of them past their horizon).
    pub open: usize,
}

/// Reads a runner's canaries and forecasts and computes its audit.
pub async fn runner_audit(store: &dyn Store, runner: &Runner) -> Result<RunnerAudit, StoreError> {
    let results = store.canary_results(runner.id).await?;
    let forecasts = store.runner_forecasts(runner.id).await?;
    let last = store.runner_canaries(runner.id, 1).await?;
    // Where each open forecast's row stands now: an open forecast is scored as censored there.
    let mut rounds_now = RoundsNow::new();
    let open: std::collections::BTreeSet<ComparisonId> = forecasts
        .iter()
        .filter(|f| f.decided_rounds.is_none())
        .map(|f| f.comparison_id)
        .collect();
    for id in open {
        for stored in store.comparison_results(id).await? {
            if stored.runner_id == runner.id {
                let n = i64::try_from(stored.result.n).unwrap_or(i64::MAX);
                rounds_now.insert((id, stored.result.name, stored.result.metric), n);
            }
        }
    }
    Ok(audit_of(
        runner,
        &results,
        &forecasts,
        &rounds_now,
        last.first().map(|c| c.created_at),
    ))
}

/// The pairs a comparison's row has now, by (comparison, benchmark, metric).
pub type RoundsNow = std::collections::HashMap<(ComparisonId, String, String), i64>;

/// The audit from what was recorded (pure, so a test can count by hand).
pub fn audit_of(
    runner: &Runner,
    results: &[CanaryResult],
    forecasts: &[Forecast],
    rounds_now: &RoundsNow,
    last_canary: Option<DateTime<Utc>>,
) -> RunnerAudit {
    let claims = |r: &CanaryResult| matches!(r.verdict, VerdictKind::Slower | VerdictKind::Faster);
    let aa: Vec<&CanaryResult> = results.iter().filter(|r| r.planted_pct.is_none()).collect();
    let rate = |rows: &[&CanaryResult]| by_canary(rows, claims);
    let row_rate = Rate::new(
        aa.iter().filter(|r| claims(r)).count() as u64,
        aa.len() as u64,
        ALPHA,
    );
    let recent: Vec<&CanaryResult> = aa
        .iter()
        .copied()
        .filter(|r| runner.audit_since.is_none_or(|t| r.recorded_at >= t))
        .collect();
    let since = rate(&recent);
    let flag = claim_rate_flag(canary_outcomes(&recent, claims), ALPHA, FLAG_DELTA);
    let mut sizes: Vec<f64> = results.iter().filter_map(|r| r.planted_pct).collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    let decided = |r: &&CanaryResult| {
        matches!(
            r.verdict,
            VerdictKind::Slower | VerdictKind::Faster | VerdictKind::Equivalent
        )
    };
    let planted = sizes
        .iter()
        .map(|&pct| {
            let rows: Vec<&CanaryResult> = results
                .iter()
                .filter(|r| r.planted_pct == Some(pct))
                .collect();
            let found: Vec<&CanaryResult> = rows
                .iter()
                .copied()
                .filter(|r| r.verdict == VerdictKind::Slower)
                .collect();
            PlantedView {
                planted_pct: pct,
                found: by_canary(&rows, |r| r.verdict == VerdictKind::Slower).into(),
                wrong_way: by_canary(&rows, |r| r.verdict == VerdictKind::Faster).hits,
                median_rounds: median(found.iter().map(|r| r.rounds as f64)),
                median_minutes: median(found.iter().filter_map(|r| r.minutes)),
            }
        })
        .collect();
    let all_decided: Vec<&CanaryResult> = results.iter().filter(decided).collect();
    let mut said_took: Vec<(u64, u64)> = results
        .iter()
        .filter(decided)
        .filter_map(|r| {
            let (at, n) = r.forecast?;
            Some((u64::try_from(n).ok()?, u64::try_from(r.rounds - at).ok()?))
        })
        .collect();
    said_took.extend(forecasts.iter().filter_map(|f| {
        let took = f.decided_rounds? - f.at_rounds;
        Some((u64::try_from(f.needed).ok()?, u64::try_from(took).ok()?))
    }));
    // Undecided: a canary row at its end, a forecast's row where it stands now.
    let mut said_so_far: Vec<(u64, u64)> = results
        .iter()
        .filter(|r| !decided(r))
        .filter_map(|r| {
            let (at, n) = r.forecast?;
            Some((u64::try_from(n).ok()?, u64::try_from(r.rounds - at).ok()?))
        })
        .collect();
    said_so_far.extend(
        forecasts
            .iter()
            .filter(|f| f.decided_rounds.is_none())
            .filter_map(|f| {
                let key = (f.comparison_id, f.benchmark.clone(), f.metric.clone());
                let so_far = rounds_now.get(&key).map_or(0, |n| n - f.at_rounds);
                Some((
                    u64::try_from(f.needed).ok()?,
                    u64::try_from(so_far.max(0)).ok()?,
                ))
            }),
    );
    let score = score_forecasts_censored(&said_took, &said_so_far);
    RunnerAudit {
        runner: runner.name.clone(),
        runner_id: runner.id.0,
        alpha: ALPHA,
        aa: rate(&aa).into(),
        aa_rows: row_rate.into(),
        aa_since_recalibration: since.into(),
        flagged: flag.fired(),
        flag: flag.into(),
        planted,
        median_rounds: median(all_decided.iter().map(|r| r.rounds as f64)),
        median_minutes: median(all_decided.iter().filter_map(|r| r.minutes)),
        canaries: results
            .iter()
            .map(|r| r.comparison_id)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        last_canary,
        forecasts: ForecastView {
            scored: score.scored,
            within: score.within,
            took_longer_undecided: score.censored,
            within_pct: (score.scored > 0)
                .then(|| 100.0 * score.within as f64 / score.scored as f64),
            median_ratio: score.median_ratio,
            open: forecasts
                .iter()
                .filter(|f| f.decided_rounds.is_none())
                .count(),
        },
    }
}

/// Canaries (comparisons) of which some row is a `hit`, of all canaries among `rows`: a canary
/// claims as a PR would, once, however many of its benchmarks moved.
fn by_canary(rows: &[&CanaryResult], hit: impl Fn(&CanaryResult) -> bool) -> Rate {
    let outcomes = canary_outcomes(rows, hit);
    let hits = outcomes.iter().filter(|h| **h).count() as u64;
    Rate::new(hits, outcomes.len() as u64, ALPHA)
}

/// Whether each canary among `rows` had a `hit` row, in the order the canaries were created.
fn canary_outcomes(rows: &[&CanaryResult], hit: impl Fn(&CanaryResult) -> bool) -> Vec<bool> {
    let mut canaries: BTreeMap<ComparisonId, bool> = BTreeMap::new();
    for r in rows {
        *canaries.entry(r.comparison_id).or_default() |= hit(r);
    }
    canaries.into_values().collect()
}

fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = values.collect();
    benchgate_stats::paired::median(&v)
}

/// The warning the PR comment's runner line carries while a runner is flagged.
pub fn flag_words(audit: &RunnerAudit) -> Option<String> {
    if !audit.flagged {
        return None;
    }
    let r = &audit.aa_since_recalibration;
    let f = &audit.flag;
    Some(format!(
        "A/A canaries on this runner claimed a change in {} of {} canaries since its last recalibration ({:.1}%); the evidence against \"at most α = {:.0}%\" reached {:.0} at canary {} (a runner at α reaches it {:.0}% of the time at most, however long it is watched): treat its verdicts with care until it is recalibrated",
        r.hits,
        r.trials,
        r.rate_pct.unwrap_or(0.0),
        100.0 * audit.alpha,
        f.bar,
        f.fired_at_canary.unwrap_or(r.trials as usize),
        100.0 * FLAG_DELTA
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::RunnerId;

    /// The caution a flagged runner's PR comments carry (CONVENTIONS 21): from a hand-made
    /// record of 9 claims in 60 A/A rows.
    fn quiet_runner() -> Runner {
        Runner {
            id: RunnerId(1),
            name: "quiet-1".into(),
            labels: vec!["x".into()],
            fingerprint: None,
            created_at: Utc::now(),
            last_seen_at: None,
            revoked_at: None,
            audit_since: None,
        }
    }

    /// 60 A/A canaries of one row each, claiming where `claim(i)` says.
    fn aa_canaries(claim: impl Fn(i64) -> bool) -> Vec<CanaryResult> {
        (0..60)
            .map(|i| CanaryResult {
                comparison_id: ComparisonId(i),
                runner_id: RunnerId(1),
                benchmark: "parse".into(),
                metric: "time".into(),
                planted_pct: None,
                verdict: if claim(i) {
                    VerdictKind::Slower
                } else {
                    VerdictKind::Equivalent
                },
                rounds: 10,
                minutes: None,
                forecast: None,
                recorded_at: Utc::now(),
            })
            .collect()
    }

    #[test]
    fn the_flag_reads_as_pinned() {
        let runner = quiet_runner();
        // 9 of 60 (15%, 3·α), spread: claims at canaries 4, 11, …, 60.
        let audit = audit_of(
            &runner,
            &aa_canaries(|i| i % 7 == 3),
            &[],
            &RoundsNow::new(),
            None,
        );
        assert!(audit.flagged);
        insta::assert_snapshot!(flag_words(&audit).unwrap());
        insta::assert_snapshot!("the_flag_s_rule", audit.flag.rule);
        // 3 of 60 (5%): what α allows.
        let fair = audit_of(
            &runner,
            &aa_canaries(|i| i % 20 == 3),
            &[],
            &RoundsNow::new(),
            None,
        );
        assert_eq!(flag_words(&fair), None);
        assert!(fair.flag.evidence < 1.0, "{:?}", fair.flag);
    }

    /// One drifting canary of 30 benchmarks is one claim, not 30: rows of a canary share its
    /// rounds. Counted by hand: 20 canaries of 30 rows, the first with every row slower, the
    /// eleventh with one row faster; the rest claim nothing.
    #[test]
    fn a_canary_of_thirty_claiming_rows_is_one_claim() {
        let runner = quiet_runner();
        let row = |canary: i64, bench: i64, verdict, planted_pct| CanaryResult {
            comparison_id: ComparisonId(canary),
            runner_id: RunnerId(1),
            benchmark: format!("b{bench}"),
            metric: "time".into(),
            planted_pct,
            verdict,
            rounds: 10,
            minutes: None,
            forecast: None,
            recorded_at: Utc::now(),
        };
        let mut results = Vec::new();
        for canary in 0..20 {
            for bench in 0..30 {
                let verdict = match (canary, bench) {
                    (0, _) => VerdictKind::Slower,
                    (10, 7) => VerdictKind::Faster,
                    _ => VerdictKind::Equivalent,
                };
                results.push(row(canary, bench, verdict, None));
            }
        }
        let a = audit_of(&runner, &results, &[], &RoundsNow::new(), None);
        assert_eq!((a.aa.hits, a.aa.trials), (2, 20));
        assert_eq!((a.aa_rows.hits, a.aa_rows.trials), (31, 600));
        assert_eq!(a.canaries, 20);
        // 2 of 20 canaries, apart, is consistent with α = 5%: the evidence rose to 4.3 at the
        // first and fell after it. As rows, one drifting canary alone was 30 claims.
        assert!(!a.flagged, "{:?}", a.flag);
        assert!(a.flag.evidence < 4.3, "{:?}", a.flag);
        // Planted: a canary is found when a row of it is called slower.
        let mut planted = Vec::new();
        for canary in 100..104 {
            for bench in 0..3 {
                let verdict = match (canary, bench) {
                    (100, 0) | (101, _) => VerdictKind::Slower,
                    (102, 2) => VerdictKind::Faster,
                    _ => VerdictKind::NoResultYet,
                };
                planted.push(row(canary, bench, verdict, Some(5.0)));
            }
        }
        let p = &audit_of(&runner, &planted, &[], &RoundsNow::new(), None).planted[0];
        assert_eq!((p.found.hits, p.found.trials, p.wrong_way), (2, 4, 1));
    }
}
