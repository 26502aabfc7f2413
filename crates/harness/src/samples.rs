//! Base/head samples of every benchmark and metric: paired by round when the harness ran them
//! interleaved, or as two independent sets of runs when they come from recordings made apart.
//!
//! The unit of replication is a run (one process, fork or launch). [`run_values`] is the one
//! rule for what a run contributes: the mean of every value it reported for a benchmark and
//! metric, however many iterations or repetitions that was.

use std::collections::HashMap;

use benchgate_api::{Direction, Measurement, Side};
use serde::{Deserialize, Serialize};

/// One benchmark and metric.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SeriesKey {
    pub benchmark: String,
    pub metric: String,
}

impl SeriesKey {
    fn of(m: &Measurement) -> Self {
        SeriesKey {
            benchmark: m.benchmark.clone(),
            metric: m.metric.clone(),
        }
    }
}

/// The pairs of one benchmark and metric, in order; `base[i]` and `head[i]` are one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub key: SeriesKey,
    pub unit: String,
    /// Which way is better, as the parser said for the first value.
    #[serde(default)]
    pub direction: Direction,
    pub base: Vec<f64>,
    pub head: Vec<f64>,
    /// Per pair, whether base ran first; empty when the order is unknown (files).
    pub base_first: Vec<bool>,
}

/// A benchmark and metric that only one side reported (added, removed or renamed in head).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneSided {
    pub key: SeriesKey,
    pub unit: String,
    pub direction: Direction,
    pub side: Side,
}

/// Every series of a comparison, in the order benchmarks first appeared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairedSamples {
    series: Vec<Series>,
    index: HashMap<SeriesKey, usize>,
    one_sided: Vec<OneSided>,
}

/// One group of values: key, unit, direction, values.
type Group = (SeriesKey, String, Direction, Vec<f64>);

impl PairedSamples {
    /// Adds one round. A run that reports a metric several times counts once, with the mean of
    /// its values, because the unit of analysis is a pair of whole runs. A metric reported by
    /// only one side this round yields no pair.
    pub fn push_round(&mut self, base: &[Measurement], head: &[Measurement], base_first: bool) {
        let (base_means, head_means) = (run_values(base), run_values(head));
        for (key, unit, direction, b) in &base_means {
            match head_means.iter().find(|(k, ..)| k == key) {
                Some((_, _, _, h)) => {
                    let series = self.series_mut(key.clone(), unit, *direction);
                    series.base.push(*b);
                    series.head.push(*h);
                    series.base_first.push(base_first);
                }
                None => self.note_one_sided(key, unit, *direction, Side::Base),
            }
        }
        for (key, unit, direction, _) in &head_means {
            if !base_means.iter().any(|(k, ..)| k == key) {
                self.note_one_sided(key, unit, *direction, Side::Head);
            }
        }
        let index = &self.index;
        self.one_sided.retain(|o| !index.contains_key(&o.key));
    }

    /// Remembers a series only `side` reported, unless it is paired already.
    fn note_one_sided(&mut self, key: &SeriesKey, unit: &str, direction: Direction, side: Side) {
        if !self.index.contains_key(key) && !self.one_sided.iter().any(|o| o.key == *key) {
            self.one_sided.push(OneSided {
                key: key.clone(),
                unit: unit.to_owned(),
                direction,
                side,
            });
        }
    }

    /// The series that only one side reported, in first-seen order.
    pub fn one_sided(&self) -> &[OneSided] {
        &self.one_sided
    }

    /// The series in first-seen order.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// The most pairs any series has.
    pub fn max_pairs(&self) -> usize {
        self.series.iter().map(|s| s.base.len()).max().unwrap_or(0)
    }

    fn series_mut(&mut self, key: SeriesKey, unit: &str, direction: Direction) -> &mut Series {
        let i = *self.index.entry(key.clone()).or_insert_with(|| {
            self.series.push(Series {
                key,
                unit: unit.to_owned(),
                direction,
                base: Vec::new(),
                head: Vec::new(),
                base_first: Vec::new(),
            });
            self.series.len() - 1
        });
        &mut self.series[i]
    }
}

