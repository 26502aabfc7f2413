//! How long a runner's runs should measure, from its A/A sessions of a suite: the split of a
//! run's variance into what its length shrinks and what it cannot (docs/statistics.md §1b), and
//! the seconds a run spends besides measuring. `measure = "auto"` applies the result to each
//! comparison job a runner claims; the runner page says it for every suite.

use benchgate_api::agent::Purpose;
use std::collections::{BTreeMap, BTreeSet};

use benchgate_api::agent::{AUTO_MEASURE_REACH, MEASURE_SECS, measure_text};
use benchgate_stats::gate::TIME_METRICS;
use benchgate_stats::paired::paired_log_ratios;
use benchgate_stats::run_length::{RunSplit, log_se_from_bounds};
use benchgate_store::{
    Job, JobId, JobKind, RepositoryId, RoundLanding, RunnerId, Sample, Store, StoreError,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

/// The confidence of the bounds a criterion run reports (its default `confidence_level`);
/// `measure = "auto"` is accepted only for criterion suites.
const CRITERION_CONFIDENCE: f64 = 0.95;

/// Calibrations looked at for one suite: a runner serving several suites of one repository
/// alternates between them.
const CALIBRATIONS_SEARCHED: i64 = 10;

/// What one A/A session says about run length on its runner.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunLengthAdvice {
    /// The calibration job it comes from.
    pub calibration: JobId,
    pub suite: Option<String>,
    /// Seconds per benchmark the session's runs measured.
    pub measured_secs: f64,
    /// The benchmark whose split decides: the one whose runs' own error is the largest share
    /// of their variance, so the one longer runs help most.
    pub benchmark: String,
    pub pairs: usize,
    /// Share of a run's variance its own length shrinks, in [0, 1].
    pub within_share: f64,
    /// Median seconds per round (two runs).
    pub seconds_per_round: Option<f64>,
    /// Seconds per benchmark that answer soonest, within [`AUTO_MEASURE_REACH`] of
    /// `measured_secs`; `None` when the session cannot tell (no spread between runs, or runs
    /// that spend nothing besides measuring).
    pub best_secs: Option<f64>,
    /// The suite says `measure = "auto"`: its comparisons on this runner measure `best_secs`.
    pub auto: bool,
    /// In words, for the runner page.
    pub words: String,
}

/// The advice of one calibration job's samples on its runner; `None` when it measured no
/// length (`{measure_secs}` absent), measured a layout or canary session, or has too few
/// pairs with run errors.
pub fn advice(job: &Job, samples: &[Sample]) -> Option<RunLengthAdvice> {
    let config = &job.config;
    let measured_secs = config.config.benchmark.measure_secs?;
    if job.kind != JobKind::Calibration
        || matches!(config.purpose(), Purpose::LayoutSession | Purpose::Canary)
    {
        return None;
    }
    let timed: Vec<&Sample> = samples
        .iter()
        .filter(|s| TIME_METRICS.contains(&s.metric.as_str()))
        .collect();
    let mut errors: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for s in &timed {
        if let (Some(lo), Some(hi)) = (s.lower, s.upper)
            && let Some(se) = log_se_from_bounds(lo, hi, CRITERION_CONFIDENCE)
        {
            errors.entry(s.benchmark.as_str()).or_default().push(se);
        }
    }
    let (benchmark, split) = crate::comparison_analysis::pair_samples(samples)
        .into_iter()
        .filter(|((_, metric), _)| TIME_METRICS.contains(&metric.as_str()))
        .filter_map(|((benchmark, _), pairs)| {
            let diffs = paired_log_ratios(&pairs.base, &pairs.head).ok()?;
            let split = RunSplit::new(&diffs, errors.get(benchmark.as_str())?)?;
            Some((benchmark, split))
        })
        .max_by(|a, b| a.1.within_share().total_cmp(&b.1.within_share()))?;
    let benchmarks = timed
        .iter()
        .map(|s| s.benchmark.as_str())
        .collect::<BTreeSet<_>>()
        .len();
    let seconds_per_round = round_pace(samples);
    let fixed =
        seconds_per_round.map(|per_round| per_round / 2.0 - benchmarks as f64 * measured_secs);
    let best_secs = fixed.and_then(|fixed| {
        let best = split.best_measure_secs(measured_secs, fixed, benchmarks)?;
        let lo = (measured_secs / AUTO_MEASURE_REACH).max(*MEASURE_SECS.start());
        let hi = (measured_secs * AUTO_MEASURE_REACH).min(*MEASURE_SECS.end());
        // In whole milliseconds, as the run command receives it.
        Some((best.clamp(lo, hi) * 1000.0).round() / 1000.0)
    });
    let auto = config.config.benchmark.measure_auto;
    let mut words = format!(
        "{} A/A pairs of {benchmark} at {} s per benchmark: {}",
        split.pairs,
        measure_text(measured_secs),
        benchgate_stats::words::run_length(&split)
    );
    // What the chosen length costs and saves: rounds grow through the within part, each run
    // shrinks by its measuring time.
    let trade = |best: f64| {
        let fixed = fixed.unwrap_or(0.0);
        let k = benchmarks as f64;
        let rounds = split.rounds_factor(best / measured_secs);
        let run = (fixed + k * best) / (fixed + k * measured_secs);
        format!(
            "~{rounds:.1}× the rounds at ~{run:.1}× the time each, an answer in ~{:.1}× the minutes",
            rounds * run
        )
    };
    match best_secs {
        Some(best) if auto => words.push_str(&format!(
            "; comparisons of this suite here measure {} s per benchmark (measure = \"auto\"): {}",
            measure_text(best),
            trade(best)
        )),
        Some(best) => words.push_str(&format!(
            "; runs of {} s per benchmark would answer soonest (`measure` in the suite): {}",
            measure_text(best),
            trade(best)
        )),
        None if auto => words.push_str(&format!(
            "; comparisons of this suite here measure {} s (the session cannot tell a better length)",
            measure_text(measured_secs)
        )),
        None => {}
    }
    Some(RunLengthAdvice {
        calibration: job.id,
        suite: config.config.suite.clone(),
        measured_secs,
        benchmark,
        pairs: split.pairs,
        within_share: split.within_share(),
        seconds_per_round,
        best_secs,
        auto,
        words,
    })
}

