//! What the analysis after each upload keeps of a comparison's samples: per runner and series,
//! each round's base and head value. An upload then costs reading its own samples, not every
//! sample of the comparison again (which made a comparison's analyses quadratic in its rounds).
//! The store numbers each job's uploads in commit order, so a kept copy is brought up to date
//! by reading the uploads after its marks; a copy on another replica is just further behind.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use benchgate_api::{Direction, Side};
use benchgate_stats::StrataMemo;
use benchgate_store::{
    ComparisonId, JobId, RunnerId, RunnerSeries, Sample, Store, StoreError, UploadMarks,
};

/// Samples kept over all comparisons before the least recently analysed are dropped
/// (about 40 bytes each: 4 million is ~160 MiB).
pub const DEFAULT_BUDGET: usize = 4_000_000;

/// About what one kept sample takes (as [`DEFAULT_BUDGET`] counts it).
pub const SAMPLE_BYTES: usize = 40;

/// One benchmark and metric's complete base/head pairs from one runner, in round order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pairs {
    pub unit: String,
    /// Which way is better, as the samples say.
    pub direction: Direction,
    pub base: Vec<f64>,
    pub head: Vec<f64>,
    /// Per pair: base ran first.
    pub base_first: Vec<bool>,
}

/// One base or head value and the position it ran at in its round.
type Slot = Option<(f64, i64)>;

/// One benchmark and metric of one runner: every (job, attempt, round)'s two sides.
#[derive(Debug, Clone)]
struct Rounds {
    unit: String,
    direction: Direction,
    rounds: BTreeMap<(JobId, i64, i64), [Slot; 2]>,
}

/// One runner's samples of a comparison, by (benchmark, metric).
#[derive(Debug, Clone, Default)]
pub struct RunnerPairs {
    pub name: String,
    /// Samples added.
    pub samples: usize,
    series: BTreeMap<(String, String), Rounds>,
}

impl RunnerPairs {
    /// Adds samples; one already present (same job, attempt, round, side) keeps its first value,
    /// as the store does.
    pub fn add<'a>(&mut self, samples: impl IntoIterator<Item = &'a Sample>) {
        for s in samples {
            let rounds = match self
                .series
                .get_mut(&(s.benchmark.clone(), s.metric.clone()))
            {
                Some(r) => r,
                None => self
                    .series
                    .entry((s.benchmark.clone(), s.metric.clone()))
                    .or_insert_with(|| Rounds {
                        unit: s.unit.clone(),
                        direction: s.direction,
                        rounds: BTreeMap::new(),
                    }),
            };
            let slot = &mut rounds
                .rounds
                .entry((s.job_id, s.attempt, s.round))
                .or_default()[usize::from(s.side == Side::Head)];
            if slot.is_none() {
                *slot = Some((s.value, s.position));
                self.samples += 1;
            }
        }
    }

    /// Per (benchmark, metric): the complete base/head pairs in round order. A series without
    /// a complete pair is left out (see [`Self::one_side`]).
    pub fn pairs(&self) -> BTreeMap<(String, String), Pairs> {
        self.series
            .iter()
            .filter_map(|(key, r)| {
                let mut pairs = Pairs {
                    unit: r.unit.clone(),
                    direction: r.direction,
                    ..Pairs::default()
                };
                for [base, head] in r.rounds.values() {
                    if let (Some((b, bp)), Some((h, hp))) = (base, head) {
                        pairs.base.push(*b);
                        pairs.head.push(*h);
                        pairs.base_first.push(bp <= hp);
                    }
                }
                (!pairs.base.is_empty()).then(|| (key.clone(), pairs))
            })
            .collect()
    }

    /// One (benchmark, metric)'s complete pairs with the round each came from, in round order:
    /// the pairs [`Self::pairs`] gives, for a reader who shows them one by one.
    pub fn complete_rounds(
        &self,
        benchmark: &str,
        metric: &str,
    ) -> Vec<((JobId, i64, i64), f64, f64)> {
        self.series
            .get(&(benchmark.to_owned(), metric.to_owned()))
            .into_iter()
            .flat_map(|r| &r.rounds)
            .filter_map(|(round, [base, head])| match (base, head) {
                (Some((b, _)), Some((h, _))) => Some((*round, *b, *h)),
                _ => None,
            })
            .collect()
    }

    /// Per (benchmark, metric) that one side reported and the other never did: which side,
    /// with the unit and direction of its samples.
    pub fn one_side(&self) -> BTreeMap<(String, String), (Side, String, Direction)> {
        self.series
            .iter()
            .filter_map(|(key, r)| {
                let seen = r.rounds.values().fold([false; 2], |seen, [b, h]| {
                    [seen[0] || b.is_some(), seen[1] || h.is_some()]
                });
                let side = match seen {
                    [true, false] => Side::Base,
                    [false, true] => Side::Head,
                    _ => return None,
                };
                Some((key.clone(), (side, r.unit.clone(), r.direction)))
            })
            .collect()
    }
}

/// A comparison's samples per runner, and how far into each job's uploads they go.
#[derive(Debug, Clone, Default)]
pub struct ComparisonPairs {
    marks: UploadMarks,
    runners: BTreeMap<RunnerId, RunnerPairs>,
    /// When the last analysis that stored its results began reading.
    analysed_from: Option<std::time::Instant>,
    /// Per group lead runner, benchmark and metric: what the last stratified analysis kept.
    pub memos: SeriesMemos,
}