/// Values grouped by benchmark and metric, in first-seen order.
fn group(ms: &[Measurement]) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut at: HashMap<SeriesKey, usize> = HashMap::new();
    for m in ms {
        let key = SeriesKey::of(m);
        match at.get(&key) {
            Some(&i) => groups[i].3.push(m.value),
            None => {
                at.insert(key.clone(), groups.len());
                groups.push((key, m.unit.clone(), m.direction, vec![m.value]));
            }
        }
    }
    groups
}

/// One value per benchmark and metric for the measurements of one run: the mean of what the
/// run reported, in first-seen order. Samples inside a run are not replicates; this is the
/// only place that decides what a run contributes, for `compare`, the agent and `analyze`.
pub fn run_values(ms: &[Measurement]) -> Vec<(SeriesKey, String, Direction, f64)> {
    group(ms)
        .into_iter()
        .map(|(k, u, d, mut v)| {
            // Summed in sorted order, so the order a harness wrote its samples in cannot move
            // the last bit of the mean.
            v.sort_by(f64::total_cmp);
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            (k, u, d, mean)
        })
        .collect()
}

/// Per benchmark and metric, a run's variance split into its own reported error and the spread
/// between runs (`benchgate_stats::run_length`), from interleaved rounds of `(base, head)`
/// measurements whose harness states its bounds at `confidence`. A run contributes its error
/// only when it reported one value for the series (a mean of several has no stated bounds).
pub fn run_splits(
    rounds: &[(&[Measurement], &[Measurement])],
    confidence: f64,
) -> std::collections::BTreeMap<SeriesKey, benchgate_stats::run_length::RunSplit> {
    use benchgate_stats::run_length::{RunSplit, log_se_from_bounds};
    let mut diffs: HashMap<SeriesKey, Vec<f64>> = HashMap::new();
    let mut errors: HashMap<SeriesKey, Vec<f64>> = HashMap::new();
    for (base, head) in rounds {
        for side in [base, head] {
            for (key, values) in group_measurements(side) {
                if let [m] = values.as_slice()
                    && let (Some(lo), Some(hi)) = (m.lower, m.upper)
                    && let Some(se) = log_se_from_bounds(lo, hi, confidence)
                {
                    errors.entry(key).or_default().push(se);
                }
            }
        }
        let head_values: HashMap<SeriesKey, f64> = run_values(head)
            .into_iter()
            .map(|(k, _, _, v)| (k, v))
            .collect();
        for (key, _, _, b) in run_values(base) {
            if let Some(h) = head_values.get(&key)
                && b > 0.0
                && *h > 0.0
            {
                diffs.entry(key).or_default().push((h / b).ln());
            }
        }
    }
    diffs
        .into_iter()
        .filter_map(|(key, d)| {
            let split = RunSplit::new(&d, errors.get(&key).map_or(&[][..], Vec::as_slice))?;
            Some((key, split))
        })
        .collect()
}

/// A run's measurements by benchmark and metric.
fn group_measurements(ms: &[Measurement]) -> HashMap<SeriesKey, Vec<&Measurement>> {
    let mut out: HashMap<SeriesKey, Vec<&Measurement>> = HashMap::new();
    for m in ms {
        out.entry(SeriesKey::of(m)).or_default().push(m);
    }
    out
}

/// The measurements of one run reduced to one per benchmark and metric ([`run_values`]), as
/// the agent uploads a round's side.
pub fn one_per_series(ms: &[Measurement]) -> Vec<Measurement> {
    run_values(ms)
        .into_iter()
        .map(|(key, unit, direction, value)| {
            let mut same = ms
                .iter()
                .filter(|m| m.benchmark == key.benchmark && m.metric == key.metric);
            // A harness's own bounds belong to one value; a mean of several has none.
            let first = same.next();
            let bounds = first.filter(|_| same.next().is_none());
            Measurement {
                benchmark: key.benchmark,
                metric: key.metric,
                unit,
                value,
                lower: bounds.and_then(|m| m.lower),
                upper: bounds.and_then(|m| m.upper),
                direction,
                run: None,
            }
        })
        .collect()
}

