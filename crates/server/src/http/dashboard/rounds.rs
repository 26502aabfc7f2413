//! A comparison's stored samples as base/head pairs per benchmark, the running interval as
//! rounds were added, and what a noise floor can resolve. Pure functions of stored numbers.

use benchgate_stats::{ConfidenceSequence, MixtureBoundary, mixture_u, percent_from_log};
use benchgate_store::{JobId, Sample};

use crate::series_cache::RunnerPairs;

/// The analysis' error level and rounds cap: the dashboard draws what the analysis decides.
pub use crate::comparison_analysis::{ALPHA, ROUNDS_CAP};

/// One round of one benchmark: the base and head value measured next to each other.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub job_id: JobId,
    pub attempt: i64,
    pub round: i64,
    pub base: f64,
    pub head: f64,
}

/// Every complete pair of one (benchmark, metric) on one runner, in run order.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedSeries {
    pub benchmark: String,
    pub metric: String,
    pub unit: String,
    pub pairs: Vec<Pair>,
}

/// Groups one runner's samples into pairs per benchmark and metric, in the order benchmarks
/// first appear, by the analysis' own pairing ([`RunnerPairs`]): a (round, side) uploaded twice
/// keeps its first value, and a round missing one side (an upload cut short) is left out.
pub fn paired_series(samples: &[Sample]) -> Vec<PairedSeries> {
    let mut runner = RunnerPairs::default();
    runner.add(samples);
    let mut order: Vec<(&str, &str, &str)> = Vec::new();
    for s in samples {
        if !order
            .iter()
            .any(|(b, m, _)| *b == s.benchmark && *m == s.metric)
        {
            order.push((&s.benchmark, &s.metric, &s.unit));
        }
    }
    order
        .into_iter()
        .map(|(benchmark, metric, unit)| PairedSeries {
            benchmark: benchmark.to_owned(),
            metric: metric.to_owned(),
            unit: unit.to_owned(),
            pairs: runner
                .complete_rounds(benchmark, metric)
                .into_iter()
                .map(|((job_id, attempt, round), base, head)| Pair {
                    job_id,
                    attempt,
                    round,
                    base,
                    head,
                })
                .collect(),
        })
        .collect()
}

/// The anytime-valid interval after each round, in percent.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct IntervalStep {
    pub rounds: u64,
    pub change_pct: f64,
    /// `None` while the interval is still the whole line.
    pub lower_pct: Option<f64>,
    pub upper_pct: Option<f64>,
}

/// Replays the confidence sequence over the pairs as they were added, so the page can show the
/// interval narrowing. Pairs with a non-positive value (no log-ratio) are skipped.
pub fn running_intervals(pairs: &[Pair], n_star: f64) -> Vec<IntervalStep> {
    let Ok(boundary) = MixtureBoundary::tuned(ALPHA, n_star.max(1.0)) else {
        return Vec::new();
    };
    let mut sequence = ConfidenceSequence::new(boundary, 0.0);
    let mut steps = Vec::with_capacity(pairs.len());
    for p in pairs.iter().filter(|p| p.base > 0.0 && p.head > 0.0) {
        if sequence.push((p.head / p.base).ln()).is_err() {
            continue;
        }
        let [lower_pct, upper_pct] = sequence.running_interval().to_percent();
        steps.push(IntervalStep {
            rounds: sequence.n(),
            change_pct: percent_from_log(sequence.mean()),
            lower_pct,
            upper_pct,
        });
    }
    steps
}