/// The newest advice per suite of `repository_id` on `runner_id`, from calibrations finished
/// before `before`, looking at the `CALIBRATIONS_SEARCHED` newest.
pub async fn latest_advice(
    store: &dyn Store,
    runner_id: RunnerId,
    repository_id: RepositoryId,
    before: DateTime<Utc>,
) -> Result<Vec<RunLengthAdvice>, StoreError> {
    let mut found: BTreeMap<Option<String>, RunLengthAdvice> = BTreeMap::new();
    let jobs = store
        .finished_calibrations(runner_id, repository_id, before, CALIBRATIONS_SEARCHED)
        .await?;
    for job in jobs {
        if found.contains_key(&job.config.suite) {
            continue;
        }
        // Fetched only for a session that could give advice.
        if job.config.benchmark.measure_secs.is_none()
            || job.config.purpose() == Purpose::LayoutSession
        {
            continue;
        }
        let samples = runner_samples(store, job.id, runner_id).await?;
        if let Some(a) = advice(&job, &samples) {
            found.insert(a.suite.clone(), a);
        }
    }
    Ok(found.into_values().collect())
}

/// The seconds per benchmark a comparison job of a `measure = "auto"` suite measures on
/// `runner_id`: from the newest A/A session of the suite on that runner that finished before
/// the comparison was created, so every job of one comparison on one runner measures the same
/// length. `None` for any other job, or when no session says (the reference length then runs).
pub async fn chosen_secs(
    store: &dyn Store,
    runner_id: RunnerId,
    job: &Job,
) -> Result<Option<RunLengthAdvice>, StoreError> {
    if job.kind != JobKind::Comparison || !job.config.benchmark.measure_auto {
        return Ok(None);
    }
    let before = match job.comparison_id {
        Some(id) => store
            .comparison(id)
            .await?
            .map_or(job.created_at, |c| c.created_at),
        None => job.created_at,
    };
    let suite = &job.config.suite;
    Ok(latest_advice(store, runner_id, job.repository_id, before)
        .await?
        .into_iter()
        .find(|a| &a.suite == suite && a.best_secs.is_some()))
}

async fn runner_samples(
    store: &dyn Store,
    job_id: JobId,
    runner_id: RunnerId,
) -> Result<Vec<Sample>, StoreError> {
    Ok(store
        .job_samples(job_id)
        .await?
        .into_iter()
        .find(|s| s.runner_id == runner_id)
        .map(|s| s.samples)
        .unwrap_or_default())
}