/// [`StrataMemo`]s of a comparison's series combined over several runners.
pub type SeriesMemos = HashMap<(RunnerId, String, String), StrataMemo>;

impl ComparisonPairs {
    /// Whether an analysis that began reading at or after `since` has stored its results:
    /// then every upload committed before `since` is in them.
    pub fn covers(&self, since: std::time::Instant) -> bool {
        self.analysed_from.is_some_and(|from| from >= since)
    }

    /// Records that the analysis which began reading at `from` stored its results.
    pub fn analysed(&mut self, from: std::time::Instant) {
        self.analysed_from = Some(from);
    }

    /// Reads the uploads not yet seen and adds them; returns how many samples were read.
    pub async fn refresh(
        &mut self,
        store: &Arc<dyn Store>,
        id: ComparisonId,
    ) -> Result<usize, StoreError> {
        let since = store.comparison_samples_since(id, &self.marks).await?;
        let read = since.series.iter().map(|s| s.samples.len()).sum();
        for series in &since.series {
            self.add(series);
        }
        self.marks = since.marks;
        Ok(read)
    }

    /// Adds one runner's samples.
    pub fn add(&mut self, series: &RunnerSeries) {
        let runner = self.runners.entry(series.runner_id).or_default();
        runner.name.clone_from(&series.runner_name);
        runner.add(&series.samples);
    }

    /// Samples kept, over all runners.
    pub fn samples(&self) -> usize {
        self.runners.values().map(|r| r.samples).sum()
    }

    /// What it costs the cache's budget: its samples, and its memos counted in samples of
    /// [`SAMPLE_BYTES`] each (4 runners of 40 pairs: a memo of ~3 KB, a quarter of the
    /// series' 320 samples).
    pub fn weight(&self) -> usize {
        let memos: usize = self.memos.values().map(StrataMemo::bytes).sum();
        self.samples() + memos.div_ceil(SAMPLE_BYTES)
    }

    /// Each runner's samples, in runner-id order.
    pub fn runners(&self) -> &BTreeMap<RunnerId, RunnerPairs> {
        &self.runners
    }
}

/// The comparisons this process has analysed recently, least recently used dropped first once
/// they hold more than the budget of samples (memos counted as samples, by their bytes).
pub struct SeriesCache {
    budget: usize,
    entries: Mutex<HashMap<ComparisonId, Entry>>,
}

struct Entry {
    pairs: Arc<tokio::sync::Mutex<ComparisonPairs>>,
    samples: usize,
    used: std::time::Instant,
}

impl SeriesCache {
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The comparison's kept samples, empty when none are kept; analyses of one comparison in
    /// this process take turns on it, so two uploads never read the same samples twice.
    pub fn get(&self, id: ComparisonId) -> Arc<tokio::sync::Mutex<ComparisonPairs>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let entry = entries.entry(id).or_insert_with(|| Entry {
            pairs: Arc::default(),
            samples: 0,
            used: std::time::Instant::now(),
        });
        entry.used = std::time::Instant::now();
        entry.pairs.clone()
    }

    /// Records how many samples `id` now keeps and drops the least recently used other
    /// comparisons while the total is over the budget.
    pub fn kept(&self, id: ComparisonId, samples: usize) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = entries.get_mut(&id) {
            entry.samples = samples;
        }
        let mut total: usize = entries.values().map(|e| e.samples).sum();
        while total > self.budget {
            let Some((&oldest, entry)) = entries
                .iter()
                .filter(|(k, _)| **k != id)
                .min_by_key(|(_, e)| e.used)
            else {
                break;
            };
            total -= entry.samples;
            entries.remove(&oldest);
        }
    }

    /// Comparisons and samples kept, for `/metrics`-style logging.
    pub fn size(&self) -> (usize, usize) {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        (entries.len(), entries.values().map(|e| e.samples).sum())
    }
}

impl Default for SeriesCache {
    fn default() -> Self {
        Self::new(DEFAULT_BUDGET)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchgate_stats::{AnalysisOptions, Stratum, analyze_strata_with};

    #[test]
    fn a_memo_counts_toward_the_budget() {
        let base: Vec<f64> = (0..40).map(|i| 100.0 + f64::from(i % 7)).collect();
        let head: Vec<f64> = (0..40).map(|i| 103.0 + f64::from(i % 5)).collect();
        let order: Vec<bool> = (0..40).map(|i| i % 2 == 0).collect();
        let one = Stratum {
            base: &base,
            head: &head,
            base_first: &order,
            floor: None,
        };
        let mut memo = StrataMemo::default();
        analyze_strata_with(&[one.clone(), one], &AnalysisOptions::default(), &mut memo).unwrap();
        // Two runners' 40 log-ratios each, and 39 looks.
        assert!(memo.bytes() > 80 * 8 + 39 * 40, "{}", memo.bytes());
        let mut pairs = ComparisonPairs::default();
        assert_eq!(pairs.weight(), 0);
        pairs
            .memos
            .insert((RunnerId(1), "parse".into(), "time".into()), memo.clone());
        assert_eq!(pairs.weight(), memo.bytes().div_ceil(SAMPLE_BYTES));
    }
}
