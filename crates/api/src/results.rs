//! Comparison results in the stable shape `benchgate analyze --json` prints and
//! `GET /api/v1/comparisons/{id}` returns.

use serde::{Deserialize, Serialize};

use crate::metric::Direction;

/// What the interval says about one benchmark and metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    Slower,
    Faster,
    Equivalent,
    /// Not slower than the gate's tolerance: the anytime-valid bound on the worse side is
    /// below `tolerance_pct`. The gate passes it; equivalence is the stronger answer.
    NotSlower,
    NoResultYet,
    BelowResolution,
    Exact,
    /// Samples exist but the statistics cannot judge them yet (see `reason`).
    NotAnalysed,
    /// The benchmark ran on the base side only (removed or renamed in the PR).
    OnlyInBase,
    /// The benchmark ran on the head side only (added or renamed in the PR).
    OnlyInHead,
}

impl VerdictKind {
    /// True for the kinds that carry numbers from an analysis.
    pub fn is_analysed(self) -> bool {
        !matches!(
            self,
            VerdictKind::NotAnalysed | VerdictKind::OnlyInBase | VerdictKind::OnlyInHead
        )
    }
}

fn default_margin_pct() -> f64 {
    1.0
}

/// One benchmark and metric of a comparison. Percentages are `100(e^x − 1)` of log-scale values
/// of the raw metric (a throughput drop is negative); the verdict speaks of performance, so
/// that drop is `slower`. An unbounded side of an interval is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkResult {
    pub name: String,
    pub metric: String,
    pub unit: String,
    /// Which way is better for this metric.
    #[serde(default)]
    pub direction: Direction,
    /// Pairs analysed (for two recordings compared unpaired, the smaller side's runs).
    pub n: usize,
    /// Two recordings compared unpaired: the runs of base and head. Absent for interleaved
    /// pairs; `rounds_needed` then counts more runs of each side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<[usize; 2]>,
    /// Geometric mean of the base samples; `null` when the base has none.
    pub base_center: Option<f64>,
    /// Geometric mean of the head samples; `null` when the head has none.
    pub head_center: Option<f64>,
    /// Head against base; `null` when there is no percentage (a change from zero, or no
    /// analysis).
    pub change_pct: Option<f64>,
    /// Running intersection of the anytime-valid confidence sequence.
    pub interval_pct: [Option<f64>; 2],
    /// Fixed-n t interval: not safe to peek at.
    pub fixed_interval_pct: [Option<f64>; 2],
    pub verdict: VerdictKind,
    pub practical: bool,
    pub rounds_needed: Option<u64>,
    pub e_value: f64,
    /// The margin M of practical equivalence, in percent.
    #[serde(default = "default_margin_pct")]
    pub margin_pct: f64,
    /// Set when the runner's layout floor is part of M: how far rebuilding the same code moves
    /// this row, in percent. A claim needs the whole interval beyond it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout_pct: Option<f64>,
    /// The gate's tolerance in percent (`[gate] tolerance`): a row whose interval stays below
    /// it on the worse side is "not slower than +T%". `None` when the gate has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_pct: Option<f64>,
    /// Whether this row decides the gate: the benchmark's time metric (other metrics, such as
    /// CPU time, peak memory or build time, are shown beside it).
    #[serde(default)]
    pub gated: bool,
    /// Selected by e-BH over the gated rows' e-values; a slower gated row fails the gate only
    /// when selected, so many benchmarks do not multiply false alarms.
    #[serde(default)]
    pub selected: bool,
    /// Hodges–Lehmann estimate with the exact Wilcoxon signed-rank interval: fixed-n, not safe
    /// to peek; absent for an exact metric or past the pair limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hodges_lehmann: Option<HodgesLehmannResult>,
    /// Diagnostics worth a reader's attention, as short sentences (drift, run order, mean and
    /// median disagreeing, the model not fitting). None of them changes the verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Why the row has no analysis (`not_analysed`, `only_in_base`, `only_in_head`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The suite's rule that matched this benchmark, as the gate applied it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<crate::AppliedRule>,
    /// The runners whose series this row combines, stratified by runner, because they share
    /// one hardware class; empty when the row is one runner's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runners: Vec<String>,
    /// Runs of a side that ran in a slow mode (per process), when any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modes: Option<ModeSummary>,
    /// Runs of head the tail guard (`[gate] rare_slow_runs`) asks before the interval's pass
    /// counts, when it holds one back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard_runs: Option<u64>,
}