/// The median time between consecutive rounds of one job attempt landing: what a round costs
/// on this runner, both sides and the upload included. `None` before two rounds of one
/// attempt landed.
pub fn round_pace(samples: &[Sample]) -> Option<f64> {
    let mut landed: BTreeMap<(i64, i64, i64), DateTime<Utc>> = BTreeMap::new();
    for s in samples {
        let at = landed
            .entry((s.job_id.0, s.attempt, s.round))
            .or_insert(s.recorded_at);
        *at = (*at).min(s.recorded_at);
    }
    let mut gaps = Vec::new();
    let mut attempt = None;
    let mut rounds = Vec::new();
    for ((job, a, round), at) in landed {
        if attempt != Some((job, a)) {
            gaps.extend(landing_gaps(&rounds));
            rounds.clear();
            attempt = Some((job, a));
        }
        rounds.push(RoundLanding {
            attempt: a,
            round,
            at,
        });
    }
    gaps.extend(landing_gaps(&rounds));
    benchgate_stats::paired::median(&gaps)
}

/// [`round_pace`] of one job's landings (`Store::round_landings`): the median gap between
/// consecutive rounds of each attempt.
pub fn landing_pace(landings: &[RoundLanding]) -> Option<f64> {
    let mut by_attempt: BTreeMap<i64, Vec<RoundLanding>> = BTreeMap::new();
    for l in landings {
        by_attempt.entry(l.attempt).or_default().push(*l);
    }
    let gaps: Vec<f64> = by_attempt.values().flat_map(|a| landing_gaps(a)).collect();
    benchgate_stats::paired::median(&gaps)
}