/// The runs of one recording (a file or a criterion directory): its measurements split by
/// [`Measurement::run`], untagged ones forming one run, in first-seen order.
pub fn recording_runs(ms: &[Measurement]) -> Vec<Vec<Measurement>> {
    let mut runs: Vec<(Option<u32>, Vec<Measurement>)> = Vec::new();
    for m in ms {
        match runs.iter_mut().find(|(r, _)| *r == m.run) {
            Some((_, run)) => run.push(m.clone()),
            None => runs.push((m.run, vec![m.clone()])),
        }
    }
    runs.into_iter().map(|(_, run)| run).collect()
}

/// The runs of one benchmark and metric on each side of two recordings: independent samples,
/// not pairs (`base[i]` and `head[i]` were not measured together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSeries {
    pub key: SeriesKey,
    pub unit: String,
    #[serde(default)]
    pub direction: Direction,
    /// One value per base run ([`run_values`]).
    pub base: Vec<f64>,
    /// One value per head run.
    pub head: Vec<f64>,
    /// Whether every run reported one value for this series, or values that agree exactly (a
    /// count `go test -count=2` prints twice in one process): what an exact count needs.
    #[serde(default)]
    pub agrees_within_runs: bool,
}

impl RunSeries {
    /// Whether this series can be compared exactly: its harness counts it deterministically
    /// (`exact`, [`crate::formats::counts_exactly`]) and every value of each side agrees.
    pub fn is_exact(&self, declared: bool) -> bool {
        declared
            && self.agrees_within_runs
            && self.base.windows(2).all(|w| w[0] == w[1])
            && self.head.windows(2).all(|w| w[0] == w[1])
    }
}

/// Every series of two sets of recordings, in the order benchmarks first appeared, with those
/// only one side reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordedRuns {
    series: Vec<RunSeries>,
    one_sided: Vec<OneSided>,
    /// Series their harness counts deterministically ([`crate::formats::counts_exactly`]).
    exact_counts: std::collections::HashSet<SeriesKey>,
}

impl RecordedRuns {
    /// The runs of every recording of each side (each recording's measurements as read).
    pub fn from_recordings(base: &[Vec<Measurement>], head: &[Vec<Measurement>]) -> Self {
        // Every side's groups, and the series some run reported values that disagree for.
        let mut disagree: std::collections::HashSet<SeriesKey> = Default::default();
        let mut side_runs = |recordings: &[Vec<Measurement>]| -> Vec<Group> {
            let mut groups: Vec<Group> = Vec::new();
            for run in recordings.iter().flat_map(|r| recording_runs(r)) {
                for (key, _, _, values) in group(&run) {
                    if values.windows(2).any(|w| w[0] != w[1]) {
                        disagree.insert(key);
                    }
                }
                for (key, unit, direction, value) in run_values(&run) {
                    match groups.iter_mut().find(|(k, ..)| *k == key) {
                        Some(g) => g.3.push(value),
                        None => groups.push((key, unit, direction, vec![value])),
                    }
                }
            }
            groups
        };
        let (base_groups, head_groups) = (side_runs(base), side_runs(head));
        let mut out = RecordedRuns::default();
        for (key, unit, direction, b) in &base_groups {
            match head_groups.iter().find(|(k, ..)| k == key) {
                Some((_, _, _, h)) => out.series.push(RunSeries {
                    key: key.clone(),
                    unit: unit.clone(),
                    direction: *direction,
                    base: b.clone(),
                    head: h.clone(),
                    agrees_within_runs: !disagree.contains(key),
                }),
                None => out.one_sided.push(OneSided {
                    key: key.clone(),
                    unit: unit.clone(),
                    direction: *direction,
                    side: Side::Base,
                }),
            }
        }
        for (key, unit, direction, _) in &head_groups {
            if !base_groups.iter().any(|(k, ..)| k == key) {
                out.one_sided.push(OneSided {
                    key: key.clone(),
                    unit: unit.clone(),
                    direction: *direction,
                    side: Side::Head,
                });
            }
        }
        out
    }