/// Per-process modes in a row's runs: processes that ran in a slow mode (a bistable machine, a
/// layout, a hash seed), counted per side (docs/statistics.md §4c).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeSummary {
    /// Runs of each side classified.
    pub runs: usize,
    pub base_slow: usize,
    pub head_slow: usize,
    /// How much slower a slow run is than its side's typical run, in percent (median over both
    /// sides' slow runs).
    pub slow_pct: Option<f64>,
    /// Both sides show the mode: the change and its interval are of the typical run, and the
    /// mode's frequency is tested apart.
    pub typical_run: bool,
    /// The frequency test found the slow mode more (or less) frequent on head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shift: Option<ModeShift>,
}

/// Which way the slow mode's frequency moved on head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeShift {
    MoreOnHead,
    LessOnHead,
}

impl BenchmarkResult {
    /// A rule of its suite says `ignore = true`: the report leaves the row out.
    pub fn is_ignored(&self) -> bool {
        self.rule.as_ref().is_some_and(|a| a.ignored)
    }

    /// A benchmark only `side` reported (added, removed or renamed in the PR); it never gates.
    pub fn only_in(
        side: crate::Side,
        name: &str,
        metric: &str,
        unit: &str,
        direction: Direction,
    ) -> Self {
        let (verdict, reason) = match side {
            crate::Side::Base => (VerdictKind::OnlyInBase, "only the base reports it"),
            crate::Side::Head => (VerdictKind::OnlyInHead, "only the head reports it"),
        };
        Self::unanalysed(name, metric, unit, direction, verdict, reason.to_owned())
    }

    /// A row the statistics could not judge, with the reason shown to the reader; it never
    /// gates.
    pub fn unanalysed(
        name: &str,
        metric: &str,
        unit: &str,
        direction: Direction,
        verdict: VerdictKind,
        reason: String,
    ) -> Self {
        BenchmarkResult {
            name: name.to_owned(),
            metric: metric.to_owned(),
            unit: unit.to_owned(),
            direction,
            n: 0,
            base_center: None,
            head_center: None,
            change_pct: None,
            interval_pct: [None, None],
            fixed_interval_pct: [None, None],
            verdict,
            practical: false,
            rounds_needed: None,
            e_value: 1.0,
            margin_pct: default_margin_pct(),
            layout_pct: None,
            tolerance_pct: None,
            gated: false,
            selected: false,
            hodges_lehmann: None,
            warnings: Vec::new(),
            reason: Some(reason),
            rule: None,
            runners: Vec::new(),
            runs: None,
            modes: None,
            guard_runs: None,
        }
    }
}

/// The median-type diagnostic beside the mean: a few wild pairs cannot drag it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HodgesLehmannResult {
    /// Median of the Walsh averages, in percent.
    pub estimate_pct: f64,
    /// Wilcoxon signed-rank interval in percent; `null` sides when too few pairs reach it.
    pub interval_pct: [Option<f64>; 2],
    /// Confidence the discrete signed-rank distribution achieves (e.g. 0.951), ≥ 1 − alpha.
    pub confidence: f64,
}

/// All benchmarks of one comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisReport {
    pub alpha: f64,
    pub benchmarks: Vec<BenchmarkResult>,
    /// The claims of the PR (or `--claim`) and their answers, in the order they were made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<ClaimAnswer>,
}

/// One claimed change and what the measurement says of it (benchgate-claims decides).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimAnswer {
    /// The benchmark as the claim names it; `null` when it names none.
    pub claimed_benchmark: Option<String>,
    /// The row it was answered from (name and metric), when one matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmark: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// The claimed change of that row's metric, in percent, `[low, high]`.
    pub claimed_pct: [f64; 2],
    /// The row's interval, in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_pct: Option<[Option<f64>; 2]>,
    /// `confirmed`, `smaller than claimed`, `larger than claimed`, `not shown yet`,
    /// `not reproduced`, `opposite`; `null` when no row matched.
    pub answer: Option<String>,
    /// What the claim's own evidence had and what a reader must know, as short sentences
    /// ("one run per side: no statistics behind it", "claimed on another machine: …").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where it was read: `benchstat`, `criterion`, `sentence`, `command`, …
    pub source: String,
    /// The author's words it was read from.
    pub quote: String,
}