/// The positive gaps, in seconds, between consecutive rounds of one attempt.
fn landing_gaps(attempt: &[RoundLanding]) -> Vec<f64> {
    let mut sorted = attempt.to_vec();
    sorted.sort_by_key(|l| l.round);
    sorted
        .windows(2)
        .map(|w| (w[1].at - w[0].at).num_milliseconds() as f64 / 1e3)
        .filter(|g| *g > 0.0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_store::RunnerId;

    /// A calibration job of a criterion suite measuring `measure` per benchmark.
    fn calibration(measure: &str) -> Job {
        let file = format!(
            "[benchmark]\nrun = \"cargo bench -- --measurement-time {{measure_secs}}\"\n\
             format = \"criterion\"\nmeasure = \"{measure}\"\n"
        );
        let repo = benchgate_github::repo_config::parse_repo_config(&file).unwrap();
        let config = repo.comparison_config(&repo.suites[0]).into();
        let now = Utc::now();
        Job {
            id: JobId(7),
            kind: JobKind::Calibration,
            comparison_id: None,
            repository_id: RepositoryId(1),
            base_sha: "a".repeat(40),
            head_sha: "a".repeat(40),
            config,
            runner_label: "x".into(),
            pinned_runner_id: Some(RunnerId(1)),
            rounds: 12,
            priority: benchgate_store::Priority::NORMAL,
            state: benchgate_store::JobState::Done,
            cancel_requested: false,
            lease_expires_at: None,
            claimed_by: Some(RunnerId(1)),
            attempts: 1,
            max_attempts: 3,
            last_error: None,
            log_tail: None,
            created_at: now,
            started_at: Some(now),
            finished_at: Some(now),
            profile: None,
            identical_build: None,
        }
    }

    /// A sample of `parse`'s time landing `secs` after `start`.
    fn sample_at(
        start: DateTime<Utc>,
        attempt: i64,
        round: i64,
        secs: i64,
        side: benchgate_api::Side,
        value: f64,
    ) -> Sample {
        Sample {
            job_id: JobId(7),
            attempt,
            runner_id: RunnerId(1),
            round,
            side,
            position: 0,
            benchmark: "parse".into(),
            metric: "time".into(),
            unit: "ns".into(),
            value,
            lower: None,
            upper: None,
            direction: Default::default(),
            recorded_at: start + chrono::Duration::seconds(secs),
        }
    }

    /// Twelve A/A rounds of one benchmark, 10 s apart: head/base log-ratios alternate ±0.02,
    /// so a run's variance is 12·0.0004/11/2 = 0.000218; each run reports a 95% interval of
    /// log half-width 1.96·`se`.
    fn aa_rounds(se: f64) -> Vec<Sample> {
        let start = Utc::now();
        let half = 1.959_963_984_540_054 * se;
        let sample = |round: i64, side, value: f64| Sample {
            lower: Some(value * (-half).exp()),
            upper: Some(value * half.exp()),
            ..sample_at(start, 1, round, 10 * round, side, value)
        };
        use benchgate_api::Side::{Base, Head};
        (0..12)
            .flat_map(|r| {
                let d = if r % 2 == 0 { 0.02 } else { -0.02 };
                [sample(r, Base, 100.0), sample(r, Head, 100.0 * f64::exp(d))]
            })
            .collect()
    }

    /// A run's own error a tenth of its variance, 1 s measured of a 5 s run (4 s fixed):
    /// t = sqrt(within·t0·fixed / between) = sqrt(0.0000218·1·4 / 0.000196) ≈ 0.667 s.
    #[test]
    fn the_length_that_answers_soonest_follows_the_split_and_the_fixed_cost() {
        let per_run: f64 = 12.0 * 0.0004 / 11.0 / 2.0;
        let within = per_run / 10.0;
        let job = calibration("auto");
        let a = advice(&job, &aa_rounds(within.sqrt())).unwrap();
        assert_eq!(a.seconds_per_round, Some(10.0));
        assert_eq!(a.measured_secs, 1.0);
        assert!((a.within_share - 0.1).abs() < 1e-6, "{a:?}");
        let best = a.best_secs.unwrap();
        let expected = (within * 4.0 / (per_run - within)).sqrt();
        assert!((best - expected).abs() < 5e-4, "{best} vs {expected}");
        assert_eq!(best, 0.667, "whole milliseconds");
        // 0.9 + 0.1/0.667 = 1.0499× the rounds, (4 + 0.667)/(4 + 1) = 0.93× the time each.
        assert!(
            a.words.contains(
                "~1.0× the rounds at ~0.9× the time each, an answer in ~1.0× the minutes"
            ),
            "{}",
            a.words
        );
        assert!(a.auto);
        assert!(
            a.words
                .contains("12 A/A pairs of parse at 1 s per benchmark")
                && a.words
                    .contains("measure 0.667 s per benchmark (measure = \"auto\")"),
            "{}",
            a.words
        );
    }

    /// Almost all spread between runs: shorter always answers as soon, but never below a
    /// tenth of the measured length, which the model has not seen.
    #[test]
    fn the_choice_stays_within_ten_times_the_measured_length() {
        let per_run: f64 = 12.0 * 0.0004 / 11.0 / 2.0;
        let a = advice(&calibration("2s"), &aa_rounds((per_run / 1e6).sqrt())).unwrap();
        assert_eq!(a.best_secs, Some(0.2));
        assert!(!a.auto);
        assert!(
            a.words
                .contains("runs of 0.2 s per benchmark would answer soonest"),
            "{}",
            a.words
        );
        // All of it within: longer runs always pay, no length is stated.
        let all_within = advice(&calibration("auto"), &aa_rounds(per_run.sqrt() * 1.5)).unwrap();
        assert_eq!(all_within.best_secs, None);
    }

    /// Layout and canary sessions measure something else; a session without a run length, or
    /// with fewer pairs than a split needs, says nothing.
    #[test]
    fn only_a_plain_a_a_session_with_a_length_gives_advice() {
        let rounds = aa_rounds(0.003);
        let mut layout = calibration("auto");
        layout.config.layout = Some(benchgate_api::agent::LayoutSalts {
            base: "1".into(),
            head: "2".into(),
        });
        assert_eq!(advice(&layout, &rounds), None);
        let mut fixed_in_command = calibration("1s");
        fixed_in_command.config.benchmark.measure_secs = None;
        assert_eq!(advice(&fixed_in_command, &rounds), None);
        assert_eq!(advice(&calibration("1s"), &rounds[..8]), None, "four pairs");
        assert!(advice(&calibration("1s"), &rounds).is_some());
    }

    /// Rounds landing 12 s apart in one attempt, a retry's rounds 30 s apart after an hour's
    /// wait: the pace is a round's time, never the wait between attempts.
    #[test]
    fn the_round_pace_is_the_median_gap_between_rounds_of_one_attempt() {
        let start = Utc::now();
        let sample = |attempt, round, secs, side| sample_at(start, attempt, round, secs, side, 1.0);
        use benchgate_api::Side::{Base, Head};
        let mut samples = vec![sample(1, 0, 0, Base), sample(1, 0, 1, Head)];
        assert_eq!(round_pace(&samples), None, "one round has no pace");
        samples.extend([
            sample(1, 1, 12, Base),
            sample(1, 2, 24, Head),
            sample(1, 3, 36, Base),
        ]);
        samples.extend([sample(2, 0, 3600, Base), sample(2, 1, 3630, Base)]);
        assert_eq!(round_pace(&samples), Some(12.0));
    }
}