    /// The series both sides reported, in first-seen order.
    pub fn series(&self) -> &[RunSeries] {
        &self.series
    }

    /// The series only one side reported.
    pub fn one_sided(&self) -> &[OneSided] {
        &self.one_sided
    }

    /// Notes that the harness which wrote `key` counts it deterministically.
    pub fn declare_exact_count(&mut self, key: SeriesKey) {
        self.exact_counts.insert(key);
    }

    /// Whether `series` is compared exactly ([`RunSeries::is_exact`]).
    pub fn is_exact(&self, series: &RunSeries) -> bool {
        series.is_exact(self.exact_counts.contains(&series.key))
    }

    /// Series declared exact counts whose values disagree (between runs or within one): they
    /// are analysed as timings, and the report says why.
    pub fn inexact_counts(&self) -> impl Iterator<Item = &RunSeries> {
        self.series
            .iter()
            .filter(|s| self.exact_counts.contains(&s.key) && !self.is_exact(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(benchmark: &str, value: f64) -> Measurement {
        Measurement {
            benchmark: benchmark.into(),
            metric: "time".into(),
            unit: "ns".into(),
            value,
            lower: None,
            upper: None,
            direction: Default::default(),
            run: None,
        }
    }

    #[test]
    fn recordings_count_runs_not_samples() {
        // One criterion-like file: 3 samples of one process are one run.
        let one_process = vec![m("a", 1.0), m("a", 2.0), m("a", 3.0)];
        // A pyperf-like file: two runs of two values each.
        let two_runs = vec![
            m("a", 4.0).in_run(0),
            m("a", 6.0).in_run(0),
            m("a", 8.0).in_run(1),
            m("a", 10.0).in_run(1),
            m("b", 1.0).in_run(0),
        ];
        let runs = RecordedRuns::from_recordings(std::slice::from_ref(&one_process), &[two_runs]);
        let a = &runs.series()[0];
        assert_eq!(
            (a.base.clone(), a.head.clone()),
            (vec![2.0], vec![5.0, 9.0])
        );
        assert_eq!(runs.one_sided()[0].key.benchmark, "b");
        assert_eq!(runs.one_sided()[0].side, Side::Head);
        // Two files of one process each are two runs.
        let both = RecordedRuns::from_recordings(&[one_process.clone(), one_process], &[]);
        assert!(both.series().is_empty());
        assert_eq!(both.one_sided().len(), 1);
    }

    #[test]
    fn one_value_per_series_keeps_bounds_only_of_a_lone_value() {
        let mut bounded = m("a", 2.0);
        bounded.lower = Some(1.0);
        let reduced = one_per_series(&[bounded.clone(), m("b", 1.0), m("b", 3.0)]);
        assert_eq!(reduced[0], bounded);
        assert_eq!((reduced[1].value, reduced[1].lower), (2.0, None));
    }

    #[test]
    fn rounds_pair_run_means_and_skip_one_sided_metrics() {
        let mut s = PairedSamples::default();
        s.push_round(
            &[m("a", 1.0), m("a", 3.0), m("b", 5.0)],
            &[m("a", 4.0)],
            true,
        );
        assert_eq!(s.series().len(), 1);
        assert_eq!(
            (s.series()[0].base.clone(), s.series()[0].head.clone()),
            (vec![2.0], vec![4.0])
        );
        let sides: Vec<_> = s
            .one_sided()
            .iter()
            .map(|o| (o.key.benchmark.as_str(), o.side))
            .collect();
        assert_eq!(sides, [("b", Side::Base)]);
        // Once paired in a later round, it is no longer one-sided.
        s.push_round(&[m("b", 5.0)], &[m("b", 6.0)], false);
        assert!(s.one_sided().is_empty());
    }
}
