//! Comparison results in the stable shape `benchgate analyze --json` prints and
//! `GET /api/v1/comparisons/{id}` returns.

use serde::{Deserialize, Serialize};

/// What the interval says about one benchmark and metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    Slower,
    Faster,
    Equivalent,
    NoResultYet,
    BelowResolution,
    Exact,
}

/// One benchmark and metric of a comparison. Percentages are `100(e^x − 1)` of log-scale values;
/// an unbounded side of an interval is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkResult {
    pub name: String,
    pub metric: String,
    pub unit: String,
    pub n: usize,
    pub base_center: f64,
    pub head_center: f64,
    pub change_pct: f64,
    /// Running intersection of the anytime-valid confidence sequence.
    pub interval_pct: [Option<f64>; 2],
    /// Fixed-n t interval: not safe to peek at.
    pub fixed_interval_pct: [Option<f64>; 2],
    pub verdict: VerdictKind,
    pub practical: bool,
    pub rounds_needed: Option<u64>,
    pub e_value: f64,
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
}
