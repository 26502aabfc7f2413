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
}

/// All benchmarks of one comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisReport {
    pub alpha: f64,
    pub benchmarks: Vec<BenchmarkResult>,
}