/// Rounds a runner with A/A spread `sd_log` needs before its interval is narrower than
/// `effect` (a fraction: 0.02 = 2%) on each side, tuned for that many rounds as `plan_n_star`
/// does; `None` past [`ROUNDS_CAP`]. The half-width falls as n grows (`G = 1 + u` is fixed by
/// the tuning and `K` shrinks), so a binary search finds the same n as a linear scan.
pub fn rounds_to_resolve(sd_log: f64, effect: f64) -> Option<u64> {
    let target = (1.0 + effect).ln();
    let u = mixture_u(ALPHA).ok()?;
    let half_width = |n: u64| {
        MixtureBoundary::new(ALPHA, u / n as f64).map_or(f64::INFINITY, |b| b.half_width(sd_log, n))
    };
    if !(sd_log.is_finite() && target > 0.0) || half_width(ROUNDS_CAP) > target {
        return None;
    }
    let (mut lo, mut hi) = (2, ROUNDS_CAP);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if half_width(mid) <= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_api::Side;
    use benchgate_store::RunnerId;

    fn sample(round: i64, side: Side, benchmark: &str, value: f64) -> Sample {
        Sample {
            job_id: JobId(1),
            attempt: 1,
            runner_id: RunnerId(1),
            round,
            side,
            position: 0,
            benchmark: benchmark.into(),
            metric: "time".into(),
            unit: "ns".into(),
            value,
            lower: None,
            upper: None,
            direction: Default::default(),
            recorded_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn pairs_rounds_per_benchmark_and_drops_lone_sides() {
        let samples = vec![
            sample(0, Side::Base, "a", 100.0),
            sample(0, Side::Head, "a", 110.0),
            sample(0, Side::Head, "b", 5.0),
            sample(0, Side::Base, "b", 4.0),
            sample(1, Side::Head, "a", 111.0),
        ];
        let series = paired_series(&samples);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].benchmark, "a");
        assert_eq!(series[0].pairs.len(), 1, "round 1 has no base");
        assert_eq!(
            (series[1].pairs[0].base, series[1].pairs[0].head),
            (4.0, 5.0)
        );
    }

    #[test]
    fn a_side_uploaded_twice_shows_the_value_the_verdict_used() {
        let samples = vec![
            sample(0, Side::Base, "a", 100.0),
            sample(0, Side::Head, "a", 110.0),
            sample(0, Side::Head, "a", 150.0),
        ];
        let mut analysed = RunnerPairs::default();
        analysed.add(&samples);
        let verdict_pairs = &analysed.pairs()[&("a".to_owned(), "time".to_owned())];
        let shown = &paired_series(&samples)[0].pairs[0];
        assert_eq!(
            (shown.base, shown.head),
            (100.0, 110.0),
            "the first upload counts"
        );
        assert_eq!(
            (verdict_pairs.base[0], verdict_pairs.head[0]),
            (shown.base, shown.head)
        );
    }

    #[test]
    fn the_running_interval_narrows_and_never_widens() {
        let pairs: Vec<Pair> = (0..40)
            .map(|i| Pair {
                job_id: JobId(1),
                attempt: 1,
                round: i,
                base: 100.0,
                head: 102.0 + if i % 2 == 0 { 1.0 } else { -1.0 },
            })
            .collect();
        let steps = running_intervals(&pairs, 20.0);
        assert_eq!(steps.len(), 40);
        assert_eq!(steps[0].lower_pct, None, "one pair bounds nothing");
        let widths: Vec<f64> = steps
            .iter()
            .filter_map(|s| Some(s.upper_pct? - s.lower_pct?))
            .collect();
        assert!(!widths.is_empty());
        assert!(widths.windows(2).all(|w| w[1] <= w[0] + 1e-12));
    }

    #[test]
    fn resolution_matches_the_planner() {
        for (sd, effect) in [
            (0.01_f64, 0.02_f64),
            (0.035, 0.02),
            (0.002, 0.01),
            (0.05, 0.05),
        ] {
            let planned =
                benchgate_stats::plan_n_star(ALPHA, sd, (1.0 + effect).ln(), ROUNDS_CAP).unwrap();
            assert_eq!(
                rounds_to_resolve(sd, effect),
                planned,
                "sd {sd}, effect {effect}"
            );
        }
        assert_eq!(rounds_to_resolve(0.5, 0.01), None, "past the cap");
    }
}
